/* BFB's problems, one receiver at a time: for each step t, LP (3) of
 * (u, t) (how much of each source's shard each candidate in-link of u
 * carries), its value U* exactly (subsets, or a parametric max flow), and
 * its fractions from one integral max flow (or the LP, or the integer
 * program with --chunks), written as pieces into the worker's buffer for
 * the step. See bfb.c for the method and the papers. */
#include "bfb/internal.h"
#include "rwa/rwa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUBSET_MAX	20	  /* BFB_SUBSETS: 2^20 subsets at most */
#define AUTO_SUBSETS	12	  /* BFB_AUTO: subsets up to 12 candidate links */
#define AUTO_FLOW_FIRST 4	  /* BFB_AUTO building: min cut first above 4 links */
#define LP_UNITS	(1 << 24) /* LP fractions as multiples of 2^-24 of a shard */

#define CHUNK_XFERS (1u << 16) /* 1.25 MiB */

/* ---- helpers -------------------------------------------------------------- */

static void worker_fail(struct worker *w, const char *msg)
{
	if (!w->failed) {
		w->failed = true;
		snprintf(w->why, sizeof(w->why), "%s", msg);
	}
}

/* ---- one (u, t) problem ------------------------------------------------------- */

#define GROUP_DIRECT_LINKS 12 /* masks of 12 links or fewer: a direct table */

/* Each source's group by its candidate set (gid[], groups[].mask and cnt,
 * groups numbered as first seen): a table indexed by the mask where u has
 * GROUP_DIRECT_LINKS links or fewer (a torus's four: the hash and its
 * probes were most of the grouping), else a hash. */
static uint32_t group_keys(struct worker *w, uint32_t lo, uint32_t m, uint32_t d)
{
	uint32_t ng = 0;

	if (d <= GROUP_DIRECT_LINKS) {
		if (!w->gdir) {
			w->gdir = xmalloc(((size_t)1 << GROUP_DIRECT_LINKS) * sizeof(uint32_t));
			memset(w->gdir, 0xff, ((size_t)1 << GROUP_DIRECT_LINKS) * sizeof(uint32_t));
		}
		for (uint32_t i = 0; i < m; i++) {
			uint64_t key = w->mask[lo + i];
			uint32_t *slot = &w->gdir[key];

			if (*slot == UINT32_MAX) {
				*slot = ng;
				w->groups[ng++] = (struct group){.mask = key};
			}
			w->gid[i] = *slot;
			w->groups[*slot].cnt++;
		}
		for (uint32_t g = 0; g < ng; g++) /* the table all free again */
			w->gdir[w->groups[g].mask] = UINT32_MAX;
		return ng;
	}
	size_t cap = 16;

	while (cap < 2 * (size_t)m)
		cap *= 2;
	if (cap > w->hcap) {
		w->hcap = cap;
		w->hkey = xreallocarray(w->hkey, cap, sizeof(uint64_t));
		w->hval = xreallocarray(w->hval, cap, sizeof(uint32_t));
	}
	memset(w->hval, 0xff, cap * sizeof(uint32_t));
	for (uint32_t i = 0; i < m; i++) {
		uint64_t key = w->mask[lo + i];
		size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);

		while (w->hval[h] != UINT32_MAX && w->hkey[h] != key)
			h = (h + 1) & (cap - 1);
		if (w->hval[h] == UINT32_MAX) {
			w->hkey[h] = key;
			w->hval[h] = ng;
			w->groups[ng] = (struct group){.mask = key};
			ng++;
		}
		w->gid[i] = w->hval[h];
		w->groups[w->hval[h]].cnt++;
	}
	return ng;
}

/* Each group's place in the order (first), link flows (gl, nl) and
 * links (gl_link), the groups' counts set. */
static void group_layout(struct worker *w, uint32_t ng)
{
	uint32_t pos = 0, gl = 0;

	for (uint32_t g = 0; g < ng; g++) {
		w->groups[g].first = pos;
		w->groups[g].gl = gl;
		w->groups[g].nl = popcount64(w->groups[g].mask);
		pos += w->groups[g].cnt;
		gl += w->groups[g].nl;
	}
	if (gl > w->cap_gl) {
		w->cap_gl = gl * 2;
		w->gl_link = xreallocarray(w->gl_link, w->cap_gl, sizeof(uint32_t));
		w->gl_flow = xreallocarray(w->gl_flow, w->cap_gl, sizeof(int64_t));
		w->gl_kept = xreallocarray(w->gl_kept, w->cap_gl, sizeof(uint32_t));
	}
	for (uint32_t g = 0; g < ng; g++) {
		uint32_t k = w->groups[g].gl;

		for (uint64_t b = w->groups[g].mask; b; b &= b - 1)
			w->gl_link[k++] = (uint32_t)__builtin_ctzll(b);
	}
}

/* Group the sources src[lo, hi) (candidate sets among d links) by
 * candidate set; fills groups, gid and order (sources grouped, in source
 * order within a group), and ord. */
static uint32_t group_sources(struct worker *w, uint32_t lo, uint32_t hi, uint32_t d)
{
	uint32_t m = hi - lo, ng;

	w->net_valid = false;
	ng = group_keys(w, lo, m, d);
	group_layout(w, ng);
	for (uint32_t g = 0; g < ng; g++)
		w->groups[g].cnt = 0;
	for (uint32_t i = 0; i < m; i++) {
		struct group *g = &w->groups[w->gid[i]];

		w->order[g->first + g->cnt++] = w->src[lo + i];
	}
	w->ord = w->order;
	return ng;
}

/* The groups of the sources at distance t where collect keyed them
 * (src[lo ..) grouped already): read from its counts. */
