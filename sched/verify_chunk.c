/* A reduction too large for one table of what its nodes hold (more than
 * VERIFY_REDUCE_BYTES of it: 4,096 nodes by default), checked in chunks of
 * its shards. A shard's sums only ever meet the same shard's: a transfer
 * reads and writes entries of its own block alone, so the shards split
 * into chunks that are each a schedule of their own (the transfers of its
 * shards, renumbered from 0, in their steps), checked by verify_ways.c's
 * way on a table of n x its shards. What does not split by shard, a
 * step's link loads and every check of a transfer that does not read
 * what nodes hold (nodes, block, part, port, link, failed hosts), is one
 * pass of the step loop over the whole schedule without the table,
 * beside the chunks (links_only): it reports as the whole check would,
 * and a schedule it refuses is reported as it says. Otherwise a
 * reduction can fail only where nodes end without their sums, and of the
 * chunks' first such misses the first in the whole check's order (node,
 * then shard) is reported: the whole check's verdict and words.
 *
 * Memory: a chunk's table and its copy of its transfers within the
 * budget (verify_opts.reduce_bytes) over the chunks checked at once (a
 * thread each, two where runs keep the graph), and a byte a transfer
 * naming its chunk. Refused with the estimate where one shard's alone
 * would not fit. */
#include "sched/verify_internal.h"

#include <stdlib.h>
#include <string.h>

static const struct verify_opts no_opts;

static bool reduction(enum sched_collective c)
{
	return c == SCHED_REDUCE_SCATTER || c == SCHED_ALLREDUCE || c == SCHED_REDUCE;
}

static uint64_t reduce_limit(const struct verify_opts *o)
{
	return o->reduce_bytes ? o->reduce_bytes : VERIFY_REDUCE_BYTES;
}

bool verify_chunks_needed(const struct schedule *s, const struct verify_opts *o)
{
	uint64_t n = s->nodes;

	o = o ? o : &no_opts;
	return reduction(s->collective) && !o->network && !o->wdm && n >= 2 &&
	       n <= SCHED_MAX_NODES && n * n * VERIFY_ENTRY_BYTES > reduce_limit(o);
}

/* Shards [base, base + nblocks) and their transfers. */
struct chunk {
	uint32_t base, nblocks;
	size_t nxfers;
};

/* What a chunk of nblocks shards with nx transfers holds at once: its
 * table, its copy of the transfers and their steps. */
static uint64_t chunk_bytes(const struct schedule *s, uint64_t nblocks, uint64_t nx)
{
	return (uint64_t)s->nodes * nblocks * VERIFY_ENTRY_BYTES + nx * sizeof(struct xfer) +
	       ((uint64_t)s->nsteps + 1) * sizeof(uint32_t);
}

/* The chunks: shards in order, each chunk as many as fit in each (a
 * reduce's root shard alone: the only one it has). NULL with an error
 * in the report where one shard's chunk alone needs more. */
static struct chunk *plan_chunks(const struct schedule *s, uint64_t each, size_t *nc,
				 struct vstate *v)
{
	uint32_t n = s->nodes;
	size_t *count = xcalloc(n, sizeof(size_t)), cap = 16;
	struct chunk *c = xmalloc(cap * sizeof(*c));

	*nc = 0;
	for (size_t xi = 0; xi < s->nxfers; xi++)
		if (s->xfers[xi].block < n) /* (the rest: the links pass refuses them) */
			count[s->xfers[xi].block]++;
	uint32_t lo = s->collective == SCHED_REDUCE ? s->root : 0;
	uint32_t hi = s->collective == SCHED_REDUCE ? s->root + 1 : n;

	for (uint32_t b = lo; b < hi; b++) {
		struct chunk *last = *nc ? &c[*nc - 1] : NULL;

		if (last && chunk_bytes(s, last->nblocks + 1u, last->nxfers + count[b]) <= each) {
			last->nblocks++;
			last->nxfers += count[b];
			continue;
		}
		if (chunk_bytes(s, 1, count[b]) > each) {
			char need[32], have[32];

			fmt_size(need, sizeof(need), chunk_bytes(s, 1, count[b]));
			fmt_size(have, sizeof(have), each);
			verify_fail(v, 0, SIZE_MAX,
				    "%u nodes: checking shard %u alone (%zu transfers) needs about "
				    "%s, over the verifier's %s (what the request's memory limit "
				    "leaves it)",
				    n, b, count[b], need, have);
			free(count);
			free(c);
			return NULL;
		}
		if (*nc == cap)
			GROW(c, cap, *nc + 1);
		c[(*nc)++] = (struct chunk){b, 1, count[b]};
	}
	free(count);
	return c;
}

