/* Private to baselines/: the torus's geometry and a step's link loads for
 * Swing around failed links (swing_reroute.c plans and checks with them;
 * swing_loads.c keeps the loads). See baselines.h, "Swing around failed
 * links". */
#ifndef OFC_BASELINES_SWING_LOADS_H
#define OFC_BASELINES_SWING_LOADS_H

#include "baselines/baselines.h"

struct geo {
	uint32_t D, n, degree;
	uint32_t dims[SCHED_GROUP_MAX_DIMS], stride[SCHED_GROUP_MAX_DIMS];
	const struct sched_group *G;   /* the program's group */
	const struct swing_reroute *p; /* its paths (SWING_WAY_PATH detours) */
	size_t narcs, norbits;
	uint64_t orbit_size; /* arcs of an orbit: the group's order */
	uint32_t *xy;	     /* n x D: the nodes' coordinates (swing_geo_coords), or NULL */
	/* What a hop more on a step's longest route costs, in load units
	 * (an alpha where hosts forward; 0: hops are free) */
	int64_t hop_units;
};

/* A table, not two divisions: planning and its check ask for coordinates
 * at every hop of a search and every leg of a route. */
static inline uint32_t coord(const struct geo *g, uint32_t v, uint32_t w)
{
	return g->xy ? g->xy[(size_t)v * g->D + w] : v / g->stride[w] % g->dims[w];
}

/* The node k hops from v along dimension w, the + way (dir 0) or the -. */
static inline uint32_t shift(const struct geo *g, uint32_t v, uint32_t w, uint32_t dir, uint32_t k)
{
	uint32_t d = g->dims[w], x = coord(g, v, w), y = dir ? (x + d - k % d) % d : (x + k) % d;

	return v - x * g->stride[w] + y * g->stride[w];
}

/* The node one hop from v along dimension w, the + way (dir 0) or the -. */
static inline uint32_t hop(const struct geo *g, uint32_t v, uint32_t w, uint32_t dir)
{
	uint32_t d = g->dims[w], x = coord(g, v, w);

	if (dir)
		return x ? v - g->stride[w] : v + (d - 1) * g->stride[w];
	return x + 1 < d ? v + g->stride[w] : v - (d - 1) * g->stride[w];
}

static inline size_t arc_id(const struct geo *g, uint32_t v, uint32_t w, uint32_t dir)
{
	return ((size_t)v * g->D + w) * 2 + dir;
}

/* Representative rep (its node) sends dst what units says, in one step. */
struct rpair {
	uint32_t rep, dst, w, f; /* the dimension it moves in; dst's coordinate - rep's, mod d */
	uint64_t units;		 /* 2 x the sum of blocks x length (fixed point) */
};

/* Half `dir` of a pair's healthy route: its length (0: none) and units. */
static inline uint32_t half_len(uint32_t d, uint32_t f, uint32_t dir)
{
	uint32_t len = dir ? d - f : f;

	return 2 * len <= d ? len : 0;
}

static inline uint64_t half_units(uint32_t d, uint32_t f, uint64_t units)
{
	return 2 * f == d ? units / 2 : units;
}

/* A route: straight legs (up to SWING_DETOUR_LEGS). */
struct leg {
	uint32_t start, w, dir, len;
};

/* Each ring line (a dimension, a way, the other coordinates) keeps its
 * arcs' loads in a row of slots (slot pos: the arc from the node whose
 * coordinate along the line is pos), in blocks of LINE_BLOCK with an add
 * and a max each. A leg is a range of one row (two where it wraps), so
 * adding a part to it or finding its busiest arc costs O(LINE_BLOCK + row
 * / LINE_BLOCK), not a walk of its hops: Swing's long steps move halves of
 * 85 hops and more, a dozen parts each, and walking them arc by arc was
 * most of planning 1% of torus:256x256's ports. A row is filled from the
 * orbits' loads when the step first touches its line. */
#define LINE_BLOCK 16
#define LINE_PAD   (INT64_MIN / 4) /* a row's slots past its ring: never the max */

