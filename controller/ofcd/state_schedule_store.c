/* The state's schedule shared through the store: the leading replica,
 * having answered a failure report (or a restore) with the workload's
 * schedule on what survives, verified, writes that schedule's summary to
 * etcd (STORE_SCHEDULE, an ofc.v1.StateScheduleAnswer) under its fence,
 * after the answer has gone to its client (the failures were written
 * before the re-plan; this write only spares the others the computation); a
 * follower, or the next leader, whose state wants its schedule shows that
 * answer instead of computing it again, when the answer's inputs are the
 * ones its own state would be computed from. One failed port at 8,192 hosts
 * is seconds of CPU and hundreds of MB: computed once, by the leader, not
 * by every replica a client asks.
 *
 * What a state's schedule is computed from (state_schedule.c): the config's
 * text (the fabric, its workload and algorithms, its own failures), the
 * topology it runs (a config's, an auto-picked one, a recorded one), the
 * port moves and the failures in effect, and the workload's collective and
 * size. Their fingerprint (FNV-1a, 64 bits, with the build's version: two
 * builds may plan alike inputs differently) keys the answer; a replica whose
 * inputs differ in anything (another config file, a failure it has not
 * synced yet, a lost switch only the leader sees) computes its own, as
 * before. A damaged answer is the same: computed here, and said so.
 *
 * Both threads call in here: the loop writes a failure report's answer
 * once it has sent it, the mutation worker a probe's (before it shares the
 * lost ports, which the followers sync on); the loop reads (etcd's store
 * reads from its cache, from any thread). Nothing here touches either half
 * of the daemon's state: the store, the config given and the options only. */
#include "controller/ofcd/internal.h"

#include <stdlib.h>
#include <string.h>

#include "proto/state.pb-c.h"

/* ---- the inputs' fingerprint ------------------------------------------------------------ */

static void fnv(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 0x100000001b3ULL;
	}
}

/* A string and where it ends; NULL apart from "". */
static void fnv_str(uint64_t *h, const char *s)
{
	unsigned char tag = s ? 1 : 0;

	fnv(h, &tag, 1);
	if (s)
		fnv(h, s, strlen(s) + 1);
}

static void fnv_u64(uint64_t *h, uint64_t v)
{
	fnv(h, &v, sizeof(v));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

uint64_t state_schedule_inputs(const struct fabcfg *c, const char *spec)
{
	const struct fabric *f = c->f;
	uint64_t h = 0xcbf29ce484222325ULL;

	fnv_str(&h, "ofc state schedule " OFC_VERSION);
	fnv_u64(&h, c->yaml_len);
	fnv(&h, c->yaml, c->yaml_len);
	fnv_str(&h, f->topology.present ? f->topology.spec : NULL);
	fnv_str(&h, f->graph ? f->graph->spec : NULL);
	fnv_str(&h, spec);
	fnv_u64(&h, (uint64_t)c->coll);
	fnv_u64(&h, c->size);
	fnv_u64(&h, f->nmoves);
	for (uint32_t i = 0; i < f->nmoves; i++) {
		fnv_str(&h, f->moves[i].host);
		fnv_u64(&h, ((uint64_t)f->moves[i].from << 32) | f->moves[i].to);
	}
	/* The failures as a set: the order they were reported in plans
	 * nothing differently. */
	char **v = xcalloc((size_t)c->nfailed + 1, sizeof(*v));

	if (c->nfailed) /* (failed is NULL without) */
		memcpy(v, c->failed, (size_t)c->nfailed * sizeof(*v));
	qsort(v, c->nfailed, sizeof(*v), by_name);
	fnv_u64(&h, c->nfailed);
	for (uint32_t i = 0; i < c->nfailed; i++)
		fnv_str(&h, v[i]);
	free(v);
	fnv_str(&h, c->no_schedule);
	return h;
}

/* ---- the leader writes ------------------------------------------------------------------- */

void state_schedule_publish(struct ofcd *d, const struct fabcfg *pub)
{
	Ofc__V1__StateScheduleAnswer a = OFC__V1__STATE_SCHEDULE_ANSWER__INIT;
	struct ofc_error err = {0};
	uint64_t epoch;

	/* (one ofcd has no one to tell; a follower never answers a failure) */
	if (!d->clustered || !pub->plan || !(epoch = store_epoch(d->store)))
		return;
	a.has_inputs = a.has_epoch = a.has_schedule = a.has_failures = a.has_unix_ms = 1;
	a.inputs = state_schedule_inputs(pub, NULL);
	a.epoch = epoch;
	a.replica = (char *)store_replica(d->store);
	a.schedule.data = pub->plan;
	a.schedule.len = pub->plan_len;
	a.failures = pub->nfailed;
	a.unix_ms = unix_ms();

	size_t len = protobuf_c_message_get_packed_size(&a.base);
	if (len > STATE_SCHED_ANSWER_MAX) {
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the state's schedule (%zu bytes packed, over %u) is not written to the "
			 "store: the other replicas compute their own",
			 len, STATE_SCHED_ANSWER_MAX);
		return;
	}
	uint8_t *buf = xmalloc(len + 1);
	protobuf_c_message_pack(&a.base, buf);
	struct store_write w = {STORE_SCHEDULE, buf, len};
	if (store_write(d->store, pub->f->name, &w, 1, &err) < 0)
		ofcd_log(d, OFCD_LOG_WARNING,
			 "the state's schedule is not written to the store (%s): the other "
			 "replicas compute their own",
			 err.msg);
	else
		ofcd_log(d, OFCD_LOG_INFO,
			 "the state's schedule written to the store for the other replicas "
			 "(%zu bytes, %u failure%s in effect)",
			 len, pub->nfailed, pub->nfailed == 1 ? "" : "s");
	free(buf);
}

