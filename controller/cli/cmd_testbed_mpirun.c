/* ofc testbed mpirun FILE [--mpi mpich|openmpi] [--no-preload] [--json]
 *     -- PROGRAM [ARGS...]: an unmodified MPI program on the testbed's
 * hosts and circuits, one rank per host namespace, with libofc-mpi
 * preloaded running ofc's schedules for the topology the hosts hold
 * (computed here and written as the files OFC_SCHEDULE names), or the
 * MPI's own collectives on the same links (--no-preload). Prints what the
 * library counted per collective and the bytes that crossed the circuits
 * (controller/testbed/mpirun.c runs it). */
#include "controller/cli/internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "Runs PROGRAM (an MPI program, unmodified) as one rank per host namespace over\n"
    "the circuits the hosts hold, with libofc-mpi preloaded: its MPI_Allreduce,\n"
    "MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall and MPI_Bcast run ofc's\n"
    "schedules for the committed topology (docs/mpi.md). Prints the program's output,\n"
    "then per collective the calls, those ofc's schedules ran, the fallbacks to the\n"
    "MPI's own and why, the bytes and the time, and the bytes that crossed the\n"
    "circuits. Exits with the program's status (1 when it timed out; 0 when every\n"
    "rank reached MPI_Finalize and it hung there, as MPICH's over UCX now and then\n"
    "does: the job is stopped 3 s after).\n";

struct mpirun_args {
	struct fabric_cmd fc;
	bool openmpi, no_preload;
	const char *ofcd; /* --ofcd SOCKET: ofcd's schedules, asked there */
	uint64_t size;
	double timeout;
	char **prog;
};

static int p_mpi(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	if (strcmp(arg, "mpich") && strcmp(arg, "openmpi"))
		return ofc_error_set(err, OFC_E_USAGE, "bad --%s '%s': mpich or openmpi", row->name,
				     arg);
	((struct mpirun_args *)base)->openmpi = strcmp(arg, "openmpi") == 0;
	return 0;
}

/* (offsets into struct mpirun_args: fabric_cmd_parse parses into its fc) */
_Static_assert(offsetof(struct mpirun_args, fc) == 0, "the rows' base is the fabric_cmd");
#define O(f) offsetof(struct mpirun_args, f)
static const struct opt mpirun_table[] = {
    {"mpi", p_mpi, O(openmpi), "mpich|openmpi", "the MPI (default mpich)"},
    {"no-preload", NULL, O(no_preload), NULL,
     "the MPI's own collectives on the same links (the library, given no schedule, only "
     "counts them)"},
    {"ofcd", opt_str, O(ofcd), "SOCKET",
     "the ranks ask ofcd at SOCKET for its schedules and take its re-plans (a failure's, a "
     "drain's) at their collectives, saying so (OFC_SCHEDULE=ofcd, OFC_SCHEDULE_WATCH=1)"},
    {"size", cli_row_size, O(size), "M",
     "the data per host the schedules are priced for (default 1MiB; they serve any size)"},
    {"timeout", cli_row_duration, O(timeout), "T", "stop the job after T (default 10min)", 1e-9,
     1e9, "must be more than 0"},
    MPIRUN_PROGRAM_ROW,
    {NULL},
};
#undef O

const struct cli_table mpirun_cli_table = {"testbed mpirun", mpirun_table,
					   sizeof(struct mpirun_args)};

