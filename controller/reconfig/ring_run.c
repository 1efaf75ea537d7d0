/* Running a verified ring schedule on the ring's MRR agents (`ofc ring
 * run`): every step's lightpaths become a configuration of MRR channels,
 * the ring is retuned from one configuration to the next through the
 * ring's driver, and the realised timeline (measured tuning, transmission
 * from the cost model) is set against Eq. 3 of the OpTree paper.
 *
 * Interfaces: interface 2f carries fibre f clockwise, 2f + 1 fibre f
 * counter-clockwise (docs/mrr.md); a ring needs 2F interfaces a node.
 *
 * A retune never lets light collide or circle, not even midway through:
 * an MRR that adds is kept only when its light still ends at the same
 * node; the rest of the old adds go off first (the light stops), then the
 * old drops, then the new drops, and the new adds last. With overlap the
 * next step's lightpaths whose MRRs are idle and whose segments are dark
 * in this step are tuned during this step's transmission (the
 * --overlap plan made real); the rest waits for the step to end.
 *
 * Transaction rules as for `ofc apply`: the fabric's lock is held, a
 * refused retune or a lost agent stops the run, and the ring is taken back
 * to its static configuration (the config's `lightpaths`), read back and
 * compared; the error names the stage, the step and the agent's reason
 * (which names the node). The run ends at the static configuration too.
 */
#include "controller/reconfig/internal.h"
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>

struct rr {
	const struct ring *ring;
	uint32_t n, I, W, F;
	size_t cells;
};

static size_t cell(const struct rr *r, struct mrr_chan c)
{
	return (((size_t)c.node * r->I + c.iface) * r->W + c.wl) * 2 + (c.role - 1);
}

static struct mrr_chan chan_of(const struct rr *r, size_t k)
{
	struct mrr_chan c;

	c.role = (uint32_t)(k % 2) + 1;
	k /= 2;
	c.wl = (uint32_t)(k % r->W);
	k /= r->W;
	c.iface = (uint32_t)(k % r->I);
	c.node = (uint32_t)(k / r->I);
	return c;
}

/* Where the light node u adds on (iface, wl) is dropped in `on`, or
 * UINT32_MAX when nobody drops it. */
static uint32_t light_end(const struct rr *r, const uint8_t *on, uint32_t u, uint32_t iface,
			  uint32_t wl)
{
	int step = iface % 2 ? -1 : 1;
	uint32_t v = u;

	for (uint32_t h = 0; h < r->n; h++) {
		v = (uint32_t)(((int64_t)v + step + r->n) % r->n);
		if (on[cell(r, (struct mrr_chan){v, iface, wl, MRR_DROP})])
			return v;
	}
	return UINT32_MAX;
}

/* The ops from `cur` to `next` in the order that keeps the light sound. */
static void transition(const struct rr *r, const uint8_t *cur, const uint8_t *next,
		       struct op_batch *b)
{
	b->n = 0;
	for (int pass = 0; pass < 4; pass++)
		for (size_t k = 0; k < r->cells; k++) {
			struct mrr_chan c = chan_of(r, k);
			bool add = c.role == MRR_ADD, kept = cur[k] && next[k];

			if (kept && add)
				kept = light_end(r, cur, c.node, c.iface, c.wl) ==
				       light_end(r, next, c.node, c.iface, c.wl);
			if (pass == 0 && add && cur[k] && !kept)
				batch_add(b, (struct op){.kind = OP_TUNE_OFF, .ch = c});
			if (pass == 1 && !add && cur[k] && !next[k])
				batch_add(b, (struct op){.kind = OP_TUNE_OFF, .ch = c});
			if (pass == 2 && !add && next[k] && !cur[k])
				batch_add(b, (struct op){.kind = OP_TUNE_ON, .ch = c});
			if (pass == 3 && add && next[k] && !kept)
				batch_add(b, (struct op){.kind = OP_TUNE_ON, .ch = c});
		}
}

static void apply_ops(uint8_t *on, const struct op_batch *b, const struct rr *r)
{
	for (uint32_t i = 0; i < b->n; i++)
		on[cell(r, b->ops[i].ch)] = b->ops[i].kind == OP_TUNE_ON;
}

