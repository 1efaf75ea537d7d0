/* fluid_solve: the problem set-up (reversal for reductions, capacities as
 * one list, which vertices conserve w and which hold), the hop limit (given
 * or searched), and the method. */
#include "fluid/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const coll_names[] = {
    [FLUID_ALLGATHER] = "allgather", [FLUID_BROADCAST] = "broadcast",
    [FLUID_REDUCE] = "reduce",	     [FLUID_REDUCE_SCATTER] = "reduce-scatter",
    [FLUID_ALLTOALL] = "alltoall",
};

const char *fluid_collective_name(enum fluid_collective c)
{
	return (unsigned)c < ARRAY_SIZE(coll_names) && coll_names[c] ? coll_names[c] : "unknown";
}

int fluid_collective_parse(const char *name, enum fluid_collective *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(coll_names); i++)
		if (coll_names[i] && strcmp(coll_names[i], name) == 0) {
			*c = (enum fluid_collective)i;
			return 0;
		}
	return -1;
}

static const char *const method_names[] = {
    [FLUID_MIRRORED] = "mirrored",
    [FLUID_DW] = "dw",
    [FLUID_FULL] = "full",
};

const char *fluid_method_name(enum fluid_method m)
{
	return (unsigned)m < ARRAY_SIZE(method_names) ? method_names[m] : "unknown";
}

int fluid_method_parse(const char *name, enum fluid_method *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(method_names); i++)
		if (strcmp(method_names[i], name) == 0) {
			*m = (enum fluid_method)i;
			return 0;
		}
	return -1;
}

void fluid_result_free(struct fluid_result *r)
{
	free(r->routing.pieces);
	free(r->routing.hop_arc);
	free(r->routing.hop_layer);
	memset(&r->routing, 0, sizeof(r->routing));
}

static bool reversed(enum fluid_collective c)
{
	return c == FLUID_REDUCE || c == FLUID_REDUCE_SCATTER;
}

/* The reversed network with copy := reduce (notes Sec. 2.2): a reduction
 * on n is the time-reverse of a broadcast/allgather on it. Arc ids and
 * sets are kept, so a group of n is a group of the reverse. */
static void reverse_net(const struct fluid_net *n, struct fluid_net *r)
{
	*r = *n;
	r->kind = xmalloc(n->nverts + 1);
	r->tail = n->head;
	r->head = n->tail;
	/* n's arc index is keyed by n's ends: lookups on r scan instead */
	r->arc_index = NULL;
	r->arc_index_cap = 0;
	for (uint32_t v = 0; v < n->nverts; v++) {
		uint8_t k = n->kind[v] & (uint8_t)~FLUID_CAN_COPY;

		if (n->kind[v] & FLUID_CAN_REDUCE)
			k |= FLUID_CAN_COPY;
		r->kind[v] = k;
	}
}

static void in_out_bw(const struct fluid_net *n, double *in, double *out)
{
	memset(in, 0, n->nverts * sizeof(double));
	memset(out, 0, n->nverts * sizeof(double));
	for (uint32_t a = 0; a < n->narcs; a++) {
		in[n->head[a]] += n->bw[a];
		out[n->tail[a]] += n->bw[a];
	}
}

/* Appendix A / notes Sec. 5.2: a terminal downloads what it lacks and an
 * origin uploads its unit at least once, through the bandwidth of its arcs.
 * Reductions are the bounds of the reversed problem (in and out swap). */
