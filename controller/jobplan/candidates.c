/* The topologies a workload is weighed on: the config's, the
 * circuits in place, the finder's frontier for the hosts and their ports,
 * unions of per-group topologies (each kind of groups used by a phase its
 * share of the ports: TopoOpt allots degree to allreduce groups and to
 * model-parallel traffic alike), and topologies built for traffic (each
 * phase's and the iteration's): port 0 a ring through the heaviest pairs,
 * so every host reaches every other, the other ports each the permutation
 * that carries the most traffic not yet given a link (an assignment
 * problem, Hungarian; links already given divide a pair's weight). Every
 * candidate but the circuits in place is built from a spec (a union of the
 * groups' families, or the port permutations written out: "ports:N:...")
 * and gets its port permutations and circuits as a config of that spec
 * does, so what MoveToPhase or `ofc apply` commits, a record names and a
 * restart builds again is the candidate priced. */
#include "bfb/bfb.h"
#include "controller/jobplan/internal.h"
#include "controller/pick/pick.h"
#include "drivers/drivers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *jobplan_origin_name(enum jobplan_origin o)
{
	switch (o) {
	case JOBPLAN_CONFIG:
		return "config";
	case JOBPLAN_IN_PLACE:
		return "in place";
	case JOBPLAN_FINDER:
		return "finder";
	case JOBPLAN_UNION:
		return "groups";
	case JOBPLAN_TRAFFIC:
		return "traffic";
	}
	return "?";
}

void jobplan_topo_free(struct jobplan_topo *t)
{
	graph_free(t->g);
	free(t->spec);
	port_map_free(&t->pm);
	free(t->circuits);
	free(t->arc_tx);
	free(t->arc_rx);
	memset(t, 0, sizeof(*t));
}

static struct jobplan_topo *add(struct jobplan_result *r)
{
	r->topo = xreallocarray(r->topo, r->ntopo + 1, sizeof(*r->topo));
	memset(&r->topo[r->ntopo], 0, sizeof(r->topo[0]));
	return &r->topo[r->ntopo++];
}

static bool has_spec(const struct jobplan_result *r, const char *spec)
{
	for (uint32_t i = 0; i < r->ntopo; i++)
		if (r->topo[i].spec && strcmp(r->topo[i].spec, spec) == 0)
			return true;
	return false;
}

/* Arcs to ports where g is not in port order: the k-th arc u -> v takes
 * the k-th port of u that reaches v (as the fabric view does). */
static void ports_of_arcs(struct jobplan_topo *t)
{
	const struct graph *g = t->g;
	uint32_t n = g->n, d = t->pm.d;
	uint8_t *taken = xcalloc((size_t)n * d + 1, 1);

	t->arc_tx = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	t->arc_rx = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
			uint32_t j;

			for (j = 0; j < d; j++)
				if (!taken[(size_t)j * n + u] &&
				    t->pm.to[(size_t)j * n + u] == g->adj[a])
					break;
			if (j < d)
				taken[(size_t)j * n + u] = 1;
			t->arc_tx[a] = t->arc_rx[a] = j < d ? j : UINT32_MAX;
		}
	free(taken);
}

/* Circuits of t->pm on the fabric's wiring (a shallow copy of the fabric,
 * as ofc plan --horizon prices its candidates), and whether it connects. */
static int finish(struct jobplan_ctx *c, struct jobplan_topo *t, struct ofc_error *err)
{
	struct fabric tf = *c->f;
	struct topo_facts facts;

	tf.graph = t->g;
	tf.ports = t->pm;
	tf.circuits = NULL;
	tf.ncircuits = 0;
	if (fabric_circuits(&tf, err) < 0)
		return -1;
	t->circuits = tf.circuits;
	t->ncircuits = tf.ncircuits;
	topo_facts(t->g, &facts, 1);
	t->connected = facts.strongly_connected;
	return 0;
}

/* A candidate by its spec (the finder's, a union, one built for traffic):
 * its graph, port permutations and circuits as a config naming the spec
 * gets them (topo_build, topo_ports, fabric_circuits), so it is scheduled
 * by its spec too (constructions and the torus algorithms apply). label
 * names it for people (NULL: the spec). */
static int from_spec(struct jobplan_ctx *c, const char *spec, const char *label,
		     enum jobplan_origin o, struct ofc_error *err)
{
	struct graph *g;
	struct jobplan_topo *t;

