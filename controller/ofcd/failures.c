/* Failures at run time. Two sources: ReportFailure (links "U-V",
 * ports "HOST:PORT" and whole hosts "HOST" an operator or a monitor reports, persisted in
 * STATE_DIR/FABRIC.failed so a restart keeps them) and the devices (every
 * host port cabled to a switch found lost fails with it, until it is back).
 * Either change re-plans: the running YAML is validated again with the
 * failures added to its own failed_links / failed_ports / failed_hosts, so
 * the fabric's
 * degraded graph (controller/config/validate.c check_failures) is what
 * GetSchedule and the state's schedule run on; the circuits stay the
 * config's (nothing is rewired around a failure). The workload's schedule on
 * it is computed, verified and announced in a KIND_SCHEDULE_REPLANNED event.
 * Restoring the last failure publishes the healthy config again. */
#include "controller/ofcd/worker.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char **strv_dup(char *const *v, uint32_t n)
{
	char **o = xcalloc((size_t)n + 1, sizeof(*o));

	for (uint32_t i = 0; i < n; i++)
		o[i] = xstrdup(v[i]);
	return o;
}

static void strv_push(char ***v, uint32_t *n, const char *s)
{
	*v = xrealloc(*v, ((size_t)*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

static bool strv_has(char *const *v, uint32_t n, const char *s)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static void strv_remove(char ***v, uint32_t *n, const char *s)
{
	for (uint32_t i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0) {
			free((*v)[i]);
			memmove(&(*v)[i], &(*v)[i + 1], (*n - i) * sizeof(**v));
			(*n)--;
			return;
		}
}

/* A set of strings (borrowed, never copied), for the lists a lost switch
 * makes long: 65,536 ports each looked up in lists of as many cost
 * billions of comparisons by scanning. Open addressing, at most half full. */
struct strset {
	const char **v;
	uint32_t cap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void set_init(struct strset *t, uint32_t n)
{
	t->cap = 16;
	while (t->cap < 2 * (uint64_t)n + 2)
		t->cap *= 2;
	t->v = xcalloc(t->cap, sizeof(*t->v));
}

/* Whether s is in t; added when add says (and t has the room it was made
 * for). */
static bool set_has_add(struct strset *t, const char *s, bool add)
{
	uint32_t i = (uint32_t)str_hash(s) & (t->cap - 1);

	for (; t->v[i]; i = (i + 1) & (t->cap - 1))
		if (strcmp(t->v[i], s) == 0)
			return true;
	if (add)
		t->v[i] = s;
	return false;
}

static void set_free(struct strset *t)
{
	free(t->v);
	t->v = NULL;
}

static bool wired_at(const struct fabric *f, int s, uint32_t p, char *item, size_t n);

/* ---- items ------------------------------------------------------------------------ */

bool failure_item_ok(const char *item)
{
	size_t len = strlen(item);

	if (len < 1 || len > 2 * NAME_MAX_LEN + 1)
		return false;
	for (const char *p = item; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.:/", *p))
			return false;
	return true;
}

/* The canonical form of an item on fabric f: a host "HOST" (an item that is
 * a host's name is that host, even when it could also be read as a link of
 * hosts whose names it joins with '-'), a link "A-B" with A the host of the
 * lower index (it names both directions), a port "HOST:PORT". A link must be
 * one of the topology's (either direction); host names may hold '-', so
 * every split is tried. */
static int item_resolve(const struct fabric *f, const char *item, char *out, size_t n,
			struct ofc_error *err)
{
	const char *colon = strrchr(item, ':');
	int whole = fabric_find_host(f, item);

	if (whole >= 0) {
		if (!f->graph)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "'%s': a failed host needs a topology to leave it out of", item);
		snprintf(out, n, "%s", f->hosts[whole].name);
		return 0;
	}

	if (colon) {
		char host[NAME_MAX_LEN + 1];
		char *end;
		size_t hl = (size_t)(colon - item);
		unsigned long p;
		int h;

		errno = 0;
		p = strtoul(colon + 1, &end, 10);
		if (hl == 0 || hl > NAME_MAX_LEN || !isdigit((unsigned char)colon[1]) || *end ||
		    errno)
			return ofc_error_set(err, OFC_E_INPUT,
					     "'%s': a failed port is HOST:PORT, a link U-V", item);
		memcpy(host, item, hl);
		host[hl] = 0;
		if ((h = fabric_find_host(f, host)) < 0)
			return ofc_error_set(err, OFC_E_INPUT, "'%s': no host '%s'", item, host);
		if (p >= f->hosts[h].ports)
			return ofc_error_set(err, OFC_E_INPUT, "'%s': host '%s' has ports 0..%u",
					     item, host, f->hosts[h].ports - 1);
		snprintf(out, n, "%s:%lu", f->hosts[h].name, p);
		return 0;
	}
	bool named = false;
	for (const char *dash = strchr(item, '-'); dash; dash = strchr(dash + 1, '-')) {
		char a[NAME_MAX_LEN + 1];
		size_t al = (size_t)(dash - item);
		int u, v;

		if (al == 0 || al > NAME_MAX_LEN)
			continue;
		memcpy(a, item, al);
		a[al] = 0;
		if ((u = fabric_find_host(f, a)) < 0 || (v = fabric_find_host(f, dash + 1)) < 0)
			continue;
		named = true;
		if (u == v || !f->graph)
			continue;
		bool arc = false;
		for (uint32_t x = f->graph->off[u]; x < f->graph->off[u + 1] && !arc; x++)
			arc = f->graph->adj[x] == (uint32_t)v;
		for (uint32_t x = f->graph->off[v]; x < f->graph->off[v + 1] && !arc; x++)
			arc = f->graph->adj[x] == (uint32_t)u;
		if (!arc)
			continue;
		snprintf(out, n, "%s-%s", f->hosts[u < v ? u : v].name,
			 f->hosts[u < v ? v : u].name);
		return 0;
	}
	if (named)
		return ofc_error_set(err, OFC_E_INPUT, "'%s': topology '%s' has no such link", item,
				     f->graph ? f->graph->spec : "(none)");
	return ofc_error_set(err, OFC_E_INPUT,
			     "'%s': not a host, a link U-V or a port HOST:PORT of this fabric's "
			     "hosts",
			     item);
}

/* ---- the file ----------------------------------------------------------------------- */

/* The state files' lines: each line of text (len bytes, changed in place)
 * that is not empty or a comment goes to take(), which returns 0, or -1 to
 * stop with why (at most n bytes) set: the file is damaged, and err names
 * it (path: its place in the store), the line and the command that sets it
 * aside (mv; nothing deletes it). With whole, a last line without its
 * newline is damage too: ofcd ends every line it writes with one, so the
 * file was cut short (a full disk, a copy stopped) and its last line may be
 * a prefix of the one written (h1:12 read as h1:1), or a field cut short
 * that would pass for a newer ofcd's (take_failure keeps those). */
static int parse_lines(const char *path, const char *mv, char *text, size_t len, bool whole,
		       int (*take)(struct ofcd *, char *line, char *why, size_t n), struct ofcd *d,
		       const char *what, const char *then, struct ofc_error *err)
{
	char why[200];
	uint32_t line = 0;

	for (char *p = text, *nl; p < text + len; p = nl + 1) {
		bool bad;

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			nl = text + len;
		*nl = 0;
		line++;
		if (whole && nl == text + len) {
			snprintf(why, sizeof(why),
				 "no newline at its end (the file was cut short)");
			bad = true;
		} else if (!*p || *p == '#') {
			continue;
		} else {
			snprintf(why, sizeof(why), "a NUL byte");
			bad = strlen(p) != (size_t)(nl - p) || take(d, p, why, sizeof(why)) < 0;
		}
		if (bad)
			return ofc_error_at(
			    err, OFC_E_RUNTIME, path, line, 1,
			    "%s: not a line of ofcd's %s file; the file is damaged: "
			    "look at it, then `%s` %s",
			    why, what, mv, then);
	}
	return 0;
}

/* parse_lines on text that names the file at path (the fuzzer's way in). */
static int parse_file_lines(const char *path, char *text, size_t len, bool whole,
			    int (*take)(struct ofcd *, char *line, char *why, size_t n),
			    struct ofcd *d, const char *what, const char *then,
			    struct ofc_error *err)
{
	char *mv = xasprintf("mv '%s' '%s.bad'", path, path);
	int rc = parse_lines(path, mv, text, len, whole, take, d, what, then, err);

	free(mv);
	return rc;
}

/* parse_lines on item `it` of the store; so is an item that cannot be
 * read (a FIFO, a directory in the file's place) refused, by name. A
 * missing item has no lines. */
static int read_lines(struct ofcd *d, const char *fabric, enum store_item it, size_t max,
		      bool whole, int (*take)(struct ofcd *, char *line, char *why, size_t n),
		      const char *what, const char *then, struct ofc_error *err)
{
	char *text = NULL, *path = store_where(d->store, fabric, it);
	char *mv = store_aside(d->store, fabric, it, ".bad");
	size_t len;
	bool missing;
	struct ofc_error e = {0};
	int rc = 0;

	if (store_get(d->store, fabric, it, max, &text, &len, &missing, &e) < 0)
		rc = ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0,
				  "%s: cannot be read as ofcd's %s file; look at it, then `%s` %s",
				  e.msg, what, mv, then);
	else if (!missing)
		rc = parse_lines(path, mv, text, len, whole, take, d, what, then, err);
	free(text);
	free(path);
	free(mv);
	return rc;
}

/* Replace item `it` by sb's text (one write of the store: a crash leaves
 * the old value or the new one), or remove it when sb is NULL. */
static int write_or_remove(struct ofcd *d, enum store_item it, const struct strbuf *sb,
			   struct ofc_error *err)
{
	struct store_write w = {it, sb ? sb->buf : NULL, sb ? sb->len : 0};

	return store_write(d->store, d->w->cfg->f->name, &w, 1, err);
}

/* A field after a failure's item that this ofcd does not know: a word of
 * lower-case letters, digits and "-_=.:" (what a newer ofcd may add, as
 * " host" was added), at most FIELD_MAX_LEN bytes. Anything else after the
 * item is damage. */
#define FIELD_MAX_LEN 64

static bool field_word(const char *w)
{
	size_t len = strlen(w);

	if (len < 1 || len > FIELD_MAX_LEN || !islower((unsigned char)*w))
		return false;
	for (; *w; w++)
		if (!islower((unsigned char)*w) && !isdigit((unsigned char)*w) &&
		    !strchr("-_=.:", *w))
			return false;
	return true;
}

/* A line "ITEM [FIELD]...": "host" after the item says a host's agent
 * made it. A field this ofcd does not know (a newer replica's, during a
 * rolling upgrade) is left out with a logged note and the failure kept,
 * so an older replica does not call a newer one's file damaged; the item
 * itself of a kind this ofcd cannot resolve is kept too, and logged as
 * not in effect where the failures are applied. */
static int take_failure(struct ofcd *d, char *line, char *why, size_t n)
{
	char *save = NULL, *item = strtok_r(line, " ", &save);
	bool by = false;

	if (!item || !failure_item_ok(item)) {
		snprintf(why, n, "not a link U-V, a port HOST:PORT or a host HOST");
		return -1;
	}
	for (char *w = strtok_r(NULL, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, "host") == 0) {
			by = true;
		} else if (field_word(w)) {
			ofcd_log(d, OFCD_LOG_NOTICE,
				 "failure %s: field '%s' is not known to this ofcd (a newer one "
				 "wrote it): left out, the failure kept",
				 item, w);
		} else {
			snprintf(why, n,
				 "after the failure, '%.40s' (not a field: a lower-case word)", w);
			return -1;
		}
	}
	if (d->w->nreported >= FAIL_MAX_ITEMS) {
		snprintf(why, n, "more than %u failures", FAIL_MAX_ITEMS);
		return -1;
	}
	if (!strv_has(d->w->reported, d->w->nreported, item))
		strv_push(&d->w->reported, &d->w->nreported, item);
	if (by && !strv_has(d->w->by_host, d->w->nby_host, item))
		strv_push(&d->w->by_host, &d->w->nby_host, item);
	return 0;
}

static const char failed_what[] = "failures (U-V, HOST:PORT or HOST)",
		  failed_then[] = "and report the failures again";

static void failures_clear(struct ofcd *d)
{
	strv_free(d->w->reported, d->w->nreported);
	d->w->reported = NULL;
	d->w->nreported = 0;
	failures_by_host_clear(d);
}

void failures_by_host_clear(struct ofcd *d)
{
	strv_free(d->w->by_host, d->w->nby_host);
	d->w->by_host = NULL;
	d->w->nby_host = 0;
}

int failures_load(struct ofcd *d, const char *fabric, struct ofc_error *err)
{
	struct ofc_error e = {0};
	int rc = read_lines(d, fabric, STORE_FAILED,
			    (size_t)FAIL_MAX_ITEMS * (2 * NAME_MAX_LEN + 3) + 4096, true,
			    take_failure, failed_what, failed_then, err);

	if (rc < 0)
		failures_clear(d);
	/* A replica's lost ports are the leader's (only the leader reads the
	 * devices): a follower shows those failures too, a new leader starts
	 * from them until its first probe. A damaged item is left out of
	 * effect, said, and not written over (failures_lost_share). */
	if (d->clustered && failures_lost_load(d, fabric, &e) < 0) {
		char buf[sizeof(e.file) + sizeof(e.msg) + 32];

		ofcd_log(d, OFCD_LOG_ERR, "the leader's lost host ports are left out of effect: %s",
			 ofc_error_str(&e, buf, sizeof(buf)));
	}
	return rc;
}

int failures_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err)
{
	int rc =
	    parse_file_lines(path, text, len, true, take_failure, d, failed_what, failed_then, err);

	if (rc < 0)
		failures_clear(d);
	return rc;
}

/* The reported set, or no file when there is none. */
static int failures_save(struct ofcd *d, struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	sb_printf(&sb, "# failures reported to ofcd (ReportFailure), one per line: U-V, "
		       "HOST:PORT or HOST; \"host\" after one a host's agent made\n");
	for (uint32_t i = 0; i < d->w->nreported; i++)
		sb_printf(&sb, "%s%s\n", d->w->reported[i],
			  strv_has(d->w->by_host, d->w->nby_host, d->w->reported[i]) ? " host"
										     : "");
	rc = write_or_remove(d, STORE_FAILED, d->w->nreported ? &sb : NULL, err);
	sb_free(&sb);
	return rc;
}

/* ---- port moves ---------------------------------------------------------------------- */

/* A line "HOST FROM TO" of the running config's hosts: whole numbers (a
 * sign or a number past 32 bits is damage; sscanf's %u took "-1" as
 * 4294967295), two different ports of the host, neither in another move.
 * The wiring itself is checked where moves are applied (fabric_validate). */
static int take_move(struct ofcd *d, char *line, char *why, size_t n)
{
	const struct fabric *f = d->w->cfg->f;
	char *tok[4], *save = NULL;
	uint32_t ntok = 0, from, to;
	int h;

	for (char *t = strtok_r(line, " \t", &save); t && ntok < 4;
	     t = strtok_r(NULL, " \t", &save))
		tok[ntok++] = t;
	if (ntok != 3 || !failure_item_ok(tok[0]) || parse_u32(tok[1], &from) < 0 ||
	    parse_u32(tok[2], &to) < 0) {
		snprintf(why, n, "not HOST FROM TO (a host name and two port numbers)");
		return -1;
	}
	if ((h = fabric_find_host(f, tok[0])) < 0) {
		snprintf(why, n, "'%s' is not a host of fabric '%s'", tok[0], f->name);
		return -1;
	}
	if (from >= f->hosts[h].ports || to >= f->hosts[h].ports || from == to) {
		snprintf(why, n, "%s %u -> %u: not two different ports of %s (0..%u)", tok[0], from,
			 to, tok[0], f->hosts[h].ports - 1);
		return -1;
	}
	for (uint32_t i = 0; i < d->w->nmoves; i++) {
		const struct port_move *m = &d->w->moves[i];

		if (strcmp(m->host, tok[0]) == 0 &&
		    (m->from == from || m->to == from || m->from == to || m->to == to)) {
			snprintf(why, n, "a port of %s %u -> %u is in an earlier move too", tok[0],
				 from, to);
			return -1;
		}
	}
	if (d->w->nmoves >= FAIL_MAX_ITEMS) {
		snprintf(why, n, "more than %u moves", FAIL_MAX_ITEMS);
		return -1;
	}
	d->w->moves = xrealloc(d->w->moves, (d->w->nmoves + 1) * sizeof(*d->w->moves));
	d->w->moves[d->w->nmoves++] = (struct port_move){xstrdup(tok[0]), from, to};
	return 0;
}

static const char moves_what[] = "port moves (HOST FROM TO)",
		  moves_then[] = "(the record's moves are served, or with an older record "
				 "the config's wiring, until the next change)";

int moves_load(struct ofcd *d, const char *fabric, struct ofc_error *err)
{
	int rc = read_lines(d, fabric, STORE_REWIRED,
			    (size_t)FAIL_MAX_ITEMS * (NAME_MAX_LEN + 24) + 4096, false, take_move,
			    moves_what, moves_then, err);

	if (rc < 0)
		moves_clear(d);
	return rc;
}

int moves_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err)
{
	int rc =
	    parse_file_lines(path, text, len, false, take_move, d, moves_what, moves_then, err);

	if (rc < 0)
		moves_clear(d);
	return rc;
}

