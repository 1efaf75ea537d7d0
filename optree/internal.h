/* Private to optree/: the tree's levels and stages, shared by the planner
 * (plan.c), the builder (build.c) and the baselines. */
#ifndef OFC_OPTREE_INTERNAL_H
#define OFC_OPTREE_INTERNAL_H

#include "optree/optree.h"
#include "rwa/rwa.h"

/* Groups per level: level 0 is [0, N); level i splits each level-(i-1)
 * group g into the groups child[i-1][g] .. child[i-1][g+1]-1 of level i. */
struct levels {
	uint32_t n, depth;
	uint32_t ngroups[OPTREE_MAX_DEPTH + 1];
	uint32_t *start[OPTREE_MAX_DEPTH + 1];
	uint32_t *size[OPTREE_MAX_DEPTH + 1];
	uint32_t *child[OPTREE_MAX_DEPTH + 1]; /* ngroups + 1 offsets */
	bool uneven;
};

int levels_build(uint32_t n, const uint32_t *radix, uint32_t depth, struct levels *L,
		 struct ofc_error *err);
void levels_free(struct levels *L);
/* Incremental: arrays for levels 0..depth (n groups each), level 0 set. */
void levels_init(struct levels *L, uint32_t n, uint32_t depth);
/* Level p + 1 from level p with radix m: 1 when some group splits
 * unevenly, 0 when none does, -1 when no group has two nodes (a stage
 * with nothing to do). */
int levels_split(struct levels *L, uint32_t p, uint32_t m);
/* A line stage (i >= 2) without building its demands: the most blocks on
 * one segment-direction (= its colours), the counts after it in out, and
 * in *most the most blocks one node adds or drops in it. f: scratch of
 * 2(n + 1). */
uint64_t line_stage_load(const struct levels *L, uint32_t i, const uint32_t *cnt, uint32_t *out,
			 int64_t *f, uint64_t *most);

/* One demand of a stage: src sends all it holds (count blocks) to dst. */
struct ot_arc {
	uint32_t src, dst;
	uint32_t count;
	uint8_t dir; /* set by the stage's colouring */
};

struct stage_rwa {
	struct ot_arc *arc;
	size_t narcs;
	struct rwa_solution sol; /* items are arc indices */
	uint32_t colours;	 /* the larger direction */
	uint64_t max_load;
	bool line;     /* groups are lines inside the ring (stages >= 2) */
	uint32_t m, s; /* regular stage 1: u sends to u + t*s, t = 1..m-1 */
};

/* Stage i (1-based) of the levels, with cnt[u] = blocks node u holds
 * before it: its demands, routed (stage_arcs), then coloured
 * (stage_colour). Stage 1 with equal groups is a circulant set (tilings;
 * directions come with the colouring); unequal, shortest routes and the
 * circular heuristic; later stages are lines (exact interval colouring).
 * With runs = false only the colour count and loads are computed (for
 * lines without colouring at all: an interval graph's colours are its
 * load). */
void stage_arcs(const struct levels *L, uint32_t i, const uint32_t *cnt, struct stage_rwa *st);
void stage_colour(const struct levels *L, uint32_t i, bool runs, struct stage_rwa *st);
void stage_rwa_free(struct stage_rwa *st);
/* Colours per direction of stage 1 on m equal groups of s nodes: the
 * better of rwa_circulant's tilings and the circular-arc heuristic. */
void stage1_colours(uint32_t n, uint32_t m, uint32_t s, uint32_t colours[3]);
/* cnt after the stage (in place). */
void stage_counts(const struct stage_rwa *st, uint32_t *cnt, uint32_t n);

/* Lower bound on the steps of one stage given its demands: total shortest
 * length over 2N segment-directions; with line groups, the multi-cut bound
 * (every group's traffic across its busiest cut either crosses that cut
 * or, the long way round, every other group's); adds and drops per node. */
uint32_t stage_lower_bound(const struct optree_ring *r, const struct levels *L, uint32_t i,
			   const struct ot_arc *arc, size_t narcs);
