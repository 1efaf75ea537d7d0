#!/bin/sh
# Schedules executed on the netns testbed (ofc testbed run): 16 hosts wired
# as torus:4x4 through an emulated OCS, circuits shaped by tbf; BFB allreduce
# and MCF all-to-all run with every element checked; one transfer dropped
# is caught by the data check; MPICH's allreduce runs beside ofc's (--mpi);
# an exported schedule runs from its file;
# after reconfiguring to circulant:16:3,4 the runs are still correct.
# Sizes are small: the figures are for `make bench`, not for tests.
# (run alone: its circuits carry traffic at rates this machine's cores
# must keep up with)
SUITE=run
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "run: SKIP: needs root and network namespaces (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

ST="$TMP/state"
NAME="run$$"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
for t in torus circulant; do
	sed -e "s|^name: tb16|name: $NAME|" -e "s|credentials: .*|credentials: ocs0.cred|" \
		-e "s|^  ports: 4|  ports: 4\n  port_rate: 1Gbps|" \
		tests/configs/tb16-$t.yaml >"$TMP/$t.yaml"
done
start_emu ocs-emu e --ports 64 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
cleanup() {
	$OFC testbed down "$TMP/torus.yaml" --state-dir "$ST" >/dev/null 2>&1
	stop_all_emus
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
RUN="$OFC testbed run --state-dir $ST --json"

expect_exit 0 $OFC apply "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST"
expect_error 1 "ofc: the testbed of fabric '$NAME' is not up (run 'ofc testbed up')" \
	$RUN "$TMP/torus.yaml" --collective allreduce
expect_error 2 "ofc testbed: bad --rate-scale '2': expected a number above 0 and at most 1" \
	$OFC testbed up "$TMP/torus.yaml" --rate-scale 2 --state-dir "$ST"
# 20 Mb/s a circuit, 1.3 Gb/s for all 64 at once: what 2 shared cores carry
# (testbed check now fails when the circuits carry less than their shaping).
expect_stdout_has "testbed $NAME up: 16 hosts as namespaces ofc-$NAME-*, 64 circuits" \
	$OFC testbed up "$TMP/torus.yaml" --rate-scale 0.02 --device "$DEV" --state-dir "$ST"
# Every circuit holds a 20 Mb/s tbf (1 Gb/s x 0.02) and the probe moved data on it.
expect_json 'j["reachable"]==240 and len(j["circuits"])==64 and all(c["shaped_rate_bps"]==2e7 and c["rate_bps"]>0 and c["latency_s"]>0 for c in j["circuits"]) and j["carries_shaped_rate"]' \
	$OFC testbed check "$TMP/torus.yaml" --state-dir "$ST" --json

# BFB allreduce: 16 x 256 KiB, a sum over every host's data, every element checked.
expect_json '(lambda r: r["algorithm"]=="bfb" and r["ran"] and r["verified"] and r["data_ok"] and r["checked_elements"]==16*65536 and r["bad_elements"]==0 and r["steps"]==8 and r["connections"]==64 and r["predicted_s"]>0)(j["runs"][0])' \
	$RUN "$TMP/torus.yaml" --collective allreduce --algo bfb --size 256KiB
# Recursive doubling's all-gather, relayed on the torus: its spans (a
# transfer a hop for a node's subcube) run block by block.
# A comparison runs every row it names; the run reads Swing's and recursive
# doubling's variants back from the rows' names (swing/L, rd/B, ...).
expect_json '[r["algorithm"] for r in j["runs"]]==["swing/B","swing/L","rd/B","rd/L","ring","bidir-ring","bucket"] and all(r["ran"] and r["verified"] and r["data_ok"] for r in j["runs"])' \
	$RUN "$TMP/torus.yaml" --collective allreduce --algo swing-all --size 64KiB
expect_json '(lambda r: r["algorithm"]=="recursive" and r["ran"] and r["verified"] and r["data_ok"] and r["checked_elements"]==16*65536 and r["bad_elements"]==0)(j["runs"][0])' \
	$RUN "$TMP/torus.yaml" --collective allgather --algo recursive --size 256KiB
# --steps: a measured and a modelled time for every step; the steps add up
# to the run's time.
expect_json '(lambda r: len(r["steps_detail"])==r["steps"] and all(d["measured_s"]>0 and d["predicted_s"]>0 for d in r["steps_detail"]) and abs(sum(d["measured_s"] for d in r["steps_detail"])-r["measured_s"])<=0.01*r["measured_s"])(j["runs"][0])' \
	$RUN "$TMP/torus.yaml" --collective reduce-scatter --algo bfb --size 256KiB --steps
# MPICH's allreduce beside ofc's on the same hosts: every element right,
# and at least the bytes any allreduce must move (2 (N-1) M in all) crossed
# the circuits, so it did not take a shortcut through shared memory; the
# device that held each host's address for UCX is gone afterwards.
expect_json '(lambda r: r["algorithm"]=="mpi (MPICH)" and r["ran"] and r["data_ok"] and r["checked_elements"]==16*65536 and r["circuit_bytes"]>=2*15*262144 and "predicted_s" not in r)(j["runs"][1])' \
	$RUN "$TMP/torus.yaml" --collective allreduce --algo bfb --size 256KiB --mpi
[ "$(ip -n "ofc-$NAME-h0" -o link show 2>/dev/null | grep -c ofchost)" -eq 0 ] && ok ||
	bad "the MPI run left its address device behind"
expect_exit 1 env OFC_MPI_RANK=/nonexistent $RUN "$TMP/torus.yaml" --collective alltoall --algo mcf --size 64KiB --mpi
grep -q "needs ofc-mpi-rank" "$TMP/out" && ok || bad "missing MPI rank binary: no clear error" "$(head -c 600 "$TMP/out")"
# MCF all-to-all (time-stepped lowering): relays through other hosts.
expect_json '(lambda r: r["algorithm"]=="mcf" and r["data_ok"] and r["checked_elements"]==16*15*4096 and r["payload_bytes"]>16*15*16384)(j["runs"][0])' \
	$RUN "$TMP/torus.yaml" --collective alltoall --size 256KiB
# One transfer dropped: the run completes and the data check finds the hole.
expect_exit 1 $RUN "$TMP/torus.yaml" --collective allreduce --size 256KiB --drop-transfer 7
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; sys.exit(0 if r['ran'] and not r['data_ok'] and r['bad_elements']>0 and not r['verified'] else 1)" "$TMP/out" &&
	ok || bad "a dropped transfer must fail the data check" "$(head -c 600 "$TMP/out")"
expect_exit 1 $RUN "$TMP/torus.yaml" --collective alltoall --size 64KiB --drop-transfer 100
grep -q '"data_ok": false' "$TMP/out" && ok || bad "all-to-all with a dropped transfer: data check" "$(head -c 600 "$TMP/out")"
# A schedule exported as protobuf runs from the file.
expect_exit 0 $OFC schedule "$TMP/torus.yaml" --collective allgather --algo bfb --chunks 2 \
	--size 64KiB --format pb -o "$TMP/ag.pb"
expect_json '(lambda r: r["algorithm"]=="bfb (file)" and r["verified"] and r["data_ok"])(j["runs"][0])' \
	$RUN "$TMP/torus.yaml" --collective allgather --schedule "$TMP/ag.pb" --size 64KiB
# A schedule for the survivors of a failed host is refused by name.
expect_exit 0 $OFC schedule "$TMP/torus.yaml" --collective allgather --algo bfb --fail 5 \
	--size 64KiB --format pb -o "$TMP/failed.pb"
expect_exit 1 $RUN "$TMP/torus.yaml" --collective allgather --schedule "$TMP/failed.pb" --size 64KiB
grep -q "a schedule for the survivors of 1 failed host (node 5): the testbed runs whole fabrics" "$TMP/out" &&
	ok || bad "a survivors' schedule from a file" "$(head -c 600 "$TMP/out")"
expect_error 2 "ofc testbed: run: --schedule and --algo exclude each other" \
	$RUN "$TMP/torus.yaml" --collective allgather --schedule "$TMP/ag.pb" --algo bfb
# The same schedule with 10 M empty steps after it (2 bytes each, 20 MB):
# counted and priced before it is built (4 bytes a step, 8 more with
# --steps for the times), refused over --max-memory with the estimate
# (52 M of them took 4.6 GB, and past the limit decoding said
# the file was no schedule); within the limit it runs, the hosts passing
# the empty steps at no cost.
python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d + b'\x32\x00' * 10000000)" \
	"$TMP/ag.pb" "$TMP/empty.pb"