/* The chunks checked at once, each with its own threads. */
struct chunk_job {
	const struct schedule *s;
	const struct verify_opts *o; /* the chunks': no link loads wanted */
	const struct chunk *c;
	struct verify_report *r; /* one a chunk */
	struct verify_win *w;
	size_t *bad_xfer; /* a chunk's report's transfer in s */
	/* Each transfer's chunk, where there are 2 to CHUNK_IDS_MAX: a
	 * chunk's copy reads a byte a transfer and its own transfers (NULL:
	 * every transfer, 20 bytes). */
	const uint8_t *id;
	/* the links pass's */
	const struct verify_opts *whole_o;
	struct verify_report *report;
	int links_rc;
};
#define CHUNK_IDS_MAX 254u
#define CHUNK_NONE    255u

/* Chunk i's transfers out of s, their blocks from 0, in their steps. By
 * the chunks' ids, a byte a transfer; else every transfer written, the
 * next one over it unless it is the chunk's (a branch a transfer, taken
 * at random, was most of that copy's time; one slot more for the last).
 * A pass over every transfer a chunk was a fifth of a check in 19 chunks
 * (torus:32x64 less 5% of its links, perf). */
static void chunk_schedule(const struct chunk_job *j, size_t i, struct schedule *d)
{
	const struct schedule *s = j->s;
	const struct chunk *c = &j->c[i];
	size_t k = 0;

	*d = *s;
	d->xfers = xmalloc((c->nxfers + 1) * sizeof(struct xfer));
	d->step_start = xmalloc(((size_t)s->nsteps + 1) * sizeof(uint32_t));
	d->cap_xfers = d->nxfers = c->nxfers;
	d->cap_steps = s->nsteps;
	for (uint32_t t = 0; t < s->nsteps; t++) {
		d->step_start[t] = (uint32_t)k;
		for (size_t xi = s->step_start[t]; j->id && xi < s->step_start[t + 1]; xi++)
			if (j->id[xi] == i) {
				d->xfers[k] = s->xfers[xi];
				d->xfers[k++].block -= c->base;
			}
		for (size_t xi = s->step_start[t]; !j->id && xi < s->step_start[t + 1]; xi++) {
			const struct xfer *x = &s->xfers[xi];

			d->xfers[k] = *x;
			d->xfers[k].block = x->block - c->base;
			k += x->block - c->base < c->nblocks;
		}
	}
	d->step_start[s->nsteps] = (uint32_t)k;
}

/* Transfer xi of step t in the chunk's schedule d: its index in s. */
static size_t whole_index(const struct schedule *s, const struct schedule *d, const struct chunk *c,
			  uint32_t t, size_t xi)
{
	size_t k = xi - d->step_start[t];

	for (size_t i = s->step_start[t]; i < s->step_start[t + 1]; i++)
		if (s->xfers[i].block - c->base < c->nblocks && k-- == 0)
			return i;
	return SIZE_MAX;
}

static void chunk_check(void *ctx, size_t i, unsigned worker)
{
	struct chunk_job *j = ctx;
	struct schedule d;

	(void)worker;
	chunk_schedule(j, i, &d);
	j->w[i] = (struct verify_win){.base = j->c[i].base, .nblocks = j->c[i].nblocks};
	j->bad_xfer[i] = SIZE_MAX;
	if (verify_window(&d, j->o, &j->r[i], &j->w[i]) < 0 && j->r[i].bad_xfer < d.nxfers &&
	    j->r[i].bad_step < d.nsteps)
		j->bad_xfer[i] =
		    whole_index(j->s, &d, &j->c[i], j->r[i].bad_step, j->r[i].bad_xfer);
	free(d.xfers);
	free(d.step_start);
}

/* The step loop over the whole schedule without the table: every check
 * of a transfer that does not read what nodes hold, and the loads, into
 * the report as the whole check's. */
static int links_pass(const struct schedule *s, const struct verify_opts *o,
		      struct verify_report *report)
{
	struct vstate v = {.s = s, .o = o, .r = report, .n = s->nodes, .links_only = true};
	int rc = verify_setup(&v) < 0 || verify_run_steps(&v) < 0 ? -1 : 0;

	verify_teardown(&v);
	return rc;
}

/* Of the failed chunks, the one whose miss the whole check meets first:
 * a step's transfer (in s's order), else the final check's (node, shard).
 * -1 where every chunk passed. */
