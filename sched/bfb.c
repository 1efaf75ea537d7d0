/* BFB (breadth-first-broadcast) schedules, Zhao et al. Sec. 6 and App. D.
 *
 * BFB allgather on a digraph H: at step t, node u receives the shard of
 * every node v at distance t from it, from in-neighbours w with
 * d(v, w) = t - 1 (Def. 15). Every such w holds all of v's shard, so the
 * only decision is how much of it each candidate in-link carries: LP (3),
 * one per (u, t), minimising the most any in-link of u carries.
 *
 * The LP optimum has a closed form (min cut, as in the proof of Thm 19):
 * U*_{u,t} = max over link sets K of |{v : cand(v) in K}| / |K|, a fraction
 * with denominator <= d. We compute it exactly (subset formula, or a
 * parametric max flow for many candidate links), then the fractions
 * themselves from one integral max flow: with U* = c/k, give every source
 * k units and every link capacity c; integrality makes every fraction a
 * multiple of 1/k, so fixed-point offsets are exact up to rounding of
 * 1/k itself. With --chunks P the same flow with P units per source and
 * capacity ceil(P U*) is the integer program (12) solved exactly.
 *
 * Sources with the same candidate set are one group in the flow (their
 * problems are identical); a group's flow is laid over its sources end to
 * end, so most sources travel in one piece.
 *
 * Reduce-scatter is BFB allgather on H = G^T run backwards (Cor. 3.1):
 * the allgather transfer w -> u of v's part at step t is the reduce-scatter
 * transfer u -> w of the partial sum of shard v at step D - t + 1, over the
 * arc u -> w of G. The problems for all (u, t) are independent: they run in
 * parallel, once, each writing its pieces into its worker's chunks for the
 * step; the schedule is gathered from them step by step. */
#include "rwa/rwa.h"
#include "sched/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUBSET_MAX	20	  /* BFB_SUBSETS: 2^20 subsets at most */
#define AUTO_SUBSETS	12	  /* BFB_AUTO: subsets up to 12 candidate links */
#define AUTO_FLOW_FIRST 4	  /* BFB_AUTO building: min cut first above 4 links */
#define LP_UNITS	(1 << 24) /* LP fractions as multiples of 2^-24 of a shard */

/* EVAL: the figures only. BUILD: every transfer too, each (u, t) problem
 * solved once and its pieces written into its worker's buffer for the step,
 * gathered into the schedule step by step afterwards. */
enum pass { PASS_EVAL, PASS_BUILD };

struct group {
	uint64_t mask; /* candidate in-links (bit k: in-link k of u) */
	uint32_t cnt;
	uint32_t first; /* its sources: order[first .. first + cnt) */
	uint32_t gl;	/* its link flows: gl_link/gl_flow[gl .. gl + nl) */
	uint32_t nl;	/* popcount(mask), counted once: loops test it often */
};

/* A small max-flow network (Dinic): source, groups, links, sink, in
 * compressed rows: node v's edges are slots start[v] .. start[v + 1] - 1,
 * slot e runs to to[e] with residual cap[e] and its reverse is slot rev[e].
 * Rows are scanned in order, so a BFS or DFS reads memory in sequence. */
struct net {
	uint32_t nv, ne;
	size_t cap_v, cap_e;
	uint32_t *start, *it, *queue, *path; /* per node (start: nv + 1) */
	int32_t *level;
	uint32_t *to, *rev; /* per slot */
	int64_t *cap;
};

/* A worker's pieces of one step, in chunks: a (u, t) problem's pieces lie
 * in one chunk, and chunks fill in the order the worker takes nodes
 * (ascending), so gathering a step in node order frees them as it goes. */
struct stepbuf {
	struct xfer **chunk;
	uint32_t nchunk, cap_chunk;
	uint32_t used, size; /* of the last chunk */
	uint32_t live;	     /* gathering: chunks below this are freed */
};

#define CHUNK_XFERS (1u << 16) /* 1.25 MiB */

struct worker {
	uint32_t *src; /* the sources of u, by distance */
	uint64_t *mask;
	uint32_t *tstart, *tcur; /* D + 2 */
	uint32_t *gid, *order;
	struct group *groups;
	uint64_t *hkey;
	uint32_t *hval;
	size_t hcap;
	uint32_t *gl_link;
	int64_t *gl_flow;
	size_t cap_gl;
	uint64_t *subset;      /* 2^SUBSET_MAX counters, allocated on first use */
	uint32_t *subset_rate; /* r(K) of every subset K, likewise */
	struct net net;
	/* The max flow the network holds (valid until the next problem is
	 * grouped): the value's last flow is often the fractions' flow. */
	bool net_valid;
	int64_t net_su, net_cap, net_flow;
	/* BUILD: the pieces of every step (so, in schedule order) */
	struct stepbuf *sb;
	uint32_t nsteps;
	double *lpx;
	int *lpcol;
	double *lpval;
	size_t cap_lp;
	/* per-step maxima of U* (c/k), of W (chunks) and of U (LP) */
	uint64_t *max_c, *max_k, *max_w;
	double *max_u;
	/* rates of the links of the node being solved (1 without rates) */
	uint32_t wt[BFB_MAX_DEGREE];
	uint64_t problems, lps;
	bool failed;
	char why[200];
};

