/* `ofc --socket PATH COMMAND ...`: status, apply, reconfigure, schedule,
 * plan, watch, cancel, fail and restore asked of a running ofcd over its
 * control socket instead of done locally. Exit status follows the answer:
 * 0 for OK, 2 for a request the daemon found invalid (a config error
 * prints as FILE:LINE:COL: message), 1 for anything else (denied, failed,
 * busy, ...).
 * --json prints what the local command prints (docs/json.md): status the
 * ofc.v1.State, schedule its summary, plan the ofc.v1.Plan, apply and the
 * other mutations the ofc.v1.TransactionInfo; watch one Response a line. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"
#include "controller/slurm/slurm.h"
#include "proto/control.pb-c.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct remote {
	const struct cli_cmd *cmd;
	struct cli_targets *t; /* every address given; the walk finds the leader */
	bool json;
	double timeout;
};

static int status_exit(Ofc__V1__Status st)
{
	return st == OFC__V1__STATUS__STATUS_OK ? 0 : st == OFC__V1__STATUS__STATUS_INVALID ? 2 : 1;
}

static int connect_fail(const struct ofc_error *err)
{
	fprintf(stderr, "ofc: %s\n", err->msg);
	return err->code == OFC_E_USAGE ? 2 : 1;
}

static void print_json(FILE *out, const ProtobufCMessage *m)
{
	struct json_writer w;

	jw_init(&w, out, true);
	pb_write_json(&w, m);
	jw_finish(&w);
}

/* Neither --socket nor OFC_SOCKET: say which daemon is asked. */
static void say_default(const struct remote *r)
{
	if (r->t->default_socket)
		fprintf(stderr,
			"ofc %s: asking ofcd at %s (the default; --socket PATH or "
			"OFC_SOCKET=PATH for another)\n",
			strrchr(r->cmd->name, ' ') + 1, r->t->addr[0]);
}

/* One request, one answer, from the replica that leads (targets.c walks
 * the addresses); reads may be answered by any replica. Returns 0 with
 * *resp, or an exit status. */
static int call_flags(struct remote *r, Ofc__V1__Request *req, unsigned flags,
		      Ofc__V1__Response **resp)
{
	struct ofc_error err = {0};

	say_default(r);
	req->has_id = 1;
	req->id = (uint64_t)getpid();
	if (cli_call(r->t, req, r->timeout, flags, resp, &err) < 0)
		return connect_fail(&err);
	return 0;
}

static int call(struct remote *r, Ofc__V1__Request *req, Ofc__V1__Response **resp)
{
	return call_flags(r, req, 0, resp);
}

/* The outcome of a mutation or cancel: the message, or the error. */
static int finish(struct remote *r, Ofc__V1__Response *resp)
{
	int rc = status_exit(resp->status);

	if (r->json && resp->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION) {
		/* the ofc.v1.TransactionInfo, as `ofc apply --json` prints it
		 * (docs/json.md): a failure's message is its error */
		char *own = resp->transaction->error;

		if (rc != 0 && !own)
			resp->transaction->error = resp->message;
		print_json(stdout, &resp->transaction->base);
		resp->transaction->error = own; /* the unpacked message frees its own */
		if (rc != 0)
			fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	} else if (r->json && rc == 0) {
		print_json(stdout, &resp->base);
	} else if (rc == 0) {
		printf("%s\n", resp->message ? resp->message : "ok");
		/* a dry run: the plan, as `ofc plan` prints it */
		if (resp->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION &&
		    resp->transaction->plan)
			fputs(resp->transaction->plan, stdout);
	} else if (resp->body_case == OFC__V1__RESPONSE__BODY_CONFIG_ERROR &&
		   resp->config_error->has_line) {
		fprintf(stderr, "%s:%u:%u: %s\n", resp->config_error->file,
			resp->config_error->line, resp->config_error->column,
			resp->config_error->message);
	} else {
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

/* Options every remote command has: --json, --timeout. */
static int common_opt(struct remote *r, int c, const char *arg)
{
	if (c == 'j') {
		r->json = true;
		return 0;
	}
	if (c == 'W')
		return cli_opt_duration(r->cmd, "timeout", arg, &r->timeout);
	return 2;
}

#define COMMON_OPTS                                                                                \
	{"json", no_argument, NULL, 'j'}, {"timeout", required_argument, NULL, 'W'},               \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

/* ---- status ------------------------------------------------------------------ */

/* A string a message may lack (a tenant's view leaves fields out). */
#define OR_DASH(p) ((p) ? (p) : "-")

static int r_status(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {{"fabric", no_argument, NULL, 'F'},
					     {"edges", no_argument, NULL, 'E'},
					     COMMON_OPTS,
					     {0}};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
	Ofc__V1__Response *resp;
	int c, rc;

	r->timeout = 30;
	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(r->cmd,
					"Asks ofcd for the last committed state: devices, "
					"circuits, lightpaths, the\ntopology and its "
					"schedule, and any transaction in progress or "
					"queued.\n\n  --fabric   include the running config\n"
					"  --edges    include the topology's edges and port "
					"layers\n  --json     the ofc.v1.State as JSON, as 'ofc "
					"status FILE --json'\n"
					"             prints it (docs/json.md)\n");
		if (c == 'F') {
			gs.has_with_fabric = gs.with_fabric = 1;
		} else if (c == 'E') {
			gs.has_with_edges = gs.with_edges = 1;
		} else if ((rc = common_opt(r, c, optarg)) != 0) {
			return rc;
		}
	}
	if (optind < argc)
		return cli_usage_error(r->cmd,
				       "unexpected argument '%s' (the daemon knows its "
				       "config)",
				       argv[optind]);
	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	if ((rc = call_flags(r, &req, CLI_CALL_READ | CLI_CALL_QUICK, &resp)) != 0)
		return rc;
	if (resp->status == OFC__V1__STATUS__STATUS_OK &&
	    resp->body_case == OFC__V1__RESPONSE__BODY_STATE) {
		/* --json: the ofc.v1.State, as `ofc status FILE --json` prints it */
		if (r->json)
			print_json(stdout, &resp->state->base);
		else
			print_state(resp->state, r->t->https);
		/* a switch that does not answer: 1, as `ofc status FILE` */
		rc = status_devices_exit(resp->state);
		ofc__v1__response__free_unpacked(resp, NULL);
		return rc;
	}
	return finish(r, resp);
}

/* --json: the summary `ofc schedule --json` prints, the message's figures
 * at the top level (schedule_summary_json, docs/json.md). */
static void print_schedule_json(FILE *out, const Ofc__V1__Schedule *s)
{
	struct json_writer w;

	jw_init(&w, out, true);
	schedule_summary_json(&w, s);
	jw_finish(&w);
}

/* ---- apply ---------------------------------------------------------------------- */

static int r_apply(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {{"dry-run", no_argument, NULL, 'n'}, COMMON_OPTS, {0}};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ApplyConfig ac = OFC__V1__APPLY_CONFIG__INIT;
	Ofc__V1__Response *resp;
	struct ofc_error err = {0};
	char *text, real[PATH_MAX];
	size_t len;
	int c, rc;

	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(
			    r->cmd,
			    "Sends FILE to ofcd, which validates it (errors come back "
			    "as FILE:LINE:COL)\nand drives the devices to its target as "
			    "one transaction, after the mutations\nqueued before it. The "
			    "fabric's name must be the one ofcd serves.\n\n  --dry-run  "
			    "validate and plan only\n  --json     the ofc.v1.TransactionInfo as "
			    "JSON, as 'ofc apply --json'\n             prints it (docs/json.md)\n  "
			    "--timeout DUR  give up waiting after DUR\n");
		if (c == 'n')
			ac.has_dry_run = ac.dry_run = 1;
		else if ((rc = common_opt(r, c, optarg)) != 0)
			return rc;
	}
	if (optind != argc - 1)
		return cli_usage_error(r->cmd,
				       optind < argc ? "too many arguments" : "missing FILE");
	if (read_file(argv[optind], CONFIG_MAX_BYTES, &text, &len, &err) < 0)
		return cli_fail(&err);
	if (strlen(text) != len) {
		free(text);
		fprintf(stderr, "ofc: %s: the config contains a NUL byte\n", argv[optind]);
		return 2;
	}
	/* The daemon resolves relative paths in the config (credentials)
	 * from the file's directory, whatever its own working directory. */
	ac.yaml = text;
	ac.filename = realpath(argv[optind], real) ? real : argv[optind];
	req.body_case = OFC__V1__REQUEST__BODY_APPLY_CONFIG;
	req.apply_config = &ac;
	rc = call(r, &req, &resp);
	free(text);
	return rc ? rc : finish(r, resp);
}

