/* ofcd in-process, over its real Unix sockets: the load test against
 * build/ocs-emu over TL1 (32 clients x 1,000 GetState with 20 Reconfigure
 * interleaved: every request answered, no error, the switch and the record
 * consistent at the end); then, with a sim switch, fuzzed frames that never
 * disturb a bystander; queue order and cancel; reloads that keep the old
 * config on error; GetSchedule against the library; clients that vanish
 * or stall; failures reported or a switch lost: the schedule re-planned on
 * the surviving graph, announced, served and verified; a stop
 * while the planner computes leaves no thread behind. */
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "proto/control.pb-c.h"
#include "proto/state.pb-c.h"
#include "tests/unit/crashpoint.h"

static const char cfg_fmt[] = "name: simfab\n"
			      "hosts: {count: 64, prefix: h, ports: 4}\n"
			      "switches:\n"
			      "  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}\n"
			      "wiring: {pattern: sequential, switches: [ocs0]}\n"
			      "topology: %s\n"
			      "collectives:\n"
			      "  - {op: allreduce, size: 1MiB}\n";

/* The build directory, from argv[0] (BUILD/tests/test_ofcd). */
static char build_dir[512] = "build";

struct world {
	char dir[64];
	char cfg[128], sock[128], ro[128];
	struct sim_device sim;
	struct sim_device more[3]; /* ocs1..ocs3 (test_failures_lost_switch) */
	struct ofcd *d;
	pthread_t th;
	int run_rc;
	pthread_mutex_t log_mu;
	struct strbuf log;
};

static struct sim_device *lookup(void *ctx, const char *name)
{
	struct world *w = ctx;

	if (strcmp(name, "ocs0") == 0)
		return &w->sim;
	for (int i = 0; i < 3; i++) {
		char n[8];

		snprintf(n, sizeof(n), "ocs%d", i + 1);
		if (strcmp(name, n) == 0)
			return &w->more[i];
	}
	return NULL;
}

static void log_line(void *ctx, int level, const char *msg)
{
	struct world *w = ctx;

	(void)level;
	pthread_mutex_lock(&w->log_mu);
	sb_printf(&w->log, "%s\n", msg);
	pthread_mutex_unlock(&w->log_mu);
}

static void write_config(struct world *w, const char *text)
{
	struct ofc_error err = {0};

	assert_int_equal(atomic_write(w->cfg, text, strlen(text), &err), 0);
}

static void *run(void *arg)
{
	struct world *w = arg;
	struct ofc_error err = {0};

	w->run_rc = ofcd_run(w->d, &err);
	return NULL;
}

/* Limits for one test; zeros are the daemon's defaults. */
struct limits {
	uint32_t max_clients_per_uid, max_ro_frame;
	uint64_t max_buffer_per_uid;
	double probe_interval;
};

static void start_with(struct world *w, double client_timeout, uint32_t max_frame,
		       struct limits lim)
{
	char cred_dir[1100], cwd[1024];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(cred_dir, sizeof(cred_dir), "%s/configs/credentials", cwd);
	struct ofcd_opts o = {
	    .credentials_dir = cred_dir,
	    .config_path = w->cfg,
	    .socket_path = w->sock,
	    .ro_socket_path = w->ro,
	    .state_dir = w->dir,
	    .client_timeout = client_timeout,
	    .max_frame = max_frame,
	    .max_clients_per_uid = lim.max_clients_per_uid,
	    .max_ro_frame = lim.max_ro_frame,
	    .max_buffer_per_uid = lim.max_buffer_per_uid,
	    .probe_interval = lim.probe_interval,
	    .log_level = OFCD_LOG_DEBUG,
	    .log = log_line,
	    .log_ctx = w,
	    .sim_lookup = lookup,
	    .sim_ctx = w,
	};
	struct ofc_error err = {0};

	assert_int_equal(ofcd_open(&o, &w->d, &err), 0);
	assert_int_equal(pthread_create(&w->th, NULL, run, w), 0);
}

static void start(struct world *w, double client_timeout, uint32_t max_frame)
{
	start_with(w, client_timeout, max_frame, (struct limits){0});
}

static void stop(struct world *w)
{
	ofcd_stop(w->d);
	pthread_join(w->th, NULL);
	assert_int_equal(w->run_rc, 0);
	ofcd_close(w->d);
	w->d = NULL;
}

static int setup(void **state)
{
	struct world *w = xcalloc(1, sizeof(*w));
	char *text;

	snprintf(w->dir, sizeof(w->dir), "/tmp/ofcd-test.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	snprintf(w->cfg, sizeof(w->cfg), "%s/fab.yaml", w->dir);
	snprintf(w->sock, sizeof(w->sock), "%s/ofcd.sock", w->dir);
	snprintf(w->ro, sizeof(w->ro), "%s/ro.sock", w->dir);
	sim_device_init(&w->sim, DEV_SWITCH, 256);
	for (int i = 0; i < 3; i++)
		sim_device_init(&w->more[i], DEV_SWITCH, 256);
	pthread_mutex_init(&w->log_mu, NULL);
	text = xasprintf(cfg_fmt, "torus:8x8");
	write_config(w, text);
	free(text);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	char *cmd = xasprintf("rm -rf '%s'", w->dir);

	if (w->d)
		stop(w);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	sim_device_free(&w->sim);
	for (int i = 0; i < 3; i++)
		sim_device_free(&w->more[i]);
	sb_free(&w->log);
	pthread_mutex_destroy(&w->log_mu);
	free(w);
	return 0;
}

/* ---- requests --------------------------------------------------------------- */

static Ofc__V1__Response *call(struct ofcd_client *c, Ofc__V1__Request *req, uint64_t id)
{
	Ofc__V1__Response *r = NULL;
	struct ofc_error err = {0};

	req->has_id = 1;
	req->id = id;
	if (ofcd_call(c, req, &r, &err) < 0)
		return NULL;
	return r;
}

static Ofc__V1__Response *get_state(struct ofcd_client *c, uint64_t id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;

	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	return call(c, &req, id);
}

static void reconfigure_req(Ofc__V1__Request *req, Ofc__V1__Reconfigure *rq, const char *spec)
{
	ofc__v1__request__init(req);
	ofc__v1__reconfigure__init(rq);
	rq->target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
	rq->topology = (char *)spec;
	req->body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req->reconfigure = rq;
}

static Ofc__V1__Response *reconfigure(struct ofcd_client *c, const char *spec, uint64_t id)
{
	Ofc__V1__Request req;
	Ofc__V1__Reconfigure rq;

	reconfigure_req(&req, &rq, spec);
	return call(c, &req, id);
}

static void connect_ok(struct world *w, struct ofcd_client *c)
{
	struct ofc_error err = {0};

	assert_int_equal(ofcd_connect(c, w->sock, &err), 0);
	c->timeout = 60;
}

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

static int raw_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	/* The daemon may close first (oversized frames): ignore EPIPE. */
	(void)!send(fd, p, n, MSG_NOSIGNAL);
}

