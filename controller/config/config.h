/* controller/config — YAML fabric configs in, a validated struct fabric out.
 *
 * Data flow: config_load() reads YAML into a struct fabric (syntax, types,
 * units, unknown keys: every error names FILE:LINE:COL); fabric_validate()
 * then checks the model as a whole (names, references, ranges, whether the
 * wiring can realise the topology) and resolves it: hosts are numbered,
 * wiring is explicit, the target topology and its circuits are computed.
 */
#ifndef OFC_CONTROLLER_CONFIG_H
#define OFC_CONTROLLER_CONFIG_H

#include "controller/fabric/fabric.h"

#define CONFIG_MAX_BYTES (8u << 20) /* a config larger than this is refused */
#define CONFIG_MAX_DEPTH 64	    /* YAML nesting */
#define CONFIG_MAX_NODES 2000000u   /* YAML nodes visited, aliases expanded */

/* Parse YAML text (named `file` in messages; dir for relative paths). */
int config_parse(const char *file, const char *text, size_t len, struct fabric **out,
		 struct ofc_error *err);
/* Read and parse a file (size-limited). */
int config_load(const char *path, struct fabric **out, struct ofc_error *err);
/* Check the model as a whole and resolve references; see the file comment.
 * `topology: auto` is asked of f->picker (controller/pick/pick.h), which
 * the caller sets and validation lets go of. */
int fabric_validate(struct fabric *f, struct ofc_error *err);
/* f->degraded again after f->graph and f->ports were renumbered (a
 * relabelling): the failed ports are physical, so they now cut the arcs
 * their new port permutations give them; a failed link the renumbered
 * topology no longer has is out of effect. Errors as validation's (the
 * survivors must still reach one another). */
int fabric_failures_renumbered(struct fabric *f, struct ofc_error *err);

/* A workload file (`--workload FILE`): a YAML mapping with the
 * keys of a config's `workload` section (docs/config.md), errors at
 * FILE:LINE:COL; matrices it names resolve in its directory. Checked
 * against a fabric by workload_validate. */
int config_parse_workload(const char *file, const char *text, size_t len, struct workload *w,
			  struct ofc_error *err);
int config_load_workload(const char *path, struct workload *w, struct ofc_error *err);
/* The workload against the fabric's hosts (fabric_validate does this for a
 * config's own section): names, groups (disjoint, one size per kind, the
 * degrees multiplying to the hosts), phases (a collective, its kind, its
 * size; or a traffic matrix of N x N), and the matrices read (relative
 * paths in w->dir). Resolves w->kinds and each phase's kind and matrix. */
int workload_validate(const struct fabric *f, struct workload *w, struct ofc_error *err);

/* config_load + fabric_validate, `topology: auto` picked in this process
 * (pick_here): for programs that link the finder (open.c; ofcd does not,
 * check-engines.py says so). */
int fabric_open(const char *path, struct fabric **out, struct ofc_error *err);

#endif
