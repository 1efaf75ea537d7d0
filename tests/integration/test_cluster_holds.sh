#!/bin/sh
# Held partitions outlive the ofcd that granted them (docs/ofcd.md,
# "Partitions made at run time" and "Replicas"): they live in the store
# beside the record (STATE_DIR/FABRIC.held; PREFIX/FABRIC/held in etcd).
# - one ofcd on files: a job's partition (ofc slurm prolog, a stand-in
#   scontrol) is held after kill -9 and a restart, with its owner, and an
#   overlap is refused as before; a config that no longer has its hosts
#   drops it, with a PARTITION_DROPPED event and a log line; a damaged
#   .held is refused at the start, named, and the start goes on once it is
#   set aside;
# - three replicas on etcd: a hold taken on the leader shows on both
#   followers (status --json), a follower's Watch hears it held and
#   released, kill -9 of the leader leaves the new leader holding it and
#   refusing the overlap for another name, the release works there; a
#   second replica with a name already running is refused at its start;
#   every replica lists the registered replicas; a damaged held key makes
#   the next leader refuse mutations and releases, naming the key and the
#   etcdctl that sets it aside, until it is gone.
SUITE=cluster-holds
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
FAB=torus64-ocs
printf '#!/bin/sh\necho "$@" >>%s/scontrol.log\n' "$TMP" >"$TMP/fake-scontrol"
chmod 755 "$TMP/fake-scontrol"
# prolog SOCKET JOB NODELIST TOPOLOGY, epilog SOCKET JOB
prolog() {
	env -i SLURM_JOB_ID="$2" SLURM_JOB_NODELIST="$3" SLURM_JOB_COMMENT="ofc:topology=$4" \
		OFC_SLURM_SCONTROL="$TMP/fake-scontrol" OFC_SOCKET="$1" $OFC slurm prolog --timeout 20
}
epilog() { env -i SLURM_JOB_ID="$2" OFC_SOCKET="$1" $OFC slurm epilog --timeout 20; }
# held SOCKET: "NAME OWNER HOSTS..." per held partition, from status --json
held() {
	$OFC --socket "$1" status --json --timeout 5 | python3 -c 'import json,sys
for h in json.load(sys.stdin).get("held", []):
    print(h["name"], h.get("owner", "-"), h.get("since_unix_ms", 0) > 0, " ".join(h["hosts"]))'
}
ME="uid:$(id -u)"

# ---- one ofcd on files ------------------------------------------------------------
start_emu ocs-emu e --ports 256 --credentials "$TMP/ocs0.cred" --state "$TMP/e.state"
mkdir -p "$TMP/st"
SOCK="$TMP/ofcd.sock"
ofcd_start() {
	rm -f "$SOCK"
	$BUILD/ofcd --config "$1" --socket "$SOCK" --state-dir "$TMP/st" --credentials-dir "$TMP" \
		--device "ocs0=127.0.0.1:$e_port" --probe-interval 0 --foreground \
		--log-file "$TMP/ofcd.log" --log-level info 2>>"$TMP/ofcd.stderr" &
	OFCD=$!
	deadline 10
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do
		kill -0 $OFCD 2>/dev/null || break
		sleep 0.05
	done
}
ofcd_start "$TMP/a.yaml"
expect_exit 0 $OFC --socket "$SOCK" reconfigure --topology torus:8x8
expect_stdout_has "partition slurm-job-1: ring:4 on 4 hosts committed" prolog "$SOCK" 1 'h[0-3]' ring:4
[ "$(held "$SOCK")" = "slurm-job-1 $ME True h0 h1 h2 h3" ] && ok || bad "held with its owner" "$(held "$SOCK")"
[ -s "$TMP/st/$FAB.held" ] && ok || bad "no $FAB.held in the state directory"
kill -9 $OFCD
wait $OFCD 2>/dev/null
ofcd_start "$TMP/a.yaml"
[ "$(held "$SOCK")" = "slurm-job-1 $ME True h0 h1 h2 h3" ] && ok || bad "held after kill -9 and a restart" "$(held "$SOCK")"
expect_error 1 "ofc slurm prolog: job 2: partition 'slurm-job-2': host h3 is held by partition 'slurm-job-1' (requeued); slurm-job-1 holds its hosts and is not ending" \
	prolog "$SOCK" 2 'h[3-6]' ring:4
