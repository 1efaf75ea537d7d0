/* The store's front (store.h): one ops table per backend, called through
 * here, so journal.c and ofcd never ask which backend holds the state. */
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>

void store_close(struct store *s)
{
	if (s)
		s->ops->close(s);
}

int store_get(struct store *s, const char *fabric, enum store_item it, size_t max, char **data,
	      size_t *len, bool *missing, struct ofc_error *err)
{
	*data = NULL;
	*len = 0;
	*missing = false;
	return s->ops->get(s, fabric, it, max, data, len, missing, err);
}

int store_write(struct store *s, const char *fabric, const struct store_write *w, uint32_t n,
		struct ofc_error *err)
{
	return n ? s->ops->write(s, fabric, w, n, err) : 0;
}

char *store_where(const struct store *s, const char *fabric, enum store_item it)
{
	return s->ops->where(s, fabric, it);
}

const char *store_noun(const struct store *s)
{
	return s->ops->noun;
}

char *store_aside(const struct store *s, const char *fabric, enum store_item it, const char *suffix)
{
	return s->ops->aside(s, fabric, it, suffix);
}

bool store_writer_alive(struct store *s, const char *fabric, uint32_t pid, uint64_t epoch)
{
	return s->ops->writer_alive(s, fabric, pid, epoch);
}

const char *store_state_dir(const struct store *s)
{
	return s->ops->state_dir ? s->ops->state_dir(s) : NULL;
}

int store_load(struct store *s, double timeout, struct ofc_error *err)
{
	return s->ops->load ? s->ops->load(s, timeout, err) : 0;
}

int store_register(struct store *s, double timeout, struct ofc_error *err)
{
	return s->ops->reg ? s->ops->reg(s, timeout, err) : 0;
}

int store_start(struct store *s, struct ofc_error *err)
{
	return s->ops->start ? s->ops->start(s, err) : 0;
}

void store_resign(struct store *s)
{
	if (s->ops->resign)
		s->ops->resign(s);
}

void store_cluster(struct store *s, struct store_cluster *out)
{
	memset(out, 0, sizeof(*out));
	if (s->ops->cluster)
		s->ops->cluster(s, out);
}

double store_fence(struct store *s)
{
	return s->ops->fence ? s->ops->fence(s) : 0;
}

uint64_t store_epoch(struct store *s)
{
	return s->ops->epoch ? s->ops->epoch(s) : 0;
}

const char *store_replica(const struct store *s)
{
	return s->ops->replica ? s->ops->replica(s) : NULL;
}

void store_set_contacts(struct store *s, const struct store_contact *c, uint32_t n)
{
	if (s->ops->set_contacts)
		s->ops->set_contacts(s, c, n);
}

uint32_t store_leader_contacts(struct store *s, struct store_contact *out, uint32_t max,
			       char by[64])
{
	by[0] = 0;
	return s->ops->leader_contacts ? s->ops->leader_contacts(s, out, max, by) : 0;
}
