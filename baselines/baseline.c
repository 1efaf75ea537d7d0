/* Classic schedules on direct-connect topologies, for comparison with BFB
 * through the same verifier and cost model (Zhao et al. Sec. 8 and App. I):
 *
 *  ring        one-way ring along a Hamiltonian cycle of the topology
 *              (a torus with an even side: its reflected Gray code, which
 *              baseline_reduced needs; else found by search): N-1 steps,
 *              one port per node busy;
 *  bidir-ring  the same cycle both ways, half of every shard each way
 *              (needs the reverse arcs);
 *  recursive   recursive doubling (allgather) and halving (reduce-scatter),
 *              Rabenseifner for allreduce, N a power of two. A partner that
 *              is not a neighbour is reached store-and-forward along a
 *              shortest path (one hop per step); partial sums cannot be
 *              relayed in this model (the relay would overwrite its own),
 *              so reductions need every partner to be a neighbour;
 *  torus-rings the traditional torus schedule: a two-way ring per
 *              dimension, dimensions in turn, each sub-shard i starting at
 *              dimension i (Sack & Gropp): sum (a_j - 1) steps.
 *
 * Reduce-scatter is the reversed allgather where the topology is symmetric
 * (Thm 3; a symmetric graph is its own transpose), else built directly. */
#include "baselines/baselines.h"

#include <stdlib.h>
#include <string.h>

#define HAMILTON_BUDGET 4000000u

static void add(struct schedule *s, uint32_t src, uint32_t dst, uint32_t block, uint64_t lo,
		uint64_t hi, uint32_t lane, enum xfer_op op)
{
	struct xfer x = {.src = (uint16_t)src,
			 .dst = (uint16_t)dst,
			 .block = block,
			 .offset = (uint32_t)lo,
			 .length = (uint32_t)(hi - lo),
			 .lane = (uint16_t)lane,
			 .flags = xfer_flags(DIR_NONE, op)};

	sched_add(s, &x);
}

static uint32_t port_to(const struct graph *g, uint32_t u, uint32_t v)
{
	for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
		if (g->adj[a] == v)
			return a - g->off[u];
	return UINT32_MAX;
}

static bool has_arc(const struct graph *g, uint32_t u, uint32_t v)
{
	return port_to(g, u, v) != UINT32_MAX;
}

/* ---- Hamiltonian cycles ------------------------------------------------------ */

/* Depth-first search with Warnsdorff's rule (fewest onward choices first);
 * neighbours of the start that can close the cycle are saved for last.
 * `both` restricts to arcs whose reverse exists. */
