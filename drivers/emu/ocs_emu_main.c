/* build/ocs-emu: an optical circuit switch (or robotic patch panel) that
 * speaks TL1 (docs/tl1.md) on a TCP port, for tests and demos without
 * hardware: the Polatis dialect (ENT-PATCH), or with --dialect calient the
 * Calient one (ENT-CRS + ACT-CRS, ports shelf.slot.port with shelf 1, slots
 * from 1 and --slot-ports ports a slot). It can be told to misbehave on the
 * K-th command it receives (counted from 1 over the life of the process,
 * every command of every session): refuse it, drop the connection, stall,
 * answer garbage, or report a wrong cross-connect on the next read-back.
 *
 *   ocs-emu --listen 127.0.0.1:PORT --ports N [--delay-ms D] [--hold-file F]
 *           [--dialect polatis|calient [--slot-ports P]] [--credentials FILE]...
 *           [--fail-at K [--fail-count C] [--fail-mode deny|close|close-after|stall|garbage|lie]]
 *           [--state FILE] [--port-file FILE] [--log FILE]
 *
 * Port 0 picks a free port; --port-file gets it (written atomically once
 * the socket listens). --state loads cross-connects at start and saves them
 * after every change, so a restarted emulator keeps its switch state
 * (lines "IN OUT", and "IN OUT idle" for a Calient entry not active).
 * With --save-ms MS the save after a change is put off, up to MS ms, as a
 * switch's config save is: a save writes every cross-connect, so one per
 * change costs a large switch's size in every change (65,536 lines each
 * of 131,072 changes for a torus moved at 65,536 ports). The file is
 * still what the switch holds whenever it answers anything but a change
 * (a read-back, a login or logout), once a session has closed, and once
 * a SIGTERM or SIGINT has ended it.
 */
#include "drivers/emu/emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS     100000u
#define EMU_MAX_USERS 8

struct emu {
	uint32_t n;
	uint32_t *to;	/* ingress -> egress (1..n), 0 = free */
	uint32_t *from; /* egress -> ingress */
	bool calient;
	struct tl1_port_map map; /* calient */
	bool *idle;		 /* calient: ingress -> entered, not active */
	char (*group)[33];	 /* calient: ingress -> the entry's group */
	uint32_t delay_ms;
	struct timespec busy_until; /* when the last change ends (CLOCK_MONOTONIC) */
	struct timespec arrived;    /* when the command being done came, at the latest */
	const char *hold_path;	    /* --hold-file: changes wait while it exists */
	struct credentials cred[EMU_MAX_USERS]; /* ACT-USER may log in as any */
	uint32_t ncred;
	bool log_sessions; /* the log says which connection sent each command */
	uint64_t commands;
	bool lie_armed;
	const char *state_path;
	uint32_t save_ms;     /* --save-ms (0: save after every change) */
	double unsaved_since; /* a change not in the state file since (0: none) */
	struct emu_common co; /* listen, port file, log, faults */
};

static const char usage[] =
    "usage: ocs-emu --listen HOST:PORT --ports N [--delay-ms D] [--hold-file F]\n"
    "               [--dialect polatis|calient [--slot-ports P]] [--credentials FILE]...\n"
    "               [--fail-at K [--fail-count C] [--fail-mode MODE]] [--state FILE]\n"
    "               [--save-ms MS] [--port-file FILE] [--log FILE [--log-sessions]]\n"
    "MODE: deny (default), close, close-after, stall, garbage, lie\n";

