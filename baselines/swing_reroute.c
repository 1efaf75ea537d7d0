/* Swing on a torus with failed links: the healthy reduced program kept
 * whole (the same peers, the same data each step, so the same result) and
 * a patch of the routes that change. See baselines.h, "Swing around failed
 * links", for the model.
 *
 * Every Swing transfer moves along one dimension (its peer differs from it
 * in one coordinate), routed the short way round that ring, a tie (half the
 * ring) split over both ways. A failed arc is crossed by the transfers of
 * its own ring line whose route covers it, and only those are re-routed:
 * the other way round, or aside by j in another dimension, along, and back.
 * Loads are counted in fixed point (twice blocks x length, so a tie's half
 * is exact): an arc's load is its orbit's under the program's group (the
 * healthy figures' way) plus what the patch moves on it, so a failed arc
 * carries exactly nothing once every transfer crossing it has a detour,
 * which is what the check tests instead of trusting a list. */
#include "baselines/swing_loads.h"

#include <stdlib.h>
#include <string.h>

int swing_geo_make(struct geo *g, const struct topo_tree *t, const struct sched_group *G,
		   struct ofc_error *err)
{
	memset(g, 0, sizeof(*g));
	if (!topo_torus_dims(t, NULL) || t->nparams > SCHED_GROUP_MAX_DIMS)
		return ofc_error_set(err, OFC_E_INPUT, "Swing re-routes on a torus:AxB... only");
	g->D = t->nparams;
	g->n = 1;
	for (uint32_t i = 0; i < g->D; i++) {
		if (t->params[i] < 4)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s: Swing re-routes around failed links on sides of "
					     "at least 4 (a side of %u has no second way round)",
					     t->spec, t->params[i]);
		g->dims[i] = t->params[i];
		g->stride[i] = g->n;
		g->n *= t->params[i];
		g->degree += 2;
	}
	if (G->nodes != g->n || G->ndims != g->D)
		return ofc_error_set(err, OFC_E_INPUT, "the group %s is not %s's translations",
				     G->name, t->spec);
	g->G = G;
	g->narcs = (size_t)g->n * g->D * 2;
	g->norbits = (size_t)G->reps * g->D * 2;
	g->orbit_size = G->order;
	return 0;
}

/* ---- a step's pairs and their healthy routes ------------------------------------- */

/* The step's program transfers summed by (source, destination). Each must
 * start at a representative and move in one dimension. */
int swing_step_pairs(const struct geo *g, const struct schedule *s, uint32_t st, struct rpair **out,
		     size_t *cap, size_t *np, struct ofc_error *err)
{
	size_t k = 0, last = 0;

	for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
		const struct xfer *x = &s->xfers[i];
		uint64_t u = 2 * (uint64_t)xfer_blocks(x) * x->length;
		uint32_t h;

		if (k && (*out)[last].rep == x->src && (*out)[last].dst == x->dst) {
			(*out)[last].units += u;
			continue;
		}
		for (last = 0; last < k; last++)
			if ((*out)[last].rep == x->src && (*out)[last].dst == x->dst)
				break;
		if (last < k) {
			(*out)[last].units += u;
			continue;
		}
		if (x->src >= g->n || x->dst >= g->n ||
		    sched_group_rep_node(g->G, sched_group_split(g->G, x->src, &h)) != x->src)
			return ofc_error_set(err, OFC_E_INPUT,
					     "step %u: transfer %u -> %u is not from a "
					     "representative of %s",
					     st, x->src, x->dst, g->G->name);
		uint32_t w = g->D, moved = 0;
		for (uint32_t j = 0; j < g->D; j++)
			if (coord(g, x->src, j) != coord(g, x->dst, j)) {
				w = j;
				moved++;
			}
		if (moved != 1)
			return ofc_error_set(err, OFC_E_INPUT,
					     "step %u: transfer %u -> %u does not move along one "
					     "dimension (Swing's peers do)",
					     st, x->src, x->dst);
		GROW(*out, *cap, k + 1);
		uint32_t d = g->dims[w];
		(*out)[k] = (struct rpair){x->src, x->dst, w,
					   (coord(g, x->dst, w) + d - coord(g, x->src, w)) % d, u};
		last = k++;
	}
	*np = k;
	return 0;
}

static uint32_t detour_legs(const struct geo *g, const struct swing_detour *x, struct leg *l)
{
	uint32_t w = 0, n = 0;

	if (x->way == SWING_WAY_PATH) {
		uint32_t at = x->src;

		for (uint32_t i = 0; i < x->nlegs && i < SWING_DETOUR_LEGS; i++) {
			const struct swing_leg *s = &g->p->legs[x->path + i];

			l[n++] = (struct leg){at, s->dim, s->dir, s->len};
			at = shift(g, at, s->dim, s->dir, s->len);
		}
		return n;
	}

	for (uint32_t j = 0; j < g->D; j++)
		if (coord(g, x->src, j) != coord(g, x->dst, j))
			w = j;
	uint32_t d = g->dims[w], f = (coord(g, x->dst, w) + d - coord(g, x->src, w)) % d;
	uint32_t at = x->src, side = (uint32_t)(x->side < 0 ? -x->side : x->side);

	if (side) {
		l[n++] = (struct leg){at, x->side_dim, x->side < 0, side};
		at = shift(g, at, x->side_dim, x->side < 0, side);
	}
	l[n++] = (struct leg){at, w, x->way, x->way ? d - f : f};
	if (side) {
		at = shift(g, at, w, x->way, l[n - 1].len);
		l[n++] = (struct leg){at, x->side_dim, x->side > 0, side};
	}
	return n;
}

static uint32_t legs_len(const struct leg *l, uint32_t n)
{
	uint32_t len = 0;

	for (uint32_t i = 0; i < n; i++)
		len += l[i].len;
	return len;
}

/* The healthy half `half` of x's pair, as a leg. */
static struct leg healthy_leg(const struct geo *g, const struct swing_detour *x)
{
	uint32_t w = 0;

	for (uint32_t j = 0; j < g->D; j++)
		if (coord(g, x->src, j) != coord(g, x->dst, j))
			w = j;
	uint32_t d = g->dims[w], f = (coord(g, x->dst, w) + d - coord(g, x->src, w)) % d;
	return (struct leg){x->src, w, x->half, half_len(d, f, x->half)};
}

uint32_t swing_pairs_hops(const struct geo *g, const struct rpair *p, size_t np)
{
	uint32_t m = 0;

	for (size_t i = 0; i < np; i++) {
		uint32_t d = g->dims[p[i].w], len = p[i].f < d - p[i].f ? p[i].f : d - p[i].f;

		m = len > m ? len : m;
	}
	return m;
}

/* ---- the failed arcs ----------------------------------------------------------------- */

