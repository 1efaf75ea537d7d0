/* A prototype, not part of ofc: BLAS dtrsm for SIDE = 'L' (the solves
 * LAPACK's dgetrs asks for in Clp's dense factorisation), the same
 * operations in the same order as the reference BLAS (Debian's libblas3:
 * scalar mulsd/subsd, no FMA), so the same bits, but faster where the order
 * allows: the upper transposed solve runs four rows' sums side by side over
 * the k all four have, the non-transposed ones are independent updates
 * that vectorise. The lower transposed solve stays one chain (row i's sum
 * starts with b[i+1]). SIDE = 'R' and bad arguments go to the library's
 * own dtrsm. Loaded with LD_PRELOAD by bench/trsm/run.sh; compile without
 * -mfma (a fused multiply-add would change the bits). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef void trsm_fn(const char *, const char *, const char *, const char *, const int *,
		     const int *, const double *, const double *, const int *, double *,
		     const int *, size_t, size_t, size_t, size_t);

static int is(char c, char want)
{
	return (c | 0x20) == want;
}

/* B := inv(A)*B, A lower (unit or not), one column b. */
static void lower_n(int m, const double *a, long lda, double *b, int nounit)
{
	for (int k = 0; k < m; k++) {
		if (b[k] == 0)
			continue;
		if (nounit)
			b[k] = b[k] / a[k + k * lda];
		double bk = b[k];
		const double *ak = a + k * lda;
		for (int i = k + 1; i < m; i++)
			b[i] = b[i] - bk * ak[i];
	}
}

static void upper_n(int m, const double *a, long lda, double *b, int nounit)
{
	for (int k = m - 1; k >= 0; k--) {
		if (b[k] == 0)
			continue;
		if (nounit)
			b[k] = b[k] / a[k + k * lda];
		double bk = b[k];
		const double *ak = a + k * lda;
		for (int i = 0; i < k; i++)
			b[i] = b[i] - bk * ak[i];
	}
}

/* B := inv(A^T)*B, A upper: temp_i = b_i - sum_{k<i} a(k,i) b_k in k order.
 * Four rows' sums run together over the k all four have final, then
 * each its own tail in order: every sum the same operations in the same
 * order as one at a time. */
static void upper_t(int m, const double *a, long lda, double *b, double alpha, int nounit)
{
	int i = 0;
	for (; i + 4 <= m; i += 4) {
		const double *c0 = a + (long)i * lda, *c1 = c0 + lda, *c2 = c1 + lda,
			     *c3 = c2 + lda;
		double t0 = alpha * b[i], t1 = alpha * b[i + 1], t2 = alpha * b[i + 2],
		       t3 = alpha * b[i + 3];
		for (int k = 0; k < i; k++) {
			double bk = b[k];
			t0 = t0 - c0[k] * bk;
			t1 = t1 - c1[k] * bk;
			t2 = t2 - c2[k] * bk;
			t3 = t3 - c3[k] * bk;
		}
		if (nounit)
			t0 = t0 / c0[i];
		b[i] = t0;
		t1 = t1 - c1[i] * b[i];
		if (nounit)
			t1 = t1 / c1[i + 1];
		b[i + 1] = t1;
		t2 = t2 - c2[i] * b[i];
		t2 = t2 - c2[i + 1] * b[i + 1];
		if (nounit)
			t2 = t2 / c2[i + 2];
		b[i + 2] = t2;
		t3 = t3 - c3[i] * b[i];
		t3 = t3 - c3[i + 1] * b[i + 1];
		t3 = t3 - c3[i + 2] * b[i + 2];
		if (nounit)
			t3 = t3 / c3[i + 3];
		b[i + 3] = t3;
	}
	for (; i < m; i++) {
		const double *ci = a + (long)i * lda;
		double t = alpha * b[i];
		for (int k = 0; k < i; k++)
			t = t - ci[k] * b[k];
		if (nounit)
			t = t / ci[i];
		b[i] = t;
	}
}

/* A lower, transposed: rows from the last, sums over k > i in k order. */
static void lower_t(int m, const double *a, long lda, double *b, double alpha, int nounit)
{
	int i;

	for (i = m - 1; i >= 0; i--) {
		const double *ci = a + (long)i * lda;
		double t = alpha * b[i];
		for (int k = i + 1; k < m; k++)
			t = t - ci[k] * b[k];
		if (nounit)
			t = t / ci[i];
		b[i] = t;
	}
}

void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
	    const int *n, const double *alpha, const double *a, const int *lda, double *b,
	    const int *ldb, size_t l1, size_t l2, size_t l3, size_t l4)
{
	static trsm_fn *next;
	int M = *m, N = *n, upper = is(*uplo, 'u'), trans = !is(*transa, 'n'),
	    nounit = is(*diag, 'n');
	double al = *alpha;

	if (!is(*side, 'l') || !(upper || is(*uplo, 'l')) ||
	    !(is(*transa, 'n') || is(*transa, 't') || is(*transa, 'c')) ||
	    !(nounit || is(*diag, 'u')) || M < 0 || N < 0 || *lda < (M > 1 ? M : 1) ||
	    *ldb < (M > 1 ? M : 1)) {
		if (!next)
			next = (trsm_fn *)dlsym(RTLD_NEXT, "dtrsm_");
		next(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, l1, l2, l3, l4);
		return;
	}
	if (M == 0 || N == 0)
		return;
	for (int j = 0; j < N; j++) {
		double *bj = b + (long)j * *ldb;
		if (al == 0) {
			for (int i = 0; i < M; i++)
				bj[i] = 0;
			continue;
		}
		if (!trans) {
			if (al != 1)
				for (int i = 0; i < M; i++)
					bj[i] = al * bj[i];
			if (upper)
				upper_n(M, a, *lda, bj, nounit);
			else
				lower_n(M, a, *lda, bj, nounit);
		} else if (upper) {
			upper_t(M, a, *lda, bj, al, nounit);
		} else {
			lower_t(M, a, *lda, bj, al, nounit);
		}
	}
}
