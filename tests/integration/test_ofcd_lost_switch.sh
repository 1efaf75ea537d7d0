#!/bin/sh
# A switch lost takes the path a reported failure takes (docs/ofcd.md,
# "Failures"): torus:8x8 on four ocs-emu switches, port j of every host on
# switch j; ofcd probing every 200 ms. ocs0 killed: every host's port 0
# fails with it, the workload's schedule is re-planned without them,
# verified, announced and shown by the state, the same schedule `ofc fail`
# of those 64 ports answers with; ocs0 back (started again on its port):
# the healthy schedule again, as before the loss.
SUITE=ofcd-lost-switch
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

four_ocs_fabric "$TMP/fab.yaml" lost
ST="$TMP/st"
mkdir -p "$ST"
expect_exit 0 $OFC apply "$TMP/fab.yaml" --state-dir "$ST"
SOCK="$TMP/ofcd.sock"
$BUILD/ofcd --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$ST" \
	--credentials-dir "$TMP" --probe-interval 200ms --log-file "$TMP/ofcd.log" --log-level info \
	2>>"$TMP/ofcd.stderr" &
ofcd_pid=$!
# until_state SECS EXPR: until ofcd's state (j) satisfies EXPR. The JSON
# is read whatever status exits: it exits 1 while a device is lost, its
# JSON whole (the state this suite waits for), and an answer that never
# came leaves no JSON to satisfy EXPR.
until_state() {
	deadline "$1"
	until { $OFC --socket "$SOCK" status --json --timeout 5 >"$TMP/st.json" 2>/dev/null
		python3 -c "import json,sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" \
			"$TMP/st.json" 2>/dev/null; } || past $_end; do sleep 0.1; done
	python3 -c "import json,sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$TMP/st.json"
}
# sched: "TOPOLOGY STEPS TIME VERIFIED" of the state's schedule
sched() {
	python3 -c 'import json,sys
s = json.load(open(sys.argv[1])).get("schedule") or {}
print(s.get("topology"), s.get("num_steps"), "%.6g" % s.get("time_us", 0), s.get("verified"))' "$TMP/st.json"
}
until_state 20 'j.get("schedule", {}).get("verified") and all(d.get("reachable") for d in j["devices"])' &&
	ok || bad "no healthy schedule" "$(head -c 600 "$TMP/st.json")"
HEALTHY=$(sched)
PORTS=$(python3 -c 'print(" ".join("h%d:0" % h for h in range(64)))')
WANT=$(python3 -c 'import sys; print(sorted(sys.argv[1].split()))' "$PORTS")

# ---- ocs0 lost -------------------------------------------------------------------
kill "$e0_pid"
wait "$e0_pid" 2>/dev/null
until_state 30 "sorted(j.get('failed', [])) == $WANT and j.get('schedule', {}).get('verified')" && ok ||
	bad "ocs0's host ports not failed, or no schedule" "$(head -c 600 "$TMP/st.json")"
LOST=$(sched)
case $LOST in "$HEALTHY") bad "the schedule did not change with the switch lost" "$LOST" ;; *" True") ok ;;
*) bad "the lost switch's schedule" "$LOST" ;; esac
grep -q "schedule re-planned: a switch was lost; 64 failures in effect (h0:0, h1:0, .* and 56 more); bfb allreduce on torus:8x8 without the failures in effect: .* verified" "$TMP/ofcd.log" &&
	ok || bad "the re-plan's log line" "$(grep -i "re-planned\|lost" "$TMP/ofcd.log" | tail -5)"

# ---- ocs0 back: the healthy schedule -----------------------------------------------
$BUILD/ocs-emu --listen "127.0.0.1:$e0_port" --ports 64 --credentials "$TMP/ocs0.cred" \
	--state "$TMP/e0.state" 2>>"$TMP/e0.stderr" &
e0_pid=$!
EMUS="$EMUS $e0_pid"
until_state 30 'not j.get("failed") and j.get("schedule", {}).get("verified")' && ok ||
	bad "ocs0 back, yet failures in effect" "$(head -c 600 "$TMP/st.json")"
[ "$(sched)" = "$HEALTHY" ] && ok || bad "the healthy schedule after ocs0 is back" "$(sched) / $HEALTHY"

# ---- the same ports reported failed: the same schedule -----------------------------
# shellcheck disable=SC2086 # one word per port
expect_stdout_has "64 failures in effect" $OFC --socket "$SOCK" fail $PORTS
until_state 10 "sorted(j.get('failed', [])) == $WANT" && ok || bad "reported ports" "$(head -c 300 "$TMP/st.json")"
[ "$(sched)" = "$LOST" ] && ok || bad "ofc fail of ocs0's ports gives another schedule than its loss" "$(sched) / $LOST"
expect_exit 0 $OFC --socket "$SOCK" restore --all

kill "$ofcd_pid"
wait "$ofcd_pid" 2>/dev/null
finish
