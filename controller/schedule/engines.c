/* The engines: every algorithm the pipeline runs, one row each, as the
 * drivers sit behind struct driver_ops. A row says what --algo and a
 * config's `algorithm:` call it, the fabrics and collectives it serves, the
 * options that go with it, and how it is built; the pipeline's dispatch,
 * `--algo all`, the name checks and their messages, and `ofc schedule
 * --help`'s list all read this table, so adding an engine is adding a row
 * (and its build). */
#include "controller/schedule/internal.h"

#include <string.h>

#define AG	 ENGINE_C(SCHED_ALLGATHER)
#define RS	 ENGINE_C(SCHED_REDUCE_SCATTER)
#define AR	 ENGINE_C(SCHED_ALLREDUCE)
#define A2A	 ENGINE_C(SCHED_ALLTOALL)
#define BC	 ENGINE_C(SCHED_BROADCAST)
#define RD	 ENGINE_C(SCHED_REDUCE)
#define REDUCING (AG | RS | AR)

/* In the order `--algo all` compares them and the lists name them. "all"
 * comes last: the lists end with it. */
static const struct engine_ops engines[] = {
    /* direct-connect topologies (engine_bfb.c, engine_torus.c, engine_alltoall.c) */
    {.name = "bfb",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .in_all = REDUCING,
     .reduced = REDUCING,
     .defaults = REDUCING | BC | RD, /* (a rooted one is the fluid engine's: refused) */
     .build = ENGINE_BUILD_BFB},
    {.name = "bfb-lp",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .reduced = REDUCING,
     .build = ENGINE_BUILD_BFB_LP},
    {.name = "expansion",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .in_all = REDUCING,
     .build = ENGINE_BUILD_EXPANSION},
    {.name = "ring",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .in_all = REDUCING,
     .reduced = REDUCING,
     .baseline = BASELINE_RING,
     .torus_ports = 1,
     .build = ENGINE_BUILD_BASELINE,
     .torus = ENGINE_BUILD_TORUS_ROUTED},
    {.name = "bidir-ring",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .in_all = REDUCING,
     .reduced = REDUCING,
     .baseline = BASELINE_BIDIR_RING,
     .torus_ports = 2,
     .build = ENGINE_BUILD_BASELINE,
     .torus = ENGINE_BUILD_TORUS_ROUTED},
    {.name = "recursive",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .in_all = REDUCING,
     .reduced = REDUCING,
     .flags = ENGINE_BINARY,
     .baseline = BASELINE_RECURSIVE,
     .build = ENGINE_BUILD_BASELINE},
    {.name = "torus-rings",
     .fabrics = ENGINE_DIRECT,
     .serves = REDUCING,
     .in_all = REDUCING,
     .reduced = REDUCING,
     .baseline = BASELINE_TORUS_RINGS,
     .build = ENGINE_BUILD_BASELINE},
    {.name = "swing",
     .fabrics = ENGINE_DIRECT,
     .serves = AR,
     .in_all = AR,
     .reduced = AR,
     .flags = ENGINE_VARIANT | ENGINE_SPLIT,
     .torus_algo = TORUS_SWING,
     .build = ENGINE_BUILD_TORUS,
     .torus = ENGINE_BUILD_TORUS_VARIANTS},
    {.name = "recursive-doubling",
     .fabrics = ENGINE_DIRECT,
     .serves = AR,
     .reduced = AR,
     .flags = ENGINE_VARIANT,
     .torus_algo = TORUS_RECURSIVE_DOUBLING,
     .label = "rd",
     .build = ENGINE_BUILD_TORUS,
     .torus = ENGINE_BUILD_TORUS_VARIANTS},
    {.name = "bucket",
     .fabrics = ENGINE_DIRECT,
     .serves = AR,
     .reduced = AR,
     .baseline = BASELINE_TORUS_RINGS,
     .torus_ports = ENGINE_PORTS_DEGREE,
     .build = ENGINE_BUILD_TORUS_ROUTED,
     .torus = ENGINE_BUILD_TORUS_ROUTED},
    {.name = "mcf",
     .fabrics = ENGINE_DIRECT,
     .serves = A2A,
     .in_all = A2A,
     .reduced = A2A,
     .defaults = A2A,
     .flags = ENGINE_LOWERING | ENGINE_COLGEN,
     .a2a = A2A_MCF,
     .build = ENGINE_BUILD_ALLTOALL},
    {.name = "direct",
     .fabrics = ENGINE_DIRECT,
     .serves = A2A,
     .in_all = A2A,
     .reduced = A2A,
     .a2a = A2A_DIRECT,
     .build = ENGINE_BUILD_ALLTOALL},
    {.name = "sp-balanced",
     .fabrics = ENGINE_DIRECT,
     .serves = A2A,
     .in_all = A2A,
     .reduced = A2A,
     .a2a = A2A_SP_BALANCED,
     .build = ENGINE_BUILD_ALLTOALL},
    {.name = "swing-all",
     .fabrics = ENGINE_DIRECT,
     .serves = AR,
     .flags = ENGINE_COMPARE | ENGINE_CLI_ONLY | ENGINE_TORUS_ALL},
    /* WDM rings (ring.c: optree/ builds each) */
    {.name = "ring",
     .fabrics = ENGINE_RING,
     .serves = REDUCING,
     .in_all = REDUCING | A2A,
     .wdm = OPTREE_RING},
    {.name = "ne",
     .fabrics = ENGINE_RING,
     .serves = REDUCING,
     .in_all = REDUCING | A2A,
     .wdm = OPTREE_NE},
    {.name = "onestage",
     .fabrics = ENGINE_RING,
     .serves = REDUCING | A2A,
     .in_all = REDUCING | A2A,
     .defaults = A2A,
     .wdm = OPTREE_ONESTAGE},
    {.name = "wrht",
     .fabrics = ENGINE_RING,
     .serves = REDUCING,
     .in_all = REDUCING | A2A,
     .wdm = OPTREE_WRHT},
    {.name = "optree",
     .fabrics = ENGINE_RING,
     .serves = REDUCING,
     .in_all = REDUCING | A2A,
     .reduced = AG,
     .defaults = REDUCING | BC | RD,
     .wdm = OPTREE_TREE},
    /* server fabrics (fluid.c: schedule_fluid, its own answer) */
    {.name = "fluid",
     .fabrics = ENGINE_SERVERS,
     .serves = REDUCING | A2A | BC | RD,
     .defaults = REDUCING | A2A | BC | RD},
    /* every row of the fabric's kind side by side, with the fluid bound */
    {.name = "all",
     .fabrics = ENGINE_DIRECT | ENGINE_RING,
     .serves = REDUCING | A2A,
     .flags = ENGINE_COMPARE | ENGINE_EVERY | ENGINE_CERTIFY},
};

