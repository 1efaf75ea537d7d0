#!/bin/sh
# ofc plan/apply/try/confirm/status against build/ocs-emu: exhaustive fault
# injection (every command of an apply refused in turn), lost connections,
# stalls, garbage, lies on read-back, wrong credentials, unreachable devices.
SUITE=apply
# The emulator saves its cross-connects by write-then-rename after every
# change, and ext4 starts writing a file renamed over another back at once
# (auto_da_alloc): about 0.2 ms a change, most of the 260-apply sweep
# below. On a tmpfs where there is one, the files are only in memory.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
mkdir -p "$ST" # plan and status never create it
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
make_torus_config "$TORUS" torus:8x8 2s 2
make_torus_config "$CIRC" circulant:64:3,8 2s 2

# xconn JSON of the device as ofc reads it back.
xconn() { # CONFIG PORT
	$OFC status "$1" --device "ocs0=127.0.0.1:$2" --state-dir "$ST" --json |
		python3 -c 'import json,sys; print([[c["in_port"], c["out_port"]] for c in json.load(sys.stdin)["devices"][0]["circuits"]])'
}

# ---- the basics: plan, apply, nothing left to do -------------------------------
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/pre.state" --log "$TMP/e.log"
expect_json 'j["operations"]==256 and j["device_plan"]["devices"][0]["add"]==256 and j["device_plan"]["devices"][0]["remove"]==0' \
	$OFC plan "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
expect_stdout_has "committed transaction 1: 256 operations on 1 device" \
	$OFC apply "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST"
expect_json 'j["operations"]==0 and j["device_plan"]["devices"][0]["unchanged"]==256' \
	$OFC plan "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
# circulant -> torus: only the circuits that differ are touched.
expect_json 'j["operations"]==2*j["device_plan"]["devices"][0]["add"] and 0<j["device_plan"]["devices"][0]["add"]<256 and j["device_plan"]["devices"][0]["unchanged"]==256-j["device_plan"]["devices"][0]["add"] and all(o["op"]=="disconnect" for o in j["device_plan"]["devices"][0]["ops"][:j["device_plan"]["devices"][0]["remove"]])' \
	$OFC plan "$TORUS" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
expect_json 'j["in_sync"] and j["at_target"] and j["config_generation"]==1 and j.get("transaction") is None' \
	$OFC status "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
PRE=$(xconn "$CIRC" "$e_port")
stop_emu "$e_pid"
# The state of the circulant, as the emulator saved it: every run below starts there.
cp "$TMP/pre.state" "$TMP/circ.state"

# How many commands a clean apply of the torus takes (login, read, changes,
# read-back, logout).
cp "$TMP/circ.state" "$TMP/run.state"
: >"$TMP/clean.log"
start_emu ocs-emu c --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --log "$TMP/clean.log"
expect_exit 0 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$c_port" --state-dir "$ST"
M=$(wc -l <"$TMP/clean.log")
TARGET=$(xconn "$TORUS" "$c_port")
stop_emu "$c_pid"
cp "$TMP/run.state" "$TMP/torus.state"
# login, read, 128 disconnects, 128 connects, read-back, logout
if [ "$M" -eq 260 ] && [ "$(grep -c ENT-PATCH "$TMP/clean.log")" -eq 128 ] &&
	[ "$(grep -c DLT-PATCH "$TMP/clean.log")" -eq 128 ]; then ok; else bad "clean apply took $M commands"; fi
# Put the devices and the record back at the circulant for the sweep.
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu c --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state"
expect_exit 0 $OFC apply "$CIRC" --device "ocs0=127.0.0.1:$c_port" --state-dir "$ST"
stop_emu "$c_pid"

