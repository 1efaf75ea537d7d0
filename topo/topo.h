/* topo — directed multigraphs for direct-connect fabrics: topology families
 * and expansions built from a spec string, distances and diameters, and the
 * decomposition of a d-regular digraph into d port permutations (what an
 * optical circuit switch or patch panel realises).
 *
 * Graphs are stored as CSR arrays of uint32_t: no per-arc allocation, and a
 * million-arc graph is 4 MiB. Multi-arcs and self-loops are allowed: the
 * generalized Kautz and de Bruijn families have self-loops, tori with a
 * dimension of 2 have parallel arcs.
 */
#ifndef OFC_TOPO_H
#define OFC_TOPO_H

#include "util/util.h"

/* Limits that keep a spec from asking for more than the machine has. */
#define TOPO_MAX_NODES (1u << 22)
#define TOPO_MAX_ARCS  (1u << 25)
#define TOPO_MAX_SPEC  1024
/* A topology given by its port permutations ("ports:N:...", below) is as
 * long as its links need: 1,024 hosts of 4 ports are 8,206 characters. It
 * alone may be longer than TOPO_MAX_SPEC, up to this. */
#define TOPO_MAX_PORTS_SPEC (1u << 20)
#define TOPO_UNREACHABLE    UINT16_MAX
/* Above this many nodes the diameter of a graph that is not vertex-transitive
 * (n BFS runs) is not computed: it would take minutes. */
#define TOPO_MAX_APSP_NODES (1u << 18)

struct graph {
	uint32_t n;		/* nodes 0 .. n-1 */
	uint32_t m;		/* arcs, counting each parallel arc and self-loop */
	uint32_t *off;		/* n + 1 offsets into adj */
	uint32_t *adj;		/* heads, grouped by tail in the family's port order */
	char *spec;		/* canonical spec, owned */
	bool vertex_transitive; /* every node looks the same: one BFS gives the diameter */
};

static inline uint32_t graph_outdeg(const struct graph *g, uint32_t u)
{
	return g->off[u + 1] - g->off[u];
}

static inline const uint32_t *graph_out(const struct graph *g, uint32_t u)
{
	return g->adj + g->off[u];
}

/* Build the graph a spec names: a family ("torus:8x8", "genkautz:1024,4", ...)
 * or an expansion of one ("line^2(circulant:16:3,4)", "product(ring:4,ring:8)").
 * On error, err->col is the 1-based column in spec where the problem is.
 * The grammar and every family are documented in docs/topologies.md. */
int topo_build(const char *spec, struct graph **out, struct ofc_error *err);
void graph_free(struct graph *g);

/* Where `edges:FILE` may be read from. topo_build reads any file its
 * caller can, as a command run by its user should. A daemon builds what a
 * client sent with topo_build_in and a policy: dirfd open on a directory
 * its operator named (dir, its absolute name, for messages and canonical
 * specs), or -1 for no file at all. A relative FILE then resolves in dir,
 * an absolute one must lie beneath it; the open cannot leave it (openat2
 * RESOLVE_BENEATH: no "..", no symbolic link out, no /proc magic link),
 * "-" is a file named "-", and what was opened must be a regular file. The
 * canonical spec names the file by its absolute path under dir, so the
 * graph can be built again. Such files are read quietly: an error in one
 * gives FILE:LINE:COL and what was expected, never the bytes found there
 * (the client chose the file, the daemon may be able to read more than the
 * client). why: what names the directory, for refusals ("ofcd
 * --topology-dir"). */
struct topo_files {
	int dirfd;
	const char *dir;
	const char *why;
};
int topo_build_in(const char *spec, const struct topo_files *files, struct graph **out,
		  struct ofc_error *err);
/* A spec error (topo_build's err) as a phrase to follow "topology": "'SPEC'
 * at column C: MSG" in the spec's own text, or "'SPEC': FILE:LINE:COL: MSG"
 * inside an edge-list file. Into buf; returns buf. */
