#!/bin/sh
# Slurm jobs get their own topology before they start, with the
# Debian slurm-wlm 22.05 daemons: munged with a key made here, slurmctld and
# one slurmd per node name (slurmd -N NAME, each on its own port: this build
# allows it), all on loopback with their own configs and state under $TMP;
# build/ocs-emu and ofcd on 16 hosts of 4 ports wired as torus:4x4.
# PrologSlurmctld and EpilogSlurmctld are contrib/slurm's wrappers.
# - two jobs on disjoint halves, torus:2x4 and circulant:8:1,2, run at the
#   same time; each checks from `ofc status --json` that its partition holds
#   its topology (ofcd's held partition, and the switch's circuits on its
#   hosts: all among them, as many as the topology's arcs, each host at the
#   topology's degree) and, once both run, that the other's circuits are as
#   the other saw them;
# - jobs whose topology cannot be built (9 nodes for 8 hosts, 7 ports a host
#   of 4) never start: held, the reason in `scontrol show job`;
# - the emulator refuses a change mid-prolog: the transaction rolls back
#   (the switch holds what it held) and the job is requeued, the reason in
#   scontrol; released, it runs;
# - a job with the first one's request after it ended needs 0 moves
#   (ofcd's held partition records its commit's operations);
# - a switch's maintenance window under two running jobs (docs/ofcd.md):
#   ofcd again, on 32 hosts over four emulated switches; `ofc drain ocs1`
#   and `ofc undrain ocs1` while both hold their partitions: each
#   partition's schedule sends every transfer over a circuit the switches
#   hold, before, while and after ocs1 is drained; ocs1 keeps the
#   partitions' circuits and drops the free ports'; no other switch moves;
#   undrained, every switch is as before; the drain's answer waits for no
#   job of a held partition; the jobs check their partitions again and
#   complete.
# The prolog's own checks that need no Slurm (overlaps, release) are at the
# top, driven through the same binary with a stand-in scontrol.
SUITE=slurm
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/slurm_env.sh"

for b in munged slurmctld slurmd sbatch scontrol squeue; do
	if ! command -v "$b" >/dev/null 2>&1; then
		echo "slurm: SKIP: $b is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
		echo "$SUITE: 0 passed, 0 failed, 1 skipped"
		exit 0
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "slurm: SKIP: slurmd must run as root to start jobs (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

TMP=$(cd "$TMP" && pwd -P)
chmod 755 "$TMP" # munged refuses a socket directory others may write; slurmd's job steps read here
OFCABS=$(cd "$(dirname "$OFC")" && pwd -P)/$(basename "$OFC")
SOCK="$TMP/ofcd.sock"
ST="$TMP/state"
DAEMONS=""
cleanup() {
	slurm_stop
	for p in $DAEMONS; do kill "$p" 2>/dev/null; done
	stop_all_emus
	rm -rf "$TMP"
}
trap cleanup EXIT

# ---- the fabric: 16 hosts of 4 ports on one 64-port OCS ---------------------------
mkdir -p "$ST" "$TMP/cred"
chmod 700 "$TMP/cred"
cp configs/credentials/ocs0.cred "$TMP/cred/ocs0.cred"
chmod 600 "$TMP/cred/ocs0.cred"
sed -e 's/^name: .*/name: slurm16/' -e 's/^description: .*/description: 16 hosts for Slurm jobs/' \
	-e 's/count: 64/count: 16/' -e 's/ports: 256/ports: 64/' -e 's/^topology: .*/topology: torus:4x4/' \
	-e "s|credentials: .*|credentials: cred/ocs0.cred|" -e '/op: alltoall/,+1d' \
	configs/torus64-ocs.yaml >"$TMP/fab.yaml"
: >"$TMP/emu.state"
start_emu ocs-emu e --ports 64 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
EMU_PORT=$e_port
"$BUILD/ofcd" --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$ST" --credentials-dir "$TMP/cred" \
	--device "ocs0=127.0.0.1:$EMU_PORT" --probe-interval 0 --foreground 2>>"$TMP/ofcd.log" &
OFCD=$!
DAEMONS="$DAEMONS $OFCD"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_stdout_has "committed transaction 1: 64 operations" $OFC --socket "$SOCK" reconfigure --topology torus:4x4

