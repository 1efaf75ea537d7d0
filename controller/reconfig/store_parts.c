/* A value larger than one etcd request, written as parts (store_etcd.c).
 *
 * etcd refuses any request over its --max-request-bytes (1.5 MiB unless
 * set), and that limit is on the whole transaction, not on each value:
 * the record and the journal of a fabric of 49,152 hosts are over it. So
 * a value over the part size is written as parts under names of their own,
 * each part in a transaction of its own, and the item's key holds a small
 * head that names them:
 *
 *   KEY                  "ofc-parts 1 GEN N SIZE SUM\n"
 *   KEY/part/GEN/0000..  the value's bytes, in order, each part after
 *                        the FNV-1a 64 of its own bytes (8 bytes, big
 *                        endian), so a damaged part is named
 *
 * GEN is new for every write (the writer's epoch and a clock that only
 * goes forward), SUM the FNV-1a 64 of the whole value. A head can never be
 * mistaken for a value of the old single-key format: the record, journal
 * and the other protobuf items cannot start with 'o' (0x6f is wire type 7,
 * which protobuf does not have), and text items are lines ofc wrote.
 *
 * Why this is crash-safe and fenced:
 *   - every part's transaction compares the leader key's epoch and lease
 *     as the item's own write does, so a replica that leads no more writes
 *     no part either;
 *   - parts go under the new GEN's names, which no head names yet: until
 *     the head is written, readers (this leader, followers, a new leader
 *     reading after a kill -9) still follow the old head to the old parts,
 *     which are untouched;
 *   - the head is written in the same fenced transaction as today's value
 *     was, with the item's other writes, so the switch to the new value is
 *     one etcd revision: all of it or none;
 *   - that transaction also deletes every part of the item outside the new
 *     GEN (ranges: the old GEN's parts, and those of any write that died
 *     between its parts and its head), so nothing is left behind for long.
 * A reader checks the count, the size and the sum, and refuses a missing
 * or damaged part by its key (OFC_R_GARBAGE, as a damaged value).
 *
 * etcd does not tell its limit: the part size starts at 1 MiB and halves
 * each time etcd refuses a part as too large (the store keeps what it
 * learned), down to PART_MIN; what does not fit then, or a head
 * transaction that does not, is an error that names the size, etcd's
 * limit and the option to raise. */
#include "controller/reconfig/internal.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PARTS_MAGIC	"ofc-parts 1 "
#define PART_MAX	((size_t)1 << 20)
#define PART_MIN	((size_t)256)
#define PARTS_MAX_COUNT 100000u

/* What parts_put wrote: the head to write as the item's value (owned),
 * its GEN, the parts' count and size and each one's revision. */
struct parts_put {
	char *head;
	char gen[48];
	uint32_t n;
	size_t part;
	int64_t *revs;
};

uint64_t parts_sum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

size_t parts_first_size(void)
{
	return PART_MAX;
}

static bool too_large(const struct ofc_error *e)
{
	return strstr(e->msg, "request is too large") != NULL;
}

char *parts_key(const char *key, const char *gen, uint32_t i)
{
	return xasprintf("%s/part/%s/%04u", key, gen, i);
}

/* Delete every part of key but gen's (gen NULL: all of them), in t. */
static void parts_txn_prune(struct json_object *t, const char *key, const char *gen)
{
	char *lo = xasprintf("%s/part/", key), *end = xasprintf("%s/part0", key);

	if (!gen) {
		etcd_txn_delete_range(t, true, lo, end);
	} else {
		char *mine = xasprintf("%s%s/", lo, gen), *after = xasprintf("%s%s0", lo, gen);

		etcd_txn_delete_range(t, true, lo, mine);
		etcd_txn_delete_range(t, true, after, end);
		free(mine);
		free(after);
	}
	free(lo);
	free(end);
}

/* One part in a transaction of its own, fenced as the item's write is. */
static int put_part(struct etcd_conn *c, const struct parts_fence *f, const char *key,
		    const void *data, size_t len, int64_t *rev, struct ofc_error *err)
{
	struct json_object *t = etcd_txn_new(), *resp = NULL;
	uint8_t *buf = xmalloc(len + 8);
	uint64_t sum = parts_sum(data, len);
	bool ok = false;
	int rc;

	for (int i = 0; i < 8; i++)
		buf[i] = (uint8_t)(sum >> (56 - 8 * i));
	memcpy(buf + 8, data, len);
	etcd_txn_compare_create(t, f->leader_key, (int64_t)f->epoch);
	etcd_txn_compare_lease(t, f->leader_key, f->lease);
	etcd_txn_put(t, true, key, buf, len + 8, 0);
	rc = etcd_txn(c, t, f->timeout, &ok, rev, &resp, err);
	json_object_put(t);
	free(buf);
	if (resp)
		json_object_put(resp);
	if (rc == 0 && !ok)
		rc = ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_FENCED,
				    "this replica leads no more (epoch %llu is over): the head "
				    "naming its new parts was not written",
				    (unsigned long long)f->epoch);
	return rc;
}

