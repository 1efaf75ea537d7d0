/* LD_PRELOAD shim for the suites: refuses the first pthread_create called
 * from a thread named FAIL_THREAD_FROM (EAGAIN, as under a thread limit),
 * and says so on stderr, so a suite can show that a program copes with a
 * thread it could not have. Built by the suite that preloads it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static atomic_bool refused;
	const char *from = getenv("FAIL_THREAD_FROM");
	create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	char name[17] = "";

	if (from && !atomic_load(&refused) && prctl(PR_GET_NAME, name) == 0 &&
	    strcmp(name, from) == 0 && !atomic_exchange(&refused, true)) {
		fprintf(stderr, "fail_thread: refused a thread to %s\n", from);
		return EAGAIN;
	}
	return real(t, attr, fn, arg);
}
