/* Where `ofc` asks: every address the user gave (--socket/--server, each
 * repeatable and each a comma list, or OFC_SOCKET/OFC_SERVER as lists),
 * and the walk that finds the replica that leads. One walk for every
 * client in controller/cli (the remote commands, the Slurm hooks, cluster
 * status), so a failover looks the same to all of them: an address that
 * does not answer is skipped, a follower names the leader and the leader
 * is asked, and the whole is bounded by the request's deadline. */
#include "controller/api/api.h"
#include "controller/cli/internal.h"
#include "proto/control.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int cli_targets_add(struct cli_targets *t, const char *opt, const char *list, struct ofc_error *err)
{
	const char *p = list;

	if (!t->opt)
		t->opt = opt;
	if (!list || !*list)
		return ofc_error_set(err, OFC_E_USAGE, "%s needs an address", opt);
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *a = p;

		/* "A, B" as people type lists; a URL's last '/' is the route's */
		p += n + (e ? 1 : 0);
		while (n && (*a == ' ' || *a == '\t'))
			a++, n--;
		while (n && (a[n - 1] == ' ' || a[n - 1] == '\t'))
			n--;
		if (n > 8 && strncmp(a, "https://", 8) == 0 && a[n - 1] == '/')
			n--;
		if (n == 0)
			return ofc_error_set(err, OFC_E_USAGE,
					     "%s '%s': an empty address in the list", opt, list);
		if (n >= CLI_TARGET_LEN)
			return ofc_error_set(err, OFC_E_USAGE, "%s: address too long: %.*s", opt,
					     (int)n, a);
		if (t->n == CLI_TARGETS_MAX)
			return ofc_error_set(err, OFC_E_USAGE, "%s: more than %u addresses", opt,
					     CLI_TARGETS_MAX);
		snprintf(t->addr[t->n++], CLI_TARGET_LEN, "%.*s", (int)n, a);
		if (e && !*p)
			return ofc_error_set(err, OFC_E_USAGE,
					     "%s '%s': an empty address in the list", opt, list);
	}
	return 0;
}

int cli_targets_check(const struct cli_targets *t, struct ofc_error *err)
{
	if (!t->https)
		return 0;
	for (uint32_t i = 0; i < t->n; i++)
		if (strncmp(t->addr[i], "https://", 8) != 0)
			return ofc_error_set(err, OFC_E_USAGE,
					     "%s '%s': expected https://HOST:PORT", t->opt,
					     t->addr[i]);
	/* The gateway asks every client for a certificate: without one the
	 * handshake ends with a bare TLS alert, so say it before connecting. */
	if (!t->srv.cert || !t->srv.key)
		return ofc_error_set(err, OFC_E_USAGE,
				     "%s needs --cert FILE and --key FILE (the client certificate "
				     "the gateway asks for) and --cacert FILE (the CA that signed "
				     "the gateway's)",
				     t->opt);
	return 0;
}

/* One connection to addr, over the socket or through the gateway. */
static int connect_one(const struct cli_targets *t, const char *addr, struct ofcd_client *c,
		       struct ofc_error *err)
{
	if (t->https) {
		struct cli_server s = t->srv;

		s.url = addr;
		return cli_https_connect(c, &s, err);
	}
	return ofcd_connect(c, addr, err);
}

/* What one address said, for the error that names them all. */
static void note(struct cli_targets *t, const char *addr, const char *fmt, ...) OFC_PRINTF(3, 4);
static void note(struct cli_targets *t, const char *addr, const char *fmt, ...)
{
	uint32_t i = 0;
	va_list ap;

	while (i < t->ntried && strcmp(t->tried[i].addr, addr) != 0)
		i++;
	if (i == t->ntried) {
		if (t->ntried == ARRAY_SIZE(t->tried))
			return;
		snprintf(t->tried[t->ntried++].addr, CLI_TARGET_LEN, "%s", addr);
	}
	va_start(ap, fmt);
	vsnprintf(t->tried[i].why, sizeof(t->tried[i].why), fmt, ap);
	va_end(ap);
}

enum outcome { ANSWERED, REDIRECTED, SKIPPED, LOST_AFTER_SEND, UNTRUSTED };

/* A leader's socket comes from what a replica says, which comes from the
 * store: whoever can write the store names any path, and root's `ofc
 * apply` would send its whole config there and believe its answer. So a
 * socket the user did not give is asked only when the process behind it
 * is root or runs as the ofcd the user did reach (SO_PEERCRED, before a
 * byte is sent); else the walk stops there and names it. `given`: the
 * address is one of the user's (its peer's uid becomes the one trusted). */
