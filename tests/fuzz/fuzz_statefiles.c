/* libFuzzer: ofcd's line files in the state directory, the
 * failures reported (FABRIC.failed: failures_parse) and the ports moved
 * onto spares (FABRIC.rewired: moves_parse, against a fabric of 16 hosts
 * with 5 ports) and the switch ports drained (FABRIC.drained:
 * drained_parse). The first byte picks the file (2 mod 3: .drained; else
 * even: .failed, odd: .rewired); the rest is its text. What is accepted is what ofcd writes:
 * items of the names a config may have, each once (a field after one that
 * this ofcd does not know, a newer one's, left out); moves of the fabric's
 * hosts, two different ports of the host, no port in two moves; and what
 * ofcd would write for it reads back the same. Every refusal names the
 * file, a line, and the mv that sets it aside. */
#include <stdlib.h>
#include <string.h>

#include "controller/config/config.h"
#include "controller/ofcd/worker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char yaml[] = "name: simfab\n"
			   "hosts: {count: 16, prefix: h, ports: 5}\n"
			   "switches:\n"
			   "  - {name: ocs0, type: ocs, ports: 80}\n"
			   "wiring: {pattern: sequential, switches: [ocs0]}\n"
			   "topology: torus:4x4\n";

/* Built once: the fuzzer runs many inputs in one process. */
static struct fabcfg *config(void)
{
	static struct fabcfg *cfg;
	struct ofc_error err = {0};
	struct fabric *f;

	if (!cfg) {
		if (config_parse("fuzz.yaml", yaml, strlen(yaml), &f, &err) < 0 ||
		    fabric_validate(f, &err) < 0)
			abort();
		cfg = fabcfg_new(f, yaml, strlen(yaml), "fuzz.yaml", NULL);
	}
	return cfg;
}

static void refused(const struct ofc_error *err, const char *path)
{
	if (err->code != OFC_E_RUNTIME || strcmp(err->file, path) != 0 || err->line < 1 ||
	    !strstr(err->msg, "the file is damaged") || !strstr(err->msg, "`mv "))
		abort();
}

static void check_failures(struct ofcd *d)
{
	struct strbuf sb = STRBUF_INIT;
	struct ofc_error err = {0};
	uint32_t n = d->w->nreported;

	if (n > FAIL_MAX_ITEMS)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		if (!failure_item_ok(d->w->reported[i]))
			abort();
		for (uint32_t k = 0; k < i && n <= 256; k++)
			if (strcmp(d->w->reported[k], d->w->reported[i]) == 0)
				abort();
		sb_printf(&sb, "%s\n", d->w->reported[i]);
	}
	/* As failures_save writes them: read back, the same set. */
	char **was = d->w->reported;
	d->w->reported = NULL;
	d->w->nreported = 0;
	if (failures_parse(d, "fuzz.failed", sb.buf ? sb.buf : "", sb.len, &err) < 0 ||
	    d->w->nreported != n)
		abort();
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(was[i], d->w->reported[i]) != 0)
			abort();
	strv_free(was, n);
	sb_free(&sb);
}

static void check_moves(struct ofcd *d)
{
	const struct fabric *f = d->w->cfg->f;
	struct strbuf sb = STRBUF_INIT;
	struct ofc_error err = {0};
	uint32_t n = d->w->nmoves;

	if (n > FAIL_MAX_ITEMS)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		const struct port_move *m = &d->w->moves[i];
		int h = fabric_find_host(f, m->host);

		if (h < 0 || m->from >= f->hosts[h].ports || m->to >= f->hosts[h].ports ||
		    m->from == m->to)
			abort();
		for (uint32_t k = 0; k < i; k++)
			if (strcmp(d->w->moves[k].host, m->host) == 0 &&
			    (d->w->moves[k].from == m->from || d->w->moves[k].from == m->to ||
			     d->w->moves[k].to == m->from || d->w->moves[k].to == m->to))
				abort();
		sb_printf(&sb, "%s %u %u\n", m->host, m->from, m->to);
	}
	/* As moves_save writes them: read back, the same moves. */
	struct port_move *was = d->w->moves;
	d->w->moves = NULL;
	d->w->nmoves = 0;
	if (moves_parse(d, "fuzz.rewired", sb.buf ? sb.buf : "", sb.len, &err) < 0 ||
	    d->w->nmoves != n)
		abort();
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(was[i].host, d->w->moves[i].host) != 0 ||
		    was[i].from != d->w->moves[i].from || was[i].to != d->w->moves[i].to)
			abort();
	for (uint32_t i = 0; i < n; i++)
		free(was[i].host);
	free(was);
	moves_clear(d);
	sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ofcd d;
	struct ofcd_worker w;
	struct ofc_error err = {0};
	char *text;

	if (size < 1 || size > 1 << 20)
		return 0;
	memset(&d, 0, sizeof(d));
	memset(&w, 0, sizeof(w));
	d.w = &w;
	d.w->cfg = config();
	text = xmalloc(size);
	memcpy(text, data + 1, size - 1);
	if (data[0] % 3 == 2) {
		/* FABRIC.drained: parsed whole, or refused and emptied */
		if (drained_parse(&d, "fuzz.drained", text, size - 1, &err) < 0 &&
		    (refused(&err, "fuzz.drained"), d.w->ndrained))
			abort();
		drained_clear(&d);
	} else if (data[0] % 2 == 0) {
		if (failures_parse(&d, "fuzz.failed", text, size - 1, &err) == 0)
			check_failures(&d);
		else if (refused(&err, "fuzz.failed"), d.w->nreported)
			abort(); /* emptied on error */
		strv_free(d.w->reported, d.w->nreported);
	} else {
		if (moves_parse(&d, "fuzz.rewired", text, size - 1, &err) == 0)
			check_moves(&d);
		else if (refused(&err, "fuzz.rewired"), d.w->nmoves)
			abort();
		moves_clear(&d);
	}
	free(text);
	return 0;
}
