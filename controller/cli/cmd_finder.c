/* ofc finder --nodes N --degree D: the Pareto frontier of (T_L, T_B) over
 * base topologies and expansions, and the pick for a workload. */
#include "alltoall/alltoall.h"
#include "controller/cli/internal.h"
#include "controller/export/export.h"
#include "controller/pick/pick.h"
#include "proto/finder.pb-c.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What the finder was asked, and the figures every output shows. */
struct finder_req {
	uint32_t n, d;
	enum sched_collective coll;
	struct sched_cost cost;
	struct cost_bound lb;
	double lb_us;
	unsigned k; /* phases: 2 for allreduce */
	size_t pick;
};

/* The answer as its message (proto/finder.proto), printed by the encoder. */
static void write_json(const struct finder_req *q, const struct finder_result *r)
{
	const struct sched_cost *cost = &q->cost;
	unsigned k = q->k;
	char(*fr)[64] = xcalloc(r->n + 1, sizeof(*fr));
	Ofc__V1__FinderEntry *e = xcalloc(r->n + 1, sizeof(*e));
	Ofc__V1__FinderEntry **ep = xcalloc(r->n + 1, sizeof(*ep));
	Ofc__V1__FinderPick pick = OFC__V1__FINDER_PICK__INIT;
	Ofc__V1__FinderAnswer m = OFC__V1__FINDER_ANSWER__INIT;
	struct json_writer w;

	for (size_t i = 0; i < r->n; i++) {
		const struct finder_entry *fe = &r->front[i];
		struct frac tk = frac_mul(fe->tau_b, frac_make(k, 1));

		e[i] = (Ofc__V1__FinderEntry)OFC__V1__FINDER_ENTRY__INIT;
		e[i].spec = (char *)fe->spec;
		e[i].how = (char *)fe->how;
		e[i].has_tau_l = e[i].has_tau_b = e[i].has_time_us = true;
		e[i].tau_l = k * fe->steps;
		e[i].tau_b = k * fe->tau_b_value;
		if (frac_valid(tk))
			e[i].tau_b_fraction = (char *)frac_str(tk, fr[i], sizeof(fr[i]));
		e[i].time_us = finder_time_us(fe, q->coll, cost);
		e[i].has_bw_optimal = e[i].has_moore_optimal = e[i].has_exact = true;
		e[i].bw_optimal = fe->bw_optimal;
		e[i].moore_optimal = fe->moore_optimal;
		e[i].exact = fe->exact;
		ep[i] = &e[i];
	}
	pick.spec = (char *)r->front[q->pick].spec;
	pick.has_index = pick.has_time_us = true;
	pick.index = q->pick;
	pick.time_us = finder_time_us(&r->front[q->pick], q->coll, cost);
	m.has_nodes = m.has_degree = m.has_size_bytes = m.has_alpha_us = true;
	m.nodes = q->n;
	m.degree = q->d;
	m.collective = (char *)sched_collective_name(q->coll);
	m.size_bytes = cost->size;
	m.alpha_us = cost->alpha * 1e6;
	m.has_bandwidth_bps = m.has_lower_bound_us = m.has_lower_bound_steps = true;
	m.bandwidth_bps = cost->bandwidth;
	m.lower_bound_us = q->lb_us;
	m.lower_bound_steps = q->lb.steps;
	m.has_lower_bound_tau_b = true;
	m.lower_bound_tau_b = frac_value(q->lb.tau_b);
	m.n_frontier = r->n;
	m.frontier = ep;
	m.pick = &pick;
	m.has_graphs_evaluated = m.has_seconds = true;
	m.graphs_evaluated = r->evaluated;
	m.seconds = r->seconds;
	jw_init(&w, stdout, true);
	pb_write_json(&w, &m.base);
	jw_finish(&w);
	free(ep);
	free(e);
	free(fr);
}

