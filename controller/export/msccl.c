/* A direct-connect schedule as an MSCCL XML program (docs/msccl.md): the
 * format the MSCCL executor in NCCL and RCCL loads (<algo>, one <gpu> per
 * rank, thread blocks <tb> with one send peer or one receive peer and a
 * channel, and <step> operations in each).
 *
 * - Chunks: each block is cut into Q chunks. Q is the smallest count (up to
 *   MSCCL_MAX_Q) at which every transfer's bounds fall on chunk bounds, so
 *   the program moves exactly ofc's fractions; when there is none, Q =
 *   MSCCL_MAX_Q and bounds are rounded to the nearest chunk (each bound
 *   moves by at most half a chunk; rounding is monotone, so a relayed part
 *   stays inside what was received and the program stays correct).
 * - Thread blocks: per rank one send block per (peer, channel) and one
 *   receive block per (peer, channel), plus one for local copies. The
 *   channel of a transfer is its port's rank among the sender's ports to
 *   the same peer, so parallel circuits are separate connections, times a
 *   spread S: a pair's transfers on one port go round S channels in turn,
 *   so a link that carries more operations than one thread block may run
 *   (an all-to-all's time steps) is several thread blocks. The send and
 *   the receive of a transfer take the same channel, and each channel
 *   keeps the schedule's order, so the k-th send matches the k-th receive.
 *   S is the least that keeps every thread block within the runtime's
 *   steps (msccl_limits).
 * - Order: transfers in schedule order, a step's sends before its receives
 *   (a send carries what was held at the start of the step, as the
 *   verifier assumes). Each operation depends on the last operation that
 *   wrote a chunk it reads or writes, and a write also on every read of
 *   the chunk since the last write; dependencies inside its own thread
 *   block are implicit, and beyond one the extras become nops before it.
 *   Every dependency points to an operation emitted earlier, so the
 *   program is free of cycles. */
#include "controller/export/export.h"

#include <stdlib.h>
#include <string.h>

/* The limits both runtimes share (msccl-executor-nccl's msccl_struct.h and
 * msccl_parser.cc, the older MSCCL's msccl.h and graph/xml.cc); those
 * that differ are the runtime's (msccl_limits). */
#define MSCCL_MAX_Q	    64u
#define MSCCL_MAX_COUNT	    72u	  /* cnt < 72 */
#define MSCCL_MAX_CHANNELS  32u	  /* chan < MAXCHANNELS */
#define MSCCL_MAX_TB_PER_CH 32u	  /* send (and receive) blocks per channel */
#define MSCCL_MAX_DEPID	    127	  /* dependentBid is an int8_t */
#define MSCCL_MAX_OFFSET    32767 /* srcOffset, dstOffset are int16_t */
#define MSCCL_MAX_RANKS	    1024u
#define BUF_I		    0
#define BUF_O		    1
#define BUF_S		    2

/* What the runtime that loads the program takes: MSCCL_MAX_NUM_STEPS
 * operations (steps, nops too) a thread block, MSCCL_MAX_NUM_THREAD_BLOCKS
 * a rank, and the XML nodes its parser holds for one rank (MAX_NODES,
 * 4,096, checked before each node is read, so 4,095 at most: the <algo>,
 * every <gpu>, and the rank's own <tb> and <step> elements). The
 * executor's default build (makefiles/common.mk) has 64 steps and 32
 * thread blocks a channel times MAXCHANNELS (32); the older MSCCL 256 and
 * 108 x 2. */
static const struct msccl_limits {
	const char *name;
	uint32_t steps, tbs, nodes;
} msccl_limits[] = {
    [MSCCL_EXECUTOR] = {"msccl-executor-nccl", 64, 1024, 4095},
    [MSCCL_LEGACY] = {"the legacy MSCCL", 256, 216, 4095},
};

struct mop {
	char type[5]; /* s, r, rrc, cpy, nop */
	uint8_t srcbuf, dstbuf;
	int32_t srcoff, dstoff, cnt;
	int32_t depid, deps;
	bool hasdep;
};

struct mtb {
	int32_t send, recv, chan;
	struct mop *ops;
	size_t nops, cap;
};

struct opref {
	int32_t tb, idx;
};

/* What happened last to one chunk of one buffer of one rank. */
struct chunk_state {
	struct opref w;	 /* last write, tb -1: none */
	struct opref *r; /* reads since */
	uint32_t nr;
	size_t capr;
};

struct rank {
	struct mtb *tb;
	uint32_t ntb;
	size_t captb;
	uint32_t nchunks[3];
	struct chunk_state *cs[3];
	uint32_t *slot; /* all-to-all: block -> scratch slot, UINT32_MAX none */
};

