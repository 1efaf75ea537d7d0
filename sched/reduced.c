/* Symmetry-reduced schedules (see sched.h): the translation group of a
 * Cayley family, a program of orbit representatives and its expansion.
 * The engines make the programs (bfb_reduced, a2a_reduced, ...); the verifier by symmetry that
 * checks them is verify_reduced*.c. */
#include "sched/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the group ------------------------------------------------------------------- */

static void group_dims(struct sched_group *G, const uint32_t *radix, uint32_t k)
{
	uint32_t stride = 1;
	bool same = true;

	G->ndims = k;
	G->binary = true;
	G->pow2 = true;
	G->reps = 1;
	for (uint32_t i = 0; i < k; i++) {
		G->radix[i] = radix[i];
		G->step[i] = 1;
		G->stride[i] = stride;
		G->shift[i] = (uint8_t)__builtin_ctz(stride);
		G->pow2 = G->pow2 && radix[i] && (radix[i] & (radix[i] - 1)) == 0;
		stride *= radix[i];
		G->binary = G->binary && radix[i] == 2;
		same = same && radix[i] == radix[0];
	}
	G->order = G->nodes = stride;
	if (k > 1 && same) {
		snprintf(G->name, sizeof(G->name), "Z_%u^%u", radix[0], k);
		return;
	}
	size_t len = 0;
	G->name[0] = 0;
	for (uint32_t i = 0; i < k && len < sizeof(G->name); i++)
		len += (size_t)snprintf(G->name + len, sizeof(G->name) - len, "%sZ_%u",
					i ? " x " : "", radix[i]);
}

void sched_group_make(struct sched_group *G, const uint32_t *radix, uint32_t k)
{
	memset(G, 0, sizeof(*G));
	group_dims(G, radix, k < SCHED_GROUP_MAX_DIMS ? k : SCHED_GROUP_MAX_DIMS);
}

uint32_t sched_group_high(const struct sched_group *G)
{
	uint32_t hi = 0, bits = 0;

	if (!G->pow2 || G->nodes != G->order || G->nodes == 0 || (G->nodes & (G->nodes - 1)) != 0)
		return 0;
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t w = 0;

		while ((UINT32_C(1) << w) < G->radix[i])
			w++;
		if (G->shift[i] != bits || G->stride[i] != UINT32_C(1) << bits)
			return 0;
		if (w)
			hi |= UINT32_C(1) << (bits + w - 1);
		bits += w;
	}
	return (UINT32_C(1) << bits) == G->nodes && bits ? hi : 0;
}

int sched_group_of(const struct graph *g, const struct topo_tree *t, struct sched_group *G,
		   struct ofc_error *err)
{
	uint32_t radix[SCHED_GROUP_MAX_DIMS], k = 0;
	const char *name = t ? t->name : "";

	memset(G, 0, sizeof(*G));
	if (!t || t->op != TOPO_FAMILY)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s is not a family with a translation group (torus, "
				     "hypercube, circulant, ring, biring, complete, hamming, "
				     "bipartite)",
				     g->spec ? g->spec : "the topology");
	if (strcmp(name, "torus") == 0) {
		for (k = 0; k < t->nparams && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = t->params[k];
	} else if (strcmp(name, "hypercube") == 0 && t->nparams == 1) {
		for (k = 0; k < t->params[0] && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = 2;
	} else if ((strcmp(name, "circulant") == 0 || strcmp(name, "ring") == 0 ||
		    strcmp(name, "biring") == 0 || strcmp(name, "complete") == 0) &&
		   t->nparams >= 1) {
		radix[k++] = t->params[0];
	} else if (strcmp(name, "hamming") == 0 && t->nparams == 2) {
		for (k = 0; k < t->params[0] && k < SCHED_GROUP_MAX_DIMS; k++)
			radix[k] = t->params[1];
	} else if (strcmp(name, "bipartite") == 0 && t->nparams == 1) {
		radix[k++] = t->params[0];
		radix[k++] = 2;
	} else {
		return ofc_error_set(err, OFC_E_INPUT,
				     "%s: %s graphs have no translation group here (torus, "
				     "hypercube, circulant, ring, biring, complete, hamming, "
				     "bipartite)",
				     g->spec ? g->spec : "the topology", name);
	}
	uint64_t order = 1;
	for (uint32_t i = 0; i < k; i++)
		order *= radix[i] ? radix[i] : 1;
	if (order != g->n)
		return ofc_error_set(
		    err, OFC_E_INPUT, "%s: the group would have %llu elements for %u nodes",
		    g->spec ? g->spec : "the topology", (unsigned long long)order, g->n);
	group_dims(G, radix, k);

	/* The Cayley condition, port by port: port j of u leads to u + s_j. */
	uint32_t d = graph_outdeg(g, 0);
	const uint32_t *s = graph_out(g, 0);
	for (uint32_t u = 0; u < g->n; u++) {
		if (graph_outdeg(g, u) != d)
			return ofc_error_set(err, OFC_E_INPUT,
					     "%s is not regular (node %u has %u links, node 0 %u)",
					     g->spec, u, graph_outdeg(g, u), d);
		const uint32_t *out = graph_out(g, u);
		for (uint32_t j = 0; j < d; j++)
			if (out[j] != sched_group_add(G, u, s[j]))
				return ofc_error_set(err, OFC_E_INPUT,
						     "%s: port %u of node %u leads to %u, not to "
						     "%u + %u: the translations of %s do not keep "
						     "ports",
						     g->spec, j, u, out[j], u, s[j], G->name);
	}
	return 0;
}

int sched_group_restrict(struct sched_group *G, const uint32_t *step, struct ofc_error *err)
{
	uint32_t reps = 1;
	bool same = true;
	size_t len = 0;

	for (uint32_t i = 0; i < G->ndims; i++) {
		if (!step[i] || G->radix[i] % step[i])
			return ofc_error_set(err, OFC_E_INPUT,
					     "a step of %u does not divide the dimension %u",
					     step[i], G->radix[i]);
		reps *= step[i];
		same = same && step[i] == step[0] && G->radix[i] == G->radix[0];
	}
	G->even = true;
	for (uint32_t i = 0; i < G->ndims; i++) {
		G->step[i] = step[i];
		G->binary = G->binary && step[i] == 1;
		G->even = G->even && step[i] == 2;
	}
	G->reps = reps;
	G->order = G->nodes / reps;
	if (G->ndims > 1 && same) {
		snprintf(G->name, sizeof(G->name), "(%uZ_%u)^%u", step[0], G->radix[0], G->ndims);
		return 0;
	}
	G->name[0] = 0;
	for (uint32_t i = 0; i < G->ndims && len < sizeof(G->name); i++)
		len += (size_t)snprintf(G->name + len, sizeof(G->name) - len, "%s%uZ_%u",
					i ? " x " : "", step[i], G->radix[i]);
	return 0;
}

uint32_t sched_group_element(const struct sched_group *G, uint32_t e)
{
	uint32_t v = 0;

	if (G->reps == 1)
		return e;
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t m = G->radix[i] / G->step[i];

		v += (e % m) * G->step[i] * G->stride[i];
		e /= m;
	}
	return v;
}

uint32_t sched_group_split(const struct sched_group *G, uint32_t v, uint32_t *h)
{
	uint32_t idx = 0, rs = 1;

	if (G->reps == 1) {
		*h = v;
		return 0;
	}
	*h = 0;
	if (G->pow2 && G->even) { /* Swing's subgroup: a coordinate's low bit */
		for (uint32_t i = 0; i < G->ndims; i++)
			idx |= (v >> G->shift[i] & 1) << i;
		*h = v - sched_group_rep_node(G, idx);
		return idx;
	}
	for (uint32_t i = 0; i < G->ndims; i++) {
		uint32_t x = (v / G->stride[i]) % G->radix[i], rx = x % G->step[i];

		idx += rx * rs;
		rs *= G->step[i];
		*h += (x - rx) * G->stride[i];
	}
	return idx;
}

uint32_t sched_group_rep_node(const struct sched_group *G, uint32_t i)
{
	uint32_t v = 0;

	for (uint32_t k = 0; k < G->ndims && G->reps > 1; k++) {
		v += (i % G->step[k]) * G->stride[k];
		i /= G->step[k];
	}
	return v;
}

/* ---- the program and its expansion ---------------------------------------------- */

void sched_reduced_free(struct sched_reduced *r)
{
	sched_free(&r->prog);
	memset(r, 0, sizeof(*r));
}

struct xfer sched_reduced_move(const struct sched_reduced *r, const struct xfer *x, uint32_t g)
{
	const struct sched_group *G = &r->group;
	struct xfer y = *x;