/* Read one answer frame (NULL when the daemon closed the connection). */
static Ofc__V1__Response *read_answer(int fd)
{
	struct ofcd_client c = {.fd = fd, .max_frame = 64u << 20, .timeout = 30};
	struct ofc_error err = {0};
	Ofc__V1__Response *r;

	snprintf(c.path, sizeof(c.path), "fuzz");
	return ofcd_recv(&c, &r, &err) < 0 ? NULL : r;
}

static void send_frame(int fd, const uint8_t *body, uint32_t n)
{
	uint8_t *buf = xmalloc((size_t)n + 4);

	frame_len_put(buf, n);
	if (n)
		memcpy(buf + 4, body, n);
	send_all(fd, buf, (size_t)n + 4);
	free(buf);
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
	fuzz_huge_lengths(w);
	fuzz_bad_frames(w);
	fuzz_invalid_requests(w);
	fuzz_random(w);
	atomic_store(&b.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&b.bad), 0);
	assert_true(atomic_load(&b.ok) > 0);

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

/* Lines of the log holding needle. */
static unsigned log_count(struct world *w, const char *needle)
{
	unsigned n = 0;

	pthread_mutex_lock(&w->log_mu);
	for (const char *p = w->log.buf; p && (p = strstr(p, needle)); p++)
		n++;
	pthread_mutex_unlock(&w->log_mu);
	return n;
}

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

/* ---- failures ---------------------------------------------------------------- */

static Ofc__V1__Response *report(struct ofcd_client *c, uint64_t id, bool restore, bool clear,
				 const char *a, const char *b)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *items[2] = {(char *)a, (char *)b};

	rf.n_items = (a != NULL) + (b != NULL);
	rf.items = items;
	rf.has_restore = rf.restore = restore;
	rf.has_clear = rf.clear = clear;
	req.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	req.report_failure = &rf;
	return call(c, &req, id);
}

/* The next event of that kind (other events skipped); caller frees. */
static Ofc__V1__Response *next_event(struct ofcd_client *c, Ofc__V1__Event__Kind kind)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *r;

	while (ofcd_recv(c, &r, &err) == 0) {
		if (r->body_case == OFC__V1__RESPONSE__BODY_EVENT && r->event->kind == kind)
			return r;
		ofc__v1__response__free_unpacked(r, NULL);
	}
	fail_msg("no event %d: %s", kind, err.msg);
	return NULL;
}

static Ofc__V1__Response *get_schedule(struct ofcd_client *c, const char *coll, uint64_t id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetSchedule gs = OFC__V1__GET_SCHEDULE__INIT;

	gs.collective = (char *)coll;
	req.body_case = OFC__V1__REQUEST__BODY_GET_SCHEDULE;
	req.get_schedule = &gs;
	return call(c, &req, id);
}

/* The config's fabric with `failures` added to its YAML (e.g. "failed_links:
 * [[h0, h1]]" under topology): the library's view of what ofcd runs. */
static struct fabric *fabric_with(struct world *w, const char *topology)
{
	char *text = xasprintf(cfg_fmt, topology), path[200];
	struct fabric *f;
	struct ofc_error err = {0};

	snprintf(path, sizeof(path), "%s/lib.yaml", w->dir);
	assert_int_equal(atomic_write(path, text, strlen(text), &err), 0);
	free(text);
	if (fabric_open(path, &f, &err) < 0)
		fail_msg("%s", err.msg);
	return f;
}

static int verify_sent_rc(struct world *w, const Ofc__V1__Schedule *got, const struct graph *g,
			  char *why, size_t n);
static void verify_sent(struct world *w, const Ofc__V1__Schedule *got, const struct graph *g)
{
	char why[400];

	if (verify_sent_rc(w, got, g, why, sizeof(why)) < 0)
		fail_msg("ofcd's schedule fails the verifier on the degraded graph: %s", why);
}

/* What ofcd sent is the library's schedule on f's degraded graph (the same
 * steps, transfers and time), uses no arc between hosts a and b, and passes
 * sched_verify on the degraded graph, read back from the bytes ofcd sent. */
static void check_degraded(struct world *w, const Ofc__V1__Schedule *got, const struct fabric *f,
			   uint32_t a, uint32_t b)
{
	struct schedule_query q = {.fabric = f, .collective = SCHED_ALLREDUCE};
	struct schedule_result sr;
	struct ofc_error err = {0};
	size_t nx = 0;

	assert_true(got->verified);
	assert_non_null(strstr(got->topology, " without "));
	for (size_t t = 0; t < got->n_steps; t++)
		for (size_t k = 0; k < got->steps[t]->n_transfers; k++) {
			const Ofc__V1__Transfer *x = got->steps[t]->transfers[k];

			assert_false((x->src == a && x->dst == b) || (x->src == b && x->dst == a));
			nx++;
		}
	assert_non_null(f->degraded);
	assert_int_equal(schedule_compute(&q, &sr, NULL, &err), 0);
	assert_true(sr.main->s.verified);
	assert_int_equal(got->num_steps, sr.main->s.nsteps);
	assert_int_equal(nx, sr.main->s.nxfers);
	assert_true(got->time_us == sr.main->s.time_us);
	schedule_result_free(&sr);
	verify_sent(w, got, f->degraded);
}

