/* The netlink driver: Linux hosts, each a network namespace on this machine
 * (the testbed), programmed through libnl-route's object model: rtnl_link
 * (veth pairs, up/down), rtnl_addr and rtnl_route. One netlink socket per
 * host, opened inside its namespace; no messages are built by hand and `ip`
 * is never run.
 *
 * Names and numbers (docs/testbed.md): the circuit from host port (h, p) to
 * (v, q) is a veth pair, "o<p>" in h and "i<q>" in v, addressed
 * 198.18.x.y/31 by its source port (netlink_link_addr). Host h owns
 * 198.19.x.y (netlink_host_addr) on lo. Routes to other hosts' addresses
 * carry protocol RTPROT_OFC, so read-back sees only ours. */
#include "drivers/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <net/if.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#define RTPROT_OFC 77 /* unassigned in /etc/iproute2/rt_protos */

struct nl_priv {
	uint32_t n, ports;
	int *nsfd;
	struct nl_sock **sk;
	int *oif; /* n * ports: ifindex of o<p> in host h, 0 when unknown */
	double rate, latency; /* shaping of every new circuit (drivers/shaping.c) */
};

static int nl_fail(struct ofc_error *err, int rc, const char *fmt, const char *arg)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, arg);
	/* A netlink socket has SO_RCVTIMEO (nlk_open): a kernel that does not
	 * answer in time shows up as NLE_AGAIN. */
	return ofc_error_setr(err, OFC_E_RUNTIME,
			      rc == -NLE_AGAIN || rc == NLE_AGAIN ? OFC_R_TIMEOUT : OFC_R_REFUSED,
			      "%s: %s", what, nl_geterror(rc));
}

/* libnl waits in blocking recvmsg() calls of its own (cache fills, acks),
 * where no deadline of ours can reach: bound each one with the device's
 * timeout. rtnetlink answers from the sending thread, so a request's
 * replies are queued before its send returns; the bound is for a kernel
 * (or a namespace) that never answers. */
static void bound_waits(int fd, double timeout)
{
	double t = timeout > 0 ? timeout : 5;
	struct timeval tv = {.tv_sec = (time_t)t, .tv_usec = (suseconds_t)((t - (time_t)t) * 1e6)};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void nlk_close(struct device *dev)
{
	struct nl_priv *p = dev->priv;

	if (!p)
		return;
	for (uint32_t h = 0; h < p->n; h++) {
		if (p->sk[h])
			nl_socket_free(p->sk[h]);
		if (p->nsfd[h] >= 0)
			close(p->nsfd[h]);
	}
	free(p->sk);
	free(p->nsfd);
	free(p->oif);
	free(p);
	dev->priv = NULL;
}

static int nlk_open(struct device *dev, struct ofc_error *err)
{
	struct nl_priv *p = xcalloc(1, sizeof(*p));
	int orig, rc = 0;

	p->n = dev->cfg.nhosts;
	p->ports = dev->cfg.host_ports ? dev->cfg.host_ports : 1;
	p->rate = dev->cfg.link_rate;
	p->latency = dev->cfg.link_latency;
	p->nsfd = xmalloc(((size_t)p->n + 1) * sizeof(int));
	p->sk = xcalloc(p->n + 1, sizeof(*p->sk));
	p->oif = xcalloc((size_t)p->n * p->ports + 1, sizeof(int));
	for (uint32_t h = 0; h < p->n; h++)
		p->nsfd[h] = -1;
	dev->priv = p;
	orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig < 0) {
		nlk_close(dev);
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST, "no network namespaces: %s",
				      strerror(errno));
	}
	for (uint32_t h = 0; h < p->n && rc == 0; h++) {
		char *path = xasprintf("%s/%s", NETNS_DIR, dev->cfg.netns[h]);

		p->nsfd[h] = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (p->nsfd[h] < 0 || setns(p->nsfd[h], CLONE_NEWNET) != 0) {
			rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
					    "host namespace %s: %s (is the testbed up?)", path,
					    strerror(errno));
		} else {
			p->sk[h] = nl_socket_alloc();
			int e = nl_connect(p->sk[h], NETLINK_ROUTE);
			if (e < 0)
				rc = nl_fail(err, e, "netlink socket in %s", dev->cfg.netns[h]);
			else
				bound_waits(nl_socket_get_fd(p->sk[h]), dev->cfg.timeout);
		}
		free(path);
	}
	if (setns(orig, CLONE_NEWNET) != 0 && rc == 0)
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_LOST,
				    "cannot return to the original namespace");
	close(orig);
	if (rc < 0)
		nlk_close(dev);
	return rc;
}