static int hamilton(const struct graph *g, bool both, uint32_t *cycle, struct ofc_error *err)
{
	uint32_t n = g->n, d = 1;
	uint8_t *seen = xcalloc(n, 1), *closes = xcalloc(n, 1);
	uint32_t *cand;
	uint32_t *ncand = xcalloc(n, sizeof(uint32_t)), *next = xcalloc(n, sizeof(uint32_t));
	uint64_t budget = HAMILTON_BUDGET;
	uint32_t depth = 0;
	int rc = -1;

	/* Candidate slots per depth: the most arcs any node has (node 0's
	 * degree is not every node's on an irregular or degraded graph). */
	for (uint32_t v = 0; v < n; v++)
		if (graph_outdeg(g, v) > d)
			d = graph_outdeg(g, v) < 64 ? graph_outdeg(g, v) : 64;
	cand = xmalloc((size_t)n * d * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++)
		closes[v] = has_arc(g, v, 0) && (!both || has_arc(g, 0, v));
	cycle[0] = 0;
	seen[0] = 1;
	ncand[0] = UINT32_MAX; /* candidates not computed yet */
	while (budget--) {
		uint32_t u = cycle[depth];

		if (depth == n - 1) {
			if (closes[u]) {
				rc = 0;
				break;
			}
		} else if (ncand[depth] == UINT32_MAX) {
			/* Order u's unvisited out-neighbours by their onward choices. */
			uint32_t k = 0, score[64];
			uint32_t *c = cand + (size_t)depth * d;

			for (uint32_t a = g->off[u]; a < g->off[u + 1] && k < 64; a++) {
				uint32_t v = g->adj[a], on = 0;
				bool dup = false;

				if (seen[v] || (both && !has_arc(g, v, u)))
					continue;
				for (uint32_t i = 0; i < k; i++)
					dup |= c[i] == v;
				if (dup)
					continue;
				for (uint32_t b = g->off[v]; b < g->off[v + 1]; b++)
					on += !seen[g->adj[b]];
				score[k] = on + (closes[v] ? 1000 : 0);
				c[k++] = v;
			}
			for (uint32_t i = 1; i < k; i++)
				for (uint32_t j = i; j > 0 && score[j] < score[j - 1]; j--) {
					uint32_t ts = score[j], tc = c[j];

					score[j] = score[j - 1];
					c[j] = c[j - 1];
					score[j - 1] = ts;
					c[j - 1] = tc;
				}
			ncand[depth] = k;
			next[depth] = 0;
		}
		if (depth < n - 1 && next[depth] < ncand[depth]) {
			uint32_t v = cand[(size_t)depth * d + next[depth]++];

			seen[v] = 1;
			cycle[++depth] = v;
			ncand[depth] = UINT32_MAX;
			continue;
		}
		/* Dead end: step back. */
		if (depth == 0)
			break;
		seen[cycle[depth]] = 0;
		depth--;
	}
	free(seen);
	free(closes);
	free(cand);
	free(ncand);
	free(next);
	if (rc < 0)
		ofc_error_set(
		    err, OFC_E_INPUT, "no %sHamiltonian cycle found in %s (searched %u steps)",
		    both ? "two-way " : "", g->spec ? g->spec : "the topology", HAMILTON_BUDGET);
	return rc;
}

/* ---- rings --------------------------------------------------------------------- */

/* On a torus with an even dimension j, the reflected mixed-radix Gray code
 * with x_j as its most significant digit is a Hamiltonian cycle: consecutive
 * words differ by one in one coordinate, and the last word (a_j - 1, the
 * lower digits back at their start, reflected an odd number of times)
 * wraps to the first along dimension j. Adding 2 to x_j moves position i
 * to i + 2N/a_j, so the cycle, and a ring schedule along it, is kept by
 * the translations by multiples of 2 e_j (order a_j / 2): what a reduced
 * ring stands on. j is the even dimension of largest size (the first of
 * equals). Returns that dimension, or UINT32_MAX (no even dimension, or
 * the graph lacks one of the cycle's arcs: a degraded torus). */
static uint32_t gray_cycle(const struct graph *g, const struct topo_tree *t, bool both,
			   uint32_t *pi)
{
	uint32_t D, j = UINT32_MAX, stride[32], order[32], k = 0;

	if (!topo_torus_dims(t, NULL))
		return UINT32_MAX;
	D = t->nparams;
	for (uint32_t i = 0, p = 1; i < D; i++) {
		stride[i] = p;
		p *= t->params[i];
		if (t->params[i] % 2 == 0 && (j == UINT32_MAX || t->params[i] > t->params[j]))
			j = i;
	}
	if (j == UINT32_MAX)
		return UINT32_MAX;
	order[k++] = j; /* most significant first */
	for (uint32_t i = D; i-- > 0;)
		if (i != j)
			order[k++] = i;
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t rem = i, m = g->n, u = 0;

		for (uint32_t q = 0; q < D; q++) {
			uint32_t a = t->params[order[q]], dgt;

			m /= a;
			dgt = rem / m;
			rem %= m;
			if (dgt & 1)
				rem = m - 1 - rem;
			u += dgt * stride[order[q]];
		}
		pi[i] = u;
	}
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t u = pi[i], v = pi[(i + 1) % g->n];

		if (!has_arc(g, u, v) || (both && !has_arc(g, v, u)))
			return UINT32_MAX;
	}
	return j;
}

