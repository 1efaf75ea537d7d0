/* Swing allreduce on tori and recursive doubling on the same machinery (De
 * Sensi et al.; notes swing-allreduce.md). See baselines.h for the model.
 *
 * A collective is a sequence of S = sum ceil(log2 d_i) steps; step s uses
 * dimension dim[s] at its sigma[s]-th step there, dimensions taken round
 * robin from the collective's first (c mod D), skipping exhausted ones
 * (Sec. 4.2, Fig. 6). Block sets: reach(x, t) is what x reaches through
 * steps t.. in order; at reduce-scatter step s node r sends its partial sums
 * of {q} + reach(q, s+1) (q = its peer) minus r, each block only in the last
 * step it would be sent (Sec. 2.6: with non-power-of-two sizes a block can
 * appear twice); the allgather mirrors it in reverse step order.
 */
#include "baselines/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 16

int64_t swing_rho(uint32_t s)
{
	int64_t v = 0, t = 1;

	for (uint32_t i = 0; i <= s; i++, t *= -2)
		v += t;
	return v;
}

static uint32_t ceil_log2(uint32_t x)
{
	uint32_t k = 0;

	while ((1u << k) < x)
		k++;
	return k;
}

struct tplan {
	uint32_t D, dims[MAXD], stride[MAXD], p, S;
	bool rd;    /* recursive doubling: peer r XOR 2^sigma in the coordinate */
	uint32_t k; /* collectives */
	uint8_t dim[MAXD][64], sig[MAXD][64]; /* per collective (c < 2D; RD: 1) */
};

static void plan_dims(struct tplan *pl, uint32_t c)
{
	uint32_t cnt[MAXD] = {0}, cur = c % pl->D;

	for (uint32_t s = 0; s < pl->S; s++) {
		uint32_t w = 0;

		for (uint32_t o = 0; o < pl->D; o++) {
			w = (cur + o) % pl->D;
			if (cnt[w] < ceil_log2(pl->dims[w]))
				break;
		}
		pl->dim[c][s] = (uint8_t)w;
		pl->sig[c][s] = (uint8_t)cnt[w]++;
		cur = (w + 1) % pl->D;
	}
}

static uint32_t peer(const struct tplan *pl, uint32_t c, uint32_t r, uint32_t s)
{
	uint32_t w = pl->dim[pl->rd ? 0 : c][s], sg = pl->sig[pl->rd ? 0 : c][s];
	uint32_t d = pl->dims[w], x = (r / pl->stride[w]) % d, y;

	if (pl->rd) {
		y = x ^ (1u << sg);
	} else {
		int64_t disp = swing_rho(sg);

		if (x & 1)
			disp = -disp;
		if (c >= pl->D)
			disp = -disp; /* mirrored collective */
		y = (uint32_t)((((int64_t)x + disp) % d + d) % d);
	}
	return r - x * pl->stride[w] + y * pl->stride[w];
}

uint32_t swing_peer(const uint32_t *dims, uint32_t D, uint32_t c, uint32_t r, uint32_t s)
{
	struct tplan pl = {.D = D, .p = 1};

	for (uint32_t i = 0; i < D && i < MAXD; i++) {
		pl.dims[i] = dims[i];
		pl.stride[i] = pl.p;
		pl.p *= dims[i];
		pl.S += ceil_log2(dims[i]);
	}
	plan_dims(&pl, c);
	return peer(&pl, c, r, s);
}

const char *torus_algo_name(enum torus_algo a)
{
	return a == TORUS_RECURSIVE_DOUBLING ? "recursive-doubling" : "swing";
}

