/* Honest trees (notes Sec. 4.3, note 5: integral pricing).
 *
 * The cut LP (pricing.c) is LP 5.1's relaxation of "a tree": (3.12)
 * balances usage at a switch, not data, so an optimal w may feed a switch
 * with usage that carries nothing (an arc out of a vertex that holds no data
 * yet) and let it send two copies out (notes Sec. 2.1: usage
 * under-estimated). Columns of the master are therefore built as actual
 * trees in G^T: from the nodes that hold the origin's data (the origin, and
 * every vertex that can copy once data reached it, waiting for free where it
 * can store), the cheapest path under the prices to the destination that is
 * cheapest to reach, repeatedly (the shortest-path heuristic for Steiner
 * arborescences, on the DAG G^T). A path is one copy of the data: it may
 * cross switches (each crossing paid), and every vertex that can copy on it
 * holds the data from then on. A path never enters a vertex that already
 * holds the data, so every vertex receives it once (reversed, every input is
 * folded once).
 *
 * The shortest paths are kept from one path to the next: a path changes the
 * sources and the vertices closed to arcs only at its own vertices (and the
 * busy nodes it leaves), so only the nodes downstream of those whose value
 * changed are computed again. A node's value is computed by pulling its
 * in-arcs in the order a layer-by-layer push relaxes them (tails in vertex
 * order, a tail's arcs in out_arc order, its hold-over after them), so ties
 * within the tolerance fall exactly as in a full pass; tests/unit's
 * test_fluid_honest holds the trees to a plain full-pass reference. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

struct honest {
	struct pricer *pr;
	const struct texp *x;
	const double *chat, *disc;
	uint32_t *since;  /* nv: data at v from layer */
	uint8_t *can_src; /* nv: a vertex that holds the data sends it on */
	/* nodes (layer, vertex) of vertices that store but cannot copy where
	 * a path already is: the reverse of a second path there at the same
	 * layer would hold two partial sums of one part at once (a reduction's
	 * memory keeps one per part); at other layers the first has left
	 * before the second arrives */
	uint8_t *busy;
	uint32_t *hops, *arr; /* nn: transfers on the way, arrival at the vertex */
	/* in-arcs of each vertex (physical) in push order: tails ascending, a
	 * tail's arcs in out_arc order; hold_at: where the hold-over falls */
	uint32_t *in_off, *in_arc, *hold_at;
	/* nodes to compute again, a list per layer (at most nv each) */
	uint8_t *dirty;
	uint32_t *queue, *nq;
};

static void honest_mark(struct honest *s, uint32_t t, uint32_t v)
{
	uint32_t nv = s->x->nv, y = t * nv + v;

	if (s->dirty[y])
		return;
	s->dirty[y] = 1;
	s->queue[(size_t)t * nv + s->nq[t]++] = y;
}

/* Every node of vertex v to compute again (its source or closed state). */
static void honest_mark_vertex(struct honest *s, uint32_t v)
{
	for (uint32_t t = 0; t <= s->x->T; t++)
		honest_mark(s, t, v);
}

static void honest_in_arcs(struct honest *s)
{
	const struct texp *x = s->x;
	const uint32_t *head = x->net->head;
	uint32_t nv = x->nv, ne = x->ne;
	uint32_t *fill = xmalloc((nv + 1) * sizeof(uint32_t));

	s->in_off = xcalloc(nv + 2, sizeof(uint32_t));
	s->in_arc = xmalloc((ne + 1) * sizeof(uint32_t));
	s->hold_at = xmalloc((nv + 1) * sizeof(uint32_t));
	for (uint32_t e = 0; e < ne; e++)
		s->in_off[head[e] + 1]++;
	for (uint32_t v = 0; v < nv; v++)
		s->in_off[v + 1] += s->in_off[v];
	memcpy(fill, s->in_off, nv * sizeof(uint32_t));
	for (uint32_t v = 0; v < nv; v++) {
		for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++) {
			uint32_t e = x->out_arc[k];

			s->in_arc[fill[head[e]]++] = e;
		}
		s->hold_at[v] = fill[v]; /* after v's own arcs into v */
	}
	free(fill);
}

