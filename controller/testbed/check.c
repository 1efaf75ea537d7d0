/* testbed check's use case, for the CLI and ofcd alike (`ofc testbed
 * check FILE`, TestbedCheck): every ordered pair's reach; then, all
 * reaching, what every circuit carries with all loaded at once (recorded
 * for the runs) beside the shaping the kernel holds, and the model
 * calibrated on the committed topology and judged by a reference run.
 * The answer is the ofc.v1.TestbedCheckAnswer both print, so a script
 * reads one shape whichever ran it. */
#include "controller/testbed/testbed.h"
#include "exec/exec.h"
#include "proto/control.pb-c.h"

#include <stdlib.h>

/* Every ordered pair's reach into m; the number that did not, UINT32_MAX
 * when the probe itself failed (err). */
static uint32_t reach(const struct fabric *f, struct arena *a, Ofc__V1__TestbedCheckAnswer *m,
		      struct ofc_error *err)
{
	uint32_t n = f->nhosts, bad = 0;
	uint8_t *ok = xcalloc((size_t)n * n + 1, 1);
	char **names = xcalloc(n + 1, sizeof(char *));
	int rc;

	for (uint32_t h = 0; h < n; h++)
		names[h] = testbed_netns_name(f, h);
	rc = testbed_ping_all((const char *const *)names, n, 3.0, ok, err);
	m->unreachable = arena_array(a, (size_t)n * n + 1, sizeof(*m->unreachable));
	for (uint32_t s = 0; s < n && rc == 0; s++)
		for (uint32_t t = 0; t < n; t++) {
			if (s == t)
				continue;
			if (ok[(size_t)s * n + t]) {
				m->reachable++;
				continue;
			}
			Ofc__V1__TestbedPair *p = arena_alloc(a, sizeof(*p));

			ofc__v1__testbed_pair__init(p);
			p->src = arena_strdup(a, f->hosts[s].name);
			p->dst = arena_strdup(a, f->hosts[t].name);
			m->unreachable[m->n_unreachable++] = p;
			bad++;
		}
	m->has_pairs = m->has_reachable = 1;
	m->pairs = rc == 0 ? n * (n - 1) : 0;
	for (uint32_t h = 0; h < n; h++)
		free(names[h]);
	free(names);
	free(ok);
	return rc < 0 ? UINT32_MAX : bad;
}

static Ofc__V1__TestbedCalibration *calibration_msg(struct arena *a,
						    const struct testbed_calibration *c)
{
	Ofc__V1__TestbedCalibration *k = arena_alloc(a, sizeof(*k));

	ofc__v1__testbed_calibration__init(k);
	k->has_alpha_s = k->has_alpha_runs = k->has_rate_bps = k->has_size = 1;
	k->has_measured_s = k->has_predicted_s = k->has_predicted_alpha_s = 1;
	k->has_predicted_bytes_s = k->has_ratio = k->has_data_ok = k->has_model_holds = 1;
	k->has_alpha_steps = 1;
	k->alpha_s = c->alpha;
	k->alpha_runs = c->alpha_runs;
	k->alpha_steps = c->alpha_steps;
	k->rate_bps = c->rate;
	k->algorithm = arena_strdup(a, c->algo);
	k->size = c->size;
	k->measured_s = c->measured;
	k->predicted_s = c->pred.seconds;
	k->predicted_alpha_s = c->pred.alpha_s;
	k->predicted_bytes_s = c->pred.bytes_s;
	k->ratio = c->measured / c->pred.seconds;
	k->data_ok = c->data_ok;
	k->model_holds = c->holds;
	k->model = arena_strdup(a, c->model);
	return k;
}

/* The verdict on what the circuits carry. Below TESTBED_CARRY_SHARE of
 * the shaping the model's times stretch by the factor, said; below
 * TESTBED_CARRY_FAIL of it the model means nothing (17x on 2 cores), said
 * so. A warning, never the status: a shared machine's load moves a
 * measure by a third and more (200 Mb/s, then 135; 45% of the shaping
 * once, in a make test beside other builds), and check's status says
 * whether the testbed works. */
static char *carried_note(struct arena *a, const struct testbed_net *t, uint32_t n, double median,
			  double least)
{
	char m[32], l[32], r[32];
	char head[160];

	snprintf(head, sizeof(head), "all %u circuits at once carried %s each (median; least %s)",
		 n, testbed_rate_str(median, m, sizeof(m)), testbed_rate_str(least, l, sizeof(l)));
	if (!(t->rate > 0))
		return arena_printf(a, "%s, unshaped", head);
	if (median >= TESTBED_CARRY_SHARE * t->rate)
		return arena_printf(a, "%s, %.0f%% of the %s shaped: they carry their shaping",
				    head, 100 * median / t->rate,
				    testbed_rate_str(t->rate, r, sizeof(r)));
	return arena_printf(a,
			    "%s, %.0f%% of the %s shaped: %s, and runs will take up to %.3gx the "
			    "model's time; 'ofc testbed up' without --rate-scale shapes to what "
			    "they carry",
			    head, 100 * median / t->rate, testbed_rate_str(t->rate, r, sizeof(r)),
			    median < TESTBED_CARRY_FAIL * t->rate
				? "this machine cannot carry the shaping"
				: "this machine carries less than the shaping (busy?)",
			    t->rate / median);
}

