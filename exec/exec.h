/* exec — run a schedule over real sockets: one agent per host, each a thread
 * that enters its host's network namespace, opens TCP connections on the
 * circuits the schedule uses, and follows the schedule step by step
 * (sending what it held at the start of the step, relaying what it
 * received in earlier ones, adding into its copy where a transfer says
 * reduce), then checks every element it ends with against the expected
 * result of the collective.
 *
 * Data: elements are uint32; node u's input element i of block b is a hash
 * of (u, b, i), and reductions are sums modulo 2^32, so the expected
 * result is exact and independent of the order of the additions. Block b
 * holds M / N bytes (M = the size per node; rounded down to whole
 * elements): for allgather node b's contribution, for reduce-scatter and
 * allreduce shard b, for all-to-all what node b / N sends node b % N.
 *
 * Steps are self-timed, as in NCCL and MSCCL runtimes: a host starts step
 * t + 1 when it has sent and received everything of step t; there is no
 * global barrier between steps. Within a step a host sends the data it
 * held at the start of the step (reduce collectives stage it first, since
 * a reduce received in the same step changes it), so data received in step
 * t is forwarded in step t + 1 at the earliest, as the verifier assumes.
 * Both ends know the schedule, so the bytes on a connection carry no
 * headers: the receiver knows which transfer each byte belongs to.
 *
 * The transfers of host u on lane p go on one connection to the far end of
 * u's circuit p (its address on the circuit, so the kernel sends it down
 * that veth); transfers without a lane (logical peers, e.g. Swing) go to
 * the peer's host address and follow the routes the testbed installed.
 *
 * Every wait has an absolute deadline; every buffer is bounded: a host
 * holds the blocks it ever touches, and a step's staged sends; the run is
 * refused, with its figure, when it does not fit the memory limit.
 *
 * Hosts in one namespace (exec_net.netns NULL, tests) listen each on its
 * own address, host_addr[u], so that loopback's 127/8 holds them all. */
#ifndef OFC_EXEC_H
#define OFC_EXEC_H

#include "sched/sched.h"
#include "util/util.h"

#define EXEC_MAX_HOSTS 256u

/* Where the hosts are and how they reach each other. Addresses are IPv4 in
 * host byte order. */
struct exec_net {
	uint32_t nhosts;
	const char *const *netns;   /* namespace per host (under /run/netns); NULL:
				       every host in the caller's namespace, on
				       its own address */
	uint32_t lanes;		    /* ports per host */
	const uint32_t *lane_peer;  /* [u * lanes + p]: host at the far end, UINT32_MAX none */
	const uint32_t *lane_addr;  /* [u * lanes + p]: address of the far end */
	const uint32_t *lane_local; /* [u * lanes + p]: u's address on that circuit */
	const uint32_t *host_addr;  /* [u]: the host's routed address */
	uint16_t tcp_port;	    /* every agent listens on it in its namespace */
};

struct exec_opts {
	uint64_t size; /* M: bytes per node */
	/* Absolute, on the now_seconds() clock: the caller's, so that reading
	 * the schedule and setting up count. */
	double deadline;
	/* Refuse a run that would take the process (what it holds already and
	 * the run: exec_memory) past this; 0: half the machine's memory. */
	uint64_t max_memory;
	uint64_t seed; /* input data; 0: fixed default */
	/* An all-to-all of skewed pairs: block b (origin x N +
	 * target) holds its weight times M / N (verify_opts.block_weight's
	 * meaning), a block of weight 0 nothing and unchecked. NULL: all 1. */
	const double *block_weight;
	bool step_times; /* fill exec_result.step_end (8 bytes a step) */
	/* Called from the caller's thread about ten times a second while the
	 * agents run: the lowest step any host is in. */
	void (*progress)(void *ctx, uint32_t step, uint32_t nsteps, double seconds);
	void *ctx;
};

struct exec_result {
	double seconds;	      /* start (all connected) to the last host's last step */
	double *host_seconds; /* per host, when it finished (caller frees) */
	double *step_end; /* step_times: [t] when the last host finished step t (caller frees) */
	uint32_t nsteps;
	uint64_t block_bytes;	/* bytes per block as run */
	uint64_t payload_bytes; /* sent over all sockets */
	uint32_t connections;
	/* The data check: elements (4 bytes) that differ from the expected
	 * result, and the first of them. */
	bool data_ok;
	uint64_t bad_elements;
	uint64_t checked_elements;
	char first_bad[200];
};