/* Step t's configuration into on[] (cleared first); the MRR limit per
 * node and interface is checked. */
static int step_config(const struct rr *r, const struct schedule *s, uint32_t t, uint8_t *on,
		       uint32_t *used, struct ofc_error *err)
{
	memset(on, 0, r->cells);
	memset(used, 0, (size_t)r->n * r->I * sizeof(uint32_t));
	for (uint32_t i = s->step_start[t]; i < s->step_start[t + 1]; i++) {
		const struct xfer *x = &s->xfers[i];
		uint32_t iface = 2u * x->fibre + (xfer_dir(x) == DIR_CCW);
		struct mrr_chan a = {x->src, iface, x->lane, MRR_ADD};
		struct mrr_chan d = {x->dst, iface, x->lane, MRR_DROP};

		if (iface >= r->I || x->lane >= r->W || x->src >= r->n || x->dst >= r->n)
			return ofc_error_set(err, OFC_E_INPUT,
					     "step %u needs interface %u wavelength %u: ring '%s' "
					     "has %u interfaces (2 per fibre: clockwise, "
					     "counter-clockwise) and %u wavelengths",
					     t + 1, iface, x->lane, r->ring->name, r->I, r->W);
		for (int k = 0; k < 2; k++) {
			struct mrr_chan c = k ? d : a;

			if (on[cell(r, c)])
				continue;
			on[cell(r, c)] = 1;
			if (++used[(size_t)c.node * r->I + c.iface] > r->ring->mrrs)
				return ofc_error_set(
				    err, OFC_E_INPUT,
				    "step %u needs more than the %u MRRs of node %u "
				    "interface %u",
				    t + 1, r->ring->mrrs, c.node, c.iface);
		}
	}
	return 0;
}

/* With overlap: the lightpaths of next (configuration `want`) that can be
 * tuned while `cur` carries light: both MRRs idle, the segments dark on
 * that channel, room on the interfaces. Their channels into early. */
static void early_ops(const struct rr *r, const struct schedule *s, uint32_t t, const uint8_t *cur,
		      uint32_t *used, struct op_batch *b)
{
	uint32_t lo = s->step_start[t], hi = s->step_start[t + 1];
	uint8_t *lit = xcalloc((size_t)r->n * r->I * r->W + 1, 1); /* segment busy in cur */
	struct op_batch adds = {0};

	/* Segments lit in cur: walk every add to its drop. */
	memset(used, 0, (size_t)r->n * r->I * sizeof(uint32_t));
	for (size_t k = 0; k < r->cells; k++) {
		struct mrr_chan c;

		if (!cur[k])
			continue;
		c = chan_of(r, k);
		used[(size_t)c.node * r->I + c.iface]++;
		if (c.role != MRR_ADD)
			continue;
		uint32_t e = light_end(r, cur, c.node, c.iface, c.wl), v = c.node;
		int step = c.iface % 2 ? -1 : 1;

		for (uint32_t h = 0; h < r->n && v != e; h++) {
			/* segment from v in the light's direction */
			uint32_t seg = step > 0 ? v : (v + r->n - 1) % r->n;

			lit[((size_t)seg * r->I + c.iface) * r->W + c.wl] = 1;
			v = (uint32_t)(((int64_t)v + step + r->n) % r->n);
		}
	}
	b->n = 0;
	for (uint32_t i = lo; i < hi; i++) {
		const struct xfer *x = &s->xfers[i];
		uint32_t iface = 2u * x->fibre + (xfer_dir(x) == DIR_CCW), wl = x->lane;
		struct mrr_chan a = {x->src, iface, wl, MRR_ADD}, d = {x->dst, iface, wl, MRR_DROP};
		int step = xfer_dir(x) == DIR_CCW ? -1 : 1;
		bool ok = !cur[cell(r, a)] && !cur[cell(r, d)] &&
			  used[(size_t)a.node * r->I + iface] < r->ring->mrrs &&
			  used[(size_t)d.node * r->I + iface] < r->ring->mrrs;

		for (uint32_t v = x->src; ok && v != x->dst;) {
			uint32_t seg = step > 0 ? v : (v + r->n - 1) % r->n;

			ok = !lit[((size_t)seg * r->I + iface) * r->W + wl];
			v = (uint32_t)(((int64_t)v + step + r->n) % r->n);
		}
		if (!ok)
			continue;
		used[(size_t)a.node * r->I + iface]++;
		used[(size_t)d.node * r->I + iface]++;
		batch_add(b, (struct op){.kind = OP_TUNE_ON, .ch = d});
		batch_add(&adds, (struct op){.kind = OP_TUNE_ON, .ch = a});
	}
	for (uint32_t i = 0; i < adds.n; i++)
		batch_add(b, adds.ops[i]);
	batch_free(&adds);
	free(lit);
}

