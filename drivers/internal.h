/* Private to drivers/: the driver ops tables, TCP helpers and the TL1
 * client the tl1 and patch-panel drivers share. */
#ifndef OFC_DRIVERS_INTERNAL_H
#define OFC_DRIVERS_INTERNAL_H

#include <stdatomic.h>

#include "drivers/drivers.h"

extern const struct driver_ops tl1_driver_ops;
extern const struct driver_ops patch_panel_driver_ops;
extern const struct driver_ops mrr_driver_ops;
extern const struct driver_ops netlink_driver_ops;
extern const struct driver_ops sim_driver_ops;

/* "host:port" or "[v6]:port" -> a connected TCP socket, within timeout
 * seconds. Returns the fd, or -1 with err set (OFC_E_RUNTIME). */
int tcp_connect(const char *address, double timeout, struct ofc_error *err);
/* The TL1 session both the tl1 and patch-panel drivers run: login,
 * commands with ctags, reconnect and bounded retries. `extra_time` is
 * added to every command's timeout (a panel's robot takes its move time). */
struct tl1_session {
	int fd;
	uint32_t ctag;
	double extra_time;
	struct credentials cred;
	struct strbuf in; /* bytes received and not yet consumed */
};
int tl1_driver_open(struct device *dev, double extra_time, struct ofc_error *err);

/* The blocks of a command around its ctag: VERB PRE CTAG POST ';'. */
struct tl1_args {
	const char *pre, *post;
};
struct tl1_reply;
/* A command with reconnects: 0 with the reply (COMPLD or DENY), or -1 when
 * no attempt got an answer. *attempt is the attempt that answered (0 for
 * the first). A refused login is final. */
int tl1_command(struct device *dev, const char *verb, struct tl1_args args, struct tl1_reply *r,
		uint32_t *attempt, struct ofc_error *err);
/* Commands sent ahead of their replies, on the session as it is (no login,
 * no retry): tl1_send writes n commands in one write, their ctags
 * consecutive from *first_ctag; tl1_await reads the reply to one ctag
 * (replies come in the order sent); tl1_drop ends the session after a
 * failure (the next tl1_command logs in again). */
bool tl1_open_session(const struct device *dev);
int tl1_send(struct device *dev, uint32_t n, const char *const *verb, const struct tl1_args *a,
	     uint32_t *first_ctag, struct ofc_error *err);
int tl1_await(struct device *dev, uint32_t ctag, struct tl1_reply *r, struct ofc_error *err);
void tl1_drop(struct device *dev);
/* A decimal number of at most 10 digits at *p, no sign, no wrap. */
int tl1_take_u32(const char **p, uint32_t *v);

/* What differs between the TL1 dialects (docs/tl1.md): how cross-connects
 * are read and how one is made or removed. The session, framing, retries
 * and login are shared (tl1.c). */
struct tl1_dialect {
	const char *name;
	int (*read)(struct device *, struct device_state *, struct ofc_error *);
	/* One OP_CONNECT or OP_DISCONNECT, ports already checked: 0 when it
	 * took effect for certain, -1 with err otherwise. */
	int (*apply_op)(struct device *, const struct op *, struct ofc_error *);
	/* Optional: a whole batch, *done counting the ops that took effect
	 * for certain, in order (else apply_op one after another). */
	int (*apply)(struct device *, const struct op_batch *, uint32_t *, struct ofc_error *);
};
extern const struct tl1_dialect tl1_polatis, tl1_calient;
/* A refused op's error: "device refused connect 3 -> 17 (SAIS: ...)". */
int tl1_refused(const struct op *op, const struct tl1_reply *r, struct ofc_error *err);

/* A TL1 reply: COMPLD or DENY, the DENY code line, the payload lines. */
struct tl1_reply {
	bool compld;
	char code[16]; /* DENY: the error code line */
	char **lines;  /* payload lines, trimmed */
	uint32_t nlines;
	size_t lines_cap;
};
void tl1_reply_free(struct tl1_reply *r);
/* Take the reply to ctag out of the bytes received so far: 1 when it is
 * complete (its bytes consumed; replies to older ctags, late answers to
 * commands that timed out, are skipped), 0 when more bytes are needed, -1
 * when the bytes are not a TL1 reply or answer another ctag. Pure: the
 * driver feeds it from the socket, the fuzzer from its input. */
