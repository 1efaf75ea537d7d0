/* Private to the YAML loader of controller/config/ (load.c, walk.c,
 * keys_*.c): a loader's state, a table of keys, the walk and the generic
 * handlers the tables name, and the tables one file takes from another.
 *
 *   load.c           reading: size limit, pre-pass, document, entry points
 *   walk.c           the table walk and the generic handlers
 *   keys_fabric.c    the fabric's sections and the top-level table
 *   keys_servers.c   server fabrics
 *   keys_workload.c  workloads
 */
#ifndef OFC_CONTROLLER_CONFIG_LOADER_H
#define OFC_CONTROLLER_CONFIG_LOADER_H

#include "controller/config/config.h"

#include <stddef.h>
#include <yaml.h>

struct loader {
	const char *file;
	const char *text;
	size_t len;
	yaml_document_t doc;
	struct ofc_error *err;
	struct fabric *fab;
	uint64_t visits;
	int depth;
};

struct key;
typedef int (*handler_fn)(struct loader *, yaml_node_t *, const struct key *, void *base);

struct choice {
	const char *name;
	int value;
};

struct key {
	const char *name;
	handler_fn fn;
	size_t off;	       /* where the value goes in base */
	const struct key *sub; /* nested mapping table */
	size_t size;	       /* sequences of mappings: element size */
	size_t count_off;      /* sequences: offset of the uint32_t count */
	size_t loc_off;	       /* offset + 1 of a struct src_loc for the value; 0: none */
	size_t set_off;	       /* offset + 1 of a bool set when the key is present */
	double min, max;       /* numeric range (min == max == 0: none) */
	bool required;
	const struct choice *choices;
	void (*init)(void *elem); /* defaults for a new element */
	const char *why;	  /* message for keys that are refused */
};

#define OFF(type, field) offsetof(type, field)
#define LOC(type, field) (offsetof(type, field) + 1)

/* ---- walk.c ---- */
int cfg_node_error(struct loader *L, const yaml_node_t *n, const char *fmt, ...) OFC_PRINTF(3, 4);
struct src_loc cfg_loc_of(const yaml_node_t *n);
void *cfg_field(void *base, size_t off);
void cfg_mark(const struct key *k, void *base, const yaml_node_t *n);
const char *cfg_type_name(const yaml_node_t *n);
int cfg_scalar(struct loader *L, yaml_node_t *n, const struct key *k, const char **out);
int cfg_str(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
bool cfg_valid_name(const char *s);
int cfg_check_name(struct loader *L, yaml_node_t *n, const char *what, const char *s);
int cfg_name(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_u32(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_size(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_rate(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_duration(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_scale(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_choice(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_refuse(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_enter(struct loader *L, yaml_node_t *n);
int cfg_mapping(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_list(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_name_list(struct loader *L, yaml_node_t *n, const char *what, char ***names,
		  struct src_loc **locs, uint32_t *count);
int cfg_number(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_bool(struct loader *L, yaml_node_t *n, const struct key *k, void *base);
int cfg_process_mapping(struct loader *L, yaml_node_t *n, const struct key *table, void *base,
			const char *what);

/* ---- the tables ---- */
extern const struct key cfg_fabric_keys[];
extern const struct key cfg_sv_vertex_keys[];
extern const struct key cfg_sv_link_keys[];
extern const struct key cfg_sv_set_keys[];
extern const struct key cfg_server_keys[];
extern const struct key cfg_workload_keys[];
int cfg_workload(struct loader *L, yaml_node_t *n, const struct key *k, void *base);

#endif
