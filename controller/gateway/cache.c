/* The gateway's cache of answers already written as JSON (internal.h).
 * Decoding a State and writing it as JSON was most of the gateway's time
 * per GetState (torus64-ocs's 30 KiB State: its CPU a request fell from
 * 380-510 us to 80-110 us with this, bench/results/gateway.md), and pollers ask for
 * the same state again and again. */
#include "controller/gateway/internal.h"

#include <stdlib.h>
#include <string.h>

void gw_cache_init(struct gw_cache *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
}

void gw_cache_fini(struct gw_cache *c)
{
	for (size_t i = 0; i < GW_CACHE_ENTRIES; i++) {
		free(c->e[i].key);
		free(c->e[i].json);
	}
	pthread_mutex_destroy(&c->mu);
}

char *gw_cache_get(struct gw_cache *c, const uint8_t *key, size_t klen, size_t *jlen,
		   unsigned *code)
{
	char *out = NULL;

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < GW_CACHE_ENTRIES; i++) {
		struct gw_cache_entry *e = &c->e[i];

		if (e->key && e->klen == klen && memcmp(e->key, key, klen) == 0) {
			out = xmalloc(e->jlen ? e->jlen : 1);
			memcpy(out, e->json, e->jlen);
			*jlen = e->jlen;
			*code = e->code;
			e->used = ++c->tick;
			break;
		}
	}
	if (out)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->mu);
	return out;
}

void gw_cache_put(struct gw_cache *c, const uint8_t *key, size_t klen, const char *json,
		  size_t jlen, unsigned code)
{
	if (klen > GW_CACHE_MAX_KEY)
		return;
	uint8_t *k = xmalloc(klen ? klen : 1);
	char *j = xmalloc(jlen ? jlen : 1);

	memcpy(k, key, klen);
	memcpy(j, json, jlen);
	pthread_mutex_lock(&c->mu);
	struct gw_cache_entry *v = &c->e[0];
	for (size_t i = 0; i < GW_CACHE_ENTRIES; i++) {
		struct gw_cache_entry *e = &c->e[i];

		if (e->key && e->klen == klen && memcmp(e->key, key, klen) == 0) {
			v = e; /* another thread stored it meanwhile */
			break;
		}
		if (!e->key || e->used < v->used)
			v = e;
		if (!e->key)
			break;
	}
	free(v->key);
	free(v->json);
	*v = (struct gw_cache_entry){k, klen, j, jlen, code, ++c->tick};
	pthread_mutex_unlock(&c->mu);
}
