/* A change of the fabric's topology in stages under a loss budget: from
 * one set of port permutations to another, each stage one transaction,
 * so that during every stage the links left in use keep at least
 * (1 - max_loss) of the fabric's bandwidth, as the cost model prices it
 * (sched/bound_degraded.c: the bandwidth term tau_B of the collective on
 * the graph that is left; bandwidth is 1/tau_B). Fewest stages first,
 * then fewest circuits moved (the planners of Klotski and Janus state
 * the same aim; this one is greedy, and says how far from a lower bound
 * it ended: the fewest stages exactly is a packing of the units under a
 * price that is no sum of theirs, a search over subsets, not cheap; each
 * stage here takes the longest run of units that fits, and the bound
 * counts a second stage when the whole change at once does not fit).
 *
 * The units of change. Row j of the permutations (every host's port j)
 * goes from a to b. Where a(u) != b(u), u's new circuit u -> b(u) needs
 * b(u)'s in-port, held by the old circuit of w = a^-1(b(u)), which must
 * change too: sigma(u) = a^-1(b(u)) walks a cycle, and a cycle changed
 * whole leaves every row a permutation (a topology the record, a restart
 * and every replica build again from its ports: spec). A cycle too big
 * for one stage is cut: its first k new circuits, the (k+1)-th node's
 * port joined for the time being to the in-port the first one left
 * (one circuit more; the rest is a cycle again).
 *
 * What a stage takes out of use: while its circuits change, the host
 * ports at both ends of each changing circuit carry nothing (the
 * published schedule leaves those ports out, as it does a failure's), so
 * the stage is priced on the topology before it less those host ports.
 *
 * Held partitions (stage_req.fixed): the devices are aimed on the free
 * ports alone, so only a circuit between two free hosts is on a device.
 * The units are the same cycles (the record stays permutations), but a
 * circuit with a held end changes in the record alone: it takes no port
 * out of use, moves nothing and is priced nowhere; the price is the free
 * hosts' graph. A unit whose change takes no circuit away goes with the
 * first stage it meets. */
#include "controller/reconfig/internal.h"
#include "sched/sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cycle of row j (or its first part): nodes u[0..len-1] in sigma order. */
struct unit {
	uint32_t row, len, first;
	uint32_t *u; /* into the stage's node buffer */
};

/* Biggest first (fewest stages by packing), or smallest first: a change
 * whose small cycles keep the rest connected (a torus's wrap-around links
 * of a new width) may leave no stage that fits when done last. */
static int cmp_unit(const void *x, const void *y)
{
	const struct unit *a = x, *b = y;

	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->row != b->row ? (a->row < b->row ? -1 : 1)
				: (a->first > b->first) - (a->first < b->first);
}

