#!/bin/sh
# A client whose leader dies under its mutation gets the mutation's real
# outcome (docs/control.md, "Sending a mutation again"): three replicas on a
# 3-member etcd, an emulated switch slow enough (--delay-ms) that an apply
# is still running when the leader is killed with kill -9, and
# `ofc --socket A,B,C apply FILE` with no --timeout. ofc sends the same
# request with the same request_key to the next leader, which answers what
# the killed one's transaction came to or runs it once; ofc exits 0 with
# that commit and says on stderr that the leader changed. Sent with one
# address only, the loss is an error that names the key to send it again.
# The Python client given every replica does the same and warns alike.
SUITE=failover-client
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "failover-client: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
# One credentials directory, as on machines set up alike: the file an apply
# names is read by whichever replica runs it.
mkdir -p "$TMP/creds"
chmod 700 "$TMP/creds"
printf 'user: ofc\npassword: ofc-demo\n' >"$TMP/creds/ocs0.cred"
chmod 600 "$TMP/creds/ocs0.cred"
make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
A=torus:8x8
B=circulant:64:3,8
start_emu ocs-emu e --ports 256 --credentials "$TMP/creds/ocs0.cred" --delay-ms 25 --state "$TMP/e.state"
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
for r in r1 r2 r3; do
	replica_dir $r "$TMP/a.yaml" "$e_port"
	sed -i "s|credentials: .*|credentials: $TMP/creds/ocs0.cred|" "$TMP/$r/fab.yaml"
	replica_start $r --probe-interval 0 --credentials-dir "$TMP/creds"
done
ALL="$TMP/r1.sock,$TMP/r2.sock,$TMP/r3.sock"
sed -e "s|^topology: .*|topology: $B|" "$TMP/r1/fab.yaml" >"$TMP/creds/b.yaml"
sed -e "s|^topology: .*|topology: $A|" "$TMP/r1/fab.yaml" >"$TMP/creds/a.yaml"

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$A"
G0=$(gen "$L")

# ---- ofc --socket A,B,C apply, the leader killed under it ------------------------
$OFC --socket "$ALL" apply "$TMP/creds/b.yaml" --json >"$TMP/o1.out" 2>"$TMP/o1.err" &
C=$!
until_state "$L" 10 'j.get("transaction")'
sleep 0.3
replica_stop "$L" KILL
set -- $(others "$L")
wait_leader 30 "$@" && ok || bad "no replica took over from $L"
N=$LEADER
wait $C && ok || bad "ofc given every replica, its leader killed: exit $?" "$(cat "$TMP/o1.err")"
until_state "$N" 10 'not j.get("transaction") and not j.get("queue")'
G1=$(gen "$N")
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); sys.exit(0 if t["state"] == "committed" and t["id"] == int(sys.argv[2]) else 1)' "$TMP/o1.out" "$G1" &&
	ok || bad "ofc's answer is the new leader's commit" "generation $G1: $(cat "$TMP/o1.out" "$TMP/o1.err")"
[ "$G1" -gt "$G0" ] && ok || bad "a commit after the kill" "generation $G0 before, $G1 after"
expect_json "j['topology']['spec'] == '$B' and j['at_target']" $OFC --socket "$TMP/$N.sock" status --json
# one line says the leader changed and where the answer came from
[ "$(grep -c "the leader changed" "$TMP/o1.err")" = 1 ] &&
	grep -q "^ofc: the leader changed: $TMP/$L.sock closed the connection before answering; the answer is from the leader now, $TMP/$N.sock, asked with the same request_key ofc-[0-9a-f]* " "$TMP/o1.err" &&
	ok || bad "ofc's line on the leader that changed" "$(cat "$TMP/o1.err")"
# an election's redirects are said once each, not every pass
[ -z "$(grep "does not lead" "$TMP/o1.err" | sort | uniq -d)" ] && ok ||
	bad "the redirects said once a walk" "$(cat "$TMP/o1.err")"
