/* cli targets: the addresses ofc is given (--socket/--server repeated, each
 * a comma list, OFC_SOCKET) and the walk's refusals before it connects;
 * the walk over live replicas is tests/integration/test_clients.sh's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
