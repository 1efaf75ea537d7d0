#!/bin/sh
# libofc-mpi with its schedules from ofcd (OFC_SCHEDULE=ofcd): a 4-host
# fabric (torus:2x2 through an emulated OCS) held by ofcd, the check
# program (tests/mpi/ofc_mpi_check.c) with each rank on a host of it
# (OFC_HOST): every collective's schedule comes from ofcd's GetSchedule,
# ranks matched by the hosts ofcd's answer names, every element right. A
# port failed through `ofc fail` while the job runs is re-planned by ofcd
# and taken by the job at a collective boundary (OFC_SCHEDULE_WATCH=1),
# every rank at the same call, the data still right. At MPI_Finalize the
# job's report reaches ofcd (ReportMpi), which shows it in its state and
# metrics. No ofcd reachable, and a partition ofcd does not hold: every
# call falls back, with the reason, and the report is not kept, saying
# why; reports that are malformed, too large or not the fabric's hosts'
# are refused with the reason. The same through ofc-gateway, by the job's
# client certificate.
SUITE=mpi_ofcd
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi_env.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

LIB=$BUILD/libofc-mpi.so
CHECK=$BUILD/tests/ofc-mpi-check
mpi_need "$LIB" "$CHECK"
SOCK="$TMP/ofcd.sock"
cp configs/credentials/ocs0.cred "$TMP/"
mpi_fabric "$TMP/f.yaml" mpiofcd 200Mbps
start_emu ocs-emu e --ports 16 --credentials configs/credentials/ocs0.cred --state "$TMP/e.state"
mkdir -p "$TMP/st"
$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$TMP/f.yaml" --socket "$SOCK" \
	--state-dir "$TMP/st" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--gateway-socket "$TMP/gw.sock" --gateway-uid "$(id -u)" 2>>"$TMP/ofcd.log" &
