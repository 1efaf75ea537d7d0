/* jobplan_compute: the candidates, every phase priced on every one, the ways
 * to run the iteration, the choice and why (see plan.h). */
#include "controller/jobplan/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *jobplan_kind_name(enum jobplan_kind k)
{
	static const char *const name[] = {[JOBPLAN_STATIC] = "static",
					   [JOBPLAN_PER_PHASE] = "per-phase",
					   [JOBPLAN_KEEP] = "in place",
					   [JOBPLAN_CHOSEN] = "chosen"};

	return (size_t)k < JOBPLAN_KINDS ? name[k] : "?";
}

void jobplan_result_free(struct jobplan_result *r)
{
	for (uint32_t t = 0; t < r->ntopo; t++)
		jobplan_topo_free(&r->topo[t]);
	free(r->topo);
	for (size_t i = 0; r->cost && i < (size_t)r->nphases * r->ntopo; i++)
		free(r->cost[i].ports_used);
	free(r->cost);
	for (int k = 0; k < JOBPLAN_KINDS; k++)
		jobplan_way_free(&r->way[k]);
	for (size_t i = 0; r->diff && i < (size_t)r->ntopo * r->ntopo; i++)
		free(r->diff[i].c);
	free(r->diff);
	memset(r, 0, sizeof(*r));
}

static void fmt_us(char *buf, size_t n, double us)
{
	fmt_duration_long(buf, n, us * 1e-6);
}

/* "attn-ag, moe-a2a on X; grads on Y" */
static void assignment_text(const struct jobplan_result *r, const struct jobplan_way *w, char *buf,
			    size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t p = 0; p < r->nphases; p++) {
		bool same_next = p + 1 < r->nphases && w->topo[p + 1] == w->topo[p];

		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
					r->workload->phases[p].name, same_next ? ", " : "");
		if (!same_next)
			len += (size_t)snprintf(buf + len, len < n ? n - len : 0, " on %s%s",
						r->topo[w->topo[p]].name,
						p + 1 < r->nphases ? "; " : "");
		if (len >= n)
			break;
	}
}

static double switching(const struct jobplan_result *r, const struct jobplan_way *w, double *full,
			uint32_t *times)
{
	double exposed = 0;

	*full = 0;
	*times = 0;
	for (uint32_t p = 0; p < r->nphases; p++) {
		exposed += w->switch_us[p];
		*full += w->switch_full[p];
		*times += w->changes[p] > 0;
	}
	return exposed;
}

static double job_us(const struct jobplan_result *r, const struct jobplan_way *w)
{
	return w->first_us + (r->workload->iterations ? r->workload->iterations : 1) * w->iter_us;
}

static void why_text(struct jobplan_result *r)
{
	const struct jobplan_way *c = &r->way[JOBPLAN_CHOSEN];
	char it[32], as[600], sw[32], hid[32], buf[32], jb[32];
	double full;
	uint32_t times;
	size_t len;

	if (!c->have) {
		snprintf(r->why, sizeof(r->why), "no way runs every phase");
		return;
	}
	assignment_text(r, c, as, sizeof(as));
	fmt_us(it, sizeof(it), c->iter_us);
	fmt_us(jb, sizeof(jb), job_us(r, c));
	double exposed = switching(r, c, &full, &times);
	fmt_us(sw, sizeof(sw), exposed);
	fmt_us(hid, sizeof(hid), full - exposed);
	len = (size_t)snprintf(
	    r->why, sizeof(r->why), "chose %s%s%s: %s an iteration, %s the job (%s)",
	    r->chosen_kind == JOBPLAN_CHOSEN ? "" : "the ",
	    r->chosen_kind == JOBPLAN_CHOSEN ? "a mix" : jobplan_kind_name(r->chosen_kind),
	    r->chosen_kind == JOBPLAN_STATIC ? " topology" : "", it, jb, as);
	if (times)
		len += (size_t)snprintf(r->why + len, sizeof(r->why) - len,
					", switching %u time%s an iteration, %s exposed, %s hidden "
					"behind phases",
					times, times == 1 ? "" : "s", sw, hid);
	for (int k = JOBPLAN_STATIC; k <= JOBPLAN_KEEP && len < sizeof(r->why); k++) {
		const struct jobplan_way *w = &r->way[k];

		if (!w->have || (int)r->chosen_kind == k)
			continue;
		fmt_us(buf, sizeof(buf), w->iter_us);
		fmt_us(jb, sizeof(jb), job_us(r, w));
		len += (size_t)snprintf(
		    r->why + len, sizeof(r->why) - len, "; %s %s an iteration, %s the job (%.2fx)",
		    jobplan_kind_name((enum jobplan_kind)k), buf, jb, job_us(r, w) / job_us(r, c));
	}
}

