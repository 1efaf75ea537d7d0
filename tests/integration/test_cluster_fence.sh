#!/bin/sh
# Fencing of ofcd's replicas against whoever writes etcd (docs/ofcd.md,
# "Replicas"; docs/security.md). With the replicas' own certificate, the
# leader key written over and bound to the follower's lease (`etcdctl put
# KEY V --lease=<r2's>`: its create revision, the fence, stays) never makes
# two replicas lead: the leader's next look at the key deposes it, the
# follower does not lead under a key it did not create and deletes it,
# and one of them wins the next epoch (the elections' counter, one up); two reconfigures sent at once, one to
# each replica, never both commit; once the leader key is deleted every
# replica shows the generation etcd holds, not stale. Without the
# certificate (none, another CA's, plain http), a local user's MutationQueue
# entry of uid 0 and the leader key's deletion are refused by etcd itself,
# and nothing changes.
SUITE=cluster_fence
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_fence: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
A=torus:8x8
B=circulant:64:3,8
K=/ofc/torus64-ocs
for r in r1 r2; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--delay-ms 5 --state "$TMP/e.state"
etcd_start 1 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log" "$TMP/etcd/openssl.log")"
# r1 reaches etcd through a proxy the lapse test stops
python3 "$(dirname "$0")/tcp_proxy.py" "$TMP/proxy.port" 0:$ETCD_C1 &
PROXY=$!
HELPER_PIDS="$HELPER_PIDS $PROXY"
deadline 5
while [ ! -s "$TMP/proxy.port" ] && ! past $_end; do sleep 0.02; done
read -r P1 <"$TMP/proxy.port"
for r in r1 r2; do replica_dir $r "$TMP/a.yaml" "$e_port"; done
r1_etcd="etcds://127.0.0.1:$P1"
# (a lease of 4 s, not cluster_env's 2: beside other suites on a loaded
# machine a 2 s lease's fence can close in the middle of a commit)
# (a gateway socket for nobody: the queue's entries through the gateway
# name its uid; no gateway connects)
replica_start r1 --probe-interval 0 --cluster-ttl 4s --gateway-socket "$TMP/r1.gw" --gateway-uid 65534
wait_leader 20 r1 && ok || bad "r1 does not lead" "$(tail -3 "$TMP/r1.log")"
replica_start r2 --probe-interval 0 --cluster-ttl 4s --gateway-socket "$TMP/r2.gw" --gateway-uid 65534

# kv KEY FIELD: the key's FIELD as etcd says (create_revision, lease, ...; 0: no key)
kv() {
	etcd_ctl get "$1" -w json 2>/dev/null | python3 -c 'import json,sys
kvs = json.load(sys.stdin).get("kvs") or [{}]
print(kvs[0].get(sys.argv[1], 0))' "$2"
}
# elections: the elections' counter etcd holds (the epoch; 0: none)
elections() { etcd_ctl get --print-value-only "$K/epoch" 2>/dev/null | grep -x '[0-9]*' || echo 0; }
# gen_etcd: the generation of the record etcd holds
gen_etcd() {
	etcd_ctl get --print-value-only "$K/state" 2>/dev/null | head -c -1 | $PY -c 'import sys
sys.path.insert(0, sys.argv[1])
from ofc_client.pb import state_pb2
r = state_pb2.FabricRecord()
r.ParseFromString(sys.stdin.buffer.read())
print(r.generation)' "$BUILD/python"
}
# view NAME: "GENERATION STALE" as NAME shows them
view() {
	cluster_json "$1" && python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
print(j.get("config_generation", 0), j.get("cluster", {}).get("stale", False))' "$TMP/$1.json"
}
deadline 10
until [ "$(kv "$K/replicas/r2" lease)" != 0 ] || past $_end; do sleep 0.1; done
L2=$(kv "$K/replicas/r2" lease)
R0=$(kv "$K/leader" create_revision)
E0=$(elections)
[ "$L2" != 0 ] && [ "$R0" != 0 ] && [ "$E0" != 0 ] && ok ||
	bad "r2's registration or r1's leader key missing" "lease $L2, revision $R0, epoch $E0"

# ---- the leader key written over, bound to r2's lease ------------------------------
# leaders.py SECS NAME...: each replica's status in turn for SECS seconds;
# two leading at once (one says it leads before and after the other says
# it does, under the same epoch) fails
cat >"$TMP/leaders.py" <<'EOF'
import json, subprocess, sys, time
ofc, tmp, secs, names = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
def view(n):
    r = subprocess.run([ofc, "--socket", "%s/%s.sock" % (tmp, n), "status", "--json",
                        "--timeout", "5"], capture_output=True, text=True)
    try:
        c = json.loads(r.stdout).get("cluster", {})
    except ValueError:
        return None
    return (c.get("leader") or {}).get("epoch", 0) if c.get("role") == "leader" else None