/* sched_verify on the bytes ofcd sent, read back as `ofc` reads a .pb. */
static int verify_sent_rc(struct world *w, const Ofc__V1__Schedule *got, const struct graph *g,
			  char *why, size_t n)
{
	struct ofc_error err = {0};
	char path[200];
	size_t len = protobuf_c_message_get_packed_size(&got->base);
	uint8_t *buf = xmalloc(len);
	struct schedule s;
	struct verify_opts vo = {.graph = g};
	struct verify_report vr;

	protobuf_c_message_pack(&got->base, buf);
	snprintf(path, sizeof(path), "%s/got.pb", w->dir);
	assert_int_equal(atomic_write(path, buf, len, &err), 0);
	free(buf);
	if (schedule_read_pb(path, &s, &err) < 0)
		fail_msg("%s", err.msg);
	int rc = sched_verify(&s, &vo, &vr);
	snprintf(why, n, "%s", rc < 0 ? vr.error : "");
	sched_free(&s);
	return rc;
}

/* The healthy all-to-all run ofcd keeps per config: taken
 * under a byte limit (refused over it), it stands in for the healthy solve
 * of a request with failures on the same graph (warm start, "vs healthy"
 * price; theta as when the healthy graph is solved again), and is ignored
 * on another graph. */
static void test_kept_healthy(void **state)
{
	(void)state;
	struct schedule_query q = {.spec = "torus:4x4",
				   .collective = SCHED_ALLTOALL,
				   .lowering = "paths",
				   .size = 1u << 20,
				   .keep_warm = true};
	struct schedule_result r, d, c;
	struct schedule_kept k, none;
	struct ofc_error err = {0};

	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_kept_take(&none, &r, 64, &err), -1);
	assert_non_null(strstr(err.msg, "MiB, over the"));
	assert_null(none.warm);
	assert_int_equal(schedule_kept_take(&k, &r, (size_t)1 << 20, &err), 0);
	assert_non_null(k.warm);
	assert_true(k.bytes == mcf_warm_bytes(k.warm) && k.bytes > 64);
	assert_true(k.time_us == r.main->time_us && k.time_us > 0);
	assert_null(r.main->mcf.warm);
	schedule_result_free(&r);

	struct schedule_query qd = q;
	qd.keep_warm = false;
	qd.fail = "0-1";
	qd.kept = &k;
	assert_int_equal(schedule_compute(&qd, &d, NULL, &err), 0);
	assert_true(d.used_kept && d.main->mcf.warm_started && d.main->verified);
	assert_true(d.main->healthy_us == k.time_us);
	qd.kept = NULL;
	assert_int_equal(schedule_compute(&qd, &c, NULL, &err), 0);
	assert_false(c.used_kept);
	assert_true(fabs(d.main->mcf.theta - c.main->mcf.theta) <= 1e-6 * c.main->mcf.theta);
	assert_true(fabs(d.main->healthy_us - c.main->healthy_us) <= 1e-9 * c.main->healthy_us);
	schedule_result_free(&d);
	schedule_result_free(&c);

	qd.spec = "torus:4x8";
	qd.kept = &k;
	assert_int_equal(schedule_compute(&qd, &d, NULL, &err), 0);
	assert_false(d.used_kept);
	schedule_result_free(&d);
	schedule_kept_free(&k);
	assert_null(k.warm);

	/* The planner let go of (schedule_query.cancel set): no schedule,
	 * "cancelled", healthy or with failures (the healthy run and the
	 * degraded one both stop). */
	atomic_bool cancel = true;
	q.cancel = &cancel;
	q.keep_warm = false;
	for (int i = 0; i < 2; i++) {
		q.fail = i ? "0-1" : NULL;
		int rc = schedule_compute(&q, &r, NULL, &err);
		if (rc == 0)
			rc = schedule_check(&r, &err);
		assert_int_equal(rc, -1);
		assert_string_equal(err.msg, "cancelled");
		ofc_error_clear(&err);
	}
}

/* Threads in this process (/proc/self/status). */
static int threads_now(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Threads:", 8) == 0)
			n = atoi(line + 8);
	fclose(f);
	return n;
}

/* Stopping ofcd while its planner computes the workload's MCF:
 * ofcd_close does not wait for the detached thread, and cancels its MCF,
 * so the thread is gone within moments, not when the solve ends (the
 * fluid MCF on genkautz:1024,4 ran on 42 s after the close without the
 * cancel here, 10-50 s elsewhere). */
static void test_stop_planner(void **state)
{
	struct world *w = *state;
	int before = threads_now();
	bool computing = false;

	/* big0: not one of the world's sim twins, so the driver's own. */
	write_config(w, "name: bigfab\n"
			"hosts: {count: 1024, prefix: h, ports: 4}\n"
			"switches:\n"
			"  - {name: big0, type: ocs, ports: 4096, driver: {type: sim}}\n"
			"wiring: {pattern: sequential, switches: [big0]}\n"
			"topology: genkautz:1024,4\n"
			"collectives:\n"
			"  - {op: alltoall, size: 1MiB}\n");
	start(w, 0, 0);
	for (int i = 0; i < 1000 && !computing; i++) {
		pthread_mutex_lock(&w->log_mu);
		computing = w->log.buf && strstr(w->log.buf, "schedule on genkautz:1024,4 in the "
							     "background");
		pthread_mutex_unlock(&w->log_mu);
		if (!computing)
			usleep(10000);
	}
	assert_true(computing);
	sleep(1); /* into the MCF */
	stop(w);
	double t0 = now_seconds();
	while (threads_now() > before && now_seconds() - t0 < 10)
		usleep(10000);
	if (threads_now() > before)
		fail_msg("%d threads 10 s after ofcd_close, %d before ofcd_open", threads_now(),
			 before);
	print_message("stop: the planner gone %.3f s after ofcd_close\n", now_seconds() - t0);
}

/* test_failures' daemon, its clients and what it has seen. */
struct failures {
	struct world *w;
	struct ofcd_client c, wc; /* a client, and one watching events */
	struct fabric *less;	  /* the torus less h0-h1 */
	double healthy_us, degraded_us;
};

/* Start the daemon with a client and a watcher. */
static void failures_start(struct failures *f, uint64_t watch_id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch wa = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *r;

	start(f->w, 30, 0);
	connect_ok(f->w, &f->wc);
	connect_ok(f->w, &f->c);
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &wa;
	r = call(&f->wc, &req, watch_id);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
}

