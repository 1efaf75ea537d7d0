/* A direct-connect request through the engine table: the request's
 * options checked against the engine it names (the names in every message
 * from the table), the set-up (direct.c), then the engine's build, or every
 * row 'all' compares for the collective side by side; BFB refused for size
 * on a degraded torus, Swing around the failed links in its place. */
#include "controller/schedule/internal.h"

#include <stdio.h>
#include <string.h>

/* The names the engine table lists for a message, as a C string (kept in
 * buf). */
static const char *names_of(char *buf, size_t len, unsigned colls, unsigned flags, const char *last)
{
	struct strbuf sb = STRBUF_INIT;

	engine_names(&sb, ENGINE_DIRECT, colls, flags, last);
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	return buf;
}

/* The request's options against the algorithm (e: its row, NULL when the
 * name is none), before anything is built. */
static int check_options(const struct schedule_query *q, const struct engine_ops *e,
			 const char *algo, struct ofc_error *err)
{
	unsigned c = ENGINE_C(q->collective);
	char list[512];

	/* All-to-all runs its own engines alone; the others refuse the
	 * collectives they do not serve when they are built. */
	if (!e || (q->collective == SCHED_ALLTOALL && !(e->serves & c)))
		return ofc_error_set(err, OFC_E_USAGE, "unknown --algo '%s' for %s (%s)", algo,
				     q->collective == SCHED_ALLTOALL ? "alltoall"
								     : "a direct-connect topology",
				     names_of(list, sizeof(list), c, 0, " or "));
	if (q->variant && !(e->flags & ENGINE_VARIANT))
		return ofc_error_set(err, OFC_E_USAGE, "--variant goes with --algo %s",
				     names_of(list, sizeof(list), ~0u, ENGINE_VARIANT, " or "));
	if (q->reduced == SCHEDULE_REDUCED_ALWAYS &&
	    !(e->reduced & (q->collective == SCHED_ALLTOALL ? c : ~ENGINE_C(SCHED_ALLTOALL)))) {
		struct strbuf sb = STRBUF_INIT;

		engine_reduced_names(&sb);
		ofc_error_set(err, OFC_E_USAGE, "--reduced goes with --algo %s", sb.buf);
		sb_free(&sb);
		return -1;
	}
	if (q->lowering && (q->collective != SCHED_ALLTOALL || !(e->flags & ENGINE_LOWERING)))
		return ofc_error_set(err, OFC_E_USAGE,
				     "--lowering goes with --collective alltoall --algo %s",
				     names_of(list, sizeof(list), ~0u, ENGINE_LOWERING, " or "));
	/* (found here once: the engine gets the table's row) */
	if (q->lowering && !a2a_lowering_find(q->lowering)) {
		struct strbuf sb = STRBUF_INIT;

		a2a_lowering_names(&sb, false, ", ");
		ofc_error_set(err, OFC_E_INPUT, "unknown lowering '%s' (%s)", q->lowering, sb.buf);
		sb_free(&sb);
		return -1;
	}
	return 0;
}

void engine_build(enum engine_build b, struct schedule_result *r, const struct schedule_query *q,
		  const struct engine_ops *e)
{
	static void (*const builds[])(struct schedule_result *, const struct schedule_query *,
				      const struct engine_ops *) = {
	    [ENGINE_BUILD_BFB] = direct_build_bfb,
	    [ENGINE_BUILD_BFB_LP] = direct_build_bfb_lp,
	    [ENGINE_BUILD_EXPANSION] = direct_build_expansion,
	    [ENGINE_BUILD_BASELINE] = direct_build_baseline,
	    [ENGINE_BUILD_TORUS] = direct_build_torus,
	    [ENGINE_BUILD_TORUS_VARIANTS] = direct_torus_variants,
	    [ENGINE_BUILD_TORUS_ROUTED] = direct_torus_routed,
	    [ENGINE_BUILD_ALLTOALL] = direct_build_alltoall,
	};

	builds[b](r, q, e);
}

/* Every direct-connect row that names the collective in in_all. */
static void build_every(struct schedule_result *r, const struct schedule_query *q)
{
	const struct engine_ops *x;

	for (unsigned i = 0; (x = engine_at(i)); i++)
		if ((x->fabrics & ENGINE_DIRECT) && (x->in_all & ENGINE_C(q->collective)))
			engine_build(x->build, r, q, x);
}

/* swing-all: every row's torus runs, the variant rows' first. */
static void build_torus_all(struct schedule_result *r, const struct schedule_query *q)
{
	const struct engine_ops *x;

	for (int variants = 1; variants >= 0; variants--)
		for (unsigned i = 0; (x = engine_at(i)); i++)
			if (x->torus && !!(x->flags & ENGINE_VARIANT) == variants)
				engine_build(x->torus, r, q, x);
}