static bool peer_trusted(struct cli_targets *t, const char *addr, bool given)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);

	if (t->https)
		return true; /* the gateway's certificate is checked instead */
	if (getsockopt(t->cl.fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) != 0 || n != sizeof(cr))
		cr.uid = (uid_t)-1;
	if (given) {
		t->via_uid = cr.uid;
		snprintf(t->via, sizeof(t->via), "%s", addr);
		return true;
	}
	if (cr.uid == 0 || (cr.uid == t->via_uid && cr.uid != (uid_t)-1))
		return true;
	snprintf(t->untrusted, sizeof(t->untrusted),
		 "%s named %s as the leader's socket, but the process behind it runs as uid %d, "
		 "neither root nor uid %d (the ofcd at %s): not following it, nothing was sent "
		 "(whoever can write the cluster's store can name any socket: check the "
		 "leader key)",
		 t->named_by, addr, (int)cr.uid, (int)t->via_uid, t->via);
	return false;
}

/* A follower's answer: where the leader is for this transport, copied to
 * t->hint; false when it names none or names addr itself. */
static bool take_hint(struct cli_targets *t, const char *addr, const Ofc__V1__Response *r)
{
	const Ofc__V1__Leader *l = r->leader;
	const char *to = !l ? NULL : t->https ? l->url : l->socket;
	bool again = false;

	for (uint32_t i = 0; i < t->ntried; i++)
		if (strcmp(t->tried[i].addr, addr) == 0)
			again = strncmp(t->tried[i].why, "follows", 7) == 0;
	note(t, addr, "follows (%s)", r->message ? r->message : "not the leader");
	if (!to || !*to || strlen(to) >= CLI_TARGET_LEN || strcmp(to, addr) == 0 ||
	    (t->https && strncmp(to, "https://", 8) != 0))
		return false;
	/* (said once a walk: while an election runs, every pass repeats it) */
	again = again && strcmp(t->hint, to) == 0;
	snprintf(t->hint, sizeof(t->hint), "%s", to);
	snprintf(t->named_by, sizeof(t->named_by), "%s", addr);
	if (t->verbose && !again)
		fprintf(stderr, "ofc: %s does not lead; asking the leader, %s, at %s\n", addr,
			l->name ? l->name : "?", t->hint);
	return true;
}

/* Ask addr once: connect, send, the first answer. ANSWERED leaves the
 * connection open in t->cl with *resp. */
static enum outcome try_one(struct cli_targets *t, const char *addr, bool given,
			    Ofc__V1__Request *req, double timeout, unsigned flags,
			    Ofc__V1__Response **resp)
{
	struct ofc_error err = {0};
	Ofc__V1__Status st;

	*resp = NULL;
	if (connect_one(t, addr, &t->cl, &err) < 0) {
		note(t, addr, "%s", err.msg);
		return SKIPPED;
	}
	if (!peer_trusted(t, addr, given)) {
		ofcd_disconnect(&t->cl);
		return UNTRUSTED;
	}
	t->cl.timeout = timeout;
	if (ofcd_call(&t->cl, req, resp, &err) < 0) {
		ofcd_disconnect(&t->cl);
		note(t, addr, "%s", err.msg);
		/* Sent and lost: done or not, the caller must know which;
		 * with a request_key the leader knows, and answers it again. */
		if (flags & CLI_CALL_ONCE && !req->request_key)
			return LOST_AFTER_SEND;
		snprintf(t->lost, sizeof(t->lost), "%s", addr);
		return SKIPPED;
	}
	st = (*resp)->status;
	/* ofcd's own UNAVAILABLE is an answer: a leader that stepped down
	 * with the request queued says it is in etcd's queue for the next
	 * leader, and sending it again would run it twice. */
	if (t->https && cli_https_unreached(*resp, addr)) {
		/* the gateway, or its ofcd behind it, did not answer */
		note(t, addr, "%s", (*resp)->message + strlen(addr) + 2);
	} else if (st == OFC__V1__STATUS__STATUS_NOT_LEADER) {
		bool hint = take_hint(t, addr, *resp);

		t->heard = true; /* a replica is up: an election ends soon */
		ofcd_disconnect(&t->cl);
		ofc__v1__response__free_unpacked(*resp, NULL);
		*resp = NULL;
		return hint ? REDIRECTED : SKIPPED;
	} else {
		snprintf(t->answered, sizeof(t->answered), "%s", addr);
		return ANSWERED;
	}
	ofcd_disconnect(&t->cl);
	ofc__v1__response__free_unpacked(*resp, NULL);
	*resp = NULL;
	return SKIPPED;
}

