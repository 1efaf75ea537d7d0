/* MPICH's own collective on the testbed's hosts and links, beside ofc's
 * schedules (`ofc testbed run --mpi`, ofcd's TestbedRun mpi): the baseline
 * a lab compares a schedule with, run where the schedules run. */
#include "controller/testbed/testbed.h"

#include <math.h>
#include <stdio.h>

#include "exec/exec.h"

/* Timed collectives after the warm-up; their mean is the run's time. */
#define MPI_ITERATIONS 3

/* UCX picks its address by device, so each host gets its address on a
 * device of its own (NETNS_HOST_IFACE) for the run; the bytes still leave
 * by the circuits. The devices go again whatever happened. */
int testbed_run_mpi(const struct testbed_net *t, enum sched_collective coll, uint64_t size,
		    uint16_t port, double timeout, struct testbed_run *r, struct ofc_error *err)
{
	struct exec_net net;
	struct exec_mpi_opts o = {.collective = sched_collective_name(coll),
				  .device = NETNS_HOST_IFACE,
				  .size = size,
				  .iterations = MPI_ITERATIONS,
				  .timeout = timeout};
	struct exec_mpi_result x;
	double before, after;
	uint32_t h = 0;

	*r = (struct testbed_run){.predicted = NAN, .circuit_bytes = -1, .mpi = true};
	for (; h < t->nhosts; h++)
		if (netns_host_iface(t->netns[h], t->host_addr[h], true, err) < 0)
			break;
	if (h == t->nhosts) {
		testbed_exec_net(t, port, &net);
		before = testbed_circuit_bytes(t);
		if (exec_mpi_run(&net, &o, &x, err) == 0) {
			after = testbed_circuit_bytes(t);
			r->ran = true;
			r->measured = r->res.seconds = x.seconds;
			r->data_ok = r->res.data_ok = x.data_ok;
			r->res.checked_elements = x.checked_elements;
			r->res.bad_elements = x.bad_elements;
			if (!x.data_ok)
				snprintf(r->res.first_bad, sizeof(r->res.first_bad),
					 "(the ranks count them; MPICH gave a wrong result)");
			r->mpi_finalize_hung = x.finalize_hung;
			/* (the warm-up's bytes crossed too) */
			r->circuit_bytes = before >= 0 && after >= 0
					       ? (after - before) / (MPI_ITERATIONS + 1)
					       : -1;
		}
	}
	for (uint32_t k = 0; k < t->nhosts; k++)
		netns_host_iface(t->netns[k], t->host_addr[k], false, &(struct ofc_error){0});
	return r->ran ? 0 : -1;
}