/* ---- reconfigure ------------------------------------------------------------------ */

static int r_reconfigure(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"topology", required_argument, NULL, 'T'},
	    {"collective", required_argument, NULL, 'c'},
	    {"size", required_argument, NULL, 's'},
	    {"nodes", required_argument, NULL, 'N'},
	    {"partition", required_argument, NULL, 'p'},
	    {"hosts", required_argument, NULL, 'H'},
	    {"relabel", no_argument, NULL, 'R'},
	    {"dry-run", no_argument, NULL, 'n'},
	    {"free-ports", no_argument, NULL, 'F'},
	    COMMON_OPTS,
	    {0},
	};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Reconfigure rq = OFC__V1__RECONFIGURE__INIT;
	struct ofc_error err = {0};
	const char *hostlist = NULL;
	char **hosts = NULL;
	uint32_t nhosts = 0;
	Ofc__V1__Workload wl = OFC__V1__WORKLOAD__INIT;
	Ofc__V1__Response *resp;
	enum sched_collective coll;
	const char *spec = NULL;
	int c, rc;

	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'h':
			return cli_help(
			    r->cmd,
			    "Asks ofcd to rewire the fabric as one transaction: to "
			    "--topology SPEC, or\nto the topology the finder picks for a "
			    "workload (--collective, --size and\noptionally --nodes, which "
			    "must be every host); or one partition of the config\nto its own "
			    "topology (--partition NAME), every other circuit left as it "
			    "is.\nWith --hosts, a partition made now of exactly those hosts "
			    "(a comma list or a\nSlurm hostlist such as h[0-7]) at --topology "
			    "SPEC, held under NAME until\n'ofc release NAME' (the HTTP API's "
			    "and the Slurm prolog's request).\n\n"
			    "  --hosts LIST  the partition's hosts (with --partition and "
			    "--topology)\n"
			    "  --relabel  renumber the topology over the hosts for fewest moves\n"
			    "  --free-ports  the topology or workload on the ports no held "
			    "partition has:\n"
			    "                the held partitions' circuits stay as they are\n"
			    "  --dry-run  validate and plan only\n"
			    "  --json     the ofc.v1.TransactionInfo as JSON (docs/json.md)\n");
		case 'T':
			spec = optarg;
			break;
		case 'c':
			if (sched_collective_parse(optarg, &coll) < 0)
				return cli_usage_error(r->cmd,
						       "unknown collective '%s' (allgather, "
						       "reduce-scatter, allreduce)",
						       optarg);
			wl.collective = optarg;
			break;
		case 's':
			if (cli_opt_size(r->cmd, "size", optarg, &wl.size_bytes))
				return 2;
			wl.has_size_bytes = 1;
			break;
		case 'N':
			if (cli_opt_u32(r->cmd, "nodes", optarg, 1, SCHED_MAX_NODES,
					"node ids in a schedule are 16 bits", &wl.nodes))
				return 2;
			wl.has_nodes = 1;
			break;
		case 'p':
			rq.partition = optarg;
			break;
		case 'H':
			hostlist = optarg;
			break;
		case 'R':
			rq.has_relabel = rq.relabel = 1;
			break;
		case 'n':
			rq.has_dry_run = rq.dry_run = 1;
			break;
		case 'F':
			rq.has_free_ports = rq.free_ports = 1;
			break;
		default:
			if ((rc = common_opt(r, c, optarg)) != 0)
				return rc;
		}
	}
	if (optind < argc)
		return cli_usage_error(r->cmd, "unexpected argument '%s'", argv[optind]);
	if (spec && (wl.collective || wl.has_size_bytes || wl.has_nodes))
		return cli_usage_error(r->cmd, "give --topology or a workload, not both");
	if (rq.free_ports && (hostlist || rq.partition))
		return cli_usage_error(r->cmd, "--free-ports aims the fabric's topology or "
					       "workload: not with --partition or --hosts");
	if (hostlist) {
		if (!rq.partition || !spec)
			return cli_usage_error(r->cmd, "--hosts makes a partition: give "
						       "--partition NAME and --topology SPEC too");
		if (slurm_hostlist_expand(hostlist, &hosts, &nhosts, &err) < 0)
			return cli_usage_error(r->cmd, "--hosts '%s': %s", hostlist, err.msg);
		rq.n_hosts = nhosts;
		rq.hosts = hosts;
		rq.target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
		rq.topology = (char *)spec;
		req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
		req.reconfigure = &rq;
		rc = call(r, &req, &resp);
		slurm_strv_free(hosts, nhosts);
		return rc ? rc : finish(r, resp);
	}
	if (rq.has_relabel)
		return cli_usage_error(r->cmd, "--relabel goes with --hosts");
	if (rq.partition && (spec || wl.collective || wl.has_size_bytes || wl.has_nodes))
		return cli_usage_error(r->cmd, "--partition goes to the partition's own topology: "
					       "no --topology or workload with it");
	if (rq.partition) {
		/* no target: the partition's */
	} else if (spec) {
		rq.target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
		rq.topology = (char *)spec;
	} else if (wl.collective && wl.has_size_bytes) {
		rq.target_case = OFC__V1__RECONFIGURE__TARGET_WORKLOAD;
		rq.workload = &wl;
	} else {
		return cli_usage_error(r->cmd, "give --topology SPEC, --collective C and --size "
					       "M, or --partition NAME");
	}
	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req.reconfigure = &rq;
	rc = call(r, &req, &resp);
	return rc ? rc : finish(r, resp);
}

