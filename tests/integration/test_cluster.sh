#!/bin/sh
# Replicas of ofcd on a 3-member etcd cluster (docs/ofcd.md,
# "Replicas"), all on loopback, with an emulated switch that takes 10 ms a
# change and logs which connection sent each command (each replica logs in
# as its own user). Lean for make test: three kill -9s of the leader in the
# middle of an apply (bench/cluster_soak.sh kills 100), one SIGSTOP past
# the lease, etcd losing one member and then its quorum, and a replica cut
# off from etcd by stopping the proxy it reaches etcd through. Each replica
# has an ofc-gateway before it: a follower's redirects a mutation to the
# leader's, and ofc --server and the Python client ask the leader's URL.
SUITE=cluster
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
# Debian's python3 has python3-protobuf (the client's); a python3 earlier on
# PATH may not.
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
A=torus:8x8
B=circulant:64:3,8
Q=torus:4x16 # (only ever the queued mutation's target)
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --delay-ms 10 --log "$TMP/e.log" --log-sessions --state "$TMP/e.state"
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"

# r3 reaches etcd through a proxy the partition test stops
python3 "$(dirname "$0")/tcp_proxy.py" "$TMP/proxy.port" 0:$ETCD_C1 0:$ETCD_C2 0:$ETCD_C3 &
PROXY=$!
HELPER_PIDS="$HELPER_PIDS $PROXY"
deadline 5
while [ ! -s "$TMP/proxy.port" ] && ! past $_end; do sleep 0.02; done
read -r P1 P2 P3 <"$TMP/proxy.port"

# A gateway before each replica (the network API): a CA, the
# gateways' certificate and an admin's, made with the openssl CLI.
C="$TMP/pki"
mkdir -p "$C"
newkey() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" 2>/dev/null; }
newkey -x509 -days 2 -keyout "$C/ca.key" -out "$C/ca.pem" -subj /CN=ofc-cluster-test-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >"$C/server.ext"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >"$C/admin.ext"
for n in server admin; do
	newkey -keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$n"
	openssl x509 -req -in "$C/$n.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -extfile "$C/$n.ext" -out "$C/$n.pem" >/dev/null 2>&1
done
echo "cn:admin admin" >"$TMP/policy"
for r in r1 r2 r3; do
	$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" \
		--ca "$C/ca.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/$r.gw" \
		--port-file "$TMP/$r.gwport" 2>"$TMP/$r.gwlog" &
	HELPER_PIDS="$HELPER_PIDS $!"
done
for r in r1 r2 r3; do
	deadline 10
	while [ ! -s "$TMP/$r.gwport" ] && ! past $_end; do sleep 0.02; done
	eval "GW_$r=https://127.0.0.1:$(cat "$TMP/$r.gwport")"
done
[ -s "$C/admin.pem" ] && [ -s "$TMP/r3.gwport" ] && ok || bad "the gateways" "$(cat "$TMP/r1.gwlog")"
# rstart NAME: a replica, its gateway socket, and its gateway's URL advertised
rstart() {
	eval "_u=\$GW_$1"
	replica_start "$1" --probe-interval 0 --gateway-socket "$TMP/$1.gw" --gateway-uid "$(id -u)" \
		--advertise "$_u"
}
for r in r1 r2 r3; do replica_dir $r "$TMP/a.yaml" "$e_port"; done
rstart r1
rstart r2
REPLICA_ETCD="etcds://127.0.0.1:$P1,127.0.0.1:$P2,127.0.0.1:$P3" rstart r3

now_ms() { date +%s%3N; } # (a date, not a Python: a tenth of a second of CPU each)

