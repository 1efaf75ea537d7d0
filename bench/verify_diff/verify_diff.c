/* Differential check (bench/verify_diff/run.sh builds it): a reference
 * commit's verifier, renamed sched_verify_old, against this tree's on
 * all-to-all schedules of every algorithm and lowering on small tori,
 * hypercubes, generalized Kautz graphs and a ring, with and without runs,
 * each corrupted at random (dropped, duplicated, misrouted, early, late,
 * re-blocked, wrong lane, runs cut, pieces cut or moved, reducing, split,
 * sent again in an extra step; with the topology, without it, and with a
 * node absent), and all-gathers (BFB on generalized Kautz graphs of a few
 * hundred nodes, in whole blocks and in fractional pieces, on a torus and a
 * hypercube, and both rings), corrupted the same ways and as an all-gather
 * goes wrong: a transfer dropped, moved to a later step, its piece's
 * offset or length changed, sent from another in-neighbour of its receiver
 * (over a real link, from a node that may not hold it). This tree's check
 * runs twice, on two threads and on one. The reports are compared field by
 * field, the error text byte for byte, and the per-step link loads; exit 1
 * on any difference. `verify_diff TRIALS allgather` (or alltoall) runs
 * those alone. */
#include "alltoall/alltoall.h"
#include "baselines/baselines.h"
#include "bfb/bfb.h"
#include "sched/sched.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sched_verify_old(const struct schedule *s, const struct verify_opts *o,
		     struct verify_report *r);

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static uint32_t rn(uint32_t k)
{
	return k ? (uint32_t)(rnd() % k) : 0;
}

struct ent {
	uint32_t step;
	struct xfer x;
};

static void rebuild(struct schedule *d, const struct schedule *s, struct ent *e, size_t m,
		    uint32_t nsteps)
{
	sched_init(d, s->collective, s->algorithm, s->nodes);
	/* stable by step */
	size_t *cnt = calloc(nsteps + 1, sizeof(size_t));
	struct ent *o = malloc((m + 1) * sizeof(*o));
	for (size_t i = 0; i < m; i++)
		cnt[e[i].step + 1]++;
	for (uint32_t t = 0; t < nsteps; t++)
		cnt[t + 1] += cnt[t];
	for (size_t i = 0; i < m; i++)
		o[cnt[e[i].step]++] = e[i];
	size_t k = 0;
	for (uint32_t t = 0; t < nsteps; t++) {
		sched_step(d);
		while (k < m && o[k].step == t) {
			sched_add(d, &o[k].x);
			k++;
		}
	}
	free(cnt);
	free(o);
}

static long ncases, nok, nfail, nbad;
/* The all-gathers: this tree's check on one thread as well. */
static bool one_thread;

/* What the reference's reports said, by kind (the error's text after
 * the transfer, digits dropped): that the corruptions reach every check. */
static char kinds[48][80];
static long kind_count[48];
static size_t nkinds;

static void tally(const char *error)
{
	const char *p = strstr(error, "): ");
	char k[80];
	size_t n = 0;

	for (p = p ? p + 3 : error; *p && n + 1 < sizeof(k); p++)
		if (*p < '0' || *p > '9')
			k[n++] = *p;
	k[n] = 0;
	for (size_t i = 0; i < nkinds; i++)
		if (strcmp(kinds[i], k) == 0) {
			kind_count[i]++;
			return;
		}
	if (nkinds < 48) {
		memcpy(kinds[nkinds], k, n + 1);
		kind_count[nkinds++] = 1;
	}
}

