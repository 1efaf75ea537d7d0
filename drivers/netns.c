/* Network namespaces for the testbed, made the way `ip netns add` makes
 * them: a new network namespace kept alive by a bind mount of
 * /proc/thread-self/ns/net on /run/netns/NAME. The calling thread enters
 * the namespace only long enough to set it up, and returns to where it
 * was. thread-self, not self: in ofcd a worker thread makes them, and
 * /proc/self is the main thread's, whose namespace is the machine's (the
 * bind mounts named it, and the testbed's veths landed beside eth0). */
#include "drivers/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <net/if.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

uint32_t netlink_host_addr(uint32_t host)
{
	/* 198.19.0.1 .. 198.19.255.255: host 0 is .0.1, not the network's .0.0 */
	return (198u << 24) | (19u << 16) | ((host + 1) & 0xffffu);
}

uint32_t netlink_link_addr(uint32_t host, uint32_t port, uint32_t host_ports, bool dst_end)
{
	/* 198.18.0.0/16: a /31 per circuit, numbered by its source port. */
	uint32_t idx = host * host_ports + port;

	return (198u << 24) | (18u << 16) | ((idx * 2 + (dst_end ? 1 : 0)) & 0xffffu);
}

bool netns_exists(const char *name)
{
	char *path = xasprintf("%s/%s", NETNS_DIR, name);
	bool yes = access(path, F_OK) == 0;

	free(path);
	return yes;
}

static int write_sysctl(const char *path, const char *value, struct ofc_error *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int e;

	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	if (write(fd, value, strlen(value)) < 0) {
		e = errno;
		close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(e));
	}
	close(fd);
	return 0;
}

/* Inside the new namespace: forwarding on, reverse-path filter off (a
 * circuit is one-way, so replies come back on another interface), lo up
 * with the host's address. TCP keeps its window across idle periods: a
 * schedule leaves a circuit idle for whole steps, and falling back to slow
 * start after each would charge every step a ramp the links do not have. */
static int setup_inside(uint32_t host_addr, struct ofc_error *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = NULL, *change = NULL;
	struct rtnl_addr *addr = NULL;
	struct nl_addr *local = NULL;
	uint32_t be = htonl(host_addr);
	int rc;

	if (write_sysctl("/proc/sys/net/ipv4/ip_forward", "1", err) < 0 ||
	    write_sysctl("/proc/sys/net/ipv4/conf/all/rp_filter", "0", err) < 0 ||
	    write_sysctl("/proc/sys/net/ipv4/conf/default/rp_filter", "0", err) < 0 ||
	    write_sysctl("/proc/sys/net/ipv4/tcp_slow_start_after_idle", "0", err) < 0) {
		nl_socket_free(sk);
		return -1;
	}
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc == 0)
		rc = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (rc == 0) {
		change = rtnl_link_alloc();
		rtnl_link_set_flags(change, IFF_UP);
		rc = rtnl_link_change(sk, lo, change, 0);
	}
	if (rc == 0) {
		addr = rtnl_addr_alloc();
		local = nl_addr_build(AF_INET, &be, 4);
		nl_addr_set_prefixlen(local, 32);
		rtnl_addr_set_ifindex(addr, rtnl_link_get_ifindex(lo));
		rtnl_addr_set_local(addr, local);
		rc = rtnl_addr_add(sk, addr, NLM_F_REPLACE);
	}
	if (rc < 0)
		ofc_error_set(err, OFC_E_RUNTIME, "setting up loopback: %s", nl_geterror(rc));
	if (local)
		nl_addr_put(local);
	if (addr)
		rtnl_addr_put(addr);
	if (change)
		rtnl_link_put(change);
	if (lo)
		rtnl_link_put(lo);
	nl_socket_free(sk);
	return rc < 0 ? -1 : 0;
}

/* NETNS_DIR a shared mount point of its own, as `ip netns add` leaves it
 * (iproute2's netns_add): were the testbed's namespaces mounted on the
 * plain directory, the first `ip netns add` after them bind-mounts the
 * directory over itself, and their files, mount points in the mounts
 * below, can no longer be removed ("Device or resource busy"). Made once,
 * under the directory's lock as iproute2 takes it, so the two never bind
 * it twice when they start at the same time. */