expect_exit 1 $RUN "$TMP/torus.yaml" --collective allgather --schedule "$TMP/empty.pb" --size 64KiB \
	--steps --max-memory 96MiB
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs'][0]; e=r['error']; sys.exit(0 if not r['ran'] and e.startswith(sys.argv[2] + ': 10000004 steps and ') and ' transfers on 16 hosts: reading, checking and running them at 64 KiB per host needs about ' in e and e.endswith(', over the memory limit of 96 MiB (--max-memory)') else 1)" \
	"$TMP/out" "$TMP/empty.pb" && ok || bad "10 M empty steps over --max-memory" "$(head -c 600 "$TMP/out")"
# (Not under the sanitizers, whose shadow and quarantine alone fill 96 MiB.)
[ -n "$SAN" ] ||
	expect_json '(lambda r: r["algorithm"]=="bfb (file)" and r["ran"] and r["data_ok"] and r["steps"]==10000004)(j["runs"][0])' \
		$RUN "$TMP/torus.yaml" --collective allgather --schedule "$TMP/empty.pb" --size 64KiB --max-memory 96MiB

# A job's plan on the testbed: a tp all-gather in groups of 4
# (the groups together, as a demand matrix) and an allreduce over every
# host; each way runs, its circuits applied before a phase whose topology
# is not up, every phase's data checked; the config's own topology is up
# again after (a torus schedule runs).
cat >"$TMP/wl.yaml" <<'YAML'
name: small
parallelism: {tp: 4, dp: 4}
phases:
  - {name: ag, collective: allgather, group: tp, size: 256KiB}
  - {name: ar, collective: allreduce, size: 1MiB}
