/* A NETCONF client session (RFC 6241) through libnetconf2 2.0: over SSH
 * (netconf_ssh.c) or a Unix socket, always through the relay
 * (netconf_relay.c) that bounds what the device sends and when. An RPC
 * at a time, or a few sent together (netconf_rpc_many), each exchange
 * with an absolute deadline and a bound on its replies; an
 * <rpc-error> becomes a refusal with the device's own words, and the
 * session is dropped on anything else that goes wrong (the caller
 * reconnects).
 *
 * libnetconf2, libyang and libssh log through callbacks that carry no
 * caller's data, so what they say is kept in a per-thread buffer
 * (netconf_last_log) rather than printed: the one piece of mutable state
 * here, and per thread, as their callbacks are.
 */
#include "drivers/internal.h"

#include <errno.h>
#include <libnetconf2/log.h>
#include <libnetconf2/messages_client.h>
#include <libnetconf2/netconf.h>
#include <libnetconf2/session_client.h>
#include <libssh/callbacks.h>
#include <libyang/libyang.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static __thread char last_log[256];

static void keep_log(const char *msg)
{
	snprintf(last_log, sizeof(last_log), "%s", msg ? msg : "");
}

static void nc_log(const struct nc_session *s, NC_VERB_LEVEL level, const char *msg)
{
	(void)s;
	if (level == NC_VERB_ERROR)
		keep_log(msg);
}

static void ly_log(LY_LOG_LEVEL level, const char *msg, const char *path)
{
	(void)path;
	if (level == LY_LLERR)
		keep_log(msg);
}

static void ssh_quiet_log(int priority, const char *function, const char *buffer, void *userdata)
{
	(void)priority;
	(void)function;
	(void)buffer;
	(void)userdata;
}

static void quiet_once(void)
{
	nc_client_init();
	nc_verbosity(NC_VERB_ERROR);
	nc_set_print_clb_session(nc_log);
	ly_set_log_clb(ly_log, 0);
	ssh_set_log_callback(ssh_quiet_log);
}

void netconf_quiet(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, quiet_once);
}

const char *netconf_last_log(void)
{
	return last_log;
}

void netconf_clear_log(void)
{
	last_log[0] = 0;
}

/* ---- connecting ------------------------------------------------------------------ */

/* "unix:PATH", "HOST:PORT" or "[V6]:PORT". */
static int split_address(const char *addr, char *host, size_t n, unsigned *port, bool *unix_path)
{
	const char *colon;
	uint32_t p;

	*unix_path = strncmp(addr, "unix:", 5) == 0;
	if (*unix_path) {
		snprintf(host, n, "%s", addr + 5);
		return addr[5] && strlen(addr + 5) < sizeof(((struct sockaddr_un *)0)->sun_path)
			   ? 0
			   : -1;
	}
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':' || (size_t)(close - addr - 1) >= n)
			return -1;
		snprintf(host, n, "%.*s", (int)(close - addr - 1), addr + 1);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || (size_t)(colon - addr) >= n)
			return -1;
		snprintf(host, n, "%.*s", (int)(colon - addr), addr);
	}
	if (parse_u32(colon + 1, &p) < 0 || p < 1 || p > 65535)
		return -1;
	*port = p;
	return 0;
}

static int unix_connect(const char *path, struct ofc_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return ofc_error_set(err, OFC_E_INPUT, "unix socket path too long: %.80s", path);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int en = errno;

		if (fd >= 0)
			close(fd);
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				      "cannot connect to unix:%s: %s", path, strerror(en));
	}
	return fd;
}

