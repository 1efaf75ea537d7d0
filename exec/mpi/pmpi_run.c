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
 * receives and sends (PMPI_Irecv, PMPI_Isend) and waits for all of them
 * (PMPI_Waitall) before the next step. A step sends what the rank held at
 * its start: a reducing collective's receives land in a stage and are
 * added (PMPI_Reduce_local, the MPI's own operation) or copied in only
 * after the step's sends are done. Messages travel on the library's own
 * duplicate of MPI_COMM_WORLD, tagged by step, one per transfer and block,
 * in the schedule's order at both ends, so they match without headers. */
#include "exec/mpi/pmpi.h"

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

/* Step t's messages posted: sends from where the data is, receives in
 * place or (stage) into s->stage, listed in s->staged. */
static int post_step(struct pmpi_state *s, const struct where *w, uint32_t t, bool stage, int *nreq,
		     size_t *nstaged, uint64_t *sent)
{
	const struct pmpi_prog *p = &w->sc->prog;
	size_t es = w->c->es, need = 0, at = 0, elems;
	int tag = (int)(t % PMPI_TAG_MOD), rc = MPI_SUCCESS;
	char *ptr;

	for (uint32_t i = p->first[t]; stage && i < p->first[t + 1]; i++)
		for (uint32_t k = 0; !p->x[i].send && k < p->x[i].nblocks; k++)
			if (piece(w, &p->x[i], k, &ptr, &elems))
				need += elems * es;
	s->stage = grow(s->stage, &s->stage_cap, need, 1);
	*nreq = 0;
	*nstaged = 0;
	for (uint32_t i = p->first[t]; i < p->first[t + 1] && rc == MPI_SUCCESS; i++) {
		const struct pmpi_xfer *x = &p->x[i];
		int peer = w->sc->rank_of[x->peer];

		for (uint32_t k = 0; k < x->nblocks && rc == MPI_SUCCESS; k++) {
			MPI_Request *r = &s->req[*nreq];
			int bytes;

			if (!piece(w, x, k, &ptr, &elems))
				continue;
			bytes = (int)(elems * es);
			(*nreq)++;
			if (x->send) {
				rc = PMPI_Isend(ptr, bytes, MPI_BYTE, peer, tag, s->comm, r);
				*sent += (uint64_t)bytes;
				s->peer_bytes[peer] += (uint64_t)bytes;
			} else if (stage) {
				struct pmpi_staged *g = &s->staged[(*nstaged)++];

				*g = (struct pmpi_staged){at, ptr, elems, x->reduce};
				rc = PMPI_Irecv((char *)s->stage + at, bytes, MPI_BYTE, peer, tag,
						s->comm, r);
				at += (size_t)bytes;
			} else {
				rc = PMPI_Irecv(ptr, bytes, MPI_BYTE, peer, tag, s->comm, r);
			}
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

	s->req = grow(s->req, &s->req_cap, p->max_step_pieces, sizeof(MPI_Request));
	s->status = grow(s->status, &s->status_cap, p->max_step_pieces, sizeof(MPI_Status));
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