const char *topo_spec_error(char *buf, size_t n, const char *spec, const struct ofc_error *err);

/* The structure of a spec, for code that builds schedules the way the
 * topology was built (the expansion constructions of Zhao et al.): one node
 * per family or function, arguments in order, each with its canonical
 * spec. "line^3(circulant:16:3,4)" is a TOPO_LINE node with k = 3 over a
 * TOPO_FAMILY node named "circulant" with params 16, 3, 4. */
enum topo_op {
	TOPO_FAMILY = 0,
	TOPO_LINE,
	TOPO_DEGREE,
	TOPO_PRODUCT,
	TOPO_POWER,
	TOPO_REVERSE,
	TOPO_UNION
};

struct topo_tree {
	enum topo_op op;
	char name[16];	  /* family or function name: "torus", "line", ... */
	uint32_t k;	  /* line^k, degree(., k), power(., k); 0 otherwise */
	uint32_t nparams; /* TOPO_FAMILY: the numbers of its spec, in order */
	uint32_t params[32];
	char *spec; /* canonical spec of this subtree, owned */
	uint32_t nargs;
	struct topo_tree **args;
};

/* topo_build that also returns the tree (the caller frees both; out may be
 * NULL when only the tree is wanted). Same errors as topo_build. */
int topo_build_tree(const char *spec, struct graph **out, struct topo_tree **tree,
		    struct ofc_error *err);
void topo_tree_free(struct topo_tree *t);
/* Whether t is a plain torus (torus:A0xA1x..., not a product or a line
 * graph of one): its number of dimensions, *dims (when not NULL) pointing
 * at A0, A1, ... in t; 0 for anything else, NULL included. The one test
 * every torus-only engine asks. */
uint32_t topo_torus_dims(const struct topo_tree *t, const uint32_t **dims);

/* Build from an arc list (tails[i] -> heads[i]); arcs keep their order per
 * tail. Takes no ownership. */
struct graph *graph_from_arcs(uint32_t n, uint32_t m, const uint32_t *tails, const uint32_t *heads,
			      const char *spec);
/* Link lists (topo/links.c): U-V names a bidirectional link (the arc
 * U -> V and, when present, V -> U), U>V one arc; words separated by commas
 * or spaces (docs/topologies.md, "Failed links and edge lists").
 * topo_fail_links: g less the links in list (each must exist; a parallel
 * link is named once per copy), spec "SPEC without LIST"; on a bad word
 * err->col is its column in list. topo_edges_file: the graph an edge-list
 * file holds (`edges:FILE`; '#' comments, optional `nodes N`), errors at
 * FILE:LINE:COL. The caller frees *out. */
int topo_fail_links(const struct graph *g, const char *list, struct graph **out,
		    struct ofc_error *err);
/* The pieces: mark in gone[] (g->m entries) the arcs list names, each one
 * not marked yet (errors as topo_fail_links); and g less the marked arcs,
 * named spec (the caller frees). */
int topo_mark_links(const struct graph *g, const char *list, bool *gone, struct ofc_error *err);
struct graph *topo_without_arcs(const struct graph *g, const bool *gone, const char *spec);
/* Failures with whole nodes: as topo_fail_links / _mark_links,
 * and a bare node U fails the node: every arc to or from it goes and
 * dead[U] is set (dead: g->n bytes, zeroed by the caller; NULL refuses a
 * node, as the two above do). The node stays in *out, without arcs. */
int topo_fail_items(const struct graph *g, const char *list, struct graph **out, uint8_t *dead,
		    struct ofc_error *err);
int topo_mark_items(const struct graph *g, const char *list, bool *gone, uint8_t *dead,
		    struct ofc_error *err);
/* The graph on the nodes not dead, renumbered in order ((*keep)[i] is the
 * old number of node i, *nkeep of them; the caller frees *keep), each
 * node's arcs among them in the same order, so a port (an arc's rank among
 * its tail's) means the same in both when g has no arcs to dead nodes. */
