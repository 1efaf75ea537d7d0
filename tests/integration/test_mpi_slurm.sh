#!/bin/sh
# A Slurm job of an unmodified MPI program runs ofc's schedule with no
# change to the program or its build: Debian's slurm-wlm daemons on
# loopback (slurm_env.sh), ofcd on 4 hosts of 4 ports through an emulated
# OCS; contrib/slurm's PrologSlurmctld makes the job's partition
# (slurm-job-ID, torus:2x2 as its comment asks) and its TaskProlog has
# every task preload libofc-mpi (Open MPI's), which asks ofcd for the
# partition's schedules. `srun --mpi=pmix` starts the check program
# (tests/mpi/ofc_mpi_check.c) as one task a node: every element right,
# the report shows the collectives on MPI_COMM_WORLD run by ofcd's
# schedules for the job's topology, each task on the host the node map
# names (OFC_HOST, from the TaskProlog); at its end the report reaches
# ofcd, which shows it as the partition's.
SUITE=mpi_slurm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi_env.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/slurm_env.sh"

for b in munged slurmctld slurmd sbatch srun scontrol; do
	if ! command -v "$b" >/dev/null 2>&1; then
		echo "mpi_slurm: SKIP: $b is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
		echo "$SUITE: 0 passed, 0 failed, 1 skipped"
		exit 0
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "mpi_slurm: SKIP: slurmd must run as root to start jobs (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
CHECK=$(pwd -P)/$BUILD/tests/ofc-mpi-check-openmpi
LIB=$(pwd -P)/$BUILD/libofc-mpi-openmpi.so
mpi_need "$CHECK" "$LIB"

TMP=$(cd "$TMP" && pwd -P)
chmod 755 "$TMP"
OFCABS=$(cd "$(dirname "$OFC")" && pwd -P)/$(basename "$OFC")
SOCK="$TMP/ofcd.sock"
DAEMONS=""
cleanup() {
	slurm_stop
	for p in $DAEMONS; do kill "$p" 2>/dev/null; done
	stop_all_emus
	rm_tmp
}
trap cleanup EXIT

mkdir -p "$TMP/st" "$TMP/cred"
chmod 700 "$TMP/cred"
cp configs/credentials/ocs0.cred "$TMP/cred/"
chmod 600 "$TMP/cred/ocs0.cred"
mpi_fabric "$TMP/fab.yaml" slurm4 100Gbps ring:4 cred/ocs0.cred
start_emu ocs-emu e --ports 16 --credentials configs/credentials/ocs0.cred
$BUILD/ofcd --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP/cred" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--foreground 2>>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done

slurm_configure 4 || {
	bad "slurm_configure"
	finish
	exit 1
}
cp contrib/slurm/ofc-task-prolog "$TMP/"
echo "OFC_MPI_LIB=$LIB" >>"$TMP/ofc-slurm.env"
echo "TaskProlog=$TMP/ofc-task-prolog" >>"$TMP/slurm.conf"
# Slurm's PMIx makes its step's directory under TmpFS, named by the step
# alone: the slurmds on one machine need a TmpFS each (%n: the node).
echo "TmpFS=$TMP/tmpfs/%n" >>"$TMP/slurm.conf"
for n in node00 node01 node02 node03; do mkdir -p "$TMP/tmpfs/$n"; done
slurm_start 4 && ok || bad "slurm did not start" "$(tail -5 "$TMP/log/slurmctld.log" 2>/dev/null)"

# The step once more, once, only where Open MPI itself died in MPI_Init
# (docs/mpi.md: under Slurm's PMIx a fast rank's first message can reach
# one still in MPI_Init, with or without the library; about a step in ten
# at load 10-20): each task's death ends the step (-K), not a hang.
step="srun --mpi=pmix -K -n 4 --ntasks-per-node=1 $CHECK 5 4099"
id=$(submit -N 4 -o "$TMP/job.out" -e "$TMP/job.err" --comment ofc:topology=torus:2x2 \
	--export=ALL,OFC_MPI_REPORT="$TMP/report.json" \
	--wrap "$step || { grep -q 'Failing at address: (nil)' $TMP/job.err &&
		echo 'test_mpi_slurm: Open MPI died in MPI_Init (docs/mpi.md): the step once more' >&2 && $step; }")
[ -n "$id" ] && wait_job "$id" COMPLETED FAILED CANCELLED TIMEOUT && ok ||
	bad "the job did not end" "$(scontrol show job "$id" 2>&1 | head -5)"
[ "$(job_field "$id" JobState)" = COMPLETED ] && ok ||
	bad "the job $(job_field "$id" JobState)" "$(tail -c 1500 "$TMP/job.err")" "$(tail -5 "$TMP/ofc-slurm.log" 2>/dev/null)"
python3 - "$TMP/job.out" "$TMP/report.json" "slurm-job-$id" <<'EOF' && ok ||
import json, sys
prog = json.loads([l for l in open(sys.argv[1]).read().splitlines() if l.startswith('{"ranks"')][-1])
rep = json.load(open(sys.argv[2]))
# (a held partition's schedule names its hosts, in the numbering its
# circuits take, renumbered for fewest moves or not: each rank runs the
# node of its own host)
ok = prog["bad_elements"] == 0 and prog["ranks"] == 4 and rep["mapping"] == "host names"
ok = ok and rep["hosts"] == ["h0", "h1", "h2", "h3"] and all(s["ok"] and s["topology"] == "torus:2x2" for s in rep["schedules"])
for c in rep["collectives"]:
    want, ref = prog["calls"][c["name"]] * 4, prog["reference_calls"][c["name"]] * 4
    ok = ok and c["ofc_calls"] == want > 0 and c["fallback_reasons"] == {"communicator": ref}
# ... sent to ofcd for the job's partition, which kept it
ok = ok and rep["ofcd_report"]["sent"] and "kept for partition %s:" % sys.argv[3] in rep["ofcd_report"]["message"]
sys.exit(0 if ok else 1)
EOF
	bad "the job's report" "$(tail -c 800 "$TMP/job.out")" "$(tail -c 800 "$TMP/job.err")" "$(head -c 1500 "$TMP/report.json" 2>/dev/null)"
# ofcd shows it as the partition's, after the job (its partition let go)
$OFC --socket "$SOCK" status >"$TMP/status" 2>&1 &&
	grep -q "^  mpi report partition slurm-job-$id: 4 ranks, host names, from uid:" "$TMP/status" &&
	grep -q "^ *MPI_Allreduce  *[0-9]* calls, [1-9][0-9]* by ofc's schedule" "$TMP/status" && ok ||
	bad "ofcd's state lacks the job's report" "$(head -c 1500 "$TMP/status")"

finish
