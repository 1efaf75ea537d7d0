/* Choosing a target by its cost: a robotic patch panel moves a
 * circuit a minute, so a topology whose collectives are a little faster may
 * not repay the hours its moves take before the job ends. Every candidate
 * is priced twice, by the moves its plan needs and by its predicted
 * collective time, and the one with the least reconfiguration + horizon x
 * collective time is planned. See reconfig.h for the contract and
 * docs/relabel.md for the user's side. */
#include "controller/config/config.h"
#include "controller/pick/pick.h"
#include "controller/reconfig/internal.h"
#include "controller/schedule/schedule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The config's collectives that are priced: every direct-connect one (issue
 * 41: all-to-all too, by the MCF, since the pipeline prices every
 * candidate). */
static bool priced_kind(enum sched_collective op)
{
	return op == SCHED_ALLGATHER || op == SCHED_REDUCE_SCATTER || op == SCHED_ALLREDUCE ||
	       op == SCHED_ALLTOALL;
}

/* What is being chosen for: the whole fabric, or one partition (its
 * members are the nodes, its collectives the workload). */
struct scope {
	struct ctl *c;
	const struct partition *p; /* NULL: the whole fabric */
	const struct collective *colls;
	uint32_t ncolls;
	uint32_t nodes, ports; /* hosts (or members) and the fewest ports of one */
	const struct device_state **actual;
	const struct ctl_choice_opts *o;
};

/* One run of the config's collectives on g, through the schedule
 * pipeline (schedule_compute on the graph, the fabric's cost model: alpha
 * per step, a node's egress = its links x the link bandwidth): each the
 * algorithm the config names for it, else the collective's default (BFB,
 * the all-to-all MCF), verified. The MCF is given 20 s a candidate. */
static int price_graph(const struct scope *sc, const struct graph *g, double *us, uint32_t *steps,
		       struct ofc_error *err)
{
	const struct fabric *f = sc->c->fabric;

	*us = 0;
	*steps = 0;
	for (uint32_t i = 0; i < sc->ncolls; i++) {
		const struct collective *col = &sc->colls[i];
		struct schedule_query q = {.fabric = f,
					   .graph = g,
					   .collective = col->op,
					   .size = col->size,
					   .algorithm = col->algorithm,
					   .time_limit = 20};
		struct schedule_result r;

		if (!priced_kind(col->op))
			continue;
		if (schedule_compute(&q, &r, NULL, err) < 0 || schedule_check(&r, err) < 0)
			return -1;
		if (!r.main->verified) {
			ofc_error_set(err, OFC_E_RUNTIME, "%s on %s: not verified: %s",
				      sched_collective_name(col->op), g->spec,
				      r.main->verify_error);
			schedule_result_free(&r);
			return -1;
		}
		*us += r.main->time_us;
		*steps += (uint32_t)r.main->alphas; /* routed: a host's forwards too */
		schedule_result_free(&r);
	}
	return 0;
}

/* Moves and switching time of reaching the target t (a fabric whose
 * circuits are the candidate's; NULL: the switches and hosts as they are):
 * switches and the testbed's hosts from their targets, rings as planned
 * already (no candidate changes them). */
static void count_moves(const struct ctl *c, const struct fabric *t, struct ctl_candidate *k)
{
	struct device_state want = {0};
	struct op_batch ops = {0};

	k->moves = 0;
	k->reconfig_s = 0;
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		uint32_t n;

		if (!t && cd->cfg.cls != DEV_RING)
			continue;
		if (cd->cfg.cls == DEV_SWITCH) {
			ctl_switch_target(t, (uint32_t)fabric_find_switch(t, cd->cfg.name), &want);
		} else if (cd->cfg.cls == DEV_HOSTS) {
			ctl_hosts_target(t, c->state_dir, &want);
		} else {
			k->moves += cd->plan.n;
			k->reconfig_s = fmax(k->reconfig_s, ctl_ops_seconds(cd, &cd->plan));
			continue;
		}
		batch_free(&ops);
		state_diff(&cd->actual, &want, &ops);
		n = ops.n;
		k->moves += n;
		/* the slowest device's: a transaction drives them side by side */
		k->reconfig_s = fmax(k->reconfig_s, ctl_ops_seconds(cd, &ops));
	}
	batch_free(&ops);
	state_free(&want);
}

/* g again, arcs in the same order (so the same port permutations). */
static struct graph *copy_graph(const struct graph *g)
{
	uint32_t *tails = graph_arc_tails(g);
	struct graph *r = graph_from_arcs(g->n, g->m, tails, g->adj, g->spec);

