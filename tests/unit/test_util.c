/* util: units, the JSON writer, atomic files, errors, parallel_for, arena. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

static void test_sizes(void **state)
{
	const char *why;
	uint64_t v;
	(void)state;

	assert_int_equal(parse_size("64MiB", &v, &why), 0);
	assert_int_equal(v, 64ull << 20);
	assert_int_equal(parse_size("4MB", &v, &why), 0);
	assert_int_equal(v, 4000000);
	assert_int_equal(parse_size("128", &v, &why), 0);
	assert_int_equal(v, 128);
	assert_int_equal(parse_size("1.5KiB", &v, &why), 0);
	assert_int_equal(v, 1536);
	assert_int_equal(parse_size("2 GiB", &v, &why), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(parse_size("1.5B", &v, &why), -1);
	assert_string_equal(why, "not a whole number of bytes");
	assert_int_equal(parse_size("-1MiB", &v, &why), -1);
	assert_string_equal(why, "must not be negative");
	assert_int_equal(parse_size("64Mb", &v, &why), -1);
	assert_int_equal(parse_size("MiB", &v, &why), -1);
	assert_int_equal(parse_size("", &v, &why), -1);
	assert_int_equal(parse_size("1e3", &v, &why), -1);
	assert_int_equal(parse_size("99999999TiB", &v, &why), -1);
	assert_string_equal(why, "size too large");
}

static void test_rates_and_durations(void **state)
{
	const char *why;
	double v;
	(void)state;

	assert_int_equal(parse_rate("40Gbps", &v, &why), 0);
	assert_true(v == 40e9);
	assert_int_equal(parse_rate("100Gb/s", &v, &why), 0);
	assert_true(v == 100e9);
	assert_int_equal(parse_rate("12.5GB/s", &v, &why), 0);
	assert_true(v == 100e9);
	/* A bare prefix is bits per second, as port speeds are named. */
	assert_int_equal(parse_rate("100G", &v, &why), 0);
	assert_true(v == 100e9);
	assert_int_equal(parse_rate("400M", &v, &why), 0);
	assert_true(v == 400e6);
	assert_int_equal(parse_rate("40", &v, &why), -1); /* rates need a unit */
	assert_int_equal(parse_rate("40Gbs", &v, &why), -1);
	assert_int_equal(parse_rate("100g", &v, &why), -1);
	assert_string_equal(why, "expected a rate such as 40Gbps, 100Gb/s or 12.5GB/s");
	assert_int_equal(parse_duration("25us", &v, &why), 0);
	assert_true(v == 25e-6); /* exactly the double nearest 25e-6 */
	assert_int_equal(parse_duration("13.33us", &v, &why), 0);
	assert_true(v == 13.33e-6);
	assert_int_equal(parse_duration("10ms", &v, &why), 0);
	assert_true(v == 10e-3);
	assert_int_equal(parse_duration("1.5s", &v, &why), 0);
	assert_true(v == 1.5);
	assert_int_equal(parse_duration("2min", &v, &why), 0);
	assert_true(v == 120);
	assert_int_equal(parse_duration("0", &v, &why), 0); /* zero needs no unit */
	assert_true(v == 0);
	/* A bare number is seconds (`try --timeout 60`, `--time-limit 30`). */
	assert_int_equal(parse_duration("25", &v, &why), 0);
	assert_true(v == 25);
	assert_int_equal(parse_duration("0.5", &v, &why), 0);
	assert_true(v == 0.5);
	assert_int_equal(parse_duration("25x", &v, &why), -1);
	assert_string_equal(why, "expected a duration such as 30 (seconds), 25us, 10ms or 1.5s");
	assert_int_equal(parse_duration("-25us", &v, &why), -1);
	assert_int_equal(parse_duration("25 parsecs", &v, &why), -1);
	assert_int_equal(parse_duration("nan", &v, &why), -1);
}