/* algo: the messages' word; rd: recursive doubling's plan. */
static int make_plan(const struct topo_tree *t, const char *algo, bool rd, bool multiport,
		     struct tplan *pl, struct ofc_error *err)
{
	memset(pl, 0, sizeof(*pl));
	if (!topo_torus_dims(t, NULL))
		return ofc_error_set(err, OFC_E_INPUT, "%s needs a torus:AxB... topology", algo);
	pl->rd = rd;
	pl->D = t->nparams;
	pl->p = 1;
	if (pl->D > MAXD)
		return ofc_error_set(err, OFC_E_INPUT, "at most %u torus dimensions", MAXD);
	for (uint32_t i = 0; i < pl->D; i++) {
		uint32_t d = t->params[i];

		if (d & 1)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s needs even torus dimensions (%u is odd)", algo, d);
		if (pl->rd && (d & (d - 1)))
			return ofc_error_set(err, OFC_E_INPUT,
					     "recursive doubling needs power-of-two dimensions "
					     "(%u is not)",
					     d);
		pl->dims[i] = d;
		pl->stride[i] = pl->p;
		pl->p *= d;
		pl->S += ceil_log2(d);
	}
	if (pl->p > (1u << 24))
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: too many", pl->p);
	pl->k = pl->rd || !multiport ? 1 : 2 * pl->D;
	for (uint32_t c = 0; c < (pl->rd ? 1 : pl->k); c++)
		plan_dims(pl, c);
	return 0;
}

/* ---- routed link loads ---------------------------------------------------------- */

struct loads {
	const struct tplan *pl;
	/* Reduced schedules: loads of arc orbits, each arc counted at the
	 * representative of its tail's orbit (NULL: every arc itself). */
	const struct sched_group *orbits;
	double *load; /* (node * D + dim) * 2 + dir */
	uint32_t *stamp;
	uint32_t now;
	double max;
	uint32_t maxhops;
};

static void bump(struct loads *L, uint32_t node, uint32_t w, uint32_t dir, double v)
{
	uint32_t h;

	if (L->orbits)
		node = sched_group_rep_node(L->orbits, sched_group_split(L->orbits, node, &h));
	size_t i = ((size_t)node * L->pl->D + w) * 2 + (L->pl->dims[w] == 2 ? 0 : dir);

	if (L->stamp[i] != L->now) {
		L->stamp[i] = L->now;
		L->load[i] = 0;
	}
	L->load[i] += v;
	if (L->load[i] > L->max)
		L->max = L->load[i];
}

/* Route v units from a to b: dimension order, minimal, a tie split. */
static void route(struct loads *L, uint32_t a, uint32_t b, double v)
{
	const struct tplan *pl = L->pl;
	uint32_t cur = a, hops = 0;

	for (uint32_t w = 0; w < pl->D; w++) {
		uint32_t d = pl->dims[w], x = (cur / pl->stride[w]) % d,
			 y = (b / pl->stride[w]) % d;
		uint32_t f = (y + d - x) % d, back = d - f;

		if (f == 0)
			continue;
		for (int dir = 0; dir < 2; dir++) {
			uint32_t len = dir ? back : f;
			double share = f == back ? v / 2 : ((dir == 0) == (f < back) ? v : 0);

			if (share == 0)
				continue;
			for (uint32_t h = 0, z = x; h < len; h++) {
				bump(L, cur - x * pl->stride[w] + z * pl->stride[w], w,
				     (uint32_t)dir, share);
				z = dir ? (z + d - 1) % d : (z + 1) % d;
			}
		}
		hops += f < back ? f : back;
		cur = cur - x * pl->stride[w] + y * pl->stride[w];
	}
	if (hops > L->maxhops)
		L->maxhops = hops;
}

static void loads_init(struct loads *L, const struct tplan *pl)
{
	memset(L, 0, sizeof(*L));
	L->pl = pl;
	L->load = xcalloc((size_t)pl->p * pl->D * 2, sizeof(double));
	L->stamp = xcalloc((size_t)pl->p * pl->D * 2, sizeof(uint32_t));
}

static uint32_t torus_degree(const struct tplan *pl)
{
	uint32_t d = 0;

	for (uint32_t i = 0; i < pl->D; i++)
		d += pl->dims[i] == 2 ? 1 : 2;
	return d;
}

/* Route step st of s: a transfer of length l of a shard is l/N of the
 * vector. Consecutive transfers between the same nodes with the same
 * length (a node's run of blocks to its peer: the whole vector, p of them,
 * in a latency-optimal step) take the same route, so a run is routed once
 * with its total (loads are linear in what is routed). Routed transfer by
 * transfer, the reduced latency-optimal torus:256x256 took 16.7 M routes
 * of ~21 hops, most of its 7.5 s. */
