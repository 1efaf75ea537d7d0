#!/bin/sh
# Slurm's prolog against three ofcd replicas (bench/results/slurm.md, "Slurm jobs
# on replicas"): three replicas on a 3-member etcd on loopback, one ocs-emu
# of 2,048 ports (512 hosts of 4 ports, torus:16x32), every hook given every
# replica's socket (OFC_SOCKET=r1,r2,r3) as ofc-slurm.env says to.
#
#   1. ROUNDS rounds of 20 jobs of 8 to 64 hosts (5 x 8, 7 x 16, 5 x 32,
#      3 x 64: 504 hosts, disjoint, each a torus) whose prologs start
#      together: each prolog's wall time, p50 / p99 / max over the rounds;
#      then their epilogs together.
#   2. KILLS times: a job of 64 hosts asks for circulant:64:1,8 (its
#      circuits all move) while the switch takes DELAY_MS a change; the
#      leader is killed with kill -9 KILL_AFTER_MS into the job's
#      transaction (after the leader logs it started; LO-HI: a point
#      drawn in that range each time). The
#      prolog must end started (exit 0) on the new leader with nothing
#      edited: its time to started, against 2 x TTL plus the transaction
#      alone (measured in the same run without a kill); and its partition
#      must be held by the new leader (its state, read right after the
#      prolog) and released by the epilog. A kill late in the transaction
#      (the switch finishing the commands it was sent, so the next
#      leader's repair commits) once left the commit without its hold.
#
#   sh bench/cluster_prolog.sh [ROUNDS [KILLS [DELAY_MS [KILL_AFTER_MS]]]]
#   sh bench/cluster_prolog.sh 0 20 2 0-700     kills anywhere in the transaction
#   NORELABEL=1 sh bench/cluster_prolog.sh ...   the jobs ask ofc:relabel=no
SUITE=cluster-prolog
cd "$(dirname "$0")/.." || exit 1
. tests/integration/lib.sh
. tests/integration/emu.sh
. tests/integration/cluster_env.sh
ROUNDS=${1:-3}
KILLS=${2:-5}
DELAY=${3:-2}
KILL_AFTER=${4:-100}
TTL=2

sed -e 's/count: 64/count: 512/' -e 's/ports: 256/ports: 2048/' -e 's/^topology: .*/topology: torus:16x32/' \
	-e '/op: alltoall/,+1d' configs/torus64-ocs.yaml >"$TMP/fab.yaml"
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 2048 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --state "$TMP/e.state"
etcd_start 3 || { echo "etcd did not start"; exit 1; }
for r in r1 r2 r3; do
	replica_dir $r "$TMP/fab.yaml" "$e_port"
	replica_start $r --probe-interval 0
done
wait_leader 20 r1 r2 r3 || { echo "no leader"; exit 1; }
SOCKS="$TMP/r1.sock,$TMP/r2.sock,$TMP/r3.sock"
$OFC --socket "$TMP/$LEADER.sock" reconfigure --topology torus:16x32 --timeout 120 >/dev/null ||
	{ echo "the fabric's first reconfigure failed"; exit 1; }
printf '#!/bin/sh\nexit 0\n' >"$TMP/scontrol"
chmod 755 "$TMP/scontrol"
now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

# prolog JOB NODELIST TOPOLOGY: its wall time in ms to $TMP/t.JOB, its
# exit status to $TMP/rc.JOB
prolog() {
	_t0=$(now_ms)
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_NODELIST="$2" SLURM_JOB_COMMENT="ofc:topology=$3${NORELABEL:+ ofc:relabel=no}" \
		OFC_SLURM_SCONTROL="$TMP/scontrol" OFC_SOCKET="$SOCKS" $OFC slurm prolog --timeout 60 \
		>"$TMP/out.$1" 2>&1
	echo $? >"$TMP/rc.$1"
	echo $(($(now_ms) - _t0)) >"$TMP/t.$1"
}
epilog() { env -i PATH="$PATH" SLURM_JOB_ID="$1" OFC_SOCKET="$SOCKS" $OFC slurm epilog >/dev/null 2>&1; }