/* Allgather: at step s node pi[i] forwards block pi[i - s] to pi[i + 1].
 * Reduce-scatter: at step s it passes its running sum of shard
 * pi[i - s - 1]; after N - 1 steps pi[i] holds shard pi[i] reduced. The
 * two-way ring moves [0, 1/2) forward and [1/2, 1) backward. keep: the
 * nodes that send (a reduced program's representatives), NULL: all. */
static int ring_phase(struct schedule *s, const struct graph *g, const uint32_t *pi, bool two,
		      bool reduce, const uint8_t *keep, const struct ofc_clock *clock,
		      struct ofc_error *err)
{
	uint32_t n = g->n;
	uint64_t half = two ? SCHED_ONE / 2 : SCHED_ONE;

	for (uint32_t st = 0; st + 1 < n; st++) {
		/* n (n - 1) transfers: seconds at 4,096 nodes, so the
		 * request's clock is read at every step. */
		if (clock_check(clock, "generation", err) < 0)
			return -1;
		sched_step(s);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t u = pi[i], fw = pi[(i + 1) % n], bw = pi[(i + n - 1) % n];
			uint32_t shift = reduce ? st + 1 : st;

			if (keep && !keep[u])
				continue;
			add(s, u, fw, pi[(i + 2 * n - shift) % n], 0, half, port_to(g, u, fw),
			    reduce ? XFER_REDUCE : XFER_COPY);
			if (two)
				add(s, u, bw, pi[(i + shift) % n], half, SCHED_ONE,
				    port_to(g, u, bw), reduce ? XFER_REDUCE : XFER_COPY);
		}
	}
	return 0;
}

/* H: NULL for the whole schedule; else the reduced program under H
 * (set by this function: G restricted to 2 e_j, j the Gray cycle's
 * dimension), for which the cycle must be the Gray code. */
static int ring_schedule(const struct graph *g, const struct topo_tree *t, bool two,
			 enum sched_collective c, struct schedule *s, struct sched_group *H,
			 const struct ofc_clock *clock, struct ofc_error *err)
{
	uint32_t *pi = xmalloc((size_t)g->n * sizeof(uint32_t)), j;
	uint8_t *keep = NULL;

	j = gray_cycle(g, t, two, pi);
	if (H) {
		uint32_t step[SCHED_GROUP_MAX_DIMS], h;

		if (j == UINT32_MAX || !H->ndims || t->params[j] < 4 || H->reps != 1) {
			free(pi);
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "a ring is kept by the translations along a dimension of even size "
			    ">= 4 (its reflected Gray code cycle, reduced by 2 e_j); %s has "
			    "none%s",
			    g->spec ? g->spec : "the topology",
			    t && strcmp(t->name, "hypercube") == 0
				? " (on a hypercube every translation is its own inverse, so at "
				  "most two keep a cycle)"
				: "");
		}
		for (uint32_t i = 0; i < H->ndims; i++)
			step[i] = i == j ? 2 : H->radix[i];
		if (sched_group_restrict(H, step, err) < 0) {
			free(pi);
			return -1;
		}
		keep = xcalloc(g->n, 1);
		for (uint32_t u = 0; u < g->n; u++) {
			sched_group_split(H, u, &h);
			keep[u] = h == 0;
		}
	} else if (j == UINT32_MAX && hamilton(g, two, pi, err) < 0) {
		free(pi);
		return -1;
	}
	sched_init(s, c, two ? "bidir-ring" : "ring", g->n);
	sched_reserve(s,
		      (size_t)(H ? H->reps : g->n) * (g->n - 1) * (two ? 2 : 1) * cost_phases(c));
	int rc = 0;
	if (c != SCHED_ALLGATHER)
		rc = ring_phase(s, g, pi, two, true, keep, clock, err);
	if (rc == 0 && c != SCHED_REDUCE_SCATTER)
		rc = ring_phase(s, g, pi, two, false, keep, clock, err);
	free(pi);
	free(keep);
	if (rc < 0)
		sched_free(s);
	return rc;
}