	r->vertex_transitive = g->vertex_transitive;
	free(tails);
	return r;
}

/* A partition's candidate: its circuits over the members (renumbered when
 * asked), and the moves of aiming the partition at them (ctl_partition's
 * plan, so every check of a partition plan applies). */
static int price_partition_topology(const struct scope *sc, struct graph *g,
				    struct ctl_candidate *k, struct ofc_error *err)
{
	struct ctl *c = sc->c;
	int rc;

	k->g = g;
	if (sc->o->relabel) {
		struct fabric_relabel rep;

		rc = partition_relabel(c->fabric, sc->p, g, sc->actual, &sc->o->relabel_opts,
				       &k->circuits, &k->ncircuits, &rep, err);
		if (rc == 0) {
			k->relabelled = rep.changed;
			k->arcs = rep.arcs;
			k->kept = rep.kept;
		}
	} else {
		rc = topo_ports(g, &k->pm, err);
		if (rc == 0)
			rc = partition_circuits_ports(c->fabric, sc->p, &k->pm, &k->circuits,
						      &k->ncircuits, err);
	}
	if (rc == 0)
		rc = ctl_partition_aim(c, sc->p, k->circuits, k->ncircuits, err);
	if (rc == 0) {
		k->moves = ctl_plan_size(c);
		k->reconfig_s = ctl_plan_seconds(c);
	}
	return rc;
}

/* Topology g (taken over) as a candidate: its port permutations and
 * circuits on the fabric's wiring, renumbered to keep circuits when asked,
 * then its moves. The fabric is copied shallowly, so f itself is not
 * touched; the candidate keeps the graph, ports and circuits. A
 * partition's: price_partition_topology. */
static int price_topology(const struct scope *sc, struct graph *g, struct ctl_candidate *k,
			  struct ofc_error *err)
{
	const struct ctl *c = sc->c;
	const struct ctl_choice_opts *o = sc->o;
	const struct device_state *const *actual = sc->actual;
	struct fabric t = *c->fabric;
	int rc;

	snprintf(k->spec, sizeof(k->spec), "%s", g->spec ? g->spec : "?");
	if (price_graph(sc, g, &k->collective_us, &k->steps, err) < 0) {
		graph_free(g);
		return -1;
	}
	if (sc->p)
		return price_partition_topology(sc, g, k, err);
	t.graph = g;
	t.degraded = NULL;
	t.circuits = NULL;
	t.ncircuits = 0;
	memset(&t.ports, 0, sizeof(t.ports));
	rc = topo_ports(g, &t.ports, err);
	if (rc == 0)
		rc = fabric_circuits(&t, err);
	if (rc == 0 && o->relabel) {
		struct fabric_relabel rep;

		rc = fabric_relabel(&t, actual, &o->relabel_opts, &rep, err);
		graph_free(t.degraded); /* install() derives the chosen one's */
		if (rc == 0) {
			k->relabelled = rep.changed;
			k->arcs = rep.arcs;
			k->kept = rep.kept;
		}
	}
	k->g = t.graph;
	k->pm = t.ports;
	k->circuits = t.circuits;
	k->ncircuits = t.ncircuits;
	if (rc == 0)
		count_moves(c, &t, k);
	return rc;
}

/* The circuits in place, when they make a topology BFB can schedule
 * (every host reached from every other). */
/* The links among a partition's members in g (the switches' host-level
 * graph), renumbered as members; links to other hosts are dropped. */
static struct graph *members_only(const struct partition *p, const struct graph *g)
{
	uint32_t *member = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t));
	uint32_t *tails = graph_arc_tails(g), *heads = xmalloc(((size_t)g->m + 1) * 4), k = 0;

	memset(member, 0xff, ((size_t)g->n + 1) * sizeof(uint32_t));
	for (uint32_t m = 0; m < p->nmembers; m++)
		member[p->member_host[m]] = m;
	for (uint32_t a = 0; a < g->m; a++)
		if (member[tails[a]] != UINT32_MAX && member[g->adj[a]] != UINT32_MAX) {
			heads[k] = member[g->adj[a]];
			tails[k++] = member[tails[a]];
		}
	struct graph *r = graph_from_arcs(p->nmembers, k, tails, heads, "in place");
	free(member);
	free(tails);
	free(heads);
	return r;
}