struct mx {
	const struct schedule *s;
	const struct msccl_limits *lim;
	uint32_t n, Q;
	uint32_t spread; /* S: channels per port (see the top) */
	/* peer groups: a pair (u, v) on channels of group ((v - u) mod n -
	 * 1) / 32, so no rank has more than MSCCL's 32 send or 32 receive
	 * peers on a channel (1 up to 33 ranks) */
	uint32_t groups;
	uint32_t *pair_seq; /* per phase and (src, dst): transfers so far */
	struct rank *rk;
	/* deps being gathered for one op */
	struct opref *dep;
	uint32_t ndep;
	size_t capdep;
};

static int32_t tb_new(struct rank *r, int32_t send, int32_t recv, int32_t chan)
{
	GROW(r->tb, r->captb, (size_t)r->ntb + 1);
	r->tb[r->ntb] = (struct mtb){.send = send, .recv = recv, .chan = chan};
	return (int32_t)r->ntb++;
}

/* The first thread block with these peers and channel, made if none. */
static int32_t tb_find(struct rank *r, int32_t send, int32_t recv, int32_t chan)
{
	for (uint32_t i = 0; i < r->ntb; i++)
		if (r->tb[i].send == send && r->tb[i].recv == recv && r->tb[i].chan == chan)
			return (int32_t)i;
	return tb_new(r, send, recv, chan);
}

static struct chunk_state *chunk(struct rank *r, unsigned buf, uint32_t off)
{
	return &r->cs[buf][off];
}

static void dep_add(struct mx *m, struct opref o)
{
	if (o.tb < 0)
		return;
	for (uint32_t i = 0; i < m->ndep; i++)
		if (m->dep[i].tb == o.tb) {
			if (o.idx > m->dep[i].idx)
				m->dep[i].idx = o.idx;
			return;
		}
	GROW(m->dep, m->capdep, (size_t)m->ndep + 1);
	m->dep[m->ndep++] = o;
}

/* Append op to thread block t of rank u with the gathered dependencies
 * (extras as nops first); returns where it went. */
static struct opref emit(struct mx *m, uint32_t u, int32_t t, struct mop op)
{
	struct rank *r = &m->rk[u];
	struct mtb *tb;
	struct opref last = {-1, -1};

	for (uint32_t i = 0; i < m->ndep; i++) {
		struct opref d = m->dep[i];

		if (d.tb == t)
			continue; /* earlier in the same block: implicit */
		r->tb[d.tb].ops[d.idx].hasdep = true;
		if (last.tb >= 0) {
			struct mop nop = {.type = "nop",
					  .srcbuf = BUF_I,
					  .dstbuf = BUF_O,
					  .srcoff = -1,
					  .dstoff = -1,
					  .cnt = 0,
					  .depid = last.tb,
					  .deps = last.idx};

			tb = &r->tb[t];
			GROW(tb->ops, tb->cap, tb->nops + 1);
			tb->ops[tb->nops++] = nop;
		}
		last = d;
	}
	m->ndep = 0;
	op.depid = last.tb;
	op.deps = last.idx;
	tb = &r->tb[t];
	GROW(tb->ops, tb->cap, tb->nops + 1);
	tb->ops[tb->nops++] = op;
	return (struct opref){t, (int32_t)tb->nops - 1};
}

/* Dependencies of reading [off, off + cnt) of a buffer, and recording the read. */
static void deps_read(struct mx *m, uint32_t u, unsigned buf, uint32_t off, uint32_t cnt)
{
	for (uint32_t c = off; c < off + cnt; c++)
		dep_add(m, chunk(&m->rk[u], buf, c)->w);
}

static void note_read(struct mx *m, uint32_t u, unsigned buf, uint32_t off, uint32_t cnt,
		      struct opref o)
{
	for (uint32_t c = off; c < off + cnt; c++) {
		struct chunk_state *cs = chunk(&m->rk[u], buf, c);

		GROW(cs->r, cs->capr, (size_t)cs->nr + 1);
		cs->r[cs->nr++] = o;
	}
}

static void deps_write(struct mx *m, uint32_t u, unsigned buf, uint32_t off, uint32_t cnt)
{
	for (uint32_t c = off; c < off + cnt; c++) {
		struct chunk_state *cs = chunk(&m->rk[u], buf, c);

		dep_add(m, cs->w);
		for (uint32_t i = 0; i < cs->nr; i++)
			dep_add(m, cs->r[i]);
	}
}

static void note_write(struct mx *m, uint32_t u, unsigned buf, uint32_t off, uint32_t cnt,
		       struct opref o)
{
	for (uint32_t c = off; c < off + cnt; c++) {
		struct chunk_state *cs = chunk(&m->rk[u], buf, c);

		cs->w = o;
		cs->nr = 0;
	}
}

/* Where chunk 0 of block b lives at rank u while the program runs; false
 * when u holds no such block (an all-to-all's relay of a block it never
 * receives: a schedule the verifier refuses, read back from a file). */