/* ---- recursive doubling and halving -------------------------------------------- */

/* A shortest path u -> p (BFS parents), written to path[0] = u .. p. par
 * is all UINT32_MAX before and after (only what the search reached is
 * reset: it stops at p, a few hops away). */
static uint32_t path_to(const struct graph *g, uint32_t u, uint32_t p, uint32_t *par,
			uint32_t *queue, uint32_t *path)
{
	uint32_t head = 0, tail = 0, len = 0;

	par[u] = u;
	queue[tail++] = u;
	while (head < tail && par[p] == UINT32_MAX) {
		uint32_t x = queue[head++];

		for (uint32_t a = g->off[x]; a < g->off[x + 1]; a++)
			if (par[g->adj[a]] == UINT32_MAX) {
				par[g->adj[a]] = x;
				queue[tail++] = g->adj[a];
			}
	}
	if (par[p] == UINT32_MAX) { /* unreachable: no path, which the check reports */
		path[0] = u;
	} else {
		for (uint32_t v = p; v != u; v = par[v])
			len++;
		path[len] = p;
		for (uint32_t v = p, i = len; v != u; v = par[v])
			path[--i] = par[v];
	}
	for (uint32_t i = 0; i < tail; i++)
		par[queue[i]] = UINT32_MAX;
	return len;
}

/* Doubling: in round r node u sends the 2^r blocks of its aligned subcube
 * to u ^ 2^r, relayed along a shortest path when they are not linked, in
 * one transfer (a span) a hop when `spans`, else a transfer a block.
 * Nodes u < nsrc send (n: all; 1: node 0's program). */
static void doubling(struct schedule *s, const struct graph *g, uint32_t k, uint32_t nsrc,
		     bool spans)
{
	uint32_t n = g->n, *par = xmalloc((size_t)n * sizeof(uint32_t));

	for (uint32_t v = 0; v < n; v++)
		par[v] = UINT32_MAX;
	uint32_t *queue = xmalloc((size_t)n * sizeof(uint32_t));
	uint32_t *plen = xmalloc((size_t)n * sizeof(uint32_t));
	size_t *poff = xmalloc(((size_t)n + 1) * sizeof(size_t)), cap = 0;
	uint32_t *paths = NULL;

	for (uint32_t r = 0; r < k; r++) {
		uint32_t L = 0, size = 1u << r;

		poff[0] = 0;
		for (uint32_t u = 0; u < nsrc; u++) {
			GROW(paths, cap, poff[u] + n + 1);
			plen[u] = path_to(g, u, u ^ size, par, queue, paths + poff[u]);
			poff[u + 1] = poff[u] + plen[u] + 1;
			if (plen[u] > L)
				L = plen[u];
		}
		for (uint32_t h = 0; h < L; h++) {
			sched_step(s);
			for (uint32_t u = 0; u < nsrc; u++) {
				const uint32_t *p = paths + poff[u];
				uint32_t base = u & ~(size - 1);

				if (h >= plen[u])
					continue;
				if (spans) {
					add(s, p[h], p[h + 1], base, 0, SCHED_ONE,
					    port_to(g, p[h], p[h + 1]), XFER_COPY);
					s->xfers[s->nxfers - 1].flags =
					    xfer_span_flags(s->xfers[s->nxfers - 1].flags, r);
					continue;
				}
				for (uint32_t b = base; b < base + size; b++)
					add(s, p[h], p[h + 1], b, 0, SCHED_ONE,
					    port_to(g, p[h], p[h + 1]), XFER_COPY);
			}
		}
	}
	free(par);
	free(queue);
	free(paths);
	free(plen);
	free(poff);
}

/* Halving: in round r (from the top bit down) u keeps the half of its
 * range with its own bit r and passes the partial sums of the other half
 * to u ^ 2^r. */