double fluid_lower_bound(const struct fluid_net *n, enum fluid_collective c, uint32_t root)
{
	double *in = xmalloc((n->nverts + 1) * sizeof(double));
	double *out = xmalloc((n->nverts + 1) * sizeof(double)), lb = 0;
	uint32_t k = fluid_terminals(n, NULL);

	in_out_bw(n, in, out);
	if (reversed(c)) {
		double *t = in;

		in = out;
		out = t;
		c = c == FLUID_REDUCE ? FLUID_BROADCAST : FLUID_ALLGATHER;
	}
	for (uint32_t v = 0; v < n->nverts; v++) {
		if (!(n->kind[v] & FLUID_TERMINAL))
			continue;
		double down = 0, up = 0;

		if (c == FLUID_BROADCAST) {
			down = v == root ? 0 : 1;
			up = v == root ? 1 : 0;
		} else {
			down = k - 1;
			up = c == FLUID_ALLTOALL ? k - 1 : 1;
		}
		if (down > 0 && down / in[v] > lb)
			lb = down / in[v];
		if (up > 0 && up / out[v] > lb)
			lb = up / out[v];
	}
	free(in);
	free(out);
	return lb;
}

/* An allreduce of k units per terminal (one shard each), whatever its
 * schedule: every terminal receives something of every unit and sends its
 * input of every unit, k/in and k/out; and where only terminals reduce,
 * every part of the vector reaches terminals at least 2(k - 1) times, the
 * least number of one-way calls that spread k items to all k (Harary and
 * Schwenk 1974: a call carries at most what its caller knows, as a
 * partial sum or a stored copy does), through sum(in) at once. The bound
 * of a reduce-scatter plus an allgather, (k - 1)/out + (k - 1)/in, is not
 * one for every allreduce; on uniform terminals the last term meets it. */
double fluid_allreduce_bound(const struct fluid_net *n)
{
	double *in = xmalloc((n->nverts + 1) * sizeof(double));
	double *out = xmalloc((n->nverts + 1) * sizeof(double)), lb = 0, sum_in = 0;
	uint32_t k = fluid_terminals(n, NULL);
	bool only_terminals_reduce = true;

	in_out_bw(n, in, out);
	for (uint32_t v = 0; v < n->nverts; v++) {
		if (!(n->kind[v] & FLUID_TERMINAL)) {
			only_terminals_reduce &= !(n->kind[v] & FLUID_CAN_REDUCE);
			continue;
		}
		sum_in += in[v];
		lb = fmax(lb, fmax(k / in[v], k / out[v]));
	}
	if (only_terminals_reduce && sum_in > 0)
		lb = fmax(lb, 2.0 * (k - 1) * k / sum_in);
	free(in);
	free(out);
	return lb;
}

static void problem_free(struct problem *p)
{
	free(p->orig);
	free(p->term);
	free(p->conserve);
	free(p->store);
	free(p->cap_off);
	free(p->cap_arc);
	free(p->cap_bw);
	free(p->arc_cap_off);
	free(p->arc_caps);
}

static int problem_init(struct problem *p, const struct fluid_net *n, const struct fluid_opts *o,
			struct ofc_error *err)
{
	enum fluid_collective c = o->collective;

	memset(p, 0, sizeof(*p));
	p->net = n;
	p->opts = o;
	p->coll = c == FLUID_REDUCE	      ? FLUID_BROADCAST
		  : c == FLUID_REDUCE_SCATTER ? FLUID_ALLGATHER
					      : c;
	p->copy = p->coll != FLUID_ALLTOALL;
	p->slack = o->slack > 0 ? o->slack : 1e-7;
	p->gap = o->gap > 0 ? o->gap : 1e-7;
	p->answer_at = p->answer_below = NAN;
	p->mem_limit = o->mem_limit ? o->mem_limit : 4ull << 30;
	if (!lp_solver_available(o->lp_solver, err))
		return -1;
	p->t0 = now_seconds();
	p->deadline = o->time_limit > 0 ? p->t0 + o->time_limit : 0;
	p->term = xmalloc((n->nverts + 1) * sizeof(uint32_t));
	p->nterm = fluid_terminals(n, p->term);
	if (p->coll == FLUID_BROADCAST) {
		if (o->root >= n->nverts || !(n->kind[o->root] & FLUID_TERMINAL))
			return ofc_error_set(err, OFC_E_INPUT,
					     "the root (vertex %u) is not a terminal", o->root);
		p->orig = xmalloc(sizeof(uint32_t));
		p->orig[0] = o->root;
		p->norig = 1;
	} else {
		p->orig = xmalloc((p->nterm + 1) * sizeof(uint32_t));
		memcpy(p->orig, p->term, p->nterm * sizeof(uint32_t));
		p->norig = p->nterm;
	}
	p->conserve = xcalloc(n->nverts + 1, 1);
	p->store = xcalloc(n->nverts + 1, 1);
	for (uint32_t v = 0; v < n->nverts; v++) {
		p->store[v] = (n->kind[v] & FLUID_CAN_STORE) != 0;
		p->conserve[v] = !o->no_switch_conservation && !(n->kind[v] & FLUID_CAN_COPY) &&
				 !(n->kind[v] & FLUID_TERMINAL);
	}
	/* Capacities: each arc with a finite bandwidth, then each set. */
	uint32_t ncaps = n->nsets, nca = n->set_off[n->nsets];

