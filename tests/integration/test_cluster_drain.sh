#!/bin/sh
# A drain through three replicas on etcd (docs/ofcd.md, "A switch's
# maintenance window"): the leader drains a switch port; every replica
# shows it drained (by whom) and the schedule without its host port; the
# switch loses that port's two circuits. The leader killed (-9): the new
# leader keeps the port drained (the store's /ofc/FABRIC/drained) and
# undrains it: the circuits back as before, every replica healthy again.
SUITE=cluster_drain
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_drain: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
three_replicas 5
FAB=torus64-ocs
# sched NAME: "ALGORITHM TOPOLOGY STEPS TIME VERIFIED FAILED DRAINED" of NAME's state
sched() {
	cluster_json "$1" && python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
s = j.get("schedule") or {}
print(s.get("algorithm"), s.get("topology"), s.get("num_steps"), "%.6g" % s.get("time_us", 0), s.get("verified"),
      ",".join(j.get("failed", [])) or "-",
      ",".join("%s:%d" % (d["switch_name"], d["port"]) for d in j.get("drained", [])) or "-")' "$TMP/$1.json"
}

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(cluster_why r1 r2 r3)"
L=$LEADER
set -- $(others "$L")
F1=$1 F2=$2
ALL="$TMP/r1.sock,$TMP/r2.sock,$TMP/r3.sock"
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology torus:8x8
for r in $L $F1 $F2; do
	until_state $r 20 'j.get("schedule", {}).get("verified") and j["config_generation"] >= 1' ||
		bad "$r shows no healthy schedule" "$(cat "$TMP/$r.json")"
done
HEALTHY=$(sched "$L")
sort "$TMP/e.state" >"$TMP/before"
[ "$(wc -l <"$TMP/before")" -eq 256 ] && ok || bad "the switch holds the torus" "$(wc -l <"$TMP/before")"

# ---- drained on the leader, shown by every replica ------------------------------------
$OFC --socket "$TMP/$F1.sock" watch --json >"$TMP/fwatch" 2>/dev/null & # a follower's watcher
fwatch_pid=$!
HELPER_PIDS="$HELPER_PIDS $fwatch_pid"
expect_stdout_has "ocs0:5 drained (1 switch port; no running job of libofc-mpi on these ports to say it took the new schedule: 1000 ms of grace; circuits removed: transaction" \
	$OFC --socket "$TMP/$L.sock" drain ocs0:5 --grace 1s
[ "$(wc -l <"$TMP/e.state")" -eq 254 ] && ok || bad "the drained port's two circuits are still up" "$(wc -l <"$TMP/e.state")"
etcd_ctl get "/ofc/$FAB/drained" --print-value-only | grep -q "^ocs0 5 [0-9]* uid:$(id -u)$" && ok ||
	bad "the store has no drained port" "$(etcd_ctl get /ofc/ --prefix --keys-only)"
for r in $L $F1 $F2; do
	until_state $r 20 'len(j.get("drained", [])) == 1 and j["drained"][0]["port"] == 5 and j["drained"][0]["by"].startswith("uid:") and len(j.get("failed", [])) == 1 and j.get("schedule", {}).get("verified")' &&
		ok || bad "$r does not show ocs0:5 drained" "$(head -c 600 "$TMP/$r.json")"
done
DRAINED=$(sched "$L")
case $DRAINED in *" True "*" ocs0:5") ok ;; *) bad "the leader's drained schedule" "$DRAINED" ;; esac
[ "$DRAINED" != "$HEALTHY" ] && [ "$(sched "$F1")" = "$DRAINED" ] && [ "$(sched "$F2")" = "$DRAINED" ] && ok ||
	bad "the replicas' drained schedules differ" "$DRAINED / $(sched "$F1") / $(sched "$F2")"
deadline 10
until grep -q '"KIND_DRAINED"' "$TMP/fwatch" || past $_end; do sleep 0.1; done
grep -q '"KIND_DRAINED"' "$TMP/fwatch" && ok || bad "a follower's watcher did not hear the drain" "$(grep -o '"kind":"[A-Z_]*"' "$TMP/fwatch" | sort | uniq -c)"
refused_twice=$($OFC --socket "$TMP/$F1.sock" drain ocs0:5 2>&1)
case $refused_twice in *"not the leader"* | *"ocs0:5 drained already"*) ok ;;
*) bad "a follower's drain of a drained port" "$refused_twice" ;; esac

# ---- the leader killed: the new one keeps it drained, and undrains it --------------------
replica_stop "$L" KILL
wait_leader 30 $F1 $F2 && ok || bad "no new leader" "$(cluster_why $F1 $F2)"
N=$LEADER
until_state $N 20 'len(j.get("drained", [])) == 1 and j.get("schedule", {}).get("verified")' && ok ||
	bad "the new leader lost the drained port" "$(head -c 600 "$TMP/$N.json")"
[ "$(wc -l <"$TMP/e.state")" -eq 254 ] && ok || bad "the takeover put the drained port's circuits back" "$(wc -l <"$TMP/e.state")"
expect_stdout_has "ocs0:5 undrained (1 switch port; circuits back: transaction" \
	$OFC --socket "$ALL" undrain ocs0:5
