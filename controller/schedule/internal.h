/* Private to controller/schedule/: the two families of the pipeline. */
#ifndef OFC_CONTROLLER_SCHEDULE_INTERNAL_H
#define OFC_CONTROLLER_SCHEDULE_INTERNAL_H

#include "alltoall/alltoall.h"
#include "baselines/baselines.h"
#include "controller/schedule/schedule.h"

/* Each fills r (outcomes, main, figures) for the algorithm named (never
 * NULL); errors as schedule_compute's. */
int schedule_direct(struct schedule_result *r, const struct schedule_query *q, const char *algo,
		    struct ofc_error *err); /* dispatch.c */
int schedule_ring(struct schedule_result *r, const struct schedule_query *q, const char *algo,
		  struct ofc_error *err); /* ring.c */
/* ---- the engines (engines.c) ------------------------------------------------
 * One row per algorithm, as drivers/ has struct driver_ops: everything that
 * names algorithms reads this table. */
#define ENGINE_C(c) (1u << (c)) /* a collective in a mask */
enum engine_flag {
	ENGINE_COMPARE = 1,   /* a table of outcomes side by side, not one engine */
	ENGINE_EVERY = 2,     /* ... of every row that names the collective in in_all */
	ENGINE_CERTIFY = 4,   /* ... with the fluid bound beside them (certify.c) */
	ENGINE_CLI_ONLY = 8,  /* ofc schedule's alone: not a config's nor GetSchedule's */
	ENGINE_VARIANT = 16,  /* --variant goes with it */
	ENGINE_LOWERING = 32, /* --lowering goes with it (alltoall) */
	/* Swing's: each of its 2D collectives carries 1/2D of every block,
	 * its reduced program is 2^D nodes' (its own note says so), and its
	 * latency-optimal one is priced before it is built (engine_torus.c) */
	ENGINE_SPLIT = 64,
	ENGINE_BINARY = 128, /* reduced by itself only on a binary group (XOR on the ids) */
	/* column generation: --time-limit stops it, certified within a gap,
	 * not the request's deadline */
	ENGINE_COLGEN = 256,
	/* a table of every row's torus runs (swing-all), the variant rows'
	 * first */
	ENGINE_TORUS_ALL = 512
};
#define ENGINE_PORTS_DEGREE (~0u) /* torus_ports: 2 per dimension, every port */
/* The direct-connect builds a row names, by name rather than by address,
 * so that the table (engines.c) is data alone: a lookup of names and
 * defaults links no engine (ofcd's names checks read it). dispatch.c maps
 * each to its function. */
enum engine_build {
	ENGINE_BUILD_NONE = 0,
	ENGINE_BUILD_BFB,
	ENGINE_BUILD_BFB_LP,
	ENGINE_BUILD_EXPANSION,
	ENGINE_BUILD_BASELINE,
	ENGINE_BUILD_TORUS,
	ENGINE_BUILD_TORUS_VARIANTS,
	ENGINE_BUILD_TORUS_ROUTED,
	ENGINE_BUILD_ALLTOALL,
};

struct engine_ops {
	const char *name;     /* as --algo and a config's `algorithm:` give it */
	unsigned fabrics;     /* the ENGINE_DIRECT, _RING, _SERVERS it runs on */
	unsigned serves;      /* the collectives it schedules (ENGINE_C) */
	unsigned in_all;      /* those for which 'all' compares it */
	unsigned reduced;     /* those for which --reduced goes with it */
	unsigned defaults;    /* those it runs for on its fabric when a request names none */
	unsigned flags;	      /* enum engine_flag */
	enum optree_algo wdm; /* a WDM ring's: which optree/ builds (ring.c) */
	/* A direct-connect baseline's: the baselines/ schedule it builds
	 * (bucket: torus-rings'). */
	enum baseline_algo baseline;
	/* A torus allreduce's (ENGINE_VARIANT): Swing or recursive doubling. */
	enum torus_algo torus_algo;
	/* An all-to-all's: the MCF or a baseline of alltoall/. */
	enum a2a_algo a2a;
	/* Priced as routed on a torus beside Swing (engine_torus.c): the
	 * ports of a node its schedule uses, one ring 1, both ways 2, or
	 * ENGINE_PORTS_DEGREE. */
	unsigned torus_ports;
	/* swing-all's label of an ENGINE_VARIANT row before "/B" or "/L"
	 * (NULL: its name). */
	const char *label;
	/* Adds its outcome, or its rows (r->compare: as one row of a
	 * comparison), to a direct-connect result set up for q (dispatch.c:
	 * engine_build). ENGINE_BUILD_NONE: the family builds it (ring.c from
	 * wdm; fluid.c), or it is ENGINE_EVERY. */
	enum engine_build build;
	/* Adds its rows to an ENGINE_TORUS_ALL table (ENGINE_BUILD_NONE:
	 * none): both variants, or priced as routed on the torus. */
	enum engine_build torus;
};
/* Runs build b (not ENGINE_BUILD_NONE) of row e (dispatch.c). */
void engine_build(enum engine_build b, struct schedule_result *r, const struct schedule_query *q,
		  const struct engine_ops *e);
