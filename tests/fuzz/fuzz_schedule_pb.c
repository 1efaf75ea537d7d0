/* libFuzzer: a schedule read back from protobuf (schedule_pb_parse and
 * schedule_pb_decode, what `ofc testbed run --schedule` reads). What the
 * walk counts is what the decode builds, every transfer within the
 * schedule's nodes; the schedule written again (schedule_write_pb) reads
 * back to the same transfers; the verifier and the MSCCL writer (ofc only
 * writes MSCCL: there is no reader of it to fuzz) take it without
 * crashing. Every rejection names the file, and is bad input unless
 * protobuf-c ran out of memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/export/export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(const struct ofc_error *err)
{
	if (strcmp(err->file, "fuzz.pb") != 0 || !err->msg[0] ||
	    (err->code != OFC_E_INPUT && !strstr(err->msg, "out of memory")))
		abort();
}

/* s written and read back: the same steps and transfers. */
static void round_trip(const struct schedule *s)
{
	struct schedule_pb f;
	struct schedule back;
	struct ofc_error err = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem || schedule_write_pb(s, mem, &err) < 0)
		abort();
	fclose(mem);
	if (schedule_pb_parse("fuzz.pb", (const uint8_t *)buf, len, NULL, &f, &err) < 0 ||
	    schedule_pb_decode(&f, NULL, &back, &err) < 0)
		abort();
	schedule_pb_close(&f);
	if (back.nsteps != s->nsteps || back.nxfers != s->nxfers ||
	    memcmp(back.step_start, s->step_start, (s->nsteps + 1) * sizeof(uint32_t)) ||
	    (s->nxfers && memcmp(back.xfers, s->xfers, s->nxfers * sizeof(struct xfer))))
		abort();
	sched_free(&back);
	free(buf);
}

static void others(const struct schedule *s)
{
	struct verify_report vr;
	struct msccl_info mi;
	struct ofc_error err = {0};
	FILE *null = fopen("/dev/null", "w");

	(void)sched_verify(s, &(struct verify_opts){.threads = 1}, &vr);
	if (null && schedule_msccl_memory(s) < (64u << 20) &&
	    schedule_write_msccl(s, MSCCL_EXECUTOR, null, &mi, &err) < 0 &&
	    (!err.msg[0] || err.code == OFC_OK))
		abort();
	if (null)
		fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct schedule_pb f;
	struct schedule s;
	struct ofc_error err = {0};

	if (size > 1 << 20)
		return 0;
	if (schedule_pb_parse("fuzz.pb", data, size, NULL, &f, &err) < 0) {
		refused(&err);
		return 0;
	}
	if (f.nodes < 2 || f.nodes > SCHED_MAX_NODES || f.nxfers > f.len ||
	    f.max_step_xfers > f.nxfers)
		abort();
	if (schedule_pb_decode(&f, NULL, &s, &err) < 0) {
		refused(&err);
		schedule_pb_close(&f);
		return 0;
	}
	if (s.nsteps != f.nsteps || s.nxfers != f.nxfers || s.nodes != f.nodes ||
	    s.step_start[s.nsteps] != s.nxfers)
		abort();
	for (size_t k = 0; k < s.nxfers; k++)
		if (s.xfers[k].src >= s.nodes || s.xfers[k].dst >= s.nodes)
			abort();
	schedule_pb_close(&f);
	round_trip(&s);
	if (s.nodes <= 64 && s.nxfers <= 4096 && s.nsteps <= 4096)
		others(&s);
	sched_free(&s);
	return 0;
}
