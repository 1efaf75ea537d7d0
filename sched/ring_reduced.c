/* WDM ring schedules reduced by rotations whose subgroup changes with the
 * step (see sched.h): the expansion and the check by symmetry.
 *
 * Why one subgroup per step: OpTree's stage i >= 2 runs the same lines in
 * every level-(i-1) group of n_(i-1) consecutive nodes, so the stage is
 * invariant under rotation by n_(i-1) (same steps, same wavelengths) and
 * under nothing finer (a group boundary moves); stage 1 is a circulant
 * coloured by tilings that put a lightpath's translates by 1 on other
 * wavelengths or steps, and no colouring could do otherwise: a lightpath
 * of L >= 2 segments and its translate by 1 share a segment, so one
 * program under all of Z_N with the same wavelengths does not exist for
 * any schedule with a lightpath longer than one segment
 * (docs/rings-fluid.md, "OpTree by symmetry").
 *
 * Why the check is sound: let p be step t's period and suppose the state
 * before the step is invariant under rotation by p (node r + h holds
 * b + h whenever node r holds b, h a multiple of p). The step's transfers
 * are too, so every translate of a program transfer x is checked by x
 * itself against its representative src < p; node r < p receives exactly
 * one translate of every x with dst = r mod p, namely the block b - h for
 * h = dst - r; and the lightpaths on one channel are the program's arcs
 * repeated every p segments, so they are disjoint exactly when the arcs,
 * read modulo p, are (an arc longer than p meets its own translate). The
 * state after the step is then invariant under p as well. When the next
 * step's period q differs, the state is moved to the representatives of
 * lcm(p, q) by translation and, for q < lcm, checked invariant under q
 * (else the reduced check fails: it cannot follow an asymmetric state,
 * although the expansion may still be correct). So a pass means the
 * expansion passes sched_verify's WDM checks; the unit test shows the
 * converse on OpTree's schedules and their corruptions. */
#include "sched/sched.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sched_ring_reduced_free(struct sched_ring_reduced *r)
{
	sched_free(&r->prog);
	free(r->period);
	memset(r, 0, sizeof(*r));
}

uint64_t sched_ring_reduced_transfers(const struct sched_ring_reduced *r)
{
	uint64_t total = 0;

	for (uint32_t t = 0; t < r->prog.nsteps; t++)
		if (r->period[t])
			total +=
			    (uint64_t)sched_step_size(&r->prog, t) * (r->prog.nodes / r->period[t]);
	return total;
}

static struct xfer rotate(const struct xfer *x, uint32_t h, uint32_t n)
{
	struct xfer y = *x;

	y.src = (uint16_t)((x->src + h) % n);
	y.dst = (uint16_t)((x->dst + h) % n);
	y.block = (x->block + h) % n;
	return y;
}

int sched_ring_reduced_expand(const struct sched_ring_reduced *r, struct schedule *s,
			      struct ofc_error *err)
{
	const struct schedule *p = &r->prog;
	uint32_t n = p->nodes;
	uint64_t total = sched_ring_reduced_transfers(r);

	if (total >= UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%llu transfers do not fit an explicit schedule",
				     (unsigned long long)total);
	sched_init(s, p->collective, p->algorithm, n);
	snprintf(s->topology, sizeof(s->topology), "%s", p->topology);
	s->size_bytes = p->size_bytes;
	sched_reserve(s, (size_t)total);
	for (uint32_t t = 0; t < p->nsteps; t++) {
		uint32_t per = r->period[t];

		if (!per || n % per)
			return ofc_error_set(err, OFC_E_INPUT,
					     "step %u: period %u does not divide %u nodes", t + 1,
					     per, n);
		sched_step(s);
		for (uint32_t h = 0; h < n; h += per)
			for (size_t k = p->step_start[t]; k < p->step_start[t + 1]; k++)
				s->xfers[s->nxfers++] = rotate(&p->xfers[k], h, n);
		s->step_start[s->nsteps] = (uint32_t)s->nxfers;
	}
	return 0;
}

/* ---- the check by symmetry ------------------------------------------------------ */

/* The state: reps representatives (0 .. reps - 1), each a bitmap of the N
 * blocks it holds; node r + h holds b + h for h a multiple of reps. */
struct rstate {
	uint32_t n, reps, words;
	uint64_t *bits; /* reps x words */
	uint64_t *tmp;	/* words */
};

struct rcheck {
	const struct sched_ring_reduced *r;
	const struct verify_wdm *w;
	struct verify_report *rep;
	struct rstate st;
};

static int rfail(struct rcheck *c, uint32_t t, const struct xfer *x, const char *fmt, ...)
    OFC_PRINTF(4, 5);
