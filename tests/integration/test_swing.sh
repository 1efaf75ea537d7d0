#!/bin/sh
# ofc schedule --algo swing and its torus baselines: congestion deficiency,
# verified allreduce schedules, the comparison table, bad input.
SUITE=swing
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --size 1MiB --alpha 10us --bandwidth 100Gbps --collective allreduce"

expect_json 'j["algorithm"]=="swing" and j["collective"]=="allreduce" and j["nodes"]==64 and j["num_steps"]==12 and j["verified"] and abs(j["congestion_deficiency"]-1.078125)<1e-9 and j["time_us"]>0 and j["variant"]=="bandwidth"' \
	$S --topology torus:8x8 --algo swing --json
expect_json 'j["variant"]=="latency" and j["num_steps"]==6 and j["verified"]' $S --size 64B --topology torus:8x8 --algo swing --json
expect_json 'j["verified"] and j["num_steps"]==10' $S --topology torus:6x4 --algo swing --variant bandwidth --json
expect_json 'j["verified"] and abs(j["congestion_deficiency"]-1.21875)<1e-9' $S --topology torus:8x8 --algo recursive-doubling --variant bandwidth --json
expect_json '[c["algorithm"] for c in j["comparison"]]==["swing/B","swing/L","rd/B","rd/L","ring","bidir-ring","bucket"] and all(c["verified"] for c in j["comparison"]) and all("congestion_deficiency" in c for c in j["comparison"]) and j["comparison"][0]["congestion_deficiency"]<j["comparison"][2]["congestion_deficiency"]' \
	$S --topology torus:8x8 --algo swing-all --json
# Hop latency adds to the time (notes 4.3).
a=$($S --topology torus:8x8 --algo swing --variant bandwidth --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_us"])')
expect_json "abs(j['time_us']-$a-j['hops']*0.4)<1e-6" $S --topology torus:8x8 --algo swing --variant bandwidth --hop-latency 400ns --json
# Latency-optimal at 65,536 nodes, by symmetry: the whole vector every step,
# 4 representatives x 16 steps x 4 collectives spans of all 65,536 blocks
# in the program, every block of them in the whole schedule's count (auto:
# priced from its figures, then built since at 8 B it wins); over
# --max-memory refused before it is built, with the estimate (the check
# takes the spans by their sums: every piece so, no plane of slots).
expect_json 'j["verified"] and j["variant"]=="latency" and j["nodes"]==65536 and j["num_steps"]==16 and j["tau_b"]==340 and j["reduced"]["representatives"]==4 and j["reduced"]["program_transfers"]==4*16*4 and j["num_transfers"]==4*16*4*65536*16384' \
	$S --size 8B --topology torus:256x256 --algo swing --json
expect_exit 1 $S --topology torus:256x256 --algo swing --variant latency --max-memory 1MiB
grep -q "^ofc schedule: swing: reduced latency-optimal swing on 65536 nodes needs about [0-9.]* MiB (256 program transfers, 4 representatives' spans checked by their sums), over the memory limit of 1 MiB (ofc --max-memory, ofcd --max-request-memory)$" "$TMP/err" &&
	ok || bad "latency-optimal over --max-memory" "$(head -c 400 "$TMP/err")"

expect_error 2 "ofc schedule: swing: swing needs even torus dimensions (5 is odd)" $S --topology torus:5x4 --algo swing
expect_error 2 "ofc schedule: swing: swing needs a torus:AxB... topology" $S --topology hypercube:3 --algo swing
expect_error 2 "ofc schedule: bad --variant 'fast': auto, bandwidth or latency" $S --topology torus:4x4 --algo swing --variant fast
expect_error 2 "ofc schedule: --variant goes with --algo swing or recursive-doubling" $S --topology torus:4x4 --algo bfb --variant latency

finish
