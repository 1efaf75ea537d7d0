/* ofc ring run FILE: run a verified ring schedule on the ring's MRR agents
 * (controller/reconfig/ring_run.c) and report the realised timeline against
 * Eq. 3 of the OpTree paper. */
#include "controller/cli/internal.h"
#include "proto/ring.pb-c.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "Runs the schedule of a collective on the config's first WDM ring: every\n"
    "step's lightpaths become MRR settings (interface 2f: fibre f clockwise, 2f+1:\n"
    "counter-clockwise), retuned through the ring's driver step by step; the\n"
    "ring ends, or after a refused retune or a lost agent goes back, at its\n"
    "static configuration (the config's lightpaths).\n";

static void chan_str(char *buf, size_t n, const struct mrr_chan *c)
{
	snprintf(buf, n, "n%u/i%u/w%u/%s", c->node, c->iface, c->wl,
		 c->role == MRR_ADD ? "add" : "drop");
}

/* The answer as its message (proto/ring.proto), which --json prints
 * through the encoder. What it allocates is freed by ring_answer_free. */
static void ring_answer(Ofc__V1__RingRunAnswer *a, const struct fabric *f,
			const struct schedule_outcome *o, const struct ring_run_report *rep,
			const struct device_state *cfg, bool overlap, const struct ofc_error *err,
			int rc)
{
	char buf[64];

#define SET(m, f, v) ((m)->has_##f = 1, (m)->f = (v))
	*a = (Ofc__V1__RingRunAnswer)OFC__V1__RING_RUN_ANSWER__INIT;
	a->ring = f->rings[0].name;
	a->collective = (char *)sched_collective_name(o->s.collective);
	a->algorithm = (char *)o->algo;
	SET(a, overlap, overlap);
	SET(a, ok, rc == 0);
	if (rc) {
		a->error = (char *)err->msg;
		SET(a, failed_stage, rep->failed_stage + 1);
		SET(a, failed_step, rep->failed_step + 1);
	}
	SET(a, restored, rep->restored);
	SET(a, steps, o->s.nsteps);
	SET(a, retunes, rep->retunes);
	SET(a, mrr_ops, rep->ops);
	SET(a, early_ops, rep->early_ops);
	SET(a, realised_us, rep->realised_us);
	SET(a, predicted_us, rep->predicted_us);
	SET(a, hidden_us, rep->hidden_us);
	Ofc__V1__RingRunStage *st = xcalloc(rep->nstages + 1, sizeof(*st));
	a->stages = xcalloc(rep->nstages + 1, sizeof(*a->stages));
	for (uint32_t i = 0; i < rep->nstages; i++) {
		const struct ring_run_stage *s = &rep->stage[i];
		Ofc__V1__RingRunStage *m = &st[i];

		*m = (Ofc__V1__RingRunStage)OFC__V1__RING_RUN_STAGE__INIT;
		SET(m, first_step, s->first_step + 1);
		SET(m, steps, s->steps);
		SET(m, retunes, s->retunes);
		SET(m, ops, s->ops);
		SET(m, early_ops, s->early_ops);
		SET(m, tune_us, s->tune_us);
		SET(m, pretune_us, s->pretune_us);
		SET(m, tx_us, s->tx_us);
		SET(m, idle_us, s->idle_us);
		SET(m, start_us, s->start_us);
		SET(m, end_us, s->end_us);
		SET(m, predicted_us, s->predicted_us);
		a->stages[a->n_stages++] = m;
	}
#undef SET
	if (!cfg)
		return;
	Ofc__V1__RingStepChannels *steps = xcalloc(o->s.nsteps + 1, sizeof(*steps));
	a->configs = xcalloc(o->s.nsteps + 1, sizeof(*a->configs));
	for (uint32_t t = 0; t < o->s.nsteps; t++) {
		Ofc__V1__RingStepChannels *m = &steps[t];

		*m = (Ofc__V1__RingStepChannels)OFC__V1__RING_STEP_CHANNELS__INIT;
		m->channels = xcalloc(cfg[t].nch + 1, sizeof(char *));
		for (uint32_t k = 0; k < cfg[t].nch; k++) {
			chan_str(buf, sizeof(buf), &cfg[t].ch[k]);
			m->channels[m->n_channels++] = xstrdup(buf);
		}
		a->configs[a->n_configs++] = m;
	}
}