replica_start "$L" --probe-interval 0 --credentials-dir "$TMP/creds"

# ---- given the leader only: the error names the key; sent again, the outcome ------
L=$N
G1=$(gen "$L")
$OFC --socket "$TMP/$L.sock" apply "$TMP/creds/a.yaml" >"$TMP/o2.out" 2>"$TMP/o2.err" &
C=$!
until_state "$L" 10 'j.get("transaction")'
sleep 0.3
replica_stop "$L" KILL
wait $C
rc=$?
KEY=$(sed -n 's/.*OFC_REQUEST_KEY=\(ofc-[0-9a-f]*\) sends it again as the same request.*/\1/p' "$TMP/o2.err")
[ "$rc" = 1 ] && [ -n "$KEY" ] && grep -q "give every replica, --socket A,B,C, and ofc asks the next leader itself" "$TMP/o2.err" &&
	ok || bad "one address, the leader killed: exit $rc, the key named" "$(cat "$TMP/o2.err")"
set -- $(others "$L")
wait_leader 30 "$@" && ok || bad "no replica took over from $L"
N=$LEADER
until_state "$N" 10 'not j.get("transaction") and not j.get("queue")'
OFC_REQUEST_KEY=$KEY $OFC --socket "$ALL" apply "$TMP/creds/a.yaml" --json >"$TMP/o3.out" 2>"$TMP/o3.err" &&
	ok || bad "sent again with OFC_REQUEST_KEY" "$(cat "$TMP/o3.err")"
G2=$(gen "$N")
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); sys.exit(0 if t["state"] == "committed" and t["id"] == int(sys.argv[2]) else 1)' "$TMP/o3.out" "$G2" &&
	ok || bad "the resend's answer is the commit of $A" "generation $G2: $(cat "$TMP/o3.out" "$TMP/o3.err")"
expect_json "j['topology']['spec'] == '$A' and j['at_target']" $OFC --socket "$TMP/$N.sock" status --json
# once more: the recorded outcome, no new transaction
OFC_REQUEST_KEY=$KEY $OFC --socket "$ALL" apply "$TMP/creds/a.yaml" >"$TMP/o4.out" 2>&1 &&
	grep -q "the recorded outcome of request_key '$KEY'" "$TMP/o4.out" && [ "$(gen "$N")" = "$G2" ] &&
	ok || bad "the key sent a third time" "$(cat "$TMP/o4.out")"
# ---- the Python client given every replica, the leader killed under it -----------
replica_start "$L" --probe-interval 0 --credentials-dir "$TMP/creds"
L=$N
PYTHONPATH="$BUILD/python" $PY -m ofc_client --socket "$TMP/r1.sock" --socket "$TMP/r2.sock" \
	--socket "$TMP/r3.sock" --timeout 60 reconfigure "$B" >"$TMP/p1.out" 2>"$TMP/p1.err" &
C=$!
until_state "$L" 10 'j.get("transaction")'
sleep 0.3
replica_stop "$L" KILL
set -- $(others "$L")
wait_leader 30 "$@" && ok || bad "no replica took over from $L"
N=$LEADER
wait $C && ok || bad "the Python client given every replica, its leader killed: exit $?" "$(cat "$TMP/p1.err")"
expect_json "j['topology']['spec'] == '$B' and j['at_target']" $OFC --socket "$TMP/$N.sock" status --json
# the same one line as ofc's: which replica lost the answer, which gave it
[ "$(grep -c "the leader changed" "$TMP/p1.err")" = 1 ] &&
	grep -q "^ofc_client: the leader changed: $TMP/$L.sock closed the connection before answering; the answer is from the leader now, $TMP/$N.sock, asked with the same request_key [0-9a-f]* " "$TMP/p1.err" &&
	ok || bad "the Python client's line on the leader that changed" "$(cat "$TMP/p1.err")"
finish
