/* A training job's plan executed on the netns testbed (`ofc testbed run
 * FILE --workload W`, workload.h). The plan is made for the testbed (its
 * link rate and alpha; every phase as the executor runs and checks it: a
 * collective over every host, groups together as a demand matrix); then
 * each way asked for (static, per-phase, chosen) runs its iterations:
 * before a phase whose topology is not the one up, the topology's
 * circuits are applied through the caller's hook, timed; each phase's
 * schedule then runs its count (times its rounds) on the circuits, its
 * data checked; measured against predicted per phase, per switching and
 * per iteration, and the ways ranked both ways. The config's own topology
 * is applied again at the end. */
#include "controller/testbed/testbed.h"
#include "proto/workload_run.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

struct phase_row {
	double predicted_us, measured_s; /* one run of the phase (count x rounds runs), mean */
	double switch_pred_us, switch_meas_s;
	uint32_t switched;
	bool data_ok;
	char error[320];
};

struct way_row {
	enum jobplan_kind kind;
	bool ran;
	char error[400];
	struct phase_row *ph;
	double iter_pred_us, iter_meas_s; /* mean over the iterations */
	double first_meas_s;
};

/* A transaction timed to measure the switching's overhead. */
struct calib_txn {
	uint32_t to;	   /* candidate switched to */
	uint32_t changes;  /* the model's count */
	double measured_s; /* the transaction's wall time */
	double switches_s; /* of it, the switches' own time as modelled */
};
#define CALIB_MAX 4

struct testbed_workload_state {
	const struct fabric *f;
	const struct testbed_workload_opts *o;
	const struct testbed_workload_hooks *h;
	struct testbed_net *t;
	struct jobplan_query q;
	struct jobplan_result r;
	struct jobplan_exec *cache; /* nphases x ntopo, made when first run */
	bool *cached;
	/* the overhead measured (ncal transactions) or given */
	struct calib_txn cal[CALIB_MAX];
	uint32_t ncal;
	struct workload own; /* the workload read, when a file */
	struct way_row rows[JOBPLAN_KINDS];
	uint32_t nrows;
	char rank[2][96]; /* the rankings, predicted and measured */
	Ofc__V1__WorkloadRunAnswer answer;
	Ofc__V1__WorkloadRunOverhead ov;
};

/* Way k's iteration priced with the switches' own time alone (its
 * assignment as chosen with the overhead): what the model said before the
 * overhead was in it. */
static double bare_iteration_us(const struct jobplan_result *r, enum jobplan_kind k)
{
	const struct jobplan_way *w = &r->way[k];
	struct jobplan_result z = *r;
	uint32_t P = r->nphases, ch;
	double it = 0, full;

	z.overhead = (struct jobplan_overhead){0};
	for (uint32_t p = 0; p < P; p++) {
		uint32_t prev = (p + P - 1) % P;

		it += w->phase_us[p];
		if (P > 1)
			it += jobplan_switch_us(&z, w->topo[prev], w->topo[p],
						&r->cost[(size_t)prev * r->ntopo + w->topo[prev]],
						w->phase_us[prev], -1, &full, &ch);
	}
	return it;
}

/* Make candidate k the fabric's circuits through the caller's hook; *secs
 * the wall time of the plan and the apply (the devices' switching, the
 * emulator's delays, the testbed's netlink work and the journal). */
static int apply_topo(struct testbed_workload_state *w, uint32_t k, double *secs,
		      struct ofc_error *err)
{
	double t0 = now_seconds();
	int rc = w->h->apply(w->h->ctx, &w->r.topo[k], err);

	*secs = now_seconds() - t0;
	return rc;
}

static uint32_t config_topo(const struct jobplan_result *r)
{
	for (uint32_t k = 0; k < r->ntopo; k++)
		if (r->topo[k].origin == JOBPLAN_CONFIG)
			return k;
	return UINT32_MAX;
}

/* a + b x: least squares over the transactions, a, b >= 0 (b alone, through
 * the origin, when every transaction changed as many circuits: the
 * testbed's work is per circuit, a transaction's own small beside it). */