static uint32_t stage_of(const uint32_t *first, uint32_t nstages, uint32_t t)
{
	uint32_t s = 0;

	while (s + 1 < nstages && first[s + 1] <= t)
		s++;
	return s;
}

/* Back to the static configuration: read, retune, read back, compare. */
static int restore(struct device *dev, const struct rr *r, const struct device_state *target,
		   uint8_t *cur, uint8_t *want, struct op_batch *b, struct ofc_error *err)
{
	struct device_state st, back;
	int rc;

	state_init(&st, DEV_RING);
	if (device_read(dev, &st, err) < 0) {
		state_free(&st);
		return -1;
	}
	memset(cur, 0, r->cells);
	memset(want, 0, r->cells);
	for (uint32_t i = 0; i < st.nch; i++)
		if (st.ch[i].node < r->n && st.ch[i].iface < r->I && st.ch[i].wl < r->W)
			cur[cell(r, st.ch[i])] = 1;
	for (uint32_t i = 0; i < target->nch; i++)
		want[cell(r, target->ch[i])] = 1;
	state_free(&st);
	transition(r, cur, want, b);
	if (device_apply_batch(dev, b, err) < 0)
		return -1;
	state_init(&back, DEV_RING);
	rc = device_read(dev, &back, err);
	state_sort(&back);
	if (rc == 0 && !state_equal(&back, target))
		rc = ofc_error_set(err, OFC_E_RUNTIME,
				   "read back after restoring: %u MRRs tuned, the static "
				   "configuration has %u",
				   back.nch, target->nch);
	state_free(&back);
	return rc;
}

/* A run in progress: the ring's MRRs as they are and will be, the batches,
 * and the timeline (us). */
struct run {
	struct rr r;
	struct device *dev;
	const struct schedule *s;
	const uint32_t *stage_first;
	uint32_t nstages;
	const struct ring_run_opts *o;
	uint8_t *cur, *next, *tmp;
	uint32_t *used;
	struct op_batch b, e;
	double clock, prev_end, early_end;
};

/* The ring's driver, and a schedule the ring can run; NULL when refused. */
static struct ctl_device *ring_device(struct ctl *c, const struct ring *ring,
				      const struct schedule *s, const struct rr *r,
				      struct ofc_error *err)
{
	struct ctl_device *cd = NULL;

	for (uint32_t i = 0; i < c->ndevs; i++)
		if (c->devs[i].cfg.cls == DEV_RING && strcmp(c->devs[i].cfg.name, ring->name) == 0)
			cd = &c->devs[i];
	if (!cd)
		ofc_error_set(err, OFC_E_USAGE,
			      "ring '%s' has no driver: nothing to run the schedule on",
			      ring->name);
	else if (s->nodes != r->n)
		ofc_error_set(err, OFC_E_INPUT, "the schedule has %u nodes, ring '%s' %u", s->nodes,
			      ring->name, r->n);
	else if (2 * r->F > r->I)
		ofc_error_set(err, OFC_E_INPUT,
			      "ring '%s' has %u fibres a direction but %u interfaces a node: "
			      "running a schedule needs one interface per fibre and direction",
			      ring->name, r->F, r->I);
	else
		return cd;
	return NULL;
}

/* Each stage's steps and its prediction (Eq. 3). */
static void predict_stages(const struct run *x, struct ring_run_report *rep)
{
	const struct ring_run_opts *o = x->o;

	rep->nstages = x->nstages;
	rep->stage = xcalloc(x->nstages + 1, sizeof(*rep->stage));
	for (uint32_t i = 0; i < x->nstages; i++) {
		uint32_t end = i + 1 < x->nstages ? x->stage_first[i + 1] : x->s->nsteps;

		rep->stage[i].first_step = x->stage_first[i];
		rep->stage[i].steps = end - x->stage_first[i];
		rep->stage[i].predicted_us =
		    rep->stage[i].steps * o->step_us + o->mrr_us + o->oeo_us;
		rep->predicted_us += rep->stage[i].predicted_us;
	}
}

