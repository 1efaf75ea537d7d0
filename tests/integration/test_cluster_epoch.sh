#!/bin/sh
# The epoch counts elections (docs/ofcd.md, "Replicas"): five kill -9s of
# the leader, each after the fabric stood idle a few seconds while etcd
# took writes (every replica's registration, written again every half
# lease, and a key of another program's), and the epoch every replica
# shows, in its status, its metrics and the leader key, is one higher
# after each failover. etcd's revision, what the epoch was before, moves
# by more than one between two elections here (checked too), so an epoch
# that followed it would not pass. First, the leader's planner process
# (docs/ofcd.md, "The planner process") killed with kill -9 in the middle
# of a GetSchedule: the request is refused with the reason, the leader
# keeps leading under the same epoch, and the next GetSchedule is answered
# by another planner; /proc/PID/limits shows the planner's limits.
SUITE=cluster_epoch
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_epoch: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
three_replicas 5
K=/ofc/torus64-ocs

# revision: etcd's revision now
revision() {
	etcd_ctl get /x -w json 2>/dev/null | python3 -c 'import json,sys
print(json.load(sys.stdin)["header"]["revision"])'
}
# shown NAME: the epoch NAME's status and metrics show, "STATUS METRIC"
shown() {
	cluster_json "$1"
	s=$(python3 -c 'import json,sys
print(((json.load(open(sys.argv[1])).get("cluster") or {}).get("leader") or {}).get("epoch", 0))' "$TMP/$1.json" 2>/dev/null)
	m=$($OFC --socket "$TMP/$1.sock" metrics 2>/dev/null | awk '$1 == "ofc_cluster_epoch" {print $2}')
	echo "${s:-?} ${m:-?}"
}
# key_epoch: what the leader key's value says
key_epoch() {
	etcd_ctl get --print-value-only "$K/leader" 2>/dev/null | python3 -c 'import json,sys
print(json.load(sys.stdin).get("epoch", 0))' 2>/dev/null || echo 0
}
# until_shown SECS EPOCH NAME...: until every NAME shows EPOCH (status and metric)
until_shown() {
	_s=$1 _e=$2
	shift 2
	deadline "$_s" _shown_end
	while :; do
		_all=1
		for _n in "$@"; do [ "$(shown "$_n")" = "$_e $_e" ] || _all=0; done
		[ $_all = 1 ] && return 0
		past $_shown_end && return 1
		sleep 0.2
	done
}

wait_leader 20 r1 r2 r3 && ok || bad "no leader" "$(cluster_why r1 r2 r3)"
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$B"
E=$(key_epoch)
[ "$E" -ge 1 ] && until_shown 10 "$E" r1 r2 r3 && ok ||
	bad "the replicas do not show the leader key's epoch $E" "r1 $(shown r1), r2 $(shown r2), r3 $(shown r3)"

# ---- ofcd's threads at rest ----------------------------------------------------------
# A replica no request keeps busy, leader or follower, runs the loop
# (named ofcd), the mutation worker and the etcd store's two threads (the
# session asks the members' health too): one of each, the rest (the
# schedule workers, the plan-ahead pool, the state's schedule) start when
# work comes and end after it (docs/ARCHITECTURE.md, "ofcd's threads").
for F in r1 r2 r3; do [ "$F" != "$LEADER" ] && break; done
REST="etcd-session x1, etcd-watch x1, ofcd x1, ofcd-mutation x1"
for R in "$LEADER" "$F"; do
	eval "RPID=\$${R}_pid"
	at_rest "$RPID" "$REST" 30 && ok || bad "$R's threads at rest are not the four" "$(thread_kinds "$RPID")" "$(thread_detail "$RPID")"
done

# ---- an etcd member that hangs: its health times out, the lease stays -------------
# The session asks each member's status between two keepalives, each
# request started only if its timeout ends before the next keepalive is
# due (docs/internals.md, "The store"): a member stopped (SIGSTOP: it
# takes connections and answers nothing, so each status waits out its
# 0.3 s) shows unreachable, and the leader keeps its lease and epoch for
# three leases. (Not etcd's own raft leader: no election of etcd's.)
L=$LEADER
M=$(not_raft_leader "$L")
eval "KPID=\$ETCD_PID$M"
DOWN0=$(grep -c "no more" "$TMP/$L.log")
kill -STOP "$KPID"
until_state "$L" 20 "not j['cluster']['members'][$M - 1]['reachable']" && ok ||
	bad "a stopped etcd member is not shown unreachable" "$(cat "$TMP/$L.json")"
# (exit 1: in 6 s, never a state of L's that is not leading under epoch E
# with its lease left; a field missing counts as not)
until_state "$L" 6 "(lambda c: c.get('role') != 'leader' or (c.get('leader') or {}).get('epoch') != $E or not c.get('lease_left_seconds', 0) > 0)(j.get('cluster') or {})"
[ $? = 1 ] && [ "$(grep -c "no more" "$TMP/$L.log")" = "$DOWN0" ] && ok ||
	bad "$L lost the lease while etcd member $M hung" "$(cat "$TMP/$L.json"; grep "no more" "$TMP/$L.log" | tail -2)"
kill -CONT "$KPID"
until_state "$L" 20 "all(m['reachable'] for m in j['cluster']['members'])" && ok ||
	bad "etcd member $M, going on, is not shown reachable again" "$(cat "$TMP/$L.json")"

# ---- the planner process killed mid-plan -------------------------------------------
L=$LEADER
eval "LPID=\$${L}_pid"
# planner_busy [PID...]: the pid of a planner of the leader's, not one of
# PIDs, that has used CPU
planner_busy() {
	for _p in $(pgrep -P "$LPID" -x ofc-planner); do
		case " $* " in *" $_p "*) continue ;; esac
		awk '{exit !($14 + $15 > 20)}' "/proc/$_p/stat" 2>/dev/null && echo "$_p" && return 0
	done
	return 1
}
# an all-to-all MCF on a 256-node torus: about 12 s on one core, killed long before
$OFC --socket "$TMP/$L.sock" schedule --collective alltoall --algo mcf --topology torus:16x16 \
	--size 1MiB --summary >"$TMP/plan.out" 2>&1 &
