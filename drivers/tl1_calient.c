/* The Calient dialect of the tl1 driver (docs/tl1.md, "Calient"): ports
 * named shelf.slot.port through the config's port map; a cross-connect is
 * entered (ENT-CRS ... GROUP,1WAY) and then activated (ACT-CRS), and
 * removed by deactivating (CANC-CRS) and deleting (DLT-CRS) it.
 *
 * Two commands per change leave a half-way state when ofc dies between
 * them: a cross-connect entered but not active (or deactivated but not
 * deleted). It carries no light, so a read reports only active ones: the
 * fabric is at the old or the new state as the light sees it. The idle
 * entry still holds its ports; when a later ENT-CRS is refused SAIS, the
 * idle entries on those ports are deleted (they carry nothing) and the
 * ENT-CRS is sent once more. Every command is idempotent on a retry:
 * ENT-CRS of an entry that exists, ACT-CRS of an active one and CANC-CRS
 * of an idle one are COMPLD; DLT-CRS answered SNVS on a retry counts as
 * done.
 */
#include "drivers/internal.h"

#include <string.h>

/* Every cross-connect ofc makes is in this group (the switch's name for a
 * set of connections an operator manages together). */
#define CALIENT_GROUP "OFC"

bool tl1_calient_aid(const struct tl1_port_map *map, uint32_t ports, uint32_t port, char *buf,
		     size_t n)
{
	uint64_t slot;

	if (port < 1 || port > ports || map->slot_ports < 1)
		return false;
	slot = (uint64_t)map->first_slot + (port - 1) / map->slot_ports;
	if (slot > UINT32_MAX)
		return false;
	snprintf(buf, n, "%u.%u.%u", map->shelf, (uint32_t)slot, (port - 1) % map->slot_ports + 1);
	return true;
}

/* The port named at *p (advanced past it), under map, 1..ports. */
static int take_aid(const char **p, const struct tl1_port_map *map, uint32_t ports, uint32_t *port)
{
	uint32_t shelf, slot, pp;
	uint64_t k;

	if (tl1_take_u32(p, &shelf) < 0 || *(*p)++ != '.' || tl1_take_u32(p, &slot) < 0 ||
	    *(*p)++ != '.' || tl1_take_u32(p, &pp) < 0)
		return -1;
	if (shelf != map->shelf || slot < map->first_slot || pp < 1 || pp > map->slot_ports)
		return -1;
	k = (uint64_t)(slot - map->first_slot) * map->slot_ports + pp;
	if (k > ports)
		return -1;
	*port = (uint32_t)k;
	return 0;
}

int tl1_calient_port(const struct tl1_port_map *map, uint32_t ports, const char *aid,
		     uint32_t *port)
{
	const char *p = aid;

	if (take_aid(&p, map, ports, port) < 0 || *p)
		return -1;
	return 0;
}

int tl1_calient_parse_crs(const char *line, const struct tl1_port_map *map, uint32_t ports,
			  uint32_t *in, uint32_t *out, bool *active)
{
	const char *p = line, *g;
	size_t glen;

	/* "SRC,DST:GROUP,1WAY,ACT|IDLE"; nothing after the closing quote. */
	if (*p++ != '"' || take_aid(&p, map, ports, in) < 0 || *p++ != ',' ||
	    take_aid(&p, map, ports, out) < 0 || *p++ != ':')
		return -1;
	g = p;
	glen = strcspn(p, ",\"");
	if (glen == 0 || glen > 32)
		return -1;
	for (size_t i = 0; i < glen; i++)
		if (!(g[i] >= 'A' && g[i] <= 'Z') && !(g[i] >= 'a' && g[i] <= 'z') &&
		    !(g[i] >= '0' && g[i] <= '9') && g[i] != '-' && g[i] != '_')
			return -1;
	p += glen;
	/* Only one-way connections are cross-connects as ofc knows them. */
	if (strncmp(p, ",1WAY,", 6) != 0)
		return -1;
	p += 6;
	if (strcmp(p, "ACT\"") == 0)
		*active = true;
	else if (strcmp(p, "IDLE\"") == 0)
		*active = false;
	else
		return -1;
	return 0;
}

/* Every entry the switch holds, active or idle: cross-connects into
 * `active`, idle ones into `idle` (either may be NULL). */
static int read_entries(struct device *dev, struct device_state *active, struct device_state *idle,
			struct ofc_error *err)
{
	struct tl1_reply r = {0};
	uint32_t attempt, n = dev->cfg.ports;
	int rc;

	rc = tl1_command(dev, "RTRV-CRS", (struct tl1_args){":::", ":"}, &r, &attempt, err);
	if (rc == 0 && !r.compld)
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "RTRV-CRS refused (%s)",
				    r.code);
	for (uint32_t i = 0; rc == 0 && i < r.nlines; i++) {
		uint32_t in, eg;
		bool act;

		if (r.lines[i][0] == '/')
			continue; /* a comment line */
		if (tl1_calient_parse_crs(r.lines[i], &dev->cfg.port_map, n, &in, &eg, &act) < 0)
			rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE,
					    "RTRV-CRS: '%.60s' is not a one-way cross-connect "
					    "between ports of the port map (%u ports, shelf %u, "
					    "slots from %u, %u ports a slot)",
					    r.lines[i], n, dev->cfg.port_map.shelf,
					    dev->cfg.port_map.first_slot,
					    dev->cfg.port_map.slot_ports);
		else if (act && active)
			state_add_xconn(active, in, eg);
		else if (!act && idle)
			state_add_xconn(idle, in, eg);
	}
	tl1_reply_free(&r);
	return rc;
}

