/* A workload's phase on a candidate topology, priced through the schedule
 * pipeline (schedule_compute: every schedule verified). A phase over every
 * host is the collective as `ofc schedule` runs it (the config's topology
 * through the config itself, so a one-phase workload is exactly what `ofc
 * schedule FILE` gives). A phase in groups is priced two ways and the
 * faster kept:
 *
 *   own links  each group on the links among its members (the induced
 *              subgraph, when it is strongly connected): the collective's
 *              own algorithm (BFB, the MCF) in every group; the groups'
 *              schedules are renumbered onto the topology and verified
 *              together, their link loads summed step by step
 *              (sched_verify_groups; induced subgraphs of disjoint groups
 *              share no link, which this checks rather than assumes);
 *   together   every group's traffic as one demand matrix over the whole
 *              topology (what a routed schedule of the collective moves:
 *              all-to-all and sendrecv their bytes, all-gather and
 *              reduce-scatter M/k to every other member, allreduce both one
 *              after the other), the all-to-all MCF with per-pair demands,
 *              verified with each block weighed by its demand. */
#include "controller/jobplan/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct graph *jobplan_induced(const struct graph *g, const uint32_t *mem, uint32_t k,
			      uint32_t **gmap)
{
	uint32_t *idx = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t)), m = 0;
	uint32_t *tails = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	uint32_t *heads = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	*gmap = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	memset(idx, 0xff, ((size_t)g->n + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < k; i++)
		idx[mem[i]] = i;
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t a = g->off[mem[i]]; a < g->off[mem[i] + 1]; a++)
			if (idx[g->adj[a]] != UINT32_MAX && g->adj[a] != mem[i]) {
				tails[m] = i;
				heads[m] = idx[g->adj[a]];
				(*gmap)[m++] = a;
			}
	char *spec = xasprintf("%s among %u", g->spec ? g->spec : "?", k);
	struct graph *h = graph_from_arcs(k, m, tails, heads, spec);

	free(spec);
	free(idx);
	free(tails);
	free(heads);
	return h;
}

static bool strongly_connected(const struct graph *g)
{
	struct topo_facts f;

	if (g->n < 2 || g->m == 0)
		return false;
	topo_facts(g, &f, 1);
	return f.strongly_connected;
}

/* The request every pricing shares: the fabric's cost model, the MCF's
 * limits. */
static struct schedule_query base_query(const struct jobplan_ctx *c)
{
	const struct jobplan_query *q = c->q;

	return (struct schedule_query){
	    .fabric = c->f,
	    .threads = q->threads,
	    .time_limit = q->mcf_time_limit > 0 ? q->mcf_time_limit : 20,
	    .steps_try = q->steps_try > 0 ? q->steps_try : 2,
	    .clock = q->clock,
	    .reduced = SCHEDULE_REDUCED_NEVER,
	};
}

/* The testbed's link rate and alpha, when it is the testbed's plan: a
 * host's egress is its links on g at that rate. */
static void set_rates(const struct jobplan_ctx *c, struct schedule_query *q, const struct graph *g)
{
	uint32_t d = 0;

	if (c->q->alpha > 0) {
		q->alpha = c->q->alpha;
		q->alpha_set = true;
	}
	for (uint32_t u = 0; g && u < g->n; u++)
		d = graph_outdeg(g, u) > d ? graph_outdeg(g, u) : d;
	if (c->q->link_rate > 0 && d) {
		q->bandwidth = c->q->link_rate * d;
		q->bandwidth_set = true;
	}
}

/* The priced schedule for the testbed (x, when asked): moved out of the
 * result, its lanes the hosts' ports (from CSR positions on g where the
 * pipeline did not give NIC ports), with its size, weights and rounds. */
static void keep_exec(const struct jobplan_topo *t, struct schedule_result *sr,
		      const struct schedule_query *q, uint32_t n, double rounds,
		      const struct jobplan_cost *out, struct jobplan_exec *x)
{
	if (!x)
		return;
	x->s = sr->main->s;
	sr->main->s = (struct schedule){0};
	for (size_t i = 0; !sr->nic_ports && i < x->s.nxfers; i++) {
		struct xfer *y = &x->s.xfers[i];

		if (y->lane != SCHED_NO_LANE)
			y->lane = (uint16_t)t->arc_tx[sr->g->off[y->src] + y->lane];
	}
	x->size = q->size;
	x->rounds = (uint32_t)rounds;
	x->predicted_us = out->us;
	if (q->demand) {
		x->block_weight = xmalloc((size_t)n * n * sizeof(double));
		memcpy(x->block_weight, q->demand, (size_t)n * n * sizeof(double));
	}
}