int swing_failed_arcs(const struct topo_tree *t, const struct graph *healthy, const struct graph *g,
		      uint32_t **arcs, size_t *narcs, struct ofc_error *err)
{
	struct sched_group G;
	struct geo geo;
	size_t k = 0, cap = 0;

	*arcs = NULL;
	*narcs = 0;
	sched_group_make(&G, t && t->op == TOPO_FAMILY ? t->params : NULL,
			 t && t->op == TOPO_FAMILY ? t->nparams : 0);
	if (swing_geo_make(&geo, t, &G, err) < 0)
		return -1;
	if (healthy->n != geo.n || g->n != geo.n)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s has %u nodes, the degraded graph %u: failed hosts are "
				     "not re-routed (Swing's exchanges include every host)",
				     t->spec, healthy->n, g->n);
	for (uint32_t u = 0; u < geo.n; u++) {
		const uint32_t *out = graph_out(healthy, u), *left = graph_out(g, u);

		for (uint32_t a = 0; a < graph_outdeg(healthy, u); a++) {
			bool kept = false;

			for (uint32_t b = 0; b < graph_outdeg(g, u) && !kept; b++)
				kept = left[b] == out[a];
			if (kept)
				continue;
			uint32_t w = geo.D;
			for (uint32_t j = 0; j < geo.D; j++)
				if (coord(&geo, u, j) != coord(&geo, out[a], j))
					w = w == geo.D ? j : geo.D + 1;
			if (w >= geo.D) {
				free(*arcs);
				*arcs = NULL;
				return ofc_error_set(err, OFC_E_INPUT,
						     "%s: arc %u -> %u is no torus link", t->spec,
						     u, out[a]);
			}
			GROW(*arcs, cap, k + 1);
			(*arcs)[k++] =
			    (uint32_t)arc_id(&geo, u, w, hop(&geo, u, w, 0) == out[a] ? 0 : 1);
		}
	}
	*narcs = k; /* ascending: by tail, then port in dimension order */
	return 0;
}

/* ---- planning ------------------------------------------------------------------------- */

void swing_reroute_free(struct swing_reroute *p)
{
	free(p->failed);
	free(p->det);
	free(p->legs);
	free(p->step_start);
	free(p->step_max);
	free(p->step_hops);
	memset(p, 0, sizeof(*p));
}

/* By the half of the exchange it moves, (src, dst, half). */
static int by_half(const void *a, const void *b)
{
	const struct swing_detour *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return (int)x->half - (int)y->half;
}

/* ... then by route: the patch's order, each route of a half once. */
static int by_key(const void *a, const void *b)
{
	const struct swing_detour *x = a, *y = b;
	int c = by_half(a, b);

	if (c)
		return c;
	if (x->way != y->way)
		return (int)x->way - (int)y->way;
	if (x->side_dim != y->side_dim)
		return (int)x->side_dim - (int)y->side_dim;
	if (x->side != y->side)
		return (int)x->side - (int)y->side;
	if (x->path != y->path)
		return x->path < y->path ? -1 : 1;
	return (int)x->nlegs - (int)y->nlegs;
}

static int by_units(const void *a, const void *b)
{
	const struct swing_detour *x = a, *y = b;

	if (x->units != y->units)
		return x->units > y->units ? -1 : 1;
	return by_half(a, b);
}

/* A stable merge sort (insertion-sorted runs of SORT_RUN, merged bottom
 * up), one per order so the comparison is inlined: qsort's own merge calls
 * the comparator through a pointer and copies each element bytewise, which
 * was a tenth of planning 1% of torus:128x128's ports. Stable like qsort's
 * merge (and each order here is total besides), so the patch is the same. */
#define SORT_RUN 16
#define DETOUR_SORT(name, cmp)                                                                     \
	static void name(struct swing_detour *a, size_t n)                                         \
	{                                                                                          \
		if (n < 2)                                                                         \
			return;                                                                    \
		for (size_t lo = 0; lo < n; lo += SORT_RUN)                                        \
			for (size_t i = lo + 1; i < n && i < lo + SORT_RUN; i++) {                 \
				struct swing_detour x = a[i];                                      \
				size_t j = i;                                                      \
				for (; j > lo && cmp(&a[j - 1], &x) > 0; j--)                      \
					a[j] = a[j - 1];                                           \
				a[j] = x;                                                          \
			}                                                                          \
		if (n <= SORT_RUN)                                                                 \
			return;                                                                    \
		struct swing_detour *t = xmalloc(n * sizeof(*t)), *from = a, *to = t;              \
		for (size_t w = SORT_RUN; w < n; w *= 2) {                                         \
			for (size_t lo = 0; lo < n; lo += 2 * w) {                                 \
				size_t mid = lo + w < n ? lo + w : n;                              \
				size_t hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid;      \
				size_t k = lo;                                                     \
				while (i < mid && j < hi)                                          \
					to[k++] =                                                  \
					    cmp(&from[j], &from[i]) < 0 ? from[j++] : from[i++];   \
				while (i < mid)                                                    \
					to[k++] = from[i++];                                       \
				while (j < hi)                                                     \
					to[k++] = from[j++];                                       \
			}                                                                          \
			struct swing_detour *u = from;                                             \
			from = to;                                                                 \
			to = u;                                                                    \
		}                                                                                  \
		if (from != a)                                                                     \
			memcpy(a, from, n * sizeof(*a));                                           \
		free(t);                                                                           \
	}
DETOUR_SORT(sort_by_half, by_half)
DETOUR_SORT(sort_by_key, by_key)
DETOUR_SORT(sort_by_units, by_units)

/* The halves of the step's pairs whose healthy route covers a failed arc
 * (appended at *det from index k; sorted, each once). A failed arc (u, w,
 * dir) is crossed only by sources on u's line along w. */
static size_t crossing(const struct geo *g, const struct swing_reroute *p, uint32_t st,
		       const struct rpair *pr, size_t np, struct swing_detour **det, size_t *cap,
		       size_t k)
{
	size_t k0 = k;

	for (size_t i = 0; i < p->nfailed; i++) {
		uint32_t u = (uint32_t)(p->failed[i] / 2 / g->D), w = p->failed[i] / 2 % g->D,
			 dir = p->failed[i] % 2, d = g->dims[w], xu = coord(g, u, w), reach = 0;

		for (size_t j = 0; j < np; j++) /* no source further back crosses it */
			if (pr[j].w == w && half_len(d, pr[j].f, dir) > reach)
				reach = half_len(d, pr[j].f, dir);
		for (uint32_t along = 0; along < reach; along++) {
			uint32_t x = dir ? (xu + along) % d : (xu + d - along) % d, h;
			uint32_t r = u - xu * g->stride[w] + x * g->stride[w];
			uint32_t rep = sched_group_rep_node(g->G, sched_group_split(g->G, r, &h));

			for (size_t j = 0; j < np; j++) {
				uint32_t len = half_len(d, pr[j].f, dir);

				if (pr[j].rep != rep || pr[j].w != w || along >= len)
					continue;
				GROW(*det, *cap, k + 1);
				(*det)[k++] = (struct swing_detour){
				    .step = st,
				    .src = r,
				    .dst = sched_group_add(g->G, pr[j].dst, h),
				    .half = (uint8_t)dir,
				    .units = half_units(d, pr[j].f, pr[j].units)};
			}
		}
	}
	if (k > k0) /* *det is NULL where nothing crosses yet */
		sort_by_half(*det + k0, k - k0);
	size_t out = k0;
	for (size_t i = k0; i < k; i++)
		if (i == k0 || by_half(&(*det)[i], &(*det)[out - 1]))
			(*det)[out++] = (*det)[i];
	return out;
}

