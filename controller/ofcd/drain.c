/* Planned work on a switch: drain takes switch ports out of service
 * without running jobs losing a circuit they use at that moment, undrain
 * puts them back. Drain: the fabric is planned without the host ports
 * cabled to them (as failures are: failures_publish), that schedule is
 * published first (the loop's state and config, and the event), a grace
 * period lets running jobs take it, and only then are the circuits removed
 * (one transaction to the running config with those ports dark:
 * fabric_circuits leaves them out). Undrain: the circuits back first, in
 * one transaction the devices confirm, then the schedule without them
 * published. The drained set is kept in the store (FABRIC.drained), so a
 * restart and every replica keep the ports dark. */
#include "controller/ofcd/answer.h"
#include "controller/ofcd/worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The switch ports a job names, resolved: each (switch, port) once. */
struct drain_want {
	struct drain_entry *v;
	uint32_t n;
};

static void want_free(struct drain_want *w)
{
	for (uint32_t i = 0; i < w->n; i++) {
		free(w->v[i].sw);
		free(w->v[i].by);
	}
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

static int drained_at(const struct ofcd *d, const char *sw, uint32_t port)
{
	for (uint32_t i = 0; i < d->w->ndrained; i++)
		if (strcmp(d->w->drained[i].sw, sw) == 0 && d->w->drained[i].port == port)
			return (int)i;
	return -1;
}

static int want_add(struct drain_want *w, const char *item, const char *sw, uint32_t port,
		    struct ofc_error *err)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (strcmp(w->v[i].sw, sw) == 0 && w->v[i].port == port)
			return ofc_error_set(err, OFC_E_INPUT, "'%s': port %s:%u is named twice",
					     item, sw, port);
	if (w->n >= DRAIN_MAX_PORTS)
		return ofc_error_set(err, OFC_E_INPUT, "more than %u switch ports at once",
				     DRAIN_MAX_PORTS);
	w->v = xrealloc(w->v, (w->n + 1) * sizeof(*w->v));
	w->v[w->n++] = (struct drain_entry){xstrdup(sw), port, 0, NULL};
	return 0;
}

/* One item of a drain: SWITCH (its ports cabled to hosts and not drained
 * yet: a switch drained in part can be drained whole) or SWITCH:PORT (one
 * so cabled, not drained yet). */
static int resolve_drain(const struct ofcd *d, const char *item, struct drain_want *w,
			 struct ofc_error *err)
{
	const struct fabric *f = d->w->cfg->f;
	const char *colon = strrchr(item, ':');
	char sw[NAME_MAX_LEN + 1], hp[NAME_MAX_LEN + 16];
	uint32_t port = 0, before = w->n, already = 0;
	size_t l = colon ? (size_t)(colon - item) : strlen(item);
	int s, at = -1;

	if (l == 0 || l > NAME_MAX_LEN)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': not a switch or SWITCH:PORT", item);
	memcpy(sw, item, l);
	sw[l] = 0;
	if ((s = fabric_find_switch(f, sw)) < 0)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': fabric '%s' has no switch '%s'", item,
				     f->name, sw);
	if (colon && parse_u32(colon + 1, &port) < 0)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': not a port number", item);
	if (colon && !drained_host_port(f, sw, port, hp, sizeof(hp)))
		return ofc_error_set(err, OFC_E_INPUT,
				     "'%s': port %u of %s is not cabled to a host", item, port, sw);
	for (uint32_t k = 0; k < f->nwiring; k++) {
		uint32_t p = f->wiring[k].sw_port;

		if ((int)f->wiring[k].sw != s || (colon && p != port))
			continue;
		if ((at = drained_at(d, sw, p)) >= 0) {
			already++;
			continue;
		}
		if (want_add(w, item, sw, p, err) < 0)
			return -1;
	}
	if (w->n == before && already)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': %s drained already (by %s)", item,
				     colon ? item : "every port of it cabled to a host is",
				     d->w->drained[at < 0 ? d->w->ndrained - 1 : (uint32_t)at].by);
	if (w->n == before)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': no port of %s is cabled to a host",
				     item, sw);
	return 0;
}

/* One item of an undrain: SWITCH (its drained ports) or SWITCH:PORT (a
 * drained one), by name (the config may have changed since). */