static struct nl_addr *ipv4(uint32_t host_order, unsigned prefix)
{
	uint32_t be = htonl(host_order);
	struct nl_addr *a = nl_addr_build(AF_INET, &be, 4);

	nl_addr_set_prefixlen(a, (int)prefix);
	return a;
}

static uint32_t addr_u32(struct nl_addr *a)
{
	uint32_t be;

	if (!a || nl_addr_get_family(a) != AF_INET || nl_addr_get_len(a) != 4)
		return 0;
	memcpy(&be, nl_addr_get_binary_addr(a), 4);
	return ntohl(be);
}

/* "o3" -> 3 when prefix is 'o'; -1 otherwise. */
static int port_of(const char *name, char prefix, uint32_t ports)
{
	uint32_t v;

	if (!name || name[0] != prefix || parse_u32(name + 1, &v) < 0 || v >= ports)
		return -1;
	return (int)v;
}

struct end {
	int ifindex;
	bool up;
	uint32_t addr;
};

static int nlk_read(struct device *dev, struct device_state *out, struct ofc_error *err)
{
	struct nl_priv *p = dev->priv;
	size_t np = (size_t)p->n * p->ports;
	struct end *o = xcalloc(np + 1, sizeof(*o)), *in = xcalloc(np + 1, sizeof(*in));
	int rc = 0;

	for (uint32_t h = 0; h < p->n && rc == 0; h++) {
		struct nl_cache *lc = NULL, *ac = NULL, *rcache = NULL;
		struct nl_object *obj;
		int e;

		dev->stats.commands += 3;
		if ((e = rtnl_link_alloc_cache(p->sk[h], AF_UNSPEC, &lc)) < 0 ||
		    (e = rtnl_addr_alloc_cache(p->sk[h], &ac)) < 0 ||
		    (e = rtnl_route_alloc_cache(p->sk[h], AF_INET, 0, &rcache)) < 0) {
			rc = nl_fail(err, e, "reading host %s", dev->cfg.netns[h]);
		} else {
			for (obj = nl_cache_get_first(lc); obj; obj = nl_cache_get_next(obj)) {
				struct rtnl_link *l = (struct rtnl_link *)obj;
				const char *name = rtnl_link_get_name(l);
				int q = port_of(name, 'o', p->ports);
				struct end *x =
				    q >= 0 ? &o[(size_t)h * p->ports + (uint32_t)q] : NULL;

				if (!x && (q = port_of(name, 'i', p->ports)) >= 0)
					x = &in[(size_t)h * p->ports + (uint32_t)q];
				if (x) {
					x->ifindex = rtnl_link_get_ifindex(l);
					x->up = (rtnl_link_get_flags(l) & IFF_UP) != 0;
				}
			}
			for (uint32_t q = 0; q < p->ports; q++)
				p->oif[(size_t)h * p->ports + q] =
				    o[(size_t)h * p->ports + q].ifindex;
			for (obj = nl_cache_get_first(ac); obj; obj = nl_cache_get_next(obj)) {
				struct rtnl_addr *a = (struct rtnl_addr *)obj;
				int ifi = rtnl_addr_get_ifindex(a);
				uint32_t local = addr_u32(rtnl_addr_get_local(a));

				if (!local)
					continue; /* IPv6 link-local and the like */

				for (uint32_t q = 0; q < p->ports; q++) {
					struct end *x = &o[(size_t)h * p->ports + q];
					struct end *y = &in[(size_t)h * p->ports + q];

					if (x->ifindex == ifi)
						x->addr = local;
					if (y->ifindex == ifi)
						y->addr = local;
				}
			}
			for (obj = nl_cache_get_first(rcache); obj; obj = nl_cache_get_next(obj)) {
				struct rtnl_route *r = (struct rtnl_route *)obj;
				uint32_t dst = addr_u32(rtnl_route_get_dst(r));
				struct rtnl_nexthop *nh;

				if (rtnl_route_get_protocol(r) != RTPROT_OFC ||
				    nl_addr_get_prefixlen(rtnl_route_get_dst(r)) != 32 ||
				    (dst >> 16) != ((198u << 8) | 19u) || (dst & 0xffffu) == 0 ||
				    (dst & 0xffffu) > p->n || rtnl_route_get_nnexthops(r) != 1)
					continue;
				nh = rtnl_route_nexthop_n(r, 0);
				for (uint32_t q = 0; q < p->ports; q++)
					if (o[(size_t)h * p->ports + q].ifindex &&
					    o[(size_t)h * p->ports + q].ifindex ==
						rtnl_route_nh_get_ifindex(nh))
						state_add_route(
						    out,
						    (struct hroute){h, (dst & 0xffffu) - 1, q});
			}
		}
		if (lc)
			nl_cache_free(lc);
		if (ac)
			nl_cache_free(ac);
		if (rcache)
			nl_cache_free(rcache);
	}
	/* A circuit counts when both ends exist, are up and carry its /31. */
	for (uint32_t v = 0; v < p->n && rc == 0; v++)
		for (uint32_t q = 0; q < p->ports; q++) {
			const struct end *y = &in[(size_t)v * p->ports + q];
			uint32_t idx;

			if (!y->ifindex || !y->up || (y->addr >> 16) != ((198u << 8) | 18u) ||
			    !(y->addr & 1))
				continue;
			idx = (y->addr & 0xffffu) / 2;
			if (idx >= np)
				continue;
			const struct end *x = &o[idx];
			if (x->ifindex && x->up && x->addr == y->addr - 1)
				state_add_link(
				    out, (struct hlink){idx / p->ports, idx % p->ports, v, q});
		}
	free(o);
	free(in);
	return rc;
}