/* What place learns of a half at its first placing and keeps for the
 * others: which of its candidates cross a failed arc (the first 63, in
 * candidates' order; bits of `known` say which were looked at), and the
 * route searched for it (path << 8 | legs; 0: none). All hang on the
 * failures alone. */
struct half_memo {
	uint64_t crossed, known, searched;
};

#define MAX_CANDS (1 + (SCHED_GROUP_MAX_DIMS - 1) * 2 * SWING_DETOUR_SIDE)

/* A candidate's legs (aside, along, back), kept for placing its parts. */
struct cand_legs {
	struct leg l[3];
	uint32_t n;
};
/* Each half placed once, then again twice over all the others' detours
 * (1% of torus:64x64's links: +95% placed once, +73% twice, +66% three
 * times, +65% four). */
#define PLACINGS 3
/* The rip-up over a step's busiest arcs (relieve): at most this many
 * rounds, each aiming 1/RELIEF_STEP below the last max, moving parts down
 * to 1/RELIEF_GRAIN of a detour; only in steps that may gain 1/RELIEF_SHARE
 * of the busiest step's healthy load, and visiting at most RELIEF_WORK
 * arcs and nodes a step (at torus:256x256 a long step has 150,000 detours
 * of 85 hops: a walk of them all is 13 M visits, and its load is 1/400 of
 * the first step's). */
#define RELIEF_ROUNDS 64
#define RELIEF_STEP   256
#define RELIEF_GRAIN  16
#define RELIEF_SHARE  32
#define RELIEF_WORK   (1 << 22)

/* x's detours that cross no failed arc, each with its busiest arc's load
 * now (base) and its length: first the other way round and one aside
 * either way in each other dimension, which share no arc (so the parts
 * given to each add up on its own arcs alone), and only where none of
 * those is whole, further aside (up to SWING_DETOUR_SIDE). A route whose
 * busiest arc is past the best one's by the whole transfer would get no
 * part, and its walk stops there. */
static uint32_t candidates(struct loads *L, const struct swing_detour *x, struct swing_detour *cand,
			   int64_t *base, uint32_t *len, struct cand_legs *cl,
			   struct half_memo *memo)
{
	const struct geo *g = L->g;
	struct swing_detour c = *x;
	struct leg l[SWING_DETOUR_LEGS];
	struct leg h = healthy_leg(g, x);
	uint32_t k = 0, n, idx = 0;
	int64_t bound = INT64_MAX;

	for (int pass = 0; pass < 2 && !k; pass++)
		for (int dim = -1; dim < (int)g->D; dim++) {
			int J = dim < 0 ? 0 : (int)(g->dims[dim] / 2);

			if (dim == (int)h.w || (dim < 0 && pass))
				continue;
			J = J > SWING_DETOUR_SIDE ? SWING_DETOUR_SIDE : J;
			/* 0 (the other way); 1, -1; then 2, -2, ... */
			int m0 = dim < 0 ? 0
				 : pass	 ? 4
					 : 2,
			    m1 = dim < 0 ? 0
				 : pass	 ? 2 * J + 1
					 : 3;
			for (int m = m0; m <= m1; m++, idx++) {
				int j = m / 2 * (m % 2 ? -1 : 1);
				uint64_t bit = idx < 63 ? 1ull << idx : 0;
				bool crosses = false;

				if (memo->known & bit && memo->crossed & bit)
					continue;
				c.way = dim < 0 ? (uint8_t)!x->half : x->half;
				c.side_dim = (uint8_t)(dim < 0 ? 0 : dim);
				c.side = (int8_t)j;
				n = detour_legs(g, &c, l);
				for (uint32_t i = 0; i < n && !(memo->known & bit); i++)
					crosses = crosses || swing_leg_failed(L, &l[i]);
				memo->known |= bit;
				memo->crossed |= crosses ? bit : 0;
				if (!crosses && k < MAX_CANDS &&
				    swing_legs_under(L, l, n, bound, &base[k])) {
					cand[k] = c;
					memcpy(cl[k].l, l, n * sizeof(*l));
					cl[k].n = n;
					len[k++] = legs_len(l, n);
					if (base[k - 1] + (int64_t)x->units < bound)
						bound = base[k - 1] + (int64_t)x->units;
				}
			}
		}
	return k;
}

/* Whether u is within 2 x SWING_DETOUR_SIDE of the healthy route h: a
 * detour at most 4 x SWING_DETOUR_SIDE hops longer rarely strays further,
 * and the search then visits a band, not the torus (whole, it took most
 * of torus:256x256 with 1% of its links down). */
static bool near(const struct geo *g, const struct leg *h, uint32_t u)
{
	uint32_t R = 2 * SWING_DETOUR_SIDE;

	for (uint32_t j = 0; j < g->D; j++) {
		uint32_t d = g->dims[j], a = coord(g, u, j), b = coord(g, h->start, j);
		uint32_t off = h->dir ? (b + d - a) % d : (a + d - b) % d; /* along h */

		if (j == h->w ? off > h->len + R && d - off > R : off > R && d - off > R)
			return false;
	}
	return true;
}

/* Whether a route may take arc a: live, and (carrying u more) under below. */
static bool arc_open(const struct loads *L, size_t a, uint64_t u, int64_t below)
{
	return !L->failed[a] && (below == INT64_MAX || swing_load_of(L, a) + (int64_t)u < below);
}

/* find_path's breadth-first search from x->src over live arcs that stay
 * under `below` carrying x's units: near the healthy route h and within
 * `limit` hops where bounded, else over the whole torus. Whether it
 * reached x->dst; *queued: the nodes it queued, by depth. */