# ---- the prolog alone: a stand-in scontrol records what it is asked ----------------
printf '#!/bin/sh\necho "$@" >>%s/scontrol.log\n' "$TMP" >"$TMP/fake-scontrol"
chmod 755 "$TMP/fake-scontrol"
prolog() { # JOB NODELIST COMMENT
	env -i SLURM_JOB_ID="$1" SLURM_JOB_NODELIST="$2" SLURM_JOB_COMMENT="$3" \
		OFC_SLURM_SCONTROL="$TMP/fake-scontrol" OFC_SOCKET="$SOCK" $OFC slurm prolog --timeout 20
}
epilog() { env -i SLURM_JOB_ID="$1" OFC_SOCKET="$SOCK" $OFC slurm epilog; }
expect_stdout_has "ofc: job 901: partition slurm-job-901: ring:4 on 4 hosts committed" prolog 901 'h[0-3]' 'ofc:topology=ring:4'
expect_error 1 "ofc slurm prolog: job 902: partition 'slurm-job-902': host h3 is held by partition 'slurm-job-901' (requeued); slurm-job-901 holds its hosts and is not ending" \
	prolog 902 'h[3-6]' 'ofc:topology=ring:4'
grep -qx "update JobId=902 AdminComment=ofc: partition 'slurm-job-902': host h3 is held by partition 'slurm-job-901'" "$TMP/scontrol.log" &&
	! grep -q "^hold 902" "$TMP/scontrol.log" && ok || bad "scontrol for job 902 (reason, no hold)" "$(cat "$TMP/scontrol.log")"
expect_stdout_has "  held       slurm-job-901: ring:4 on 4 hosts, at target (transaction 2, " $OFC --socket "$SOCK" status
# the fabric's topology and schedule stay its own; the job's partition has its
# own, and its circuits are its topology's (relabelled or not)
expect_json '(h := j["held"][0])["at_target"] and h["schedule"]["topology"] == "ring:4" and h["schedule"]["nodes"] == 4 and h["schedule"]["verified"] and j["topology"]["spec"] == "torus:4x4" and j["schedule"]["topology"] == "torus:4x4"' $OFC --socket "$SOCK" status --json
# a held partition's circuits change for its owner alone
cp "$TMP/emu.state" "$TMP/emu.held"
expect_exit 1 $OFC --socket "$SOCK" reconfigure --topology circulant:16:1,3
grep -q "of partition 'slurm-job-901', held for its owner; refused" "$TMP/err" && cmp -s "$TMP/emu.state" "$TMP/emu.held" &&
	ok || bad "a whole-fabric reconfigure over a held partition" "$(cat "$TMP/err")"
expect_error 1 "ofc slurm prolog: job 903: unknown request 'ofc:topo' in the job's comment (ofc:topology=SPEC, ofc:relabel=yes|no)" \
	prolog 903 'h[4-7]' 'ofc:topo=ring:4'
grep -qx "hold 903" "$TMP/scontrol.log" && ok || bad "job 903 not held" "$(cat "$TMP/scontrol.log")"
expect_stdout_has "ofc: job 904 asks for no topology: it runs on the circuits as they are" prolog 904 'h[4-7]' 'a job'
expect_stdout_has "released partition 'slurm-job-901'" epilog 901
expect_stdout_has "ofc: job 901 held no partition" epilog 901
expect_json 'not j.get("held")' $OFC --socket "$SOCK" status --json
# the released partition's circuits stay: "not at target" says what and why
expect_stdout_has "  target     torus:4x4, NOT at target: ocs0: " $OFC --socket "$SOCK" status
grep -q "NOT at target: ocs0: [0-9]* cross-connects the target does not have, [1-9][0-9]* of the target's missing (a partition aimed since the fabric's last commit changed its hosts' circuits, and a released one's stay as they are by design" "$TMP/out" &&
	ok || bad "not at target explained" "$(grep target "$TMP/out")"
expect_json 'not j["at_target"] and "cross-connects the target does not have" in j["at_target_detail"]' $OFC --socket "$SOCK" status --json

