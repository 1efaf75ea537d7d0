#!/bin/sh
# ofc plan $B --horizon against build/ocs-emu driven as a patch panel: the
# target is chosen by switching time + horizon x predicted collective time,
# the choice flips when the move time grows, and --max-moves is never
# exceeded.
SUITE=choose
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
mkdir -p "$ST"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
# patch OUT TOPOLOGY MOVE_TIME: configs/torus64-ocs.yaml as a patch panel
# of that move time, one allreduce of 1 MiB (latency counts) and the
# all-to-all of 16 MiB (priced too: every candidate through the
# schedule pipeline).
patch() {
	sed -e "s|^topology: .*|topology: $2|" -e "s|credentials: .*|credentials: ocs0.cred|" \
		-e "s|type: ocs|type: patch-panel|" -e "s|type: tl1|type: patch-panel|" \
		-e "s|reconfig_time: .*|move_time: $3|" -e "s|size: 64MiB|size: 1MiB|" \
		configs/torus64-ocs.yaml >"$1"
}
patch "$TMP/ring.yaml" circulant:64:1,2 1ms
patch "$TMP/fast.yaml" torus:8x8 1ms
patch "$TMP/slow.yaml" torus:8x8 60s

# The predicted times must be what `ofc schedule` says for the same
# topology and collectives (BFB and the MCF, verified there), summed.
sched_us() {
	for c in allreduce alltoall; do
		$OFC schedule "$1" --collective $c --json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["verified"]; print(j["time_us"])'
	done | python3 -c 'import sys; print(sum(float(l) for l in sys.stdin))'
}
RING_US=$(sched_us "$TMP/ring.yaml")
TORUS_US=$(sched_us "$TMP/fast.yaml")
python3 -c "import sys; sys.exit(0 if $TORUS_US < $RING_US else 1)" && ok ||
	bad "torus:8x8 should predict faster than circulant:64:1,2 ($TORUS_US vs $RING_US us)"

# An empty switch: nothing in place is a topology, so a limit no target
# fits is refused and nothing is planned.
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --log "$TMP/e.log"
D="--device ocs0=127.0.0.1:$e_port --state-dir $ST"
B="--relabel-budget 0.3"
expect_exit 1 $OFC plan "$TMP/fast.yaml" $D $B --horizon 1000 --alternatives 0 --max-moves 10
grep -q "^ofc: no target within --max-moves 10 (moves: torus:8x8 (requested) 256; not kept as is: the switches hold no circuit between hosts); nothing was changed$" "$TMP/err" &&
	ok || bad "--max-moves with no candidate within it" "$(cat "$TMP/err")"
expect_exit 0 $OFC apply "$TMP/ring.yaml" $D

# check_choice FILE: the JSON's arithmetic, independently: reconfiguration
# = moves x the move time, total = that + horizon x collective time, the
# chosen one the least total among those within --max-moves, the plan its
# moves, and the in-place and requested candidates priced as `ofc schedule`
# prices their topologies.
# docs/relabel.md's example as it shows it (the finder's alternatives weighed
# too): the circulant in place is kept, and the table and the choice read so.
expect_stdout_has "chose keep circulant:64:1,2 in place: 0 moves (0 s) + 1e+06 x " \
	$OFC plan "$TMP/slow.yaml" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --horizon 1e6 --relabel-budget 0.3
grep -q "^targets weighed over 1e+06 runs of allreduce 1 MiB, alltoall 16 MiB:$" "$TMP/out" &&
	grep -q "^  \* keep circulant:64:1,2 in place  *0  *0 s  *4.1 ms  *68.3 min$" "$TMP/out" &&
	grep -q "^    genkautz:64,4 renumbered (the finder's) " "$TMP/out" && ok ||
	bad "docs/relabel.md's plan --horizon example" "$(cat "$TMP/out")"

check_choice() { # MOVE_TIME_S MAX_MOVES(or -) CMD...
	mt=$1
	mm=$2
	shift 2
	expect_json "__import__('choose_check').check(j, $mt, '$mm', $RING_US, $TORUS_US)" "$@"
}
PYTHONPATH="$TMP"
export PYTHONPATH
cat >"$TMP/choose_check.py" <<'PY'
def check(j, mt, mm, ring_us, torus_us):
    ch = j["device_plan"]["choice"]
    c = ch["candidates"]
    for k in c:
        assert abs(k["reconfig_seconds"] - k["moves"] * mt) < 1e-9 * max(1, k["moves"] * mt), k
        assert abs(k["total_seconds"] - (k["reconfig_seconds"] + ch["horizon"] * k["collective_us"] * 1e-6)) < 1e-6 * k["total_seconds"], k
        assert k["fits"] == (mm == "-" or k["moves"] <= int(mm)), k
    fit = [k for k in c if k["fits"]]
    best = c[ch["chosen"]]
    assert best["fits"] and all(best["total_seconds"] <= k["total_seconds"] for k in fit)
    assert j["operations"] == best["moves"], (j["operations"], best)
    assert mm == "-" or j["operations"] <= int(mm)
    req = [k for k in c if k["kind"] == "requested"][0]
    assert req["topology"] == "torus:8x8" and abs(req["collective_us"] - torus_us) < 1e-6 * torus_us
    keep = [k for k in c if k["kind"] == "keep"][0]
    assert keep["topology"] == "circulant:64:1,2" and keep["moves"] == 0
    assert abs(keep["collective_us"] - ring_us) < 1e-6 * ring_us, (keep, ring_us)
    assert not ch["not_priced"] and "alltoall" in ch["priced"] and "allreduce" in ch["priced"]
    assert not [k for k in c if k["kind"] == "alternative" and k["topology"] in (keep["topology"], req["topology"])]
    return True
