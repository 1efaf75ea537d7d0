/* The paper's expansion constructions (Zhao et al., Sec. 5 and App. C):
 * grow a schedule on a small graph into one on its line graph (Def. 2),
 * its degree expansion (Def. 4) or its Cartesian power (Def. 14), with
 * closed-form figures (Thms 1, 11, 12; Cor. 1.2). Products of different
 * graphs have no construction in the paper: they are scheduled by BFB and
 * predicted by Thm 13. The base of every construction is BFB.
 *
 * Node numbering follows topo/ exactly (topo_line: node = arc index;
 * topo_degree_expand: v * n + i; topo_product: first factor fastest), and
 * so do ports, so the constructed schedule runs on the graph the spec
 * builds.
 *
 * Reduce-scatter follows Cor. 3.2: the construction applied to the
 * transposed base gives an allgather on a graph H isomorphic to G^T (phi
 * maps H's nodes to G's); reversed in time and direction it is a
 * reduce-scatter on G. */
#include "bfb/bfb.h"

#include <stdlib.h>
#include <string.h>

struct built {
	struct graph *g;   /* the subtree's graph, as topo_build makes it */
	struct graph *h;   /* transposed builds: the construction graph, H ~ g^T */
	uint32_t *phi;	   /* transposed builds: H node -> g node */
	struct schedule a; /* allgather on g (forward) or on h (transposed) */
	bool have_sched;
	uint32_t steps; /* predicted */
	struct frac tau;
	double tau_value;
	bool exact; /* every formula used so far holds with equality */
	bool bfb;   /* the schedule is a BFB schedule (Thm 10 applies) */
	struct strbuf how;
};

static void built_free(struct built *b)
{
	graph_free(b->g);
	graph_free(b->h);
	free(b->phi);
	if (b->have_sched)
		sched_free(&b->a);
	sb_free(&b->how);
	memset(b, 0, sizeof(*b));
}

bool expand_applies(const struct topo_tree *t)
{
	if (t->op == TOPO_LINE || t->op == TOPO_DEGREE || t->op == TOPO_POWER)
		return true;
	if (t->op == TOPO_PRODUCT || t->op == TOPO_REVERSE)
		return false; /* scheduled as a whole by BFB */
	return false;
}

/* ---- the constructions --------------------------------------------------- */

static void add(struct schedule *s, uint32_t src, uint32_t dst, uint32_t block, uint32_t off,
		uint32_t len, uint32_t lane)
{
	struct xfer x = {.src = (uint16_t)src,
			 .dst = (uint16_t)dst,
			 .block = block,
			 .offset = off,
			 .length = len,
			 .lane = (uint16_t)lane,
			 .flags = xfer_flags(DIR_NONE, XFER_COPY)};

	sched_add(s, &x);
}

/* In-arcs of every node: in_arc[in_off[v] ..] are arc indices ending at v. */
static void in_arcs(const struct graph *g, uint32_t **off, uint32_t **arc)
{
	uint32_t *o = xcalloc((size_t)g->n + 1, sizeof(uint32_t));
	uint32_t *a = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	for (uint32_t i = 0; i < g->m; i++)
		o[g->adj[i] + 1]++;
	for (uint32_t v = 0; v < g->n; v++)
		o[v + 1] += o[v];
	uint32_t *pos = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t));
	memcpy(pos, o, (size_t)g->n * sizeof(uint32_t));
	for (uint32_t i = 0; i < g->m; i++)
		a[pos[g->adj[i]]++] = i;
	free(pos);
	*off = o;
	*arc = a;
}

/* Def. 2: step 1, every node v'v of L(G) sends its shard to all its
 * out-neighbours vu (but itself); then each transfer ((v, C), (u, w), t) of
 * A_G becomes ((v'v, C), (uw, ww'), t + 1) for every in-arc v'v of v and
 * out-arc ww' of w with v'v != ww'. */
/* Past the request's clock? Read every 4,096 calls: a construction adds
 * n^2 transfers and more, seconds at a few thousand nodes. */
static bool late(const struct ofc_clock *clock, uint32_t *tick)
{
	return clock && (++*tick & 4095) == 0 && clock_expired(clock);
}