# the 20 jobs: size and topology
JOBS="8:torus:2x4 8:torus:2x4 8:torus:2x4 8:torus:2x4 8:torus:2x4
16:torus:4x4 16:torus:4x4 16:torus:4x4 16:torus:4x4 16:torus:4x4 16:torus:4x4 16:torus:4x4
32:torus:4x8 32:torus:4x8 32:torus:4x8 32:torus:4x8 32:torus:4x8
64:torus:8x8 64:torus:8x8 64:torus:8x8"

echo "3 replicas (lease ${TTL}s), 512 hosts on a 2048-port ocs-emu; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$TMP/lat"
bad=0
round=1
while [ $round -le "$ROUNDS" ]; do
	first=0 job=$((round * 100)) pids=""
	for j in $JOBS; do
		n=${j%%:*}
		prolog $job "h[$first-$((first + n - 1))]" "${j#*:}" &
		pids="$pids $!"
		first=$((first + n)) job=$((job + 1))
	done
	wait $pids
	job=$((round * 100)) pids=""
	for j in $JOBS; do
		if [ "$(cat "$TMP/rc.$job")" = 0 ]; then cat "$TMP/t.$job" >>"$TMP/lat"; else
			bad=$((bad + 1))
			echo "job $job failed: $(tail -1 "$TMP/out.$job")"
		fi
		epilog $job &
		pids="$pids $!"
		job=$((job + 1))
	done
	wait $pids
	round=$((round + 1))
done
python3 - "$TMP/lat" "$ROUNDS" "$bad" <<'EOF'
import sys
t = sorted(int(l) for l in open(sys.argv[1]) if l.strip())
p = lambda q: t[min(len(t) - 1, int(q * len(t)))]
if t: print("20 prologs together, %s rounds: %d started, %s failed; p50 %d ms, p99 %d ms, max %d ms"
      % (sys.argv[2], len(t), sys.argv[3], p(0.5), p(0.99), t[-1]))
EOF
# where a prolog's time goes, from the leader's log: each job's queued line
# to its answer (the queue and the plan), and the transaction alone
[ "$ROUNDS" -gt 0 ] && cat "$TMP"/r1.log "$TMP"/r2.log "$TMP"/r3.log | python3 -c '
import re, sys, datetime
t = lambda l: datetime.datetime.strptime(l[:23], "%Y-%m-%d %H:%M:%S.%f").timestamp()
q, done, txn = {}, {}, []
for l in sys.stdin:
    m = re.search(r"queued ticket \d+: reconfigure partition slurm-job-(\d+)", l)
    if m and int(m.group(1)) < 900: q[m.group(1)] = t(l)
    m = re.search(r"ticket \d+: reconfigure partition slurm-job-(\d+).*: ok: committed .* in ([0-9.]+) s", l)
    if m and int(m.group(1)) < 900: done[m.group(1)] = t(l); txn.append(float(m.group(2)))
own = sorted(done[j] - q[j] for j in done if j in q)
p = lambda v, f: v[min(len(v) - 1, int(f * len(v)))] if v else 0
txn.sort()
print("in ofcd: queued to answered p50 %.0f ms, p99 %.0f ms; the transaction alone p50 %.0f ms, p99 %.0f ms"
      % (1000 * p(own, 0.5), 1000 * p(own, 0.99), 1000 * p(txn, 0.5), 1000 * p(txn, 0.99)))'

# 2. across a leader's kill -9
stop_emu "$e_pid"
start_emu ocs-emu e --listen 127.0.0.1:$e_port --ports 2048 --credentials "$TMP/r1.cred" \
	--credentials "$TMP/r2.cred" --credentials "$TMP/r3.cred" --state "$TMP/e.state" --delay-ms "$DELAY"
