#!/bin/sh
# How long a command takes to start: `ofc --help` (and `ofcd --help`), run
# ROUNDS x RUNS times, by one or two builds taking turns in one run (the
# ratio holds when the machine's load drifts). Per row: the median over
# rounds of a run's wall milliseconds (a round's time over its runs; the
# shell's fork and exec are in both builds' figures alike), the ratio to
# BEFORE's, and the libraries the program loads (ldd).
#
#   bench/startup.sh [BUILD_DIR [BEFORE_BUILD_DIR]]   (ROUNDS, RUNS to change)
set -u
NEW=${1:-build}
OLD=${2:-}
ROUNDS=${ROUNDS:-9}
RUNS=${RUNS:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

round() { # PROGRAM: one round's wall ms per run
	t0=$(date +%s%N)
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		"$1" --help >/dev/null 2>&1
		i=$((i + 1))
	done
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / RUNS / 1000))"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'; }

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds of $RUNS runs"
printf '%-22s %10s %10s %8s %6s\n' program "ms (new)" "ms (old)" ratio libs
for p in ofc ofcd; do
	: >"$tmp/new" && : >"$tmp/old"
	r=0
	while [ "$r" -lt "$ROUNDS" ]; do
		[ -n "$OLD" ] && round "$OLD/$p" >>"$tmp/old"
		round "$NEW/$p" >>"$tmp/new"
		r=$((r + 1))
	done
	n=$(median "$tmp/new")
	o=-
	ratio=-
	if [ -n "$OLD" ]; then
		o=$(median "$tmp/old")
		ratio=$(awk -v a="$n" -v b="$o" 'BEGIN { printf "%.2f", a / b }')
	fi
	printf '%-22s %10s %10s %8s %6s\n' "$p --help" "$n" "$o" "$ratio" "$(ldd "$NEW/$p" | wc -l)"
done
