/* Queued jobs run together: the loop (batch_gather.c) hands the mutation
 * worker a run of queued Slurm prologs on disjoint hosts, or of releases,
 * with the job at the queue's head; the worker (batch.c) commits the
 * prologs in one transaction (one device round for all) and the releases
 * in one write of the store, and answers each job on its own. Private to
 * controller/ofcd/: the loop's calls and the worker's, on the job alone. */
#ifndef OFC_CONTROLLER_OFCD_BATCH_H
#define OFC_CONTROLLER_OFCD_BATCH_H

#include "controller/ofcd/internal.h"

/* At most this many jobs a batch (a round of Slurm jobs submitted at once
 * fits; the holds' and the journal's writes stay small). */
#define BATCH_MAX 64
/* How long a prolog at the head waits for its plan ahead, at most */
#define BATCH_WAIT_S 2.0
/* ... and at least (the requests that came with it are queued by then) */
#define BATCH_GATHER_S 0.005

/* (loop) head, just taken off the queue to run: the jobs queued right
 * behind it that may run with it into head->batch, taken off the queue
 * and started (queue_start) as head was. Prologs join a prolog: a
 * run-time partition each, hosts disjoint from every other's, names
 * distinct, planned ahead (or being planned) when renumbered; releases
 * join a release, names distinct. The first job that may not join ends
 * the run: the queue's order holds. */
void batch_gather(struct ofcd *d, struct job *head);
/* (loop) Whether j, at the queue's head with the worker idle, waits for its
 * plan ahead first (a renumbered prolog whose plan a thread is making, for
 * at most BATCH_WAIT_S since it was queued, at least BATCH_GATHER_S): the
 * worker would only wait for it, and the prologs queued meanwhile go with
 * it. Changes nothing: the loop looks again on a timer. */
bool batch_wait(struct ofcd *d, struct job *j);
/* (mutation worker) head and head->batch: the prologs in one transaction
 * (each that cannot join, or all when the batch cannot be planned, on its
 * own as ofcd_run_mutation runs it), the releases in one write; each
 * job's answer in its reply, head->order the order the loop answers them
 * in (the order they ran: a snapshot published before the jobs it
 * follows are answered). */
void ofcd_run_batch(struct ofcd *d, struct job *head);
/* (loop) The running job (the one handed over, or one of its batch) of
 * that ticket, or (ticket 0) of that connection's request; NULL: none. */
struct job *batch_running(const struct ofcd *d, uint64_t ticket, uint64_t conn_id, uint64_t req_id);

#endif