static void halving(struct schedule *s, const struct graph *g, uint32_t k, uint32_t nsrc)
{
	for (uint32_t r = k; r-- > 0;) {
		uint32_t size = 1u << r;

		sched_step(s);
		for (uint32_t u = 0; u < nsrc; u++) {
			uint32_t p = u ^ size, base = (p & ~(size - 1));

			for (uint32_t b = base; b < base + size; b++)
				add(s, u, p, b, 0, SCHED_ONE, port_to(g, u, p), XFER_REDUCE);
		}
	}
}

static int recursive_check(const struct graph *g, enum sched_collective c, struct ofc_error *err)
{
	uint32_t n = g->n;

	if (n & (n - 1))
		return ofc_error_set(err, OFC_E_INPUT,
				     "recursive doubling/halving needs a power-of-two node count "
				     "(%u nodes)",
				     n);
	if (c != SCHED_ALLGATHER)
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t b = 1; b < n; b <<= 1)
				if (!has_arc(g, u, u ^ b))
					return ofc_error_set(
					    err, OFC_E_INPUT,
					    "recursive halving needs node u linked to u^2^r: %u "
					    "and "
					    "%u are not, and partial sums cannot be relayed",
					    u, u ^ b);
	return 0;
}

/* After recursive_check. An explicit all-gather's doubling sends spans;
 * the rest block by block (the verifier's reductions and the reduced
 * check take no spans). */
static void recursive_schedule(const struct graph *g, enum sched_collective c, struct schedule *s,
			       uint32_t nsrc)
{
	uint32_t n = g->n, k = 0;

	while ((1u << k) < n)
		k++;
	sched_init(s, c, "recursive", n);
	if (c != SCHED_ALLGATHER)
		halving(s, g, k, nsrc);
	if (c != SCHED_REDUCE_SCATTER)
		doubling(s, g, k, nsrc, c == SCHED_ALLGATHER && nsrc == n);
}

/* Hops from node 0 to every node (UINT32_MAX: unreachable). */
static uint32_t *hops_from_0(const struct graph *g)
{
	uint32_t *d = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t)),
		 *q = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t));
	uint32_t head = 0, tail = 0;

	for (uint32_t v = 0; v < g->n; v++)
		d[v] = UINT32_MAX;
	d[0] = 0;
	q[tail++] = 0;
	while (head < tail) {
		uint32_t u = q[head++];

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (d[g->adj[a]] == UINT32_MAX) {
				d[g->adj[a]] = d[u] + 1;
				q[tail++] = g->adj[a];
			}
	}
	free(q);
	return d;
}

/* Doubling relays the 2^r blocks of step r over every hop to u ^ 2^r, a
 * transfer a hop (spans) or a block and hop (node 0's distances stand for
 * every node's); halving sends n - 1 blocks a node. */
static double recursive_transfers(const struct graph *g, enum sched_collective c, bool spans)
{
	double n = g->n, sum = 0;

	if (c != SCHED_ALLGATHER)
		return (c == SCHED_ALLREDUCE ? 2 : 1) * n * (n - 1);
	uint32_t *d = hops_from_0(g);
	for (uint32_t b = 1; b < g->n; b <<= 1)
		sum += (spans ? 1 : (double)b) * (d[b] == UINT32_MAX ? 1 : d[b]);
	free(d);
	return sum * n;
}

/* ---- the traditional torus schedule --------------------------------------------- */

struct txfer {
	uint32_t step;
	struct xfer x;
};

/* Nodes x < nsrc send (N: the whole schedule; 1: node 0's program, the
 * schedule being invariant under every translation: the origins x sends
 * at a step are x's coordinates with the spread ones free and x_j moved
 * back by the step, a set that moves with x). */
static int torus_check(const struct topo_tree *t, struct ofc_error *err)
{
	if (!topo_torus_dims(t, NULL))
		return ofc_error_set(err, OFC_E_INPUT, "torus-rings needs a torus:AxB... topology");
	return 0;
}

