/* Private to ofcd's loop thread: a connection, the request being
 * answered, what the requests' files (requests.c, read_requests.c,
 * mutation_requests.c) call of the connections' and the queue's, and what
 * the loop's files (server.c, conn_io.c, connections.c, events.c,
 * job_queue.c, cluster.c) call of each other. The connections call the
 * requests only through d->loop->chain (internal.h). */
#ifndef OFC_CONTROLLER_OFCD_CONN_H
#define OFC_CONTROLLER_OFCD_CONN_H

#include "controller/ofcd/internal.h"

#define MAX_QUEUE     64 /* mutations waiting */
#define MAX_SCHEDULES 16 /* GetSchedule jobs handed out */
#define MAX_STREAMS   4	 /* streamed GetSchedules at once */
/* Schedule jobs one public caller (the read-only socket's uid, a gateway
 * principal but an admin) may have handed out at once: with a schedule
 * worker of their own for root's and the admins' (work.c), a local user's
 * heavy requests delay nobody else's by more than one of them. */
#define SCHEDULES_PER_CALLER 2
uint32_t sched_caller(struct ofcd *d, const struct job *j, int delta);

struct obuf {
	uint8_t *b;
	size_t off, len, cap; /* unsent bytes are [off, len) */
};

struct conn {
	/* A mutation the last leader queued, run again after a
	 * takeover (ofcd_replay_queue): not a connection; answers go to the log. */
	bool replay;
	struct ofcd *d;
	uint64_t id;
	int fd;
	bool ro;    /* accepted on the read-only socket */
	bool admin; /* on the main socket, and root or in the admin group */
	/* Accepted on the gateway socket (from --gateway-uid): every
	 * request carries its principal (struct request's who); a
	 * watcher's is kept (a copy). */
	bool gw;
	Ofc__V1__Principal *watch_principal;
	/* The streamed GetSchedule sending to it, and how many of
	 * its frames wait for an acknowledgement (until unsent < OUT_HIGH). */
	struct stream *stream;
	uint32_t stream_owed;
	struct ucred peer;
	struct uid_use *use; /* its user's connections and bytes */
	size_t charged;	     /* of use->bytes: in_cap + out.cap */
	uint8_t *in;
	size_t in_len, in_cap;
	struct obuf out;
	double in_since;  /* a partial frame has been waiting since (0: none) */
	double out_since; /* unsent replies made no progress since */
	bool reading;	  /* LOOP_READ is registered */
	bool watching;
	uint64_t watch_id;
	bool closing; /* send what is queued, then close */
	bool dead;    /* to be closed by conn_reap() */
};

/* A request being answered: what the chain (run_request) hands its
 * handler. The connection it came on, the decoded message and its bytes
 * (a mutation's job keeps them: outcome_adopt), its row of the request
 * table (NULL: no body) and who sent it. It lives on the chain's stack. */
struct request {
	struct conn *c;
	const Ofc__V1__Request *req;
	const uint8_t *raw;
	size_t len;
	const struct api_request *k;
	struct principal who;
};

/* A connection's buffers: the requests of a client whose unsent answers
 * exceed OUT_HIGH wait in the kernel; buffers start at IN_INITIAL and an
 * idle connection's shrink back below BUF_KEEP. */
#define OUT_HIGH   (1u << 20)  /* stop reading a client's requests above this much unsent */
#define IN_INITIAL (16u << 10) /* input buffer to start with */
#define BUF_KEEP   (64u << 10) /* an idle connection's buffers shrink back below this */

/* conn_io.c and job_queue.c: the connections' output and the mutation
 * queue, for the requests' handlers. */
void changed(struct ofcd *d); /* what GetState shows changed */
/* Queue one frame made of parts a and b (either may be empty). */
void conn_queue(struct conn *c, const void *a, size_t alen, const void *b, size_t blen);
/* Queue one frame of n bytes at buf + FRAME_ROOM, taking buf (malloc'd,
 * FRAME_ROOM bytes free before the frame) as the output buffer when
 * nothing else waits to go out: a large answer (a fluid schedule's whole
 * one, hundreds of MB) sent without a copy. false: not taken (the caller
 * queues a copy and keeps buf). */
bool conn_queue_own(struct conn *c, uint8_t *buf, size_t n);
void send_response(struct conn *c, const Ofc__V1__Response *r);
/* Returns 0, so handlers can end with `return reply(...)`. */
int reply(struct conn *c, uint64_t id, Ofc__V1__Status st, const char *fmt, ...) OFC_PRINTF(4, 5);
/* A mutation (a transaction, queued with a ticket), not the daemon's own
 * device probe or installing the planner's result. */
bool is_mutation(const struct job *j);
/* A job of kind answering rq: who to answer (its connection and id) and
 * who asked (job_from). */
struct job *request_job(const struct request *rq, enum job_kind kind);
/* rq: the request j answers (NULL: none, a reload's). */
void enqueue(struct ofcd *d, struct job *j, const struct request *rq);
/* Take a queued mutation out; answer its client CANCELLED. */
void cancel_job(struct ofcd *d, struct job *j, const char *why);
/* reply(), for a check that refuses: -1. */
int refuse_req(struct conn *c, uint64_t id, Ofc__V1__Status st, const char *fmt, ...)
    OFC_PRINTF(4, 5);
/* The daemon with chain plugged into its connections (ofcd_open). */
int server_open(const struct ofcd_opts *o, const struct ofcd_chain *chain, struct ofcd **out,
		struct ofc_error *err);

