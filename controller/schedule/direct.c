/* A direct-connect request's set-up, before any engine runs (dispatch.c
 * calls it): the fabric's degree, the size, alpha and bandwidth, the links'
 * rates, the lower bound (at each link's rate, a demand matrix's, the
 * hosts' injection limits), and, on a fabric config wired through
 * switches, the view of the hosts' NIC ports: transfer ports are the
 * hosts' NIC ports (the port permutations of the wiring, which differ from
 * the topology's arc order for word digraphs such as generalized Kautz),
 * verified against the graph in port order. */
#include "bfb/bfb.h"
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* M: the request's, else the fabric's collective of this kind, else its
 * first collective's size. */
static uint64_t pick_size(const struct schedule_query *q)
{
	const struct fabric *f = q->fabric;

	if (q->size || !f || !f->ncollectives)
		return q->size;
	for (uint32_t i = 0; i < f->ncollectives; i++)
		if (f->collectives[i].op == q->collective)
			return f->collectives[i].size;
	return f->collectives[0].size;
}

/* Node v of r->g as the fabric's host (they differ on the survivors of
 * failed hosts). */
static uint32_t host_of(const struct schedule_result *r, uint32_t v)
{
	return r->keep ? r->keep[v] : v;
}

/* The rate of arc a = u -> v, the k-th of its parallel arcs: the config's
 * link_rates entry for {u, v} if any; else the slower of the two ports it
 * joins. With port permutations that is port j at both ends, j the k-th
 * port of u that reaches v (as the NIC-port rewriting numbers them; on a
 * degraded graph the ordinal counts surviving arcs, so a failure among
 * parallel arcs of different rates may shift it); without them, a host
 * given per-port rates counts at its slowest port. */
static double arc_rate(const struct schedule_result *r, const struct fabric *f, uint32_t u,
		       uint32_t a)
{
	const struct graph *g = r->g;
	uint32_t v = g->adj[a], k = 0, n = r->whole ? r->whole->n : g->n;
	const struct port_map *pm = &f->ports;

	for (uint32_t i = 0; i < f->topology.nlink_rates; i++) {
		const struct link_rate *lr = &f->topology.link_rates[i];
		uint32_t hu = host_of(r, u), hv = host_of(r, v);

		if ((lr->u == hu && lr->v == hv) || (lr->u == hv && lr->v == hu))
			return lr->rate;
	}
	for (uint32_t x = g->off[u]; x < a; x++)
		k += g->adj[x] == v;
	/* Survivors of failed hosts: the hosts' own numbers from here on. */
	u = host_of(r, u);
	v = host_of(r, v);
	if (pm->to && pm->n == n)
		for (uint32_t j = 0; j < pm->d; j++)
			if (pm->to[(size_t)j * pm->n + u] == v && k-- == 0) {
				double ru = fabric_port_rate(f, u, j),
				       rv = fabric_port_rate(f, v, j);

				return ru < rv ? ru : rv;
			}
	double lo = 0;
	for (int e = 0; e < 2; e++) {
		const struct host *h = &f->hosts[e ? v : u];
		double rate = h->port_rate;

		for (uint32_t j = 0; j < h->port_rates.n; j++)
			if (j == 0 || h->port_rates.v[j] < rate)
				rate = h->port_rates.v[j];
		if (e == 0 || rate < lo)
			lo = rate;
	}
	return lo;
}

/* Links of different rates (hosts' port_rate or port_rates, the topology's
 * link_rates): each arc at arc_rate(). Rates in Mb/s, as multiples of
 * their gcd (BFB_MAX_RATE at most); false (priced at the slowest link
 * alone) when a link has no rate or the multiples are too large. */
static bool link_rates(struct schedule_result *r, const struct fabric *f)
{
	const struct graph *g = r->g;
	uint64_t *mbps = xmalloc(((size_t)g->m + 1) * sizeof(uint64_t)), unit = 0, slow = 0;
	bool ok = true;

	for (uint32_t u = 0; u < g->n && ok; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1] && ok; a++) {
			double lo = arc_rate(r, f, u, a);

			ok = lo >= 1e6;
			mbps[a] = ok ? (uint64_t)llround(lo / 1e6) : 0;
			unit = gcd_u64(unit, mbps[a]);
			if (!slow || mbps[a] < slow)
				slow = mbps[a];
		}
	if (ok && g->m) {
		r->arc_cap = xmalloc(((size_t)g->m + 1) * sizeof(double));
		for (uint32_t a = 0; a < g->m; a++)
			r->arc_cap[a] = (double)mbps[a] / (double)slow;
		r->link_rate = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
		for (uint32_t a = 0; a < g->m && ok; a++) {
			ok = mbps[a] / unit <= BFB_MAX_RATE;
			r->link_rate[a] = (uint32_t)(mbps[a] / unit);
		}
		r->rate_scale = frac_make((int64_t)unit, (int64_t)slow);
		if (!ok) {
			free(r->link_rate);
			r->link_rate = NULL;
		}
	}
	free(mbps);
	return r->link_rate != NULL;
}