/* After torus_check. */
static void torus_schedule(const struct graph *g, const struct topo_tree *t,
			   enum sched_collective c, struct schedule *s, uint32_t nsrc)
{
	uint32_t n = t->nparams, N = g->n, T = 0, stride[32];
	const uint32_t *a = t->params;

	for (uint32_t j = 0, p = 1; j < n; j++) {
		stride[j] = p;
		p *= a[j];
		T += a[j] - 1;
	}
	/* Node 0's ports to +-e_j (a dimension of size 2 has one arc, both
	 * ways); translations keep ports on a torus. */
	uint32_t lane_fw[32], lane_bw[32];
	for (uint32_t j = 0; j < n; j++) {
		uint32_t fw = port_to(g, 0, stride[j]), bw = port_to(g, 0, (a[j] - 1) * stride[j]);

		lane_fw[j] = fw == UINT32_MAX ? 2 * j : fw;
		lane_bw[j] = bw == UINT32_MAX ? 2 * j + 1 : bw;
	}
	struct txfer *buf = NULL;
	size_t nbuf = 0, cap = 0;
	/* Sub-shard i spreads along dimensions i, i+1, ..., i-1. */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t b0 = (uint64_t)i * SCHED_ONE / n, b1 = (uint64_t)(i + 1) * SCHED_ONE / n;
		uint64_t mid = (b0 + b1) / 2;
		uint32_t t0 = 0;

		for (uint32_t q = 0; q < n; q++) {
			uint32_t j = (i + q) % n, nspread = 1, spread[32], ns = 0;

			for (uint32_t p = 0; p < q; p++) {
				spread[ns++] = (i + p) % n;
				nspread *= a[(i + p) % n];
			}
			for (uint32_t st = 0; st + 1 < a[j]; st++)
				for (uint32_t x = 0; x < nsrc; x++) {
					uint32_t xj = (x / stride[j]) % a[j];
					uint32_t fw =
					    x - xj * stride[j] + ((xj + 1) % a[j]) * stride[j];
					uint32_t bw = x - xj * stride[j] +
						      ((xj + a[j] - 1) % a[j]) * stride[j];

					for (uint32_t e = 0; e < nspread; e++) {
						/* origin: x with the spread coordinates set to e's
						 * digits */
						uint32_t o = x, r = e;

						for (uint32_t z = 0; z < ns; z++) {
							uint32_t dz = spread[z];
							uint32_t xz = (x / stride[dz]) % a[dz];

							o = o - xz * stride[dz] +
							    (r % a[dz]) * stride[dz];
							r /= a[dz];
						}
						uint32_t oj = (o / stride[j]) % a[j];
						uint32_t ofw =
						    o - oj * stride[j] +
						    ((xj + a[j] - st) % a[j]) * stride[j];
						uint32_t obw = o - oj * stride[j] +
							       ((xj + st) % a[j]) * stride[j];

						GROW(buf, cap, nbuf + 2);
						buf[nbuf++] =
						    (struct txfer){t0 + st,
								   {.src = (uint16_t)x,
								    .dst = (uint16_t)fw,
								    .block = ofw,
								    .offset = (uint32_t)b0,
								    .length = (uint32_t)(mid - b0),
								    .lane = (uint16_t)lane_fw[j]}};
						buf[nbuf++] =
						    (struct txfer){t0 + st,
								   {.src = (uint16_t)x,
								    .dst = (uint16_t)bw,
								    .block = obw,
								    .offset = (uint32_t)mid,
								    .length = (uint32_t)(b1 - mid),
								    .lane = (uint16_t)lane_bw[j]}};
					}
				}
			t0 += a[j] - 1;
		}
	}
	/* Steps in order (a counting sort by step). */
	size_t *count = xcalloc((size_t)T + 1, sizeof(size_t));
	for (size_t k = 0; k < nbuf; k++)
		count[buf[k].step]++;
	struct schedule ag;
	sched_init(&ag, SCHED_ALLGATHER, "torus-rings", N);
	struct xfer *out = sched_append_steps(&ag, T, count);
	size_t *pos = xcalloc((size_t)T + 1, sizeof(size_t));
	for (uint32_t st = 1; st <= T; st++)
		pos[st] = pos[st - 1] + count[st - 1];
	for (size_t k = 0; k < nbuf; k++)
		out[pos[buf[k].step]++] = buf[k].x;
	free(buf);
	free(count);
	free(pos);

	sched_init(s, c, "torus-rings", N);
	if (c != SCHED_ALLGATHER) {
		/* A torus is symmetric: the allgather reversed, arc u -> v mapped
		 * to the arc v -> u of the same rank among parallel arcs. */
		sched_reserve(s, ag.nxfers * cost_phases(c));
		for (uint32_t so = 0; so < ag.nsteps; so++) {
			uint32_t tt = ag.nsteps - 1 - so;

			sched_step(s);
			for (uint32_t k = ag.step_start[tt]; k < ag.step_start[tt + 1]; k++) {
				struct xfer x = ag.xfers[k];
				uint32_t arc = g->off[x.src] + x.lane, rank = 0, lane = 0;

				for (uint32_t b = g->off[x.src]; b < arc; b++)
					rank += g->adj[b] == x.dst;
				for (uint32_t b = g->off[x.dst]; b < g->off[x.dst + 1]; b++)
					if (g->adj[b] == x.src && rank-- == 0) {
						lane = b - g->off[x.dst];
						break;
					}
				uint16_t tmp = x.src;
				x.src = x.dst;
				x.dst = tmp;
				x.lane = (uint16_t)lane;
				x.flags = xfer_flags(DIR_NONE, XFER_REDUCE);
				sched_add(s, &x);
			}
		}
	}
	if (c != SCHED_REDUCE_SCATTER)
		sched_append(s, &ag);
	sched_free(&ag);
}

