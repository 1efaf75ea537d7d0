/* A leader's planning of Slurm jobs with renumbering on, without ofcd around
 * it: HOSTS hosts of 4 ports wired per port to four sim switches, the whole
 * fabric first at a square-ish torus, then JOBS jobs of 8 to 256 hosts, each
 * a torus over the lowest free hosts (Slurm's linear select), up to 16 at
 * once; when no room is left the oldest job ends (its circuits stay, as an
 * epilog leaves them). Each job is planned the way ofcd's queue plans it
 * (ctl_plan, then ctl_partition with the prolog's relabel budget); then the
 * config's numbering is applied to the sims, so that every version of the
 * search meets the same states and their figures compare. The figures: planning time per job (p50,
 * p99, mean; of it the renumbering search), the jobs a minute one queue plans at that mean, and the
 * cross-connects the plans kept against the config's numbering (the search's quality: the same
 * churn must keep as many).
 *
 * Usage: build/bench/relabel_churn [HOSTS [JOBS [BUDGET_S [SEED]]]]
 * (1024 200 0.5 1); the budget as ofcd's prolog gives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/config/config.h"
#include "controller/reconfig/reconfig.h"
#include "topo/topo.h"

#define NSW	 4
#define MAXJOBS	 16
#define NO_OWNER UINT32_MAX

struct churn {
	struct sim_device sim[NSW];
	char dir[64];
};

static struct sim_device *lookup(void *ctx, const char *name)
{
	struct churn *ch = ctx;

	if (strncmp(name, "ocs", 3) == 0 && name[3] >= '0' && name[3] < '0' + NSW && !name[4])
		return &ch->sim[name[3] - '0'];
	return NULL;
}

static const struct {
	uint32_t hosts;
	const char *spec;
} sizes[] = {{8, "torus:2x4"},	{16, "torus:4x4"},   {32, "torus:4x8"},
	     {64, "torus:8x8"}, {128, "torus:8x16"}, {256, "torus:16x16"}};

static uint64_t rnd(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static struct fabric *fabric_of(uint32_t hosts)
{
	uint32_t a = 1;
	for (uint32_t k = 1; k * k <= hosts; k++)
		if (hosts % k == 0)
			a = k;
	struct strbuf sb = STRBUF_INIT;
	sb_printf(&sb, "name: churn\nhosts: {count: %u, prefix: h, ports: 4}\nswitches:\n", hosts);
	for (int s = 0; s < NSW; s++)
		sb_printf(&sb, "  - {name: ocs%d, type: ocs, ports: %u, driver: {type: sim}}\n", s,
			  hosts);
	sb_printf(&sb,
		  "wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n"
		  "topology: torus:%ux%u\n",
		  a, hosts / a);
	struct fabric *f;
	struct ofc_error err = {0};
	if (config_parse("churn.yaml", sb.buf, sb.len, &f, &err) < 0 ||
	    fabric_validate(f, &err) < 0) {
		fprintf(stderr, "churn.yaml: %s\n", err.msg);
		exit(1);
	}
	sb_free(&sb);
	return f;
}

/* A run-time partition (as ofcd's held_make makes one). */
static void partition_make(struct fabric *f, struct partition *p, uint32_t job,
			   const uint32_t *hosts, uint32_t n, const char *spec)
{
	memset(p, 0, sizeof(*p));
	p->name = xasprintf("slurm-job-%u", job);
	p->runtime = true;
	p->nmembers = n;
	p->members = xcalloc(n + 1, sizeof(char *));
	p->member_locs = xcalloc(n, sizeof(*p->member_locs));
	p->member_host = xcalloc(n, sizeof(uint32_t));
	p->member_port = xcalloc(n, sizeof(uint32_t));
	for (uint32_t m = 0; m < n; m++) {
		p->members[m] = xasprintf("h%u", hosts[m]);
		p->member_host[m] = hosts[m];
		p->member_port[m] = UINT32_MAX;
	}
	p->topology.present = true;
	p->topology.self_loops = f->topology.self_loops;
	p->topology.spec = xstrdup(spec);
}

