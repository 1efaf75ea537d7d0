#!/bin/sh
# The verifier against a reference commit's, on corrupted all-gathers and
# all-to-alls (verify_diff.c). From the repository root after `make build/ofc`:
#   bench/verify_diff/run.sh [REF [TRIALS [allgather]]]
# (REF main, 60 trials; `allgather`: the all-gathers alone).
# REF's verifier (sched/verify*.c, and its verify_internal.h where it has
# one) must build against this tree's other sched/ headers.
set -e
REF=${1:-main}
TRIALS=${2:-60}
B=${BUILD:-build}
D=$B/verify_diff
CF="-std=c11 -D_GNU_SOURCE -O2 -g -I. -I$B/gen -I/usr/include/libnl3"
mkdir -p "$D"
# the libraries the programs link (the Makefile's LDLIBS_ALL)
LIBS=$(printf 'print-libs:\n\t@echo $(LDLIBS_ALL)\n' | make -s -f Makefile -f - print-libs)
# REF's verifier files, built apart and joined into one object whose only
# global is sched_verify, renamed sched_verify_old (the rest local: this
# tree's verifier defines the same names).
rm -rf "$D/old"
mkdir -p "$D/old/sched"
# (not the check by symmetry, verify_reduced*: another verifier)
for f in $(git ls-tree --name-only "$REF" sched/ | grep '^sched/verify' | grep -v '^sched/verify_reduced'); do
	git show "$REF:$f" >"$D/old/$f"
done
for f in "$D"/old/sched/verify*.c; do
	cc $CF -I"$D/old" -c "$f" -o "${f%.c}.o"
done
ld -r "$D"/old/sched/verify*.o -o "$D/verify_old_all.o"
objcopy --redefine-sym sched_verify=sched_verify_old \
	--keep-global-symbol=sched_verify_old "$D/verify_old_all.o" "$D/verify_old.o"
cc $CF -c bench/verify_diff/verify_diff.c -o "$D/verify_diff.o"
# This tree's verifier (on two threads from one transfer up:
# verify_diff.c sets par_min_xfers), keyed by block, then again keyed by
# node and block (A2A_BY_BLOCK).
for by in 1 0; do
	objs=
	for f in sched/verify*.c; do
		case $f in *verify_reduced*) continue ;; esac
		o="$D/new$by-$(basename "${f%.c}").o"
		cc $CF -DA2A_BY_BLOCK=$by -c "$f" -o "$o"
		objs="$objs $o"
	done
	cc -O2 "$D/verify_diff.o" $objs "$D/verify_old.o" "$B/libofc.a" \
		-o "$D/verify_diff$by" $LIBS
done
echo "== by block"
"$D/verify_diff1" "$TRIALS" $3
[ "$3" = allgather ] && exit 0
echo "== by node and block (the all-to-alls)"
"$D/verify_diff0" "$TRIALS" alltoall
