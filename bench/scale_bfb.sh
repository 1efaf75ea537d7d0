#!/bin/sh
# BFB at scale: `ofc schedule --algo bfb` on hypercubes, square
# tori and generalized Kautz graphs of N = 256 ... 4096 nodes, allgather and
# allreduce. Per row: transfers, generation and verification seconds (the
# summary's generate_s / verify_s), export seconds (--format pb -o FILE: the
# wall time of that run less the wall time of the --json run), peak RSS of
# the --json run; then per series the growth exponent (least squares of
# log time on log N) of transfers, generation and verification.
#
#   bench/scale_bfb.sh [OFC [OLD_OFC]]
#
# With OLD_OFC (e.g. the previous main built elsewhere) every row is run
# on both and the old figures are printed beside the new. Runs one thread
# (--threads 1): on a shared machine a second thread only adds noise; each
# figure is the least of REPS runs (default 2) for the same reason.
set -u
NEW=${1:-build/ofc}
OLD=${2:-}
SIZES=${SIZES:-"256 512 1024 2048 4096"}
REPS=${REPS:-2}
COLLS=${COLLS:-"allgather allreduce"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/scale_lib.sh"

# BIN SPEC COLL -> "transfers gen verify export peak_mib" (or "- - - - -"),
# the least of REPS runs each
run() {
	: >"$tmp/reps"
	i=0
	while [ $i -lt "$REPS" ]; do
		i=$((i + 1))
		/usr/bin/time -f '%e %M' -o "$tmp/t1" "$1" schedule --topology "$2" --collective "$3" \
			--algo bfb --size 1MiB --threads 1 --json >"$tmp/sum" 2>/dev/null
		/usr/bin/time -f '%e %M' -o "$tmp/t2" "$1" schedule --topology "$2" --collective "$3" \
			--algo bfb --size 1MiB --threads 1 --format pb -o "$tmp/out.pb" >/dev/null 2>&1
		rm -f "$tmp/out.pb"
		python3 - "$tmp/sum" "$tmp/t1" "$tmp/t2" >>"$tmp/reps" <<'EOF'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
    w1, kb = open(sys.argv[2]).read().split()[-2:]
    w2 = open(sys.argv[3]).read().split()[-2]
    print(s["num_transfers"], s["generate_s"], s["verify_s"], float(w2) - float(w1), int(kb) // 1024)
except Exception:
    pass
EOF
	done
	python3 - "$tmp/reps" <<'EOF'
import sys
r = [l.split() for l in open(sys.argv[1]) if l.strip()]
if not r:
    print("- - - - -")
else:
    print(r[0][0], "%.3f" % min(float(x[1]) for x in r), "%.3f" % min(float(x[2]) for x in r),
          "%.2f" % max(0.0, min(float(x[3]) for x in r)), min(int(x[4]) for x in r))
EOF
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
if [ -n "$OLD" ]; then
	echo "| topology | N | collective | transfers | generate s | verify s | export s (pb) | peak MiB | old generate s | old verify s | old peak MiB |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
else
	echo "| topology | N | collective | transfers | generate s | verify s | export s (pb) | peak MiB |"
	echo "|---|---|---|---|---|---|---|---|"
fi
: >"$tmp/series"
for fam in hypercube torus genkautz; do
	for coll in $COLLS; do
		for n in $SIZES; do
			sp=$(spec "$fam" "$n")
			# shellcheck disable=SC2046
			set -- $(run "$NEW" "$sp" "$coll")
			line="| $sp | $n | $coll | $1 | $2 | $3 | $4 | $5 |"
			echo "$fam-$coll $n $1 $2 $3" >>"$tmp/series"
			if [ -n "$OLD" ]; then
				# shellcheck disable=SC2046
				set -- $(run "$OLD" "$sp" "$coll")
				line="$line $2 | $3 | $5 |"
				echo "old-$fam-$coll $n $1 $2 $3" >>"$tmp/series"
			fi
			echo "$line"
		done
	done
done
echo
echo "Growth exponents: least squares of log value on log N over every N, and"
echo "(in brackets) over the last doubling alone:"
echo
python3 - "$tmp/series" <<'EOF'
import math, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    k, n, x, g, v = line.split()
    if x != "-":
        rows[k].append((int(n), float(x), float(g), float(v)))
def slope(pts):
    pts = [(math.log(a), math.log(b)) for a, b in pts if b > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts); my = sum(p[1] for p in pts) / len(pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)
print("| series | transfers | generation | verification |")
print("|---|---|---|---|")
for k in rows:
    r = rows[k]
    cols = []
    for i in (1, 2, 3):
        pts = [(x[0], x[i]) for x in r]
        cols.append("N^%.2f (%.2f)" % (slope(pts), slope(pts[-2:])))
    print("| %s | %s |" % (k, " | ".join(cols)))
EOF
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