static bool locate(struct mx *m, uint32_t u, uint32_t b, unsigned *buf, uint32_t *off)
{
	const struct schedule *s = m->s;
	uint32_t n = m->n, Q = m->Q;

	switch (s->collective) {
	case SCHED_ALLGATHER:
		*buf = b == u ? BUF_I : BUF_O;
		*off = b == u ? 0 : b * Q;
		return true;
	case SCHED_ALLREDUCE:
		*buf = BUF_O;
		*off = b * Q;
		return true;
	case SCHED_REDUCE_SCATTER:
		*buf = BUF_S;
		*off = b * Q;
		return true;
	case SCHED_ALLTOALL:
		if (b / n == u) {
			*buf = BUF_I;
			*off = (b % n) * Q;
		} else if (b % n == u) {
			*buf = BUF_O;
			*off = (b / n) * Q;
		} else {
			*buf = BUF_S;
			*off = m->rk[u].slot[b] * Q;
		}
		return *buf != BUF_S || m->rk[u].slot[b] != UINT32_MAX;
	case SCHED_BROADCAST: /* refused by schedule_write_msccl */
	case SCHED_REDUCE:
		break;
	}
	return false;
}

uint32_t msccl_chunk_bound(uint64_t fixed, uint32_t Q)
{
	return (uint32_t)((fixed * Q + (SCHED_ONE / 2)) >> 31);
}

/* Whether every bound of s is a chunk bound at Q chunks a block. */
static bool exact_at(const struct schedule *s, uint32_t Q)
{
	bool ok = true;

	for (size_t k = 0; k < s->nxfers && ok; k++) {
		uint64_t b[2] = {s->xfers[k].offset,
				 (uint64_t)s->xfers[k].offset + s->xfers[k].length};

		for (int j = 0; j < 2 && ok; j++) {
			uint64_t x = b[j] * Q, q = msccl_chunk_bound(b[j], Q);
			uint64_t y = q << 31;
			uint64_t d = x > y ? x - y : y - x;

			ok = d <= 2u * Q; /* sched_fix rounds each fraction by half a unit */
		}
	}
	return ok;
}

/* The smallest Q at which every bound is a chunk bound, else MSCCL_MAX_Q. */
static uint32_t pick_q(const struct schedule *s, bool *exact)
{
	for (uint32_t Q = 1; Q <= MSCCL_MAX_Q; Q++) {
		bool ok = exact_at(s, Q);

		if (ok) {
			*exact = true;
			return Q;
		}
	}
	*exact = false;
	return MSCCL_MAX_Q;
}

uint32_t msccl_rounded_q(const struct schedule *s)
{
	bool exact;
	uint32_t Q = pick_q(s, &exact);

	return exact ? 0 : Q;
}

uint64_t schedule_msccl_memory(const struct schedule *s)
{
	uint64_t n = s->nodes, Q, chunks;
	bool exact;

	if (n < 2 || n > MSCCL_MAX_RANKS)
		return 0; /* refused before anything is held */
	Q = pick_q(s, &exact);
	/* per rank: input, output and scratch chunks (as schedule_write_msccl
	 * sizes them; all-to-all scratch at most n blocks) */
	chunks = s->collective == SCHED_ALLGATHER ? (n + 1) * Q : 3 * n * Q;
	return n * n * (64 * sizeof(uint16_t) + 3 * sizeof(uint32_t)) +
	       n * (chunks + 3) * sizeof(struct chunk_state) +
	       (s->collective == SCHED_ALLTOALL ? n * n * n * sizeof(uint32_t) : 0) +
	       /* a send and a receive per transfer, their deps and chunk reads
		* (within 3% of the peak RSS of torus:32x32 allreduce) */
	       (uint64_t)sched_block_xfers(s) * 2 *
		   (sizeof(struct mop) + 6 * sizeof(struct opref)) +
	       /* spans cut into blocks first */
	       (sched_has_spans(s) ? (uint64_t)sched_block_xfers(s) * sizeof(struct xfer) : 0);
}

/* A transfer's channel: its port's rank among src's ports to dst in the
 * schedule (ports without a lane share channel 0). */
static int32_t channel_of(const struct schedule *s, const struct xfer *x, uint16_t *lanes,
			  uint32_t *nl)
{
	if (x->lane == SCHED_NO_LANE)
		return 0;
	for (uint32_t i = 0; i < *nl; i++)
		if (lanes[i] == x->lane)
			return (int32_t)i;
	(void)s;
	lanes[*nl] = x->lane;
	return (int32_t)(*nl)++;
}

static const char *buf_name(unsigned b)
{
	return b == BUF_I ? "i" : b == BUF_O ? "o" : "s";
}

static const char *coll_name(enum sched_collective c)
{
	return c == SCHED_ALLGATHER	   ? "allgather"
	       : c == SCHED_ALLREDUCE	   ? "allreduce"
	       : c == SCHED_REDUCE_SCATTER ? "reducescatter"
					   : "alltoall";
}

