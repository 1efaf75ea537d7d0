/* exec: schedules run by the agents over loopback TCP, every host in this
 * process's namespace on an address of its own in 127/8 (no root, no
 * namespaces): ring all-gather and allreduce come out right, element by
 * element; steps no host takes part in cost nothing to run and nothing to
 * hold (a million empty steps), unless their times are asked for, which the
 * memory limit then refuses with the run's figure; a deadline already past
 * stops the set-up; the link probe carries data for its window on every
 * circuit and stops at its deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/exec.h"

#define HOSTS 4

struct lo {
	struct exec_net net;
	uint32_t addr[HOSTS];
};

/* Hosts at 127.77.P.1.. (P from the pid, so that runs side by side do not
 * meet) and a port the kernel found free on the first and that is free on
 * every other host too: a port free on the first alone was at times the
 * local port of another run's connection from a later host (two runs'
 * pids alike modulo 250), and the run's listen failed "Address already in
 * use". */
static void lo_init(struct lo *l)
{
	uint16_t port = 0;

	for (uint32_t u = 0; u < HOSTS; u++)
		l->addr[u] = 0x7f4d0000u | ((uint32_t)getpid() % 250 + 1) << 8 | (u + 1);
	for (int attempt = 0; attempt < 100 && !port; attempt++) {
		int fd[HOSTS];
		uint32_t held = 0;
		struct sockaddr_in sa = {.sin_family = AF_INET};
		socklen_t sl = sizeof(sa);

		for (; held < HOSTS; held++) {
			int one = 1;

			fd[held] = socket(AF_INET, SOCK_STREAM, 0);
			assert_true(fd[held] >= 0);
			setsockopt(fd[held], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			sa.sin_addr.s_addr = htonl(l->addr[held]);
			if (bind(fd[held], (struct sockaddr *)&sa, sizeof(sa)) != 0) {
				close(fd[held]);
				break;
			}
			if (held == 0)
				assert_int_equal(getsockname(fd[0], (struct sockaddr *)&sa, &sl),
						 0);
		}
		if (held == HOSTS)
			port = ntohs(sa.sin_port);
		while (held > 0)
			close(fd[--held]);
	}
	assert_true(port != 0);
	l->net = (struct exec_net){.nhosts = HOSTS, .host_addr = l->addr, .tcp_port = port};
}

/* The peak resident set from now on (Linux: clear_refs 5); false when the
 * kernel does not offer it. */
static bool reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	bool ok = f && fputs("5", f) >= 0;

	if (f && fclose(f) != 0)
		ok = false;
	return ok;
}

static void add(struct schedule *s, uint32_t src, uint32_t dst, uint32_t block, bool reduce)
{
	struct xfer x = {.src = (uint16_t)src,
			 .dst = (uint16_t)dst,
			 .block = block,
			 .length = SCHED_ONE,
			 .lane = SCHED_NO_LANE,
			 .flags = xfer_flags(DIR_NONE, reduce ? XFER_REDUCE : XFER_COPY)};

	sched_add(s, &x);
}

/* The ring: reduce-scatter (step t: u adds block u - t - 1 into u + 1's,
 * so u ends with the sum of block u), then all-gather (u passes on block
 * u - t); empty steps after the first when asked. */
static void ring(struct schedule *s, enum sched_collective c, uint32_t empty)
{
	uint32_t n = HOSTS;

	sched_init(s, c, "ring", n);
	for (uint32_t t = 0; c == SCHED_ALLREDUCE && t < n - 1; t++) {
		sched_step(s);
		for (uint32_t u = 0; u < n; u++)
			add(s, u, (u + 1) % n, (u + 2 * n - t - 1) % n, true);
	}
	for (uint32_t t = 0; t < n - 1; t++) {
		sched_step(s);
		for (uint32_t u = 0; u < n; u++)
			add(s, u, (u + 1) % n, (u + n - t) % n, false);
		for (uint32_t i = 0; t == 0 && i < empty; i++)
			sched_step(s);
	}
}

