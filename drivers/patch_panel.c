/* The patch-panel driver: a robotic panel (Telescent-style) that takes the
 * same TL1 commands as an OCS but moves one fibre at a time, taking seconds
 * per move. Each command's reply comes when the robot has finished, so the
 * command timeout is stretched by the configured move time; commands are
 * never overlapped (the TL1 session is strictly one command at a time). */
#include "drivers/internal.h"

static int panel_open(struct device *dev, struct ofc_error *err)
{
	return tl1_driver_open(dev, dev->cfg.move_time, err);
}

const struct driver_ops patch_panel_driver_ops = {
    .name = "patch-panel",
    .cls = DEV_SWITCH,
    .open = panel_open,
    .read_state = tl1_driver_read,
    .apply = tl1_driver_apply,
    .close = tl1_driver_close,
};
