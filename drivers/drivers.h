/* drivers — every device ofc changes, behind one interface (struct
 * driver_ops, after the kernel's net_device_ops). The core never asks which
 * driver a device has: it reads state, applies batches of operations and
 * closes, and the driver turns those into TL1 commands, protobuf frames or
 * netlink requests.
 *
 * Three classes of device state:
 *   switches (OCS, patch panel): cross-connects ingress -> egress, ports 1..N;
 *   rings (MRR agents): channels (node, interface, wavelength, add|drop) tuned on;
 *   hosts (netlink testbed): veth circuits between host ports, and routes.
 *
 * Fault injection lives in the emulators (build/ocs-emu, build/mrr-emu) and
 * in the sim driver, never in the core.
 */
#ifndef OFC_DRIVERS_H
#define OFC_DRIVERS_H

#include "drivers/types.h"
#include "util/util.h"

enum dev_class { DEV_SWITCH = 1, DEV_RING = 2, DEV_HOSTS = 3 };

/* A cross-connect: ingress port `in` to egress port `out`, both 1..N. */
struct xconn {
	uint32_t in, out;
};

enum mrr_role { MRR_ADD = 1, MRR_DROP = 2 };

/* One MRR tuned onto a wavelength: node (index in ring order), optical
 * interface, wavelength, and whether it adds (transmits) or drops. */
struct mrr_chan {
	uint32_t node, iface, wl, role;
};

/* A veth circuit: host src_host's port src_port transmits to dst_host's
 * port dst_port (hosts are fabric host indices). */
struct hlink {
	uint32_t src_host, src_port, dst_host, dst_port;
};

/* In host `host`, traffic for dst_host leaves through the circuit of its
 * port `port`. */
struct hroute {
	uint32_t host, dst_host, port;
};

/* What a device holds. Arrays are kept sorted (state_sort) so states
 * compare and diff in one pass. */
struct device_state {
	enum dev_class cls;
	struct xconn *xc;
	uint32_t nxc;
	size_t xc_cap;
	struct mrr_chan *ch;
	uint32_t nch;
	size_t ch_cap;
	struct hlink *links;
	uint32_t nlinks;
	size_t links_cap;
	struct hroute *routes;
	uint32_t nroutes;
	size_t routes_cap;
};

void state_init(struct device_state *s, enum dev_class cls);
void state_free(struct device_state *s);
void state_clear(struct device_state *s);
void state_copy(struct device_state *dst, const struct device_state *src);
void state_add_xconn(struct device_state *s, uint32_t in, uint32_t out);
void state_add_chan(struct device_state *s, struct mrr_chan c);
void state_add_link(struct device_state *s, struct hlink l);
void state_add_route(struct device_state *s, struct hroute r);
void state_sort(struct device_state *s);
bool state_equal(const struct device_state *a, const struct device_state *b);
/* Number of entries (cross-connects + channels + links + routes). */
uint32_t state_size(const struct device_state *s);
/* Whether a device as read agrees with its record: rec NULL is nothing
 * recorded for it, which a device that holds nothing agrees with. */
bool state_as_recorded(const struct device_state *rec, const struct device_state *actual);

struct device_cfg;
/* Whether sorted state s is one the device cfg describes can hold: entries
 * of its class only; switch ports 1..ports; a ring's nodes, interfaces and
 * wavelengths, roles add or drop; the testbed's hosts and ports; no entry,
 * ingress, egress or route twice. Limits of 0 in cfg are not checked.
 * Returns 0, or -1 with err (OFC_E_RUNTIME, OFC_R_GARBAGE) naming the
 * first offence. Used on what devices report and on the journal. */
int state_check(const struct device_state *s, const struct device_cfg *cfg, struct ofc_error *err);

enum op_kind {
	OP_DISCONNECT = 1, /* xc: remove ingress xc.in (xc.out: what it held) */
	OP_CONNECT,	   /* xc: connect xc.in -> xc.out */
	OP_TUNE_OFF,	   /* ch: detune the MRR */
	OP_TUNE_ON,	   /* ch: tune the MRR onto the wavelength */
	OP_LINK_DEL,	   /* link: remove the veth circuit */
	OP_LINK_ADD,	   /* link: create, address and raise the veth circuit */
	OP_ROUTE_SET,	   /* route: add or replace */
	OP_ROUTE_DEL,	   /* route: remove */
};

