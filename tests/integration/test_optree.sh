#!/bin/sh
# ofc optree and ofc schedule on WDM rings: the paper's numbers, verified
# schedules, exports, the overlap report, and bad input.
SUITE=optree
. "$(dirname "$0")/lib.sh"

# The worked example (N = 16, W = 2): two-stage 4-ary tree, 4 + 8 steps.
expect_json 'j["algorithm"]=="optree" and j["nodes"]==16 and j["wavelengths"]==2 and j["radices"]==[4,4] and j["stage_steps"]==[4,8] and j["num_steps"]==12 and j["analytic_depth"]==2 and abs(j["analytic_steps"]-12)<1e-9 and j["max_wavelengths_used"]==2 and j["lower_bound_steps"]==12 and j["verified"] is True' $OFC optree --nodes 16 --wavelengths 2 --json
# The baselines on the same ring, as one array.
expect_json '[x["algorithm"] for x in j]==["ring","ne","onestage","wrht","optree"] and [x["num_steps"] for x in j]==[15,8,16,27,12] and all(x["verified"] for x in j) and all(x["max_wavelengths_used"]<=2 for x in j)' $OFC optree --nodes 16 --wavelengths 2 --algo all --json
expect_stdout_has 'optree     2        12' $OFC optree --nodes 16 --wavelengths 2 --algo all
expect_stdout_has 'realised plan         radices 4x4 (2 stages, even groups)' $OFC optree --nodes 16 --wavelengths 2
expect_stdout_has 'predicted time        T = 12 x 838.861 us + 2 x 25 us retune + 2 x 10 ns O/E/O = 10116.35 us' $OFC optree --nodes 16 --wavelengths 2

# N = 1024, W = 64: ring 1023, neighbor exchange 512, OpTree within 5 % of about 70.
expect_json '[x["num_steps"] for x in j][:2]==[1023,512] and j[4]["num_steps"]<=73 and abs(j[4]["analytic_steps"]-70)<0.5 and j[4]["num_steps"]<=1.05*j[4]["analytic_steps"] and j[3]["algorithm"]=="wrht" and j[4]["num_steps"]<j[3]["num_steps"]<=259 and all(x["verified"] for x in j)' $OFC optree --nodes 1024 --wavelengths 64 --algo all --json
# Theorem 2 depths.
expect_json 'j["analytic_depth"]==6 and j["verified"]' $OFC optree --nodes 512 --wavelengths 64 --json
expect_json 'j["analytic_depth"]==7 and j["verified"]' $OFC optree --nodes 2048 --wavelengths 64 --json
# Uneven groups when N has no good factors (37 is prime).
expect_json 'j["uneven"] is True and j["verified"] and j["num_steps"]>=j["lower_bound_steps"]' $OFC optree --nodes 37 --wavelengths 4 --json

# Per-node add/drop limits: a step that breaks them is split, and it says so.
expect_json 'j["split_steps"]>0 and j["num_steps"]==sum(j["stage_steps"]) and j["max_add"]==3 and j["verified"]' $OFC optree --nodes 16 --wavelengths 8 --algo onestage --interfaces 1 --mrrs 3 --json
expect_stdout_has 'steps split to respect it' $OFC optree --nodes 16 --wavelengths 8 --algo onestage --interfaces 1 --mrrs 3

# --overlap: stage 1 ends on 2 of 3 channels, stage 2 starts on the third.
expect_json 'j["overlap"] is True and j["hidden_stage_retunes"]==1 and abs(j["overlap_saved_us"]-25)<1e-6 and abs(j["time_plain_us"]-j["time_us"]-25)<1e-6' $OFC optree --nodes 16 --wavelengths 3 --radices 4,4 --overlap --json
expect_stdout_has 'with --overlap        7574.77 us: 1 of 2 stage retunes hidden, 25.00 us saved' $OFC optree --nodes 16 --wavelengths 3 --radices 4,4 --overlap

