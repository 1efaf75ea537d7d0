/* The files a fabric keeps in the state directory, as protobuf messages
 * (proto/state.proto): the recorded state after the last commit and the
 * journal of a transaction in progress. Both are replaced whole by
 * write-to-temp, fsync, rename (atomic_write), so a crash leaves either the
 * old file or the new one, never half of one. */
#include "controller/reconfig/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/state.pb-c.h"

#define RECORD_MAX_BYTES (256u << 20)

/* Where a record or journal came from, for its errors: its place (a path
 * or an etcd key, err->file), what it is called, the command that sets it
 * aside (NULL: mv it to NAME.corrupt), and which of the two it is. */
struct loc {
	const char *where;
	const char *noun;
	const char *aside;
	bool journal;
};

/* A record or journal ofc cannot trust: nothing is planned or changed
 * while it is there (a record restarted at transaction 1 would overwrite
 * it; a journal read wrongly would drive devices to values nobody chose).
 * The message says why and how to move it aside. */
static int damaged(struct ofc_error *err, const struct loc *l, const char *fmt, ...)
    OFC_PRINTF(3, 4);
static int damaged(struct ofc_error *err, const struct loc *l, const char *fmt, ...)
{
	char why[200];
	char *mv = l->aside ? NULL : xasprintf("mv '%s' '%s.corrupt'", l->where, l->where);
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (l->journal)
		rc = ofc_error_at(err, OFC_E_RUNTIME, l->where, 0, 0,
				  "corrupt %s: %s. The transaction it records cannot be "
				  "repaired from it: check what the devices hold (ofc status), "
				  "then move it aside: %s",
				  l->noun, why, l->aside ? l->aside : mv);
	else
		rc = ofc_error_at(err, OFC_E_RUNTIME, l->where, 0, 0,
				  "corrupt %s: %s. Nothing is planned or changed while it is "
				  "there; move it aside to start a new record: %s",
				  l->noun, why, l->aside ? l->aside : mv);
	free(mv);
	return rc;
}

/* ---- device state <-> DeviceRecord ------------------------------------------ */

static void pack_device(struct arena *a, Ofc__V1__DeviceRecord *r, const char *name,
			const char *driver, const struct device_state *s)
{
	ofc__v1__device_record__init(r);
	r->name = arena_strdup(a, name);
	r->driver = arena_strdup(a, driver);
	r->n_xconn = (size_t)s->nxc * 2;
	r->xconn = arena_array(a, r->n_xconn + 1, sizeof(uint32_t));
	if (r->n_xconn)
		memcpy(r->xconn, s->xc, r->n_xconn * sizeof(uint32_t));
	r->n_channels = (size_t)s->nch * 4;
	r->channels = arena_array(a, r->n_channels + 1, sizeof(uint32_t));
	if (r->n_channels)
		memcpy(r->channels, s->ch, r->n_channels * sizeof(uint32_t));
	r->n_links = (size_t)s->nlinks * 4;
	r->links = arena_array(a, r->n_links + 1, sizeof(uint32_t));
	if (r->n_links)
		memcpy(r->links, s->links, r->n_links * sizeof(uint32_t));
	r->n_routes = (size_t)s->nroutes * 3;
	r->routes = arena_array(a, r->n_routes + 1, sizeof(uint32_t));
	if (r->n_routes)
		memcpy(r->routes, s->routes, r->n_routes * sizeof(uint32_t));
}

static int unpack_device(const Ofc__V1__DeviceRecord *r, struct device_state *s,
			 const struct loc *path, struct ofc_error *err)
{
	if (!r->name || !*r->name || r->n_xconn % 2 || r->n_channels % 4 || r->n_links % 4 ||
	    r->n_routes % 3)
		return damaged(err, path, "bad record for device '%.64s'", r->name ? r->name : "");
	state_init(s, 0);
	for (size_t i = 0; i < r->n_xconn; i += 2)
		state_add_xconn(s, r->xconn[i], r->xconn[i + 1]);
	for (size_t i = 0; i < r->n_channels; i += 4)
		state_add_chan(s, (struct mrr_chan){r->channels[i], r->channels[i + 1],
						    r->channels[i + 2], r->channels[i + 3]});
	for (size_t i = 0; i < r->n_links; i += 4)
		state_add_link(s, (struct hlink){r->links[i], r->links[i + 1], r->links[i + 2],
						 r->links[i + 3]});
	for (size_t i = 0; i < r->n_routes; i += 3)
		state_add_route(s,
				(struct hroute){r->routes[i], r->routes[i + 1], r->routes[i + 2]});
	state_sort(s);
	/* What can be checked without the config: one kind of entry, ports
	 * from 1, nothing twice (ctl_recover checks the journal's numbers
	 * against the devices too). */
	struct device_cfg any = {.cls = s->nch ? DEV_RING : s->nxc ? DEV_SWITCH : DEV_HOSTS};
	struct ofc_error e = {0};

	if (state_check(s, &any, &e) < 0) {
		state_free(s);
		return damaged(err, path, "device '%.64s': %s", r->name, e.msg);
	}
	return 0;
}

