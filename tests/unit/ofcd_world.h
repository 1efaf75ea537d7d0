/* What the ofcd unit tests share: a daemon in-process over its real Unix
 * sockets on sim switches (struct world: setup and teardown for cmocka,
 * start and stop), its client calls, and raw frames. Included by
 * test_ofcd.c and test_ofcd_failures.c (static inline: each file uses
 * what it needs). */
#ifndef OFC_TESTS_UNIT_OFCD_WORLD_H
#define OFC_TESTS_UNIT_OFCD_WORLD_H

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
#include "controller/client/client.h"
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
	/* the planner program of the next start (NULL: the build's) */
	const char *planner_of_next;
	/* ofcd_opts.planner_path: the build's ofc-planner, beside tests/ */
	char planner[4096];
};

static inline struct sim_device *lookup(void *ctx, const char *name)
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

static inline void log_line(void *ctx, int level, const char *msg)
{
	struct world *w = ctx;

	(void)level;
	pthread_mutex_lock(&w->log_mu);
	sb_printf(&w->log, "%s\n", msg);
	pthread_mutex_unlock(&w->log_mu);
}

static inline void write_config(struct world *w, const char *text)
{
	struct ofc_error err = {0};

	assert_int_equal(atomic_write(w->cfg, text, strlen(text), &err), 0);
}

static inline void *run(void *arg)
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
	struct link_damp_opts link_damp;
};

/* A planner program that kills itself on some roles (for
 * w->planner_of_next): DIR/dying-planner, its path in path, a script that
 * runs `cases` (case arms on " ARGS ", e.g. `*" --for relabel "*) kill -9
 * $$ ;;`) and then the build's ofc-planner. */
static inline void write_dying_planner(const struct world *w, const char *cases, char *path,
				       size_t n)
{
	char *real = exe_sibling(NULL, "../ofc-planner");
	FILE *fp;

	assert_non_null(real);
	snprintf(path, n, "%s/dying-planner", w->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\ncase \" $* \" in\n%s\nesac\nexec '%s' \"$@\"\n", cases, real);
	fclose(fp);
	free(real);
	assert_int_equal(chmod(path, 0755), 0);
}

static inline void start_with(struct world *w, double client_timeout, uint32_t max_frame,
			      struct limits lim)
{
	char cred_dir[1100], cwd[1024];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(cred_dir, sizeof(cred_dir), "%s/configs/credentials", cwd);
	char *planner =
	    w->planner_of_next ? xstrdup(w->planner_of_next) : exe_sibling(NULL, "../ofc-planner");

	snprintf(w->planner, sizeof(w->planner), "%s", planner ? planner : "");
	free(planner);
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
	    .link_damp = lim.link_damp,
	    .log_level = OFCD_LOG_DEBUG,
	    .log = log_line,
	    .log_ctx = w,
	    .sim_lookup = lookup,
	    .sim_ctx = w,
	    .planner_path = w->planner,
	};
	struct ofc_error err = {0};

	if (ofcd_open(&o, &w->d, &err) != 0)
		fail_msg("ofcd_open: %s", err.msg);
	assert_int_equal(pthread_create(&w->th, NULL, run, w), 0);
}

static inline void start(struct world *w, double client_timeout, uint32_t max_frame)
{
	start_with(w, client_timeout, max_frame, (struct limits){0});
}

static inline void stop(struct world *w)
{
	ofcd_stop(w->d);
	pthread_join(w->th, NULL);
	assert_int_equal(w->run_rc, 0);
	ofcd_close(w->d);
	w->d = NULL;
}

static inline int setup(void **state)
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

static inline int teardown(void **state)
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

static inline Ofc__V1__Response *call(struct ofcd_client *c, Ofc__V1__Request *req, uint64_t id)
{
	Ofc__V1__Response *r = NULL;
	struct ofc_error err = {0};

	req->has_id = 1;
	req->id = id;
	if (ofcd_call(c, req, &r, &err) < 0)
		return NULL;
	return r;
}

static inline Ofc__V1__Response *get_state(struct ofcd_client *c, uint64_t id)
{
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;

	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	return call(c, &req, id);
}

/* The state once its schedule is computed (it lands after the commit's
 * answer, off its path: GetState says schedule_computing_since_unix_ms
 * meanwhile), within 60 s. */
static inline Ofc__V1__Response *get_state_settled(struct ofcd_client *c, uint64_t id)
{
	Ofc__V1__Response *r = get_state(c, id);

	for (int i = 0; i < 6000 && r && r->state && r->state->has_schedule_computing_since_unix_ms;
	     i++) {
		ofc__v1__response__free_unpacked(r, NULL);
		usleep(10000);
		r = get_state(c, id);
	}
	return r;
}

static inline void reconfigure_req(Ofc__V1__Request *req, Ofc__V1__Reconfigure *rq,
				   const char *spec)
{
	ofc__v1__request__init(req);
	ofc__v1__reconfigure__init(rq);
	rq->target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
	rq->topology = (char *)spec;
	req->body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req->reconfigure = rq;
}

static inline Ofc__V1__Response *reconfigure(struct ofcd_client *c, const char *spec, uint64_t id)
{
	Ofc__V1__Request req;
	Ofc__V1__Reconfigure rq;

	reconfigure_req(&req, &rq, spec);
	return call(c, &req, id);
}

static inline void connect_ok(struct world *w, struct ofcd_client *c)
{
	struct ofc_error err = {0};

	assert_int_equal(ofcd_connect(c, w->sock, &err), 0);
	c->timeout = 60;
}

static inline int raw_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.*s", (int)sizeof(sa.sun_path) - 1, path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static inline void send_all(int fd, const void *p, size_t n)
{
	/* The daemon may close first (oversized frames): ignore EPIPE. */
	(void)!send(fd, p, n, MSG_NOSIGNAL);
}

/* Read one answer frame (NULL when the daemon closed the connection). */
static inline Ofc__V1__Response *read_answer(int fd)
{
	struct ofcd_client c = {.fd = fd, .max_frame = 64u << 20, .timeout = 30};
	struct ofc_error err = {0};
	Ofc__V1__Response *r;

	snprintf(c.path, sizeof(c.path), "fuzz");
	return ofcd_recv(&c, &r, &err) < 0 ? NULL : r;
}

static inline void send_frame(int fd, const uint8_t *body, uint32_t n)
{
	uint8_t *buf = xmalloc((size_t)n + 4);

	frame_len_put(buf, n);
	if (n)
		memcpy(buf + 4, body, n);
	send_all(fd, buf, (size_t)n + 4);
	free(buf);
}

/* Lines of the log holding needle. */
static inline unsigned log_count(struct world *w, const char *needle)
{
	unsigned n = 0;

	pthread_mutex_lock(&w->log_mu);
	for (const char *p = w->log.buf; p && (p = strstr(p, needle)); p++)
		n++;
	pthread_mutex_unlock(&w->log_mu);
	return n;
}

#endif
