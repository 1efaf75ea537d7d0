/* A client of ofcd's control socket (docs/control.md): one connection, frames
 * of a 4-byte big-endian length and one protobuf message, blocking, with a
 * timeout per send and receive. The doors that ask ofcd take it from here:
 * `ofc --socket`, the Slurm hooks through the CLI, the tests and the
 * benchmarks; it knows nothing of the daemon's insides. */
#ifndef OFC_CLIENT_H
#define OFC_CLIENT_H

#include "util/util.h"

#include <stdint.h>

/* Where the packaged unit listens and clients look when told nothing else
 * (ofc's daemon-only commands, the Python client). */
#define OFCD_SOCKET_DEFAULT "/run/ofc/ofcd.sock"

/* Requests and responses are ofc.v1.Request and ofc.v1.Response (include
 * "proto/control.pb-c.h" to build them). */
struct Ofc__V1__Request;
struct Ofc__V1__Response;

struct ofcd_client {
	int fd;
	uint32_t max_frame; /* largest response accepted */
	double timeout;	    /* seconds per send or receive; 0: wait forever */
	char path[108];
};

int ofcd_connect(struct ofcd_client *c, const char *path, struct ofc_error *err);
int ofcd_send(struct ofcd_client *c, const struct Ofc__V1__Request *req, struct ofc_error *err);
/* The next response; free it with ofc__v1__response__free_unpacked. */
int ofcd_recv(struct ofcd_client *c, struct Ofc__V1__Response **resp, struct ofc_error *err);
/* Send req, then receive until the response with req's id. */
int ofcd_call(struct ofcd_client *c, const struct Ofc__V1__Request *req,
	      struct Ofc__V1__Response **resp, struct ofc_error *err);
void ofcd_disconnect(struct ofcd_client *c);

#endif
