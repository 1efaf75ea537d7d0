#!/bin/sh
# What every engine does at 4,096 and 16,384 nodes: built (wall
# seconds, peak RSS, transfers) or refused (the estimate), and that nothing
# is killed (exit 134 / 137). One markdown row per command.
#   sh bench/scale_engines.sh [OFC] [TIMEOUT_S]
OFC=${1:-build/ofc}
LIMIT=${2:-300}
S="$OFC schedule --size 1MiB --threads 1"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-scale.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "| command | exit | wall s | peak MiB | outcome |"
echo "|---|---|---|---|---|"
run() {
	/usr/bin/time -f "%e %M" -o "$TMP/time" timeout "$LIMIT" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	set -- $(tail -n 1 "$TMP/time")
	wall=$1
	mib=$(($2 / 1024))
	if [ "$rc" -eq 0 ]; then
		what=$(grep -oE 'verified +(yes|no)[^,]*|total steps +[0-9]+' "$TMP/out" | head -n 2 | tr '\n' ' ')
		what="built: $what"
	elif [ "$rc" -eq 124 ]; then
		what="stopped by timeout $LIMIT s"
	else
		what=$(grep -v '^usage' "$TMP/err" | head -n 1 | sed 's/|/\\|/g')
	fi
	echo "| \`$CMD\` | $rc | $wall | $mib | $what |"
}
c() {
	CMD="$*"
	run "$@"
}

for t in torus:64x64 hypercube:12 genkautz:4096,4; do
	for a in bfb ring bidir-ring recursive torus-rings; do
		c $S --topology $t --collective allreduce --algo $a
	done
done
for v in bandwidth latency; do
	c $S --topology torus:64x64 --collective allreduce --algo swing --variant $v
	c $S --topology torus:64x64 --collective allreduce --algo recursive-doubling --variant $v
done
c $S --topology torus:64x64 --collective allgather --algo recursive
for a in mcf direct sp-balanced; do
	c $S --topology torus:64x64 --collective alltoall --algo $a
done
c $S --topology torus:64x64 --collective allgather --algo bfb --format pb -o "$TMP/s.pb"
c $S --topology torus:64x64 --collective allgather --algo bfb --format msccl -o "$TMP/s.xml"
for a in optree ring ne onestage wrht; do
	c $OFC optree --nodes 4096 --wavelengths 64 --algo $a
done
c $OFC optree --nodes 4096 --wavelengths 64 --collective allreduce
c $OFC optree --nodes 4096 --wavelengths 64 --collective alltoall --algo onestage
# 16,384 nodes
c $S --topology torus:128x128 --collective allreduce --algo bfb
c $S --topology torus:128x128 --collective allreduce --algo swing
c $S --topology torus:128x128 --collective allreduce --algo ring
c $S --topology torus:128x128 --collective allgather --algo ring
c $S --topology hypercube:14 --collective allgather --algo recursive
c $OFC optree --nodes 16384 --wavelengths 64
c $OFC optree --nodes 16384 --wavelengths 64 --collective allreduce
c $OFC optree --nodes 16384 --wavelengths 64 --algo wrht
