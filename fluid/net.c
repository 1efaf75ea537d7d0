/* The general network: vertices with kinds and names, arcs with bandwidth
 * and cost, capacity sets; server templates instantiated by name. */
#include "fluid/fluid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fluid_net_init(struct fluid_net *n)
{
	memset(n, 0, sizeof(*n));
	n->set_off = xcalloc(1, sizeof(uint32_t));
	n->cap_sets = 0;
}

void fluid_net_free(struct fluid_net *n)
{
	free(n->kind);
	free(n->name);
	free(n->tail);
	free(n->head);
	free(n->bw);
	free(n->cost);
	free(n->set_off);
	free(n->set_arc);
	free(n->set_bw);
	free(n->set_name);
	free(n->names);
	free(n->index);
	free(n->arc_index);
	memset(n, 0, sizeof(*n));
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint32_t add_name(struct fluid_net *n, const char *name)
{
	size_t len = strlen(name) + 1;
	uint32_t off = (uint32_t)n->names_len;

	GROW(n->names, n->names_cap, n->names_len + len);
	memcpy(n->names + n->names_len, name, len);
	n->names_len += len;
	return off;
}

/* Open addressing over vertex ids (UINT32_MAX = empty), keyed by name. */
static void index_insert(uint32_t *idx, size_t cap, const struct fluid_net *n, uint32_t v)
{
	size_t h = name_hash(fluid_vertex_name(n, v)) & (cap - 1);

	while (idx[h] != UINT32_MAX)
		h = (h + 1) & (cap - 1);
	idx[h] = v;
}

static void index_grow(struct fluid_net *n)
{
	if ((n->nverts + 1) * 2 <= n->index_cap)
		return;
	size_t cap = n->index_cap ? n->index_cap * 2 : 64;
	uint32_t *idx = xmalloc(cap * sizeof(uint32_t));

	memset(idx, 0xff, cap * sizeof(uint32_t));
	for (uint32_t v = 0; v < n->nverts; v++)
		index_insert(idx, cap, n, v);
	free(n->index);
	n->index = idx;
	n->index_cap = cap;
}

int fluid_find_vertex(const struct fluid_net *n, const char *name)
{
	if (!n->index_cap)
		return -1;
	size_t h = name_hash(name) & (n->index_cap - 1);

	while (n->index[h] != UINT32_MAX) {
		if (strcmp(fluid_vertex_name(n, n->index[h]), name) == 0)
			return (int)n->index[h];
		h = (h + 1) & (n->index_cap - 1);
	}
	return -1;
}

int fluid_add_vertex(struct fluid_net *n, const char *name, unsigned kind, struct ofc_error *err)
{
	if (!name || !*name)
		return ofc_error_set(err, OFC_E_INPUT, "a vertex needs a name");
	if (kind & ~15u)
		return ofc_error_set(err, OFC_E_INPUT, "vertex '%s': unknown kind bits %#x", name,
				     kind);
	if (fluid_find_vertex(n, name) >= 0)
		return ofc_error_set(err, OFC_E_INPUT, "vertex '%s' defined twice", name);
	if (n->nverts >= FLUID_MAX_VERTS)
		return ofc_error_set(err, OFC_E_INPUT, "more than %u vertices", FLUID_MAX_VERTS);
	index_grow(n);
	if (n->nverts == n->cap_verts) {
		n->cap_verts = n->cap_verts ? n->cap_verts * 2 : 64;
		n->kind = xreallocarray(n->kind, n->cap_verts, 1);
		n->name = xreallocarray(n->name, n->cap_verts, sizeof(uint32_t));
	}
	uint32_t v = n->nverts++;

	n->kind[v] = (uint8_t)kind;
	n->name[v] = add_name(n, name);
	index_insert(n->index, n->index_cap, n, v);
	return (int)v;
}

/* The arc index: open addressing over arc ids (UINT32_MAX = empty), keyed
 * by (tail, head), holding the first arc of each pair. */
static size_t arc_slot(uint32_t tail, uint32_t head, size_t cap)
{
	uint64_t x = (uint64_t)tail << 32 | head;

	x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
	x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return (size_t)(x ^ (x >> 33)) & (cap - 1);
}

static void arc_index_put(uint32_t *idx, size_t cap, const struct fluid_net *n, uint32_t a)
{
	size_t h = arc_slot(n->tail[a], n->head[a], cap);

	while (idx[h] != UINT32_MAX) {
		if (n->tail[idx[h]] == n->tail[a] && n->head[idx[h]] == n->head[a])
			return; /* a parallel arc: the first one stays */
		h = (h + 1) & (cap - 1);
	}
	idx[h] = a;
}

static void arc_index_grow(struct fluid_net *n)
{
	if (((size_t)n->narcs + 1) * 2 <= n->arc_index_cap)
		return;
	size_t cap = n->arc_index_cap ? n->arc_index_cap * 2 : 256;
	uint32_t *idx = xmalloc(cap * sizeof(uint32_t));

	memset(idx, 0xff, cap * sizeof(uint32_t));
	for (uint32_t a = 0; a < n->narcs; a++)
		arc_index_put(idx, cap, n, a);
	free(n->arc_index);
	n->arc_index = idx;
	n->arc_index_cap = cap;
}

int fluid_add_arc(struct fluid_net *n, uint32_t tail, uint32_t head, double bw, double cost,
		  struct ofc_error *err)
{
	if (tail >= n->nverts || head >= n->nverts)
		return ofc_error_set(err, OFC_E_INPUT, "arc %u -> %u: no such vertex", tail, head);
	if (tail == head)
		return ofc_error_set(err, OFC_E_INPUT, "arc from '%s' to itself",
				     fluid_vertex_name(n, tail));
	if (!(bw > 0) || !(cost >= 0) || isinf(cost))
		return ofc_error_set(err, OFC_E_INPUT,
				     "arc %s -> %s: bandwidth must be > 0 and cost >= 0",
				     fluid_vertex_name(n, tail), fluid_vertex_name(n, head));
	if (n->narcs >= FLUID_MAX_ARCS)
		return ofc_error_set(err, OFC_E_INPUT, "more than %u arcs", FLUID_MAX_ARCS);
	if (n->narcs == n->cap_arcs) {
		n->cap_arcs = n->cap_arcs ? n->cap_arcs * 2 : 128;
		n->tail = xreallocarray(n->tail, n->cap_arcs, sizeof(uint32_t));
		n->head = xreallocarray(n->head, n->cap_arcs, sizeof(uint32_t));
		n->bw = xreallocarray(n->bw, n->cap_arcs, sizeof(double));
		n->cost = xreallocarray(n->cost, n->cap_arcs, sizeof(double));
	}
	arc_index_grow(n);
	uint32_t a = n->narcs++;

	n->tail[a] = tail;
	n->head[a] = head;
	n->bw[a] = bw;
	n->cost[a] = cost;
	arc_index_put(n->arc_index, n->arc_index_cap, n, a);
	return (int)a;
}

int fluid_add_link(struct fluid_net *n, uint32_t a, uint32_t b, double bw, double cost,
		   struct ofc_error *err)
{
	int r = fluid_add_arc(n, a, b, bw, cost, err);

	if (r < 0 || fluid_add_arc(n, b, a, bw, cost, err) < 0)
		return -1;
	return r;
}

static int lookup(const struct fluid_net *n, const char *name, struct ofc_error *err)
{
	int v = fluid_find_vertex(n, name);

	if (v < 0)
		return ofc_error_set(err, OFC_E_INPUT, "no vertex named '%s'", name);
	return v;
}

int fluid_connect(struct fluid_net *n, const char *a, const char *b, double bw, double cost,
		  struct ofc_error *err)
{
	int u = lookup(n, a, err), v;

	if (u < 0 || (v = lookup(n, b, err)) < 0)
		return -1;
	return fluid_add_link(n, (uint32_t)u, (uint32_t)v, bw, cost, err);
}

int fluid_find_arc(const struct fluid_net *n, uint32_t tail, uint32_t head)
{
	if (!n->arc_index_cap) { /* a network not built here (reversed): scan */
		for (uint32_t a = 0; a < n->narcs; a++)
			if (n->tail[a] == tail && n->head[a] == head)
				return (int)a;
		return -1;
	}
	for (size_t h = arc_slot(tail, head, n->arc_index_cap); n->arc_index[h] != UINT32_MAX;
	     h = (h + 1) & (n->arc_index_cap - 1)) {
		uint32_t a = n->arc_index[h];

		if (n->tail[a] == tail && n->head[a] == head)
			return (int)a;
	}
	return -1;
}

static int cmp_arc_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int fluid_add_set(struct fluid_net *n, const char *name, double bw, const uint32_t *arcs,
		  uint32_t narcs, struct ofc_error *err)
{
	if (!(bw > 0) || isinf(bw))
		return ofc_error_set(err, OFC_E_INPUT, "capacity set '%s': bandwidth must be > 0",
				     name ? name : "");
	if (narcs == 0)
		return ofc_error_set(err, OFC_E_INPUT, "capacity set '%s' has no arcs",
				     name ? name : "");
	for (uint32_t i = 0; i < narcs; i++)
		if (arcs[i] >= n->narcs)
			return ofc_error_set(err, OFC_E_INPUT, "capacity set '%s': no arc %u",
					     name ? name : "", arcs[i]);
	/* Twice the same arc, on a sorted copy: a set may list many arcs (a
	 * fibre segment's), and every pair compared is quadratic. */
	uint32_t *sorted = xmalloc((size_t)narcs * sizeof(uint32_t));
	bool twice = false;

	memcpy(sorted, arcs, (size_t)narcs * sizeof(uint32_t));
	qsort(sorted, narcs, sizeof(uint32_t), cmp_arc_id);
	for (uint32_t i = 1; i < narcs && !twice; i++)
		twice = sorted[i] == sorted[i - 1];
	free(sorted);
	if (twice)
		return ofc_error_set(err, OFC_E_INPUT, "capacity set '%s' lists an arc twice",
				     name ? name : "");
	if (n->nsets == n->cap_sets) {
		n->cap_sets = n->cap_sets ? n->cap_sets * 2 : 16;
		n->set_off = xreallocarray(n->set_off, n->cap_sets + 1, sizeof(uint32_t));
		n->set_bw = xreallocarray(n->set_bw, n->cap_sets, sizeof(double));
		n->set_name = xreallocarray(n->set_name, n->cap_sets, sizeof(uint32_t));
	}
	uint32_t s = n->nsets++, at = n->set_off[s];

	GROW(n->set_arc, n->cap_set_arcs, (size_t)at + narcs);
	memcpy(n->set_arc + at, arcs, narcs * sizeof(uint32_t));
	n->set_off[s + 1] = at + narcs;
	n->set_bw[s] = bw;
	n->set_name[s] = add_name(n, name ? name : "");
	return (int)s;
}

uint32_t fluid_terminals(const struct fluid_net *n, uint32_t *out)
{
	uint32_t k = 0;

	for (uint32_t v = 0; v < n->nverts; v++)
		if (n->kind[v] & FLUID_TERMINAL) {
			if (out)
				out[k] = v;
			k++;
		}
	return k;
}

int fluid_net_check(const struct fluid_net *n, struct ofc_error *err)
{
	if (fluid_terminals(n, NULL) < 2)
		return ofc_error_set(err, OFC_E_INPUT, "the network has fewer than 2 terminals");
	for (uint32_t v = 0; v < n->nverts; v++)
		if ((n->kind[v] & FLUID_TERMINAL) &&
		    (n->kind[v] & (FLUID_CAN_STORE | FLUID_CAN_COPY)) !=
			(FLUID_CAN_STORE | FLUID_CAN_COPY))
			return ofc_error_set(err, OFC_E_INPUT,
					     "terminal '%s' must be able to store and copy",
					     fluid_vertex_name(n, v));
	return 0;
}

/* ---- templates --------------------------------------------------------------- */

static int prefixed(const struct fluid_net *n, const char *prefix, const char *name,
		    struct ofc_error *err)
{
	char buf[256];

	if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", prefix, name) >= sizeof(buf))
		return ofc_error_set(err, OFC_E_INPUT, "name '%s/%s' too long", prefix, name);
	int v = fluid_find_vertex(n, buf);

	if (v < 0)
		return ofc_error_set(err, OFC_E_INPUT, "template '%s': no vertex '%s'", prefix,
				     name);
	return v;
}

int fluid_instantiate(struct fluid_net *n, const struct fluid_template *t, const char *prefix,
		      struct ofc_error *err)
{
	char buf[256];
	int first = (int)n->nverts;

	for (uint32_t i = 0; i < t->nverts; i++) {
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", prefix, t->verts[i].name) >=
		    sizeof(buf))
			return ofc_error_set(err, OFC_E_INPUT, "name '%s/%s' too long", prefix,
					     t->verts[i].name);
		if (fluid_add_vertex(n, buf, t->verts[i].kind, err) < 0)
			return -1;
	}
	for (uint32_t i = 0; i < t->nlinks; i++) {
		const struct fluid_tlink *l = &t->links[i];
		int a = prefixed(n, prefix, l->a, err), b;

		if (a < 0 || (b = prefixed(n, prefix, l->b, err)) < 0)
			return -1;
		if (fluid_add_arc(n, (uint32_t)a, (uint32_t)b, l->bw, l->cost, err) < 0 ||
		    (!l->one_way &&
		     fluid_add_arc(n, (uint32_t)b, (uint32_t)a, l->bw, l->cost, err) < 0))
			return -1;
	}
	for (uint32_t i = 0; i < t->nsets; i++) {
		const struct fluid_tset *s = &t->sets[i];
		uint32_t *arcs = xmalloc((s->narcs + 1) * sizeof(uint32_t));
		int rc = 0;

		for (uint32_t j = 0; j < s->narcs && rc == 0; j++) {
			int a = prefixed(n, prefix, s->arcs[j].tail, err), b, e = -1;

			if (a < 0 || (b = prefixed(n, prefix, s->arcs[j].head, err)) < 0)
				rc = -1;
			else if ((e = fluid_find_arc(n, (uint32_t)a, (uint32_t)b)) < 0)
				rc = ofc_error_set(err, OFC_E_INPUT,
						   "capacity set '%s': no link %s -> %s", s->name,
						   s->arcs[j].tail, s->arcs[j].head);
			else
				arcs[j] = (uint32_t)e;
		}
		snprintf(buf, sizeof(buf), "%s/%s", prefix, s->name);
		if (rc == 0 && fluid_add_set(n, buf, s->bw, arcs, s->narcs, err) < 0)
			rc = -1;
		free(arcs);
		if (rc < 0)
			return -1;
	}
	return first;
}