/* Mark the host ports a transfer's arcs use: port j of a host per arc of
 * g (arc_tx at the tail, arc_rx at the head), or with NIC ports the lane
 * itself at both ends (circuits join equal ports). */
static void mark_ports(const struct jobplan_ctx *c, const struct jobplan_topo *t,
		       const struct graph *g, const struct schedule *s, bool nic_ports,
		       const uint32_t *node, const uint32_t *gmap, const struct graph *h,
		       uint8_t *used)
{
	uint32_t P = c->d;

	for (size_t i = 0; i < s->nxfers; i++) {
		const struct xfer *x = &s->xfers[i];
		uint32_t u = x->src;

		if (x->lane == SCHED_NO_LANE)
			continue;
		for (uint32_t k = 0; k < xfer_arcs(x); k++) {
			uint32_t a, tx, rx, from, to;

			if (nic_ports) {
				from = u;
				to = k + 1 == xfer_arcs(x) ? x->dst
							   : u; /* runs: not with NIC ports */
				tx = rx = x->lane;
				a = UINT32_MAX;
			} else {
				uint32_t ha = (h ? h : g)->off[u] + x->lane;

				a = gmap ? gmap[ha] : ha;
				from = node ? node[u] : u;
				to = g->adj[a];
				tx = t->arc_tx[a];
				rx = t->arc_rx[a];
			}
			if (tx < P)
				used[(size_t)from * P + tx] = 1;
			if (rx < P)
				used[(size_t)to * P + rx] = 1;
			u = h ? h->adj[h->off[u] + x->lane] : a == UINT32_MAX ? u : g->adj[a];
		}
	}
}

/* The outcome's figures into out (time scaled by rounds: an allreduce as
 * two rounds of its traffic). 0, or -1 with why. */
static int take(const struct schedule_result *sr, double rounds, struct jobplan_cost *out)
{
	const struct schedule_outcome *o = sr->main;

	if (o && o->applies && sr->kind == SCHEDULE_RING) { /* a WDM ring's: OpTree's model */
		out->us = rounds * o->time_us;
		out->bw_us = fmin(out->us, rounds * o->steps * o->ring.tm.step_us);
		out->lat_us = out->us - out->bw_us;
		out->steps = (uint32_t)(rounds * o->steps);
		out->verified = o->verified;
		snprintf(out->algo, sizeof(out->algo), "%s", o->algo);
		if (!o->verified) {
			snprintf(out->why, sizeof(out->why), "not verified: %.170s",
				 o->verify_error);
			return -1;
		}
		return 0;
	}
	if (!o || !o->applies) {
		snprintf(out->why, sizeof(out->why), "%.190s", o ? o->why : "nothing scheduled");
		return -1;
	}
	if (!o->verified) {
		snprintf(out->why, sizeof(out->why), "not verified: %.170s", o->verify_error);
		return -1;
	}
	double steps = o->alphas; /* routed: a host's forwards too */

	out->us = rounds * o->time_us;
	out->lat_us = rounds * steps * sr->cost.alpha * 1e6;
	out->bw_us = out->us - out->lat_us;
	out->steps = (uint32_t)(rounds * steps);
	out->verified = true;
	out->theta = o->is_a2a ? o->theta : 0;
	out->mcf_s = o->have_mcf ? o->mcf.seconds : 0;
	snprintf(out->algo, sizeof(out->algo), "%s", o->algo);
	return 0;
}

/* A schedule_compute that failed outright, as why. */
static void failed(struct jobplan_cost *out, const struct ofc_error *err)
{
	snprintf(out->why, sizeof(out->why), "%.190s", err->msg);
}

/* m (k x k, relative or bytes) normalised in place; *demand NULL when
 * uniform; returns the mean pair (0: none). */
static double normalise(double *m, uint32_t k, const double **demand)
{
	double mean;
	bool uniform;
	struct ofc_error e = {0};

	if (schedule_demand_normalise(m, k, &mean, &uniform, &e) < 0)
		return 0;
	*demand = uniform ? NULL : m;
	return mean;
}

