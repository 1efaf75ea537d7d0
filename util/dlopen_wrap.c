/* The programs link with -Wl,--wrap=dlopen (Makefile, LDLIBS_ALL): every
 * dlopen of their static objects comes here first.
 *
 * lp_solve (linked statically) looks for an optional optimised BLAS,
 * dlopen("libmyBLAS.so"), in every make_lp and every LU factorisation's
 * set-up. ofc ships none and wants none picked up from the library path:
 * the search failed about ten opens a model, nearly half a bfb-lp run's CPU on a
 * 16x16 torus (bench/results/bfb.md, "bfb-lp"), and held the loader's lock that
 * every solving thread took in turn. Its name is answered "absent" here
 * at once; lp_solve then runs its own BLAS, as it did when the search
 * failed. Every other name goes to the real dlopen. */
#include <dlfcn.h>
#include <string.h>

void *__real_dlopen(const char *file, int mode);
void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	const char *base = file ? strrchr(file, '/') : NULL;

	base = base ? base + 1 : file;
	if (base && strcmp(base, "libmyBLAS.so") == 0)
		return NULL;
	return __real_dlopen(file, mode);
}
