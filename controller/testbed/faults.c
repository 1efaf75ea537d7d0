/* Faults made on a testbed behind ofc's back, so that what the hosts'
 * agents (ofc-hostd) find can be shown and tested: a host port's link
 * taken down or up in its namespace (`ofc testbed link`), and two
 * circuits' far ends swapped (`ofc testbed miswire`), as two fibres
 * crossed behind a switch that holds exactly what ofc asked for. Neither
 * touches the record: ofc still believes its circuits. A swap is kept in
 * <state-dir>/<fabric>.miswired (a pair a line, "A-HOST A-PORT B-HOST
 * B-PORT" by index) and made again in every target the transaction
 * drives the hosts to, as crossed fibres outlive a commit. */
#include "controller/testbed/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MISWIRED_MAX 64 /* pairs recorded: more is not a testbed fault */

struct miswired {
	uint32_t n;
	uint32_t pair[MISWIRED_MAX][4]; /* a host, a port, b host, b port */
};

static void miswired_read(const char *state_dir, const char *fabric, struct miswired *m)
{
	char *path = testbed_path(state_dir, fabric, "miswired"), *data = NULL, *line, *save;
	struct ofc_error e = {0};
	size_t len;

	m->n = 0;
	if (access(path, F_OK) == 0 && read_file(path, 16384, &data, &len, &e) == 0)
		for (line = strtok_r(data, "\n", &save); line && m->n < MISWIRED_MAX;
		     line = strtok_r(NULL, "\n", &save)) {
			uint32_t *p = m->pair[m->n];

			if (sscanf(line, "%u %u %u %u", &p[0], &p[1], &p[2], &p[3]) == 4)
				m->n++;
		}
	free(data);
	free(path);
}

static int miswired_write(const char *state_dir, const char *fabric, const struct miswired *m,
			  struct ofc_error *err)
{
	char *path = testbed_path(state_dir, fabric, "miswired");
	struct strbuf sb = {0};
	int rc;

	for (uint32_t i = 0; i < m->n; i++)
		sb_printf(&sb, "%u %u %u %u\n", m->pair[i][0], m->pair[i][1], m->pair[i][2],
			  m->pair[i][3]);
	if (m->n == 0)
		rc = unlink(path) == 0 || errno == ENOENT
			 ? 0
			 : ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	else
		rc = atomic_write(path, sb.buf, sb.len, err);
	sb_free(&sb);
	free(path);
	return rc;
}

/* The pair a, b in m (either order): its index, or -1. */
static int miswired_find(const struct miswired *m, const uint32_t a[2], const uint32_t b[2])
{
	for (uint32_t i = 0; i < m->n; i++) {
		const uint32_t *p = m->pair[i];

		if ((p[0] == a[0] && p[1] == a[1] && p[2] == b[0] && p[3] == b[1]) ||
		    (p[0] == b[0] && p[1] == b[1] && p[2] == a[0] && p[3] == a[1]))
			return (int)i;
	}
	return -1;
}

/* The link leaving (h, p) in target, whose links are sorted by source. */
static struct hlink *leaving_mut(struct device_state *s, uint32_t h, uint32_t p)
{
	for (uint32_t i = 0; i < s->nlinks; i++)
		if (s->links[i].src_host == h && s->links[i].src_port == p)
			return &s->links[i];
	return NULL;
}

void testbed_miswired_apply(const char *state_dir, const char *fabric, struct device_state *target)
{
	struct miswired m;

	if (!state_dir)
		return;
	miswired_read(state_dir, fabric, &m);
	for (uint32_t i = 0; i < m.n; i++) {
		struct hlink *x = leaving_mut(target, m.pair[i][0], m.pair[i][1]),
			     *y = leaving_mut(target, m.pair[i][2], m.pair[i][3]);
		uint32_t h, p;

		/* (a swap that would loop a port back to its own host in this
		 * target is not made: swap_ends refuses such a pair) */
		if (!x || !y || x->src_host == y->dst_host || y->src_host == x->dst_host)
			continue;
		h = x->dst_host, p = x->dst_port;
		x->dst_host = y->dst_host, x->dst_port = y->dst_port;
		y->dst_host = h, y->dst_port = p;
	}
}

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
	return leaving_mut((struct device_state *)s, h, p);
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
	/* A host's port reaching its own host is a loop, not a fibre crossed
	 * between two hosts: no wiring check is shown by it. */
	if (nx.src_host == nx.dst_host || ny.src_host == ny.dst_host) {
		const struct hlink *l = nx.src_host == nx.dst_host ? &nx : &ny;

		ofc_error_set(err, OFC_E_INPUT,
			      "%s:%u and %s:%u swapped, %s:%u would reach %s:%u, a port of its own "
			      "host: a loop, not a fibre crossed between hosts",
			      f->hosts[a[0]].name, a[1], f->hosts[b[0]].name, b[1],
			      f->hosts[l->src_host].name, l->src_port, f->hosts[l->dst_host].name,
			      l->dst_port);
		goto out;
	}
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

