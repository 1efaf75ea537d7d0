/* libofc-mpi: one collective call run by a schedule's program.
 *
 * The schedule's blocks are the call's: for all-gather node v's
 * contribution, for reduce-scatter the shard rank v receives, for
 * all-to-all what rank o sends rank t, each at rank_of[v]'s place in the
 * buffer; an allreduce's count is cut into one shard per node taking part
 * (rank r's shard from r * count / n to (r + 1) * count / n); a broadcast
 * is an all-gather schedule's transfers of the root's block, that block
 * being the whole buffer. A part [off, end) of a block of L elements is the
 * elements e with off <= e / L < end (fractions in fixed point, exact), so
 * every element follows the data flow the verifier proved for its point of
 * the block, whatever the count.
 *
 * Steps are self-timed as in ofc's executor: a rank posts its step's
 * receives, then its sends (PMPI_Irecv, PMPI_Isend), and waits for all of
 * them (PMPI_Waitall) before the next step. Every message is cut into
 * pieces under the MPI's eager limit (OFC_MPI_PIECE), so a step's data
 * flows without a rendezvous handshake. A step sends what the rank held at
 * its start: a reducing collective's receives land in a stage and are
 * added (PMPI_Reduce_local, the MPI's own operation) or copied in only
 * after the step's sends are done. Messages travel on the library's own
 * duplicate of MPI_COMM_WORLD, tagged by step, one per transfer and block
 * (or its pieces), in the schedule's order at both ends, so they match
 * without headers. */
#include "exec/mpi/pmpi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *p, size_t *cap, size_t want, size_t size)
{
	if (want <= *cap)
		return p;
	want = want < 2 * *cap ? 2 * *cap : want;
	p = realloc(p, want * size);
	if (!p) {
		fprintf(stderr, "libofc-mpi: out of memory (%zu x %zu bytes)\n", want, size);
		abort();
	}
	*cap = want;
	return p;
}

/* The first element of a block of L at or after fixed-point fraction f. */
static size_t at_frac(uint32_t f, size_t L)
{
	return (size_t)(((uint64_t)f * L + PMPI_FIX_ONE - 1) >> 31);
}

struct where {
	const struct pmpi_sched *sc;
	const struct pmpi_call *c;
	uint32_t me;
	char *work; /* allreduce, allgather, bcast: recvbuf; reduce-scatter: a copy
		       of sendbuf; all-to-all: the relayed blocks */
};

/* Slot of key in the sorted relay set (relay_set: every block this node
 * receives for others is there). */
