#!/bin/sh
# ofc plan/apply on a WDM ring through build/mrr-emu: MRR retuning,
# refusals and lies undone, a mismatched agent refused.
SUITE=mrr
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
mkdir -p "$ST" # plan and status never create it
CFG=tests/configs/ring8-mrr.yaml
start_emu mrr-emu m --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4 --log "$TMP/m.log"
DEV="ring0=127.0.0.1:$m_port"
expect_json 'j["device_plan"]["devices"][0]["driver"]=="mrr" and j["device_plan"]["devices"][0]["add"]==8 and {(o["node"],o["wavelength"],o["role"]) for o in j["device_plan"]["devices"][0]["ops"]}=={(0,0,"add"),(3,0,"drop"),(4,0,"add"),(7,0,"drop"),(1,1,"add"),(5,1,"drop"),(6,2,"add"),(2,2,"drop")}' \
	$OFC plan "$CFG" --device "$DEV" --state-dir "$ST" --json
expect_stdout_has "committed transaction 1: 8 operations" $OFC apply "$CFG" --device "$DEV" --state-dir "$ST"
expect_json 'j["in_sync"] and j["at_target"] and len(j["devices"][0]["channels"])==8' \
	$OFC status "$CFG" --device "$DEV" --state-dir "$ST" --json

# Move one lightpath: n6 -> n2 on wavelength 2 becomes n6 -> n1 on wavelength 3.
sed -e 's|{from: n6, to: n2, wavelength: 2}|{from: n6, to: n1, wavelength: 3}|' "$CFG" >"$TMP/moved.yaml"
expect_json 'j["device_plan"]["devices"][0]["remove"]==2 and j["device_plan"]["devices"][0]["add"]==2 and j["device_plan"]["devices"][0]["unchanged"]==6' \
	$OFC plan "$TMP/moved.yaml" --device "$DEV" --state-dir "$ST" --json
BEFORE=$($OFC status "$CFG" --device "$DEV" --state-dir "$ST" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["channels"])')
stop_emu "$m_pid"

# Every request of the retune refused in turn: always back where it was.
n_ok=0
for k in 1 2 3 4 5 6 7; do
	start_emu mrr-emu f --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4 --fail-at $((11 + k))
	$OFC apply "$CFG" --device "ring0=127.0.0.1:$f_port" --state-dir "$ST" >/dev/null 2>&1
	$OFC apply "$TMP/moved.yaml" --device "ring0=127.0.0.1:$f_port" --state-dir "$ST" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	now=$($OFC status "$CFG" --device "ring0=127.0.0.1:$f_port" --state-dir "$ST" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["channels"])')
	stop_emu "$f_pid"
	# The first apply takes requests 1..11 (hello, get-state, 8 tunes,
	# read-back); the retune 12..18 (hello, get-state, 4 tunes, read-back).
	if [ $k -le 7 ] && [ $rc -eq 1 ] && [ "$now" = "$BEFORE" ]; then n_ok=$((n_ok + 1)); else
		bad "mrr fail-at $((11 + k)): exit $rc" "$(head -c 300 "$TMP/err")"; fi
done
[ $n_ok -eq 7 ] && ok

# Adds go off before drops (the light stops first): the move starts at node 6.
start_emu mrr-emu f --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4 --fail-at 14 --fail-mode deny
$OFC apply "$CFG" --device "ring0=127.0.0.1:$f_port" --state-dir "$ST" >/dev/null 2>&1
expect_error 1 "ofc: ring0: agent refused tune off node 6 interface 0 wavelength 2 add: injected fault" \
	$OFC apply "$TMP/moved.yaml" --device "ring0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "every device is verified back" "$TMP/err" && ok || bad "no rollback report"
stop_emu "$f_pid"

# The agent drives a ring of another size: refused before anything changes.
start_emu mrr-emu w --nodes 16 --wavelengths 4 --interfaces 2
expect_error 1 "ofc: ring0: agent at 127.0.0.1:$w_port drives 16 nodes x 2 interfaces x 4 wavelengths; the config says 8 x 2 x 4" \
	$OFC plan "$CFG" --device "ring0=127.0.0.1:$w_port" --state-dir "$ST"
stop_emu "$w_pid"
# Garbage frames.
start_emu mrr-emu g --nodes 8 --wavelengths 4 --interfaces 2 --fail-at 1 --fail-count 100 --fail-mode garbage
expect_exit 1 $OFC plan "$CFG" --device "ring0=127.0.0.1:$g_port" --state-dir "$ST"
grep -q "garbage reply" "$TMP/err" && ok || bad "garbage not named" "$(cat "$TMP/err")"
stop_emu "$g_pid"

# Bad lightpaths are config errors with positions.
sed -e 's|{from: n0, to: n3, wavelength: 0}|{from: n0, to: n3, wavelength: 9}|' "$CFG" >"$TMP/bad.yaml"
expect_error 2 "$TMP/bad.yaml:23:9: ring 'ring0' has wavelengths 0..3; there is no 9" $OFC validate "$TMP/bad.yaml"
sed -e 's|{from: n4, to: n7, wavelength: 0}|{from: n0, to: n7, wavelength: 0}|' "$CFG" >"$TMP/dup.yaml"
expect_error 2 "$TMP/dup.yaml:10:5: ring 'ring0': node n0 interface 0 would add wavelength 0 twice" $OFC validate "$TMP/dup.yaml"

finish