static void route_step(struct loads *L, const struct schedule *s, uint32_t st)
{
	uint32_t end = s->step_start[st + 1];

	for (uint32_t i = s->step_start[st], j; i < end; i = j) {
		const struct xfer *x = &s->xfers[i];
		uint64_t blocks = xfer_blocks(x); /* a span carries its blocks */

		for (j = i + 1; j < end && s->xfers[j].src == x->src && s->xfers[j].dst == x->dst &&
				s->xfers[j].length == x->length;
		     j++)
			blocks += xfer_blocks(&s->xfers[j]);
		route(L, x->src, x->dst, (double)blocks * (sched_frac(x->length) / s->nodes));
	}
}

/* Close a step: its busiest link (in vectors) and longest message. */
static void loads_step(struct loads *L, struct torus_figures *f)
{
	/* tau_B: a step whose busiest link carries the fraction x of the
	 * vector costs x M / (B/d), i.e. d x in units of M/B. */
	f->tau_b += torus_degree(L->pl) * L->max;
	f->hops += L->maxhops;
	f->steps++;
	L->now++;
	L->max = 0;
	L->maxhops = 0;
}

static double psi_of(const struct tplan *pl, enum swing_variant v)
{
	/* Table 2 on d ports: bandwidth-optimal moves 2n over k ports (the
	 * paper rounds 2(p-1)/p n to 2n), latency-optimal n log2 p. */
	double d = torus_degree(pl), k = pl->k;

	return v == SWING_BANDWIDTH ? d / k : d * log2((double)pl->p) / (2 * k);
}

/* The reduced figures' end: the routed loads freed, psi and xi from tau_B,
 * over k collectives. */
static void loads_done(struct loads *L, const struct tplan *pl, enum swing_variant v, uint32_t k,
		       struct torus_figures *f)
{
	free(L->load);
	free(L->stamp);
	f->psi = psi_of(pl, v);
	f->xi = f->tau_b / (2 * f->psi);
	f->instances = k;
}

/* orbits: s is a reduced program under that group of the torus's
 * translations (loads per orbit of arcs), NULL: s is whole. */
static int routed_figures(const struct topo_tree *t, const struct schedule *s,
			  const struct sched_group *orbits, double psi, struct torus_figures *f,
			  struct ofc_error *err)
{
	struct tplan pl;
	struct loads L;

	if (make_plan(t, "routing", false, false, &pl, err) < 0 && pl.D == 0)
		return -1;
	/* make_plan refuses odd sizes for Swing; routing needs only the dims. */
	pl.p = 1;
	for (uint32_t i = 0; i < t->nparams && i < MAXD; i++) {
		pl.dims[i] = t->params[i];
		pl.stride[i] = pl.p;
		pl.p *= t->params[i];
	}
	pl.D = t->nparams;
	ofc_error_clear(err);
	if (pl.p != s->nodes)
		return ofc_error_set(err, OFC_E_INPUT, "the schedule has %u nodes, %s %u", s->nodes,
				     t->spec, pl.p);
	memset(f, 0, sizeof(*f));
	loads_init(&L, &pl);
	L.orbits = orbits;
	L.now = 1;
	for (uint32_t st = 0; st < s->nsteps; st++) {
		route_step(&L, s, st);
		loads_step(&L, f);
	}
	f->psi = psi;
	f->xi = f->tau_b / (2 * psi);
	free(L.load);
	free(L.stamp);
	return 0;
}

int torus_routed_figures(const struct topo_tree *t, const struct schedule *s, double psi,
			 struct torus_figures *f, struct ofc_error *err)
{
	return routed_figures(t, s, NULL, psi, f, err);
}

int torus_routed_figures_reduced(const struct topo_tree *t, const struct sched_reduced *r,
				 double psi, struct torus_figures *f, struct ofc_error *err)
{
	if (r->group.ndims != t->nparams)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: the group %s is not of the torus's translations", t->spec,
				     r->group.name);
	return routed_figures(t, &r->prog, &r->group, psi, f, err);
}

/* ---- block sets ------------------------------------------------------------------- */