/* ---- release ----------------------------------------------------------------------------- */

static int r_release(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {COMMON_OPTS, {0}};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReleasePartition rel = OFC__V1__RELEASE_PARTITION__INIT;
	Ofc__V1__Response *resp;
	int c, rc;

	r->timeout = 60;
	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(r->cmd,
					"Lets go of a partition made with 'ofc reconfigure "
					"--partition NAME --hosts LIST':\nits hosts return to "
					"the pool; the circuits stay as they are.\n");
		if ((rc = common_opt(r, c, optarg)) != 0)
			return rc;
	}
	if (optind != argc - 1)
		return cli_usage_error(r->cmd,
				       optind < argc ? "too many arguments" : "missing NAME");
	/* (name too: an ofcd of before partition reads that) */
	rel.partition = rel.name = argv[optind];
	req.body_case = OFC__V1__REQUEST__BODY_RELEASE_PARTITION;
	req.release_partition = &rel;
	rc = call(r, &req, &resp);
	return rc ? rc : finish(r, resp);
}

/* ---- adopt ------------------------------------------------------------------------------- */

/* One Adopt: a preview (commit false) or the commit of the preview's
 * transaction and generation. 0 with *resp answered OK, or an exit status
 * (the answer said on stderr). */
static int adopt_call(struct remote *r, const Ofc__V1__AdoptPreview *pv, Ofc__V1__Response **resp)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Adopt ad = OFC__V1__ADOPT__INIT;
	int rc;

	if (pv) {
		ad.has_commit = ad.has_transaction = ad.has_generation = 1;
		ad.commit = true;
		ad.transaction = pv->transaction;
		ad.generation = pv->generation;
	}
	req.body_case = OFC__V1__REQUEST__BODY_ADOPT;
	req.adopt = &ad;
	if ((rc = call(r, &req, resp)) != 0)
		return rc;
	if ((*resp)->status == OFC__V1__STATUS__STATUS_OK &&
	    (*resp)->body_case == OFC__V1__RESPONSE__BODY_ADOPT)
		return 0;
	r->json = false; /* a refusal is said in words, as the local form's */
	rc = finish(r, *resp);
	return rc ? rc : 1;
}

/* The daemon reads the devices (a preview); the operator confirms what
 * they hold, as `ofc adopt FILE` asks; the daemon records it. */
static int r_adopt(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {{"yes", no_argument, NULL, 'y'}, COMMON_OPTS, {0}};
	Ofc__V1__Response *pv, *done;
	bool yes = false;
	int c, rc;

	r->timeout = 120;
	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(r->cmd,
					"Ends a transaction whose rollback could not finish "
					"(\"ROLLBACK INCOMPLETE\")\nthrough the daemon (the "
					"leader of replicas): it reads every device, shows\nwhat "
					"each holds against the transaction's before and target, "
					"and on\nconfirmation records that as a new generation. No "
					"device is changed.\n\n"
					"  --yes                    do not ask (needed when stdin "
					"is not a terminal)\n");
		if (c == 'y') {
			yes = true;
			continue;
		}
		if ((rc = common_opt(r, c, optarg)) != 0)
			return rc;
	}
	if (optind != argc)
		return cli_usage_error(r->cmd, "too many arguments");
	if (!yes && !isatty(STDIN_FILENO))
		return cli_usage_error(r->cmd,
				       "stdin is not a terminal to confirm on: add --yes to "
				       "record what the devices hold without asking");
	if ((rc = adopt_call(r, NULL, &pv)) != 0)
		return rc;
	if (!r->json || !yes)
		adopt_show(pv->adopt, r->json);
	if (!yes && !adopt_ask(pv->adopt->transaction, pv->adopt->generation)) {
		fprintf(stderr, "ofc: not confirmed: nothing recorded; transaction %llu is kept\n",
			(unsigned long long)pv->adopt->transaction);
		ofc__v1__response__free_unpacked(pv, NULL);
		return 1;
	}
	rc = adopt_call(r, pv->adopt, &done);
	ofc__v1__response__free_unpacked(pv, NULL);
	if (rc != 0)
		return rc;
	if (r->json && yes)
		adopt_show(done->adopt, true);
	else
		printf("%s\n", done->message ? done->message : "adopted");
	ofc__v1__response__free_unpacked(done, NULL);
	return 0;
}

/* ---- schedule -------------------------------------------------------------------------- */

static int write_schedule(const Ofc__V1__Schedule *s, enum out_format f, const char *path)
{
	struct cli_output out;
	struct ofc_error err = {0};

	if (cli_output_open(&out, path, &err) < 0)
		return cli_fail(&err);
	if (f == FMT_PB) {
		size_t n = protobuf_c_message_get_packed_size(&s->base);
		uint8_t *buf = xmalloc(n + 1);

		protobuf_c_message_pack(&s->base, buf);
		if (n && fwrite(buf, 1, n, out.f) != n)
			ofc_error_set(&err, OFC_E_RUNTIME, "%s: short write", path);
		free(buf);
	} else {
		struct json_writer w;

		jw_init(&w, out.f, true);
		pb_write_json(&w, &s->base);
		jw_finish(&w);
	}
	if (err.code) {
		cli_output_abort(&out);
		return cli_fail(&err);
	}
	if (cli_output_commit(&out, &err) < 0)
		return cli_fail(&err);
	return 0;
}