/* m packed, for a store write (caller frees w->data). */
static void pack_msg(struct store_write *w, enum store_item it, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = xmalloc(len + 1);

	protobuf_c_message_pack(m, buf);
	*w = (struct store_write){it, buf, len};
}

/* The item's bytes (caller frees); *missing when there is none. What is
 * in the item's place but no value (a FIFO, a directory) stops ofc with
 * the way out. */
static int load(struct store *st, const char *fabric, enum store_item it, char **data, size_t *len,
		bool *missing, struct ofc_error *err)
{
	if (store_get(st, fabric, it, RECORD_MAX_BYTES, data, len, missing, err) < 0) {
		if (err->reason == OFC_R_GARBAGE) {
			char *mv = store_aside(st, fabric, it, ".corrupt");
			char *msg = xasprintf("%s; nothing is planned or changed while it is "
					      "there: move it aside: %s",
					      err->msg, mv);

			/* (msg is a few hundred bytes: the path twice, bounded) */
			memcpy(err->msg, msg, strnlen(msg, sizeof(err->msg) - 1));
			err->msg[strnlen(msg, sizeof(err->msg) - 1)] = 0;
			err->reason = OFC_R_NONE;
			free(msg);
			free(mv);
		}
		return -1;
	}
	return 0;
}

static ProtobufCMessage *parse_msg(const struct loc *path, const ProtobufCMessageDescriptor *d,
				   const uint8_t *data, size_t len, struct ofc_error *err)
{
	ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, data);

	if (!m)
		damaged(err, path, "not an %s message", d->name);
	return m;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name that appears twice among n, or NULL (sorted copy: records can
 * hold many devices, and the fuzzer finds quadratic loops). */
static const char *twice(char *const *names, uint32_t n)
{
	char **s = xcalloc((size_t)n + 1, sizeof(*s));
	const char *dup = NULL;

	memcpy(s, names, (size_t)n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_name);
	for (uint32_t i = 1; i < n && !dup; i++)
		if (strcmp(s[i - 1], s[i]) == 0)
			dup = s[i];
	free(s);
	return dup;
}

/* ---- state file ------------------------------------------------------------- */

void txn_meta_free(struct txn_meta *m)
{
	free(m->topology);
	free(m->config);
	free(m->partition);
	free(m->fabric_topology);
	free(m->principal);
	for (uint32_t i = 0; i < m->nmoves; i++)
		free(m->moves[i].host);
	free(m->moves);
	memset(m, 0, sizeof(*m));
}

void txn_meta_copy(struct txn_meta *dst, const struct txn_meta *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->topology = xstrdup(src->topology ? src->topology : "");
	dst->config = xstrdup(src->config ? src->config : "");
	dst->partition = src->partition && *src->partition ? xstrdup(src->partition) : NULL;
	dst->fabric_topology = src->fabric_topology ? xstrdup(src->fabric_topology) : NULL;
	dst->principal = src->principal ? xstrdup(src->principal) : NULL;
	dst->relabelled = src->relabelled;
	dst->moves_known = src->moves_known;
	dst->nmoves = src->nmoves;
	dst->moves = xcalloc((size_t)src->nmoves + 1, sizeof(*dst->moves));
	for (uint32_t i = 0; i < src->nmoves; i++)
		dst->moves[i] = (struct port_move){xstrdup(src->moves[i].host), src->moves[i].from,
						   src->moves[i].to};
}

/* ---- moved ports <-> PortMove ------------------------------------------------ */

