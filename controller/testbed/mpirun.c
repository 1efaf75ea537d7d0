/* An unmodified MPI program on the testbed's hosts and links (`ofc
 * testbed mpirun`): one rank per host namespace, MPICH or Open MPI, with
 * libofc-mpi preloaded (running the schedules the caller wrote for the
 * topology the hosts hold) or not (the MPI's own collectives on the same
 * links); the bytes that crossed the circuits, the library's report and
 * the program's output read back. */
#include "controller/testbed/testbed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/drivers.h"
#include "exec/exec.h"

/* What is read back of the program's output and the report. */
#define MPIRUN_OUTPUT_MAX (1u << 20)
#define MPIRUN_REPORT_MAX (16u << 20)

/* A file's first max bytes (NULL when it cannot be read), and whether it
 * held more. */
static char *slurp(const char *path, size_t max, size_t *len, bool *cut)
{
	struct ofc_error err = {0};
	char *data = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*len = 0;
	*cut = false;
	if (fd < 0)
		return NULL;
	if (read_fd(fd, path, max, &data, len, &err) < 0) {
		/* (over max: the first max bytes, said to be cut) */
		free(data);
		data = xmalloc(max + 1);
		lseek(fd, 0, SEEK_SET);
		ssize_t got = read(fd, data, max);

		*len = got > 0 ? (size_t)got : 0;
		data[*len] = 0;
		*cut = true;
	}
	close(fd);
	return data;
}

int testbed_mpirun(const struct fabric *f, const struct testbed_net *t,
		   const struct testbed_mpirun_opts *o, struct testbed_mpirun_result *r,
		   struct ofc_error *err)
{
	char *report = xasprintf("%s/report.json", o->dir), *out = xasprintf("%s/output", o->dir);
	const char **hosts = xcalloc(t->nhosts, sizeof(char *));
	struct exec_mpirun_opts eo = {.openmpi = o->openmpi,
				      .preload = o->preload,
				      .schedules = o->schedules,
				      .report = report,
				      .device = NETNS_HOST_IFACE,
				      .hosts = hosts,
				      .argv = o->argv,
				      .dir = o->dir,
				      .output = o->capture ? out : NULL,
				      .timeout = o->timeout};
	struct exec_mpirun_result x;
	struct exec_net net;
	double before, after;
	uint32_t h = 0;
	int rc = -1;

	*r = (struct testbed_mpirun_result){.circuit_bytes = -1};
	for (uint32_t k = 0; k < t->nhosts; k++)
		hosts[k] = k < f->nhosts ? f->hosts[k].name : "";
	/* Each host's address on a device of its own, as for the MPI
	 * baseline: UCX and Open MPI's TCP take their address by device. */
	for (; h < t->nhosts; h++)
		if (netns_host_iface(t->netns[h], t->host_addr[h], true, err) < 0)
			break;
	if (h == t->nhosts) {
		testbed_exec_net(t, 0, &net);
		before = testbed_circuit_bytes(t);
		if (exec_mpirun(&net, &eo, &x, err) == 0) {
			after = testbed_circuit_bytes(t);
			r->exit_code = x.exit_code;
			r->timed_out = x.timed_out;
			r->finalize_hung = x.finalize_hung;
			r->circuit_bytes = before >= 0 && after >= 0 ? after - before : -1;
			rc = 0;
		}
	}
	for (uint32_t k = 0; k < t->nhosts; k++)
		netns_host_iface(t->netns[k], t->host_addr[k], false, &(struct ofc_error){0});
	if (rc == 0 && o->preload)
		r->report = slurp(report, MPIRUN_REPORT_MAX, &r->report_len, &(bool){false});
	if (rc == 0 && o->capture)
		r->output = slurp(out, MPIRUN_OUTPUT_MAX, &r->output_len, &r->output_cut);
	unlink(report);
	unlink(out);
	free(report);
	free(out);
	free(hosts);
	return rc;
}

void testbed_mpirun_free(struct testbed_mpirun_result *r)
{
	free(r->report);
	free(r->output);
	r->report = r->output = NULL;
}
