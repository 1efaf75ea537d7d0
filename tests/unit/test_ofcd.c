/* ofcd in-process, over its real Unix sockets: the load test against
 * build/ocs-emu over TL1 (32 clients x 1,000 GetState with 20 Reconfigure
 * interleaved: every request answered, no error, the switch and the record
 * consistent at the end); then, with a sim switch, fuzzed frames that never
 * disturb a bystander; queue order and cancel; reloads that keep the old
 * config on error; GetSchedule against the library; clients that vanish
 * or stall; what one local user may make the daemon hold. Failures and
 * damaged state: test_ofcd_failures.c. */
#include "tests/unit/ofcd_world.h"

/* ---- frames ----------------------------------------------------------------- */

/* The loop is private to controller/, but its behaviour shows through the
 * daemon: covered by every test below. Frames: the length codec. */
static void test_frame_length(void **state)
{
	uint8_t h[4];
	uint32_t v[] = {0, 1, 255, 256, 0x01020304, 16u << 20, 0xffffffffu};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		frame_len_put(h, v[i]);
		assert_int_equal(frame_len_get(h), v[i]);
	}
	frame_len_put(h, 0x01020304);
	assert_int_equal(h[0], 1);
	assert_int_equal(h[3], 4);
}

/* ---- an emulated switch ------------------------------------------------------------ */

/* Start BUILD/ocs-emu (256 ports, the repository's credentials) on an
 * ephemeral port; returns its pid, *port the port. */
static pid_t start_emulator(struct world *w, int *port)
{
	char *emu = xasprintf("%s/ocs-emu", build_dir), *pf = xasprintf("%s/emu.port", w->dir);
	char *text = NULL;
	struct ofc_error err = {0};
	size_t len;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = {emu,
				"--listen",
				"127.0.0.1:0",
				"--port-file",
				pf,
				"--ports",
				"256",
				"--credentials",
				"configs/credentials/ocs0.cred",
				NULL};

		execv(emu, argv);
		_exit(127);
	}
	for (int i = 0; i < 2000 && !text; i++) {
		if (access(pf, F_OK) != 0 || read_file(pf, 64, &text, &len, &err) < 0) {
			text = NULL;
			usleep(2000);
		}
	}
	assert_non_null(text);
	*port = atoi(text);
	free(text);
	free(emu);
	free(pf);
	return pid;
}

static void stop_emulator(pid_t pid)
{
	int st;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}

/* The config of the load test: the torus over TL1 to the emulator. */
static void write_tl1_config(struct world *w, int port)
{
	char cwd[1024], *text;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	text = xasprintf("name: tlfab\n"
			 "hosts: {count: 64, prefix: h, ports: 4}\n"
			 "switches:\n"
			 "  - name: ocs0\n"
			 "    type: ocs\n"
			 "    ports: 256\n"
			 "    driver: {type: tl1, address: 127.0.0.1:%d, credentials: "
			 "%s/configs/credentials/ocs0.cred, timeout: 5s, retries: 2}\n"
			 "wiring: {pattern: sequential, switches: [ocs0]}\n"
			 "topology: torus:8x8\n"
			 "collectives:\n"
			 "  - {op: allreduce, size: 1MiB}\n",
			 port, cwd);
	write_config(w, text);
	free(text);
}

/* ---- load ------------------------------------------------------------------------ */

#define CLIENTS	  32
#define READS	  1000
#define RECONFIGS 20

struct load {
	struct world *w;
	atomic_int answered, errors, reconfigs_done, in_progress_seen;
	atomic_int bad_topology, went_back;
};

static void *reader(void *arg)
{
	struct load *L = arg;
	struct ofcd_client c;
	struct ofc_error err = {0};
	uint64_t last_gen = 0;

	if (ofcd_connect(&c, L->w->sock, &err) < 0) {
		atomic_fetch_add(&L->errors, READS);
		return NULL;
	}
	c.timeout = 60;
	for (int i = 0; i < READS; i++) {
		Ofc__V1__Response *r = get_state(&c, (uint64_t)i + 1);

		if (!r) {
			atomic_fetch_add(&L->errors, 1);
			break;
		}
		atomic_fetch_add(&L->answered, 1);
		if (r->status != OFC__V1__STATUS__STATUS_OK ||
		    r->body_case != OFC__V1__RESPONSE__BODY_STATE || r->id != (uint64_t)i + 1) {
			atomic_fetch_add(&L->errors, 1);
		} else {
			const Ofc__V1__State *s = r->state;

			/* Committed states only, and never older than one seen. */
			if (s->config_generation < last_gen)
				atomic_fetch_add(&L->went_back, 1);
			last_gen = s->config_generation;
			if (s->topology && strcmp(s->topology->spec, "torus:8x8") != 0 &&
			    strcmp(s->topology->spec, "circulant:64:3,8") != 0)
				atomic_fetch_add(&L->bad_topology, 1);
			if (s->transaction)
				atomic_fetch_add(&L->in_progress_seen, 1);
		}
		ofc__v1__response__free_unpacked(r, NULL);
	}
	ofcd_disconnect(&c);
	return NULL;
}