/* Collectives and transfers an MSCCL program cannot carry, refused before
 * anything is held. */
static int msccl_refuse(const struct schedule *s, struct ofc_error *err)
{
	if (s->collective == SCHED_BROADCAST || s->collective == SCHED_REDUCE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "MSCCL programs here are allgather, reduce-scatter, allreduce "
				     "and all-to-all, not %s",
				     sched_collective_name(s->collective));
	for (size_t k = 0; k < s->nxfers; k++) {
		if (xfer_dir(&s->xfers[k]) != DIR_NONE)
			return ofc_error_set(err, OFC_E_INPUT,
					     "an MSCCL program is for direct-connect schedules, "
					     "not WDM rings");
		if (s->xfers[k].run) /* MSCCL sends to a peer, one link */
			return ofc_error_set(err, OFC_E_INPUT,
					     "transfer %zu crosses %u arcs cut-through: an MSCCL "
					     "program sends one link at a time",
					     k, xfer_arcs(&s->xfers[k]));
	}
	return 0;
}

/* Rank u's buffers: input, output and scratch chunks, and an all-to-all's
 * scratch slot for each block it relays. */
static void rank_buffers(struct mx *m, uint32_t u)
{
	const struct schedule *s = m->s;
	struct rank *r = &m->rk[u];
	uint32_t n = m->n, Q = m->Q, slots = 0;

	switch (s->collective) {
	case SCHED_ALLGATHER:
		r->nchunks[BUF_I] = Q;
		r->nchunks[BUF_O] = n * Q;
		break;
	case SCHED_ALLREDUCE:
		r->nchunks[BUF_I] = r->nchunks[BUF_O] = n * Q;
		break;
	case SCHED_REDUCE_SCATTER:
		r->nchunks[BUF_I] = r->nchunks[BUF_S] = n * Q;
		r->nchunks[BUF_O] = Q;
		break;
	case SCHED_ALLTOALL:
		r->nchunks[BUF_I] = r->nchunks[BUF_O] = n * Q;
		r->slot = xmalloc(((size_t)n * n + 1) * sizeof(uint32_t));
		for (size_t b = 0; b < (size_t)n * n; b++)
			r->slot[b] = UINT32_MAX;
		for (size_t k = 0; k < s->nxfers; k++) {
			const struct xfer *x = &s->xfers[k];

			if (x->dst == u && x->block / n != u && x->block % n != u &&
			    r->slot[x->block] == UINT32_MAX)
				r->slot[x->block] = slots++;
		}
		r->nchunks[BUF_S] = slots * Q;
		break;
	case SCHED_BROADCAST: /* refused by msccl_refuse */
	case SCHED_REDUCE:
		break;
	}
	for (unsigned b = 0; b < 3; b++) {
		r->cs[b] = xcalloc(r->nchunks[b] + 1, sizeof(struct chunk_state));
		for (uint32_t c = 0; c < r->nchunks[b]; c++)
			r->cs[b][c].w = (struct opref){-1, -1};
	}
}

static struct opref emit_copy(struct mx *m, uint32_t u, int32_t t, unsigned from, uint32_t from_off,
			      unsigned to, uint32_t to_off)
{
	return emit(m, u, t,
		    (struct mop){.type = "cpy",
				 .srcbuf = (uint8_t)from,
				 .srcoff = (int32_t)from_off,
				 .dstbuf = (uint8_t)to,
				 .dstoff = (int32_t)to_off,
				 .cnt = (int32_t)m->Q});
}

/* Rank u's local copies, first, in its thread block 0: a reduction's
 * input into where it accumulates; allgather's own block into the output;
 * all-to-all's block a rank sends itself. A reduction's N copies, one a
 * block, take as many peerless thread blocks as the runtime's steps need
 * (the copies are independent): 64 ranks' would pass the executor's 64 in
 * one. */
static void local_copies(struct mx *m, uint32_t u)
{
	enum sched_collective c = m->s->collective;
	uint32_t Q = m->Q, per = m->lim->steps;
	int32_t t = tb_find(&m->rk[u], -1, -1, 0);

	if (c == SCHED_ALLREDUCE || c == SCHED_REDUCE_SCATTER) {
		unsigned dst = c == SCHED_ALLREDUCE ? BUF_O : BUF_S;

		for (uint32_t b = 0; b < m->n; b++) {
			if (b && b % per == 0)
				t = tb_new(&m->rk[u], -1, -1, 0);
			note_write(m, u, dst, b * Q, Q,
				   emit_copy(m, u, t, BUF_I, b * Q, dst, b * Q));
		}
		return;
	}
	uint32_t so = c == SCHED_ALLGATHER ? 0 : u * Q;

	note_write(m, u, BUF_O, u * Q, Q, emit_copy(m, u, t, BUF_I, so, BUF_O, u * Q));
}

