/* libFuzzer: the executor (exec_run) on what it reads, over loopback TCP
 * with every host in this namespace on an address of its own: the schedule
 * (decoded from the input as `ofc testbed run --schedule` decodes it) and,
 * when asked, a stray peer that connects to host 0 and sends bytes of the
 * input (a hello that names any host and lane, and data after it).
 *
 * Input: byte 0 flags (bit 0: the stray peer), byte 1 the block size in
 * elements (1..64), bytes 2-9 the stray peer's first 8 bytes (its hello),
 * bytes 10-41 what it sends after, the rest the schedule (2..6 hosts, at
 * most 512 transfers and 256 steps; 4 lanes a host, lane p of host u wired
 * to host u + p + 1).
 *
 * Without the stray peer a schedule is refused as input (OFC_E_INPUT) or
 * runs to the end, and one the verifier accepts leaves every element
 * right: a run that times out is a deadlock, wrong data under a correct
 * schedule a broken executor. With it, the run may fail, but says why,
 * and never outlives its deadline. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "controller/export/export.h"
#include "exec/exec.h"

#define HOSTS_MAX 6
#define LANES	  4
#define HEAD	  42

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct stray {
	uint32_t addr;
	uint16_t port;
	const uint8_t *bytes;
	size_t len;
	atomic_bool stop;
};

/* Connects to host 0 once it listens, sends its bytes and leaves. */
static void *stray_main(void *arg)
{
	struct stray *p = arg;
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons(p->port), .sin_addr.s_addr = htonl(p->addr)};
	double end = now_seconds() + 5;

	while (!atomic_load(&p->stop) && now_seconds() < end) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return NULL;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			(void)!write(fd, p->bytes, p->len);
			close(fd);
			return NULL;
		}
		close(fd);
		usleep(200);
	}
	return NULL;
}

/* A port free on loopback, found once; each input gets addresses of its own
 * (127.A.B.u+1), so that connections left in TIME_WAIT by earlier inputs
 * never meet it. */
static uint16_t the_port(void)
{
	static uint16_t port;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f0f0001u)};
	socklen_t sl = sizeof(sa);
	int fd;

	if (port)
		return port;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
		abort();
	close(fd);
	port = ntohs(sa.sin_port);
	return port;
}

static void run(const struct schedule *s, const uint8_t *data)
{
	static uint32_t turn;
	uint32_t n = s->nodes, addr[HOSTS_MAX], peer[HOSTS_MAX * LANES];
	uint32_t laddr[HOSTS_MAX * LANES], local[HOSTS_MAX * LANES];
	uint32_t base = 0x7f000000u | (16 + turn / 256 % 240) << 16 | (turn % 256) << 8;
	bool stray_on = data[0] & 1;
	struct stray p = {.port = the_port(), .bytes = data + 2, .len = HEAD - 2};
	struct exec_opts o = {.size = (uint64_t)n * 4 * (1 + data[1] % 64),
			      .deadline = now_seconds() + 20,
			      .step_times = true};
	struct exec_net net = {.nhosts = n,
			       .lanes = LANES,
			       .lane_peer = peer,
			       .lane_addr = laddr,
			       .lane_local = local,
			       .host_addr = addr,
			       .tcp_port = p.port};
	struct exec_result r;
	struct ofc_error err = {0};
	struct verify_report vr;
	pthread_t th;
	int rc;

	turn++;
	for (uint32_t u = 0; u < n; u++) {
		addr[u] = base | (u + 1);
		for (uint32_t l = 0; l < LANES; l++) {
			peer[u * LANES + l] = (u + l + 1) % n;
			laddr[u * LANES + l] = base | ((u + l + 1) % n + 1);
			local[u * LANES + l] = addr[u];
		}
	}
	p.addr = addr[0];
	if (stray_on && pthread_create(&th, NULL, stray_main, &p) != 0)
		stray_on = false;
	rc = exec_run(s, &net, &o, &r, &err);
	if (stray_on) {
		atomic_store(&p.stop, true);
		pthread_join(th, NULL);
	}
	if (rc < 0) {
		if (!err.msg[0] || err.reason == OFC_R_TIMEOUT)
			abort();
		/* The machine's, not the executor's: ports in use or exhausted. */
		if (!stray_on && err.code != OFC_E_INPUT && !strstr(err.msg, "connecting to") &&
		    !strstr(err.msg, "listening on port"))
			abort();
		return;
	}
	if (!stray_on && sched_verify(s, &(struct verify_opts){.threads = 1}, &vr) == 0 &&
	    !r.data_ok)
		abort();
	if (r.step_end && r.nsteps && r.step_end[r.nsteps - 1] != r.seconds)
		abort();
	exec_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct schedule_pb f;
	struct schedule s;
	struct ofc_error err = {0};

	if (size < HEAD || size > 1 << 16)
		return 0;
	if (schedule_pb_parse("fuzz.pb", data + HEAD, size - HEAD, NULL, &f, &err) < 0)
		return 0;
	if (f.nodes > HOSTS_MAX || f.nxfers > 512 || f.nsteps > 256 ||
	    schedule_pb_decode(&f, NULL, &s, &err) < 0) {
		schedule_pb_close(&f);
		return 0;
	}
	schedule_pb_close(&f);
	if (sched_block_xfers(&s) <= 2048)
		run(&s, data);
	sched_free(&s);
	return 0;
}
