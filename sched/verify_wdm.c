/* The verifier on a WDM ring (verify_opts.wdm): per step, lightpaths
 * free of conflicts on every fibre segment and wavelength, at most one
 * block each, at most max_add added and dropped at a node; and the most
 * wavelengths a segment carries. A step is proved by sorting its
 * lightpaths (wdm_sorted_check); only a step with a conflict is walked
 * segment by segment (verify_walk_lightpath), to report the first offending
 * transfer. */
#include "sched/verify_internal.h"

#include <stdlib.h>
#include <string.h>

/* The walk after verify_check_lightpath's range checks (verify_internal.h).
 * Segment k of the ring is the fibre from node k to node k+1 (CW) or from
 * node k+1 to node k (CCW). */
int verify_walk_lightpath(struct vstate *v, uint32_t t, size_t xi)
{
	const struct verify_wdm *w = v->o->wdm;
	const struct xfer *x = &v->s->xfers[xi];
	enum ring_dir dir = xfer_dir(x);
	uint32_t n = v->n, stamp = t + 1;
	uint32_t df = (dir == DIR_CW ? 0 : w->fibres) + x->fibre;
	uint32_t ch = df * w->wavelengths + x->lane;
	uint32_t owner = (uint32_t)x->src << 16 | x->dst;
	size_t lp = (size_t)ch * n + x->src;

	/* Walk the segments: each must be free on this channel or ours. */
	uint32_t len = dir == DIR_CW ? (x->dst + n - x->src) % n : (x->src + n - x->dst) % n;
	uint32_t seg = dir == DIR_CW ? x->src : (x->src + n - 1) % n;
	for (uint32_t k = 0; k < len; k++) {
		size_t i = (size_t)ch * n + seg;

		if (v->seg_stamp[i] == stamp) {
			if (v->seg_owner[i] != owner)
				return verify_fail(
				    v, t, xi,
				    "lightpath conflict on segment %u-%u (%s fibre %u "
				    "wavelength %u) with lightpath %u -> %u",
				    seg, (seg + 1) % n, dir == DIR_CW ? "cw" : "ccw", x->fibre,
				    x->lane, v->seg_owner[i] >> 16, v->seg_owner[i] & 0xffff);
		} else {
			size_t b = (size_t)df * n + seg;

			v->seg_stamp[i] = stamp;
			v->seg_owner[i] = owner;
			if (v->busy_stamp[b] != stamp) {
				v->busy_stamp[b] = stamp;
				v->busy[b] = 0;
			}
			if (++v->busy[b] > v->r->max_wavelengths_used)
				v->r->max_wavelengths_used = v->busy[b];
		}
		seg = dir == DIR_CW ? (seg + 1) % n : (seg + n - 1) % n;
	}

	/* Capacity: one block per lightpath per step. */
	if (v->lp_stamp[lp] != stamp) {
		v->lp_stamp[lp] = stamp;
		v->lp_load[lp] = 0;
		if (v->add_stamp[x->src] != stamp) {
			v->add_stamp[x->src] = stamp;
			v->add_count[x->src] = 0;
		}
		if (v->drop_stamp[x->dst] != stamp) {
			v->drop_stamp[x->dst] = stamp;
			v->drop_count[x->dst] = 0;
		}
		if (++v->add_count[x->src] > w->max_add)
			return verify_fail(v, t, xi,
					   "node %u adds more than %u lightpaths in one step",
					   x->src, w->max_add);
		if (++v->drop_count[x->dst] > w->max_add)
			return verify_fail(v, t, xi,
					   "node %u drops more than %u lightpaths in one step",
					   x->dst, w->max_add);
	}
	v->lp_load[lp] += x->length;
	if (v->lp_load[lp] > SCHED_ONE)
		return verify_fail(v, t, xi,
				   "lightpath %u -> %u (%s fibre %u wavelength %u) carries more "
				   "than one block in one step",
				   x->src, x->dst, dir == DIR_CW ? "cw" : "ccw", x->fibre, x->lane);
	return 0;
}

/* LSD radix sort of a step's lightpaths by key (< 2^bits), in as few
 * passes of up to 11 bits as it takes. */
