/* What a schedule should take on the testbed's circuits, priced on what it
 * does there: each step's transfers put their bytes on the circuits they
 * cross (a port's own circuit, or every circuit of the route a transfer
 * without a port follows), transfers that share a circuit in a step share
 * its rate, and a step lasts alpha plus its busiest circuit's bytes at the
 * rate a circuit carries. Ports a topology leaves without a circuit, and
 * circuits a schedule does not use, carry nothing and speed nothing up:
 * the engines' own figure prices a host's egress as all its ports at the
 * link rate, which made a torus:2x4 on 4-port hosts (3 circuits a host)
 * look 4/3 faster than it can be.
 *
 * A circuit's shaping is a token bucket (tbf) of netlink_tbf_bucket's
 * bytes: a circuit idle long enough to fill it sends its next bytes up to
 * the bucket at the veth's speed, and only the rest at the rate. So a
 * circuit enters a step with what its bucket gathered since it last
 * drained (at the rate, up to the bucket; full before the first step),
 * and its time in the step is its bytes beyond that at the rate. Unpriced, runs that leave circuits
 * idle for a step beat the model below ~2 MiB (torus-rings 0.84x at
 * 2 MiB on torus:2x4, 20 Mb/s: 96 KiB a circuit is a fifth of its block).
 *
 * Steps in which no host moves a byte cost nothing (the executor passes
 * them without waiting), and the bytes are the executor's: a block is
 * size / nodes rounded down to whole 4-byte elements, a part of it the
 * elements its fixed-point range covers (exec/exec.c, elem_range). */
#include "controller/testbed/testbed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"

/* next[s * n + v]: the port host s sends to v on (its route's first hop),
 * UINT32_MAX when v is out of reach: a BFS from every host over the
 * circuits in port order, as testbed_target sets the routes (ties to the
 * lowest port), so a transfer without a port is priced on the circuits
 * the kernel sends it down. */
static uint32_t *route_table(const struct testbed_net *t)
{
	uint32_t n = t->nhosts, P = t->ports;
	uint32_t *next = xmalloc(((size_t)n * n + 1) * sizeof(uint32_t));
	uint32_t *first = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *queue = xmalloc(((size_t)n + 1) * sizeof(uint32_t));

	for (uint32_t s = 0; s < n; s++) {
		uint32_t head = 0, tail = 0;

		memset(first, 0xff, (size_t)n * sizeof(uint32_t));
		first[s] = UINT32_MAX - 1;
		queue[tail++] = s;
		while (head < tail) {
			uint32_t u = queue[head++];

			for (uint32_t p = 0; p < P; p++) {
				uint32_t v = t->peer[(size_t)u * P + p];

				if (v >= n || first[v] != UINT32_MAX)
					continue;
				first[v] = u == s ? p : first[u];
				queue[tail++] = v;
			}
		}
		for (uint32_t v = 0; v < n; v++)
			next[(size_t)s * n + v] = v == s ? UINT32_MAX : first[v];
	}
	free(first);
	free(queue);
	return next;
}

/* Bytes of x as the executor moves them (exec.c's elem_range, per block). */
static double xfer_bytes(const struct xfer *x, uint64_t elems)
{
	uint64_t e0 = (uint64_t)(((unsigned __int128)x->offset * elems) >> 31);
	uint64_t e1 =
	    (uint64_t)(((unsigned __int128)((uint64_t)x->offset + x->length) * elems) >> 31);

	if (e1 > elems)
		e1 = elems;
	if (e0 > e1)
		e0 = e1;
	return (double)(e1 - e0) * 4.0 * xfer_blocks(x);
}

/* One transfer's bytes onto the circuits it crosses; the circuits touched
 * are listed in touched (for the next step's reset). Returns -1 when the
 * circuits do not carry it (no circuit on its port, or no route). */
static int load_xfer(const struct testbed_net *t, const uint32_t *next, const struct xfer *x,
		     double bytes, double *load, uint32_t *touched, uint32_t *ntouched,
		     uint8_t *used)
{
	uint32_t n = t->nhosts, P = t->ports, u = x->src;

	if (x->src >= n || x->dst >= n)
		return -1;
	for (uint32_t hops = 0; u != x->dst; hops++) {
		uint32_t p = x->lane != SCHED_NO_LANE ? x->lane : next[(size_t)u * n + x->dst];
		size_t i = (size_t)u * P + p;

		if (p >= P || t->peer[i] >= n || hops >= n ||
		    (x->lane != SCHED_NO_LANE && t->peer[i] != x->dst))
			return -1;
		u = t->peer[i];
		if (!(bytes > 0))
			continue;
		if (load[i] == 0) /* once a step each: touched holds at most nl */
			touched[(*ntouched)++] = (uint32_t)i;
		load[i] += bytes;
		used[i] = 1;
	}
	return 0;
}

/* The error for a transfer the circuits do not carry, in the executor's
 * words (exec.c refuses it the same way once it runs). */
static int off_circuits(const struct testbed_net *t, size_t k, const struct xfer *x,
			struct ofc_error *err)
{
	size_t i = (size_t)x->src * t->ports + x->lane;

	if (x->src >= t->nhosts || x->dst >= t->nhosts)
		return ofc_error_set(err, OFC_E_INPUT,
				     "transfer %zu (%u -> %u) is outside the testbed's %u hosts", k,
				     x->src, x->dst, t->nhosts);
	if (x->lane == SCHED_NO_LANE)
		return ofc_error_set(err, OFC_E_INPUT,
				     "transfer %zu goes from host %u to host %u, but no route of "
				     "the circuits reaches it",
				     k, x->src, x->dst);
	return ofc_error_set(
	    err, OFC_E_INPUT,
	    "transfer %zu goes from host %u to host %u on port %u, but that port %s", k, x->src,
	    x->dst, x->lane,
	    x->lane >= t->ports || t->peer[i] == UINT32_MAX
		? "has no circuit"
		: "reaches another host (is the testbed at the config's topology?)");
}