struct view {
	const struct graph *g;
	bool reverse;	  /* reduce-scatter: BFB allgather on g^T, run backwards */
	uint32_t n, d, D; /* d prices a step (the most links a node has) */
	const uint32_t *in_off, *in_peer, *in_arc;
	uint32_t *own_off, *own_peer, *own_arc; /* allocated here (allgather) */
	const uint16_t **row;			/* row[x][v] = d_H(v, x); NULL when not computed */
	uint16_t *dist;
	uint16_t *rows; /* evaluation of a vertex-transitive graph: a few rows */
	const struct bfb_opts *o;
	enum pass pass;
	uint32_t nrecv; /* receivers to process: n, or 1 (vertex-transitive figures) */
	/* BUILD, per (u, t) at index u * D + t - 1: u's pieces at step t are
	 * count pieces of w[owner[u]].sb[so], chunk where >> 32 from where's
	 * low half */
	uint32_t *count, *owner;
	uint64_t *where;
	struct worker *w;
	unsigned nworkers;
};

/* ---- helpers -------------------------------------------------------------- */

static int popcount64(uint64_t x)
{
	return __builtin_popcountll(x);
}

static void worker_fail(struct worker *w, const char *msg)
{
	if (!w->failed) {
		w->failed = true;
		snprintf(w->why, sizeof(w->why), "%s", msg);
	}
}

/* ---- max flow --------------------------------------------------------------- */

/* Room for nv nodes and ne slots. */
static void net_reset(struct net *f, uint32_t nv, uint32_t ne)
{
	if (nv + 1 > f->cap_v) {
		f->cap_v = (nv + 1) * 2;
		f->start = xreallocarray(f->start, f->cap_v, sizeof(uint32_t));
		f->it = xreallocarray(f->it, f->cap_v, sizeof(uint32_t));
		f->queue = xreallocarray(f->queue, f->cap_v, sizeof(uint32_t));
		f->path = xreallocarray(f->path, f->cap_v, sizeof(uint32_t));
		f->level = xreallocarray(f->level, f->cap_v, sizeof(int32_t));
	}
	if (ne > f->cap_e) {
		f->cap_e = ne * 2;
		f->to = xreallocarray(f->to, f->cap_e, sizeof(uint32_t));
		f->rev = xreallocarray(f->rev, f->cap_e, sizeof(uint32_t));
		f->cap = xreallocarray(f->cap, f->cap_e, sizeof(int64_t));
	}
	f->nv = nv;
	f->ne = ne;
}

/* The edge a -> b of capacity c at slot e, its reverse at slot r. */
static void net_pair(struct net *f, uint32_t e, uint32_t r, uint32_t a, uint32_t b, int64_t c)
{
	f->to[e] = b;
	f->cap[e] = c;
	f->rev[e] = r;
	f->to[r] = a;
	f->cap[r] = 0;
	f->rev[r] = e;
}

/* Levels from s in the residual network; with `to_t`, only as far as t's
 * level needs (a node found after t is at t's level or beyond, so no
 * shortest path to t passes it: Dinic finds the same paths). */
static bool net_bfs(struct net *f, uint32_t s, uint32_t t, bool to_t)
{
	uint32_t qh = 0, qt = 0;

	for (uint32_t v = 0; v < f->nv; v++)
		f->level[v] = -1;
	f->level[s] = 0;
	f->queue[qt++] = s;
	while (qh < qt) {
		uint32_t v = f->queue[qh++];

		for (uint32_t e = f->start[v]; e < f->start[v + 1]; e++)
			if (f->cap[e] > 0 && f->level[f->to[e]] < 0) {
				f->level[f->to[e]] = f->level[v] + 1;
				if (to_t && f->to[e] == t)
					return true;
				f->queue[qt++] = f->to[e];
			}
	}
	return f->level[t] >= 0;
}

/* Dinic: blocking flows along shortest residual paths, found iteratively. */
static int64_t net_maxflow(struct net *f, uint32_t s, uint32_t t)
{
	int64_t total = 0;

	while (net_bfs(f, s, t, true)) {
		memcpy(f->it, f->start, f->nv * sizeof(uint32_t));
		for (;;) {
			uint32_t v = s, depth = 0;

			while (v != t) {
				uint32_t e = f->it[v], end = f->start[v + 1];

				while (e < end &&
				       (f->cap[e] <= 0 || f->level[f->to[e]] != f->level[v] + 1))
					e++;
				f->it[v] = e;
				if (e < end) {
					f->path[depth++] = e;
					v = f->to[e];
					continue;
				}
				if (v == s)
					goto phase_done;
				f->level[v] = -1; /* dead end */
				e = f->path[--depth];
				v = f->to[f->rev[e]];
				f->it[v]++;
			}
			int64_t b = INT64_MAX;
			for (uint32_t i = 0; i < depth; i++)
				if (f->cap[f->path[i]] < b)
					b = f->cap[f->path[i]];
			for (uint32_t i = 0; i < depth; i++) {
				f->cap[f->path[i]] -= b;
				f->cap[f->rev[f->path[i]]] += b;
			}
			total += b;
		}
	phase_done:;
	}
	return total;
}