struct graph *topo_survivors(const struct graph *g, const uint8_t *dead, const char *spec,
			     uint32_t **keep, uint32_t *nkeep);
int topo_edges_file(const char *path, struct graph **out, struct ofc_error *err);
/* The same under a policy (NULL: topo_edges_file); the graph's spec is
 * edges:ABSOLUTE-PATH when files is given. */
int topo_edges_file_in(const struct topo_files *files, const char *path, struct graph **out,
		       struct ofc_error *err);
/* The graph an edge list's text holds (len bytes, not NUL-terminated;
 * path names it in errors and the spec, and must not be ""); quiet: errors
 * quote none of it. */
int topo_edges_text(const char *path, const char *text, size_t len, bool quiet, struct graph **out,
		    struct ofc_error *err);
struct graph *graph_transpose(const struct graph *g);
/* The tail of every arc, in CSR order (m + 1 entries; caller frees). */
uint32_t *graph_arc_tails(const struct graph *g);
/* twin[a]: the arc v -> u of each arc a = u -> v (owned), or NULL where an
 * arc has none, or parallel arcs or a self-loop leave it no one twin: a
 * graph equal to its transpose, arc for arc (a torus, a hypercube). */
uint32_t *graph_arc_twins(const struct graph *g);

/* Expansions (Zhao et al., "Efficient Direct-Connect Topologies", Sec. 5):
 * the line graph L(G) (nodes are arcs, uv -> vw), degree expansion G*n
 * (each node split into n copies, arcs between all copies), Cartesian
 * product and power. Each returns NULL and sets err when the result would
 * be larger than the limits or the input is unsuitable. */
struct graph *topo_line(const struct graph *g, struct ofc_error *err);
struct graph *topo_degree_expand(const struct graph *g, uint32_t n, struct ofc_error *err);
struct graph *topo_product(const struct graph *a, const struct graph *b, struct ofc_error *err);
/* The union of two graphs on the same nodes: each node's arcs are a's,
 * then b's (its ports a's, then b's). NULL with err when the node counts
 * differ or the result is over the limits. */
struct graph *topo_union(const struct graph *a, const struct graph *b, struct ofc_error *err);

/* ---- facts -------------------------------------------------------------- */

struct topo_facts {
	uint32_t nodes;
	uint32_t arcs;
	uint32_t min_out, max_out, min_in, max_in;
	bool regular;	 /* every in- and out-degree equal */
	uint32_t degree; /* out-degree when regular, else max_out */
	bool symmetric;	 /* every arc u->v has a reverse v->u (same multiplicity) */
	uint32_t self_loops;
	uint32_t parallel_arcs; /* arcs beyond the first between the same ordered pair */
	bool strongly_connected;
	bool diameter_known;	 /* false for huge non-vertex-transitive graphs */
	uint32_t diameter;	 /* valid when strongly_connected && diameter_known */
	uint32_t moore_diameter; /* valid when degree >= 1 */
};

/* Degrees, symmetry, strong connectivity and the diameter. Diameter by a
 * bit-parallel BFS (256 sources per sweep) on `threads` threads (0 = all);
 * one BFS when the graph is vertex-transitive. */
void topo_facts(const struct graph *g, struct topo_facts *f, unsigned threads);

/* The strongly connected components: comp[u] (n entries, the caller's)
 * the component of node u, numbered from 0; returns how many. O(n + m). */
uint32_t topo_components(const struct graph *g, uint32_t *comp);

/* Smallest k with 1 + d + ... + d^k >= n: the directed Moore bound on the
 * diameter of any n-node digraph of out-degree d. n - 1 for d = 1. */
uint32_t moore_diameter(uint64_t n, uint32_t d);

/* The out-eccentricity of s by a plain queue BFS (run it on the transpose
 * for the in-eccentricity): UINT32_MAX when some node is unreachable; the
 * last node reached (a farthest) in *far_node when not NULL. dist and
 * queue: n entries each, the caller's. */
uint32_t topo_eccentricity(const struct graph *g, uint32_t s, uint32_t *dist, uint32_t *queue,
			   uint32_t *far_node);