/* What the circuits carry (each probed, all at once; recorded for the
 * runs) and the shaping each holds, then the model calibrated on sched. */
static int links(const struct schedule_source *src, const struct fabric *f,
		 const struct fabric *sched, const char *state_dir, struct arena *a,
		 Ofc__V1__TestbedCheckAnswer *m, struct ofc_error *err)
{
	struct testbed_calibration cal;
	struct testbed_net t;
	struct link_shape *sh;
	struct exec_probe *pr = NULL;
	uint32_t npr = 0;
	double median, least;
	int rc = -1;

	if (testbed_net_read(f, state_dir, &t, err) < 0)
		return -1;
	sh = xcalloc((size_t)t.nhosts * t.ports + 1, sizeof(*sh));
	if (netlink_read_links((const char *const *)t.netns, t.nhosts, t.ports, sh, err) < 0 ||
	    testbed_measure(&t, &pr, &npr, &median, &least, err) < 0 ||
	    testbed_record_carried(state_dir, f->name, median, npr, err) < 0)
		goto out;
	m->has_carried_bps = m->has_carried_least_bps = 1;
	m->carried_bps = median;
	m->carried_least_bps = least;
	if (t.rate > 0) {
		m->has_carries_shaped_rate = 1;
		m->carries_shaped_rate = median >= TESTBED_CARRY_SHARE * t.rate;
	}
	m->carried_note = carried_note(a, &t, npr, median, least);
	m->circuits = arena_array(a, npr + 1, sizeof(*m->circuits));
	for (uint32_t i = 0; i < npr; i++) {
		const struct exec_probe *p = &pr[i];
		const struct link_shape *s = &sh[(size_t)p->host * t.ports + p->lane];
		Ofc__V1__TestbedCircuit *o = arena_alloc(a, sizeof(*o));

		ofc__v1__testbed_circuit__init(o);
		o->src = arena_strdup(a, f->hosts[p->host].name);
		o->dst = arena_strdup(a, f->hosts[p->peer].name);
		o->has_port = o->has_shaped_rate_bps = o->has_shaped_latency_s = 1;
		o->has_rate_bps = o->has_latency_s = 1;
		o->port = p->lane;
		o->shaped_rate_bps = s->rate;
		o->shaped_latency_s = s->latency;
		o->rate_bps = p->ok ? p->rate : 0;
		o->latency_s = p->latency;
		m->circuits[m->n_circuits++] = o;
	}
	t.carried = median;
	t.ncarried = npr;
	if (t.rate > 0 && npr) {
		if (testbed_calibrate(src, sched, state_dir, &t, &cal, err) < 0)
			goto out;
		m->calibration = calibration_msg(a, &cal);
	}
	rc = 0;
out:
	free(pr);
	free(sh);
	testbed_net_free(&t);
	return rc;
}

int testbed_check(const struct schedule_source *src, const struct fabric *f,
		  const struct fabric *sched, const char *spec, const char *state_dir,
		  struct arena *a, struct Ofc__V1__TestbedCheckAnswer **out, uint32_t *bad,
		  struct ofc_error *err)
{
	Ofc__V1__TestbedCheckAnswer *m = arena_alloc(a, sizeof(*m));

	ofc__v1__testbed_check_answer__init(m);
	*out = m;
	*bad = 0;
	m->fabric = arena_strdup(a, f->name);
	m->topology = arena_strdup(a, spec ? spec : "");
	m->has_hosts = 1;
	m->hosts = f->nhosts;
	if (!testbed_is_up(state_dir, f->name))
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "the testbed of fabric '%s' is not up (ofc testbed up)",
				     f->name);
	if (testbed_need_root(err) < 0 || (*bad = reach(f, a, m, err)) == UINT32_MAX)
		return -1;
	if (*bad)
		return 0;
	if (links(src, f, sched, state_dir, a, m, err) < 0)
		return -1;
	for (size_t i = 0; i < m->n_circuits; i++)
		*bad += !(m->circuits[i]->rate_bps > 0);
	if (m->calibration && !m->calibration->data_ok)
		(*bad)++;
	return 0;
}