static const char help[] =
    "\nAn optical circuit switch (or robotic patch panel) speaking ofc's TL1 dialect\n"
    "(docs/tl1.md) on TCP, for tests and demos without hardware.\n\n"
    "  --listen HOST:PORT   IPv4 address and port to listen on (port 0: any free one)\n"
    "  --ports N            N x N ports, numbered 1..N\n"
    "  --delay-ms D         time each cross-connect change takes (a patch panel's move)\n"
    "  --hold-file F        every change waits while the file F exists (for tests)\n"
    "  --dialect D          polatis (ENT-PATCH; the default) or calient (ENT-CRS,\n"
    "                       ACT-CRS, ports named shelf.slot.port)\n"
    "  --slot-ports P       calient: ports a slot (default 32): port k is\n"
    "                       1.((k-1)/P+1).((k-1)%P+1)\n"
    "  --credentials FILE   the user and password ACT-USER must give (repeatable: any of\n"
    "                       them, up to 8, as several controllers each log in as their own)\n"
    "  --fail-at K          misbehave from the K-th command received (counted from 1)\n"
    "  --fail-count C       ... for C commands (default 1)\n"
    "  --fail-mode MODE     how: deny (refuse), close, close-after (act, then drop the\n"
    "                       connection), stall, garbage (then drop the connection), lie\n"
    "                       (the next read-back lies)\n"
    "  --state FILE         load cross-connects at start, save them after every change\n"
    "  --save-ms MS         save the state at most MS ms after a change instead (and\n"
    "                       before answering anything else, when a session closes and\n"
    "                       on SIGTERM or SIGINT), as a large switch's bench needs\n"
    "  --port-file FILE     write the port listened on (atomically, once listening)\n"
    "  --log FILE           log every command and reply\n"
    "  --log-sessions       end each log line with the connection it came on: session=S\n"
    "                       (counted from 1 as connections are accepted)\n"
    "  --help, --version    this text; the version\n";