/* The out-eccentricities of sources[0 .. k) in ecc[0 .. k), each as
 * topo_eccentricity gives it, 256 sources a search: a level is one pass
 * over the in-arcs (t: the graph's transpose), each node's bits the
 * sources that reached it, so a pass serves 256 sources for about what a
 * queue search costs one. */
void topo_eccentricities(const struct graph *t, const uint32_t *sources, uint32_t k, uint32_t *ecc);

/* All-pairs distances, dist[s * n + t], TOPO_UNREACHABLE where none. The
 * caller frees. NULL (with err set) when n * n entries would not fit. */
uint16_t *topo_distances(const struct graph *g, unsigned threads, struct ofc_error *err);

/* ---- max flow (topo/flow_net.c) ---------------------------------------------
 * Dinic on integer capacities, in compressed rows the caller lays out:
 * node v's edges are slots start[v] .. start[v + 1] - 1, slot e runs to
 * to[e] with residual cap[e] and its reverse is slot rev[e]. Rows are
 * scanned in order, so a BFS or DFS reads memory in sequence. Zero it
 * before the first flow_net_reset; flow_net_free frees it. */
struct flow_net {
	uint32_t nv, ne;
	size_t cap_v, cap_e;
	uint32_t *start, *it, *queue, *path; /* per node (start: nv + 1) */
	int32_t *level;
	uint32_t *to, *rev; /* per slot */
	int64_t *cap;
	uint64_t visits; /* slots the searches scanned, summed: what the flows cost */
};
/* Room for nv nodes and ne slots (start[] is the caller's to fill). */
void flow_net_reset(struct flow_net *f, uint32_t nv, uint32_t ne);
/* The edge a -> b of capacity c at slot e, its reverse at slot r. */
void flow_net_pair(struct flow_net *f, uint32_t e, uint32_t r, uint32_t a, uint32_t b, int64_t c);
/* Levels from s in the residual network (level[v] < 0: unreached); with
 * to_t, only as far as t's level needs. After flow_net_maxflow, a run
 * without to_t marks the source side of a minimum cut. */
bool flow_net_bfs(struct flow_net *f, uint32_t s, uint32_t t, bool to_t);
/* The maximum flow from s to t; the residual capacities stay in cap[]. */
int64_t flow_net_maxflow(struct flow_net *f, uint32_t s, uint32_t t);
void flow_net_free(struct flow_net *f);

/* ---- ports -------------------------------------------------------------- */

/* A d-regular digraph as d permutations: to[j * n + u] is the node that
 * port j of u transmits to; port j of that node receives it. Each row is a
 * permutation and together they are the arc multiset (Koenig: a d-regular
 * bipartite multigraph splits into d perfect matchings). Self-loops stay in
 * the permutations (to[j*n+u] == u); they are listed separately so callers
 * can leave those ports dark or loop them back. */
struct port_map {
	uint32_t n, d;
	uint32_t *to;
	uint32_t nself;
	uint32_t *self_node; /* nself entries: node and port of each self-loop */
	uint32_t *self_port;
};

int topo_ports(const struct graph *g, struct port_map *pm, struct ofc_error *err);
void port_map_free(struct port_map *pm);

/* The spec of the topology whose port permutations pm holds:
 * "ports:N:ROW.ROW...", row j the node port j of every node transmits to,
 * each id in base64url digits of the width N needs (docs/topologies.md).
 * topo_build builds it again with its arcs in port order, and topo_ports
 * gives back pm's rows (self-loops as they are). The caller frees it. */
char *topo_ports_spec(const struct port_map *pm);
/* The longest spec topo_build takes from spec: TOPO_MAX_PORTS_SPEC for a
 * "ports:" spec, else TOPO_MAX_SPEC. For callers that bound a spec before
 * they build it (a request's field). */
size_t topo_spec_max(const char *spec);