static int price_in_place(const struct scope *sc, struct ctl_choice *ch, struct ctl_candidate *k)
{
	const struct ctl *c = sc->c;
	struct graph *g = fabric_current_graph(c->fabric, sc->actual);

	if (sc->p) {
		struct graph *mine = members_only(sc->p, g);

		graph_free(g);
		g = mine;
	}
	struct topo_facts facts;
	struct ofc_error e = {0};
	int rc = -1;

	k->kind = CHOICE_KEEP;
	snprintf(k->spec, sizeof(k->spec), "in place");
	topo_facts(g, &facts, 1);
	if (g->m == 0)
		snprintf(ch->not_candidate, sizeof(ch->not_candidate),
			 "the switches hold no circuit between hosts");
	else if (!facts.strongly_connected)
		snprintf(ch->not_candidate, sizeof(ch->not_candidate),
			 "the circuits in place do not connect every host to every other");
	else if (price_graph(sc, g, &k->collective_us, &k->steps, &e) < 0)
		snprintf(ch->not_candidate, sizeof(ch->not_candidate),
			 "the circuits in place cannot be priced: %.200s", e.msg);
	else
		rc = 0;
	k->arcs = k->kept = g->m;
	graph_free(g);
	if (rc == 0 && !sc->p)
		count_moves(c, NULL, k);
	return rc;
}

/* "keep torus:8x8 in place" when the switches hold exactly what the last
 * commit recorded for that topology, else "keep the circuits in place". */
static void label_in_place(const struct scope *sc, struct ctl_candidate *k)
{
	const struct ctl *c = sc->c;
	struct ctl_record r;
	struct ofc_error e = {0};
	bool same = true;

	snprintf(k->label, sizeof(k->label), "keep the circuits in place");
	if (ctl_load_record_for(c, &r, &e) < 0)
		return;
	for (uint32_t i = 0; i < c->ndevs && same; i++) {
		const struct ctl_device *cd = &c->devs[i];
		bool found = false;

		if (cd->cfg.cls != DEV_SWITCH)
			continue;
		for (uint32_t j = 0; j < r.ndevs && !found; j++)
			if (strcmp(r.dev_names[j], cd->cfg.name) == 0) {
				struct op_batch d = {0};

				found = true;
				state_diff(&r.dev_states[j], &cd->actual, &d);
				same = d.n == 0;
				batch_free(&d);
			}
		same &= found;
	}
	if (same && r.have_state && r.topology &&
	    (sc->p ? r.partition && strcmp(r.partition, sc->p->name) == 0 : !r.partition)) {
		snprintf(k->spec, sizeof(k->spec), "%s", r.topology);
		snprintf(k->label, sizeof(k->label), "keep %s in place", r.topology);
	}
	ctl_record_free(&r);
}

/* Up to o->alternatives entries of the finder's frontier for the hosts'
 * ports, fastest first by the finder's figures for the collectives it
 * prices (the use case of controller/pick, the fabric's cost model), other
 * than the requested topology. One that cannot be built or priced is
 * skipped; every one weighed is then priced by the pipeline. */
static void add_alternatives(const struct scope *sc, struct ctl_choice *ch)
{
	const struct ctl_choice_opts *o = sc->o;
	struct pick_work *work = xcalloc(sc->ncolls + 1, sizeof(*work));
	struct pick_request q = {.nodes = sc->nodes, .degree = sc->ports, .work = work};
	struct pick_result pr;
	struct ofc_error e = {0};

	pick_model_of(sc->c->fabric, &q.model);
	for (uint32_t j = 0; j < sc->ncolls; j++)
		if (sc->colls[j].op != SCHED_ALLTOALL && priced_kind(sc->colls[j].op))
			work[q.nwork++] = (struct pick_work){
			    .op = sc->colls[j].op, .size = sc->colls[j].size, .weight = 1};
	if (!o->alternatives || pick_run(&q, &pr, &e) < 0) {
		free(work);
		return;
	}
	const struct finder_result *fr = &pr.front;
	uint32_t added = 0;
	for (size_t at = 0; at < fr->n && added < o->alternatives; at++) {
		const struct finder_entry *fe = &fr->front[pr.rank[at]];

		/* Not the requested topology again, nor the one in place. */
		if (strcmp(fe->spec, ch->cand[0].spec) == 0 ||
		    (ch->n > 1 && ch->cand[1].kind == CHOICE_KEEP &&
		     strcmp(fe->spec, ch->cand[1].spec) == 0))
			continue;
		struct graph *g;
		struct ctl_candidate *k = &ch->cand[ch->n];

		memset(k, 0, sizeof(*k));
		k->kind = CHOICE_ALTERNATIVE;
		if (topo_build(fe->spec, &g, &e) < 0 || g->n != sc->nodes) {
			if (g)
				graph_free(g);
			continue;
		}
		if (price_topology(sc, g, k, &e) < 0) {
			ctl_candidate_free(k);
			continue;
		}
		snprintf(k->label, sizeof(k->label), "%s%s (the finder's)", k->spec,
			 k->relabelled ? " renumbered" : "");
		ch->n++;
		added++;
	}
	pick_free(&pr);
	free(work);
}

