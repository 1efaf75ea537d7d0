/* ReportLinks: what a host's agent (ofc-hostd) sees of its fabric ports, on
 * the loop thread. Each report is checked against the running config (the
 * host, its ports, the LLDP neighbours' hosts and ports), kept as the
 * host's record (what the wiring check reads), and run through each port's
 * flap damping (link_damp.c): a port that should now be failed, or is due
 * to come back, becomes a ReportFailure job of "HOST:PORT" items, queued
 * with the other mutations, so a host's link down takes the path `ofc
 * fail` takes (re-planned, announced, on every replica) and the report is
 * answered with that job's answer. The agent reports again every interval,
 * so a restore waiting for its hold-down is decided at a later report.
 *
 * A port is restored only if a host's report failed it (struct
 * link_damp.failed): an operator's `ofc fail` of the same port is theirs. */
#include "controller/ofcd/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The record of host `name`, made on its first report. */
static struct host_seen *host_record(struct ofcd *d, const char *name)
{
	struct ofcd_loop *l = d->loop;

	for (uint32_t i = 0; i < l->nhosts_seen; i++)
		if (strcmp(l->hosts_seen[i].name, name) == 0)
			return &l->hosts_seen[i];
	l->hosts_seen = xreallocarray(l->hosts_seen, l->nhosts_seen + 1, sizeof(*l->hosts_seen));
	struct host_seen *h = &l->hosts_seen[l->nhosts_seen++];
	memset(h, 0, sizeof(*h));
	h->name = xstrdup(name);
	return h;
}

void host_links_free(struct ofcd *d)
{
	for (uint32_t i = 0; i < d->loop->nhosts_seen; i++) {
		struct host_seen *h = &d->loop->hosts_seen[i];

		for (uint32_t p = 0; p < h->nports; p++)
			free(h->ports[p].neighbour);
		free(h->ports);
		free(h->name);
		free(h->lldp_error);
	}
	free(d->loop->hosts_seen);
	d->loop->hosts_seen = NULL;
	wiring_verify_free(d);
	d->loop->nhosts_seen = 0;
}

/* A report's port is the host's, once; its neighbour names a host of the
 * fabric and one of its ports. 0, or -1 with why. */
static int check_port(const struct fabric *f, int h, const Ofc__V1__ReportLinks *r, size_t i,
		      char *why, size_t n)
{
	const Ofc__V1__ReportLinks__Port *p = r->ports[i];
	const char *ifn = p->ifname ? p->ifname : "";
	int nh;

	if (!p->has_port || p->port >= f->hosts[h].ports) {
		if (!p->has_port)
			snprintf(why, n, "port entry %zu has no port number", i + 1);
		else
			snprintf(why, n,
				 "host %s has ports 0..%u; the report names port %u%s%.32s%s, "
				 "which the fabric does not have",
				 f->hosts[h].name, f->hosts[h].ports - 1, p->port, *ifn ? " (" : "",
				 ifn, *ifn ? ")" : "");
		return -1;
	}
	for (size_t k = 0; k < i; k++)
		if (r->ports[k]->port == p->port) {
			snprintf(why, n, "port %u is reported twice", p->port);
			return -1;
		}
	if (!p->neighbour_host)
		return 0;
	if (!plain_name(p->neighbour_host) || (nh = fabric_find_host(f, p->neighbour_host)) < 0) {
		snprintf(why, n,
			 "%s:%u's LLDP neighbour '%.64s' names no host of the fabric (a host "
			 "outside it cabled here, or lldpd's system name not the fabric's)",
			 f->hosts[h].name, p->port,
			 plain_name(p->neighbour_host) ? p->neighbour_host : "?");
		return -1;
	}
	if (!p->has_neighbour_port || p->neighbour_port >= f->hosts[nh].ports) {
		snprintf(why, n, "%s:%u's LLDP neighbour %s has no port %s%u (it has 0..%u)",
			 f->hosts[h].name, p->port, f->hosts[nh].name,
			 p->has_neighbour_port ? "" : "number ", p->neighbour_port,
			 f->hosts[nh].ports - 1);
		return -1;
	}
	return 0;
}

