/* ofc testbed up|check|down FILE: the fabric's hosts as network namespaces
 * and its circuits as veth pairs (controller/testbed/). */
#include "controller/cli/remote.h"

#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

/* The verdict of check on what the circuits carry. Below
 * TESTBED_CARRY_SHARE of the shaping the model's times stretch by the
 * factor, said; below TESTBED_CARRY_FAIL of it the model means nothing
 * (17x on 2 cores), said so. A warning, never the exit status: a shared
 * machine's load moves a measure by a third and more (200 Mb/s, then
 * 135; 45% of the shaping once, in a make test beside other builds), and
 * check's status says whether the testbed works. *carries is the first
 * test. */
static void carried_verdict(const struct fabric_cmd *fc, const struct testbed_net *t, uint32_t n,
			    double median, double least, bool *carries, char *line, size_t len)
{
	char m[32], l[32], r[32];
	int k =
	    snprintf(line, len, "all %u circuits at once carried %s each (median; least %s)", n,
		     testbed_rate_str(median, m, sizeof(m)), testbed_rate_str(least, l, sizeof(l)));

	*carries = !(t->rate > 0) || median >= TESTBED_CARRY_SHARE * t->rate;
	if (k < 0 || (size_t)k >= len)
		k = 0;
	if (!(t->rate > 0))
		snprintf(line + k, len - (size_t)k, ", unshaped");
	else if (*carries)
		snprintf(line + k, len - (size_t)k,
			 ", %.0f%% of the %s shaped: they carry their shaping",
			 100 * median / t->rate, testbed_rate_str(t->rate, r, sizeof(r)));
	else
		snprintf(line + k, len - (size_t)k,
			 ", %.0f%% of the %s shaped: %s, and runs will take up to %.3gx the "
			 "model's time; 'ofc testbed up %s' without --rate-scale shapes to what "
			 "they carry",
			 100 * median / t->rate, testbed_rate_str(t->rate, r, sizeof(r)),
			 median < TESTBED_CARRY_FAIL * t->rate
			     ? "this machine cannot carry the shaping"
			     : "this machine carries less than the shaping (busy?)",
			 t->rate / median, fc->file);
}

/* The model's calibration, said: alpha, and whether the reference run
 * held the model (testbed_calibrate). */
static void print_calibration(struct json_writer *w, const struct testbed_calibration *c)
{
	char r[32];

	if (w) {
		jw_key(w, "calibration");
		jw_obj_begin(w);
		jw_key(w, "alpha_s");
		jw_double(w, c->alpha);
		jw_key(w, "alpha_runs");
		jw_uint(w, c->alpha_runs);
		jw_key(w, "rate_bps");
		jw_double(w, c->rate);
		jw_key(w, "algorithm");
		jw_str(w, c->algo);
		jw_key(w, "size");
		jw_uint(w, c->size);
		jw_key(w, "measured_s");
		jw_double(w, c->measured);
		jw_key(w, "predicted_s");
		jw_double(w, c->pred.seconds);
		jw_key(w, "predicted_alpha_s");
		jw_double(w, c->pred.alpha_s);
		jw_key(w, "predicted_bytes_s");
		jw_double(w, c->pred.bytes_s);
		jw_key(w, "ratio");
		jw_double(w, c->measured / c->pred.seconds);
		jw_key(w, "data_ok");
		jw_bool(w, c->data_ok);
		jw_key(w, "model_holds");
		jw_bool(w, c->holds);
		jw_key(w, "model");
		jw_str(w, c->model);
		jw_obj_end(w);
		return;
	}
	printf("model: a circuit at %s, alpha %.0f us a step (the median of %u allreduces of a "
	       "few bytes, %u steps)\n",
	       testbed_rate_str(c->rate, r, sizeof(r)), c->alpha * 1e6, c->alpha_runs,
	       c->alpha_steps);
	printf("  %s allreduce of %llu MiB: measured %.4f s, predicted %.4f s (alpha %.4f + "
	       "bytes %.4f), data %s: %s\n",
	       c->algo, (unsigned long long)(c->size >> 20), c->measured, c->pred.seconds,
	       c->pred.alpha_s, c->pred.bytes_s, c->data_ok ? "ok" : "WRONG", c->model);
}