static void test_integers(void **state)
{
	uint32_t v32;
	uint64_t v64;
	(void)state;

	assert_int_equal(parse_u32("4294967295", &v32), 0);
	assert_int_equal(v32, 4294967295u);
	assert_int_equal(parse_u32("4294967296", &v32), -1);
	assert_int_equal(parse_u64("18446744073709551615", &v64), 0);
	assert_int_equal(parse_u64("18446744073709551616", &v64), -1);
	assert_int_equal(parse_u32("12a", &v32), -1);
	assert_int_equal(parse_u32("-1", &v32), -1);
	assert_int_equal(parse_u32("", &v32), -1);
}

static void test_format(void **state)
{
	char b[64];
	(void)state;

	fmt_size(b, sizeof(b), 64ull << 20);
	assert_string_equal(b, "64 MiB");
	fmt_rate(b, sizeof(b), 40e9);
	assert_string_equal(b, "40 Gb/s");
	fmt_duration(b, sizeof(b), 25e-6);
	assert_string_equal(b, "25 us");
	fmt_duration(b, sizeof(b), 0);
	assert_string_equal(b, "0 s");
}

static char *json_of(void (*fill)(struct json_writer *), bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer w;

	jw_init(&w, f, pretty);
	fill(&w);
	fclose(f);
	return buf;
}

static void fill_doc(struct json_writer *w)
{
	jw_obj_begin(w);
	jw_key(w, "name");
	jw_str(w, "a\"b\\c\n\x01");
	jw_key(w, "n");
	jw_int(w, -3);
	jw_key(w, "x");
	jw_double(w, 0.1);
	jw_key(w, "third");
	jw_double(w, 1.0 / 3);
	jw_key(w, "inf");
	jw_double(w, 1.0 / 0.0);
	jw_key(w, "list");
	jw_arr_begin(w);
	jw_uint(w, 1);
	jw_uint(w, 2);
	jw_arr_end(w);
	jw_key(w, "pairs");
	jw_arr_begin(w);
	for (int i = 0; i < 2; i++) {
		jw_arr_begin(w);
		jw_int(w, i);
		jw_bool(w, i);
		jw_arr_end(w);
	}
	jw_arr_end(w);
	jw_key(w, "empty");
	jw_obj_begin(w);
	jw_obj_end(w);
	jw_key(w, "none");
	jw_null(w);
	jw_obj_end(w);
}

static void test_json(void **state)
{
	(void)state;
	char *compact = json_of(fill_doc, false);
	assert_string_equal(compact, "{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"n\":-3,\"x\":0.1,"
				     "\"third\":0.3333333333333333,\"inf\":null,\"list\":[1,2],"
				     "\"pairs\":[[0,false],[1,true]],\"empty\":{},\"none\":null}");
	free(compact);
	char *pretty = json_of(fill_doc, true);
	assert_string_equal(pretty, "{\n  \"name\": \"a\\\"b\\\\c\\n\\u0001\",\n  \"n\": -3,\n"
				    "  \"x\": 0.1,\n  \"third\": 0.3333333333333333,\n"
				    "  \"inf\": null,\n  \"list\": [1, 2],\n  \"pairs\": [\n"
				    "    [0, false],\n    [1, true]\n  ],\n  \"empty\": {},\n"
				    "  \"none\": null\n}");
	free(pretty);
}

/* The writer's own number formatting against what printf writes ("%lld",
 * "%llu", and "%.Ng" with the fewest N of 15..17 that reads back), at the
 * edges of its fast paths, and its indent at every depth. */
static const int64_t ints[] = {INT64_MIN, -1000000, -1, 0, 7, 10, 99, 4096, INT64_MAX};
static const uint64_t uints[] = {0, 1, 9, 10, 65535, 4294967296ull, UINT64_MAX};
static const double dbls[] = {0.0,
			      -0.0,
			      1,
			      -7,
			      0.5,
			      1e14,
			      999999999999999.0,
			      1e15,
			      -1e15,
			      9007199254740992.0,
			      1e16,
			      123456789012345.5,
			      -2.25,
			      1e300,
			      1e-300};