static void print_text(const struct mpirun_shown *m, json_object *rep)
{
	const struct testbed_mpirun_result *r = m->r;
	const char *mpi = m->openmpi ? "Open MPI" : "MPICH",
		   *how = m->preload ? ", libofc-mpi preloaded" : ", its own collectives";
	json_object *colls = NULL;
	char mb[32];

	if (r->timed_out)
		printf("testbed %s mpirun: %u ranks, %s%s: stopped after %.0f s\n", m->fabric,
		       m->ranks, mpi, how, m->timeout);
	else if (r->finalize_hung)
		printf("testbed %s mpirun: %u ranks, %s%s: every rank reached MPI_Finalize, "
		       "which hung: stopped\n",
		       m->fabric, m->ranks, mpi, how);
	else
		printf("testbed %s mpirun: %u ranks, %s%s: exit %d\n", m->fabric, m->ranks, mpi,
		       how, r->exit_code);
	if (rep && json_object_object_get_ex(rep, "collectives", &colls)) {
		printf("  %-26s %8s %9s %9s %12s %10s\n", "collective", "calls", "ofc_calls",
		       "fallbacks", "MB", "seconds");
		for (size_t i = 0; i < json_object_array_length(colls); i++) {
			json_object *c = json_object_array_get_idx(colls, i), *v, *why = NULL;

			if (!json_object_object_get_ex(c, "calls", &v) || !json_object_get_int64(v))
				continue;
			printf("  %-26s %8lld",
			       json_object_get_string(json_object_object_get(c, "name")),
			       (long long)json_object_get_int64(v));
			printf(" %9lld %9lld %12.3f %10.6f",
			       (long long)json_object_get_int64(
				   json_object_object_get(c, "ofc_calls")),
			       (long long)json_object_get_int64(
				   json_object_object_get(c, "fallbacks")),
			       (double)json_object_get_int64(json_object_object_get(c, "bytes")) /
				   1e6,
			       json_object_get_double(json_object_object_get(c, "seconds")));
			json_object_object_get_ex(c, "fallback_reasons", &why);
			json_object_object_foreach(why, key, n)
			    printf(" %s %lld", key, (long long)json_object_get_int64(n));
			printf("\n");
		}
	} else if (m->preload) {
		printf("  (no report from libofc-mpi: did the program call MPI_Finalize?)\n");
	}
	if (r->circuit_bytes >= 0)
		snprintf(mb, sizeof(mb), "%.3f MB", r->circuit_bytes / 1e6);
	else
		snprintf(mb, sizeof(mb), "unreadable");
	printf("  circuit bytes: %s\n", mb);
}