	for (uint32_t a = 0; a < n->narcs; a++)
		if (!isinf(n->bw[a])) {
			ncaps++;
			nca++;
		}
	p->ncaps = ncaps;
	p->cap_off = xmalloc((ncaps + 1) * sizeof(uint32_t));
	p->cap_arc = xmalloc((nca + 1) * sizeof(uint32_t));
	p->cap_bw = xmalloc((ncaps + 1) * sizeof(double));
	uint32_t k = 0, at = 0;

	p->cap_off[0] = 0;
	for (uint32_t a = 0; a < n->narcs; a++)
		if (!isinf(n->bw[a])) {
			p->cap_arc[at++] = a;
			p->cap_bw[k++] = n->bw[a];
			p->cap_off[k] = at;
		}
	for (uint32_t s = 0; s < n->nsets; s++) {
		for (uint32_t j = n->set_off[s]; j < n->set_off[s + 1]; j++)
			p->cap_arc[at++] = n->set_arc[j];
		p->cap_bw[k++] = n->set_bw[s];
		p->cap_off[k] = at;
	}
	uint32_t *deg = xcalloc(n->narcs + 2, sizeof(uint32_t));

	for (uint32_t j = 0; j < nca; j++)
		deg[p->cap_arc[j] + 2]++;
	for (uint32_t a = 0; a < n->narcs; a++)
		deg[a + 2] += deg[a + 1];
	p->arc_caps = xmalloc((nca + 1) * sizeof(uint32_t));
	for (uint32_t c2 = 0; c2 < ncaps; c2++)
		for (uint32_t j = p->cap_off[c2]; j < p->cap_off[c2 + 1]; j++)
			p->arc_caps[deg[p->cap_arc[j] + 1]++] = c2;
	p->arc_cap_off = deg; /* deg[a] .. deg[a + 1] now */
	return 0;
}

/* Solve at hop limit T: phase 1, and phase 2 when asked. -2 (err set):
 * no tree at this T (dw_solve), a larger T may have one. */
static int solve_at(const struct problem *p, const struct fluid_group *grp, uint32_t T, bool phase2,
		    struct fluid_result *r, struct ofc_error *err)
{
	struct texp x;
	int rc;

	texp_init(&x, p->net, p->store, T);
	r->hops = T;
	if (p->opts->method == FLUID_FULL)
		rc = full_solve(p, &x, phase2, r, err);
	else
		rc = dw_solve(p, &x, grp, phase2, r, err);
	texp_free(&x);
	return rc;
}

/* The layers-summed bound when asked, at the R phase 2 fixed; by the
 * request's group whatever the method (it makes the LP one class of
 * origins per orbit: plain DW's 16 GPUs, all links, 56 s -> 0.07 s). */
static void any_hops(const struct problem *p, const struct fluid_group *grp, struct fluid_result *r)
{
	struct ofc_error gerr = {0};

	r->objective_any_hops = NAN;
	if (!p->opts->bound_any_hops || isnan(r->objective))
		return;
	double t0 = now_seconds();

	if (!grp && p->opts->group && fluid_group_check(p->net, p->opts->group, &gerr) == 0)
		grp = p->opts->group;
	hopfree_bound(p, grp, r->rstar * (1 + p->slack), r);
	r->seconds_any_hops = now_seconds() - t0;
}