static long first_failed(const struct chunk_job *j, size_t nc)
{
	long best = -1;

	for (size_t i = 0; i < nc; i++) {
		if (j->r[i].ok)
			continue;
		if (best < 0) {
			best = (long)i;
			continue;
		}
		const struct verify_report *a = &j->r[i], *b = &j->r[best];

		if (a->bad_step != b->bad_step ? a->bad_step < b->bad_step
		    : j->bad_xfer[i] != j->bad_xfer[best]
			? j->bad_xfer[i] < j->bad_xfer[best]
			: j->w[i].final_key < j->w[best].final_key)
			best = (long)i;
	}
	return best;
}

/* Item 0 the links pass over the whole schedule (into the caller's
 * report), the others a chunk each. */
static void chunk_item(void *ctx, size_t i, unsigned worker)
{
	struct chunk_job *j = ctx;

	if (i == 0)
		j->links_rc = links_pass(j->s, j->whole_o, j->report);
	else
		chunk_check(ctx, i - 1, worker);
}

/* Each transfer's chunk (CHUNK_NONE: a block past the nodes, which the
 * links pass refuses), where the chunks are few enough; else NULL. */
static uint8_t *chunk_ids(const struct schedule *s, const struct chunk *c, size_t nc)
{
	if (nc < 2 || nc > CHUNK_IDS_MAX)
		return NULL;
	uint8_t *of = xmalloc(s->nodes), *id = xmalloc(s->nxfers);

	for (size_t i = 0; i < nc; i++)
		memset(of + c[i].base, (int)i, c[i].nblocks);
	for (size_t xi = 0; xi < s->nxfers; xi++)
		id[xi] = s->xfers[xi].block < s->nodes ? of[s->xfers[xi].block] : CHUNK_NONE;
	free(of);
	return id;
}

int verify_chunked(const struct schedule *s, const struct verify_opts *o,
		   struct verify_report *report)
{
	o = o ? o : &no_opts;
	memset(report, 0, sizeof(*report));
	report->ok = true;
	report->nsteps = s->nsteps;
	report->ntransfers = s->nxfers;

	/* The links pass checks every port and loads every link: a chunk
	 * keeps its graph only for runs (a check without its graph refuses
	 * them), and its loads go nowhere. Without a graph a chunk's check
	 * is its data part alone, a thread; with one, its links part beside
	 * it, two. */
	bool runs = false;

	for (size_t xi = 0; xi < s->nxfers && !runs; xi++)
		runs = s->xfers[xi].run != 0;
	struct vstate v = {.s = s, .o = o, .r = report, .n = s->nodes};
	unsigned threads = check_threads(o), each = runs ? 2 : 1;
	unsigned at_once = threads / each ? threads / each : 1;
	size_t nc;
	struct chunk *c = plan_chunks(s, reduce_limit(o) / at_once, &nc, &v);

	if (!c)
		return -1;
	struct verify_opts co = *o;
	/* the chunks' deadline, without the caller's progress (the links
	 * pass reports it, on one thread) */
	struct ofc_clock quiet = o->clock ? *o->clock : (struct ofc_clock){0};
	struct chunk_job j = {.s = s, .o = &co, .c = c, .whole_o = o, .report = report};

	quiet.progress = NULL;
	co.clock = o->clock ? &quiet : NULL;
	co.step_link_load = NULL;
	co.threads = threads < each ? threads : each;
	if (!runs) {
		co.graph = NULL;
		co.arc_capacity = NULL;
	}
	uint8_t *id = chunk_ids(s, c, nc);

	j.id = id;
	j.r = xcalloc(nc, sizeof(*j.r));
	j.w = xcalloc(nc, sizeof(*j.w));
	j.bad_xfer = xcalloc(nc, sizeof(*j.bad_xfer));
	/* the links pass beside the chunks: a schedule it refuses is
	 * reported as it says, whatever the chunks found */
	parallel_for(nc + 1, 1, at_once, chunk_item, &j);
	if (j.links_rc < 0)
		nc = 0;
	long bad = first_failed(&j, nc);
	bool split = true;

	for (size_t i = 0; i < nc; i++)
		split = split && j.r[i].split;
	if (j.links_rc < 0) {
		bad = 0; /* (its report, the caller's) */
	} else if (bad >= 0) {
		const struct verify_report *r = &j.r[bad];

		report->ok = false;
		report->bad_step = r->bad_step;
		report->bad_xfer = j.bad_xfer[bad];
		memcpy(report->error, r->error, sizeof(report->error));
	} else {
		report->split = split;
	}
	free(j.r);
	free(j.w);
	free(j.bad_xfer);
	free(id);
	free(c);
	return bad >= 0 ? -1 : 0;
}