static int del_link(struct nl_sock *sk, char prefix, uint32_t port, struct ofc_error *err)
{
	struct rtnl_link *l = rtnl_link_alloc();
	char name[16];
	int e;

	snprintf(name, sizeof(name), "%c%u", prefix, port);
	rtnl_link_set_name(l, name);
	e = rtnl_link_delete(sk, l);
	rtnl_link_put(l);
	if (e < 0 && e != -NLE_NODEV && e != -NLE_OBJ_NOTFOUND)
		return nl_fail(err, e, "removing %s", name);
	return 0;
}

/* Address and raise one end; returns its ifindex. */
static int raise_end(struct nl_sock *sk, const char *name, uint32_t addr, struct ofc_error *err)
{
	struct rtnl_link *l = NULL, *change;
	struct rtnl_addr *a;
	struct nl_addr *local;
	int e, ifindex;

	e = rtnl_link_get_kernel(sk, 0, name, &l);
	if (e < 0)
		return nl_fail(err, e, "finding %s", name);
	ifindex = rtnl_link_get_ifindex(l);
	a = rtnl_addr_alloc();
	local = ipv4(addr, 31);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_local(a, local);
	e = rtnl_addr_add(sk, a, NLM_F_REPLACE);
	nl_addr_put(local);
	rtnl_addr_put(a);
	if (e == 0) {
		change = rtnl_link_alloc();
		rtnl_link_set_flags(change, IFF_UP);
		e = rtnl_link_change(sk, l, change, 0);
		rtnl_link_put(change);
	}
	rtnl_link_put(l);
	if (e < 0)
		return nl_fail(err, e, "configuring %s", name);
	return ifindex;
}

static int add_link(struct nl_priv *p, const struct hlink *k, struct ofc_error *err)
{
	struct nl_sock *src = p->sk[k->src_host], *dst = p->sk[k->dst_host];
	struct rtnl_link *l, *peer;
	char oname[16], iname[16];
	int e, ifindex;

	/* Whatever holds these names now (a broken or stale circuit) goes. */
	if (del_link(src, 'o', k->src_port, err) < 0 || del_link(dst, 'i', k->dst_port, err) < 0)
		return -1;
	snprintf(oname, sizeof(oname), "o%u", k->src_port);
	snprintf(iname, sizeof(iname), "i%u", k->dst_port);
	l = rtnl_link_veth_alloc();
	if (!l)
		return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED, "veth: out of memory");
	rtnl_link_set_name(l, oname);
	peer = rtnl_link_veth_get_peer(l);
	rtnl_link_set_name(peer, iname);
	rtnl_link_set_ns_fd(peer, p->nsfd[k->dst_host]);
	rtnl_link_put(peer);
	e = rtnl_link_add(src, l, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_veth_release(l);
	if (e < 0)
		return nl_fail(err, e, "creating veth %s", oname);
	ifindex = raise_end(src, oname,
			    netlink_link_addr(k->src_host, k->src_port, p->ports, false), err);
	if (ifindex >= 0 && (p->rate > 0 || p->latency > 0) &&
	    netlink_shape(src, ifindex, oname, p->rate, p->latency, err) < 0)
		return -1;
	if (ifindex < 0 ||
	    raise_end(dst, iname, netlink_link_addr(k->src_host, k->src_port, p->ports, true),
		      err) < 0)
		return -1;
	p->oif[(size_t)k->src_host * p->ports + k->src_port] = ifindex;
	return 0;
}