/* reach[(t * p + x) * words]: bitsets, t = 0..S. */
static uint64_t *reach_sets(const struct tplan *pl, uint32_t c)
{
	uint32_t p = pl->p, S = pl->S;
	size_t words = (p + 63) / 64;
	uint64_t *R = xcalloc((size_t)(S + 1) * p * words, sizeof(uint64_t));

	for (uint32_t t = S; t-- > 0;)
		for (uint32_t x = 0; x < p; x++) {
			uint32_t q = peer(pl, c, x, t);
			uint64_t *dst = R + ((size_t)t * p + x) * words;
			const uint64_t *a = R + ((size_t)(t + 1) * p + x) * words;
			const uint64_t *b = R + ((size_t)(t + 1) * p + q) * words;

			for (size_t w = 0; w < words; w++)
				dst[w] = a[w] | b[w];
			dst[q / 64] |= 1ull << (q % 64);
		}
	return R;
}

/* SEND[(s * p + r) * words], deduplicated: a block only in the last step. */
static uint64_t *send_sets(const struct tplan *pl, uint32_t c)
{
	uint32_t p = pl->p, S = pl->S;
	size_t words = (p + 63) / 64;
	uint64_t *R = reach_sets(pl, c);
	uint64_t *X = xcalloc((size_t)S * p * words, sizeof(uint64_t));
	uint64_t *later = xmalloc(words * sizeof(uint64_t));

	for (uint32_t r = 0; r < p; r++) {
		memset(later, 0, words * sizeof(uint64_t));
		for (uint32_t s = S; s-- > 0;) {
			uint32_t q = peer(pl, c, r, s);
			uint64_t *dst = X + ((size_t)s * p + r) * words;
			const uint64_t *a = R + ((size_t)(s + 1) * p + q) * words;

			for (size_t w = 0; w < words; w++)
				dst[w] = a[w];
			dst[q / 64] |= 1ull << (q % 64);
			dst[r / 64] &= ~(1ull << (r % 64));
			for (size_t w = 0; w < words; w++) {
				dst[w] &= ~later[w];
				later[w] |= dst[w];
			}
		}
	}
	free(R);
	free(later);
	return X;
}

/* ---- the schedules ---------------------------------------------------------------- */

static void add(struct schedule *s, uint32_t src, uint32_t dst, uint32_t block, uint32_t lo,
		uint32_t hi, enum xfer_op op)
{
	struct xfer x = {.src = (uint16_t)src,
			 .dst = (uint16_t)dst,
			 .block = block,
			 .offset = lo,
			 .length = hi - lo,
			 .lane = SCHED_NO_LANE,
			 .flags = xfer_flags(DIR_NONE, op)};

	sched_add(s, &x);
}

/* Collective c's share of a block, [*lo, *hi), of k. */
static void share_of(uint32_t c, uint32_t k, uint32_t *lo, uint32_t *hi)
{
	*lo = (uint32_t)((uint64_t)c * SCHED_ONE / k);
	*hi = (uint32_t)((uint64_t)(c + 1) * SCHED_ONE / k);
}

static void build(const struct tplan *pl, enum swing_variant v, const char *algo,
		  struct schedule *s)
{
	uint32_t p = pl->p, S = pl->S, k = pl->k;
	size_t words = (p + 63) / 64;
	uint64_t **X = xcalloc(k, sizeof(uint64_t *));

	sched_init(s, SCHED_ALLREDUCE, algo, p);
	if (v == SWING_BANDWIDTH)
		for (uint32_t c = 0; c < k; c++)
			X[c] = send_sets(pl, c);
	/* Reduce-scatter (or the whole latency-optimal exchange). */
	for (uint32_t st = 0; st < S; st++) {
		sched_step(s);
		for (uint32_t c = 0; c < k; c++) {
			uint32_t lo, hi;

			share_of(c, k, &lo, &hi);

			for (uint32_t r = 0; r < p; r++) {
				uint32_t q = peer(pl, c, r, st);

				if (v == SWING_LATENCY) {
					for (uint32_t b = 0; b < p; b++)
						add(s, r, q, b, lo, hi, XFER_REDUCE);
					continue;
				}
				const uint64_t *set = X[c] + ((size_t)st * p + r) * words;
				for (uint32_t b = 0; b < p; b++)
					if (set[b / 64] >> (b % 64) & 1)
						add(s, r, q, b, lo, hi, XFER_REDUCE);
			}
		}
	}
	/* Allgather: reverse order; r sends what it received, now reduced. */
	for (uint32_t t = 0; v == SWING_BANDWIDTH && t < S; t++) {
		uint32_t st = S - 1 - t;

		sched_step(s);
		for (uint32_t c = 0; c < k; c++) {
			uint32_t lo, hi;

			share_of(c, k, &lo, &hi);

			for (uint32_t r = 0; r < p; r++) {
				uint32_t q = peer(pl, c, r, st);
				const uint64_t *set = X[c] + ((size_t)st * p + q) * words;

				for (uint32_t b = 0; b < p; b++)
					if (set[b / 64] >> (b % 64) & 1)
						add(s, r, q, b, lo, hi, XFER_COPY);
			}
		}
	}
	for (uint32_t c = 0; c < k; c++)
		free(X[c]);
	free(X);
}

