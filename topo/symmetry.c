/* Automorphism groups and canonical labellings through nauty (McKay and
 * Piperno, "Practical graph isomorphism, II", J. Symb. Comput. 60, 2014),
 * the field's library for them, in place of the individualisation and
 * refinement search ofc carried by hand (bench/results/symmetry.md,
 * "Symmetry through nauty", says why nauty rather than bliss).
 *
 * ofc's graphs are multigraphs with self-loops and ports; nauty takes simple
 * digraphs with an ordered partition of the vertices into colour cells. The
 * encoding (sym_encode) keeps exactly the automorphisms: a node's self-loops
 * become its colour (an automorphism keeps how many a node has), and where
 * pairs u -> v differ in how many parallel arcs join them, each pair of
 * other than the least multiplicity goes through a vertex of its own,
 * coloured by its multiplicity (in- and out-degree 1, in a cell apart from
 * the nodes', so it follows its pair). Cells are ordered by what they
 * encode, so isomorphic graphs encode to isomorphic coloured digraphs with
 * their cells in the same order, and canonical forms can be compared.
 *
 * nauty's callbacks take no argument of the caller's, and its kill request
 * (how a search stops at a deadline) is one flag for the whole process: so
 * calls are serialised by one mutex, waited for until the caller's
 * deadline, and the callbacks find the caller's context in one pointer that
 * mutex guards. These are the module's only mutable statics. */
#include "topo/internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nausparse.h>

/* ---- the encoding ----------------------------------------------------------- */

struct vkey {
	uint64_t key;
	uint32_t v;
};

static int cmp_vkey(const void *a, const void *b)
{
	const struct vkey *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Cell keys, in the order cells come: nodes by (colour, self-loops), then
 * pair vertices by multiplicity. */
#define KEY_NODE(c, l) (((uint64_t)(c) << 32) | (l))
#define KEY_PAIR(k)    ((1ull << 63) | (k))

/* Each node's non-loop heads sorted (CSR like g's, loops left out); the
 * loops per node into loops[]. */
static uint32_t *sorted_heads(const struct graph *g, uint32_t *off, uint32_t *loops)
{
	uint32_t *h = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t)), k = 0;

	for (uint32_t u = 0; u < g->n; u++) {
		off[u] = k;
		loops[u] = 0;
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (g->adj[a] == u)
				loops[u]++;
			else
				h[k++] = g->adj[a];
		qsort(h + off[u], k - off[u], sizeof(uint32_t), cmp_u32);
	}
	off[g->n] = k;
	return h;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

/* Colour refinement of the digraph (one-dimensional Weisfeiler-Leman over
 * in- and out-neighbours): each round a vertex's key becomes its old key's
 * rank mixed with the sorted keys of its out- and in-neighbours, ordered
 * first by the old key (cells only split), until no cell splits, for at
 * most REFINE_ROUNDS. Keys stay invariant under isomorphism, so the cells
 * are a finer start for nauty, whose refinement of a digraph counts
 * out-neighbours (its adjacency invariant adds the in-neighbours at every
 * node of its search, where this is paid once): a shuffled
 * genkautz:4096,4's canonical form 0.2-0.6 s -> 15-60 ms, bench/results/symmetry.md.
 * False when the deadline stopped it (the keys are then a coarser but
 * still invariant colouring, of no use to compare two graphs by). */