static int parts_put(struct etcd_conn *c, const struct parts_fence *f, const char *key,
		     const void *data, size_t len, size_t *part_size, struct parts_put *out,
		     struct ofc_error *err)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t ps = *part_size;
		uint32_t n = (uint32_t)((len + ps - 1) / ps);
		int rc = 0;

		if (len / ps >= PARTS_MAX_COUNT)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "%s: %zu bytes make more than %u parts of %zu bytes",
					     key, len, PARTS_MAX_COUNT, ps);
		/* (a new GEN each try: a refused try's parts are pruned) */
		snprintf(out->gen, sizeof(out->gen), "%llx-%llx", (unsigned long long)f->epoch,
			 (unsigned long long)ts.tv_sec * 1000000000ull +
			     (unsigned long long)ts.tv_nsec + ps);
		out->revs = xreallocarray(out->revs, n, sizeof(*out->revs));
		out->n = n;
		out->part = ps;
		for (uint32_t i = 0; i < n && rc == 0; i++) {
			char *pk = parts_key(key, out->gen, i);
			size_t off = (size_t)i * ps, pl = len - off < ps ? len - off : ps;

			rc =
			    put_part(c, f, pk, (const uint8_t *)data + off, pl, &out->revs[i], err);
			free(pk);
		}
		if (rc == 0)
			break;
		if (!too_large(err) || ps / 2 < PART_MIN) {
			if (too_large(err))
				ofc_error_set(
				    err, OFC_E_RUNTIME,
				    "%s: etcd refused a part of %zu bytes as too large "
				    "(%zu bytes in all): its --max-request-bytes is lower; "
				    "raise it on every member (1.5 MiB by default)",
				    key, ps, len);
			free(out->revs);
			out->revs = NULL;
			return -1;
		}
		*part_size = ps / 2;
	}
	out->head = xasprintf(PARTS_MAGIC "%s %u %zu %016llx\n", out->gen, out->n, len,
			      (unsigned long long)parts_sum(data, len));
	return 0;
}

static void parts_put_free(struct parts_put *p)
{
	free(p->head);
	free(p->revs);
	memset(p, 0, sizeof(*p));
}

static int parts_too_large(struct ofc_error *err, size_t bytes)
{
	if (!too_large(err))
		return -1;
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "etcd refused the store's transaction of about %zu bytes as too "
			     "large: its --max-request-bytes is lower (1.5 MiB by default); raise "
			     "it on every member",
			     bytes);
}

bool parts_is_head(const uint8_t *v, size_t len)
{
	return len > strlen(PARTS_MAGIC) && memcmp(v, PARTS_MAGIC, strlen(PARTS_MAGIC)) == 0;
}

static int damaged(struct ofc_error *err, const char *key, const char *what, const char *why)
{
	return ofc_error_setr(err, OFC_E_RUNTIME, OFC_R_GARBAGE, "%s: %s: %s", key, what, why);
}