/* Keep what the report says of the host (the wiring check's input). */
static void record(struct host_seen *hs, const struct fabric *f, int h,
		   const Ofc__V1__ReportLinks *r, int64_t now)
{
	if (hs->nports != f->hosts[h].ports) { /* another config: ports renumbered */
		for (uint32_t p = 0; p < hs->nports; p++)
			free(hs->ports[p].neighbour);
		free(hs->ports);
		hs->nports = f->hosts[h].ports;
		hs->ports = xcalloc(hs->nports, sizeof(*hs->ports));
	}
	hs->reported_ms = now;
	hs->lldp_running = r->has_lldp_running && r->lldp_running;
	free(hs->lldp_error);
	hs->lldp_error = r->lldp_error ? xstrndup(r->lldp_error, 200) : NULL;
	for (size_t i = 0; i < r->n_ports; i++) {
		struct port_seen *ps = &hs->ports[r->ports[i]->port];

		ps->reported = true;
		free(ps->neighbour);
		ps->neighbour = NULL;
		if (r->ports[i]->neighbour_host)
			ps->neighbour = xasprintf("%s:%u", r->ports[i]->neighbour_host,
						  r->ports[i]->neighbour_port);
		ps->heard_ms = r->ports[i]->has_neighbour_ttl_s
				   ? now - ((int64_t)r->ports[i]->neighbour_ttl_s + 1) * 1000
				   : now;
	}
}

/* Whether ofcd's failed set (the published state) holds item; by_host:
 * as a failure a host's agent made. */
static bool failed_now(const struct ofcd *d, const char *item, bool by_host)
{
	const Ofc__V1__State *st = d->loop->snap ? d->loop->snap->state : NULL;
	size_t n = !st ? 0 : by_host ? st->n_failed_by_host : st->n_failed;
	char **v = !st ? NULL : by_host ? st->failed_by_host : st->failed;

	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], item) == 0)
			return true;
	return false;
}

/* Whether port's circuits may be moving: a mutation other than a
 * failure's runs (a transaction takes links down and makes them anew: the
 * testbed's veths, an OCS's ports while it switches), or a published state
 * changed its circuits less than a hold-down ago (a report of the move may
 * come after it). A port going down then is the move's doing, not a
 * failure: not taken, so a port still down after it fails at the first
 * report after. */
static bool circuits_moving(const struct ofcd *d, const struct port_seen *ps, int64_t now_ms)
{
	if (d->loop->running && d->loop->running->kind != JOB_FAILURE)
		return true;
	return ps->moved_ms && now_ms - ps->moved_ms < (int64_t)d->o.link_damp.hold_down_ms;
}

/* Each reported port through its damping: the ports to fail now and, when
 * none, those to restore (one job a report: the next report takes the
 * rest). */
static uint32_t decide(struct ofcd *d, struct host_seen *hs, const Ofc__V1__ReportLinks *r,
		       int64_t now, uint32_t *fail, uint32_t *restore, uint32_t *nrestore)
{
	uint32_t nfail = 0;

	*nrestore = 0;
	for (size_t i = 0; i < r->n_ports; i++) {
		uint32_t port = r->ports[i]->port;
		struct link_damp *s = &hs->ports[port].damp;
		bool up = r->ports[i]->has_up && r->ports[i]->up, want;
		uint32_t flaps = s->flaps;
		char item[NAME_MAX_LEN + 16];

		snprintf(item, sizeof(item), "%s:%u", hs->name, port);
		/* A failure a host's report made before this replica heard the
		 * host (another leader took it; the store says whose it is) is
		 * the host's still: held, and restored after the hold-down. */
		if (!s->seen && failed_now(d, item, true))
			s->failed = true;
		if (!up && circuits_moving(d, &hs->ports[port], now)) {
			hs->ports[port].moving_down = true;
			continue;
		}
		hs->ports[port].moving_down = false;
		want = link_damp_observe(&d->o.link_damp, s, up, now);
		d->loop->metrics.host_link_flaps += s->flaps - flaps;
		if (want && !s->failed) {
			if (!failed_now(d, item, false)) /* (another's failure is not ours) */
				fail[nfail++] = port;
		} else if (!want && s->failed) {
			restore[(*nrestore)++] = port;
		}
	}
	return nfail;
}

/* The job that fails (or restores) the ports; NULL: refused and answered. */
static struct job *ports_job(const struct request *rq, const char *host, const uint32_t *ports,
			     uint32_t n, bool restore)
{
	struct job *j = queued_job(rq);
	struct strbuf t = STRBUF_INIT;

	if (!j)
		return NULL;
	j->restore = restore;
	j->by_host = !restore;
	j->items = xcalloc(n + 1, sizeof(char *));
	sb_printf(&t, "host %s's link%s ", host, n == 1 ? "" : "s");
	for (uint32_t i = 0; i < n; i++) {
		j->items[j->nitems++] = xasprintf("%s:%u", host, ports[i]);
		if (i < 4)
			sb_printf(&t, "%s%s", i ? "," : "", j->items[i]);
	}
	if (n > 4)
		sb_printf(&t, " and %u more", n - 4);
	sb_printf(&t, restore ? " up again" : " down");
	j->target = sb_detach(&t);
	return j;
}

