#!/bin/sh
# The fluid engine's model W allgathers (`ofc schedule
# examples/modelw/all-links-N.yaml --collective allgather`) on 1 and 2
# threads, by one or two builds in one run, each row right after the other
# so they share the load: wall and CPU (user + system) seconds, peak RSS
# (GNU time), and whether the answer is the first row's of its size (the
# summary less its timings: R*, the objective, the cost to the last digit).
#
#   bench/fluid_threads.sh [OFC [BEFORE]]   (SERVERS, THREADS to change the rows)
#
# Compare ratios within one run (2 threads against 1, after against
# before), not times across runs: the load is printed before and after.
set -u
OFC=${1:-build/ofc}
BEFORE=${2:-}
SERVERS=${SERVERS:-"8 16 32"}
THREADS=${THREADS:-"1 2"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

masked() {
	sed -E 's/"(generate_s|verify_s|[a-z_]*seconds|seconds_[a-z_]*)": *[0-9.e+-]+/"\1": <T>/g' "$1"
}

row() { # NAME OFC SERVERS THREADS
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$2" schedule \
		"examples/modelw/all-links-$3.yaml" --collective allgather --threads "$4" --json \
		>"$tmp/out" 2>"$tmp/err"
	read -r wall user sys peak <"$tmp/time"
	masked "$tmp/out" >"$tmp/m"
	[ -s "$tmp/ref.$3" ] || cp "$tmp/m" "$tmp/ref.$3"
	if cmp -s "$tmp/ref.$3" "$tmp/m"; then same=yes; else same=NO; fi
	python3 - "$1" "$3" "$4" "$wall" "$user" "$sys" "$peak" "$same" "$tmp/out" <<'PY'
import json, sys
name, servers, threads, wall, user, sys_, peak, same, out = sys.argv[1:]
try:
    f = json.load(open(out))
    ans = "%.10g | %.6f | %s" % (f["rstar"], f["objective"],
                                 "%.6f" % f["verified_cost"] if "verified_cost" in f else "NO")
except Exception as e:
    ans = "failed: %s | |" % e
print("| %d | %s | %s | %s | %.2f | %.2f | %.0f | %s |" % (
    8 * int(servers), name, threads, ans, float(wall), float(user) + float(sys_),
    int(peak) / 1024, same))
PY
}

echo "load: $(uptime | sed 's/.*load average: //')"
echo "| GPUs | ofc | threads | R* s/GB | objective | verified cost | wall s | CPU s | peak MB | same answer |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in $SERVERS; do
	for t in $THREADS; do
		[ -n "$BEFORE" ] && row before "$BEFORE" "$n" "$t"
		row after "$OFC" "$n" "$t"
	done
done
echo "load: $(uptime | sed 's/.*load average: //')"