# ---- exhaustive: refuse the k-th command, for every k --------------------------
# Every run must end with the device read back exactly as before, and ofc
# must say so (exit 1, "rolled back"). Refusing the logout after the commit
# is the one k where the apply stands.
sweep_bad=0
k=1
while [ $k -le "$M" ]; do
	cp "$TMP/circ.state" "$TMP/run.state"
	start_emu ocs-emu s --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at $k
	$OFC apply "$TORUS" --device "ocs0=127.0.0.1:$s_port" --state-dir "$ST" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	# The emulator saves its cross-connects before it answers a command, so
	# once ofc has exited the file is what the switch holds.
	stop_emu "$s_pid"
	if [ $k -lt "$M" ]; then
		if [ $rc -ne 1 ] || ! cmp -s "$TMP/run.state" "$TMP/circ.state" || [ -e "$ST/torus64-ocs.journal" ]; then
			sweep_bad=$((sweep_bad + 1))
			[ $sweep_bad -le 3 ] && bad "fail-at $k: exit $rc, state back: $(cmp -s "$TMP/run.state" "$TMP/circ.state" && echo yes || echo no)" "$(head -c 300 "$TMP/err")"
		fi
		# Once devices were touched, ofc must say it rolled back and verified.
		if [ $k -gt 2 ] && ! grep -q "every device is verified back" "$TMP/err"; then
			sweep_bad=$((sweep_bad + 1))
			bad "fail-at $k: no rollback report" "$(head -c 300 "$TMP/err")"
		fi
	else
		if [ $rc -ne 0 ] || ! cmp -s "$TMP/run.state" "$TMP/torus.state"; then
			sweep_bad=$((sweep_bad + 1))
			bad "fail-at $k (logout): exit $rc"
		fi
		# and back to the circulant for what follows
		cp "$TMP/circ.state" "$TMP/run.state"
		start_emu ocs-emu s --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state"
		$OFC apply "$CIRC" --device "ocs0=127.0.0.1:$s_port" --state-dir "$ST" >/dev/null 2>&1
		stop_emu "$s_pid"
	fi
	k=$((k + 1))
done
[ $sweep_bad -eq 0 ] && ok
echo "apply: refused each of the $M commands of the apply in turn"
# ofc's own read-back agrees with the emulator's file, and with the record.
start_emu ocs-emu s --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state"
expect_json 'j["in_sync"] and not j["at_target"]' $OFC status "$TORUS" --device "ocs0=127.0.0.1:$s_port" --state-dir "$ST" --json
stop_emu "$s_pid"

# The error names the device and the refused command.
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at 5
expect_error 1 "ofc: ocs0: device refused disconnect 5 -> 17 (SROF)" \
	$OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
stop_emu "$f_pid"

# ---- lost connections, stalls, garbage, lies ------------------------------------
# One bad reply is survived by a reconnect and a retry (retries: 2).
for mode in close close-after garbage; do
	cp "$TMP/circ.state" "$TMP/run.state"
	start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at 40 --fail-mode $mode
	expect_stdout_has "committed transaction" $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
	if [ "$(xconn "$TORUS" "$f_port")" = "$TARGET" ]; then ok; else bad "$mode once: not at target"; fi
	stop_emu "$f_pid"
	cp "$TMP/circ.state" "$TMP/run.state"
	start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state"
	$OFC apply "$CIRC" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST" >/dev/null 2>&1
	stop_emu "$f_pid"
done
# A device that keeps failing one command (more than the retries) is rolled back.
for mode in close garbage; do
	cp "$TMP/circ.state" "$TMP/run.state"
	start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at 40 --fail-count 6 --fail-mode $mode
	expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
	if grep -q "every device is verified back" "$TMP/err"; then ok; else bad "$mode x6: no rollback" "$(head -c 300 "$TMP/err")"; fi
	if [ "$(xconn "$TORUS" "$f_port")" = "$PRE" ]; then ok; else bad "$mode x6: state not restored"; fi
	stop_emu "$f_pid"
