/* libofc-mpi: the schedules a job runs, read at MPI_Init.
 *
 * OFC_SCHEDULE names one or more files (':' between them), each an
 * ofc.v1.Schedule as `ofc schedule --format pb` writes it, decoded by
 * protobuf-c from the generated code of proto/schedule.proto. A schedule
 * is checked as ofc's own executor checks one (nodes, fractions, which ops
 * its collective allows), then matched to the job: each rank's host (the
 * network namespace it runs in, else OFC_HOST, else the processor name)
 * must be one of the schedule's nodes (its links name them; a schedule
 * that names none is matched by rank order), and the ranks must be as
 * many as the nodes taking part. What fails refuses that schedule on
 * every rank alike, with a message and a reason the report counts. */
#include "exec/mpi/pmpi.h"

#include "proto/schedule.pb-c.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const pmpi_kind_names[PK_COUNT] = {"allreduce", "allgather", "reduce-scatter",
					       "alltoall"};

static void *zalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "libofc-mpi: out of memory (%zu x %zu bytes)\n", n, size);
		abort();
	}
	return p;
}

/* The fixed-point fraction ofc's schedules are exact in (sched_fix). */
static int fix(double v, uint32_t *out)
{
	double f;

	if (!(v >= 0 && v <= 1))
		return -1;
	f = v * (double)PMPI_FIX_ONE + 0.5;
	*out = f >= (double)PMPI_FIX_ONE ? PMPI_FIX_ONE : (uint32_t)f;
	return 0;
}

/* The name of the network namespace this process is in, when it is one of
 * /run/netns (the testbed's hosts): the entry with the same inode. */
static bool netns_name(char *out, size_t n)
{
	struct stat self, e;
	struct dirent *d;
	DIR *dir;
	bool found = false;

	if (stat("/proc/self/ns/net", &self) < 0 || !(dir = opendir("/run/netns")))
		return false;
	while (!found && (d = readdir(dir))) {
		char path[PMPI_HOST_MAX + 16];

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", d->d_name);
		if (stat(path, &e) == 0 && e.st_ino == self.st_ino && e.st_dev == self.st_dev) {
			snprintf(out, n, "%s", d->d_name);
			found = true;
		}
	}
	closedir(dir);
	return found;
}

static void find_host(struct pmpi_state *s)
{
	const char *env = getenv("OFC_HOST");
	char name[MPI_MAX_PROCESSOR_NAME];
	int len = 0;

	if (env && *env) {
		snprintf(s->host, sizeof(s->host), "%s", env);
		return;
	}
	if (netns_name(s->host, sizeof(s->host)))
		return;
	PMPI_Get_processor_name(name, &len);
	snprintf(s->host, sizeof(s->host), "%.*s", len, name);
}

/* Rank 0 reads the file; every rank gets its bytes, so that all decode
 * the same schedule (the files need only be on rank 0's host). NULL with
 * sc->error when rank 0 could not read it. */