sort "$TMP/e.state" | cmp -s - "$TMP/before" && ok || bad "the switch after undrain differs from before the drain" \
	"$(sort "$TMP/e.state" | diff - "$TMP/before" | head -5)"
for r in $F1 $F2; do
	until_state $r 20 'not j.get("drained") and not j.get("failed") and j.get("schedule", {}).get("verified")' &&
		ok || bad "$r still drained after undrain" "$(head -c 600 "$TMP/$r.json")"
	[ "$(sched "$r")" = "$HEALTHY" ] && ok || bad "$r: the healthy schedule after undrain" "$(sched "$r") / $HEALTHY"
done
etcd_ctl get "/ofc/$FAB/drained" --keys-only | grep -q drained && bad "the store still has drained ports" || ok

# ---- a change in stages, its leader killed at each stage ---------------------------------
# (docs/ofcd.md, "A change in stages"): torus:8x8 to circulant:64:1,8 at
# --max-loss 25% is two stages; the leader killed -9 in stage 1's grace, the
# next one resumes from the store's record (stage 1 again: it had not
# committed) and ends at the target; back to torus:8x8 the same way, the
# leader killed in stage 2's grace, after stage 1 committed: the next one
# resumes at stage 2 and ends with the very circuits of before.
replica_start "$L" --probe-interval 0
# staged_kill R TARGET N: R runs the staged change to TARGET, killed -9 once
# its log says stage N's schedule is out (its grace is 2 s)
staged_kill() {
	$OFC --socket "$TMP/$1.sock" reconfigure --topology "$2" --max-loss 25% --grace 2s \
		>"$TMP/staged-$1.out" 2>&1 &
	_spid=$!
	deadline 30
	until grep -q "$2: stage $3 of 2, .*its schedule published" "$TMP/$1.log" || past $_end; do sleep 0.1; done
	grep -q "$2: stage $3 of 2, .*its schedule published" "$TMP/$1.log" && ok ||
		bad "$1 did not reach stage $3 of the change to $2" "$(tail -5 "$TMP/$1.log")"
	etcd_ctl get "/ofc/$FAB/staged" --keys-only | grep -q staged && ok || bad "no record of the staged change in etcd"
	replica_stop "$1" KILL
	wait "$_spid" 2>/dev/null
}
staged_kill "$N" circulant:64:1,8 1
set -- $(others "$N")
wait_leader 30 "$@" && ok || bad "no leader after the kill in stage 1" "$(cluster_why "$@")"
M=$LEADER
until_state $M 60 'j.get("target_topology") == "circulant:64:1,8" and j.get("at_target") and not j.get("failed") and j.get("schedule", {}).get("verified")' &&
	ok || bad "$M did not end the staged change at its target" "$(head -c 600 "$TMP/$M.json")"
grep -q "the last leader's staged reconfiguration to circulant:64:1,8 (0 of 2 stages committed): resumed here" "$TMP/$M.log" &&
	ok || bad "$M did not say it resumed the staged change" "$(grep -i staged "$TMP/$M.log" | tail -3)"
etcd_ctl get "/ofc/$FAB/staged" --keys-only | grep -q staged && bad "the record stays after the last stage" || ok
expect_stdout_has "0 operations on 1 device would take fabric '$FAB' to circulant:64:1,8" \
	$OFC --socket "$TMP/$M.sock" reconfigure --topology circulant:64:1,8 --dry-run
replica_start "$N" --probe-interval 0
staged_kill "$M" torus:8x8 2
set -- $(others "$M")
wait_leader 30 "$@" && ok || bad "no leader after the kill in stage 2" "$(cluster_why "$@")"
K=$LEADER
until_state $K 60 'j.get("target_topology") == "torus:8x8" and j.get("at_target") and not j.get("failed") and j.get("schedule", {}).get("verified")' &&
	ok || bad "$K did not end the staged change back at torus:8x8" "$(head -c 600 "$TMP/$K.json")"
grep -q "the last leader's staged reconfiguration to torus:8x8 (1 of 2 stages committed): resumed here" "$TMP/$K.log" &&
	ok || bad "$K did not resume at stage 2" "$(grep -i staged "$TMP/$K.log" | tail -3)"
grep -q "torus:8x8: stage 1 of 2, " "$TMP/$K.log" && bad "$K ran stage 1 again" "$(grep 'stage 1 of 2' "$TMP/$K.log")" || ok
sort "$TMP/e.state" | cmp -s - "$TMP/before" && ok || bad "the switch after the staged change back differs from before" \
	"$(sort "$TMP/e.state" | diff - "$TMP/before" | head -5)"
# every stage that ran, on whichever leader, within the budget
cat "$TMP"/r[123].log | python3 -c 'import re,sys
l = [float(x) for x in re.findall(r": stage \d of 2, \d+ circuits? to move, \d+ host ports? out of use \(loss ([0-9.]+)%, at most 25%\)", sys.stdin.read())]
sys.exit(0 if len(l) >= 4 and max(l) <= 25 else 1)' && ok || bad "a stage's loss over 25%" "$(grep -h 'at most 25%' "$TMP"/r[123].log)"
finish