static void print_schedule(FILE *out, const Ofc__V1__Schedule *s)
{
	double tau = 0;
	bool have_tau = false;

	for (size_t i = 0; i < s->n_metrics; i++)
		if (strcmp(s->metrics[i]->key, "tau_b") == 0) {
			tau = s->metrics[i]->value;
			have_tau = true;
		}
	fprintf(out, "%s %s on %s: %u nodes\n", s->algorithm, s->collective, s->topology, s->nodes);
	fprintf(out, "  steps        %u\n", s->num_steps);
	if (have_tau && s->tau_b_fraction && strchr(s->tau_b_fraction, '/'))
		fprintf(out, "  tau_B        %s = %.9g\n", s->tau_b_fraction, tau);
	else if (have_tau)
		fprintf(out, "  tau_B        %.9g\n", tau);
	fprintf(out, "  time         %.6g us\n", s->time_us);
	fprintf(out, "  lower bound  %.6g us\n", s->lower_bound_us);
	fprintf(out, "  ratio        %.4f\n",
		s->lower_bound_us > 0 ? s->time_us / s->lower_bound_us : 0);
	fprintf(out, "  verified     %s%s%s\n", s->verified ? "yes" : "NO",
		s->verify_error ? ": " : "", s->verify_error ? s->verify_error : "");
	if (s->reduced)
		fprintf(out,
			"  reduced      node 0's program x %s (order %u), checked by symmetry\n",
			OR_DASH(s->reduced->name), s->reduced->order);
	if (s->n_links)
		fprintf(out, "  fabric       ports are host NIC ports; %zu links used\n",
			s->n_links);
}

/* The rest of a streamed GetSchedule after its first frame
 * (first->more): the steps one at a time, each written as a Schedule
 * holding it (protobuf merges them into the header already written), so
 * the file decodes to the schedule and only one step is held; as JSON the
 * whole message is put together first. Returns the last frame's status, or
 * -1 with err. */
struct stream_out {
	enum out_format fmt;
	FILE *f;
	Ofc__V1__Schedule *whole; /* JSON: the header, the steps appended */
	Ofc__V1__Response **held; /* frames of the step being put together */
	size_t nheld, cap;
	Ofc__V1__Response **keep; /* JSON: every frame, freed at the end */
	size_t nkeep, capkeep;
};

static void stream_flush(struct stream_out *o)
{
	size_t total = 0, k = 0;

	if (!o->nheld)
		return;
	for (size_t i = 0; i < o->nheld; i++)
		total += o->held[i]->schedule->steps[0]->n_transfers;
	Ofc__V1__Transfer **arr = xcalloc(total + 1, sizeof(*arr));
	for (size_t i = 0; i < o->nheld; i++)
		for (size_t t = 0; t < o->held[i]->schedule->steps[0]->n_transfers; t++)
			arr[k++] = o->held[i]->schedule->steps[0]->transfers[t];
	if (o->fmt == FMT_PB) {
		Ofc__V1__Step st = OFC__V1__STEP__INIT, *sp = &st;
		Ofc__V1__Schedule m = OFC__V1__SCHEDULE__INIT;

		st.n_transfers = total;
		st.transfers = arr;
		m.n_steps = 1;
		m.steps = &sp;
		size_t n = protobuf_c_message_get_packed_size(&m.base);
		uint8_t *b = xmalloc(n + 1);
		protobuf_c_message_pack(&m.base, b);
		fwrite(b, 1, n, o->f);
		free(b);
		free(arr);
		for (size_t i = 0; i < o->nheld; i++)
			ofc__v1__response__free_unpacked(o->held[i], NULL);
	} else {
		/* The first frame's step takes the whole array; the frames stay
		 * until the end (the transfers are theirs). */
		Ofc__V1__Step *st = o->held[0]->schedule->steps[0];

		free(st->transfers);
		st->transfers = arr;
		st->n_transfers = total;
		for (size_t i = 1; i < o->nheld; i++)
			o->held[i]->schedule->steps[0]->n_transfers = 0;
		o->whole->steps =
		    xreallocarray(o->whole->steps, o->whole->n_steps + 1, sizeof(*o->whole->steps));
		o->whole->steps[o->whole->n_steps++] = st;
		for (size_t i = 0; i < o->nheld; i++) {
			GROW(o->keep, o->capkeep, o->nkeep + 1);
			o->keep[o->nkeep++] = o->held[i];
		}
	}
	o->nheld = 0;
}

static int stream_rest(struct remote *r, Ofc__V1__Response *first, struct stream_out *o,
		       Ofc__V1__Response **last, struct ofc_error *err)
{
	if (o->fmt == FMT_PB) {
		size_t n = protobuf_c_message_get_packed_size(&first->schedule->base);
		uint8_t *b = xmalloc(n + 1);

		protobuf_c_message_pack(&first->schedule->base, b);
		fwrite(b, 1, n, o->f);
		free(b);
	}
	for (;;) {
		Ofc__V1__Response *resp;

		if (ofcd_recv(&r->t->cl, &resp, err) < 0)
			return -1;
		if (resp->body_case == OFC__V1__RESPONSE__BODY_SCHEDULE &&
		    resp->schedule->n_steps == 1) {
			if (!resp->continues_step)
				stream_flush(o);
			GROW(o->held, o->cap, o->nheld + 1);
			o->held[o->nheld++] = resp;
			continue;
		}
		if (resp->more) {
			ofc__v1__response__free_unpacked(resp, NULL);
			continue;
		}
		stream_flush(o);
		*last = resp;
		return 0;
	}
}

/* -o with the steps: a stream, so a schedule larger than a
 * frame arrives; an ofcd without streams answers in one frame, as before. */
