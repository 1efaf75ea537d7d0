/* libofc-mpi's private header: a PMPI library, preloaded under an
 * unmodified MPI program, that runs ofc's collective schedules with
 * point-to-point messages (docs/mpi.md).
 *
 * One source for both MPIs of Debian: built with MPICH's mpicc into
 * libofc-mpi.so and with Open MPI's into libofc-mpi-openmpi.so (their ABIs
 * differ: MPI_Comm is an int in one, a pointer in the other).
 *
 * The library's state is one process-wide struct (pmpi_state): the MPI
 * profiling interface gives the wrappers no context argument, so this is
 * the one place in ofc with a mutable global. It is touched only from the
 * thread that calls MPI (a job that asks for MPI_THREAD_MULTIPLE gets the
 * MPI's own collectives, counted). */
#ifndef OFC_PMPI_H
#define OFC_PMPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMPI_FIX_ONE	(1u << 31) /* a whole block, as SCHED_ONE in sched/sched.h */
#define PMPI_MAX_NODES	65535u
#define PMPI_MAX_FILE	(512u << 20) /* a schedule file's bytes */
#define PMPI_HOST_MAX	256
#define PMPI_ERROR_MAX	512
#define PMPI_MAX_SCHEDS 8
#define PMPI_TAG_MOD	32768

/* The collectives the library intercepts, in the report's order. */
enum pmpi_coll { PC_ALLREDUCE, PC_ALLGATHER, PC_REDUCE_SCATTER, PC_ALLTOALL, PC_BCAST, PC_COUNT };

/* What a schedule file holds: ofc's collective names. */
enum pmpi_kind { PK_ALLREDUCE, PK_ALLGATHER, PK_REDUCE_SCATTER, PK_ALLTOALL, PK_COUNT };

/* Why a call ran the MPI's own collective. Every fallback has one. */
enum pmpi_reason {
	PR_NO_SCHEDULE,	    /* no schedule for this collective was given */
	PR_BAD_SCHEDULE,    /* the schedule was refused at MPI_Init (report: schedules) */
	PR_HOSTS,	    /* the ranks' hosts are not the schedule's nodes */
	PR_RANK_COUNT,	    /* the job's ranks are not as many as the schedule's nodes */
	PR_COMMUNICATOR,    /* the communicator's group is not MPI_COMM_WORLD's */
	PR_DATATYPE,	    /* a derived or non-contiguous type, or send/recv types differ */
	PR_OP,		    /* a user-defined operation */
	PR_IN_PLACE,	    /* MPI_IN_PLACE where the library does not take it */
	PR_SIZE,	    /* an empty call, or pieces too large for one message */
	PR_THREAD_MULTIPLE, /* the job asked for MPI_THREAD_MULTIPLE */
	PR_INVALID_ARGS,    /* arguments the MPI's own call reports as an error */
	PR_NO_OFCD,	    /* OFC_SCHEDULE=ofcd and ofcd did not answer */
	PR_COUNT
};

/* One of my transfers: node `me` sends (send) or receives the part
 * [off, end) (fixed point) of blocks origin .. origin + nblocks - 1
 * (all-to-all: of block (origin, target)) to or from node peer. */
struct pmpi_xfer {
	uint32_t peer, origin, target, nblocks;
	uint32_t off, end;
	uint8_t send, reduce;
};

/* A schedule as one node runs it: its transfers, step by step, in the
 * schedule's order (both ends of a pair see the same order, so messages
 * match without headers). */
struct pmpi_prog {
	uint32_t nsteps;
	uint32_t *first; /* [nsteps + 1] into x */
	struct pmpi_xfer *x;
	uint32_t max_step_pieces; /* the most messages one step posts */
	/* All-to-all: blocks (origin * nodes + target) this node relays,
	 * sorted; slot i of the relay buffer holds relay[i]. */
	uint64_t *relay;
	uint32_t nrelay;
};

struct pmpi_sched {
	char *file; /* as OFC_SCHEDULE names it (owned) */
	enum pmpi_kind kind;
	bool kind_known; /* the file said which collective */
	char algorithm[64], topology[128];
	uint32_t nodes;
	uint64_t transfers;
	double time_us; /* ofc's prediction, at size_bytes */
	uint64_t size_bytes;
	bool *failed; /* [nodes]: takes no part */
	uint32_t nactive;
	char **names;		    /* [nodes] host names, NULL when the schedule names none */
	struct pmpi_prog prog;	    /* this rank's node */
	char error[PMPI_ERROR_MAX]; /* refused: why ("" when usable) */
	enum pmpi_reason refused;   /* PR_BAD_SCHEDULE, PR_HOSTS or PR_RANK_COUNT */
	int *rank_of;		    /* [nodes] world rank, -1 failed */
	uint32_t *node_of;	    /* [world size] */
};

struct pmpi_stats {
	uint64_t calls, ofc_calls, bytes, sent_bytes;
	uint64_t fallbacks[PR_COUNT];
	double seconds, ofc_seconds;
};

/* A receive of a reducing collective, staged until the step's sends are
 * done (they send what the node held at the start of the step). */
struct pmpi_staged {
	size_t at; /* in stage */
	char *dst;
	size_t elems;
	bool reduce;
};

