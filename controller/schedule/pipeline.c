/* schedule_compute: which family a request belongs to, its topology, and
 * the algorithm it names or the family's default. */
#include "alltoall/alltoall.h"
#include "controller/schedule/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The item of list (words between commas or spaces, as topo/links.c
 * reads them) that begins at column col (1-based), and how many there are:
 * an error names its item by position, so that a list of hundreds does
 * not push the reason out of the message. */
static void fail_item(const char *list, unsigned col, size_t *item, size_t *count)
{
	*item = *count = 0;
	for (size_t i = 0; list[i]; i++) {
		bool sep = list[i] == ',' || isspace((unsigned char)list[i]);
		bool starts =
		    !sep && (i == 0 || list[i - 1] == ',' || isspace((unsigned char)list[i - 1]));

		if (!starts)
			continue;
		++*count;
		if (i + 1 <= col)
			*item = *count;
	}
}

/* The query's failures taken out of the graph: the schedules run on what
 * is left, priced against the healthy graph as well. Failed nodes are
 * marked in dead (r->g->n bytes). */
static int degrade(struct schedule_result *r, const struct schedule_query *q, uint8_t *dead,
		   struct ofc_error *err)
{
	struct graph *g;

	if (topo_fail_items(r->g, q->fail, &g, dead, err) < 0) {
		char msg[sizeof(err->msg)];
		size_t item, count;

		snprintf(msg, sizeof(msg), "%s", err->msg);
		fail_item(q->fail, err->col, &item, &count);
		if (!err->col || !item)
			return ofc_error_set(err, OFC_E_INPUT, "--fail: %s", msg);
		return ofc_error_set(err, OFC_E_INPUT, "--fail item %zu of %zu: %s", item, count,
				     msg);
	}
	if (!r->healthy) { /* else the config's failures came first */
		r->healthy = r->g;
		r->own_healthy = r->own_graph;
	}
	r->own_graph = g;
	r->g = g;
	return 0;
}

/* Failed nodes: the engines run on the survivors' graph, renumbered. The
 * survivors must reach one another, else nothing can be scheduled. */
static int survivors(struct schedule_result *r, uint8_t *dead, struct ofc_error *err)
{
	uint32_t nkeep;
	struct graph *alive = topo_survivors(r->g, dead, r->g->spec, &r->keep, &nkeep);

	r->whole = r->g;
	r->own_whole = r->own_graph;
	r->own_graph = alive;
	r->g = alive;
	r->absent = dead;
	r->nabsent = r->whole->n - nkeep;
	if (nkeep < 2)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %u of %u nodes failed, no collective is left to "
				     "schedule",
				     alive->spec, r->nabsent, r->whole->n);
	/* the strong components, not all-pairs searches for a diameter
	 * nobody reads here (16,384 survivors: 5 s of the answer's 5.6) */
	uint32_t *comp = xmalloc(((size_t)nkeep + 1) * sizeof(uint32_t));
	uint32_t ncomp = topo_components(alive, comp);
	free(comp);
	if (ncomp != 1)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: the %u surviving nodes are no longer strongly "
				     "connected (some could never reach others): nothing to "
				     "schedule",
				     alive->spec, nkeep);
	return 0;
}

/* Every schedule an outcome keeps, renumbered from the survivors to the
 * whole topology's nodes and verified again there: on the degraded graph
 * with every node, where the failed ones have no links and take no part. */
static void renumber(struct schedule_result *r)
{
	struct verify_opts vo = {.graph = r->whole, .absent = r->absent};
	struct verify_report rep = {0};

	for (uint32_t i = 0; i < r->nout; i++) {
		struct schedule_outcome *o = &r->out[i];

		if (!o->have || o->is_patched) /* (a patch names the whole graph's) */
			continue;
		sched_renumber(&o->s, r->whole->n, r->keep);
		vo.reduce_bytes = outcome_verify_bytes(r);
		if (o->verified && sched_verify(&o->s, &vo, &rep) < 0) {
			o->verified = false;
			o->s.verified = false;
			snprintf(o->verify_error, sizeof(o->verify_error),
				 "renumbered to the topology's nodes: %.280s", rep.error);
		}
	}
}