static int resolve_undrain(const struct ofcd *d, const char *item, struct drain_want *w,
			   struct ofc_error *err)
{
	const char *colon = strrchr(item, ':');
	uint32_t port = 0, before = w->n;
	size_t l = colon ? (size_t)(colon - item) : strlen(item);

	if (colon && parse_u32(colon + 1, &port) < 0)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': not a port number", item);
	for (uint32_t i = 0; i < d->w->ndrained; i++) {
		const struct drain_entry *e = &d->w->drained[i];

		if (strlen(e->sw) != l || strncmp(e->sw, item, l) != 0 ||
		    (colon && e->port != port))
			continue;
		if (want_add(w, item, e->sw, e->port, err) < 0)
			return -1;
	}
	if (w->n == before)
		return ofc_error_set(err, OFC_E_INPUT, "'%s' is not drained%s", item,
				     d->w->ndrained ? "" : " (nothing is)");
	return 0;
}

/* ---- who would be cut off ------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static int host_port_of(const struct fabric *f, const char *item, uint32_t *h, uint32_t *port)
{
	const char *colon = strrchr(item, ':');
	char name[NAME_MAX_LEN + 1];
	size_t l;
	int k;

	if (!colon || (l = (size_t)(colon - item)) > NAME_MAX_LEN)
		return -1;
	memcpy(name, item, l);
	name[l] = 0;
	if ((k = fabric_find_host(f, name)) < 0 || parse_u32(colon + 1, port) < 0)
		return -1;
	*h = (uint32_t)k;
	return 0;
}

/* The hosts the running topology would leave outside its largest
 * connected part with the host ports cabled to the drained set plus `w`,
 * the reported and the lost ones dark (whole hosts reported failed are
 * left out of the count), listed in cut (none: empty). Topologies without
 * port permutations are not judged here: the re-plan says. */
static void hosts_cut_off(const struct ofcd *d, const struct drain_want *w, struct strbuf *cut,
			  uint32_t *ncut)
{
	const struct fabric *f = d->w->cfg->f;
	const struct port_map *pm = &f->ports;
	uint32_t n = pm->n, deg = pm->d, h, port, best = 0;
	char hp[NAME_MAX_LEN + 16];

	*ncut = 0;
	if (!pm->to || n != f->nhosts)
		return;
	bool *dark = xcalloc((size_t)n * deg + 1, sizeof(*dark)), *gone = xcalloc(n, sizeof(*gone));
	uint32_t *par = xcalloc(n, sizeof(*par)), *size = xcalloc(n, sizeof(*size));
	for (uint32_t s = 0; s < 4; s++) {
		uint32_t cnt = s == 0	? d->w->ndrained
			       : s == 1 ? w->n
			       : s == 2 ? d->w->nreported
					: d->w->nlost;
		for (uint32_t i = 0; i < cnt; i++) {
			const char *item = hp;

			if (s < 2) {
				const struct drain_entry *e = s ? &w->v[i] : &d->w->drained[i];

				if (!drained_host_port(f, e->sw, e->port, hp, sizeof(hp)))
					continue;
			} else {
				item = s == 2 ? d->w->reported[i] : d->w->lost[i];
				int whole = fabric_find_host(f, item);

				if (whole >= 0) {
					gone[whole] = true;
					continue;
				}
			}
			if (host_port_of(f, item, &h, &port) == 0 && port < deg)
				dark[(size_t)port * n + h] = true;
		}
	}
	for (uint32_t u = 0; u < n; u++)
		par[u] = u;
	for (uint32_t j = 0; j < deg; j++)
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = pm->to[(size_t)j * n + u];

			if (v == u || gone[u] || gone[v] || dark[(size_t)j * n + u] ||
			    dark[(size_t)j * n + v])
				continue;
			par[uf_find(par, u)] = uf_find(par, v);
		}
	for (uint32_t u = 0; u < n; u++)
		if (!gone[u] && ++size[uf_find(par, u)] > size[best])
			best = uf_find(par, u);
	for (uint32_t u = 0; u < n; u++)
		if (!gone[u] && uf_find(par, u) != best) {
			if (*ncut < 16)
				sb_printf(cut, "%s%s", *ncut ? ", " : "", f->hosts[u].name);
			(*ncut)++;
		}
	if (*ncut > 16)
		sb_printf(cut, " and %u more", *ncut - 16);
	free(dark);
	free(gone);
	free(par);
	free(size);
}

/* ---- the circuits ---------------------------------------------------------------------- */

