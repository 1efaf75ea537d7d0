/* ofc testbed run FILE --workload W: the job's plan executed on
 * the netns testbed. The plan is made for the testbed (its link rate and
 * alpha; every phase as the executor runs and checks it: a collective over
 * every host, groups together as a demand matrix); then each way asked for
 * (static, per-phase, chosen) runs its iterations: before a phase whose
 * topology is not the one up, the topology's circuits are applied as one
 * transaction (the switches, the emulator with its per-change delay, and
 * the testbed's veths and routes), timed; each phase's schedule then runs
 * its count (times its rounds) on the circuits, its data checked; measured
 * against predicted per phase, per switching and per iteration, and the
 * ways ranked both ways. The config's own topology is applied again at the
 * end. */
#include "controller/cli/internal.h"
#include "proto/workload_run.pb-c.h"

#include <math.h>
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

struct wrun {
	struct fabric_cmd *fc;
	const struct workload_run_opts *o;
	struct testbed_net *t;
	struct jobplan_query q;
	struct jobplan_result r;
	struct jobplan_exec *cache; /* nphases x ntopo, made when first run */
	bool *cached;
	/* the overhead measured (ncal transactions) or given */
	struct calib_txn cal[CALIB_MAX];
	uint32_t ncal;
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

/* Make candidate k the fabric's circuits: one transaction on a shallow
 * copy of the fabric whose target is k's; *secs the wall time of the plan
 * and the apply (the devices' switching, the emulator's delays, the
 * testbed's netlink work and the journal). */
static int apply_topo(struct wrun *w, uint32_t k, double *secs, struct ofc_error *err)
{
	const struct jobplan_topo *t = &w->r.topo[k];
	struct fabric tf = *w->fc->fabric;
	struct ctl_opts o = {.state_dir = w->fc->state_dir,
			     .overrides = (const char *const *)w->fc->overrides,
			     .noverrides = w->fc->noverrides};
	struct ctl *ctl;
	/* (committed: a trial deadline left each switching open, and the
	 * next transaction's recovery rolled it back first) */
	struct reconfigure_req q = {.lock = true, .recover = true, .skip_empty = true};
	struct reconfigure_result r;
	double t0 = now_seconds();
	int rc;

	tf.graph = t->g;
	tf.ports = t->pm;
	tf.circuits = t->circuits;
	tf.ncircuits = t->ncircuits;
	tf.degraded = NULL;
	tf.topology.spec = t->spec ? t->spec : (char *)t->name; /* (what the record names) */
	if (ctl_open(&tf, &o, &ctl, err) < 0)
		return -1;
	q.ctl = ctl;
	rc = reconfigure_run(&q, &r, err);
	reconfigure_result_free(&r);
	ctl_close(ctl);
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
 * took 14 times the switches' time (bench/RESULTS.md). So before the ways
 * run: a transaction from the config's topology to each topology the ways
 * use (up to CALIB_MAX / 2 of them) and one back, timed, less the switches'
 * modelled time, fitted as a + b x changes into r->overhead. */
static int calibrate(struct wrun *w, struct ofc_error *err)
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
static double run_phase(struct wrun *w, uint32_t p, uint32_t k, bool *data_ok, char *why,
			size_t whylen)
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
static int reread(struct wrun *w, struct ofc_error *err)
{
	testbed_net_free(w->t);
	return testbed_net_read(w->fc->fabric, w->fc->state_dir, w->t, err);
}

static void run_way(struct wrun *w, struct way_row *row)
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

static void overhead_text(const struct wrun *w)
{
	const struct jobplan_overhead *o = &w->r.overhead;

	if (w->o->overhead_set) {
		printf(
		    "switching overhead (given): %.4f s a transaction + %.4f s a changed circuit, "
		    "beyond the switches' own time\n",
		    o->txn_s, o->change_s);
		return;
	}
	if (!w->ncal) {
		printf("switching overhead: not measured (no topology to switch to)\n");
		return;
	}
	printf("switching overhead measured in %u transactions:", w->ncal);
	for (uint32_t i = 0; i < w->ncal; i++)
		printf("%s %u changes %.3f s (the switches' %.3f s)", i ? ";" : "",
		       w->cal[i].changes, w->cal[i].measured_s, w->cal[i].switches_s);
	printf("\n  -> %.4f s a transaction + %.4f s a changed circuit beyond the switches' own "
	       "time, in the predictions below\n",
	       o->txn_s, o->change_s);
}

static void print_text(const struct wrun *w, const struct way_row *rows, uint32_t n)
{
	const struct jobplan_result *r = &w->r;
	char rate[32], rank[96];

	printf("testbed %s: workload %s, %u iteration%s, links %s, alpha %.0f us\n",
	       r->fabric->name, r->workload->name ? r->workload->name : "", w->o->iterations,
	       w->o->iterations == 1 ? "" : "s",
	       w->t->rate > 0 ? testbed_rate_str(w->t->rate, rate, sizeof(rate)) : "unshaped",
	       w->q.alpha * 1e6);
	overhead_text(w);
	for (uint32_t i = 0; i < n; i++) {
		const struct way_row *row = &rows[i];

		if (!row->ran) {
			printf("%-10s failed: %s\n", jobplan_kind_name(row->kind), row->error);
			continue;
		}
		printf("%-10s iteration predicted %.4f s (%.4f s with the switches' time alone), "
		       "measured %.4f s, ratio %.3f (first switching %.3f s)\n",
		       jobplan_kind_name(row->kind), row->iter_pred_us * 1e-6,
		       bare_iteration_us(r, row->kind) * 1e-6, row->iter_meas_s,
		       row->iter_meas_s / (row->iter_pred_us * 1e-6), row->first_meas_s);
		for (uint32_t p = 0; p < r->nphases; p++) {
			const struct phase_row *ph = &row->ph[p];

			printf("  %-12s %-36.36s predicted %.4f s measured %.4f s ratio %.3f",
			       r->workload->phases[p].name, r->topo[r->way[row->kind].topo[p]].name,
			       ph->predicted_us * 1e-6, ph->measured_s,
			       ph->measured_s / (ph->predicted_us * 1e-6));
			if (ph->switched)
				printf("; switching predicted %.4f s, measured %.4f s",
				       ph->switch_pred_us * 1e-6, ph->switch_meas_s);
			printf("  %s\n", ph->data_ok ? "data ok" : "WRONG DATA");
		}
	}
	ranking(rows, n, false, rank, sizeof(rank));
	printf("ranking predicted: %s; ", rank);
	ranking(rows, n, true, rank, sizeof(rank));
	printf("measured: %s\n", rank);
}

/* The answer as its message (proto/workload_run.proto), which --json
 * prints through the encoder; the strings are borrowed from w and rank,
 * the arrays freed by run_answer_free. */
static void run_answer(Ofc__V1__WorkloadRunAnswer *a, Ofc__V1__WorkloadRunOverhead *ov,
		       const struct wrun *w, const struct way_row *rows, uint32_t n,
		       char rank[2][96])
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
	Ofc__V1__WorkloadRunTransaction *tx = xcalloc(w->ncal + 1, sizeof(*tx));
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

static void print_json(const struct wrun *w, const struct way_row *rows, uint32_t n)
{
	Ofc__V1__WorkloadRunAnswer a;
	Ofc__V1__WorkloadRunOverhead ov;
	struct json_writer j;
	char rank[2][96];

	run_answer(&a, &ov, w, rows, n, rank);
	jw_init(&j, stdout, true);
	pb_write_json(&j, &a.base);
	jw_finish(&j);
	run_answer_free(&a);
}

int testbed_run_workload(struct fabric_cmd *fc, const struct workload_run_opts *o,
			 struct testbed_net *t)
{
	struct workload own;
	struct ofc_error err = {0};
	struct wrun w = {.fc = fc, .o = o, .t = t};
	struct way_row rows[JOBPLAN_KINDS];
	uint32_t n = 0;
	int status = 0;

	if (strcmp(o->workload, "config") == 0 && !fc->fabric->workload.present)
		return cli_usage_error(fc->cmd, "%s has no workload section", fc->file);
	/* (serial: the run switches between phases, hiding nothing; the
	 * switching's overhead comes after, given or measured) */
	struct jobplan_request rq = {.q = {.fabric = fc->fabric,
					   .executable = true,
					   .serial_switching = true,
					   .link_rate = t->rate,
					   .alpha = o->alpha,
					   .alternatives = 2},
				     .workload = o->workload,
				     .alternatives_set = true,
				     .overhead_set = true};
	if (jobplan_plan_workload(&rq, &own, &w.r, &err) < 0) {
		workload_free(&own);
		return cli_fail(&err);
	}
	w.q = rq.q;
	w.q.workload = w.r.workload;
	/* The ways weighed again with the switching's overhead, given or
	 * measured here. */
	if (o->overhead_set) {
		w.r.overhead = o->overhead;
	} else if (calibrate(&w, &err) < 0) {
		fprintf(stderr, "ofc testbed run: measuring the switching: %s\n", err.msg);
		jobplan_result_free(&w.r);
		workload_free(&own);
		return 1;
	}
	if (w.r.overhead.txn_s > 0 || w.r.overhead.change_s > 0) {
		for (int k = 0; k < JOBPLAN_KINDS; k++)
			jobplan_way_free(&w.r.way[k]);
		jobplan_ways(&w.r, -1, 1, w.r.way, &w.r.chosen_kind);
	}
	size_t nc = (size_t)w.r.nphases * w.r.ntopo;
	w.cache = xcalloc(nc + 1, sizeof(*w.cache));
	w.cached = xcalloc(nc + 1, sizeof(bool));
	static const enum jobplan_kind order[] = {JOBPLAN_STATIC, JOBPLAN_PER_PHASE,
						  JOBPLAN_CHOSEN};
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		enum jobplan_kind k = order[i];

		if (!w.r.way[k].have || !(o->ways & (1u << k)))
			continue;
		memset(&rows[n], 0, sizeof(rows[n]));
		rows[n].kind = k;
		run_way(&w, &rows[n]);
		if (!rows[n].ran)
			status = 1;
		for (uint32_t p = 0; rows[n].ph && p < w.r.nphases; p++)
			if (!rows[n].ph[p].data_ok)
				status = 1;
		n++;
	}
	/* back to the config's own topology */
	for (uint32_t k = 0; k < w.r.ntopo; k++)
		if (w.r.topo[k].origin == JOBPLAN_CONFIG) {
			double secs;

			if (apply_topo(&w, k, &secs, &err) < 0) {
				fprintf(stderr, "ofc testbed run: back to %s: %s\n",
					w.r.topo[k].name, err.msg);
				status = 1;
			}
			break;
		}
	if (fc->json)
		print_json(&w, rows, n);
	else
		print_text(&w, rows, n);
	for (uint32_t i = 0; i < n; i++)
		free(rows[i].ph);
	for (size_t i = 0; i < nc; i++)
		jobplan_exec_free(&w.cache[i]);
	free(w.cache);
	free(w.cached);
	jobplan_result_free(&w.r);
	workload_free(&own);
	return status;
}