job=900
prolog $job 'h[0-63]' circulant:64:1,8
txn=$(cat "$TMP/t.$job")
[ "$(cat "$TMP/rc.$job")" = 0 ] || echo "the job without a kill failed: $(tail -1 "$TMP/out.$job")"
epilog $job
echo "a job of 64 hosts, every circuit moving at $DELAY ms a change, no kill: ${txn} ms (the prolog and its transaction)"
: >"$TMP/kill"
: >"$TMP/held"
: >"$TMP/released"
k=1
while [ $k -le "$KILLS" ]; do
	wait_leader 20 r1 r2 r3 || { echo "no leader before kill $k"; break; }
	victim=$LEADER job=$((900 + k))
	# the same hosts from torus back to the circulant: every circuit moves again
	$OFC --socket "$TMP/$victim.sock" reconfigure --topology torus:16x32 --timeout 120 >/dev/null
	started() { grep -c "transaction started (transaction [0-9]*): by replica $victim (epoch" "$TMP/$victim.log"; }
	before=$(started)
	prolog $job 'h[0-63]' circulant:64:1,8 &
	ppid=$!
	# the kill lands KILL_AFTER_MS into the job's transaction (its journal
	# written, the switch changing)
	_end=$(($(date +%s) + 30))
	until [ "$(started)" -gt "$before" ] || [ "$(date +%s)" -gt $_end ]; do sleep 0.01; done
	after=$(echo "$KILL_AFTER" | awk -v s="$job" '{n = split($1, r, "-"); srand(s)
		print int(n == 2 ? r[1] + rand() * (r[2] - r[1]) : r[1])}')
	sleep "$(echo "$after" | awk '{print $1 / 1000}')"
	replica_stop "$victim" KILL
	wait $ppid
	rc=$(cat "$TMP/rc.$job") t=$(cat "$TMP/t.$job")
	echo "kill $k: $victim killed ${after} ms into the transaction; the prolog exited $rc after $t ms: $(tail -1 "$TMP/out.$job")"
	held=-
	if [ "$rc" = 0 ]; then
		echo "$t" >>"$TMP/kill"
		set -- $(others "$victim")
		wait_leader 20 "$@"
		$OFC --socket "$TMP/$LEADER.sock" status --json 2>/dev/null | python3 -c 'import json,sys
sys.exit(0 if sys.argv[1] in [h["name"] for h in json.load(sys.stdin).get("held", [])] else 1)' \
			"slurm-job-$job" && held=yes || held=NO
		echo "$held" >>"$TMP/held"
	fi
	env -i PATH="$PATH" SLURM_JOB_ID="$job" OFC_SOCKET="$SOCKS" $OFC slurm epilog >"$TMP/ep" 2>&1
	grep -q "released partition 'slurm-job-$job'" "$TMP/ep" && echo "$job" >>"$TMP/released"
	[ "$held" = NO ] && echo "  LOST: $LEADER holds no slurm-job-$job; the epilog: $(tail -1 "$TMP/ep")"
	replica_start "$victim" --probe-interval 0
	k=$((k + 1))
done
python3 - "$TMP/kill" "$KILLS" "$TTL" "$txn" <<'EOF'
import sys
t = sorted(int(l) for l in open(sys.argv[1]) if l.strip())
goal = 2 * float(sys.argv[3]) * 1000 + int(sys.argv[4])
if t:
    print("across a kill -9: %d of %s started; time to started p50 %d ms, max %d ms; goal 2 x TTL + the transaction = %d ms"
          % (len(t), sys.argv[2], t[len(t) // 2], t[-1], goal))
else:
    print("across a kill -9: none of %s started" % sys.argv[2])
EOF
[ "$KILLS" -gt 0 ] && echo "held by the new leader right after the prolog: $(grep -c yes "$TMP/held") of $(wc -l <"$TMP/held") started; released by the epilog: $(wc -l <"$TMP/released")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
