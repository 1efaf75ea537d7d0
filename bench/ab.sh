#!/bin/sh
# Two builds of ofc side by side on one `ofc schedule` command, alternated
# (old, new, old, new ...) so that a noisy machine hits both alike.
#   bench/ab.sh OLD_OFC NEW_OFC N ARGS...
# ARGS are `ofc schedule`'s and must include --json. Per run: which
# binary, /usr/bin/time's wall and system seconds and peak RSS, and the
# summary's generate_s, verify_s and program transfers (reduced).
OLD=$1
NEW=$2
N=$3
shift 3
T=$(mktemp)
J=$(mktemp)
trap 'rm -f "$T" "$J"' EXIT
i=0
while [ "$i" -lt "$N" ]; do
	for b in "$OLD" "$NEW"; do
		[ "$b" = "$OLD" ] && which=old || which=new
		/usr/bin/time -f "%e %M %S" -o "$T" "$b" schedule "$@" >"$J" 2>/dev/null
		python3 - "$which" "$T" "$J" <<'PY'
import json, sys
which, tf, jf = sys.argv[1:4]
wall, peak, sys_s = open(tf).read().split()[-3:]
j = json.load(open(jf))
print(which, "wall", wall, "sys", sys_s, "gen", round(j["generate_s"], 3),
      "verify", round(j["verify_s"], 3), "peakMiB", int(peak) // 1024,
      "program", j.get("reduced", {}).get("program_transfers"))
PY
	done
	i=$((i + 1))
done