YAML
# Before the ways run, the switching's overhead beyond the switches' own
# time is measured (a transaction to each topology the ways use and back)
# and priced in: each way's prediction is its prediction with the
# switches' time alone plus that overhead for every switching it makes.
cat >"$TMP/ovh.py" <<'PY'
def check(j):
    o = j["switch_overhead"]
    assert o["measured"] and len(o["transactions"]) >= 2, o
    assert all(t["changes"] > 0 and t["measured_s"] > t["switches_s"] for t in o["transactions"]), o
    assert o["change_s"] > 0 or o["transaction_s"] > 0, o
    for w in j["ways"]:
        sw = [p for p in w["phases"] if p["switch_measured_s"] > 0]
        # a way that switches pays more than the switches' time alone
        assert (w["iteration_predicted_s"] > w["iteration_predicted_switches_alone_s"]) == bool(sw), w
    ranked = j["ranking_predicted"].replace(" = ", " < ").split(" < ")
    return sorted(ranked) == sorted(w["way"] for w in j["ways"])
PY
PYTHONPATH="$TMP"
export PYTHONPATH
expect_json '[w["way"] for w in j["ways"]]==["static","per-phase","chosen"] and all(w["ran"] and w["iteration_predicted_s"]>0 and all(p["data_ok"] and p["measured_s"]>0 and p["predicted_s"]>0 for p in w["phases"]) for w in j["ways"]) and __import__("ovh").check(j)' \
	$RUN "$TMP/torus.yaml" --workload "$TMP/wl.yaml" --iterations 1 --device "$DEV"
# Every switching was committed, the config's own topology last: no
# transaction is left open (each was a trial, rolled back by the next one's
# recovery, which doubled every measured switching).
[ ! -e "$ST/$NAME.journal" ] && ok || bad "testbed run --workload left a transaction open" "$(ls "$ST")"
# Given, it is not measured: no transactions, the figures as given.
expect_json 'j["switch_overhead"]=={"measured": False, "transaction_s": 0.05, "change_s": 0.04, "transactions": []}' \
	$RUN "$TMP/torus.yaml" --workload "$TMP/wl.yaml" --iterations 1 --device "$DEV" --way static --switch-overhead 50ms,40ms