static Ofc__V1__PortMove **pack_moves(struct arena *a, const struct txn_meta *m)
{
	Ofc__V1__PortMove **pm = arena_array(a, (size_t)m->nmoves + 1, sizeof(*pm));

	for (uint32_t i = 0; i < m->nmoves; i++) {
		pm[i] = arena_alloc(a, sizeof(**pm));
		ofc__v1__port_move__init(pm[i]);
		pm[i]->host = m->moves[i].host;
		pm[i]->has_from = pm[i]->has_to = true;
		pm[i]->from = m->moves[i].from;
		pm[i]->to = m->moves[i].to;
	}
	return pm;
}

/* A host name as a config may give it: printable, no space (what fits the
 * fabric is checked where moves are applied, fabric_validate). */
static bool host_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 1 || n > NAME_MAX_LEN)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

struct port_ref {
	const char *host;
	uint32_t port;
};

static int cmp_port_ref(const void *a, const void *b)
{
	const struct port_ref *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	return c ? c : x->port < y->port ? -1 : x->port > y->port;
}

/* A host port in two moves (as either end), or NULL: sorted, as a record
 * may hold many. */
static const struct port_ref *port_twice(const struct port_move *m, uint32_t n,
					 struct port_ref *scratch)
{
	for (uint32_t i = 0; i < n; i++) {
		scratch[2 * i] = (struct port_ref){m[i].host, m[i].from};
		scratch[2 * i + 1] = (struct port_ref){m[i].host, m[i].to};
	}
	qsort(scratch, 2 * (size_t)n, sizeof(*scratch), cmp_port_ref);
	for (size_t i = 1; i < 2 * (size_t)n; i++)
		if (cmp_port_ref(&scratch[i - 1], &scratch[i]) == 0)
			return &scratch[i];
	return NULL;
}

/* pm[0..n) into *out (*nout of them; the caller frees them, also on error). */
static int unpack_moves(Ofc__V1__PortMove *const *pm, size_t n, struct port_move **out,
			uint32_t *nout, const struct loc *path, struct ofc_error *err)
{
	*out = xcalloc(n + 1, sizeof(**out));
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		const Ofc__V1__PortMove *x = pm[i];

		if (!host_name_ok(x->host) || !x->has_from || !x->has_to || x->from == x->to)
			return damaged(err, path,
				       "moved port %zu is not a host name and two different ports",
				       i + 1);
		(*out)[(*nout)++] = (struct port_move){xstrdup(x->host), x->from, x->to};
	}
	struct port_ref *scratch = xcalloc(2 * n + 1, sizeof(*scratch));
	const struct port_ref *dup = port_twice(*out, *nout, scratch);
	int rc =
	    dup ? damaged(err, path, "port %.64s:%u is in two moves", dup->host, dup->port) : 0;

	free(scratch);
	return rc;
}

/* The record of states (c->devs' order) and meta, packed into *w. */
static void record_pack(const struct ctl *c, uint64_t generation, const struct device_state *states,
			const struct txn_meta *meta, struct store_write *w)
{
	Ofc__V1__FabricRecord r = OFC__V1__FABRIC_RECORD__INIT;
	struct arena a = {0};

	r.fabric = c->fabric->name;
	r.config = meta->config;
	r.has_generation = true;
	r.generation = generation;
	r.has_time_unix_ms = true;
	r.time_unix_ms = unix_ms();
	r.topology = meta->topology;
	r.partition = meta->partition && *meta->partition ? meta->partition : NULL;
	r.fabric_topology = meta->fabric_topology;
	r.principal = meta->principal;
	r.has_relabelled = meta->relabelled;
	r.relabelled = meta->relabelled;
	/* Every id used so far, this transaction's too when it rolled back
	 * (the record keeps the generation before it): the next is after. */
	r.has_last_transaction = true;
	r.last_transaction = generation > c->txn ? generation : c->txn;
	if (c->last_txn > r.last_transaction)
		r.last_transaction = c->last_txn;
	/* Only what is known is recorded as such: a rollback to an older
	 * ofc's record keeps its moves unknown. */
	if (meta->moves_known) {
		r.has_version = true;
		r.version = STATE_VERSION;
		r.n_moves = meta->nmoves;
		r.moves = pack_moves(&a, meta);
	}
	/* (a replicated ofcd's: the leadership that committed it, and which
	 * replica that was) */
	r.epoch = store_epoch(c->store);
	r.has_epoch = r.epoch != 0;
	r.replica = (char *)store_replica(c->store);
	r.n_devices = c->ndevs;
	r.devices = arena_array(&a, c->ndevs + 1, sizeof(*r.devices));
	for (uint32_t i = 0; i < c->ndevs; i++) {
		r.devices[i] = arena_alloc(&a, sizeof(**r.devices));
		pack_device(&a, r.devices[i], c->devs[i].dev.cfg.name, c->devs[i].dev.cfg.driver,
			    &states[i]);
	}
	pack_msg(w, STORE_RECORD, &r.base);
	arena_free(&a);
}

