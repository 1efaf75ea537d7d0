/* A bytes field through the network API's JSON (controller/export/
 * pbjson.c): what pb_write_json writes (base64) pb_read_json reads back to
 * the same bytes at every length's padding, URL-safe and unpadded base64
 * are taken too (protobuf's JSON mapping), and anything else is refused by
 * the field's name: a request such as the gateway's POST /v1/testbed/run
 * carries a schedule's bytes this way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/export/export.h"
#include "proto/control.pb-c.h"
#include "util/util.h"

static Ofc__V1__TestbedRun *read_run(const char *json, struct ofc_error *err)
{
	ProtobufCMessage *m = NULL;

	if (pb_read_json(&ofc__v1__testbed_run__descriptor, json, strlen(json), &m, err) < 0)
		return NULL;
	return (Ofc__V1__TestbedRun *)m;
}

static void test_written_bytes_read_back(void **state)
{
	(void)state;
	uint8_t data[8] = {0x00, 0xff, 0xfb, 0x10, 0x3e, 0x3f, 0x80, 0x7f};

	for (size_t n = 0; n <= sizeof(data); n++) {
		Ofc__V1__TestbedRun w = OFC__V1__TESTBED_RUN__INIT;
		struct json_writer j;
		struct ofc_error err = {0};
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		w.has_schedule = 1;
		w.schedule.data = data;
		w.schedule.len = n;
		w.topology = "ring:8";
		jw_init(&j, f, false);
		pb_write_json(&j, &w.base);
		jw_finish(&j);
		fclose(f);
		Ofc__V1__TestbedRun *r = read_run(buf, &err);
		assert_non_null(r);
		assert_true(r->has_schedule);
		assert_int_equal(r->schedule.len, n);
		assert_memory_equal(r->schedule.data, data, n);
		assert_string_equal(r->topology, "ring:8");
		protobuf_c_message_free_unpacked(&r->base, NULL);
		free(buf);
	}
}

static void test_url_safe_and_unpadded(void **state)
{
	(void)state;
	struct ofc_error err = {0};
	/* 0xfb 0xff 0xbf: "+/+/" standard, "-_-_" URL-safe; 0xfb alone "+w==" */
	static const char *const in[] = {"{\"schedule\":\"-_-_\"}", "{\"schedule\":\"+/+/\"}",
					 "{\"schedule\":\"+w\"}", "{\"schedule\":\"+w==\"}"};
	static const size_t want[] = {3, 3, 1, 1};

	for (size_t i = 0; i < 4; i++) {
		Ofc__V1__TestbedRun *r = read_run(in[i], &err);

		assert_non_null(r);
		assert_int_equal(r->schedule.len, want[i]);
		assert_int_equal(r->schedule.data[0], 0xfb);
		if (want[i] == 3)
			assert_int_equal(r->schedule.data[2], 0xbf);
		protobuf_c_message_free_unpacked(&r->base, NULL);
	}
}

static void test_not_base64_refused(void **state)
{
	(void)state;
	/* a lone character, a stray one, whitespace, padding short or past a
	 * group, text after padding, bits set past the last byte, a number */
	static const char *const in[] = {"{\"schedule\":\"Q\"}",     "{\"schedule\":\"QQ*=\"}",
					 "{\"schedule\":\"QQ Q=\"}", "{\"schedule\":\"QQ=\"}",
					 "{\"schedule\":\"QQ===\"}", "{\"schedule\":\"QQ==QQ==\"}",
					 "{\"schedule\":\"QR==\"}",  "{\"schedule\":7}"};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct ofc_error err = {0};

		assert_null(read_run(in[i], &err));
		assert_int_equal(err.code, OFC_E_INPUT);
		assert_non_null(strstr(err.msg, "schedule"));
		assert_non_null(strstr(err.msg, "base64"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_written_bytes_read_back),
	    cmocka_unit_test(test_url_safe_and_unpadded),
	    cmocka_unit_test(test_not_base64_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
