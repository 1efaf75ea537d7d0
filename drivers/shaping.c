/* Link shaping on the testbed's circuits, through libnl-route's qdisc
 * objects (never `tc`): a circuit's rate is a token bucket (tbf) on the
 * egress of its source end o<p>, its latency a netem delay (tbf's child
 * when both are set, else the root). Reading back gives what the kernel
 * holds, with each o<p>'s transmit byte counter, so a run can report the
 * bytes that crossed the circuits.
 *
 * Only the source end is shaped: the veth's other direction carries the
 * receiver's TCP acknowledgements (a real circuit is one-way; acks would
 * ride another circuit), and those are not the data a schedule moves. */
#include "drivers/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/qdisc/tbf.h>
#include <netlink/route/tc.h>

#define TBF_HANDLE   0x00010000u /* 1: */
#define NETEM_HANDLE 0x000a0000u /* 10: */

static void del_root(struct nl_sock *sk, int ifindex)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();

	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
	(void)rtnl_qdisc_delete(sk, q); /* none there is fine */
	rtnl_qdisc_put(q);
}

double netlink_tbf_bucket(double rate)
{
	double bps = rate / 8;

	return bps / 1000 > 98304 ? bps / 1000 : 98304;
}

int netlink_shape(struct nl_sock *sk, int ifindex, const char *ifname, double rate,
		  double latency, struct ofc_error *err)
{
	struct rtnl_qdisc *q;
	int e = 0;

	del_root(sk, ifindex);
	if (rate > 0) {
		/* tbf counts bytes per second in an int: 17 Gb/s at most. */
		double bps = rate / 8;
		int bucket, limit;

		/* testbed up keeps below it; a record of an older ofc may not. */
		if (rate > NETLINK_MAX_RATE)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "%s: a shaped rate is at most %.0f Gb/s, not %.4g Gb/s "
			    "(bring the testbed up again: ofc testbed up FILE)",
			    ifname, NETLINK_MAX_RATE / 1e9, rate / 1e9);
		/* A bucket of 1 ms of traffic (at least 96 KiB, a few
		 * full-size packets) and a queue of 100 ms: TCP fills the
		 * link without being dropped into slow start. */
		bucket = (int)netlink_tbf_bucket(rate);
		limit = (int)(bps / 10 > 4.0 * bucket ? bps / 10 : 4.0 * bucket);
		q = rtnl_qdisc_alloc();
		rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
		rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
		rtnl_tc_set_handle(TC_CAST(q), TBF_HANDLE);
		rtnl_tc_set_kind(TC_CAST(q), "tbf");
		rtnl_qdisc_tbf_set_rate(q, (int)bps, bucket, 0);
		rtnl_qdisc_tbf_set_limit(q, limit);
		e = rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
		rtnl_qdisc_put(q);
	}
	if (e == 0 && latency > 0) {
		q = rtnl_qdisc_alloc();
		rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
		rtnl_tc_set_parent(TC_CAST(q), rate > 0 ? TBF_HANDLE | 1u : TC_H_ROOT);
		rtnl_tc_set_handle(TC_CAST(q), NETEM_HANDLE);
		rtnl_tc_set_kind(TC_CAST(q), "netem");
		rtnl_netem_set_delay(q, (int)(latency * 1e6 + 0.5)); /* microseconds */
		rtnl_netem_set_limit(q, 100000);		     /* packets */
		e = rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
		rtnl_qdisc_put(q);
		/* The kernel answers ENOENT for a qdisc kind it does not have. */
		if (e == -NLE_OBJ_NOTFOUND)
			return ofc_error_set(err, OFC_E_INPUT,
					     "shaping %s: this kernel has no netem qdisc "
					     "(CONFIG_NET_SCH_NETEM), so link_latency cannot be "
					     "emulated; leave it out",
					     ifname);
	}
	if (e < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "shaping %s: %s", ifname,
				     nl_geterror(e));
	return 0;
}

/* One host's o<p>: qdiscs and counters. */
static int read_host(struct nl_sock *sk, uint32_t ports, struct link_shape *out,
		     struct ofc_error *err)
{
	struct nl_cache *lc = NULL, *qc = NULL;
	int *ifi = xcalloc(ports + 1, sizeof(int));
	int e;