static void pause_for(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Every address tried and why, in err. */
static int walk_failed(const struct cli_targets *t, const char *req_key, double timeout, bool lost,
		       struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;

	/* A mutation's answer lost, and no leader since: done or not, its
	 * key asks whichever leads next for what it came to. */
	if (t->lost[0] && req_key && !lost) {
		sb_printf(&sb,
			  "the answer was lost and no replica answered as leader since (the "
			  "request may or may not have been done: 'ofc status' shows which, and "
			  "OFC_REQUEST_KEY=%s sends it again as the same request, answered with "
			  "what it came to%s): ",
			  req_key,
			  t->n == 1 ? "; give every replica, --socket A,B,C, and ofc asks the "
				      "next leader itself"
				    : "");
		for (uint32_t i = 0; i < t->ntried; i++)
			sb_printf(&sb, "%s%s: %s", i ? "; " : "", t->tried[i].addr,
				  t->tried[i].why);
		ofc_error_set(err, OFC_E_RUNTIME, "%.*s", (int)(sizeof(err->msg) - 1), sb.buf);
		sb_free(&sb);
		return -1;
	}
	/* one address: the client's own words are the error */
	if (t->n == 1 && t->ntried == 1 && !lost)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s", t->tried[0].why);
	if (lost)
		sb_printf(&sb, "the answer was lost (the request may or may not have been done: "
			       "'ofc status' shows which): ");
	else
		sb_printf(&sb, "no replica of ofcd answered as leader within %g s (%s): ", timeout,
			  t->opt ? t->opt : "--socket");
	for (uint32_t i = 0; i < t->ntried; i++)
		sb_printf(&sb, "%s%s: %s", i ? "; " : "", t->tried[i].addr, t->tried[i].why);
	ofc_error_set(err, OFC_E_RUNTIME, "%.*s", (int)(sizeof(err->msg) - 1), sb.buf);
	sb_free(&sb);
	return -1;
}

/* How long one address may take to answer: what is left of the deadline
 * (0: no limit when the request has none). A QUICK one, which any replica
 * answers at once, gets a share of it, so a replica that hangs (paused,
 * its machine frozen) leaves time to ask the others; a mutation's answer
 * comes when its transaction ends, a schedule's when it is computed, and
 * they are waited for whole. */
static double per_try(const struct cli_targets *t, double timeout, double end, unsigned flags)
{
	double left = end - now_seconds(), share;

	if (timeout <= 0)
		return 0;
	if (!(flags & CLI_CALL_QUICK) || t->n < 2)
		return left;
	share = timeout / t->n > 1.0 ? timeout / t->n : 1.0;
	return share < left ? share : left;
}

void cli_request_key(struct cli_targets *t, Ofc__V1__Request *req)
{
	const char *given = getenv("OFC_REQUEST_KEY");
	uint8_t r[16] = {0};
	int fd;

	const struct api_request *k = api_request_of(req->body_case);

	if (!k || !(k->flags & API_KEYED))
		return;
	if (req->body_case == OFC__V1__REQUEST__BODY_ADOPT && !req->adopt->commit)
		return; /* a preview changes nothing: sent again, it reads again */
	if (req->request_key)
		return;
	if (given && *given) {
		/* (ofcd refuses one outside its alphabet, and says so) */
		snprintf(t->key, sizeof(t->key), "%s", given);
	} else {
		/* 128 random bits: keys of different requests never meet */
		fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
			/* (no urandom: time and pid, still one per request) */
			uint64_t x = (uint64_t)(now_seconds() * 1e9) ^ ((uint64_t)getpid() << 32);

			memcpy(r, &x, sizeof(x));
		}
		if (fd >= 0)
			close(fd);
		snprintf(t->key, sizeof(t->key), "ofc-");
		for (size_t i = 0; i < sizeof(r); i++)
			snprintf(t->key + 4 + 2 * i, 3, "%02x", r[i]);
	}
	req->request_key = t->key;
}

/* A mutation's answer lost (its leader gone) and then given: one line on
 * stderr says where it came from, since it is not where it was sent. */
static void said_lost(const struct cli_targets *t, const Ofc__V1__Request *req)
{
	if (!t->lost[0] || !req->request_key)
		return;
	if (strcmp(t->lost, t->answered) == 0)
		fprintf(stderr,
			"ofc: %s closed the connection before answering; sent again with "
			"request_key %s, it answered what the request came to\n",
			t->lost, req->request_key);
	else
		fprintf(stderr,
			"ofc: the leader changed: %s closed the connection before answering; the "
			"answer is from the leader now, %s, asked with the same request_key %s "
			"(it runs a request once: this is what it came to)\n",
			t->lost, t->answered, req->request_key);
}

