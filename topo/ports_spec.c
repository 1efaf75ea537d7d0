/* A topology written as its port permutations: "ports:N:ROW.ROW...", row j
 * the node port j of every node 0..N-1 transmits to, each node id in
 * base64url digits (A-Z a-z 0-9 - _, most significant first) of the width
 * N needs (one up to 64 nodes, two up to 4,096, ...). It is the spec of a
 * topology no family or expansion names (the planner's
 * topologies built for traffic, unions of groups laid out irregularly), so
 * that a record, a config or a request can build it again exactly: the
 * graph's arcs are in port order and every row is a permutation, so
 * topo_ports gives back the rows themselves (its greedy start takes each
 * node's first free arc, which is row j's). Compact because it is long: 1,024
 * hosts of 4 ports are 8,206 characters (TOPO_MAX_PORTS_SPEC bounds it). */
#include "topo/internal.h"

#include <stdlib.h>
#include <string.h>

static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int digit_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* The digits a node id of an n-node topology takes. */
static uint32_t id_width(uint32_t n)
{
	uint32_t w = 1;

	for (uint64_t span = 64; span < n; span *= 64)
		w++;
	return w;
}

size_t topo_spec_max(const char *spec)
{
	while (*spec == ' ')
		spec++;
	return strncmp(spec, "ports:", 6) == 0 ? TOPO_MAX_PORTS_SPEC : TOPO_MAX_SPEC;
}

char *topo_ports_spec(const struct port_map *pm)
{
	uint32_t n = pm->n, d = pm->d, w = id_width(n);
	struct strbuf sb = STRBUF_INIT;

	sb_printf(&sb, "ports:%u:", n);
	for (uint32_t j = 0; j < d; j++) {
		if (j)
			sb_putc(&sb, '.');
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = pm->to[(size_t)j * n + u];

			for (uint32_t k = w; k-- > 0;)
				sb_putc(&sb, digits[(v >> (6 * k)) & 63]);
		}
	}
	return sb_detach(&sb);
}

static int bad(struct topo_ports_error *e, size_t at, const char *fmt, ...) OFC_PRINTF(3, 4);
static int bad(struct topo_ports_error *e, size_t at, const char *fmt, ...)
{
	va_list ap;

	e->at = at;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int topo_ports_decode(const char *s, size_t len, struct graph **out, struct topo_ports_error *e)
{
	size_t i = 0;
	uint64_t n = 0;
	uint32_t d = 0, w;
	uint32_t *rows = NULL, *seen = NULL;
	size_t cap = 0;

	*out = NULL;
	while (i < len && s[i] >= '0' && s[i] <= '9' && n <= TOPO_MAX_NODES)
		n = n * 10 + (uint64_t)(s[i++] - '0');
	if (i == 0)
		return bad(e, 0, "expected the node count after 'ports:' (ports:N:ROW.ROW...)");
	if (n < 1 || n > TOPO_MAX_NODES)
		return bad(e, 0, "ports: the node count must be 1..%u", TOPO_MAX_NODES);
	if (i >= len || s[i] != ':')
		return bad(e, i,
			   "expected ':' and the rows after the node count (ports:N:ROW.ROW...)");
	i++;
	w = id_width((uint32_t)n);
	seen = xcalloc(n, sizeof(uint32_t));
	for (;;) { /* row d: port d of every node */
		size_t start = i;

		if ((uint64_t)(d + 1) * n > TOPO_MAX_ARCS) {
			free(rows);
			free(seen);
			return bad(e, start, "too many links (limit %u)", TOPO_MAX_ARCS);
		}
		GROW(rows, cap, (size_t)(d + 1) * n);
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = 0;

			for (uint32_t k = 0; k < w; k++, i++) {
				int x = i < len ? digit_value(s[i]) : -1;

				if (x < 0) {
					free(rows);
					free(seen);
					if (i >= len || s[i] == '.')
						return bad(
						    e, i,
						    "port %u has %u of its %llu nodes (each %u "
						    "character%s)",
						    d, u, (unsigned long long)n, w,
						    w == 1 ? "" : "s");
					return bad(e, i,
						   "port %u: '%c' is not a node id's digit "
						   "(A-Z a-z 0-9 - _)",
						   d, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
				}
				v = v * 64 + (uint32_t)x;
			}
			if (v >= n || seen[v] == d + 1) {
				free(rows);
				free(seen);
				if (v >= n)
					return bad(e, i - w,
						   "port %u of node %u: node %u is not below %llu",
						   d, u, v, (unsigned long long)n);
				return bad(e, i - w,
					   "port %u: node %u is reached twice (a port's row is a "
					   "permutation of the nodes)",
					   d, v);
			}
			seen[v] = d + 1;
			rows[(size_t)d * n + u] = v;
		}
		d++;
		if (i == len)
			break;
		if (s[i] != '.') {
			free(rows);
			free(seen);
			return bad(e, i, "port %u has more than its %llu nodes (rows end at '.')",
				   d - 1, (unsigned long long)n);
		}
		i++;
	}
	free(seen);
	struct graph *g = graph_regular((uint32_t)n, d);
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t j = 0; j < d; j++)
			g->adj[(size_t)u * d + j] = rows[(size_t)j * n + u];
	free(rows);
	*out = g;
	return 0;
}