static int schedule_streamed(struct remote *r, Ofc__V1__Request *req, enum out_format fmt,
			     const char *output)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *first = NULL, *last = NULL;
	struct stream_out o = {.fmt = fmt};
	struct cli_output out;
	bool out_is_stdout = strcmp(output, "-") == 0;
	int rc;

	say_default(r);
	if (cli_open(r->t, req, r->timeout, CLI_CALL_READ, &first, &err) < 0)
		return connect_fail(&err);
	r->t->cl.timeout = r->timeout; /* now the wait for each frame */
	if (first->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE || !first->more) {
		ofcd_disconnect(&r->t->cl);
		if (first->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE)
			return finish(r, first);
		rc = status_exit(first->status);
		if ((fmt == FMT_PB || fmt == FMT_JSON) &&
		    write_schedule(first->schedule, fmt, output))
			rc = rc ? rc : 1;
		print_schedule(out_is_stdout ? stderr : stdout, first->schedule);
		ofc__v1__response__free_unpacked(first, NULL);
		return rc;
	}
	if (cli_output_open(&out, output, &err) < 0) {
		ofcd_disconnect(&r->t->cl);
		ofc__v1__response__free_unpacked(first, NULL);
		return cli_fail(&err);
	}
	o.f = out.f;
	o.whole = first->schedule;
	rc = stream_rest(r, first, &o, &last, &err);
	ofcd_disconnect(&r->t->cl);
	if (rc == 0 && last->status != OFC__V1__STATUS__STATUS_OK)
		ofc_error_set(&err, OFC_E_RUNTIME, "%s", last->message ? last->message : "failed");
	else if (rc == 0 && fmt == FMT_JSON) {
		struct json_writer w;

		jw_init(&w, out.f, true);
		pb_write_json(&w, &first->schedule->base);
		jw_finish(&w);
	}
	if (!err.code &&
	    (ferror(out.f) ? ofc_error_set(&err, OFC_E_RUNTIME, "%s: short write", output)
			   : cli_output_commit(&out, &err)) == 0) {
		print_schedule(out_is_stdout ? stderr : stdout, first->schedule);
		rc = 0;
	} else {
		if (out.f)
			cli_output_abort(&out);
		rc = cli_fail(&err);
	}
	/* JSON: the steps are the kept frames' (freed with them) */
	if (fmt == FMT_JSON) {
		first->schedule->n_steps = 0;
		free(first->schedule->steps);
		first->schedule->steps = NULL;
	}
	for (size_t i = 0; i < o.nkeep; i++)
		ofc__v1__response__free_unpacked(o.keep[i], NULL);
	for (size_t i = 0; i < o.nheld; i++)
		ofc__v1__response__free_unpacked(o.held[i], NULL);
	free(o.keep);
	free(o.held);
	if (last)
		ofc__v1__response__free_unpacked(last, NULL);
	ofc__v1__response__free_unpacked(first, NULL);
	return rc;
}

/* --help: the algorithms from the engine table (the config's choice
 * before any default), the lowerings from theirs. */
static int schedule_help(const struct cli_cmd *cmd)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	sb_puts(&sb,
		"Asks ofcd for a verified, priced schedule on the fabric's committed topology\n"
		"(or --topology SPEC, or --partition NAME: that partition's topology, sized\n"
		"by its collectives), the same ofc.v1.Schedule `ofc schedule` exports.\n\n"
		"  --collective C  allgather, reduce-scatter, allreduce or alltoall (a\n"
		"                  server fabric: also broadcast and reduce)\n");
	schedule_algorithms_one(
	    &sb, "  --algo A        the config's algorithm for the collective, else: ",
	    "                  ", 79);
	sb_puts(&sb, "  --size M        data per node (default: the config's)\n"
		     "  --lowering L    alltoall mcf: ");
	a2a_lowering_names(&sb, false, " or ");
	sb_puts(&sb,
		" (default steps; paths\n"
		"                  is the workload's, answered from the MCF solution ofcd keeps)\n"
		"  --summary       figures only, no steps\n"
		"  --reduced       symmetry-reduced (as ofc schedule --reduced): node 0's\n"
		"                  program and the translation group, on the topology's own\n"
		"                  numbering; refused with the reason where it has no such form\n"
		"  --format pb|json -o OUT  write the schedule; without --format OUT's\n"
		"                  extension says which (.pb, .json), else json\n");
	rc = cli_help(cmd, sb.buf);
	sb_free(&sb);
	return rc;
}

