/* libFuzzer: the state directory's readers (journal_parse, record_parse),
 * which recovery trusts. The first byte picks the reader (even: journal,
 * odd: state file); the rest is the file. Whatever is accepted holds no
 * entry twice and no port 0 (so recovery's check against the devices,
 * state_check, is what remains); a journal's phase is one ofc writes; its
 * and the record's moved ports are re-wirings (a host, two different
 * ports, no port twice).
 * Every rejection says the file is corrupt and how to move it aside. */
#include <stdlib.h>
#include <string.h>

#include "controller/reconfig/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_state(const struct device_state *s)
{
	struct device_cfg any = {.cls = s->nch ? DEV_RING : s->nxc ? DEV_SWITCH : DEV_HOSTS};
	struct device_cfg sw = {.cls = DEV_SWITCH, .ports = 32};
	struct ofc_error err = {0};

	if (state_check(s, &any, &err) < 0)
		abort();
	/* What ctl_recover does next, against a 32-port switch. */
	if (state_check(s, &sw, &err) < 0 && (!err.msg[0] || err.reason != OFC_R_GARBAGE))
		abort();
}

/* Accepted moves are re-wirings: a host, two different ports, no port in
 * two moves (checked here pairwise on small inputs). */
static void check_moves(const struct port_move *m, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!m[i].host || !*m[i].host || strchr(m[i].host, ' ') || m[i].from == m[i].to)
			abort();
		for (uint32_t k = 0; k < i && n <= 256; k++)
			if (strcmp(m[k].host, m[i].host) == 0 &&
			    (m[k].from == m[i].from || m[k].from == m[i].to ||
			     m[k].to == m[i].from || m[k].to == m[i].to))
				abort();
	}
}

static void refused(const struct ofc_error *err)
{
	if (err->code != OFC_E_RUNTIME || strcmp(err->file, "fuzz.journal") != 0 ||
	    !strstr(err->msg, "corrupt file") || !strstr(err->msg, "mv '"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ofc_error err = {0};

	if (size < 1 || size > 1 << 20)
		return 0;
	if (data[0] % 2 == 0) {
		struct journal j;

		if (journal_parse("fuzz.journal", data + 1, size - 1, &j, &err) == 0) {
			if (j.phase < JOURNAL_APPLYING || j.phase > JOURNAL_COMMITTING || !j.id ||
			    !j.meta.topology || !j.meta.config || j.version < 1)
				abort();
			check_moves(j.meta.moves, j.meta.nmoves);
			for (uint32_t i = 0; i < j.ndevs; i++) {
				check_state(&j.before[i]);
				check_state(&j.target[i]);
				for (uint32_t k = 0; k < i; k++)
					if (strcmp(j.names[k], j.names[i]) == 0)
						abort();
			}
			journal_free(&j);
		} else {
			refused(&err);
		}
	} else {
		struct ctl_record r;

		if (record_parse("fuzz.journal", "fab", data + 1, size - 1, &r, &err) == 0) {
			check_moves(r.moves, r.nmoves);
			for (uint32_t i = 0; i < r.ndevs; i++) {
				check_state(&r.dev_states[i]);
				for (uint32_t k = 0; k < i; k++)
					if (strcmp(r.dev_names[k], r.dev_names[i]) == 0)
						abort();
			}
			ctl_record_free(&r);
		} else {
			refused(&err);
		}
	}
	return 0;
}
