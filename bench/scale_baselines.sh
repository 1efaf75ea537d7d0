#!/bin/sh
# The baselines and recursive doubling at 4,096 and 16,384 nodes
# after their symmetry-reduced forms (reduced by themselves above 1,024
# nodes where they have one, else explicit). One markdown row per command:
# wall and user CPU seconds and peak RSS from /usr/bin/time -f '%e %U %M',
# the verdict and transfer count from the output, the 1-minute load
# average (uptime) just before the command.
#   sh bench/scale_baselines.sh [OFC] [TIMEOUT_S]
OFC=${1:-build/ofc}
LIMIT=${2:-240}
S="$OFC schedule --size 1MiB --threads 1"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-scale.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "| command | exit | wall s | CPU s | peak MiB | outcome | load |"
echo "|---|---|---|---|---|---|---|"
c() {
	load=$(uptime | sed 's/.*load average: \([0-9.]*\).*/\1/')
	/usr/bin/time -f "%e %U %M" -o "$TMP/time" timeout "$LIMIT" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	set -- "$@"
	cmd="$*"
	set -- $(tail -n 1 "$TMP/time")
	wall=$1
	cpu=$2
	mib=$(($3 / 1024))
	if [ "$rc" -eq 0 ]; then
		what=$(grep -oE 'verified +(yes|no)[^,]*' "$TMP/out" | head -n 1)
		red=$(grep -oE 'reduced +[^,]*program[^(]*' "$TMP/out" | head -n 1 | sed 's/  */ /g')
		what=$(echo "$what${red:+; $red}" | sed 's/  */ /g; s/ *$//')
		if [ -z "$what" ]; then # a comparison table: its rows
			what="comparison: $(grep -cE ' yes( |$)' "$TMP/out") rows verified yes, $(grep -c ' n/a: ' "$TMP/out") n/a"
		fi
	elif [ "$rc" -eq 124 ]; then
		what="stopped by timeout $LIMIT s"
	else
		what=$(grep -v '^usage' "$TMP/err" | head -n 1 | sed 's/|/\\|/g')
	fi
	echo "| \`$cmd\` | $rc | $wall | $cpu | $mib | $what | $load |"
}

for t in torus:64x64 hypercube:12; do
	for a in ring bidir-ring recursive torus-rings bucket; do
		c $S --topology $t --collective allreduce --algo $a
	done
done
for v in bandwidth latency; do
	c $S --topology torus:64x64 --collective allreduce --algo swing --variant $v
	c $S --topology torus:64x64 --collective allreduce --algo recursive-doubling --variant $v
done
c $S --topology torus:64x64 --collective allgather --algo recursive
c $S --topology hypercube:12 --collective allgather --algo recursive
for t in torus:64x64 hypercube:12; do
	for a in direct sp-balanced; do
		c $S --topology $t --collective alltoall --algo $a
	done
	c $S --topology $t --collective allreduce --algo all
done
c $S --topology torus:64x64 --collective allreduce --algo swing-all
# 16,384 nodes
for a in ring bidir-ring torus-rings; do
	c $S --topology torus:128x128 --collective allreduce --algo $a
done
c $S --topology torus:128x128 --collective allgather --algo ring
c $S --topology torus:128x128 --collective allreduce --algo recursive-doubling --variant bandwidth
c $S --topology hypercube:14 --collective allgather --algo recursive
c $S --topology hypercube:14 --collective allreduce --algo recursive