static void *reconfigurer(void *arg)
{
	struct load *L = arg;
	struct ofcd_client c;
	struct ofc_error err = {0};

	if (ofcd_connect(&c, L->w->sock, &err) < 0) {
		atomic_fetch_add(&L->errors, RECONFIGS);
		return NULL;
	}
	c.timeout = 60;
	for (int i = 0; i < RECONFIGS; i++) {
		/* Spread over the readers' run: wait for a share of their reads. */
		while (atomic_load(&L->answered) < (i * CLIENTS * READS) / (RECONFIGS + 1))
			usleep(200);
		Ofc__V1__Response *r =
		    reconfigure(&c, i % 2 ? "torus:8x8" : "circulant:64:3,8", 1000 + (uint64_t)i);

		if (!r || r->status != OFC__V1__STATUS__STATUS_OK)
			atomic_fetch_add(&L->errors, 1);
		else
			atomic_fetch_add(&L->reconfigs_done, 1);
		if (r)
			ofc__v1__response__free_unpacked(r, NULL);
	}
	ofcd_disconnect(&c);
	return NULL;
}

static void test_load(void **state)
{
	struct world *w = *state;
	struct load L = {.w = w};
	pthread_t th[CLIENTS + 1];
	struct ofcd_client c;
	Ofc__V1__Response *r;

	int port;
	pid_t emu = start_emulator(w, &port);

	write_tl1_config(w, port);
	start(w, 30, 0);
	for (int i = 0; i < CLIENTS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, &L), 0);
	assert_int_equal(pthread_create(&th[CLIENTS], NULL, reconfigurer, &L), 0);
	for (int i = 0; i <= CLIENTS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&L.answered), CLIENTS * READS);
	assert_int_equal(atomic_load(&L.errors), 0);
	assert_int_equal(atomic_load(&L.reconfigs_done), RECONFIGS);
	assert_int_equal(atomic_load(&L.bad_topology), 0);
	assert_int_equal(atomic_load(&L.went_back), 0);

	/* Consistent at the end: 20 commits, the last target recorded and on
	 * the device, nothing in progress. */
	connect_ok(w, &c);
	r = get_state(&c, 7);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(r->state->config_generation, RECONFIGS);
	assert_string_equal(r->state->topology->spec, "torus:8x8");
	assert_string_equal(r->state->target_topology, "torus:8x8");
	assert_true(r->state->at_target);
	assert_null(r->state->transaction);
	assert_int_equal(r->state->n_queue, 0);
	assert_int_equal(r->state->n_devices, 1);
	assert_int_equal(r->state->devices[0]->n_circuits, 256);
	/* Every circuit joins port j of one host to port j of another. */
	for (size_t i = 0; i < r->state->devices[0]->n_circuits; i++) {
		const Ofc__V1__Circuit *k = r->state->devices[0]->circuits[i];

		assert_non_null(k->src_host);
		assert_int_equal(k->src_port, k->dst_port);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);

	/* The switch holds exactly the torus's circuits, and the record says so. */
	struct fabric *f;
	struct ctl *c2;
	struct ctl_record rec;
	struct ofc_error err = {0};
	struct ctl_opts co = {.state_dir = w->dir};
	assert_int_equal(fabric_open(w->cfg, &f, &err), 0);
	assert_int_equal(ctl_open(f, &co, &c2, &err), 0);
	assert_int_equal(ctl_read(c2, &err), 0);
	assert_true(state_equal(&c2->devs[0].actual, &c2->devs[0].target));
	assert_int_equal(c2->devs[0].actual.nxc, f->ncircuits);
	assert_int_equal(ctl_load_record(w->dir, "tlfab", &rec, &err), 0);
	assert_true(rec.have_state && !rec.have_journal);
	assert_int_equal(rec.generation, RECONFIGS);
	assert_string_equal(rec.topology, "torus:8x8");
	assert_true(state_equal(&rec.dev_states[0], &c2->devs[0].actual));
	ctl_record_free(&rec);
	ctl_close(c2);
	fabric_free(f);
	stop_emulator(emu);
	print_message("load: %d GetState answered, %d seen during a transaction\n",
		      atomic_load(&L.answered), atomic_load(&L.in_progress_seen));
}