static int set_route(struct nl_priv *p, const struct hroute *r, bool del, struct ofc_error *err)
{
	struct rtnl_route *rt = rtnl_route_alloc();
	struct nl_addr *dst = ipv4(netlink_host_addr(r->dst_host), 32);
	int e;

	rtnl_route_set_family(rt, AF_INET);
	rtnl_route_set_table(rt, RT_TABLE_MAIN);
	rtnl_route_set_protocol(rt, RTPROT_OFC);
	rtnl_route_set_dst(rt, dst);
	if (del) {
		e = rtnl_route_delete(p->sk[r->host], rt, 0);
		if (e == -NLE_OBJ_NOTFOUND)
			e = 0; /* gone with its link */
	} else {
		int oif = p->oif[(size_t)r->host * p->ports + r->port];
		struct nl_addr *src = ipv4(netlink_host_addr(r->host), 32);
		struct nl_addr *gw = ipv4(netlink_link_addr(r->host, r->port, p->ports, true), 32);
		struct rtnl_nexthop *nh = rtnl_route_nh_alloc();

		rtnl_route_set_scope(rt, RT_SCOPE_UNIVERSE);
		rtnl_route_set_type(rt, RTN_UNICAST);
		rtnl_route_set_pref_src(rt, src);
		rtnl_route_nh_set_ifindex(nh, oif);
		rtnl_route_nh_set_gateway(nh, gw);
		rtnl_route_add_nexthop(rt, nh);
		e = oif ? rtnl_route_add(p->sk[r->host], rt, NLM_F_CREATE | NLM_F_REPLACE)
			: -NLE_NODEV;
		nl_addr_put(src);
		nl_addr_put(gw);
	}
	nl_addr_put(dst);
	rtnl_route_put(rt);
	if (e < 0) {
		char what[96];

		snprintf(what, sizeof(what), "%s route on host %u to host %u via port %u",
			 del ? "removing" : "setting", r->host, r->dst_host, r->port);
		return nl_fail(err, e, "%s", what);
	}
	return 0;
}

static int nlk_apply(struct device *dev, const struct op_batch *b, uint32_t *done,
		     struct ofc_error *err)
{
	struct nl_priv *p = dev->priv;

	for (uint32_t i = 0; i < b->n; i++) {
		const struct op *op = &b->ops[i];
		int rc;

		if ((op->kind == OP_LINK_ADD || op->kind == OP_LINK_DEL) &&
		    (op->link.src_host >= p->n || op->link.dst_host >= p->n ||
		     op->link.src_port >= p->ports || op->link.dst_port >= p->ports))
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "circuit outside the testbed");
		if ((op->kind == OP_ROUTE_SET || op->kind == OP_ROUTE_DEL) &&
		    (op->route.host >= p->n || op->route.dst_host >= p->n ||
		     op->route.port >= p->ports))
			return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					      "route outside the testbed");
		dev->stats.commands++;
		switch (op->kind) {
		case OP_LINK_ADD:
			rc = add_link(p, &op->link, err);
			break;
		case OP_LINK_DEL:
			rc = del_link(p->sk[op->link.src_host], 'o', op->link.src_port, err);
			if (rc == 0)
				rc =
				    del_link(p->sk[op->link.dst_host], 'i', op->link.dst_port, err);
			p->oif[(size_t)op->link.src_host * p->ports + op->link.src_port] = 0;
			break;
		case OP_ROUTE_SET:
		case OP_ROUTE_DEL:
			rc = set_route(p, &op->route, op->kind == OP_ROUTE_DEL, err);
			break;
		default:
			rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_REFUSED,
					    "hosts cannot do operation %d", (int)op->kind);
		}
		if (rc < 0)
			return -1;
		(*done)++;
	}
	return 0;
}

const struct driver_ops netlink_driver_ops = {
    .name = "netlink",
    .cls = DEV_HOSTS,
    .open = nlk_open,
    .read_state = nlk_read,
    .apply = nlk_apply,
    .close = nlk_close,
};
