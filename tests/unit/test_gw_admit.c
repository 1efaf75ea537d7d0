/* ofc-gateway's admission of connections and its limited log
 * (controller/gateway/admit.c): an address past its share is refused;
 * connections before their handshake hold at most half the slots, the
 * oldest giving way to a new one; when every slot is past its handshake a
 * new connection is refused; the count by address survives any order of
 * starts and ends (the table's deletion); a kind of log line is written at
 * most GW_LOG_BURST times a window, then counted in one line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>

#include "controller/gateway/internal.h"

struct captured {
	char lines[64][600];
	int n;
};

static void capture(void *ctx, int level, const char *msg)
{
	struct captured *c = ctx;

	(void)level;
	if (c->n < 64)
		snprintf(c->lines[c->n], sizeof(c->lines[0]), "%s", msg);
	c->n++;
}

static struct sockaddr_in v4(const char *ip, unsigned port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* Admitted, then started (as MHD does, one after the other). */
static struct gw_conn *connect_from(struct gw_conns *t, const char *ip)
{
	struct sockaddr_in s = v4(ip, 40000);

	if (!gw_conns_admit(t, (const struct sockaddr *)&s, sizeof(s)))
		return NULL;
	return gw_conn_start(t, -1, (const struct sockaddr *)&s);
}

static void test_per_address(void **state)
{
	struct captured cap = {0};
	struct gw_log log;
	struct gw_conns t;

	(void)state;
	gw_log_init(&log, capture, &cap);
	gw_conns_init(&t, 100, 2, 10, &log);
	struct gw_conn *a = connect_from(&t, "10.0.0.1");
	struct gw_conn *b = connect_from(&t, "10.0.0.1");
	assert_non_null(a);
	assert_non_null(b);
	assert_null(connect_from(&t, "10.0.0.1"));
	assert_int_equal(t.refused_address, 1);
	assert_string_equal(cap.lines[0], "refused a connection from 10.0.0.1:40000: its address "
					  "holds 2 connections (--max-connections-per-address)");
	/* another address is let in; an IPv4-mapped IPv6 10.0.0.1 is 10.0.0.1 */
	struct gw_conn *c = connect_from(&t, "10.0.0.2");
	assert_non_null(c);
	struct sockaddr_in6 m = {.sin6_family = AF_INET6};
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &m.sin6_addr);
	assert_false(gw_conns_admit(&t, (const struct sockaddr *)&m, sizeof(m)));
	/* one ends: the address may connect again */
	assert_true(gw_conn_end(&t, a)); /* (it ended without a certificate: logged) */
	assert_non_null(a = connect_from(&t, "10.0.0.1"));
	assert_int_equal(t.live, 3);
	gw_conn_end(&t, a);
	gw_conn_end(&t, b);
	gw_conn_end(&t, c);
	assert_int_equal(t.live, 0);
	assert_int_equal(t.waiting, 0);
	gw_conns_fini(&t);
	gw_log_fini(&log);
}

static void test_waiting_share(void **state)
{
	struct gw_log log;
	struct gw_conns t;
	struct gw_conn *c[6];

	(void)state;
	gw_log_init(&log, NULL, NULL);
	gw_conns_init(&t, 4, 4, 10, &log); /* at most 2 wait for their handshake */
	c[0] = connect_from(&t, "10.0.0.1");
	c[1] = connect_from(&t, "10.0.0.2");
	assert_int_equal(t.waiting, 2);
	/* a third: the oldest waiting gives way */
	c[2] = connect_from(&t, "10.0.0.3");
	assert_non_null(c[2]);
	assert_true(c[0]->cut);
	assert_false(c[1]->cut);
	assert_int_equal(t.evicted, 1);
	assert_int_equal(t.waiting, 2);
	assert_false(gw_conn_verified(&t, c[0])); /* too late: closed */
	assert_false(gw_conn_end(&t, c[0]));	  /* (its eviction was its word) */
	/* past its handshake, a connection is not evicted */
	assert_true(gw_conn_verified(&t, c[1]));
	assert_true(gw_conn_verified(&t, c[2]));
	c[3] = connect_from(&t, "10.0.0.4");
	c[4] = connect_from(&t, "10.0.0.5");
	assert_int_equal(t.live, 4);
	/* full: the oldest waiting (c[3]) gives way to c[5] */
	c[5] = connect_from(&t, "10.0.0.6");
	assert_non_null(c[5]);
	assert_true(c[3]->cut);
	assert_false(c[1]->cut || c[2]->cut || c[4]->cut);
	gw_conn_end(&t, c[3]);
	/* every slot past its handshake: refused */
	assert_true(gw_conn_verified(&t, c[4]));
	assert_true(gw_conn_verified(&t, c[5]));
	assert_null(connect_from(&t, "10.0.0.7"));
	assert_int_equal(t.refused_full, 1);
	for (int i = 1; i < 6; i++)
		if (i != 3)
			gw_conn_end(&t, c[i]);
	assert_int_equal(t.live, 0);
	gw_conns_fini(&t);
	gw_log_fini(&log);
}

