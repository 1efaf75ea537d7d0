/* Symmetry groups of a network: from vertex maps (arcs and sets follow),
 * checked element by element, or found by topo's automorphism search on a
 * digraph that encodes the labels (notes Sec. 4.2: an automorphism must
 * keep kinds, costs, bandwidths and capacity sets). */
#include "fluid/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fluid_group_free(struct fluid_group *g)
{
	free(g->vert);
	free(g->arc);
	free(g->set);
	memset(g, 0, sizeof(*g));
}

/* Arcs sorted by (tail, head, id): the k-th parallel arc u -> v maps to the
 * k-th arc h(u) -> h(v). */
/* The first position in order of arcs u -> v (binary search), or narcs. */
static uint32_t arc_lower(const struct fluid_net *n, const uint32_t *order, uint32_t u, uint32_t v)
{
	uint32_t lo = 0, hi = n->narcs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2, a = order[mid];

		if (n->tail[a] < u || (n->tail[a] == u && n->head[a] < v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* qsort has no context argument (and globals are out): sort packed keys. */
struct akey {
	uint64_t key; /* tail << 32 | head */
	uint32_t arc;
};

static int cmp_akey(const void *a, const void *b)
{
	const struct akey *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->arc > y->arc) - (x->arc < y->arc);
}

static uint32_t *sorted_arcs(const struct fluid_net *n)
{
	struct akey *k = xmalloc((n->narcs + 1) * sizeof(*k));
	uint32_t *order = xmalloc((n->narcs + 1) * sizeof(uint32_t));

	for (uint32_t a = 0; a < n->narcs; a++)
		k[a] = (struct akey){(uint64_t)n->tail[a] << 32 | n->head[a], a};
	qsort(k, n->narcs, sizeof(*k), cmp_akey);
	for (uint32_t a = 0; a < n->narcs; a++)
		order[a] = k[a].arc;
	free(k);
	return order;
}

/* A set's signature: its bandwidth and sorted arcs, hashed. */
static uint64_t set_hash(const struct fluid_net *n, const uint32_t *arcs, uint32_t len, double bw)
{
	uint64_t h = 0, bits;

	memcpy(&bits, &bw, sizeof(bits));
	/* Order-free: a sum of mixed arc ids. */
	for (uint32_t i = 0; i < len; i++) {
		uint64_t x = arcs[i] + 0x9e3779b97f4a7c15ull;

		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		h += x ^ (x >> 31);
	}
	(void)n;
	return h ^ (bits * 0x9e3779b97f4a7c15ull) ^ len;
}

void group_from_vertex_maps(const struct fluid_net *n, uint32_t order, const uint32_t *vm,
			    struct fluid_group *g)
{
	uint32_t nv = n->nverts, na = n->narcs, ns = n->nsets;
	uint32_t *sorted = sorted_arcs(n), *pos = xmalloc((na + 1) * sizeof(uint32_t));
	uint64_t *sh = xmalloc((ns + 1) * sizeof(uint64_t));
	uint32_t *img = xmalloc((na + 1) * sizeof(uint32_t));

	memset(g, 0, sizeof(*g));
	g->order = order;
	g->nverts = nv;
	g->narcs = na;
	g->nsets = ns;
	g->vert = xmalloc((size_t)order * nv * sizeof(uint32_t) + 1);
	g->arc = xmalloc((size_t)order * na * sizeof(uint32_t) + 1);
	g->set = xmalloc((size_t)order * ns * sizeof(uint32_t) + 1);
	memcpy(g->vert, vm, (size_t)order * nv * sizeof(uint32_t));
	/* rank of each arc among its parallel arcs */
	for (uint32_t i = 0; i < na; i++) {
		uint32_t a = sorted[i];

		pos[a] = i - arc_lower(n, sorted, n->tail[a], n->head[a]);
	}
	for (uint32_t s = 0; s < ns; s++)
		sh[s] = set_hash(n, n->set_arc + n->set_off[s], n->set_off[s + 1] - n->set_off[s],
				 n->set_bw[s]);
	for (uint32_t i = 0; i < order; i++) {
		const uint32_t *h = vm + (size_t)i * nv;
		uint32_t *am = g->arc + (size_t)i * na, *sm = g->set + (size_t)i * ns;

		for (uint32_t a = 0; a < na; a++) {
			uint32_t u = h[n->tail[a]], v = h[n->head[a]];
			uint32_t at = arc_lower(n, sorted, u, v) + pos[a];

			am[a] = UINT32_MAX;
			if (at < na && n->tail[sorted[at]] == u && n->head[sorted[at]] == v)
				am[a] = sorted[at];
		}
		for (uint32_t s = 0; s < ns; s++) {
			uint32_t len = n->set_off[s + 1] - n->set_off[s];
			bool ok = true;

			for (uint32_t k = 0; k < len && ok; k++) {
				img[k] = am[n->set_arc[n->set_off[s] + k]];
				ok = img[k] != UINT32_MAX;
			}
			uint64_t want = ok ? set_hash(n, img, len, n->set_bw[s]) : 0;

			sm[s] = UINT32_MAX;
			for (uint32_t t = 0; t < ns && ok; t++)
				if (sh[t] == want && n->set_off[t + 1] - n->set_off[t] == len) {
					sm[s] = t;
					break;
				}
		}
	}
	free(sorted);
	free(pos);
	free(sh);
	free(img);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int fluid_group_check(const struct fluid_net *n, const struct fluid_group *g,
		      struct ofc_error *err)
{
	uint32_t nv = n->nverts, na = n->narcs, ns = n->nsets;
	uint8_t *seen = xmalloc(nv + na + ns + 1);
	uint32_t *a1 = NULL, *a2 = NULL;
	int rc = 0;

	if (g->order == 0 || g->nverts != nv || g->narcs != na || g->nsets != ns) {
		free(seen);
		return ofc_error_set(err, OFC_E_INPUT, "the group is for another network");
	}
	for (uint32_t i = 0; i < g->order && rc == 0; i++) {
		const uint32_t *h = g->vert + (size_t)i * nv, *am = g->arc + (size_t)i * na;
		const uint32_t *sm = g->set + (size_t)i * ns;

		memset(seen, 0, nv + na + ns + 1);
		for (uint32_t v = 0; v < nv && rc == 0; v++) {
			if (h[v] >= nv || seen[h[v]]++)
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "group element %u: not a vertex permutation", i);
			else if (n->kind[h[v]] != n->kind[v])
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "group element %u takes '%s' to '%s' of another "
						   "kind",
						   i, fluid_vertex_name(n, v),
						   fluid_vertex_name(n, h[v]));
		}
		for (uint32_t a = 0; a < na && rc == 0; a++) {
			uint32_t b = am[a];

			if (b >= na || seen[nv + b]++ || n->tail[b] != h[n->tail[a]] ||
			    n->head[b] != h[n->head[a]] || n->bw[b] != n->bw[a] ||
			    n->cost[b] != n->cost[a])
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "group element %u does not keep arc %s -> %s "
						   "(ends, bandwidth and cost)",
						   i, fluid_vertex_name(n, n->tail[a]),
						   fluid_vertex_name(n, n->head[a]));
		}
		for (uint32_t s = 0; s < ns && rc == 0; s++) {
			uint32_t t = sm[s], len = n->set_off[s + 1] - n->set_off[s];

			if (t >= ns || seen[nv + na + t]++ || n->set_bw[t] != n->set_bw[s] ||
			    n->set_off[t + 1] - n->set_off[t] != len) {
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "group element %u does not keep capacity set '%s'",
						   i, fluid_set_name(n, s));
				break;
			}
			a1 = xreallocarray(a1, len + 1, sizeof(uint32_t));
			a2 = xreallocarray(a2, len + 1, sizeof(uint32_t));
			for (uint32_t k = 0; k < len; k++) {
				a1[k] = am[n->set_arc[n->set_off[s] + k]];
				a2[k] = n->set_arc[n->set_off[t] + k];
			}
			qsort(a1, len, sizeof(uint32_t), cmp_u32);
			qsort(a2, len, sizeof(uint32_t), cmp_u32);
			if (memcmp(a1, a2, len * sizeof(uint32_t)) != 0)
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "group element %u does not keep capacity set '%s'",
						   i, fluid_set_name(n, s));
		}
	}
	free(a1);
	free(a2);
	free(seen);
	if (rc < 0)
		return rc;
	/* Closure: the mirrored master averages over the listed elements,
	 * which is exact only for a group (notes Sec. 4.3, note 2). */
	uint64_t *hk = xmalloc((size_t)g->order * sizeof(uint64_t));
	uint32_t *comp = xmalloc((nv + 1) * sizeof(uint32_t));

	for (uint32_t i = 0; i < g->order; i++)
		hk[i] = map_hash(g->vert + (size_t)i * nv, nv);
	qsort(hk, g->order, sizeof(uint64_t), cmp_u64);
	for (uint32_t i = 0; i < g->order && rc == 0; i++)
		for (uint32_t j = 0; j < g->order && rc == 0; j++) {
			const uint32_t *hi = g->vert + (size_t)i * nv, *hj = g->vert + (size_t)j * nv;

			for (uint32_t v = 0; v < nv; v++)
				comp[v] = hi[hj[v]];
			uint64_t key = map_hash(comp, nv);

			if (!bsearch(&key, hk, g->order, sizeof(uint64_t), cmp_u64))
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "the listed automorphisms are not a group "
						   "(elements %u and %u compose outside it)",
						   i, j);
		}
	free(hk);
	free(comp);
	return rc;
}

