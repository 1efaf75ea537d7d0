#!/bin/sh
# The NETCONF apply of 384 cross-connects before and after, in one run:
# `reconfig netconf REPS` of an old commit (its driver and its netconf-emu)
# and of this tree, alternated (old, new, old, new ...) so that a busy
# machine hits both alike. Each run measures its own floors on its own
# emulator: the per-RPC floor (the transaction's RPCs times the median
# round trip of <lock>/<unlock>) and the per-command one (the same RPCs,
# byte for byte, from a raw client).
#   bench/netconf_ab.sh [OLD_COMMIT [N [REPS]]]
# OLD is built from `git archive` in a temporary directory (a few minutes;
# OLD_BUILD=DIR names a build of it made already: DIR/bench/reconfig and
# DIR/netconf-emu). Run from anywhere; it runs in the source tree (the
# demo host key).
cd "$(dirname "$0")/.." || exit 1
OLD=${1:-6b489ea}
N=${2:-5}
REPS=${3:-9}
BUILD=${BUILD:-build}
if [ -z "${OLD_BUILD:-}" ]; then
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	git archive "$OLD" | tar -x -C "$dir" || exit 1
	make -C "$dir" -j2 build/bench/reconfig build/netconf-emu >"$dir/make.log" 2>&1 || {
		tail -20 "$dir/make.log"
		exit 1
	}
	OLD_BUILD=$dir/build
fi
make -j2 "$BUILD/bench/reconfig" "$BUILD/netconf-emu" >/dev/null || exit 1
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), old $OLD, new $(git rev-parse --short HEAD)" \
	"($(git status --porcelain | grep -q . && echo 'with changes' || echo clean)), reconfig netconf $REPS"
echo "| run | load | build | apply | round trip | per-RPC floor | ratio | per-command floor | ratio |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|"
i=1
while [ "$i" -le "$N" ]; do
	for which in old new; do
		if [ $which = old ]; then
			out=$(BUILD=$OLD_BUILD "$OLD_BUILD/bench/reconfig" netconf "$REPS" 2>&1)
		else
			out=$(BUILD=$BUILD "$BUILD/bench/reconfig" netconf "$REPS" 2>&1)
		fi
		load=$(cut -d' ' -f1 /proc/loadavg)
		echo "$out" | awk -v run="$i" -v load="$load" -v which="$which" '
			/RPCs: apply/ { apply = $7; rtt = $11; floor = $14; ratio = $17 }
			/per-command floor/ { pc = $(NF - 3); pcr = $NF }
			END {
				if (apply == "") { print "| " run " | " load " | " which " | (failed) |"; exit }
				print "| " run " | " load " | " which " | " apply " ms | " rtt " us | " \
				    floor " ms | " ratio " | " pc " ms | " pcr " |"
			}'
	done
	i=$((i + 1))
done