/* ---- a replica reads ---------------------------------------------------------------------- */

int state_schedule_answer(struct ofcd *d, const struct fabcfg *c, uint64_t inputs, uint8_t **sched,
			  size_t *len, char *why, size_t n)
{
	struct ofc_error err = {0};
	char *data = NULL;
	size_t dlen = 0;
	bool missing = false;

	*sched = NULL;
	*len = 0;
	if (!d->store) {
		snprintf(why, n, "no store");
		return 0;
	}
	if (store_get(d->store, c->f->name, STORE_SCHEDULE, STATE_SCHED_ANSWER_MAX, &data, &dlen,
		      &missing, &err) < 0) {
		snprintf(why, n, "the leader's answer cannot be read: %.200s", err.msg);
		return 0;
	}
	if (missing) {
		snprintf(why, n, "the store holds no answer of the leader's");
		return 0;
	}
	Ofc__V1__StateScheduleAnswer *a =
	    ofc__v1__state_schedule_answer__unpack(NULL, dlen, (const uint8_t *)data);
	Ofc__V1__Schedule *s =
	    a && a->has_schedule
		? ofc__v1__schedule__unpack(NULL, a->schedule.len, a->schedule.data)
		: NULL;
	int rc = 0;

	free(data);
	if (!s) {
		snprintf(why, n, "the leader's answer in the store is damaged (%zu bytes)", dlen);
	} else if (!a->has_inputs || a->inputs != inputs) {
		snprintf(why, n,
			 "the leader's answer in the store is another state's (by %.64s, %u "
			 "failure%s in effect)",
			 a->replica ? a->replica : "?", a->failures, a->failures == 1 ? "" : "s");
	} else {
		*sched = xmalloc(a->schedule.len + 1);
		memcpy(*sched, a->schedule.data, a->schedule.len);
		*len = a->schedule.len;
		snprintf(why, n, "the answer of replica %.64s (epoch %llu), read from the store",
			 a->replica ? a->replica : "?", (unsigned long long)a->epoch);
		rc = 1;
	}
	if (s)
		ofc__v1__schedule__free_unpacked(s, NULL);
	if (a)
		ofc__v1__state_schedule_answer__free_unpacked(a, NULL);
	return rc;
}