static void partition_drop(struct partition *p)
{
	for (uint32_t m = 0; m < p->nmembers; m++)
		free(p->members[m]);
	free(p->members);
	free(p->member_locs);
	free(p->member_host);
	free(p->member_port);
	free(p->topology.spec);
	free(p->name);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct ctl *open_ctl(struct churn *ch, struct fabric *f)
{
	struct ctl_opts o = {.state_dir = ch->dir, .sim_lookup = lookup, .ctx = ch};
	struct ofc_error err = {0};
	struct ctl *c;

	if (ctl_open(f, &o, &c, &err) < 0 || ctl_plan(c, &err) < 0) {
		fprintf(stderr, "ctl: %s\n", err.msg);
		exit(1);
	}
	return c;
}

/* What c planned, as if applied. */
static void apply(struct churn *ch, struct ctl *c)
{
	for (uint32_t i = 0; i < c->ndevs; i++)
		state_copy(&lookup(ch, c->devs[i].cfg.name)->state, &c->devs[i].target);
}

int main(int argc, char **argv)
{
	uint32_t hosts = argc > 1 ? (uint32_t)atoi(argv[1]) : 1024;
	uint32_t njobs = argc > 2 ? (uint32_t)atoi(argv[2]) : 200;
	double budget = argc > 3 ? atof(argv[3]) : 0.5;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	struct churn ch;
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	if (hosts < 256 || hosts % 4) {
		fprintf(stderr, "HOSTS: at least 256, a multiple of 4\n");
		return 2;
	}
	snprintf(ch.dir, sizeof(ch.dir), "%s/ofc-churn.XXXXXX", base);
	if (!mkdtemp(ch.dir))
		return 1;
	for (int s = 0; s < NSW; s++)
		sim_device_init(&ch.sim[s], DEV_SWITCH, hosts);
	struct fabric *f = fabric_of(hosts);
	struct ctl *c = open_ctl(&ch, f);
	apply(&ch, c); /* the whole fabric's torus in place */
	ctl_close(c);

	uint32_t *owner = xmalloc(hosts * sizeof(uint32_t)), *members = xmalloc(hosts * 4);
	uint32_t running[MAXJOBS], nrun = 0, started[MAXJOBS];
	double *plan = xcalloc(njobs + 1, sizeof(double)), *search = xcalloc(njobs + 1, 8);
	double sum_plan = 0, sum_search = 0;
	uint64_t kept = 0, kept0 = 0, arcs = 0;
	uint32_t complete = 0, deadline = 0;

	memset(owner, 0xff, hosts * sizeof(uint32_t));
	for (uint32_t j = 0; j < njobs; j++) {
		uint32_t sz = (uint32_t)(rnd(&seed) % (sizeof(sizes) / sizeof(sizes[0]))),
			 nfree = 0;

		for (;;) {
			nfree = 0;
			for (uint32_t h = 0; h < hosts; h++)
				nfree += owner[h] == NO_OWNER;
			if (nfree >= sizes[sz].hosts && nrun < MAXJOBS)
				break;
			for (uint32_t h = 0; h < hosts; h++) /* the oldest ends */
				if (owner[h] == running[0])
					owner[h] = NO_OWNER;
			memmove(running, running + 1, --nrun * sizeof(uint32_t));
			memmove(started, started + 1, nrun * sizeof(uint32_t));
		}
		uint32_t n = 0;
		for (uint32_t h = 0; h < hosts && n < sizes[sz].hosts; h++)
			if (owner[h] == NO_OWNER)
				members[n++] = h;
		struct partition p;
		partition_make(f, &p, j, members, n, sizes[sz].spec);

		struct relabel_opts o = {.budget_s = budget};
		struct fabric_relabel rep = {0};
		struct ofc_error err = {0};
		c = open_ctl(&ch, f);
		double t0 = now_seconds();
		if (ctl_partition(c, &p, &relabel_direct, NULL, &o, &rep, &err) < 0) {
			fprintf(stderr, "job %u (%s): %s\n", j, sizes[sz].spec, err.msg);
			return 1;
		}
		plan[j] = now_seconds() - t0;
		search[j] = rep.seconds;
		ctl_close(c);
		/* The config's numbering is what the sims get, so that every
		 * version of the search meets the same states. */
		c = open_ctl(&ch, f);
		if (ctl_partition(c, &p, NULL, NULL, NULL, NULL, &err) < 0) {
			fprintf(stderr, "job %u (%s): %s\n", j, sizes[sz].spec, err.msg);
			return 1;
		}
		apply(&ch, c);
		ctl_close(c);
		partition_drop(&p);
		sum_plan += plan[j];
		sum_search += search[j];
		kept += rep.kept;
		kept0 += rep.kept_identity;
		arcs += rep.arcs;
		complete += rep.complete;
		deadline += rep.deadline;
		for (uint32_t m = 0; m < n; m++)
			owner[members[m]] = j;
		running[nrun] = j;
		started[nrun++] = j;
	}
	qsort(plan, njobs, sizeof(double), cmp_double);
	qsort(search, njobs, sizeof(double), cmp_double);
	printf("%u hosts, %u jobs, budget %.3g s: plan p50 %.1f ms, p99 %.1f ms, mean %.1f ms "
	       "(search p50 %.1f ms, p99 %.1f ms, mean %.1f ms); %.0f jobs/min planned; "
	       "cross-connects kept %llu (config's numbering %llu) of %llu; %u complete, %u at "
	       "the deadline\n",
	       hosts, njobs, budget, 1e3 * plan[njobs / 2], 1e3 * plan[njobs * 99 / 100],
	       1e3 * sum_plan / njobs, 1e3 * search[njobs / 2], 1e3 * search[njobs * 99 / 100],
	       1e3 * sum_search / njobs, 60.0 / (sum_plan / njobs), (unsigned long long)kept,
	       (unsigned long long)kept0, (unsigned long long)arcs, complete, deadline);
	free(plan);
	free(search);
	free(owner);
	free(members);
	fabric_free(f);
	for (int s = 0; s < NSW; s++)
		sim_device_free(&ch.sim[s]);
	char *cmd = xasprintf("rm -rf '%s'", ch.dir);
	int rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : 1;
}