/* Run s on the hosts of net. Returns 0 when the run completed (r->data_ok
 * says whether the data is right); -1 on a setup error, a broken
 * connection or the deadline. */
int exec_run(const struct schedule *s, const struct exec_net *net, const struct exec_opts *o,
	     struct exec_result *r, struct ofc_error *err);
void exec_result_free(struct exec_result *r);
/* What exec_run holds beyond the schedule, before the schedule is read
 * from its counts (spans counted as one transfer: exec_run
 * checks their copy itself): every host's blocks at size bytes per host
 * (all-to-all: its own and one per transfer at each end) and the expected
 * result, for the reduce collectives a stage of up to what a host holds,
 * 44 bytes a transfer and 16 a step each host takes part in, and with
 * step_times 8 bytes a step. exec_run refuses with the same figure from
 * the schedule itself (the stages then exact). */
uint64_t exec_memory_bound(enum sched_collective c, uint32_t nodes, uint32_t lanes, uint64_t nsteps,
			   uint64_t nxfers, uint64_t size, bool step_times);

/* ---- link probes (exec/probe.c) --------------------------------------------
 * For each lane of each host, one connection to the far end: a few small
 * stamped messages give the one-way latency (the hosts share this
 * machine's monotonic clock), then every link at once sends as fast as it
 * takes bytes for `seconds`, and the far end's rate is what the link
 * carried with all the others loaded. timeout bounds the whole (an
 * absolute deadline from the call). */
struct exec_probe {
	uint32_t host, lane, peer;
	double latency; /* seconds, the least of the stamped messages */
	double rate;	/* bits/s of payload */
	uint64_t bytes; /* payload received */
	bool ok;
};
int exec_probe_links(const struct exec_net *net, double seconds, double timeout,
		     struct exec_probe **out, uint32_t *n, struct ofc_error *err);

/* ---- the MPI baseline (exec/mpi.c) -------------------------------------------
 * MPICH's own collective on the same hosts: mpiexec starts one
 * ofc-mpi-rank per host; rank h enters net->netns[h] and has UCX use TCP on
 * `device`, the interface holding the host's address (the caller puts it
 * there). Every element of the result is checked by the ranks. */
struct exec_mpi_opts {
	const char *collective; /* allreduce, alltoall, allgather, reduce-scatter */
	const char *device;
	uint64_t size;	     /* bytes per host, as exec_run */
	uint32_t iterations; /* timed, after one warm-up; 0: 3 */
	double timeout;	     /* seconds for the whole job (deadline), > 0 */
};
struct exec_mpi_result {
	double seconds; /* mean per collective, the slowest rank's */
	bool data_ok;
	uint64_t checked_elements, bad_elements;
	bool finalize_hung; /* the result came; MPI_Finalize did not end, the job was stopped */
};
int exec_mpi_run(const struct exec_net *net, const struct exec_mpi_opts *o,
		 struct exec_mpi_result *r, struct ofc_error *err);

/* ---- any MPI program on the hosts (exec/mpi.c) -------------------------------
 * PROGRAM as one rank per host of net, started by MPICH's mpiexec or Open
 * MPI's through ofc-netns-exec (beside the running executable, or
 * $OFC_NETNS_EXEC), which enters host h's namespace for rank h, says the
 * host's name in OFC_HOST and preloads libofc-mpi (preload) with the
 * schedules and the report path in its variables. The job runs in a
 * process group of its own, stopped at the deadline. */
struct exec_mpirun_opts {
	bool openmpi;
	const char *preload;	  /* the library's path; NULL: the MPI's own collectives */
	const char *schedules;	  /* OFC_SCHEDULE */
	const char *report;	  /* OFC_MPI_REPORT; once it is there the job has a
				     few seconds to exit before it is stopped */
	const char *device;	  /* the host's device (UCX_NET_DEVICES, btl_tcp_if_include) */
	const char *const *hosts; /* [host] the fabric's name of each */
	char *const *argv;	  /* PROGRAM ARGS..., NULL-terminated */
	const char *dir;	  /* where the hosts file goes */
	const char *output;	  /* the job's stdout and stderr into this file; NULL: ours */
	double timeout;		  /* seconds, > 0 */
};
struct exec_mpirun_result {
	int exit_code; /* the launcher's; 128 + N: killed by signal N; -1: stopped */
	bool timed_out;
	bool finalize_hung; /* the report came, the job did not end: stopped */
};
int exec_mpirun(const struct exec_net *net, const struct exec_mpirun_opts *o,
		struct exec_mpirun_result *r, struct ofc_error *err);

#endif