struct drain_target {
	struct ofcd *d;
	const char *spec;
	struct fabric *nf;
};

static int drain_target(void *ctx, struct ctl **out, struct ofc_error *err)
{
	struct drain_target *t = ctx;

	if (ofcd_fabric_with_topology(t->d, t->d->w->cfg, t->spec, false, &t->nf, err) < 0 ||
	    ofcd_open_next_ctl(t->d, t->nf, out, err) < 0)
		return -1;
	return 0;
}

int ofcd_apply_topology(struct ofcd *d, const char *spec, struct strbuf *say, uint32_t *ops,
			struct ofc_error *err)
{
	struct drain_target t = {.d = d, .spec = spec ? spec : d->w->cfg->f->topology.spec};
	const struct partition **keep = NULL;
	struct reconfigure_req q = {
	    .ctl = d->w->ctl, .recover = true, .target = drain_target, .ctx = &t};
	struct reconfigure_result r;

	if (!d->w->cfg->f->topology.present || !d->w->cfg->f->nswitches)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "fabric '%s' has no switch topology whose circuits drain moves",
		    d->w->cfg->f->name);
	if (d->w->nheld) {
		keep = xcalloc(d->w->nheld, sizeof(*keep));
		for (uint32_t i = 0; i < d->w->nheld; i++)
			keep[i] = &d->w->held[i].p;
		q.free_ports = true;
		q.keep = keep;
		q.nkeep = d->w->nheld;
	}
	int rc = reconfigure_run(&q, &r, err);
	const struct ctl_result res = r.txn;
	struct ctl *nc = r.planned;
	enum reconfigure_stage stage = r.stage;

	free(keep);
	reconfigure_result_free(&r);
	if (rc < 0) {
		if (nc && stage != RECONF_RECOVER && stage != RECONF_TARGET) {
			ctl_handover(nc, d->w->ctl);
			ofcd_ctl_close(d, nc);
		} else if (nc) {
			ofcd_ctl_close(d, nc);
		}
		if (t.nf)
			fabric_free(t.nf);
		if (res.rolled_back && res.rollback_ok)
			sb_printf(say, " (rolled back)");
		return -1;
	}
	struct fabcfg *ncfg =
	    fabcfg_new(t.nf, d->w->cfg->yaml, d->w->cfg->yaml_len, d->w->cfg->path, &d->o);
	ncfg->coll = d->w->cfg->coll;
	ncfg->size = d->w->cfg->size;
	ofcd_ctl_close(d, d->w->ctl);
	d->w->ctl = nc;
	ctl_quiet(nc, NULL);
	fabcfg_unref(d->w->cfg);
	d->w->cfg = ncfg;
	if (ops)
		*ops = res.ops_applied;
	sb_printf(say, "transaction %llu, %u operation%s, verified on the devices",
		  (unsigned long long)res.txn, res.ops_applied, res.ops_applied == 1 ? "" : "s");
	return 0;
}

/* The held partitions with a host on w's ports, into say: their circuits
 * stay (a drain aims the free ports alone), so the switch is not empty
 * until they are released. */
static void held_on(const struct ofcd *d, const struct drain_want *w, struct strbuf *say)
{
	const struct fabric *f = d->w->cfg->f;
	char hp[NAME_MAX_LEN + 16];
	uint32_t n = 0;

	for (uint32_t i = 0; i < d->w->nheld; i++) {
		const struct partition *p = &d->w->held[i].p;
		bool on = false;

		for (uint32_t k = 0; k < w->n && !on; k++) {
			if (!drained_host_port(f, w->v[k].sw, w->v[k].port, hp, sizeof(hp)))
				continue;
			*strrchr(hp, ':') = 0;
			for (uint32_t m = 0; m < p->nmembers && !on; m++) {
				size_t l = strcspn(p->members[m], ":");

				on = strlen(hp) == l && strncmp(p->members[m], hp, l) == 0;
			}
		}
		if (on)
			sb_printf(say, "%s%s", n++ ? ", " : "; held partition ", p->name);
	}
	if (n)
		sb_printf(say,
			  " keep%s %s circuits on these ports (a drain moves the free ports "
			  "alone): release %s for the switch to hold nothing",
			  n == 1 ? "s" : "", n == 1 ? "its" : "their", n == 1 ? "it" : "them");
}

/* ---- the job ------------------------------------------------------------------------------ */

