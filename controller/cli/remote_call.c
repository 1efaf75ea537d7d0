/* What every remote command's asking shares (remote.h): the call through
 * the replicas' walk, the outcome printed, the exit status an answer
 * calls for, and what the option rows of every command's table fill (a
 * message's flag, the has_ flags beside its fields). The skeleton
 * (cmd_remote.c) and the commands that ask in more than one call
 * (remote_watch.c, remote_schedule.c, cmd_adopt.c) use it. */
#include "controller/cli/remote.h"

#include <string.h>
#include <unistd.h>

int remote_status_exit(Ofc__V1__Status st)
{
	return st == OFC__V1__STATUS__STATUS_OK ? 0 : st == OFC__V1__STATUS__STATUS_INVALID ? 2 : 1;
}

int remote_connect_fail(const struct ofc_error *err)
{
	fprintf(stderr, "ofc: %s\n", err->msg);
	return err->code == OFC_E_USAGE ? 2 : 1;
}

void remote_print_json(FILE *out, const ProtobufCMessage *m)
{
	struct json_writer w;

	jw_init(&w, out, true);
	pb_write_json(&w, m);
	jw_finish(&w);
}

void remote_say_default(const struct remote *r)
{
	if (r->t->default_socket)
		fprintf(stderr,
			"ofc %s: asking ofcd at %s (the default; --socket PATH or "
			"OFC_SOCKET=PATH for another)\n",
			strrchr(r->cmd->name, ' ') + 1, r->t->addr[0]);
}

int remote_call(struct remote *r, Ofc__V1__Request *req, unsigned flags, Ofc__V1__Response **resp)
{
	struct ofc_error err = {0};

	remote_say_default(r);
	req->has_id = 1;
	req->id = (uint64_t)getpid();
	if (cli_call(r->t, req, r->timeout, flags, resp, &err) < 0)
		return remote_connect_fail(&err);
	return 0;
}

int remote_finish(struct remote *r, Ofc__V1__Response *resp)
{
	int rc = remote_status_exit(resp->status);

	if (r->json && resp->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION) {
		/* the ofc.v1.TransactionInfo, as `ofc apply --json` prints it
		 * (docs/json.md): a failure's message is its error */
		char *own = resp->transaction->error;

		if (rc != 0 && !own)
			resp->transaction->error = resp->message;
		remote_print_json(stdout, &resp->transaction->base);
		resp->transaction->error = own; /* the unpacked message frees its own */
		if (rc != 0)
			fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	} else if (r->json && rc == 0) {
		remote_print_json(stdout, &resp->base);
	} else if (rc == 0) {
		printf("%s\n", resp->message ? resp->message : "ok");
		/* a dry run: the plan, as `ofc plan` prints it */
		if (resp->body_case == OFC__V1__RESPONSE__BODY_TRANSACTION &&
		    resp->transaction->plan)
			fputs(resp->transaction->plan, stdout);
	} else if (resp->body_case == OFC__V1__RESPONSE__BODY_CONFIG_ERROR &&
		   resp->config_error->has_line) {
		fprintf(stderr, "%s:%u:%u: %s\n", resp->config_error->file,
			resp->config_error->line, resp->config_error->column,
			resp->config_error->message);
	} else {
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

/* ---- the rows' fields ---------------------------------------------------------------- */

int remote_row_flag(const struct opt *row, const char *arg, void *base, struct ofc_error *err)
{
	(void)arg, (void)err;
	*(protobuf_c_boolean *)((char *)base + row->off) = 1;
	return 0;
}

void remote_given(const struct opt *row, void *base)
{
	struct remote *r = base;
	size_t at = REMOTE_O(body);

	if (!r->desc || row->off < at || row->off >= at + sizeof(r->body))
		return;
	for (unsigned i = 0; i < r->desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &r->desc->fields[i];

		/* (a oneof's quantifier is its case, the builder's to set) */
		if (f->offset == row->off - at && f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		    f->quantifier_offset && !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
			*(protobuf_c_boolean *)((char *)&r->body + f->quantifier_offset) = 1;
	}
}
