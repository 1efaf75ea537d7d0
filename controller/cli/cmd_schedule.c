/* ofc schedule: the options every schedule shares, then the WDM-ring or the
 * direct-connect family of algorithms. */
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "FILE is a fabric config: a WDM ring in it gets ring schedules, a topology\n"
    "gets direct-connect schedules. --topology SPEC schedules on a topology alone.\n\n"
    "  --collective C   allgather, reduce-scatter, allreduce or alltoall\n"
    "  --algo A         the algorithm, or 'all' to compare them\n"
    "  --size M         data per node, e.g. 64MiB (default: the config's collective)\n"
    "  --alpha T        latency per step, e.g. 10us (default: the config's, or 10us)\n"
    "  --bandwidth B    a node's egress bandwidth, e.g. 100Gbps\n"
    "  --chunks P       split each shard into P equal chunks\n"
    "  --overlap        WDM: pre-tune MRRs for the next stage while idle\n"
    "  --json           print the summary as JSON\n"
    "  --format F -o OUT  write the whole schedule (text, json or pb)\n"
    "  --threads N      worker threads (default: all CPUs)\n"
    "  --lowering L     all-to-all mcf: steps (time-stepped, default), paths\n"
    "                   (weighted, at most d per pair) or single (one path per pair)\n"
    "  --variant V      swing / recursive-doubling: auto (default), bandwidth, latency\n"
    "  --hop-latency T  swing and its baselines: latency per hop, e.g. 400ns\n"
    "  --time-limit T   all-to-all mcf: stop column generation after T (default\n"
    "                   60s; 0 = none) with theta certified within a reported gap\n";

int cmd_schedule(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"topology", required_argument, NULL, 'T'},
	    {"collective", required_argument, NULL, 'c'},
	    {"algo", required_argument, NULL, 'a'},
	    {"size", required_argument, NULL, 's'},
	    {"alpha", required_argument, NULL, 'A'},
	    {"bandwidth", required_argument, NULL, 'B'},
	    {"chunks", required_argument, NULL, 'P'},
	    {"overlap", no_argument, NULL, 'O'},
	    {"json", no_argument, NULL, 'j'},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"threads", required_argument, NULL, 't'},
	    {"lowering", required_argument, NULL, 'L'},
	    {"variant", required_argument, NULL, 'V'},
	    {"hop-latency", required_argument, NULL, 'H'},
	    {"time-limit", required_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct schedule_request req = {.cmd = cmd, .format = FMT_JSON, .time_limit = 60};
	struct ofc_error err = {0};
	bool collective_set = false, format_set = false;
	const char *why;
	int c, rc;

	while ((c = cli_getopt(cmd, argc, argv, "T:c:a:s:A:B:P:Ojf:o:t:L:V:H:h", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'T':
			req.spec = optarg;
			break;
		case 'c':
			if (sched_collective_parse(optarg, &req.collective) < 0)
				return cli_usage_error(cmd,
						       "unknown collective '%s' (allgather, "
						       "reduce-scatter, allreduce, alltoall)",
						       optarg);
			collective_set = true;
			break;
		case 'a':
			req.algo = optarg;
			break;
		case 's':
			if (parse_size(optarg, &req.size, &why) < 0 || req.size == 0)
				return cli_usage_error(cmd, "bad --size '%s': %s", optarg,
						       req.size == 0 && !why ? "must be > 0" : why);
			break;
		case 'A':
			if (parse_duration(optarg, &req.alpha, &why) < 0)
				return cli_usage_error(cmd, "bad --alpha '%s': %s", optarg, why);
			req.alpha_set = true;
			break;
		case 'B':
			if (parse_rate(optarg, &req.bandwidth, &why) < 0 || req.bandwidth <= 0)
				return cli_usage_error(cmd, "bad --bandwidth '%s': %s", optarg,
						       req.bandwidth <= 0 ? "must be > 0" : why);
			req.bandwidth_set = true;
			break;
		case 'P':
			if (parse_u32(optarg, &req.chunks) < 0 || req.chunks < 1 ||
			    req.chunks > 1000000)
				return cli_usage_error(cmd, "--chunks must be 1..1000000");
			break;
		case 'O':
			req.overlap = true;
			break;
		case 'j':
			req.json = true;
			break;
		case 'f':
			if (cli_format(cmd, optarg, FMT_TEXT | FMT_JSON | FMT_PB, &req.format))
				return 2;
			format_set = true;
			break;
		case 'o':
			req.output = optarg;
			break;
		case 't':
			if (parse_u32(optarg, &req.threads) < 0 || req.threads > 64)
				return cli_usage_error(cmd, "--threads must be 0..64");
			break;
		case 'L':
			if (strcmp(optarg, "steps") && strcmp(optarg, "paths") &&
			    strcmp(optarg, "single"))
				return cli_usage_error(cmd, "--lowering is steps, paths or single");
			req.lowering = optarg;
			break;
		case 'V':
			if (strcmp(optarg, "auto") && strcmp(optarg, "bandwidth") &&
			    strcmp(optarg, "latency"))
				return cli_usage_error(cmd,
						       "--variant is auto, bandwidth or latency");
			req.variant = optarg;
			break;
		case 'H':
			if (parse_duration(optarg, &req.hop_latency, &why) < 0)
				return cli_usage_error(cmd, "bad --hop-latency '%s': %s", optarg,
						       why);
			break;
		case 'l':
			if (parse_duration(optarg, &req.time_limit, &why) < 0)
				return cli_usage_error(cmd, "bad --time-limit '%s': %s", optarg,
						       why);
			break;
		case 'h':
			return cli_help(cmd, help);
		}
	}
	if (optind < argc - 1)
		return cli_usage_error(cmd, "too many arguments");
	req.file = optind < argc ? argv[optind] : NULL;
	if (!req.file == !req.spec)
		return cli_usage_error(cmd, "give a config FILE or --topology SPEC (one of them)");
	if (!collective_set)
		return cli_usage_error(cmd, "missing --collective");
	if (format_set && !req.output)
		return cli_usage_error(cmd, "--format needs -o OUT");

	if (req.file) {
		if (fabric_open(req.file, &req.fabric, &err) < 0)
			return cli_fail(&err);
		req.graph = req.fabric->graph;
		if (!req.alpha_set)
			req.alpha = req.fabric->cost.alpha;
	} else {
		if (topo_build(req.spec, &req.graph, &err) < 0) {
			fprintf(stderr, "ofc schedule: invalid topology '%s' at column %u: %s\n",
				req.spec, err.col, err.msg);
			return 2;
		}
		if (!req.alpha_set)
			req.alpha = 10e-6;
	}
	if (req.fabric && req.fabric->nrings)
		rc = schedule_wdm(&req);
	else if (!req.graph)
		rc = cli_usage_error(cmd, "%s has neither a WDM ring nor a topology to schedule on",
				     req.file);
	else
		rc = schedule_direct(&req);
	if (req.fabric)
		fabric_free(req.fabric);
	else
		graph_free(req.graph);
	return rc;
}
