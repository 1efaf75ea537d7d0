/* `ofc --socket PATH schedule`: a verified schedule from the daemon, its
 * figures printed, the whole written with -o; with the steps, asked as a
 * stream so that a schedule larger than a frame arrives one step at a
 * time. */
#include "controller/cli/remote.h"
#include "controller/export/export.h"

#include <stdlib.h>
#include <string.h>

/* A string a message may lack (a tenant's view leaves fields out). */
#define OR_DASH(p) ((p) ? (p) : "-")

/* --json: the summary `ofc schedule --json` prints, the message's figures
 * at the top level (schedule_summary_json, docs/json.md). */
static void print_schedule_json(FILE *out, const Ofc__V1__Schedule *s)
{
	struct json_writer w;

	jw_init(&w, out, true);
	schedule_summary_json(&w, s);
	jw_finish(&w);
}

static int write_schedule(const Ofc__V1__Schedule *s, enum out_format f, const char *path)
{
	struct cli_output out;
	struct ofc_error err = {0};

	if (cli_output_open(&out, path, &err) < 0)
		return cli_fail(&err);
	if (f == FMT_PB) {
		size_t n = protobuf_c_message_get_packed_size(&s->base);
		uint8_t *buf = xmalloc(n + 1);

		protobuf_c_message_pack(&s->base, buf);
		if (n && fwrite(buf, 1, n, out.f) != n)
			ofc_error_set(&err, OFC_E_RUNTIME, "%s: short write", path);
		free(buf);
	} else {
		struct json_writer w;

		jw_init(&w, out.f, true);
		pb_write_json(&w, &s->base);
		jw_finish(&w);
	}
	if (err.code) {
		cli_output_abort(&out);
		return cli_fail(&err);
	}
	if (cli_output_commit(&out, &err) < 0)
		return cli_fail(&err);
	return 0;
}

static void print_schedule(FILE *out, const Ofc__V1__Schedule *s)
{
	double tau = 0;
	bool have_tau = false;

	for (size_t i = 0; i < s->n_metrics; i++)
		if (strcmp(s->metrics[i]->key, "tau_b") == 0) {
			tau = s->metrics[i]->value;
			have_tau = true;
		}
	fprintf(out, "%s %s on %s: %u nodes\n", s->algorithm, s->collective, s->topology, s->nodes);
	fprintf(out, "  steps        %u\n", s->num_steps);
	if (have_tau && s->tau_b_fraction && strchr(s->tau_b_fraction, '/'))
		fprintf(out, "  tau_B        %s = %.9g\n", s->tau_b_fraction, tau);
	else if (have_tau)
		fprintf(out, "  tau_B        %.9g\n", tau);
	fprintf(out, "  time         %.6g us\n", s->time_us);
	fprintf(out, "  lower bound  %.6g us\n", s->lower_bound_us);
	fprintf(out, "  ratio        %.4f\n",
		s->lower_bound_us > 0 ? s->time_us / s->lower_bound_us : 0);
	fprintf(out, "  verified     %s%s%s\n", s->verified ? "yes" : "NO",
		s->verify_error ? ": " : "", s->verify_error ? s->verify_error : "");
	if (s->reduced)
		fprintf(out,
			"  reduced      node 0's program x %s (order %u), checked by symmetry\n",
			OR_DASH(s->reduced->name), s->reduced->order);
	if (s->n_links)
		fprintf(out, "  fabric       ports are host NIC ports; %zu links used\n",
			s->n_links);
}

/* The rest of a streamed GetSchedule after its first frame
 * (first->more): the steps one at a time, each written as a Schedule
 * holding it (protobuf merges them into the header already written), so
 * the file decodes to the schedule and only one step is held; as JSON the
 * whole message is put together first. Returns the last frame's status, or
 * -1 with err. */
struct stream_out {
	enum out_format fmt;
	FILE *f;
	Ofc__V1__Schedule *whole; /* JSON: the header, the steps appended */
	Ofc__V1__Response **held; /* frames of the step being put together */
	size_t nheld, cap;
	Ofc__V1__Response **keep; /* JSON: every frame, freed at the end */
	size_t nkeep, capkeep;
};