int tl1_take_reply(struct strbuf *in, uint32_t ctag, struct tl1_reply *r, struct ofc_error *err);
/* Whether the bytes just read (chunk, not yet in in) may let tl1_take_reply
 * finish or fail the reply: only then is it worth its scan of all of in. */
bool tl1_may_finish(const struct strbuf *in, const char *chunk, size_t n);
/* A RTRV-PATCH payload line "IN,EGRESS" on a ports x ports switch, egress
 * numbered ports+1..2*ports: 0 with *in and *out (1-based), -1 otherwise. */
int tl1_parse_xconn(const char *line, uint32_t ports, uint32_t *in, uint32_t *out);
int tl1_driver_read(struct device *dev, struct device_state *out, struct ofc_error *err);
/* A RTRV-CRS payload line "SRC,DST:GROUP,1WAY,ACT|IDLE" of a Calient switch
 * with ports 1..ports named under map: 0 with the ports and whether the
 * cross-connect is active (carries light), -1 otherwise. */
int tl1_calient_parse_crs(const char *line, const struct tl1_port_map *map, uint32_t ports,
			  uint32_t *in, uint32_t *out, bool *active);

/* The MRR driver's reading of a reply, pure (the fuzzer feeds it): a
 * frame's bytes as an MrrReply answering seq (caller frees *reply with
 * ofc__v1__mrr_reply__free_unpacked); a GetState reply's channels as a
 * state of the ring cfg describes, each checked against it (device_read
 * then refuses duplicates). */
struct Ofc__V1__MrrReply;
int mrr_take_reply(const uint8_t *buf, size_t len, uint64_t seq, struct Ofc__V1__MrrReply **reply,
		   struct ofc_error *err);
int mrr_reply_state(const struct Ofc__V1__MrrReply *r, const struct device_cfg *cfg,
		    struct device_state *out, struct ofc_error *err);
int tl1_driver_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		     struct ofc_error *err);
void tl1_driver_close(struct device *dev);

/* ---- NETCONF data of the Polatis optical-switch model (netconf_data.c) ---- */

/* The most of a <get> reply ofc parses grows with the switch: a port's
 * cross-connect and its two ends' status and power are about 330 bytes of
 * XML, so OPSW_DATA_PER_PORT leaves a threefold margin, OPSW_MAX_DATA is
 * the least bound, OPSW_DATA_CEILING the most (a fixed 16 MiB refused a
 * fully connected 65,536-port switch's 21 MB). */
#define OPSW_MAX_DATA	   (16u << 20)
#define OPSW_DATA_PER_PORT 1024u
#define OPSW_DATA_CEILING  (256u << 20)
size_t opsw_max_data(uint32_t ports);
enum opsw_status { OPSW_UNKNOWN = 0, OPSW_ENABLED, OPSW_DISABLED, OPSW_FAILED };
/* One port's health as the switch reports it: port 1..2N (egress N+k). */
struct opsw_port {
	uint32_t port;
	enum opsw_status status;
	bool has_power;
	double power_dbm;
};
/* What a <get> of the model says: cross-connects (egress 1..N, as ofc
 * numbers them) and the ports that reported a status or a power. */
struct opsw_data {
	struct device_state xc;
	struct opsw_port *ports;
	uint32_t nports;
	size_t ports_cap;
	uint32_t *at; /* at[p]: 1 + the index of port p's entry, 0: none (p < nat) */
	uint32_t nat;
};
void opsw_data_init(struct opsw_data *d);
void opsw_data_free(struct opsw_data *d);
/* Port p's (1..2N) status and power, or NULL when the data has none. */
const struct opsw_port *opsw_port_of(const struct opsw_data *d, uint32_t p);
/* The revision in a hello capability of the model
 * ("http://www.polatis.com/yang/optical-switch?module=optical-switch&revision=R"):
 * 0 with R in rev, -1 when the capability is not the model's or has none. */
int opsw_revision(const char *capability, char *rev, size_t n);
/* A libyang context with the module of revision rev from yang_dir (NULL:
 * the modules built into ofc; an unknown revision gets the nearest one's
 * list name). Free with opsw_context_free. */
struct ly_ctx;
int opsw_context(const char *yang_dir, const char *rev, struct ly_ctx **out, struct ofc_error *err);
void opsw_context_free(struct ly_ctx *ctx);
/* Parse a <get> reply's data (XML, at most opsw_max_data(N) bytes) of an NxN
 * switch into d: 0, or -1 with err (OFC_R_GARBAGE: malformed XML, an
 * element the module lacks, a port outside 1..2N, an ingress or egress
 * twice, a power that is not a number of dBm). */
