/* The all-to-all MCF's routes from the master's solution: each pair's
 * distinct paths with their weights (the kept trees' paths, interned), and
 * a mirrored master's representatives' routes carried to every source. The
 * lowerings of routes to schedules (steps, paths, single) are alltoall.c's. */
#include "alltoall/mcf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hopbuf {
	uint32_t arc[64 * 1024], step[64 * 1024];
	uint32_t n;
};

static void push_hop(void *ctx, uint32_t arc, uint32_t step)
{
	struct hopbuf *b = ctx;

	b->arc[b->n] = arc;
	b->step[b->n] = step;
	b->n++;
}

/* A fluid class's routes from its trees by interning their paths: a path
 * is (the path to its last arc's tail, that arc), so each tree names the
 * path to every node with one lookup per node, and a pair's distinct paths
 * are its distinct ids, found without walking or comparing them. The
 * polished warm start's ~35 trees per class share most of their paths
 * (genkautz:1024,4 less one arc: 18,600 trees, 3.1 M distinct paths), and
 * walking every tree for every destination, then comparing, took 2.4 s of
 * the re-plan. Routes come out as cg_routes' loop would give them: per
 * destination, each path at its first tree, the weights summed in tree
 * order. */
struct interned {
	uint32_t *pre, *last, *len; /* per path id; id 0 the empty path */
	size_t npaths, cap;
	uint64_t *key; /* open addressing: (pre << 32 | arc) + 1, 0 = empty */
	uint32_t *val;
	size_t cap_key;
};

static size_t intern_slot(const struct interned *p, uint64_t key)
{
	size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (p->cap_key - 1);

	while (p->key[j] && p->key[j] != key)
		j = (j + 1) & (p->cap_key - 1);
	return j;
}

static uint32_t intern_path(struct interned *p, uint32_t pre, uint32_t arc)
{
	uint64_t key = ((uint64_t)pre << 32 | arc) + 1;
	size_t j;

	if (2 * (p->npaths + 1) > p->cap_key) {
		/* Grown as the paths come: they are far fewer than trees x
		 * nodes, the trees sharing their prefixes. */
		uint64_t *ok = p->key;
		uint32_t *ov = p->val;
		size_t ocap = p->cap_key;

		p->cap_key = ocap ? 2 * ocap : 1024;
		p->key = xcalloc(p->cap_key, sizeof(uint64_t));
		p->val = xmalloc(p->cap_key * sizeof(uint32_t));
		for (size_t i = 0; i < ocap; i++)
			if (ok[i]) {
				size_t k = intern_slot(p, ok[i]);

				p->key[k] = ok[i];
				p->val[k] = ov[i];
			}
		free(ok);
		free(ov);
	}
	j = intern_slot(p, key);
	if (p->key[j])
		return p->val[j];
	if (p->npaths + 1 > p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->pre = xreallocarray(p->pre, p->cap, sizeof(uint32_t));
		p->last = xreallocarray(p->last, p->cap, sizeof(uint32_t));
		p->len = xreallocarray(p->len, p->cap, sizeof(uint32_t));
	}
	p->pre[p->npaths] = pre;
	p->last[p->npaths] = arc;
	p->len[p->npaths] = p->len[pre] + 1;
	p->key[j] = key;
	p->val[j] = (uint32_t)p->npaths;
	return (uint32_t)p->npaths++;
}