static void print_json(const struct mpirun_shown *m, json_object *rep)
{
	const struct testbed_mpirun_result *r = m->r;
	json_object *o = json_object_new_object(), *v;
	static const char *const keep[] = {"collectives",    "schedules",   "mapping", "hosts",
					   "bytes_per_peer", "piece_bytes", "replans"};

	json_object_object_add(o, "exit_code",
			       r->exit_code >= 0 ? json_object_new_int(r->exit_code) : NULL);
	json_object_object_add(o, "timed_out", json_object_new_boolean(r->timed_out));
	json_object_object_add(o, "finalize_hung", json_object_new_boolean(r->finalize_hung));
	json_object_object_add(o, "ranks", json_object_new_int64(m->ranks));
	json_object_object_add(o, "mpi", json_object_new_string(m->openmpi ? "openmpi" : "mpich"));
	json_object_object_add(o, "preload", json_object_new_boolean(m->preload));
	json_object_object_add(o, "topology", json_object_new_string(m->topology));
	json_object_object_add(
	    o, "circuit_bytes",
	    r->circuit_bytes >= 0 ? json_object_new_int64((int64_t)r->circuit_bytes) : NULL);
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (rep && json_object_object_get_ex(rep, keep[i], &v))
			json_object_object_add(o, keep[i], json_object_get(v));
	if (!json_object_object_get_ex(o, "collectives", &v))
		json_object_object_add(o, "collectives", json_object_new_array());
	json_object_object_add(
	    o, "output",
	    json_object_new_string_len(r->output ? r->output : "", (int)r->output_len));
	json_object_object_add(o, "output_cut", json_object_new_boolean(r->output_cut));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int testbed_mpirun_print(const struct mpirun_shown *m, bool json)
{
	const struct testbed_mpirun_result *r = m->r;
	json_object *rep = NULL;

	if (r->report && !(rep = json_tokener_parse(r->report)))
		fprintf(stderr, "ofc testbed mpirun: libofc-mpi's report is not JSON\n");
	if (json)
		print_json(m, rep);
	else
		print_text(m, rep);
	json_object_put(rep);
	/* (a hung MPI_Finalize after every rank reached it: the program ran) */
	return r->timed_out ? 1 : r->finalize_hung ? 0 : r->exit_code;
}

/* The fabric, its testbed, the committed topology's schedules in a
 * scratch directory, the job; its exit status. */
static int mpirun(struct mpirun_args *a)
{
	struct ofc_error err = {0};
	struct testbed_topo committed = {0};
	struct testbed_mpirun_result r = {0};
	struct testbed_net t;
	char dir[] = "/tmp/ofc-mpirun-XXXXXX";
	char *schedules = NULL, *lib = NULL;
	const struct fabric *f;
	const char *spec;
	struct strbuf notes = {0};
	int status = 1;

	if (testbed_need_root(&err) < 0 || fabric_open(a->fc.file, &a->fc.fabric, &err) < 0)
		return cli_fail(&err);
	if (testbed_net_read(a->fc.fabric, a->fc.state_dir, &t, &err) < 0)
		return cli_fail(&err);
	if (testbed_topo_committed(&a->fc, &committed, &err) < 0 || !mkdtemp(dir)) {
		if (!err.code)
			ofc_error_set(&err, OFC_E_RUNTIME, "mkdtemp: %s", strerror(errno));
		status = cli_fail(&err);
		goto out_net;
	}
	f = committed.open ? &committed.f : a->fc.fabric;
	spec = committed.open ? committed.spec : f->topology.spec ? f->topology.spec : "";
	lib = mpirun_library(a->openmpi);
	if (!lib || access(lib, R_OK) != 0) {
		ofc_error_set(&err, OFC_E_RUNTIME,
			      "libofc-mpi (make mpi builds it) is not at %s; OFC_MPI_LIB names "
			      "another",
			      lib ? lib : "the directory of ofc");
		status = cli_fail(&err);
		goto out;
	}
	/* (ofcd's: the ranks find its socket in their environment) */
	if (a->ofcd && !a->no_preload && setenv("OFC_SOCKET", a->ofcd, 1) == 0 &&
	    setenv("OFC_SCHEDULE_WATCH", "1", 1) == 0)
		schedules = xstrdup("ofcd");
	else
		schedules = a->no_preload ? xstrdup("")
					  : mpirun_schedules_write(&schedule_here, f, a->size, dir,
								   &notes, &err);
	if (notes.len)
		fprintf(stderr, "ofc testbed mpirun: %s", notes.buf);
	if (!schedules) {
		status = cli_fail(&err);
		goto out;
	}
	fflush(stdout);
	if (testbed_mpirun(a->fc.fabric, &t,
			   &(struct testbed_mpirun_opts){.openmpi = a->openmpi,
							 .preload = lib,
							 .schedules = schedules,
							 .argv = a->prog,
							 .dir = dir,
							 .timeout = a->timeout,
							 .capture = a->fc.json},
			   &r, &err) < 0) {
		status = cli_fail(&err);
		goto out;
	}
	status = testbed_mpirun_print(&(struct mpirun_shown){.fabric = a->fc.fabric->name,
							     .topology = spec,
							     .ranks = t.nhosts,
							     .openmpi = a->openmpi,
							     .preload = !a->no_preload,
							     .timeout = a->timeout,
							     .r = &r},
				      a->fc.json);
	testbed_mpirun_free(&r);
out:
	mpirun_schedules_remove(dir);
	rmdir(dir);
	free(schedules);
	sb_free(&notes);
	free(lib);
	testbed_topo_free(&committed);
out_net:
	testbed_net_free(&t);
	return status;
}

int cmd_testbed_mpirun(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct mpirun_args a = {.size = 1u << 20, .timeout = 600};
	int dash = 0, rc;

	while (dash < argc && strcmp(argv[dash], "--") != 0)
		dash++;
	/* its own usage: the action's operands, then its rows */
	const struct cli_cmd mpirun_cmd = {cmd->name, "mpirun FILE", cmd->summary, NULL};

	rc = fabric_cmd_parse(&a.fc, &mpirun_cmd, dash, argv,
			      (const struct opt *const[]){mpirun_table, NULL}, help, false);
	a.fc.cmd = cmd;
	if (rc)
		return rc < 0 ? 0 : rc;
	if (dash >= argc - 1) {
		free(a.fc.state_dir);
		return cli_usage_error(cmd, "mpirun: missing -- PROGRAM [ARGS...]");
	}
	if (a.ofcd && a.no_preload) {
		free(a.fc.state_dir);
		fabric_free(a.fc.fabric);
		return cli_usage_error(cmd, "mpirun: --ofcd's schedules need the library: not "
					    "with --no-preload");
	}
	a.prog = argv + dash + 1;
	rc = mpirun(&a);
	fabric_free(a.fc.fabric);
	free(a.fc.state_dir);
	return rc;
}
