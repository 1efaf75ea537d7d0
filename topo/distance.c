/* Degrees, connectivity, diameter and all-pairs distances. */
#include "topo/topo.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

uint32_t moore_diameter(uint64_t n, uint32_t d)
{
	uint64_t reach = 1, layer = 1;
	uint32_t k = 0;

	if (n <= 1)
		return 0;
	if (d == 0)
		return UINT32_MAX;
	if (d == 1)
		return (uint32_t)(n - 1);
	/* 1 + d + ... + d^k >= n */
	while (reach < n) {
		layer *= d;
		reach += layer;
		k++;
	}
	return k;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* ---- bit-parallel BFS ----------------------------------------------------
 * 256 sources at a time: each node keeps a 256-bit set of the sources that
 * reached it. One level is one pass over the in-arcs: a node's new bits are
 * the OR of its in-neighbours' frontier bits, minus the bits it has seen.
 * The work per level is 4 words per arc, whatever the frontier size. */

#define BFS_WORDS 4
#define BFS_BATCH (64 * BFS_WORDS)

/* The bits in pairs of words: one SSE2 operation on x86-64 where two ORs
 * were. */
typedef uint64_t ecc_bits __attribute__((vector_size(16)));
#define ECC_PAIRS (BFS_WORDS / 2)

/* One level of the search, np pairs of words a node (a
 * constant where it is inlined, so its loops unroll): nx the new bits,
 * any their union; whether there were any. */
static inline __attribute__((always_inline)) bool ecc_level(const struct graph *t, uint32_t np,
							    const ecc_bits *fr, ecc_bits *seen,
							    ecc_bits *nx, ecc_bits *any)
{
	ecc_bits some = {0, 0};

	for (uint32_t w = 0; w < np; w++)
		any[w] = some;
	for (uint32_t v = 0; v < t->n; v++) {
		ecc_bits acc[ECC_PAIRS] = {{0, 0}}, *sv = seen + (size_t)v * np;

		for (uint32_t a = t->off[v]; a < t->off[v + 1]; a++) {
			const ecc_bits *f = fr + (size_t)t->adj[a] * np;

			for (uint32_t w = 0; w < np; w++)
				acc[w] |= f[w];
		}
		for (uint32_t w = 0; w < np; w++) {
			acc[w] &= ~sv[w];
			sv[w] |= acc[w];
			nx[(size_t)v * np + w] = acc[w];
			any[w] |= acc[w];
		}
	}
	for (uint32_t w = 0; w < np; w++)
		some |= any[w];
	return (some[0] | some[1]) != 0;
}

/* One batch (topo_eccentricities', topo_facts'): sources src[0 .. ns), np = ns / 128
 * rounded up pairs of words a node; seen, fr, nx: n * np pairs each. */
static void ecc_batch(const struct graph *t, const uint32_t *src, uint32_t ns, uint32_t *ecc,
		      ecc_bits *seen, ecc_bits *fr, ecc_bits *nx)
{
	uint32_t n = t->n, np = (ns + 127) / 128, level = 0;
	ecc_bits all[ECC_PAIRS], any[ECC_PAIRS];

	memset(seen, 0, (size_t)n * np * sizeof(ecc_bits));
	memset(fr, 0, (size_t)n * np * sizeof(ecc_bits));
	for (uint32_t i = 0; i < ns; i++) {
		seen[(size_t)src[i] * np + i / 128][i / 64 % 2] |= 1ull << (i % 64);
		fr[(size_t)src[i] * np + i / 128][i / 64 % 2] |= 1ull << (i % 64);
		ecc[i] = 0;
	}
	while (np == 2 ? ecc_level(t, 2, fr, seen, nx, any) : ecc_level(t, 1, fr, seen, nx, any)) {
		level++;
		for (uint32_t w = 0; w < 2 * np; w++)
			for (uint64_t x = any[w / 2][w % 2]; x; x &= x - 1)
				ecc[64 * w + (uint32_t)__builtin_ctzll(x)] = level;
		ecc_bits *tmp = fr;
		fr = nx;
		nx = tmp;
	}
	for (uint32_t w = 0; w < np; w++)
		all[w] = ~(ecc_bits){0, 0};
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t w = 0; w < np; w++)
			all[w] &= seen[(size_t)v * np + w];
	for (uint32_t i = 0; i < ns; i++)
		if (!(all[i / 128][i / 64 % 2] >> (i % 64) & 1))
			ecc[i] = UINT32_MAX;
}

struct bfs_ctx {
	const struct graph *t; /* transpose: pull along in-arcs */
	uint32_t nbatches;
	ecc_bits **buf; /* per worker: seen, frontier, next (n * ECC_PAIRS each) */
	_Atomic uint32_t ecc_max;
	atomic_bool disconnected;
};

/* topo_facts' sources b * BFS_BATCH on: their largest eccentricity, and
 * whether one misses a node. */
