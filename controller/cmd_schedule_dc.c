/* ofc schedule on a direct-connect topology: not built yet (the BFB issue
 * builds it). */
#include "controller/cli.h"

int schedule_direct(struct schedule_request *req)
{
	fprintf(stderr, "ofc schedule: %s: schedules on direct-connect topologies are not built "
			"yet\n",
		req->graph->spec);
	return 1;
}