struct op {
	enum op_kind kind;
	union {
		struct xconn xc;
		struct mrr_chan ch;
		struct hlink link;
		struct hroute route;
	};
};

struct op_batch {
	struct op *ops;
	uint32_t n;
	size_t cap;
};

void batch_add(struct op_batch *b, struct op op);
void batch_free(struct op_batch *b);

/* The operations that take a device from `cur` to `want`, in the order they
 * can be applied: removals first (so ports and wavelengths are free), then
 * additions, then routes. Entries present in both are not touched. A route
 * through a circuit that is removed or added is set again: the kernel
 * drops routes with their link. */
void state_diff(const struct device_state *cur, const struct device_state *want,
		struct op_batch *out);
/* One line for people: "connect 3 -> 17", "tune on node 2 if 0 wl 5 add". */
void op_describe(const struct op *op, char *buf, size_t n);

/* ---- devices -------------------------------------------------------------- */

struct sim_device;

/* What a driver needs to know about its device; filled by the controller
 * from the fabric config. Strings are borrowed for the device's life. */

struct device_cfg {
	const char *name;
	const char *driver;	      /* tl1, patch-panel, mrr, netlink, sim */
	const char *dialect;	      /* tl1: "polatis" (NULL too) or "calient" */
	struct tl1_port_map port_map; /* tl1 calient */
	const char *address;	      /* host:port (already overridden by --device) */
	const char *credentials;      /* resolved path, or NULL */
	const char *known_hosts;      /* netconf over SSH: resolved path of the host keys */
	bool tls;		      /* netconf: over TLS (RFC 7589), not SSH */
	const char *tls_ca;	      /* ... the CA file (resolved) that signs the device's */
	const char *tls_server_name;  /* ... its certificate's name (NULL: the address's host) */
	const char *datastore; /* netconf: "candidate", "running" or NULL (the device's best) */
	double min_power;      /* netconf: a port in use below this many dBm is failing */
	bool min_power_set;
	const char *credentials_dir; /* a daemon's: read credentials only from here */
	double timeout;		     /* seconds per command */
	uint32_t retries;	     /* extra attempts after a lost connection */
	enum dev_class cls;
	uint32_t ports;					    /* switches: N */
	double move_time;				    /* patch panels: seconds per move */
	uint32_t ring_nodes, interfaces, wavelengths, mrrs; /* rings */
	double mrr_delay;
	/* hosts (netlink): namespace per host and host ports */
	const char *const *netns; /* nhosts namespace names */
	uint32_t nhosts, host_ports;
	double link_rate;	/* netlink: shape each circuit to bits/s (0: unshaped) */
	double link_latency;	/* ... and delay it by seconds (0: none) */
	const char *state_dir;	/* sim devices without an in-process twin persist here */
	struct sim_device *sim; /* sim: the in-process device, or NULL */
	/* The controller's fence: the time (now_seconds' clock)
	 * after which it may neither send the device a command nor wait for
	 * one (a replicated ofcd's lease, less a margin); negative: no command
	 * may go now. NULL: no fence. Asked before every command. */
	double (*fence)(void *ctx);
	void *fence_ctx;
	/* A caller that wants the device's own news (ofcd): news is called
	 * from a thread of the driver's when the device says a port's health
	 * changed (netconf: a notification, where the device offers them),
	 * once until the next read, which then reads the port health; the
	 * caller reads on its own thread. NULL: the driver only answers
	 * reads (polling). */
	void (*news)(void *ctx, const char *device);
	void *news_ctx;
};

struct device_stats {
	uint64_t commands; /* requests sent (including retries and reads) */
	uint64_t retries;  /* reconnects after a lost connection */
	double seconds;	   /* wall time inside the driver */
	/* Set by the device_* wrappers: operations (a read, an apply, a lock,
	 * a confirm) that failed, and when the device last answered one, in
	 * unix seconds (0: never). A refusal, a wrong or impossible answer is
	 * an answer; no connection, a timeout or a dropped one is not. The
	 * controller's own fence refusing (OFC_R_FENCED) is no error of the
	 * device's. */
	uint64_t errors;
	double last_contact;
};