static void write_text(const struct finder_req *q, const struct finder_result *r)
{
	const struct sched_cost *cost = &q->cost;
	unsigned k = q->k;
	char buf[64], a[48], b[48], m[48];

	fmt_size(m, sizeof(m), cost->size);
	fmt_duration(a, sizeof(a), cost->alpha);
	fmt_rate(b, sizeof(b), cost->bandwidth);
	printf("Pareto frontier for %u nodes of degree %u, %s (%s = %s):\n", q->n, q->d,
	       sched_collective_name(q->coll), k == 2 ? "reduce-scatter + allgather" : "T_L + T_B",
	       k == 2 ? "2 x allgather" : "one phase");
	printf("  %5s  %-24s %11s  %s\n", "tau_L", "tau_B", "time_us", "topology");
	for (size_t i = 0; i < r->n; i++) {
		const struct finder_entry *e = &r->front[i];
		struct frac tk = frac_mul(e->tau_b, frac_make(k, 1));
		char tb[64];

		if (frac_valid(tk) && tk.den != 1)
			snprintf(tb, sizeof(tb), "%s = %.4f", frac_str(tk, buf, sizeof(buf)),
				 k * e->tau_b_value);
		else
			snprintf(tb, sizeof(tb), "%.6g", k * e->tau_b_value);
		printf("%s %5u  %-24s %11.1f  %s\n", i == q->pick ? "*" : " ", k * e->steps, tb,
		       finder_time_us(e, q->coll, cost), e->spec);
		printf("  %5s  %s%s%s%s\n", "", e->how, e->bw_optimal ? "; BW-optimal" : "",
		       e->moore_optimal ? "; Moore-optimal" : "",
		       e->exact ? "" : "; T_B is the paper's upper bound");
	}
	printf("pick (*) for M = %s, alpha = %s, B = %s: %s at %.1f us (lower bound %.1f "
	       "us)\n",
	       m, a, b, r->front[q->pick].spec, finder_time_us(&r->front[q->pick], q->coll, cost),
	       q->lb_us);
	printf("%llu graphs evaluated by BFB in %.2f s\n", (unsigned long long)r->evaluated,
	       r->seconds);
}

/* ---- all-to-all: torus or expander under NIC-limited hosts ------------------------
 * The all-to-all paper's Fig. 13 (notes alltoall-mcf.md 7): an expander's
 * shorter paths raise theta only while the hosts can feed them. With NIC
 * forwarding a host only injects its own N-1 shards, so theta <= beta / (N-1)
 * (beta = injection in links) caps both graphs alike: below theta_torus (N-1)
 * links the expander no longer beats the torus. With host forwarding every
 * relayed hop costs injection too, so fewer hops keep paying. */

/* The most balanced k-dimensional torus on n nodes (every side >= 3), or
 * false. */
static bool torus_shape(uint32_t n, uint32_t k, uint32_t lo, uint32_t *side)
{
	if (k == 1) {
		side[0] = n;
		return n >= lo && n >= 3;
	}
	/* sides in ascending order: the first at most the k-th root */
	for (uint32_t a = (uint32_t)floor(pow(n, 1.0 / k) + 1e-9); a >= lo && a >= 3; a--)
		if (n % a == 0 && torus_shape(n / a, k - 1, a, side + 1)) {
			side[0] = a;
			return true;
		}
	return false;
}

struct a2a_cand {
	char spec[64];
	double theta, theta_free; /* at the injection; without a limit */
	bool ok, optimal;
	char why[520];
};

static void a2a_solve(struct a2a_cand *c, double beta, bool nic, unsigned threads)
{
	struct graph *g = NULL;
	struct ofc_error err = {0};
	struct mcf_result r;

	if (topo_build(c->spec, &g, &err) < 0) {
		snprintf(c->why, sizeof(c->why), "%s", err.msg);
		return;
	}
	for (int limited = 0; limited < 2; limited++) {
		struct mcf_opts o = {.threads = threads,
				     .time_limit = 60,
				     .injection = limited ? beta : 0,
				     .nic_forwarding = nic};

		if (mcf_solve(g, &o, &r, &err) < 0) {
			snprintf(c->why, sizeof(c->why), "%s", err.msg);
			graph_free(g);
			return;
		}
		*(limited ? &c->theta : &c->theta_free) = r.theta;
		c->optimal = limited ? c->optimal && r.optimal : r.optimal;
		mcf_result_free(&r);
	}
	graph_free(g);
	c->ok = true;
}