void moves_clear(struct ofcd *d)
{
	for (uint32_t i = 0; i < d->w->nmoves; i++)
		free(d->w->moves[i].host);
	free(d->w->moves);
	d->w->moves = NULL;
	d->w->nmoves = 0;
}

int moves_save(struct ofcd *d, struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	sb_printf(&sb, "# circuits ofcd moved off lost host ports onto spare ones: HOST FROM "
		       "TO\n");
	for (uint32_t i = 0; i < d->w->nmoves; i++)
		sb_printf(&sb, "%s %u %u\n", d->w->moves[i].host, d->w->moves[i].from,
			  d->w->moves[i].to);
	rc = write_or_remove(d, STORE_REWIRED, d->w->nmoves ? &sb : NULL, err);
	sb_free(&sb);
	return rc;
}

void moves_apply(const struct ofcd *d, struct fabric *f)
{
	for (uint32_t i = 0; i < f->nmoves; i++)
		free(f->moves[i].host);
	free(f->moves);
	f->moves = d->w->nmoves ? xcalloc(d->w->nmoves, sizeof(*f->moves)) : NULL;
	f->nmoves = d->w->nmoves;
	for (uint32_t i = 0; i < d->w->nmoves; i++)
		f->moves[i] = (struct port_move){xstrdup(d->w->moves[i].host), d->w->moves[i].from,
						 d->w->moves[i].to};
}