int record_write(const struct ctl *c, uint64_t generation, const struct device_state *states,
		 const struct txn_meta *meta, struct ofc_error *err)
{
	struct store_write w;
	int rc;

	record_pack(c, generation, states, meta, &w);
	rc = store_write(c->store, c->fabric->name, &w, 1, err);
	free((void *)w.data);
	return rc;
}

int record_commit(const struct ctl *c, uint64_t generation, const struct device_state *states,
		  const struct txn_meta *meta, const struct store_write *also,
		  struct ofc_error *err)
{
	struct store_write w[3];
	uint32_t n = 0;
	int rc;

	if (also && also->data)
		w[n++] = *also;
	record_pack(c, generation, states, meta, &w[n]);
	w[n + 1] = (struct store_write){STORE_JOURNAL, NULL, 0};
	rc = store_write(c->store, c->fabric->name, w, n + 2, err);
	free((void *)w[n].data);
	return rc;
}

/* ---- journal ---------------------------------------------------------------- */

static const char *const phase_names[] = {
    [JOURNAL_APPLYING] = "applying",
    [JOURNAL_ROLLING_BACK] = "rolling-back",
    [JOURNAL_TRIAL] = "trial",
    [JOURNAL_COMMITTING] = "committing",
};

const char *journal_phase_name(enum journal_phase p)
{
	return p >= JOURNAL_APPLYING && p <= JOURNAL_COMMITTING ? phase_names[p] : "unknown";
}

int journal_write(const struct ctl *c, const struct journal *j, struct ofc_error *err)
{
	Ofc__V1__Journal m = OFC__V1__JOURNAL__INIT;
	struct arena a = {0};
	struct store_write w;
	int rc;

	m.has_id = true;
	m.id = j->id;
	m.has_phase = true;
	m.phase = (Ofc__V1__Journal__Phase)j->phase;
	m.fabric = c->fabric->name;
	/* An older journal rewritten (its rollback's phase) stays what it
	 * was: it gains no version it does not have the fields of. */
	m.has_version = j->version >= 2;
	m.version = j->version;
	m.config = j->meta.config;
	m.has_pid = true;
	m.pid = (uint32_t)getpid();
	m.epoch = store_epoch(c->store);
	m.has_epoch = m.epoch != 0;
	m.replica = (char *)store_replica(c->store);
	m.has_started_unix_ms = true;
	m.started_unix_ms = j->started_ms;
	m.topology = j->meta.topology;
	m.partition = j->meta.partition && *j->meta.partition ? j->meta.partition : NULL;
	m.fabric_topology = j->meta.fabric_topology;
	m.principal = j->meta.principal;
	m.has_relabelled = j->meta.relabelled;
	m.relabelled = j->meta.relabelled;
	m.n_moves = j->meta.nmoves;
	m.moves = pack_moves(&a, &j->meta);
	if (j->also.data && j->also.item == STORE_HELD) {
		m.has_commit_held = true;
		m.commit_held.data = (uint8_t *)j->also.data;
		m.commit_held.len = j->also.len;
	}
	if (j->trial_deadline > 0) {
		m.has_trial_deadline_unix = true;
		m.trial_deadline_unix = j->trial_deadline;
	}
	m.n_before = m.n_target = j->ndevs;
	m.before = arena_array(&a, j->ndevs + 1, sizeof(*m.before));
	m.target = arena_array(&a, j->ndevs + 1, sizeof(*m.target));
	for (uint32_t i = 0; i < j->ndevs; i++) {
		m.before[i] = arena_alloc(&a, sizeof(**m.before));
		m.target[i] = arena_alloc(&a, sizeof(**m.target));
		pack_device(&a, m.before[i], j->names[i], j->drivers[i], &j->before[i]);
		pack_device(&a, m.target[i], j->names[i], j->drivers[i], &j->target[i]);
	}
	pack_msg(&w, STORE_JOURNAL, &m.base);
	arena_free(&a);
	rc = store_write(c->store, c->fabric->name, &w, 1, err);
	free((void *)w.data);
	return rc;
}

