/* build/netconf-emu's TLS server (RFC 7589) through GnuTLS
 * (drivers/netconf_tls.c): --tls-cert and --tls-key are its certificate,
 * --tls-ca the CA a client's certificate must be signed by; the client's
 * common name is the session's user. Each connection's handshake runs in
 * a thread of its own, as SSH's; the connection then goes to a relay
 * (drivers/netconf_relay.c), so the emulator can cut, mute or feed it.
 */
#include "drivers/emu/internal.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HANDSHAKE_SECONDS 10

struct tls_conn {
	struct nemu *e;
	int fd, ready_fd;
};

static void *handshake(void *arg)
{
	struct tls_conn *c = arg;
	struct nemu_client *cl = xcalloc(1, sizeof(*cl));
	struct nctls *t = NULL;
	struct ofc_error err = {0};
	int one = 1;

	/* small replies: no Nagle (as the driver's side) */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (nctls_accept(c->fd, c->e->tls_cred, now_seconds() + HANDSHAKE_SECONDS, &t, cl->user,
			 sizeof(cl->user), &err) < 0) {
		free(cl); /* the socket went with the handshake */
		free(c);
		return NULL;
	}
	cl->relay = ncrelay_start_tls(t, &cl->lib_fd, &err);
	if (!cl->relay) {
		free(cl);
	} else if (write(c->ready_fd, &cl, sizeof(cl)) != (ssize_t)sizeof(cl)) {
		close(cl->lib_fd);
		ncrelay_stop(cl->relay);
		free(cl);
	}
	/* else cl is the main thread's from the write on (it may be freed
	 * already): not touched here again */
	free(c);
	return NULL;
}

void nemu_tls_accept(struct nemu *e, int fd, int ready_fd)
{
	struct tls_conn *c = xcalloc(1, sizeof(*c));
	pthread_t t;
	pthread_attr_t a;

	c->e = e;
	c->fd = fd;
	c->ready_fd = ready_fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, handshake, c) != 0) {
		close(fd);
		free(c);
	}
	pthread_attr_destroy(&a);
}