/* ---- fuzzed frames ------------------------------------------------------------------ */

struct bystander {
	struct world *w;
	atomic_bool stop;
	atomic_int ok, bad;
};

static void *bystand(void *arg)
{
	struct bystander *b = arg;
	struct ofcd_client c;
	struct ofc_error err = {0};
	uint64_t id = 1;

	if (ofcd_connect(&c, b->w->sock, &err) < 0) {
		atomic_fetch_add(&b->bad, 1);
		return NULL;
	}
	c.timeout = 30;
	while (!atomic_load(&b->stop)) {
		Ofc__V1__Response *r = get_state(&c, id++);

		if (r && r->status == OFC__V1__STATUS__STATUS_OK)
			atomic_fetch_add(&b->ok, 1);
		else
			atomic_fetch_add(&b->bad, 1);
		if (!r)
			break;
		ofc__v1__response__free_unpacked(r, NULL);
	}
	ofcd_disconnect(&c);
	return NULL;
}

/* Until the bystander has had more than `than` answers, or an error, or
 * 60 s: it must have asked before and after the hostile clients, however
 * late its thread runs on a loaded machine. */
static void bystander_answered(struct bystander *b, int than)
{
	double end = now_seconds() + 60;

	while (atomic_load(&b->ok) <= than && !atomic_load(&b->bad) && now_seconds() < end)
		usleep(1000);
}

static bool closed_by_peer(int fd)
{
	char b;
	struct timeval tv = {10, 0};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return recv(fd, &b, 1, 0) == 0;
}

/* Length 2^32-1 and just over the limit: an error answer, then closed. */
static void fuzz_huge_lengths(struct world *w)
{
	uint32_t huge[] = {0xffffffffu, (1u << 20) + 1};

	for (size_t i = 0; i < ARRAY_SIZE(huge); i++) {
		uint8_t h[4];
		int fd = raw_connect(w->sock);
		Ofc__V1__Response *r;

		frame_len_put(h, huge[i]);
		send_all(fd, h, 4);
		r = read_answer(fd);
		assert_non_null(r);
		assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
		assert_non_null(strstr(r->message, "larger than the limit"));
		ofc__v1__response__free_unpacked(r, NULL);
		assert_true(closed_by_peer(fd));
		close(fd);
	}
}

/* An empty frame and bytes that are not a Request: answered, and the
 * connection still works. */
static void fuzz_bad_frames(struct world *w)
{
	int fd = raw_connect(w->sock);
	Ofc__V1__Response *r;

	send_frame(fd, NULL, 0);
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "has no body"));
	ofc__v1__response__free_unpacked(r, NULL);
	send_frame(fd, (const uint8_t *)"\xff\xff\xff\xff\xff", 5);
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "not an ofc.v1.Request"));
	ofc__v1__response__free_unpacked(r, NULL);
	struct ofcd_client c = {.fd = fd, .max_frame = 64u << 20, .timeout = 30};

	r = get_state(&c, 5);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(r->id, 5);
	ofc__v1__response__free_unpacked(r, NULL);
	close(fd);
}

