/* ofc plan --workload: the job's plan (controller/jobplan) as text and
 * JSON: the candidates, every phase's time on each, the ways to run an
 * iteration phase by phase, the choice and why. */
#include "controller/cli/internal.h"

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

static void way_json(const struct jobplan_result *r, const struct jobplan_way *w,
		     struct json_writer *j)
{
	jw_obj_begin(j);
	jw_key(j, "have");
	jw_bool(j, w->have);
	if (!w->have) {
		jw_key(j, "why_not");
		jw_str(j, w->why_not);
		jw_obj_end(j);
		return;
	}
	jw_key(j, "iteration_us");
	jw_double(j, w->iter_us);
	jw_key(j, "first_switch_us");
	jw_double(j, w->first_us);
	double iters = r->workload->iterations ? r->workload->iterations : 1;
	jw_key(j, "job_us");
	jw_double(j, w->first_us + iters * w->iter_us);
	jw_key(j, "phases");
	jw_arr_begin(j);
	for (uint32_t p = 0; p < r->nphases; p++) {
		jw_obj_begin(j);
		jw_key(j, "phase");
		jw_str(j, r->workload->phases[p].name);
		jw_key(j, "topology");
		jw_uint(j, w->topo[p]);
		jw_key(j, "topology_name");
		jw_str(j, r->topo[w->topo[p]].name);
		if (r->topo[w->topo[p]].spec) {
			jw_key(j, "topology_spec");
			jw_str(j, r->topo[w->topo[p]].spec);
		}
		jw_key(j, "time_us");
		jw_double(j, w->phase_us[p]);
		jw_key(j, "switch_us");
		jw_double(j, w->switch_us[p]);
		jw_key(j, "switch_full_us");
		jw_double(j, w->switch_full[p]);
		jw_key(j, "moves");
		jw_uint(j, w->changes[p]);
		jw_obj_end(j);
	}
	jw_arr_end(j);
	jw_obj_end(j);
}

void print_jobplan_json(const struct jobplan_result *r, bool sweep, FILE *out)
{
	struct json_writer j;
	const struct workload *w = r->workload;

	jw_init(&j, out, true);
	jw_obj_begin(&j);
	jw_key(&j, "workload");
	jw_str(&j, w->name ? w->name : "");
	jw_key(&j, "fabric");
	jw_str(&j, r->fabric->name);
	jw_key(&j, "hosts");
	jw_uint(&j, r->fabric->nhosts);
	jw_key(&j, "ports");
	jw_uint(&j, r->ports);
	jw_key(&j, "iterations");
	jw_uint(&j, w->iterations ? w->iterations : 1);
	jw_key(&j, "seconds");
	jw_double(&j, r->seconds);
	jw_key(&j, "switches");
	jw_arr_begin(&j);
	for (uint32_t s = 0; s < r->fabric->nswitches; s++) {
		const struct fswitch *sw = &r->fabric->switches[s];

		jw_obj_begin(&j);
		jw_key(&j, "name");
		jw_str(&j, sw->name);
		jw_key(&j, "type");
		jw_str(&j, sw->kind == SWITCH_PATCH_PANEL ? "patch-panel" : "ocs");
		jw_key(&j, "switch_s");
		jw_double(&j, sw->kind == SWITCH_PATCH_PANEL ? sw->move_time : sw->reconfig_time);
		jw_obj_end(&j);
	}
	jw_arr_end(&j);
	if (r->notes[0]) {
		jw_key(&j, "notes");
		jw_str(&j, r->notes);
	}
	jw_key(&j, "switch_overhead");
	jw_obj_begin(&j);
	jw_key(&j, "transaction_s");
	jw_double(&j, r->overhead.txn_s);
	jw_key(&j, "change_s");
	jw_double(&j, r->overhead.change_s);
	jw_obj_end(&j);
	jw_key(&j, "candidates");
	jw_arr_begin(&j);
	for (uint32_t t = 0; t < r->ntopo; t++) {
		jw_obj_begin(&j);
		jw_key(&j, "name");
		jw_str(&j, r->topo[t].name);
		if (r->topo[t].spec) {
			jw_key(&j, "spec");
			jw_str(&j, r->topo[t].spec);
		}
		jw_key(&j, "origin");
		jw_str(&j, jobplan_origin_name(r->topo[t].origin));
		jw_key(&j, "connected");
		jw_bool(&j, r->topo[t].connected);
		jw_key(&j, "circuits");
		jw_uint(&j, r->topo[t].ncircuits);
		jw_obj_end(&j);
	}
	jw_arr_end(&j);
	jw_key(&j, "phases");
	jw_arr_begin(&j);
	for (uint32_t p = 0; p < r->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];

		jw_obj_begin(&j);
		jw_key(&j, "name");
		jw_str(&j, ph->name);
		jw_key(&j, "collective");
		jw_str(&j, workload_collective_name(ph->collective));
		jw_key(&j, "group");
		jw_str(&j, kind_of(r, p));
		jw_key(&j, "groups");
		jw_uint(&j, w->kinds[ph->kind].ngroups);
		jw_key(&j, "group_size");
		jw_uint(&j, w->kinds[ph->kind].size);
		jw_key(&j, "size");
		jw_uint(&j, ph->size);
		jw_key(&j, "count");
		jw_uint(&j, ph->count);
		jw_key(&j, "on");
		jw_arr_begin(&j);
		for (uint32_t t = 0; t < r->ntopo; t++) {
			const struct jobplan_cost *c = &r->cost[(size_t)p * r->ntopo + t];

			jw_obj_begin(&j);
			jw_key(&j, "ok");
			jw_bool(&j, c->ok);
			jw_key(&j, "seconds");
			jw_double(&j, c->seconds);
			if (c->ok) {
				jw_key(&j, "time_us");
				jw_double(&j, c->us);
				jw_key(&j, "latency_us");
				jw_double(&j, c->lat_us);
				jw_key(&j, "bandwidth_us");
				jw_double(&j, c->bw_us);
				jw_key(&j, "steps");
				jw_uint(&j, c->steps);
				jw_key(&j, "how");
				jw_str(&j, c->how);
				jw_key(&j, "algorithm");
				jw_str(&j, c->algo);
				jw_key(&j, "verified");
				jw_bool(&j, c->verified);
				if (c->theta > 0) {
					jw_key(&j, "theta");
					jw_double(&j, c->theta);
				}
				if (c->mcf_s > 0) {
					jw_key(&j, "mcf_seconds");
					jw_double(&j, c->mcf_s);
				}
			} else {
				jw_key(&j, "why");
				jw_str(&j, c->why);
			}
			jw_obj_end(&j);
		}
		jw_arr_end(&j);
		jw_obj_end(&j);
	}
	jw_arr_end(&j);
	jw_key(&j, "ways");
	jw_obj_begin(&j);
	for (int k = 0; k < JOBPLAN_KINDS; k++) {
		jw_key(&j, jobplan_kind_name((enum jobplan_kind)k));
		way_json(r, &r->way[k], &j);
	}
	jw_obj_end(&j);
	jw_key(&j, "chosen");
	jw_str(&j, jobplan_kind_name(r->chosen_kind));
	jw_key(&j, "why");
	jw_str(&j, r->why);
	if (sweep) {
		jw_key(&j, "sweep");
		jobplan_sweep_json(r, &j);
	}
	jw_obj_end(&j);
	jw_finish(&j);
}
