/* A verified, priced direct-connect schedule as one library call, for ofcd
 * (GetSchedule, and the schedule summary in State). The same steps as
 * `ofc schedule` on a topology (controller/cmd_schedule_dc.c): generate
 * (BFB, the expansion construction of Zhao et al. Sec. 5, or a baseline),
 * map transfer ports to NIC ports on a wired fabric, verify with
 * sched_verify against the graph in that port order, and price with the
 * alpha-beta model (Zhao et al. Sec. 3.2) against the Moore / (N-1)/N
 * lower bound. On a fabric with a WDM ring: all-gather by OpTree or its
 * baselines (optree/), with the ring's own parameters, verified against the
 * ring's wavelengths and add/drop limits, as `ofc schedule FILE` does
 * (controller/cmd_schedule_wdm.c, wdm_run.c). The CLI files are not shared:
 * they print as they go, and this file keeps to what the daemon needs. */
#include "controller/schedule/schedule.h"
#include "optree/optree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool fabric_view_init(const struct fabric *f, const struct graph *g, struct fabric_view *v)
{
	memset(v, 0, sizeof(*v));
	if (!f || !f->ports.to || f->ports.n != g->n)
		return false;
	uint32_t n = g->n, d = f->ports.d;
	uint32_t *tails = xmalloc((size_t)n * d * sizeof(uint32_t));
	uint32_t *heads = xmalloc((size_t)n * d * sizeof(uint32_t));
	uint8_t *used = xcalloc((size_t)n * d, 1);

	v->arc2port = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j < d; j++) {
			tails[(size_t)u * d + j] = u;
			heads[(size_t)u * d + j] = f->ports.to[(size_t)j * n + u];
		}
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			v->arc2port[a] = UINT32_MAX;
			for (uint32_t j = 0; j < d; j++)
				if (!used[(size_t)u * d + j] &&
				    heads[(size_t)u * d + j] == g->adj[a]) {
					used[(size_t)u * d + j] = 1;
					v->arc2port[a] = j;
					break;
				}
		}
	v->pg = graph_from_arcs(n, n * d, tails, heads, g->spec);
	v->circuit = xmalloc((size_t)n * d * sizeof(int32_t));
	for (size_t i = 0; i < (size_t)n * d; i++)
		v->circuit[i] = -1;
	for (uint32_t k = 0; k < f->ncircuits; k++) {
		const struct circuit *ci = &f->circuits[k];

		if (ci->src_host < n && ci->src_port < d)
			v->circuit[(size_t)ci->src_host * d + ci->src_port] = (int32_t)k;
	}
	free(tails);
	free(heads);
	free(used);
	return true;
}

void fabric_view_free(struct fabric_view *v)
{
	free(v->arc2port);
	graph_free(v->pg);
	free(v->circuit);
	memset(v, 0, sizeof(*v));
}

void fabric_view_to_nic(const struct fabric_view *v, const struct graph *g, struct schedule *s)
{
	for (size_t i = 0; i < s->nxfers; i++) {
		struct xfer *x = &s->xfers[i];

		if (x->lane != SCHED_NO_LANE)
			x->lane = (uint16_t)v->arc2port[g->off[x->src] + x->lane];
	}
}

uint32_t fabric_view_links(const struct fabric_view *v, const struct fabric *f,
			   const struct schedule *s, struct schedule_link **links)
{
	uint32_t n = f->ports.n, d = f->ports.d, nlinks = 0;
	uint8_t *used = xcalloc((size_t)n * d, 1);

	for (size_t i = 0; i < s->nxfers; i++)
		if (s->xfers[i].lane < d)
			used[(size_t)s->xfers[i].src * d + s->xfers[i].lane] = 1;
	*links = xcalloc((size_t)n * d + 1, sizeof(**links));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j < d; j++)
			if (used[(size_t)u * d + j])
				(*links)[nlinks++] =
				    (struct schedule_link){u, j, f->ports.to[(size_t)j * n + u],
							   v->circuit[(size_t)u * d + j]};
	free(used);
	return nlinks;
}

/* M: the request's, else the fabric's collective of this kind, else its
 * first collective's size. */
static uint64_t pick_size(const struct schedule_query *q)
{
	const struct fabric *f = q->fabric;

	if (q->size || !f || !f->ncollectives)
		return q->size;
	for (uint32_t i = 0; i < f->ncollectives; i++)
		if ((int)f->collectives[i].op == (int)q->collective)
			return f->collectives[i].size;
	return f->collectives[0].size;
}

/* What generate() made, for pricing: BFB knows its tau_B exactly; the
 * rest are priced by the loads their links carry, all-to-all by its routes
 * (cut-through) or its steps, Swing and its torus baselines by their
 * routed figures (Swing's peers are not neighbours). */
