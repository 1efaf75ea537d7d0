/* The use case "reconfigure the fabric or a partition", written once:
 * repair what a crash left, read the devices and plan, aim (a partition, a
 * target chosen by its cost, a renumbering that keeps circuits), check the
 * plan, then apply and record it as one transaction. `ofc plan`, `ofc
 * apply|try`, `ofc testbed run --workload` and ofcd's mutations and
 * re-wiring all run it; each keeps its own options and its own words for
 * the outcome (reconfig.h has the contract). */
#include "controller/reconfig/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void tell(const struct reconfigure_req *q, enum reconfigure_event ev,
		 const struct reconfigure_result *r)
{
	if (q->on_event)
		q->on_event(q->ctx, ev, r);
}

/* The plan as made against max_moves. */
static int check_moves(const struct reconfigure_req *q, const struct reconfigure_result *r,
		       struct ofc_error *err)
{
	const struct ctl *c = r->planned;
	uint32_t ops = ctl_plan_size(c);
	char buf[96];

	if (!q->max_moves_set || ops <= q->max_moves)
		return 0;
	ctl_plan_seconds_text(c, buf, sizeof(buf));
	return ofc_error_set(
	    err, OFC_E_RUNTIME,
	    "reaching %s takes %u operation%s%s%s%s, more than --max-moves %u; "
	    "nothing was changed%s",
	    c->fabric->graph && c->fabric->graph->spec ? c->fabric->graph->spec : "the config", ops,
	    ops == 1 ? "" : "s", buf[0] ? " (" : "", buf, buf[0] ? ")" : "", q->max_moves,
	    r->renumbered ? "" : " (--relabel may keep more circuits in place)");
}

/* The partition asked for by name, or an error naming those there are. */
static const struct partition *find_partition(const struct reconfigure_req *q,
					      const struct fabric *f, struct ofc_error *err)
{
	const struct partition *p = fabric_find_partition(f, q->partition_name);
	struct strbuf names = {0};

	if (!p) {
		for (uint32_t i = 0; i < f->npartitions; i++)
			sb_printf(&names, "%s'%s'", i ? ", " : "", f->partitions[i].name);
		ofc_error_set(err, OFC_E_USAGE, "--partition '%s': %s has %s%s", q->partition_name,
			      f->file, f->npartitions ? "the partitions " : "no partitions",
			      names.len ? names.buf : "");
		sb_free(&names);
	}
	return p;
}

/* A partition alone, renumbered over its members when asked. */
static int aim_partition(const struct reconfigure_req *q, struct reconfigure_result *r,
			 const struct partition *p, struct ofc_error *err)
{
	struct ctl *c = r->planned;

	r->partition = p;
	r->renumbered = q->relabel;
	if (q->ahead && !q->relabel_before) {
		struct circuit *pc = NULL;
		uint32_t npc = 0;

		if (q->ahead(q->ctx, c, p, &pc, &npc, &r->relabel) == 1) {
			int rc = ctl_partition_aim(c, p, pc, npc, err);

			free(pc);
			if (rc == 0)
				c->relabelled = q->relabel && r->relabel.changed;
			return rc;
		}
	}
	if (q->relabel && q->relabel_before) {
		/* What the members' own numbering would take, for the report. */
		if (ctl_partition(c, p, NULL, NULL, NULL, NULL, err) < 0)
			return -1;
		r->before = ctl_plan_size(c);
	}
	return ctl_partition(c, p, q->relabel_ops, q->ctx, q->relabel ? &q->relabel_opts : NULL,
			     &r->relabel, err);
}

/* The cheapest target all told (q->choose: ctl_choose). */
static int aim_choose(const struct reconfigure_req *q, struct reconfigure_result *r,
		      struct ofc_error *err)
{
	struct ctl_choice_opts o = {
	    .horizon = q->horizon,
	    .relabel = !q->no_relabel,
	    .relabel_opts = q->relabel_opts,
	    .alternatives = q->alternatives_set ? q->alternatives : 3,
	    .max_moves = q->max_moves,
	    .max_moves_set = q->max_moves_set,
	};