/* Each returns false, *out partly built, when the clock ran out. */
static bool line_expand(const struct graph *g, const struct schedule *a, struct schedule *out,
			const struct ofc_clock *clock)
{
	uint32_t *ioff, *iarc, tick = 0;
	bool whole = false;
	size_t est = (size_t)g->m * graph_outdeg(g, 0);

	in_arcs(g, &ioff, &iarc);
	for (size_t i = 0; i < a->nxfers; i++) {
		const struct xfer *x = &a->xfers[i];

		est += (size_t)(ioff[x->block + 1] - ioff[x->block]) * graph_outdeg(g, x->dst);
	}
	sched_init(out, SCHED_ALLGATHER, "expansion", g->m);
	sched_reserve(out, est);
	sched_step(out);
	for (uint32_t e = 0; e < g->m; e++) {
		uint32_t v = g->adj[e];

		for (uint32_t f = g->off[v]; f < g->off[v + 1]; f++)
			if (f != e)
				add(out, e, f, e, 0, SCHED_ONE, f - g->off[v]);
	}
	for (uint32_t t = 0; t < a->nsteps; t++) {
		sched_step(out);
		for (uint32_t i = a->step_start[t]; i < a->step_start[t + 1]; i++) {
			const struct xfer *x = &a->xfers[i];
			uint32_t uw = g->off[x->src] + x->lane, w = x->dst, v = x->block;

			if (late(clock, &tick))
				goto out;
			for (uint32_t k = ioff[v]; k < ioff[v + 1]; k++)
				for (uint32_t f = g->off[w]; f < g->off[w + 1]; f++)
					if (iarc[k] != f)
						add(out, uw, f, iarc[k], x->offset, x->length,
						    f - g->off[w]);
		}
	}
	whole = true;
out:
	free(ioff);
	free(iarc);
	return whole;
}

/* Def. 4: each transfer of A_G runs in every copy j of its source and fans
 * out to every copy i of its receiver; one more step delivers u_i's shard
 * to its sibling u_j in nd equal chunks, one over each in-link of u_j
 * (every in-neighbour x_l of u_j holds it, since x != u). */
static bool degree_expand(const struct graph *g, const struct schedule *a, uint32_t n,
			  struct schedule *out, const struct ofc_clock *clock)
{
	uint32_t d = graph_outdeg(g, 0), nd = n * d, tick = 0;
	bool whole = false;
	uint32_t *ioff, *iarc, *tail = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	in_arcs(g, &ioff, &iarc);
	for (uint32_t x = 0; x < g->n; x++)
		for (uint32_t e = g->off[x]; e < g->off[x + 1]; e++)
			tail[e] = x;
	sched_init(out, SCHED_ALLGATHER, "expansion", g->n * n);
	sched_reserve(out, a->nxfers * n * n + (size_t)g->n * n * (n - 1) * nd);
	for (uint32_t t = 0; t < a->nsteps; t++) {
		sched_step(out);
		for (uint32_t k = a->step_start[t]; k < a->step_start[t + 1]; k++) {
			const struct xfer *x = &a->xfers[k];

			if (late(clock, &tick))
				goto out;
			for (uint32_t j = 0; j < n; j++)
				for (uint32_t i = 0; i < n; i++)
					add(out, x->src * n + j, x->dst * n + i, x->block * n + j,
					    x->offset, x->length, x->lane * n + i);
		}
	}
	sched_step(out);
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t j = 0; j < n; j++)
			for (uint32_t i = 0; i < n; i++) {
				if (i == j)
					continue;
				if (late(clock, &tick))
					goto out;
				for (uint32_t k = 0; k < nd; k++) {
					uint32_t q = k / n, l = k % n, arc = iarc[ioff[u] + q];
					uint32_t x = tail[arc];
					uint64_t lo = (uint64_t)k * SCHED_ONE / nd;
					uint64_t hi = (uint64_t)(k + 1) * SCHED_ONE / nd;

					add(out, x * n + l, u * n + j, u * n + i, (uint32_t)lo,
					    (uint32_t)(hi - lo), (arc - g->off[x]) * n + j);
				}
			}
	whole = true;
out:
	free(ioff);
	free(iarc);
	free(tail);
	return whole;
}

/* Def. 14: split every shard into n sub-shards; sub-shard i spreads along
 * dimensions i, i+1, ..., i-1 in turn, each phase running A_G along one
 * dimension with the coordinates already spread (y for the sender, x for
 * the origin) free and the others (z) shared. In every phase the n
 * sub-shards use n different dimensions, so their links are disjoint. */
