/* libofc-mpi: the report at MPI_Finalize.
 *
 * Every rank's counts are summed on rank 0 (times: the slowest rank's),
 * with the bytes each rank sent each other by the schedules, and rank 0
 * writes them as one JSON object to OFC_MPI_REPORT (written beside and
 * renamed, so a reader never sees half of one), through json-c:
 *
 *   {"library", "mpi", "ranks", "mapping", "hosts": [rank's host],
 *    "schedules": [{"file", "collective", "algorithm", "topology", "nodes",
 *                   "steps", "transfers", "time_us", "size_bytes", "ok",
 *                   "error"}],
 *    "collectives": [{"name", "calls", "ofc_calls", "fallbacks",
 *                     "fallback_reasons": {reason: calls}, "bytes",
 *                     "sent_bytes", "seconds", "ofc_seconds"}],
 *    "bytes_per_peer": [[bytes rank i sent rank j]]}
 *
 * Counts are summed over the ranks (a collective on MPI_COMM_WORLD called
 * once is `ranks` calls); bytes are the calls' data (each rank's buffer:
 * an allreduce's count, an all-gather's result), sent_bytes what the
 * schedules sent. */
#include "exec/mpi/pmpi.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PMPI_PEERS_MAX 4096 /* ranks beyond which bytes_per_peer is left out */

enum { U_CALLS, U_OFC, U_BYTES, U_SENT, U_REASONS, U_PER = U_REASONS + PR_COUNT };

static json_object *schedules_json(const struct pmpi_state *s)
{
	json_object *a = json_object_new_array();

	for (uint32_t i = 0; i < s->nsched; i++) {
		const struct pmpi_sched *sc = &s->sched[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "file", json_object_new_string(sc->file));
		json_object_object_add(
		    o, "collective",
		    sc->kind_known ? json_object_new_string(pmpi_kind_names[sc->kind]) : NULL);
		json_object_object_add(o, "algorithm", json_object_new_string(sc->algorithm));
		json_object_object_add(o, "topology", json_object_new_string(sc->topology));
		json_object_object_add(o, "nodes", json_object_new_int64(sc->nodes));
		json_object_object_add(o, "steps", json_object_new_int64(sc->prog.nsteps));
		json_object_object_add(o, "transfers",
				       json_object_new_int64((int64_t)sc->transfers));
		json_object_object_add(o, "time_us", json_object_new_double(sc->time_us));
		json_object_object_add(o, "size_bytes",
				       json_object_new_int64((int64_t)sc->size_bytes));
		json_object_object_add(o, "ok", json_object_new_boolean(!sc->error[0]));
		json_object_object_add(o, "error",
				       sc->error[0] ? json_object_new_string(sc->error) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *collective_json(enum pmpi_coll k, const uint64_t *u, const double *d)
{
	json_object *o = json_object_new_object(), *why = json_object_new_object();
	uint64_t fallbacks = 0;

	for (int r = 0; r < PR_COUNT; r++) {
		fallbacks += u[U_REASONS + r];
		if (u[U_REASONS + r])
			json_object_object_add(why, pmpi_reason_names[r],
					       json_object_new_int64((int64_t)u[U_REASONS + r]));
	}
	json_object_object_add(o, "name", json_object_new_string(pmpi_coll_names[k]));
	json_object_object_add(o, "calls", json_object_new_int64((int64_t)u[U_CALLS]));
	json_object_object_add(o, "ofc_calls", json_object_new_int64((int64_t)u[U_OFC]));
	json_object_object_add(o, "fallbacks", json_object_new_int64((int64_t)fallbacks));
	json_object_object_add(o, "fallback_reasons", why);
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)u[U_BYTES]));
	json_object_object_add(o, "sent_bytes", json_object_new_int64((int64_t)u[U_SENT]));
	json_object_object_add(o, "seconds", json_object_new_double(d[0]));
	json_object_object_add(o, "ofc_seconds", json_object_new_double(d[1]));
	return o;
}

static void write_report(const char *path, json_object *root)
{
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	char *tmp = malloc(strlen(path) + 32);
	FILE *f;

	if (!tmp)
		return;
	sprintf(tmp, "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "libofc-mpi: cannot write the report to %s\n", path);
		unlink(tmp);
	}
	free(tmp);
}

static json_object *peers_json(const struct pmpi_state *s, const uint64_t *m)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < s->size; i++) {
		json_object *row = json_object_new_array();

		for (int j = 0; j < s->size; j++)
			json_object_array_add(
			    row, json_object_new_int64((int64_t)m[(size_t)i * s->size + j]));
		json_object_array_add(a, row);
	}
	return a;
}

void pmpi_report(struct pmpi_state *s)
{
	const char *path = getenv("OFC_MPI_REPORT");
	uint64_t u[PC_COUNT][U_PER], su[PC_COUNT][U_PER], *m = NULL;
	double d[PC_COUNT][2], sd[PC_COUNT][2];
	bool peers = s->size <= PMPI_PEERS_MAX;
	char version[MPI_MAX_LIBRARY_VERSION_STRING];
	json_object *root, *colls, *hosts;
	int vlen = 0;

	if (!path || !*path)
		return;
	for (int k = 0; k < PC_COUNT; k++) {
		const struct pmpi_stats *st = &s->stats[k];

		u[k][U_CALLS] = st->calls;
		u[k][U_OFC] = st->ofc_calls;
		u[k][U_BYTES] = st->bytes;
		u[k][U_SENT] = st->sent_bytes;
		memcpy(&u[k][U_REASONS], st->fallbacks, sizeof(st->fallbacks));
		d[k][0] = st->seconds;
		d[k][1] = st->ofc_seconds;
	}
	PMPI_Reduce(u, su, PC_COUNT * U_PER, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	PMPI_Reduce(d, sd, PC_COUNT * 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (peers && s->rank == 0 && !(m = calloc((size_t)s->size * s->size, sizeof(uint64_t)))) {
		fprintf(stderr, "libofc-mpi: out of memory for the report\n");
		abort();
	}
	if (peers)
		PMPI_Gather(s->peer_bytes, s->size, MPI_UINT64_T, m, s->size, MPI_UINT64_T, 0,
			    MPI_COMM_WORLD);
	if (s->rank != 0)
		return;
	PMPI_Get_library_version(version, &vlen);
	version[strcspn(version, "\n")] = 0;
	root = json_object_new_object();
	json_object_object_add(root, "library", json_object_new_string("libofc-mpi"));
	json_object_object_add(root, "mpi", json_object_new_string(version));
	json_object_object_add(root, "ranks", json_object_new_int(s->size));
	json_object_object_add(root, "mapping", json_object_new_string(s->mapping));
	json_object_object_add(root, "replans", json_object_new_int64((int64_t)s->replans));
	hosts = json_object_new_array();
	for (int r = 0; r < s->size; r++)
		json_object_array_add(hosts, json_object_new_string(s->hosts[r]));
	json_object_object_add(root, "hosts", hosts);
	json_object_object_add(root, "schedules", schedules_json(s));
	colls = json_object_new_array();
	for (int k = 0; k < PC_COUNT; k++)
		json_object_array_add(colls, collective_json((enum pmpi_coll)k, su[k], sd[k]));
	json_object_object_add(root, "collectives", colls);
	if (peers)
		json_object_object_add(root, "bytes_per_peer", peers_json(s, m));
	write_report(path, root);
	json_object_put(root);
	free(m);
}