uint32_t demands_lower_bound(const struct optree_ring *r, const struct ot_arc *arc, size_t narcs);

/* ---- emitting steps (build.c) ----------------------------------------------
 * Transfers go straight into the schedule; emit_flush closes a step and
 * splits it where some node would add or drop more lightpaths than its
 * MRRs allow (returns the schedule steps it became). */
struct emitter {
	const struct optree_ring *r;
	struct schedule *s;
	bool open;
	uint32_t *add, *drop; /* per node, this step */
	uint32_t *sub;	      /* split: colour, then sub-step, of each record */
	uint32_t *path;	      /* split: an alternating path */
	size_t cap_sub;
	uint32_t split_steps;
	enum xfer_op op; /* what emit_put records */
};

void emitter_init(struct emitter *e, const struct optree_ring *r, struct schedule *s);
void emitter_free(struct emitter *e);
uint32_t emit_flush(struct emitter *e);
struct optree_stage *result_add_stage(struct optree_result *res, uint32_t *cap);
/* Fixed-route demands coloured through rwa/ (interval colouring per
 * direction, the circular heuristic if some arc wraps); runs by arc index. */
void colour_fixed(uint32_t n, const struct ot_arc *arc, size_t na, struct rwa_solution *sol);
uint32_t colour_steps(const struct optree_ring *r, const struct rwa_solution *sol);
/* One stage of fixed-route demands: the blocks of arc i are
 * blk[i * per_arc + 0..count), laid on the arc's colours in order. */
void emit_fixed(struct emitter *e, const struct ot_arc *arc, const struct rwa_solution *sol,
		const uint32_t *blk, uint32_t per_arc, struct optree_stage *st);

static inline void emit_put(struct emitter *e, uint32_t src, uint32_t dst, uint32_t block,
			    uint8_t dir, uint32_t slot)
{
	const struct optree_ring *r = e->r;
	struct schedule *s = e->s;

	if (!e->open) {
		sched_step(s);
		e->open = true;
	}
	if (s->nxfers == s->cap_xfers)
		sched_reserve(s, s->nxfers + 1024);
	s->xfers[s->nxfers++] = (struct xfer){.src = (uint16_t)src,
					      .dst = (uint16_t)dst,
					      .block = block,
					      .offset = 0,
					      .length = SCHED_ONE,
					      .lane = (uint16_t)(slot / r->fibres),
					      .fibre = (uint8_t)(slot % r->fibres),
					      .flags = xfer_flags((enum ring_dir)dir, e->op)};
}

/* ---- the other collectives (collectives.c) and Wrht (wrht.c) ---- */

/* Reduce-scatter from an all-gather: time reversed, every lightpath turned
 * round (same fibre and wavelength, the other direction), copies become
 * reductions. In place. */
void result_reverse(struct optree_result *res);
/* Allreduce: rs (a reduce-scatter) followed by ag (an all-gather); ag is
 * freed, rs becomes the allreduce. */
void result_concat(struct optree_result *rs, struct optree_result *ag);
int build_alltoall(const struct optree_ring *r, const struct optree_opts *o,
		   struct optree_result *res, struct ofc_error *err);
int build_wrht(const struct optree_ring *r, struct optree_result *res, struct ofc_error *err);

/* Whether stage i's partial last step (a channels) and stage i+1's partial
 * first step (b channels) share one step, given that every node holds at
 * least held blocks before stage i+1 (build.c explains why; plan.c
 * predicts with the same rule). */
static inline bool optree_merges(uint32_t a, uint32_t b, uint32_t held, uint32_t FW)
{
	return a && b && a + b <= FW && (uint64_t)held >= (uint64_t)b + 2ull * a;
}

static inline uint32_t ring_channels(const struct optree_ring *r)
{
	return r->wavelengths * r->fibres;
}

/* S(k) of Theorem 1 with the continuous radix N^(1/k). */
double optree_analytic_steps(const struct optree_ring *r, double k);

#endif