static int cmp_unit_small(const void *x, const void *y)
{
	const struct unit *a = x, *b = y;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The cycles of every row where cur and to differ, biggest first; nodes
 * into *buf (n * d at most). */
static uint32_t find_units(const struct port_map *cur, const struct port_map *to, uint32_t *buf,
			   struct unit *units, bool small_first)
{
	uint32_t n = cur->n, nu = 0, at = 0;
	uint32_t *inv = xmalloc(((size_t)n + 1) * sizeof(*inv));
	bool *seen = xcalloc((size_t)n + 1, sizeof(*seen));

	for (uint32_t j = 0; j < cur->d; j++) {
		const uint32_t *a = cur->to + (size_t)j * n, *b = to->to + (size_t)j * n;

		for (uint32_t u = 0; u < n; u++)
			inv[a[u]] = u;
		memset(seen, 0, n * sizeof(*seen));
		for (uint32_t u = 0; u < n; u++) {
			if (seen[u] || a[u] == b[u])
				continue;
			struct unit *x = &units[nu++];

			*x = (struct unit){.row = j, .first = u, .u = buf + at};
			for (uint32_t w = u; !seen[w]; w = inv[b[w]]) {
				seen[w] = true;
				buf[at++] = w;
				x->len++;
			}
		}
	}
	free(inv);
	free(seen);
	qsort(units, nu, sizeof(*units), small_first ? cmp_unit_small : cmp_unit);
	return nu;
}

/* Whether the circuit u -> v is on a device: neither end held. */
static bool on_device(const struct stage_req *q, uint32_t u, uint32_t v)
{
	return !q->fixed || (!q->fixed[u] && !q->fixed[v]);
}

/* The host ports (j * n + u) a unit's change takes out of use: k new
 * circuits of the cycle (k == len: all of it) need the old circuits of
 * its first min(k + 1, len) nodes gone: their out-ports and the in-ports
 * those circuits ended at (of those on a device). out NULL: counted. */
static uint32_t unit_dark(const struct stage_req *q, const struct port_map *cur,
			  const struct unit *x, uint32_t k, uint32_t *out)
{
	uint32_t n = cur->n, m = k < x->len ? k + 1 : x->len, c = 0;
	const uint32_t *a = cur->to + (size_t)x->row * n;

	for (uint32_t i = 0; i < m; i++) {
		if (!on_device(q, x->u[i], a[x->u[i]]))
			continue;
		if (out) {
			out[c] = x->row * n + x->u[i];
			out[c + 1] = x->row * n + a[x->u[i]];
		}
		c += 2;
	}
	return c;
}

/* Node u's circuit of row a replaced by u -> v: *ops counts the old one
 * removed and the new one set, each on a device. Whether v's is set. */
static bool replace(const struct stage_req *q, uint32_t *a, uint32_t u, uint32_t v, uint32_t *ops)
{
	bool set = on_device(q, u, v);

	*ops += on_device(q, u, a[u]) + set;
	a[u] = v;
	return set;
}

/* cur after k new circuits of x (k < len: the temporary one closes it).
 * Returns the circuits set on the devices; *ops the operations. */
static uint32_t unit_apply(const struct stage_req *q, struct port_map *cur, const struct unit *x,
			   uint32_t k, uint32_t *ops)
{
	uint32_t n = cur->n, set = 0;
	uint32_t *a = cur->to + (size_t)x->row * n;
	const uint32_t *b = q->to->to + (size_t)x->row * n;
	uint32_t freed = a[x->u[0]];

	for (uint32_t i = 0; i < k && i < x->len; i++)
		set += replace(q, a, x->u[i], b[x->u[i]], ops);
	if (k < x->len)
		set += replace(q, a, x->u[k], freed, ops);
	return set;
}

/* Whether every node of g is reached from node 0. */
static bool reaches_all(const struct graph *g, uint32_t *queue, bool *seen)
{
	uint32_t head = 0, tail = 0;

	memset(seen, 0, g->n * sizeof(*seen));
	seen[0] = true;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t u = queue[head++];
		const uint32_t *out = graph_out(g, u);

		for (uint32_t k = 0; k < graph_outdeg(g, u); k++)
			if (!seen[out[k]]) {
				seen[out[k]] = true;
				queue[tail++] = out[k];
			}
	}
	return tail == g->n;
}

/* Strongly connected: node 0 reaches every node, and every node reaches
 * it. Checked here, exactly, before the bound: degraded_bound within its
 * work may not have looked at the cut that splits the graph. */
static bool strongly_connected(const struct graph *g, uint32_t m, const uint32_t *t,
			       const uint32_t *h)
{
	uint32_t *queue = xmalloc(((size_t)g->n + 1) * sizeof(*queue));
	bool *seen = xmalloc(((size_t)g->n + 1) * sizeof(*seen));
	bool ok = reaches_all(g, queue, seen);

	if (ok) {
		struct graph *r = graph_from_arcs(g->n, m, h, t, "reverse");

		ok = reaches_all(r, queue, seen);
		graph_free(r);
	}
	free(queue);
	free(seen);
	return ok;
}