seen, end = [], time.time() + secs
while time.time() < end:
    for n in names:
        seen.append((n, view(n)))
both = [(a, b) for a, b, c in zip(seen, seen[1:], seen[2:])
        if a[1] is not None and b[1] is not None and a[0] == c[0] and a[1] == c[1]]
print("%d looks; leading: %s" % (len(seen), sorted(set("%s@%s" % s for s in seen if s[1] is not None))))
for a, b in both[:3]:
    print("both lead: %s (epoch %s) and %s (epoch %s)" % (a[0], a[1], b[0], b[1]))
sys.exit(1 if both else 0)
EOF
V="{\"name\":\"r2\",\"socket\":\"$TMP/r2.sock\"}"
etcd_ctl put "$K/leader" "$V" --lease="$(printf '%x' "$L2")" >/dev/null &&
	ok || bad "the forgery with the replicas' certificate was refused"
$PY "$TMP/leaders.py" "$OFC" "$TMP" 6 r1 r2 >"$TMP/leaders.out" 2>&1 &&
	ok || bad "two replicas lead at once after the leader key was bound to r2's lease" "$(cat "$TMP/leaders.out")"
grep -q "this replica leads fabric torus64-ocs no more (the leader key was written over, bound to another lease" "$TMP/r1.log" &&
	ok || bad "r1 was not deposed by the key written over" "$(grep -i "leads\|lead " "$TMP/r1.log" | tail -3)"
# (shown stale until it read etcd again: logged when r1's loop hears it
# was deposed, even where r1 won the next election before that; current
# once a sync or its takeover read etcd. On a loaded machine, seconds.)
deadline 15
until grep -q "etcd read again since this replica stopped leading" "$TMP/r1.log" || past "$_end"; do
	sleep 0.2
done
grep -q "this replica stopped leading (the leader key was written over, .*) and has not read etcd again since: what this replica shows is stale" "$TMP/r1.log" &&
	grep -q "etcd read again since this replica stopped leading: what this replica shows is current" "$TMP/r1.log" &&
	ok || bad "r1 deposed: not shown stale until it read etcd again" "$(grep -i "stale\|current" "$TMP/r1.log" | tail -3)"
grep -q "the leader key was bound to this replica's lease under an epoch it never won .*: deleted it" "$TMP/r2.log" &&
	ok || bad "r2 did not delete the key bound to its lease" "$(tail -3 "$TMP/r2.log")"
! grep -q "leading fabric torus64-ocs (epoch $E0)" "$TMP/r2.log" &&
	ok || bad "r2 led under r1's epoch $E0"
wait_leader 20 r1 r2 && ok || bad "no leader after the forgery" "$(tail -3 "$TMP/r1.log" "$TMP/r2.log")"
R1=$(kv "$K/leader" create_revision)
E1=$(elections)
[ "$R1" -gt "$R0" ] && [ "$(kv "$K/leader" lease)" = "$(kv "$K/replicas/$LEADER" lease)" ] &&
	ok || bad "the new leader's key" "revision $R1 (was $R0), lease $(kv "$K/leader" lease), $LEADER's $(kv "$K/replicas/$LEADER" lease)"