# check_consistent NAME WHAT: the record NAME serves equals what the switch
# holds (its --state file), is at its own target, topology A or B, and no
# transaction is unfinished
check_consistent() {
	cluster_json "$1"
	python3 - "$TMP/$1.json" "$TMP/e.state" "$A" "$B" "$Q" <<'EOF' && ok || bad "$2: record and device" "$(cat "$TMP/$1.json.why")"
import json, sys
j = json.load(open(sys.argv[1]))
rec = sorted((c["in_port"], c["out_port"]) for c in j["devices"][0].get("circuits", []))
dev = sorted(tuple(int(x) for x in l.split()[:2]) for l in open(sys.argv[2])
             if l.strip() and not l.startswith("#"))
why = []
if rec != dev: why.append("record %d entries, device %d, differ" % (len(rec), len(dev)))
if not j["at_target"]: why.append("not at target")
if j["topology"]["spec"] not in sys.argv[3:6]: why.append("topology " + j["topology"]["spec"])
if j.get("transaction"): why.append("unfinished " + str(j["transaction"]))
open(sys.argv[1] + ".why", "w").write("; ".join(why))
sys.exit(1 if why else 0)
EOF
}

# ---- election, followers, the leader named ------------------------------------
wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
set -- $(others "$L")
F=$1
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$B"
# the follower's state is the leader's, as its watch of etcd delivered it
deadline 10
until [ "$(cluster_json "$F" && python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config_generation"])' "$TMP/$F.json")" = 1 ] ||
	past $_end; do sleep 0.1; done
expect_json "j['config_generation'] == 1 and j['topology']['spec'] == '$B' and j['cluster']['role'] == 'follower' and j['cluster']['leader']['name'] == '$L' and j['cluster']['leader']['socket'] == '$TMP/$L.sock' and not j['cluster']['stale'] and len(j['cluster']['members']) == 3 and all(m['reachable'] for m in j['cluster']['members']) and j['cluster']['lease_ttl_seconds'] == 2" \
	$OFC --socket "$TMP/$F.sock" status --json
expect_stdout_has "replica    $F, follower; leader $L, epoch" $OFC --socket "$TMP/$F.sock" status
expect_stdout_has "etcd       e1 (127.0.0.1:$ETCD_C1) up" $OFC --socket "$TMP/$F.sock" status
# a follower answers a mutation NOT_LEADER with the leader's address ...
$PY - "$BUILD/python" "$TMP/$F.sock" "$L" "$TMP/$L.sock" <<'EOF' && ok || bad "NOT_LEADER from a follower"
import sys
sys.path.insert(0, sys.argv[1])
from ofc_client import _Conn
from ofc_client.pb import control_pb2 as pb
c = _Conn(sys.argv[2], 10, 1 << 20)
req = pb.Request(id=5)
req.reconfigure.topology = "torus:8x8"
c.send(req)
r = c.recv()
assert r.status == pb.STATUS_NOT_LEADER, r
assert r.leader.name == sys.argv[3] and r.leader.socket == sys.argv[4] and r.leader.epoch > 0, r
EOF
# ... which the CLI and the Python client ask once more
expect_exit 0 $OFC --socket "$TMP/$F.sock" reconfigure --topology "$A"
grep -q "does not lead; asking the leader, $L, at $TMP/$L.sock" "$TMP/err" && ok || bad "the CLI's retry" "$(cat "$TMP/err")"
$PY - "$BUILD/python" "$TMP/$F.sock" <<'EOF' && ok || bad "the Python client's retry"
import sys
sys.path.insert(0, sys.argv[1])
import ofc_client
r = ofc_client.Client(sys.argv[2]).reconfigure(topology="circulant:64:3,8")
assert r.transaction.state == "committed", r
EOF
# a follower's watchers see the leader's commits
$OFC --socket "$TMP/$F.sock" watch --json >"$TMP/watch.out" 2>&1 &
W=$!
sleep 0.5
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$A"
sleep 1
kill $W 2>/dev/null
wait $W 2>/dev/null
grep -q 'KIND_TRANSACTION_COMMITTED' "$TMP/watch.out" && ok || bad "a follower's watch" "$(head -c 600 "$TMP/watch.out")"
check_consistent "$F" "after the first commits"

