/* Networks built in code: model W (notes Sec. 6.3) from one server template
 * instantiated per server plus the rails, with its symmetry group written
 * analytically, and the toys of Ch. 2 (notes Sec. 6.4). */
#include "fluid/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const scenario_names[] = {
    [FLUID_ALL_LINKS] = "all-links",
    [FLUID_NO_NVLINK] = "no-nvlink",
    [FLUID_ONLY_NVLINK] = "only-nvlink",
};

const char *fluid_scenario_name(enum fluid_scenario s)
{
	return (unsigned)s < ARRAY_SIZE(scenario_names) ? scenario_names[s] : "unknown";
}

int fluid_scenario_parse(const char *name, enum fluid_scenario *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(scenario_names); i++)
		if (strcmp(name, scenario_names[i]) == 0) {
			*s = (enum fluid_scenario)i;
			return 0;
		}
	return -1;
}

/* Model W's figures (notes Sec. 6.3). */
#define NVLINK_BW 300.0
#define PCIE_BW	  32.0
#define NIC_BW	  25.0
#define GPUS	  8u
#define PCIES	  4u

/* Local vertex order of one server: gpu0..7, [nvswitch], [pcie0..3, mem],
 * nic0..7. Returns the local index of each part (UINT32_MAX: absent). */
struct wlayout {
	uint32_t per; /* vertices per server */
	uint32_t gpu, nvs, pcie, mem, nic;
};

static struct wlayout layout(enum fluid_scenario s)
{
	struct wlayout l = {0};
	uint32_t k = 0;

	l.gpu = k;
	k += GPUS;
	l.nvs = s == FLUID_NO_NVLINK ? UINT32_MAX : k++;
	if (s == FLUID_ONLY_NVLINK) {
		l.pcie = l.mem = UINT32_MAX;
	} else {
		l.pcie = k;
		k += PCIES;
		l.mem = k++;
	}
	l.nic = k;
	k += GPUS;
	l.per = k;
	return l;
}

/* The server template of a scenario; names live in `pool` (per vertex 16
 * bytes) so the template can point at them. */
static void server_template(enum fluid_scenario s, struct fluid_template *t,
			    struct fluid_tvertex *v, char (*pool)[16], struct fluid_tlink *lk)
{
	struct wlayout l = layout(s);
	uint32_t nl = 0;

	for (uint32_t i = 0; i < GPUS; i++) {
		snprintf(pool[l.gpu + i], 16, "gpu%u", i);
		v[l.gpu + i] = (struct fluid_tvertex){pool[l.gpu + i], FLUID_GPU};
		snprintf(pool[l.nic + i], 16, "nic%u", i);
		v[l.nic + i] = (struct fluid_tvertex){pool[l.nic + i], FLUID_SWITCH};
	}
	if (l.nvs != UINT32_MAX) {
		snprintf(pool[l.nvs], 16, "nvswitch");
		v[l.nvs] = (struct fluid_tvertex){pool[l.nvs], FLUID_SWITCH};
	}
	if (l.pcie != UINT32_MAX) {
		for (uint32_t p = 0; p < PCIES; p++) {
			snprintf(pool[l.pcie + p], 16, "pcie%u", p);
			v[l.pcie + p] = (struct fluid_tvertex){pool[l.pcie + p], FLUID_SWITCH};
		}
		snprintf(pool[l.mem], 16, "mem");
		v[l.mem] = (struct fluid_tvertex){pool[l.mem], FLUID_MEMORY};
	}
	/* Cost 1 on GPU-incident arcs (the thesis's rule) and, in the rails,
	 * on NIC <-> rail arcs (notes Sec. 6.3: needed for the multi-node
	 * objectives). */
	for (uint32_t i = 0; i < GPUS; i++) {
		if (l.nvs != UINT32_MAX)
			lk[nl++] = (struct fluid_tlink){pool[l.gpu + i], pool[l.nvs], NVLINK_BW, 1};
		if (l.pcie != UINT32_MAX)
			lk[nl++] = (struct fluid_tlink){pool[l.gpu + i], pool[l.pcie + i / 2],
							PCIE_BW, 1};
		else
			lk[nl++] = (struct fluid_tlink){pool[l.gpu + i], pool[l.nic + i], NIC_BW, 1};
	}
	if (l.pcie != UINT32_MAX) {
		for (uint32_t p = 0; p < PCIES; p++)
			lk[nl++] = (struct fluid_tlink){pool[l.pcie + p], pool[l.mem], PCIE_BW, 0};
		for (uint32_t i = 0; i < GPUS; i++)
			lk[nl++] = (struct fluid_tlink){pool[l.pcie + i / 2], pool[l.nic + i],
							NIC_BW, 0};
	}
	*t = (struct fluid_template){.name = "dgx-a100",
				     .verts = v,
				     .nverts = l.per,
				     .links = lk,
				     .nlinks = nl};
}