static size_t relay_slot(const struct pmpi_prog *p, uint64_t key)
{
	size_t lo = 0, hi = p->nrelay;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->relay[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Block (origin, target) at this node: its first byte and elements. NULL
 * when the call has no such block (a broadcast's other origins). */
static char *locate(const struct where *w, uint32_t o, uint32_t t, size_t *L)
{
	const struct pmpi_call *c = w->c;
	const struct pmpi_sched *sc = w->sc;
	size_t n = c->count, es = c->es, slot;

	if (sc->rank_of[o] < 0)
		return NULL;
	slot = (size_t)sc->rank_of[o];
	*L = n;
	switch (c->coll) {
	case PC_ALLREDUCE: {
		size_t a = (size_t)((uint64_t)slot * n / sc->nactive);
		size_t b = (size_t)((uint64_t)(slot + 1) * n / sc->nactive);

		*L = b - a;
		return w->work + a * es;
	}
	case PC_BCAST:
		return o == c->root_node ? w->work : NULL;
	case PC_ALLGATHER:
	case PC_REDUCE_SCATTER:
		return w->work + slot * n * es;
	case PC_ALLTOALL:
		if (o == w->me)
			return (char *)c->sendbuf + (size_t)sc->rank_of[t] * n * es;
		if (t == w->me)
			return (char *)c->recvbuf + slot * n * es;
		return w->work + relay_slot(&sc->prog, (uint64_t)o * sc->nodes + t) * n * es;
	default:
		return NULL;
	}
}

/* Piece k of transfer x at this node: its first byte and elements; false
 * when it holds none (another origin's block of a broadcast, or a part
 * that rounds to no element at this count). */
static bool piece(const struct where *w, const struct pmpi_xfer *x, uint32_t k, char **at,
		  size_t *elems)
{
	size_t L = 0, lo, hi;
	char *base = locate(w, x->origin + k, x->target, &L);

	if (!base)
		return false;
	lo = at_frac(x->off, L);
	hi = at_frac(x->end, L);
	*at = base + lo * w->c->es;
	*elems = hi > lo ? hi - lo : 0;
	return *elems > 0;
}

/* A message's bytes posted as pieces of at most `most` bytes each, in
 * order (the MPI keeps the order of messages between two ranks on one tag,
 * so the pieces match at both ends). */
static int post_pieces(struct pmpi_state *s, char *buf, size_t bytes, size_t most, bool send,
		       int peer, int tag, int *nreq)
{
	int rc = MPI_SUCCESS;

	for (size_t off = 0; off < bytes && rc == MPI_SUCCESS; off += most) {
		int len = (int)(bytes - off < most ? bytes - off : most);
		MPI_Request *r = &s->req[(*nreq)++];

		if (send)
			rc = PMPI_Isend(buf + off, len, MPI_BYTE, peer, tag, s->comm, r);
		else
			rc = PMPI_Irecv(buf + off, len, MPI_BYTE, peer, tag, s->comm, r);
	}
	return rc;
}

/* Step t's messages posted, its receives before its sends: receives in
 * place or (stage) into s->stage, listed in s->staged; sends from where
 * the data is. Each message is cut into pieces of at most s->piece bytes
 * (whole elements), under the MPI's eager limit, so a step's data flows
 * at once instead of waiting, per message, for the rendezvous handshake
 * (whose answer queues behind bulk data on the reverse circuit). */
static int post_step(struct pmpi_state *s, const struct where *w, uint32_t t, bool stage, int *nreq,
		     size_t *nstaged, uint64_t *sent)
{
	const struct pmpi_prog *p = &w->sc->prog;
	size_t es = w->c->es, need = 0, npieces = 0, at = 0, elems, most = SIZE_MAX;
	int tag = (int)(t % PMPI_TAG_MOD), rc = MPI_SUCCESS;
	char *ptr;

	if (s->piece)
		most = s->piece / es > 0 ? s->piece / es * es : es;
	for (uint32_t i = p->first[t]; i < p->first[t + 1]; i++)
		for (uint32_t k = 0; k < p->x[i].nblocks; k++)
			if (piece(w, &p->x[i], k, &ptr, &elems)) {
				npieces += (elems * es - 1) / most + 1;
				need += stage && !p->x[i].send ? elems * es : 0;
			}
	s->stage = grow(s->stage, &s->stage_cap, need, 1);
	s->req = grow(s->req, &s->req_cap, npieces, sizeof(MPI_Request));
	s->status = grow(s->status, &s->status_cap, npieces, sizeof(MPI_Status));
	*nreq = 0;
	*nstaged = 0;
	for (int pass = 0; pass < 2 && rc == MPI_SUCCESS; pass++)
		for (uint32_t i = p->first[t]; i < p->first[t + 1] && rc == MPI_SUCCESS; i++) {
			const struct pmpi_xfer *x = &p->x[i];
			int peer = w->sc->rank_of[x->peer];

			if ((bool)x->send != (pass == 1))
				continue;
			for (uint32_t k = 0; k < x->nblocks && rc == MPI_SUCCESS; k++) {
				if (!piece(w, x, k, &ptr, &elems))
					continue;
				if (x->send) {
					*sent += (uint64_t)(elems * es);
					s->peer_bytes[peer] += (uint64_t)(elems * es);
				} else if (stage) {
					s->staged[(*nstaged)++] =
					    (struct pmpi_staged){at, ptr, elems, x->reduce};
					ptr = (char *)s->stage + at;
					at += elems * es;
				}
				rc =
				    post_pieces(s, ptr, elems * es, most, x->send, peer, tag, nreq);
			}
		}
	return rc;
}

/* The staged receives of a step added or copied in, in the schedule's
 * order. */
static int apply_staged(struct pmpi_state *s, const struct pmpi_call *c, size_t nstaged)
{
	for (size_t i = 0; i < nstaged; i++) {
		const struct pmpi_staged *g = &s->staged[i];
		const char *in = (const char *)s->stage + g->at;
		int rc;

		if (!g->reduce) {
			memcpy(g->dst, in, g->elems * c->es);
			continue;
		}
		rc = PMPI_Reduce_local(in, g->dst, (int)g->elems, c->type, c->op);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* The call's buffers set up before the first step; the work buffer. */
static char *prepare(struct pmpi_state *s, const struct pmpi_sched *sc, const struct pmpi_call *c)
{
	size_t n = c->count, es = c->es, me = (size_t)s->rank;

	switch (c->coll) {
	case PC_ALLREDUCE:
		if (c->sendbuf)
			memcpy(c->recvbuf, c->sendbuf, n * es);
		return c->recvbuf;
	case PC_ALLGATHER:
		if (c->sendbuf)
			memcpy((char *)c->recvbuf + me * n * es, c->sendbuf, n * es);
		return c->recvbuf;
	case PC_REDUCE_SCATTER:
		s->work = grow(s->work, &s->work_cap, (size_t)s->size * n * es, 1);
		memcpy(s->work, c->sendbuf, (size_t)s->size * n * es);
		return s->work;
	case PC_ALLTOALL:
		memcpy((char *)c->recvbuf + me * n * es, (const char *)c->sendbuf + me * n * es,
		       n * es);
		s->work = grow(s->work, &s->work_cap, (size_t)sc->prog.nrelay * n * es, 1);
		return s->work;
	default:
		return c->recvbuf;
	}
}

int pmpi_run(struct pmpi_state *s, const struct pmpi_sched *sc, const struct pmpi_call *c,
	     uint64_t *sent)
{
	const struct pmpi_prog *p = &sc->prog;
	bool stage = c->coll == PC_ALLREDUCE || c->coll == PC_REDUCE_SCATTER;
	struct where w = {sc, c, sc->node_of[s->rank], NULL};
	size_t nstaged;
	int rc = MPI_SUCCESS, nreq;

	s->staged = grow(s->staged, &s->staged_cap, p->max_step_pieces, sizeof(struct pmpi_staged));
	w.work = prepare(s, sc, c);
	for (uint32_t t = 0; t < p->nsteps && rc == MPI_SUCCESS; t++) {
		rc = post_step(s, &w, t, stage, &nreq, &nstaged, sent);
		if (nreq) {
			int wrc = PMPI_Waitall(nreq, s->req, s->status);

			rc = rc == MPI_SUCCESS ? wrc : rc;
		}
		if (rc == MPI_SUCCESS && nstaged)
			rc = apply_staged(s, c, nstaged);
	}
	if (rc == MPI_SUCCESS && c->coll == PC_REDUCE_SCATTER)
		memcpy(c->recvbuf, w.work + (size_t)s->rank * c->count * c->es, c->count * c->es);
	return rc;
}

/* Below the MPI's eager limit by this much: room for its headers (Open
 * MPI's TCP BTL counts its match header, about 56 bytes, in its limit). */
#define PIECE_MARGIN 128
/* MPICH 4.0.2 over UCX 1.13's TCP transport sends by rendezvous from 8,192
 * bytes (UCX_RNDV_THRESH=auto: measured, a send completing before its
 * receive was posted or not), the size of UCX's TCP segment. */
#define UCX_TCP_RNDV 8192
/* Open MPI's TCP BTL eager limit when MPI_T does not say (its default). */
#define OMPI_TCP_EAGER 65536

#ifdef OPEN_MPI
/* Open MPI's btl_tcp_eager_limit (bytes, its header included) as MPI_T
 * reads it, so an --mca or OMPI_MCA_ setting is seen; 0 when unknown. */
static size_t ompi_tcp_eager(void)
{
	int provided, idx, count, verb, bind, scope, nlen = 64, dlen = 0;
	char name[64];
	MPI_Datatype type;
	MPI_T_enum en;
	MPI_T_cvar_handle h;
	unsigned long long v = 0;
	unsigned int u = 0;

	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
		return 0;
	if (MPI_T_cvar_get_index("btl_tcp_eager_limit", &idx) == MPI_SUCCESS &&
	    MPI_T_cvar_get_info(idx, name, &nlen, &verb, &type, &en, NULL, &dlen, &bind, &scope) ==
		MPI_SUCCESS &&
	    MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
		if (count == 1 && (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG ||
				   type == MPI_LONG || type == MPI_LONG_LONG))
			MPI_T_cvar_read(h, &v);
		else if (count == 1 && (type == MPI_UNSIGNED || type == MPI_INT) &&
			 MPI_T_cvar_read(h, &u) == MPI_SUCCESS)
			v = u;
		MPI_T_cvar_handle_free(&h);
	}
	MPI_T_finalize();
	return (size_t)v;
}
#endif

void pmpi_piece_setup(struct pmpi_state *s)
{
	const char *e = getenv("OFC_MPI_PIECE");
	size_t limit = UCX_TCP_RNDV;
	unsigned long long v;
	char *end;

#ifdef OPEN_MPI
	limit = ompi_tcp_eager();
	limit = limit ? limit : OMPI_TCP_EAGER;
#endif
	s->piece = limit > 2 * PIECE_MARGIN ? limit - PIECE_MARGIN : PIECE_MARGIN;
	if (!e || !*e)
		return;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno || *end || e[0] == '-' || v > (unsigned long long)INT_MAX) {
		if (s->rank == 0)
			fprintf(stderr,
				"libofc-mpi: OFC_MPI_PIECE=%s is not a byte count (0 to %d); "
				"messages cut into pieces of %zu bytes\n",
				e, INT_MAX, s->piece);
		return;
	}
	s->piece = (size_t)v;
}
