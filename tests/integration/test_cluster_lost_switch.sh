#!/bin/sh
# A switch lost through three replicas on etcd (docs/ofcd.md, "Replicas"):
# only the leader reads the devices, so the followers learn its lost host
# ports from the store (PREFIX/FABRIC/lost). torus:8x8 on four ocs-emu
# switches, port j of every host on switch j; the replicas probe every
# 200 ms while they lead. ocs0 killed: every replica shows every host's
# port 0 failed and the leader's schedule for them, the followers reading
# it from the store, computing none; a new leader starts from the store's
# ports (no re-plan), a restarted replica too; ocs0 back: every replica
# healthy again. A damaged lost item: the followers leave it out of effect and say
# so, and the leader does not write over it.
SUITE=cluster_lost_switch
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_lost_switch: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
FAB=lostc
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
for i in 0 1 2 3; do
	start_emu ocs-emu "e$i" --ports 64 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
		--credentials "$TMP/r3.cred" --state "$TMP/e$i.state"
done
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
for r in r1 r2 r3; do
	mkdir -p "$TMP/$r/state"
	chmod 700 "$TMP/$r"
	cp "$TMP/$r.cred" "$TMP/$r/ocs0.cred"
	chmod 600 "$TMP/$r/ocs0.cred"
	{
		printf 'version: 1\nname: %s\nhosts: {count: 64, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' $FAB
		for i in 0 1 2 3; do
			eval "p=\$e${i}_port"
			printf '  - {name: ocs%s, type: ocs, ports: 64, driver: {type: tl1, address: "127.0.0.1:%s", credentials: ocs0.cred, timeout: 1s, retries: 1}}\n' "$i" "$p"
		done
		printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\ntopology: torus:8x8\n'
		printf 'collectives:\n  - {op: allreduce, size: 64MiB}\n'
	} >"$TMP/$r/fab.yaml"
	replica_start $r --probe-interval 200ms
done

# mark NAME: where NAME's log ends now; since NAME: the log after the mark
mark() { eval "${1}_mark=\$(wc -c <\"\$TMP/\$1.log\")"; }
since() { eval "tail -c +\$((\${1}_mark + 1)) \"\$TMP/\$1.log\""; }
# logged NAME SECS TEXT: until NAME's log since its mark has TEXT
logged() {
	deadline "$2" _logged_end
	until since "$1" | grep -qF "$3" || past $_logged_end; do sleep 0.1; done
	since "$1" | grep -qF "$3"
}
# sched NAME: "ALGORITHM TOPOLOGY STEPS TIME VERIFIED NFAILED" of NAME's state
sched() {
	cluster_json "$1" || [ -s "$TMP/$1.json" ] && python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
s = j.get("schedule") or {}
print(s.get("algorithm"), s.get("topology"), s.get("num_steps"), "%.6g" % s.get("time_us", 0), s.get("verified"),
      len(j.get("failed", [])))' "$TMP/$1.json"
}
READ="read from the store, not computed here"
COMPUTING="the state's schedule: computing it here"

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
set -- $(others "$L")
F1=$1 F2=$2
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology torus:8x8
for r in $L $F1 $F2; do
	until_state $r 20 'j.get("schedule", {}).get("verified") and j["config_generation"] >= 1 and not j.get("failed")' ||
		bad "$r shows no healthy schedule" "$(cat "$TMP/$r.json")"
done
HEALTHY=$(sched "$L")
case $HEALTHY in "bfb torus:8x8 "*" True 0") ok ;; *) bad "the healthy schedule" "$HEALTHY" ;; esac
WANT=$(python3 -c 'print(sorted("h%d:0" % h for h in range(64)))')

# ---- ocs0 lost: every replica shows its ports failed, the leader's schedule ------
for r in $L $F1 $F2; do mark $r; done
kill "$e0_pid"
wait "$e0_pid" 2>/dev/null
until_state $L 20 "sorted(j.get('failed', [])) == $WANT and j.get('schedule', {}).get('verified')" &&
	ok || bad "the leader does not show ocs0's ports failed" "$(head -c 600 "$TMP/$L.json")"
LOST=$(sched "$L")
case $LOST in "$HEALTHY") bad "the schedule did not change with the switch lost" "$LOST" ;;
"bfb torus:8x8 "*" True 64") ok ;; *) bad "the lost switch's schedule" "$LOST" ;; esac
logged $L 10 "the lost host ports written to the store for the other replicas (64)" && ok ||
	bad "the leader did not write its lost ports" "$(since $L | tail -5)"
etcd_ctl get "/ofc/$FAB/lost" --print-value-only | grep -qx "h5:0" && ok ||
	bad "the store's lost item" "$(etcd_ctl get "/ofc/$FAB/lost" | head -5)"