# a whole-fabric change over its circuits is refused, as before the restart
expect_exit 1 $OFC --socket "$SOCK" reconfigure --topology circulant:64:3,8
grep -q "of partition 'slurm-job-1', held for its owner; refused" "$TMP/err" && ok || bad "the restarted ofcd let a reconfigure over a hold" "$(cat "$TMP/err")"
# watchers hear holds taken and let go
$OFC --socket "$SOCK" watch --json >"$TMP/watch1.out" 2>&1 &
W=$!
sleep 0.3
expect_stdout_has "partition slurm-job-3: ring:4 on 4 hosts committed" prolog "$SOCK" 3 'h[40-43]' ring:4
expect_stdout_has "released partition 'slurm-job-1'" epilog "$SOCK" 1
deadline 5
until grep -q KIND_PARTITION_RELEASED "$TMP/watch1.out" || past $_end; do sleep 0.1; done
kill $W 2>/dev/null
wait $W 2>/dev/null
python3 - "$TMP/watch1.out" "$ME" <<'EOF' && ok || bad "partition events" "$(head -c 1500 "$TMP/watch1.out")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
evs = [e.get("event", e) for e in evs]
held = [e for e in evs if e.get("kind") == "KIND_PARTITION_HELD" and e.get("partition") == "slurm-job-3"]
rel = [e for e in evs if e.get("kind") == "KIND_PARTITION_RELEASED" and e.get("partition") == "slurm-job-1"]
assert held and sys.argv[2] in held[0]["message"], evs
assert rel and "let go by " + sys.argv[2] in rel[0]["message"], evs
EOF
grep -q "partition released: partition slurm-job-1 released: let go by $ME" "$TMP/ofcd.log" && ok || bad "the release's log line" "$(tail -5 "$TMP/ofcd.log")"
[ "$(held "$SOCK")" = "slurm-job-3 $ME True h40 h41 h42 h43" ] && ok || bad "after the release" "$(held "$SOCK")"
# a config without the hosts of slurm-job-3 (32 hosts): the reload drops it
sed -e 's/count: 64/count: 32/' -e 's/^topology: .*/topology: torus:4x8/' "$TMP/a.yaml" >"$TMP/b.yaml"
cp "$TMP/a.yaml" "$TMP/a.yaml.orig"
cp "$TMP/b.yaml" "$TMP/a.yaml"
$OFC --socket "$SOCK" watch --json >"$TMP/watch2.out" 2>&1 &
W=$!
sleep 0.3
kill -HUP $OFCD
deadline 20
until grep -q KIND_PARTITION_DROPPED "$TMP/watch2.out" || past $_end; do sleep 0.1; done
kill $W 2>/dev/null
wait $W 2>/dev/null
grep -q '"partition": *"slurm-job-3"' "$TMP/watch2.out" && grep -q 'has no host h40' "$TMP/watch2.out" && ok ||
	bad "the reload's drop event" "$(head -c 1500 "$TMP/watch2.out")"
grep -q "partition dropped: partition slurm-job-3 dropped: the config now running (fabric $FAB) has no host h40" "$TMP/ofcd.log" &&
	ok || bad "the drop's log line" "$(tail -5 "$TMP/ofcd.log")"
[ -z "$(held "$SOCK")" ] && ok || bad "dropped, yet held" "$(held "$SOCK")"
cp "$TMP/a.yaml.orig" "$TMP/a.yaml"
kill $OFCD
wait $OFCD 2>/dev/null
# a damaged .held: the start refuses it, naming it and the way out
printf 'not a protobuf \377\377\377' >"$TMP/st/$FAB.held"
: >"$TMP/ofcd.stderr"
ofcd_start "$TMP/a.yaml"
if kill -0 $OFCD 2>/dev/null; then
	bad "ofcd started on a damaged .held"
	kill $OFCD