/* ---- drained switch ports ------------------------------------------------------------ */

/* A line "SWITCH PORT SINCE_MS BY" (BY the rest of the line): a switch
 * name, a whole port number, unix ms, who; no port twice. Checked against
 * the config where it is put in effect (a switch or port a new config
 * lacks is left out of the circuits and named by drain). */
static int take_drained(struct ofcd *d, char *line, char *why, size_t n)
{
	char *tok[3], *save = NULL, *by;
	uint32_t ntok = 0, port;
	unsigned long long since;
	char *end;

	/* (three tokens, then the rest: a for loop's step would cut a fourth) */
	while (ntok < 3 && (tok[ntok] = strtok_r(ntok ? NULL : line, " \t", &save)))
		ntok++;
	by = ntok == 3 && save ? save + strspn(save, " \t") : NULL;
	errno = 0;
	if (ntok != 3 || !by || !*by || !failure_item_ok(tok[0]) || parse_u32(tok[1], &port) < 0 ||
	    !isdigit((unsigned char)tok[2][0]) || (since = strtoull(tok[2], &end, 10), *end) ||
	    errno) {
		snprintf(why, n, "not SWITCH PORT SINCE_MS BY");
		return -1;
	}
	for (uint32_t i = 0; i < d->w->ndrained; i++)
		if (strcmp(d->w->drained[i].sw, tok[0]) == 0 && d->w->drained[i].port == port) {
			snprintf(why, n, "%s:%u drained twice", tok[0], port);
			return -1;
		}
	if (d->w->ndrained >= DRAIN_MAX_PORTS) {
		snprintf(why, n, "more than %u drained ports", DRAIN_MAX_PORTS);
		return -1;
	}
	d->w->drained = xrealloc(d->w->drained, (d->w->ndrained + 1) * sizeof(*d->w->drained));
	d->w->drained[d->w->ndrained++] =
	    (struct drain_entry){xstrdup(tok[0]), port, (uint64_t)since, xstrdup(by)};
	return 0;
}