/* Node (t, h) computed from its in-arcs as a full pass would leave it
 * (cheapest, then fewest transfers, then earliest arrival: data that
 * arrives early can be relayed); whether it changed. Never into a vertex
 * that holds the data nor a busy node. */
static bool honest_node(struct honest *s, uint32_t t, uint32_t h)
{
	const struct texp *x = s->x;
	const uint32_t *tail = x->net->tail;
	uint32_t nv = x->nv, y = t * nv + h, sv = s->since[h];
	double *dist = s->pr->dist, D = INFINITY;
	uint32_t P = UINT32_MAX, H = UINT32_MAX, A = UINT32_MAX;

	if (sv != UINT32_MAX && s->can_src[h] &&
	    (sv == t || (sv < t && x->hold_of[h] != UINT32_MAX))) {
		D = 0;
		H = 0;
		A = sv;
	} else if (t > 0 && !s->busy[y]) {
		uint32_t base = (t - 1) * nv, k = s->in_off[h], end = s->in_off[h + 1];
		bool hold = x->hold_of[h] != UINT32_MAX;

		if (sv != UINT32_MAX)
			k = end = s->hold_at[h]; /* the hold-over alone */
		for (;; k++) {
			double d;
			uint32_t u, hu, ar, p;

			if (hold && k == s->hold_at[h]) {
				hold = false;
				k--; /* this k again after */
				u = base + h;
				if (isinf(dist[u]))
					continue;
				d = dist[u] + 0.0;
				hu = s->hops[u];
				ar = s->arr[u];
				p = tx_hold(x, h, t - 1);
			} else {
				if (k >= end)
					break;
				uint32_t e = s->in_arc[k], a = (t - 1) * x->ne + e;

				u = base + tail[e];
				if (isinf(dist[u]))
					continue;
				d = dist[u] + (s->disc ? s->chat[e] * s->disc[a] : s->chat[e]);
				hu = s->hops[u] + 1;
				ar = t;
				p = a;
			}
			if (d < D - 1e-15 || (d <= D + 1e-15 && (hu < H || (hu == H && ar < A)))) {
				D = d;
				P = p;
				H = hu;
				A = ar;
			}
		}
	}
	if (isinf(D) && isinf(dist[y]))
		return false;
	if (D == dist[y] && P == s->pr->pred[y] && H == s->hops[y] && A == s->arr[y])
		return false;
	dist[y] = D;
	s->pr->pred[y] = P;
	s->hops[y] = H;
	s->arr[y] = A;
	return true;
}

/* The nodes marked and those downstream whose value changes computed
 * again, layer by layer: a node's own values are read once all of its
 * in-arcs' tails are final (no arc leads into its layer). */
static void honest_update(struct honest *s)
{
	const struct texp *x = s->x;
	uint32_t nv = x->nv, T = x->T;

	for (uint32_t t = 0; t <= T; t++) {
		for (uint32_t i = 0; i < s->nq[t]; i++) {
			uint32_t y = s->queue[(size_t)t * nv + i], v = y - t * nv;

			s->dirty[y] = 0;
			if (!honest_node(s, t, v) || t == T)
				continue;
			for (uint32_t k = x->out_off[v]; k < x->out_off[v + 1]; k++)
				honest_mark(s, t + 1, x->net->head[x->out_arc[k]]);
			if (x->hold_of[v] != UINT32_MAX)
				honest_mark(s, t + 1, v);
		}
		s->nq[t] = 0;
	}
}

/* The cheapest destination not reached yet (UINT32_MAX: none can be),
 * then the one of fewest transfers, then of earliest arrival. */
static uint32_t honest_nearest(const struct honest *s)
{
	const struct pricer *pr = s->pr;
	uint32_t nv = s->x->nv, T = s->x->T, best = UINT32_MAX;
	double bd = INFINITY;

	for (uint32_t j = 0; j < pr->ndest; j++) {
		uint32_t d = pr->dest[j], y = T * nv + d;

		if (s->since[d] != UINT32_MAX || isinf(pr->dist[y]))
			continue;
		if (pr->dist[y] < bd - 1e-15 || (pr->dist[y] <= bd + 1e-15 && best != UINT32_MAX &&
						 (s->hops[y] < s->hops[T * nv + best] ||
						  (s->hops[y] == s->hops[T * nv + best] &&
						   s->arr[y] < s->arr[T * nv + best])))) {
			bd = pr->dist[y];
			best = d;
		}
	}
	return best;
}

