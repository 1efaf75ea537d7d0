/* Reconfiguration speed: plan, apply and verify 384 cross-connects against
 * build/ocs-emu with zero switching delay (target: under 200 ms), and the
 * per-command overhead of each driver (tl1, patch-panel, mrr, netlink,
 * sim). The emulators run as real processes on loopback; the netlink part
 * needs root and makes its own network namespaces (skipped otherwise).
 *
 *   build/bench/reconfig [REPS]      (BUILD=dir picks the emulators' directory)
 *   build/bench/reconfig dialects [REPS]
 *   build/bench/reconfig netconf [REPS]     (its NETCONF part alone, for perf)
 *
 * `dialects`: 384 cross-connects applied over TL1 in each
 * dialect to ocs-emu on loopback, against the dialect's round-trip floor:
 * its commands (Polatis one a change, Calient two) times the median round
 * trip of one command on the same kind of session (a read of an empty
 * switch: one RTRV, the smallest reply there is); and over NETCONF to
 * netconf-emu (SSH), against its RPCs times the median round trip of the
 * smallest RPC (<lock>, <unlock>: <ok/>), and against its per-command
 * floor: the sum of the round trips of the transaction's own RPCs, byte
 * for byte as the driver sends them, from a client that reads nothing of
 * a reply but its framing (the device's parse, apply and print of the 384
 * pairs are in it, none of the driver's work); and the same changes as
 * per-pair edits of running. Run from the source tree (the demo host key).
 */
#include <errno.h>
#include <libssh/libssh.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/internal.h"
#include "controller/schedule/schedule.h"
#include "controller/testbed/testbed.h"
#include "drivers/internal.h"

struct emu {
	pid_t pid;
	char port[16];
};

static int start_emu(const char *dir, const char *const *argv_tail, struct emu *e)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char *bin = xasprintf("%s/%s", build, argv_tail[0]);
	char *pf = xasprintf("%s/port", dir);
	const char *argv[32];
	int n = 0;

	unlink(pf);
	argv[n++] = bin;
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--port-file";
	argv[n++] = pf;
	for (int i = 1; argv_tail[i] && n < 30; i++)
		argv[n++] = argv_tail[i];
	argv[n] = NULL;
	e->pid = fork();
	if (e->pid == 0) {
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 2000; i++) {
		FILE *f = fopen(pf, "r");

		if (f) {
			bool got = fgets(e->port, sizeof(e->port), f) != NULL;

			fclose(f);
			if (got) {
				e->port[strcspn(e->port, "\n")] = 0;
				free(bin);
				free(pf);
				return 0;
			}
		}
		usleep(1000);
	}
	fprintf(stderr, "reconfig: %s did not start\n", bin);
	free(bin);
	free(pf);
	return -1;
}

static void stop_emu(struct emu *e)
{
	kill(e->pid, SIGTERM);
	waitpid(e->pid, NULL, 0);
}

static struct fabric *fabric_from(const char *dir, const char *text)
{
	char *path = xasprintf("%s/fabric.yaml", dir);
	struct ofc_error err = {0};
	struct fabric *f;

