/* Run-time partitions planned ahead, off ofcd's queue (controller/ofcd/
 * plan_ahead.c): what a plan read is compared with the devices as read at
 * its turn (ahead_same), and through a daemon on a sim switch, a job
 * planned while a conflicting commit is under way is planned again, while
 * one whose hosts the commit leaves alone takes its plan made ahead; a
 * job renumbered in the worker's turn is renumbered by the worker's
 * planner process, and refused when that one dies; the held partitions'
 * schedules are computed once a spec (held.c). */
#include "tests/unit/ofcd_world.h"

#include "controller/ofcd/worker.h"
#include "proto/state.pb-c.h"

#include <math.h>
#include <sys/stat.h>

/* The sim switch's commands wait while the gate is closed: the mutation
 * worker stops inside a transaction, and the jobs behind it are planned
 * ahead meanwhile. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool closed;
};

static void gate_wait(void *ctx, uint64_t command)
{
	struct gate *g = ctx;

	(void)command;
	pthread_mutex_lock(&g->mu);
	while (g->closed)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

static void gate_set(struct gate *g, bool closed)
{
	pthread_mutex_lock(&g->mu);
	g->closed = closed;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* ---- ahead_budget -------------------------------------------------------------------- */

/* A lone job's renumbering gets the whole budget; a burst shares it, so
 * that the jobs waiting behind one are planned in about one budget's time
 * on the pool's threads, never under the floor. */
static void test_budget(void **state)
{
	(void)state;
	assert_true(ahead_budget(2, 0) == RELABEL_BUDGET_S);
	assert_true(ahead_budget(4, 0) == RELABEL_BUDGET_S);
	assert_true(ahead_budget(0, 0) == RELABEL_BUDGET_S);
	/* two threads, two jobs behind: half each */
	assert_true(fabs(ahead_budget(2, 2) - RELABEL_BUDGET_S / 2) < 1e-12);
	/* 31 prologs behind the first of a burst of 32 on two threads */
	assert_true(ahead_budget(2, 31) == RELABEL_BUDGET_MIN_S);
	for (uint32_t behind = 1; behind < 64; behind++)
		assert_true(ahead_budget(2, behind) <= ahead_budget(2, behind - 1));
}

/* ---- ahead_same --------------------------------------------------------------------- */

static void test_same(void **state)
{
	const char *yaml = "name: t\n"
			   "hosts: {count: 8, prefix: h, ports: 2}\n"
			   "switches:\n"
			   "  - {name: s0, type: ocs, ports: 16, driver: {type: sim}}\n"
			   "wiring: {pattern: sequential, switches: [s0]}\n"
			   "topology: ring:8\n";
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	struct partition p = {0};
	uint32_t hosts[] = {0, 1, 2, 3}; /* switch ports 1..8 */
	struct device_state then = {0}, now = {0};
	const struct device_state *t[] = {&then}, *n[] = {&now};

	(void)state;
	assert_int_equal(config_parse("t.yaml", yaml, strlen(yaml), &f, &err), 0);
	assert_int_equal(fabric_validate(f, &err), 0);
	p.name = (char *)"p";
	p.runtime = true;
	p.nmembers = 4;
	p.member_host = hosts;
	uint32_t ports[] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
	p.member_port = ports;
	then.cls = now.cls = DEV_SWITCH;
	/* between two of p's ports, one from p outward, one elsewhere */
	state_add_xconn(&then, 1, 4);
	state_add_xconn(&then, 2, 9);
	state_add_xconn(&then, 11, 14);
	state_copy(&now, &then);
	assert_true(ahead_same(f, &p, t, n));
	/* what leaves p, and what is elsewhere, changes nothing p reads */
	state_clear(&now);
	state_add_xconn(&now, 1, 4);
	state_add_xconn(&now, 13, 16);
	assert_true(ahead_same(f, &p, t, n));
	/* one between p's own ports, gone or new: planned again */
	state_add_xconn(&now, 3, 6);
	assert_false(ahead_same(f, &p, t, n));
	state_clear(&now);
	state_add_xconn(&now, 2, 9);
	assert_false(ahead_same(f, &p, t, n));
	/* a switch not read then, or not read now */
	assert_false(ahead_same(f, &p, (const struct device_state *const[]){NULL}, t));
	assert_false(ahead_same(f, &p, t, (const struct device_state *const[]){NULL}));
	state_free(&then);
	state_free(&now);
	fabric_free(f);
}

/* ---- through ofcd ------------------------------------------------------------------- */