/* A switch port that is failing by the device's own account (drivers
 * that read port health: netconf), in ofc's numbering. */
enum port_alarm_kind { ALARM_FAILED = 1, ALARM_LOW_POWER = 2 };
struct port_alarm {
	uint32_t port; /* 1..N */
	bool egress;   /* the egress side (light towards the host), else ingress */
	enum port_alarm_kind kind;
	double power_dbm; /* ALARM_LOW_POWER: the reading */
};

struct device {
	struct device_cfg cfg;
	const struct driver_ops *ops;
	void *priv;
	bool open;
	struct device_stats stats;
	/* Set by the caller before apply: > 0 makes the applies a trial the
	 * device itself reverts unless confirm (driver_ops) follows within
	 * this many seconds (NETCONF :confirmed-commit); 0: a plain change. */
	double trial_seconds;
	/* Filled by every read of a driver that reads port health: the ports
	 * in use the device reports failing (FAILED, or power under
	 * cfg.min_power; a port the driver changed since its last read is
	 * judged by its power from the next). Sorted by port. */
	struct port_alarm *alarms;
	uint32_t nalarms;
	size_t alarms_cap;
	/* Set by every read of a driver that listens for the device's own
	 * news (the netconf driver's notifications): subscribed at that
	 * read; false when the device is polled (it offers none, the caller
	 * wants none, or the listening session is down). */
	bool news_subscribed;
};

struct driver_ops {
	const char *name;
	enum dev_class cls; /* 0: any (sim) */
	int (*open)(struct device *, struct ofc_error *);
	int (*read_state)(struct device *, struct device_state *, struct ofc_error *);
	/* Apply ops in order; *done is how many took effect for certain. On
	 * failure the next op (index *done) may or may not have: callers read
	 * back before undoing. */
	int (*apply)(struct device *, const struct op_batch *, uint32_t *done, struct ofc_error *);
	/* Optional: all ops as one request, applied in order and settling once
	 * (an MRR agent retunes its rings in parallel: one tuning delay for a
	 * whole stage). The device may have applied any prefix on failure;
	 * callers read back. NULL: apply. */
	int (*apply_batch)(struct device *, const struct op_batch *, struct ofc_error *);
	void (*close)(struct device *);
	/* Optional: the device's own lock (a NETCONF <lock>), held against
	 * every other manager until unlock or until this session ends (the
	 * device drops it then): 0 when taken, 1 when this device has none, 2
	 * when this session holds it already (nothing sent for either). NULL:
	 * the driver has none. A lock held by another is OFC_R_REFUSED,
	 * naming it where the device says. */
	int (*lock)(struct device *, struct ofc_error *);
	int (*unlock)(struct device *, struct ofc_error *);
	/* Optional: keep what the applies made under dev->trial_seconds (a
	 * NETCONF confirming <commit>). -1 when the device reverted it (the
	 * session that made it ended, or its time ran out). NULL, or nothing
	 * pending: 0. */
	int (*confirm)(struct device *, struct ofc_error *);
};

/* The driver named as in the config, or NULL. */
const struct driver_ops *driver_find(const char *name);

/* Set up dev (no I/O yet). */
int device_init(struct device *dev, const struct device_cfg *cfg, struct ofc_error *err);
/* Wrappers that open on first use, time the driver and prefix errors with
 * the device name. */
int device_read(struct device *dev, struct device_state *out, struct ofc_error *err);
int device_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		 struct ofc_error *err);
/* The whole batch as one request where the driver can (apply_batch), else
 * op by op; errors prefixed with the device name. */
int device_apply_batch(struct device *dev, const struct op_batch *b, struct ofc_error *err);
void device_close(struct device *dev);
/* (drivers) Before a command goes out: -1 with err (OFC_R_FENCED) when
 * the fence forbids sending now, else 0 with *deadline (when not NULL)
 * no later than the fence. */
