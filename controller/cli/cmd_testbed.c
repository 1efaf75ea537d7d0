/* ofc testbed up|check|down FILE: the fabric's hosts as network namespaces
 * and its circuits as veth pairs (controller/reconfig/testbed.c). */
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>

static int check(struct fabric_cmd *fc)
{
	const struct fabric *f = fc->fabric;
	struct ofc_error err = {0};
	uint32_t n = f->nhosts, ok = 0, bad = 0;
	uint8_t *reach = xcalloc((size_t)n * n + 1, 1);
	char **names = xcalloc(n + 1, sizeof(char *));
	int rc;

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
	}
	for (uint32_t h = 0; h < n; h++)
		free(names[h]);
	free(names);
	free(reach);
	if (rc < 0)
		return fabric_cmd_fail(fc, &err);
	fabric_cmd_free(fc);
	return bad ? 1 : 0;
}

int cmd_testbed(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	const char *action;
	uint32_t n;
	int rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		action = "help";
	else if (argc < 2 || argv[1][0] == '-')
		return cli_usage_error(cmd, "missing up, check or down");
	else
		action = argv[1];
	if (strcmp(action, "help") && strcmp(action, "up") && strcmp(action, "check") &&
	    strcmp(action, "down"))
		return cli_usage_error(cmd, "unknown action '%s' (expected up, check or down)",
				       action);
	rc = fabric_cmd_parse(
	    &fc, cmd, strcmp(action, "help") ? argc - 1 : argc,
	    strcmp(action, "help") ? argv + 1 : argv, NULL, NULL,
	    "up: one network namespace per host (ofc-FABRIC-HOST), one veth pair per circuit\n"
	    "the switches hold now, addresses from 198.18.0.0/15 and routes along shortest\n"
	    "paths, relayed by intermediate hosts. While it is up, 'ofc apply' moves its\n"
	    "circuits and routes with the switches.\ncheck: ICMP echo between every ordered pair "
	    "of "
	    "hosts; exit 1 unless all reach.\ndown: remove every namespace the testbed made.\n"
	    "Needs root (network namespaces).\n\n",
	    false);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (fabric_cmd_open(&fc, false, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (strcmp(action, "check") == 0)
		return check(&fc);
	if (fabric_cmd_repair(&fc, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (strcmp(action, "up") == 0) {
		if (testbed_up(fc.ctl, &n, &err) < 0)
			return fabric_cmd_fail(&fc, &err);
		if (fc.json)
			printf("{\"fabric\": \"%s\", \"hosts\": %u, \"circuits\": %u}\n",
			       fc.fabric->name, fc.fabric->nhosts, n);
		else
			printf("testbed %s up: %u hosts as namespaces ofc-%s-*, %u circuits\n",
			       fc.fabric->name, fc.fabric->nhosts, fc.fabric->name, n);
	} else {
		if (testbed_down(fc.ctl, &n, &err) < 0)
			return fabric_cmd_fail(&fc, &err);
		if (fc.json)
			printf("{\"fabric\": \"%s\", \"removed\": %u}\n", fc.fabric->name, n);
		else
			printf("testbed %s down: %u namespace%s removed\n", fc.fabric->name, n,
			       n == 1 ? "" : "s");
	}
	fabric_cmd_free(&fc);
	return 0;
}
