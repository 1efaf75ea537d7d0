#!/bin/sh
# A failure through three replicas on etcd (docs/ofcd.md, "Replicas"): the
# leader answers `ofc fail` with the workload's schedule on what survives,
# verified, shows that answer as its state's schedule without computing it
# again, and writes it to the store (PREFIX/FABRIC/schedule); the followers
# show the leader's answer, read from the store, and compute none (their
# logs say which: "read from the store, not computed here" against
# "computing it here"); a restore brings every replica back to the healthy
# schedule, again the leader's; a new leader that takes over with the
# failure in effect shows the answer from the store too; a follower that
# finds the answer damaged (or another state's) computes its own, and says
# why. The leader writes its answer to the store after it has answered (the
# failures before); a leader gone in between leaves the previous state's
# answer there, and the next leader computes this state's from the failures.
# The failure taken over is made by h2's agent (ofc-hostd, its port 0 a
# loopback down in a namespace of its own): the new leader still knows it
# as the host's, and the agent's good reports restore it there.
SUITE=cluster_failures
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_failures: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
three_replicas 5
FAB=torus64-ocs

# mark NAME: where NAME's log ends now; since NAME: the log after the mark
mark() { eval "${1}_mark=\$(wc -c <\"\$TMP/\$1.log\")"; }
since() { eval "tail -c +\$((\${1}_mark + 1)) \"\$TMP/\$1.log\""; }
# logged NAME SECS TEXT: until NAME's log since its mark has TEXT
logged() {
	deadline "$2"
	until since "$1" | grep -qF "$3" || past $_end; do sleep 0.1; done
	since "$1" | grep -qF "$3"
}
# sched NAME: "ALGORITHM TOPOLOGY STEPS TIME VERIFIED FAILED" of NAME's state
# (the time as the answer prints it: %.6g)
sched() {
	cluster_json "$1" && python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
s = j.get("schedule") or {}
print(s.get("algorithm"), s.get("topology"), s.get("num_steps"), "%.6g" % s.get("time_us", 0), s.get("verified"),
      ",".join(j.get("failed", [])) or "-")' "$TMP/$1.json"
}
READ="read from the store, not computed here"
COMPUTING="the state's schedule: computing it here"

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
set -- $(others "$L")
F1=$1 F2=$2
expect_exit 0 $OFC --socket "$TMP/$L.sock" reconfigure --topology torus:8x8
# the healthy schedule, as every replica shows it (a follower computes it
# when asked: the leader wrote no answer for a commit)
for r in $L $F1 $F2; do
	until_state $r 20 'j.get("schedule", {}).get("verified") and j["config_generation"] >= 1' ||
		bad "$r shows no healthy schedule" "$(cat "$TMP/$r.json")"
done
HEALTHY=$(sched "$L")
case $HEALTHY in "bfb torus:8x8 "*" True -") ok ;; *) bad "the healthy schedule" "$HEALTHY" ;; esac
[ "$(sched "$F1")" = "$HEALTHY" ] && [ "$(sched "$F2")" = "$HEALTHY" ] && ok ||
	bad "the replicas' healthy schedules differ" "$HEALTHY / $(sched "$F1") / $(sched "$F2")"

# ---- a failed link: the leader's answer, shown by every replica --------------------
for r in $L $F1 $F2; do mark $r; done
expect_stdout_has "h0-h1 failed; 1 failure in effect (h0-h1); bfb allreduce on torus:8x8 without h0-h1: " \
	$OFC --socket "$TMP/$L.sock" fail h0-h1
ANSWER=$(sed -n 's/.*bfb allreduce on torus:8x8 without h0-h1: \([0-9]*\) steps, \([0-9.e+]*\) us.*/\1 \2/p' "$TMP/out")
[ -n "$ANSWER" ] && ok || bad "the answer's steps and time" "$(cat "$TMP/out")"
WROTE="the state's schedule written to the store for the other replicas"
logged "$L" 20 "$WROTE" && ok || bad "the leader's log does not say it wrote the answer" "$(since "$L" | tail -5)"
etcd_ctl get "/ofc/$FAB/schedule" --keys-only | grep -q "^/ofc/$FAB/schedule$" && ok ||
	bad "the leader wrote no answer to the store" "$(etcd_ctl get /ofc/ --prefix --keys-only)"