static void fill_numbers(struct json_writer *w)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < ARRAY_SIZE(ints); i++)
		jw_int(w, ints[i]);
	for (size_t i = 0; i < ARRAY_SIZE(uints); i++)
		jw_uint(w, uints[i]);
	for (size_t i = 0; i < ARRAY_SIZE(dbls); i++)
		jw_double(w, dbls[i]);
	jw_arr_end(w);
}

static void fill_deep(struct json_writer *w)
{
	for (int d = 0; d < JSON_MAX_DEPTH; d++) {
		jw_obj_begin(w);
		jw_key(w, "k");
	}
	jw_int(w, 1);
	for (int d = 0; d < JSON_MAX_DEPTH; d++)
		jw_obj_end(w);
}

static void test_json_numbers(void **state)
{
	struct strbuf want = STRBUF_INIT;
	char buf[40];
	(void)state;

	sb_putc(&want, '[');
	for (size_t i = 0; i < ARRAY_SIZE(ints); i++)
		sb_printf(&want, "%s%lld", i ? "," : "", (long long)ints[i]);
	for (size_t i = 0; i < ARRAY_SIZE(uints); i++)
		sb_printf(&want, ",%llu", (unsigned long long)uints[i]);
	for (size_t i = 0; i < ARRAY_SIZE(dbls); i++) {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, dbls[i]);
			if (strtod(buf, NULL) == dbls[i])
				break;
		}
		sb_printf(&want, ",%s", buf);
	}
	sb_putc(&want, ']');
	char *got = json_of(fill_numbers, false);
	assert_string_equal(got, want.buf);
	assert_non_null(strstr(got, ",-0,"));
	free(got);

	sb_free(&want);
	for (int d = 0; d < JSON_MAX_DEPTH; d++) {
		sb_putc(&want, '{');
		sb_putc(&want, '\n');
		for (int i = 0; i <= d; i++)
			sb_puts(&want, "  ");
		sb_puts(&want, "\"k\": ");
	}
	sb_putc(&want, '1');
	for (int d = JSON_MAX_DEPTH; d-- > 0;) {
		sb_putc(&want, '\n');
		for (int i = 0; i < d; i++)
			sb_puts(&want, "  ");
		sb_putc(&want, '}');
	}
	got = json_of(fill_deep, true);
	assert_string_equal(got, want.buf);
	free(got);
	sb_free(&want);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void test_atomic_files(void **state)
{
	char dir[] = "/tmp/ofc-test-XXXXXX";
	struct ofc_error err = {0};
	struct atomic_file af;
	char path[256], *data;
	size_t len;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out", dir);
	assert_int_equal(atomic_write(path, "old", 3, &err), 0);

	/* While a write is open the old content stays in place. */
	assert_int_equal(atomic_open(&af, path, &err), 0);
	fputs("new content", af.f);
	assert_int_equal(read_file(path, 100, &data, &len, &err), 0);
	assert_string_equal(data, "old");
	free(data);
	assert_int_equal(count_entries(dir), 2); /* out and its temporary */
	assert_int_equal(atomic_commit(&af, &err), 0);
	assert_int_equal(read_file(path, 100, &data, &len, &err), 0);
	assert_string_equal(data, "new content");
	free(data);
	assert_int_equal(count_entries(dir), 1);

	/* Aborting leaves the old file and no temporary. */
	assert_int_equal(atomic_open(&af, path, &err), 0);
	fputs("discarded", af.f);
	atomic_abort(&af);
	assert_int_equal(read_file(path, 100, &data, &len, &err), 0);
	assert_string_equal(data, "new content");
	free(data);
	assert_int_equal(count_entries(dir), 1);

	/* A directory that does not exist is a runtime error. */
	snprintf(path, sizeof(path), "%s/missing/out", dir);
	assert_int_equal(atomic_write(path, "x", 1, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);

	/* read_file enforces its limit. */
	snprintf(path, sizeof(path), "%s/out", dir);
	assert_int_equal(read_file(path, 4, &data, &len, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	unlink(path);
	rmdir(dir);
}

/* Only regular files are read, and nothing else blocks the reader: a FIFO
 * with no writer used to hang read_file (and with it a daemon's worker) for
 * ever; the alarm turns such a hang into a failure. */
static void test_read_file_kinds(void **state)
{
	char dir[] = "/tmp/ofc-test-XXXXXX";
	struct ofc_error err = {0};
	char path[256], link[256], *data;
	size_t len;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(20);
	assert_int_equal(read_file(path, 100, &data, &len, &err), -1);
	assert_int_equal(err.code, OFC_E_INPUT);
	assert_string_equal(err.file, path);
	assert_string_equal(err.msg, "is not a regular file");
	unlink(path);

	assert_int_equal(read_file("/dev/zero", 100, &data, &len, &err), -1);
	assert_string_equal(err.msg, "is not a regular file");
	assert_int_equal(read_file(dir, 100, &data, &len, &err), -1);
	assert_string_equal(err.msg, "is a directory");
	alarm(0);

	/* O_NOFOLLOW refuses a symbolic link and says so. */
	snprintf(path, sizeof(path), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(atomic_write(path, "abc", 3, &err), 0);
	assert_int_equal(symlink(path, link), 0);
	fd = file_open_regular(AT_FDCWD, link, O_NOFOLLOW, &err);
	assert_int_equal(fd, -1);
	assert_string_equal(err.msg, "is a symbolic link (not followed here)");
	fd = file_open_regular(AT_FDCWD, link, 0, &err);
	assert_true(fd >= 0);
	assert_int_equal(read_fd(fd, link, 100, &data, &len, &err), 0);
	assert_int_equal(len, 3);
	assert_string_equal(data, "abc");
	free(data);
	close(fd);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void test_errors(void **state)
{
	struct ofc_error err = {0};
	char buf[256];
	(void)state;

	ofc_error_at(&err, OFC_E_INPUT, "f.yaml", 3, 7, "bad %s", "thing");
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)), "f.yaml:3:7: bad thing");
	assert_int_equal(ofc_error_exit_code(&err), 2);
	ofc_error_prefix(&err, "ring %d", 2);
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)), "f.yaml:3:7: ring 2: bad thing");
	ofc_error_set(&err, OFC_E_RUNTIME, "device gone");
	assert_string_equal(ofc_error_str(&err, buf, sizeof(buf)), "device gone");
	assert_int_equal(ofc_error_exit_code(&err), 1);
	assert_int_equal(edit_distance("wavelenghts", "wavelengths"), 2);
	assert_int_equal(edit_distance("torus", "torus"), 0);
	assert_int_equal(edit_distance("", "abc"), 3);
}

