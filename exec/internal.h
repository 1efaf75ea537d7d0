/* Private to exec/: the agents' plumbing that exec.c and probe.c share. */
#ifndef OFC_EXEC_INTERNAL_H
#define OFC_EXEC_INTERNAL_H

#include "exec/exec.h"

#define EXEC_HELLO_MAGIC 0x4f464358u /* "OFCX" */

/* Enter host h's namespace in the calling thread (setns affects only the
 * thread); nothing to do when net->netns is NULL. */
int exec_enter(const struct exec_net *net, uint32_t h, struct ofc_error *err);
/* Host h's listening TCP socket on net->tcp_port: any address of its
 * namespace, or host_addr[h] when every host shares the caller's. */
int exec_listen(const struct exec_net *net, uint32_t h, int backlog, struct ofc_error *err);
/* Connect from local to addr:port within the deadline and send the hello
 * (src host, lane). Returns the fd (blocking, TCP_NODELAY) or -1. */
int exec_connect(uint32_t local, uint32_t addr, uint16_t port, uint32_t src, uint32_t lane,
		 double deadline, struct ofc_error *err);
/* Accept one connection within the deadline (or until stopfd is readable)
 * and read its hello. */
int exec_accept(int lfd, int stopfd, uint32_t *src, uint32_t *lane, double deadline,
		struct ofc_error *err);
/* "a.b.c.d" of a host-order address into buf. */
const char *exec_addr_str(uint32_t a, char *buf, size_t n);

#endif