const struct engine_ops *engine_at(unsigned i)
{
	return i < ARRAY_SIZE(engines) ? &engines[i] : NULL;
}

const struct engine_ops *engine_find(const char *name, unsigned fabrics)
{
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		if ((engines[i].fabrics & fabrics) && strcmp(engines[i].name, name) == 0)
			return &engines[i];
	return NULL;
}

bool schedule_algorithm_known(const char *algo)
{
	const struct engine_ops *e = engine_find(algo, ENGINE_ANY);

	return e && !(e->flags & ENGINE_COMPARE);
}

bool schedule_algorithm_cli_only(const char *algo)
{
	const struct engine_ops *e = engine_find(algo, ENGINE_ANY);

	return e && (e->flags & ENGINE_CLI_ONLY);
}

bool schedule_algorithm_compares(const char *algo, unsigned fabrics)
{
	const struct engine_ops *e = engine_find(algo, fabrics);

	return e && (e->flags & ENGINE_COMPARE);
}

bool schedule_algorithm_variant(const char *algo)
{
	const struct engine_ops *e = engine_find(algo, ENGINE_ANY);

	return e && (e->flags & ENGINE_VARIANT);
}

bool schedule_algorithm_lowers(const char *algo)
{
	const struct engine_ops *e = engine_find(algo, ENGINE_ANY);

	return e && (e->flags & ENGINE_LOWERING);
}

const char *schedule_algorithm_of_label(const char *label)
{
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		if (engines[i].label && strcmp(engines[i].label, label) == 0)
			return engines[i].name;
	return label;
}

const char *schedule_default_algorithm(unsigned fabric, enum sched_collective c)
{
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		if ((engines[i].fabrics & fabric) && (engines[i].defaults & ENGINE_C(c)))
			return engines[i].name;
	return NULL;
}

/* Whether row e is one engine_names lists. */
static bool listed(const struct engine_ops *e, unsigned fabrics, unsigned colls, unsigned flags)
{
	return (e->fabrics & fabrics) && (e->serves & colls) && (e->flags & flags) == flags;
}

void engine_names(struct strbuf *sb, unsigned fabrics, unsigned colls, unsigned flags,
		  const char *last)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
		n += listed(&engines[i], fabrics, colls, flags);
	for (size_t i = 0; i < ARRAY_SIZE(engines); i++) {
		if (!listed(&engines[i], fabrics, colls, flags))
			continue;
		if (k++)
			sb_puts(sb, k == n ? last : ", ");
		sb_puts(sb, engines[i].name);
	}
}

/* "allgather, reduce-scatter, allreduce": the collectives in mask. */
static void collectives(struct strbuf *sb, unsigned mask)
{
	const char *sep = "";

	for (int c = SCHED_ALLGATHER; c <= SCHED_REDUCE; c++)
		if (mask & ENGINE_C(c)) {
			sb_printf(sb, "%s%s", sep, sched_collective_name((enum sched_collective)c));
			sep = ", ";
		}
}

/* What a list groups rows by: the collectives each serves, those
 * --reduced goes with it for, those 'all' compares it for. */
enum by { BY_SERVES, BY_REDUCED, BY_IN_ALL };

/* Row e's collectives by `by` (0: not listed; 'all' is named apart). */
static unsigned group_mask(const struct engine_ops *e, unsigned fabrics, enum by by)
{
	if (!(e->fabrics & fabrics) || e->flags & ENGINE_EVERY)
		return 0;
	return by == BY_REDUCED ? e->reduced : by == BY_IN_ALL ? e->in_all : e->serves;
}

