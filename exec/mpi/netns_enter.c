/* Entering a testbed host's namespace (netns_enter.h). The MPI launcher
 * (Hydra's proxy, Open MPI's mpirun) forks the ranks in the caller's
 * namespace; each enters its host's before MPI starts. The launcher's
 * connection (PMI, PMIx over a Unix socket in the file system) is an
 * inherited descriptor or a path, so it survives the switch; every byte
 * between ranks then goes over the testbed's circuits and routes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "exec/mpi/netns_enter.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define MAX_LINE 512

/* Line `rank` of the hosts file: the namespace, the device, the host. */
static int read_host(const char *who, const char *path, int rank, char *netns, size_t nn, char *dev,
		     size_t nd, char *host, size_t nh)
{
	char line[MAX_LINE];
	FILE *f = fopen(path, "r");
	int at = 0;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char a[256], b[64], c[256] = "";

		if (at++ != rank)
			continue;
		fclose(f);
		if (sscanf(line, "%255s %63s %255s", a, b, c) < 2) {
			fprintf(stderr, "%s: %s:%d: expected 'NETNS DEVICE [HOST]'\n", who, path,
				rank + 1);
			return -1;
		}
		snprintf(netns, nn, "%s", a);
		snprintf(dev, nd, "%s", b);
		snprintf(host, nh, "%s", c);
		return 0;
	}
	fclose(f);
	fprintf(stderr, "%s: %s has no line for rank %d\n", who, path, rank);
	return -1;
}

int netns_enter(const char *who, const char *hosts_file, int rank, char *host, size_t nhost)
{
	char netns[256], dev[64], path[320];
	int fd;

	if (rank < 0 || read_host(who, hosts_file, rank, netns, sizeof(netns), dev, sizeof(dev),
				  host, nhost) < 0)
		return -1;
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "%s: cannot enter %s: %s\n", who, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	/* /sys shows the namespace of whoever mounted it: a private mount of
	 * it here, as `ip netns exec` does. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0 ||
	    umount2("/sys", MNT_DETACH) < 0 || mount(netns, "/sys", "sysfs", 0, NULL) < 0) {
		fprintf(stderr, "%s: cannot mount /sys for %s: %s\n", who, netns, strerror(errno));
		return -1;
	}
	setenv("UCX_NET_DEVICES", dev, 1);
	return 0;
}
