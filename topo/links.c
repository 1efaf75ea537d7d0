/* Link lists: degraded topologies (a healthy graph less its failed links)
 * and explicit edge lists (`edges:FILE`). Both read the same words, so what
 * `--fail` takes and what an edge-list file holds look alike:
 *
 *   U-V   the bidirectional link between U and V: the arc U -> V and, when
 *         the graph has one, the arc V -> U (a link is two fibres)
 *   U>V   the one arc U -> V (directed fabrics such as Kautz)
 *   U     (failures only) the whole node U: every arc to or from it
 *
 * Words are separated by commas or white space; in a file '#' starts a
 * comment and a line `nodes N` gives the node count (else the largest id
 * plus one). A parallel link is named once per copy. A failed node stays in
 * the degraded graph without arcs, so node numbers keep their meaning;
 * topo_survivors() renumbers the others for the engines, which schedule
 * among them. */
#include "topo/topo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LINKS_MAX_FILE (64u << 20)

struct link_word {
	uint32_t u, v;
	bool both; /* U-V: both directions */
	bool node; /* U alone: the whole node (v unused) */
	unsigned line, col;
};

struct link_list {
	struct link_word *w;
	size_t n, cap;
	uint32_t nodes; /* from `nodes N`; 0 when not given */
};

/* The error for a word at (line, col) of `where` (a file; or "" for a
 * command-line list, where col is the offset in the list). */
static int bad(struct ofc_error *err, const char *where, unsigned line, unsigned col,
	       const char *fmt, ...) OFC_PRINTF(5, 6);
static int bad(struct ofc_error *err, const char *where, unsigned line, unsigned col,
	       const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (*where)
		return ofc_error_at(err, OFC_E_INPUT, where, line, col, "%s", msg);
	ofc_error_set(err, OFC_E_INPUT, "%s", msg);
	err->col = col;
	return -1;
}

static int read_id(const char **s, const char *end, uint32_t *v)
{
	uint64_t x = 0;
	const char *p = *s;

	if (p == end || !isdigit((unsigned char)*p))
		return -1;
	while (p < end && isdigit((unsigned char)*p)) {
		x = x * 10 + (uint64_t)(*p++ - '0');
		if (x >= TOPO_MAX_NODES)
			return -1;
	}
	*v = (uint32_t)x;
	*s = p;
	return 0;
}

/* A word for a message: as found, with bytes a terminal would act on
 * escaped (a file may hold anything); nothing when quiet (a file a client
 * of a daemon chose: its bytes are not the client's to see). */
static const char *quoted(char *buf, size_t n, const char *w, size_t wl, bool quiet)
{
	char word[200];

	if (quiet) {
		snprintf(buf, n, "this word");
		return buf;
	}
	snprintf(buf, n, "'%s'", str_printable(word, sizeof(word), w, wl, 40));
	return buf;
}

/* Parse text into words; file names the source for messages ("" = a list
 * given on the command line, one line: there a bare node U is a word too). */
static int parse_links(const char *text, size_t len, const char *file, bool quiet,
		       struct link_list *l, struct ofc_error *err)
{
	char quote[220];

	const char *p = text, *end = text + len, *line_start = text;
	unsigned line = 1;

