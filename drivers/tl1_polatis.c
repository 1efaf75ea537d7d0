/* The Polatis dialect of the tl1 driver (docs/tl1.md, "Polatis"):
 * ENT-PATCH, DLT-PATCH, RTRV-PATCH, egress ports numbered N+1..2N at the
 * wire. Retries are idempotent: ENT-PATCH of a pair that exists is COMPLD,
 * and DLT-PATCH of a free ingress (DENY SNVS) counts as done on a retry. */
#include "drivers/internal.h"

#include <stdio.h>
#include <string.h>

/* ---- the Polatis dialect ------------------------------------------------------ */

static int polatis_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	struct tl1_reply r = {0};
	uint32_t attempt, n = dev->cfg.ports;
	int rc;

	rc = tl1_command(dev, "RTRV-PATCH", (struct tl1_args){":::", ":"}, &r, &attempt, err);
	if (rc == 0 && !r.compld)
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "RTRV-PATCH refused (%s)",
				    r.code);
	for (uint32_t i = 0; rc == 0 && i < r.nlines; i++) {
		uint32_t in, eg;

		if (r.lines[i][0] == '/')
			continue; /* a comment line */
		if (tl1_parse_xconn(r.lines[i], n, &in, &eg) < 0)
			rc = ofc_error_setr(
			    err, OFC_E_RUNTIME, OFC_R_GARBAGE,
			    "RTRV-PATCH: impossible cross-connect '%.40s' on a %ux%u "
			    "switch",
			    r.lines[i], n, n);
		else
			state_add_xconn(out, in, eg);
	}
	tl1_reply_free(&r);
	return rc;
}

/* Op's command: its verb, and its blocks in args (at least 64 bytes). */
static const char *polatis_command(const struct device *dev, const struct op *op, char *args,
				   size_t cap)
{
	if (op->kind == OP_CONNECT) {
		snprintf(args, cap, "::%u,%u:", op->xc.in, dev->cfg.ports + op->xc.out);
		return "ENT-PATCH";
	}
	snprintf(args, cap, "::%u:", op->xc.in);
	return "DLT-PATCH";
}

/* Op's reply judged: 0 when it took effect. On a retry (the command may
 * have been done by an attempt whose answer was lost) DLT-PATCH of a free
 * ingress (SNVS) is done. */
static int polatis_judge(const struct op *op, struct tl1_reply *r, bool retry,
			 struct ofc_error *err)
{
	if (!r->compld && retry && op->kind == OP_DISCONNECT && strcmp(r->code, "SNVS") == 0)
		r->compld = true;
	return r->compld ? 0 : tl1_refused(op, r, err);
}

/* One op with tl1_command's reconnects and retries. */
static int polatis_one(struct device *dev, const struct op *op, bool retry, struct ofc_error *err)
{
	struct tl1_reply r = {0};
	uint32_t attempt;
	char args[64];
	const char *verb = polatis_command(dev, op, args, sizeof(args));
	int rc = tl1_command(dev, verb, (struct tl1_args){args, ":"}, &r, &attempt, err);

	if (rc == 0)
		rc = polatis_judge(op, &r, retry || attempt > 0, err);
	tl1_reply_free(&r);
	return rc;
}

static int polatis_apply_op(struct device *dev, const struct op *op, struct ofc_error *err)
{
	return polatis_one(dev, op, false, err);
}

/* How many commands are on the wire unanswered at most, and sent when
 * half of them are answered, in one write: the switch has the next change
 * as soon as it is done with one, so neither a round trip nor the
 * controller's wake-up sits between two changes, and a controller that
 * the machine schedules late by a few changes' time costs the switch none. */
enum { POLATIS_AHEAD = 32 };

/* Send ops sent.. to fill the window (*sent moves on): -1 when the
 * session is gone or fenced, or the write failed (the session dropped). */
static int polatis_fill(struct device *dev, const struct op_batch *b, uint32_t done, uint32_t *sent,
			uint32_t *ctag, uint32_t *retry_below, struct ofc_error *err)
{
	char args[POLATIS_AHEAD][64];
	const char *verb[POLATIS_AHEAD];
	struct tl1_args a[POLATIS_AHEAD];
	uint32_t n = 0, first;

	while (*sent + n < b->n && *sent + n - done < POLATIS_AHEAD) {
		verb[n] = polatis_command(dev, &b->ops[*sent + n], args[n], sizeof(args[n]));
		a[n] = (struct tl1_args){args[n], ":"};
		n++;
	}
	if (n == 0)
		return 0;
	if (!tl1_open_session(dev))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_CLOSED, "no session");
	if (tl1_send(dev, n, verb, a, &first, err) < 0) {
		if (err->reason != OFC_R_FENCED) {
			/* (they may have reached the switch in part) */
			tl1_drop(dev);
			*retry_below = *sent + n > *retry_below ? *sent + n : *retry_below;
		}
		return -1;
	}
	for (uint32_t k = 0; k < n; k++)
		ctag[(*sent + k) % POLATIS_AHEAD] = first + k;
	*sent += n;
	return 0;
}

/* A batch, up to POLATIS_AHEAD commands ahead of their replies; the
 * switch does them in the order sent. The ops that took effect for
 * certain are the first *done: after a refusal the commands behind it may
 * have been done too (the transaction reads the switch back before it
 * undoes anything). A lost session sends what was unanswered again, one
 * op at a time with tl1_command's reconnects and retries, as retries
 * (idempotent), then goes on ahead. */
static int polatis_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
			 struct ofc_error *err)
{
	uint32_t ctag[POLATIS_AHEAD], sent = *done, retry_below = 0;

	while (*done < b->n) {
		if (sent - *done <= POLATIS_AHEAD / 2 &&
		    polatis_fill(dev, b, *done, &sent, ctag, &retry_below, err) < 0 &&
		    err->reason == OFC_R_FENCED)
			return -1;
		if (sent == *done) { /* nothing on the wire: no session (or it broke) */
			if (dev->cfg.retries == 0 && retry_below > *done)
				return -1;
			ofc_error_clear(err);
			if (polatis_one(dev, &b->ops[*done], *done < retry_below, err) < 0)
				return -1;
			sent = ++*done;
			continue;
		}
		struct tl1_reply r = {0};
		int rc = tl1_await(dev, ctag[*done % POLATIS_AHEAD], &r, err);

		if (rc == 0)
			rc = polatis_judge(&b->ops[*done], &r, *done < retry_below, err);
		tl1_reply_free(&r);
		if (rc == 0) {
			(*done)++;
			continue;
		}
		tl1_drop(dev); /* the replies behind it are not waited for */
		if (err->reason == OFC_R_REFUSED || err->reason == OFC_R_FENCED)
			return -1;
		/* no answer: what was on the wire is sent again, as retries */
		if (dev->cfg.retries == 0)
			return -1;
		dev->stats.retries++;
		retry_below = sent > retry_below ? sent : retry_below;
		sent = *done;
		ofc_error_clear(err);
	}
	return 0;
}

const struct tl1_dialect tl1_polatis = {
    .name = "polatis",
    .read = polatis_read,
    .apply_op = polatis_apply_op,
    .apply = polatis_apply,
};