static void describe(const struct ctl_candidate *k, double horizon, char *buf, size_t n)
{
	char r[32], col[32], tot[32];

	fmt_duration_long(r, sizeof(r), k->reconfig_s);
	fmt_duration_long(col, sizeof(col), k->collective_us * 1e-6);
	fmt_duration_long(tot, sizeof(tot), k->total_s);
	snprintf(buf, n, "%.200s: %u move%s (%s) + %g x %s of collectives = %s", k->label, k->moves,
		 k->moves == 1 ? "" : "s", r, horizon, col, tot);
}

/* Make the chosen candidate the plan. */
static int install(const struct scope *sc, struct ctl_candidate *k, struct ofc_error *err)
{
	struct ctl *c = sc->c;
	struct fabric *f = c->fabric;

	if (sc->p && k->kind == CHOICE_KEEP) {
		for (uint32_t i = 0; i < c->ndevs; i++)
			state_copy(&c->devs[i].target, &c->devs[i].actual);
		ctl_diff(c);
		c->partition = sc->p;
		c->relabelled = false;
		return 0;
	}
	if (sc->p) {
		if (ctl_partition_aim(c, sc->p, k->circuits, k->ncircuits, err) < 0)
			return -1;
		c->relabelled = k->relabelled;
		return 0;
	}

	for (uint32_t i = 0; i < c->ndevs; i++) {
		struct ctl_device *cd = &c->devs[i];

		if (cd->cfg.cls == DEV_RING)
			continue;
		if (k->kind == CHOICE_KEEP)
			state_copy(&cd->target, &cd->actual);
	}
	if (k->kind != CHOICE_KEEP) {
		graph_free(f->graph);
		port_map_free(&f->ports);
		free(f->circuits);
		f->graph = k->g;
		f->ports = k->pm;
		f->circuits = k->circuits;
		f->ncircuits = k->ncircuits;
		k->g = NULL;
		k->circuits = NULL;
		memset(&k->pm, 0, sizeof(k->pm));
		if (k->kind == CHOICE_ALTERNATIVE) {
			/* Schedules of the old topology's failures no longer apply. */
			graph_free(f->degraded);
			f->degraded = NULL;
			f->nfailed_hosts = 0;
		} else if (k->relabelled && fabric_failures_renumbered(f, err) < 0) {
			return -1; /* the failures cut the renumbered topology */
		}
		c->relabelled = k->relabelled;
		ctl_retarget(c);
		return 0;
	}
	ctl_diff(c);
	return 0;
}

int ctl_choose(struct ctl *c, const struct ctl_choice_opts *o, struct ctl_choice *ch,
	       struct ofc_error *err)
{
	struct fabric *f = c->fabric;
	struct strbuf priced = {0}, left = {0};

	const struct partition *p = o->partition;
	struct scope sc = {.c = c, .p = p, .o = o, .ports = UINT32_MAX};
	struct graph *g = NULL;

