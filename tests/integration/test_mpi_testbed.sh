#!/bin/sh
# ofc testbed mpirun: an unmodified MPI program (tests/mpi/ofc_mpi_check.c)
# as one rank per host namespace of a 4-host testbed (torus:2x2 through an
# emulated OCS), with libofc-mpi running the committed topology's
# schedules, by MPICH and by Open MPI: every element right, the
# collectives on MPI_COMM_WORLD all run by ofc's schedules, every fallback
# explained, ranks matched to the hosts by name, and the schedules' bytes
# crossed the circuits; --no-preload leaves every call to the MPI, on the
# same circuits. Bad usage and a testbed that is not up are refused. The
# same through ofcd (TestbedMpirun), from the CLI and the Python client.
# (run alone: its circuits carry traffic at rates this machine's cores
# must keep up with)
SUITE=mpi_testbed
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi_env.sh"
. "$(dirname "$0")/emu.sh"

if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "mpi_testbed: SKIP: needs root and network namespaces (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

ST="$TMP/state"
NAME="mpt$$"
CHECK=$(pwd)/$BUILD/tests/ofc-mpi-check
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
mpi_fabric "$TMP/tb4.yaml" "$NAME" 200Mbps
start_emu ocs-emu e --ports 16 --credentials configs/credentials/ocs0.cred --state "$TMP/e.state"
DEV="ocs0=127.0.0.1:$e_port"
ofcd_pid=
cleanup() {
	[ -n "$ofcd_pid" ] && kill "$ofcd_pid" 2>/dev/null && wait "$ofcd_pid" 2>/dev/null
	$OFC testbed down "$TMP/tb4.yaml" --state-dir "$ST" >/dev/null 2>&1
	stop_all_emus
	rm_tmp
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
RUN="$OFC testbed mpirun $TMP/tb4.yaml --state-dir $ST --timeout 120"

expect_error 2 "ofc testbed: mpirun: missing -- PROGRAM [ARGS...]" $RUN
expect_error 2 "ofc testbed: bad --mpi 'lam': mpich or openmpi" $RUN --mpi lam -- true
expect_exit 0 $OFC apply "$TMP/tb4.yaml" --device "$DEV" --state-dir "$ST"
expect_error 1 "ofc: the testbed of fabric '$NAME' is not up (run 'ofc testbed up')" $RUN -- $CHECK
expect_exit 0 $OFC testbed up "$TMP/tb4.yaml" --rate-scale 1 --device "$DEV" --state-dir "$ST"

# the JSON's checks: the program's own line (its last) says every element
# was right; with the schedules, each collective's calls on MPI_COMM_WORLD
# ran them and the reference calls fell back for their communicator; the
# schedules' bytes crossed the circuits.
cat >"$TMP/check.py" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
preload = sys.argv[2] == "preload"
prog = json.loads([l for l in j["output"].splitlines() if l.startswith('{"ranks"')][-1])
n = j["ranks"]
ok = (j["exit_code"] == 0 or j["finalize_hung"]) and not j["timed_out"] and prog["bad_elements"] == 0
ok = ok and prog["checked_elements"] > 0 and n == 4 and j["preload"] == preload
sent = 0
for c in j["collectives"]:
    want, ref = prog["calls"][c["name"]] * n, prog["reference_calls"][c["name"]] * n
    if preload:
        good = c["ofc_calls"] == want and c["fallbacks"] == ref and c["fallback_reasons"] == {"communicator": ref}
    else:
        good = c["ofc_calls"] == 0 and c["fallback_reasons"] == {"no_schedule": want + ref}
    if not good:
        print("wrong counts:", c)
    ok = ok and good and c["calls"] == want + ref
    sent += c["sent_bytes"]
if preload:
    ok = ok and j["mapping"] == "host names" and j["hosts"] == ["h0", "h1", "h2", "h3"]
    ok = ok and sent > 0 and j["circuit_bytes"] >= sent and all(s["ok"] for s in j["schedules"])
else:
    ok = ok and sent == 0 and j["circuit_bytes"] > 0
sys.exit(0 if ok else 1)
EOF
mpirun_ok() {
	what=$1
	shift
	$RUN --json "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && python3 "$TMP/check.py" "$TMP/out" "$what" && ok ||
		bad "mpirun $*: exit $rc" "$(head -c 2000 "$TMP/out")" "$(tail -c 600 "$TMP/err")"
}
mpirun_ok preload -- "$CHECK" 1 17 4099 65537
mpirun_ok preload --mpi openmpi -- "$CHECK-openmpi" 1 17 4099 65537
mpirun_ok no --no-preload -- "$CHECK" 17 4099
# The text: a line per collective, and the circuits' bytes.
expect_stdout_has "  MPI_Allreduce" $RUN --mpi openmpi -- "$CHECK-openmpi" 5
grep -q "circuit bytes: [0-9.]* MB" "$TMP/out" && ok || bad "no circuit bytes" "$(cat "$TMP/out")"
# A program that fails: its exit status.
expect_exit 3 $RUN --mpi openmpi -- sh -c 'exit 3'

# Through ofcd, which holds the fabric and its testbed: the same job by
# the CLI (`ofc --socket PATH testbed mpirun`, the same JSON) and by the
# Python client (Open MPI); a relative PROGRAM and a failing one refused
# with the reason.
SOCK="$TMP/ofcd.sock"
$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$TMP/tb4.yaml" --socket "$SOCK" \
	--state-dir "$ST" --device "$DEV" --probe-interval 0 2>>"$TMP/ofcd.log" &
ofcd_pid=$!
deadline 30 up
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $up; do sleep 0.05; done

# A drain under a running job: the check program in a loop on the hosts'
# namespaces, its ranks asking ofcd for their schedules (--ofcd); ofc
# drain of the switch port h1:1 is cabled to, with a grace of 30 s,
# publishes the schedule without it, the job takes it at a collective and
# says so, and the drain goes on then: its answer names the job as having
# taken it before the circuits went. Every element stays right (a
# collective on a circuit gone would stall on the testbed), every call on
# MPI_COMM_WORLD ran ofc's schedules; undrained, the switch's circuits
# are back as before.
OFC_MPI_OFCD_POLL=0.2 $OFC testbed mpirun "$TMP/tb4.yaml" --state-dir "$ST" --timeout 120 \
	--ofcd "$SOCK" --json -- "$CHECK" -u "$TMP/stop" 5 4099 >"$TMP/dr.json" 2>"$TMP/dr.err" &
jid=$!
rounds() { cat "$TMP/stop.round" 2>/dev/null || echo 0; }
# after_rounds N: the job has done N more rounds (or ended, or 60 s)
after_rounds() {
	_r0=$(rounds)
	deadline 60 _end
	while [ "$(rounds)" -lt $((_r0 + $1)) ] && kill -0 $jid 2>/dev/null && ! past $_end; do sleep 0.1; done
}
after_rounds 1
sort "$TMP/e.state" >"$TMP/e.before"
$OFC --socket "$SOCK" drain ocs0:5 --grace 30s >"$TMP/drain.out" 2>&1 &&
	grep -q "ocs0:5 drained (1 switch port; running jobs on these ports took the new schedule after [0-9.]* s: h0/[0-9]* (the fabric); circuits removed: transaction" \
		"$TMP/drain.out" && ok || bad "a drain under a running job on the testbed" "$(cat "$TMP/drain.out")"
sort "$TMP/e.state" | cmp -s - "$TMP/e.before" && bad "the drain left ocs0's circuits as they were" || ok
after_rounds 2
expect_stdout_has "ocs0:5 undrained (1 switch port; circuits back: transaction" $OFC --socket "$SOCK" undrain ocs0:5
sort "$TMP/e.state" | cmp -s - "$TMP/e.before" && ok ||
	bad "ocs0's circuits after undrain differ from before the drain" "$(sort "$TMP/e.state" | diff - "$TMP/e.before" | head -5)"
after_rounds 2
touch "$TMP/stop"
wait $jid
rc=$?
python3 - "$TMP/dr.json" <<'EOF_DR' && [ $rc -eq 0 ] && ok || bad "the job under the drain: exit $rc" "$(head -c 1500 "$TMP/dr.json")" "$(tail -c 600 "$TMP/dr.err")"
import json, sys
j = json.load(open(sys.argv[1]))
prog = json.loads([l for l in j["output"].splitlines() if l.startswith('{"ranks"')][-1])
ok = j["exit_code"] == 0 or j["finalize_hung"]
ok = ok and not j["timed_out"] and prog["bad_elements"] == 0 and prog["checked_elements"] > 0
ok = ok and j["replans"] >= 2 and all(s["ok"] for s in j["schedules"])
for c in j["collectives"]:
    want, ref = prog["calls"][c["name"]] * 4, prog["reference_calls"][c["name"]] * 4
    ok = ok and c["ofc_calls"] == want > 0 and c["fallback_reasons"] == {"communicator": ref}
sys.exit(0 if ok else 1)
EOF_DR

RUN="$OFC --socket $SOCK testbed mpirun --run-timeout 120"
mpirun_ok preload -- "$CHECK" 1 17 4099
expect_error 2 "ofc --socket PATH testbed mpirun: bad --mpi 'lam': mpich or openmpi" $RUN --mpi lam -- true
expect_exit 3 $RUN -- sh -c 'exit 3'
PYTHONPATH="$BUILD/python" python3 - "$SOCK" "$CHECK-openmpi" >"$TMP/out" 2>&1 <<'PY' && ok || bad "testbed_mpirun from Python" "$(head -c 1500 "$TMP/out")"
import json, sys
from ofc_client import Client, OfcError
ofc = Client(sys.argv[1], timeout=300)
a = ofc.testbed_mpirun([sys.argv[2], "5"], mpi="openmpi", run_timeout=120)
rep = json.loads(a.report)
prog = json.loads([l for l in a.output.splitlines() if l.startswith('{"ranks"')][-1])
if (a.exit_code, a.ranks, a.mpi, prog["bad_elements"]) != (0, 4, "openmpi", 0):
    sys.exit("answer: %s" % a)
if not all(c["ofc_calls"] == prog["calls"][c["name"]] * 4 > 0 for c in rep["collectives"]):
    sys.exit("report: %s" % a.report)
try:
    ofc.testbed_mpirun(["tests/x"])
    sys.exit("a relative PROGRAM was taken")
except OfcError as e:
    if e.status != "STATUS_INVALID" or "is a relative path" not in str(e):
        sys.exit("relative PROGRAM: %s %s" % (e.status, e))
PY

finish
