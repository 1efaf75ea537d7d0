/* The names ofc-gateway's page serves (controller/gateway/ui.c): one path
 * component of the page's own types, nothing that leaves the directory or
 * hides in it ("..", a leading dot, a slash, a backslash, a NUL-less
 * encoded form as libmicrohttpd leaves it decoded), and the directory
 * refused at the start without its index.html (or with a link for it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/gateway/internal.h"

static void test_types(void **state)
{
	(void)state;
	assert_string_equal(gw_ui_type("index.html"), "text/html; charset=utf-8");
	assert_string_equal(gw_ui_type("ui.js"), "text/javascript; charset=utf-8");
	assert_string_equal(gw_ui_type("ui.css"), "text/css; charset=utf-8");
	assert_string_equal(gw_ui_type("favicon.svg"), "image/svg+xml");
	assert_string_equal(gw_ui_type("shot-1_a.png"), "image/png");
	static const char *const refused[] = {
	    "",		 "..",		".",	     "../policy",     "..%2fpolicy",
	    "a/../b.js", "/etc/passwd", "sub/ui.js", "..\\policy.js", ".hidden.js",
	    "ui.js ",	 "ui.jsx",	"ui",	     "ui.js/",	      "a..b.js",
	    "ui.js%00",	 "ui.html.sh",	"UI.HTML",   "~root.js",      "ui.js;x",
	    ".html",	 "a:b.js",	"a\nb.js",   "policy",	      "key.pem",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (gw_ui_type(refused[i]))
			fail_msg("served: '%s'", refused[i]);
	char longname[80];
	memset(longname, 'a', sizeof(longname));
	strcpy(longname + sizeof(longname) - 4, ".js");
	assert_null(gw_ui_type(longname));
}

static void test_routes(void **state)
{
	(void)state;
	assert_true(gw_ui_route("/ui"));
	assert_true(gw_ui_route("/ui/"));
	assert_true(gw_ui_route("/ui/ui.js"));
	assert_false(gw_ui_route("/uix"));
	assert_false(gw_ui_route("/v1/state"));
	assert_false(gw_ui_route("/"));
}

static void test_open(void **state)
{
	char dir[] = "/tmp/ofc-gw-ui.XXXXXX", path[300];
	struct ofc_error err = {0};
	struct gw_ui *ui = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(gw_ui_open(dir, &ui, &err), -1);
	assert_non_null(strstr(err.msg, "no index.html in it"));
	snprintf(path, sizeof(path), "%s/index.html", dir);
	assert_int_equal(symlink("/etc/hostname", path), 0); /* a link is no index */
	assert_int_equal(gw_ui_open(dir, &ui, &err), -1);
	unlink(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("<!doctype html>\n", f);
	fclose(f);
	assert_int_equal(gw_ui_open(dir, &ui, &err), 0);
	gw_ui_close(ui);
	unlink(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(gw_ui_open(path, &ui, &err), -1);
	assert_non_null(strstr(err.msg, "No such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_types),
	    cmocka_unit_test(test_routes),
	    cmocka_unit_test(test_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
