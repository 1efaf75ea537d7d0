/* controller/export — the fabric, topologies and schedules as protobuf
 * (the .proto files in proto/), JSON (the same messages walked through their
 * descriptors) and text for people. Messages are built in an arena that
 * borrows the model's strings. */
#ifndef OFC_CONTROLLER_EXPORT_H
#define OFC_CONTROLLER_EXPORT_H

#include <protobuf-c/protobuf-c.h>

#include "controller/fabric/fabric.h"
#include "controller/schedule/schedule.h"
#include "proto/control.pb-c.h"
#include "proto/fabric.pb-c.h"
#include "proto/schedule.pb-c.h"
#include "proto/topology.pb-c.h"

struct device_cfg;

/* Serialise the validated fabric as ofc.v1.Fabric / a graph as
 * ofc.v1.Topology. The caller frees *buf. */
int fabric_pack(const struct fabric *f, uint8_t **buf, size_t *len, struct ofc_error *err);
int topology_pack(const struct graph *g, const struct topo_facts *facts, const struct port_map *pm,
		  uint8_t **buf, size_t *len);
/* A schedule as ofc.v1.Schedule, written as it is built: the header, then
 * one message per step holding only that step (protobuf merges
 * concatenated messages, appending repeated fields), each streamed
 * PB_CHUNK transfers at a time, so memory stays one chunk's worth. */
int schedule_write_pb(const struct schedule *s, FILE *out, struct ofc_error *err);
/* The same of a schedule made a step at a time (a period's expansion):
 * the same bytes as of its explicit schedule, holding one step. */
int schedule_stream_write_pb(const struct sched_stream *st, FILE *out, struct ofc_error *err);
/* ofcd's one-frame GetSchedule answer of a schedule made a step at a
 * time: resp, whose schedule holds no steps, packed with st's steps in it,
 * the bytes protobuf-c packs for resp holding them all, made a step at a
 * time into one buffer (schedule_reply.c). The size comes first, from a
 * pass over the steps: over max, 1 with *len that size and nothing
 * allocated; -1 when resp has no stepless schedule or the passes
 * disagree; else 0 and *buf, room bytes left free (a frame's length) then
 * the *len bytes (the caller frees *buf). */
int schedule_response_pack(const Ofc__V1__Response *resp, const struct sched_stream *st, size_t max,
			   size_t room, uint8_t **buf, size_t *len);
/* What writing s as protobuf holds: a chunk's messages and
 * packed bytes; whole: every step at once (ofcd's one-frame reply). JSON
 * and text are written transfer by transfer and hold nothing per
 * transfer. */
#define PB_CHUNK	   4096
#define PB_PACKED_TRANSFER 40
uint64_t schedule_pb_memory(const struct schedule *s, bool whole);
/* A direct-connect schedule back from what schedule_write_pb wrote (up to
 * SCHEDULE_PB_MAX bytes): the collective, nodes and steps; figures are not
 * read (the reader prices and verifies again). Errors name the file. */
#define SCHEDULE_PB_MAX (1ull << 30)
int schedule_read_pb(const char *path, struct schedule *s, struct ofc_error *err);
/* The same in two passes, so that a caller can price what the
 * schedule will take before it is built: schedule_pb_open reads the file
 * (refused when its size would take the process past max_memory, 0: no
 * limit but SCHEDULE_PB_MAX) and walks it once, counting steps and
 * transfers and unpacking only the header fields read (collective, nodes,
 * ...; the checks on them are done here); schedule_pb_bytes is what the
 * schedule will hold; schedule_pb_decode builds it, a transfer at a time.
 * schedule_pb_parse walks bytes the caller holds (name for errors). Errors
 * give the file's byte where its wire format breaks; running out of memory
 * in protobuf-c is OFC_E_RUNTIME and says so. Past clock's deadline (NULL:
 * none) they stop with "time limit T reached in reading the schedule". */
struct schedule_pb {
	const char *name;
	const uint8_t *data; /* the file's bytes */
	size_t len;
	char *owned; /* data, when read by schedule_pb_open */
	Ofc__V1__Schedule *head;
	enum sched_collective collective;
	uint32_t nodes;
	uint64_t nsteps, nxfers, max_step_xfers, nfailed;
};
int schedule_pb_open(const char *path, uint64_t max_memory, const struct ofc_clock *clock,
		     struct schedule_pb *f, struct ofc_error *err);
