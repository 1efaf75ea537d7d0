/* This machine's memory as the scale benchmarks meet it: the first touch
 * of a fresh 1 GiB mapping with MADV_HUGEPAGE and on 4 KiB pages (the
 * kernel zeroes every page it hands out), then reads and a second write
 * of memory already there. A large explicit schedule is written once by
 * its generator, fresh; its check reads it.
 *
 * The huge-page mapping is made twice: the second reuses the pages the
 * first one just unmapped. On a VM whose kernel reports free pages to
 * the host (page_reporting, virtio_balloon), the first comes from the
 * host at a fraction of the second's rate; so a process's peak memory,
 * not its instructions, can decide its time.
 *   build/bench/first_touch      prints GB/s for each */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
	static const char *const what[] = {"huge pages, fresh", "huge pages, just unmapped",
					   "4 KiB pages"};
	const size_t n = (size_t)1 << 30;

	for (int k = 0; k < 3; k++) {
		unsigned char *p =
		    mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		volatile unsigned long sum = 0;

		if (p == MAP_FAILED) {
			perror("first_touch: mmap");
			return 1;
		}
		if (k < 2)
			(void)madvise(p, n, MADV_HUGEPAGE);
		double t0 = now();
		memset(p, 1, n);
		double t1 = now();
		for (size_t i = 0; i < n; i += 64)
			sum += p[i];
		double t2 = now();
		memset(p, 2, n);
		double t3 = now();
		printf("%s: first write %.2f GB/s, read %.2f GB/s, second write %.2f GB/s\n",
		       what[k], (double)n / (t1 - t0) / 1e9, (double)n / (t2 - t1) / 1e9,
		       (double)n / (t3 - t2) / 1e9);
		munmap(p, n);
	}
	return 0;
}
