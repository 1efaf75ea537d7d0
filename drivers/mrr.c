/* The mrr driver: the agent of an MRR-based WDM ring (TeraRack-style), over
 * TCP with the protobuf frames of proto/mrr.proto (docs/mrr.md). Per node
 * and interface the agent tunes MRRs to add or drop wavelengths and answers
 * once they have settled. Tuning is idempotent at the agent (turning on a
 * channel that is on is OK), so a request retried after a lost connection
 * is safe. */
#include "drivers/internal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/mrr.pb-c.h"

struct mrr_priv {
	int fd;
	uint64_t seq;
	uint8_t *buf;
	size_t cap;
};

static void drop(struct mrr_priv *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* One request, one reply, on the current connection. *reply is unpacked
 * (caller frees with ofc__v1__mrr_reply__free_unpacked). */
static int exchange(struct device *dev, Ofc__V1__MrrRequest *req, Ofc__V1__MrrReply **reply,
		    struct ofc_error *err)
{
	struct mrr_priv *p = dev->priv;
	double deadline = now_seconds() + dev->cfg.timeout;
	size_t n, len = 0;
	uint8_t *out;
	int rc;

	if (device_fence(dev, &deadline, err) < 0) /* fenced: send nothing */
		return -1;
	req->has_seq = true;
	req->seq = ++p->seq;
	n = ofc__v1__mrr_request__get_packed_size(req);
	out = xmalloc(n + 1);
	n = ofc__v1__mrr_request__pack(req, out);
	dev->stats.commands++;
	rc = frame_send(p->fd, out, n, MRR_MAX_FRAME, deadline, err);
	free(out);
	if (rc < 0 || frame_recv(p->fd, &p->buf, &p->cap, &len, MRR_MAX_FRAME, deadline, err) < 0) {
		if (err->reason == OFC_R_TOO_BIG)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					      "garbage reply: frame length %zu is over the 1 MiB "
					      "limit",
					      len);
		return -1;
	}
	return mrr_take_reply(p->buf, len, p->seq, reply, err);
}

int mrr_take_reply(const uint8_t *buf, size_t len, uint64_t seq, Ofc__V1__MrrReply **reply,
		   struct ofc_error *err)
{
	*reply = ofc__v1__mrr_reply__unpack(NULL, len, buf);
	if (!*reply)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
				      "garbage reply: not an MrrReply message");
	if (!(*reply)->has_seq || (*reply)->seq != seq) {
		ofc__v1__mrr_reply__free_unpacked(*reply, NULL);
		*reply = NULL;
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "reply out of sequence");
	}
	return 0;
}

int mrr_reply_state(const Ofc__V1__MrrReply *r, const struct device_cfg *cfg,
		    struct device_state *out, struct ofc_error *err)
{
	if (r->status != OFC__V1__MRR_STATUS__MRR_STATUS_OK)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "agent refused to report its state: %.200s",
				      r->message ? r->message : "");
	for (size_t i = 0; i < r->n_channels; i++) {
		const Ofc__V1__MrrChannel *c = r->channels[i];

		if (c->node >= cfg->ring_nodes || c->interface >= cfg->interfaces ||
		    c->wavelength >= cfg->wavelengths ||
		    (c->role != OFC__V1__MRR_ROLE__MRR_ROLE_ADD &&
		     c->role != OFC__V1__MRR_ROLE__MRR_ROLE_DROP))
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					      "agent reports an impossible channel (node %u, "
					      "interface %u, wavelength %u)",
					      c->node, c->interface, c->wavelength);
		state_add_chan(out, (struct mrr_chan){c->node, c->interface, c->wavelength,
						      (uint32_t)c->role});
	}
	return 0;
}