int schedule_pb_parse(const char *name, const uint8_t *data, size_t len,
		      const struct ofc_clock *clock, struct schedule_pb *f, struct ofc_error *err);
uint64_t schedule_pb_bytes(const struct schedule_pb *f);
int schedule_pb_decode(const struct schedule_pb *f, const struct ofc_clock *clock,
		       struct schedule *s, struct ofc_error *err);
void schedule_pb_close(struct schedule_pb *f);
/* A direct-connect schedule as an MSCCL XML program (controller/export/
 * msccl.c, docs/msccl.md) for the MSCCL executor of NCCL/RCCL. Fails
 * (OFC_E_INPUT) when the program would exceed MSCCL's limits. */
#define MSCCL_MAX_BYTES (1ull << 40) /* maxBytes: the program fits any size */
struct msccl_info {
	uint32_t chunks_per_block; /* Q */
	bool exact;		   /* every bound on a chunk bound (else rounded) */
	uint32_t channels, thread_blocks;
	size_t operations;
	size_t most_nodes; /* the XML nodes the runtime's parser reads for a rank, at most */
};
/* The runtime that loads the program, whose limits it is written within
 * (msccl.c, msccl_limits): msccl-executor-nccl (NCCL 2.x's MSCCL, the
 * default), or the legacy MSCCL (microsoft/msccl). */
enum msccl_runtime { MSCCL_EXECUTOR, MSCCL_LEGACY };
/* What schedule_write_msccl holds for s, before it starts: every
 * rank's chunk states, its operations and the lane tables. */
uint64_t schedule_msccl_memory(const struct schedule *s);
int schedule_write_msccl(const struct schedule *s, enum msccl_runtime rt, FILE *out,
			 struct msccl_info *info, struct ofc_error *err);
/* The same at q chunks a block (1 to 71, an operation's cnt: the local
 * copies move a block), 0 for the writer's own choice. */
int schedule_write_msccl_at(const struct schedule *s, enum msccl_runtime rt, uint32_t q, FILE *out,
			    struct msccl_info *info, struct ofc_error *err);
/* The chunks a block the writer rounds s's bounds to (no Q up to 64 has
 * them all on chunk bounds), 0 where it writes s exactly. */
uint32_t msccl_rounded_q(const struct schedule *s);
#define MSCCL_MOST_Q 71u /* the most chunks a block: the local copies' cnt < 72 */
/* A server fabric's schedule s (on n's vertices, the fluid engine's,
 * explicit) as one on its GPUs alone (msccl_fabric.c): every part that
 * reaches a GPU becomes a send from the GPU it left (or, with forward,
 * where another GPU of its server holds it, a part from another server, a
 * forward from that one), the hops through switches, memory and NICs left to the
 * runtime; reductions (an allreduce's steps before ag_first) as
 * reductions into the GPU sent to. out (sched_init done here) has rank r
 * for n's r-th GPU in vertex order, s's steps (with forwards, each of
 * them in two, the sends then the forwards, those with none left out),
 * blocks by rank; it is for the caller to verify.
 * info: the price of both on the fabric, each step's busiest arc or set
 * summed (s/GB of block), the sends' chains loading every hop again where
 * a relay copied inside a server. */
struct fabric_gpu_info {
	uint32_t gpus;
	size_t transfers;
	size_t forwarded; /* sends forwarded inside a server (with forward) */
	bool priced;	  /* false past 64 MiB of per-step loads */
	double schedule_s_per_gb, program_s_per_gb;
	/* each send of out (in order): the fabric's arcs it crosses, the
	 * hops the runtime takes for it (route_arc[route_off[i]..[i + 1]]) */
	uint32_t *route_off, *route_arc;
};
int fabric_gpu_schedule(const struct fluid_net *n, const struct schedule *s, uint32_t ag_first,
			bool forward, struct schedule *out, struct fabric_gpu_info *info,
			struct ofc_error *err);
void fabric_gpu_info_free(struct fabric_gpu_info *info);
/* The MSCCL chunk bound a schedule's fixed-point bound rounds to at Q
 * chunks a block (msccl.c: to the nearest chunk). */