static void bfs_batch(void *arg, size_t b, unsigned worker)
{
	struct bfs_ctx *c = arg;
	uint32_t n = c->t->n, s0 = (uint32_t)b * BFS_BATCH;
	uint32_t ns = n - s0 < BFS_BATCH ? n - s0 : BFS_BATCH, np = (ns + 127) / 128;
	uint32_t src[BFS_BATCH] = {0}, ecc[BFS_BATCH], level = 0;
	ecc_bits *seen = c->buf[worker];

	for (uint32_t i = 0; i < ns; i++)
		src[i] = s0 + i;
	ecc_batch(c->t, src, ns, ecc, seen, seen + (size_t)n * np, seen + (size_t)2 * n * np);
	for (uint32_t i = 0; i < ns; i++) {
		if (ecc[i] == UINT32_MAX)
			atomic_store(&c->disconnected, true);
		else if (ecc[i] > level)
			level = ecc[i];
	}
	uint32_t cur = atomic_load(&c->ecc_max);
	while (level > cur && !atomic_compare_exchange_weak(&c->ecc_max, &cur, level))
		;
}

uint32_t topo_eccentricity(const struct graph *g, uint32_t s, uint32_t *dist, uint32_t *queue,
			   uint32_t *far_node)
{
	uint32_t head = 0, tail = 0, ecc = 0;

	memset(dist, 0xff, (size_t)g->n * sizeof(uint32_t));
	dist[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		uint32_t u = queue[head++];

		ecc = dist[u];
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (dist[g->adj[a]] == UINT32_MAX) {
				dist[g->adj[a]] = dist[u] + 1;
				queue[tail++] = g->adj[a];
			}
	}
	if (far_node)
		*far_node = queue[tail - 1];
	return tail == g->n ? ecc : UINT32_MAX;
}

void topo_eccentricities(const struct graph *t, const uint32_t *sources, uint32_t k, uint32_t *ecc)
{
	size_t pairs = (size_t)t->n * (k < BFS_BATCH ? (k + 127) / 128 : ECC_PAIRS);
	ecc_bits *buf = xmalloc((3 * pairs + 1) * sizeof(ecc_bits));

	for (uint32_t s0 = 0; s0 < k; s0 += BFS_BATCH)
		ecc_batch(t, sources + s0, k - s0 < BFS_BATCH ? k - s0 : BFS_BATCH, ecc + s0, buf,
			  buf + pairs, buf + 2 * pairs);
	free(buf);
}

/* topo_eccentricity with buffers of its own. */
static uint32_t eccentricity(const struct graph *g, uint32_t s)
{
	uint32_t *dist = xmalloc((size_t)g->n * sizeof(uint32_t));
	uint32_t *queue = xmalloc((size_t)g->n * sizeof(uint32_t));
	uint32_t ecc = topo_eccentricity(g, s, dist, queue, NULL);

	free(dist);
	free(queue);
	return ecc;
}