/* The lower bound with each link at its rate: a node takes in (N-1)/N of
 * the data (allgather) or sends it out (reduce-scatter) over its links, so
 * the node with the least total rate R bounds T_B below by (N-1)/N M / R.
 * In the cost model's units (M/B, B = d x the slowest link) that scales
 * tau_B* by d x slowest / R. R is the smaller of the least ingress and the
 * least egress (a bound for either direction; allreduce scales its doubled
 * bound alike), and the factor is never above 1, so regular fabrics of one
 * rate keep the paper's bound. */
static void rate_bound(struct schedule_result *r)
{
	const struct graph *g = r->g;
	uint64_t *in = xcalloc(g->n + 1, sizeof(uint64_t)), least = UINT64_MAX;
	uint32_t slow = UINT32_MAX;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			in[g->adj[a]] += r->link_rate[a];
			slow = r->link_rate[a] < slow ? r->link_rate[a] : slow;
		}
	for (uint32_t u = 0; u < g->n; u++) {
		uint64_t out = 0;

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			out += r->link_rate[a];
		least = in[u] < least ? in[u] : least;
		least = out < least ? out : least;
	}
	free(in);
	if (least > (uint64_t)r->degree * slow) {
		r->lb.tau_b =
		    frac_mul(r->lb.tau_b, frac_make((int64_t)r->degree * slow, (int64_t)least));
		r->lb_rates = true;
	}
}

/* NIC-limited hosts for BFB (allgather, reduce-scatter, allreduce): each
 * host's injection as an exact fraction of a rate-1 link (the slowest, or
 * with link_rates their gcd) for bfb_opts.inject, and the lower bound: a
 * reduce-scatter host sends at least N-1 shards of its own partial sums
 * (tau_B >= (N-1)/N d / beta_min, either forwarding model); with host
 * forwarding the N (N-1) shards an allgather delivers all cross some host
 * (tau_B >= (N-1)/N d / beta_mean). beta[v] in slowest links, unlimited
 * hosts at d. */
static void bfb_limits(struct schedule_result *r, const struct schedule_query *q,
		       const double *beta, double lo, double mean)
{
	uint32_t n = r->g->n;
	char note[200];

	if (lo >= r->degree) {
		snprintf(note, sizeof(note), "%shost injection not below d links: no host limit",
			 r->note[0] ? "; " : "");
	} else {
		r->bfb_inject = xmalloc(n * sizeof(struct frac));
		for (uint32_t v = 0; v < n; v++) {
			/* in thousandths of a link: exact for rates in Mb/s ratios
			 * such as 150G / 100G, near enough otherwise */
			struct frac b = frac_make(llround(beta[v] * 1000), 1000);

			if (r->link_rate)
				b = frac_div(b, r->rate_scale);
			r->bfb_inject[v] = b;
		}
		double N = n, d = r->degree, lb = 0;
		bool rs = q->collective != SCHED_ALLGATHER,
		     ag = q->collective != SCHED_REDUCE_SCATTER;

		if (rs)
			lb += (N - 1) / N * d / lo;
		if (ag && !r->nic_forwarding)
			lb += (N - 1) / N * d / mean;
		if (lb > frac_value(r->lb.tau_b)) {
			r->lb.tau_b = frac_from_double(lb, 16 * (int64_t)n * 1000, 1e-9 * lb);
			if (!frac_valid(r->lb.tau_b))
				r->lb.tau_b = frac_make((int64_t)llround(lb * 1e6), 1000000);
		}
		snprintf(note, sizeof(note),
			 "%shosts inject %.3g links' worth at least (%s forwarding): BFB keeps "
			 "every host within it; other algorithms are priced without",
			 r->note[0] ? "; " : "", lo, r->nic_forwarding ? "NIC" : "host");
	}
	snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note), "%s", note);
}

