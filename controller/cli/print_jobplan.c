/* ofc plan --workload: the job's plan (controller/jobplan) as text (the
 * candidates, every phase's time on each, the ways to run an iteration
 * phase by phase, the choice and why) and as JSON, the message
 * controller/export builds. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"

#include <math.h>
#include <string.h>

static void dur(char *b, size_t n, double us)
{
	if (!isfinite(us))
		snprintf(b, n, "-");
	else
		fmt_duration_long(b, n, us * 1e-6);
}

static const char *kind_of(const struct jobplan_result *r, uint32_t p)
{
	const struct wl_phase *ph = &r->workload->phases[p];

	return ph->collective ? r->workload->kinds[ph->kind].name : "all";
}

static void switches_text(const struct fabric *f, FILE *out)
{
	for (uint32_t s = 0; s < f->nswitches; s++) {
		const struct fswitch *sw = &f->switches[s];
		char b[32];

		fmt_duration(b, sizeof(b),
			     sw->kind == SWITCH_PATCH_PANEL ? sw->move_time : sw->reconfig_time);
		fprintf(out, "%s%s (%s, %s %s)", s ? ", " : "", sw->name,
			sw->kind == SWITCH_PATCH_PANEL ? "patch panel" : "OCS", b,
			sw->kind == SWITCH_PATCH_PANEL ? "a move" : "a reconfiguration");
	}
}

static void way_text(const struct jobplan_result *r, enum jobplan_kind k, FILE *out)
{
	const struct jobplan_way *w = &r->way[k];
	char it[32], first[32];

	if (!w->have) {
		fprintf(out, "%-10s (none: %s)\n", jobplan_kind_name(k), w->why_not);
		return;
	}
	dur(it, sizeof(it), w->iter_us);
	dur(first, sizeof(first), w->first_us);
	fprintf(out, "%-10s %s an iteration (the first: %s of switching before it)\n",
		jobplan_kind_name(k), it, first);
	for (uint32_t p = 0; p < r->nphases; p++) {
		const struct wl_phase *ph = &r->workload->phases[p];
		const struct jobplan_cost *c = &r->cost[(size_t)p * r->ntopo + w->topo[p]];
		char t[32], sw[32], full[32];

		dur(t, sizeof(t), w->phase_us[p]);
		fprintf(out, "  %-12s x%-3u %-40.40s %10s", ph->name, ph->count,
			r->topo[w->topo[p]].name, t);
		if (w->changes[p]) {
			dur(full, sizeof(full), w->switch_full[p]);
			dur(sw, sizeof(sw), w->switch_us[p]);
			fprintf(out, "  after %u move%s: %s switching, %s of it exposed",
				w->changes[p], w->changes[p] == 1 ? "" : "s", full, sw);
		}
		fprintf(out, "  [%s]\n", c->how);
	}
}

void print_jobplan_text(const struct jobplan_result *r, FILE *out)
{
	const struct workload *w = r->workload;
	const struct fabric *f = r->fabric;
	uint32_t by[6] = {0};

	fprintf(out, "workload %s on %s: %u hosts of %u ports, %u phase%s, %u iteration%s; ",
		w->name ? w->name : "(unnamed)", f->name, f->nhosts, r->ports, r->nphases,
		r->nphases == 1 ? "" : "s", w->iterations ? w->iterations : 1,
		w->iterations == 1 || !w->iterations ? "" : "s");
	switches_text(f, out);
	if (r->overhead.txn_s > 0 || r->overhead.change_s > 0) {
		char a[32], b[32];

		fmt_duration(a, sizeof(a), r->overhead.txn_s);
		fmt_duration(b, sizeof(b), r->overhead.change_s);
		fprintf(out, "; and %s a transaction + %s a changed circuit beyond them", a, b);
	}
	fprintf(out, "\n");
	for (uint32_t t = 0; t < r->ntopo; t++)
		by[r->topo[t].origin]++;
	fprintf(out,
		"%u candidate topologies: config %u, in place %u, finder %u, groups %u, traffic "
		"%u (%.1f s to price)\n\n",
		r->ntopo, by[JOBPLAN_CONFIG], by[JOBPLAN_IN_PLACE], by[JOBPLAN_FINDER],
		by[JOBPLAN_UNION], by[JOBPLAN_TRAFFIC], r->seconds);
	if (r->notes[0])
		fprintf(out, "note: %s\n\n", r->notes);
	fprintf(out, "%-12s %-6s %-14s %10s %5s  %-40s %10s\n", "phase", "group", "collective",
		"size", "count", "fastest on", "time");
	for (uint32_t p = 0; p < r->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];
		uint32_t best = UINT32_MAX;
		char size[32], t[32];

		for (uint32_t k = 0; k < r->ntopo; k++) {
			const struct jobplan_cost *c = &r->cost[(size_t)p * r->ntopo + k];

			if (c->ok &&
			    (best == UINT32_MAX || c->us < r->cost[(size_t)p * r->ntopo + best].us))
				best = k;
		}
		if (ph->collective)
			fmt_size(size, sizeof(size), ph->size);
		else
			snprintf(size, sizeof(size), "matrix");
		dur(t, sizeof(t),
		    best == UINT32_MAX ? NAN : r->cost[(size_t)p * r->ntopo + best].us);
		fprintf(out, "%-12s %-6s %-14s %10s %5u  %-40.40s %10s\n", ph->name, kind_of(r, p),
			workload_collective_name(ph->collective), size, ph->count,
			best == UINT32_MAX ? "-" : r->topo[best].name, t);
	}
	fprintf(out, "\n");
	for (int k = 0; k < JOBPLAN_KINDS; k++)
		way_text(r, (enum jobplan_kind)k, out);
	fprintf(out, "\n%s\n", r->why);
}

/* --json: the plan as ofc.v1.Plan, the message ofcd answers GetPlan with
 * (docs/json.md). */
void print_jobplan_json(const struct jobplan_result *r, bool sweep, FILE *out)
{
	struct arena a = {0};
	struct json_writer j;

	jw_init(&j, out, true);
	pb_write_json(&j, &plan_msg(&a, r, sweep)->base);
	jw_finish(&j);
	arena_free(&a);
}
