/* drivers/: state diffs (order, untouched entries, routes through moved
 * circuits), the TL1 command parser, credentials files, the sim driver. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "drivers/drivers.h"
#include "drivers/internal.h"

/* Apply a batch to a sim device; returns the driver's result. */
static int sim_run(struct sim_device *sim, const struct op_batch *b, uint32_t *done,
		   struct ofc_error *err)
{
	struct device dev;
	struct device_cfg cfg = {.name = "s", .driver = "sim", .cls = sim->state.cls, .sim = sim};
	int rc;

	assert_int_equal(device_init(&dev, &cfg, err), 0);
	rc = device_apply(&dev, b, done, err);
	device_close(&dev);
	return rc;
}

/* The core checks a switch's cross-connects against its ports for every
 * driver, before anything is sent: the sim driver, which checks none
 * itself, gets no command for a batch with a port outside 1..N. */
static void test_ports_checked_by_core(void **state)
{
	static const struct {
		struct op op;
		bool ok;
	} c[] = {{{.kind = OP_CONNECT, .xc = {1, 8}}, true},
		 {{.kind = OP_CONNECT, .xc = {9, 1}}, false},
		 {{.kind = OP_CONNECT, .xc = {1, 9}}, false},
		 {{.kind = OP_CONNECT, .xc = {0, 1}}, false},
		 {{.kind = OP_CONNECT, .xc = {1, 4294967042u}}, false},
		 {{.kind = OP_DISCONNECT, .xc = {9, 0}}, false}};
	(void)state;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct sim_device sim;
		struct device dev;
		struct device_cfg cfg = {
		    .name = "s", .driver = "sim", .cls = DEV_SWITCH, .ports = 8};
		struct op_batch b = {0};
		struct ofc_error err = {0};
		uint32_t done = 7;

		sim_device_init(&sim, DEV_SWITCH, 0); /* the emulator takes any port */
		cfg.sim = &sim;
		batch_add(&b, c[i].op);
		assert_int_equal(device_init(&dev, &cfg, &err), 0);
		assert_int_equal(device_apply(&dev, &b, &done, &err), c[i].ok ? 0 : -1);
		if (!c[i].ok) {
			assert_non_null(strstr(err.msg, "not sent: cross-connect"));
			assert_non_null(strstr(err.msg, "outside ports 1..8"));
			assert_int_equal(done, 0);
			assert_int_equal(sim.commands, 0);
			assert_int_equal(device_apply_batch(&dev, &b, &err), -1);
			assert_int_equal(sim.commands, 0);
		}
		device_close(&dev);
		batch_free(&b);
		sim_device_free(&sim);
	}
}

static void test_switch_diff(void **state)
{
	struct device_state cur, want;
	struct op_batch b = {0};
	struct sim_device sim;
	struct ofc_error err = {0};
	uint32_t done;
	(void)state;

	state_init(&cur, DEV_SWITCH);
	state_init(&want, DEV_SWITCH);
	/* 1->2 stays, 3->4 moves to 3->5, 5->6 goes, 7->4 arrives (egress 4 is
	 * only free once 3->4 is gone). */
	state_add_xconn(&cur, 1, 2);
	state_add_xconn(&cur, 3, 4);
	state_add_xconn(&cur, 5, 6);
	state_add_xconn(&want, 1, 2);
	state_add_xconn(&want, 3, 5);
	state_add_xconn(&want, 7, 4);
	state_sort(&cur);
	state_sort(&want);
	state_diff(&cur, &want, &b);
	assert_int_equal(b.n, 4);
	assert_int_equal(b.ops[0].kind, OP_DISCONNECT);
	assert_int_equal(b.ops[0].xc.in, 3);
	assert_int_equal(b.ops[1].kind, OP_DISCONNECT);
	assert_int_equal(b.ops[1].xc.in, 5);
	assert_int_equal(b.ops[2].kind, OP_CONNECT);
	assert_int_equal(b.ops[3].kind, OP_CONNECT);
	for (uint32_t i = 0; i < b.n; i++)
		assert_int_not_equal(b.ops[i].xc.in, 1); /* never touched */

	/* A switch that refuses a busy egress accepts the batch in this order. */
	sim_device_init(&sim, DEV_SWITCH, 8);
	state_copy(&sim.state, &cur);
	assert_int_equal(sim_run(&sim, &b, &done, &err), 0);
	assert_int_equal(done, 4);
	assert_true(state_equal(&sim.state, &want));

	/* Reversed, the batch would fail on the busy egress. */
	struct op_batch rev = {0};
	for (uint32_t i = b.n; i-- > 0;)
		if (b.ops[i].kind == OP_CONNECT)
			batch_add(&rev, b.ops[i]);
	state_copy(&sim.state, &cur);
	assert_int_equal(sim_run(&sim, &rev, &done, &err), -1);
	assert_non_null(strstr(err.msg, "port in use"));
	batch_free(&rev);
	batch_free(&b);
	sim_device_free(&sim);
	state_free(&cur);
	state_free(&want);
}

