/* A direct-connect request through the engine table: the request's
 * options checked against the engine it names (the names in every message
 * from the table), the set-up (direct.c), then the engine's build, or every
 * row 'all' compares for the collective side by side. */
#include "controller/schedule/internal.h"

#include <stdio.h>

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

/* Every direct-connect row that names the collective in in_all. */
static void build_every(struct schedule_result *r, const struct schedule_query *q)
{
	const struct engine_ops *x;

	for (unsigned i = 0; (x = engine_at(i)); i++)
		if ((x->fabrics & ENGINE_DIRECT) && (x->in_all & ENGINE_C(q->collective)))
			x->build(r, q, x);
}

/* swing-all: every row's torus runs, the variant rows' first. */
static void build_torus_all(struct schedule_result *r, const struct schedule_query *q)
{
	const struct engine_ops *x;

	for (int variants = 1; variants >= 0; variants--)
		for (unsigned i = 0; (x = engine_at(i)); i++)
			if (x->torus && !!(x->flags & ENGINE_VARIANT) == variants)
				x->torus(r, q, x);
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
		e->build(r, q, e);
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