static void compare(const char *what, const struct schedule *s, const struct verify_opts *o)
{
	struct verify_report a, b;
	double *la = NULL, *lb = NULL;
	struct verify_opts oa = *o, ob = *o;

	ob.par_min_xfers = 1; /* this tree's threads on the small schedules too */
	if (o->graph) {
		la = calloc(s->nsteps + 1, sizeof(double));
		lb = calloc(s->nsteps + 1, sizeof(double));
		oa.step_link_load = la;
		ob.step_link_load = lb;
	}
	int ra = sched_verify_old(s, &oa, &a);
	int rb = sched_verify(s, &ob, &b);
	ncases++;
	if (one_thread) { /* and this tree's step loop: the same report */
		struct verify_report c;
		double *lc = o->graph ? calloc(s->nsteps + 1, sizeof(double)) : NULL;
		struct verify_opts oc = *o;

		oc.step_loop = true;
		oc.step_link_load = lc;
		int rc = sched_verify(s, &oc, &c);
		bool same1 = rc == rb && c.ok == b.ok && strcmp(c.error, b.error) == 0 &&
			     memcmp(&c.duplicate_blocks, &b.duplicate_blocks, 8) == 0 &&
			     memcmp(&c.sum_max_link_load, &b.sum_max_link_load, 8) == 0 &&
			     (c.ok || (c.bad_step == b.bad_step && c.bad_xfer == b.bad_xfer)) &&
			     (!lc || memcmp(lc, lb, s->nsteps * sizeof(double)) == 0);
		if (!same1) {
			nbad++;
			if (nbad < 20)
				printf("DIFF %s: two threads rc %d '%s' | one rc %d '%s'\n", what,
				       rb, b.error, rc, c.error);
		}
		free(lc);
	}
	bool same = ra == rb && a.ok == b.ok && strcmp(a.error, b.error) == 0 &&
		    a.nsteps == b.nsteps && a.ntransfers == b.ntransfers &&
		    memcmp(&a.sum_max_link_load, &b.sum_max_link_load, 8) == 0 &&
		    memcmp(&a.max_link_load, &b.max_link_load, 8) == 0 &&
		    memcmp(&a.max_total_link_load, &b.max_total_link_load, 8) == 0 &&
		    a.max_wavelengths_used == b.max_wavelengths_used &&
		    memcmp(&a.duplicate_blocks, &b.duplicate_blocks, 8) == 0 &&
		    memcmp(&a.network_cost, &b.network_cost, 8) == 0 &&
		    memcmp(&a.max_utilisation, &b.max_utilisation, 8) == 0;
	if (!a.ok) {
		same = same && a.bad_step == b.bad_step && a.bad_xfer == b.bad_xfer;
	}
	if (la && memcmp(la, lb, s->nsteps * sizeof(double)) != 0)
		same = false;
	if (ra == 0)
		nok++;
	else
		nfail++;
	if (ra != 0)
		tally(a.error);
	if (!same) {
		nbad++;
		if (nbad < 20)
			printf("DIFF %s: old rc %d ok %d dup %.17g '%s' | new rc %d ok %d dup "
			       "%.17g '%s'\n",
			       what, ra, a.ok, a.duplicate_blocks, a.error, rb, b.ok,
			       b.duplicate_blocks, b.error);
	}
	free(la);
	free(lb);
}

/* The schedule's transfers as (step, transfer) entries, in order: k. */
static size_t entries_of(const struct schedule *s, struct ent *e)
{
	size_t k = 0;

	for (uint32_t t = 0; t < s->nsteps; t++)
		for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++)
			e[k++] = (struct ent){t, s->xfers[xi]};
	return k;
}

/* Entry i in two halves, the second appended (still right). */
static void split_halves(struct ent *e, size_t *k, size_t i)
{
	struct xfer *x = &e[i].x;

	if (x->length > 1) {
		e[*k] = e[i];
		uint32_t h = x->length / 2;
		e[*k].x.offset = x->offset + h;
		e[*k].x.length = x->length - h;
		x->length = h;
		(*k)++;
	}
}

/* Entry i again, in its step or a later one. */
static void duplicate_later(struct ent *e, size_t *k, size_t i, uint32_t nsteps)
{
	e[*k] = e[i];
	e[*k].step = e[i].step + rn(2) * rn(nsteps - e[i].step);
	(*k)++;
}

/* A corrupted schedule (k entries over nsteps steps) checked against the
 * topology, every fourth trial without it, every eighth with a node
 * absent, old and new alike. */
static void check_trial(const char *what, const struct schedule *s, const struct graph *g,
			struct ent *e, size_t k, uint32_t nsteps, int tr)
{
	struct verify_opts o = {.graph = g};
	struct verify_opts none = {0};
	uint32_t n = s->nodes;
	struct schedule d;