static void failures_stop(struct failures *f)
{
	ofcd_disconnect(&f->c);
	ofcd_disconnect(&f->wc);
	stop(f->w);
}

/* The allreduce schedule: on topology, taking time_us (when > 0). */
static void expect_schedule(struct failures *f, uint64_t id, const char *topology, double time_us)
{
	Ofc__V1__Response *r = get_schedule(&f->c, "allreduce", id);

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_string_equal(r->schedule->topology, topology);
	if (time_us > 0)
		assert_true(r->schedule->time_us == time_us);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Report items (or restore them); expect status and, when given, the
 * message. */
static void expect_report(struct failures *f, uint64_t id, bool restore, const char *a,
			  const char *b, Ofc__V1__Status status, const char *message)
{
	Ofc__V1__Response *r = report(&f->c, id, restore, false, a, b);

	assert_int_equal(r->status, status);
	if (message)
		assert_string_equal(r->message, message);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* A failed link (named either way round): the event carries the
 * re-planned schedule, GetSchedule and the state follow it. */
static void failures_link(struct failures *f)
{
	Ofc__V1__Response *r = report(&f->c, 6, false, false, "h1-h0", NULL), *e;

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_string_equal(r->transaction->kind, "report-failure");
	assert_non_null(strstr(r->message, "1 failure in effect (h0-h1)"));
	assert_non_null(strstr(r->message, "verified"));
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 1);
	assert_string_equal(e->event->failed[0], "h0-h1");
	assert_non_null(e->event->schedule);
	assert_true(e->event->schedule->verified);
	assert_string_equal(e->event->schedule->topology, "torus:8x8 without h0-h1");
	assert_int_equal(e->event->schedule->n_steps, 0); /* summary only */
	assert_true(e->event->schedule->time_us > f->healthy_us);
	f->degraded_us = e->event->schedule->time_us;
	ofc__v1__response__free_unpacked(e, NULL);
	r = get_schedule(&f->c, "allreduce", 7);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_true(r->schedule->time_us == f->degraded_us);
	check_degraded(f->w, r->schedule, f->less, 0, 1);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&f->c, 8);
	assert_int_equal(r->state->n_failed, 1);
	assert_string_equal(r->state->failed[0], "h0-h1");
	assert_null(r->state->schedule_error);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* A Reconfigure keeps the set: on a topology without the link it is out of
 * effect, back on the torus it is in effect again. */
static void failures_reconfigure(struct failures *f)
{
	Ofc__V1__Response *r = reconfigure(&f->c, "circulant:64:3,8", 90);

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	expect_schedule(f, 91, "circulant:64:3,8", 0);
	assert_true(
	    log_count(f->w, "failure h0-h1 is not in effect on topology circulant:64:3,8") >= 1);
	r = reconfigure(&f->c, "torus:8x8", 92);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	expect_schedule(f, 93, "torus:8x8 without h0-h1", f->degraded_us);
	r = get_state(&f->c, 94);
	assert_int_equal(r->state->n_failed, 1);
	assert_non_null(r->state->schedule);
	assert_string_equal(r->state->schedule->topology, "torus:8x8 without h0-h1");
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Failures that cut a host off: accepted (they happened), but no schedule
 * survives, and GetSchedule says why. */
static void failures_cut_host(struct failures *f)
{
	Ofc__V1__Request rq = OFC__V1__REQUEST__INIT;
	Ofc__V1__ReportFailure rf = OFC__V1__REPORT_FAILURE__INIT;
	char *more[] = {"h5:2", "h5:3"};
	Ofc__V1__Response *r, *e;

	expect_report(f, 10, false, "h5:0", "h5:1", OFC__V1__STATUS__STATUS_OK, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 3);
	ofc__v1__response__free_unpacked(e, NULL);
	rf.n_items = 2;
	rf.items = more;
	rq.body_case = OFC__V1__REQUEST__BODY_REPORT_FAILURE;
	rq.report_failure = &rf;
	r = call(&f->c, &rq, 11);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_FAILED);
	assert_non_null(strstr(r->message, "no longer strongly connected"));
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_null(e->event->schedule);
	assert_int_equal(e->event->n_failed, 5);
	ofc__v1__response__free_unpacked(e, NULL);
	r = get_schedule(&f->c, "allreduce", 12);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_FAILED);
	assert_non_null(strstr(r->message, "no schedule survives the failures (5 in effect)"));
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&f->c, 13);
	assert_non_null(r->state->schedule_error);
	assert_null(r->state->schedule);
	ofc__v1__response__free_unpacked(r, NULL);
}

/* Restore all: the healthy schedule again, the file at path gone. */
static void failures_restore(struct failures *f, const char *path)
{
	Ofc__V1__Response *r = report(&f->c, 14, true, true, NULL, NULL), *e;

	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_non_null(strstr(r->message, "no failure in effect"));
	ofc__v1__response__free_unpacked(r, NULL);
	e = next_event(&f->wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 0);
	assert_string_equal(e->event->schedule->topology, "torus:8x8");
	assert_true(e->event->schedule->time_us == f->healthy_us);
	ofc__v1__response__free_unpacked(e, NULL);
	expect_schedule(f, 15, "torus:8x8", f->healthy_us);
	assert_int_equal(access(path, F_OK), -1);
}

/* ofcd_open on w's config and state directory: fails, err says why. */
static void open_fails(struct world *w, struct ofc_error *err)
{
	char cwd[1024], cred[1100];
	struct ofcd_opts o = {
	    .config_path = w->cfg,
	    .socket_path = w->sock,
	    .state_dir = w->dir,
	    .log_level = OFCD_LOG_DEBUG,
	    .log = log_line,
	    .log_ctx = w,
	    .sim_lookup = lookup,
	    .sim_ctx = w,
	};
	struct ofcd *d = NULL;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(cred, sizeof(cred), "%s/configs/credentials", cwd);
	o.credentials_dir = cred;
	ofc_error_clear(err);
	assert_int_equal(ofcd_open(&o, &d, err), -1);
	assert_null(d);
}

/* A damaged failures file at path stops the start, with the file's line. */
static void failures_damaged_file(struct world *w, const char *path)
{
	struct ofc_error err = {0};

	assert_int_equal(atomic_write(path, "h0-h1\nnot a failure\n", 20, &err), 0);
	open_fails(w, &err);
	assert_non_null(strstr(err.msg, "the file is damaged"));
	assert_int_equal(err.line, 2);
}

