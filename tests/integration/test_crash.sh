#!/bin/sh
# Crash recovery: kill -9 an apply at 20 random moments; the next ofc
# command that touches the fabric finishes or undoes the transaction, and
# afterwards the recorded state equals the device state and equals either
# the old or the new target.
SUITE=crash
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
A="$TMP/a.yaml"
B="$TMP/b.yaml"
make_torus_config "$A" torus:8x8 2s 2
make_torus_config "$B" circulant:64:3,8 2s 2
# 1 ms per cross-connect: an apply of 256 changes takes about 0.3 s.
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 1
DEV="ocs0=127.0.0.1:$e_port"
expect_exit 0 $OFC apply "$A" --device "$DEV" --state-dir "$ST"

# at_targets OLD NEW -> prints two of True/False, for each config: the
# device holds its target and the record agrees (one python3 for both)
at_targets() {
	$OFC status "$1" --device "$DEV" --state-dir "$ST" --json >"$TMP/ta.json"
	$OFC status "$2" --device "$DEV" --state-dir "$ST" --json >"$TMP/tb.json"
	python3 -c 'import json,sys
for f in sys.argv[1:]:
    try:
        j = json.load(open(f))
        print(j["in_sync"] and j["at_target"] and j["transaction"] is None)
    except Exception:
        print(False)' "$TMP/ta.json" "$TMP/tb.json"
}

seed=${OFC_CRASH_SEED:-$$}
echo "crash: seed $seed"
old="$A"
new="$B"
unfinished=0
# a random moment in the first 0.4 s of each apply (run i seeded by seed * 100 + i)
MS=$(python3 -c "import random
for i in range(1, 21):
    random.seed($seed * 100 + i)
    print(random.randint(0, 400))")
i=1
while [ $i -le 20 ]; do
	ms=$(echo "$MS" | sed -n "${i}p")
	$OFC apply "$new" --device "$DEV" --state-dir "$ST" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%03d' "$ms")"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	if [ -e "$ST/torus64-ocs.journal" ]; then
		unfinished=$((unfinished + 1))
		# status shows it and leaves it alone
		expect_json 'j["transaction"] is not None and not j["transaction"]["running"]' \
			$OFC status "$new" --device "$DEV" --state-dir "$ST" --json
		[ -e "$ST/torus64-ocs.journal" ] && ok || bad "status repaired the journal"
	fi
	# The next command that touches the fabric repairs it.
	expect_exit 0 $OFC plan "$new" --device "$DEV" --state-dir "$ST"
	[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "run $i: journal left after plan"
	at_targets "$old" "$new" >"$TMP/t"
	{ read -r ta; read -r tb; } <"$TMP/t"
	if [ "$ta" = True ] || [ "$tb" = True ]; then ok; else
		bad "run $i (kill after $ms ms): device/record at neither target ($ta, $tb)"
	fi
	# Next time, go from wherever we are to the other target.
	if [ "$tb" = True ]; then t=$old; old=$new; new=$t; fi
	i=$((i + 1))
done
echo "crash: 20 kills, $unfinished left a journal to repair"
[ $unfinished -ge 3 ] && ok || bad "only $unfinished of 20 kills hit a transaction"

finish
