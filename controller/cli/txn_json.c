/* `ofc apply|try|confirm --json` and `ofc plan FILE --json`: the
 * transaction as ofc.v1.TransactionInfo, the message ofcd answers
 * ApplyConfig with and `ofc --socket PATH apply --json` prints, so a
 * script reads one shape either way (docs/json.md). */
#include "controller/cli/internal.h"
#include "controller/export/export.h"

#include <string.h>

/* ofcd's words for the kind of change. */
static const char *kind_of(const struct fabric_cmd *fc)
{
	return strcmp(fc->cmd->name, "apply") == 0 ? "apply-config" : fc->cmd->name;
}

static void init(Ofc__V1__TransactionInfo *t, const struct fabric_cmd *fc)
{
	ofc__v1__transaction_info__init(t);
	t->fabric = fc->fabric->name;
	t->target = (char *)fc->file;
	t->kind = (char *)kind_of(fc);
	t->has_dry_run = 1;
	t->dry_run = fc->dry_run;
	t->principal = fc->ctl ? fc->ctl->principal : NULL; /* (as ofcd names its client) */
}

static void print(const Ofc__V1__TransactionInfo *t)
{
	struct json_writer w;

	jw_init(&w, stdout, true);
	pb_write_json(&w, &t->base);
	jw_finish(&w);
}

void txn_write_json(const struct fabric_cmd *fc, const struct ctl_result *res, bool ok,
		    const char *outcome, const struct ofc_error *err)
{
	Ofc__V1__TransactionInfo t;

	init(&t, fc);
	t.has_id = 1;
	t.id = res->txn;
	t.state = (char *)outcome;
	t.has_operations = t.has_seconds = 1;
	t.operations = res->ops_applied;
	t.seconds = res->seconds;
	if (res->failed_device[0])
		t.failed_device = (char *)res->failed_device;
	if (!ok) {
		t.has_restored = 1;
		t.restored = res->rolled_back && res->rollback_ok;
		t.error = (char *)err->msg;
	}
	print(&t);
}

void txn_write_plan_json(const struct fabric_cmd *fc)
{
	Ofc__V1__TransactionInfo t;
	struct arena a = {0};

	init(&t, fc);
	t.dry_run = true;				/* (`ofc plan` is one) */
	txn_planned_msg(&a, &fc->result, SIZE_MAX, &t); /* as ofcd answers a dry run */
	print(&t);
	arena_free(&a);
}

void txn_write_confirm_json(const struct fabric_cmd *fc, const char *fabric, uint64_t txn,
			    const char *outcome)
{
	Ofc__V1__TransactionInfo t;

	ofc__v1__transaction_info__init(&t);
	t.fabric = (char *)fabric;
	t.target = (char *)fc->file; /* (NULL: the only trial waiting) */
	t.kind = "confirm";
	t.has_id = 1;
	t.id = txn;
	t.state = (char *)outcome;
	print(&t);
}