static bool search(struct loads *L, const struct swing_detour *x, const struct leg *h,
		   int64_t below, uint32_t limit, bool bounded, uint32_t *queued)
{
	const struct geo *g = L->g;
	uint32_t head = 0, tail = 0;

	if (!L->seen) {
		L->seen = xcalloc(g->n, sizeof(uint32_t));
		L->parent = xcalloc(g->n, sizeof(uint32_t));
		L->queue = xcalloc(g->n, sizeof(uint32_t));
		L->legs = xmalloc((size_t)g->n * g->degree);
	}
	uint32_t now = ++L->search, *depth = L->parent;
	L->seen[x->src] = now;
	depth[x->src] = 0;
	L->queue[tail++] = x->src;
	while (head < tail && L->seen[x->dst] != now) {
		uint32_t v = L->queue[head++];

		L->work--;
		if (bounded && depth[v] >= limit)
			break;
		for (uint32_t w = 0; w < g->D; w++)
			for (uint32_t dir = 0; dir < 2; dir++) {
				uint32_t u = hop(g, v, w, dir);

				if (!arc_open(L, arc_id(g, v, w, dir), x->units, below) ||
				    L->seen[u] == now || (bounded && !near(g, h, u)))
					continue;
				L->seen[u] = now;
				depth[u] = depth[v] + 1;
				L->queue[tail++] = u;
			}
	}
	*queued = tail;
	return L->seen[x->dst] == now;
}

/* The fewest legs of a shortest route the search found to each node up
 * to dst's depth, by the way its last hop goes (k: dimension k / 2, way k
 * % 2): L->legs[v x degree + k], in the search's order (a node's
 * predecessors, one level nearer, come first); 255: none (or as many). */
static void fewest_legs(struct loads *L, const struct swing_detour *x, int64_t below,
			uint32_t queued)
{
	const struct geo *g = L->g;
	const uint32_t *depth = L->parent;
	uint32_t K = g->degree, last = depth[x->dst];
	uint8_t *legs = L->legs;

	for (uint32_t q = 1; q < queued; q++) {
		uint32_t v = L->queue[q];

		if (depth[v] > last)
			break;
		if (depth[v] == last && v != x->dst)
			continue;
		for (uint32_t k = 0; k < K; k++) {
			uint32_t w = k / 2, dir = k % 2, u = hop(g, v, w, !dir), best = 255;

			legs[(size_t)v * K + k] = 255;
			if (L->seen[u] != L->search || depth[u] + 1 != depth[v] ||
			    !arc_open(L, arc_id(g, u, w, dir), x->units, below))
				continue;
			if (u == x->src) {
				legs[(size_t)v * K + k] = 1;
				continue;
			}
			for (uint32_t j = 0; j < K; j++) {
				uint32_t c = legs[(size_t)u * K + j] + (j != k);

				best = c < best ? c : best;
			}
			legs[(size_t)v * K + k] = (uint8_t)(best < 255 ? best : 255);
		}
	}
}

/* x's route where none of its candidates is whole, or off the step's
 * busiest arcs: a shortest one over live arcs that stay under `below`
 * carrying x's units (INT64_MAX: any), and of those one with the fewest
 * straight legs. Bounded: near the healthy route (breadth first, at most
 * 4 x SWING_DETOUR_SIDE hops longer than it and at most `longest`); else
 * over the whole torus. Its legs appended to p's; 0, or -1 where the
 * search reaches no route, -2 where the fewest legs are more than
 * SWING_DETOUR_LEGS (need: the route's hops and legs). */
static int find_path(struct loads *L, struct swing_reroute *p, size_t *cap_legs,
		     struct swing_detour *x, int64_t below, uint32_t longest, bool bounded,
		     uint32_t need[2])
{
	const struct geo *g = L->g;
	struct leg h = healthy_leg(g, x);
	uint32_t limit = h.len + 4 * SWING_DETOUR_SIDE, queued, K = g->degree, best = 0;

	limit = limit < longest ? limit : longest;
	if (!search(L, x, &h, below, limit, bounded, &queued))
		return -1;
	fewest_legs(L, x, below, queued);
	const uint8_t *legs = L->legs;
	for (uint32_t k = 1; k < K; k++)
		if (legs[(size_t)x->dst * K + k] < legs[(size_t)x->dst * K + best])
			best = k;
	need[0] = L->parent[x->dst];
	need[1] = legs[(size_t)x->dst * K + best];
	if (need[1] > SWING_DETOUR_LEGS)
		return -2;
	/* Back from dst: along the leg while that keeps the fewest, else
	 * onto the first way that does. */
	struct swing_leg rev[SWING_DETOUR_LEGS];
	uint32_t n = 0;
	for (uint32_t v = x->dst, k = best; v != x->src;) {
		uint32_t u = hop(g, v, k / 2, !(k % 2)), here = legs[(size_t)v * K + k];

		if (!n || rev[n - 1].dim != k / 2 || rev[n - 1].dir != k % 2)
			rev[n++] = (struct swing_leg){(uint8_t)(k / 2), (uint8_t)(k % 2), 0};
		rev[n - 1].len++;
		if (u != x->src && legs[(size_t)u * K + k] != here)
			for (k = 0; legs[(size_t)u * K + k] + 1u != here; k++)
				;
		v = u;
	}
	GROW(p->legs, *cap_legs, p->nlegs + n);
	x->way = SWING_WAY_PATH;
	x->side_dim = 0;
	x->side = 0;
	x->path = (uint32_t)p->nlegs;
	x->nlegs = (uint8_t)n;
	for (uint32_t i = 0; i < n; i++)
		p->legs[p->nlegs++] = rev[n - 1 - i];
	return 0;
}

/* x's route where none of its candidates is whole: the bounded search's,
 * else the whole torus's. -1 with why there is none: the failures cut
 * the peers apart, or its fewest legs are too many. */
static int route_around(struct loads *L, struct swing_reroute *p, size_t *cap_legs,
			struct swing_detour *x, uint32_t st, struct ofc_error *err)
{
	uint32_t need[2];

	if (find_path(L, p, cap_legs, x, INT64_MAX, UINT32_MAX, true, need) == 0)
		return 0;
	int rc = find_path(L, p, cap_legs, x, INT64_MAX, UINT32_MAX, false, need);
	if (rc == 0)
		return 0;
	if (rc == -1)
		return ofc_error_set(err, OFC_E_INPUT,
				     "step %u: no route for Swing's transfer %u -> %u: the "
				     "failures cut the peers apart",
				     st, x->src, x->dst);
	return ofc_error_set(err, OFC_E_INPUT,
			     "step %u: no route for Swing's transfer %u -> %u around the failed "
			     "links in at most %u straight legs (its shortest routes, %u hops, "
			     "need %u)",
			     st, x->src, x->dst, SWING_DETOUR_LEGS, need[0], need[1]);
}