static uint32_t group_keyed(struct worker *w, uint32_t t, uint32_t lo, uint32_t d)
{
	uint32_t ng = w->tcur[t];
	const uint16_t *kg = w->kgl + ((size_t)t << d);

	w->net_valid = false;
	for (uint32_t g = 0; g < ng; g++)
		w->groups[g] = (struct group){.mask = kg[g], .cnt = w->kcnt[t << d | kg[g]]};
	group_layout(w, ng);
	w->ord = w->src + lo;
	return ng;
}

/* The flow network for supply `su` per source and capacity `cap` per unit
 * of link rate; returns the max flow. Nodes: 0 source, 1..ng groups, then
 * links, sink. Each row lists its edges in the order Dinic tries them:
 * the source's groups last first, a group's links lowest first and then
 * its edge back to the source, a link's groups last first and then its
 * sink edge, the sink's links last first (the order of the adjacency
 * stacks this network was first built with, so the flows are the same). */
static void build_and_flow_net(struct worker *w, uint32_t ng, uint32_t d, int64_t su, int64_t cap)
{
	struct flow_net *f = &w->net;
	uint32_t sink = ng + d + 1, lnk = 1 + ng, gl = 0, *ls;
	uint32_t ldeg[BFB_MAX_DEGREE] = {0};

	for (uint32_t g = 0; g < ng; g++) {
		gl += w->groups[g].nl;
		for (uint32_t i = 0; i < w->groups[g].nl; i++)
			ldeg[w->gl_link[w->groups[g].gl + i]]++;
	}
	flow_net_reset(f, ng + d + 2, 2 * (ng + gl + d));
	ls = f->it; /* scratch until the flow: the next free slot of each link's row */
	f->start[0] = 0;
	f->start[1] = ng;
	for (uint32_t g = 0; g < ng; g++)
		f->start[2 + g] = f->start[1 + g] + w->groups[g].nl + 1;
	for (uint32_t k = 0; k < d; k++)
		f->start[lnk + k + 1] = f->start[lnk + k] + ldeg[k] + 1;
	f->start[sink + 1] = f->start[sink] + d;
	for (uint32_t k = 0; k < d; k++) {
		ls[k] = f->start[lnk + k];
		flow_net_pair(f, f->start[lnk + k + 1] - 1, f->start[sink] + d - 1 - k, lnk + k,
			      sink, cap * (int64_t)w->wt[k]);
	}
	for (uint32_t g = ng; g-- > 0;) {
		const struct group *gr = &w->groups[g];
		int64_t supply = su * gr->cnt;
		uint32_t row = f->start[1 + g];

		flow_net_pair(f, ng - 1 - g, row + gr->nl, 0, 1 + g, supply);
		for (uint32_t i = 0; i < gr->nl; i++) {
			uint32_t k = w->gl_link[gr->gl + i];

			flow_net_pair(f, row + i, ls[k]++, 1 + g, lnk + k, supply);
		}
	}
	w->net_valid = true;
	w->net_su = su;
	w->net_cap = cap;
}

static int64_t build_and_flow(struct worker *w, uint32_t ng, uint32_t d, int64_t su, int64_t cap)
{
	build_and_flow_net(w, ng, d, su, cap);
	w->net_flow = flow_net_maxflow(&w->net, 0, ng + d + 1);
	return w->net_flow;
}

/* Group flows from the network: the flow on an edge is its reverse's residual. */
static void flows_from_net(struct worker *w, uint32_t ng)
{
	const struct flow_net *f = &w->net;

	for (uint32_t g = 0; g < ng; g++) {
		const struct group *gr = &w->groups[g];
		uint32_t row = f->start[1 + g];

		for (uint32_t i = 0; i < gr->nl; i++)
			w->gl_flow[gr->gl + i] = f->cap[f->rev[row + i]];
	}
}

/* U* = max over K of sources(K) / r(K) by summing counts over subsets of the
 * candidate links (a zeta transform over the links that occur); r(K) is
 * the links' total rate, |K| when every rate is 1 (App. D.3's LP (13)
 * without the alpha term: a link of rate r carries r U). */
static void solve_subsets(struct worker *w, uint32_t ng, uint64_t *c, uint64_t *k)
{
	uint64_t uni = 0;
	uint32_t pos[64];
	int dp = 0;

	for (uint32_t g = 0; g < ng; g++)
		uni |= w->groups[g].mask;
	for (uint64_t b = uni; b; b &= b - 1)
		pos[dp++] = (uint32_t)__builtin_ctzll(b);
	if (!w->subset) {
		w->subset = xmalloc(((size_t)1 << SUBSET_MAX) * sizeof(uint64_t));
		w->subset_rate = xmalloc(((size_t)1 << SUBSET_MAX) * sizeof(uint32_t));
	}
	size_t full = (size_t)1 << dp;
	uint64_t *f = w->subset;
	uint32_t *r = w->subset_rate;
	memset(f, 0, full * sizeof(uint64_t));
	for (uint32_t g = 0; g < ng; g++) {
		size_t cm = 0;

		for (int i = 0; i < dp; i++)
			if (w->groups[g].mask >> pos[i] & 1)
				cm |= (size_t)1 << i;
		f[cm] += w->groups[g].cnt;
	}
	for (int i = 0; i < dp; i++)
		for (size_t K = 0; K < full; K++)
			if (K >> i & 1)
				f[K] += f[K ^ ((size_t)1 << i)];
	/* r(K) from r(K less its lowest link): no loop over K's links. */
	uint64_t bc = 0, bk = 1;
	r[0] = 0;
	for (size_t K = 1; K < full; K++) {
		uint64_t pc = r[K & (K - 1)] + w->wt[pos[__builtin_ctzll(K)]];

		r[K] = (uint32_t)pc;
		if (f[K] * bk > bc * pc) {
			bc = f[K];
			bk = pc;
		}
	}
	uint64_t g = gcd_u64(bc, bk);
	*c = bc / g;
	*k = bk / g;
}