# ---- through the gateways: a follower's sends the client to the leader's ----------
eval "FU=\$GW_$F LU=\$GW_$L"
TLS="--cacert $C/ca.pem --cert $C/admin.pem --key $C/admin.key"
got=$(curl -sS $TLS -o "$TMP/out" -D "$TMP/hdr" -w '%{http_code}' -X POST \
	-d "{\"topology\": \"$B\"}" "$FU/v1/reconfigure" 2>"$TMP/err")
[ "$got" = 307 ] && tr -d '\r' <"$TMP/hdr" | grep -qi "^location: $LU/v1/reconfigure\$" && ok ||
	bad "a follower's gateway: 307 to the leader's" "$got $(cat "$TMP/hdr" "$TMP/err")"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
sys.exit(0 if j["status"] == "STATUS_NOT_LEADER" and j["leader"]["name"] == sys.argv[2] and j["leader"]["url"] == sys.argv[3] else 1)' \
	"$TMP/out" "$L" "$LU" && ok || bad "the redirect's body names the leader" "$(head -c 400 "$TMP/out")"
# curl -L asks the leader's gateway with the same method and body
got=$(curl -sS -L $TLS -o "$TMP/out" -w '%{http_code}' -X POST -d "{\"topology\": \"$B\"}" \
	"$FU/v1/reconfigure" 2>"$TMP/err")
[ "$got" = 200 ] && grep -q '"committed"' "$TMP/out" && ok ||
	bad "curl -L through a follower's gateway" "$got $(head -c 400 "$TMP/out")"
# ofc --server and the Python client ask the leader's gateway URL once more
expect_exit 0 $OFC --server "$FU" $TLS reconfigure --topology "$A"
grep -q "does not lead; asking the leader, $L, at $LU" "$TMP/err" && ok || bad "ofc --server's retry" "$(cat "$TMP/err")"
$PY - "$BUILD/python" "$FU" "$C" "$A" <<'EOF' && ok || bad "the Python client's retry through a gateway"
import sys
sys.path.insert(0, sys.argv[1])
import ofc_client
c = sys.argv[3]
cl = ofc_client.Client(server=sys.argv[2], cert=c + "/admin.pem", key=c + "/admin.key",
                       cacert=c + "/ca.pem")
r = cl.reconfigure(topology=sys.argv[4])
assert r.transaction.state == "committed", r
EOF

# ---- kill -9 the leader in the middle of an apply ------------------------------
cur=$A
nxt=$B
FAILOVERS=""
for i in 1 2 3; do
	wait_leader 20 r1 r2 r3
	L=$LEADER
	# One watch given every replica's socket, the leader's first, follows
	# the fabric across the kills: it goes on at the next replica from the
	# last event it printed.
	if [ $i = 1 ]; then
		set -- $(others "$L")
		$OFC --socket "$TMP/$L.sock,$TMP/$1.sock,$TMP/$2.sock" watch --json >"$TMP/follow.out" 2>"$TMP/follow.err" &
		FW=$!
		sleep 0.3
	fi
	# (the first: every survivor's watchers hear who leads, no polling)
	WS=""
	if [ $i = 1 ]; then
		for _o in $(others "$L"); do
			$OFC --socket "$TMP/$_o.sock" watch --json >"$TMP/lw.$_o" 2>&1 &
			WS="$WS $!"
		done
	fi
	$OFC --socket "$TMP/$L.sock" reconfigure --topology "$nxt" >/dev/null 2>&1 &
	C=$!
	# killed once the watch heard this leadership's transaction start (on
	# a loaded machine the apply may not have started after a fixed
	# sleep), a little later at each kill
	python3 - "$TMP/follow.out" "$i" <<'EOF' || bad "kill $i: no transaction started under a new epoch within 15 s"