static void net_free(struct net *f)
{
	free(f->start);
	free(f->rev);
	free(f->to);
	free(f->it);
	free(f->queue);
	free(f->path);
	free(f->level);
	free(f->cap);
}

/* ---- one (u, t) problem ------------------------------------------------------- */

/* Group the sources src[lo, hi) by candidate set; fills groups, gid and
 * order (sources grouped, in source order within a group). */
static uint32_t group_sources(struct worker *w, uint32_t lo, uint32_t hi)
{
	uint32_t m = hi - lo, ng = 0;
	size_t cap = 16;

	while (cap < 2 * (size_t)m)
		cap *= 2;
	if (cap > w->hcap) {
		w->hcap = cap;
		w->hkey = xreallocarray(w->hkey, cap, sizeof(uint64_t));
		w->hval = xreallocarray(w->hval, cap, sizeof(uint32_t));
	}
	memset(w->hval, 0xff, cap * sizeof(uint32_t));
	w->net_valid = false;
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
	uint32_t pos = 0, gl = 0;
	for (uint32_t g = 0; g < ng; g++) {
		w->groups[g].first = pos;
		w->groups[g].gl = gl;
		w->groups[g].nl = (uint32_t)popcount64(w->groups[g].mask);
		pos += w->groups[g].cnt;
		gl += w->groups[g].nl;
		w->groups[g].cnt = 0;
	}
	for (uint32_t i = 0; i < m; i++) {
		struct group *g = &w->groups[w->gid[i]];

		w->order[g->first + g->cnt++] = w->src[lo + i];
	}
	if (gl > w->cap_gl) {
		w->cap_gl = gl * 2;
		w->gl_link = xreallocarray(w->gl_link, w->cap_gl, sizeof(uint32_t));
		w->gl_flow = xreallocarray(w->gl_flow, w->cap_gl, sizeof(int64_t));
	}
	for (uint32_t g = 0; g < ng; g++) {
		uint32_t k = w->groups[g].gl;

		for (uint64_t b = w->groups[g].mask; b; b &= b - 1)
			w->gl_link[k++] = (uint32_t)__builtin_ctzll(b);
	}
	return ng;
}

/* The flow network for supply `su` per source and capacity `cap` per unit
 * of link rate; returns the max flow. Nodes: 0 source, 1..ng groups, then
 * links, sink. Each row lists its edges in the order Dinic tries them:
 * the source's groups last first, a group's links lowest first and then
 * its edge back to the source, a link's groups last first and then its
 * sink edge, the sink's links last first (the order of the adjacency
 * stacks this network was first built with, so the flows are the same). */
static int64_t build_and_flow(struct worker *w, uint32_t ng, uint32_t d, int64_t su, int64_t cap)
{
	struct net *f = &w->net;
	uint32_t sink = ng + d + 1, lnk = 1 + ng, gl = 0, *ls;
	uint32_t ldeg[BFB_MAX_DEGREE] = {0};

	for (uint32_t g = 0; g < ng; g++) {
		gl += w->groups[g].nl;
		for (uint32_t i = 0; i < w->groups[g].nl; i++)
			ldeg[w->gl_link[w->groups[g].gl + i]]++;
	}
	net_reset(f, ng + d + 2, 2 * (ng + gl + d));
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
		net_pair(f, f->start[lnk + k + 1] - 1, f->start[sink] + d - 1 - k, lnk + k, sink,
			 cap * (int64_t)w->wt[k]);
	}
	for (uint32_t g = ng; g-- > 0;) {
		const struct group *gr = &w->groups[g];
		int64_t supply = su * gr->cnt;
		uint32_t row = f->start[1 + g];

		net_pair(f, ng - 1 - g, row + gr->nl, 0, 1 + g, supply);
		for (uint32_t i = 0; i < gr->nl; i++) {
			uint32_t k = w->gl_link[gr->gl + i];

			net_pair(f, row + i, ls[k]++, 1 + g, lnk + k, supply);
		}
	}
	w->net_valid = true;
	w->net_su = su;
	w->net_cap = cap;
	w->net_flow = net_maxflow(f, 0, sink);
	return w->net_flow;
}

