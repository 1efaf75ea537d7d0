/* ofc finder --nodes N --degree D: the Pareto frontier of (T_L, T_B) over
 * base topologies and expansions, and the pick for a workload. */
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "Every candidate has exactly N nodes of degree D: base families evaluated by BFB\n"
    "and their line-graph, degree, power and product expansions priced by the paper's\n"
    "formulas (or by BFB on the expanded graph where that is cheap and better).\n\n"
    "  --nodes N        hosts\n"
    "  --degree D       ports per host\n"
    "  --collective C   allreduce (default), allgather or reduce-scatter\n"
    "  --size M         data per node for the pick (default 1MiB)\n"
    "  --alpha T        latency per step (default 10us)\n"
    "  --bandwidth B    a node's egress bandwidth (default 100Gbps)\n"
    "  --json           print the frontier and the pick as JSON\n"
    "  --threads N      worker threads (default: all CPUs)\n";

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

static void write_json(const struct finder_req *q, const struct finder_result *r)
{
	const struct sched_cost *cost = &q->cost;
	unsigned k = q->k;
	char buf[64];

	struct json_writer w;

	jw_init(&w, stdout, true);
	jw_obj_begin(&w);
	jw_key(&w, "nodes");
	jw_uint(&w, q->n);
	jw_key(&w, "degree");
	jw_uint(&w, q->d);
	jw_key(&w, "collective");
	jw_str(&w, sched_collective_name(q->coll));
	jw_key(&w, "size_bytes");
	jw_uint(&w, cost->size);
	jw_key(&w, "alpha_us");
	jw_double(&w, cost->alpha * 1e6);
	jw_key(&w, "bandwidth_bps");
	jw_double(&w, cost->bandwidth);
	jw_key(&w, "lower_bound_us");
	jw_double(&w, q->lb_us);
	jw_key(&w, "lower_bound_steps");
	jw_uint(&w, q->lb.steps);
	jw_key(&w, "lower_bound_tau_b");
	jw_double(&w, frac_value(q->lb.tau_b));
	jw_key(&w, "frontier");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->n; i++) {
		const struct finder_entry *e = &r->front[i];
		struct frac tk = frac_mul(e->tau_b, frac_make(k, 1));

		jw_obj_begin(&w);
		jw_key(&w, "spec");
		jw_str(&w, e->spec);
		jw_key(&w, "how");
		jw_str(&w, e->how);
		jw_key(&w, "tau_l");
		jw_uint(&w, k * e->steps);
		jw_key(&w, "tau_b");
		jw_double(&w, k * e->tau_b_value);
		jw_key(&w, "tau_b_fraction");
		if (frac_valid(tk))
			jw_str(&w, frac_str(tk, buf, sizeof(buf)));
		else
			jw_null(&w);
		jw_key(&w, "time_us");
		jw_double(&w, finder_time_us(e, q->coll, cost));
		jw_key(&w, "bw_optimal");
		jw_bool(&w, e->bw_optimal);
		jw_key(&w, "moore_optimal");
		jw_bool(&w, e->moore_optimal);
		jw_key(&w, "exact");
		jw_bool(&w, e->exact);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "pick");
	jw_obj_begin(&w);
	jw_key(&w, "spec");
	jw_str(&w, r->front[q->pick].spec);
	jw_key(&w, "index");
	jw_uint(&w, q->pick);
	jw_key(&w, "time_us");
	jw_double(&w, finder_time_us(&r->front[q->pick], q->coll, cost));
	jw_obj_end(&w);
	jw_key(&w, "graphs_evaluated");
	jw_uint(&w, r->evaluated);
	jw_key(&w, "seconds");
	jw_double(&w, r->seconds);
	jw_obj_end(&w);
	jw_finish(&w);
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

int cmd_finder(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"nodes", required_argument, NULL, 'n'},
	    {"degree", required_argument, NULL, 'd'},
	    {"collective", required_argument, NULL, 'c'},
	    {"size", required_argument, NULL, 's'},
	    {"alpha", required_argument, NULL, 'A'},
	    {"bandwidth", required_argument, NULL, 'B'},
	    {"json", no_argument, NULL, 'j'},
	    {"threads", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct sched_cost cost = {.alpha = 10e-6, .bandwidth = 100e9, .size = 1u << 20};
	enum sched_collective coll = SCHED_ALLREDUCE;
	uint32_t n = 0, d = 0;
	unsigned threads = 0;
	bool json = false, have_n = false, have_d = false;
	struct finder_result r;
	struct ofc_error err = {0};
	int c;

	while ((c = cli_getopt(cmd, argc, argv, "n:d:c:s:A:B:jt:h", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'n':
			if (cli_opt_u32(cmd, "nodes", optarg, 2, SCHED_MAX_NODES,
					"node ids in a schedule are 16 bits", &n))
				return 2;
			have_n = true;
			break;
		case 'd':
			if (cli_opt_u32(cmd, "degree", optarg, 1, BFB_MAX_DEGREE,
					"BFB's link masks are 64 bits", &d))
				return 2;
			have_d = true;
			break;
		case 'c':
			if (sched_collective_parse(optarg, &coll) < 0 || coll == SCHED_ALLTOALL)
				return cli_usage_error(
				    cmd, "--collective must be allreduce, allgather or "
					 "reduce-scatter");
			break;
		case 's':
			if (cli_opt_size(cmd, "size", optarg, &cost.size))
				return 2;
			break;
		case 'A':
			if (cli_opt_duration(cmd, "alpha", optarg, &cost.alpha))
				return 2;
			break;
		case 'B':
			if (cli_opt_rate(cmd, "bandwidth", optarg, &cost.bandwidth))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			if (parse_u32(optarg, &threads) < 0 || threads > 64)
				return cli_usage_error(cmd, "--threads must be 0..64");
			break;
		case 'h':
			return cli_help(cmd, help);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!have_n || !have_d)
		return cli_usage_error(cmd, "missing --%s", have_n ? "degree" : "nodes");
	if (d >= n)
		return cli_usage_error(cmd, "--degree %u needs more than %u nodes", d, d);
	if (finder_run(n, d, threads, &r, &err) < 0)
		return cli_fail(&err);

	struct finder_req q = {.n = n, .d = d, .coll = coll, .cost = cost};

	cost_lower_bound(coll, n, d, &q.lb);
	q.lb_us = cost_time_us(&cost, q.lb.steps, frac_value(q.lb.tau_b));
	q.pick = finder_pick(&r, &coll, &cost, 1);
	q.k = cost_phases(coll);
	if (json)
		write_json(&q, &r);
	else
		write_text(&q, &r);
	finder_free(&r);
	return 0;
}
