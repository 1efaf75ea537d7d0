#!/bin/sh
# A rollback that cannot finish, and the way out (ofc adopt); the bounds on
# a TL1 and a NETCONF read-back, which grow with the switch. With ocs-emu: a
# switch that refuses every change from some command on leaves "ROLLBACK
# INCOMPLETE", and every later apply retries the undo and is refused with
# it; adopt records what the switch holds and ends the transaction.
SUITE=adopt
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm # the emulator saves its state after every change
	export TMPDIR
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
mkdir -p "$ST"
CRED=configs/credentials/ocs0.cred
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
make_torus_config "$TORUS" torus:8x8 2s 0
make_torus_config "$CIRC" circulant:64:3,8 2s 0

# The circuits of the device as ofc reads them back, and as the record has them.
xconn() { # CONFIG PORT
	$OFC status "$1" --device "ocs0=127.0.0.1:$2" --state-dir "$ST" --json |
		python3 -c 'import json,sys; print(sorted([c["in_port"], c["out_port"]] for c in json.load(sys.stdin)["devices"][0]["circuits"]))'
}

# ---- an incomplete rollback ----------------------------------------------------
start_emu ocs-emu e --ports 256 --credentials $CRED --state "$TMP/run.state"
expect_stdout_has "committed transaction 1" $OFC apply "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST"
stop_emu "$e_pid"
# Login, read, then changes: from the 20th command on the switch refuses
# everything, the undo too.
start_emu ocs-emu f --ports 256 --credentials $CRED --state "$TMP/run.state" --fail-at 20 --fail-count 100000
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "ROLLBACK INCOMPLETE for transaction 2" "$TMP/err" && ok || bad "no incomplete rollback" "$(head -c 400 "$TMP/err")"
stop_emu "$f_pid"
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "the journal is gone after an incomplete rollback"
# A switch that reads but refuses every change (from the 3rd command: after
# login and read): every apply retries the undo first and is refused.
start_emu ocs-emu g --ports 256 --credentials $CRED --state "$TMP/run.state" --fail-at 3 --fail-count 100000
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$g_port" --state-dir "$ST"
grep -q "could not restore every device; the journal is kept" "$TMP/err" && ok || bad "a later apply was not refused" "$(head -c 400 "$TMP/err")"
stop_emu "$g_pid"
cp "$TMP/run.state" "$TMP/held.state"

# ---- the way out ----------------------------------------------------------------
start_emu ocs-emu h --ports 256 --credentials $CRED --state "$TMP/run.state" --fail-at 3 --fail-count 100000
# No terminal to ask on and no --yes: refused before anything is read.
expect_error 2 "ofc adopt: stdin is not a terminal to confirm on: add --yes to record what the devices hold without asking" \
	$OFC adopt "$TORUS" --device "ocs0=127.0.0.1:$h_port" --state-dir "$ST" </dev/null
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "adopt without --yes ended the transaction"
# On a terminal it shows what the switch holds and asks; anything but y
# records nothing.
on_pty n "$OFC" adopt "$TORUS" --device "ocs0=127.0.0.1:$h_port" --state-dir "$ST" >"$TMP/tty.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "ocs0 .* circuits: neither before nor target (before: 256, target: 256)" "$TMP/tty.out" &&
	grep -q "record this as generation 3 and end transaction 2?" "$TMP/tty.out" &&
	grep -q "not confirmed: nothing recorded; transaction 2 is kept" "$TMP/tty.out" && ok ||
	bad "adopt on a terminal, answered n: exit $rc" "$(head -c 600 "$TMP/tty.out")"
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "adopt answered n ended the transaction"
# (the emulator counts commands across sessions: a fresh one reads again)
stop_emu "$h_pid"
start_emu ocs-emu h --ports 256 --credentials $CRED --state "$TMP/run.state" --fail-at 3 --fail-count 100000
HELD=$(wc -l <"$TMP/held.state")
[ "$HELD" -gt 0 ] && [ "$HELD" -lt 256 ] && ok || bad "the failed apply left $HELD circuits, not part of them"
expect_json 'j["transaction"]==2 and j["generation"]==3 and j["devices"][0]["holds"]=="neither" and j["devices"][0]["circuits"]=='"$HELD" \
	$OFC adopt "$TORUS" --device "ocs0=127.0.0.1:$h_port" --state-dir "$ST" --yes --json </dev/null
