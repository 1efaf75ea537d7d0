/* libofc-mpi: the MPI functions it defines in front of the MPI's own.
 *
 * MPI_Init and MPI_Init_thread read the schedules (pmpi_sched.c) after the
 * MPI's own init; MPI_Finalize writes the report (pmpi_report.c) before the
 * MPI's own finalize. Each intercepted collective either runs a schedule
 * (pmpi_run.c) or calls the MPI's own (PMPI_), and says which and why in
 * the counts. The choice is made from what every rank of the call sees
 * alike (the schedules' verdicts agreed at MPI_Init, the communicator, the
 * types, the operation, the counts), so all the ranks of a call choose the
 * same way. */
#include "exec/mpi/pmpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pmpi_state pmpi_state;

const char *const pmpi_coll_names[PC_COUNT] = {
    "MPI_Allreduce", "MPI_Allgather", "MPI_Reduce_scatter_block", "MPI_Alltoall", "MPI_Bcast"};

const char *const pmpi_reason_names[PR_COUNT] = {
    [PR_NO_SCHEDULE] = "no_schedule",
    [PR_BAD_SCHEDULE] = "bad_schedule",
    [PR_HOSTS] = "hosts",
    [PR_RANK_COUNT] = "rank_count",
    [PR_COMMUNICATOR] = "communicator",
    [PR_DATATYPE] = "datatype",
    [PR_OP] = "op",
    [PR_IN_PLACE] = "in_place",
    [PR_SIZE] = "size",
    [PR_THREAD_MULTIPLE] = "thread_multiple",
    [PR_INVALID_ARGS] = "invalid_args",
    [PR_NO_OFCD] = "no_ofcd",
};

static void setup(int provided)
{
	struct pmpi_state *s = &pmpi_state;

	PMPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &s->size);
	PMPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
	s->thread_multiple = provided == MPI_THREAD_MULTIPLE;
	s->peer_bytes = calloc((size_t)s->size, sizeof(uint64_t));
	if (!s->peer_bytes)
		abort();
	pmpi_piece_setup(s);
	pmpi_sched_load(s);
	s->ready = true;
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;

	if (rc == MPI_SUCCESS) {
		PMPI_Query_thread(&provided);
		setup(provided);
	}
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		setup(*provided);
	return rc;
}

int MPI_Finalize(void)
{
	struct pmpi_state *s = &pmpi_state;

	if (s->ready) {
		pmpi_report(s);
		PMPI_Comm_free(&s->comm);
		pmpi_sched_free(s);
		free(s->peer_bytes);
		free(s->work);
		free(s->stage);
		free(s->req);
		free(s->status);
		free(s->staged);
		memset(s, 0, sizeof(*s));
	}
	return PMPI_Finalize();
}

/* A predefined type whose elements lie end to end: its size; else 0. */
static size_t basic_size(MPI_Datatype t)
{
	int ni, na, nd, comb, size = 0;
	MPI_Aint lb, extent;

	if (t == MPI_DATATYPE_NULL ||
	    PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
	    comb != MPI_COMBINER_NAMED || PMPI_Type_size(t, &size) != MPI_SUCCESS ||
	    PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS || size <= 0 || lb != 0 ||
	    extent != size)
		return 0;
	return (size_t)size;
}

/* MPI's predefined reductions (commutative all); not MPI_REPLACE or
 * MPI_NO_OP, which no collective reduction takes. */
