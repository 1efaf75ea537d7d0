/* ofc plan | apply | try | confirm: the commands that change devices. Plan,
 * apply and try run the use case reconfigure_run (controller/reconfig/
 * reconfigure.c: the lock and a crash's repair, the plan, the aim, the
 * checks, the transaction) and print what it did; plan --workload runs
 * jobplan_plan_workload. What they share with status and testbed is in
 * fabric_common.c. */
#include "controller/cli/internal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- output -------------------------------------------------------------------- */

static void write_plan_text(const struct ctl *c, FILE *out)
{
	struct strbuf sb = {0};

	ctl_plan_text(c, &sb);
	fputs(sb.buf ? sb.buf : "", out);
	sb_free(&sb);
}

/* --horizon: the candidates, the chosen one marked, and why. */
static void write_choice_text(const struct ctl_choice *ch, FILE *out)
{
	fprintf(out, "targets weighed over %g run%s of %s%s%s%s:\n", ch->horizon,
		ch->horizon == 1 ? "" : "s", ch->priced, ch->left_out[0] ? " (" : "", ch->left_out,
		ch->left_out[0] ? " not priced)" : "");
	fprintf(out, "    %-50s %7s %12s %12s %12s\n", "target", "moves", "reconfigure",
		"collectives", "total");
	for (uint32_t i = 0; i < ch->n; i++) {
		const struct ctl_candidate *k = &ch->cand[i];
		char r[32], col[32], tot[32];

		fmt_duration_long(r, sizeof(r), k->reconfig_s);
		fmt_duration_long(col, sizeof(col), k->collective_us * 1e-6);
		fmt_duration_long(tot, sizeof(tot), k->total_s);
		fprintf(out, "  %c %-50s %7u %12s %12s %12s%s\n", (int)i == ch->chosen ? '*' : ' ',
			k->label, k->moves, r, col, tot, k->fits ? "" : "  (over --max-moves)");
	}
	if (ch->not_candidate[0])
		fprintf(out, "  (not kept as is: %s)\n", ch->not_candidate);
	fprintf(out, "%s\n", ch->why);
}

/* ---- plan ---------------------------------------------------------------------- */

static bool is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ofc plan --workload: the job's plan, from the devices as read
 * (the circuits in place); nothing is changed. */
static int plan_workload(struct fabric_cmd *fc, const struct ofc_error *unread)
{
	struct ofc_error err = {0};
	struct workload own;
	struct jobplan_result r;
	int rc = 0;

	if (fc->horizon_set || fc->relabel || fc->partition || fc->max_moves_set)
		return cli_usage_error(fc->cmd, "--workload plans a job: not with --horizon, "
						"--relabel, --partition or --max-moves");
	if (strcmp(fc->workload, "config") == 0 && !fc->fabric->workload.present)
		return cli_usage_error(fc->cmd, "%s has no workload section", fc->file);
	const struct device_state **actual = unread ? NULL : ctl_switch_states(fc->ctl);
	struct ofc_clock clk;
	struct cli_progress prog;
	cli_clock_init(&clk, &prog, fc->cmd, 0, fc->json);
	struct jobplan_request q = {
	    .q = {.fabric = fc->fabric,
		  .actual = (const struct device_state *const *)actual,
		  .mcf_time_limit = fc->mcf_time_limit,
		  .alternatives = fc->alternatives,
		  .overhead = fc->overhead,
		  .clock = &clk},
	    .workload = fc->workload,
	    .alternatives_set = fc->alternatives_set,
	    .overhead_set = fc->overhead_set,
	};

	rc = jobplan_plan_workload(&q, &own, &r, &err);
	cli_progress_clear(&clk);
	free(actual);
	if (rc < 0) {
		workload_free(&own);
		return cli_fail(&err);
	}
	if (fc->plot && jobplan_plot(&r, fc->plot, &err) < 0)
		rc = cli_fail(&err);
	if (rc == 0) {
		if (unread)
			fprintf(stderr,
				"ofc plan: note: %s; the circuits in place are not weighed\n",
				unread->msg);
		if (fc->json)
			print_jobplan_json(&r, fc->plot != NULL, stdout);
		else
			print_jobplan_text(&r, stdout);
	}
	jobplan_result_free(&r);
	workload_free(&own);
	return rc;
}

