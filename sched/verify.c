/* The verifier: one model checker for every schedule ofc emits (see the
 * contract in sched.h).
 *
 * State is what each node holds of each block, as exact fixed-point
 * intervals. Copy collectives keep a bitmap of whole blocks held (the
 * common case: 2 MiB for a 4096-node all-gather) and interval lists only
 * for blocks a node holds part of. Reduce collectives keep, per node and
 * shard, a (count, weight-sum) pair for the inputs folded in, piecewise
 * over the shard. Schedules in equal parts of 1/2^k of a block (rings,
 * torus-rings) keep each part apart instead, laid out by the ring's
 * diagonals when the first step goes round one (cell()). A step is
 * checked in two phases so every transfer sees
 * the state from before the step: read (causality, links, lightpaths),
 * then write (deliveries, grouped by receiver and block).
 *
 * This file is the way in: which way a schedule is checked (the
 * all-to-all by sorting, a large reduction's shards in chunks, or
 * verify_ways.c's step loop or two parts side by side). The checks
 * themselves are in verify_*.c, listed in verify_internal.h.
 */
#include "sched/verify_internal.h"

/* An all-to-all off networks is checked by sorting first (verify_a2a_sorted),
 * which proves a right schedule right; a reduction too large for one table
 * in chunks of its shards; anything else, or a schedule sorting does not
 * prove, by verify_ways.c's step loop or two parts, for its report. */
int sched_verify(const struct schedule *s, const struct verify_opts *o,
		 struct verify_report *report)
{
	if (s->collective == SCHED_ALLTOALL && !(o && o->network) &&
	    verify_by_sorting(s, o, report) == 0)
		return 0;
	if (verify_chunks_needed(s, o))
		return verify_chunked(s, o, report);
	return verify_window(s, o, report, NULL);
}
