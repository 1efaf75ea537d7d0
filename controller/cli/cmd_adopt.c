/* ofc adopt FILE: the way out of "ROLLBACK INCOMPLETE". While a device
 * refuses the undo (or its read-back fails), every changing command retries
 * the rollback first and is refused with it. adopt reads every device,
 * shows what each holds against the journal's before and target, and on
 * confirmation records that as the fabric's new generation and ends the
 * transaction. It changes no device. A question nobody can answer is not
 * asked: without a terminal on stdin it needs --yes. `ofc --socket PATH
 * adopt` (its row at the end) asks the daemon the same: a preview, the
 * question, the commit. */
#include "controller/cli/internal.h"
#include "controller/cli/remote.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	p->has_transaction = p->has_generation = 1;
	p->transaction = a->txn;
	p->generation = a->generation;
	p->n_devices = c->ndevs;
	p->devices = xcalloc(c->ndevs + 1, sizeof(*p->devices));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		Ofc__V1__AdoptDevice *v = xcalloc(1, sizeof(*v));

		ofc__v1__adopt_device__init(v);
		v->name = (char *)c->devs[i].cfg.name;
		v->has_circuits = v->has_before_circuits = v->has_target_circuits = 1;
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
		cli_print_message(stdout, &p->base);
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
	static const struct opt yes_rows[] = {
	    {"yes", NULL, offsetof(struct fabric_cmd, yes), NULL,
	     "do not ask (needed when stdin is not a terminal)"},
	    {NULL},
	};
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	struct ctl_adopt a;
	Ofc__V1__AdoptPreview *p;
	int rc = fabric_cmd_parse(
	    &fc, cmd, argc, argv, (const struct opt *const[]){yes_rows, NULL},
	    "Ends a transaction whose rollback could not finish (\"ROLLBACK INCOMPLETE\"):\n"
	    "reads every device, shows what it holds against the transaction's before and\n"
	    "target, and on confirmation records that as a new generation. No device is\n"
	    "changed; the next apply goes from what they hold. ofcd keeps the state\n"
	    "directory locked: stop it first.\n",
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

/* ---- through the daemon: ofc --socket PATH adopt ---------------------------------------- */

/* One Adopt (req holds it): a preview (pv NULL) or the commit of the
 * preview's transaction and generation. 0 with *resp answered OK, or an
 * exit status (the answer said on stderr). */
static int adopt_call(struct remote *r, Ofc__V1__Request *req, const Ofc__V1__AdoptPreview *pv,
		      Ofc__V1__Response **resp)
{
	Ofc__V1__Adopt *ad = req->adopt;
	int rc;

	if (pv) {
		ad->has_commit = ad->has_transaction = ad->has_generation = 1;
		ad->commit = true;
		ad->transaction = pv->transaction;
		ad->generation = pv->generation;
	}
	if ((rc = remote_call(r, req, 0, resp)) != 0)
		return rc;
	if ((*resp)->status == OFC__V1__STATUS__STATUS_OK &&
	    (*resp)->body_case == OFC__V1__RESPONSE__BODY_ADOPT)
		return 0;
	r->json = false; /* a refusal is said in words, as the local form's */
	rc = remote_finish(r, *resp);
	return rc ? rc : 1;
}

static int adopt_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	(void)b, (void)argv;
	if (argc)
		return cli_usage_error(r->cmd, "too many arguments");
	if (!r->yes && !isatty(STDIN_FILENO))
		return cli_usage_error(r->cmd,
				       "stdin is not a terminal to confirm on: add --yes to "
				       "record what the devices hold without asking");
	return 0;
}

/* The daemon reads the devices (a preview); the operator confirms what
 * they hold, as `ofc adopt FILE` asks; the daemon records it. */
static int adopt_run(struct remote *r, Ofc__V1__Request *req)
{
	Ofc__V1__Response *pv, *done;
	int rc;

	if ((rc = adopt_call(r, req, NULL, &pv)) != 0)
		return rc;
	if (!r->json || !r->yes)
		adopt_show(pv->adopt, r->json);
	if (!r->yes && !adopt_ask(pv->adopt->transaction, pv->adopt->generation)) {
		fprintf(stderr, "ofc: not confirmed: nothing recorded; transaction %llu is kept\n",
			(unsigned long long)pv->adopt->transaction);
		ofc__v1__response__free_unpacked(pv, NULL);
		return 1;
	}
	rc = adopt_call(r, req, pv->adopt, &done);
	ofc__v1__response__free_unpacked(pv, NULL);
	if (rc != 0)
		return rc;
	if (r->json && r->yes)
		adopt_show(done->adopt, true);
	else
		printf("%s\n", done->message ? done->message : "adopted");
	ofc__v1__response__free_unpacked(done, NULL);
	return 0;
}

static const struct opt adopt_rows[] = {
    {"yes", NULL, REMOTE_O(yes), NULL, "do not ask (needed when stdin is not a terminal)"},
    REMOTE_ROWS_END("the ofc.v1.AdoptPreview as JSON (with --yes: the one recorded)"),
};

const struct cli_table remote_adopt_cli_table = {"--socket PATH adopt", adopt_rows,
						 sizeof(struct remote)};

const struct remote_cmd remote_adopt_cmd = {
    .cmd = {"adopt", "",
	    "end a rollback that cannot finish: the daemon records what the devices hold", NULL},
    .kind = API_ADOPT,
    .opts = {adopt_rows,
	     "Ends a transaction whose rollback could not finish (\"ROLLBACK INCOMPLETE\")\n"
	     "through the daemon (the leader of replicas): it reads every device, shows\n"
	     "what each holds against the transaction's before and target, and on\n"
	     "confirmation records that as a new generation. No device is changed.\n"},
    .timeout = 120,
    .operands = OPERANDS_ANY,
    .build = adopt_build,
    .run = adopt_run,
};