	rebuild(&d, s, e, k, nsteps);
	compare(what, &d, &o);
	if (tr % 4 == 0)
		compare(what, &d, &none);
	if (tr % 8 == 0) { /* an absent node */
		uint8_t *ab = calloc(n, 1);
		ab[rn(n)] = 1;
		struct verify_opts oo = {.graph = g, .absent = ab};
		compare(what, &d, &oo);
		free(ab);
	}
	sched_free(&d);
}

static void corrupt_and_check(const char *spec, const struct graph *g, const struct schedule *s,
			      int trials)
{
	struct verify_opts o = {.graph = g};
	struct verify_opts none = {0};
	compare(spec, s, &o);
	compare(spec, s, &none);
	size_t m = s->nxfers;
	struct ent *e = malloc((m + 64) * sizeof(*e));
	uint32_t n = s->nodes;
	for (int tr = 0; tr < trials; tr++) {
		size_t k = entries_of(s, e);
		uint32_t nsteps = s->nsteps;
		int nc = 1 + (int)rn(3);
		char what[256];
		int w = snprintf(what, sizeof(what), "%s trial %d:", spec, tr);
		for (int c = 0; c < nc && k; c++) {
			int kind = (int)rn(14);
			size_t i = rn((uint32_t)k);
			struct xfer *x = &e[i].x;
			w += snprintf(what + w, sizeof(what) - (size_t)w, " %d@%zu", kind, i);
			switch (kind) {
			case 0: /* drop */
				e[i] = e[--k];
				break;
			case 1: /* duplicate, same step or later */
				duplicate_later(e, &k, i, nsteps);
				break;
			case 2:
				x->dst = (uint16_t)rn(n);
				break; /* misroute */
			case 3:
				x->src = (uint16_t)rn(n);
				break;
			case 4:
				if (e[i].step)
					e[i].step -= 1 + rn(e[i].step);
				break; /* early */
			case 5:
				e[i].step += rn(nsteps - e[i].step);
				break; /* late */
			case 6:
				x->block = rn(n * n);
				break; /* re-block */
			case 7:
				x->block = (x->block / n) * n + rn(n);
				break; /* other target */
			case 8:
				x->lane = rn(2) ? SCHED_NO_LANE : (uint16_t)rn(6);
				break; /* wrong lane */
			case 9:
				if (x->run)
					x->run -= 1 + rn(x->run);
				else
					x->run = (uint8_t)rn(3);
				break; /* run cut */
			case 10: {     /* piece changes */
				uint32_t r = rn(4);
				if (r == 0 && x->length > 1)
					x->length /= 2;
				else if (r == 1 && x->length > 1) {
					x->offset += x->length / 2;
					x->length -= x->length / 2;
				} else if (r == 2) {
					x->offset = 0;
					x->length = SCHED_ONE;
				} else
					x->length = rn(2) ? 0 : SCHED_ONE;
				break;
			}
			case 11:
				x->flags |= 4;
				break; /* reducing */
			case 12:       /* split a transfer into two halves (valid) */
				split_halves(e, &k, i);
				break;
			case 13: /* duplicate into an extra final step at target again / or add a
				    step */
				e[k] = e[i];
				e[k].step = nsteps;
				nsteps++;
				k++;
				break;
			}
		}
		check_trial(what, s, g, e, k, nsteps, tr);
	}
	free(e);
}

/* x sent to its receiver by another of the receiver's in-neighbours, on
 * that node's port to it: a real link, from a node that may not hold the
 * piece (yet). */
static void other_sender(const struct graph *g, struct xfer *x)
{
	uint32_t k = 0, pick;

	for (uint32_t w = 0; w < g->n; w++)
		for (uint32_t p = g->off[w]; p < g->off[w + 1]; p++)
			k += g->adj[p] == x->dst && w != x->dst;
	pick = rn(k);
	for (uint32_t w = 0; w < g->n; w++)
		for (uint32_t p = g->off[w]; p < g->off[w + 1]; p++)
			if (g->adj[p] == x->dst && w != x->dst && pick-- == 0) {
				x->src = (uint16_t)w;
				x->lane = (uint16_t)(p - g->off[w]);
				return;
			}
}