/* Transfer k's send of chunks [c0, c1) of its block, on channel ch. */
static int emit_send(struct mx *m, size_t k, int32_t ch, uint32_t c0, uint32_t c1,
		     struct ofc_error *err)
{
	const struct xfer *x = &m->s->xfers[k];
	int32_t tb = tb_find(&m->rk[x->src], x->dst, -1, ch);
	unsigned buf;
	uint32_t off;

	if (!locate(m, x->src, x->block, &buf, &off))
		return ofc_error_set(err, OFC_E_INPUT,
				     "transfer %zu: rank %u sends block %u, which it never holds",
				     k, x->src, x->block);
	deps_read(m, x->src, buf, off + c0, c1 - c0);
	struct opref o = emit(m, x->src, tb,
			      (struct mop){.type = "s",
					   .srcbuf = (uint8_t)buf,
					   .srcoff = (int32_t)(off + c0),
					   .dstbuf = BUF_O,
					   .dstoff = -1,
					   .cnt = (int32_t)(c1 - c0)});

	note_read(m, x->src, buf, off + c0, c1 - c0, o);
	return 0;
}

/* Transfer k's receive (and reduction, rrc) of chunks [c0, c1). */
static int emit_recv(struct mx *m, size_t k, int32_t ch, uint32_t c0, uint32_t c1,
		     struct ofc_error *err)
{
	const struct xfer *x = &m->s->xfers[k];
	int32_t tb = tb_find(&m->rk[x->dst], -1, x->src, ch);
	bool red = xfer_op(x) == XFER_REDUCE;
	unsigned buf;
	uint32_t off;

	(void)locate(m, x->dst, x->block, &buf, &off);
	if (buf == BUF_I && m->s->collective == SCHED_ALLGATHER) {
		buf = BUF_O; /* its own block back: a duplicate */
		off = x->dst * m->Q;
	} else if (buf == BUF_I) {
		return ofc_error_set(err, OFC_E_INPUT,
				     "transfer %zu sends rank %u its own data back", k, x->dst);
	}
	deps_write(m, x->dst, buf, off + c0, c1 - c0);
	struct opref o = emit(m, x->dst, tb,
			      (struct mop){.type = "r",
					   .srcbuf = (uint8_t)buf,
					   .srcoff = red ? (int32_t)(off + c0) : -1,
					   .dstbuf = (uint8_t)buf,
					   .dstoff = (int32_t)(off + c0),
					   .cnt = (int32_t)(c1 - c0)});
	struct mop *p = &m->rk[x->dst].tb[o.tb].ops[o.idx];

	if (red)
		memcpy(p->type, "rrc", 4);
	else
		p->srcbuf = BUF_I;
	note_write(m, x->dst, buf, off + c0, c1 - c0, o);
	return 0;
}

/* Every step's transfers: sends read the state before the step, receives
 * write after it. *nchan grows to the channels used; lanes (64 per pair of
 * ranks) and nlanes number each pair's ports. */
static int emit_transfers(struct mx *m, uint16_t *lanes, uint32_t *nlanes, uint32_t *nchan,
			  struct ofc_error *err)
{
	const struct schedule *s = m->s;
	uint32_t n = m->n, Q = m->Q;

	for (uint32_t t = 0; t < s->nsteps; t++)
		for (int phase = 0; phase < 2; phase++)
			for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
				const struct xfer *x = &s->xfers[k];
				size_t pair = (size_t)x->src * n + x->dst;
				uint32_t c0 = msccl_chunk_bound(x->offset, Q);
				uint32_t c1 = msccl_chunk_bound((uint64_t)x->offset + x->length, Q);

				if (x->src >= n || x->dst >= n || x->src == x->dst)
					return ofc_error_set(
					    err, OFC_E_INPUT,
					    "transfer %zu is not between two ranks", k);
				/* Chunks past the block would be past the buffer
				 * for the last one (a file's offset and length
				 * are each within [0, 1], not their sum). */
				if ((uint64_t)x->offset + x->length > SCHED_ONE)
					return ofc_error_set(err, OFC_E_INPUT,
							     "transfer %zu ends past its block", k);
				if (nlanes[pair] >= 64 && x->lane != SCHED_NO_LANE)
					return ofc_error_set(err, OFC_E_INPUT,
							     "more than 64 ports from %u to %u",
							     x->src, x->dst);
				int32_t ch = channel_of(s, x, lanes + pair * 64, &nlanes[pair]);

				if (c1 <= c0)
					continue; /* rounded away */
				ch = ch * (int32_t)m->spread +
				     (int32_t)(m->pair_seq[(size_t)phase * n * n + pair]++ %
					       m->spread);
				ch = ch * (int32_t)m->groups +
				     (int32_t)(((x->dst + n - x->src) % n - 1) /
					       MSCCL_MAX_TB_PER_CH);
				if ((uint32_t)ch + 1 > *nchan)
					*nchan = (uint32_t)ch + 1;
				int rc = phase == 0 ? emit_send(m, k, ch, c0, c1, err)
						    : emit_recv(m, k, ch, c0, c1, err);