/* The hop limit searched from tmin (no opts.hops): trials of phase 1 at
 * T = tmin, tmin + 1, ..., then the answer at the best T with phase 2. */
static int search_hops(struct problem *p, const struct fluid_group *grp, uint32_t tmin,
		       struct fluid_result *r, struct ofc_error *err)
{
	const struct fluid_opts *o = p->opts;

	/* Search T: R*(T) never increases with T (the origin's hold-over keeps
	 * every T-solution feasible at T + 1), but may stay flat before it
	 * drops (notes Sec. 2.3: 8-GPU no NVLink is 0.375 at T = 4 and 7/32 at
	 * T = 6), hence the patience. */
	uint32_t hmax = o->hops_max ? o->hops_max : 16, patience = o->patience ? o->patience : 2;
	uint32_t best_t = tmin, flat = 0;
	double best = INFINITY;
	/* No T does better than a bound for every T: a trial that meets it
	 * ends the search, which the trials after it would only have found
	 * flat (the cut bound printed stays the one terminal's). */
	double any_t = r->rstar_lower_any_hops * (1 + 1e-7);
	bool answered = false;
	/* The best trial is R*(best_t) already: with phase 1 alone it is the
	 * answer, not solved again (under a time limit the second
	 * solve had no time left and answered 17.6 where the trial had 7.456,
	 * losing the trial's bound too). */
	struct fluid_result best_r;

	memset(&best_r, 0, sizeof(best_r));
	if (hmax < tmin)
		hmax = tmin;
	for (uint32_t T = tmin; T <= hmax && r->ntrials < FLUID_MAX_TRIALS; T++) {
		struct fluid_result tr;

		memset(&tr, 0, sizeof(tr));
		tr.objective = NAN; /* as r's: phase 1 leaves them */
		tr.objective_lower = NAN;
		tr.objective_any_hops = NAN;
		report_progress(p, "hops", T, r->ntrials, best, r->lower_bound, 0);
		/* A trial that will be the answer goes on to phase 2 (dw.c) */
		if (!o->skip_phase2 && o->method != FLUID_FULL) {
			p->answer_at = any_t;
			p->answer_below = best * (1 - 1e-7);
		}
		int trc = solve_at(p, grp, T, false, &tr, err);

		p->answer_at = p->answer_below = NAN;
		if (trc == -2 && isinf(best) && T < hmax && !past_deadline(p)) {
			/* No tree yet (reductions through memory that keeps one
			 * partial sum per part need room in time): a larger T,
			 * the patience not spent before a first answer. */
			fluid_result_free(&tr);
			memset(err, 0, sizeof(*err));
			continue;
		}
		if (trc < 0) {
			fluid_result_free(&tr);
			fluid_result_free(&best_r);
			return -1;
		}
		r->trials[r->ntrials].hops = T;
		r->trials[r->ntrials].rstar = tr.rstar;
		r->trials[r->ntrials].rstar_lower = tr.rstar_lower;
		r->ntrials++;
		if (tr.rstar < best * (1 - 1e-7)) {
			answered = !o->skip_phase2 && o->method != FLUID_FULL && tr.rstar <= any_t;
			best = tr.rstar;
			best_t = T;
			flat = 0;
			fluid_result_free(&best_r);
			best_r = tr;
		} else {
			flat++;
			fluid_result_free(&tr);
		}
		if (best <= any_t || flat >= patience || past_deadline(p))
			break;
	}
	struct fluid_result keep = *r;
	int rc;