# ---- munge and Slurm: their own key, configs, state and ports ----------------------
# Slurm's node names are not ofc's host names: node00..node15 are h0..h15.
mkdir -p "$TMP/jobs"
slurm_configure 16
# topology.conf beside slurm.conf: a leaf per half (a partition of 8 hosts)
expect_exit 0 $OFC slurm topology "$TMP/topology.conf" --config "$TMP/fab.yaml" --map "$TMP/nodes.map" --group 8
slurm_start 16 && ok || bad "munged, slurmctld and 16 slurmd" "$(sinfo 2>&1)" \
	"$(tail -5 "$TMP/log/slurmctld.log" "$TMP/munge/log" 2>&1)"
scontrol show topology >"$TMP/topo.out" 2>&1
grep -q "^SwitchName=ocs0-g0 Level=0 .*Nodes=node00,node01,node02,node03,node04,node05,node06,node07" "$TMP/topo.out" &&
	grep -q "^SwitchName=ocs0-g1 Level=0 .*Nodes=node08,node09,node10,node11,node12,node13,node14,node15" "$TMP/topo.out" &&
	grep -q "^SwitchName=ocs0 Level=1 .*Switches=ocs0-g0,ocs0-g1" "$TMP/topo.out" &&
	ok || bad "slurmctld's topology from ofc slurm topology" "$(cat "$TMP/topo.out")"


# ---- the job script's check: its partition, the other's circuits -------------------
cat >"$TMP/check.py" <<'EOF'
# check.py STATUS.json JOB TOPOLOGY NODES DEGREE ARCS [OTHER_SAVED]: the job's
# partition holds its topology; the other's circuits are as it saved them.
import json, sys
st = json.load(open(sys.argv[1]))
job, spec, deg, arcs = sys.argv[2], sys.argv[3], int(sys.argv[5]), int(sys.argv[6])
mine = set("h%d" % int(n[4:]) for n in sys.argv[4].split(","))
held = {h["name"]: h for h in st.get("held", [])}
h = held.get("slurm-job-" + job)
assert h and h["topology"] == spec and set(h["hosts"]) == mine, ("held", held)
circ = [c for d in st["devices"] for c in d.get("circuits", [])]
own = [c for c in circ if c["src_host"] in mine or c["dst_host"] in mine]
assert all(c["src_host"] in mine and c["dst_host"] in mine for c in own), "a circuit leaves the job"
assert len(own) == arcs, ("circuits", len(own), arcs)
for x in mine:
    assert sum(c["src_host"] == x for c in own) == deg, ("out-degree", x)
    assert sum(c["dst_host"] == x for c in own) == deg, ("in-degree", x)
json.dump(sorted((c["in_port"], c["out_port"]) for c in own), open(sys.argv[1] + ".own", "w"))
if len(sys.argv) > 7:
    other = json.load(open(sys.argv[7]))
    now = sorted([c["in_port"], c["out_port"]] for c in circ if [c["in_port"], c["out_port"]] in other)
    assert now == sorted(other), "the other job's circuits changed"
print("job %s: %s holds %d circuits among its hosts; ops %d" % (job, spec, len(own), h["operations"]))
EOF
cat >"$TMP/job.sh" <<EOF
#!/bin/sh
# job.sh NAME TOPOLOGY DEGREE ARCS [OTHER]: check, save, wait for OTHER, check again
j=\$SLURM_JOB_ID
nodes=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | paste -sd, -)
$OFCABS --socket $SOCK status --json >$TMP/jobs/\$1.json || exit 1
python3 $TMP/check.py $TMP/jobs/\$1.json \$j \$2 \$nodes \$3 \$4 || exit 1
cp $TMP/jobs/\$1.json.own $TMP/jobs/\$1.saved
[ -n "\$5" ] || exit 0
end=\$((\$(date +%s) + 60))
until [ -e $TMP/jobs/\$5.saved ] || [ \$(date +%s) -gt \$end ]; do sleep 0.1; done
$OFCABS --socket $SOCK status --json >$TMP/jobs/\$1.2.json || exit 1
python3 $TMP/check.py $TMP/jobs/\$1.2.json \$j \$2 \$nodes \$3 \$4 $TMP/jobs/\$5.saved || exit 1
# both checked once: wait for the other's second check before ending
touch $TMP/jobs/\$1.done
until [ -e $TMP/jobs/\$5.done ] || [ \$(date +%s) -gt \$end ]; do sleep 0.1; done
EOF
chmod 755 "$TMP/job.sh"