import json, re, sys, time
end = time.time() + 15
while time.time() < end:
    epochs = set()
    for l in open(sys.argv[1]):
        if '"KIND_TRANSACTION_STARTED"' in l:
            try:
                m = re.search(r"\(epoch (\d+)\)", json.loads(l).get("message", ""))
            except ValueError:
                continue  # (a line being written)
            if m:
                epochs.add(m.group(1))
    if len(epochs) >= int(sys.argv[2]):
        sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
EOF
	sleep "0.$((i * 2))"
	T0=$(now_ms)
	replica_stop "$L" KILL
	wait $C 2>/dev/null
	set -- $(others "$L")
	if wait_leader 20 "$@"; then
		if [ -n "$WS" ]; then
			sleep 0.5
			kill $WS 2>/dev/null
			wait $WS 2>/dev/null
			for _o in "$@"; do
				python3 - "$TMP/lw.$_o" "$LEADER" "$_o" <<'EOF' && ok || bad "$_o's watcher hears $LEADER lead" "$(head -c 1500 "$TMP/lw.$_o")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
evs = [e.get("event", e) for e in evs]
lc = [e for e in evs if e.get("kind") == "KIND_LEADER_CHANGED"]
# the last names the new leader, with this replica's role
last = lc[-1]
assert last["leader"]["name"] == sys.argv[2] and int(last["leader"]["epoch"]) > 0, lc
assert last["role"] == ("leader" if sys.argv[3] == sys.argv[2] else "follower"), lc
EOF
			done
		fi
		cluster_json "$LEADER"
		FAILOVERS="$FAILOVERS $(python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["cluster"]
print("%d/%d" % (c["elected_unix_ms"] - int(sys.argv[2]), c["took_over_unix_ms"] - int(sys.argv[2])))' "$TMP/$LEADER.json" "$T0")"
		ok
	else
		bad "kill $i: no replica took over"
	fi
	check_consistent "$LEADER" "kill $i of $L"
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topology"]["spec"])' "$TMP/$LEADER.json")" = "$nxt" ] &&
		{ t=$cur; cur=$nxt; nxt=$t; }
	rstart "$L"
done
echo "cluster: failover after kill -9, ms to elected/taken over (lease 2 s):$FAILOVERS"
# (the last kill's new leader commits once more, for the watch to hear)
wait_leader 20 r1 r2 r3
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$nxt"
t=$cur
cur=$nxt
nxt=$t
sleep 1
kill -0 $FW 2>/dev/null && ok || bad "the watch given every socket ended" "$(cat "$TMP/follow.err")"
kill $FW 2>/dev/null
wait $FW 2>/dev/null
# transactions of four leaderships, numbered one by one with none twice and
# none missed, each replica lost said on stderr
python3 - "$TMP/follow.out" <<'EOF' && ok || bad "the followed watch's events" "$(cat "$TMP/follow.err"; tail -c 1500 "$TMP/follow.out")"
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
seqs = [e["seq"] for e in evs if "seq" in e]
assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
epochs = {m.group(1) for e in evs if e["kind"] == "KIND_TRANSACTION_STARTED"
          for m in [re.search(r"\(epoch (\d+)\)", e["message"])] if m}
assert len(epochs) >= 4, epochs
EOF
[ "$(grep -c '^ofc watch: lost .*; watching .* from event [0-9]*$' "$TMP/follow.err")" -ge 1 ] && ! grep -q missed "$TMP/follow.err" &&
	ok || bad "the followed watch's words" "$(cat "$TMP/follow.err")"

# ---- the queue in etcd: a mutation waiting behind the running one ---------------
# survives the leader's kill -9 and runs at the next leader (the running
# one is the journal's: old or new)
wait_leader 20 r1 r2 r3
L=$LEADER
$OFC --socket "$TMP/$L.sock" reconfigure --topology "$nxt" >/dev/null 2>&1 &
C=$!
until_state "$L" 10 'j.get("transaction")'
$OFC --socket "$TMP/$L.sock" reconfigure --topology "$Q" >"$TMP/q.out" 2>&1 &
Q1=$!
until_state "$L" 10 'j.get("queue")'
etcd_ctl get --print-value-only /ofc/torus64-ocs/queue 2>/dev/null | grep -q "$Q" &&
	ok || bad "the waiting mutation in etcd's queue"
