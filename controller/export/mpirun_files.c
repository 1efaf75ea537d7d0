/* What `ofc testbed mpirun` and ofcd's TestbedMpirun give libofc-mpi, made
 * once for both: the four collectives' schedules for a fabric's topology,
 * by their default algorithms, verified, written as the protobuf files
 * OFC_SCHEDULE names (as `ofc schedule --format pb` writes them, the
 * summary's fields appended), computed by the caller's source (the CLI's
 * in its own process, ofcd's in a planner process), and where the library
 * is. */
#include "controller/export/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const enum sched_collective kinds[] = {SCHED_ALLREDUCE, SCHED_ALLGATHER,
					      SCHED_REDUCE_SCATTER, SCHED_ALLTOALL};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* g's bytes into path: 0, or -1 with err. */
static int write_one(const char *path, const struct schedule_got *g, struct ofc_error *err)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (!f)
		return ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	if (g->pb_len && fwrite(g->pb, 1, g->pb_len, f) != g->pb_len)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "%s: short write", path);
	if (fclose(f) != 0 && rc == 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "%s: %s", path, strerror(errno));
	return rc;
}

char *mpirun_schedules_write(const struct schedule_source *src, const struct fabric *f,
			     uint64_t size, const char *dir, struct strbuf *notes,
			     struct ofc_error *err)
{
	struct strbuf list = {0};

	for (size_t i = 0; i < NKINDS; i++) {
		struct schedule_query q = {.fabric = f, .collective = kinds[i], .size = size};
		const char *name = sched_collective_name(kinds[i]);
		char *path = xasprintf("%s/%s.pb", dir, name);
		struct schedule_got g;
		int rc = -1;

		if (src->compute(src->ctx, &q, SCHEDULE_GOT_PB, &g, err) < 0) {
			free(path);
			sb_free(&list);
			return NULL;
		}
		if (!g.have || !g.verified)
			sb_printf(notes, "no verified %s schedule (%s): the MPI's own runs it\n",
				  name, g.why[0] ? g.why : g.verify_error);
		else
			rc = write_one(path, &g, err);
		schedule_got_free(&g);
		if (rc == 0)
			sb_printf(&list, "%s%s", list.len ? ":" : "", path);
		free(path);
		if (err->code) {
			sb_free(&list);
			return NULL;
		}
	}
	return list.buf ? list.buf : xstrdup("");
}

void mpirun_schedules_remove(const char *dir)
{
	for (size_t i = 0; i < NKINDS; i++) {
		char *p = xasprintf("%s/%s.pb", dir, sched_collective_name(kinds[i]));

		unlink(p);
		free(p);
	}
}

char *mpirun_library(bool openmpi)
{
	const char *env = getenv("OFC_MPI_LIB"),
		   *name = openmpi ? "libofc-mpi-openmpi.so" : "libofc-mpi.so";
	char *p, *sub;

	if (env && *env)
		return xstrdup(env);
	p = exe_sibling(NULL, name);
	if (!p || access(p, R_OK) == 0)
		return p;
	free(p);
	sub = xasprintf("../lib/ofc/%s", name);
	p = exe_sibling(NULL, sub);
	free(sub);
	return p;
}