static int netns_dir_shared(struct ofc_error *err)
{
	int lock = open(NETNS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool bound = false;
	int rc = 0;

	if (lock >= 0)
		flock(lock, LOCK_EX); /* best effort, as iproute2's */
	while (mount("", NETNS_DIR, "none", MS_SHARED | MS_REC, NULL) != 0) {
		/* EINVAL: not a mount point yet; make it one, once. */
		if (errno != EINVAL || bound ||
		    mount(NETNS_DIR, NETNS_DIR, "none", MS_BIND | MS_REC, NULL) != 0) {
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "cannot make %s a shared mount point: %s", NETNS_DIR,
					   strerror(errno));
			break;
		}
		bound = true;
	}
	if (lock >= 0)
		close(lock); /* and its lock */
	return rc;
}

int netns_create(const char *name, uint32_t host_addr, struct ofc_error *err)
{
	char *path = xasprintf("%s/%s", NETNS_DIR, name);
	int orig = -1, fd, rc = -1;
	bool made = false;

	if (strlen(name) > 200 || strchr(name, '/')) {
		free(path);
		return ofc_error_set(err, OFC_E_INPUT, "bad namespace name '%s'", name);
	}
	if (mkdir(NETNS_DIR, 0755) != 0 && errno != EEXIST) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot create %s: %s", NETNS_DIR,
			      strerror(errno));
		goto out;
	}
	if (netns_dir_shared(err) < 0)
		goto out;
	orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "no network namespace support: %s",
			      strerror(errno));
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		/* Reuse it if it is a live namespace (a bind mount). */
		if (setns(fd, CLONE_NEWNET) == 0) {
			close(fd);
			rc = setup_inside(host_addr, err);
			goto back;
		}
		close(fd);
		umount2(path, MNT_DETACH);
		unlink(path);
	}
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (fd < 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	close(fd);
	made = true;
	if (unshare(CLONE_NEWNET) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME,
			      "cannot create a network namespace (%s): the testbed needs root",
			      strerror(errno));
		goto out;
	}
	if (mount("/proc/thread-self/ns/net", path, "none", MS_BIND, NULL) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot bind-mount %s: %s", path,
			      strerror(errno));
		goto back;
	}
	made = false;
	rc = setup_inside(host_addr, err);
back:
	if (setns(orig, CLONE_NEWNET) != 0 && rc == 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "cannot return to the original namespace");
out:
	if (made)
		unlink(path);
	if (orig >= 0)
		close(orig);
	free(path);
	return rc;
}

int netns_delete(const char *name, struct ofc_error *err)
{
	char *path = xasprintf("%s/%s", NETNS_DIR, name);
	int rc = 0;

	/* The namespace, and the veths in it, go when the last mount and
	 * process let go of it. */
	if (umount2(path, MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "cannot unmount %s: %s", path,
				   strerror(errno));
	if (rc == 0 && unlink(path) != 0 && errno != ENOENT)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "cannot remove %s: %s", path,
				   strerror(errno));
	free(path);
	return rc;
}

/* In the namespace already entered: the veth pair HOST_IFACE / HOST_IFACE
 * "p", both up, the host's address (/32) on the first. */