/* Where an element of Z_N x Z_4 x Z_2 (or Z_N x Z_8) takes GPU index i. */
static uint32_t wgpu(enum fluid_scenario s, uint32_t i, uint32_t b, uint32_t c)
{
	if (s == FLUID_ONLY_NVLINK)
		return (i + b) % GPUS;
	return 2 * ((i / 2 + b) % PCIES) + ((i & 1) ^ c);
}

static void modelw_group(const struct fluid_net *n, uint32_t servers, enum fluid_scenario s,
			 struct fluid_group *g)
{
	struct wlayout l = layout(s);
	uint32_t nb = s == FLUID_ONLY_NVLINK ? GPUS : PCIES, nc = s == FLUID_ONLY_NVLINK ? 1 : 2;
	uint32_t order = servers * nb * nc, nv = n->nverts, rails = servers * l.per;
	uint32_t *vm = xmalloc((size_t)order * nv * sizeof(uint32_t));
	uint32_t i = 0;

	for (uint32_t a = 0; a < servers; a++)
		for (uint32_t b = 0; b < nb; b++)
			for (uint32_t c = 0; c < nc; c++, i++) {
				uint32_t *h = vm + (size_t)i * nv;

				for (uint32_t sv = 0; sv < servers; sv++) {
					uint32_t from = sv * l.per, to = ((sv + a) % servers) * l.per;

					for (uint32_t k = 0; k < GPUS; k++) {
						uint32_t k2 = wgpu(s, k, b, c);

						h[from + l.gpu + k] = to + l.gpu + k2;
						h[from + l.nic + k] = to + l.nic + k2;
					}
					if (l.nvs != UINT32_MAX)
						h[from + l.nvs] = to + l.nvs;
					if (l.pcie != UINT32_MAX) {
						for (uint32_t p = 0; p < PCIES; p++)
							h[from + l.pcie + p] =
							    to + l.pcie + (p + b) % PCIES;
						h[from + l.mem] = to + l.mem;
					}
				}
				for (uint32_t k = 0; k < GPUS; k++)
					h[rails + k] = rails + wgpu(s, k, b, c);
			}
	group_from_vertex_maps(n, order, vm, g);
}

int fluid_build_modelw(struct fluid_net *n, uint32_t servers, enum fluid_scenario s,
		       struct fluid_group *grp, struct ofc_error *err)
{
	struct fluid_tvertex v[32];
	char pool[32][16];
	struct fluid_tlink lk[64];
	struct fluid_template t;
	char name[32];

	if (servers < 1 || servers > 1024)
		return ofc_error_set(err, OFC_E_INPUT, "model W needs 1..1024 servers, not %u",
				     servers);
	if ((unsigned)s > FLUID_ONLY_NVLINK)
		return ofc_error_set(err, OFC_E_INPUT, "unknown scenario");
	fluid_net_init(n);
	server_template(s, &t, v, pool, lk);
	for (uint32_t i = 0; i < servers; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		if (fluid_instantiate(n, &t, name, err) < 0)
			goto fail;
	}
	for (uint32_t l = 0; l < GPUS; l++) {
		snprintf(name, sizeof(name), "rail%u", l);
		if (fluid_add_vertex(n, name, FLUID_SWITCH, err) < 0)
			goto fail;
	}
	for (uint32_t i = 0; i < servers; i++)
		for (uint32_t l = 0; l < GPUS; l++) {
			char nic[32], rail[32];

			snprintf(nic, sizeof(nic), "s%u/nic%u", i, l);
			snprintf(rail, sizeof(rail), "rail%u", l);
			if (fluid_connect(n, nic, rail, NIC_BW, 1, err) < 0)
				goto fail;
		}
	if (grp)
		modelw_group(n, servers, s, grp);
	return 0;
fail:
	fluid_net_free(n);
	return -1;
}

