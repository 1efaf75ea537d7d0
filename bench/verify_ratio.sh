#!/bin/sh
# Generation against verification, one command a line.
# usage: [THREADS=N] [GAP=S] bench/verify_ratio.sh [OFC]   (default
# build/ofc, and ofc's own default threads: all CPUs; GAP: seconds to wait
# before each row, so that its generation, like its check, gets memory no
# process just freed: on this VM freed pages go back to the host after a
# second or two, and taking them again costs about 2 ms a MB); prints
# | ARGS | generate_s | verify_s | verify/gen | wall user sys peak-KiB | verified |
OFC=${1:-build/ofc}
TH=${THREADS:+--threads $THREADS}
T=$(mktemp)
trap 'rm -f "$T"' EXIT
while read -r ARGS; do
	[ -z "$ARGS" ] && continue
	[ -n "$GAP" ] && sleep "$GAP"
	out=$(/usr/bin/time -f '%e %U %S %M' -o "$T" $OFC schedule $ARGS $TH --size 1MiB --json 2>/dev/null)
	g=$(echo "$out" | grep -oE '"generate_s": [0-9.e-]+' | head -1 | cut -d' ' -f2)
	v=$(echo "$out" | grep -oE '"verify_s": [0-9.e-]+' | head -1 | cut -d' ' -f2)
	ok=$(echo "$out" | grep -oE '"verified": [a-z]+' | head -1 | cut -d' ' -f2)
	printf '| %s | %.2f | %.2f | %.2f | %s | %s |\n' "$ARGS" "$g" "$v" "$(awk -v v="$v" -v g="$g" 'BEGIN { print v / g }')" "$(cat "$T")" "$ok"
done <<'L'
--topology hypercube:12 --collective allreduce --algo bidir-ring
--topology hypercube:12 --collective allreduce --algo ring
--topology hypercube:12 --collective reduce-scatter --algo ring
--topology hypercube:12 --collective reduce-scatter --algo bidir-ring
--topology hypercube:12 --collective allgather --algo ring
--topology hypercube:12 --collective allgather --algo bidir-ring
--topology genkautz:4096,4 --collective allreduce --algo ring
--topology torus:64x64 --collective allreduce --algo bfb
--topology torus:64x64 --collective allgather --algo bfb
--topology hypercube:12 --collective allreduce --algo bfb
--topology hypercube:12 --collective allgather --algo bfb
--topology genkautz:4096,4 --collective allreduce --algo bfb
--topology genkautz:4096,4 --collective allgather --algo bfb
--topology torus:32x32 --collective allreduce --algo torus-rings
--topology torus:64x64 --collective allgather --algo recursive
--topology torus:32x32 --collective allreduce --algo swing --variant bandwidth
--topology torus:32x32 --collective allreduce --algo swing --variant latency
--topology torus:32x32 --collective allreduce --algo recursive-doubling --variant latency
--topology torus:32x32 --collective alltoall --algo mcf --lowering paths
--topology torus:32x32 --collective alltoall --algo mcf --lowering single
--topology torus:32x32 --collective alltoall --algo direct
--topology torus:32x32 --collective alltoall --algo sp-balanced
--topology hypercube:10 --collective alltoall --algo mcf --lowering paths
L
