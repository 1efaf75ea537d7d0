/* Private to bfb/: a worker's scratch and the view of the graph its
 * problems are solved on, which bfb.c (the schedule) builds and
 * bfb_solve.c (each receiver's problems) fills; one problem on its own and
 * the NIC-limited hosts' pricing (bfb_host.c), which the white-box unit
 * tests call too. */
#ifndef OFC_BFB_INTERNAL_H
#define OFC_BFB_INTERNAL_H

#include "bfb/bfb.h"

/* One (u, t) problem of LP (3) on its own: m sources, masks[i] the in-links
 * (bit k = in-link k of d) that may carry source i, rate[k] the links' rates
 * (LP (13); NULL: all 1). U* = *c / *k, reduced. */
int bfb_solve_node(uint32_t m, const uint64_t *masks, uint32_t d, const uint32_t *rate,
		   enum bfb_method method, uint64_t *c, uint64_t *k, struct ofc_error *err);

/* BFB with NIC-limited hosts (bfb_host.c): whether o->inject can bind on
 * g (some host below the rate of its out-links), and one phase of a built
 * BFB schedule (steps first .. first + D - 1 of s; reverse: reduce-scatter)
 * priced, and its allgather steps solved again where the limit binds.
 * step[so] holds U* of schedule step first + so and becomes its cost. */
bool bfb_host_limited(const struct graph *g, const struct bfb_opts *o);
int bfb_host_phase(const struct graph *g, const struct bfb_opts *o, bool reverse,
		   struct schedule *s, uint32_t first, uint32_t D, struct frac *step,
		   uint32_t *solved, struct ofc_error *err);

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

/* A worker's pieces of one step, in chunks: a (u, t) problem's pieces lie
 * in one chunk, and chunks fill in the order the worker takes nodes
 * (ascending), so gathering a step in node order frees them as it goes. */
struct stepbuf {
	struct xfer **chunk;
	uint32_t nchunk, cap_chunk;
	uint32_t used, size; /* of the last chunk */
	uint32_t live;	     /* gathering: chunks below this are freed */
};

/* Pieces written one at a time, in order (a patch's planned blocks: one
 * buffer a worker and step), in chunks of PIECEBUF_XFERS, each full but
 * the last, and gathered after a step's receivers (bfb_view_gather), each
 * chunk freed once copied: the pieces are written twice in all, here and
 * in the schedule. */
/* 320 KiB: the case's peak was 7 MB lower than with 4,096 pieces, and
 * 65,536 (an mmap each) faulted 6,000 more pages */
#define PIECEBUF_XFERS 16384u
struct piecebuf {
	struct xfer **chunk;
	uint32_t nchunk, cap_chunk;
	uint32_t used; /* of the last chunk */
};

/* Room for one more piece at the end of b. */
void piecebuf_grow(struct piecebuf *b);
static inline struct xfer *piecebuf_put(struct piecebuf *b)
{
	if (!b->nchunk || b->used == PIECEBUF_XFERS)
		piecebuf_grow(b);
	return &b->chunk[b->nchunk - 1][b->used++];
}

static inline size_t piecebuf_count(const struct piecebuf *b)
{
	return b->nchunk ? (size_t)(b->nchunk - 1) * PIECEBUF_XFERS + b->used : 0;
}

/* b's chunks freed, b empty again. */
void piecebuf_free(struct piecebuf *b);

