/* `ofc cluster status` and `ofc metrics`: the deployment at a glance, for
 * an operator and for a health check. cluster status asks every address
 * given (each replica's socket, or each gateway) for its state, and shows
 * every replica (role, epoch, lease left, last contact, address: the
 * store's replica list when ofcd sends it, else one row per address), etcd's
 * members, the devices, the queue and the held partitions; it exits 1 when
 * something is wrong (no leader, a replica or an etcd member that does not
 * answer, a device unreachable, a stale view), so a cron job or a probe can
 * run it as it is. */
#include "controller/cli/internal.h"
#include "proto/cli_report.pb-c.h"
#include "proto/control.pb-c.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define OR_DASH(p) ((p) && *(p) ? (p) : "-")

/* One address and what it answered. */
struct cl_view {
	const char *addr;
	Ofc__V1__Response *resp; /* NULL: no answer */
	const Ofc__V1__State *s;
	char why[600];
};

struct cl_report {
	struct cl_view v[CLI_TARGETS_MAX];
	uint32_t n;
	const struct cl_view *main; /* the leader's view, else the first answer */
	struct strbuf problems;	    /* "; "-separated */
	uint32_t nproblems;
};

static void problem(struct cl_report *c, const char *fmt, ...) OFC_PRINTF(2, 3);
static void problem(struct cl_report *c, const char *fmt, ...)
{
	va_list ap;
	char buf[800];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sb_printf(&c->problems, "%s%s", c->nproblems++ ? "\n" : "", buf);
}

static bool is_leader(const Ofc__V1__State *s)
{
	return s && s->cluster && s->cluster->role && strcmp(s->cluster->role, "leader") == 0;
}

/* GetState of one address alone (no walk: each replica is asked itself). */
static void ask_each(const struct cli_targets *t, double timeout, struct cl_report *c)
{
	struct cli_targets *one = xcalloc(1, sizeof(*one));

	for (uint32_t i = 0; i < t->n; i++) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		struct cl_view *v = &c->v[c->n++];
		struct ofc_error err = {0};

		memset(one, 0, sizeof(*one));
		one->https = t->https;
		one->srv = t->srv;
		v->addr = t->addr[i];
		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		if (cli_targets_add(one, t->opt, t->addr[i], &err) < 0 ||
		    cli_call(one, &req, timeout, CLI_CALL_READ, &v->resp, &err) < 0) {
			snprintf(v->why, sizeof(v->why), "%s", err.msg);
			continue;
		}
		if (v->resp->status != OFC__V1__STATUS__STATUS_OK ||
		    v->resp->body_case != OFC__V1__RESPONSE__BODY_STATE) {
			snprintf(v->why, sizeof(v->why), "%s",
				 v->resp->message ? v->resp->message : "refused GetState");
			ofc__v1__response__free_unpacked(v->resp, NULL);
			v->resp = NULL;
			continue;
		}
		v->s = v->resp->state;
		if (!c->main || (is_leader(v->s) && !is_leader(c->main->s)))
			c->main = v;
	}
	free(one);
}

/* Whether the store lists replica name as running (holding a lease). */
static bool running(const Ofc__V1__Cluster *cl, const char *name)
{
	for (size_t i = 0; i < cl->n_replicas; i++)
		if (cl->replicas[i]->name && strcmp(cl->replicas[i]->name, name) == 0)
			return true;
	return false;
}