done
grep -q "garbage reply" "$TMP/err" && ok || bad "garbage is not named" "$(head -c 300 "$TMP/err")"
# A stalled command times out (timeout 300ms here, no retries) and is undone.
STALL="$TMP/stall.yaml"
make_torus_config "$STALL" torus:8x8 300ms 0
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at 60 --fail-mode stall
expect_exit 1 $OFC apply "$STALL" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "timed out" "$TMP/err" && grep -q "every device is verified back" "$TMP/err" && ok || bad "stall" "$(head -c 400 "$TMP/err")"
if [ "$(xconn "$TORUS" "$f_port")" = "$PRE" ]; then ok; else bad "stall: state not restored"; fi
stop_emu "$f_pid"
# A wrong cross-connect on read-back is a failed verification: undone.
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at $((M - 1)) --fail-mode lie
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "read-back does not match" "$TMP/err" && grep -q "every device is verified back" "$TMP/err" && ok || bad "lie" "$(head -c 400 "$TMP/err")"
if [ "$(xconn "$TORUS" "$f_port")" = "$PRE" ]; then ok; else bad "lie: state not restored"; fi
stop_emu "$f_pid"

# ---- wrong credentials, unreachable device, garbage from the start ---------------
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state"
printf 'user: admin\npassword: not-the-password\n' >"$TMP/wrong.cred"
sed "s|credentials: ocs0.cred|credentials: wrong.cred|" "$TORUS" >"$TMP/wrong.yaml"
expect_error 1 "ofc: ocs0: login refused at 127.0.0.1:$f_port (PIUI): check the credentials file" \
	$OFC apply "$TMP/wrong.yaml" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
if grep -q "not-the-password" "$TMP/err" "$TMP/out"; then bad "the password was printed"; else ok; fi
if [ "$(xconn "$TORUS" "$f_port")" = "$PRE" ]; then ok; else bad "wrong credentials changed the device"; fi
stop_emu "$f_pid"
GEN_BEFORE=$(python3 -c 'import sys; print(open(sys.argv[1],"rb").read())' "$ST/torus64-ocs.state")
# Nothing listens there: what to start, or the option that reaches it elsewhere.
expect_error 1 "ofc: ocs0: cannot connect to 127.0.0.1:1: Connection refused (is the device, or its emulator build/ocs-emu, listening there? --device ocs0=HOST:PORT reaches it elsewhere)" \
	$OFC apply "$TORUS" --device "ocs0=127.0.0.1:1" --state-dir "$ST"
