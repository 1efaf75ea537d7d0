/* A dry run's transaction as ofc.v1.TransactionInfo: what a plan of
 * devices would do (state "planned", its operations, the switching time
 * and the plan in `ofc plan`'s words), one builder for `ofc apply
 * --dry-run --json` and ofcd's answer to a dry ApplyConfig or Reconfigure,
 * so the two say the same. */
#include "controller/export/export.h"
#include "controller/reconfig/reconfig.h"

bool txn_planned_msg(struct arena *a, const struct ctl *c, size_t max_plan,
		     Ofc__V1__TransactionInfo *t)
{
	struct strbuf sb = STRBUF_INIT;
	bool fits;

	t->state = "planned";
	t->has_operations = t->has_switching_seconds = 1;
	t->operations = ctl_plan_size(c);
	t->switching_seconds = ctl_plan_seconds(c);
	ctl_plan_text(c, &sb);
	fits = sb.len <= max_plan;
	if (fits)
		t->plan = arena_strdup(a, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return fits;
}