int device_fence(const struct device *dev, double *deadline, struct ofc_error *err);
/* The device's own lock where its driver has one (for fencing; ctl_apply
 * takes it for the whole transaction): 0 with *held
 * true when taken now, 0 with *held false when the driver or the device has
 * no lock, or this session holds it already (nothing was sent: whoever
 * took it releases it, so a fence held across transactions outlives
 * them), -1 with err (prefixed with the device name; OFC_R_REFUSED when
 * another holds it). */
int device_lock(struct device *dev, bool *held, struct ofc_error *err);
/* Release it: 0 when released or when the driver has no lock. */
int device_unlock(struct device *dev, struct ofc_error *err);
/* Confirm a trial the device keeps (driver_ops confirm): 0 when confirmed
 * or when nothing is pending; errors prefixed with the device name. */
int device_confirm(struct device *dev, struct ofc_error *err);

/* ---- credentials ------------------------------------------------------------ */

#define CRED_MAX 128
struct credentials {
	char user[CRED_MAX];
	char password[CRED_MAX];  /* "" when the file has only a private key */
	char key_file[CRED_MAX];  /* private_key: a file name beside the file, or "" */
	char cert_file[CRED_MAX]; /* certificate (TLS): a file name beside the file, or "" */
};
/* `# comment`, `user: NAME`, `password: SECRET`, `private_key: FILE` (an
 * SSH or TLS private key in a file of that name beside the credentials
 * file), `certificate: FILE` (TLS: ofc's certificate, PEM, beside it too),
 * each key once; `user` and a password or a key are required, or (TLS) a
 * certificate and a key. Errors
 * (OFC_E_INPUT, reason OFC_R_CREDENTIALS) name the file and line, never
 * any of its content. text is modified in place. */
int credentials_parse(const char *name, char *text, size_t len, struct credentials *c,
		      struct ofc_error *err);
/* Read and parse a credentials file: a regular file, opened non-blocking.
 * With dir (a daemon's credentials directory), path must name a file
 * directly in dir; it is opened through dir with O_NOFOLLOW, and dir and
 * file must be owned by root (or by this euid when it is not root) and not
 * writable by group or others. */
int credentials_load(const char *path, const char *dir, struct credentials *c,
		     struct ofc_error *err);
/* The private key c names (c->key_file beside path, under the same rules
 * as credentials_load with dir), into *text, at most 64 KiB: the caller
 * wipes (explicit_bzero) and frees it. Errors name the file, never its
 * content. */
int credentials_load_key(const char *path, const char *dir, const struct credentials *c,
			 char **text, size_t *len, struct ofc_error *err);
/* The certificate c names, as credentials_load_key (a PEM certificate). */
int credentials_load_cert(const char *path, const char *dir, const struct credentials *c,
			  char **text, size_t *len, struct ofc_error *err);
/* Only the directory rule of credentials_load, without reading the file:
 * path names a file directly in dir, and dir is root's and closed. */
int credentials_check_path(const char *path, const char *dir, struct ofc_error *err);
/* Overwrite the secret in memory. */
void credentials_wipe(struct credentials *c);

/* ---- sim ------------------------------------------------------------------- */

enum fault_mode {
	FAULT_DENY = 1,	   /* refuse the command */
	FAULT_CLOSE,	   /* drop the connection before acting */
	FAULT_CLOSE_AFTER, /* act, then drop the connection before answering */
	FAULT_STALL,	   /* never answer */
	FAULT_GARBAGE,	   /* answer with bytes that are not a reply */
	FAULT_LIE,	   /* the next read-back reports a wrong entry */
};
/* "deny", "close", ... ; 0 when unknown. */
enum fault_mode fault_mode_parse(const char *s);
const char *fault_mode_name(enum fault_mode m);

/* An in-process device with the emulators' fault injection: commands are
 * counted from 1 (reads and writes alike); commands fail_at .. fail_at +
 * fail_count - 1 fail in `mode`. */