				if (rc < 0)
					return -1;
			}
	return 0;
}

/* The most operations one thread block of the program has: what the
 * spread must bring within the runtime's steps. */
static size_t most_ops(const struct mx *m, uint32_t *rank, uint32_t *tb)
{
	size_t most = 0;

	for (uint32_t u = 0; u < m->n; u++)
		for (uint32_t i = 0; i < m->rk[u].ntb; i++)
			if (m->rk[u].tb[i].nops > most) {
				most = m->rk[u].tb[i].nops;
				*rank = u;
				*tb = i;
			}
	return most;
}

/* MSCCL's limits on thread blocks, channels, their operations, counts and
 * offsets, as msccl-executor-nccl's parser checks them; the program's
 * size into info. */
static int check_limits(const struct mx *m, uint32_t nchan, struct msccl_info *info,
			struct ofc_error *err)
{
	uint32_t *per_ch = xcalloc(2 * (size_t)nchan + 1, sizeof(uint32_t));
	int rc = 0;

	if (nchan > MSCCL_MAX_CHANNELS)
		rc = ofc_error_set(err, OFC_E_INPUT,
				   "the program needs %u channels, over MSCCL's %u (fewer ports "
				   "per pair of ranks)",
				   nchan, MSCCL_MAX_CHANNELS);
	for (uint32_t u = 0; u < m->n && rc == 0; u++) {
		const struct rank *r = &m->rk[u];

		size_t nodes = 1 + (size_t)m->n + r->ntb;

		for (uint32_t i = 0; i < r->ntb; i++)
			nodes += r->tb[i].nops;
		info->most_nodes = nodes > info->most_nodes ? nodes : info->most_nodes;
		if (r->ntb > m->lim->tbs) {
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "rank %u needs %u thread blocks, %u over %s's %u", u,
					   r->ntb, r->ntb - m->lim->tbs, m->lim->name, m->lim->tbs);
			break;
		}
		if (nodes > m->lim->nodes) {
			rc = ofc_error_set(
			    err, OFC_E_INPUT,
			    "rank %u's program is %zu XML nodes (its %u thread blocks' %zu "
			    "steps, the <algo> and %u <gpu>), %zu over the %u %s's parser "
			    "reads for a rank (MAX_NODES %u): %s",
			    u, nodes, r->ntb, nodes - 1 - m->n - r->ntb, m->n,
			    nodes - m->lim->nodes, m->lim->nodes, m->lim->name, m->lim->nodes + 1,
			    m->s->collective == SCHED_ALLTOALL
				? "--lowering paths or single (a send per path, not per time "
				  "step)"
				: "a schedule of fewer transfers a rank");
			break;
		}
		memset(per_ch, 0, 2 * (size_t)nchan * sizeof(uint32_t));
		for (uint32_t i = 0; i < r->ntb && rc == 0; i++) {
			const struct mtb *tb = &r->tb[i];

			for (int side = 0; side < 2; side++)
				if ((side ? tb->recv : tb->send) >= 0 &&
				    ++per_ch[2 * (size_t)tb->chan + side] > MSCCL_MAX_TB_PER_CH)
					rc = ofc_error_set(err, OFC_E_INPUT,
							   "rank %u has more than %u %s peers on "
							   "channel %d, MSCCL's most",
							   u, MSCCL_MAX_TB_PER_CH,
							   side ? "receive" : "send", tb->chan);
			for (size_t j = 0; j < tb->nops && rc == 0; j++) {
				const struct mop *o = &tb->ops[j];

				if ((uint32_t)o->cnt >= MSCCL_MAX_COUNT)
					rc = ofc_error_set(err, OFC_E_INPUT,
							   "an operation of %d chunks: MSCCL takes "
							   "fewer than %u",
							   o->cnt, MSCCL_MAX_COUNT);
				else if (o->depid > MSCCL_MAX_DEPID)
					rc = ofc_error_set(err, OFC_E_INPUT,
							   "rank %u depends on thread block %d: "
							   "MSCCL numbers them up to %d",
							   u, o->depid, MSCCL_MAX_DEPID);
				else if (o->srcoff > MSCCL_MAX_OFFSET ||
					 o->dstoff > MSCCL_MAX_OFFSET)
					rc = ofc_error_set(
					    err, OFC_E_INPUT,
					    "rank %u's buffers pass chunk %d, MSCCL's "
					    "last (fewer --chunks)",
					    u, MSCCL_MAX_OFFSET);
			}
			info->thread_blocks += tb->nops ? 1 : 0;
			info->operations += tb->nops;
		}
	}
	free(per_ch);
	return rc;
}

