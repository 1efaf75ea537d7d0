#!/bin/sh
# A mutation runs at most once across a failover (docs/control.md, "Sending
# a mutation again"; docs/ofcd.md, "Replicas"): three replicas on a 3-member
# etcd, an emulated switch slow enough (--delay-ms) that a reconfigure is
# still running when the leader is killed with kill -9.
# - a client given every replica, its request killed with the leader,
#   sends it again to the next replica with the same request_key: the new
#   leader rolls back the killed transaction, settles the key as not done,
#   and runs the resend once (one commit after the failover, nothing run
#   from etcd's queue);
# - the same key sent again deliberately gets the recorded outcome, with
#   no new transaction; the key for another request is refused;
# - a mutation sent while the new leader takes over is not read back from
#   etcd's queue as the last leader's (it ran twice so);
# - what a leader left started is settled at the next takeover by the
#   record: committed since (a resend gets "committed"), or not (the
#   resend runs once).
SUITE=cluster-dedup
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster-dedup: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
three_replicas 20
ALL="$TMP/r1.sock,$TMP/r2.sock,$TMP/r3.sock"
# send KEY TOPOLOGY [ADDRESSES]: a Reconfigure with request_key KEY through
# the Python client, given every replica; prints "STATUS TXN_STATE TXN_ID
# MESSAGE"
send() {
	$PY - "$BUILD/python" "${3:-$ALL}" "$1" "$2" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import ofc_client
from ofc_client.pb import control_pb2 as pb
req = pb.Request()
req.reconfigure.topology = sys.argv[4]
req.request_key = sys.argv[3]
r = ofc_client.Client(sys.argv[2].split(","), timeout=40).call(req, check=False)
print(pb.Status.Name(r.status), r.transaction.state or "-", r.transaction.id, r.message)
EOF
}

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$A"
G0=$(gen "$L")

# settled KEY SPEC: how the new leader $N settled KEY's run on the killed
# leader $L, into RAN: the kill landed before $L's commit (it "did not take
# effect": the resend ran on $N) or after it (the key is that commit, made on
# $L, and the resend got it). Both are right; the timing picks one.
settled() {
	RAN=
	if grep -q "request_key '$1' (reconfigure $2, ticket [0-9]* on $L) had started when its leader went away and did not take effect" "$TMP/$N.log"; then
		RAN=$N
	elif grep -q "request_key '$1' (reconfigure $2): committed transaction [0-9]* (ticket [0-9]* on $L, which went away before it answered)" "$TMP/$N.log"; then
		RAN=$L
	fi
	[ -n "$RAN" ]
}

# ---- kill -9 the leader during a keyed reconfigure -------------------------------
K=dedup-$$-1
send "$K" "$B" >"$TMP/k1.out" 2>"$TMP/k1.err" &
C=$!
until_state "$L" 10 'j.get("transaction")'
sleep 0.3
replica_stop "$L" KILL
set -- $(others "$L")
wait_leader 30 "$@" && ok || bad "no replica took over"
N=$LEADER
wait $C
read -r st ts tid msg <"$TMP/k1.out"
[ "$st $ts" = "STATUS_OK committed" ] && ok ||
	bad "the client's resend after the kill" "$(cat "$TMP/k1.out" "$TMP/k1.err")"
until_state "$N" 10 'not j.get("transaction") and not j.get("queue")'
G1=$(gen "$N")
# the killed transaction rolled back (its id used), the resend committed
# once: the record is that commit's
[ "$G1" = "$tid" ] && [ "$G1" -gt "$G0" ] && ok ||
	bad "the record is the resend's commit" "generation $G0 before, $G1 after, the answer's $tid"
expect_json "j['topology']['spec'] == '$B' and j['at_target']" $OFC --socket "$TMP/$N.sock" status --json
runs=$(grep -c "ticket [0-9]*: reconfigure $B from .*: ok: committed transaction $tid " "$TMP/$N.log")
settled "$K" "$B"
{ [ "$runs" = 1 ] || { [ "$RAN" = "$L" ] && [ "$runs" = 0 ]; }; } && ok || bad "the request ran once on the new leader, not $runs times" "$(grep -i ticket "$TMP/$N.log")"
grep -q "ticket [0-9]* carries request_key '$K'" "$TMP/$N.log" && ok || bad "the key in the new leader's log"
grep -q "queued there and not started: run here" "$TMP/$N.log" &&
	bad "the new leader ran something from etcd's queue" "$(grep -i ticket "$TMP/$N.log")" || ok