static struct jobplan_overhead fit(const struct calib_txn *c, uint32_t n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	struct jobplan_overhead o = {0};

	for (uint32_t i = 0; i < n; i++) {
		double x = c[i].changes, y = fmax(0, c[i].measured_s - c[i].switches_s);

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	double det = n * sxx - sx * sx;
	if (n >= 2 && det > 1e-9 * sxx * n) {
		o.change_s = (n * sxy - sx * sy) / det;
		o.txn_s = (sy - o.change_s * sx) / n;
	}
	if (!(det > 1e-9 * sxx * n) || n < 2 || o.txn_s < 0 || o.change_s < 0) {
		o.txn_s = 0;
		o.change_s = sxx > 0 ? sxy / sxx : 0;
	}
	return o;
}

/* The switching's overhead on this testbed: the model prices the
 * switches' own time (the emulator's per-change delay), but a transaction
 * here also reads every device, moves each changed circuit's veth pair and
 * routes by netlink in the hosts' namespaces and writes the journal, which
 * took 14 times the switches' time (bench/results/workload.md). So before the ways
 * run: a transaction from the config's topology to each topology the ways
 * use (up to CALIB_MAX / 2 of them) and one back, timed, less the switches'
 * modelled time, fitted as a + b x changes into r->overhead. */
static int calibrate(struct testbed_workload_state *w, struct ofc_error *err)
{
	struct jobplan_result *r = &w->r;
	uint32_t cfg = config_topo(r), ntos = 0, tos[CALIB_MAX / 2];
	double secs;

	if (cfg == UINT32_MAX || apply_topo(w, cfg, &secs, err) < 0)
		return cfg == UINT32_MAX ? 0 : -1;
	for (int k = 0; k < JOBPLAN_KINDS; k++) {
		if (!r->way[k].have || !(w->o->ways & (1u << k)) || k == JOBPLAN_KEEP)
			continue;
		for (uint32_t p = 0; p < r->nphases && ntos < ARRAY_SIZE(tos); p++) {
			uint32_t t = r->way[k].topo[p], i;

			for (i = 0; i < ntos && tos[i] != t; i++)
				;
			if (i == ntos && t != cfg)
				tos[ntos++] = t;
		}
	}
	for (uint32_t i = 0; i < ntos; i++)
		for (int back = 0; back < 2; back++) {
			uint32_t from = back ? tos[i] : cfg, to = back ? cfg : tos[i];
			struct calib_txn *c = &w->cal[w->ncal];
			double full;

			jobplan_switch_us(r, from, to, NULL, 0, -1, &full, &c->changes);
			c->to = to;
			c->switches_s = full * 1e-6;
			if (apply_topo(w, to, &c->measured_s, err) < 0)
				return -1;
			w->ncal++;
		}
	if (w->ncal)
		r->overhead = fit(w->cal, w->ncal);
	return 0;
}

/* One run of phase p on candidate k: its schedule (made once) run count x
 * rounds times; the summed seconds, or -1. */
static double run_phase(struct testbed_workload_state *w, uint32_t p, uint32_t k, bool *data_ok,
			char *why, size_t whylen)
{
	struct jobplan_exec *x = &w->cache[(size_t)p * w->r.ntopo + k];
	const struct wl_phase *ph = &w->r.workload->phases[p];
	struct ofc_error err = {0};
	struct exec_net net;
	double total = 0;

	if (!w->cached[(size_t)p * w->r.ntopo + k]) {
		if (jobplan_exec_phase(&w->q, &w->r, p, k, x, &err) < 0) {
			ofc_error_str(&err, why, whylen);
			return -1;
		}
		w->cached[(size_t)p * w->r.ntopo + k] = true;
	}
	testbed_exec_net(w->t, (uint16_t)w->o->port, &net);
	for (uint32_t i = 0; i < ph->count * x->rounds; i++) {
		struct exec_opts eo = {.size = x->size,
				       .deadline = now_seconds() + w->o->timeout,
				       .max_memory = w->o->max_memory,
				       .block_weight = x->block_weight};
		struct exec_result res;

		if (exec_run(&x->s, &net, &eo, &res, &err) < 0) {
			ofc_error_str(&err, why, whylen);
			return -1;
		}
		total += res.seconds;
		*data_ok = *data_ok && res.data_ok;
		if (!res.data_ok)
			snprintf(why, whylen, "wrong data: %s", res.first_bad);
		exec_result_free(&res);
	}
	return total;
}

/* The circuits are new: the testbed's lanes again. */
static int reread(struct testbed_workload_state *w, struct ofc_error *err)
{
	return w->h->reread(w->h->ctx, w->t, err);
}

static void run_way(struct testbed_workload_state *w, struct way_row *row)
{
	const struct jobplan_way *way = &w->r.way[row->kind];
	uint32_t P = w->r.nphases, K = w->o->iterations, cur;
	struct ofc_error err = {0};
	double secs;

	row->ph = xcalloc(P, sizeof(*row->ph));
	row->iter_pred_us = way->iter_us;
	for (uint32_t p = 0; p < P; p++) {
		row->ph[p].predicted_us = way->phase_us[p];
		row->ph[p].switch_pred_us = way->switch_us[p];
		row->ph[p].data_ok = true;
	}
	if (apply_topo(w, way->topo[0], &row->first_meas_s, &err) < 0 || reread(w, &err) < 0) {
		snprintf(row->error, sizeof(row->error), "switching to %.200s: %.180s",
			 w->r.topo[way->topo[0]].name, err.msg);
		return;
	}
	cur = way->topo[0];
	for (uint32_t it = 0; it < K; it++)
		for (uint32_t p = 0; p < P; p++) {
			struct phase_row *ph = &row->ph[p];

			if (way->topo[p] != cur) {
				if (apply_topo(w, way->topo[p], &secs, &err) < 0 ||
				    reread(w, &err) < 0) {
					snprintf(row->error, sizeof(row->error),
						 "switching to %.200s: %.180s",
						 w->r.topo[way->topo[p]].name, err.msg);
					return;
				}
				cur = way->topo[p];
				ph->switch_meas_s += secs / K;
				ph->switched++;
				row->iter_meas_s += secs / K;
			}
			double s = run_phase(w, p, way->topo[p], &ph->data_ok, ph->error,
					     sizeof(ph->error));
			if (s < 0) {
				snprintf(row->error, sizeof(row->error), "phase %.60s: %.300s",
					 w->r.workload->phases[p].name, ph->error);
				return;
			}
			ph->measured_s += s / K;
			row->iter_meas_s += s / K;
		}
	/* An iteration is a cycle: the switching from the last phase's
	 * topology to the first's belongs to each (as predicted), and the
	 * loop made it K - 1 times. */
	if (way->topo[0] != cur) {
		if (apply_topo(w, way->topo[0], &secs, &err) < 0 || reread(w, &err) < 0) {
			snprintf(row->error, sizeof(row->error), "switching to %.200s: %.180s",
				 w->r.topo[way->topo[0]].name, err.msg);
			return;
		}
		row->ph[0].switch_meas_s += secs / K;
		row->ph[0].switched++;
		row->iter_meas_s += secs / K;
	}
	row->ran = true;
}

/* The ways that ran, by predicted (measured == false) or measured
 * iteration, fastest first, as "static = chosen < per-phase". */
static void ranking(const struct way_row *rows, uint32_t n, bool measured, char *buf, size_t len)
{
	uint32_t idx[JOBPLAN_KINDS], m = 0;
	size_t at = 0;

	for (uint32_t i = 0; i < n; i++)
		if (rows[i].ran)
			idx[m++] = i;
	for (uint32_t i = 1; i < m; i++) /* (insertion: three at most) */
		for (uint32_t j = i; j > 0; j--) {
			const struct way_row *a = &rows[idx[j - 1]], *b = &rows[idx[j]];
			double x = measured ? a->iter_meas_s : a->iter_pred_us;
			double y = measured ? b->iter_meas_s : b->iter_pred_us;

			if (y >= x)
				break;
			uint32_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	buf[0] = 0;
	for (uint32_t i = 0; i < m && at < len; i++) {
		/* predictions of one assignment tie ("static = chosen") */
		bool tie = i && !measured &&
			   rows[idx[i]].iter_pred_us <= rows[idx[i - 1]].iter_pred_us * (1 + 1e-12);

		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       !i    ? ""
				       : tie ? " = "
					     : " < ",
				       jobplan_kind_name(rows[idx[i]].kind));
	}
}

/* The answer as its message (proto/workload_run.proto), which --json
 * prints through the encoder; the strings are borrowed from w and rank,
 * the arrays freed by run_answer_free. */
static void run_answer(Ofc__V1__WorkloadRunAnswer *a, Ofc__V1__WorkloadRunOverhead *ov,
		       const struct testbed_workload_state *w, const struct way_row *rows,
		       uint32_t n, char rank[2][96])
{
	const struct jobplan_result *r = &w->r;

#define SET(m, f, v) ((m)->has_##f = 1, (m)->f = (v))
	*a = (Ofc__V1__WorkloadRunAnswer)OFC__V1__WORKLOAD_RUN_ANSWER__INIT;
	*ov = (Ofc__V1__WorkloadRunOverhead)OFC__V1__WORKLOAD_RUN_OVERHEAD__INIT;
	a->fabric = r->fabric->name;
	a->workload = r->workload->name ? r->workload->name : "";
	SET(a, iterations, w->o->iterations);
	SET(a, link_rate_bps, w->t->rate);
	SET(a, alpha_s, w->q.alpha);
	a->chosen = (char *)jobplan_kind_name(r->chosen_kind);
	SET(ov, measured, !w->o->overhead_set);
	SET(ov, transaction_s, r->overhead.txn_s);
	SET(ov, change_s, r->overhead.change_s);
	/* none when the overhead was given: run_answer_free frees the array
	 * through its first element, so an empty one must not be allocated */
	Ofc__V1__WorkloadRunTransaction *tx = w->ncal ? xcalloc(w->ncal, sizeof(*tx)) : NULL;
	ov->transactions = xcalloc(w->ncal + 1, sizeof(*ov->transactions));
	for (uint32_t i = 0; i < w->ncal; i++) {
		Ofc__V1__WorkloadRunTransaction *m = &tx[i];

		*m = (Ofc__V1__WorkloadRunTransaction)OFC__V1__WORKLOAD_RUN_TRANSACTION__INIT;
		m->to = r->topo[w->cal[i].to].name;
		SET(m, changes, w->cal[i].changes);
		SET(m, measured_s, w->cal[i].measured_s);
		SET(m, switches_s, w->cal[i].switches_s);
		ov->transactions[ov->n_transactions++] = m;
	}
	a->switch_overhead = ov;
	ranking(rows, n, false, rank[0], sizeof(rank[0]));
	ranking(rows, n, true, rank[1], sizeof(rank[1]));
	a->ranking_predicted = rank[0];
	a->ranking_measured = rank[1];
	Ofc__V1__WorkloadRunWay *ways = xcalloc(n + 1, sizeof(*ways));
	a->ways = xcalloc(n + 1, sizeof(*a->ways));
	for (uint32_t i = 0; i < n; i++) {
		const struct way_row *row = &rows[i];
		Ofc__V1__WorkloadRunWay *m = &ways[i];

		*m = (Ofc__V1__WorkloadRunWay)OFC__V1__WORKLOAD_RUN_WAY__INIT;
		a->ways[a->n_ways++] = m;
		m->way = (char *)jobplan_kind_name(row->kind);
		SET(m, ran, row->ran);
		if (!row->ran) {
			m->error = (char *)row->error;
			continue;
		}
		SET(m, iteration_predicted_s, row->iter_pred_us * 1e-6);
		SET(m, iteration_predicted_switches_alone_s,
		    bare_iteration_us(r, row->kind) * 1e-6);
		SET(m, iteration_measured_s, row->iter_meas_s);
		SET(m, first_switch_measured_s, row->first_meas_s);
		Ofc__V1__WorkloadRunPhase *ph = xcalloc(r->nphases + 1, sizeof(*ph));
		m->phases = xcalloc(r->nphases + 1, sizeof(*m->phases));
		for (uint32_t p = 0; p < r->nphases; p++) {
			const struct phase_row *pr = &row->ph[p];
			Ofc__V1__WorkloadRunPhase *q = &ph[p];

			*q = (Ofc__V1__WorkloadRunPhase)OFC__V1__WORKLOAD_RUN_PHASE__INIT;
			q->phase = r->workload->phases[p].name;
			q->topology = r->topo[r->way[row->kind].topo[p]].name;
			SET(q, predicted_s, pr->predicted_us * 1e-6);
			SET(q, measured_s, pr->measured_s);
			SET(q, switch_predicted_s, pr->switch_pred_us * 1e-6);
			SET(q, switch_measured_s, pr->switch_meas_s);
			SET(q, data_ok, pr->data_ok);
			m->phases[m->n_phases++] = q;
		}
	}
#undef SET
}

static void run_answer_free(Ofc__V1__WorkloadRunAnswer *a)
{
	Ofc__V1__WorkloadRunOverhead *ov = a->switch_overhead;

	free(ov->n_transactions ? ov->transactions[0] : NULL);
	free(ov->transactions);
	for (size_t i = 0; i < a->n_ways; i++) {
		free(a->ways[i]->n_phases ? a->ways[i]->phases[0] : NULL);
		free(a->ways[i]->phases);
	}
	free(a->n_ways ? a->ways[0] : NULL);
	free(a->ways);
}

static void workload_state_free(struct testbed_workload_state *w)
{
	for (uint32_t i = 0; i < w->nrows; i++)
		free(w->rows[i].ph);
	for (size_t i = 0; w->cache && i < (size_t)w->r.nphases * w->r.ntopo; i++)
		jobplan_exec_free(&w->cache[i]);
	free(w->cache);
	free(w->cached);
	jobplan_result_free(&w->r);
	workload_free(&w->own);
	free(w);
}

/* The ways in the order they run, each that the plan has and o asks for:
 * its row, 1 when it failed or its data was wrong. */
static int run_ways(struct testbed_workload_state *w)
{
	static const enum jobplan_kind order[] = {JOBPLAN_STATIC, JOBPLAN_PER_PHASE,
						  JOBPLAN_CHOSEN};
	int status = 0;

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		enum jobplan_kind k = order[i];
		struct way_row *row = &w->rows[w->nrows];

		if (!w->r.way[k].have || !(w->o->ways & (1u << k)))
			continue;
		memset(row, 0, sizeof(*row));
		row->kind = k;
		w->nrows++;
		run_way(w, row);
		if (!row->ran)
			status = 1;
		for (uint32_t p = 0; row->ph && p < w->r.nphases; p++)
			if (!row->ph[p].data_ok)
				status = 1;
	}
	return status;
}

