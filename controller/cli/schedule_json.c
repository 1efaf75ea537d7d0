/* A schedule's summary as JSON, one shape whether computed here or by
 * ofcd (docs/json.md): the figures of ofc.v1.Schedule (the
 * message GetSchedule answers with, and `ofc schedule -o x.pb` writes) at
 * the top level, its metrics among them. `ofc --socket PATH schedule
 * --json` prints exactly these; `ofc schedule --json` prints its engine's
 * own summary and then these where it has not written the key already. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"

static void u32s(struct json_writer *w, const char *key, const uint32_t *v, size_t n)
{
	jw_key(w, key);
	jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, v[i]);
	jw_arr_end(w);
}

/* Each message's figures that w's outermost object lacks: m, then more
 * (NULL: none), protobuf's merge of the two as schedule_write_pb writes
 * them (the steps, links and vertices are the schedule, not its
 * summary). */
void json_schedule_fields(struct json_writer *w, const Ofc__V1__Schedule *m,
			  const Ofc__V1__Schedule *more)
{
	const Ofc__V1__Schedule *ms[2] = {m, more};

	for (int k = 0; k < 2; k++) {
		const Ofc__V1__Schedule *s = ms[k];

		if (!s)
			continue;
#define STR(f)                                                                                     \
	if (s->f && !jw_wrote_key(w, #f)) {                                                        \
		jw_key(w, #f);                                                                     \
		jw_str(w, s->f);                                                                   \
	}
#define NUM(f, put)                                                                                \
	if (s->has_##f && !jw_wrote_key(w, #f)) {                                                  \
		jw_key(w, #f);                                                                     \
		put(w, s->f);                                                                      \
	}
		STR(collective);
		STR(algorithm);
		NUM(nodes, jw_uint);
		STR(topology);
		NUM(size_bytes, jw_uint);
		NUM(num_steps, jw_uint);
		NUM(time_us, jw_double);
		NUM(lower_bound_us, jw_double);
		NUM(verified, jw_bool);
		STR(tau_b_fraction);
		NUM(num_transfers, jw_uint);
		NUM(degree, jw_uint);
		NUM(lower_bound_steps, jw_uint);
		NUM(lower_bound_tau_b, jw_double);
		STR(lower_bound_tau_b_fraction);
		NUM(ratio, jw_double);
		NUM(moore_optimal, jw_bool);
		NUM(bw_optimal, jw_bool);
#undef STR
#undef NUM
		if (s->n_failed_nodes && !jw_wrote_key(w, "failed_nodes"))
			u32s(w, "failed_nodes", s->failed_nodes, s->n_failed_nodes);
		for (size_t i = 0; i < s->n_metrics; i++)
			if (!jw_wrote_key(w, s->metrics[i]->key)) {
				jw_key(w, s->metrics[i]->key);
				jw_double(w, s->metrics[i]->value);
			}
		if (s->reduced && !jw_wrote_key(w, "reduced")) {
			jw_key(w, "reduced");
			pb_write_json(w, &s->reduced->base);
		}
	}
}

void json_schedule_rest(struct json_writer *w, const struct schedule_result *r,
			const struct schedule *s)
{
	struct arena a = {0};
	Ofc__V1__Schedule *h = schedule_header_msg(&a, s);
	Ofc__V1__Schedule *x = r && r->g ? schedule_extra_msg(&a, r) : NULL;

	json_schedule_fields(w, h, x);
	arena_free(&a);
}
