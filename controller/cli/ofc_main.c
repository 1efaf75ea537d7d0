/* ofc: the operator's command line. Everything is in libofc. */
#include "controller/cli/cli.h"

#include <stdlib.h> /* __GLIBC__ */
#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char **argv)
{
#ifdef __GLIBC__
	/* Keep freed memory for the next allocation rather than give it back
	 * to the kernel and fault it in again: the LP solvers allocate and
	 * free their factorisation and matrix copies at every re-solve, and
	 * glibc's defaults (blocks past a moving threshold mapped alone, the
	 * heap's top trimmed past twice it) made the 256-GPU model W allgather
	 * fault 76,000 pages in, a third of its CPU time (16,000 so). Blocks
	 * of 4 MiB and more are still mapped alone and given back when freed:
	 * a higher threshold (32 MiB) saved few more faults and raised the
	 * genkautz:1024,4 MCF's peak from 380 to 525 MB. */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	/* One heap for every thread: the request's worker threads (the
	 * fluid engine's max flows and the period's checks) each got an
	 * arena of their own, whose freed blocks the others cannot reuse,
	 * so the peak depended on which thread ran what: the 1,024-GPU
	 * model W allgather peaked at 210, 242 or 268 MB from one build,
	 * 209-210 MB in every run with one arena, at the same CPU time
	 * (genkautz:1024,4's MCF with 2 threads: 438 -> 372 MB). */
	mallopt(M_ARENA_MAX, 1);
#endif
	return ofc_cli_main(argc, argv);
}