static void reply(struct emu_client *c, const char *ctag, bool ok, const char *code,
		  const struct strbuf *payload)
{
	struct strbuf sb = STRBUF_INIT;
	char when[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	sb_printf(&sb, "\r\n\n   OCS-EMU %s\r\nM  %s %s\r\n", when, ctag, ok ? "COMPLD" : "DENY");
	if (!ok)
		sb_printf(&sb, "   %s\r\n", code);
	if (payload && payload->len)
		sb_add(&sb, payload->buf, payload->len);
	sb_puts(&sb, ";\r\n");
	/* Loopback, small replies: a blocking send is fine; ignore errors (the
	 * peer may be gone, which the next poll shows). */
	(void)!send(c->fd, sb.buf, sb.len, MSG_NOSIGNAL);
	sb_free(&sb);
}

/* Write-then-rename, without fsync: the emulator's state must survive the
 * emulator being restarted, not the machine crashing, and an fsync per
 * cross-connect would make the fault-injection sweeps crawl. */
static void save_state(struct emu *e)
{
	char *tmp;
	FILE *f;

	e->unsaved_since = 0;
	if (!e->state_path)
		return;
	tmp = xasprintf("%s.tmp", e->state_path);
	f = fopen(tmp, "w");
	if (f) {
		for (uint32_t i = 1; i <= e->n; i++)
			if (e->to[i])
				fprintf(f, "%u %u%s\n", i, e->to[i],
					e->calient && e->idle[i] ? " idle" : "");
		if (fclose(f) == 0 && rename(tmp, e->state_path) == 0) {
			free(tmp);
			return;
		}
	}
	fprintf(stderr, "ocs-emu: saving state to %s: %s\n", e->state_path, strerror(errno));
	free(tmp);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A change was made: saved now, or (--save-ms) by MS ms from the first
 * change not yet saved. */
static void changed(struct emu *e)
{
	double now;

	if (!e->save_ms || !e->state_path) {
		save_state(e);
		return;
	}
	now = now_ms();
	if (!e->unsaved_since)
		e->unsaved_since = now;
	else if (now - e->unsaved_since >= e->save_ms)
		save_state(e);
}

/* emu_serve's put-off work: the save --save-ms delays. */
static int save_idle_ms(void *ctx)
{
	struct emu *e = ctx;
	double left;

	if (!e->unsaved_since)
		return -1;
	left = e->unsaved_since + e->save_ms - now_ms();
	return left < 1 ? 0 : (int)left;
}

static void save_now(void *ctx)
{
	struct emu *e = ctx;

	if (e->unsaved_since)
		save_state(e);
}

static int load_state(struct emu *e, struct ofc_error *err)
{
	char *text, *line, *next;
	size_t len;

	if (access(e->state_path, F_OK) != 0)
		return 0;
	if (read_file(e->state_path, 16u << 20, &text, &len, err) < 0)
		return -1;
	for (line = text; line && *line; line = next) {
		char num[2][16];
		uint32_t a = 0, b = 0;
		size_t ll;
		bool idle = false;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		ll = strlen(line);
		if (e->calient && ll > 5 && strcmp(line + ll - 5, " idle") == 0) {
			line[ll - 5] = 0;
			idle = true;
		}
		/* "IN OUT" as save_state writes them: digits only, so a number
		 * past 2^32 is refused rather than wrapped (sscanf's %u). */
		if (sscanf(line, "%15[0-9] %15[0-9]", num[0], num[1]) != 2 ||
		    strlen(line) != strlen(num[0]) + 1 + strlen(num[1]) ||
		    parse_u32(num[0], &a) < 0 || parse_u32(num[1], &b) < 0 || a < 1 || a > e->n ||
		    b < 1 || b > e->n || e->to[a] || e->from[b]) {
			/* the message quotes the line: free the text after */
			ofc_error_set(err, OFC_E_INPUT, "%s: bad line '%.40s'", e->state_path,
				      line);
			free(text);
			return -1;
		}
		e->to[a] = b;
		e->from[b] = a;
		if (e->calient) {
			e->idle[a] = idle;
			snprintf(e->group[a], sizeof(e->group[a]), "OFC");
		}
	}
	free(text);
	return 0;
}

static void pause_ms(uint32_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (ms && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool ts_before(struct timespec a, struct timespec b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/* A change takes --delay-ms of the switch's time: it starts when the one
 * before it ended or when its command came (read off the connection),
 * whichever is later, and the emulator sleeps to its end. Sleeping to that
 * end, rather than for delay_ms from whenever the sleep began, keeps the
 * switch's pace when commands wait in line: a wake-up the system made late
 * is not added to every change after it, nor is the emulator's own work
 * between two changes. A command that waited (--hold-file) starts now. */
static void pace(struct emu *e, bool waited)
{
	struct timespec now;

	if (!e->delay_ms)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (waited)
		e->busy_until = now;
	else if (ts_before(e->busy_until, e->arrived))
		e->busy_until = e->arrived;
	e->busy_until.tv_sec += e->delay_ms / 1000;
	e->busy_until.tv_nsec += (long)(e->delay_ms % 1000) * 1000000L;
	if (e->busy_until.tv_nsec >= 1000000000L) {
		e->busy_until.tv_sec++;
		e->busy_until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &e->busy_until, NULL) == EINTR)
		;
}

/* --hold-file: a change waits while the file exists, so a test can keep a
 * transaction in flight exactly as long as it needs, however loaded the
 * machine (the whole emulator waits, as it does for --delay-ms). */
static bool hold(const struct emu *e)
{
	bool waited = false;

	while (e->hold_path && access(e->hold_path, F_OK) == 0) {
		pause_ms(5);
		waited = true;
	}
	return waited;
}

static bool parse_port(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	return s && parse_u32(s, out) == 0 && *out >= lo && *out <= hi;
}

/* The Polatis dialect's verbs: true for COMPLD, false with *code. */
static bool polatis_verb(struct emu *e, const struct tl1_cmd *cmd, struct strbuf *pay,
			 const char **code)
{
	if (strcmp(cmd->verb, "RTRV-PATCH") == 0) {
		bool lie = e->lie_armed;

		e->lie_armed = false;
		/* The lie is a state the switch could hold (its first
		 * cross-connect left out), so the driver's comparison, not its
		 * sanity check, is what catches it. */
		for (uint32_t i = 1; i <= e->n; i++) {
			uint32_t out = e->to[i];

			if (!out)
				continue;
			if (lie) {
				lie = false;
				continue;
			}
			sb_printf(pay, "   \"%u,%u\"\r\n", i, e->n + out);
		}
		if (lie) /* nothing connected: invent one */
			sb_printf(pay, "   \"1,%u\"\r\n", e->n + 1);
		return true;
	}
	if (strcmp(cmd->verb, "ENT-PATCH") == 0) {
		char aid[64];
		char *comma;
		uint32_t in, out;

		snprintf(aid, sizeof(aid), "%s", cmd->nfield > 1 ? cmd->field[1] : "");
		comma = strchr(aid, ',');
		if (comma)
			*comma++ = 0;
		if (!comma || !parse_port(aid, 1, e->n, &in) ||
		    !parse_port(comma, e->n + 1, 2 * e->n, &out))
			return *code = "IIAC", false;
		if (e->to[in] == out - e->n)
			return true; /* already so: idempotent */
		if (e->to[in] || e->from[out - e->n])
			return *code = "SAIS", false;
		pace(e, hold(e));
		e->to[in] = out - e->n;
		e->from[out - e->n] = in;
		changed(e);
		return true;
	}
	if (strcmp(cmd->verb, "DLT-PATCH") == 0) {
		uint32_t in;

		if (!parse_port(cmd->nfield > 1 ? cmd->field[1] : NULL, 1, e->n, &in))
			return *code = "IIAC", false;
		if (!e->to[in])
			return *code = "SNVS", false;
		pace(e, hold(e));
		e->from[e->to[in]] = 0;
		e->to[in] = 0;
		changed(e);
		return true;
	}
	return *code = "ICNV", false;
}

/* "SRC,DST" as Calient port names -> ingress and egress 1..n. */
static bool calient_pair(const struct emu *e, const struct tl1_cmd *cmd, uint32_t *in,
			 uint32_t *out)
{
	char aid[96];
	char *comma;

	snprintf(aid, sizeof(aid), "%s", cmd->nfield > 1 ? cmd->field[1] : "");
	comma = strchr(aid, ',');
	if (comma)
		*comma++ = 0;
	return comma && tl1_calient_port(&e->map, e->n, aid, in) == 0 &&
	       tl1_calient_port(&e->map, e->n, comma, out) == 0;
}

static void calient_rtrv(struct emu *e, struct strbuf *pay)
{
	bool lie = e->lie_armed;
	char src[48], dst[48];

	e->lie_armed = false;
	/* As in the Polatis dialect, the lie leaves out the first active
	 * cross-connect, a state the switch could hold. */
	for (uint32_t i = 1; i <= e->n; i++) {
		if (!e->to[i])
			continue;
		if (lie && !e->idle[i]) {
			lie = false;
			continue;
		}
		tl1_calient_aid(&e->map, e->n, i, src, sizeof(src));
		tl1_calient_aid(&e->map, e->n, e->to[i], dst, sizeof(dst));
		sb_printf(pay, "   \"%s,%s:%s,1WAY,%s\"\r\n", src, dst, e->group[i],
			  e->idle[i] ? "IDLE" : "ACT");
	}
	if (lie) { /* nothing active: invent one */
		tl1_calient_aid(&e->map, e->n, 1, src, sizeof(src));
		sb_printf(pay, "   \"%s,%s:OFC,1WAY,ACT\"\r\n", src, src);
	}
}

/* ENT-CRS::SRC,DST:CTAG::GROUP,1WAY: enter an idle cross-connect. */
static bool calient_ent(struct emu *e, const struct tl1_cmd *cmd, uint32_t in, uint32_t out,
			const char **code)
{
	const char *params = cmd->nfield > 4 ? cmd->field[4] : "";
	const char *comma = strchr(params, ',');
	size_t glen = comma ? (size_t)(comma - params) : 0;

	if (!comma || glen == 0 || glen >= sizeof(e->group[0]) || strcmp(comma, ",1WAY") != 0 ||
	    strspn(params, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
		glen)
		return *code = "IDNV", false; /* a group name and 1WAY, nothing else */
	if (e->to[in] == out)
		return true; /* entered already (active or not): idempotent */
	if (e->to[in] || e->from[out])
		return *code = "SAIS", false;
	e->to[in] = out;
	e->from[out] = in;
	e->idle[in] = true;
	memcpy(e->group[in], params, glen);
	e->group[in][glen] = 0;
	changed(e);
	return true;
}

/* The Calient dialect's verbs: true for COMPLD, false with *code. The
 * light moves on ACT-CRS and CANC-CRS: they take --delay-ms. */
static bool calient_verb(struct emu *e, const struct tl1_cmd *cmd, struct strbuf *pay,
			 const char **code)
{
	uint32_t in, out;
	bool act = strcmp(cmd->verb, "ACT-CRS") == 0, canc = strcmp(cmd->verb, "CANC-CRS") == 0;

	if (strcmp(cmd->verb, "RTRV-CRS") == 0) {
		calient_rtrv(e, pay);
		return true;
	}
	if (!act && !canc && strcmp(cmd->verb, "ENT-CRS") != 0 && strcmp(cmd->verb, "DLT-CRS") != 0)
		return *code = "ICNV", false;
	if (!calient_pair(e, cmd, &in, &out))
		return *code = "IIAC", false;
	if (strcmp(cmd->verb, "ENT-CRS") == 0)
		return calient_ent(e, cmd, in, out, code);
	if (e->to[in] != out)
		return *code = "SNVS", false; /* no such cross-connect */
	if (act || canc) {
		if (e->idle[in] == canc)
			return true; /* so already: idempotent */
		pace(e, hold(e));
		e->idle[in] = canc;
		changed(e);
		return true;
	}
	if (!e->idle[in])
		return *code = "SAIS", false; /* DLT-CRS of an active one: CANC-CRS first */
	e->to[in] = 0;
	e->from[out] = 0;
	e->idle[in] = false;
	changed(e);
	return true;
}

/* The verbs that change a cross-connect (of either dialect). */
static bool is_change(const char *verb)
{
	static const char *const verbs[] = {"ENT-PATCH", "DLT-PATCH", "ENT-CRS",
					    "ACT-CRS",	 "CANC-CRS",  "DLT-CRS"};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verb, verbs[i]) == 0)
			return true;
	return false;
}

/* Handle one command; returns false when the session must close. */
static bool handle(struct emu *e, struct emu_client *c, char *text)
{
	struct ofc_error err = {0};
	struct tl1_cmd cmd;
	struct strbuf pay = STRBUF_INIT;
	const char *ctag;
	enum fault_mode fault = 0;
	bool keep = true;

	if (tl1_parse_cmd(text, &cmd, &err) < 0) {
		reply(c, "0", false, "IISP", NULL);
		return true;
	}
	if (!cmd.verb[0])
		return true;
	ctag = cmd.nfield >= 3 && cmd.field[2][0] && strlen(cmd.field[2]) < 16 ? cmd.field[2] : "0";
	e->commands++;
	/* (--save-ms: what a read-back, a login or a logout answers after is
	 * in the file, as it is with a save after every change) */
	if (!is_change(cmd.verb))
		save_now(e);
	if (e->co.log) {
		/* Never log the password (the fifth block of ACT-USER). */
		fprintf(e->co.log, "%llu %s", (unsigned long long)e->commands, cmd.verb);
		for (uint32_t i = 0; i < cmd.nfield; i++)
			fprintf(e->co.log, ":%s",
				strcmp(cmd.verb, "ACT-USER") == 0 && i >= 4 ? "********"
									    : cmd.field[i]);
		if (e->log_sessions)
			fprintf(e->co.log, " session=%llu", (unsigned long long)c->session);
		fprintf(e->co.log, "\n");
		fflush(e->co.log);
	}
	if (e->co.fail_at && e->commands >= e->co.fail_at &&
	    e->commands < e->co.fail_at + e->co.fail_count)
		fault = e->co.mode;
	switch (fault) {
	case FAULT_DENY:
		reply(c, ctag, false, "SROF", NULL);
		return true;
	case FAULT_CLOSE:
		return false;
	case FAULT_STALL:
		c->stalled = true;
		return true;
	case FAULT_GARBAGE: {
		static const char junk[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n;\r\n";
		(void)!send(c->fd, junk, sizeof(junk) - 1, MSG_NOSIGNAL);
		/* and hangs up, as the client does on garbage: the commands
		 * sent behind it are not done, so each garbage answer costs a
		 * client one attempt, whether it sends ahead or not */
		return false;
	}
	case FAULT_LIE:
		e->lie_armed = true;
		break;
	default:
		break;
	}

	bool ok = true;
	const char *code = "";
	if (strcmp(cmd.verb, "ACT-USER") == 0) {
		const char *user = cmd.nfield > 1 ? cmd.field[1] : "";
		const char *pw = cmd.nfield > 4 ? cmd.field[4] : "";

		ok = !e->ncred;
		for (uint32_t i = 0; i < e->ncred && !ok; i++)
			ok = strcmp(user, e->cred[i].user) == 0 &&
			     strcmp(pw, e->cred[i].password) == 0;
		code = "PIUI";
		c->logged_in = ok;
	} else if (!c->logged_in) {
		ok = false;
		code = "PLNA";
	} else if (strcmp(cmd.verb, "CANC-USER") == 0) {
		keep = false;
	} else {
		ok = e->calient ? calient_verb(e, &cmd, &pay, &code)
				: polatis_verb(e, &cmd, &pay, &code);
	}
	if (fault == FAULT_CLOSE_AFTER)
		keep = false;
	else
		reply(c, ctag, ok, code, &pay);
	sb_free(&pay);
	return keep;
}

/* Commands end at ';'. A session sending more than this without one is
 * not speaking TL1. */
#define MAX_PENDING 65536

static long frame(struct emu_client *c, char **msg, size_t *len)
{
	char *semi = memchr(c->in.buf, ';', c->in.len);

	if (!semi)
		return 0;
	*semi = 0;
	*msg = c->in.buf;
	*len = (size_t)(semi - c->in.buf);
	return (long)*len + 1;
}

static bool handle_msg(void *ctx, struct emu_client *c, char *msg, size_t len)
{
	struct emu *e = ctx;

	(void)len;
	e->arrived = c->received;
	return handle(ctx, c, msg);
}

/* Tell the caller the port (only once the state is loaded: a test that
 * sees the port file may connect at once). */
int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    EMU_COMMON_OPTIONS,
	    {"ports", required_argument, NULL, 'n'},
	    {"delay-ms", required_argument, NULL, 'd'},
	    {"hold-file", required_argument, NULL, 'H'},
	    {"credentials", required_argument, NULL, 'c'},
	    {"state", required_argument, NULL, 's'},
	    {"save-ms", required_argument, NULL, 'S'},
	    {"dialect", required_argument, NULL, 'D'},
	    {"slot-ports", required_argument, NULL, 'P'},
	    {"log-sessions", no_argument, NULL, 'g'},
	    {0},
	};
	struct emu e = {.co = {.prog = "ocs-emu",
			       .usage = usage,
			       .help = help,
			       .fail_count = 1,
			       .mode = FAULT_DENY},
			.map = TL1_PORT_MAP_DEFAULT};
	bool slot_ports_set = false;
	struct ofc_error err = {0};
	char buf[1024];
	int c, lfd, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u32(optarg, &e.n) < 0 || e.n < 1 || e.n > MAX_PORTS)
				return emu_usage_error(&e.co, "--ports must be 1..100000, got '%s'",
						       optarg);
			break;
		case 'd':
			if (parse_u32(optarg, &e.delay_ms) < 0 || e.delay_ms > 600000)
				return emu_usage_error(
				    &e.co, "--delay-ms must be 0..600000, got '%s'", optarg);
			break;
		case 'H':
			e.hold_path = optarg;
			break;
		case 'g':
			e.log_sessions = true;
			break;
		case 'c':
			if (e.ncred == EMU_MAX_USERS)
				return emu_usage_error(&e.co, "--credentials: at most 8, not '%s'",
						       optarg);
			if (credentials_load(optarg, NULL, &e.cred[e.ncred], &err) < 0 ||
			    (!e.cred[e.ncred].password[0] &&
			     ofc_error_set(&err, OFC_E_INPUT, "%s: TL1 needs a 'password'",
					   optarg))) {
				fprintf(stderr, "ocs-emu: %s\n",
					ofc_error_str(&err, buf, sizeof(buf)));
				return 2;
			}
			e.ncred++;
			break;
		case 's':
			e.state_path = optarg;
			break;
		case 'S':
			if (parse_u32(optarg, &e.save_ms) < 0 || e.save_ms > 600000)
				return emu_usage_error(
				    &e.co, "--save-ms must be 0..600000, got '%s'", optarg);
			break;
		case 'D':
			if (strcmp(optarg, "calient") != 0 && strcmp(optarg, "polatis") != 0)
				return emu_usage_error(
				    &e.co, "--dialect must be polatis or calient, got '%s'",
				    optarg);
			e.calient = strcmp(optarg, "calient") == 0;
			break;
		case 'P':
			if (parse_u32(optarg, &e.map.slot_ports) < 0 || e.map.slot_ports < 1 ||
			    e.map.slot_ports > 65535)
				return emu_usage_error(
				    &e.co, "--slot-ports must be 1..65535, got '%s'", optarg);
			slot_ports_set = true;
			break;
		default:
			rc = emu_common_option(&e.co, c, optarg);
			if (rc == 1)
				return emu_usage_error(&e.co,
						       "unknown option or missing value: '%s'",
						       argv[optind - 1]);
			if (rc)
				return rc < 0 ? 0 : rc;
		}
	}
	if (optind != argc)
		return emu_usage_error(&e.co, "unexpected argument '%s'", argv[optind]);
	if (!e.co.listen || !e.n)
		return emu_usage_error(&e.co, "%s", "--listen and --ports are required");
	if (slot_ports_set && !e.calient)
		return emu_usage_error(&e.co, "%s", "--slot-ports needs --dialect calient");
	lfd = emu_listen(&e.co, &err);
	if (lfd < 0) {
		fprintf(stderr, "ocs-emu: %s\n", err.msg);
		return err.code == OFC_E_USAGE ? 2 : 1;
	}
	e.to = xcalloc(e.n + 1, sizeof(uint32_t));
	e.from = xcalloc(e.n + 1, sizeof(uint32_t));
	if (e.calient) {
		e.idle = xcalloc(e.n + 1, sizeof(*e.idle));
		e.group = xcalloc(e.n + 1, sizeof(*e.group));
	}
	rc = 0;
	if (e.state_path && load_state(&e, &err) < 0)
		rc = 2;
	else if (emu_start(&e.co, lfd, &err) < 0)
		rc = 1;
	if (rc) {
		fprintf(stderr, "ocs-emu: %s\n", err.msg);
		free(e.to);
		free(e.from);
		free(e.idle);
		free(e.group);
		return rc;
	}
	signal(SIGPIPE, SIG_IGN);
	struct emu_server srv = {
	    .frame = frame, .handle = handle_msg, .ctx = &e, .max_pending = MAX_PENDING};
	if (e.state_path && e.save_ms) {
		srv.idle_ms = save_idle_ms;
		srv.flush = save_now;
	}
	emu_serve(&srv, lfd);
	fprintf(stderr, "ocs-emu: poll: %s\n", strerror(errno));
	return 1;
}
