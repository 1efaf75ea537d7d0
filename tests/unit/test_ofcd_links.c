/* ofcd in-process taking a host agent's ReportLinks (host_links.c): a port
 * reported down becomes the failure HOST:PORT as `ofc fail` makes it (the
 * answer a report-failure transaction, the state's failed set, the event);
 * reported up it stays failed for the hold-down and is restored at the
 * first report after; an operator's failure of a port is never restored by
 * its host's report; a port the fabric lacks, one named twice, a neighbour
 * naming no host or no port of its host, a host the fabric lacks: refused
 * naming it, nothing changed. A failure a host made stays the host's for
 * an ofcd that did not hear it made (a restart, as a new leader): written
 * "ITEM host" in the store, shown in State.failed_by_host, restored by the
 * host's good reports after the hold-down; an operator's failure of it
 * makes it the operator's. A port down within a hold-down of a commit is
 * the commit's moving of circuits, not a failure; still down after, it
 * fails. */
#include <libgen.h>

#include "tests/unit/ofcd_world.h"

#define HOLD_MS 300

static Ofc__V1__ReportLinks__Port port_of(uint32_t n, bool up)
{
	Ofc__V1__ReportLinks__Port p = OFC__V1__REPORT_LINKS__PORT__INIT;

	p.has_port = p.has_up = 1;
	p.port = n;
	p.up = up;
	return p;
}

/* Host h reports its ports 0..n-1, port `down` down (-1: none). */
static Ofc__V1__Response *links(struct ofcd_client *c, uint64_t id, const char *h, uint32_t n,
				int down, Ofc__V1__ReportLinks__Port *extra)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportLinks rl = OFC__V1__REPORT_LINKS__INIT;
	Ofc__V1__ReportLinks__Port ports[8], *pp[9];

	for (uint32_t i = 0; i < n; i++) {
		ports[i] = port_of(i, (int)i != down);
		pp[i] = &ports[i];
	}
	rl.host = (char *)h;
	rl.ports = pp;
	rl.n_ports = n;
	if (extra)
		pp[rl.n_ports++] = extra;
	rl.has_lldp_running = rl.lldp_running = 1;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_LINKS;
	req.report_links = &rl;
	return call(c, &req, id);
}

static bool failed_has(struct ofcd_client *c, const char *item)
{
	Ofc__V1__Response *r = get_state(c, 999);
	bool has = false;

	for (size_t i = 0; r && i < r->state->n_failed; i++)
		has |= strcmp(r->state->failed[i], item) == 0;
	ofc__v1__response__free_unpacked(r, NULL);
	return has;
}

/* Whether State.failed_by_host is exactly want (a comma list, "" none). */
static bool by_host_is(struct ofcd_client *c, const char *want)
{
	Ofc__V1__Response *r = get_state(c, 998);
	char got[256] = "";

	for (size_t i = 0; r && i < r->state->n_failed_by_host; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "",
			 r->state->failed_by_host[i]);
	ofc__v1__response__free_unpacked(r, NULL);
	if (strcmp(got, want) != 0)
		print_error("failed_by_host: '%s', expected '%s'\n", got, want);
	return strcmp(got, want) == 0;
}

static Ofc__V1__Response *fail_item(struct ofcd_client *c, uint64_t id, char *item)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *items[] = {item};

	rf.items = items;
	rf.n_items = 1;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	return call(c, &req, id);
}

static void expect(Ofc__V1__Response *r, Ofc__V1__Status st, const char *msg, const char *kind)
{
	assert_non_null(r);
	if (r->status != st || (msg && !strstr(r->message, msg)))
		fail_msg("status %d '%s', expected %d with '%s'", r->status, r->message, st,
			 msg ? msg : "");
	if (kind) {
		assert_non_null(r->transaction);
		assert_string_equal(r->transaction->kind, kind);
	} else {
		assert_null(r->transaction);
	}
	ofc__v1__response__free_unpacked(r, NULL);
}