struct sim_device {
	struct device_state state;
	uint32_t ports; /* switches: 0 = unlimited */
	uint64_t commands;
	uint64_t fail_at, fail_count;
	enum fault_mode mode;
	bool lie_armed;
	bool lockable;		  /* the device has a lock (driver_ops lock); else none */
	bool locked;		  /* a session holds the lock */
	bool lock_held_elsewhere; /* another manager holds it: lock is refused */
	/* Called with a command's number before the command is carried out
	 * (NULL: never): a test copies the state directory there, as a kill -9
	 * of the process at that moment would leave it. */
	void (*before_command)(void *ctx, uint64_t command);
	void *hook_ctx;
};
void sim_device_init(struct sim_device *s, enum dev_class cls, uint32_t ports);
void sim_device_free(struct sim_device *s);
/* Arm (at > 0) or disarm (at 0) a fault while the device may be in use by
 * another thread: commands at..at+count-1 fail by mode. */
void sim_device_fault(struct sim_device *s, enum fault_mode mode, uint64_t at, uint64_t count);

/* ---- TL1 (shared by the driver and build/ocs-emu) ---------------------------- */

#define TL1_MAX_LINE 1024
/* A reply's bound grows with the switch: a full read-back (RTRV-CRS,
 * RTRV-PATCH) is one line a port, a Calient line with its names and group
 * about 60 bytes, so TL1_REPLY_PER_PORT leaves a fourfold margin over the
 * longest and TL1_MAX_REPLY covers the header, comments and small switches.
 * A fixed 1 MiB failed a 65,536-port switch's read-back (1.2 MiB of
 * Polatis lines) and with it every rollback there. The ceiling keeps a
 * misbehaving device from making ofc hold more than this much. */
#define TL1_MAX_REPLY	   (1u << 20)
#define TL1_REPLY_PER_PORT 256u
#define TL1_REPLY_CEILING  (256u << 20)
/* The most bytes one reply may bring from a switch of `ports` ports
 * (0: a device without ports: TL1_MAX_REPLY). */
size_t tl1_reply_bound(uint32_t ports);

/* A parsed command: VERB:TID:AID:CTAG:GENERAL:PARAMS...; fields are the
 * colon-separated blocks after the verb; pointers into the caller's buffer. */
struct tl1_cmd {
	char verb[32];
	const char *field[8];
	uint32_t nfield;
};
/* Parse one command (without the ';'); the text is modified in place. */
int tl1_parse_cmd(char *text, struct tl1_cmd *cmd, struct ofc_error *err);

/* Calient port names (drivers/tl1_calient.c): port 1..ports as
 * "shelf.slot.port" under map (false when it has no name: 0, past ports, or
 * a slot past 2^32); and back: 0 with *port when aid is exactly the name of
 * a port 1..ports, -1 otherwise (digits only, no sign, no blank). */
bool tl1_calient_aid(const struct tl1_port_map *map, uint32_t ports, uint32_t port, char *buf,
		     size_t n);
int tl1_calient_port(const struct tl1_port_map *map, uint32_t ports, const char *aid,
		     uint32_t *port);

/* ---- netlink testbed hosts -------------------------------------------------- */

#define NETNS_DIR "/run/netns"
/* Create the named namespace as `ip netns add` does (a bind mount of a new
 * network namespace under /run/netns), with loopback up, forwarding on and
 * reverse-path filtering off, and `addr` (198.19.x.y) on lo. Existing
 * namespaces are reused. */
int netns_create(const char *name, uint32_t host_addr, struct ofc_error *err);
int netns_delete(const char *name, struct ofc_error *err);
bool netns_exists(const char *name);
/* The host's address on a device of its own, for runtimes that choose
 * their address by device (UCX's TCP transport; MPI over the testbed): a
 * veth pair NETNS_HOST_IFACE / NETNS_HOST_IFACE "p" inside the namespace,
 * both up, host_addr/32 on the first. add false removes it. Traffic to
 * other hosts still leaves by the circuits' routes. */
#define NETNS_HOST_IFACE "ofchost"
int netns_host_iface(const char *name, uint32_t host_addr, bool add, struct ofc_error *err);
/* Interface ifname in namespace `name` up or down (IFF_UP): a fault made
 * behind ofc's back (`ofc testbed link`). */
int netns_link_set(const char *name, const char *ifname, bool up, struct ofc_error *err);
/* Host h's own address (on lo) and the two ends of the circuit from host
 * port (h, p): addresses in 198.18.0.0/15, as host-order uint32. */
