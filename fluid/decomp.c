/* The fluid routing as weighted pieces (notes Sec. 3, "decomposition
 * note"): an origin's usage w with its per-destination flows f_d <= w is
 * split into trees in G^T, each carrying the same part of the origin's
 * unit to every destination, branching only where a vertex can copy and
 * passing switches as paths ((3.12) makes w conserved there, so their flow
 * decomposes). Greedy: each destination follows its own flow's heaviest
 * arc; at a vertex that cannot copy, all destinations of a branch must
 * agree on one arc. The tree's weight is its bottleneck in w and in each
 * f_d. A vertex that stores and copies is entered at most once per tree (a
 * second arrival is dropped: the data is already there and can wait), so
 * reversed trees (reductions) count every input once.
 *
 * When no tree fits the remaining flows the LP merged data no tree carries
 * (the relaxation of notes Sec. 2.1); the rest travels on per-destination
 * paths, reported as the deficit, and costs more than the fluid value. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

#define TOL 1e-9

void routing_reserve(struct fluid_routing *rt, size_t pieces, size_t hops)
{
	if (rt->npieces + pieces > rt->cap_pieces) {
		rt->cap_pieces = rt->npieces + pieces;
		rt->pieces = xreallocarray(rt->pieces, rt->cap_pieces + 1, sizeof(*rt->pieces));
	}
	if (rt->nhops + hops > rt->cap_hops) {
		rt->cap_hops = rt->nhops + hops;
		rt->hop_arc = xreallocarray(rt->hop_arc, rt->cap_hops + 1, sizeof(uint32_t));
		rt->hop_layer = xreallocarray(rt->hop_layer, rt->cap_hops + 1, sizeof(uint32_t));
	}
}

void routing_add_piece(struct fluid_routing *rt, uint32_t origin, uint32_t target, double lo,
		       double hi, const uint32_t *arcs, const uint32_t *layers, uint32_t nhops)
{
	GROW(rt->pieces, rt->cap_pieces, rt->npieces + 1);
	if (rt->nhops + nhops > rt->cap_hops) {
		size_t cap = rt->cap_hops;

		GROW(rt->hop_arc, cap, rt->nhops + nhops);
		cap = rt->cap_hops;
		GROW(rt->hop_layer, rt->cap_hops, rt->nhops + nhops);
	}
	rt->pieces[rt->npieces++] =
	    (struct fluid_piece){origin, target, lo, hi, (uint32_t)rt->nhops, nhops};
	memcpy(rt->hop_arc + rt->nhops, arcs, nhops * sizeof(uint32_t));
	memcpy(rt->hop_layer + rt->nhops, layers, nhops * sizeof(uint32_t));
	rt->nhops += nhops;
}

void routing_measure(const struct problem *p, struct fluid_routing *rt)
{
	double *load = xcalloc(p->ncaps + 1, sizeof(double));

	rt->cost = 0;
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		double amt = q->hi - q->lo;

		for (uint32_t h = 0; h < q->nhops; h++) {
			uint32_t e = rt->hop_arc[q->first + h];

			rt->cost += amt * p->net->cost[e];
			for (uint32_t j = p->arc_cap_off[e]; j < p->arc_cap_off[e + 1]; j++)
				load[p->arc_caps[j]] += amt;
		}
	}
	rt->r_actual = 0;
	for (uint32_t c = 0; c < p->ncaps; c++)
		if (load[c] / p->cap_bw[c] > rt->r_actual)
			rt->r_actual = load[c] / p->cap_bw[c];
	free(load);
}

/* A destination's flow on G^T arc a: f dense over G^T (at NULL), or over
 * the usage's support (at: each arc's place there, -1 off it: no flow). */
static inline double fget(const int32_t *at, const double *f, uint32_t a)
{
	if (!at)
		return f[a];
	return at[a] < 0 ? 0 : f[at[a]];
}