static int rfail(struct rcheck *c, uint32_t t, const struct xfer *x, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	c->rep->ok = false;
	c->rep->bad_step = t;
	c->rep->bad_xfer = x ? (size_t)(x - c->r->prog.xfers) : SIZE_MAX;
	if (x)
		snprintf(c->rep->error, sizeof(c->rep->error),
			 "step %u, transfer %u -> %u of block %u (and its rotations): %s", t + 1,
			 x->src, x->dst, x->block, what);
	else
		snprintf(c->rep->error, sizeof(c->rep->error), "step %u: %s", t + 1, what);
	return -1;
}

static inline uint64_t *row(const struct rstate *s, uint32_t r)
{
	return s->bits + (size_t)r * s->words;
}

static inline bool held(const struct rstate *s, uint32_t r, uint32_t b)
{
	return row(s, r)[b / 64] >> (b % 64) & 1;
}

/* out = in rotated by h: bit (b + h) mod N of out is bit b of in. */
static void rotate_bits(const struct rstate *s, const uint64_t *in, uint64_t *out, uint32_t h)
{
	memset(out, 0, (size_t)s->words * sizeof(uint64_t));
	for (uint32_t w = 0; w < s->words; w++)
		for (uint64_t m = in[w]; m; m &= m - 1) {
			uint32_t b = (w * 64 + (uint32_t)__builtin_ctzll(m) + h) % s->n;

			out[b / 64] |= 1ull << (b % 64);
		}
}

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Move the state to q representatives (see the top of the file). */
static int state_period(struct rcheck *c, uint32_t t, uint32_t q)
{
	struct rstate *s = &c->st;
	uint32_t p = s->reps, l = p / gcd_u32(p, q) * q;

	if (q == p)
		return 0;
	if (l > p) {
		s->bits = xreallocarray(s->bits, (size_t)l * s->words, sizeof(uint64_t));
		for (uint32_t r = p; r < l; r++)
			rotate_bits(s, row(s, r % p), row(s, r), r - r % p);
	}
	for (uint32_t r = q; r < l; r++) {
		rotate_bits(s, row(s, r % q), s->tmp, r - r % q);
		if (memcmp(s->tmp, row(s, r), (size_t)s->words * sizeof(uint64_t)))
			return rfail(c, t, NULL,
				     "the state is not invariant under rotation by %u: node %u "
				     "does not hold node %u's blocks moved by %u, so the step's "
				     "rotations cannot be checked by symmetry",
				     q, r, r % q, r - r % q);
	}
	s->reps = q;
	return 0;
}

/* A lightpath of the step, read modulo the period. */
struct rpath {
	uint64_t key; /* channel * per + first segment mod per */
	uint32_t len; /* segments */
	uint32_t src, dst;
	size_t k; /* program transfer */
};

static int cmp_rpath(const void *a, const void *b)
{
	const struct rpath *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return (x->dst > y->dst) - (x->dst < y->dst);
}

/* Scratch of the check, per step. */
struct rscratch {
	struct rpath *lp; /* the step's lightpaths */
	size_t m, cap;
	uint32_t *add, *drop; /* per node */
	int32_t *diff;	      /* per segment */
	uint32_t *dv;	      /* per transfer: its receiving representative */
};

/* Read step t: ranges, representatives, causality, and the arcs modulo per
 * into s->lp. */
static int step_paths(struct rcheck *c, uint32_t t, uint32_t per, struct rscratch *s)
{
	const struct schedule *p = &c->r->prog;
	const struct verify_wdm *w = c->w;
	uint32_t n = p->nodes, half = w->fibres * w->wavelengths;
	size_t x0 = p->step_start[t], nx = p->step_start[t + 1] - x0;

	if (nx > s->cap) {
		s->cap = nx;
		s->lp = xreallocarray(s->lp, s->cap, sizeof(*s->lp));
	}
	s->m = 0;
	for (size_t k = x0; k < x0 + nx; k++) {
		const struct xfer *x = &p->xfers[k];
		enum ring_dir dir = xfer_dir(x);

		if (x->src >= per)
			return rfail(c, t, x, "sender %u is not a representative (< %u)", x->src,
				     per);
		if (x->dst >= n || x->src == x->dst || x->block >= n)
			return rfail(c, t, x, "node or block out of range");
		if (x->offset != 0 || x->length != SCHED_ONE || xfer_op(x) != XFER_COPY)
			return rfail(c, t, x, "a reduced ring schedule copies whole blocks");
		if (dir != DIR_CW && dir != DIR_CCW)
			return rfail(c, t, x, "no ring direction");
		if (x->fibre >= w->fibres || x->lane >= w->wavelengths)
			return rfail(c, t, x, "fibre %u or wavelength %u out of range", x->fibre,
				     x->lane);
		if (!held(&c->st, x->src, x->block))
			return rfail(c, t, x, "node %u does not hold block %u yet", x->src,
				     x->block);
		uint32_t first = dir == DIR_CW ? x->src : x->dst;
		uint32_t len =
		    dir == DIR_CW ? (x->dst + n - x->src) % n : (x->src + n - x->dst) % n;
		uint32_t ch = (dir == DIR_CW ? 0 : half) + x->fibre * w->wavelengths + x->lane;

		if (len > per)
			return rfail(c, t, x,
				     "lightpath conflict: %u segments meet the same lightpath "
				     "rotated by %u (%s fibre %u wavelength %u)",
				     len, per, dir == DIR_CW ? "cw" : "ccw", x->fibre, x->lane);
		s->lp[s->m++] =
		    (struct rpath){(uint64_t)ch * per + first % per, len, x->src, x->dst, k};
	}
	return 0;
}