/* A Reconfigure of a partition made of hosts, framed into buf at *n. */
static void put_partition(uint8_t *buf, size_t *n, uint64_t id, const char *name, const char *spec,
			  const char *const *hosts, uint32_t nhosts, bool relabel)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Reconfigure rq = OFC__V1__RECONFIGURE__INIT;

	req.has_id = 1;
	req.id = id;
	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req.reconfigure = &rq;
	rq.partition = (char *)name;
	rq.target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
	rq.topology = (char *)spec;
	rq.n_hosts = nhosts;
	rq.hosts = (char **)hosts;
	rq.has_relabel = 1;
	rq.relabel = relabel;
	size_t len = protobuf_c_message_pack(&req.base, buf + *n + 4);
	frame_len_put(buf + *n, (uint32_t)len);
	*n += len + 4;
}

static void put_release(uint8_t *buf, size_t *n, uint64_t id, const char *name)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReleasePartition rel = OFC__V1__RELEASE_PARTITION__INIT;

	req.has_id = 1;
	req.id = id;
	req.body_case = OFC__V1__REQUEST__BODY_RELEASE_PARTITION;
	req.release_partition = &rel;
	rel.name = (char *)name;
	size_t len = protobuf_c_message_pack(&req.base, buf + *n + 4);
	frame_len_put(buf + *n, (uint32_t)len);
	*n += len + 4;
}

/* Until threads have taken k plans (being made or made). */
static void wait_taken(struct world *w, uint64_t k)
{
	for (int i = 0; i < 5000; i++) {
		uint64_t started;

		pthread_mutex_lock(&w->d->ahead.mu);
		started = w->d->ahead.started;
		pthread_mutex_unlock(&w->d->ahead.mu);
		if (started >= k)
			return;
		usleep(2000);
	}
	fail_msg("%llu plans ahead taken, not %llu", (unsigned long long)w->d->ahead.started,
		 (unsigned long long)k);
}

/* n answers on fd, each OK; ops[id] the operations of each. */
static void answers(int fd, uint32_t n, uint32_t *ops)
{
	for (uint32_t i = 0; i < n; i++) {
		Ofc__V1__Response *r = read_answer(fd);

		assert_non_null(r);
		if (r->status != OFC__V1__STATUS__STATUS_OK)
			fail_msg("answer %llu: %s", (unsigned long long)r->id, r->message);
		assert_true(r->id < 8);
		ops[r->id] = r->transaction ? r->transaction->operations : 0;
		ofc__v1__response__free_unpacked(r, NULL);
	}
}