static void test_ring_runs(void **state)
{
	static const enum sched_collective cs[] = {SCHED_ALLGATHER, SCHED_ALLREDUCE};
	(void)state;

	for (size_t i = 0; i < 2; i++) {
		struct lo l;
		struct schedule s;
		struct verify_report vr;
		struct exec_result r;
		struct ofc_error err = {0};
		struct exec_opts o = {
		    .size = 64 << 10, .deadline = now_seconds() + 60, .step_times = true};

		lo_init(&l);
		ring(&s, cs[i], 0);
		assert_int_equal(sched_verify(&s, &(struct verify_opts){0}, &vr), 0);
		if (exec_run(&s, &l.net, &o, &r, &err) < 0)
			fail_msg("%s", err.msg);
		assert_true(r.data_ok);
		assert_int_equal(r.bad_elements, 0);
		assert_int_equal(r.checked_elements, HOSTS * (64 << 10) / 4);
		assert_int_equal(r.payload_bytes, s.nxfers * (16 << 10));
		assert_int_equal(r.connections, HOSTS);
		assert_int_equal(r.nsteps, s.nsteps);
		for (uint32_t t = 1; t < s.nsteps; t++)
			assert_true(r.step_end[t] >= r.step_end[t - 1]);
		assert_true(r.step_end[s.nsteps - 1] == r.seconds);
		exec_result_free(&r);
		sched_free(&s);
	}
}

/* A skewed all-to-all (exec_opts.block_weight): each block as
 * long as its weight (0 -> 1 weighs 3, 1 -> 2 a half, 2 -> 3 nothing and
 * is not sent), every element of every block asked for checked, the bytes
 * on the sockets the weights' (a block of weight 1 is 16 KiB of 64 KiB on
 * 4 hosts); a block asked for and not sent is caught. */