/* The testbed's hosts as a device (the circuits made again as the
 * testbed shapes them); names[] the namespaces, freed by hosts_close. */
static int hosts_open(const struct fabric *f, const char *state_dir, char ***names,
		      struct device *dev, struct ofc_error *err)
{
	struct testbed_links rec;
	uint32_t maxp = 1;

	*names = xcalloc(f->nhosts + 1, sizeof(char *));
	for (uint32_t h = 0; h < f->nhosts; h++) {
		(*names)[h] = testbed_netns_name(f, h);
		maxp = f->hosts[h].ports > maxp ? f->hosts[h].ports : maxp;
	}
	testbed_links_recorded(state_dir, f->name, &rec);
	struct device_cfg cfg = {.name = "testbed",
				 .driver = "netlink",
				 .cls = DEV_HOSTS,
				 .timeout = 5,
				 .netns = (const char *const *)*names,
				 .nhosts = f->nhosts,
				 .host_ports = maxp,
				 .link_rate = rec.rate,
				 .link_latency = rec.latency};
	return device_init(dev, &cfg, err);
}

static void hosts_free(const struct fabric *f, char **names)
{
	for (uint32_t h = 0; h < f->nhosts; h++)
		free(names[h]);
	free(names);
}

int testbed_miswire(const struct fabric *f, const char *state_dir, const uint32_t a[2],
		    const uint32_t b[2], char *said, size_t n, struct ofc_error *err)
{
	struct miswired m;
	struct device dev;
	char **names;
	int rc = -1, k;

	if (a[0] == b[0] && a[1] == b[1])
		return ofc_error_set(err, OFC_E_INPUT, "%s:%u twice: miswire swaps two ports",
				     f->hosts[a[0]].name, a[1]);
	miswired_read(state_dir, f->name, &m);
	k = miswired_find(&m, a, b);
	if (k < 0 && m.n == MISWIRED_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u pairs are miswired already: --clear them first",
				     MISWIRED_MAX);
	if (hosts_open(f, state_dir, &names, &dev, err) < 0)
		goto out;
	if (!netns_exists(names[a[0]]) || !netns_exists(names[b[0]])) {
		ofc_error_set(err, OFC_E_RUNTIME,
			      "the testbed of fabric '%s' is not up (no namespace %s)", f->name,
			      names[netns_exists(names[a[0]]) ? b[0] : a[0]]);
		device_close(&dev);
		goto out;
	}
	rc = swap_ends(f, &dev, a, b, said, n, err);
	device_close(&dev);
	/* the same pair again crosses the fibres back: no longer a fault */
	if (rc == 0 && k >= 0)
		m.pair[k][0] = m.pair[--m.n][0], m.pair[k][1] = m.pair[m.n][1],
		m.pair[k][2] = m.pair[m.n][2], m.pair[k][3] = m.pair[m.n][3];
	else if (rc == 0)
		memcpy(m.pair[m.n++], (uint32_t[4]){a[0], a[1], b[0], b[1]}, sizeof(m.pair[0]));
	if (rc == 0)
		rc = miswired_write(state_dir, f->name, &m, err);
out:
	hosts_free(f, names);
	return rc;
}

int testbed_miswire_clear(const struct fabric *f, const char *state_dir, uint32_t *npairs,
			  struct ofc_error *err)
{
	struct miswired m;
	struct device dev;
	char **names, said[400];
	int rc = 0;

	miswired_read(state_dir, f->name, &m);
	*npairs = m.n;
	if (hosts_open(f, state_dir, &names, &dev, err) < 0) {
		hosts_free(f, names);
		return -1;
	}
	/* each pair crossed back where the testbed still carries both
	 * circuits (a commit since may have moved them off) */
	for (uint32_t i = m.n; i-- > 0 && rc == 0;) {
		const uint32_t a[2] = {m.pair[i][0], m.pair[i][1]},
			       b[2] = {m.pair[i][2], m.pair[i][3]};
		struct ofc_error e = {0};

		if (a[0] >= f->nhosts || b[0] >= f->nhosts || !netns_exists(names[a[0]]) ||
		    !netns_exists(names[b[0]]))
			continue;
		if (swap_ends(f, &dev, a, b, said, sizeof(said), &e) < 0 && e.code != OFC_E_INPUT)
			rc = ofc_error_set(err, e.code, "%s", e.msg);
	}
	device_close(&dev);
	hosts_free(f, names);
	m.n = 0;
	return rc < 0 ? rc : miswired_write(state_dir, f->name, &m, err);
}