static void stream_flush(struct stream_out *o)
{
	size_t total = 0, k = 0;

	if (!o->nheld)
		return;
	for (size_t i = 0; i < o->nheld; i++)
		total += o->held[i]->schedule->steps[0]->n_transfers;
	Ofc__V1__Transfer **arr = xcalloc(total + 1, sizeof(*arr));
	for (size_t i = 0; i < o->nheld; i++)
		for (size_t t = 0; t < o->held[i]->schedule->steps[0]->n_transfers; t++)
			arr[k++] = o->held[i]->schedule->steps[0]->transfers[t];
	if (o->fmt == FMT_PB) {
		Ofc__V1__Step st = OFC__V1__STEP__INIT, *sp = &st;
		Ofc__V1__Schedule m = OFC__V1__SCHEDULE__INIT;

		st.n_transfers = total;
		st.transfers = arr;
		m.n_steps = 1;
		m.steps = &sp;
		size_t n = protobuf_c_message_get_packed_size(&m.base);
		uint8_t *b = xmalloc(n + 1);
		protobuf_c_message_pack(&m.base, b);
		fwrite(b, 1, n, o->f);
		free(b);
		free(arr);
		for (size_t i = 0; i < o->nheld; i++)
			ofc__v1__response__free_unpacked(o->held[i], NULL);
	} else {
		/* The first frame's step takes the whole array; the frames stay
		 * until the end (the transfers are theirs). */
		Ofc__V1__Step *st = o->held[0]->schedule->steps[0];

		free(st->transfers);
		st->transfers = arr;
		st->n_transfers = total;
		for (size_t i = 1; i < o->nheld; i++)
			o->held[i]->schedule->steps[0]->n_transfers = 0;
		o->whole->steps =
		    xreallocarray(o->whole->steps, o->whole->n_steps + 1, sizeof(*o->whole->steps));
		o->whole->steps[o->whole->n_steps++] = st;
		for (size_t i = 0; i < o->nheld; i++) {
			GROW(o->keep, o->capkeep, o->nkeep + 1);
			o->keep[o->nkeep++] = o->held[i];
		}
	}
	o->nheld = 0;
}

static int stream_rest(struct remote *r, Ofc__V1__Response *first, struct stream_out *o,
		       Ofc__V1__Response **last, struct ofc_error *err)
{
	if (o->fmt == FMT_PB) {
		size_t n = protobuf_c_message_get_packed_size(&first->schedule->base);
		uint8_t *b = xmalloc(n + 1);

		protobuf_c_message_pack(&first->schedule->base, b);
		fwrite(b, 1, n, o->f);
		free(b);
	}
	for (;;) {
		Ofc__V1__Response *resp;

		if (ofcd_recv(&r->t->cl, &resp, err) < 0)
			return -1;
		if (resp->body_case == OFC__V1__RESPONSE__BODY_SCHEDULE &&
		    resp->schedule->n_steps == 1) {
			if (!resp->continues_step)
				stream_flush(o);
			GROW(o->held, o->cap, o->nheld + 1);
			o->held[o->nheld++] = resp;
			continue;
		}
		if (resp->more) {
			ofc__v1__response__free_unpacked(resp, NULL);
			continue;
		}
		stream_flush(o);
		*last = resp;
		return 0;
	}
}

/* -o with the steps: a stream, so a schedule larger than a
 * frame arrives; an ofcd without streams answers in one frame, as before. */