/* U* by Dinkelbach's method on the min cut: with capacity c/k per unit of
 * rate, a flow short of every source's supply has a cut whose link side K
 * holds sources(K) / r(K) > c/k; raise c/k to that and repeat. */
static int solve_mincut(struct worker *w, uint32_t ng, uint32_t d, uint32_t m, uint64_t *c,
			uint64_t *k)
{
	uint64_t uni = 0;

	for (uint32_t g = 0; g < ng; g++)
		uni |= w->groups[g].mask;
	uint64_t cc = m, kk = 0, gg;

	for (uint64_t b = uni; b; b &= b - 1)
		kk += w->wt[__builtin_ctzll(b)];
	gg = gcd_u64(cc, kk);
	cc /= gg;
	kk /= gg;
	for (unsigned iter = 0; iter <= 2 * d + 2; iter++) {
		int64_t flow = build_and_flow(w, ng, d, (int64_t)kk, (int64_t)cc);

		if (flow == (int64_t)(kk * m)) {
			*c = cc;
			*k = kk;
			return 0;
		}
		/* Residual reachability from the source marks the cut. */
		struct flow_net *f = &w->net;
		flow_net_bfs(f, 0, f->nv - 1, false);
		uint64_t fk = 0, nk = 0;
		for (uint32_t g = 0; g < ng; g++)
			if (f->level[1 + g] >= 0)
				fk += w->groups[g].cnt;
		for (uint32_t l = 0; l < d; l++)
			if (f->level[1 + ng + l] >= 0)
				nk += w->wt[l];
		if (nk == 0 || fk * kk <= cc * nk)
			break; /* cannot happen: the cut is tighter than c/k */
		gg = gcd_u64(fk, nk);
		cc = fk / gg;
		kk = nk / gg;
	}
	worker_fail(w, "BFB: the parametric min cut did not converge");
	return -1;
}

/* LP (3) for the grouped sources: y[g][a] (shards of group g on link a) and
 * U; minimise U subject to every link carrying <= U (r U for a link of rate
 * r: LP (13) of App. D.3) and every group being delivered. Fills the group flows in units of
 * 1/LP_UNITS shard. */
static int solve_lp(struct worker *w, uint32_t ng, uint32_t d, enum lp_solver sv, double *u_out)
{
	uint32_t ny = 0;
	uint64_t uni = 0;

	for (uint32_t g = 0; g < ng; g++) {
		ny += w->groups[g].nl;
		uni |= w->groups[g].mask;
	}
	if (ny + 1 > w->cap_lp) {
		w->cap_lp = (ny + 1) * 2;
		w->lpx = xreallocarray(w->lpx, w->cap_lp, sizeof(double));
		w->lpcol = xreallocarray(w->lpcol, w->cap_lp, sizeof(int));
		w->lpval = xreallocarray(w->lpval, w->cap_lp, sizeof(double));
	}
	struct ofc_error err = {0};
	struct lp *lp = lp_new_on((int)ny + 1, lp_solver_or(sv, BFB_LP_SOLVER), &err);
	int ucol = (int)ny, n;

	if (!lp) {
		char msg[200];

		snprintf(msg, sizeof(msg), "BFB: %.190s", err.msg);
		worker_fail(w, msg);
		return -1;
	}
	lp_set_obj_coef(lp, ucol, 1.0);
	for (uint32_t a = 0; a < d; a++) {
		if (!(uni >> a & 1))
			continue;
		n = 0;
		for (uint32_t g = 0; g < ng; g++) {
			for (uint32_t i = 0; i < w->groups[g].nl; i++)
				if (w->gl_link[w->groups[g].gl + i] == a) {
					w->lpcol[n] = (int)(w->groups[g].gl + i);
					w->lpval[n++] = 1.0;
				}
		}
		w->lpcol[n] = ucol;
		w->lpval[n++] = -(double)w->wt[a];
		lp_add_row(lp, n, w->lpcol, w->lpval, LP_LE, 0.0);
	}
	for (uint32_t g = 0; g < ng; g++) {
		n = 0;
		for (uint32_t i = 0; i < w->groups[g].nl; i++) {
			w->lpcol[n] = (int)(w->groups[g].gl + i);
			w->lpval[n++] = 1.0;
		}
		lp_add_row(lp, n, w->lpcol, w->lpval, LP_EQ, (double)w->groups[g].cnt);
	}
	enum lp_result r = lp_solve(lp, &err);
	if (r != LP_OPTIMAL) {
		char msg[200];

		snprintf(msg, sizeof(msg), "BFB: %s: %s %.150s", lp_solver_name(lp_solver_of(lp)),
			 lp_result_str(r), err.msg);
		lp_free(lp);
		worker_fail(w, msg);
		return -1;
	}
	lp_solution(lp, w->lpx);
	*u_out = w->lpx[ucol];
	lp_free(lp);
	w->lps++;
	/* Round to integer units, keeping every group's total exact. */
	for (uint32_t g = 0; g < ng; g++) {
		const struct group *gr = &w->groups[g];
		uint32_t np = gr->nl, big = gr->gl;
		int64_t want = (int64_t)gr->cnt * LP_UNITS, sum = 0;

		for (uint32_t i = gr->gl; i < gr->gl + np; i++) {
			double y = w->lpx[i] < 0 ? 0 : w->lpx[i];

			w->gl_flow[i] = (int64_t)llround(y * LP_UNITS);
			sum += w->gl_flow[i];
			if (w->gl_flow[i] > w->gl_flow[big])
				big = i;
		}
		w->gl_flow[big] += want - sum;
		if (w->gl_flow[big] < 0)
			w->gl_flow[big] = 0; /* LP noise on an empty group: cannot stay short */
	}
	return 0;
}