int netconf_session_open(const struct device *dev, const struct netconf_login *login, bool notif,
			 double deadline, struct netconf_session *s, struct ofc_error *err)
{
	char host[256];
	unsigned port = 0;
	bool unix_path;
	void *ssh = NULL, *chan = NULL;
	struct nctls *tls = NULL;
	int fd = -1;

	memset(s, 0, sizeof(*s));
	s->lib_fd = -1;
	s->max_reply = netconf_max_reply(dev->cfg.ports);
	netconf_quiet();
	if (split_address(dev->cfg.address, host, sizeof(host), &port, &unix_path) < 0)
		return ofc_error_set(err, OFC_E_INPUT, "bad address '%s'", dev->cfg.address);
	if (unix_path)
		fd = unix_connect(host, err);
	else if (dev->cfg.tls)
		fd = nctls_connect(dev->cfg.address, dev->cfg.tls_ca, dev->cfg.tls_server_name,
				   login->cert_text, login->cert_len, login->key_text,
				   login->key_len, deadline, &tls, err) == 0
			 ? -2
			 : -1;
	else if (netconf_ssh_open(host, port, dev->cfg.known_hosts, &login->cred, login->key_text,
				  deadline, &ssh, &chan, err) == 0)
		fd = -2; /* an SSH channel */
	if (fd == -1)
		return -1;
	s->relay = tls ? ncrelay_start_tls(tls, &s->lib_fd, err)
		       : ncrelay_start(fd >= 0 ? fd : -1, ssh, chan, &s->lib_fd, err);
	if (!s->relay)
		return -1;
	if (netconf_context(NULL, NULL, LY_CTX_NO_YANGLIBRARY, &s->ctx, err) < 0 ||
	    (notif && netconf_context_notifications(s->ctx, err) < 0)) {
		netconf_session_close(s, 0);
		return -1;
	}
	/* The hello, and what libnetconf2 then asks to learn the device's
	 * modules, within the deadline and the reply bound. */
	ncrelay_arm(s->relay, s->max_reply, deadline);
	netconf_clear_log();
	s->nc = nc_connect_inout(s->lib_fd, s->lib_fd, s->ctx);
	if (!s->nc) {
		enum ncrelay_end e = ncrelay_state(s->relay, NULL);

		netconf_transport_error(s, e, "hello", deadline, err);
		netconf_session_close(s, 0);
		return -1;
	}
	ncrelay_arm(s->relay, 0, 0);
	netconf_caps_read((const char *const *)nc_session_get_cpblts(s->nc), &s->caps);
	s->sid = nc_session_get_id(s->nc);
	return 0;
}

void netconf_session_close(struct netconf_session *s, double deadline)
{
	if (!s->relay)
		return;
	if (s->nc) {
		/* <close-session>, if the session is still up, for at most the
		 * time left (libnetconf2 waits for its reply). */
		if (deadline > now_seconds() && ncrelay_state(s->relay, NULL) == NCRELAY_OPEN)
			ncrelay_arm(s->relay, 1u << 20, deadline);
		else
			ncrelay_cut(s->relay);
		nc_session_free(s->nc, NULL);
		s->nc = NULL;
	}
	if (s->lib_fd >= 0)
		close(s->lib_fd);
	s->lib_fd = -1;
	ncrelay_stop(s->relay);
	s->relay = NULL;
	if (s->ctx)
		ly_ctx_destroy(s->ctx);
	s->ctx = NULL;
	free(s->peek);
	s->peek = NULL;
}

bool netconf_session_up(const struct netconf_session *s)
{
	return s->relay && s->nc && ncrelay_state(s->relay, NULL) == NCRELAY_OPEN &&
	       nc_session_get_status(s->nc) == NC_STATUS_RUNNING;
}

/* ---- one exchange -------------------------------------------------------------- */

uint64_t netconf_max_reply(uint32_t ports)
{
	return (uint64_t)opsw_max_data(ports) + NETCONF_ENVELOPE;
}

int netconf_transport_error(const struct netconf_session *s, enum ncrelay_end e, const char *what,
			    double deadline, struct ofc_error *err)
{
	const char *lib = netconf_last_log();

	switch (e) {
	case NCRELAY_TIMEOUT:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				      "%s: no whole reply before the deadline", what);
	case NCRELAY_TOO_BIG:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TOO_BIG,
				      "%s: reply larger than %llu bytes", what,
				      (unsigned long long)s->max_reply);
	case NCRELAY_EOF:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED,
				      "%s: connection closed by the device", what);
	case NCRELAY_LOST:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "%s: connection lost", what);
	case NCRELAY_FRAMING:
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "%s: not RFC 6242 framing: %s", what,
				      ncrelay_framing(s->relay));
	default:
		break;
	}
	if (deadline > 0 && now_seconds() >= deadline)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_TIMEOUT,
				      "%s: no reply before the deadline", what);
	/* Open and still failed: libnetconf2 could not read what came. */
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "%s: not a NETCONF reply%s%.200s",
			      what, lib[0] ? ": " : "", lib);
}

