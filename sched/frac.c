/* Exact fractions for tau_B. A BFB schedule's bandwidth term is
 * (d/N) * sum_t max_u U*_{u,t} where every U* is a count over a subset of
 * in-links, c/|K| with |K| <= d (notes 2.6), so it is a small rational:
 * 341/256 for genkautz:1024,4. Arithmetic is on int64 with overflow checks
 * through __int128; a result that does not fit is marked invalid (den 0)
 * and callers fall back to the double they carry alongside. */
#include "sched/sched.h"

#include <math.h>
#include <stdlib.h>

static const struct frac invalid = {0, 0};

static int64_t gcd64(int64_t a, int64_t b)
{
	/* |INT64_MIN| does not fit: such fractions are invalid anyway */
	return (int64_t)gcd_u64(a < 0 ? -(uint64_t)a : (uint64_t)a,
				b < 0 ? -(uint64_t)b : (uint64_t)b);
}

static struct frac reduce128(__int128 num, __int128 den)
{
	if (den == 0)
		return invalid;
	if (den < 0) {
		num = -num;
		den = -den;
	}
	__int128 a = num < 0 ? -num : num, b = den;
	while (b) {
		__int128 t = a % b;

		a = b;
		b = t;
	}
	if (a > 1) {
		num /= a;
		den /= a;
	}
	if (num > INT64_MAX || num < -INT64_MAX || den > INT64_MAX)
		return invalid;
	return (struct frac){(int64_t)num, (int64_t)den};
}

struct frac frac_make(int64_t num, int64_t den)
{
	return reduce128(num, den);
}

struct frac frac_add(struct frac a, struct frac b)
{
	if (!frac_valid(a) || !frac_valid(b))
		return invalid;
	int64_t g = gcd64(a.den, b.den);
	return reduce128((__int128)a.num * (b.den / g) + (__int128)b.num * (a.den / g),
			 (__int128)a.den * (b.den / g));
}

struct frac frac_sub(struct frac a, struct frac b)
{
	return frac_add(a, (struct frac){-b.num, b.den});
}

struct frac frac_mul(struct frac a, struct frac b)
{
	if (!frac_valid(a) || !frac_valid(b))
		return invalid;
	return reduce128((__int128)a.num * b.num, (__int128)a.den * b.den);
}

struct frac frac_div(struct frac a, struct frac b)
{
	if (!frac_valid(a) || !frac_valid(b) || b.num == 0)
		return invalid;
	return reduce128((__int128)a.num * b.den, (__int128)a.den * b.num);
}

int frac_cmp(struct frac a, struct frac b)
{
	__int128 l = (__int128)a.num * b.den, r = (__int128)b.num * a.den;

	return (l > r) - (l < r);
}

double frac_value(struct frac a)
{
	return frac_valid(a) ? (double)a.num / (double)a.den : NAN;
}

const char *frac_str(struct frac a, char *buf, size_t n)
{
	if (!frac_valid(a))
		snprintf(buf, n, "?");
	else if (a.den == 1)
		snprintf(buf, n, "%lld", (long long)a.num);
	else
		snprintf(buf, n, "%lld/%lld", (long long)a.num, (long long)a.den);
	return buf;
}

struct frac frac_from_double(double x, int64_t maxden, double tol)
{
	struct frac best = invalid;
	double err = tol;

	if (!isfinite(x) || fabs(x) > 1e15)
		return invalid;
	for (int64_t k = 1; k <= maxden; k++) {
		double c = nearbyint(x * (double)k), e = fabs(c / (double)k - x);

		if (e <= err) {
			best = frac_make((int64_t)c, k);
			err = e;
			if (e == 0)
				break;
		}
	}
	return best;
}
