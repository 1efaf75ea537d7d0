/* Demand sets for ring RWA: the all-to-all pattern and demand files.
 *
 * A demand file holds one demand per line:
 *
 *     # src dst [count] [cw|ccw|any]
 *     0 5
 *     3 1 2 ccw
 *
 * Nodes are ring positions 0..N-1; count (default 1) is the number of
 * lightpaths wanted from src to dst; the direction (default any) fixes the
 * route. '#' starts a comment; blank lines are skipped. Any other line is
 * an error that names FILE:LINE:COL.
 */
#include "rwa/rwa.h"

#include <stdlib.h>
#include <string.h>

#define DEMAND_FILE_MAX (64u << 20)

void rwa_all_to_all(uint32_t n, struct rwa_demand **dem, size_t *ndem)
{
	struct rwa_demand *d = xmalloc(((size_t)n * (n - 1) + 1) * sizeof(*d));
	size_t k = 0;

	for (uint32_t s = 0; s < n; s++)
		for (uint32_t t = 0; t < n; t++)
			if (s != t)
				d[k++] = (struct rwa_demand){s, t, 1, RWA_ANY};
	*dem = d;
	*ndem = k;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int rwa_parse_demands(const char *file, const char *text, size_t len, uint32_t nodes,
		      struct rwa_demand **dem, size_t *ndem, struct ofc_error *err)
{
	struct rwa_demand *d = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	unsigned line = 0;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end, *tok[5];
		size_t tlen[5];
		unsigned ntok = 0;

		line++;
		for (const char *q = p; q < stop;) {
			while (q < stop && is_space(*q))
				q++;
			if (q >= stop || *q == '#')
				break;
			const char *t = q;
			while (q < stop && !is_space(*q) && *q != '#')
				q++;
			if (ntok == 4) { /* a fifth field: reported below */
				tok[ntok++] = t;
				break;
			}
			tok[ntok] = t;
			tlen[ntok++] = (size_t)(q - t);
		}
		if (memchr(p, '\0', (size_t)(stop - p))) {
			free(d);
			return ofc_error_at(err, OFC_E_INPUT, file, line, 1,
					    "binary data (a NUL byte) in a demand file");
		}
#define FAIL(k, ...)                                                                               \
	do {                                                                                       \
		free(d);                                                                           \
		return ofc_error_at(err, OFC_E_INPUT, file, line, (unsigned)(tok[k] - p + 1),      \
				    __VA_ARGS__);                                                  \
	} while (0)
		if (ntok == 0)
			goto next;
		if (ntok == 1)
			FAIL(0, "a demand needs SRC and DST (and optionally COUNT and cw|ccw|any)");
		if (ntok > 4)
			FAIL(4, "too many fields: a demand is SRC DST [COUNT] [cw|ccw|any]");

		struct rwa_demand x = {0, 0, 1, RWA_ANY};
		uint32_t v[3];
		unsigned nnum = ntok;
		char word[16];

		/* A direction is the last field when it is not a number. */
		if (ntok >= 3 && !(tok[ntok - 1][0] >= '0' && tok[ntok - 1][0] <= '9')) {
			size_t l = tlen[ntok - 1];

			snprintf(word, sizeof(word), "%.*s", (int)(l < 15 ? l : 15), tok[ntok - 1]);
			if (l == 2 && strcmp(word, "cw") == 0)
				x.dir = RWA_CW;
			else if (l == 3 && strcmp(word, "ccw") == 0)
				x.dir = RWA_CCW;
			else if (l == 3 && strcmp(word, "any") == 0)
				x.dir = RWA_ANY;
			else
				FAIL(ntok - 1, "unknown direction '%.*s' (cw, ccw or any)",
				     (int)(l < 40 ? l : 40), tok[ntok - 1]);
			nnum--;
		}
		if (nnum > 3)
			FAIL(3, "too many numbers: a demand is SRC DST [COUNT] [cw|ccw|any]");
		for (unsigned k = 0; k < nnum; k++) {
			char buf[24];

			if (tlen[k] >= sizeof(buf))
				FAIL(k, "number too long");
			memcpy(buf, tok[k], tlen[k]);
			buf[tlen[k]] = 0;
			if (parse_u32(buf, &v[k]) < 0)
				FAIL(k, "'%s' is not a %s", buf, k == 2 ? "count" : "node number");
		}
		x.src = v[0];
		x.dst = v[1];
		if (nnum == 3)
			x.count = v[2];
		if (x.src >= nodes)
			FAIL(0, "node %u out of range: the ring has nodes 0..%u", x.src, nodes - 1);
		if (x.dst >= nodes)
			FAIL(1, "node %u out of range: the ring has nodes 0..%u", x.dst, nodes - 1);
		if (x.src == x.dst)
			FAIL(1, "a demand from node %u to itself", x.src);
		if (x.count == 0 || x.count > RWA_MAX_COUNT)
			FAIL(2, "count must be 1..%u", RWA_MAX_COUNT);
		total += x.count;
		if (n + 1 > RWA_MAX_DEMANDS || total > RWA_MAX_DEMANDS)
			FAIL(0, "too many lightpaths (limit %u)", RWA_MAX_DEMANDS);
#undef FAIL
		GROW(d, cap, n + 1);
		d[n++] = x;
	next:
		p = eol ? eol + 1 : end;
	}
	*dem = d;
	*ndem = n;
	return 0;
}

int rwa_load_demands(const char *path, uint32_t nodes, struct rwa_demand **dem, size_t *ndem,
		     struct ofc_error *err)
{
	char *text;
	size_t len;
	int rc;

	if (read_file(path, DEMAND_FILE_MAX, &text, &len, err) < 0)
		return -1;
	rc = rwa_parse_demands(path, text, len, nodes, dem, ndem, err);
	free(text);
	if (rc == 0 && *ndem == 0) {
		free(*dem);
		*dem = NULL;
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "no demands in the file");
	}
	return rc;
}