/* Per circuit: the shaping the kernel holds and what a probe measures;
 * then what they carry against the shaping, recorded for testbed run;
 * then the model calibrated on these figures and judged by a run. */
static int check_links(struct fabric_cmd *fc, struct json_writer *w, int *status)
{
	const struct fabric *f = fc->fabric;
	struct ofc_error err = {0};
	struct testbed_net t;
	struct link_shape *sh;
	struct exec_probe *pr = NULL;
	uint32_t npr = 0;
	double median, least;
	char verdict[600];
	bool carries;
	struct testbed_calibration cal = {0};

	if (testbed_net_read(f, fc->state_dir, &t, &err) < 0)
		return cli_fail(&err);
	sh = xcalloc((size_t)t.nhosts * t.ports + 1, sizeof(*sh));
	if (netlink_read_links((const char *const *)t.netns, t.nhosts, t.ports, sh, &err) < 0 ||
	    testbed_measure(&t, &pr, &npr, &median, &least, &err) < 0 ||
	    testbed_record_carried(fc->state_dir, f->name, median, npr, &err) < 0) {
		free(pr);
		free(sh);
		testbed_net_free(&t);
		return cli_fail(&err);
	}
	carried_verdict(fc, &t, npr, median, least, &carries, verdict, sizeof(verdict));
	t.carried = median;
	t.ncarried = npr;
	if (t.rate > 0 && npr && testbed_calibrate(f, fc->state_dir, &t, &cal, &err) < 0) {
		free(pr);
		free(sh);
		testbed_net_free(&t);
		return cli_fail(&err);
	}
	if (t.rate > 0 && npr && (!cal.data_ok || !cal.holds))
		*status = !cal.data_ok ? 1 : *status;
	if (w) {
		jw_key(w, "carried_bps");
		jw_double(w, median);
		jw_key(w, "carried_least_bps");
		jw_double(w, least);
		if (t.rate > 0) {
			jw_key(w, "carries_shaped_rate");
			jw_bool(w, carries);
		}
		jw_key(w, "carried");
		jw_str(w, verdict);
		jw_key(w, "circuits");
		jw_arr_begin(w);
	} else {
		printf("%u circuits, shaped to %s, latency %s; probed for %.2f s, all at once:\n",
		       npr, t.rate > 0 ? "the rate below" : "nothing (unshaped)",
		       t.latency > 0 ? "as below" : "none added", TESTBED_PROBE_SECONDS);
		printf("  %-22s %14s %14s %12s %12s\n", "circuit", "shaped Mb/s", "measured Mb/s",
		       "delay ms", "latency ms");
	}
	for (uint32_t i = 0; i < npr; i++) {
		const struct exec_probe *p = &pr[i];
		const struct link_shape *s = &sh[(size_t)p->host * t.ports + p->lane];

		if (!p->ok)
			*status = 1;
		if (w) {
			jw_obj_begin(w);
			jw_key(w, "src");
			jw_str(w, f->hosts[p->host].name);
			jw_key(w, "port");
			jw_uint(w, p->lane);
			jw_key(w, "dst");
			jw_str(w, f->hosts[p->peer].name);
			jw_key(w, "shaped_rate_bps");
			jw_double(w, s->rate);
			jw_key(w, "shaped_latency_s");
			jw_double(w, s->latency);
			jw_key(w, "rate_bps");
			jw_double(w, p->rate);
			jw_key(w, "latency_s");
			jw_double(w, p->latency);
			jw_obj_end(w);
		} else {
			char name[64];

			snprintf(name, sizeof(name), "%s:%u -> %s", f->hosts[p->host].name, p->lane,
				 f->hosts[p->peer].name);
			printf("  %-22s %14.2f %14.2f %12.3f %12.3f\n", name, s->rate / 1e6,
			       p->rate / 1e6, s->latency * 1e3, p->latency * 1e3);
		}
	}
	if (w)
		jw_arr_end(w);
	else
		printf("%s\n", verdict);
	if (t.rate > 0 && npr)
		print_calibration(w, &cal);
	free(pr);
	free(sh);
	testbed_net_free(&t);
	return 0;
}