/* The same, with port j of node u kept on the node it goes to in prefer
 * (a partial map: prefer->to entries UINT32_MAX are free) wherever the
 * target has that arc and a perfect matching still exists: how a switch
 * keeps the cross-connects it already holds. prefer may be NULL. */
int topo_ports_prefer(const struct graph *g, const struct port_map *prefer, struct port_map *pm,
		      struct ofc_error *err);

/* ---- relabelling (topo/relabel_search.c) ---------------------------------------
 * Which host should play which node of a target topology so that the most
 * circuits in place can stay: a bijection map[node] = host keeping the most
 * target arcs u -> v present as map[u] -> map[v] in the current wiring
 * (counted with multiplicity). It contains graph isomorphism, so it is a
 * search with a budget (swaps from the identity, greedy growth with a
 * 2-path tie-break, then swaps); it stops as soon as it reaches an upper
 * bound (then the answer is optimal), and never keeps fewer than the
 * identity. When the budget's clock stops it first, `deadline` says so and
 * the map is the best found so far. Deterministic for a given seed when the
 * bound or max_rounds, not the clock, ends it. */
struct relabel_opts {
	double budget_s;     /* wall-clock seconds; 0 = 1 s */
	uint32_t max_rounds; /* 0 = as many as the budget allows */
	uint64_t seed;	     /* tie-breaking; 0 = a fixed default */
	/* (optional) The budget cut while the search runs: once *cut_us is
	 * positive, the search ends that many microseconds after its start
	 * if that is sooner (another process may write it: ofcd's, into the
	 * planner's shared page, when a burst of jobs comes). Read at every
	 * look at the clock; the isomorphism search keeps its quarter. */
	const volatile int32_t *cut_us;
};

struct relabel_result {
	uint32_t *map;		/* target node -> host (n entries) */
	uint64_t arcs;		/* target arcs */
	uint64_t kept;		/* of which in place under map */
	uint64_t kept_identity; /* ... under the identity */
	bool complete;		/* every arc kept: nothing can do better */
	bool iso;		/* found by the isomorphism search (a relabelled copy) */
	uint64_t bound;		/* no mapping keeps more (see topo/relabel_search.c) */
	bool optimal;		/* kept == bound: nothing can do better */
	/* The clock ended the search before the bound was reached: map is the
	 * best found so far, perhaps not the best there is. */
	bool deadline;
	uint32_t rounds;
	double seconds;
};

int topo_relabel(const struct graph *cur, const struct graph *target, const struct relabel_opts *o,
		 struct relabel_result *r, struct ofc_error *err);
/* Arcs of target kept in cur under map (an independent count). */
uint64_t topo_relabel_kept(const struct graph *cur, const struct graph *target,
			   const uint32_t *map);
void relabel_result_free(struct relabel_result *r);

/* ---- automorphisms (topo/automorph.c, topo/symmetry.c: nauty) ------------ */

/* A group of automorphisms of a digraph: node permutations that map the arc
 * multiset onto itself (the arcs u -> v onto as many arcs h(u) -> h(v);
 * ports need not be kept), each with where it takes every arc. Listed
 * element by element, the identity first. Orbits are numbered in order of
 * their smallest member. */
struct graph_group {
	uint32_t n, m;
	uint32_t order;
	uint32_t *node;			  /* order * n: node[i * n + u] = h_i(u) */
	uint32_t *arc;			  /* order * m: arc[i * m + a] = h_i(a) */
	uint32_t norbits, *orbit;	  /* node orbits; orbit[u] */
	uint32_t narc_orbits, *arc_orbit; /* arc orbits; arc_orbit[a] */
	double full_order;		  /* |Aut(g)| as nauty counted it (node maps) */
	bool complete;			  /* the elements are all of Aut(g) */
	/* The generators nauty found (a strong generating set, deepest
	 * level first): they generate every element listed, and the whole
	 * group found when the listing is capped. */
	uint32_t ngens;
	uint32_t *gen_node; /* ngens * n */
	uint32_t *gen_arc;  /* ngens * m */
	bool timed_out;	    /* the clock ran out: a subgroup, complete false */
};