static int host_iface_inside(uint32_t host_addr, bool add, struct ofc_error *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *l = NULL, *peer, *change;
	struct rtnl_addr *a;
	struct nl_addr *local;
	uint32_t be = htonl(host_addr);
	const char *step = "connecting to netlink";
	int rc;

	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc == 0) {
		/* Whatever holds the name now goes (a run that did not clean up). */
		step = "removing " NETNS_HOST_IFACE;
		l = rtnl_link_alloc();
		rtnl_link_set_name(l, NETNS_HOST_IFACE);
		rc = rtnl_link_delete(sk, l);
		rtnl_link_put(l);
		l = NULL;
		if (rc == -NLE_NODEV || rc == -NLE_OBJ_NOTFOUND)
			rc = 0;
	}
	if (rc == 0 && add) {
		step = "creating " NETNS_HOST_IFACE;
		l = rtnl_link_veth_alloc();
		rtnl_link_set_name(l, NETNS_HOST_IFACE);
		peer = rtnl_link_veth_get_peer(l);
		rtnl_link_set_name(peer, NETNS_HOST_IFACE "p");
		rtnl_link_put(peer);
		rc = rtnl_link_add(sk, l, NLM_F_CREATE | NLM_F_EXCL);
		rtnl_link_veth_release(l);
		l = NULL;
	}
	/* Both ends up (a veth carries nothing while its peer is down). */
	for (int end = 0; end < 2 && rc == 0 && add; end++) {
		step = "raising " NETNS_HOST_IFACE;
		if (l)
			rtnl_link_put(l);
		l = NULL;
		rc = rtnl_link_get_kernel(sk, 0, end ? NETNS_HOST_IFACE : NETNS_HOST_IFACE "p", &l);
		if (rc == 0) {
			change = rtnl_link_alloc();
			rtnl_link_set_flags(change, IFF_UP);
			rc = rtnl_link_change(sk, l, change, 0);
			rtnl_link_put(change);
		}
	}
	if (rc == 0 && add) {
		step = "addressing " NETNS_HOST_IFACE;
		a = rtnl_addr_alloc();
		local = nl_addr_build(AF_INET, &be, 4);
		nl_addr_set_prefixlen(local, 32);
		rtnl_addr_set_ifindex(a, rtnl_link_get_ifindex(l));
		rtnl_addr_set_local(a, local);
		if (rc == 0)
			rc = rtnl_addr_add(sk, a, NLM_F_REPLACE);
		nl_addr_put(local);
		rtnl_addr_put(a);
	}
	if (l)
		rtnl_link_put(l);
	nl_socket_free(sk);
	if (rc < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", step, nl_geterror(rc));
	return 0;
}

/* What a function does inside a namespace, with its arguments. */
struct inside {
	int (*fn)(const struct inside *in, struct ofc_error *err);
	uint32_t host_addr;
	const char *ifname;
	bool on; /* add the address, or set the link up */
};

/* in->fn run in the namespace NAME by the calling thread, which returns to
 * its own namespace after; errors prefixed with NAME. */
static int in_netns(const char *name, const struct inside *in, struct ofc_error *err)
{
	char *path = xasprintf("%s/%s", NETNS_DIR, name);
	int orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), fd, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (orig < 0 || fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		ofc_error_set(err, OFC_E_RUNTIME, "cannot enter %s: %s", path, strerror(errno));
	} else {
		rc = in->fn(in, err);
		if (setns(orig, CLONE_NEWNET) != 0 && rc == 0)
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "cannot return to the original namespace");
		if (rc < 0)
			ofc_error_prefix(err, "%s", name);
	}
	if (fd >= 0)
		close(fd);
	if (orig >= 0)
		close(orig);
	free(path);
	return rc;
}

static int host_iface_fn(const struct inside *in, struct ofc_error *err)
{
	return host_iface_inside(in->host_addr, in->on, err);
}

int netns_host_iface(const char *name, uint32_t host_addr, bool add, struct ofc_error *err)
{
	const struct inside in = {.fn = host_iface_fn, .host_addr = host_addr, .on = add};

	return in_netns(name, &in, err);
}

/* In the namespace already entered: ifname up or down (IFF_UP). */
static int link_set_inside(const char *ifname, bool up, struct ofc_error *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *l = NULL, *change;
	int rc = nl_connect(sk, NETLINK_ROUTE);

	if (rc == 0)
		rc = rtnl_link_get_kernel(sk, 0, ifname, &l);
	if (rc == 0) {
		change = rtnl_link_alloc();
		if (up)
			rtnl_link_set_flags(change, IFF_UP);
		else
			rtnl_link_unset_flags(change, IFF_UP);
		rc = rtnl_link_change(sk, l, change, 0);
		rtnl_link_put(change);
		rtnl_link_put(l);
	}
	nl_socket_free(sk);
	if (rc < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "setting %s %s: %s", ifname,
				     up ? "up" : "down", nl_geterror(rc));
	return 0;
}

static int link_set_fn(const struct inside *in, struct ofc_error *err)
{
	return link_set_inside(in->ifname, in->on, err);
}

int netns_link_set(const char *name, const char *ifname, bool up, struct ofc_error *err)
{
	const struct inside in = {.fn = link_set_fn, .ifname = ifname, .on = up};

	return in_netns(name, &in, err);
}
