/* A kept fluid MCF solution (struct mcf_warm) packed as an ofc.v1.McfWarm
 * and back: the planner process that solves a healthy graph hands it to
 * ofcd, which keeps the bytes with its config and hands them to the
 * planner that re-plans after a failure. Unpacking checks every array's
 * length against n, m, order and ntrees and every index against what it
 * indexes, so what cg_warm_from reads stays inside the arrays. */
#include "alltoall/mcf_internal.h"
#include "proto/mcf.pb-c.h"

#include <stdlib.h>
#include <string.h>

uint8_t *mcf_warm_pack(const struct mcf_warm *w, size_t *len)
{
	Ofc__V1__McfWarm m = OFC__V1__MCF_WARM__INIT;
	uint8_t *buf;

	m.has_n = m.has_m = m.has_nclass = m.has_order = m.has_objective = 1;
	m.n = w->n;
	m.m = w->m;
	m.nclass = w->nclass;
	m.order = w->order;
	m.objective = w->objective;
	m.n_off = (size_t)w->n + 1;
	m.off = w->off;
	m.n_head = w->m;
	m.head = w->head;
	m.n_class_of = w->n;
	m.class_of = w->class_of;
	m.n_rep = w->nclass;
	m.rep = w->rep;
	m.n_gnode = (size_t)w->order * w->n;
	m.gnode = w->gnode;
	m.n_garc = (size_t)w->order * w->m;
	m.garc = w->garc;
	m.n_tree_class = w->ntrees;
	m.tree_class = w->tree_class;
	m.n_parent = (size_t)w->ntrees * w->n;
	m.parent = w->parent;
	m.n_tree_w = w->ntrees;
	m.tree_w = w->tree_w;
	m.n_price = w->m;
	m.price = w->price;
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	return buf;
}

/* src's n entries copied, each below lim (UINT32_MAX: any; NO_PARENT
 * allowed where parent is set); false when one is not. */
static bool take_u32(uint32_t **dst, const uint32_t *src, size_t n, uint32_t lim, bool parent)
{
	*dst = xmalloc((n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++) {
		if (lim != UINT32_MAX && src[i] >= lim && !(parent && src[i] == NO_PARENT))
			return false;
		(*dst)[i] = src[i];
	}
	return true;
}

static bool sizes_ok(const Ofc__V1__McfWarm *m)
{
	size_t n = m->n, a = m->m, ntrees = m->n_tree_class;

	return m->n > 0 && m->order > 0 && m->nclass > 0 && m->nclass <= m->n &&
	       m->n_off == n + 1 && m->n_head == a && m->n_class_of == n && m->n_rep == m->nclass &&
	       m->n_gnode == m->order * n && m->n_garc == m->order * a && m->n_tree_w == ntrees &&
	       m->n_parent == ntrees * n && m->n_price == a;
}

static bool off_ok(const uint32_t *off, uint32_t n, uint32_t m)
{
	if (off[0] != 0 || off[n] != m)
		return false;
	for (uint32_t v = 0; v < n; v++)
		if (off[v] > off[v + 1])
			return false;
	return true;
}

struct mcf_warm *mcf_warm_unpack(const uint8_t *buf, size_t len, struct ofc_error *err)
{
	Ofc__V1__McfWarm *m = ofc__v1__mcf_warm__unpack(NULL, len, buf);
	struct mcf_warm *w;
	bool ok;

	if (!m) {
		ofc_error_set(err, OFC_E_INPUT, "the kept MCF solution does not unpack");
		return NULL;
	}
	if (!sizes_ok(m) || !off_ok(m->off, m->n, m->m)) {
		ofc__v1__mcf_warm__free_unpacked(m, NULL);
		ofc_error_set(err, OFC_E_INPUT,
			      "the kept MCF solution's arrays do not match "
			      "its sizes");
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->n = m->n;
	w->m = m->m;
	w->nclass = m->nclass;
	w->order = m->order;
	w->ntrees = (uint32_t)m->n_tree_class;
	w->objective = m->objective;
	ok = take_u32(&w->off, m->off, m->n_off, UINT32_MAX, false) &&
	     take_u32(&w->head, m->head, m->n_head, m->n, false) &&
	     take_u32(&w->class_of, m->class_of, m->n_class_of, m->nclass, false) &&
	     take_u32(&w->rep, m->rep, m->n_rep, m->n, false) &&
	     take_u32(&w->gnode, m->gnode, m->n_gnode, m->n, false) &&
	     take_u32(&w->garc, m->garc, m->n_garc, m->m, false) &&
	     take_u32(&w->tree_class, m->tree_class, m->n_tree_class, m->nclass, false) &&
	     take_u32(&w->parent, m->parent, m->n_parent, m->m, true);
	if (ok) {
		w->tree_w = xmalloc((m->n_tree_w + 1) * sizeof(double));
		memcpy(w->tree_w, m->tree_w, m->n_tree_w * sizeof(double));
		w->price = xmalloc((m->n_price + 1) * sizeof(double));
		memcpy(w->price, m->price, m->n_price * sizeof(double));
	}
	ofc__v1__mcf_warm__free_unpacked(m, NULL);
	if (!ok) {
		mcf_warm_free(w);
		ofc_error_set(err, OFC_E_INPUT,
			      "the kept MCF solution names a node, arc or class it does not have");
		return NULL;
	}
	return w;
}