	memset(ch, 0, sizeof(*ch));
	ch->chosen = -1;
	ch->horizon = o->horizon;
	if (!(o->horizon >= 0) || !isfinite(o->horizon))
		return ofc_error_set(err, OFC_E_USAGE, "--horizon must be a count of runs");
	if (p) {
		/* A partition's collectives, else the fabric's. */
		sc.colls = p->ncollectives ? p->collectives : f->collectives;
		sc.ncolls = p->ncollectives ? p->ncollectives : f->ncollectives;
		sc.nodes = p->nmembers;
		for (uint32_t m = 0; m < p->nmembers; m++)
			sc.ports = f->hosts[p->member_host[m]].ports < sc.ports
				       ? f->hosts[p->member_host[m]].ports
				       : sc.ports;
		if (partition_graph(f, p, &g, err) < 0)
			return -1;
	} else {
		if (!f->graph || !f->circuits || f->graph->n != f->nhosts)
			return ofc_error_set(err, OFC_E_INPUT,
					     "--horizon: fabric %s has no switched target topology "
					     "to weigh against its moves",
					     f->name);
		sc.colls = f->collectives;
		sc.ncolls = f->ncollectives;
		sc.nodes = f->nhosts;
		for (uint32_t h = 0; h < f->nhosts; h++)
			sc.ports = f->hosts[h].ports < sc.ports ? f->hosts[h].ports : sc.ports;
		g = copy_graph(f->graph);
	}
	for (uint32_t i = 0; i < sc.ncolls; i++) {
		char size[32];
		struct strbuf *sb = priced_kind(sc.colls[i].op) ? &priced : &left;

		fmt_size(size, sizeof(size), sc.colls[i].size);
		sb_printf(sb, "%s%s %s", sb->len ? ", " : "", sched_collective_name(sc.colls[i].op),
			  size);
	}
	snprintf(ch->priced, sizeof(ch->priced), "%s", priced.len ? priced.buf : "");
	snprintf(ch->left_out, sizeof(ch->left_out), "%s", left.len ? left.buf : "");
	sb_free(&left);
	if (!priced.len) {
		graph_free(g);
		return ofc_error_set(err, OFC_E_INPUT,
				     "--horizon: %s names no collective to predict the time "
				     "of%s%s",
				     f->file, p ? " for partition " : "", p ? p->name : "");
	}
	sb_free(&priced);

	const char *spec = p ? p->topology.spec : f->topology.spec;
	int rc;

	sc.actual = ctl_switch_states(c);
	ch->cand = xcalloc(3 + o->alternatives, sizeof(*ch->cand));
	ch->cand[0].kind = CHOICE_REQUESTED;
	ch->n = 1;
	rc = price_topology(&sc, g, &ch->cand[0], err);
	if (rc < 0) {
		free(sc.actual);
		ctl_choice_free(ch);
		return -1;
	}
	snprintf(ch->cand[0].spec, sizeof(ch->cand[0].spec), "%s", spec);
	snprintf(ch->cand[0].label, sizeof(ch->cand[0].label), "%s%s (requested)", spec,
		 ch->cand[0].relabelled ? " renumbered" : "");
	if (price_in_place(&sc, ch, &ch->cand[1]) == 0) {
		label_in_place(&sc, &ch->cand[1]);
		ch->n++;
	}
	add_alternatives(&sc, ch);
	free(sc.actual);

	for (uint32_t i = 0; i < ch->n; i++) {
		struct ctl_candidate *k = &ch->cand[i];

		k->total_s = k->reconfig_s + o->horizon * k->collective_us * 1e-6;
		k->fits = !o->max_moves_set || k->moves <= o->max_moves;
		if (k->fits && (ch->chosen < 0 || k->total_s < ch->cand[ch->chosen].total_s))
			ch->chosen = (int)i;
	}
	if (ch->chosen < 0) {
		struct strbuf sb = {0};

		for (uint32_t i = 0; i < ch->n; i++)
			sb_printf(&sb, "%s%s %u", i ? ", " : "", ch->cand[i].label,
				  ch->cand[i].moves);
		ofc_error_set(err, OFC_E_RUNTIME,
			      "no target within --max-moves %u (moves: %s%s%s); nothing was "
			      "changed",
			      o->max_moves, sb.buf,
			      ch->not_candidate[0] ? "; not kept as is: " : "", ch->not_candidate);
		sb_free(&sb);
		ctl_choice_free(ch);
		return -1;
	}

	/* Why: the chosen against the next best that fits. */
	int next = -1;
	uint32_t over = 0;
	char a[400], b[400] = "";

	for (uint32_t i = 0; i < ch->n; i++) {
		over += !ch->cand[i].fits;
		if ((int)i != ch->chosen && ch->cand[i].fits &&
		    (next < 0 || ch->cand[i].total_s < ch->cand[next].total_s))
			next = (int)i;
	}
	describe(&ch->cand[ch->chosen], o->horizon, a, sizeof(a));
	if (next >= 0)
		describe(&ch->cand[next], o->horizon, b, sizeof(b));
	snprintf(ch->why, sizeof(ch->why), "chose %s; %s%s%s", a, next >= 0 ? "next best " : "",
		 next >= 0 ? b : "no other candidate", "");
	if (over) {
		size_t l = strlen(ch->why);

		snprintf(ch->why + l, sizeof(ch->why) - l, "; %u over --max-moves %u", over,
			 o->max_moves);
	}
	rc = install(&sc, &ch->cand[ch->chosen], err);
	for (uint32_t i = 0; i < ch->n; i++)
		ctl_candidate_free(&ch->cand[i]);
	if (rc < 0)
		ctl_choice_free(ch);
	return rc;
}