/* The config's entry naming q's algorithm, when q schedules the fabric's
 * own ring or topology (a query by spec, graph or ring: NULL; lookup.c). */
const struct collective *engine_config_algorithm(const struct schedule_query *q);
/* The i-th row, NULL past the end. */
const struct engine_ops *engine_at(unsigned i);
/* The row named name among the fabrics (ENGINE_* or'ed), or NULL. */
const struct engine_ops *engine_find(const char *name, unsigned fabrics);
/* The names of the rows of those fabrics that serve one of colls and have
 * every one of flags, in the table's order: "a, b{last}c". */
void engine_names(struct strbuf *sb, unsigned fabrics, unsigned colls, unsigned flags,
		  const char *last);
/* "--reduced goes with --algo ..."'s list: the direct-connect rows by the
 * collectives --reduced goes with them for. */
void engine_reduced_names(struct strbuf *sb);

/* What BFB's explicit schedule holds on r->g, in bytes: refused before it
 * is built when over the memory limit (engine_bfb.c). The direct-connect
 * builds the rows name (engine_build; engine_bfb.c, engine_torus.c,
 * engine_alltoall.c). */
uint64_t direct_bfb_memory(const struct schedule_result *r, const struct schedule_query *q);
void direct_build_bfb(struct schedule_result *r, const struct schedule_query *q,
		      const struct engine_ops *e);
void direct_build_bfb_lp(struct schedule_result *r, const struct schedule_query *q,
			 const struct engine_ops *e);
void direct_build_expansion(struct schedule_result *r, const struct schedule_query *q,
			    const struct engine_ops *e);
void direct_build_baseline(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e);
void direct_build_torus(struct schedule_result *r, const struct schedule_query *q,
			const struct engine_ops *e);
/* Row e's two variants, labelled LABEL/B and LABEL/L; row e priced as
 * routed on the torus (engine_torus.c). */
void direct_torus_variants(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e);
void direct_torus_routed(struct schedule_result *r, const struct schedule_query *q,
			 const struct engine_ops *e);
void direct_build_alltoall(struct schedule_result *r, const struct schedule_query *q,
			   const struct engine_ops *e);
/* ---- what every direct-connect outcome goes through (outcome.c) ----------------
 * Each returns true when o was refused (o->why says why) and leaves o as it
 * was otherwise. */
/* A reduced program of xfers transfers on reps representatives (blocks cut
 * into pieces; 0: spans checked by their sums), or a reduced baseline's,
 * or an explicit schedule of xfers transfers, against the memory limit. */
bool outcome_reduced_over_limit(const struct schedule_result *r, const struct schedule_query *q,
				struct schedule_outcome *o, const char *algo, double xfers,
				uint32_t reps, uint32_t pieces);
bool outcome_reduced_over_memory(const struct schedule_result *r, const struct schedule_query *q,
				 struct schedule_outcome *o, const char *algo,
				 enum baseline_algo a);
bool outcome_over_memory(const struct schedule_result *r, const struct schedule_query *q,
			 struct schedule_outcome *o, const char *what, double xfers,
			 uint32_t pieces);
/* Past the request's deadline in phase: o dropped, "time limit T reached". */
bool outcome_out_of_time(const struct schedule_result *r, struct schedule_outcome *o,
			 const char *phase);
/* A phase of o begins: the progress line says so. */
void outcome_phase(const struct schedule_result *r, const struct schedule_outcome *o,
		   const char *what);
/* An all-to-all priced host by host (r->host_betas): per step against
 * link[t], or whole (cut-through). */
double outcome_host_priced(const struct schedule_result *r, const struct schedule *s,
			   const double *link, bool whole);
/* What a reduction's check may keep (verify_opts.reduce_bytes): what the
 * request has left of r->memory_limit now, at least 1. */