static void ring_answer_free(Ofc__V1__RingRunAnswer *a)
{
	free(a->n_stages ? a->stages[0] : NULL);
	free(a->stages);
	for (size_t t = 0; t < a->n_configs; t++) {
		for (size_t k = 0; k < a->configs[t]->n_channels; k++)
			free(a->configs[t]->channels[k]);
		free(a->configs[t]->channels);
	}
	free(a->n_configs ? a->configs[0] : NULL);
	free(a->configs);
}

static void print_json(const struct fabric *f, const struct schedule_outcome *o,
		       const struct ring_run_report *rep, const struct device_state *cfg,
		       bool overlap, const struct ofc_error *err, int rc)
{
	Ofc__V1__RingRunAnswer a;
	struct json_writer w;

	ring_answer(&a, f, o, rep, cfg, overlap, err, rc);
	jw_init(&w, stdout, true);
	pb_write_json(&w, &a.base);
	jw_finish(&w);
	ring_answer_free(&a);
}

static void print_text(const struct fabric *f, const struct schedule_outcome *o,
		       const struct ring_run_report *rep, bool overlap)
{
	printf("%s %s on ring %s: %u steps in %u stages, %llu MRR changes in %u retunes%s\n",
	       o->algo, sched_collective_name(o->s.collective), f->rings[0].name, o->s.nsteps,
	       rep->nstages, (unsigned long long)rep->ops, rep->retunes,
	       overlap ? " (with overlap)" : "");
	printf("  stage  steps  retunes  tuning (us)  overlapped (us)  transmission (us)  idle "
	       "(us)  ends at (us)  Eq. 3 (us)\n");
	for (uint32_t i = 0; i < rep->nstages; i++) {
		const struct ring_run_stage *s = &rep->stage[i];

		printf("  %-5u  %-5u  %-7u  %-11.1f  %-15.1f  %-17.1f  %-9.1f  %-12.1f  %.1f\n",
		       i + 1, s->steps, s->retunes, s->tune_us, s->pretune_us, s->tx_us, s->idle_us,
		       s->end_us, s->predicted_us);
	}
	printf("  realised %.1f us against Eq. 3's %.1f us (%+.2f %%); tuning %.1f us waited "
	       "for, %.1f us hidden under transmission\n",
	       rep->realised_us, rep->predicted_us,
	       rep->predicted_us > 0 ? 100.0 * (rep->realised_us / rep->predicted_us - 1) : 0.0,
	       rep->tune_us, rep->hidden_us);
	printf("  ring %s is back at its static configuration\n", f->rings[0].name);
}

struct ring_opts {
	struct fabric_cmd fc;
	struct schedule_query q;
	bool have_coll, show;
};

static int p_collective(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	((struct ring_opts *)base)->have_coll = true;
	return cli_row_collective(row, arg, base, err);
}