# The same ring from a config.
expect_json 'j["ring"]=="ring0" and j["radices"]==[4,4] and j["num_steps"]==12 and j["verified"]' $OFC schedule configs/ring16-optree.yaml --collective allgather --algo optree --json
expect_json 'len(j)==5 and j[1]["num_steps"]==8' $OFC schedule configs/ring16-optree.yaml --collective allgather --algo all --json
# --algo all is certified by the fluid engine: LP 4.2 on the ring (2 x 40
# Gb/s per segment and direction) bounds an allgather of 15 x 4 MiB blocks
# through two in-arcs at 15 x 4194304 B / 20 GB/s; every algorithm is above.
expect_json 'all(abs(x["fluid_bound_us"]-15*4194304/20e9*1e6)<1e-6 and not x["below_fluid_bound"] and x["time_us"]>=x["fluid_bound_us"] for x in j)' $OFC schedule configs/ring16-optree.yaml --collective allgather --algo all --json
expect_stdout_has 'fluid bound 3145.73 us' $OFC schedule configs/ring16-optree.yaml --collective allgather --algo all

# --sweep: every algorithm over a grid, each schedule verified once; --plot
# draws time against size per algorithm, one panel per ring.
expect_exit 0 $OFC optree --sweep nodes=16,32 wavelengths=2,4 size=1MiB..4MiB --plot "$TMP/sweep.svg"
$OFC optree --sweep nodes=16,32 wavelengths=2,4 size=1MiB..4MiB >"$TMP/sweep.txt"
if [ "$(grep -c '^16 \|^32 ' "$TMP/sweep.txt")" -eq 12 ] && grep -q '^  N = 16, W = 2: ring 15 ne 8 onestage 16 wrht 27 optree 12$' "$TMP/sweep.txt" &&
	! grep -q 'NOT verified' "$TMP/sweep.txt"; then ok; else bad "sweep table" "$(head -5 "$TMP/sweep.txt")"; fi
if python3 - "$TMP/sweep.svg" <<'PY'; then ok; else bad "sweep SVG"; fi
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
lines = d.getElementsByTagName("polyline")
assert len(lines) == 4 * 5, len(lines)
for l in lines:
    assert len(l.getAttribute("points").split()) == 3
texts = [t.firstChild.data for t in d.getElementsByTagName("text") if t.firstChild]
assert "allgather, N = 32, W = 4" in texts and "wrht" in texts and "optree" in texts
PY
expect_error 2 "ofc optree: unknown --sweep key in 'nodez=4' (nodes, wavelengths, size)" $OFC optree --sweep nodez=4
expect_error 2 "ofc optree: --plot goes with --sweep" $OFC optree --nodes 16 --wavelengths 2 --plot "$TMP/x.svg"

# Exports: the shared JSON shape, protobuf, text.
expect_exit 0 $OFC optree --nodes 16 --wavelengths 2 --format json -o "$TMP/s.json"
if python3 - "$TMP/s.json" <<'PY'; then ok; else bad "JSON export has the wrong shape"; fi
import json, sys
j = json.load(open(sys.argv[1]))
assert j["collective"] == "allgather" and j["algorithm"] == "optree" and j["nodes"] == 16
assert len(j["steps"]) == 12 and j["verified"] is True
keys = {"src", "dst", "origin", "offset", "length", "direction", "fibre", "wavelength"}
n = 0
for s in j["steps"]:
    for t in s["transfers"]:
        assert keys <= set(t) and t["direction"] in ("cw", "ccw") and t["wavelength"] < 2
        n += 1
assert n == 16 * 15
PY
expect_exit 0 $OFC schedule configs/ring16-optree.yaml --collective allgather --format pb -o "$TMP/s.pb"
if protoc --decode=ofc.v1.Schedule proto/schedule.proto <"$TMP/s.pb" >"$TMP/s.txt" &&
	[ "$(grep -c '^steps {' "$TMP/s.txt")" -eq 12 ] && [ "$(grep -c 'wavelength:' "$TMP/s.txt")" -eq 240 ] &&
	grep -q '^verified: true$' "$TMP/s.txt"; then ok; else bad "schedule pb does not decode to 12 steps of 240 lightpaths"; fi
