#!/bin/sh
# Three replicas of ofcd on etcd showing one fabric alike, and transaction
# ids that stay unique across a failover (docs/ofcd.md, "Replicas"): two
# jobs' partitions held at run time on a torus:8x8 fabric leave `status`
# naming the fabric's topology and schedule on every replica, each held
# partition with its own; every replica says the same at_target; the leader
# is killed in the middle of a transaction, and the next commit's id is
# above every id used before, the rolled-back one included, the record and
# the answer naming the replica that committed it. etcd takes no request
# over 1 KiB here, so the record and the journal go as parts, and the new
# leader reads the killed one's journal back from them.
SUITE=cluster_txn
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_txn: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
# etcd takes no request over 1 KiB: the journal and the record of this
# fabric are over it, as a fabric of 49,152 hosts' are over etcd's default
# 1.5 MiB, and go as parts (controller/reconfig/store_parts.c); the new
# leader below undoes the killed one's journal read back from its parts
ETCD_ARGS="--max-request-bytes 1024"
# 5 ms a cross-connect: the leader killed below is still applying when the
# kill lands; under the sanitizers (make check) its polls and the kill come
# several times slower, and so must the switch
three_replicas "$([ -z "${SAN:-}" ] && echo 5 || echo 25)"

# req SOCK hold NAME TOPOLOGY HOSTS | release NAME: what a Slurm job's
# prolog and epilog send (Reconfigure with hosts, relabelled; ReleasePartition)
cat >"$TMP/req.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from ofc_client import _Conn
from ofc_client.pb import control_pb2 as pb
c = _Conn(sys.argv[2], 60, 1 << 20)
req = pb.Request(id=7)
if sys.argv[3] == "hold":
    req.reconfigure.partition = sys.argv[4]
    req.reconfigure.topology = sys.argv[5]
    req.reconfigure.hosts.extend(sys.argv[6].split(","))
    req.reconfigure.relabel = True
else:
    req.release_partition.name = sys.argv[4]
c.send(req)
r = c.recv()
print(r.message)
sys.exit(0 if r.status == pb.STATUS_OK else 1)
EOF
req() { $PY "$TMP/req.py" "$BUILD/python" "$@"; }
# until_gen NAME GEN: NAME's state shows generation GEN and no transaction
# (10 s by the clock)
# (and its schedule computed: it lands after the state, off the commit's
# path; a follower computes it when asked, as here)
until_gen() {
	deadline 10
	until cluster_json "$1" && python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if j["config_generation"] == int(sys.argv[2]) and not j.get("transaction")
         and not j.get("schedule_computing_since_unix_ms") else 1)' \
		"$TMP/$1.json" "$2" || past $_end; do sleep 0.1; done
}
gen_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config_generation"])' "$TMP/$1.json"; }

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology "$A"
IDS=$(sed -n 's/^committed transaction \([0-9]*\).*/\1/p' "$TMP/out")
# the record went as parts: its key holds their head
head_of() { etcd_ctl get "/ofc/torus64-ocs/$1" --print-value-only | head -c 12; }
[ "$(head_of state)" = "ofc-parts 1 " ] && ok || bad "the record is a head of parts" "$(head_of state)"
[ "$(etcd_ctl get /ofc/torus64-ocs/state/part/ --prefix --keys-only | grep -c part/)" -ge 2 ] &&
	ok || bad "the record's parts" "$(etcd_ctl get /ofc/ --prefix --keys-only)"

# ---- two jobs' partitions: status names the fabric's topology on every replica --
req "$TMP/$L.sock" hold job1 hypercube:2 h0,h1,h2,h3 >"$TMP/j1.out" && ok || bad "job1's partition" "$(cat "$TMP/j1.out")"
req "$TMP/$L.sock" hold job2 circulant:8:1,2 h8,h9,h10,h11,h12,h13,h14,h15 >"$TMP/j2.out" &&
	ok || bad "job2's partition" "$(cat "$TMP/j2.out")"
