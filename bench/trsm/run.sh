#!/bin/sh
# The dense tail of Clp's factorisation with a faster dtrsm of the same
# bits (trsm.c, a prototype loaded with LD_PRELOAD): first memcmp against
# the machine's BLAS on random solves (check.c), then the gk MCF on 1
# thread with and without it: the same answer (its summary less timings)
# and dtrsm's share of perf's samples.
#
#   bench/trsm/run.sh            OFC=build/ofc  BLAS=libblas.so.3
set -u
cd "$(dirname "$0")/../.." || exit 1
OFC=${OFC:-build/ofc}
BLAS=${BLAS:-libblas.so.3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-trsm.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cc -O2 -fPIC -shared -Wall -o "$tmp/trsm.so" bench/trsm/trsm.c -ldl || exit 1
cc -O2 -Wall -o "$tmp/check" bench/trsm/check.c -ldl || exit 1
"$tmp/check" "$BLAS" "$tmp/trsm.so" || exit 1
echo "load: $(uptime | sed 's/.*load average: //')"
for pre in "" "$tmp/trsm.so"; do
	LD_PRELOAD=$pre perf record -q -F 499 -o "$tmp/p.data" "$OFC" schedule \
		--topology genkautz:1024,4 --collective alltoall --lowering paths --size 1MiB \
		--threads 1 >"$tmp/out" 2>/dev/null || exit 1
	share=$(perf report -i "$tmp/p.data" -s sym --stdio 2>/dev/null |
		awk '/\] dtrsm_/ { s += $1 } END { printf "%.1f%%", s }')
	sum=$(sed -E 's/[0-9.]+ s\)/<T> s)/; s/iterations, [0-9.]+ s/iterations, <T> s/' "$tmp/out" | md5sum | cut -c1-12)
	if [ -n "$pre" ]; then which=prototype; else which=library; fi
	echo "$which: dtrsm_ $share of the samples, answer $sum"
done