/* The whole fabric: the collective as `ofc schedule` runs it. */
static void price_all(const struct jobplan_ctx *c, const struct wl_phase *ph,
		      struct jobplan_topo *t, struct jobplan_cost *out, struct jobplan_exec *x)
{
	struct schedule_query q = base_query(c);
	struct schedule_result sr;
	struct ofc_error err = {0};
	double *m = NULL;

	set_rates(c, &q, t->g);
	q.graph = t->origin == JOBPLAN_CONFIG ? NULL : t->spec_built ? NULL : t->g;
	q.spec = t->origin != JOBPLAN_CONFIG && t->spec_built ? t->spec : NULL;
	q.collective = (enum sched_collective)ph->collective;
	q.size = ph->size;
	if (ph->collective == SCHED_ALLTOALL && ph->matrix) {
		m = xmalloc((size_t)c->n * c->n * sizeof(double));
		memcpy(m, ph->matrix, (size_t)c->n * c->n * sizeof(double));
		normalise(m, c->n, &q.demand);
		q.demand_n = c->n;
	}
	if (schedule_compute(&q, &sr, NULL, &err) < 0) {
		failed(out, &err);
		free(m);
		return;
	}
	if (take(&sr, 1, out) == 0) {
		out->ok = true;
		snprintf(out->how, sizeof(out->how), "%s over every host", out->algo);
		if (sr.kind == SCHEDULE_DIRECT)
			mark_ports(c, t, sr.g, &sr.main->s, sr.nic_ports, NULL, NULL, NULL,
				   out->ports_used);
		if (sr.kind == SCHEDULE_DIRECT)
			keep_exec(t, &sr, &q, c->n, 1, out, x);
	}
	schedule_result_free(&sr);
	free(m);
}

/* A group's k x k demand (all-to-all: its matrix or NULL; sendrecv: the
 * chain), into m; *demand as normalise. */
static double group_demand(const struct wl_phase *ph, uint32_t k, double *m, const double **demand)
{
	*demand = NULL;
	if (ph->collective == WL_SENDRECV) {
		memset(m, 0, (size_t)k * k * sizeof(double));
		for (uint32_t i = 0; i + 1 < k; i++)
			m[ph->reverse ? (size_t)(i + 1) * k + i : (size_t)i * k + i + 1] = 1;
	} else if (ph->matrix) {
		memcpy(m, ph->matrix, (size_t)k * k * sizeof(double));
	} else {
		return 1;
	}
	return normalise(m, k, demand);
}

/* The groups on their own links (see the file comment). */
static void price_own(const struct jobplan_ctx *c, const struct wl_phase *ph,
		      struct jobplan_topo *t, struct jobplan_cost *out)
{
	const struct wl_kind *kind = &c->w->kinds[ph->kind];
	uint32_t k = kind->size, G = kind->ngroups, n = c->n;
	const struct graph *g = t->g;
	struct schedule *s = xcalloc(G, sizeof(*s));
	struct verify_opts *vo = xcalloc(G, sizeof(*vo));
	const struct schedule **sp = xcalloc(G, sizeof(*sp));
	const struct verify_opts **vp = xcalloc(G, sizeof(*vp));
	uint8_t *absent = xmalloc((size_t)G * n);
	double *dm = xmalloc((size_t)k * k * sizeof(double));
	double **bw = xcalloc(G, sizeof(*bw));
	uint32_t done = 0;
	bool ok = true;
	struct jobplan_cost one = {0};