IDS="$IDS $(sed -n 's/^committed transaction \([0-9]*\).*/\1/p' "$TMP/j1.out" "$TMP/j2.out")"
cluster_json "$L"
G=$(gen_of "$L")
for r in r1 r2 r3; do until_gen $r "$G"; done
# the fabric's topology and schedule, whatever the last commit was; each
# held partition with its own topology, schedule and target
cat >"$TMP/fabric.py" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
held = {h["name"]: h for h in j.get("held", [])}
why = []
if j["topology"]["spec"] != "torus:8x8" or j["topology"]["nodes"] != 64:
    why.append("topology " + json.dumps(j["topology"])[:80])
s = j.get("schedule", {})
if s.get("nodes") != 64 or s.get("topology") != "torus:8x8":
    why.append("schedule %s on %s" % (s.get("nodes"), s.get("topology")))
if j["partition"] != "job2": why.append("last commit's partition " + str(j.get("partition")))
want = {"job1": ("hypercube:2", 4), "job2": ("circulant:8:1,2", 8)}
for name, h in held.items():
    hs = h.get("schedule", {})
    if (h["topology"], hs.get("nodes")) != want[name] or hs.get("topology") != want[name][0] \
            or not hs.get("verified") or not h.get("at_target"):
        why.append("held %s: %s" % (name, json.dumps(h)[:300]))
if sorted(held) != ["job1", "job2"]:
    why.append("held " + str(sorted(held)))
open(sys.argv[1] + ".why", "w").write("; ".join(why))
sys.exit(1 if why else 0)
EOF
for r in r1 r2 r3; do
	role=follower
	[ "$r" = "$L" ] && role=leader
	python3 "$TMP/fabric.py" "$TMP/$r.json" $role && ok ||
		bad "$r ($role): the fabric's topology and schedule, each partition its own" "$(cat "$TMP/$r.json.why")"
done
expect_stdout_has "  held       job1: hypercube:2 on 4 hosts, at target" $OFC --socket "$TMP/$L.sock" status
# every replica says the same at_target, from the same store: the
# leader's used to be its own partition-aimed target's; the holds come in
# the same etcd transaction as the record, so every replica shows them.
same_target() {
	python3 - "$TMP" "$1" r1 r2 r3 <<'EOF'
import json, sys
j = {r: json.load(open("%s/%s.json" % (sys.argv[1], r))) for r in sys.argv[3:]}
names = lambda x: sorted(h["name"] for h in x.get("held", []))
lead = j[sys.argv[2]]
bad = [r for r in j if names(j[r]) != names(lead) or j[r]["at_target"] != lead["at_target"]]
if bad: print("at_target, held: " + ", ".join("%s %s %s" % (r, j[r]["at_target"], names(j[r])) for r in j))
sys.exit(1 if bad else 0)
EOF
}
same_target "$L" && ok || bad "the replicas disagree on at_target with jobs held"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["at_target"] else 1)' "$TMP/$L.json" &&
	ok || bad "the leader: outside the held partitions the fabric is at its target"

# ---- a partition let go: its circuits are the fabric's to judge again ----------
req "$TMP/$L.sock" release job2 >"$TMP/rel.out" && ok || bad "job2's release" "$(cat "$TMP/rel.out")"
req "$TMP/$L.sock" release job1 >"$TMP/rel.out" && ok || bad "job1's release" "$(cat "$TMP/rel.out")"
for r in r1 r2 r3; do until_gen $r "$G"; done
python3 - "$TMP" r1 r2 r3 <<'EOF' && ok || bad "after the releases every replica: torus:8x8, NOT at target"
import json, sys
j = {r: json.load(open("%s/%s.json" % (sys.argv[1], r))) for r in sys.argv[2:]}
got = {r: (x["topology"]["spec"], x["at_target"], len(x.get("held", []))) for r, x in j.items()}
print(got)
sys.exit(0 if set(got.values()) == {("torus:8x8", False, 0)} else 1)
EOF