# a follower's state shows it, as etcd's queue holds it
set -- $(others "$L")
cat >"$TMP/fq.py" <<'EOF'
import json, sys
q = json.load(open(sys.argv[1])).get("queue", [])
sys.exit(0 if [(x["kind"], x["target"], x["state"]) for x in q] ==
         [("reconfigure", sys.argv[2], "queued at the leader")] and q[0]["ticket"] > 0 else 1)
EOF
deadline 2
until { $OFC --socket "$TMP/$1.sock" status --json >"$TMP/fq.json" 2>/dev/null &&
	python3 "$TMP/fq.py" "$TMP/fq.json" "$Q"; } || past $_end; do sleep 0.05; done
python3 "$TMP/fq.py" "$TMP/fq.json" "$Q" && ok ||
	bad "a follower's state shows the leader's waiting mutation" "$(head -c 600 "$TMP/fq.json")"
replica_stop "$L" KILL
wait $C $Q1 2>/dev/null
set -- $(others "$L")
wait_leader 20 "$@" && ok || bad "no replica took over with a queue"
N=$LEADER
until_state "$N" 20 'j["topology"]["spec"] == a and j["at_target"] and not j.get("transaction") and not j.get("queue")' "$Q"
expect_json "j['topology']['spec'] == '$Q'" $OFC --socket "$TMP/$N.sock" status --json
grep -q "the last leader's ticket [0-9]*, queued there and not started: run here" "$TMP/$N.log" && ok ||
	bad "the new leader ran the queued mutation" "$(grep -i ticket "$TMP/$N.log" | tail -3)"
# a new leader's tickets go on past the last leader's: one ticket, one request
set -- $(sed -n "s/.*ticket \([0-9]*\) is the last leader's ticket \([0-9]*\), queued there.*/\1 \2/p" "$TMP/$N.log" | tail -1)
[ -n "$2" ] && [ "$1" -gt "$2" ] && ok ||
	bad "the new leader's ticket $1 for the last leader's ticket $2 comes after it" "$(grep -i ticket "$TMP/$N.log" | tail -3)"
check_consistent "$N" "the queued mutation run after kill -9"
[ -z "$(etcd_ctl get --print-value-only /ofc/torus64-ocs/queue 2>/dev/null)" ] &&
	ok || bad "etcd's queue emptied once it ran"
rstart "$L"
cur=$Q
nxt=$A

# ---- SIGSTOP the leader past its lease in the middle of an apply ------------------
# with a mutation waiting behind the apply: the next leader runs it from
# etcd's queue, and the stopped leader, when it goes on and finds itself
# deposed, answers that client NOT_LEADER: ofc's request_key makes its
# resend at the next leader get the outcome of that one run, not a second
# (a request without a key is answered UNAVAILABLE, "do not send it
# again": docs/control.md)
wait_leader 20 r1 r2 r3
L=$LEADER
T0=$(now_ms)
$OFC --socket "$TMP/$L.sock" reconfigure --topology "$nxt" >"$TMP/stopped.out" 2>&1 &
C=$!
until_state "$L" 10 'j.get("transaction")'
$OFC --socket "$TMP/$L.sock" reconfigure --topology "$B" >"$TMP/handed.out" 2>&1 &
Q2=$!
until_state "$L" 10 'j.get("queue")'
_left=$((800 - ($(now_ms) - T0)))
[ "$_left" -gt 0 ] && sleep "$(printf '0.%03d' "$_left")"
N0=$(wc -l <"$TMP/e.log")
replica_stop "$L" STOP
set -- $(others "$L")
wait_leader 20 "$@" && ok || bad "no replica took over from the stopped leader"
N=$LEADER
until_state "$N" 20 'j["topology"]["spec"] == a and j["at_target"] and not j.get("transaction") and not j.get("queue")' "$B"
check_consistent "$N" "after the takeover from the stopped $L"
grep -q "the last leader's ticket [0-9]*, queued there and not started: run here" "$TMP/$N.log" && ok ||
	bad "the new leader ran the stopped leader's queued mutation" "$(grep -i ticket "$TMP/$N.log" | tail -3)"