static int finder_alltoall(uint32_t n, uint32_t d, const struct sched_cost *cost, double inj,
			   bool nic, unsigned threads, bool json)
{
	struct a2a_cand c[2] = {0};
	double b = cost->bandwidth / d; /* one link, bits/s */
	double beta = inj > 0 && inj < cost->bandwidth ? inj / b : 0;
	uint32_t side[8];

	if (d % 2 == 0 && d / 2 <= 8 && torus_shape(n, d / 2, 3, side)) {
		int at = snprintf(c[0].spec, sizeof(c[0].spec), "torus:");
		for (uint32_t i = 0; i < d / 2; i++)
			at += snprintf(c[0].spec + at, sizeof(c[0].spec) - (size_t)at, "%s%u",
				       i ? "x" : "", side[i]);
		a2a_solve(&c[0], beta, nic, threads);
	} else if (d % 2) {
		snprintf(c[0].why, sizeof(c[0].why), "no torus of odd degree %u", d);
	} else {
		snprintf(c[0].why, sizeof(c[0].why),
			 "no %u-dimensional torus of %u nodes with every side at least 3", d / 2,
			 n);
	}
	snprintf(c[1].spec, sizeof(c[1].spec), "genkautz:%u,%u", n, d);
	a2a_solve(&c[1], beta, nic, threads);

	/* theta is per link, per ordered pair: a shard of M/N bytes takes
	 * (M/N) / (theta b). */
	double shard = (double)cost->size * 8 / n;
	bool both = c[0].ok && c[1].ok;
	double gain = both ? c[1].theta / c[0].theta : 0;
	bool beats = both && gain > 1 + 1e-6;
	/* NIC forwarding: the injection below which the cap beta / (N-1)
	 * binds the torus (the expander no longer wins), and above which the
	 * expander reaches its unlimited theta. */
	double tie = both ? c[0].theta_free * (n - 1) * b : 0,
	       full = c[1].ok ? c[1].theta_free * (n - 1) * b : 0;
	char verdict[640];

	if (!both)
		snprintf(verdict, sizeof(verdict), "no comparison: %s",
			 c[0].ok ? c[1].why : c[0].why);
	else if (!beats)
		snprintf(verdict, sizeof(verdict),
			 "the expander no longer beats the torus: the hosts' injection binds both "
			 "(theta %.6g)",
			 c[0].theta);
	else
		snprintf(verdict, sizeof(verdict), "the expander beats the torus by %.3gx%s", gain,
			 beta > 0 ? "" : " (hosts not limited)");

	if (json) {
		Ofc__V1__FinderAlltoallCandidate cand[2], *cp[2];
		Ofc__V1__FinderAlltoallAnswer m = OFC__V1__FINDER_ALLTOALL_ANSWER__INIT;
		struct json_writer w;

		for (int i = 0; i < 2; i++) {
			cand[i] = (Ofc__V1__FinderAlltoallCandidate)
			    OFC__V1__FINDER_ALLTOALL_CANDIDATE__INIT;
			cand[i].kind = i ? "expander" : "torus";
			cand[i].spec = c[i].spec;
			if (c[i].ok) {
				cand[i].has_theta = cand[i].has_theta_unlimited = true;
				cand[i].has_optimal = cand[i].has_t_b_us = true;
				cand[i].theta = c[i].theta;
				cand[i].theta_unlimited = c[i].theta_free;
				cand[i].optimal = c[i].optimal;
				cand[i].t_b_us = shard / (c[i].theta * b) * 1e6;
			} else {
				cand[i].why = c[i].why;
			}
			cp[i] = &cand[i];
		}
		m.has_nodes = m.has_degree = m.has_injection_bps = m.has_injection_links = true;
		m.nodes = n;
		m.degree = d;
		m.collective = "alltoall";
		m.injection_bps = beta > 0 ? inj : 0;
		m.injection_links = beta;
		m.host_forwarding = nic ? "nic" : "host";
		m.n_candidates = 2;
		m.candidates = cp;
		m.has_expander_beats_torus = true;
		m.expander_beats_torus = beats;
		m.has_gain = both;
		m.gain = gain;
		m.has_nic_tie_injection_bps = m.has_nic_full_injection_bps = both && nic;
		m.nic_tie_injection_bps = tie;
		m.nic_full_injection_bps = full;
		m.verdict = verdict;
		jw_init(&w, stdout, true);
		pb_write_json(&w, &m.base);
		jw_finish(&w);
		return 0;
	}
	char ib[32], bb[32], mb[32], t1[32], t2[32];
	fmt_rate(ib, sizeof(ib), inj);
	fmt_rate(bb, sizeof(bb), b);
	fmt_size(mb, sizeof(mb), cost->size);
	printf("all-to-all on %u nodes of degree %u, links %s, M = %s, hosts %s%s%s:\n", n, d, bb,
	       mb, beta > 0 ? "inject " : "not limited", beta > 0 ? ib : "",
	       beta > 0 ? (nic ? " (NIC forwarding)" : " (host forwarding)") : "");
	printf("  %-8s %-20s %12s %12s %12s\n", "", "topology", "theta", "unlimited", "T_B us");
	for (int i = 0; i < 2; i++) {
		if (!c[i].ok) {
			printf("  %-8s %-20s %s\n", i ? "expander" : "torus", c[i].spec, c[i].why);
			continue;
		}
		printf("  %-8s %-20s %12.6g %12.6g %12.1f%s\n", i ? "expander" : "torus", c[i].spec,
		       c[i].theta, c[i].theta_free, shard / (c[i].theta * b) * 1e6,
		       c[i].optimal ? "" : " (within the MCF's gap)");
	}
	printf("%s\n", verdict);
	if (both && beta > 0 && nic) {
		fmt_rate(t1, sizeof(t1), tie);
		fmt_rate(t2, sizeof(t2), full);
		printf("with NIC forwarding a host injects only its own N-1 shards: below %s the "
		       "torus is as good; the expander's full lead needs %s\n",
		       t1, t2);
	} else if (both && beta > 0) {
		printf("with host forwarding every relayed hop costs injection: the expander's "
		       "shorter paths keep paying at any injection\n");
	}
	return 0;
}