# ---- kill -9 the leader in the middle of a transaction ---------------------------
$OFC --socket "$TMP/$L.sock" reconfigure --topology "$B" >"$TMP/killed.out" 2>&1 &
C=$!
set -- $(others "$L")
F=$1
# a follower sees the journal: its id, and the replica that wrote it
deadline 10
until cluster_json "$F" && python3 -c 'import json,sys
t = json.load(open(sys.argv[1])).get("transaction") or {}
sys.exit(0 if t.get("id") else 1)' "$TMP/$F.json" || past $_end; do sleep 0.05; done
K=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["transaction"]["id"])' "$TMP/$F.json")
[ "$(head_of journal)" = "ofc-parts 1 " ] && ok || bad "the journal is a head of parts" "$(head_of journal)"
python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["transaction"]
sys.exit(0 if t.get("replica") == sys.argv[2] and t.get("epoch") else 1)' "$TMP/$F.json" "$L" &&
	ok || bad "a follower's view of the running transaction names the replica running it" "$(head -c 600 "$TMP/$F.json")"
# ... as the leader shows the one it runs
deadline 3
until cluster_json "$L" && python3 -c 'import json,sys
t = json.load(open(sys.argv[1])).get("transaction") or {}
sys.exit(0 if t.get("id") == int(sys.argv[2]) and t.get("replica") == sys.argv[3] and t.get("running") else 1)' \
	"$TMP/$L.json" "$K" "$L" || past $_end; do sleep 0.05; done
python3 -c 'import json,sys; t = json.load(open(sys.argv[1])).get("transaction") or {}
sys.exit(0 if t.get("replica") == sys.argv[2] and t.get("epoch") else 1)' "$TMP/$L.json" "$L" &&
	ok || bad "the leader's running transaction names its replica" "$(head -c 400 "$TMP/$L.json")"
replica_stop "$L" KILL
wait $C 2>/dev/null
wait_leader 20 "$@" && ok || bad "no replica took over"
N=$LEADER
# (the takeover undid it: its id is one a record never kept as a generation)
grep -q "unfinished transaction $K (applying) undone" "$TMP/$N.log" && ok ||
	bad "the new leader undid transaction $K" "$(grep -i recovered "$TMP/$N.log" | tail -2)"
expect_exit 0 $OFC --socket "$TMP/$N.sock" reconfigure --topology "$A"
NEXT=$(sed -n 's/^committed transaction \([0-9]*\).*/\1/p' "$TMP/out")
python3 - "$NEXT" "$K" $IDS <<'EOF' && ok || bad "the next commit's id after the failover is a new one" "$(cat "$TMP/out")"
import sys
used = [int(x) for x in sys.argv[2:] if x]
print("cluster_txn: ids %s, the killed leader's %s, the next %s" % (used[1:], used[0], sys.argv[1]))
sys.exit(0 if sys.argv[1] and int(sys.argv[1]) > max(used) else 1)
EOF
grep -q "^committed transaction $NEXT (replica $N, epoch [0-9]*): " "$TMP/out" && ok ||
	bad "the answer names the replica that committed it" "$(cat "$TMP/out")"
# the record says who committed it, on every replica; the log says it too
cluster_json "$N"
G=$(gen_of "$N")
set -- $(others "$N")
for r in "$@"; do
	[ "$r" = "$L" ] && continue
	until_gen "$r" "$G"
	expect_json "j['committed_by'] == '$N' and j['committed_epoch'] > 0 and j['config_generation'] == $G" \
		$OFC --socket "$TMP/$r.sock" status --json
done
expect_stdout_has "committed by replica $N (epoch" $OFC --socket "$TMP/$N.sock" status
grep -q "transaction committed (transaction $G): by replica $N (epoch" "$TMP/$N.log" && ok ||
	bad "the new leader's log names it" "$(grep -i committed "$TMP/$N.log" | tail -2)"
finish