/* The MRRs tuned now, read from the agents into cur. */
static int read_current(struct run *x, struct ofc_error *err)
{
	struct device_state st;
	int rc;

	state_init(&st, DEV_RING);
	rc = device_read(x->dev, &st, err);
	for (uint32_t i = 0; rc == 0 && i < st.nch; i++)
		if (st.ch[i].node < x->r.n && st.ch[i].iface < x->r.I && st.ch[i].wl < x->r.W)
			x->cur[cell(&x->r, st.ch[i])] = 1;
	state_free(&st);
	return rc;
}

/* Step t: retune (blocking), transmit, and with overlap pretune what of
 * step t + 1 can be while this one transmits. */
static int run_step(struct run *x, uint32_t t, struct ring_run_report *rep, struct ofc_error *err)
{
	const struct ring_run_opts *o = x->o;
	uint32_t si = stage_of(x->stage_first, x->nstages, t);
	struct ring_run_stage *st = &rep->stage[si];
	double t0, w = 0;

	step_config(&x->r, x->s, t, x->next, x->used, err);
	transition(&x->r, x->cur, x->next, &x->b);
	if (t == x->stage_first[si] && t)
		x->clock += o->oeo_us; /* the O/E/O relay between stages */
	if (x->b.n) {
		t0 = now_seconds();
		if (device_apply_batch(x->dev, &x->b, err) < 0) {
			rep->failed_stage = si;
			rep->failed_step = t;
			return -1;
		}
		w = (now_seconds() - t0) * 1e6;
		apply_ops(x->cur, &x->b, &x->r);
		st->retunes++;
		st->ops += x->b.n;
		rep->ops += x->b.n;
	}
	/* The step starts when the blocking retune is done, and not before
	 * the overlapped one has settled. */
	double start = (x->early_end > x->prev_end ? x->early_end : x->prev_end) + w;

	if (start < x->clock)
		start = x->clock;
	st->tune_us += w;
	st->idle_us += start - x->prev_end;
	if (t == x->stage_first[si])
		st->start_us = start;
	st->tx_us += o->step_us;
	x->prev_end = start + o->step_us;
	x->clock = x->prev_end;
	st->end_us = x->prev_end;
	x->early_end = 0;
	if (!o->overlap || t + 1 >= x->s->nsteps)
		return 0;
	early_ops(&x->r, x->s, t + 1, x->cur, x->used, &x->e);
	if (!x->e.n)
		return 0;
	t0 = now_seconds();
	if (device_apply_batch(x->dev, &x->e, err) < 0) {
		rep->failed_stage = stage_of(x->stage_first, x->nstages, t + 1);
		rep->failed_step = t + 1;
		return -1;
	}
	double ew = (now_seconds() - t0) * 1e6;

	apply_ops(x->cur, &x->e, &x->r);
	x->early_end = start + ew;
	st->pretune_us += ew;
	st->early_ops += x->e.n;
	rep->early_ops += x->e.n;
	rep->ops += x->e.n;
	rep->hidden_us += ew < o->step_us ? ew : o->step_us;
	return 0;
}

/* A run that stopped: the ring back to its static configuration, and the
 * error says where it stopped and whether that worked. */
static void run_failed(struct run *x, const struct device_state *target,
		       struct ring_run_report *rep, struct ofc_error *err)
{
	struct ofc_error why = *err, rerr = {0};
	const char *name = x->r.ring->name;

	rep->failed = true;
	if (restore(x->dev, &x->r, target, x->cur, x->tmp, &x->b, &rerr) == 0) {
		rep->restored = true;
		ofc_error_setr(err, why.code, why.reason,
			       "ring '%s', stage %u, step %u: %s; the run stopped and the ring "
			       "is back at its static configuration",
			       name, rep->failed_stage + 1, rep->failed_step + 1, why.msg);
	} else {
		ofc_error_setr(err, why.code, why.reason,
			       "ring '%s', stage %u, step %u: %s; the run stopped and restoring "
			       "the static configuration failed too: %s",
			       name, rep->failed_stage + 1, rep->failed_step + 1, why.msg,
			       rerr.msg);
	}
}

