/* Symmetry groups of a network: from vertex maps (arcs and sets follow),
 * checked element by element, or found by nauty (topo/automorph.c) on a
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
/* The first position in order of arcs u -> v, or of the first arc after
 * them (narcs at the end): a binary search among u's arcs alone, which
 * start at first[u] (first[u + 1] the next tail's), a few where the whole
 * list took 14 steps at 1,024 GPUs for each arc and group element. */
static uint32_t arc_lower(const struct fluid_net *n, const uint32_t *order, const uint32_t *first,
			  uint32_t u, uint32_t v)
{
	uint32_t lo = first[u], hi = first[u + 1];

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (n->head[order[mid]] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first[u]: the position in order (arcs sorted by tail) of u's first arc,
 * for u = 0 .. nverts (first[nverts] = narcs). */
static uint32_t *tail_first(const struct fluid_net *n, const uint32_t *order)
{
	uint32_t *first = xmalloc(((size_t)n->nverts + 2) * sizeof(uint32_t)), i = 0;

	for (uint32_t u = 0; u <= n->nverts; u++) {
		while (i < n->narcs && n->tail[order[i]] < u)
			i++;
		first[u] = i;
	}
	return first;
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

void group_from_vertex_maps(const struct fluid_net *n, uint32_t order, uint32_t *vm,
			    struct fluid_group *g)
{
	uint32_t nv = n->nverts, na = n->narcs, ns = n->nsets;
	uint32_t *sorted = sorted_arcs(n), *pos = xmalloc((na + 1) * sizeof(uint32_t));
	uint32_t *first = tail_first(n, sorted);
	uint64_t *sh = xmalloc((ns + 1) * sizeof(uint64_t));
	uint32_t *img = xmalloc((na + 1) * sizeof(uint32_t));

	memset(g, 0, sizeof(*g));
	g->order = order;
	g->nverts = nv;
	g->narcs = na;
	g->nsets = ns;
	g->vert = vm; /* taken, not copied: 11.6 MB of fresh pages at 1,024 GPUs */
	g->arc = xmalloc((size_t)order * na * sizeof(uint32_t) + 1);
	g->set = xmalloc((size_t)order * ns * sizeof(uint32_t) + 1);
	/* rank of each arc among its parallel arcs */
	for (uint32_t i = 0; i < na; i++) {
		uint32_t a = sorted[i];

		pos[a] = i - arc_lower(n, sorted, first, n->tail[a], n->head[a]);
	}
	for (uint32_t s = 0; s < ns; s++)
		sh[s] = set_hash(n, n->set_arc + n->set_off[s], n->set_off[s + 1] - n->set_off[s],
				 n->set_bw[s]);
	/* the sets by signature, then id (so the first of equal ones is the
	 * one a scan in id order finds) */
	struct akey *hk = xmalloc((ns + 1) * sizeof(*hk));
	uint32_t *byhash = xmalloc((ns + 1) * sizeof(uint32_t));

	for (uint32_t s = 0; s < ns; s++)
		hk[s] = (struct akey){sh[s], s};
	qsort(hk, ns, sizeof(*hk), cmp_akey);
	for (uint32_t s = 0; s < ns; s++)
		byhash[s] = hk[s].arc;
	free(hk);
	for (uint32_t i = 0; i < order; i++) {
		const uint32_t *h = vm + (size_t)i * nv;
		uint32_t *am = g->arc + (size_t)i * na, *sm = g->set + (size_t)i * ns;

		for (uint32_t a = 0; a < na; a++) {
			uint32_t u = h[n->tail[a]], v = h[n->head[a]];
			uint32_t at = arc_lower(n, sorted, first, u, v) + pos[a];

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
			/* the first set of that signature, by binary search (a
			 * scan of every set per set and element was quadratic) */
			uint32_t lo = 0, hi = ns;

			while (ok && lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (sh[byhash[mid]] < want)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (uint32_t k = lo; ok && k < ns && sh[byhash[k]] == want; k++)
				if (n->set_off[byhash[k] + 1] - n->set_off[byhash[k]] == len) {
					sm[s] = byhash[k];
					break;
				}
		}
	}
	free(sorted);
	free(first);
	free(pos);
	free(sh);
	free(byhash);
	free(img);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Ascending: by insertion for the few arcs of a capacity set (qsort's
 * call per set and element was a tenth of the group check at 1,024
 * GPUs), else qsort. */
static void sort_u32(uint32_t *a, uint32_t n)
{
	if (n > 32) {
		qsort(a, n, sizeof(uint32_t), cmp_u32);
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		uint32_t x = a[i], j = i;

		for (; j > 0 && a[j - 1] > x; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* The element whose vertex map is h, by its hash (byh: indices sorted by
 * hk), or UINT32_MAX. */
static uint32_t find_map(const struct fluid_group *g, const struct akey *byh, const uint32_t *h)
{
	uint64_t key = map_hash(h, g->nverts);
	uint32_t lo = 0, hi = g->order, nv = g->nverts;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (byh[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->order && byh[lo].key == key; lo++)
		if (!memcmp(g->vert + (size_t)byh[lo].arc * nv, h, nv * sizeof(uint32_t)))
			return byh[lo].arc;
	return UINT32_MAX;
}

/* A finite list of permutations is a group when it is the group its
 * elements generate: grow a subgroup from the identity, taking the first
 * element not in it yet as a new generator and closing by products, each
 * element times each generator once; a product not in the list means no
 * group. Each generator at least doubles the subgroup: at most log2(order)
 * of them, order log2(order) products, where every pair was order^2
 * (seconds at 2^15 elements, hours at the 2^16 GPUs of a large fabric). */
static int check_closed(const struct fluid_group *g, struct ofc_error *err)
{
	uint32_t nv = g->nverts, order = g->order, nsub = 0, ngen = 0, id = UINT32_MAX;
	struct akey *byh = xmalloc(((size_t)order + 1) * sizeof(*byh));
	uint32_t *sub = xmalloc(((size_t)order + 1) * sizeof(uint32_t));
	uint32_t *gen = xmalloc(((size_t)order + 1) * sizeof(uint32_t));
	uint32_t *comp = xmalloc(((size_t)nv + 1) * sizeof(uint32_t));
	uint8_t *in = xcalloc((size_t)order + 1, 1);
	int rc = 0;

	for (uint32_t i = 0; i < order; i++) {
		const uint32_t *h = g->vert + (size_t)i * nv;
		bool identity = true;

		byh[i] = (struct akey){map_hash(h, nv), i};
		for (uint32_t v = 0; v < nv && identity; v++)
			identity = h[v] == v;
		if (identity && id == UINT32_MAX)
			id = i;
	}
	qsort(byh, order, sizeof(*byh), cmp_akey);
	if (id == UINT32_MAX)
		rc = ofc_error_set(err, OFC_E_INPUT,
				   "the listed automorphisms are not a group (no identity)");
	else
		in[sub[nsub++] = id] = 1;
	for (uint32_t x = 0; x < order && rc == 0; x++) {
		uint32_t before = nsub;

		if (in[x])
			continue;
		gen[ngen++] = x;
		/* old elements times the new generator; new ones times all */
		for (uint32_t p = 0; p < nsub && rc == 0; p++)
			for (uint32_t k = p < before ? ngen - 1 : 0; k < ngen && rc == 0; k++) {
				const uint32_t *a = g->vert + (size_t)gen[k] * nv;
				const uint32_t *b = g->vert + (size_t)sub[p] * nv;
				uint32_t at;

				for (uint32_t v = 0; v < nv; v++)
					comp[v] = a[b[v]];
				if ((at = find_map(g, byh, comp)) == UINT32_MAX)
					rc = ofc_error_set(
					    err, OFC_E_INPUT,
					    "the listed automorphisms are not a group "
					    "(elements %u and %u compose outside it)",
					    gen[k], sub[p]);
				else if (!in[at])
					in[sub[nsub++] = at] = 1;
			}
	}
	free(byh);
	free(sub);
	free(gen);
	free(comp);
	free(in);
	return rc;
}

int fluid_group_check(const struct fluid_net *n, const struct fluid_group *g, struct ofc_error *err)
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
				rc = ofc_error_set(
				    err, OFC_E_INPUT,
				    "group element %u does not keep capacity set '%s'", i,
				    fluid_set_name(n, s));
				break;
			}
			a1 = xreallocarray(a1, len + 1, sizeof(uint32_t));
			a2 = xreallocarray(a2, len + 1, sizeof(uint32_t));
			for (uint32_t k = 0; k < len; k++) {
				a1[k] = am[n->set_arc[n->set_off[s] + k]];
				a2[k] = n->set_arc[n->set_off[t] + k];
			}
			sort_u32(a1, len);
			sort_u32(a2, len);
			if (memcmp(a1, a2, len * sizeof(uint32_t)) != 0)
				rc = ofc_error_set(
				    err, OFC_E_INPUT,
				    "group element %u does not keep capacity set '%s'", i,
				    fluid_set_name(n, s));
		}
	}
	free(a1);
	free(a2);
	free(seen);
	if (rc < 0)
		return rc;
	/* Closure: the mirrored master averages over the listed elements,
	 * which is exact only for a group (notes Sec. 4.3, note 2). */
	rc = check_closed(g, err);
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

/* ---- detection through topo/automorph.c (nauty) ----------------------------------
 * The network as a plain digraph whose automorphisms are exactly the
 * network's: a node per vertex, per arc (tail -> arc -> head) and per set
 * (set -> each member arc's node). Labels become self-loops, whose number an
 * automorphism keeps: vertex nodes get 1 + kind (1..16), plus 16 for a
 * vertex of colour 1 where the caller colours them, arc nodes the next
 * labels by the rank of their (bandwidth, cost) class, set nodes come
 * after all arc classes with the rank of their bandwidth. */

/* The rank of v among the sorted distinct values (binary search: a
 * network of many bandwidths has as many classes). */
static uint32_t rank_of(const double *vals, uint32_t nvals, double v)
{
	uint32_t lo = 0, hi = nvals;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (vals[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

/* The digraph of n (colour: a 0/1 per vertex that automorphisms must
 * keep, or NULL); OFC_E_INPUT when it would exceed topo's arcs. */
int fluid_net_digraph(const struct fluid_net *n, const uint8_t *colour, struct graph *gr,
		      struct ofc_error *err)
{
	uint32_t nv = n->nverts, na = n->narcs, ns = n->nsets;
	double *bwv = xmalloc((na + 1) * sizeof(double)), *cv = xmalloc((na + 1) * sizeof(double));
	double *sv = xmalloc((ns + 1) * sizeof(double));
	uint32_t nbw = distinct(n->bw, na, bwv), nc = distinct(n->cost, na, cv);
	uint32_t nsb = ns ? distinct(n->set_bw, ns, sv) : 0, arc0 = colour ? 33 : 17;
	uint32_t nodes = nv + na + ns, *loops = xmalloc((nodes + 1) * sizeof(uint32_t));
	uint64_t m = 2ull * na + n->set_off[ns];

	/* the largest label first: its classes may overflow 32 bits */
	if (arc0 + (uint64_t)nbw * nc + nsb > TOPO_MAX_ARCS)
		m = UINT64_MAX;
	for (uint32_t v = 0; v < nv && m <= TOPO_MAX_ARCS; v++)
		m += loops[v] = 1 + n->kind[v] + (colour && colour[v] ? 16 : 0);
	for (uint32_t a = 0; a < na && m <= TOPO_MAX_ARCS; a++)
		m += loops[nv + a] =
		    arc0 + rank_of(bwv, nbw, n->bw[a]) * nc + rank_of(cv, nc, n->cost[a]);
	for (uint32_t s = 0; s < ns && m <= TOPO_MAX_ARCS; s++)
		m += loops[nv + na + s] = arc0 + nbw * nc + rank_of(sv, nsb, n->set_bw[s]);
	free(bwv);
	free(cv);
	free(sv);
	if (m > TOPO_MAX_ARCS) {
		free(loops);
		return ofc_error_set(err, OFC_E_INPUT, "network too large for symmetry detection");
	}
	uint32_t *deg = xcalloc(nodes + 1, sizeof(uint32_t));

	memset(gr, 0, sizeof(*gr));
	gr->n = nodes;
	gr->m = (uint32_t)m;
	for (uint32_t i = 0; i < nodes; i++)
		deg[i] = loops[i];
	for (uint32_t a = 0; a < na; a++) {
		deg[n->tail[a]]++;
		deg[nv + a]++;
	}
	for (uint32_t s = 0; s < ns; s++)
		deg[nv + na + s] += n->set_off[s + 1] - n->set_off[s];
	gr->off = xmalloc((nodes + 1) * sizeof(uint32_t));
	gr->adj = xmalloc((m + 1) * sizeof(uint32_t));
	gr->off[0] = 0;
	for (uint32_t i = 0; i < nodes; i++)
		gr->off[i + 1] = gr->off[i] + deg[i];
	memcpy(deg, gr->off, nodes * sizeof(uint32_t));
	for (uint32_t i = 0; i < nodes; i++)
		for (uint32_t k = 0; k < loops[i]; k++)
			gr->adj[deg[i]++] = i;
	for (uint32_t a = 0; a < na; a++) {
		gr->adj[deg[n->tail[a]]++] = nv + a;
		gr->adj[deg[nv + a]++] = n->head[a];
	}
	for (uint32_t s = 0; s < ns; s++)
		for (uint32_t k = n->set_off[s]; k < n->set_off[s + 1]; k++)
			gr->adj[deg[nv + na + s]++] = nv + n->set_arc[k];
	gr->spec = xstrdup("fluid-network");
	free(deg);
	free(loops);
	return 0;
}

void fluid_digraph_free(struct graph *gr)
{
	free(gr->off);
	free(gr->adj);
	free(gr->spec);
}

static uint64_t group_budget(const struct fluid_group_limits *lim)
{
	return lim && lim->max_bytes ? lim->max_bytes : FLUID_GROUP_BYTES;
}

static const struct ofc_clock *group_clock(const struct fluid_group_limits *lim)
{
	return lim ? lim->clock : NULL;
}

/* The search's elements, not checked: at most max_order, and as many as
 * the budget holds, each listed twice (the search's node and arc maps,
 * then the group's vertex, arc and set maps). */
static int detect(const struct fluid_net *n, uint32_t max_order,
		  const struct fluid_group_limits *lim, struct fluid_group *g,
		  struct ofc_error *err)
{
	uint32_t nv = n->nverts, na = n->narcs, ns = n->nsets;
	struct graph gr;
	struct graph_group gg;

	memset(g, 0, sizeof(*g));
	if (fluid_net_digraph(n, NULL, &gr, err) < 0)
		return -1;
	uint64_t per = ((uint64_t)gr.n + gr.m + nv + na + ns) * sizeof(uint32_t);
	uint64_t cap = group_budget(lim) / per;

	if (cap > (max_order ? max_order : 4096))
		cap = max_order ? max_order : 4096;
	graph_automorphisms(&gr, cap ? (uint32_t)cap : 1, group_clock(lim), &gg);
	fluid_digraph_free(&gr);
	if (gg.timed_out && clock_check(group_clock(lim), "symmetry search", err) < 0) {
		graph_group_free(&gg);
		return -1;
	}
	g->order = gg.order;
	g->nverts = nv;
	g->narcs = na;
	g->nsets = ns;
	g->vert = xmalloc((size_t)gg.order * nv * sizeof(uint32_t) + 1);
	g->arc = xmalloc((size_t)gg.order * na * sizeof(uint32_t) + 1);
	g->set = xmalloc((size_t)gg.order * ns * sizeof(uint32_t) + 1);
	for (uint32_t i = 0; i < gg.order; i++) {
		const uint32_t *h = gg.node + (size_t)i * gr.n;

		for (uint32_t v = 0; v < nv; v++)
			g->vert[(size_t)i * nv + v] = h[v];
		for (uint32_t a = 0; a < na; a++)
			g->arc[(size_t)i * na + a] = h[nv + a] - nv;
		for (uint32_t s = 0; s < ns; s++)
			g->set[(size_t)i * ns + s] = h[nv + na + s] - nv - na;
	}
	graph_group_free(&gg);
	return 0;
}

int fluid_group_detect(const struct fluid_net *n, uint32_t max_order,
		       const struct fluid_group_limits *lim, struct fluid_group *g,
		       struct ofc_error *err)
{
	if (detect(n, max_order, lim, g, err) < 0)
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
 * (servers x local swaps in every server), and a capped listing of it
 * keeps the elements that fix the first GPUs, which leaves one pricing
 * class per GPU. Mirrored DW wants one class: a group acting regularly on the GPUs, as
 * the analytic group of model W (Z_N x Z_4 x Z_2, notes Sec. 4.2) does.
 * Built here as Z_N (server s -> s + 1) x H, H a subgroup of the automorphisms
 * of one server with what lies outside, applied in every server at once, of
 * order the server's GPUs and acting on them regularly. The result is
 * checked element by element; any fabric it does not fit is refused and the
 * caller falls back.
 *
 * H is looked for among one element per action on the GPUs, found from
 * nauty's generators: the group itself can be huge for no use
 * (20 interchangeable switches in a server are S_20, 2.4e18 elements, all
 * fixing the GPUs), and its listing, capped at 2^17 elements of 464 words,
 * took 14 s and 490 MB to find H of one element. The actions are at most
 * GPUs! and in practice few (model W: 384). */

/* a o b as vertex maps over m points: (a o b)(v) = a(b(v)) */
static void compose(uint32_t *out, const uint32_t *a, const uint32_t *b, uint32_t m)
{
	for (uint32_t v = 0; v < m; v++)
		out[v] = a[b[v]];
}

/* The greedy search for H: a budget of compositions, past which it gives up
 * (each failed candidate costs up to GPUs^2 of them). */
#define BLOCKS_MAX_PRODUCTS (1u << 24)
/* ... and at most this many actions on the GPUs are listed. */
#define BLOCKS_MAX_ACTIONS (1u << 16)

/* The closure of the elements in el (cnt, each m points) with g, at most
 * want elements, every one but the identity moving every terminal
 * (term, nt). Returns the new count, or 0 when that fails (or *budget of
 * compositions runs out). */
static uint32_t close_with(uint32_t *el, uint32_t cnt, const uint32_t *g, uint32_t m,
			   const uint32_t *term, uint32_t nt, uint32_t want, uint64_t *budget)
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

			if (*budget == 0) {
				free(tmp);
				return 0;
			}
			--*budget;
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

/* One server and what lies outside, as a network of its own (s: vertices
 * [0, bsize) the server's, then the outside's in order; from_s[v] is the
 * fabric's vertex of s's v). */
static int one_server(const struct fluid_net *n, uint32_t inside, uint32_t bsize,
		      struct fluid_net *s, uint32_t *from_s, struct ofc_error *err)
{
	uint32_t nv = n->nverts, *to_s = xmalloc((nv + 1) * sizeof(uint32_t));
	uint32_t *amap = xmalloc((n->narcs + 1) * sizeof(uint32_t));
	int rc = -1;

	fluid_net_init(s);
	for (uint32_t v = 0; v < nv; v++) {
		to_s[v] = UINT32_MAX;
		if (v < bsize || v >= inside) {
			to_s[v] = v < bsize ? v : bsize + (v - inside);
			from_s[to_s[v]] = v;
			if (fluid_add_vertex(s, fluid_vertex_name(n, v), n->kind[v], err) < 0)
				goto out;
		}
	}
	for (uint32_t a = 0; a < n->narcs; a++) {
		uint32_t t = to_s[n->tail[a]], h = to_s[n->head[a]];

		amap[a] = UINT32_MAX;
		if (t != UINT32_MAX && h != UINT32_MAX) {
			if (fluid_add_arc(s, t, h, n->bw[a], n->cost[a], err) < 0)
				goto out;
			amap[a] = s->narcs - 1;
		}
	}
	for (uint32_t k = 0; k < n->nsets; k++) {
		uint32_t len = n->set_off[k + 1] - n->set_off[k], *arcs = xmalloc((len + 1) * 4);
		bool in = true;

		for (uint32_t j = 0; j < len && in; j++)
			in = (arcs[j] = amap[n->set_arc[n->set_off[k] + j]]) != UINT32_MAX;
		if (in && fluid_add_set(s, fluid_set_name(n, k), n->set_bw[k], arcs, len, err) < 0)
			memset(err, 0, sizeof(*err));
		free(arcs);
	}
	rc = 0;
out:
	free(to_s);
	free(amap);
	return rc;
}

/* One element of the group generated by gens (ngen maps of m points) per
 * action on the terminals (term, nt), breadth first from the identity, so
 * each is a shortest product of generators; at most max of them, into
 * *out (caller frees). Returns how many, or 0 past the deadline. */
static uint32_t gpu_actions(const uint32_t *gens, uint32_t ngen, uint32_t m, const uint32_t *term,
			    uint32_t nt, uint32_t max, const struct ofc_clock *clock,
			    uint32_t **out)
{
	uint32_t cap = 64, cnt = 1, nslot = 128;
	uint32_t *el = xmalloc((size_t)cap * m * sizeof(uint32_t) + 4);
	uint64_t *key = xmalloc(cap * sizeof(uint64_t));
	uint32_t *slot = xcalloc(nslot, sizeof(uint32_t)), *act = xmalloc((nt + 1) * 4);
	uint64_t products = 0;

	for (uint32_t v = 0; v < m; v++)
		el[v] = v;
	for (uint32_t t = 0; t < nt; t++)
		act[t] = term[t];
	key[0] = map_hash(act, nt);
	slot[key[0] & (nslot - 1)] = 1;
	for (uint32_t i = 0; i < cnt && cnt < max; i++)
		for (uint32_t k = 0; k < ngen && cnt < max; k++) {
			const uint32_t *x = gens + (size_t)k * m, *e = el + (size_t)i * m;
			bool seen = false;
			uint32_t j;

			if (++products % 256 == 0 && clock_expired(clock)) {
				cnt = 0;
				goto out;
			}
			for (uint32_t t = 0; t < nt; t++)
				act[t] = x[e[term[t]]];
			uint64_t h = map_hash(act, nt);

			for (j = h & (nslot - 1); slot[j] && !seen; j = (j + 1) & (nslot - 1)) {
				const uint32_t *o = el + (size_t)(slot[j] - 1) * m;

				seen = key[slot[j] - 1] == h;
				for (uint32_t t = 0; t < nt && seen; t++)
					seen = o[term[t]] == act[t];
			}
			if (seen)
				continue;
			if (cnt == cap) {
				cap *= 2;
				el = xreallocarray(el, cap, (size_t)m * sizeof(uint32_t));
				key = xreallocarray(key, cap, sizeof(uint64_t));
				e = el + (size_t)i * m; /* moved */
			}
			compose(el + (size_t)cnt * m, x, e, m);
			key[cnt] = h;
			slot[j] = ++cnt;
			if (cnt * 2 > nslot) {
				nslot *= 2;
				free(slot);
				slot = xcalloc(nslot, sizeof(uint32_t));
				for (uint32_t q = 0; q < cnt; q++) {
					for (j = key[q] & (nslot - 1); slot[j];
					     j = (j + 1) & (nslot - 1))
						;
					slot[j] = q + 1;
				}
			}
		}
out:
	free(key);
	free(slot);
	free(act);
	*out = el;
	return cnt;
}

/* H: a subgroup of the group gens generate, acting on the terminals
 * regularly, greedily from the actions that move every terminal, in a few
 * orders; into el (nt elements of m points). Returns its order (nt when
 * found), 0 past the deadline. */
static uint32_t regular_subgroup(const uint32_t *acts, uint32_t nact, uint32_t m,
				 const uint32_t *term, uint32_t nt, const struct ofc_clock *clock,
				 uint32_t *el)
{
	uint32_t *cand = xmalloc((nact + 1) * sizeof(uint32_t)), nc = 0, cnt = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull, budget = BLOCKS_MAX_PRODUCTS;

	for (uint32_t i = 0; i < nact; i++) {
		const uint32_t *h = acts + (size_t)i * m;
		bool ok = true;

		for (uint32_t t = 0; t < nt && ok; t++)
			ok = h[term[t]] != term[t];
		if (ok)
			cand[nc++] = i;
	}
	for (uint32_t round = 0; round < 16 && cnt != nt && budget; round++) {
		for (uint32_t v = 0; v < m; v++)
			el[v] = v;
		cnt = 1;
		for (uint32_t j = 0; j < nc && cnt < nt && budget; j++) {
			/* a different order each round: rotate, and skip by a hash */
			uint32_t i = cand[(j + round * 7919u) % nc];
			uint32_t got;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			if (round && (seed >> 61) == 0)
				continue;
			if (clock_expired(clock)) {
				free(cand);
				return 0;
			}
			got = close_with(el, cnt, acts + (size_t)i * m, m, term, nt, nt, &budget);
			if (got)
				cnt = got;
		}
	}
	free(cand);
	return cnt;
}

int fluid_group_blocks(const struct fluid_net *n, uint32_t nblocks, uint32_t bsize,
		       const struct fluid_group_limits *lim, struct fluid_group *g,
		       struct ofc_error *err)
{
	const struct ofc_clock *clock = group_clock(lim);
	uint32_t nv = n->nverts, inside = nblocks * bsize, outside, m;
	struct fluid_net s;
	struct graph gr = {0};
	struct graph_group gg = {0};
	uint32_t *from_s = NULL, *term = NULL, nt = 0, *gens = NULL, *acts = NULL, *el = NULL;
	uint8_t *colour = NULL;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if (nblocks == 0 || bsize == 0 || inside > nv || inside / bsize != nblocks)
		return ofc_error_set(err, OFC_E_INPUT, "no server blocks");
	outside = nv - inside;
	m = bsize + outside;
	from_s = xmalloc((m + 1) * sizeof(uint32_t));
	if (one_server(n, inside, bsize, &s, from_s, err) < 0)
		goto out;
	term = xmalloc((bsize + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v < bsize; v++)
		if (n->kind[v] & FLUID_TERMINAL)
			term[nt++] = v;
	if (nt == 0) {
		ofc_error_set(err, OFC_E_INPUT, "a server without GPUs");
		goto out;
	}
	/* Aut(s) keeping the server a server (colour 1 outside): only those
	 * apply in every server at once. Its generators alone, no listing,
	 * and only along the GPUs: the stabiliser of every GPU (those 20
	 * switches) acts on no GPU. */
	colour = xcalloc(m + 1, 1);
	memset(colour + bsize, 1, outside);
	if (fluid_net_digraph(&s, colour, &gr, err) < 0)
		goto out;
	graph_automorphism_gens(&gr, term, nt, clock, &gg);
	if (gg.timed_out && clock_check(clock, "symmetry search", err) < 0)
		goto out;
	gens = xmalloc(((size_t)gg.ngens * m + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < gg.ngens; k++)
		memcpy(gens + (size_t)k * m, gg.gen_node + (size_t)k * gr.n, m * sizeof(uint32_t));
	/* No regular subgroup unless the server's GPUs are one orbit. */
	uint8_t *orb = xcalloc(m + 1, 1);
	uint32_t *queue = xmalloc((m + 1) * sizeof(uint32_t)), norb = 1;

	orb[term[0]] = 1;
	queue[0] = term[0];
	for (uint32_t q = 0; q < norb; q++)
		for (uint32_t k = 0; k < gg.ngens; k++) {
			uint32_t v = gens[(size_t)k * m + queue[q]];

			if (!orb[v]) {
				orb[v] = 1;
				queue[norb++] = v;
			}
		}
	free(orb);
	free(queue);
	uint32_t nact = 0, cnt = 0;
	uint64_t max_act = group_budget(lim) / ((uint64_t)m * sizeof(uint32_t) + 16);

	if (max_act > BLOCKS_MAX_ACTIONS)
		max_act = BLOCKS_MAX_ACTIONS;
	/* The actions nearest the identity first (breadth first), more only
	 * when H is not among them: only NVLink's server is S_8 on its GPUs,
	 * 40,320 actions, and a regular subgroup lies among the first
	 * hundreds (listing them all was most of the group's 22 ms). */
	el = xmalloc(((size_t)nt + 1) * m * sizeof(uint32_t));
	for (uint64_t want = 64 * (uint64_t)nt; norb >= nt && cnt != nt; want *= 8) {
		if (want > max_act)
			want = max_act;
		free(acts);
		nact = gpu_actions(gens, gg.ngens, m, term, nt, (uint32_t)want, clock, &acts);
		cnt = nact ? regular_subgroup(acts, nact, m, term, nt, clock, el) : 0;
		if (nact < want || want == max_act)
			break; /* every action seen, or as many as allowed */
	}
	if (clock_check(clock, "symmetry search", err) < 0)
		goto out;
	if (cnt != nt) {
		ofc_error_set(err, OFC_E_INPUT,
			      "no subgroup of one server acts on its %u GPUs regularly", nt);
		goto out;
	}
	/* Z_N x H on the whole fabric: order N x GPUs, each element listed as
	 * vertex, arc and set maps, estimated before it is built. */
	uint64_t order = (uint64_t)nblocks * nt;
	uint64_t need = order * ((uint64_t)nv * 2 + n->narcs + n->nsets) * sizeof(uint32_t);

	if (order > UINT32_MAX || need > group_budget(lim)) {
		char need_s[32], max_s[32];

		fmt_size(need_s, sizeof(need_s), need);
		fmt_size(max_s, sizeof(max_s), group_budget(lim));
		ofc_error_set(err, OFC_E_RUNTIME,
			      "the servers' group (%u x %u elements) needs about %s, over the %s "
			      "a symmetry search may take",
			      nblocks, nt, need_s, max_s);
		goto out;
	}
	uint32_t *vm = xmalloc((size_t)order * nv * sizeof(uint32_t) + 4);

	for (uint32_t sh = 0; sh < nblocks; sh++)
		for (uint32_t k = 0; k < nt; k++) {
			const uint32_t *h = el + (size_t)k * m;
			uint32_t *o = vm + ((size_t)sh * nt + k) * nv;

			for (uint32_t v = 0; v < nv; v++)
				o[v] = v < inside
					   ? ((v / bsize + sh) % nblocks) * bsize + h[v % bsize]
					   : from_s[h[bsize + (v - inside)]];
		}
	group_from_vertex_maps(n, (uint32_t)order, vm, g);
	if (fluid_group_check(n, g, err) < 0) {
		fluid_group_free(g);
		goto out;
	}
	g->nblocks = nblocks;
	g->bsize = bsize;
	rc = 0;
out:
	graph_group_free(&gg);
	fluid_digraph_free(&gr);
	fluid_net_free(&s);
	free(colour);
	free(from_s);
	free(term);
	free(gens);
	free(acts);
	free(el);
	return rc;
}
