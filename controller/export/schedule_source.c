/* The schedules the testbed runs and libofc-mpi reads, computed in this
 * process (schedule_here): what `ofc testbed` passes the shared testbed
 * and export code. ofcd passes its own, which asks a planner process
 * (ofcd/testbed_schedules.c) and decodes what this file's pb would be. */
#include "controller/export/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* r's main schedule as mpirun's file holds it (schedule_write_pb, the
 * summary's fields appended) into *pb. */
static int pb_of(const struct schedule_result *r, uint8_t **pb, size_t *len, struct ofc_error *err)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct arena a = {0};
	int rc;

	if (!f)
		return ofc_error_set(err, OFC_E_RUNTIME, "open_memstream: %s", strerror(errno));
	rc = schedule_write_pb(&r->main->s, f, err);
	if (rc == 0)
		rc = schedule_append_pb(schedule_extra_msg(&a, r), f, err);
	arena_free(&a);
	if (fclose(f) != 0 && rc == 0)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "writing the schedule: %s", strerror(errno));
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*pb = (uint8_t *)buf;
	*len = n;
	return 0;
}

int schedule_got_of(const struct schedule_query *q, struct schedule_result *r,
		    enum schedule_got_what what, struct schedule_got *g, struct ofc_error *err)
{
	const struct schedule_outcome *o = r->main;

	memset(g, 0, sizeof(*g));
	if (q->algorithm && schedule_algorithm_compares(q->algorithm, ENGINE_DIRECT)) {
		g->applies = xcalloc((size_t)r->nout + 1, sizeof(*g->applies));
		for (uint32_t i = 0; i < r->nout; i++)
			if (r->out[i].applies)
				snprintf(g->applies[g->napplies++], sizeof(*g->applies), "%s",
					 r->out[i].algo);
		return 0;
	}
	g->have = o->applies && o->have;
	g->verified = g->have && o->verified;
	snprintf(g->why, sizeof(g->why), "%s", o->why);
	snprintf(g->verify_error, sizeof(g->verify_error), "%s", o->verify_error);
	if (!g->have)
		return 0;
	if (what == SCHEDULE_GOT_PB)
		return pb_of(r, &g->pb, &g->pb_len, err);
	/* (moved out: the result is freed after) */
	g->s = r->main->s;
	memset(&r->main->s, 0, sizeof(r->main->s));
	return 0;
}

static int here(void *ctx, const struct schedule_query *q, enum schedule_got_what what,
		struct schedule_got *g, struct ofc_error *err)
{
	struct schedule_result r;
	int rc;

	(void)ctx;
	memset(g, 0, sizeof(*g));
	if (schedule_compute(q, &r, NULL, err) < 0)
		return -1;
	rc = schedule_got_of(q, &r, what, g, err);
	schedule_result_free(&r);
	if (rc < 0)
		schedule_got_free(g);
	return rc;
}

const struct schedule_source schedule_here = {here, NULL};