static void test_weighted_alltoall(void **state)
{
	struct lo l;
	struct schedule s;
	struct exec_result r;
	struct ofc_error err = {0};
	double w[HOSTS * HOSTS], sum = 0;
	struct exec_opts o = {.size = 64 << 10, .deadline = now_seconds() + 60, .block_weight = w};
	(void)state;

	lo_init(&l);
	for (uint32_t b = 0; b < HOSTS * HOSTS; b++)
		w[b] = b / HOSTS == b % HOSTS ? 0 : 1;
	w[0 * HOSTS + 1] = 3;
	w[1 * HOSTS + 2] = 0.5;
	w[2 * HOSTS + 3] = 0;
	sched_init(&s, SCHED_ALLTOALL, "direct", HOSTS);
	sched_step(&s);
	for (uint32_t u = 0; u < HOSTS; u++)
		for (uint32_t v = 0; v < HOSTS; v++)
			if (w[u * HOSTS + v] > 0) {
				add(&s, u, v, u * HOSTS + v, false);
				sum += w[u * HOSTS + v];
			}
	if (exec_run(&s, &l.net, &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(r.data_ok);
	assert_int_equal(r.checked_elements, (uint64_t)(sum * (16 << 10) / 4));
	assert_int_equal(r.payload_bytes, (uint64_t)(sum * (16 << 10)));
	exec_result_free(&r);
	/* 2 -> 3 asked for, not sent */
	w[2 * HOSTS + 3] = 1;
	lo_init(&l);
	if (exec_run(&s, &l.net, &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(r.data_ok);
	assert_int_equal(r.bad_elements, (16 << 10) / 4);
	exec_result_free(&r);
	sched_free(&s);
}

/* A million empty steps after the all-gather's first: run without a
 * figure per step and host, they cost the run nothing to hold, so a limit
 * 4 MiB over what the process holds lets it through; asked for their
 * times (8 bytes a step), the same limit refuses it with the figure. */
static void test_empty_steps(void **state)
{
	const uint32_t empty = 1000000;
	struct lo l;
	struct schedule s;
	struct exec_result r;
	struct ofc_error err = {0};
	struct exec_opts o = {.size = 64 << 10, .deadline = now_seconds() + 60};
	(void)state;

	lo_init(&l);
	ring(&s, SCHED_ALLGATHER, empty);
	o.max_memory = mem_held() + (4 << 20);
	bool peak = reset_peak();
	uint64_t before = mem_resident();
	if (exec_run(&s, &l.net, &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	/* What the run held, measured: 8 bytes a step for each host would be
	 * 32 MB. */
	if (peak)
		assert_true(peak_rss_bytes() < before + (8 << 20));
	assert_true(r.data_ok);
	assert_int_equal(r.nsteps, HOSTS - 1 + empty);
	assert_null(r.step_end);
	exec_result_free(&r);

	o.step_times = true;
	o.max_memory = mem_held() + (4 << 20);
	assert_int_equal(exec_run(&s, &l.net, &o, &r, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_non_null(strstr(err.msg, "the run (4 hosts, 16 KiB blocks, 1000003 steps, 12 "
					"transfers) needs about "));
	assert_non_null(strstr(err.msg, "over the memory limit of"));
	/* ... and the bound before reading says as much. */
	assert_true(
	    exec_memory_bound(SCHED_ALLGATHER, HOSTS, 0, s.nsteps, s.nxfers, 64 << 10, true) -
		exec_memory_bound(SCHED_ALLGATHER, HOSTS, 0, s.nsteps, s.nxfers, 64 << 10, false) ==
	    (uint64_t)s.nsteps * 8);
	sched_free(&s);
}

static void test_deadline_past(void **state)
{
	struct lo l;
	struct schedule s;
	struct exec_result r;
	struct ofc_error err = {0};
	struct exec_opts o = {.size = 64 << 10, .deadline = now_seconds() - 1};
	(void)state;

	lo_init(&l);
	ring(&s, SCHED_ALLGATHER, 0);
	assert_int_equal(exec_run(&s, &l.net, &o, &r, &err), -1);
	assert_int_equal(err.reason, OFC_R_TIMEOUT);
	assert_string_equal(err.msg, "deadline passed in set-up");
	sched_free(&s);
}

/* The link probe on a ring of one lane a host: every circuit carries
 * data for the window, its latency and rate come back, and the far end
 * is the ring's next host; a window longer than the deadline is stopped
 * by it (the deadline is absolute from the call). */
static void test_probe_window(void **state)
{
	struct lo l;
	uint32_t peer[HOSTS], local[HOSTS], far[HOSTS], n = 0;
	struct exec_probe *pr = NULL;
	struct ofc_error err = {0};
	(void)state;

	lo_init(&l);
	for (uint32_t u = 0; u < HOSTS; u++) {
		peer[u] = (u + 1) % HOSTS;
		local[u] = l.addr[u];
		far[u] = l.addr[peer[u]];
	}
	l.net.lanes = 1;
	l.net.lane_peer = peer;
	l.net.lane_local = local;
	l.net.lane_addr = far;
	if (exec_probe_links(&l.net, 0.2, 30, &pr, &n, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, HOSTS);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(pr[i].peer, (pr[i].host + 1) % HOSTS);
		assert_true(pr[i].ok);
		assert_true(pr[i].bytes > 0);
		assert_true(pr[i].rate > 0);
		assert_true(pr[i].latency > 0);
	}
	free(pr);
	assert_int_equal(exec_probe_links(&l.net, 60, 0.3, &pr, &n, &err), -1);
	assert_int_equal(err.reason, OFC_R_TIMEOUT);
	assert_string_equal(err.msg, "the rate probe did not finish in time");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_runs),	 cmocka_unit_test(test_weighted_alltoall),
	    cmocka_unit_test(test_empty_steps),	 cmocka_unit_test(test_deadline_past),
	    cmocka_unit_test(test_probe_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
