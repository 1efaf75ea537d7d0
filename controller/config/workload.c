/* A workload against its fabric: the kinds of groups resolved to
 * hosts (written out, from parallelism degrees, and `all`), every phase
 * checked and its matrix read. Errors at the workload file's FILE:LINE:COL
 * (a config's section: the config; --workload FILE: that file). */
#include "controller/config/config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Traffic matrices are N x N doubles: up to this many hosts (128 MiB). */
#define WL_MAX_MATRIX_HOSTS 4096u

static int wl_error(struct ofc_error *err, const struct workload *w, struct src_loc loc,
		    const char *fmt, ...) OFC_PRINTF(4, 5);
static int wl_error(struct ofc_error *err, const struct workload *w, struct src_loc loc,
		    const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ofc_error_at(err, OFC_E_INPUT, w->file ? w->file : "workload",
			    loc.line ? loc.line : 1, loc.col ? loc.col : 1, "%s", msg);
}

static struct wl_kind *new_kind(struct workload *w, const char *name, uint32_t ngroups,
				uint32_t size, struct src_loc loc)
{
	struct wl_kind *k;

	w->kinds = xreallocarray(w->kinds, w->nkinds + 1, sizeof(*w->kinds));
	k = &w->kinds[w->nkinds++];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->ngroups = ngroups;
	k->size = size;
	k->loc = loc;
	k->host = xcalloc((size_t)ngroups * size + 1, sizeof(uint32_t));
	return k;
}

/* The groups written out: hosts by name, disjoint, of one size. */
static int listed_kind(const struct fabric *f, struct workload *w, const struct wl_group_list *g,
		       uint8_t *used, struct ofc_error *err)
{
	uint32_t size = g->first[1] - g->first[0];

	if (workload_find_kind(w, g->name) >= 0 || strcmp(g->name, "all") == 0)
		return wl_error(err, w, g->loc, "a kind of groups named '%s' already exists%s",
				g->name, strcmp(g->name, "all") == 0 ? " (all hosts)" : "");
	for (uint32_t i = 0; i < g->ngroups; i++)
		if (g->first[i + 1] - g->first[i] != size)
			return wl_error(err, w, g->member_locs[g->first[i]],
					"group %u of '%s' has %u hosts, its first %u: the groups "
					"of a kind are of one size",
					i + 1, g->name, g->first[i + 1] - g->first[i], size);
	if (size < 2)
		return wl_error(err, w, g->members_loc,
				"groups of '%s' have one host: nothing to exchange", g->name);
	struct wl_kind *k = new_kind(w, g->name, g->ngroups, size, g->loc);
	memset(used, 0, f->nhosts);
	for (uint32_t i = 0; i < g->nmembers; i++) {
		int h = fabric_find_host(f, g->members[i]);

		if (h < 0)
			return wl_error(err, w, g->member_locs[i], "no host named '%s' in %s",
					g->members[i], f->file);
		if (used[h])
			return wl_error(err, w, g->member_locs[i],
					"host %s is in two groups of '%s' (or twice in one)",
					g->members[i], g->name);
		used[h] = 1;
		k->host[i] = (uint32_t)h;
	}
	return 0;
}

/* tp, dp, pp over the hosts in order (rank r: tp fastest, then dp, then
 * pp, as Megatron-LM numbers them), ep within dp. */
