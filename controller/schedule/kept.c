/* A kept healthy run (struct schedule_kept) packed as an ofc.v1.KeptRun
 * and back: ofcd keeps the bytes between re-plans and hands them to the
 * planner process, which alone unpacks the MCF solution in them
 * (alltoall/mcf_warm_io.c), so ofcd holds no engine's state. */
#include "alltoall/alltoall.h"
#include "controller/schedule/schedule.h"
#include "proto/mcf.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t *schedule_kept_pack(const struct schedule_kept *k, size_t *len)
{
	Ofc__V1__KeptRun m = OFC__V1__KEPT_RUN__INIT;
	uint8_t *buf;

	m.algo = (char *)k->algo;
	m.has_time_us = m.has_mcf_s = m.has_warm = 1;
	m.time_us = k->time_us;
	m.mcf_s = k->mcf_s;
	m.warm.data = mcf_warm_pack(k->warm, &m.warm.len);
	*len = protobuf_c_message_get_packed_size(&m.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&m.base, buf);
	free(m.warm.data);
	return buf;
}

int schedule_kept_unpack(const uint8_t *buf, size_t len, struct schedule_kept *k,
			 struct ofc_error *err)
{
	Ofc__V1__KeptRun *m = ofc__v1__kept_run__unpack(NULL, len, buf);

	memset(k, 0, sizeof(*k));
	if (!m || !m->has_warm) {
		if (m)
			ofc__v1__kept_run__free_unpacked(m, NULL);
		return ofc_error_set(err, OFC_E_INPUT, "the kept healthy run does not unpack");
	}
	k->warm = mcf_warm_unpack(m->warm.data, m->warm.len, err);
	if (k->warm) {
		snprintf(k->algo, sizeof(k->algo), "%s", m->algo ? m->algo : "");
		k->time_us = m->time_us;
		k->mcf_s = m->mcf_s;
		k->bytes = mcf_warm_bytes(k->warm);
	}
	ofc__v1__kept_run__free_unpacked(m, NULL);
	return k->warm ? 0 : -1;
}