static void test_hosts_diff(void **state)
{
	struct device_state cur, want;
	struct op_batch b = {0};
	struct sim_device sim;
	struct ofc_error err = {0};
	uint32_t done, sets = 0, dels = 0;
	(void)state;

	state_init(&cur, DEV_HOSTS);
	state_init(&want, DEV_HOSTS);
	state_add_link(&cur, (struct hlink){0, 0, 1, 0});
	state_add_link(&cur, (struct hlink){1, 0, 2, 0});
	state_add_route(&cur, (struct hroute){0, 1, 0});
	state_add_route(&cur, (struct hroute){0, 2, 0});
	state_add_route(&cur, (struct hroute){1, 2, 0});
	/* Host 1's port 0 now goes to host 0: its circuit moves, so the route
	 * through it is set again even though (1 -> 0 via port 0) is new and
	 * (0 -> 1 via 0) is unchanged and stays untouched. */
	state_add_link(&want, (struct hlink){0, 0, 1, 0});
	state_add_link(&want, (struct hlink){1, 0, 0, 0});
	state_add_route(&want, (struct hroute){0, 1, 0});
	state_add_route(&want, (struct hroute){1, 0, 0});
	state_sort(&cur);
	state_sort(&want);
	state_diff(&cur, &want, &b);
	for (uint32_t i = 0; i < b.n; i++) {
		sets += b.ops[i].kind == OP_ROUTE_SET;
		dels += b.ops[i].kind == OP_ROUTE_DEL;
		if (b.ops[i].kind == OP_ROUTE_SET)
			assert_false(b.ops[i].route.host == 0 && b.ops[i].route.dst_host == 1);
	}
	assert_int_equal(b.ops[0].kind, OP_LINK_DEL);
	assert_int_equal(b.ops[1].kind, OP_LINK_ADD);
	assert_int_equal(sets, 1);
	assert_int_equal(dels, 2);
	sim_device_init(&sim, DEV_HOSTS, 0);
	state_copy(&sim.state, &cur);
	assert_int_equal(sim_run(&sim, &b, &done, &err), 0);
	assert_true(state_equal(&sim.state, &want));
	batch_free(&b);
	sim_device_free(&sim);
	state_free(&cur);
	state_free(&want);
}

static void test_sim_faults(void **state)
{
	struct sim_device sim;
	struct op_batch b = {0};
	struct ofc_error err = {0};
	uint32_t done;
	(void)state;

	sim_device_init(&sim, DEV_SWITCH, 4);
	for (uint32_t i = 1; i <= 3; i++)
		batch_add(&b, (struct op){.kind = OP_CONNECT, .xc = {i, i + 1}});
	/* Command 1 is the open; 2..4 the connects: refuse the 3rd command. */
	sim.fail_at = 3;
	assert_int_equal(sim_run(&sim, &b, &done, &err), -1);
	assert_int_equal(done, 1);
	assert_int_equal(sim.state.nxc, 1);
	assert_non_null(strstr(err.msg, "refused"));
	assert_int_equal(err.reason, OFC_R_REFUSED); /* what read-only clients see */
	/* close-after: the op happened but the answer was lost. */
	sim_device_free(&sim);
	sim_device_init(&sim, DEV_SWITCH, 4);
	sim.fail_at = 3;
	sim.mode = FAULT_CLOSE_AFTER;
	assert_int_equal(sim_run(&sim, &b, &done, &err), -1);
	assert_int_equal(done, 1);
	assert_int_equal(sim.state.nxc, 2);
	assert_int_equal(err.reason, OFC_R_LOST);
	sim_device_free(&sim);
	batch_free(&b);
}

