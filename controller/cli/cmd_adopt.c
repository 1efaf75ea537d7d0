/* ofc adopt FILE: the way out of "ROLLBACK INCOMPLETE". While a device
 * refuses the undo (or its read-back fails), every changing command retries
 * the rollback first and is refused with it. adopt reads every device,
 * shows what each holds against the journal's before and target, and on
 * confirmation records that as the fabric's new generation and ends the
 * transaction. It changes no device. A question nobody can answer is not
 * asked: without a terminal on stdin it needs --yes. */
#include "controller/cli/internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int on_yes(struct fabric_cmd *fc, int c, const char *arg)
{
	(void)arg;
	if (c != 'y')
		return 2;
	fc->yes = true;
	return 0;
}

static const char *matches(const struct device_state *held, const struct device_state *before,
			   const struct device_state *target)
{
	return state_equal(held, before)   ? "before"
	       : state_equal(held, target) ? "target"
					   : "neither";
}

static void show(const struct fabric_cmd *fc, const struct ctl_adopt *a)
{
	const struct ctl *c = fc->ctl;

	if (fc->json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		jw_obj_begin(&w);
		jw_key(&w, "fabric");
		jw_str(&w, c->fabric->name);
		jw_key(&w, "transaction");
		jw_uint(&w, a->txn);
		jw_key(&w, "generation");
		jw_uint(&w, a->generation);
		jw_key(&w, "devices");
		jw_arr_begin(&w);
		for (uint32_t i = 0; i < c->ndevs; i++) {
			jw_obj_begin(&w);
			jw_key(&w, "name");
			jw_str(&w, c->devs[i].cfg.name);
			jw_key(&w, "circuits");
			jw_uint(&w, c->devs[i].actual.nxc);
			jw_key(&w, "holds");
			jw_str(&w, matches(&c->devs[i].actual, &a->before[i], &a->target[i]));
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_finish(&w);
		return;
	}
	printf("fabric %s: transaction %llu could not be rolled back; the devices hold:\n",
	       c->fabric->name, (unsigned long long)a->txn);
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct device_state *h = &c->devs[i].actual;

		printf("  %-16s %u circuits: %s (before: %u, target: %u)\n", c->devs[i].cfg.name,
		       h->nxc,
		       state_equal(h, &a->before[i])   ? "as before the transaction"
		       : state_equal(h, &a->target[i]) ? "its target"
						       : "neither before nor target",
		       a->before[i].nxc, a->target[i].nxc);
	}
}

/* y or yes on stdin (a terminal, checked before anything is read). */
static bool ask(const struct ctl_adopt *a)
{
	char line[16];

	fprintf(stderr,
		"record this as generation %llu and end transaction %llu? The devices are not "
		"changed. [y/N] ",
		(unsigned long long)a->generation, (unsigned long long)a->txn);
	fflush(stderr);
	if (!fgets(line, sizeof(line), stdin))
		return false;
	line[strcspn(line, "\r\n")] = 0;
	return strcmp(line, "y") == 0 || strcmp(line, "yes") == 0;
}

int cmd_adopt(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct option extra[] = {{"yes", no_argument, NULL, 'y'}, {0}};
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	struct ctl_adopt a;
	int rc = fabric_cmd_parse(
	    &fc, cmd, argc, argv, extra, on_yes,
	    "Ends a transaction whose rollback could not finish (\"ROLLBACK INCOMPLETE\"):\n"
	    "reads every device, shows what it holds against the transaction's before and\n"
	    "target, and on confirmation records that as a new generation. No device is\n"
	    "changed; the next apply goes from what they hold. ofcd keeps the state\n"
	    "directory locked: stop it first.\n\n"
	    "  --yes                    do not ask (needed when stdin is not a terminal)\n",
	    false);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (!fc.yes && !isatty(STDIN_FILENO)) {
		rc = cli_usage_error(cmd, "stdin is not a terminal to confirm on: add --yes to "
					  "record what the devices hold without asking");
		fabric_cmd_free(&fc);
		return rc;
	}
	if (fabric_cmd_open(&fc, false, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (ctl_adopt_read(fc.ctl, &a, &err) < 0) {
		ctl_adopt_free(&a);
		return fabric_cmd_fail(&fc, &err);
	}
	if (!fc.json || !fc.yes)
		show(&fc, &a);
	if (!fc.yes && !ask(&a)) {
		fprintf(stderr, "ofc: not confirmed: nothing recorded; transaction %llu is kept\n",
			(unsigned long long)a.txn);
		ctl_adopt_free(&a);
		fabric_cmd_free(&fc);
		return 1;
	}
	rc = ctl_adopt_commit(fc.ctl, &a, &err);
	if (rc == 0 && fc.json && fc.yes)
		show(&fc, &a);
	else if (rc == 0)
		printf("adopted: generation %llu records what the devices hold; transaction %llu "
		       "ended\n",
		       (unsigned long long)a.generation, (unsigned long long)a.txn);
	ctl_adopt_free(&a);
	if (rc < 0)
		return fabric_cmd_fail(&fc, &err);
	fabric_cmd_free(&fc);
	return 0;
}