static void test_conflict_replanned(void **state)
{
	struct world *w = *state;
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	const char *row0[] = {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"};
	/* the same hosts in another order: ring:8 on them is another ring */
	const char *mixed[] = {"h0", "h3", "h6", "h1", "h4", "h7", "h2", "h5"};
	const char *row1[] = {"h8", "h9", "h10", "h11", "h12", "h13", "h14", "h15"};
	const char *row2[] = {"h16", "h17", "h18", "h19", "h20", "h21", "h22", "h23"};
	struct ofcd_client c;
	uint8_t buf[8192];
	uint32_t ops[8] = {0};
	size_t n = 0;
	Ofc__V1__Response *r;

	w->sim.before_command = gate_wait;
	w->sim.hook_ctx = &g;
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(w->d->ahead.nthreads > 0); /* (started before the first answer) */
	int fd = raw_connect(w->sock);

	/* Job c takes h0..h7 to a ring in the mixed order, and stops in its
	 * transaction; behind it c's release, then job a asks for a ring on
	 * the same hosts, renumbered: planned ahead on the torus's circuits. */
	gate_set(&g, true);
	put_partition(buf, &n, 1, "c", "ring:8", mixed, 8, false);
	put_release(buf, &n, 2, "c");
	put_partition(buf, &n, 3, "a", "ring:8", row0, 8, true);
	send_all(fd, buf, n);
	wait_taken(w, 1); /* (a alone is planned ahead: c keeps its order) */
	gate_set(&g, false);
	answers(fd, 3, ops);
	/* c's commit changed the circuits between a's hosts after a was
	 * planned: planned again on c's ring, a keeps every circuit of it */
	assert_true(ops[1] > 0);
	assert_int_equal(ops[3], 0);
	assert_int_equal(log_count(w, "ticket 4: partition a: ring:8 on 8 hosts, relabelled: "
				      "planned in its turn: the circuits between its hosts changed "
				      "since it was planned"),
			 1);

	/* Job b on h8..h15 behind job d on h16..h23: d's commit takes the
	 * torus's links between the rows, none between b's own hosts, and b
	 * commits the plan made ahead. */
	n = 0;
	gate_set(&g, true);
	put_partition(buf, &n, 4, "d", "ring:8", row2, 8, false);
	put_partition(buf, &n, 5, "b", "ring:8", row1, 8, true);
	send_all(fd, buf, n);
	wait_taken(w, 2);
	gate_set(&g, false);
	answers(fd, 2, ops);
	assert_true(ops[4] > 0 && ops[5] > 0);
	assert_int_equal(log_count(w, "partition b: ring:8 on 8 hosts, relabelled: planned in its"),
			 0);
	assert_int_equal(log_count(w, "partition b: ring:8 on 8 hosts, relabelled: took: "), 1);
	pthread_mutex_lock(&w->log_mu);
	const char *took = strstr(w->log.buf, "partition b: ring:8 on 8 hosts, relabelled: took: ");
	assert_non_null(took);
	const char *eol = strchr(took, '\n');
	assert_non_null(strstr(took, "renumbering ahead"));
	assert_true(strstr(took, "renumbering ahead") < eol);
	pthread_mutex_unlock(&w->log_mu);

	/* Three partitions held at ring:8 (a, b, d): each shows its schedule,
	 * computed once for the spec and kept (held.c), not on every commit. */
	r = get_state(&c, 9);
	assert_int_equal(r->state->n_held, 3);
	uint8_t first[4096];
	size_t first_len = 0;
	for (size_t i = 0; i < r->state->n_held; i++) {
		const Ofc__V1__Schedule *sc = r->state->held[i]->schedule;
		uint8_t packed[4096];

		assert_non_null(sc);
		assert_string_equal(sc->topology, "ring:8");
		assert_true(ofc__v1__schedule__get_packed_size(sc) <= sizeof(packed));
		size_t len = ofc__v1__schedule__pack(sc, packed);
		if (!i)
			memcpy(first, packed, first_len = len);
		assert_int_equal(len, first_len);
		assert_memory_equal(packed, first, len);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(w->d->w->hsched.n, 1);
	assert_string_equal(w->d->w->hsched.spec[0], "ring:8");

	close(fd);
	ofcd_disconnect(&c);
	stop(w);
}

/* A plan ahead is made in a planner process: one that dies before it
 * answers costs one more, a second the plan ahead, which the log says
 * (how both ended); the worker plans the job in its turn, and commits. */
static void test_planner_killed(void **state)
{
	struct world *w = *state;
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	const char *row1[] = {"h8", "h9", "h10", "h11", "h12", "h13", "h14", "h15"};
	const char *row2[] = {"h16", "h17", "h18", "h19", "h20", "h21", "h22", "h23"};
	char dying[4200], starts[4200], cases[4400];
	struct ofcd_client c;
	uint8_t buf[8192];
	uint32_t ops[8] = {0};
	size_t n = 0;
	Ofc__V1__Response *r;

	/* (a renumbering's planner dies at once, counting its starts) */
	snprintf(starts, sizeof(starts), "%s/dying.starts", w->dir);
	snprintf(cases, sizeof(cases), "*\" --for relabel \"*) echo x >>'%s'; kill -9 $$ ;;",
		 starts);
	write_dying_planner(w, cases, dying, sizeof(dying));
	w->planner_of_next = dying;
	w->sim.before_command = gate_wait;
	w->sim.hook_ctx = &g;
	start(w, 30, 0);
	w->planner_of_next = NULL;
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	int fd = raw_connect(w->sock);

	gate_set(&g, true);
	put_partition(buf, &n, 4, "d", "ring:8", row2, 8, false);
	put_partition(buf, &n, 5, "b", "ring:8", row1, 8, true);
	send_all(fd, buf, n);
	wait_taken(w, 1);
	gate_set(&g, false);
	answers(fd, 2, ops);
	assert_true(ops[4] > 0 && ops[5] > 0);
	struct stat st;
	assert_int_equal(stat(starts, &st), 0);
	if (log_count(w, "partition b: ring:8 on 8 hosts, relabelled: planned in its "
			 "turn: its plan ahead failed: the planner process renumbering "
			 "it was killed by SIGKILL (by ofcd past the request's time "
			 "limit, or from outside) (the one before it was killed by "
			 "SIGKILL") != 1 ||
	    st.st_size != 4) /* two starts, "x\n" each */
	{
		fprintf(stderr, "the log:\n%s", w->log.buf);
		fail_msg("%lld bytes of starts", (long long)st.st_size);
	}
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
}

/* Whether every cross-connect of b is one of a's. */
static bool within(const struct device_state *b, const struct device_state *a)
{
	for (uint32_t k = 0; k < b->nxc; k++) {
		bool found = false;

		for (uint32_t i = 0; i < a->nxc && !found; i++)
			found = a->xc[i].in == b->xc[k].in && a->xc[i].out == b->xc[k].out;
		if (!found)
			return false;
	}
	return true;
}

/* A partition renumbered in the worker's turn (no plan made ahead: the
 * plan-ahead planner dies at every start) is renumbered by the worker's
 * planner process (`ofc-planner --for relabel-turn`), not by ofcd: while
 * that one dies at every start, the job is refused with how both ended
 * and nothing is held, and ofcd goes on; then a planner that lives
 * renumbers it onto the torus row it sits on, keeping every circuit (the
 * commit adds none). On a daemon that renumbered in its own process the
 * job committed without a planner of that kind. */
static void test_turn_in_planner(void **state)
{
	struct world *w = *state;
	/* row 1 of the torus in another order: ring:8 over them in this order
	 * is another ring; renumbered, it is the row's own */
	const char *mixed[] = {"h8", "h11", "h14", "h9", "h12", "h15", "h10", "h13"};
	char dying[4200], turns[4200], kill[4200], cases[8800];
	struct ofcd_client c;
	uint8_t buf[8192];
	size_t n = 0;
	Ofc__V1__Response *r;
	struct stat st;

	snprintf(turns, sizeof(turns), "%s/turn.starts", w->dir);
	snprintf(kill, sizeof(kill), "%s/kill-turn", w->dir);
	snprintf(cases, sizeof(cases),
		 "*\" --for relabel \"*) kill -9 $$ ;;\n"
		 "*\" --for relabel-turn \"*) echo x >>'%s'; [ -e '%s' ] && kill -9 $$ ;;",
		 turns, kill);
	write_dying_planner(w, cases, dying, sizeof(dying));
	FILE *fp = fopen(kill, "w");
	assert_non_null(fp);
	fclose(fp);
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w); /* (the switch read with no daemon on it) */
	struct device_state torus;
	state_init(&torus, DEV_SWITCH);
	state_copy(&torus, &w->sim.state);
	w->planner_of_next = dying;
	start(w, 30, 0);
	w->planner_of_next = NULL;
	connect_ok(w, &c);
	int fd = raw_connect(w->sock);

	put_partition(buf, &n, 5, "b", "ring:8", mixed, 8, true);
	send_all(fd, buf, n);
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_not_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "the planner process renumbering it was killed by SIGKILL (by ofcd "
				"past the request's time limit, or from outside) (the one before "
				"it was killed by SIGKILL"))
		fail_msg("refused for another reason: %s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(stat(turns, &st), 0);
	assert_true(st.st_size >= 4); /* two starts at least, "x\n" each */
	r = get_state(&c, 6);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(r->state->n_held, 0);
	ofc__v1__response__free_unpacked(r, NULL);

	assert_int_equal(unlink(kill), 0);
	n = 0;
	put_partition(buf, &n, 7, "b", "ring:8", mixed, 8, true);
	send_all(fd, buf, n);
	r = read_answer(fd);
	assert_non_null(r);
	if (r->status != OFC__V1__STATUS__STATUS_OK)
		fail_msg("answer %llu: %s", (unsigned long long)r->id, r->message);
	/* (the links out of the row taken down, none made) */
	assert_true(r->transaction && r->transaction->operations > 0);
	ofc__v1__response__free_unpacked(r, NULL);
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
	assert_true(within(&w->sim.state, &torus));
	assert_true(w->sim.state.nxc < torus.nxc);
	state_free(&torus);
}

