#!/bin/sh
# Files and inputs ofc must not trust (issue 12): a FIFO in a file's place
# never blocks a command or the daemon.
SUITE=security
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

OFCD=${OFCD:-$BUILD/ofcd}
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
TORUS="$TMP/torus.yaml"
make_torus_config "$TORUS" torus:8x8 2s 1

# start_ofcd LOG ARGS...: ofcd in the foreground; waits until it answers.
start_ofcd() {
	log=$1
	shift
	"$OFCD" --foreground "$@" 2>>"$TMP/$log" &
	ofcd_pid=$!
	DAEMONS="$DAEMONS $ofcd_pid"
	_w=0
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 1000 ]; do
		sleep 0.01
		_w=$((_w + 1))
	done
}
stop_ofcd() {
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
}
# bounded CMD...: the command, killed after 60 s: a hang fails the check
# that follows instead of the whole suite.
bounded() { timeout -s KILL 60 "$@"; }

# ---- FIFOs and devices in a file's place -------------------------------------------------
mkfifo "$TMP/fifo.yaml"
expect_error 2 "ofc: $TMP/fifo.yaml: is not a regular file" bounded $OFC show "$TMP/fifo.yaml"
expect_error 2 "ofcd: $TMP/fifo.yaml: is not a regular file" bounded \
	$OFCD --foreground --config "$TMP/fifo.yaml" --socket "$SOCK" --state-dir "$ST"
expect_error 2 "ofc: /dev/zero: is not a regular file" bounded $OFC show /dev/zero

start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
cp "$TORUS" "$TMP/live.yaml"
start_ofcd d1.log --config "$TMP/live.yaml" --socket "$SOCK" --state-dir "$ST" --device "$DEV" \
	--probe-interval 0
# SIGHUP while --config is a FIFO: the reload is rejected at once, and the
# mutation worker is free for the next request.
rm "$TMP/live.yaml"
mkfifo "$TMP/live.yaml"
kill -HUP "$ofcd_pid"
i=0
until grep -q "config rejected" "$TMP/d1.log" || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "config rejected: $TMP/live.yaml: is not a regular file" "$TMP/d1.log" && ok ||
	bad "a FIFO config was not rejected" "$(tail -3 "$TMP/d1.log")"
expect_stdout_has "committed transaction 1" bounded $OFC --socket "$SOCK" reconfigure --topology torus:8x8
expect_exit 0 stop_ofcd
# A FIFO where the journal or the lock should be: refused, not waited on.
mkfifo "$ST/torus64-ocs.journal"
expect_exit 1 bounded $OFC plan "$TORUS" --device "$DEV" --state-dir "$ST"
grep -q "torus64-ocs.journal: is not a regular file" "$TMP/err" && ok || bad "FIFO journal" "$(cat "$TMP/err")"
rm "$ST/torus64-ocs.journal"
rm -f "$ST/torus64-ocs.lock"
mkfifo "$ST/torus64-ocs.lock"
expect_exit 1 bounded $OFC apply "$TORUS" --device "$DEV" --state-dir "$ST"
grep -q "the lock is not a regular file" "$TMP/err" && ok || bad "FIFO lock" "$(cat "$TMP/err")"
expect_exit 0 bounded $OFC status "$TORUS" --device "$DEV" --state-dir "$ST"
rm "$ST/torus64-ocs.lock"

# ---- damaged state files stop every change ------------------------------------------------
cp "$ST/torus64-ocs.state" "$TMP/good.state"
printf '\377\377\377\377\017' >"$ST/torus64-ocs.state"
cp "$ST/torus64-ocs.state" "$TMP/bad.state"
for cmd in plan apply try; do
	expect_error 1 "ofc: $ST/torus64-ocs.state: corrupt file: not an ofc.v1.FabricRecord message. Nothing is planned or changed while it is there; move it aside to start a new record: mv '$ST/torus64-ocs.state' '$ST/torus64-ocs.state.corrupt'" \
		bounded $OFC $cmd "$TORUS" --device "$DEV" --state-dir "$ST"
done
cmp -s "$ST/torus64-ocs.state" "$TMP/bad.state" && ok || bad "the damaged state file was overwritten"
mv "$ST/torus64-ocs.state" "$ST/torus64-ocs.state.corrupt"
expect_stdout_has "0 operations" bounded $OFC plan "$TORUS" --device "$DEV" --state-dir "$ST"

finish
