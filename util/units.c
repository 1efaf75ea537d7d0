/* Quantities with units, as operators write them in configs and flags. */
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* value * mult / div: sub-unit scales divide by an exact power of ten, so
 * "25us" is the double nearest 25e-6, not 25 * 1e-6 rounded twice. */
struct unit {
	const char *name;
	double mult;
	double div;
};

static const struct unit size_units[] = {
    {"B", 1},
    {"KB", 1e3},
    {"kB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
};

/* The last row: a bare SI prefix is bits, as port speeds are named ("100G
 * Ethernet", a "400G" optic), so 100G reads as 100Gbps. */
static const struct unit rate_units[] = {
    {"bps", 1},	       {"Kbps", 1e3},	     {"kbps", 1e3},
    {"Mbps", 1e6},     {"Gbps", 1e9},	     {"Tbps", 1e12},
    {"b/s", 1},	       {"Kb/s", 1e3},	     {"kb/s", 1e3},
    {"Mb/s", 1e6},     {"Gb/s", 1e9},	     {"Tb/s", 1e12},
    {"B/s", 8},	       {"KB/s", 8e3},	     {"kB/s", 8e3},
    {"MB/s", 8e6},     {"GB/s", 8e9},	     {"TB/s", 8e12},
    {"KiB/s", 8192.0}, {"MiB/s", 8388608.0}, {"GiB/s", 8589934592.0},
    {"K", 1e3},	       {"k", 1e3},	     {"M", 1e6},
    {"G", 1e9},	       {"T", 1e12},
};

static const struct unit duration_units[] = {
    {"ns", 1, 1e9}, {"us", 1, 1e6}, {"\xc2\xb5s", 1, 1e6}, {"ms", 1, 1e3},
    {"s", 1, 1},    {"min", 60, 1}, {"h", 3600, 1},
};

/* Digits with an optional fraction; no sign, no exponent. Sets *end. The
 * syntax is checked here and the value read by strtod, which rounds
 * correctly ("13.33" is the double nearest 13.33). */
static int parse_decimal(const char *s, double *v, const char **end)
{
	const char *p = s;
	bool digits = false;
	char buf[64];

	while (*p >= '0' && *p <= '9') {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits = true;
		}
	}
	if (!digits || (size_t)(p - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = '\0';
	*v = strtod(buf, NULL);
	if (!isfinite(*v))
		return -1;
	*end = p;
	return 0;
}

static int parse_quantity(const char *s, const struct unit *units, size_t nunits,
			  bool unit_optional, double *out, const char **why, const char *expect)
{
	const char *p;
	double v;

	if (!s || !*s) {
		*why = "empty value";
		return -1;
	}
	while (*s == ' ')
		s++;
	if (*s == '-') {
		*why = "must not be negative";
		return -1;
	}
	if (*s == '+')
		s++;
	if (parse_decimal(s, &v, &p) < 0) {
		*why = expect;
		return -1;
	}
	while (*p == ' ')
		p++;
	if (!*p) {
		if (unit_optional || v == 0) {
			*out = v;
			return 0;
		}
		*why = expect;
		return -1;
	}
	for (size_t i = 0; i < nunits; i++) {
		if (strcmp(p, units[i].name) == 0) {
			*out = v * units[i].mult;
			if (units[i].div > 1)
				*out = v / units[i].div;
			return 0;
		}
	}
	*why = expect;
	return -1;
}

int parse_size(const char *s, uint64_t *bytes, const char **why)
{
	double v;

	if (parse_quantity(s, size_units, ARRAY_SIZE(size_units), true, &v, why,
			   "expected a size such as 4096, 64KiB, 4MB or 1GiB") < 0)
		return -1;
	if (v >= 18446744073709551616.0) {
		*why = "size too large";
		return -1;
	}
	if (v != floor(v)) {
		*why = "not a whole number of bytes";
		return -1;
	}
	*bytes = (uint64_t)v;
	return 0;
}

int parse_rate(const char *s, double *bits_per_s, const char **why)
{
	return parse_quantity(s, rate_units, ARRAY_SIZE(rate_units), false, bits_per_s, why,
			      "expected a rate such as 40Gbps, 100Gb/s or 12.5GB/s");
}

int parse_duration(const char *s, double *seconds, const char **why)
{
	/* A bare number is seconds, as `--timeout 60` and `sleep 60` read. */
	return parse_quantity(s, duration_units, ARRAY_SIZE(duration_units), true, seconds, why,
			      "expected a duration such as 30 (seconds), 25us, 10ms or 1.5s");
}

int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!s || !*s)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*v = x;
	return 0;
}

int parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (parse_u64(s, &x) < 0 || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static void fmt_scaled(char *buf, size_t n, double v, const double *mult, const char *const *name,
		       size_t k)
{
	size_t i = 0;

	while (i + 1 < k && fabs(v) >= mult[i + 1])
		i++;
	snprintf(buf, n, "%.4g %s", v / mult[i], name[i]);
}

void fmt_size(char *buf, size_t n, uint64_t bytes)
{
	static const double m[] = {1, 1024.0, 1048576.0, 1073741824.0, 1099511627776.0};
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};

	fmt_scaled(buf, n, (double)bytes, m, u, ARRAY_SIZE(m));
}

void fmt_rate(char *buf, size_t n, double bits_per_s)
{
	static const double m[] = {1, 1e3, 1e6, 1e9, 1e12};
	static const char *const u[] = {"b/s", "Kb/s", "Mb/s", "Gb/s", "Tb/s"};

	fmt_scaled(buf, n, bits_per_s, m, u, ARRAY_SIZE(m));
}

void fmt_duration(char *buf, size_t n, double seconds)
{
	static const double m[] = {1e-9, 1e-6, 1e-3, 1};
	static const char *const u[] = {"ns", "us", "ms", "s"};

	if (seconds == 0) {
		snprintf(buf, n, "0 s");
		return;
	}
	fmt_scaled(buf, n, seconds, m, u, ARRAY_SIZE(m));
}

void fmt_duration_long(char *buf, size_t n, double seconds)
{
	if (seconds < 600)
		fmt_duration(buf, n, seconds);
	else if (seconds < 7200)
		snprintf(buf, n, "%.1f min", seconds / 60);
	else if (seconds < 3 * 86400)
		snprintf(buf, n, "%.1f h", seconds / 3600);
	else
		snprintf(buf, n, "%.1f days", seconds / 86400);
}