/* What an RPC's reply brings: its <data> as XML, or its tree handed to a
 * function. */
struct reply_use {
	char **data;
	int (*plain)(const char *body, size_t len, uint64_t id, void *arg);
	int (*take)(const struct lyd_node *tree, void *arg, struct ofc_error *err);
	void *arg;
};

static int use_reply(const struct lyd_node *envp, const struct lyd_node *op,
		     const struct reply_use *u, struct netconf_rpc_error *re, struct ofc_error *err)
{
	const struct lyd_node *tree;

	if (!u->take)
		return netconf_reply_take(envp, op, u->data, re, err);
	if (netconf_reply_data(envp, op, &tree, re, err) < 0)
		return -1;
	return u->take(tree, u->arg, err);
}

/* Send one RPC: 0 with its message-id, or -2 with err (the session failed). */
static int send_one(struct netconf_session *s, struct nc_rpc *rpc, const char *what,
		    double deadline, uint64_t *id, struct ofc_error *err)
{
	int ms = (int)((deadline - now_seconds()) * 1000) + 1;
	NC_MSG_TYPE t = ms > 0 ? nc_send_rpc(s->nc, rpc, ms, id) : NC_MSG_WOULDBLOCK;

	if (t == NC_MSG_RPC)
		return 0;
	netconf_transport_error(
	    s, t == NC_MSG_WOULDBLOCK ? NCRELAY_TIMEOUT : ncrelay_state(s->relay, NULL), what,
	    deadline, err);
	return -2;
}

/* The reply to rpc (sent as id): 0; -1 with err and re for an <rpc-error>
 * (OFC_R_REFUSED); -2 with err when the session failed or the reply is
 * garbage. */
static int recv_one(struct netconf_session *s, struct nc_rpc *rpc, uint64_t id, const char *what,
		    double deadline, const struct reply_use *u, struct netconf_rpc_error *re,
		    struct ofc_error *err)
{
	struct lyd_node *envp = NULL, *op = NULL;
	int ms = (int)((deadline - now_seconds()) * 1000) + 1;
	NC_MSG_TYPE t = ms > 0 ? nc_recv_reply(s->nc, rpc, id, ms, &envp, &op) : NC_MSG_WOULDBLOCK;
	int rc;

	memset(re, 0, sizeof(*re));
	if (t != NC_MSG_REPLY) {
		enum ncrelay_end e = ncrelay_state(s->relay, NULL);

		if (t == NC_MSG_WOULDBLOCK && e == NCRELAY_OPEN)
			e = NCRELAY_TIMEOUT;
		netconf_transport_error(s, e, what, deadline, err);
		/* a reply that did not parse may leave libyang's envelope
		 * (garbage after a good <rpc-reply> start) */
		lyd_free_tree(envp);
		lyd_free_tree(op);
		return -2;
	}
	rc = use_reply(envp, op, u, re, err);
	if (rc < 0 && err->reason == OFC_R_REFUSED) {
		struct strbuf sb = STRBUF_INIT;

		sb_printf(&sb, "%s %s", what, err->msg); /* "<get> refused (...)" */
		snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1, sb.buf);
		sb_free(&sb);
	} else if (rc < 0) {
		ofc_error_prefix(err, "%s", what);
		rc = -2;
	}
	lyd_free_tree(envp);
	lyd_free_tree(op);
	return rc;
}

/* The reply to id read in place: 1 when it was here whole within the
 * deadline and u->plain took it (then it is consumed, and libnetconf2
 * never sees it: nothing else is in flight on the session); 0 when
 * libnetconf2 is to read it (not here yet, not whole, not plain, base:1.0
 * framing); -2 with err when the session failed. The relay hands over a
 * message at a time, so a reply is here whole or not at all. */