int testbed_workload_run(const struct fabric *f, const struct testbed_workload_opts *o,
			 struct testbed_net *net, const struct testbed_workload_hooks *h,
			 struct testbed_workload *out, struct ofc_error *err)
{
	struct testbed_workload_state *w = xcalloc(1, sizeof(*w));

	*out = (struct testbed_workload){0};
	w->f = f;
	w->o = o;
	w->h = h;
	w->t = net;
	/* (serial: the run switches between phases, hiding nothing; the
	 * switching's overhead comes after, given or measured) */
	struct jobplan_request rq = {.q = {.fabric = f,
					   .executable = true,
					   .serial_switching = true,
					   .link_rate = net->rate,
					   .alpha = o->alpha,
					   .alternatives = 2},
				     .workload = o->workload,
				     .alternatives_set = true,
				     .overhead_set = true};
	if (jobplan_plan_workload(&rq, &w->own, &w->r, err) < 0) {
		workload_free(&w->own);
		free(w);
		return -1;
	}
	w->q = rq.q;
	w->q.workload = w->r.workload;
	/* The ways weighed again with the switching's overhead, given or
	 * measured here. */
	if (o->overhead_set) {
		w->r.overhead = o->overhead;
	} else if (calibrate(w, err) < 0) {
		out->calibration_failed = true;
		workload_state_free(w);
		return -1;
	}
	if (w->r.overhead.txn_s > 0 || w->r.overhead.change_s > 0) {
		for (int k = 0; k < JOBPLAN_KINDS; k++)
			jobplan_way_free(&w->r.way[k]);
		jobplan_ways(&w->r, -1, 1, w->r.way, &w->r.chosen_kind);
	}
	size_t nc = (size_t)w->r.nphases * w->r.ntopo;
	w->cache = xcalloc(nc + 1, sizeof(*w->cache));
	w->cached = xcalloc(nc + 1, sizeof(bool));
	out->status = run_ways(w);
	/* back to the config's own topology */
	uint32_t cfg = config_topo(&w->r);
	struct ofc_error back = {0};
	double secs;

	if (cfg != UINT32_MAX && apply_topo(w, cfg, &secs, &back) < 0) {
		snprintf(out->back_error, sizeof(out->back_error), "back to %s: %s",
			 w->r.topo[cfg].name, back.msg);
		out->status = 1;
	}
	run_answer(&w->answer, &w->ov, w, w->rows, w->nrows, w->rank);
	out->answer = &w->answer;
	out->st = w;
	return 0;
}

void testbed_workload_free(struct testbed_workload *out)
{
	if (!out->st)
		return;
	run_answer_free(&out->st->answer);
	workload_state_free(out->st);
	out->st = NULL;
}