/* Source v's piece [a, b) (SCHED_ONE units) over u's in-link `link`. */
static void put_piece(const struct view *vw, uint32_t u, uint32_t link, uint32_t v, uint64_t a,
		      uint64_t b, struct xfer *x)
{
	const struct graph *g = vw->g;
	uint32_t peer = vw->in_peer[vw->in_off[u] + link];
	uint32_t arc = vw->in_arc[vw->in_off[u] + link];

	x->block = v;
	x->offset = (uint32_t)a;
	x->length = (uint32_t)(b - a);
	x->fibre = 0;
	if (!vw->reverse) {
		x->src = (uint16_t)peer;
		x->dst = (uint16_t)u;
		x->lane = (uint16_t)(arc - g->off[peer]);
		x->flags = xfer_flags(DIR_NONE, XFER_COPY);
	} else {
		x->src = (uint16_t)u;
		x->dst = (uint16_t)peer;
		x->lane = (uint16_t)(arc - g->off[u]);
		x->flags = xfer_flags(DIR_NONE, XFER_REDUCE);
	}
	if (vw->lane)
		x->lane = vw->lane[arc];
}

/* A source's mark (w->mark, by its place in w->ord): 1 + the link p
 * of its group over which the healthy program sends it whole; MARK_NOT
 * where the healthy program sends it whole over no link of the group (or
 * the flows leave no room for it there: keep_healthy), so that no layout
 * of the group's flows is its healthy pieces; MARK_ASK where the healthy
 * program sends it in parts (vw->healthy asked once it is written). */
#define MARK_NOT 0xff
#define MARK_ASK 0

/* Whether a mark names a link the source is kept on. */
static inline bool mark_kept(uint8_t mark)
{
	return mark != MARK_ASK && mark != MARK_NOT;
}

/* Every source of the problem marked, where vw->healthy says what the
 * healthy program holds: one key a source against its group's links'. */
static void healthy_marks(const struct view *vw, struct worker *w, uint32_t ng, uint32_t m,
			  uint32_t u, uint32_t so)
{
	uint32_t d = vw->in_off[u + 1] - vw->in_off[u];
	uint64_t lkey[BFB_MAX_DEGREE];
	struct xfer x;

	if (!w->mark) {
		w->mark = xmalloc(vw->n);
		w->bkey = xmalloc((size_t)vw->n * sizeof(uint64_t));
	}
	for (uint32_t k = 0; k < d; k++) {
		put_piece(vw, u, k, u, 0, SCHED_ONE, &x);
		lkey[k] = vw->whole_key(vw->healthy_ctx, u, so, &x);
	}
	vw->base_keys(vw->healthy_ctx, u, vw->reverse, w->ord, m, w->bkey);
	for (uint32_t gi = 0; gi < ng; gi++) {
		const struct group *gr = &w->groups[gi];
		uint32_t *kept = w->gl_kept + gr->gl, nl = gr->nl;
		uint64_t gkey[BFB_MAX_DEGREE];

		for (uint32_t p = 0; p < nl; p++) {
			gkey[p] = lkey[w->gl_link[gr->gl + p]];
			kept[p] = 0;
		}
		for (uint32_t i = 0; i < gr->cnt; i++) {
			uint64_t key = w->bkey[gr->first + i];
			uint8_t mark = MARK_NOT;

			/* the links' keys differ (one arc each), so one matches
			 * at most: no early exit, no branch a link; two
			 * links or one (most groups) without the loop, the
			 * first link's key standing for a second where there
			 * is none (checked last, it wins) */
			if (nl == 1 || nl == 2) {
				mark = key == gkey[nl - 1] ? (uint8_t)nl : mark;
				mark = key == gkey[0] ? 1 : mark;
			} else {
				for (uint32_t p = 0; p < nl; p++)
					mark = gkey[p] == key ? (uint8_t)(p + 1) : mark;
			}
			if (key == UINT64_MAX)
				mark = MARK_ASK;
			w->mark[gr->first + i] = mark;
			if (mark_kept(mark)) {
				kept[mark - 1]++;
				w->marked++;
			}
		}
	}
}

/* The fractions' max flow started from the healthy program's: each
 * group's sources the healthy program sends whole over one of its links
 * (healthy_marks) put there first, as far as the link's capacity holds
 * whole sources, and the rest augmented on top (Dinic's shortest paths:
 * a source moved, or a chain of them, only where the flow needs it).
 * Any maximum flow gives the same link loads; this one moves the fewest
 * blocks the searches find, and a block not moved is left to the base. */