/* The path to node y traced back to a source: its arcs into w and their
 * prices into *value; the path's vertices get the data (since), and a
 * vertex that stores but cannot copy is busy at that layer; the nodes
 * whose state this changes are marked. */
static void honest_trace(struct honest *s, uint32_t y, double *w, double *value)
{
	const struct problem *p = s->pr->p;
	const struct texp *x = s->x;
	uint32_t nv = x->nv;

	while (s->pr->pred[y] != UINT32_MAX) {
		uint32_t a = s->pr->pred[y], tl = tx_tail(x, a), v = y % nv, t = y / nv;

		if ((p->net->kind[v] & FLUID_CAN_STORE) && !(p->net->kind[v] & FLUID_CAN_COPY) &&
		    p->conserve[v] && !s->busy[y]) {
			s->busy[y] = 1;
			honest_mark(s, t, v);
		}
		if (!tx_is_hold(x, a)) {
			w[a] += 1;
			*value += s->chat[tx_phys(x, a)];
			if (s->since[v] == UINT32_MAX || t < s->since[v])
				if ((p->net->kind[v] & FLUID_CAN_COPY) || !p->conserve[v]) {
					s->since[v] = t;
					honest_mark_vertex(s, v);
				}
		} else if (p->conserve[v]) {
			w[a] += 1; /* a hold at a vertex that cannot copy is usage */
		}
		y = tl;
	}
}

static void honest_init(struct honest *s, struct pricer *pr, const double *chat, const double *disc)
{
	const struct problem *p = pr->p;
	const struct texp *x = pr->x;
	uint32_t nn = tx_nnodes(x), nv = x->nv, o = pr->origin;

	memset(s, 0, sizeof(*s));
	s->pr = pr;
	s->x = x;
	s->chat = chat;
	s->disc = disc;
	s->since = xmalloc((nv + 1) * sizeof(uint32_t));
	s->can_src = xmalloc(nv + 1);
	s->busy = xcalloc((size_t)nn + 1, 1);
	s->hops = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));
	s->arr = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));
	s->dirty = xcalloc((size_t)nn + 1, 1);
	s->queue = xmalloc(((size_t)nn + 1) * sizeof(uint32_t));
	s->nq = xcalloc(x->T + 2, sizeof(uint32_t));
	honest_in_arcs(s);
	for (uint32_t v = 0; v < nv; v++) {
		s->can_src[v] = (p->net->kind[v] & FLUID_CAN_COPY) || v == o || !p->conserve[v];
		s->since[v] = UINT32_MAX;
	}
	/* no sources: nothing reachable; the origin's data then changes that */
	for (uint32_t i = 0; i < nn; i++)
		pr->dist[i] = INFINITY;
	s->since[o] = 0;
	honest_mark_vertex(s, o);
}

static void honest_free(struct honest *s)
{
	free(s->since);
	free(s->can_src);
	free(s->busy);
	free(s->hops);
	free(s->arr);
	free(s->dirty);
	free(s->queue);
	free(s->nq);
	free(s->in_off);
	free(s->in_arc);
	free(s->hold_at);
}

void pricer_honest(struct pricer *pr, const double *chat, const double *disc, double *w,
		   double *value)
{
	struct honest s;
	uint32_t left = pr->ndest;

	memset(w, 0, (size_t)tx_narcs(pr->x) * sizeof(double));
	*value = 0;
	honest_init(&s, pr, chat, disc);
	while (left) {
		honest_update(&s);
		uint32_t best = honest_nearest(&s);

		if (best == UINT32_MAX) {
			/* every way left runs through vertices that hold the data
			 * too late: no tree of this kind (the column is refused) */
			*value = INFINITY;
			break;
		}
		honest_trace(&s, pr->x->T * pr->x->nv + best, w, value);
		left = 0;
		for (uint32_t j = 0; j < pr->ndest; j++)
			left += s.since[pr->dest[j]] == UINT32_MAX;
	}
	honest_free(&s);
}
