#!/bin/sh
# The Slurm prolog and epilog around a release on its way (docs/slurm.md,
# "Back-to-back jobs"), with a stand-in scontrol that answers `show job`
# from files (no Slurm needed; test_slurm.sh runs the real one):
# - a prolog whose hosts are still held by a job Slurm says ended waits for
#   that job's epilog to release them and commits (before: refused, the job
#   requeued behind Slurm's start delay);
# - a prolog whose hosts a running job holds is refused at once, the reason
#   recorded (AdminComment);
# - that refused job's epilog asks ofcd nothing (before: a second refusal,
#   "no partition ... is held", on every watcher's page);
# - with --release-grace, a prolog waits for any holder's release; the job
#   runs and the reason recorded before is cleared.
SUITE=slurm_release
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'for p in $DAEMONS; do kill "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
mkdir -p "$TMP/st" "$TMP/cred" "$TMP/jobs"
chmod 700 "$TMP/cred"
cp configs/credentials/ocs0.cred "$TMP/cred/ocs0.cred"
chmod 600 "$TMP/cred/ocs0.cred"
sed -e 's/^name: .*/name: slurm16/' -e 's/count: 64/count: 16/' -e 's/ports: 256/ports: 64/' \
	-e 's/^topology: .*/topology: torus:4x4/' -e "s|credentials: .*|credentials: cred/ocs0.cred|" \
	-e '/op: alltoall/,+1d' configs/torus64-ocs.yaml >"$TMP/fab.yaml"
start_emu ocs-emu e --ports 64 --credentials configs/credentials/ocs0.cred
$BUILD/ofcd --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$TMP/st" --credentials-dir "$TMP/cred" \
	--device "ocs0=127.0.0.1:$e_port" --probe-interval 0 --foreground 2>>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_exit 0 $OFC --socket "$SOCK" reconfigure --topology torus:4x4

# scontrol's stand-in: `show job -o ID` from jobs/ID.state (RUNNING when
# none) and jobs/ID.ac (AdminComment); `update JobId=ID AdminComment=X`
# writes jobs/ID.ac; every call logged
cat >"$TMP/scontrol" <<EOS
#!/bin/sh
echo "\$@" >>"$TMP/scontrol.log"
case \$1 in
show)
	st=\$(cat "$TMP/jobs/\$4.state" 2>/dev/null || echo RUNNING)
	echo "JobId=\$4 JobName=j UserId=u(1) JobState=\$st Reason=None AdminComment=\$(cat "$TMP/jobs/\$4.ac" 2>/dev/null) Comment=ofc:topology=ring:4"
	;;
update)
	case \$3 in AdminComment=*) printf '%s' "\${3#AdminComment=}" >"$TMP/jobs/\${2#JobId=}.ac" ;; esac
	;;
esac
EOS
chmod 755 "$TMP/scontrol"
prolog() { # JOB NODELIST [ARGS...]
	_j=$1 _l=$2
	shift 2
	env -i SLURM_JOB_ID="$_j" SLURM_JOB_NODELIST="$_l" SLURM_JOB_COMMENT=ofc:topology=ring:4 \
		OFC_SLURM_SCONTROL="$TMP/scontrol" OFC_SOCKET="$SOCK" $OFC slurm prolog --timeout 30 "$@"
}
epilog() { env -i SLURM_JOB_ID="$1" OFC_SLURM_SCONTROL="$TMP/scontrol" OFC_SOCKET="$SOCK" $OFC slurm epilog; }
releases() { $OFC --socket "$SOCK" metrics | awk '$1 == "ofc_requests_received_total{request=\"release-partition\"}" {print $2}'; }

expect_stdout_has "ofc: job 701: partition slurm-job-701: ring:4 on 4 hosts committed" prolog 701 'h[0-3]'
# 701 ended; its epilog's release comes a second after 702's prolog
echo COMPLETING >"$TMP/jobs/701.state"
prolog 702 'h[2-5]' >"$TMP/702.out" 2>"$TMP/702.err" &
p702=$!
sleep 1
expect_stdout_has "released partition 'slurm-job-701'" epilog 701
wait $p702 && grep -q "ofc: job 702: partition slurm-job-702: ring:4 on 4 hosts committed: .* after waiting [0-9.]* s for a release (partition 'slurm-job-702': host h2 is held by partition 'slurm-job-701')" "$TMP/702.out" &&
	ok || bad "job 702 behind job 701's release: not committed once it came" "$(cat "$TMP/702.out" "$TMP/702.err")"
grep "^update JobId=702" "$TMP/scontrol.log" && bad "job 702 got a reason" || ok

# 702 runs: 703 on its hosts is refused at once, the reason recorded
expect_error 1 "ofc slurm prolog: job 703: partition 'slurm-job-703': host h5 is held by partition 'slurm-job-702' (requeued); slurm-job-702 holds its hosts and is not ending" \
	prolog 703 'h[5-8]'
[ "$(cat "$TMP/jobs/703.ac")" = "ofc: partition 'slurm-job-703': host h5 is held by partition 'slurm-job-702'" ] &&
	ok || bad "job 703's reason" "$(cat "$TMP/jobs/703.ac")"
# its epilog asks ofcd nothing: the refusal is its one event
r0=$(releases)
expect_stdout_has "ofc: job 703 held no partition (nothing to release: done)" epilog 703
[ "$(releases)" = "$r0" ] && ok || bad "job 703's epilog asked ofcd to release" "$r0 -> $(releases)"

# with a grace, 703 waits for 702 (running) to let go; once it runs, the
# reason recorded before is cleared
prolog 703 'h[5-8]' --release-grace 20 >"$TMP/703.out" 2>"$TMP/703.err" &
p703=$!
sleep 1
expect_stdout_has "released partition 'slurm-job-702'" epilog 702
wait $p703 && grep -q "ofc: job 703: partition slurm-job-703: ring:4 on 4 hosts committed: .* after waiting" "$TMP/703.out" &&
	ok || bad "job 703 with a grace: not committed once 702 let go" "$(cat "$TMP/703.out" "$TMP/703.err")"
grep -qx "update JobId=703 AdminComment=" "$TMP/scontrol.log" && [ ! -s "$TMP/jobs/703.ac" ] &&
	ok || bad "job 703's old reason not cleared" "$(cat "$TMP/jobs/703.ac"; grep 703 "$TMP/scontrol.log")"
# a bad grace is refused
expect_error 2 "ofc slurm: bad --release-grace 'soon': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" prolog 704 'h[9-12]' --release-grace soon
finish
