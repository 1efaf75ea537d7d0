#!/bin/sh
# The verifier against a reference commit's, on corrupted all-gathers and
# all-to-alls (verify_diff.c). From the repository root after `make build/ofc`:
#   bench/verify_diff/run.sh [REF [TRIALS [allgather]]]
# (REF main, 60 trials; `allgather`: the all-gathers alone).
# REF's sched/verify.c must build against this tree's sched/ headers.
set -e
REF=${1:-main}
TRIALS=${2:-60}
B=${BUILD:-build}
D=$B/verify_diff
CF="-std=c11 -D_GNU_SOURCE -O2 -g -I. -I$B/gen -I/usr/include/libnl3"
mkdir -p "$D"
git show "$REF:sched/verify.c" | sed 's/\bsched_verify\b/sched_verify_old/' >"$D/verify_old.c"
cc $CF -c "$D/verify_old.c" -o "$D/verify_old.o"
cc $CF -c bench/verify_diff/verify_diff.c -o "$D/verify_diff.o"
# This tree's verifier (on two threads from one transfer up:
# verify_diff.c sets par_min_xfers), keyed by block, then again keyed by
# node and block (A2A_BY_BLOCK).
for by in 1 0; do
	cc $CF -DA2A_BY_BLOCK=$by -c sched/verify.c -o "$D/verify_new$by.o"
	cc -O2 "$D/verify_diff.o" "$D/verify_new$by.o" "$D/verify_old.o" "$B/libofc.a" \
		-o "$D/verify_diff$by" -lyaml -lprotobuf-c -lnl-route-3 -lnl-genl-3 -lnl-3 \
		-lsystemd -llpsolve55 -lcolamd -ldl -lpthread -lm
done
echo "== by block"
"$D/verify_diff1" "$TRIALS" $3
[ "$3" = allgather ] && exit 0
echo "== by node and block (the all-to-alls)"
"$D/verify_diff0" "$TRIALS" alltoall
