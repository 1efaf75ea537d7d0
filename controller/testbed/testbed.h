/* controller/testbed — the fabric's hosts as network namespaces on this
 * machine, its circuits as veth pairs: one namespace per host, one veth
 * pair per circuit, addresses from 198.18.0.0/15, routes along shortest
 * paths of the circuits (docs/testbed.md).
 *
 * The kernel is programmed by the Linux host driver (drivers/netlink.c,
 * the "netlink" driver_ops, with netns.c and shaping.c). What the hosts
 * should hold is a target the transaction plans like a switch's:
 * controller/reconfig/ calls testbed_is_up, testbed_netns_name,
 * testbed_links_recorded and testbed_target, and drives the hosts through
 * the driver. The rest is for the testbed commands (`ofc testbed
 * up|check|run|down`, the CLI's and ofcd's): bringing the namespaces up
 * and down (testbed.c; up.c as a user asks it, shaped to what this
 * machine carries), what a run sees of them and what their circuits carry (testbed_net.c),
 * and whether every host reaches every other (icmp.c); faults made
 * behind ofc's back for the hosts' agents to find (faults.c). hosts.c holds
 * the names, the state directory's two files and the hosts' target.
 * Nothing here prints. */
#ifndef OFC_CONTROLLER_TESTBED_H
#define OFC_CONTROLLER_TESTBED_H

#include "controller/fabric/fabric.h"
#include "controller/jobplan/jobplan.h"
#include "drivers/drivers.h"
#include "exec/exec.h"

/* ---- what the hosts should hold (hosts.c) -------------------------------- */

/* Namespace name of host h: "ofc-<fabric>-<host>" (caller frees). */
char *testbed_netns_name(const struct fabric *f, uint32_t h);
/* The testbed's commands run as root (namespaces, veths, qdiscs): said
 * so first, not as a "Permission denied" on /run/netns (OFC_E_RUNTIME). */
int testbed_need_root(struct ofc_error *err);
/* Whether <state-dir>/<fabric>.testbed, the list of the namespaces made,
 * exists: a testbed is up, and the transaction plans its hosts too. */
bool testbed_is_up(const char *state_dir, const char *fabric);
/* The hosts' state for a set of circuits: links and shortest-path routes. */
void testbed_target(const struct fabric *f, const struct hlink *links, uint32_t nlinks,
		    struct device_state *out);
/* The rate (bits/s, 0: unshaped) and latency (s) the config gives the
 * testbed's circuits at this scale (see testbed_up). */
void testbed_shaping(const struct fabric *f, double rate_scale, double *rate, double *latency);
/* What <state-dir>/<fabric>.links holds: the shaping chosen and what the
 * circuits carried when last measured all at once (testbed up, check or
 * run): bits/s a circuit, the median, with ncarried circuits loaded;
 * carried 0: not measured at this shaping. alpha: what a step cost the
 * executor beyond its bytes when testbed check calibrated it (seconds;
 * 0: not calibrated). All 0 when nothing is up. */
struct testbed_links {
	double rate, latency;
	double carried;
	uint32_t ncarried;
	double alpha;
};
void testbed_links_recorded(const char *state_dir, const char *fabric, struct testbed_links *l);
int testbed_record_carried(const char *state_dir, const char *fabric, double carried,
			   uint32_t ncircuits, struct ofc_error *err);
int testbed_record_alpha(const char *state_dir, const char *fabric, double alpha,
			 struct ofc_error *err);

/* ---- up and down (testbed.c) --------------------------------------------- */

/* The namespaces, and a veth pair for every circuit the switches hold:
 * switches[s] is switch s's state as read (ctl_switch_states after
 * ctl_read), NULL where the switch has no driver and is taken to hold the
 * config's circuits. rate_scale > 0 scales the config's link rate (else
 * the config's testbed.rate_scale, else 1): every circuit is shaped to it,
 * now and when `ofc apply` adds circuits while the testbed is up. A rate
 * above NETLINK_MAX_RATE is refused before anything is made, with the
 * scale that fits (OFC_E_INPUT). */
int testbed_up(const struct fabric *f, const char *state_dir,
	       const struct device_state *const *switches, double rate_scale, uint32_t *ncircuits,
	       struct ofc_error *err);