static const char drained_what[] = "drained switch ports (SWITCH PORT SINCE_MS BY)",
		  drained_then[] = "and drain the switch ports again";

void drained_clear(struct ofcd *d)
{
	for (uint32_t i = 0; i < d->w->ndrained; i++) {
		free(d->w->drained[i].sw);
		free(d->w->drained[i].by);
	}
	free(d->w->drained);
	d->w->drained = NULL;
	d->w->ndrained = 0;
}

int drained_load(struct ofcd *d, const char *fabric, struct ofc_error *err)
{
	int rc;

	drained_clear(d);
	rc = read_lines(d, fabric, STORE_DRAINED,
			(size_t)DRAIN_MAX_PORTS * (2 * NAME_MAX_LEN + 48) + 4096, false,
			take_drained, drained_what, drained_then, err);
	if (rc < 0)
		drained_clear(d);
	return rc;
}

int drained_parse(struct ofcd *d, const char *path, char *text, size_t len, struct ofc_error *err)
{
	int rc = parse_file_lines(path, text, len, false, take_drained, d, drained_what,
				  drained_then, err);

	if (rc < 0)
		drained_clear(d);
	return rc;
}

int drained_save(struct ofcd *d, struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	sb_printf(&sb, "# switch ports drained for planned work (ofc drain): SWITCH PORT "
		       "SINCE_MS BY\n");
	for (uint32_t i = 0; i < d->w->ndrained; i++)
		sb_printf(&sb, "%s %u %llu %s\n", d->w->drained[i].sw, d->w->drained[i].port,
			  (unsigned long long)d->w->drained[i].since_ms, d->w->drained[i].by);
	rc = write_or_remove(d, STORE_DRAINED, d->w->ndrained ? &sb : NULL, err);
	sb_free(&sb);
	return rc;
}