/* Aut(g) by nauty (topo/symmetry.c), found without knowing the
 * family; at most max_order elements are listed (a
 * subgroup when Aut(g) is larger, then complete is false): they take
 * max_order (n + m) words. Past the clock's deadline (NULL: none) every
 * phase stops where it is and what was found is listed (timed_out). */
void graph_automorphisms(const struct graph *g, uint32_t max_order, const struct ofc_clock *clock,
			 struct graph_group *grp);
/* Generators of Aut(g) that move some node of first[] (grp lists the
 * identity alone): they generate a group that acts on first[] as Aut(g)
 * does (a generator fixing them all acts on them as the identity), without
 * the stabiliser of them all, which may be large and of no use to the
 * caller (interchangeable switches fixing every GPU: S_k). */
void graph_automorphism_gens(const struct graph *g, const uint32_t *first, uint32_t nfirst,
			     const struct ofc_clock *clock, struct graph_group *grp);
void graph_group_free(struct graph_group *grp);
/* An isomorphism from a onto b (map[u]: b's node for a's node u, n
 * entries), by nauty's canonical forms of both, checked arc by arc, within
 * deadline (now_seconds(); 0: none). false when there is none, or none was
 * found in time. */
bool graph_isomorphism(const struct graph *a, const struct graph *b, double deadline,
		       uint32_t *map);

/* ---- output ------------------------------------------------------------- */

/* The object `ofc topo --json` prints: spec, nodes, degree, edges, diameter,
 * moore_diameter, edge_list, and more; ports/self_loops when pm != NULL. */
void topo_write_json(struct json_writer *w, const struct graph *g, const struct topo_facts *f,
		     const struct port_map *pm);
/* Graphviz: an undirected graph for symmetric topologies, else a digraph.
 * Every node is pinned (neato): tori on their grid, every other family on
 * a circle in node order (circulants, Kautz graphs: their chords show the
 * generators); links are straight, a torus's wrap-around links short
 * stubs at the border named after the node they reach. Past
 * TOPO_DOT_MAX_LINKS links only some nodes' are drawn (said in the
 * label). */
#define TOPO_DOT_MAX_LINKS 512u
void topo_write_dot(FILE *out, const struct graph *g, const struct topo_facts *f);
/* How a picture lays g out, worked out once for all its nodes by
 * topo_draw_of: the grid of a plain torus (topo_torus_dims on g's spec's
 * tree), else none. */
struct topo_draw {
	const struct graph *g;
	uint32_t k;	   /* the torus's dimensions; 0: not a torus */
	uint32_t dims[32]; /* A0, A1, ... */
};
void topo_draw_of(const struct graph *g, struct topo_draw *d);
/* Node u's place in that grid (inches), when g is a torus; else false. */
bool topo_grid_pos(const struct topo_draw *d, uint32_t u, double *x, double *y);
/* Node u's place in a picture of g (inches): its torus grid, else a circle
 * in node order, clockwise from the top, spaced for labelled nodes up to
 * TOPO_DOT_LABELS nodes and for points beyond. */
#define TOPO_DOT_LABELS 128u
void topo_draw_pos(const struct topo_draw *d, uint32_t u, double *x, double *y);
/* How the link u - v is drawn on g's grid: false for a straight line (grid
 * neighbours, or no grid); true for a stub from u of direction (dx, dy)
 * (unit length): outward across the border for a wrap-around link of the
 * first two dimensions, diagonal towards the other slice for the higher
 * ones (slices stand side by side). */
bool topo_draw_stub(const struct topo_draw *d, uint32_t u, uint32_t v, double *dx, double *dy);
/* Which of g's nodes have their links drawn: every stride-th (0, stride,
 * 2 stride, ...), all (1) unless g has more than TOPO_DOT_MAX_LINKS links;
 * spread around the picture, they show the pattern everywhere. */
uint32_t topo_draw_stride(const struct graph *g);

#endif