/* All-to-all with each link at its capacity c_e (slowest links): Basu et
 * al. Thm 2 counts the capacity every source's flow costs, at least theta
 * L(N, d) (d the most links a node has), against the total, so theta <=
 * sum_e c_e / (N L(N, d)); and a node sends N-1 shards over its links and
 * takes N-1 in, so theta <= C_min / (N-1) with C_min the least total
 * capacity into or out of a node. tau_B = (d/N) / theta. One rate gives
 * the paper's L(N, d)/N. (rate_bound's per-node scaling of L(N, d)/N would
 * claim theta <= C_min / L(N, d), which a fast core and one slow node
 * break.) */
static void a2a_rate_bound(struct schedule_result *r)
{
	const struct graph *g = r->g;
	uint32_t n = g->n;
	double *in = xcalloc(n + 1, sizeof(double)), sum = 0, least = INFINITY;
	double L = (double)moore_tree_cost(n, r->degree);

	for (uint32_t u = 0; u < n; u++) {
		double out = 0;

		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] != u) {
				in[g->adj[a]] += r->arc_cap[a];
				out += r->arc_cap[a];
			}
		sum += out;
		least = fmin(least, out);
	}
	for (uint32_t u = 0; u < n; u++)
		least = fmin(least, in[u]);
	free(in);
	r->theta_cap = fmin(sum / (n * L), least / (n - 1));
	double tb = r->degree / (double)n / r->theta_cap;
	r->lb.tau_b = frac_from_double(tb, 16 * (int64_t)n, 1e-9 * tb);
	if (!frac_valid(r->lb.tau_b))
		r->lb.tau_b = frac_make((int64_t)llround(tb * 1e6), 1000000);
	r->lb_rates = true;
}

/* A demand matrix: an all-to-all's, of the topology's nodes;
 * the lower bound becomes the one it gives (schedule_demand_bound, over
 * the links' rates when they differ). */
static int demand_bound(struct schedule_result *r, const struct schedule_query *q,
			struct ofc_error *err)
{
	const struct graph *g = r->g;
	uint32_t n = g->n;
	double total = (double)n * r->degree, least = r->degree;

	if (q->collective != SCHED_ALLTOALL)
		return ofc_error_set(err, OFC_E_USAGE,
				     "a demand matrix is for --collective alltoall");
	if (q->demand_n != n)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the demand matrix is %u x %u; %s has %u nodes", q->demand_n,
				     q->demand_n, g->spec ? g->spec : "the topology", n);
	if (!q->demand) /* uniform */
		return 0;
	if (r->arc_cap) {
		double *in = xcalloc(n + 1, sizeof(double));

		total = 0;
		least = INFINITY;
		for (uint32_t u = 0; u < n; u++) {
			double out = 0;

			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (g->adj[a] != u) {
					in[g->adj[a]] += r->arc_cap[a];
					out += r->arc_cap[a];
				}
			total += out;
			least = fmin(least, out);
		}
		for (uint32_t u = 0; u < n; u++)
			least = fmin(least, in[u]);
		free(in);
	}
	r->demand = q->demand;
	r->theta_demand = schedule_demand_bound(q->demand, n, r->degree, total, least);
	double tb = r->degree / (double)n / r->theta_demand;
	r->lb.tau_b = frac_from_double(tb, 16 * (int64_t)n, 1e-9 * tb);
	if (!frac_valid(r->lb.tau_b))
		r->lb.tau_b = frac_make((int64_t)llround(tb * 1e6), 1000000);
	return 0;
}

/* NIC-limited hosts: the request's injection (every host) and
 * forwarding, else the config hosts' (a host without `injection` is not
 * limited: d links). All-to-all only: r->host_betas per node in link
 * capacities when some host is below its d links, and the lower bound: a
 * host's own N-1 shards (T >= (N-1) M / (N I_min)) and, with host
 * forwarding, every hop of every shard through some host (T >= L(N, d) M /
 * (N I_mean)), the Moore bound with d b replaced by the hosts' injection. */
static int host_limits(struct schedule_result *r, const struct schedule_query *q,
		       struct ofc_error *err)
{
	const struct fabric *f = q->fabric;
	uint32_t n = r->g->n;
	double b = r->cost.bandwidth / r->degree, *beta = xmalloc(n * sizeof(double));
	double lo = INFINITY, hi = 0, sum = 0;
	int fwd = q->forwarding ? q->forwarding - 1 : HOST_FORWARDING;
	bool any = false;
	char note[200];