static void drained_set(struct fabric *f, const struct drained_port *v, uint32_t n)
{
	for (uint32_t i = 0; i < f->ndrained; i++)
		free(f->drained[i].sw);
	free(f->drained);
	f->drained = n ? xcalloc(n, sizeof(*f->drained)) : NULL;
	f->ndrained = n;
	for (uint32_t i = 0; i < n; i++)
		f->drained[i] = (struct drained_port){xstrdup(v[i].sw), v[i].port};
}

void drained_apply(const struct ofcd *d, struct fabric *f)
{
	struct drained_port *v = xcalloc((size_t)d->w->ndrained + 1, sizeof(*v));

	for (uint32_t i = 0; i < d->w->ndrained; i++)
		v[i] = (struct drained_port){d->w->drained[i].sw, d->w->drained[i].port};
	drained_set(f, v, d->w->ndrained);
	free(v);
}

void drained_copy(struct fabric *dst, const struct fabric *src)
{
	drained_set(dst, src->drained, src->ndrained);
}

bool drained_host_port(const struct fabric *f, const char *sw, uint32_t port, char *item, size_t n)
{
	int s = fabric_find_switch(f, sw);

	return s >= 0 && wired_at(f, s, port, item, n);
}

bool failures_has(const struct ofcd *d, const char *item)
{
	return strv_has(d->w->reported, d->w->nreported, item) ||
	       strv_has(d->w->lost, d->w->nlost, item);
}

/* ---- publishing --------------------------------------------------------------------- */

static bool in_config(const struct fabric *f, const char *item)
{
	const char *colon = strrchr(item, ':');
	int whole = fabric_find_host(f, item);

	if (whole >= 0) {
		if (f->hosts[whole].failed)
			return true;
		for (uint32_t i = 0; i < f->topology.nfailed_hosts; i++)
			if (strcmp(f->topology.failed_hosts[i].name, item) == 0)
				return true;
		return false;
	}

	if (colon) {
		for (uint32_t h = 0; h < f->nhosts; h++) {
			size_t l = strlen(f->hosts[h].name);

			if (l != (size_t)(colon - item) || strncmp(f->hosts[h].name, item, l))
				continue;
			for (uint32_t k = 0; k < f->hosts[h].nfailed_ports; k++)
				if (f->hosts[h].failed_ports[k] == strtoul(colon + 1, NULL, 10))
					return true;
		}
		return false;
	}
	for (uint32_t i = 0; i < f->topology.nfailed_links; i++) {
		char *x = xasprintf("%s-%s", f->topology.failed_links[i].a,
				    f->topology.failed_links[i].b);
		char *y = xasprintf("%s-%s", f->topology.failed_links[i].b,
				    f->topology.failed_links[i].a);
		bool hit = !strcmp(x, item) || !strcmp(y, item);

		free(x);
		free(y);
		if (hit)
			return true;
	}
	return false;
}

