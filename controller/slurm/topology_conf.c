/* topology.conf for Slurm's topology/tree plugin from a fabric.
 * Slurm reads a tree of "switches" and keeps a job within as few leaves as
 * it can (and within N of them with sbatch --switches=N). For an optical
 * fabric the question is which hosts a partition's circuits can join:
 * hosts cabled to the same set of circuit switches (an island). Each island
 * is a leaf, or, with a group size, a switch over leaves of that many
 * hosts (so a job of a group's size lands where a partition of it is
 * planned); a top switch joins islands so a job needing no circuits may
 * still span them. */
#include "controller/slurm/slurm.h"

#include <stdlib.h>
#include <string.h>

/* Host h's switches as a sorted, comma-joined list of indices. */
static char *switch_set(const struct fabric *f, uint32_t h)
{
	uint8_t *on = xcalloc((size_t)f->nswitches + 1, 1);
	struct strbuf sb = STRBUF_INIT;

	for (uint32_t i = 0; i < f->nwiring; i++)
		if (f->wiring[i].host == h && f->wiring[i].sw < f->nswitches)
			on[f->wiring[i].sw] = 1;
	for (uint32_t s = 0; s < f->nswitches; s++)
		if (on[s])
			sb_printf(&sb, "%s%u", sb.len ? "," : "", s);
	free(on);
	return sb.buf ? sb_detach(&sb) : xstrdup("");
}

static void island_name(const struct fabric *f, const char *set, struct strbuf *out)
{
	const char *p = set;

	while (*p) {
		char *end;
		unsigned long s = strtoul(p, &end, 10);

		sb_printf(out, "%s%s", p == set ? "" : "_", f->switches[s].name);
		p = *end ? end + 1 : end;
	}
}

int slurm_topology_conf(const struct fabric *f, const struct slurm_map *m, uint32_t group,
			struct strbuf *out, struct ofc_error *err)
{
	char **set = xcalloc((size_t)f->nhosts + 1, sizeof(char *));
	uint8_t *done = xcalloc((size_t)f->nhosts + 1, 1);
	struct strbuf tops = STRBUF_INIT;
	uint32_t islands = 0, mapped = 0;

	for (uint32_t h = 0; h < f->nhosts; h++)
		set[h] = switch_set(f, h);
	sb_printf(out,
		  "# topology.conf for TopologyPlugin=topology/tree, written by 'ofc slurm "
		  "topology' from fabric %s:\n# a leaf per island of hosts cabled to the same "
		  "circuit switches%s.\n",
		  f->name, group ? " and per group of hosts a partition can take" : "");
	for (uint32_t h = 0; h < f->nhosts; h++) {
		if (done[h] || !set[h][0] || !slurm_map_node(m, f->hosts[h].name))
			continue;
		struct strbuf name = STRBUF_INIT, nodes = STRBUF_INIT, leaves = STRBUF_INIT;
		uint32_t in = 0, g = 0;

		island_name(f, set[h], &name);
		for (uint32_t k = h; k < f->nhosts; k++) {
			const char *node = slurm_map_node(m, f->hosts[k].name);

			if (done[k] || !node || strcmp(set[k], set[h]) != 0)
				continue;
			done[k] = 1;
			sb_printf(&nodes, "%s%s", nodes.len ? "," : "", node);
			in++;
			mapped++;
			if (group && in % group == 0) {
				sb_printf(out, "SwitchName=%s-g%u Nodes=%s\n", name.buf, g, nodes.buf);
				sb_printf(&leaves, "%s%s-g%u", leaves.len ? "," : "", name.buf, g++);
				sb_reset(&nodes);
			}
		}
		if (group && nodes.len) {
			sb_printf(out, "SwitchName=%s-g%u Nodes=%s\n", name.buf, g, nodes.buf);
			sb_printf(&leaves, "%s%s-g%u", leaves.len ? "," : "", name.buf, g++);
		}
		if (group)
			sb_printf(out, "SwitchName=%s Switches=%s\n", name.buf, leaves.buf);
		else
			sb_printf(out, "SwitchName=%s Nodes=%s\n", name.buf, nodes.buf);
		sb_printf(&tops, "%s%s", tops.len ? "," : "", name.buf);
		islands++;
		sb_free(&name);
		sb_free(&nodes);
		sb_free(&leaves);
	}
	if (islands > 1)
		sb_printf(out, "SwitchName=ofc-top Switches=%s\n", tops.buf);
	sb_free(&tops);
	for (uint32_t h = 0; h < f->nhosts; h++)
		free(set[h]);
	free(set);
	free(done);
	if (!mapped)
		return ofc_error_set(err, OFC_E_INPUT,
				     "fabric %s: no host cabled to a switch has a Slurm node (check "
				     "the map)",
				     f->name);
	return 0;
}