expect_exit 0 $OFC optree --nodes 16 --wavelengths 2 --format text -o "$TMP/s.txt"
if grep -q "^allgather schedule 'optree' on 16 nodes: 12 steps, 240 transfers$" "$TMP/s.txt" &&
	grep -q '  0 -> 4  block 0  cw fibre 0 wavelength 0' "$TMP/s.txt"; then ok; else bad "text export"; fi

# Bad input: exit 2 with the reason.
expect_error 2 "ofc optree: missing --wavelengths" $OFC optree --nodes 16
expect_error 2 "ofc optree: bad --nodes '1': must be 2..65535 (node ids are 16 bits)" $OFC optree --nodes 1 --wavelengths 2
expect_error 2 "ofc optree: bad --nodes '70000': must be 2..65535 (node ids are 16 bits)" $OFC optree --nodes 70000 --wavelengths 2
# Symmetry-reduced: above 8,192 nodes by itself, with a note;
# at any size with --reduced; only OpTree's all-gather on an even plan.
expect_json 'j["num_steps"]==1664 and j["num_transfers"]==16384*16383 and j["reduced"]["program_transfers"]==344064 and j["reduced"]["stage_periods"]==[16384,4096,1024,256,64,16,4] and j["verified"]' $OFC optree --nodes 16384 --wavelengths 64 --json
expect_json 'j["num_steps"]==72 and j["num_transfers"]==1047552 and j["reduced"]["program_transfers"]==15360 and j["verified"]' $OFC optree --nodes 1024 --wavelengths 64 --reduced --json
expect_json 'j["num_steps"]==12 and j["num_transfers"]==240 and j["reduced"]["stage_periods"]==[16,4] and j["verified"]' $OFC schedule configs/ring16-optree.yaml --collective allgather --reduced --json
expect_error 2 "ofc schedule: --reduced on a WDM ring: OpTree's all-gather alone (--algo optree, no --overlap)" $OFC schedule configs/ring16-optree.yaml --collective allreduce --reduced
expect_error 2 "ofc optree: a reduced schedule needs even groups (radices whose product is the 1024 nodes)" $OFC optree --nodes 1024 --wavelengths 64 --reduced --radices 3,3,3,3,3,3,3
expect_error 2 "ofc optree: --reduced on a WDM ring: OpTree's all-gather alone (--algo optree, no --overlap)" $OFC optree --nodes 64 --wavelengths 2 --reduced --algo ring
expect_error 1 "ofc optree: -o: a reduced ring schedule is not written (the program without its periods would read as the whole schedule)" $OFC optree --nodes 64 --wavelengths 2 --reduced -o "$TMP/x"
expect_error 2 "ofc optree: unknown --algo 'tree' (ring, ne, onestage, wrht, optree, all)" $OFC optree --nodes 16 --wavelengths 2 --algo tree
expect_error 2 "ofc optree: neighbor exchange needs an even number of nodes (15)" $OFC optree --nodes 15 --wavelengths 2 --algo ne
expect_error 2 "ofc optree: the radices multiply to 8, fewer than the 16 nodes" $OFC optree --nodes 16 --wavelengths 2 --radices 2,4
expect_error 2 "ofc optree: stage 3 has nothing to do: the radices before it already reach single nodes" $OFC optree --nodes 16 --wavelengths 2 --radices 4,4,2
expect_error 2 "ofc optree: bad radices '4,,2': expected numbers like 4,4,2" $OFC optree --nodes 16 --wavelengths 2 --radices 4,,2
expect_error 2 "ofc optree: --radices applies to --algo optree" $OFC optree --nodes 16 --wavelengths 2 --radices 4,4 --algo ring
expect_error 2 "ofc optree: -o writes one schedule: pick one --algo" $OFC optree --nodes 16 --wavelengths 2 --algo all -o "$TMP/x"
expect_error 2 "ofc optree: bad --block-size '4XB': expected a size such as 4096, 64KiB, 4MB or 1GiB" $OFC optree --nodes 16 --wavelengths 2 --block-size 4XB
expect_error 2 "ofc optree: --format json needs -o OUT (-o - for stdout)" $OFC optree --nodes 16 --wavelengths 2 --format json
# Every collective on the ring: reduce-scatter is the all-gather reversed,
# allreduce both (verified with reduce semantics), all-to-all direct
# lightpaths through the RWA engines.
expect_json 'j["collective"]=="allreduce" and j["radices"]==[4,4] and j["num_steps"]==24 and j["stage_steps"]==[8,4,4,8] and j["lower_bound_steps"]==24 and j["verified"]' $OFC schedule configs/ring16-optree.yaml --collective allreduce --json
expect_json 'j["collective"]=="reduce-scatter" and j["num_steps"]==12 and j["verified"]' $OFC schedule configs/ring16-optree.yaml --collective reduce-scatter --json
expect_json '[x["num_steps"] for x in j]==[30,16,32,54,24] and all(x["verified"] for x in j)' $OFC schedule configs/ring16-optree.yaml --collective allreduce --algo all --json
expect_json 'j["collective"]=="alltoall" and j["num_steps"]==16 and j["verified"] and j["num_transfers"]==240' $OFC schedule configs/ring16-optree.yaml --collective alltoall --algo onestage --json
expect_json 'j["num_steps"]>=j["lower_bound_steps"] and j["verified"]' $OFC optree --nodes 24 --wavelengths 3 --fibres 2 --collective alltoall --algo onestage --json
expect_json 'j["collective"]=="allreduce" and j["verified"] and j["num_steps"]==2*sum(j["stage_steps"][:len(j["stage_steps"])//2])' $OFC optree --nodes 37 --wavelengths 4 --fibres 2 --collective allreduce --json
# The RWA engine that assigned the lightpaths, and its figures (--engine ilp
# that finds the heuristic optimal solves no model, and says so).
expect_json 'j["rwa"]=={**j["rwa"], "engine":"ilp", "colours":5, "lower_bound":5, "relaxation":4.5, "optimal":True, "ilp_solves":0} and j["num_steps"]==3' \
	$OFC optree --nodes 6 --wavelengths 2 --collective alltoall --algo onestage --engine ilp --json