struct sum_ctx {
	atomic_ullong sum;
	atomic_uint seen[4];
};

static void add_one(void *arg, size_t i, unsigned worker)
{
	struct sum_ctx *c = arg;

	atomic_fetch_add(&c->sum, i);
	atomic_fetch_add(&c->seen[worker], 1);
}

static void test_parallel_for(void **state)
{
	struct sum_ctx c;
	(void)state;

	for (unsigned threads = 1; threads <= 4; threads++) {
		memset(&c, 0, sizeof(c));
		parallel_for(100000, 7, threads, add_one, &c);
		assert_int_equal(atomic_load(&c.sum), 100000ull * 99999 / 2);
		unsigned total = 0;
		for (unsigned w = 0; w < 4; w++) {
			if (w >= threads)
				assert_int_equal(atomic_load(&c.seen[w]), 0);
			total += atomic_load(&c.seen[w]);
		}
		assert_int_equal(total, 100000);
	}
}

/* threads 0 is what the process may run on, not the machine's CPUs: a
 * daemon pinned to one core runs one worker there, not one per CPU of the
 * machine (each with its scratch). */
static void test_cpu_count_follows_affinity(void **state)
{
	cpu_set_t was, one;
	struct sum_ctx c;
	int first = -1;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	assert_int_equal(ofc_cpu_count(), CPU_COUNT(&was));
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &was))
			first = i;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(ofc_cpu_count(), 1);
	memset(&c, 0, sizeof(c));
	parallel_for(100000, 7, 0, add_one, &c);
	assert_int_equal(atomic_load(&c.seen[0]), 100000);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	assert_int_equal(ofc_cpu_count(), CPU_COUNT(&was));
}

