/* Symmetry-reduced schedules (see sched.h): the translation group of a
 * Cayley family, a program of orbit representatives, its expansion, and
 * the verifier by symmetry.
 *
 * Why the check by symmetry is the explicit one: the schedule is invariant
 * under G and so is the start (node u holds its own block, or its input to
 * every shard), so by induction over the steps the state is too: node v
 * holds block b (or part of it) exactly when node 0 holds b - v. Each
 * orbit of transfers has exactly one member into node 0 (G acts regularly
 * on the nodes), the translate by -dst; and exactly one out of node 0 on
 * port j for every orbit whose transfers use port j, so the load on any
 * arc of port j in a step is the program's load on port j. Reductions need
 * weights G leaves alone: the input of node u to shard k weighs W(k - u),
 * so the (count, weight-sum) pair of node v's shard k is that of node 0's
 * shard k - v, and for a fixed shard the N inputs still have N independent
 * random weights, which is what catches an input folded in twice or
 * missed. Under a subgroup H (translations by multiples of step[i]) the
 * same holds orbit by orbit: node rep + h is its representative's state
 * moved by h, the reps representatives are tracked, an input weighs
 * W(rep(u), k - u), and loads are per (representative, port). */
#include "sched/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the group ------------------------------------------------------------------- */

static void group_dims(struct sched_group *G, const uint32_t *radix, uint32_t k)
{
	uint32_t stride = 1;
	bool same = true;

	G->ndims = k;
	G->binary = true;
	G->pow2 = true;
	G->reps = 1;
	for (uint32_t i = 0; i < k; i++) {
		G->radix[i] = radix[i];
		G->step[i] = 1;
		G->stride[i] = stride;
		G->shift[i] = (uint8_t)__builtin_ctz(stride);
		G->pow2 = G->pow2 && radix[i] && (radix[i] & (radix[i] - 1)) == 0;
		stride *= radix[i];
		G->binary = G->binary && radix[i] == 2;
		same = same && radix[i] == radix[0];
	}
	G->order = G->nodes = stride;
	if (k > 1 && same) {
		snprintf(G->name, sizeof(G->name), "Z_%u^%u", radix[0], k);
		return;
	}
	size_t len = 0;
	G->name[0] = 0;
	for (uint32_t i = 0; i < k && len < sizeof(G->name); i++)
		len += (size_t)snprintf(G->name + len, sizeof(G->name) - len, "%sZ_%u",
					i ? " x " : "", radix[i]);
}

void sched_group_make(struct sched_group *G, const uint32_t *radix, uint32_t k)
{
	memset(G, 0, sizeof(*G));
	group_dims(G, radix, k < SCHED_GROUP_MAX_DIMS ? k : SCHED_GROUP_MAX_DIMS);
}

int sched_group_of(const struct graph *g, const struct topo_tree *t, struct sched_group *G,
		   struct ofc_error *err)
{
	uint32_t radix[SCHED_GROUP_MAX_DIMS], k = 0;
	const char *name = t ? t->name : "";

	memset(G, 0, sizeof(*G));
	if (!t || t->op != TOPO_FAMILY)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s is not a family with a translation group (torus, "
				     "hypercube, circulant, ring, biring, complete, hamming, "
				     "bipartite)",
				     g->spec ? g->spec : "the topology");
	if (strcmp(name, "torus") == 0) {
		for (k = 0; k < t->nparams && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = t->params[k];
	} else if (strcmp(name, "hypercube") == 0 && t->nparams == 1) {
		for (k = 0; k < t->params[0] && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = 2;
	} else if ((strcmp(name, "circulant") == 0 || strcmp(name, "ring") == 0 ||
		    strcmp(name, "biring") == 0 || strcmp(name, "complete") == 0) &&
		   t->nparams >= 1) {
		radix[k++] = t->params[0];
	} else if (strcmp(name, "hamming") == 0 && t->nparams == 2) {
		for (k = 0; k < t->params[0] && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = t->params[1];
	} else if (strcmp(name, "bipartite") == 0 && t->nparams == 1) {
		radix[k++] = t->params[0];
		radix[k++] = 2;
	} else {
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %s graphs have no translation group here (torus, "
				     "hypercube, circulant, ring, biring, complete, hamming, "
				     "bipartite)",
				     g->spec ? g->spec : "the topology", name);
	}
	uint64_t order = 1;
	for (uint32_t i = 0; i < k; i++)
		order *= radix[i] ? radix[i] : 1;
	if (order != g->n)
		return ofc_error_set(
		    err, OFC_E_INPUT, "%s: the group would have %llu elements for %u nodes",
		    g->spec ? g->spec : "the topology", (unsigned long long)order, g->n);
	group_dims(G, radix, k);

	/* The Cayley condition, port by port: port j of u leads to u + s_j. */
	uint32_t d = graph_outdeg(g, 0);
	const uint32_t *s = graph_out(g, 0);
	for (uint32_t u = 0; u < g->n; u++) {
		if (graph_outdeg(g, u) != d)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s is not regular (node %u has %u links, node 0 %u)",
					     g->spec, u, graph_outdeg(g, u), d);
		const uint32_t *out = graph_out(g, u);
		for (uint32_t j = 0; j < d; j++)
			if (out[j] != sched_group_add(G, u, s[j]))
				return ofc_error_set(err, OFC_E_INPUT,
						     "%s: port %u of node %u leads to %u, not to "
						     "%u + %u: the translations of %s do not keep "
						     "ports",
						     g->spec, j, u, out[j], u, s[j], G->name);
	}
	return 0;
}

int sched_group_restrict(struct sched_group *G, const uint32_t *step, struct ofc_error *err)
{
	uint32_t reps = 1;
	bool same = true;
	size_t len = 0;

	for (uint32_t i = 0; i < G->ndims; i++) {
		if (!step[i] || G->radix[i] % step[i])
			return ofc_error_set(err, OFC_E_INPUT,
					     "a step of %u does not divide the dimension %u",
					     step[i], G->radix[i]);
		reps *= step[i];
		same = same && step[i] == step[0] && G->radix[i] == G->radix[0];
	}
	G->even = true;
	for (uint32_t i = 0; i < G->ndims; i++) {
		G->step[i] = step[i];
		G->binary = G->binary && step[i] == 1;
		G->even = G->even && step[i] == 2;
	}
	G->reps = reps;
	G->order = G->nodes / reps;
	if (G->ndims > 1 && same) {
		snprintf(G->name, sizeof(G->name), "(%uZ_%u)^%u", step[0], G->radix[0], G->ndims);
		return 0;
	}
	G->name[0] = 0;
	for (uint32_t i = 0; i < G->ndims && len < sizeof(G->name); i++)
		len += (size_t)snprintf(G->name + len, sizeof(G->name) - len, "%s%uZ_%u",
					i ? " x " : "", step[i], G->radix[i]);
	return 0;
}

uint32_t sched_group_element(const struct sched_group *G, uint32_t e)
{
	uint32_t v = 0;

	if (G->reps == 1)
		return e;
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t m = G->radix[i] / G->step[i];

		v += (e % m) * G->step[i] * G->stride[i];
		e /= m;
	}
	return v;
}

uint32_t sched_group_split(const struct sched_group *G, uint32_t v, uint32_t *h)
{
	uint32_t idx = 0, rs = 1;

	if (G->reps == 1) {
		*h = v;
		return 0;
	}
	*h = 0;
	if (G->pow2 && G->even) { /* Swing's subgroup: a coordinate's low bit */
		for (uint32_t i = 0; i < G->ndims; i++)
			idx |= (v >> G->shift[i] & 1) << i;
		*h = v - sched_group_rep_node(G, idx);
		return idx;
	}
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t x = (v / G->stride[i]) % G->radix[i], rx = x % G->step[i];

		idx += rx * rs;
		rs *= G->step[i];
		*h += (x - rx) * G->stride[i];
	}
	return idx;
}

uint32_t sched_group_rep_node(const struct sched_group *G, uint32_t i)
{
	uint32_t v = 0;

	for (uint32_t k = 0; k < G->ndims && G->reps > 1; k++) {
		v += (i % G->step[k]) * G->stride[k];
		i /= G->step[k];
	}
	return v;
}

/* ---- the program and its expansion ---------------------------------------------- */

void sched_reduced_free(struct sched_reduced *r)
{
	sched_free(&r->prog);
	memset(r, 0, sizeof(*r));
}

struct xfer sched_reduced_move(const struct sched_reduced *r, const struct xfer *x, uint32_t g)
{
	const struct sched_group *G = &r->group;
	struct xfer y = *x;

	y.src = (uint16_t)sched_group_add(G, x->src, g);
	y.dst = (uint16_t)sched_group_add(G, x->dst, g);
	if (r->prog.collective == SCHED_ALLTOALL) {
		uint32_t n = G->nodes, o = x->block / n, t = x->block % n;

		y.block = sched_group_add(G, o, g) * n + sched_group_add(G, t, g);
	} else {
		y.block = sched_group_add(G, x->block, g);
	}
	return y;
}

int sched_reduced_expand(const struct sched_reduced *r, struct schedule *s, struct ofc_error *err)
{
	const struct schedule *p = &r->prog;
	uint32_t n = r->group.nodes, order = r->group.order;

	if (n > SCHED_MAX_NODES || p->nodes != n)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "%u nodes: an explicit schedule has at most %u (program of %u)", n,
		    SCHED_MAX_NODES, p->nodes);
	if (sched_reduced_transfers(r) >= UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%llu transfers: too many for an explicit schedule",
				     (unsigned long long)sched_reduced_transfers(r));
	sched_init(s, p->collective, p->algorithm, n);
	snprintf(s->topology, sizeof(s->topology), "%s", p->topology);
	s->size_bytes = p->size_bytes;
	s->root = p->root;
	for (uint32_t t = 0; t < p->nsteps; t++) {
		size_t k = sched_step_size(p, t), count = 0;
		/* (an empty program has no array: no offset on NULL) */
		const struct xfer *in = k ? p->xfers + p->step_start[t] : NULL;

		for (size_t i = 0; i < k; i++)
			count += xfer_blocks(&in[i]);
		count *= order;
		if (!count) { /* an empty step (and no array to point into yet) */
			sched_step(s);
			continue;
		}
		struct xfer *out = sched_append_steps(s, 1, &count);

		/* A span is cut into its blocks: a translate of consecutive
		 * blocks need not be consecutive. A block past the last is
		 * left as it is, for the check to refuse. */
		for (uint32_t e = 0; e < order; e++) {
			uint32_t g = sched_group_element(&r->group, e);

			for (size_t i = 0; i < k; i++) {
				struct xfer x = in[i];
				uint32_t nb = xfer_blocks(&x);

				x.flags = xfer_span_flags(x.flags, 0);
				for (uint32_t j = 0; j < nb; j++, x.block++) {
					*out = sched_reduced_move(r, &x, g);
					if (p->collective != SCHED_ALLTOALL && x.block >= n)
						out->block = x.block;
					out++;
				}
			}
		}
	}
	return 0;
}