int cli_open(struct cli_targets *t, Ofc__V1__Request *req, double timeout, unsigned flags,
	     Ofc__V1__Response **resp, struct ofc_error *err)
{
	double walk = t->walk > 0 ? t->walk : CLI_WALK_DEFAULT;
	double end = now_seconds() + (timeout > 0 ? timeout : walk);
	double wait = 0.1, lost_at = 0;

	t->ntried = 0;
	t->hint[0] = 0;
	t->lost[0] = 0;
	t->heard = false;
	if (!req->has_id) {
		req->has_id = 1;
		req->id = (uint64_t)getpid();
	}
	cli_request_key(t, req);
	if (!t->n)
		return ofc_error_set(err, OFC_E_USAGE, "no address of ofcd given");
	for (;;) {
		/* Start where the last answer came from (a process asks twice:
		 * the prolog's GetState after its Reconfigure). */
		for (uint32_t k = 0; k < t->n; k++) {
			uint32_t i = (t->first + k) % t->n;
			enum outcome o;
			int hops = 0;

			if (end - now_seconds() <= 0)
				break;
			o = try_one(t, t->addr[i], true, req, per_try(t, timeout, end, flags),
				    flags, resp);
			/* a follower named the leader: ask it before the next on
			 * the list (a few hops at most: leaders change) */
			while (o == REDIRECTED && hops++ < 3 && end - now_seconds() > 0) {
				char to[CLI_TARGET_LEN];

				snprintf(to, sizeof(to), "%s", t->hint);
				o = try_one(t, to, false, req, per_try(t, timeout, end, flags),
					    flags, resp);
			}
			if (o == UNTRUSTED)
				return ofc_error_set(err, OFC_E_RUNTIME, "%s", t->untrusted);
			if (o == ANSWERED) {
				t->first = i;
				said_lost(t, req);
				return 0;
			}
			if (o == LOST_AFTER_SEND)
				return walk_failed(t, req->request_key, timeout, true, err);
			/* With no deadline the answer is waited for whole (an
			 * apply may take minutes): a walk after its loss gets
			 * its own budget, from the loss. */
			if (timeout <= 0 && t->lost[0] && !lost_at) {
				lost_at = now_seconds();
				end = lost_at + walk;
			}
		}
		/* Nobody answered at all: ofcd is not running there. Keep
		 * trying only when asked to (a Slurm hook: a replica may be
		 * restarting) or when a replica answered (an election). */
		if (!t->heard && !(flags & CLI_CALL_PERSIST))
			return walk_failed(t, req->request_key, timeout > 0 ? timeout : walk, false,
					   err);
		if (now_seconds() + wait >= end)
			return walk_failed(t, req->request_key, timeout > 0 ? timeout : walk, false,
					   err);
		/* an election, or every replica restarting: a short pause */
		pause_for(wait);
		wait = wait * 2 < 1.0 ? wait * 2 : 1.0;
	}
}

int cli_call(struct cli_targets *t, Ofc__V1__Request *req, double timeout, unsigned flags,
	     Ofc__V1__Response **resp, struct ofc_error *err)
{
	int rc = cli_open(t, req, timeout, flags, resp, err);

	if (rc == 0)
		ofcd_disconnect(&t->cl);
	return rc;
}

static const char *env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* With no --socket or --server: OFC_SERVER's list (the gateways, with
 * OFC_CERT, OFC_KEY and OFC_CACERT where no option gave them), else
 * OFC_SOCKET's, else the default socket; the Python client's order. */
int cli_targets_from_env(struct cli_targets *t, struct ofc_error *err)
{
	const char *srv = env_set("OFC_SERVER"), *sock = env_set("OFC_SOCKET");

	if (t->n)
		return 0;
	if (srv) {
		t->https = true;
		t->srv.cert = t->srv.cert ? t->srv.cert : env_set("OFC_CERT");
		t->srv.key = t->srv.key ? t->srv.key : env_set("OFC_KEY");
		t->srv.cacert = t->srv.cacert ? t->srv.cacert : env_set("OFC_CACERT");
		return cli_targets_add(t, "OFC_SERVER", srv, err);
	}
	if (t->srv.cert || t->srv.key || t->srv.cacert)
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--cert, --key and --cacert go with --server URL (or OFC_SERVER)");
	if (sock)
		return cli_targets_add(t, "OFC_SOCKET", sock, err);
	t->default_socket = true;
	return cli_targets_add(t, "--socket", OFCD_SOCKET_DEFAULT, err);
}
