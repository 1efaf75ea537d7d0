/* controller/slurm: what ofc needs to know of Slurm (docs/slurm.md):
 * its hostlist expressions, the job's request in its comment, the map from
 * Slurm node names to ofc hosts, PrologEpilogTimeout from slurm.conf, and
 * topology.conf for TopologyPlugin=topology/tree. No I/O but the map's
 * and slurm.conf's files; `ofc slurm` (controller/cli/cmd_slurm.c) talks to
 * ofcd and to scontrol. */
#ifndef OFC_CONTROLLER_SLURM_H
#define OFC_CONTROLLER_SLURM_H

#include <stdbool.h>
#include <stdint.h>

#include "controller/fabric/fabric.h"
#include "topo/topo.h"
#include "util/util.h"

/* At most this many names from one hostlist expression (Slurm's own
 * MAX_SLURM_HOSTS-like bound; a job larger than the fabric fails later). */
#define SLURM_MAX_HOSTS 65536
#define SLURM_NAME_MAX	63

/* Expand a Slurm hostlist ("n[0-3,7],gpu[01-02]x,login") into names, in
 * Slurm's order: comma-separated terms outside brackets; in a term each
 * bracket holds comma-separated numbers or lo-hi ranges, zero-padded to the
 * width of lo when lo has a leading zero (as Slurm's hostrange does), and
 * several brackets in a term multiply (a[1-2]b[1-2]: a1b1 a1b2 a2b1 a2b2).
 * *out is a NULL-terminated array the caller frees with strv_free. */
int slurm_hostlist_expand(const char *expr, char ***out, uint32_t *n, struct ofc_error *err);
void slurm_strv_free(char **v, uint32_t n);

/* What a job asks of ofc, from its comment (sbatch --comment): tokens
 * separated by blanks or ';', those starting "ofc:" are ofc's:
 * "ofc:topology=SPEC", "ofc:relabel=yes|no". Other words are the user's.
 * An unknown ofc: key or an empty spec is an error. */
struct slurm_request {
	bool asked; /* an ofc:topology= was given */
	char topology[TOPO_MAX_SPEC + 1];
	bool relabel; /* default true */
};
int slurm_request_parse(const char *comment, struct slurm_request *r, struct ofc_error *err);
/* A default topology template for jobs that ask nothing: "{n}" stands for
 * the job's host count ("biring:{n}"). Writes the spec; error when too long. */
int slurm_default_spec(const char *tmpl, uint32_t nhosts, char *out, size_t len,
		       struct ofc_error *err);

/* Slurm node name -> ofc host. Empty: every node is the host of its name. */
struct slurm_map {
	char **node, **host;
	uint32_t n;
};
/* Lines "NODE HOST" ('#' starts a comment; at most 1 MiB); a node or a
 * host named twice is an error at its line. */
int slurm_map_parse(const char *path, const char *text, struct slurm_map *m,
		    struct ofc_error *err);
int slurm_map_load(const char *path, struct slurm_map *m, struct ofc_error *err);
void slurm_map_free(struct slurm_map *m);
/* The host of node (node itself when the map is empty); NULL: not mapped. */
const char *slurm_map_host(const struct slurm_map *m, const char *node);
/* The node of host (host itself when the map is empty); NULL: none. */
const char *slurm_map_node(const struct slurm_map *m, const char *host);

/* PrologEpilogTimeout from slurm.conf's text, seconds (0: not set, Slurm
 * then waits forever). Keys are case-insensitive, several KEY=VALUE a line. */
uint32_t slurm_conf_timeout(const char *text);

/* topology.conf for topology/tree: hosts cabled to the same set of
 * switches form an island (a partition's circuits can join them); each
 * island is a leaf switch, or with group > 0 several leaves of `group`
 * hosts each under the island's switch; a top switch joins the islands
 * when there are several. Hosts no node maps to are left out. */
int slurm_topology_conf(const struct fabric *f, const struct slurm_map *m, uint32_t group,
			struct strbuf *out, struct ofc_error *err);

#endif