/* Group flows from the network: the flow on an edge is its reverse's residual. */
static void flows_from_net(struct worker *w, uint32_t ng)
{
	const struct net *f = &w->net;

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
		struct net *f = &w->net;
		net_bfs(f, 0, f->nv - 1, false);
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

/* Lay every group's link flows over its sources end to end (each source
 * `su` units long) and emit the pieces: count them, or write transfers. */
static size_t emit_pieces(const struct view *vw, struct worker *w, uint32_t ng, uint32_t u,
			  int64_t su, struct xfer *out)
{
	size_t npieces = 0;
	const struct graph *g = vw->g;
	uint32_t base = vw->in_off[u];

	for (uint32_t gi = 0; gi < ng; gi++) {
		const struct group *gr = &w->groups[gi];
		uint32_t np = gr->nl, i = 0;
		int64_t used = 0;

		for (uint32_t p = 0; p < np; p++) {
			int64_t fl = w->gl_flow[gr->gl + p];
			uint32_t link = w->gl_link[gr->gl + p];

			while (fl > 0 && i < gr->cnt) {
				int64_t take = su - used < fl ? su - used : fl;

				if (out) {
					uint32_t v = w->order[gr->first + i];
					uint32_t peer = vw->in_peer[base + link];
					uint32_t arc = vw->in_arc[base + link];
					uint64_t a =
					    ((uint64_t)used * SCHED_ONE + (uint64_t)su / 2) /
					    (uint64_t)su;
					uint64_t b = ((uint64_t)(used + take) * SCHED_ONE +
						      (uint64_t)su / 2) /
						     (uint64_t)su;
					struct xfer *x = &out[npieces];

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
				}
				npieces++;
				used += take;
				fl -= take;
				if (used == su) {
					i++;
					used = 0;
				}
			}
		}
	}
	return npieces;
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
	memset(w->tcur, 0, ((size_t)D + 2) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++)
		w->tcur[ru[v]]++;
	w->tstart[1] = 0;
	for (uint32_t t = 1; t <= D; t++)
		w->tstart[t + 1] = w->tstart[t] + w->tcur[t];
	memcpy(w->tcur, w->tstart, ((size_t)D + 2) * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++) {
		uint32_t t = ru[v];
		uint64_t m = 0;

		if (t == 0)
			continue;
		for (uint32_t k = 0; k < deg; k++)
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
	int dp = popcount64(uni);
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

static void solve_node(void *arg, size_t ui, unsigned wid)
{
	struct view *vw = arg;
	struct worker *w = &vw->w[wid];
	uint32_t u = (uint32_t)ui, D = vw->D;
	uint32_t d = vw->in_off[u + 1] - vw->in_off[u]; /* u's links */
	uint32_t P = vw->o->chunks;
	bool lp = vw->o->method == BFB_LP;

	if (w->failed)
		return;
	if (clock_expired(vw->o->clock)) { /* the request's deadline */
		w->failed = true;
		snprintf(w->why, sizeof(w->why), "time limit reached in generation");
		return;
	}
	for (uint32_t a = 0; a < d; a++)
		w->wt[a] = vw->o->rate ? vw->o->rate[vw->in_arc[vw->in_off[u] + a]] : 1;
	if (vw->pass == PASS_BUILD)
		vw->owner[u] = wid;
	collect(vw, w, u);
	for (uint32_t t = 1; t <= D; t++) {
		uint32_t lo = w->tstart[t], hi = w->tstart[t + 1], m = hi - lo, ng;
		uint32_t so = vw->reverse ? D - t : t - 1; /* the step in the schedule */
		size_t idx = (size_t)u * D + t - 1;
		uint64_t c, k;
		double ulp = 0;
		bool single = true;

		if (m == 0) { /* no node at distance t from u */
			if (vw->pass == PASS_BUILD)
				vw->count[idx] = 0;
			continue;
		}
		ng = group_sources(w, lo, hi);
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
		 * value's last flow when it was this one. */
		if (single) {
			for (uint32_t g = 0; g < ng; g++)
				w->gl_flow[w->groups[g].gl] = su * (int64_t)w->groups[g].cnt;
		} else if (lp && !P) {
			su = LP_UNITS; /* solve_lp set the flows in these units */
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
		size_t np = emit_pieces(vw, w, ng, u, su, out);

		vw->where[idx] = (uint64_t)(sb->nchunk - 1) << 32 | sb->used;
		vw->count[idx] = (uint32_t)np;
		sb->used += (uint32_t)np;
	}
}

/* ---- views, distances and passes ------------------------------------------------ */

/* BFS over g from s into row (distances from s). */
static void bfs_row(const struct graph *g, uint32_t s, uint16_t *row, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t v = 0; v < g->n; v++)
		row[v] = TOPO_UNREACHABLE;
	row[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		uint32_t u = queue[head++];

		if (row[u] + 1 >= TOPO_UNREACHABLE)
			continue;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (row[g->adj[a]] == TOPO_UNREACHABLE) {
				row[g->adj[a]] = (uint16_t)(row[u] + 1);
				queue[tail++] = g->adj[a];
			}
	}
}

static void worker_free(struct worker *w)
{
	free(w->src);
	free(w->mask);
	free(w->tstart);
	free(w->tcur);
	free(w->gid);
	free(w->order);
	free(w->groups);
	free(w->hkey);
	free(w->hval);
	free(w->gl_link);
	free(w->gl_flow);
	free(w->subset);
	free(w->subset_rate);
	net_free(&w->net);
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

static void view_free(struct view *vw)
{
	free(vw->own_off);
	free(vw->own_peer);
	free(vw->own_arc);
	free(vw->row);
	free(vw->dist);
	free(vw->rows);
	free(vw->count);
	free(vw->owner);
	free(vw->where);
	for (unsigned i = 0; vw->w && i < vw->nworkers; i++)
		worker_free(&vw->w[i]);
	free(vw->w);
}

/* In-links of every node of H: for allgather H = g, in-links of u are the
 * arcs w -> u of g; for reduce-scatter H = g^T, they are u's own arcs. */
static void view_links(struct view *vw)
{
	const struct graph *g = vw->g;
	uint32_t n = g->n;

	if (vw->reverse) {
		vw->own_arc = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
		for (uint32_t a = 0; a < g->m; a++)
			vw->own_arc[a] = a;
		vw->in_off = g->off;
		vw->in_peer = g->adj;
		vw->in_arc = vw->own_arc;
		return;
	}
	vw->own_off = xcalloc((size_t)n + 1, sizeof(uint32_t));
	vw->own_peer = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	vw->own_arc = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t a = 0; a < g->m; a++)
		vw->own_off[g->adj[a] + 1]++;
	for (uint32_t u = 0; u < n; u++)
		vw->own_off[u + 1] += vw->own_off[u];
	uint32_t *pos = xmalloc((size_t)n * sizeof(uint32_t));
	memcpy(pos, vw->own_off, (size_t)n * sizeof(uint32_t));
	for (uint32_t w = 0; w < n; w++)
		for (uint32_t a = g->off[w]; a < g->off[w + 1]; a++) {
			uint32_t p = pos[g->adj[a]]++;

			vw->own_peer[p] = w;
			vw->own_arc[p] = a;
		}
	free(pos);
	vw->in_off = vw->own_off;
	vw->in_peer = vw->own_peer;
	vw->in_arc = vw->own_arc;
}

/* row[x][v] = d_H(v, x): BFS from x over H^T, which is g itself for
 * reduce-scatter (H = g^T) and g^T for allgather. */
static int view_distances(struct view *vw, bool one_node, struct ofc_error *err)
{
	const struct graph *g = vw->g;
	struct graph *t = vw->reverse ? NULL : graph_transpose(g);
	const struct graph *h = vw->reverse ? g : t;
	uint32_t n = g->n;

	vw->row = xcalloc(n, sizeof(uint16_t *));
	if (one_node) {
		/* A vertex-transitive graph: node 0 and its in-neighbours suffice. */
		uint32_t deg = vw->in_off[1] - vw->in_off[0];
		uint32_t *queue = xmalloc((size_t)n * sizeof(uint32_t));

		vw->rows = xmalloc((size_t)(deg + 1) * n * sizeof(uint16_t));
		bfs_row(h, 0, vw->rows, queue);
		vw->row[0] = vw->rows;
		for (uint32_t k = 0; k < deg; k++) {
			uint32_t x = vw->in_peer[vw->in_off[0] + k];

			if (!vw->row[x]) {
				bfs_row(h, x, vw->rows + (size_t)(k + 1) * n, queue);
				vw->row[x] = vw->rows + (size_t)(k + 1) * n;
			}
		}
		free(queue);
	} else {
		vw->dist = topo_distances(h, vw->o->threads, err);
		if (!vw->dist) {
			graph_free(t);
			return -1;
		}
		for (uint32_t x = 0; x < n; x++)
			vw->row[x] = vw->dist + (size_t)x * n;
	}
	graph_free(t);

	uint32_t D = 0;
	for (uint32_t x = 0; x < n; x++) {
		if (!vw->row[x])
			continue;
		for (uint32_t v = 0; v < n; v++) {
			if (vw->row[x][v] == TOPO_UNREACHABLE)
				return ofc_error_set(err, OFC_E_INPUT,
						     "%s is not strongly connected: node %u cannot "
						     "reach node %u",
						     g->spec ? g->spec : "the topology",
						     vw->reverse ? x : v, vw->reverse ? v : x);
			if (vw->row[x][v] > D)
				D = vw->row[x][v];
		}
	}
	vw->D = D;
	return 0;
}

static void workers_init(struct view *vw)
{
	unsigned th = vw->o->threads ? vw->o->threads : ofc_cpu_count();
	uint32_t n = vw->n, D = vw->D;

	if (th > 64)
		th = 64;
	vw->nworkers = th;
	vw->w = xcalloc(th, sizeof(struct worker));
	for (unsigned i = 0; i < th; i++) {
		struct worker *w = &vw->w[i];

		w->src = xmalloc((size_t)n * sizeof(uint32_t));
		w->mask = xmalloc((size_t)n * sizeof(uint64_t));
		w->tstart = xmalloc(((size_t)D + 2) * sizeof(uint32_t));
		w->tcur = xmalloc(((size_t)D + 2) * sizeof(uint32_t));
		w->gid = xmalloc((size_t)n * sizeof(uint32_t));
		w->order = xmalloc((size_t)n * sizeof(uint32_t));
		w->groups = xmalloc((size_t)n * sizeof(struct group));
		w->max_c = xcalloc(D, sizeof(uint64_t));
		w->max_k = xmalloc((size_t)D * sizeof(uint64_t));
		for (uint32_t t = 0; t < D; t++)
			w->max_k[t] = 1;
		w->max_w = xcalloc(D, sizeof(uint64_t));
		w->max_u = xcalloc(D, sizeof(double));
		if (vw->pass == PASS_BUILD) {
			w->nsteps = D;
			w->sb = xcalloc(D, sizeof(struct stepbuf));
		}
	}
}

struct phase_result {
	uint32_t steps;
	struct frac tau_b, tau_b_exact;
	double tau_b_value, tau_b_exact_value;
	uint64_t problems, lps;
	struct frac *step; /* max_u U*_{u,t} per step, in schedule order (the caller frees) */
};

/* One BFB allgather on H (g, or g^T run backwards), appended to s; with
 * node0 (a reduced schedule on a Cayley graph) only node 0's problems,
 * whose pieces are the program. */
static int run_view(const struct graph *g, uint32_t d, bool reverse, const struct bfb_opts *o,
		    bool node0, struct schedule *s, struct phase_result *pr, struct bfb_stats *st,
		    struct ofc_error *err)
{
	struct view vw = {.g = g, .reverse = reverse, .n = g->n, .o = o};
	uint32_t n = g->n;
	int rc = -1;
	bool one = node0 || (!s && g->vertex_transitive && !o->rate);
	double t0 = now_seconds();

	view_links(&vw);
	vw.d = d;
	if (view_distances(&vw, one, err) < 0)
		goto out;
	st->seconds_distances += now_seconds() - t0;
	t0 = now_seconds();
	uint32_t D = vw.D;
	vw.nrecv = one ? 1 : n;
	size_t cells = (size_t)vw.nrecv * D;
	vw.pass = s ? PASS_BUILD : PASS_EVAL;
	if (s) {
		vw.count = xmalloc(cells * sizeof(uint32_t));
		vw.where = xmalloc(cells * sizeof(uint64_t));
		vw.owner = xmalloc((size_t)n * sizeof(uint32_t));
	}
	workers_init(&vw);
	if (s && o->inject)
		pr->step = xcalloc(D, sizeof(struct frac));
	parallel_for(vw.nrecv, 4, vw.nworkers, solve_node, &vw);
	for (unsigned i = 0; i < vw.nworkers; i++)
		if (vw.w[i].failed) {
			ofc_error_set(err, OFC_E_RUNTIME, "%s", vw.w[i].why);
			goto out;
		}

	/* tau_B = (d/N) sum_t max_u U*_{u,t} (eq. 4), exactly. */
	struct frac sum = frac_make(0, 1), sumw = frac_make(0, 1);
	double sumd = 0;
	for (uint32_t t = 0; t < D; t++) {
		uint64_t bc = 0, bk = 1, bw = 0;
		double bu = 0;

		for (unsigned i = 0; i < vw.nworkers; i++) {
			struct worker *w = &vw.w[i];

			if (w->max_c[t] * bk > bc * w->max_k[t]) {
				bc = w->max_c[t];
				bk = w->max_k[t];
			}
			if (w->max_w[t] > bw)
				bw = w->max_w[t];
			if (w->max_u[t] > bu)
				bu = w->max_u[t];
		}
		sum = frac_add(sum, frac_make((int64_t)bc, (int64_t)bk));
		if (pr->step)
			pr->step[reverse ? D - 1 - t : t] = frac_make((int64_t)bc, (int64_t)bk);
		/* The LP path reports lp_solve's own optimum as the decimal. */
		sumd += o->method == BFB_LP ? bu : (double)bc / (double)bk;
		if (o->chunks)
			sumw = frac_add(sumw, frac_make((int64_t)bw, o->chunks));
	}
	struct frac scale = frac_make(vw.d, n);
	pr->steps = D;
	pr->tau_b_exact = frac_mul(sum, scale);
	pr->tau_b_exact_value = sumd * vw.d / n;
	if (o->chunks) {
		pr->tau_b = frac_mul(sumw, scale);
		pr->tau_b_value = frac_value(pr->tau_b);
	} else {
		pr->tau_b = pr->tau_b_exact;
		pr->tau_b_value = pr->tau_b_exact_value;
	}
	for (unsigned i = 0; i < vw.nworkers; i++) {
		pr->problems += vw.w[i].problems;
		pr->lps += vw.w[i].lps;
	}

	if (s) {
		/* Gather the pieces step by step in node order, freeing each
		 * chunk once copied: the schedule and the buffers hold every
		 * transfer about once between them, never twice. */
		for (uint32_t so = 0; so < D; so++) {
			uint32_t t = reverse ? D - so : so + 1;
			size_t total = 0, pos = 0;

			for (uint32_t u = 0; u < vw.nrecv; u++)
				total += vw.count[(size_t)u * D + t - 1];
			struct xfer *out = sched_append_steps(s, 1, &total);
			for (uint32_t u = 0; u < vw.nrecv; u++) {
				size_t idx = (size_t)u * D + t - 1;
				struct stepbuf *b = &vw.w[vw.owner[u]].sb[so];
				uint32_t c = (uint32_t)(vw.where[idx] >> 32);

				if (!vw.count[idx])
					continue;
				while (b->live < c)
					free(b->chunk[b->live++]);
				memcpy(out + pos, b->chunk[c] + (uint32_t)vw.where[idx],
				       vw.count[idx] * sizeof(struct xfer));
				pos += vw.count[idx];
			}
			for (unsigned i = 0; i < vw.nworkers; i++) {
				struct stepbuf *b = &vw.w[i].sb[so];

				while (b->live < b->nchunk)
					free(b->chunk[b->live++]);
			}
		}
	}
	st->seconds_generate += now_seconds() - t0;
	rc = 0;
out:
	view_free(&vw);
	return rc;
}

/* Any strongly connected digraph (view_distances checks that): a degraded
 * or irregular graph is scheduled as it is. d, which prices a step, is the
 * most links a node has: a link runs at B/d (times its rate) whatever
 * its neighbours lost. */
static int check_graph(const struct graph *g, const struct bfb_opts *o, bool full, bool reduced,
		       uint32_t *deg, struct ofc_error *err)
{
	uint32_t n = g->n, d = 0, *in;
	uint32_t most = reduced ? SCHED_REDUCED_MAX_NODES : SCHED_MAX_NODES;
	int rc = 0;

	if (n < 2)
		return ofc_error_set(err, OFC_E_INPUT, "a collective needs at least 2 nodes");
	if (n > most)
		return ofc_error_set(err, OFC_E_INPUT, "%u nodes: %sschedules have at most %u", n,
				     reduced ? "reduced " : "", most);
	if (full && n > BFB_MAX_NODES)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u nodes: BFB schedules are built for up to %u nodes", n,
				     BFB_MAX_NODES);
	in = xcalloc(n, sizeof(uint32_t));
	for (uint32_t a = 0; a < g->m; a++)
		in[g->adj[a]]++;
	for (uint32_t u = 0; u < n; u++) {
		if (graph_outdeg(g, u) > d)
			d = graph_outdeg(g, u);
		if (in[u] > d)
			d = in[u];
	}
	free(in);
	if (d > BFB_MAX_DEGREE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "degree %u: BFB handles up to %u links per node", d,
				     BFB_MAX_DEGREE);
	for (uint32_t a = 0; o->rate && a < g->m && rc == 0; a++)
		if (o->rate[a] == 0 || o->rate[a] > BFB_MAX_RATE)
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "arc %u has rate %u: BFB takes rates 1..%u (multiples "
					   "of the slowest link's)",
					   a, o->rate[a], BFB_MAX_RATE);
	if (rc == 0 && o->rate && o->chunks)
		rc = ofc_error_set(err, OFC_E_INPUT,
				   "--chunks with mixed link rates is not supported (IP (12) "
				   "assumes equal links)");
	*deg = d;
	return rc;
}

/* The figures of the phases run (reduce-scatter rs, allgather ag). */
static void phase_stats(const struct graph *g, enum sched_collective c,
			const struct phase_result *rs, const struct phase_result *ag,
			struct bfb_stats *st)
{
	struct frac zero = frac_make(0, 1);
	st->steps = rs->steps + ag->steps;
	st->tau_b = frac_add(c != SCHED_ALLGATHER ? rs->tau_b : zero,
			     c != SCHED_REDUCE_SCATTER ? ag->tau_b : zero);
	st->tau_b_value = rs->tau_b_value + ag->tau_b_value;
	st->tau_b_exact = frac_add(c != SCHED_ALLGATHER ? rs->tau_b_exact : zero,
				   c != SCHED_REDUCE_SCATTER ? ag->tau_b_exact : zero);
	st->tau_b_exact_value = rs->tau_b_exact_value + ag->tau_b_exact_value;
	st->problems = rs->problems + ag->problems;
	st->lps = rs->lps + ag->lps;
	struct frac opt = frac_mul(frac_make(cost_phases(c), 1), frac_make(g->n - 1, g->n));
	st->bw_optimal = frac_valid(st->tau_b) ? frac_cmp(st->tau_b, opt) == 0
					       : fabs(st->tau_b_value - frac_value(opt)) < 1e-9;
}

int bfb_schedule(const struct graph *g, enum sched_collective c, const struct bfb_opts *o,
		 struct schedule *s, struct bfb_stats *st, struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	struct phase_result rs = {0}, ag = {0};
	uint32_t d = 0;

	if (!o)
		o = &defaults;
	memset(st, 0, sizeof(*st));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "BFB schedules allgather, reduce-scatter and "
				     "allreduce");
	if (check_graph(g, o, s != NULL || !g->vertex_transitive, false, &d, err) < 0)
		return -1;
	if (o->inject && (!s || o->chunks || o->method == BFB_LP))
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "host injection limits are modelled for built BFB schedules of "
		    "exact fractions (bfb, not bfb-lp; no --chunks)");
	st->nodes = g->n;
	st->degree = d;
	if (s) {
		sched_init(s, c, o->method == BFB_LP ? "bfb-lp" : "bfb", g->n);
		snprintf(s->topology, sizeof(s->topology), "%s", g->spec ? g->spec : "");
	}
	if (c != SCHED_ALLGATHER && run_view(g, d, true, o, false, s, &rs, st, err) < 0)
		goto fail;
	if (c != SCHED_REDUCE_SCATTER && run_view(g, d, false, o, false, s, &ag, st, err) < 0)
		goto fail;

	if (o->inject && bfb_host_limited(g, o)) {
		/* NIC-limited hosts: each step at the busier of links and hosts. */
		struct phase_result *ph[2] = {&rs, &ag};

		for (int i = 0; i < 2; i++) {
			struct phase_result *pr = ph[i];
			struct frac sum = frac_make(0, 1);

			if (!pr->steps)
				continue;
			struct frac *u = xmalloc(pr->steps * sizeof(struct frac));
			memcpy(u, pr->step, pr->steps * sizeof(struct frac));
			if (bfb_host_phase(g, o, i == 0, s, i == 0 ? 0 : rs.steps, pr->steps,
					   pr->step, &st->host_solved, err) < 0) {
				free(u);
				goto fail;
			}
			for (uint32_t t = 0; t < pr->steps; t++) {
				sum = frac_add(sum, pr->step[t]);
				st->host_steps += frac_cmp(pr->step[t], u[t]) > 0;
			}
			free(u);
			pr->tau_b = pr->tau_b_exact = frac_mul(sum, frac_make(d, g->n));
			pr->tau_b_value = pr->tau_b_exact_value = frac_value(pr->tau_b);
		}
	}
	free(rs.step);
	free(ag.step);
	rs.step = ag.step = NULL;

	phase_stats(g, c, &rs, &ag, st);
	return 0;