/* Half x put on its routes: its SWING_DETOUR_PARTS parts each to the route
 * whose busiest arc it leaves least loaded (then the shorter), counting
 * the parts given before and, where hops cost (g->hop_units), the alphas
 * a route longer than the step's longest adds to the step; appended at
 * p->det[*out], the loads changed. memo: what its earlier placings
 * learnt. */
/* What a part on a route of len hops whose busiest arc would carry load
 * costs its step, in load units: where hops are free, that load (the
 * least loaded route, as ever); where they cost, the step's busiest arc
 * after it (a route under the step's busiest arc costs nothing) and the
 * alphas it adds to the step's longest route. */
static int64_t part_cost(const struct loads *L, int64_t load, uint32_t len)
{
	if (!L->g->hop_units)
		return load;
	return (load > L->floor ? load : L->floor) +
	       (len > L->longest ? (int64_t)(len - L->longest) * L->g->hop_units : 0);
}

static int place(struct loads *L, struct swing_reroute *p, uint32_t st,
		 const struct swing_detour *half, size_t *cap, size_t *out, size_t *cap_legs,
		 struct half_memo *memo, struct ofc_error *err)
{
	const struct geo *g = L->g;
	struct swing_detour cand[MAX_CANDS], x = *half;
	struct leg l[SWING_DETOUR_LEGS];
	int64_t base[MAX_CANDS];
	uint64_t given[MAX_CANDS];
	struct cand_legs cl[MAX_CANDS];
	uint32_t len[MAX_CANDS], nc = candidates(L, &x, cand, base, len, cl, memo);
	bool searched = !nc;

	if (!nc) { /* the same each placing: the search depends on the failures alone */
		if (memo->searched) {
			x.way = SWING_WAY_PATH;
			x.path = (uint32_t)(memo->searched >> 8);
			x.nlegs = (uint8_t)memo->searched;
		} else if (route_around(L, p, cap_legs, &x, st, err) < 0) {
			return -1;
		}
		memo->searched = (uint64_t)x.path << 8 | x.nlegs;
		cand[0] = x;
		base[0] = 0;
		len[0] = legs_len(l, detour_legs(g, &x, l));
		nc = 1;
	}
	/* MAX_CANDS is for the most dimensions; a half has a few */
	memset(given, 0, nc * sizeof(given[0]));
	for (uint64_t j = 0, was = 0, upto; j < SWING_DETOUR_PARTS; j++, was = upto) {
		uint64_t u = (upto = x.units * (j + 1) / SWING_DETOUR_PARTS) - was;
		uint32_t b = 0;

		for (uint32_t c = 1; c < nc; c++) {
			int64_t vc = part_cost(L, base[c] + (int64_t)given[c], len[c]),
				vb = part_cost(L, base[b] + (int64_t)given[b], len[b]);

			if (vc < vb || (vc == vb && len[c] < len[b]))
				b = c;
		}
		given[b] += u;
		L->longest = len[b] > L->longest ? len[b] : L->longest;
		if (base[b] + (int64_t)given[b] > L->floor)
			L->floor = base[b] + (int64_t)given[b];
	}
	for (uint32_t c = 0; c < nc; c++) {
		if (!given[c])
			continue;
		cand[c].units = given[c];
		if (searched)
			swing_change_legs(L, l, detour_legs(g, &cand[c], l), (int64_t)given[c]);
		else
			swing_change_legs(L, cl[c].l, cl[c].n, (int64_t)given[c]);
		GROW(p->det, *cap, *out + 1);
		p->det[(*out)++] = cand[c];
	}
	return 0;
}

/* Detour i (route l, n legs) on an arc over `target`: parts of it taken
 * off (the whole, else halves down to RELIEF_GRAIN of it) onto searched
 * routes that stay within target and `longest` hops, while its route
 * still crosses one.
 * Whether any moved. */
static bool relieve_one(struct loads *L, struct swing_reroute *p, size_t i, const struct leg *l,
			uint32_t n, int64_t target, uint32_t longest, size_t *out, size_t *cap,
			size_t *cap_legs)
{
	struct leg m[SWING_DETOUR_LEGS];
	uint64_t all = p->det[i].units, q = all;
	bool moved = false;

	while (p->det[i].units && q && q >= all / RELIEF_GRAIN &&
	       swing_legs_reach(L, l, n, target + 1)) {
		struct swing_detour y = p->det[i];

		q = q < y.units ? q : y.units;
		y.units = q;
		swing_change_legs(L, l, n, -(int64_t)q);
		uint32_t need[2];
		if (find_path(L, p, cap_legs, &y, target + 1, longest, true, need) < 0) {
			swing_change_legs(L, l, n, (int64_t)q);
			q /= 2;
			continue;
		}
		swing_change_legs(L, m, detour_legs(L->g, &y, m), (int64_t)q);
		p->det[i].units -= q;
		GROW(p->det, *cap, *out + 1);
		p->det[(*out)++] = y;
		moved = true;
	}
	return moved;
}

/* Rip-up and reroute over the step's busiest arcs: each round aims at a
 * max RELIEF_STEP below the step's (at least one unit), and every detour
 * on an arc over it moves parts onto searched routes within it; the next
 * round aims lower, while a round reaches its aim, at most RELIEF_ROUNDS.
 * Placed greedily, neighbouring failures' detours meet on the arcs between
 * them (1% of torus:64x64's links: a short step's busiest arc 5/3 of its
 * healthy load, where a node's three other arcs would carry 4/3). A
 * round costs a walk of the step's detours, so the rounds stop where an
 * arc no detour crosses is the busiest. No route moved to is longer than
 * the step's longest (pairs_hops or a detour's), so the step's latency
 * stays and its busiest arc never grows: the relief costs nothing where it
 * gains nothing. Emptied detours are dropped. *peak: the most detours the
 * step held against max_det. */
