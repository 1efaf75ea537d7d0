/* A step's link loads for Swing around failed links: per ring line, a row
 * of its arcs' loads in blocks (swing_loads.h). */
#include "baselines/swing_loads.h"

#include <stdlib.h>
#include <string.h>

void swing_geo_coords(struct geo *g)
{
	g->xy = xmalloc((size_t)g->n * g->D * sizeof(uint32_t));
	for (uint32_t v = 0; v < g->n; v++)
		for (uint32_t w = 0; w < g->D; w++)
			g->xy[(size_t)v * g->D + w] = v / g->stride[w] % g->dims[w];
}

static void lines_init(struct loads *L)
{
	const struct geo *g = L->g;
	size_t slots = 0;
	uint32_t line = 0;

	L->nlines = 0;
	for (uint32_t w = 0; w < g->D; w++)
		L->nlines += 2 * (g->n / g->dims[w]);
	L->arc_line = xmalloc(g->narcs * sizeof(uint32_t));
	L->arc_pos = xmalloc(g->narcs * sizeof(uint32_t));
	L->line_base = xmalloc(L->nlines * sizeof(uint32_t));
	L->line_d = xmalloc(L->nlines * sizeof(uint32_t));
	L->line_stamp = xcalloc(L->nlines, sizeof(uint32_t));
	L->rows = xmalloc(L->nlines * sizeof(uint32_t));
	for (uint32_t w = 0; w < g->D; w++) /* a row has room for its d + 1 prefix counts */
		slots += 2 * (size_t)(g->n / g->dims[w]) *
			 ((g->dims[w] + LINE_BLOCK) / LINE_BLOCK * LINE_BLOCK);
	L->val = xmalloc(slots * sizeof(int64_t));
	L->chg = xcalloc(slots, 1);
	L->slot_orbit = xcalloc(slots, sizeof(uint32_t));
	L->failed_before = xcalloc(slots, sizeof(uint32_t));
	L->badd = xcalloc(slots / LINE_BLOCK, sizeof(int64_t));
	L->bmax = xcalloc(slots / LINE_BLOCK, sizeof(int64_t));
	L->bchg = xcalloc(slots / LINE_BLOCK, 1);
	slots = 0;
	for (uint32_t w = 0; w < g->D; w++)
		for (uint32_t dir = 0; dir < 2; dir++)
			for (uint32_t v = 0; v < g->n; v++) {
				uint32_t d = g->dims[w], fails = 0;

				if (coord(g, v, w))
					continue;
				L->line_base[line] = (uint32_t)slots;
				L->line_d[line] = d;
				for (uint32_t x = 0; x < d; x++) {
					size_t a = arc_id(g, v + x * g->stride[w], w, dir);

					L->arc_line[a] = line;
					L->arc_pos[a] = x;
					L->slot_orbit[slots + x] = L->orbit_at[a];
					L->failed_before[slots + x] = fails;
					fails += L->failed[a];
				}
				L->failed_before[slots + d] = fails;
				slots += (d + LINE_BLOCK) / LINE_BLOCK * LINE_BLOCK;
				line++;
			}
}

void swing_loads_init(struct loads *L, const struct geo *g, const uint8_t *failed)
{
	memset(L, 0, sizeof(*L));
	L->g = g;
	L->orbit = xcalloc(g->norbits, sizeof(uint64_t));
	L->touched_in = xcalloc(g->norbits, sizeof(uint64_t));
	L->failed = failed;
	L->orbit_at = xmalloc(g->narcs * sizeof(uint32_t));
	for (uint32_t v = 0, h; v < g->n; v++) {
		uint32_t rep = sched_group_split(g->G, v, &h);

		for (uint32_t a = 0; a < 2 * g->D; a++)
			L->orbit_at[(size_t)v * 2 * g->D + a] = rep * 2 * g->D + a;
	}
	lines_init(L);
}

void swing_loads_free(struct loads *L)
{
	free(L->orbit);
	free(L->touched_in);
	free(L->seen);
	free(L->parent);
	free(L->queue);
	free(L->legs);
	free(L->orbit_at);
	free(L->arc_line);
	free(L->arc_pos);
	free(L->line_base);
	free(L->line_d);
	free(L->line_stamp);
	free(L->rows);
	free(L->val);
	free(L->chg);
	free(L->slot_orbit);
	free(L->failed_before);
	free(L->badd);
	free(L->bmax);
	free(L->bchg);
}

/* The healthy loads of the step's orbits: each representative's pair
 * routed from it, every arc counted at its orbit. */
void swing_loads_step(struct loads *L, const struct rpair *p, size_t np)
{
	const struct geo *g = L->g;

	L->now++;
	L->nrows = 0;
	memset(L->orbit, 0, g->norbits * sizeof(uint64_t));
	memset(L->touched_in, 0, g->norbits * sizeof(uint64_t));
	for (size_t i = 0; i < np; i++)
		for (uint32_t dir = 0; dir < 2; dir++) {
			uint32_t d = g->dims[p[i].w], len = half_len(d, p[i].f, dir), v = p[i].rep;
			uint64_t u = half_units(d, p[i].f, p[i].units);

			for (uint32_t h = 0; h < len; h++, v = hop(g, v, p[i].w, dir))
				L->orbit[L->orbit_at[arc_id(g, v, p[i].w, dir)]] += u;
		}
}

