/* Topology specs: "torus:8x8", "genkautz:1024,4", "line^3(circulant:16:3,4)".
 *
 *   spec   := family | func
 *   family := NAME ':' params            (per family, see families[] below)
 *   func   := 'line' ['^' K] '(' spec ')' | 'reverse' '(' spec ')'
 *           | 'degree' '(' spec ',' K ')' | 'power' '(' spec ',' K ')'
 *           | 'product' '(' spec ',' spec {',' spec} ')'
 *           | 'union' '(' spec ',' spec {',' spec} ')'
 *   ports  := 'ports:' N ':' ROW {'.' ROW}     (topo/ports_spec.c)
 *   edges  := 'edges:' FILE
 *
 * Commas inside a family's parameters and between arguments are told apart
 * from where they stand: the last top-level comma of degree()/power() comes
 * before the integer, and product() arguments start with a letter. So
 * "degree(circulant:16:3,4,2)" is circulant:16:{3,4} expanded twice.
 */
#include "topo/internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH  16
#define MAX_PARAMS 32

struct parser {
	const char *s;
	struct ofc_error *err;
	int depth;
	/* topo_build_tree: finished subtrees, innermost first; a function's
	 * arguments are the entries its parse pushed above its own mark. */
	bool want_tree;
	struct topo_tree **tree;
	size_t ntree, cap_tree;
	uint32_t last_k;		/* line^K, degree(.,n), power(.,n) of the last func() */
	const struct topo_files *files; /* where edges:FILE may be read; NULL: anywhere */
};

static int fail(struct parser *p, size_t pos, const char *fmt, ...) OFC_PRINTF(3, 4);
static int fail(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->err->code = OFC_E_INPUT;
	p->err->file[0] = '\0';
	p->err->line = 0;
	p->err->col = (unsigned)pos + 1;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static size_t skip_space(const char *s, size_t i, size_t hi)
{
	while (i < hi && s[i] == ' ')
		i++;
	return i;
}

static size_t trim_end(const char *s, size_t lo, size_t hi)
{
	while (hi > lo && s[hi - 1] == ' ')
		hi--;
	return hi;
}

/* A decimal integer at *i (< hi); advances *i. */
static int number(struct parser *p, size_t *i, size_t hi, uint32_t *v, const char *what)
{
	uint64_t x = 0;
	size_t start = *i;

	if (start >= hi || !isdigit((unsigned char)p->s[start]))
		return fail(p, start, "expected %s", what);
	while (*i < hi && isdigit((unsigned char)p->s[*i])) {
		x = x * 10 + (uint64_t)(p->s[*i] - '0');
		if (x > UINT32_MAX)
			return fail(p, start, "%s is too large", what);
		(*i)++;
	}
	*v = (uint32_t)x;
	return 0;
}

/* Parameters: numbers separated by the given separators, exactly filling
 * [i, hi). seps[k] is the separator after parameter k; '*' repeats the
 * previous one as often as needed. */
static int params(struct parser *p, size_t i, size_t hi, const char *seps, uint32_t *v,
		  uint32_t *count, const char *what)
{
	uint32_t k = 0;
	char sep = 0;

	for (;;) {
		if (k == MAX_PARAMS)
			return fail(p, i, "too many parameters");
		if (number(p, &i, hi, &v[k], what) < 0)
			return -1;
		k++;
		if (i == hi)
			break;
		if (*seps && *seps != '*')
			sep = *seps++;
		else if (*seps == '*' && !sep)
			return fail(p, i, "unexpected '%c'", p->s[i]);
		if (!sep || p->s[i] != sep)
			return fail(p, i, "unexpected '%c' in %s", p->s[i], what);
		i++;
	}
	*count = k;
	return 0;
}

static int check_size(struct parser *p, size_t pos, uint64_t nodes, uint64_t degree)
{
	if (nodes > TOPO_MAX_NODES)
		return fail(p, pos, "too many nodes (%llu; limit %u)", (unsigned long long)nodes,
			    TOPO_MAX_NODES);
	if (nodes * degree > TOPO_MAX_ARCS)
		return fail(p, pos, "too many links (%llu; limit %u)",
			    (unsigned long long)(nodes * degree), TOPO_MAX_ARCS);
	return 0;
}

/* nodes = base^exp with overflow detection (saturates above the limit). */
static uint64_t power_sat(uint64_t base, uint32_t exp)
{
	uint64_t r = 1;

	for (uint32_t i = 0; i < exp; i++) {
		r *= base;
		if (r > (uint64_t)TOPO_MAX_NODES * 4)
			return (uint64_t)TOPO_MAX_NODES * 4;
	}
	return r;
}

/* A family: how its parameters are written, and a check that validates
 * them, says where a problem is, and gives the size of the graph. One
 * generic driver (build_family) parses, checks, bounds the size, builds and
 * prints the canonical spec, so each family is only what is special about
 * it. */
struct family {
	const char *name;
	const char *syntax;
	const char *seps;      /* separators after each parameter; '*' repeats the last */
	const char *what;      /* what the parameters are, for "expected ..." */
	uint32_t min_k, max_k; /* how many parameters */
	const char *count_msg; /* when the count is wrong */
	/* Range checks; sets the node count and degree, or fails at pos. */
	int (*check)(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *nodes,
		     uint64_t *degree);
	struct graph *(*build)(const uint32_t *v, uint32_t k);
};

#define NEED(cond, pos, ...)                                                                       \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return fail(p, pos, __VA_ARGS__);                                          \
	} while (0)