/* What the job re-planned so far, published now: the loop makes j's
 * snapshot and config the daemon's and delivers its deferred events, so
 * GetSchedule and watchers have the schedule before the circuits go. */
void ofcd_publish_now(struct ofcd *d, struct job *j)
{
	struct note *n = xcalloc(1, sizeof(*n));

	fabcfg_unref(d->w->last_pub);
	d->w->last_pub = j->new_cfg ? fabcfg_ref(j->new_cfg) : NULL;
	/* (read before the loop can take it: it numbers it anew then) */
	d->w->last_pub_before = j->new_cfg ? atomic_load(&j->new_cfg->pub_seq) : 0;
	n->snap = j->snap;
	n->cfg = j->new_cfg;
	n->deferred = j->deferred;
	j->snap = NULL;
	j->new_cfg = NULL;
	j->deferred = j->deferred_tail = NULL;
	ofcd_note(d, n);
}

/* What the wait saw, in words: who took the schedule, who the grace
 * covered. */
static void grace_words(struct ofcd *d, bool done, double s, uint32_t ms,
			const struct strbuf *taken, const struct strbuf *grace, const uint32_t n[2],
			struct strbuf *say)
{
	atomic_fetch_add(&d->mjobs.waited_taken, n[0]);
	atomic_fetch_add(&d->mjobs.waited_grace, done ? 0 : n[1]);
	if (done)
		sb_printf(say, "running jobs on these ports took the new schedule after %.1f s: %s",
			  s, taken->buf);
	else if (n[1])
		sb_printf(say, "after the %u ms grace: %s%s%sthe grace covered %s", ms,
			  n[0] ? "took the new schedule: " : "", n[0] ? taken->buf : "",
			  n[0] ? "; " : "", grace->buf);
	else
		sb_printf(say,
			  "no running job of libofc-mpi on these ports to say it took the new "
			  "schedule: %u ms of grace",
			  ms);
}

void ofcd_grace_wait(struct ofcd *d, uint32_t ms, bool (*touches)(void *, const char *), void *ctx,
		     struct strbuf *say)
{
	double t0 = now_seconds(), end = t0 + ms / 1000.0;
	struct fabcfg *pub = d->w->last_pub;
	struct strbuf taken = STRBUF_INIT, grace = STRBUF_INIT;
	uint64_t seq = 0;
	uint32_t n[2] = {0, 0};
	bool done = false;

	for (double left;;) {
		if (!seq && pub && atomic_load(&pub->pub_seq) != d->w->last_pub_before)
			seq = atomic_load(&pub->pub_seq);
		if (seq && (done = mpi_jobs_done(d, seq, touches, ctx, &taken, &grace, n)))
			break;
		if ((left = end - now_seconds()) <= 0 || atomic_load(&d->stop_begun))
			break;
		double step = left < 0.05 ? left : 0.05;
		struct timespec ts = {0, (long)(step * 1e9)};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	/* (not yet taken by the loop: every job is still to say so) */
	if (!seq)
		mpi_jobs_done(d, UINT64_MAX, touches, ctx, &taken, &grace, n);
	grace_words(d, done, now_seconds() - t0, ms, &taken, &grace, n, say);
	sb_free(&taken);
	sb_free(&grace);
}

static void refuse(struct ofcd *d, struct job *j, struct answer *an, const struct ofc_error *err)
{
	if (!answer_fenced(d, an, err))
		answer_status(an,
			      err->code == OFC_E_INPUT ? OFC__V1__STATUS__STATUS_INVALID
						       : OFC__V1__STATUS__STATUS_FAILED,
			      "%s", err->msg);
	an->t.state = "refused";
	j->outcome = "refused";
}

/* The drained set with w's ports added (since now, by j's principal). */
static void drained_add(struct ofcd *d, const struct job *j, const struct drain_want *w)
{
	uint64_t now = unix_ms();

	d->w->drained =
	    xrealloc(d->w->drained, (d->w->ndrained + w->n + 1) * sizeof(*d->w->drained));
	for (uint32_t i = 0; i < w->n; i++)
		d->w->drained[d->w->ndrained++] = (struct drain_entry){
		    xstrdup(w->v[i].sw), w->v[i].port, now,
		    xstrdup(j->principal && *j->principal ? j->principal : "-")};
}

/* A copy of the drained set, to go back to. */
static struct drain_want drained_copy_set(const struct ofcd *d)
{
	struct drain_want c = {xcalloc((size_t)d->w->ndrained + 1, sizeof(*c.v)), d->w->ndrained};