/* The rows of kind `fabrics` grouped by group_mask, the groups in the
 * order of their first row: "a, b or c (allgather, ...)", names joined by
 * ", " and the group's last by name_last, groups by sep and the last one
 * by last. */
static void grouped(struct strbuf *sb, unsigned fabrics, enum by by, const char *name_last,
		    const char *sep, const char *last)
{
	unsigned masks[ARRAY_SIZE(engines)], nmasks = 0;

	for (size_t i = 0; i < ARRAY_SIZE(engines); i++) {
		unsigned m = group_mask(&engines[i], fabrics, by), k = 0;

		while (k < nmasks && masks[k] != m)
			k++;
		if (m && k == nmasks)
			masks[nmasks++] = m;
	}
	for (unsigned g = 0; g < nmasks; g++) {
		size_t n = 0, k = 0;

		if (g)
			sb_puts(sb, g + 1 == nmasks ? last : sep);
		for (size_t i = 0; i < ARRAY_SIZE(engines); i++)
			n += group_mask(&engines[i], fabrics, by) == masks[g];
		for (size_t i = 0; i < ARRAY_SIZE(engines); i++) {
			if (group_mask(&engines[i], fabrics, by) != masks[g])
				continue;
			if (k++)
				sb_puts(sb, k == n ? name_last : ", ");
			sb_puts(sb, engines[i].name);
		}
		sb_puts(sb, " (");
		collectives(sb, masks[g]);
		sb_putc(sb, ')');
	}
}

void engine_reduced_names(struct strbuf *sb)
{
	grouped(sb, ENGINE_DIRECT, BY_REDUCED, " or ", ", ", " and ");
}

/* text into sb as lines of at most width columns, the first after lead,
 * each other after indent (words are never cut). */
static void wrap(struct strbuf *sb, const char *text, const char *lead, const char *indent,
		 size_t width)
{
	size_t col = 0, ind = strlen(indent);
	bool first = true;

	while (*text) {
		size_t w = strcspn(text, " ");

		if (col && col + 1 + w > width) {
			sb_putc(sb, '\n');
			col = 0;
		}
		if (!col) {
			sb_puts(sb, first ? lead : indent);
			col = first ? strlen(lead) : ind;
			first = false;
		} else {
			sb_putc(sb, ' ');
			col++;
		}
		sb_add(sb, text, w);
		col += w;
		text += w;
		text += strspn(text, " ");
	}
	sb_putc(sb, '\n');
}

/* The kinds of fabric, as the lists name them. */
static const struct {
	unsigned fabrics;
	const char *what;
} kinds[] = {
    {ENGINE_DIRECT, "on a direct-connect topology: "},
    {ENGINE_RING, "on a WDM ring: "},
    {ENGINE_SERVERS, "on a server fabric: "},
};

void schedule_algorithms_help(struct strbuf *sb, const char *indent, size_t width)
{
	/* a paragraph a kind of fabric */
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct strbuf t = STRBUF_INIT, all = STRBUF_INIT;

		sb_puts(&t, kinds[i].what);
		grouped(&t, kinds[i].fabrics, BY_SERVES, ", ", "; ", "; ");
		grouped(&all, kinds[i].fabrics, BY_IN_ALL, ", ", "; ", "; ");
		if (all.len)
			sb_printf(&t, "; 'all' compares %s", all.buf);
		wrap(sb, t.buf, indent, indent, width);
		sb_free(&t);
		sb_free(&all);
	}
}

void schedule_lowerings_help(struct strbuf *sb, const char *lead, const char *indent, size_t width)
{
	struct strbuf t = STRBUF_INIT;

	sb_puts(&t, "all-to-all mcf: ");
	a2a_lowering_names(&t, true, " or ");
	sb_puts(&t, "; by default steps when its MCF proves its optimum within --steps-try and "
		    "its schedule fits --max-memory, else paths, and the command says why");
	wrap(sb, t.buf, lead, indent, width);
	sb_free(&t);
}

void schedule_algorithms_one(struct strbuf *sb, const char *lead, const char *indent, size_t width)
{
	struct strbuf t = STRBUF_INIT;

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		const char *sep = "";

		sb_printf(&t, "%s%s", k ? "; " : "", kinds[k].what);
		for (size_t i = 0; i < ARRAY_SIZE(engines); i++) {
			const struct engine_ops *e = &engines[i];

			if (!(e->fabrics & kinds[k].fabrics) || (e->flags & ENGINE_COMPARE))
				continue;
			sb_printf(&t, "%s%s", sep, e->name);
			if (e->defaults & ENGINE_C(SCHED_ALLGATHER))
				sb_puts(&t, " (default)");
			else if (e->defaults & ENGINE_C(SCHED_ALLTOALL))
				sb_puts(&t, " (alltoall's default)");
			sep = ", ";
		}
	}
	if (width)
		wrap(sb, t.buf, lead, indent, width);
	else
		sb_printf(sb, "%s%s", lead, t.buf);
	sb_free(&t);
}
