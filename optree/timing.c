/* The time model: Eq. 3 of the paper, with MRR retuning derived from the
 * schedule's lightpaths and, with --overlap, hidden where rings sit idle.
 *
 * Per node and channel (direction, fibre, wavelength) there are two rings:
 * transmit (adds) and receive (drops). In a step a node adding on a channel
 * needs its transmit ring tuned, one dropping needs its receive ring tuned,
 * and one the light passes through needs both detuned; otherwise (the
 * channel is dark at that node) the rings may stay as they are. A step
 * needs retuning when some ring must change. Without overlap that costs
 * d_mrr before the step; with overlap a ring that was idle (dark) for the
 * last j steps could have been retuned then, so it waits d_mrr - j * step,
 * and the step waits for the slowest ring.
 *
 * Rings are tracked as bitsets over nodes per channel; the idle history
 * keeps the last w steps, w = ceil(d_mrr / step) (capped: past the cap a
 * ring counts as idle for w steps at most, which overstates the wait).
 */
#include "optree/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HISTORY_MAX 16

static void set_range(uint64_t *b, uint32_t lo, uint32_t hi)
{
	while (lo < hi && (lo & 63)) {
		b[lo / 64] |= 1ull << (lo & 63);
		lo++;
	}
	while (lo + 64 <= hi) {
		b[lo / 64] = ~0ull;
		lo += 64;
	}
	while (lo < hi) {
		b[lo / 64] |= 1ull << (lo & 63);
		lo++;
	}
}

/* The nodes strictly between x's source and destination, the way it goes
 * round the ring of n, into th (a bitset). */
static void set_between(uint64_t *th, const struct xfer *x, uint32_t n)
{
	uint32_t a = xfer_dir(x) == DIR_CW ? x->src : x->dst;
	uint32_t b = xfer_dir(x) == DIR_CW ? x->dst : x->src;

	a = (a + 1) % n;
	if (a <= b) {
		set_range(th, a, b);
	} else {
		set_range(th, a, n);
		set_range(th, 0, b);
	}
}

/* The longest idle run before step st (at most w steps) shared by every
 * ring that changes at st: the steps whose used bitsets (hist, a slot of
 * chw words a step) meet none of the changes on the channels st touched. */
static uint32_t idle_before(const uint64_t *hist, size_t chw, size_t words, const uint64_t *change,
			    const uint32_t *tlist, uint32_t nt, uint32_t st, uint32_t w)
{
	uint32_t idle = st < w ? st : w;

	for (uint32_t j = 1; j <= w && j <= st && idle >= j; j++) {
		const uint64_t *prev = hist + (size_t)((st - j) % (w + 1)) * chw;
		bool hit = false;

		/* Only channels both steps touched can meet. */
		for (uint32_t i = 0; i < nt && !hit; i++) {
			size_t o = (size_t)tlist[i] * words;

			for (size_t k = o; k < o + words; k++)
				if (change[k] & prev[k]) {
					hit = true;
					break;
				}
		}
		if (hit)
			idle = j - 1;
	}
	return idle;
}

void optree_timing(const struct optree_ring *r, const struct optree_result *res, bool overlap,
		   struct optree_time *t)
{
	const struct schedule *s = &res->sched;
	uint32_t n = r->nodes, W = r->wavelengths, F = r->fibres, nch = 2 * F * W;
	size_t words = (size_t)n / 64 + 1, chw = (size_t)nch * words;
	double d_mrr = r->mrr_delay * 1e6, d_oeo = r->oeo_delay * 1e6;

	memset(t, 0, sizeof(*t));
	t->step_us = (double)r->block_bytes * 8.0 / r->rate * 1e6;
	uint32_t w = t->step_us > 0 ? (uint32_t)ceil(d_mrr / t->step_us) : HISTORY_MAX;
	if (w < 1)
		w = 1;
	if (w > HISTORY_MAX)
		w = HISTORY_MAX;