/* ---- the verifier by symmetry ------------------------------------------------------ */

/* The most pieces a program may cut a shard into for the reduce state's
 * fixed slots (16 bytes each): 8 keeps an entry within the 176 bytes a
 * cell the memory estimate allows for (controller/schedule/direct.c). */
#define GRID_MAX_PIECES 8
#define GRID_REDUCE	(1u << 31)
#define GRID_SLOT	((1u << 29) - 1)
#define GRID_AHEAD	16 /* deliveries prefetched ahead */

struct rdeliv {
	uint64_t block; /* rep * N + block (all-to-all: rep * N^2 + block) */
	uint32_t lo, hi;
	uint32_t count;
	uint64_t hash;
	uint8_t op;
};

struct rstate {
	const struct sched_reduced *r;
	const struct verify_opts *o;
	struct verify_report *rep;
	uint32_t n, reps;
	unsigned lgn; /* log2 n when n is a power of two, else 0 */
	/* G regular of powers of two: the top bit of every coordinate of a
	 * block (o, t), o N + t, else 0. Then (o - h) N + (t - h) is one
	 * subtraction without borrows between the coordinates (the SWAR
	 * subtraction: Hacker's Delight, 2nd ed., section 2-18). */
	uint64_t swar;
	/* G of powers of two (not XOR): the top bit of every coordinate of
	 * a node, for the same subtraction on nodes (sub), which check_xfer
	 * does twice a transfer: a loop over the coordinates was a fifth of
	 * torus:16x16x16x16's check. */
	uint32_t high;
	bool reduce;
	/* State of the representatives (node 0 alone when G is regular), entry
	 * rep * N + block. */
	uint64_t *full;	      /* copy: blocks held whole */
	struct seglist *part; /* copy: coverage of the others; reduce: pieces (np 0) */
	uint64_t *total;      /* reduce, per class of shard: the weight of all N inputs */
	struct rdeliv *dl;
	size_t ndl, cap_dl;
	/* Reduce mode when the program cuts shards at few places (Swing's
	 * 2D collectives each carry 1/2D of every shard, a bidirectional
	 * ring halves, BFB one per port): the pieces between consecutive cuts
	 * (cut[0] = 0 .. cut[np] = SCHED_ONE), np slots an entry, in `slot`
	 * instead of `part`: slot j of entry rep * N + shard at j * cells +
	 * entry. A shard is then fixed slots read and folded in place: no
	 * list to follow (a cache miss a transfer) nor to rebuild
	 * (seglist_fold's copy). Slot by slot, because a transfer carries one
	 * piece (a Swing collective's), whose slots over all entries (16 MiB
	 * at torus:16x16x16x16) stay in the cache while its collective's
	 * transfers run, where an entry's eight pieces side by side made
	 * every transfer fetch a line for 16 bytes of it. A slot may equal
	 * its neighbour where a list would have merged them, which no check
	 * sees: each reads the hash at every point of a shard. np 0: more
	 * cuts than GRID_MAX_PIECES, the lists.
	 *
	 * A slot is one word: the sum of its inputs' weights mod 2^48 in the
	 * top 48 bits (a fold adds the sender's word without its mark), and
	 * a mark in the low 16 (SLOT_MARK): the stamp of the step that last
	 * read it (deliver_slots) or wrote it (at_once). The weights are
	 * random, so the sum alone tells every input once from anything else
	 * (a count beside it doubled the slots: 134 MB for bandwidth-optimal
	 * Swing on torus:16x16x16x16, most of its check's time on this VM's
	 * fresh memory). */
	struct rslot {
		uint64_t w;
	} * slot;
	uint32_t np, cut[GRID_MAX_PIECES + 1], cells;
	/* Copy mode alike (a bidirectional ring's halves, a share per port):
	 * the pieces between the cuts a cell holds, bit j piece j, in `mask`
	 * instead of `part` (a list, and a cache miss, a transfer); cnp 0:
	 * too many cuts, the lists. The pieces [lo, hi) covers, last asked. */
	uint8_t *mask;
	uint32_t cnp;
	/* The last [lo, hi) either mode looked up: its pieces grid_a .. grid_b - 1. */
	uint32_t grid_lo, grid_hi, grid_a, grid_b;
	/* A step's reads after its checks: m slots from src on (m - 1 in the
	 * top 3 bits) to dst's (GRID_REDUCE: folded in), a plane apart. */
	struct gread {
		uint32_t src, dst;
	} * rd;
	size_t nrd, cap_rd;
	/* And its deliveries to slots it reads, which wait for the end of the
	 * step, one a slot: `at` is slot * cells + entry, and GRID_REDUCE when
	 * it folds in (else it overwrites). */
	struct gdeliv {
		uint32_t at;
		uint64_t w; /* the sender's slot */
	} * gdl;
	size_t ngdl, cap_gdl;
	/* Deliveries at once, in transfer order, each slot written stamped
	 * with the step: right while no transfer reads a slot an earlier one
	 * of its step wrote (`clash`, and the check starts again with the
	 * read lists). Bandwidth-optimal Swing and BFB's reductions never
	 * do: each step a node sends what it no longer folds into. */
	bool at_once, clash;
	/* A step of spans each within one piece, piece after piece
	 * (span_planes): each piece's plane is copied to `snap` before its
	 * first span, and its spans read the copy and fold in place, block
	 * after block, with no read and delivery lists. */
	bool plane_step;
	uint32_t snap_plane; /* the plane in snap (UINT32_MAX: none yet this step) */
	struct rslot *snap;  /* cells slots */
	/* The pieces checked by their spans' sums (span_pieces), bit j piece
	 * j, and per representative the ones it ends without every input
	 * once (span_sums). */
	uint8_t sums, *sums_bad;
	uint64_t *port_load;  /* node 0's ports, this step */
	uint64_t *port_total; /* and over all steps */
	uint32_t *run_to;     /* port j, k + 1 arcs from node 0: [j * SCHED_MAX_RUN + k] */
	/* check_xfer's last sender [0] and receiver [1] split by the group
	 * (node, its representative, the translation): a run of blocks to a
	 * peer (a latency-optimal Swing step, p of them) shares them. */
	uint32_t split_node[2], split_rep[2], split_h[2];
	double dup;
	/* All-to-all: the blocks (o, t) a representative r holds besides its
	 * own, key r * N^2 + o * N + t -> what it holds of it (whole, or the
	 * interval list). */
	/* All-to-all: the first failure a2a_sorted found, for the step loop to
	 * report where it stands. */
	struct a2a_failure {
		enum a2a_at { A2A_NONE, A2A_AT_CHECK, A2A_AT_DELIVERY, A2A_AT_END } at;
		uint32_t step;
		size_t xi;
		uint32_t origin, me;
	} afail;
};

static int rfail(struct rstate *v, uint32_t step, size_t xi, const char *fmt, ...) OFC_PRINTF(4, 5);
static int rfail(struct rstate *v, uint32_t step, size_t xi, const char *fmt, ...)
{
	const struct schedule *p = &v->r->prog;
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	v->rep->ok = false;
	v->rep->bad_step = step;
	v->rep->bad_xfer = xi;
	if (xi < p->nxfers) {
		const struct xfer *x = &p->xfers[xi];

		snprintf(v->rep->error, sizeof(v->rep->error),
			 "step %u, transfer %u -> %u of block %u [%.6g, %.6g) and its "
			 "translates: %s",
			 step + 1, x->src, x->dst, x->block, sched_frac(x->offset),
			 sched_frac(x->offset) + sched_frac(x->length), what);
	} else {
		snprintf(v->rep->error, sizeof(v->rep->error), "%s", what);
	}
	return -1;
}

/* The representative, its node, and the origin / target of a key r N^2 +
 * o N + t (by shifts when N is a power of two: these run per transfer). */
static uint32_t key_class(const struct rstate *v, uint64_t key)
{
	return (uint32_t)(v->lgn ? key >> 2 * v->lgn : key / ((uint64_t)v->n * v->n));
}

static uint32_t key_rep(const struct rstate *v, uint64_t key)
{
	return sched_group_rep_node(&v->r->group, key_class(v, key));
}

static uint32_t key_origin(const struct rstate *v, uint64_t key)
{
	return (uint32_t)(v->lgn ? (key >> v->lgn) & (v->n - 1) : key / v->n % v->n);
}

static uint32_t key_target(const struct rstate *v, uint64_t key)
{
	return (uint32_t)(v->lgn ? key & (v->n - 1) : key % v->n);
}

/* ---- the all-to-all by sorting --------------------------------------------------
 * What a representative holds of a block (o, t) is keyed r N^2 + o N + t
 * as it sees it, one key per program transfer's delivery: a check by
 * lookups is a cache miss per transfer (a hash of millions of keys), where
 * generation writes in order. So the transfers become events, a read (the
 * sender must hold the piece at the start of its step) and a write (the
 * receiver holds it after), emitted step by step, the step's reads before
 * its writes; sorted by key with that order kept within a key, one pass
 * over each key's events checks every read against the writes before it.
 *
 * An event is one 8-byte word: events of 20 bytes (key, transfer, piece)
 * and the second array of an LSD sort were 2 GB at torus:256x256, and
 * most of the check's time was the kernel zeroing their fresh pages. The
 * key's high bits pick a bucket (a counting pass, then the events written
 * straight into their buckets in emission order, which each bucket so
 * keeps); the word holds the key's low bits (on top, what the sort
 * reads), the piece's number when the program has few distinct pieces
 * (a path's piece is the same at every hop: 8 at torus:256x256), and the
 * transfer; each bucket is sorted (stable LSD, its scratch in cache) and
 * checked on its own. Without piece numbers the check reads the piece
 * back from the transfer, a cache miss each. */
enum {
	A2A_BUCKET_EVENTS = 1 << 14, /* a bucket and its scratch in L2 */
};

struct a2a_sort {
	unsigned shift;		  /* key = bucket << shift | low bits (the word's top shift bits) */
	unsigned xbits;		  /* transfer << 1 | write: the word's low xbits */
	size_t nbuckets;	  /* up to (maxkey - 1) >> shift */
	size_t *start;		  /* bucket b's events start[b] .. start[b + 1] - 1 */
	uint64_t *ev;		  /* the words */
	struct piece_numbers num; /* between transfer and key */
};