uint32_t netlink_host_addr(uint32_t host);
uint32_t netlink_link_addr(uint32_t host, uint32_t port, uint32_t host_ports, bool dst_end);

/* What the kernel holds on host port p's source end o<p> (drivers/shaping.c):
 * the tbf rate and netem delay (0 when none) and its transmit counters. */
struct link_shape {
	bool present; /* o<p> exists */
	double rate;  /* bits/s */
	double latency;
	uint64_t tx_bytes, tx_packets;
};
/* out[h * ports + p] for every host of the testbed. */
int netlink_read_links(const char *const *netns, uint32_t n, uint32_t ports, struct link_shape *out,
		       struct ofc_error *err);

/* The most tbf shapes a circuit to, bits/s: it counts bytes a second in a
 * 32-bit field, and the driver keeps to 2e9 of them. */
#define NETLINK_MAX_RATE 16e9

/* The bytes tbf's bucket holds on a circuit shaped to rate bits/s: 1 ms
 * of traffic, at least 96 KiB. An idle circuit fills it, and the next
 * bytes up to it leave at the veth's speed (the testbed's model prices
 * that: controller/testbed/model.c). */
double netlink_tbf_bucket(double rate);
/* Shape every circuit of the testbed (each host's o<p>) to rate bits/s and
 * latency seconds; both 0 removes the shaping. */
int netlink_shape_links(const char *const *netns, uint32_t n, uint32_t ports, double rate,
			double latency, struct ofc_error *err);

/* ---- NETCONF (docs/netconf.md), shared by the driver and build/netconf-emu ---- */

/* RFC 6242 framing read as it comes, one direction of a session
 * (drivers/netconf_frame.c): the hello with "]]>]]>", then chunked
 * framing where both hellos offer :base:1.1, else "]]>]]>" again. */
enum { NCF_HELLO, NCF_WAIT, NCF_EOM, NCF_CHUNKED };
struct ncframe {
	uint8_t mode;	   /* NCF_*; NCF_WAIT: the hello read, the other's not yet */
	uint8_t st;	   /* chunked: the byte expected next */
	uint8_t eom;	   /* bytes of "]]>]]>" matched */
	uint8_t cap;	   /* bytes of the :base:1.1 URN matched (the hello) */
	bool base11;	   /* this side's hello offers :base:1.1 */
	uint32_t chunks;   /* chunks of the current message */
	uint64_t num;	   /* a chunk's size as read, then its bytes to come */
	uint64_t size;	   /* the current message's bytes so far */
	uint64_t max;	   /* bound on a message's bytes; 0: none */
	const char *error; /* why it failed, once it has */
};
/* A scanner whose messages may have at most max bytes (0: no bound). */
void ncframe_init(struct ncframe *f, uint64_t max);
/* Read the next bytes: how many were read (fewer than n after the hello,
 * until ncframe_decide, or after the first message's end when first_only)
 * with *end just past the last message's end among them (0: none); -1 for
 * bytes that are not the framing, -2 for a message past the bound (both
 * with f->error, and every later call fails the same). */
long ncframe_feed(struct ncframe *f, const char *buf, size_t n, bool first_only, size_t *end);
/* After the hello: the framing that follows, once the other side's hello
 * says whether it offers :base:1.1. */
void ncframe_decide(struct ncframe *f, bool peer_base11);
/* Back to a message's start, the framing kept (a reader's place). */
void ncframe_restart(struct ncframe *f);

/* The relay between a NETCONF connection and libnetconf2
 * (drivers/netconf_relay.c): libnetconf2 gets *lib_fd, one end of a
 * socketpair, and a thread moves bytes between the other end and the
 * connection (a socket peer_fd, or an SSH session and channel, libssh's
 * ssh_session and ssh_channel: the relay owns them from here on and frees
 * them). The owner closes *lib_fd after the libnetconf2 session is freed,
 * then stops the relay. */
