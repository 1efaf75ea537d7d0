#!/bin/sh
# OpTree all-gather on a WDM ring at scale: `ofc optree
# --nodes N --wavelengths 64 --json`, explicit (the planner's best plan,
# and the best even plan forced with --radices, the plan the reduced
# schedule takes) and symmetry-reduced (--reduced; by itself above 8,192
# nodes). Per row: steps, transfers of the whole schedule, the program's
# (reduced), wall seconds and peak RSS of the whole command
# (/usr/bin/time -f '%e %M': plan, build, check, JSON), least of REPS runs
# (default 3).
#
#   bench/scale_optree.sh [OFC]
set -u
OFC=${1:-build/ofc}
SIZES=${SIZES:-"1024 4096 8192 16384 32768"}
REPS=${REPS:-3}
EXPLICIT_MAX=${EXPLICIT_MAX:-8192}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# N LABEL ARGS... -> a table row
run() {
	n=$1
	label=$2
	shift 2
	best_w=
	best_m=
	i=0
	while [ $i -lt "$REPS" ]; do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$OFC" optree --nodes "$n" --wavelengths 64 \
			--json "$@" >"$tmp/out" 2>/dev/null || {
			echo "| $n | $label | failed | | | | |"
			return
		}
		read -r w m <"$tmp/time"
		if [ -z "$best_w" ] || [ "$(echo "$w < $best_w" | bc)" = 1 ]; then best_w=$w; fi
		if [ -z "$best_m" ] || [ "$m" -lt "$best_m" ]; then best_m=$m; fi
		i=$((i + 1))
	done
	python3 - "$tmp/out" "$n" "$label" "$best_w" "$best_m" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j.get("reduced")
print("| %s | %s | %s | %d | %d | %s | %.2f | %d |" % (
    sys.argv[2], sys.argv[3], "x".join(map(str, j["radices"])), j["num_steps"],
    j["num_transfers"], r["program_transfers"] if r else "-",
    float(sys.argv[4]), (int(sys.argv[5]) + 1023) // 1024))
PY
}

even() { # N -> the even plan's radices (from the reduced run)
	"$OFC" optree --nodes "$1" --wavelengths 64 --reduced --json 2>/dev/null |
		python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["radices"])))'
}

echo "uptime: $(uptime)"
echo "| N | schedule | radices | steps | transfers | program | wall s | peak MiB |"
echo "|---|---|---|---|---|---|---|---|"
for n in $SIZES; do
	if [ "$n" -le "$EXPLICIT_MAX" ]; then
		run "$n" "explicit, best plan"
		run "$n" "explicit, even plan" --radices "$(even "$n")"
	fi
	run "$n" "reduced" --reduced
done
echo "uptime: $(uptime)"