	memset(absent, 1, (size_t)G * n);
	for (uint32_t gi = 0; gi < G && ok; gi++) {
		const uint32_t *mem = kind->host + (size_t)gi * k;
		uint32_t *gmap;
		struct graph *h = jobplan_induced(g, mem, k, &gmap);
		struct schedule_query q = base_query(c);
		struct schedule_result sr;
		struct ofc_error err = {0};

		if (!strongly_connected(h)) {
			snprintf(out->why, sizeof(out->why),
				 "group %u of %s is not connected by its own links", gi + 1,
				 kind->name);
			ok = false;
		} else {
			bool a2a =
			    ph->collective == SCHED_ALLTOALL || ph->collective == WL_SENDRECV;

			set_rates(c, &q, h);
			q.graph = h;
			q.collective = a2a ? SCHED_ALLTOALL : (enum sched_collective)ph->collective;
			q.size = ph->size;
			if (a2a) { /* (sendrecv: the chain's pairs at k x the mean, M each) */
				group_demand(ph, k, dm, &q.demand);
				q.demand_n = k;
			}
			if (schedule_compute(&q, &sr, NULL, &err) < 0) {
				failed(out, &err);
				ok = false;
			} else {
				one = (struct jobplan_cost){0};
				if (take(&sr, 1, &one) < 0) {
					snprintf(out->why, sizeof(out->why), "group %u: %.170s",
						 gi + 1, one.why);
					ok = false;
				} else {
					if (one.us > out->us) { /* the slowest group's */
						out->us = one.us;
						out->lat_us = one.lat_us;
						out->bw_us = one.bw_us;
						out->steps = one.steps;
						out->theta = one.theta;
						snprintf(out->algo, sizeof(out->algo), "%s",
							 one.algo);
					}
					out->mcf_s += one.mcf_s;
					mark_ports(c, t, g, &sr.main->s, false, mem, gmap, h,
						   out->ports_used);
					/* onto the topology: lanes of g, nodes of g */
					s[gi] = sr.main->s;
					sr.main->s = (struct schedule){0};
					for (size_t x = 0; x < s[gi].nxfers; x++) {
						struct xfer *y = &s[gi].xfers[x];
						uint32_t a = gmap[h->off[y->src] + y->lane];

						y->lane = (uint16_t)(a - g->off[mem[y->src]]);
					}
					sched_renumber(&s[gi], n, mem);
					for (uint32_t i = 0; i < k; i++)
						absent[(size_t)gi * n + mem[i]] = 0;
					vo[gi] =
					    (struct verify_opts){.graph = g,
								 .absent = absent + (size_t)gi * n,
								 .threads = 1};
					if (q.demand) {
						bw[gi] = xcalloc((size_t)n * n, sizeof(double));
						for (uint32_t i = 0; i < k; i++)
							for (uint32_t j = 0; j < k; j++)
								bw[gi]
								  [(size_t)mem[i] * n + mem[j]] =
								      q.demand[(size_t)i * k + j];
						vo[gi].block_weight = bw[gi];
					}
					sp[gi] = &s[gi];
					vp[gi] = &vo[gi];
					done++;
				}
				schedule_result_free(&sr);
			}
		}
		graph_free(h);
		free(gmap);
	}
	if (ok) {
		struct verify_report rep;

		if (sched_verify_groups(sp, vp, done, &rep) < 0) {
			snprintf(out->why, sizeof(out->why), "the groups together: %.170s",
				 rep.error);
			ok = false;
		}
	}
	out->ok = ok;
	out->verified = ok;
	if (ok)
		snprintf(out->how, sizeof(out->how), "%s in each %s group, own links", out->algo,
			 kind->name);
	for (uint32_t gi = 0; gi < G; gi++) {
		sched_free(&s[gi]);
		free(bw[gi]);
	}
	free(s);
	free(vo);
	free(sp);
	free(vp);
	free(absent);
	free(dm);
	free(bw);
}

/* Every group's traffic as one demand matrix over the whole topology. */
static void price_together(const struct jobplan_ctx *c, uint32_t p, const struct wl_phase *ph,
			   struct jobplan_topo *t, struct jobplan_cost *out, struct jobplan_exec *x)
{
	struct schedule_query q = base_query(c);
	struct schedule_result sr;
	struct ofc_error err = {0};
	double *m, rounds = ph->collective == SCHED_ALLREDUCE ? 2 : 1;

