#!/bin/sh
# The replicas' figures (bench/results/cluster.md, "Replicas on etcd"): three ofcd
# replicas on a 3-member etcd on loopback, a switch emulator taking
# DELAY_MS a change (tests/integration/cluster_env.sh, as test_cluster.sh).
#
#   1. KILLS times (100): the leader killed with kill -9 at a random moment
#      of an apply of 256 changes; each time a replica must take over and
#      the record it serves equal what the switch holds, at its own target,
#      the topology before or after (old-or-new). Failover: from the kill to
#      the end of the new leader's takeover (its repair of the journal the
#      dead one left, committed), p50 and p99 against the lease, and to
#      its election (when it may write: the lease's part alone).
#   2. The cost of the cluster, in the same run: an apply of 384
#      cross-connects (96 hosts x 4 ports, torus:8x12 and back, on a
#      384-port switch, --delay-ms 0) and GetState's p99 (one client, 1,000
#      in a row), by the leader against a single ofcd with files, in three
#      rounds that take turns.
#
#   sh bench/cluster_soak.sh [KILLS [DELAY_MS]]
SUITE=cluster-soak
cd "$(dirname "$0")/.." || exit 1
. tests/integration/lib.sh
. tests/integration/emu.sh
. tests/integration/cluster_env.sh
KILLS=${1:-100}
DELAY=${2:-5}
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3

make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
A=torus:8x8
B=circulant:64:3,8
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --delay-ms "$DELAY" --state "$TMP/e.state"
etcd_start 3 || { echo "etcd did not start"; exit 1; }
for r in r1 r2 r3; do
	replica_dir $r "$TMP/a.yaml" "$e_port"
	replica_start $r --probe-interval 0
done
now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

# old-or-new: the record equals the switch, at its own target, A or B, no
# transaction left; prints the topology, or "bad: why"
consistent() {
	cluster_json "$1"
	python3 - "$TMP/$1.json" "$TMP/e.state" "$A" "$B" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
rec = sorted((c["in_port"], c["out_port"]) for c in j["devices"][0].get("circuits", []))
dev = sorted(tuple(int(x) for x in l.split()[:2]) for l in open(sys.argv[2]) if l.strip())
why = []
if rec != dev: why.append("record and device differ")
if not j["at_target"]: why.append("not at target")
if j["topology"]["spec"] not in sys.argv[3:5]: why.append("topology " + j["topology"]["spec"])
if j.get("transaction"): why.append("unfinished")
print("bad: " + "; ".join(why) if why else j["topology"]["spec"])
EOF
}

wait_leader 20 r1 r2 r3 || { echo "no leader"; exit 1; }
$OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$A" >/dev/null
cur=$A
nxt=$B
good=0
journals=0
: >"$TMP/failover"
i=1
while [ $i -le "$KILLS" ]; do
	wait_leader 30 r1 r2 r3 || { echo "kill $i: no leader"; break; }
	L=$LEADER
	rec0=$(grep -c . "$TMP/$L.log")
	$OFC --socket "$TMP/$L.sock" reconfigure --topology "$nxt" >/dev/null 2>&1 &
	C=$!
	# a random moment in the apply (256 changes of DELAY ms)
	sleep "$(python3 -c "import random; print(round(random.uniform(0.05, 0.25 + 256 * $DELAY / 1000), 3))")"
	T0=$(now_ms)
	replica_stop "$L" KILL
	wait $C 2>/dev/null
	set -- $(others "$L")
	if wait_leader 30 "$@"; then
		N=$LEADER
		cluster_json "$N"
		python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["cluster"]
print(c["elected_unix_ms"] - int(sys.argv[2]), c["took_over_unix_ms"] - int(sys.argv[2]))' \
			"$TMP/$N.json" "$T0" >>"$TMP/failover"
		grep -q "took over" "$TMP/$N.log" && tail -n 5 "$TMP/$N.log" | grep -q "recovered an unfinished" &&
			journals=$((journals + 1))
		t=$(consistent "$N")
		case $t in
		bad:*) echo "kill $i: $t" ;;
		*)
			good=$((good + 1))
			[ "$t" = "$nxt" ] && { x=$cur; cur=$nxt; nxt=$x; }
			;;
		esac
	else
		echo "kill $i: no replica took over"
	fi
	: "$rec0"
	replica_start "$L" --probe-interval 0
	i=$((i + 1))
done
python3 - "$TMP/failover" "$KILLS" "$good" "$journals" "$DELAY" <<'EOF'
import sys
rows = [tuple(int(x) for x in l.split()) for l in open(sys.argv[1]) if l.strip()]
def show(what, f):
    f = sorted(f)
    def q(p): return f[min(len(f) - 1, int(round(p * (len(f) - 1))))] if f else 0
    print("  %-44s p50 %5d ms, p99 %5d ms, min %5d, max %5d (%d taken)"
          % (what, q(0.5), q(0.99), f[0] if f else 0, f[-1] if f else 0, len(f)))
