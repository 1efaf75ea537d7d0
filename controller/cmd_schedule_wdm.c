/* ofc schedule on a WDM ring: not built yet (the OpTree issue builds it). */
#include "controller/cli.h"

int schedule_wdm(struct schedule_request *req)
{
	fprintf(stderr, "ofc schedule: %s: schedules on WDM rings are not built yet\n",
		req->file);
	return 1;
}