int testbed_predict(const struct schedule *s, const struct testbed_net *t,
		    const struct testbed_model *m, uint64_t size, double *per_step,
		    struct testbed_prediction *p, struct ofc_error *err)
{
	size_t nl = (size_t)t->nhosts * t->ports;
	uint64_t elems = s->nodes ? size / s->nodes / 4 : 0;
	double *load = xcalloc(nl + 1, sizeof(double));
	/* each circuit's bucket: its level at time at[i] (lazily refilled) */
	double *level = xmalloc((nl + 1) * sizeof(double));
	double *at = xcalloc(nl + 1, sizeof(double));
	double now = 0, r8 = m->rate / 8;
	uint32_t *touched = xmalloc((nl + 1) * sizeof(uint32_t));
	uint8_t *used = xcalloc(nl + 1, 1);
	uint32_t *next = NULL;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	/* Full at the start: the circuits idled while the run was set up.
	 * (Crediting it puts rings, whose every step drains every circuit
	 * they use, 1.5% over the model at 4 MiB; without it, a 64 KiB
	 * allreduce on ring:8 ran 5x faster than the model, its 112 KiB a
	 * circuit mostly in the bucket.) */
	for (size_t i = 0; i < nl; i++)
		level[i] = m->burst;
	if (!(m->rate > 0)) {
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "the testbed's circuits are unshaped: no rate to price a "
				   "schedule at (testbed up with a link rate)");
		goto out;
	}
	for (size_t k = 0; k < s->nxfers && !next; k++)
		if (s->xfers[k].lane == SCHED_NO_LANE)
			next = route_table(t);
	for (uint32_t st = 0; st < s->nsteps && rc == 0; st++) {
		uint32_t ntouched = 0;
		double most = 0, step = 0;

		for (size_t k = s->step_start[st]; k < s->step_start[st + 1]; k++) {
			const struct xfer *x = &s->xfers[k];

			p->routed += x->lane == SCHED_NO_LANE;
			if (load_xfer(t, next, x, xfer_bytes(x, elems), load, touched, &ntouched,
				      used) < 0) {
				rc = off_circuits(t, k, x, err);
				break;
			}
		}
		for (uint32_t k = 0; k < ntouched; k++) {
			uint32_t i = touched[k];
			double has = fmin(m->burst, level[i] + (now - at[i]) * r8);

			level[i] = has; /* (at the step's start) */
			at[i] = now;
			most = load[i] - has > most ? load[i] - has : most;
		}
		if (s->step_start[st + 1] > s->step_start[st]) {
			step = m->alpha + most * 8 / m->rate;
			p->alpha_s += m->alpha;
			p->bytes_s += most * 8 / m->rate;
			p->busiest_bytes += most;
			p->steps++;
		}
		/* what each bucket holds at the step's end: drained by its
		 * bytes, filled at the rate while the step lasts */
		for (uint32_t k = 0; k < ntouched; k++) {
			uint32_t i = touched[k];

			level[i] = fmin(m->burst, fmax(0, level[i] + step * r8 - load[i]));
			at[i] = now + step;
			load[i] = 0;
		}
		now += step;
		if (per_step)
			per_step[st] = step;
	}
	p->seconds = p->alpha_s + p->bytes_s;
	for (size_t i = 0; i < nl; i++)
		p->circuits_used += used[i];
out:
	free(load);
	free(level);
	free(at);
	free(touched);
	free(used);
	free(next);
	return rc;
}

/* Whether measured holds the prediction, and when it does not, the term
 * that would have to change for it to: the bytes' term when it is most of
 * the prediction (the rate the busiest circuits carried in the run, from
 * the time left after alpha), else alpha (what a step cost, from the time
 * left after the bytes). */
bool testbed_judge(const struct testbed_prediction *p, const struct testbed_model *m,
		   double measured, char *line, size_t len)
{
	double ratio = p->seconds > 0 ? measured / p->seconds : NAN;
	bool holds = fabs(ratio - 1) <= TESTBED_MODEL_TOLERANCE;
	char a[32], b[32];

	if (holds) {
		snprintf(line, len, "measured %.3gx the model's time: it holds (within %.0f%%)",
			 ratio, 100 * TESTBED_MODEL_TOLERANCE);
	} else if (p->bytes_s >= p->alpha_s && measured > p->alpha_s) {
		double carried = p->busiest_bytes * 8 / (measured - p->alpha_s);

		snprintf(line, len,
			 "measured %.3gx the model's time: the bytes' term is off by %.3gx (the "
			 "busiest circuits carried %s in the run, the model %s)",
			 ratio, m->rate / carried, testbed_rate_str(carried, a, sizeof(a)),
			 testbed_rate_str(m->rate, b, sizeof(b)));
	} else if (p->steps && measured > p->bytes_s) {
		double alpha = (measured - p->bytes_s) / p->steps;

		snprintf(line, len,
			 "measured %.3gx the model's time: alpha is off by %.3gx (a step cost "
			 "%.0f us in the run, the model %.0f us)",
			 ratio, m->alpha > 0 ? alpha / m->alpha : INFINITY, alpha * 1e6,
			 m->alpha * 1e6);
	} else {
		snprintf(line, len,
			 "measured %.3gx the model's time: faster than its bytes at the "
			 "rate the circuits carry (%s)",
			 ratio, testbed_rate_str(m->rate, a, sizeof(a)));
	}
	return holds;
}