	if ((e = rtnl_link_alloc_cache(sk, AF_UNSPEC, &lc)) < 0 ||
	    (e = rtnl_qdisc_alloc_cache(sk, &qc)) < 0) {
		free(ifi);
		if (lc)
			nl_cache_free(lc);
		return ofc_error_set(err, OFC_E_RUNTIME, "reading links: %s", nl_geterror(e));
	}
	for (struct nl_object *o = nl_cache_get_first(lc); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		const char *name = rtnl_link_get_name(l);
		uint32_t p;

		if (!name || name[0] != 'o' || parse_u32(name + 1, &p) < 0 || p >= ports)
			continue;
		ifi[p] = rtnl_link_get_ifindex(l);
		out[p].present = true;
		out[p].tx_bytes = rtnl_link_get_stat(l, RTNL_LINK_TX_BYTES);
		out[p].tx_packets = rtnl_link_get_stat(l, RTNL_LINK_TX_PACKETS);
	}
	for (struct nl_object *o = nl_cache_get_first(qc); o; o = nl_cache_get_next(o)) {
		struct rtnl_qdisc *q = (struct rtnl_qdisc *)o;
		const char *kind = rtnl_tc_get_kind(TC_CAST(q));
		int i = rtnl_tc_get_ifindex(TC_CAST(q));

		for (uint32_t p = 0; p < ports && kind; p++) {
			if (!ifi[p] || ifi[p] != i)
				continue;
			if (strcmp(kind, "tbf") == 0)
				out[p].rate = 8.0 * (double)rtnl_qdisc_tbf_get_rate(q);
			else if (strcmp(kind, "netem") == 0)
				out[p].latency = rtnl_netem_get_delay(q) / 1e6;
		}
	}
	nl_cache_free(lc);
	nl_cache_free(qc);
	free(ifi);
	return 0;
}

/* Shape one host's o<p>. */
static int shape_host(struct nl_sock *sk, uint32_t ports, double rate, double latency,
		      struct ofc_error *err)
{
	struct link_shape *sh = xcalloc(ports + 1, sizeof(*sh));
	struct nl_cache *lc = NULL;
	int e, rc = 0;

	if ((e = rtnl_link_alloc_cache(sk, AF_UNSPEC, &lc)) < 0) {
		free(sh);
		return ofc_error_set(err, OFC_E_RUNTIME, "reading links: %s", nl_geterror(e));
	}
	for (struct nl_object *o = nl_cache_get_first(lc); o && rc == 0; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		const char *name = rtnl_link_get_name(l);
		uint32_t p;

		if (!name || name[0] != 'o' || parse_u32(name + 1, &p) < 0 || p >= ports)
			continue;
		if (rate > 0 || latency > 0)
			rc = netlink_shape(sk, rtnl_link_get_ifindex(l), name, rate, latency, err);
		else
			del_root(sk, rtnl_link_get_ifindex(l));
	}
	nl_cache_free(lc);
	free(sh);
	return rc;
}

struct per_host {
	uint32_t ports;
	struct link_shape *out; /* read */
	double rate, latency;	/* shape */
};

/* fn in every host's namespace, through one netlink socket opened there. */
static int each_host(const char *const *netns, uint32_t n, struct per_host *ph,
		     int (*fn)(struct nl_sock *, uint32_t, struct per_host *, struct ofc_error *),
		     struct ofc_error *err)
{
	int orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), rc = 0;

	if (orig < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "no network namespaces: %s",
				     strerror(errno));
	for (uint32_t h = 0; h < n && rc == 0; h++) {
		char *path = xasprintf("%s/%s", NETNS_DIR, netns[h]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		struct nl_sock *sk = NULL;
		int e;

		if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
			rc = ofc_error_set(err, OFC_E_RUNTIME, "host namespace %s: %s", path,
					   strerror(errno));
		} else {
			sk = nl_socket_alloc();
			if ((e = nl_connect(sk, NETLINK_ROUTE)) < 0)
				rc = ofc_error_set(err, OFC_E_RUNTIME, "netlink in %s: %s",
						   netns[h], nl_geterror(e));
			else
				rc = fn(sk, h, ph, err);
			nl_socket_free(sk);
		}
		if (fd >= 0)
			close(fd);
		free(path);
	}
	if (setns(orig, CLONE_NEWNET) != 0 && rc == 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "cannot return to the original namespace");
	close(orig);
	return rc;
}

static int read_fn(struct nl_sock *sk, uint32_t h, struct per_host *ph, struct ofc_error *err)
{
	return read_host(sk, ph->ports, ph->out + (size_t)h * ph->ports, err);
}

static int shape_fn(struct nl_sock *sk, uint32_t h, struct per_host *ph, struct ofc_error *err)
{
	(void)h;
	return shape_host(sk, ph->ports, ph->rate, ph->latency, err);
}

int netlink_read_links(const char *const *netns, uint32_t n, uint32_t ports,
		       struct link_shape *out, struct ofc_error *err)
{
	struct per_host ph = {.ports = ports, .out = out};

	memset(out, 0, (size_t)n * ports * sizeof(*out));
	return each_host(netns, n, &ph, read_fn, err);
}

int netlink_shape_links(const char *const *netns, uint32_t n, uint32_t ports, double rate,
			double latency, struct ofc_error *err)
{
	struct per_host ph = {.ports = ports, .rate = rate, .latency = latency};

	return each_host(netns, n, &ph, shape_fn, err);
}