/* Answer req (as id) and check its status. */
static void expect_status(struct ofcd_client *c, Ofc__V1__Request *req, uint64_t id,
			  Ofc__V1__Status status, const char *has)
{
	Ofc__V1__Response *r = call(c, req, id);

	assert_int_equal(r->status, status);
	if (has)
		assert_non_null(strstr(r->message, has));
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Valid frames holding invalid requests: each answered INVALID (an
 * unknown ticket NOT_FOUND). */
static void fuzz_invalid_requests(struct world *w)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;
	Ofc__V1__Reconfigure rq = OFC__V1__RECONFIGURE__INIT;
	Ofc__V1__Workload wl = OFC__V1__WORKLOAD__INIT;
	Ofc__V1__ApplyConfig ac = OFC__V1__APPLY_CONFIG__INIT;
	Ofc__V1__Cancel k = OFC__V1__CANCEL__INIT;
	const Ofc__V1__Status invalid = OFC__V1__STATUS__STATUS_INVALID;
	struct ofcd_client c;
	Ofc__V1__Response *r;

	connect_ok(w, &c);
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	gs.collective = "bogus";
	expect_status(&c, &req, 1, invalid, NULL);
	gs.collective = "allreduce";
	gs.algorithm = "nonsense";
	expect_status(&c, &req, 2, invalid, NULL);
	gs.algorithm = NULL;
	gs.topology = "torus:0x";
	expect_status(&c, &req, 3, invalid, "column");

	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req.reconfigure = &rq; /* no target */
	expect_status(&c, &req, 4, invalid, NULL);
	rq.target_case = OFC__V1__RECONFIGURE__TARGET_WORKLOAD;
	rq.workload = &wl; /* no collective */
	expect_status(&c, &req, 5, invalid, NULL);
	rq.target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
	rq.topology = "hypercube:3"; /* 8 nodes for 64 hosts */
	expect_status(&c, &req, 6, invalid, "8 nodes but the fabric has 64 hosts");

	req.body_case = OFC__V1__REQUEST__BODY_APPLY_CONFIG;
	req.apply_config = &ac;
	ac.yaml = "name: simfab\nhosts: {count: 4, prefix: h}\ntopology: [1\n";
	ac.filename = "bad.yaml";
	r = call(&c, &req, 7);
	assert_int_equal(r->status, invalid);
	assert_int_equal(r->body_case, OFC__V1__RESPONSE__BODY_CONFIG_ERROR);
	assert_string_equal(r->config_error->file, "bad.yaml");
	assert_true(r->config_error->line >= 3);
	ofc__v1__response__free_unpacked(r, NULL);

	req.body_case = OFC__V1__REQUEST__BODY_CANCEL;
	req.cancel = &k; /* neither ticket nor id */
	expect_status(&c, &req, 8, invalid, NULL);
	k.has_ticket = 1;
	k.ticket = 999;
	expect_status(&c, &req, 9, OFC__V1__STATUS__STATUS_NOT_FOUND, NULL);
	ofcd_disconnect(&c);
}

/* Random bytes, truncated frames, mutated valid frames, clients that
 * vanish mid-frame, 300 of them on both sockets. */
static void fuzz_random(struct world *w)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint8_t valid[64];
	size_t vlen;
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;

	gs.collective = "allgather";
	gs.has_summary_only = gs.summary_only = 1;
	req.has_id = 1;
	req.id = 77;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	vlen = protobuf_c_message_pack(&req.base, valid);
	for (int round = 0; round < 300; round++) {
		uint8_t buf[256];
		size_t n;
		int fd;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		fd = raw_connect(round % 2 ? w->ro : w->sock);
		switch (round % 3) {
		case 0: /* random bytes, framing and all */
			n = 1 + seed % sizeof(buf);
			for (size_t i = 0; i < n; i++)
				buf[i] = (uint8_t)(seed >> (i % 8 * 8)) ^ (uint8_t)(i * 131);
			send_all(fd, buf, n);
			break;
		case 1: /* a valid frame cut short, then gone */
			frame_len_put(buf, (uint32_t)vlen);
			memcpy(buf + 4, valid, vlen);
			send_all(fd, buf, 1 + seed % (vlen + 3));
			break;
		default: /* a valid frame with flipped bytes in its body */
			memcpy(buf, valid, vlen);
			for (int k = 0; k < 3; k++)
				buf[(seed >> (k * 8)) % vlen] ^= (uint8_t)(seed >> (k * 8 + 4));
			send_frame(fd, buf, (uint32_t)vlen);
			break;
		}
		close(fd);
	}
}

/* Hostile frames and requests: none may crash the daemon or disturb a
 * bystander asking GetState all along. */
static void test_fuzz(void **state)
{
	struct world *w = *state;
	struct bystander b = {.w = w};
	pthread_t th;
	struct ofcd_client c;
	Ofc__V1__Response *r;

	start(w, 30, 1u << 20);
	assert_int_equal(pthread_create(&th, NULL, bystand, &b), 0);
	bystander_answered(&b, 0);
	int before = atomic_load(&b.ok);

	fuzz_huge_lengths(w);
	fuzz_bad_frames(w);
	fuzz_invalid_requests(w);
	fuzz_random(w);
	bystander_answered(&b, before);
	atomic_store(&b.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&b.bad), 0);
	assert_true(before > 0);
	assert_true(atomic_load(&b.ok) > before);

	/* Still serving, and the summary GetSchedule works. */
	connect_ok(w, &c);
	r = get_state(&c, 1);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
}

