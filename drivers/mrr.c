#include "drivers/internal.h"
static int x_open(struct device *dev, struct ofc_error *err) { (void)dev; return ofc_error_set(err, OFC_E_RUNTIME, "TODO"); }
static int x_read(struct device *dev, struct device_state *s, struct ofc_error *err) { (void)dev; (void)s; return ofc_error_set(err, OFC_E_RUNTIME, "TODO"); }
static int x_apply(struct device *dev, const struct op_batch *b, uint32_t *d, struct ofc_error *err) { (void)dev; (void)b; (void)d; return ofc_error_set(err, OFC_E_RUNTIME, "TODO"); }
static void x_close(struct device *dev) { (void)dev; }
const struct driver_ops mrr_driver_ops = { .name = "mrr", .cls = DEV_SWITCH, .open = x_open, .read_state = x_read, .apply = x_apply, .close = x_close };