# The epoch every replica shows counts elections: the forged key was
# deleted and one campaign won, so it is one more, however many writes
# etcd took meanwhile (docs/ofcd.md, "Replicas"); the leader key says it.
epoch_of() { cluster_json "$1" && python3 -c 'import json,sys
print(((json.load(open(sys.argv[1])).get("cluster") or {}).get("leader") or {}).get("epoch", 0))' "$TMP/$1.json"; }
[ "$E1" = $((E0 + 1)) ] && ok || bad "one election after the forgery: epoch $E1, was $E0"
[ "$(etcd_ctl get --print-value-only "$K/leader" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("epoch"))')" = "$E1" ] &&
	ok || bad "the leader key does not say epoch $E1" "$(etcd_ctl get --print-value-only "$K/leader")"
for r in r1 r2; do
	[ "$(epoch_of $r)" = "$E1" ] && ok || bad "$r shows epoch $(epoch_of $r), the elections' counter is $E1"
done

# ---- a leader key no replica holds: the replicas delete it and campaign ------------
# Put over the leader's key with no lease, naming r9 (no such replica);
# then bound to a lease the writer granted itself, naming a replica that
# runs. Before, every replica followed it for as long as it stayed.
for how in nolease otherlease; do
	E=$(kv "$K/leader" create_revision)
	N=$(elections)
	case $how in
	nolease) etcd_ctl put "$K/leader" '{"name":"r9","socket":"/tmp/r9.sock"}' >/dev/null ;;
	otherlease)
		L=$(etcd_ctl lease grant 60 | awk '{print $2}')
		etcd_ctl put "$K/leader" "{\"name\":\"$LEADER\"}" --lease="$L" >/dev/null
		;;
	esac
	deadline 20
	until grep -q "the leader key (created at revision $E) was .*no replica leads under it; deleted it" "$TMP/r1.log" "$TMP/r2.log" ||
		past $_end; do sleep 0.1; done
	case $how in
	nolease) why="bound to no lease" ;;
	otherlease) why="naming $LEADER but bound to a lease that is not its" ;;
	esac
	grep -q "the leader key (created at revision $E) was $why (written by someone holding etcd's credentials): no replica leads under it; deleted it" "$TMP/r1.log" "$TMP/r2.log" &&
		ok || bad "the leader key $how was not deleted as no replica's" "$(tail -3 "$TMP/r1.log" "$TMP/r2.log")"
	wait_leader 20 r1 r2 && ok || bad "no leader after the key $how" "$(tail -3 "$TMP/r1.log" "$TMP/r2.log")"
	[ "$(kv "$K/leader" create_revision)" -gt "$E" ] &&
		[ "$(kv "$K/leader" lease)" = "$(kv "$K/replicas/$LEADER" lease)" ] &&
		ok || bad "the leader key after the key $how" "revision $(kv "$K/leader" create_revision), lease $(kv "$K/leader" lease)"
	[ "$(elections)" = $((N + 1)) ] && ok || bad "the key $how: epoch $(elections) after one election, was $N"
done
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$A"

# ---- two reconfigures at once, one to each replica: never both commit ----------------
# (a client of its own: it does not walk to the leader on NOT_LEADER)
cat >"$TMP/req.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from ofc_client import _Conn
from ofc_client.pb import control_pb2 as pb
c = _Conn(sys.argv[2], 60, 1 << 20)
req = pb.Request(id=7)
req.reconfigure.topology = sys.argv[3]
c.send(req)
r = c.recv()
print(pb.Status.Name(r.status), r.message)
EOF
G0=$(gen_etcd)
$PY "$TMP/req.py" "$BUILD/python" "$TMP/r1.sock" "$B" >"$TMP/q1.out" 2>&1 &
q1=$!
$PY "$TMP/req.py" "$BUILD/python" "$TMP/r2.sock" "$B" >"$TMP/q2.out" 2>&1
wait $q1
n=$(grep -c "^STATUS_OK committed" "$TMP/q1.out" "$TMP/q2.out" | awk -F: '{s += $2} END {print s}')
[ "$n" = 1 ] && grep -q "^STATUS_NOT_LEADER " "$TMP/q1.out" "$TMP/q2.out" &&
	ok || bad "two reconfigures at once: want one commit and one NOT_LEADER" "$(cat "$TMP/q1.out" "$TMP/q2.out")"
G1=$(gen_etcd)
[ "$G1" -gt "$G0" ] && ok || bad "etcd's record after the commit" "generation $G1, was $G0"

# ---- the leader key deleted: every replica shows what etcd holds -------------------
etcd_ctl del "$K/leader" >/dev/null && ok || bad "the leader key's deletion"
wait_leader 20 r1 r2 && ok || bad "no leader after the key was deleted"
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$A"
G2=$(gen_etcd)
[ "$G2" -gt "$G1" ] && ok || bad "etcd's record after the new leader's commit" "generation $G2, was $G1"
for r in r1 r2; do
	deadline 10
	until [ "$(view $r)" = "$G2 False" ] || past $_end; do sleep 0.1; done
	[ "$(view $r)" = "$G2 False" ] && ok || bad "$r does not show etcd's generation $G2" "$(view $r)"
done

# ---- without the certificate: etcd refuses the queue forgery itself -------------------
# A MutationQueue entry as the issue's local user wrote it (uid 0,
# reconfigure B), put under the queue's key, and the leader key deleted.
$PY - "$BUILD/python" "$K" "$B" >"$TMP/forge.json" <<'EOF'
import base64, json, sys
sys.path.insert(0, sys.argv[1])
from ofc_client.pb import control_pb2 as pb, state_pb2 as st
req = pb.Request(id=1)
req.reconfigure.topology = sys.argv[3]
q = st.MutationQueue(epoch=1)
q.entries.add(ticket=1, request=req.SerializeToString(), uid=0, gid=0, pid=1,
              kind="reconfigure", target=sys.argv[3])
