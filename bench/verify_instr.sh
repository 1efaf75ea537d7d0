#!/bin/sh
# Generation against verification in instructions, which this VM's timings are too noisy
# for (its first touch of memory runs at about 1 GB/s, and a pass over the
# same schedule took 0.03 s or 0.9 s from one run to the next):
# callgrind's count of the instructions in sched_verify (inclusive) and in
# the rest of the run (generation, pricing, startup), one thread, for each
# binary given (default build/ofc), at sizes callgrind takes in seconds.
#   bench/verify_instr.sh [OFC ...]
# prints | ARGS | OFC | verify Minstr | rest Minstr | verify/rest |
[ $# -eq 0 ] && set -- build/ofc
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
while read -r ARGS; do
	[ -z "$ARGS" ] && continue
	for OFC in "$@"; do
		valgrind --tool=callgrind --callgrind-out-file="$T/cg" $OFC schedule $ARGS \
			--size 1MiB --threads 1 --json >/dev/null 2>&1 || { echo "| $ARGS | $OFC | failed |"; continue; }
		callgrind_annotate --inclusive=yes "$T/cg" 2>/dev/null | awk -v a="$ARGS" -v o="$OFC" '
			/PROGRAM TOTALS/ { gsub(",", "", $1); tot = $1 }
			/:sched_verify / { gsub(",", "", $1); ver = $1 }
			END { printf "| %s | %s | %.0f | %.0f | %.2f |\n", a, o, ver / 1e6, (tot - ver) / 1e6, ver / (tot - ver) }'
	done
done <<'L'
--topology hypercube:10 --collective allreduce --algo ring
--topology hypercube:10 --collective reduce-scatter --algo bidir-ring
--topology hypercube:10 --collective allgather --algo bidir-ring
--topology hypercube:10 --collective allreduce --algo bfb
--topology genkautz:1024,4 --collective allgather --algo bfb
--topology torus:16x16 --collective allreduce --algo torus-rings
--topology torus:16x16 --collective allreduce --algo swing --variant bandwidth
--topology torus:16x16 --collective allreduce --algo swing --variant latency
--topology torus:16x16 --collective allreduce --algo recursive-doubling --variant latency
--topology torus:32x32 --collective allgather --algo recursive
--topology torus:16x16 --collective alltoall --algo mcf --lowering paths
L