static int c_ring(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		  uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 2, pos, "a ring needs at least 2 nodes");
	*n = v[0];
	*d = 1;
	return 0;
}

static int c_biring(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		    uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 2, pos, "a ring needs at least 2 nodes");
	*n = v[0];
	*d = 2;
	return 0;
}

static int c_torus(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		   uint64_t *d)
{
	size_t i = pos;

	*n = 1;
	*d = 0;
	for (uint32_t j = 0; j < k; j++) {
		NEED(v[j] >= 2, i, "torus dimension %u must be at least 2", j + 1);
		*n *= v[j];
		*d += v[j] == 2 ? 1 : 2; /* a dimension of 2 has one link each way */
		if (*n > TOPO_MAX_NODES)
			break;
		while (p->s[i] && p->s[i] != 'x')
			i++;
		i++;
	}
	return 0;
}

static int c_hypercube(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		       uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 1 && v[0] <= 22, pos, "hypercube dimension must be 1..22");
	*n = 1ull << v[0];
	*d = v[0];
	return 0;
}

static int c_complete(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		      uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 2, pos, "a complete graph needs at least 2 nodes");
	*n = v[0];
	*d = v[0] - 1ull;
	return 0;
}

static int c_bipartite(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		       uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 1, pos, "bipartite degree must be at least 1");
	*n = 2ull * v[0];
	*d = v[0];
	return 0;
}

static int c_hamming(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		     uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 1, pos, "hamming dimension n must be at least 1");
	NEED(v[1] >= 2, pos, "hamming alphabet q must be at least 2");
	*n = power_sat(v[1], v[0]);
	*d = (uint64_t)v[0] * (v[1] - 1);
	return 0;
}

static int c_circulant(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		       uint64_t *d)
{
	NEED(v[0] >= 2, pos, "a circulant needs at least 2 nodes");
	for (uint32_t i = 1; i < k; i++)
		NEED(v[i] >= 1 && v[i] < v[0], pos, "circulant offset %u must be in 1..%u", v[i],
		     v[0] - 1);
	*n = v[0];
	*d = 2ull * (k - 1);
	return 0;
}

static int c_kautz(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		   uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 1 && v[0] <= 254, pos, "kautz degree d must be 1..254");
	NEED(v[1] <= 63, pos, "kautz word length n must be at most 63");
	*n = power_sat(v[0], v[1]) * (v[0] + 1ull);
	*d = v[0];
	return 0;
}

static int c_genkautz(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		      uint64_t *d)
{
	(void)k;
	NEED(v[1] >= 1, pos, "genkautz degree d must be at least 1");
	NEED(v[0] >= v[1] + 1ull, pos, "genkautz needs N >= d + 1 nodes");
	*n = v[0];
	*d = v[1];
	return 0;
}

static int c_debruijn(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		      uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 2, pos, "debruijn degree d must be at least 2");
	NEED(v[1] >= 1, pos, "debruijn word length n must be at least 1");
	*n = power_sat(v[0], v[1]);
	*d = v[0];
	return 0;
}