ASK=$!
deadline 30 _busy_end
until PP=$(planner_busy) || past $_busy_end; do sleep 0.05; done
if [ -n "$PP" ]; then
	ok
	# its limits: the request's memory limit (--max-request-memory: a
	# quarter of the machine's by default)
	# and the room for the code and the threads' arenas; CPU time; no core
	MEM=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
	WANT=$((MEM * 1024 / 4 + (1 << 30) + $(nproc) * (128 << 20)))
	# (a sanitizer's build leaves it unbounded: its shadow memory)
	[ -z "${SAN:-}" ] || WANT=unlimited
	awk -v w="$WANT" '/^Max address space/ {a = ($4 == w)} /^Max cpu time/ {c = ($4 ~ /^[0-9]+$/)}
		/^Max core file size/ {k = ($5 == 0)} END {exit !(a && c && k)}' "/proc/$PP/limits" &&
		ok || bad "the planner's limits are not the request's (address space $WANT bytes)" "$(cat "/proc/$PP/limits")"
	# no capability (as root, not even in its bounding set), none to gain
	{ [ "$(id -u)" != 0 ] || grep -q "^CapBnd:[[:space:]]*0*$" "/proc/$PP/status"; } &&
		grep -q "^CapEff:[[:space:]]*0*$" "/proc/$PP/status" &&
		grep -q "^NoNewPrivs:[[:space:]]*1$" "/proc/$PP/status" &&
		ok || bad "the planner keeps privileges" "$(grep -E "^(Cap|NoNew)" "/proc/$PP/status")"
	kill -9 "$PP"
else
	bad "no planner process of $L's computed the schedule" "$(ps -o pid,comm --ppid "$LPID")"
fi
wait "$ASK"
RC=$?
[ "$RC" = 1 ] && grep -q "the planner process computing this schedule was killed by SIGKILL" "$TMP/plan.out" &&
	ok || bad "a killed planner's request is not refused with the reason (exit $RC)" "$(cat "$TMP/plan.out")"
