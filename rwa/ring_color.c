/* Colouring arcs of a ring: exact interval colouring on a line, and a
 * heuristic for arcs that wrap (circular-arc colouring is NP-hard; Garey,
 * Johnson, Miller and Papadimitriou 1980).
 *
 * Colours are per direction, so every routine colours the arcs of one
 * direction; the caller routes first.
 */
#include "rwa/rwa.h"

#include <stdlib.h>
#include <string.h>

void rwa_solution_free(struct rwa_solution *sol)
{
	free(sol->runs);
	memset(sol, 0, sizeof(*sol));
}

void rwa_solution_reset(struct rwa_solution *sol)
{
	sol->nruns = 0;
	memset(sol->colours, 0, sizeof(sol->colours));
}

uint32_t rwa_arc_len(uint32_t n, uint32_t src, uint32_t dst, enum rwa_dir dir)
{
	return dir == RWA_CW ? (dst + n - src) % n : (src + n - dst) % n;
}

uint32_t rwa_arc_start(uint32_t n, uint32_t src, uint32_t dst, enum rwa_dir dir)
{
	return (dir == RWA_CW ? src : dst) % n;
}

static void push_run(struct rwa_solution *sol, uint32_t id, uint32_t colour, uint32_t count,
		     enum rwa_dir dir)
{
	/* Extend the previous run when it is the same item's next colours. */
	if (sol->nruns) {
		struct rwa_run *p = &sol->runs[sol->nruns - 1];

		if (p->id == id && p->dir == dir && p->colour + p->count == colour) {
			p->count += count;
			goto out;
		}
	}
	GROW(sol->runs, sol->cap, sol->nruns + 1);
	sol->runs[sol->nruns++] = (struct rwa_run){id, colour, count, (uint8_t)dir};
out:
	if (colour + count > sol->colours[dir])
		sol->colours[dir] = colour + count;
}

/* ---- exact interval colouring ------------------------------------------- */

struct heap_item {
	uint32_t end, arc;
};

static void heap_push(struct heap_item *h, size_t *n, struct heap_item it)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2].end > it.end) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = it;
}

static struct heap_item heap_pop(struct heap_item *h, size_t *n)
{
	struct heap_item top = h[0], last = h[--(*n)];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].end < h[c].end)
			c++;
		if (h[c].end >= last.end)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

struct line_ctx {
	const struct rwa_arc *arcs;
};

