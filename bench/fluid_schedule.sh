#!/bin/sh
# The fluid engine's allgather on model W (`ofc schedule
# examples/modelw/all-links-N.yaml --collective allgather [--hops 8]`), as a
# user runs it, by one or two builds in one run: per row R*, T, K, the
# transfers of Theorem 4's schedule, whether it is verified and at what
# cost, wall and CPU seconds (user + sys: the figure on a shared machine)
# and peak RSS (/usr/bin/time -v). With BEFORE, an older ofc, each row runs
# on it first: the ratio of the two on the same load. DIR: where the
# configs are (scripts/gen-modelw.py DIR with 64 and 128 in its SIZES
# writes the 512- and 1,024-GPU ones).
#
#   bench/fluid_schedule.sh [OFC [BEFORE]]   (SERVERS, HOPS, DIR to change the rows)
set -u
OFC=${1:-build/ofc}
BEFORE=${2:-}
SERVERS=${SERVERS:-"8 16 32"}
HOPS=${HOPS:-"8 search"}
DIR=${DIR:-examples/modelw}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() { # NAME OFC SERVERS HOPS
	h=""
	[ "$4" = search ] || h="--hops $4"
	# shellcheck disable=SC2086
	/usr/bin/time -v "$2" schedule "$DIR/all-links-$3.yaml" \
		--collective allgather $h --json >"$tmp/out" 2>"$tmp/err"
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/err")
	user=$(sed -n 's/.*User time (seconds): //p' "$tmp/err")
	sys=$(sed -n 's/.*System time (seconds): //p' "$tmp/err")
	peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/err")
	python3 - "$1" "$3" "$4" "$wall" "$user" "$sys" "$peak" "$tmp/out" <<'PY'
import json, sys
name, servers, hops, wall, user, syst, peak, out = sys.argv[1:]
m, s = wall.split(":")[-2:]
secs = float(m) * 60 + float(s)
cpu = float(user) + float(syst)
try:
    f = json.load(open(out))
    print("| %s (%d GPUs) | %s | %s | %.10g | %s | %s | %s | %s | %.2f | %.2f | %.0f |" % (
        servers, 8 * int(servers), hops, name, f.get("rstar"), f.get("hops"),
        f.get("chunks"), f.get("transfers"),
        "%.2f" % f["verified_cost"] if "verified_cost" in f else "NO",
        secs, cpu, int(peak) / 1024))
except Exception as e:
    print("| %s | %s | %s | failed: %s | | | | | %.2f | %.2f | %.0f |" % (
        servers, hops, name, e, secs, cpu, int(peak) / 1024))
PY
}

echo "load: $(uptime | sed 's/.*load average: //')"
echo "| servers | T | ofc | R* s/GB | T | K | transfers | verified cost | wall s | CPU s | peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $SERVERS; do
	for hops in $HOPS; do
		[ -n "$BEFORE" ] && row before "$BEFORE" "$n" "$hops"
		row after "$OFC" "$n" "$hops"
	done
done
echo "load: $(uptime | sed 's/.*load average: //')"