struct pmpi_state {
	bool ready;
	int rank, size;
	MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD: the schedule's messages */
	bool thread_multiple;
	char host[PMPI_HOST_MAX];
	char (*hosts)[PMPI_HOST_MAX]; /* [size]: every rank's host */
	struct pmpi_sched sched[PMPI_MAX_SCHEDS];
	uint32_t nsched;
	int for_kind[PK_COUNT]; /* index into sched, -1 none */
	bool unknown_refused;	/* a file refused before it said its collective */
	/* OFC_SCHEDULE_WATCH=1: each collective on MPI_COMM_WORLD's group
	 * starts with rank 0 saying whether the files changed (pmpi_sched_watch) */
	bool watch;
	bool from_ofcd;	    /* OFC_SCHEDULE=ofcd (pmpi_ofcd.c) */
	uint64_t signature; /* rank 0's view of the files, or of ofcd's answers */
	double polled;	    /* ofcd: when rank 0 last asked (MPI_Wtime) */
	uint64_t replans;   /* schedules taken anew while the job ran */
	char job[64];	    /* ofcd, watching: rank 0's HOST/PID (GetSchedule.job); "" */
	char mapping[32];   /* how ranks were matched to nodes */
	size_t piece;	    /* a message's most bytes (pmpi_piece_setup); 0: uncut */
	struct pmpi_stats stats[PC_COUNT];
	uint64_t *peer_bytes; /* [size]: bytes sent to each rank by the schedules */
	/* Scratch, grown as calls need it, freed at MPI_Finalize. */
	void *work, *stage;
	size_t work_cap, stage_cap;
	MPI_Request *req;
	MPI_Status *status; /* [status_cap]: gcc 12 takes MPI_STATUSES_IGNORE for an
			       empty array and refuses the call */
	size_t status_cap;
	struct pmpi_staged *staged; /* where staged receives go */
	size_t req_cap, staged_cap;
};

extern struct pmpi_state pmpi_state;

extern const char *const pmpi_coll_names[PC_COUNT];
extern const char *const pmpi_kind_names[PK_COUNT];
extern const char *const pmpi_reason_names[PR_COUNT];

/* pmpi_sched.c: the schedules of OFC_SCHEDULE (files separated by ':'),
 * read, checked, mapped to the ranks and cut to this rank's program. Every
 * rank ends with the same verdict on each (agreed through the world
 * communicator): a schedule one rank refuses, none uses. Messages go to
 * stderr, from rank 0 for what every rank sees alike. */
void pmpi_sched_load(struct pmpi_state *s);
void pmpi_sched_free(struct pmpi_state *s);
/* A re-plan taken at a collective boundary: called by every rank at the
 * start of each collective on MPI_COMM_WORLD's group (so the same calls
 * on all), before the call chooses its schedule. */
void pmpi_sched_watch(struct pmpi_state *s);

/* pmpi_ofcd.c: collective's schedule from ofcd for the job's partition
 * (named into buf, n bytes; NULL: the whole fabric), packed; NULL with why
 * (unreachable: ofcd did not answer at all). */
const char *pmpi_ofcd_partition(char *buf, size_t n);
/* job: the job's name (ofcd counts it as running its schedules); taking:
 * the job will run the answer (a load), not a poll for changes. */
uint8_t *pmpi_ofcd_schedule(const char *collective, const char *job, bool taking, size_t *len,
			    bool *unreachable, char *why, size_t n);
/* pmpi_gateway.c: a packed Request through ofc-gateway's POST /v1/call
 * (OFC_GATEWAY, the client certificate OFC_CERT and OFC_KEY, OFC_CACERT):
 * the answer's first frame (a packed Response, *len bytes), or NULL with
 * why. */
uint8_t *pmpi_gateway_call(const uint8_t *req, size_t req_len, size_t *len, double timeout,
			   char *why, size_t n);
/* The report (an Ofc__V1__ReportMpi, pmpi_report.c) sent to ofcd: 0 and
 * ofcd's words in why, or -1 and why not. */
struct Ofc__V1__ReportMpi;
int pmpi_ofcd_report(struct Ofc__V1__ReportMpi *r, char *why, size_t n);

/* pmpi_run.c: one call run by a schedule's program. Buffers are as the
 * call's (recvbuf holds the result); es the element size; counts in
 * elements. Returns an MPI error code. */
struct pmpi_call {
	enum pmpi_coll coll;
	const void *sendbuf; /* NULL: in place (the data is in recvbuf) */
	void *recvbuf;
	size_t count; /* allreduce, bcast: the whole; the others: per block */
	size_t es;
	MPI_Datatype type;
	MPI_Op op;
	uint32_t root_node; /* bcast */
};
int pmpi_run(struct pmpi_state *s, const struct pmpi_sched *sc, const struct pmpi_call *c,
	     uint64_t *sent);
/* The most bytes one of the library's messages holds: OFC_MPI_PIECE, else
 * just under the MPI's eager limit (Open MPI: its TCP BTL's, read through
 * MPI_T; MPICH: UCX's TCP rendezvous threshold). */
void pmpi_piece_setup(struct pmpi_state *s);

/* pmpi_report.c: the counts of every rank gathered to rank 0, written as
 * JSON to OFC_MPI_REPORT and, with OFC_SCHEDULE=ofcd, sent to ofcd for the
 * job's partition (collective: every rank calls it). */
void pmpi_report(struct pmpi_state *s);
/* Rank 0: ofcd told (ReportMpi.taken) that every rank runs the schedules
 * of the job's last loads: 0, or -1 and why not. */
int pmpi_report_taken(const struct pmpi_state *s, char *why, size_t n);

#endif
