/* cli targets: the addresses ofc is given (--socket/--server repeated, each
 * a comma list, OFC_SOCKET), the walk's refusals before it connects, and a
 * mutation's answer lost with its leader, asked again of the next one
 * (fake replicas: forked processes on Unix sockets); the walk over live
 * replicas is tests/integration/test_clients.sh's and test_failover_client.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/api/api.h"
#include "controller/cli/internal.h"
#include "proto/control.pb-c.h"

static struct cli_targets *fresh(void)
{
	return xcalloc(1, sizeof(struct cli_targets));
}

static void test_lists_and_repeats(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(cli_targets_add(t, "--socket", "/a.sock,/b.sock", &err), 0);
	assert_int_equal(cli_targets_add(t, "--socket", "/c.sock", &err), 0);
	assert_int_equal(t->n, 3);
	assert_string_equal(t->addr[0], "/a.sock");
	assert_string_equal(t->addr[1], "/b.sock");
	assert_string_equal(t->addr[2], "/c.sock");
	assert_string_equal(t->opt, "--socket");
	free(t);
}

/* "A, B/" as people type lists: spaces and a URL's last '/' go. */
static void test_trimmed(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(cli_targets_add(t, "OFC_SERVER", " https://a:1, https://b:2/ ", &err), 0);
	assert_int_equal(t->n, 2);
	assert_string_equal(t->addr[0], "https://a:1");
	assert_string_equal(t->addr[1], "https://b:2");
	assert_int_equal(cli_targets_add(t, "OFC_SERVER", "https://c:3, ", &err), -1);
	free(t);
}

static void test_empty_entries_refused(void **state)
{
	static const char *const bad[] = {"", ",/a", "/a,,/b", "/a,"};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cli_targets *t = fresh();
		struct ofc_error err = {0};

		assert_int_equal(cli_targets_add(t, "--server", bad[i], &err), -1);
		assert_int_equal(err.code, OFC_E_USAGE);
		/* the option given is named */
		assert_non_null(strstr(err.msg, "--server"));
		free(t);
	}
}

static void test_too_many(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};
	char list[CLI_TARGETS_MAX * 8 + 16] = "";

	(void)state;
	for (int i = 0; i <= CLI_TARGETS_MAX; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s/s%d", i ? "," : "",
			 i);
	assert_int_equal(cli_targets_add(t, "OFC_SOCKET", list, &err), -1);
	assert_non_null(strstr(err.msg, "OFC_SOCKET: more than"));
	free(t);
}

/* --server: https:// URLs and a client certificate, said before connecting. */
static void test_server_checks(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};

	(void)state;
	t->https = true;
	assert_int_equal(cli_targets_add(t, "--server", "https://a:1,http://b:2", &err), 0);
	assert_int_equal(cli_targets_check(t, &err), -1);
	assert_non_null(strstr(err.msg, "--server 'http://b:2': expected https://HOST:PORT"));
	t->n = 1;
	memset(&err, 0, sizeof(err));
	assert_int_equal(cli_targets_check(t, &err), -1);
	assert_non_null(strstr(err.msg, "--server needs --cert FILE and --key FILE"));
	t->srv.cert = "c.pem";
	t->srv.key = "c.key";
	assert_int_equal(cli_targets_check(t, &err), 0);
	free(t);
}

/* Nothing listens at either address: the error names both, and the
 * option. */
static void test_walk_names_every_address(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
	Ofc__V1__Response *resp = NULL;

	(void)state;
	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	assert_int_equal(
	    cli_targets_add(t, "--socket", "/nonexistent/a.sock,/nonexistent/b.sock", &err), 0);
	assert_int_equal(cli_call(t, &req, 20, CLI_CALL_READ, &resp, &err), -1);
	assert_null(resp);
	assert_non_null(strstr(err.msg, "(--socket): /nonexistent/a.sock: cannot connect"));
	assert_non_null(strstr(err.msg, "; /nonexistent/b.sock: cannot connect"));
	free(t);
}

/* A mutation gets a request_key for its whole walk: OFC_REQUEST_KEY, else
 * a fresh random one each time; a read or a key the caller set, none. */