	if (has_spec(c->r, spec))
		return 0;
	if (topo_build(spec, &g, err) < 0)
		return -1;
	if (g->n != c->n) {
		graph_free(g);
		return ofc_error_set(err, OFC_E_INPUT, "%.150s has %u nodes, not %u", spec, g->n,
				     c->n);
	}
	t = add(c->r);
	if (label)
		snprintf(t->name, sizeof(t->name), "%s", label);
	else if (strlen(spec) < sizeof(t->name))
		snprintf(t->name, sizeof(t->name), "%s", spec);
	else
		snprintf(t->name, sizeof(t->name), "%.150s...", spec);
	t->spec = xstrdup(spec);
	t->origin = o;
	t->g = g;
	t->spec_built = o != JOBPLAN_CONFIG;
	if (topo_ports(g, &t->pm, err) < 0 || t->pm.d > c->d) {
		if (t->pm.d > c->d)
			ofc_error_set(err, OFC_E_INPUT, "%.150s needs %u ports, the hosts have %u",
				      spec, t->pm.d, c->d);
		jobplan_topo_free(t);
		c->r->ntopo--;
		return -1;
	}
	ports_of_arcs(t);
	if (finish(c, t, err) < 0) {
		jobplan_topo_free(t);
		c->r->ntopo--;
		return -1;
	}
	return 0;
}

/* The circuits the switches hold (q->actual), when they are any: arcs in
 * the order of their circuits by host, each from its tail's port to its
 * head's. */
static void in_place(struct jobplan_ctx *c)
{
	const struct fabric *f = c->f;
	const struct device_state *const *actual = c->q->actual;
	uint32_t cap = 0, m = 0;

	for (uint32_t s = 0; actual && s < f->nswitches; s++)
		cap += actual[s] ? actual[s]->nxc : 0;
	if (!cap)
		return;
	uint32_t **by = xcalloc(f->nswitches + 1, sizeof(*by));
	for (uint32_t s = 0; s < f->nswitches; s++) {
		by[s] = xmalloc(((size_t)f->switches[s].ports + 2) * sizeof(uint32_t));
		memset(by[s], 0xff, ((size_t)f->switches[s].ports + 2) * sizeof(uint32_t));
	}
	for (uint32_t i = 0; i < f->nwiring; i++)
		by[f->wiring[i].sw][f->wiring[i].sw_port] = i;
	struct circuit *ci = xcalloc(cap + 1, sizeof(*ci));
	for (uint32_t h = 0; h < f->nhosts; h++) /* by host: arcs in that order */
		for (uint32_t s = 0; s < f->nswitches; s++)
			for (uint32_t k = 0; actual[s] && k < actual[s]->nxc; k++) {
				const struct xconn *x = &actual[s]->xc[k];
				uint32_t P = f->switches[s].ports;

				if (x->in < 1 || x->in > P || x->out < 1 || x->out > P ||
				    by[s][x->in] == UINT32_MAX || by[s][x->out] == UINT32_MAX)
					continue;
				const struct attachment *a = &f->wiring[by[s][x->in]];
				const struct attachment *b = &f->wiring[by[s][x->out]];
				if (a->host != h)
					continue;
				ci[m++] = (struct circuit){.sw = s,
							   .in_port = x->in,
							   .out_port = x->out,
							   .src_host = a->host,
							   .src_port = a->host_port,
							   .dst_host = b->host,
							   .dst_port = b->host_port};
			}
	for (uint32_t s = 0; s < f->nswitches; s++)
		free(by[s]);
	free(by);
	if (!m) {
		free(ci);
		return;
	}
	uint32_t *tails = xmalloc(m * sizeof(uint32_t)), *heads = xmalloc(m * sizeof(uint32_t));
	struct jobplan_topo *t = add(c->r);
	struct topo_facts facts;

	snprintf(t->name, sizeof(t->name), "in place");
	t->origin = JOBPLAN_IN_PLACE;
	t->circuits = ci;
	t->ncircuits = m;
	t->arc_tx = xmalloc(m * sizeof(uint32_t));
	t->arc_rx = xmalloc(m * sizeof(uint32_t));
	for (uint32_t i = 0; i < m; i++) {
		tails[i] = ci[i].src_host;
		heads[i] = ci[i].dst_host;
		t->arc_tx[i] = ci[i].src_port;
		t->arc_rx[i] = ci[i].dst_port;
	}
	t->g = graph_from_arcs(f->nhosts, m, tails, heads, "in place");
	free(tails);
	free(heads);
	topo_facts(t->g, &facts, 1);
	t->connected = facts.strongly_connected;
}

