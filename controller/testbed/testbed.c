/* Bringing the testbed up and down: the fabric's hosts as network
 * namespaces on this machine, its circuits as veth pairs, driven through
 * the netlink driver to what hosts.c says they should hold (a veth per
 * circuit the switches hold, and routes along shortest paths).
 *
 * <state-dir>/<fabric>.testbed lists the namespaces the testbed made, one
 * per line; it is written before the first namespace exists, so `testbed
 * down` removes everything even after a crash half-way up. */
#include "controller/testbed/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The circuits the switches hold, as host links: switches[s] is switch s's
 * state as read (NULL: the switch has no driver, and is taken to hold the
 * config's circuits). */
static void current_links(const struct fabric *f, const struct device_state *const *switches,
			  struct hlink **links, uint32_t *n)
{
	size_t cap = 0;

	*links = NULL;
	*n = 0;
	for (uint32_t s = 0; s < f->nswitches; s++) {
		const struct fswitch *sw = &f->switches[s];
		const struct device_state *st = switches[s];
		struct attachment **at = xcalloc((size_t)sw->ports + 2, sizeof(*at));

		for (uint32_t w = 0; w < f->nwiring; w++)
			if (f->wiring[w].sw == s)
				at[f->wiring[w].sw_port] = &f->wiring[w];
		if (st) {
			for (uint32_t k = 0; k < st->nxc; k++) {
				const struct xconn *x = &st->xc[k];
				const struct attachment *a = x->in <= sw->ports ? at[x->in] : NULL;
				const struct attachment *b =
				    x->out <= sw->ports ? at[x->out] : NULL;

				if (!a || !b)
					continue; /* a port no host is cabled to */
				GROW(*links, cap, (size_t)*n + 1);
				(*links)[(*n)++] =
				    (struct hlink){a->host, a->host_port, b->host, b->host_port};
			}
		} else {
			/* No driver: the switch is taken to hold the config's circuits. */
			for (uint32_t k = 0; k < f->ncircuits; k++) {
				const struct circuit *ci = &f->circuits[k];

				if (ci->sw != s)
					continue;
				GROW(*links, cap, (size_t)*n + 1);
				(*links)[(*n)++] = (struct hlink){ci->src_host, ci->src_port,
								  ci->dst_host, ci->dst_port};
			}
		}
		free(at);
	}
}

/* The namespaces listed in the testbed file (or NULL when none). */
static char **read_netns_list(const struct fabric *f, const char *state_dir, uint32_t *n)
{
	char *path = testbed_path(state_dir, f->name, "testbed");
	char *data, *line, *next, **names = NULL;
	struct ofc_error e = {0};
	size_t len, cap = 0;

	*n = 0;
	if (access(path, F_OK) != 0 || read_file(path, 16u << 20, &data, &len, &e) < 0) {
		free(path);
		return NULL;
	}
	for (line = data; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!*line)
			continue;
		GROW(names, cap, (size_t)*n + 1);
		names[(*n)++] = xstrdup(line);
	}
	free(data);
	free(path);
	return names;
}

int testbed_up(const struct fabric *f, const char *state_dir,
	       const struct device_state *const *switches, double rate_scale, uint32_t *ncircuits,
	       struct ofc_error *err)
{
	char *path = testbed_path(state_dir, f->name, "testbed");
	struct strbuf sb = STRBUF_INIT;
	struct hlink *links = NULL;
	struct device dev;
	struct device_state want, got;
	struct op_batch ops = {0};
	uint32_t nlinks = 0, done, maxp = 1;
	char **names = xcalloc(f->nhosts + 1, sizeof(char *));
	double rate, latency;
	int rc = -1;

