#!/bin/sh
# The fluid engine's hop-limit search on model W, two builds side by side:
# each row's whole `ofc schedule examples/modelw/ROW.yaml --collective
# allgather --json` (wall seconds and peak memory of the command), the time
# to the LP's answer (the JSON's "seconds": the symmetry search, the hop
# search and its final solve, without Theorem 4's schedule and the
# verifier), and whether the two answers (the JSON bar its timings) are the
# same. LP s and wall s are wall-clock (on a loaded machine CPU s, user +
# system of the whole command, tells more). Each ofc needs libofc-clp.so beside it (else lp_solve solves).
#
#   bench/hop_search.sh OLD_OFC NEW_OFC [ROW...]
#
# CHUNKS=1 in the environment passes --chunks 1: Theorem 4's schedule is
# then one chunk (1/70 of the transfers on all links), and the command's
# CPU seconds are about the solve's own.
# Default rows: all-links-2 .. -32, no-nvlink-2 .. -8, only-nvlink-4 .. -8.
# Prints a Markdown table; a row whose answers differ says so.
set -u
[ $# -ge 2 ] || { echo "usage: bench/hop_search.sh OLD_OFC NEW_OFC [ROW...]" >&2; exit 2; }
old=$1 new=$2
shift 2
rows=${*:-all-links-2 all-links-4 all-links-8 all-links-16 all-links-32 no-nvlink-2 no-nvlink-4 no-nvlink-8 only-nvlink-4 only-nvlink-8}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mask() { sed -E 's/"(generate_s|verify_s|[a-z_]*seconds[a-z_]*)": *[0-9.e+-]+/"\1": <T>/g'; }
# one run: wall s, peak MB, LP s
run() {
	/usr/bin/time -f 'time %e %M %U %S' "$1" schedule "examples/modelw/$2.yaml" \
		--collective allgather ${CHUNKS:+--chunks "$CHUNKS"} --json >"$tmp/out" 2>"$tmp/err"
	wall=$(awk '/^time / { print $2 }' "$tmp/err")
	mb=$(awk '/^time / { printf "%.0f", $3 / 1024 }' "$tmp/err")
	cpu=$(awk '/^time / { printf "%.2f", $4 + $5 }' "$tmp/err")
	lp=$(python3 -c 'import json, sys; print("%.2f" % json.load(open(sys.argv[1]))["seconds"])' \
		"$tmp/out" 2>/dev/null || echo "-")
	mask <"$tmp/out" >"$tmp/$3"
}
echo "load $(uptime | sed 's/.*average: //')${CHUNKS:+; --chunks $CHUNKS}"
echo
echo "| row | GPUs | R* (s/GB) | T | objective | old: LP s; wall s (CPU s); MB | new: LP s; wall s (CPU s); MB | LP speedup | same answer |"
echo "|---|---:|---:|---:|---:|---|---|---:|---|"
for r in $rows; do
	run "$old" "$r" old
	o="$lp; $wall ($cpu); $mb"
	olp=$lp
	run "$new" "$r" new
	n="$lp; $wall ($cpu); $mb"
	same=yes
	cmp -s "$tmp/old" "$tmp/new" || same=NO
	ans=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print("%d | %.10g | %d | %.6f" % (d["terminals"], d["rstar_s_per_gb"], d["hops"], d["objective"]))' \
		"$tmp/out" || echo "- | - | - | -")
	sp=$(awk -v a="$olp" -v b="$lp" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')
	echo "| $r | $ans | $o | $n | $sp | $same |"
done
echo
echo "load $(uptime | sed 's/.*average: //')"