static int r_schedule(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"collective", required_argument, NULL, 'c'},
	    {"algo", required_argument, NULL, 'a'},
	    {"size", required_argument, NULL, 's'},
	    {"topology", required_argument, NULL, 'T'},
	    {"partition", required_argument, NULL, 'p'},
	    {"chunks", required_argument, NULL, 'P'},
	    {"lowering", required_argument, NULL, 'L'},
	    {"summary", no_argument, NULL, 'S'},
	    {"reduced", no_argument, NULL, 'r'},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    COMMON_OPTS,
	    {0},
	};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;
	Ofc__V1__Response *resp;
	enum sched_collective coll;
	enum out_format fmt;
	const char *output = NULL, *format = NULL;
	bool out_is_stdout;
	int c, rc;

	while ((c = cli_getopt(r->cmd, argc, argv, "ho:", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'h':
			return schedule_help(r->cmd);
		case 'c':
			/* broadcast and reduce: the fluid engine's, on a server fabric */
			if (sched_collective_parse(optarg, &coll) < 0 &&
			    strcmp(optarg, "broadcast") != 0 && strcmp(optarg, "reduce") != 0)
				return cli_usage_error(r->cmd, "unknown collective '%s'", optarg);
			gs.collective = optarg;
			break;
		case 'a':
			gs.algorithm = optarg;
			break;
		case 's':
			if (cli_opt_size(r->cmd, "size", optarg, &gs.size_bytes))
				return 2;
			gs.has_size_bytes = 1;
			break;
		case 'T':
			gs.topology = optarg;
			break;
		case 'p':
			gs.partition = optarg;
			break;
		case 'P':
			if (cli_opt_u32(r->cmd, "chunks", optarg, 1, 1000000, NULL, &gs.chunks))
				return 2;
			gs.has_chunks = 1;
			break;
		case 'L':
			/* ofcd checks the value: its answer names the ones it knows */
			gs.lowering = optarg;
			break;
		case 'S':
			gs.has_summary_only = gs.summary_only = 1;
			break;
		case 'r':
			gs.has_reduced = gs.reduced = 1;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		default:
			if ((rc = common_opt(r, c, optarg)) != 0)
				return rc;
		}
	}
	if (optind < argc)
		return cli_usage_error(r->cmd, "unexpected argument '%s'", argv[optind]);
	if (!gs.collective)
		return cli_usage_error(r->cmd, "missing --collective");
	if (format && !output)
		return cli_usage_error(r->cmd, "--format needs -o OUT");
	/* The rule and the default of `ofc schedule`, so one -o gives one
	 * file locally and through the daemon. */
	if (cli_output_format(r->cmd, "-o", output, format, NULL, FMT_PB | FMT_JSON, FMT_JSON,
			      &fmt))
		return 2;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	if (output && !gs.summary_only && !r->json) {
		gs.has_stream = gs.stream = 1;
		return schedule_streamed(r, &req, fmt, output);
	}
	if ((rc = call_flags(r, &req, CLI_CALL_READ, &resp)) != 0)
		return rc;
	if (resp->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE)
		return finish(r, resp);
	rc = status_exit(resp->status);
	out_is_stdout = output && strcmp(output, "-") == 0;
	if (output && (c = write_schedule(resp->schedule, fmt, output)) != 0)
		rc = c;
	/* -o - puts the schedule on stdout: the summary goes to stderr. */
	if (r->json) {
		print_schedule_json(out_is_stdout ? stderr : stdout, resp->schedule);
		/* the daemon's words beside it, as `ofc schedule` notes */
		if (resp->status == OFC__V1__STATUS__STATUS_OK && resp->message)
			fprintf(stderr, "ofc schedule: %s\n", resp->message);
	} else
		print_schedule(out_is_stdout ? stderr : stdout, resp->schedule);
	if (resp->status != OFC__V1__STATUS__STATUS_OK)
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

/* ---- plan ----------------------------------------------------------------------- */

/* The ways as the text of `ofc plan FILE --workload config` ends: each
 * way's iteration, its phases' topologies, then the choice and why. */
static void print_plan(const Ofc__V1__Plan *p)
{
	for (size_t k = 0; k < p->n_ways; k++) {
		const Ofc__V1__PlanWay *w = p->ways[k];
		char it[32], first[32];

		if (!w->have) {
			printf("%-10s (none: %s)\n", w->kind, OR_DASH(w->why_not));
			continue;
		}
		fmt_duration_long(it, sizeof(it), w->iteration_us * 1e-6);
		fmt_duration_long(first, sizeof(first), w->first_switch_us * 1e-6);
		printf("%-10s %s an iteration (the first: %s of switching before it)\n", w->kind,
		       it, first);
		for (size_t i = 0; i < w->n_phases; i++) {
			char t[32];

			fmt_duration_long(t, sizeof(t), w->phases[i]->time_us * 1e-6);
			printf("  %-12s %-40.40s %10s\n", w->phases[i]->name,
			       w->phases[i]->topology, t);
		}
	}
	printf("\n%s\n", OR_DASH(p->why));
}

static int r_plan(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {COMMON_OPTS, {0}};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetPlan gp = OFC__V1__GET_PLAN__INIT;
	Ofc__V1__Response *resp;
	int c, rc;

	r->timeout = 300; /* every phase priced on every candidate */
	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(r->cmd,
					"Asks ofcd to plan its running config's workload, as "
					"'ofc plan FILE --workload\nconfig' does: every way to "
					"run an iteration, the choice and why.\n\n  --json     "
					"the ofc.v1.Plan as JSON, as 'ofc plan FILE --workload "
					"config --json'\n             prints it (docs/json.md)\n");
		if ((rc = common_opt(r, c, optarg)) != 0)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error(r->cmd,
				       "unexpected argument '%s' (the daemon plans its "
				       "config's workload)",
				       argv[optind]);
	req.body_case = OFC__V1__REQUEST__BODY_GET_PLAN;
	req.get_plan = &gp;
	if ((rc = call_flags(r, &req, CLI_CALL_READ, &resp)) != 0)
		return rc;
	if (resp->status != OFC__V1__STATUS__STATUS_OK ||
	    resp->body_case != OFC__V1__RESPONSE__BODY_PLAN)
		return finish(r, resp);
	if (r->json)
		print_json(stdout, &resp->plan->base);
	else
		print_plan(resp->plan);
	ofc__v1__response__free_unpacked(resp, NULL);
	return 0;
}

/* "2024-05-01T12:34:56.789+02:00": local time with ms and the offset, so
 * lines from hosts in other zones still sort and compare. */
static const char *iso_time_ms(uint64_t unix_ms, char *buf, size_t n)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	char date[32], zone[8];

	if (!localtime_r(&t, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) ||
	    !strftime(zone, sizeof(zone), "%z", &tm) || strlen(zone) != 5) {
		snprintf(buf, n, "%llu", (unsigned long long)unix_ms);
		return buf;
	}
	snprintf(buf, n, "%s.%03u%.3s:%s", date, (unsigned)(unix_ms % 1000), zone, zone + 3);
	return buf;
}

/* ---- watch and cancel --------------------------------------------------------------------- */

/* Where a watch is in the fabric's event log (Event.seq, Event.log): the
 * last event printed, so that one resumed elsewhere prints none twice and
 * says what it cannot have. */
struct watch_pos {
	uint64_t seq, log;
	bool have;
};

/* Whether e is to be printed: not one printed before; a gap said on
 * stderr. An unnumbered event (a replica's own leader change) always. */
static bool watch_fresh(struct watch_pos *p, const Ofc__V1__Event *e, const char *from)
{
	if (!e->has_seq || !e->has_log)
		return true;
	if (p->have && e->log == p->log && e->seq <= p->seq)
		return false;
	if (p->have && e->log == p->log && e->seq > p->seq + 1)
		fprintf(stderr,
			"ofc watch: events %llu to %llu of the fabric's log are missed (%s keeps "
			"the later ones only)\n",
			(unsigned long long)p->seq + 1, (unsigned long long)e->seq - 1, from);
	else if (p->have && e->log != p->log)
		fprintf(stderr, "ofc watch: %s numbers its events anew (a new event log)\n", from);
	p->have = true;
	p->seq = e->seq;
	p->log = e->log;
	return true;
}

static void watch_print(const struct remote *r, const Ofc__V1__Event *e)
{
	const ProtobufCEnumValue *v =
	    protobuf_c_enum_descriptor_get_value(&ofc__v1__event__kind__descriptor, e->kind);

	if (r->json) {
		struct json_writer jw;

		jw_init(&jw, stdout, false);
		pb_write_json(&jw, &e->base);
		jw_finish(&jw);
	} else {
		char when[64];

		printf("%s %s%s%s%s%s\n", iso_time_ms(e->time_unix_ms, when, sizeof(when)),
		       v ? v->name + 5 : "?", e->device ? " " : "", e->device ? e->device : "",
		       e->message && *e->message ? ": " : "", e->message ? e->message : "");
	}
	fflush(stdout);
}

/* Open the watch on a replica that answers, resuming after p. 0, or an
 * exit status. */