struct loads {
	const struct geo *g;
	uint64_t *orbit;       /* norbits: the healthy load of each arc of the orbit */
	uint64_t *touched_in;  /* norbits: arcs of the orbit the patch changes */
	const uint8_t *failed; /* narcs */
	uint32_t *seen, *parent, *queue, search; /* find_path's, made on first use */
	uint8_t *legs;				 /* find_path's: nodes x degree */
	uint32_t *orbit_at; /* narcs: each arc's orbit (its tail's representative's arc) */
	uint64_t busiest;   /* relieve: the busiest step's healthy load (units) */
	int64_t work;	    /* relieve: arcs and nodes it may still visit this step */
	uint32_t longest;   /* plan_step: the step's longest route placed so far */
	int64_t floor;	    /* ... and its busiest arc's load, as far as placing knows */
	/* the lines' rows */
	uint32_t now, nlines, nrows;	      /* nrows: the lines this step touched */
	uint32_t *arc_line, *arc_pos;	      /* narcs: an arc's line and slot in its row */
	uint32_t *line_base, *line_d;	      /* nlines: its first slot (a block's), its ring */
	uint32_t *line_stamp, *rows;	      /* nlines: its row is step `now`'s; those rows */
	int64_t *val;			      /* slots: the arc's load less its block's add */
	uint8_t *chg;			      /* slots: the patch changed the arc this step */
	uint32_t *slot_orbit, *failed_before; /* slots: its orbit; failed arcs before it */
	int64_t *badd, *bmax;		      /* blocks: added to the whole; its slots' max */
	uint8_t *bchg;			      /* blocks: every arc of it changed */
};

/* Each is said where swing_loads.c defines it; swing_geo_coords fills
 * g->xy (the caller frees it). */
void swing_geo_coords(struct geo *g);
void swing_loads_init(struct loads *L, const struct geo *g, const uint8_t *failed);
void swing_loads_free(struct loads *L);
void swing_loads_step(struct loads *L, const struct rpair *p, size_t np);
int64_t swing_load_of(const struct loads *L, size_t arc);
bool swing_leg_failed(const struct loads *L, const struct leg *l);
void swing_change_legs(struct loads *L, const struct leg *l, uint32_t n, int64_t dv);
uint64_t swing_step_max(const struct loads *L);
size_t swing_arcs_over(const struct loads *L, int64_t target);
bool swing_legs_under(struct loads *L, const struct leg *l, uint32_t n, int64_t bound,
		      int64_t *worst);
bool swing_legs_reach(struct loads *L, const struct leg *l, uint32_t n, int64_t top);
uint64_t swing_untouched_max(const struct loads *L);
size_t swing_negative_arc(const struct loads *L);

/* A worker's own, planning or checking steps (swing_reroute.c): the
 * geometry (its paths those of the step at hand, its hop price the
 * plan's), a step's loads and search arrays, its pairs. Made ready on
 * first use (g copied, its hop_units each time), freed by
 * swing_worker_free. */
struct swing_worker {
	struct geo g;
	struct loads L;
	struct rpair *pr;
	struct swing_detour *tmp;
	size_t cap_pr, cap_tmp;
	bool ready;
};
struct swing_worker *swing_worker_ready(struct swing_worker *w, const struct geo *g,
					const uint8_t *bad, uint64_t busiest);
void swing_worker_free(struct swing_worker *w);
/* Steps 0..n-1 by cost, the dearest or the cheapest first, then in order
 * (n + 1 of them, the caller frees). */
uint32_t *swing_steps_by_cost(const uint64_t *cost, uint32_t n, bool dearest);

/* ---- planning a step (swing_reroute.c; the steps together in swing_plan.c) ----------
 * swing_geo_make: t's geometry under the program's group G (OFC_E_INPUT
 * where t is no torus of sides 4 and more, or G not its translations).
 * swing_step_pairs: step st's program transfers summed by (source,
 * destination), in *out (grown; *np of them). swing_pairs_hops: their
 * longest healthy half. swing_plan_step: the step's detours appended to p
 * (L loaded with its pairs; crossed_peak: the halves crossing and the most
 * detours it held, against max_det). swing_over_limit: the memory limit's
 * refusal at step st. swing_step_floor: the least any plan of step st can
 * leave on its busiest arc, its loads with the halves that must move
 * taken off (L loaded with the pairs, g->p holding the failed arcs; L's
 * loads are left so). swing_figures_of: p's figures from its steps'. */
int swing_geo_make(struct geo *g, const struct topo_tree *t, const struct sched_group *G,
		   struct ofc_error *err);
int swing_step_pairs(const struct geo *g, const struct schedule *s, uint32_t st, struct rpair **out,
		     size_t *cap, size_t *np, struct ofc_error *err);
uint32_t swing_pairs_hops(const struct geo *g, const struct rpair *p, size_t np);
int swing_plan_step(struct loads *L, struct swing_reroute *p, uint32_t st, const struct rpair *pr,
		    size_t np, struct swing_detour **tmp, size_t *cap_tmp, size_t *cap,
		    size_t *cap_legs, uint64_t max_det, size_t crossed_peak[2],
		    struct ofc_error *err);
int swing_over_limit(uint32_t st, size_t k0, size_t k, uint64_t max_det, struct ofc_error *err);
uint64_t swing_step_floor(struct loads *L, uint32_t st, const struct rpair *pr, size_t np,
			  struct swing_detour **tmp, size_t *cap_tmp);
void swing_figures_of(const struct geo *g, struct swing_reroute *p,
		      const struct torus_figures *healthy);

#endif