static bool builtin_op(MPI_Op op)
{
	const MPI_Op ops[] = {MPI_SUM,	MPI_PROD, MPI_MAX, MPI_MIN,  MPI_LAND,	 MPI_LOR,
			      MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (op == ops[i])
			return true;
	return false;
}

static bool world_group(MPI_Comm comm)
{
	int r = MPI_UNEQUAL;

	if (comm == MPI_COMM_WORLD)
		return true;
	if (comm == MPI_COMM_NULL || PMPI_Comm_compare(comm, MPI_COMM_WORLD, &r) != MPI_SUCCESS)
		return false;
	return r == MPI_IDENT || r == MPI_CONGRUENT;
}

/* The schedule a call of kind k on comm would run, or NULL and why not. */
static const struct pmpi_sched *choose(struct pmpi_state *s, enum pmpi_kind k, MPI_Comm comm,
				       int *why)
{
	const struct pmpi_sched *sc;

	if (s->thread_multiple) {
		*why = PR_THREAD_MULTIPLE;
		return NULL;
	}
	if (s->watch && world_group(comm))
		pmpi_sched_watch(s);
	if (s->for_kind[k] < 0) {
		*why = s->unknown_refused ? PR_BAD_SCHEDULE : PR_NO_SCHEDULE;
		return NULL;
	}
	sc = &s->sched[s->for_kind[k]];
	if (sc->error[0]) {
		*why = (int)sc->refused;
		return NULL;
	}
	if (!world_group(comm)) {
		*why = PR_COMMUNICATOR;
		return NULL;
	}
	return sc;
}

/* Whether c (its type, op and counts set) can run on sc: -1, else why not. */
static int servable(struct pmpi_call *c, int count, bool reduce)
{
	if (!(c->es = basic_size(c->type)))
		return PR_DATATYPE;
	if (reduce && !builtin_op(c->op))
		return PR_OP;
	if (count <= 0)
		return count < 0 ? PR_INVALID_ARGS : PR_SIZE;
	if ((size_t)count * c->es > (size_t)INT_MAX)
		return PR_SIZE;
	c->count = (size_t)count;
	return -1;
}

static void account(struct pmpi_state *s, enum pmpi_coll k, int why, MPI_Datatype t, size_t elems,
		    double t0, uint64_t sent)
{
	struct pmpi_stats *st = &s->stats[k];
	double dt = PMPI_Wtime() - t0;
	int size = 0;

	if (t != MPI_DATATYPE_NULL)
		PMPI_Type_size(t, &size);
	st->calls++;
	st->bytes += (uint64_t)elems * (uint64_t)(size > 0 ? size : 0);
	st->seconds += dt;
	if (why < 0) {
		st->ofc_calls++;
		st->ofc_seconds += dt;
		st->sent_bytes += sent;
	} else {
		st->fallbacks[why]++;
	}
}

/* One intercepted call, in the order every collective takes: the schedule
 * chosen (attempt_begin), the call's own arguments checked (the wrapper
 * sets why), the schedule run when nothing refused it (attempt_run), else
 * the MPI's own collective, and the call counted (attempt_end). */
struct attempt {
	struct pmpi_state *s;
	const struct pmpi_sched *sc; /* NULL: the MPI's own runs */
	int why;		     /* -1: ofc's schedule serves the call; else a PR_ */
	int rc;
	double t0;
	uint64_t sent;
};

static struct attempt attempt_begin(enum pmpi_kind k, MPI_Comm comm)
{
	struct attempt a = {&pmpi_state, NULL, PR_NO_SCHEDULE, MPI_SUCCESS, PMPI_Wtime(), 0};

	if (a.s->ready)
		a.sc = choose(a.s, k, comm, &a.why);
	return a;
}

/* Runs c on the chosen schedule when nothing refused it; false: the
 * wrapper calls the MPI's own collective into a->rc. */
static bool attempt_run(struct attempt *a, const struct pmpi_call *c)
{
	if (!a->sc || a->why >= 0)
		return false;
	a->rc = pmpi_run(a->s, a->sc, c, &a->sent);
	return true;
}

static int attempt_end(struct attempt *a, enum pmpi_coll k, MPI_Datatype t, size_t elems)
{
	if (a->s->ready)
		account(a->s, k, a->why, t, elems, a->t0, a->sent);
	return a->rc;
}

static size_t elems(int count, int blocks)
{
	return (size_t)(count > 0 ? count : 0) * (size_t)blocks;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
		  MPI_Comm comm)
{
	struct pmpi_call c = {
	    PC_ALLREDUCE, sendbuf == MPI_IN_PLACE ? NULL : sendbuf, recvbuf, 0, 0, type, op, 0};
	struct attempt a = attempt_begin(PK_ALLREDUCE, comm);

	if (a.sc)
		a.why = servable(&c, count, true);
	if (!attempt_run(&a, &c))
		a.rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
	return attempt_end(&a, PC_ALLREDUCE, type, elems(count, 1));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
			     MPI_Op op, MPI_Comm comm)
{
	struct pmpi_call c = {PC_REDUCE_SCATTER, sendbuf, recvbuf, 0, 0, type, op, 0};
	struct attempt a = attempt_begin(PK_REDUCE_SCATTER, comm);

	if (a.sc)
		a.why = sendbuf == MPI_IN_PLACE ? PR_IN_PLACE : servable(&c, recvcount, true);
	if (!attempt_run(&a, &c))
		a.rc = PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
	return attempt_end(&a, PC_REDUCE_SCATTER, type, elems(recvcount, a.s->size));
}

/* All-gather and all-to-all: the same count and type at both ends (a
 * type signature the MPI would match in other ways falls back). */
static int same_ends(struct pmpi_call *c, int scount, MPI_Datatype stype, int rcount,
		     MPI_Datatype rtype)
{
	if (c->sendbuf && (scount != rcount || stype != rtype))
		return PR_DATATYPE;
	return servable(c, rcount, false);
}

int MPI_Allgather(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, int rcount,
		  MPI_Datatype rtype, MPI_Comm comm)
{
	struct pmpi_call c = {PC_ALLGATHER,
			      sendbuf == MPI_IN_PLACE ? NULL : sendbuf,
			      recvbuf,
			      0,
			      0,
			      rtype,
			      MPI_OP_NULL,
			      0};
	struct attempt a = attempt_begin(PK_ALLGATHER, comm);

	if (a.sc)
		a.why = same_ends(&c, scount, stype, rcount, rtype);
	if (!attempt_run(&a, &c))
		a.rc = PMPI_Allgather(sendbuf, scount, stype, recvbuf, rcount, rtype, comm);
	return attempt_end(&a, PC_ALLGATHER, rtype, elems(rcount, a.s->size));
}

int MPI_Alltoall(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, int rcount,
		 MPI_Datatype rtype, MPI_Comm comm)
{
	struct pmpi_call c = {PC_ALLTOALL, sendbuf, recvbuf, 0, 0, rtype, MPI_OP_NULL, 0};
	struct attempt a = attempt_begin(PK_ALLTOALL, comm);

	if (a.sc)
		a.why = sendbuf == MPI_IN_PLACE ? PR_IN_PLACE
						: same_ends(&c, scount, stype, rcount, rtype);
	if (!attempt_run(&a, &c))
		a.rc = PMPI_Alltoall(sendbuf, scount, stype, recvbuf, rcount, rtype, comm);
	return attempt_end(&a, PC_ALLTOALL, rtype, elems(rcount, a.s->size));
}

/* A broadcast runs an all-gather schedule's transfers of the root's block. */
int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	struct pmpi_call c = {PC_BCAST, NULL, buffer, 0, 0, type, MPI_OP_NULL, 0};
	struct attempt a = attempt_begin(PK_ALLGATHER, comm);

	if (a.sc) {
		a.why =
		    root < 0 || root >= a.s->size ? PR_INVALID_ARGS : servable(&c, count, false);
		if (a.why < 0)
			c.root_node = a.sc->node_of[root];
	}
	if (!attempt_run(&a, &c))
		a.rc = PMPI_Bcast(buffer, count, type, root, comm);
	return attempt_end(&a, PC_BCAST, type, elems(count, 1));
}