/* The key's low bits in a word. */
static uint64_t ev_low(const struct a2a_sort *s, uint64_t w)
{
	return s->shift ? w >> (64 - s->shift) : 0;
}

/* Transfer x's read at its sender (write: its write at its receiver) as a
 * key; false when there is no event: a transfer check_xfer rejects, or a
 * node's own block (written back to it: a duplicate, counted once, by the
 * counting pass). */
static bool a2a_ev_key(struct rstate *v, const struct xfer *x, bool write, bool count,
		       uint64_t *key)
{
	const struct sched_group *G = &v->r->group;
	uint32_t n = v->n, u = write ? x->dst : x->src, h = u, r = 0, o;

	if (x->src >= n || x->dst >= n || x->src == x->dst || x->block >= (uint64_t)n * n ||
	    x->length == 0 || (uint64_t)x->offset + x->length > SCHED_ONE)
		return false; /* check_xfer's to report */
	/* Node u's block (o, t) as its representative r sees it: r N^2 + (o -
	 * h) N + (t - h), u = r + h. */
	if (v->swar) { /* both subtractions at once */
		uint64_t a = x->block, b = (uint64_t)u * (n + 1);

		*key = ((a | v->swar) - (b & ~v->swar)) ^ ((a ^ ~b) & v->swar);
		o = (uint32_t)(*key >> v->lgn);
		if (o) /* the representative is node 0 */
			return true;
	} else {
		if (G->reps > 1)
			r = sched_group_split(G, u, &h);
		o = sched_group_sub(G, v->lgn ? x->block >> v->lgn : x->block / n, h);
		*key = ((uint64_t)r * n + o) * n +
		       sched_group_sub(G, v->lgn ? x->block & (n - 1) : x->block % n, h);
	}
	if (o != sched_group_rep_node(G, r))
		return true;
	if (write && count) /* its own block back at its origin */
		v->dup += sched_frac(x->length);
	return false; /* a node holds its own blocks */
}

/* The events of the program into their buckets, each in emission order. */
static void a2a_events(struct rstate *v, struct a2a_sort *s)
{
	const struct schedule *p = &v->r->prog;
	uint64_t maxkey = (uint64_t)v->reps * v->n * v->n, key;
	unsigned keybits = 64 - (unsigned)__builtin_clzll(maxkey - 1), bbits = 0;
	size_t nev;

	/* As many buckets as fill L2 on average, and enough that the low
	 * bits fit 32 bits (the transfer takes up to 32). */
	while (bbits < keybits &&
	       (((size_t)2 * p->nxfers >> bbits) > A2A_BUCKET_EVENTS || keybits - bbits > 32))
		bbits++;
	s->shift = keybits - bbits;
	s->xbits = p->nxfers > 1 ? 65 - (unsigned)__builtin_clzll(p->nxfers - 1) : 1;
	unsigned pbits = 64 - s->shift - s->xbits;
	piece_numbers_init(&s->num, pbits);
	s->nbuckets = (size_t)((maxkey - 1) >> s->shift) + 1;
	s->start = xcalloc(s->nbuckets + 1, sizeof(size_t));
	s->ev = NULL;
	/* One bucket (a small program): every event in it, no counting. */
	int first = s->nbuckets > 1 ? 0 : 1;
	if (first)
		s->ev = xmalloc((2 * p->nxfers + 1) * sizeof(*s->ev));
	bool numbered = true;
	for (int pass = first; pass < 2; pass++) {
		for (uint32_t t = 0; t < p->nsteps; t++)
			for (int write = 0; write < 2; write++)
				for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1];
				     xi++) {
					const struct xfer *x = &p->xfers[xi];

					if (!a2a_ev_key(v, x, write, pass == first, &key))
						continue;
					size_t b = (size_t)(key >> s->shift);
					if (!pass) {
						s->start[b + 1]++;
						continue;
					}
					uint64_t w = (uint64_t)(xi << 1 | (size_t)write);
					if (numbered) {
						w |= piece_number(&s->num, x->offset,
								  x->offset + x->length)
						     << s->xbits;
						numbered = s->num.n > 0;
					}
					if (s->shift)
						w |= key << (64 - s->shift);
					s->ev[s->start[b]++] = w;
				}
		if (pass) /* start[b] went to bucket b's end, start[b + 1] */
			break;
		for (size_t b = 0; b < s->nbuckets; b++)
			s->start[b + 1] += s->start[b];
		nev = s->start[s->nbuckets];
		s->ev = xmalloc((nev ? nev : 1) * sizeof(*s->ev));
	}
	memmove(s->start + 1, s->start, s->nbuckets * sizeof(size_t));
	s->start[0] = 0;
}

/* Keep the earlier failure: by step (the end's is nsteps), then a step's
 * checks before its deliveries before the end, then transfer. */
static void a2a_keep_first(struct a2a_failure *f, struct a2a_failure c)
{
	if (f->at == A2A_NONE || c.step < f->step ||
	    (c.step == f->step && (c.at < f->at || (c.at == f->at && c.xi < f->xi))))
		*f = c;
}

static uint32_t xfer_step(const struct schedule *p, size_t xi)
{
	uint32_t lo = 0, hi = p->nsteps; /* step_start[lo] <= xi < step_start[hi] */

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->step_start[mid] <= xi)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* piece_covers and piece_add where the piece is one interval (nearly
 * always: a path's piece moves on its own), without a call per event. */
static bool held(const struct piecemap *m, const struct piece *e, uint32_t lo, uint32_t hi)
{
	return e->lo == PIECE_LIST ? piece_covers(m, e, lo, hi) : e->lo <= lo && hi <= e->hi;
}

static uint64_t hold(struct piecemap *m, struct piece *e, uint32_t lo, uint32_t hi)
{
	if (e->lo != PIECE_LIST && e->lo == e->hi) { /* empty */
		e->lo = lo;
		e->hi = hi;
		return 0;
	}
	return piece_add(m, e, lo, hi);
}

/* One key's events, ev[0 .. m - 1] in emission order: every read against
 * the writes before it, the deliveries at the target, and whether the
 * target ends with the block whole (done). */
static void a2a_check_key(struct rstate *v, const struct a2a_sort *s, uint64_t key,
			  const uint64_t *ev, size_t m, struct piecemap *lists, uint8_t *done)
{
	const struct schedule *p = &v->r->prog;
	uint32_t n = v->n, me = key_rep(v, key);
	bool at_target = key_target(v, key) == me;
	uint64_t xmask = (1ull << s->xbits) - 1, pmask = s->num.max - 1;
	struct piece e = {0};

	for (size_t i = 0; i < m; i++) {
		size_t xi = (size_t)(ev[i] & xmask) >> 1;
		uint32_t lo, hi;

		if (s->num.n) {
			const struct piece *q = &s->num.piece[(ev[i] >> s->xbits) & pmask];

			lo = q->lo;
			hi = q->hi;
		} else {
			lo = p->xfers[xi].offset;
			hi = lo + p->xfers[xi].length;
		}
		if (!(ev[i] & 1)) {
			if (!held(lists, &e, lo, hi)) {
				a2a_keep_first(&v->afail, (struct a2a_failure){
							      A2A_AT_CHECK, xfer_step(p, xi), xi});
				break;
			}
			continue;
		}
		uint64_t ov = hold(lists, &e, lo, hi);
		if (ov && at_target) {
			a2a_keep_first(&v->afail,
				       (struct a2a_failure){A2A_AT_DELIVERY, xfer_step(p, xi), xi,
							    key_origin(v, key), me});
			v->dup += sched_frac((uint32_t)ov);
			break;
		}
		v->dup += sched_frac((uint32_t)ov);
	}
	if (at_target && piece_covers(lists, &e, 0, SCHED_ONE))
		done[(size_t)key_class(v, key) * n + key_origin(v, key)] = 1;
	piece_clear(lists, &e);
	lists->nlists = 0;
}

/* Checks what every all-to-all transfer reads and writes (the transfers
 * themselves, their nodes, blocks and ports, are check_xfer's: a bad one
 * is left out here) and the final state; the first failure in step order
 * goes to v->afail, duplicates to v->dup. */
static void a2a_sorted(struct rstate *v)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	uint32_t n = v->n;
	struct a2a_sort *s = xmalloc(sizeof(*s));
	size_t most = 1;

	a2a_events(v, s);
	for (size_t b = 0; b < s->nbuckets; b++)
		most = s->start[b + 1] - s->start[b] > most ? s->start[b + 1] - s->start[b] : most;
	uint64_t *tmp = xmalloc(most * sizeof(*tmp));
	uint8_t *done = xcalloc((size_t)v->reps * n, 1);
	struct piecemap lists = {0}; /* the one key in several pieces at a time */
	for (size_t b = 0; b < s->nbuckets; b++) {
		size_t m = s->start[b + 1] - s->start[b];
		const uint64_t *ev = sched_sort_top(s->ev + s->start[b], tmp, m, s->shift);

		for (size_t i = 0, j, ahead = 0; i < m; i = j) {
			for (j = i + 1; j < m && ev_low(s, ev[j]) == ev_low(s, ev[i]); j++)
				;
			/* unnumbered pieces: the transfers some events on, a
			 * cache miss each */
			for (; !s->num.n && ahead < j + 16 && ahead < m; ahead++)
				__builtin_prefetch(
				    &p->xfers[(size_t)(ev[ahead] & ((1ull << s->xbits) - 1)) >> 1]);
			a2a_check_key(v, s, (uint64_t)b << s->shift | ev_low(s, ev[i]), ev + i,
				      j - i, &lists, done);
		}
	}
	for (uint32_t r = 0; r < v->reps && v->afail.at != A2A_AT_END; r++) {
		uint32_t me = sched_group_rep_node(G, r);

		for (uint32_t o = 0; o < n; o++)
			if (o != me && !done[(size_t)r * n + o]) {
				a2a_keep_first(&v->afail, (struct a2a_failure){
							      A2A_AT_END, p->nsteps, 0, o, me});
				break;
			}
	}
	piecemap_free(&lists);
	free(done);
	free(tmp);
	free(s->ev);
	free(s->start);
	free(s);
}

/* The step loop at (t, at, xi): where a2a_sorted's failure stands, it is
 * reported (-1). */
