/* build/mrr-emu: the agent of an MRR-based WDM ring, speaking the protobuf
 * frames of proto/mrr.proto (docs/mrr.md) on a TCP port, for tests and
 * demos without hardware. Like ocs-emu it misbehaves on request, from the
 * K-th request it receives (counted from 1 over the process's life).
 *
 *   mrr-emu --listen 127.0.0.1:PORT --nodes N --wavelengths W
 *           [--interfaces I] [--mrrs M] [--delay-us D] [--ring NAME]
 *           [--fail-at K [--fail-count C] [--fail-mode MODE]]
 *           [--port-file FILE] [--log FILE] [--refuse-conflicts]
 *
 * It also watches the light: interface 2f carries fibre f clockwise and
 * interface 2f+1 fibre f counter-clockwise (docs/mrr.md). The light a node
 * adds on (interface, wavelength) travels that way until the first node
 * that drops it; it collides when it passes a node that adds the same
 * wavelength there, and it circles for ever when nobody drops it. Every
 * single MRR change of a tune is checked in order, so a retune that
 * collides midway is caught too: logged as CONFLICT, and refused (nothing
 * changed) with --refuse-conflicts. With --log every tune is logged with
 * its channels and the state after it.
 */
#include "drivers/emu/emu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/mrr.pb-c.h"

struct agent {
	uint32_t nodes, ifaces, wl, mrrs, delay_us;
	const char *ring;
	uint8_t *on;	/* [node][iface][wl][role-1] */
	uint32_t *used; /* MRRs in use per (node, iface) */
	uint64_t requests;
	uint64_t conflicts;
	bool refuse_conflicts;
	bool lie_armed;
	struct emu_common co; /* listen, port file, log, faults */
};

static size_t slot(const struct agent *a, uint32_t node, uint32_t iface, uint32_t wl, uint32_t role)
{
	return (((size_t)node * a->ifaces + iface) * a->wl + wl) * 2 + (role - 1);
}

/* The light of (iface, wl) in state `on`: "" when it is sound, else why.
 * A node dropping the wavelength takes it off; one adding it puts it on
 * after its drop (a relay). */
static bool light_ok(const struct agent *a, const uint8_t *on, uint32_t iface, uint32_t wl,
		     char *why, size_t n)
{
	uint32_t N = a->nodes;
	int step = iface % 2 ? -1 : 1;

	for (uint32_t u = 0; u < N; u++) {
		if (!on[slot(a, u, iface, wl, MRR_ADD)])
			continue;
		uint32_t v = u;

		for (uint32_t hops = 0;; hops++) {
			v = (uint32_t)(((int64_t)v + step + N) % N);
			if (on[slot(a, v, iface, wl, MRR_DROP)])
				break;
			if (v == u || hops > N) {
				snprintf(why, n,
					 "the light node %u adds on interface %u wavelength %u is "
					 "never dropped",
					 u, iface, wl);
				return false;
			}
			if (on[slot(a, v, iface, wl, MRR_ADD)]) {
				snprintf(why, n,
					 "the light node %u adds on interface %u wavelength %u "
					 "collides with node %u's",
					 u, iface, wl, v);
				return false;
			}
		}
	}
	return true;
}

static void log_channels(FILE *f, const char *what, Ofc__V1__MrrChannel **ch, size_t n)
{
	fprintf(f, " %s", what);
	for (size_t i = 0; i < n; i++)
		fprintf(f, " n%u/i%u/w%u/%s", ch[i]->node, ch[i]->interface, ch[i]->wavelength,
			ch[i]->role == OFC__V1__MRR_ROLE__MRR_ROLE_ADD ? "add" : "drop");
}

static void log_state(const struct agent *a)
{
	fprintf(a->co.log, "%llu state", (unsigned long long)a->requests);
	for (uint32_t nd = 0; nd < a->nodes; nd++)
		for (uint32_t i = 0; i < a->ifaces; i++)
			for (uint32_t w = 0; w < a->wl; w++)
				for (uint32_t role = 1; role <= 2; role++)
					if (a->on[slot(a, nd, i, w, role)])
						fprintf(a->co.log, " n%u/i%u/w%u/%s", nd, i, w,
							role == MRR_ADD ? "add" : "drop");
	fprintf(a->co.log, "\n");
	fflush(a->co.log);
}