/* tau_B of cur's free hosts (every host without fixed) less the dark
 * host ports (NULL: none); INFINITY when it falls apart. */
static double price(const struct stage_req *q, const struct port_map *cur, const bool *dark,
		    bool *exact)
{
	uint32_t n = cur->n, d = cur->d, m = 0, nfree = 0;
	uint32_t *t = xmalloc(((size_t)n * d + 1) * sizeof(*t));
	uint32_t *h = xmalloc(((size_t)n * d + 1) * sizeof(*h));
	uint32_t *id = xmalloc(((size_t)n + 1) * sizeof(*id)); /* the free hosts numbered */
	struct degraded_bound b;

	for (uint32_t u = 0; u < n; u++)
		id[u] = q->fixed && q->fixed[u] ? UINT32_MAX : nfree++;
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j < d; j++) {
			uint32_t v = cur->to[(size_t)j * n + u];

			if (id[u] == UINT32_MAX || id[v] == UINT32_MAX ||
			    (dark && (dark[(size_t)j * n + u] || dark[(size_t)j * n + v])))
				continue;
			t[m] = id[u];
			h[m++] = id[v];
		}
	free(id);
	struct graph *g = graph_from_arcs(nfree, m, t, h, "stage");
	int rc = strongly_connected(g, m, t, h)
		     ? degraded_bound(g, q->coll ? q->coll : SCHED_ALLGATHER, d, q->work, &b)
		     : -1;

	graph_free(g);
	free(t);
	free(h);
	if (exact)
		*exact = rc == 0 && (b.in ? b.ag.exact : true) && (b.out ? b.rs.exact : true);
	return rc < 0 || !isfinite(b.tau_b) ? INFINITY : b.tau_b;
}

static double loss_of(double ref, double tau)
{
	double l = isfinite(tau) ? 1 - ref / tau : 1;

	return l < 0 ? 0 : l;
}

double stage_loss(const struct stage_req *q, const struct port_map *cur, const uint32_t *dark,
		  uint32_t ndark, double ref, bool *exact)
{
	size_t len = (size_t)cur->n * cur->d;
	bool *off = xcalloc(len + 1, sizeof(*off));
	double tau;

	for (uint32_t i = 0; i < ndark; i++)
		if (dark[i] < len)
			off[dark[i]] = true;
	tau = price(q, cur, off, exact);
	free(off);
	return loss_of(ref, tau);
}

/* The stage's host ports out of use, as flags, from the chosen units. */
static void mark(bool *dark, size_t len, const uint32_t *ports, uint32_t np)
{
	memset(dark, 0, len * sizeof(*dark));
	for (uint32_t i = 0; i < np; i++)
		dark[ports[i]] = true;
}

struct planning {
	const struct stage_req *q;
	struct port_map cur;
	bool *dark;
	uint32_t *ports, nports; /* the stage's dark host ports */
	uint8_t *in_stage;	 /* per host port: 1 in the stage, 2 being taken */
	uint16_t *per_node;	 /* distinct dark ports per node in the stage */
	uint32_t cap;		 /* per node (the cheap filter) */
	double ref;
};

static void stage_clear(struct planning *p)
{
	p->nports = 0;
	memset(p->per_node, 0, p->cur.n * sizeof(*p->per_node));
	memset(p->in_stage, 0, (size_t)p->cur.n * p->cur.d * sizeof(*p->in_stage));
}

/* Whether unit x's first k circuits fit beside what the stage has (the
 * cheap filter: dark ports per node, each port once: a port whose old
 * circuit goes out and whose old in-coming circuit changes too is one
 * transceiver out of use, not two); if so, its ports are added. */