static int64_t warm_flow(struct worker *w, uint32_t ng, uint32_t d, uint32_t m, int64_t su,
			 int64_t cap)
{
	struct flow_net *f;
	uint32_t lnk = 1 + ng;
	int64_t room[BFB_MAX_DEGREE], placed = 0;

	build_and_flow_net(w, ng, d, su, cap);
	f = &w->net;
	for (uint32_t k = 0; k < d; k++)
		room[k] = cap * (int64_t)w->wt[k];
		/* group g's a more over its link p (its source edge's residual is
		 * then what g has left to place) */
#define PUSH(e, a)                                                                                 \
	do {                                                                                       \
		f->cap[e] -= (a);                                                                  \
		f->cap[f->rev[e]] += (a);                                                          \
	} while (0)
#define PLACE(g, p, a)                                                                             \
	do {                                                                                       \
		room[w->gl_link[w->groups[g].gl + (p)]] -= (a);                                    \
		PUSH(f->start[1 + (g)] + (p), a);                                                  \
		PUSH(ng - 1 - (g), a);                                                             \
		placed += (a);                                                                     \
	} while (0)
	/* (a link's room changes only with its own sources, so the sources
	 * of (g, p) that fit are its first room / su, placed at once) */
	for (uint32_t g = 0; g < ng; g++) {
		const struct group *gr = &w->groups[g];

		for (uint32_t p = 0; p < gr->nl; p++) {
			int64_t c = w->gl_kept[gr->gl + p], r = room[w->gl_link[gr->gl + p]];
			int64_t fit = r >= c * su ? c : r / su;

			if (fit > 0)
				PLACE(g, p, fit * su);
		}
	}
	/* then the rest where the links have room, group by group (most
	 * problems end here: no search); what does not fit is Dinic's */
	for (uint32_t g = 0; g < ng; g++)
		for (uint32_t p = 0; p < w->groups[g].nl; p++) {
			int64_t left = f->cap[ng - 1 - g],
				r = room[w->gl_link[w->groups[g].gl + p]];
			int64_t a = r < left ? r : left;

			if (a > 0)
				PLACE(g, p, a);
		}
	for (uint32_t k = 0; k < d; k++)
		PUSH(f->start[lnk + k + 1] - 1, cap * (int64_t)w->wt[k] - room[k]);
#undef PLACE
#undef PUSH
	w->net_flow = placed;
	if (placed < su * (int64_t)m)
		w->net_flow += flow_net_maxflow(f, 0, ng + d + 1);
	return w->net_flow;
}

/* The sources of group gr marked healthy (healthy_marks) kept on their
 * link while its flow rem[] has a whole source left (their flow taken
 * from rem; MARK_NOT where it has not). Any layout of a group's flows
 * gives the same link loads; this one keeps as many sources as the flows
 * allow as the healthy translate has them, which the patch then need not
 * hold. */
static void keep_healthy(struct worker *w, const struct group *gr, int64_t su, int64_t *rem)
{
	uint8_t *mark = w->mark + gr->first;
	const uint32_t *kept = w->gl_kept + gr->gl;
	bool all = true;

	/* most groups: every marked source fits, no mark changes */
	for (uint32_t p = 0; p < gr->nl && all; p++)
		all = rem[p] >= (int64_t)kept[p] * su;
	if (all) {
		for (uint32_t p = 0; p < gr->nl; p++) {
			rem[p] -= (int64_t)kept[p] * su;
			w->kept += kept[p];
		}
		return;
	}
	for (uint32_t i = 0; i < gr->cnt; i++)
		if (mark_kept(mark[i])) {
			uint32_t p = mark[i] - 1u;

			if (rem[p] >= su) {
				rem[p] -= su;
				w->kept++;
			} else {
				mark[i] = MARK_NOT;
			}
		}
}

/* Lay every group's link flows over its sources end to end (each source
 * `su` units long) and write the pieces (step so of the view): a source's
 * pieces lie together. With marks (healthy_marks), the sources the
 * healthy program holds whole on one of the group's links are first kept
 * there and not written (keep_healthy), and a source it holds in parts
 * goes again where vw->healthy says these pieces are the healthy ones. */
static size_t emit_pieces(const struct view *vw, struct worker *w, uint32_t ng, uint32_t u,
			  uint32_t so, int64_t su, struct xfer *out)
{
	size_t npieces = 0;
	int64_t rem[BFB_MAX_DEGREE];
	uint32_t d = vw->in_off[u + 1] - vw->in_off[u];
	struct xfer tmpl[BFB_MAX_DEGREE]; /* a link's pieces but their block and part */

	for (uint32_t k = 0; k < d; k++)
		put_piece(vw, u, k, 0, 0, SCHED_ONE, &tmpl[k]);
	for (uint32_t gi = 0; gi < ng; gi++) {
		const struct group *gr = &w->groups[gi];
		const uint8_t *mark = vw->healthy ? w->mark + gr->first : NULL;
		uint32_t np = gr->nl, i = 0;
		int64_t used = 0;
		uint64_t end = 0;	/* the last piece's end (SCHED_ONE units) */
		size_t first = npieces; /* the source's first piece */

		for (uint32_t p = 0; p < np; p++)
			rem[p] = w->gl_flow[gr->gl + p];
		if (mark)
			keep_healthy(w, gr, su, rem);
		for (uint32_t p = 0; p < np; p++) {
			int64_t fl = rem[p];
			uint32_t link = w->gl_link[gr->gl + p];

			while (mark && i < gr->cnt && mark_kept(mark[i]))
				i++;
			while (fl > 0 && i < gr->cnt) {
				int64_t take = su - used < fl ? su - used : fl;
				/* round(used / su) and round((used + take) / su) in
				 * SCHED_ONE units, exactly: 0 and SCHED_ONE at a
				 * source's ends, the previous piece's end where it
				 * goes on, so a source in one piece (most) costs no
				 * 64-bit division, where each piece took two */
				uint64_t a = used ? end : 0;
				uint64_t b =
				    used + take == su
					? SCHED_ONE
					: ((uint64_t)(used + take) * SCHED_ONE + (uint64_t)su / 2) /
					      (uint64_t)su;

				struct xfer *x = &out[npieces];

				*x = tmpl[link];
				x->block = w->ord[gr->first + i];
				x->offset = (uint32_t)a;
				x->length = (uint32_t)(b - a);
				end = b;
				npieces++;
				used += take;
				fl -= take;
				if (used == su) {
					if (mark && mark[i] == MARK_ASK &&
					    vw->healthy(vw->healthy_ctx, u, so, out + first,
							npieces - first))
						npieces = first;
					i++;
					used = 0;
					first = npieces;
					while (mark && i < gr->cnt && mark_kept(mark[i]))
						i++;
				}
			}
		}
	}
	return npieces;
}

/* Eight distances (GCC and clang vector extensions; SSE2's width). */
typedef uint16_t u16x8 __attribute__((vector_size(16)));