/* ... to change, on the support. */
static inline double *fref(const int32_t *at, double *f, uint32_t a)
{
	return at ? &f[at[a]] : &f[a];
}

/* A destination's path: follow the heaviest f arc from node to (d, T). */
static uint32_t heaviest_out(const struct texp *x, uint32_t node, const double *f,
			     const int32_t *at, const double *cap, double *best_val)
{
	uint32_t v = node % x->nv, t = node / x->nv, best = UINT32_MAX;
	double bv = TOL;

	if (t >= x->T)
		return UINT32_MAX;
	for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++) {
		uint32_t a = t * x->ne + x->out_arc[k];
		double s = fget(at, f, a);

		if (cap && cap[a] < s)
			s = cap[a];
		if (s > bv) {
			bv = s;
			best = a;
		}
	}
	if (x->hold_of[v] != UINT32_MAX) {
		uint32_t a = tx_hold(x, v, t);
		double s = fget(at, f, a);

		if (cap && cap[a] < s)
			s = cap[a];
		if (s > bv) {
			bv = s;
			best = a;
		}
	}
	*best_val = bv;
	return best;
}

/* One tree under construction: entries are (node of G^T, the destinations
 * whose data passes there), each destination in exactly one entry at a
 * time (a linked list through next[]). */
struct entry {
	uint32_t node;
	uint32_t head, tail; /* destination list, UINT32_MAX when empty */
};

struct tree_ws {
	struct entry *ent;
	size_t nent, cap_ent;
	uint32_t *next;	       /* per destination */
	uint32_t *first_layer; /* per vertex that stores and copies: first arrival */
	int32_t *node_ent;     /* per node: the entry there (copy-capable vertices) */
	uint32_t *path;	       /* per destination: the arcs it took, T each */
	uint32_t *plen;
	uint32_t *used, *uses; /* arcs carrying the tree, with multiplicity */
	size_t nused, cap_used, cap_uses;
	uint32_t *touched; /* nodes and vertices to reset */
	size_t ntouched, cap_touched;
	uint32_t *list, *choice; /* the current entry's destinations and arcs */
	uint32_t *child_arc, *child_ent;
	uint32_t *first; /* per destination of the entry: its first arc */
	double *best;	 /* ... and how well its best arc carries it */
};

static uint32_t new_entry(struct tree_ws *ws, uint32_t node)
{
	GROW(ws->ent, ws->cap_ent, ws->nent + 1);
	ws->ent[ws->nent] = (struct entry){node, UINT32_MAX, UINT32_MAX};
	return (uint32_t)ws->nent++;
}

static void entry_push(struct tree_ws *ws, uint32_t e, uint32_t k)
{
	struct entry *en = &ws->ent[e];

	ws->next[k] = UINT32_MAX;
	if (en->tail == UINT32_MAX)
		en->head = k;
	else
		ws->next[en->tail] = k;
	en->tail = k;
}

static void touch(struct tree_ws *ws, uint32_t id)
{
	GROW(ws->touched, ws->cap_touched, ws->ntouched + 1);
	ws->touched[ws->ntouched++] = id;
}

static bool stores_copies(const struct problem *p, uint32_t v)
{
	return (p->net->kind[v] & (FLUID_CAN_STORE | FLUID_CAN_COPY)) ==
	       (FLUID_CAN_STORE | FLUID_CAN_COPY);
}

/* The out-arcs of node (v, t) as G^T ids into out[]; returns how many. */
static uint32_t node_out(const struct texp *x, uint32_t v, uint32_t t, uint32_t *out)
{
	uint32_t m = 0;

	for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++)
		out[m++] = t * x->ne + x->out_arc[k];
	if (x->hold_of[v] != UINT32_MAX)
		out[m++] = tx_hold(x, v, t);
	return m;
}

/* Can data branch at vertex v here? Copy-capable vertices, the origin, and
 * every vertex when (3.12) is off. */