static int c_empty(struct parser *p, size_t pos, const uint32_t *v, uint32_t k, uint64_t *n,
		   uint64_t *d)
{
	(void)k;
	NEED(v[0] >= 1, pos, "empty needs at least 1 node");
	*n = v[0];
	*d = 0;
	return 0;
}

static struct graph *g_empty(const uint32_t *v, uint32_t k)
{
	struct graph *g = graph_regular(v[0], 0);

	(void)k;
	g->vertex_transitive = true;
	return g;
}

static struct graph *g_ring(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_ring(v[0]);
}

static struct graph *g_biring(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_biring(v[0]);
}

static struct graph *g_hypercube(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_hypercube(v[0]);
}

static struct graph *g_complete(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_complete(v[0]);
}

static struct graph *g_bipartite(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_bipartite(v[0]);
}

static struct graph *g_hamming(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_hamming(v[0], v[1]);
}

static struct graph *g_circulant(const uint32_t *v, uint32_t k)
{
	return topo_circulant(v[0], v + 1, k - 1);
}

static struct graph *g_kautz(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_kautz(v[0], v[1]);
}

static struct graph *g_genkautz(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_genkautz(v[0], v[1]);
}

static struct graph *g_debruijn(const uint32_t *v, uint32_t k)
{
	(void)k;
	return topo_debruijn(v[0], v[1]);
}

static const struct family families[] = {
    {"ring", "ring:N", "", "a node count", 1, 1, NULL, c_ring, g_ring},
    {"biring", "biring:N", "", "a node count", 1, 1, NULL, c_biring, g_biring},
    {"torus", "torus:AxB[xC...]", "x*", "dimensions like 8x8", 1, MAX_PARAMS, NULL, c_torus,
     topo_torus},
    {"hypercube", "hypercube:D", "", "a dimension", 1, 1, NULL, c_hypercube, g_hypercube},
    {"complete", "complete:N", "", "a node count", 1, 1, NULL, c_complete, g_complete},
    {"bipartite", "bipartite:D", "", "a degree", 1, 1, NULL, c_bipartite, g_bipartite},
    {"hamming", "hamming:n,q", ",", "n,q", 2, 2, "hamming takes n,q", c_hamming, g_hamming},
    {"circulant", "circulant:N:a,b,...", ":,*", "N:a,b,...", 2, MAX_PARAMS,
     "circulant takes N:a,b,... (at least one offset)", c_circulant, g_circulant},
    {"kautz", "kautz:d,n", ",", "d,n", 2, 2, "kautz takes d,n", c_kautz, g_kautz},
    {"genkautz", "genkautz:N,d", ",", "N,d", 2, 2, "genkautz takes N,d", c_genkautz, g_genkautz},
    {"debruijn", "debruijn:d,n", ",", "d,n", 2, 2, "debruijn takes d,n", c_debruijn, g_debruijn},
    /* No links: a factor of product() that places copies of a topology
     * (product(ring:8,empty:8) is 8 rings of consecutive nodes). */
    {"empty", "empty:N", "", "a node count", 1, 1, NULL, c_empty, g_empty},
};

/* The separator written before parameter i (i >= 1), as params() reads it. */
static char sep_before(const char *seps, uint32_t i)
{
	char sep = 0;

	for (uint32_t j = 1; j <= i && *seps; j++)
		if (*seps != '*')
			sep = *seps++;
	return sep;
}

static int build_family(struct parser *p, const struct family *f, size_t lo, size_t hi,
			struct graph **g, struct strbuf *canon)
{
	uint32_t v[MAX_PARAMS], k = 0;
	uint64_t nodes, degree;

	if (params(p, lo, hi, f->seps, v, &k, f->what) < 0)
		return -1;
	if (k < f->min_k || k > f->max_k)
		return fail(p, lo, "%s", f->count_msg);
	if (f->check(p, lo, v, k, &nodes, &degree) < 0 || check_size(p, lo, nodes, degree) < 0)
		return -1;
	*g = f->build(v, k);
	sb_printf(canon, "%s:%u", f->name, v[0]);
	for (uint32_t i = 1; i < k; i++)
		sb_printf(canon, "%c%u", sep_before(f->seps, i), v[i]);
	return 0;
}