static int a2a_failure_at(struct rstate *v, uint32_t t, enum a2a_at at, size_t xi)
{
	const struct a2a_failure *f = &v->afail;

	if (f->at != at || f->step != t || (at == A2A_AT_CHECK && f->xi != xi))
		return 0;
	if (at == A2A_AT_CHECK)
		return rfail(v, t, xi, "node %u does not hold that data at the start of the step",
			     v->r->prog.xfers[xi].src);
	return rfail(v, t, SIZE_MAX,
		     "step %u: the block from %u delivered to its target %u twice (and every "
		     "translate alike)",
		     t + 1, f->origin, f->me);
}

/* The cuts of the program's parts of shards, sorted (cut[0] = 0, last
 * SCHED_ONE), if it has at most GRID_MAX_PIECES pieces between them: their
 * number, else 0. A part outside the shard is left to check_xfer. */
static uint32_t grid_cuts(const struct schedule *p, uint32_t *cut)
{
	uint32_t nc = 2, lo = 0, len = SCHED_ONE;

	cut[0] = 0;
	cut[1] = SCHED_ONE;
	for (size_t xi = 0; xi < p->nxfers; xi++) {
		const struct xfer *x = &p->xfers[xi];

		if (x->offset == lo && x->length == len) /* runs of one part: the last's */
			continue;
		lo = x->offset;
		len = x->length;
		uint64_t at[2] = {lo, (uint64_t)lo + len};
		for (int k = 0; k < 2; k++) {
			uint32_t i = 0;

			if (at[k] >= SCHED_ONE)
				continue;
			while (cut[i] < at[k])
				i++;
			if (cut[i] == at[k])
				continue;
			if (nc == GRID_MAX_PIECES + 1)
				return 0;
			memmove(&cut[i + 1], &cut[i], (nc - i) * sizeof(uint32_t));
			cut[i] = (uint32_t)at[k];
			nc++;
		}
	}
	return nc - 1;
}

/* The pieces [lo, hi) spans, grid_a .. grid_b - 1 (both are cuts:
 * grid_cuts took them), for the last range asked (runs of one part). */
static void grid_span(struct rstate *v, uint32_t lo, uint32_t hi)
{
	uint32_t a = 0, b;

	if (lo == v->grid_lo && hi == v->grid_hi)
		return;
	while (v->cut[a] != lo)
		a++;
	for (b = a + 1; v->cut[b] != hi; b++)
		;
	v->grid_lo = lo;
	v->grid_hi = hi;
	v->grid_a = a;
	v->grid_b = b;
}

/* The pieces of [lo, hi) in copy mode's mask. */
static uint8_t mask_of(struct rstate *v, uint32_t lo, uint32_t hi)
{
	grid_span(v, lo, hi);
	return (uint8_t)(((1u << v->grid_b) - 1) & ~((1u << v->grid_a) - 1));
}

/* Cell `cell` holds every piece of [lo, hi). */
static bool mask_covers(struct rstate *v, uint64_t cell, uint32_t lo, uint32_t hi)
{
	uint8_t bits = mask_of(v, lo, hi);

	return (v->mask[cell] & bits) == bits;
}

/* What the pieces of bits cover, in fixed point. */
static uint32_t mask_len(const struct rstate *v, uint8_t bits)
{
	uint32_t len = 0;

	for (uint32_t j = 0; j < v->cnp; j++)
		if (bits >> j & 1)
			len += v->cut[j + 1] - v->cut[j];
	return len;
}

static void push(struct rstate *v, struct rdeliv d)
{
	if (v->ndl == v->cap_dl)
		GROW(v->dl, v->cap_dl, v->ndl + 1);
	v->dl[v->ndl++] = d;
}

/* A run (sched.h): its arcs node after node to x->dst, each loading its
 * port at its node's representative (G regular: every arc of the port
 * alike, so the load is the run's length times its arcs). */
static int check_run(struct rstate *v, uint32_t t, size_t xi)
{
	const struct xfer *x = &v->r->prog.xfers[xi];
	const struct graph *g = v->o->graph;
	uint32_t deg = graph_outdeg(g, 0), u = x->src, h;

	if (x->lane == SCHED_NO_LANE)
		return rfail(v, t, xi, "a transfer over %u arcs without its port", xfer_arcs(x));
	if (x->lane >= deg)
		return rfail(v, t, xi, "node %u has no port %u", x->src, x->lane);
	if (v->reps == 1) {
		/* Port j leads every u to u + s_j: the run ends at u + (k+1) s_j. */
		v->port_load[x->lane] += (uint64_t)x->length * xfer_arcs(x) * xfer_blocks(x);
		u = sched_group_add(&v->r->group, u, v->run_to[x->lane * SCHED_MAX_RUN + x->run]);
	}
	for (uint32_t k = 0; v->reps > 1 && k < xfer_arcs(x); k++) {
		v->port_load[(size_t)sched_group_split(&v->r->group, u, &h) * deg + x->lane] +=
		    (uint64_t)x->length * xfer_blocks(x);
		u = g->adj[g->off[u] + x->lane];
	}
	if (u != x->dst)
		return rfail(v, t, xi, "%u arcs on port %u from node %u end at node %u, not %u",
			     xfer_arcs(x), x->lane, x->src, u, x->dst);
	return 0;
}

/* sched_group_sub(G, a, b), coordinates at once when v->high says where
 * they are (Hacker's Delight, 2nd ed., section 2-18: the top bit of each
 * set in the minuend and cleared in the subtrahend, no borrow crosses a
 * coordinate; the last term puts the top bits right). */
static __attribute__((noinline)) uint32_t sub_slow(const struct rstate *v, uint32_t a, uint32_t b)
{
	return sched_group_sub(&v->r->group, a, b);
}

/* a - b by the top bits `high` of the coordinates (v->high). */
static inline uint32_t swar_sub(uint32_t high, uint32_t a, uint32_t b)
{
	return ((a | high) - (b & ~high)) ^ ((a ^ ~b) & high);
}

/* Inline, its slow path not (the compiler kept the whole a call). */
static inline uint32_t sub(const struct rstate *v, uint32_t a, uint32_t b)
{
	if (!v->high)
		return sub_slow(v, a, b);
	return swar_sub(v->high, a, b);
}

/* sched_group_split of node u as check_xfer's sender (k 0) or receiver (1). */
static uint32_t split_cached(struct rstate *v, int k, uint32_t u, uint32_t *h)
{
	if (v->split_node[k] != u) {
		v->split_node[k] = u;
		v->split_rep[k] = sched_group_split(&v->r->group, u, &v->split_h[k]);
	}
	*h = v->split_h[k];
	return v->split_rep[k];
}

#define SLOT_MARK 0xffffull

/* Step t's stamp, 1 .. 65535 (a mark 0 is no step's; the marks are
 * cleared when the stamps come round: clear_marks). */
static uint64_t stamp(uint32_t t)
{
	return t % SLOT_MARK + 1;
}

static void clear_marks(struct rstate *v)
{
	for (size_t i = 0; i < (size_t)v->cells * v->np; i++)
		v->slot[i].w &= ~SLOT_MARK;
}

static uint64_t slot_mark(const struct rslot *sl)
{
	return sl->w & SLOT_MARK;
}

static void slot_set_mark(struct rslot *sl, uint64_t m)
{
	sl->w = (sl->w & ~SLOT_MARK) | m;
}

/* Folds (reduce) or copies the sender's word w into sl, sl's mark kept. */
static void slot_apply(struct rslot *sl, bool reduce, uint64_t w)
{
	if (reduce)
		sl->w += w & ~SLOT_MARK;
	else
		sl->w = (w & ~SLOT_MARK) | (sl->w & SLOT_MARK);
}

/* Whether step t is spans each within one piece, the pieces one after
 * another (latency-optimal Swing: a collective's spans, then the next
 * collective's): then the step's reads are the start of the step's values
 * when each piece's plane is copied before its first span, and a span
 * folds into the plane at once (plane_step). A transfer that is no such
 * span leaves the step to the read and delivery lists (and to check_xfer
 * to refuse it, if it must). */
static bool span_planes(struct rstate *v, uint32_t t)
{
	const struct schedule *p = &v->r->prog;
	uint32_t last = UINT32_MAX, seen = 0;

	if (!v->np || p->step_start[t] == p->step_start[t + 1])
		return false;
	for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++) {
		const struct xfer *x = &p->xfers[xi];

		if (xfer_blocks(x) < 2 || x->length == 0 || x->offset >= SCHED_ONE ||
		    (uint64_t)x->offset + x->length > SCHED_ONE)
			return false;
		grid_span(v, x->offset, x->offset + x->length);
		if (v->grid_b != v->grid_a + 1)
			return false;
		if (v->grid_a != last) {
			if (seen >> v->grid_a & 1)
				return false;
			seen |= 1u << v->grid_a;
			last = v->grid_a;
		}
	}
	return true;
}

/* ---- reductions in whole-vector spans, by their sums -------------------------------
 * A piece every transfer of which is a reduction's span of all N blocks
 * (latency-optimal Swing and recursive doubling, reduced) keeps every
 * block alike. A span rs + hs -> rd + hd delivers entry (rs, k + delta) to
 * (rd, k) for every k, delta = hd - hs, from the step's start; so after
 * step t entry (r, k) is the sum of the first entries (r', k + d) over a
 * multiset M_r(t) of pairs (r', d) that does not depend on k:
 *
 *	M_r(t + 1) = M_r(t) + the sum over spans rs -> r of step t of (M_rs(t) + delta).
 *
 * The first entry (r', k + d) is node me(r') - d's input to shard k, so
 * (r, k) ends reduced over every input once, for every k, iff these nodes
 * are every node once: U_r(T) = { me(r') - d } has N members, and they
 * mark every bit of a bitmap of the nodes. That is O(reps N) a piece for
 * the whole program where the planes cost O(reps N) a piece a step
 * (16 steps at 65,536 nodes), and exact: no hash. */

/* The pieces every transfer of which is such a span, confined to it; a
 * transfer outside the shard leaves them all to check_xfer. */
static uint8_t span_pieces(struct rstate *v)
{
	const struct schedule *p = &v->r->prog;
	uint8_t all = (uint8_t)((1u << v->np) - 1), sums = all;

	for (size_t xi = 0; xi < p->nxfers && sums; xi++) {
		const struct xfer *x = &p->xfers[xi];

		if (x->length == 0 || x->offset >= SCHED_ONE ||
		    (uint64_t)x->offset + x->length > SCHED_ONE)
			return 0;
		grid_span(v, x->offset, x->offset + x->length);
		if (x->block != 0 || xfer_blocks(x) != v->n || xfer_op(x) != XFER_REDUCE ||
		    v->grid_b != v->grid_a + 1)
			sums &= (uint8_t) ~(((1u << v->grid_b) - 1) & ~((1u << v->grid_a) - 1));
	}
	return sums;
}