	for (uint32_t v = 0; v < n; v++) {
		double inj = q->injection;

		if (inj <= 0 && f && f->nhosts == (r->whole ? r->whole->n : n) && !q->spec &&
		    !q->graph) {
			const struct host *h = &f->hosts[host_of(r, v)];

			inj = h->injection;
			if (!q->forwarding && h->forwarding != f->hosts[0].forwarding &&
			    q->collective == SCHED_ALLTOALL) {
				free(beta);
				ofc_error_set(err, OFC_E_INPUT,
					      "host %s forwards differently from %s: one "
					      "forwarding model per fabric for alltoall",
					      h->name, f->hosts[0].name);
				snprintf(err->file, sizeof(err->file), "%s",
					 f->file ? f->file : "");
				err->line = h->loc.line;
				err->col = h->loc.col;
				return -1;
			}
			if (!q->forwarding)
				fwd = f->hosts[0].forwarding;
		}
		beta[v] = inj > 0 ? fmin(inj / b, r->degree) : r->degree;
		any = any || inj > 0;
		lo = fmin(lo, beta[v]);
		hi = fmax(hi, beta[v]);
		sum += beta[v];
	}
	/* Whether a forward is an alpha of its own (routed_alphas), with or
	 * without injection limits. */
	r->nic_forwarding = fwd == NIC_FORWARDING;
	if (!any) {
		free(beta);
		return 0;
	}
	if (q->collective != SCHED_ALLTOALL) {
		bfb_limits(r, q, beta, lo, sum / n);
		free(beta);
		return 0;
	} else if (lo >= r->degree) {
		snprintf(note, sizeof(note), "%shost injection not below d links: no host limit",
			 r->note[0] ? "; " : "");
	} else {
		double L = (double)moore_tree_cost(n, r->degree);
		double z = (n - 1) / lo;

		if (!r->nic_forwarding)
			z = fmax(z, L / (sum / n));
		double hb = z * r->degree / n;

		r->host_betas = beta;
		beta = NULL;
		r->host_beta = lo;
		r->host_beta_avg = sum / n;
		r->injection = lo * b;
		if (hb > frac_value(r->lb.tau_b)) {
			r->lb.tau_b = frac_from_double(hb, 16 * (int64_t)n, 1e-9 * hb);
			if (!frac_valid(r->lb.tau_b))
				r->lb.tau_b = frac_make((int64_t)llround(hb * 1e6), 1000000);
		}
		if (lo == hi)
			snprintf(note, sizeof(note),
				 "%shosts inject %.3g links' worth (%s forwarding)",
				 r->note[0] ? "; " : "", lo, r->nic_forwarding ? "NIC" : "host");
		else
			snprintf(note, sizeof(note),
				 "%shosts inject %.3g to %.3g links' worth (%s forwarding; hosts "
				 "differ: the plain MCF, no symmetry)",
				 r->note[0] ? "; " : "", lo, hi,
				 r->nic_forwarding ? "NIC" : "host");
	}
	free(beta);
	snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note), "%s", note);
	return 0;
}

/* With failures, the degraded graph's own bound: its worst node, its best
 * cut, its diameter (sched.h degraded_bound), computed where it is first
 * read or beside a patch's generation (bound_beside.c). Links of several
 * rates and NIC-limited hosts have bounds of their own (rate_bound,
 * host_limits), which the cuts here, counting links, do not take. */
static void degraded_setup(struct schedule_result *r, const struct schedule_query *q)
{
	r->healthy_lb_us = r->lb_us;
	if (!r->healthy || r->link_rate || r->arc_cap || r->bfb_inject || r->host_betas)
		return;
	bound_beside_defer(r, q->collective);
}

