#!/bin/sh
# The all-to-all MCF's default lowering on Cayley graphs of 512 to 4,096
# nodes, as a user runs it (`ofc schedule --topology SPEC --collective
# alltoall --size 1MiB`), by one or two builds in one run: per row the
# lowering the answer took, whether it is verified, theta, the whole
# schedule's transfers, wall seconds and peak RSS (/usr/bin/time -v). With
# BEFORE, an older ofc, each spec runs on it first: the ratio of the two
# in one run, on the same load.
#
#   bench/a2a_steps.sh [OFC [BEFORE]]      (SPECS to change the list)
set -u
OFC=${1:-build/ofc}
BEFORE=${2:-}
SPECS=${SPECS:-"torus:32x32 hypercube:10 torus:8x8x8 torus:64x64"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() { # NAME OFC SPEC
	/usr/bin/time -v "$2" schedule --topology "$3" --collective alltoall --size 1MiB --json \
		>"$tmp/out" 2>"$tmp/err"
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/err")
	peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/err")
	python3 - "$1" "$3" "$wall" "$peak" "$tmp/out" <<'PY'
import json, sys
name, spec, wall, peak, out = sys.argv[1:]
m, s = wall.split(":")[-2:]
secs = float(m) * 60 + float(s)
try:
    j = json.load(open(out))
    print("| %s | %s | %s | %s | %.9g | %s | %.2f | %.0f |" % (
        spec, name, j.get("lowering"), "yes" if j.get("verified") else "NO",
        j.get("theta", float("nan")), j.get("num_transfers"), secs, int(peak) / 1024))
except Exception as e:
    print("| %s | %s | failed | | | | %.2f | %.0f |" % (spec, name, secs, int(peak) / 1024))
PY
}

echo "load: $(uptime | sed 's/.*load average: //')"
echo "| topology | ofc | lowering | verified | theta | transfers | seconds | peak MB |"
echo "|---|---|---|---|---|---|---|---|"
for spec in $SPECS; do
	[ -n "$BEFORE" ] && row before "$BEFORE" "$spec"
	row after "$OFC" "$spec"
done
echo "load: $(uptime | sed 's/.*load average: //')"
