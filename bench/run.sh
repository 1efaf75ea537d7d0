#!/bin/sh
# Run every benchmark binary (bench/*.c -> $BUILD/bench/*) and the shell
# benchmarks (bench/*.sh). Each prints its own table; bench/results/ keeps
# the current numbers, a page a benchmark, with the command that produced them.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
status=0
for b in "$BUILD"/bench/*; do
	[ -x "$b" ] || continue
	echo "== $b"
	"$b" || status=1
done
for s in bench/*.sh; do
	[ "$s" = bench/run.sh ] && continue
	[ -f "$s" ] || continue
	echo "== $s"
	BUILD=$BUILD sh "$s" || status=1
done
exit $status