/* ---- batches (batch.c) ------------------------------------------------------------------ */

/* n answers on fd into a[id] (ids below 16). */
static void answers_by_id(int fd, uint32_t n, Ofc__V1__Response **a)
{
	for (uint32_t i = 0; i < n; i++) {
		Ofc__V1__Response *r = read_answer(fd);

		assert_non_null(r);
		assert_true(r->id < 16);
		a[r->id] = r;
	}
}

static void answers_free(Ofc__V1__Response **a, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i])
			ofc__v1__response__free_unpacked(a[i], NULL);
	memset(a, 0, n * sizeof(*a));
}

/* Host names h0..h63, rows of 8: row r is h(8r)..h(8r+7). */
struct rows {
	char name[64][8];
	const char *row[8][8];
};

static void rows_init(struct rows *r)
{
	for (uint32_t i = 0; i < 64; i++) {
		snprintf(r->name[i], sizeof(r->name[i]), "h%u", i);
		r->row[i / 8][i % 8] = r->name[i];
	}
}

/* Until the queue holds n mutations (the loop has read every frame). */
static void wait_queued(struct ofcd_client *c, size_t n)
{
	for (int i = 0; i < 5000; i++) {
		Ofc__V1__Response *r = get_state(c, 90);
		size_t q = r->state ? r->state->n_queue : 0;

		ofc__v1__response__free_unpacked(r, NULL);
		if (q == n)
			return;
		usleep(2000);
	}
	fail_msg("the queue never held %zu mutations", n);
}

/* Prologs queued together on disjoint hosts commit in one transaction, each
 * answered on its own with its own operations; one on hosts a job before
 * it in the queue takes is not batched with it (it is refused, the hosts
 * held); releases queued together are let go of in one write. */
