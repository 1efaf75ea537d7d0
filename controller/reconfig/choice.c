/* What frees a choice among targets (choose.c makes it): apart from the
 * choosing, so that a program that frees reconfigure_run's results but
 * never chooses (ofcd) links no pricing: neither the schedule pipeline nor
 * the finder (scripts/check-engines.py). */
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>

void ctl_candidate_free(struct ctl_candidate *k)
{
	graph_free(k->g);
	port_map_free(&k->pm);
	free(k->circuits);
	k->g = NULL;
	k->circuits = NULL;
}

void ctl_choice_free(struct ctl_choice *ch)
{
	for (uint32_t i = 0; i < ch->n; i++)
		ctl_candidate_free(&ch->cand[i]);
	free(ch->cand);
	memset(ch, 0, sizeof(*ch));
}