/* `testbed up` as a user asks it (up.c), for the CLI and ofcd alike: the
 * namespaces (testbed_up), shaped to rate_scale (> 0: chosen; else the
 * config's testbed.rate_scale; neither: the config's rate, at most
 * NETLINK_MAX_RATE, and then down to what this machine carries, said in
 * the notes), what the circuits carry measured and recorded for the
 * runs. up is set once the namespaces exist, even when the measure after
 * failed (-1 with err). */
#define TESTBED_UP_NOTES 6
struct testbed_up_result {
	bool up;
	uint32_t hosts, circuits;
	double rate;	   /* bits/s a circuit is shaped to (0: unshaped) */
	double rate_scale; /* of the config's link rate */
	double carried;	   /* bits/s each carried, all at once (0: not measured) */
	uint32_t ncarried;
	uint32_t nnotes;
	char notes[TESTBED_UP_NOTES][400]; /* sentences for people */
};
int testbed_bring_up(const struct fabric *f, const char *state_dir,
		     const struct device_state *const *switches, double rate_scale,
		     struct testbed_up_result *r, struct ofc_error *err);
/* r as the ofc.v1.TestbedUpAnswer ofcd answers and `ofc testbed up
 * --json` prints (answer.c), its strings and arrays in a. */
struct Ofc__V1__TestbedUpAnswer;
struct Ofc__V1__TestbedUpAnswer *testbed_up_answer(struct arena *a, const char *fabric,
						   const struct testbed_up_result *r);
/* Shape every circuit of the testbed that is up to rate (the latency
 * recorded stays) and record it; what was measured at the old rate is
 * forgotten. */
int testbed_reshape(const struct fabric *f, const char *state_dir, double rate,
		    struct ofc_error *err);
/* Faults behind ofc's back (faults.c), the record untouched: host port
 * (host, port)'s link (i<port> in its namespace) down or up; the far ends
 * of the circuits leaving host ports a and b ({host, port}) swapped, said
 * in words in said ("h0:0 now reaches h3:1 and h2:0 reaches h1:0").
 * A swap is cabling, not a moment: it is recorded in
 * <state-dir>/<fabric>.miswired (the same pair again takes it out, as
 * the fibres crossed back), and every target the testbed's hosts are
 * driven to has it (testbed_miswired_apply), so a commit onto the pair
 * makes its veths crossed as real fibres would stay crossed. */
int testbed_link_set(const struct fabric *f, uint32_t host, uint32_t port, bool up,
		     struct ofc_error *err);
int testbed_miswire(const struct fabric *f, const char *state_dir, const uint32_t a[2],
		    const uint32_t b[2], char *said, size_t n, struct ofc_error *err);
/* Every recorded pair crossed back on the testbed and the record removed;
 * *npairs: how many pairs were recorded. */
int testbed_miswire_clear(const struct fabric *f, const char *state_dir, uint32_t *npairs,
			  struct ofc_error *err);
/* The recorded swaps made in target (the hosts' state, links sorted by
 * source): where both ports of a pair carry a circuit, their far ends
 * exchanged (the routes, set by source port, are left as planned). */
void testbed_miswired_apply(const char *state_dir, const char *fabric, struct device_state *target);
/* The hosts' agents (agents.c): lldpd and ofc-hostd (beside this program,
 * or $OFC_HOSTD) in every host's namespace, the agents reporting to socket
 * (NULL: their default, OFC_SOCKET or ofcd's); what is still running from
 * an earlier up is left running. Each process is recorded in
 * <state-dir>/<fabric>.agents/ (pid and start time), with its log. What
 * was started, and why not, said in r's notes. */
void testbed_agents_start(const struct fabric *f, const char *state_dir, const char *socket,
			  struct testbed_up_result *r);
/* Stop the recorded agents (SIGTERM, then SIGKILL past a deadline) and
 * remove their folder; -1 with err naming one that outlived SIGKILL. */
int testbed_agents_stop(const struct fabric *f, const char *state_dir, uint32_t *nstopped,
			struct ofc_error *err);
/* Remove every namespace the testbed made (those its file lists, else
 * this config's names) and its files, its hosts' agents stopped first. */
int testbed_down(const struct fabric *f, const char *state_dir, uint32_t *nremoved,
		 struct ofc_error *err);

