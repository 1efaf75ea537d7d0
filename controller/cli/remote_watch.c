/* `ofc --socket PATH watch`: ofcd's events as they happen, one a line,
 * following the fabric from replica to replica by the events' numbers. */
#include "controller/cli/remote.h"

#include <string.h>
#include <time.h>

/* "2024-05-01T12:34:56.789+02:00": local time with ms and the offset, so
 * lines from hosts in other zones still sort and compare. */
static const char *iso_time_ms(uint64_t unix_ms, char *buf, size_t n)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	char date[32], zone[8];

	if (!localtime_r(&t, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) ||
	    !strftime(zone, sizeof(zone), "%z", &tm) || strlen(zone) != 5) {
		snprintf(buf, n, "%llu", (unsigned long long)unix_ms);
		return buf;
	}
	snprintf(buf, n, "%s.%03u%.3s:%s", date, (unsigned)(unix_ms % 1000), zone, zone + 3);
	return buf;
}

/* ---- watch and cancel --------------------------------------------------------------------- */

/* Where a watch is in the fabric's event log (Event.seq, Event.log): the
 * last event printed, so that one resumed elsewhere prints none twice and
 * says what it cannot have. */
struct watch_pos {
	uint64_t seq, log;
	bool have;
};

/* Whether e is to be printed: not one printed before; a gap said on
 * stderr. An unnumbered event (a replica's own leader change) always. */
static bool watch_fresh(struct watch_pos *p, const Ofc__V1__Event *e, const char *from)
{
	if (!e->has_seq || !e->has_log)
		return true;
	if (p->have && e->log == p->log && e->seq <= p->seq)
		return false;
	if (p->have && e->log == p->log && e->seq > p->seq + 1)
		fprintf(stderr,
			"ofc watch: events %llu to %llu of the fabric's log are missed (%s keeps "
			"the later ones only)\n",
			(unsigned long long)p->seq + 1, (unsigned long long)e->seq - 1, from);
	else if (p->have && e->log != p->log)
		fprintf(stderr, "ofc watch: %s numbers its events anew (a new event log)\n", from);
	p->have = true;
	p->seq = e->seq;
	p->log = e->log;
	return true;
}

static void watch_print(const struct remote *r, const Ofc__V1__Event *e)
{
	const ProtobufCEnumValue *v =
	    protobuf_c_enum_descriptor_get_value(&ofc__v1__event__kind__descriptor, e->kind);

	if (r->json) {
		struct json_writer jw;

		jw_init(&jw, stdout, false);
		pb_write_json(&jw, &e->base);
		jw_finish(&jw);
	} else {
		char when[64];

		printf("%s %s%s%s%s%s\n", iso_time_ms(e->time_unix_ms, when, sizeof(when)),
		       v ? v->name + 5 : "?", e->device ? " " : "", e->device ? e->device : "",
		       e->message && *e->message ? ": " : "", e->message ? e->message : "");
	}
	fflush(stdout);
}

/* Open the watch on a replica that answers, resuming after p (req
 * holds the Watch). 0, or an exit status. */
static int watch_open(struct remote *r, Ofc__V1__Request *req, const struct watch_pos *p,
		      unsigned flags, double timeout)
{
	Ofc__V1__Watch *w = req->watch;
	Ofc__V1__Response *resp;
	struct ofc_error err = {0};
	int rc;

	if (p->have) {
		w->has_after_seq = w->has_log = 1;
		w->after_seq = p->seq;
		w->log = p->log;
	}
	req->has_id = 1;
	req->id = 1;
	if (cli_open(r->t, req, timeout, flags, &resp, &err) < 0)
		return remote_connect_fail(&err);
	r->t->cl.timeout = r->timeout; /* now the wait for each event */
	rc = remote_status_exit(resp->status);
	if (rc) {
		ofcd_disconnect(&r->t->cl);
		return remote_finish(r, resp);
	}
	ofc__v1__response__free_unpacked(resp, NULL);
	return 0;
}

static int watch_run(struct remote *r, Ofc__V1__Request *req)
{
	Ofc__V1__Response *resp;
	struct ofc_error err = {0};
	struct watch_pos pos = {0};
	uint32_t seen = 0;
	int rc;

	remote_say_default(r);
	if ((rc = watch_open(r, req, &pos, CLI_CALL_READ | CLI_CALL_QUICK, r->timeout)) != 0)
		return rc;
	/* The acknowledgement is out: say so, for scripts that wait on it. */
	if (!r->json)
		fprintf(stderr, "watching %s\n", r->t->answered);
	while (!r->count || seen < r->count) {
		if (ofcd_recv(&r->t->cl, &resp, &err) < 0) {
			/* --timeout: no event for that long is the end asked for. */
			if (err.reason == OFC_R_TIMEOUT && r->timeout > 0)
				break;
			if (r->t->n < 2)
				goto fail;
			/* Its replica gone: the next that answers, from here. */
			char gone[CLI_TARGET_LEN];

			snprintf(gone, sizeof(gone), "%s", r->t->answered);
			ofcd_disconnect(&r->t->cl);
			r->t->first = (r->t->first + 1) % r->t->n;
			if ((rc = watch_open(r, req, &pos, CLI_CALL_READ | CLI_CALL_PERSIST,
					     r->timeout > 0 ? r->timeout : CLI_WALK_DEFAULT)) !=
			    0) {
				fprintf(stderr,
					"ofc watch: lost %s (%s), and no replica answered\n", gone,
					err.msg);
				return rc;
			}
			fprintf(stderr, "ofc watch: lost %s (%s); watching %s from event %llu\n",
				gone, err.msg, r->t->answered, (unsigned long long)pos.seq + 1);
			ofc_error_clear(&err);
			continue;
		}
		if (resp->body_case == OFC__V1__RESPONSE__BODY_EVENT &&
		    watch_fresh(&pos, resp->event, r->t->answered)) {
			seen++;
			watch_print(r, resp->event);
		}
		ofc__v1__response__free_unpacked(resp, NULL);
	}
	ofcd_disconnect(&r->t->cl);
	return 0;
fail:
	ofcd_disconnect(&r->t->cl);
	return remote_connect_fail(&err);
}

static const struct opt watch_rows[] = {
    {"count", cli_row_u32, REMOTE_O(count), "N", "stop after N events", 1, UINT32_MAX},
    {"json", NULL, REMOTE_O(json), NULL, "one JSON object per line (time_unix_ms as sent)"},
    {"timeout", cli_row_duration, REMOTE_O(timeout), "DUR",
     "stop when no event came for DUR (a normal end: exit 0)"},
    CLI_OPT_HELP,
    {NULL},
};

const struct cli_table remote_watch_cli_table = {"--socket PATH watch", watch_rows,
						 sizeof(struct remote)};

const struct remote_cmd remote_watch_cmd = {
    .cmd = {"watch", "", "print the daemon's events", NULL},
    .kind = API_WATCH,
    .opts = {watch_rows,
	     "Prints ofcd's events as they happen, one per line: transactions started,\n"
	     "committed, rolled back; devices lost and back; configs applied or rejected;\n"
	     "requests queued, done, refused (and why) and cancelled; failures reported\n"
	     "and restored. Each line: the time (ISO 8601, local, with ms), the event, the\n"
	     "device, the message.\n\n"
	     "Given several replicas (--socket repeated, or a comma list), it follows the\n"
	     "fabric: when its replica goes, it goes on at the next that answers (for up to\n"
	     "30 s, or --timeout), from the last event it printed: every replica sends the\n"
	     "same numbered events, so none is printed twice, and a gap is said on stderr.\n"},
    .extra = "",
    .run = watch_run,
};
