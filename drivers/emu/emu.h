/* drivers/emu — the device emulators (build/ocs-emu speaks TL1 like an
 * optical circuit switch, build/mrr-emu plays a WDM ring's MRR agents)
 * and what they share: the serving loop, the options every emulator takes
 * (where to listen, the port file, a log, the fault to inject) and the
 * listening socket. Fault injection lives here and in the sim driver, never
 * in the core. */
#ifndef OFC_DRIVERS_EMU_H
#define OFC_DRIVERS_EMU_H

#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include "drivers/drivers.h"

/* ---- the serving loop (emu.c) ------------------------------------------- */

#define EMU_MAX_CLIENTS 32

struct emu_client {
	int fd;			  /* -1: a free slot */
	bool stalled;		  /* a stalled session never answers again */
	bool logged_in;		  /* TL1 */
	uint64_t session;	  /* connections accepted so far, this one included */
	struct strbuf in;	  /* received, not yet a whole message */
	struct timespec received; /* when in's last bytes came (CLOCK_MONOTONIC) */
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
	uint64_t sessions;  /* connections accepted */
	/* Optional: work the emulator puts off (ocs-emu's --save-ms state
	 * save). idle_ms says how long it may still wait (milliseconds; -1:
	 * nothing is put off), flush does it. The loop flushes when that time
	 * passes with no message, when a client is dropped, and on SIGTERM or
	 * SIGINT, after which it ends by that signal as it would without. */
	int (*idle_ms)(void *ctx);
	void (*flush)(void *ctx);
};

/* Serve forever on the listening socket; returns -1 when poll fails. */
int emu_serve(struct emu_server *s, int lfd);

/* ---- what every emulator takes (options.c) ---------------------------------- */

struct emu_common {
	const char *prog;  /* "ocs-emu", for messages */
	const char *usage; /* the whole usage text, printed after a usage error */
	const char *help;  /* what each option does, after the usage for --help */
	const char *listen, *port_file, *log_path;
	uint64_t fail_at, fail_count; /* commands fail_at .. fail_at+fail_count-1 fail */
	enum fault_mode mode;
	FILE *log; /* opened by emu_start, or NULL */
};

/* The long options every emulator has; an emulator lists them in its own
 * table and hands their codes to emu_common_option. */
#define EMU_COMMON_OPTIONS                                                                         \
	{"listen", required_argument, NULL, 'l'}, {"fail-at", required_argument, NULL, 'k'},       \
	    {"fail-count", required_argument, NULL, 'C'},                                          \
	    {"fail-mode", required_argument, NULL, 'M'},                                           \
	    {"port-file", required_argument, NULL, 'p'}, {"log", required_argument, NULL, 'L'},    \
	    {"version", no_argument, NULL, 'V'},                                                   \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

/* "PROG: message" and the usage on stderr; returns 2. */
int emu_usage_error(const struct emu_common *e, const char *fmt, const char *arg);
/* One option code from getopt_long: 0 when it was a shared option and is
 * taken, 1 when it is not a shared one (the emulator's own), 2 after a
 * usage error (printed), -1 after --help or --version (printed; exit 0). */
int emu_common_option(struct emu_common *e, int c, const char *arg);
/* Listen on "IPv4:PORT" (port 0: any free port). The fd, or -1 with err
 * set (OFC_E_USAGE for a bad address). */
int emu_listen(const struct emu_common *e, struct ofc_error *err);
/* Open the log (when asked) and write the port the socket got to the port
 * file (atomically, when asked): the last step before serving, so a test
 * that waits for the file finds the emulator ready. */
int emu_start(struct emu_common *e, int lfd, struct ofc_error *err);

#endif
