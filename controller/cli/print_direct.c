/* How `ofc schedule` prints a direct-connect result (controller/schedule):
 * the summary of one algorithm (text or JSON), the table of a comparison,
 * the expansion construction next to BFB, and with -o the whole schedule;
 * on a fabric wired through switches the export lists, for every link
 * used, the switch ports that carry it. */
#include "alltoall/alltoall.h"
#include "bfb/bfb.h"
#include "controller/cli/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- output ------------------------------------------------------------------ */

/* With failed hosts: the nodes that take no part (the topology's numbers). */
static void write_failed_nodes_json(struct json_writer *w, const struct schedule_result *r)
{
	if (!r->nabsent)
		return;
	jw_key(w, "failed_nodes");
	jw_arr_begin(w);
	for (uint32_t v = 0; v < r->whole->n; v++)
		if (r->absent[v])
			jw_uint(w, v);
	jw_arr_end(w);
	if (r->fabric && r->fabric->nhosts == r->whole->n) {
		jw_key(w, "failed_hosts");
		jw_arr_begin(w);
		for (uint32_t v = 0; v < r->whole->n; v++)
			if (r->absent[v])
				jw_str(w, r->fabric->hosts[v].name);
		jw_arr_end(w);
	}
}

/* What every written schedule ends with: the nodes that take no part, and
 * tau_B as a fraction (null where it outgrew the exact one). */
static void write_nodes_and_fraction(struct json_writer *w, const struct schedule_result *r,
				     const struct schedule_outcome *o)
{
	char buf[64];

	write_failed_nodes_json(w, r);
	jw_key(w, "tau_b_fraction");
	if (frac_valid(o->tau_b))
		jw_str(w, frac_str(o->tau_b, buf, sizeof(buf)));
	else
		jw_null(w);
}

/* "node 5" or "nodes 5, 9" (host names on a fabric), at most a few. */
static void text_failed_nodes(FILE *out, const struct schedule_result *r)
{
	const struct fabric *f = r->fabric;
	bool names = f && f->nhosts == r->whole->n;
	uint32_t k = 0;

	fprintf(out, "%s ",
		names ? (r->nabsent == 1 ? "host" : "hosts")
		      : (r->nabsent == 1 ? "node" : "nodes"));
	for (uint32_t v = 0; v < r->whole->n; v++) {
		if (!r->absent[v])
			continue;
		if (k == 8) {
			fprintf(out, ", ...");
			break;
		}
		if (names)
			fprintf(out, "%s%s", k ? ", " : "", f->hosts[v].name);
		else
			fprintf(out, "%s%u", k ? ", " : "", v);
		k++;
	}
}