/* ---- symmetry-reduced (sched.h, struct sched_reduced) ----------------------------- */

int baseline_reduced(const struct graph *g, const struct topo_tree *t, enum baseline_algo a,
		     enum sched_collective c, const struct sched_group *G, struct sched_reduced *r,
		     struct ofc_error *err)
{
	struct sched_group H = *G; /* G may be &r->group */
	const char *spec = g->spec ? g->spec : "the topology";
	int rc = 0;

	memset(r, 0, sizeof(*r));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s schedules allgather, reduce-scatter and allreduce",
				     baseline_algo_name(a));
	if (H.nodes != g->n || H.reps != 1)
		return ofc_error_set(err, OFC_E_INPUT, "the group is not %s's translations", spec);
	if (g->n < 2 || g->n > SCHED_REDUCED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: reduced schedules have 2..%u",
				     g->n, SCHED_REDUCED_MAX_NODES);
	switch (a) {
	case BASELINE_RING:
	case BASELINE_BIDIR_RING:
		rc = ring_schedule(g, t, a == BASELINE_BIDIR_RING, c, &r->prog, &H, NULL, err);
		break;
	case BASELINE_RECURSIVE:
		/* Partners u ^ 2^r are translations only when G is XOR; on a
		 * torus the sign of u's step (+-2^r in a coordinate) follows
		 * bit r of u, which only translations by 2^(r+1) keep: the
		 * schedule's symmetry is 4 nodes out of 4,096 on torus:64x64. */
		if (!H.binary)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "its partners u XOR 2^r are translations of a hypercube's "
			    "group, not of %s's (%s): no symmetry-reduced form",
			    spec, H.name);
		if ((rc = recursive_check(g, c, err)) == 0)
			recursive_schedule(g, c, &r->prog, 1);
		break;
	case BASELINE_TORUS_RINGS:
		if ((rc = torus_check(t, err)) == 0)
			torus_schedule(g, t, c, &r->prog, 1);
		break;
	}
	if (rc < 0) {
		sched_free(&r->prog);
		memset(r, 0, sizeof(*r));
		return -1;
	}
	r->group = H;
	snprintf(r->prog.topology, sizeof(r->prog.topology), "%s", g->spec ? g->spec : "");
	return 0;
}

