#!/bin/sh
# Back-to-back Slurm jobs across a failover (docs/slurm.md, "Back-to-back
# jobs"), with the Debian slurm-wlm daemons (slurm_env.sh) and three ofcd
# replicas on etcd (cluster_env.sh), the hooks given every replica's
# socket: job 1 holds node00-03's partition; the leader is killed -9 while
# it runs; job 1 ends and its EpilogSlurmctld (held back here, as a
# release that reaches the next leader late, until job 2's prolog logs that
# it met the hosts still held) releases the hosts at the new leader. Job
# 2's prolog waits for that release and commits: job 2 runs and is not
# requeued (before: refused, requeued behind Slurm's start delay).
SUITE=slurm_failover
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/slurm_env.sh"

for b in munged slurmctld slurmd sbatch scontrol squeue etcd; do
	if ! command -v "$b" >/dev/null 2>&1; then
		echo "slurm_failover: SKIP: $b is not installed (scripts/install-deps.sh installs slurm-wlm, munge and etcd-server)"
		echo "$SUITE: 0 passed, 0 failed, 1 skipped"
		exit 0
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "slurm_failover: SKIP: slurmd must run as root to start jobs (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
. "$(dirname "$0")/cluster_env.sh"
trap 'slurm_stop; stop_cluster; rm_tmp' EXIT

TMP=$(cd "$TMP" && pwd -P)
chmod 755 "$TMP" # munged refuses a socket directory others may write; slurmd's job steps read here
OFCABS=$(cd "$(dirname "$OFC")" && pwd -P)/$(basename "$OFC")
three_replicas 5
wait_leader 20 r1 r2 r3 || bad "no leader" "$(cluster_why r1 r2 r3)"
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology torus:8x8 --timeout 60
# (the hooks ask the replica that leads, past the others: every socket)
SOCK="$TMP/r1.sock,$TMP/r2.sock,$TMP/r3.sock"
slurm_configure 8
# the epilog held back: its release reaches the new leader after the next
# job's prolog met the hosts held and waits for it (the prolog's log line;
# 10 s inside PrologEpilogTimeout at most)
mv "$TMP/ofc-epilog" "$TMP/ofc-epilog.real"
cat >"$TMP/ofc-epilog" <<EOF
#!/bin/sh
# (the first job's alone: mkdir succeeds once)
e=\$((\$(date +%s) + $PE_TIMEOUT - 10))
mkdir $TMP/epilog.held 2>/dev/null &&
	until grep -q "hosts held by slurm-job-\$SLURM_JOB_ID (on its way out): waiting for its release" $TMP/ofc-slurm.log ||
		[ \$(date +%s) -gt \$e ]; do sleep 0.1; done
exec $TMP/ofc-epilog.real "\$@"
EOF
chmod 755 "$TMP/ofc-epilog"
slurm_start 8 && ok || bad "munged, slurmctld and 8 slurmd" "$(sinfo 2>&1)" \
	"$(tail -5 "$TMP/log/slurmctld.log" "$TMP/munge/log" 2>&1)"

# job 1 runs until told to end (60 s at most); job 2 waits for its nodes
J1=$(submit -N 4 -w 'node[00-03]' -o "$TMP/j1.out" --comment 'ofc:topology=ring:4' \
	--wrap "e=\$((\$(date +%s) + 60)); until [ -e $TMP/go ] || [ \$(date +%s) -gt \$e ]; do sleep 0.1; done")
wait_job "$J1" RUNNING && ok || bad "job $J1 did not start" "$(scontrol show job "$J1" | grep -E 'JobState|AdminComment')" "$(tail -3 "$TMP/ofc-slurm.log")"
J2=$(submit -N 4 -w 'node[00-03]' -o "$TMP/j2.out" --comment 'ofc:topology=torus:2x2' --wrap true)
wait_leader 10 r1 r2 r3
OLD=$LEADER
replica_stop "$OLD" KILL
touch "$TMP/go"
wait_job "$J2" COMPLETED FAILED
scontrol show job "$J2" >"$TMP/show2"
grep -q "JobState=COMPLETED" "$TMP/show2" && grep -q "Restarts=0" "$TMP/show2" && ok ||
	bad "job $J2 after the failover: not run at once" "$(grep -E 'JobState|Restarts|AdminComment' "$TMP/show2")" "$(cat "$TMP/ofc-slurm.log")"
grep -q "^ofc: job $J2: partition slurm-job-$J2: torus:2x2 on 4 hosts committed.* after waiting [0-9.]* s for a release" "$TMP/ofc-slurm.log" && ok ||
	bad "job $J2's prolog: did not meet job $J1's hosts held and wait for their release" "$(cat "$TMP/ofc-slurm.log")"
! grep -q "job $J2: .*requeued" "$TMP/ofc-slurm.log" && ok || bad "job $J2 requeued" "$(cat "$TMP/ofc-slurm.log")"
# (the prolog said why job 2 had not started yet; job 1's epilog waited on it)
grep -q "^ofc: partition slurm-job-$J2: hosts held by slurm-job-$J1 (on its way out): waiting for its release, [0-9]* s at most" "$TMP/ofc-slurm.log" &&
	ok || bad "job $J2's prolog did not log its wait for job $J1's release" "$(cat "$TMP/ofc-slurm.log")"
# (job 1's release went to the new leader)
deadline 20
until grep -q "job $J1: released" "$TMP/ofc-slurm.log" || past $_end; do sleep 0.2; done
grep -q "job $J1: released" "$TMP/ofc-slurm.log" && ok || bad "job $J1's epilog did not release" "$(cat "$TMP/ofc-slurm.log")"
wait_leader 10 $(others "$OLD")
[ "$LEADER" != "$OLD" ] && ok || bad "no new leader" "$(cluster_why r1 r2 r3)"
finish
