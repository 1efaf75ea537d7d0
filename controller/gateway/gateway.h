/* controller/gateway — ofc-gateway, the network API.
 *
 * The process that parses what strangers send: it terminates TLS
 * (libmicrohttpd over GnuTLS), requires a client certificate the
 * configured CA signed, unexpired and not on the CRL, maps its identity to
 * a role with the policy file, and forwards each request to ofcd's gateway
 * socket as an ofc.v1.Request carrying that principal; ofcd decides what
 * the principal may do. It holds no device credentials and no device
 * connection (docs/ARCHITECTURE.md, "Seams between the network API and the
 * cluster"; routes in docs/control.md, "The network API"). Nothing here
 * prints: lines go to opts.log. */
#ifndef OFC_CONTROLLER_GATEWAY_H
#define OFC_CONTROLLER_GATEWAY_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

#define GW_MAX_CONNECTIONS_DEFAULT 1024
/* An address's share of the connections: a quarter, so that one machine
 * (a flood of bare connections, a runaway script) leaves three quarters to
 * the others, and a Slurm controller starting many jobs at once still has
 * hundreds. */
#define GW_PER_ADDRESS_DEFAULT(max) ((max) / 4 ? (max) / 4 : 1)
#define GW_MAX_BODY_DEFAULT	    (1u << 20)
#define GW_READ_TIMEOUT_DEFAULT	    10.0  /* handshake + headers + body */
#define GW_IDLE_TIMEOUT_DEFAULT	    30.0  /* no byte either way */
#define GW_REQUEST_TIMEOUT_DEFAULT  600.0 /* ofcd's answer */
#define GW_UPSTREAM_DEFAULT	    32	  /* connections to ofcd at once */
/* Streams (watches, streamed schedules) to ofcd at once, apart from the
 * upstream's connections (with them, within ofcd's 64 a user); of one
 * principal; from one address. */
#define GW_STREAMS_DEFAULT		 24
#define GW_STREAMS_PER_PRINCIPAL_DEFAULT 4
#define GW_STREAMS_PER_ADDRESS_DEFAULT	 8

struct gw_opts {
	const char *listen;	 /* HOST:PORT (port 0: any; see port_file) */
	const char *port_file;	 /* the port bound, written once serving */
	const char *cert, *key;	 /* the server's certificate chain and key (PEM) */
	const char *ca;		 /* clients' certificates must chain to these (PEM) */
	const char *crl;	 /* NULL: none */
	const char *policy;	 /* identities to roles */
	const char *ofcd_socket; /* ofcd's --gateway-socket */
	uint32_t max_connections;
	uint32_t max_per_address; /* 0: GW_PER_ADDRESS_DEFAULT(max_connections) */
	uint32_t max_body;
	double read_timeout, idle_timeout, request_timeout;
	uint32_t upstream;						  /* connections to ofcd */
	uint32_t max_streams, streams_per_principal, streams_per_address; /* 0: defaults */
	const char *ui_dir;				    /* the page's files (NULL: no page) */
	void (*log)(void *ctx, int level, const char *msg); /* syslog levels */
	void *log_ctx;
};

struct gateway;

/* Read the certificates, the CRL and the policy, bind the listener.
 * OFC_E_INPUT for a bad file (FILE:LINE for the policy), OFC_E_USAGE for
 * bad options, OFC_E_RUNTIME otherwise. */
int gw_open(const struct gw_opts *o, struct gateway **out, struct ofc_error *err);
/* The server runs in its own threads from gw_open on; gw_run waits until
 * gw_stop (async-signal-safe). gw_reload reads the CA, the CRL and the
 * policy again and swaps them in (a bad file: logged, the old ones stay);
 * call it from a thread, not a signal handler. */
int gw_run(struct gateway *g, struct ofc_error *err);
void gw_stop(struct gateway *g);
void gw_reload(struct gateway *g);
void gw_close(struct gateway *g);

/* ---- the policy file (policy.c) ----------------------------------------
 * Lines `IDENTITY ROLE [PARTITION[,PARTITION]...]`, '#' comments:
 * IDENTITY is cn:NAME (the subject's common name), dns:NAME, uri:NAME or
 * email:NAME (a subject alternative name); ROLE admin, read-only,
 * tenant (which takes one or more partitions) or host (a host's agent,
 * ofc-hostd, which takes the one fabric host it speaks for, kept as the
 * entry's only partition). The first line naming any of a certificate's
 * names decides. */
enum gw_role { GW_ROLE_ADMIN = 1, GW_ROLE_READ_ONLY, GW_ROLE_TENANT, GW_ROLE_HOST };

struct gw_policy_entry {
	char *identity;
	enum gw_role role;
	char **partitions;
	uint32_t npartitions;
};

struct gw_policy {
	struct gw_policy_entry *e;
	uint32_t n;
};

#define GW_POLICY_MAX_ENTRIES 10000
int gw_policy_load(const char *path, struct gw_policy **out, struct ofc_error *err);
int gw_policy_parse(const char *name, const char *text, size_t len, struct gw_policy **out,
		    struct ofc_error *err);
/* The entry for a certificate with these names ("cn:..", "dns:..."), or NULL. */
const struct gw_policy_entry *gw_policy_match(const struct gw_policy *p, char *const *names,
					      uint32_t n);
void gw_policy_free(struct gw_policy *p);
const char *gw_role_name(enum gw_role r);

#endif
