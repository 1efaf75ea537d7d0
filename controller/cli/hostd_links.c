/* ofc-hostd's view of its links, through libnl-route's object model: a
 * cache manager subscribed to the kernel's link notifications wakes the
 * agent when a link changes, so a link going down is reported when the
 * kernel says so, not at the next interval; and before each report a cache
 * of rtnl_link objects is refilled from a dump, so a notification lost
 * (the socket's buffer overrun) costs at most an interval, never a stale
 * link forever. A port is up when its interface is administratively up and
 * has carrier (IFF_UP and IFF_LOWER_UP). */
#include "controller/cli/internal.h"

#include <net/if.h>
#include <netlink/cache.h>
#include <netlink/route/link.h>

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* (linux/if.h; net/if.h lacks it) */
#endif

static void on_change(struct nl_cache *cache, struct nl_object *obj, int action, void *arg)
{
	struct hostd_links *l = arg;

	(void)cache;
	(void)obj;
	(void)action;
	l->changed = true;
}

int hostd_links_open(struct hostd_links *l, struct ofc_error *err)
{
	int rc;

	l->changed = false;
	rc = nl_cache_mngr_alloc(NULL, NETLINK_ROUTE, NL_AUTO_PROVIDE, &l->mngr);
	if (rc < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "netlink: %s", nl_geterror(rc));
	rc = nl_cache_mngr_add(l->mngr, "route/link", on_change, l, &l->events);
	if (rc >= 0 && !(l->sk = nl_socket_alloc()))
		rc = -NLE_NOMEM;
	if (rc >= 0)
		rc = nl_connect(l->sk, NETLINK_ROUTE);
	if (rc >= 0)
		rc = rtnl_link_alloc_cache(l->sk, AF_UNSPEC, &l->cache);
	if (rc < 0) {
		hostd_links_close(l);
		return ofc_error_set(err, OFC_E_RUNTIME, "netlink: the links: %s", nl_geterror(rc));
	}
	return 0;
}

int hostd_links_refill(struct hostd_links *l, struct ofc_error *err)
{
	int rc = nl_cache_refill(l->sk, l->cache);

	if (rc < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "netlink: reading the links: %s",
				     nl_geterror(rc));
	return 0;
}

int hostd_links_fd(const struct hostd_links *l)
{
	return nl_cache_mngr_get_fd(l->mngr);
}

int hostd_links_ready(struct hostd_links *l, struct ofc_error *err)
{
	int rc = nl_cache_mngr_data_ready(l->mngr);

	if (rc < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "netlink: %s", nl_geterror(rc));
	return 0;
}

bool hostd_link(struct hostd_links *l, const char *ifname, bool *up, int *ifindex)
{
	struct rtnl_link *k = rtnl_link_get_by_name(l->cache, ifname);
	unsigned flags;

	if (!k)
		return false;
	flags = rtnl_link_get_flags(k);
	*up = (flags & IFF_UP) && (flags & IFF_LOWER_UP);
	*ifindex = rtnl_link_get_ifindex(k);
	rtnl_link_put(k);
	return true;
}

void hostd_links_close(struct hostd_links *l)
{
	if (l->mngr)
		nl_cache_mngr_free(l->mngr); /* (and l->events) */
	if (l->cache)
		nl_cache_free(l->cache);
	if (l->sk)
		nl_socket_free(l->sk);
	l->mngr = NULL;
	l->cache = l->events = NULL;
	l->sk = NULL;
}