static int schedule_streamed(struct remote *r, Ofc__V1__Request *req, enum out_format fmt,
			     const char *output)
{
	struct ofc_error err = {0};
	Ofc__V1__Response *first = NULL, *last = NULL;
	struct stream_out o = {.fmt = fmt};
	struct cli_output out;
	bool out_is_stdout = strcmp(output, "-") == 0;
	int rc;

	remote_say_default(r);
	if (cli_open(r->t, req, r->timeout, CLI_CALL_READ, &first, &err) < 0)
		return remote_connect_fail(&err);
	r->t->cl.timeout = r->timeout; /* now the wait for each frame */
	if (first->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE || !first->more) {
		ofcd_disconnect(&r->t->cl);
		if (first->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE)
			return remote_finish(r, first);
		rc = remote_status_exit(first->status);
		if ((fmt == FMT_PB || fmt == FMT_JSON) &&
		    write_schedule(first->schedule, fmt, output))
			rc = rc ? rc : 1;
		print_schedule(out_is_stdout ? stderr : stdout, first->schedule);
		ofc__v1__response__free_unpacked(first, NULL);
		return rc;
	}
	if (cli_output_open(&out, output, &err) < 0) {
		ofcd_disconnect(&r->t->cl);
		ofc__v1__response__free_unpacked(first, NULL);
		return cli_fail(&err);
	}
	o.f = out.f;
	o.whole = first->schedule;
	rc = stream_rest(r, first, &o, &last, &err);
	ofcd_disconnect(&r->t->cl);
	if (rc == 0 && last->status != OFC__V1__STATUS__STATUS_OK)
		ofc_error_set(&err, OFC_E_RUNTIME, "%s", last->message ? last->message : "failed");
	else if (rc == 0 && fmt == FMT_JSON) {
		struct json_writer w;

		jw_init(&w, out.f, true);
		pb_write_json(&w, &first->schedule->base);
		jw_finish(&w);
	}
	if (!err.code &&
	    (ferror(out.f) ? ofc_error_set(&err, OFC_E_RUNTIME, "%s: short write", output)
			   : cli_output_commit(&out, &err)) == 0) {
		print_schedule(out_is_stdout ? stderr : stdout, first->schedule);
		rc = 0;
	} else {
		if (out.f)
			cli_output_abort(&out);
		rc = cli_fail(&err);
	}
	/* JSON: the steps are the kept frames' (freed with them) */
	if (fmt == FMT_JSON) {
		first->schedule->n_steps = 0;
		free(first->schedule->steps);
		first->schedule->steps = NULL;
	}
	for (size_t i = 0; i < o.nkeep; i++)
		ofc__v1__response__free_unpacked(o.keep[i], NULL);
	for (size_t i = 0; i < o.nheld; i++)
		ofc__v1__response__free_unpacked(o.held[i], NULL);
	free(o.keep);
	free(o.held);
	if (last)
		ofc__v1__response__free_unpacked(last, NULL);
	ofc__v1__response__free_unpacked(first, NULL);
	return rc;
}

static int schedule_build(struct remote *r, union remote_body *b, int argc, char **argv)
{
	(void)argc, (void)argv;
	if (!b->get_schedule.collective)
		return cli_usage_error(r->cmd, "missing --collective");
	if (r->format && !r->output)
		return cli_usage_error(r->cmd, "--format needs -o OUT");
	/* The rule and the default of `ofc schedule`, so one -o gives one
	 * file locally and through the daemon. */
	return cli_output_format(r->cmd, "-o", r->output, r->format, NULL, FMT_PB | FMT_JSON,
				 FMT_JSON, &r->fmt);
}

static int schedule_run(struct remote *r, Ofc__V1__Request *req)
{
	Ofc__V1__GetSchedule *gs = req->get_schedule;
	bool out_is_stdout = r->output && strcmp(r->output, "-") == 0;
	Ofc__V1__Response *resp;
	int rc, wrc;

	if (r->output && !gs->summary_only && !r->json) {
		gs->has_stream = gs->stream = 1;
		return schedule_streamed(r, req, r->fmt, r->output);
	}
	if ((rc = remote_call(r, req, CLI_CALL_READ, &resp)) != 0)
		return rc;
	if (resp->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE)
		return remote_finish(r, resp);
	rc = remote_status_exit(resp->status);
	if (r->output && (wrc = write_schedule(resp->schedule, r->fmt, r->output)) != 0)
		rc = wrc;
	/* -o - puts the schedule on stdout: the summary goes to stderr. */
	if (r->json) {
		print_schedule_json(out_is_stdout ? stderr : stdout, resp->schedule);
		/* the daemon's words beside it, as `ofc schedule` notes */
		if (resp->status == OFC__V1__STATUS__STATUS_OK && resp->message)
			fprintf(stderr, "ofc schedule: %s\n", resp->message);
	} else
		print_schedule(out_is_stdout ? stderr : stdout, resp->schedule);
	if (resp->status != OFC__V1__STATUS__STATUS_OK)
		fprintf(stderr, "ofc: %s\n", resp->message ? resp->message : "failed");
	ofc__v1__response__free_unpacked(resp, NULL);
	return rc;
}