settled "$K" "$B" && ok || bad "the new leader settled the killed run of the key" "$(grep -i request_key "$TMP/$N.log")"

# ---- the same key again: the recorded outcome, no new transaction ----------------
send "$K" "$B" >"$TMP/k2.out" 2>&1
read -r st ts tid msg <"$TMP/k2.out"
[ "$st $ts $tid" = "STATUS_OK committed $G1" ] && grep -q "(the recorded outcome of request_key '$K', ticket [0-9]* on $RAN: not run again)" "$TMP/k2.out" &&
	ok || bad "a deliberate resend of the key" "$(cat "$TMP/k2.out")"
[ "$(gen "$N")" = "$G1" ] && ok || bad "the resend made a transaction" "generation $(gen "$N"), was $G1"
runs=$(grep "ticket [0-9]*: reconfigure $B from .*: ok: committed transaction" "$TMP/$N.log" | grep -vc "recorded outcome")
[ "$runs" = 1 ] && ok || bad "a transaction for the resend" "$(grep -i ticket "$TMP/$N.log")"
grep -q "request_key '$K' of uid:$(id -u) ran before as ticket [0-9]*: answered with its recorded outcome, not run again" "$TMP/$N.log" &&
	ok || bad "the log of the recorded answer" "$(grep -i request_key "$TMP/$N.log")"
# ... on the follower it reaches first too: the client goes on to the leader
set -- $(others "$N")
send "$K" "$B" "$TMP/$1.sock,$TMP/$N.sock" >"$TMP/k3.out" 2>&1
grep -q "^STATUS_OK committed .*recorded outcome of request_key '$K'" "$TMP/k3.out" && ok ||
	bad "the resend through a follower" "$(cat "$TMP/k3.out")"
# the key is the request's: another request under it is refused
send "$K" "$A" >"$TMP/k4.out" 2>&1
grep -q "^STATUS_INVALID - 0 request_key '$K' was sent before for another request (reconfigure $B, ticket" "$TMP/k4.out" &&
	ok || bad "a key sent for another request" "$(cat "$TMP/k4.out")"
send "bad key" "$A" >"$TMP/k5.out" 2>&1
grep -q "^STATUS_INVALID - 0 request_key: 1 to 128 characters" "$TMP/k5.out" && ok || bad "a key with a space" "$(cat "$TMP/k5.out")"
[ "$(gen "$N")" = "$G1" ] && ok || bad "a refused key made a transaction" "generation $(gen "$N")"
# the outcomes live in etcd beside the queue
etcd_ctl get --print-value-only /ofc/torus64-ocs/outcomes 2>/dev/null | grep -q "$K" &&
	ok || bad "no outcomes key in etcd"

# ---- what a dead leader left started is settled by the record ----------------------
# Every replica stopped, then etcd's outcomes as a leader killed between
# its commit and its answer leaves them: K2 started before the record's
# last commit (it is that commit), K3 at it (it did not take effect). The
# next leader answers K2's resend "committed", and runs K3's once.
G=$(gen "$N")
for r in r1 r2 r3; do replica_stop $r; done
$PY - "$BUILD/python" "$ETCD_C1" "uid:$(id -u)" "$G" "$B" "$A" "$ETCD_PKI" <<'EOF' && ok || bad "the outcomes put in etcd"
import base64, json, ssl, sys, time, urllib.request
sys.path.insert(0, sys.argv[1])
from ofc_client.pb import state_pb2 as st
port, owner, gen, b, a = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
m = st.MutationOutcomes(epoch=1)
for key, target, before, ticket in (("k2-committed", b, gen - 1, 7), ("k3-rolled-back", a, gen, 8)):
    m.outcomes.add(key=key, owner=owner, kind="reconfigure", target=target, ticket=ticket,
                   epoch=1, replica="r9", done=False, generation_before=before,
                   time_unix_ms=int(time.time() * 1000))
b64 = lambda x: base64.b64encode(x).decode()
body = json.dumps({"key": b64(b"/ofc/torus64-ocs/outcomes"), "value": b64(m.SerializeToString())})
pki = sys.argv[7]  # (etcd asks for the client's certificate)
ctx = ssl.create_default_context(cafile=pki + "/ca.pem")
ctx.load_cert_chain(pki + "/client.pem", pki + "/client.key")
r = urllib.request.urlopen("https://127.0.0.1:%s/v3/kv/put" % port, body.encode(), timeout=5,
                           context=ctx)