/* Keys t << deg | candidate set up to this many (they fit 16 bits), and
 * no more than about four a node (the counts are cleared a receiver). */
#define KEYED_MAX ((size_t)1 << 16)

/* collect's sort where the keys are few (w->keyed): tb[v] each source's
 * candidate set, turned into its key (0: no source); the sources sorted
 * by distance and, within one, grouped as group_sources would (groups in
 * the order first seen, sources ascending within one) in two passes over
 * the nodes, where sorting by distance, keying and grouping took four. */
static void collect_keyed(const struct view *vw, struct worker *w, const uint16_t *ru, uint32_t deg)
{
	uint32_t n = vw->n, D = vw->D, pos = 0, v = 0;
	size_t keys = ((size_t)D + 1) << deg;
	uint16_t *tb = w->tight, *kgl;
	uint32_t *kcnt, *kpos, *ngr = w->tcur; /* groups a distance */
	const uint8_t *absent = vw->absent;

	if (keys > w->kcap) {
		w->kcap = keys;
		w->kcnt = xreallocarray(w->kcnt, keys, sizeof(uint32_t));
		w->kpos = xreallocarray(w->kpos, keys, sizeof(uint32_t));
		w->kgl = xreallocarray(w->kgl, keys, sizeof(uint16_t));
	}
	kcnt = w->kcnt;
	kpos = w->kpos;
	kgl = w->kgl;
	memset(kcnt, 0, keys * sizeof(uint32_t));
	memset(ngr, 0, ((size_t)D + 2) * sizeof(uint32_t));
	/* the keys, eight at once; u itself (distance 0) none */
	for (; v + 8 <= n; v += 8) {
		u16x8 r, c;

		memcpy(&r, ru + v, sizeof(r));
		memcpy(&c, tb + v, sizeof(c));
		c = (c | r << deg) & (u16x8)(r != 0);
		memcpy(tb + v, &c, sizeof(c));
	}
	for (; v < n; v++)
		tb[v] = ru[v] ? (uint16_t)(ru[v] << deg | tb[v]) : 0;
	for (v = 0; absent && v < n; v++)
		if (absent[v])
			tb[v] = 0;
	/* key 0 (no source) counted as any other, its nodes placed last:
	 * no test a node */
	for (v = 0; v < n; v++) {
		uint32_t key = tb[v];

		if (kcnt[key]++ == 0) {
			uint32_t t = key >> deg;

			kgl[((size_t)t << deg) + ngr[t]++] = (uint16_t)(key & ((1u << deg) - 1));
		}
	}
	for (uint32_t t = 1; t <= D; t++) {
		w->tstart[t] = pos;
		for (uint32_t j = 0; j < ngr[t]; j++) {
			uint32_t key = t << deg | kgl[((size_t)t << deg) + j];

			kpos[key] = pos;
			pos += kcnt[key];
		}
	}
	w->tstart[D + 1] = pos;
	kpos[0] = pos;
	for (v = 0; v < n; v++)
		w->src[kpos[tb[v]]++] = v;
}

/* Sort the sources of u by distance (src[tstart[t] .. tstart[t + 1]) are
 * those at distance t) and find each one's candidate in-links: in-link k
 * from w is a candidate for v at distance t when d(v, w) = t - 1. */
static void collect(const struct view *vw, struct worker *w, uint32_t u)
{
	uint32_t n = vw->n, D = vw->D, deg = vw->in_off[u + 1] - vw->in_off[u];
	const uint16_t *ru = vw->row[u];
	const uint16_t *rw[BFB_MAX_DEGREE];

	for (uint32_t k = 0; k < deg; k++)
		rw[k] = vw->row[vw->in_peer[vw->in_off[u] + k]];
	uint16_t *tb = NULL;
	if (deg <= 16) {
		/* in-link by in-link over every source, eight 16-bit lanes
		 * at once (a source at a time, the links inside, was a
		 * quarter of the receiver's own instructions); a row's
		 * unreachable entry wraps to 0, which no counted source's
		 * distance is */
		if (!w->tight)
			w->tight = xmalloc(((size_t)n + 8) * sizeof(uint16_t));
		tb = w->tight;
		memset(tb, 0, (size_t)n * sizeof(uint16_t));
		for (uint32_t k = 0; k < deg; k++) {
			const uint16_t *r = rw[k];
			uint16_t bit = (uint16_t)(1u << k);
			uint32_t v = 0;

			for (; v + 8 <= n; v += 8) {
				u16x8 a, b, c;

				memcpy(&a, r + v, sizeof(a));
				memcpy(&b, ru + v, sizeof(b));
				memcpy(&c, tb + v, sizeof(c));
				c |= (u16x8)(a + 1 == b) & bit;
				memcpy(tb + v, &c, sizeof(c));
			}
			for (; v < n; v++)
				tb[v] |= (uint16_t)(r[v] + 1) == ru[v] ? bit : 0;
		}
	}
	size_t keys = ((size_t)D + 1) << deg;

	w->keyed = tb && !vw->o->sort_groups && keys <= KEYED_MAX && keys <= 4 * (size_t)n + 64;
	if (w->keyed) {
		collect_keyed(vw, w, ru, deg);
		return;
	}
	memset(w->tcur, 0, ((size_t)D + 2) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++)
		if (!vw->absent || !vw->absent[v])
			w->tcur[ru[v]]++;
	w->tstart[1] = 0;
	for (uint32_t t = 1; t <= D; t++)
		w->tstart[t + 1] = w->tstart[t] + w->tcur[t];
	memcpy(w->tcur, w->tstart, ((size_t)D + 2) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++) {
		uint32_t t = ru[v];
		uint64_t m = 0;

		if (t == 0 || (vw->absent && vw->absent[v]))
			continue;
		if (tb)
			m = tb[v];
		for (uint32_t k = 0; !tb && k < deg; k++)
			m |= (uint64_t)(rw[k][v] + 1u == t) << k;
		uint32_t p = w->tcur[t]++;
		w->src[p] = v;
		w->mask[p] = m;
	}
}

