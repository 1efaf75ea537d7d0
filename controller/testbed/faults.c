/* Faults made on a testbed behind ofc's back, so that what the hosts'
 * agents (ofc-hostd) find can be shown and tested: a host port's link
 * taken down or up in its namespace (`ofc testbed link`), and two
 * circuits' far ends swapped (`ofc testbed miswire`), as two fibres
 * crossed behind a switch that holds exactly what ofc asked for. Neither
 * touches the record: ofc still believes its circuits. */
#include "controller/testbed/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int testbed_link_set(const struct fabric *f, uint32_t host, uint32_t port, bool up,
		     struct ofc_error *err)
{
	char *ns = testbed_netns_name(f, host), ifname[16];
	int rc;

	if (!netns_exists(ns)) {
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "the testbed of fabric '%s' is not up (no namespace %s)",
				   f->name, ns);
		free(ns);
		return rc;
	}
	/* (port p of a testbed host is i<p>, the end of the circuit arriving
	 * at it, as ofc-hostd --testbed-ports reads it) */
	snprintf(ifname, sizeof(ifname), "i%u", port);
	rc = netns_link_set(ns, ifname, up, err);
	if (rc < 0 && err->msg[0])
		ofc_error_prefix(err, "%s:%u", f->hosts[host].name, port);
	free(ns);
	return rc;
}

/* The circuit leaving host port (h, p) among what the testbed holds. */
static const struct hlink *leaving(const struct device_state *s, uint32_t h, uint32_t p)
{
	for (uint32_t i = 0; i < s->nlinks; i++)
		if (s->links[i].src_host == h && s->links[i].src_port == p)
			return &s->links[i];
	return NULL;
}

static int swap_ends(const struct fabric *f, struct device *dev, const uint32_t a[2],
		     const uint32_t b[2], char *said, size_t n, struct ofc_error *err)
{
	struct device_state got;
	struct op_batch ops = {0};
	const struct hlink *x, *y;
	uint32_t done;
	int rc = -1;

	state_init(&got, DEV_HOSTS);
	if (device_read(dev, &got, err) < 0)
		goto out;
	x = leaving(&got, a[0], a[1]);
	y = leaving(&got, b[0], b[1]);
	if (!x || !y) {
		ofc_error_set(err, OFC_E_INPUT, "%s:%u carries no circuit on the testbed",
			      f->hosts[!x ? a[0] : b[0]].name, !x ? a[1] : b[1]);
		goto out;
	}
	struct hlink nx = {x->src_host, x->src_port, y->dst_host, y->dst_port},
		     ny = {y->src_host, y->src_port, x->dst_host, x->dst_port};
	batch_add(&ops, (struct op){.kind = OP_LINK_DEL, .link = *x});
	batch_add(&ops, (struct op){.kind = OP_LINK_DEL, .link = *y});
	batch_add(&ops, (struct op){.kind = OP_LINK_ADD, .link = nx});
	batch_add(&ops, (struct op){.kind = OP_LINK_ADD, .link = ny});
	snprintf(said, n, "%s:%u now reaches %s:%u and %s:%u reaches %s:%u",
		 f->hosts[nx.src_host].name, nx.src_port, f->hosts[nx.dst_host].name, nx.dst_port,
		 f->hosts[ny.src_host].name, ny.src_port, f->hosts[ny.dst_host].name, ny.dst_port);
	rc = device_apply(dev, &ops, &done, err);
out:
	batch_free(&ops);
	state_free(&got);
	return rc;
}

int testbed_miswire(const struct fabric *f, const char *state_dir, const uint32_t a[2],
		    const uint32_t b[2], char *said, size_t n, struct ofc_error *err)
{
	char **names = xcalloc(f->nhosts + 1, sizeof(char *));
	struct testbed_links rec;
	struct device dev;
	uint32_t maxp = 1;
	int rc = -1;

	if (a[0] == b[0] && a[1] == b[1]) {
		free(names);
		return ofc_error_set(err, OFC_E_INPUT, "%s:%u twice: miswire swaps two ports",
				     f->hosts[a[0]].name, a[1]);
	}
	for (uint32_t h = 0; h < f->nhosts; h++) {
		names[h] = testbed_netns_name(f, h);
		maxp = f->hosts[h].ports > maxp ? f->hosts[h].ports : maxp;
	}
	if (!netns_exists(names[a[0]]) || !netns_exists(names[b[0]])) {
		ofc_error_set(err, OFC_E_RUNTIME,
			      "the testbed of fabric '%s' is not up (no namespace %s)", f->name,
			      names[netns_exists(names[a[0]]) ? b[0] : a[0]]);
		goto out;
	}
	/* the circuits made again as the testbed shapes them */
	testbed_links_recorded(state_dir, f->name, &rec);
	struct device_cfg cfg = {.name = "testbed",
				 .driver = "netlink",
				 .cls = DEV_HOSTS,
				 .timeout = 5,
				 .netns = (const char *const *)names,
				 .nhosts = f->nhosts,
				 .host_ports = maxp,
				 .link_rate = rec.rate,
				 .link_latency = rec.latency};
	if (device_init(&dev, &cfg, err) < 0)
		goto out;
	rc = swap_ends(f, &dev, a, b, said, n, err);
	device_close(&dev);
out:
	for (uint32_t h = 0; h < f->nhosts; h++)
		free(names[h]);
	free(names);
	return rc;
}