static int write_xml(const struct mx *m, FILE *out, bool exact, uint32_t nchan,
		     struct ofc_error *err)
{
	const struct schedule *s = m->s;
	uint32_t n = m->n, Q = m->Q;

	fprintf(out, "<!-- ofc: %s %s on %s, %u ranks, %u steps; %u chunks per block (%s) -->\n",
		s->algorithm, sched_collective_name(s->collective),
		s->topology[0] ? s->topology : "?", n, s->nsteps, Q,
		exact ? "exact" : "bounds rounded to the nearest chunk");
	fprintf(out,
		"<algo name=\"ofc-%s-%s\" proto=\"Simple\" nchannels=\"%u\" nchunksperloop=\"%u\" "
		"ngpus=\"%u\" coll=\"%s\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" "
		"maxBytes=\"%llu\">\n",
		s->algorithm, sched_collective_name(s->collective), nchan, n * Q, n,
		coll_name(s->collective), (unsigned long long)MSCCL_MAX_BYTES);
	for (uint32_t u = 0; u < n; u++) {
		const struct rank *r = &m->rk[u];

		fprintf(out, "  <gpu id=\"%u\" i_chunks=\"%u\" o_chunks=\"%u\" s_chunks=\"%u\">\n",
			u, r->nchunks[BUF_I], r->nchunks[BUF_O], r->nchunks[BUF_S]);
		for (uint32_t i = 0; i < r->ntb; i++) {
			const struct mtb *tb = &r->tb[i];

			fprintf(out, "    <tb id=\"%u\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", i,
				tb->send, tb->recv, tb->chan);
			for (size_t j = 0; j < tb->nops; j++) {
				const struct mop *o = &tb->ops[j];

				fprintf(out,
					"      <step s=\"%zu\" type=\"%s\" srcbuf=\"%s\" "
					"srcoff=\"%d\" dstbuf=\"%s\" dstoff=\"%d\" cnt=\"%d\" "
					"depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
					j, o->type, buf_name(o->srcbuf), o->srcoff,
					buf_name(o->dstbuf), o->dstoff, o->cnt, o->depid, o->deps,
					o->hasdep ? 1 : 0);
			}
			fprintf(out, "    </tb>\n");
		}
		fprintf(out, "  </gpu>\n");
	}
	fprintf(out, "</algo>\n");
	return ferror(out) ? ofc_error_set(err, OFC_E_RUNTIME, "short write") : 0;
}

static void mx_free(struct mx *m)
{
	for (uint32_t u = 0; u < m->n && m->rk; u++) {
		struct rank *r = &m->rk[u];

		for (uint32_t i = 0; i < r->ntb; i++)
			free(r->tb[i].ops);
		for (unsigned b = 0; b < 3; b++) {
			for (uint32_t c = 0; r->cs[b] && c < r->nchunks[b]; c++)
				free(r->cs[b][c].r);
			free(r->cs[b]);
		}
		free(r->tb);
		free(r->slot);
	}
	free(m->rk);
	free(m->dep);
	free(m->pair_seq);
	m->rk = NULL;
	m->dep = NULL;
	m->pair_seq = NULL;
	m->ndep = 0;
	m->capdep = 0;
}

/* The program at spread m->spread (m->s, n, Q set; the rest built here;
 * lanes and nlanes zeroed). */
static int build(struct mx *m, uint16_t *lanes, uint32_t *nlanes, uint32_t *nchan,
		 struct ofc_error *err)
{
	const struct schedule *s = m->s;
	uint32_t n = m->n;

	m->rk = xcalloc(n, sizeof(*m->rk));
	m->pair_seq = xcalloc(2 * (size_t)n * n + 1, sizeof(uint32_t));
	*nchan = 1;
	for (uint32_t u = 0; u < n; u++) {
		rank_buffers(m, u);
		local_copies(m, u);
	}
	if (emit_transfers(m, lanes, nlanes, nchan, err) < 0)
		return -1;
	/* reduce-scatter: the rank's shard from scratch into the output; where
	 * the copies' last thread block is full, in a peerless one of its own
	 * (its nops, one a thread block that reduced into the shard, on top
	 * of no copies). */
	if (s->collective == SCHED_REDUCE_SCATTER)
		for (uint32_t u = 0; u < n; u++) {
			struct rank *r = &m->rk[u];
			int32_t t = 0;

			for (uint32_t i = 0; i < r->ntb; i++)
				if (r->tb[i].send < 0 && r->tb[i].recv < 0)
					t = (int32_t)i; /* the copies' last */
			if (n > m->lim->steps / 2)
				t = tb_new(r, -1, -1, 0);
			deps_write(m, u, BUF_S, u * m->Q, m->Q);
			emit_copy(m, u, t, BUF_S, u * m->Q, BUF_O, 0);
		}
	return 0;
}