struct span_edge {
	uint32_t from; /* rs */
	uint32_t delta;
};

/* Step t's spans of piece j into each representative: e[at[t * reps + r]
 * .. at[t * reps + r + 1] - 1]. */
struct span_dag {
	struct span_edge *e;
	size_t *at;
};

static void span_dag(struct rstate *v, uint32_t j, struct span_dag *d)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	uint32_t T = p->nsteps, reps = v->reps;
	size_t ne = 0;

	d->at = xcalloc((size_t)T * reps + 1, sizeof(size_t));
	for (int pass = 0; pass < 2; pass++) {
		if (pass) { /* counts to starts */
			size_t sum = 0;

			for (size_t i = 0; i <= (size_t)T * reps; i++) {
				size_t c = d->at[i];

				d->at[i] = sum;
				sum += c;
			}
			d->e = xmalloc((ne + 1) * sizeof(*d->e));
		}
		for (uint32_t t = 0; t < T; t++)
			for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++) {
				const struct xfer *x = &p->xfers[xi];
				uint32_t hs = x->src, hd = x->dst, rs = 0, rd = 0;

				grid_span(v, x->offset, x->offset + x->length);
				if (v->grid_a != j)
					continue;
				if (reps > 1) {
					rs = sched_group_split(G, x->src, &hs);
					rd = sched_group_split(G, x->dst, &hd);
				}
				size_t slot = (size_t)t * reps + rd;
				if (!pass) {
					d->at[slot]++;
					ne++;
					continue;
				}
				d->e[d->at[slot]++] = (struct span_edge){rs, sub(v, hd, hs)};
			}
	}
	/* at[i] is now the end of list i: shift to starts */
	memmove(d->at + 1, d->at, (size_t)T * reps * sizeof(size_t));
	d->at[0] = 0;
}

/* Marks the nodes a[0 .. m - 1] - off. */
static void mark_nodes(const struct rstate *v, const uint32_t *a, size_t m, uint32_t off,
		       uint8_t *mark, uint8_t stamp)
{
	if (v->high) { /* sub's, without its test a node (high in a local: a
			* byte store may alias v) */
		uint32_t h = v->high;

		for (size_t i = 0; i < m; i++)
			mark[swar_sub(h, a[i], off)] = stamp;
	} else if (v->r->group.binary) {
		for (size_t i = 0; i < m; i++)
			mark[a[i] ^ off] = stamp;
	} else {
		for (size_t i = 0; i < m; i++)
			mark[sched_group_sub(&v->r->group, a[i], off)] = stamp;
	}
}

/* Every mark[0 .. n - 1] is stamp (eight at a time). */
static bool all_marked(const uint8_t *mark, uint32_t n, uint8_t stamp)
{
	uint64_t want = stamp * 0x0101010101010101ull, miss = 0, w;
	uint32_t u = 0;

	for (; u + 8 <= n; u += 8) {
		memcpy(&w, mark + u, 8);
		miss |= w ^ want;
	}
	for (; u < n; u++)
		miss |= mark[u] ^ stamp;
	return !miss;
}

/* For every sums piece, which representatives end without every input
 * once (v->sums_bad). */
static void span_sums(struct rstate *v)
{
	const struct sched_group *G = &v->r->group;
	uint32_t T = v->r->prog.nsteps, reps = v->reps, n = v->n;
	/* Below level t0 the sets U_r(t0) are listed (all of them together
	 * at most `small` nodes, an eighth of the nodes from 64 on: the walk
	 * runs in the tests' sizes too); above it a walk down from (r, T)
	 * adds up the deltas and marks U_r(t0) minus their sum. */
	enum { SMALL = 1 << 12 };
	uint64_t *size = xmalloc((size_t)(T + 1) * reps * sizeof(uint64_t));
	/* A node's mark: the stamp of the representative and piece that last
	 * reached it (a byte a node: stores alone, where a bit a node made
	 * every mark wait for the last one's word). */
	uint8_t *mark = xcalloc(n, 1), stamp = 0;
	size_t small = n / 8 < SMALL ? n / 8 : SMALL;
	small = small < reps ? reps : small;
	uint32_t *list[2] = {xmalloc(small * sizeof(uint32_t)), xmalloc(small * sizeof(uint32_t))};
	size_t *lat = xmalloc(((size_t)reps + 1) * sizeof(size_t) * 2);
	size_t *lstart[2] = {lat, lat + reps + 1};

	v->sums_bad = xcalloc(reps, 1);
	for (uint32_t j = 0; j < v->np; j++) {
		if (!(v->sums >> j & 1))
			continue;
		struct span_dag d;
		span_dag(v, j, &d);
		/* How many pairs M_r(t) holds, up to n + 1. */
		uint32_t t0 = 0;
		for (uint32_t r = 0; r < reps; r++)
			size[r] = 1;
		for (uint32_t t = 0; t < T; t++) {
			uint64_t all = 0;
			bool over = false;

			for (uint32_t r = 0; r < reps; r++) {
				uint64_t s = size[(size_t)t * reps + r];

				for (size_t i = d.at[(size_t)t * reps + r];
				     i < d.at[(size_t)t * reps + r + 1]; i++)
					s += size[(size_t)t * reps + d.e[i].from];
				size[(size_t)(t + 1) * reps + r] = s > n ? (uint64_t)n + 1 : s;
				all += size[(size_t)(t + 1) * reps + r];
				over |= s > n;
			}
			/* A set over n nodes fails: listing it is no use. */
			if (all <= small && !over && t0 == t)
				t0 = t + 1;
		}
		/* U_r(0) = {me(r)}, then level by level to t0. */
		int cur = 0;
		for (uint32_t r = 0; r <= reps; r++)
			lstart[0][r] = r;
		for (uint32_t r = 0; r < reps; r++)
			list[0][r] = sched_group_rep_node(G, r);
		for (uint32_t t = 0; t < t0; t++) {
			const uint32_t *a = list[cur];
			uint32_t *b = list[!cur];
			size_t m = 0;

			for (uint32_t r = 0; r < reps; r++) {
				lstart[!cur][r] = m;
				for (size_t i = lstart[cur][r]; i < lstart[cur][r + 1]; i++)
					b[m++] = a[i];
				for (size_t k = d.at[(size_t)t * reps + r];
				     k < d.at[(size_t)t * reps + r + 1]; k++) {
					const struct span_edge *e = &d.e[k];

					for (size_t i = lstart[cur][e->from];
					     i < lstart[cur][e->from + 1]; i++)
						b[m++] = sub(v, a[i], e->delta);
				}
			}
			lstart[!cur][reps] = m;
			cur = !cur;
		}
		/* Each representative: n pairs, their nodes every node. */
		size_t cap = (size_t)(T - t0) * 8 + 8, top;
		struct walk {
			uint32_t r, t, off;
		} *stack = xmalloc(cap * sizeof(*stack));
		for (uint32_t r = 0; r < reps; r++) {
			if (size[(size_t)T * reps + r] != n) {
				v->sums_bad[r] |= (uint8_t)(1u << j);
				continue;
			}
			if (++stamp == 0) {
				memset(mark, 0, n);
				stamp = 1;
			}
			top = 0;
			stack[top++] = (struct walk){r, T, 0};
			while (top) {
				struct walk w = stack[--top];

				if (w.t == t0) {
					mark_nodes(v, list[cur] + lstart[cur][w.r],
						   lstart[cur][w.r + 1] - lstart[cur][w.r], w.off,
						   mark, stamp);
					continue;
				}
				size_t lo = d.at[(size_t)(w.t - 1) * reps + w.r],
				       hi = d.at[(size_t)(w.t - 1) * reps + w.r + 1];
				if (top + hi - lo + 1 > cap)
					GROW(stack, cap, top + hi - lo + 1);
				stack[top++] = (struct walk){w.r, w.t - 1, w.off};
				for (size_t k = lo; k < hi; k++)
					stack[top++] =
					    (struct walk){d.e[k].from, w.t - 1,
							  sched_group_add(G, w.off, d.e[k].delta)};
			}
			if (!all_marked(mark, n, stamp)) /* n marks, not every node: one twice */
				v->sums_bad[r] |= (uint8_t)(1u << j);
		}
		free(stack);
		free(d.e);
		free(d.at);
	}
	free(size);
	free(mark);
	free(list[0]);
	free(list[1]);
	free(lat);
}

/* A reduction's transfer, once check_xfer's checks passed: what its
 * blocks (one, or a span's) deliver, block by block, folded into the
 * plane at once in a plane_step, else as reads for deliver_slots (the
 * grid) or deliveries (the lists). */
static int reduce_blocks(struct rstate *v, uint32_t t, const struct xfer *x, uint32_t lo,
			 uint32_t hi, uint32_t rs, uint32_t hs, uint32_t rd, uint32_t hd)
{
	uint32_t n = v->n, nb = xfer_blocks(x), op = xfer_op(x);
	uint64_t src0 = (uint64_t)rs * n, dst0 = (uint64_t)rd * n;

	if (v->sums) { /* a sums piece (span_pieces): span_sums, at the end */
		grid_span(v, lo, hi);
		if (v->sums >> v->grid_a & 1)
			return 0;
	}
	if (v->plane_step) { /* one piece (span_planes), grid_a */
		grid_span(v, lo, hi);
		struct rslot *plane = v->slot + (size_t)v->grid_a * v->cells;
		bool reduce = op == XFER_REDUCE;

		if (v->snap_plane != v->grid_a) {
			memcpy(v->snap, plane, v->cells * sizeof(struct rslot));
			v->snap_plane = v->grid_a;
		}
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t b = x->block + j;
			const struct rslot *s = &v->snap[src0 + sub(v, b, hs)];

			slot_apply(&plane[dst0 + sub(v, b, hd)], reduce, s->w);
		}
		return 0;
	}
	if (v->at_once) { /* the sender's slots over [lo, hi), now */
		grid_span(v, lo, hi);
		const struct rslot *sp = v->slot + (size_t)v->grid_a * v->cells + src0;
		struct rslot *dp = v->slot + (size_t)v->grid_a * v->cells + dst0;
		uint32_t m = v->grid_b - v->grid_a;
		bool reduce = op == XFER_REDUCE;
		uint64_t st = stamp(t);

		for (uint32_t j = 0; j < nb; j++) {
			uint32_t b = x->block + j;
			const struct rslot *s = sp + sub(v, b, hs);
			struct rslot *d = dp + sub(v, b, hd);

			for (uint32_t k = 0; k < m; k++) {
				uint64_t w = s[(size_t)k * v->cells].w;
				struct rslot *dk = &d[(size_t)k * v->cells];

				v->clash |= (w & SLOT_MARK) == st;
				dk->w = reduce ? (dk->w & ~SLOT_MARK) + (w & ~SLOT_MARK) + st
					       : (w & ~SLOT_MARK) | st;
			}
		}
		return 0;
	}
	if (v->np) { /* the sender's slots over [lo, hi), for deliver_slots */
		grid_span(v, lo, hi);
		uint32_t len = (v->grid_b - v->grid_a - 1) << 29, base = v->grid_a * v->cells;

		if (v->nrd + nb > v->cap_rd)
			GROW(v->rd, v->cap_rd, v->nrd + nb);
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t b = x->block + j;

			v->rd[v->nrd++] =
			    (struct gread){((uint32_t)(src0 + sub(v, b, hs)) + base) | len,
					   ((uint32_t)(dst0 + sub(v, b, hd)) + base) |
					       (op == XFER_REDUCE ? GRID_REDUCE : 0)};
		}
		return 0;
	}
	for (uint32_t j = 0; j < nb; j++) { /* the sender's value: its representative's */
		uint32_t b = x->block + j;
		const struct seglist *l = &v->part[src0 + sub(v, b, hs)];
		uint64_t at_dst = dst0 + sub(v, b, hd);

		for (uint32_t i = 0; i < l->n; i++) {
			uint32_t a = l->v[i].lo > lo ? l->v[i].lo : lo;
			uint32_t e = l->v[i].hi < hi ? l->v[i].hi : hi;

			if (e > a)
				push(v, (struct rdeliv){at_dst, a, e, l->v[i].count, l->v[i].hash,
							(uint8_t)op});
		}
	}
	return 0;
}