static bool take(struct planning *p, const struct unit *x, uint32_t k)
{
	uint32_t tmp[2 * 1024 + 4], *v = tmp, c;
	uint32_t m = k < x->len ? k + 1 : x->len, n = p->cur.n;
	bool ok = true;

	if (2 * m > ARRAY_SIZE(tmp))
		v = xmalloc(2 * (size_t)m * sizeof(*v));
	c = unit_dark(p->q, &p->cur, x, k, v);
	for (uint32_t i = 0; i < c && ok; i++)
		if (!p->in_stage[v[i]]) {
			p->in_stage[v[i]] = 2;
			ok = ++p->per_node[v[i] % n] <= p->cap;
		}
	for (uint32_t i = 0; i < c; i++) {
		if (p->in_stage[v[i]] != 2)
			continue;
		if (ok) {
			p->in_stage[v[i]] = 1;
			p->ports[p->nports++] = v[i];
		} else {
			p->in_stage[v[i]] = 0;
			p->per_node[v[i] % n]--;
		}
	}
	if (v != tmp)
		free(v);
	return ok;
}

struct chosen {
	uint32_t unit, k;
};

/* The units not chosen whose change takes no circuit away (each of their
 * old circuits has a held end) join the stage: they cost it nothing. */
static void add_costless(const struct planning *p, const struct unit *units, uint32_t nu,
			 struct chosen *ch, uint32_t *nch)
{
	bool *in;

	if (!p->q->fixed)
		return;
	in = xcalloc((size_t)nu + 1, sizeof(*in));
	for (uint32_t i = 0; i < *nch; i++)
		in[ch[i].unit] = true;
	for (uint32_t i = 0; i < nu; i++)
		if (!in[i] && unit_dark(p->q, &p->cur, &units[i], units[i].len, NULL) == 0)
			ch[(*nch)++] = (struct chosen){i, units[i].len};
	free(in);
}

/* The stage of the first nch chosen units priced: its dark ports marked
 * in p->dark, *tau its price. Whether its loss is within the budget. */
static bool stage_fits(struct planning *p, const struct unit *units, const struct chosen *ch,
		       uint32_t nch, double *tau, bool *exact)
{
	uint32_t save = p->cap;

	stage_clear(p);
	p->cap = UINT32_MAX; /* (chosen already: priced, not filtered) */
	for (uint32_t i = 0; i < nch; i++)
		take(p, &units[ch[i].unit], ch[i].k);
	p->cap = save;
	mark(p->dark, (size_t)p->cur.n * p->cur.d, p->ports, p->nports);
	*tau = price(p->q, &p->cur, p->dark, exact);
	return loss_of(p->ref, *tau) <= p->q->max_loss + 1e-12;
}

/* One stage: the whole units that pass the filter (biggest first), the
 * longest run of them from the first whose price is within budget (a
 * binary search: log2 of them priced; halving until one fits would stop
 * at half of what fits, and a change that needs 3 stages could take 4);
 * a unit alone over it, cut. Fills st. */
static int plan_stage(struct planning *p, struct unit *units, uint32_t nu, struct stage *st,
		      struct ofc_error *err)
{
	uint32_t n = p->cur.n, d = p->cur.d;
	size_t len = (size_t)n * d;
	struct chosen *ch = xcalloc((size_t)nu + 1, sizeof(*ch));
	uint32_t nch = 0;
	double tau = INFINITY;
	bool exact = true;