#define REFINE_ROUNDS 64
static bool refine_keys(const struct sym_graph *s, uint64_t *key, double deadline)
{
	bool done = true;
	uint32_t n = s->n, ncells = 0, maxin = 0;
	uint32_t *indeg = xcalloc((size_t)n + 1, sizeof(uint32_t));
	struct vkey *vk = xmalloc(((size_t)n + 1) * sizeof(*vk));
	uint64_t *nb, *h = xmalloc(((size_t)n + 1) * sizeof(uint64_t));
	size_t *ioff = xmalloc(((size_t)n + 2) * sizeof(size_t));
	uint32_t *iadj = xmalloc((s->m + 1) * sizeof(uint32_t)), maxd = 0;

	for (uint32_t u = 0; u < n; u++)
		for (int i = 0; i < s->deg[u]; i++)
			indeg[s->adj[s->off[u] + (size_t)i]]++;
	ioff[0] = 0;
	for (uint32_t v = 0; v < n; v++) {
		ioff[v + 1] = ioff[v] + indeg[v];
		if (indeg[v] > maxin)
			maxin = indeg[v];
		if ((uint32_t)s->deg[v] > maxd)
			maxd = (uint32_t)s->deg[v];
	}
	memset(indeg, 0, ((size_t)n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < n; u++)
		for (int i = 0; i < s->deg[u]; i++) {
			uint32_t v = (uint32_t)s->adj[s->off[u] + (size_t)i];

			iadj[ioff[v] + indeg[v]++] = u;
		}
	nb = xmalloc(((size_t)(maxin > maxd ? maxin : maxd) + 1) * sizeof(uint64_t));
	for (uint32_t v = 0; v < n; v++)
		vk[v] = (struct vkey){key[v], v};
	qsort(vk, n, sizeof(*vk), cmp_vkey);
	for (uint32_t i = 0; i < n; i++)
		ncells += i == 0 || vk[i].key != vk[i - 1].key;
	for (int round = 0; round < REFINE_ROUNDS; round++) {
		uint32_t cells = 0;

		if (deadline > 0 && now_seconds() > deadline) {
			done = false;
			break;
		}
		for (uint32_t v = 0; v < n; v++) {
			uint64_t x = 0x51ed27d5u;
			uint32_t k = 0;

			for (int i = 0; i < s->deg[v]; i++)
				nb[k++] = key[s->adj[s->off[v] + (size_t)i]];
			qsort(nb, k, sizeof(uint64_t), cmp_u64);
			for (uint32_t i = 0; i < k; i++)
				x = mix(x, nb[i]);
			x = mix(x, k);
			k = 0;
			for (size_t i = ioff[v]; i < ioff[v + 1]; i++)
				nb[k++] = key[iadj[i]];
			qsort(nb, k, sizeof(uint64_t), cmp_u64);
			for (uint32_t i = 0; i < k; i++)
				x = mix(x, nb[i]);
			h[v] = mix(x, k);
		}
		/* the new key: the old one's cell first, then the neighbours';
		 * old keys order the cells, so nodes' cells stay before pairs' */
		for (uint32_t v = 0; v < n; v++)
			vk[v] = (struct vkey){key[v], v};
		qsort(vk, n, sizeof(*vk), cmp_vkey);
		for (uint32_t i = 0, j; i < n; i = j) {
			/* one old cell: split it by h, keys keep the old order */
			for (j = i + 1; j < n && vk[j].key == vk[i].key; j++)
				;
			for (uint32_t t = i; t < j; t++)
				vk[t].key = h[vk[t].v];
			qsort(vk + i, j - i, sizeof(*vk), cmp_vkey);
			for (uint32_t t = i; t < j; t++)
				cells += t == i || vk[t].key != vk[t - 1].key;
		}
		/* the key: the cell's rank (in the cells' order), and 20 bits of
		 * its neighbours' hash, so that two graphs whose cells differ
		 * only in what they saw seldom look alike (same_cells) */
		for (uint32_t i = 0, rank = 0; i < n; i++) {
			if (i && (vk[i].key != vk[i - 1].key || key[vk[i].v] != key[vk[i - 1].v]))
				rank++;
			h[vk[i].v] = ((uint64_t)rank << 20) ^ (vk[i].key & 0xfffff);
		}
		memcpy(key, h, (size_t)n * sizeof(uint64_t));
		if (cells == ncells)
			break;
		ncells = cells;
	}
	free(indeg);
	free(vk);
	free(nb);
	free(h);
	free(ioff);
	free(iadj);
	return done;
}

void sym_encode(const struct graph *g, const uint32_t *colour, double deadline, struct sym_graph *s)
{
	uint32_t n = g->n, minmult = UINT32_MAX;
	uint32_t *off = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *loops = xmalloc(((size_t)n + 1) * sizeof(uint32_t));
	uint32_t *h = sorted_heads(g, off, loops);
	uint64_t pairs = 0, split = 0;

	memset(s, 0, sizeof(*s));
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t u = 0; u < n; u++)
			for (uint32_t i = off[u], j; i < off[u + 1]; i = j) {
				for (j = i + 1; j < off[u + 1] && h[j] == h[i]; j++)
					;
				if (pass == 0) {
					pairs++;
					if (j - i < minmult)
						minmult = j - i;
				} else {
					split += j - i != minmult;
				}
			}
	s->norig = n;
	s->n = n + (uint32_t)split;
	s->m = pairs + split;
	s->off = xmalloc(((size_t)s->n + 1) * sizeof(size_t));
	s->deg = xcalloc((size_t)s->n + 1, sizeof(int));
	s->adj = xmalloc((s->m + 1) * sizeof(int));
	uint64_t *key = xmalloc(((size_t)s->n + 1) * sizeof(uint64_t));
	uint32_t *pair_head = xmalloc((split + 1) * sizeof(uint32_t));
	uint32_t next = n;

	/* the nodes' arcs first (each pair once, or its pair vertex), then
	 * one arc from each pair vertex to its pair's head */
	size_t at = 0;
	for (uint32_t u = 0; u < n; u++) {
		key[u] = KEY_NODE(colour ? colour[u] : 0, loops[u]);
		s->off[u] = at;
		for (uint32_t i = off[u], j; i < off[u + 1]; i = j) {
			for (j = i + 1; j < off[u + 1] && h[j] == h[i]; j++)
				;
			if (j - i == minmult) {
				s->adj[at++] = (int)h[i];
			} else {
				key[next] = KEY_PAIR(j - i);
				pair_head[next - n] = h[i];
				s->adj[at++] = (int)next++;
			}
		}
		s->deg[u] = (int)(at - s->off[u]);
	}
	for (uint32_t w = n; w < s->n; w++) {
		s->off[w] = at;
		s->adj[at++] = (int)pair_head[w - n];
		s->deg[w] = 1;
	}
	s->off[s->n] = at;
	free(pair_head);
	free(off);
	free(loops);
	free(h);

	s->cut_short = !refine_keys(s, key, deadline);
	/* Cells: the vertices sorted by key (then id); cell[v] its rank. */
	struct vkey *vk = xmalloc(((size_t)s->n + 1) * sizeof(*vk));

	for (uint32_t v = 0; v < s->n; v++)
		vk[v] = (struct vkey){key[v], v};
	qsort(vk, s->n, sizeof(*vk), cmp_vkey);
	s->order = xmalloc(((size_t)s->n + 1) * sizeof(int));
	s->cell = xmalloc(((size_t)s->n + 1) * sizeof(uint32_t));
	s->cell_key = xmalloc(((size_t)s->n + 1) * sizeof(uint64_t));
	s->cell_end = xmalloc(((size_t)s->n + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < s->n; i++) {
		if (i == 0 || vk[i].key != vk[i - 1].key)
			s->cell_key[s->ncells++] = vk[i].key;
		s->cell_end[s->ncells - 1] = i + 1;
		s->order[i] = (int)vk[i].v;
		s->cell[vk[i].v] = s->ncells - 1;
	}
	free(vk);
	free(key);
}

void sym_graph_free(struct sym_graph *s)
{
	free(s->off);
	free(s->deg);
	free(s->adj);
	free(s->order);
	free(s->cell);
	free(s->cell_key);
	free(s->cell_end);
	memset(s, 0, sizeof(*s));
}

/* ---- nauty -------------------------------------------------------------------- */

struct nauty_call {
	double deadline; /* now_seconds(); 0: none */
	bool late;
	uint32_t norig;
	/* generators kept: those moving some node keep[] marks (NULL:
	 * every one), while they fit max_bytes */
	const uint8_t *keep;
	uint64_t max_bytes;
	struct sym_gens *out;
};

static pthread_mutex_t nauty_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nauty_call *nauty_active; /* guarded by nauty_lock */

static void check_late(struct nauty_call *c)
{
	if (!c->late && c->deadline > 0 && now_seconds() > c->deadline) {
		c->late = true;
		nauty_kill_request = 1;
	}
}

static void on_node(graph *g, int *lab, int *ptn, int level, int numcells, int tc, int code, int m,
		    int n)
{
	(void)g, (void)lab, (void)ptn, (void)level, (void)numcells, (void)tc, (void)code;
	(void)m, (void)n;
	check_late(nauty_active);
}

static void on_autom(int count, int *perm, int *orbits, int numorbits, int stabvertex, int n)
{
	struct nauty_call *c = nauty_active;
	struct sym_gens *o = c->out;
	uint32_t norig = c->norig;
	bool moves = c->keep == NULL;

	(void)count, (void)orbits, (void)numorbits, (void)stabvertex, (void)n;
	check_late(c);
	if (!o)
		return;
	for (uint32_t u = 0; u < norig && !moves; u++)
		moves = c->keep[u] && (uint32_t)perm[u] != u;
	if (!moves)
		return;
	if (((uint64_t)o->ngen + 1) * norig * sizeof(uint32_t) > c->max_bytes) {
		o->cut = true;
		return;
	}
	if (o->ngen == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 8;
		o->perm = xreallocarray(o->perm, o->cap, ((size_t)norig + 1) * sizeof(uint32_t));
	}
	uint32_t *p = o->perm + (size_t)o->ngen++ * norig;

	for (uint32_t u = 0; u < norig; u++)
		p[u] = (uint32_t)perm[u];
}

/* The mutex, until the deadline; false past it. */
static bool lock_until(double deadline)
{
	if (deadline <= 0)
		return pthread_mutex_lock(&nauty_lock) == 0;
	double left = deadline - now_seconds();
	struct timespec ts;

	if (left <= 0)
		return pthread_mutex_trylock(&nauty_lock) == 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)left;
	ts.tv_nsec += (long)((left - floor(left)) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
	/* ThreadSanitizer (clang 14) does not see pthread_mutex_clocklock take
	 * the mutex, and calls its unlock a wrong thread's: the same wait, by
	 * trylock. */
	while (pthread_mutex_trylock(&nauty_lock) != 0) {
		if (now_seconds() >= deadline)
			return false;
		usleep(1000);
	}
	return true;
#endif
#endif
	return pthread_mutex_clocklock(&nauty_lock, CLOCK_MONOTONIC, &ts) == 0;
}

/* One nauty run over s (lab: its final labelling, s->n entries; cg: the
 * canonical graph when wanted); false when past the deadline (then what
 * the callbacks kept is what was found by then). *order: |Aut| as nauty
 * counted it. */
static bool run_nauty(const struct sym_graph *s, struct nauty_call *c, int *lab, sparsegraph *cg,
		      double *order)
{
	int n = (int)s->n;
	int *ptn = xmalloc(((size_t)n + 1) * sizeof(int));
	int *orbits = xmalloc(((size_t)n + 1) * sizeof(int));
	statsblk st;
	sparsegraph sg;
	DEFAULTOPTIONS_SPARSEDIGRAPH(opt);

	*order = 1;
	if (!lock_until(c->deadline)) {
		c->late = true;
		free(ptn);
		free(orbits);
		return false;
	}
	SG_INIT(sg);
	sg.nv = n;
	sg.nde = s->m;
	sg.v = s->off;
	sg.d = s->deg;
	sg.e = s->adj;
	sg.vlen = sg.dlen = (size_t)n;
	sg.elen = s->m;
	memcpy(lab, s->order, (size_t)n * sizeof(int));
	for (uint32_t k = 0, i = 0; k < s->ncells; k++)
		for (; i < s->cell_end[k]; i++)
			ptn[i] = i + 1 < s->cell_end[k];
	opt.defaultptn = FALSE;
	opt.getcanon = cg != NULL;
	opt.userautomproc = on_autom;
	opt.usernodeproc = on_node;
	nauty_active = c;
	nauty_kill_request = 0;
	check_late(c);
	if (!c->late && n > 0) {
		sparsenauty(&sg, lab, ptn, orbits, &opt, &st, cg);
		/* nauty keeps its work arrays in thread-local statics, freed by
		 * no one when the thread ends: a planning thread that exits
		 * after a run would leak them (LeakSanitizer, test_plan_ahead).
		 * Freed after each run instead (calls are serialised anyway, so
		 * no thread reuses them; growing them again is O(n)). */
		nauty_freedyn();
		nautil_freedyn();
		nausparse_freedyn();
	} else {
		st.errstatus = NAUKILLED;
	}
	nauty_active = NULL;
	nauty_kill_request = 0;
	pthread_mutex_unlock(&nauty_lock);
	free(ptn);
	free(orbits);
	if (n == 0)
		return !c->late;
	if (st.errstatus != 0) {
		c->late = true;
		return false;
	}
	*order = st.grpsize1 * pow(10.0, st.grpsize2);
	return true;
}

void sym_automorphisms(const struct sym_graph *s, const uint8_t *keep, double deadline,
		       uint64_t max_bytes, struct sym_gens *out)
{
	struct nauty_call c = {.deadline = deadline,
			       .norig = s->norig,
			       .keep = keep,
			       .max_bytes = max_bytes,
			       .out = out};
	int *lab = xmalloc(((size_t)s->n + 1) * sizeof(int));

	memset(out, 0, sizeof(*out));
	out->n = s->norig;
	if (!run_nauty(s, &c, lab, NULL, &out->order))
		out->order = 0;
	out->timed_out = c.late;
	free(lab);
}

void sym_gens_free(struct sym_gens *g)
{
	free(g->perm);
	memset(g, 0, sizeof(*g));
}

/* Sorted neighbour lists of a canonical graph, equal as graphs. */
static bool same_graph(sparsegraph *a, sparsegraph *b)
{
	if (a->nv != b->nv || a->nde != b->nde)
		return false;
	sortlists_sg(a);
	sortlists_sg(b);
	for (int v = 0; v < a->nv; v++)
		if (a->d[v] != b->d[v] ||
		    (a->d[v] && /* (no edges: e may be NULL) */
		     memcmp(a->e + a->v[v], b->e + b->v[v], (size_t)a->d[v] * sizeof(int)) != 0))
			return false;
	return true;
}

/* The cells of a and b alike: as many, the same keys and sizes. */
static bool same_cells(const struct sym_graph *a, const struct sym_graph *b)
{
	if (a->n != b->n || a->norig != b->norig || a->m != b->m || a->ncells != b->ncells)
		return false;
	for (uint32_t k = 0; k < a->ncells; k++)
		if (a->cell_key[k] != b->cell_key[k] || a->cell_end[k] != b->cell_end[k])
			return false;
	return true;
}

int sym_isomorphism(const struct sym_graph *a, const struct sym_graph *b, double deadline,
		    uint32_t *map)
{
	struct nauty_call ca = {.deadline = deadline, .norig = a->norig};
	struct nauty_call cb = {.deadline = deadline, .norig = b->norig};
	int *la, *lb, rc = 0;
	double oa, ob;
	SG_DECL(ga);
	SG_DECL(gb);

	if (a->cut_short || b->cut_short)
		return -1; /* the deadline stopped their colouring */
	if (!same_cells(a, b))
		return 0;
	la = xmalloc(((size_t)a->n + 1) * sizeof(int));
	lb = xmalloc(((size_t)b->n + 1) * sizeof(int));
	if (!run_nauty(a, &ca, la, &ga, &oa) || !run_nauty(b, &cb, lb, &gb, &ob)) {
		rc = -1;
	} else if (same_graph(&ga, &gb)) {
		/* canonical vertex i is la[i] in a and lb[i] in b */
		rc = 1;
		for (uint32_t i = 0; i < a->n; i++)
			if ((uint32_t)la[i] < a->norig)
				map[la[i]] = (uint32_t)lb[i];
	}
	SG_FREE(ga);
	SG_FREE(gb);
	free(la);
	free(lb);
	return rc;
}