#define O(f) offsetof(struct ring_opts, f)
static const struct opt ring_table[] = {
    {"collective", p_collective, O(q.collective), "C",
     "allgather, reduce-scatter, allreduce or alltoall", .flags = OPT_REQUIRED},
    {"algo", opt_str, O(q.algorithm), "A",
     "optree, ring, ne, onestage or wrht (default: the config's algorithm for the collective, "
     "else optree; onestage for alltoall)"},
    {"size", cli_row_size, O(q.size), "M",
     "data per node, e.g. 4MiB (default: the config's collective)"},
    {"overlap", NULL, O(q.overlap), NULL, "tune the next step's idle lightpaths during a step"},
    {"show-configs", NULL, O(show), NULL, "with --json: every step's MRR channels"},
    {"device", cli_row_device, O(fc), "NAME=HOST:PORT", "talk to device NAME at another address",
     .flags = OPT_REPEAT},
    {"state-dir", opt_str, O(fc.state_dir_opt), "DIR",
     "where the lock lives (default $OFC_STATE_DIR, else " OFC_STATE_DIR_DEFAULT ")"},
    {"json", NULL, O(fc.json), NULL, "machine-readable output"},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table ring_cli_table = {"ring", ring_table, sizeof(struct ring_opts)};

static int ring_main(const struct cli_cmd *cmd, struct ring_opts *opts, const char *file);

int cmd_ring(const struct cli_cmd *cmd, int argc, char **argv)
{
	static const struct cli_opts opts = {ring_table, help, NULL};
	struct ring_opts *o = xcalloc(1, sizeof(*o));
	int first, rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		rc = cli_help_opts(cmd, &opts);
	else if (argc < 2 || strcmp(argv[1], "run") != 0)
		rc = cli_usage_error(cmd, "expected 'run'");
	else if (!cli_parse(cmd, &opts, argc - 1, argv + 1, o, &first, &rc))
		;
	else if (first != argc - 2)
		rc = cli_usage_error(cmd, "give one config FILE");
	else if (!o->have_coll)
		rc = cli_usage_error(cmd, "missing --collective");
	else
		rc = ring_main(cmd, o, argv[first + 1]);
	free(o);
	return rc;
}

static int ring_main(const struct cli_cmd *cmd, struct ring_opts *opts, const char *file)
{
	struct fabric_cmd fc = opts->fc;
	struct schedule_query q = opts->q;
	bool show = opts->show;
	struct ofc_error err = {0};

	fc.cmd = cmd;
	if (q.algorithm && schedule_algorithm_compares(q.algorithm, ENGINE_RING))
		return cli_usage_error(cmd, "a run takes one --algo");
	fc.file = file;
	fc.state_dir = ctl_state_dir(fc.state_dir_opt);
	if (fabric_cmd_open(&fc, false, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	if (!fc.fabric->nrings) {
		err = (struct ofc_error){.code = OFC_E_USAGE};
		snprintf(err.msg, sizeof(err.msg), "%s has no WDM ring", fc.file);
		return fabric_cmd_fail(&fc, &err);
	}
	q.fabric = fc.fabric;
	struct schedule_result r;
	if (schedule_compute(&q, &r, NULL, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	struct schedule_outcome *o = r.main;
	int rc = 0;
	if (!o->applies || !o->verified) {
		fprintf(stderr, "ofc ring: %s\n", o->applies ? o->verify_error : o->why);
		schedule_result_free(&r);
		fabric_cmd_free(&fc);
		return o->why_code == OFC_E_INPUT ? 2 : 1;
	}
	const struct optree_result *res = &o->ring.res;
	uint32_t *first = xcalloc(res->nstages + 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < res->nstages; i++)
		first[i] = res->stage[i].first_step;
	struct ring_run_opts ro = {q.overlap, o->ring.tm.step_us, r.ring.mrr_delay * 1e6,
				   r.ring.oeo_delay * 1e6};
	struct ring_run_report rep;
	struct device_state *cfg = NULL;
	if (show && ring_run_configs(fc.fabric, 0, &o->s, &cfg, &err) < 0)
		cfg = NULL;
	rc = ring_run(fc.ctl, 0, &o->s, first, res->nstages, &ro, &rep, &err);
	if (fc.json)
		print_json(fc.fabric, o, &rep, cfg, q.overlap, &err, rc);
	else if (rc == 0)
		print_text(fc.fabric, o, &rep, q.overlap);
	if (rc < 0)
		rc = err.code == OFC_E_USAGE   ? cli_usage_error(cmd, "%s", err.msg)
		     : err.code == OFC_E_INPUT ? (cli_fail(&err), 2)
					       : cli_fail(&err);
	if (cfg) {
		for (uint32_t t = 0; t < o->s.nsteps; t++)
			state_free(&cfg[t]);
		free(cfg);
	}
	ring_run_report_free(&rep);
	free(first);
	schedule_result_free(&r);
	fabric_cmd_free(&fc);
	return rc;
}
