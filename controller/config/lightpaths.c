/* A ring's `lightpaths` checked against the ring (validation): both ends are
 * nodes of it, wavelength and interface exist, and the MRR channels they
 * need (ring_target) tune no MRR twice and fit the MRRs an interface has.
 * Whether lightpaths share a fibre segment is routing and wavelength
 * assignment, checked in rwa/, not here. */
#include "controller/config/internal.h"
#include "drivers/drivers.h"

#include <stdlib.h>
#include <string.h>

static int lp_error(struct ofc_error *err, const struct fabric *f, const struct lightpath_cfg *lp,
		    const char *fmt, ...) OFC_PRINTF(4, 5);
static int lp_error(struct ofc_error *err, const struct fabric *f, const struct lightpath_cfg *lp,
		    const char *fmt, ...)
{
	va_list ap;

	ofc_error_at(err, OFC_E_INPUT, f->file, lp->loc.line ? lp->loc.line : 1,
		     lp->loc.col ? lp->loc.col : 1, "%s", "");
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int ring_position(const struct ring *r, int host)
{
	for (uint32_t k = 0; k < r->nmembers; k++)
		if ((int)r->members[k] == host)
			return (int)k;
	return -1;
}

static int cmp_chan(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct mrr_chan)) == 0 ? 0 : 1;
}

int ring_check_lightpaths(struct fabric *f, uint32_t ri, struct ofc_error *err)
{
	struct ring *r = &f->rings[ri];
	struct device_state s;
	int rc = 0;

	for (uint32_t k = 0; k < r->nlightpaths; k++) {
		struct lightpath_cfg *lp = &r->lightpaths[k];
		int a = ring_position(r, fabric_find_host(f, lp->from));
		int b = ring_position(r, fabric_find_host(f, lp->to));

		if (a < 0)
			return lp_error(err, f, lp, "ring '%s': '%s' is not a node of the ring",
					r->name, lp->from);
		if (b < 0)
			return lp_error(err, f, lp, "ring '%s': '%s' is not a node of the ring",
					r->name, lp->to);
		if (a == b)
			return lp_error(err, f, lp, "ring '%s': a lightpath from '%s' to itself",
					r->name, lp->from);
		if (lp->wavelength >= r->wavelengths)
			return lp_error(err, f, lp,
					"ring '%s' has wavelengths 0..%u; there is no %u", r->name,
					r->wavelengths - 1, lp->wavelength);
		if (lp->interface >= r->interfaces)
			return lp_error(err, f, lp,
					"ring '%s' has interfaces 0..%u per node; there is no %u",
					r->name, r->interfaces - 1, lp->interface);
		lp->src = (uint32_t)a;
		lp->dst = (uint32_t)b;
	}
	/* No MRR is tuned twice, and no interface needs more MRRs than it has. */
	ring_target(f, ri, &s);
	for (uint32_t i = 0; i < s.nch && rc == 0; i++) {
		uint32_t run = 1;

		if (i && cmp_chan(&s.ch[i - 1], &s.ch[i]) == 0)
			rc = ofc_error_at(err, OFC_E_INPUT, f->file, r->loc.line, r->loc.col,
					  "ring '%s': node %s interface %u would %s wavelength %u "
					  "twice",
					  r->name, f->hosts[r->members[s.ch[i].node]].name,
					  s.ch[i].iface, s.ch[i].role == MRR_ADD ? "add" : "drop",
					  s.ch[i].wl);
		while (i + run < s.nch && s.ch[i + run].node == s.ch[i].node &&
		       s.ch[i + run].iface == s.ch[i].iface)
			run++;
		if (rc == 0 && run > r->mrrs)
			rc = ofc_error_at(
			    err, OFC_E_INPUT, f->file, r->loc.line, r->loc.col,
			    "ring '%s': node %s interface %u needs %u MRRs but has %u", r->name,
			    f->hosts[r->members[s.ch[i].node]].name, s.ch[i].iface, run, r->mrrs);
	}
	state_free(&s);
	return rc;
}