	for (uint32_t i = 0; i < c.n; i++)
		c.v[i] =
		    (struct drain_entry){xstrdup(d->w->drained[i].sw), d->w->drained[i].port,
					 d->w->drained[i].since_ms, xstrdup(d->w->drained[i].by)};
	return c;
}

static void drained_restore(struct ofcd *d, struct drain_want *old)
{
	drained_clear(d);
	d->w->drained = old->v;
	d->w->ndrained = old->n;
	old->v = NULL;
	old->n = 0;
}

/* A partition (NULL or "": the fabric) has host: *known when it is the
 * config's or held. */
static bool partition_has_host(const struct ofcd *d, const char *part, const char *host,
			       bool *known)
{
	const struct fabric *f = d->w->cfg->f;

	*known = true;
	for (uint32_t i = 0; i < f->npartitions; i++) {
		const struct partition *p = &f->partitions[i];

		if (strcmp(p->name, part) != 0)
			continue;
		for (uint32_t k = 0; k < p->nmembers; k++)
			if (strcmp(f->hosts[p->member_host[k]].name, host) == 0)
				return true;
		return false;
	}
	/* A held partition keeps its circuits and its schedule through a
	 * drain (only the free ports' circuits go): its jobs have nothing new
	 * to take, so none is waited for. */
	for (uint32_t i = 0; i < d->w->nheld; i++)
		if (strcmp(d->w->held[i].p.name, part) == 0)
			return false;
	(void)host;
	*known = false;
	return false;
}

struct on_ports {
	const struct ofcd *d;
	const struct drain_want *w;
};

/* A running job's schedule may use w's circuits: it runs on the fabric,
 * on a partition with a host cabled to one of w's ports, or on one ofcd
 * no longer knows. */
static bool job_on_ports(void *ctx, const char *part)
{
	const struct on_ports *o = ctx;
	char hp[NAME_MAX_LEN + 16];
	bool known = true;

	if (!part || !*part)
		return true;
	for (uint32_t k = 0; k < o->w->n; k++) {
		if (!drained_host_port(o->d->w->cfg->f, o->w->v[k].sw, o->w->v[k].port, hp,
				       sizeof(hp)))
			continue;
		*strrchr(hp, ':') = 0;
		if (partition_has_host(o->d, part, hp, &known) || !known)
			return true;
	}
	return false;
}

/* Drain: checked, kept, published, a grace, then the circuits removed. */
static void run_drain(struct ofcd *d, struct job *j, struct drain_want *w, struct answer *an)
{
	struct ofc_error err = {0};
	struct strbuf cut = STRBUF_INIT, say = STRBUF_INIT, cause = STRBUF_INIT, jobs = STRBUF_INIT;
	struct drain_want old = drained_copy_set(d);
	char sentence[1000];
	uint32_t ncut;

	hosts_cut_off(d, w, &cut, &ncut);
	if (ncut && !j->force) {
		ofc_error_set(&err, OFC_E_INPUT,
			      "draining %s would cut %u host%s off from the rest of the fabric: "
			      "%s; nothing drained (--force drains anyway)",
			      j->target, ncut, ncut == 1 ? "" : "s", cut.buf);
		refuse(d, j, an, &err);
		goto out;
	}
	drained_add(d, j, w);
	if (drained_save(d, &err) < 0) {
		drained_restore(d, &old);
		refuse(d, j, an, &err);
		goto out;
	}
	sb_printf(&cause, "%s draining (%u switch port%s)", j->target, w->n, w->n == 1 ? "" : "s");
	ofcd_replan(d, j, cause.buf, sentence, sizeof(sentence));
	ofcd_publish_now(d, j);
	ofcd_log(d, OFCD_LOG_NOTICE,
		 "%s: the schedule without them published; waiting for the running jobs, %u ms "
		 "at most",
		 cause.buf, j->grace_ms);
	struct on_ports on = {d, w};
	ofcd_grace_wait(d, j->grace_ms, job_on_ports, &on, &jobs);
	ofcd_log(d, OFCD_LOG_NOTICE, "%s: %s", cause.buf, jobs.buf);
	sb_reset(&cause);
	if (ofcd_apply_topology(d, NULL, &say, NULL, &err) < 0) {
		/* The schedule stays off the ports; the circuits are up still. */
		sb_printf(&cause,
			  "%s drained in the schedules, but its circuits are still up: %s%s",
			  j->target, err.msg, say.buf ? say.buf : "");
		ofcd_replan(d, j, cause.buf, sentence, sizeof(sentence));
		answer_status(an, OFC__V1__STATUS__STATUS_FAILED,
			      "%s; `ofc drain` again removes them, `ofc undrain` puts the ports "
			      "back",
			      cause.buf);
		an->t.state = "failed";
		j->outcome = "failed";
		goto out;
	}
	sb_printf(&cause, "%s drained (%u switch port%s; %s; circuits removed: %s)%s%s", j->target,
		  w->n, w->n == 1 ? "" : "s", jobs.buf, say.buf, ncut ? ", forced: cut off " : "",
		  ncut ? cut.buf : "");
	held_on(d, w, &cause);
	ofcd_replan(d, j, cause.buf, sentence, sizeof(sentence));
	answer_status(an,
		      d->w->pub->no_schedule && !j->force ? OFC__V1__STATUS__STATUS_FAILED
							  : OFC__V1__STATUS__STATUS_OK,
		      "%s", sentence);
	an->t.state = "drained";
	j->outcome = "drained";
out:
	want_free(&old);
	sb_free(&cut);
	sb_free(&say);
	sb_free(&cause);
	sb_free(&jobs);
}

/* Undrain: the circuits back (verified), then the set and the schedule. */
static void run_undrain(struct ofcd *d, struct job *j, struct drain_want *w, struct answer *an)
{
	struct ofc_error err = {0};
	struct strbuf say = STRBUF_INIT, cause = STRBUF_INIT;
	struct drain_want old = drained_copy_set(d);
	char sentence[1000];

	for (uint32_t i = 0; i < w->n; i++) {
		int at = drained_at(d, w->v[i].sw, w->v[i].port);
		struct drain_entry *e = &d->w->drained[at];

		free(e->sw);
		free(e->by);
		memmove(e, e + 1, (d->w->ndrained - (uint32_t)at - 1) * sizeof(*e));
		d->w->ndrained--;
	}
	if (drained_save(d, &err) < 0) {
		drained_restore(d, &old);
		refuse(d, j, an, &err);
		goto out;
	}
	if (ofcd_apply_topology(d, NULL, &say, NULL, &err) < 0) {
		struct ofc_error e2 = {0};

		sb_printf(&cause, "%s not undrained: %s%s", j->target, err.msg,
			  say.buf ? say.buf : "");
		drained_restore(d, &old);
		if (drained_save(d, &e2) < 0)
			ofcd_log_error(d, "the drained ports not written back: ", &e2);
		answer_status(an, OFC__V1__STATUS__STATUS_FAILED, "%s", cause.buf);
		an->t.state = "refused";
		j->outcome = "refused";
		goto out;
	}
	sb_printf(&cause, "%s undrained (%u switch port%s; circuits back: %s)", j->target, w->n,
		  w->n == 1 ? "" : "s", say.buf);
	ofcd_replan(d, j, cause.buf, sentence, sizeof(sentence));
	answer_status(an,
		      d->w->pub->no_schedule ? OFC__V1__STATUS__STATUS_FAILED
					     : OFC__V1__STATUS__STATUS_OK,
		      "%s", sentence);
	an->t.state = "undrained";
	j->outcome = "undrained";
out:
	want_free(&old);
	sb_free(&say);
	sb_free(&cause);
}

void ofcd_run_drain(struct ofcd *d, struct job *j)
{
	struct answer an;
	struct ofc_error err = {0};
	struct drain_want w = {0};

	answer_init(&an, j);
	if (d->w->damaged) {
		ofc_error_set(&err, OFC_E_RUNTIME, "refused: %.400s; fix or remove it first",
			      d->w->damaged);
		refuse(d, j, &an, &err);
	} else {
		int rc = 0;

		for (uint32_t i = 0; i < j->nitems && rc == 0; i++)
			rc = j->restore ? resolve_undrain(d, j->items[i], &w, &err)
					: resolve_drain(d, j->items[i], &w, &err);
		if (rc < 0)
			refuse(d, j, &an, &err);
		else if (j->restore)
			run_undrain(d, j, &w, &an);
		else
			run_drain(d, j, &w, &an);
	}
	want_free(&w);
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}
