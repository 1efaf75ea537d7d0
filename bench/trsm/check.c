/* bench/trsm/run.sh's check: the prototype dtrsm (argv[2]) against the
 * BLAS library's (argv[1]) on random left-side solves of every uplo, trans,
 * diag and alpha 0, 0.5, 1, memcmp on the results. Exit 1 on a difference. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef void trsm_fn(const char *, const char *, const char *, const char *, const int *,
		     const int *, const double *, const double *, const int *, double *,
		     const int *, size_t, size_t, size_t, size_t);
int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *h1 = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void *h2 = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!h1 || !h2) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	trsm_fn *ref = (trsm_fn *)dlsym(h1, "dtrsm_"), *mine = (trsm_fn *)dlsym(h2, "dtrsm_");
	const char *U = "UL", *T = "NT", *D = "NU";
	srand(7);
	long bad = 0, tests = 0;
	for (int it = 0; it < 400; it++) {
		int m = 1 + rand() % 200, n = 1 + rand() % 3, lda = m + rand() % 3,
		    ldb = m + rand() % 2;
		double al = (rand() % 4 == 0) ? 0.5 : 1.0;
		if (rand() % 50 == 0)
			al = 0;
		double *a = malloc(sizeof(double) * lda * m),
		       *b1 = malloc(sizeof(double) * ldb * n),
		       *b2 = malloc(sizeof(double) * ldb * n);
		for (int i = 0; i < lda * m; i++)
			a[i] = (rand() / (double)RAND_MAX - 0.5) * (i % (lda + 1) == 0 ? 4 : 1);
		for (int i = 0; i < ldb * n; i++)
			b1[i] = (rand() % 5 == 0) ? 0 : (rand() / (double)RAND_MAX - 0.5) * 3;
		for (int u = 0; u < 2; u++)
			for (int t = 0; t < 2; t++)
				for (int d = 0; d < 2; d++) {
					memcpy(b2, b1, sizeof(double) * ldb * n);
					double *c = malloc(sizeof(double) * ldb * n);
					memcpy(c, b1, sizeof(double) * ldb * n);
					ref("L", U + u, T + t, D + d, &m, &n, &al, a, &lda, c, &ldb,
					    1, 1, 1, 1);
					mine("L", U + u, T + t, D + d, &m, &n, &al, a, &lda, b2,
					     &ldb, 1, 1, 1, 1);
					tests++;
					if (memcmp(c, b2, sizeof(double) * ldb * n))
						bad++;
					free(c);
				}
		free(a);
		free(b1);
		free(b2);
	}
	printf("%ld of %ld differ\n", bad, tests);
	return bad != 0;
}
