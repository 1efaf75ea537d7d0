#!/bin/sh
# libofc-mpi under an unmodified MPI program (tests/mpi/ofc_mpi_check.c,
# MPI alone), preloaded through mpiexec on this machine's loopback, with
# MPICH and with Open MPI: every element of every intercepted collective
# (allreduce, allgather, reduce-scatter, alltoall, bcast; odd counts among
# them) right, checked against the exact sums and the MPI's own result;
# the report counts the calls ofc's schedules ran (all of those on
# MPI_COMM_WORLD's group) and explains every fallback (the program's
# reference calls on a reversed communicator: "communicator"). Ranks
# matched to the schedule's hosts by name, in another order than the
# ranks'. Bad input loses nothing: a corrupted file, a schedule for other
# hosts and a rank count that does not match each say so, fall back with
# their reason counted, and the results stay right. A schedule with one
# transfer left out gives wrong elements, which the program catches. The
# library's messages are cut under the MPI's eager limit (MPICH: 8,064
# bytes; Open MPI: its btl_tcp_eager_limit read through MPI_T, less 128) or
# into OFC_MPI_PIECE bytes, the results right either way; a piece size
# that is not a byte count is said and the default kept.
SUITE=mpi_lib
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi_env.sh"

LIB=$BUILD/libofc-mpi.so
LIBO=$BUILD/libofc-mpi-openmpi.so
CHECK=$BUILD/tests/ofc-mpi-check
CHECKO=$BUILD/tests/ofc-mpi-check-openmpi
mpi_need $LIB $LIBO $CHECK $CHECKO
COUNTS="1 5 17 4099 65537"

cp configs/credentials/ocs0.cred "$TMP/"
mpi_fabric "$TMP/lab4.yaml" lab4 20Mbps
# Schedules on the topology alone (no host names: ranks in order) and on
# the fabric (its links name h0..h3).
S=""
N=""
for c in allreduce allgather reduce-scatter alltoall; do
	$OFC schedule --topology torus:2x2 --collective $c --size 1MiB --format pb \
		-o "$TMP/$c.pb" >/dev/null || bad "ofc schedule $c"
	$OFC schedule "$TMP/lab4.yaml" --collective $c --size 1MiB --format pb \
		-o "$TMP/n-$c.pb" >/dev/null || bad "ofc schedule lab4.yaml $c"
	S="$S${S:+:}$TMP/$c.pb"
	N="$N${N:+:}$TMP/n-$c.pb"
done

# report_ok REPORT: every collective's calls on MPI_COMM_WORLD ran ofc's
# schedule, the reference calls fell back for their communicator, nothing else.
report_ok() {
	python3 - "$TMP/out" "$1" <<'EOF'
import json, sys
prog = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rep = json.load(open(sys.argv[2]))
n = prog["ranks"]
ok = prog["bad_elements"] == 0 and prog["checked_elements"] > 0 and rep["ranks"] == n
for c in rep["collectives"]:
    want, ref = prog["calls"][c["name"]] * n, prog["reference_calls"][c["name"]] * n
    good = (c["ofc_calls"] == want > 0 and c["calls"] == want + ref and c["fallbacks"] == ref
            and c["fallback_reasons"] == ({"communicator": ref} if ref else {})
            and c["bytes"] > 0 and c["sent_bytes"] > 0)
    if not good:
        print("wrong counts:", c, "want", want, "ofc calls and", ref, "fallbacks")
    ok = ok and good
sent = sum(sum(r) for r in rep["bytes_per_peer"])
ok = ok and sent == sum(c["sent_bytes"] for c in rep["collectives"]) and all(s["ok"] for s in rep["schedules"])
sys.exit(0 if ok else 1)
EOF
}

# reasons_are REPORT REASON: every call fell back, for REASON (only
# $ONLY's calls when that names a collective).
reasons_are() {
	python3 - "$1" "$2" "${ONLY:-}" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
cs = [c for c in rep["collectives"] if sys.argv[3] in ("", c["name"])]
sys.exit(0 if cs and all(c["ofc_calls"] == 0 and c["calls"] > 0 and c["fallback_reasons"] == {sys.argv[2]: c["calls"]} for c in cs) else 1)
EOF
}

# MPICH, 4 ranks, schedules by rank order.
R="$TMP/mpich.json"
mpiexec -n 4 -genv LD_PRELOAD "$LIB" -genv OFC_SCHEDULE "$S" -genv OFC_MPI_REPORT "$R" \
	$CHECK $COUNTS >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && report_ok "$R" && grep -q '"mapping":"rank order"' "$R" &&
	grep -q '"piece_bytes":8064' "$R" && ok ||
	bad "MPICH with the library: exit $rc" "$(tail -c 1500 "$TMP/out")" "$(head -c 600 "$TMP/err")"

