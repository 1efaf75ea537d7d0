/* The testbed as the executor sees it: what ofc testbed up, check and run
 * share (cmd_testbed.c, cmd_run.c). */
#include "controller/cli/internal.h"

#include "exec/exec.h"

/* The exec/ view of a testbed (borrows t's arrays). */
void testbed_exec_net(const struct testbed_net *t, uint16_t port, struct exec_net *net)
{
	*net = (struct exec_net){.nhosts = t->nhosts,
				 .netns = (const char *const *)t->netns,
				 .lanes = t->ports,
				 .lane_peer = t->peer,
				 .lane_addr = t->peer_addr,
				 .lane_local = t->local_addr,
				 .host_addr = t->host_addr,
				 .tcp_port = port};
}