uint64_t outcome_verify_bytes(const struct schedule_result *r);
/* o's schedule through the verifier (a reduced one by its symmetry). */
void outcome_verify(struct schedule_outcome *o, const struct verify_opts *vo,
		    struct verify_report *rep);
/* A built o verified on r's graph (NIC ports on a fabric) and priced. */
void outcome_finish(struct schedule_result *r, struct schedule_outcome *o);
/* The alphas of a routed schedule of `steps` start-ups whose longest
 * routes cross `hops` circuits in all (summed over its steps): where hosts
 * forward (the default: relayed bytes cross the host, which sends them
 * again), every forward is a start-up of its own, so a transfer over k
 * circuits costs k alphas, what k hop-by-hop steps cost, and the degraded
 * graph's step bound (its diameter in circuits) holds for it; where NICs
 * forward cut-through, one a step. */
double routed_alphas(const struct schedule_result *r, double steps, double hops);
void outcome_not_applies(struct schedule_outcome *o, const struct ofc_error *err);
/* Why r->g cannot be symmetry-reduced, or NULL (then *G is its group). */
const char *outcome_not_reducible(const struct schedule_result *r, struct sched_group *G,
				  struct ofc_error *err);
/* r->note: algo above limit nodes came symmetry-reduced by itself. */
void outcome_note_reduced_above(struct schedule_result *r, uint32_t limit, const char *algo,
				const struct sched_group *G);
/* Keep o's figures, drop its schedule. */
void outcome_drop(struct schedule_outcome *o);
/* r's next outcome (a comparison drops the last row's schedule unless it
 * is the one kept). */
struct schedule_outcome *outcome_next(struct schedule_result *r);
/* Baseline a's explicit schedule into o (refusals name it algo): false
 * when it does not apply, is refused or is out of time (engine_bfb.c). */
bool direct_explicit_baseline(struct schedule_result *r, const struct schedule_query *q,
			      struct schedule_outcome *o, const char *algo, enum baseline_algo a);

/* The request's set-up (direct.c: degree, size, cost, bounds, rates, host
 * limits, the fabric view), and a comparison's end, one schedule kept
 * (outcome.c). */
int direct_setup(struct schedule_result *r, const struct schedule_query *q, struct ofc_error *err);
/* The degraded graph's bound (bound_beside.c): deferred by direct_setup,
 * started beside a patch's generation, waited for (computed there if it
 * never started) by whatever reads r->degraded, r->have_degraded,
 * r->degraded_us or r->lb_us first. */
void bound_beside_defer(struct schedule_result *r, enum sched_collective c);
void bound_beside_start(struct schedule_result *r);
void bound_beside_wait(struct schedule_result *r);
void direct_keep_first(struct schedule_result *r);

/* --algo all: the fluid bound on r->g beside every outcome (certify.c),
 * in about as many seconds as the engines spent (at least 0.25 s, at
 * most 5 s). */
void direct_certify(struct schedule_result *r, const struct schedule_query *q, double spent);
/* The same for a WDM ring's comparison: LP 4.2 on the ring of F x W x
 * B_lambda per segment and direction (bandwidth only: retuning and O/E/O
 * come on top), the bound for any hop count. */
void ring_certify(struct schedule_result *r, const struct schedule_query *q, double spent);

/* OpTree's model of a config's ring for collective c of size-byte blocks
 * (0: the config's first collective of that kind, else its first
 * allgather's, else 4 MiB); a config without
 * mrrs_per_interface has one MRR per wavelength (controller/schedule/ring.c). */
struct optree_ring ring_optree_model(const struct fabric *f, const struct ring *ring,
				     enum sched_collective c, uint64_t size);

/* The fabric view (fabric_view.c). */
/* false (and an empty view) when the fabric has no wiring for g's nodes. */
bool fabric_view_init(const struct fabric *f, const struct graph *g, struct fabric_view *v);
void fabric_view_free(struct fabric_view *v);
/* Transfer lanes from positions among g's arcs to NIC ports. */
void fabric_view_to_nic(const struct fabric_view *v, const struct graph *g, struct schedule *s);
/* The links a schedule on NIC ports uses, in (host, port) order: the count,
 * with *links allocated (free it). */
uint32_t fabric_view_links(const struct fabric_view *v, const struct fabric *f,
			   const struct schedule *s, struct schedule_link **links);
void schedule_outcome_free(struct schedule_outcome *o);

#endif