static void test_failures(void **state)
{
	struct failures f = {.w = *state};
	const Ofc__V1__Status invalid = OFC__V1__STATUS__STATUS_INVALID;
	Ofc__V1__Response *r;
	char why[400], path[200];

	f.less = fabric_with(f.w, "{spec: torus:8x8, failed_links: [[h0, h1]]}");
	failures_start(&f, 42);
	r = get_schedule(&f.c, "allreduce", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	assert_null(strstr(r->schedule->topology, "without"));
	f.healthy_us = r->schedule->time_us;
	/* The check below has teeth: the healthy schedule uses h0 -> h1. */
	assert_int_equal(verify_sent_rc(f.w, r->schedule, f.less->degraded, why, sizeof(why)), -1);
	ofc__v1__response__free_unpacked(r, NULL);

	/* Refused: no such link, no such host, bad syntax; nothing changes. */
	expect_report(&f, 2, false, "h0-h9", NULL, invalid,
		      "'h0-h9': topology 'torus:8x8' has no such link");
	expect_report(&f, 3, false, "h0-h1", "h99:0", invalid, "'h99:0': no host 'h99'");
	expect_report(&f, 4, false, "h0 h1", NULL, invalid, NULL);
	expect_report(&f, 5, true, "h2-h3", NULL, invalid, "'h2-h3' was not reported failed");

	failures_link(&f);
	/* The set survives a restart (persisted before the answer). */
	failures_stop(&f);
	failures_start(&f, 43);
	expect_schedule(&f, 9, "torus:8x8 without h0-h1", f.degraded_us);
	failures_reconfigure(&f);
	failures_cut_host(&f);
	snprintf(path, sizeof(path), "%s/simfab.failed", f.w->dir);
	failures_restore(&f, path);

	/* Read-only clients may not report. */
	struct ofcd_client ro;
	struct ofc_error err = {0};

	assert_int_equal(ofcd_connect(&ro, f.w->ro, &err), 0);
	ro.timeout = 30;
	r = report(&ro, 16, false, false, "h0-h1", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_DENIED);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&ro);

	failures_stop(&f);
	failures_damaged_file(f.w, path);
	fabric_free(f.less);
}

/* A switch lost: the host ports cabled to it fail with it (port 3 of every
 * host on ocs3: the torus's -y arcs), the schedule is re-planned without
 * them; when it is back, the healthy one returns. */
