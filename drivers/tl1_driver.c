/* The tl1 driver (ops "tl1"): a TL1 session (tl1.c) speaking the dialect
 * the config names, Polatis (tl1_polatis.c, the default, and the patch
 * panel's) or Calient (tl1_calient.c). This file only picks the dialect
 * and calls through its table; it sits above the session and the
 * dialects so that neither knows the other. */
#include "drivers/internal.h"

#include <string.h>

static const struct tl1_dialect *dialect_of(const struct device *dev)
{
	return dev->cfg.dialect && strcmp(dev->cfg.dialect, "calient") == 0 ? &tl1_calient
									    : &tl1_polatis;
}

int tl1_driver_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	return dialect_of(dev)->read(dev, out, err);
}

int tl1_driver_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		     struct ofc_error *err)
{
	const struct tl1_dialect *d = dialect_of(dev);

	for (uint32_t i = 0; i < b->n; i++)
		/* (the ports were checked by the core: device.c's check_ports) */
		if (b->ops[i].kind != OP_CONNECT && b->ops[i].kind != OP_DISCONNECT)
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "a switch cannot do operation %d",
					      (int)b->ops[i].kind);
	if (d->apply)
		return d->apply(dev, b, done, err);
	for (uint32_t i = 0; i < b->n; i++) {
		if (d->apply_op(dev, &b->ops[i], err) < 0)
			return -1;
		(*done)++;
	}
	return 0;
}

static int tl1_open(struct device *dev, struct ofc_error *err)
{
	return tl1_driver_open(dev, 0, err);
}

const struct driver_ops tl1_driver_ops = {
    .name = "tl1",
    .cls = DEV_SWITCH,
    .open = tl1_open,
    .read_state = tl1_driver_read,
    .apply = tl1_driver_apply,
    .close = tl1_driver_close,
};