static int class_routes_fluid(struct cg *c, uint32_t s, const size_t *cols, const double *w,
			      size_t ntr, struct a2a_routes *rt, struct ofc_error *err)
{
	uint32_t n = c->n, src = c->src_node[s];
	uint32_t *pid = xmalloc(ntr * n * sizeof(uint32_t)), *stack = xmalloc(n * sizeof(uint32_t));
	struct interned p = {0};
	int rc = 0;

	p.cap = 1024;
	p.pre = xmalloc(p.cap * sizeof(uint32_t));
	p.last = xmalloc(p.cap * sizeof(uint32_t));
	p.len = xmalloc(p.cap * sizeof(uint32_t));
	p.pre[0] = p.last[0] = p.len[0] = 0;
	p.npaths = 1;
	for (size_t i = 0; i < ntr; i++) {
		const uint32_t *parent = c->col_parent + cols[i] * c->psize;
		uint32_t *id = pid + i * n;

		for (uint32_t v = 0; v < n; v++)
			id[v] = UINT32_MAX;
		id[src] = 0;
		for (uint32_t v = 0; v < n; v++) {
			uint32_t top = 0, u = v;

			/* Not in the tree: no hops (as walk gives). */
			while (id[u] == UINT32_MAX && parent[u] != NO_PARENT) {
				stack[top++] = u;
				u = c->arc_tail[parent[u]];
			}
			if (id[u] == UINT32_MAX)
				id[u] = 0;
			while (top) {
				uint32_t x = stack[--top];

				id[x] = intern_path(&p, id[c->arc_tail[parent[x]]], parent[x]);
			}
		}
	}
	double *acc = xcalloc(p.npaths, sizeof(double));
	uint32_t *seen = xmalloc(p.npaths * sizeof(uint32_t)),
		 *list = xmalloc(ntr * sizeof(uint32_t));
	uint32_t maxlen = 0;

	for (size_t i = 0; i < p.npaths; i++) {
		seen[i] = UINT32_MAX;
		maxlen = p.len[i] > maxlen ? p.len[i] : maxlen;
	}
	if (maxlen > 32 * 1024)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "route too long");
	/* Two passes over the targets: the routes and hops they add, then
	 * the routes, their arcs written in place from the trie (a copy of
	 * every hop, and the arrays' doublings, were a tenth of the paths
	 * lowering on torus:256x256). */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		size_t routes = 0, hops = 0;

		for (uint32_t t = 0; t < n; t++) {
			uint32_t nl = 0;

			if (t == src || !(cg_demand_of(c, src, t) > 0))
				continue;
			for (size_t i = 0; i < ntr; i++) {
				uint32_t id = pid[i * n + t];

				if (seen[id] != t + pass * n) {
					seen[id] = t + pass * n;
					acc[id] = 0;
					list[nl++] = id;
				}
				acc[id] += w[i];
			}
			for (uint32_t j = 0; j < nl; j++) {
				uint32_t id = list[j], len = p.len[id];

				if (!pass) {
					routes++;
					hops += len;
					continue;
				}
				uint32_t *arc = a2a_routes_push(rt, src, t, acc[id], len);
				for (uint32_t q = id, h = len; q; q = p.pre[q])
					arc[--h] = p.last[q];
			}
		}
		if (!pass)
			a2a_routes_reserve(rt, routes, hops);
	}
	free(acc);
	free(seen);
	free(list);
	free(pid);
	free(stack);
	free(p.pre);
	free(p.last);
	free(p.len);
	free(p.key);
	free(p.val);
	return rc;
}

/* Every pair's distinct paths with their weights (identical paths of
 * different trees merged), the weights of a pair summing to 1: from the kept
 * solution, for each class's representative. */