/* Figures without a schedule: message sizes by formula (power-of-two p:
 * |SEND(r, s)| = p / 2^(s+1)), routed step by step. */
static void figures(const struct tplan *pl, enum swing_variant v, struct torus_figures *f)
{
	struct loads L;
	uint32_t S = pl->S, k = pl->k;

	loads_init(&L, pl);
	L.now = 1;
	for (uint32_t phase = 0; phase < (v == SWING_BANDWIDTH ? 2u : 1u); phase++)
		for (uint32_t t = 0; t < S; t++) {
			uint32_t st = phase ? S - 1 - t : t;
			double size = v == SWING_LATENCY ? 1.0 / k : ldexp(1.0 / k, -(int)(st + 1));

			for (uint32_t c = 0; c < k; c++)
				for (uint32_t r = 0; r < pl->p; r++)
					route(&L, r, peer(pl, c, r, st), size);
			loads_step(&L, f);
		}
	free(L.load);
	free(L.stamp);
}

int torus_allreduce(const struct topo_tree *t, enum torus_algo a, enum swing_variant v,
		    bool multiport, struct schedule *s, struct torus_figures *f,
		    struct ofc_error *err)
{
	const char *algo = torus_algo_name(a);
	struct tplan pl;
	bool pow2;

	memset(f, 0, sizeof(*f));
	if (s)
		memset(s, 0, sizeof(*s));
	if (make_plan(t, algo, a == TORUS_RECURSIVE_DOUBLING, multiport, &pl, err) < 0)
		return -1;
	pow2 = (pl.p & (pl.p - 1)) == 0;
	if (v == SWING_LATENCY && !pow2)
		return ofc_error_set(err, OFC_E_INPUT,
				     "latency-optimal %s needs a power-of-two node count (%u "
				     "nodes); the bandwidth-optimal one handles even sizes",
				     algo, pl.p);
	f->instances = pl.k;
	if (!s) {
		if (!pow2)
			return ofc_error_set(err, OFC_E_INPUT,
					     "figures without a schedule need a power-of-two "
					     "node count");
		figures(&pl, v, f);
		f->psi = psi_of(&pl, v);
		f->xi = f->tau_b / (2 * f->psi);
		return 0;
	}
	/* Transfers name nodes in 16 bits: a true limit. What fits in memory
	 * is the caller's estimate (torus_allreduce_transfers). */
	if (pl.p > SCHED_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: %s %s schedules are built for up to %u nodes", pl.p,
				     v == SWING_LATENCY ? "latency-optimal" : "bandwidth-optimal",
				     algo, SCHED_MAX_NODES);
	build(&pl, v, algo, s);
	snprintf(s->topology, sizeof(s->topology), "%s", t->spec);
	if (torus_routed_figures(t, s, psi_of(&pl, v), f, err) < 0)
		return -1;
	f->instances = pl.k;
	return 0;
}

double torus_allreduce_transfers(const struct topo_tree *t, enum torus_algo a, enum swing_variant v,
				 bool multiport)
{
	struct ofc_error err = {0};
	struct tplan pl;
	double p;

	if (make_plan(t, torus_algo_name(a), a == TORUS_RECURSIVE_DOUBLING, multiport, &pl, &err) <
	    0)
		return 0;
	p = pl.p;
	/* build(): bandwidth-optimal, each of the k collectives sends every
	 * node's p - 1 other blocks once in each half; latency-optimal, the
	 * whole vector of p blocks every one of S steps. */
	return v == SWING_LATENCY ? (double)pl.k * pl.S * p * p : 2.0 * pl.k * p * (p - 1);
}