int opsw_parse(struct ly_ctx *ctx, const char *xml, size_t len, uint32_t ports, struct opsw_data *d,
	       struct ofc_error *err);
/* A port power notification of the polatis-switch module
 * (drivers/yang/polatis-switch@2017-09-11.yang). */
enum opsw_notif_kind {
	OPSW_POWER_ALARM = 1,  /* port-power-alarm: under the low threshold */
	OPSW_POWER_CLEAR,      /* port-power-clear */
	OPSW_POWER_WARN,       /* port-power-warn-alarm: under the degrade threshold */
	OPSW_POWER_WARN_CLEAR, /* port-power-warn-clear */
};
struct opsw_notif {
	enum opsw_notif_kind kind;
	uint32_t port; /* 1..2N */
};
const char *opsw_notif_name(enum opsw_notif_kind k);
struct lyd_node;
/* What a notification libnetconf2 parsed (and libyang validated against
 * the session's context) says about an N x N switch (pure, fuzzed): 1 with
 * *out for one of the port power notifications, 0 for any other
 * notification (not ofc's), -1 with err (OFC_R_GARBAGE) for a port outside
 * 1..2N. */
int opsw_notif_take(const struct lyd_node *op, uint32_t ports, struct opsw_notif *out,
		    struct ofc_error *err);
/* What opsw_parse does after parsing, on a tree another parse made (the
 * <data> of a <get> reply libnetconf2 parsed in a session's context that
 * holds the module: netconf_reply_data): every node must be typed by the
 * optical-switch module (what a parse left opaque is an element the module
 * lacks or a value not of its type), then the same checks. tree may be
 * NULL (no data). */
int opsw_take(const struct lyd_node *tree, uint32_t ports, struct opsw_data *d,
	      struct ofc_error *err);
/* Load ofc's optical-switch module of revision rev (the nearest one's for
 * an unknown revision) into ctx (a session's, after its hello). */
int opsw_context_add(struct ly_ctx *ctx, const char *rev, struct ofc_error *err);
/* The YANG modules built into ofc (generated by scripts/embed-yang.py from
 * drivers/yang and Debian's ietf-netconf), ended by a NULL name. */
struct yang_text {
	const char *name, *revision, *text;
};
extern const struct yang_text yang_texts[];
/* The <edit-config> content that takes an N x N switch through batch b
 * (OP_DISCONNECT and OP_CONNECT, ports already checked): one
 * <cross-connects> with an entry of the list (`pair` or `pairs`) per
 * change, nc:operation="delete" for a removal and "merge" for a
 * connection, egress numbered N+k. A removal whose ingress b connects
 * again is left out: the merge replaces its egress, and one edit naming a
 * key twice is not one a device must take. Returns the entries written. */
uint32_t opsw_edit(const struct op_batch *b, uint32_t ports, bool pairs, struct strbuf *out);
/* The ingress an rpc-error's error-path names
 * (".../opsw:pair[opsw:ingress='3']"): 0 with *in, -1 when it names none. */
int opsw_error_ingress(const char *path, uint32_t *in);

/* What a reply says, from libnetconf2's trees (its envelope envp and the
 * RPC's copy op with the output; pure, fuzzed): an <rpc-error> of severity
 * error is OFC_R_REFUSED with *re; else the <data> as XML in *data (the
 * caller frees it; NULL without data). */
struct lyd_node;
struct netconf_rpc_error;
int netconf_reply_take(const struct lyd_node *envp, const struct lyd_node *op, char **data,
		       struct netconf_rpc_error *re, struct ofc_error *err);
/* The same, with the <data>'s tree in *tree (NULL without data; op owns
 * it), not printed back to XML. */
int netconf_reply_data(const struct lyd_node *envp, const struct lyd_node *op,
		       const struct lyd_node **tree, struct netconf_rpc_error *re,
		       struct ofc_error *err);

/* ---- the read-back in its plain form (netconf_plain.c; the framing and
 * the edit, netconf-emu's, are in drivers.h) ---- */

/* A <get> reply (body, unframed) to message msgid whose data is only the
 * cross-connects of an NxN switch (list `pairs` before 2017-08-04), in
 * the narrow form: 1 with them added to d->xc (sorted and checked as
 * opsw_take does); 0 when declined (d->xc left empty): read it through
 * libnetconf2 and opsw_take instead. */