/* One deadline per request: none without a clock or a deadline; past it
 * the phase is named; progress reaches the caller's callback. */
static void note_progress(void *ctx, const char *phase, double done, double elapsed)
{
	char *last = ctx;

	snprintf(last, 64, "%s %.2f %d", phase, done, elapsed >= 0);
}

static void test_clock(void **state)
{
	(void)state;
	struct ofc_error err = {0};
	char last[64] = "";
	struct ofc_clock none = {.start = now_seconds()};
	struct ofc_clock past = {.start = now_seconds() - 1,
				 .deadline = now_seconds() - 0.5,
				 .limit = 0.5,
				 .progress = note_progress,
				 .ctx = last};
	struct ofc_clock later = {.start = now_seconds(), .deadline = now_seconds() + 3600};

	assert_int_equal(clock_check(NULL, "generation", &err), 0);
	assert_int_equal(clock_check(&none, "generation", &err), 0);
	assert_int_equal(clock_check(&later, "generation", &err), 0);
	assert_false(clock_expired(&later));
	assert_true(clock_expired(&past));
	assert_int_equal(clock_check(&past, "verification", &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_string_equal(err.msg, "time limit 500 ms reached in verification");
	clock_progress(NULL, "x", 0);
	clock_progress(&past, "swing: generation", 0.25);
	assert_string_equal(last, "swing: generation 0.25 1");
}

/* The /proc/self/smaps mapping holding p: its range, and whether it is
 * advised for huge pages (VmFlags "hg"). False when none holds p. */
static bool mapping_of(const void *p, uintptr_t *lo, uintptr_t *hi, bool *huge)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) { /* a mapping's first line */
			in = (uintptr_t)p >= a && (uintptr_t)p < b;
			if (in) {
				*lo = a;
				*hi = b;
				found = true;
			}
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			*huge = strstr(line, " hg") != NULL;
		}
	}
	fclose(f);
	return found;
}

/* Large blocks are advised for transparent huge pages as one mapping:
 * advising only their aligned inside split malloc's mapping, and realloc
 * then copied it instead of moving it (a 134 s BFB run, from 6 s). */
static void test_large_blocks(void **state)
{
	size_t n = (size_t)32 << 20;
	uintptr_t lo = 0, hi = 0;
	bool huge = false, thp = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
	unsigned char *p = xmalloc(n);
	(void)state;

	p[0] = 1;
	p[n - 1] = 2;
	assert_true(mapping_of(p, &lo, &hi, &huge));
	assert_true(lo <= (uintptr_t)p && hi >= (uintptr_t)p + n);
	if (thp)
		assert_true(huge);

	p = xrealloc(p, 2 * n);
	assert_int_equal(p[0], 1);
	assert_int_equal(p[n - 1], 2);
	huge = false;
	assert_true(mapping_of(p, &lo, &hi, &huge));
	assert_true(lo <= (uintptr_t)p && hi >= (uintptr_t)p + 2 * n);
	if (thp)
		assert_true(huge);
	free(p);

	uint32_t *z = xcalloc(n / 4, 4);
	huge = false;
	assert_true(mapping_of(z, &lo, &hi, &huge));
	assert_true(lo <= (uintptr_t)z && hi >= (uintptr_t)z + n);
	assert_int_equal(z[n / 8], 0);
	if (thp)
		assert_true(huge);
	free(z);
}