	if (answered) {
		*r = best_r; /* phase 2 solved in the trial (dw_is_answer) */
		rc = 0;
	} else if (o->skip_phase2 && best_r.hops == best_t) {
		*r = best_r;
		rc = 0;
	} else {
		fluid_result_free(&best_r);
		rc = solve_at(p, grp, best_t, !o->skip_phase2, r, err);
	}
	if (rc == 0)
		any_hops(p, grp, r);
	r->collective = keep.collective;
	r->method = keep.method;
	r->ntrials = keep.ntrials;
	memcpy(r->trials, keep.trials, sizeof(r->trials));
	r->lower_bound = keep.lower_bound;
	r->rstar_lower_any_hops = keep.rstar_lower_any_hops;
	return rc;
}

int fluid_solve(const struct fluid_net *n, const struct fluid_opts *o, struct fluid_result *r,
		struct ofc_error *err)
{
	struct fluid_net rev;
	struct problem p;
	const struct fluid_net *use = n;
	const struct fluid_group *grp = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->objective = NAN;
	r->objective_lower = NAN;
	r->objective_any_hops = NAN;
	if ((unsigned)o->collective < FLUID_ALLGATHER || o->collective > FLUID_ALLTOALL)
		return ofc_error_set(err, OFC_E_INPUT, "unknown collective");
	if ((unsigned)o->method > FLUID_FULL)
		return ofc_error_set(err, OFC_E_INPUT, "unknown method");
	if (fluid_net_check(n, err) < 0)
		return -1;
	if (reversed(o->collective)) {
		for (uint32_t v = 0; v < n->nverts; v++)
			if ((n->kind[v] & FLUID_TERMINAL) && !(n->kind[v] & FLUID_CAN_REDUCE))
				return ofc_error_set(
				    err, OFC_E_INPUT, "terminal '%s' cannot reduce: no %s",
				    fluid_vertex_name(n, v), fluid_collective_name(o->collective));
		reverse_net(n, &rev);
		use = &rev;
	}
	r->collective = o->collective;
	r->method = o->method;
	if (o->method == FLUID_MIRRORED) {
		if (o->group) {
			if (!o->group_checked && fluid_group_check(n, o->group, err) < 0)
				goto out_rev;
			grp = o->group;
		} else {
			r->method = FLUID_DW; /* no group: every origin is its own class */
		}
	}
	if (problem_init(&p, use, o, err) < 0)
		goto out;
	r->lower_bound = fluid_lower_bound(n, o->collective, o->root);
	r->rstar_lower_any_hops = fmax(r->lower_bound, fluid_set_cut_bound(&p));

	/* The least T at which every commodity arrives; a given T below it
	 * names the commodity that cannot make it (notes Sec. 8.2). */
	uint32_t fo = 0, fd = 0;
	uint32_t tmin = texp_min_hops(use, p.orig, p.norig, p.term, p.nterm, &fo, &fd);
	const char *on = fluid_vertex_name(n, fo), *dn = fluid_vertex_name(n, fd);
	bool rev_names = reversed(o->collective);

	if (tmin == UINT32_MAX) {
		ofc_error_set(err, OFC_E_INPUT, "commodity %s -> %s: %s is unreachable from %s",
			      rev_names ? dn : on, rev_names ? on : dn, rev_names ? on : dn,
			      rev_names ? dn : on);
		goto out;
	}
	if (o->hops && o->hops < tmin) {
		ofc_error_set(err, OFC_E_INPUT,
			      "commodity %s -> %s cannot reach its destination within T = %u hops "
			      "(it needs %u)",
			      rev_names ? dn : on, rev_names ? on : dn, o->hops, tmin);
		goto out;
	}
	if (o->hops) {
		rc = solve_at(&p, grp, o->hops, !o->skip_phase2, r, err);
		if (rc == 0)
			any_hops(&p, grp, r);
		if (rc == 0) {
			r->ntrials = 1;
			r->trials[0].hops = o->hops;
			r->trials[0].rstar = r->rstar;
			r->trials[0].rstar_lower = r->rstar_lower;
		}
		goto out;
	}
	rc = search_hops(&p, grp, tmin, r, err);
out:
	r->seconds_total = now_seconds() - p.t0;
	problem_free(&p);
out_rev:
	if (use == &rev)
		free(rev.kind);
	return rc;
}