static void test_batch(void **state)
{
	struct world *w = *state;
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct rows h;
	struct ofcd_client c;
	Ofc__V1__Response *a[16] = {0}, *r;
	uint8_t buf[16384];
	size_t n = 0;

	rows_init(&h);
	w->sim.before_command = gate_wait;
	w->sim.hook_ctx = &g;
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	int fd = raw_connect(w->sock);

	/* x takes the worker (ticket 2) and stops in its transaction; behind
	 * it four prologs on rows 1..4 (tickets 3..6), renumbered, then p5 on
	 * p4's row again (ticket 7) */
	gate_set(&g, true);
	put_partition(buf, &n, 1, "x", "ring:8", h.row[0], 8, false);
	put_partition(buf, &n, 2, "p1", "ring:8", h.row[1], 8, true);
	put_partition(buf, &n, 3, "p2", "torus:2x4", h.row[2], 8, true);
	put_partition(buf, &n, 4, "p3", "ring:8", h.row[3], 8, true);
	put_partition(buf, &n, 5, "p4", "ring:8", h.row[4], 8, true);
	put_partition(buf, &n, 6, "p5", "ring:8", h.row[4], 8, true);
	send_all(fd, buf, n);
	wait_taken(w, 5);
	gate_set(&g, false);
	answers_by_id(fd, 6, a);
	assert_int_equal(a[1]->status, OFC__V1__STATUS__STATUS_OK);
	uint64_t batch_txn = a[2]->transaction->id;
	assert_true(batch_txn > a[1]->transaction->id);
	for (int i = 2; i <= 5; i++) {
		if (a[i]->status != OFC__V1__STATUS__STATUS_OK)
			fail_msg("p%d: %s", i - 1, a[i]->message);
		/* one transaction, each its own ticket and operations */
		assert_int_equal(a[i]->transaction->id, batch_txn);
		assert_int_equal(a[i]->transaction->ticket, (uint64_t)i + 1);
		assert_true(a[i]->transaction->operations > 0);
		assert_string_equal(a[i]->transaction->state, "committed");
		char want[80];
		snprintf(want, sizeof(want), "committed transaction %llu: %u operation",
			 (unsigned long long)batch_txn, a[i]->transaction->operations);
		assert_non_null(strstr(a[i]->message, want));
	}
	/* p5 wanted p4's hosts: not in p4's batch, then refused on its own */
	assert_int_equal(a[6]->status, OFC__V1__STATUS__STATUS_FAILED);
	assert_non_null(strstr(a[6]->message, "host h32 is held by partition 'p4'"));
	answers_free(a, 16);
	assert_int_equal(log_count(w, "batch of 4 reconfigure (tickets 3..6): took: "), 1);
	assert_int_equal(log_count(w, ": planned in its turn"), 0);
	r = get_state(&c, 9);
	assert_int_equal(r->state->n_held, 5);
	for (size_t i = 0; i < r->state->n_held; i++) /* each as aimed, on its own */
		assert_true(r->state->held[i]->at_target);
	ofc__v1__response__free_unpacked(r, NULL);

	/* y takes the worker; behind it the four released together */
	n = 0;
	gate_set(&g, true);
	put_partition(buf, &n, 7, "y", "ring:8", h.row[5], 8, false);
	put_release(buf, &n, 8, "p1");
	put_release(buf, &n, 9, "p2");
	put_release(buf, &n, 10, "p3");
	put_release(buf, &n, 11, "p4");
	send_all(fd, buf, n);
	wait_queued(&c, 4);
	gate_set(&g, false);
	answers_by_id(fd, 5, a);
	for (int i = 7; i <= 11; i++)
		if (a[i]->status != OFC__V1__STATUS__STATUS_OK)
			fail_msg("answer %d: %s", i, a[i]->message);
	assert_string_equal(a[9]->message, "released partition 'p2': its hosts return to the "
					   "pool; its circuits stay");
	answers_free(a, 16);
	assert_int_equal(log_count(w, "batch of 4 release-partition (tickets 9..12): took: "), 1);
	r = get_state(&c, 10);
	assert_int_equal(r->state->n_held, 2);
	ofc__v1__response__free_unpacked(r, NULL);
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
}

/* Renumbered prologs sent at once to an idle worker: the first waits for
 * its plan ahead (the worker would only wait for it), so the ones queued
 * meanwhile go with it, in one transaction, not the first alone. */
/* Lines in file (0: none). */
static unsigned lines_in(const char *file)
{
	FILE *fp = fopen(file, "r");
	unsigned n = 0;
	int ch;

	while (fp && (ch = fgetc(fp)) != EOF)
		n += ch == '\n';
	if (fp)
		fclose(fp);
	return n;
}