/* ---- symmetry-reduced (sched.h, struct sched_reduced) ----------------------------- */

double torus_allreduce_reduced_transfers(const struct topo_tree *t, enum torus_algo a,
					 enum swing_variant v, uint32_t *reps)
{
	struct ofc_error err = {0};
	struct tplan pl;
	double p, nr;

	*reps = 0;
	if (make_plan(t, torus_algo_name(a), a == TORUS_RECURSIVE_DOUBLING, true, &pl, &err) < 0)
		return 0;
	p = pl.p;
	/* Swing: the 2^D representatives of the even translations, k = 2D
	 * collectives; recursive doubling: node 0 alone, one collective. As
	 * torus_allreduce_reduced writes them: latency-optimal, one span of
	 * the p blocks per representative, collective and step;
	 * bandwidth-optimal, p - 1 blocks in each half, a transfer each. */
	nr = pl.rd ? 1 : ldexp(1, (int)pl.D);
	*reps = (uint32_t)nr;
	return v == SWING_LATENCY ? nr * pl.k * pl.S : 2 * nr * pl.k * (p - 1);
}

/* Set bit b + h in dst for every bit b of src (a translate of a block set). */
static void translate_set(const struct sched_group *G, const uint64_t *src, uint32_t h,
			  uint64_t *dst, size_t words)
{
	for (size_t w = 0; w < words; w++)
		for (uint64_t m = src[w]; m; m &= m - 1) {
			uint32_t b =
			    sched_group_add(G, (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m)), h);

			dst[b / 64] |= 1ull << (b % 64);
		}
}

/* send_sets for the representatives alone: reach(x + h, t) = reach(x, t) +
 * h under the even translations H, so reach and SEND of any node are
 * translates of a representative's. SEND[(s * reps + i) * words]. */
static uint64_t *send_sets_reduced(const struct tplan *pl, uint32_t c, const struct sched_group *H)
{
	uint32_t p = pl->p, S = pl->S, nr = H->reps, h;
	size_t words = (p + 63) / 64;
	uint64_t *R = xcalloc((size_t)(S + 1) * nr * words, sizeof(uint64_t));
	uint64_t *X = xcalloc((size_t)S * nr * words, sizeof(uint64_t));
	uint64_t *later = xmalloc(words * sizeof(uint64_t));

	for (uint32_t t = S; t-- > 0;)
		for (uint32_t i = 0; i < nr; i++) {
			uint32_t x = sched_group_rep_node(H, i), q = peer(pl, c, x, t);
			uint32_t iq = sched_group_split(H, q, &h);
			uint64_t *dst = R + ((size_t)t * nr + i) * words;

			memcpy(dst, R + ((size_t)(t + 1) * nr + i) * words,
			       words * sizeof(uint64_t));
			translate_set(H, R + ((size_t)(t + 1) * nr + iq) * words, h, dst, words);
			dst[q / 64] |= 1ull << (q % 64);
		}
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t r = sched_group_rep_node(H, i);

		memset(later, 0, words * sizeof(uint64_t));
		for (uint32_t s = S; s-- > 0;) {
			uint32_t q = peer(pl, c, r, s), iq = sched_group_split(H, q, &h);
			uint64_t *dst = X + ((size_t)s * nr + i) * words;

			translate_set(H, R + ((size_t)(s + 1) * nr + iq) * words, h, dst, words);
			dst[q / 64] |= 1ull << (q % 64);
			dst[r / 64] &= ~(1ull << (r % 64));
			for (size_t w = 0; w < words; w++) {
				dst[w] &= ~later[w];
				later[w] |= dst[w];
			}
		}
	}
	free(R);
	free(later);
	return X;
}

/* The subgroup of translations the program is reduced by (in H, which
 * starts as the torus's translations). */
static int reduced_group(const struct tplan *pl, struct sched_group *H, struct ofc_error *err)
{
	uint32_t step[SCHED_GROUP_MAX_DIMS];

	if (!pl->rd) {
		/* Peers keep the parity of every coordinate: the even translations. */
		for (uint32_t i = 0; i < pl->D; i++)
			step[i] = 2;
		return sched_group_restrict(H, step, err);
	}
	/* Peers r XOR 2^s in a coordinate of power-of-two size: XOR on the ids,
	 * whose translations keep the peers and so, by induction over the
	 * steps, the block sets. */
	uint32_t k = (uint32_t)__builtin_ctz(pl->p);

	if (k > SCHED_GROUP_MAX_DIMS)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: too many", pl->p);
	for (uint32_t i = 0; i < k; i++)
		step[i] = 2;
	sched_group_make(H, step, k);
	return 0;
}