/* ---- what a run sees, and what the circuits carry (testbed_net.c) -------- */

/* What a run on the testbed needs to know (exec/ takes it as struct
 * exec_net): the circuits the hosts hold now, read from the kernel, with
 * both ends' addresses, and each host's routed address. Arrays are
 * [host * ports + port]; peer is UINT32_MAX where a port has no circuit. */
struct testbed_net {
	uint32_t nhosts, ports;
	char **netns; /* namespace per host */
	uint32_t *peer, *peer_addr, *local_addr;
	uint32_t *host_addr;
	uint32_t ncircuits;
	double rate, latency; /* the shaping `testbed up` recorded (0: none) */
	double carried;	      /* bits/s a circuit carried when measured (0: not yet) */
	uint32_t ncarried;    /* ... with this many circuits at once */
	double alpha;	      /* a step's cost, calibrated by testbed check (0: not yet) */
};
/* Fails when the testbed is not up or a namespace cannot be read. */
int testbed_net_read(const struct fabric *f, const char *state_dir, struct testbed_net *out,
		     struct ofc_error *err);
void testbed_net_free(struct testbed_net *t);
/* The exec/ view of a testbed's circuits (borrows t's arrays). */
struct exec_net;
void testbed_exec_net(const struct testbed_net *t, uint16_t port, struct exec_net *net);
/* What the testbed's circuits carry here: every circuit loaded at once
 * for a third of a second (exec_probe_links), the probes in *pr (caller
 * frees), the median and least rate in bits/s. A circuit carries its
 * shaping when it carries TESTBED_CARRY_SHARE of it (TCP's payload over
 * tbf's packet bytes comes to about 95 %). */
#define TESTBED_CARRY_SHARE 0.8
/* Below this share testbed check warns that the machine cannot carry the
 * shaping: measured times over twice the model's are not noise. */
#define TESTBED_CARRY_FAIL 0.5
/* The probe's window: long enough for TCP to leave slow start, short
 * enough to wait for. */
#define TESTBED_PROBE_SECONDS (1.0 / 3)
struct exec_probe;
int testbed_measure(const struct testbed_net *t, struct exec_probe **pr, uint32_t *n,
		    double *median, double *least, struct ofc_error *err);
/* b/s as people read it: "240 Mb/s", "16 Gb/s". */
const char *testbed_rate_str(double bps, char *buf, size_t n);

/* ---- what a schedule should take on the circuits (model.c) --------------- */

/* The model's two figures for this testbed: the payload rate a circuit
 * carries (bits/s: what testbed check or up measured with every circuit
 * loaded, else the shaping) and alpha, what a step costs a host beyond
 * its bytes (the executor's wake-ups and the step's synchronisation:
 * calibrated by testbed check, else the link latency + 100 us). */
struct testbed_model {
	double rate;
	double alpha;
	double burst; /* payload bytes tbf's full bucket lets through at once (0: none) */
};
/* A prediction and its terms: alpha_s (alpha for every step that moves
 * bytes) and bytes_s (each such step's busiest circuit at the rate), the
 * busiest circuits' bytes summed over the steps, the circuits that carry
 * any, and the transfers without a port (sent host to host along the
 * routes: Swing's, whose 1.1-1.35x is not their routing, docs/testbed.md). */
struct testbed_prediction {
	double seconds, alpha_s, bytes_s;
	double busiest_bytes;
	uint32_t steps, circuits_used;
	uint64_t routed;
};
/* The schedule at size bytes per host on t's circuits as they are now;
 * per_step (NULL or nsteps) gets each step's time. OFC_E_INPUT when a
 * transfer is on no circuit the testbed holds; OFC_E_RUNTIME when m has
 * no rate (unshaped circuits). */
struct schedule;
int testbed_predict(const struct schedule *s, const struct testbed_net *t,
		    const struct testbed_model *m, uint64_t size, double *per_step,
		    struct testbed_prediction *p, struct ofc_error *err);
/* How far measured may be from the prediction for the model to hold. */
#define TESTBED_MODEL_TOLERANCE 0.15
/* Whether the model holds for a run that took measured seconds, and the
 * sentence that says so, or which term is off and by how much. */
bool testbed_judge(const struct testbed_prediction *p, const struct testbed_model *m,
		   double measured, char *line, size_t len);