static bool power_expand(const struct graph *g, const struct schedule *a, uint32_t n,
			 struct schedule *out, const struct ofc_clock *clock)
{
	uint32_t N = g->n, d = graph_outdeg(g, 0), T = a->nsteps, tick = 0;
	uint32_t nodes = 1, pw[17];

	for (uint32_t j = 0; j < n; j++) {
		pw[j] = nodes;
		nodes *= N;
	}
	sched_init(out, SCHED_ALLGATHER, "expansion", nodes);
	for (uint32_t q = 0; q < n; q++)
		for (uint32_t t = 0; t < T; t++) {
			sched_step(out);
			for (uint32_t i = 0; i < n; i++) {
				uint32_t j = (i + q) % n, free_dims[16], nfree = 0, shared[16],
					 nshared = 0;
				uint64_t b0 = (uint64_t)i * SCHED_ONE / n,
					 b1 = (uint64_t)(i + 1) * SCHED_ONE / n;

				for (uint32_t p = 0; p < q; p++)
					free_dims[nfree++] = (i + p) % n;
				for (uint32_t p = q + 1; p < n; p++)
					shared[nshared++] = (i + p) % n;
				/* digits: nfree for the sender, nfree for the origin, nshared */
				uint32_t ndig = 2 * nfree + nshared, dig[48] = {0};
				for (;;) {
					uint32_t sbase = 0, obase = 0;

					if (late(clock, &tick))
						return false;
					for (uint32_t e = 0; e < nfree; e++) {
						sbase += dig[e] * pw[free_dims[e]];
						obase += dig[nfree + e] * pw[free_dims[e]];
					}
					for (uint32_t e = 0; e < nshared; e++) {
						sbase += dig[2 * nfree + e] * pw[shared[e]];
						obase += dig[2 * nfree + e] * pw[shared[e]];
					}
					for (uint32_t k = a->step_start[t];
					     k < a->step_start[t + 1]; k++) {
						const struct xfer *x = &a->xfers[k];
						uint64_t lo =
						    b0 + (x->offset * (b1 - b0) + SCHED_ONE / 2) /
							     SCHED_ONE;
						uint64_t hi =
						    b0 +
						    (((uint64_t)x->offset + x->length) * (b1 - b0) +
						     SCHED_ONE / 2) /
							SCHED_ONE;

						if (hi <= lo)
							continue;
						add(out, sbase + x->src * pw[j],
						    sbase + x->dst * pw[j],
						    obase + x->block * pw[j], (uint32_t)lo,
						    (uint32_t)(hi - lo), j * d + x->lane);
					}
					uint32_t e = 0;
					while (e < ndig && ++dig[e] == N)
						dig[e++] = 0;
					if (e == ndig)
						break;
				}
			}
		}
	return true;
}

/* ---- building a tree --------------------------------------------------------- */

/* Rank of each arc among the parallel arcs with the same tail and head. */
static uint32_t arc_rank(const struct graph *g, uint32_t u, uint32_t arc)
{
	uint32_t r = 0;

	for (uint32_t a = g->off[u]; a < arc; a++)
		r += g->adj[a] == g->adj[arc];
	return r;
}

static uint32_t arc_with_rank(const struct graph *g, uint32_t u, uint32_t head, uint32_t r)
{
	for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
		if (g->adj[a] == head && r-- == 0)
			return a;
	return UINT32_MAX;
}

static int leaf(const struct topo_tree *t, bool transposed, const struct bfb_opts *o, bool sched,
		struct built *b, struct ofc_error *err)
{
	struct bfb_stats st;

	if (topo_build(t->spec, &b->g, err) < 0)
		return -1;
	const struct graph *x = b->g;
	if (transposed) {
		b->h = graph_transpose(b->g);
		b->phi = xmalloc((size_t)b->g->n * sizeof(uint32_t));
		for (uint32_t v = 0; v < b->g->n; v++)
			b->phi[v] = v;
		x = b->h;
	}
	if (bfb_schedule(x, SCHED_ALLGATHER, o, sched ? &b->a : NULL, &st, err) < 0)
		return -1;
	b->have_sched = sched;
	b->steps = st.steps;
	b->tau = st.tau_b;
	b->tau_value = st.tau_b_value;
	b->exact = true;
	b->bfb = o->chunks == 0;
	sb_printf(&b->how, "BFB on %s", t->spec);