/* The same request on the healthy graph, for the price of the failures
 * (run before the degraded one: an all-to-all MCF keeps its solution,
 * h->out[i].mcf.warm, to warm-start the degraded graph's). false when it
 * could not run. */
static bool run_healthy(struct schedule_result *h, const struct schedule_result *r,
			const struct schedule_query *q, const char *algo)
{
	struct schedule_query qh = *q;
	struct ofc_error err = {0};

	*h = (struct schedule_result){.kind = SCHEDULE_DIRECT,
				      .fabric = r->fabric,
				      .algorithm = algo,
				      .clock = q->clock,
				      .collective = r->collective,
				      .g = r->healthy,
				      .topology_ports = true};
	/* kept for the degraded run's warm start, which failed hosts rule out
	 * (their survivors are renumbered) */
	qh.keep_warm = q->collective == SCHED_ALLTOALL && !r->keep;
	qh.warm = NULL;
	/* Only its times are used (price_healthy): no fluid bound. */
	qh.no_certify = true;
	/* The healthy MCF is the degraded one's start: a --time-limit below
	 * the default bounds the re-plan, not the solution it starts from. */
	if (q->time_limit > 0 && q->time_limit < 60)
		qh.time_limit = 0;
	return schedule_direct(h, &qh, algo, &err) == 0;
}

/* Each outcome learns the time its algorithm takes on the healthy graph
 * (a fallback's: the algorithm asked). What the healthy run cannot do
 * (an error, an algorithm that does not apply) leaves healthy_us at 0. */
static void price_healthy(struct schedule_result *r, const struct schedule_result *h)
{
	for (uint32_t i = 0; i < r->nout; i++) {
		struct schedule_outcome *o = &r->out[i];
		/* (a fallback against what the fabric ran healthy: the asked) */
		const char *algo = o->fallback_from ? o->fallback_from : o->algo;

		for (uint32_t j = 0; j < h->nout; j++)
			if (strcmp(h->out[j].algo, algo) == 0 && h->out[j].applies &&
			    h->out[j].verified) {
				o->healthy_us = h->out[j].time_us;
				if (h->out[j].have_mcf)
					o->healthy_mcf_s = h->out[j].mcf.seconds;
			}
		if (o->have && o->healthy_us > 0)
			sched_set_metric(&o->s, "healthy_time_us", o->healthy_us);
	}
}

/* The healthy run's fluid MCF solution, if any: the degraded run's start. */
static const struct mcf_warm *healthy_warm(const struct schedule_result *h)
{
	for (uint32_t j = 0; j < h->nout; j++)
		if (h->out[j].have_mcf && h->out[j].mcf.warm)
			return h->out[j].mcf.warm;
	return NULL;
}

/* The kept healthy run stands for this request's: it holds a solution of
 * the healthy graph itself, for the algorithm asked. */
static const struct schedule_kept *kept_fits(const struct schedule_query *q,
					     const struct schedule_result *r, const char *algo)
{
	const struct schedule_kept *k = q->kept;

	if (!k || !k->warm || !r->healthy || q->collective != SCHED_ALLTOALL ||
	    strncmp(k->algo, algo, strlen(algo)) != 0)
		return NULL;
	return mcf_warm_fits(k->warm, r->healthy) ? k : NULL;
}

/* price_healthy from the kept run: the same algorithm's outcome. */
static void price_kept(struct schedule_result *r, const struct schedule_kept *k)
{
	for (uint32_t i = 0; i < r->nout; i++) {
		struct schedule_outcome *o = &r->out[i];

		if (strcmp(o->algo, k->algo) != 0)
			continue;
		o->healthy_us = k->time_us;
		o->healthy_mcf_s = k->mcf_s;
		if (o->have && o->healthy_us > 0)
			sched_set_metric(&o->s, "healthy_time_us", o->healthy_us);
	}
}