static const char *const funcs[] = {"line", "degree", "product", "power", "reverse", "union"};

static int parse(struct parser *p, size_t lo, size_t hi, struct graph **out, struct strbuf *canon);
static int topo_build_with(struct parser *p, struct graph **out);

static const char *closest_name(const char *word)
{
	const char *best = NULL;
	unsigned bd = 3;

	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		unsigned d = edit_distance(word, families[i].name);
		if (d < bd) {
			bd = d;
			best = families[i].name;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++) {
		unsigned d = edit_distance(word, funcs[i]);
		if (d < bd) {
			bd = d;
			best = funcs[i];
		}
	}
	return best;
}

/* One argument spec in [lo, hi), trimmed, non-empty. */
static int arg_spec(struct parser *p, size_t lo, size_t hi, struct graph **g, struct strbuf *c)
{
	lo = skip_space(p->s, lo, hi);
	hi = trim_end(p->s, lo, hi);
	if (lo == hi)
		return fail(p, lo, "expected a topology spec");
	return parse(p, lo, hi, g, c);
}

static int arg_int(struct parser *p, size_t lo, size_t hi, uint32_t *v, const char *what)
{
	lo = skip_space(p->s, lo, hi);
	hi = trim_end(p->s, lo, hi);
	size_t i = lo;
	if (number(p, &i, hi, v, what) < 0)
		return -1;
	if (i != hi)
		return fail(p, i, "unexpected '%c' after %s", p->s[i], what);
	return 0;
}

/* A function's parentheses: where they open and close, and the commas at
 * their top level. */
struct parens {
	size_t open, close;
	size_t commas[MAX_PARAMS];
	unsigned nc;
};

static int find_parens(struct parser *p, const char *name, size_t i, size_t hi, struct parens *a)
{
	int depth = 0;

	i = skip_space(p->s, i, hi);
	if (i >= hi || p->s[i] != '(')
		return fail(p, i, "expected '(' after %s", name);
	a->open = i;
	for (a->close = a->open; a->close < hi; a->close++) {
		if (p->s[a->close] == '(')
			depth++;
		else if (p->s[a->close] == ')' && --depth == 0)
			break;
	}
	if (a->close >= hi)
		return fail(p, a->open, "unbalanced '('");
	if (trim_end(p->s, a->close + 1, hi) != a->close + 1)
		return fail(p, a->close + 1, "unexpected text after ')'");
	a->nc = 0;
	depth = 0;
	for (size_t k = a->open + 1; k < a->close; k++) {
		if (p->s[k] == '(')
			depth++;
		else if (p->s[k] == ')')
			depth--;
		else if (p->s[k] == ',' && depth == 0 && a->nc < MAX_PARAMS)
			a->commas[a->nc++] = k;
	}
	return 0;
}

/* line^times(SPEC) and reverse(SPEC). */
static struct graph *func_unary(struct parser *p, const char *name, uint32_t times, size_t lo,
				const struct parens *a, struct strbuf *canon)
{
	struct graph *g = NULL, *x = NULL;
	struct strbuf sub = STRBUF_INIT;

	if (arg_spec(p, a->open + 1, a->close, &g, &sub) < 0)
		goto out;
	if (name[0] == 'r') {
		x = graph_transpose(g);
		sb_printf(canon, "reverse(%s)", sub.buf);
		goto out;
	}
	for (uint32_t t = 0; t < times; t++) {
		x = topo_line(g, p->err);
		graph_free(g);
		g = x;
		if (!x) {
			p->err->col = (unsigned)lo + 1;
			goto out;
		}
	}
	g = NULL;
	p->last_k = times;
	if (times == 1)
		sb_printf(canon, "line(%s)", sub.buf);
	else
		sb_printf(canon, "line^%u(%s)", times, sub.buf);
out:
	graph_free(g);
	sb_free(&sub);
	return x;
}