static bool branches(const struct problem *p, uint32_t v, uint32_t o)
{
	return (p->net->kind[v] & FLUID_CAN_COPY) || v == o || !p->conserve[v];
}

/* The heaviest usable arc of destination k out of node (v, t), preferring
 * `pref` when it carries k's flow nearly as well (so destinations stay
 * together). */
static uint32_t pick_arc(const struct texp *x, const double *f, const int32_t *at,
			 const double *wres, const uint32_t *outs, uint32_t nout, uint32_t pref)
{
	uint32_t best = UINT32_MAX;
	double bv = TOL;

	for (uint32_t i = 0; i < nout; i++) {
		double fa = fget(at, f, outs[i]), s = fa < wres[outs[i]] ? fa : wres[outs[i]];

		if (s > bv) {
			bv = s;
			best = outs[i];
		}
	}
	(void)x;
	if (pref != UINT32_MAX && best != UINT32_MAX && pref != best) {
		double fp = fget(at, f, pref), s = fp < wres[pref] ? fp : wres[pref];

		if (s >= 0.999 * bv)
			best = pref;
	}
	return best;
}

/* How much of destination flow f arc a carries within the residual usage. */
static inline double carried(const double *f, const int32_t *at, const double *wres, uint32_t a)
{
	double fa = fget(at, f, a);

	return fa < wres[a] ? fa : wres[a];
}

/* First arcs of the entry's m destinations (ws->list) out of node (v, t),
 * shared where the flows allow: repeatedly the arc that carries the most
 * of the unassigned destinations' flows takes every one of them it carries
 * at least half as well as its own best arc (a tree's copies go where many
 * destinations' flows go together). False when one has no arc. */
static bool first_arcs(const struct texp *x, const struct origin_flow *of, const double *wres,
		       struct tree_ws *ws, uint32_t m, uint32_t v, uint32_t t, uint32_t *outs)
{
	uint32_t nout = node_out(x, v, t, outs), left = m;

	for (uint32_t j = 0; j < m; j++) {
		const double *f = of->f[ws->list[j]];
		double bv = 0;

		for (uint32_t i = 0; i < nout; i++) {
			double q = carried(f, of->at, wres, outs[i]);

			if (q > bv)
				bv = q;
		}
		if (bv <= TOL)
			return false;
		ws->best[j] = bv;
		ws->first[j] = UINT32_MAX;
	}
	while (left) {
		uint32_t besta = UINT32_MAX;
		double bs = 0;

		for (uint32_t i = 0; i < nout; i++) {
			double sc = 0;

			for (uint32_t j = 0; j < m; j++) {
				double q = carried(of->f[ws->list[j]], of->at, wres, outs[i]);

				if (ws->first[j] == UINT32_MAX && q >= 0.5 * ws->best[j])
					sc += q;
			}
			if (sc > bs) {
				bs = sc;
				besta = outs[i];
			}
		}
		if (besta == UINT32_MAX)
			return false;
		for (uint32_t j = 0; j < m; j++) {
			double q = carried(of->f[ws->list[j]], of->at, wres, besta);

			if (ws->first[j] == UINT32_MAX && q >= 0.5 * ws->best[j]) {
				ws->first[j] = besta;
				left--;
			}
		}
	}
	return true;
}

/* Each destination's segment: from node to the next node where data may
 * branch, appended to its path (ws->choice[j]: where the segment starts).
 * False when one finds no arc or ends in a switch. */
