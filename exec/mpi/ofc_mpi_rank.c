/* ofc-mpi-rank: one rank of the MPI baseline that `ofc testbed run --mpi`
 * sets beside ofc's own schedules. Started by MPICH's mpiexec,
 * one process per testbed host:
 *
 *   mpiexec -n N ofc-mpi-rank HOSTS-FILE COLLECTIVE SIZE ITERATIONS
 *
 * Hydra's proxy forks the ranks in the caller's namespace; before MPI_Init
 * each rank reads its line of HOSTS-FILE ("NETNS DEVICE", line PMI_RANK),
 * enters that network namespace and tells UCX to use TCP on DEVICE, the
 * interface that holds the host's routed address. The PMI connection is an
 * inherited descriptor, so it survives the switch; every byte between ranks
 * then goes over the testbed's circuits and routes.
 *
 * Data: element i of rank r is a hash of (r, i) (uint32); allreduce sums
 * modulo 2^32; every element of the result is checked on every rank. The
 * timed part is ITERATIONS collectives after one untimed warm-up, each rank
 * timing its own and the slowest rank's mean reported.
 *
 * Output (rank 0, one line on stdout):
 *   {"seconds": S, "data_ok": true, "checked_elements": E, "bad_elements": B}
 * Exit status 0 when the data is right, 1 when it is not, 2 on bad usage. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "exec/mpi/netns_enter.h"

#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t value(uint32_t r, uint64_t i)
{
	uint64_t x = ((uint64_t)r << 40) ^ i ^ 0x9e3779b97f4a7c15ull;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static int enter_host(const char *hosts_file)
{
	const char *r = getenv("PMI_RANK");
	char host[256];

	if (!r) {
		fprintf(stderr, "ofc-mpi-rank: PMI_RANK is not set (start me with mpiexec)\n");
		return -1;
	}
	return netns_enter("ofc-mpi-rank", hosts_file, atoi(r), host, sizeof(host));
}

enum coll { ALLREDUCE, ALLTOALL, ALLGATHER, REDUCE_SCATTER };

static int parse_coll(const char *s, enum coll *c)
{
	static const char *const names[] = {"allreduce", "alltoall", "allgather", "reduce-scatter"};

	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*c = (enum coll)i;
			return 0;
		}
	return -1;
}

static void run(enum coll c, uint32_t *in, uint32_t *out, int block)
{
	switch (c) {
	case ALLREDUCE:
		MPI_Allreduce(in, out, block, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		MPI_Alltoall(in, block, MPI_UINT32_T, out, block, MPI_UINT32_T, MPI_COMM_WORLD);
		break;
	case ALLGATHER:
		MPI_Allgather(in, block, MPI_UINT32_T, out, block, MPI_UINT32_T, MPI_COMM_WORLD);
		break;
	case REDUCE_SCATTER:
		MPI_Reduce_scatter_block(in, out, block, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
		break;
	}
}

/* The element of rank `rank`'s result at i; `n` elements per block. */
static uint32_t expected(enum coll c, int rank, int nranks, uint64_t n, uint64_t i)
{
	uint32_t sum = 0;

	switch (c) {
	case ALLREDUCE:
		for (int r = 0; r < nranks; r++)
			sum += value((uint32_t)r, i);
		return sum;
	case ALLTOALL: /* block b comes from rank b: its block `rank` */
		return value((uint32_t)(i / n), (uint64_t)rank * n + i % n);
	case ALLGATHER:
		return value((uint32_t)(i / n), i % n);
	case REDUCE_SCATTER:
		for (int r = 0; r < nranks; r++)
			sum += value((uint32_t)r, (uint64_t)rank * n + i);
		return sum;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum coll c;
	int rank, nranks, iters;
	unsigned long long size;
	uint64_t nin, nout, n, bad = 0, tbad;
	uint32_t *in, *out;
	double t0, mine, slowest;
	char *end;

	if (argc != 5 || parse_coll(argv[2], &c) < 0) {
		fprintf(stderr, "usage: mpiexec -n N ofc-mpi-rank HOSTS-FILE "
				"allreduce|alltoall|allgather|reduce-scatter SIZE ITERATIONS\n");
		return 2;
	}
	errno = 0;
	size = strtoull(argv[3], &end, 10);
	iters = atoi(argv[4]);
	if (errno || *end || size < 4 || iters < 1 || iters > 1000) {
		fprintf(stderr, "ofc-mpi-rank: bad SIZE '%s' or ITERATIONS '%s'\n", argv[3],
			argv[4]);
		return 2;
	}
	if (enter_host(argv[1]) < 0)
		return 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	/* SIZE bytes per rank, as ofc's runs: a block is SIZE / N bytes. */
	n = size / 4 / (uint64_t)nranks;
	if (n == 0 || n > INT32_MAX) {
		if (rank == 0)
			fprintf(stderr, "ofc-mpi-rank: SIZE %llu gives %llu elements per block\n",
				size, (unsigned long long)n);
		MPI_Finalize();
		return 2;
	}
	nin = c == REDUCE_SCATTER || c == ALLREDUCE || c == ALLTOALL ? n * nranks : n;
	nout = c == REDUCE_SCATTER ? n : n * nranks;
	in = malloc(nin * 4);
	out = malloc(nout * 4);
	if (!in || !out) {
		fprintf(stderr, "ofc-mpi-rank: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (uint64_t i = 0; i < nin; i++)
		in[i] = value((uint32_t)rank, i);
	run(c, in, out, (int)(c == ALLREDUCE ? n * nranks : n));
	memset(out, 0, nout * 4);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int k = 0; k < iters; k++)
		run(c, in, out, (int)(c == ALLREDUCE ? n * nranks : n));
	mine = (MPI_Wtime() - t0) / iters;
	for (uint64_t i = 0; i < nout; i++)
		bad += out[i] != expected(c, rank, nranks, n, i);
	MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&bad, &tbad, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("{\"seconds\": %.9g, \"data_ok\": %s, \"checked_elements\": %llu, "
		       "\"bad_elements\": %llu}\n",
		       slowest, tbad ? "false" : "true",
		       (unsigned long long)(nout * (uint64_t)nranks), (unsigned long long)tbad);
	free(in);
	free(out);
	fflush(stdout);
	MPI_Finalize();
	return tbad ? 1 : 0;
}