ofcd_pid=$!
gw_pid=
cleanup() {
	[ -n "$gw_pid" ] && kill "$gw_pid" 2>/dev/null && wait "$gw_pid" 2>/dev/null
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

# The report reached ofcd: rank 0 sent it at MPI_Finalize; ofcd's state
# (JSON and text) and metrics show the job's counts for the fabric (no
# partition), each figure the job's own report's.
cat >"$TMP/state.py" <<'EOF'
import json, sys
rep, st = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
met = open(sys.argv[3]).read()
r = st["mpi_reports"][-1]
ok = rep["ofcd_report"]["sent"] and "partition" not in r and r["ranks"] == 4
ok = ok and r["hosts"] == ["h0", "h1", "h2", "h3"] and r["reporter"].startswith("uid:")
ok = ok and [int(b) for b in r["bytes_per_peer"]] == sum(rep["bytes_per_peer"], [])
for c in rep["collectives"]:
    k = next(x for x in r["collectives"] if x["name"] == c["name"])
    why = {f["reason"]: int(f["calls"]) for f in k.get("fallbacks", [])}
    ok = ok and int(k["calls"]) == c["calls"] and int(k["ofc_calls"]) == c["ofc_calls"] > 0
    ok = ok and why == c["fallback_reasons"] and int(k["bytes"]) == c["bytes"]
    lab = 'partition="",collective="%s"' % c["name"]
    ok = ok and "ofc_mpi_calls{%s} %d\n" % (lab, c["calls"]) in met
    ok = ok and "ofc_mpi_ofc_calls{%s} %d\n" % (lab, c["ofc_calls"]) in met
    ok = ok and "ofc_mpi_bytes{%s} %d\n" % (lab, c["bytes"]) in met
    ok = ok and all("ofc_mpi_fallbacks{%s,reason=\"%s\"} %d\n" % (lab, w, n) in met
                    for w, n in c["fallback_reasons"].items())
sys.exit(0 if ok else 1)
EOF
$OFC --socket "$SOCK" status --json >"$TMP/st.json" 2>&1 &&
	$OFC --socket "$SOCK" metrics >"$TMP/met" 2>&1 &&
	python3 "$TMP/state.py" "$TMP/r1.json" "$TMP/st.json" "$TMP/met" && ok ||
	bad "the report in ofcd's state and metrics" "$(head -c 400 "$TMP/r1.json")" \
		"$(grep -A40 mpi_reports "$TMP/st.json" | head -c 1500)" "$(grep ofc_mpi "$TMP/met" | head -c 1500)"
expect_stdout_has "mpi report the fabric: 4 ranks, host names, from uid:" $OFC --socket "$SOCK" status

# A re-plan while the job runs: h0's port 0 fails, ofcd moves it to a
# spare and re-plans; the job, asking every 0.2 s, takes it.
job "$TMP/r2.json" -genv OFC_SCHEDULE_WATCH 1 -genv OFC_MPI_OFCD_POLL 0.2 \
	$(ranks -u "$TMP/stop" 5 4099) >"$TMP/jobout" 2>"$TMP/joberr" &
jid=$!
# (the rounds rank 0 has done: ofc-mpi-check writes them to STOP.round;
# the failure after the first, the stop two rounds and a poll after it)
rounds() { cat "$TMP/stop.round" 2>/dev/null || echo 0; }
deadline 120 end
while [ "$(rounds)" -lt 1 ] && kill -0 $jid 2>/dev/null && ! past $end; do sleep 0.1; done
expect_stdout_has "h0:0 failed" $OFC --socket "$SOCK" fail h0:0
sleep 0.4
r0=$(rounds)
while [ "$(rounds)" -lt $((r0 + 2)) ] && kill -0 $jid 2>/dev/null && ! past $end; do sleep 0.1; done
# ... and a drain of the switch port h1:1 is cabled to, with a grace of
# 30 s: ofcd publishes the schedule without it, the job takes it at a
# collective boundary and says so (ReportMpi.taken), and the drain goes
# on then, its answer naming the job as having taken it before the
# circuits went; undrained, the switch's circuits are back as before.
sort "$TMP/e.state" >"$TMP/e.before"
$OFC --socket "$SOCK" drain ocs0:5 --grace 30s >"$TMP/drain.out" 2>&1 && ok ||
	bad "ofc drain while the job runs" "$(cat "$TMP/drain.out")"
grep -q "ocs0:5 drained (1 switch port; running jobs on these ports took the new schedule after [0-9.]* s: h0/[0-9]* (the fabric); circuits removed: transaction" \
	"$TMP/drain.out" && ok || bad "the drain's answer does not name the job as having taken its schedule" \
	"$(cat "$TMP/drain.out")" "$(grep -i 'drain\|running jobs' "$TMP/ofcd.log" | tail -5)"
sort "$TMP/e.state" | cmp -s - "$TMP/e.before" && bad "the drain left ocs0's circuits as they were" || ok
r0=$(rounds)
while [ "$(rounds)" -lt $((r0 + 2)) ] && kill -0 $jid 2>/dev/null && ! past $end; do sleep 0.1; done
expect_stdout_has "ocs0:5 undrained (1 switch port; circuits back: transaction" \
	$OFC --socket "$SOCK" undrain ocs0:5
sort "$TMP/e.state" | cmp -s - "$TMP/e.before" && ok ||
	bad "ocs0's circuits after undrain differ from before the drain" "$(sort "$TMP/e.state" | diff - "$TMP/e.before" | head -5)"
expect_stdout_has 'ofc_drain_jobs_waited_total{outcome="taken"} 1' $OFC --socket "$SOCK" metrics
r0=$(rounds)
while [ "$(rounds)" -lt $((r0 + 2)) ] && kill -0 $jid 2>/dev/null && ! past $end; do sleep 0.1; done
touch "$TMP/stop"
while kill -0 $jid 2>/dev/null && ! past $end; do sleep 0.2; done
kill $jid 2>/dev/null
wait $jid
rc=$?
[ $rc -eq 0 ] && python3 "$TMP/check.py" "$TMP/jobout" "$TMP/r2.json" 'rep["replans"] >= 3' && ok ||
	bad "a re-plan from ofcd while the job runs: exit $rc" "$(tail -c 600 "$TMP/jobout")" \
		"$(head -c 600 "$TMP/joberr")" "$(head -c 1200 "$TMP/r2.json")"

# A caller that asked for a schedule without naming a job (it cannot say
# when it took one): a drain on its ports waits the whole grace for it,
# and says so; the job above, finalized, is no longer waited for.
PYTHONPATH="$BUILD/python" python3 -c 'import sys
from ofc_client import Client
Client(sys.argv[1], timeout=30).get_schedule("allreduce", size_bytes=1 << 20, summary_only=True)' "$SOCK" ||
	bad "a schedule asked for without a job's name"
expect_stdout_has "ocs0:5 drained (1 switch port; after the 1000 ms grace: the grace covered uid:$(id -u) (the fabric); circuits removed" \
	$OFC --socket "$SOCK" drain ocs0:5 --grace 1s
expect_stdout_has "ocs0:5 undrained" $OFC --socket "$SOCK" undrain ocs0:5
expect_stdout_has 'ofc_drain_jobs_waited_total{outcome="grace"} 1' $OFC --socket "$SOCK" metrics

# reasons_are REPORT REASON: every call fell back, for REASON
reasons_are() {
	python3 -c 'import json, sys
rep = json.load(open(sys.argv[1]))
sys.exit(0 if all(c["ofc_calls"] == 0 and c["calls"] > 0 and c["fallback_reasons"] == {sys.argv[2]: c["calls"]} for c in rep["collectives"]) else 1)' "$1" "$2"
}
JOB_ENV="OFC_SOCKET=$TMP/none.sock" job "$TMP/r3.json" -n 4 $CHECK 5 >"$TMP/out" 2>"$TMP/err"
rc=$?
cp "$TMP/err" "$TMP/err3"
[ $rc -eq 0 ] && reasons_are "$TMP/r3.json" no_ofcd &&
	grep -qF "libofc-mpi: ofcd at $TMP/none.sock: No such file or directory; allreduce falls back to the MPI's own" "$TMP/err" &&
	ok || bad "no ofcd: exit $rc" "$(head -c 600 "$TMP/err")" "$(head -c 800 "$TMP/r3.json")"
JOB_ENV=OFC_PARTITION=nosuch job "$TMP/r4.json" $(ranks 5) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && reasons_are "$TMP/r4.json" bad_schedule &&
	grep -q "^libofc-mpi: ofcd: no allreduce schedule for partition nosuch: " "$TMP/err" &&
	grep -qF "libofc-mpi: the report was not sent to ofcd: ofcd refused it: report-mpi refused: no partition nosuch: neither the config's nor held; nothing to report on" "$TMP/err" &&
	ok || bad "a partition ofcd does not hold: exit $rc" "$(head -c 600 "$TMP/err")" "$(head -c 800 "$TMP/r4.json")"
# ... and the job without ofcd said its report went nowhere
grep -qF "libofc-mpi: the report was not sent to ofcd: ofcd at $TMP/none.sock: No such file or directory" \
	"$TMP/err3" && ok || bad "no ofcd: the report's fate unsaid" "$(head -c 600 "$TMP/err3")"

# Reports ofcd refuses, each with its reason, the kept one untouched: a
# host that is not the fabric's (a report for another partition), counts
# that do not add up, a collective it does not intercept, hosts that are
# not one a rank, and one too large.
PYTHONPATH="$BUILD/python" python3 - "$SOCK" >"$TMP/out" 2>&1 <<'PY' && ok || bad "bad reports" "$(head -c 1500 "$TMP/out")"
import sys
from ofc_client import Client, OfcError, control_pb2 as pb

def refused(want, status, **kw):
    colls = kw.pop("collectives", [])
    q = pb.ReportMpi(**kw)
    for c in colls:
        q.collectives.add(**c)
    try:
        r = Client(sys.argv[1], timeout=30).report_mpi(q)
        sys.exit("%s: kept: %r" % (want, r.message))
    except OfcError as e:
        if e.status != pb.Status.Name(status) or want not in str(e):
            sys.exit("%s: got %s %r" % (want, e.status, str(e)))

h4 = ["h0", "h1", "h2", "h3"]
refused("report-mpi refused: rank 1's host 'h9' is not one of the fabric's hosts: a report for another partition",
        pb.STATUS_INVALID, ranks=2, hosts=["h0", "h9"])
refused("report-mpi refused: MPI_Allreduce: 10 calls, but 4 by ofc's schedule and 0 fallbacks",
        pb.STATUS_INVALID, ranks=4, hosts=h4, collectives=[dict(name="MPI_Allreduce", calls=10, ofc_calls=4)])
refused("report-mpi refused: collective 0 is 'MPI_Barrier': not one libofc-mpi intercepts",
        pb.STATUS_INVALID, ranks=4, hosts=h4, collectives=[dict(name="MPI_Barrier", calls=1, ofc_calls=1)])
refused("report-mpi refused: 3 hosts for 4 ranks", pb.STATUS_INVALID, ranks=4, hosts=h4[:3])
refused("report-mpi refused: job nosuch/1 has not asked for the fabric's schedules here in the last 30 s",
        pb.STATUS_NOT_FOUND, ranks=4, hosts=h4, job="nosuch/1", taken=True)
refused("report-mpi refused: job: 1 to 64 of A-Z a-z 0-9 . _ / : @ -", pb.STATUS_INVALID,
        ranks=4, hosts=h4, job="a job", taken=True)
refused("report-mpi refused: taken needs the job's name (job)", pb.STATUS_INVALID,
        ranks=4, hosts=h4, taken=True)
refused("report-mpi refused: the report is ", pb.STATUS_INVALID, ranks=256,
        hosts=["h0"] * 256, bytes_per_peer=[1 << 62] * (256 * 256))
st = Client(sys.argv[1], timeout=30).get_state()
if len(st.mpi_reports) != 1 or st.mpi_reports[0].ranks != 4:
    sys.exit("the kept report changed: %s" % st.mpi_reports)
PY

# Through ofc-gateway (OFC_GATEWAY, the job's client certificate): the
# schedules and the report as through the socket, the report's reporter
# the certificate's identity; a tenant's job asking for the whole fabric
# is refused its schedules and its report, each saying why.
C="$TMP/pki"
pki_ca "$C"
for n in job tenant; do pki_cert $n client; done
pki_cert server server
printf 'cn:job admin\ncn:tenant tenant slurm-job-*\n' >"$TMP/policy"
$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" \
	--ca "$C/ca.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" \
	--port-file "$TMP/gw.port" 2>"$TMP/gw.log" &
gw_pid=$!
deadline 30 gwup
while [ ! -s "$TMP/gw.port" ] && ! past $gwup; do sleep 0.05; done
read -r P <"$TMP/gw.port"
GWENV="OFC_SOCKET=$TMP/none.sock OFC_GATEWAY=https://127.0.0.1:$P OFC_CACERT=$C/ca.pem"
JOB_ENV="$GWENV OFC_CERT=$C/job.pem OFC_KEY=$C/job.key" job "$TMP/r5.json" $(ranks 5 4099) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && python3 "$TMP/check.py" "$TMP/out" "$TMP/r5.json" \
	'all(s["ok"] for s in rep["schedules"]) and rep["ofcd_report"]["sent"]' &&
	$OFC --socket "$SOCK" status >"$TMP/status" 2>&1 &&
	grep -q "^  mpi report the fabric: 4 ranks, host names, from cn:job at " "$TMP/status" && ok ||
	bad "through the gateway: exit $rc" "$(head -c 600 "$TMP/err")" "$(head -c 1200 "$TMP/r5.json")" "$(tail -3 "$TMP/gw.log")"
JOB_ENV="$GWENV OFC_CERT=$C/tenant.pem OFC_KEY=$C/tenant.key" job "$TMP/r6.json" $(ranks 5) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && reasons_are "$TMP/r6.json" bad_schedule &&
	grep -qF "libofc-mpi: ofcd: no allreduce schedule: permission denied: cn:tenant is a tenant and asks for its partitions' schedules (partition)" "$TMP/err" &&
	grep -qF "libofc-mpi: the report was not sent to ofcd: ofcd refused it: permission denied: cn:tenant is a tenant and reports its own partitions' jobs only (partition)" "$TMP/err" &&
	ok || bad "a tenant's job for the whole fabric: exit $rc" "$(head -c 1200 "$TMP/err")" "$(head -c 800 "$TMP/r6.json")"

finish