/* The problems, in the order the text shows the parts. */
static void judge(struct cl_report *c)
{
	const Ofc__V1__State *s = c->main ? c->main->s : NULL;
	const Ofc__V1__Cluster *cl = s ? s->cluster : NULL;

	for (uint32_t i = 0; i < c->n; i++) {
		if (!c->v[i].s)
			problem(c, "%s does not answer: %s", c->v[i].addr, c->v[i].why);
		else if (c->v[i].s->cluster && c->v[i].s->cluster->stale)
			problem(c, "%s (%s) is stale: %s", c->v[i].addr,
				OR_DASH(c->v[i].s->cluster->name),
				c->v[i].s->cluster->stale_reason ? c->v[i].s->cluster->stale_reason
								 : "etcd does not answer it");
	}
	if (!s)
		return;
	if (cl && !cl->leader)
		problem(c, "no replica leads (an election is under way, or none can)");
	for (size_t i = 0; cl && i < cl->n_known_replicas; i++)
		if (!running(cl, cl->known_replicas[i]))
			problem(
			    c,
			    "replica %s is missing: it registered before and holds no lease now "
			    "(stopped, killed, or cut off from etcd); one taken away for good is "
			    "forgotten with etcdctl del of its key under known/",
			    cl->known_replicas[i]);
	for (size_t i = 0; cl && i < cl->n_members; i++)
		if (!cl->members[i]->reachable)
			problem(c, "etcd member %s (%s) does not answer",
				OR_DASH(cl->members[i]->name), OR_DASH(cl->members[i]->url));
	for (size_t i = 0; i < s->n_devices; i++)
		if (s->devices[i]->has_reachable && !s->devices[i]->reachable)
			problem(c, "device %s is unreachable%s%s", OR_DASH(s->devices[i]->name),
				s->devices[i]->error ? ": " : "",
				s->devices[i]->error ? s->devices[i]->error : "");
}

/* Where a replica is reached, for the transport in use. */
static const char *replica_addr(const struct cli_targets *t, const Ofc__V1__Replica *r)
{
	return t->https ? OR_DASH(r->url) : OR_DASH(r->socket);
}

static void print_text(const struct cli_targets *t, const struct cl_report *c)
{
	const Ofc__V1__State *s = c->main ? c->main->s : NULL;
	const Ofc__V1__Cluster *cl = s ? s->cluster : NULL;

	printf("fabric %s", s ? OR_DASH(s->fabric_name) : "?");
	if (cl && cl->leader)
		printf(", leader %s (epoch %llu)", OR_DASH(cl->leader->name),
		       (unsigned long long)cl->leader->epoch);
	else if (cl)
		printf(", no leader");
	else if (s && s->tenant)
		printf(", as tenant %s sees it: its partitions alone (the replicas, etcd and the "
		       "devices' health are the operator's)",
		       s->tenant);
	else if (s)
		printf(", one ofcd (not replicated)");
	printf("\n");
	if (cl && cl->n_replicas) {
		/* the store's list: every replica that holds a lease */
		for (size_t i = 0; i < cl->n_replicas; i++) {
			const Ofc__V1__Replica *r = cl->replicas[i];

			printf("  replica    %s: %s", OR_DASH(r->name), OR_DASH(r->role));
			if (r->role && strcmp(r->role, "leader") == 0)
				printf(", epoch %llu", (unsigned long long)r->epoch);
			printf(", lease %.1f s left, last contact %.1f s ago, at %s",
			       r->lease_left_seconds, r->since_contact_seconds, replica_addr(t, r));
			if (r->host && *r->host)
				printf(" (pid %u on %s)", r->pid, r->host);
			printf("\n");
		}
	}
	for (size_t i = 0; cl && i < cl->n_known_replicas; i++)
		if (!running(cl, cl->known_replicas[i]))
			printf("  replica    %s: MISSING (registered before, no lease now)\n",
			       cl->known_replicas[i]);
	for (uint32_t i = 0; i < c->n; i++) {
		const struct cl_view *v = &c->v[i];
		const Ofc__V1__Cluster *vc = v->s ? v->s->cluster : NULL;

		if (!v->s) {
			printf("  address    %s: DOES NOT ANSWER: %s\n", v->addr, v->why);
			continue;
		}
		if (cl && cl->n_replicas)
			continue; /* shown above, by the store */
		if (!vc) {
			printf("  address    %s: %s\n", v->addr,
			       v->s->tenant ? "answers" : "one ofcd, not replicated");
			continue;
		}
		printf("  replica    %s: %s", OR_DASH(vc->name), OR_DASH(vc->role));
		if (is_leader(v->s) && vc->leader)
			printf(", epoch %llu", (unsigned long long)vc->leader->epoch);
		printf(", lease %.1f s left, ", vc->lease_left_seconds);
		if (vc->has_since_contact_seconds && vc->since_contact_seconds >= 0)
			printf("etcd answered %.1f s ago", vc->since_contact_seconds);
		else
			printf("etcd has not answered yet");
		printf(", at %s%s\n", v->addr, vc->stale ? " (STALE)" : "");
	}
	for (size_t i = 0; cl && i < cl->n_members; i++)
		printf("  etcd       %s (%s): %s%s\n", OR_DASH(cl->members[i]->name),
		       OR_DASH(cl->members[i]->url), cl->members[i]->reachable ? "up" : "DOWN",
		       cl->members[i]->leader ? ", raft leader" : "");
	if (s && !s->tenant) {
		size_t up = 0, known = 0, led = 0;
		uint64_t oldest = 0, now = unix_ms();
		const char *by = NULL;

		for (size_t i = 0; i < s->n_devices; i++) {
			const Ofc__V1__DeviceState *dv = s->devices[i];

			if (dv->has_reachable) {
				known++;
				up += dv->reachable;
			} else if (dv->last_contact_by && dv->has_last_contact_unix_ms) {
				/* a follower talks to no device: the leader's word */
				led++;
				by = dv->last_contact_by;
				if (!oldest || dv->last_contact_unix_ms < oldest)
					oldest = dv->last_contact_unix_ms;
			}
		}
		printf("  devices    %zu: %zu reachable", s->n_devices, up);
		if (led)
			printf(", %zu answered the leader (%s) within %.1f s", led, by,
			       now > oldest ? (double)(now - oldest) / 1000 : 0.0);
		if (known + led < s->n_devices)
			printf(", %zu not contacted yet", s->n_devices - known - led);
		for (size_t i = 0; i < s->n_devices; i++)
			if (s->devices[i]->has_reachable && !s->devices[i]->reachable)
				printf("; %s UNREACHABLE", OR_DASH(s->devices[i]->name));
		printf("\n");
	}
	if (s) {
		printf("  queue      %zu waiting%s\n", s->n_queue, s->tenant ? " (its own)" : "");
		for (size_t i = 0; i < s->n_held; i++)
			printf("  held       %s: %s on %zu host%s\n", OR_DASH(s->held[i]->name),
			       OR_DASH(s->held[i]->topology), s->held[i]->n_hosts,
			       s->held[i]->n_hosts == 1 ? "" : "s");
		if (!s->n_held)
			printf("  held       none\n");
	}
	if (!c->nproblems) {
		printf("healthy\n");
		return;
	}
	/* on stdout, and one per line on stderr for a probe's log */
	printf("PROBLEMS:\n");
	for (char *p = c->problems.buf, *e; p; p = e ? e + 1 : NULL) {
		int n;

		e = strchr(p, '\n');
		n = (int)(e ? e - p : (long)strlen(p));
		printf("  %.*s\n", n, p);
		fprintf(stderr, "ofc cluster: %.*s\n", n, p);
	}
}