int schedule_kept_take(struct schedule_kept *k, struct schedule_result *r, size_t max_bytes,
		       struct ofc_error *err)
{
	struct schedule_outcome *o = r->main;
	size_t bytes;

	memset(k, 0, sizeof(*k));
	if (!o || !o->applies || !o->verified || !o->have_mcf || !o->mcf.warm || r->healthy)
		return ofc_error_set(err, OFC_E_INPUT,
				     "no fluid MCF solution of a healthy graph to keep");
	bytes = mcf_warm_bytes(o->mcf.warm);
	if (bytes > max_bytes)
		return ofc_error_set(err, OFC_E_INPUT,
				     "the healthy MCF solution holds %.1f MiB, over the %.0f MiB "
				     "kept at most",
				     bytes / 1048576.0, max_bytes / 1048576.0);
	snprintf(k->algo, sizeof(k->algo), "%s", o->algo);
	k->time_us = o->time_us;
	k->mcf_s = o->mcf.seconds;
	k->warm = o->mcf.warm;
	k->bytes = bytes;
	o->mcf.warm = NULL;
	return 0;
}

void schedule_kept_free(struct schedule_kept *k)
{
	if (!k)
		return;
	mcf_warm_free(k->warm);
	memset(k, 0, sizeof(*k));
}

/* A config's algorithm is one for its kind of fabric (a WDM ring's, else a
 * direct-connect topology's or a server fabric's; 'all' compares a fabric's
 * own), or an error at its place in the config (a request's --algo is
 * checked where it is parsed). */
static int check_config_algorithm(const struct schedule_query *q, bool ring, struct ofc_error *err)
{
	const struct collective *c = engine_config_algorithm(q);
	const struct engine_ops *e;
	struct strbuf sb = STRBUF_INIT;

	if (!c || (q->algorithm && *q->algorithm))
		return 0;
	e = engine_find(c->algorithm, ring ? ENGINE_RING : ENGINE_DIRECT | ENGINE_SERVERS);
	if (e && !(e->flags & ENGINE_CLI_ONLY))
		return 0;
	if (ring)
		engine_names(&sb, ENGINE_RING, ~0u, 0, ", ");
	fabric_error_at(err, q->fabric, c->loc, "algorithm '%s' for %s is not one for %s (%s)",
			c->algorithm, sched_collective_name(c->op),
			ring ? "a WDM ring" : "a direct-connect topology",
			ring ? sb.buf : "'ofc schedule --help' lists them");
	sb_free(&sb);
	err->code = OFC_E_INPUT;
	return -1;
}

int schedule_compute(const struct schedule_query *q, struct schedule_result *r, bool *spec_error,
		     struct ofc_error *err)
{
	const struct fabric *f = q->fabric;
	bool ring = q->ring || (!q->spec && !q->graph && f && f->nrings);
	const char *algo = schedule_pick_algorithm(q);
	int rc;