	stage_clear(p);
	for (uint32_t i = 0; i < nu; i++) /* whole units that pass the filter */
		if (take(p, &units[i], units[i].len))
			ch[nch++] = (struct chosen){i, units[i].len};
	if (nch == 0) /* the biggest alone, cut to fit the filter */
		ch[nch++] = (struct chosen){0, units[0].len};
	if (nch > 1 && !stage_fits(p, units, ch, nch, &tau, &exact)) {
		uint32_t lo = 1, hi = nch; /* lo: the most that may fit; hi: too many */

		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (stage_fits(p, units, ch, mid, &tau, &exact))
				lo = mid;
			else
				hi = mid;
		}
		nch = lo;
	}
	while (!stage_fits(p, units, ch, nch, &tau, &exact)) {
		/* one unit over the budget: fewer of its circuits */
		if (nch > 1) {
			nch = 1;
			continue;
		}
		if (ch[0].k <= 1) {
			ofc_error_set(
			    err, OFC_E_INPUT,
			    "no stage fits a loss of %.4g%%: moving one circuit alone (host "
			    "port %u of node %u) takes %.4g%% of the bandwidth away",
			    100 * p->q->max_loss, units[ch[0].unit].row, units[ch[0].unit].first,
			    100 * loss_of(p->ref, tau));
			free(ch);
			return -1;
		}
		ch[0].k =
		    (ch[0].k >= units[ch[0].unit].len ? units[ch[0].unit].len - 1 : ch[0].k) / 2;
		if (ch[0].k == 0)
			ch[0].k = 1;
	}
	add_costless(p, units, nu, ch, &nch);
	st->dark = xmalloc(((size_t)p->nports + 1) * sizeof(*st->dark));
	st->ndark = 0;
	for (size_t i = 0; i < len; i++) /* (sorted, each once) */
		if (p->dark[i])
			st->dark[st->ndark++] = (uint32_t)i;
	st->loss = loss_of(p->ref, tau);
	st->exact = exact;
	st->moved = 0;
	for (uint32_t i = 0; i < nch; i++) {
		st->moved += unit_apply(p->q, &p->cur, &units[ch[i].unit], ch[i].k, &st->ops);
		st->units++;
		if (ch[i].k < units[ch[i].unit].len)
			st->cut = true;
	}
	st->after.n = n;
	st->after.d = d;
	st->after.to = xmalloc(len * sizeof(*st->after.to));
	memcpy(st->after.to, p->cur.to, len * sizeof(*st->after.to));
	free(ch);
	return 0;
}

/* The fewest stages any plan needs by the nodes alone: a node whose ports
 * must all change, at most cap of them out of use at once. */
static uint32_t node_bound(const struct stage_req *q, uint32_t cap)
{
	const struct port_map *a = q->from, *b = q->to;
	uint32_t n = a->n, best = 0;
	uint32_t *need = xcalloc((size_t)n + 1, sizeof(*need));
	uint32_t *inv = xmalloc(((size_t)n + 1) * sizeof(*inv));

	for (uint32_t j = 0; j < a->d; j++) {
		const uint32_t *x = a->to + (size_t)j * n, *y = b->to + (size_t)j * n;
		bool *hit = xcalloc(n, sizeof(*hit));

		for (uint32_t u = 0; u < n; u++)
			if (x[u] != y[u] && on_device(q, u, x[u]))
				hit[u] = hit[x[u]] = true;
		for (uint32_t u = 0; u < n; u++)
			need[u] += hit[u];
		free(hit);
	}
	for (uint32_t u = 0; u < n; u++) {
		uint32_t s = cap ? (need[u] + cap - 1) / cap : need[u];

		best = s > best ? s : best;
	}
	free(need);
	free(inv);
	return best;
}

/* Whether the whole change fits one stage: every unit whole at once (a
 * cut unit leaves a temporary circuit for a later stage), so its dark
 * ports are fixed: the one price that says a second stage is needed,
 * which the nodes' bound cannot see (a torus's wrap-around links of both
 * directions changed at once cut the hosts at the wrap off). */
static bool one_stage_fits(struct planning *pl, const struct port_map *b)
{
	size_t len = (size_t)b->n * b->d;
	uint32_t *buf = xmalloc((len + 1) * sizeof(*buf)), nu;
	struct unit *units = xmalloc((len + 1) * sizeof(*units));
	struct chosen *ch = xmalloc((len + 1) * sizeof(*ch));
	double tau;
	bool exact, fits;

	memcpy(pl->cur.to, pl->q->from->to, len * sizeof(uint32_t));
	nu = find_units(&pl->cur, b, buf, units, false);
	for (uint32_t i = 0; i < nu; i++)
		ch[i] = (struct chosen){i, units[i].len};
	fits = stage_fits(pl, units, ch, nu, &tau, &exact);
	free(buf);
	free(units);
	free(ch);
	return fits;
}

