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

# at_targets -> prints two of True/False, for A then B: the device holds
# the config's target and the record agrees, down to the topology and the
# config file (one python3 for both)
at_targets() {
	$OFC status "$A" --device "$DEV" --state-dir "$ST" --json >"$TMP/ta.json"
	$OFC status "$B" --device "$DEV" --state-dir "$ST" --json >"$TMP/tb.json"
	python3 -c 'import json,sys
for f, c, t in (sys.argv[1:4], sys.argv[4:7]):
    try:
        j = json.load(open(f))
        print(j["in_sync"] and j["at_target"] and j.get("transaction") is None and
              j["topology"]["spec"] == t and j["recorded_config"] == c)
    except Exception:
        print(False)' "$TMP/ta.json" "$A" torus:8x8 "$TMP/tb.json" "$B" circulant:64:3,8
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
		expect_json 'j.get("transaction") is not None and not j["transaction"]["running"]' \
			$OFC status "$new" --device "$DEV" --state-dir "$ST" --json
		[ -e "$ST/torus64-ocs.journal" ] && ok || bad "status repaired the journal"
	fi
	# The next command that touches the fabric repairs it: on odd runs
	# one with the other config (its topology was recorded).
	if [ $((i % 2)) -eq 1 ]; then rep=$old; else rep=$new; fi
	expect_exit 0 $OFC plan "$rep" --device "$DEV" --state-dir "$ST"
	[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "run $i: journal left after plan"
	at_targets >"$TMP/t"
	{ read -r ta; read -r tb; } <"$TMP/t" # A's, B's: now old's, new's
	[ "$old" = "$A" ] || { t=$ta; ta=$tb; tb=$t; }
	if [ "$ta" = True ] || [ "$tb" = True ]; then ok; else
		bad "run $i (kill after $ms ms): device/record at neither target ($ta, $tb)"
	fi
	# Next time, go from wherever we are to the other target.
	if [ "$tb" = True ]; then t=$old; old=$new; new=$t; fi
	i=$((i + 1))
done
echo "crash: 20 kills, $unfinished left a journal to repair"
[ $unfinished -ge 3 ] && ok || bad "only $unfinished of 20 kills hit a transaction"
stop_emu "$e_pid"

# ---- kill points ----------------------------------------------------
# A kill -9 at a chosen point: the emulator, restarted on its saved state and
# port, stalls at command K (1 ACT-USER, 2 the plan's RTRV-PATCH, 3..N+2 the
# N changes from torus:8x8 to circulant:64:3,8, N+3 the read-back), the
# apply waits there and is killed: before its first change, half-way, before
# the read-back. The repair is `ofc plan` with the other config, A: the
# record must say what the killed transaction applied (B's topology and
# file) once every change was made, else A's, as before. It used to record
# A's topology "from a.yaml" while the switch held B.
P2=
emu_at() { # [ARGS...]: the emulator on its state (and, after the first, port)
	[ -n "$e2_pid" ] && stop_emu "$e2_pid"
	start_emu ocs-emu e2 --ports 256 --credentials configs/credentials/ocs0.cred \
		--state "$TMP/e2.state" --log "$TMP/e2.log" --listen "127.0.0.1:${P2:-0}" "$@"
	P2=$e2_port
	D2="--device ocs0=127.0.0.1:$P2 --state-dir $TMP/st2"
}
# until_logged K: the emulator has received command K (5 s by the clock)
until_logged() {
	deadline 5
	until grep -q "^$1 " "$TMP/e2.log" 2>/dev/null || past $_end; do
		sleep 0.01
	done
	grep -q "^$1 " "$TMP/e2.log"
}
# record_is CONFIG TOPOLOGY FILE: status with CONFIG: the record says
# TOPOLOGY from FILE, the switch holds CONFIG's target, no journal.
record_is() {
	expect_json 'j["topology"]["spec"] == "'"$2"'" and j["recorded_config"] == "'"$3"'" and j["at_target"] and j["in_sync"] and j.get("transaction") is None' \
		$OFC status "$1" $D2 --json
}
: >"$TMP/e2.state"
emu_at
expect_exit 0 $OFC apply "$A" $D2
N=$($OFC plan "$B" $D2 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"])')
[ "$N" -ge 4 ] 2>/dev/null && ok || bad "plan A -> B: '$N' operations"
for K in 3 $((3 + N / 2)) $((3 + N)); do
	emu_at
	expect_exit 0 $OFC apply "$A" $D2
	rm -f "$TMP/e2.log"
	emu_at --fail-at $K --fail-mode stall
	$OFC apply "$B" $D2 >/dev/null 2>&1 &
	pid=$!
	until_logged $K && ok || bad "kill point $K: the apply never sent command $K"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	[ -e "$TMP/st2/torus64-ocs.journal" ] && ok || bad "kill point $K: no journal left"
	emu_at
	expect_exit 0 $OFC plan "$A" $D2
	if [ $K -lt $((3 + N)) ]; then record_is "$A" torus:8x8 "$A"; else record_is "$B" circulant:64:3,8 "$B"; fi
done
# The issue's own reproduction: the journal copied while the apply runs
# (the emulator holds its first change), the apply let commit, the journal
# put back: the repair commits again what it says, B.
emu_at --hold-file "$TMP/hold"
expect_exit 0 $OFC apply "$A" $D2
: >"$TMP/hold"
$OFC apply "$B" $D2 >/dev/null 2>&1 &
pid=$!
deadline 5
until [ -e "$TMP/st2/torus64-ocs.journal" ] || past $_end; do sleep 0.01; done
cp "$TMP/st2/torus64-ocs.journal" "$TMP/journal.copy" && ok || bad "no journal to copy"
rm -f "$TMP/hold"
wait $pid && ok || bad "the held apply failed"
record_is "$B" circulant:64:3,8 "$B"
cp "$TMP/journal.copy" "$TMP/st2/torus64-ocs.journal"
expect_exit 0 $OFC plan "$A" $D2
record_is "$B" circulant:64:3,8 "$B"
stop_emu "$e2_pid"
e2_pid=

# ofcd: Reconfigure to circulant:64:1 (ports 0 and 1; 2 and 3
# spare), `fail h20:0` moves its circuits onto h20:2 in a transaction of
# 4 changes (after the emulator's restart: 1 ACT-USER, 2 RTRV-PATCH, 3..6,
# 7 the read-back); ofcd is killed -9 at command K and started again with
# its config, which says torus:8x8. Killed before the first change, the
# move is undone: the circulant with h20:0 failed. Killed at the
# read-back, it is finished: the circulant with the move, in the state, the
# schedule and .rewired. It used to record "torus:8x8", drop the moves,
# delete .rewired and serve the torus's schedule.
OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP --probe-interval 0"
SOCK="$TMP/ofcd.sock"
start_ofcd() {
	$OFCD --foreground --config "$A" --socket "$SOCK" $D2 2>>"$TMP/d.log" &
	ofcd_pid=$!
	_w=0
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 500 ]; do
		sleep 0.01
		_w=$((_w + 1))
	done
}
for K in 3 7; do
	rm -rf "$TMP/st2"
	: >"$TMP/e2.state"
	emu_at
	expect_exit 0 $OFC apply "$A" $D2
	start_ofcd
	expect_stdout_has "committed transaction 2" $OFC --socket "$SOCK" reconfigure --topology circulant:64:1
	rm -f "$TMP/e2.log"
	emu_at --fail-at $K --fail-mode stall
	$OFC --socket "$SOCK" fail h20:0 >/dev/null 2>&1 &
	fail_pid=$!
	until_logged $K && ok || bad "ofcd kill point $K: the move never sent command $K"
	kill -9 "$ofcd_pid"
	wait "$ofcd_pid" 2>/dev/null
	wait "$fail_pid" 2>/dev/null
	emu_at
	start_ofcd
	if [ $K -eq 3 ]; then
		expect_json 'j["target_topology"] == "circulant:64:1" and not j.get("moved") and j["failed"] == ["h20:0"] and j["devices"][0]["at_target"]' \
			$OFC --socket "$SOCK" status --json
		want="circulant:64:1 without h20:0"
	else
		expect_json 'j["target_topology"] == "circulant:64:1" and j["moved"] == ["h20:0>h20:2"] and j["devices"][0]["at_target"]' \
			$OFC --socket "$SOCK" status --json
		grep -qx "h20 0 2" "$TMP/st2/torus64-ocs.rewired" && ok ||
			bad "ofcd kill point $K: .rewired" "$(cat "$TMP/st2/torus64-ocs.rewired" 2>&1)"
		want="circulant:64:1"
	fi
	expect_json 'j["topology"] == "'"$want"'" and j["verified"]' \
		$OFC --socket "$SOCK" schedule --collective allreduce --summary --json
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
done

finish