/* The config's own failures as canonical items (in_config's, for many):
 * its strings in *own, the set over them in t. */
static void config_failures(const struct fabric *f, struct strset *t, char ***own, uint32_t *n)
{
	uint32_t count = 2 * f->topology.nfailed_links + f->topology.nfailed_hosts;

	*own = NULL;
	*n = 0;
	for (uint32_t h = 0; h < f->nhosts; h++)
		count += f->hosts[h].nfailed_ports + (f->hosts[h].failed ? 1 : 0);
	set_init(t, count);
	for (uint32_t h = 0; h < f->nhosts; h++) {
		if (f->hosts[h].failed)
			strv_push(own, n, f->hosts[h].name);
		for (uint32_t k = 0; k < f->hosts[h].nfailed_ports; k++) {
			char *item =
			    xasprintf("%s:%u", f->hosts[h].name, f->hosts[h].failed_ports[k]);

			strv_push(own, n, item);
			free(item);
		}
	}
	for (uint32_t i = 0; i < f->topology.nfailed_hosts; i++)
		strv_push(own, n, f->topology.failed_hosts[i].name);
	for (uint32_t i = 0; i < f->topology.nfailed_links; i++) {
		const char *a = f->topology.failed_links[i].a, *b = f->topology.failed_links[i].b;
		char *x = xasprintf("%s-%s", a, b), *y = xasprintf("%s-%s", b, a);

		strv_push(own, n, x);
		strv_push(own, n, y);
		free(x);
		free(y);
	}
	for (uint32_t i = 0; i < *n; i++)
		(void)set_has_add(t, (*own)[i], true);
}

/* The running YAML with its topology, its port moves and these failures
 * added (canonical items of f), validated. */
static int build(const struct ofcd *d, const struct fabcfg *h, char **items, uint32_t n,
		 struct fabric **out, struct ofc_error *err)
{
	struct fabric *f;

