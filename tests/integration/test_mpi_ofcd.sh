#!/bin/sh
# libofc-mpi with its schedules from ofcd (OFC_SCHEDULE=ofcd): a 4-host
# fabric (torus:2x2 through an emulated OCS) held by ofcd, the check
# program (tests/mpi/ofc_mpi_check.c) with each rank on a host of it
# (OFC_HOST): every collective's schedule comes from ofcd's GetSchedule,
# ranks matched by the hosts ofcd's answer names, every element right. A
# port failed through `ofc fail` while the job runs is re-planned by ofcd
# and taken by the job at a collective boundary (OFC_SCHEDULE_WATCH=1),
# every rank at the same call, the data still right. No ofcd reachable, and
# a partition ofcd does not hold: every call falls back, with the reason.
SUITE=mpi_ofcd
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi_env.sh"
. "$(dirname "$0")/emu.sh"

LIB=$BUILD/libofc-mpi.so
CHECK=$BUILD/tests/ofc-mpi-check
mpi_need "$LIB" "$CHECK"
SOCK="$TMP/ofcd.sock"
cp configs/credentials/ocs0.cred "$TMP/"
mpi_fabric "$TMP/f.yaml" mpiofcd 200Mbps
start_emu ocs-emu e --ports 16 --credentials configs/credentials/ocs0.cred
mkdir -p "$TMP/st"
$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$TMP/f.yaml" --socket "$SOCK" \
	--state-dir "$TMP/st" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	2>>"$TMP/ofcd.log" &
ofcd_pid=$!
cleanup() {
	kill -TERM "$ofcd_pid" 2>/dev/null
	wait "$ofcd_pid" 2>/dev/null
	stop_all_emus
	rm_tmp
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
deadline 30 up
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $up; do sleep 0.05; done

# job REPORT ARGS...: the check program, rank r on host hr, from ofcd
job() {
	R=$1
	shift
	env ${JOB_ENV:-} mpiexec -genv LD_PRELOAD "$LIB" -genv OFC_SCHEDULE ofcd \
		-genv OFC_MPI_REPORT "$R" "$@"
}
ranks() {
	echo "-n 1 -env OFC_HOST h0 $CHECK $* : -n 1 -env OFC_HOST h1 $CHECK $* :" \
		"-n 1 -env OFC_HOST h2 $CHECK $* : -n 1 -env OFC_HOST h3 $CHECK $*"
}
# the program right, and per collective: calls on MPI_COMM_WORLD ofc's,
# the reference calls the MPI's ("communicator"); EXTRA on the report
cat >"$TMP/check.py" <<'EOF'
import json, sys
prog = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rep = json.load(open(sys.argv[2]))
ok = prog["bad_elements"] == 0 and rep["mapping"] == "host names" and eval(sys.argv[3])
for c in rep["collectives"]:
    want, ref = prog["calls"][c["name"]] * 4, prog["reference_calls"][c["name"]] * 4
    ok = ok and c["ofc_calls"] == want > 0 and c["fallback_reasons"] == {"communicator": ref}
sys.exit(0 if ok else 1)
EOF
export OFC_SOCKET="$SOCK"
job "$TMP/r1.json" $(ranks 5 4099) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && python3 "$TMP/check.py" "$TMP/out" "$TMP/r1.json" \
	'[s["file"] for s in rep["schedules"]] == ["ofcd:allreduce", "ofcd:allgather", "ofcd:reduce-scatter", "ofcd:alltoall"] and all(s["ok"] for s in rep["schedules"])' &&
	ok || bad "schedules from ofcd: exit $rc" "$(tail -c 600 "$TMP/out")" "$(head -c 600 "$TMP/err")" "$(head -c 1200 "$TMP/r1.json")"

# A re-plan while the job runs: h0's port 0 fails, ofcd moves it to a
# spare and re-plans; the job, asking every 0.2 s, takes it.
job "$TMP/r2.json" -genv OFC_SCHEDULE_WATCH 1 -genv OFC_MPI_OFCD_POLL 0.2 \
	$(ranks -u "$TMP/stop" 5 4099) >"$TMP/out" 2>"$TMP/err" &
jid=$!
sleep 1
expect_stdout_has "h0:0 failed" $OFC --socket "$SOCK" fail h0:0
sleep 1.5
touch "$TMP/stop"
deadline 120 end
while kill -0 $jid 2>/dev/null && ! past $end; do sleep 0.2; done
kill $jid 2>/dev/null
wait $jid
rc=$?
[ $rc -eq 0 ] && python3 "$TMP/check.py" "$TMP/out" "$TMP/r2.json" 'rep["replans"] >= 1' && ok ||
	bad "a re-plan from ofcd while the job runs: exit $rc" "$(tail -c 600 "$TMP/out")" \
		"$(head -c 600 "$TMP/err")" "$(head -c 1200 "$TMP/r2.json")"

# reasons_are REPORT REASON: every call fell back, for REASON
reasons_are() {
	python3 -c 'import json, sys
rep = json.load(open(sys.argv[1]))
sys.exit(0 if all(c["ofc_calls"] == 0 and c["calls"] > 0 and c["fallback_reasons"] == {sys.argv[2]: c["calls"]} for c in rep["collectives"]) else 1)' "$1" "$2"
}
JOB_ENV="OFC_SOCKET=$TMP/none.sock" job "$TMP/r3.json" -n 4 $CHECK 5 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && reasons_are "$TMP/r3.json" no_ofcd &&
	grep -qF "libofc-mpi: ofcd at $TMP/none.sock: No such file or directory; allreduce falls back to the MPI's own" "$TMP/err" &&
	ok || bad "no ofcd: exit $rc" "$(head -c 600 "$TMP/err")" "$(head -c 800 "$TMP/r3.json")"
JOB_ENV=OFC_PARTITION=nosuch job "$TMP/r4.json" $(ranks 5) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && reasons_are "$TMP/r4.json" bad_schedule &&
	grep -q "^libofc-mpi: ofcd: no allreduce schedule for partition nosuch: " "$TMP/err" &&
	ok || bad "a partition ofcd does not hold: exit $rc" "$(head -c 600 "$TMP/err")" "$(head -c 800 "$TMP/r4.json")"

finish