int cmd_plan(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	int rc = fabric_cmd_parse(
	    &fc, cmd, argc, argv,
	    (const struct opt *const[]){fabric_cmd_relabel_rows, fabric_cmd_plan_rows, NULL},
	    "Reads every device of the fabric and prints what would change to "
	    "reach the\nconfig's target: cross-connects to remove and add, MRRs "
	    "to retune, testbed\ncircuits and routes. Circuits that stay are not "
	    "touched.\n",
	    false);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (fc.in_place && !fc.workload) {
		fabric_cmd_free(&fc);
		return cli_usage_error(cmd, "--in-place goes with --workload");
	}
	if (fc.stage_topology || fc.max_loss_set) {
		/* A staged change's plan: the config and the target alone. */
		if (!fc.stage_topology || !fc.max_loss_set)
			rc = cli_usage_error(cmd, "--topology and --max-loss go together: the "
						  "stages of a change to that topology");
		else if (fc.workload || fc.relabel || fc.no_relabel || fc.partition ||
			 fc.horizon_set || fc.max_moves_set || fc.alternatives_set || fc.plot ||
			 fc.mcf_time_limit > 0 || fc.overhead_set || fc.noverrides)
			rc = cli_usage_error(cmd,
					     "--max-loss plans the stages of a change of the "
					     "whole fabric's topology from the config's, reading "
					     "no device: not with --workload, --relabel, "
					     "--no-relabel, --partition, --horizon, --max-moves, "
					     "--alternatives, --plot, --time-limit, "
					     "--switch-overhead or --device");
		else
			rc = plan_stages(&fc);
		fabric_cmd_free(&fc);
		return rc;
	}
	enum out_format plot_format;

	/* a --plot name it cannot write (x.png) is refused before any work */
	if (fc.plot &&
	    cli_output_format(cmd, "--plot", fc.plot, NULL, NULL, FMT_SVG, FMT_SVG, &plot_format)) {
		fabric_cmd_free(&fc);
		return 2;
	}
	/* A job's plan is pricing: it needs the config alone, not the state
	 * directory (a fresh machine has none) nor the devices, which it
	 * reads only when asked to weigh the circuits they hold. */
	if (fc.workload && !fc.in_place) {
		if (fabric_open(fc.file, &fc.fabric, &err) < 0)
			return fabric_cmd_fail(&fc, &err);
		ofc_error_set(&err, OFC_E_USAGE, "no device was read (--in-place reads them)");
		rc = plan_workload(&fc, &err);
		fabric_cmd_free(&fc);
		return rc;
	}
	/* A plan only reads: a mistyped --state-dir is an error, not a new
	 * empty directory that hides the fabric's record. */
	fc.reads_only = true;
	if (!is_directory(fc.state_dir)) {
		rc = cli_usage_error(cmd,
				     "state directory '%s' does not exist (ofc apply creates it)",
				     fc.state_dir);
		fabric_cmd_free(&fc);
		return rc;
	}
	if (fabric_cmd_open(&fc, true, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	/* Repair a crashed transaction first, unless another ofc is busy:
	 * then only read. */
	if (ctl_lock(fc.ctl, &err) == 0) {
		bool did;

		if (ctl_recover(fc.ctl, &did, &err) < 0)
			return fabric_cmd_fail(&fc, &err);
	} else {
		fprintf(stderr, "ofc plan: note: %s\n", err.msg);
		ofc_error_clear(&err);
	}
	if (fc.plot && !fc.workload)
		rc = cli_usage_error(cmd, "--plot goes with --workload");
	else if (fc.mcf_time_limit > 0 && !fc.workload)
		rc = cli_usage_error(cmd, "--time-limit goes with --workload");
	else if (fc.overhead_set && !fc.workload)
		rc = cli_usage_error(cmd, "--switch-overhead goes with --workload");
	if (rc) {
		fabric_cmd_free(&fc);
		return rc;
	}
	if (fc.workload) {
		/* The devices say what is in place; a job's plan needs none. */
		bool read = ctl_plan(fc.ctl, &err) == 0;

		rc = plan_workload(&fc, read ? NULL : &err);
		fabric_cmd_free(&fc);
		return rc;
	}
	/* (repaired above, or only read) */
	if (fabric_cmd_reconfigure(&fc, false, true, 0, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	const struct reconfigure_result *r = &fc.result;
	if (fc.json) {
		txn_write_plan_json(&fc); /* ofcd's dry run's answer (txn_json.c) */
	} else {
		if (r->chose)
			write_choice_text(&r->choice, stdout);
		write_plan_text(fc.ctl, stdout);
	}
	fabric_cmd_free(&fc);
	return 0;
}

/* ---- apply and try ------------------------------------------------------------------ */

static void report_failure(const struct ctl_result *res)
{
	if (!res->rolled_back)
		return;
	if (res->rollback_ok)
		fprintf(stderr,
			"ofc: rolled back transaction %llu: every device is verified back at its "
			"previous state; the fabric is where it was\n",
			(unsigned long long)res->txn);
	else
		fprintf(stderr,
			"ofc: ROLLBACK INCOMPLETE for transaction %llu: some device could not be "
			"restored or verified; the journal is kept and the next ofc command that "
			"touches the fabric will finish or undo it\n",
			(unsigned long long)res->txn);
}

static void write_result(const struct fabric_cmd *fc, const struct ctl_result *res, bool ok,
			 const char *outcome, const struct ofc_error *err)
{
	if (fc->json) {
		txn_write_json(fc, res, ok, outcome, err); /* txn_json.c */
	} else if (ok) {
		printf("%s transaction %llu: %u operation%s on %u device%s in %.3f s\n", outcome,
		       (unsigned long long)res->txn, res->ops_applied,
		       res->ops_applied == 1 ? "" : "s", fc->ctl->ndevs,
		       fc->ctl->ndevs == 1 ? "" : "s", res->seconds);
	}
}

/* s as one shell word: as it is when nothing in it needs quoting, else in
 * single quotes (a ' inside as '\''). Caller frees. */
static char *shell_quote(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "/._-+:,=@%") == strlen(s))
		return xstrdup(s);
	sb_putc(&sb, '\'');
	for (; *s; s++)
		if (*s == '\'')
			sb_puts(&sb, "'\\''");
		else
			sb_putc(&sb, *s);
	sb_putc(&sb, '\'');
	return sb_detach(&sb);
}

static int apply_common(const struct cli_cmd *cmd, int argc, char **argv, double trial)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	int rc;

	rc = fabric_cmd_parse(
	    &fc, cmd, argc, argv,
	    (const struct opt *const[]){trial > 0 ? fabric_cmd_trial_rows : fabric_cmd_dry_run_rows,
					fabric_cmd_relabel_rows, NULL},
	    trial > 0 ? "Applies like 'ofc apply', then waits --timeout S seconds (default 60) "
			"for\n'ofc confirm'. Without it, or on Ctrl-C, the fabric is put back "
			"as it was.\nExit 0 when confirmed, 1 when reverted or failed.\n"
		      : "Plans, records the intent in the journal (fsync), applies per device, "
			"reads\nback and compares, then commits. On any failure it undoes what "
			"was applied in\nreverse order, reads back again and exits 1 saying "
			"whether the fabric is back\nwhere it was. --dry-run only plans.\n",
	    false);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* try --max-loss: the stages shown, as plan --max-loss shows them
	 * (plan_stages.c, the one code that makes and prints them) */
	if (fc.max_loss_set) {
		if (fc.relabel || fc.relabel_budget > 0 || fc.no_relabel || fc.partition ||
		    fc.max_moves_set || fc.noverrides || fc.timeout > 0)
			rc = cli_usage_error(
			    cmd, "--max-loss shows the stages of a change of the "
				 "whole fabric's topology, reading no device and "
				 "applying nothing: not with --relabel, --relabel-budget, "
				 "--no-relabel, --partition, --max-moves, --device or --timeout");
		else
			rc = try_stages(&fc);
		fabric_cmd_free(&fc);
		return rc;
	}
	/* The stages publish a schedule before each one's circuits go and
	 * wait for the jobs to take it: only ofcd, which serves the jobs, can. */
	if (fc.daemon_max_loss || fc.daemon_grace) {
		rc = cli_usage_error(
		    cmd,
		    "%s: a staged apply runs through ofcd, which publishes each stage's schedule "
		    "before its circuits go: give --socket PATH (or --server URL); without "
		    "them, apply moves every circuit in one transaction",
		    fc.daemon_max_loss ? "--max-loss" : "--grace");
		fabric_cmd_free(&fc);
		return rc;
	}
	if (fc.timeout == 0)
		fc.timeout = 60;
	if (fabric_cmd_open(&fc, true, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	/* repaired, planned, aimed and checked, then applied unless a dry run */
	rc = fabric_cmd_reconfigure(&fc, true, fc.dry_run, trial > 0 ? fc.timeout : 0, &err);
	if (rc < 0 && fc.result.stage != RECONF_APPLY)
		return fabric_cmd_fail(&fc, &err);
	if (fc.dry_run) {
		if (fc.json) /* as ofcd answers a dry run, and `ofc plan --json` (txn_json.c) */
			txn_write_plan_json(&fc);
		else
			write_plan_text(fc.ctl, stdout);
		fabric_cmd_free(&fc);
		return 0;
	}
	const struct ctl_result res = fc.result.txn;
	double deadline = fc.result.trial_deadline;
	if (rc < 0) {
		rc = cli_fail(&err);
		report_failure(&res);
		write_result(&fc, &res, false, res.rolled_back ? "rolled-back" : "failed", &err);
		fabric_cmd_free(&fc);
		return rc;
	}
	if (trial <= 0) {
		write_result(&fc, &res, true, "committed", &err);
		fabric_cmd_free(&fc);
		return 0;
	}

	/* Wait for `ofc confirm`; SIGINT/SIGTERM end the wait early (and so
	 * revert), taken synchronously so no handler state is needed. */
	sigset_t set, old;
	bool confirmed = false;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (!fc.json) {
		/* The confirm must look where the trial is: the same
		 * --state-dir, which plain 'ofc confirm' would not use. */
		char *quoted = fc.state_dir_opt ? shell_quote(fc.state_dir_opt) : NULL;

		printf("applied (trial %llu); run 'ofc confirm%s%s' within %.0f s to keep it, or "
		       "it is reverted\n",
		       (unsigned long long)res.txn, quoted ? " --state-dir " : "",
		       quoted ? quoted : "", fc.timeout);
		fflush(stdout);
		free(quoted);
	}
	for (;;) {
		struct timespec tick = {0, 100 * 1000 * 1000};
		struct timespec now;

		if (ctl_trial_confirmed(fc.ctl)) {
			confirmed = true;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &now);
		if ((double)now.tv_sec + now.tv_nsec / 1e9 >= deadline)
			break;
		if (sigtimedwait(&set, NULL, &tick) > 0) {
			fprintf(stderr, "interrupted: reverting\n");
			break;
		}
	}
	struct ctl_result fin;
	rc = ctl_trial_finish(fc.ctl, confirmed, &fin, &err);
	sigprocmask(SIG_SETMASK, &old, NULL);
	fin.ops_applied = res.ops_applied;
	fin.seconds = res.seconds;
	if (rc < 0) {
		rc = cli_fail(&err);
		report_failure(&fin);
		write_result(&fc, &fin, false, "failed", &err);
	} else if (confirmed) {
		write_result(&fc, &fin, true, "confirmed", &err);
	} else {
		ofc_error_set(&err, OFC_E_RUNTIME,
			      "not confirmed within %.0f s: reverted; the fabric is where it was",
			      fc.timeout);
		rc = cli_fail(&err);
		write_result(&fc, &fin, false, "reverted", &err);
	}
	fabric_cmd_free(&fc);
	return rc;
}

int cmd_apply(const struct cli_cmd *cmd, int argc, char **argv)
{
	return apply_common(cmd, argc, argv, 0);
}

int cmd_try(const struct cli_cmd *cmd, int argc, char **argv)
{
	return apply_common(cmd, argc, argv, 1);
}

/* ---- confirm ------------------------------------------------------------------------ */

int cmd_confirm(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char *name = NULL;
	uint64_t txn = 0;
	int rc = fabric_cmd_parse(&fc, cmd, argc, argv, NULL,
				  "Keeps the configuration a running 'ofc try' applied. With "
				  "FILE, the trial of\nthat fabric; without, the only trial "
				  "waiting.\n",
				  true);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (fc.file && config_load(fc.file, &f, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	rc = ctl_confirm(fc.state_dir, f ? f->name : NULL, &name, &txn, &err);
	fabric_free(f);
	if (rc < 0)
		return fabric_cmd_fail(&fc, &err);
	/* Wait (briefly) for the trial to commit, to say what happened. */
	struct ctl_record r;
	bool pending = true, kept = false;
	for (int i = 0; i < 100 && pending; i++) {
		if (ctl_load_record(fc.state_dir, name, &r, &err) < 0)
			break;
		pending = r.have_journal;
		kept = !pending && r.have_state && r.generation == txn;
		ctl_record_free(&r);
		if (pending)
			usleep(50 * 1000);
	}
	rc = pending || kept ? 0 : 1;
	if (fc.json) /* the TransactionInfo, as apply and try print theirs (txn_json.c) */
		txn_write_confirm_json(&fc, name, txn,
				       pending ? "confirmed"
				       : kept  ? "committed"
					       : "reverted");
	else if (pending)
		printf("confirmed trial %llu of fabric %s; 'ofc try' will commit it\n",
		       (unsigned long long)txn, name);
	else if (kept)
		printf("confirmed trial %llu of fabric %s: committed\n", (unsigned long long)txn,
		       name);
	else
		fprintf(stderr,
			"ofc: trial %llu of fabric %s was reverted before the confirmation "
			"arrived\n",
			(unsigned long long)txn, name);
	free(name);
	fabric_cmd_free(&fc);
	return rc;
}
