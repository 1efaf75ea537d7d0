#!/bin/sh
# The symmetry figures, the hand-written search (OLD, default the
# commit before nauty) and nauty (this tree's $BUILD) side by side in one
# run, alternated old, new, old, new so that a busy machine hits both alike:
#   bench/symmetry_ab.sh [OLD_COMMIT [N]]
# Rows: model W's group (`ofc schedule ... --json`'s seconds_group, the
# whole command's wall time), and relabelling a shuffled genkautz:4096,4
# onto itself (bench/relabel.c from this tree, built against each library).
# The ofc rows run this tree's build twice, on each LP solver (--lp-solver
# lpsolve, clp; OLD has lp_solve alone), so both symmetry codes and both
# backends are side by side (old, new lpsolve, new clp, repeated).
# OLD is built from `git archive` in a temporary directory (a few minutes).
cd "$(dirname "$0")/.." || exit 1
OLD=${1:-52b401f}
N=${2:-3}
BUILD=${BUILD:-build}
dir=$(mktemp -d)
T=$(mktemp)
J=$(mktemp)
trap 'rm -rf "$dir" "$T" "$J"' EXIT
git archive "$OLD" | tar -x -C "$dir" || exit 1
cp bench/relabel.c "$dir/bench/relabel.c"
# (-j2 on these targets alone can race the generated protobuf headers: once more, serially)
make -C "$dir" -j2 build/ofc build/bench/relabel >"$dir/make.log" 2>&1 ||
	make -C "$dir" build/ofc build/bench/relabel >"$dir/make.log" 2>&1 || {
	tail -20 "$dir/make.log"
	exit 1
}
make -j2 "$BUILD/ofc" "$BUILD/bench/relabel" >/dev/null || exit 1
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load: $(cut -d' ' -f1-3 /proc/loadavg), old $OLD, new $(git rev-parse --short HEAD)"
echo "| row | code | runs (s) |"
echo "|---|---|---|"
row() { # name, then a command printing one number per run; %B is the build
	# dir, %S the LP solver option (the rows that have one run on both)
	name=$1
	shift
	old="" new="" clp=""
	case "$*" in *%S*) both=1 ;; *) both=0 ;; esac
	i=0
	while [ "$i" -lt "$N" ]; do
		for which in old new clp; do
			[ "$which" = clp ] && [ "$both" = 0 ] && continue
			case $which in
			old) b="$dir/build" sv="" ;;
			new) b="$BUILD" sv="--lp-solver lpsolve" ;;
			clp) b="$BUILD" sv="--lp-solver clp" ;;
			esac
			[ "$both" = 0 ] && sv=""
			v=$(eval "$(echo "$*" | sed -e "s|%B|$b|g" -e "s|%S|$sv|g")")
			case $which in
			old) old="$old $v" ;;
			new) new="$new $v" ;;
			clp) clp="$clp $v" ;;
			esac
		done
		i=$((i + 1))
	done
	if [ "$both" = 1 ]; then
		echo "| $name | hand search ($OLD), lp_solve |$old |"
		echo "| $name | nauty, lp_solve |$new |"
		echo "| $name | nauty, Clp |$clp |"
	else
		echo "| $name | hand search ($OLD) |$old |"
		echo "| $name | nauty |$new |"
	fi
}
group() { # config, collective: seconds_group
	echo "%B/ofc schedule examples/modelw/$1.yaml --collective $2 %S --json >$J && python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))[\"seconds_group\"], 4))' $J"
}
wall() { # the whole command's wall seconds
	echo "/usr/bin/time -f %e -o $T $* >/dev/null && tail -1 $T"
}
for cfg in only-nvlink-2 all-links-2 no-nvlink-2 only-nvlink-16 all-links-16 no-nvlink-16; do
	row "$cfg seconds_group" "$(group $cfg alltoall)"
done
row "only-nvlink-2 --collective allgather, whole command" \
	"$(wall %B/ofc schedule examples/modelw/only-nvlink-2.yaml --collective allgather %S)"
row "only-nvlink-2 --collective alltoall, whole command" \
	"$(wall %B/ofc schedule examples/modelw/only-nvlink-2.yaml --collective alltoall %S)"
row "relabel a shuffled genkautz:4096,4 (kept of 16384, s)" \
	"%B/bench/relabel 5 genkautz:4096,4 | awk -F'|' '/shuffled/ {gsub(/ /, \"\"); printf \"%s/%s\", \$7, \$11}'"