static void relieve(struct loads *L, struct swing_reroute *p, size_t k0, size_t *out, size_t *cap,
		    size_t *cap_legs, size_t max_det, uint32_t longest, size_t *peak)
{
	const struct geo *g = L->g;
	struct leg l[SWING_DETOUR_LEGS];
	int64_t top = (int64_t)swing_step_max(L);
	size_t was = SIZE_MAX;
	uint64_t healthy = 0;

	for (size_t i = k0; i < *out; i++) {
		uint32_t n = detour_legs(g, &p->det[i], l);

		longest = legs_len(l, n) > longest ? legs_len(l, n) : longest;
	}

	*peak = *out;
	for (size_t o = 0; o < g->norbits; o++)
		healthy = L->orbit[o] > healthy ? L->orbit[o] : healthy;
	uint64_t gain = (uint64_t)top - healthy; /* at most */
	if (gain < L->busiest / RELIEF_SHARE)
		return;
	/* its work as what it may gain, against the busiest step's load: a
	 * link down costs every step a third, which its ends' three other
	 * arcs bound, and the rounds would search in vain */
	L->work =
	    gain >= L->busiest ? RELIEF_WORK : (int64_t)((double)RELIEF_WORK * gain / L->busiest);
	for (int round = 0; round < RELIEF_ROUNDS && L->work > 0; round++) {
		int64_t cut = top / RELIEF_STEP, target = top - (cut ? cut : 1);

		if ((int64_t)swing_untouched_max(L) > target)
			break;
		for (size_t i = k0, end = *out; i < end && *out < max_det && L->work > 0; i++) {
			if (!p->det[i].units)
				continue;
			uint32_t n = detour_legs(g, &p->det[i], l);
			relieve_one(L, p, i, l, n, target, longest, out, cap, cap_legs);
		}
		int64_t now = (int64_t)swing_step_max(L);
		size_t over = swing_arcs_over(L, target);
		if (now >= top && over >= was)
			break;
		was = now < top ? SIZE_MAX : over;
		top = now;
	}
	*peak = *out;
	size_t k = k0;
	for (size_t i = k0; i < *out; i++)
		if (p->det[i].units)
			p->det[k++] = p->det[i];
	*out = k;
}

/* The memory limit's refusal at step st: k halves to move after k0 detours. */
int swing_over_limit(uint32_t st, size_t k0, size_t k, uint64_t max_det, struct ofc_error *err)
{
	char need[32], have[32];

	fmt_size(need, sizeof(need), (k0 + k * SWING_DETOUR_PARTS) * sizeof(struct swing_detour));
	fmt_size(have, sizeof(have), max_det * sizeof(struct swing_detour));
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "Swing's detours around the failed links need about %s by step "
			     "%u (%zu transfers re-routed so far), over the memory limit of "
			     "%s",
			     need, st, k0 + k, have);
}

/* One step: its crossing halves taken off their routes, then each put on
 * detours, the heaviest first, in SWING_DETOUR_PARTS parts each on the
 * route least loaded (one detour carrying a whole half doubles the load
 * of the arcs it shares with their own transfers: a link down on
 * torus:8x8 cost +90% so, +33% in twelve parts over three routes). The
 * plan hangs on p's earlier detours only through the memory limit:
 * crossed_peak says the halves crossing and the most detours the step
 * held, past p's earlier ones, where it was tested. */
int swing_plan_step(struct loads *L, struct swing_reroute *p, uint32_t st, const struct rpair *pr,
		    size_t np, struct swing_detour **tmp, size_t *cap_tmp, size_t *cap,
		    size_t *cap_legs, uint64_t max_det, size_t crossed_peak[2],
		    struct ofc_error *err)
{
	const struct geo *g = L->g;
	size_t k0 = p->ndet, k = crossing(g, p, st, pr, np, tmp, cap_tmp, 0), out = k0;
	struct leg l[SWING_DETOUR_LEGS];

	crossed_peak[0] = k;
	crossed_peak[1] = 0;
	L->longest = swing_pairs_hops(g, pr, np);
	if (k0 + k * SWING_DETOUR_PARTS > max_det)
		return swing_over_limit(st, k0, k, max_det, err);
	for (size_t i = 0; i < k; i++) {
		struct leg h = healthy_leg(g, &(*tmp)[i]);

		swing_change_legs(L, &h, 1, -(int64_t)(*tmp)[i].units);
	}
	if (k)
		sort_by_units(*tmp, k);
	L->floor = g->hop_units ? (int64_t)swing_step_max(L) : 0;
	/* Placed one at a time, a half does not see the detours placed
	 * after it: each is then taken off and placed again over all the
	 * others' (PLACINGS). */
	size_t *at = xmalloc((k + 1) * sizeof(size_t));
	struct half_memo *memo = xcalloc(k + 1, sizeof(*memo));
	for (int pass = 0; pass < PLACINGS; pass++) {
		size_t from = out;

		for (size_t i = 0; i < k; i++) {
			size_t start = out;

			for (size_t j = pass ? at[i] : 0; pass && j < at[i + 1]; j++) {
				struct leg l2[SWING_DETOUR_LEGS];
				uint32_t n = detour_legs(g, &p->det[j], l2);

				swing_change_legs(L, l2, n, -(int64_t)p->det[j].units);
			}
			if (place(L, p, st, &(*tmp)[i], cap, &out, cap_legs, &memo[i], err) < 0) {
				free(at);
				free(memo);
				return -1;
			}
			at[i] = start;
		}
		at[k] = out;
		if (pass && k) { /* the second placing in the first's place */
			memmove(p->det + k0, p->det + from, (out - from) * sizeof(*p->det));
			for (size_t i = 0; i <= k; i++)
				at[i] -= from - k0;
			out -= from - k0;
		}
	}
	free(at);
	free(memo);
	relieve(L, p, k0, &out, cap, cap_legs, max_det, swing_pairs_hops(g, pr, np),
		&crossed_peak[1]);
	crossed_peak[1] -= k0;
	uint32_t hops = swing_pairs_hops(g, pr, np);
	for (size_t i = k0; i < out; i++) {
		uint32_t n = detour_legs(g, &p->det[i], l);

		hops = legs_len(l, n) > hops ? legs_len(l, n) : hops;
	}
	if (out > k0)
		sort_by_key(p->det + k0, out - k0);
	p->ndet = out;
	p->step_max[st] = swing_step_max(L);
	p->step_hops[st] = hops;
	return 0;
}

uint64_t swing_step_floor(struct loads *L, uint32_t st, const struct rpair *pr, size_t np,
			  struct swing_detour **tmp, size_t *cap_tmp)
{
	const struct geo *g = L->g;
	size_t k = crossing(g, g->p, st, pr, np, tmp, cap_tmp, 0);

	for (size_t i = 0; i < k; i++) {
		struct leg h = healthy_leg(g, &(*tmp)[i]);

		swing_change_legs(L, &h, 1, -(int64_t)(*tmp)[i].units);
	}
	return swing_step_max(L);
}

void swing_figures_of(const struct geo *g, struct swing_reroute *p,
		      const struct torus_figures *healthy)
{
	double scale = 2.0 * SCHED_ONE * g->n;

	p->f = *healthy;
	p->f.tau_b = p->f.hops = 0;
	for (uint32_t st = 0; st < p->nsteps; st++) {
		p->f.tau_b += g->degree * (p->step_max[st] / scale);
		p->f.hops += p->step_hops[st];
	}
	p->f.steps = p->nsteps;
	p->f.xi = p->f.psi > 0 ? p->f.tau_b / (2 * p->f.psi) : 0;
}

/* ---- workers, for planning (swing_plan.c) and checking ------------------------------ */

