#!/bin/sh
# "Every fluid bench row no slower with the chosen defaults": the
# default table of bench/fluid before the LP backends (OLD, default the
# commit before Clp: lp_solve alone) and this tree's with each model's
# default solver, alternated old, new, old, new so that a busy machine hits
# both alike:
#   bench/fluid_ab.sh [OLD_COMMIT [N]]
# OLD is built from `git archive` in a temporary directory (a few minutes).
# Per row: each run's seconds (the child's solve), and the objective of each.
cd "$(dirname "$0")/.." || exit 1
OLD=${1:-09f1889}
N=${2:-3}
BUILD=${BUILD:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git archive "$OLD" | tar -x -C "$dir" || exit 1
make -C "$dir" -j2 build/bench/fluid >"$dir/make.log" 2>&1 ||
	make -C "$dir" build/bench/fluid >"$dir/make.log" 2>&1 || {
	tail -20 "$dir/make.log"
	exit 1
}
make -j2 "$BUILD/bench/fluid" >/dev/null || exit 1
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load: $(cut -d' ' -f1-3 /proc/loadavg), old $OLD (lp_solve), new $(git rev-parse --short HEAD) (each model's default)"
echo "| scenario | GPUs | collective | method | T | objective old / new | old s | new s |"
echo "|---|---:|---|---|---:|---|---|---|"
# The cases of this tree's default table (the old one's are the same).
sed -n '/^static const struct bcase cases/,/^};/p' bench/fluid.c |
	sed -n 's/.*{"\([a-z-]*\)", \([0-9]*\), "\([a-z]*\)", \([0-9]*\), "\([a-z]*\)"}.*/\1 \2 \3 \4 \5/p' |
	while read -r scen servers method hops coll; do
		old="" new="" oobj="" nobj=""
		i=0
		while [ "$i" -lt "$N" ]; do
			line=$("$dir/build/bench/fluid" "$scen" "$servers" "$method" "$hops" "$coll" 120 | tail -1)
			old="$old $(echo "$line" | awk -F'|' '{gsub(/ /, "", $9); print $9}')"
			oobj=$(echo "$line" | awk -F'|' '{gsub(/^ +| +$/, "", $8); print $8}')
			line=$("$BUILD/bench/fluid" "$scen" "$servers" "$method" "$hops" "$coll" 120 default | tail -1)
			new="$new $(echo "$line" | awk -F'|' '{gsub(/ /, "", $10); print $10}')"
			nobj=$(echo "$line" | awk -F'|' '{gsub(/^ +| +$/, "", $9); print $9}')
			i=$((i + 1))
		done
		echo "| $scen | $((8 * servers)) | $coll | $method | $hops | $oobj / $nobj |$old |$new |"
	done
