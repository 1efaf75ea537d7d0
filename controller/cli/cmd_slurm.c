/* `ofc slurm prolog|epilog|topology|hostlist` (docs/slurm.md):
 * Slurm jobs get their own topology before they start. The prolog is
 * PrologSlurmctld's program: it reads the job from the environment Slurm
 * 22.05 gives it (SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_COMMENT),
 * asks ofcd over its socket for a partition of exactly the job's hosts at
 * the topology the comment asks (relabelled for fewest moves), waits for
 * the commit within a deadline under PrologEpilogTimeout, and on failure
 * puts the reason where `scontrol show job` shows it (AdminComment: Slurm
 * itself records nothing but "prolog exit status") and holds a job whose
 * request can never be met, so it does not come back every two minutes. */
#include "controller/api/api.h"
#include "controller/cli/internal.h"
#include "controller/slurm/slurm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
    "prolog and epilog are PrologSlurmctld and EpilogSlurmctld (through the\n"
    "wrappers in contrib/slurm/); they read SLURM_JOB_ID, SLURM_JOB_NODELIST and\n"
    "SLURM_JOB_COMMENT. A job asks with sbatch --comment 'ofc:topology=SPEC'; the\n"
    "prolog makes partition slurm-job-ID of the job's hosts at SPEC through ofcd\n"
    "(--socket PATH, else OFC_SOCKET, else " OFCD_SOCKET_DEFAULT "; or ofc-gateway:\n"
    "ofc --server URL --cert C --key K --cacert A slurm ...), relabelled for\n"
    "fewest moves, and waits for the commit; the epilog releases it (the circuits\n"
    "stay). Replicas: give every replica's socket (or gateway) as a comma list\n"
    "or a repeated option; the hooks ask the one that leads, past followers and\n"
    "replicas that are down, until the deadline, and a prolog whose leader died\n"
    "mid-request asks the next leader again (a hold it finds made is success).\n"
    "topology writes topology.conf for TopologyPlugin=topology/tree from\n"
    "a fabric config; hostlist prints the hosts of a Slurm hostlist.\n"
    "Exit status: 0 done (or nothing asked), 1 failed (the job is requeued; a\n"
    "request that can never be met also holds it), 2 bad usage.\n";

struct slurm_opts {
	struct cli_targets *t; /* every replica (or gateway) given; the walk finds the leader */
	const char *map_path, *default_topo, *slurm_conf, *scontrol, *config;
	double timeout; /* < 0: from slurm.conf */
	double grace;	/* seconds a prolog waits for any holder's release (0: ended jobs' only) */
	uint32_t group;
};

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