/* The largest buffer of any rank, in blocks (Q chunks each). */
static uint32_t most_blocks(const struct mx *m)
{
	uint32_t most = 0;

	for (uint32_t u = 0; u < m->n; u++)
		for (unsigned b = 0; b < 3; b++)
			if (m->rk[u].nchunks[b] / m->Q > most)
				most = m->rk[u].nchunks[b] / m->Q;
	return most;
}

/* Back to before build, for another try. */
static void rebuild(struct mx *m, uint16_t *lanes, uint32_t *nlanes)
{
	size_t n = m->n;

	mx_free(m);
	memset(lanes, 0, (n * n * 64 + 1) * sizeof(uint16_t));
	memset(nlanes, 0, (n * n + 1) * sizeof(uint32_t));
}

int schedule_write_msccl(const struct schedule *s, enum msccl_runtime rt, FILE *out,
			 struct msccl_info *info, struct ofc_error *err)
{
	return schedule_write_msccl_at(s, rt, 0, out, info, err);
}

int schedule_write_msccl_at(const struct schedule *s, enum msccl_runtime rt, uint32_t q, FILE *out,
			    struct msccl_info *info, struct ofc_error *err)
{
	struct mx m = {.s = s,
		       .n = s->nodes,
		       .spread = 1,
		       .groups = s->nodes > 1 ? (s->nodes - 2) / MSCCL_MAX_TB_PER_CH + 1 : 1,
		       .lim = &msccl_limits[rt]};
	uint32_t max_steps = m.lim->steps;
	uint32_t n = s->nodes, nchan = 1, ports = 1, rank = 0, tb = 0;
	bool exact;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (n < 2 || n > MSCCL_MAX_RANKS)
		return ofc_error_set(err, OFC_E_INPUT, "MSCCL programs here take 2 to %u ranks",
				     MSCCL_MAX_RANKS);
	if (sched_has_spans(s)) { /* a send a block, as the rest */
		struct schedule u;

		sched_unspan(s, &u);
		rc = schedule_write_msccl_at(&u, rt, q, out, info, err);
		sched_free(&u);
		return rc;
	}
	if (msccl_refuse(s, err) < 0)
		return -1;
	m.Q = pick_q(s, &exact);
	if (q && q < MSCCL_MAX_COUNT) { /* the caller's, where it is priced lower */
		m.Q = q;
		exact = exact_at(s, q);
	}
	info->chunks_per_block = m.Q;
	info->exact = exact;
	/* per (src, dst): lanes seen, at most 64 */
	uint16_t *lanes = xcalloc((size_t)n * n * 64 + 1, sizeof(uint16_t));
	uint32_t *nlanes = xcalloc((size_t)n * n + 1, sizeof(uint32_t));

	/* The least spread within the runtime's steps: from what the busiest
	 * thread block needs split evenly, one more while the nops that
	 * splitting adds keep it over (each try is built whole). */
	for (;;) {
		if (build(&m, lanes, nlanes, &nchan, err) < 0)
			goto out;
		if (m.spread == 1)
			ports = nchan;
		uint32_t blocks = most_blocks(&m);

		if (!exact && (uint64_t)blocks * m.Q > MSCCL_MAX_OFFSET + 1u && m.Q > 1) {
			/* Rounded anyway: fewer chunks a block, so the largest
			 * buffer's offsets fit MSCCL's int16_t ones. */
			m.Q = (MSCCL_MAX_OFFSET + 1u) / blocks;
			m.Q = m.Q ? m.Q : 1;
			info->chunks_per_block = m.Q;
			rebuild(&m, lanes, nlanes);
			continue;
		}
		size_t most = most_ops(&m, &rank, &tb);

		if (most <= max_steps)
			break;
		uint32_t next = m.spread + 1,
			 even = (uint32_t)((most * m.spread + max_steps - 1) / max_steps);

		if (m.spread == 1 && even > next)
			next = even;
		if ((uint64_t)next * ports > MSCCL_MAX_CHANNELS) {
			rc = ofc_error_set(
			    err, OFC_E_INPUT,
			    "rank %u, thread block %u has %zu operations on %u channel%s, %zu "
			    "over %s's %u (MSCCL_MAX_NUM_STEPS), and %u channels are MSCCL's "
			    "most: fewer chunks (--chunks)%s",
			    rank, tb, most, nchan, nchan == 1 ? "" : "s", most - max_steps,
			    m.lim->name, max_steps, MSCCL_MAX_CHANNELS,
			    s->collective == SCHED_ALLTOALL
				? ", or --lowering paths or --lowering single (each pair's data "
				  "once along each path, not a transfer per time step)"
				: "");
			goto out;
		}
		rebuild(&m, lanes, nlanes);
		m.spread = next;
	}
	if (check_limits(&m, nchan, info, err) < 0)
		goto out;
	info->channels = nchan;
	rc = write_xml(&m, out, exact, nchan, err);
out:
	mx_free(&m);
	free(lanes);
	free(nlanes);
	return rc;
}