static bool follow_segments(const struct problem *p, const struct texp *x,
			    const struct origin_flow *of, const double *wres, struct tree_ws *ws,
			    uint32_t m, uint32_t node, uint32_t *outs)
{
	uint32_t T = x->T;

	for (uint32_t j = 0; j < m; j++) {
		uint32_t k = ws->list[j], at = node, start = ws->plen[k];
		const double *f = of->f[k];

		ws->choice[j] = start;
		for (;;) {
			uint32_t nout = node_out(x, at % x->nv, at / x->nv, outs),
				 pref = UINT32_MAX;

			/* keep with an earlier destination of this entry that
			 * followed the same segment so far */
			for (uint32_t i = 0; i < j && pref == UINT32_MAX; i++) {
				uint32_t k2 = ws->list[i], s2 = ws->choice[i];
				uint32_t len = ws->plen[k] - start;

				if (ws->plen[k2] - s2 > len &&
				    !memcmp(ws->path + (size_t)k2 * T + s2,
					    ws->path + (size_t)k * T + start,
					    len * sizeof(uint32_t)))
					pref = ws->path[(size_t)k2 * T + s2 + len];
			}
			uint32_t a = at == node ? ws->first[j]
						: pick_arc(x, f, of->at, wres, outs, nout, pref);

			if (a == UINT32_MAX)
				return false;
			ws->path[(size_t)k * T + ws->plen[k]++] = a;
			at = tx_head(x, a);
			if (branches(p, at % x->nv, of->origin))
				break;
			if (at / x->nv >= T)
				return false; /* a switch at the end */
		}
	}
	return true;
}

/* One more copy of the tree's data on arc a. */
static void count_use(struct tree_ws *ws, uint32_t a)
{
	size_t u;

	for (u = 0; u < ws->nused && ws->used[u] != a; u++)
		;
	if (u == ws->nused) {
		GROW(ws->used, ws->cap_used, ws->nused + 1);
		GROW(ws->uses, ws->cap_uses, ws->nused + 1);
		ws->used[ws->nused] = a;
		ws->uses[ws->nused++] = 0;
	}
	ws->uses[u]++;
}

/* The entry at node y where a segment ends; *use says whether the segment
 * carries a copy of its own (not when the data reaches y already, nor when
 * it waits at a vertex that stores it, but by a hold-over). */
static uint32_t segment_end(const struct problem *p, const struct texp *x, struct tree_ws *ws,
			    const uint32_t *seg, uint32_t len, bool *use)
{
	uint32_t y = tx_head(x, seg[len - 1]), vy = y % x->nv, ce;

	*use = true;
	if (ws->node_ent[y] >= 0) {
		/* the data reaches y at that time already */
		ce = (uint32_t)ws->node_ent[y];
		*use = false;
	} else {
		/* stored: it arrived earlier and can wait there */
		if (stores_copies(p, vy) && ws->first_layer[vy] <= y / x->nv)
			*use = len == 1 && tx_is_hold(x, seg[0]);
		ce = new_entry(ws, y);
		ws->node_ent[y] = (int32_t)ce;
		touch(ws, y + 2 * x->nv);
	}
	if (stores_copies(p, vy) && ws->first_layer[vy] == UINT32_MAX) {
		ws->first_layer[vy] = y / x->nv;
		touch(ws, x->nv + vy);
	}
	return ce;
}

/* Group the m destinations' equal segments: one copy of the data each,
 * every destination into the entry where its segment ends. */
static void group_segments(const struct problem *p, const struct texp *x, const double *wres,
			   struct tree_ws *ws, uint32_t m)
{
	uint32_t T = x->T;

	for (uint32_t j = 0; j < m; j++) {
		uint32_t k = ws->list[j], s0 = ws->choice[j], len = ws->plen[k] - s0;
		const uint32_t *seg = ws->path + (size_t)k * T + s0;
		uint32_t owner = j;

		for (uint32_t i = 0; i < j && owner == j; i++) {
			uint32_t k2 = ws->list[i], s2 = ws->choice[i];

			if (ws->plen[k2] - s2 == len &&
			    !memcmp(ws->path + (size_t)k2 * T + s2, seg, len * sizeof(uint32_t)))
				owner = i;
		}
		if (owner != j) {
			/* same copy as an earlier destination: join its entry */
			entry_push(ws, ws->child_ent[owner], k);
			ws->child_ent[j] = ws->child_ent[owner];
			continue;
		}
		bool use;
		uint32_t ce = segment_end(p, x, ws, seg, len, &use);

		for (uint32_t i = 0; use && i < len; i++)
			if (!isinf(wres[seg[i]])) /* free hold-overs carry no usage */
				count_use(ws, seg[i]);
		ws->child_ent[j] = ce;
		entry_push(ws, ce, k);
	}
}