/* One program transfer: its checks where it stands, and what its
 * translate into node 0 delivers there (after the step). */
static int check_xfer(struct rstate *v, uint32_t t, size_t xi)
{
	const struct schedule *p = &v->r->prog;
	const struct sched_group *G = &v->r->group;
	const struct xfer *x = &p->xfers[xi];
	const struct graph *g = v->o->graph;
	uint32_t n = v->n, lo = x->offset, hi, hs, hd;

	if (x->src >= n || x->dst >= n)
		return rfail(v, t, xi, "node out of range (%u nodes)", n);
	if (x->src == x->dst)
		return rfail(v, t, xi, "a node sends to itself");
	bool a2a = p->collective == SCHED_ALLTOALL;
	uint32_t nb = xfer_blocks(x);
	if ((uint64_t)x->block + nb > (a2a ? (uint64_t)n * n : n))
		return rfail(v, t, xi, nb > 1 ? "no such blocks" : "no such block");
	/* Spans: in reductions (latency-optimal Swing's whole vector a step),
	 * block by block below. */
	if (nb > 1 && !v->reduce)
		return rfail(v, t, xi,
			     "a transfer of %u blocks: a symmetry-reduced %s program carries one "
			     "block a transfer",
			     nb, sched_collective_name(p->collective));
	if (a2a &&
	    (v->lgn ? x->block >> v->lgn == (x->block & (n - 1)) : x->block / n == x->block % n))
		return rfail(v, t, xi, "all-to-all has no block from a node to itself");
	if (x->length == 0 || x->offset >= SCHED_ONE || (uint64_t)x->offset + x->length > SCHED_ONE)
		return rfail(v, t, xi, "part outside the block");
	hi = lo + x->length;
	uint32_t rs = 0, rd = 0; /* G regular: node u is its representative (0) + u */
	hs = x->src;
	hd = x->dst;
	if (G->reps > 1) {
		rs = split_cached(v, 0, x->src, &hs);
		rd = split_cached(v, 1, x->dst, &hd);
	}
	if (x->run && !g)
		return rfail(v, t, xi, "a transfer over %u arcs, checked without its topology",
			     xfer_arcs(x));
	if (g) {
		uint32_t deg = graph_outdeg(g, x->src), mult = 0;
		uint64_t *load = v->port_load + (size_t)rs * deg;
		const uint32_t *out = graph_out(g, x->src);

		if (x->run) {
			if (check_run(v, t, xi) < 0)
				return -1;
		} else if (x->lane != SCHED_NO_LANE) {
			if (x->lane >= deg || out[x->lane] != x->dst)
				return rfail(v, t, xi,
					     "port %u of node %u does not lead to node %u", x->lane,
					     x->src, x->dst);
			load[x->lane] += (uint64_t)x->length * nb;
		} else {
			for (uint32_t k = 0; k < deg; k++)
				mult += out[k] == x->dst;
			if (!mult)
				return rfail(v, t, xi, "there is no link %u -> %u in %s", x->src,
					     x->dst, g->spec);
			for (uint32_t k = 0; k < deg; k++)
				if (out[k] == x->dst)
					load[k] += (uint64_t)x->length * nb / mult;
		}
	}
	if (a2a) { /* what is held and delivered: a2a_sorted, before */
		if (xfer_op(x) == XFER_REDUCE)
			return rfail(v, t, xi, "a reducing transfer in alltoall");
		return a2a_failure_at(v, t, A2A_AT_CHECK, xi);
	}
	if (v->reduce)
		return reduce_blocks(v, t, x, lo, hi, rs, hs, rd, hd);
	/* The block as the sender's and the receiver's representatives see it. */
	uint64_t at_src = (uint64_t)rs * n + sub(v, x->block, hs);
	uint64_t at_dst = (uint64_t)rd * n + sub(v, x->block, hd);
	if (xfer_op(x) == XFER_REDUCE)
		return rfail(v, t, xi, "a reducing transfer in %s",
			     sched_collective_name(p->collective));
	bool held =
	    at_src % n == sched_group_rep_node(G, rs) ||
	    (v->full[at_src >> 6] >> (at_src & 63)) & 1 ||
	    (v->mask ? mask_covers(v, at_src, lo, hi) : seglist_covers(&v->part[at_src], lo, hi));
	if (!held)
		return rfail(v, t, xi, "node %u does not hold that data at the start of the step",
			     x->src);
	push(v, (struct rdeliv){at_dst, lo, hi, 1, 0, XFER_COPY});
	return 0;
}

/* Step t's transfers with no graph to check, at_once: a plain one (one
 * block, no run, its fields in range) checked and delivered here, its
 * slots found with the split and the subtraction inline, any other by
 * check_xfer, which does the same for a plain one (test_reduced's corrupted
 * programs go both ways). check_xfer's path was 220 instructions a
 * transfer, most of them its general cases' tests (bandwidth-optimal
 * Swing on torus:8x8x8x8). */
static int at_once_step(struct rstate *v, uint32_t t)
{
	const struct schedule *p = &v->r->prog;
	uint32_t n = v->n, high = v->high, ones = SCHED_ONE;
	uint64_t st = stamp(t);
	bool several = v->reps > 1;

	for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++) {
		const struct xfer *x = &p->xfers[xi];
		uint32_t hs = x->src, hd = x->dst, rs = 0, rd = 0;

		if (x->src >= n || x->dst >= n || x->src == x->dst || x->block >= n || x->run ||
		    xfer_blocks(x) != 1 || x->length == 0 || x->offset >= ones ||
		    x->length > ones - x->offset || !high) {
			if (check_xfer(v, t, xi) < 0)
				return -1;
			continue;
		}
		if (several) {
			rs = split_cached(v, 0, x->src, &hs);
			rd = split_cached(v, 1, x->dst, &hd);
		}
		grid_span(v, x->offset, x->offset + x->length);
		if (v->sums >> v->grid_a & 1 || v->plane_step) {
			if (check_xfer(v, t, xi) < 0)
				return -1;
			continue;
		}
		uint32_t b = x->block, m = v->grid_b - v->grid_a;
		const struct rslot *sk =
		    v->slot + (size_t)v->grid_a * v->cells + (size_t)rs * n + swar_sub(high, b, hs);
		struct rslot *dk =
		    v->slot + (size_t)v->grid_a * v->cells + (size_t)rd * n + swar_sub(high, b, hd);
		bool reduce = xfer_op(x) == XFER_REDUCE;

		for (uint32_t k = 0; k < m; k++, sk += v->cells, dk += v->cells) {
			uint64_t w = sk->w;

			v->clash |= (w & SLOT_MARK) == st;
			dk->w = reduce ? (dk->w & ~SLOT_MARK) + (w & ~SLOT_MARK) + st
				       : (w & ~SLOT_MARK) | st;
		}
	}
	return 0;
}

/* The step's transfers, now that every check passed, as sched_verify's
 * reduce_direct: the slots they read are stamped with the step (t + 1);
 * a delivery to a slot no transfer of the step reads is applied at once,
 * the others wait in v->gdl for the end of the step, both in transfer
 * order (so a copy overwrites what a fold before it left, as
 * seglist_fold in order). Entries are far apart (a bandwidth-optimal
 * Swing step's blocks): a cache miss each unless fetched ahead. */
static void deliver_slots(struct rstate *v, uint32_t t)
{
	uint64_t st = stamp(t);

	for (size_t i = 0; i < v->nrd; i++) {
		const struct gread *q = &v->rd[i];
		struct rslot *sl = &v->slot[q->src & GRID_SLOT];

		if (i + GRID_AHEAD < v->nrd)
			__builtin_prefetch(&v->slot[v->rd[i + GRID_AHEAD].src & GRID_SLOT], 1);
		for (uint32_t j = 0; j <= q->src >> 29; j++)
			slot_set_mark(&sl[j * v->cells], st);
	}
	for (size_t i = 0; i < v->nrd; i++) {
		const struct gread *q = &v->rd[i];
		const struct rslot *sl = &v->slot[q->src & GRID_SLOT];
		struct rslot *dl = &v->slot[q->dst & GRID_SLOT];
		bool reduce = q->dst & GRID_REDUCE;

		if (i + GRID_AHEAD < v->nrd) {
			__builtin_prefetch(&v->slot[v->rd[i + GRID_AHEAD].src & GRID_SLOT]);
			__builtin_prefetch(&v->slot[v->rd[i + GRID_AHEAD].dst & GRID_SLOT], 1);
		}
		for (uint32_t j = 0; j <= q->src >> 29; j++) {
			const struct rslot *s = &sl[j * v->cells];
			struct rslot *d = &dl[j * v->cells];

			if (slot_mark(d) != st) {
				slot_apply(d, reduce, s->w);
				continue;
			}
			if (v->ngdl == v->cap_gdl)
				GROW(v->gdl, v->cap_gdl, v->ngdl + 1);
			v->gdl[v->ngdl++] =
			    (struct gdeliv){(uint32_t)(d - v->slot) | (q->dst & GRID_REDUCE), s->w};
		}
	}
	v->nrd = 0;
	for (size_t i = 0; i < v->ngdl; i++) {
		const struct gdeliv *d = &v->gdl[i];

		if (i + GRID_AHEAD < v->ngdl)
			__builtin_prefetch(&v->slot[v->gdl[i + GRID_AHEAD].at & ~GRID_REDUCE], 1);
		slot_apply(&v->slot[d->at & ~GRID_REDUCE], d->at & GRID_REDUCE, d->w);
	}
	v->ngdl = 0;
}

