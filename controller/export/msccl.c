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
 *   the same peer, so parallel circuits are separate connections.
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

#define MSCCL_MAX_Q	64u
#define MSCCL_MAX_STEPS 256u /* per thread block, MSCCL_MAX_NUM_STEPS */
#define MSCCL_MAX_COUNT 72u  /* cnt < 72 */
#define MSCCL_MAX_TBS	216u /* per rank, MSCCL_MAX_NUM_THREAD_BLOCKS */
#define MSCCL_MAX_RANKS 1024u
#define BUF_I		0
#define BUF_O		1
#define BUF_S		2

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
	uint32_t n, Q;
	struct rank *rk;
	/* deps being gathered for one op */
	struct opref *dep;
	uint32_t ndep;
	size_t capdep;
};

static int32_t tb_find(struct rank *r, int32_t send, int32_t recv, int32_t chan)
{
	for (uint32_t i = 0; i < r->ntb; i++)
		if (r->tb[i].send == send && r->tb[i].recv == recv && r->tb[i].chan == chan)
			return (int32_t)i;
	GROW(r->tb, r->captb, (size_t)r->ntb + 1);
	r->tb[r->ntb] = (struct mtb){.send = send, .recv = recv, .chan = chan};
	return (int32_t)r->ntb++;
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

static uint32_t quant(uint64_t fixed, uint32_t Q)
{
	return (uint32_t)((fixed * Q + (SCHED_ONE / 2)) >> 31);
}

/* The smallest Q at which every bound is a chunk bound, else MSCCL_MAX_Q. */
static uint32_t pick_q(const struct schedule *s, bool *exact)
{
	for (uint32_t Q = 1; Q <= MSCCL_MAX_Q; Q++) {
		bool ok = true;

		for (size_t k = 0; k < s->nxfers && ok; k++) {
			uint64_t b[2] = {s->xfers[k].offset,
					 (uint64_t)s->xfers[k].offset + s->xfers[k].length};

			for (int j = 0; j < 2 && ok; j++) {
				uint64_t x = b[j] * Q, q = quant(b[j], Q);
				uint64_t y = q << 31;
				uint64_t d = x > y ? x - y : y - x;

				ok =
				    d <= 2u * Q; /* sched_fix rounds each fraction by half a unit */
			}
		}
		if (ok) {
			*exact = true;
			return Q;
		}
	}
	*exact = false;
	return MSCCL_MAX_Q;
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
	return n * n * (64 * sizeof(uint16_t) + sizeof(uint32_t)) +
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

int schedule_write_msccl(const struct schedule *s, FILE *out, struct msccl_info *info,
			 struct ofc_error *err)
{
	struct mx m = {.s = s, .n = s->nodes};
	uint32_t n = s->nodes, Q, nchan = 1;
	uint16_t *lanes; /* per (src, dst): lanes seen, at most 64 */
	uint32_t *nlanes;
	bool exact;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (n < 2 || n > MSCCL_MAX_RANKS)
		return ofc_error_set(err, OFC_E_INPUT, "MSCCL programs here take 2 to %u ranks",
				     MSCCL_MAX_RANKS);
	if (sched_has_spans(s)) { /* a send a block, as the rest */
		struct schedule u;

		sched_unspan(s, &u);
		rc = schedule_write_msccl(&u, out, info, err);
		sched_free(&u);
		return rc;
	}
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
	Q = m.Q = pick_q(s, &exact);
	info->chunks_per_block = Q;
	info->exact = exact;
	m.rk = xcalloc(n, sizeof(*m.rk));
	lanes = xcalloc((size_t)n * n * 64 + 1, sizeof(uint16_t));
	nlanes = xcalloc((size_t)n * n + 1, sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++) {
		struct rank *r = &m.rk[u];
		uint32_t slots = 0;

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
		case SCHED_BROADCAST: /* refused above */
		case SCHED_REDUCE:
			break;
		}
		for (unsigned b = 0; b < 3; b++) {
			r->cs[b] = xcalloc(r->nchunks[b] + 1, sizeof(struct chunk_state));
			for (uint32_t c = 0; c < r->nchunks[b]; c++)
				r->cs[b][c].w = (struct opref){-1, -1};
		}
		/* Local copies first (thread block 0 of every rank). */
		tb_find(r, -1, -1, 0);
		if (s->collective == SCHED_ALLREDUCE || s->collective == SCHED_REDUCE_SCATTER) {
			unsigned dst = s->collective == SCHED_ALLREDUCE ? BUF_O : BUF_S;

			for (uint32_t b = 0; b < n; b++) {
				struct opref o = emit(&m, u, 0,
						      (struct mop){.type = "cpy",
								   .srcbuf = BUF_I,
								   .srcoff = (int32_t)(b * Q),
								   .dstbuf = dst,
								   .dstoff = (int32_t)(b * Q),
								   .cnt = (int32_t)Q});

				note_write(&m, u, dst, b * Q, Q, o);
			}
		} else {
			/* allgather: own block into the output; all-to-all: the
			 * block a rank sends itself. */
			uint32_t so = s->collective == SCHED_ALLGATHER ? 0 : u * Q;
			struct opref o = emit(&m, u, 0,
					      (struct mop){.type = "cpy",
							   .srcbuf = BUF_I,
							   .srcoff = (int32_t)so,
							   .dstbuf = BUF_O,
							   .dstoff = (int32_t)(u * Q),
							   .cnt = (int32_t)Q});

			note_write(&m, u, BUF_O, u * Q, Q, o);
		}
	}
	for (uint32_t t = 0; t < s->nsteps; t++) {
		/* Sends read the state before the step; receives write after. */
		for (int phase = 0; phase < 2; phase++)
			for (size_t k = s->step_start[t]; k < s->step_start[t + 1]; k++) {
				const struct xfer *x = &s->xfers[k];
				size_t pair = (size_t)x->src * n + x->dst;
				uint32_t c0 = quant(x->offset, Q);
				uint32_t c1 = quant((uint64_t)x->offset + x->length, Q);
				int32_t ch;
				unsigned buf;
				uint32_t off;

				if (x->src >= n || x->dst >= n || x->src == x->dst) {
					ofc_error_set(err, OFC_E_INPUT,
						      "transfer %zu is not between two ranks", k);
					goto out;
				}
				/* Chunks past the block would be past the buffer
				 * for the last one (a file's offset and length
				 * are each within [0, 1], not their sum). */
				if ((uint64_t)x->offset + x->length > SCHED_ONE) {
					ofc_error_set(err, OFC_E_INPUT,
						      "transfer %zu ends past its block", k);
					goto out;
				}
				if (nlanes[pair] >= 64 && x->lane != SCHED_NO_LANE) {
					ofc_error_set(err, OFC_E_INPUT,
						      "more than 64 ports from %u to %u", x->src,
						      x->dst);
					goto out;
				}
				ch = channel_of(s, x, lanes + pair * 64, &nlanes[pair]);
				nchan = (uint32_t)ch + 1 > nchan ? (uint32_t)ch + 1 : nchan;
				if (c1 <= c0)
					continue; /* rounded away */
				if (phase == 0) {
					struct opref o;
					int32_t tb = tb_find(&m.rk[x->src], x->dst, -1, ch);

					if (!locate(&m, x->src, x->block, &buf, &off)) {
						ofc_error_set(err, OFC_E_INPUT,
							      "transfer %zu: rank %u sends block "
							      "%u, which it never holds",
							      k, x->src, x->block);
						goto out;
					}
					deps_read(&m, x->src, buf, off + c0, c1 - c0);
					o = emit(&m, x->src, tb,
						 (struct mop){.type = "s",
							      .srcbuf = (uint8_t)buf,
							      .srcoff = (int32_t)(off + c0),
							      .dstbuf = BUF_O,
							      .dstoff = -1,
							      .cnt = (int32_t)(c1 - c0)});
					note_read(&m, x->src, buf, off + c0, c1 - c0, o);
				} else {
					struct opref o;
					int32_t tb = tb_find(&m.rk[x->dst], -1, x->src, ch);
					bool red = xfer_op(x) == XFER_REDUCE;

					(void)locate(&m, x->dst, x->block, &buf, &off);
					if (buf == BUF_I && s->collective == SCHED_ALLGATHER) {
						buf = BUF_O; /* its own block back: a duplicate */
						off = x->dst * Q;
					} else if (buf == BUF_I) {
						ofc_error_set(err, OFC_E_INPUT,
							      "transfer %zu sends rank %u its own "
							      "data back",
							      k, x->dst);
						goto out;
					}
					deps_write(&m, x->dst, buf, off + c0, c1 - c0);
					o = emit(
					    &m, x->dst, tb,
					    (struct mop){.type = "r",
							 .srcbuf = (uint8_t)buf,
							 .srcoff = red ? (int32_t)(off + c0) : -1,
							 .dstbuf = (uint8_t)buf,
							 .dstoff = (int32_t)(off + c0),
							 .cnt = (int32_t)(c1 - c0)});
					if (red) {
						struct mop *p = &m.rk[x->dst].tb[o.tb].ops[o.idx];

						memcpy(p->type, "rrc", 4);
					} else {
						m.rk[x->dst].tb[o.tb].ops[o.idx].srcbuf = BUF_I;
					}
					note_write(&m, x->dst, buf, off + c0, c1 - c0, o);
				}
			}
	}
	/* reduce-scatter: the rank's shard from scratch into the output. */
	if (s->collective == SCHED_REDUCE_SCATTER)
		for (uint32_t u = 0; u < n; u++) {
			deps_write(&m, u, BUF_S, u * Q, Q);
			emit(&m, u, 0,
			     (struct mop){.type = "cpy",
					  .srcbuf = BUF_S,
					  .srcoff = (int32_t)(u * Q),
					  .dstbuf = BUF_O,
					  .dstoff = 0,
					  .cnt = (int32_t)Q});
		}
	for (uint32_t u = 0; u < n; u++) {
		struct rank *r = &m.rk[u];

		if (r->ntb > MSCCL_MAX_TBS) {
			ofc_error_set(err, OFC_E_INPUT,
				      "rank %u needs %u thread blocks, over MSCCL's %u", u, r->ntb,
				      MSCCL_MAX_TBS);
			goto out;
		}
		for (uint32_t i = 0; i < r->ntb; i++) {
			if (r->tb[i].nops > MSCCL_MAX_STEPS) {
				ofc_error_set(
				    err, OFC_E_INPUT,
				    "rank %u, thread block %u has %zu operations, over "
				    "MSCCL's %u (fewer --chunks, or a schedule with fewer "
				    "transfers per link)",
				    u, i, r->tb[i].nops, MSCCL_MAX_STEPS);
				goto out;
			}
			for (size_t j = 0; j < r->tb[i].nops; j++)
				if ((uint32_t)r->tb[i].ops[j].cnt >= MSCCL_MAX_COUNT) {
					ofc_error_set(err, OFC_E_INPUT,
						      "an operation of %d chunks: MSCCL takes "
						      "fewer than %u",
						      r->tb[i].ops[j].cnt, MSCCL_MAX_COUNT);
					goto out;
				}
			info->thread_blocks += r->tb[i].nops ? 1 : 0;
			info->operations += r->tb[i].nops;
		}
	}
	info->channels = nchan;
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
		struct rank *r = &m.rk[u];

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
	rc = ferror(out) ? ofc_error_set(err, OFC_E_RUNTIME, "short write") : 0;
out:
	for (uint32_t u = 0; u < n; u++) {
		struct rank *r = &m.rk[u];

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
	free(m.rk);
	free(m.dep);
	free(lanes);
	free(nlanes);
	return rc;
}
