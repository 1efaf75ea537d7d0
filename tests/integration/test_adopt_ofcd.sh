#!/bin/sh
# The way out of an incomplete rollback through ofcd (`ofc --socket PATH
# adopt`), for a daemon whose store only it may write: one ofcd on the
# files store faces an ocs-emu that refused the undo of transaction 2.
# Every mutation is refused with the unfinished transaction; adopt without
# --yes and without a terminal is refused; with --yes the daemon reads the
# switch, records what it holds as generation 3 and ends the transaction;
# the next apply through it commits.
SUITE=adopt_ofcd
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm # the emulator saves its state after every change
	export TMPDIR
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP"
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT

ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
mkdir -p "$ST"
CRED=configs/credentials/ocs0.cred
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
make_torus_config "$TORUS" torus:8x8 2s 0
make_torus_config "$CIRC" circulant:64:3,8 2s 0

# start_ofcd ARGS...: in the foreground; waits until it answers. A status
# it printed is an answer: status exits 1 here (its switch refuses to be
# read, its transaction unfinished), and waiting for exit 0 waited out
# the whole deadline.
start_ofcd() {
	$OFCD --foreground "$@" 2>>"$TMP/ofcd.log" &
	ofcd_pid=$!
	DAEMONS="$DAEMONS $ofcd_pid"
	deadline 30
	until $OFC --socket "$SOCK" status >"$TMP/up.out" 2>/dev/null || [ -s "$TMP/up.out" ] || past $_end; do
		sleep 0.02
	done
}

# ---- an incomplete rollback (as test_adopt.sh makes it) ----------------------------
start_emu ocs-emu e --ports 256 --credentials $CRED --state "$TMP/run.state"
expect_stdout_has "committed transaction 1" $OFC apply "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST"
stop_emu "$e_pid"
start_emu ocs-emu f --ports 256 --credentials $CRED --state "$TMP/run.state" --fail-at 20 --fail-count 100000
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "ROLLBACK INCOMPLETE for transaction 2" "$TMP/err" && ok || bad "no incomplete rollback" "$(head -c 400 "$TMP/err")"
stop_emu "$f_pid"
cp "$TMP/run.state" "$TMP/held.state"
HELD=$(wc -l <"$TMP/held.state")

# ---- ofcd facing it: a switch that reads but refuses every change ------------------
start_emu ocs-emu h --ports 256 --credentials $CRED --state "$TMP/run.state" --fail-at 3 --fail-count 100000
start_ofcd --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device "ocs0=127.0.0.1:$h_port" \
	--probe-interval 0 --log-level info
expect_exit 1 $OFC --socket "$SOCK" apply "$TORUS"
grep -q "cannot repair unfinished transaction 2" "$TMP/err" && ok || bad "an apply was not refused" "$(head -c 400 "$TMP/err")"
# No terminal to ask on and no --yes: refused before anything is sent.
expect_error 2 "ofc --socket PATH adopt: stdin is not a terminal to confirm on: add --yes to record what the devices hold without asking" \
	$OFC --socket "$SOCK" adopt </dev/null
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "adopt without --yes ended the transaction"
# Adopt only reads: a switch that takes changes again (same port and state;
# the emulator counts commands across sessions, so a fresh one reads).
stop_emu "$h_pid"
"$BUILD/ocs-emu" --listen "127.0.0.1:$h_port" --ports 256 --credentials $CRED --state "$TMP/run.state" 2>>"$TMP/i.stderr" &
i_pid=$!
EMUS="$EMUS $i_pid"
deadline 5
until python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $h_port), 1)" 2>/dev/null || past $_end; do
	sleep 0.05
done
# On a terminal it shows what the switch holds and asks; n records nothing.
on_pty n "$OFC" --socket "$SOCK" adopt >"$TMP/tty.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "ocs0 .* $HELD circuits: neither before nor target (before: 256, target: 256)" "$TMP/tty.out" &&
	grep -q "record this as generation 3 and end transaction 2?" "$TMP/tty.out" &&
	grep -q "not confirmed: nothing recorded; transaction 2 is kept" "$TMP/tty.out" && ok ||
	bad "adopt on a terminal, answered n: exit $rc" "$(head -c 600 "$TMP/tty.out")"
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "adopt answered n ended the transaction"
# A commit whose preview no longer matches is refused (a hand-made request).
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
PYTHONPATH="$BUILD/python" $PY - "$SOCK" >"$TMP/stale.out" 2>&1 <<'PY' && ok || bad "a stale adopt was not refused" "$(head -c 600 "$TMP/stale.out")"
import sys
import ofc_client
from ofc_client.pb import control_pb2
c = ofc_client.Client(sys.argv[1])
q = control_pb2.Request()
q.adopt.commit, q.adopt.transaction, q.adopt.generation = True, 2, 9
try:
    c.call(q)
except ofc_client.OfcError as e:
    ok = "preview showed transaction 2 as generation 9" in str(e)
    print(e)
    sys.exit(0 if ok else 1)
sys.exit(1)
PY
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "a stale adopt ended the transaction"
# With --yes: recorded, the switch unchanged.
expect_json 'j["transaction"]==2 and j["generation"]==3 and j["devices"][0]["holds"]=="neither" and j["devices"][0]["circuits"]=='"$HELD" \
	$OFC --socket "$SOCK" adopt --yes --json </dev/null
[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "adopt left the journal"
cmp -s "$TMP/run.state" "$TMP/held.state" && ok || bad "adopt changed the switch"
expect_json 'j["config_generation"]==3 and j.get("transaction") is None' $OFC --socket "$SOCK" status --json
expect_error 1 "ofc: fabric 'torus64-ocs' has no unfinished transaction: nothing to adopt" \
	$OFC --socket "$SOCK" adopt --yes </dev/null
# The next apply through ofcd goes from there and commits.
expect_stdout_has "committed transaction 4" $OFC --socket "$SOCK" apply "$TORUS"
expect_json 'j["config_generation"]==4 and j["at_target"]' $OFC --socket "$SOCK" status --json
kill -TERM "$ofcd_pid"
wait "$ofcd_pid"
stop_emu "$i_pid"
[ "$(wc -l <"$TMP/run.state")" -eq 256 ] && ok || bad "the torus is not on the switch"
expect_exit 0 $OFC --socket "$SOCK" adopt --help

finish