	if (!t->connected) {
		snprintf(out->why, sizeof(out->why), "%s does not connect every host", t->name);
		return;
	}
	workload_phase_bytes(c->f, c->w, p, &m);
	for (size_t i = 0; rounds > 1 && i < (size_t)c->n * c->n; i++)
		m[i] /= rounds; /* one round: reduce-scatter, then all-gather */
	double mean = normalise(m, c->n, &q.demand);
	q.graph = t->origin == JOBPLAN_CONFIG || t->spec_built ? NULL : t->g;
	q.spec = t->origin != JOBPLAN_CONFIG && t->spec_built ? t->spec : NULL;
	q.collective = SCHED_ALLTOALL;
	q.demand_n = c->n;
	q.size = (uint64_t)llround(mean * c->n);
	q.algorithm = "mcf";
	/* (the testbed runs steps: store-and-forward, priced so) */
	q.lowering = c->q->lowering ? c->q->lowering : c->q->executable ? "steps" : "paths";
	set_rates(c, &q, t->g);
	if (!(mean > 0)) {
		snprintf(out->why, sizeof(out->why), "no traffic");
	} else if (schedule_compute(&q, &sr, NULL, &err) < 0) {
		failed(out, &err);
	} else {
		if (take(&sr, rounds, out) == 0) {
			out->ok = true;
			snprintf(out->how, sizeof(out->how), "%s, the groups together", out->algo);
			mark_ports(c, t, sr.g, &sr.main->s, sr.nic_ports, NULL, NULL, NULL,
				   out->ports_used);
			keep_exec(t, &sr, &q, c->n, rounds, out, x);
		}
		schedule_result_free(&sr);
	}
	free(m);
}

/* Phase p on candidate t, its schedule into x when asked (the testbed). */
static void price(struct jobplan_ctx *c, uint32_t p, uint32_t t, struct jobplan_cost *out,
		  struct jobplan_exec *x)
{
	const struct wl_phase *ph = &c->w->phases[p];
	struct jobplan_topo *topo = &c->r->topo[t];
	size_t np = (size_t)c->n * c->d;

	memset(out, 0, sizeof(*out));
	out->ports_used = xcalloc(np + 1, 1);
	if (ph->collective == 0) { /* a traffic matrix */
		price_together(c, p, ph, topo, out, x);
		return;
	}
	if (c->w->kinds[ph->kind].size == c->n && ph->collective != WL_SENDRECV) {
		if (!topo->g) /* a WDM ring */
			price_all(c, ph, topo, out, x);
		else if (!topo->connected && topo->origin != JOBPLAN_CONFIG)
			snprintf(out->why, sizeof(out->why), "%s does not connect every host",
				 topo->name);
		else
			price_all(c, ph, topo, out, x);
		return;
	}
	if (c->q->executable) { /* the groups as the executor checks them */
		price_together(c, p, ph, topo, out, x);
		return;
	}
	struct jobplan_cost own = {.ports_used = xcalloc(np + 1, 1)};
	struct jobplan_cost all = {.ports_used = xcalloc(np + 1, 1)};

	price_own(c, ph, topo, &own);
	price_together(c, p, ph, topo, &all, NULL);
	struct jobplan_cost *best = own.ok && (!all.ok || own.us <= all.us) ? &own
				    : all.ok				    ? &all
									    : NULL;
	if (!best) {
		snprintf(out->why, sizeof(out->why), "own links: %.80s; together: %.80s", own.why,
			 all.why);
		free(own.ports_used);
		free(all.ports_used);
		return;
	}
	free(out->ports_used);
	*out = *best;
	free(best == &own ? all.ports_used : own.ports_used);
}

void jobplan_price(struct jobplan_ctx *c, uint32_t p, uint32_t t, struct jobplan_cost *out)
{
	price(c, p, t, out, NULL);
}

int jobplan_exec_phase(const struct jobplan_query *q, const struct jobplan_result *r, uint32_t p,
		       uint32_t t, struct jobplan_exec *x, struct ofc_error *err)
{
	struct jobplan_ctx c = {.q = q,
				.r = (struct jobplan_result *)r,
				.f = r->fabric,
				.w = r->workload,
				.n = r->fabric->nhosts,
				.d = r->ports};
	struct jobplan_cost cost;

	memset(x, 0, sizeof(*x));
	if (!q->executable || p >= r->nphases || t >= r->ntopo || !r->topo[t].g)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "a plan for the testbed runs its phases on switched topologies");
	price(&c, p, t, &cost, x);
	free(cost.ports_used);
	if (!cost.ok || !x->s.nsteps) {
		jobplan_exec_free(x);
		return ofc_error_set(err, OFC_E_RUNTIME, "phase %s on %s: %s",
				     r->workload->phases[p].name, r->topo[t].name,
				     cost.ok ? "no schedule" : cost.why);
	}
	return 0;
}

void jobplan_exec_free(struct jobplan_exec *x)
{
	sched_free(&x->s);
	free(x->block_weight);
	memset(x, 0, sizeof(*x));
}
