/* ICMP echo between testbed hosts: one raw socket per namespace, opened
 * inside it and bound to the host's own address, so replies come back to
 * that address along the routes the testbed installed. Every source sends
 * to every destination at once; missing replies are asked again (the first
 * packets of a path may be spent on ARP) up to three rounds. */
#include "controller/testbed/testbed.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint16_t checksum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static int open_sockets(const char *const *netns, uint32_t n, int *fds, struct ofc_error *err)
{
	int orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), rc = 0;

	if (orig < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "no network namespaces: %s",
				     strerror(errno));
	for (uint32_t h = 0; h < n && rc == 0; h++) {
		char *path = xasprintf("%s/%s", NETNS_DIR, netns[h]);
		int nsfd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(netlink_host_addr(h))};

		if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0)
			rc = ofc_error_set(err, OFC_E_RUNTIME, "host namespace %s: %s", path,
					   strerror(errno));
		else if ((fds[h] = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
					  IPPROTO_ICMP)) < 0 ||
			 bind(fds[h], (struct sockaddr *)&sa, sizeof(sa)) != 0)
			rc = ofc_error_set(err, OFC_E_RUNTIME, "ICMP socket in %s: %s", netns[h],
					   strerror(errno));
		if (nsfd >= 0)
			close(nsfd);
		free(path);
	}
	if (setns(orig, CLONE_NEWNET) != 0 && rc == 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "cannot return to the original namespace");
	close(orig);
	return rc;
}

static void send_echo(int fd, uint16_t id, uint32_t dst)
{
	struct {
		struct icmphdr h;
		uint32_t cookie;
	} pkt = {0};
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(netlink_host_addr(dst))};

	pkt.h.type = ICMP_ECHO;
	pkt.h.un.echo.id = htons(id);
	pkt.h.un.echo.sequence = htons((uint16_t)dst);
	pkt.cookie = htonl(dst);
	pkt.h.checksum = checksum(&pkt, sizeof(pkt));
	(void)!sendto(fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&sa, sizeof(sa));
}

/* Drain fd; mark replies to our id. */
static void receive(int fd, uint16_t id, uint32_t src, uint32_t n, uint8_t *reach)
{
	uint8_t buf[1500];

	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		const struct iphdr *ip = (const void *)buf;

		if (len < (ssize_t)sizeof(struct iphdr))
			return;
		size_t hl = (size_t)ip->ihl * 4;
		if ((size_t)len < hl + sizeof(struct icmphdr) + 4)
			continue;
		const struct icmphdr *h = (const void *)(buf + hl);
		uint32_t cookie;

		memcpy(&cookie, buf + hl + sizeof(*h), 4);
		cookie = ntohl(cookie);
		if (h->type == ICMP_ECHOREPLY && ntohs(h->un.echo.id) == id && cookie < n &&
		    ntohl(ip->saddr) == netlink_host_addr(cookie))
			reach[(size_t)src * n + cookie] = 1;
	}
}

int testbed_ping_all(const char *const *netns, uint32_t n, double timeout, uint8_t *reach,
		     struct ofc_error *err)
{
	int *fds = xmalloc(((size_t)n + 1) * sizeof(int));
	struct pollfd *p = xcalloc(n + 1, sizeof(*p));
	uint16_t base = (uint16_t)(getpid() * 131u);
	int rc;

	memset(reach, 0, (size_t)n * n);
	for (uint32_t h = 0; h < n; h++)
		fds[h] = -1;
	rc = open_sockets(netns, n, fds, err);
	for (int round = 0; round < 3 && rc == 0; round++) {
		double deadline = now_seconds() + timeout / 3;
		uint32_t missing = 0;

		for (uint32_t s = 0; s < n; s++)
			for (uint32_t d = 0; d < n; d++)
				if (d != s && !reach[(size_t)s * n + d]) {
					send_echo(fds[s], (uint16_t)(base + s), d);
					missing++;
				}
		if (!missing)
			break;
		while (now_seconds() < deadline) {
			bool all = true;

			for (uint32_t s = 0; s < n; s++)
				p[s] = (struct pollfd){.fd = fds[s], .events = POLLIN};
			if (poll(p, n, 20) < 0 && errno != EINTR)
				break;
			for (uint32_t s = 0; s < n; s++)
				if (p[s].revents & POLLIN)
					receive(fds[s], (uint16_t)(base + s), s, n, reach);
			for (size_t k = 0; k < (size_t)n * n && all; k++)
				all = reach[k] || k / n == k % n;
			if (all)
				break;
		}
	}
	for (uint32_t h = 0; h < n; h++)
		if (fds[h] >= 0)
			close(fds[h]);
	free(fds);
	free(p);
	return rc;
}