/* --json: the report as ofc.v1.ClusterReport (proto/cli_report.proto),
 * borrowing the answers' messages; built in a. */
static void print_json_doc(const struct cl_report *c, struct arena *a)
{
	const Ofc__V1__State *s = c->main ? c->main->s : NULL;
	const Ofc__V1__Cluster *cl = s ? s->cluster : NULL;
	Ofc__V1__ClusterReport m = OFC__V1__CLUSTER_REPORT__INIT;

	m.has_healthy = m.has_queue_depth = 1;
	m.healthy = c->nproblems == 0;
	/* (one a line of c->problems) */
	size_t lines = 1;
	for (const char *p = c->problems.buf; c->nproblems && p && (p = strchr(p, '\n')); p++)
		lines++;
	m.problems = arena_array(a, lines + 1, sizeof(*m.problems));
	for (const char *p = c->nproblems ? c->problems.buf : NULL, *e; p; p = e ? e + 1 : NULL) {
		e = strchr(p, '\n');
		m.problems[m.n_problems++] =
		    e ? arena_printf(a, "%.*s", (int)(e - p), p) : arena_strdup(a, p);
	}
	m.fabric = s ? s->fabric_name : NULL;
	m.leader = cl ? cl->leader : NULL;
	/* the store's list (ofc.v1.Replica), when ofcd sends it */
	if (cl) {
		m.n_replicas = cl->n_replicas;
		m.replicas = cl->replicas;
		m.n_etcd = cl->n_members;
		m.etcd = cl->members;
	}
	/* each address given: its own ofc.v1.Cluster, or why it gave none */
	m.addresses = arena_array(a, c->n + 1, sizeof(*m.addresses));
	for (uint32_t i = 0; i < c->n; i++) {
		const struct cl_view *v = &c->v[i];
		Ofc__V1__ClusterAddress *ad = arena_alloc(a, sizeof(*ad));

		ofc__v1__cluster_address__init(ad);
		ad->address = (char *)v->addr;
		ad->has_answered = 1;
		ad->answered = v->s != NULL;
		ad->error = v->s ? NULL : (char *)v->why;
		ad->cluster = v->s ? v->s->cluster : NULL;
		m.addresses[m.n_addresses++] = ad;
	}
	m.devices = arena_array(a, (s ? s->n_devices : 0) + 1, sizeof(*m.devices));
	for (size_t i = 0; s && i < s->n_devices; i++) {
		const Ofc__V1__DeviceState *d = s->devices[i];
		Ofc__V1__ClusterDevice *cd = arena_alloc(a, sizeof(*cd));

		ofc__v1__cluster_device__init(cd);
		cd->name = (char *)OR_DASH(d->name);
		cd->has_reachable = d->has_reachable;
		cd->reachable = d->reachable;
		cd->error = d->error;
		m.devices[m.n_devices++] = cd;
	}
	m.queue_depth = s ? s->n_queue : 0;
	if (s) {
		m.n_held = s->n_held;
		m.held = s->held;
	}
	cli_print_message(stdout, &m.base);
}

