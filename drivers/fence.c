/* The controller's fence, asked by the device wrappers and by
 * every driver before a command goes out: its own file, below both, so
 * the registry (device.c) and the drivers it names do not call each other
 * in a circle. */
#include "drivers/internal.h"

int device_fence(const struct device *dev, double *deadline, struct ofc_error *err)
{
	double until;

	if (!dev->cfg.fence)
		return 0;
	until = dev->cfg.fence(dev->cfg.fence_ctx);
	if (until <= 0 || now_seconds() >= until)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_FENCED,
				      "no command sent: this controller may not drive the devices "
				      "now (it does not lead, or cannot confirm its lease)");
	if (deadline && *deadline > until)
		*deadline = until;
	return 0;
}