enum gen_kind { GEN_BFB, GEN_MEASURED, GEN_A2A, GEN_TORUS };
struct gen {
	enum gen_kind kind;
	struct expand_figures pred; /* expansion: the construction's figures */
	struct a2a_outcome a2a;
	struct torus_figures tf;
};

static bool torus_algo(const char *algo)
{
	return strcmp(algo, "swing") == 0 || strcmp(algo, "recursive-doubling") == 0 ||
	       strcmp(algo, "bucket") == 0;
}

static bool a2a_algo(const char *algo)
{
	return strcmp(algo, "mcf") == 0 || strcmp(algo, "direct") == 0 ||
	       strcmp(algo, "sp-balanced") == 0;
}

/* Swing or recursive doubling, the variant the cost model prefers (as `ofc
 * schedule --variant auto`); bucket = the per-dimension rings. */
static int torus_generate(const struct topo_tree *tree, const char *algo,
			  const struct sched_cost *cost, struct schedule *s,
			  struct torus_figures *tf, struct ofc_error *err)
{
	struct schedule lat = {0};
	struct torus_figures ltf;

	if (strcmp(algo, "bucket") == 0)
		return torus_allreduce(tree, "torus-rings", SWING_BANDWIDTH, true, s, tf, err);
	if (torus_allreduce(tree, algo, SWING_BANDWIDTH, true, s, tf, err) < 0)
		return -1;
	if (torus_allreduce(tree, algo, SWING_LATENCY, true, &lat, &ltf, err) < 0) {
		/* The bandwidth-optimal one stands. */
		ofc_error_clear(err);
		return 0;
	}
	if (cost_time_us(cost, ltf.steps, ltf.tau_b) < cost_time_us(cost, tf->steps, tf->tau_b)) {
		sched_free(s);
		*s = lat;
		*tf = ltf;
	} else {
		sched_free(&lat);
	}
	return 0;
}

static int generate(const struct schedule_query *q, const struct graph *g, const char *algo,
		    const struct sched_cost *cost, struct schedule_result *r, struct gen *gen,
		    struct ofc_error *err)
{
	struct bfb_opts bo = {.chunks = q->chunks, .threads = q->threads};
	struct topo_tree *tree = NULL;
	struct bfb_stats st;
	int rc;

	gen->kind = GEN_MEASURED;
	if (q->collective == SCHED_ALLTOALL) {
		/* The daemon answers within a minute: a larger MCF stops with
		 * theta certified within a gap (metrics theta_optimal, theta_gap). */
		struct a2a_request aq = {.algo = algo,
					 .mcf = {.threads = q->threads, .time_limit = 60}};

		if (!a2a_algo(algo))
			return ofc_error_set(err, OFC_E_INPUT,
					     "'%s' does not schedule alltoall (mcf, direct, "
					     "sp-balanced)",
					     algo);
		gen->kind = GEN_A2A;
		return a2a_build(g, &aq, &r->s, &gen->a2a, err);
	}
	if (a2a_algo(algo))
		return ofc_error_set(err, OFC_E_INPUT, "%s schedules alltoall", algo);
	if (strcmp(algo, "bfb") == 0 || strcmp(algo, "bfb-lp") == 0) {
		if (strcmp(algo, "bfb-lp") == 0)
			bo.method = BFB_LP;
		rc = bfb_schedule(g, q->collective, &bo, &r->s, &st, err);
		if (rc == 0) {
			gen->kind = GEN_BFB;
			r->tau_b = st.tau_b;
			r->tau_b_value = st.tau_b_value;
			snprintf(r->s.algorithm, sizeof(r->s.algorithm), "%s", algo);
		}
		return rc;
	}
	if (topo_build_tree(g->spec, NULL, &tree, err) < 0)
		return -1;
	if (torus_algo(algo)) {
		if (q->collective != SCHED_ALLREDUCE)
			rc = ofc_error_set(err, OFC_E_INPUT, "%s schedules allreduce", algo);
		else
			rc = torus_generate(tree, algo, cost, &r->s, &gen->tf, err);
		if (rc == 0) {
			gen->kind = GEN_TORUS;
			snprintf(r->s.algorithm, sizeof(r->s.algorithm), "%s", algo);
		}
	} else if (strcmp(algo, "expansion") == 0) {
		if (!expand_applies(tree))
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "%s is not a line, degree or power expansion (no "
					   "construction)",
					   g->spec);
		else
			rc = expand_schedule(tree, q->collective, &bo, &r->s, &gen->pred, err);
		if (rc == 0)
			snprintf(r->s.algorithm, sizeof(r->s.algorithm), "expansion");
	} else {
		rc = baseline_schedule(g, tree, algo, q->collective, &r->s, err);
	}
	topo_tree_free(tree);
	return rc;
}