int opsw_plain_reply(const char *body, size_t len, uint64_t msgid, uint32_t ports, bool pairs,
		     struct opsw_data *d);

/* ---- the netconf driver (netconf.c, netconf_ssh.c, netconf_session.c) ---- */

extern const struct driver_ops netconf_driver_ops;
/* The driver is also built as a plugin of its own, libofc-netconf.so
 * (util/plugin.c), which drivers/device.c loads the first time a config
 * names a netconf device: linked into ofc and ofcd, libnetconf2, libssh,
 * GnuTLS and libyang and the libraries they pull in (OpenSSL, Kerberos,
 * ...) were two thirds of every command's start-up, --help's included.
 * A program that links the driver from libofc.a (the emulator, the unit
 * tests, a program built with ofc.pc) uses that one instead. The plugin's
 * table is the driver's, behind its size; the program exports what the
 * plugin calls back (the Makefile's dynamic list). */
#define NETCONF_PLUGIN	   "libofc-netconf.so"
#define NETCONF_PLUGIN_API "ofc_netconf_plugin"
struct netconf_plugin {
	size_t size; /* sizeof(struct driver_ops): another build's is refused */
	const struct driver_ops *ops;
};

/* What a device's hello says (netconf_caps_read, pure). */
struct netconf_caps {
	char rev[16]; /* optical-switch revision; "" when the hello names no model */
	bool model;   /* the hello names the optical-switch module */
	bool pairs;   /* its list of cross-connects is `pairs` */
	bool candidate, confirmed, rollback, writable_running, notification, interleave;
};
void netconf_caps_read(const char *const *cpblts, struct netconf_caps *c);

/* SSH to host:port (netconf_ssh.c): the host key must be in known_hosts
 * (OFC_R_IDENTITY otherwise), login as cred's user with the private key
 * key_text (may be NULL) or the password, then the "netconf" subsystem.
 * Every step within the absolute deadline. *ssh and *chan are libssh's
 * ssh_session and ssh_channel, for ncrelay_start. */
int netconf_ssh_open(const char *host, unsigned port, const char *known_hosts,
		     const struct credentials *cred, const char *key_text, double deadline,
		     void **ssh, void **chan, struct ofc_error *err);
/* The most a reply may bring from a switch of `ports` ports (the <get>
 * data is bounded by opsw_max_data; the rest is the envelope). */
#define NETCONF_ENVELOPE (1u << 20)
uint64_t netconf_max_reply(uint32_t ports);

/* A client session (netconf_session.c): the relay, libnetconf2's session
 * on its socketpair and the session's YANG context. */
struct nc_session;
struct nc_rpc;
struct netconf_session {
	struct ncrelay *relay;
	int lib_fd;
	struct nc_session *nc;
	struct ly_ctx *ctx;
	struct netconf_caps caps;
	uint32_t sid;	    /* the device's id of this session */
	uint64_t max_reply; /* netconf_max_reply of the device's ports */
	char *peek;	    /* NETCONF_PEEK bytes: a reply looked at in place */
	uint64_t plain;	    /* replies read in their plain form (netconf_plain.c) */
};
/* What a session logs in with: the credentials file, and the files it
 * names (SSH: a private key, or none with a password; TLS: a certificate
 * and its private key), read once when the device opens and wiped when it
 * closes. */
struct netconf_login {
	struct credentials cred;
	char *key_text, *cert_text;
	size_t key_len, cert_len;
};
/* Connect to dev->cfg.address ("HOST:PORT" over SSH, or over TLS with
 * cfg.tls, or "unix:PATH") and exchange hellos, within the absolute
 * deadline. notif: the session's context has the modules for
 * notifications (netconf_context_notifications). */
int netconf_session_open(const struct device *dev, const struct netconf_login *login, bool notif,
			 double deadline, struct netconf_session *s, struct ofc_error *err);
/* <close-session> when the session is up and the deadline allows, then
 * free everything. Safe on a closed or half-open session. */