[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "adopt left the journal"
cmp -s "$TMP/run.state" "$TMP/held.state" && ok || bad "adopt changed the switch"
stop_emu "$h_pid"
# The record is what the switch holds, as a new generation, and nothing is unfinished.
start_emu ocs-emu i --ports 256 --credentials $CRED --state "$TMP/run.state"
expect_json 'j["in_sync"] and not j["at_target"] and j["config_generation"]==3 and j.get("transaction") is None' \
	$OFC status "$TORUS" --device "ocs0=127.0.0.1:$i_port" --state-dir "$ST" --json
# Nothing left to adopt.
expect_error 1 "ofc: fabric 'torus64-ocs' has no unfinished transaction: nothing to adopt" \
	$OFC adopt "$TORUS" --device "ocs0=127.0.0.1:$i_port" --state-dir "$ST" --yes
# And the next apply goes from there.
expect_stdout_has "committed transaction 4" $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$i_port" --state-dir "$ST"
TARGET=$(xconn "$TORUS" "$i_port")
stop_emu "$i_pid"
[ "$(wc -l <"$TMP/run.state")" -eq 256 ] && ok || bad "the torus is not on the switch"
expect_exit 2 $OFC adopt
expect_exit 0 $OFC adopt --help

# ---- the read-back's bound grows with the switch -----------------------------------
# A 65,536-port switch with every port connected: RTRV-PATCH brings about
# 1.2 MB, over the 1 MiB that once bounded every reply.
seq 1 65536 | awk '{ print $1, 65537 - $1 }' >"$TMP/big.state"
sed 's|ports: 256$|ports: 65536|' "$TORUS" >"$TMP/big.yaml"
rm -rf "$ST" && mkdir -p "$ST"
start_emu ocs-emu b --ports 65536 --credentials $CRED --state "$TMP/big.state"
expect_json 'len(j["devices"][0]["circuits"])==65536' \
	$OFC status "$TMP/big.yaml" --device "ocs0=127.0.0.1:$b_port" --state-dir "$ST" --json
# A switch configured as 256 ports that sends a 65,536-port read-back is
# refused, naming the bound and the switch.
expect_exit 1 $OFC plan "$TORUS" --device "ocs0=127.0.0.1:$b_port" --state-dir "$ST"
grep -q "reply larger than 1114112 bytes, the bound for 'ocs0' (256 ports)" "$TMP/err" && ok ||
	bad "an oversized reply is not refused by name" "$(head -c 400 "$TMP/err")"
stop_emu "$b_pid"
# NETCONF too: the <get> of a fully connected 65,536-port switch is about
# 21 MB of XML, over the 16 MiB that once bounded it.
cp configs/credentials/known_hosts "$TMP/known_hosts"
sed -e "s|credentials: .*|credentials: ocs0.cred|" -e "s|known_hosts: .*|known_hosts: known_hosts|" \
	-e 's|ports: 256$|ports: 65536|' -e 's|timeout: .*|timeout: 30s|' configs/torus64-netconf.yaml >"$TMP/nbig.yaml"
start_emu netconf-emu n --ports 65536 --host-key configs/credentials/netconf-emu-host.key \
	--credentials $CRED --unix "$TMP/n.sock" --state "$TMP/big.state"
expect_json 'len(j["devices"][0]["circuits"])==65536' \
	$OFC status "$TMP/nbig.yaml" --device "ocs0=unix:$TMP/n.sock" --state-dir "$ST" --json
stop_emu "$n_pid"

finish