static int watch_open(struct remote *r, const struct watch_pos *p, unsigned flags, double timeout)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch w = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *resp;
	struct ofc_error err = {0};
	int rc;

	if (p->have) {
		w.has_after_seq = w.has_log = 1;
		w.after_seq = p->seq;
		w.log = p->log;
	}
	req.has_id = 1;
	req.id = 1;
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &w;
	if (cli_open(r->t, &req, timeout, flags, &resp, &err) < 0)
		return connect_fail(&err);
	r->t->cl.timeout = r->timeout; /* now the wait for each event */
	rc = status_exit(resp->status);
	if (rc) {
		ofcd_disconnect(&r->t->cl);
		return finish(r, resp);
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	return 0;
}

static int r_watch(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"count", required_argument, NULL, 'n'}, COMMON_OPTS, {0}};
	Ofc__V1__Response *resp;
	struct ofc_error err = {0};
	struct watch_pos pos = {0};
	uint32_t count = 0, seen = 0;
	int c, rc;

	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(r->cmd,
					"Prints ofcd's events as they happen, one per line: "
					"transactions started,\ncommitted, rolled back; "
					"devices lost and back; configs applied or "
					"rejected;\nrequests queued, done, refused (and why) "
					"and cancelled; failures reported\nand restored.\n\n"
					"Given several replicas (--socket repeated, or a comma "
					"list), it follows the\nfabric: when its replica goes, "
					"it goes on at the next that answers (for up to\n30 s, "
					"or --timeout), from the last event it printed: every "
					"replica sends the\nsame numbered events, so none is "
					"printed twice, and a gap is said on stderr.\n\n"
					"  --count N      stop after N events\n"
					"  --timeout DUR  stop when no event came for DUR "
					"(a normal end: exit 0)\n"
					"  --json         one JSON object per line (time_unix_ms "
					"as sent)\n\nEach line: the time (ISO 8601, local, "
					"with ms), the event, the device, the message.\n");
		if (c == 'n') {
			if (cli_opt_u32(r->cmd, "count", optarg, 1, UINT32_MAX, NULL, &count))
				return 2;
		} else if ((rc = common_opt(r, c, optarg)) != 0) {
			return rc;
		}
	}
	if (optind < argc)
		return cli_usage_error(r->cmd, "unexpected argument '%s'", argv[optind]);
	say_default(r);
	if ((rc = watch_open(r, &pos, CLI_CALL_READ | CLI_CALL_QUICK, r->timeout)) != 0)
		return rc;
	/* The acknowledgement is out: say so, for scripts that wait on it. */
	if (!r->json)
		fprintf(stderr, "watching %s\n", r->t->answered);
	while (!count || seen < count) {
		if (ofcd_recv(&r->t->cl, &resp, &err) < 0) {
			/* --timeout: no event for that long is the end asked for. */
			if (err.reason == OFC_R_TIMEOUT && r->timeout > 0)
				break;
			if (r->t->n < 2)
				goto fail;
			/* Its replica gone: the next that answers, from here. */
			char gone[CLI_TARGET_LEN];

			snprintf(gone, sizeof(gone), "%s", r->t->answered);
			ofcd_disconnect(&r->t->cl);
			r->t->first = (r->t->first + 1) % r->t->n;
			if ((rc = watch_open(r, &pos, CLI_CALL_READ | CLI_CALL_PERSIST,
					     r->timeout > 0 ? r->timeout : CLI_WALK_DEFAULT)) !=
			    0) {
				fprintf(stderr,
					"ofc watch: lost %s (%s), and no replica answered\n", gone,
					err.msg);
				return rc;
			}
			fprintf(stderr, "ofc watch: lost %s (%s); watching %s from event %llu\n",
				gone, err.msg, r->t->answered, (unsigned long long)pos.seq + 1);
			ofc_error_clear(&err);
			continue;
		}
		if (resp->body_case == OFC__V1__RESPONSE__BODY_EVENT &&
		    watch_fresh(&pos, resp->event, r->t->answered)) {
			seen++;
			watch_print(r, resp->event);
		}
		ofc__v1__response__free_unpacked(resp, NULL);
	}
	ofcd_disconnect(&r->t->cl);
	return 0;
fail:
	ofcd_disconnect(&r->t->cl);
	return connect_fail(&err);
}

static int r_cancel(struct remote *r, int argc, char **argv)
{
	static const struct option opts[] = {COMMON_OPTS, {0}};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Cancel k = OFC__V1__CANCEL__INIT;
	Ofc__V1__Response *resp;
	int c, rc;

	r->timeout = 30;
	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(r->cmd,
					"Cancels a queued mutation by its ticket (ofc --socket "
					"PATH status lists\nthem). A running transaction is "
					"never cancelled.\n");
		if ((rc = common_opt(r, c, optarg)) != 0)
			return rc;
	}
	if (optind != argc - 1)
		return cli_usage_error(r->cmd,
				       optind < argc ? "too many arguments" : "missing TICKET");
	if (parse_u64(argv[optind], &k.ticket) < 0 || !k.ticket)
		return cli_usage_error(r->cmd, "bad TICKET '%s'", argv[optind]);
	k.has_ticket = 1;
	req.body_case = OFC__V1__REQUEST__BODY_CANCEL;
	req.cancel = &k;
	/* a ticket is one replica's: never sent twice */
	rc = call_flags(r, &req, CLI_CALL_ONCE, &resp);
	return rc ? rc : finish(r, resp);
}

/* ---- failures ------------------------------------------------------------------------------ */