#define O(f) offsetof(struct slurm_opts, f)
static const struct opt slurm_table[] = {
    {"prolog|epilog", .flags = OPT_OPERAND | OPT_REQUIRED, .alt = 1},
    {"topology FILE", .flags = OPT_OPERAND, .alt = 1},
    {"hostlist LIST", .flags = OPT_OPERAND, .alt = 1},
    {"map", opt_str, O(map_path), "FILE",
     "'NODE HOST' lines: the ofc host of each Slurm node (default $OFC_SLURM_MAP, else node "
     "names are hosts)"},
    {"default-topology", opt_str, O(default_topo), "T",
     "for jobs that ask nothing: T with {n} the job's host count (default "
     "$OFC_SLURM_DEFAULT_TOPOLOGY, else such jobs run on the circuits as they are)"},
    {"timeout", cli_row_duration, O(timeout), "S",
     "seconds the prolog waits for the commit (default PrologEpilogTimeout less 5 s from "
     "slurm.conf, else 300)"},
    {"release-grace", cli_row_duration, O(grace), "S",
     "a prolog refused because another partition holds its hosts waits up to S for it to be "
     "released, whatever it is (default $OFC_SLURM_RELEASE_GRACE, else 0: only for the "
     "partition of a job Slurm says ended, up to 60 s)"},
    {"slurm-conf", opt_str, O(slurm_conf), "FILE",
     "slurm.conf (default $SLURM_CONF, else /etc/slurm/slurm.conf)"},
    {"scontrol", opt_str, O(scontrol), "PATH",
     "scontrol, to record a failure's reason on the job (default $OFC_SLURM_SCONTROL, else "
     "/usr/bin/scontrol)"},
    {"config", opt_str, O(config), "FILE", "topology: the fabric's config",
     .under = "topology FILE", .flags = OPT_REQUIRED},
    {"group", cli_row_u32, O(group), "N", "topology: leaves of N hosts within each island", 1,
     SLURM_MAX_HOSTS, .under = "topology FILE"},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table slurm_cli_table = {"slurm", slurm_table, sizeof(struct slurm_opts)};

/* The prolog's deadline: PrologEpilogTimeout less a margin for telling
 * Slurm why, else 300 s (Slurm without it waits forever; we do not). */
static double prolog_timeout(const struct slurm_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	struct ofc_error e = {0};
	uint32_t t = 0;

	if (o->timeout >= 0)
		return o->timeout;
	if (read_file(o->slurm_conf, 1 << 20, &text, &len, &e) == 0) {
		t = slurm_conf_timeout(text);
		free(text);
	}
	if (!t)
		return 300;
	return t > 10 ? t - 5 : (double)t / 2;
}

/* Run scontrol ARGS within 10 s; its output into out (up to outsz - 1
 * bytes, the rest dropped; out NULL: all dropped, the prolog's own line
 * says what it did). */
static int run_scontrol_out(const struct slurm_opts *o, char *const args[], char *out, size_t outsz)
{
	char *argv[8];
	int n = 0, fd[2] = {-1, -1};
	size_t got = 0;
	pid_t pid;

	argv[n++] = (char *)o->scontrol;
	for (int i = 0; args[i] && n < 7; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (out && pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out) {
			close(fd[0]);
			close(fd[1]);
		}
		return -1;
	}
	if (pid == 0) {
		if (out) {
			dup2(fd[1], 1);
			close(fd[0]);
			close(fd[1]);
		} else {
			FILE *devnull = freopen("/dev/null", "w", stdout);

			(void)devnull;
		}
		if (!getenv("SLURM_CONF"))
			setenv("SLURM_CONF", o->slurm_conf, 1);
		execv(o->scontrol, argv);
		_exit(127);
	}
	if (out) {
		close(fd[1]);
		fcntl(fd[0], F_SETFL, O_NONBLOCK);
		out[0] = 0;
	}
	double end = now_seconds() + 10;
	for (;;) {
		int st;
		char drop[512];

		while (out) { /* (drained as it comes: a full pipe would stall it) */
			ssize_t k = got + 1 < outsz ? read(fd[0], out + got, outsz - 1 - got)
						    : read(fd[0], drop, sizeof(drop));
			if (k <= 0)
				break;
			if (got + 1 < outsz)
				got += (size_t)k;
		}
		if (out)
			out[got] = 0;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR) || now_seconds() > end) {
			if (r != pid && r >= 0) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
			}
			if (out)
				close(fd[0]);
			return r == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static int run_scontrol(const struct slurm_opts *o, char *const args[])
{
	return run_scontrol_out(o, args, NULL, 0);
}

/* The value of FIELD= in `scontrol show job -o JOB`'s line, into v ("":
 * no such field); -1: scontrol failed (no such job any more: purged). */
static int job_field(const struct slurm_opts *o, const char *job, const char *field, char *v,
		     size_t vsz)
{
	char out[8192], key[64];
	char *show[] = {"show", "job", "-o", (char *)job, NULL};

	v[0] = 0;
	if (run_scontrol_out(o, show, out, sizeof(out)) < 0)
		return -1;
	snprintf(key, sizeof(key), " %s=", field);
	const char *p = strstr(out, key);
	if (!p && strncmp(out, key + 1, strlen(key) - 1) == 0)
		p = out - 1;
	if (!p)
		return 0;
	p += strlen(key);
	size_t k = 0;
	while (p[k] && p[k] != '\n' && p[k] != ' ' && k + 1 < vsz)
		k++;
	memcpy(v, p, k);
	v[k] = 0;
	return 0;
}

/* Tell Slurm why: AdminComment (scontrol show job prints it), and a hold
 * when the request can never be met. */
static void tell_slurm(const struct slurm_opts *o, const char *job, const char *why, bool hold)
{
	char id[64], comment[600];
	size_t k = 0;

	snprintf(id, sizeof(id), "JobId=%s", job);
	k = (size_t)snprintf(comment, sizeof(comment), "AdminComment=ofc: ");
	for (const char *p = why; *p && k + 1 < sizeof(comment); p++)
		comment[k++] = isprint((unsigned char)*p) && *p != '"' ? *p : ' ';
	comment[k] = 0;
	char *upd[] = {"update", id, comment, NULL};
	if (run_scontrol(o, upd) < 0)
		fprintf(stderr, "ofc slurm: job %s: %s could not record the reason on the job\n",
			job, o->scontrol);
	if (hold) {
		char *h[] = {"hold", (char *)job, NULL};

		if (run_scontrol(o, h) < 0)
			fprintf(stderr, "ofc slurm: job %s: %s could not hold the job\n", job,
				o->scontrol);
	}
}

/* SLURM_JOB_ID: digits (it names the partition and goes to scontrol). */
static const char *job_id(void)
{
	const char *id = getenv("SLURM_JOB_ID");

	if (!id || !*id || strlen(id) > 20 || strspn(id, "0123456789") != strlen(id))
		return NULL;
	return id;
}

/* The job's hosts: SLURM_JOB_NODELIST expanded and mapped. */
static int job_hosts(const struct slurm_opts *o, char ***hosts, uint32_t *n, struct ofc_error *err)
{
	const char *list = getenv("SLURM_JOB_NODELIST");
	struct slurm_map m = {0};
	char **nodes;
	uint32_t nn;

	*hosts = NULL;
	*n = 0;
	if (!list || !*list)
		return ofc_error_set(err, OFC_E_INPUT, "SLURM_JOB_NODELIST is not set");
	if (o->map_path && slurm_map_load(o->map_path, &m, err) < 0)
		return -1;
	if (slurm_hostlist_expand(list, &nodes, &nn, err) < 0) {
		slurm_map_free(&m);
		return -1;
	}
	for (uint32_t i = 0; i < nn; i++) {
		const char *h = slurm_map_host(&m, nodes[i]);

		if (!h) {
			ofc_error_set(err, OFC_E_INPUT, "node %s has no ofc host in %s", nodes[i],
				      o->map_path);
			slurm_strv_free(nodes, nn);
			slurm_map_free(&m);
			return -1;
		}
		if (h != nodes[i]) {
			free(nodes[i]);
			nodes[i] = xstrdup(h);
		}
	}
	slurm_map_free(&m);
	*hosts = nodes;
	*n = nn;
	return 0;
}

/* INVALID, NOT_FOUND, DENIED: asking again will not help. */
static bool final_status(Ofc__V1__Status st)
{
	return st == OFC__V1__STATUS__STATUS_INVALID || st == OFC__V1__STATUS__STATUS_NOT_FOUND ||
	       st == OFC__V1__STATUS__STATUS_DENIED;
}

/* One request to the replica that leads, within `timeout` seconds: the
 * addresses are walked (targets.c) past followers, replicas that do not
 * answer and an election. *resp NULL: not answered (err names every
 * address and why). */
static int ask(const struct slurm_opts *o, Ofc__V1__Request *req, double timeout, unsigned flags,
	       Ofc__V1__Response **resp, struct ofc_error *err)
{
	*resp = NULL;
	return cli_call(o->t, req, timeout > 0.5 ? timeout : 0.5, flags, resp, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether state s holds `name` on exactly these hosts at spec. */
static bool holds(const Ofc__V1__State *s, const char *name, char **hosts, uint32_t n,
		  const char *spec)
{
	bool same = false;

	for (size_t i = 0; i < s->n_held && !same; i++) {
		const Ofc__V1__HeldPartition *h = s->held[i];

		if (!h->name || strcmp(h->name, name) != 0 || h->n_hosts != n || !h->topology ||
		    strcmp(h->topology, spec) != 0)
			continue;
		char **a = xcalloc(n + 1, sizeof(*a)), **b = xcalloc(n + 1, sizeof(*b));
		memcpy(a, hosts, n * sizeof(*a));
		memcpy(b, h->hosts, n * sizeof(*b));
		qsort(a, n, sizeof(*a), cmp_str);
		qsort(b, n, sizeof(*b), cmp_str);
		same = true;
		for (uint32_t k = 0; k < n && same; k++)
			same = strcmp(a[k], b[k]) == 0;
		free(a);
		free(b);
	}
	return same;
}

/* After a refusal: is `name` held already on exactly these hosts at spec?
 * The leader may have died after committing the prolog's first try, and
 * the retry on the next leader then finds the hold it made: the job has
 * what it asked for. Every address is asked (a replica that does not
 * lead may not show the leader's holds): held on any is held. */
static bool already_held(const struct slurm_opts *o, const char *name, char **hosts, uint32_t n,
			 const char *spec, double timeout)
{
	struct cli_targets *one = xcalloc(1, sizeof(*one));
	double end = now_seconds() + timeout;
	bool same = false;

	for (uint32_t i = 0; i < o->t->n && !same && now_seconds() < end; i++) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		Ofc__V1__Response *resp = NULL;
		struct ofc_error err = {0};
		double left = end - now_seconds();

		memset(one, 0, sizeof(*one));
		one->https = o->t->https;
		one->srv = o->t->srv;
		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		if (cli_targets_add(one, o->t->opt, o->t->addr[i], &err) < 0 ||
		    cli_call(one, &req, left < 5 ? left : 5, CLI_CALL_READ, &resp, &err) < 0)
			continue;
		same = resp->status == OFC__V1__STATUS__STATUS_OK &&
		       resp->body_case == OFC__V1__RESPONSE__BODY_STATE &&
		       holds(resp->state, name, hosts, n, spec);
		ofc__v1__response__free_unpacked(resp, NULL);
	}
	free(one);
	return same;
}

/* already_held now, or (wait) once the next leader has run what a deposed
 * leader handed to etcd's queue: it answered UNAVAILABLE ("do not send it
 * again"), and the request runs after the takeover. Polled until the
 * prolog's deadline, less the margin for telling Slurm why. */
static bool held_by_deadline(const struct slurm_opts *o, const char *name, char **hosts, uint32_t n,
			     const char *spec, double deadline, bool wait)
{
	for (;;) {
		double left = deadline - now_seconds();
		struct timespec ts = {0, 500 * 1000 * 1000};

		if (already_held(o, name, hosts, n, spec, left))
			return true;
		if (!wait || left < 1.5)
			return false;
		nanosleep(&ts, NULL);
	}
}

/* Whether partition p, which holds some of a job's hosts, is on its way
 * out: the partition of a Slurm job that ended (its EpilogSlurmctld is
 * releasing it; with replicas, the release may reach the next leader a
 * moment after the next job's prolog). A job Slurm does not know (purged,
 * or scontrol failed) is not counted as ended. */
static bool holder_ended(const struct slurm_opts *o, const char *p)
{
	static const char *const ended[] = {
	    "COMPLETING", "COMPLETED", "CANCELLED", "FAILED",	"TIMEOUT",
	    "NODE_FAIL",  "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
	};
	const char *id = strncmp(p, "slurm-job-", 10) == 0 ? p + 10 : NULL;
	char st[64];

	if (!id || !*id || strlen(id) > 20 || strspn(id, "0123456789") != strlen(id) ||
	    job_field(o, id, "JobState", st, sizeof(st)) < 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(ended); i++)
		if (strcmp(st, ended[i]) == 0)
			return true;
	return false;
}

/* The first partition but `name` in state s that holds one of hosts (NULL:
 * none). */
static const char *holder_of(const Ofc__V1__State *s, const char *name, char **hosts, uint32_t n)
{
	for (size_t i = 0; i < s->n_held; i++) {
		const Ofc__V1__HeldPartition *h = s->held[i];

		if (!h->name || strcmp(h->name, name) == 0)
			continue;
		for (size_t a = 0; a < h->n_hosts; a++)
			for (uint32_t b = 0; b < n; b++)
				if (strcmp(h->hosts[a], hosts[b]) == 0)
					return h->name;
	}
	return NULL;
}

/* After a refusal: while another partition holds some of the job's hosts
 * and is on its way out (holder_ended), or for the operator's grace
 * (--release-grace) whatever holds them, wait until none does, then true
 * (ask again). The wait ends at the prolog's deadline, and an ended job's
 * release is waited for at most SLURM_RELEASE_WAIT s. false: no holder at
 * the first read (the refusal was not about the hosts), a holder that is
 * not leaving, or one still there at the bound (why says which). */
#define SLURM_RELEASE_WAIT 60.0
static bool release_came(const struct slurm_opts *o, const char *name, char **hosts, uint32_t n,
			 double deadline, char *why, size_t whysz)
{
	double t0 = now_seconds(), bound = deadline;
	char last[128] = "";

	if (o->grace > 0 && t0 + o->grace < bound)
		bound = t0 + o->grace;
	else if (o->grace <= 0 && t0 + SLURM_RELEASE_WAIT < bound)
		bound = t0 + SLURM_RELEASE_WAIT;
	for (;;) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		Ofc__V1__Response *resp = NULL;
		struct ofc_error err = {0};
		double left = bound - now_seconds();
		bool gone = false, leaving = false, read = false;

		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		if (left > 0 &&
		    ask(o, &req, left < 5 ? left : 5, CLI_CALL_READ, &resp, &err) == 0 &&
		    resp->status == OFC__V1__STATUS__STATUS_OK &&
		    resp->body_case == OFC__V1__RESPONSE__BODY_STATE) {
			read = true;
			const char *h = holder_of(resp->state, name, hosts, n);

			gone = !h;
			if (h && strcmp(h, last) != 0) { /* (asked of Slurm once a holder) */
				snprintf(last, sizeof(last), "%s", h);
				leaving = o->grace > 0 || holder_ended(o, h);
				if (!leaving)
					snprintf(why, whysz, "%s holds its hosts and is not ending",
						 h);
				else /* (the log says why the job has not started yet) */
					printf(
					    "ofc: partition %s: hosts held by %s (%s): waiting for "
					    "its release, %.0f s at most\n",
					    name, h,
					    o->grace > 0 ? "the release grace" : "on its way out",
					    bound - t0);
				fflush(stdout);
			} else {
				leaving = h != NULL;
			}
		}
		if (resp)
			ofc__v1__response__free_unpacked(resp, NULL);
		/* No other partition held the hosts when the refusal came: it
		 * was not about them (a device that failed the transaction),
		 * and Slurm requeues the job as before. */
		if (gone && !last[0])
			return false;
		if (gone)
			return true;
		if (read && !leaving)
			return false;
		if (now_seconds() + 0.25 >= bound) {
			snprintf(why, whysz, "%s%s did not let its hosts go within %.0f s",
				 last[0] ? "" : "the state could not be read, or ",
				 last[0] ? last : "a holder", bound - t0);
			return false;
		}
		struct timespec ts = {0, 250 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* The job runs: a reason an earlier try recorded (AdminComment=ofc: ...)
 * is cleared, so `scontrol show job` no longer shows an old refusal. */
static void clear_reason(const struct slurm_opts *o, const char *job)
{
	char v[16], id[64];

	if (job_field(o, job, "AdminComment", v, sizeof(v)) < 0 || strncmp(v, "ofc:", 4) != 0)
		return;
	snprintf(id, sizeof(id), "JobId=%s", job);
	char *upd[] = {"update", id, "AdminComment=", NULL};
	if (run_scontrol(o, upd) < 0)
		fprintf(stderr,
			"ofc slurm: job %s: %s could not clear the reason recorded before\n", job,
			o->scontrol);
}

/* The prolog's request: partition name of the job's hosts at spec,
 * asked until it commits, is found held across a failover, or is refused
 * for good; a refusal because hosts are still held by a partition on its
 * way out waits for its release and asks again (release_came). Returns the
 * prolog's exit status. */
static int prolog_ask(const struct slurm_opts *o, const char *job, const char *name,
		      const char *spec, char **hosts, uint32_t n, bool relabel, double t0,
		      double timeout)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Reconfigure rc_msg = OFC__V1__RECONFIGURE__INIT;
	Ofc__V1__Response *resp = NULL;
	struct ofc_error err = {0};
	char waited[200] = "", why[200] = "";
	int rc = 1;
	/* the request `ofc reconfigure --partition NAME --topology SPEC
	 * --hosts ...` sends, through its builder */
	struct reconfigure_ask a = {
	    .partition = name, .topology = spec, .hosts = hosts, .nhosts = n, .relabel = relabel};

	req.has_id = 1;
	req.id = 1;
	if (reconfigure_build(&a, &rc_msg, &err) < 0) {
		fprintf(stderr, "ofc slurm prolog: job %s: %s\n", job, err.msg);
		tell_slurm(o, job, err.msg, true);
		return 1;
	}
	api_set_body(&req, &api_requests[API_RECONFIGURE], &rc_msg.base);
	for (int tries = 0;; tries++) {
		if (ask(o, &req, timeout - (now_seconds() - t0), CLI_CALL_PERSIST, &resp, &err) <
		    0) {
			char w[700];

			snprintf(w, sizeof(w), "%.400s (partition %s: %.200s on %u hosts)", err.msg,
				 name, spec, n);
			fprintf(stderr, "ofc slurm prolog: job %s: %s\n", job, w);
			tell_slurm(o, job, w, false);
			return 1;
		}
		if (resp->status == OFC__V1__STATUS__STATUS_OK ||
		    held_by_deadline(o, name, hosts, n, spec, t0 + timeout,
				     resp->status == OFC__V1__STATUS__STATUS_UNAVAILABLE))
			break;
		if (tries >= 8 || final_status(resp->status) ||
		    !release_came(o, name, hosts, n, t0 + timeout, why, sizeof(why)))
			break;
		snprintf(waited, sizeof(waited), " after waiting %.1f s for a release (%.120s)",
			 now_seconds() - t0, resp->message ? resp->message : "refused");
		ofc__v1__response__free_unpacked(resp, NULL);
		req.request_key = NULL; /* (another request: the first's outcome is recorded) */
	}
	if (resp->status == OFC__V1__STATUS__STATUS_OK) {
		const Ofc__V1__TransactionInfo *t =
		    resp->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION ? resp->transaction
									   : NULL;

		char ops[48] = "";

		/* (none counted: a next leader's record of a commit its
		 * predecessor made and did not answer) */
		if (t && t->has_operations)
			snprintf(ops, sizeof(ops), ": %u operation%s", t->operations,
				 t->operations == 1 ? "" : "s");
		printf("ofc: job %s: partition %s: %s on %u host%s committed%s (transaction %llu) "
		       "in %.3f s%s\n",
		       job, name, spec, n, n == 1 ? "" : "s", ops,
		       t ? (unsigned long long)t->id : 0ULL, now_seconds() - t0, waited);
		rc = 0;
	} else if (held_by_deadline(o, name, hosts, n, spec, t0 + timeout, false)) {
		/* asked twice across a failover: the first commit stands; or
		 * the next leader ran what the deposed one handed on */
		printf("ofc: job %s: partition %s: %s on %u host%s is held (committed across a "
		       "failover; %s answered: %s) in %.3f s\n",
		       job, name, spec, n, n == 1 ? "" : "s", o->t->answered,
		       resp->message ? resp->message : "refused", now_seconds() - t0);
		rc = 0;
	} else {
		bool final = final_status(resp->status);

		fprintf(stderr, "ofc slurm prolog: job %s: %s%s%s%s\n", job,
			resp->message ? resp->message : "ofcd refused",
			final ? " (held: the request cannot be met)" : " (requeued)",
			why[0] ? "; " : "", why);
		tell_slurm(o, job, resp->message ? resp->message : "ofcd refused", final);
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	if (rc == 0)
		clear_reason(o, job);
	return rc;
}

static int prolog(const struct slurm_opts *o)
{
	const char *job = job_id();
	double t0 = now_seconds(), timeout = prolog_timeout(o);
	struct slurm_request rq;
	struct ofc_error err = {0};
	char **hosts = NULL, name[48], spec[TOPO_MAX_SPEC + 1];
	uint32_t n = 0;
	int rc = 1;

	if (!job) {
		fprintf(stderr, "ofc slurm prolog: SLURM_JOB_ID is not a job id (run me as "
				"PrologSlurmctld)\n");
		return 2;
	}
	if (slurm_request_parse(getenv("SLURM_JOB_COMMENT"), &rq, &err) < 0 ||
	    job_hosts(o, &hosts, &n, &err) < 0) {
		fprintf(stderr, "ofc slurm prolog: job %s: %s\n", job, err.msg);
		tell_slurm(o, job, err.msg, true);
		goto out;
	}
	if (!rq.asked && !o->default_topo) {
		printf("ofc: job %s asks for no topology: it runs on the circuits as they are\n",
		       job);
		rc = 0;
		goto out;
	}
	if (!rq.asked &&
	    slurm_default_spec(o->default_topo, n, rq.topology, sizeof(rq.topology), &err) < 0) {
		fprintf(stderr, "ofc slurm prolog: job %s: %s\n", job, err.msg);
		tell_slurm(o, job, err.msg, false);
		goto out;
	}
	snprintf(spec, sizeof(spec), "%s", rq.topology);
	snprintf(name, sizeof(name), "slurm-job-%s", job);

	rc = prolog_ask(o, job, name, spec, hosts, n, rq.relabel, t0, timeout);
out:
	slurm_strv_free(hosts, n);
	return rc;
}

/* Whether every address answered and none holds `name` (held on any, or
 * one not answering: false, and the epilog asks the release). */
static bool held_nowhere(const struct slurm_opts *o, const char *name)
{
	struct cli_targets *one = xcalloc(1, sizeof(*one));
	bool nowhere = true;

	for (uint32_t i = 0; i < o->t->n && nowhere; i++) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		Ofc__V1__Response *resp = NULL;
		struct ofc_error err = {0};

		memset(one, 0, sizeof(*one));
		one->https = o->t->https;
		one->srv = o->t->srv;
		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		if (cli_targets_add(one, o->t->opt, o->t->addr[i], &err) < 0 ||
		    cli_call(one, &req, 5, CLI_CALL_READ, &resp, &err) < 0) {
			nowhere = false;
			continue;
		}
		nowhere = resp->status == OFC__V1__STATUS__STATUS_OK &&
			  resp->body_case == OFC__V1__RESPONSE__BODY_STATE;
		for (size_t k = 0; nowhere && k < resp->state->n_held; k++)
			nowhere = !resp->state->held[k]->name ||
				  strcmp(resp->state->held[k]->name, name) != 0;
		ofc__v1__response__free_unpacked(resp, NULL);
	}
	free(one);
	return nowhere;
}

static int epilog(const struct slurm_opts *o)
{
	const char *job = job_id();
	struct ofc_error err = {0};
	char name[48];
	int rc = 1;

	if (!job) {
		fprintf(stderr, "ofc slurm epilog: SLURM_JOB_ID is not a job id (run me as "
				"EpilogSlurmctld)\n");
		return 2;
	}
	snprintf(name, sizeof(name), "slurm-job-%s", job);
	/* A job whose prolog was refused holds nothing: no release is asked,
	 * so the refusal is the one event its job makes. */
	if (held_nowhere(o, name)) {
		printf("ofc: job %s held no partition (nothing to release: done)\n", job);
		return 0;
	}

	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReleasePartition rel = OFC__V1__RELEASE_PARTITION__INIT;
	Ofc__V1__Response *resp = NULL;

	req.has_id = 1;
	req.id = 1;
	req.body_case = OFC__V1__REQUEST__BODY_RELEASE_PARTITION;
	req.release_partition = &rel;
	rel.partition = rel.name = name; /* (name: an older ofcd reads that) */
	if (ask(o, &req, o->timeout >= 0 ? o->timeout : 60, CLI_CALL_PERSIST, &resp, &err) < 0) {
		fprintf(stderr, "ofc slurm epilog: job %s: %s\n", job, err.msg);
		return 1;
	}
	if (resp->status == OFC__V1__STATUS__STATUS_OK) {
		printf("ofc: job %s: %s\n", job, resp->message);
		rc = 0;
	} else if (resp->status == OFC__V1__STATUS__STATUS_NOT_FOUND) {
		/* nothing to let go of: a release asked twice across a
		 * failover, or a prolog that made none */
		printf("ofc: job %s held no partition (nothing to release: done)\n", job);
		rc = 0;
	} else {
		fprintf(stderr, "ofc slurm epilog: job %s: %s\n", job,
			resp->message ? resp->message : "ofcd refused");
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

static int topology(const struct cli_cmd *cmd, const struct slurm_opts *o, const char *out_path)
{
	struct fabric *f = NULL;
	struct slurm_map m = {0};
	struct strbuf sb = STRBUF_INIT;
	struct cli_output out;
	struct ofc_error err = {0};
	int rc = 1;

	if (!o->config)
		return cli_usage_error(cmd, "topology needs --config FILE (the fabric)");
	if (fabric_open(o->config, &f, &err) < 0 ||
	    (o->map_path && slurm_map_load(o->map_path, &m, &err) < 0) ||
	    slurm_topology_conf(f, &m, o->group, &sb, &err) < 0 ||
	    cli_output_open(&out, out_path, &err) < 0)
		goto fail;
	fputs(sb.buf, out.f);
	if (cli_output_commit(&out, &err) < 0)
		goto fail;
	rc = 0;
	goto done;
fail:
	rc = cli_fail(&err);
done:
	sb_free(&sb);
	slurm_map_free(&m);
	fabric_free(f);
	return rc;
}

static int hostlist(const struct slurm_opts *o, const char *expr)
{
	struct slurm_map m = {0};
	struct ofc_error err = {0};
	char **v;
	uint32_t n;

	if ((o->map_path && slurm_map_load(o->map_path, &m, &err) < 0) ||
	    slurm_hostlist_expand(expr, &v, &n, &err) < 0)
		return cli_fail(&err);
	int rc = 0;
	for (uint32_t i = 0; i < n; i++) {
		const char *h = slurm_map_host(&m, v[i]);

		if (!h) {
			fprintf(stderr, "ofc: node %s has no ofc host in %s\n", v[i], o->map_path);
			rc = 1;
			break;
		}
		printf("%s\n", h);
	}
	slurm_strv_free(v, n);
	slurm_map_free(&m);
	return rc;
}

int slurm_main(struct cli_targets *t, const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct cli_opts opts = {slurm_table, help, NULL};
	struct slurm_opts o = {
	    .t = t,
	    .map_path = env_or("OFC_SLURM_MAP", NULL),
	    .default_topo = env_or("OFC_SLURM_DEFAULT_TOPOLOGY", NULL),
	    .slurm_conf = env_or("SLURM_CONF", "/etc/slurm/slurm.conf"),
	    .scontrol = env_or("OFC_SLURM_SCONTROL", "/usr/bin/scontrol"),
	    .timeout = -1,
	};
	const char *grace = env_or("OFC_SLURM_RELEASE_GRACE", NULL);
	struct ofc_error err = {0};
	const char *sub;
	int first, rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cli_help_opts(cmd, &opts);
	if (argc < 2)
		return cli_usage_error(cmd, "expected prolog, epilog, topology or hostlist");
	sub = argv[1];
	argc--;
	argv++;
	/* the environment's grace first, as the option's (which overrides it) */
	for (const struct opt *r = slurm_table; grace && r->name; r++)
		if (strcmp(r->name, "release-grace") == 0 && r->parse(r, grace, &o, &err) < 0)
			return cli_usage_error(cmd, "%s", err.msg);
	if (!cli_parse(cmd, &opts, argc, argv, &o, &first, &rc))
		return rc;
	int rest = argc - first;
	if (strcmp(sub, "prolog") == 0 || strcmp(sub, "epilog") == 0) {
		if (rest)
			return cli_usage_error(cmd,
					       "%s takes no arguments (the job comes from "
					       "the environment)",
					       sub);
		if (cli_targets_from_env(t, &err) < 0 || cli_targets_check(t, &err) < 0)
			return cli_usage_error(cmd, "%s", err.msg);
		if (t->https) /* the HTTPS thread may write to a connection given up on */
			signal(SIGPIPE, SIG_IGN);
		t->verbose = true; /* the log says which replica sent it where */
		return sub[0] == 'p' ? prolog(&o) : epilog(&o);
	}
	if (strcmp(sub, "topology") == 0) {
		if (rest != 1)
			return cli_usage_error(cmd, "topology needs the file to write (- for "
						    "stdout)");
		return topology(cmd, &o, argv[first]);
	}
	if (strcmp(sub, "hostlist") == 0) {
		if (rest != 1)
			return cli_usage_error(cmd, "hostlist needs one Slurm hostlist");
		return hostlist(&o, argv[first]);
	}
	return cli_usage_error(cmd, "unknown subcommand '%s' (prolog, epilog, topology, hostlist)",
			       sub);
}

int cmd_slurm(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_targets t = {0};

	return slurm_main(&t, cmd, argc, argv);
}
