/* Private to drivers/emu: build/netconf-emu's parts (the switch model and
 * its RPCs in netconf_emu_device.c, SSH in netconf_emu_ssh.c, TLS in
 * netconf_emu_tls.c, the main loop in netconf_emu_main.c). */
#ifndef OFC_DRIVERS_EMU_INTERNAL_H
#define OFC_DRIVERS_EMU_INTERNAL_H

#include <sys/types.h>

#include "drivers/emu/emu.h"

struct ly_ctx;
struct lyd_node;
struct nc_session;
struct nc_server_reply;

/* How the K-th RPC misbehaves (--fail-mode). */
enum nemu_fault {
	NF_NONE = 0,
	NF_DENY,	/* an <rpc-error>; an edit's names one of its pairs */
	NF_CLOSE,	/* drop the session before acting */
	NF_CLOSE_AFTER, /* act, then drop it without answering */
	NF_CLOSE_MID,	/* an edit or commit: half of it reaches running, then the drop */
	NF_STALL,	/* never answer again on that session */
	NF_GARBAGE,	/* a reply that is not well-formed XML */
	NF_LIE,		/* the next <get> leaves out a cross-connect */
	NF_HUGE,	/* a 100 MB reply */
	NF_ENDLESS,	/* a reply that never ends */
	NF_LOCKED,	/* another manager holds the datastores' locks */
};
enum nemu_fault nemu_fault_parse(const char *s);

/* A session with one client. */
struct nemu;
struct nemu_client {
	struct nemu *e;
	struct ncrelay *relay;
	int lib_fd;
	struct nc_session *nc; /* NULL until the hello is done */
	uint32_t sid;
	char user[64];
	bool gone;	    /* the session ended: free it */
	uint64_t huge_left; /* bytes of a huge reply still to inject */
	bool endless;	    /* drip a reply that never ends */
	double next_drip;
	bool subscribed;     /* <create-subscription> done: notifications go here */
	uint64_t flood_left; /* notifications of a flood still to inject */
	char *rest;	     /* framed bytes the relay had no room for yet */
	size_t nrest;
	struct nemu_client *next;
};

#define NEMU_PHANTOM 4711 /* the session id of "another manager" (NF_LOCKED) */

struct nemu {
	uint32_t n;		      /* N x N: ingress 1..N, egress N+1..2N on the wire */
	uint32_t *run, *cand;	      /* ingress -> egress 1..N (0: free); running, candidate */
	uint32_t lock_run, lock_cand; /* holding session (0: none) */
	struct {
		bool pending;
		uint32_t *backup; /* running before the confirmed commit */
		double deadline;
		uint32_t sid;
	} confirm;
	uint8_t *status;     /* port 1..2N: 0 ENABLED, 1 DISABLED, 2 FAILED */
	uint8_t *alarmed;    /* port 1..2N: in use and under the power alarm (notified) */
	double power_alarm;  /* --power-alarm: a port in use under this many dBm alarms */
	bool scan_due;	     /* health or running changed: look for alarms to notify */
	double *host_power;  /* ingress 1..N: what the host sends, dBm */
	double *shown_power; /* 1..2N: what the last <get> reported (--stale-power) */
	bool stale;
	const char *health_path;
	struct timespec health_mtime;
	/* what the hello offers */
	const char *revision; /* NULL: no optical-switch module (--no-model) */
	bool candidate, confirmed, rollback, writable_running, notification;
	uint32_t delay_ms;
	const char *hold_path;
	const char *state_path;
	uint64_t commands;
	bool lie_armed;
	enum nemu_fault fault_mode;
	struct emu_common co; /* listen, port file, log, fail-at/count */
	struct ly_ctx *ctx;
	struct nemu_client *clients;
	char *peek; /* NETCONF_PEEK bytes: a client's next message looked at (nemu_plain) */
	/* SSH: who may log in (NULL user: anyone) */
	struct credentials cred;
	bool have_cred;
	void *auth_key; /* ssh_key: the public half of the credentials' key */
	void *host_key; /* ssh_key */
	void *tls_cred; /* --tls-*: --listen is TLS (nctls_server_cred), else SSH */
};

/* ---- the switch (netconf_emu_device.c) ---- */
int nemu_init(struct nemu *e, struct ofc_error *err);
/* Answer one RPC of client c. */
struct nc_server_reply *nemu_rpc(struct nemu *e, struct nemu_client *c, struct lyd_node *rpc);
/* Answer client c's next RPC in place when it is an <edit-config> in its
 * plain form that takes effect whole (1); else 0, and libnetconf2 reads it. */
int nemu_plain(struct nemu *e, struct nemu_client *c);
/* Session sid ended: its locks go, its candidate edits are discarded, its
 * confirmed commit is reverted (RFC 6241 7.5, 8.4.1). */
void nemu_session_end(struct nemu *e, uint32_t sid);
/* Timers (a confirmed commit's) and the faults that stream bytes. */
void nemu_tick(struct nemu *e);
int nemu_load_state(struct nemu *e, struct ofc_error *err);

/* ---- SSH (netconf_emu_ssh.c) ---- */
/* The host key from path (made and saved when the file is missing; NULL:
 * a new one for this run), and the public key of the credentials' private
 * key when they have one. */
int nemu_ssh_keys(struct nemu *e, const char *host_key_path, const char *cred_path,
		  struct ofc_error *err);
/* "[HOST]:PORT TYPE KEY" for a known-hosts file, into buf. */
int nemu_known_hosts_line(const struct nemu *e, const char *host, unsigned port, char *buf,
			  size_t n, struct ofc_error *err);
/* Serve the SSH connection fd in a thread of its own: key exchange, login,
 * the netconf subsystem; then a relay whose libnetconf2 end is handed to
 * the main loop by writing a struct nemu_client * to ready_fd. */
void nemu_ssh_accept(struct nemu *e, int fd, int ready_fd);

/* ---- TLS (netconf_emu_tls.c) ---- */
/* Serve the TLS connection fd as nemu_ssh_accept serves SSH: the
 * handshake (a client certificate the --tls-ca signed) in a thread. */
void nemu_tls_accept(struct nemu *e, int fd, int ready_fd);

#endif