uint64_t map_hash(const uint32_t *m, uint32_t n)
{
	uint64_t h = 0x0fc;

	for (uint32_t i = 0; i < n; i++) {
		h ^= m[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xbf58476d1ce4e5b9ull;
	}
	return h;
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* ---- detection through topo/automorph.c ------------------------------------------
 * The network as a plain digraph whose automorphisms are exactly the
 * network's: a node per vertex, per arc (tail -> arc -> head) and per set
 * (set -> each member arc's node). Labels become self-loops, whose number an
 * automorphism keeps: vertex nodes get 1 + kind (1..16), arc nodes 17 + the
 * rank of their (bandwidth, cost) class, set nodes come after all arc
 * classes with the rank of their bandwidth. */
static uint32_t rank_of(const double *vals, uint32_t nvals, double v)
{
	uint32_t r = 0;

	for (uint32_t i = 0; i < nvals; i++)
		if (vals[i] < v)
			r++;
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Distinct sorted values of v[0..n-1] into out; returns how many. */
static uint32_t distinct(const double *v, uint32_t n, double *out)
{
	uint32_t k = 0;

	memcpy(out, v, n * sizeof(double));
	qsort(out, n, sizeof(double), cmp_double);
	for (uint32_t i = 0; i < n; i++)
		if (k == 0 || out[k - 1] != out[i])
			out[k++] = out[i];
	return k;
}

/* The search's elements, not checked (fluid_group_check's closure test is
 * quadratic in the order: seconds at 2^15 elements). */
static int detect(const struct fluid_net *n, uint32_t max_order, struct fluid_group *g,
		  struct ofc_error *err)
{
	uint32_t nv = n->nverts, na = n->narcs, ns = n->nsets;
	double *bwv = xmalloc((na + 1) * sizeof(double)), *cv = xmalloc((na + 1) * sizeof(double));
	double *sv = xmalloc((ns + 1) * sizeof(double));
	uint32_t nbw = distinct(n->bw, na, bwv), nc = distinct(n->cost, na, cv);
	uint32_t nsb = ns ? distinct(n->set_bw, ns, sv) : 0;
	uint32_t nodes = nv + na + ns, *loops = xmalloc((nodes + 1) * sizeof(uint32_t));
	uint64_t m = 0;

	for (uint32_t v = 0; v < nv; v++)
		loops[v] = 1 + n->kind[v];
	for (uint32_t a = 0; a < na; a++)
		loops[nv + a] = 17 + rank_of(bwv, nbw, n->bw[a]) * nc + rank_of(cv, nc, n->cost[a]);
	for (uint32_t s = 0; s < ns; s++)
		loops[nv + na + s] = 17 + nbw * nc + rank_of(sv, nsb, n->set_bw[s]);
	for (uint32_t i = 0; i < nodes; i++)
		m += loops[i];
	m += 2ull * na + n->set_off[ns];
	if (m > TOPO_MAX_ARCS) {
		free(bwv);
		free(cv);
		free(sv);
		free(loops);
		return ofc_error_set(err, OFC_E_INPUT, "network too large for symmetry detection");
	}
	struct graph gr = {.n = nodes, .m = (uint32_t)m};
	uint32_t *deg = xcalloc(nodes + 1, sizeof(uint32_t));

	for (uint32_t i = 0; i < nodes; i++)
		deg[i] = loops[i];
	for (uint32_t a = 0; a < na; a++) {
		deg[n->tail[a]]++;
		deg[nv + a]++;
	}
	for (uint32_t s = 0; s < ns; s++)
		deg[nv + na + s] += n->set_off[s + 1] - n->set_off[s];
	gr.off = xmalloc((nodes + 1) * sizeof(uint32_t));
	gr.adj = xmalloc((m + 1) * sizeof(uint32_t));
	gr.off[0] = 0;
	for (uint32_t i = 0; i < nodes; i++)
		gr.off[i + 1] = gr.off[i] + deg[i];
	memcpy(deg, gr.off, nodes * sizeof(uint32_t));
	for (uint32_t i = 0; i < nodes; i++)
		for (uint32_t k = 0; k < loops[i]; k++)
			gr.adj[deg[i]++] = i;
	for (uint32_t a = 0; a < na; a++) {
		gr.adj[deg[n->tail[a]]++] = nv + a;
		gr.adj[deg[nv + a]++] = n->head[a];
	}
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t k = n->set_off[s]; k < n->set_off[s + 1]; k++)
			gr.adj[deg[nv + na + s]++] = nv + n->set_arc[k];
	gr.spec = xstrdup("fluid-network");

	struct graph_group gg;
	graph_automorphisms(&gr, max_order ? max_order : 4096, NULL, &gg);
	memset(g, 0, sizeof(*g));
	g->order = gg.order;
	g->nverts = nv;
	g->narcs = na;
	g->nsets = ns;
	g->vert = xmalloc((size_t)gg.order * nv * sizeof(uint32_t) + 1);
	g->arc = xmalloc((size_t)gg.order * na * sizeof(uint32_t) + 1);
	g->set = xmalloc((size_t)gg.order * ns * sizeof(uint32_t) + 1);
	for (uint32_t i = 0; i < gg.order; i++) {
		const uint32_t *h = gg.node + (size_t)i * nodes;

		for (uint32_t v = 0; v < nv; v++)
			g->vert[(size_t)i * nv + v] = h[v];
		for (uint32_t a = 0; a < na; a++)
			g->arc[(size_t)i * na + a] = h[nv + a] - nv;
		for (uint32_t s = 0; s < ns; s++)
			g->set[(size_t)i * ns + s] = h[nv + na + s] - nv - na;
	}
	graph_group_free(&gg);
	free(gr.off);
	free(gr.adj);
	free(gr.spec);
	free(deg);
	free(bwv);
	free(cv);
	free(sv);
	free(loops);
	return 0;
}

int fluid_group_detect(const struct fluid_net *n, uint32_t max_order, struct fluid_group *g,
		       struct ofc_error *err)
{
	if (detect(n, max_order, g, err) < 0)
		return -1;
	int rc = fluid_group_check(n, g, err);

	if (rc < 0)
		fluid_group_free(g);
	return rc;
}

/* ---- server blocks ---------------------------------------------------------------
 * A fabric of N servers built from one template: vertices [0, N * b) are N
 * blocks of b (server s's local vertex i at s * b + i), the rest lie outside
 * (rails, optical switches). Its automorphism group is far too large to list
 * (servers x local swaps in every server), and the first elements of the
 * refinement search fix the first GPUs, which leaves one pricing class per
 * GPU. Mirrored DW wants one class: a group acting regularly on the GPUs, as
 * the analytic group of model W (Z_N x Z_4 x Z_2, notes Sec. 4.2) does.
 * Built here as Z_N (server s -> s + 1) x H, H a subgroup of the automorphisms
 * of one server with what lies outside, applied in every server at once, of
 * order the server's GPUs and acting on them regularly (found greedily from
 * the listed elements). The result is checked element by element; any
 * fabric it does not fit is refused and the caller falls back. */

/* a o b as vertex maps over m points: (a o b)(v) = a(b(v)) */
static void compose(uint32_t *out, const uint32_t *a, const uint32_t *b, uint32_t m)
{
	for (uint32_t v = 0; v < m; v++)
		out[v] = a[b[v]];
}

/* The closure of the elements in el (cnt, each m points) with g, at most
 * want elements, every one but the identity moving every terminal
 * (term, nt). Returns the new count, or 0 when that fails. */
static uint32_t close_with(uint32_t *el, uint32_t cnt, const uint32_t *g, uint32_t m,
			   const uint32_t *term, uint32_t nt, uint32_t want)
{
	uint32_t n = cnt, *tmp;

	for (uint32_t j = 0; j < cnt; j++)
		if (memcmp(el + (size_t)j * m, g, m * sizeof(uint32_t)) == 0)
			return cnt; /* in it already */
	tmp = xmalloc((m + 1) * sizeof(uint32_t));
	memcpy(el + (size_t)n * m, g, m * sizeof(uint32_t));
	n++;
	/* Breadth first: every product of a listed element with a generator
	 * (the old elements and g) until nothing is new. */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; k <= cnt; k++) {
			const uint32_t *gen = k < cnt ? el + (size_t)k * m : g;

			compose(tmp, el + (size_t)i * m, gen, m);
			bool seen = false;

			for (uint32_t j = 0; j < n && !seen; j++)
				seen = memcmp(el + (size_t)j * m, tmp, m * sizeof(uint32_t)) == 0;
			if (seen)
				continue;
			bool identity = true, fixes = false;

			for (uint32_t v = 0; v < m && identity; v++)
				identity = tmp[v] == v;
			for (uint32_t t = 0; t < nt && !identity && !fixes; t++)
				fixes = tmp[term[t]] == term[t];
			if (fixes || n == want) {
				free(tmp);
				return 0;
			}
			memcpy(el + (size_t)n * m, tmp, m * sizeof(uint32_t));
			n++;
		}
	free(tmp);
	return n;
}

int fluid_group_blocks(const struct fluid_net *n, uint32_t nblocks, uint32_t bsize,
		       struct fluid_group *g, struct ofc_error *err)
{
	uint32_t nv = n->nverts, inside = nblocks * bsize, outside, m;
	struct fluid_net s;
	struct fluid_group sg = {0};
	uint32_t *to_s = NULL, *from_s = NULL, *term = NULL, nt = 0;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if (nblocks == 0 || bsize == 0 || inside > nv)
		return ofc_error_set(err, OFC_E_INPUT, "no server blocks");
	outside = nv - inside;
	m = bsize + outside;
	/* One server and what lies outside, as a network of its own. */
	to_s = xmalloc((nv + 1) * sizeof(uint32_t));
	from_s = xmalloc((m + 1) * sizeof(uint32_t));
	fluid_net_init(&s);
	for (uint32_t v = 0; v < nv; v++) {
		to_s[v] = UINT32_MAX;
		if (v < bsize || v >= inside) {
			to_s[v] = v < bsize ? v : bsize + (v - inside);
			from_s[to_s[v]] = v;
			if (fluid_add_vertex(&s, fluid_vertex_name(n, v), n->kind[v], err) < 0)
				goto out;
		}
	}
	uint32_t *amap = xmalloc((n->narcs + 1) * sizeof(uint32_t));

	for (uint32_t a = 0; a < n->narcs; a++) {
		uint32_t t = to_s[n->tail[a]], h = to_s[n->head[a]];

		amap[a] = UINT32_MAX;
		if (t != UINT32_MAX && h != UINT32_MAX) {
			if (fluid_add_arc(&s, t, h, n->bw[a], n->cost[a], err) < 0) {
				free(amap);
				goto out;
			}
			amap[a] = s.narcs - 1;
		}
	}
	for (uint32_t k = 0; k < n->nsets; k++) {
		uint32_t len = n->set_off[k + 1] - n->set_off[k], *arcs = xmalloc((len + 1) * 4);
		bool in = true;

		for (uint32_t j = 0; j < len && in; j++)
			in = (arcs[j] = amap[n->set_arc[n->set_off[k] + j]]) != UINT32_MAX;
		if (in && fluid_add_set(&s, fluid_set_name(n, k), n->set_bw[k], arcs, len, err) < 0)
			in = false, memset(err, 0, sizeof(*err));
		free(arcs);
	}
	free(amap);
	term = xmalloc((bsize + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < bsize; v++)
		if (n->kind[v] & FLUID_TERMINAL)
			term[nt++] = v;
	if (nt == 0) {
		ofc_error_set(err, OFC_E_INPUT, "a server without GPUs");
		goto out;
	}
	/* (unchecked: H is built from products of them and the group
	 * that comes out is checked on the whole fabric) */
	if (detect(&s, 1u << 17, &sg, err) < 0)
		goto out;
	/* H: greedily from the elements that keep the server a server and move
	 * every GPU, in a few orders. */
	uint32_t *el = xmalloc(((size_t)nt + 1) * m * sizeof(uint32_t)), cnt = 0;
	uint32_t *cand = xmalloc((sg.order + 1) * sizeof(uint32_t)), nc = 0;

	for (uint32_t i = 0; i < sg.order; i++) {
		const uint32_t *h = sg.vert + (size_t)i * m;
		bool ok = true;

		for (uint32_t v = 0; v < m && ok; v++)
			ok = (v < bsize) == (h[v] < bsize);
		for (uint32_t t = 0; t < nt && ok; t++)
			ok = h[term[t]] != term[t];
		if (ok)
			cand[nc++] = i;
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	/* No regular subgroup unless the server's GPUs are one orbit. */
	uint8_t *orb = xcalloc(m + 1, 1);
	uint32_t norb = 0;

	for (uint32_t i = 0; i < sg.order; i++)
		norb += !orb[sg.vert[(size_t)i * m + term[0]]]++;
	free(orb);
	for (uint32_t round = 0; round < 16 && cnt != nt && norb >= nt; round++) {
		for (uint32_t v = 0; v < m; v++)
			el[v] = v;
		cnt = 1;
		for (uint32_t j = 0; j < nc && cnt < nt; j++) {
			/* a different order each round: rotate, and skip by a hash */
			uint32_t i = cand[(j + round * 7919u) % nc];
			uint32_t got;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			if (round && (seed >> 61) == 0)
				continue;
			got = close_with(el, cnt, sg.vert + (size_t)i * m, m, term, nt, nt);
			if (got)
				cnt = got;
		}
	}
	free(cand);
	if (cnt != nt) {
		free(el);
		ofc_error_set(err, OFC_E_INPUT, "no subgroup of one server acts on its %u GPUs "
			      "regularly", nt);
		goto out;
	}
	/* Z_N x H on the whole fabric. */
	uint32_t order = nblocks * nt, *vm = xmalloc((size_t)order * nv * sizeof(uint32_t) + 4);

	for (uint32_t sh = 0; sh < nblocks; sh++)
		for (uint32_t k = 0; k < nt; k++) {
			const uint32_t *h = el + (size_t)k * m;
			uint32_t *out = vm + ((size_t)sh * nt + k) * nv;

			for (uint32_t v = 0; v < nv; v++)
				out[v] = v < inside ? ((v / bsize + sh) % nblocks) * bsize +
							  h[v % bsize]
						    : from_s[h[bsize + (v - inside)]];
		}
	free(el);
	group_from_vertex_maps(n, order, vm, g);
	free(vm);
	if (fluid_group_check(n, g, err) < 0) {
		fluid_group_free(g);
		goto out;
	}
	rc = 0;
out:
	fluid_group_free(&sg);
	fluid_net_free(&s);
	free(to_s);
	free(from_s);
	free(term);
	return rc;
}
