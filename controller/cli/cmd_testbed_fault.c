/* `ofc testbed link FILE HOST:PORT down|up|flap` and `ofc testbed miswire
 * FILE HOST:PORT HOST:PORT`: faults made on a testbed behind ofc's back
 * (controller/testbed/faults.c), so that what the hosts' agents find
 * (docs/hosts.md) can be shown and tested. The record is not touched. */
#include "controller/cli/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "HOST:PORT" of fabric f into {host, port}; 0, or 2 after saying why. */
static int host_port(const struct cli_cmd *cmd, const struct fabric *f, const char *s,
		     uint32_t out[2])
{
	const char *colon = strrchr(s, ':');
	char name[NAME_MAX_LEN + 1], *end;
	unsigned long p;
	int h;

	if (!colon || colon == s || (size_t)(colon - s) > NAME_MAX_LEN)
		return cli_usage_error(cmd, "'%s': expected HOST:PORT", s);
	snprintf(name, sizeof(name), "%.*s", (int)(colon - s), s);
	if ((h = fabric_find_host(f, name)) < 0)
		return cli_usage_error(cmd, "'%s': fabric %s has no host %s", s, f->name, name);
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || p >= f->hosts[h].ports)
		return cli_usage_error(cmd, "'%s': host %s has ports 0..%u", s, name,
				       f->hosts[h].ports - 1);
	out[0] = (uint32_t)h;
	out[1] = (uint32_t)p;
	return 0;
}

static void pause_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

/* down, up, or flap: count bounces, each down then up for period/2. */
static int link_action(const struct fabric *f, const uint32_t hp[2], const char *what,
		       uint32_t count, double period, struct ofc_error *err)
{
	if (strcmp(what, "flap") != 0)
		return testbed_link_set(f, hp[0], hp[1], strcmp(what, "up") == 0, err);
	for (uint32_t i = 0; i < count; i++) {
		if (testbed_link_set(f, hp[0], hp[1], false, err) < 0)
			return -1;
		pause_s(period / 2);
		if (testbed_link_set(f, hp[0], hp[1], true, err) < 0)
			return -1;
		if (i + 1 < count)
			pause_s(period / 2);
	}
	return 0;
}

struct fault_opts {
	const char *state_dir;
	uint32_t count;
	double period;
	bool clear;
};

#define O(f) offsetof(struct fault_opts, f)
static const struct opt fault_table[] = {
    {"state-dir", opt_str, O(state_dir), "DIR",
     "miswire: where the testbed's state lives (default $OFC_STATE_DIR, else "
     "" OFC_STATE_DIR_DEFAULT ")"},
    {"count", cli_row_u32, O(count), "N", "flap: how many times (default 5)", 1, 1000},
    {"period", cli_row_duration, O(period), "T", "flap: down then up each T (default 0.4 s)"},
    {"clear", NULL, O(clear), NULL,
     "miswire FILE --clear: every recorded swap crossed back, the record removed"},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table fault_cli_table = {"testbed link", fault_table, sizeof(struct fault_opts)};

static const struct cli_opts fault_opts = {
    fault_table,
    "link FILE HOST:PORT down|up|flap: the host port's link (i<PORT> in the\n"
    "host's namespace) down or up, or bounced --count times, down then up each\n"
    "--period.\n"
    "miswire FILE HOST:PORT HOST:PORT: the far ends of the circuits leaving\n"
    "the two host ports swapped, as two fibres crossed behind the switch, and\n"
    "recorded: every commit onto the pair crosses them again, until the same\n"
    "pair is swapped back or --clear.\n"
    "Both act behind ofc's back: the record still holds its circuits, and\n"
    "only the hosts' agents (ofc-hostd) can tell. Needs root.\n",
    NULL,
};

/* miswire FILE --clear: the operands are FILE alone. */
static int miswire_clear(const struct cli_cmd *cmd, int n, char **operands, const char *state_dir)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	uint32_t npairs = 0;
	char *dir;
	int rc;

	if (n != 1)
		return cli_usage_error(cmd, "miswire --clear: expected FILE alone");
	if (testbed_need_root(&err) < 0 || fabric_open(operands[0], &f, &err) < 0)
		return cli_fail(&err);
	dir = ctl_state_dir(state_dir);
	rc = testbed_miswire_clear(f, dir, &npairs, &err);
	free(dir);
	fabric_free(f);
	if (rc < 0)
		return cli_fail(&err);
	printf("testbed: %u miswired pair%s crossed back (the record cleared)\n", npairs,
	       npairs == 1 ? "" : "s");
	return 0;
}

/* argv[0] is "link" or "miswire". */
int cmd_testbed_fault(const struct cli_cmd *testbed, int argc, char **argv)
{
	bool link = strcmp(argv[0], "link") == 0;
	/* its own usage: the action's operands, then its rows */
	const struct cli_cmd cmd_s = {testbed->name,
				      link ? "link FILE HOST:PORT down|up|flap"
					   : "miswire FILE HOST:PORT HOST:PORT",
				      testbed->summary, NULL},
			     *cmd = &cmd_s;
	struct fault_opts o = {.count = 5, .period = 0.4};
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	uint32_t a[2], b[2];
	char said[400] = "";
	int first, rc;

	if (!cli_parse(cmd, &fault_opts, argc, argv, &o, &first, &rc))
		return rc;
	const char *state_dir_opt = o.state_dir;
	uint32_t count = o.count;
	double period = o.period;

	if (!link && o.clear)
		return miswire_clear(cmd, argc - first, argv + first, state_dir_opt);
	if (argc - first != 3)
		return cli_usage_error(cmd, link ? "link: expected FILE HOST:PORT down|up|flap"
						 : "miswire: expected FILE HOST:PORT HOST:PORT");
	if (link && strcmp(argv[first + 2], "down") && strcmp(argv[first + 2], "up") &&
	    strcmp(argv[first + 2], "flap"))
		return cli_usage_error(cmd, "link: '%s': expected down, up or flap",
				       argv[first + 2]);
	if (testbed_need_root(&err) < 0 || fabric_open(argv[first], &f, &err) < 0)
		return cli_fail(&err);
	if ((rc = host_port(cmd, f, argv[first + 1], a)) ||
	    (!link && (rc = host_port(cmd, f, argv[first + 2], b)))) {
		fabric_free(f);
		return rc;
	}
	if (link) {
		rc = link_action(f, a, argv[first + 2], count, period, &err);
		snprintf(said, sizeof(said), "%s:%u %s", f->hosts[a[0]].name, a[1],
			 strcmp(argv[first + 2], "flap") == 0 ? "flapped" : argv[first + 2]);
	} else {
		char *dir = ctl_state_dir(state_dir_opt);

		rc = testbed_miswire(f, dir, a, b, said, sizeof(said), &err);
		free(dir);
	}
	fabric_free(f);
	if (rc < 0)
		return cli_fail(&err);
	printf("testbed: %s (behind ofc's back)\n", said);
	return 0;
}