enum ncrelay_end {
	NCRELAY_OPEN = 0,
	NCRELAY_EOF,	 /* the peer closed the connection */
	NCRELAY_LOST,	 /* the connection broke */
	NCRELAY_TIMEOUT, /* the armed deadline passed */
	NCRELAY_TOO_BIG, /* more than the armed bound came in */
	NCRELAY_CLOSED,	 /* the owner cut it, or libnetconf2's end closed */
	NCRELAY_FRAMING, /* the peer's bytes are not RFC 6242 framing */
};
struct ncrelay;
struct ncrelay *ncrelay_start(int peer_fd, void *ssh_session, void *ssh_channel, int *lib_fd,
			      struct ofc_error *err);
/* The same over TLS (netconf_tls.c's connection, which the relay owns
 * from here on). */
struct nctls;
struct ncrelay *ncrelay_start_tls(struct nctls *tls, int *lib_fd, struct ofc_error *err);
/* From now on at most max_in bytes may come in (0: no bound) until the
 * absolute deadline (0: none); past either the connection is cut. */
void ncrelay_arm(struct ncrelay *r, uint64_t max_in, double deadline);
/* The same bound, and a deadline span seconds after the next byte that
 * comes in (none while nothing comes): a message that starts must end in
 * time, however long the wait for it (a notification). */
void ncrelay_arm_span(struct ncrelay *r, uint64_t max_in, double span);
/* From now on the relay's thread reads the session (libnetconf2's, which
 * the owner no longer uses): each whole message that comes goes to
 * libnetconf2 alone, then on_msg(ctx) reads it, all there (a read of it
 * does not wait); false from it cuts the connection. A message over max
 * bytes, or not whole span seconds after its first byte, cuts it too
 * (unarmed: no other bound). When the connection is over, on_end(ctx),
 * the relay thread's last call: the owner then closes the session (which
 * stops the relay). */
void ncrelay_listen(struct ncrelay *r, uint64_t max, double span, bool (*on_msg)(void *ctx),
		    void (*on_end)(void *ctx), void *ctx);
/* Why the peer's bytes were refused as framing ("" if they were not). */
const char *ncrelay_framing(struct ncrelay *r);
/* Drop what libnetconf2 writes instead of sending it (an emulated stall). */
void ncrelay_mute(struct ncrelay *r, bool mute);
/* Queue bytes for the peer past libnetconf2 and mute (build/netconf-emu's
 * garbage, huge and endless replies): how many were taken (at most what
 * 256 KiB of room holds; all of them, dropped, once the connection is
 * over). */
size_t ncrelay_inject(struct ncrelay *r, const void *buf, size_t n);
/* Why the connection ended (NCRELAY_OPEN while it lasts) and the bytes it
 * brought in so far. */
enum ncrelay_end ncrelay_state(struct ncrelay *r, uint64_t *in_bytes);
/* End the connection now (libnetconf2 then reads the end of its input). */
void ncrelay_cut(struct ncrelay *r);
void ncrelay_stop(struct ncrelay *r);

/* NETCONF over TLS (RFC 7589; drivers/netconf_tls.c, GnuTLS). A client's
 * connection to address ("HOST:PORT"), handshake done within the absolute
 * deadline: the device's certificate signed by a CA in the PEM file ca and
 * issued for server_name (NULL: the address's host), ofc's certificate and
 * key (PEM) presented. OFC_R_IDENTITY when the device's certificate is
 * refused, OFC_R_AUTH when the device refuses ofc's, OFC_R_CREDENTIALS
 * when the files do not load; no message quotes a key. */
int nctls_connect(const char *address, const char *ca, const char *server_name, const char *cert,
		  size_t cert_len, const char *key, size_t key_len, double deadline,
		  struct nctls **out, struct ofc_error *err);
/* A server's credentials (netconf-emu): its certificate and key, and the
 * CA of the clients it takes (files, PEM). Free with nctls_server_cred_free. */
int nctls_server_cred(const char *cert, const char *key, const char *ca, void **out,
		      struct ofc_error *err);
void nctls_server_cred_free(void *cred);
/* A server's handshake on the accepted socket fd (taken: closed on
 * failure): the client's certificate must verify against the CA; its
 * common name into user (n bytes). */