wait_leader 5 r1 r2 r3 && [ "$LEADER" = "$L" ] && until_shown 5 "$E" r1 r2 r3 && [ "$(key_epoch)" = "$E" ] &&
	ok || bad "a killed planner cost $L the lease or the epoch" "leader $LEADER, $(shown "$L"), key's $(key_epoch)"
expect_stdout_has "verified     yes" $OFC --socket "$TMP/$L.sock" schedule --collective allreduce --size 1MiB --summary
NEW=$(pgrep -P "$LPID" -x ofc-planner | tr '\n' ' ')
[ -n "$NEW" ] && ! echo " $NEW" | grep -q " $PP " && ok || bad "the next GetSchedule's planner is not a new one" "$PP; now $NEW"
grep -q "the planner process (pid $PP) computing request [0-9]* of .* was killed by SIGKILL" "$TMP/$L.log" &&
	ok || bad "the leader's log does not say its planner was killed" "$(grep planner "$TMP/$L.log" | tail -3)"
# A streamed schedule's planner (one of its own) killed the same way: the
# stream ends with the reason, and the leader keeps leading.
$OFC --socket "$TMP/$L.sock" schedule --collective alltoall --algo mcf --topology torus:16x16 \
	--size 1MiB -o "$TMP/plan.pb" >"$TMP/stream.out" 2>&1 &
ASK=$!
deadline 30 _busy_end
# shellcheck disable=SC2086 # (NEW: pids)
until SP=$(planner_busy $NEW) || past $_busy_end; do sleep 0.05; done
[ -n "$SP" ] && kill -9 "$SP"
wait "$ASK"
RC=$?
[ -n "$SP" ] && [ "$RC" = 1 ] &&
	grep -q "the planner process computing this schedule was killed by SIGKILL .* before the stream's end" "$TMP/stream.out" &&
	ok || bad "a killed stream's planner: not refused with the reason (exit $RC, planner ${SP:-none})" "$(cat "$TMP/stream.out")"
wait_leader 5 r1 r2 r3 && [ "$LEADER" = "$L" ] && [ "$(key_epoch)" = "$E" ] &&
	ok || bad "a killed stream's planner cost $L the lease or the epoch" "leader $LEADER, key's $(key_epoch)"

DELTAS=""
for i in 1 2 3 4 5; do
	L=$LEADER
	R0=$(revision)
	# idle: no mutation, until etcd took writes beside another program's
	# key (the replicas' registrations, each written every half lease)
	etcd_ctl put /elsewhere/k "$i" >/dev/null
	deadline 10 _idle_end
	until R1=$(revision) && [ -n "$R1" ] && [ $((R1 - R0)) -gt 1 ] || past $_idle_end; do sleep 0.2; done
	[ -n "$R1" ] || R1=$R0
	replica_stop "$L" KILL
	set -- $(others "$L")
	wait_leader 20 "$@" && ok || bad "kill $i of $L: no replica took over" "$(cluster_why "$@")"
	until_shown 10 $((E + 1)) "$@" && [ "$(key_epoch)" = $((E + 1)) ] &&
		ok || bad "kill $i of $L: the epoch after one election is not $((E + 1))" \
		"$1 $(shown "$1"), $2 $(shown "$2"), the key's $(key_epoch); etcd's revision moved $((R1 - R0)) while idle"
	E=$((E + 1))
	DELTAS="$DELTAS $((R1 - R0))"
	[ $((R1 - R0)) -gt 1 ] && ok || bad "kill $i: etcd took no writes while the leader was idle" "revision $R0 -> $R1"
	replica_start "$L" --probe-interval 0
	until_shown 10 "$E" r1 r2 r3 && ok || bad "$L restarted does not show epoch $E" "$(shown "$L")"
done
echo "cluster_epoch: etcd's revision moved by$DELTAS while idle before each failover; the epoch by 1"
# the new leader still changes the fabric under its epoch
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology "$A"
grep -q "transaction committed (transaction [0-9]*): by replica $LEADER (epoch $E)" "$TMP/$LEADER.log" &&
	ok || bad "the last transaction is not logged under epoch $E" "$(grep "transaction committed" "$TMP/$LEADER.log" | tail -2)"
finish
