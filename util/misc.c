/* Small helpers with no better home. */
#include "util/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	if (la >= ARRAY_SIZE(row) || lb >= ARRAY_SIZE(row))
		return 255;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb] > 255 ? 255 : row[lb];
}

uint64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

uint64_t ceil_div_u64(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t peak_rss_bytes(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024u;
}

bool clock_expired(const struct ofc_clock *c)
{
	return c && c->deadline > 0 && now_seconds() >= c->deadline;
}

int clock_check(const struct ofc_clock *c, const char *phase, struct ofc_error *err)
{
	char lim[32];

	if (!clock_expired(c))
		return 0;
	fmt_duration(lim, sizeof(lim), c->limit);
	return ofc_error_set(err, OFC_E_RUNTIME, "time limit %s reached in %s", lim, phase);
}

void clock_progress(const struct ofc_clock *c, const char *phase, double done)
{
	if (c && c->progress)
		c->progress(c->ctx, phase, done, now_seconds() - c->start);
}

const char *str_printable(char *dst, size_t n, const char *src, size_t len, size_t max)
{
	size_t o = 0, i;

	if (!n)
		return dst;
	for (i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)src[i];
		char esc[5];
		size_t k;

		if (c == '\\')
			k = (size_t)snprintf(esc, sizeof(esc), "\\\\");
		else if (c < 0x20 || c > 0x7e)
			k = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			esc[0] = (char)c, k = 1;
		if (o + k + 4 > n) /* room for "..." and the NUL */
			break;
		memcpy(dst + o, esc, k);
		o += k;
	}
	if (i < len && o + 4 <= n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = 0;
	return dst;
}

char *exe_sibling(const char *env, const char *file)
{
	const char *set = env ? getenv(env) : NULL;
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (set && *set)
		return xstrdup(set);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	if (!(slash = strrchr(self, '/')))
		return NULL;
	*slash = 0;
	return xasprintf("%s/%s", self, file);
}

char **environ_for_child(void)
{
	static const char *const drop[] = {
	    "NOTIFY_SOCKET=", "LISTEN_FDS=", "LISTEN_PID=", "LISTEN_FDNAMES=", "WATCHDOG_", NULL};
	size_t n = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	env = xcalloc(n + 1, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		bool keep = true;

		for (const char *const *d = drop; *d && keep; d++)
			keep = strncmp(environ[i], *d, strlen(*d)) != 0;
		if (keep)
			env[k++] = environ[i];
	}
	return env;
}
