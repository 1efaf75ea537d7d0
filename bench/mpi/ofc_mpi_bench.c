/* ofc-mpi-bench: one collective, timed, written with the MPI standard
 * alone (bench/mpi.sh runs it with and without libofc-mpi):
 *
 *   mpiexec -n N ofc-mpi-bench COLLECTIVE BYTES ITERATIONS
 *
 * COLLECTIVE is allreduce, allgather, reduce-scatter or alltoall; BYTES
 * the data per rank as ofc's --size means it (allreduce and all-to-all:
 * each rank's buffer; all-gather: the result; reduce-scatter: the input),
 * in uint32 elements (at least one a block). One untimed call, then
 * ITERATIONS (0: none) timed between barriers. Rank 0 prints
 *   {"collective": C, "bytes": B, "ranks": N, "iterations": K, "seconds": S}
 * S the slowest rank's mean per call. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run(const char *c, uint32_t *in, uint32_t *out, int block)
{
	if (strcmp(c, "allreduce") == 0)
		MPI_Allreduce(in, out, block, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
	else if (strcmp(c, "allgather") == 0)
		MPI_Allgather(in, block, MPI_UINT32_T, out, block, MPI_UINT32_T, MPI_COMM_WORLD);
	else if (strcmp(c, "reduce-scatter") == 0)
		MPI_Reduce_scatter_block(in, out, block, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
	else
		MPI_Alltoall(in, block, MPI_UINT32_T, out, block, MPI_UINT32_T, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	static const char *const colls[] = {"allreduce", "allgather", "reduce-scatter", "alltoall"};
	int rank, n, iters, known = 0, block;
	unsigned long long bytes;
	double t0, mine = 0, slowest = 0;
	uint32_t *in, *out;
	size_t elems;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int i = 0; argc == 4 && i < 4; i++)
		known |= strcmp(argv[1], colls[i]) == 0;
	bytes = argc == 4 ? strtoull(argv[2], NULL, 10) : 0;
	iters = argc == 4 ? atoi(argv[3]) : -1;
	elems = bytes / 4;
	if (!known || elems < (size_t)n || elems > (1ull << 30) || iters < 0 || iters > 100000) {
		if (rank == 0)
			fprintf(stderr, "usage: ofc-mpi-bench allreduce|allgather|reduce-scatter|"
					"alltoall BYTES ITERATIONS (BYTES at least 4 x ranks)\n");
		MPI_Finalize();
		return 2;
	}
	/* the call's count: an allreduce's whole buffer, the others' block */
	block = strcmp(argv[1], "allreduce") == 0 ? (int)elems : (int)(elems / (size_t)n);
	in = calloc(elems, 4);
	out = calloc(elems, 4);
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (size_t i = 0; i < elems; i++)
		in[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)rank;
	run(argv[1], in, out, block);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int k = 0; k < iters; k++)
		run(argv[1], in, out, block);
	if (iters)
		mine = (MPI_Wtime() - t0) / iters;
	MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf(
		    "{\"collective\": \"%s\", \"bytes\": %llu, \"ranks\": %d, \"iterations\": %d, "
		    "\"seconds\": %.9g}\n",
		    argv[1], bytes, n, iters, slowest);
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
