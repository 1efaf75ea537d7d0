/* ofc-mpi-check: a program written with the MPI standard alone, that knows
 * nothing of ofc, to run under libofc-mpi (LD_PRELOAD) and check every
 * element of every collective the library intercepts.
 *
 *   mpiexec -n N ofc-mpi-check [-u STOP-FILE] [COUNT...]
 *
 * For each COUNT (elements; default a spread from 1 to 256 Ki, odd ones
 * among them so that blocks do not divide evenly), every rank calls on
 * MPI_COMM_WORLD: MPI_Allreduce (MPI_INT sum, in place MPI_LONG_LONG max,
 * MPI_UNSIGNED bxor, MPI_DOUBLE sum of integers), MPI_Allgather (and in
 * place), MPI_Reduce_scatter_block (sum), MPI_Alltoall and MPI_Bcast (the
 * root moving with the count). Each result is checked, every element,
 * against the value computed here from the inputs (integers: exact), and
 * against the MPI's own result: the same call on a communicator of the
 * same ranks in reverse order (its inputs laid out for that order), which
 * a library serving MPI_COMM_WORLD's group in its order leaves to the MPI.
 *
 * With -u, the counts run again and again until STOP-FILE exists (rank 0
 * looks, and says so to the others by MPI_Bcast): a job that runs while
 * its schedules change.
 *
 * Rank 0 prints one JSON line: the calls made on each communicator and the
 * elements checked and wrong. Exit status 0 when every element is right,
 * 1 when one is not, 2 on bad usage. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { AR, AG, RS, A2A, BC, NCOLL };
static const char *const names[NCOLL] = {"MPI_Allreduce", "MPI_Allgather",
					 "MPI_Reduce_scatter_block", "MPI_Alltoall", "MPI_Bcast"};

struct ctx {
	int rank, size;
	MPI_Comm rev; /* the same ranks, in reverse order */
	long calls[NCOLL], ref_calls[NCOLL];
	long long checked, bad;
};

/* Input element i of world rank r for test t: 20 bits, so that sums over
 * up to 2048 ranks fit an int. */
static int value(int r, size_t i, int t)
{
	uint64_t x = ((uint64_t)(unsigned)r << 40) ^ ((uint64_t)i << 4) ^ (uint64_t)t ^
		     0x9e3779b97f4a7c15ull;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (int)(x & 0xfffff);
}

static void check(struct ctx *c, const char *what, size_t n, const void *got, const void *want,
		  size_t es)
{
	for (size_t i = 0; i < n; i++) {
		c->checked++;
		if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) {
			if (c->bad++ < 5)
				fprintf(stderr,
					"ofc-mpi-check: rank %d: %s: element %zu of %zu wrong\n",
					c->rank, what, i, n);
		}
	}
}