/* The stages in one order of the units (pl set up; p's totals set). */
static int plan_in_order(struct planning *pl, const struct port_map *b, bool small_first,
			 struct stage_plan *p, struct ofc_error *err)
{
	size_t len = (size_t)b->n * b->d;
	uint32_t *buf = xmalloc((len + 1) * sizeof(*buf));
	struct unit *units = xmalloc((len + 1) * sizeof(*units));
	int rc = 0;

	memcpy(pl->cur.to, pl->q->from->to, len * sizeof(uint32_t));
	for (uint32_t nu; rc == 0 && (nu = find_units(&pl->cur, b, buf, units, small_first)) > 0;) {
		if (p->n >= STAGE_MAX) {
			rc = ofc_error_set(err, OFC_E_INPUT,
					   "more than %u stages: allow a larger loss", STAGE_MAX);
			break;
		}
		p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
		memset(&p->v[p->n], 0, sizeof(p->v[p->n]));
		if ((rc = plan_stage(pl, units, nu, &p->v[p->n], err)) == 0) {
			p->moved += p->v[p->n].moved;
			p->n++;
		}
	}
	free(buf);
	free(units);
	return rc;
}

int stage_plan_make(const struct stage_req *q, struct stage_plan *p, struct ofc_error *err)
{
	const struct port_map *a = q->from, *b = q->to;

	memset(p, 0, sizeof(*p));
	if (!(q->max_loss > 0 && q->max_loss < 1))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the loss a stage may take must be above 0%% and below 100%%, "
				     "not %g%%",
				     100 * q->max_loss);
	if (!a->to || !b->to || a->n != b->n || a->d != b->d || a->n < 2)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "a staged change needs both topologies as port permutations of "
		    "the same hosts and ports (%u x %u and %u x %u)",
		    a->n, a->d, b->n, b->d);
	size_t len = (size_t)a->n * a->d;
	struct planning pl = {.q = q};
	bool exact;
	uint32_t nfixed = 0;

	for (uint32_t u = 0; q->fixed && u < a->n; u++)
		nfixed += q->fixed[u];
	if (a->n - nfixed < 2)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%u of the %u hosts are held: fewer than two are free to "
				     "change in stages",
				     nfixed, a->n);
	double from_tau = price(q, a, NULL, &exact), to_tau = price(q, b, NULL, &exact);

	if (!isfinite(from_tau) || !isfinite(to_tau))
		return ofc_error_set(err, OFC_E_INPUT, "the %s topology does not connect every %s",
				     isfinite(from_tau) ? "target" : "running",
				     nfixed ? "host outside the held partitions" : "host");
	pl.ref = from_tau > to_tau ? from_tau : to_tau;
	pl.cur = (struct port_map){.n = a->n, .d = a->d, .to = xmalloc(len * sizeof(uint32_t))};
	pl.dark = xcalloc(len, sizeof(*pl.dark));
	pl.ports = xmalloc((2 * len + 2) * sizeof(*pl.ports));
	pl.per_node = xcalloc(a->n, sizeof(*pl.per_node));
	pl.in_stage = xcalloc(len, sizeof(*pl.in_stage));
	pl.cap = (uint32_t)floor(q->max_loss * a->d + 1e-9);
	if (pl.cap == 0)
		pl.cap = 1;

	/* Both orders; the fewer stages, then the fewer circuits, wins (the
	 * biggest-first on a tie). */
	struct stage_plan best = {0};
	struct ofc_error first_err = {0};
	int rc = -1;

	for (int small = 0; small < 2; small++) {
		struct stage_plan t = {0};
		struct ofc_error e = {0};

		if (plan_in_order(&pl, b, small, &t, &e) < 0) {
			if (small == 0)
				first_err = e;
			stage_plan_free(&t);
			continue;
		}
		if (rc < 0 || t.n < best.n || (t.n == best.n && t.moved < best.moved)) {
			stage_plan_free(&best);
			best = t;
			rc = 0;
		} else {
			stage_plan_free(&t);
		}
	}
	if (rc == 0) {
		*p = best;
		for (size_t i = 0; i < len; i++)
			p->fewest +=
			    a->to[i] != b->to[i] && on_device(q, (uint32_t)(i % a->n), b->to[i]);
		p->min_stages = p->fewest ? node_bound(q, pl.cap) : 0;
		if (p->min_stages == 1 && p->n > 1 && !one_stage_fits(&pl, b))
			p->min_stages = 2;
	}
	free(pl.cur.to);
	free(pl.dark);
	free(pl.ports);
	free(pl.per_node);
	free(pl.in_stage);
	if (rc < 0) {
		*err = first_err;
		return -1;
	}
	p->ref_tau_b = pl.ref;
	p->max_loss = q->max_loss;
	return 0;
}