struct swing_worker *swing_worker_ready(struct swing_worker *w, const struct geo *g,
					const uint8_t *bad, uint64_t busiest)
{
	if (!w->ready) {
		w->g = *g;
		swing_loads_init(&w->L, &w->g, bad);
		w->L.busiest = busiest;
		w->ready = true;
	}
	w->g.hop_units = g->hop_units; /* a worker serves both plans */
	return w;
}

void swing_worker_free(struct swing_worker *w)
{
	if (w->ready)
		swing_loads_free(&w->L);
	free(w->pr);
	free(w->tmp);
}

/* The steps by cost, the dearest first where one batch plans them all (the
 * long steps start at once and the short ones fill in after), the
 * cheapest first where each batch is priced (a plan that cannot win is
 * given up before its dearest steps); then in order. */
uint32_t *swing_steps_by_cost(const uint64_t *cost, uint32_t n, bool dearest)
{
	uint32_t *o = xmalloc((n + 1) * sizeof(uint32_t));

	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i;

		for (; j > 0 && (dearest ? cost[o[j - 1]] < cost[i] : cost[o[j - 1]] > cost[i]);
		     j--)
			o[j] = o[j - 1];
		o[j] = i;
	}
	return o;
}

/* ---- the check ---------------------------------------------------------------------- */

/* The half x names, carried whole by its routes (units in all): a half
 * of an exchange the program makes, with that half's data. */
static int check_half(const struct geo *g, const struct rpair *pr, size_t np,
		      const struct swing_detour *x, uint64_t units, struct ofc_error *err)
{
	uint32_t h, moved = 0, w = 0;

	if (x->src >= g->n || x->dst >= g->n)
		return ofc_error_set(err, OFC_E_INPUT, "step %u: detour %u -> %u: no such nodes",
				     x->step, x->src, x->dst);
	for (uint32_t j = 0; j < g->D; j++)
		if (coord(g, x->src, j) != coord(g, x->dst, j)) {
			w = j;
			moved++;
		}
	uint32_t rep = sched_group_rep_node(g->G, sched_group_split(g->G, x->src, &h));
	const struct rpair *q = NULL;
	for (size_t j = 0; j < np && !q; j++)
		if (pr[j].rep == rep && sched_group_add(g->G, pr[j].dst, h) == x->dst)
			q = &pr[j];
	if (!q || moved != 1)
		return ofc_error_set(err, OFC_E_INPUT,
				     "step %u: detour %u -> %u: the program sends nothing there "
				     "(the logical schedule must stay the healthy one)",
				     x->step, x->src, x->dst);
	uint32_t d = g->dims[w];
	uint64_t want =
	    x->half <= 1 && half_len(d, q->f, x->half) ? half_units(d, q->f, q->units) : 0;
	if (!want || units != want)
		return ofc_error_set(err, OFC_E_INPUT,
				     "step %u: detours %u -> %u carry %llu units of its %s half, "
				     "the program routes %llu there",
				     x->step, x->src, x->dst, (unsigned long long)units,
				     x->half ? "-" : "+", (unsigned long long)want);
	return 0;
}

/* x's route: a way the model has, over live arcs, from x->src to x->dst. */
static int check_route(const struct loads *L, const struct swing_detour *x, struct ofc_error *err)
{
	const struct geo *g = L->g;
	uint32_t w = 0;

	for (uint32_t j = 0; j < g->D; j++)
		if (coord(g, x->src, j) != coord(g, x->dst, j))
			w = j;
	bool bad = !x->units || x->way > SWING_WAY_PATH;
	if (x->way == SWING_WAY_PATH) {
		bad = bad || !x->nlegs || x->nlegs > SWING_DETOUR_LEGS || x->path > g->p->nlegs ||
		      x->nlegs > g->p->nlegs - x->path;
		for (uint32_t i = 0; !bad && i < x->nlegs; i++) {
			const struct swing_leg *s = &g->p->legs[x->path + i];

			bad = s->dim >= g->D || s->dir > 1 || !s->len || s->len >= g->dims[s->dim];
		}
	} else {
		bad = bad || x->side_dim >= g->D || (x->side && x->side_dim == w) ||
		      (uint32_t)abs(x->side) > g->dims[x->side_dim] / 2;
	}
	if (bad)
		return ofc_error_set(err, OFC_E_INPUT, "step %u: detour %u -> %u: no such route",
				     x->step, x->src, x->dst);
	struct leg l[SWING_DETOUR_LEGS];
	uint32_t n = detour_legs(g, x, l), at = l[0].start;
	bool crosses = false;
	for (uint32_t i = 0; i < n; i++)
		crosses = crosses || swing_leg_failed(L, &l[i]);
	if (!crosses) { /* else the walk below names the arc */
		at = shift(g, l[n - 1].start, l[n - 1].w, l[n - 1].dir, l[n - 1].len);
		n = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < l[i].len; k++) {
			size_t a = arc_id(g, at, l[i].w, l[i].dir);

			if (L->failed[a])
				return ofc_error_set(err, OFC_E_INPUT,
						     "step %u: detour %u -> %u crosses the failed "
						     "arc %u -> %u",
						     x->step, x->src, x->dst, at,
						     hop(g, at, l[i].w, l[i].dir));
			at = hop(g, at, l[i].w, l[i].dir);
		}
	if (at != x->dst)
		return ofc_error_set(err, OFC_E_INPUT, "step %u: detour %u -> %u ends at %u",
				     x->step, x->src, x->dst, at);
	return 0;
}

/* One step: every detour checked, the loads rebuilt from the base and the
 * detours; every failed arc must then carry nothing and the busiest arc
 * be the patch's. */