/* The links the main schedule uses, with the circuits that carry them. */
static void write_links_json(const struct schedule_result *r, struct json_writer *w)
{
	const struct fabric *f = r->fabric;

	jw_key(w, "links");
	jw_arr_begin(w);
	for (uint32_t i = 0; i < r->nlinks; i++) {
		const struct schedule_link *k = &r->links[i];

		jw_obj_begin(w);
		jw_key(w, "src");
		jw_uint(w, k->src);
		jw_key(w, "src_host");
		jw_str(w, f->hosts[k->src].name);
		jw_key(w, "port");
		jw_uint(w, k->port);
		jw_key(w, "dst");
		jw_uint(w, k->dst);
		jw_key(w, "dst_host");
		jw_str(w, f->hosts[k->dst].name);
		if (k->circuit >= 0) {
			const struct circuit *ci = &f->circuits[k->circuit];

			jw_key(w, "switch");
			jw_str(w, f->switches[ci->sw].name);
			jw_key(w, "in_port");
			jw_uint(w, ci->in_port);
			jw_key(w, "out_port");
			jw_uint(w, ci->out_port);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* "reduced": the group, its order, the program's size and how it was
 * checked. */
static void write_reduced_json(const struct schedule_outcome *o, struct json_writer *w)
{
	const struct sched_group *G = &o->group;

	jw_key(w, "reduced");
	jw_obj_begin(w);
	jw_key(w, "group");
	jw_str(w, G->name);
	jw_key(w, "order");
	jw_uint(w, G->order);
	jw_key(w, "radix");
	jw_arr_begin(w);
	for (uint32_t i = 0; i < G->ndims; i++)
		jw_uint(w, G->radix[i]);
	jw_arr_end(w);
	if (G->reps > 1) {
		/* A subgroup: translations by multiples of step[i]. */
		jw_key(w, "step");
		jw_arr_begin(w);
		for (uint32_t i = 0; i < G->ndims; i++)
			jw_uint(w, G->step[i]);
		jw_arr_end(w);
	}
	jw_key(w, "representatives");
	jw_uint(w, G->reps);
	jw_key(w, "program");
	jw_str(w, G->reps > 1 ? "the representatives' (coordinates below step)" : "node 0's");
	jw_key(w, "program_transfers");
	jw_uint(w, o->s.nxfers);
	jw_key(w, "verified");
	jw_bool(w, o->verified);
	jw_key(w, "verification");
	jw_str(w, "by symmetry (the representatives' state, arc orbits)");
	jw_obj_end(w);
}

static void text_tau(FILE *out, struct frac f, double v)
{
	char buf[64];

	if (frac_valid(f) && f.den != 1)
		fprintf(out, "%s = %.9g", frac_str(f, buf, sizeof(buf)), v);
	else
		fprintf(out, "%.9g", v);
}

/* With failed links, the degraded per-node bound: every node receives
 * (an allgather phase) and sends (a reduce-scatter phase) (N - 1)/N of M
 * over the links it has left, each at B/d, so the node with the fewest
 * bounds tau_B by (N - 1)/N x d / its links, per phase. */
static void text_node_bound(FILE *out, const struct schedule_result *r, double mb)
{
	const struct graph *g = r->g;
	uint32_t n = g->n, *in = xcalloc(n + 1, sizeof(uint32_t)), lin = UINT32_MAX,
		 lout = UINT32_MAX, win = 0, wout = 0;

	for (uint32_t a = 0; a < g->m; a++)
		in[g->adj[a]]++;
	for (uint32_t u = 0; u < n; u++) {
		if (in[u] < lin) {
			lin = in[u];
			win = u;
		}
		if (graph_outdeg(g, u) < lout) {
			lout = graph_outdeg(g, u);
			wout = u;
		}
	}
	free(in);
	if (!lin || !lout)
		return;
	double share = (double)(n - 1) / n * r->degree, tau = 0;
	if (r->collective != SCHED_REDUCE_SCATTER)
		tau += share / lin;
	if (r->collective != SCHED_ALLGATHER)
		tau += share / lout;
	fprintf(out,
		"  node bound   tau_B >= %.9g (T_B >= %.6g us): node %u has %u of %u links in, "
		"node %u %u out\n",
		tau, tau * mb, win, lin, r->degree, wout, lout);
}

/* A node of r->g by the topology's number (failed hosts renumber). */
static uint32_t whole_node(const struct schedule_result *r, uint32_t v)
{
	return r->keep ? r->keep[v] : v;
}

/* One phase's best cut: which set, and whether every node was checked. */
static void text_cut_phase(FILE *out, const struct schedule_result *r, const char *phase,
			   const struct degraded_phase *ph, bool in)
{
	fprintf(out, "  cut bound    %s tau_B >= %.9g: ", phase, ph->cut);
	if (ph->cut_nodes == 1 && ph->cut > ph->node * (1 + 1e-9))
		fprintf(out, "a node %s %llu link%s", in ? "hears" : "reaches",
			(unsigned long long)ph->cut_links, ph->cut_links == 1 ? "" : "s");
	else if (ph->cut > ph->node * (1 + 1e-9))
		fprintf(out, "%u nodes %s the other %u through %llu link%s", ph->cut_nodes,
			in ? "hear" : "reach", r->g->n - ph->cut_nodes,
			(unsigned long long)ph->cut_links, ph->cut_links == 1 ? "" : "s");
	else
		fprintf(out, "node %u's %u link%s %s bind%s", whole_node(r, ph->node_at),
			ph->node_links, ph->node_links == 1 ? "" : "s", in ? "in" : "out",
			ph->node_links == 1 ? "s" : "");
	if (ph->exact)
		fprintf(out, " (every node's max flow run: the fluid optimum)\n");
	else
		fprintf(out,
			" (max flows on the balls of %u damaged node%s, %u of %u nodes over the "
			"whole graph: a bound, not proven the optimum)\n",
			ph->balls, ph->balls == 1 ? "" : "s", ph->checked, r->g->n);
}

/* With failures: the degraded fabric's own bound, what binds it, and the
 * bound of any topology of its size and degree beside it. */
static void text_degraded_bound(FILE *out, const struct schedule_result *r,
				const struct schedule_outcome *o, double mb)
{
	const struct degraded_bound *b = &r->degraded;
	bool cut = degraded_cut_binds(b);
	bool routed = o->lb_us < r->degraded_us * (1 - 1e-9);

	/* NICs forwarding a routed schedule's circuits: its steps are not
	 * the degraded graph's hops, so its bound is below that one */
	if (routed)
		fprintf(out,
			"  lower bound  %.6g us: NICs forward its routes (an alpha a step), so "
			"the healthy bound's %u steps with the degraded fabric's tau_B*\n",
			o->lb_us, r->lb.steps);
	fprintf(out,
		"  %s %.6g us, the degraded fabric's: %u steps (%s), tau_B* %.9g "
		"(T_B = %.6g us, %s bind)\n",
		routed ? "hop by hop  " : "lower bound ", r->degraded_us, b->steps,
		b->steps > r->lb.steps ? (b->steps_exact ? "its diameter" : "an eccentricity")
		: b->steps_exact       ? "the Moore bound; its diameter is no more"
				       : "the Moore bound",
		b->tau_b, b->tau_b * mb, cut ? "a cut's links" : "the worst node's links");
	fprintf(out, "  healthy bound %.6g us (%u steps, tau_B* ", r->healthy_lb_us, r->lb.steps);
	text_tau(out, r->lb.tau_b, frac_value(r->lb.tau_b));
	fprintf(out, "): any %u-node topology of degree %u\n", r->g->n, r->degree);
	if (b->in)
		text_cut_phase(out, r, b->out ? "allgather phase" : "allgather", &b->ag, true);
	if (b->out && b->in && b->symmetric)
		fprintf(out,
			"               reduce-scatter phase the same (every link both ways)\n");
	else if (b->out)
		text_cut_phase(out, r, b->in ? "reduce-scatter phase" : "reduce-scatter", &b->rs,
			       false);
}

/* The all-to-all's own lines: its theta against its bound, and the MCF's. */
static void text_alltoall(FILE *out, const struct schedule_result *r,
			  const struct schedule_outcome *o)
{
	fprintf(out,
		"  theta        %.9g per link capacity (%s); bound %s = %.9g, "
		"ratio %.4f\n",
		o->theta, o->cut_through ? "cut-through routes" : "store-and-forward steps",
		r->host_beta <= 0 && r->theta_demand > 0 ? "the demand's Moore tree and node cuts"
		: r->host_beta <= 0 && r->theta_cap > 0	 ? "min(sum c/(N L(N,d)), c_min/(N-1))"
		: r->host_beta <= 0			 ? "d/L(N,d)"
		: r->nic_forwarding			 ? "min(d/L(N,d), I/(N-1))"
							 : "min(d/L, I_mean/L, I_min/(N-1))",
		schedule_theta_bound(r), o->theta / schedule_theta_bound(r));
	if (o->have_mcf) {
		fprintf(out,
			"  mcf          theta %.9g (%s, %u sources of %u, %u iterations, "
			"%.3f s), lowered to %s, at most %u paths per pair\n",
			o->theta_mcf, mcf_method_name(o->mcf.method), o->mcf.classes, o->mcf.nodes,
			o->mcf.iterations, o->mcf.seconds, o->lowering, o->max_paths);
		if (o->mcf.warm_started)
			fprintf(out,
				"               warm-started from the healthy solution (%.3f s "
				"to solve): %u of its trees kept, its lengths bound theta "
				"by %.9g\n",
				o->healthy_mcf_s, o->mcf.warm_columns,
				o->mcf.warm_bound > 0 ? 1 / o->mcf.warm_bound : 0);
		if (o->mcf.optimal)
			fprintf(out, "               optimal (the LP bound meets the flow)\n");
		else
			fprintf(out,
				"               NOT proven optimal (%s): the optimum is at "
				"most "
				"%.9g, gap %.3g%%\n",
				mcf_stop_name(o->mcf.stop), 1 / o->mcf.lower, 100 * o->mcf.gap);
	}
}

/* The steps line: how many, and the start-ups they cost (cut-through:
 * one, or one a host forward; routed: one a circuit). */
static void text_steps(FILE *out, const struct schedule_result *r, const struct schedule_outcome *o)
{
	if (o->cut_through && o->alphas > 1) /* every route at once, hosts forward */
		fprintf(out,
			"  steps        %u hops at most, cut-through: one step and an alpha for "
			"each host forward (T_L = %.6g us)\n",
			o->max_hops, o->alphas * r->cost.alpha * 1e6);
	else if (o->cut_through) /* every route at once: one start-up */
		fprintf(out,
			"  steps        %u hops at most, cut-through: one step (T_L = %.6g us)\n",
			o->max_hops, r->cost.alpha * 1e6);
	else if (o->alphas > o->steps) /* routed: the hosts between forward */
		fprintf(out,
			"  steps        %u, their longest routes %.6g circuits: an alpha a "
			"circuit, where hosts forward (T_L = %.6g us)\n",
			o->steps, o->alphas, o->alphas * r->cost.alpha * 1e6);
	else
		fprintf(out, "  steps        %u (T_L = %.6g us)\n", o->steps,
			o->steps * r->cost.alpha * 1e6);
}

/* The time line, against the healthy fabric's when there is one, and
 * against the lower bound the ratio takes on a degraded one. */
static void text_time(FILE *out, const struct schedule_result *r, const struct schedule_outcome *o)
{
	fprintf(out, "  time         %.6g us", o->time_us);
	if (r->healthy && o->healthy_us > 0 && o->fallback_from)
		fprintf(out, " (%+.1f%% vs %s on the healthy %s, %.6g us)",
			100 * (o->time_us / o->healthy_us - 1), o->fallback_from, r->healthy->spec,
			o->healthy_us);
	else if (r->healthy && o->healthy_us > 0)
		fprintf(out, " (%+.1f%% vs healthy %s, %.6g us)",
			100 * (o->time_us / o->healthy_us - 1), r->healthy->spec, o->healthy_us);
	else if (r->healthy)
		fprintf(out, " (healthy %s: %s does not apply there)", r->healthy->spec,
			o->fallback_from ? o->fallback_from : o->algo);
	fprintf(out, "\n");
	/* Against the bound the ratio takes: the degraded fabric's where it
	 * binds, else the healthy one (any N nodes of degree d) above it. */
	if (r->have_degraded)
		fprintf(out, "               %+.1f%% vs its lower bound, %.6g us (%s)\n",
			100 * (o->time_us / o->lb_us - 1), o->lb_us,
			fabs(o->lb_us - r->degraded_us) <= 1e-9 * o->lb_us
			    ? "the degraded fabric's own"
			: fabs(o->lb_us - r->healthy_lb_us) <= 1e-9 * o->lb_us
			    ? "the healthy bound, above the degraded fabric's"
			    : "the degraded fabric's tau_B* with the healthy steps: NICs forward "
			      "its routes");
}

/* How the schedule was checked by symmetry: the programs solved and the
 * group that copies them (a patch where failures reach). */
static void text_reduced(FILE *out, const struct schedule_outcome *o)
{
	if (o->is_patched)
		fprintf(out,
			"  reduced      node 0's healthy program (%zu transfers) x %s (order %u) "
			"and a patch (%zu transfers) where the failures reach: %u nodes "
			"solved whole (the blocks that came out as the healthy ones kept), "
			"the changed blocks of %llu more%s, checked without expansion\n",
			o->s.nxfers, o->group.name, o->group.order, o->patch.prog.nxfers,
			o->bst.whole, (unsigned long long)(o->bst.problems - o->bst.whole),
			o->bst.mirrored ? " (the reductions: the copies run backwards)" : "");
	else if (o->is_reduced && o->group.reps > 1)
		fprintf(out,
			"  reduced      %u nodes' programs (%zu transfers) x %s (order %u), "
			"checked by symmetry\n",
			o->group.reps, o->s.nxfers, o->group.name, o->group.order);
	else if (o->is_reduced)
		fprintf(out,
			"  reduced      node 0's program (%zu transfers) x %s (order %u), checked "
			"by symmetry\n",
			o->s.nxfers, o->group.name, o->group.order);
}

static void write_summary_text(const struct schedule_result *r, const struct schedule_outcome *o,
			       FILE *out)
{
	char a[48], b[48], m[48];
	double mb = cost_mb_us(&r->cost);

	fmt_size(m, sizeof(m), r->cost.size);
	fmt_duration(a, sizeof(a), r->cost.alpha);
	fmt_rate(b, sizeof(b), r->cost.bandwidth);
	fprintf(out, "%s %s on %s: %u nodes, degree %u\n", o->algo,
		sched_collective_name(r->collective), r->g->spec, r->g->n, r->degree);
	if (r->nabsent) {
		fprintf(out, "  failed       ");
		text_failed_nodes(out, r);
		fprintf(out,
			" of %u: no part in the collective, which the other %u complete among "
			"themselves (transfers keep the topology's node numbers)\n",
			r->whole->n, r->g->n);
	}
	fprintf(out, "  workload     M = %s, alpha = %s, B = %s (M/B = %.6g us)\n", m, a, b, mb);
	text_steps(out, r, o);
	fprintf(out, "  tau_B        ");
	text_tau(out, o->tau_b, o->tau_b_value);
	fprintf(out, " (T_B = %.6g us)\n", o->tau_b_value * mb);
	if (o->is_bfb && r->bopts.chunks) {
		fprintf(out, "  chunks       %u per shard; fractional optimum ", r->bopts.chunks);
		text_tau(out, o->bst.tau_b_exact, o->bst.tau_b_exact_value);
		fprintf(out, ", Thm 20 bound %.9g\n", schedule_thm20_bound(r, o));
	}
	text_time(out, r, o);
	if (o->fallback_from)
		fprintf(out, "  instead of   %s, refused: %s\n", o->fallback_from, o->fallback_why);
	if (o->rebalanced) {
		fprintf(out,
			"  schedule     BFB re-balanced across steps (%u nodes' shards moved, %u "
			"step%s "
			"added); BFB as built: %u steps, tau_B ",
			o->rebalanced_receivers, o->rebalance_steps_added,
			o->rebalance_steps_added == 1 ? "" : "s", o->bfb_steps);
		text_tau(out, o->tau_bfb, frac_value(o->tau_bfb));
		fprintf(out, ", %.6g us\n",
			cost_time_us(&r->cost, o->bfb_steps, frac_value(o->tau_bfb)));
	} else if (o->rebalance_tried) {
		fprintf(out,
			"  schedule     BFB as built (re-balancing it across steps found nothing "
			"faster within its work and time)\n");
	}
	if (r->have_degraded) {
		text_degraded_bound(out, r, o, mb);
	} else {
		fprintf(out, "  lower bound  %.6g us (%u step%s%s, tau_B* ", o->lb_us, o->lb_steps,
			o->lb_steps == 1 ? "" : "s", o->cut_through ? ", cut-through" : "");
		text_tau(out, r->lb.tau_b, frac_value(r->lb.tau_b));
		fprintf(out, ")\n");
	}
	if (r->healthy && !r->keep && o->is_bfb + o->is_patched && r->collective != SCHED_ALLTOALL)
		text_node_bound(out, r, mb);
	fprintf(out, "  ratio        %.4f\n", o->ratio);
	char hops[64] = "";
	if (o->is_a2a && o->nhops != o->ntransfers) /* runs */
		snprintf(hops, sizeof(hops), " (%zu hops: straight stretches one transfer each)",
			 o->nhops);
	if (o->verified)
		fprintf(out, "  verified     yes: %zu transfers%s, %s give tau_B %.9g%s\n",
			o->ntransfers, hops,
			o->is_a2a && r->host_beta > 0 ? "link and host loads" : "link loads",
			o->measured, r->arc_cap ? " (each link at its rate)" : "");
	else
		fprintf(out, "  verified     NO: %s\n", o->verify_error);
	text_reduced(out, o);
	if (o->is_bfb && r->bfb_inject)
		fprintf(out,
			"  hosts        injection (%s forwarding) sets the time of %u of %u steps; "
			"%u allgather step%s balanced over links and senders together\n",
			r->nic_forwarding ? "NIC" : "host", o->bst.host_steps, o->steps,
			o->bst.host_solved, o->bst.host_solved == 1 ? "" : "s");
	if (o->is_a2a)
		text_alltoall(out, r, o);
	if (o->has_pred) {
		fprintf(out, "  construction %s\n", o->pred.how);
		fprintf(out, "    predicted  %u steps, tau_B ", o->pred.steps);
		text_tau(out, o->pred.tau_b, o->pred.tau_b_value);
		fprintf(out, "%s\n",
			o->pred.exact ? " (the paper's formulas, exact here)"
				      : " (the paper's upper bound)");
	}
	if (r->nic_ports)
		fprintf(out,
			"  fabric       %s: ports are host NIC ports; %u circuits carry the "
			"links (-o lists them)\n",
			r->fabric->name, r->fabric->ncircuits);
}

/* The expansion construction next to BFB on the expanded graph. */
static void write_construction_text(const struct schedule_outcome *e, FILE *out)
{
	if (!e->applies) {
		fprintf(out, "  construction not built: %s\n", e->why);
		return;
	}
	fprintf(out, "  construction %s\n", e->pred.how);
	fprintf(out, "    predicted  %u steps, tau_B ", e->pred.steps);
	text_tau(out, e->pred.tau_b, e->pred.tau_b_value);
	fprintf(out, "%s\n", e->pred.exact ? " (exact)" : " (upper bound)");
	fprintf(out, "    built      %u steps, tau_B %.9g, %zu transfers, verified %s\n", e->steps,
		e->measured, e->ntransfers, e->verified ? "yes" : "NO");
	if (!e->verified)
		fprintf(out, "    verifier: %s\n", e->verify_error);
}

/* The whole main schedule to -o: the shared shape plus, on a fabric, the
 * links. */
/* A schedule kept as structure under failures (the healthy program and a
 * patch), its expansion streamed a step at a time into out. */
static int write_patched(const struct schedule_print *p, const struct schedule_result *r, FILE *f,
			 struct ofc_error *err)
{
	const struct schedule_outcome *o = r->main;
	struct sched_reduced red = {.group = o->group, .prog = o->s};
	struct sched_patched_stream ps;
	struct sched_stream st;
	int rc = 0;

	sched_patched_stream_init(&ps, &red, &o->patch, o->patch_graph, o->gone, &o->s, &st);
	if (p->format == FMT_PB) {
		rc = schedule_stream_write_pb(&st, f, err);
		if (rc == 0) {
			/* the direct-connect fields, merged as the explicit's */
			struct arena a = {0};

			rc = schedule_append_pb(schedule_extra_msg(&a, r), f, err);
			arena_free(&a);
		}
	} else if (p->format == FMT_TEXT) {
		sched_stream_write_text(f, &st, UINT32_MAX);
		if (r->nabsent) {
			fprintf(f, "failed (no part in it): ");
			text_failed_nodes(f, r);
			fprintf(f, "\n");
		}
	} else {
		struct json_writer w;

		jw_init(&w, f, true);
		jw_obj_begin(&w);
		sched_stream_write_json_members(&w, &st);
		write_nodes_and_fraction(&w, r, o);
		jw_obj_end(&w);
		jw_finish(&w);
	}
	sched_patched_stream_free(&ps);
	return rc;
}

static int write_schedule(const struct schedule_print *p, const struct schedule_result *r,
			  struct ofc_error *err)
{
	const struct schedule_outcome *o = r->main;
	struct cli_output out;
	int rc = 0;

	if (!p->output)
		return 0;
	if (o->expand_on_write && p->format == FMT_MSCCL)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "MSCCL programs are explicit: the time-stepped all-to-all is "
		    "symmetry-reduced above %u nodes (--lowering paths is explicit "
		    "up to %u)",
		    A2A_STEPS_EXPLICIT_NODES, A2A_MAX_NODES);
	if (o->is_reduced && p->format == FMT_MSCCL)
		return ofc_error_set(err, OFC_E_INPUT,
				     "MSCCL programs are explicit: write the schedule without "
				     "--reduced (up to %u nodes)",
				     BFB_MAX_NODES);
	if (o->is_patched && p->format == FMT_MSCCL)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a schedule kept as structure under failures (the healthy "
				     "program and a patch) streams its transfers as text, JSON or "
				     "protobuf, not an MSCCL program");
	if (cli_output_open(&out, p->output, err) < 0)
		return -1;
	if (o->is_patched) {
		rc = write_patched(p, r, out.f, err);
	} else if (p->format == FMT_MSCCL) {
		struct msccl_info mi;

		rc = schedule_write_msccl(&o->s, p->msccl_runtime, out.f, &mi, err);
		if (rc == 0)
			fprintf(stderr,
				"ofc schedule: MSCCL program: %u chunks per block (%s), %u "
				"channel%s, %u thread blocks, %zu operations, %zu XML nodes a "
				"rank at most (%s)\n",
				mi.chunks_per_block, mi.exact ? "exact" : "bounds rounded",
				mi.channels, mi.channels == 1 ? "" : "s", mi.thread_blocks,
				mi.operations, mi.most_nodes,
				p->msccl_runtime == MSCCL_LEGACY ? "the legacy MSCCL's limits"
								 : "msccl-executor-nccl's limits");
	} else if (p->format == FMT_PB) {
		rc = schedule_write_pb(&o->s, out.f, err);
		if (rc == 0) {
			/* One more Schedule message with the direct-connect fields:
			 * protobuf merges concatenated messages. */
			struct arena a = {0};

			rc = schedule_append_pb(schedule_extra_msg(&a, r), out.f, err);
			if (rc == 0 && o->is_reduced)
				rc = schedule_append_pb(
				    schedule_reduced_msg(&a, &o->group, o->ntransfers), out.f, err);
			arena_free(&a);
		}
	} else if (p->format == FMT_TEXT && o->expand_on_write) {
		struct sched_reduced red = {.group = o->group, .prog = o->s};

		sched_reduced_write_text(out.f, &red, UINT32_MAX);
	} else if (p->format == FMT_TEXT) {
		if (o->is_reduced)
			fprintf(out.f,
				"symmetry-reduced: the program of %u node%s below; the schedule is "
				"every transfer translated by every element of %s (%zu "
				"transfers)\n",
				o->group.reps, o->group.reps > 1 ? "s" : " (0)", o->group.name,
				o->ntransfers);
		sched_write_text(out.f, &o->s, UINT32_MAX);
		if (r->nabsent) {
			fprintf(out.f, "failed (no part in it): ");
			text_failed_nodes(out.f, r);
			fprintf(out.f, "\n");
		}
		if (r->nic_ports) {
			const struct fabric *f = r->fabric;

			fprintf(out.f,
				"links (port j of a host transmits to port j of the other):\n");
			for (uint32_t k = 0; k < f->ncircuits; k++) {
				const struct circuit *ci = &f->circuits[k];

				fprintf(out.f, "  %s:%u -> %s:%u  via %s %u -> %u\n",
					f->hosts[ci->src_host].name, ci->src_port,
					f->hosts[ci->dst_host].name, ci->dst_port,
					f->switches[ci->sw].name, ci->in_port, ci->out_port);
			}
		}
	} else {
		struct json_writer w;

		jw_init(&w, out.f, true);
		jw_obj_begin(&w);
		if (o->expand_on_write)
			sched_reduced_write_json_members(
			    &w, &(struct sched_reduced){.group = o->group, .prog = o->s});
		else
			sched_write_json_members(&w, &o->s, true);
		write_nodes_and_fraction(&w, r, o);
		if (r->nic_ports)
			write_links_json(r, &w);
		if (o->is_reduced && !o->expand_on_write)
			write_reduced_json(o, &w);
		jw_obj_end(&w);
		jw_finish(&w);
	}
	if (rc == 0)
		return cli_output_commit(&out, err);
	cli_output_abort(&out);
	return -1;
}

/* The fluid bound's line: R*(T) when LP 4.2 reached it, what it certified
 * when its time ran out, the cut bound alone when it gave nothing. */
static void write_fluid_text(const struct direct_fluid *df, FILE *out)
{
	if (!df->have) {
		if (df->why[0])
			fprintf(out, "  %s\n", df->why);
		return;
	}
	if (!df->lp) {
		fprintf(out,
			"  fluid bound: the cut bound, %.6g us for any schedule (%s; bandwidth "
			"only: times add alpha per step)\n",
			df->cut_us, df->why);
		return;
	}
	if (df->optimal)
		fprintf(out, "  fluid bound: R* %.10g s/GB at T = %u (optimal, %.2f s)", df->rstar,
			df->hops, df->seconds);
	else
		fprintf(out,
			"  fluid bound: R* at T = %u between %.6g and %.6g s/GB (stopped at its "
			"%.2f s limit)",
			df->hops, df->rstar_lower, df->rstar, df->time_limit);
	fprintf(out,
		": %.6g us for schedules of at most %u hops%s; cut bound %.6g us for any "
		"(bandwidth only: times add alpha per step)\n",
		df->rstar_lower_us, df->hops,
		df->any_hops ? " and, meeting the cut bound, any" : "", df->cut_us);
}

/* The one cost model every row is priced by, and the bound of each way
 * of relaying the rows assume. */
static void write_model_text(const struct schedule_result *r, FILE *out)
{
	double ct = 0;

	for (unsigned i = 0; i < r->nout; i++)
		if (r->out[i].applies && r->out[i].cut_through)
			ct = r->out[i].lb_us;
	if (r->nic_forwarding)
		fprintf(out,
			"  cost model: alpha per step plus each step's busiest link's bytes over "
			"its bandwidth; s&f rows store and forward (every hop a step), rtd rows "
			"route a step's peers over several hops (NICs forward: an alpha a "
			"step), c-t rows forward within one step (one alpha); ratio: over the "
			"bound of the row's own (s&f %.6g us",
			r->lb_us);
	else
		fprintf(out,
			"  cost model: alpha per step plus each step's busiest link's bytes over "
			"its bandwidth; s&f rows store and forward (every hop a step), rtd rows "
			"route a step's peers over several hops and c-t rows all routes at once "
			"(hosts forward: an alpha a circuit on the longest route, as s&f); "
			"ratio: over the bound of the row's own (s&f %.6g us",
			r->lb_us);
	if (ct > 0)
		fprintf(out, ", c-t %.6g us", ct);
	fprintf(out, "); best: the least time verified\n");
}

static void write_table_text(const struct schedule_result *r, FILE *out)
{
	/* the degraded fabric's figures where its bound is the one given */
	bool deg = r->have_degraded && r->lb_us == r->degraded_us;

	fprintf(out, "%s on %s: %u nodes, degree %u; lower bound %.6g us (%u steps, tau_B* %.6g)\n",
		sched_collective_name(r->collective), r->g->spec, r->g->n, r->degree, r->lb_us,
		deg ? r->degraded.steps : r->lb.steps,
		deg ? r->degraded.tau_b : frac_value(r->lb.tau_b));
	write_fluid_text(&r->fluid, out);
	if (r->nabsent) {
		fprintf(out, "  failed ");
		text_failed_nodes(out, r);
		fprintf(out, ": schedules among the other %u nodes\n", r->g->n);
	}
	if (r->healthy)
		fprintf(out, "  failed links: against healthy %s\n", r->healthy->spec);
	write_model_text(r, out);
	fprintf(out, "  %-12s %7s %14s %12s %5s %8s  %s\n", "algorithm", "steps", "tau_B",
		"time_us", "model", "ratio", "verified");
	int best = schedule_best_row(r);

	for (unsigned i = 0; i < r->nout; i++) {
		const struct schedule_outcome *o = &r->out[i];
		char buf[64];

		if (!o->applies) {
			fprintf(out, "  %-12s n/a: %s\n", o->algo, o->why);
			continue;
		}
		if (frac_valid(o->tau_b) && o->tau_b.den != 1 && o->tau_b.den < 100000)
			frac_str(o->tau_b, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%.6g", o->tau_b_value);
		fprintf(out, "  %-12s %7u %14s %12.6g %5s %8.4f  %s", o->algo, o->steps, buf,
			o->time_us,
			(const char *[]){"s&f", "rtd", "c-t"}[schedule_outcome_model(o)], o->ratio,
			o->verified ? "yes" : "NO");
		if ((int)i == best)
			fprintf(out, "  best");
		if (o->cut_through && o->store_forward_us > 0)
			fprintf(out, "  s&f %.6g us", o->store_forward_us);
		if (o->is_torus)
			fprintf(out, "  xi %.6g", o->tf.xi);
		if (o->is_a2a)
			fprintf(out, "  theta %.6g", o->theta);
		if (r->fluid.have)
			fprintf(out, "  %s fluid x%.4f", o->below_fluid ? "BELOW THE" : "",
				o->time_us / o->fluid_bound_us);
		if (r->healthy && o->healthy_us > 0)
			fprintf(out, "  %+.1f%% vs healthy",
				100 * (o->time_us / o->healthy_us - 1));
		fprintf(out, "\n");
	}
}

/* The main schedule's message without its steps: its figures, the
 * direct-connect ones and the engine's working. */
static Ofc__V1__Schedule *summary_msg(struct arena *a, const struct schedule_result *r)
{
	const struct schedule_outcome *o = r->main;
	Ofc__V1__Schedule *m;

	if (o->have) {
		m = schedule_header_msg(a, &o->s);
		schedule_msg_summary(m, schedule_extra_msg(a, r));
	} else { /* (none held: what the request asked) */
		m = arena_alloc(a, sizeof(*m));
		ofc__v1__schedule__init(m);
		m->collective = (char *)sched_collective_name(r->collective);
		m->algorithm = (char *)o->algo;
	}
	m->detail = schedule_direct_detail_msg(a, r);
	return m;
}

int print_direct(const struct schedule_print *p, const struct schedule_result *r)
{
	const struct schedule_outcome *main_o = r->main;
	struct ofc_error err = {0};
	FILE *out = cli_summary_stream(p);
	int rc = 0;

	if (p->json) {
		/* the summary's one shape (as through ofcd), the engine's
		 * working its detail */
		struct arena a = {0};
		Ofc__V1__Schedule *m = summary_msg(&a, r);
		struct json_writer w;

		jw_init(&w, out, true);
		schedule_summary_json(&w, m);
		jw_finish(&w);
		arena_free(&a);
	} else {
		if (r->compare)
			write_table_text(r, out);
		else
			write_summary_text(r, main_o, out);
		if (r->construction)
			write_construction_text(r->construction, out);
	}
	fflush(out);
	if (write_schedule(p, r, &err) < 0)
		return cli_fail(&err);
	for (unsigned i = 0; i < r->nout; i++)
		if (r->out[i].applies && !r->out[i].verified) {
			fprintf(stderr, "ofc schedule: the %s schedule is not verified: %s\n",
				r->out[i].algo, r->out[i].verify_error);
			rc = 1;
		}
	return rc;
}