int cg_routes(struct cg *c, struct a2a_routes *rt, struct ofc_error *err)
{
	const double *x = c->sol + c->slots;
	double *sum = xcalloc(c->nsrc, sizeof(double));
	struct hopbuf *b = xmalloc(sizeof(*b));
	uint64_t *phash = NULL; /* the pair's routes' hashes */
	size_t cap_phash = 0;

	/* The solution's columns by class (a warm start's polish leaves tens
	 * of thousands: scanning them all for every pair took most of the
	 * time on genkautz:1024,4). */
	size_t *first = xcalloc((size_t)c->nsrc + 1, sizeof(size_t));
	size_t *by = xmalloc((c->sol_n + 1) * sizeof(size_t));

	rt->n = c->n;
	for (size_t i = 0; i < c->sol_n; i++) {
		sum[c->col_src[c->sol_live[i]]] += x[i];
		first[c->col_src[c->sol_live[i]] + 1]++;
	}
	for (uint32_t s = 0; s < c->nsrc; s++)
		first[s + 1] += first[s];
	size_t *fill = xmalloc(((size_t)c->nsrc + 1) * sizeof(size_t));
	memcpy(fill, first, c->nsrc * sizeof(size_t));
	for (size_t i = 0; i < c->sol_n; i++)
		by[fill[c->col_src[c->sol_live[i]]]++] = i;
	free(fill);
	size_t *cols = xmalloc((c->sol_n + 1) * sizeof(size_t));
	double *cw = xmalloc((c->sol_n + 1) * sizeof(double));
	for (uint32_t s = 0; s < c->nsrc; s++) {
		uint32_t src = c->src_node[s];

		if (c->T == 0) {
			size_t ntr = 0;

			for (size_t j = first[s]; j < first[s + 1]; j++)
				if (x[by[j]] > 1e-12 * sum[s]) {
					cols[ntr] = c->sol_live[by[j]];
					cw[ntr++] = x[by[j]] / sum[s];
				}
			if (class_routes_fluid(c, s, cols, cw, ntr, rt, err) < 0) {
				free(sum), free(b), free(phash), free(first), free(by);
				free(cols), free(cw);
				return -1;
			}
			continue;
		}
		for (uint32_t t = 0; t < c->n; t++) {
			if (t == src || !(cg_demand_of(c, src, t) > 0))
				continue;
			size_t pair0 = rt->nroutes;

			for (size_t j = first[s]; j < first[s + 1]; j++) {
				size_t i = by[j], k = c->sol_live[i];
				double w = x[i];

				if (w <= 1e-12 * sum[s])
					continue;
				b->n = 0;
				cg_walk(c, c->col_parent + k * c->psize, t, push_hop, b);
				if (b->n > ARRAY_SIZE(b->arc) / 2) {
					free(sum), free(b), free(phash), free(first), free(by);
					free(cols), free(cw);
					return ofc_error_set(err, OFC_E_RUNTIME, "route too long");
				}
				/* The walk goes from the destination back. */
				for (uint32_t q = 0; q < b->n / 2; q++) {
					uint32_t a = b->arc[q], st = b->step[q];

					b->arc[q] = b->arc[b->n - 1 - q];
					b->step[q] = b->step[b->n - 1 - q];
					b->arc[b->n - 1 - q] = a;
					b->step[b->n - 1 - q] = st;
				}
				/* Same path as one of this pair's routes so far? (A
				 * hash first: a polished warm start leaves dozens of
				 * trees per source, and most of their paths agree.) */
				bool merged = false;
				uint64_t hh = 0xcbf29ce484222325ull;
				for (uint32_t q = 0; q < b->n; q++)
					hh = (hh ^ ((uint64_t)b->arc[q] << 8 ^ b->step[q])) *
					     0x100000001b3ull;
				GROW(phash, cap_phash, rt->nroutes - pair0 + 1);
				for (size_t r = pair0; r < rt->nroutes && !merged; r++) {
					size_t len = rt->off[r + 1] - rt->off[r];

					merged = phash[r - pair0] == hh && len == b->n &&
						 !memcmp(rt->arc + rt->off[r], b->arc,
							 len * sizeof(uint32_t)) &&
						 !memcmp(rt->step + rt->off[r], b->step,
							 len * sizeof(uint32_t));
					if (merged)
						rt->w[r] += w / sum[s];
				}
				if (!merged) {
					phash[rt->nroutes - pair0] = hh;
					a2a_routes_add(rt, src, t, w / sum[s], b->arc, b->step,
						       b->n);
				}
			}
		}
	}
	free(sum);
	free(b);
	free(phash);
	free(first);
	free(by);
	free(cols);
	free(cw);
	return 0;
}