/* Build one tree from the residual flows. Entries sit at nodes where data
 * may branch; from an entry each destination follows its flow through the
 * vertices that cannot copy (a "segment") to the next node where data may
 * branch, and destinations with the same segment share one copy of the
 * data; different segments are separate copies (so an origin can send
 * several copies into a switch). Returns false when some destination finds
 * no arc (the remaining flows admit no tree). */
static bool build_tree(const struct problem *p, const struct texp *x, const struct origin_flow *of,
		       const double *wres, struct tree_ws *ws, uint32_t *outs)
{
	uint32_t o = of->origin, nd = of->ndest, T = x->T;

	ws->nent = 0;
	ws->nused = 0;
	memset(ws->plen, 0, nd * sizeof(uint32_t));
	new_entry(ws, o);
	for (uint32_t k = 0; k < nd; k++)
		entry_push(ws, 0, k);
	ws->first_layer[o] = 0;
	touch(ws, x->nv + o);
	ws->node_ent[o] = 0;
	touch(ws, o + 2 * x->nv);
	/* Entries are appended at later layers than the one being processed,
	 * and processed in index order: segments end at most T layers on, so
	 * process by layer buckets. */
	for (uint32_t layer = 0; layer <= T; layer++)
		for (size_t ei = 0; ei < ws->nent; ei++) {
			uint32_t node = ws->ent[ei].node, v = node % x->nv, t = node / x->nv, m = 0;

			if (t != layer)
				continue;
			for (uint32_t k = ws->ent[ei].head; k != UINT32_MAX; k = ws->next[k])
				if (!(t == T && of->dest[k] == v)) /* served here */
					ws->list[m++] = k;
			if (m == 0)
				continue;
			if (t == T || !first_arcs(x, of, wres, ws, m, v, t, outs) ||
			    !follow_segments(p, x, of, wres, ws, m, node, outs))
				return false;
			group_segments(p, x, wres, ws, m);
		}
	return true;
}

static void reset_tree(const struct texp *x, struct tree_ws *ws)
{
	for (size_t i = 0; i < ws->ntouched; i++) {
		uint32_t id = ws->touched[i];

		if (id >= 2 * x->nv)
			ws->node_ent[id - 2 * x->nv] = -1;
		else if (id >= x->nv)
			ws->first_layer[id - x->nv] = UINT32_MAX;
	}
	ws->ntouched = 0;
}

static void tree_ws_init(struct tree_ws *ws, const struct texp *x, uint32_t nd)
{
	uint32_t nn = tx_nnodes(x);

	memset(ws, 0, sizeof(*ws));
	ws->next = xmalloc((nd + 1) * sizeof(uint32_t));
	ws->first_layer = xmalloc((x->nv + 1) * sizeof(uint32_t));
	memset(ws->first_layer, 0xff, (x->nv + 1) * sizeof(uint32_t));
	ws->node_ent = xmalloc(((size_t)nn + 1) * sizeof(int32_t));
	memset(ws->node_ent, 0xff, ((size_t)nn + 1) * sizeof(int32_t));
	ws->path = xmalloc(((size_t)nd * x->T + 1) * sizeof(uint32_t));
	ws->plen = xcalloc(nd + 1, sizeof(uint32_t));
	ws->list = xmalloc((nd + 1) * sizeof(uint32_t));
	ws->choice = xmalloc((nd + 1) * sizeof(uint32_t));
	ws->child_arc = xmalloc((nd + 1) * sizeof(uint32_t));
	ws->child_ent = xmalloc((nd + 1) * sizeof(uint32_t));
	ws->first = xmalloc((nd + 1) * sizeof(uint32_t));
	ws->best = xmalloc((nd + 1) * sizeof(double));
}