# The text is the answer's: the same run's predictions (the overhead
# given, so they are the model's alone) printed from the same message.
cp "$TMP/out" "$TMP/wl.json"
expect_exit 0 $OFC testbed run --state-dir "$ST" "$TMP/torus.yaml" --workload "$TMP/wl.yaml" \
	--iterations 1 --device "$DEV" --way static --switch-overhead 50ms,40ms
python3 - "$TMP/wl.json" "$TMP/out" <<'PY' && ok || bad "workload run: its text is not its answer's" "$(head -c 1500 "$TMP/out")"
import json, sys
j = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read().split("\n")
want = ["testbed %s: workload small, 1 iteration, links 20 Mb/s, alpha %.0f us" % (j["fabric"], j["alpha_s"] * 1e6),
        "switching overhead (given): 0.0500 s a transaction + 0.0400 s a changed circuit, beyond the switches' own time"]
for w in j["ways"]:
    want.append("%-10s iteration predicted %.4f s (%.4f s with the switches' time alone), measured "
                % (w["way"], w["iteration_predicted_s"], w["iteration_predicted_switches_alone_s"]))
    want += ["  %-12s %-36.36s predicted %.4f s measured " % (p["phase"], p["topology"], p["predicted_s"]) for p in w["phases"]]
want.append("ranking predicted: %s; measured: " % j["ranking_predicted"])
assert len(t) == len(want) + 1 and t[-1] == "", t
sys.exit(0 if all(l.startswith(p) for l, p in zip(t, want)) and all(l.endswith("  data ok") for l in t if l.startswith("  ")) else 1)
PY
expect_error 2 "ofc testbed: bad --switch-overhead '50ms': expected T,C (a transaction's time and a changed circuit's, as 50ms,40ms)" \
	$RUN "$TMP/torus.yaml" --workload "$TMP/wl.yaml" --switch-overhead 50ms
expect_json '(lambda r: r["data_ok"])(j["runs"][0])' $RUN "$TMP/torus.yaml" --collective allreduce --size 64KiB
expect_error 2 "ofc testbed: run: --workload runs a job's phases: not with --collective, --schedule, --algo, --mpi or --topology" \
	$RUN "$TMP/torus.yaml" --workload "$TMP/wl.yaml" --collective allreduce
expect_error 2 "ofc testbed: run: --iterations, --way and --switch-overhead go with --workload" \
	$RUN "$TMP/torus.yaml" --collective allreduce --iterations 2

# Reconfigure the fabric with the testbed up, then run on the new circuits.
# (after the workload runs' committed switchings: its number is theirs + 1)
expect_stdout_has "committed transaction " $OFC apply "$TMP/circulant.yaml" --device "$DEV" --state-dir "$ST"
# The torus file's run follows the commit: scheduled for circulant, the
# topology the record says the circuits realise.
expect_json 'j["topology"]=="circulant:16:3,4" and j["topology_from"]=="committed, as the record says" and j["runs"][0]["data_ok"]' \
	$RUN "$TMP/torus.yaml" --collective allreduce --size 64KiB
# A torus schedule from a file no longer fits the circuits: refused before
# any data moves.
expect_exit 1 $RUN "$TMP/torus.yaml" --collective allgather --schedule "$TMP/ag.pb" --size 64KiB
grep -q "reaches another host" "$TMP/out" && ok || bad "torus schedule on circulant circuits" "$(head -c 600 "$TMP/out")"
expect_json '(lambda r: r["data_ok"] and r["checked_elements"]==16*65536)(j["runs"][0])' \
	$RUN "$TMP/circulant.yaml" --collective allreduce --algo bfb --size 256KiB
expect_json '(lambda r: r["data_ok"])(j["runs"][0])' \
	$RUN "$TMP/circulant.yaml" --collective alltoall --size 256KiB

expect_stdout_has "testbed $NAME down: 16 namespaces removed" \
	$OFC testbed down "$TMP/torus.yaml" --state-dir "$ST"
[ "$(ls /run/netns 2>/dev/null | grep -c "^ofc-$NAME-")" -eq 0 ] && ok || bad "namespaces left behind"

finish
