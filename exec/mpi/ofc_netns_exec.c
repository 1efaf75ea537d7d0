/* ofc-netns-exec: one rank of an unmodified MPI program on the netns
 * testbed (`ofc testbed mpirun`), started by the MPI's launcher:
 *
 *   mpiexec -n N ofc-netns-exec HOSTS-FILE PROGRAM [ARGS...]
 *
 * The rank (PMI_RANK from MPICH's Hydra, OMPI_COMM_WORLD_RANK from Open
 * MPI) picks its line of HOSTS-FILE, "NETNS DEVICE HOST", enters that
 * host's namespace (netns_enter), sets OFC_HOST to HOST (libofc-mpi
 * matches ranks to the schedule's hosts by it) and LD_PRELOAD to
 * OFC_MPI_PRELOAD when that is set (so that the launcher, which is no MPI
 * program, does not load the library itself), and runs PROGRAM in its
 * place, with Open MPI's PMIx server relayed into the namespace
 * (pmix_relay.h). Exit status 127 when it cannot. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "exec/mpi/netns_enter.h"
#include "exec/mpi/pmix_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *r = getenv("PMI_RANK"), *pre = getenv("OFC_MPI_PRELOAD");
	char host[256];
	int port, root;

	if (!r)
		r = getenv("OMPI_COMM_WORLD_RANK");
	if (argc < 3) {
		fprintf(stderr,
			"usage: mpiexec -n N ofc-netns-exec HOSTS-FILE PROGRAM [ARGS...]\n");
		return 2;
	}
	if (!r) {
		fprintf(stderr, "ofc-netns-exec: no rank in the environment (PMI_RANK, "
				"OMPI_COMM_WORLD_RANK): start me with mpiexec\n");
		return 127;
	}
	/* Open MPI's PMIx server is on the launcher's loopback: relayed. */
	port = pmix_relay_port();
	root = port ? open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC) : -1;
	if (netns_enter("ofc-netns-exec", argv[1], atoi(r), host, sizeof(host)) < 0 ||
	    (port && (root < 0 || pmix_relay_start(root, port) < 0)))
		return 127;
	if (root >= 0)
		close(root);
	if (host[0])
		setenv("OFC_HOST", host, 1);
	if (pre && *pre)
		setenv("LD_PRELOAD", pre, 1);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "ofc-netns-exec: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