static void block_max(struct loads *L, uint32_t b)
{
	const int64_t *v = L->val + (size_t)b * LINE_BLOCK;
	int64_t m = v[0];

	for (uint32_t i = 1; i < LINE_BLOCK; i++)
		m = v[i] > m ? v[i] : m;
	L->bmax[b] = m;
}

/* The line's row, filled from the orbits' loads the first time the step
 * touches it. */
static uint32_t row_of(struct loads *L, uint32_t line)
{
	uint32_t base = L->line_base[line], d = L->line_d[line];
	uint32_t end = (d + LINE_BLOCK) / LINE_BLOCK * LINE_BLOCK;

	if (L->line_stamp[line] == L->now)
		return base;
	L->line_stamp[line] = L->now;
	L->rows[L->nrows++] = line;
	for (uint32_t x = 0; x < end; x++)
		L->val[base + x] = x < d ? (int64_t)L->orbit[L->slot_orbit[base + x]] : LINE_PAD;
	memset(L->chg + base, 0, end);
	for (uint32_t b = base / LINE_BLOCK; b < (base + end) / LINE_BLOCK; b++) {
		L->badd[b] = 0;
		L->bchg[b] = 0;
		block_max(L, b);
	}
	return base;
}

int64_t swing_load_of(const struct loads *L, size_t arc)
{
	uint32_t line = L->arc_line[arc];

	if (L->line_stamp[line] != L->now)
		return (int64_t)L->orbit[L->orbit_at[arc]];
	size_t s = L->line_base[line] + L->arc_pos[arc];
	return L->val[s] + L->badd[s / LINE_BLOCK];
}

/* Slots [a, b) of a row (from its base) changed by dv: the blocks within
 * take it as their add, the ends slot by slot. Each arc changed for the
 * first time counts at its orbit. */
static void range_add(struct loads *L, uint32_t a, uint32_t b, int64_t dv)
{
	while (a < b) {
		uint32_t blk = a / LINE_BLOCK, end = (blk + 1) * LINE_BLOCK;

		if (a % LINE_BLOCK == 0 && b >= end) {
			L->badd[blk] += dv;
		} else {
			int64_t was = INT64_MIN, now;

			end = end < b ? end : b;
			for (uint32_t s = a; s < end; s++) {
				was = L->val[s] > was ? L->val[s] : was;
				L->val[s] += dv;
			}
			now = was + dv; /* every slot moved by dv */
			/* the block's max moves with the slots changed, unless it
			 * fell where the max was */
			if (dv >= 0)
				L->bmax[blk] = now > L->bmax[blk] ? now : L->bmax[blk];
			else if (was >= L->bmax[blk])
				block_max(L, blk);
		}
		if (!L->bchg[blk]) {
			for (uint32_t s = a; s < end; s++)
				if (!L->chg[s]) {
					L->chg[s] = 1;
					L->touched_in[L->slot_orbit[s]]++;
				}
			L->bchg[blk] = a % LINE_BLOCK == 0 && end == (blk + 1) * LINE_BLOCK;
		}
		a = end;
	}
}

/* The busiest arc of slots [a, b) of a row. */
static int64_t range_max(const struct loads *L, uint32_t a, uint32_t b)
{
	int64_t m = INT64_MIN;

	while (a < b) {
		uint32_t blk = a / LINE_BLOCK, end = (blk + 1) * LINE_BLOCK;
		int64_t v;

		if (a % LINE_BLOCK == 0 && b >= end) {
			v = L->bmax[blk];
		} else {
			end = end < b ? end : b;
			v = L->val[a];
			for (uint32_t s = a + 1; s < end; s++)
				v = L->val[s] > v ? L->val[s] : v;
		}
		v += L->badd[blk];
		m = v > m ? v : m;
		a = end;
	}
	return m;
}

/* A leg as ranges of its line's row: up to two, [r[i][0], r[i][1]), in
 * the order the leg walks them (a leg the - way walks its ranges down). */
static uint32_t leg_ranges(struct loads *L, const struct leg *l, uint32_t r[2][2])
{
	size_t arc = arc_id(L->g, l->start, l->w, l->dir);
	uint32_t line = L->arc_line[arc], x = L->arc_pos[arc], d = L->line_d[line];
	uint32_t base = row_of(L, line), len = l->len;

	if (!len)
		return 0;
	if (l->dir == 0) {
		r[0][0] = base + x;
		r[0][1] = base + (x + len <= d ? x + len : d);
		r[1][0] = base;
		r[1][1] = base + (x + len <= d ? 0 : x + len - d);
	} else {
		r[0][0] = base + (len <= x + 1 ? x + 1 - len : 0);
		r[0][1] = base + x + 1;
		r[1][0] = base + (len <= x + 1 ? d : d - (len - x - 1));
		r[1][1] = base + d;
	}
	return r[1][0] < r[1][1] ? 2 : 1;
}

