/* build/mrr-emu: the agent of an MRR-based WDM ring, speaking the protobuf
 * frames of proto/mrr.proto (docs/mrr.md) on a TCP port, for tests and
 * demos without hardware. Like ocs-emu it misbehaves on request, from the
 * K-th request it receives (counted from 1 over the process's life).
 *
 *   mrr-emu --listen 127.0.0.1:PORT --nodes N --wavelengths W
 *           [--interfaces I] [--mrrs M] [--delay-us D] [--ring NAME]
 *           [--fail-at K [--fail-count C] [--fail-mode MODE]]
 *           [--port-file FILE] [--log FILE]
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
	bool lie_armed;
	struct emu_common co; /* listen, port file, log, faults */
};

static size_t slot(const struct agent *a, uint32_t node, uint32_t iface, uint32_t wl, uint32_t role)
{
	return (((size_t)node * a->ifaces + iface) * a->wl + wl) * 2 + (role - 1);
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

/* Returns false when the connection must close. */
static bool handle(struct agent *a, struct emu_client *c, const uint8_t *data, size_t len)
{
	Ofc__V1__MrrRequest *req = ofc__v1__mrr_request__unpack(NULL, len, data);
	Ofc__V1__MrrReply r = OFC__V1__MRR_REPLY__INIT;
	Ofc__V1__MrrChannel *chans = NULL, **chp = NULL;
	enum fault_mode fault = 0;
	bool keep = true;

	a->requests++;
	if (a->co.log) {
		fprintf(a->co.log, "%llu %s\n", (unsigned long long)a->requests,
			!req							 ? "garbage"
			: req->body_case == OFC__V1__MRR_REQUEST__BODY_HELLO	 ? "hello"
			: req->body_case == OFC__V1__MRR_REQUEST__BODY_GET_STATE ? "get-state"
			: req->body_case == OFC__V1__MRR_REQUEST__BODY_TUNE	 ? "tune"
										 : "unknown");
		fflush(a->co.log);
	}
	if (a->co.fail_at && a->requests >= a->co.fail_at &&
	    a->requests < a->co.fail_at + a->co.fail_count)
		fault = a->co.mode;
	r.has_status = true;
	r.status = OFC__V1__MRR_STATUS__MRR_STATUS_OK;
	if (req) {
		r.has_seq = true;
		r.seq = req->seq;
	}
	switch (fault) {
	case FAULT_DENY:
		r.status = OFC__V1__MRR_STATUS__MRR_STATUS_REFUSED;
		r.message = "injected fault";
		send_reply(c, &r);
		goto out;
	case FAULT_CLOSE:
		keep = false;
		goto out;
	case FAULT_STALL:
		c->stalled = true;
		goto out;
	case FAULT_GARBAGE: {
		static const uint8_t junk[] = {0, 0, 0, 6, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff};
		(void)!send(c->fd, junk, sizeof(junk), MSG_NOSIGNAL);
		goto out;
	}
	case FAULT_LIE:
		a->lie_armed = true;
		break;
	default:
		break;
	}
	if (!req) {
		r.status = OFC__V1__MRR_STATUS__MRR_STATUS_BAD_REQUEST;
		r.message = "not an MrrRequest";
	} else if (req->body_case == OFC__V1__MRR_REQUEST__BODY_HELLO) {
		if (a->ring && req->hello->ring && strcmp(a->ring, req->hello->ring) != 0) {
			r.status = OFC__V1__MRR_STATUS__MRR_STATUS_REFUSED;
			r.message = "this agent drives another ring";
		}
		r.ring = (char *)(a->ring ? a->ring : "");
		r.has_nodes = r.has_interfaces = r.has_wavelengths = true;
		r.has_mrrs_per_interface = r.has_tuning_delay_ns = true;
		r.nodes = a->nodes;
		r.interfaces = a->ifaces;
		r.wavelengths = a->wl;
		r.mrrs_per_interface = a->mrrs;
		r.tuning_delay_ns = (uint64_t)a->delay_us * 1000u;
	} else if (req->body_case == OFC__V1__MRR_REQUEST__BODY_GET_STATE) {
		size_t total = (size_t)a->nodes * a->ifaces * a->wl * 2, n = 0;

		chans = xcalloc(total + 2, sizeof(*chans));
		chp = xcalloc(total + 2, sizeof(*chp));
		for (uint32_t nd = 0; nd < a->nodes; nd++)
			for (uint32_t i = 0; i < a->ifaces; i++)
				for (uint32_t w = 0; w < a->wl; w++)
					for (uint32_t role = 1; role <= 2; role++) {
						if (!a->on[slot(a, nd, i, w, role)])
							continue;
						Ofc__V1__MrrChannel *ch = &chans[n];

						ofc__v1__mrr_channel__init(ch);
						ch->has_node = ch->has_interface = true;
						ch->has_wavelength = ch->has_role = true;
						ch->node = nd;
						ch->interface = i;
						ch->wavelength = w;
						ch->role = (Ofc__V1__MrrRole)role;
						chp[n] = &chans[n];
						n++;
					}
		if (a->lie_armed) {
			/* Report a channel that is not there: node 0 drops the last wavelength. */
			a->lie_armed = false;
			ofc__v1__mrr_channel__init(&chans[n]);
			chans[n].has_node = chans[n].has_interface = true;
			chans[n].has_wavelength = chans[n].has_role = true;
			chans[n].wavelength = a->wl - 1;
			chans[n].role = a->on[slot(a, 0, 0, a->wl - 1, 2)]
					    ? OFC__V1__MRR_ROLE__MRR_ROLE_ADD
					    : OFC__V1__MRR_ROLE__MRR_ROLE_DROP;
			chp[n] = &chans[n];
			n++;
		}
		r.n_channels = n;
		r.channels = chp;
	} else if (req->body_case == OFC__V1__MRR_REQUEST__BODY_TUNE) {
		const Ofc__V1__MrrTune *t = req->tune;
		const char *why = NULL;

		for (size_t i = 0; i < t->n_off && !why; i++)
			why = check_channel(a, t->off[i]);
		for (size_t i = 0; i < t->n_on && !why; i++)
			why = check_channel(a, t->on[i]);
		if (!why) {
			for (size_t i = 0; i < t->n_off; i++) {
				const Ofc__V1__MrrChannel *ch = t->off[i];
				size_t s =
				    slot(a, ch->node, ch->interface, ch->wavelength, ch->role);

				if (a->on[s]) {
					a->on[s] = 0;
					a->used[(size_t)ch->node * a->ifaces + ch->interface]--;
				}
			}
			for (size_t i = 0; i < t->n_on && !why; i++) {
				const Ofc__V1__MrrChannel *ch = t->on[i];
				size_t s =
				    slot(a, ch->node, ch->interface, ch->wavelength, ch->role);
				uint32_t *u =
				    &a->used[(size_t)ch->node * a->ifaces + ch->interface];

				if (a->on[s])
					continue;
				if (*u >= a->mrrs) {
					why = "every MRR of the interface is in use";
					break;
				}
				a->on[s] = 1;
				(*u)++;
			}
			pause_us(a->delay_us);
			r.has_settled_ns = true;
			r.settled_ns = (uint64_t)a->delay_us * 1000u;
		}
		if (why) {
			r.status = OFC__V1__MRR_STATUS__MRR_STATUS_REFUSED;
			r.message = (char *)why;
		}
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
    "               [--port-file FILE] [--log FILE]\n";

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
    "  --log FILE           log every request and reply\n"
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