fail:
	free(rs.step);
	free(ag.step);
	if (s)
		sched_free(s);
	return -1;
}

int bfb_reduced(const struct graph *g, const struct sched_group *G, enum sched_collective c,
		const struct bfb_opts *o, struct sched_reduced *r, struct bfb_stats *st,
		struct ofc_error *err)
{
	static const struct bfb_opts defaults = {0};
	struct phase_result rs = {0}, ag = {0};
	struct sched_group grp = *G; /* G may be &r->group */
	uint32_t d = 0;

	if (!o)
		o = &defaults;
	G = &grp;
	memset(st, 0, sizeof(*st));
	memset(r, 0, sizeof(*r));
	if (c != SCHED_ALLGATHER && c != SCHED_REDUCE_SCATTER && c != SCHED_ALLREDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "BFB schedules allgather, reduce-scatter and "
				     "allreduce");
	if (o->rate || o->inject)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced BFB schedule takes every link and host alike (no "
				     "link rates or injection limits)");
	if (G->nodes != g->n || G->reps != 1)
		return ofc_error_set(err, OFC_E_INPUT, "the group has %u elements, %s %u nodes",
				     G->order, g->spec ? g->spec : "the topology", g->n);
	if (check_graph(g, o, false, true, &d, err) < 0)
		return -1;
	st->nodes = g->n;
	st->degree = d;
	r->group = *G;
	sched_init(&r->prog, c, o->method == BFB_LP ? "bfb-lp" : "bfb", g->n);
	snprintf(r->prog.topology, sizeof(r->prog.topology), "%s", g->spec ? g->spec : "");
	if ((c != SCHED_ALLGATHER && run_view(g, d, true, o, true, &r->prog, &rs, st, err) < 0) ||
	    (c != SCHED_REDUCE_SCATTER &&
	     run_view(g, d, false, o, true, &r->prog, &ag, st, err) < 0)) {
		sched_reduced_free(r);
		return -1;
	}
	phase_stats(g, c, &rs, &ag, st);
	return 0;
}

uint64_t bfb_memory_estimate(uint32_t n, enum sched_collective c)
{
	uint64_t cells = (uint64_t)n * n, phases = c == SCHED_ALLREDUCE ? 2 : 1;
	bool reduce = c != SCHED_ALLGATHER;

	/* The verifier's table: a bit per (node, block), or for reductions
	 * 16 bytes per (node, shard), and a list for each entry BFB's shares
	 * cut (few: the 1/8 is slack for them). */
	return phases * (cells - n) * BFB_BYTES_PER_XFER + cells * sizeof(uint16_t) +
	       (reduce ? cells * 16 + cells / 8 : cells / 8);
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
	uint32_t ng = group_sources(&w, 0, m);
	for (uint32_t g = 0; g < ng; g++)
		single &= w.groups[g].nl == 1;
	if (solve_value(&vw, &w, ng, m, d, single, c, k, &ulp) < 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "%s", w.why);
	worker_free(&w);
	return rc;
}