b64 = lambda x: base64.b64encode(x).decode()
print(json.dumps({"key": b64((sys.argv[2] + "/queue").encode()), "value": b64(q.SerializeToString())}))
EOF
DEL="{\"key\":\"$(printf '%s' "$K/leader" | base64)\"}"
Q0=$(kv "$K/queue" mod_revision)
E2=$(kv "$K/leader" create_revision)
P=$ETCD_PKI
U="https://127.0.0.1:$ETCD_C1"
for how in "--cacert $P/ca.pem" "--cacert $P/ca.pem --cert $P/intruder.pem --key $P/intruder.key" "-k"; do
	# shellcheck disable=SC2086 # (paths without spaces)
	curl -s -m 3 $how -X POST "$U/v3/kv/put" -d @"$TMP/forge.json" >"$TMP/c1.out" 2>&1
	# shellcheck disable=SC2086
	curl -s -m 3 $how -X POST "$U/v3/kv/deleterange" -d "$DEL" >"$TMP/c2.out" 2>&1
	! grep -q revision "$TMP/c1.out" "$TMP/c2.out" && ok || bad "etcd took a write with curl $how" "$(cat "$TMP/c1.out" "$TMP/c2.out")"
done
curl -s -m 3 -X POST "http://127.0.0.1:$ETCD_C1/v3/kv/put" -d @"$TMP/forge.json" >"$TMP/c3.out" 2>&1
! grep -q revision "$TMP/c3.out" && ok || bad "etcd took plain http" "$(cat "$TMP/c3.out")"
# (the same request with the client certificate is one etcd takes: the
# refusals above are the certificate's)
etcd_curl "$ETCD_C1" /v3/kv/put "{\"key\":\"$(printf /ofc-test/probe | base64)\",\"value\":\"eA==\"}" |
	grep -q revision && ok || bad "the control request with the client certificate"
sleep 1
[ "$(kv "$K/queue" mod_revision)" = "$Q0" ] && [ "$(kv "$K/leader" create_revision)" = "$E2" ] &&
	ok || bad "etcd changed: queue $(kv "$K/queue" mod_revision) (was $Q0), leader $(kv "$K/leader" create_revision) (was $E2)"
grep -q "rejected connection from .*certificate signed by unknown authority" "$TMP/etcd/e1.log" &&
	ok || bad "etcd did not say it refused the intruder's certificate"
for r in r1 r2; do
	[ "$(view $r)" = "$G2 False" ] && ok || bad "$r changed after the refused forgery" "$(view $r)"
	! grep -q "last leader's ticket" "$TMP/$r.log" && ok || bad "$r ran a forged ticket"
done

# ---- with the certificate: a replayed entry has its record's rights, no more ----------
# The next leader runs the queue as the entries' principals: a uid that
# is not root nor in --admin-group is refused (before, every entry not
# through the gateway ran as an admin); a tenant's request through the
# gateway is authorised by its role; an entry claiming the gateway from
# another uid is not run.
$PY - "$BUILD/python" "$K" "$B" >"$TMP/forge2.json" <<'EOF2'
import base64, json, sys
sys.path.insert(0, sys.argv[1])
from ofc_client.pb import control_pb2 as pb, state_pb2 as st
def rq(principal=None):
    r = pb.Request(id=1)
    r.reconfigure.topology = sys.argv[3]
    if principal:
        r.principal.CopyFrom(principal)
    return r.SerializeToString()
tenant = pb.Principal(identity="cn:tenant-a", role=pb.Principal.ROLE_TENANT, partitions=["slurm-job-*"])
admin = pb.Principal(identity="cn:admin", role=pb.Principal.ROLE_ADMIN)
q = st.MutationQueue(epoch=1)
q.entries.add(ticket=1, request=rq(), uid=65534, gid=65534, pid=1, kind="reconfigure", target=sys.argv[3])
q.entries.add(ticket=2, request=rq(tenant), uid=65534, gid=65534, pid=1, gateway=True, kind="reconfigure", target=sys.argv[3])
q.entries.add(ticket=3, request=rq(admin), uid=1234, gid=1234, pid=1, gateway=True, kind="reconfigure", target=sys.argv[3])
b64 = lambda x: base64.b64encode(x).decode()
print(json.dumps({"key": b64((sys.argv[2] + "/queue").encode()), "value": b64(q.SerializeToString())}))
EOF2
G3=$(gen_etcd)
etcd_curl "$ETCD_C1" /v3/kv/put "$(cat "$TMP/forge2.json")" | grep -q revision &&
	etcd_ctl del "$K/leader" >/dev/null && ok || bad "the queue's entries with the certificate"