/* degree(SPEC,n) and power(SPEC,n). */
static struct graph *func_count(struct parser *p, const char *name, size_t lo,
				const struct parens *a, struct strbuf *canon)
{
	struct graph *g = NULL, *x = NULL;
	struct strbuf sub = STRBUF_INIT;
	uint32_t k;

	if (a->nc == 0) {
		fail(p, a->close, "%s(SPEC,n) needs a count after a comma", name);
		return NULL;
	}
	size_t last = a->commas[a->nc - 1];

	if (arg_spec(p, a->open + 1, last, &g, &sub) < 0 ||
	    arg_int(p, last + 1, a->close, &k, "a count") < 0)
		goto out;
	if (name[0] == 'd') {
		if (k < 1) {
			fail(p, last + 1, "degree expansion needs n >= 1");
			goto out;
		}
		x = topo_degree_expand(g, k, p->err);
	} else {
		if (k < 1 || k > 16) {
			fail(p, last + 1, "power needs n in 1..16");
			goto out;
		}
		x = g;
		for (uint32_t t = 1; t < k && x; t++) {
			struct graph *y = topo_product(x, g, p->err);

			if (x != g)
				graph_free(x);
			x = y;
		}
		if (x == g) /* power(G,1) */
			g = NULL;
	}
	if (!x) {
		p->err->col = (unsigned)lo + 1;
		goto out;
	}
	sb_printf(canon, "%s(%s,%u)", name, sub.buf, k);
	p->last_k = k;
out:
	graph_free(g);
	sb_free(&sub);
	return x;
}

/* product(SPEC,SPEC,...) and union(...): a comma starts a new topology
 * where a name follows it (others belong to the topology's own spec). */
static struct graph *func_fold(struct parser *p, const char *name, size_t lo,
			       const struct parens *a, struct strbuf *canon)
{
	bool uni = name[0] == 'u';
	size_t starts[MAX_PARAMS + 1], ends[MAX_PARAMS + 1];
	unsigned na = 0;
	struct graph *g = NULL;
	struct strbuf sub = STRBUF_INIT;

	starts[0] = a->open + 1;
	for (unsigned k = 0; k < a->nc; k++) {
		size_t nx = skip_space(p->s, a->commas[k] + 1, a->close);

		if (nx < a->close && isalpha((unsigned char)p->s[nx])) {
			ends[na++] = a->commas[k];
			starts[na] = a->commas[k] + 1;
		}
	}
	ends[na++] = a->close;
	if (na < 2) {
		fail(p, a->close, "%s needs at least two topologies", name);
		return NULL;
	}
	sb_printf(canon, "%s(", name);
	for (unsigned k = 0; k < na; k++) {
		struct graph *f = NULL, *x;

		sb_reset(&sub);
		if (arg_spec(p, starts[k], ends[k], &f, &sub) < 0) {
			graph_free(g);
			g = NULL;
			break;
		}
		sb_printf(canon, "%s%s", k ? "," : "", sub.buf);
		if (!g) {
			g = f;
			continue;
		}
		x = uni ? topo_union(g, f, p->err) : topo_product(g, f, p->err);
		graph_free(f);
		graph_free(g);
		g = x;
		if (!g) {
			p->err->col = (unsigned)lo + 1;
			break;
		}
	}
	if (g)
		sb_putc(canon, ')');
	sb_free(&sub);
	return g;
}

static int func(struct parser *p, const char *name, size_t name_end, size_t lo, size_t hi,
		struct graph **out, struct strbuf *canon)
{
	size_t i = name_end;
	uint32_t times = 1;
	struct parens a = {0};
	struct graph *x;

	if (strcmp(name, "line") == 0 && i < hi && p->s[i] == '^') {
		i++;
		if (number(p, &i, hi, &times, "a repeat count after '^'") < 0)
			return -1;
		NEED(times >= 1 && times <= 8, name_end + 1, "line^K needs K in 1..8");
	}
	if (find_parens(p, name, i, hi, &a) < 0)
		return -1;
	if (strcmp(name, "line") == 0 || strcmp(name, "reverse") == 0)
		x = func_unary(p, name, times, lo, &a, canon);
	else if (strcmp(name, "degree") == 0 || strcmp(name, "power") == 0)
		x = func_count(p, name, lo, &a, canon);
	else
		x = func_fold(p, name, lo, &a, canon);
	if (!x)
		return -1;
	*out = x;
	return 0;
}

static int parse_node(struct parser *p, size_t lo, size_t hi, struct graph **out,
		      struct strbuf *canon);

