/* Entering a testbed host's network namespace before an MPI rank starts:
 * shared by ofc-mpi-rank (the MPI baseline's rank) and ofc-netns-exec
 * (any program's rank under `ofc testbed mpirun`). */
#ifndef OFC_NETNS_ENTER_H
#define OFC_NETNS_ENTER_H

#include <stddef.h>

/* Line `rank` (0-based) of HOSTS-FILE, "NETNS DEVICE [HOST]": enter
 * /run/netns/NETNS, mount that namespace's /sys privately (UCX and Open
 * MPI find devices under /sys/class/net) and set UCX_NET_DEVICES to
 * DEVICE. HOST (the fabric's name of the host, "" when the line has none)
 * into host. -1 with a message on stderr, prefixed by who. */
int netns_enter(const char *who, const char *hosts_file, int rank, char *host, size_t nhost);

#endif