/* What the workload asks of a topology, for the use case that picks one
 * (controller/pick): each phase of kind `kind` (every phase: UINT32_MAX)
 * weighs its count, an all-to-all or sendrecv as an allreduce of its
 * size; into q->work (the caller's to free) under the fabric's model. */
static void pick_work_of(const struct jobplan_ctx *c, uint32_t kind, struct pick_request *q)
{
	const struct workload *w = c->w;
	struct pick_work *work = xcalloc(w->nphases + 1, sizeof(*work));

	q->threads = c->q->threads;
	q->work = work;
	q->nwork = 0;
	pick_model_of(c->f, &q->model);
	for (uint32_t p = 0; p < w->nphases; p++) {
		const struct wl_phase *ph = &w->phases[p];

		if ((kind != UINT32_MAX && ph->kind != kind) || !ph->collective)
			continue;
		work[q->nwork++] = (struct pick_work){
		    .op = ph->collective <= SCHED_ALLREDUCE ? (enum sched_collective)ph->collective
							    : SCHED_ALLREDUCE,
		    .size = ph->size,
		    .weight = ph->count};
	}
}

/* Up to q->alternatives of the finder's frontier for the hosts and their
 * ports, the fastest for the iteration's phases first, as the use case
 * ranks them (the same ranking `ofc finder`, `topology: auto` and `ofc
 * plan --horizon` give). */
static void finder_candidates(struct jobplan_ctx *c)
{
	struct pick_request q = {.nodes = c->n, .degree = c->d};
	struct pick_result r;
	struct ofc_error e = {0};
	uint32_t want = c->q->alternatives;

	if (!want)
		return;
	pick_work_of(c, UINT32_MAX, &q);
	int rc = pick_run(&q, &r, &e); /* (no topology to pick: none weighed) */
	free((void *)q.work);
	if (rc < 0)
		return;
	for (uint32_t i = 0; i < want && i < r.front.n; i++) {
		ofc_error_clear(&e);
		/* skipped if it fails */
		from_spec(c, r.front.front[r.rank[i]].spec, NULL, JOBPLAN_FINDER, &e);
	}
	pick_free(&r);
}

/* ---- unions of per-group topologies ------------------------------------------ */