sys.exit(0 if r.status == 200 else 1)
EOF
for r in r1 r2 r3; do replica_start $r --probe-interval 0; done
wait_leader 30 r1 r2 r3 && ok || bad "no leader after the restart"
N=$LEADER
grep -q "request_key 'k2-committed' (reconfigure $B): committed transaction $G (ticket 7 on r9, which went away before it answered)" "$TMP/$N.log" &&
	ok || bad "K2 settled as committed" "$(grep -i request_key "$TMP/$N.log")"
send k2-committed "$B" >"$TMP/k6.out" 2>&1
read -r st ts tid msg <"$TMP/k6.out"
[ "$st $ts $tid" = "STATUS_OK committed $G" ] && grep -q "recorded outcome of request_key 'k2-committed', ticket 7 on r9" "$TMP/k6.out" &&
	ok || bad "K2's resend: the recorded commit" "$(cat "$TMP/k6.out")"
grep -q "request_key 'k3-rolled-back' (reconfigure $A, ticket 8 on r9) had started when its leader went away and did not take effect" "$TMP/$N.log" &&
	ok || bad "K3 settled as not done" "$(grep -i request_key "$TMP/$N.log")"
send k3-rolled-back "$A" >"$TMP/k7.out" 2>&1
read -r st ts tid msg <"$TMP/k7.out"
[ "$st $ts" = "STATUS_OK committed" ] && [ "$tid" -gt "$G" ] && ! grep -q "recorded outcome" "$TMP/k7.out" &&
	ok || bad "K3's resend runs" "$(cat "$TMP/k7.out")"
[ "$(gen "$N")" = "$tid" ] && ok || bad "K3's commit is the record" "generation $(gen "$N"), K3's $tid"

# ---- ofc given every replica (OFC_SOCKET), the leader killed under it --------------
# ofc sets a key of its own, keeps it while it walks the replicas, and
# exits 0 with the new leader's one commit; OFC_REQUEST_KEY sends it again
# by hand as the same request.
L=$N
for r in r1 r2 r3; do eval "N0_$r=$(wc -l <"$TMP/$r.log")"; done
OFC_SOCKET="$ALL" $OFC reconfigure --topology "$B" --json --timeout 40 >"$TMP/o1.out" 2>"$TMP/o1.err" &
C=$!
until_state "$L" 10 'j.get("transaction")'
sleep 0.3
replica_stop "$L" KILL
set -- $(others "$L")
wait_leader 30 "$@" && ok || bad "no replica took over from $L"
N=$LEADER
wait $C && ok || bad "ofc given every replica, its leader killed: exit $?" "$(cat "$TMP/o1.err")"
KEY=$(sed -n "s/.*ticket [0-9]* carries request_key '\(ofc-[0-9a-f]*\)'.*/\1/p" "$TMP/$L.log" | tail -1)
[ -n "$KEY" ] && ok || bad "ofc's request_key in the killed leader's log" "$(tail -5 "$TMP/$L.log")"
settled "$KEY" "$B" && ok || bad "the killed run of ofc's key settled" "$(grep -i request_key "$TMP/$N.log")"
G2=$(gen "$N")
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); sys.exit(0 if t["state"] == "committed" and t["id"] == int(sys.argv[2]) else 1)' "$TMP/o1.out" "$G2" &&
	ok || bad "ofc's answer is the new leader's commit" "generation $G2: $(cat "$TMP/o1.out")"
# every replica's log since: one commit of it, on the new leader
runs=$(for r in r1 r2 r3; do eval "tail -n +\$((N0_$r + 1)) \"\$TMP/$r.log\""; done |
	grep "ticket [0-9]*: reconfigure $B from .*: ok: committed transaction" | grep -vc "recorded outcome")
# (a leader killed right after its commit may not have logged it)
{ [ "$runs" = 1 ] || { [ "$RAN" = "$L" ] && [ "$runs" = 0 ]; }; } && ok || bad "ofc's request ran once, not $runs times" "$(grep -h "reconfigure $B" "$TMP"/r?.log | tail -5)"
OFC_REQUEST_KEY=$KEY OFC_SOCKET="$ALL" $OFC reconfigure --topology "$B" >"$TMP/o2.out" 2>&1 &&
	grep -q "the recorded outcome of request_key '$KEY', ticket [0-9]* on $RAN: not run again" "$TMP/o2.out" &&
	ok || bad "ofc sent again with OFC_REQUEST_KEY" "$(cat "$TMP/o2.out")"
[ "$(gen "$N")" = "$G2" ] && ok || bad "ofc's resend made a transaction" "generation $(gen "$N"), was $G2"
finish