static int recv_plain(struct netconf_session *s, uint64_t id, const char *what, double deadline,
		      const struct reply_use *u, struct ofc_error *err)
{
	struct pollfd p = {.fd = s->lib_fd, .events = POLLIN};
	int ms = (int)((deadline - now_seconds()) * 1000) + 1;
	struct strbuf body = STRBUF_INIT;
	size_t used = 0;
	ssize_t n;
	int rc = 0;

	if (!nc_session_get_version(s->nc) || ms <= 0 || poll(&p, 1, ms) != 1 ||
	    !(p.revents & POLLIN))
		return 0;
	if (!s->peek)
		s->peek = xmalloc(NETCONF_PEEK);
	n = recv(s->lib_fd, s->peek, NETCONF_PEEK, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0 && netconf_frame(s->peek, (size_t)n, &body, &used) == 1 &&
	    u->plain(body.buf, body.len, id, u->arg) == 1) {
		if (recv(s->lib_fd, s->peek, used, MSG_DONTWAIT) == (ssize_t)used) {
			s->plain++;
			rc = 1;
		} else {
			ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				       "%s: the reply went from under the driver", what);
			rc = -2;
		}
	}
	sb_free(&body);
	return rc;
}

static int exchange(struct netconf_session *s, struct nc_rpc *rpc, const char *what,
		    double deadline, const struct reply_use *u, struct netconf_rpc_error *re,
		    struct ofc_error *err)
{
	uint64_t id = 0;
	int rc;

	if (u->data)
		*u->data = NULL;
	memset(re, 0, sizeof(*re));
	if (!netconf_session_up(s))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "%s: the session is gone",
				      what);
	netconf_clear_log();
	ncrelay_arm(s->relay, s->max_reply, deadline);
	rc = send_one(s, rpc, what, deadline, &id, err);
	if (rc == 0 && u->plain)
		rc = recv_plain(s, id, what, deadline, u, err);
	if (rc == 1)
		rc = 0;
	else if (rc == 0)
		rc = recv_one(s, rpc, id, what, deadline, u, re, err);
	if (rc == -2) {
		ncrelay_cut(s->relay); /* a session that failed once is not trusted again */
		return -1;
	}
	ncrelay_arm(s->relay, 0, 0);
	return rc;
}

int netconf_rpc_many(struct netconf_session *s, struct netconf_call *c, uint32_t n, double deadline,
		     struct ofc_error *err)
{
	uint64_t id[NETCONF_MANY];
	struct reply_use none = {0};
	int rc = 0;

	if (n > NETCONF_MANY)
		return ofc_error_set(err, OFC_E_RUNTIME, "%u RPCs at once: at most %u", n,
				     NETCONF_MANY);
	for (uint32_t i = 0; i < n; i++) {
		c[i].rc = -1;
		memset(&c[i].re, 0, sizeof(c[i].re));
		memset(&c[i].err, 0, sizeof(c[i].err));
	}
	if (!netconf_session_up(s))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "%s: the session is gone",
				      c[0].what);
	netconf_clear_log();
	ncrelay_arm(s->relay, s->max_reply, deadline);
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = send_one(s, c[i].rpc, c[i].what, deadline, &id[i], err);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		c[i].rc =
		    recv_one(s, c[i].rpc, id[i], c[i].what, deadline, &none, &c[i].re, &c[i].err);
		if (c[i].rc == -2) {
			*err = c[i].err;
			rc = -2;
		}
	}
	if (rc < 0) {
		ncrelay_cut(s->relay);
		return -1;
	}
	ncrelay_arm(s->relay, 0, 0);
	return 0;
}

int netconf_rpc(struct netconf_session *s, struct nc_rpc *rpc, const char *what, double deadline,
		char **data, struct netconf_rpc_error *re, struct ofc_error *err)
{
	struct reply_use u = {.data = data};

	return exchange(s, rpc, what, deadline, &u, re, err);
}

int netconf_rpc_tree(struct netconf_session *s, struct nc_rpc *rpc, const char *what,
		     double deadline,
		     int (*take)(const struct lyd_node *tree, void *arg, struct ofc_error *err),
		     void *arg, struct netconf_rpc_error *re, struct ofc_error *err)
{
	struct reply_use u = {.take = take, .arg = arg};

	return exchange(s, rpc, what, deadline, &u, re, err);
}

int netconf_rpc_plain(struct netconf_session *s, struct nc_rpc *rpc, const char *what,
		      double deadline,
		      int (*plain)(const char *body, size_t len, uint64_t id, void *arg),
		      int (*take)(const struct lyd_node *tree, void *arg, struct ofc_error *err),
		      void *arg, struct netconf_rpc_error *re, struct ofc_error *err)
{
	struct reply_use u = {.plain = plain, .take = take, .arg = arg};

	return exchange(s, rpc, what, deadline, &u, re, err);
}