static int degree_kinds(const struct fabric *f, struct workload *w, struct ofc_error *err)
{
	const struct wl_parallelism *p = &w->parallelism;
	uint64_t tp = p->tp ? p->tp : 1, pp = p->pp ? p->pp : 1, dp = p->dp ? p->dp : 1;
	uint32_t n = f->nhosts;

	if (!p->tp && !p->pp && !p->dp && !p->ep)
		return wl_error(err, w, p->loc, "'parallelism' gives no degree (tp, pp, dp, ep)");
	if (tp * pp * dp != n)
		return wl_error(
		    err, w, p->loc, "tp x dp x pp = %llu x %llu x %llu = %llu, and %s has %u hosts",
		    (unsigned long long)tp, (unsigned long long)dp, (unsigned long long)pp,
		    (unsigned long long)(tp * pp * dp), f->name, n);
	if (p->ep && dp % p->ep)
		return wl_error(err, w, p->ep_loc,
				"ep %u does not divide dp %llu: expert groups are cut from the "
				"data-parallel ones",
				p->ep, (unsigned long long)dp);
	static const char *const names[] = {"tp", "dp", "pp", "ep"};
	const uint32_t degree[] = {p->tp, p->dp, p->pp, p->ep};
	const struct src_loc locs[] = {p->tp_loc, p->dp_loc, p->pp_loc, p->ep_loc};

	for (int kd = 0; kd < 4; kd++) {
		uint32_t size = degree[kd];

		if (!size)
			continue;
		if (workload_find_kind(w, names[kd]) >= 0)
			return wl_error(err, w, locs[kd],
					"a kind of groups named '%s' is written out too",
					names[kd]);
		struct wl_kind *k = new_kind(w, names[kd], n / size, size, locs[kd]);
		uint32_t g = 0;

		/* Member i of each group, in order: a group is the ranks that
		 * differ in this degree's coordinate alone (ep: within one
		 * chunk of ep consecutive dp ranks). */
		for (uint32_t r = 0; r < n; r++) {
			uint32_t t = (uint32_t)(r % tp), d = (uint32_t)(r / tp % dp),
				 s = (uint32_t)(r / (tp * dp)), i;

			if (kd == 0 ? t : kd == 2 ? s : kd == 1 ? d : d % size)
				continue; /* not a group's first member */
			for (i = 0; i < size; i++) {
				uint64_t rank = kd == 0	  ? r + i
						: kd == 1 ? r + i * tp
						: kd == 2 ? r + i * tp * dp
							  : r + i * tp;
				k->host[(size_t)g * size + i] = (uint32_t)rank;
			}
			g++;
		}
	}
	return 0;
}

static char *in_dir(const struct workload *w, const char *path)
{
	return path[0] == '/' || !w->dir ? xstrdup(path) : xasprintf("%s/%s", w->dir, path);
}

/* A phase's matrix: read, of its size (k x k demand, N x N traffic). */
static int phase_matrix(const struct fabric *f, struct workload *w, struct wl_phase *ph,
			const char *path, struct src_loc loc, uint32_t want, struct ofc_error *err)
{
	char *file;
	int rc;

	if (!*path)
		return wl_error(err, w, loc, "an empty file name");
	if (want > WL_MAX_MATRIX_HOSTS)
		return wl_error(err, w, loc, "matrices are for up to %u hosts; %s has %u",
				WL_MAX_MATRIX_HOSTS, f->name, want);
	/* A config a client sent ofcd reads no files but under the daemon's
	 * policy (its edge lists'); matrices are not read there at all. */
	if (f->files)
		return wl_error(err, w, loc,
				"phase %s: a config sent to ofcd names no matrix files (give "
				"the workload to ofc plan)",
				ph->name);
	file = in_dir(w, path);
	rc = matrix_read(file, want, &ph->matrix, &ph->matrix_n, err);
	if (rc < 0 && !err->line) { /* it could not be read: say which phase */
		char msg[sizeof(err->msg) + sizeof(err->file) + 2];

		snprintf(msg, sizeof(msg), "%s%s%s", err->file, err->file[0] ? ": " : "", err->msg);
		wl_error(err, w, loc, "phase %s: %s", ph->name, msg);
	}
	if (rc == 0 && ph->matrix_n != want)
		rc = wl_error(err, w, loc, "%s is %u x %u; phase %s needs %u x %u (%s)", path,
			      ph->matrix_n, ph->matrix_n, ph->name, want, want,
			      ph->traffic ? "every host" : "its groups' members");
	if (rc == 0) {
		double sum = 0;

		for (uint32_t i = 0; i < want; i++)
			for (uint32_t j = 0; j < want; j++)
				sum += i != j ? ph->matrix[(size_t)i * want + j] : 0;
		if (!(sum > 0))
			rc = wl_error(err, w, loc, "%s asks for nothing (every pair 0)", path);
	}
	free(file);
	return rc;
}