	*out = NULL;
	if (config_parse(h->path, h->yaml, h->yaml_len, &f, err) < 0)
		return -1;
	f->files = h->f->files;
	free(f->dir); /* a config sent without a filename resolves where it did */
	f->dir = xstrdup(h->f->dir);
	moves_apply(d, f);
	drained_copy(f, h->f); /* the circuits the running config has */
	if (h->f->topology.present) {
		free(f->topology.spec);
		f->topology.spec = xstrdup(h->f->topology.spec);
		f->topology.present = true;
		f->topology.spec_quoted = 0;
		f->topology.auto_picked = false;
	}
	fabric_add_failures(f, h->f, items, n);
	if (fabric_validate(f, err) < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

struct fabcfg *failures_publish_on(struct ofcd *d, struct fabcfg *h)
{
	char **eff = NULL, canon[2 * NAME_MAX_LEN + 24];
	uint32_t neff = 0;
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char *why = NULL, **own;
	uint32_t nown;
	struct strset seen, in_cfg;

	char **dr = NULL; /* the host ports cabled to drained switch ports */
	uint32_t ndr = 0;

	for (uint32_t i = 0; i < d->w->ndrained; i++)
		if (drained_host_port(h->f, d->w->drained[i].sw, d->w->drained[i].port, canon,
				      sizeof(canon)))
			strv_push(&dr, &ndr, canon);
	config_failures(h->f, &in_cfg, &own, &nown);
	set_init(&seen, d->w->nreported + d->w->nlost + ndr + d->w->nstaging);
	for (uint32_t s = 0; s < 4; s++) {
		char **v = s == 3 ? d->w->staging : s == 2 ? dr : s ? d->w->lost : d->w->reported;
		uint32_t n = s == 3   ? d->w->nstaging
			     : s == 2 ? ndr
			     : s      ? d->w->nlost
				      : d->w->nreported;

		for (uint32_t i = 0; i < n; i++) {
			if (item_resolve(h->f, v[i], canon, sizeof(canon), &err) < 0) {
				ofcd_log(d, OFCD_LOG_NOTICE,
					 "failure %s is not in effect on topology %s: %s", v[i],
					 h->f->graph ? h->f->graph->spec : "(none)", err.msg);
				ofc_error_clear(&err);
				continue;
			}
			if (!set_has_add(&seen, canon, false) &&
			    !set_has_add(&in_cfg, canon, false)) {
				strv_push(&eff, &neff, canon);
				(void)set_has_add(&seen, eff[neff - 1], true);
			}
		}
	}
	set_free(&seen);
	set_free(&in_cfg);
	strv_free(own, nown);
	strv_free(dr, ndr);
	if (!neff)
		return fabcfg_ref(h);
	if (build(d, h, eff, neff, &f, &err) < 0) {
		/* No schedule survives (disconnected, or ports without port
		 * permutations): serve the config as it is, for the state, and
		 * say why wherever a schedule is asked for. */
		why = xasprintf("no schedule survives the failures (%u in effect): %s", neff,
				err.msg);
		ofc_error_clear(&err);
		if (build(d, h, NULL, 0, &f, &err) < 0) {
			ofcd_log(d, OFCD_LOG_ERR, "the running config no longer validates: %s",
				 err.msg);
			free(why);
			strv_free(eff, neff);
			return fabcfg_ref(h);
		}
	}
	struct fabcfg *c = fabcfg_new(f, h->yaml, h->yaml_len, h->path, &d->o);
	c->coll = h->coll;
	c->size = h->size;
	c->failed = eff;
	c->nfailed = neff;
	for (uint32_t i = 0; i < d->w->nby_host; i++)
		if (strv_has(eff, neff, d->w->by_host[i]))
			strv_push(&c->failed_by_host, &c->nfailed_by_host, d->w->by_host[i]);
	c->no_schedule = why;
	c->healthy = fabcfg_ref(h);
	return c;
}

struct fabcfg *failures_publish(struct ofcd *d)
{
	return failures_publish_on(d, d->w->cfg);
}

/* ---- devices ------------------------------------------------------------------------- */

/* The host port cabled to port p of switch s, as "HOST:PORT", into item. */
static bool wired_at(const struct fabric *f, int s, uint32_t p, char *item, size_t n)
{
	for (uint32_t k = 0; k < f->nwiring; k++)
		if ((int)f->wiring[k].sw == s && f->wiring[k].sw_port == p) {
			snprintf(item, n, "%s:%u", f->hosts[f->wiring[k].host].name,
				 f->wiring[k].host_port);
			return true;
		}
	return false;
}

bool failures_devices(struct ofcd *d, char *cause, size_t n)
{
	const struct fabric *f = d->w->cfg->f;
	struct ctl *c = d->w->ctl;
	char **now = NULL, item[NAME_MAX_LEN + 16];
	uint32_t nnow = 0, lost = 0, alarmed = 0;
	bool same;
	struct strset seen, was;

	set_init(&seen, f->nwiring);

	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		int s;

		if (cd->cfg.cls != DEV_SWITCH || (s = fabric_find_switch(f, cd->cfg.name)) < 0)
			continue;
		if (cd->lost) {
			lost++;
			for (uint32_t k = 0; k < f->nwiring; k++)
				if ((int)f->wiring[k].sw == s) {
					snprintf(item, sizeof(item), "%s:%u",
						 f->hosts[f->wiring[k].host].name,
						 f->wiring[k].host_port);
					if (!set_has_add(&seen, item, false)) {
						strv_push(&now, &nnow, item);
						(void)set_has_add(&seen, now[nnow - 1], true);
					}
				}
			continue;
		}
		/* the switch's own word that a port in use is failing */
		for (uint32_t a = 0; a < cd->dev.nalarms; a++)
			if (wired_at(f, s, cd->dev.alarms[a].port, item, sizeof(item)) &&
			    !set_has_add(&seen, item, false)) {
				strv_push(&now, &nnow, item);
				(void)set_has_add(&seen, now[nnow - 1], true);
				alarmed++;
			}
	}
	set_free(&seen);
	set_init(&was, d->w->nlost);
	for (uint32_t i = 0; i < d->w->nlost; i++)
		(void)set_has_add(&was, d->w->lost[i], true);
	same = nnow == d->w->nlost;
	for (uint32_t i = 0; i < nnow && same; i++)
		same = set_has_add(&was, now[i], false);
	set_free(&was);
	if (same) {
		strv_free(now, nnow);
		return false;
	}
	if (lost && alarmed)
		snprintf(cause, n, "%u switch%s lost, %u host port%s on failing switch ports", lost,
			 lost == 1 ? "" : "es", alarmed, alarmed == 1 ? "" : "s");
	else if (lost)
		snprintf(cause, n, "a switch was lost");
	else if (alarmed)
		snprintf(cause, n, "%u host port%s on switch ports the switch reports failing",
			 alarmed, alarmed == 1 ? "" : "s");
	else
		snprintf(cause, n, "the lost switches and failing switch ports are back");
	strv_free(d->w->lost, d->w->nlost);
	d->w->lost = now;
	d->w->nlost = nnow;
	return true;
}

/* ---- the lost ports through the store --------------------------------------------------- */

/* Only the leader reads devices; the others learn what it lost from the
 * store (STORE_LOST): one host port HOST:PORT a line, at most one a wired
 * host port of the fabric (what failures_devices can find). A follower
 * puts them in effect as the leader did, so its state shows the failures
 * and the leader's schedule for them (state_schedule_store.c: the same
 * inputs); a new leader starts from them until its first probe says. */

static const char lost_what[] = "lost host ports (HOST:PORT)",
		  lost_then[] = "(the leader writes it again when its devices change)";

static void lost_clear(struct ofcd *d)
{
	strv_free(d->w->lost, d->w->nlost);
	d->w->lost = NULL;
	d->w->nlost = 0;
}

static int take_lost(struct ofcd *d, char *item, char *why, size_t n)
{
	if (!failure_item_ok(item) || !strrchr(item, ':')) {
		snprintf(why, n, "not a host port HOST:PORT");
		return -1;
	}
	if (d->w->nlost >= d->w->cfg->f->nwiring) {
		snprintf(why, n, "more than the fabric's %u wired host ports",
			 d->w->cfg->f->nwiring);
		return -1;
	}
	strv_push(&d->w->lost, &d->w->nlost, item);
	return 0;
}

int failures_lost_load(struct ofcd *d, const char *fabric, struct ofc_error *err)
{
	size_t max = (size_t)d->w->cfg->f->nwiring * (NAME_MAX_LEN + 12) + 4096;
	int rc;

	lost_clear(d);
	rc = read_lines(d, fabric, STORE_LOST, max, false, take_lost, lost_what, lost_then, err);
	if (rc < 0)
		lost_clear(d);
	return rc;
}

void failures_lost_share(struct ofcd *d)
{
	const char *fabric = d->w->cfg->f->name;
	struct ofc_error err = {0};
	struct strbuf sb = STRBUF_INIT;

	if (!d->clustered || !store_epoch(d->store))
		return;
	/* Whatever the store holds now must parse first: damage (an
	 * operator's, or a bad write's) is for an operator to look at. */
	char **keep = d->w->lost;
	uint32_t nkeep = d->w->nlost;

	d->w->lost = NULL;
	d->w->nlost = 0;
	int rc = failures_lost_load(d, fabric, &err);
	lost_clear(d);
	d->w->lost = keep;
	d->w->nlost = nkeep;
	if (rc < 0) {
		char buf[sizeof(err.file) + sizeof(err.msg) + 32];

		ofcd_log(d, OFCD_LOG_ERR,
			 "the lost host ports are not written to the store over a damaged item "
			 "(the other replicas do not see them): %s",
			 ofc_error_str(&err, buf, sizeof(buf)));
		return;
	}
	sb_printf(&sb, "# host ports the leader's devices lost (a switch lost, a switch port "
		       "failing), one per line: HOST:PORT\n");
	for (uint32_t i = 0; i < d->w->nlost; i++)
		sb_printf(&sb, "%s\n", d->w->lost[i]);
	if (write_or_remove(d, STORE_LOST, d->w->nlost ? &sb : NULL, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the lost host ports are not written to the store (%s): the other "
			 "replicas do not see them",
			 err.msg);
	else
		ofcd_log(d, OFCD_LOG_INFO,
			 "the lost host ports written to the store for the other replicas (%u)",
			 d->w->nlost);
	sb_free(&sb);
}

/* ---- ReportFailure ----------------------------------------------------------------------- */

/* Change the reported set as j asks (items checked against the running
 * config first: a bad one changes nothing). */
int failures_report(struct ofcd *d, const struct job *j, struct ofc_error *err)
{
	char **v = strv_dup(d->w->reported, d->w->nreported), canon[2 * NAME_MAX_LEN + 24];
	uint32_t n = d->w->nreported;
	char **bh = strv_dup(d->w->by_host, d->w->nby_host);
	uint32_t nbh = j->clear ? 0 : d->w->nby_host;

	if (j->clear) {
		strv_free(v, n);
		v = NULL;
		n = 0;
		strv_free(bh, d->w->nby_host);
		bh = NULL;
	}
	for (uint32_t i = 0; i < j->nitems; i++) {
		if (item_resolve(d->w->cfg->f, j->items[i], canon, sizeof(canon), err) < 0) {
			/* A restore may name what a changed topology no longer has. */
			if (!j->restore || !strv_has(v, n, j->items[i])) {
				strv_free(v, n);
				strv_free(bh, nbh);
				return -1;
			}
			snprintf(canon, sizeof(canon), "%s", j->items[i]);
			ofc_error_clear(err);
		}
		bool has = strv_has(v, n, canon);
		/* a host's report makes only what was not failed yet; a restore,
		 * or an operator's failure of it, ends the host's claim */
		if (!(j->by_host && !has && !j->restore))
			strv_remove(&bh, &nbh, canon);
		else if (!strv_has(bh, nbh, canon))
			strv_push(&bh, &nbh, canon);
		if (j->restore && has) {
			uint32_t k = 0;

			while (strcmp(v[k], canon) != 0)
				k++;
			free(v[k]);
			memmove(&v[k], &v[k + 1], (n - k) * sizeof(*v));
			n--;
		} else if (j->restore) {
			ofc_error_set(err, OFC_E_INPUT, "'%s' was not reported failed%s",
				      j->items[i],
				      in_config(d->w->cfg->f, canon)
					  ? " (the config's own failures change with the config)"
					  : "");
			strv_free(v, n);
			strv_free(bh, nbh);
			return -1;
		} else if (!has) {
			if (n >= FAIL_MAX_ITEMS) {
				strv_free(v, n);
				strv_free(bh, nbh);
				return ofc_error_set(err, OFC_E_INPUT,
						     "more than %u failures reported",
						     FAIL_MAX_ITEMS);
			}
			strv_push(&v, &n, canon);
		}
	}
	char **old = d->w->reported, **oldbh = d->w->by_host;
	uint32_t nold = d->w->nreported, noldbh = d->w->nby_host;
	d->w->reported = v;
	d->w->nreported = n;
	d->w->by_host = bh;
	d->w->nby_host = nbh;
	if (failures_save(d, err) < 0) {
		d->w->reported = old;
		d->w->nreported = nold;
		d->w->by_host = oldbh;
		d->w->nby_host = noldbh;
		strv_free(v, n);
		strv_free(bh, nbh);
		return -1;
	}
	strv_free(old, nold);
	strv_free(oldbh, noldbh);
	return 0;
}