void stage_plan_free(struct stage_plan *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->v[i].after.to);
		free(p->v[i].dark);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

void stage_plan_text(const struct stage_plan *p, const char *target, struct strbuf *out)
{
	uint32_t left = 0, ops = 0;

	for (uint32_t i = 0; i < p->n; i++) {
		left += p->v[i].leftover ? p->v[i].moved : 0;
		ops += p->v[i].ops;
	}
	sb_printf(out, "%u stage%s to %s within a loss of %.4g%%: %u circuit%s moved", p->n,
		  p->n == 1 ? "" : "s", target, 100 * p->max_loss, p->moved,
		  p->moved == 1 ? "" : "s");
	if (left)
		sb_printf(out,
			  " (the fewest possible %u from the record's topology, and the %u "
			  "leftovers' in a stage of their own)",
			  p->fewest, left);
	else
		sb_printf(out, " (the fewest possible %u)", p->fewest);
	sb_printf(out, ", at least %u stage%s by the ports a host may lose at once", p->min_stages,
		  p->min_stages == 1 ? "" : "s");
	for (uint32_t i = 0; i < p->n; i++) {
		const struct stage *st = &p->v[i];

		if (st->leftover) {
			sb_printf(out,
				  "; stage %u: %u circuit%s, %u host port%s out of use, loss "
				  "%.2f%%, the leftovers: %u cross-connect%s the record's topology "
				  "has not (a released partition's, say) removed and its own "
				  "circuits set back, %u operation%s (those ports carry nothing "
				  "the record's schedule uses before it: it takes no port in use "
				  "away%s)",
				  i + 1, st->moved, st->moved == 1 ? "" : "s", st->ndark,
				  st->ndark == 1 ? "" : "s", 100 * st->loss, st->removed,
				  st->removed == 1 ? "" : "s", st->ops, st->ops == 1 ? "" : "s",
				  st->loss > p->max_loss + 1e-12
				      ? "; the fabric is over the budget already before it"
				      : "");
			continue;
		}
		sb_printf(out,
			  "; stage %u: %u circuit%s, %u host port%s out of use, loss %.2f%%%s, %u "
			  "operation%s",
			  i + 1, st->moved, st->moved == 1 ? "" : "s", st->ndark,
			  st->ndark == 1 ? "" : "s", 100 * st->loss,
			  st->exact ? "" : " (the cuts checked within the work bound)", st->ops,
			  st->ops == 1 ? "" : "s");
	}
	sb_printf(out, "; %u device operation%s in all", ops, ops == 1 ? "" : "s");
}