/* lp[i] repeats lp[i - 1]: the same lightpath (sorted by cmp_rpath). */
static bool same_path(const struct rpath *lp, size_t i)
{
	return i && lp[i - 1].key == lp[i].key && lp[i - 1].src == lp[i].src &&
	       lp[i - 1].dst == lp[i].dst;
}

/* Conflicts per channel on the ring of per segments (lp sorted). */
static int step_conflicts(struct rcheck *c, uint32_t t, uint32_t per, const struct rpath *lp,
			  size_t m)
{
	const struct schedule *p = &c->r->prog;

	for (size_t i = 0; i < m; i++) {
		const struct rpath *a = &lp[i];
		uint64_t ch = a->key / per;
		const struct rpath *b = i + 1 < m && lp[i + 1].key / per == ch ? &lp[i + 1] : NULL;

		if (same_path(lp, i))
			return rfail(c, t, &p->xfers[a->k],
				     "lightpath %u -> %u (wavelength %u) carries more than one "
				     "block in one step",
				     a->src, a->dst, p->xfers[a->k].lane);
		if (!b) { /* the channel's last arc against its first, round */
			size_t j = i;

			while (j && lp[j - 1].key / per == ch)
				j--;
			if (j != i && a->key % per + a->len > per &&
			    a->key % per + a->len - per > lp[j].key % per)
				b = &lp[j];
			else
				continue;
		} else if (a->key % per + a->len <= b->key % per) {
			continue;
		} else if (b->key == a->key && b->src == a->src && b->dst == a->dst) {
			continue; /* the same lightpath: reported on the next round */
		}
		return rfail(c, t, &p->xfers[b->k],
			     "lightpath conflict with %u -> %u (%s fibre %u wavelength %u) or a "
			     "rotation of it by a multiple of %u",
			     a->src, a->dst, xfer_dir(&p->xfers[a->k]) == DIR_CW ? "cw" : "ccw",
			     p->xfers[a->k].fibre, p->xfers[a->k].lane, per);
	}
	return 0;
}

/* Add and drop: node v's lightpaths are the program's with src (dst)
 * congruent to v modulo per. */
static int step_add_drop(struct rcheck *c, uint32_t t, uint32_t per, struct rscratch *s)
{
	const struct schedule *p = &c->r->prog;
	const struct rpath *lp = s->lp;
	uint32_t A = c->w->max_add;
	int rc = 0;

	for (size_t i = 0; i < s->m && rc == 0; i++) {
		const struct rpath *a = &lp[i];

		if (same_path(lp, i))
			continue;
		if (++s->add[a->src] > A)
			rc = rfail(c, t, &p->xfers[a->k],
				   "node %u adds more than %u lightpaths in one step", a->src, A);
		else if (++s->drop[a->dst % per] > A)
			rc = rfail(c, t, &p->xfers[a->k],
				   "node %u drops more than %u lightpaths in one step",
				   a->dst % per, A);
	}
	for (size_t i = 0; i < s->m; i++)
		s->add[lp[i].src] = s->drop[lp[i].dst % per] = 0;
	return rc;
}

/* Busy wavelengths per fibre segment, from the arcs modulo per. */
static void step_wavelengths(struct rcheck *c, uint32_t per, struct rscratch *s)
{
	const struct rpath *lp = s->lp;
	uint32_t W = c->w->wavelengths;

	for (size_t i = 0; i < s->m;) {
		uint32_t df = (uint32_t)(lp[i].key / per) / W, most = 0, run = 0;
		size_t j = i;

		memset(s->diff, 0, ((size_t)per + 1) * sizeof(int32_t));
		for (; j < s->m && (uint32_t)(lp[j].key / per) / W == df; j++) {
			uint32_t st = (uint32_t)(lp[j].key % per), e = st + lp[j].len;

			if (j > i && same_path(lp, j))
				continue;
			s->diff[st]++;
			if (e <= per) {
				s->diff[e]--;
			} else {
				s->diff[per]--;
				s->diff[0]++;
				s->diff[e - per]--;
			}
		}
		for (uint32_t g = 0; g < per; g++) {
			run += (uint32_t)s->diff[g];
			if (run > most)
				most = run;
		}
		if (most > c->rep->max_wavelengths_used)
			c->rep->max_wavelengths_used = most;
		i = j;
	}
}

