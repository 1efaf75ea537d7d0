/* build/netconf-emu's switch: an N x N optical switch of the Polatis
 * optical-switch model (ofc's module, drivers/yang) behind libnetconf2's
 * server, with the running and candidate datastores, locks, confirmed
 * commits (RFC 6241 7.5, 8.3, 8.4), each port's status and optical power,
 * and the faults the tests need (enum nemu_fault). Single-threaded: the
 * main loop calls every function here.
 *
 * Ports on the wire are the model's: ingress 1..N, egress N+1..2N; the
 * tables and the state file hold egress as 1..N, as ofc does.
 */
#include "drivers/emu/internal.h"

#include <errno.h>
#include <libnetconf2/messages_server.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_server.h>
#include <libyang/libyang.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DARK_DBM	-60.0 /* what a port without light reads */
#define HOST_DBM	-3.0  /* what a host sends, unless the health file says */
#define LOSS_DB		1.5   /* through the switch */
#define CONFIRM_DEFAULT 600   /* RFC 6241 8.4.5.1: confirm-timeout's default */
#define HUGE_BYTES	(100ull << 20)

enum { ST_ENABLED = 0, ST_DISABLED, ST_FAILED };

static const char *const fault_names[] = {
    [NF_DENY] = "deny",
    [NF_CLOSE] = "close",
    [NF_CLOSE_AFTER] = "close-after",
    [NF_CLOSE_MID] = "close-mid",
    [NF_STALL] = "stall",
    [NF_GARBAGE] = "garbage",
    [NF_LIE] = "lie",
    [NF_HUGE] = "huge",
    [NF_ENDLESS] = "endless",
    [NF_LOCKED] = "locked",
};

enum nemu_fault nemu_fault_parse(const char *s)
{
	for (size_t i = 1; i < ARRAY_SIZE(fault_names); i++)
		if (strcmp(s, fault_names[i]) == 0)
			return (enum nemu_fault)i;
	return NF_NONE;
}

static void logf_(struct nemu *e, const char *fmt, ...) OFC_PRINTF(2, 3);
static void notify_fault(struct nemu *e, const char *arg);
static void inject_start(struct nemu_client *c, const char *body, uint64_t declared);
static void logf_(struct nemu *e, const char *fmt, ...)
{
	va_list ap;

	if (!e->co.log)
		return;
	va_start(ap, fmt);
	vfprintf(e->co.log, fmt, ap);
	va_end(ap);
	fputc('\n', e->co.log);
	fflush(e->co.log);
}

/* ---- the tables ------------------------------------------------------------------- */

int nemu_init(struct nemu *e, struct ofc_error *err)
{
	(void)err;
	e->run = xcalloc(e->n + 1, sizeof(uint32_t));
	e->cand = xcalloc(e->n + 1, sizeof(uint32_t));
	e->confirm.backup = xcalloc(e->n + 1, sizeof(uint32_t));
	e->status = xcalloc(2 * (size_t)e->n + 1, 1);
	e->alarmed = xcalloc(2 * (size_t)e->n + 1, 1);
	e->scan_due = true;
	e->host_power = xcalloc(e->n + 1, sizeof(double));
	e->shown_power = xcalloc(2 * (size_t)e->n + 1, sizeof(double));
	for (uint32_t i = 1; i <= e->n; i++)
		e->host_power[i] = HOST_DBM;
	return 0;
}

static void copy_table(const struct nemu *e, uint32_t *dst, const uint32_t *src)
{
	memcpy(dst, src, (e->n + 1) * sizeof(uint32_t));
}

/* Write-then-rename, without fsync (as ocs-emu: the emulator's restart,
 * not the machine's crash, is what tests survive). */
static void save_state(struct nemu *e)
{
	char *tmp;
	FILE *f;

	if (!e->state_path)
		return;
	tmp = xasprintf("%s.tmp", e->state_path);
	f = fopen(tmp, "w");
	if (f) {
		for (uint32_t i = 1; i <= e->n; i++)
			if (e->run[i])
				fprintf(f, "%u %u\n", i, e->run[i]);
		if (fclose(f) == 0 && rename(tmp, e->state_path) == 0) {
			free(tmp);
			return;
		}
	}
	fprintf(stderr, "netconf-emu: saving state to %s: %s\n", e->state_path, strerror(errno));
	free(tmp);
}

int nemu_load_state(struct nemu *e, struct ofc_error *err)
{
	char *text, *line, *next;
	size_t len;
	uint8_t *used;

	if (!e->state_path || access(e->state_path, F_OK) != 0)
		return 0;
	if (read_file(e->state_path, 16u << 20, &text, &len, err) < 0)
		return -1;
	used = xcalloc(e->n + 1, 1);
	for (line = text; line && *line; line = next) {
		char a[16], b[16];
		uint32_t in = 0, out = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (sscanf(line, "%15[0-9] %15[0-9]", a, b) != 2 ||
		    strlen(line) != strlen(a) + 1 + strlen(b) || parse_u32(a, &in) < 0 ||
		    parse_u32(b, &out) < 0 || in < 1 || in > e->n || out < 1 || out > e->n ||
		    e->run[in] || used[out]) {
			ofc_error_set(err, OFC_E_INPUT, "%s: bad line '%.40s'", e->state_path,
				      line);
			free(used);
			free(text);
			return -1;
		}
		e->run[in] = out;
		used[out] = 1;
	}
	free(used);
	free(text);
	copy_table(e, e->cand, e->run);
	return 0;
}