else
	wait $OFCD
	[ $? -ne 0 ] && grep -q "$TMP/st/$FAB.held: corrupt file: .* bytes that are not an ofc.v1.HeldPartitions.*mv '$TMP/st/$FAB.held' '$TMP/st/$FAB.held.corrupt'" "$TMP/ofcd.stderr" &&
		ok || bad "the damaged .held's error" "$(cat "$TMP/ofcd.stderr")"
fi
mv "$TMP/st/$FAB.held" "$TMP/st/$FAB.held.corrupt"
ofcd_start "$TMP/a.yaml"
expect_exit 0 $OFC --socket "$SOCK" status
kill $OFCD
wait $OFCD 2>/dev/null
stop_all_emus

# ---- three replicas on etcd ----------------------------------------------------------
if ! command -v etcd >/dev/null; then
	echo "cluster-holds: no etcd (scripts/install-deps.sh installs etcd-server): replicas skipped"
	finish
	exit
fi
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --state "$TMP/e2.state"
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
for r in r1 r2 r3; do
	replica_dir $r "$TMP/a.yaml" "$e_port"
	replica_start $r --probe-interval 0
done
others() { for _o in $2; do [ "$_o" = "$1" ] || printf '%s ' "$_o"; done; }
# until_held NAME 'WANT' SECS: NAME's held partitions are WANT
until_held() {
	deadline $3
	until [ "$(held "$TMP/$1.sock" 2>/dev/null)" = "$2" ] || past $_end; do sleep 0.1; done
	[ "$(held "$TMP/$1.sock" 2>/dev/null)" = "$2" ]
}
wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
set -- $(others "$L" "r1 r2 r3")
F1=$1 F2=$2
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology torus:8x8
# replicas SOCKET: "NAME ROLE PID SOCKET LEASE_KNOWN" per registered replica, by name
replicas() {
	$OFC --socket "$1" status --json --timeout 5 | python3 -c 'import json,sys,time
for r in sorted(json.load(sys.stdin)["cluster"].get("replicas", []), key=lambda r: r["name"]):
    print(r["name"], r["role"], r["pid"], r["socket"], r.get("lease_left_seconds", -1) >= 0,
          r.get("since_contact_seconds", -1) >= 0, r["host"] != "", r["started_unix_ms"] > 0,
          abs(int(r.get("last_contact_unix_ms", 0)) - time.time() * 1000) < 30000)'
}
wantr=""
for r in r1 r2 r3; do
	role=follower
	[ $r = "$L" ] && role=leader
	eval "pid=\$${r}_pid"
	wantr="$wantr$r $role $pid $TMP/$r.sock True True True True True