# Open MPI, 4 ranks (as root it asks to be told so); its TCP eager limit
# set, which the library reads through MPI_T to cut its messages under it.
R="$TMP/openmpi.json"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LD_PRELOAD="$LIBO" OFC_SCHEDULE="$S" \
	OFC_MPI_REPORT="$R" timeout 300 mpiexec.openmpi --oversubscribe -n 4 -x LD_PRELOAD \
	-x OFC_SCHEDULE -x OFC_MPI_REPORT --mca btl_tcp_eager_limit 32768 $CHECKO $COUNTS \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && report_ok "$R" && grep -q '"mpi":"Open MPI' "$R" &&
	grep -q '"piece_bytes":32640' "$R" && ok ||
	bad "Open MPI with the library: exit $rc" "$(tail -c 1500 "$TMP/out")" "$(head -c 600 "$TMP/err")"

# Ranks matched to the fabric's hosts by name (OFC_HOST), in reverse order;
# messages cut into pieces of 100 bytes, not a whole number of every type's
# elements.
R="$TMP/names.json"
mpiexec -genv LD_PRELOAD "$LIB" -genv OFC_SCHEDULE "$N" -genv OFC_MPI_REPORT "$R" \
	-genv OFC_MPI_PIECE 100 \
	-n 1 -env OFC_HOST h3 $CHECK 5 4099 : -n 1 -env OFC_HOST h2 $CHECK 5 4099 : \
	-n 1 -env OFC_HOST h1 $CHECK 5 4099 : -n 1 -env OFC_HOST h0 $CHECK 5 4099 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && report_ok "$R" && grep -q '"mapping":"host names"' "$R" &&
	grep -q '"piece_bytes":100' "$R" && ok ||
	bad "ranks matched by host name: exit $rc" "$(tail -c 1500 "$TMP/out")" "$(head -c 600 "$TMP/err")"

# A piece size that is not a byte count: said, the default kept.
R="$TMP/piece.json"
mpiexec -n 4 -genv LD_PRELOAD "$LIB" -genv OFC_SCHEDULE "$S" -genv OFC_MPI_REPORT "$R" \
	-genv OFC_MPI_PIECE 12k $CHECK 5 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && report_ok "$R" && grep -q '"piece_bytes":8064' "$R" &&
	grep -qF "libofc-mpi: OFC_MPI_PIECE=12k is not a byte count (0 to 2147483647); messages cut into pieces of 8064 bytes" "$TMP/err" &&
	ok || bad "OFC_MPI_PIECE=12k: exit $rc" "$(head -c 600 "$TMP/err")" "$(head -c 800 "$R")"

# bad_input NAME REASON 'MESSAGE' ARGS...: the program still right, every
# call fell back for REASON, and stderr says MESSAGE.
bad_input() {
	name=$1 reason=$2 msg=$3
	shift 3
	R="$TMP/$name.json"
	mpiexec -genv LD_PRELOAD "$LIB" -genv OFC_MPI_REPORT "$R" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && grep -q '"bad_elements": 0' "$TMP/out" && reasons_are "$R" "$reason" &&
		grep -qF -- "$msg" "$TMP/err" && ok ||
		bad "$name: exit $rc, want every call a '$reason' fallback and '$msg'" \
			"$(head -c 800 "$TMP/err")" "$(head -c 1500 "$R" 2>/dev/null)"
}
head -c 300 "$TMP/allreduce.pb" >"$TMP/cut.pb"
printf '\377\377\377' >>"$TMP/cut.pb"
bad_input corrupted bad_schedule \
	"libofc-mpi: $TMP/cut.pb: not an ofc.v1.Schedule message (corrupted, or not written by \`ofc schedule --format pb\`); its collective falls back to the MPI's own" \
	-genv OFC_SCHEDULE "$TMP/cut.pb" -n 4 $CHECK 5
bad_input other_hosts hosts \
	"libofc-mpi: $TMP/n-allreduce.pb: rank 0's host '$(hostname)' is not one of the schedule's nodes; allreduce falls back to the MPI's own" \
	-genv OFC_SCHEDULE "$N" -genv OFC_HOST "$(hostname)" -n 4 $CHECK 5
bad_input rank_count rank_count \
	"libofc-mpi: $TMP/allgather.pb: the job has 3 ranks, the schedule 4 nodes taking part; allgather falls back to the MPI's own" \
	-genv OFC_SCHEDULE "$S" -n 3 $CHECK 5