void journal_free(struct journal *j)
{
	for (uint32_t i = 0; i < j->ndevs; i++) {
		free(j->names[i]);
		free(j->drivers[i]);
		state_free(&j->before[i]);
		state_free(&j->target[i]);
	}
	free(j->names);
	free(j->drivers);
	free(j->before);
	free(j->target);
	txn_meta_free(&j->meta);
	free((void *)j->also.data);
	free(j->replica);
	memset(j, 0, sizeof(*j));
}

static int parse_journal(const struct loc *path, const uint8_t *data, size_t len, struct journal *j,
			 struct ofc_error *err)
{
	Ofc__V1__Journal *m;
	const char *dup;
	int rc = 0;

	memset(j, 0, sizeof(*j));
	m = (Ofc__V1__Journal *)parse_msg(path, &ofc__v1__journal__descriptor, data, len, err);
	if (!m)
		return -1;
	/* (No version is an older ofc's; versions start at 2.) */
	if (m->n_before != m->n_target || !m->has_id || !m->has_phase || m->id == 0 ||
	    (int)m->phase < JOURNAL_APPLYING || (int)m->phase > JOURNAL_COMMITTING ||
	    (m->has_version && m->version < 2)) {
		rc = damaged(err, path,
			     "not a journal ofc wrote (no id, an unknown phase or version)");
		goto out;
	}
	j->id = m->id;
	j->phase = (enum journal_phase)m->phase;
	j->pid = m->pid;
	j->epoch = m->has_epoch ? m->epoch : 0;
	j->replica = m->replica && *m->replica ? xstrdup(m->replica) : NULL;
	j->started_ms = m->started_unix_ms;
	j->trial_deadline = m->has_trial_deadline_unix ? m->trial_deadline_unix : 0;
	j->version = m->has_version ? m->version : 1;
	j->meta.config = xstrdup(m->config ? m->config : "");
	j->meta.topology = xstrdup(m->topology ? m->topology : "");
	j->meta.partition = m->partition && *m->partition ? xstrdup(m->partition) : NULL;
	j->meta.fabric_topology = m->fabric_topology ? xstrdup(m->fabric_topology) : NULL;
	j->meta.principal = m->principal && *m->principal ? xstrdup(m->principal) : NULL;
	j->meta.relabelled = m->has_relabelled && m->relabelled;
	j->meta.moves_known = j->version >= 2;
	if (m->has_commit_held) {
		uint8_t *held = xmalloc(m->commit_held.len + 1);

		memcpy(held, m->commit_held.data, m->commit_held.len);
		j->also = (struct store_write){STORE_HELD, held, m->commit_held.len};
	}
	rc = unpack_moves(m->moves, m->n_moves, &j->meta.moves, &j->meta.nmoves, path, err);
	j->ndevs = (uint32_t)m->n_before;
	j->names = xcalloc(j->ndevs + 1, sizeof(char *));
	j->drivers = xcalloc(j->ndevs + 1, sizeof(char *));
	j->before = xcalloc(j->ndevs + 1, sizeof(struct device_state));
	j->target = xcalloc(j->ndevs + 1, sizeof(struct device_state));
	for (uint32_t i = 0; i < j->ndevs && rc == 0; i++) {
		j->names[i] = xstrdup(m->before[i]->name ? m->before[i]->name : "");
		j->drivers[i] = xstrdup(m->before[i]->driver ? m->before[i]->driver : "");
		rc = unpack_device(m->before[i], &j->before[i], path, err);
		if (rc == 0)
			rc = unpack_device(m->target[i], &j->target[i], path, err);
		if (rc == 0 && (!m->target[i]->name || strcmp(m->target[i]->name, j->names[i])))
			rc = damaged(err, path, "device %u is '%.64s' before and '%.64s' after", i,
				     j->names[i], m->target[i]->name ? m->target[i]->name : "");
	}
	if (rc == 0 && (dup = twice(j->names, j->ndevs)))
		rc = damaged(err, path, "device '%.64s' twice", dup);
	if (rc < 0)
		journal_free(j);
out:
	ofc__v1__journal__free_unpacked(m, NULL);
	return rc;
}

