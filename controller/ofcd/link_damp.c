/* A host link's flap damping: whether ofcd should hold a host's port failed,
 * from the link states its agent reports. This is BGP's route-flap damping
 * (RFC 2439, section 4.3: a figure of merit that grows by a fixed penalty on
 * each flap and decays exponentially, suppressing the route above a cut-off
 * and reusing it below a lower threshold, with a ceiling so that suppression
 * ends within a maximum time), applied per port: a flap is the link going
 * down after it was seen up. On top of it a hold-down: a failed link comes
 * back only after it has stayed up that long, so a link bouncing faster
 * than the hold-down is re-planned around once and left failed until it
 * settles. A link that is down is always wanted failed: damping delays
 * restores, never a failure.
 *
 * Pure logic on the caller's clock (milliseconds): no thread, no I/O; the
 * loop thread's host_links.c calls it per reported port. */
#include "controller/ofcd/internal.h"

#include <math.h>

void link_damp_defaults(struct link_damp_opts *o)
{
	if (!o->hold_down_ms)
		o->hold_down_ms = OFCD_LINK_HOLD_DOWN_MS;
	if (!o->half_life_ms)
		o->half_life_ms = OFCD_LINK_HALF_LIFE_MS;
	if (!o->penalty)
		o->penalty = OFCD_LINK_PENALTY;
	if (!o->suppress)
		o->suppress = OFCD_LINK_SUPPRESS;
	if (!o->reuse)
		o->reuse = OFCD_LINK_REUSE;
	if (!o->max_suppress_ms)
		o->max_suppress_ms = OFCD_LINK_MAX_SUPPRESS_MS;
}

double link_damp_ceiling(const struct link_damp_opts *o)
{
	/* RFC 2439's ceiling: the penalty that decays to `reuse` in
	 * max_suppress, so no link stays suppressed longer. */
	return o->reuse * exp2((double)o->max_suppress_ms / o->half_life_ms);
}

/* The penalty decayed to now. */
static void decay(const struct link_damp_opts *o, struct link_damp *s, int64_t now_ms)
{
	if (s->penalty > 0 && now_ms > s->at_ms)
		s->penalty *= exp2(-(double)(now_ms - s->at_ms) / o->half_life_ms);
	if (s->penalty < 1)
		s->penalty = 0;
	s->at_ms = now_ms;
}

bool link_damp_observe(const struct link_damp_opts *o, struct link_damp *s, bool up, int64_t now_ms)
{
	decay(o, s, now_ms < s->at_ms ? s->at_ms : now_ms); /* (a clock never runs back here) */
	if (!up) {
		if (s->seen && s->up) {
			double ceiling = link_damp_ceiling(o);

			s->flaps++;
			s->penalty += o->penalty;
			if (s->penalty > ceiling)
				s->penalty = ceiling;
		}
		s->up_since_ms = -1;
	} else if (!s->seen || !s->up) {
		s->up_since_ms = s->at_ms;
	}
	s->seen = true;
	s->up = up;
	if (s->penalty > o->suppress)
		s->suppressed = true;
	else if (s->suppressed && s->penalty < o->reuse)
		s->suppressed = false;
	if (!up)
		return true;
	if (!s->failed)
		return false; /* up, and not ours to keep failed */
	return s->suppressed || s->at_ms - s->up_since_ms < (int64_t)o->hold_down_ms;
}
