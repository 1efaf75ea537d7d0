/* A relabelled fabric's failures cut the renumbered topology. A failed
 * port is physical: after `--relabel` renumbers the topology, the arcs it
 * takes away are the ones its new port permutations give it, and the
 * graph schedules run on (f->degraded) is the relabelled graph less those.
 * Before this was fixed, f->degraded kept the config's numbering, so a
 * schedule after a relabelling used links the switch did not hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/config/config.h"
#include "controller/reconfig/reconfig.h"
#include "tests/unit/sim_world.h"
#include "topo/topo.h"

#define HOSTS 16
#define PORTS 4

struct bench {
	char dir[64];
	struct sim_device sim;
};

static struct sim_device *lookup(void *ctx, const char *name)
{
	struct bench *b = ctx;

	return strcmp(name, "ocs0") == 0 ? &b->sim : NULL;
}

/* 16 hosts on one switch, sequentially wired (host h's port p on switch
 * port h*4+p+1), torus:4x4, h3's port 1 failed, and extra as given. */
static struct fabric *fabric_with(const char *extra)
{
	struct strbuf y = STRBUF_INIT;
	struct fabric *f;

	sb_printf(&y, "name: relabelfail\nhosts:\n");
	for (int h = 0; h < HOSTS; h++)
		sb_printf(&y, "  - {name: h%d, ports: %d%s}\n", h, PORTS,
			  h == 3 ? ", failed_ports: [1]" : "");
	sb_printf(&y,
		  "switches:\n"
		  "  - {name: ocs0, type: ocs, ports: 64, driver: {type: sim}}\n"
		  "wiring: {pattern: sequential, switches: [ocs0]}\n"
		  "topology: %s\n",
		  extra);
	f = test_fabric("relabelfail.yaml", y.buf);
	sb_free(&y);
	return f;
}

static struct ctl *open_ctl(struct bench *b, struct fabric *f)
{
	struct ctl_opts o = {.state_dir = b->dir, .sim_lookup = lookup, .ctx = b};
	struct ofc_error err = {0};
	struct ctl *c;

	assert_int_equal(ctl_open(f, &o, &c, &err), 0);
	if (ctl_plan(c, &err) < 0)
		fail_msg("plan: %s", err.msg);
	return c;
}

/* The switch holds f's own target with the hosts renamed by pi (host h's
 * cross-connects moved to host pi[h]'s ports): a copy the relabelling
 * adopts without a move. */
static void hold_renamed(struct bench *b, struct fabric *f, const uint32_t *pi)
{
	struct ctl *c = open_ctl(b, f);
	const struct device_state *t = &c->devs[0].target;

	state_clear(&b->sim.state);
	for (uint32_t i = 0; i < t->nxc; i++) {
		uint32_t in = t->xc[i].in - 1, out = t->xc[i].out - 1;

		state_add_xconn(&b->sim.state, pi[in / PORTS] * PORTS + in % PORTS + 1,
				pi[out / PORTS] * PORTS + out % PORTS + 1);
	}
	state_sort(&b->sim.state);
	ctl_close(c);
}

/* How many arcs u -> v g has. */
static uint32_t arcs_between(const struct graph *g, uint32_t u, uint32_t v)
{
	uint32_t k = 0;

	for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
		k += g->adj[a] == v;
	return k;
}

/* f->degraded is f->graph less the arcs h's port j carries under f->ports
 * (it sends to to[j][h], hears the w with to[j][w] == h), counted again
 * here from the port permutations. */
static void assert_degraded_is_renumbered(const struct fabric *f, uint32_t h, uint32_t j)
{
	const struct graph *g = f->graph, *d = f->degraded;
	const uint32_t *to = f->ports.to + (size_t)j * g->n;

	assert_non_null(d);
	assert_int_equal(d->n, g->n);
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t v = 0; v < g->n; v++) {
			uint32_t cut = (u == h && to[h] == v) + (v == h && to[u] == h);

			if (arcs_between(d, u, v) + cut != arcs_between(g, u, v))
				fail_msg("arc h%u -> h%u: %u in the degraded graph, %u in the "
					 "relabelled topology, %u cut by h%u:%u",
					 u, v, arcs_between(d, u, v), arcs_between(g, u, v), cut, h,
					 j);
		}
}

static void test_failed_port_cuts_relabelled_topology(void **state)
{
	/* a rotation of the host names by 5 and a swap: h3's neighbours change */
	uint32_t pi[HOSTS];
	struct bench b;
	struct relabel_opts ro = {.budget_s = 0.5, .seed = 7};
	struct fabric_relabel rep;
	struct ofc_error err = {0};
	(void)state;

	for (uint32_t h = 0; h < HOSTS; h++)
		pi[h] = (h + 5) % HOSTS;
	pi[0] = 6, pi[1] = 5;
	test_state_dir(b.dir, sizeof(b.dir), "relabelfail");
	sim_device_init(&b.sim, DEV_SWITCH, 64);

	struct fabric *f = fabric_with("torus:4x4");
	assert_degraded_is_renumbered(f, 3, 1); /* the config's numbering */
	hold_renamed(&b, f, pi);
	struct ctl *c = open_ctl(&b, f);
	if (ctl_relabel(c, &relabel_direct, NULL, &ro, &rep, &err) < 0)
		fail_msg("relabel: %s", err.msg);
	assert_true(rep.changed);
	assert_int_equal(rep.kept, rep.arcs); /* the renamed copy, in place */
	assert_int_equal(ctl_plan_size(c), 0);
	assert_degraded_is_renumbered(c->fabric, 3, 1);
	ctl_close(c);
	fabric_free(f);

	/* a failed link the renumbered torus no longer has is out of effect;
	 * the port still cuts */
	f = fabric_with("{spec: 'torus:4x4', failed_links: [[h0, h1]]}");
	c = open_ctl(&b, f);
	if (ctl_relabel(c, &relabel_direct, NULL, &ro, &rep, &err) < 0)
		fail_msg("relabel: %s", err.msg);
	assert_true(rep.changed);
	const struct graph *g = c->fabric->graph, *d = c->fabric->degraded;
	assert_non_null(d);
	if (arcs_between(g, 0, 1) == 0)
		assert_null(strstr(d->spec, "h0-h1"));
	else /* still a link: cut */
		assert_int_equal(arcs_between(d, 0, 1), 0);
	ctl_close(c);
	fabric_free(f);

	sim_device_free(&b.sim);
	test_state_dir_remove(b.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failed_port_cuts_relabelled_topology),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