int parts_join(const char *key, const uint8_t *head, size_t hlen, parts_lookup *look, void *ctx,
	       size_t max, char **data, size_t *len, struct ofc_error *err)
{
	char gen[64], line[160];
	unsigned n = 0;
	size_t size = 0, at = 0;
	unsigned long long sum = 0;

	snprintf(line, sizeof(line), "%.*s", (int)(hlen < sizeof(line) ? hlen : 0), head);
	if (sscanf(line + strlen(PARTS_MAGIC), "%63s %u %zu %llx", gen, &n, &size, &sum) != 4 ||
	    n == 0 || n > PARTS_MAX_COUNT || size == 0)
		return damaged(err, key, "damaged head of parts", "not 'GEN COUNT SIZE SUM'");
	if (size > max)
		return ofc_error_at(err, OFC_E_RUNTIME, key, 0, 0,
				    "holds %zu bytes in %u parts, more than the %zu ofc reads",
				    size, n, max);
	*data = xmalloc(size + 1);
	for (uint32_t i = 0; i < n; i++) {
		char *pk = parts_key(key, gen, i);
		size_t pl = 0;
		const uint8_t *p = look(ctx, pk, &pl);
		uint64_t psum = 0;
		int rc = 0;

		for (int k = 0; p && pl >= 8 && k < 8; k++)
			psum = psum << 8 | p[k];
		if (!p)
			rc = damaged(err, pk, "missing part", "named by its head, not in etcd");
		else if (pl < 8 || pl - 8 > size - at)
			rc = damaged(err, pk, "damaged part",
				     "its length is not what its head says");
		else if (parts_sum(p + 8, pl - 8) != psum)
			rc = damaged(err, pk, "damaged part", "its checksum differs");
		else
			memcpy(*data + at, p + 8, pl - 8);
		at += p && pl >= 8 ? pl - 8 : 0;
		free(pk);
		if (rc < 0) {
			free(*data);
			*data = NULL;
			return rc;
		}
	}
	if (at != size || parts_sum(*data, size) != sum) {
		free(*data);
		*data = NULL;
		return damaged(err, key,
			       at != size ? "damaged parts" : "damaged parts (checksum differs)",
			       at != size ? "shorter than their head says" : "a part was changed");
	}
	(*data)[size] = 0;
	*len = size;
	return 0;
}

static int parts_split(struct etcd_conn *c, const struct parts_fence *f, char *const *keys,
		       const struct store_write *w, uint32_t n, size_t *part_size,
		       struct parts_put *pp, struct ofc_error *err)
{
	/* The largest value as parts, then the next, until what is left for
	 * the head's transaction fits in one part's room. */
	for (;;) {
		size_t total = 0;
		uint32_t big = n;

		for (uint32_t i = 0; i < n; i++)
			if (w[i].data && !pp[i].head) {
				total += w[i].len;
				if (big == n || w[i].len > w[big].len)
					big = i;
			}
		if (big == n || total <= *part_size)
			return 0;
		if (parts_put(c, f, keys[big], w[big].data, w[big].len, part_size, &pp[big], err) <
		    0)
			return -1;
	}
}

/* The fenced transaction of the heads and the values left whole, with the
 * items' other parts pruned (*bytes: what it carries). */
static struct json_object *head_txn(const struct parts_fence *f, char *const *keys,
				    const struct store_write *w, uint32_t n,
				    const struct parts_put *pp, size_t *bytes)
{
	struct json_object *t = etcd_txn_new();

	*bytes = 0;
	etcd_txn_compare_create(t, f->leader_key, (int64_t)f->epoch);
	etcd_txn_compare_lease(t, f->leader_key, f->lease);
	for (uint32_t i = 0; i < n; i++) {
		if (pp[i].head)
			etcd_txn_put(t, true, keys[i], pp[i].head, strlen(pp[i].head), 0);
		else if (w[i].data)
			etcd_txn_put(t, true, keys[i], w[i].data, w[i].len, 0);
		else
			etcd_txn_delete(t, true, keys[i]);
		*bytes += pp[i].head ? strlen(pp[i].head) : w[i].data ? w[i].len : 0;
		/* (after the head: the old GEN's parts, a dead write's) */
		parts_txn_prune(t, keys[i], pp[i].head ? pp[i].gen : NULL);
	}
	/* (lost: who holds the leader key now) */
	etcd_txn_range(t, false, f->leader_key, NULL, false);
	return t;
}

int parts_write(struct etcd_conn *c, const struct parts_fence *f, char *const *keys,
		const struct store_write *w, uint32_t n, size_t *part_size, bool *ok, int64_t *rev,
		struct json_object **resp, struct ofc_error *err)
{
	struct parts_put *pp = xcalloc(n, sizeof(*pp));
	int rc;

	*resp = NULL;
	for (;;) {
		size_t bytes;
		struct json_object *t;

		if ((rc = parts_split(c, f, keys, w, n, part_size, pp, err)) < 0)
			break;
		t = head_txn(f, keys, w, n, pp, &bytes);
		rc = etcd_txn(c, t, f->timeout, ok, rev, resp, err);
		json_object_put(t);
		if (rc == 0 || !too_large(err))
			break;
		/* etcd's limit is below what was left whole: parts of half of
		 * that (the heads alone are a few hundred bytes) */
		size_t next = (bytes < *part_size ? bytes : *part_size) / 2;

		if (next < PART_MIN) {
			parts_too_large(err, bytes);
			break;
		}
		*part_size = next;
	}
	for (uint32_t i = 0; i < n; i++)
		parts_put_free(&pp[i]);
	free(pp);
	return rc;
}