uint32_t msccl_chunk_bound(uint64_t fixed, uint32_t Q);
/* The price of the program on its GPUs as the runtime runs it
 * (msccl_price.c), from its own sends at Q chunks a block (their bounds
 * rounded as the XML has them), alpha s a send and block_gb GB a block:
 * - critical: its longest chain of dependent sends (a send waits for
 *   every earlier send into its source that overlaps the chunks it
 *   sends), each an alpha plus its bytes over the slowest arc of its
 *   route;
 * - busiest: its busiest arc or capacity set, all the bytes the
 *   program's routes put on it over its GB/s;
 * - price: the larger, what no run of the program can beat. */
struct msccl_price {
	double critical_s, busiest_s, price_s;
	uint32_t critical_sends; /* sends on the critical path */
	double busiest_gb;	 /* GB over the busiest arc or set */
	uint32_t busiest;	 /* its arc, or its set when busiest_set */
	bool busiest_set;
};
int msccl_program_price(const struct fluid_net *n, const struct schedule *g,
			const struct fabric_gpu_info *info, uint32_t Q, double alpha,
			double block_gb, struct msccl_price *p, struct ofc_error *err);
/* "the program's own price: ..." beside the planned time (s, > 0) and the
 * optimum (s, 0 for none), each gap as a percentage; "not priced" where
 * p->price_s is NaN. */
void msccl_price_write(FILE *out, const struct fluid_net *n, const struct msccl_price *p,
		       double planned, double optimum);
/* The JSON form of the same ofc.v1.Fabric message (`ofc show --json`). */
int fabric_write_json(const struct fabric *f, FILE *out, struct ofc_error *err);
/* People's form (`ofc show`). */
void fabric_write_text(const struct fabric *f, FILE *out);
/* Graphviz (dot.c): the hosts where `ofc topo --dot` draws the topology's
 * nodes, a line per pair of hosts that circuits join (in its partition's
 * colour, else its switch's), switches, rings and partitions, failures in
 * red. fabric_write_dot draws the target's circuits (`ofc show --dot`);
 * fabric_write_dot_circuits the ones given (`ofc status --dot`: what the
 * devices hold), the target's that are not among them dotted. */
struct fabric_dot {
	const struct circuit *circuits; /* drawn */
	uint32_t ncircuits;
	const struct circuit *missing; /* the target's the devices lack */
	uint32_t nmissing;
	const char *what;	 /* after "N circuits" in the title */
	const bool *unreachable; /* per switch, or NULL */
};
void fabric_write_dot(const struct fabric *f, FILE *out);
void fabric_write_dot_circuits(const struct fabric *f, const struct fabric_dot *d, FILE *out);

/* Any protobuf-c message as JSON (controller/export/pbjson.c). */
void pb_write_json(struct json_writer *w, const ProtobufCMessage *m);
/* The bytes a single (not repeated) field of type t takes in its message. */
size_t pb_type_size(ProtobufCType t);
/* m's fields as members of the object w has open, but those named in skip
 * (NULL-terminated; NULL: none): a map's entries as members themselves,
 * empty lists left out (a summary's flat shape). */
void pb_write_json_flat(struct json_writer *w, const ProtobufCMessage *m, const char *const *skip);
/* A message of descriptor d from JSON text (the network API's
 * request bodies), field names as in the .proto; OFC_E_INPUT naming the
 * field's path for anything else. *out is malloc'd throughout: free it with
 * protobuf_c_message_free_unpacked(*out, NULL). pb_read_json_object takes a
 * json-c object instead; strings: scalars may come as text (query
 * strings: "true", "42"). */
int pb_read_json(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
		 ProtobufCMessage **out, struct ofc_error *err);
int pb_read_json_object(const ProtobufCMessageDescriptor *d, void *obj, bool strings,
			ProtobufCMessage **out, struct ofc_error *err);

/* ---- messages, for callers that assemble their own (ofcd) ---------------- */
/* m's port_alarms: dev's (the device's own report of failing ports in
 * use, docs/netconf.md), each with the host port cabled to it; and
 * notifications, when dev was subscribed to them at its last read. */
struct device;
void device_alarms_msg(struct arena *a, const struct fabric *f, const struct device *dev,
		       Ofc__V1__DeviceState *m);