/* ---- a run, judged (run.c) ---------------------------------------------- */

/* What a step costs a host here beyond its bytes when testbed check has
 * not calibrated it (wake-ups, syscalls), added to the link latency. */
#define TESTBED_ALPHA_DEFAULT 100e-6
/* The model for t's circuits: the rate they carried when measured (else
 * the shaping), alpha the one given (> 0), else testbed check's, else the
 * latency plus TESTBED_ALPHA_DEFAULT; *alpha_from (NULL: not wanted) says
 * which. */
void testbed_model_of(const struct testbed_net *t, double alpha, struct testbed_model *m,
		      const char **alpha_from);
/* The most circuits a host holds: its egress at the model's rate is what
 * the engines are asked to schedule for (a port without a circuit
 * carries nothing). */
uint32_t testbed_most_circuits(const struct testbed_net *t);
struct testbed_run_opts {
	uint64_t size;	     /* bytes per host */
	double deadline;     /* absolute, now_seconds() */
	uint64_t max_memory; /* 0: half the machine's */
	uint16_t port;	     /* the executor's TCP port in every namespace */
	bool step_times;     /* each step's time, measured and the model's */
	/* exec_opts.progress: the caller's thread, about ten times a second */
	void (*progress)(void *ctx, uint32_t step, uint32_t nsteps, double seconds);
	void *ctx;
};
/* A run of s: predicted (NaN when the circuits are unshaped), measured,
 * the data check, and whether the model holds or which term is off
 * (model); the executor's whole result, the model's time per step
 * (step_times on a priced run) and the bytes the circuits' sources sent
 * (< 0: unreadable). -1 when it could not be priced (a transfer on no
 * circuit) or did not run to its end (err); wrong data is a run that
 * ran. testbed_run_free frees it either way. */
struct testbed_run {
	bool ran, data_ok, holds;
	bool mpi;		/* MPICH's collective (testbed_run_mpi): no schedule, no price */
	bool mpi_finalize_hung; /* ... MPI_Finalize hung after the result: the job was stopped */
	double measured, predicted;
	struct testbed_prediction pred;
	double *step_model;
	double circuit_bytes;
	struct exec_result res;
	char model[400];
};
struct schedule;
int testbed_run_schedule(const struct schedule *s, const struct testbed_net *t,
			 const struct testbed_model *m, const struct testbed_run_opts *o,
			 struct testbed_run *r, struct ofc_error *err);
void testbed_run_free(struct testbed_run *r);
/* A schedule read back (ofc schedule --format pb: `testbed run --schedule`),
 * counted before it is built: whether reading, verifying and running it
 * fits limit bytes, the file's bytes held already; the peak is the file and
 * the schedule while it is decoded, or the schedule, the check and the run
 * once the file is dropped. -1 with the estimate in err when it does not. */
struct testbed_loaded {
	const char *name; /* for the error */
	enum sched_collective collective;
	uint32_t nodes;
	uint64_t nsteps, nxfers;
	uint64_t len;	/* the file's bytes */
	uint64_t sched; /* the schedule's, decoded */
	uint64_t held;	/* what the process holds already, the file's bytes among them */
};
int testbed_loaded_fits(const struct testbed_loaded *l, const struct testbed_net *t, uint64_t size,
			bool steps, uint64_t limit, struct ofc_error *err);
/* MPICH's own collective (coll, size bytes per host) on the testbed's
 * hosts and links (mpi.c), as a run that is not priced: the mean of a few
 * after a warm-up, the ranks' data check, the circuits' bytes per
 * collective. -1 with err when it did not run to its result. */
int testbed_run_mpi(const struct testbed_net *t, enum sched_collective coll, uint64_t size,
		    uint16_t port, double timeout, struct testbed_run *r, struct ofc_error *err);
/* An unmodified MPI program (argv) as one rank per host of t, by MPICH or
 * Open MPI (mpirun.c): with libofc-mpi (preload, its path) running the
 * schedules of `schedules` (OFC_SCHEDULE: files ':' apart, the caller's),
 * or the MPI's own collectives (no schedules: the library only counts
 * them, and its report says when the job reached MPI_Finalize). dir is the
 * caller's scratch directory.
 * The result: the program's exit status, the bytes the circuits carried
 * while it ran, the library's JSON report and (capture) the program's
 * output, each NUL-terminated and bounded (1 MiB of output, said cut).
 * -1 with err when the job could not start. */