static int check_phase(const struct fabric *f, struct workload *w, uint32_t i,
		       struct ofc_error *err)
{
	struct wl_phase *ph = &w->phases[i];

	for (uint32_t j = 0; j < i; j++)
		if (strcmp(w->phases[j].name, ph->name) == 0)
			return wl_error(err, w, ph->name_loc, "two phases named '%s'", ph->name);
	if (ph->traffic) {
		if (ph->collective_set || ph->group || ph->size_set || ph->demand || ph->reverse)
			return wl_error(err, w, ph->traffic_loc,
					"phase %s: a traffic matrix says who sends what to whom; "
					"no collective, group, size, demand or reverse with it",
					ph->name);
		ph->kind = (uint32_t)workload_find_kind(w, "all");
		return phase_matrix(f, w, ph, ph->traffic, ph->traffic_loc, f->nhosts, err);
	}
	if (!ph->collective_set)
		return wl_error(err, w, ph->loc, "phase %s: give a collective, or a traffic matrix",
				ph->name);
	if (!ph->size_set)
		return wl_error(err, w, ph->collective_loc, "phase %s: %s needs a size", ph->name,
				workload_collective_name(ph->collective));
	int k = workload_find_kind(w, ph->group ? ph->group : "all");
	if (k < 0) {
		struct strbuf sb = STRBUF_INIT;

		for (uint32_t j = 0; j < w->nkinds; j++)
			sb_printf(&sb, "%s%s", j ? ", " : "", w->kinds[j].name);
		wl_error(err, w, ph->group_loc, "phase %s: no kind of groups named '%s' (%s)",
			 ph->name, ph->group, sb.buf);
		sb_free(&sb);
		return -1;
	}
	ph->kind = (uint32_t)k;
	if (w->kinds[k].size < 2)
		return wl_error(err, w, ph->group_loc,
				"phase %s: the groups of %s have one host: nothing to exchange",
				ph->name, w->kinds[k].name);
	if (ph->reverse && ph->collective != WL_SENDRECV)
		return wl_error(err, w, ph->loc, "phase %s: 'reverse' is for sendrecv", ph->name);
	if (ph->demand && ph->collective != SCHED_ALLTOALL)
		return wl_error(err, w, ph->demand_loc,
				"phase %s: a demand matrix is for alltoall (skewed volumes)",
				ph->name);
	if (ph->demand)
		return phase_matrix(f, w, ph, ph->demand, ph->demand_loc, w->kinds[k].size, err);
	return 0;
}

int workload_validate(const struct fabric *f, struct workload *w, struct ofc_error *err)
{
	uint8_t *used;
	int rc = 0;

	if (w->validated)
		return 0;
	for (uint32_t i = 0; i < w->nkinds; i++)
		free(w->kinds[i].host);
	free(w->kinds);
	w->kinds = NULL;
	w->nkinds = 0;
	if (f->nhosts < 2)
		return wl_error(err, w, w->loc, "a workload needs 2 hosts at least");
	if (f->nservers)
		return wl_error(err, w, w->loc,
				"workloads are planned on direct-connect fabrics (hosts and "
				"switches), not server fabrics");
	used = xcalloc(f->nhosts + 1, 1);
	for (uint32_t i = 0; rc == 0 && i < w->ngroups; i++)
		rc = listed_kind(f, w, &w->groups[i], used, err);
	free(used);
	if (rc == 0 && w->parallelism_set)
		rc = degree_kinds(f, w, err);
	if (rc == 0) {
		struct wl_kind *all = new_kind(w, "all", 1, f->nhosts, w->loc);

		for (uint32_t h = 0; h < f->nhosts; h++)
			all->host[h] = h;
	}
	if (rc == 0 && w->nphases == 0)
		rc = wl_error(err, w, w->loc, "a workload needs a phase at least");
	for (uint32_t i = 0; rc == 0 && i < w->nphases; i++)
		rc = check_phase(f, w, i, err);
	if (rc == 0)
		w->validated = true;
	return rc;
}
