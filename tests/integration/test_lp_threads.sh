#!/bin/sh
# lp_solve under ofc's threads. BFB's workers each solve their own LPs with
# lp_solve, whose first make_lp sets process-wide BLAS calls: made by two
# threads at once, one could call a null pointer (rwa/lp.c makes the
# process's first model under a lock). valgrind's race checker (helgrind)
# sees into lp_solve, a static library ThreadSanitizer's build does not
# instrument: it must report nothing but lpsolve.supp's benign pair. And
# lp_solve's search for an optional BLAS at every model (libmyBLAS.so on
# the library path) is answered "absent" without looking: a library of
# that name put on LD_LIBRARY_PATH is never loaded.
SUITE=lp_threads
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --topology torus:4x4 --collective allreduce --size 1MiB --algo bfb-lp --threads 2"

# A library named as lp_solve's optional BLAS, which says when it is loaded
mkdir "$TMP/lib"
printf '#include <stdio.h>\n__attribute__((constructor)) static void loaded(void) { FILE *f = fopen("%s/loaded", "w"); if (f) fclose(f); }\n' \
	"$TMP" >"$TMP/blas.c"
if ${CC:-cc} -shared -fPIC "$TMP/blas.c" -o "$TMP/lib/libmyBLAS.so" 2>"$TMP/cc.err"; then
	LD_LIBRARY_PATH="$TMP/lib" $S >"$TMP/a.out" 2>"$TMP/a.err" &&
		[ ! -e "$TMP/loaded" ] && ok ||
		bad "a libmyBLAS.so on LD_LIBRARY_PATH was loaded (or the run failed)" "$(cat "$TMP/a.err")"
else
	bad "cc could not build the test's library" "$(cat "$TMP/cc.err")"
fi

if [ -n "${SAN:-}" ]; then
	echo "lp_threads: helgrind skipped: valgrind does not run a sanitizer build's programs"
elif ! command -v valgrind >/dev/null; then
	bad "no valgrind (scripts/install-deps.sh test installs it)"
else
	# --fair-sched: the two workers take turns, so both make their
	# first models while the other's is being made
	valgrind --tool=helgrind --fair-sched=yes --error-exitcode=3 \
		--suppressions="$(dirname "$0")/lpsolve.supp" $S >"$TMP/hg.out" 2>"$TMP/hg.err"
	rc=$?
	[ $rc -eq 0 ] && ok || bad "helgrind found races in a two-thread BFB run (exit $rc)" \
		"$(grep -A12 'Possible data race' "$TMP/hg.err" | head -40)"
	$S >"$TMP/plain.out" && cmp -s "$TMP/plain.out" "$TMP/hg.out" && ok ||
		bad "the run under helgrind answered differently"
fi
finish