static void deliver(struct rstate *v, uint32_t t)
{
	if (v->np) {
		deliver_slots(v, t);
		return;
	}
	for (size_t i = 0; i < v->ndl; i++) {
		const struct rdeliv *d = &v->dl[i];

		if (v->reduce) {
			seglist_fold(&v->part[d->block], d->lo, d->hi, d->op == XFER_REDUCE,
				     d->count, d->hash);
			continue;
		}
		if (d->block % v->n ==
			sched_group_rep_node(&v->r->group, (uint32_t)(d->block / v->n)) ||
		    (v->full[d->block >> 6] >> (d->block & 63)) & 1) {
			v->dup += sched_frac(d->hi - d->lo);
			continue;
		}
		if (v->mask) {
			uint8_t bits = mask_of(v, d->lo, d->hi), *m = &v->mask[d->block];

			v->dup += sched_frac(mask_len(v, *m & bits));
			*m |= bits;
			if (*m == (1u << v->cnp) - 1)
				v->full[d->block >> 6] |= 1ull << (d->block & 63);
			continue;
		}
		struct seglist *l = &v->part[d->block];
		v->dup += sched_frac((uint32_t)seglist_add(l, d->lo, d->hi));
		if (l->n == 1 && l->v[0].lo == 0 && l->v[0].hi == SCHED_ONE) {
			v->full[d->block >> 6] |= 1ull << (d->block & 63);
			free(l->v);
			memset(l, 0, sizeof(*l));
		}
	}
	v->ndl = 0;
}

/* Representative r holds block (shard) k whole (reduced over all inputs). */
static bool complete(const struct rstate *v, uint32_t r, uint32_t k)
{
	const struct sched_group *G = &v->r->group;
	size_t i = (size_t)r * v->n + k;
	uint32_t h;

	if (!v->reduce)
		return k == sched_group_rep_node(G, r) || (v->full[i >> 6] >> (i & 63)) & 1;
	if (v->sums_bad && v->sums_bad[r])
		return false;
	if (v->np && !v->slot) /* every piece by its sums */
		return true;
	uint64_t total = v->total[sched_group_split(G, k, &h)];
	for (uint32_t j = 0; j < v->np; j++)
		if (!(v->sums >> j & 1) &&
		    ((v->slot[i + j * v->cells].w ^ total << 16) & ~SLOT_MARK) != 0)
			return false;
	if (v->np)
		return true;
	const struct seglist *l = &v->part[i];
	for (uint32_t j = 0; j < l->n; j++)
		if (l->v[j].count != v->n || l->v[j].hash != total)
			return false;
	return l->n > 0 && l->v[0].lo == 0 && l->v[l->n - 1].hi == SCHED_ONE;
}

static int final_check(struct rstate *v)
{
	uint32_t T = v->r->prog.nsteps;
	enum sched_collective c = v->r->prog.collective;
	const struct sched_group *G = &v->r->group;

	/* All-to-all: representative r has every block (o, r) whole, so node
	 * r + h every (o + h, r + h); a2a_sorted found the first that is not. */
	if (c == SCHED_ALLTOALL && v->afail.at == A2A_AT_END)
		return rfail(v, T, SIZE_MAX,
			     "incomplete: the block from %u never (fully) reached %u (nor its "
			     "translates theirs)",
			     v->afail.origin, v->afail.me);
	(void)G;
	if (c == SCHED_ALLTOALL)
		return 0;
	/* Every piece by its sums: a representative's blocks are alike. */
	bool alike = v->np && !v->slot;
	for (uint32_t i = 0; i < (c == SCHED_REDUCE_SCATTER ? v->reps : v->reps * v->n); i++) {
		uint32_t r = c == SCHED_REDUCE_SCATTER ? i : i / v->n;
		uint32_t k = c == SCHED_REDUCE_SCATTER ? sched_group_rep_node(G, r) : i % v->n;

		if (complete(v, r, k)) {
			if (alike && c != SCHED_REDUCE_SCATTER)
				i = (r + 1) * v->n - 1; /* the next representative's first */
			continue;
		}
		if (v->reps > 1)
			return rfail(v, T, SIZE_MAX,
				     "incomplete: after the last step node %u lacks (part of) %s "
				     "%u%s (and its translates theirs)",
				     sched_group_rep_node(G, r),
				     c == SCHED_ALLGATHER ? "block" : "the reduction of shard", k,
				     c == SCHED_ALLGATHER ? "" : " over all inputs, each once");
		/* Node 0 lacks block k: node v lacks block k + v, every v. */
		if (c == SCHED_ALLGATHER)
			return rfail(v, T, SIZE_MAX,
				     "incomplete: after the last step node 0 lacks (part of) block "
				     "%u (and every node v block %u + v)",
				     k, k);
		if (c == SCHED_REDUCE_SCATTER)
			return rfail(v, T, SIZE_MAX,
				     "node 0 does not end with shard 0 reduced over all %u inputs, "
				     "each exactly once (nor any node its own)",
				     v->n);
		return rfail(v, T, SIZE_MAX,
			     "node 0 does not end with shard %u reduced over all %u inputs, each "
			     "exactly once (nor any node v shard %u + v)",
			     k, v->n, k);
	}
	return 0;
}

/* The check, deliveries at once (at_once) or by the read lists; -2: at
 * once met a clash. */
/* The group's halves as bit masks for SWAR translation (power-of-two
 * groups). */
static void rstate_masks(struct rstate *v, const struct sched_group *G)
{
	uint32_t n = v->n;

	v->lgn = n > 1 && !(n & (n - 1)) ? (unsigned)__builtin_ctz(n) : 0;
	for (uint32_t i = 0; G->pow2 && G->reps == 1 && i < G->ndims; i++)
		if (G->radix[i] > 1) {
			uint64_t top = (uint64_t)G->radix[i] / 2 << G->shift[i];

			v->swar |= top << v->lgn | top;
		}
	for (uint32_t i = 0; G->pow2 && !G->binary && i < G->ndims; i++)
		if (G->radix[i] > 1)
			v->high |= G->radix[i] / 2 << G->shift[i];
}

/* What the check by symmetry does not take. */
static int reduced_refused(struct rstate *v, size_t cells)
{
	const struct schedule *p = &v->r->prog;
	uint32_t n = v->n;

	if (n < 2 || n > SCHED_REDUCED_MAX_NODES || p->nodes != n || !v->reps || cells > (1u << 26))
		return rfail(v, 0, SIZE_MAX,
			     "%u nodes (program of %u): a reduced schedule has 2..%u", n, p->nodes,
			     SCHED_REDUCED_MAX_NODES);
	if (p->collective != SCHED_ALLGATHER && p->collective != SCHED_REDUCE_SCATTER &&
	    p->collective != SCHED_ALLREDUCE && p->collective != SCHED_ALLTOALL)
		return rfail(v, 0, SIZE_MAX,
			     "%s: the check by symmetry takes allgather, reduce-scatter, "
			     "allreduce and alltoall",
			     sched_collective_name(p->collective));
	if (v->o->wdm || v->o->network)
		return rfail(v, 0, SIZE_MAX,
			     "the check by symmetry is for direct-connect topologies");
	if (p->collective == SCHED_ALLTOALL && p->nxfers > (size_t)1 << 31)
		return rfail(v, 0, SIZE_MAX,
			     "%zu program transfers: the check by symmetry numbers them in 31 bits",
			     p->nxfers);
	if (v->o->graph && v->o->graph->n != n)
		return rfail(v, 0, SIZE_MAX, "the schedule has %u nodes, the topology %u", n,
			     v->o->graph->n);
	return 0;
}

/* Port loads per representative, and where a run of k hops on port j
 * from node 0 ends. Returns the degree. */
static uint32_t reduced_ports(struct rstate *v)
{
	const struct graph *g = v->o->graph;
	uint32_t d = graph_outdeg(g, 0);

	v->port_load = xcalloc((size_t)d * v->reps + 1, sizeof(uint64_t));
	v->port_total = xcalloc((size_t)d * v->reps + 1, sizeof(uint64_t));
	v->run_to = xmalloc(((size_t)d * SCHED_MAX_RUN + 1) * sizeof(uint32_t));
	for (uint32_t j = 0; j < d; j++)
		for (uint32_t k = 0, u = 0; k < SCHED_MAX_RUN; k++) {
			u = g->adj[g->off[u] + j];
			v->run_to[j * SCHED_MAX_RUN + k] = u;
		}
	return d;
}

/* The representatives' state: planes of slots, the allgather's mask, or
 * segment lists; returns whether pieces need their planes. */
static bool reduced_state(struct rstate *v, size_t cells, bool at_once)
{
	const struct schedule *p = &v->r->prog;
	bool planes = v->np && v->sums != (1u << v->np) - 1; /* a piece needs its plane */

	if (v->np) { /* without planes when every piece goes by its sums */
		if (planes) {
			v->slot = sched_huge_alloc(cells * v->np * sizeof(struct rslot));
			v->at_once = at_once;
		}
		if (planes && !at_once) {
			size_t most = 0; /* a step's transfers, its reads and deliveries */

			for (uint32_t t = 0; t < p->nsteps; t++)
				if (p->step_start[t + 1] - p->step_start[t] > most)
					most = p->step_start[t + 1] - p->step_start[t];
			GROW(v->rd, v->cap_rd, most);
			GROW(v->gdl, v->cap_gdl, most);
		}
	} else if (p->collective == SCHED_ALLGATHER && (v->cnp = grid_cuts(p, v->cut)) > 0) {
		v->mask = xcalloc(cells + 1, 1);
	} else {
		v->part = xcalloc(cells, sizeof(struct seglist));
	}
	return planes;
}

/* A reduction's inputs. The input of u to shard k weighs W(rep(u), k - u),
 * which H leaves alone; node 0's of shard k (G regular) is W(0, k). A
 * shard's total depends on its class alone. */