static void test_arena_and_strbuf(void **state)
{
	struct arena a = {0};
	struct strbuf sb = STRBUF_INIT;
	(void)state;

	char *s = arena_printf(&a, "%s-%d", "x", 42);
	assert_string_equal(s, "x-42");
	uint64_t *big = arena_array(&a, 100000, sizeof(uint64_t));
	for (int i = 0; i < 100000; i++)
		assert_int_equal(big[i], 0); /* zeroed */
	arena_free(&a);

	for (int i = 0; i < 1000; i++)
		sb_printf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	char *p = sb_detach(&sb);
	assert_null(sb.buf);
	free(p);
}

/* str_printable: what a terminal would act on, escaped; cut with "...". */
static void test_printable(void **state)
{
	char buf[32];
	(void)state;

	assert_string_equal(str_printable(buf, sizeof(buf), "a-b", 3, 40), "a-b");
	assert_string_equal(str_printable(buf, sizeof(buf), "\x1b[2J\\\0x", 7, 40),
			    "\\x1b[2J\\\\\\x00x");
	assert_string_equal(str_printable(buf, sizeof(buf), "abcdefgh", 8, 4), "abcd...");
	/* The room runs out before max: cut at a whole escape, never past n. */
	memset(buf, 'z', sizeof(buf));
	str_printable(buf, 12, "\x01\x02\x03\x04", 4, 40);
	assert_string_equal(buf, "\\x01\\x02...");
	assert_int_equal(buf[31], 'z');
}

/* Base64 as RFC 4648's vectors say, every length back to its bytes, and
 * what the strict (etcd's) and lenient (protobuf's JSON) readers refuse. */
static void test_base64(void **state)
{
	static const char *const vec[][2] = {{"", ""},
					     {"f", "Zg=="},
					     {"fo", "Zm8="},
					     {"foo", "Zm9v"},
					     {"foob", "Zm9vYg=="},
					     {"fooba", "Zm9vYmE="},
					     {"foobar", "Zm9vYmFy"}};
	uint8_t all[256], *d;
	size_t n;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(vec); i++) {
		char *e = b64_encode(vec[i][0], strlen(vec[i][0]));

		assert_string_equal(e, vec[i][1]);
		free(e);
		assert_int_equal(b64_decode(vec[i][1], strlen(vec[i][1]), 0, &d, &n), 0);
		assert_int_equal(n, strlen(vec[i][0]));
		assert_memory_equal(d, vec[i][0], n);
		assert_int_equal(d[n], 0);
		free(d);
	}
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)(255 - i);
	for (size_t len = 0; len <= 256; len += 37) {
		char *e = b64_encode(all, len);

		assert_int_equal(b64_decode(e, strlen(e), 0, &d, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(d, all, len);
		free(d);
		free(e);
	}
	/* the lenient reader: URL-safe and unpadded too */
	assert_int_equal(b64_decode("-_8", 3, B64_URL_SAFE | B64_UNPADDED, &d, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(d[0], 0xfb);
	assert_int_equal(d[1], 0xff);
	free(d);
	/* refused: what no encoder writes, and what the strict one does not take */
	static const struct {
		const char *s;
		unsigned flags;
	} bad[] = {{"-_8=", 0},	 {"Zg", 0},   {"Zm9v\n", B64_UNPADDED}, {"Zh==", 0},
		   {"Z===", 0},	 {"Zg=a", 0}, {"Zm9vY", B64_UNPADDED},	{"Zg===", 0},
		   {"Zm 9v", 0}, {"Zg=", 0},  {"=Zg=", B64_UNPADDED}};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (b64_decode(bad[i].s, strlen(bad[i].s), bad[i].flags, &d, &n) == 0)
			fail_msg("\"%s\" (flags %u) read as %zu bytes", bad[i].s, bad[i].flags, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_rates_and_durations),
	    cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_json_numbers),
	    cmocka_unit_test(test_atomic_files),
	    cmocka_unit_test(test_read_file_kinds),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_parallel_for),
	    cmocka_unit_test(test_cpu_count_follows_affinity),
	    cmocka_unit_test(test_arena_and_strbuf),
	    cmocka_unit_test(test_large_blocks),
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_printable),
	    cmocka_unit_test(test_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