"
done
for r in $L $F1; do
	deadline 10
	until [ "$(replicas "$TMP/$r.sock")
" = "$wantr" ] || past $_end; do sleep 0.2; done
	[ "$(replicas "$TMP/$r.sock")
" = "$wantr" ] && ok || bad "$r's list of replicas" "want: $wantr" "got:  $(replicas "$TMP/$r.sock")"
done
# a second replica under a name that runs is refused at its start, naming where it runs
mkdir -p "$TMP/dup/state"
eval "pid=\$${F1}_pid"
expect_error 2 "ofcd: --cluster-name $F1: a replica of fabric $FAB runs under that name already, on $(hostname) (pid $pid, socket $TMP/$F1.sock): give this one a name of its own" \
	$BUILD/ofcd --config "$TMP/$F1/fab.yaml" --socket "$TMP/dup.sock" --state-dir "$TMP/dup/state" \
	--credentials-dir "$TMP/$F1" --cluster "$ETCD" $ETCD_TLS --cluster-name "$F1" --cluster-ttl 2s --foreground
got=$(replicas "$TMP/$L.sock")
[ "$got
" = "$wantr" ] && ok || bad "the refused replica changed the list" "$got" "$wantr"
$OFC --socket "$TMP/$F1.sock" watch --json >"$TMP/watch3.out" 2>&1 &
W=$!
sleep 0.3
expect_stdout_has "partition slurm-job-11: ring:8 on 8 hosts committed" prolog "$TMP/$L.sock" 11 'h[0-7]' ring:8
H11="slurm-job-11 $ME True h0 h1 h2 h3 h4 h5 h6 h7"
for r in $L $F1 $F2; do
	until_held $r "$H11" 10 && ok || bad "$r does not show the hold" "$(held "$TMP/$r.sock")"
done
# a follower's metrics count the hold and say it is at its target
$OFC --socket "$TMP/$F1.sock" metrics >"$TMP/m.txt" 2>&1
grep -q '^ofc_held_partitions 1$' "$TMP/m.txt" && grep -q '^ofc_held_partition_at_target{partition="slurm-job-11"} 1$' "$TMP/m.txt" &&
	grep -q '^ofc_at_target [01]$' "$TMP/m.txt" && ok || bad "a follower's metrics of the hold" "$(grep -e held -e at_target "$TMP/m.txt")"
deadline 5
until grep -q KIND_PARTITION_HELD "$TMP/watch3.out" || past $_end; do sleep 0.1; done
kill $W 2>/dev/null
wait $W 2>/dev/null
# (a follower's watchers hear the leader's own events, from the store's log)
grep -q '"partition": *"slurm-job-11"' "$TMP/watch3.out" && grep -q '"message":"partition slurm-job-11: ring:8 on 8 hosts, held for uid:[0-9]*"' "$TMP/watch3.out" &&
	ok || bad "a follower's watch of a hold" "$(head -c 1500 "$TMP/watch3.out")"
# the leader dies: the next one holds what it held
replica_stop "$L" KILL
wait_leader 20 $F1 $F2 && ok || bad "no new leader" "$(tail -3 "$TMP/$F1.log")"
N=$LEADER
set -- $(others "$N" "$F1 $F2")
F=$1
[ "$(held "$TMP/$N.sock")" = "$H11" ] && ok || bad "the new leader $N lost the hold" "$(held "$TMP/$N.sock")"
# the dead leader leaves the list when its lease ends; the new one is leader there
deadline 10
until [ "$(replicas "$TMP/$F.sock" | cut -d' ' -f1,2 | tr '\n' ' ')" = "$(printf '%s\n' "$N leader" "$F follower" | sort | tr '\n' ' ')" ] ||
	past $_end; do sleep 0.2; done
[ "$(replicas "$TMP/$F.sock" | cut -d' ' -f1,2 | tr '\n' ' ')" = "$(printf '%s\n' "$N leader" "$F follower" | sort | tr '\n' ' ')" ] &&
	ok || bad "the replicas after the failover" "$(replicas "$TMP/$F.sock")"
$OFC --socket "$TMP/$F.sock" watch --json >"$TMP/watch4.out" 2>&1 &
W=$!
sleep 0.3
expect_error 1 "ofc slurm prolog: job 12: partition 'slurm-job-12': host h4 is held by partition 'slurm-job-11' (requeued); slurm-job-11 holds its hosts and is not ending" \
	prolog "$TMP/$N.sock" 12 'h[4-11]' ring:8
expect_exit 1 $OFC --socket "$TMP/$N.sock" reconfigure --topology circulant:64:3,8
grep -q "of partition 'slurm-job-11', held for its owner; refused" "$TMP/err" && ok || bad "the new leader let a reconfigure over a hold" "$(cat "$TMP/err")"
expect_stdout_has "released partition 'slurm-job-11'" epilog "$TMP/$N.sock" 11
deadline 5
until grep -q KIND_PARTITION_RELEASED "$TMP/watch4.out" || past $_end; do sleep 0.1; done
kill $W 2>/dev/null
wait $W 2>/dev/null
grep -q '"partition": *"slurm-job-11"' "$TMP/watch4.out" && grep -q "let go by $ME" "$TMP/watch4.out" &&
	ok || bad "a follower's watch of a release" "$(head -c 1500 "$TMP/watch4.out")"
# The refusals reach the follower's watchers with their reasons, and the
# log's numbers go on across the failover: one more an event, none twice.
python3 - "$TMP/watch3.out" "$TMP/watch4.out" <<'EOF' && ok || bad "a follower's watch of refusals, and the numbering" "$(head -c 3000 "$TMP/watch4.out")"
import json, sys
def events(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]
before = [e["seq"] for e in events(sys.argv[1]) if "seq" in e]
after = events(sys.argv[2])
refused = [e for e in after if e["kind"] == "KIND_REQUEST_REFUSED"]
assert any("host h4 is held by partition 'slurm-job-11'" in e["message"] and e.get("partition") == "slurm-job-12" for e in refused), refused
assert any("held for its owner; refused" in e["message"] and e["status"] == "STATUS_FAILED" for e in refused), refused
seqs = [e["seq"] for e in after if "seq" in e]
assert seqs and min(seqs) > max(before), (before, seqs)
assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
assert len({e["log"] for e in after if "log" in e}) == 1
EOF
for r in $N $F; do
	until_held $r "" 10 && ok || bad "$r still shows the hold" "$(held "$TMP/$r.sock")"
done
# the released hosts are free for another job on the new leader
expect_stdout_has "partition slurm-job-12: ring:8 on 8 hosts committed" prolog "$TMP/$N.sock" 12 'h[4-11]' ring:8

# a damaged held key: the next leader refuses mutations, naming it, until
# it is set aside
KEY=/ofc/$FAB/held
ETCDCTL=etcd_ctl
$ETCDCTL put "$KEY" 'not a HeldPartitions' >/dev/null && ok || bad "etcdctl put"
replica_stop "$N" KILL
wait_leader 20 "$F" && ok || bad "no leader after $N" "$(tail -3 "$TMP/$F.log")"
expect_exit 1 prolog "$TMP/$F.sock" 13 'h[20-23]' ring:4
grep -q "refused: $KEY: corrupt etcd key: 20 bytes that are not an ofc.v1.HeldPartitions.*ETCDCTL_{CACERT,CERT,KEY} as ofcd's --cluster-{cacert,cert,key}: etcdctl .*del '$KEY'; fix or remove it first" "$TMP/err" &&
	ok || bad "the damaged held key" "$(cat "$TMP/err")"
expect_exit 1 epilog "$TMP/$F.sock" 12
grep -q "corrupt etcd key" "$TMP/err" && ok || bad "a release over the damaged key" "$(cat "$TMP/err")"
[ "$($ETCDCTL get --print-value-only "$KEY")" = "not a HeldPartitions" ] && ok || bad "the damaged key was written over"
# set aside by the command the refusal names (over TLS: with the replica's files)
cmd=$(sed -n "s/.*--cluster-{cacert,cert,key}: \(etcdctl .* del '[^']*'\).*/\1/p" "$TMP/err" | head -n 1)
(cd "$TMP" && ETCDCTL_CACERT=$ETCD_PKI/ca.pem ETCDCTL_CERT=$ETCD_PKI/client.pem \
	ETCDCTL_KEY=$ETCD_PKI/client.key sh -c "$cmd") >/dev/null 2>&1 && ls "$TMP/$FAB.held"*.json >/dev/null &&
	[ -z "$($ETCDCTL get --print-value-only "$KEY")" ] && ok || bad "the refusal's etcdctl command" "$cmd"
deadline 10
until prolog "$TMP/$F.sock" 13 'h[20-23]' ring:4 >"$TMP/out" 2>"$TMP/err" || past $_end; do sleep 0.2; done
grep -q "partition slurm-job-13: ring:4 on 4 hosts committed" "$TMP/out" && ok || bad "mutations once the key is gone" "$(cat "$TMP/err")"

finish