for r in $F1 $F2; do
	until_state $r 20 "sorted(j.get('failed', [])) == $WANT and j.get('schedule', {}).get('verified')" &&
		ok || bad "$r does not show ocs0's ports failed" "$(head -c 600 "$TMP/$r.json")"
	[ "$(sched $r)" = "$LOST" ] && ok || bad "$r shows another schedule than the leader's" "$(sched $r) / $LOST"
	since $r | grep -qF "$READ" && ok || bad "$r did not read the leader's answer" "$(since $r | tail -8)"
	since $r | grep -qF "$COMPUTING" && bad "$r computed the schedule the leader answered" "$(since $r | grep -F "$COMPUTING")" || ok
done

# ---- a takeover with ocs0 lost: the new leader starts from the store's ports -------
for r in $F1 $F2; do mark $r; done
replica_stop "$L" KILL
# (the new leader's first probe finds ocs0 lost: status exits 1, its state
# whole, which the shared polls take)
wait_leader 30 $F1 $F2
N=$LEADER
[ -n "$N" ] && ok || bad "no new leader" "$(tail -5 "$TMP/$F1.log")"
logged "$N" 10 "took over fabric $FAB" && ok || bad "$N's takeover" "$(since $N | tail -5)"
until_state "$N" 10 "sorted(j.get('failed', [])) == $WANT" && ok || bad "the new leader's state" "$(head -c 600 "$TMP/$N.json")"
[ "$(sched $N)" = "$LOST" ] && ok || bad "the new leader shows another schedule" "$(sched $N) / $LOST"
sleep 1 # (five of its probes: ocs0 still lost, nothing changed)
since $N | grep -qF "schedule re-planned" && bad "the new leader re-planned what the store said" "$(since $N | grep -F "re-planned")" || ok
since $N | grep -qF "$COMPUTING" && bad "the new leader computed the schedule again" "$(since $N | grep -F "$COMPUTING")" || ok
# the old leader back, as a follower: its start reads the lost ports
mark "$L"
replica_start "$L" --probe-interval 200ms
until_state "$L" 20 "sorted(j.get('failed', [])) == $WANT and j.get('schedule', {}).get('verified')" && ok ||
	bad "the restarted replica does not show ocs0's ports failed" "$(head -c 600 "$TMP/$L.json")"
[ "$(sched "$L")" = "$LOST" ] && ok || bad "the restarted replica's schedule" "$(sched "$L") / $LOST"
L=$N
set -- $(others "$L")
F1=$1 F2=$2

# ---- ocs0 back: every replica healthy, the key gone ---------------------------------
for r in $L $F1 $F2; do mark $r; done
$BUILD/ocs-emu --listen "127.0.0.1:$e0_port" --ports 64 --credentials "$TMP/r1.cred" \
	--credentials "$TMP/r2.cred" --credentials "$TMP/r3.cred" --state "$TMP/e0.state" 2>>"$TMP/e0.stderr" &
e0_pid=$!
EMUS="$EMUS $e0_pid"
for r in $L $F1 $F2; do
	until_state $r 20 'not j.get("failed") and j.get("schedule", {}).get("verified")' && ok ||
		bad "$r: ocs0 back, yet failures in effect" "$(head -c 600 "$TMP/$r.json")"
	[ "$(sched $r)" = "$HEALTHY" ] && ok || bad "$r's schedule after ocs0 is back" "$(sched $r) / $HEALTHY"
done
[ -z "$(etcd_ctl get "/ofc/$FAB/lost" --keys-only)" ] && ok || bad "the lost item outlived the loss"

# ---- a damaged lost item: out of effect, said, not written over ----------------------
for r in $L $F1 $F2; do mark $r; done
etcd_ctl put "/ofc/$FAB/lost" "not a port" >/dev/null && ok || bad "etcdctl put"
for r in $F1 $F2; do
	logged $r 20 "the leader's lost host ports are left out of effect: " && ok ||
		bad "$r does not say the lost item is damaged" "$(since $r | tail -5)"
	since $r | grep -qF "not a host port HOST:PORT" && ok || bad "$r does not say why" "$(since $r | grep lost)"
	until_state $r 10 'not j.get("failed") and j.get("schedule", {}).get("verified")' && ok ||
		bad "$r put a damaged item in effect" "$(head -c 600 "$TMP/$r.json")"
done
kill "$e0_pid"
wait "$e0_pid" 2>/dev/null
logged $L 20 "the lost host ports are not written to the store over a damaged item" && ok ||
	bad "the leader does not say it keeps the damaged item" "$(since $L | grep -i lost | tail -5)"
[ "$(etcd_ctl get "/ofc/$FAB/lost" --print-value-only)" = "not a port" ] && ok ||
	bad "the damaged item was written over" "$(etcd_ctl get "/ofc/$FAB/lost" | head -3)"

finish