# ... after the answer went to the client (its ticket's line), not before:
# the client waits on the failures' write, not on this one
FIRST=$(since "$L" | grep -E "ticket [0-9]+: report-failure .*: ok: |$WROTE" | head -n 1)
case $FIRST in *"report-failure h0-h1"*": ok: "*) ok ;;
*) bad "the leader wrote the answer to the store before it answered" "$(since "$L" | grep -E "ticket|$WROTE")" ;; esac
# each follower's watch delivers it: shown without a client asking, and
# without computing
for r in $F1 $F2; do
	logged $r 20 "$READ" && ok || bad "$r did not read the leader's answer" "$(since $r | tail -8)"
done
FAILED=$(sched "$L")
case $FAILED in "bfb torus:8x8 without h0-h1 ${ANSWER% *} ${ANSWER#* } True h0-h1") ok ;;
*) bad "the leader's state is not its answer ($ANSWER)" "$FAILED" ;; esac
for r in $F1 $F2; do
	[ "$(sched $r)" = "$FAILED" ] && ok || bad "$r shows another schedule than the leader's" "$(sched $r) / $FAILED"
	since $r | grep -qF "$COMPUTING" && bad "$r computed the schedule the leader answered" "$(since $r | grep -F "$COMPUTING")" || ok
	grep -qF "the answer of replica $L (epoch " "$TMP/$r.log" && ok || bad "$r's log does not name the leader" "$(since $r | grep "$READ")"
done
# the leader computed it once, answering the failure: its state took that answer
since "$L" | grep -qF "$COMPUTING" && bad "the leader computed its state's schedule again" "$(since "$L" | grep -F "$COMPUTING")" || ok

# ---- a restore: every replica back on the healthy schedule, the leader's --------
for r in $L $F1 $F2; do mark $r; done
expect_stdout_has "h0-h1 restored; no failure in effect; bfb allreduce on torus:8x8: " \
	$OFC --socket "$TMP/$L.sock" restore h0-h1
for r in $F1 $F2; do
	logged $r 20 "$READ" && ok || bad "$r did not read the leader's healthy answer" "$(since $r | tail -8)"
done
for r in $L $F1 $F2; do
	[ "$(sched $r)" = "$HEALTHY" ] && ok || bad "$r after the restore" "$(sched $r) / $HEALTHY"
	since $r | grep -qF "$COMPUTING" && bad "$r computed the healthy schedule again" "$(since $r | grep -F "$COMPUTING")" || ok
done

# ---- a takeover with a failure in effect: the new leader reads the answer ---------
# h2's port 0 down on its host: its agent's report makes the failure (as
# root, with namespaces; else the operator's fail)
HNS="ofc-cf$$"
if [ "$(id -u)" -eq 0 ] && ip netns add "$HNS" 2>/dev/null; then
	trap 'ip netns del "$HNS" 2>/dev/null; stop_cluster; rm_tmp' EXIT
	# (lo is down in a new namespace: no carrier)
	hostd_h2() { $BUILD/ofc-hostd --host h2 --port 0=lo --netns "$HNS" --lldp-socket "$TMP/no-lldpd" "$@"; }
	expect_exit 0 hostd_h2 --socket "$TMP/$L.sock" --once
else
	HNS=""
	echo "cluster_failures: not root or no namespaces: h2:0 failed by the operator"
	expect_exit 0 $OFC --socket "$TMP/$L.sock" fail h2:0
fi
for r in $F1 $F2; do mark $r; done
for r in $F1 $F2; do
	until_state $r 20 'j.get("failed") == ["h2:0"] and j.get("schedule", {}).get("verified")' ||
		bad "$r does not show the failed port" "$(cat "$TMP/$r.json")"
done
PORT=$(sched "$L")
replica_stop "$L" KILL
wait_leader 30 $F1 $F2 && ok || bad "no new leader" "$(tail -5 "$TMP/$F1.log")"
N=$LEADER
until_state $N 20 'j.get("failed") == ["h2:0"] and j.get("schedule", {}).get("verified")' ||
	bad "the new leader's state" "$(cat "$TMP/$N.json")"