void topo_facts(const struct graph *g, struct topo_facts *f, unsigned threads)
{
	struct graph *t = graph_transpose(g);
	uint32_t n = g->n;

	memset(f, 0, sizeof(*f));
	f->nodes = n;
	f->arcs = g->m;
	f->min_out = f->min_in = UINT32_MAX;
	f->symmetric = true;

	uint32_t *a = xmalloc((size_t)(g->m ? g->m : 1) * sizeof(uint32_t));
	uint32_t *b = xmalloc((size_t)(g->m ? g->m : 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++) {
		uint32_t dout = graph_outdeg(g, u), din = graph_outdeg(t, u);

		f->min_out = dout < f->min_out ? dout : f->min_out;
		f->max_out = dout > f->max_out ? dout : f->max_out;
		f->min_in = din < f->min_in ? din : f->min_in;
		f->max_in = din > f->max_in ? din : f->max_in;
		memcpy(a, graph_out(g, u), dout * sizeof(uint32_t));
		qsort(a, dout, sizeof(uint32_t), cmp_u32);
		for (uint32_t i = 0; i < dout; i++) {
			if (a[i] == u)
				f->self_loops++;
			if (i && a[i] == a[i - 1])
				f->parallel_arcs++;
		}
		/* Symmetric iff every node's out-multiset equals its in-multiset. */
		if (f->symmetric) {
			if (din != dout) {
				f->symmetric = false;
			} else {
				memcpy(b, graph_out(t, u), din * sizeof(uint32_t));
				qsort(b, din, sizeof(uint32_t), cmp_u32);
				if (memcmp(a, b, din * sizeof(uint32_t)) != 0)
					f->symmetric = false;
			}
		}
	}
	free(a);
	free(b);
	if (n == 0)
		f->min_out = f->min_in = 0;
	f->regular = f->min_out == f->max_out && f->min_in == f->max_in && f->min_in == f->min_out;
	f->degree = f->regular ? f->min_out : f->max_out;
	f->moore_diameter = moore_diameter(n, f->degree);

	if (g->vertex_transitive || n == 1) {
		uint32_t e = eccentricity(g, 0);

		f->strongly_connected = e != UINT32_MAX;
		f->diameter = f->strongly_connected ? e : 0;
		f->diameter_known = true;
	} else if (n > TOPO_MAX_APSP_NODES) {
		/* Strongly connected iff node 0 reaches all and all reach node 0. */
		f->strongly_connected =
		    eccentricity(g, 0) != UINT32_MAX && eccentricity(t, 0) != UINT32_MAX;
		f->diameter_known = false;
	} else {
		struct bfs_ctx c = {.t = t, .nbatches = (n + BFS_BATCH - 1) / BFS_BATCH};

		if (threads == 0)
			threads = ofc_cpu_count();
		if (threads > c.nbatches)
			threads = c.nbatches;
		c.buf = xcalloc(threads, sizeof(ecc_bits *));
		for (unsigned w = 0; w < threads; w++)
			c.buf[w] = xmalloc((size_t)n * ECC_PAIRS * 3 * sizeof(ecc_bits));
		atomic_init(&c.ecc_max, 0);
		atomic_init(&c.disconnected, false);
		parallel_for(c.nbatches, 1, threads, bfs_batch, &c);
		for (unsigned w = 0; w < threads; w++)
			free(c.buf[w]);
		free(c.buf);
		f->strongly_connected = !atomic_load(&c.disconnected);
		f->diameter = f->strongly_connected ? atomic_load(&c.ecc_max) : 0;
		f->diameter_known = true;
	}
	graph_free(t);
}

/* Kosaraju, iteratively: nodes in the order their depth-first search on g
 * finishes, then components as the searches on the transpose from the
 * last finished reach them. */
uint32_t topo_components(const struct graph *g, uint32_t *comp)
{
	uint32_t n = g->n, nord = 0, ncomp = 0;
	uint32_t *order = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *stack = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *next = xmalloc(((size_t)n + 1) * sizeof(uint32_t)); /* arc to try */
	struct graph *t = graph_transpose(g);

	for (uint32_t u = 0; u < n; u++)
		comp[u] = UINT32_MAX, next[u] = UINT32_MAX;
	for (uint32_t s = 0; s < n; s++) {
		uint32_t top = 0;

		if (next[s] != UINT32_MAX)
			continue;
		next[s] = g->off[s];
		stack[top++] = s;
		while (top) {
			uint32_t u = stack[top - 1];

			if (next[u] < g->off[u + 1]) {
				uint32_t v = g->adj[next[u]++];

				if (next[v] == UINT32_MAX) {
					next[v] = g->off[v];
					stack[top++] = v;
				}
			} else {
				order[nord++] = u;
				top--;
			}
		}
	}
	for (uint32_t i = n; i-- > 0;) {
		uint32_t s = order[i], top = 0;

		if (comp[s] != UINT32_MAX)
			continue;
		comp[s] = ncomp;
		stack[top++] = s;
		while (top) {
			uint32_t u = stack[--top];

			for (uint32_t a = t->off[u]; a < t->off[u + 1]; a++)
				if (comp[t->adj[a]] == UINT32_MAX) {
					comp[t->adj[a]] = ncomp;
					stack[top++] = t->adj[a];
				}
		}
		ncomp++;
	}
	graph_free(t);
	free(order);
	free(stack);
	free(next);
	return ncomp;
}

struct dist_ctx {
	const struct graph *g;
	uint16_t *dist;
	uint32_t **queue;
};

static void dist_one(void *arg, size_t s, unsigned worker)
{
	struct dist_ctx *c = arg;
	const struct graph *g = c->g;
	uint16_t *d = c->dist + s * g->n;
	uint32_t *q = c->queue[worker], head = 0, tail = 0;

	for (uint32_t v = 0; v < g->n; v++)
		d[v] = TOPO_UNREACHABLE;
	d[s] = 0;
	q[tail++] = (uint32_t)s;
	while (head < tail) {
		uint32_t u = q[head++];
		uint16_t du = d[u];

		if (du + 1 >= TOPO_UNREACHABLE)
			continue;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (d[g->adj[a]] == TOPO_UNREACHABLE) {
				d[g->adj[a]] = (uint16_t)(du + 1);
				q[tail++] = g->adj[a];
			}
	}
}

uint16_t *topo_distances(const struct graph *g, unsigned threads, struct ofc_error *err)
{
	struct dist_ctx c = {.g = g};
	uint64_t cells = (uint64_t)g->n * g->n;

	if (cells > (1ull << 30))
		return ofc_error_set(err, OFC_E_INPUT,
				     "all-pairs distances for %u nodes need %llu MiB; limit 2048",
				     g->n, (unsigned long long)(cells * 2 >> 20)),
		       NULL;
	if (threads == 0)
		threads = ofc_cpu_count();
	c.dist = xmalloc(cells * sizeof(uint16_t) + 1);
	c.queue = xcalloc(threads, sizeof(uint32_t *));
	for (unsigned w = 0; w < threads; w++)
		c.queue[w] = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t));
	parallel_for(g->n, 16, threads, dist_one, &c);
	for (unsigned w = 0; w < threads; w++)
		free(c.queue[w]);
	free(c.queue);
	return c.dist;
}