/* Figures alone: a latency-optimal step is every representative's run of
 * the p blocks to its peer, routed as route_step routes the program's (the
 * same calls, so the same figures). */
static void reduced_figures(const struct tplan *pl, const struct sched_group *H,
			    enum swing_variant v, struct torus_figures *f)
{
	struct loads L;
	uint32_t p = pl->p, k = pl->k;

	loads_init(&L, pl);
	L.orbits = H;
	L.now = 1;
	for (uint32_t st = 0; st < pl->S; st++) {
		for (uint32_t c = 0; c < k; c++) {
			uint32_t lo, hi;

			share_of(c, k, &lo, &hi);
			for (uint32_t i = 0; i < H->reps; i++) {
				uint32_t rn = sched_group_rep_node(H, i);

				route(&L, rn, peer(pl, c, rn, st), p * (sched_frac(hi - lo) / p));
			}
		}
		loads_step(&L, f);
	}
	loads_done(&L, pl, v, k, f);
}

/* Latency-optimal: one span of all p blocks per representative,
 * collective and step (a transfer a block was 16.7 M at 65,536 nodes). */
static void program_latency(const struct tplan *pl, const struct sched_group *H, struct schedule *s)
{
	uint32_t span = (uint32_t)__builtin_ctz(pl->p); /* p is a power of two */
	uint32_t k = pl->k, nr = H->reps;

	sched_reserve(s, (size_t)pl->S * k * nr);
	for (uint32_t st = 0; st < pl->S; st++) {
		sched_step(s);
		for (uint32_t c = 0; c < k; c++) {
			uint32_t lo, hi;

			share_of(c, k, &lo, &hi);
			for (uint32_t i = 0; i < nr; i++) {
				uint32_t rn = sched_group_rep_node(H, i);
				struct xfer x = {.src = (uint16_t)rn,
						 .dst = (uint16_t)peer(pl, c, rn, st),
						 .block = 0,
						 .offset = lo,
						 .length = hi - lo,
						 .lane = SCHED_NO_LANE,
						 .flags = xfer_span_flags(
						     xfer_flags(DIR_NONE, XFER_REDUCE), span)};

				sched_add(s, &x);
			}
		}
	}
}

/* Bandwidth-optimal: p - 1 transfers per representative and collective in
 * each half. Reduce-scatter: the representative's SEND sets; allgather in
 * reverse: r sends q what q sent it, SEND(q) being the translate of
 * SEND(rep(q)). */
static void program_bandwidth(const struct tplan *pl, const struct sched_group *H,
			      struct schedule *s)
{
	uint32_t p = pl->p, S = pl->S, k = pl->k, nr = H->reps;
	size_t words = (p + 63) / 64;
	uint64_t **X = xcalloc(k, sizeof(uint64_t *));

	for (uint32_t c = 0; c < k; c++)
		X[c] = send_sets_reduced(pl, c, H);
	sched_reserve(s, 2 * (size_t)k * nr * (p - 1));
	for (uint32_t t = 0; t < 2 * S; t++) {
		bool gather = t >= S;
		uint32_t st = gather ? 2 * S - 1 - t : t;

		sched_step(s);
		for (uint32_t c = 0; c < k; c++) {
			uint32_t lo, hi;

			share_of(c, k, &lo, &hi);
			for (uint32_t i = 0; i < nr; i++) {
				uint32_t rn = sched_group_rep_node(H, i), q = peer(pl, c, rn, st);
				uint32_t h = 0, iq = gather ? sched_group_split(H, q, &h) : i;
				const uint64_t *set = X[c] + ((size_t)st * nr + iq) * words;

				for (size_t w = 0; w < words; w++)
					for (uint64_t m = set[w]; m; m &= m - 1) {
						uint32_t b =
						    (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));

						if (gather)
							add(s, rn, q, sched_group_add(H, b, h), lo,
							    hi, XFER_COPY);
						else
							add(s, rn, q, b, lo, hi, XFER_REDUCE);
					}
			}
		}
	}
	for (uint32_t c = 0; c < k; c++)
		free(X[c]);
	free(X);
}

