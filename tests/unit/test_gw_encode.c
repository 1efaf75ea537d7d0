/* ofc-gateway's stream gzip (controller/gateway/encode.c, the Watch's):
 * every line put is readable by the client as soon as it is sent (each
 * put ends on a flush: inflating what came so far gives every line so
 * far, whole), the trailer closes a valid gzip member whose content is the
 * lines in order, nothing is put after the end, and a stream of many lines
 * is smaller than its lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "controller/gateway/internal.h"

/* What inflating all of got gives, into out (at most cap bytes); *end:
 * whether the gzip member ended. */
static size_t inflate_all(const char *got, size_t n, char *out, size_t cap, bool *end)
{
	z_stream z;

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = (Bytef *)got;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	int rc = inflate(&z, Z_SYNC_FLUSH);
	assert_true(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR);
	*end = rc == Z_STREAM_END;
	size_t len = z.total_out;
	inflateEnd(&z);
	return len;
}

static void test_lines_readable_as_sent(void **state)
{
	(void)state;
	struct gw_zstream *zs = gw_zstream_new();
	char *got = NULL, *want = NULL, *out = malloc(1 << 20);
	size_t n = 0, wn = 0;
	bool end;

	assert_non_null(zs);
	for (int i = 0; i < 200; i++) {
		char line[200];
		int k = snprintf(
		    line, sizeof(line),
		    "{\"event\":{\"seq\":\"%d\",\"kind\":\"KIND_TRANSACTION_COMMITTED\"}}\n", i);
		size_t zn;
		char *z = gw_zstream_put(zs, i % 7 == 6 ? "\n" : line, i % 7 == 6 ? 1 : (size_t)k,
					 false, &zn);

		assert_non_null(z);
		got = realloc(got, n + zn);
		memcpy(got + n, z, zn);
		n += zn;
		free(z);
		want = realloc(want, wn + (size_t)k);
		memcpy(want + wn, i % 7 == 6 ? "\n" : line, i % 7 == 6 ? 1 : (size_t)k);
		wn += i % 7 == 6 ? 1 : (size_t)k;
		/* all of it so far, now */
		assert_int_equal(inflate_all(got, n, out, 1 << 20, &end), wn);
		assert_memory_equal(out, want, wn);
		assert_false(end);
	}
	assert_true(n < wn / 2);
	size_t zn;
	char *z = gw_zstream_put(zs, "", 0, true, &zn);
	assert_non_null(z);
	got = realloc(got, n + zn);
	memcpy(got + n, z, zn);
	n += zn;
	free(z);
	assert_int_equal(inflate_all(got, n, out, 1 << 20, &end), wn);
	assert_true(end);
	assert_memory_equal(out, want, wn);
	/* nothing after the end */
	assert_null(gw_zstream_put(zs, "x\n", 2, false, &zn));
	gw_zstream_free(zs);
	free(got);
	free(want);
	free(out);
}

/* A line larger than the first guess of the output's size (incompressible
 * bytes) comes out whole. */
static void test_large_line(void **state)
{
	(void)state;
	struct gw_zstream *zs = gw_zstream_new();
	size_t len = 300000, zn;
	char *in = malloc(len), *out = malloc(len + 16);
	uint32_t x = 12345;
	bool end;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		in[i] = (char)(x >> 24);
	}
	char *z = gw_zstream_put(zs, in, len, true, &zn);
	assert_non_null(z);
	assert_int_equal(inflate_all(z, zn, out, len + 16, &end), len);
	assert_true(end);
	assert_memory_equal(out, in, len);
	free(z);
	free(in);
	free(out);
	gw_zstream_free(zs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines_readable_as_sent),
	    cmocka_unit_test(test_large_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