static void test_links(void **state)
{
	struct world *w = *state;
	const Ofc__V1__Status ok = OFC__V1__STATUS__STATUS_OK,
			      invalid = OFC__V1__STATUS__STATUS_INVALID;
	struct limits lim = {.link_damp = {.hold_down_ms = HOLD_MS}};
	struct ofcd_client c;

	start_with(w, 30, 0, lim);
	connect_ok(w, &c);

	expect(links(&c, 1, "h3", 4, -1, NULL), ok, "host h3: 4 of 4 ports up, 0 held failed",
	       NULL);
	assert_false(failed_has(&c, "h3:1"));
	/* down: the failure, as ReportFailure makes it */
	expect(links(&c, 2, "h3", 4, 1, NULL), ok, "1 failure in effect (h3:1)", "report-failure");
	assert_true(failed_has(&c, "h3:1"));
	/* still down: nothing more */
	expect(links(&c, 3, "h3", 4, 1, NULL), ok, "3 of 4 ports up, 1 held failed", NULL);
	/* up again: held for the hold-down, then restored */
	expect(links(&c, 4, "h3", 4, -1, NULL), ok, "4 of 4 ports up, 1 held failed", NULL);
	assert_true(failed_has(&c, "h3:1"));
	usleep((HOLD_MS + 100) * 1000);
	expect(links(&c, 5, "h3", 4, -1, NULL), ok, "h3:1 up again restored; no failure in effect",
	       "report-failure");
	assert_false(failed_has(&c, "h3:1"));

	/* bad input: refused naming it, nothing changed */
	Ofc__V1__ReportLinks__Port p = port_of(7, false);
	p.ifname = "eth7";
	expect(links(&c, 6, "h3", 2, -1, &p), invalid,
	       "host h3 has ports 0..3; the report names port 7 (eth7), which the fabric does "
	       "not have",
	       NULL);
	p = port_of(0, false);
	expect(links(&c, 7, "h3", 2, -1, &p), invalid, "port 0 is reported twice", NULL);
	p = port_of(2, true);
	p.neighbour_host = "printer-3";
	p.has_neighbour_port = 1;
	expect(links(&c, 8, "h3", 2, -1, &p), invalid,
	       "h3:2's LLDP neighbour 'printer-3' names no host of the fabric", NULL);
	p.neighbour_host = "h4";
	p.neighbour_port = 9;
	expect(links(&c, 9, "h3", 2, -1, &p), invalid,
	       "h3:2's LLDP neighbour h4 has no port 9 (it has 0..3)", NULL);
	expect(links(&c, 10, "h99", 1, 0, NULL), OFC__V1__STATUS__STATUS_NOT_FOUND,
	       "the fabric has no host h99", NULL);
	expect(links(&c, 11, NULL, 1, 0, NULL), invalid, "needs the host", NULL);
	assert_false(failed_has(&c, "h3:0"));

	/* an operator's failure is the operator's: the host's up never restores it */
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *items[] = {"h5:0"};
	rf.items = items;
	rf.n_items = 1;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	expect(call(&c, &req, 12), ok, "h5:0", "report-failure");
	expect(links(&c, 13, "h5", 4, 0, NULL), ok, "held failed", NULL); /* already failed */
	usleep((HOLD_MS + 100) * 1000);
	expect(links(&c, 14, "h5", 4, -1, NULL), ok, "0 held failed", NULL);
	expect(links(&c, 15, "h5", 4, -1, NULL), ok, "0 held failed", NULL);
	assert_true(failed_has(&c, "h5:0"));

	/* the metrics say what the hosts' reports did (h5:0 was down when first
	 * heard of: no flap) */
	Ofc__V1__GetMetrics gm = OFC__V1__GET_METRICS__INIT;
	Ofc__V1__Response *r;
	ofc__v1__request__init(&req);
	req.body_case = OFC__V1__REQUEST__BODY_GET_METRICS;
	req.get_metrics = &gm;
	r = call(&c, &req, 16);
	assert_non_null(strstr(r->metrics, "\nofc_host_link_flaps_total 1\n"));
	assert_non_null(strstr(r->metrics, "\nofc_host_links_failed 0\n"));
	assert_non_null(strstr(r->metrics, "\nofc_hosts_reporting 2\n"));
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
}

static void test_host_made_kept(void **state)
{
	struct world *w = *state;
	const Ofc__V1__Status ok = OFC__V1__STATUS__STATUS_OK;
	struct limits lim = {.link_damp = {.hold_down_ms = HOLD_MS}};
	struct ofcd_client c;
	char path[1200], *text = NULL;
	size_t len;
	struct ofc_error err = {0};

	start_with(w, 30, 0, lim);
	connect_ok(w, &c);
	expect(links(&c, 1, "h3", 4, 1, NULL), ok, "(h3:1)", "report-failure");
	expect(fail_item(&c, 2, "h5:0"), ok, "h5:0", "report-failure");
	assert_true(by_host_is(&c, "h3:1"));
	snprintf(path, sizeof(path), "%s/simfab.failed", w->dir);
	assert_int_equal(read_file(path, 1 << 16, &text, &len, &err), 0);
	assert_non_null(strstr(text, "\nh3:1 host\n"));
	assert_non_null(strstr(text, "\nh5:0\n"));
	free(text);
	ofcd_disconnect(&c);
	stop(w);

	/* another ofcd, which heard no host: the failure is still h3's */
	start_with(w, 30, 0, lim);
	connect_ok(w, &c);
	assert_true(failed_has(&c, "h3:1") && failed_has(&c, "h5:0"));
	assert_true(by_host_is(&c, "h3:1"));
	expect(links(&c, 3, "h3", 4, -1, NULL), ok, "4 of 4 ports up, 1 held failed", NULL);
	expect(links(&c, 4, "h5", 4, -1, NULL), ok, "0 held failed", NULL);
	usleep((HOLD_MS + 100) * 1000);
	expect(links(&c, 5, "h3", 4, -1, NULL), ok, "h3:1 up again restored", "report-failure");
	expect(links(&c, 6, "h5", 4, -1, NULL), ok, "0 held failed", NULL);
	assert_false(failed_has(&c, "h3:1"));
	assert_true(failed_has(&c, "h5:0")); /* the operator's */
	assert_true(by_host_is(&c, ""));

	/* h3:2 down by its host, then failed by an operator: the operator's */
	expect(links(&c, 7, "h3", 4, 2, NULL), ok, "h3:2 down failed", "report-failure");
	assert_true(by_host_is(&c, "h3:2"));
	expect(fail_item(&c, 8, "h3:2"), ok, "h3:2", "report-failure");
	assert_true(by_host_is(&c, ""));

	/* a commit moving h7:0's circuits: h7:0 down right after it is not
	 * taken; after the hold-down, it is */
	expect(links(&c, 20, "h7", 4, -1, NULL), ok, "4 of 4 ports up", NULL);
	Ofc__V1__Response *r = reconfigure(&c, "torus:4x16", 9);
	assert_int_equal(r->status, ok);
	ofc__v1__response__free_unpacked(r, NULL);
	expect(links(&c, 10, "h7", 4, 0, NULL), ok,
	       "3 of 4 ports up, 0 held failed (0 suppressed), 1 down while its circuits move",
	       NULL);
	assert_false(failed_has(&c, "h7:0"));
	usleep((HOLD_MS + 100) * 1000);
	expect(links(&c, 11, "h7", 4, 0, NULL), ok, "h7:0 down failed", "report-failure");
	ofcd_disconnect(&c);
	stop(w);
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_links, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_host_made_kept, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