	*ncircuits = 0;
	state_init(&want, DEV_HOSTS);
	state_init(&got, DEV_HOSTS);
	current_links(f, switches, &links, &nlinks);
	for (uint32_t h = 0; h < f->nhosts; h++) {
		names[h] = testbed_netns_name(f, h);
		sb_printf(&sb, "%s\n", names[h]);
		maxp = f->hosts[h].ports > maxp ? f->hosts[h].ports : maxp;
	}
	if ((uint64_t)f->nhosts * maxp > 32768u || f->nhosts > 65535u) {
		ofc_error_set(err, OFC_E_INPUT,
			      "a testbed addresses at most 32768 host ports (a /31 each in "
			      "198.18.0.0/16) and 65535 hosts (198.19.0.0/16); "
			      "this fabric has %u hosts x %u ports",
			      f->nhosts, maxp);
		goto out;
	}
	testbed_shaping(f, rate_scale, &rate, &latency);
	if (rate > NETLINK_MAX_RATE) {
		/* Here, before anything is made: found by the first `ofc apply`
		 * that adds a circuit, it rolled the transaction back. */
		double scale = rate_scale > 0		   ? rate_scale
			       : f->testbed.rate_scale > 0 ? f->testbed.rate_scale
							   : 1;

		ofc_error_set(
		    err, OFC_E_INPUT,
		    "a testbed circuit is shaped to at most %.0f Gb/s (tbf), and %.4g Gb/s "
		    "were asked: --rate-scale %.4g or less fits",
		    NETLINK_MAX_RATE / 1e9, rate / 1e9,
		    floor(NETLINK_MAX_RATE / rate * scale * 1e4) / 1e4);
		goto out;
	}
	struct testbed_links rec = {.rate = rate, .latency = latency};
	if (atomic_write(path, sb.buf, sb.len, err) < 0 ||
	    testbed_links_write(state_dir, f->name, &rec, err) < 0)
		goto out;
	for (uint32_t h = 0; h < f->nhosts; h++)
		if (netns_create(names[h], netlink_host_addr(h), err) < 0)
			goto out;
	testbed_target(f, links, nlinks, &want);
	testbed_miswired_apply(state_dir, f->name, &want);
	struct device_cfg cfg = {.name = "testbed",
				 .driver = "netlink",
				 .cls = DEV_HOSTS,
				 .timeout = 5,
				 .netns = (const char *const *)names,
				 .nhosts = f->nhosts,
				 .host_ports = maxp,
				 .link_rate = rate,
				 .link_latency = latency};
	if (device_init(&dev, &cfg, err) < 0)
		goto out;
	if (device_read(&dev, &got, err) == 0) {
		state_diff(&got, &want, &ops);
		if (device_apply(&dev, &ops, &done, err) == 0) {
			state_free(&got);
			if (device_read(&dev, &got, err) == 0) {
				if (state_equal(&got, &want))
					/* Circuits that were there already get the
					 * shaping asked for now too. */
					rc = netlink_shape_links((const char *const *)names,
								 f->nhosts, maxp, rate, latency,
								 err);
				else
					ofc_error_set(err, OFC_E_RUNTIME,
						      "testbed read-back does not match what was "
						      "set up");
			}
		}
	}
	device_close(&dev);
	*ncircuits = want.nlinks;
out:
	for (uint32_t h = 0; h < f->nhosts; h++)
		free(names[h]);
	free(names);
	free(links);
	batch_free(&ops);
	state_free(&want);
	state_free(&got);
	sb_free(&sb);
	free(path);
	return rc;
}

int testbed_reshape(const struct fabric *f, const char *state_dir, double rate,
		    struct ofc_error *err)
{
	struct testbed_links rec;
	uint32_t maxp = 1;
	char **names;
	int rc;

	if (rate > NETLINK_MAX_RATE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a testbed circuit is shaped to at most %.0f Gb/s (tbf)",
				     NETLINK_MAX_RATE / 1e9);
	testbed_links_recorded(state_dir, f->name, &rec);
	names = xcalloc(f->nhosts + 1, sizeof(char *));
	for (uint32_t h = 0; h < f->nhosts; h++) {
		names[h] = testbed_netns_name(f, h);
		maxp = f->hosts[h].ports > maxp ? f->hosts[h].ports : maxp;
	}
	rec = (struct testbed_links){.rate = rate, .latency = rec.latency};
	rc = testbed_links_write(state_dir, f->name, &rec, err);
	if (rc == 0)
		rc = netlink_shape_links((const char *const *)names, f->nhosts, maxp, rate,
					 rec.latency, err);
	for (uint32_t h = 0; h < f->nhosts; h++)
		free(names[h]);
	free(names);
	return rc;
}

int testbed_down(const struct fabric *f, const char *state_dir, uint32_t *nremoved,
		 struct ofc_error *err)
{
	char *path = testbed_path(state_dir, f->name, "testbed");
	uint32_t n = 0, nagents;
	char **names = read_netns_list(f, state_dir, &n);
	int rc = 0;

	*nremoved = 0;
	/* the agents first: none is left running in a namespace removed */
	if (testbed_agents_stop(f, state_dir, &nagents, err) < 0)
		rc = -1;
	if (!names) {
		/* No record: remove what this config's names would be. */
		n = f->nhosts;
		names = xcalloc(n + 1, sizeof(char *));
		for (uint32_t h = 0; h < n; h++)
			names[h] = testbed_netns_name(f, h);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct ofc_error e = {0};

		if (!netns_exists(names[i])) {
		} else if (netns_delete(names[i], &e) < 0) {
			if (rc == 0)
				*err = e;
			rc = -1;
		} else {
			(*nremoved)++;
		}
		free(names[i]);
	}
	free(names);
	if (rc == 0 && unlink(path) != 0 && errno != ENOENT)
		rc = ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "cannot remove: %s",
				  strerror(errno));
	free(path);
	path = testbed_path(state_dir, f->name, "links");
	if (rc == 0)
		unlink(path);
	free(path);
	/* no veths, no crossed fibres: a new testbed is cabled right */
	path = testbed_path(state_dir, f->name, "miswired");
	if (rc == 0)
		unlink(path);
	free(path);
	return rc;
}