/* broadcast and reduce: the fluid engine's, on a server fabric */
static const struct opt_choice fluid_collectives[] = {{"broadcast", 0}, {"reduce", 0}, {NULL, 0}};

static const struct opt schedule_rows[] = {
    {"collective", cli_row_collective_name, REMOTE_B(get_schedule, collective), "C",
     "allgather, reduce-scatter, allreduce or alltoall (a server fabric: also broadcast and "
     "reduce)",
     .flags = OPT_REQUIRED,
     .expect = "expected allreduce, allgather, reduce-scatter or alltoall (a server fabric: "
	       "also broadcast and reduce)",
     .choices = fluid_collectives},
    {"algo", opt_str, REMOTE_B(get_schedule, algorithm), "A",
     "the algorithm (default: the config's for the collective, else the engines' pick)"},
    {"size", cli_row_size, REMOTE_B(get_schedule, size_bytes), "M",
     "data per node (default: the config's)"},
    {"topology", opt_str, REMOTE_B(get_schedule, topology), "SPEC",
     "on SPEC instead of the committed topology", .alt = 1},
    {"partition", opt_str, REMOTE_B(get_schedule, partition), "NAME",
     "on that partition's topology, sized by its collectives", .alt = 1},
    {"chunks", cli_row_u32, REMOTE_B(get_schedule, chunks), "P",
     "BFB: split each shard into P chunks", 1, 1000000},
    /* (ofcd checks the value: its answer names the ones it knows) */
    {"lowering", opt_str, REMOTE_B(get_schedule, lowering), "L", "alltoall mcf's lowering"},
    {"summary", remote_row_flag, REMOTE_B(get_schedule, summary_only), NULL,
     "figures only, no steps"},
    {"reduced", remote_row_flag, REMOTE_B(get_schedule, reduced), NULL,
     "symmetry-reduced (as ofc schedule --reduced): node 0's program and the translation "
     "group, on the topology's own numbering; refused with the reason where it has no such "
     "form"},
    {"format", opt_str, REMOTE_O(format), "pb|json",
     "-o's format; without it OUT's extension says which (.pb, .json), else json"},
    {"output", opt_str, REMOTE_O(output), "OUT", "write the schedule to OUT (-: stdout)",
     .flags = OPT_SHORT, .letter = 'o'},
    REMOTE_ROWS_END("the summary as JSON, as 'ofc schedule --json' prints it (docs/json.md)"),
};

const struct cli_table remote_schedule_cli_table = {"--socket PATH schedule", schedule_rows,
						    sizeof(struct remote)};

/* --help: the algorithms from the engine table (the config's choice
 * before any default), the lowerings from theirs, before the rows. */
static int schedule_help(const struct cli_cmd *cmd)
{
	struct strbuf sb = STRBUF_INIT;
	struct cli_opts o = {schedule_rows, NULL, NULL, NULL};
	int rc;

	sb_puts(&sb,
		"Asks ofcd for a verified, priced schedule on the fabric's committed topology\n"
		"(or --topology SPEC, or --partition NAME: that partition's topology, sized\n"
		"by its collectives), the same ofc.v1.Schedule `ofc schedule` exports.\n\n");
	schedule_algorithms_one(
	    &sb, "--algo: the config's algorithm for the collective, else: ", "", 79);
	sb_puts(&sb, "--lowering (alltoall mcf): ");
	a2a_lowering_names(&sb, false, " or ");
	sb_puts(&sb, " (default steps; paths is the\nworkload's, answered from the MCF "
		     "solution ofcd keeps).\n");
	o.help = sb.buf;
	rc = cli_help_opts(cmd, &o);
	sb_free(&sb);
	return rc;
}

const struct remote_cmd remote_schedule_cmd = {
    .cmd = {"schedule", "", "a verified schedule from the daemon", NULL},
    .kind = API_GET_SCHEDULE,
    .opts = {schedule_rows, NULL, schedule_help, NULL},
    .extra = "",
    .build = schedule_build,
    .run = schedule_run,
};