expect_stdout_has '  lightpaths            engine ilp: shortest routes, circulant tiling' \
	$OFC optree --nodes 6 --wavelengths 2 --collective alltoall --algo onestage --engine ilp
grep -q '^                        5 colours (lower bound 5, LP relaxation 4.500): optimal; 0 ILP models, ' "$TMP/out" &&
	ok || bad "optree --engine ilp: no figures of the engine" "$(cat "$TMP/out")"
expect_stdout_has '  lightpaths            engine heuristic: ' $OFC optree --nodes 16 --wavelengths 8 --collective alltoall --algo onestage
expect_stdout_has 'OpTree allreduce on a WDM ring ring0' $OFC schedule configs/ring16-optree.yaml --collective allreduce
expect_error 2 "ofc schedule: all-to-all on a WDM ring is built as direct lightpaths (--algo onestage, through the RWA engines), not optree" $OFC schedule configs/ring16-optree.yaml --collective alltoall --algo optree
expect_error 2 "ofc schedule: --chunks, --alpha and --bandwidth apply to direct-connect topologies, not WDM rings" $OFC schedule configs/ring16-optree.yaml --collective allgather --chunks 4
expect_exit 0 $OFC optree --help
if [ ! -e "$TMP/x" ]; then ok; else bad "a refused run left an output file"; fi

finish