struct finder_opts {
	struct pick_model model;
	uint64_t size;
	enum sched_collective coll;
	uint32_t n, d, threads;
	int nic;
	bool json;
	double inj;
};

static const struct opt_choice forwarding[] = {{"host", 0}, {"nic", 1}, {NULL}};

#define O(f) offsetof(struct finder_opts, f)
static const struct opt finder_table[] = {
    {"nodes", cli_row_u32, O(n), "N", "the number of hosts", 2, SCHED_MAX_NODES,
     "node ids in a schedule are 16 bits", OPT_REQUIRED, 'n'},
    {"degree", cli_row_u32, O(d), "D", "ports per host", 1, BFB_MAX_DEGREE,
     "BFB's link masks are 64 bits", OPT_REQUIRED, 'd'},
    {"collective", cli_row_collective, O(coll), "C",
     "allreduce (default), allgather or reduce-scatter; alltoall compares a torus with an "
     "expander (genkautz) by the MCF",
     .letter = 'c'},
    {"size", cli_row_size, O(size), "M", "data per node for the pick (default 1MiB)",
     .letter = 's'},
    {"alpha", cli_row_duration, O(model.alpha), "T", "latency per step (default 10us)",
     .letter = 'A'},
    {"bandwidth", cli_row_rate, O(model.node_rate), "B",
     "a node's egress bandwidth (default 100Gbps)", .letter = 'B'},
    {"injection", cli_row_rate, O(inj), "I",
     "alltoall: a host's injection bandwidth (NIC-limited hosts)", .letter = 'I'},
    {"forwarding", cli_row_choice, O(nic), "host|nic",
     "alltoall: host (relays cross the host, default) or nic", .expect = "host or nic",
     .letter = 'W', .choices = forwarding},
    {"json", NULL, O(json), NULL, "print the frontier and the pick as JSON", .letter = 'j'},
    {"threads", cli_row_u32, O(threads), "N", "worker threads (default 0: all CPUs)", 0, 64,
     .letter = 't'},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table finder_cli_table = {"finder", finder_table, sizeof(struct finder_opts)};

static const struct cli_opts finder_opts = {
    finder_table,
    "Every candidate has exactly N nodes of degree D: base families evaluated by BFB\n"
    "and their line-graph, degree, power and product expansions priced by the paper's\n"
    "formulas (or by BFB on the expanded graph where that is cheap and better).\n",
};

int cmd_finder(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct finder_opts o = {.size = 1u << 20, .coll = SCHED_ALLREDUCE};
	struct pick_result r;
	struct sched_cost cost;
	struct ofc_error err = {0};
	int first, rc;

	pick_model_default(&o.model);
	if (!cli_parse(cmd, &finder_opts, argc, argv, &o, &first, &rc))
		return rc;
	if (first < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);

	uint32_t n = o.n, d = o.d;
	bool have_n = n != 0, have_d = d != 0, nic = o.nic, json = o.json;
	unsigned threads = o.threads;
	enum sched_collective coll = o.coll;
	uint64_t size = o.size;
	double inj = o.inj;
	struct pick_model model = o.model;

	if (!have_n || !have_d)
		return cli_usage_error(cmd, "missing --%s", have_n ? "degree" : "nodes");
	if (d >= n)
		return cli_usage_error(cmd, "--degree %u needs more than %u nodes", d, d);
	if (inj > 0 && coll != SCHED_ALLTOALL)
		return cli_usage_error(cmd, "--injection goes with --collective alltoall");
	cost = pick_cost(&model, d, size);
	if (coll == SCHED_ALLTOALL)
		return finder_alltoall(n, d, &cost, inj, nic, threads, json);

	struct pick_work work = {.op = coll, .size = size, .weight = 1};
	struct pick_request pq = {
	    .nodes = n, .degree = d, .threads = threads, .model = model, .work = &work, .nwork = 1};
	if (pick_run(&pq, &r, &err) < 0)
		return cli_fail(&err);

	struct finder_req q = {.n = n, .d = d, .coll = coll, .cost = cost, .pick = r.pick};

	cost_lower_bound(coll, n, d, &q.lb);
	q.lb_us = cost_time_us(&cost, q.lb.steps, frac_value(q.lb.tau_b));
	q.k = cost_phases(coll);
	if (json)
		write_json(&q, &r.front);
	else
		write_text(&q, &r.front);
	pick_free(&r);
	return 0;
}