/* U*_{u,t} as c/k for the grouped sources on d links (not in the write
 * pass). */
static int solve_value(const struct view *vw, struct worker *w, uint32_t ng, uint32_t m, uint32_t d,
		       bool single, uint64_t *c, uint64_t *k, double *ulp)
{
	*c = 0;
	*k = 1;
	if (single) {
		uint32_t per[BFB_MAX_DEGREE] = {0};

		for (uint32_t g = 0; g < ng; g++)
			per[__builtin_ctzll(w->groups[g].mask)] += w->groups[g].cnt;
		for (uint32_t a = 0; a < d; a++)
			if (per[a] * *k > *c * w->wt[a]) {
				*c = per[a];
				*k = w->wt[a];
			}
		uint64_t gg = gcd_u64(*c, *k);
		*c /= gg;
		*k /= gg;
		*ulp = (double)*c / (double)*k;
		return 0;
	}
	if (vw->o->method == BFB_LP) {
		if (solve_lp(w, ng, d, vw->o->lp_solver, ulp) < 0)
			return -1;
		/* The LP optimum is a fraction with denominator <= the links'
		 * total rate (min cut). */
		int64_t rsum = 0;
		for (uint32_t a = 0; a < d; a++)
			rsum += w->wt[a];
		struct frac f = frac_from_double(*ulp, rsum, 1e-6);
		if (!frac_valid(f) || f.num <= 0) {
			worker_fail(w, "BFB: the LP optimum is not a fraction with denominator <= "
				       "the links' total rate (numerical trouble in lp_solve)");
			return -1;
		}
		*c = (uint64_t)f.num;
		*k = (uint64_t)f.den;
		return 0;
	}
	uint64_t uni = 0;
	for (uint32_t g = 0; g < ng; g++)
		uni |= w->groups[g].mask;
	int dp = (int)popcount64(uni);
	enum bfb_method method = vw->o->method;
	/* Building without chunks, the fractions need the max flow at U*
	 * anyway, and the min cut's first flow, at the bound m / r(all links),
	 * is that flow whenever the bound is met (hypercubes: always). */
	bool flow_first = vw->pass == PASS_BUILD && !vw->o->chunks && dp > AUTO_FLOW_FIRST;
	if ((method == BFB_SUBSETS && dp <= SUBSET_MAX) ||
	    (method == BFB_AUTO && dp <= AUTO_SUBSETS && !flow_first))
		solve_subsets(w, ng, c, k);
	else if (solve_mincut(w, ng, d, m, c, k) < 0)
		return -1;
	*ulp = (double)*c / (double)*k;
	return 0;
}

/* Room for `need` more pieces in one chunk of the worker's step so. */
static struct xfer *step_room(struct worker *w, uint32_t so, size_t need)
{
	struct stepbuf *b = &w->sb[so];

	if (!b->nchunk || b->used + need > b->size) {
		uint32_t size = need > CHUNK_XFERS ? (uint32_t)need : CHUNK_XFERS;

		if (b->nchunk == b->cap_chunk) {
			b->cap_chunk = b->cap_chunk ? b->cap_chunk * 2 : 16;
			b->chunk = xreallocarray(b->chunk, b->cap_chunk, sizeof(struct xfer *));
		}
		b->chunk[b->nchunk++] = xmalloc((size_t)size * sizeof(struct xfer));
		b->used = 0;
		b->size = size;
	}
	return b->chunk[b->nchunk - 1] + b->used;
}