/* Kinds a and b cut the hosts into the same groups. */
static bool same_groups(const struct wl_kind *a, const struct wl_kind *b, uint32_t n)
{
	uint32_t *gb = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	bool same = a->size == b->size && a->ngroups == b->ngroups;

	memset(gb, 0xff, ((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t x = 0; same && x < b->ngroups * b->size; x++)
		gb[b->host[x]] = x / b->size;
	for (uint32_t g = 0; same && g < a->ngroups; g++)
		for (uint32_t i = 0; same && i < a->size; i++)
			same = gb[a->host[(size_t)g * a->size + i]] ==
			       gb[a->host[(size_t)g * a->size]];
	free(gb);
	return same;
}

/* The kinds the phases use whose groups cover every host, each partition
 * once (ep groups equal to dp ones count once), three at most. */
static uint32_t used_kinds(const struct jobplan_ctx *c, uint32_t *kinds)
{
	const struct workload *w = c->w;
	uint32_t nk = 0, n = c->n;

	for (uint32_t p = 0; p < w->nphases && nk < 3; p++) {
		const struct wl_phase *ph = &w->phases[p];
		const struct wl_kind *k = &w->kinds[ph->kind];
		bool seen = false;

		if (!ph->collective || k->size == n || k->size * k->ngroups != n)
			continue;
		for (uint32_t i = 0; i < nk && !seen; i++)
			seen = same_groups(k, &w->kinds[kinds[i]], n);
		if (!seen)
			kinds[nk++] = ph->kind;
	}
	return nk;
}

/* The best family for k hosts of degree deg for the kind's phases: the
 * complete graph where it fits, else the finder's entry of least time for
 * them (the use case of controller/pick, pick_work_of). */
static int group_family(const struct jobplan_ctx *c, uint32_t kind, uint32_t k, uint32_t deg,
			char *spec, size_t len)
{
	struct pick_request q = {.nodes = k, .degree = deg};
	struct pick_result r;
	struct ofc_error e = {0};

	if (deg + 1 >= k) {
		snprintf(spec, len, "complete:%u", k);
		return 0;
	}
	pick_work_of(c, kind, &q);
	int rc = pick_run(&q, &r, &e);
	free((void *)q.work);
	if (rc < 0)
		return -1;
	snprintf(spec, len, "%s", r.front.front[r.pick].spec);
	pick_free(&r);
	return 0;
}

/* Whether kind k's groups are the copies of a topology that
 * product(empty:s,F,empty:r) places: member i of every group is
 * lo + s (i + size hi), its own lo < s and hi. The degrees' groups always
 * are (tp: s = 1; dp, ep: s = tp; pp: s = tp dp); groups written out may
 * not be. *stride: s. */
static bool strided(const struct wl_kind *k, uint32_t n, uint32_t *stride)
{
	uint32_t s;

	if (k->size < 2 || k->host[1] <= k->host[0])
		return false;
	s = k->host[1] - k->host[0];
	if ((uint64_t)s * k->size > n || n % (s * k->size))
		return false;
	for (uint32_t g = 0; g < k->ngroups; g++) {
		const uint32_t *mem = k->host + (size_t)g * k->size;

		if (mem[0] / s % k->size)
			return false;
		for (uint32_t i = 1; i < k->size; i++)
			if (mem[i] != mem[0] + s * i)
				return false;
	}
	*stride = s;
	return true;
}

/* Family fam on every group of a strided kind (stride s, groups of size),
 * as a spec over the n hosts: fam itself, or a product placing its copies. */
static void placed(struct strbuf *sb, const char *fam, uint32_t s, uint32_t size, uint32_t n)
{
	uint32_t r = n / (s * size);

	if (s == 1 && r == 1) {
		sb_puts(sb, fam);
		return;
	}
	sb_puts(sb, "product(");
	if (s > 1)
		sb_printf(sb, "empty:%u,", s);
	sb_puts(sb, fam);
	if (r > 1)
		sb_printf(sb, ",empty:%u", r);
	sb_putc(sb, ')');
}

/* One union: kind kinds[i] gets up to deg[i] ports, the family picked for
 * its groups' size on each group, the kinds' ports one after another (so
 * unions sharing a first kind's family keep its circuits on its ports);
 * ports the families leave over stay dark. Its spec is the union of the
 * kinds' families placed on their groups
 * ("union(product(ring:8,empty:8),product(empty:8,hypercube:3))"), or,
 * where a kind's groups are written out irregularly, its port
 * permutations ("ports:N:..."). */
static void one_union(struct jobplan_ctx *c, const uint32_t *kinds, const uint32_t *deg,
		      uint32_t nk)
{
	const struct workload *w = c->w;
	uint32_t n = c->n, first = 0, stride[3];
	struct port_map hp[3] = {{0}};
	struct strbuf spec = STRBUF_INIT;
	char name[160] = "";
	size_t len = 0;
	bool regular = true;

	for (uint32_t i = 0; i < nk; i++) {
		const struct wl_kind *k = &w->kinds[kinds[i]];
		char fam[TOPO_MAX_SPEC + 1];
		struct graph *h;
		struct ofc_error e = {0};

		if (group_family(c, kinds[i], k->size, deg[i], fam, sizeof(fam)) < 0 ||
		    topo_build(fam, &h, &e) < 0)
			goto out;
		if (topo_ports(h, &hp[i], &e) < 0 || hp[i].d > deg[i]) {
			graph_free(h);
			goto out;
		}
		graph_free(h);
		len += (size_t)snprintf(name + len, len < sizeof(name) ? sizeof(name) - len : 0,
					"%s%s %s", i ? " + " : "", k->name, fam);
		regular = regular && strided(k, n, &stride[i]);
		if (regular) {
			if (i)
				sb_putc(&spec, ',');
			placed(&spec, fam, stride[i], k->size, n);
		}
	}
	if (regular && nk > 1) {
		char *inner = sb_detach(&spec);

		sb_printf(&spec, "union(%s)", inner);
		free(inner);
	} else if (!regular) {
		struct port_map pm = {.n = n};

		for (uint32_t i = 0; i < nk; i++)
			pm.d += hp[i].d;
		pm.to = xmalloc(((size_t)n * pm.d + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < nk; i++) {
			const struct wl_kind *k = &w->kinds[kinds[i]];

			for (uint32_t g = 0; g < k->ngroups; g++)
				for (uint32_t j = 0; j < hp[i].d; j++)
					for (uint32_t x = 0; x < k->size; x++) {
						const uint32_t *mem = k->host + (size_t)g * k->size;

						pm.to[(size_t)(first + j) * n + mem[x]] =
						    mem[hp[i].to[(size_t)j * k->size + x]];
					}
			first += hp[i].d;
		}
		sb_reset(&spec);
		char *ps = topo_ports_spec(&pm);
		sb_puts(&spec, ps);
		free(ps);
		port_map_free(&pm);
	}
	struct ofc_error e = {0};
	from_spec(c, spec.buf, name, JOBPLAN_UNION, &e); /* skipped if it fails */
out:
	for (uint32_t i = 0; i < nk; i++)
		port_map_free(&hp[i]); /* (zeroed ones too) */
	sb_free(&spec);
}

static void union_candidates(struct jobplan_ctx *c)
{
	uint32_t kinds[3], nk = used_kinds(c, kinds), d = c->d, deg[3];

	/* Each kind alone with every port, then every split of the ports
	 * among two or three of them (each one port at least). */
	for (uint32_t i = 0; i < nk; i++) {
		deg[0] = d;
		one_union(c, &kinds[i], deg, 1);
	}
	for (uint32_t i = 0; i < nk; i++)
		for (uint32_t j = i + 1; j < nk; j++)
			for (uint32_t a = 1; a < d; a++) {
				uint32_t two[2] = {kinds[i], kinds[j]};

				deg[0] = a;
				deg[1] = d - a;
				one_union(c, two, deg, 2);
			}
	if (nk == 3)
		for (uint32_t a = 1; a + 1 < d; a++)
			for (uint32_t b = 1; a + b < d; b++) {
				deg[0] = a;
				deg[1] = b;
				deg[2] = d - a - b;
				one_union(c, kinds, deg, 3);
			}
}

/* An earlier phase that is the same as p (collective, groups, size,
 * direction and matrix): its prices are p's (a model's layers repeat). */
int jobplan_same_phase(const struct workload *w, uint32_t p)
{
	const struct wl_phase *a = &w->phases[p];

	for (uint32_t q = 0; q < p; q++) {
		const struct wl_phase *b = &w->phases[q];
		size_t nm = (size_t)a->matrix_n * a->matrix_n;

		if (a->collective == b->collective && a->kind == b->kind && a->size == b->size &&
		    a->reverse == b->reverse && a->matrix_n == b->matrix_n &&
		    (!nm || memcmp(a->matrix, b->matrix, nm * sizeof(double)) == 0))
			return (int)q;
	}
	return -1;
}

/* ---- topologies built for traffic ------------------------------------------- */

/* Port 0 a ring through the heaviest pairs (from host 0, on to the host
 * not yet on it that trades most with the last), ports 1.. the
 * assignments of most residual traffic. */
static void for_traffic(struct jobplan_ctx *c, const double *bytes, const char *name)
{
	uint32_t n = c->n, d = c->d, last = 0;
	struct port_map pm = {.n = n, .d = d};
	uint8_t *on = xcalloc(n, 1);
	struct jobplan_arcs g = {.n = n};
	size_t m = 0, cap = 0;
	struct ofc_error e = {0};

	pm.to = xmalloc(((size_t)n * d + 1) * sizeof(uint32_t));
	on[0] = 1;
	for (uint32_t i = 1; i < n; i++) {
		uint32_t best = UINT32_MAX;
		double bw = -1;

		for (uint32_t v = 0; v < n; v++) {
			double t = bytes[(size_t)last * n + v] + bytes[(size_t)v * n + last];

			if (!on[v] && t > bw) {
				bw = t;
				best = v;
			}
		}
		on[best] = 1;
		pm.to[last] = best;
		last = best;
	}
	pm.to[last] = 0;
	/* the pairs that trade, once: the ports' weights are theirs divided */
	g.off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++) {
		g.off[u] = (uint32_t)m;
		for (uint32_t v = 0; v < n; v++)
			if (v != u && bytes[(size_t)u * n + v] > 0) {
				if (m == cap) {
					cap = cap ? 2 * cap : 1024;
					g.to = xrealloc(g.to, cap * sizeof(uint32_t));
				}
				g.to[m++] = v;
			}
	}
	g.off[n] = (uint32_t)m;
	g.w = xmalloc((m + 1) * sizeof(double));
	/* a budget as an MCF's: the searches are n^3 where every pair trades */
	double budget = c->q->mcf_time_limit > 0 ? c->q->mcf_time_limit : 20;
	double deadline = now_seconds() + budget;
	bool late = false;
	for (uint32_t j = 1; j < d && !late; j++) {
		/* weight = bytes / (1 + links the pair has already) */
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t a = g.off[u]; a < g.off[u + 1]; a++) {
				uint32_t links = 0;

				for (uint32_t k = 0; k < j; k++)
					links += pm.to[(size_t)k * n + u] == g.to[a];
				g.w[a] = bytes[(size_t)u * n + g.to[a]] / (1 + links);
			}
		late = jobplan_assign(&g, pm.to + (size_t)j * n, deadline) < 0;
	}
	if (late) {
		size_t len = strlen(c->r->notes);
		char b[32];

		fmt_duration(b, sizeof(b), budget);
		snprintf(c->r->notes + len, sizeof(c->r->notes) - len,
			 "%s%s: not built, its assignments passed %s (%zu pairs trade)",
			 len ? "; " : "", name, b, m);
	} else {
		char *spec = topo_ports_spec(&pm);

		from_spec(c, spec, name, JOBPLAN_TRAFFIC, &e); /* skipped if it fails */
		free(spec);
	}
	port_map_free(&pm);
	free(g.off);
	free(g.to);
	free(g.w);
	free(on);
}

static void traffic_candidates(struct jobplan_ctx *c)
{
	const struct workload *w = c->w;
	size_t nn = (size_t)c->n * c->n;
	double *all = xcalloc(nn, sizeof(double));

	for (uint32_t p = 0; p < w->nphases; p++) {
		double *m;
		char name[160];

		workload_phase_bytes(c->f, w, p, &m);
		for (size_t i = 0; i < nn; i++)
			all[i] += m[i] * w->phases[p].count;
		snprintf(name, sizeof(name), "for %s's traffic", w->phases[p].name);
		if (jobplan_same_phase(w, p) < 0) /* (a repeated phase's is built once) */
			for_traffic(c, m, name);
		free(m);
	}
	if (w->nphases > 1)
		for_traffic(c, all, "for the iteration's traffic");
	free(all);
}

int jobplan_candidates(struct jobplan_ctx *c, struct ofc_error *err)
{
	const struct fabric *f = c->f;

	if (f->graph && f->graph->n == c->n) {
		struct jobplan_topo *t = add(c->r);
		uint32_t *tails = graph_arc_tails(f->graph);
		struct topo_facts facts;

		snprintf(t->name, sizeof(t->name), "%s", f->topology.spec);
		if (strlen(f->topology.spec) >= sizeof(t->name))
			snprintf(t->name, sizeof(t->name), "%.150s...", f->topology.spec);
		t->spec = xstrdup(f->topology.spec);
		t->origin = JOBPLAN_CONFIG;
		t->g =
		    graph_from_arcs(f->graph->n, f->graph->m, tails, f->graph->adj, f->graph->spec);
		free(tails);
		t->pm = (struct port_map){.n = f->ports.n, .d = f->ports.d};
		t->pm.to = xmalloc(((size_t)f->ports.n * f->ports.d + 1) * sizeof(uint32_t));
		memcpy(t->pm.to, f->ports.to, (size_t)f->ports.n * f->ports.d * sizeof(uint32_t));
		t->circuits = xmalloc(((size_t)f->ncircuits + 1) * sizeof(struct circuit));
		memcpy(t->circuits, f->circuits, (size_t)f->ncircuits * sizeof(struct circuit));
		t->ncircuits = f->ncircuits;
		ports_of_arcs(t);
		topo_facts(t->g, &facts, 1);
		t->connected = facts.strongly_connected;
	}
	in_place(c);
	finder_candidates(c);
	union_candidates(c);
	traffic_candidates(c);
	if (c->r->ntopo == 0)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: no topology to weigh the workload on (no hosts' ports "
				     "to build one)",
				     f->name);
	return 0;
}