static uint8_t *read_bytes(const struct pmpi_state *s, struct pmpi_sched *sc, uint64_t *len)
{
	struct stat st;
	uint8_t *data;
	size_t got = 0;
	int fd;

	if (strncmp(sc->file, "ofcd:", 5) == 0) {
		bool unreachable = false;

		data = pmpi_ofcd_schedule(sc->file + 5, s->job, true, &got, &unreachable, sc->error,
					  sizeof(sc->error));
		if (unreachable)
			sc->refused = PR_NO_OFCD;
		*len = got;
		return data;
	}
	fd = open(sc->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(sc->error, sizeof(sc->error), "%s: %s", sc->file, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > PMPI_MAX_FILE) {
		snprintf(sc->error, sizeof(sc->error), "%s: not a regular file of at most 512 MiB",
			 sc->file);
		close(fd);
		return NULL;
	}
	data = zalloc((size_t)st.st_size, 1);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, data + got, (size_t)st.st_size - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return data;
}

static uint64_t mix(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static Ofc__V1__Schedule *read_file(struct pmpi_state *s, struct pmpi_sched *sc)
{
	Ofc__V1__Schedule *m = NULL;
	uint64_t len = UINT64_MAX;
	uint8_t *data = s->rank == 0 ? read_bytes(s, sc, &len) : NULL;

	if (s->rank == 0 && !data)
		len = UINT64_MAX;
	if (s->rank == 0 && s->from_ofcd)
		s->signature =
		    data ? mix(s->signature, data, (size_t)len) : mix(s->signature, NULL, 0) + 1;
	PMPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (len == UINT64_MAX) {
		if (s->rank != 0)
			snprintf(sc->error, sizeof(sc->error), "%s: rank 0 could not read it",
				 sc->file);
		return NULL;
	}
	if (s->rank != 0)
		data = zalloc((size_t)len, 1);
	PMPI_Bcast(data, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
	m = ofc__v1__schedule__unpack(NULL, (size_t)len, data);
	if (!m)
		snprintf(sc->error, sizeof(sc->error),
			 "%s: not an ofc.v1.Schedule message (corrupted, or not written by `ofc "
			 "schedule --format pb`)",
			 sc->file);
	free(data);
	return m;
}

static int check_header(struct pmpi_sched *sc, const Ofc__V1__Schedule *m)
{
	uint32_t k;

	for (k = 0; k < PK_COUNT; k++)
		if (m->collective && strcmp(m->collective, pmpi_kind_names[k]) == 0)
			break;
	if (k == PK_COUNT)
		return snprintf(sc->error, sizeof(sc->error),
				"%s: collective '%s' is not one the library runs (allreduce, "
				"allgather, reduce-scatter, alltoall)",
				sc->file, m->collective ? m->collective : "(none)");
	sc->kind = (enum pmpi_kind)k;
	sc->kind_known = true;
	if (m->n_vertices)
		return snprintf(sc->error, sizeof(sc->error),
				"%s: a server fabric's schedule (its nodes are GPUs and "
				"switches), not one for MPI ranks",
				sc->file);
	if (m->reduced)
		return snprintf(sc->error, sizeof(sc->error),
				"%s: a symmetry-reduced schedule (node 0's program): write it "
				"without --reduced",
				sc->file);
	if (!m->has_verified || !m->verified)
		return snprintf(sc->error, sizeof(sc->error),
				"%s: ofc's verifier did not accept it (verified is not true)",
				sc->file);
	if (!m->has_nodes || m->nodes == 0 || m->nodes > PMPI_MAX_NODES)
		return snprintf(sc->error, sizeof(sc->error), "%s: %u nodes (1 to %u)", sc->file,
				m->nodes, PMPI_MAX_NODES);
	sc->nodes = m->nodes;
	snprintf(sc->algorithm, sizeof(sc->algorithm), "%s", m->algorithm ? m->algorithm : "");
	snprintf(sc->topology, sizeof(sc->topology), "%s", m->topology ? m->topology : "");
	sc->time_us = m->has_time_us ? m->time_us : 0;
	sc->size_bytes = m->has_size_bytes ? m->size_bytes : 0;
	sc->failed = zalloc(m->nodes, sizeof(bool));
	for (size_t i = 0; i < m->n_failed_nodes; i++) {
		if (m->failed_nodes[i] >= m->nodes)
			return snprintf(sc->error, sizeof(sc->error),
					"%s: failed node %u of %u nodes", sc->file,
					m->failed_nodes[i], m->nodes);
		sc->failed[m->failed_nodes[i]] = true;
	}
	sc->nactive = 0;
	for (uint32_t u = 0; u < m->nodes; u++)
		sc->nactive += !sc->failed[u];
	return 0;
}

/* Transfer x (step t, index i) into r; -1 with sc->error. */
static int read_xfer(struct pmpi_sched *sc, const Ofc__V1__Transfer *x, size_t t, size_t i,
		     struct pmpi_xfer *r)
{
	uint32_t n = sc->nodes, off, len, blocks = x->has_blocks && x->blocks ? x->blocks : 1;
	const char *why = NULL;
	bool reduce = x->has_op && x->op == OFC__V1__TRANSFER_OP__TRANSFER_OP_REDUCE;

	if (!x->has_src || !x->has_dst || x->src >= n || x->dst >= n || x->src == x->dst)
		why = "its src and dst are not two of the nodes";
	else if (sc->failed[x->src] || sc->failed[x->dst])
		why = "it names a failed node";
	else if (!x->has_origin || x->origin >= n || x->origin + (uint64_t)blocks > n)
		why = "its origin is not a node";
	else if (sc->kind == PK_ALLTOALL && (!x->has_target || x->target >= n))
		why = "an all-to-all transfer without a target node";
	else if (blocks == 1 &&
		 (sc->failed[x->origin] || (sc->kind == PK_ALLTOALL && sc->failed[x->target])))
		why = "its block is a failed node's";
	else if (blocks > 1 && sc->kind != PK_ALLGATHER)
		why = "several blocks in one transfer outside an all-gather";
	else if (fix(x->has_offset ? x->offset : 0, &off) < 0 ||
		 fix(x->has_length ? x->length : 0, &len) < 0 || (uint64_t)off + len > PMPI_FIX_ONE)
		why = "its part is not within one block";
	else if (reduce && sc->kind != PK_ALLREDUCE && sc->kind != PK_REDUCE_SCATTER)
		why = "a reduce in a collective that copies";
	if (why) {
		snprintf(sc->error, sizeof(sc->error), "%s: step %zu, transfer %zu: %s", sc->file,
			 t + 1, i + 1, why);
		return -1;
	}
	r->origin = x->origin;
	r->target = sc->kind == PK_ALLTOALL ? x->target : 0;
	r->nblocks = blocks;
	r->off = off;
	r->end = off + len;
	r->reduce = reduce;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The blocks an all-to-all has node me keep for others, sorted, unique. */
static void relay_set(struct pmpi_sched *sc, uint32_t me)
{
	struct pmpi_prog *p = &sc->prog;
	uint64_t n = 0, total = p->first[p->nsteps];

	p->relay = zalloc(total, sizeof(uint64_t));
	for (uint64_t i = 0; i < total; i++) {
		const struct pmpi_xfer *x = &p->x[i];

		if (!x->send && x->origin != me && x->target != me)
			p->relay[n++] = (uint64_t)x->origin * sc->nodes + x->target;
	}
	qsort(p->relay, n, sizeof(uint64_t), cmp_u64);
	p->nrelay = 0;
	for (uint64_t i = 0; i < n; i++)
		if (!p->nrelay || p->relay[p->nrelay - 1] != p->relay[i])
			p->relay[p->nrelay++] = p->relay[i];
}

/* Every transfer checked; node me's kept, step by step, as its program. */
static int build_prog(struct pmpi_sched *sc, const Ofc__V1__Schedule *m, uint32_t me)
{
	struct pmpi_prog *p = &sc->prog;
	uint64_t mine = 0;

	for (size_t t = 0; t < m->n_steps; t++) {
		sc->transfers += m->steps[t]->n_transfers;
		for (size_t i = 0; i < m->steps[t]->n_transfers; i++) {
			const Ofc__V1__Transfer *x = m->steps[t]->transfers[i];

			mine += (x->src == me) + (x->dst == me);
		}
	}
	/* (a file cut or spliced short of what its header counts) */
	if ((m->has_num_steps && m->num_steps != m->n_steps) ||
	    (m->has_num_transfers && m->num_transfers != sc->transfers)) {
		snprintf(sc->error, sizeof(sc->error),
			 "%s: holds %zu steps and %llu transfers, its header says %u and %llu "
			 "(corrupted)",
			 sc->file, m->n_steps, (unsigned long long)sc->transfers, m->num_steps,
			 (unsigned long long)m->num_transfers);
		return -1;
	}
	p->nsteps = (uint32_t)m->n_steps;
	p->first = zalloc(m->n_steps + 1, sizeof(uint32_t));
	p->x = zalloc(mine, sizeof(struct pmpi_xfer));
	mine = 0;
	for (size_t t = 0; t < m->n_steps; t++) {
		uint32_t pieces = 0;

		p->first[t] = (uint32_t)mine;
		for (size_t i = 0; i < m->steps[t]->n_transfers; i++) {
			const Ofc__V1__Transfer *x = m->steps[t]->transfers[i];
			struct pmpi_xfer r;

			if (read_xfer(sc, x, t, i, &r) < 0)
				return -1;
			if (x->src != me && x->dst != me)
				continue;
			r.send = x->src == me;
			r.peer = r.send ? x->dst : x->src;
			p->x[mine++] = r;
			pieces += r.nblocks;
		}
		p->max_step_pieces = pieces > p->max_step_pieces ? pieces : p->max_step_pieces;
	}
	p->first[m->n_steps] = (uint32_t)mine;
	if (sc->kind == PK_ALLTOALL)
		relay_set(sc, me);
	return 0;
}

/* The schedule's node names from its links (src_host, dst_host). */
static void read_names(struct pmpi_sched *sc, const Ofc__V1__Schedule *m)
{
	for (size_t i = 0; i < m->n_links; i++) {
		const Ofc__V1__FabricLink *l = m->links[i];
		const char *name[2] = {l->src_host, l->dst_host};
		uint32_t node[2] = {l->src, l->dst};
		bool has[2] = {l->has_src, l->has_dst};

		for (int k = 0; k < 2; k++) {
			if (!has[k] || !name[k] || node[k] >= sc->nodes)
				continue;
			if (!sc->names)
				sc->names = zalloc(sc->nodes, sizeof(char *));
			if (!sc->names[node[k]])
				sc->names[node[k]] = strdup(name[k]);
		}
	}
}

/* Rank r runs node node_of[r]: by the hosts' names, else by rank order. */
static int map_ranks(struct pmpi_state *s, struct pmpi_sched *sc)
{
	uint32_t a = 0;

	sc->rank_of = zalloc(sc->nodes, sizeof(int));
	sc->node_of = zalloc((size_t)s->size, sizeof(uint32_t));
	for (uint32_t u = 0; u < sc->nodes; u++)
		sc->rank_of[u] = -1;
	if ((uint32_t)s->size != sc->nactive) {
		sc->refused = PR_RANK_COUNT;
		return snprintf(sc->error, sizeof(sc->error),
				"%s: the job has %d ranks, the schedule %u nodes taking part",
				sc->file, s->size, sc->nactive);
	}
	for (int r = 0; r < s->size; r++) {
		uint32_t u = sc->nodes;

		if (!sc->names) {
			while (sc->failed[a])
				a++;
			u = a++;
		} else {
			for (u = 0; u < sc->nodes; u++)
				if (sc->names[u] && strcmp(sc->names[u], s->hosts[r]) == 0)
					break;
		}
		if (u == sc->nodes || sc->failed[u] || sc->rank_of[u] >= 0) {
			sc->refused = PR_HOSTS;
			return snprintf(sc->error, sizeof(sc->error),
					"%s: rank %d's host '%s' is %s", sc->file, r, s->hosts[r],
					u == sc->nodes	? "not one of the schedule's nodes"
					: sc->failed[u] ? "a failed node of the schedule"
							: "another rank's too");
		}
		sc->rank_of[u] = r;
		sc->node_of[r] = u;
	}
	snprintf(s->mapping, sizeof(s->mapping), "%s", sc->names ? "host names" : "rank order");
	return 0;
}

static void load_one(struct pmpi_state *s, struct pmpi_sched *sc)
{
	Ofc__V1__Schedule *m;

	sc->refused = PR_BAD_SCHEDULE;
	m = read_file(s, sc);
	if (!m)
		return;
	if (check_header(sc, m) == 0) {
		read_names(sc, m);
		if (map_ranks(s, sc) == 0) {
			sc->refused = PR_BAD_SCHEDULE;
			build_prog(sc, m, sc->node_of[s->rank]);
		}
	}
	ofc__v1__schedule__free_unpacked(m, NULL);
}

/* Every rank takes a schedule or none does: the worst verdict wins, and
 * the lowest rank that saw a refusal says why. */
static void agree(struct pmpi_state *s, struct pmpi_sched *sc)
{
	int mine = sc->error[0] ? (int)sc->refused + 1 : 0, worst = 0;
	int first = sc->error[0] ? s->rank : s->size, low = s->size;

	PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	PMPI_Allreduce(&first, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!worst)
		return;
	if (!sc->error[0])
		snprintf(sc->error, sizeof(sc->error), "%s: refused on rank %d", sc->file, low);
	sc->refused = (enum pmpi_reason)(worst - 1);
	if (s->rank == low)
		fprintf(stderr, "libofc-mpi: %s; %s falls back to the MPI's own\n", sc->error,
			sc->kind_known ? pmpi_kind_names[sc->kind] : "its collective");
}

/* What rank 0 sees of the files now (inode, size, modification time):
 * a schedule published anew changes it. */
static uint64_t signature(const char *list)
{
	uint64_t h = 1469598103934665603ull;
	const char *p = list;

	while (p && *p) {
		const char *end = strchrnul(p, ':');
		char path[4096];
		struct stat st = {0};
		uint64_t v[4];

		snprintf(path, sizeof(path), "%.*s", (int)(end - p), p);
		stat(path, &st);
		v[0] = (uint64_t)st.st_ino;
		v[1] = (uint64_t)st.st_size;
		v[2] = (uint64_t)st.st_mtim.tv_sec;
		v[3] = (uint64_t)st.st_mtim.tv_nsec;
		for (int i = 0; i < 4; i++)
			h = (h ^ v[i]) * 1099511628211ull;
		p = *end ? end + 1 : end;
	}
	return h;
}

/* The schedules of OFC_SCHEDULE read, checked and agreed. */
/* One schedule of the list: read, checked, agreed, and the one its
 * collective's calls take unless an earlier one is usable. */
static void add_entry(struct pmpi_state *s, const char *name)
{
	struct pmpi_sched *sc = &s->sched[s->nsched];

	memset(sc, 0, sizeof(*sc));
	sc->file = strdup(name);
	if (!sc->file)
		abort();
	/* (ofcd's: the collective is known before the answer is) */
	for (int k = 0; k < PK_COUNT && strncmp(name, "ofcd:", 5) == 0; k++)
		if (strcmp(name + 5, pmpi_kind_names[k]) == 0) {
			sc->kind = (enum pmpi_kind)k;
			sc->kind_known = true;
		}
	load_one(s, sc);
	agree(s, sc);
	/* A collective's first usable schedule, else its first refused
	 * one (its calls then count why). */
	if (!sc->kind_known)
		s->unknown_refused = true;
	else if ((s->for_kind[sc->kind] < 0 ||
		  (s->sched[s->for_kind[sc->kind]].error[0] && !sc->error[0])))
		s->for_kind[sc->kind] = (int)s->nsched;
	s->nsched++;
}

/* The schedules of OFC_SCHEDULE read, checked and agreed: its files, or
 * ofcd's four when it says "ofcd". */
static void read_all(struct pmpi_state *s)
{
	const char *env = getenv("OFC_SCHEDULE");
	char *list, *save = NULL, name[32];

	for (int k = 0; k < PK_COUNT; k++)
		s->for_kind[k] = -1;
	s->unknown_refused = false;
	if (!env || !*env)
		return;
	s->from_ofcd = strcmp(env, "ofcd") == 0;
	if (s->rank == 0)
		s->signature = s->from_ofcd ? 1469598103934665603ull : signature(env);
	if (s->from_ofcd) {
		for (int k = 0; k < PK_COUNT; k++) {
			snprintf(name, sizeof(name), "ofcd:%s", pmpi_kind_names[k]);
			add_entry(s, name);
		}
		s->polled = PMPI_Wtime();
		return;
	}
	list = strdup(env);
	for (char *f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save)) {
		if (s->nsched == PMPI_MAX_SCHEDS) {
			if (s->rank == 0)
				fprintf(stderr,
					"libofc-mpi: OFC_SCHEDULE: more than %d files, %s "
					"and those after it not read\n",
					PMPI_MAX_SCHEDS, f);
			break;
		}
		add_entry(s, f);
	}
	free(list);
}

/* Rank 0: ofcd's answers now, hashed as read_all hashes them, when
 * OFC_MPI_OFCD_POLL seconds (1 by default) have passed since it last
 * asked; else the signature it has. */
static uint64_t ofcd_signature(struct pmpi_state *s)
{
	const char *e = getenv("OFC_MPI_OFCD_POLL");
	double every = e && atof(e) > 0 ? atof(e) : 1.0, t = PMPI_Wtime();
	uint64_t h = 1469598103934665603ull;

	if (t - s->polled < every)
		return s->signature;
	s->polled = t;
	for (int k = 0; k < PK_COUNT; k++) {
		char why[PMPI_ERROR_MAX];
		size_t len = 0;
		bool unreachable;
		uint8_t *b = pmpi_ofcd_schedule(pmpi_kind_names[k], s->job, false, &len,
						&unreachable, why, sizeof(why));

		h = b ? mix(h, b, len) : mix(h, NULL, 0) + 1;
		free(b);
	}
	return h;
}

static void free_schedules(struct pmpi_state *s)
{
	for (uint32_t i = 0; i < s->nsched; i++) {
		struct pmpi_sched *sc = &s->sched[i];

		if (sc->names)
			for (uint32_t u = 0; u < sc->nodes; u++)
				free(sc->names[u]);
		free(sc->names);
		free(sc->failed);
		free(sc->file);
		free(sc->rank_of);
		free(sc->node_of);
		free(sc->prog.first);
		free(sc->prog.x);
		free(sc->prog.relay);
	}
	s->nsched = 0;
}

/* Rank 0, with ofcd's schedules: every rank has just loaded the answers of
 * its asks at this same call (read_all agreed on each through the world
 * communicator), so the job says it took them; a drain waiting for it
 * ends then. */
static void taken(struct pmpi_state *s)
{
	char why[PMPI_ERROR_MAX];
	bool any = false;

	/* (none usable: the job runs none of ofcd's schedules to say so of,
	 * and ofcd, unreachable or refusing, has said why already) */
	for (uint32_t i = 0; i < s->nsched; i++)
		any |= !s->sched[i].error[0];
	if (s->rank == 0 && s->from_ofcd && s->job[0] && any &&
	    pmpi_report_taken(s, why, sizeof(why)) < 0)
		fprintf(stderr,
			"libofc-mpi: ofcd did not take the job's word that it runs the "
			"new schedules: %s\n",
			why);
}

void pmpi_sched_load(struct pmpi_state *s)
{
	const char *watch = getenv("OFC_SCHEDULE_WATCH");

	snprintf(s->mapping, sizeof(s->mapping), "none");
	find_host(s);
	s->hosts = zalloc((size_t)s->size, PMPI_HOST_MAX);
	PMPI_Allgather(s->host, PMPI_HOST_MAX, MPI_CHAR, s->hosts, PMPI_HOST_MAX, MPI_CHAR,
		       MPI_COMM_WORLD);
	s->watch = watch && strcmp(watch, "1") == 0;
	/* The job's name as ofcd takes one (other characters become _); none
	 * when it does not watch: it cannot take a re-plan, so it must not
	 * say it did (a drain waits its grace for it, as for any job that
	 * does not say so). */
	if (s->watch)
		snprintf(s->job, sizeof(s->job), "%.40s/%ld", s->host, (long)getpid());
	for (char *c = s->job; *c; c++)
		if (!strchr("._/:@-", *c) && !(*c >= 'a' && *c <= 'z') &&
		    !(*c >= 'A' && *c <= 'Z') && !(*c >= '0' && *c <= '9'))
			*c = '_';
	read_all(s);
	taken(s);
}

/* Rank 0 says, on the library's communicator, whether the files changed;
 * when they did every rank reads them anew here, at the same call. */
void pmpi_sched_watch(struct pmpi_state *s)
{
	const char *env = getenv("OFC_SCHEDULE");
	int changed =
	    s->rank == 0 && (s->from_ofcd ? ofcd_signature(s) : signature(env)) != s->signature;

	PMPI_Bcast(&changed, 1, MPI_INT, 0, s->comm);
	if (!changed)
		return;
	free_schedules(s);
	read_all(s);
	s->replans++;
	taken(s);
}

void pmpi_sched_free(struct pmpi_state *s)
{
	free_schedules(s);
	free(s->hosts);
}