static void test_tl1_parse(void **state)
{
	struct tl1_cmd c;
	struct ofc_error err = {0};
	char a[] = "  ent-patch::3,259:17:\r\n";
	char b[] = "ACT-USER::admin:1::secret";
	char bad1[] = ":::1:";
	char bad2[] = "RTRV-PATCH:::\x01:";
	char bad3[] = "A:1:2:3:4:5:6:7:8:9";
	(void)state;

	assert_int_equal(tl1_parse_cmd(a, &c, &err), 0);
	assert_string_equal(c.verb, "ENT-PATCH");
	assert_int_equal(c.nfield, 4);
	assert_string_equal(c.field[1], "3,259");
	assert_string_equal(c.field[2], "17");
	assert_int_equal(tl1_parse_cmd(b, &c, &err), 0);
	assert_string_equal(c.field[4], "secret");
	assert_int_equal(tl1_parse_cmd(bad1, &c, &err), -1);
	assert_int_equal(tl1_parse_cmd(bad2, &c, &err), -1);
	assert_non_null(strstr(err.msg, "non-printable"));
	assert_int_equal(tl1_parse_cmd(bad3, &c, &err), -1);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_credentials(void **state)
{
	char dir[] = "/tmp/ofc-cred.XXXXXX";
	struct credentials c;
	struct ofc_error err = {0};
	(void)state;

	assert_non_null(mkdtemp(dir));
	char *p = xasprintf("%s/c", dir);
	write_text(p, "# demo\n\nuser: admin\n  password:  s3cret  \n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), 0);
	assert_string_equal(c.user, "admin");
	assert_string_equal(c.password, "s3cret");
	credentials_wipe(&c);
	assert_int_equal(c.password[0], 0);

	write_text(p, "user: admin\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	assert_string_equal(err.msg, "needs 'user' and a 'password' or a 'private_key', or a "
				     "'certificate' and its 'private_key' (TLS)");
	assert_int_equal(err.reason, OFC_R_CREDENTIALS);
	write_text(p, "user: admin\npassword: a;b\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	assert_int_equal(err.line, 2);
	assert_null(strstr(err.msg, "a;b")); /* never echo the secret */
	/* Nor a key: the file may be any file at all. */
	write_text(p, "user: admin\nroot-only-secret-x: x\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	assert_string_equal(
	    err.msg, "unknown key (expected 'user', 'password', 'private_key' or 'certificate')");
	/* a private key instead of a password (SSH): a file beside this one */
	write_text(p, "user: admin\nprivate_key: ocs.key\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), 0);
	assert_string_equal(c.key_file, "ocs.key");
	assert_int_equal(c.password[0], 0);
	char *text = NULL;
	size_t len = 0;
	/* missing, then not a key, then one: named, never quoted */
	assert_int_equal(credentials_load_key(p, NULL, &c, &text, &len, &err), -1);
	assert_int_equal(err.reason, OFC_R_CREDENTIALS);
	char *key = xasprintf("%s/ocs.key", dir);
	write_text(key, "hunter2\n");
	assert_int_equal(credentials_load_key(p, NULL, &c, &text, &len, &err), -1);
	assert_string_equal(err.msg, "private key file is not a PEM or OpenSSH private key");
	assert_string_equal(err.file, key);
	write_text(key,
		   "-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n-----END OPENSSH PRIVATE KEY-----\n");
	assert_int_equal(credentials_load_key(p, NULL, &c, &text, &len, &err), 0);
	assert_non_null(strstr(text, "BEGIN OPENSSH"));
	free(text);
	unlink(key);
	free(key);
	credentials_wipe(&c);
	/* TLS: a certificate and its key, no user needed; the certificate
	 * file must hold one, named and never quoted */
	write_text(p, "certificate: ofc.pem\nprivate_key: ofc.key\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), 0);
	assert_string_equal(c.cert_file, "ofc.pem");
	char *pem = xasprintf("%s/ofc.pem", dir);
	write_text(pem, "not a certificate\n");
	assert_int_equal(credentials_load_cert(p, NULL, &c, &text, &len, &err), -1);
	assert_string_equal(err.msg, "certificate file is not a PEM certificate");
	assert_string_equal(err.file, pem);
	write_text(pem, "-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n");
	assert_int_equal(credentials_load_cert(p, NULL, &c, &text, &len, &err), 0);
	free(text);
	unlink(pem);
	free(pem);
	credentials_wipe(&c);
	write_text(p, "certificate: ofc.pem\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	write_text(p, "certificate: a/ofc.pem\nprivate_key: ofc.key\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	assert_string_equal(
	    err.msg, "'certificate' names a file beside the credentials file, without a '/'");
	write_text(p, "user: admin\nprivate_key: ../etc/shadow\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	assert_null(strstr(err.msg, "shadow"));
	write_text(p, "user: a\nuser: b\npassword: x\n");
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	assert_string_equal(err.msg, "'user' given twice");
	unlink(p);
	assert_int_equal(credentials_load(p, NULL, &c, &err), -1);
	rmdir(dir);
	free(p);
}

/* A daemon's credentials directory: only files directly in it, no links,
 * owned by root (or this user) and writable by nobody else; a FIFO is
 * refused without blocking. */
static void test_credentials_dir(void **state)
{
	char dir[] = "/tmp/ofc-cred.XXXXXX", other[] = "/tmp/ofc-other.XXXXXX";
	struct credentials c;
	struct ofc_error err = {0};
	(void)state;

	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(other));
	chmod(dir, 0755);
	char *in = xasprintf("%s/ocs.cred", dir), *out = xasprintf("%s/secret", other);
	char *link = xasprintf("%s/link.cred", dir), *fifo = xasprintf("%s/fifo.cred", dir);
	char *dotted = xasprintf("%s/../%s/ocs.cred", dir, strrchr(dir, '/') + 1);
	write_text(in, "user: admin\npassword: pw\n");
	write_text(out, "user: root\npassword: hunter2\n");
	chmod(in, 0600);

	assert_int_equal(credentials_load(in, dir, &c, &err), 0);
	assert_string_equal(c.password, "pw");
	credentials_wipe(&c);
	/* Spelled another way, still the directory. */
	assert_int_equal(credentials_load(dotted, dir, &c, &err), 0);
	credentials_wipe(&c);
	assert_int_equal(credentials_check_path(in, dir, &err), 0);

	assert_int_equal(credentials_load(out, dir, &c, &err), -1);
	assert_int_equal(err.reason, OFC_R_CREDENTIALS);
	assert_non_null(strstr(err.msg, "outside ofcd's credentials directory"));
	assert_null(strstr(err.msg, "hunter2"));
	assert_int_equal(credentials_check_path(out, dir, &err), -1);

	assert_int_equal(symlink(out, link), 0);
	assert_int_equal(credentials_load(link, dir, &c, &err), -1);
	assert_string_equal(err.msg, "is a symbolic link (not followed here)");

	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(20);
	assert_int_equal(credentials_load(fifo, dir, &c, &err), -1);
	alarm(0);
	assert_string_equal(err.msg, "is not a regular file");

	chmod(in, 0620);
	assert_int_equal(credentials_load(in, dir, &c, &err), -1);
	assert_string_equal(err.msg, "credentials file is writable by group or others");
	chmod(in, 0600);
	chmod(dir, 0777);
	assert_int_equal(credentials_load(in, dir, &c, &err), -1);
	char *want = xasprintf("credentials directory %s is writable by group or others", dir);
	assert_string_equal(err.msg, want);
	free(want);
	chmod(dir, 0755);
	/* A directory that is not there is named (a new install's first
	 * stumble: /etc/ofc/credentials). */
	char *missing = xasprintf("%s/none", other);
	assert_int_equal(credentials_check_path(in, missing, &err), -1);
	want = xasprintf("credentials directory %s: No such file or directory", missing);
	assert_string_equal(err.msg, want);
	free(want);
	free(missing);
	if (geteuid() == 0) {
		assert_int_equal(chown(in, 65534, 65534), 0);
		assert_int_equal(credentials_load(in, dir, &c, &err), -1);
		assert_string_equal(err.msg, "credentials file is not owned by root");
	}
	unlink(in);
	unlink(link);
	unlink(fifo);
	unlink(out);
	rmdir(dir);
	rmdir(other);
	free(in);
	free(out);
	free(link);
	free(fifo);
	free(dotted);
}

static void test_fault_names(void **state)
{
	(void)state;
	for (int m = FAULT_DENY; m <= FAULT_LIE; m++)
		assert_int_equal(fault_mode_parse(fault_mode_name((enum fault_mode)m)), m);
	assert_int_equal(fault_mode_parse("explode"), 0);
	assert_null(driver_find("snmp"));
	assert_non_null(driver_find("tl1"));
}

/* The driver's reply framing: a reply split across reads completes only
 * with its ';' line, a late reply to an older ctag is skipped, a reply to
 * another ctag and bytes that are not TL1 are errors; RTRV-PATCH lines map
 * egress N+k to k and reject what a switch of that size cannot have. */
static void test_tl1_replies(void **state)
{
	static const char late[] = "M  3 COMPLD\r\n;\r\n";
	static const char part1[] = "\r\n\n   OCS 26-11-21 10:00:00\r\nM  4 COMPLD\r\n   \"1,";
	static const char part2[] = "65\"\r\n   /* done */\r\n;\r\nM  5";
	struct strbuf in = {0};
	struct tl1_reply r = {0};
	struct ofc_error err = {0};
	uint32_t a, b;
	(void)state;

	sb_add(&in, late, strlen(late));
	sb_add(&in, part1, strlen(part1));
	assert_int_equal(tl1_take_reply(&in, 4, &r, &err), 0); /* not complete yet */
	sb_add(&in, part2, strlen(part2));
	assert_int_equal(tl1_take_reply(&in, 4, &r, &err), 1);
	assert_true(r.compld);
	assert_int_equal(r.nlines, 2);
	assert_string_equal(r.lines[0], "\"1,65\"");
	assert_string_equal(in.buf, "M  5"); /* the next reply's start stays */
	assert_int_equal(tl1_parse_xconn(r.lines[0], 64, &a, &b), 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 1);
	assert_int_equal(tl1_parse_xconn("\"1,64\"", 64, &a, &b), -1); /* an ingress */
	assert_int_equal(tl1_parse_xconn("\"0,65\"", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"1,65\"x", 64, &a, &b), -1);

	sb_reset(&in);
	sb_puts(&in, "M  9 DENY\r\n   SNVS\r\n;\r\n");
	assert_int_equal(tl1_take_reply(&in, 7, &r, &err), -1);
	assert_non_null(strstr(err.msg, "reply for ctag 9 while waiting for 7"));
	sb_reset(&in);
	sb_puts(&in, "M  7 DENY\r\n   SNVS\r\n;\r\n");
	assert_int_equal(tl1_take_reply(&in, 7, &r, &err), 1);
	assert_false(r.compld);
	assert_string_equal(r.code, "SNVS");
	sb_reset(&in);
	sb_add(&in, "M  7 \x01", 6);
	assert_int_equal(tl1_take_reply(&in, 7, &r, &err), -1);
	assert_non_null(strstr(err.msg, "byte 0x01 is not TL1 text"));
	tl1_reply_free(&r);
	sb_free(&in);
}

/* A reply's bound grows with the switch: a 65,536-port switch's full
 * read-back (a line a port; over the 1 MiB that once bounded every reply)
 * fits, as does the longest Calient line a port; the bound stops at its
 * ceiling however many ports a config claims. */
/* The reply is scanned for its end only when the bytes just read may
 * finish it: a ';' line, split across two reads, still does. */
static void test_tl1_may_finish(void **state)
{
	struct strbuf in = STRBUF_INIT;
	(void)state;

	assert_true(tl1_may_finish(&in, "M  4 COMPLD\r\n;", 16));
	assert_false(tl1_may_finish(&in, "   \"1,65\"\r\n", 11));
	assert_true(tl1_may_finish(&in, "   \"1,65\x01\r\n", 11)); /* not TL1: fail it now */
	sb_puts(&in, "\r\n\n   OCS\r\nM  4 COMPLD\r\n   \"1,65\"\r\n");
	assert_false(tl1_may_finish(&in, "   \"2,66\"\r\n", 11));
	assert_false(tl1_may_finish(&in, "\r\n", 2));
	sb_puts(&in, ";  ");
	/* the ';' came before; the end of its line now */
	assert_true(tl1_may_finish(&in, "\r\n", 2));
	assert_false(tl1_may_finish(&in, "  ", 2));
	sb_free(&in);
}

static void test_tl1_reply_bound(void **state)
{
	const struct tl1_port_map map = {1, 1, 32};
	struct strbuf in = {0};
	char src[32], dst[32];
	(void)state;

	assert_int_equal(tl1_reply_bound(0), TL1_MAX_REPLY);
	assert_true(tl1_reply_bound(256) >= TL1_MAX_REPLY);
	sb_puts(&in, "\r\n\n   OCS-EMU 2026-11-26 10:00:00\r\nM  7 COMPLD\r\n");
	for (uint32_t i = 1; i <= 65536; i++)
		sb_printf(&in, "   \"%u,%u\"\r\n", i, 65536 + (65537 - i));
	sb_puts(&in, ";\r\n");
	assert_true(in.len > (1u << 20));
	assert_true(in.len <= tl1_reply_bound(65536));
	/* Calient: "SRC,DST:GROUP,1WAY,STATE" with the longest names. */
	assert_true(tl1_calient_aid(&map, 65536, 65536, src, sizeof(src)));
	assert_true(tl1_calient_aid(&map, 65536, 65535, dst, sizeof(dst)));
	sb_reset(&in);
	sb_printf(&in, "   \"%s,%s:%s,1WAY,IDLE\"\r\n", src, dst,
		  "OFC-GROUP-NAME-32-CHARACTERS-XX");
	assert_true((uint64_t)in.len * 65536 + 4096 <= tl1_reply_bound(65536));
	assert_int_equal(tl1_reply_bound(UINT32_MAX), TL1_REPLY_CEILING);
	assert_true(tl1_reply_bound(1u << 20) <= TL1_REPLY_CEILING);
	sb_free(&in);
}

/* Numbers in replies are taken whole or refused: sscanf's %u read
 * "4294967298" as 2 and "-1" as 4294967295. A reply with ctag 0 answers a
 * command the switch could not parse: an error, not a stale reply to skip
 * (which left the driver waiting for its timeout). */
static void test_reply_numbers(void **state)
{
	struct strbuf in = {0};
	struct tl1_reply r = {0};
	struct ofc_error err = {0};
	uint32_t a, b;
	(void)state;

	assert_int_equal(tl1_parse_xconn("\"4294967298,65\"", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"1,4294967361\"", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"-1,65\"", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"1,+65\"", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"99999999999999999999,65\"", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"1,65", 64, &a, &b), -1);
	assert_int_equal(tl1_parse_xconn("\"64,128\"", 64, &a, &b), 0);
	assert_int_equal(a, 64);
	assert_int_equal(b, 64);
	/* 2 * ports does not wrap either. */
	assert_int_equal(tl1_parse_xconn("\"1,4294967295\"", 2147483648u, &a, &b), 0);
	assert_int_equal(b, 2147483647u);

	sb_puts(&in, "M  0 DENY\r\n   IISP\r\n;\r\n");
	assert_int_equal(tl1_take_reply(&in, 7, &r, &err), -1);
	assert_int_equal(err.reason, OFC_R_GARBAGE);
	assert_string_equal(err.msg, "the device could not parse the command (DENY with ctag 0)");
	sb_reset(&in);
	sb_puts(&in, "M  4294967303 COMPLD\r\n;\r\n");
	assert_int_equal(tl1_take_reply(&in, 7, &r, &err), -1);
	sb_reset(&in);
	sb_puts(&in, "M  -1 COMPLD\r\n;\r\n");
	assert_int_equal(tl1_take_reply(&in, 7, &r, &err), -1);
	assert_non_null(strstr(err.msg, "bad ctag"));
	tl1_reply_free(&r);
	sb_free(&in);
}

/* The device lock of the driver interface (for the replicas'
 * fencing): taken and released through the sim; refused, naming the
 * device, while another manager holds it; dropped when the session ends;
 * a driver without a lock (tl1) reports none held and sends nothing. */
static void test_device_lock(void **state)
{
	struct sim_device sim;
	struct device dev;
	struct device_cfg cfg = {.name = "ocs9", .driver = "sim", .cls = DEV_SWITCH, .ports = 4};
	struct ofc_error err = {0};
	bool held = false;
	(void)state;

	sim_device_init(&sim, DEV_SWITCH, 4);
	cfg.sim = &sim;
	/* a sim device without a lock: none held, nothing counted */
	assert_int_equal(device_init(&dev, &cfg, &err), 0);
	held = true;
	assert_int_equal(device_lock(&dev, &held, &err), 0);
	assert_false(held);
	assert_int_equal(sim.commands, 1); /* the open only */
	device_close(&dev);
	sim.lockable = true;
	assert_int_equal(device_init(&dev, &cfg, &err), 0);
	assert_int_equal(device_lock(&dev, &held, &err), 0);
	assert_true(held);
	assert_true(sim.locked);
	/* held already (a fence across transactions): not taken again, so the
	 * second taker does not release it */
	uint64_t sent = sim.commands;
	assert_int_equal(device_lock(&dev, &held, &err), 0);
	assert_false(held);
	assert_true(sim.locked);
	assert_int_equal(sim.commands, sent);
	assert_int_equal(device_unlock(&dev, &err), 0);
	assert_false(sim.locked);
	/* unlocking what this session does not hold is an error */
	assert_int_equal(device_unlock(&dev, &err), -1);
	assert_int_equal(device_lock(&dev, &held, &err), 0);
	device_close(&dev);
	assert_false(sim.locked); /* the session ended: the lock went with it */
	/* held elsewhere: refused, the device named */
	sim.lock_held_elsewhere = true;
	assert_int_equal(device_init(&dev, &cfg, &err), 0);
	assert_int_equal(device_lock(&dev, &held, &err), -1);
	assert_false(held);
	assert_int_equal(err.reason, OFC_R_REFUSED);
	assert_string_equal(err.msg, "ocs9: lock: the lock is held by another session");
	/* a fault on the lock command is the transport's error */
	sim.lock_held_elsewhere = false;
	sim.fail_at = sim.commands + 1;
	sim.mode = FAULT_CLOSE;
	assert_int_equal(device_lock(&dev, &held, &err), -1);
	assert_int_equal(err.reason, OFC_R_LOST);
	assert_false(sim.locked);
	device_close(&dev);
	sim_device_free(&sim);

	/* tl1 has no lock: nothing is opened or sent (no address to reach) */
	struct device_cfg t = {.name = "t", .driver = "tl1", .cls = DEV_SWITCH, .ports = 4};
	assert_int_equal(device_init(&dev, &t, &err), 0);
	held = true;
	assert_int_equal(device_lock(&dev, &held, &err), 0);
	assert_false(held);
	assert_false(dev.open);
	assert_int_equal(device_unlock(&dev, &err), 0);
}

/* Calient port names under a port map, both ways, and RTRV-CRS lines:
 * only one-way cross-connects between ports the map names, active or idle,
 * nothing after the quote; numbers whole or refused. */
static void test_tl1_calient(void **state)
{
	const struct tl1_port_map map = {2, 3, 16};
	char buf[48];
	uint32_t p, a, b;
	bool act;
	(void)state;

	assert_true(tl1_calient_aid(&map, 64, 1, buf, sizeof(buf)));
	assert_string_equal(buf, "2.3.1");
	assert_true(tl1_calient_aid(&map, 64, 17, buf, sizeof(buf)));
	assert_string_equal(buf, "2.4.1");
	assert_true(tl1_calient_aid(&map, 64, 64, buf, sizeof(buf)));
	assert_string_equal(buf, "2.6.16");
	assert_false(tl1_calient_aid(&map, 64, 0, buf, sizeof(buf)));
	assert_false(tl1_calient_aid(&map, 64, 65, buf, sizeof(buf)));
	for (uint32_t k = 1; k <= 64; k++) {
		assert_true(tl1_calient_aid(&map, 64, k, buf, sizeof(buf)));
		assert_int_equal(tl1_calient_port(&map, 64, buf, &p), 0);
		assert_int_equal(p, k);
	}
	assert_int_equal(tl1_calient_port(&map, 64, "1.3.1", &p), -1);	/* another shelf */
	assert_int_equal(tl1_calient_port(&map, 64, "2.2.1", &p), -1);	/* before first_slot */
	assert_int_equal(tl1_calient_port(&map, 64, "2.3.17", &p), -1); /* past slot_ports */
	assert_int_equal(tl1_calient_port(&map, 64, "2.7.1", &p), -1);	/* port 65 */
	assert_int_equal(tl1_calient_port(&map, 64, "2.3.1 ", &p), -1);
	assert_int_equal(tl1_calient_port(&map, 64, "2.3.+1", &p), -1);
	assert_int_equal(tl1_calient_port(&map, 64, "2.4294967299.1", &p), -1);
	assert_int_equal(tl1_calient_port(&map, 64, "2.3", &p), -1);

	assert_int_equal(
	    tl1_calient_parse_crs("\"2.3.1,2.4.1:OFC,1WAY,ACT\"", &map, 64, &a, &b, &act), 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 17);
	assert_true(act);
	assert_int_equal(
	    tl1_calient_parse_crs("\"2.6.16,2.3.2:ops_team-1,1WAY,IDLE\"", &map, 64, &a, &b, &act),
	    0);
	assert_int_equal(a, 64);
	assert_int_equal(b, 2);
	assert_false(act);
	static const char *const bad[] = {
	    "\"2.3.1,2.4.1:OFC,2WAY,ACT\"",  /* two-way: not one cross-connect */
	    "\"2.3.1,2.4.1:OFC,1WAY,OOS\"",  /* unknown state */
	    "\"2.3.1,2.4.1:OFC,1WAY,ACT\"x", /* after the quote */
	    "\"2.3.1,2.4.1:,1WAY,ACT\"",     /* no group */
	    "\"2.3.1,2.4.1:O F,1WAY,ACT\"",  /* a blank in the group */
	    "\"2.3.1,2.7.1:OFC,1WAY,ACT\"",  /* port 65 of 64 */
	    "\"2.3.1;2.4.1:OFC,1WAY,ACT\"",
	    "\"2.3.1,2.4.1:OFC,1WAY,ACT",
	    "2.3.1,2.4.1:OFC,1WAY,ACT",
	    "\"2.3.1,2.4.1\"",
	    "\"2.3.1,2.4.1:OFCOFCOFCOFCOFCOFCOFCOFCOFCOFCOFCO,1WAY,ACT\"", /* group of 33 */
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(tl1_calient_parse_crs(bad[i], &map, 64, &a, &b, &act), -1);
}

/* What a device reports is checked before anything diffs against it:
 * numbers within the device, nothing twice. */
static void test_state_check(void **state)
{
	struct device_cfg sw = {.name = "s", .driver = "sim", .cls = DEV_SWITCH, .ports = 8};
	struct device_cfg ring = {.name = "r",
				  .driver = "sim",
				  .cls = DEV_RING,
				  .ring_nodes = 4,
				  .interfaces = 2,
				  .wavelengths = 3};
	struct device_state s;
	struct ofc_error err = {0};
	(void)state;

	state_init(&s, DEV_SWITCH);
	state_add_xconn(&s, 1, 2);
	state_add_xconn(&s, 3, 8);
	state_sort(&s);
	assert_int_equal(state_check(&s, &sw, &err), 0);
	state_add_xconn(&s, 1, 5);
	state_sort(&s);
	assert_int_equal(state_check(&s, &sw, &err), -1);
	assert_string_equal(err.msg, "ingress 1 is cross-connected twice (to 2 and 5)");
	state_clear(&s);
	state_add_xconn(&s, 1, 2);
	state_add_xconn(&s, 4, 2);
	state_sort(&s);
	assert_int_equal(state_check(&s, &sw, &err), -1);
	assert_string_equal(err.msg, "egress 2 is cross-connected twice");
	state_clear(&s);
	state_add_xconn(&s, 1, 4294967042u);
	assert_int_equal(state_check(&s, &sw, &err), -1);
	assert_int_equal(err.reason, OFC_R_GARBAGE);
	assert_non_null(strstr(err.msg, "outside the switch's ports 1..8"));
	state_free(&s);

	state_init(&s, DEV_RING);
	state_add_chan(&s, (struct mrr_chan){3, 1, 2, MRR_DROP});
	assert_int_equal(state_check(&s, &ring, &err), 0);
	state_add_chan(&s, (struct mrr_chan){3, 1, 2, MRR_DROP});
	assert_int_equal(state_check(&s, &ring, &err), -1);
	state_clear(&s);
	state_add_chan(&s, (struct mrr_chan){4, 0, 0, MRR_ADD});
	assert_int_equal(state_check(&s, &ring, &err), -1);
	/* A ring state on a switch. */
	assert_int_equal(state_check(&s, &sw, &err), -1);
	state_free(&s);

	/* device_read refuses what a device reports twice. */
	struct sim_device sim;
	struct device dev;
	struct device_cfg cfg = sw;

	sim_device_init(&sim, DEV_SWITCH, 8);
	state_add_xconn(&sim.state, 2, 3);
	state_add_xconn(&sim.state, 2, 4);
	cfg.sim = &sim;
	assert_int_equal(device_init(&dev, &cfg, &err), 0);
	assert_int_equal(device_read(&dev, &s, &err), -1);
	assert_int_equal(err.reason, OFC_R_GARBAGE);
	assert_string_equal(err.msg, "s: the device reports an impossible state: ingress 2 is "
				     "cross-connected twice (to 3 and 4)");
	state_free(&s);
	device_close(&dev);
	sim_device_free(&sim);
}

/* A device as read against its record: nothing recorded agrees with a
 * device that holds nothing (an empty switch before the first commit is
 * not "DIFFERS"), and with nothing else. */
static void test_state_as_recorded(void **state)
{
	struct device_state empty, one, other;

	(void)state;
	state_init(&empty, DEV_SWITCH);
	state_init(&one, DEV_SWITCH);
	state_init(&other, DEV_SWITCH);
	state_add_xconn(&one, 1, 2);
	state_add_xconn(&other, 1, 3);
	assert_true(state_as_recorded(NULL, &empty));
	assert_false(state_as_recorded(NULL, &one));
	assert_true(state_as_recorded(&one, &one));
	assert_false(state_as_recorded(&one, &other));
	assert_false(state_as_recorded(&one, &empty));
	assert_true(state_as_recorded(&empty, &empty));
	state_free(&empty);
	state_free(&one);
	state_free(&other);
}

/* A TL1 switch in a thread for the driver to talk to: it answers a login
 * and a logout at once, but holds its answers to changes until a second
 * change is waiting behind the first (or 3 s pass: a driver that waits for
 * each answer before it sends the next never gets there). It refuses the
 * deny_at-th change (SROF) and says how many changes were ever waiting at
 * once. */
struct fake_switch {
	int lfd;
	uint32_t deny_at; /* 0: none */
	uint32_t changes, most_waiting;
};

static void fake_reply(int fd, const char *ctag, bool ok)
{
	char buf[128];
	int n =
	    snprintf(buf, sizeof(buf), "\r\n\n   FAKE 2026-01-01 00:00:00\r\nM  %s %s\r\n%s;\r\n",
		     ctag, ok ? "COMPLD" : "DENY", ok ? "" : "   SROF\r\n");

	/* (in the switch's thread: no assertion; the driver sees what came) */
	(void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL);
}

static void *fake_switch_run(void *arg)
{
	struct fake_switch *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	char in[8192], wait_tag[64][16];
	size_t len = 0;
	uint32_t waiting = 0;

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t n = 0;

		if (poll(&p, 1, waiting ? 3000 : 10000) > 0) {
			n = recv(fd, in + len, sizeof(in) - 1 - len, 0);
			if (n <= 0)
				break;
		}
		len += (size_t)n;
		in[len] = 0;
		char *semi;
		while ((semi = strchr(in, ';'))) { /* one command: VERB:TID:AID:CTAG:... */
			char verb[16] = "", ctag[16] = "";
			*semi = 0;
			const char *fld = in;
			for (int k = 0; k < 3 && fld; k++) /* past VERB, TID, AID */
				fld = (fld = strchr(fld, ':')) ? fld + 1 : NULL;
			sscanf(in, "%15[^:]", verb);
			if (fld)
				sscanf(fld, "%15[^:]", ctag);
			if (strstr(verb, "PATCH") && waiting < 64)
				snprintf(wait_tag[waiting++], sizeof(wait_tag[0]), "%s", ctag);
			else if (strstr(verb, "USER"))
				fake_reply(fd, ctag, true);
			len -= (size_t)(semi + 1 - in);
			memmove(in, semi + 1, len + 1);
		}
		if (waiting > f->most_waiting)
			f->most_waiting = waiting;
		if (waiting >= 2 || (waiting && n == 0)) {
			for (uint32_t k = 0; k < waiting; k++)
				fake_reply(fd, wait_tag[k], ++f->changes != f->deny_at);
			waiting = 0;
		}
	}
	close(fd);
	return NULL;
}

/* Polatis changes are sent ahead of their answers: the switch has the next
 * one while it does one. The changes done for certain are those answered
 * COMPLD before the first refusal, which the error names. */
static void test_tl1_sends_ahead(void **state)
{
	char dir[] = "/tmp/ofc-ahead.XXXXXX";
	(void)state;

	assert_non_null(mkdtemp(dir));
	char *cred = xasprintf("%s/c", dir);
	write_text(cred, "user: admin\npassword: s3cret\n");
	chmod(cred, 0600);
	for (uint32_t deny_at = 0; deny_at <= 3; deny_at += 3) {
		struct fake_switch f = {.deny_at = deny_at};
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t alen = sizeof(a);
		pthread_t th;

		f.lfd = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(bind(f.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(listen(f.lfd, 1), 0);
		assert_int_equal(getsockname(f.lfd, (struct sockaddr *)&a, &alen), 0);
		char *addr = xasprintf("127.0.0.1:%u", ntohs(a.sin_port));
		assert_int_equal(pthread_create(&th, NULL, fake_switch_run, &f), 0);

		struct device_cfg cfg = {.name = "ocs0",
					 .driver = "tl1",
					 .cls = DEV_SWITCH,
					 .ports = 16,
					 .address = addr,
					 .credentials = cred,
					 .timeout = 10};
		struct op_batch b = {0};
		struct device dev;
		struct ofc_error err = {0};
		uint32_t done = 0;
		for (uint32_t i = 1; i <= 8; i++)
			batch_add(&b, (struct op){.kind = OP_CONNECT, .xc = {i, 16 - i + 1}});
		assert_int_equal(device_init(&dev, &cfg, &err), 0);
		int rc = device_apply(&dev, &b, &done, &err);
		device_close(&dev);
		pthread_join(th, NULL);
		close(f.lfd);
		assert_true(f.most_waiting >= 2);
		if (deny_at == 0) {
			assert_int_equal(rc, 0);
			assert_int_equal(done, 8);
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(done, deny_at - 1);
			assert_int_equal(err.reason, OFC_R_REFUSED);
			assert_non_null(strstr(err.msg, "device refused connect 3 -> 14 (SROF)"));
		}
		batch_free(&b);
		free(addr);
	}
	unlink(cred);
	rmdir(dir);
	free(cred);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ports_checked_by_core),
	    cmocka_unit_test(test_switch_diff),
	    cmocka_unit_test(test_hosts_diff),
	    cmocka_unit_test(test_sim_faults),
	    cmocka_unit_test(test_tl1_parse),
	    cmocka_unit_test(test_tl1_replies),
	    cmocka_unit_test(test_tl1_may_finish),
	    cmocka_unit_test(test_tl1_reply_bound),
	    cmocka_unit_test(test_tl1_calient),
	    cmocka_unit_test(test_tl1_sends_ahead),
	    cmocka_unit_test(test_device_lock),
	    cmocka_unit_test(test_credentials),
	    cmocka_unit_test(test_credentials_dir),
	    cmocka_unit_test(test_fault_names),
	    cmocka_unit_test(test_reply_numbers),
	    cmocka_unit_test(test_state_check),
	    cmocka_unit_test(test_state_as_recorded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