/* Mirroring works a block of MIRROR_BLOCK sources at a time, each block a
 * route set of its own, joined in source order: the same routes on any
 * number of threads. */
#define MIRROR_BLOCK 16u

struct mirror {
	const struct cg *c;
	const struct a2a_routes *rt;
	const size_t *first; /* routes of (class, t): rt is in class order, then t */
	const uint32_t *inv; /* inv[h * n + h(u)] = u */
	const size_t *cls_routes, *cls_hops; /* per class: its representative's */
	const uint32_t *images;		     /* per node v: elements h with h(o_k) = v */
	struct a2a_routes *part;
};

/* Source v's routes appended to out; arc and phash: the caller's scratch. */
static void mirror_source(const struct mirror *mi, uint32_t v, struct a2a_routes *out,
			  uint32_t **arcp, size_t *cap, uint64_t **phashp, size_t *cap_phash)
{
	const struct cg *c = mi->c;
	const struct a2a_routes *rt = mi->rt;
	const struct graph_group *grp = c->grp;
	uint32_t n = c->n, m = c->g->m, H = grp->order;
	uint32_t k = grp->orbit[v], o = c->src_node[k];
	double stab = H / c->src_weight[k];

	for (uint32_t t = 0; t < n; t++) {
		size_t pair0 = out->nroutes;

		if (t == v)
			continue;
		for (uint32_t h = 0; h < H; h++) {
			const uint32_t *hn = grp->node + (size_t)h * n;
			const uint32_t *ha = grp->arc + (size_t)h * m;
			uint32_t t0 = mi->inv[(size_t)h * n + t];

			if (hn[o] != v)
				continue;
			for (size_t r = mi->first[(size_t)k * n + t0];
			     r < rt->nroutes && rt->src[r] == o && rt->dst[r] == t0; r++) {
				size_t len = rt->off[r + 1] - rt->off[r];
				bool merged = false;
				uint64_t hh = 0xcbf29ce484222325ull;
				/* The images' steps are the route's own (NULL: hop i
				 * at step i, for both). */
				const uint32_t *step = a2a_route_steps(rt, r);
				uint32_t *arc;

				GROW(*arcp, *cap, len + 1);
				arc = *arcp;
				/* One element takes o to v: its images of o's
				 * distinct paths are distinct (most sources of a
				 * degraded graph, whose orbits are pairs). */
				if (stab == 1) {
					for (size_t i = 0; i < len; i++)
						arc[i] = ha[rt->arc[rt->off[r] + i]];
					a2a_routes_add(out, v, t, rt->w[r], arc, step, len);
					continue;
				}
				for (size_t i = 0; i < len; i++) {
					arc[i] = ha[rt->arc[rt->off[r] + i]];
					hh = (hh ^ ((uint64_t)arc[i] << 8 ^
						    (step ? step[i] : (uint32_t)i))) *
					     0x100000001b3ull;
				}
				GROW(*phashp, *cap_phash, out->nroutes - pair0 + 1);
				for (size_t q = pair0; q < out->nroutes && !merged; q++) {
					if ((*phashp)[q - pair0] != hh ||
					    out->off[q + 1] - out->off[q] != len)
						continue;
					merged = !memcmp(out->arc + out->off[q], arc,
							 len * sizeof(uint32_t)) &&
						 (!step || !memcmp(out->step + out->off[q], step,
								   len * sizeof(uint32_t)));
					if (merged)
						out->w[q] += rt->w[r] / stab;
				}
				if (merged)
					continue;
				(*phashp)[out->nroutes - pair0] = hh;
				a2a_routes_add(out, v, t, rt->w[r] / stab, arc, step, len);
			}
		}
	}
}