static void test_request_key(void **state)
{
	struct cli_targets *t = fresh();
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT, read = OFC__V1__REQUEST__INIT;
	char first[sizeof(t->key)];

	(void)state;
	unsetenv("OFC_REQUEST_KEY");
	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	cli_request_key(t, &req);
	assert_non_null(req.request_key);
	assert_int_equal(strlen(req.request_key), 4 + 32);
	assert_memory_equal(req.request_key, "ofc-", 4);
	assert_int_equal(strspn(req.request_key + 4, "0123456789abcdef"), 32);
	snprintf(first, sizeof(first), "%s", req.request_key);
	/* kept: the walk's resends carry the same one */
	cli_request_key(t, &req);
	assert_string_equal(req.request_key, first);
	/* the next request gets another */
	req.request_key = NULL;
	cli_request_key(t, &req);
	assert_string_not_equal(req.request_key, first);
	/* by hand */
	setenv("OFC_REQUEST_KEY", "job-42.prolog", 1);
	req.request_key = NULL;
	cli_request_key(t, &req);
	assert_string_equal(req.request_key, "job-42.prolog");
	unsetenv("OFC_REQUEST_KEY");
	read.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	cli_request_key(t, &read);
	assert_null(read.request_key);
	free(t);
}

/* Which kinds get a key is the request table's (API_KEYED): every queued
 * mutation; not a Cancel (a ticket is one replica's: never resent), not an
 * Adopt's preview (it changes nothing), not a read. */
static void test_request_key_by_row(void **state)
{
	struct cli_targets *t = fresh();
	Ofc__V1__Adopt ad = OFC__V1__ADOPT__INIT;
	size_t keyed = 0;

	(void)state;
	unsetenv("OFC_REQUEST_KEY");
	for (size_t i = 0; i < API_NKINDS; i++) {
		Ofc__V1__Request req = OFC__V1__REQUEST__INIT;

		req.body_case = api_requests[i].body;
		req.adopt = &ad; /* (the only body the key reads) */
		ad.commit = true;
		cli_request_key(t, &req);
		assert_int_equal(req.request_key != NULL, !!(api_requests[i].flags & API_KEYED));
		keyed += req.request_key != NULL;
		if (i == API_CANCEL || (api_requests[i].flags & API_READ))
			assert_null(req.request_key);
		if (i == API_ADOPT) {
			req.request_key = NULL;
			ad.commit = false;
			cli_request_key(t, &req);
			assert_null(req.request_key);
		}
	}
	assert_int_equal(keyed, 7); /* apply, reconfigure, fail, release, phase, adopt, drain */
	free(t);
}

/* ---- fake replicas ---------------------------------------------------------------------- */

static int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 8) != 0)
		_exit(3);
	return fd;
}

static Ofc__V1__Request *read_request(int fd)
{
	struct ofc_error err = {0};
	uint8_t *body = NULL;
	size_t cap = 0, len = 0;
	Ofc__V1__Request *r = NULL;

	if (frame_recv(fd, &body, &cap, &len, 1u << 20, now_seconds() + 5, &err) == 0)
		r = ofc__v1__request__unpack(NULL, len, body);
	free(body);
	return r;
}

static void answer(int fd, const Ofc__V1__Request *req, Ofc__V1__Status st, const char *msg)
{
	Ofc__V1__Response r = OFC__V1__RESPONSE__INIT;
	struct ofc_error err = {0};
	size_t len;
	uint8_t *buf;

	r.has_id = r.has_status = 1;
	r.id = req->id;
	r.status = st;
	r.message = (char *)msg;
	len = ofc__v1__response__get_packed_size(&r);
	buf = xmalloc(len + 4);
	frame_len_put(buf, (uint32_t)len);
	ofc__v1__response__pack(&r, buf + 4);
	fd_write_all(fd, buf, len + 4, now_seconds() + 5, &err);
	free(buf);
}

/* The leader killed under the mutation: it reads the request, holds it
 * `hold` seconds, and goes (its socket gone with it). */
static pid_t dying_leader(const char *path, double hold)
{
	int lfd = listen_at(path);
	pid_t pid = fork();

	if (pid == 0) {
		Ofc__V1__Request *r;
		int c;

		alarm(10); /* (gone even when the test fails first) */
		c = accept(lfd, NULL, NULL);
		r = c >= 0 ? read_request(c) : NULL;
		if (r)
			ofc__v1__request__free_unpacked(r, NULL);
		usleep((useconds_t)(hold * 1e6));
		unlink(path);
		_exit(0);
	}
	close(lfd);
	return pid;
}

/* The next leader: "not the leader" (naming none: an election) until
 * `from` seconds after t0, then OK with the request_key it was sent. */
