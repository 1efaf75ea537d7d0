#!/bin/sh
# ofc finder: Table 4's frontier and pick, Table 5's best topologies, the
# config's topology: auto, bad input.
SUITE=finder
. "$(dirname "$0")/lib.sh"

F="$OFC finder --alpha 10us --bandwidth 100Gbps"

# Table 4 (N = 1024, d = 4, 1 MiB): the frontier holds genkautz (10, 2.664)
# and L^3(C(16,{3,4})) (12, 2.039), and the pick is the latter at 291.0 us;
# (16, 2.008) and (22, 2.000) are reached without the paper's Diamond and
# DBJMod graphs. Every frontier entry is non-dominated.
expect_json 'j["pick"]["spec"]=="line^3(circulant:16:3,4)" and round(j["pick"]["time_us"],1)==291.0 and round(j["lower_bound_us"],1)==267.6 and {(e["tau_l"],round(e["tau_b"],3)) for e in j["frontier"]} >= {(10,2.664),(12,2.039),(16,2.008),(22,2.0)} and all(not (a["tau_l"]<=b["tau_l"] and a["tau_b"]<=b["tau_b"]) for a in j["frontier"] for b in j["frontier"] if a is not b)' \
	$F --nodes 1024 --degree 4 --size 1MiB --json
# Table 5: for N = 5..12 at degree 4 the best topology for large data is
# BW-optimal with allreduce T_L 2 (N = 5) or 4.
for n in 5 6 7 8 9 10 11 12; do
	tl=4
	[ "$n" -eq 5 ] && tl=2
	expect_json "(lambda p: p['bw_optimal'] and p['tau_l']==$tl)(j['frontier'][j['pick']['index']])" \
		$F --nodes $n --degree 4 --size 1GiB --json
