/* The MCF's lowerings by name: the one list that `--lowering` and
 * GetSchedule's lowering field are checked against, their help and
 * refusals name, and a comparison's mcf rows run through. a2a_build and
 * a2a_reduced lower by it (alltoall.c). */
#include "alltoall/alltoall.h"

#include <string.h>

/* In the order the lists name them and a comparison runs them; the first
 * is what a request that names none starts from. */
static const struct a2a_lowering lowerings[] = {
    {.name = "steps", .kind = A2A_LOWER_STEPS, .what = "time-stepped"},
    {.name = "paths",
     .kind = A2A_LOWER_PATHS,
     .what = "weighted, at most d per pair",
     .reduces = true},
    {.name = "single", .kind = A2A_LOWER_SINGLE, .what = "one path per pair", .reduces = true},
};

const struct a2a_lowering *a2a_lowering_at(unsigned i)
{
	return i < ARRAY_SIZE(lowerings) ? &lowerings[i] : NULL;
}

const struct a2a_lowering *a2a_lowering_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(lowerings); i++)
		if (strcmp(lowerings[i].name, name) == 0)
			return &lowerings[i];
	return NULL;
}

void a2a_lowering_names(struct strbuf *sb, bool what, const char *last)
{
	for (size_t i = 0; i < ARRAY_SIZE(lowerings); i++) {
		if (i)
			sb_puts(sb, i + 1 == ARRAY_SIZE(lowerings) ? last : ", ");
		sb_puts(sb, lowerings[i].name);
		if (what)
			sb_printf(sb, " (%s)", lowerings[i].what);
	}
}