/* An all-gather corrupted 1 to 3 times at random, checked against the
 * topology (and every fourth without it, every eighth with a node absent). */
static void allgather_trials(const char *spec, const struct graph *g, const struct schedule *s,
			     int trials)
{
	struct verify_opts o = {.graph = g};
	struct verify_opts none = {0};
	compare(spec, s, &o);
	compare(spec, s, &none);
	size_t m = s->nxfers;
	struct ent *e = malloc((m + 64) * sizeof(*e));
	uint32_t n = s->nodes;
	for (int tr = 0; tr < trials; tr++) {
		size_t k = entries_of(s, e);
		uint32_t nsteps = s->nsteps;
		int nc = 1 + (int)rn(3);
		char what[256];
		int w = snprintf(what, sizeof(what), "%s trial %d:", spec, tr);
		for (int c = 0; c < nc && k; c++) {
			int kind = (int)rn(10);
			size_t i = rn((uint32_t)k);
			struct xfer *x = &e[i].x;
			w += snprintf(what + w, sizeof(what) - (size_t)w, " %d@%zu", kind, i);
			switch (kind) {
			case 0: /* drop */
				e[i] = e[--k];
				break;
			case 1: /* later, possibly past the last step */
				e[i].step += 1 + rn(nsteps - e[i].step + 1);
				if (e[i].step >= nsteps)
					nsteps = e[i].step + 1;
				break;
			case 2: /* earlier */
				if (e[i].step)
					e[i].step -= 1 + rn(e[i].step);
				break;
			case 3: /* from another in-neighbour of the receiver */
			case 4:
				other_sender(g, x);
				break;
			case 5: { /* the piece's offset or length */
				uint32_t r = rn(5);
				if (r == 0 && x->length > 1)
					x->length /= 2;
				else if (r == 1 && x->length > 1) {
					x->offset += x->length / 2;
					x->length -= x->length / 2;
				} else if (r == 2) {
					x->offset = 0;
					x->length = SCHED_ONE;
				} else if (r == 3) {
					x->offset = rn(SCHED_ONE);
					x->length = 1 + rn(SCHED_ONE - x->offset);
				} else
					x->length = rn(2) ? 0 : SCHED_ONE;
				break;
			}
			case 6: /* another block */
				x->block = rn(n + 1);
				break;
			case 7: /* duplicated, same step or later */
				duplicate_later(e, &k, i, nsteps);
				break;
			case 8: /* split in two halves (still right) */
				split_halves(e, &k, i);
				break;
			case 9: /* misrouted or reducing */
				if (rn(2))
					x->dst = (uint16_t)rn(n);
				else
					x->flags |= 4;
				break;
			}
		}
		check_trial(what, s, g, e, k, nsteps, tr);
	}
	free(e);
}

/* BFB's all-gathers (whole blocks on genkautz:256,4 and kautz:3,4, halves
 * on genkautz:200,3, pieces of any fraction on genkautz:300,4 and :360,5,
 * hypercube:6), and the rings' on their cycles. */