static void sort_lpaths(struct vstate *v, size_t m, unsigned bits)
{
	struct lpath *a = v->lps, *b = v->lps_tmp;

	if (m < 256) { /* small steps: clearing 2048 buckets per pass would dominate */
		for (size_t i = 1; i < m; i++) {
			struct lpath t = a[i];
			size_t j = i;

			while (j && a[j - 1].key > t.key) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = t;
		}
		return;
	}
	unsigned passes = (bits + 10) / 11, width = passes ? (bits + passes - 1) / passes : 0;
	uint32_t cnt[2049];

	for (unsigned p = 0; p < passes; p++) {
		unsigned sh = p * width;
		uint64_t mask = (1ull << width) - 1;

		memset(cnt, 0, ((size_t)mask + 2) * sizeof(uint32_t));
		for (size_t i = 0; i < m; i++)
			cnt[((a[i].key >> sh) & mask) + 1]++;
		for (uint64_t k = 1; k <= mask + 1; k++)
			cnt[k] += cnt[k - 1];
		for (size_t i = 0; i < m; i++)
			b[cnt[(a[i].key >> sh) & mask]++] = a[i];
		struct lpath *t = a;
		a = b;
		b = t;
	}
	v->lps = a;
	v->lps_tmp = b;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Busy wavelengths of a sparse step: per (dir, fibre), the end points of
 * its distinct lightpaths sorted (ends before starts at one segment), and
 * the deepest overlap. */
static void busy_sparse(struct vstate *v, size_t m)
{
	const struct verify_wdm *w = v->o->wdm;
	uint32_t n = v->n, half = w->fibres * w->wavelengths;
	uint64_t *ev = xmalloc((4 * m + 1) * sizeof(uint64_t));
	size_t ne = 0;

	/* Event: df << 40 | position << 1 | (start ? 1 : 0). */
	for (size_t k = 0; k < m; k++) {
		const struct lpath *q = &v->lps[k];

		if (k && q->key == v->lps[k - 1].key && q->owner == v->lps[k - 1].owner)
			continue;
		uint32_t c = (uint32_t)(q->key / n), src = q->owner >> 16, dst = q->owner & 0xffff;
		uint64_t df = c / w->wavelengths;
		uint32_t st = (uint32_t)(q->key - (uint64_t)c * n);
		uint32_t e = st + (c < half ? (dst > src ? dst - src : dst + n - src)
					    : (src > dst ? src - dst : src + n - dst));

		ev[ne++] = df << 40 | (uint64_t)st << 1 | 1;
		if (e <= n) {
			ev[ne++] = df << 40 | (uint64_t)e << 1;
		} else {
			ev[ne++] = df << 40 | (uint64_t)n << 1;
			ev[ne++] = df << 40 | 0 << 1 | 1;
			ev[ne++] = df << 40 | (uint64_t)(e - n) << 1;
		}
	}
	qsort(ev, ne, sizeof(uint64_t), cmp_u64);
	uint32_t run = 0;
	for (size_t i = 0; i < ne; i++) {
		if (i && ev[i] >> 40 != ev[i - 1] >> 40)
			run = 0;
		if (ev[i] & 1) {
			if (++run > v->r->max_wavelengths_used)
				v->r->max_wavelengths_used = run;
		} else {
			run--;
		}
	}
	free(ev);
}

/* The step's lightpaths sorted per channel by first segment. They are
 * conflict-free when each ends before the next begins (the last, wrapping
 * round, before the first) unless both are the same lightpath; a lightpath
 * (same channel, src, dst) carries at most one block in total; a node adds
 * and drops at most max_add distinct lightpaths. On any violation it sets
 * v->walk, and the per-transfer checks run in full to report the first
 * offending transfer exactly as before. Otherwise it counts the busy
 * wavelengths per fibre segment with difference arrays. Transfers out of
 * range are left to the per-transfer checks. */
static void wdm_sorted_check(struct vstate *v, uint32_t t)
{
	const struct schedule *s = v->s;
	const struct verify_wdm *w = v->o->wdm;
	uint32_t n = v->n, half = w->fibres * w->wavelengths;
	size_t m = 0, need = s->step_start[t + 1] - s->step_start[t];

	v->walk = false;
	if (need > v->cap_lps) {
		v->cap_lps = need;
		v->lps = xreallocarray(v->lps, need, sizeof(struct lpath));
		v->lps_tmp = xreallocarray(v->lps_tmp, need, sizeof(struct lpath));
	}
	for (size_t xi = s->step_start[t]; xi < s->step_start[t + 1]; xi++) {
		const struct xfer *x = &s->xfers[xi];
		enum ring_dir dir = xfer_dir(x);

		if (x->src >= n || x->dst >= n || x->src == x->dst ||
		    (dir != DIR_CW && dir != DIR_CCW) || x->fibre >= w->fibres ||
		    x->lane >= w->wavelengths)
			continue;
		uint32_t ch = (dir == DIR_CW ? 0 : half) + x->fibre * w->wavelengths + x->lane;
		uint32_t first = dir == DIR_CW ? x->src : x->dst;

		v->lps[m++] = (struct lpath){(uint64_t)ch * n + first,
					     (uint32_t)x->src << 16 | x->dst, x->length};
	}
	uint64_t top = (uint64_t)v->channels * n;
	unsigned bits = 0;
	while (bits < 64 && (top >> bits))
		bits++;
	sort_lpaths(v, m, bits);

	/* Per channel (keys ch * n .. ch * n + n - 1), distinct lightpaths. */
	uint32_t ch = 0, first = 0, reach = 0, owner = 0, A = w->max_add;
	uint64_t base = 0, load = 0;
	bool any = false;
	for (size_t k = 0; k < m; k++) {
		const struct lpath *q = &v->lps[k];
		uint32_t src = q->owner >> 16, dst = q->owner & 0xffff;

		if (k && q->key == v->lps[k - 1].key && q->owner == v->lps[k - 1].owner) {
			load += q->amount; /* the same lightpath again */
			if (load > SCHED_ONE)
				goto bad;
			continue;
		}
		if (!any || q->key >= base + n) {
			/* A new channel: the previous one's wrap-around first. */
			if (any && reach > n && reach - n > first)
				goto bad;
			while (q->key >= base + n) {
				ch++;
				base += n;
			}
			any = true;
			first = (uint32_t)(q->key - base);
			reach = 0;
		}
		uint32_t st = (uint32_t)(q->key - base);
		uint32_t len = ch < half ? (dst > src ? dst - src : dst + n - src)
					 : (src > dst ? src - dst : src + n - dst);
		if (st < reach)
			goto bad;
		reach = st + len;
		owner = q->owner;
		load = q->amount;
		if (load > SCHED_ONE || ++v->sadd[src] > A || ++v->sdrop[dst] > A)
			goto bad;
	}
	if (any && reach > n && reach - n > first)
		goto bad;
	(void)owner;

	/* Busy wavelengths per (dir, fibre) and segment: nothing to learn once
	 * some fibre segment had all W busy; a difference array over the ring
	 * when the step is dense, sorted end points when it is sparse. */
	uint32_t dfs = 2 * w->fibres;
	for (size_t k = 0; k < m; k++)
		v->sadd[v->lps[k].owner >> 16] = v->sdrop[v->lps[k].owner & 0xffff] = 0;
	if (v->r->max_wavelengths_used >= w->wavelengths)
		return;
	if (m * 16 < n) {
		busy_sparse(v, m);
		return;
	}
	for (size_t k = 0; k < m; k++) {
		const struct lpath *q = &v->lps[k];

		if (k && q->key == v->lps[k - 1].key && q->owner == v->lps[k - 1].owner)
			continue;
		uint32_t c = (uint32_t)(q->key / n), src = q->owner >> 16, dst = q->owner & 0xffff;
		uint32_t df = c / w->wavelengths, st = (uint32_t)(q->key - (uint64_t)c * n);
		uint32_t e = st + (c < half ? (dst > src ? dst - src : dst + n - src)
					    : (src > dst ? src - dst : src + n - dst));
		int32_t *d = v->busy_diff + (size_t)df * (n + 1);

		v->df_seen[df] = 1;
		d[st]++;
		if (e <= n) {
			d[e]--;
		} else {
			d[n]--;
			d[0]++;
			d[e - n]--;
		}
	}
	for (uint32_t df = 0; df < dfs; df++) {
		int32_t *d = v->busy_diff + (size_t)df * (n + 1), run = 0;

		if (!v->df_seen[df])
			continue;
		v->df_seen[df] = 0;
		for (uint32_t x = 0; x <= n; x++) {
			run += d[x];
			d[x] = 0;
			if (x < n && (uint32_t)run > v->r->max_wavelengths_used)
				v->r->max_wavelengths_used = (uint32_t)run;
		}
	}
	return;
bad:
	for (size_t k = 0; k < m; k++)
		v->sadd[v->lps[k].owner >> 16] = v->sdrop[v->lps[k].owner & 0xffff] = 0;
	v->walk = true;
}

/* Step t's lightpaths by sorting, and the tables of the walk when a
 * conflict asks for one (allocated then: most schedules never walk). */
void verify_wdm_step(struct vstate *v, uint32_t t)
{
	wdm_sorted_check(v, t);
	if (v->walk && !v->seg_stamp) {
		size_t cells = (size_t)v->channels * v->n;
		uint32_t dfn = 2 * v->o->wdm->fibres * v->n;

		v->seg_stamp = xcalloc(cells, sizeof(uint32_t));
		v->seg_owner = xcalloc(cells, sizeof(uint32_t));
		v->busy_stamp = xcalloc(dfn, sizeof(uint32_t));
		v->busy = xcalloc(dfn, sizeof(uint32_t));
	}
}

/* A WDM ring's channels and the per-node add/drop counters. */
int verify_setup_wdm(struct vstate *v)
{
	const struct verify_wdm *w = v->o->wdm;
	uint32_t n = v->n;

	if (w->wavelengths == 0 || w->fibres == 0 || w->fibres > 255 || w->wavelengths > 65535)
		return verify_fail(v, 0, SIZE_MAX, "bad WDM ring parameters");
	v->channels = 2 * w->fibres * w->wavelengths;
	size_t cells = (size_t)v->channels * n;

	v->lp_stamp = xcalloc(cells, sizeof(uint32_t));
	v->lp_load = xcalloc(cells, sizeof(uint64_t));
	v->busy_diff = xcalloc((size_t)2 * w->fibres * (n + 1), sizeof(int32_t));
	v->df_seen = xcalloc((size_t)2 * w->fibres, 1);
	v->sadd = xcalloc(n, sizeof(uint32_t));
	v->sdrop = xcalloc(n, sizeof(uint32_t));
	v->add_stamp = xcalloc(n, sizeof(uint32_t));
	v->add_count = xcalloc(n, sizeof(uint32_t));
	v->drop_stamp = xcalloc(n, sizeof(uint32_t));
	v->drop_count = xcalloc(n, sizeof(uint32_t));
	return 0;
}