static void pause_ms(uint32_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (ms && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Make running hold want: every change logged ("K connect I O",
 * "K disconnect I"), the switching time paid once, the state saved. */
static void set_running(struct nemu *e, const uint32_t *want)
{
	bool changed = false;

	for (uint32_t i = 1; i <= e->n; i++)
		if (e->run[i] != want[i])
			changed = true;
	if (!changed)
		return;
	while (e->hold_path && access(e->hold_path, F_OK) == 0)
		pause_ms(5);
	pause_ms(e->delay_ms);
	for (uint32_t i = 1; i <= e->n; i++) {
		if (e->run[i] == want[i])
			continue;
		if (want[i])
			logf_(e, "%llu connect %u %u", (unsigned long long)e->commands, i, want[i]);
		else
			logf_(e, "%llu disconnect %u", (unsigned long long)e->commands, i);
	}
	copy_table(e, e->run, want);
	save_state(e);
	e->scan_due = true; /* ports in use changed */
}

static void revert(struct nemu *e, const char *why)
{
	logf_(e, "%llu revert (%s)", (unsigned long long)e->commands, why);
	set_running(e, e->confirm.backup);
	copy_table(e, e->cand, e->run);
	e->confirm.pending = false;
}

void nemu_session_end(struct nemu *e, uint32_t sid)
{
	if (e->confirm.pending && e->confirm.sid == sid)
		revert(e, "the session of the confirmed commit ended");
	if (e->lock_cand == sid) {
		e->lock_cand = 0;
		copy_table(e, e->cand, e->run); /* its uncommitted edits go */
	}
	if (e->lock_run == sid)
		e->lock_run = 0;
}

/* ---- health ----------------------------------------------------------------------- */

/* --health FILE, read again when it changes: "PORT status ENABLED|DISABLED|FAILED"
 * (PORT 1..2N) and "PORT power DBM" (what the host sends into ingress PORT
 * 1..N); ports not named are healthy at -3 dBm. */
static void reload_health(struct nemu *e)
{
	struct stat st;
	char *text = NULL;
	size_t len;
	struct ofc_error err = {0};

	if (!e->health_path || stat(e->health_path, &st) != 0 ||
	    (st.st_mtim.tv_sec == e->health_mtime.tv_sec &&
	     st.st_mtim.tv_nsec == e->health_mtime.tv_nsec))
		return;
	e->health_mtime = st.st_mtim;
	if (read_file(e->health_path, 1u << 20, &text, &len, &err) < 0) {
		fprintf(stderr, "netconf-emu: %s\n", err.msg);
		return;
	}
	memset(e->status, ST_ENABLED, 2 * (size_t)e->n + 1);
	for (uint32_t i = 1; i <= e->n; i++)
		e->host_power[i] = HOST_DBM;
	e->scan_due = true;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char what[16], val[32];
		uint32_t port;
		char *end;

		if (strncmp(line, "notify ", 7) == 0) {
			notify_fault(e, line + 7);
			continue;
		}
		if (sscanf(line, "%u %15s %31s", &port, what, val) != 3 || port < 1 ||
		    port > 2 * e->n) {
			fprintf(stderr, "netconf-emu: %s: bad line '%.60s'\n", e->health_path,
				line);
			continue;
		}
		if (strcmp(what, "status") == 0)
			e->status[port] = strcmp(val, "FAILED") == 0	 ? ST_FAILED
					  : strcmp(val, "DISABLED") == 0 ? ST_DISABLED
									 : ST_ENABLED;
		else if (strcmp(what, "power") == 0 && port <= e->n)
			e->host_power[port] = strtod(val, &end);
	}
	free(text);
	logf_(e, "%llu health reloaded", (unsigned long long)e->commands);
}

/* ---- notifications (RFC 5277) ------------------------------------------------------ */

static void event_time(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A port power notification of polatis-switch to every subscribed session. */
static void notify_port(struct nemu *e, const char *name, uint32_t port)
{
	const struct lys_module *mod = ly_ctx_get_module_implemented(e->ctx, "polatis-switch");
	char id[16], when[32];

	if (!mod)
		return;
	snprintf(id, sizeof(id), "%u", port);
	event_time(when, sizeof(when));
	logf_(e, "%llu notify %s %u", (unsigned long long)e->commands, name, port);
	for (struct nemu_client *c = e->clients; c; c = c->next) {
		struct lyd_node *ev = NULL;
		struct nc_server_notif *n;

		if (!c->subscribed || c->gone || !c->nc)
			continue;
		if (lyd_new_inner(NULL, mod, name, 0, &ev) != LY_SUCCESS ||
		    lyd_new_term(ev, NULL, "port-id", id, 0, NULL) != LY_SUCCESS) {
			lyd_free_tree(ev);
			continue;
		}
		n = nc_server_notif_new(ev, when, NC_PARAMTYPE_CONST);
		if (n && nc_server_notif_send(c->nc, n, 1000) != NC_MSG_NOTIF)
			c->gone = true; /* a subscriber that cannot take it */
		nc_server_notif_free(n);
		lyd_free_tree(ev);
	}
}

/* What port p (1..2N) reads, by[] the ingress feeding each egress 1..N. */
static double power_at(const struct nemu *e, uint32_t p, const uint32_t *by)
{
	if (e->status[p] == ST_FAILED)
		return DARK_DBM;
	if (p <= e->n)
		return e->host_power[p];
	if (by[p - e->n] && e->status[by[p - e->n]] != ST_FAILED)
		return e->host_power[by[p - e->n]] - LOSS_DB;
	return DARK_DBM;
}

/* A port in use (an ingress connected, an egress fed) that FAILED or reads
 * under --power-alarm raises port-power-alarm once, and port-power-clear
 * when it is well again while still in use (a switch's power alarm, as
 * the polatis-switch model has it; a port out of use goes quiet). */
static void alarm_scan(struct nemu *e)
{
	uint32_t *by = xcalloc(e->n + 1, sizeof(uint32_t));

	e->scan_due = false;
	for (uint32_t i = 1; i <= e->n; i++)
		if (e->run[i])
			by[e->run[i]] = i;
	for (uint32_t p = 1; p <= 2 * e->n; p++) {
		bool use = p <= e->n ? e->run[p] != 0 : by[p - e->n] != 0;
		bool now =
		    use && (e->status[p] == ST_FAILED || power_at(e, p, by) < e->power_alarm);

		if (now && !e->alarmed[p])
			notify_port(e, "port-power-alarm", p);
		else if (!now && e->alarmed[p] && use)
			notify_port(e, "port-power-clear", p);
		e->alarmed[p] = now;
	}
	free(by);
}

/* Bytes for the peer past libnetconf2, in order: what the relay has no
 * room for now waits in c->rest for the next tick. */
static void inject_all(struct nemu_client *c, const char *buf, size_t n)
{
	size_t k = c->nrest ? 0 : ncrelay_inject(c->relay, buf, n);

	if (k < n) {
		c->rest = xrealloc(c->rest, c->nrest + (n - k));
		memcpy(c->rest + c->nrest, buf + k, n - k);
		c->nrest += n - k;
	}
}

static void inject_rest(struct nemu_client *c)
{
	size_t k;

	if (!c->nrest) /* (and c->rest may be NULL: no offset on it) */
		return;
	k = ncrelay_inject(c->relay, c->rest, c->nrest);
	memmove(c->rest, c->rest + k, c->nrest - k);
	c->nrest -= k;
}

/* A whole message for a subscriber, past libnetconf2 (RFC 6242 chunked). */
static void inject_framed(struct nemu_client *c, const char *body)
{
	char *msg = xasprintf("\n#%zu\n%s\n##\n", strlen(body), body);

	inject_all(c, msg, strlen(msg));
	free(msg);
}

static char *notif_text(const char *event)
{
	char when[32];

	event_time(when, sizeof(when));
	return xasprintf("<notification xmlns=\"" NC_NOTIF_NS "\"><eventTime>%s</eventTime>%s"
			 "</notification>",
			 when, event);
}

/* "notify MODE [COUNT]" in the health file: what every subscribed session
 * gets at once, past libnetconf2: garbage (not well-formed), bad-port (a
 * port the switch does not have), other (a notification of a module ofc
 * does not load), reply (an <rpc-reply> nobody asked for), huge (2 MiB),
 * flood COUNT (that many port-power-alarm for port 1). */
static void notify_fault(struct nemu *e, const char *arg)
{
	char mode[16];
	unsigned long long count = 0;
	char *body = NULL;

	if (sscanf(arg, "%15s %llu", mode, &count) < 1)
		return;
	logf_(e, "%llu notify fault %s", (unsigned long long)e->commands, mode);
	if (strcmp(mode, "garbage") == 0)
		body = notif_text("<port-power-alarm xmlns=\"" PLTS_NS "\"><port-id>1</port-id>");
	else if (strcmp(mode, "bad-port") == 0)
		body = notif_text("<port-power-alarm xmlns=\"" PLTS_NS
				  "\"><port-id>4000000000</port-id></port-power-alarm>");
	else if (strcmp(mode, "other") == 0)
		body = notif_text("<thing-happened xmlns=\"urn:example:other\"/>");
	else if (strcmp(mode, "reply") == 0)
		body = xstrdup("<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" "
			       "message-id=\"1\"><ok/></rpc-reply>");
	for (struct nemu_client *c = e->clients; c; c = c->next) {
		if (!c->subscribed || c->gone || !c->relay)
			continue;
		if (body) {
			inject_framed(c, body);
		} else if (strcmp(mode, "huge") == 0) {
			char *head = notif_text("");

			/* the envelope's start, then spaces: 2 MiB declared */
			head[strlen(head) - strlen("</notification>")] = 0;
			inject_start(c, head, 2u << 20);
			c->huge_left = (2u << 20) - strlen(head);
			free(head);
		} else if (strcmp(mode, "flood") == 0) {
			c->flood_left = count;
		}
	}
	free(body);
}

/* What port p (1..2N) reads now. */
static double power_now(const struct nemu *e, uint32_t p)
{
	if (e->status[p] == ST_FAILED)
		return DARK_DBM;
	if (p <= e->n)
		return e->host_power[p];
	for (uint32_t i = 1; i <= e->n; i++)
		if (e->run[i] == p - e->n && e->status[i] != ST_FAILED)
			return e->host_power[i] - LOSS_DB;
	return DARK_DBM;
}

/* ---- replies ------------------------------------------------------------------------ */

static const char *list_name(const struct nemu *e)
{
	return e->revision && opsw_uses_pairs(e->revision) ? "pairs" : "pair";
}

static struct nc_server_reply *error_reply(struct nemu *e, NC_ERR tag, const char *msg,
					   const char *path)
{
	struct lyd_node *err =
	    tag == NC_ERR_LOCK_DENIED || tag == NC_ERR_DATA_EXISTS || tag == NC_ERR_DATA_MISSING
		? (tag == NC_ERR_LOCK_DENIED ? nc_err(e->ctx, tag, (uint32_t)0)
					     : nc_err(e->ctx, tag))
		: nc_err(e->ctx, tag, NC_ERR_TYPE_APP);

	if (msg)
		nc_err_set_msg(err, msg, "en");
	if (path)
		nc_err_set_path(err, path);
	return nc_server_reply_err(err);
}

static struct nc_server_reply *lock_denied(struct nemu *e, uint32_t holder, const char *what)
{
	struct lyd_node *err = nc_err(e->ctx, NC_ERR_LOCK_DENIED, holder);
	char msg[96];

	snprintf(msg, sizeof(msg), "the %s datastore is locked by session %u", what, holder);
	nc_err_set_msg(err, msg, "en");
	return nc_server_reply_err(err);
}

static void pair_path(const struct nemu *e, uint32_t in, char *buf, size_t n)
{
	snprintf(buf, n, "/opsw:cross-connects/opsw:%s[opsw:ingress='%u']", list_name(e), in);
}

/* A <data> reply holding xml (taken). */
static struct nc_server_reply *data_reply(struct lyd_node *rpc, char *xml)
{
	struct lyd_node *out = NULL;

	if (lyd_dup_single(rpc, NULL, 0, &out) != LY_SUCCESS ||
	    lyd_new_any(out, NULL, "data", xml, 1, LYD_ANYDATA_XML, 1, NULL) != LY_SUCCESS) {
		free(xml);
		lyd_free_tree(out);
		return nc_server_reply_err(nc_err(LYD_CTX(rpc), NC_ERR_OP_FAILED, NC_ERR_TYPE_APP));
	}
	return nc_server_reply_data(out, NC_WD_EXPLICIT, NC_PARAMTYPE_FREE);
}

static const struct lyd_node *child(const struct lyd_node *n, const char *name)
{
	const struct lyd_node *c;

	LY_LIST_FOR(lyd_child(n), c)
	if (strcmp(LYD_NAME(c), name) == 0)
		return c;
	return NULL;
}

static const char *child_value(const struct lyd_node *n, const char *name)
{
	const struct lyd_node *c = child(n, name);

	if (!c)
		return NULL;
	return c->schema ? lyd_get_value(c) : ((const struct lyd_node_opaq *)c)->value;
}

/* The tree inside an anyxml/anydata node (filter, config), or NULL. */
static const struct lyd_node *any_tree(const struct lyd_node *n)
{
	const struct lyd_node_any *a = (const struct lyd_node_any *)n;

	if (!n || !n->schema || !(n->schema->nodetype & LYD_NODE_ANY) ||
	    a->value_type != LYD_ANYDATA_DATATREE)
		return NULL;
	return a->value.tree;
}

static NC_DATASTORE datastore_of(const struct lyd_node *n)
{
	if (!n || !lyd_child(n))
		return NC_DATASTORE_ERROR;
	if (strcmp(LYD_NAME(lyd_child(n)), "running") == 0)
		return NC_DATASTORE_RUNNING;
	if (strcmp(LYD_NAME(lyd_child(n)), "candidate") == 0)
		return NC_DATASTORE_CANDIDATE;
	return NC_DATASTORE_ERROR;
}

static void xml_pairs(const struct nemu *e, const uint32_t *t, bool lie, struct strbuf *sb)
{
	const char *l = list_name(e);

	sb_puts(sb, "<cross-connects xmlns=\"" OPSW_NS "\">");
	for (uint32_t i = 1; i <= e->n; i++) {
		if (!t[i])
			continue;
		if (lie) { /* a state the switch could hold: one left out */
			lie = false;
			continue;
		}
		sb_printf(sb, "<%s><ingress>%u</ingress><egress>%llu</egress></%s>", l, i,
			  (unsigned long long)e->n + t[i], l);
	}
	sb_puts(sb, "</cross-connects>");
}

static struct nc_server_reply *do_get(struct nemu *e, struct lyd_node *rpc, bool config)
{
	const struct lyd_node *f = any_tree(child(rpc, "filter")), *t;
	bool want[3] = {f == NULL, f == NULL && !config, f == NULL && !config};
	struct strbuf sb = STRBUF_INIT;
	const uint32_t *table = e->run;
	bool lie = !config && e->lie_armed;

	if (config && datastore_of(child(rpc, "source")) == NC_DATASTORE_CANDIDATE)
		table = e->cand;
	LY_LIST_FOR(f, t)
	{
		want[0] |= strcmp(LYD_NAME(t), "cross-connects") == 0;
		want[1] |= !config && strcmp(LYD_NAME(t), "port-config") == 0;
		want[2] |= !config && strcmp(LYD_NAME(t), "opm-power") == 0;
	}
	if (!e->revision) /* no model: nothing of it to show */
		return data_reply(rpc, xstrdup(""));
	reload_health(e);
	if (!config)
		e->lie_armed = false;
	if (want[0])
		xml_pairs(e, table, lie, &sb);
	if (want[1]) {
		static const char *const st[] = {"ENABLED", "DISABLED", "FAILED"};

		sb_puts(&sb, "<port-config xmlns=\"" OPSW_NS "\">");
		for (uint32_t p = 1; p <= 2 * e->n; p++)
			sb_printf(&sb, "<port><port-id>%u</port-id><status>%s</status></port>", p,
				  st[e->status[p]]);
		sb_puts(&sb, "</port-config>");
	}
	if (want[2]) {
		sb_puts(&sb, "<opm-power xmlns=\"" OPSW_NS "\">");
		for (uint32_t p = 1; p <= 2 * e->n; p++) {
			double now = power_now(e, p), shown = e->stale ? e->shown_power[p] : now;

			/* --stale-power: each <get> shows the readings of the one
			 * before (the first shows its own). */
			if (e->stale && e->shown_power[0] == 0)
				shown = now;
			e->shown_power[p] = now;
			sb_printf(&sb, "<port><port-id>%u</port-id><power>%.2f</power></port>", p,
				  shown);
		}
		e->shown_power[0] = 1; /* a reading was taken */
		sb_puts(&sb, "</opm-power>");
	}
	return data_reply(rpc, sb_detach(&sb));
}

/* ---- edits --------------------------------------------------------------------------- */

/* One entry of an edit on table w: its operation op, ingress vi and
 * egress vo (NULL: none) as sent. NULL, or the error reply. */
static struct nc_server_reply *edit_one(struct nemu *e, const char *op, const char *vi,
					const char *vo, uint32_t *w)
{
	char path[128];
	uint32_t in = 0, out = 0;

	if (!vi || parse_u32(vi, &in) < 0 || in < 1 || in > e->n)
		return error_reply(e, NC_ERR_INVALID_VALUE, "no such ingress", NULL);
	pair_path(e, in, path, sizeof(path));
	if (strcmp(op, "delete") == 0 || strcmp(op, "remove") == 0) {
		if (!w[in] && op[0] == 'd')
			return error_reply(e, NC_ERR_DATA_MISSING, "no such cross-connect", path);
		w[in] = 0;
		return NULL;
	}
	if (!vo || parse_u32(vo, &out) < 0 || out <= e->n || out > 2 * e->n)
		return error_reply(e, NC_ERR_INVALID_VALUE, "egress must be one of N+1..2N", path);
	if (strcmp(op, "create") == 0 && w[in])
		return error_reply(e, NC_ERR_DATA_EXISTS, "exists", path);
	if (e->status[in] == ST_FAILED || e->status[out] == ST_FAILED) {
		char msg[64];

		snprintf(msg, sizeof(msg), "port %u is FAILED",
			 e->status[in] == ST_FAILED ? in : out);
		return error_reply(e, NC_ERR_OP_FAILED, msg, path);
	}
	w[in] = out - e->n;
	return NULL;
}

/* Apply the <config> of an edit to table w (a copy of the target). 0, or an
 * error reply (with error-option stop-on-error, w keeps the entries before
 * it). */
static struct nc_server_reply *apply_edit(struct nemu *e, const struct lyd_node *cfg,
					  const char *dflt, uint32_t *w)
{
	const char *l = list_name(e);
	const struct lyd_node *top, *ent;

	LY_LIST_FOR(cfg, top)
	{
		if (strcmp(LYD_NAME(top), "cross-connects") != 0 || !top->schema)
			return error_reply(e, NC_ERR_UNKNOWN_ELEM, "not an element of the model",
					   NULL);
		LY_LIST_FOR(lyd_child(top), ent)
		{
			const char *op = dflt;
			struct lyd_meta *m =
			    ent->schema ? lyd_find_meta(ent->meta, NULL, "ietf-netconf:operation")
					: NULL;
			struct nc_server_reply *r;

			if (!ent->schema || strcmp(LYD_NAME(ent), l) != 0)
				return error_reply(e, NC_ERR_UNKNOWN_ELEM,
						   "unknown element in cross-connects", NULL);
			if (m)
				op = lyd_get_meta_value(m);
			r = edit_one(e, op, child_value(ent, "ingress"), child_value(ent, "egress"),
				     w);
			if (r)
				return r;
		}
	}
	return NULL;
}

/* Half of the way from table `from` to `to` (NF_CLOSE_MID): every
 * ingress that changes is freed, then the first half of them take their
 * new egress. Each step is a table a switch can hold. */
static void half_way(const struct nemu *e, const uint32_t *from, const uint32_t *to, uint32_t *out)
{
	uint32_t changed = 0, k = 0;

	copy_table(e, out, from);
	for (uint32_t i = 1; i <= e->n; i++)
		if (from[i] != to[i]) {
			out[i] = 0;
			changed++;
		}
	for (uint32_t i = 1; i <= e->n && k < changed / 2; i++)
		if (from[i] != to[i]) {
			out[i] = to[i];
			k++;
		}
}

/* A table a switch can hold: no egress twice. */
static struct nc_server_reply *check_table(struct nemu *e, const uint32_t *w)
{
	uint32_t *by = xcalloc(e->n + 1, sizeof(uint32_t));
	struct nc_server_reply *r = NULL;
	char path[128], msg[64];

	for (uint32_t i = 1; i <= e->n && !r; i++) {
		if (!w[i])
			continue;
		if (by[w[i]]) {
			pair_path(e, i, path, sizeof(path));
			snprintf(msg, sizeof(msg), "egress %u is in use by ingress %u", e->n + w[i],
				 by[w[i]]);
			r = error_reply(e, NC_ERR_IN_USE, msg, path);
		}
		by[w[i]] = i;
	}
	free(by);
	return r;
}

/* The middle entry of an edit's config, for an injected refusal. */
static uint32_t middle_ingress(const struct lyd_node *cfg)
{
	const struct lyd_node *top, *ent;
	uint32_t n = 0, k = 0, in = 0;

	LY_LIST_FOR(cfg, top) LY_LIST_FOR(lyd_child(top), ent) n++;
	LY_LIST_FOR(cfg, top)
	LY_LIST_FOR(lyd_child(top), ent)
	if (k++ == n / 2 && child_value(ent, "ingress"))
		parse_u32(child_value(ent, "ingress"), &in);
	return in;
}

/* The fault of the k-th RPC (counted from 1), if --fail-at names it. */
static enum nemu_fault fault_at(const struct nemu *e, uint64_t k)
{
	if (e->co.fail_at && k >= e->co.fail_at && k < e->co.fail_at + e->co.fail_count)
		return e->fault_mode;
	return NF_NONE;
}

static uint32_t holder(uint32_t lock, uint32_t sid, bool phantom)
{
	if (lock && lock != sid)
		return lock;
	return phantom && !lock ? NEMU_PHANTOM : 0;
}

static struct nc_server_reply *do_edit(struct nemu *e, struct nemu_client *c, struct lyd_node *rpc,
				       enum nemu_fault fault)
{
	NC_DATASTORE ds = datastore_of(child(rpc, "target"));
	const char *dflt = child_value(rpc, "default-operation");
	const char *eo = child_value(rpc, "error-option");
	const struct lyd_node *cfg = any_tree(child(rpc, "config"));
	bool rollback = eo && strcmp(eo, "rollback-on-error") == 0;
	uint32_t *w, h;
	struct nc_server_reply *r;

	if (ds == NC_DATASTORE_ERROR || (ds == NC_DATASTORE_RUNNING && !e->writable_running) ||
	    (ds == NC_DATASTORE_CANDIDATE && !e->candidate))
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no such target", NULL);
	if (rollback && !e->rollback)
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no :rollback-on-error", NULL);
	h = holder(ds == NC_DATASTORE_RUNNING ? e->lock_run : e->lock_cand, c->sid,
		   fault == NF_LOCKED);
	if (h)
		return lock_denied(e, h, ds == NC_DATASTORE_RUNNING ? "running" : "candidate");
	if (fault == NF_DENY) {
		char path[128];

		pair_path(e, middle_ingress(cfg), path, sizeof(path));
		return error_reply(e, NC_ERR_OP_FAILED, "injected refusal", path);
	}
	w = xcalloc(e->n + 1, sizeof(uint32_t));
	copy_table(e, w, ds == NC_DATASTORE_RUNNING ? e->run : e->cand);
	r = apply_edit(e, cfg, dflt ? dflt : "merge", w);
	if (!r)
		r = check_table(e, w);
	if (!r && fault == NF_CLOSE_MID && ds == NC_DATASTORE_RUNNING) {
		/* half of it, then the session drops: a device whose edits
		 * are not atomic */
		uint32_t *half = xcalloc(e->n + 1, sizeof(uint32_t));

		half_way(e, e->run, w, half);
		set_running(e, half);
		free(half);
	} else if (!r || !rollback) {
		/* stop-on-error keeps what came before the error */
		if (ds == NC_DATASTORE_RUNNING)
			set_running(e, w);
		else
			copy_table(e, e->cand, w);
	}
	free(w);
	return r ? r : nc_server_reply_ok();
}

/* The table an edit in its plain form leaves when it takes effect whole,
 * with no fault due: do_edit's checks, in its order; else NULL (the edit
 * goes through libnetconf2 and do_edit, which answers it as before). */
static uint32_t *plain_table(struct nemu *e, const struct nemu_client *c,
			     const struct opsw_plain_edit *pe)
{
	NC_DATASTORE ds = pe->candidate ? NC_DATASTORE_CANDIDATE : NC_DATASTORE_RUNNING;
	uint32_t *w;

	if (fault_at(e, e->commands + 1) != NF_NONE ||
	    (ds == NC_DATASTORE_RUNNING && !e->writable_running) ||
	    (ds == NC_DATASTORE_CANDIDATE && !e->candidate) || (pe->rollback && !e->rollback) ||
	    holder(ds == NC_DATASTORE_RUNNING ? e->lock_run : e->lock_cand, c->sid, false))
		return NULL;
	w = xcalloc(e->n + 1, sizeof(uint32_t));
	copy_table(e, w, ds == NC_DATASTORE_RUNNING ? e->run : e->cand);
	for (uint32_t i = 0; i < pe->n; i++) {
		const struct opsw_plain_entry *x = &pe->ent[i];
		struct nc_server_reply *r =
		    edit_one(e, x->op ? x->op : "merge", x->in, x->out[0] ? x->out : NULL, w);

		if (!r)
			continue;
		nc_server_reply_free(r);
		free(w);
		return NULL;
	}
	struct nc_server_reply *r = check_table(e, w);

	if (r) {
		nc_server_reply_free(r);
		free(w);
		return NULL;
	}
	return w;
}

/* A switch's own parse of an edit is the switch's, but libyang's typing of
 * 384 pairs here (about 2 ms of CPU) was most of the round trip a bench
 * charges to the driver (bench/results/netconf.md, "NETCONF"). The next message of
 * c is looked at in place: when it is an <edit-config> in its plain form
 * (netconf_plain.c) that takes effect whole, it is read, acted on, logged
 * and answered <ok/> here, as nemu_rpc would; anything else is left for
 * libnetconf2. 1 when answered. */
int nemu_plain(struct nemu *e, struct nemu_client *c)
{
	struct strbuf body = STRBUF_INIT;
	struct opsw_plain_edit pe;
	struct ofc_error err = {0};
	size_t used = 0;
	uint32_t *w = NULL;
	ssize_t n;
	char *reply;

	if (!c->nc || c->gone || !e->revision || !nc_session_get_version(c->nc))
		return 0;
	if (!e->peek)
		e->peek = xmalloc(NETCONF_PEEK);
	n = recv(c->lib_fd, e->peek, NETCONF_PEEK, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0 && netconf_frame(e->peek, (size_t)n, &body, &used) == 1 &&
	    opsw_plain_edit(body.buf, body.len, opsw_uses_pairs(e->revision), &pe) == 1) {
		w = plain_table(e, c, &pe);
		if (!w)
			opsw_plain_edit_free(&pe);
	}
	sb_free(&body);
	if (!w)
		return 0;
	if (recv(c->lib_fd, e->peek, used, MSG_DONTWAIT) != (ssize_t)used) {
		c->gone = true; /* what was looked at went: not a session to trust */
		free(w);
		opsw_plain_edit_free(&pe);
		return 0;
	}
	e->commands++;
	logf_(e, "%llu edit-config %s", (unsigned long long)e->commands,
	      pe.candidate ? "candidate" : "running");
	if (pe.candidate)
		copy_table(e, e->cand, w);
	else
		set_running(e, w);
	reply = xasprintf("<rpc-reply xmlns=\"" NC_NS_BASE "\" message-id=\"%s\"><ok/></rpc-reply>",
			  pe.msgid);
	char *msg = xasprintf("\n#%zu\n%s\n##\n", strlen(reply), reply);
	if (fd_write_all(c->lib_fd, msg, strlen(msg), now_seconds() + 10, &err) < 0)
		c->gone = true;
	free(msg);
	free(reply);
	free(w);
	opsw_plain_edit_free(&pe);
	return 1;
}

static struct nc_server_reply *do_commit(struct nemu *e, struct nemu_client *c,
					 struct lyd_node *rpc, enum nemu_fault fault)
{
	bool confirmed = child(rpc, "confirmed") != NULL;
	const char *t = child_value(rpc, "confirm-timeout");
	uint32_t secs = CONFIRM_DEFAULT, h;
	struct nc_server_reply *r;

	if (!e->candidate)
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no :candidate", NULL);
	if (confirmed && !e->confirmed)
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no :confirmed-commit", NULL);
	if (t && (parse_u32(t, &secs) < 0 || secs < 1))
		return error_reply(e, NC_ERR_INVALID_VALUE, "bad confirm-timeout", NULL);
	if ((h = holder(e->lock_run, c->sid, fault == NF_LOCKED)) ||
	    (h = holder(e->lock_cand, c->sid, fault == NF_LOCKED)))
		return lock_denied(e, h, h == e->lock_cand ? "candidate" : "running");
	if (fault == NF_DENY)
		return error_reply(e, NC_ERR_OP_FAILED, "injected refusal", NULL);
	if ((r = check_table(e, e->cand)))
		return r;
	if (confirmed && !e->confirm.pending) {
		copy_table(e, e->confirm.backup, e->run);
		e->confirm.pending = true;
		e->confirm.sid = c->sid;
	}
	if (confirmed)
		e->confirm.deadline = now_seconds() + secs;
	else
		e->confirm.pending = false;
	if (fault == NF_CLOSE_MID) {
		uint32_t *half = xcalloc(e->n + 1, sizeof(uint32_t));

		half_way(e, e->run, e->cand, half);
		set_running(e, half);
		free(half);
		return nc_server_reply_ok();
	}
	set_running(e, e->cand);
	return nc_server_reply_ok();
}

static struct nc_server_reply *do_lock(struct nemu *e, struct nemu_client *c, struct lyd_node *rpc,
				       bool lock, enum nemu_fault fault)
{
	NC_DATASTORE ds = datastore_of(child(rpc, "target"));
	uint32_t *l = ds == NC_DATASTORE_RUNNING ? &e->lock_run : &e->lock_cand, h;
	const char *name = ds == NC_DATASTORE_RUNNING ? "running" : "candidate";

	if (ds == NC_DATASTORE_ERROR || (ds == NC_DATASTORE_CANDIDATE && !e->candidate))
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no such datastore", NULL);
	if (!lock) {
		if (*l != c->sid)
			return error_reply(e, NC_ERR_OP_FAILED, "not locked by this session", NULL);
		*l = 0;
		return nc_server_reply_ok();
	}
	if ((h = holder(*l, c->sid, fault == NF_LOCKED)))
		return lock_denied(e, h, name);
	if (*l == c->sid)
		return lock_denied(e, c->sid, name); /* RFC 6241 7.5: already held */
	if (ds == NC_DATASTORE_CANDIDATE && memcmp(e->cand, e->run, (e->n + 1) * sizeof(uint32_t)))
		return error_reply(e, NC_ERR_LOCK_DENIED, "the candidate holds uncommitted changes",
				   NULL);
	*l = c->sid;
	return nc_server_reply_ok();
}

/* RFC 5277 2.1.1: the NETCONF stream (the default) or the Polatis one;
 * a session subscribes once. */
static struct nc_server_reply *do_subscribe(struct nemu *e, struct nemu_client *c,
					    struct lyd_node *rpc)
{
	const char *stream = child_value(rpc, "stream");

	if (!e->notification)
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no :notification", NULL);
	if (stream && strcmp(stream, "NETCONF") != 0 && strcmp(stream, PLTS_STREAM) != 0)
		return error_reply(e, NC_ERR_INVALID_VALUE, "no such stream", NULL);
	if (child(rpc, "startTime"))
		return error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "no replay", NULL);
	if (c->subscribed)
		return error_reply(e, NC_ERR_IN_USE, "this session is subscribed already", NULL);
	nc_session_inc_notif_status(c->nc);
	c->subscribed = true;
	return nc_server_reply_ok();
}

/* ---- faults that stream bytes ----------------------------------------------------------- */

static void inject_start(struct nemu_client *c, const char *body, uint64_t declared)
{
	char head[96];
	int n = snprintf(head, sizeof(head), "\n#%llu\n", (unsigned long long)declared);

	ncrelay_mute(c->relay, true);
	ncrelay_inject(c->relay, head, (size_t)n);
	ncrelay_inject(c->relay, body, strlen(body));
}

void nemu_tick(struct nemu *e)
{
	char spaces[65536];

	if (e->confirm.pending && now_seconds() >= e->confirm.deadline)
		revert(e, "confirm-timeout");
	reload_health(e);
	if (e->scan_due && e->notification)
		alarm_scan(e);
	memset(spaces, ' ', sizeof(spaces));
	for (struct nemu_client *c = e->clients; c; c = c->next) {
		if (!c->relay || c->gone)
			continue;
		inject_rest(c);
		if (c->flood_left && !c->nrest) {
			char *one = notif_text("<port-power-alarm xmlns=\"" PLTS_NS
					       "\"><port-id>1</port-id></port-power-alarm>");

			for (uint32_t k = 0; k < 256 && c->flood_left && !c->nrest; k++) {
				inject_framed(c, one);
				c->flood_left--;
			}
			free(one);
		}
		while (c->huge_left) {
			size_t want = c->huge_left < sizeof(spaces) ? c->huge_left : sizeof(spaces);
			size_t k = ncrelay_inject(c->relay, spaces, want);

			c->huge_left -= k;
			if (k < want)
				break;
		}
		if (c->endless && now_seconds() >= c->next_drip) {
			ncrelay_inject(c->relay, " ", 1);
			c->next_drip = now_seconds() + 0.005;
		}
	}
}

/* ---- one RPC ------------------------------------------------------------------------------ */

/* One line per RPC, before it acts: "K NAME[ DATASTORE][ confirmed][ [fault MODE]]". */
static void log_rpc(struct nemu *e, const struct lyd_node *rpc, enum nemu_fault fault)
{
	const char *name = LYD_NAME(rpc), *ds = "";
	NC_DATASTORE d = datastore_of(child(rpc, "target"));
	char stream[80];

	if (strcmp(name, "create-subscription") == 0) {
		snprintf(stream, sizeof(stream), " %.64s",
			 child_value(rpc, "stream") ? child_value(rpc, "stream") : "NETCONF");
		ds = stream;
	} else if (strcmp(name, "commit") == 0)
		ds = child(rpc, "confirmed") ? " confirmed"
		     : e->confirm.pending    ? " (confirming)"
					     : "";
	else if (d == NC_DATASTORE_RUNNING)
		ds = " running";
	else if (d == NC_DATASTORE_CANDIDATE)
		ds = " candidate";
	logf_(e, "%llu %s%s%s%s%s", (unsigned long long)e->commands, name, ds,
	      fault ? " [fault " : "", fault ? fault_names[fault] : "", fault ? "]" : "");
}

struct nc_server_reply *nemu_rpc(struct nemu *e, struct nemu_client *c, struct lyd_node *rpc)
{
	static const char reply_open[] =
	    "<rpc-reply xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\" message-id=\"0\"><data>";
	const char *name = LYD_NAME(rpc);
	enum nemu_fault fault;
	struct nc_server_reply *r;

	e->commands++;
	fault = fault_at(e, e->commands);
	log_rpc(e, rpc, fault);
	switch (fault) {
	case NF_CLOSE:
		ncrelay_mute(c->relay, true);
		ncrelay_cut(c->relay);
		return nc_server_reply_ok();
	case NF_STALL:
		ncrelay_mute(c->relay, true);
		return nc_server_reply_ok();
	case NF_GARBAGE: {
		/* well framed, not well-formed: the tags do not nest */
		char *body = xasprintf(
		    "%s<cross-connects><pair></cross-connects></data></rpc-reply>", reply_open);

		inject_start(c, body, strlen(body));
		ncrelay_inject(c->relay, "\n##\n", 4);
		free(body);
		return nc_server_reply_ok();
	}
	case NF_HUGE:
		inject_start(c, reply_open, HUGE_BYTES);
		c->huge_left = HUGE_BYTES - strlen(reply_open);
		return nc_server_reply_ok();
	case NF_ENDLESS:
		inject_start(c, reply_open, 4000000000ull);
		c->endless = true;
		c->next_drip = now_seconds();
		return nc_server_reply_ok();
	case NF_LIE:
		e->lie_armed = true;
		break;
	default:
		break;
	}
	if (fault == NF_DENY && strcmp(name, "edit-config") != 0 && strcmp(name, "commit") != 0)
		r = error_reply(e, NC_ERR_OP_FAILED, "injected refusal", NULL);
	else if (strcmp(name, "get") == 0 || strcmp(name, "get-config") == 0)
		r = do_get(e, rpc, name[3] == '-');
	else if (strcmp(name, "edit-config") == 0)
		r = do_edit(e, c, rpc, fault);
	else if (strcmp(name, "commit") == 0)
		r = do_commit(e, c, rpc, fault);
	else if (strcmp(name, "lock") == 0 || strcmp(name, "unlock") == 0)
		r = do_lock(e, c, rpc, name[0] == 'l', fault);
	else if (strcmp(name, "discard-changes") == 0) {
		copy_table(e, e->cand, e->run);
		r = nc_server_reply_ok();
	} else if (strcmp(name, "create-subscription") == 0) {
		r = do_subscribe(e, c, rpc);
	} else if (strcmp(name, "cancel-commit") == 0) {
		if (!e->confirm.pending) {
			r = error_reply(e, NC_ERR_OP_FAILED, "no confirmed commit is pending",
					NULL);
		} else {
			revert(e, "cancel-commit");
			r = nc_server_reply_ok();
		}
	} else {
		r = error_reply(e, NC_ERR_OP_NOT_SUPPORTED, "not supported by this switch", NULL);
	}
	if (fault == NF_CLOSE_AFTER || fault == NF_CLOSE_MID) {
		ncrelay_mute(c->relay, true);
		ncrelay_cut(c->relay);
	}
	return r;
}