/* Whether a leg crosses a failed arc. */
bool swing_leg_failed(const struct loads *L, const struct leg *l)
{
	size_t arc = arc_id(L->g, l->start, l->w, l->dir);
	uint32_t line = L->arc_line[arc], x = L->arc_pos[arc], d = L->line_d[line];
	const uint32_t *f = L->failed_before + L->line_base[line];
	uint32_t a = l->dir ? (x + d - (l->len - 1) % d) % d : x, b = a + l->len;

	if (!l->len)
		return false;
	return b <= d ? f[b] > f[a] : f[d] > f[a] || f[b - d] > 0;
}

void swing_change_legs(struct loads *L, const struct leg *l, uint32_t n, int64_t dv)
{
	uint32_t r[2][2];

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0, m = leg_ranges(L, &l[i], r); k < m; k++)
			range_add(L, r[k][0], r[k][1], dv);
}

/* The step's busiest arc: one of a row (a changed arc's own load, or an
 * unchanged one's orbit's), or any orbit with an arc the patch left
 * alone. */
uint64_t swing_step_max(const struct loads *L)
{
	int64_t m = 0;

	for (uint32_t i = 0; i < L->nrows; i++) {
		uint32_t line = L->rows[i], base = L->line_base[line], d = L->line_d[line];

		for (uint32_t b = base / LINE_BLOCK; b * LINE_BLOCK < base + d; b++)
			m = L->bmax[b] + L->badd[b] > m ? L->bmax[b] + L->badd[b] : m;
	}
	for (size_t o = 0; o < L->g->norbits; o++)
		if (L->touched_in[o] < L->g->orbit_size && (int64_t)L->orbit[o] > m)
			m = (int64_t)L->orbit[o];
	return (uint64_t)m;
}

/* How many of the patch's arcs carry more than target. */
size_t swing_arcs_over(const struct loads *L, int64_t target)
{
	size_t k = 0;

	for (uint32_t i = 0; i < L->nrows; i++) {
		uint32_t line = L->rows[i], base = L->line_base[line], d = L->line_d[line];

		for (uint32_t b = base / LINE_BLOCK; b * LINE_BLOCK < base + d; b++) {
			if (L->bmax[b] + L->badd[b] <= target)
				continue;
			for (uint32_t s = b * LINE_BLOCK; s < (b + 1) * LINE_BLOCK && s < base + d;
			     s++)
				k += L->chg[s] && L->val[s] + L->badd[b] > target;
		}
	}
	return k;
}

/* Whether the route's busiest arc (*worst) carries at most bound (a route
 * so loaded would get no part). */
bool swing_legs_under(struct loads *L, const struct leg *l, uint32_t n, int64_t bound,
		      int64_t *worst)
{
	uint32_t r[2][2];

	*worst = 0;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0, m = leg_ranges(L, &l[i], r); k < m; k++) {
			int64_t load = range_max(L, r[k][0], r[k][1]);

			if (load > bound)
				return false;
			*worst = load > *worst ? load : *worst;
		}
	return true;
}

/* Whether a route's arcs reach `top` anywhere (it is on a busiest arc);
 * the arcs before the first that does count as work, as a walk would. */
bool swing_legs_reach(struct loads *L, const struct leg *l, uint32_t n, int64_t top)
{
	uint32_t r[2][2];

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0, m = leg_ranges(L, &l[i], r); k < m; k++) {
			uint32_t a = r[k][0], b = r[k][1];

			if (range_max(L, a, b) < top) {
				L->work -= b - a;
				continue;
			}
			for (uint32_t h = 0; h < b - a; h++) {
				uint32_t sl = l[i].dir ? b - 1 - h : a + h;

				if (L->val[sl] + L->badd[sl / LINE_BLOCK] >= top) {
					L->work -= h;
					return true;
				}
			}
		}
	return false;
}

/* The busiest arc of the orbits the patch leaves an arc of untouched: no
 * detour moved can lower it. */
uint64_t swing_untouched_max(const struct loads *L)
{
	uint64_t m = 0;

	for (size_t o = 0; o < L->g->norbits; o++)
		if (L->touched_in[o] < L->g->orbit_size && L->orbit[o] > m)
			m = L->orbit[o];
	return m;
}

/* An arc the step's detours leave carrying less than nothing (narcs:
 * none). */
size_t swing_negative_arc(const struct loads *L)
{
	for (uint32_t i = 0; i < L->nrows; i++) {
		uint32_t line = L->rows[i], base = L->line_base[line], d = L->line_d[line];

		for (uint32_t x = 0; x < d; x++)
			if (L->val[base + x] + L->badd[(base + x) / LINE_BLOCK] < 0)
				for (size_t a = 0; a < L->g->narcs; a++)
					if (L->arc_line[a] == line && L->arc_pos[a] == x)
						return a;
	}
	return L->g->narcs;
}