struct worker {
	uint32_t *src; /* the sources of u, by distance */
	uint64_t *mask;
	uint16_t *tight; /* n: each source's candidate in-links (16 or fewer), on first use */
	uint8_t *mark;	 /* n: each source's healthy in-link (bfb_solve's marks) */
	uint64_t *bkey;	 /* n: each source's base key (view.base_keys), on first use */
	uint32_t *tstart, *tcur; /* D + 2 */
	uint32_t *gid, *order;
	/* the problem's sources, grouped: order, or src + lo where collect
	 * grouped them already (keyed) */
	const uint32_t *ord;
	/* keyed (u has few links, its keys few): collect sorts the sources
	 * by key t << deg | candidate set, the keys of each distance t in the
	 * order first seen (kgl from t << deg, tcur[t] of them), so src is
	 * grouped already and group_sources reads kcnt */
	bool keyed;
	uint32_t *kcnt, *kpos; /* per key: its sources, the next one's place */
	uint16_t *kgl;
	size_t kcap;
	struct group *groups;
	uint32_t *gdir; /* group_sources' table by mask (few links), all free between */
	uint64_t *hkey;
	uint32_t *hval;
	size_t hcap;
	uint32_t *gl_link;
	int64_t *gl_flow;
	uint32_t *gl_kept; /* with marks: the group's sources marked kept on each link */
	size_t cap_gl;
	uint64_t *subset;      /* 2^SUBSET_MAX counters, allocated on first use */
	uint32_t *subset_rate; /* r(K) of every subset K, likewise */
	struct flow_net net;   /* source, groups, links, sink */
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
	/* with healthy: sources sent whole over a link the problem keeps,
	 * and of them those kept there (not written) */
	uint64_t marked, kept;
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
	uint32_t nrecv;	       /* receivers to process: n, or 1 (vertex-transitive figures) */
	const uint32_t *recv;  /* NULL: receiver i is node i; else recv[i] (a patch's region) */
	const uint8_t *absent; /* a patch's failed hosts: no sources (NULL: none) */
	/* A patch's whole solve (bfb/patch.c), on the degraded graph: each
	 * arc's port in the healthy graph (NULL: g's own), and whether a
	 * source's k pieces at receiver u, schedule step `so` of the view,
	 * are the healthy program's translate, which the patch need not hold
	 * (NULL: every piece kept). Asked, on the solving thread, of a
	 * source the healthy program holds in parts once its pieces are
	 * written; one it sends whole is told by base_keys below first. */
	const uint16_t *lane;
	bool (*healthy)(const void *ctx, uint32_t u, uint32_t so, const struct xfer *x, size_t k);
	/* With healthy: the healthy program's one piece of each block v[i]
	 * (i < cnt) at u in the view's phase where it sends it whole (else
	 * UINT64_MAX), into key[i], as a key that whole_key gives a whole
	 * piece x at step `so` exactly when healthy would say x is that
	 * piece. A source's healthy in-link is then found once a problem
	 * (bfb_solve's marks), not tried a link at a time; the problem's
	 * sources asked in one call (one a source was a tenth of the whole
	 * nodes' solve at 8,192 nodes). */
	void (*base_keys)(const void *ctx, uint32_t u, bool reduce, const uint32_t *v, uint32_t cnt,
			  uint64_t *key);
	uint64_t (*whole_key)(const void *ctx, uint32_t u, uint32_t so, const struct xfer *x);
	const void *healthy_ctx;
	/* A patch's whole solve: step t's largest U* over the receivers,
	 * step_c[t - 1] / step_k[t - 1] (NULL: each node's own), up to which
	 * each may load its links there: the step costs that anyway, and the
	 * room keeps more of its sources on their healthy links. */
	const uint64_t *step_c, *step_k;
	/* BUILD, per (u, t) at index u * D + t - 1: u's pieces at step t are
	 * count pieces of w[owner[u]].sb[so], chunk where >> 32 from where's
	 * low half */
	uint32_t *count, *owner;
	uint64_t *where;
	struct worker *w;
	unsigned nworkers;
};

/* bfb_solve.c: receiver ui's problems (u, t) for every step t, on worker
 * wid (a parallel_for item over vw, a struct view); a worker's scratch
 * freed. */
void bfb_solve_receiver(void *vw, size_t ui, unsigned wid);

/* bfb.c: a view's in-links, workers and release; the pieces its
 * receivers' problems wrote, gathered into s step by step (BUILD). */
void bfb_view_links(struct view *vw);
/* BFS over g from s into row (distances from s, TOPO_UNREACHABLE beyond). */
void bfb_bfs_row(const struct graph *g, uint32_t s, uint16_t *row, uint32_t *queue);
/* g's arcs by head: in_arc[in_off[v] .. in_off[v + 1]) are the arcs into v
 * (both xmalloc'd; the caller frees them). */
void bfb_in_arcs(const struct graph *g, uint32_t **in_off, uint32_t **in_arc);
void bfb_view_free(struct view *vw);
void bfb_workers_init(struct view *vw);
/* The pieces the view's receivers wrote, into s step by step (BUILD;
 * a view of no receivers, D, reverse and o set, gathers the tail alone),
 * each step so's tail after them: tail[k * D + so] for k < ntail, in k's
 * order, each emptied as it is copied (NULL: none). The schedule's room
 * for the D steps is made once. */
void bfb_view_gather(struct view *vw, struct schedule *s, struct piecebuf *tail, unsigned ntail);
void bfb_worker_free(struct worker *w);

#endif