if [ -n "$HNS" ]; then
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("failed_by_host"))' "$TMP/$N.json")" = "['h2:0']" ] &&
		ok || bad "the new leader knows h2:0 as the host's failure" "$(cat "$TMP/$N.json")"
fi
[ "$(sched $N)" = "$PORT" ] && ok || bad "the new leader shows another schedule" "$(sched $N) / $PORT"
since $N | grep -qF "$COMPUTING" && bad "the new leader computed the schedule again" "$(since $N | grep -F "$COMPUTING")" || ok

# ---- a damaged answer: a replica computes its own, and says why --------------------
etcd_ctl put "/ofc/$FAB/schedule" "not a protobuf" >/dev/null && ok || bad "etcdctl put"
mark "$L"
replica_start "$L" --probe-interval 0
until_state "$L" 20 'j.get("failed") == ["h2:0"] and j.get("schedule", {}).get("verified")' ||
	bad "$L (restarted, the answer damaged) shows no schedule" "$(cat "$TMP/$L.json")"
[ "$(sched "$L")" = "$PORT" ] && ok || bad "computed here, another schedule" "$(sched "$L") / $PORT"
since "$L" | grep -qF "$COMPUTING (the leader's answer in the store is damaged" && ok ||
	bad "the restarted follower does not say why it computed" "$(since "$L" | grep "state's schedule")"
# the leader's next answer is read again
mark "$L"
if [ -n "$HNS" ]; then
	# h2:0 up again: the new leader restores the failure the old one took
	# from the host, after the hold-down (its agent reporting meanwhile)
	ip netns exec "$HNS" ip link set lo up
	hostd_h2 --socket "$TMP/$N.sock" --interval 0.3 >"$TMP/hostd.log" 2>&1 &
	HOSTD=$!
	until_state $N 30 'not j.get("failed") and not j.get("failed_by_host")' ||
		bad "the new leader restored h2:0 on its host's word" "$(cat "$TMP/$N.json")" "$(cat "$TMP/hostd.log")"
	kill $HOSTD
	wait $HOSTD 2>/dev/null
else
	expect_exit 0 $OFC --socket "$TMP/$N.sock" restore h2:0
fi
logged "$L" 20 "$READ" && ok || bad "$L did not read the next answer" "$(since "$L" | tail -8)"
[ "$(sched "$L")" = "$HEALTHY" ] && ok || bad "$L after the restore" "$(sched "$L") / $HEALTHY"

# ---- the leader gone between its answer and the answer's write --------------------
# The store then holds the previous state's answer beside the failures
# (written before the answer): put back here after the write. The next
# leader takes none of it for this state and computes it from the failures.
etcd_ctl get "/ofc/$FAB/schedule" -w json | python3 -c 'import base64,json,sys
sys.stdout.buffer.write(base64.b64decode(json.load(sys.stdin)["kvs"][0]["value"]))' >"$TMP/previous" &&
	[ -s "$TMP/previous" ] && ok || bad "the healthy answer in the store" "$(etcd_ctl get /ofc/ --prefix --keys-only)"
mark "$N"
expect_exit 0 $OFC --socket "$TMP/$N.sock" fail h3:1
GONE=$(sched "$N")
logged "$N" 20 "$WROTE" && ok || bad "$N wrote no answer" "$(since "$N" | tail -5)"
etcd_ctl put "/ofc/$FAB/schedule" <"$TMP/previous" >/dev/null && ok || bad "etcdctl put the previous answer"
set -- $(others "$N")
for r in "$@"; do mark $r; done
replica_stop "$N" KILL
wait_leader 30 "$@" && ok || bad "no leader after $N" "$(tail -5 "$TMP/$1.log")"
until_state $LEADER 20 'j.get("failed") == ["h3:1"] and j.get("schedule", {}).get("verified")' ||
	bad "the next leader shows no schedule for h3:1" "$(cat "$TMP/$LEADER.json")"
[ "$(sched $LEADER)" = "$GONE" ] && ok || bad "the next leader computed another schedule" "$(sched $LEADER) / $GONE"
since $LEADER | grep -qF "$COMPUTING (the leader's answer in the store is another state's" && ok ||
	bad "the next leader does not say why it computed" "$(since $LEADER | grep "state's schedule")"

finish