static void mirror_block(void *ctx, size_t b, unsigned worker)
{
	const struct mirror *mi = ctx;
	uint32_t n = mi->c->n,
		 v1 = (uint32_t)((b + 1) * MIRROR_BLOCK < n ? (b + 1) * MIRROR_BLOCK : n);
	uint32_t *arc = NULL;
	uint64_t *phash = NULL; /* the pair's routes' hashes, as in cg_routes */
	size_t cap = 0, cap_phash = 0, routes = 0, hops = 0;

	(void)worker;
	mi->part[b].n = n;
	/* Room for every image before merging (each element taking o_k to v
	 * moves all of o_k's routes): the part is never grown, each growth a
	 * copy of all it holds. What merging saves is room never written,
	 * pages never touched. */
	for (uint32_t v = (uint32_t)(b * MIRROR_BLOCK); v < v1; v++) {
		uint32_t k = mi->c->grp->orbit[v];

		routes += (size_t)mi->images[v] * mi->cls_routes[k];
		hops += (size_t)mi->images[v] * mi->cls_hops[k];
	}
	a2a_routes_reserve(&mi->part[b], routes, hops);
	for (uint32_t v = (uint32_t)(b * MIRROR_BLOCK); v < v1; v++)
		mirror_source(mi, v, &mi->part[b], &arc, &cap, &phash, &cap_phash);
	free(arc);
	free(phash);
}

/* The representatives' routes mirrored to every source (notes
 * fluid-mcf-mirrored-dw.md 4.3): source v of class k gets, for each group
 * element h with h(o_k) = v, the routes of o_k to h^-1(t) moved by h, with
 * weight 1 / |stabiliser of o_k|. That averages o_k's solution over the
 * whole group, so every arc of an orbit carries the same load: the load the
 * master's orbit row bounds. Identical paths of a pair are merged. */
void cg_mirror_routes(const struct cg *c, struct a2a_routes *rt)
{
	const struct graph_group *grp = c->grp;
	uint32_t n = c->n, H = grp->order;
	size_t nblocks = (n + MIRROR_BLOCK - 1) / MIRROR_BLOCK;
	struct a2a_routes out = {.n = n};
	size_t *first = xmalloc(((size_t)c->nsrc * n + 1) * sizeof(size_t));
	uint32_t *inv = xmalloc((size_t)H * n * sizeof(uint32_t));
	struct a2a_routes *part = xcalloc(nblocks + 1, sizeof(*part));
	size_t *cls_routes = xcalloc(c->nsrc, sizeof(size_t));
	size_t *cls_hops = xcalloc(c->nsrc, sizeof(size_t));
	uint32_t *images = xcalloc(n, sizeof(uint32_t));

	for (size_t i = 0; i <= (size_t)c->nsrc * n; i++)
		first[i] = SIZE_MAX;
	for (size_t r = rt->nroutes; r-- > 0;) {
		uint32_t k = c->grp->orbit[rt->src[r]];

		first[(size_t)k * n + rt->dst[r]] = r;
		cls_routes[k]++;
		cls_hops[k] += rt->off[r + 1] - rt->off[r];
	}
	for (uint32_t h = 0; h < H; h++)
		for (uint32_t u = 0; u < n; u++)
			inv[(size_t)h * n + grp->node[(size_t)h * n + u]] = u;
	for (uint32_t h = 0; h < H; h++)
		for (uint32_t k = 0; k < c->nsrc; k++)
			images[grp->node[(size_t)h * n + c->src_node[k]]]++;
	parallel_for(nblocks, 1, c->threads, mirror_block,
		     &(struct mirror){.c = c,
				      .rt = rt,
				      .first = first,
				      .inv = inv,
				      .cls_routes = cls_routes,
				      .cls_hops = cls_hops,
				      .images = images,
				      .part = part});
	a2a_routes_join(&out, part, nblocks, c->threads);
	free(cls_routes);
	free(cls_hops);
	free(images);
	free(part);
	free(first);
	free(inv);
	a2a_routes_free(rt);
	*rt = out;
}