static void test_failures_lost_switch(void **state)
{
	struct world *w = *state;
	struct ofcd_client wc, c;
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Watch wa = OFC__V1__WATCH__INIT;
	Ofc__V1__Response *r, *e;
	static const char four[] =
	    "name: simfab\n"
	    "hosts: {count: 64, prefix: h, ports: 4}\n"
	    "switches:\n"
	    "  - {name: ocs0, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "  - {name: ocs1, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "  - {name: ocs2, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "  - {name: ocs3, type: ocs, ports: 64, driver: {type: sim}}\n"
	    "wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n"
	    "topology: torus:8x8\n"
	    "collectives:\n"
	    "  - {op: allreduce, size: 1MiB}\n";

	write_config(w, four);
	start_with(w, 30, 0, (struct limits){.probe_interval = 0.05});
	connect_ok(w, &wc);
	connect_ok(w, &c);
	req.body_case = OFC__V1__REQUEST__BODY_WATCH;
	req.watch = &wa;
	r = call(&wc, &req, 1);
	ofc__v1__response__free_unpacked(r, NULL);
	w->more[2].mode = FAULT_CLOSE;
	w->more[2].fail_count = UINT64_MAX / 2;
	w->more[2].fail_at = 1;
	e = next_event(&wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 64);
	for (size_t i = 0; i < e->event->n_failed; i++)
		assert_non_null(strstr(e->event->failed[i], ":3"));
	assert_non_null(e->event->schedule);
	assert_true(e->event->schedule->verified);
	ofc__v1__response__free_unpacked(e, NULL);
	r = get_schedule(&c, "allreduce", 2);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	{
		/* No transfer on an arc that port 3 carried (its transmit fibre
		 * and the receive fibre of the port that sent to it), and the
		 * verifier passes it on the graph without those arcs. */
		struct fabric *f;
		struct ofc_error err = {0};

		assert_int_equal(fabric_open(w->cfg, &f, &err), 0);
		const struct graph *g = f->graph;
		const uint32_t *to3 = f->ports.to + 3 * (size_t)g->n;
		bool *gone = xcalloc(g->m, sizeof(bool));
		uint32_t ngone = 0;

		for (uint32_t u = 0; u < g->n; u++)
			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
				if (g->adj[a] == to3[u]) {
					gone[a] = true;
					ngone++;
				}
		assert_int_equal(ngone, 64);
		assert_true(r->schedule->verified);
		for (size_t t = 0; t < r->schedule->n_steps; t++)
			for (size_t k = 0; k < r->schedule->steps[t]->n_transfers; k++) {
				const Ofc__V1__Transfer *x = r->schedule->steps[t]->transfers[k];

				assert_true(x->dst != to3[x->src]);
			}
		struct graph *dg = topo_without_arcs(g, gone, "lost ocs3");
		verify_sent(w, r->schedule, dg);
		graph_free(dg);
		free(gone);
		fabric_free(f);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	w->more[2].fail_at = 0;
	e = next_event(&wc, OFC__V1__EVENT__KIND__KIND_SCHEDULE_REPLANNED);
	assert_int_equal(e->event->n_failed, 0);
	assert_string_equal(e->event->schedule->topology, "torus:8x8");
	ofc__v1__response__free_unpacked(e, NULL);
	ofcd_disconnect(&c);
	ofcd_disconnect(&wc);
	stop(w);
}

static const char spare[] = "name: simfab\n"
			    "hosts: {count: 16, prefix: h, ports: 5}\n"
			    "switches:\n"
			    "  - {name: ocs0, type: ocs, ports: 80, driver: {type: sim}}\n"
			    "wiring: {pattern: sequential, switches: [ocs0]}\n"
			    "topology: torus:4x4\n"
			    "collectives:\n"
			    "  - {op: allgather, size: 1MiB}\n";

/* Re-wiring a lost port onto a spare: sixteen hosts with a fifth
 * port, all on ocs0 (sequential: host h's port p on switch port 1 + 5h +
 * p), torus:4x4 on ports 0-3. With ocs0 refusing a command the move's
 * transaction fails and rolls back: the port is a plain failure (the
 * schedule runs without it) and no move is kept. Reported again once the
 * switch works, the port moves onto h5:4 and the schedule runs on the whole
 * torus; the move is in STATE_DIR/simfab.rewired and the switch holds the
 * spare's circuits (30 -> 31 out to h6:0, 21 -> 30 in from h4:0). */
static void test_rewire(void **state)
{
	struct world *w = *state;
	struct ofcd_client c;
	Ofc__V1__Response *r;
	char path[300];

	write_config(w, spare);
	snprintf(path, sizeof(path), "%s/simfab.rewired", w->dir);
	start(w, 30, 0);
	connect_ok(w, &c);
	w->sim.mode = FAULT_DENY;
	w->sim.fail_count = 1;
	w->sim.fail_at = w->sim.commands + 3;
	r = report(&c, 1, false, false, "h5:0", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "; moving h5:0 to h5:4 failed: ") ||
	    !strstr(r->message, "bfb allgather on torus:4x4 without h5:0: "))
		fail_msg("%s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_int_equal(access(path, F_OK), -1);

	w->sim.fail_at = 0;
	r = report(&c, 2, false, false, "h5:0", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "; h5:0 moved to spare port h5:4 on ocs0 (transaction ") ||
	    !strstr(r->message, "bfb allgather on torus:4x4: "))
		fail_msg("%s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	char *text = NULL;
	size_t len;
	struct ofc_error err = {0};
	assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
	assert_non_null(strstr(text, "\nh5 0 4\n"));
	free(text);
	bool out = false, in = false, old = false;
	for (uint32_t i = 0; i < w->sim.state.nxc; i++) {
		const struct xconn *x = &w->sim.state.xc[i];

		out |= x->in == 30 && x->out == 31;
		in |= x->in == 21 && x->out == 30;
		old |= (x->in == 26 && x->out == 31) || (x->in == 21 && x->out == 26);
	}
	assert_true(out && in && !old);
	ofcd_disconnect(&c);
	stop(w);
}

/* ReportFailure items with a NUL byte are refused: protobuf-c cut "h0\0x"
 * at the NUL and the daemon failed h0. So are control
 * characters, and a NUL in any other request's string (a topology spec).
 * Nothing changes: no failure in effect afterwards. */
static void test_nul_in_names(void **state)
{
	struct world *w = *state;
	/* Request{id 1, report_failure{items "h0\0x"}} by hand */
	static const uint8_t nul_item[] = {0x08, 0x01, 0x42, 0x06, 0x0a, 0x04, 'h', '0', 0x00, 'x'};
	/* Request{id 2, reconfigure{topology "torus:8x8\0z"}} */
	static const uint8_t nul_spec[] = {0x08, 0x02, 0x1a, 0x0d, 0x0a, 0x0b, 't',  'o', 'r',
					   'u',	 's',  ':',  '8',  'x',	 '8',  0x00, 'z'};
	struct ofcd_client c;
	Ofc__V1__Response *r;
	int fd;

	start(w, 30, 0);
	fd = raw_connect(w->sock);
	send_frame(fd, nul_item, sizeof(nul_item));
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->id, 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_string_equal(r->message, "request 1: field 'items' holds a NUL byte; names, specs "
					"and paths are text without one");
	ofc__v1__response__free_unpacked(r, NULL);
	send_frame(fd, nul_spec, sizeof(nul_spec));
	r = read_answer(fd);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	assert_non_null(strstr(r->message, "field 'topology' holds a NUL byte"));
	ofc__v1__response__free_unpacked(r, NULL);
	close(fd);

	connect_ok(w, &c);
	r = report(&c, 3, false, false, "h0\x01", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	ofc__v1__response__free_unpacked(r, NULL);
	r = report(&c, 4, false, false, "h0\n", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_INVALID);
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_state(&c, 5);
	assert_int_equal(r->state->n_failed, 0);
	assert_string_equal(r->state->target_topology, "torus:8x8");
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
}

/* ---- damaged state files ---------------------------------------------------- */

/* .rewired lines that are not a move of this config's hosts stop the start
 * with the file, the line and the mv; the file is left as it was (such
 * lines used to be accepted, "h0 -1 4294967295" as port 4294967295, then
 * found not to fit, dropped and the file deleted). A FIFO or a directory
 * in a state file's place is refused with its name (it was "ofcd: is not a
 * regular file"), or, for the record and the journal (which ofcd serves
 * without, refusing changes), logged with it; nothing is removed. */
static void test_damaged_state_files(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	char path[200], buf[1200], *text;
	size_t len;
	const struct {
		const char *text;
		unsigned line;
		const char *why;
	} bad[] = {
	    {"# moves\nh0 -1 4294967295\n", 2, "not HOST FROM TO"},
	    {"zz 0 2\n", 1, "'zz' is not a host of fabric 'simfab'"},
	    {"h0 0 9\n", 1, "h0 0 -> 9: not two different ports of h0 (0..4)"},
	    {"h0 3 3\n", 1, "h0 3 -> 3: not two different ports of h0 (0..4)"},
	    {"h0 0 4294967296\n", 1, "not HOST FROM TO"},
	    {"h0 0 4 extra\n", 1, "not HOST FROM TO"},
	    {"h1 0 4\nh1 4 3\n", 2, "a port of h1 4 -> 3 is in an earlier move too"},
	    {"h\x01 0 4\n", 1, "not HOST FROM TO"},
	};

	write_config(w, spare);
	snprintf(path, sizeof(path), "%s/simfab.rewired", w->dir);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(atomic_write(path, bad[i].text, strlen(bad[i].text), &err), 0);
		open_fails(w, &err);
		ofc_error_str(&err, buf, sizeof(buf));
		if (strcmp(err.file, path) != 0 || err.line != bad[i].line ||
		    !strstr(err.msg, bad[i].why) || !strstr(err.msg, "the file is damaged") ||
		    !strstr(err.msg, "`mv "))
			fail_msg("case %zu: %s", i, buf);
		assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
		assert_int_equal(len, strlen(bad[i].text));
		assert_memory_equal(text, bad[i].text, len);
		free(text);
	}
	/* what ofcd writes is fine */
	assert_int_equal(atomic_write(path, "# moves\nh1 0 4\n", 15, &err), 0);
	start(w, 30, 0);
	stop(w);
	unlink(path);

	/* A FIFO for .rewired, a directory for .failed: refused, named, kept. */
	assert_int_equal(mkfifo(path, 0600), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || !strstr(err.msg, "is not a regular file") ||
	    !strstr(err.msg, "`mv "))
		fail_msg("FIFO: %s", buf);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(path);
	snprintf(path, sizeof(path), "%s/simfab.failed", w->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || !strstr(err.msg, "is not a regular file (a directory)"))
		fail_msg("directory: %s", buf);
	assert_int_equal(rmdir(path), 0);

	/* The record a directory, the journal a FIFO: ofcd serves (changes
	 * refused) and its log names them. */
	char rec[200], jour[200];
	snprintf(rec, sizeof(rec), "%s/simfab.state", w->dir);
	snprintf(jour, sizeof(jour), "%s/simfab.journal", w->dir);
	assert_int_equal(mkdir(rec, 0700), 0);
	assert_int_equal(mkfifo(jour, 0600), 0);
	start(w, 30, 0);
	stop(w);
	char *want_rec =
		 xasprintf("%s: is not a regular file (a directory); nothing is planned", rec),
	     *want_jour = xasprintf("%s: is not a regular file (a FIFO); nothing is planned", jour);
	pthread_mutex_lock(&w->log_mu);
	bool named = strstr(w->log.buf, want_rec) && strstr(w->log.buf, want_jour);
	pthread_mutex_unlock(&w->log_mu);
	if (!named)
		fail_msg("log: %s", w->log.buf);
	free(want_rec);
	free(want_jour);
	assert_int_equal(stat(rec, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(stat(jour, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	rmdir(rec);
	unlink(jour);

	/* .held: bytes that are no HeldPartitions stop the start, named with
	 * the mv; an entry the config cannot hold (a host it lacks) is
	 * dropped, logged, and the file written again without it. */
	snprintf(path, sizeof(path), "%s/simfab.held", w->dir);
	assert_int_equal(atomic_write(path, "\xff\xff\xff", 3, &err), 0);
	open_fails(w, &err);
	ofc_error_str(&err, buf, sizeof(buf));
	if (strcmp(err.file, path) != 0 || !strstr(err.msg, "not an ofc.v1.HeldPartitions") ||
	    !strstr(err.msg, ".held.corrupt'"))
		fail_msg(".held: %s", buf);
	char *hosts[] = {"h0", "zz"}, *ok_hosts[] = {"h1"};
	Ofc__V1__HeldPartitions__Held e[2] = {OFC__V1__HELD_PARTITIONS__HELD__INIT,
					      OFC__V1__HELD_PARTITIONS__HELD__INIT},
				      *pe[2] = {&e[0], &e[1]};
	Ofc__V1__HeldPartitions hp = OFC__V1__HELD_PARTITIONS__INIT;
	e[0] = (Ofc__V1__HeldPartitions__Held){
	    .base = e[0].base, .name = "gone", .n_hosts = 2, .hosts = hosts, .topology = "ring:2"};
	e[1] = (Ofc__V1__HeldPartitions__Held){.base = e[1].base,
					       .name = "kept",
					       .n_hosts = 1,
					       .hosts = ok_hosts,
					       .topology = "ring:1",
					       .owner = "uid:7"};
	hp.n_held = 2;
	hp.held = pe;
	uint8_t hb[256];
	size_t hl = ofc__v1__held_partitions__pack(&hp, hb);
	assert_int_equal(atomic_write(path, hb, hl, &err), 0);
	start(w, 30, 0);
	stop(w);
	pthread_mutex_lock(&w->log_mu);
	named = strstr(w->log.buf, "partition gone dropped: the store's entry does not fit the "
				   "config: the config (fabric simfab) has no host zz") != NULL;
	pthread_mutex_unlock(&w->log_mu);
	if (!named)
		fail_msg("log: %s", w->log.buf);
	assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
	Ofc__V1__HeldPartitions *got =
	    ofc__v1__held_partitions__unpack(NULL, len, (const uint8_t *)text);
	assert_non_null(got);
	assert_int_equal(got->n_held, 1);
	assert_string_equal(got->held[0]->name, "kept");
	assert_string_equal(got->held[0]->owner, "uid:7");
	assert_int_equal(got->n_gone, 1);
	assert_string_equal(got->gone[0]->name, "gone");
	assert_true(got->gone[0]->dropped);
	ofc__v1__held_partitions__free_unpacked(got, NULL);
	free(text);
	unlink(path);
}

/* ---- kill points of a re-wiring ------------------------------------------ */

/* Where ofcd dies in the re-wiring's transaction: before its first change,
 * half-way, before the read-back (every change made), with the journal at
 * committing and the record old or new, after the commit with .rewired
 * not yet saved, and with the journal copied while it ran and put back
 * after the commit. */
enum rewire_kill {
	RK_FIRST_CHANGE,
	RK_MID,
	RK_BEFORE_READBACK,
	RK_COMMITTING,
	RK_RECORDED,
	RK_REWIRED_BEHIND,
	RK_JOURNAL_PUT_BACK,
	RK_POINTS
};
static const char *const rk_names[] = {
    "before the first change", "half-way",
    "before the read-back",    "committing, old record",
    "committing, new record",  "committed, .rewired not saved",
    "journal put back",
};

/* Write the journal of snapshot cp again in phase p (its bytes). */
static void journal_phase_again(struct world *w, const struct crash_point *cp,
				Ofc__V1__Journal__Phase p)
{
	const struct crash_file *jf = crash_file(cp, "simfab.journal");
	struct ofc_error err = {0};
	char path[200];

	assert_non_null(jf);
	Ofc__V1__Journal *j = ofc__v1__journal__unpack(NULL, jf->len, (const uint8_t *)jf->data);
	assert_non_null(j);
	j->phase = p;
	size_t len = ofc__v1__journal__get_packed_size(j);
	uint8_t *buf = xmalloc(len + 1);
	ofc__v1__journal__pack(j, buf);
	snprintf(path, sizeof(path), "%s/simfab.journal", w->dir);
	assert_int_equal(atomic_write(path, buf, len, &err), 0);
	free(buf);
	ofc__v1__journal__free_unpacked(j, NULL);
}

static void remove_state(struct world *w)
{
	static const char *const ext[] = {"state", "journal", "rewired", "failed", "lock"};
	char path[200];

	for (size_t i = 0; i < ARRAY_SIZE(ext); i++) {
		snprintf(path, sizeof(path), "%s/simfab.%s", w->dir, ext[i]);
		unlink(path);
	}
}

/* Reconfigure to circulant:16:1 (ports 0 and 1 of each host; 2..4 spare),
 * then h5:0 fails and is moved onto h5:2 (4 operations); ofcd dies at kill
 * point k of that transaction and starts again with its config file, which
 * says torus:4x4. The restart must serve what the devices hold: the
 * circulant with the move, in the state, the schedule, .rewired and the
 * record; or, killed before the device held the target, the circulant
 * with h5:0 failed and no move. It used to record the config's torus, drop
 * the move and delete .rewired, and serve the torus's schedule. */
static void rewire_killed(struct world *w, enum rewire_kill k)
{
	struct ofcd_client c;
	struct crash_point cp, done;
	struct device_state pre, tgt;
	Ofc__V1__Response *r;
	char path[200], *text = NULL;
	size_t len;
	struct ofc_error err = {0};

	remove_state(w);
	state_clear(&w->sim.state);
	write_config(w, spare);
	start(w, 30, 0);
	connect_ok(w, &c);
	r = reconfigure(&c, "circulant:16:1", 1);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	state_init(&pre, DEV_SWITCH);
	state_copy(&pre, &w->sim.state);
	/* the re-wiring, on a ctl of its own: open (1), read (2), 4 changes
	 * (3..6), the read-back (7) */
	uint64_t c0 = w->sim.commands;
	crash_arm(&cp, w->dir, &w->sim, c0 + (k == RK_FIRST_CHANGE ? 3 : k == RK_MID ? 5 : 7));
	r = report(&c, 2, false, false, "h5:0", NULL);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (!strstr(r->message, "h5:0 moved to spare port h5:2 on ocs0 (transaction 2, 4 "
				"operations)"))
		fail_msg("%s", r->message);
	ofc__v1__response__free_unpacked(r, NULL);
	assert_true(cp.taken);
	state_init(&tgt, DEV_SWITCH);
	state_copy(&tgt, &w->sim.state);
	/* the points are where they say: the journal written, the device at
	 * neither end half-way */
	assert_non_null(crash_file(&cp, "simfab.journal"));
	assert_int_equal(state_equal(&cp.state, &pre), k == RK_FIRST_CHANGE);
	assert_int_equal(state_equal(&cp.state, &tgt), k >= RK_BEFORE_READBACK);
	ofcd_disconnect(&c);
	stop(w);
	crash_arm(&done, w->dir, &w->sim, 0);
	crash_take(&done);

	/* what a kill -9 there leaves */
	crash_restore(k <= RK_COMMITTING ? &cp : &done);
	if (k == RK_COMMITTING || k == RK_RECORDED)
		journal_phase_again(w, &cp, OFC__V1__JOURNAL__PHASE__PHASE_COMMITTING);
	else if (k == RK_JOURNAL_PUT_BACK)
		journal_phase_again(w, &cp, OFC__V1__JOURNAL__PHASE__PHASE_APPLYING);
	snprintf(path, sizeof(path), "%s/simfab.rewired", w->dir);
	if (k == RK_REWIRED_BEHIND || k == RK_RECORDED || k == RK_JOURNAL_PUT_BACK)
		unlink(path);

	start(w, 30, 0);
	connect_ok(w, &c);
	r = get_state(&c, 3);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	const Ofc__V1__State *st = r->state;
	assert_null(r->state->transaction); /* no unfinished transaction */
	if (k <= RK_MID) {
		/* undone: the circulant, h5:0 a plain failure */
		assert_true(state_equal(&w->sim.state, &pre));
		assert_int_equal(st->n_moved, 0);
		assert_int_equal(access(path, F_OK), -1);
		assert_int_equal(st->n_failed, 1);
		assert_string_equal(st->failed[0], "h5:0");
		assert_int_equal(st->config_generation, 1);
	} else {
		assert_true(state_equal(&w->sim.state, &tgt));
		if (st->n_moved != 1 || strcmp(st->moved[0], "h5:0>h5:2") != 0 ||
		    !st->target_topology || strcmp(st->target_topology, "circulant:16:1") != 0)
			fail_msg("killed %s: served %s with %zu moved port(s)", rk_names[k],
				 st->target_topology ? st->target_topology : "-", st->n_moved);
		assert_int_equal(st->config_generation, 2);
		assert_true(st->devices[0]->at_target);
		assert_int_equal(read_file(path, 4096, &text, &len, &err), 0);
		assert_non_null(strstr(text, "\nh5 0 2\n"));
		free(text);
	}
	ofc__v1__response__free_unpacked(r, NULL);
	r = get_schedule(&c, "allgather", 4);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	if (strcmp(r->schedule->topology,
		   k <= RK_MID ? "circulant:16:1 without h5:0" : "circulant:16:1") != 0)
		fail_msg("killed %s: schedule on %s", rk_names[k], r->schedule->topology);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
	stop(w);
	crash_free(&cp);
	crash_free(&done);
	state_free(&pre);
	state_free(&tgt);
}

static void test_rewire_kill_points(void **state)
{
	struct world *w = *state;

	for (int k = 0; k < RK_POINTS; k++)
		rewire_killed(w, (enum rewire_kill)k);
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_length),
	    cmocka_unit_test(test_kept_healthy),
	    cmocka_unit_test_setup_teardown(test_load, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_order_and_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reload_and_apply, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stalled_clients, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uid_connections, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uid_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ro_frame, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_log_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failures_lost_switch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rewire, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rewire_kill_points, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_state_files, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nul_in_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stop_planner, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