void netconf_session_close(struct netconf_session *s, double deadline);
bool netconf_session_up(const struct netconf_session *s);
/* What an <rpc-error> says (the first of severity error). */
struct netconf_rpc_error {
	bool have;
	char tag[48], app_tag[48];
	char message[256];
	char path[256];
	uint32_t session_id; /* error-info's, as for lock-denied; 0: none */
};
/* Send rpc and wait for its reply until the absolute deadline, at most
 * s->max_reply bytes of it. 0 with the reply's <data> as XML in *data
 * (when data is not NULL and the reply has some; the caller frees it);
 * -1 with err: OFC_R_REFUSED and *re for an <rpc-error> (the session stays
 * up), else a timeout, a lost or closed connection, a reply too big or
 * not NETCONF (the session is cut). `what` names the RPC in errors. */
int netconf_rpc(struct netconf_session *s, struct nc_rpc *rpc, const char *what, double deadline,
		char **data, struct netconf_rpc_error *re, struct ofc_error *err);
/* The same, the reply's <data> tree (netconf_reply_data) handed to take
 * (with arg) before the reply is freed, not printed back to XML; take's
 * -1 and err are the RPC's (a reply that is garbage cuts the session). */
int netconf_rpc_tree(struct netconf_session *s, struct nc_rpc *rpc, const char *what,
		     double deadline,
		     int (*take)(const struct lyd_node *tree, void *arg, struct ofc_error *err),
		     void *arg, struct netconf_rpc_error *re, struct ofc_error *err);
/* The same, but first the reply as it came: when it is here whole (the
 * relay hands over a message at a time) and plain(body, its length, the
 * RPC's message-id, arg) takes it (1), it is read without libnetconf2's
 * parse; when plain declines (0), libnetconf2 reads it and take has the
 * tree, as above. At most NETCONF_PEEK bytes are looked at. */
int netconf_rpc_plain(struct netconf_session *s, struct nc_rpc *rpc, const char *what,
		      double deadline,
		      int (*plain)(const char *body, size_t len, uint64_t id, void *arg),
		      int (*take)(const struct lyd_node *tree, void *arg, struct ofc_error *err),
		      void *arg, struct netconf_rpc_error *re, struct ofc_error *err);
/* Several RPCs on one session, each sent before any reply is read
 * (pipelined: one round trip for all; the device answers them in order,
 * and a reply whose message-id is not the next one's is garbage). Each
 * call's rc is 0, or -1 with its err and re for an <rpc-error>, as
 * netconf_rpc's (no <data>: for RPCs answered <ok/>). Returns 0 when every
 * reply came (each may be a refusal), -1 with err when the session failed
 * (a timeout, a lost connection, a reply not NETCONF: the session is cut,
 * and what the device did of the RPCs not answered is unknown). At most
 * NETCONF_MANY RPCs; the bound on what may come is s->max_reply for
 * all of them. */
#define NETCONF_MANY 4
struct netconf_call {
	struct nc_rpc *rpc; /* the caller's */
	const char *what;
	int rc;
	struct netconf_rpc_error re;
	struct ofc_error err;
};
int netconf_rpc_many(struct netconf_session *s, struct netconf_call *c, uint32_t n, double deadline,
		     struct ofc_error *err);
/* The error for a session that ended as e during `what`. */
int netconf_transport_error(const struct netconf_session *s, enum ncrelay_end e, const char *what,
			    double deadline, struct ofc_error *err);

/* The notification session (netconf_notif.c): a thread with a session of
 * its own, subscribed, that sets *due (the next read reads health) and
 * calls dev->cfg.news once until then, on each port power notification.
 * dev and login are borrowed until nclisten_stop. NULL when the
 * thread cannot start. */
struct nclisten;
struct nclisten *nclisten_start(const struct device *dev, const struct netconf_login *login,
				atomic_bool *due);
/* Stop the thread (its session is cut) and free l; NULL is fine. The
 * stop waits for the session's relay to end until the driver's timeout
 * and a few seconds more; past that l is left allocated, never freed
 * under a thread that still holds it. */
void nclisten_stop(struct nclisten *l);
/* Whether the listener's session is subscribed now. */
bool nclisten_subscribed(struct nclisten *l);
/* Whether the listener has neither a session nor a thread to open the
 * next (one could not be started): stop it and start another. */
bool nclisten_stalled(struct nclisten *l);

/* Shape the egress of ifindex (named ifname, for messages) in sk's
 * namespace: tbf at rate bits/s (0: none), netem delay of latency seconds
 * (0: none). Whatever root qdisc was there goes first (drivers/shaping.c). */
struct nl_sock;
int netlink_shape(struct nl_sock *sk, int ifindex, const char *ifname, double rate, double latency,
		  struct ofc_error *err);

#endif