	if (atomic_write(path, text, strlen(text), &err) < 0 || fabric_open(path, &f, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	free(path);
	return f;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One transaction from whatever the device holds to f's target; returns
 * plan + apply + verify seconds, and the driver's command count. */
static double one_apply(struct fabric *f, const char *dir, const char *override, uint32_t *ops,
			uint64_t *cmds, double *apply_s)
{
	const char *ov[] = {override};
	struct ctl_opts o = {.state_dir = dir, .overrides = ov, .noverrides = override ? 1 : 0};
	struct ofc_error err = {0};
	struct ctl_result res;
	struct ctl *c;
	double t0 = now_seconds(), t1;

	if (ctl_open(f, &o, &c, &err) < 0 || ctl_plan(c, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	t1 = now_seconds();
	uint64_t before = c->devs[0].dev.stats.commands;
	double in_driver = c->devs[0].dev.stats.seconds;
	if (ctl_apply(c, 0, &res, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	(void)t1;
	/* Time inside the driver (commands and their replies), without the
	 * journal's and the state file's fsyncs. */
	*apply_s = c->devs[0].dev.stats.seconds - in_driver;
	*ops = res.ops_applied;
	*cmds = c->devs[0].dev.stats.commands - before;
	ctl_close(c);
	return now_seconds() - t0;
}

static void write_cred(const char *dir)
{
	char *p = xasprintf("%s/c.cred", dir);
	struct ofc_error err = {0};

	atomic_write(p, "user: admin\npassword: bench\n", 28, &err);
	free(p);
}

/* 96 hosts x 4 ports wired as torus:8x12 on one 384-port switch: 384
 * cross-connects. */
static char *switch_config(const char *type, const char *driver, double move)
{
	return xasprintf("name: bench\nhosts: {count: 96, prefix: h, ports: 4}\n"
			 "switches:\n  - name: sw0\n    type: %s\n    ports: 384\n%s"
			 "    driver: {type: %s, address: 127.0.0.1:1, credentials: c.cred, "
			 "timeout: 5s}\n"
			 "wiring: {pattern: sequential, switches: [sw0]}\ntopology: torus:8x12\n",
			 type, move > 0 ? "    move_time: 0s\n" : "    reconfig_time: 0s\n",
			 driver);
}

static void bench_switch(const char *dir, const char *type, const char *driver, int reps,
			 bool headline)
{
	char *text = switch_config(type, driver, strcmp(type, "patch-panel") == 0 ? 1 : 0);
	struct fabric *f = fabric_from(dir, text);
	double *total = xcalloc((size_t)reps, sizeof(double));
	double *app = xcalloc((size_t)reps, sizeof(double));
	uint32_t ops = 0;
	uint64_t cmds = 0;

	for (int r = 0; r < reps; r++) {
		const char *argv[] = {"ocs-emu", "--ports", "384", "--delay-ms", "0", NULL};
		struct emu e;
		char *ov;
		char *st = xasprintf("%s/st%d-%s", dir, r, driver);

		if (start_emu(dir, argv, &e) < 0)
			exit(1);
		ov = xasprintf("sw0=127.0.0.1:%s", e.port);
		total[r] = one_apply(f, st, ov, &ops, &cmds, &app[r]);
		stop_emu(&e);
		free(ov);
		free(st);
	}
	qsort(total, (size_t)reps, sizeof(double), cmp_double);
	qsort(app, (size_t)reps, sizeof(double), cmp_double);
	if (headline)
		printf(
		    "plan+apply+verify %u cross-connects (tl1, ocs-emu, delay 0): median %.1f ms, "
		    "min %.1f ms, max %.1f ms over %d runs (target < 200 ms)\n",
		    ops, total[reps / 2] * 1e3, total[0] * 1e3, total[reps - 1] * 1e3, reps);
	printf("  %-12s %6.1f us/command (apply: %u changes + read-back = %llu commands, median "
	       "%.2f ms)\n",
	       driver, app[reps / 2] * 1e6 / (double)cmds, ops, (unsigned long long)cmds,
	       app[reps / 2] * 1e3);
	free(total);
	free(app);
	fabric_free(f);
	free(text);
}

static void bench_mrr(const char *dir, int reps)
{
	/* 64 nodes, 16 wavelengths: 64 lightpaths n_i -> n_{i+1}, wavelength
	 * i mod 16 = 128 MRR tunings. */
	struct strbuf sb = STRBUF_INIT;
	double *app = xcalloc((size_t)reps, sizeof(double));
	uint32_t ops = 0;
	uint64_t cmds = 0;

	sb_puts(&sb, "name: bench\nhosts: {count: 64, prefix: n}\nrings:\n  - name: ring0\n"
		     "    nodes: all\n    wavelengths: 16\n    rate_per_wavelength: 40Gbps\n"
		     "    mrr_tuning_delay: 0s\n"
		     "    driver: {type: mrr, address: 127.0.0.1:1, timeout: 5s}\n"
		     "    lightpaths:\n");
	for (int i = 0; i < 64; i++)
		sb_printf(&sb, "      - {from: n%d, to: n%d, wavelength: %d}\n", i, (i + 1) % 64,
			  i % 16);
	struct fabric *f = fabric_from(dir, sb.buf);
	for (int r = 0; r < reps; r++) {
		const char *argv[] = {"mrr-emu", "--nodes",    "64", "--wavelengths",
				      "16",	 "--delay-us", "0",  NULL};
		struct emu e;
		double a;
		char *st = xasprintf("%s/mst%d", dir, r), *ov;

		if (start_emu(dir, argv, &e) < 0)
			exit(1);
		ov = xasprintf("ring0=127.0.0.1:%s", e.port);
		one_apply(f, st, ov, &ops, &cmds, &a);
		app[r] = a;
		stop_emu(&e);
		free(ov);
		free(st);
	}
	qsort(app, (size_t)reps, sizeof(double), cmp_double);
	printf("  %-12s %6.1f us/command (apply: %u tunings + read-back = %llu requests, median "
	       "%.2f ms)\n",
	       "mrr", app[reps / 2] * 1e6 / (double)cmds, ops, (unsigned long long)cmds,
	       app[reps / 2] * 1e3);
	free(app);
	fabric_free(f);
	sb_free(&sb);
}

static void bench_sim(const char *dir, int reps)
{
	char *text =
	    xasprintf("name: bench\nhosts: {count: 96, prefix: h, ports: 4}\n"
		      "switches:\n  - {name: sw0, type: ocs, ports: 384, driver: {type: sim}}\n"
		      "wiring: {pattern: sequential, switches: [sw0]}\ntopology: torus:8x12\n");
	struct fabric *f = fabric_from(dir, text);
	double *app = xcalloc((size_t)reps, sizeof(double));
	uint32_t ops = 0;
	uint64_t cmds = 0;

	for (int r = 0; r < reps; r++) {
		char *st = xasprintf("%s/sst%d", dir, r);

		one_apply(f, st, NULL, &ops, &cmds, &app[r]);
		free(st);
	}
	qsort(app, (size_t)reps, sizeof(double), cmp_double);
	printf("  %-12s %6.1f us/command (in process; its state file is rewritten after the "
	       "batch; %llu commands, median %.2f ms)\n",
	       "sim", app[reps / 2] * 1e6 / (double)cmds, (unsigned long long)cmds,
	       app[reps / 2] * 1e3);
	free(app);
	fabric_free(f);
	free(text);
}

/* netlink: a 16-host testbed (torus:4x4) brought to its target from
 * nothing: 64 veth circuits (create, address, raise both ends) and 240
 * routes. */
static void bench_netlink(void)
{
	const uint32_t n = 16, ports = 4;
	char *names[16];
	struct device dev;
	struct device_state cur, want;
	struct op_batch b = {0};
	struct ofc_error err = {0};
	uint32_t done;
	struct graph *g;
	struct port_map pm;
	struct hlink links[64];
	uint32_t nl = 0;

	if (geteuid() != 0) {
		printf("  %-12s skipped: needs root for network namespaces\n", "netlink");
		return;
	}
	topo_build("torus:4x4", &g, &err);
	topo_ports(g, &pm, &err);
	for (uint32_t j = 0; j < pm.d; j++)
		for (uint32_t u = 0; u < n; u++)
			links[nl++] = (struct hlink){u, j, pm.to[(size_t)j * n + u], j};
	for (uint32_t h = 0; h < n; h++) {
		names[h] = xasprintf("ofc-bench%d-h%u", (int)getpid(), h);
		if (netns_create(names[h], netlink_host_addr(h), &err) < 0) {
			printf("  %-12s skipped: %s\n", "netlink", err.msg);
			for (uint32_t k = 0; k < h; k++)
				netns_delete(names[k], &err);
			return;
		}
	}
	/* testbed_target needs a fabric only for its host count. */
	struct fabric fake = {.nhosts = n};
	testbed_target(&fake, links, nl, &want);
	struct device_cfg cfg = {.name = "testbed",
				 .driver = "netlink",
				 .cls = DEV_HOSTS,
				 .timeout = 5,
				 .netns = (const char *const *)names,
				 .nhosts = n,
				 .host_ports = ports};
	device_init(&dev, &cfg, &err);
	device_read(&dev, &cur, &err);
	state_diff(&cur, &want, &b);
	uint32_t nlink = 0;
	for (uint32_t i = 0; i < b.n; i++)
		nlink += b.ops[i].kind == OP_LINK_ADD;
	struct op_batch links_only = {.ops = b.ops, .n = nlink};
	struct op_batch routes_only = {.ops = b.ops + nlink, .n = b.n - nlink};
	double t0 = now_seconds();
	int rc = device_apply(&dev, &links_only, &done, &err);
	double t1 = now_seconds();
	if (rc == 0)
		rc = device_apply(&dev, &routes_only, &done, &err);
	double t2 = now_seconds();
	state_free(&cur);
	if (rc == 0)
		rc = device_read(&dev, &cur, &err);
	double t3 = now_seconds();
	if (rc == 0 && state_equal(&cur, &want))
		printf(
		    "  %-12s %6.1f us/circuit (veth pair across namespaces, 2 addresses, 2 links "
		    "up), %.1f us/route, read-back of 16 hosts %.2f ms\n",
		    "netlink", (t1 - t0) * 1e6 / nlink, (t2 - t1) * 1e6 / routes_only.n,
		    (t3 - t2) * 1e3);
	else
		printf("  %-12s failed: %s\n", "netlink", err.msg);
	device_close(&dev);
	for (uint32_t h = 0; h < n; h++) {
		netns_delete(names[h], &err);
		free(names[h]);
	}
	state_free(&cur);
	state_free(&want);
	batch_free(&b);
	port_map_free(&pm);
	graph_free(g);
}

/* The median seconds of one command on a fresh session of dialect to the
 * emulator at port: n reads of an empty switch, one RTRV each. */
static double tl1_round_trip(const char *dir, const char *dialect, const char *port, int n)
{
	char *addr = xasprintf("127.0.0.1:%s", port), *cred = xasprintf("%s/c.cred", dir);
	struct device_cfg cfg = {.name = "sw0",
				 .driver = "tl1",
				 .dialect = dialect,
				 .port_map = TL1_PORT_MAP_DEFAULT,
				 .address = addr,
				 .credentials = cred,
				 .timeout = 5,
				 .cls = DEV_SWITCH,
				 .ports = 384};
	struct ofc_error err = {0};
	struct device dev;
	struct device_state st;
	double *t = xcalloc((size_t)n, sizeof(double)), med;

	state_init(&st, DEV_SWITCH);
	if (device_init(&dev, &cfg, &err) < 0 || device_read(&dev, &st, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		double t0 = now_seconds();

		state_clear(&st);
		if (device_read(&dev, &st, &err) < 0) {
			fprintf(stderr, "reconfig: %s\n", err.msg);
			exit(1);
		}
		t[i] = now_seconds() - t0;
	}
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	med = t[n / 2];
	device_close(&dev);
	state_free(&st);
	free(t);
	free(addr);
	free(cred);
	return med;
}

static void bench_dialects(const char *dir, int reps)
{
	static const char *const dialects[] = {"polatis", "calient"};

	printf("384 cross-connects over TL1 to ocs-emu (delay 0, loopback), median of %d runs:\n",
	       reps);
	for (size_t d = 0; d < ARRAY_SIZE(dialects); d++) {
		char *text = xasprintf(
		    "name: bench\nhosts: {count: 96, prefix: h, ports: 4}\n"
		    "switches:\n  - name: sw0\n    type: ocs\n    ports: 384\n"
		    "    reconfig_time: 0s\n"
		    "    driver: {type: tl1, dialect: %s, address: 127.0.0.1:1, "
		    "credentials: c.cred, timeout: 5s}\n"
		    "wiring: {pattern: sequential, switches: [sw0]}\ntopology: torus:8x12\n",
		    dialects[d]);
		struct fabric *f = fabric_from(dir, text);
		double *app = xcalloc((size_t)reps, sizeof(double));
		double *rtt = xcalloc((size_t)reps, sizeof(double));
		uint32_t ops = 0;
		uint64_t cmds = 0;

		for (int r = 0; r < reps; r++) {
			const char *argv[] = {"ocs-emu", "--ports",   "384",	   "--delay-ms",
					      "0",	 "--dialect", dialects[d], NULL};
			struct emu e;
			char *st = xasprintf("%s/dst%d-%s", dir, r, dialects[d]);
			char *ov;

			if (start_emu(dir, argv, &e) < 0)
				exit(1);
			rtt[r] = tl1_round_trip(dir, dialects[d], e.port, 400);
			ov = xasprintf("sw0=127.0.0.1:%s", e.port);
			one_apply(f, st, ov, &ops, &cmds, &app[r]);
			stop_emu(&e);
			free(ov);
			free(st);
		}
		qsort(app, (size_t)reps, sizeof(double), cmp_double);
		qsort(rtt, (size_t)reps, sizeof(double), cmp_double);
		double floor_s = (double)cmds * rtt[reps / 2];
		printf("  %-8s %u changes, %llu commands: apply %.2f ms; round trip %.1f us, floor "
		       "%.2f ms; ratio %.2f\n",
		       dialects[d], ops, (unsigned long long)cmds, app[reps / 2] * 1e3,
		       rtt[reps / 2] * 1e6, floor_s * 1e3, app[reps / 2] / floor_s);
		free(app);
		free(rtt);
		fabric_free(f);
		free(text);
	}
}

/* netconf-emu for 384 ports on loopback (SSH, the demo host key, the
 * bench's login; with unix, its Unix socket too); its known-hosts line
 * goes to DIR/kh. */
static int start_netconf(const char *dir, const char *unix_sock, struct emu *e)
{
	char *cred = xasprintf("%s/c.cred", dir), *kh = xasprintf("%s/kh", dir);
	const char *argv[] = {"netconf-emu",
			      "--ports",
			      "384",
			      "--delay-ms",
			      "0",
			      "--host-key",
			      "configs/credentials/netconf-emu-host.key",
			      "--credentials",
			      cred,
			      "--known-hosts",
			      kh,
			      unix_sock ? "--unix" : NULL,
			      unix_sock,
			      NULL};
	int rc = start_emu(dir, argv, e);

	free(cred);
	free(kh);
	return rc;
}

static struct device_cfg netconf_cfg(const char *dir, const char *addr, const char *datastore)
{
	return (struct device_cfg){.name = "sw0",
				   .driver = "netconf",
				   .address = addr,
				   .credentials = xasprintf("%s/c.cred", dir),
				   .known_hosts = xasprintf("%s/kh", dir),
				   .datastore = datastore,
				   .timeout = 10,
				   .retries = 0,
				   .cls = DEV_SWITCH,
				   .ports = 384};
}

/* The median seconds of one RPC with the smallest reply there is (<ok/>) on
 * an open session: n rounds of the transaction's lock and unlock of
 * running (datastore: running, so that each is one RPC and one round
 * trip: with the candidate the driver sends two locks at once). */
static double nc_round_trip(const char *dir, const char *port, int n)
{
	char *addr = xasprintf("127.0.0.1:%s", port);
	struct device_cfg cfg = netconf_cfg(dir, addr, "running");
	struct ofc_error err = {0};
	struct device dev;
	double *t = xcalloc((size_t)n, sizeof(double)), med;
	bool held;

	if (device_init(&dev, &cfg, &err) < 0 || device_lock(&dev, &held, &err) < 0 ||
	    device_unlock(&dev, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		uint64_t c0 = dev.stats.commands;
		double t0 = now_seconds();

		if (device_lock(&dev, &held, &err) < 0 || device_unlock(&dev, &err) < 0) {
			fprintf(stderr, "reconfig: %s\n", err.msg);
			exit(1);
		}
		t[i] = (now_seconds() - t0) / (double)(dev.stats.commands - c0);
	}
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	med = t[n / 2];
	device_close(&dev);
	free(t);
	free(addr);
	free((char *)cfg.credentials);
	free((char *)cfg.known_hosts);
	return med;
}

/* The same 384 changes as per-pair edits of running (an <edit-config> each,
 * what a driver without batches would send): seconds inside the driver. */
static double nc_per_pair(const char *dir, const struct fabric *f, const char *port, uint64_t *rpcs)
{
	char *addr = xasprintf("127.0.0.1:%s", port);
	struct device_cfg cfg = netconf_cfg(dir, addr, "running");
	struct ofc_error err = {0};
	struct device dev;
	struct device_state cur, want;
	struct op_batch b = {0};
	uint32_t done;
	double t0;

	state_init(&want, DEV_SWITCH);
	ctl_switch_target(f, 0, &want);
	if (device_init(&dev, &cfg, &err) < 0 || device_read(&dev, &cur, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	state_diff(&cur, &want, &b);
	uint64_t c0 = dev.stats.commands;
	t0 = now_seconds();
	for (uint32_t i = 0; i < b.n; i++) {
		struct op_batch one = {.ops = &b.ops[i], .n = 1};

		if (device_apply(&dev, &one, &done, &err) < 0) {
			fprintf(stderr, "reconfig: %s\n", err.msg);
			exit(1);
		}
	}
	double s = now_seconds() - t0;
	*rpcs = dev.stats.commands - c0;
	state_free(&cur);
	if (device_read(&dev, &cur, &err) < 0 || !state_equal(&cur, &want)) {
		fprintf(stderr, "reconfig: per-pair edits did not reach the target\n");
		exit(1);
	}
	device_close(&dev);
	state_free(&cur);
	state_free(&want);
	batch_free(&b);
	free(addr);
	free((char *)cfg.credentials);
	free((char *)cfg.known_hosts);
	return s;
}

/* ---- NETCONF: the per-command floor ------------------------------------------- */

/* The transaction's RPCs as the driver sends them are recorded once (the
 * driver over a Unix socket through recorder below, to netconf-emu's
 * --unix), then sent byte for byte over SSH to a fresh netconf-emu by a
 * client that waits for each reply and reads nothing of it but its
 * framing (libssh's channel, no libnetconf2, no relay): each RPC's round
 * trip with the device's own parse, apply and print and the transfer in
 * it, and none of the driver's. */

#define REC_MAX (8u << 20)

struct recorder {
	int lfd;
	char *emu_path;
	struct strbuf up; /* what the driver sent */
	pthread_t tid;
};

static void *rec_main(void *arg)
{
	struct recorder *r = arg;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	double deadline = now_seconds() + 60;
	char buf[65536];
	int c = -1, d = -1;
	struct pollfd p[2];

	if (poll(&(struct pollfd){.fd = r->lfd, .events = POLLIN}, 1, 30000) != 1 ||
	    (c = accept(r->lfd, NULL, NULL)) < 0)
		return NULL;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", r->emu_path);
	d = socket(AF_UNIX, SOCK_STREAM, 0);
	if (d < 0 || connect(d, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto out;
	p[0] = (struct pollfd){.fd = c, .events = POLLIN};
	p[1] = (struct pollfd){.fd = d, .events = POLLIN};
	while (now_seconds() < deadline && poll(p, 2, 1000) >= 0) {
		for (int i = 0; i < 2; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));

			if (n <= 0 || fd_write_all(p[1 - i].fd, buf, (size_t)n, deadline,
						   &(struct ofc_error){0}) < 0)
				goto out;
			if (i == 0 && r->up.len + (size_t)n <= REC_MAX)
				sb_add(&r->up, buf, (size_t)n);
		}
	}
out:
	if (c >= 0)
		close(c);
	if (d >= 0)
		close(d);
	return NULL;
}

/* Length of the chunk-framed message (RFC 6242 4.2) at the start of b, its
 * content appended to text when given; 0 while it has not all come, -1 if
 * it is not framed so. */
static long chunked_len(const char *b, size_t n, struct strbuf *text)
{
	size_t i = 0;

	for (;;) {
		uint64_t len = 0;
		size_t j;

		if (n - i < 4)
			return 0;
		if (b[i] != '\n' || b[i + 1] != '#')
			return -1;
		if (b[i + 2] == '#')
			return b[i + 3] == '\n' ? (long)(i + 4) : -1;
		for (j = i + 2; j < n && b[j] >= '0' && b[j] <= '9' && j - i < 12; j++)
			len = len * 10 + (uint64_t)(b[j] - '0');
		if (j == n)
			return 0;
		if (b[j] != '\n' || len == 0 || len > REC_MAX)
			return -1;
		if (n - j - 1 < len)
			return 0;
		if (text)
			sb_add(text, b + j + 1, len);
		i = j + 1 + len;
	}
}

struct nc_msgs {
	uint32_t n;
	const char *raw[64]; /* framed, as sent */
	size_t len[64];
	char *text[64]; /* the content */
};

/* The driver's stream: its hello (ended by ]]>]]>), then chunked messages. */
static int split_msgs(const struct strbuf *up, struct nc_msgs *m)
{
	const char *end = memmem(up->buf, up->len, "]]>]]>", 6);
	size_t at;

	memset(m, 0, sizeof(*m));
	if (!end)
		return -1;
	at = (size_t)(end - up->buf) + 6;
	m->raw[0] = up->buf;
	m->len[0] = at;
	m->text[0] = xstrdup("hello");
	for (m->n = 1; at < up->len && m->n < 64; m->n++) {
		struct strbuf t = STRBUF_INIT;
		long l = chunked_len(up->buf + at, up->len - at, &t);

		if (l <= 0) {
			sb_free(&t);
			return -1;
		}
		m->raw[m->n] = up->buf + at;
		m->len[m->n] = (size_t)l;
		m->text[m->n] = sb_detach(&t);
		at += (size_t)l;
	}
	return at == up->len ? 0 : -1;
}

/* The first element inside <rpc>: "lock", "edit-config", ... */
static void rpc_name(const char *text, char *out, size_t n)
{
	const char *p = strstr(text, "<rpc");

	p = p ? strchr(p, '>') : NULL;
	if (p)
		p = strchr(p, '<');
	snprintf(out, n, "%.*s", p ? (int)strcspn(p + 1, " />") : 1, p ? p + 1 : "?");
}

/* The transaction's RPCs: from the first <lock> to the last <unlock>. */
static int tx_range(const struct nc_msgs *m, uint32_t *first, uint32_t *last)
{
	char name[32];

	*first = *last = 0;
	for (uint32_t i = 1; i < m->n; i++) {
		rpc_name(m->text[i], name, sizeof(name));
		if (!*first && strcmp(name, "lock") == 0)
			*first = i;
		if (strcmp(name, "unlock") == 0)
			*last = i;
	}
	return *first && *last > *first ? 0 : -1;
}

/* Record the driver's transaction (the same config, a fresh netconf-emu
 * over its Unix socket). */
static void nc_record(const char *dir, struct fabric *f, struct strbuf *up)
{
	char *sock = xasprintf("%s/emu.sock", dir), *rec = xasprintf("%s/rec.sock", dir);
	char *st = xasprintf("%s/nrec", dir), *ov = xasprintf("sw0=unix:%s", rec);
	struct recorder r = {.emu_path = sock, .up = STRBUF_INIT};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct emu e;
	uint32_t ops;
	uint64_t cmds;
	double s;

	unlink(sock);
	unlink(rec);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", rec);
	r.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (r.lfd < 0 || bind(r.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(r.lfd, 1) < 0 || start_netconf(dir, sock, &e) < 0 ||
	    pthread_create(&r.tid, NULL, rec_main, &r) != 0) {
		fprintf(stderr, "reconfig: cannot record the NETCONF transaction\n");
		exit(1);
	}
	one_apply(f, st, ov, &ops, &cmds, &s);
	pthread_join(r.tid, NULL);
	stop_emu(&e);
	close(r.lfd);
	*up = r.up;
	free(sock);
	free(rec);
	free(st);
	free(ov);
}

struct raw_nc {
	ssh_session ssh;
	ssh_channel ch;
	char *buf;
	size_t len, cap;
};

/* Read until buf holds a whole message (hello: ]]>]]>; else chunked); its
 * length, or -1. */
static long raw_read(struct raw_nc *c, bool hello, double deadline)
{
	for (;;) {
		long l;

		if (hello) {
			const char *e = c->len ? memmem(c->buf, c->len, "]]>]]>", 6) : NULL;

			l = e ? (long)(e - c->buf) + 6 : 0;
		} else {
			l = chunked_len(c->buf, c->len, NULL);
		}
		if (l != 0)
			return l;
		if (c->cap - c->len < 65536) {
			if (c->cap >= REC_MAX)
				return -1;
			c->cap = c->cap ? 2 * c->cap : 1u << 20;
			c->buf = xrealloc(c->buf, c->cap);
		}
		int ms = (int)((deadline - now_seconds()) * 1000);
		int n = ms > 0 ? ssh_channel_read_timeout(c->ch, c->buf + c->len,
							  (uint32_t)(c->cap - c->len), 0, ms)
			       : -1;
		if (n <= 0)
			return -1;
		c->len += (size_t)n;
	}
}

static void raw_take(struct raw_nc *c, size_t l)
{
	memmove(c->buf, c->buf + l, c->len - l);
	c->len -= l;
}

/* One message sent and its reply read: seconds (the reply's bytes in
 * *got when given), or exit. */
static double raw_rpc(struct raw_nc *c, const char *raw, size_t len, size_t *got)
{
	double t0 = now_seconds();
	long l;

	if (ssh_channel_write(c->ch, raw, (uint32_t)len) != (int)len ||
	    (l = raw_read(c, false, t0 + 10)) < 0) {
		fprintf(stderr, "reconfig: the raw NETCONF client lost its session\n");
		exit(1);
	}
	raw_take(c, (size_t)l);
	if (got)
		*got = (size_t)l;
	return now_seconds() - t0;
}

/* The recorded transaction to a fresh netconf-emu over SSH: each RPC's
 * seconds in t[] and its reply's bytes in got[], and the median of n more
 * <lock>/<unlock> in *ok. */
static void nc_replay(const char *dir, const struct nc_msgs *m, uint32_t first, uint32_t last,
		      double *t, size_t *got, double *ok, int n)
{
	char *kh = xasprintf("%s/kh", dir), *cpath = xasprintf("%s/c.cred", dir);
	struct ofc_error err = {0};
	struct credentials cred;
	struct raw_nc c = {0};
	double *s = xcalloc((size_t)n, sizeof(double));
	void *ssh, *ch;
	struct emu e;
	long l;

	if (start_netconf(dir, NULL, &e) < 0 || credentials_load(cpath, NULL, &cred, &err) < 0 ||
	    netconf_ssh_open("127.0.0.1", (unsigned)atoi(e.port), kh, &cred, NULL,
			     now_seconds() + 10, &ssh, &ch, &err) < 0) {
		fprintf(stderr, "reconfig: %s\n", err.msg);
		exit(1);
	}
	c.ssh = ssh;
	c.ch = ch;
	if ((l = raw_read(&c, true, now_seconds() + 10)) < 0 ||
	    ssh_channel_write(c.ch, m->raw[0], (uint32_t)m->len[0]) != (int)m->len[0]) {
		fprintf(stderr, "reconfig: no NETCONF hello from netconf-emu\n");
		exit(1);
	}
	raw_take(&c, (size_t)l);
	for (uint32_t i = first; i <= last; i++)
		t[i - first] = raw_rpc(&c, m->raw[i], m->len[i], &got[i - first]);
	for (int i = 0; i < n; i++)
		s[i] = (raw_rpc(&c, m->raw[first], m->len[first], NULL) +
			raw_rpc(&c, m->raw[last], m->len[last], NULL)) /
		       2;
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	*ok = s[n / 2];
	ssh_channel_close(c.ch);
	ssh_channel_free(c.ch);
	ssh_disconnect(c.ssh);
	ssh_free(c.ssh);
	stop_emu(&e);
	credentials_wipe(&cred);
	free(c.buf);
	free(s);
	free(kh);
	free(cpath);
}

/* NETCONF: the same 384 cross-connects to netconf-emu over SSH,
 * one transaction (locks, a read under them, the candidate edited once
 * and committed, the read-back), against two floors: its RPCs times the
 * median round trip of the smallest RPC (<lock>, <unlock>: <ok/>), and
 * the sum of its own RPCs' round trips, byte for byte, from the raw
 * client above; and per-pair edits of running. */
static void bench_netconf(const char *dir, int reps)
{
	char *text =
	    xasprintf("name: bench\nhosts: {count: 96, prefix: h, ports: 4}\n"
		      "switches:\n  - name: sw0\n    type: ocs\n    ports: 384\n"
		      "    reconfig_time: 0s\n"
		      "    driver: {type: netconf, address: 127.0.0.1:1, "
		      "credentials: c.cred, known_hosts: kh, timeout: 10s, retries: 0}\n"
		      "wiring: {pattern: sequential, switches: [sw0]}\ntopology: torus:8x12\n");
	double *app = xcalloc((size_t)reps, sizeof(double));
	double *rtt = xcalloc((size_t)reps, sizeof(double));
	double *pp = xcalloc((size_t)reps, sizeof(double));
	double *raw = xcalloc((size_t)reps, sizeof(double));
	double *rawok = xcalloc((size_t)reps, sizeof(double));
	double *per = xcalloc((size_t)reps * 64, sizeof(double)), *col;
	size_t got[64] = {0};
	char *kh = xasprintf("%s/kh", dir);
	struct ofc_error err = {0};
	struct strbuf up = STRBUF_INIT;
	struct nc_msgs m;
	uint32_t ops = 0, first, last, ntx;
	uint64_t cmds = 0, pp_rpcs = 0;
	struct fabric *f;

	atomic_write(kh, "", 0, &err); /* validation wants the file; netconf-emu fills it */
	f = fabric_from(dir, text);
	nc_record(dir, f, &up);
	if (split_msgs(&up, &m) < 0 || tx_range(&m, &first, &last) < 0) {
		fprintf(stderr, "reconfig: the recorded NETCONF stream is not a transaction\n");
		exit(1);
	}
	ntx = last - first + 1;
	for (int r = 0; r < reps; r++) {
		struct emu e;
		char *st = xasprintf("%s/nst%d", dir, r);
		char *ov;

		if (start_netconf(dir, NULL, &e) < 0)
			exit(1);
		rtt[r] = nc_round_trip(dir, e.port, 200);
		ov = xasprintf("sw0=127.0.0.1:%s", e.port);
		one_apply(f, st, ov, &ops, &cmds, &app[r]);
		stop_emu(&e);
		nc_replay(dir, &m, first, last, &per[(size_t)r * 64], got, &rawok[r], 100);
		for (uint32_t k = 0; k < ntx; k++)
			raw[r] += per[(size_t)r * 64 + k];
		if (start_netconf(dir, NULL, &e) < 0)
			exit(1);
		pp[r] = nc_per_pair(dir, f, e.port, &pp_rpcs);
		stop_emu(&e);
		free(ov);
		free(st);
	}
	if (cmds != ntx) {
		fprintf(stderr,
			"reconfig: the recorded transaction has %u RPCs, the measured %llu\n", ntx,
			(unsigned long long)cmds);
		exit(1);
	}
	qsort(app, (size_t)reps, sizeof(double), cmp_double);
	qsort(rtt, (size_t)reps, sizeof(double), cmp_double);
	qsort(pp, (size_t)reps, sizeof(double), cmp_double);
	qsort(raw, (size_t)reps, sizeof(double), cmp_double);
	qsort(rawok, (size_t)reps, sizeof(double), cmp_double);
	double floor_s = (double)cmds * rtt[reps / 2];
	printf("  %-8s %u changes, %llu RPCs: apply %.2f ms; round trip %.1f us, floor %.2f ms; "
	       "ratio %.2f\n",
	       "netconf", ops, (unsigned long long)cmds, app[reps / 2] * 1e3, rtt[reps / 2] * 1e6,
	       floor_s * 1e3, app[reps / 2] / floor_s);
	printf("  %-8s per-command floor (the same RPCs, byte for byte, raw client): %.2f ms; "
	       "ratio %.2f\n",
	       "netconf", raw[reps / 2] * 1e3, app[reps / 2] / raw[reps / 2]);
	col = xcalloc((size_t)reps, sizeof(double));
	printf("  %-8s   each (sent/reply, median round trip):", "netconf");
	for (uint32_t k = 0; k < ntx; k++) {
		char name[32];

		for (int r = 0; r < reps; r++)
			col[r] = per[(size_t)r * 64 + k];
		qsort(col, (size_t)reps, sizeof(double), cmp_double);
		rpc_name(m.text[first + k], name, sizeof(name));
		printf(" %s %.1fK/%.1fK %.0f us%s", name, (double)m.len[first + k] / 1024,
		       (double)got[k] / 1024, col[reps / 2] * 1e6, k + 1 < ntx ? ";" : "\n");
	}
	printf("  %-8s   raw client's <lock>/<unlock> round trip %.1f us (the driver's %.1f us)\n",
	       "netconf", rawok[reps / 2] * 1e6, rtt[reps / 2] * 1e6);
	printf("  %-8s per-pair edits of running: %llu RPCs, %.2f ms (%.1fx the transaction)\n",
	       "netconf", (unsigned long long)pp_rpcs, pp[reps / 2] * 1e3,
	       pp[reps / 2] / app[reps / 2]);
	for (uint32_t k = 0; k < m.n; k++)
		free(m.text[k]);
	sb_free(&up);
	free(col);
	free(per);
	free(raw);
	free(rawok);
	free(app);
	free(rtt);
	free(pp);
	free(kh);
	fabric_free(f);
	free(text);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/ofc-bench.XXXXXX";
	bool dialects = argc > 1 && strcmp(argv[1], "dialects") == 0;
	bool netconf = argc > 1 && strcmp(argv[1], "netconf") == 0; /* its part alone (perf) */
	int reps = argc > 1 + (dialects || netconf) ? atoi(argv[1 + (dialects || netconf)]) : 7;

	if (reps < 1 || reps > 1000)
		reps = 7;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	write_cred(dir);
	if (dialects || netconf) {
		if (dialects)
			bench_dialects(dir, reps);
		bench_netconf(dir, reps);
		char *cmd = xasprintf("rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "reconfig: could not remove %s\n", dir);
		free(cmd);
		return 0;
	}
	printf("reconfiguration (%d runs each; state directory in %s)\n", reps, dir);
	bench_switch(dir, "ocs", "tl1", reps, true);
	printf("per-command overhead of each driver (zero device delay, loopback):\n");
	bench_switch(dir, "ocs", "tl1", reps, false);
	bench_switch(dir, "patch-panel", "patch-panel", reps, false);
	bench_mrr(dir, reps);
	bench_sim(dir, reps);
	bench_netlink();
	char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "reconfig: could not remove %s\n", dir);
	free(cmd);
	return 0;
}