static int check_step(struct loads *L, const struct swing_reroute *p, uint32_t st,
		      const struct rpair *pr, size_t np, struct ofc_error *err)
{
	const struct geo *g = L->g;
	struct leg l[SWING_DETOUR_LEGS];
	uint32_t hops = swing_pairs_hops(g, pr, np);
	size_t end = p->step_start[st + 1];

	for (size_t i = p->step_start[st], j; i < end; i = j) {
		const struct swing_detour *x = &p->det[i];
		uint64_t units = 0;

		for (j = i; j < end && by_half(&p->det[j], x) == 0; j++) {
			if (p->det[j].step != st ||
			    (j > p->step_start[st] && by_key(&p->det[j - 1], &p->det[j]) >= 0))
				return ofc_error_set(err, OFC_E_INPUT,
						     "step %u: detour %u -> %u out of order or "
						     "twice",
						     st, p->det[j].src, p->det[j].dst);
			if (check_route(L, &p->det[j], err) < 0)
				return -1;
			units += p->det[j].units;
			if (units < p->det[j].units)
				return ofc_error_set(err, OFC_E_INPUT, "step %u: detours overflow",
						     st);
		}
		if (check_half(g, pr, np, x, units, err) < 0)
			return -1;
		struct leg h = healthy_leg(g, x);
		swing_change_legs(L, &h, 1, -(int64_t)units);
		for (size_t k = i; k < j; k++) {
			uint32_t n = detour_legs(g, &p->det[k], l);

			swing_change_legs(L, l, n, (int64_t)p->det[k].units);
			hops = legs_len(l, n) > hops ? legs_len(l, n) : hops;
		}
	}
	size_t neg = swing_negative_arc(L);
	if (neg < g->narcs)
		return ofc_error_set(err, OFC_E_INPUT,
				     "step %u: the patch takes more off arc %zu than its "
				     "transfers carry",
				     st, neg);
	for (size_t i = 0; i < p->nfailed; i++) {
		int64_t v = swing_load_of(L, p->failed[i]);

		if (v)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "step %u: the failed arc %u -> %u still carries %.6g of the vector (a "
			    "transfer crossing it has no detour)",
			    st, p->failed[i] / 2 / g->D,
			    hop(g, p->failed[i] / 2 / g->D, p->failed[i] / 2 % g->D,
				p->failed[i] % 2),
			    (double)v / (2.0 * SCHED_ONE * g->n));
	}
	uint64_t m = swing_step_max(L);
	if (m != p->step_max[st] || hops != p->step_hops[st])
		return ofc_error_set(err, OFC_E_INPUT,
				     "step %u: the busiest arc carries %.9g and the longest route "
				     "is %u hops, the patch says %.9g and %u",
				     st, m / (2.0 * SCHED_ONE * g->n), hops,
				     p->step_max[st] / (2.0 * SCHED_ONE * g->n), p->step_hops[st]);
	return 0;
}

struct check_job {
	const struct geo *g;
	const struct schedule *s;
	const struct swing_reroute *p;
	const uint8_t *bad;
	const uint32_t *order;
	int *rc;
	struct ofc_error *err;
	struct swing_worker *w;
};

static void check_one(void *ctx, size_t i, unsigned worker)
{
	struct check_job *j = ctx;
	uint32_t st = j->order[i];
	struct swing_worker *w = swing_worker_ready(&j->w[worker], j->g, j->bad, 0);
	size_t np = 0;

	j->rc[st] = swing_step_pairs(&w->g, j->s, st, &w->pr, &w->cap_pr, &np, &j->err[st]);
	if (j->rc[st] == 0) {
		swing_loads_step(&w->L, w->pr, np);
		j->rc[st] = check_step(&w->L, j->p, st, w->pr, np, &j->err[st]);
	}
}

/* The steps up to the first whose detours overlap the next's, each on its
 * own loads, on `threads` workers; the first fault in step order. */
static int check_steps(const struct geo *g, const struct schedule *s, const struct swing_reroute *p,
		       const uint8_t *bad, unsigned threads, struct ofc_error *err)
{
	uint32_t n = 0;

	while (n < p->nsteps && p->step_start[n] <= p->step_start[n + 1])
		n++;
	uint64_t *cost = xcalloc(n + 1, sizeof(uint64_t));
	for (uint32_t st = 0; st < n; st++)
		cost[st] = p->step_start[st + 1] - p->step_start[st];
	unsigned nw = parallel_workers(n, 1, threads);
	struct check_job j = {.g = g,
			      .s = s,
			      .p = p,
			      .bad = bad,
			      .order = swing_steps_by_cost(cost, n, true),
			      .rc = xcalloc(n + 1, sizeof(int)),
			      .err = xcalloc(n + 1, sizeof(struct ofc_error)),
			      .w = xcalloc(nw, sizeof(struct swing_worker))};
	int rc = 0;

	parallel_for(n, 1, nw, check_one, &j);
	for (uint32_t st = 0; st < n && rc == 0; st++)
		if (j.rc[st] < 0) {
			*err = j.err[st];
			rc = -1;
		}
	if (rc == 0 && n < p->nsteps)
		rc = ofc_error_set(err, OFC_E_INPUT, "step %u: the patch's steps overlap", n);
	for (unsigned i = 0; i < nw; i++)
		swing_worker_free(&j.w[i]);
	free(j.w);
	free(j.err);
	free(j.rc);
	free((void *)j.order);
	free(cost);
	return rc;
}

int swing_reroute_verify(const struct topo_tree *t, const struct sched_reduced *r,
			 const struct swing_reroute *p, unsigned threads, struct ofc_error *err)
{
	const struct schedule *s = &r->prog;
	struct geo g;
	int rc = 0;

	if (swing_geo_make(&g, t, &r->group, err) < 0)
		return -1;
	g.p = p;
	if (p->nsteps != s->nsteps || p->step_start[p->nsteps] != p->ndet)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the patch has %u steps and %zu detours, the program %u steps",
				     p->nsteps, p->ndet, s->nsteps);
	uint8_t *bad = xcalloc(g.narcs, 1);
	for (size_t i = 0; i < p->nfailed && rc == 0; i++) {
		if (p->failed[i] >= g.narcs || (i && p->failed[i] <= p->failed[i - 1]))
			rc = ofc_error_set(err, OFC_E_INPUT, "failed arc %u: not an arc of %s",
					   p->failed[i], t->spec);
		else
			bad[p->failed[i]] = 1;
	}
	swing_geo_coords(&g);
	if (rc == 0)
		rc = check_steps(&g, s, p, bad, threads, err);
	free(bad);
	free(g.xy);
	if (rc < 0)
		return -1;
	struct swing_reroute q = *p;
	swing_figures_of(&g, &q, &p->f);
	if (q.f.tau_b != p->f.tau_b || q.f.hops != p->f.hops)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the patch's figures (tau_B %.9g, %.0f hops) are not its "
				     "steps' (%.9g, %.0f)",
				     p->f.tau_b, p->f.hops, q.f.tau_b, q.f.hops);
	return 0;
}

uint32_t swing_detour_route(const struct topo_tree *t, const struct swing_reroute *p,
			    const struct swing_detour *x, uint32_t *tails, uint8_t *ports,
			    uint32_t cap)
{
	struct sched_group G;
	struct geo g;
	struct ofc_error err = {0};
	struct leg l[SWING_DETOUR_LEGS];
	uint32_t k = 0;

	sched_group_make(&G, t->params, t->nparams);
	if (swing_geo_make(&g, t, &G, &err) < 0)
		return 0;
	g.p = p;
	uint32_t n = detour_legs(&g, x, l);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t h = 0, v = l[i].start; h < l[i].len; h++) {
			if (k < cap) {
				tails[k] = v;
				ports[k] = (uint8_t)(l[i].w * 2 + l[i].dir);
			}
			k++;
			v = hop(&g, v, l[i].w, l[i].dir);
		}
	return k;
}