/* The tree node for what parse_node just added to canon (from `start`). */
static void push_tree(struct parser *p, size_t mark, size_t start, const struct strbuf *canon)
{
	static const struct {
		const char *name;
		enum topo_op op;
	} ops[] = {{"line", TOPO_LINE},	  {"degree", TOPO_DEGREE},   {"product", TOPO_PRODUCT},
		   {"power", TOPO_POWER}, {"reverse", TOPO_REVERSE}, {"union", TOPO_UNION}};
	struct topo_tree *t = xcalloc(1, sizeof(*t));
	const char *spec = canon->buf + start;
	size_t len = canon->len - start, nl = 0;

	t->spec = xstrndup(spec, len);
	while (nl < len && isalpha((unsigned char)spec[nl]))
		nl++;
	snprintf(t->name, sizeof(t->name), "%.*s", (int)nl, spec);
	t->op = TOPO_FAMILY;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (strcmp(t->name, ops[i].name) == 0) {
			t->op = ops[i].op;
			t->k = ops[i].op == TOPO_PRODUCT || ops[i].op == TOPO_REVERSE ||
				       ops[i].op == TOPO_UNION
				   ? 0
				   : p->last_k;
		}
	if (t->op == TOPO_FAMILY && strcmp(t->name, "ports") != 0) {
		/* The family's numbers, in order: "circulant:16:3,4" -> 16 3 4. */
		for (size_t i = nl; i < len && t->nparams < ARRAY_SIZE(t->params);) {
			if (!isdigit((unsigned char)spec[i])) {
				i++;
				continue;
			}
			uint32_t v = 0;
			while (i < len && isdigit((unsigned char)spec[i]))
				v = v * 10 + (uint32_t)(spec[i++] - '0');
			t->params[t->nparams++] = v;
		}
	}
	t->nargs = (uint32_t)(p->ntree - mark);
	if (t->nargs) {
		t->args = xmalloc(t->nargs * sizeof(*t->args));
		memcpy(t->args, p->tree + mark, t->nargs * sizeof(*t->args));
	}
	p->ntree = mark;
	GROW(p->tree, p->cap_tree, p->ntree + 1);
	p->tree[p->ntree++] = t;
}

static int parse(struct parser *p, size_t lo, size_t hi, struct graph **out, struct strbuf *canon)
{
	size_t mark = p->ntree, start = canon->len;
	int rc = parse_node(p, lo, hi, out, canon);

	if (rc == 0 && p->want_tree)
		push_tree(p, mark, start, canon);
	return rc;
}

static int parse_node(struct parser *p, size_t lo, size_t hi, struct graph **out,
		      struct strbuf *canon)
{
	char name[32];
	size_t i = lo;

	if (++p->depth > MAX_DEPTH)
		return fail(p, lo, "nested too deeply");
	while (i < hi && (isalnum((unsigned char)p->s[i])))
		i++;
	if (i == lo || !isalpha((unsigned char)p->s[lo]))
		return fail(p, lo, "expected a topology name such as torus:8x8");
	if (i - lo >= sizeof(name))
		return fail(p, lo, "unknown topology '%.*s'", 31, p->s + lo);
	memcpy(name, p->s + lo, i - lo);
	name[i - lo] = '\0';