/* What the loop's files call of each other, from the bottom up (no
 * circles between them): conn_io.c (a connection's frames), events.c (the
 * watchers), cluster.c (a replica's queue), job_queue.c (the queue and the
 * finished jobs), connections.c (accepting, closing), server.c (the
 * loop). */
size_t conn_unsent(const struct conn *c);
/* Charge buffers of in_cap and out_cap bytes to the connection's user:
 * false (nothing changed) past max_buffer_per_uid. */
bool conn_charge(struct conn *c, size_t in_cap, size_t out_cap);
uint32_t conn_max_frame(const struct conn *c); /* the largest request it may send */
void conn_kill(struct conn *c, int level, const char *fmt, ...) OFC_PRINTF(3, 4);
void conn_read_pause(struct conn *c, bool pause);
void conn_flush(struct conn *c);
void conn_stream_drop(struct conn *c);
void conn_process_input(struct conn *c); /* answer every complete frame in */
struct conn *conn_find(struct ofcd *d, uint64_t id);
void conn_stream_frame(struct ofcd *d, struct note *n); /* a streamed GetSchedule's frame */
void conn_reap(struct ofcd *d);				/* close the connections marked dead */
void conn_listeners(struct ofcd *d, bool on);
void ofcd_hand_to_worker(struct ofcd *d, struct job *j);
void ofcd_maybe_start(struct ofcd *d); /* hand the mutation worker its next job */
void ofcd_job_done(struct ofcd *d, struct job *j);
/* n (may be NULL): a note with a re-planned schedule and the failures. */
void ofcd_broadcast_event(struct ofcd *d, Ofc__V1__Event__Kind kind, uint64_t txn, uint64_t ticket,
			  const char *device, const char *message, const char *sentence,
			  uint64_t time_ms, const struct note *n);
void ofcd_on_event(struct ofcd *d, struct note *n);
/* A queued request's end (KIND_REQUEST_DONE, _REFUSED, KIND_FAILURE_*),
 * r its answer. */
void ofcd_request_event(struct ofcd *d, const struct job *j, const Ofc__V1__Response *r);
/* An event to every watcher (a tenant's when part is one of its partitions),
 * unnumbered and not logged: a replica's own KIND_LEADER_CHANGED. */
void ofcd_send_watchers(struct ofcd *d, Ofc__V1__Response *r, const char *part);
/* event_log.c: every other event goes through the fabric's log. emit: r
 * (an event; r->id and the event's seq, log are set here) numbered and
 * sent, or, on a replicated leader, written to the store's log at the
 * end of this loop pass and sent then (dropped on a follower: the
 * leader's log has it). pull: what the store's log holds past the last
 * sent (a follower after the sync in progress, event_log_synced).
 * resume: a new watcher gets the kept events after seq `after` of log
 * `log` (0: any). */
void event_log_emit(struct ofcd *d, Ofc__V1__Response *r, const char *partition);
void event_log_pull(struct ofcd *d);
void event_log_synced(struct ofcd *d);
void event_log_resume(struct ofcd *d, struct conn *c, uint64_t after, uint64_t log);
void event_log_free(struct ofcd *d);
/* The events waiting for the end of the loop pass written (a leader's)
 * and sent now: a stopping ofcd's last, which the pass may not reach. */
void event_log_flush(struct ofcd *d);
/* The last event numbered, sent or seen (its log in *log): where a state
 * read now stands in the log. */
uint64_t event_log_seq(struct ofcd *d, uint64_t *log);
/* The highest ticket an event in the store's log names (0: none, or no
 * store): where a new leader's numbering goes on from. */
uint64_t event_log_last_ticket(struct ofcd *d);
/* state_delta.c: what changed of the state since the last event said,
 * on e (allocated in a; nothing when nothing changed or this replica
 * follows); check: a change no event carried, as KIND_STATE_CHANGED;
 * start: the state at ofcd_run, described. */
void state_delta_attach(struct ofcd *d, Ofc__V1__Event *e, struct arena *a);
void state_delta_check(struct ofcd *d);
void state_delta_start(struct ofcd *d);
void state_delta_free(struct ofcd *d);
int ofcd_snap_dev(struct snapshot *s, const char *name); /* its index, or -1 */
void ofcd_set_reachable(struct ofcd *d, int i, bool up, const char *error, enum ofc_reason reason);
void ofcd_planner_stop(struct ofcd *d);
void ofcd_planner_check(struct ofcd *d); /* start the planner if the config needs one */
void ofcd_planner_landed(struct ofcd *d, struct planner_task *t);
void ofcd_want_cluster_job(struct ofcd *d, enum job_kind kind);
void ofcd_refuse_queue(struct ofcd *d); /* this replica leads no more */
void ofcd_replay_queue(struct ofcd *d); /* after a takeover: the last leader's queue */

/* read_requests.c and mutation_requests.c: the request table's handlers
 * (requests.c). */
int get_state(const struct request *rq);
int get_schedule(const struct request *rq);
int get_plan(const struct request *rq);
int get_metrics(const struct request *rq);
int watch(const struct request *rq);
int apply_config_request(const struct request *rq);
int reconfigure_request(const struct request *rq);
int release_partition(const struct request *rq);
int move_to_phase(const struct request *rq);
int adopt_request(const struct request *rq); /* Adopt (adopt.c) */
/* TestbedRun, TestbedCheck, TestbedDown (testbed.c) */
int testbed_run_request(const struct request *rq);
int testbed_check_request(const struct request *rq);
int cancel(const struct request *rq);
int report_failure(const struct request *rq);

#endif