static void test_batch_first_waits(void **state)
{
	struct world *w = *state;
	struct rows h;
	struct ofcd_client c;
	Ofc__V1__Response *a[16] = {0}, *r;
	uint8_t buf[8192];
	size_t n = 0;
	char starts[1100], cases[1300], counting[1100];

	/* (the planner processes asked for a summary, counted) */
	snprintf(starts, sizeof(starts), "%s/summary.starts", w->dir);
	snprintf(cases, sizeof(cases), "*\" --for summary \"*) echo x >>'%s' ;;", starts);
	write_dying_planner(w, cases, counting, sizeof(counting));
	w->planner_of_next = counting;
	rows_init(&h);
	start(w, 30, 0);
	w->planner_of_next = NULL;
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	unsigned before = lines_in(starts);
	int fd = raw_connect(w->sock);
	put_partition(buf, &n, 1, "p1", "ring:8", h.row[1], 8, true);
	put_partition(buf, &n, 2, "p2", "ring:8", h.row[2], 8, true);
	put_partition(buf, &n, 3, "p3", "ring:8", h.row[3], 8, true);
	send_all(fd, buf, n);
	answers_by_id(fd, 3, a);
	for (int i = 1; i <= 3; i++)
		assert_int_equal(a[i]->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(a[1]->transaction->id, 2);
	assert_int_equal(a[2]->transaction->id, 2);
	answers_free(a, 16);
	assert_int_equal(log_count(w, "batch of "), 1);
	/* three held on one topology: its schedule asked of one planner */
	assert_int_equal(lines_in(starts) - before, 1);
	/* the transaction they share logged once, its watchers told for each
	 * member (test_batch_events.sh) */
	assert_int_equal(log_count(w, "transaction started (transaction 2)"), 1);
	assert_int_equal(log_count(w, "transaction committed (transaction 2)"), 1);
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
}

/* Whether the one log line that has `head` also has `tail`. */
static bool line_has(struct world *w, const char *head, const char *tail)
{
	pthread_mutex_lock(&w->log_mu);
	const char *at = strstr(w->log.buf, head);
	const char *eol = at ? strchr(at, '\n') : NULL;
	const char *t = at ? strstr(at, tail) : NULL;
	bool has = at && !strstr(at + 1, head) && t && (!eol || t < eol);
	pthread_mutex_unlock(&w->log_mu);
	return has;
}

/* Until the plan-ahead threads have logged n plans made (10 s at most):
 * how many they have. */
static unsigned wait_planned(struct world *w, unsigned n)
{
	for (int i = 0; i < 5000 && log_count(w, ": planned ahead in ") < n; i++)
		usleep(2000);
	return log_count(w, ": planned ahead in ");
}

/* ofcd on w with the sim switch's commands behind gate g, its planner
 * program planner (NULL: the build's), c connected, the fabric committed
 * at torus:8x8; the raw connection the test frames requests on. */
static int start_gated(struct world *w, struct gate *g, const char *planner, struct ofcd_client *c)
{
	Ofc__V1__Response *r;

	w->planner_of_next = planner;
	w->sim.before_command = gate_wait;
	w->sim.hook_ctx = g;
	start(w, 30, 0);
	w->planner_of_next = NULL;
	connect_ok(w, c);
	r = reconfigure(c, "torus:8x8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	return raw_connect(w->sock);
}

/* The answers to requests 1..n on fd, each OK. */
static void answers_ok(int fd, uint32_t n)
{
	Ofc__V1__Response *a[16] = {0};

	assert_true(n < 16);
	answers_by_id(fd, n, a);
	for (uint32_t i = 1; i <= n; i++)
		assert_int_equal(a[i]->status, OFC__V1__STATUS__STATUS_OK);
	answers_free(a, 16);
}

/* A plan's budget is shared with every job of its burst the worker has yet
 * to run, those queued before it as well as after: a prolog planned while
 * three others wait for the worker gets two threads' share of four
 * (0.1 s * 2 / 5), not the whole budget a job with none behind it got.
 * Once the worker has run them all, a lone job gets the whole budget
 * again. */
static void test_burst_budget(void **state)
{
	struct world *w = *state;
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct rows h;
	struct ofcd_client c;
	Ofc__V1__Response *a[16] = {0};
	uint8_t buf[8192];
	size_t n = 0;
	char line[160];

	rows_init(&h);
	int fd = start_gated(w, &g, NULL, &c);
	assert_true(w->d->ahead.nthreads >= 2);
	double threads = w->d->ahead.nthreads;

	/* the worker stops in a whole fabric's reconfigure (no partition: it
	 * runs alone); three prologs behind it are planned ahead meanwhile */
	gate_set(&g, true);
	put_partition(buf, &n, 1, NULL, "ring:64", NULL, 0, false);
	put_partition(buf, &n, 2, "p1", "ring:8", h.row[1], 8, true);
	put_partition(buf, &n, 3, "p2", "ring:8", h.row[2], 8, true);
	put_partition(buf, &n, 4, "p3", "ring:8", h.row[3], 8, true);
	send_all(fd, buf, n);
	unsigned planned = wait_planned(w, 3);
	/* the fourth comes alone, none behind it, three before it unrun */
	n = 0;
	put_partition(buf, &n, 5, "p4", "ring:8", h.row[4], 8, true);
	send_all(fd, buf, n);
	planned += wait_planned(w, 4);
	gate_set(&g, false); /* (before any assert: a failed one stops the daemon) */
	assert_int_equal(planned, 7);
	snprintf(line, sizeof(line), "of a %.3f s budget (3 more jobs of its burst yet to run)",
		 RELABEL_BUDGET_S * threads / (threads + 3));
	assert_true(line_has(w, "partition p4: planned ahead in ", line));
	answers_ok(fd, 5);

	/* all run: a lone job's plan has the whole budget */
	n = 0;
	put_partition(buf, &n, 6, "p5", "ring:8", h.row[5], 8, true);
	send_all(fd, buf, n);
	answers_by_id(fd, 1, a);
	assert_int_equal(a[6]->status, OFC__V1__STATUS__STATUS_OK);
	answers_free(a, 16);
	snprintf(line, sizeof(line), "of a %.3f s budget (0 more jobs of its burst yet to run)",
		 RELABEL_BUDGET_S);
	assert_true(line_has(w, "partition p5: planned ahead in ", line));
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
}

/* A plan already running when its burst comes is cut to its share: the
 * first prolog's planner (here one that sleeps a second before it starts)
 * is planning it with the whole budget when three more come; its share of
 * the four is 0.1 s x 2 / 5, written to the page its planner's search
 * reads (test_relabel's test_cut_ends_the_search: the search ends there). */
static void test_burst_cuts_a_running_plan(void **state)
{
	struct world *w = *state;
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct rows h;
	struct ofcd_client c;
	uint8_t buf[8192];
	size_t n = 0;
	char slow[1100], line[160];

	write_dying_planner(w, "*\" --for relabel \"*) sleep 1 ;;", slow, sizeof(slow));
	rows_init(&h);
	int fd = start_gated(w, &g, slow, &c);
	double threads = w->d->ahead.nthreads;

	gate_set(&g, true); /* (the worker stops in a whole fabric's reconfigure) */
	put_partition(buf, &n, 1, NULL, "ring:64", NULL, 0, false);
	put_partition(buf, &n, 2, "p1", "ring:8", h.row[1], 8, true);
	send_all(fd, buf, n);
	wait_taken(w, 1); /* p1's plan runs: its planner sleeps */
	n = 0;
	put_partition(buf, &n, 3, "p2", "ring:8", h.row[2], 8, true);
	put_partition(buf, &n, 4, "p3", "ring:8", h.row[3], 8, true);
	put_partition(buf, &n, 5, "p4", "ring:8", h.row[4], 8, true);
	send_all(fd, buf, n);
	unsigned planned = wait_planned(w, 4);
	gate_set(&g, false); /* (before any assert: a failed one stops the daemon) */
	assert_int_equal(planned, 4);
	snprintf(line, sizeof(line), "of a %.3f s budget, cut to %.3f s as its burst came",
		 RELABEL_BUDGET_S, RELABEL_BUDGET_S * threads / (threads + 3));
	assert_true(line_has(w, "partition p1: planned ahead in ", line));
	answers_ok(fd, 5);
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
}

/* ofcd killed in a batch's transaction (kill -9 as crashpoint.h makes it:
 * the state directory and the switch as they were at a command of it):
 * the restart repairs the batch's journal as any other. Killed half-way,
 * the switch is taken back to what it held before the batch; killed when
 * the switch had taken every change (before the read-back and the
 * commit), the batch is finished: every partition's circuits in place,
 * the record the batch's. */
struct kill_hook {
	struct gate *g;
	struct crash_point *cp;
	const char *journal;
	uint64_t txn;		  /* the batch's */
	uint32_t at, seen;	  /* its command `at` since its journal was written */
	struct device_state *pre; /* the switch as the batch found it */
};

static void kill_hook(void *ctx, uint64_t command)
{
	struct kill_hook *k = ctx;
	char *data = NULL;
	size_t len = 0;
	struct ofc_error err = {0};

	gate_wait(k->g, command);
	if (k->cp->taken || read_file(k->journal, 1 << 24, &data, &len, &err) < 0)
		return;
	Ofc__V1__Journal *j = ofc__v1__journal__unpack(NULL, len, (const uint8_t *)data);
	if (j && j->id == k->txn && ++k->seen == 1)
		state_copy(k->pre, &k->cp->sim->state);
	if (j && j->id == k->txn && k->seen == k->at)
		crash_take(k->cp);
	if (j)
		ofc__v1__journal__free_unpacked(j, NULL);
	free(data);
}

static void remove_state(struct world *w)
{
	static const char *const ext[] = {"state", "journal", "held", "lock"};
	char path[200];

	for (size_t i = 0; i < ARRAY_SIZE(ext); i++) {
		snprintf(path, sizeof(path), "%s/simfab.%s", w->dir, ext[i]);
		unlink(path);
	}
}

static void batch_killed(struct world *w, uint32_t at, bool finished)
{
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct crash_point cp, done;
	struct device_state pre, tgt;
	struct kill_hook k = {.g = &g, .cp = &cp, .txn = 3, .at = at, .pre = &pre};
	char journal[200];
	struct rows h;
	struct ofcd_client c;
	Ofc__V1__Response *a[16] = {0}, *r;
	uint8_t buf[8192];
	size_t n = 0;

	rows_init(&h);
	state_init(&pre, DEV_SWITCH);
	snprintf(journal, sizeof(journal), "%s/simfab.journal", w->dir);
	k.journal = journal;
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:8x8", 1); /* transaction 1 */
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	crash_arm(&cp, w->dir, &w->sim, 0);
	w->sim.before_command = kill_hook;
	w->sim.hook_ctx = &k;
	int fd = raw_connect(w->sock);

	/* x (transaction 2) holds the worker; p1..p3 commit as transaction 3 */
	gate_set(&g, true);
	put_partition(buf, &n, 1, "x", "ring:8", h.row[0], 8, false);
	put_partition(buf, &n, 2, "p1", "ring:8", h.row[1], 8, true);
	put_partition(buf, &n, 3, "p2", "ring:8", h.row[2], 8, true);
	put_partition(buf, &n, 4, "p3", "ring:8", h.row[3], 8, true);
	send_all(fd, buf, n);
	wait_taken(w, 3);
	gate_set(&g, false);
	answers_by_id(fd, 4, a);
	for (int i = 1; i <= 4; i++)
		assert_int_equal(a[i]->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(a[2]->transaction->id, 3);
	assert_int_equal(a[4]->transaction->id, 3);
	uint32_t ops = a[2]->transaction->operations + a[3]->transaction->operations +
		       a[4]->transaction->operations;
	answers_free(a, 16);
	assert_true(cp.taken);
	assert_true(at <= ops + 2);
	/* the journal then: the batch's, as any transaction's, under its last
	 * partition's name and topology */
	const struct crash_file *jf = crash_file(&cp, "simfab.journal");
	assert_non_null(jf);
	Ofc__V1__Journal *jr = ofc__v1__journal__unpack(NULL, jf->len, (const uint8_t *)jf->data);
	assert_non_null(jr);
	assert_int_equal(jr->id, 3);
	assert_string_equal(jr->partition, "p3");
	assert_string_equal(jr->topology, "ring:8");
	ofc__v1__journal__free_unpacked(jr, NULL);
	/* the switch then: at neither end half-way, at the target before the
	 * read-back */
	state_init(&tgt, DEV_SWITCH);
	state_copy(&tgt, &w->sim.state);
	assert_false(state_equal(&cp.state, &tgt));
	close(fd);
	ofcd_disconnect(&c);
	stop(w);
	/* What a kill -9 there leaves; finished: the switch had taken every
	 * change when it died (before the read-back and the commit) */
	crash_restore(&cp);
	assert_false(state_equal(&w->sim.state, &pre)); /* (half-way) */
	if (finished)
		state_copy(&w->sim.state, &tgt);

	start(w, 30, 0);
	connect_ok(w, &c);
	r = get_state_settled(&c, 5);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_null(r->state->transaction); /* no unfinished transaction */
	assert_int_equal(r->state->config_generation, finished ? 3 : 2);
	/* x's hold stays; the batch's are written by the repair that
	 * finished it (the journal holds what its commit writes), none by
	 * the one that undid it */
	assert_int_equal(r->state->n_held, finished ? 4 : 1);
	for (size_t i = 0; i < r->state->n_held; i++) {
		static const char *const names[] = {"p1", "p2", "p3", "x"};
		bool known = false;

		for (size_t q = 0; q < ARRAY_SIZE(names); q++)
			known |= strcmp(r->state->held[i]->name, names[q]) == 0;
		assert_true(known);
		assert_true(finished || strcmp(r->state->held[i]->name, "x") == 0);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(access(journal, F_OK), -1);
	/* undone: as before the batch; finished: every partition's circuits */
	assert_true(state_equal(&w->sim.state, finished ? &tgt : &pre));
	ofcd_disconnect(&c);
	stop(w);
	crash_arm(&done, w->dir, &w->sim, 0); /* (nothing: frees as crash_free wants) */
	crash_free(&done);
	crash_free(&cp);
	state_free(&pre);
	state_free(&tgt);
}

static void test_batch_killed(void **state)
{
	struct world *w = *state;

	batch_killed(w, 4, false); /* half-way through its changes: undone */
	remove_state(w);
	state_clear(&w->sim.state);
	batch_killed(w, 4, true); /* every change made: finished */
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_same),
	    cmocka_unit_test_setup_teardown(test_conflict_replanned, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_planner_killed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_turn_in_planner, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch_first_waits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_burst_budget, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_burst_cuts_a_running_plan, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch_killed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