# ---- two jobs, two topologies, at the same time ------------------------------------
A=$(submit -N 8 -w 'node[00-07]' -o "$TMP/jobs/A.out" --comment 'ofc:topology=torus:2x4' "$TMP/job.sh" A torus:2x4 3 24 B)
B=$(submit -N 8 -w 'node[08-15]' -o "$TMP/jobs/B.out" --comment 'ofc:topology=circulant:8:1,2' "$TMP/job.sh" B circulant:8:1,2 4 32 A)
wait_job "$A" COMPLETED FAILED && wait_job "$B" COMPLETED FAILED || bad "jobs $A and $B did not end" "$(squeue 2>&1)"
for x in A:"$A" B:"$B"; do
	[ "$(job_field "${x#*:}" JobState)" = COMPLETED ] && [ "$(job_field "${x#*:}" ExitCode)" = 0:0 ] && ok ||
		bad "job ${x%%:*} (${x#*:}): $(job_field "${x#*:}" JobState) $(job_field "${x#*:}" ExitCode)" \
			"$(cat "$TMP/jobs/${x%%:*}.out" 2>&1 | tail -5)" "$(tail -5 "$TMP/ofc-slurm.log")"
done
grep -q "^ofc: job $A: partition slurm-job-$A: torus:2x4 on 8 hosts committed" "$TMP/ofc-slurm.log" &&
	grep -q "^ofc: job $B: partition slurm-job-$B: circulant:8:1,2 on 8 hosts committed" "$TMP/ofc-slurm.log" &&
	ok || bad "the prologs' lines" "$(cat "$TMP/ofc-slurm.log")"
# the epilogs let go (by the clock: EpilogSlurmctld runs after the job ends)
deadline 20
until grep -q "job $B: released" "$TMP/ofc-slurm.log" && grep -q "job $A: released" "$TMP/ofc-slurm.log" ||
	past $_end; do sleep 0.2; done
expect_json 'not j.get("held")' $OFC --socket "$SOCK" status --json

# ---- topologies that cannot be built: never started, held, the reason shown --------
C=$(submit -N 8 -w 'node[00-07]' -o /dev/null --comment 'ofc:topology=torus:3x3' --wrap "touch $TMP/jobs/C.ran")
D=$(submit -N 8 -w 'node[08-15]' -o /dev/null --comment 'ofc:topology=complete:8' --wrap "touch $TMP/jobs/D.ran")
for x in "$C:has 9 nodes for 8 hosts" "$D:needs 7 ports a host; host h8 has 4"; do
	id=${x%%:*}
	deadline 30
	until [ "$(job_fields "$id" JobState Reason)" = "PENDING JobHeldAdmin" ] ||
		past $_end; do sleep 0.2; done
	scontrol show job "$id" >"$TMP/show"
	grep -q "JobState=PENDING Reason=JobHeldAdmin" "$TMP/show" && grep -q "AdminComment=ofc: .*${x#*:}" "$TMP/show" &&
		[ ! -e "$TMP/jobs/C.ran" ] && [ ! -e "$TMP/jobs/D.ran" ] &&
		ok || bad "job $id: held with its reason (${x#*:})" "$(grep -E 'JobState|AdminComment|Restarts' "$TMP/show")"
done
scancel "$C" "$D"

# ---- the emulator refuses a change mid-prolog: rolled back, requeued ---------------
cp "$TMP/emu.state" "$TMP/emu.before"
stop_emu "$e_pid"
# the same port and state; the 3rd command after the restart is refused
# (the login, the read, then the first change: ofcd reads no device unasked,
# --probe-interval 0)
start_emu ocs-emu e --listen 127.0.0.1:$EMU_PORT --ports 64 --credentials configs/credentials/ocs0.cred \
	--state "$TMP/emu.state" --fail-at 3 --fail-mode deny
E=$(submit -N 8 -w 'node[00-07]' -o "$TMP/jobs/E.out" --comment 'ofc:topology=circulant:8:1,3' --wrap true)
deadline 30
until [ "$(job_fields "$E" Restarts JobState)" = "1 PENDING" ] || past $_end; do
	sleep 0.2
done
scontrol show job "$E" >"$TMP/show"
grep -q "JobState=PENDING" "$TMP/show" && grep -q "Restarts=1" "$TMP/show" &&
	grep -q "AdminComment=ofc: transaction [0-9]* failed: .*rolled back" "$TMP/show" &&
	! grep -q "Reason=JobHeldAdmin" "$TMP/show" &&
	ok || bad "job $E: requeued with the reason" "$(grep -E 'JobState|AdminComment|Restarts' "$TMP/show")" "$(tail -3 "$TMP/ofc-slurm.log")"
sort "$TMP/emu.before" >"$TMP/a"
sort "$TMP/emu.state" >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && ok || bad "the switch after the rollback" "$(diff "$TMP/a" "$TMP/b" | head -5)"
# Released (Slurm would try again after two minutes), it runs: the emulator
# refused once.
# (asked again while the requeue's own begin time stands: an update that
# lands before the requeue is done is overwritten by it)
deadline 60
until [ "$(job_field "$E" JobState)" = COMPLETED ] || [ "$(job_field "$E" JobState)" = FAILED ] ||
	past $_end; do
	[ "$(job_field "$E" Reason)" = BeginTime ] && scontrol update JobId="$E" StartTime=now
	sleep 0.5
done
[ "$(job_field "$E" JobState)" = COMPLETED ] && ok ||
	bad "job $E after its requeue: $(job_field "$E" JobState)" "$(tail -3 "$TMP/ofc-slurm.log")"

# ---- the first job's request again: 0 moves -----------------------------------------
# (E left circulant:8:1,3 on h0..h7; B's circulant:8:1,2 is still on h8..h15)
F=$(submit -N 8 -w 'node[08-15]' -o "$TMP/jobs/F.out" --comment 'ofc:topology=circulant:8:1,2' "$TMP/job.sh" F circulant:8:1,2 4 32)
wait_job "$F" COMPLETED FAILED && [ "$(job_field "$F" JobState)" = COMPLETED ] &&
	grep -q "ops 0$" "$TMP/jobs/F.out" && grep -q "^ofc: job $F: .* committed: 0 operations" "$TMP/ofc-slurm.log" &&
	ok || bad "job $F: the same request needs 0 moves" "$(cat "$TMP/jobs/F.out")" "$(tail -3 "$TMP/ofc-slurm.log")"

# ---- a switch's maintenance window under two running jobs' partitions ---------------
# ofcd again on the same socket (the hooks' ofc-slurm.env names it), on 32
# hosts over four emulated switches, port j of every host on ocsj
# (four_ocs_fabric): node00..15 are h0..h15, h16..h31 the fabric's free
# ports. Jobs G and H hold their halves while ocs1, which carries circuits
# of both, is drained and undrained.
kill "$OFCD"
deadline 10
while kill -0 "$OFCD" 2>/dev/null && ! past $_end; do sleep 0.1; done
DAEMONS=$(echo "$DAEMONS" | sed "s/ $OFCD\b//") # (its pid is free for others now)
four_ocs_fabric "$TMP/fab4.yaml" slurm32 32 torus:4x8
mkdir -p "$TMP/state4"
"$BUILD/ofcd" --config "$TMP/fab4.yaml" --socket "$SOCK" --state-dir "$TMP/state4" --credentials-dir "$TMP" \
	--probe-interval 0 --foreground 2>>"$TMP/ofcd4.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_stdout_has "committed transaction 1: 128 operations" $OFC --socket "$SOCK" reconfigure --topology torus:4x8
# each job checks its partition, says so, runs until the undrain (90 s at
# most) and checks it again
cat >"$TMP/mjob.sh" <<EOF
#!/bin/sh
# mjob.sh NAME TOPOLOGY DEGREE ARCS
nodes=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | paste -sd, -)
$OFCABS --socket $SOCK status --json >$TMP/jobs/\$1.json || exit 1
python3 $TMP/check.py $TMP/jobs/\$1.json \$SLURM_JOB_ID \$2 \$nodes \$3 \$4 || exit 1
touch $TMP/jobs/\$1.up
end=\$((\$(date +%s) + 90))
until [ -e $TMP/jobs/undrained ] || [ \$(date +%s) -gt \$end ]; do sleep 0.1; done
$OFCABS --socket $SOCK status --json >$TMP/jobs/\$1.2.json || exit 1
python3 $TMP/check.py $TMP/jobs/\$1.2.json \$SLURM_JOB_ID \$2 \$nodes \$3 \$4
EOF
chmod 755 "$TMP/mjob.sh"
# (G renumbered for fewest moves, H in the hosts' order: the state lists a
# held partition's hosts in the order its circuits give the topology's
# nodes, and its schedule names them, so either way each transfer below
# must be one of its circuits)
G=$(submit -N 8 -w 'node[00-07]' -o "$TMP/jobs/G.out" --comment 'ofc:topology=torus:2x4' "$TMP/mjob.sh" G torus:2x4 3 24)
H=$(submit -N 8 -w 'node[08-15]' -o "$TMP/jobs/H.out" --comment 'ofc:topology=circulant:8:1,2 ofc:relabel=no' "$TMP/mjob.sh" H circulant:8:1,2 4 32)
deadline 60
until [ -e "$TMP/jobs/G.up" ] && [ -e "$TMP/jobs/H.up" ] || past $_end; do sleep 0.1; done
[ -e "$TMP/jobs/G.up" ] && [ -e "$TMP/jobs/H.up" ] && ok ||
	bad "jobs $G and $H did not start on their partitions" "$(cat "$TMP/jobs/G.out" "$TMP/jobs/H.out" 2>&1)" "$(tail -3 "$TMP/ofc-slurm.log")"
# drain_check TAG: every held partition's schedule (GetSchedule, the whole
# steps) sends each transfer over a circuit the switches hold now (their
# emulators' state files, "IN OUT" lines; a port's host from the state),
# and the summaries in the state are those saved as TAG
drain_check() {
	for p in "slurm-job-$G" "slurm-job-$H"; do
		$OFC --socket "$SOCK" schedule --collective allreduce --partition "$p" -o "$TMP/sched.$p.json" >/dev/null 2>"$TMP/err" ||
			bad "the schedule of $p ($1)" "$(cat "$TMP/err")"
	done
	$OFC --socket "$SOCK" status --json >"$TMP/st4.json"
	python3 - "$TMP" "$1" "slurm-job-$G" "slurm-job-$H" <<'EOF' && ok || bad "the held partitions' schedules and the switches ($1)" "$(cat "$TMP/why")"
import json, sys
tmp, tag, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
st = json.load(open(tmp + "/st4.json"))
host = {}  # (switch, port): host, from ofcd's view of the cabling
for d in st["devices"]:
    for c in d.get("circuits", []):
        host[(c["switch_name"], c["in_port"])] = c["src_host"]
        host[(c["switch_name"], c["out_port"], "out")] = c["dst_host"]
up = set()  # (src host, dst host) of the circuits the switches hold
for i in range(4):
    for line in open("%s/e%d.state" % (tmp, i)):
        a, b = map(int, line.split()[:2])
        s, t = host.get(("ocs%d" % i, a)), host.get(("ocs%d" % i, b, "out"))
        if s and t:
            up.add((s, t))
why = []
held = {h["name"]: h for h in st.get("held", [])}
summ = {}
for p in parts:
    h = held[p]
    sc = json.load(open("%s/sched.%s.json" % (tmp, p)))
    # its links name each node's host, as the state orders them (libofc-mpi
    # runs a rank on its host's node)
    named = {}
    for l in sc.get("links", []):
        named[l.get("src", 0)] = l.get("src_host")
    if [named.get(u) for u in range(len(h["hosts"]))] != h["hosts"]:
        why.append("%s: the schedule names its nodes %s, the state %s" % (p, named, h["hosts"]))
    n = 0
    for stp in sc.get("steps", []):
        for x in stp.get("transfers", []):
            n += 1
            e = (h["hosts"][x.get("src", 0)], h["hosts"][x.get("dst", 0)])
            if e not in up:
                why.append("%s: a transfer %s -> %s on no circuit the switches hold" % (p, e[0], e[1]))
    if not n or not sc.get("verified"):
        why.append("%s: no verified schedule with transfers" % p)
    s = h["schedule"]
    summ[p] = [s.get("topology"), s.get("num_steps"), s.get("time_us"), s.get("verified")]
try:
    saved = json.load(open(tmp + "/summ.before.json"))
    if saved != summ:
        why.append("the state's schedules %s, before the drain %s" % (summ, saved))
except FileNotFoundError:
    json.dump(summ, open(tmp + "/summ.before.json", "w"))
open(tmp + "/why", "w").write("\n".join(why[:8]))
sys.exit(1 if why else 0)
EOF
}
drain_check "before the drain"
for i in 0 1 2 3; do sort "$TMP/e$i.state" >"$TMP/before$i"; done
$OFC --socket "$SOCK" status --json >"$TMP/out"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["schedule"]["num_steps"])' "$TMP/out" >"$TMP/fabsched"
# ocs1 carries circuits of both partitions and of the free ports
awk '$1 >= 1 && $1 <= 8' "$TMP/before1" | grep -q . && awk '$1 >= 9 && $1 <= 16' "$TMP/before1" | grep -q . &&
	awk '$1 >= 17' "$TMP/before1" | grep -q . && ok || bad "ocs1 does not carry both partitions' circuits" "$(cat "$TMP/before1")"
expect_stdout_has "ocs1 drained (32 switch ports; " $OFC --socket "$SOCK" drain ocs1 --grace 1s
cp "$TMP/out" "$TMP/drain.out"
# what it waited for: this test asked for both partitions' schedules, but
# a held partition keeps its circuits and schedule through a drain, so
# those askers have nothing new to take and are not waited for; the
# partitions keep their circuits; the fabric's schedule runs without ocs1
grep -q "(32 switch ports; no running job of libofc-mpi on these ports to say it took the new schedule: 1000 ms of grace; " "$TMP/drain.out" &&
	! grep -q "grace covered" "$TMP/drain.out" &&
	grep -q "; circuits removed: transaction [0-9]*, 16 operations, verified on the devices); held partition slurm-job-[0-9]*, slurm-job-[0-9]* keep their circuits on these ports" "$TMP/drain.out" &&
	grep -q "held partition [^;]*slurm-job-$G[,) ]" "$TMP/drain.out" && grep -q "held partition [^;]*slurm-job-$H[,) ]" "$TMP/drain.out" &&
	grep -q "; 32 failures in effect (h0:1, " "$TMP/drain.out" &&
	ok || bad "the drain's answer: what it waited for, the held partitions" "$(cat "$TMP/drain.out")"
drain_check "drained"
# the free ports' circuits left ocs1; the partitions' stayed there, and
# nothing moved on the other switches
sort "$TMP/e1.state" >"$TMP/now1"
awk '$1 <= 16' "$TMP/before1" | cmp -s - "$TMP/now1" && ok || bad "ocs1 drained: not the partitions' circuits alone" "$(diff "$TMP/before1" "$TMP/now1" | head -5)"
for i in 0 2 3; do sort "$TMP/e$i.state" | cmp -s - "$TMP/before$i" && ok || bad "ocs$i changed with ocs1's drain"; done
expect_stdout_has "  drained    ocs1 ports 1,2," $OFC --socket "$SOCK" status
expect_stdout_has "ocs1 undrained (32 switch ports; circuits back: transaction" $OFC --socket "$SOCK" undrain ocs1
for i in 0 1 2 3; do sort "$TMP/e$i.state" | cmp -s - "$TMP/before$i" && ok || bad "ocs$i after the undrain differs from before the drain"; done
drain_check "undrained"
expect_json 'not j.get("drained") and not j.get("failed") and j["schedule"]["verified"] and j["schedule"]["num_steps"] == '"$(cat "$TMP/fabsched")" \
	$OFC --socket "$SOCK" status --json
touch "$TMP/jobs/undrained"
wait_job "$G" COMPLETED FAILED && wait_job "$H" COMPLETED FAILED || bad "jobs $G and $H did not end" "$(squeue 2>&1)"
for x in G:"$G" H:"$H"; do
	[ "$(job_fields "${x#*:}" JobState ExitCode)" = "COMPLETED 0:0" ] && ok ||
		bad "job ${x%%:*} (${x#*:}) across the drain: $(job_fields "${x#*:}" JobState ExitCode)" \
			"$(tail -5 "$TMP/jobs/${x%%:*}.out" 2>&1)"
done

finish