/* ---- order and cancel ------------------------------------------------------------------- */

static void test_order_and_cancel(void **state)
{
	struct world *w = *state;
	const char *specs[] = {"circulant:64:3,8", "torus:8x8", "circulant:64:1,8"};
	uint8_t buf[4096];
	size_t n = 0;
	Ofc__V1__Response *r;
	int fd;

	start(w, 30, 0);
	fd = raw_connect(w->sock);
	/* Three reconfigures and a cancel of the third, in one write: the
	 * first starts, the others wait, the third is cancelled. */
	for (int i = 0; i < 4; i++) {
		Ofc__V1__Request req;
		Ofc__V1__Reconfigure rq;
		Ofc__V1__Cancel k = OFC__V1__CANCEL__INIT;
		size_t len;

		if (i < 3) {
			reconfigure_req(&req, &rq, specs[i]);
		} else {
			ofc__v1__request__init(&req);
			k.has_request_id = 1;
			k.request_id = 3;
			req.body_case = OFC__V1__REQUEST__BODY_CANCEL;
			req.cancel = &k;
		}
		req.has_id = 1;
		req.id = (uint64_t)i + 1;
		len = protobuf_c_message_pack(&req.base, buf + n + 4);
		frame_len_put(buf + n, (uint32_t)len);
		n += len + 4;
	}
	send_all(fd, buf, n);
	/* Answers: the cancel (4) and the cancelled (3) at once, then 1 and
	 * 2 in the order they ran. */
	uint64_t order[4];
	Ofc__V1__Status st[5] = {0};
	for (int i = 0; i < 4; i++) {
		r = read_answer(fd);
		assert_non_null(r);
		order[i] = r->id;
		assert_true(r->id >= 1 && r->id <= 4);
		st[r->id] = r->status;
		if (r->id <= 2) {
			assert_int_equal(r->body_case, OFC__V1__RESPONSE__BODY_TRANSACTION);
			assert_string_equal(r->transaction->state, "committed");
			assert_string_equal(r->transaction->target, specs[r->id - 1]);
		}
		ofc__v1__response__free_unpacked(r, NULL);
	}
	assert_int_equal(st[1], OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(st[2], OFC__V1__STATUS__STATUS_OK);
	assert_int_equal(st[3], OFC__V1__STATUS__STATUS_CANCELLED);
	assert_int_equal(st[4], OFC__V1__STATUS__STATUS_OK);
	int pos1 = -1, pos2 = -1;
	for (int i = 0; i < 4; i++) {
		pos1 = order[i] == 1 ? i : pos1;
		pos2 = order[i] == 2 ? i : pos2;
	}
	assert_true(pos1 < pos2);
	close(fd);

	/* Two commits, in arrival order: the torus is what stands. */
	struct ofcd_client c;
	connect_ok(w, &c);
	r = get_state(&c, 9);
	assert_int_equal(r->state->config_generation, 2);
	assert_string_equal(r->state->topology->spec, "torus:8x8");
	ofc__v1__response__free_unpacked(r, NULL);

	/* Mutations on the read-only socket are refused; reads answered. */
	struct ofcd_client ro;
	struct ofc_error err = {0};
	assert_int_equal(ofcd_connect(&ro, w->ro, &err), 0);
	ro.timeout = 30;
	r = reconfigure(&ro, "circulant:64:3,8", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_DENIED);
	assert_non_null(strstr(r->message, "read-only socket"));
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&ro, 2);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&ro);
	pthread_mutex_lock(&w->log_mu);
	assert_non_null(strstr(w->log.buf, "denied reconfigure to uid"));
	pthread_mutex_unlock(&w->log_mu);

	/* A dry run changes nothing and says how much it would. */
	Ofc__V1__Request req;
	Ofc__V1__Reconfigure rq;
	reconfigure_req(&req, &rq, "circulant:64:3,8");
	rq.has_dry_run = rq.dry_run = 1;
	r = call(&c, &req, 10);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_string_equal(r->transaction->state, "planned");
	assert_true(r->transaction->operations > 0);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&c, 11);
	assert_int_equal(r->state->config_generation, 2);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
}

/* ---- watch, reload, apply-config ----------------------------------------------------- */