/* Write step t: representative dst mod per receives block - (dst - dst mod
 * per); duplicates counted before anything is written. */
static void step_write(struct rcheck *c, uint32_t t, uint32_t per, struct rscratch *s)
{
	const struct schedule *p = &c->r->prog;
	uint32_t n = p->nodes;
	size_t x0 = p->step_start[t], nx = p->step_start[t + 1] - x0;

	for (size_t k = x0; k < x0 + nx; k++) {
		const struct xfer *x = &p->xfers[k];
		uint32_t rr = x->dst % per, h = x->dst - rr, b = (x->block + n - h) % n;

		s->dv[k - x0] = rr;
		if (held(&c->st, rr, b))
			c->rep->duplicate_blocks += (double)(n / per);
	}
	for (size_t k = x0; k < x0 + nx; k++) {
		const struct xfer *x = &p->xfers[k];
		uint32_t rr = s->dv[k - x0], b = (x->block + n - (x->dst - rr)) % n;

		row(&c->st, rr)[b / 64] |= 1ull << (b % 64);
	}
	c->rep->ntransfers += nx * (size_t)(n / per);
}

static int check_step(struct rcheck *c, uint32_t t, struct rscratch *s)
{
	const struct schedule *p = &c->r->prog;
	uint32_t per = c->r->period[t], n = p->nodes;

	if (!per || n % per)
		return rfail(c, t, NULL, "period %u does not divide %u nodes", per, n);
	if (state_period(c, t, per) < 0 || step_paths(c, t, per, s) < 0)
		return -1;
	qsort(s->lp, s->m, sizeof(*s->lp), cmp_rpath);
	if (step_conflicts(c, t, per, s->lp, s->m) < 0 || step_add_drop(c, t, per, s) < 0)
		return -1;
	if (c->rep->max_wavelengths_used < c->w->wavelengths)
		step_wavelengths(c, per, s);
	step_write(c, t, per, s);
	return 0;
}

/* Every node ends with all N blocks: every representative does. */
static int check_complete(struct rcheck *c)
{
	const struct schedule *p = &c->r->prog;
	uint32_t n = p->nodes;

	for (uint32_t q = 0; q < c->st.reps; q++) {
		uint32_t have = 0, b = 0;

		for (uint32_t i = 0; i < c->st.words; i++)
			have += popcount64(row(&c->st, q)[i]);
		if (have == n)
			continue;
		while (b < n && held(&c->st, q, b))
			b++;
		return rfail(c, p->nsteps ? p->nsteps - 1 : 0, NULL,
			     "node %u ends without block %u (%u of %u blocks)", q, b, have, n);
	}
	return 0;
}

int sched_verify_ring_reduced(const struct sched_ring_reduced *r, const struct verify_wdm *w,
			      struct verify_report *rep)
{
	const struct schedule *p = &r->prog;
	uint32_t n = p->nodes;
	struct rcheck c = {r, w, rep, {0}};
	struct rscratch s = {0};
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	rep->ok = true;
	rep->nsteps = p->nsteps;
	if (p->collective != SCHED_ALLGATHER)
		return rfail(&c, 0, NULL, "reduced ring schedules are all-gathers, not %s",
			     sched_collective_name(p->collective));
	if (n < 2 || n > SCHED_MAX_NODES)
		return rfail(&c, 0, NULL, "%u nodes", n);
	c.st.n = n;
	c.st.reps = 1;
	c.st.words = (n + 63) / 64;
	c.st.bits = xcalloc(c.st.words, sizeof(uint64_t));
	c.st.tmp = xcalloc(c.st.words, sizeof(uint64_t));
	c.st.bits[0] = 1; /* node 0 holds block 0; node h holds h */
	s.add = xcalloc(n, sizeof(uint32_t));
	s.drop = xcalloc(n, sizeof(uint32_t));
	s.diff = xcalloc((size_t)n + 1, sizeof(int32_t));
	s.dv = xcalloc((size_t)p->nxfers + 1, sizeof(uint32_t));
	for (uint32_t t = 0; t < p->nsteps && rc == 0; t++)
		rc = check_step(&c, t, &s);
	if (rc == 0)
		rc = check_complete(&c);
	free(c.st.bits);
	free(c.st.tmp);
	free(s.lp);
	free(s.add);
	free(s.drop);
	free(s.diff);
	free(s.dv);
	return rc;
}