done
# The picks are real topologies: BFB on them gives the finder's figures.
spec=$($F --nodes 10 --degree 4 --size 1GiB --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pick"]["spec"])')
expect_json 'j["num_steps"]==4 and j["tau_b_fraction"]=="9/5" and j["verified"]' \
	$OFC schedule --topology "$spec" --collective allreduce --size 1GiB --json
# Small data favours fewer steps: the pick moves to the low-latency end.
expect_json 'j["pick"]["index"]==0' $F --nodes 1024 --degree 4 --size 1KiB --json
expect_stdout_has '*    12  261/128 = 2.0391' $F --nodes 1024 --degree 4

# topology: auto in a config: the finder's pick for its collectives.
cat >"$TMP/auto.yaml" <<'Y'
version: 1
name: auto64
hosts: {count: 64, prefix: h, ports: 4, port_rate: 25Gbps}
switches:
  - {name: ocs0, type: ocs, ports: 256}
wiring: {pattern: sequential, switches: [ocs0]}
topology: auto
collectives:
  - {op: allreduce, size: 4KiB}
cost_model: {alpha: 10us, link_bandwidth: 25Gbps}
Y
expect_stdout_has 'picked by the topology finder (topology: auto)' $OFC show "$TMP/auto.yaml"
small=$($OFC show "$TMP/auto.yaml" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["spec"])')
big=$(sed 's/size: 4KiB/size: 1GiB/' "$TMP/auto.yaml" >"$TMP/auto2.yaml" && $OFC show "$TMP/auto2.yaml" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["spec"])')
want_small=$($F --nodes 64 --degree 4 --size 4KiB --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pick"]["spec"])')
want_big=$($F --nodes 64 --degree 4 --size 1GiB --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pick"]["spec"])')
if [ "$small" = "$want_small" ] && [ "$big" = "$want_big" ] && [ "$small" != "$big" ]; then ok; else
	bad "topology: auto picks $small / $big, finder says $want_small / $want_big"; fi
expect_json 'j["verified"] and j["topology"]=="'"$small"'"' $OFC schedule "$TMP/auto.yaml" --collective allreduce --json
# With no rate in the config the defaults are the finder's too (10 us a
# step, 100 Gb/s a node): 64 x 4 with a 1 MiB allreduce picks the same
# topology, where 100 Gb/s a port would pick another.
sed -e 's/, port_rate: 25Gbps//' -e '/cost_model/d' -e 's/size: 4KiB/size: 1MiB/' "$TMP/auto.yaml" >"$TMP/auto4.yaml"
bare=$($OFC show "$TMP/auto4.yaml" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["spec"])')
want=$($OFC finder --nodes 64 --degree 4 --size 1MiB --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pick"]["spec"])')
port=$($OFC finder --nodes 64 --degree 4 --size 1MiB --bandwidth 400Gbps --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pick"]["spec"])')
if [ "$bare" = "$want" ] && [ "$bare" != "$port" ]; then ok; else
	bad "topology: auto with no rates picks $bare, ofc finder's defaults $want (400 Gb/s: $port)"; fi
sed '/collectives:/,$d' "$TMP/auto.yaml" >"$TMP/auto3.yaml"
expect_error 2 "$TMP/auto3.yaml:7:11: topology 'auto' needs a collective to choose for: add an allgather, reduce-scatter or allreduce under 'collectives'" $OFC validate "$TMP/auto3.yaml"

# Bad input.
expect_error 2 "ofc finder: missing --nodes" $OFC finder --degree 4
expect_error 2 "ofc finder: missing --degree" $OFC finder --nodes 16
expect_error 2 "ofc finder: --degree 8 needs more than 8 nodes" $OFC finder --nodes 8 --degree 8
expect_error 2 "ofc finder: bad --nodes '1': must be 2..65535 (node ids in a schedule are 16 bits)" $OFC finder --nodes 1 --degree 1
expect_error 2 "ofc finder: bad --degree '0': must be 1..64 (BFB's link masks are 64 bits)" $OFC finder --nodes 100 --degree 0
expect_error 2 "ofc finder: bad --size 'lots': expected a size such as 4096, 64KiB, 4MB or 1GiB" $OFC finder --nodes 100 --degree 4 --size lots
expect_error 2 "ofc finder: bad --collective 'broadcast': expected allreduce, allgather, reduce-scatter or alltoall" $OFC finder --nodes 100 --degree 4 --collective broadcast
expect_error 2 "ofc finder: --injection goes with --collective alltoall" $OFC finder --nodes 100 --degree 4 --injection 25Gbps
# All-to-all under NIC-limited hosts (the all-to-all paper's Fig.
# 13): N = 100, d = 4, 25 Gb/s links. Unlimited, genkautz:100,4 beats
# torus:10x10 (theta 0.012357 vs 1/125). With NIC forwarding a host injects
# only its own 99 shards, theta <= I / (99 links): at 15 Gb/s both are
# host-bound (theta 0.6/99) and the expander no longer wins; the tie is at
# 99/125 links = 19.8 Gb/s, the expander's full lead from 30.58 Gb/s (1.22
# links; the paper: roughly 1.3). With host forwarding relays cost the host
# too, theta = I / sum of distances, and the expander keeps its lead.
A="$OFC finder --collective alltoall --nodes 100 --degree 4 --bandwidth 100Gbps --json"
expect_json 'j["expander_beats_torus"] and abs(j["candidates"][0]["theta"]-0.008)<1e-7 and abs(j["candidates"][1]["theta"]-0.0123566)<1e-6 and j["candidates"][0]["spec"]=="torus:10x10"' $A
expect_json 'not j["expander_beats_torus"] and abs(j["candidates"][0]["theta"]-0.6/99)<1e-7 and abs(j["candidates"][1]["theta"]-0.6/99)<1e-7 and abs(j["nic_tie_injection_bps"]-19.8e9)<1e6 and abs(j["nic_full_injection_bps"]/25e9-1.2233)<1e-3' \
	$A --injection 15Gbps --forwarding nic
expect_json 'j["expander_beats_torus"] and abs(j["candidates"][0]["theta"]-0.002)<1e-7 and j["gain"]>1.5' \
	$A --injection 25Gbps --forwarding host
expect_exit 0 $OFC finder --help

# --json is the message (proto/finder.proto): every key a field of it, in
# the message's field order, both shapes.
$OFC finder --nodes 64 --degree 4 --json >"$TMP/fa.json" &&
	$OFC finder --collective alltoall --nodes 30 --degree 4 --injection 15Gbps --forwarding nic --json >"$TMP/fb.json" &&
	PY=python3 && { python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3; } &&
	PYTHONPATH="$BUILD/python" $PY - "$TMP/fa.json" "$TMP/fb.json" >"$TMP/fpb.out" 2>&1 <<'PY' && ok || bad "ofc finder --json is not its message" "$(head -c 600 "$TMP/fpb.out")"
import json, sys
from google.protobuf import json_format
from ofc_client.pb import finder_pb2
def order(obj, desc):
    names = [f.name for f in desc.fields]
    keys = list(obj)
    assert keys == sorted(keys, key=names.index), (keys, names)
    for k, v in obj.items():
        f = desc.fields_by_name[k]
        for x in v if isinstance(v, list) else [v]:
            if f.message_type is not None:
                order(x, f.message_type)
for path, msg in zip(sys.argv[1:], (finder_pb2.FinderAnswer, finder_pb2.FinderAlltoallAnswer)):
    text = open(path).read()
    json_format.Parse(text, msg(), ignore_unknown_fields=False)
    order(json.loads(text), msg.DESCRIPTOR)
PY

finish