	/* Thm 13: a product of factors with BW-optimal BFB schedules is
	 * BW-optimal with T_L the sum of the factors' diameters. */
	if (t->op == TOPO_PRODUCT) {
		uint32_t steps = 0;
		bool all = true;

		for (uint32_t i = 0; i < t->nargs && all; i++) {
			struct graph *f;
			struct bfb_stats fs;

			if (topo_build(t->args[i]->spec, &f, err) < 0)
				return -1;
			if (bfb_schedule(f, SCHED_ALLGATHER, o, NULL, &fs, err) < 0) {
				graph_free(f);
				return -1;
			}
			graph_free(f);
			all = fs.bw_optimal;
			steps += fs.steps;
		}
		if (all) {
			b->steps = steps;
			b->tau = frac_make((int64_t)x->n - 1, x->n);
			b->tau_value = frac_value(b->tau);
			sb_reset(&b->how);
			sb_printf(&b->how, "BFB on %s (Thm 13: factors BW-optimal)", t->spec);
		}
	}
	return 0;
}

static int build(const struct topo_tree *t, bool transposed, const struct bfb_opts *o, bool sched,
		 struct built *b, struct ofc_error *err);

static int build_line(const struct topo_tree *t, bool transposed, const struct bfb_opts *o,
		      bool sched, struct built *b, struct ofc_error *err)
{
	if (build(t->args[0], transposed, o, sched, b, err) < 0)
		return -1;
	for (uint32_t r = 0; r < t->k; r++) {
		struct graph *x = transposed ? b->h : b->g;
		uint32_t N = x->n;
		bool spread = true;

		/* Thm 10: with a BFB base whose nodes all have more than one
		 * out-neighbour, Thm 1 holds with equality. */
		for (uint32_t u = 0; u < x->n && spread; u++) {
			const uint32_t *out = graph_out(x, u);
			bool two = false;

			for (uint32_t i = 1; i < graph_outdeg(x, u); i++)
				two |= out[i] != out[0];
			spread = two;
		}
		if (sched) {
			struct schedule na;

			if (!line_expand(x, &b->a, &na, o->clock)) {
				sched_free(&na);
				return clock_check(o->clock, "generation", err);
			}
			sched_free(&b->a);
			b->a = na;
		}
		if (sched && x->m > SCHED_MAX_NODES)
			return ofc_error_set(err, OFC_E_INPUT,
					     "line graph: %u nodes (schedules have at most %u)",
					     x->m, SCHED_MAX_NODES);
		struct graph *lg = topo_line(b->g, err);
		if (!lg)
			return -1;
		if (transposed) {
			struct graph *lh = topo_line(b->h, err);
			if (!lh) {
				graph_free(lg);
				return -1;
			}
			uint32_t *phi = xmalloc((size_t)lh->n * sizeof(uint32_t));
			for (uint32_t a0 = 0; a0 < b->h->n; a0++)
				for (uint32_t e = b->h->off[a0]; e < b->h->off[a0 + 1]; e++) {
					uint32_t b0 = b->h->adj[e];

					/* arc a0 -> b0 of H is arc phi(b0) -> phi(a0) of g */
					phi[e] = arc_with_rank(b->g, b->phi[b0], b->phi[a0],
							       arc_rank(b->h, a0, e));
				}
			graph_free(b->h);
			free(b->phi);
			b->h = lh;
			b->phi = phi;
		}
		graph_free(b->g);
		b->g = lg;
		b->steps += 1;
		b->tau = frac_add(b->tau, frac_make(1, N));
		b->tau_value += 1.0 / N;
		b->exact = b->exact && b->bfb && spread;
		b->bfb = b->bfb && spread;
	}
	struct strbuf how = STRBUF_INIT;
	if (t->k > 1)
		sb_printf(&how, "line^%u of %s", t->k, b->how.buf);
	else
		sb_printf(&how, "line of %s", b->how.buf);
	sb_free(&b->how);
	b->how = how;
	return 0;
}