int direct_setup(struct schedule_result *r, const struct schedule_query *q, struct ofc_error *err)
{
	const struct graph *g = r->g;
	const struct fabric *f = q->fabric;

	/* A link carries B/d with d the fabric's degree: the most links a
	 * node has (failures do not make the surviving links faster). */
	r->degree = 0;
	for (uint32_t u = 0; u < g->n; u++)
		if (graph_outdeg(g, u) > r->degree)
			r->degree = graph_outdeg(g, u);
	if (r->healthy || q->graph) {
		/* A degraded graph is no family, nor is a graph given as one: no
		 * construction or torus algorithm applies to it. */
		r->tree = xcalloc(1, sizeof(*r->tree));
		snprintf(r->tree->name, sizeof(r->tree->name), q->graph ? "graph" : "degraded");
		r->tree->spec = xstrdup(g->spec);
	} else if (topo_build_tree(g->spec, NULL, &r->tree, err) < 0) {
		return -1;
	}
	if (r->healthy && r->healthy->spec) {
		struct ofc_error e = {0};

		if (topo_build_tree(r->healthy->spec, NULL, &r->healthy_tree, &e) < 0)
			r->healthy_tree = NULL; /* (then as a graph without a spec) */
	}
	r->cost.size = pick_size(q);
	if (!r->cost.size)
		return ofc_error_set(err, OFC_E_USAGE, "missing --size (data per node, e.g. 1MiB)");
	r->cost.alpha = q->alpha_set ? q->alpha : f ? f->cost.alpha : COST_ALPHA_DEFAULT;
	/* B is a node's egress: d links of the config's link bandwidth, or
	 * the model's default when nothing says otherwise. */
	if (q->bandwidth_set)
		r->cost.bandwidth = q->bandwidth;
	else if (f && f->cost.link_bandwidth > 0)
		r->cost.bandwidth = f->cost.link_bandwidth * r->degree;
	else
		r->cost.bandwidth = COST_NODE_RATE_DEFAULT;
	if (!q->bandwidth_set && f && !f->cost.bandwidth_set && f->cost.rate_min > 0) {
		char lo[32], hi[32];

		fmt_rate(lo, sizeof(lo), f->cost.rate_min);
		fmt_rate(hi, sizeof(hi), f->cost.rate_max);
		if (!q->spec && !q->graph && link_rates(r, f))
			snprintf(r->note, sizeof(r->note),
				 "link rates differ (%s to %s): each link is taken at its "
				 "rate (BFB by LP (13), the MCF as capacities, the link loads)",
				 lo, hi);
		else if (r->arc_cap)
			snprintf(r->note, sizeof(r->note),
				 "link rates differ (%s to %s): the MCF and the link loads "
				 "take each link at its rate; BFB prices all at the slowest, "
				 "%s (rates too far apart for LP (13))",
				 lo, hi, lo);
		else
			snprintf(r->note, sizeof(r->note),
				 "link rates differ (%s to %s): links are priced at "
				 "the slowest, %s, which a schedule loading its links evenly "
				 "waits for",
				 lo, hi, lo);
	}
	/* A chunk of less than a byte of a node's shard (--size over the
	 * nodes) is no chunk: refused, not planned silently. */
	if (q->chunks && q->chunks > r->cost.size / g->n)
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--chunks %u cuts a shard of %llu bytes (--size over %u nodes) "
		    "below a byte a chunk: at most %llu",
		    q->chunks, (unsigned long long)(r->cost.size / g->n), g->n,
		    (unsigned long long)(r->cost.size / g->n));
	r->bopts.chunks = q->chunks;
	r->bopts.threads = q->threads;
	r->bopts.clock = q->clock; /* the expansions' BFB and constructions */
	r->bopts.lp_solver = schedule_lp_solver(q);
	r->hop_latency = q->hop_latency;
	if (r->degree == 0 || cost_lower_bound(q->collective, g->n, r->degree, &r->lb) < 0)
		return ofc_error_set(err, OFC_E_USAGE, "%s has no links", g->spec);
	if (r->arc_cap && q->collective == SCHED_ALLTOALL) {
		a2a_rate_bound(r);
		snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
			 "; the lower bound takes each link at its rate");
	} else if (r->link_rate) {
		rate_bound(r);
		if (r->lb_rates)
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "; the lower bound takes each node's links at their rates");
	}
	if ((q->demand || q->demand_n) && demand_bound(r, q, err) < 0)
		return -1;
	if (host_limits(r, q, err) < 0)
		return -1;
	r->lb_us = cost_time_us(&r->cost, r->lb.steps, frac_value(r->lb.tau_b));
	degraded_setup(r, q);
	/* NIC ports only when the schedule runs on the fabric's own graph. */
	r->nic_ports = !r->own_graph && !q->graph && !r->healthy && !r->topology_ports &&
		       fabric_view_init(f, g, &r->fv);
	if (r->nic_ports && r->arc_cap) {
		const struct graph *pg = r->fv.pg;

		r->pg_cap = xmalloc(((size_t)pg->m + 1) * sizeof(double));
		for (uint32_t a = 0; a < pg->m; a++)
			r->pg_cap[a] = 1;
		for (uint32_t u = 0; u < g->n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (r->fv.arc2port[a] != UINT32_MAX)
					r->pg_cap[pg->off[u] + r->fv.arc2port[a]] = r->arc_cap[a];
	}
	return 0;
}