int journal_parse(const char *path, const uint8_t *data, size_t len, struct journal *j,
		  struct ofc_error *err)
{
	return parse_journal(&(struct loc){path, "file", NULL, true}, data, len, j, err);
}

/* Where item it of fabric lives, for its errors (free l->where, l->aside). */
static void loc_of(struct store *st, const char *fabric, enum store_item it, struct loc *l)
{
	*l = (struct loc){store_where(st, fabric, it), store_noun(st),
			  store_aside(st, fabric, it, ".corrupt"), it == STORE_JOURNAL};
}

static void loc_free(struct loc *l)
{
	free((char *)l->where);
	free((char *)l->aside);
}

int journal_read(struct store *st, const char *fabric, struct journal *j, bool *missing,
		 struct ofc_error *err)
{
	struct loc l;
	char *data;
	size_t len;
	int rc;

	memset(j, 0, sizeof(*j));
	rc = load(st, fabric, STORE_JOURNAL, &data, &len, missing, err);
	if (rc == 0 && !*missing) {
		loc_of(st, fabric, STORE_JOURNAL, &l);
		rc = parse_journal(&l, (const uint8_t *)data, len, j, err);
		loc_free(&l);
	}
	free(data);
	return rc;
}

int journal_remove(const struct ctl *c, struct ofc_error *err)
{
	struct store_write w = {STORE_JOURNAL, NULL, 0};

	return store_write(c->store, c->fabric->name, &w, 1, err);
}

/* ---- reading records for status ---------------------------------------------- */

static int parse_record(const struct loc *path, const char *fabric, const uint8_t *data, size_t len,
			struct ctl_record *r, struct ofc_error *err)
{
	Ofc__V1__FabricRecord *m;
	const char *dup;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	m = (Ofc__V1__FabricRecord *)parse_msg(path, &ofc__v1__fabric_record__descriptor, data, len,
					       err);
	if (!m)
		return -1;
	if (!m->has_generation || !m->fabric || strcmp(m->fabric, fabric) != 0) {
		ofc__v1__fabric_record__free_unpacked(m, NULL);
		return damaged(err, path, "not the record of fabric '%s'", fabric);
	}
	if (m->has_version && m->version < 2) {
		uint32_t v = m->version;

		ofc__v1__fabric_record__free_unpacked(m, NULL);
		return damaged(err, path, "version %u, which no ofc writes", v);
	}
	r->have_state = true;
	r->generation = m->generation;
	r->epoch = m->has_epoch ? m->epoch : 0;
	r->time_unix_ms = m->time_unix_ms;
	r->config = xstrdup(m->config ? m->config : "");
	r->topology = xstrdup(m->topology ? m->topology : "");
	r->relabelled = m->has_relabelled && m->relabelled;
	r->partition = m->partition ? xstrdup(m->partition) : NULL;
	/* An older ofc's record says the fabric's topology only where the
	 * last commit was the fabric's. */
	r->fabric_topology = m->fabric_topology ? xstrdup(m->fabric_topology)
			     : !r->partition	? xstrdup(r->topology)
						: NULL;
	r->last_txn = m->has_last_transaction && m->last_transaction > m->generation
			  ? m->last_transaction
			  : m->generation;
	r->replica = m->replica && *m->replica ? xstrdup(m->replica) : NULL;
	r->principal = m->principal && *m->principal ? xstrdup(m->principal) : NULL;
	r->moves_known = m->has_version && m->version >= 2;
	rc = unpack_moves(m->moves, m->n_moves, &r->moves, &r->nmoves, path, err);
	r->ndevs = (uint32_t)m->n_devices;
	r->dev_names = xcalloc(r->ndevs + 1, sizeof(char *));
	r->dev_states = xcalloc(r->ndevs + 1, sizeof(struct device_state));
	for (uint32_t i = 0; i < r->ndevs && rc == 0; i++) {
		r->dev_names[i] = xstrdup(m->devices[i]->name ? m->devices[i]->name : "");
		rc = unpack_device(m->devices[i], &r->dev_states[i], path, err);
	}
	if (rc == 0 && (dup = twice(r->dev_names, r->ndevs)))
		rc = damaged(err, path, "device '%.64s' twice", dup);
	ofc__v1__fabric_record__free_unpacked(m, NULL);
	if (rc < 0)
		ctl_record_free(r);
	return rc;
}

