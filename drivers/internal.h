/* Private to drivers/: the driver ops tables, TCP helpers and the TL1
 * client the tl1 and patch-panel drivers share. */
#ifndef OFC_DRIVERS_INTERNAL_H
#define OFC_DRIVERS_INTERNAL_H

#include "drivers/drivers.h"

extern const struct driver_ops tl1_driver_ops;
extern const struct driver_ops patch_panel_driver_ops;
extern const struct driver_ops mrr_driver_ops;
extern const struct driver_ops netlink_driver_ops;
extern const struct driver_ops sim_driver_ops;

/* "host:port" or "[v6]:port" -> a connected TCP socket, within timeout
 * seconds. Returns the fd, or -1 with err set (OFC_E_RUNTIME). */
int tcp_connect(const char *address, double timeout, struct ofc_error *err);
/* Listen on "IPv4:PORT" (port 0: any free port) for the emulators and
 * write the port to port_file (atomically) when given. Returns the fd. */
int tcp_listen(const char *address, const char *port_file, struct ofc_error *err);
/* The emulators' server loop (drivers/emu.c). */
#define EMU_MAX_CLIENTS 32

struct emu_client {
	int fd;		  /* -1: a free slot */
	bool stalled;	  /* a stalled session never answers again */
	bool logged_in;	  /* TL1 */
	struct strbuf in; /* received, not yet a whole message */
};

struct emu_server {
	struct emu_client clients[EMU_MAX_CLIENTS];
	/* The next whole message at the front of c->in: point *msg at it and
	 * return how many bytes it takes; 0 when it is not all there yet; -1
	 * when the client broke the framing (it is dropped). */
	long (*frame)(struct emu_client *c, char **msg, size_t *len);
	/* Answer one message; false drops the client. */
	bool (*handle)(void *ctx, struct emu_client *c, char *msg, size_t len);
	void *ctx;
	size_t max_pending; /* more unframed bytes than this drop the client */
};

/* Serve forever on the listening socket; returns -1 when poll fails. */
int emu_serve(struct emu_server *s, int lfd);

/* Write all of buf before the deadline (now_seconds() clock). */
int fd_write_all(int fd, const void *buf, size_t n, double deadline, struct ofc_error *err);
/* Read at most n bytes, waiting until the deadline. Returns bytes read,
 * 0 at end of stream, -1 with err set on timeout or error. */
long fd_read_some(int fd, void *buf, size_t n, double deadline, struct ofc_error *err);

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
/* A RTRV-PATCH payload line "IN,EGRESS" on a ports x ports switch, egress
 * numbered ports+1..2*ports: 0 with *in and *out (1-based), -1 otherwise. */
int tl1_parse_xconn(const char *line, uint32_t ports, uint32_t *in, uint32_t *out);
int tl1_driver_read(struct device *dev, struct device_state *out, struct ofc_error *err);
int tl1_driver_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		     struct ofc_error *err);
void tl1_driver_close(struct device *dev);

/* MRR agent frames (docs/mrr.md): a 4-byte big-endian length, then one
 * protobuf message of at most MRR_MAX_FRAME bytes. */
#define MRR_MAX_FRAME (1u << 20)
int mrr_frame_send(int fd, const void *msg, size_t len, double deadline, struct ofc_error *err);
/* Reads one frame into *buf (grown as needed); *len its size. Returns 0, or
 * -1 with err set (timeout, closed, oversized). */
int mrr_frame_recv(int fd, uint8_t **buf, size_t *cap, size_t *len, double deadline,
		   struct ofc_error *err);

#endif