	while (p < end) {
		/* (a command-line list is one line: col its offset in it) */
		if (*p == '\n' && *file) {
			line++;
			line_start = ++p;
			continue;
		}
		if (*p == ',' || isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (*p == '#' && *file) {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		const char *w = p;
		while (p < end && *p != ',' && !isspace((unsigned char)*p))
			p++;
		size_t wl = (size_t)(p - w);
		unsigned col = (unsigned)(w - line_start) + 1;

		if (*file && wl == 5 && memcmp(w, "nodes", 5) == 0) {
			const char *q = p;

			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (read_id(&q, end, &l->nodes) < 0 || l->nodes < 2)
				return bad(err, file, line, col,
					   "'nodes' wants a count of 2 to 2^22");
			p = q;
			continue;
		}
		struct link_word lw = {.line = line, .col = col};
		const char *q = w;
		if (!*file && read_id(&q, p, &lw.u) == 0 && q == p) {
			lw.node = true;
			GROW(l->w, l->cap, l->n + 1);
			l->w[l->n++] = lw;
			continue;
		}
		q = w;
		bool ok = read_id(&q, p, &lw.u) == 0 && q < p && (*q == '-' || *q == '>');
		if (ok) {
			lw.both = *q++ == '-';
			ok = read_id(&q, p, &lw.v) == 0 && q == p;
		}
		if (!ok)
			return bad(err, file, line, col,
				   "%s is not a link: write U-V (both directions) or U>V (one "
				   "arc)%s",
				   quoted(quote, sizeof(quote), w, wl, quiet),
				   *file ? "" : ", or U for a node");
		if (lw.u == lw.v)
			return bad(err, file, line, col, "%s: a link joins two nodes",
				   quoted(quote, sizeof(quote), w, wl, quiet));
		GROW(l->w, l->cap, l->n + 1);
		l->w[l->n++] = lw;
	}
	return 0;
}

/* The arc u -> v not yet removed, or UINT32_MAX. */
static uint32_t find_arc(const struct graph *g, const bool *gone, uint32_t u, uint32_t v)
{
	for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
		if (g->adj[a] == v && !gone[a])
			return a;
	return UINT32_MAX;
}

/* Every arc to or from node u, marked gone. */
static void mark_node(const struct graph *g, bool *gone, uint32_t u)
{
	for (uint32_t x = 0; x < g->n; x++)
		for (uint32_t a = g->off[x]; a < g->off[x + 1]; a++)
			if (x == u || g->adj[a] == u)
				gone[a] = true;
}

int topo_mark_items(const struct graph *g, const char *list, bool *gone, uint8_t *dead,
		    struct ofc_error *err)
{
	struct link_list l = {0};
	int rc = -1;

	if (parse_links(list, strlen(list), "", false, &l, err) < 0)
		goto done;
	if (l.n == 0) {
		if (dead)
			ofc_error_set(err, OFC_E_INPUT, "no failure given (write U-V, U>V or U)");
		else
			ofc_error_set(err, OFC_E_INPUT, "no failed link given (write U-V or U>V)");
		goto done;
	}
	/* Links first, so a link of a failed node may be named too. */
	for (size_t i = 0; i < l.n; i++) {
		const struct link_word *w = &l.w[i];
		uint32_t a, b = UINT32_MAX;

		if (w->node) {
			if (!dead) {
				ofc_error_set(err, OFC_E_INPUT,
					      "'%u' is not a link: write U-V (both directions) or "
					      "U>V (one arc)",
					      w->u);
				err->col = w->col;
				goto done;
			}
			continue;
		}
		if (w->u >= g->n || w->v >= g->n) {
			ofc_error_set(err, OFC_E_INPUT, "failed link %u%c%u: %s has nodes 0..%u",
				      w->u, w->both ? '-' : '>', w->v, g->spec, g->n - 1);
			err->col = w->col;
			goto done;
		}
		a = find_arc(g, gone, w->u, w->v);
		if (a != UINT32_MAX)
			gone[a] = true;
		if (w->both) {
			b = find_arc(g, gone, w->v, w->u);
			if (b != UINT32_MAX)
				gone[b] = true;
		}
		if (a == UINT32_MAX && b == UINT32_MAX) {
			ofc_error_set(err, OFC_E_INPUT,
				      "failed link %u%c%u: %s has no such link (or it is named "
				      "twice)",
				      w->u, w->both ? '-' : '>', w->v, g->spec);
			err->col = w->col;
			goto done;
		}
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct link_word *w = &l.w[i];

		if (!w->node)
			continue;
		if (w->u >= g->n || dead[w->u]) {
			if (w->u >= g->n)
				ofc_error_set(err, OFC_E_INPUT,
					      "failed node %u: %s has nodes 0..%u", w->u, g->spec,
					      g->n - 1);
			else
				ofc_error_set(err, OFC_E_INPUT, "failed node %u is named twice",
					      w->u);
			err->col = w->col;
			goto done;
		}
		dead[w->u] = 1;
		mark_node(g, gone, w->u);
	}
	rc = 0;
done:
	free(l.w);
	return rc;
}

int topo_mark_links(const struct graph *g, const char *list, bool *gone, struct ofc_error *err)
{
	return topo_mark_items(g, list, gone, NULL, err);
}

struct graph *topo_without_arcs(const struct graph *g, const bool *gone, const char *spec)
{
	uint32_t *tails = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	uint32_t *heads = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	uint32_t m = 0;

	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (!gone[a]) {
				tails[m] = u;
				heads[m++] = g->adj[a];
			}
	struct graph *d = graph_from_arcs(g->n, m, tails, heads, spec);
	free(tails);
	free(heads);
	return d;
}

struct graph *topo_survivors(const struct graph *g, const uint8_t *dead, const char *spec,
			     uint32_t **keep, uint32_t *nkeep)
{
	uint32_t *id = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t)), n = 0, m = 0;
	uint32_t *tails = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));
	uint32_t *heads = xmalloc(((size_t)g->m + 1) * sizeof(uint32_t));

	*keep = xmalloc(((size_t)g->n + 1) * sizeof(uint32_t));
	for (uint32_t u = 0; u < g->n; u++) {
		id[u] = dead[u] ? UINT32_MAX : n;
		if (!dead[u])
			(*keep)[n++] = u;
	}
	for (uint32_t u = 0; u < g->n; u++)
		for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++)
			if (id[u] != UINT32_MAX && id[g->adj[a]] != UINT32_MAX) {
				tails[m] = id[u];
				heads[m++] = id[g->adj[a]];
			}
	struct graph *s = graph_from_arcs(n, m, tails, heads, spec);
	free(id);
	free(tails);
	free(heads);
	*nkeep = n;
	return s;
}