static void reduced_inputs(struct rstate *v, size_t cells)
{
	const struct sched_group *G = &v->r->group;
	uint64_t seed = v->o->seed ? v->o->seed : 0x0fc;
	uint32_t n = v->n, h;

	v->total = xcalloc(v->reps, sizeof(uint64_t));
	for (uint32_t i = 0; i < v->reps; i++) {
		uint32_t me = sched_group_rep_node(G, i);

		for (uint32_t k = 0; k < n; k++) {
			uint64_t w =
			    sched_mix64(seed + (uint64_t)i * n + sched_group_sub(G, k, me));
			size_t e = (size_t)i * n + k;

			for (uint32_t j = 0; j < v->np; j++)
				v->slot[e + j * cells] = (struct rslot){w << 16};
			if (!v->np)
				seglist_push(&v->part[e], (struct seg){0, SCHED_ONE, 1, w});
		}
		for (uint32_t u = 0; u < n; u++) {
			uint32_t ru = sched_group_split(G, u, &h);

			v->total[i] +=
			    sched_mix64(seed + (uint64_t)ru * n + sched_group_sub(G, me, u));
		}
	}
}

/* Step t's busiest port into the report, its loads into the totals. */
static void step_port_loads(struct rstate *v, uint32_t t, uint32_t d)
{
	struct verify_report *report = v->rep;
	uint64_t max = 0;

	for (size_t j = 0; j < (size_t)d * v->reps; j++) {
		max = v->port_load[j] > max ? v->port_load[j] : max;
		v->port_total[j] += v->port_load[j];
		v->port_load[j] = 0;
	}
	double load = (double)max / SCHED_ONE;

	if (v->o->step_link_load)
		v->o->step_link_load[t] = load;
	report->sum_max_link_load += load;
	if (load > report->max_link_load)
		report->max_link_load = load;
}

/* Check step t; -2 when the at-once check meets a clash (run again, step
 * by step). */
static int reduced_step(struct rstate *v, uint32_t t, bool planes, size_t cells, uint32_t d)
{
	const struct schedule *p = &v->r->prog;

	v->plane_step = planes && span_planes(v, t);
	v->snap_plane = UINT32_MAX;
	if (v->plane_step && !v->snap)
		v->snap = xmalloc(cells * sizeof(struct rslot));
	if (v->slot && t && stamp(t) == 1) /* the stamps come round */
		clear_marks(v);
	if (v->at_once && !v->o->graph) {
		if (at_once_step(v, t) < 0)
			return -1;
	} else {
		for (size_t xi = p->step_start[t]; xi < p->step_start[t + 1]; xi++)
			if (check_xfer(v, t, xi) < 0)
				return -1;
	}
	if (v->clash)
		return -2;
	deliver(v, t);
	if (a2a_failure_at(v, t, A2A_AT_DELIVERY, 0) < 0)
		return -1;
	if (v->o->graph)
		step_port_loads(v, t, d);
	return 0;
}

static void rstate_free(struct rstate *v, size_t cells)
{
	for (size_t k = 0; v->part && k < cells; k++)
		free(v->part[k].v);
	free(v->part);
	free(v->mask);
	free(v->slot);
	free(v->snap);
	free(v->gdl);
	free(v->rd);
	free(v->total);
	free(v->sums_bad);
	free(v->full);
	free(v->dl);
	free(v->port_load);
	free(v->port_total);
	free(v->run_to);
}

static int verify_reduced(const struct sched_reduced *r, const struct verify_opts *o,
			  struct verify_report *report, bool at_once)
{
	static const struct verify_opts none = {0};
	const struct schedule *p = &r->prog;
	struct rstate v = {.r = r,
			   .o = o ? o : &none,
			   .rep = report,
			   .n = r->group.nodes,
			   .reps = r->group.reps,
			   .split_node = {UINT32_MAX, UINT32_MAX}};
	uint32_t d = 0;
	size_t cells = (size_t)v.reps * v.n;
	int rc = -1;

	rstate_masks(&v, &r->group);
	memset(report, 0, sizeof(*report));
	report->ok = true;
	report->nsteps = p->nsteps;
	report->ntransfers = (size_t)sched_reduced_transfers(r);
	if (reduced_refused(&v, cells) < 0)
		return -1;
	if (v.o->graph)
		d = reduced_ports(&v);
	v.reduce = p->collective != SCHED_ALLGATHER && p->collective != SCHED_ALLTOALL;
	v.np = v.reduce ? grid_cuts(p, v.cut) : 0;
	v.cells = (uint32_t)cells;
	v.sums = v.np ? span_pieces(&v) : 0;
	bool planes = reduced_state(&v, cells, at_once);

	if (v.reduce && (planes || !v.np))
		reduced_inputs(&v, cells);
	else if (!v.reduce)
		v.full = xcalloc(cells / 64 + 1, sizeof(uint64_t));
	if (p->collective == SCHED_ALLTOALL)
		a2a_sorted(&v);
	for (uint32_t t = 0; t < p->nsteps; t++)
		if ((rc = reduced_step(&v, t, planes, cells, d)) < 0)
			goto out;
	for (size_t j = 0; v.port_total && j < (size_t)d * v.reps; j++)
		report->max_total_link_load =
		    fmax(report->max_total_link_load, (double)v.port_total[j] / SCHED_ONE);
	if (v.sums)
		span_sums(&v);
	report->pieces_by_sums = (uint32_t)__builtin_popcount(v.sums);
	rc = final_check(&v) < 0 ? -1 : 0;
out:
	report->duplicate_blocks = v.dup * r->group.order;
	rstate_free(&v, cells);
	return rc;
}

int sched_verify_reduced(const struct sched_reduced *r, const struct verify_opts *o,
			 struct verify_report *report)
{
	int rc = verify_reduced(r, o, report, true);

	return rc == -2 ? verify_reduced(r, o, report, false) : rc;
}

/* ---- the all-to-all baselines, reduced ------------------------------------------ */

/* direct or sp-balanced: node 0's routes, hop i at step i (as a2a_build
 * lowers them), the program. */
static int a2a_baseline_reduced(const struct graph *g, const struct sched_group *G,
				const struct a2a_request *q, struct sched_reduced *r,
				struct a2a_outcome *o, struct ofc_error *err)
{
	struct a2a_routes rt = {.n = g->n};

	if ((strcmp(q->algo, "direct") == 0
		 ? a2a_direct_routes_0(g, &rt, err)
		 : a2a_balanced_routes_0(g, G, 0x0fc, q->clock, &rt, err)) < 0 ||
	    a2a_schedule(g, &rt, false, a2a_runs(q), q->algo, &r->prog, &o->max_load, err) < 0) {
		a2a_routes_free(&rt);
		return -1;
	}
	r->group = *G;
	o->cut_through = true;
	o->max_paths = 1;
	o->max_hops = a2a_max_hops(&rt);
	/* o->max_load: unit capacities (links of different rates are not
	 * reduced). */
	a2a_routes_free(&rt);
	return 0;
}

/* ---- the all-to-all MCF, reduced ------------------------------------------------ */

int a2a_reduced(const struct graph *g, const struct sched_group *G, const struct a2a_request *q,
		struct sched_reduced *r, struct a2a_outcome *o, struct ofc_error *err)
{
	const char *low = q->lowering ? q->lowering : "steps";
	bool steps = strcmp(low, "steps") == 0;
	struct sched_group grp = *G; /* G may be &r->group */
	struct topo_facts f;

	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	if (q->mcf.demand)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a demand matrix is not alike at every node: no reduced "
				     "program (the explicit schedule, up to %u nodes)",
				     A2A_MAX_NODES);
	if (strcmp(q->algo, "direct") == 0 || strcmp(q->algo, "sp-balanced") == 0) {
		if (grp.nodes != g->n || grp.reps != 1)
			return ofc_error_set(err, OFC_E_INPUT,
					     "the group has %u elements, %s %u nodes", grp.order,
					     g->spec ? g->spec : "the topology", g->n);
		/* sp-balanced's rule is a pass per pair over the layers of its
		 * shortest paths: 0.03-0.05 s at 4,096, 0.6 s at 16,384, 5-7 s
		 * at 65,536 (hypercube:16, torus:256x256); direct's BFS is one
		 * search. */
		if (strcmp(q->algo, "sp-balanced") == 0 && g->n > A2A_SP_REDUCED_MAX_NODES)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "%u nodes: sp-balanced searches the graph once per pair, so it "
			    "is built for up to %u nodes (direct and mcf go further)",
			    g->n, A2A_SP_REDUCED_MAX_NODES);
		return a2a_baseline_reduced(g, &grp, q, r, o, err);
	}
	if (strcmp(q->algo, "mcf"))
		return ofc_error_set(err, OFC_E_INPUT,
				     "a reduced all-to-all is the MCF's (mcf), direct or "
				     "sp-balanced, not %s",
				     q->algo);
	bool single = strcmp(low, "single") == 0;
	if (!steps && !single && strcmp(low, "paths"))
		return ofc_error_set(err, OFC_E_INPUT, "unknown lowering '%s'", low);
	if (grp.nodes != g->n || grp.reps != 1)
		return ofc_error_set(err, OFC_E_INPUT, "the group has %u elements, %s %u nodes",
				     grp.order, g->spec ? g->spec : "the topology", g->n);
	topo_facts(g, &f, q->mcf.threads);
	struct a2a_request sym = *q;
	sym.mcf.method = MCF_SYMMETRIC;
	sym.mcf.translations_known = true; /* G is checked port by port */
	if (a2a_solve(g, &sym, &f, &steps, &o->mcf, o, err) < 0)
		return -1;
	o->have_mcf = true;
	struct a2a_routes *rt = &o->mcf.routes;
	/* node 0's routes are the program: no mirroring, no routes.perm */
	/* Single path by symmetry: node 0's pairs each on one of their MCF
	 * paths, balanced by port loads (every arc of port j carries node 0's
	 * hops on j): the symmetric schedule of the rule, not the explicit
	 * one, which balances all N (N - 1) pairs by arc. */
	if (single)
		a2a_routes_single_ports(g, q->mcf.capacity, rt);
	else if (!steps)
		a2a_routes_limit(rt, graph_outdeg(g, 0));
	struct a2a_routes own = *rt;
	own.symmetric = false;
	if (a2a_schedule(g, &own, steps, a2a_runs(q), "mcf", &r->prog, &o->max_load, err) < 0) {
		a2a_outcome_free(o);
		return -1;
	}
	r->group = grp;
	o->max_hops = a2a_max_hops(rt);
	o->max_paths = a2a_max_paths(rt);
	return 0;
}