Ofc__V1__Topology *topology_msg(struct arena *a, const struct graph *g, const struct topo_facts *f,
				const struct port_map *pm, bool edges);
Ofc__V1__Fabric *fabric_msg(struct arena *a, const struct fabric *f);
/* Device cfg of f as ofc.v1.DeviceState (state.c): name, driver, kind,
 * address, and with s what it holds: entries, a switch's cross-connects
 * as circuits through f's wiring, a ring's configured lightpaths both of
 * whose MRRs are tuned and its channels, a testbed's link and route
 * counts. The caller sets reachable, in_sync, at_target. */
Ofc__V1__DeviceState *device_state_msg(struct arena *a, const struct fabric *f,
				       const struct device_cfg *cfg, const struct device_state *s);
/* The topology a record names (spec), for its ofc.v1.Topology: f's own
 * graph, facts and ports when it is f's, else built with its facts and
 * ports into *own and *own_ports, which the caller frees after the
 * messages built from them. false when spec is empty or does not build. */
bool recorded_topology(const struct fabric *f, const char *spec, const struct graph **g,
		       struct topo_facts *facts, const struct port_map **pm, struct graph **own,
		       struct port_map *own_ports);

/* ofc.v1.Schedule in pieces that protobuf merges when concatenated (as
 * schedule_write_pb writes them): the header with every figure and no
 * steps, one message per step, and the direct-connect
 * fields of a computed schedule: tau_b_fraction and the links used. */
Ofc__V1__Schedule *schedule_header_msg(struct arena *a, const struct schedule *s);
Ofc__V1__Schedule *schedule_step_msg(struct arena *a, const struct schedule *s, uint32_t t);
/* n transfers x of a schedule headed by s (how its blocks read) as one
 * Step: a part of a step made elsewhere (a streamed frame's). */
Ofc__V1__Step *schedule_transfers_msg(struct arena *a, const struct schedule *s,
				      const struct xfer *x, size_t n);
Ofc__V1__Schedule *schedule_extra_msg(struct arena *a, const struct schedule_result *r);
/* The summary's fields of an extra message x (tau_b_fraction, failed_nodes,
 * num_transfers, the bound's figures) onto a header h, sharing x's arena
 * (links are the caller's to copy). */
void schedule_msg_summary(Ofc__V1__Schedule *h, const Ofc__V1__Schedule *x);
/* A schedule's summary as JSON (summary.c): m's figures, its metrics and
 * its detail's fields at the top level, no steps, links or vertices: what
 * `ofc schedule --json` prints, here or through ofcd. */
void schedule_summary_json(struct json_writer *w, const Ofc__V1__Schedule *m);
/* The engines' working for Schedule.detail (summary.c); the messages
 * borrow the answer's strings. A server fabric's (--algo fluid): */
struct fluid_answer;
Ofc__V1__ScheduleDetail *schedule_fluid_detail_msg(struct arena *a, const struct fabric *f,
						   const struct fluid_answer *fa);
/* What an MSCCL export of a server fabric's schedule wrote and its own
 * price, for detail.fluid.msccl (summary.c, schedule_fluid_msccl_msg). */
struct msccl_summary {
	enum msccl_runtime runtime;
	uint32_t chunks_engine; /* the engine's K, lowered to fit (0: not) */
	struct msccl_info mi;
	size_t forwarded;
	struct msccl_price price; /* price_s NaN: not priced */
	double planned_s, optimum_s;
};
void schedule_fluid_msccl_msg(struct arena *a, Ofc__V1__ScheduleDetail *d,
			      const struct fluid_net *n, const struct msccl_summary *ms);
/* A direct-connect result's (detail_direct.c): its main schedule's
 * working, the expansion beside it, --algo all's comparison. */
Ofc__V1__ScheduleDetail *schedule_direct_detail_msg(struct arena *a,
						    const struct schedule_result *r);
/* ... and of it only what says another engine answered in the asked
 * one's place (fallback_from, fallback_why, copied into a), for ofcd's
 * summaries, which carry no detail otherwise; NULL when none did. */
Ofc__V1__ScheduleDetail *schedule_fallback_detail_msg(struct arena *a,
						      const struct schedule_result *r);
/* A WDM ring's (detail_ring.c): outcome o of result q, beside s, the
 * summary's message, whose metrics it does not repeat. */