struct testbed_mpirun_opts {
	bool openmpi;
	const char *preload;   /* NULL: no library */
	const char *schedules; /* "": none (the library counts the MPI's own) */
	char *const *argv;
	const char *dir;
	double timeout;
	bool capture; /* the output into r->output, else to ours */
};
struct testbed_mpirun_result {
	int exit_code; /* -1: stopped (timed out, or finalize hung) */
	bool timed_out;
	bool finalize_hung;   /* the report came, the job did not end after it */
	double circuit_bytes; /* < 0: unreadable */
	char *report, *output;
	size_t report_len, output_len;
	bool output_cut;
};
int testbed_mpirun(const struct fabric *f, const struct testbed_net *t,
		   const struct testbed_mpirun_opts *o, struct testbed_mpirun_result *r,
		   struct ofc_error *err);
void testbed_mpirun_free(struct testbed_mpirun_result *r);
/* r as the ofc.v1.TestbedRunResult ofcd answers and `ofc testbed run
 * --json` prints (answer.c), in a; size is the bytes per host it ran. */
struct Ofc__V1__TestbedRunResult;
struct Ofc__V1__TestbedRunResult *testbed_run_result(struct arena *a, const struct testbed_run *r,
						     uint64_t size);
/* The ofc.v1.TestbedRunAnswer without its runs, in a: the testbed, the
 * topology the runs are for (and why), the model they are priced at. */
struct testbed_run_head {
	const char *fabric;
	const struct testbed_net *net;
	const char *topology, *topology_from;
	const struct testbed_model *model;
	const char *alpha_from;
	enum sched_collective collective;
	uint64_t size;
	const char *note; /* the circuits carry less than their shaping; "" or NULL: they do */
};
struct Ofc__V1__TestbedRunAnswer;
struct Ofc__V1__TestbedRunAnswer *testbed_run_answer(struct arena *a,
						     const struct testbed_run_head *h);
/* What the circuits' source ends have sent so far, in bytes (the veths'
 * counters); < 0 when unreadable. */
double testbed_circuit_bytes(const struct testbed_net *t);
/* What the circuits carry against the shaping the model prices them at:
 * recorded by testbed up or check, else (or when measured on another
 * number of circuits, before a reconfiguration) measured now and
 * recorded. note (len bytes) gets the warning when they carry less than
 * TESTBED_CARRY_SHARE of it, else "": measured/predicted is then this
 * machine's cores, not the schedule (17x on 2 cores, without a word). */
int testbed_carried_now(const struct fabric *f, const char *state_dir, struct testbed_net *t,
			char *note, size_t len, struct ofc_error *err);

/* The executor's TCP port in every host's namespace. */
#define TESTBED_RUN_PORT 7462

/* testbed check's calibration of the run's model (calibrate.c): alpha, the
 * time a step costs beyond its bytes (the median of a few runs of the
 * default allreduce at a few bytes a block, each run's time less its
 * bytes at the rate over its steps), recorded for testbed run; then a
 * reference run of the same allreduce at a size whose bytes take about
 * half a second, priced with that alpha and judged (testbed_judge). */
struct testbed_calibration {
	double rate;  /* bits/s a circuit is priced at (what they carried) */
	double alpha; /* seconds a step */
	uint32_t alpha_runs, alpha_steps;
	char algo[64];
	uint64_t size; /* the reference run's */
	double measured;
	struct testbed_prediction pred;
	bool data_ok, holds;
	char model[400];
};
/* f: the fabric the schedules are for (the committed topology's); src
 * computes them (schedule_here: in this process; ofcd's: in a planner
 * process). */
struct schedule_source;
int testbed_calibrate(const struct schedule_source *src, const struct fabric *f,
		      const char *state_dir, const struct testbed_net *t,
		      struct testbed_calibration *c, struct ofc_error *err);