/* Whether the healthy graph a degraded one came from is a torus (Swing's
 * detours re-route on one). */
static bool healthy_torus(const struct schedule_result *r)
{
	return topo_torus_dims(r->healthy_tree, NULL) > 0;
}

/* r->note once Swing answered in BFB's place (o, its refusal kept in
 * fallback_why): what came before BFB's attempt at a patch (its "BFB
 * explicit on the degraded graph: ...", last before n0, which the
 * refusal repeats), the refusal, then Swing's own note (from n0 on). */
static void note_instead(struct schedule_result *r, const struct schedule_outcome *o, size_t n0)
{
	char tail[sizeof(r->note)], *cut = strstr(r->note, "BFB explicit on the degraded graph: ");
	const char *sw = r->note + n0;

	sw += strncmp(sw, "; ", 2) == 0 ? 2 : 0;
	snprintf(tail, sizeof(tail), "%s", sw);
	if (!cut || cut > r->note + n0)
		cut = r->note + n0;
	while (cut > r->note && (cut[-1] == ' ' || cut[-1] == ';'))
		cut--;
	*cut = 0;
	size_t len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len,
		 "%s%s refused (%.500s): Swing around the failed links instead, %s-optimal (the "
		 "cost model's choice)%s%s",
		 len ? "; " : "", o->fallback_from, o->fallback_why, o->variant,
		 tail[0] ? "; " : "", tail);
}

/* BFB (row e) refused for size on a torus with failed links or ports, its
 * explicit schedule and its structure both over the memory limit: an
 * allreduce still gets a schedule, Swing's healthy program and the
 * detours of the transfers that cross a failed arc (engine_torus.c), in
 * the variant the cost model prefers as --algo swing picks it, verified
 * and priced against the degraded bound; the outcome is Swing's, with
 * fallback_from and fallback_why saying what was asked and why it was
 * refused. Where Swing cannot answer either (a failed host, over the
 * memory limit too), BFB's refusal stands with Swing's reason after its
 * own two; any other collective or topology keeps BFB's as it is. */
static void swing_instead(struct schedule_result *r, const struct schedule_query *q,
			  const struct engine_ops *e)
{
	const struct engine_ops *sw = engine_find("swing", ENGINE_DIRECT);
	struct schedule_outcome *o = &r->out[0], *n = &r->out[1];
	size_t n0 = strlen(r->note);

	if (r->compare || r->nout != 1 || !o->size_refused || q->collective != SCHED_ALLREDUCE ||
	    !healthy_torus(r))
		return;
	engine_build(sw->build, r, q, sw); /* into n */
	if (!n->applies) {
		size_t len = strlen(o->why);

		snprintf(o->why + len, sizeof(o->why) - len,
			 "; nor Swing around the failed links: %s", n->why);
		r->note[n0] = 0;
	} else {
		snprintf(n->fallback_why, sizeof(n->fallback_why), "%s", o->why);
		n->fallback_from = e->name;
		schedule_outcome_free(o);
		*o = *n;
		memset(n, 0, sizeof(*n));
		note_instead(r, o, n0);
	}
	schedule_outcome_free(n);
	memset(n, 0, sizeof(*n));
	r->nout = 1;
}

int schedule_direct(struct schedule_result *r, const struct schedule_query *q, const char *algo,
		    struct ofc_error *err)
{
	double t_start = now_seconds();
	const struct engine_ops *e = engine_find(algo, ENGINE_DIRECT);

	if (check_options(q, e, algo, err) < 0 || direct_setup(r, q, err) < 0)
		return -1;
	r->out = xcalloc(8, sizeof(*r->out));
	r->compare = e->flags & ENGINE_COMPARE;
	if (e->flags & ENGINE_EVERY)
		build_every(r, q);
	else if (e->flags & ENGINE_TORUS_ALL)
		build_torus_all(r, q);
	else
		engine_build(e->build, r, q, e);
	swing_instead(r, q, e);
	if (r->compare)
		direct_keep_first(r);
	if (!r->main)
		r->main = &r->out[0];
	/* (LP 4.2's all-to-all is the uniform one: no bound for a demand
	 * matrix's, whose own is theta_demand.) */
	if ((e->flags & ENGINE_CERTIFY) && !q->no_certify && !q->demand)
		direct_certify(r, q, now_seconds() - t_start);
	if (r->nic_ports && r->main->applies)
		r->nlinks = fabric_view_links(&r->fv, q->fabric, &r->main->s, &r->links);
	bound_beside_wait(r); /* (in before anyone prints or exports r) */
	return 0;
}