/* A WDM ring: its collectives are OpTree's and the baselines'
 * over every node, the MRRs retuned stage by stage inside each schedule
 * (its time counts mrr_tuning_delay), so the ring is the one candidate and
 * the ways are one. A workload fits a ring when every phase is a
 * collective over every host. */
static int ring_workload(const struct jobplan_ctx *c, struct ofc_error *err)
{
	const struct workload *w = c->w;

	for (uint32_t p = 0; p < w->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];

		if (!ph->collective || ph->collective == WL_SENDRECV ||
		    w->kinds[ph->kind].size != c->n || ph->matrix)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "%s is a WDM ring: phase %s does not fit it (a ring "
			    "runs collectives over every host, uniform all-to-alls "
			    "among them)",
			    c->f->name, ph->name);
	}
	return 0;
}

int jobplan_compute(const struct jobplan_query *q, struct jobplan_result *r, struct ofc_error *err)
{
	const struct fabric *f = q->fabric;
	const struct workload *w = q->workload;
	struct jobplan_ctx c = {.q = q, .r = r, .f = f, .w = w};
	double t0 = now_seconds();

	memset(r, 0, sizeof(*r));
	r->fabric = f;
	r->workload = w;
	r->overhead = q->overhead;
	r->serial_switching = q->serial_switching;
	if (!w || !w->validated)
		return ofc_error_set(err, OFC_E_INPUT, "no validated workload to plan");
	c.n = f->nhosts;
	if (f->nrings && ring_workload(&c, err) < 0)
		return -1;
	c.d = UINT32_MAX;
	for (uint32_t h = 0; h < f->nhosts; h++)
		c.d = f->hosts[h].ports < c.d ? f->hosts[h].ports : c.d;
	if (f->nrings && (c.d == 0 || c.d == UINT32_MAX))
		c.d = 1; /* (a ring's hosts need no ports of their own) */
	if (c.d == 0 || c.d == UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT, "%s: hosts without ports", f->name);
	r->ports = c.d;
	r->nphases = w->nphases;
	if (f->nrings) {
		struct jobplan_topo *t = xcalloc(1, sizeof(*t));

		snprintf(t->name, sizeof(t->name), "ring %s (MRRs retuned per stage)",
			 f->rings[0].name);
		t->origin = JOBPLAN_CONFIG;
		r->topo = t;
		r->ntopo = 1;
	} else if (jobplan_candidates(&c, err) < 0) {
		jobplan_result_free(r);
		return -1;
	}
	r->cost = xcalloc((size_t)r->nphases * r->ntopo + 1, sizeof(*r->cost));
	size_t np = (size_t)r->ports * f->nhosts + 1;
	for (uint32_t p = 0; p < r->nphases; p++) {
		bool any = false;
		int same = jobplan_same_phase(w, p);

		for (uint32_t t = 0; same >= 0 && t < r->ntopo; t++) {
			struct jobplan_cost *k = &r->cost[(size_t)p * r->ntopo + t];

			*k = r->cost[(size_t)same * r->ntopo + t];
			k->ports_used = xmalloc(np);
			memcpy(k->ports_used, r->cost[(size_t)same * r->ntopo + t].ports_used, np);
			any |= k->ok;
		}
		for (uint32_t t = 0; same < 0 && t < r->ntopo; t++) {
			char what[96];

			snprintf(what, sizeof(what), "phase %s on %.60s", w->phases[p].name,
				 r->topo[t].name);
			clock_progress(q->clock, what,
				       ((double)p * r->ntopo + t) /
					   ((double)r->nphases * r->ntopo));
			double t1 = now_seconds();

			jobplan_price(&c, p, t, &r->cost[(size_t)p * r->ntopo + t]);
			r->cost[(size_t)p * r->ntopo + t].seconds = now_seconds() - t1;
			any |= r->cost[(size_t)p * r->ntopo + t].ok;
			if (clock_expired(q->clock)) {
				jobplan_result_free(r);
				return ofc_error_set(err, OFC_E_RUNTIME,
						     "time limit reached pricing phase %s",
						     w->phases[p].name);
			}
		}
		if (!any) {
			const struct jobplan_cost *c0 = &r->cost[(size_t)p * r->ntopo];
			int rc = ofc_error_set(err, OFC_E_INPUT,
					       "phase %s runs on no candidate topology (on %s: %s)",
					       w->phases[p].name, r->topo[0].name, c0->why);

			jobplan_result_free(r);
			return rc;
		}
	}
	r->diff = xcalloc((size_t)r->ntopo * r->ntopo + 1, sizeof(*r->diff));
	for (uint32_t a = 0; a < r->ntopo; a++)
		for (uint32_t b = 0; b < r->ntopo; b++)
			if (a != b)
				jobplan_diff_make(&r->topo[a], &r->topo[b],
						  &r->diff[(size_t)a * r->ntopo + b]);
	jobplan_ways(r, -1, 1, r->way, &r->chosen_kind);
	why_text(r);
	r->seconds = now_seconds() - t0;
	return 0;
}