	if (q->partition_name && !(o.partition = find_partition(q, r->planned->fabric, err)))
		return -1;
	if (q->relabel && q->no_relabel)
		return ofc_error_set(err, OFC_E_USAGE, "--relabel and --no-relabel contradict");
	if (q->choose(r->planned, &o, &r->choice, err) < 0)
		return -1;
	r->chose = true;
	return 0;
}

/* The last commit renumbered this topology to keep circuits: keep its
 * numbering (a plain plan would otherwise plan back to the config's). */
static bool last_renumbered(const struct reconfigure_req *q, struct reconfigure_result *r)
{
	const struct fabric *f = r->planned->fabric;
	struct ctl_record rec;
	struct ofc_error e = {0};
	bool keep = false;

	if (!q->keep_numbering || q->relabel || q->no_relabel || !f->topology.spec ||
	    ctl_load_record_for(r->planned, &rec, &e) < 0)
		return false;
	if (rec.have_state && rec.relabelled && !rec.partition &&
	    strcmp(rec.topology, f->topology.spec) == 0) {
		keep = true;
		r->kept_generation = rec.generation;
	}
	ctl_record_free(&rec);
	return keep;
}

/* After the read: what the request aims at. */
static int aim(const struct reconfigure_req *q, struct reconfigure_result *r, struct ofc_error *err)
{
	const struct partition *p = q->partition;

	r->before = ctl_plan_size(r->planned);
	if (q->alternatives_set && !q->choose)
		return ofc_error_set(err, OFC_E_USAGE, "--alternatives goes with --horizon");
	if (q->free_ports && (q->choose || p || q->partition_name))
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--free-ports aims the whole fabric's topology on the ports no "
		    "held partition has: not with %s",
		    q->choose ? "--horizon" : "a partition");
	if (q->choose)
		return aim_choose(q, r, err);
	if (!p && q->partition_name && !(p = find_partition(q, r->planned->fabric, err)))
		return -1;
	if (p)
		return aim_partition(q, r, p, err);
	r->renumbered = q->relabel;
	if (last_renumbered(q, r)) {
		r->renumbered = r->kept_numbering = true;
		tell(q, RECONF_EV_KEEP_NUMBERING, r);
	}
	if (r->renumbered &&
	    ctl_relabel(r->planned, q->relabel_ops, q->ctx, &q->relabel_opts, &r->relabel, err) < 0)
		return -1;
	if (q->free_ports)
		return ctl_free_ports_aim(r->planned, q->keep, q->nkeep, &r->kept_circuits, err);
	return 0;
}

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int reconfigure_run(const struct reconfigure_req *q, struct reconfigure_result *r,
		    struct ofc_error *err)
{
	memset(r, 0, sizeof(*r));
	r->stage = RECONF_RECOVER;
	if (q->lock && ctl_lock(q->ctl, err) < 0)
		return -1;
	if (q->recover && ctl_recover(q->ctl, &r->recovered, err) < 0)
		return -1;
	r->stage = RECONF_TARGET;
	r->planned = q->ctl;
	if (q->target && q->target(q->ctx, &r->planned, err) < 0) {
		r->planned = NULL;
		return -1;
	}
	r->stage = RECONF_READ;
	if (ctl_plan(r->planned, err) < 0)
		return -1;
	tell(q, RECONF_EV_READ, r);
	r->stage = RECONF_AIM;
	if (aim(q, r, err) < 0)
		return -1;
	tell(q, RECONF_EV_AIMED, r);
	r->stage = RECONF_CHECK;
	/* (a choice weighed max_moves already) */
	if ((!r->chose && check_moves(q, r, err) < 0) ||
	    (q->check && q->check(q->ctx, r->planned, err) < 0))
		return -1;
	if (q->dry_run || (q->skip_empty && !ctl_plan_size(r->planned))) {
		r->stage = RECONF_DONE;
		return 0;
	}
	r->stage = RECONF_APPLY;
	if (q->trial_s > 0)
		r->trial_deadline = unix_now() + q->trial_s;
	r->applied = true;
	if (ctl_apply(r->planned, r->trial_deadline, &r->txn, err) < 0)
		return -1;
	r->stage = RECONF_DONE;
	return 0;
}

void reconfigure_result_free(struct reconfigure_result *r)
{
	ctl_choice_free(&r->choice);
	memset(r, 0, sizeof(*r));
}