	if (strcmp(name, "edges") == 0) {
		/* An explicit edge list: the rest of the spec is a file name. */
		struct ofc_error ferr = {0};

		if (i >= hi || p->s[i] != ':' || i + 1 == hi)
			return fail(p, i, "expected ':' and a file after 'edges' (edges:FILE)");
		char *path = xstrndup(p->s + i + 1, hi - i - 1);
		int rc = topo_edges_file_in(p->files, path, out, &ferr);
		if (rc < 0) {
			/* Errors inside the file keep FILE:LINE:COL; others point
			 * at the file name in the spec. */
			*p->err = ferr;
			if (!ferr.line)
				p->err->col = (unsigned)(i + 2);
		} else {
			/* Under a policy the graph names its file by its
			 * absolute path, so it can be built again. */
			sb_printf(canon, "%s", p->files ? (*out)->spec : "edges:");
			if (!p->files)
				sb_printf(canon, "%s", path);
		}
		free(path);
		p->depth--;
		return rc;
	}
	if (strcmp(name, "ports") == 0) {
		/* Port permutations written out: the rest is their rows. */
		struct topo_ports_error pe = {0};

		if (i >= hi || p->s[i] != ':')
			return fail(p, i, "expected ':' after 'ports' (ports:N:ROW.ROW...)");
		if (topo_ports_decode(p->s + i + 1, hi - i - 1, out, &pe) < 0)
			return fail(p, i + 1 + pe.at, "%s", pe.msg);
		sb_printf(canon, "%.*s", (int)(hi - lo), p->s + lo);
		p->depth--;
		return 0;
	}
	for (size_t f = 0; f < ARRAY_SIZE(funcs); f++)
		if (strcmp(name, funcs[f]) == 0) {
			int rc = func(p, name, i, lo, hi, out, canon);
			p->depth--;
			return rc;
		}
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		if (strcmp(name, families[f].name) != 0)
			continue;
		if (i >= hi || p->s[i] != ':')
			return fail(p, i, "expected ':' after '%s' (%s)", name, families[f].syntax);
		int rc = build_family(p, &families[f], i + 1, hi, out, canon);
		p->depth--;
		return rc;
	}
	const char *hint = closest_name(name);
	if (hint)
		return fail(p, lo, "unknown topology '%s' (did you mean '%s'?)", name, hint);
	return fail(p, lo, "unknown topology '%s'", name);
}

uint32_t topo_torus_dims(const struct topo_tree *t, const uint32_t **dims)
{
	if (!t || t->op != TOPO_FAMILY || strcmp(t->name, "torus") != 0 || !t->nparams)
		return 0;
	if (dims)
		*dims = t->params;
	return t->nparams;
}

void topo_tree_free(struct topo_tree *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nargs; i++)
		topo_tree_free(t->args[i]);
	free(t->args);
	free(t->spec);
	free(t);
}

int topo_build_tree(const char *spec, struct graph **out, struct topo_tree **tree,
		    struct ofc_error *err)
{
	struct parser p = {.s = spec, .err = err, .want_tree = true};
	struct graph *g = NULL;
	int rc = topo_build_with(&p, &g);

	*tree = NULL;
	if (rc == 0 && p.ntree == 1) {
		*tree = p.tree[0];
		p.ntree = 0;
	}
	for (size_t i = 0; i < p.ntree; i++)
		topo_tree_free(p.tree[i]);
	free(p.tree);
	if (out)
		*out = g;
	else
		graph_free(g);
	return rc;
}

int topo_build(const char *spec, struct graph **out, struct ofc_error *err)
{
	struct parser p = {.s = spec, .err = err};

	return topo_build_with(&p, out);
}

int topo_build_in(const char *spec, const struct topo_files *files, struct graph **out,
		  struct ofc_error *err)
{
	struct parser p = {.s = spec, .err = err, .files = files};

	return topo_build_with(&p, out);
}

const char *topo_spec_error(char *buf, size_t n, const char *spec, const struct ofc_error *err)
{
	if (err->line && err->file[0])
		snprintf(buf, n, "'%s': %s:%u:%u: %s", spec, err->file, err->line, err->col,
			 err->msg);
	else if (err->col && err->file[0])
		snprintf(buf, n, "'%s' at column %u: %s: %s", spec, err->col, err->file, err->msg);
	else if (err->col)
		snprintf(buf, n, "'%s' at column %u: %s", spec, err->col, err->msg);
	else
		snprintf(buf, n, "'%s': %s", spec, err->msg);
	return buf;
}

static int topo_build_with(struct parser *p, struct graph **out)
{
	const char *spec = p->s;
	struct strbuf canon = STRBUF_INIT;
	size_t len = strlen(spec), lo, hi;

	*out = NULL;
	if (len > topo_spec_max(spec))
		return fail(p, 0, "spec too long (limit %zu characters)", topo_spec_max(spec));
	lo = skip_space(spec, 0, len);
	hi = trim_end(spec, lo, len);
	if (lo == hi)
		return fail(p, 0, "empty topology spec");
	if (parse(p, lo, hi, out, &canon) < 0) {
		sb_free(&canon);
		return -1;
	}
	free((*out)->spec);
	(*out)->spec = sb_detach(&canon);
	return 0;
}