replica_stop "$L" CONT
sleep 3
wait $C 2>/dev/null
wait $Q2
handed=$?
[ "$handed" -eq 0 ] && grep -q "(the recorded outcome of request_key 'ofc-[0-9a-f]*', ticket [0-9]* on $N: not run again)" "$TMP/handed.out" &&
	ok || bad "the waiting client of the deposed leader: exit $handed" "$(head -c 600 "$TMP/handed.out")"
cur=$B
python3 - "$TMP/e.log" "$L" "$N" "$N0" <<'EOF' && ok || bad "a command from the stopped leader after the takeover"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
old, new = sys.argv[2], sys.argv[3]
user = {}
for l in lines:
    m = re.match(r"\d+ ACT-USER::([^:]*):.* session=(\d+)$", l)
    if m: user[m.group(2)] = m.group(1)
def who(l):
    m = re.search(r" session=(\d+)$", l)
    return user.get(m.group(1)) if m else None
# the new leader's first command since the stop: its takeover's login
first = next(i for i, l in enumerate(lines) if who(l) == new and i >= int(sys.argv[4]))
late = [l for l in lines[first:] if who(l) == old]
if late: print("after line %d: %s" % (first, late[:3]))
sys.exit(1 if late else 0)
EOF
expect_json "j['cluster']['role'] == 'follower' and j['cluster']['leader']['name'] == '$N'" \
	$OFC --socket "$TMP/$L.sock" status --json
grep -q "stopped, nothing undone" "$TMP/$L.log" && ok || bad "the stopped leader's transaction" "$(grep -i 'ticket' "$TMP/$L.log" | tail -2)"
grep -q "leads fabric torus64-ocs no more" "$TMP/$L.log" && ok || bad "the stopped leader stepped down" "$(tail -5 "$TMP/$L.log")"
check_consistent "$N" "after the stopped leader went on"

# ---- etcd: one member lost changes nothing; two refuse mutations --------------------
wait_leader 20 r1 r2 r3
L=$LEADER
# a member that is not etcd's own (raft) leader: losing that one costs
# etcd an election of its own first (a second or two)
K1=$(not_raft_leader "$L")
etcd_kill "$K1"
t=$cur
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$nxt"
cur=$nxt
nxt=$t
K2=1
[ "$K1" = 1 ] && K2=2
etcd_kill "$K2"
# stale, and still stale a while later (an isolated etcd leader renews
# leases until it notices, about an election timeout)
deadline 20
until [ "$(cluster_view "$L" | cut -d' ' -f4)" = True ] && sleep 2.5 &&
	[ "$(cluster_view "$L" | cut -d' ' -f4)" = True ] || past $_end; do sleep 0.2; done
# (--timeout 5: a client asks again until its deadline, 30 s by default,
# and the answer is the same each time)
expect_exit 1 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$nxt" --timeout 5
grep -q "mutations are refused: this replica ($L) cannot confirm with etcd who leads" "$TMP/err" &&
	ok || bad "quorum lost: the refusal" "$(cat "$TMP/err")"
# ... is NOT_LEADER naming no leader (not UNAVAILABLE, an answer): clients
# go on to the next replica until their deadline
$PY - "$BUILD/python" "$TMP/$L.sock" <<'EOF2' && ok || bad "quorum lost: the refusal's status"
import sys
sys.path.insert(0, sys.argv[1])
from ofc_client import _Conn
from ofc_client.pb import control_pb2 as pb
c = _Conn(sys.argv[2], 10, 1 << 20)
req = pb.Request(id=7)
req.reconfigure.topology = "torus:8x8"
c.send(req)
r = c.recv()
assert r.status == pb.STATUS_NOT_LEADER and not r.HasField("leader"), r
assert "cannot confirm with etcd who leads" in r.message, r
EOF2
set -- $(others "$L")
deadline 10
until [ "$(cluster_view "$1" | cut -d' ' -f4)" = True ] || past $_end; do sleep 0.2; done
expect_json "j['cluster']['stale'] and j['cluster']['stale_reason'] and j['topology']['spec'] == '$cur'" \
	$OFC --socket "$TMP/$1.sock" status --json