/* Each reported port's neighbour against the record: a difference named in
 * the log when it is first seen ("h3:1 reaches h9:2 where the record's
 * circuits give h4:2"), and again when it changes. */
static void check_wiring(struct ofcd *d, struct host_seen *hs, const Ofc__V1__ReportLinks *r)
{
	for (size_t i = 0; i < r->n_ports && hs->lldp_running; i++) {
		struct port_seen *ps = &hs->ports[r->ports[i]->port];
		char here[NAME_MAX_LEN + 16], want[NAME_MAX_LEN + 16], said[2 * NAME_MAX_LEN + 300];
		const char *exp;

		snprintf(here, sizeof(here), "%s:%u", hs->name, r->ports[i]->port);
		exp = wiring_record_end(d, hs->name, r->ports[i]->port, false, want, sizeof(want));
		if (!ps->neighbour || (exp && strcmp(exp, ps->neighbour) == 0)) {
			ps->miswired_said = false;
			continue;
		}
		if (ps->miswired_said)
			continue;
		ps->miswired_said = true;
		wiring_difference(d, here, ps->neighbour, exp, said, sizeof(said));
		ofcd_log(d, OFCD_LOG_WARNING, "wiring: %s", said);
	}
}

int report_links(const struct request *rq)
{
	struct conn *c = rq->c;
	struct ofcd *d = c->d;
	const Ofc__V1__Request *req = rq->req;
	const Ofc__V1__ReportLinks *r = req->report_links;
	const struct fabric *f = d->loop->cfg ? d->loop->cfg->f : NULL;
	char why[400];
	int h;

	if (!r->host || !plain_name(r->host))
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "report_links needs the host it reports (a host name)");
	if (!f || (h = fabric_find_host(f, r->host)) < 0)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_NOT_FOUND,
			     "the fabric has no host %.64s", r->host);
	if (r->n_ports > f->hosts[h].ports)
		return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID,
			     "host %s has %u ports; the report names %zu", f->hosts[h].name,
			     f->hosts[h].ports, r->n_ports);
	for (size_t i = 0; i < r->n_ports; i++)
		if (check_port(f, h, r, i, why, sizeof(why)) < 0)
			return reply(c, req->id, OFC__V1__STATUS__STATUS_INVALID, "%s", why);

	int64_t now = wiring_now_ms();
	struct host_seen *hs = host_record(d, f->hosts[h].name);
	uint32_t *fail = xcalloc(2 * r->n_ports + 2, sizeof(uint32_t)),
		 *restore = fail + r->n_ports + 1, nfail, nrestore;
	struct job *j;

	record(hs, f, h, r, now);
	check_wiring(d, hs, r);
	wiring_verify_report(d, hs);
	nfail = decide(d, hs, r, now, fail, restore, &nrestore);
	if (nfail || nrestore) {
		bool back = !nfail;

		if ((j = ports_job(rq, hs->name, back ? restore : fail, back ? nrestore : nfail,
				   back))) {
			for (uint32_t i = 0; i < (back ? nrestore : nfail); i++)
				hs->ports[back ? restore[i] : fail[i]].damp.failed = !back;
			enqueue(d, j, rq);
		}
		free(fail);
		return 0;
	}
	free(fail);
	uint32_t up = 0, held = 0, suppressed = 0, moving = 0;
	for (uint32_t p = 0; p < hs->nports; p++) {
		moving += hs->ports[p].moving_down;
		up += hs->ports[p].damp.seen && hs->ports[p].damp.up && !hs->ports[p].moving_down;
		held += hs->ports[p].damp.failed;
		suppressed += hs->ports[p].damp.suppressed;
	}
	char mv[80] = "";
	if (moving)
		snprintf(mv, sizeof(mv), ", %u down while its circuits move (not failed)", moving);
	return reply(c, req->id, OFC__V1__STATUS__STATUS_OK,
		     "host %s: %u of %u ports up, %u held failed (%u suppressed)%s; lldpd %s",
		     hs->name, up, hs->nports, held, suppressed, mv,
		     hs->lldp_running ? "answers" : "not running: wiring not seen");
}