/* All-gather on the fabric's first WDM ring (the CLI's choice too):
 * OpTree or a baseline, verified on the ring, priced by optree's time
 * model (Eq. 3 of the OpTree paper). */
static int ring_schedule(const struct schedule_query *q, struct schedule_result *r,
			 struct ofc_error *err)
{
	const struct fabric *f = q->fabric;
	const struct ring *ring = &f->rings[0];
	const char *algo = q->algorithm && *q->algorithm ? q->algorithm : "optree";
	struct optree_opts opts = {.algo = OPTREE_TREE};
	struct optree_result res;
	struct optree_time tm;
	struct verify_report vr;

	if (q->collective != SCHED_ALLGATHER)
		return ofc_error_set(err, OFC_E_INPUT,
				     "on a WDM ring only allgather is scheduled (OpTree and its "
				     "baselines), not %s",
				     sched_collective_name(q->collective));
	if (optree_algo_parse(algo, &opts.algo) < 0)
		return ofc_error_set(err, OFC_E_INPUT,
				     "unknown algorithm '%s' for a WDM ring (optree, ring, ne, "
				     "onestage)",
				     algo);
	if (q->chunks)
		return ofc_error_set(err, OFC_E_INPUT, "chunks apply to direct-connect topologies");
	struct optree_ring model = ring_optree_model(f, ring, q->size);

	if (optree_ring_check(&model, err) < 0)
		return -1;
	if (model.nodes > OPTREE_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: ring schedules are built for at most %u nodes",
				     model.nodes, OPTREE_MAX_NODES);
	if (optree_build(&model, &opts, &res, err) < 0)
		return -1;
	struct verify_wdm w = optree_verify_wdm(&model);
	struct verify_opts vo = {.wdm = &w};
	res.sched.verified = sched_verify(&res.sched, &vo, &vr) == 0;
	if (!res.sched.verified)
		snprintf(r->verify_error, sizeof(r->verify_error), "%s", vr.error);
	optree_timing(&model, &res, false, &tm);
	res.sched.time_us = tm.time_us;
	res.sched.lower_bound_us = res.lower_bound_steps * tm.step_us;
	sched_set_metric(&res.sched, "max_wavelengths_used", vr.max_wavelengths_used);
	/* The schedule is ours; the rest of the result goes. */
	r->s = res.sched;
	memset(&res.sched, 0, sizeof(res.sched));
	optree_result_free(&res);
	r->tau_b = (struct frac){0, 0};
	r->tau_b_value = NAN;
	return 0;
}

/* On direct-connect topologies. */
static bool dc_algo_known(const char *algo)
{
	return !strcmp(algo, "bfb") || !strcmp(algo, "bfb-lp") || !strcmp(algo, "expansion") ||
	       baseline_known(algo) || torus_algo(algo) || a2a_algo(algo);
}

bool schedule_algorithm_known(const char *algo)
{
	enum optree_algo wdm;

	return dc_algo_known(algo) || optree_algo_parse(algo, &wdm) == 0;
}