/* Address a of the table's test: 10.A.X.Y, X.Y spread so that the
 * hashes' low bits collide (consecutive last octets never do). */
static void ip_of(unsigned a, char *ip, size_t len)
{
	unsigned x = (a * 7919u) & 0xffff;

	snprintf(ip, len, "10.%u.%u.%u", a, x >> 8, x & 255);
}

/* Connections from many addresses start and end in a scrambled order: the
 * table's count of each address stays that of a plain array (deletion
 * moves entries back without losing any). */
static void test_address_table(void **state)
{
	enum { N = 600, ADDRS = 97 };
	struct gw_log log;
	struct gw_conns t;
	static struct gw_conn *c[N];
	uint32_t want[ADDRS] = {0};
	unsigned seed = 12345;

	(void)state;
	gw_log_init(&log, NULL, NULL);
	/* a small table (256 slots for 97 addresses): a quarter collide */
	gw_conns_init(&t, 40, 1000, 10, &log);
	assert_int_equal(t.mask, 255);
	t.max = N + 1;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < N; i++) {
			seed = seed * 1103515245u + 12345u;
			if (c[i] && (seed >> 16) % 3 == 0) {
				want[c[i]->addr.b[1]]--;
				gw_conn_verified(&t, c[i]);
				gw_conn_end(&t, c[i]);
				c[i] = NULL;
			} else if (!c[i]) {
				unsigned a = (seed >> 8) % ADDRS;
				char ip[32];

				ip_of(a, ip, sizeof(ip));
				struct sockaddr_in s = v4(ip, 1);
				c[i] = gw_conn_start(&t, -1, (const struct sockaddr *)&s);
				gw_conn_verified(&t, c[i]);
				want[a]++;
			}
		}
		for (unsigned a = 0; a < ADDRS; a++) {
			char ip[32];

			ip_of(a, ip, sizeof(ip));
			struct sockaddr_in s = v4(ip, 1);
			/* admitted exactly while under want[a] + 1 */
			t.per_address = want[a] + 1;
			assert_true(gw_conns_admit(&t, (const struct sockaddr *)&s, sizeof(s)));
			t.per_address = want[a];
			assert_false(gw_conns_admit(&t, (const struct sockaddr *)&s, sizeof(s)));
		}
	}
	for (int i = 0; i < N; i++)
		if (c[i])
			gw_conn_end(&t, c[i]);
	for (uint32_t i = 0; i <= t.mask; i++)
		assert_int_equal(t.tab[i].n, 0);
	gw_conns_fini(&t);
	gw_log_fini(&log);
}

static void test_log_limit(void **state)
{
	struct captured cap = {0};
	struct gw_log log;
	char msg[64];

	(void)state;
	gw_log_init(&log, capture, &cap);
	for (int i = 0; i < 25; i++) {
		snprintf(msg, sizeof(msg), "refused %d", i);
		gw_log_line(&log, GW_LOG_ADDRESS, 4, 100.0 + i * 0.1, msg);
	}
	/* another kind has a window of its own; the gateway's own lines none */
	gw_log_line(&log, GW_LOG_CUT, 5, 101.0, "cut");
	for (int i = 0; i < 30; i++)
		gw_log_line(&log, GW_LOG_ANY, 5, 101.0, "own");
	assert_int_equal(cap.n, GW_LOG_BURST + 1 + 30);
	assert_string_equal(cap.lines[GW_LOG_BURST - 1], "refused 9");
	assert_int_equal(log.suppressed, 15);
	gw_log_flush(&log, 105.0); /* the window has not ended: nothing */
	assert_int_equal(cap.n, GW_LOG_BURST + 31);
	gw_log_flush(&log, 110.2);
	assert_int_equal(cap.n, GW_LOG_BURST + 32);
	assert_string_equal(
	    cap.lines[GW_LOG_BURST + 31],
	    "left out 15 more lines of a kind in 10 s (at most 10 a kind are written "
	    "in 10 s); the last: refused 24");
	/* a new window: written again */
	gw_log_line(&log, GW_LOG_ADDRESS, 4, 111.0, "refused again");
	assert_string_equal(cap.lines[GW_LOG_BURST + 32], "refused again");
	gw_log_fini(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_per_address),
	    cmocka_unit_test(test_waiting_share),
	    cmocka_unit_test(test_address_table),
	    cmocka_unit_test(test_log_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
