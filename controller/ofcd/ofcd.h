/* controller/ofcd — the controller daemon (its clients: controller/client/). */
#ifndef OFC_CONTROLLER_OFCD_H
#define OFC_CONTROLLER_OFCD_H

#include "controller/client/client.h"
#include "controller/fabric/fabric.h"

/* ---- ofcd: the controller daemon (controller/ofcd/) ----------------------
 * Serves the control API (proto/control.proto, docs/control.md) on a Unix
 * socket: frames of a 4-byte big-endian length and one protobuf message.
 * Reads are answered by the event loop from the last committed state;
 * mutations run one at a time, in arrival order, on a worker thread that
 * owns the struct ctl; schedules are computed on a second worker. The
 * daemon holds the fabric's lock for its whole life. Nothing here prints:
 * log lines go to opts.log. */

/* Mutations waiting in the queue at most, and of them what one public
 * principal (a gateway tenant) may have by default: a tenant's burst of
 * reconfigures of its own partition once sat ahead of every admin's
 * mutation. Public principals together hold three quarters of the queue,
 * so root and the admins always find room. */
#define OFCD_MAX_QUEUE			 64
#define OFCD_MUTATION_SHARE_DEFAULT	 8
#define OFCD_PUBLIC_MUTATIONS		 (OFCD_MAX_QUEUE * 3 / 4)
#define OFCD_MAX_FRAME_DEFAULT		 (16u << 20)
#define OFCD_MAX_RO_FRAME_DEFAULT	 (64u << 10)
#define OFCD_MAX_CLIENTS_DEFAULT	 1024
#define OFCD_MAX_CLIENTS_PER_UID_DEFAULT 64
/* Descriptors ofcd needs besides one per client: listeners, epoll, eventfd,
 * signalfd, stdio, the lock, state files, syslog (one per device is added):
 * RLIMIT_NOFILE (LimitNOFILE=) should be at least max_clients + devices + this. */
#define OFCD_FDS_RESERVED 64
/* Host links' damping (struct link_damp_opts), as BGP's route-flap damping
 * defaults scaled to seconds: a link is restored after 5 s up; two flaps
 * close together suppress it, until the penalty halves below the reuse
 * threshold (about 20 s later), and never more than a minute. */
#define OFCD_LINK_HOLD_DOWN_MS	     5000u
#define OFCD_LINK_HALF_LIFE_MS	     15000u
#define OFCD_LINK_PENALTY	     1000u
#define OFCD_LINK_SUPPRESS	     1500u
#define OFCD_LINK_REUSE		     750u
#define OFCD_LINK_MAX_SUPPRESS_MS    60000u
#define OFCD_CREDENTIALS_DIR_DEFAULT "/etc/ofc/credentials"
/* A replica's lease on etcd, seconds. */
#define OFCD_CLUSTER_TTL_DEFAULT 2
/* Seconds a GetSchedule from the read-only socket may take by default. */
#define OFCD_RO_REQUEST_TIME_DEFAULT 10

/* Log levels are syslog's. */
enum ofcd_log_level {
	OFCD_LOG_ERR = 3,
	OFCD_LOG_WARNING = 4,
	OFCD_LOG_NOTICE = 5,
	OFCD_LOG_INFO = 6,
	OFCD_LOG_DEBUG = 7,
};