[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "an unreachable device left a journal"
[ "$GEN_BEFORE" = "$(python3 -c 'import sys; print(open(sys.argv[1],"rb").read())' "$ST/torus64-ocs.state")" ] && ok || bad "an unreachable device changed the record"
expect_exit 1 $OFC status "$TORUS" --device "ocs0=127.0.0.1:1" --state-dir "$ST"
grep -q "UNREACHABLE" "$TMP/out" && ok || bad "status does not say unreachable"
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state" --fail-at 1 --fail-count 1000 --fail-mode garbage
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "garbage reply" "$TMP/err" && ok || bad "garbage at login" "$(head -c 300 "$TMP/err")"
stop_emu "$f_pid"
cmp -s "$TMP/run.state" "$TMP/circ.state" && ok || bad "garbage at login changed the device"

# ---- try and confirm ----------------------------------------------------------------
cp "$TMP/circ.state" "$TMP/run.state"
start_emu ocs-emu t --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/run.state"
expect_exit 0 $OFC apply "$CIRC" --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST"
# A bare number is seconds, as the help says.
expect_error 1 "ofc: not confirmed within 1 s: reverted; the fabric is where it was" \
	$OFC try "$TORUS" --timeout 1 --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST"
if [ "$(xconn "$TORUS" "$t_port")" = "$PRE" ]; then ok; else bad "try without confirm did not revert"; fi
# The record names the config the devices hold again, not the trial's.
expect_json "[f for f in j['fabrics'] if f['fabric']=='torus64-ocs'][0]['config']=='$CIRC' and [f for f in j['fabrics'] if f['fabric']=='torus64-ocs'][0]['topology']=='circulant:64:3,8'" \
	$OFC status --state-dir "$ST" --json
$OFC try "$TORUS" --timeout 30s --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST" >"$TMP/try.out" 2>"$TMP/try.err" &
try_pid=$!
i=0
until grep -q "ofc confirm" "$TMP/try.out" 2>/dev/null || [ $i -ge 500 ]; do sleep 0.02; i=$((i + 1)); done
# The hint names the state directory the trial is in.
grep -qF "run 'ofc confirm --state-dir $ST' within 30 s to keep it, or it is reverted" "$TMP/try.out" &&
	ok || bad "try's hint does not name --state-dir" "$(cat "$TMP/try.out")"
expect_json 'j["transaction"]["state"]=="trial" and j["transaction"]["running"]' \
	$OFC status "$TORUS" --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST" --json
# While the trial runs, nobody else changes the fabric.
expect_exit 1 $OFC apply "$CIRC" --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST"
grep -q "is being changed by another ofc (pid $try_pid)" "$TMP/err" && ok || bad "second changer not refused" "$(cat "$TMP/err")"
expect_json 'j["state"] in ("confirmed", "committed") and j["kind"]=="confirm" and j["fabric"]=="torus64-ocs" and j["id"]>0 and set(j)=={"id", "state", "kind", "fabric"}' \
	$OFC confirm --state-dir "$ST" --json
wait $try_pid
[ $? -eq 0 ] && grep -q "confirmed transaction" "$TMP/try.out" && ok || bad "try after confirm" "$(cat "$TMP/try.out" "$TMP/try.err")"
if [ "$(xconn "$TORUS" "$t_port")" = "$TARGET" ]; then ok; else bad "confirmed try is not at the target"; fi
expect_error 1 "ofc: no trial is waiting for confirmation in $ST" $OFC confirm --state-dir "$ST"
stop_emu "$t_pid"

# ---- patch panel: the same dialect, one slow move at a time ----------------------
cp configs/credentials/panel0.cred "$TMP/panel0.cred"
sed -e "s|credentials: credentials/panel0.cred|credentials: panel0.cred|" -e "s|move_time: 45s|move_time: 20ms|" \
	configs/testbed12-patch.yaml >"$TMP/panel.yaml"
start_emu ocs-emu p --ports 1008 --credentials configs/credentials/panel0.cred --delay-ms 20
expect_json 'j["device_plan"]["devices"][0]["driver"]=="patch-panel" and j["device_plan"]["devices"][0]["add"]==48 and abs(j["device_plan"]["devices"][0]["estimated_seconds"]-0.96)<1e-9' \
	$OFC plan "$TMP/panel.yaml" --device "panel0=127.0.0.1:$p_port" --state-dir "$ST" --json
expect_stdout_has "committed transaction 1: 48 operations" $OFC apply "$TMP/panel.yaml" --device "panel0=127.0.0.1:$p_port" --state-dir "$ST"
stop_emu "$p_pid"

# ---- sim devices from a config keep their state in the state directory -------------
cat >"$TMP/sim.yaml" <<EOF
name: simtorus
hosts: {count: 64, prefix: h, ports: 4}
switches:
  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:8x8
EOF
expect_json 'j["device_plan"]["devices"][0]["driver"]=="sim" and j["device_plan"]["devices"][0]["add"]==256' \
	$OFC plan "$TMP/sim.yaml" --state-dir "$ST" --json
# The plan names the host ports behind each switch port, as ofc show does.
expect_stdout_has "  + 1 -> 5  (h0:0 -> h1:0)" $OFC plan "$TMP/sim.yaml" --state-dir "$ST"
expect_stdout_has "committed transaction 1: 256 operations" $OFC apply "$TMP/sim.yaml" --state-dir "$ST"
expect_json 'j["operations"]==0' $OFC plan "$TMP/sim.yaml" --state-dir "$ST" --json
[ "$(wc -l <"$ST/sim-ocs0.txt")" -eq 256 ] && ok || bad "sim state not persisted"

# ---- status without a config, and usage errors ------------------------------------
expect_json 'sorted(f["fabric"] for f in j["fabrics"])==["simtorus","testbed12-patch","torus64-ocs"] and all("transaction" not in f for f in j["fabrics"])' \
	$OFC status --state-dir "$ST" --json
expect_error 2 "ofc apply: --device 'ocs0': expected NAME=HOST:PORT" $OFC apply "$TORUS" --device ocs0 --state-dir "$ST"
expect_error 2 "ofc apply: --device 'ocs9': $TORUS has no switch or ring of that name" $OFC apply "$TORUS" --device ocs9=127.0.0.1:5 --state-dir "$ST"
expect_error 2 "ofc apply: --device 'ocs0=127.0.0.1:99999': expected NAME=HOST:PORT with a port in 1..65535" $OFC apply "$TORUS" --device ocs0=127.0.0.1:99999 --state-dir "$ST"
expect_error 2 "ofc plan: missing FILE" $OFC plan
# plan only reads: a state directory that is not there is an error, never created.
expect_error 2 "ofc plan: state directory '$TMP/no/such' does not exist (ofc apply creates it)" \
	$OFC plan "$TORUS" --state-dir "$TMP/no/such"
[ ! -e "$TMP/no" ] && ok || bad "plan created the state directory"
# status only reads too, and says the directory is missing.
expect_stdout_has "state directory $TMP/no/such does not exist: nothing recorded (ofc apply creates it)" \
	$OFC status --state-dir "$TMP/no/such"
expect_json 'j["state_dir_exists"] is False and j["fabrics"]==[]' $OFC status --state-dir "$TMP/no/such" --json
expect_json 'j["state_dir_exists"] is True' $OFC status --state-dir "$ST" --json
$OFC status "$TORUS" --device "ocs0=127.0.0.1:$t_port" --state-dir "$TMP/no/such" >"$TMP/out" 2>&1
[ "$(head -n 1 "$TMP/out")" = "fabric torus64-ocs (state directory $TMP/no/such does not exist: nothing recorded; ofc apply creates it)" ] &&
	ok || bad "status FILE on a missing state directory" "$(head -3 "$TMP/out")"
[ ! -e "$TMP/no" ] && ok || bad "status created the state directory"
expect_error 2 "ofc try: bad --timeout 'soon': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" $OFC try "$TORUS" --timeout soon
expect_error 2 "ofc try: bad --timeout '2d': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" $OFC try "$TORUS" --timeout 2d
expect_error 2 "ofc try: bad --timeout '90000': must be more than 0 and at most a day" $OFC try "$TORUS" --timeout 90000
expect_error 2 "ofc try: option '--timeout' needs a value" $OFC try "$TORUS" --timeout
expect_error 2 "ofc status: too many arguments" $OFC status a b
expect_exit 2 $OFC apply "$TMP/nonexistent.yaml" --state-dir "$ST"
expect_exit 0 $OFC apply --help

# The emulators refuse bad options and survive bad input.
expect_error 2 "ocs-emu: bad address 'nope': expected IPv4:PORT" $BUILD/ocs-emu --listen nope --ports 4
expect_exit 2 $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 0
expect_exit 2 $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 4 --fail-mode explode
expect_exit 2 $BUILD/mrr-emu --listen 127.0.0.1:0 --nodes 4
start_emu ocs-emu g --ports 8 --credentials configs/credentials/ocs0.cred
python3 - "$g_port" >"$TMP/raw" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"\x00\xff\x01;ENT-PATCH::1,9:7:;")
data = b""
while data.count(b";") < 2:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode("ascii", "replace"))
PY
grep -q "M  0 DENY" "$TMP/raw" && grep -q "M  7 DENY" "$TMP/raw" && grep -q "PLNA" "$TMP/raw" && ok || bad "ocs-emu on garbage input" "$(cat "$TMP/raw")"
kill -0 "$g_pid" 2>/dev/null && ok || bad "ocs-emu died on garbage input"
stop_emu "$g_pid"

finish
