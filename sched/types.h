/* sched/types.h — what other modules name of a schedule by value without
 * its API: the collective. The fabric model (controller/fabric/fabric.h)
 * names one per collective entry and workload phase and includes only
 * this, so the files that read a fabric do not compile against the
 * schedule type, the verifier and the engines. sched.h includes it. */
#ifndef OFC_SCHED_TYPES_H
#define OFC_SCHED_TYPES_H

enum sched_collective {
	SCHED_ALLGATHER = 1,
	SCHED_REDUCE_SCATTER = 2,
	SCHED_ALLREDUCE = 3,
	SCHED_ALLTOALL = 4,
	/* Rooted collectives (fluid/): the root's block to every node, and
	 * every node's input reduced at the root. Block id = the root. */
	SCHED_BROADCAST = 5,
	SCHED_REDUCE = 6,
};

#endif