/* Read events until one of `kind`; false if the connection ends first. */
static bool wait_event(struct ofcd_client *c, Ofc__V1__Event__Kind kind, char *msg, size_t n)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *r;

	while (ofcd_recv(c, &r, &err) == 0) {
		bool hit = r->body_case == OFC__V1__RESPONSE__BODY_EVENT && r->event->kind == kind;

		/* Every answer, events included, has a sentence for people. */
		assert_true(r->message && *r->message);

		if (hit && msg)
			snprintf(msg, n, "%s", r->event->message ? r->event->message : "");
		ofc__v1__response__free_unpacked(r, NULL);
		if (hit)
			return true;
	}
	return false;
}

static void test_reload_and_apply(void **state)
{
	struct world *w = *state;
	struct ofcd_client c, wc;
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch wa = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *r;
	char msg[600], *text;

	start(w, 30, 0);
	connect_ok(w, &wc);
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &wa;
	r = call(&wc, &req, 42);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);

	/* A good config on reload: applied, events for every stage. */
	text = xasprintf(cfg_fmt, "circulant:64:3,8");
	write_config(w, text);
	free(text);
	ofcd_reload(w->d);
	assert_true(wait_event(&wc, OFC__V1__EVENT__KIND__KIND_TRANSACTION_STARTED, NULL, 0));
	assert_true(wait_event(&wc, OFC__V1__EVENT__KIND__KIND_TRANSACTION_COMMITTED, NULL, 0));
	assert_true(wait_event(&wc, OFC__V1__EVENT__KIND__KIND_CONFIG_APPLIED, NULL, 0));
	connect_ok(w, &c);
	r = get_state(&c, 1);
	assert_string_equal(r->state->topology->spec, "circulant:64:3,8");
	assert_int_equal(r->state->config_generation, 1);
	ofc__v1__response__free_unpacked(r, NULL);

	/* A bad one: rejected with its position, the old one kept. */
	write_config(w, "name: simfab\nhosts: {count: 64, prefix: h, ports: 4}\nbogus: 1\n");
	ofcd_reload(w->d);
	assert_true(wait_event(&wc, OFC__V1__EVENT__KIND__KIND_CONFIG_REJECTED, msg, sizeof(msg)));
	/* Watchers get where; the log gets what. */
	assert_non_null(strstr(msg, "fab.yaml:3:1: the config was rejected"));
	assert_null(strstr(msg, "bogus"));
	pthread_mutex_lock(&w->log_mu);
	assert_non_null(strstr(w->log.buf, "fab.yaml:3:1: unknown key 'bogus'"));
	pthread_mutex_unlock(&w->log_mu);
	r = get_state(&c, 2);
	assert_string_equal(r->state->topology->spec, "circulant:64:3,8");
	assert_string_equal(r->state->target_topology, "circulant:64:3,8");
	assert_int_equal(r->state->config_generation, 1);
	ofc__v1__response__free_unpacked(r, NULL);

	/* ApplyConfig: another fabric's name is refused; the right one applied. */
	Ofc__V1__ApplyConfig ac = OFC__V1__APPLY_CONFIG__INIT;
	req.body_case = OFC__V1__REQUEST__BODY_APPLY_CONFIG;
	req.apply_config = &ac;
	text = xasprintf(cfg_fmt, "torus:8x8");
	ac.yaml = strstr(text, "hosts:") - 0;
	char *other = xasprintf("name: other\n%s", ac.yaml);
	ac.yaml = other;
	ac.filename = "other.yaml";
	r = call(&c, &req, 3);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "serves fabric 'simfab'"));
	ofc__v1__response__free_unpacked(r, NULL);
	ac.yaml = text;
	ac.filename = "again.yaml";
	write_config(w, text); /* what the daemon runs now, for the comparison below */
	r = call(&c, &req, 4);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_string_equal(r->transaction->state, "committed");
	assert_string_equal(r->transaction->kind, "apply-config");
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&c, 5);
	assert_string_equal(r->state->topology->spec, "torus:8x8");
	assert_string_equal(r->state->config_file, "again.yaml");
	ofc__v1__response__free_unpacked(r, NULL);
	free(text);
	free(other);

	/* GetSchedule: the library's schedule, every step, verified. */
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	gs.collective = "allreduce";
	r = call(&c, &req, 6);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_true(r->schedule->verified);
	{
		struct fabric *f;
		struct ofc_error err = {0};
		struct schedule_result sr;
		struct schedule_query q = {.collective = SCHED_ALLREDUCE};
		size_t nx = 0;

		assert_int_equal(fabric_open(w->cfg, &f, &err), 0);
		q.fabric = f;
		assert_int_equal(schedule_compute(&q, &sr, NULL, &err), 0);
		assert_true(sr.main->s.verified);
		assert_int_equal(r->schedule->num_steps, sr.main->s.nsteps);
		assert_int_equal(r->schedule->n_steps, sr.main->s.nsteps);
		for (size_t t = 0; t < r->schedule->n_steps; t++)
			nx += r->schedule->steps[t]->n_transfers;
		assert_int_equal(nx, sr.main->s.nxfers);
		assert_int_equal(r->schedule->size_bytes, 1u << 20);
		assert_true(r->schedule->time_us == sr.main->s.time_us);
		assert_int_equal(r->schedule->n_links, sr.nlinks);
		schedule_result_free(&sr);
		fabric_free(f);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	ofcd_disconnect(&wc);
	stop(w);
}