deadline 20
until grep -q "last leader's ticket 3 .*: not run" "$TMP/r1.log" "$TMP/r2.log" || past $_end; do sleep 0.1; done
wait_leader 20 r1 r2 && ok || bad "no leader after the queue's entries"
sleep 1
grep -q "denied reconfigure to uid 65534 gid 65534 pid 1 on the main socket" "$TMP/$LEADER.log" &&
	ok || bad "uid 65534's replayed reconfigure was not refused" "$(grep -i "ticket\|denied" "$TMP/$LEADER.log" | tail -5)"
grep -q "denied to cn:tenant-a (tenant) through the gateway: permission denied: cn:tenant-a is a tenant and reconfigures its partitions only" "$TMP/$LEADER.log" &&
	ok || bad "the tenant's replayed reconfigure was not refused as a tenant's" "$(grep -i "ticket\|denied" "$TMP/$LEADER.log" | tail -5)"
grep -q "the last leader's ticket 3 in etcd's queue (uid 1234): not run: it says it came through the gateway, but from a uid that is not --gateway-uid" "$TMP/$LEADER.log" &&
	ok || bad "an entry claiming the gateway from uid 1234 was run" "$(grep -i "ticket" "$TMP/$LEADER.log" | tail -5)"
[ "$(gen_etcd)" = "$G3" ] && ! grep -q "is the last leader's ticket [123]," "$TMP/r1.log" "$TMP/r2.log" &&
	ok || bad "a replayed entry ran" "generation $(gen_etcd), was $G3" "$(grep "last leader's ticket" "$TMP/r1.log" "$TMP/r2.log")"

# ---- a lapse only r1 saw: it leads again under the epoch it won ----------------------
# Cut off from etcd past its lease while etcd keeps the lease alive (an
# etcdctl keeps it, as etcd does its leases through an election of its
# own): r1 steps down, and back in touch finds the key it created still
# bound to its lease: it leads under that epoch again, and r2 never does.
replica_stop r2
mv "$TMP/r2.log" "$TMP/r2.log.1"
wait_leader 20 r1 && ok || bad "r1 does not lead with r2 stopped"
replica_start r2 --probe-interval 0 --cluster-ttl 4s --gateway-socket "$TMP/r2.gw" --gateway-uid 65534
R0=$(kv "$K/leader" create_revision)
E0=$(elections)
etcd_ctl lease keep-alive "$(printf '%x' "$(kv "$K/replicas/r1" lease)")" >/dev/null 2>&1 &
KEEP=$!
HELPER_PIDS="$HELPER_PIDS $KEEP"
kill -9 $PROXY
wait $PROXY 2>/dev/null
deadline 10
until grep -q "could not renew its lease in time" "$TMP/r1.log" || past $_end; do sleep 0.1; done
grep -q "this replica leads fabric torus64-ocs no more (this replica could not renew its lease in time" "$TMP/r1.log" &&
	ok || bad "r1 cut off did not step down" "$(tail -3 "$TMP/r1.log")"
python3 "$(dirname "$0")/tcp_proxy.py" "$TMP/proxy2.port" "$P1:$ETCD_C1" &
HELPER_PIDS="$HELPER_PIDS $!"
deadline 15
until [ "$(grep -c "leading fabric torus64-ocs (epoch $E0): taking over" "$TMP/r1.log")" = 2 ] ||
	past $_end; do sleep 0.1; done
kill $KEEP
cp "$TMP/r2.log" "$TMP/r2.log.2"
wait_leader 10 r1 r2
[ "$LEADER" = r1 ] && [ "$(kv "$K/leader" create_revision)" = "$R0" ] && [ "$(elections)" = "$E0" ] &&
	[ "$(grep -c "leading fabric torus64-ocs (epoch $E0): taking over" "$TMP/r1.log")" = 2 ] &&
	ok || bad "r1 did not lead again under its epoch $E0" "leader $LEADER, epoch $(elections), revision $(kv "$K/leader" create_revision)" "$(tail -4 "$TMP/r1.log")"
! grep -q "taking over" "$TMP/r2.log.2" && ok || bad "r2 led while r1's key stood" "$(grep "taking over" "$TMP/r2.log")"

finish