static const struct cli_cmd cluster_base = {
    "cluster", "status", "every replica's role, lease and contact, etcd, devices, queue and holds",
    NULL};

static const char cluster_help[] =
    "Asks every address given (--socket PATH or --server URL, repeated or a comma\n"
    "list; else OFC_SOCKET, else " OFCD_SOCKET_DEFAULT ") for its state and shows the\n"
    "deployment: every replica (role, epoch when it leads, lease left, last contact,\n"
    "address), etcd's members and their health, the devices, the queue's depth and\n"
    "the held partitions. Exit status 1 when something is wrong: no leader, an\n"
    "address or etcd member that does not answer, a device unreachable, a stale\n"
    "replica, a replica missing (one that registered before and runs no more: the\n"
    "store's registry knows every replica that should run, so one address is\n"
    "enough); the problems are listed (on stderr too).\n";

struct cluster_opts {
	double timeout;
	bool json;
};

static const struct opt cluster_table[] = {
    {"json", NULL, offsetof(struct cluster_opts, json), NULL,
     "one JSON document: healthy, problems, leader, replicas (the store's ofc.v1.Replica "
     "list), addresses (each one's ofc.v1.Cluster or error), etcd, devices, queue_depth, held",
     .letter = 'j'},
    {"timeout", cli_row_duration, offsetof(struct cluster_opts, timeout), "DUR",
     "how long each address may take to answer (default 5s)", .letter = 'W'},
    CLI_OPT_HELP,
    {NULL},
};

const struct cli_table cluster_cli_table = {"cluster", cluster_table, sizeof(struct cluster_opts)};

static const struct cli_opts cluster_opts = {cluster_table, cluster_help};

/* The command as the user typed it: "--socket PATH cluster" when the
 * addresses came from an option, so usage errors name it. */
static struct cli_cmd named(const struct cli_cmd *base, const struct cli_targets *t, char *buf,
			    size_t n)
{
	struct cli_cmd c = *base;

	if (!t->default_socket && t->opt && t->opt[0] == '-') {
		snprintf(buf, n, "%s %s", t->https ? "--server URL" : "--socket PATH", base->name);
		c.name = buf;
	}
	return c;
}