struct schedule_outcome;
Ofc__V1__ScheduleDetail *schedule_ring_detail_msg(struct arena *a, const struct schedule_result *q,
						  const struct schedule_outcome *o,
						  const Ofc__V1__Schedule *s);
/* The bounds it states, which `ofc schedule`'s text says too: theta's
 * (Thm 2, with the links' rates, a demand matrix and NIC-limited hosts)
 * and, with BFB's --chunks, Thm 20's on tau_B. */
double schedule_theta_bound(const struct schedule_result *r);
double schedule_thm20_bound(const struct schedule_result *r, const struct schedule_outcome *o);
/* The same from its parts (f and links only on NIC ports; nlinks 0 else). */
Ofc__V1__Schedule *schedule_fabric_msg(struct arena *a, struct frac tau_b, const struct fabric *f,
				       const struct schedule_link *links, uint32_t nlinks);
/* A server fabric's vertices (the fluid engine's network n): the message
 * that names a schedule's nodes, their kinds and what each may do. */
Ofc__V1__Schedule *schedule_vertices_msg(struct arena *a, const struct fluid_net *n);
/* A symmetry-reduced schedule's group (field `reduced`): the steps
 * written with it are node 0's program; transfers counts the whole
 * schedule's. */
Ofc__V1__Schedule *schedule_reduced_msg(struct arena *a, const struct sched_group *G,
					uint64_t transfers);
/* A job's plan as ofc.v1.Plan (plan.c): what `ofc plan --workload --json`
 * prints and ofcd answers GetPlan with; sweep: --plot's points too. The
 * message borrows r's strings. */
struct jobplan_result;
Ofc__V1__Plan *plan_msg(struct arena *a, const struct jobplan_result *r, bool sweep);
/* A dry run's transaction (txn.c): state "planned", the operations and
 * switching time of r's plan, the plan in `ofc plan`'s words and device by
 * device (device_plan: how the target was aimed, each device's counts and
 * operations), in a. When t would pack to more than max_bytes (SIZE_MAX:
 * no bound) the operations are left out (device_plan.ops_left_out), then
 * the words (no plan), and it returns false. The caller sets the rest
 * (id, target, ...; set first, they count). */
struct reconfigure_result;
bool txn_planned_msg(struct arena *a, const struct reconfigure_result *r, size_t max_bytes,
		     Ofc__V1__TransactionInfo *t);
/* Pack m and append it to out (protobuf merges concatenated messages). */
int schedule_append_pb(const Ofc__V1__Schedule *m, FILE *out, struct ofc_error *err);

/* The schedules computed in this process (schedule_source.c), for the
 * shared code that takes a struct schedule_source: the CLI's. */
extern const struct schedule_source schedule_here;
/* What q's result r gives as a struct schedule_got, the one schedule_here
 * and the planner process answer alike: "all"'s algorithms that apply, or
 * the main schedule (moved out of r with SCHEDULE_GOT_STEPS; written as
 * pb with SCHEDULE_GOT_PB). -1 with err when the pb cannot be written. */
int schedule_got_of(const struct schedule_query *q, struct schedule_result *r,
		    enum schedule_got_what what, struct schedule_got *g, struct ofc_error *err);

/* libofc-mpi's inputs on a testbed (mpirun_files.c), for `ofc testbed
 * mpirun` and ofcd's TestbedMpirun alike: the allreduce, allgather,
 * reduce-scatter and all-to-all schedules for f's topology priced at size
 * bytes, verified, written into dir as COLLECTIVE.pb; their paths ':'
 * apart ("" when none), a collective without a verified schedule said in
 * notes (the MPI's own runs it). NULL with err when one could not be
 * computed or written; src computes them (schedule_here, or ofcd's planner
 * process). mpirun_schedules_remove: those files gone. */
char *mpirun_schedules_write(const struct schedule_source *src, const struct fabric *f,
			     uint64_t size, const char *dir, struct strbuf *notes,
			     struct ofc_error *err);
void mpirun_schedules_remove(const char *dir);
/* Where the library for the MPI is: $OFC_MPI_LIB, else beside the running
 * program (a build), else ../lib/ofc/ from it (an install). */
char *mpirun_library(bool openmpi);

#endif