static void *alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "ofc-mpi-check: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static void allreduce_int(struct ctx *c, size_t n)
{
	int *in = alloc(n * sizeof(int)), *out = alloc(n * sizeof(int));
	int *ref = alloc(n * sizeof(int)), *want = alloc(n * sizeof(int));

	for (size_t i = 0; i < n; i++) {
		in[i] = value(c->rank, i, 1);
		want[i] = 0;
		for (int r = 0; r < c->size; r++)
			want[i] += value(r, i, 1);
	}
	MPI_Allreduce(in, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(in, ref, (int)n, MPI_INT, MPI_SUM, c->rev);
	c->calls[AR]++;
	c->ref_calls[AR]++;
	check(c, "MPI_Allreduce int sum", n, out, want, sizeof(int));
	check(c, "MPI_Allreduce int sum (the MPI's own)", n, out, ref, sizeof(int));
	free(in), free(out), free(ref), free(want);
}

/* In place, long long max; unsigned bxor; double sum. */
static void allreduce_more(struct ctx *c, size_t n)
{
	long long *ll = alloc(n * sizeof(long long)), *llw = alloc(n * sizeof(long long));
	unsigned *u = alloc(n * sizeof(unsigned)), *uo = alloc(n * sizeof(unsigned));
	unsigned *uw = alloc(n * sizeof(unsigned));
	double *d = alloc(n * sizeof(double)), *dout = alloc(n * sizeof(double));
	double *dw = alloc(n * sizeof(double));

	for (size_t i = 0; i < n; i++) {
		ll[i] = (long long)value(c->rank, i, 2) << 20;
		u[i] = (unsigned)value(c->rank, i, 3) * 4099u;
		d[i] = (double)value(c->rank, i, 4);
		llw[i] = 0;
		uw[i] = 0;
		dw[i] = 0;
		for (int r = 0; r < c->size; r++) {
			long long v = (long long)value(r, i, 2) << 20;

			llw[i] = v > llw[i] ? v : llw[i];
			uw[i] ^= (unsigned)value(r, i, 3) * 4099u;
			dw[i] += (double)value(r, i, 4);
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, ll, (int)n, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(u, uo, (int)n, MPI_UNSIGNED, MPI_BXOR, MPI_COMM_WORLD);
	MPI_Allreduce(d, dout, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	c->calls[AR] += 3;
	check(c, "MPI_Allreduce in place long long max", n, ll, llw, sizeof(long long));
	check(c, "MPI_Allreduce unsigned bxor", n, uo, uw, sizeof(unsigned));
	check(c, "MPI_Allreduce double sum", n, dout, dw, sizeof(double));
	free(ll), free(llw), free(u), free(uo), free(uw), free(d), free(dout), free(dw);
}

static void allgather(struct ctx *c, size_t n)
{
	size_t all = n * (size_t)c->size;
	int *in = alloc(n * sizeof(int)), *out = alloc(all * sizeof(int));
	int *ref = alloc(all * sizeof(int)), *want = alloc(all * sizeof(int));
	int *inplace = alloc(all * sizeof(int));

	for (size_t i = 0; i < n; i++)
		in[i] = value(c->rank, i, 5);
	for (int r = 0; r < c->size; r++)
		for (size_t i = 0; i < n; i++)
			want[(size_t)r * n + i] = value(r, i, 5);
	memset(inplace, 0, all * sizeof(int));
	memcpy(inplace + (size_t)c->rank * n, in, n * sizeof(int));
	MPI_Allgather(in, (int)n, MPI_INT, out, (int)n, MPI_INT, MPI_COMM_WORLD);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inplace, (int)n, MPI_INT, MPI_COMM_WORLD);
	MPI_Allgather(in, (int)n, MPI_INT, ref, (int)n, MPI_INT, c->rev);
	c->calls[AG] += 2;
	c->ref_calls[AG]++;
	check(c, "MPI_Allgather", all, out, want, sizeof(int));
	check(c, "MPI_Allgather in place", all, inplace, want, sizeof(int));
	/* The reversed communicator's block q is world rank size - 1 - q's. */
	for (int q = 0; q < c->size; q++)
		check(c, "MPI_Allgather (the MPI's own)", n, out + (size_t)(c->size - 1 - q) * n,
		      ref + (size_t)q * n, sizeof(int));
	free(in), free(out), free(ref), free(want), free(inplace);
}

static void reduce_scatter(struct ctx *c, size_t n)
{
	size_t all = n * (size_t)c->size;
	int *in = alloc(all * sizeof(int)), *rin = alloc(all * sizeof(int));
	int *out = alloc(n * sizeof(int)), *ref = alloc(n * sizeof(int));
	int *want = alloc(n * sizeof(int));

	for (size_t i = 0; i < all; i++)
		in[i] = value(c->rank, i, 6);
	/* On the reversed communicator rank q gets segment q: laid out so
	 * that it is this rank's segment of the world's order. */
	for (int q = 0; q < c->size; q++)
		memcpy(rin + (size_t)q * n, in + (size_t)(c->size - 1 - q) * n, n * sizeof(int));
	for (size_t i = 0; i < n; i++) {
		want[i] = 0;
		for (int r = 0; r < c->size; r++)
			want[i] += value(r, (size_t)c->rank * n + i, 6);
	}
	MPI_Reduce_scatter_block(in, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce_scatter_block(rin, ref, (int)n, MPI_INT, MPI_SUM, c->rev);
	c->calls[RS]++;
	c->ref_calls[RS]++;
	check(c, "MPI_Reduce_scatter_block", n, out, want, sizeof(int));
	check(c, "MPI_Reduce_scatter_block (the MPI's own)", n, out, ref, sizeof(int));
	free(in), free(rin), free(out), free(ref), free(want);
}

static void alltoall(struct ctx *c, size_t n)
{
	size_t all = n * (size_t)c->size;
	int *in = alloc(all * sizeof(int)), *rin = alloc(all * sizeof(int));
	int *out = alloc(all * sizeof(int)), *ref = alloc(all * sizeof(int));
	int *want = alloc(all * sizeof(int));

	/* Block t of rank r: what r sends t, element i = value(r, t * n + i). */
	for (size_t i = 0; i < all; i++)
		in[i] = value(c->rank, i, 7);
	for (int q = 0; q < c->size; q++)
		memcpy(rin + (size_t)q * n, in + (size_t)(c->size - 1 - q) * n, n * sizeof(int));
	for (int r = 0; r < c->size; r++)
		for (size_t i = 0; i < n; i++)
			want[(size_t)r * n + i] = value(r, (size_t)c->rank * n + i, 7);
	MPI_Alltoall(in, (int)n, MPI_INT, out, (int)n, MPI_INT, MPI_COMM_WORLD);
	MPI_Alltoall(rin, (int)n, MPI_INT, ref, (int)n, MPI_INT, c->rev);
	c->calls[A2A]++;
	c->ref_calls[A2A]++;
	check(c, "MPI_Alltoall", all, out, want, sizeof(int));
	for (int q = 0; q < c->size; q++)
		check(c, "MPI_Alltoall (the MPI's own)", n, out + (size_t)(c->size - 1 - q) * n,
		      ref + (size_t)q * n, sizeof(int));
	free(in), free(rin), free(out), free(ref), free(want);
}

static void bcast(struct ctx *c, size_t n)
{
	int root = (int)(n % (size_t)c->size);
	int *buf = alloc(n * sizeof(int)), *ref = alloc(n * sizeof(int));
	int *want = alloc(n * sizeof(int));

	for (size_t i = 0; i < n; i++) {
		want[i] = value(root, i, 8);
		buf[i] = c->rank == root ? want[i] : -1;
		ref[i] = buf[i];
	}
	MPI_Bcast(buf, (int)n, MPI_INT, root, MPI_COMM_WORLD);
	MPI_Bcast(ref, (int)n, MPI_INT, c->size - 1 - root, c->rev);
	c->calls[BC]++;
	c->ref_calls[BC]++;
	check(c, "MPI_Bcast", n, buf, want, sizeof(int));
	check(c, "MPI_Bcast (the MPI's own)", n, buf, ref, sizeof(int));
	free(buf), free(ref), free(want);
}

static void report(const struct ctx *c)
{
	long long bad = 0, checked = 0;

	MPI_Reduce(&c->bad, &bad, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&c->checked, &checked, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (c->rank != 0)
		return;
	printf("{\"ranks\": %d, \"checked_elements\": %lld, \"bad_elements\": %lld, \"calls\": {",
	       c->size, checked, bad);
	for (int k = 0; k < NCOLL; k++)
		printf("%s\"%s\": %ld", k ? ", " : "", names[k], c->calls[k]);
	printf("}, \"reference_calls\": {");
	for (int k = 0; k < NCOLL; k++)
		printf("%s\"%s\": %ld", k ? ", " : "", names[k], c->ref_calls[k]);
	printf("}}\n");
	fflush(stdout);
}

static void run_counts(struct ctx *c, size_t n)
{
	allreduce_int(c, n);
	allreduce_more(c, n);
	allgather(c, n);
	reduce_scatter(c, n);
	alltoall(c, n);
	bcast(c, n);
}

/* Until the stop file exists (at most an hour's worth of rounds). Rank 0
 * writes the rounds done to STOP.round, so a test can change what the
 * job runs on at a known point instead of after a guessed sleep. */
static bool again(struct ctx *c, const char *stop)
{
	int done = c->rank == 0 && access(stop, F_OK) == 0;

	if (c->rank == 0) {
		char path[4096], tmp[4100];
		static long rounds;

		snprintf(path, sizeof(path), "%s.round", stop);
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		FILE *f = fopen(tmp, "w");
		if (f) {
			fprintf(f, "%ld\n", ++rounds);
			if (fclose(f) == 0)
				rename(tmp, path);
		}
	}

	MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
	c->calls[BC]++;
	return !done;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = {1, 2, 5, 17, 1000, 4099, 65537, 262144};
	size_t counts[64];
	int ncounts = 0, a = 1;
	const char *stop = NULL;
	struct ctx c = {0};
	long long bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);
	if (a + 1 < argc && strcmp(argv[a], "-u") == 0) {
		stop = argv[a + 1];
		a += 2;
	}
	for (; a < argc && ncounts < 64; a++) {
		char *end;
		unsigned long long n = strtoull(argv[a], &end, 10);

		if (*end || n == 0 || n > (1u << 26)) {
			if (c.rank == 0)
				fprintf(
				    stderr,
				    "usage: ofc-mpi-check [-u STOP-FILE] [COUNT...] (1 to 2^26)\n");
			MPI_Finalize();
			return 2;
		}
		counts[ncounts++] = (size_t)n;
	}
	if (ncounts == 0)
		for (; ncounts < 8; ncounts++)
			counts[ncounts] = defaults[ncounts];
	MPI_Comm_split(MPI_COMM_WORLD, 0, c.size - 1 - c.rank, &c.rev);
	do
		for (int k = 0; k < ncounts; k++)
			run_counts(&c, counts[k]);
	while (stop && again(&c, stop));
	MPI_Allreduce(&c.bad, &bad, 1, MPI_LONG_LONG, MPI_SUM, c.rev);
	c.ref_calls[AR]++;
	report(&c);
	MPI_Comm_free(&c.rev);
	MPI_Finalize();
	return bad ? 1 : 0;
}