int topo_fail_items(const struct graph *g, const char *list, struct graph **out, uint8_t *dead,
		    struct ofc_error *err)
{
	bool *gone = xcalloc((size_t)g->m + 1, sizeof(bool));
	struct link_list l = {0};
	struct ofc_error ignore = {0};

	*out = NULL;
	if (topo_mark_items(g, list, gone, dead, err) < 0) {
		free(gone);
		return -1;
	}
	/* The canonical list: as given, without extra spaces. */
	struct strbuf spec = STRBUF_INIT;
	parse_links(list, strlen(list), "", false, &l, &ignore);
	sb_printf(&spec, "%s without ", g->spec);
	for (size_t i = 0; i < l.n; i++)
		if (l.w[i].node)
			sb_printf(&spec, "%s%u", i ? "," : "", l.w[i].u);
		else
			sb_printf(&spec, "%s%u%c%u", i ? "," : "", l.w[i].u,
				  l.w[i].both ? '-' : '>', l.w[i].v);
	*out = topo_without_arcs(g, gone, spec.buf);
	sb_free(&spec);
	free(l.w);
	free(gone);
	return 0;
}

int topo_fail_links(const struct graph *g, const char *list, struct graph **out,
		    struct ofc_error *err)
{
	return topo_fail_items(g, list, out, NULL, err);
}

/* Open path under the policy (see struct topo_files): the fd of a regular
 * file beneath files->dir, its absolute name in *abs (the caller frees). */
static int open_beneath(const struct topo_files *files, const char *path, char **abs,
			struct ofc_error *err)
{
	const char *why = files->why ? files->why : "";
	size_t dl = files->dir ? strlen(files->dir) : 0;
	const char *rel = path;
	struct open_how how = {
	    .flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd;

