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

static int polatis_apply_op(struct device *dev, const struct op *op, struct ofc_error *err)
{
	struct tl1_reply r = {0};
	uint32_t attempt;
	char args[64];
	int rc;

	if (op->kind == OP_CONNECT) {
		snprintf(args, sizeof(args), "::%u,%u:", op->xc.in, dev->cfg.ports + op->xc.out);
		rc = tl1_command(dev, "ENT-PATCH", (struct tl1_args){args, ":"}, &r, &attempt, err);
	} else {
		snprintf(args, sizeof(args), "::%u:", op->xc.in);
		rc = tl1_command(dev, "DLT-PATCH", (struct tl1_args){args, ":"}, &r, &attempt, err);
		if (rc == 0 && !r.compld && attempt > 0 && strcmp(r.code, "SNVS") == 0)
			r.compld = true; /* the first attempt did it */
	}
	if (rc == 0 && !r.compld)
		rc = tl1_refused(op, &r, err);
	tl1_reply_free(&r);
	return rc;
}

const struct tl1_dialect tl1_polatis = {
    .name = "polatis",
    .read = polatis_read,
    .apply_op = polatis_apply_op,
};
