/* ofc adopt FILE: the way out of "ROLLBACK INCOMPLETE". While a device
 * refuses the undo (or its read-back fails), every changing command retries
 * the rollback first and is refused with it. adopt reads every device,
 * shows what each holds against the journal's before and target, and on
 * confirmation records that as the fabric's new generation and ends the
 * transaction. It changes no device. A question nobody can answer is not
 * asked: without a terminal on stdin it needs --yes. */
#include "controller/cli/internal.h"

#include <stdio.h>
#include <stdlib.h>
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

/* What ofc read, as ofcd's Adopt answers it (both forms show it once). */
static Ofc__V1__AdoptPreview *preview_of(const struct ctl *c, const struct ctl_adopt *a)
{
	Ofc__V1__AdoptPreview *p = xcalloc(1, sizeof(*p));

	ofc__v1__adopt_preview__init(p);
	p->fabric = (char *)c->fabric->name;
	p->transaction = a->txn;
	p->generation = a->generation;
	p->n_devices = c->ndevs;
	p->devices = xcalloc(c->ndevs + 1, sizeof(*p->devices));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		Ofc__V1__AdoptDevice *v = xcalloc(1, sizeof(*v));

		ofc__v1__adopt_device__init(v);
		v->name = (char *)c->devs[i].cfg.name;
		v->circuits = c->devs[i].actual.nxc;
		v->holds = (char *)matches(&c->devs[i].actual, &a->before[i], &a->target[i]);
		v->before_circuits = a->before[i].nxc;
		v->target_circuits = a->target[i].nxc;
		p->devices[i] = v;
	}
	return p;
}

static void preview_free(Ofc__V1__AdoptPreview *p)
{
	for (size_t i = 0; i < p->n_devices; i++)
		free(p->devices[i]);
	free(p->devices);
	free(p);
}

void adopt_show(const Ofc__V1__AdoptPreview *p, bool json)
{
	if (json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		jw_obj_begin(&w);
		jw_key(&w, "fabric");
		jw_str(&w, p->fabric ? p->fabric : "");
		jw_key(&w, "transaction");
		jw_uint(&w, p->transaction);
		jw_key(&w, "generation");
		jw_uint(&w, p->generation);
		jw_key(&w, "devices");
		jw_arr_begin(&w);
		for (size_t i = 0; i < p->n_devices; i++) {
			jw_obj_begin(&w);
			jw_key(&w, "name");
			jw_str(&w, p->devices[i]->name ? p->devices[i]->name : "");
			jw_key(&w, "circuits");
			jw_uint(&w, p->devices[i]->circuits);
			jw_key(&w, "holds");
			jw_str(&w, p->devices[i]->holds ? p->devices[i]->holds : "neither");
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_finish(&w);
		return;
	}
	printf("fabric %s: transaction %llu could not be rolled back; the devices hold:\n",
	       p->fabric ? p->fabric : "", (unsigned long long)p->transaction);
	for (size_t i = 0; i < p->n_devices; i++) {
		const Ofc__V1__AdoptDevice *v = p->devices[i];
		const char *h = v->holds ? v->holds : "";

		printf("  %-16s %u circuits: %s (before: %u, target: %u)\n", v->name ? v->name : "",
		       v->circuits,
		       strcmp(h, "before") == 0	  ? "as before the transaction"
		       : strcmp(h, "target") == 0 ? "its target"
						  : "neither before nor target",
		       v->before_circuits, v->target_circuits);
	}
}

bool adopt_ask(uint64_t txn, uint64_t generation)
{
	char line[16];

	fprintf(stderr,
		"record this as generation %llu and end transaction %llu? The devices are not "
		"changed. [y/N] ",
		(unsigned long long)generation, (unsigned long long)txn);
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
	Ofc__V1__AdoptPreview *p;
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
	p = preview_of(fc.ctl, &a);
	if (!fc.json || !fc.yes)
		adopt_show(p, fc.json);
	if (!fc.yes && !adopt_ask(a.txn, a.generation)) {
		fprintf(stderr, "ofc: not confirmed: nothing recorded; transaction %llu is kept\n",
			(unsigned long long)a.txn);
		preview_free(p);
		ctl_adopt_free(&a);
		fabric_cmd_free(&fc);
		return 1;
	}
	rc = ctl_adopt_commit(fc.ctl, &a, &err);
	if (rc == 0 && fc.json && fc.yes)
		adopt_show(p, true);
	else if (rc == 0)
		printf("adopted: generation %llu records what the devices hold; transaction %llu "
		       "ended\n",
		       (unsigned long long)a.generation, (unsigned long long)a.txn);
	preview_free(p);
	ctl_adopt_free(&a);
	if (rc < 0)
		return fabric_cmd_fail(&fc, &err);
	fabric_cmd_free(&fc);
	return 0;
}