	memset(r, 0, sizeof(*r));
	if (spec_error)
		*spec_error = false;
	if (check_config_algorithm(q, ring, err) < 0)
		return -1;
	r->fabric = f;
	r->algorithm = algo;
	r->clock = q->clock;
	r->collective = q->collective;
	r->memory_limit = schedule_memory_limit(q);
	if ((q->demand || q->demand_n) && (ring || q->collective != SCHED_ALLTOALL))
		return ofc_error_set(err, OFC_E_USAGE,
				     "a demand matrix is for --collective alltoall on a "
				     "direct-connect topology");
	if (ring && q->fail) {
		return ofc_error_set(err, OFC_E_USAGE,
				     "--fail takes links out of a direct-connect topology, not "
				     "a WDM ring");
	} else if (ring) {
		rc = schedule_ring(r, q, algo, err);
	} else {
		r->kind = SCHEDULE_DIRECT;
		if (q->graph) {
			r->g = q->graph;
		} else if (q->spec) {
			if (topo_build_in(q->spec, q->files, &r->own_graph, err) < 0) {
				/* (An edge-list file's own errors carry FILE:LINE:COL:
				 * topo_spec_error says which.) */
				if (err->code != OFC_E_RUNTIME)
					err->code = OFC_E_INPUT;
				if (spec_error)
					*spec_error = true;
				return -1;
			}
			r->g = r->own_graph;
		} else if (f && f->degraded) {
			/* The config's failed hosts, ports and links. */
			r->g = f->degraded;
			r->healthy = f->graph;
		} else if (f && f->graph) {
			r->g = f->graph;
		} else {
			return ofc_error_set(
			    err, OFC_E_USAGE,
			    "%s has neither a WDM ring nor a topology to schedule on",
			    f ? f->file : "the request");
		}
		uint8_t *dead = xcalloc((size_t)r->g->n + 1, 1);
		bool any = false;

		for (uint32_t h = 0; !q->spec && !q->graph && f && f->degraded && h < f->nhosts;
		     h++)
			any |= dead[h] = f->hosts[h].failed;
		if (q->fail && degrade(r, q, dead, err) < 0) {
			free(dead);
			schedule_result_free(r);
			return -1;
		}
		for (uint32_t u = 0; u < r->g->n && !any; u++)
			any = dead[u];
		if (any && (q->demand || q->demand_n)) {
			free(dead);
			schedule_result_free(r);
			return ofc_error_set(err, OFC_E_USAGE,
					     "a demand matrix names every node: not with failed "
					     "hosts (failed links are fine)");
		}
		if (!any)
			free(dead);
		else if (survivors(r, dead, err) < 0) {
			schedule_result_free(r);
			return -1;
		}
		struct schedule_result h = {0};
		const struct schedule_kept *k = kept_fits(q, r, algo);
		bool have_h = r->healthy && !k && run_healthy(&h, r, q, algo);
		struct schedule_query qd = *q;

		/* The healthy MCF warm-starts the degraded one on the same
		 * nodes; failed hosts renumber the survivors, so not there. */
		qd.warm = r->keep ? NULL : k ? k->warm : have_h ? healthy_warm(&h) : NULL;
		qd.kept = NULL;
		rc = schedule_direct(r, &qd, algo, err);
		if (rc == 0 && r->keep)
			renumber(r);
		if (rc == 0 && have_h)
			price_healthy(r, &h);
		if (rc == 0 && k) {
			price_kept(r, k);
			r->used_kept = true;
		}
		if (have_h)
			schedule_result_free(&h);
	}
	if (rc < 0)
		schedule_result_free(r);
	return rc;
}

void schedule_result_free(struct schedule_result *r)
{
	bound_beside_wait(r); /* (schedule_direct's return has: none left) */
	for (uint32_t i = 0; i < r->nout; i++)
		schedule_outcome_free(&r->out[i]);
	free(r->out);
	topo_tree_free(r->tree);
	topo_tree_free(r->healthy_tree);
	fabric_view_free(&r->fv);
	graph_free(r->own_graph);
	graph_free(r->own_healthy);
	graph_free(r->own_whole);
	free(r->keep);
	free(r->absent);
	free(r->link_rate);
	free(r->arc_cap);
	free(r->pg_cap);
	free(r->links);
	free(r->host_betas);
	free(r->bfb_inject);
	memset(r, 0, sizeof(*r));
}

int schedule_check(struct schedule_result *r, struct ofc_error *err)
{
	if (r->main && r->main->applies)
		return 0;
	ofc_error_set(err, r->main ? r->main->why_code : OFC_E_RUNTIME, "%s",
		      r->main ? r->main->why : "nothing was scheduled");
	schedule_result_free(r);
	return -1;
}