int schedule_compute(const struct schedule_query *q, struct schedule_result *r,
		     struct ofc_error *err)
{
	const char *algo = q->algorithm && *q->algorithm     ? q->algorithm
			   : q->collective == SCHED_ALLTOALL ? "mcf"
							     : "bfb";
	struct graph *own = NULL;
	const struct graph *g;
	struct fabric_view v = {0};
	struct sched_cost cost;
	struct gen gen = {0};
	bool nic;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!q->spec && q->fabric && q->fabric->nrings) {
		if (ring_schedule(q, r, err) < 0) {
			sched_free(&r->s);
			if (err->code != OFC_E_RUNTIME)
				err->code = OFC_E_INPUT;
			return -1;
		}
		return 0;
	}
	if (!dc_algo_known(algo))
		return ofc_error_set(err, OFC_E_INPUT,
				     "unknown algorithm '%s' (bfb, bfb-lp, expansion, ring, "
				     "bidir-ring, recursive, torus-rings; swing, "
				     "recursive-doubling, bucket; mcf, direct, sp-balanced)",
				     algo);
	if (q->spec) {
		if (topo_build(q->spec, &own, err) < 0) {
			err->code = OFC_E_INPUT;
			return -1;
		}
		g = own;
	} else if (q->fabric && q->fabric->graph) {
		g = q->fabric->graph;
	} else {
		return ofc_error_set(err, OFC_E_INPUT, "no topology to schedule on");
	}
	r->degree = graph_outdeg(g, 0);
	cost.size = pick_size(q);
	if (!cost.size) {
		rc = ofc_error_set(err, OFC_E_INPUT, "no size: give the data per node");
		goto out;
	}
	cost.alpha = q->fabric && q->fabric->cost.alpha > 0 ? q->fabric->cost.alpha : 10e-6;
	/* B is a node's egress: d links of the config's link bandwidth, or
	 * 100 Gb/s when nothing says otherwise (as `ofc schedule`). */
	cost.bandwidth = q->fabric && q->fabric->cost.link_bandwidth > 0
			     ? q->fabric->cost.link_bandwidth * r->degree
			     : 100e9;
	if (r->degree == 0 || cost_lower_bound(q->collective, g->n, r->degree, &r->lb) < 0) {
		rc = ofc_error_set(err, OFC_E_INPUT, "%s has no links", g->spec);
		goto out;
	}
	if (generate(q, g, algo, &cost, r, &gen, err) < 0) {
		if (err->code != OFC_E_RUNTIME)
			err->code = OFC_E_INPUT;
		goto out;
	}

	/* NIC ports only when the schedule runs on the fabric's own graph. */
	nic = !own && fabric_view_init(q->fabric, g, &v);
	if (nic)
		fabric_view_to_nic(&v, g, &r->s);

	/* Swing's peers are routed, not linked: reduce semantics only. */
	struct verify_report rep;
	struct verify_opts vo = {.graph = gen.kind == GEN_TORUS ? NULL : nic ? v.pg : g};
	r->s.verified = sched_verify(&r->s, &vo, &rep) == 0;
	if (!r->s.verified)
		snprintf(r->verify_error, sizeof(r->verify_error), "%s", rep.error);
	r->measured = rep.sum_max_link_load * r->degree / g->n;
	uint32_t steps = r->s.nsteps;
	switch (gen.kind) {
	case GEN_BFB:
		break;
	case GEN_MEASURED:
		/* Baselines and constructions: tau_B is what the links carry. */
		r->tau_b = frac_from_double(r->measured, 16 * (int64_t)g->n, 1e-7);
		r->tau_b_value = r->measured;
		/* The construction's predicted figure, exact, when it is met. */
		if (frac_valid(gen.pred.tau_b) &&
		    fabs(frac_value(gen.pred.tau_b) - r->measured) < 1e-7)
			r->tau_b = gen.pred.tau_b;
		break;
	case GEN_A2A:
		/* Cut-through routes: one alpha, the busiest link's load;
		 * store-and-forward steps: the per-step loads. */
		r->tau_b_value =
		    gen.a2a.cut_through ? gen.a2a.max_load * r->degree / g->n : r->measured;
		r->tau_b = frac_from_double(r->tau_b_value, 16 * (int64_t)g->n,
					    gen.a2a.cut_through ? 1e-9 : 1e-7);
		if (gen.a2a.cut_through)
			steps = 1;
		sched_set_metric(&r->s, "theta", (double)r->degree / g->n / r->tau_b_value);
		if (gen.a2a.have_mcf) {
			if (gen.a2a.cut_through) /* what the paths keep of the fluid flow */
				sched_set_metric(&r->s, "theta_mcf", gen.a2a.mcf.theta);
			sched_set_metric(&r->s, "theta_optimal", gen.a2a.mcf.optimal);
			sched_set_metric(&r->s, "theta_gap", gen.a2a.mcf.gap);
		}
		break;
	case GEN_TORUS:
		r->tau_b_value = gen.tf.tau_b;
		r->tau_b = frac_from_double(r->tau_b_value, 16 * (int64_t)g->n, 1e-9);
		sched_set_metric(&r->s, "congestion_deficiency", gen.tf.xi);
		break;
	}
	double lb_us = cost_time_us(&cost, r->lb.steps, frac_value(r->lb.tau_b));
	r->s.size_bytes = cost.size;
	r->s.time_us = cost_time_us(&cost, steps, r->tau_b_value);
	r->s.lower_bound_us = lb_us;
	sched_set_metric(&r->s, "tau_l", r->s.nsteps);
	sched_set_metric(&r->s, "tau_b", r->tau_b_value);
	if (gen.kind != GEN_TORUS) /* routed: no links for the verifier to load */
		sched_set_metric(&r->s, "tau_b_measured", r->measured);
	sched_set_metric(&r->s, "alpha_us", cost.alpha * 1e6);
	sched_set_metric(&r->s, "bandwidth_bps", cost.bandwidth);
	if (gen.kind == GEN_BFB && q->chunks)
		sched_set_metric(&r->s, "chunks", q->chunks);

	if (nic) {
		r->nlinks = fabric_view_links(&v, q->fabric, &r->s, &r->links);
		r->fabric = q->fabric;
		r->nic_ports = true;
	}
	rc = 0;
out:
	if (rc < 0)
		sched_free(&r->s);
	a2a_outcome_free(&gen.a2a);
	fabric_view_free(&v);
	graph_free(own);
	return rc;
}

void schedule_result_free(struct schedule_result *r)
{
	sched_free(&r->s);
	free(r->links);
	memset(r, 0, sizeof(*r));
}