int nctls_accept(int fd, void *cred, double deadline, struct nctls **out, char *user, size_t n,
		 struct ofc_error *err);
/* For the relay: records in and out (bytes; 0: not now; -1: the end, *eof
 * when it was the peer's close), decrypted bytes waiting, the socket,
 * and the end (close_notify as far as it goes, everything freed). */
long nctls_recv(struct nctls *t, char *buf, size_t n, bool *eof);
long nctls_send(struct nctls *t, const char *buf, size_t n);
bool nctls_pending(struct nctls *t);
int nctls_fd(const struct nctls *t);
void nctls_close(struct nctls *t);

/* A libyang context holding ietf-netconf with the features named (NULL:
 * all of them) and the optical-switch module at revision rev (NULL: none;
 * an unknown revision gets the nearest one's list name), from the
 * modules built into ofc (scripts/embed-yang.py). ly_flags are
 * ly_ctx_new's. Free with ly_ctx_destroy. */
struct ly_ctx;
int netconf_context(const char *rev, const char *const *features, uint16_t ly_flags,
		    struct ly_ctx **out, struct ofc_error *err);
/* Add RFC 5277's notifications module (create-subscription) and ofc's
 * polatis-switch module (the port power notifications) to ctx. */
int netconf_context_notifications(struct ly_ctx *ctx, struct ofc_error *err);
/* Silence libssh's, libnetconf2's and libyang's own logging (library code
 * never prints): their messages go to a per-thread buffer instead, the
 * last of which netconf_last_log returns (""), for errors. Once per
 * process; idempotent. */
void netconf_quiet(void);
const char *netconf_last_log(void);
void netconf_clear_log(void);

/* The revisions of ofc's optical-switch module, newest first; and whether
 * a revision names the list of cross-connects `pairs` (before 2017-08-04)
 * rather than `pair`. */
extern const char *const opsw_revisions[];
bool opsw_uses_pairs(const char *rev);
#define OPSW_NS "http://www.polatis.com/yang/optical-switch"
/* The polatis-switch module's namespace (its port power notifications),
 * and the notification capability of RFC 5277. */
#define PLTS_NS	     "http://www.polatis.com/yang/polatis-switch"
#define NC_NOTIF_NS  "urn:ietf:params:xml:ns:netconf:notification:1.0"
#define NC_NOTIF_CAP "urn:ietf:params:netconf:capability:notification:1.0"
/* The stream a Polatis switch sends its notifications on (the public
 * model's polatis-switch says so); RFC 5277's default is NETCONF. */
#define PLTS_STREAM "Polatis"

/* The transaction's large messages read in place, without libyang's
 * parse (drivers/netconf_plain.c): a message is looked at (MSG_PEEK) in at
 * most NETCONF_PEEK bytes, and taken only when its plain form is read
 * whole, else left for libnetconf2. netconf_frame: one whole RFC 6242
 * chunked message at buf's start, 1 with its chunks' data in body and the
 * bytes it takes in *used, else 0. */
#define NETCONF_PEEK (256u << 10)
struct strbuf;
int netconf_frame(const char *buf, size_t len, struct strbuf *body, size_t *used);
/* An <edit-config> of cross-connects (netconf-emu's side) in its narrow
 * form: per entry its nc:operation (NULL: none given), ingress and egress
 * ("" when absent) as sent. opsw_plain_edit: 1 with e filled (free with
 * opsw_plain_edit_free), 0 when declined. */
struct opsw_plain_entry {
	const char *op;
	char in[12], out[12];
};
struct opsw_plain_edit {
	char msgid[24];
	bool candidate; /* the target; else running */
	bool rollback;	/* error-option rollback-on-error; else none given */
	struct opsw_plain_entry *ent;
	uint32_t n;
};
int opsw_plain_edit(const char *body, size_t len, bool pairs, struct opsw_plain_edit *e);
void opsw_plain_edit_free(struct opsw_plain_edit *e);

/* MRR agent frames (docs/mrr.md): a 4-byte big-endian length, then one
 * protobuf message of at most MRR_MAX_FRAME bytes (util's frame_send and
 * frame_recv). */
#define MRR_MAX_FRAME (1u << 20)

#endif