static int cmp_start(const void *a, const void *b, void *ctx)
{
	const struct rwa_arc *arcs = ((struct line_ctx *)ctx)->arcs;
	const struct rwa_arc *x = &arcs[*(const uint32_t *)a], *y = &arcs[*(const uint32_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) -
	       (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* A scaled colour run of one arc, before multiplying back by the gcd. */
struct srun {
	uint32_t colour, count;
};

void rwa_color_line(uint32_t n, const struct rwa_arc *arcs, size_t narcs, enum rwa_dir dir,
		    struct rwa_solution *sol)
{
	uint32_t g = 0, load_max = 0;
	size_t m = 0;

	for (size_t i = 0; i < narcs; i++)
		if (arcs[i].count)
			g = (uint32_t)gcd_u64(g, arcs[i].count);
	if (!g)
		return;

	/* Every arc needs a multiple of g colours: colour the arcs with count/g
	 * and blow each colour up into g, which keeps runs whole and is still
	 * optimal (the load scales by g too). */
	int64_t *diff = xcalloc((size_t)n + 1, sizeof(int64_t));
	uint32_t *order = xmalloc(narcs * sizeof(uint32_t));
	for (size_t i = 0; i < narcs; i++) {
		if (!arcs[i].count)
			continue;
		diff[arcs[i].start] += arcs[i].count / g;
		diff[arcs[i].start + arcs[i].len] -= arcs[i].count / g;
		order[m++] = (uint32_t)i;
	}
	int64_t run = 0;
	for (uint32_t x = 0; x < n; x++) {
		run += diff[x];
		if (run > load_max)
			load_max = (uint32_t)run;
	}
	free(diff);
	qsort_r(order, m, sizeof(uint32_t), cmp_start, &(struct line_ctx){arcs});

	/* free_bits: bit c set = colour c free. Runs per arc in first/nr. */
	size_t words = (size_t)load_max / 64 + 1;
	uint64_t *free_bits = xmalloc(words * sizeof(uint64_t));
	memset(free_bits, 0xff, words * sizeof(uint64_t));
	struct heap_item *heap = xmalloc((m + 1) * sizeof(*heap));
	size_t nheap = 0, nsr = 0, cap_sr = 0;
	struct srun *sr = NULL;
	uint32_t *first = xmalloc(narcs * sizeof(uint32_t));
	uint32_t *nr = xcalloc(narcs, sizeof(uint32_t));
	size_t lowest = 0; /* no free colour below word `lowest` */

	for (size_t k = 0; k < m; k++) {
		const struct rwa_arc *a = &arcs[order[k]];

		while (nheap && heap[0].end <= a->start) {
			uint32_t done = heap_pop(heap, &nheap).arc;

			for (uint32_t r = first[done]; r < first[done] + nr[done]; r++)
				for (uint32_t c = sr[r].colour; c < sr[r].colour + sr[r].count;
				     c++) {
					free_bits[c / 64] |= 1ull << (c % 64);
					if (c / 64 < lowest)
						lowest = c / 64;
				}
		}
		/* The lowest free colours; there are enough below load_max
		 * because the load here (this arc included) is at most it. */
		uint32_t need = a->count / g;
		first[order[k]] = (uint32_t)nsr;
		for (size_t w = lowest; need && w < words; w++) {
			while (need && free_bits[w]) {
				uint32_t c =
				    (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(free_bits[w]);

				free_bits[w] &= free_bits[w] - 1;
				need--;
				if (nr[order[k]] && sr[nsr - 1].colour + sr[nsr - 1].count == c) {
					sr[nsr - 1].count++;
				} else {
					GROW(sr, cap_sr, nsr + 1);
					sr[nsr++] = (struct srun){c, 1};
					nr[order[k]]++;
				}
			}
			if (!free_bits[w] && w == lowest)
				lowest = w + 1;
		}
		if (need)
			abort(); /* cannot happen: the load bound above */
		heap_push(heap, &nheap, (struct heap_item){a->start + a->len, order[k]});
	}

	/* Emit per arc in input order (runs of an item stay together). */
	uint32_t base = sol->colours[dir];
	for (size_t i = 0; i < narcs; i++) {
		if (!arcs[i].count)
			continue;
		for (uint32_t r = first[i]; r < first[i] + nr[i]; r++)
			push_run(sol, arcs[i].id, base + sr[r].colour * g, sr[r].count * g, dir);
	}
	free(free_bits);
	free(heap);
	free(sr);
	free(first);
	free(nr);
	free(order);
}

/* ---- circular arcs ---------------------------------------------------------- */

struct unit {
	uint32_t start, len; /* in the caller's coordinates */
	uint32_t id;
	uint32_t colour;
};

static int cmp_unit_id(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->colour > y->colour) - (x->colour < y->colour);
}

/* An arc of the cut ring: crossing the cut, its free window [lo, hi);
 * otherwise the arc itself. */
struct span {
	uint32_t lo, hi;
	uint32_t unit;
};

/* The segment of the ring of n that the fewest of the nu arcs cover. */
static uint32_t least_loaded(uint32_t n, const struct unit *u, size_t nu)
{
	int64_t *diff = xcalloc((size_t)n + 1, sizeof(int64_t));
	uint32_t p = 0;

	for (size_t i = 0; i < nu; i++) {
		uint32_t s = u[i].start, e = s + u[i].len;

		diff[s]++;
		if (e <= n) {
			diff[e]--;
		} else {
			diff[n]--;
			diff[0]++;
			diff[e - n]--;
		}
	}
	int64_t run = 0, best = INT64_MAX;
	for (uint32_t x = 0; x < n; x++) {
		run += diff[x];
		if (run < best) {
			best = run;
			p = x;
		}
	}
	free(diff);
	return p;
}

/* The line arcs by left end, longer first on ties: two stable counting
 * sorts (right end descending, then left end). */
static void sort_spans(struct span *line, size_t nline, uint32_t n)
{
	if (nline < 2)
		return;
	/* Counting sort by left end, then longer first inside a bucket. */
	uint32_t *cnt = xcalloc((size_t)n + 1, sizeof(uint32_t));
	struct span *tmp = xmalloc(nline * sizeof(*tmp));

	for (size_t i = 0; i < nline; i++)
		cnt[n - 1 - (line[i].hi - 1)]++; /* by right end, descending */
	for (uint32_t x = 1; x <= n; x++)
		cnt[x] += cnt[x - 1];
	for (size_t i = nline; i-- > 0;)
		tmp[--cnt[n - 1 - (line[i].hi - 1)]] = line[i];
	memset(cnt, 0, ((size_t)n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < nline; i++)
		cnt[tmp[i].lo]++;
	for (uint32_t x = 1; x <= n; x++)
		cnt[x] += cnt[x - 1];
	for (size_t i = nline; i-- > 0;)
		line[--cnt[tmp[i].lo]] = tmp[i];
	free(cnt);
	free(tmp);
}

/* (a) Cut at the least loaded segment p; the arcs over p each get a colour
 * of their own, free in the window between their two ends; then the other
 * arcs, left to right from p + 1, go into the fitting colour whose free
 * window ends soonest after them (crossing colours) or whose last arc ends
 * latest before them (plain colours), or into a new colour. */
static uint32_t color_cut_sweep(uint32_t n, struct unit *u, size_t nu)
{
	uint32_t p = least_loaded(n, u, nu);

	/* Coordinates with segment p last: x' = (x - p - 1) mod n. */
	uint32_t shift = (p + 1) % n;
	size_t ncross = 0;
	struct span *cross = xmalloc((nu + 1) * sizeof(*cross)),
		    *line = xmalloc((nu + 1) * sizeof(*line));
	size_t nline = 0;

	for (size_t i = 0; i < nu; i++) {
		uint32_t s = (u[i].start + n - shift) % n;

		if (s + u[i].len >= n)
			cross[ncross++] = (struct span){s + u[i].len - n, s, (uint32_t)i};
		else
			line[nline++] = (struct span){s, s + u[i].len, (uint32_t)i};
	}
	sort_spans(line, nline, n);
	/* Colour c < ncross: free window [cross[c].lo, cross[c].hi). A colour
	 * is pending until the sweep reaches the end of its last arc (busy),
	 * then ready: crossing colours in a Fenwick tree by window end (the
	 * tightest fit is the first end >= the arc's right end), plain ones in
	 * a max-heap by busy (the latest free, best fit). O(arcs log N). */
	size_t cap = ncross + nline + 1;
	uint32_t *limit = xmalloc(cap * sizeof(uint32_t));
	struct heap_item *pend = xmalloc(cap * sizeof(*pend)),
			 *plain = xmalloc(cap * sizeof(*plain));
	size_t npend = 0, nplain = 0;
	uint32_t *fen = xcalloc((size_t)n + 1, sizeof(uint32_t));
	uint32_t *top = xmalloc(((size_t)n + 1) * sizeof(uint32_t)); /* stack per window end */
	uint32_t *below = xmalloc(cap * sizeof(uint32_t));
	uint32_t ncol = (uint32_t)ncross, logn = 1;

	while ((1u << logn) <= n)
		logn++;
	memset(top, 0xff, ((size_t)n + 1) * sizeof(uint32_t));
	for (size_t c = 0; c < ncross; c++) {
		limit[c] = cross[c].hi;
		u[cross[c].unit].colour = (uint32_t)c;
		heap_push(pend, &npend, (struct heap_item){cross[c].lo, (uint32_t)c});
	}
	for (size_t i = 0; i < nline; i++) {
		uint32_t lo = line[i].lo, hi = line[i].hi, pick = UINT32_MAX;

		while (npend && pend[0].end <= lo) {
			struct heap_item it = heap_pop(pend, &npend);

			if (it.arc < ncross) { /* ready crossing colour, keyed by window end */
				below[it.arc] = top[limit[it.arc]];
				top[limit[it.arc]] = it.arc;
				for (uint32_t x = limit[it.arc] + 1; x <= n; x += x & -x)
					fen[x]++;
			} else { /* max-heap via negated keys */
				heap_push(plain, &nplain, (struct heap_item){n - it.end, it.arc});
			}
		}
		/* First window end >= hi holding a ready colour. */
		uint32_t before = 0;
		for (uint32_t x = hi; x > 0; x -= x & -x)
			before += fen[x];
		uint32_t pos = 0, acc = 0;
		for (uint32_t b = logn; b-- > 0;) {
			uint32_t nx = pos + (1u << b);

			if (nx <= n && acc + fen[nx] <= before) {
				pos = nx;
				acc += fen[nx];
			}
		}
		if (pos < n && top[pos] != UINT32_MAX) {
			pick = top[pos];
			top[pos] = below[pick];
			for (uint32_t x = pos + 1; x <= n; x += x & -x)
				fen[x]--;
		} else if (nplain) {
			pick = heap_pop(plain, &nplain).arc;
		} else {
			pick = ncol++;
			limit[pick] = UINT32_MAX;
		}
		heap_push(pend, &npend, (struct heap_item){hi, pick});
		u[line[i].unit].colour = pick;
	}
	free(pend);
	free(plain);
	free(fen);
	free(top);
	free(below);
	free(cross);
	free(line);
	free(limit);
	return ncol;
}

static bool bits_free(const uint64_t *b, uint32_t lo, uint32_t hi)
{
	for (uint32_t x = lo; x < hi;) {
		if ((x & 63) == 0 && hi - x >= 64) {
			if (b[x / 64])
				return false;
			x += 64;
		} else {
			if (b[x / 64] >> (x & 63) & 1)
				return false;
			x++;
		}
	}
	return true;
}

static void bits_set(uint64_t *b, uint32_t lo, uint32_t hi)
{
	for (uint32_t x = lo; x < hi; x++)
		b[x / 64] |= 1ull << (x & 63);
}

static int cmp_len_desc(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* (b) First-fit, longest arcs first. Occupancy: one bitset of n bits per
 * colour. Returns the colours, with u[].colour set (u is re-sorted). */
static uint32_t color_first_fit(uint32_t n, struct unit *u, size_t nu)
{
	size_t words = (size_t)n / 64 + 1, cap = 0;
	uint64_t *occ = NULL;
	uint32_t ncol = 0;

	qsort(u, nu, sizeof(*u), cmp_len_desc);
	for (size_t i = 0; i < nu; i++) {
		uint32_t s = u[i].start, e = s + u[i].len, c;

		for (c = 0; c < ncol; c++) {
			const uint64_t *b = occ + (size_t)c * words;

			if (e <= n ? bits_free(b, s, e)
				   : bits_free(b, s, n) && bits_free(b, 0, e - n))
				break;
		}
		if (c == ncol) {
			if ((size_t)(ncol + 1) * words > cap) {
				size_t old = cap;

				cap = ((size_t)ncol + 1) * words * 2;
				occ = xreallocarray(occ, cap, sizeof(uint64_t));
				memset(occ + old, 0, (cap - old) * sizeof(uint64_t));
			}
			ncol++;
		}
		uint64_t *b = occ + (size_t)c * words;
		if (e <= n) {
			bits_set(b, s, e);
		} else {
			bits_set(b, s, n);
			bits_set(b, 0, e - n);
		}
		u[i].colour = c;
	}
	free(occ);
	return ncol;
}

/* (c) Exact, for small sets only: backtracking over the units in start
 * order, each taking a colour no overlapping unit has, a new colour only
 * as the next one (colours are interchangeable). Tries k colours; false
 * when there is no such colouring or the node budget runs out. */
#define EXACT_MAX_UNITS 64

struct exact {
	uint64_t conflict[EXACT_MAX_UNITS][2]; /* units sharing a segment */
	uint32_t colour[EXACT_MAX_UNITS];
	uint32_t nu, k;
	uint64_t budget;
};

static bool exact_rec(struct exact *x, uint32_t i, uint32_t used)
{
	if (i == x->nu)
		return true;
	if (!x->budget)
		return false;
	x->budget--;
	for (uint32_t c = 0; c < x->k && c <= used; c++) {
		bool ok = true;

		for (uint32_t j = 0; j < i && ok; j++)
			if ((x->conflict[i][j / 64] >> (j % 64) & 1) && x->colour[j] == c)
				ok = false;
		if (!ok)
			continue;
		x->colour[i] = c;
		if (exact_rec(x, i + 1, c == used ? used + 1 : used))
			return true;
		if (!x->budget)
			return false;
	}
	return false;
}

static bool covers(uint32_t n, const struct unit *u, uint32_t seg)
{
	return (seg + n - u->start) % n < u->len;
}

static int cmp_unit_start(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->len < y->len) - (x->len > y->len);
}

/* Colour u (sorted here) with k colours exactly, within the budget. */
static bool color_exact(uint32_t n, struct unit *u, size_t nu, uint32_t k, uint64_t budget)
{
	struct exact x = {.nu = (uint32_t)nu, .k = k, .budget = budget};

	if (nu > EXACT_MAX_UNITS)
		return false;
	qsort(u, nu, sizeof(*u), cmp_unit_start);
	for (size_t i = 0; i < nu; i++)
		for (size_t j = 0; j < nu; j++)
			if (i != j &&
			    (covers(n, &u[j], u[i].start) || covers(n, &u[i], u[j].start)))
				x.conflict[i][j / 64] |= 1ull << (j % 64);
	if (!exact_rec(&x, 0, 0))
		return false;
	for (size_t i = 0; i < nu; i++)
		u[i].colour = x.colour[i];
	return true;
}

/* The most units over one segment: no colouring uses fewer colours. */
static uint32_t units_load(uint32_t n, const struct unit *u, size_t nu)
{
	int64_t *d = xcalloc((size_t)n + 1, sizeof(int64_t)), run = 0, best = 0;

	for (size_t i = 0; i < nu; i++) {
		uint32_t s = u[i].start, e = s + u[i].len;

		d[s]++;
		if (e <= n) {
			d[e]--;
		} else {
			d[n]--;
			d[0]++;
			d[e - n]--;
		}
	}
	for (uint32_t x = 0; x < n; x++) {
		run += d[x];
		if (run > best)
			best = run;
	}
	free(d);
	return (uint32_t)best;
}

void rwa_color_circle(uint32_t n, const struct rwa_arc *arcs, size_t narcs, enum rwa_dir dir,
		      struct rwa_solution *sol)
{
	size_t nu = 0;
	uint64_t work = 0;

	for (size_t i = 0; i < narcs; i++)
		nu += arcs[i].count;
	if (!nu)
		return;
	struct unit *a = xmalloc(nu * sizeof(*a)), *b;
	nu = 0;
	for (size_t i = 0; i < narcs; i++)
		for (uint32_t k = 0; k < arcs[i].count; k++) {
			a[nu++] = (struct unit){arcs[i].start % n, arcs[i].len, arcs[i].id, 0};
			work += arcs[i].len / 64 + 1;
		}

	uint32_t ca = color_cut_sweep(n, a, nu), cb = UINT32_MAX;
	/* First-fit costs units x colours x words and seldom wins by more than a
	 * colour on large sets: only when that is small. */
	if (work * ca <= 20000000ull) {
		b = xmalloc(nu * sizeof(*b));
		memcpy(b, a, nu * sizeof(*b));
		cb = color_first_fit(n, b, nu);
		if (cb < ca) {
			free(a);
			a = b;
		} else {
			free(b);
		}
		if (cb < ca)
			ca = cb;
	}
	/* Above the load on a small set: look for a colouring with fewer
	 * colours, from the load up (the heuristics miss some; tests check
	 * small rings exhaustively). */
	if (nu <= EXACT_MAX_UNITS) {
		uint32_t load = units_load(n, a, nu);

		b = xmalloc(nu * sizeof(*b));
		for (uint32_t k = load; k < ca; k++) {
			memcpy(b, a, nu * sizeof(*b));
			if (color_exact(n, b, nu, k, 200000)) {
				memcpy(a, b, nu * sizeof(*b));
				break;
			}
		}
		free(b);
	}
	uint32_t base = sol->colours[dir];
	qsort(a, nu, sizeof(*a), cmp_unit_id);
	for (size_t i = 0; i < nu; i++)
		push_run(sol, a[i].id, base + a[i].colour, 1, dir);
	free(a);
}