# One transfer of the allreduce left out: the library refuses it (its
# header counts one more); with the count made to match, the program sees
# wrong elements: the check catches a schedule that is wrong.
python3 - "$BUILD/python" "$TMP/allreduce.pb" "$TMP/cut1.pb" "$TMP/short.pb" <<'EOF'
import sys
sys.path.insert(0, sys.argv.pop(1))
from ofc_client.pb import schedule_pb2
m = schedule_pb2.Schedule()
m.ParseFromString(open(sys.argv[1], "rb").read())
del m.steps[-1].transfers[0]
open(sys.argv[2], "wb").write(m.SerializeToString())
m.num_transfers -= 1
open(sys.argv[3], "wb").write(m.SerializeToString())
EOF
ONLY=MPI_Allreduce bad_input cut_transfer bad_schedule \
	"libofc-mpi: $TMP/cut1.pb: holds 4 steps and 31 transfers, its header says 4 and 32 (corrupted); allreduce falls back to the MPI's own" \
	-genv OFC_SCHEDULE "$TMP/cut1.pb" -n 4 $CHECK 5
unset ONLY
mpiexec -n 4 -genv LD_PRELOAD "$LIB" -genv OFC_SCHEDULE "$TMP/short.pb" $CHECK 17 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "MPI_Allreduce int sum: element" "$TMP/err" && ok ||
	bad "a transfer left out: exit $rc, want 1 and the wrong elements named" "$(head -c 600 "$TMP/err")"

# A re-plan while the job runs (OFC_SCHEDULE_WATCH=1): the allreduce's
# file replaced (renamed over) by the ring's; every rank takes it at the
# same call (a rank on the old schedule and one on the new would not
# match their messages, and the data would be wrong), the report counts
# the re-plan and names the new algorithm; all calls on MPI_COMM_WORLD
# stayed ofc's. The job runs until the stop file is there.
cp "$TMP/allreduce.pb" "$TMP/w-allreduce.pb"
$OFC schedule --topology torus:2x2 --collective allreduce --algo ring --size 1MiB --format pb \
	-o "$TMP/ring.pb" >/dev/null || bad "ofc schedule --algo ring"
R="$TMP/replan.json"
mpiexec -n 4 -genv LD_PRELOAD "$LIB" -genv OFC_SCHEDULE "$TMP/w-allreduce.pb:$TMP/allgather.pb" \
	-genv OFC_SCHEDULE_WATCH 1 -genv OFC_MPI_REPORT "$R" $CHECK -u "$TMP/stop" 5 4099 \
	>"$TMP/out" 2>"$TMP/err" &
job=$!
# (the rounds rank 0 has done: ofc-mpi-check writes them to STOP.round)
rounds() { cat "$TMP/stop.round" 2>/dev/null || echo 0; }
deadline 120 wait_run
while [ "$(rounds)" -lt 1 ] && kill -0 $job 2>/dev/null && ! past $wait_run; do sleep 0.1; done
cp "$TMP/ring.pb" "$TMP/w.tmp" && mv "$TMP/w.tmp" "$TMP/w-allreduce.pb"
# two whole rounds after the new file is there: the re-plan is taken
r0=$(rounds)
while [ "$(rounds)" -lt $((r0 + 2)) ] && kill -0 $job 2>/dev/null && ! past $wait_run; do sleep 0.1; done
touch "$TMP/stop"
deadline 120 wait_end
while kill -0 $job 2>/dev/null && ! past $wait_end; do sleep 0.2; done
kill $job 2>/dev/null
wait $job
rc=$?
[ $rc -eq 0 ] && python3 - "$TMP/out" "$R" <<'EOF2' && ok || bad "re-plan: exit $rc" "$(tail -c 800 "$TMP/out")" "$(head -c 800 "$TMP/err")" "$(head -c 1500 "$R" 2>/dev/null)"
import json, sys
prog = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rep = json.load(open(sys.argv[2]))
ar = [c for c in rep["collectives"] if c["name"] == "MPI_Allreduce"][0]
sys.exit(0 if prog["bad_elements"] == 0 and rep["replans"] == 1 and rep["schedules"][0]["algorithm"] == "ring"
         and ar["ofc_calls"] == 4 * prog["calls"]["MPI_Allreduce"] else 1)
EOF2

# Without the library: no report, and the MPI's own results still right.
mpiexec -n 4 -genv OFC_MPI_REPORT "$TMP/none.json" $CHECK 17 >"$TMP/out" 2>&1
[ $? -eq 0 ] && [ ! -e "$TMP/none.json" ] && ok || bad "the program alone" "$(head -c 600 "$TMP/out")"

finish