static pid_t next_leader(const char *path, double t0, double from)
{
	int lfd = listen_at(path);
	pid_t pid = fork();

	if (pid == 0) {
		alarm(10); /* (gone even when the test fails first) */
		for (;;) {
			int c = accept(lfd, NULL, NULL);
			Ofc__V1__Request *r = c >= 0 ? read_request(c) : NULL;
			char msg[300];

			if (!r)
				_exit(4);
			if (now_seconds() < t0 + from) {
				answer(c, r, OFC__V1__STATUS__STATUS_NOT_LEADER, "electing");
			} else {
				snprintf(msg, sizeof(msg), "committed for %s",
					 r->request_key ? r->request_key : "no key");
				answer(c, r, OFC__V1__STATUS__STATUS_OK, msg);
			}
			close(c);
			ofc__v1__request__free_unpacked(r, NULL);
		}
	}
	close(lfd);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A mutation with no deadline, its leader gone after longer than the
 * walk's budget: the walk after the loss gets its own budget, and the next
 * leader is sent the same request_key; its answer is the call's. */
static void test_lost_answer_asked_of_next_leader(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Reconfigure rc = OFC__V1__RECONFIGURE__INIT;
	Ofc__V1__Response *resp = NULL;
	char dir[] = "/tmp/ofc-targets.XXXXXX", a[64], b[64], list[140], want[200];
	double t0 = now_seconds();
	pid_t pa, pb;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.sock", dir);
	snprintf(b, sizeof(b), "%s/b.sock", dir);
	snprintf(list, sizeof(list), "%s,%s", a, b);
	unsetenv("OFC_REQUEST_KEY");
	pa = dying_leader(a, 1.5);
	pb = next_leader(b, t0, 2.0);
	assert_int_equal(cli_targets_add(t, "--socket", list, &err), 0);
	t->walk = 1.0; /* (CLI_WALK_DEFAULT's 30 s, shortened) */
	rc.topology = "torus:8x8";
	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req.reconfigure = &rc;
	if (cli_call(t, &req, 0, CLI_CALL_ONCE, &resp, &err) < 0)
		fail_msg("the walk after the lost answer: %s", err.msg);
	assert_int_equal(resp->status, OFC__V1__STATUS__STATUS_OK);
	snprintf(want, sizeof(want), "committed for %s", t->key);
	assert_string_equal(resp->message, want);
	assert_string_equal(t->answered, b);
	assert_string_equal(t->lost, a);
	ofc__v1__response__free_unpacked(resp, NULL);
	reap(pa);
	reap(pb);
	unlink(a);
	unlink(b);
	rmdir(dir);
	free(t);
}

/* Lost with no replica to ask since: the error names the key to send it
 * again with, and says to give every replica. */
static void test_lost_answer_names_key(void **state)
{
	struct cli_targets *t = fresh();
	struct ofc_error err = {0};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__Reconfigure rc = OFC__V1__RECONFIGURE__INIT;
	Ofc__V1__Response *resp = NULL;
	char dir[] = "/tmp/ofc-targets.XXXXXX", a[64], want[200];
	pid_t pa;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.sock", dir);
	unsetenv("OFC_REQUEST_KEY");
	pa = dying_leader(a, 0.1);
	assert_int_equal(cli_targets_add(t, "--socket", a, &err), 0);
	rc.topology = "torus:8x8";
	req.body_case = OFC__V1__REQUEST__BODY_RECONFIGURE;
	req.reconfigure = &rc;
	assert_int_equal(cli_call(t, &req, 0, CLI_CALL_ONCE, &resp, &err), -1);
	assert_null(resp);
	snprintf(want, sizeof(want), "OFC_REQUEST_KEY=%s sends it again", t->key);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "give every replica, --socket A,B,C"));
	assert_non_null(strstr(err.msg, "ofcd closed the connection"));
	reap(pa);
	unlink(a);
	rmdir(dir);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lists_and_repeats),
	    cmocka_unit_test(test_trimmed),
	    cmocka_unit_test(test_empty_entries_refused),
	    cmocka_unit_test(test_too_many),
	    cmocka_unit_test(test_server_checks),
	    cmocka_unit_test(test_walk_names_every_address),
	    cmocka_unit_test(test_request_key),
	    cmocka_unit_test(test_request_key_by_row),
	    cmocka_unit_test(test_lost_answer_asked_of_next_leader),
	    cmocka_unit_test(test_lost_answer_names_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