static int calient_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	return read_entries(dev, out, NULL, err);
}

/* VERB::SRC,DST:CTAG:POST; for the cross-connect in -> out. */
static int crs_command(struct device *dev, const char *verb, uint32_t in, uint32_t out,
		       const char *post, struct tl1_reply *r, uint32_t *attempt,
		       struct ofc_error *err)
{
	char src[48], dst[48], pre[112];

	/* The ports were checked against 1..N: both have names unless the
	 * map's slots would pass 2^32, which the config refuses. */
	if (!tl1_calient_aid(&dev->cfg.port_map, dev->cfg.ports, in, src, sizeof(src)) ||
	    !tl1_calient_aid(&dev->cfg.port_map, dev->cfg.ports, out, dst, sizeof(dst)))
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "not sent: ports %u, %u have no name in the port map", in,
				      out);
	snprintf(pre, sizeof(pre), "::%s,%s:", src, dst);
	return tl1_command(dev, verb, (struct tl1_args){pre, post}, r, attempt, err);
}

/* Delete the idle entries that hold ingress `in` or egress `out`: left by
 * a change that died between its two commands, they carry no light. */
static int clear_idle(struct device *dev, uint32_t in, uint32_t out, uint32_t *cleared,
		      struct ofc_error *err)
{
	struct device_state idle;
	struct tl1_reply r = {0};
	int rc;

	*cleared = 0;
	state_init(&idle, DEV_SWITCH);
	rc = read_entries(dev, NULL, &idle, err);
	for (uint32_t i = 0; rc == 0 && i < idle.nxc; i++) {
		uint32_t attempt;

		if (idle.xc[i].in != in && idle.xc[i].out != out)
			continue;
		rc = crs_command(dev, "DLT-CRS", idle.xc[i].in, idle.xc[i].out, "", &r, &attempt,
				 err);
		if (rc == 0 && !r.compld && !(attempt > 0 && strcmp(r.code, "SNVS") == 0))
			rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					    "device refused to delete the idle cross-connect "
					    "%u -> %u (%s)",
					    idle.xc[i].in, idle.xc[i].out, r.code);
		if (rc == 0)
			(*cleared)++;
	}
	tl1_reply_free(&r);
	state_free(&idle);
	return rc;
}

static int calient_connect(struct device *dev, const struct op *op, struct ofc_error *err)
{
	struct tl1_reply r = {0};
	uint32_t attempt, in = op->xc.in, out = op->xc.out, cleared = 0;
	int rc;

	rc = crs_command(dev, "ENT-CRS", in, out, "::" CALIENT_GROUP ",1WAY", &r, &attempt, err);
	if (rc == 0 && !r.compld && strcmp(r.code, "SAIS") == 0) {
		rc = clear_idle(dev, in, out, &cleared, err);
		if (rc == 0 && cleared)
			rc = crs_command(dev, "ENT-CRS", in, out, "::" CALIENT_GROUP ",1WAY", &r,
					 &attempt, err);
	}
	if (rc == 0 && r.compld)
		rc = crs_command(dev, "ACT-CRS", in, out, "", &r, &attempt, err);
	if (rc == 0 && !r.compld)
		rc = tl1_refused(op, &r, err);
	tl1_reply_free(&r);
	return rc;
}

static int calient_disconnect(struct device *dev, const struct op *op, struct ofc_error *err)
{
	struct tl1_reply r = {0};
	uint32_t attempt;
	int rc;

	if (op->xc.out < 1 || op->xc.out > dev->cfg.ports)
		/* A Calient connection is named by both its ports. */
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
				      "not sent: disconnect of ingress %u names no egress (%u)",
				      op->xc.in, op->xc.out);
	rc = crs_command(dev, "CANC-CRS", op->xc.in, op->xc.out, "", &r, &attempt, err);
	if (rc == 0 && r.compld)
		rc = crs_command(dev, "DLT-CRS", op->xc.in, op->xc.out, "", &r, &attempt, err);
	if (rc == 0 && !r.compld && attempt > 0 && strcmp(r.code, "SNVS") == 0)
		r.compld = true; /* the first attempt did it */
	if (rc == 0 && !r.compld)
		rc = tl1_refused(op, &r, err);
	tl1_reply_free(&r);
	return rc;
}

static int calient_apply_op(struct device *dev, const struct op *op, struct ofc_error *err)
{
	return op->kind == OP_CONNECT ? calient_connect(dev, op, err)
				      : calient_disconnect(dev, op, err);
}

const struct tl1_dialect tl1_calient = {
    .name = "calient",
    .read = calient_read,
    .apply_op = calient_apply_op,
};