struct ofcd_opts {
	const char *config_path;
	const char *socket_path;    /* mutations (root, admin group) and reads */
	const char *ro_socket_path; /* reads only, for anyone; NULL: none */
	unsigned socket_mode;	    /* of the main socket (default 0660) */
	bool have_admin_group;
	unsigned admin_gid;	      /* members may mutate */
	const char *admin_group;      /* its name, for messages */
	const char *state_dir;	      /* NULL: ctl_state_dir(NULL) */
	const char *const *overrides; /* "NAME=HOST:PORT" (--device) */
	uint32_t noverrides;
	/* Every config's credentials files must be in this directory, root's
	 * and closed to others (NULL: OFCD_CREDENTIALS_DIR_DEFAULT). */
	const char *credentials_dir;
	/* The only directory whose edge-list files (edges:FILE) a request or a
	 * config sent over the API may name: a relative FILE resolves in it, an
	 * absolute one must lie beneath it (docs/ofcd.md, "Security"). It must
	 * belong to root (or ofcd's user) and be closed to writes by others.
	 * NULL: requests may name no file at all. */
	const char *topology_dir;
	/* Addresses a config sent over the API may name, besides those of the
	 * --config file and the overrides: "HOST:PORT" or "CIDR:PORT". */
	const char *const *allow_devices;
	uint32_t nallow_devices;
	uint32_t max_frame; /* bytes, both ways; 0: OFCD_MAX_FRAME_DEFAULT */
	/* Mutations one public principal (a gateway tenant) may have queued at
	 * once; past it its next is refused BUSY (0: OFCD_MUTATION_SHARE_DEFAULT).
	 * The principals named in mutation_share_exempt (the Slurm hooks'
	 * certificate, whose prologs come in bursts) are held only to the
	 * public principals' share together. */
	uint32_t mutation_share;
	const char *const *mutation_share_exempt;
	uint32_t nmutation_share_exempt;
	/* Host links (ReportLinks, docs/hosts.md): a port its host reports
	 * up again is restored after it stays up hold_down_ms; a port that
	 * flaps gains `penalty` a flap, halving every half_life_ms, and is
	 * held failed while the penalty is above `suppress` until it falls
	 * below `reuse` (capped so that takes at most max_suppress_ms). 0:
	 * the defaults, OFCD_LINK_* below. */
	struct link_damp_opts {
		uint32_t hold_down_ms, half_life_ms, penalty, suppress, reuse, max_suppress_ms;
	} link_damp;
	/* Largest request on the read-only socket, whose requests are all
	 * small: anyone may connect there. 0: OFCD_MAX_RO_FRAME_DEFAULT. */
	uint32_t max_ro_frame;
	uint32_t max_clients; /* 0: OFCD_MAX_CLIENTS_DEFAULT */
	/* Per user (peer uid): connections at once (0: OFCD_MAX_CLIENTS_PER_UID_DEFAULT,
	 * at most max_clients) and bytes buffered for them, requests being received
	 * and replies not yet read (0: 4 x max_frame; at least max_frame + 1 MiB). */
	uint32_t max_clients_per_uid;
	uint64_t max_buffer_per_uid;
	/* Bytes one GetSchedule may hold while it is computed; a larger one is
	 * refused with its estimate (0: a quarter of the machine's memory). */
	uint64_t max_request_memory;
	/* Seconds one GetSchedule may take (the engines stop with the phase
	 * they reached; the all-to-all MCF's LP stops with a certified flow);
	 * 0: 60, < 0: none. */
	double max_request_time;
	/* --lp-solver: the LP solver of the schedules it computes for a config
	 * that names none; LP_SOLVER_DEFAULT: each LP's own. */
	enum lp_solver lp_solver;
	/* The same two for requests on the read-only socket, which anyone may
	 * send: 0 = the smaller defaults (OFCD_RO_REQUEST_TIME_DEFAULT, an
	 * eighth of the machine), never more than the main socket's. */
	uint64_t ro_max_request_memory;
	double ro_max_request_time;
	double client_timeout; /* seconds a half-sent request or an unread reply may
				  wait; 0: 30 */
	double probe_interval; /* seconds between device reads when idle; 0: never */
	bool signals;	       /* ofcd_run takes SIGTERM/SIGINT (stop), SIGHUP (reload) */
	int log_level;	       /* enum ofcd_log_level: this and more urgent */
	void (*log)(void *ctx, int level, const char *msg);
	void *log_ctx;
	/* The service manager's view (the main sends it to systemd): called
	 * with "READY=1" when the loop starts serving and "STOPPING=1" when a
	 * stop begins. NULL: nobody listens. */
	void (*notify)(void *ctx, const char *state);
	/* Listening sockets handed over (socket activation): serve these
	 * instead of binding socket_path / ro_socket_path, and never unlink
	 * those paths (the service manager owns them). -1: none. */
	bool inherit_fds;
	int main_fd, ro_fd;
	/* The network API: a third socket for ofc-gateway
	 * (docs/control.md, "The network API"). Only gateway_uid may connect
	 * (SO_PEERCRED); each request there carries its principal, which
	 * ofcd authorises (authz.c). NULL: none. */
	const char *gateway_socket_path;
	unsigned gateway_uid;
	/* The gateway user's group: a non-root ofcd gives the socket to it
	 * (mode 0660; ofcd's user must be a member). */
	bool have_gateway_gid;
	unsigned gateway_gid;
	/* Replicas on etcd (docs/ofcd.md, "Replicas"): the record,
	 * journal, .failed and .rewired live in etcd at `cluster`
	 * ("etcds://HOST:PORT[,...]", TLS, or "etcd://..."; NULL: one ofcd,
	 * files in state_dir);
	 * the replica whose lease holds the fabric's leader key leads, the
	 * others answer mutations STATUS_NOT_LEADER with where it is. */
	const char *cluster;
	double cluster_ttl;	    /* the lease, seconds (0: OFCD_CLUSTER_TTL_DEFAULT) */
	const char *cluster_name;   /* this replica among them (NULL: the host's name) */
	const char *cluster_prefix; /* etcd keys' prefix (NULL: "/ofc/") */
	/* etcds://: the CA of etcd's members, this replica's certificate and
	 * its key (PEM files; checked at start by ofcd_main.c). */
	const char *cluster_cacert, *cluster_cert, *cluster_key;
	/* etcd's RBAC: the user, and its password read from
	 * --cluster-password-file at start (owned; NULL: no auth). */
	const char *cluster_user;
	char *cluster_password;
	/* Where clients reach this replica when it leads (--advertise): its
	 * control socket (NULL: socket_path, made absolute) and its
	 * gateway's URL (NULL: none). */
	const char *advertise_socket, *advertise_url;
	/* Tests: in-process twins of sim devices (ctl_opts.sim_lookup). */
	struct sim_device *(*sim_lookup)(void *ctx, const char *device);
	void *sim_ctx;
	/* The planner program GetSchedule and the state's schedule run in
	 * (NULL: $OFC_PLANNER, else ofc-planner beside the running program). */
	const char *planner_path;
};