void bfb_solve_receiver(void *arg, size_t ui, unsigned wid)
{
	struct view *vw = arg;
	struct worker *w = &vw->w[wid];
	uint32_t u = vw->recv ? vw->recv[ui] : (uint32_t)ui, D = vw->D;
	uint32_t d = vw->in_off[u + 1] - vw->in_off[u]; /* u's links */
	uint32_t P = vw->o->chunks;
	bool lp = vw->o->method == BFB_LP;

	if (w->failed)
		return;
	if (clock_expired(vw->o->clock)) { /* the request's deadline */
		char lim[32];

		w->failed = true;
		/* clock_check's words, the limit named */
		fmt_duration(lim, sizeof(lim), vw->o->clock->limit);
		snprintf(w->why, sizeof(w->why), "time limit %s reached in generation", lim);
		return;
	}
	for (uint32_t a = 0; a < d; a++)
		w->wt[a] = vw->o->rate ? vw->o->rate[vw->in_arc[vw->in_off[u] + a]] : 1;
	if (vw->pass == PASS_BUILD)
		vw->owner[ui] = wid;
	collect(vw, w, u);
	for (uint32_t t = 1; t <= D; t++) {
		uint32_t lo = w->tstart[t], hi = w->tstart[t + 1], m = hi - lo, ng;
		uint32_t so = vw->reverse ? D - t : t - 1; /* the step in the schedule */
		size_t idx = ui * D + t - 1;
		uint64_t c, k;
		double ulp = 0;
		bool single = true;

		if (m == 0) { /* no node at distance t from u */
			if (vw->pass == PASS_BUILD)
				vw->count[idx] = 0;
			continue;
		}
		ng = w->keyed ? group_keyed(w, t, lo, d) : group_sources(w, lo, hi, d);
		for (uint32_t g = 0; g < ng; g++)
			if (w->groups[g].nl != 1)
				single = false;
		if (!single)
			w->problems++;
		if (solve_value(vw, w, ng, m, d, single, &c, &k, &ulp) < 0)
			return;
		if (c * w->max_k[t - 1] > w->max_c[t - 1] * k) {
			w->max_c[t - 1] = c;
			w->max_k[t - 1] = k;
		}
		if (ulp > w->max_u[t - 1])
			w->max_u[t - 1] = ulp;
		int64_t su = (int64_t)k, cap = (int64_t)c;
		if (vw->step_k) {
			/* the step's largest U* (the fractions' pass: steps_most sets
			 * it after the values'), in this problem's units, rounded
			 * down: never above it, never below this one's (c / k) */
			int64_t most = (int64_t)(vw->step_c[t - 1] * k / vw->step_k[t - 1]);

			cap = most > cap ? most : cap;
		}
		if (P) {
			/* IP (12): P chunks per source; capacity ceil(P U*) is optimal
			 * because flows with integral capacities are integral. */
			su = P;
			cap = (int64_t)(((uint64_t)P * c + k - 1) / k);
			if ((uint64_t)cap > w->max_w[t - 1])
				w->max_w[t - 1] = (uint64_t)cap;
		}
		if (vw->pass == PASS_EVAL)
			continue;

		/* The fractions: one integral max flow (or the LP's own); the
		 * value's last flow when it was this one, or one started from
		 * the healthy program's (warm_flow). */
		if (vw->healthy)
			healthy_marks(vw, w, ng, m, u, so);
		if (single) {
			for (uint32_t g = 0; g < ng; g++)
				w->gl_flow[w->groups[g].gl] = su * (int64_t)w->groups[g].cnt;
		} else if (lp && !P) {
			su = LP_UNITS; /* solve_lp set the flows in these units */
		} else if (vw->healthy) {
			if (warm_flow(w, ng, d, m, su, cap) != su * (int64_t)m) {
				worker_fail(w,
					    "BFB: the max flow falls short of U* (internal error)");
				return;
			}
			flows_from_net(w, ng);
		} else {
			int64_t fl = w->net_valid && w->net_su == su && w->net_cap == cap
					 ? w->net_flow
					 : build_and_flow(w, ng, d, su, cap);

			if (fl != su * (int64_t)m) {
				worker_fail(w,
					    "BFB: the max flow falls short of U* (internal error)");
				return;
			}
			flows_from_net(w, ng);
		}
		/* A group's pieces: one per source and one more per link at most. */
		size_t most = m;
		for (uint32_t g = 0; g < ng; g++)
			most += w->groups[g].nl;
		struct xfer *out = step_room(w, so, most);
		struct stepbuf *sb = &w->sb[so];
		size_t np = emit_pieces(vw, w, ng, u, so, su, out);

		vw->where[idx] = (uint64_t)(sb->nchunk - 1) << 32 | sb->used;
		vw->count[idx] = (uint32_t)np;
		sb->used += (uint32_t)np;
	}
}

void bfb_worker_free(struct worker *w)
{
	free(w->src);
	free(w->mask);
	free(w->tight);
	free(w->mark);
	free(w->bkey);
	free(w->gdir);
	free(w->kcnt);
	free(w->kpos);
	free(w->kgl);
	free(w->tstart);
	free(w->tcur);
	free(w->gid);
	free(w->order);
	free(w->groups);
	free(w->hkey);
	free(w->hval);
	free(w->gl_link);
	free(w->gl_flow);
	free(w->gl_kept);
	free(w->subset);
	free(w->subset_rate);
	flow_net_free(&w->net);
	free(w->lpx);
	free(w->lpcol);
	free(w->lpval);
	free(w->max_c);
	free(w->max_k);
	free(w->max_w);
	free(w->max_u);
	for (uint32_t so = 0; w->sb && so < w->nsteps; so++) {
		for (uint32_t c = w->sb[so].live; c < w->sb[so].nchunk; c++)
			free(w->sb[so].chunk[c]);
		free(w->sb[so].chunk);
	}
	free(w->sb);
}

int bfb_solve_node(uint32_t m, const uint64_t *masks, uint32_t d, const uint32_t *rate,
		   enum bfb_method method, uint64_t *c, uint64_t *k, struct ofc_error *err)
{
	struct bfb_opts o = {.method = method};
	struct view vw = {.d = d, .o = &o};
	struct worker w = {0};
	bool single = true;
	double ulp;
	int rc = 0;

	if (d == 0 || d > BFB_MAX_DEGREE || m == 0)
		return ofc_error_set(err, OFC_E_INPUT, "need 1..%u links and some sources",
				     BFB_MAX_DEGREE);
	for (uint32_t i = 0; i < m; i++)
		if (!masks[i] || (d < 64 && masks[i] >> d))
			return ofc_error_set(err, OFC_E_INPUT,
					     "source %u has no candidate link among %u", i, d);
	for (uint32_t a = 0; a < d; a++) {
		w.wt[a] = rate ? rate[a] : 1;
		if (w.wt[a] == 0 || w.wt[a] > BFB_MAX_RATE)
			return ofc_error_set(err, OFC_E_INPUT, "link %u: rate 1..%u", a,
					     BFB_MAX_RATE);
	}
	w.src = xmalloc((size_t)m * sizeof(uint32_t));
	w.mask = xmalloc((size_t)m * sizeof(uint64_t));
	w.gid = xmalloc((size_t)m * sizeof(uint32_t));
	w.order = xmalloc((size_t)m * sizeof(uint32_t));
	w.groups = xmalloc((size_t)m * sizeof(struct group));
	for (uint32_t i = 0; i < m; i++) {
		w.src[i] = i;
		w.mask[i] = masks[i];
	}
	uint32_t ng = group_sources(&w, 0, m, d);
	for (uint32_t g = 0; g < ng; g++)
		single &= w.groups[g].nl == 1;
	if (solve_value(&vw, &w, ng, m, d, single, c, k, &ulp) < 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", w.why);
	bfb_worker_free(&w);
	return rc;
}