double baseline_reduced_transfers(const struct graph *g, const struct topo_tree *t,
				  enum baseline_algo a, enum sched_collective c, uint32_t *reps)
{
	bool torus = topo_torus_dims(t, NULL) > 0;
	uint32_t order = g->n;

	*reps = 1;
	switch (a) {
	case BASELINE_RING:
	case BASELINE_BIDIR_RING: {
		uint32_t aj = 0;

		for (uint32_t i = 0; torus && i < t->nparams; i++)
			if (t->params[i] % 2 == 0 && t->params[i] > aj)
				aj = t->params[i];
		if (aj < 4)
			return 0;
		order = aj / 2; /* the translations by 2 e_j */
		*reps = g->n / order;
		break;
	}
	case BASELINE_TORUS_RINGS:
		if (!torus)
			return 0;
		break;
	case BASELINE_RECURSIVE:
		return recursive_transfers(g, c, false) / order;
	}
	return baseline_transfers(g, a, c) / order;
}

/* ---- entry ------------------------------------------------------------------------ */

const char *baseline_algo_name(enum baseline_algo a)
{
	switch (a) {
	case BASELINE_RING:
		return "ring";
	case BASELINE_BIDIR_RING:
		return "bidir-ring";
	case BASELINE_RECURSIVE:
		return "recursive";
	case BASELINE_TORUS_RINGS:
		return "torus-rings";
	}
	return "?";
}

uint32_t baseline_pieces(const struct graph *g, enum baseline_algo a)
{
	if (a == BASELINE_BIDIR_RING)
		return 2;
	return a == BASELINE_TORUS_RINGS && g->n ? graph_outdeg(g, 0) : 1;
}

double baseline_transfers(const struct graph *g, enum baseline_algo a, enum sched_collective c)
{
	double n = g->n, phases = c == SCHED_ALLREDUCE ? 2 : 1, per = 1;

	if (g->n < 2)
		return 0;
	if (a == BASELINE_BIDIR_RING) {
		per = 2; /* each block in two halves, one each way */
	} else if (a == BASELINE_TORUS_RINGS) {
		per = graph_outdeg(g, 0); /* a share on every port */
	} else if (a == BASELINE_RECURSIVE && c == SCHED_ALLGATHER) {
		return recursive_transfers(g, c, true);
	}
	return phases * per * n * (n - 1);
}

int baseline_check(const struct graph *g, const struct topo_tree *t, enum baseline_algo a,
		   enum sched_collective c, struct ofc_error *err)
{
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s schedules allgather, reduce-scatter and allreduce",
				     baseline_algo_name(a));
	if (g->n < 2 || g->n > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: schedules have 2..%u", g->n,
				     SCHED_MAX_NODES);
	if (a == BASELINE_RECURSIVE)
		return recursive_check(g, c, err);
	if (a == BASELINE_TORUS_RINGS)
		return torus_check(t, err);
	return 0;
}

int baseline_schedule(const struct graph *g, const struct topo_tree *t, enum baseline_algo a,
		      enum sched_collective c, struct schedule *s, const struct ofc_clock *clock,
		      struct ofc_error *err)
{
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (baseline_check(g, t, a, c, err) < 0)
		return -1;
	switch (a) {
	case BASELINE_RING:
	case BASELINE_BIDIR_RING:
		rc = ring_schedule(g, t, a == BASELINE_BIDIR_RING, c, s, NULL, clock, err);
		break;
	case BASELINE_RECURSIVE:
		recursive_schedule(g, c, s, g->n);
		break;
	case BASELINE_TORUS_RINGS:
		torus_schedule(g, t, c, s, g->n);
		break;
	}
	if (rc == 0)
		snprintf(s->topology, sizeof(s->topology), "%s", g->spec ? g->spec : "");
	return rc;
}