	uint64_t *add = xcalloc(chw, 8), *drop = xcalloc(chw, 8), *thru = xcalloc(chw, 8);
	uint64_t *tx = xcalloc(chw, 8), *rx = xcalloc(chw, 8), *change = xcalloc(chw, 8);
	uint64_t *hist = xcalloc(chw * (w + 1), 8); /* used bitsets: this step and w before */
	uint32_t *hch = xmalloc((size_t)(w + 1) * nch * sizeof(uint32_t)); /* their channels */
	uint32_t *hn = xcalloc(w + 1, sizeof(uint32_t));
	uint8_t *touched = xcalloc(nch, 1);
	uint32_t *tlist = xmalloc(nch * sizeof(uint32_t));
	bool *stage_start = xcalloc((size_t)s->nsteps + 1, sizeof(bool));
	double stall_stage_plain = 0, stall_stage = 0, stall_all = 0, stall_all_plain = 0;

	for (uint32_t i = 0; i < res->nstages; i++)
		if (res->stage[i].first_step < s->nsteps)
			stage_start[res->stage[i].first_step] = true;

	for (uint32_t st = 0; st < s->nsteps; st++) {
		uint32_t nt = 0;

		for (uint32_t k = s->step_start[st]; k < s->step_start[st + 1]; k++) {
			const struct xfer *x = &s->xfers[k];
			uint32_t ch = (xfer_dir(x) == DIR_CW ? 0 : F * W) + x->fibre * W + x->lane;
			uint64_t *th = thru + (size_t)ch * words;

			if (ch >= nch)
				continue;
			if (!touched[ch]) {
				touched[ch] = 1;
				tlist[nt++] = ch;
			}
			add[(size_t)ch * words + x->src / 64] |= 1ull << (x->src & 63);
			drop[(size_t)ch * words + x->dst / 64] |= 1ull << (x->dst & 63);
			set_between(th, x, n);
		}
		/* Rings that must change, and the new state. */
		bool any = false;
		uint32_t slot = st % (w + 1);
		uint64_t *used = hist + (size_t)slot * chw;
		/* Clear what the step that last had this slot touched. */
		for (uint32_t i = 0; i < hn[slot]; i++)
			memset(used + (size_t)hch[(size_t)slot * nch + i] * words, 0, words * 8);
		hn[slot] = nt;
		memcpy(hch + (size_t)slot * nch, tlist, nt * sizeof(uint32_t));
		for (uint32_t i = 0; i < nt; i++) {
			size_t o = (size_t)tlist[i] * words;

			for (size_t k = o; k < o + words; k++) {
				uint64_t c = (add[k] & ~tx[k]) | (thru[k] & tx[k]) |
					     (drop[k] & ~rx[k]) | (thru[k] & rx[k]);

				change[k] = c;
				any |= c != 0;
				used[k] = add[k] | drop[k] | thru[k];
				tx[k] = (tx[k] & ~thru[k]) | add[k];
				rx[k] = (rx[k] & ~thru[k]) | drop[k];
			}
		}
		if (any) {
			uint32_t idle = idle_before(hist, chw, words, change, tlist, nt, st, w);
			double wait = d_mrr - idle * t->step_us;

			if (wait < 0)
				wait = 0;
			t->retune_steps++;
			stall_all_plain += d_mrr;
			stall_all += overlap ? wait : d_mrr;
			if (stage_start[st]) {
				t->retune_stages++;
				stall_stage_plain += d_mrr;
				stall_stage += overlap ? wait : d_mrr;
				if (overlap && wait == 0 && d_mrr > 0)
					t->hidden_stages++;
			}
		}
		for (uint32_t i = 0; i < nt; i++) {
			size_t o = (size_t)tlist[i] * words;

			memset(add + o, 0, words * 8);
			memset(drop + o, 0, words * 8);
			memset(thru + o, 0, words * 8);
			memset(change + o, 0, words * 8);
			touched[tlist[i]] = 0;
		}
	}
	double base = s->nsteps * t->step_us + res->nstages * d_oeo;
	t->plain_us = base + stall_stage_plain;
	t->time_us = base + stall_stage;
	t->saved_us = t->plain_us - t->time_us;
	t->all_retunes_plain_us = base + stall_all_plain;
	t->all_retunes_us = base + stall_all;
	free(add);
	free(drop);
	free(thru);
	free(tx);
	free(rx);
	free(change);
	free(hist);
	free(hch);
	free(hn);
	free(touched);
	free(tlist);
	free(stage_start);
}