/* Routed loads of the arc orbits: the busiest orbit is the busiest arc.
 * Recursive doubling: XOR keeps no arc orbit, so every node's message is
 * routed, each (src, dst) pair of the step's program once with its total
 * (every translate of a pair carries the same). */
static void program_loads(const struct tplan *pl, const struct sched_group *H,
			  const struct schedule *s, enum swing_variant v, struct torus_figures *f)
{
	struct loads L;
	struct pair {
		uint32_t src, dst;
		double v;
	} *pairs = NULL;
	size_t npairs = 0, cap_pairs = 0;

	loads_init(&L, pl);
	L.orbits = pl->rd ? NULL : H;
	L.now = 1;
	for (uint32_t st = 0; st < s->nsteps; st++) {
		npairs = 0;
		if (!pl->rd) {
			route_step(&L, s, st);
			loads_step(&L, f);
			continue;
		}
		for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
			const struct xfer *x = &s->xfers[i];
			size_t j = 0;

			while (j < npairs && (pairs[j].src != x->src || pairs[j].dst != x->dst))
				j++;
			if (j == npairs) {
				GROW(pairs, cap_pairs, npairs + 1);
				pairs[npairs++] = (struct pair){x->src, x->dst, 0};
			}
			pairs[j].v += xfer_blocks(x) * (sched_frac(x->length) / pl->p);
		}
		for (size_t j = 0; j < npairs; j++)
			for (uint32_t e = 0; e < H->order; e++)
				route(&L, pairs[j].src ^ e, pairs[j].dst ^ e, pairs[j].v);
		loads_step(&L, f);
	}
	free(pairs);
	loads_done(&L, pl, v, pl->k, f);
}

int torus_allreduce_reduced(const struct topo_tree *t, enum torus_algo a, enum swing_variant v,
			    const struct sched_group *G, struct sched_reduced *r,
			    struct torus_figures *f, struct ofc_error *err)
{
	const char *algo = torus_algo_name(a);
	struct tplan pl;
	struct sched_group H = *G; /* G may be &r->group */

	memset(f, 0, sizeof(*f));
	if (r)
		memset(r, 0, sizeof(*r));
	if (make_plan(t, algo, a == TORUS_RECURSIVE_DOUBLING, true, &pl, err) < 0)
		return -1;
	if (H.nodes != pl.p || H.reps != 1 || H.ndims != pl.D)
		return ofc_error_set(err, OFC_E_INPUT, "the group is not %s's translations",
				     t->spec);
	if (v == SWING_LATENCY && (pl.p & (pl.p - 1)))
		return ofc_error_set(err, OFC_E_INPUT,
				     "latency-optimal %s needs a power-of-two node count (%u "
				     "nodes); the bandwidth-optimal one handles even sizes",
				     algo, pl.p);
	/* Memory is the caller's estimate (torus_allreduce_reduced_transfers). */
	if (v == SWING_LATENCY && pl.p > SWING_REDUCED_LATENCY_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: reduced latency-optimal %s schedules are built for "
				     "up to %u nodes (transfers name nodes in 16 bits)",
				     pl.p, algo, SWING_REDUCED_LATENCY_NODES);
	if (reduced_group(&pl, &H, err) < 0)
		return -1;
	if (!r) {
		if (v != SWING_LATENCY || pl.rd)
			return ofc_error_set(err, OFC_E_INPUT,
					     "only latency-optimal swing has its reduced figures "
					     "without the program");
		reduced_figures(&pl, &H, v, f);
		return 0;
	}
	struct schedule *s = &r->prog;

	r->group = H;
	sched_init(s, SCHED_ALLREDUCE, algo, pl.p);
	snprintf(s->topology, sizeof(s->topology), "%s", t->spec);
	/* The representatives' sends, as build() writes every node's; their
	 * number is known, so the program is allocated once. */
	if (v == SWING_LATENCY)
		program_latency(&pl, &H, s);
	else
		program_bandwidth(&pl, &H, s);
	program_loads(&pl, &H, s, v, f);
	return 0;
}