static void send_reply(struct emu_client *c, Ofc__V1__MrrReply *r)
{
	size_t n = ofc__v1__mrr_reply__get_packed_size(r);
	uint8_t *buf = xmalloc(n + 4);
	frame_len_put(buf, (uint32_t)n);
	ofc__v1__mrr_reply__pack(r, buf + 4);
	(void)!send(c->fd, buf, n + 4, MSG_NOSIGNAL);
	free(buf);
}

static const char *check_channel(const struct agent *a, const Ofc__V1__MrrChannel *ch)
{
	if (ch->node >= a->nodes)
		return "no such node";
	if (ch->interface >= a->ifaces)
		return "no such interface";
	if (ch->wavelength >= a->wl)
		return "no such wavelength";
	if (ch->role != OFC__V1__MRR_ROLE__MRR_ROLE_ADD &&
	    ch->role != OFC__V1__MRR_ROLE__MRR_ROLE_DROP)
		return "role must be add or drop";
	return NULL;
}

static void pause_us(uint32_t us)
{
	struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000L};

	while (us && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void log_request(struct agent *a, const Ofc__V1__MrrRequest *req)
{
	fprintf(a->co.log, "%llu %s", (unsigned long long)a->requests,
		!req							 ? "garbage"
		: req->body_case == OFC__V1__MRR_REQUEST__BODY_HELLO	 ? "hello"
		: req->body_case == OFC__V1__MRR_REQUEST__BODY_GET_STATE ? "get-state"
		: req->body_case == OFC__V1__MRR_REQUEST__BODY_TUNE	 ? "tune"
									 : "unknown");
	if (req && req->body_case == OFC__V1__MRR_REQUEST__BODY_TUNE) {
		log_channels(a->co.log, "off", req->tune->off, req->tune->n_off);
		log_channels(a->co.log, "on", req->tune->on, req->tune->n_on);
	}
	fprintf(a->co.log, "\n");
	fflush(a->co.log);
}

/* An injected fault that answers the request itself (or not at all):
 * true, with *keep false when the connection must close. */
static bool inject_fault(struct agent *a, struct emu_client *c, enum fault_mode fault,
			 Ofc__V1__MrrReply *r, bool *keep)
{
	static const uint8_t junk[] = {0, 0, 0, 6, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff};

	switch (fault) {
	case FAULT_DENY:
		r->status = OFC__V1__MRR_STATUS__MRR_STATUS_REFUSED;
		r->message = "injected fault";
		send_reply(c, r);
		return true;
	case FAULT_CLOSE:
		*keep = false;
		return true;
	case FAULT_STALL:
		c->stalled = true;
		return true;
	case FAULT_GARBAGE:
		(void)!send(c->fd, junk, sizeof(junk), MSG_NOSIGNAL);
		return true;
	case FAULT_LIE:
		a->lie_armed = true;
		return false;
	default:
		return false;
	}
}

static void answer_hello(const struct agent *a, const Ofc__V1__MrrHello *h, Ofc__V1__MrrReply *r)
{
	if (a->ring && h->ring && strcmp(a->ring, h->ring) != 0) {
		r->status = OFC__V1__MRR_STATUS__MRR_STATUS_REFUSED;
		r->message = "this agent drives another ring";
	}
	r->ring = (char *)(a->ring ? a->ring : "");
	r->has_nodes = r->has_interfaces = r->has_wavelengths = true;
	r->has_mrrs_per_interface = r->has_tuning_delay_ns = true;
	r->nodes = a->nodes;
	r->interfaces = a->ifaces;
	r->wavelengths = a->wl;
	r->mrrs_per_interface = a->mrrs;
	r->tuning_delay_ns = (uint64_t)a->delay_us * 1000u;
}

static void channel_set(Ofc__V1__MrrChannel *ch, uint32_t node, uint32_t iface, uint32_t wl,
			Ofc__V1__MrrRole role)
{
	ofc__v1__mrr_channel__init(ch);
	ch->has_node = ch->has_interface = true;
	ch->has_wavelength = ch->has_role = true;
	ch->node = node;
	ch->interface = iface;
	ch->wavelength = wl;
	ch->role = role;
}

/* Every MRR tuned, into the caller's chans and chp (freed after the reply
 * is sent); once armed, a lie too. */
static void answer_state(struct agent *a, Ofc__V1__MrrReply *r, Ofc__V1__MrrChannel **chans,
			 Ofc__V1__MrrChannel ***chp)
{
	size_t total = (size_t)a->nodes * a->ifaces * a->wl * 2, n = 0;
	Ofc__V1__MrrChannel *ch = *chans = xcalloc(total + 2, sizeof(**chans));
	Ofc__V1__MrrChannel **p = *chp = xcalloc(total + 2, sizeof(**chp));

	for (uint32_t nd = 0; nd < a->nodes; nd++)
		for (uint32_t i = 0; i < a->ifaces; i++)
			for (uint32_t w = 0; w < a->wl; w++)
				for (uint32_t role = 1; role <= 2; role++) {
					if (!a->on[slot(a, nd, i, w, role)])
						continue;
					channel_set(&ch[n], nd, i, w, (Ofc__V1__MrrRole)role);
					p[n] = &ch[n];
					n++;
				}
	if (a->lie_armed) {
		/* Report a channel that is not there: node 0 drops the last wavelength. */
		a->lie_armed = false;
		channel_set(&ch[n], 0, 0, a->wl - 1,
			    a->on[slot(a, 0, 0, a->wl - 1, 2)] ? OFC__V1__MRR_ROLE__MRR_ROLE_ADD
							       : OFC__V1__MRR_ROLE__MRR_ROLE_DROP);
		p[n] = &ch[n];
		n++;
	}
	r->n_channels = n;
	r->channels = p;
}

/* Tune on a copy, one MRR at a time, checking the light after each change:
 * a refusal leaves the agent as it was. Returns why it is refused (in
 * reason, or a constant), or NULL when done. */
static const char *tune_copy(struct agent *a, const Ofc__V1__MrrTune *t, char *reason, size_t cap)
{
	size_t cells = (size_t)a->nodes * a->ifaces * a->wl * 2;
	uint8_t *on = xmalloc(cells + 1);
	uint32_t *used = xmalloc(((size_t)a->nodes * a->ifaces + 1) * sizeof(uint32_t));
	char clash[200] = "";
	const char *why = NULL;

	memcpy(on, a->on, cells);
	memcpy(used, a->used, (size_t)a->nodes * a->ifaces * sizeof(uint32_t));
	for (size_t i = 0; i < t->n_off + t->n_on && !why; i++) {
		bool off = i < t->n_off;
		const Ofc__V1__MrrChannel *ch = off ? t->off[i] : t->on[i - t->n_off];
		size_t s = slot(a, ch->node, ch->interface, ch->wavelength, ch->role);
		uint32_t *u = &used[(size_t)ch->node * a->ifaces + ch->interface];

		if (off && on[s]) {
			on[s] = 0;
			(*u)--;
		} else if (!off && !on[s]) {
			if (*u >= a->mrrs) {
				snprintf(
				    reason, cap,
				    "node %u interface %u: every MRR of the interface is in use",
				    ch->node, ch->interface);
				why = reason;
				break;
			}
			on[s] = 1;
			(*u)++;
		}
		if (!clash[0] &&
		    !light_ok(a, on, ch->interface, ch->wavelength, clash, sizeof(clash)))
			a->conflicts++;
	}
	if (clash[0] && a->co.log) {
		fprintf(a->co.log, "%llu CONFLICT %s\n", (unsigned long long)a->requests, clash);
		fflush(a->co.log);
	}
	if (!why && clash[0] && a->refuse_conflicts) {
		snprintf(reason, cap, "lightpaths would collide: %s", clash);
		why = reason;
	}
	if (!why) {
		memcpy(a->on, on, cells);
		memcpy(a->used, used, (size_t)a->nodes * a->ifaces * sizeof(uint32_t));
	}
	free(on);
	free(used);
	return why;
}

static void answer_tune(struct agent *a, const Ofc__V1__MrrTune *t, Ofc__V1__MrrReply *r,
			char *reason, size_t cap)
{
	const char *why = NULL;

	for (size_t i = 0; i < t->n_off && !why; i++)
		why = check_channel(a, t->off[i]);
	for (size_t i = 0; i < t->n_on && !why; i++)
		why = check_channel(a, t->on[i]);
	if (!why && !(why = tune_copy(a, t, reason, cap))) {
		pause_us(a->delay_us);
		r->has_settled_ns = true;
		r->settled_ns = (uint64_t)a->delay_us * 1000u;
		if (a->co.log)
			log_state(a);
	}
	if (why) {
		r->status = OFC__V1__MRR_STATUS__MRR_STATUS_REFUSED;
		r->message = (char *)why;
	}
}

/* Returns false when the connection must close. */
static bool handle(struct agent *a, struct emu_client *c, const uint8_t *data, size_t len)
{
	Ofc__V1__MrrRequest *req = ofc__v1__mrr_request__unpack(NULL, len, data);
	Ofc__V1__MrrReply r = OFC__V1__MRR_REPLY__INIT;
	Ofc__V1__MrrChannel *chans = NULL, **chp = NULL;
	enum fault_mode fault = 0;
	bool keep = true;
	char reason[256];

	a->requests++;
	if (a->co.log)
		log_request(a, req);
	if (a->co.fail_at && a->requests >= a->co.fail_at &&
	    a->requests < a->co.fail_at + a->co.fail_count)
		fault = a->co.mode;
	r.has_status = true;
	r.status = OFC__V1__MRR_STATUS__MRR_STATUS_OK;
	if (req) {
		r.has_seq = true;
		r.seq = req->seq;
	}
	if (inject_fault(a, c, fault, &r, &keep))
		goto out;
	if (!req) {
		r.status = OFC__V1__MRR_STATUS__MRR_STATUS_BAD_REQUEST;
		r.message = "not an MrrRequest";
	} else if (req->body_case == OFC__V1__MRR_REQUEST__BODY_HELLO) {
		answer_hello(a, req->hello, &r);
	} else if (req->body_case == OFC__V1__MRR_REQUEST__BODY_GET_STATE) {
		answer_state(a, &r, &chans, &chp);
	} else if (req->body_case == OFC__V1__MRR_REQUEST__BODY_TUNE) {
		answer_tune(a, req->tune, &r, reason, sizeof(reason));
	} else {
		r.status = OFC__V1__MRR_STATUS__MRR_STATUS_BAD_REQUEST;
		r.message = "empty request";
	}
	if (fault == FAULT_CLOSE_AFTER)
		keep = false;
	else
		send_reply(c, &r);
out:
	free(chans);
	free(chp);
	if (req)
		ofc__v1__mrr_request__free_unpacked(req, NULL);
	return keep;
}

/* Frames: a 4-byte big-endian length, then one MrrRequest. */
static long frame(struct emu_client *c, char **msg, size_t *len)
{
	if (c->in.len < 4)
		return 0;
	*len = frame_len_get((const uint8_t *)c->in.buf);
	if (*len > MRR_MAX_FRAME)
		return -1;
	if (c->in.len < 4 + *len)
		return 0;
	*msg = c->in.buf + 4;
	return (long)(4 + *len);
}

static bool handle_msg(void *ctx, struct emu_client *c, char *msg, size_t len)
{
	return handle(ctx, c, (const uint8_t *)msg, len);
}

static const char usage[] =
    "usage: mrr-emu --listen HOST:PORT --nodes N --wavelengths W [--interfaces I]\n"
    "               [--mrrs M] [--delay-us D] [--ring NAME] [--fail-at K [--fail-count C]\n"
    "               [--fail-mode deny|close|close-after|stall|garbage|lie]]\n"
    "               [--port-file FILE] [--log FILE] [--refuse-conflicts]\n";

static const char help[] =
    "\nThe agent of an MRR-based WDM ring, speaking the protobuf frames of\n"
    "proto/mrr.proto (docs/mrr.md) on TCP, for tests and demos without hardware.\n\n"
    "  --listen HOST:PORT   IPv4 address and port to listen on (port 0: any free one)\n"
    "  --nodes N            ring nodes\n"
    "  --wavelengths W      wavelengths per fibre\n"
    "  --interfaces I       optical interfaces per node (default 1)\n"
    "  --mrrs M             MRRs per interface (default: one per wavelength)\n"
    "  --delay-us D         time an MRR takes to tune, in us (default 25)\n"
    "  --ring NAME          the ring this agent drives (a hello naming another fails)\n"
    "  --fail-at K          misbehave from the K-th request received (counted from 1)\n"
    "  --fail-count C       ... for C requests (default 1)\n"
    "  --fail-mode MODE     deny, close, close-after, stall, garbage or lie\n"
    "  --port-file FILE     write the port listened on (atomically, once listening)\n"
    "  --log FILE           log every request (tunes with their channels and the\n"
    "                       state after them) and every CONFLICT of light\n"
    "  --refuse-conflicts   refuse a tune that would make light collide or circle\n"
    "                       at any point of it (even interfaces carry light\n"
    "                       clockwise, odd ones counter-clockwise)\n"
    "  --help, --version    this text; the version\n";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    EMU_COMMON_OPTIONS,
	    {"nodes", required_argument, NULL, 'n'},
	    {"wavelengths", required_argument, NULL, 'w'},
	    {"interfaces", required_argument, NULL, 'i'},
	    {"mrrs", required_argument, NULL, 'm'},
	    {"delay-us", required_argument, NULL, 'd'},
	    {"ring", required_argument, NULL, 'r'},
	    {"refuse-conflicts", no_argument, NULL, 'X'},
	    {0},
	};
	struct agent a = {.ifaces = 1,
			  .delay_us = 25,
			  .co = {.prog = "mrr-emu",
				 .usage = usage,
				 .help = help,
				 .fail_count = 1,
				 .mode = FAULT_DENY}};
	struct ofc_error err = {0};
	int c, lfd, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		uint32_t *dst = c == 'n'   ? &a.nodes
				: c == 'w' ? &a.wl
				: c == 'i' ? &a.ifaces
				: c == 'm' ? &a.mrrs
				: c == 'd' ? &a.delay_us
					   : NULL;

		if (dst) {
			if (parse_u32(optarg, dst) < 0 || (*dst == 0 && c != 'd') || *dst > 1000000)
				return emu_usage_error(&a.co, "bad number: %s", optarg);
			continue;
		}
		if (c == 'r') {
			a.ring = optarg;
			continue;
		}
		if (c == 'X') {
			a.refuse_conflicts = true;
			continue;
		}
		rc = emu_common_option(&a.co, c, optarg);
		if (rc == 1)
			return emu_usage_error(&a.co, "unknown option or missing value: %s",
					       argv[optind - 1]);
		if (rc)
			return rc < 0 ? 0 : rc;
	}
	if (optind != argc || !a.co.listen || !a.nodes || !a.wl)
		return emu_usage_error(&a.co, "%s",
				       "--listen, --nodes and --wavelengths are required");
	if ((uint64_t)a.nodes * a.ifaces * a.wl > 100000000u)
		return emu_usage_error(&a.co, "%s", "ring too large");
	if (!a.mrrs)
		a.mrrs = a.wl;
	lfd = emu_listen(&a.co, &err);
	if (lfd < 0 || emu_start(&a.co, lfd, &err) < 0) {
		fprintf(stderr, "mrr-emu: %s\n", err.msg);
		return err.code == OFC_E_USAGE ? 2 : 1;
	}
	a.on = xcalloc((size_t)a.nodes * a.ifaces * a.wl * 2 + 1, 1);
	a.used = xcalloc((size_t)a.nodes * a.ifaces + 1, sizeof(uint32_t));
	signal(SIGPIPE, SIG_IGN);
	struct emu_server srv = {
	    .frame = frame, .handle = handle_msg, .ctx = &a, .max_pending = MRR_MAX_FRAME + 4};
	emu_serve(&srv, lfd);
	fprintf(stderr, "mrr-emu: poll: %s\n", strerror(errno));
	return 1;
}