	if (files->dirfd < 0 || !dl)
		return ofc_error_set(err, OFC_E_INPUT, "edge-list files are not read here%s%s%s",
				     *why ? " (no " : "", why, *why ? " was given)" : "");
	if (path[0] == '/') {
		if (strncmp(path, files->dir, dl) != 0 || path[dl] != '/' || !path[dl + 1])
			return ofc_error_set(err, OFC_E_INPUT,
					     "edge-list files are read only from %s%s%s%s",
					     files->dir, *why ? " (" : "", why, *why ? ")" : "");
		rel = path + dl + 1;
	}
	fd = (int)syscall(SYS_openat2, files->dirfd, rel, &how, sizeof(how));
	if (fd < 0) {
		int e = errno;

		if (e == EXDEV || e == ELOOP)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "edge-list files are read only from %s%s%s%s, and this "
			    "name leaves it",
			    files->dir, *why ? " (" : "", why, *why ? ")" : "");
		if (e == ENOSYS)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "edge-list files need openat2 (Linux 5.6 or later)");
		return ofc_error_set(err, OFC_E_INPUT, "cannot open %s/%s: %s", files->dir, rel,
				     strerror(e));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ofc_error_set(err, OFC_E_INPUT, "%s/%s is not a regular file", files->dir,
				     rel);
	}
	*abs = xasprintf("%s/%s", files->dir, rel);
	return fd;
}

int topo_edges_file(const char *path, struct graph **out, struct ofc_error *err)
{
	return topo_edges_file_in(NULL, path, out, err);
}

int topo_edges_file_in(const struct topo_files *files, const char *path, struct graph **out,
		       struct ofc_error *err)
{
	char *text = NULL, *name = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (files) {
		int fd = open_beneath(files, path, &name, err);

		if (fd < 0)
			return -1;
		rc = read_fd(fd, name, LINKS_MAX_FILE, &text, &len, err);
		close(fd);
		if (rc < 0) {
			free(name);
			return -1;
		}
		path = name;
	} else if (read_file(path, LINKS_MAX_FILE, &text, &len, err) < 0) {
		return -1;
	}
	rc = topo_edges_text(path, text, len, files != NULL, out, err);
	free(text);
	free(name);
	return rc;
}

int topo_edges_text(const char *path, const char *text, size_t len, bool quiet,
		    struct graph **out, struct ofc_error *err)
{
	struct link_list l = {0};
	int rc = -1;

	*out = NULL;
	if (parse_links(text, len, path, quiet, &l, err) < 0)
		goto done;
	if (l.n == 0) {
		ofc_error_at(err, OFC_E_INPUT, path, 1, 1, "no links (write U-V or U>V per link)");
		goto done;
	}
	uint32_t n = l.nodes;
	for (size_t i = 0; !l.nodes && i < l.n; i++) {
		if (l.w[i].u + 1 > n)
			n = l.w[i].u + 1;
		if (l.w[i].v + 1 > n)
			n = l.w[i].v + 1;
	}
	size_t arcs = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (l.w[i].u >= n || l.w[i].v >= n) {
			ofc_error_at(err, OFC_E_INPUT, path, l.w[i].line, l.w[i].col,
				     "link %u%c%u: 'nodes %u' says the nodes are 0..%u", l.w[i].u,
				     l.w[i].both ? '-' : '>', l.w[i].v, n, n - 1);
			goto done;
		}
		arcs += l.w[i].both ? 2 : 1;
	}
	if (arcs > TOPO_MAX_ARCS) {
		ofc_error_at(err, OFC_E_INPUT, path, 1, 1, "%zu arcs: the limit is %u", arcs,
			     TOPO_MAX_ARCS);
		goto done;
	}
	uint32_t *tails = xmalloc(arcs * sizeof(uint32_t));
	uint32_t *heads = xmalloc(arcs * sizeof(uint32_t));
	uint32_t m = 0;
	for (size_t i = 0; i < l.n; i++) {
		tails[m] = l.w[i].u;
		heads[m++] = l.w[i].v;
		if (l.w[i].both) {
			tails[m] = l.w[i].v;
			heads[m++] = l.w[i].u;
		}
	}
	char *spec = xasprintf("edges:%s", path);
	*out = graph_from_arcs(n, m, tails, heads, spec);
	free(spec);
	free(tails);
	free(heads);
	rc = 0;
done:
	free(l.w);
	return rc;
}