int record_parse(const char *path, const char *fabric, const uint8_t *data, size_t len,
		 struct ctl_record *r, struct ofc_error *err)
{
	return parse_record(&(struct loc){path, "file", NULL, false}, fabric, data, len, r, err);
}

int ctl_load_record_in(struct store *st, const char *fabric, struct ctl_record *r,
		       struct ofc_error *err)
{
	struct journal j;
	struct loc l;
	bool missing;
	char *data;
	size_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = load(st, fabric, STORE_RECORD, &data, &len, &missing, err);
	if (rc == 0 && !missing) {
		loc_of(st, fabric, STORE_RECORD, &l);
		rc = parse_record(&l, fabric, (const uint8_t *)data, len, r, err);
		loc_free(&l);
	}
	free(data);
	if (rc == 0 && journal_read(st, fabric, &j, &missing, err) < 0)
		rc = -1;
	if (rc == 0 && !missing) {
		r->have_journal = true;
		r->journal_id = j.id;
		r->journal_phase = journal_phase_name(j.phase);
		r->journal_pid = j.pid;
		r->journal_epoch = j.epoch;
		r->journal_replica = j.replica ? xstrdup(j.replica) : NULL;
		r->journal_principal = j.meta.principal ? xstrdup(j.meta.principal) : NULL;
		r->trial_deadline = j.trial_deadline;
		r->journal_owner_alive = store_writer_alive(st, fabric, j.pid, j.epoch);
		journal_free(&j);
	}
	if (rc < 0)
		ctl_record_free(r);
	return rc;
}

/* What can only be checked with the config: each recorded device's
 * numbers against the device the config describes (a cross-connect to
 * port 9999 of a 256-port switch read as "fine" without it). A device the
 * config no longer has is nobody's plan and is not checked. */
int ctl_load_record_for(const struct ctl *c, struct ctl_record *r, struct ofc_error *err)
{
	if (ctl_load_record_in(c->store, c->fabric->name, r, err) < 0)
		return -1;
	for (uint32_t k = 0; k < r->ndevs; k++) {
		const struct device_cfg *cfg = NULL;
		struct ofc_error e = {0};
		struct loc l;

		for (uint32_t i = 0; i < c->ndevs && !cfg; i++)
			if (strcmp(c->devs[i].cfg.name, r->dev_names[k]) == 0)
				cfg = &c->devs[i].cfg;
		if (!cfg || state_check(&r->dev_states[k], cfg, &e) == 0)
			continue;
		loc_of(c->store, c->fabric->name, STORE_RECORD, &l);
		damaged(err, &l, "device '%.64s': %s", r->dev_names[k], e.msg);
		loc_free(&l);
		ctl_record_free(r);
		return -1;
	}
	return 0;
}

int ctl_load_record(const char *state_dir, const char *fabric, struct ctl_record *r,
		    struct ofc_error *err)
{
	struct store *st = store_open_files(state_dir);
	int rc = ctl_load_record_in(st, fabric, r, err);

	store_close(st);
	return rc;
}

void ctl_record_free(struct ctl_record *r)
{
	for (uint32_t i = 0; i < r->ndevs; i++) {
		free(r->dev_names[i]);
		state_free(&r->dev_states[i]);
	}
	free(r->dev_names);
	free(r->dev_states);
	free(r->config);
	free(r->topology);
	free(r->partition);
	free(r->fabric_topology);
	free(r->replica);
	free(r->journal_replica);
	free(r->principal);
	free(r->journal_principal);
	for (uint32_t i = 0; i < r->nmoves; i++)
		free(r->moves[i].host);
	free(r->moves);
	memset(r, 0, sizeof(*r));
}

const char *ctl_record_other_spec(const struct fabric *f, const struct ctl_record *r)
{
	const char *spec = r->fabric_topology ? r->fabric_topology : r->topology;

	if (!r->have_state || !spec || !spec[0] || r->relabelled || r->partition)
		return NULL;
	return !f->topology.spec || strcmp(spec, f->topology.spec) != 0 ? spec : NULL;
}