static void allgathers(int trials)
{
	/* algo -1: BFB, else a baseline */
	const struct {
		const char *spec;
		int algo;
	} cases[] = {
	    {"genkautz:256,4", -1},
	    {"genkautz:300,4", -1},
	    {"genkautz:200,3", -1},
	    {"genkautz:360,5", -1},
	    {"kautz:3,4", -1},
	    {"torus:8x8", -1},
	    {"hypercube:6", -1},
	    {"torus:8x8", BASELINE_RING},
	    {"torus:8x8", BASELINE_BIDIR_RING},
	    {"hypercube:6", BASELINE_RING},
	};

	one_thread = true;
	for (size_t ci = 0; ci < sizeof(cases) / sizeof(*cases); ci++) {
		struct graph *g;
		struct ofc_error err = {0};
		struct schedule s;
		struct bfb_opts bo = {0};
		struct bfb_stats st;
		int rc;

		const char *algo = cases[ci].algo < 0 ? "bfb" : baseline_algo_name(cases[ci].algo);

		if (topo_build(cases[ci].spec, &g, &err)) {
			printf("topo %s: %s\n", cases[ci].spec, err.msg);
			nbad++;
			continue;
		}
		memset(&s, 0, sizeof(s));
		if (cases[ci].algo < 0)
			rc = bfb_schedule(g, SCHED_ALLGATHER, &bo, &s, &st, &err);
		else
			rc = baseline_schedule(g, NULL, cases[ci].algo, SCHED_ALLGATHER, &s, NULL,
					       &err);
		if (rc) {
			printf("build %s %s: %s\n", cases[ci].spec, algo, err.msg);
			nbad++;
			graph_free(g);
			continue;
		}
		char spec[128];
		snprintf(spec, sizeof(spec), "%s %s allgather (%zu xfers)", cases[ci].spec, algo,
			 s.nxfers);
		long b0 = nbad, c0 = ncases, f0 = nfail;
		allgather_trials(spec, g, &s, trials);
		printf("%s: %ld cases, %ld failing, %ld diffs\n", spec, ncases - c0, nfail - f0,
		       nbad - b0);
		fflush(stdout);
		sched_free(&s);
		graph_free(g);
	}
	one_thread = false;
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 200;
	const char *only = argc > 2 ? argv[2] : "";
	bool a2a = strcmp(only, "allgather") != 0;
	const char *topos[] = {"torus:4x4",   "torus:3x5",     "torus:4x4x2",	"hypercube:4",
			       "hypercube:5", "genkautz:16,3", "genkautz:24,4", "ring:6",
			       "torus:6x6",   "genkautz:40,4"};
	const struct {
		enum a2a_algo algo;
		const char *lowering;
	} algos[] = {{A2A_MCF, NULL},	 {A2A_MCF, "paths"}, {A2A_MCF, "single"},
		     {A2A_MCF, "steps"}, {A2A_DIRECT, NULL}, {A2A_SP_BALANCED, NULL}};
	if (strcmp(only, "alltoall") != 0)
		allgathers(trials);
	for (size_t ti = 0; a2a && ti < sizeof(topos) / sizeof(*topos); ti++) {
		struct graph *g;
		struct ofc_error err = {0};
		if (topo_build(topos[ti], &g, &err)) {
			printf("topo %s: %s\n", topos[ti], err.msg);
			continue;
		}
		for (size_t ai = 0; ai < sizeof(algos) / sizeof(*algos); ai++)
			for (int runs = 0; runs < 2; runs++) {
				struct a2a_request q = {
				    .algo = algos[ai].algo,
				    .lowering = algos[ai].lowering
						    ? a2a_lowering_find(algos[ai].lowering)
						    : NULL,
				    .runs = runs};
				struct schedule s;
				struct a2a_outcome out = {0};
				memset(&s, 0, sizeof(s));
				if (a2a_build(g, &q, &s, &out, &err)) {
					printf("build %s %s %s: %s\n", topos[ti],
					       a2a_algo_name(algos[ai].algo),
					       algos[ai].lowering ? algos[ai].lowering : "-",
					       err.msg);
					memset(&err, 0, sizeof(err));
					continue;
				}
				char spec[128];
				snprintf(spec, sizeof(spec), "%s %s/%s runs %d (%zu xfers)",
					 topos[ti], a2a_algo_name(algos[ai].algo),
					 algos[ai].lowering ? algos[ai].lowering : "-", runs,
					 s.nxfers);
				long b0 = nbad, c0 = ncases, f0 = nfail;
				corrupt_and_check(spec, g, &s, trials);
				printf("%s: %ld cases, %ld failing, %ld diffs\n", spec, ncases - c0,
				       nfail - f0, nbad - b0);
				fflush(stdout);
				sched_free(&s);
				a2a_outcome_free(&out);
			}
		graph_free(g);
	}
	for (size_t i = 0; i < nkinds; i++)
		printf("%6ld x %s\n", kind_count[i], kinds[i]);
	printf("TOTAL %ld cases: %ld ok, %ld failing, %ld diffs\n", ncases, nok, nfail, nbad);
	return nbad != 0;
}