/* ---- stalled clients ------------------------------------------------------------------------ */

static void test_stalled_clients(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;
	uint8_t h[6];
	int half, mute;

	/* A short client timeout, so the test is quick. */
	start(w, 0.3, 0);
	/* Half a frame, then silence: disconnected after the timeout. */
	half = raw_connect(w->sock);
	frame_len_put(h, 100);
	h[4] = 0x08;
	send_all(half, h, 5);
	/* Many requests and never a read: its replies pile up, and it is
	 * disconnected; nobody else notices. */
	mute = raw_connect(w->sock);
	{
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
		Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
		uint8_t buf[64];
		size_t n;
		int sndbuf = 1 << 16;

		setsockopt(mute, SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf));
		req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
		req.get_state = &gs;
		n = protobuf_c_message_pack(&req.base, buf + 4);
		frame_len_put(buf, (uint32_t)n);
		for (int i = 0; i < 2000; i++)
			send_all(mute, buf, n + 4);
	}
	connect_ok(w, &c);
	r = get_state(&c, 1);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(closed_by_peer(half));
	pthread_mutex_lock(&w->log_mu);
	assert_non_null(strstr(w->log.buf, "half a request (5 bytes)"));
	pthread_mutex_unlock(&w->log_mu);
	/* The mute client: closed once its replies sat unread. */
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&w->log_mu);
		bool seen = strstr(w->log.buf, "of replies unread") != NULL;
		pthread_mutex_unlock(&w->log_mu);
		if (seen)
			break;
		usleep(50 * 1000);
	}
	pthread_mutex_lock(&w->log_mu);
	assert_non_null(strstr(w->log.buf, "of replies unread"));
	pthread_mutex_unlock(&w->log_mu);
	r = get_state(&c, 2);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	close(half);
	close(mute);
	ofcd_disconnect(&c);
	stop(w);
}

/* ---- what one local user may make the daemon hold --------------------------------------- */

static void expect_busy(int fd, const char *words)
{
	Ofc__V1__Response *r = read_answer(fd);

	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_BUSY);
	if (!strstr(r->message, words))
		fail_msg("'%s' does not say '%s'", r->message, words);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* A request answered on fd: the daemon has accepted it. */
static void ping(int fd)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
	Ofc__V1__Response *r;
	uint8_t buf[64];
	size_t n;

	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	n = protobuf_c_message_pack(&req.base, buf);
	send_frame(fd, buf, (uint32_t)n);
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Connections per uid, both sockets counted: the one past the limit is
 * answered BUSY and closed; one hung up makes room again. */
static void test_uid_connections(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;
	int fd[4], extra;

	start_with(w, 30, 0, (struct limits){.max_clients_per_uid = 4});
	for (int i = 0; i < 4; i++) {
		fd[i] = raw_connect(i % 2 ? w->ro : w->sock);
		ping(fd[i]);
	}
	extra = raw_connect(w->sock);
	expect_busy(extra, "4 connections to ofcd already, the limit per user");
	assert_true(closed_by_peer(extra));
	close(extra);
	assert_int_equal(log_count(w, "the limit per user"), 1);
	close(fd[0]);
	connect_ok(w, &c);
	r = get_state(&c, 1);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	for (int i = 1; i < 4; i++)
		close(fd[i]);
	stop(w);
}