	y.src = (uint16_t)sched_group_add(G, x->src, g);
	y.dst = (uint16_t)sched_group_add(G, x->dst, g);
	if (r->prog.collective == SCHED_ALLTOALL) {
		uint32_t n = G->nodes, o = x->block / n, t = x->block % n;

		y.block = sched_group_add(G, o, g) * n + sched_group_add(G, t, g);
	} else {
		y.block = sched_group_add(G, x->block, g);
	}
	return y;
}

struct xfer sched_reduced_piece(const struct sched_reduced *r, const struct xfer *x, uint32_t j,
				uint32_t g)
{
	struct xfer y = *x, out;

	/* A span is cut into its blocks: a translate of consecutive blocks
	 * need not be consecutive. A block past the last is left as it is,
	 * for the check to refuse. */
	y.flags = xfer_span_flags(y.flags, 0);
	y.block += j;
	out = sched_reduced_move(r, &y, g);
	if (r->prog.collective != SCHED_ALLTOALL && y.block >= r->group.nodes)
		out.block = y.block;
	return out;
}

int sched_reduced_expand(const struct sched_reduced *r, struct schedule *s, struct ofc_error *err)
{
	const struct schedule *p = &r->prog;
	uint32_t n = r->group.nodes, order = r->group.order;

	if (n > SCHED_MAX_NODES || p->nodes != n)
		return ofc_error_set(
		    err, OFC_E_INPUT,
		    "%u nodes: an explicit schedule has at most %u (program of %u)", n,
		    SCHED_MAX_NODES, p->nodes);
	if (sched_reduced_transfers(r) >= UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%llu transfers: too many for an explicit schedule",
				     (unsigned long long)sched_reduced_transfers(r));
	sched_init(s, p->collective, p->algorithm, n);
	snprintf(s->topology, sizeof(s->topology), "%s", p->topology);
	s->size_bytes = p->size_bytes;
	s->root = p->root;
	for (uint32_t t = 0; t < p->nsteps; t++) {
		size_t k = sched_step_size(p, t), count = 0;
		/* (an empty program has no array: no offset on NULL) */
		const struct xfer *in = k ? p->xfers + p->step_start[t] : NULL;

		for (size_t i = 0; i < k; i++)
			count += xfer_blocks(&in[i]);
		count *= order;
		if (!count) { /* an empty step (and no array to point into yet) */
			sched_step(s);
			continue;
		}
		struct xfer *out = sched_append_steps(s, 1, &count);

		for (uint32_t e = 0; e < order; e++) {
			uint32_t g = sched_group_element(&r->group, e);

			for (size_t i = 0; i < k; i++)
				for (uint32_t j = 0, nb = xfer_blocks(&in[i]); j < nb; j++)
					*out++ = sched_reduced_piece(r, &in[i], j, g);
		}
	}
	return 0;
}
