/* Open MPI's ranks reach their launcher's PMIx server by TCP on
 * 127.0.0.1 (PMIx 4 has no other transport); a rank in a testbed host's
 * namespace has a loopback of its own. pmix_relay listens on the same
 * address and port in the host's namespace and carries each connection
 * to the server in the launcher's. */
#ifndef OFC_PMIX_RELAY_H
#define OFC_PMIX_RELAY_H

/* The server's port from PMIX_SERVER_URI4 ("ID;tcp4://127.0.0.1:PORT"),
 * 0 when there is none (not Open MPI's launcher). */
int pmix_relay_port(void);

/* In a child process (gone when its parent, the rank, is): listen on
 * 127.0.0.1:port in the namespace the caller is in now, and relay each
 * connection to 127.0.0.1:port in the namespace of root_fd (an open
 * /proc/self/ns/net of the launcher's). Listening before it returns, so
 * the rank's PMIx finds it. -1 with a message on stderr. */
int pmix_relay_start(int root_fd, int port);

#endif