static int build_degree(const struct topo_tree *t, bool transposed, const struct bfb_opts *o,
			bool sched, struct built *b, struct ofc_error *err)
{
	uint32_t n = t->k;

	if (build(t->args[0], transposed, o, sched, b, err) < 0)
		return -1;
	struct graph *x = transposed ? b->h : b->g;
	uint32_t N = x->n;
	if (sched && (uint64_t)N * n > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "degree expansion: %llu nodes (schedules have at most %u)",
				     (unsigned long long)N * n, SCHED_MAX_NODES);
	struct graph *dg = topo_degree_expand(b->g, n, err);
	if (!dg)
		return -1;
	if (sched) {
		struct schedule na;

		if (!degree_expand(x, &b->a, n, &na, o->clock)) {
			sched_free(&na);
			graph_free(dg);
			return clock_check(o->clock, "generation", err);
		}
		sched_free(&b->a);
		b->a = na;
	}
	if (transposed) {
		struct graph *dh = topo_degree_expand(b->h, n, err);
		if (!dh) {
			graph_free(dg);
			return -1;
		}
		uint32_t *phi = xmalloc((size_t)dh->n * sizeof(uint32_t));
		for (uint32_t v = 0; v < b->h->n; v++)
			for (uint32_t i = 0; i < n; i++)
				phi[v * n + i] = b->phi[v] * n + i;
		graph_free(b->h);
		free(b->phi);
		b->h = dh;
		b->phi = phi;
	}
	graph_free(b->g);
	b->g = dg;
	/* Thm 11: one more step, and (n-1)/(nN) more bandwidth. */
	b->steps += 1;
	b->tau = frac_add(b->tau, frac_make(n - 1, (int64_t)n * N));
	b->tau_value += (double)(n - 1) / ((double)n * N);
	b->bfb = n == 1 && b->bfb;
	struct strbuf how = STRBUF_INIT;
	sb_printf(&how, "degree expansion x%u of %s", n, b->how.buf);
	sb_free(&b->how);
	b->how = how;
	return 0;
}

static int power_graph(const struct graph *g, uint32_t n, struct graph **out, struct ofc_error *err)
{
	struct graph *x = NULL;

	for (uint32_t i = 1; i < n; i++) {
		struct graph *y = topo_product(x ? x : g, g, err);

		graph_free(x);
		if (!y)
			return -1;
		x = y;
	}
	*out = x;
	return 0;
}

static int build_power(const struct topo_tree *t, bool transposed, const struct bfb_opts *o,
		       bool sched, struct built *b, struct ofc_error *err)
{
	uint32_t n = t->k;

	if (build(t->args[0], transposed, o, sched, b, err) < 0)
		return -1;
	if (n == 1)
		return 0;
	struct graph *x = transposed ? b->h : b->g, *pg, *ph = NULL;
	uint32_t N = x->n;
	if (power_graph(b->g, n, &pg, err) < 0)
		return -1;
	if (sched && pg->n > SCHED_MAX_NODES) {
		graph_free(pg);
		return ofc_error_set(err, OFC_E_INPUT,
				     "power: %u nodes (schedules have at most %u)", pg->n,
				     SCHED_MAX_NODES);
	}
	if (transposed && power_graph(b->h, n, &ph, err) < 0) {
		graph_free(pg);
		return -1;
	}
	if (sched) {
		struct schedule na;

		if (!power_expand(x, &b->a, n, &na, o->clock)) {
			sched_free(&na);
			graph_free(pg);
			graph_free(ph);
			return clock_check(o->clock, "generation", err);
		}
		sched_free(&b->a);
		b->a = na;
	}
	if (transposed) {
		uint32_t *phi = xmalloc((size_t)ph->n * sizeof(uint32_t));

		for (uint32_t v = 0; v < ph->n; v++) {
			uint32_t r = v, img = 0, p = 1;

			for (uint32_t j = 0; j < n; j++, r /= N, p *= N)
				img += b->phi[r % N] * p;
			phi[v] = img;
		}
		graph_free(b->h);
		free(b->phi);
		b->h = ph;
		b->phi = phi;
	}
	graph_free(b->g);
	b->g = pg;
	/* Thm 12: n times the steps, tau_B * N/(N-1) * (N^n - 1)/N^n. */
	uint64_t Nn = 1;
	for (uint32_t j = 0; j < n; j++)
		Nn *= N;
	b->steps *= n;
	b->tau = frac_mul(b->tau, frac_mul(frac_make(N, (int64_t)N - 1),
					   frac_make((int64_t)Nn - 1, (int64_t)Nn)));
	b->tau_value *= (double)N / (N - 1) * ((double)Nn - 1) / (double)Nn;
	b->bfb = false;
	struct strbuf how = STRBUF_INIT;
	sb_printf(&how, "Cartesian power %u of %s", n, b->how.buf);
	sb_free(&b->how);
	b->how = how;
	return 0;
}