struct ofcd;

/* Load and validate the config, take the fabric's lock, recover any
 * unfinished transaction, adopt the recorded topology and bind the sockets.
 * No threads yet (the caller may daemonize after this). Errors: OFC_E_INPUT
 * for a bad config (with its position), OFC_E_USAGE for bad options,
 * OFC_E_RUNTIME otherwise. */
int ofcd_open(const struct ofcd_opts *o, struct ofcd **out, struct ofc_error *err);
/* fabric_validate(f) as ofcd loads a config: its `topology: auto` picked
 * by a planner process (o's --planner, --max-request-memory; max_time
 * seconds, <= 0: none), not in this process (planner_ask.c). */
int ofcd_validate_with(const struct ofcd_opts *o, struct fabric *f, double max_time,
		       struct ofc_error *err);
/* Serve until stopped; then finish the running transaction, answer what
 * can be answered and return 0. */
int ofcd_run(struct ofcd *d, struct ofc_error *err);
/* Ask a running daemon to stop (as SIGTERM) or reload its config (as
 * SIGHUP). Thread-safe and async-signal-safe. */
void ofcd_stop(struct ofcd *d);
void ofcd_reload(struct ofcd *d);
/* Removes the sockets and frees everything. */
void ofcd_close(struct ofcd *d);

#endif