PY

# A million runs: at 1 ms a move the torus repays its moves; at 60 s a
# move it does not, and the circuits in place stay.
check_choice 0.001 - $OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --alternatives 0 --json
expect_json 'j["device_plan"]["choice"]["candidates"][j["device_plan"]["choice"]["chosen"]]["kind"] == "requested" and j["operations"] > 100' \
	$OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --alternatives 0 --json
check_choice 60 - $OFC plan "$TMP/slow.yaml" $D $B --horizon 1e6 --alternatives 0 --json
expect_json 'j["device_plan"]["choice"]["candidates"][j["device_plan"]["choice"]["chosen"]]["kind"] == "keep" and j["operations"] == 0' \
	$OFC plan "$TMP/slow.yaml" $D $B --horizon 1e6 --alternatives 0 --json
# ... and at 60 s a move a long enough horizon repays them again.
expect_json 'j["device_plan"]["choice"]["candidates"][j["device_plan"]["choice"]["chosen"]]["kind"] == "requested"' \
	$OFC plan "$TMP/slow.yaml" $D $B --horizon 1e10 --alternatives 0 --json
# The text says what it chose and why, the table marks it.
expect_stdout_has "chose keep circulant:64:1,2 in place: 0 moves (0 s) + 1e+06 x" \
	$OFC plan "$TMP/slow.yaml" $D $B --horizon 1e6 --alternatives 0
grep -q "^  \* keep circulant:64:1,2 in place " "$TMP/out" && grep -q "^fabric torus64-ocs: 0 operations" "$TMP/out" &&
	ok || bad "the table should mark the kept topology" "$(cat "$TMP/out")"
# "renumbered" when a numbering keeps more cross-connects than the
# config's (the search is time-bounded), and never more moves than the
# config's numbering plans (396 against 288).
expect_exit 0 $OFC plan "$TMP/slow.yaml" $D $B --horizon 1e6 --alternatives 0
grep -Eq "; next best torus:8x8 (renumbered )?\(requested\): " "$TMP/out" && ok ||
	bad "the text should name the next best" "$(cat "$TMP/out")"
PLAIN=$($OFC plan "$TMP/slow.yaml" $D --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"])')
expect_json "[k for k in j['device_plan']['choice']['candidates'] if k['kind'] == 'requested'][0]['moves'] <= $PLAIN" \
	$OFC plan "$TMP/slow.yaml" $D $B --horizon 1e6 --alternatives 0 --json

# --max-moves: the torus is the best all told, but over the limit: the
# circuits in place are planned instead, never more than 10 moves.
check_choice 0.001 10 $OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --alternatives 0 --max-moves 10 --json
expect_json 'j["operations"] == 0 and not [k for k in j["device_plan"]["choice"]["candidates"] if k["kind"] == "requested"][0]["fits"]' \
	$OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --alternatives 0 --max-moves 10 --json
expect_stdout_has "; 1 over --max-moves 10" \
	$OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --alternatives 0 --max-moves 10

# The finder's topologies are weighed too, each renumbered onto the
# circuits in place; whatever wins, the arithmetic holds.
check_choice 0.001 - $OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --json
expect_json 'len([k for k in j["device_plan"]["choice"]["candidates"] if k["kind"] == "alternative" and k["renumbered"]]) == 3' \
	$OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --json
# ... chosen as `ofc finder` ranks them for the config's hosts, ports and
# cost model (4 ports at 100 Gb/s, 10 us; the allreduce, all-to-all aside):
# one use case picks a topology for a workload at every door.
RANK=$($OFC finder --nodes 64 --degree 4 --size 1MiB --alpha 10us --bandwidth 400Gbps --json |
	python3 -c 'import json,sys; f=json.load(sys.stdin)["frontier"]; print(" ".join(f[i]["spec"] for i in sorted(range(len(f)), key=lambda i: (f[i]["time_us"], i))))')
expect_json "[k['topology'] for k in j['device_plan']['choice']['candidates'] if k['kind'] == 'alternative'] == [s for s in '$RANK'.split() if s not in ('torus:8x8', 'circulant:64:1,2')][:3]" \
	$OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --json
check_choice 0.001 200 $OFC plan "$TMP/fast.yaml" $D $B --horizon 1e6 --max-moves 200 --json

# Nothing was applied by any of these plans.
expect_json 'j["operations"] == 0' $OFC plan "$TMP/ring.yaml" $D --json

# Usage.
expect_error 2 "ofc plan: bad --horizon 'x': expected how many times the collectives run (a number, 0 or more)" \
	$OFC plan "$TMP/fast.yaml" $D $B --horizon x
expect_exit 2 $OFC plan "$TMP/fast.yaml" $D --alternatives 2
expect_exit 2 $OFC plan "$TMP/fast.yaml" $D $B --horizon 10 --alternatives 17
expect_exit 2 $OFC plan "$TMP/fast.yaml" $D $B --horizon 10 --relabel --no-relabel
stop_emu "$e_pid"
finish
