/* libFuzzer: ofcd's control-frame decoder. One daemon runs in-process (a
 * sim switch, sockets in a temporary directory); every input is written
 * as raw bytes on a fresh connection, whatever comes back is read, and a
 * bystander connection must still get its GetState answered. Inputs are
 * cut at 64 KiB: the frame limit is set to 4 KiB so oversized frames are
 * reached too. Inputs go to the read-only socket: a fuzzed ApplyConfig
 * could otherwise name a device address anywhere, and the daemon would
 * dial it (mutations there are refused, after decoding and checking). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "controller/cli/cli.h"
#include "controller/client/client.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"
#include "proto/control.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char cfg[] = "name: fuzzfab\n"
			  "hosts: {count: 16, prefix: h, ports: 2}\n"
			  "switches:\n"
			  "  - {name: ocs0, type: ocs, ports: 32, driver: {type: sim}}\n"
			  "wiring: {pattern: sequential, switches: [ocs0]}\n"
			  "topology: biring:16\n"
			  "collectives:\n"
			  "  - {op: allgather, size: 1MiB}\n";

static struct {
	char dir[64], cfg[128], sock[128], ro[128];
	struct ofcd *d;
	pthread_t th;
	struct ofcd_client bystander;
	uint64_t id;
} F;

static void *run(void *arg)
{
	struct ofc_error err = {0};

	(void)arg;
	ofcd_run(F.d, &err);
	return NULL;
}

/* The temporary directory goes with the process (the daemon thread is
 * still running then; unlinking under it is harmless). */
static void cleanup(void)
{
	char *cmd = xasprintf("rm -rf '%s'", F.dir);

	(void)!system(cmd);
	free(cmd);
}

static void start(void)
{
	struct ofc_error err = {0};
	struct ofcd_opts o = {0};

	snprintf(F.dir, sizeof(F.dir), "/tmp/ofcd-fuzz.XXXXXX");
	if (!mkdtemp(F.dir))
		abort();
	atexit(cleanup);
	snprintf(F.cfg, sizeof(F.cfg), "%s/fab.yaml", F.dir);
	snprintf(F.sock, sizeof(F.sock), "%s/ofcd.sock", F.dir);
	snprintf(F.ro, sizeof(F.ro), "%s/ro.sock", F.dir);
	if (atomic_write(F.cfg, cfg, strlen(cfg), &err) < 0)
		abort();
	o.config_path = F.cfg;
	o.socket_path = F.sock;
	o.ro_socket_path = F.ro;
	o.state_dir = F.dir;
	o.max_frame = 4096;
	o.client_timeout = 5;
	if (ofcd_open(&o, &F.d, &err) < 0 || pthread_create(&F.th, NULL, run, NULL) != 0)
		abort();
	if (ofcd_connect(&F.bystander, F.sock, &err) < 0)
		abort();
	F.bystander.timeout = 10;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {0, 20 * 1000};
	Ofc__V1__Request req = OFC__V1__REQUEST__INIT;
	Ofc__V1__GetState gs = OFC__V1__GET_STATE__INIT;
	Ofc__V1__Response *r;
	struct ofc_error err = {0};
	char buf[4096];
	int fd;

	if (!F.d)
		start();
	if (size > 65536)
		size = 65536;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", F.ro);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		abort(); /* the daemon is gone */
	(void)!send(fd, data, size, MSG_NOSIGNAL);
	/* Read what the daemon answers until it pauses or closes. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	close(fd);
	/* Nobody else noticed. */
	req.body_case = OFC__V1__REQUEST__BODY_GET_STATE;
	req.get_state = &gs;
	req.has_id = 1;
	req.id = ++F.id;
	if (ofcd_call(&F.bystander, &req, &r, &err) < 0 || r->status != OFC__V1__STATUS__STATUS_OK)
		abort();
	ofc__v1__response__free_unpacked(r, NULL);
	return 0;
}