/* fail ITEM... / restore (ITEM... | --all): ReportFailure. */
static int r_failure(struct remote *r, int argc, char **argv)
{
	static const struct option restore_opts[] = {
	    {"all", no_argument, NULL, 'a'}, COMMON_OPTS, {0}};
	static const struct option fail_opts[] = {COMMON_OPTS, {0}};
	bool restore = strcmp(argv[0], "restore") == 0, all = false;
	const struct option *opts = restore ? restore_opts : fail_opts;
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	Ofc__V1__Response *resp;
	int c, rc;

	r->timeout = 60;
	while ((c = cli_getopt(r->cmd, argc, argv, "h", opts)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h')
			return cli_help(
			    r->cmd,
			    restore
				? "Tells ofcd that failed links, ports or hosts work again (--all: "
				  "every one reported).\nofcd re-plans the schedule, as for a "
				  "failure; with none left it is the healthy one.\n"
				: "Tells ofcd that links, ports or hosts failed: U-V is the link "
				  "between hosts U and V\n(both directions), HOST:PORT a host's "
				  "NIC port (both fibres), HOST a whole host\n(it takes no part: "
				  "the others run the collective among themselves). ofcd\nre-plans "
				  "the schedule on the surviving graph, announces it to watchers "
				  "and\nanswers GetSchedule with it until they are restored; the "
				  "set survives a restart.\nPrints the re-planned schedule's "
				  "figures; exit 1 when none survives.\n");
		if (c == 'a')
			all = true;
		else if ((rc = common_opt(r, c, optarg)) != 0)
			return rc;
	}
	if (optind >= argc && !all)
		return cli_usage_error(r->cmd, restore ? "missing LINK, PORT or HOST (or --all)"
						       : "missing LINK, PORT or HOST");
	rf.n_items = (size_t)(argc - optind);
	rf.items = argv + optind;
	rf.has_restore = rf.restore = restore;
	rf.has_clear = rf.clear = all;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	rc = call(r, &req, &resp);
	return rc ? rc : finish(r, resp);
}

/* ---- dispatch ------------------------------------------------------------------------------- */

/* Named "--socket PATH NAME" so usage errors print the whole command. */
static const struct {
	const char *name;
	struct cli_cmd cmd;
	int (*run)(struct remote *r, int argc, char **argv);
} remote_cmds[] = {
    {"status",
     {"--socket PATH status", "[--fabric] [--edges] [--json] [--timeout DUR]",
      "the daemon's committed state", NULL},
     r_status},
    {"apply",
     {"--socket PATH apply", "FILE [--dry-run] [--json] [--timeout DUR]",
      "send a config to the daemon and apply it", NULL},
     r_apply},
    {"reconfigure",
     {"--socket PATH reconfigure",
      "(--topology SPEC | --collective C --size M [--nodes N] | --partition NAME [--topology "
      "SPEC --hosts LIST [--relabel]]) [--free-ports] [--dry-run] [--json] [--timeout DUR]",
      "rewire the fabric through the daemon", NULL},
     r_reconfigure},
    {"release",
     {"--socket PATH release", "NAME [--json] [--timeout DUR]",
      "let go of a partition made with --hosts", NULL},
     r_release},
    {"adopt",
     {"--socket PATH adopt", "[--yes] [--json] [--timeout DUR]",
      "end a rollback that cannot finish: the daemon records what the devices hold", NULL},
     r_adopt},
    {"schedule",
     {"--socket PATH schedule",
      "--collective C [--algo A] [--size M] [--topology SPEC | --partition NAME] [--chunks P] "
      "[--lowering L] [--summary] [--reduced] [--json] [--format pb|json -o OUT] "
      "[--timeout DUR]",
      "a verified schedule from the daemon", NULL},
     r_schedule},
    {"plan",
     {"--socket PATH plan", "[--json] [--timeout DUR]",
      "the daemon's plan for its config's workload", NULL},
     r_plan},
    {"watch",
     {"--socket PATH watch", "[--count N] [--timeout DUR] [--json]", "print the daemon's events",
      NULL},
     r_watch},
    {"cancel",
     {"--socket PATH cancel", "TICKET [--json] [--timeout DUR]", "cancel a queued mutation", NULL},
     r_cancel},
    {"fail",
     {"--socket PATH fail", "LINK|PORT|HOST... [--json] [--timeout DUR]",
      "tell the daemon links (U-V), ports (HOST:PORT) or hosts failed; it re-plans", NULL},
     r_failure},
    {"restore",
     {"--socket PATH restore", "(LINK|PORT|HOST... | --all) [--json] [--timeout DUR]",
      "tell the daemon failed links, ports or hosts work again", NULL},
     r_failure},
};

bool remote_command(const char *name)
{
	if (strcmp(name, "cluster") == 0 || strcmp(name, "metrics") == 0)
		return true;
	/* `ofc plan FILE` plans locally whatever OFC_SOCKET says: only
	 * --socket or --server asks ofcd for its plan; `ofc adopt FILE` the
	 * same */
	if (strcmp(name, "plan") == 0 || strcmp(name, "adopt") == 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(remote_cmds); i++)
		if (strcmp(name, remote_cmds[i].name) == 0)
			return true;
	return false;
}

int remote_main(struct cli_targets *t, int argc, char **argv)
{
	struct remote r = {.t = t};
	struct ofc_error err = {0};

	if (argc < 1) {
		fprintf(stderr, "ofc: missing a command after %s %s\nTry 'ofc --help'.\n",
			t->opt ? t->opt : "--socket", t->n ? t->addr[0] : "");
		return 2;
	}
	if (cli_targets_check(t, &err) < 0) {
		fprintf(stderr, "ofc: %s\nTry 'ofc --help'.\n", err.msg);
		return 2;
	}
	/* The HTTPS thread writes to a socket the command may have closed. */
	if (t->https)
		signal(SIGPIPE, SIG_IGN);
	t->verbose = true;
	if (strcmp(argv[0], "cluster") == 0)
		return cluster_main(t, argc, argv);
	if (strcmp(argv[0], "metrics") == 0)
		return metrics_main(t, argc, argv);
	for (size_t i = 0; i < ARRAY_SIZE(remote_cmds); i++)
		if (strcmp(argv[0], remote_cmds[i].name) == 0) {
			/* usage errors name the option given: --server, not --socket */
			struct cli_cmd c = remote_cmds[i].cmd;
			char name[64];

			snprintf(name, sizeof(name), "%s %s",
				 t->https ? "--server URL" : "--socket PATH", remote_cmds[i].name);
			c.name = name;
			r.cmd = &c;
			optind = 0;
			return remote_cmds[i].run(&r, argc, argv);
		}
	fprintf(stderr,
		"ofc: '%s' does not talk to ofcd (status, apply, reconfigure, release, schedule, "
		"plan, watch, cancel, fail, restore, cluster and metrics do)\nTry 'ofc "
		"--help'.\n",
		argv[0]);
	return 2;
}

/* reconfigure, watch, cancel, fail and restore with neither --socket nor
 * OFC_SOCKET: the daemon at the socket its unit listens on, which the
 * Python client defaults to as well, said on stderr when it connects. */
int cmd_daemon_only(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_targets t = {0};
	struct ofc_error err = {0};

	(void)cmd;
	if (cli_targets_from_env(&t, &err) < 0) {
		fprintf(stderr, "ofc: %s\n", err.msg);
		return 2;
	}
	return remote_main(&t, argc, argv);
}