static int hello(struct device *dev, struct ofc_error *err)
{
	struct mrr_priv *p = dev->priv;
	Ofc__V1__MrrRequest req = OFC__V1__MRR_REQUEST__INIT;
	Ofc__V1__MrrHello h = OFC__V1__MRR_HELLO__INIT;
	Ofc__V1__MrrReply *r = NULL;
	int rc;

	p->fd = tcp_connect(dev->cfg.address, dev->cfg.timeout, err);
	if (p->fd < 0)
		return -1;
	h.ring = (char *)dev->cfg.name;
	req.body_case = OFC__V1__MRR_REQUEST__BODY_HELLO;
	req.hello = &h;
	rc = exchange(dev, &req, &r, err);
	if (rc == 0 && r->status != OFC__V1__MRR_STATUS__MRR_STATUS_OK)
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_AUTH, "agent at %s refused hello: %s",
				    dev->cfg.address, r->message ? r->message : "no reason given");
	else if (rc == 0 &&
		 (r->nodes != dev->cfg.ring_nodes || r->wavelengths != dev->cfg.wavelengths ||
		  r->interfaces != dev->cfg.interfaces))
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_IDENTITY,
				    "agent at %s drives %u nodes x %u interfaces x %u wavelengths; "
				    "the config says %u x %u x %u",
				    dev->cfg.address, r->nodes, r->interfaces, r->wavelengths,
				    dev->cfg.ring_nodes, dev->cfg.interfaces, dev->cfg.wavelengths);
	if (r)
		ofc__v1__mrr_reply__free_unpacked(r, NULL);
	if (rc < 0)
		drop(p);
	return rc;
}

/* A refused hello, or an agent that drives another ring than the config
 * describes: reconnecting cannot help. */
static bool final(const struct ofc_error *err)
{
	return err->reason == OFC_R_AUTH || err->reason == OFC_R_IDENTITY ||
	       err->reason == OFC_R_FENCED;
}

/* With reconnects, as the tl1 driver does; a refused hello is final. */
static int request(struct device *dev, Ofc__V1__MrrRequest *req, Ofc__V1__MrrReply **reply,
		   struct ofc_error *err)
{
	struct mrr_priv *p = dev->priv;
	struct ofc_error last = {0};

	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		if (a)
			dev->stats.retries++;
		if (p->fd < 0 && hello(dev, &last) < 0) {
			if (final(&last))
				break;
			continue;
		}
		if (exchange(dev, req, reply, &last) == 0)
			return 0;
		drop(p);
		if (final(&last))
			break;
	}
	*err = last;
	return -1;
}

static void mrr_close(struct device *dev);

static int mrr_open(struct device *dev, struct ofc_error *err)
{
	struct mrr_priv *p = xcalloc(1, sizeof(*p));

	p->fd = -1;
	dev->priv = p;
	for (uint32_t a = 0; a <= dev->cfg.retries; a++) {
		if (hello(dev, err) == 0)
			return 0;
		if (final(err))
			break;
	}
	mrr_close(dev);
	return -1;
}

static int mrr_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	Ofc__V1__MrrRequest req = OFC__V1__MRR_REQUEST__INIT;
	Ofc__V1__MrrGetState g = OFC__V1__MRR_GET_STATE__INIT;
	Ofc__V1__MrrReply *r = NULL;
	int rc;

	req.body_case = OFC__V1__MRR_REQUEST__BODY_GET_STATE;
	req.get_state = &g;
	if (request(dev, &req, &r, err) < 0)
		return -1;
	rc = mrr_reply_state(r, &dev->cfg, out, err);
	ofc__v1__mrr_reply__free_unpacked(r, NULL);
	return rc;
}