static int check(struct fabric_cmd *fc)
{
	const struct fabric *f = fc->fabric;
	struct ofc_error err = {0};
	uint32_t n = f->nhosts, ok = 0, bad = 0;
	uint8_t *reach = xcalloc((size_t)n * n + 1, 1);
	char **names = xcalloc(n + 1, sizeof(char *));
	int rc, lstatus = 0;

	if (!testbed_is_up(fc->state_dir, f->name)) {
		free(reach);
		free(names);
		ofc_error_set(&err, OFC_E_RUNTIME,
			      "the testbed of fabric '%s' is not up (run 'ofc "
			      "testbed up %s')",
			      f->name, fc->file);
		return fabric_cmd_fail(fc, &err);
	}
	for (uint32_t h = 0; h < n; h++)
		names[h] = testbed_netns_name(f, h);
	rc = testbed_ping_all((const char *const *)names, n, 3.0, reach, &err);
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t d = 0; d < n; d++)
			if (s != d)
				reach[(size_t)s * n + d] ? ok++ : bad++;
	if (rc == 0 && fc->json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		jw_obj_begin(&w);
		jw_key(&w, "fabric");
		jw_str(&w, f->name);
		jw_key(&w, "hosts");
		jw_uint(&w, n);
		jw_key(&w, "pairs");
		jw_uint(&w, ok + bad);
		jw_key(&w, "reachable");
		jw_uint(&w, ok);
		jw_key(&w, "unreachable");
		jw_arr_begin(&w);
		for (uint32_t s = 0; s < n; s++)
			for (uint32_t d = 0; d < n; d++)
				if (s != d && !reach[(size_t)s * n + d]) {
					jw_arr_begin(&w);
					jw_str(&w, f->hosts[s].name);
					jw_str(&w, f->hosts[d].name);
					jw_arr_end(&w);
				}
		jw_arr_end(&w);
		if (!bad && (rc = check_links(fc, &w, &lstatus)) != 0) {
			fabric_cmd_free(fc);
			free(names);
			free(reach);
			return rc;
		}
		jw_obj_end(&w);
		jw_finish(&w);
	} else if (rc == 0) {
		uint32_t shown = 0;

		printf("testbed %s: %u of %u ordered pairs reach each other (%u hosts)\n", f->name,
		       ok, ok + bad, n);
		for (uint32_t s = 0; s < n; s++)
			for (uint32_t d = 0; d < n; d++)
				if (s != d && !reach[(size_t)s * n + d] && shown++ < 20)
					printf("  %s cannot reach %s\n", f->hosts[s].name,
					       f->hosts[d].name);
		if (shown > 20)
			printf("  ... and %u more\n", shown - 20);
		if (!bad && (rc = check_links(fc, NULL, &lstatus)) != 0) {
			fabric_cmd_free(fc);
			free(names);
			free(reach);
			return rc;
		}
	}
	for (uint32_t h = 0; h < n; h++)
		free(names[h]);
	free(names);
	free(reach);
	if (rc < 0)
		return fabric_cmd_fail(fc, &err);
	fabric_cmd_free(fc);
	return bad || lstatus ? 1 : 0;
}

/* ofc testbed up: the namespaces and veths, shaped to a rate the kernel
 * can shape and this machine can carry (testbed_bring_up, which ofcd's
 * TestbedUp calls too). */