/* ---- toys ---------------------------------------------------------------------- */

static int terminals(struct fluid_net *n, uint32_t k, struct ofc_error *err)
{
	char name[32];

	fluid_net_init(n);
	for (uint32_t i = 0; i < k; i++) {
		snprintf(name, sizeof(name), "g%u", i);
		if (fluid_add_vertex(n, name, FLUID_GPU, err) < 0)
			return -1;
	}
	return 0;
}

int fluid_build_path(struct fluid_net *n, uint32_t len, double bw, struct ofc_error *err)
{
	if (len < 2)
		return ofc_error_set(err, OFC_E_INPUT, "a path needs 2 vertices");
	if (terminals(n, len, err) < 0)
		goto fail;
	for (uint32_t i = 0; i + 1 < len; i++)
		if (fluid_add_arc(n, i, i + 1, bw, 1, err) < 0)
			goto fail;
	return 0;
fail:
	fluid_net_free(n);
	return -1;
}

int fluid_build_ring(struct fluid_net *n, uint32_t len, bool bidir, double bw,
		     struct fluid_group *grp, struct ofc_error *err)
{
	if (len < 3)
		return ofc_error_set(err, OFC_E_INPUT, "a ring needs 3 vertices");
	if (terminals(n, len, err) < 0)
		goto fail;
	for (uint32_t i = 0; i < len; i++)
		if (fluid_add_arc(n, i, (i + 1) % len, bw, 1, err) < 0 ||
		    (bidir && fluid_add_arc(n, (i + 1) % len, i, bw, 1, err) < 0))
			goto fail;
	if (grp) {
		/* Rotations v -> v + r, and with both directions the reflections
		 * v -> r - v. */
		uint32_t order = bidir ? 2 * len : len;
		uint32_t *vm = xmalloc((size_t)order * len * sizeof(uint32_t));

		for (uint32_t r = 0; r < len; r++)
			for (uint32_t v = 0; v < len; v++) {
				vm[(size_t)r * len + v] = (v + r) % len;
				if (bidir)
					vm[(size_t)(len + r) * len + v] = (r + len - v) % len;
			}
		group_from_vertex_maps(n, order, vm, grp);
	}
	return 0;
fail:
	fluid_net_free(n);
	return -1;
}

int fluid_build_star(struct fluid_net *n, uint32_t leaves, double bw, struct ofc_error *err)
{
	int sw;

	if (leaves < 2)
		return ofc_error_set(err, OFC_E_INPUT, "a star needs 2 leaves");
	if (terminals(n, leaves, err) < 0 ||
	    (sw = fluid_add_vertex(n, "switch", FLUID_SWITCH, err)) < 0)
		goto fail;
	for (uint32_t i = 0; i < leaves; i++)
		if (fluid_add_link(n, i, (uint32_t)sw, bw, 1, err) < 0)
			goto fail;
	return 0;
fail:
	fluid_net_free(n);
	return -1;
}

int fluid_build_shared_memory(struct fluid_net *n, uint32_t gpus, double link_bw, double mem_bw,
			      bool mem_copies, struct ofc_error *err)
{
	int mem;

	if (gpus < 2)
		return ofc_error_set(err, OFC_E_INPUT, "shared memory needs 2 GPUs");
	if (terminals(n, gpus, err) < 0 ||
	    (mem = fluid_add_vertex(n, "mem", mem_copies ? FLUID_MEMORY : FLUID_SWITCH, err)) < 0)
		goto fail;
	for (uint32_t i = 0; i < gpus; i++)
		if (fluid_add_link(n, i, (uint32_t)mem, link_bw, 1, err) < 0)
			goto fail;
	if (!isinf(mem_bw)) {
		/* The memory's bandwidth bounds reads and writes together (notes
		 * Sec. 6.4, Fig. 2.3-2.4: a broadcast touches memory 1 + (n-1)
		 * times). */
		uint32_t *arcs = xmalloc(n->narcs * sizeof(uint32_t));

		for (uint32_t a = 0; a < n->narcs; a++)
			arcs[a] = a;
		int rc = fluid_add_set(n, "mem", mem_bw, arcs, n->narcs, err);

		free(arcs);
		if (rc < 0)
			goto fail;
	}
	return 0;
fail:
	fluid_net_free(n);
	return -1;
}