/* testbed check as the CLI and ofcd run it (check.c): every ordered
 * pair's reach; all reaching, what every circuit carries with all loaded
 * at once (recorded for the runs) and the shaping it holds, and the model
 * calibrated on sched (the committed topology's fabric, spec its name;
 * f's when none other) and judged by a reference run. *out (in a) is
 * filled as far as it got; *bad counts the pairs that did not reach, the
 * circuits that carried nothing and a reference run with wrong data. -1
 * when the testbed is not up or could not be probed (err). The
 * calibration's schedules are src's (testbed_calibrate). */
struct Ofc__V1__TestbedCheckAnswer;
int testbed_check(const struct schedule_source *src, const struct fabric *f,
		  const struct fabric *sched, const char *spec, const char *state_dir,
		  struct arena *a, struct Ofc__V1__TestbedCheckAnswer **out, uint32_t *bad,
		  struct ofc_error *err);

/* ---- another topology on the same hosts (topo.c) ------------------------ */

/* The topology a testbed run schedules for (topo.c): f with
 * another topology spec (a shallow copy of f, its graph, port
 * permutations and circuits its own), as a config naming it gets them. */
struct testbed_topo {
	struct fabric f;
	struct graph *g;
	struct port_map pm;
	char spec[TOPO_MAX_SPEC + 1];
	bool open;
};
/* OFC_E_INPUT when spec does not parse, has another number of nodes than
 * f hosts, or needs more ports than they have. */
int testbed_topo_open(const struct fabric *f, const char *spec, struct testbed_topo *w,
		      struct ofc_error *err);
void testbed_topo_free(struct testbed_topo *w);

/* ---- reachability (icmp.c) ----------------------------------------------- */

/* ICMP echo from every namespace to every other host's address. reach[s*n+d]
 * is set when s reached d. Returns 0 when the probe itself ran. */
int testbed_ping_all(const char *const *netns, uint32_t n, double timeout, uint8_t *reach,
		     struct ofc_error *err);

/* ---- a training job's phases on the testbed (workload.c) ------------------ */

/* The use case of `ofc testbed run FILE --workload W`: the job's plan made
 * for the testbed, each way asked for (static, per-phase, chosen) run its
 * iterations, switching between phases' topologies, then the config's
 * topology applied again. How a topology is applied is the caller's (the
 * hooks): the CLI's is a local transaction on the state directory, a
 * daemon's its own reconfigure. The answer is the message WorkloadRunAnswer,
 * which every caller prints the same way. */
struct jobplan_topo;
struct Ofc__V1__WorkloadRunAnswer;
struct testbed_workload_opts {
	const char *workload; /* a file, or "config" (the fabric's own section) */
	uint32_t iterations;
	unsigned ways; /* a mask of 1 << enum jobplan_kind */
	double alpha, timeout;
	uint32_t port;
	uint64_t max_memory;
	struct jobplan_overhead overhead; /* given: not measured */
	bool overhead_set;
};

/* What the caller supplies. apply makes candidate t the fabric's
 * circuits, one transaction committed (a trial left open would be rolled
 * back by the next one's recovery, doubling every switching measured);
 * the run times the call. reread reads the testbed's lanes again after
 * the circuits moved (net freed and read anew). */
struct testbed_workload_hooks {
	int (*apply)(void *ctx, const struct jobplan_topo *t, struct ofc_error *err);
	int (*reread)(void *ctx, struct testbed_net *net, struct ofc_error *err);
	void *ctx;
};

struct testbed_workload_state;
struct testbed_workload {
	/* valid after a run that returned 0, until testbed_workload_free
	 * (its strings borrowed from the run's plan) */
	const struct Ofc__V1__WorkloadRunAnswer *answer;
	/* 1 when a way failed, its data was wrong or the last switching back
	 * failed (then back_error says so: "back to TOPOLOGY: why") */
	int status;
	char back_error[700];
	/* on -1: whether measuring the switching failed (else the plan) */
	bool calibration_failed;
	struct testbed_workload_state *st;
};

/* The run on the testbed net (its lanes reread as the circuits move):
 * -1 with *err when the plan cannot be made or the switching cannot be
 * measured; else 0 with out->answer (proto/workload_run.proto), out->status as above. */
int testbed_workload_run(const struct fabric *f, const struct testbed_workload_opts *o,
			 struct testbed_net *net, const struct testbed_workload_hooks *h,
			 struct testbed_workload *out, struct ofc_error *err);
void testbed_workload_free(struct testbed_workload *w);

#endif