static int up(struct fabric_cmd *fc)
{
	const struct fabric *f = fc->fabric;
	struct ofc_error err = {0};
	struct testbed_up_result r;
	const struct device_state **switches;
	struct arena a = {0};
	Ofc__V1__TestbedUpAnswer *m;
	int rc;

	if (ctl_read(fc->ctl, &err) < 0)
		return fabric_cmd_fail(fc, &err);
	switches = ctl_switch_states(fc->ctl);
	rc = testbed_bring_up(f, fc->state_dir, switches, fc->rate_scale, &r, &err);
	free(switches);
	if (!r.up)
		return fabric_cmd_fail(fc, &err);
	m = testbed_up_answer(&a, f->name, &r);
	if (fc->json)
		remote_print_json(stdout, &m->base);
	else
		testbed_print_up(m);
	arena_free(&a);
	if (rc < 0)
		return fabric_cmd_fail(fc, &err);
	fabric_cmd_free(fc);
	return 0;
}

int cmd_testbed(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	const char *action;
	uint32_t n;
	int rc;

	static const struct option up_opts[] = {
	    {"rate-scale", required_argument, NULL, 'x'},
	    {0},
	};

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		action = "help";
	else if (argc < 2 || argv[1][0] == '-')
		return cli_usage_error(cmd, "missing up, check, run or down");
	else
		action = argv[1];
	if (strcmp(action, "run") == 0)
		return cmd_testbed_run(cmd, argc - 1, argv + 1);
	if (strcmp(action, "help") && strcmp(action, "up") && strcmp(action, "check") &&
	    strcmp(action, "down"))
		return cli_usage_error(cmd, "unknown action '%s' (expected up, check, run or down)",
				       action);
	rc = fabric_cmd_parse(
	    &fc, cmd, strcmp(action, "help") ? argc - 1 : argc,
	    strcmp(action, "help") ? argv + 1 : argv,
	    strcmp(action, "up") == 0 || strcmp(action, "help") == 0 ? up_opts : NULL,
	    fabric_cmd_extra,
	    "up: one network namespace per host (ofc-FABRIC-HOST), one veth pair per circuit\n"
	    "the switches hold now, addresses from 198.18.0.0/15 and routes along shortest\n"
	    "paths, relayed by intermediate hosts. While it is up, 'ofc apply' moves its\n"
	    "circuits and routes with the switches.\ncheck: ICMP echo between every ordered pair "
	    "of "
	    "hosts, then the shaping each circuit holds and the rate and latency a probe\n"
	    "measures on it, all at once, and a warning when they carry less than it; then\n"
	    "the run's model calibrated (alpha, a step's cost, from runs of the executor)\n"
	    "and judged by a reference run; exit 1 unless all reach.\n"
	    "  --rate-scale X   up: shape circuits to X times the config's link rate; without\n"
	    "                   it, up shapes to what this machine carries (and at most\n"
	    "                   16 Gb/s) and says so\n"
	    "run: execute schedules on the hosts (see ofc testbed run --help).\n"
	    "down: remove every namespace the testbed made.\n"
	    "Needs root (network namespaces).\n\n",
	    false);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (testbed_need_root(&err) < 0) {
		free(fc.state_dir);
		return cli_fail(&err);
	}
	if (fabric_cmd_open(&fc, false, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (strcmp(action, "check") == 0)
		return check(&fc);
	if (fabric_cmd_repair(&fc, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (strcmp(action, "up") == 0)
		return up(&fc);
	if (testbed_down(fc.fabric, fc.state_dir, &n, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (fc.json) {
		Ofc__V1__TestbedDownAnswer m = OFC__V1__TESTBED_DOWN_ANSWER__INIT;

		m.fabric = fc.fabric->name;
		m.has_removed = 1;
		m.removed = n;
		remote_print_json(stdout, &m.base);
	} else
		printf("testbed %s down: %u namespace%s removed\n", fc.fabric->name, n,
		       n == 1 ? "" : "s");
	fabric_cmd_free(&fc);
	return 0;
}