static int mrr_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		     struct ofc_error *err)
{
	for (uint32_t i = 0; i < b->n; i++) {
		const struct op *op = &b->ops[i];
		Ofc__V1__MrrRequest req = OFC__V1__MRR_REQUEST__INIT;
		Ofc__V1__MrrTune t = OFC__V1__MRR_TUNE__INIT;
		Ofc__V1__MrrChannel ch = OFC__V1__MRR_CHANNEL__INIT, *chp = &ch;
		Ofc__V1__MrrReply *r = NULL;
		char what[96];

		if (op->kind != OP_TUNE_ON && op->kind != OP_TUNE_OFF)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "a ring cannot do operation %d", (int)op->kind);
		ch.has_node = ch.has_interface = ch.has_wavelength = ch.has_role = true;
		ch.node = op->ch.node;
		ch.interface = op->ch.iface;
		ch.wavelength = op->ch.wl;
		ch.role = (Ofc__V1__MrrRole)op->ch.role;
		if (op->kind == OP_TUNE_ON) {
			t.n_on = 1;
			t.on = &chp;
		} else {
			t.n_off = 1;
			t.off = &chp;
		}
		req.body_case = OFC__V1__MRR_REQUEST__BODY_TUNE;
		req.tune = &t;
		if (request(dev, &req, &r, err) < 0)
			return -1;
		if (r->status != OFC__V1__MRR_STATUS__MRR_STATUS_OK) {
			op_describe(op, what, sizeof(what));
			ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "agent refused %s: %s",
				       what, r->message ? r->message : "no reason given");
			ofc__v1__mrr_reply__free_unpacked(r, NULL);
			return -1;
		}
		ofc__v1__mrr_reply__free_unpacked(r, NULL);
		(*done)++;
	}
	return 0;
}

/* A whole retune in one MrrTune: the agent takes the `off` channels off,
 * then tunes the `on` ones, in order, and acknowledges once they have
 * settled. The ack is awaited until the request's absolute deadline
 * (exchange()); a refusal names the agent's reason, which says the
 * channel. */
static int mrr_apply_batch(struct device *dev, const struct op_batch *b, struct ofc_error *err)
{
	Ofc__V1__MrrRequest req = OFC__V1__MRR_REQUEST__INIT;
	Ofc__V1__MrrTune t = OFC__V1__MRR_TUNE__INIT;
	Ofc__V1__MrrChannel *ch = xcalloc((size_t)b->n + 1, sizeof(*ch));
	Ofc__V1__MrrChannel **on = xcalloc((size_t)b->n + 1, sizeof(*on));
	Ofc__V1__MrrChannel **off = xcalloc((size_t)b->n + 1, sizeof(*off));
	Ofc__V1__MrrReply *r = NULL;
	int rc = 0;

	for (uint32_t i = 0; i < b->n && rc == 0; i++) {
		const struct op *op = &b->ops[i];

		if (op->kind != OP_TUNE_ON && op->kind != OP_TUNE_OFF) {
			rc = ofc_error_set(err, OFC_E_RUNTIME, "a ring cannot do operation %d",
					   (int)op->kind);
			break;
		}
		ofc__v1__mrr_channel__init(&ch[i]);
		ch[i].has_node = ch[i].has_interface = ch[i].has_wavelength = ch[i].has_role = true;
		ch[i].node = op->ch.node;
		ch[i].interface = op->ch.iface;
		ch[i].wavelength = op->ch.wl;
		ch[i].role = (Ofc__V1__MrrRole)op->ch.role;
		if (op->kind == OP_TUNE_ON)
			on[t.n_on++] = &ch[i];
		else
			off[t.n_off++] = &ch[i];
	}
	t.on = on;
	t.off = off;
	req.body_case = OFC__V1__MRR_REQUEST__BODY_TUNE;
	req.tune = &t;
	if (rc == 0 && request(dev, &req, &r, err) < 0)
		rc = -1;
	if (rc == 0 && r->status != OFC__V1__MRR_STATUS__MRR_STATUS_OK)
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				    "agent refused a retune of %u MRRs: %s", b->n,
				    r->message ? r->message : "no reason given");
	if (r)
		ofc__v1__mrr_reply__free_unpacked(r, NULL);
	free(ch);
	free(on);
	free(off);
	return rc;
}

static void mrr_close(struct device *dev)
{
	struct mrr_priv *p = dev->priv;

	if (!p)
		return;
	drop(p);
	free(p->buf);
	free(p);
	dev->priv = NULL;
}

const struct driver_ops mrr_driver_ops = {
    .name = "mrr",
    .cls = DEV_RING,
    .open = mrr_open,
    .read_state = mrr_read,
    .apply = mrr_apply,
    .apply_batch = mrr_apply_batch,
    .close = mrr_close,
};