print("kills %s, old-or-new %s/%s, a journal repaired after %s (a switch of %s ms a change)"
      % (sys.argv[2], sys.argv[3], sys.argv[2], sys.argv[4], sys.argv[5]))
print("failover, lease 2 s (goal: p99 below 4 s):")
show("kill -9 to elected (the new leader may write)", [e for e, t in rows])
show("kill -9 to the takeover's end (repaired)", [t for e, t in rows])
show("the takeover (journal repaired, committed)", [t - e for e, t in rows])
EOF

# ---- the cost of the cluster: 384 cross-connects, GetState ---------------------
for r in r1 r2 r3; do replica_stop $r; done
stop_emu "$e_pid" # (stop_all_emus waits for every child: the etcd members too)
sed -e 's|count: 64|count: 96|' -e 's|ports: 256|ports: 384|' -e 's|topology: .*|topology: torus:8x12|' \
	"$TMP/a.yaml" >"$TMP/w.yaml"
grep -q 'ports: 384' "$TMP/w.yaml" || echo "w.yaml: no 384-port switch"
start_emu ocs-emu c --ports 384 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred"
start_emu ocs-emu s --ports 384 --credentials configs/credentials/ocs0.cred
for r in r1 r2 r3; do
	rm -rf "$TMP/$r"
	replica_dir $r "$TMP/w.yaml" "$c_port"
	replica_start $r --probe-interval 0 --cluster-prefix "/ofc-w$$/"
done
cp configs/credentials/ocs0.cred "$TMP/single.cred"
sed -e "s|credentials: .*|credentials: $TMP/single.cred|" -e "s|address: .*|address: 127.0.0.1:$s_port|" \
	"$TMP/w.yaml" >"$TMP/single.yaml"
mkdir -p "$TMP/single"
$BUILD/ofcd --config "$TMP/single.yaml" --socket "$TMP/single.sock" --state-dir "$TMP/single" \
	--credentials-dir "$TMP" --probe-interval 0 --foreground --log-file "$TMP/single.log" &
SINGLE=$!
wait_leader 30 r1 r2 r3 || echo "no leader for the cost"
_end=$(($(date +%s) + 10))
while [ ! -S "$TMP/single.sock" ] && [ "$(date +%s)" -le $_end ]; do sleep 0.05; done
$PY - "$BUILD/python" "$TMP/$LEADER.sock" "$TMP/single.sock" <<'EOF'
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
import ofc_client
from ofc_client import _Conn
from ofc_client.pb import control_pb2 as pb

def applies(path, n):
    c = ofc_client.Client(path, timeout=120)
    t = []
    for i in range(n):
        for spec in ("circulant:96:3,8", "torus:8x12"):
            r = c.reconfigure(topology=spec)
            t.append(r.transaction.seconds)
    return t, r.transaction.operations

def getstate(path, n):
    c = _Conn(path, 30, 64 << 20)
    t = []
    for i in range(n):
        req = pb.Request(id=i + 1)
        req.get_state.SetInParent()
        t0 = time.perf_counter()
        c.send(req)
        c.recv()
        t.append(time.perf_counter() - t0)
    c.close()
    return t

def p99(t):
    t = sorted(t)
    return t[int(0.99 * (len(t) - 1))]

# from empty: 384 connects each, not timed
for path in sys.argv[2:4]:
    ofc_client.Client(path, timeout=120).reconfigure(topology="torus:8x12")
# Three rounds, cluster and single in turn within each, so the machine's
# other load falls on both alike; each round's figures, then all of them.
ac, asg, gc, gs = [], [], [], []
for rnd in range(3):
    a1, ops = applies(sys.argv[2], 3)
    a2, _ = applies(sys.argv[3], 3)
    g1 = getstate(sys.argv[2], 1000)
    g2 = getstate(sys.argv[3], 1000)
    print("round %d: apply median cluster %.1f ms, single %.1f ms; GetState p99 cluster %.0f us, single %.0f us"
          % (rnd + 1, statistics.median(a1) * 1e3, statistics.median(a2) * 1e3, p99(g1) * 1e6, p99(g2) * 1e6))
    ac += a1; asg += a2; gc += g1; gs += g2
mc, ms = statistics.median(ac), statistics.median(asg)
print("apply of %d operations (384-port switch, --delay-ms 0), median of %d: cluster %.1f ms, single %.1f ms, ratio %.2f"
      % (ops, len(ac), mc * 1e3, ms * 1e3, mc / ms))
print("GetState, %d in a row on one connection: p99 cluster %.0f us, single %.0f us, ratio %.2f (medians %.0f and %.0f us)"
      % (len(gc), p99(gc) * 1e6, p99(gs) * 1e6, p99(gc) / p99(gs), statistics.median(gc) * 1e6,
         statistics.median(gs) * 1e6))
EOF
kill $SINGLE 2>/dev/null
wait $SINGLE 2>/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