expect_stdout_has "STALE" $OFC --socket "$TMP/$L.sock" status
etcd_restart "$K1"
etcd_restart "$K2"
wait_leader 30 r1 r2 r3 && ok || bad "no leader once etcd is back"
deadline 30
until [ "$(cluster_view "$LEADER" | cut -d' ' -f4)" = False ] || past $_end; do sleep 0.2; done
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$nxt"
t=$cur
cur=$nxt
nxt=$t
check_consistent "$LEADER" "after etcd came back"

# ---- a replica cut off from etcd ----------------------------------------------
# r3, behind the proxy, is made the leader: the others stop (each hands
# over at once) and start again as followers
replica_stop r1
replica_stop r2
wait_leader 20 r3
rstart r1
rstart r2
[ "$LEADER" = r3 ] && ok || bad "r3 never led" "$(cluster_why r3)"
# (its client asks r3 alone, again until its deadline once r3 is cut off:
# 10 s, not the default 30 s, before it is reaped; nothing is asked of it)
$OFC --socket "$TMP/r3.sock" reconfigure --topology "$nxt" --timeout 10 >/dev/null 2>&1 &
C=$!
sleep 0.5
N0=$(wc -l <"$TMP/e.log")
kill -9 $PROXY
wait $PROXY 2>/dev/null
wait_leader 20 r1 r2 && ok || bad "nobody took over from the cut-off r3"
N=$LEADER
wait $C 2>/dev/null
deadline 10
until [ "$(cluster_view r3 | cut -d' ' -f1,4)" = "follower True" ] || past $_end; do sleep 0.2; done
expect_json "j['cluster']['role'] == 'follower' and j['cluster']['stale']" $OFC --socket "$TMP/r3.sock" status --json
expect_exit 1 $OFC --socket "$TMP/r3.sock" reconfigure --topology "$cur" --timeout 5
check_consistent "$N" "after r3 was cut off"
# healed: r3 follows the new leader, current again
python3 "$(dirname "$0")/tcp_proxy.py" "$TMP/proxy2.port" $P1:$ETCD_C1 $P2:$ETCD_C2 $P3:$ETCD_C3 &
HELPER_PIDS="$HELPER_PIDS $!"
deadline 15
until [ "$(cluster_view r3)" != "" ] && [ "$(cluster_view r3 | cut -d' ' -f1,2,4)" = "follower $N False" ] ||
	past $_end; do sleep 0.2; done
expect_json "j['cluster']['role'] == 'follower' and j['cluster']['leader']['name'] == '$N' and not j['cluster']['stale']" \
	$OFC --socket "$TMP/r3.sock" status --json
python3 - "$TMP/e.log" r3 "$N" "$N0" <<'EOF' && ok || bad "a command from the cut-off r3 after the takeover"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
user = {}
for l in lines:
    m = re.match(r"\d+ ACT-USER::([^:]*):.* session=(\d+)$", l)
    if m: user[m.group(2)] = m.group(1)
def who(l):
    m = re.search(r" session=(\d+)$", l)
    return user.get(m.group(1)) if m else None
# the new leader's first command since the cut: its takeover's login
first = next(i for i, l in enumerate(lines) if who(l) == sys.argv[3] and i >= int(sys.argv[4]))
late = [l for l in lines[first:] if who(l) == sys.argv[2]]
if late: print(late[:3])
sys.exit(1 if late else 0)
EOF
finish
