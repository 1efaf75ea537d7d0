/* libofc-mpi: the report at MPI_Finalize.
 *
 * Every rank's counts are summed on rank 0 (times: the slowest rank's),
 * with the bytes each rank sent each other by the schedules, and rank 0
 * writes them as one JSON object to OFC_MPI_REPORT (written beside and
 * renamed, so a reader never sees half of one), through json-c:
 *
 *   {"library", "mpi", "ranks", "mapping", "replans", "piece_bytes",
 *    "hosts": [rank's host],
 *    "schedules": [{"file", "collective", "algorithm", "topology", "nodes",
 *                   "steps", "transfers", "time_us", "size_bytes", "ok",
 *                   "error"}],
 *    "collectives": [{"name", "calls", "ofc_calls", "fallbacks",
 *                     "fallback_reasons": {reason: calls}, "bytes",
 *                     "sent_bytes", "seconds", "ofc_seconds"}],
 *    "bytes_per_peer": [[bytes rank i sent rank j]],
 *    "ofcd_report": {"sent", "message"}}
 *
 * Counts are summed over the ranks (a collective on MPI_COMM_WORLD called
 * once is `ranks` calls); bytes are the calls' data (each rank's buffer:
 * an allreduce's count, an all-gather's result), sent_bytes what the
 * schedules sent.
 *
 * With OFC_SCHEDULE=ofcd rank 0 also sends them to ofcd (a ReportMpi, for
 * the partition it asked the schedules of; bytes_per_peer up to 256 ranks,
 * ofcd's bound), and says in ofcd_report whether ofcd kept them; one it
 * did not is a line on stderr. */
#include "exec/mpi/pmpi.h"

#include "proto/control.pb-c.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PMPI_PEERS_MAX	4096 /* ranks beyond which bytes_per_peer is left out */
#define PMPI_PEERS_SENT 256  /* ... of the report sent to ofcd (its bound) */

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

/* r's partition, ranks, hosts (hosts: size + 1 pointers) and job: who
 * the job is, as ofcd checks it. */
static void report_job(const struct pmpi_state *s, Ofc__V1__ReportMpi *r, char **hosts, char *buf,
		       size_t n)
{
	r->partition = (char *)pmpi_ofcd_partition(buf, n);
	r->has_ranks = 1;
	r->ranks = (uint32_t)s->size;
	for (int i = 0; i < s->size; i++)
		hosts[i] = (char *)s->hosts[i];
	r->n_hosts = (size_t)s->size;
	r->hosts = hosts;
	r->job = s->job[0] ? (char *)s->job : NULL;
}

int pmpi_report_taken(const struct pmpi_state *s, char *why, size_t n)
{
	Ofc__V1__ReportMpi r = OFC__V1__REPORT_MPI__INIT;
	char buf[128], **hosts = calloc((size_t)s->size + 1, sizeof(*hosts));
	int rc;

	if (!hosts)
		abort();
	report_job(s, &r, hosts, buf, sizeof(buf));
	r.has_taken = r.has_replans = 1;
	r.taken = 1;
	r.replans = s->replans;
	rc = pmpi_ofcd_report(&r, why, n);
	free(hosts);
	return rc;
}

/* The report as ofcd takes it (ReportMpi): sent, and ofcd's words or why
 * not in why. */
static bool send_report(const struct pmpi_state *s, uint64_t su[PC_COUNT][U_PER],
			double sd[PC_COUNT][2], const uint64_t *m, const char *version, char *why,
			size_t n)
{
	Ofc__V1__ReportMpi r = OFC__V1__REPORT_MPI__INIT;
	Ofc__V1__MpiCollective cs[PC_COUNT], *cp[PC_COUNT];
	Ofc__V1__MpiFallback fb[PC_COUNT][PR_COUNT], *fp[PC_COUNT][PR_COUNT];
	char buf[128], **hosts = calloc((size_t)s->size + 1, sizeof(*hosts));
	bool ok;

	if (!hosts)
		abort();
	report_job(s, &r, hosts, buf, sizeof(buf));
	r.has_replans = 1;
	r.replans = s->replans;
	r.mpi = (char *)version;
	r.mapping = (char *)s->mapping;
	for (int k = 0; k < PC_COUNT; k++) {
		Ofc__V1__MpiCollective *c = &cs[k];

		ofc__v1__mpi_collective__init(c);
		c->name = (char *)pmpi_coll_names[k];
		c->has_calls = c->has_ofc_calls = c->has_bytes = c->has_sent_bytes = 1;
		c->has_seconds = 1;
		c->calls = su[k][U_CALLS];
		c->ofc_calls = su[k][U_OFC];
		c->bytes = su[k][U_BYTES];
		c->sent_bytes = su[k][U_SENT];
		c->seconds = sd[k][0];
		c->fallbacks = fp[k];
		for (int w = 0; w < PR_COUNT; w++) {
			if (!su[k][U_REASONS + w])
				continue;
			ofc__v1__mpi_fallback__init(&fb[k][w]);
			fb[k][w].reason = (char *)pmpi_reason_names[w];
			fb[k][w].has_calls = 1;
			fb[k][w].calls = su[k][U_REASONS + w];
			fp[k][c->n_fallbacks++] = &fb[k][w];
		}
		cp[k] = c;
	}
	r.n_collectives = PC_COUNT;
	r.collectives = cp;
	if (m && s->size <= PMPI_PEERS_SENT) {
		r.n_bytes_per_peer = (size_t)s->size * s->size;
		r.bytes_per_peer = (uint64_t *)m;
	}
	ok = pmpi_ofcd_report(&r, why, n) == 0;
	free(hosts);
	return ok;
}

void pmpi_report(struct pmpi_state *s)
{
	const char *path = getenv("OFC_MPI_REPORT");
	uint64_t u[PC_COUNT][U_PER], su[PC_COUNT][U_PER], *m = NULL;
	double d[PC_COUNT][2], sd[PC_COUNT][2];
	bool peers = s->size <= PMPI_PEERS_MAX, sent = false;
	char version[MPI_MAX_LIBRARY_VERSION_STRING], why[PMPI_ERROR_MAX];
	json_object *root, *colls, *hosts, *o;
	int vlen = 0;

	if ((!path || !*path) && !s->from_ofcd)
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
	if (s->from_ofcd) {
		sent = send_report(s, su, sd, m, version, why, sizeof(why));
		if (!sent)
			fprintf(stderr, "libofc-mpi: the report was not sent to ofcd: %s\n", why);
	}
	if (!path || !*path) {
		free(m);
		return;
	}
	root = json_object_new_object();
	json_object_object_add(root, "library", json_object_new_string("libofc-mpi"));
	json_object_object_add(root, "mpi", json_object_new_string(version));
	json_object_object_add(root, "ranks", json_object_new_int(s->size));
	json_object_object_add(root, "mapping", json_object_new_string(s->mapping));
	json_object_object_add(root, "replans", json_object_new_int64((int64_t)s->replans));
	json_object_object_add(root, "piece_bytes", json_object_new_int64((int64_t)s->piece));
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
	if (s->from_ofcd) {
		o = json_object_new_object();
		json_object_object_add(o, "sent", json_object_new_boolean(sent));
		json_object_object_add(o, "message", json_object_new_string(why));
		json_object_object_add(root, "ofcd_report", o);
	}
	write_report(path, root);
	json_object_put(root);
	free(m);
}