int cluster_main(struct cli_targets *t, int argc, char **argv)
{
	char nbuf[64];
	const struct cli_cmd cluster_cmd = named(&cluster_base, t, nbuf, sizeof(nbuf));
	struct cluster_opts o = {.timeout = 5};
	struct cl_report *c;
	int first, rc;

	/* the subcommand first, as `ofc slurm` takes its own */
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cli_help_opts(&cluster_cmd, &cluster_opts);
	if (argc < 2 || strcmp(argv[1], "status") != 0)
		return cli_usage_error(
		    &cluster_cmd, argc < 2 ? "expected status" : "unknown subcommand '%s' (status)",
		    argc < 2 ? "" : argv[1]);
	argc--;
	argv++;
	if (!cli_parse(&cluster_cmd, &cluster_opts, argc, argv, &o, &first, &rc))
		return rc;
	if (first < argc)
		return cli_usage_error(&cluster_cmd, "unexpected argument '%s'", argv[first]);
	double timeout = o.timeout;
	bool json = o.json;

	c = xcalloc(1, sizeof(*c));
	ask_each(t, timeout, c);
	judge(c);
	if (json) {
		struct arena a = {0};

		print_json_doc(c, &a);
		arena_free(&a);
	} else {
		print_text(t, c);
	}
	rc = c->main ? (c->nproblems ? 1 : 0) : 1;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->v[i].resp)
			ofc__v1__response__free_unpacked(c->v[i].resp, NULL);
	sb_free(&c->problems);
	free(c);
	return rc;
}

static const struct cli_cmd metrics_base = {"metrics", "",
					    "ofcd's metrics, as Prometheus scrapes them", NULL};

struct metrics_opts {
	double timeout;
};

static const struct opt metrics_table[] = {
    {"timeout", cli_row_duration, offsetof(struct metrics_opts, timeout), "DUR",
     "give up after DUR (default 30s)", .letter = 'W'},
    CLI_OPT_HELP,
    {NULL},
};

const struct cli_table metrics_cli_table = {"metrics", metrics_table, sizeof(struct metrics_opts)};

static const struct cli_opts metrics_opts = {
    metrics_table,
    "Prints GetMetrics' answer: the Prometheus text exposition of the replica asked\n"
    "(the first of the addresses given that answers, --socket PATH or --server\n"
    "URL, repeated or a comma list; every replica has its own).\n",
};

int metrics_main(struct cli_targets *t, int argc, char **argv)
{
	char nbuf[64];
	const struct cli_cmd metrics_cmd = named(&metrics_base, t, nbuf, sizeof(nbuf));
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetMetrics gm = OFC__V1__GET_METRICS__INIT;
	Ofc__V1__Response *resp;
	struct ofc_error err = {0};
	struct metrics_opts o = {.timeout = 30};
	int first, rc;

	if (!cli_parse(&metrics_cmd, &metrics_opts, argc, argv, &o, &first, &rc))
		return rc;
	if (first < argc)
		return cli_usage_error(&metrics_cmd, "unexpected argument '%s'", argv[first]);
	double timeout = o.timeout;

	req.body_case = OFC__V1__REQUEST__BODY_GET_METRICS;
	req.get_metrics = &gm;
	if (cli_call(t, &req, timeout, CLI_CALL_READ | CLI_CALL_QUICK, &resp, &err) < 0) {
		fprintf(stderr, "ofc: %s\n", err.msg);
		return 1;
	}
	if (resp->status == OFC__V1__STATUS__STATUS_OK &&
	    resp->body_case == OFC__V1__RESPONSE__BODY_METRICS) {
		fputs(resp->metrics ? resp->metrics : "", stdout);
		rc = 0;
	} else {
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "no metrics");
		rc = resp->status == OFC__V1__STATUS__STATUS_INVALID ? 2 : 1;
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

/* Without --socket or --server: OFC_SOCKET's addresses, else the default. */
static int local_targets(const struct cli_cmd *cmd, int argc, char **argv,
			 int (*run)(struct cli_targets *, int, char **))
{
	struct cli_targets *t = xcalloc(1, sizeof(*t));
	struct ofc_error err = {0};
	int rc;

	(void)cmd;
	if (cli_targets_from_env(t, &err) < 0) {
		free(t);
		fprintf(stderr, "ofc: %s\n", err.msg);
		return 2;
	}
	rc = run(t, argc, argv);
	free(t);
	return rc;
}

int cmd_cluster(const struct cli_cmd *cmd, int argc, char **argv)
{
	return local_targets(cmd, argc, argv, cluster_main);
}

int cmd_metrics(const struct cli_cmd *cmd, int argc, char **argv)
{
	return local_targets(cmd, argc, argv, metrics_main);
}