int ring_run(struct ctl *c, uint32_t ri, const struct schedule *s, const uint32_t *stage_first,
	     uint32_t nstages, const struct ring_run_opts *o, struct ring_run_report *rep,
	     struct ofc_error *err)
{
	const struct ring *ring = &c->fabric->rings[ri];
	struct run x = {
	    .r = {ring, ring->nmembers, ring->interfaces, ring->wavelengths, ring->fibres, 0},
	    .s = s,
	    .stage_first = stage_first,
	    .nstages = nstages,
	    .o = o};
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	struct ctl_device *cd = ring_device(c, ring, s, &x.r, err);

	if (!cd)
		return -1;
	x.dev = &cd->dev;
	x.r.cells = (size_t)x.r.n * x.r.I * x.r.W * 2;
	x.cur = xcalloc(x.r.cells + 1, 1);
	x.next = xcalloc(x.r.cells + 1, 1);
	x.tmp = xcalloc(x.r.cells + 1, 1);
	x.used = xcalloc((size_t)x.r.n * x.r.I + 1, sizeof(uint32_t));
	/* Every step's configuration must fit before anything is touched. */
	for (uint32_t t = 0; t < s->nsteps && rc == 0; t++)
		rc = step_config(&x.r, s, t, x.next, x.used, err);
	if (rc < 0 || (rc = ctl_lock(c, err)) < 0)
		goto out;
	predict_stages(&x, rep);
	if (read_current(&x, err) < 0)
		goto fail;
	for (uint32_t t = 0; t < s->nsteps; t++)
		if (run_step(&x, t, rep, err) < 0)
			goto fail;
	rep->steps = s->nsteps;
	rep->realised_us = x.prev_end + o->oeo_us;
	for (uint32_t i = 0; i < nstages; i++) {
		rep->tune_us += rep->stage[i].tune_us;
		rep->retunes += rep->stage[i].retunes;
	}
	/* Done: back to the static configuration. */
	if (restore(x.dev, &x.r, &cd->target, x.cur, x.tmp, &x.b, err) < 0) {
		ofc_error_prefix(err,
				 "ring '%s': the schedule ran, but restoring its static "
				 "configuration failed",
				 ring->name);
		rc = -1;
	} else {
		rep->restored = true;
	}
	goto out;
fail:
	run_failed(&x, &cd->target, rep, err);
	rc = -1;
out:
	batch_free(&x.b);
	batch_free(&x.e);
	free(x.cur);
	free(x.next);
	free(x.tmp);
	free(x.used);
	return rc;
}

void ring_run_report_free(struct ring_run_report *rep)
{
	free(rep->stage);
	memset(rep, 0, sizeof(*rep));
}

int ring_run_configs(const struct fabric *f, uint32_t ri, const struct schedule *s,
		     struct device_state **out, struct ofc_error *err)
{
	const struct ring *ring = &f->rings[ri];
	struct rr r = {ring, ring->nmembers, ring->interfaces, ring->wavelengths, ring->fibres, 0};

	r.cells = (size_t)r.n * r.I * r.W * 2;
	uint8_t *on = xcalloc(r.cells + 1, 1);
	uint32_t *used = xcalloc((size_t)r.n * r.I + 1, sizeof(uint32_t));
	struct device_state *st = xcalloc((size_t)s->nsteps + 1, sizeof(*st));
	int rc = 0;

	for (uint32_t t = 0; t < s->nsteps && rc == 0; t++) {
		state_init(&st[t], DEV_RING);
		rc = step_config(&r, s, t, on, used, err);
		for (size_t k = 0; rc == 0 && k < r.cells; k++)
			if (on[k])
				state_add_chan(&st[t], chan_of(&r, k));
	}
	free(on);
	free(used);
	if (rc < 0) {
		for (uint32_t t = 0; t < s->nsteps; t++)
			state_free(&st[t]);
		free(st);
		return -1;
	}
	*out = st;
	return 0;
}
