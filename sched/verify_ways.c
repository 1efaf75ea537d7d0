/* The verifier's ways of checking one schedule (verify.c's sched_verify
 * picks among them): the step loop (verify_run, the all-to-all's holdings
 * by sorting first where asked), or two parts side by side (verify_par),
 * and the fallbacks between them: a split check that says no is checked
 * again, by the step loop in the end, which writes every failing report.
 * verify_window is both for a whole schedule or a chunk of a reduction's
 * shards (verify_chunk.c).
 */
#include "sched/verify_internal.h"

#include <stdlib.h>
#include <string.h>

/* What sched_verify's callers get without options. */
static const struct verify_opts no_opts;

/* A report before the check: right until something is found. */
static void report_start(struct verify_report *report, const struct schedule *s)
{
	memset(report, 0, sizeof(*report));
	report->ok = true;
	report->nsteps = s->nsteps;
	report->ntransfers = s->nxfers;
}

/* One check of s, the all-to-all's holdings by sorting when sorted. */
static int verify_run(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report, bool sorted, struct verify_win *win)
{
	struct vstate v = {.s = s,
			   .o = o ? o : &no_opts,
			   .r = report,
			   .n = s->nodes,
			   .sorted = sorted,
			   .win = win};
	int rc = -1;

	report_start(report, s);
	if (s->nodes < 2 || s->nodes > SCHED_MAX_NODES) {
		verify_fail(&v, 0, SIZE_MAX, "%u nodes: a schedule has 2..%u", s->nodes,
			    SCHED_MAX_NODES);
		return -1;
	}
	if (s->collective < SCHED_ALLGATHER || s->collective > SCHED_REDUCE) {
		verify_fail(&v, 0, SIZE_MAX, "unknown collective");
		return -1;
	}
	if (verify_setup(&v) < 0 || (v.sorted ? verify_a2a_sorted(&v) : verify_run_steps(&v)) < 0)
		goto out;
	if (verify_final_check(&v) < 0)
		goto out;
	rc = 0;
out:
	verify_teardown(&v);
	return rc;
}

/* An allreduce's final check is first a scan of every entry in memory
 * order (verify_final_check): N^2 of them, 268 MB on 4,096 nodes, once the data
 * thread is done. Every thread scans a part of it then; what is not full
 * sends the schedule to the step loop, which reports. */
static bool final_split(const struct vstate *v)
{
	return v->s->collective == SCHED_ALLREDUCE && !v->term;
}

/* Whether sched_verify checks s in two parts (verify_par): a reduction
 * or an all-gather, off networks and WDM rings. Without a graph (Swing,
 * routed peers) the links part has only the ranges to check, but the data
 * part's steps are still the faster. */
static bool par_fits(const struct schedule *s, const struct verify_opts *o)
{
	bool reduce = s->collective == SCHED_REDUCE_SCATTER || s->collective == SCHED_ALLREDUCE;

	o = o ? o : &no_opts;
	return !o->step_loop && !o->network && !o->wdm && s->nxfers >= par_least(o) &&
	       s->nodes >= 2 && s->nodes <= SCHED_MAX_NODES &&
	       (reduce || s->collective == SCHED_ALLGATHER);
}

/* s checked as sched_verify does, on two threads. */
static int verify_par(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report, bool one_pass, bool guess_parts,
		      struct verify_win *win)
{
	struct vstate v = {.s = s, .o = o ? o : &no_opts, .r = report, .n = s->nodes, .win = win};
	struct par_job *j = xcalloc(1, sizeof(*j));
	struct vstate *c = &j->w[1];
	bool again = false;
	int rc = -1;

	report_start(report, s);
	v.par = PAR_DATA; /* setup leaves the inputs to verify_par_inputs */
	v.guess_parts = guess_parts;
	if (verify_setup(&v) < 0)
		goto out;
	if (v.reduce)
		verify_par_inputs(&v);
	atomic_init(&j->stop, false);
	for (int i = 0; i < 2; i++) {
		j->w[i] = v;
		j->w[i].r = &j->r[i];
		j->r[i] = *report;
	}
	j->w[0].par = PAR_DATA;
	/* one pass a step unless the first step says no already */
	j->w[0].one_pass = one_pass && v.reduce && v.read_mark && !verify_step_reads_written(s, 0);
	/* The checks thread's own scratch; the arcs are its alone. */
	c->par = PAR_CHECKS;
	c->dl = NULL;
	c->cap_dl = 0;
	c->pieces = NULL;
	c->cap_pieces = 0;
	c->whole = NULL;
	c->cap_whole = 0;
	c->arc_used = v.o->graph ? xmalloc(((size_t)v.o->graph->m + 1) * sizeof(uint32_t)) : NULL;
	c->par_load = xcalloc((size_t)s->nsteps + 1, sizeof(double));
	j->split_final = final_split(&v);
	/* Without a graph the links part has no links: the data part checks
	 * the rest alone (a second pass over the schedule for that was as
	 * long as the data's own where steps are larger than the cache). */
	if (!v.o->graph && !v.term) {
		j->w[0].alone_odd = (uint16_t)(0xffu | (v.reduce ? 0xf8u : 0x04u) << 8);
		j->ok[1] = true;
		verify_par_run(j, 0, 0);
	} else if (check_threads(v.o) == 1) {
		verify_par_seq(j);
	} else {
		parallel_for(2, 1, v.o->threads, verify_par_run, j);
	}
	if (j->ok[0] && j->ok[1] && j->split_final)
		j->ok[0] = j->ok[1] = verify_par_final(&j->w[0]);
	if (j->ok[0] && j->ok[1]) {
		for (uint32_t t = 0; t < s->nsteps; t++) {
			double load = c->par_load[t];

			if (v.o->step_link_load)
				v.o->step_link_load[t] = load;
			report->sum_max_link_load += load;
			if (load > report->max_link_load)
				report->max_link_load = load;
		}
		/* an all-gather's copies held already: the data thread's */
		report->duplicate_blocks = j->r[0].duplicate_blocks;
		report->split = true;
		if (v.o->graph)
			verify_total_loads(&v);
		rc = 0;
	} else {
		again = true;
	}
	free(c->arc_used);
	free(c->par_load);
	v = j->w[0]; /* the data thread's state, grown */
out:
	verify_teardown(&v);
	free(j);
	/* A step that reads what it writes is no error: two passes a step
	 * then, still in two parts. */
	if (again && v.read_written)
		return verify_par(s, o, report, false, guess_parts, win);
	if (again && v.finer) /* parts finer than the first transfers' */
		return verify_par(s, o, report, one_pass, false, win);
	return again ? verify_run(s, o, report, false, win) : rc;
}

int verify_window(const struct schedule *s, const struct verify_opts *o,
		  struct verify_report *report, struct verify_win *win)
{
	if (win)
		win->final_key = UINT64_MAX;
	if (par_fits(s, o))
		return verify_par(s, o, report, true, true, win);
	return verify_run(s, o, report, false, win);
}

int verify_by_sorting(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report)
{
	return verify_run(s, o, report, true, NULL);
}