/* Bytes per uid: half-frames that together pass the limit close the
 * connection that would pass it, with BUSY; the others keep theirs. */
static void test_uid_bytes(void **state)
{
	struct world *w = *state;
	const uint32_t frame = 1u << 20;
	uint8_t *body = xcalloc(1, 700u << 10);
	int fd[3];

	/* 2.5 MiB per uid: input buffers double as bytes come (16 KiB ...
	 * 1 MiB), so two 700 KiB half-frames hold 2 MiB and the third
	 * passes 2.5 MiB when it doubles from 512 KiB. */
	start_with(w, 30, frame, (struct limits){.max_buffer_per_uid = 5u << 19});
	for (int i = 0; i < 3; i++) {
		uint8_t h[4];

		fd[i] = raw_connect(w->sock);
		frame_len_put(h, frame);
		send_all(fd[i], h, 4);
		send_all(fd[i], body, 700u << 10);
	}
	expect_busy(fd[2], "bytes in ofcd's buffers, the limit per user");
	/* Closed with its bytes unread: a reset, or the end. */
	char b;
	assert_true(recv(fd[2], &b, 1, 0) <= 0);
	assert_int_equal(log_count(w, "(--max-buffer-per-uid): closing this connection"), 1);
	/* The first two still get their frames read to the end. */
	for (int i = 0; i < 2; i++) {
		send_all(fd[i], body, frame - (700u << 10));
		Ofc__V1__Response *r = read_answer(fd[i]);

		assert_non_null(r);
		assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
		assert_non_null(strstr(r->message, "not an ofc.v1.Request"));
		ofc__v1__response__free_unpacked(r, NULL);
		close(fd[i]);
	}
	free(body);
	stop(w);
}

/* The read-only socket takes requests of 64 KiB at most; the main socket
 * its --max-frame. */
static void test_ro_frame(void **state)
{
	struct world *w = *state;
	Ofc__V1__Response *r;
	uint8_t h[4];
	int fd;

	start(w, 30, 0);
	fd = raw_connect(w->ro);
	frame_len_put(h, (64u << 10) + 1);
	send_all(fd, h, 4);
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "larger than the limit of 65536 bytes on the "
					   "read-only socket"));
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(closed_by_peer(fd));
	close(fd);
	/* The same frame on the main socket is read (and is no Request). */
	uint8_t *junk = xmalloc((64u << 10) + 1);
	memset(junk, 0xff, (64u << 10) + 1);
	fd = raw_connect(w->sock);
	send_frame(fd, junk, (64u << 10) + 1);
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "not an ofc.v1.Request"));
	ofc__v1__response__free_unpacked(r, NULL);
	close(fd);
	free(junk);
	stop(w);
}

/* What a client makes the daemon log is rate-limited: 2,000 bad frames
 * give the burst, the rate, and a count of what was dropped. */
static void test_log_limit(void **state)
{
	struct world *w = *state;
	const unsigned N = 2000;
	double t0;
	int fd;

	start(w, 30, 0);
	t0 = now_seconds();
	fd = raw_connect(w->sock);
	for (unsigned i = 0; i < N; i++) {
		send_frame(fd, (const uint8_t *)"\xff\xff\xff", 3);
		Ofc__V1__Response *r = read_answer(fd);

		assert_non_null(r);
		ofc__v1__response__free_unpacked(r, NULL);
	}
	double took = now_seconds() - t0;
	unsigned lines = log_count(w, "bytes that are not a Request");
	if (lines > 200 + (unsigned)(20 * took) + 1)
		fail_msg("%u lines for %u bad frames in %.2f s", lines, N, took);
	/* The sweep reports what was dropped once a token is back (more than
	 * once when the flood outlasted a sweep, as on a loaded machine). */
	for (int i = 0; i < 40 && !log_count(w, "log messages suppressed"); i++)
		usleep(50 * 1000);
	assert_true(log_count(w, "log messages suppressed") >= 1);
	/* What the daemon does itself is never dropped. */
	struct ofcd_client c;
	Ofc__V1__Response *r;
	connect_ok(w, &c);
	r = reconfigure(&c, "torus:4x16", 9);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(log_count(w, "reconfigure torus:4x16 from uid") >= 1);
	ofcd_disconnect(&c);
	close(fd);
	stop(w);
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_length),
	    cmocka_unit_test_setup_teardown(test_load, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_order_and_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reload_and_apply, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stalled_clients, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uid_connections, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uid_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ro_frame, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_log_limit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