static int build(const struct topo_tree *t, bool transposed, const struct bfb_opts *o, bool sched,
		 struct built *b, struct ofc_error *err)
{
	switch (t->op) {
	case TOPO_LINE:
		return build_line(t, transposed, o, sched, b, err);
	case TOPO_DEGREE:
		return build_degree(t, transposed, o, sched, b, err);
	case TOPO_POWER:
		return build_power(t, transposed, o, sched, b, err);
	default:
		return leaf(t, transposed, o, sched, b, err);
	}
}

/* Reverse an allgather on H ~ g^T into a reduce-scatter on g (Thm 3). */
static void reverse_into(const struct built *b, struct schedule *out)
{
	const struct graph *g = b->g, *h = b->h;
	const struct schedule *a = &b->a;
	uint32_t *amap = xmalloc(((size_t)h->m + 1) * sizeof(uint32_t));

	for (uint32_t x = 0; x < h->n; x++)
		for (uint32_t e = h->off[x]; e < h->off[x + 1]; e++)
			amap[e] = arc_with_rank(g, b->phi[h->adj[e]], b->phi[x], arc_rank(h, x, e));
	sched_reserve(out, a->nxfers);
	for (uint32_t so = 0; so < a->nsteps; so++) {
		uint32_t t = a->nsteps - 1 - so;

		sched_step(out);
		for (uint32_t i = a->step_start[t]; i < a->step_start[t + 1]; i++) {
			const struct xfer *x = &a->xfers[i];
			uint32_t ga = amap[h->off[x->src] + x->lane], src = b->phi[x->dst];
			struct xfer r = {.src = (uint16_t)src,
					 .dst = (uint16_t)b->phi[x->src],
					 .block = b->phi[x->block],
					 .offset = x->offset,
					 .length = x->length,
					 .lane = (uint16_t)(ga - g->off[src]),
					 .flags = xfer_flags(DIR_NONE, XFER_REDUCE)};

			sched_add(out, &r);
		}
	}
	free(amap);
}

static void figures_add(struct expand_figures *f, const struct built *b)
{
	f->steps += b->steps;
	f->tau_b = frac_add(f->tau_b, b->tau);
	f->tau_b_value += b->tau_value;
	f->exact = f->exact && b->exact;
	if (!f->how[0])
		snprintf(f->how, sizeof(f->how), "%s", b->how.buf);
}

static int run(const struct topo_tree *t, enum sched_collective c, const struct bfb_opts *o,
	       struct schedule *s, struct expand_figures *f, struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	struct built b = {0};

	if (!o)
		o = &defaults;
	memset(f, 0, sizeof(*f));
	f->tau_b = frac_make(0, 1);
	f->exact = true;
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "expansions schedule allgather, "
				     "reduce-scatter and allreduce");
	if (c != SCHED_ALLGATHER) {
		if (build(t, true, o, s != NULL, &b, err) < 0)
			goto fail;
		if (s) {
			sched_init(s, c, "expansion", b.g->n);
			snprintf(s->topology, sizeof(s->topology), "%s", t->spec);
			reverse_into(&b, s);
		}
		figures_add(f, &b);
		built_free(&b);
	}
	if (c != SCHED_REDUCE_SCATTER) {
		if (build(t, false, o, s != NULL, &b, err) < 0)
			goto fail;
		if (s && c == SCHED_ALLREDUCE) {
			sched_append(s, &b.a);
		} else if (s) {
			*s = b.a;
			b.have_sched = false;
			s->collective = c;
			snprintf(s->topology, sizeof(s->topology), "%s", t->spec);
		}
		figures_add(f, &b);
		built_free(&b);
	}
	return 0;
fail:
	built_free(&b);
	if (s && s->step_start)
		sched_free(s);
	return -1;
}

int expand_predict(const struct topo_tree *t, enum sched_collective c, const struct bfb_opts *o,
		   struct expand_figures *f, struct ofc_error *err)
{
	return run(t, c, o, NULL, f, err);
}

int expand_schedule(const struct topo_tree *t, enum sched_collective c, const struct bfb_opts *o,
		    struct schedule *s, struct expand_figures *f, struct ofc_error *err)
{
	memset(s, 0, sizeof(*s));
	return run(t, c, o, s, f, err);
}