static void tree_ws_free(struct tree_ws *ws)
{
	free(ws->ent);
	free(ws->next);
	free(ws->first_layer);
	free(ws->node_ent);
	free(ws->path);
	free(ws->plen);
	free(ws->used);
	free(ws->uses);
	free(ws->touched);
	free(ws->list);
	free(ws->choice);
	free(ws->child_arc);
	free(ws->child_ent);
	free(ws->first);
	free(ws->best);
}

/* Max flows on the residual usage re-fit every destination's flow after
 * each tree: a tree takes usage some other destination's flow was
 * counting on, and fresh flows route around it (or show the tree was too
 * heavy: then it is halved). */
struct refit {
	struct maxflow mf;
	uint32_t *arcs, n; /* arcs with usage left */
	double *cap;
};

static void refit_init(struct refit *rf, const struct texp *x, const double *wres)
{
	uint32_t na = tx_narcs(x);

	rf->n = 0;
	rf->arcs = xmalloc(((size_t)na + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < na; a++)
		if (isinf(wres[a]) || wres[a] > 1e-12)
			rf->arcs[rf->n++] = a;
	maxflow_init(&rf->mf, x, rf->arcs, rf->n);
	rf->cap = xcalloc((size_t)na + 1, sizeof(double));
}

static void refit_free(struct refit *rf)
{
	maxflow_free(&rf->mf);
	free(rf->arcs);
	free(rf->cap);
}

/* Does every destination still get need of the unit within wres? Its flow
 * is re-fitted if so (and up to the first that does not, if not). */
static bool refit_flows(const struct texp *x, struct origin_flow *of, const double *wres,
			struct refit *rf, double need)
{
	for (uint32_t i = 0; i < rf->n; i++) {
		uint32_t a = rf->arcs[i];

		rf->cap[a] = isinf(wres[a]) ? 2 : wres[a] > 0 ? wres[a] : 0;
	}
	maxflow_set_caps(&rf->mf, rf->cap);
	for (uint32_t k = 0; k < of->ndest; k++) {
		double got = maxflow_run(&rf->mf, of->origin, x->T * x->nv + of->dest[k], need);

		if (got < need - 1e-9)
			return false;
		for (uint32_t i = 0; i < rf->n; i++)
			*fref(of->at, of->f[k], rf->arcs[i]) = maxflow_on(&rf->mf, rf->arcs[i]);
	}
	return true;
}

/* The tree's weight: at most what is left of the unit, and its bottleneck
 * in w and in each f_d. */
static double tree_weight(const struct texp *x, const struct origin_flow *of, const double *wres,
			  const struct tree_ws *ws, double left)
{
	double theta = left;

	for (size_t u = 0; u < ws->nused; u++)
		if (wres[ws->used[u]] / ws->uses[u] < theta)
			theta = wres[ws->used[u]] / ws->uses[u];
	for (uint32_t k = 0; k < of->ndest; k++)
		for (uint32_t h = 0; h < ws->plen[k]; h++) {
			double fk = fget(of->at, of->f[k], ws->path[(size_t)k * x->T + h]);

			if (fk < theta)
				theta = fk;
		}
	return theta;
}

/* Take *theta of the tree from wres, with the flows re-fitted into what is
 * left; halve *theta on a shortfall, 30 times at most. */
static bool take_tree(const struct texp *x, struct origin_flow *of, double *wres,
		      const struct tree_ws *ws, struct refit *rf, double total, double *theta)
{
	for (int tries = 0; tries < 30; tries++) {
		double need = 1 - total - *theta;

		for (size_t u = 0; u < ws->nused; u++)
			wres[ws->used[u]] -= *theta * ws->uses[u];
		if (need <= TOL || refit_flows(x, of, wres, rf, need))
			return true;
		for (size_t u = 0; u < ws->nused; u++)
			wres[ws->used[u]] += *theta * ws->uses[u];
		*theta /= 2;
	}
	return false;
}

/* The hops tree_hops lays out: each arc of the tree once per destination
 * that takes it, hold-overs not. */
static size_t tree_nhops(const struct texp *x, const struct tree_ws *ws)
{
	size_t nh = 0;

	for (size_t u = 0; u < ws->nused; u++)
		if (!tx_is_hold(x, ws->used[u]))
			nh += ws->uses[u];
	return nh;
}

/* The tree's transfers: an arc carrying several copies is several. */
static uint32_t tree_hops(const struct texp *x, const struct tree_ws *ws, uint32_t *hop_a,
			  uint32_t *hop_l)
{
	uint32_t nh = 0;

	for (size_t u = 0; u < ws->nused; u++) {
		uint32_t a = ws->used[u];

		for (uint32_t c = 0; c < ws->uses[u] && !tx_is_hold(x, a); c++) {
			hop_a[nh] = tx_phys(x, a);
			hop_l[nh++] = tx_layer(x, a);
		}
	}
	return nh;
}

/* Peel paths of flow f from origin to (dest, T), each along the heaviest
 * arcs, until want of the unit is carried or no path is left: a piece
 * [got, got + its bottleneck) each. pa, hop_a, hop_l: scratch of T hops.
 * Returns what was carried. */
static double peel_paths(const struct texp *x, uint32_t origin, uint32_t dest, double *f,
			 const int32_t *at, double want, uint32_t *pa, uint32_t *hop_a,
			 uint32_t *hop_l, struct fluid_routing *rt)
{
	uint32_t T = x->T;
	double got = 0;

	while (got < want - 1e-12) {
		uint32_t node = origin, nh = 0, mh = 0;
		double bott = INFINITY;

		while (node / x->nv < T) {
			double bv;
			uint32_t a = heaviest_out(x, node, f, at, NULL, &bv);

			if (a == UINT32_MAX)
				break;
			pa[nh++] = a;
			if (bv < bott)
				bott = bv;
			node = tx_head(x, a);
		}
		if (node != T * x->nv + dest || bott <= 1e-12)
			break;
		if (bott > want - got)
			bott = want - got;
		for (uint32_t h = 0; h < nh; h++) {
			*fref(at, f, pa[h]) -= bott;
			if (!tx_is_hold(x, pa[h])) {
				hop_a[mh] = tx_phys(x, pa[h]);
				hop_l[mh++] = tx_layer(x, pa[h]);
			}
		}
		routing_add_piece(rt, origin, dest, got, got + bott, hop_a, hop_l, mh);
		got += bott;
	}
	return got;
}

/* What no tree carried (rest = 1 - total of the unit): per-destination
 * paths of the remaining flows, each destination splitting the same
 * remaining part of the unit. pa: a path's scratch, T arcs. */
static void rest_paths(const struct texp *x, struct origin_flow *of, double weight, double total,
		       uint32_t *pa, uint32_t *hop_a, uint32_t *hop_l, struct fluid_routing *rt)
{
	double rest = 1 - total;

	for (uint32_t k = 0; k < of->ndest; k++) {
		size_t first_piece = rt->npieces;
		double got = peel_paths(x, of->origin, of->dest[k], of->f[k], of->at, rest, pa,
					hop_a, hop_l, rt);
		/* this destination's paths onto [total, 1) of the unit */
		double scale = got > 0 ? rest / got : 0;

		for (size_t i = first_piece; i < rt->npieces; i++) {
			struct fluid_piece *q = &rt->pieces[i];

			q->lo = weight * (total + q->lo * scale);
			q->hi = weight * (total + q->hi * scale);
		}
	}
}

void decompose_origin(const struct problem *p, const struct texp *x, struct origin_flow *of,
		      double weight, struct fluid_routing *rt, double *deficit)
{
	uint32_t na = tx_narcs(x), nd = of->ndest;
	double *wres = xmalloc(((size_t)na + 1) * sizeof(double)), total = 0;
	struct tree_ws ws;
	/* The hops of one tree (or one path, T at most): each destination's
	 * path in it has T arcs at most, and nd * T is at most the arcs of
	 * the expansion (T layers of at least nd arcs), so na suffices; grown
	 * if a tree ever needs more. Every arc once per destination, the
	 * bound reserved before, was two blocks of 340 MB at 1,024 GPUs,
	 * their address space counted against a limit on it though hardly a
	 * page was touched. */
	size_t cap_hops = (size_t)(na > x->T ? na : x->T) + 1;
	uint32_t *hop_a = xmalloc(cap_hops * sizeof(uint32_t));
	uint32_t *hop_l = xmalloc(cap_hops * sizeof(uint32_t));
	uint32_t *outs = xmalloc((x->ne + x->nhold + 2) * sizeof(uint32_t));
	struct refit rf;

	/* Hold-overs without w (vertices that store and copy) are free. */
	for (uint32_t a = 0; a < na; a++)
		wres[a] =
		    tx_is_hold(x, a) && !p->conserve[tx_vertex_from(x, a)] ? INFINITY : of->w[a];
	tree_ws_init(&ws, x, nd);
	refit_init(&rf, x, wres);
	for (uint32_t guard = 0; total < 1 - TOL && guard < 4 * na + 64; guard++) {
		bool ok = build_tree(p, x, of, wres, &ws, outs);

		reset_tree(x, &ws);
		if (!ok)
			break;
		double theta = tree_weight(x, of, wres, &ws, 1 - total);

		if (theta <= 1e-12 || !take_tree(x, of, wres, &ws, &rf, total, &theta))
			break;
		size_t need = tree_nhops(x, &ws);

		if (need + 1 > cap_hops) {
			cap_hops = 2 * need + 1;
			free(hop_a);
			free(hop_l);
			hop_a = xmalloc(cap_hops * sizeof(uint32_t));
			hop_l = xmalloc(cap_hops * sizeof(uint32_t));
		}
		uint32_t nh = tree_hops(x, &ws, hop_a, hop_l);

		if (1 - total - theta <= TOL)
			for (uint32_t k = 0; k < nd; k++)
				memset(of->f[k], 0, (of->at ? of->nat : na) * sizeof(double));
		routing_add_piece(rt, of->origin, UINT32_MAX, weight * total,
				  weight * (total + theta), hop_a, hop_l, nh);
		total += theta;
	}
	refit_free(&rf);
	if (1 - total > TOL) {
		*deficit += weight * (1 - total);
		rest_paths(x, of, weight, total, ws.path, hop_a, hop_l, rt);
	}
	free(wres);
	free(hop_a);
	free(hop_l);
	free(outs);
	tree_ws_free(&ws);
}

void decompose_pair(const struct texp *x, uint32_t origin, uint32_t dest, double *f,
		    struct fluid_routing *rt)
{
	uint32_t T = x->T, *pa = xmalloc((T + 1) * sizeof(uint32_t));
	uint32_t *ha = xmalloc((T + 1) * sizeof(uint32_t)),
		 *hl = xmalloc((T + 1) * sizeof(uint32_t));
	size_t first = rt->npieces;
	double got = peel_paths(x, origin, dest, f, NULL, 1, pa, ha, hl, rt);

	/* renormalise to exactly [0, 1) */
	for (size_t i = first; got > 0 && i < rt->npieces; i++) {
		rt->pieces[i].lo /= got;
		rt->pieces[i].hi /= got;
	}
	free(pa);
	free(ha);
	free(hl);
}
