#!/bin/sh
# ofc schedule --collective alltoall: theta by max concurrent flow, its three
# lowerings and the two baselines, every schedule verified; bad input.
SUITE=alltoall
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --size 1MiB --alpha 10us --bandwidth 100Gbps --collective alltoall"

# theta (unit links: the fluid MCF, which the weighted paths lower) and the
# Moore-tree bound d / L(N, d), verified schedules.
while read -r spec theta bound; do
	expect_json "j['algorithm']=='mcf' and j['collective']=='alltoall' and j['verified'] and abs(j['mcf']['theta']-$theta)<5e-7 and abs(j['theta_bound']-$bound)<5e-7 and j['nodes']>0 and j['num_steps']>0 and j['time_us']>0" \
		$S --topology "$spec" --lowering paths --json
done <<'EOF2'
torus:4x4 0.125 0.153846
torus:3x3x3 0.111111 0.130435
hypercube:3 0.25 0.272727
bipartite:4 0.4 0.4
genkautz:27,6 0.118182 0.130435
EOF2

# Time-stepped at the diameter: sum of per-step loads = 1/theta, so tau_B =
# (d/N)/theta exactly, and the schedule's theta is the MCF's.
expect_json 'j["num_steps"]==4 and abs(j["tau_b"]-2)<1e-6 and abs(j["tau_b_measured"]-2)<1e-6 and abs(sum(j["mcf"]["step_loads"])-8)<1e-6 and abs(j["theta"]-0.125)<1e-6' \
	$S --topology torus:4x4 --json
# Weighted paths keep theta with at most d paths per pair; cut-through time.
expect_json 'j["lowering"]=="paths" and j["max_paths_per_pair"]<=6 and abs(j["theta"]-j["mcf"]["theta"])<1e-6 and j["verified"]' \
	$S --topology genkautz:27,6 --lowering paths --json
expect_json 'j["lowering"]=="single" and j["max_paths_per_pair"]==1 and j["verified"] and j["theta"]<=j["mcf"]["theta"]+1e-9' \
	$S --topology torus:3x3x3 --lowering single --json
# Cut-through routes are priced by what the verifier finds on the busiest
# link over all steps, which is the routes' own load (explicit and reduced).
for a in "--lowering paths" "--lowering single" "--lowering paths --reduced" "--lowering single --reduced"; do
	expect_json 'j["verified"] and abs(j["tau_b_measured"]-j["tau_b"])<1e-9 and abs(j["max_link_load"]*j["degree"]/j["nodes"]-j["tau_b"])<1e-9' \
		$S --topology torus:8x8 $a --json
done
expect_json 'j["verified"] and abs(j["tau_b_measured"]-j["tau_b"])<1e-9' \
	$S --topology genkautz:64,4 --lowering paths --json
# Baselines and --algo all: the MCF's paths are never worse than direct exchange.
expect_json '[c["algorithm"] for c in j["comparison"]]==["mcf/steps","mcf/paths","mcf/single","direct","sp-balanced"] and all(c["verified"] for c in j["comparison"]) and j["comparison"][1]["theta"]>=j["comparison"][3]["theta"]-1e-9' \
	$S --topology genkautz:16,4 --algo all --json
expect_json 'j["algorithm"]=="direct" and j["verified"] and abs(j["theta"]-1/12)<1e-9' $S --topology torus:4x4 --algo direct --json
# One cost model, two ways of relaying: mcf/steps stores and forwards,
# the routed rows are priced cut-through and say what they take were their
# relays to store and forward. Where NICs forward, a cut-through row is
# one alpha against the cut-through bound; the default (mcf/steps) is the
# least store-and-forward time (docs/algorithms.md says why it is the
# default); the best row is the least time of all, a cut-through one.
# Where hosts forward (the default), each forward is an alpha: the
# cut-through rows take the store-and-forward bound and are no faster
# than mcf/steps by more than their bytes (mcf/paths: the same time).
expect_json '(c:=j["comparison"])[0]["model"]=="store-and-forward" and all(x["model"]=="cut-through" and x["lower_bound_us"]<c[0]["lower_bound_us"] and x["store_forward_us"]>x["time_us"] and x["store_forward_us"]>=c[0]["time_us"] for x in c[1:]) and [x["algorithm"] for x in c if x["best"]]==[min(c, key=lambda x: x["time_us"])["algorithm"]]' \
	$OFC schedule --topology torus:8x8 --collective alltoall --size 64KiB --algo all --forwarding nic --json
expect_json '(c:=j["comparison"])[0]["model"]=="store-and-forward" and all(x["model"]=="cut-through" and x["lower_bound_us"]==c[0]["lower_bound_us"] and x["store_forward_us"]>=x["time_us"] for x in c[1:]) and abs(c[1]["time_us"]-c[0]["time_us"])<1e-6' \
	$OFC schedule --topology torus:8x8 --collective alltoall --size 64KiB --algo all --json

# NIC-limited hosts: torus:4x4 (d = 4, links 25 Gb/s at B = 100
# Gb/s), the links alone give theta 1/8. Injection 50 Gb/s (2 links): host
# forwarding pays every relayed hop at the host, theta 1/16; NIC forwarding
# only its own 15 shards, so the links still bind (1/8). Injection 25 Gb/s:
# 1/32 against 1/15. The time-stepped MCF meets the host-forwarded value
# with its steps priced at the busier of link and host, every schedule is
# verified, and a config's hosts say the same as the flags.
while read -r inj fwd lowering theta; do
	expect_json "j['verified'] and abs(j['theta']-$theta)<1e-6 and abs(j['mcf']['theta']-$theta)<1e-6 and j['mcf']['optimal'] and j['host_forwarding']=='$fwd' and j['theta']<=j['theta_bound']+1e-9" \
		$S --topology torus:4x4 --injection "$inj" --forwarding "$fwd" --lowering "$lowering" --json
done <<'EOF2'
50Gbps host steps 0.0625
50Gbps host paths 0.0625
50Gbps nic paths 0.125
25Gbps host steps 0.03125
25Gbps nic paths 0.0666667
EOF2
expect_json 'j["verified"] and abs(j["theta"]-0.125)<1e-9 and "host_forwarding" not in j' \
	$S --topology torus:4x4 --injection 100Gbps --json
expect_json 'j["algorithm"]=="direct" and j["verified"] and abs(j["theta"]-1/32)<1e-9' \
	$S --topology torus:4x4 --algo direct --injection 25Gbps --json
# Refused, not ignored: NIC forwarding in the time-stepped MCF.
$S --topology torus:4x4 --injection 25Gbps --forwarding nic >"$TMP/out" 2>"$TMP/err"
if [ $? -ne 0 ] && grep -q "does not model NIC forwarding with an injection limit yet" "$TMP/err"; then ok; else
	bad "time-stepped mcf with NIC forwarding" "want a refusal" "got: $(cat "$TMP/err")"
fi
cat >"$TMP/nic.yaml" <<'YAML'
name: nic-limited
hosts:
  count: 16
  prefix: h
  ports: 4
  port_rate: 25Gbps
  injection: 25Gbps
topology:
  spec: torus:4x4
YAML
expect_json 'j["verified"] and abs(j["theta"]-0.03125)<1e-6 and j["host_forwarding"]=="host"' \
	$OFC schedule "$TMP/nic.yaml" --collective alltoall --size 1MiB --json
expect_json 'j["verified"] and abs(j["theta"]-1/15)<1e-6 and j["host_forwarding"]=="nic"' \
	$OFC schedule "$TMP/nic.yaml" --collective alltoall --size 1MiB --forwarding nic --lowering paths --json
# Degraded and host-limited (torus:8x8, 25 Gb/s links, 40 Gb/s hosts): the
# healthy torus is host-bound at 1.6 / 256 (the sum of distances); two failed
# links cost it little more, and the plain MCF is optimal and verified.
# (Hosts forward: its paths' 8 circuits are 8 alphas, 70 us over one.)
expect_json 'j["verified"] and j["mcf"]["optimal"] and abs(j["healthy"]["time_us"]-918.8608)<1e-3 and 0.0062<j["theta"]<0.00625' \
	$S --topology torus:8x8 --fail 0-1,27-35 --lowering paths --injection 40Gbps --json

# Per-host limits: one host of a ring of 4 injects 1 link (the others, no
# limit, 2): the plain MCF (no symmetry), theta = 1/3, its own 3 shards
# (the unlimited ring: 1/2), verified both ways. Hosts that forward
# differently are refused at the host; other collectives say BFB keeps
# within the limit and the rest are priced without it.
cat >"$TMP/mixed.yaml" <<'YAML'
name: mixed
hosts:
  - {name: a, ports: 2, port_rate: 25Gbps, injection: 25Gbps}
  - {name: b, ports: 2, port_rate: 25Gbps}
  - {name: c, ports: 2, port_rate: 25Gbps}
  - {name: d, ports: 2, port_rate: 25Gbps}
topology:
  spec: torus:4
YAML
for lowering in steps paths; do
	expect_json 'j["verified"] and abs(j["theta"]-1/3)<1e-9 and abs(j["mcf"]["theta"]-1/3)<1e-9 and j["mcf"]["method"]=="column generation" and j["mcf"]["optimal"] and j["host_injection_links"]==1' \
		$OFC schedule "$TMP/mixed.yaml" --collective alltoall --size 1MiB --lowering $lowering --json
done
sed 's/{name: c, ports: 2, port_rate: 25Gbps}/{name: c, ports: 2, port_rate: 25Gbps, forwarding: nic}/' "$TMP/mixed.yaml" >"$TMP/mixed2.yaml"
expect_error 2 "$TMP/mixed2.yaml:5:5: host c forwards differently from a: one forwarding model per fabric for alltoall" \
	$OFC schedule "$TMP/mixed2.yaml" --collective alltoall --size 1MiB
expect_error 0 "ofc schedule: hosts inject 1 links' worth at least (host forwarding): BFB keeps every host within it; other algorithms are priced without" \
	$OFC schedule "$TMP/mixed.yaml" --collective allgather --size 1MiB

# Export: every ordered pair's block, in the shared shape.
expect_exit 0 $S --topology hypercube:3 -o "$TMP/a.json"
if python3 -c "
import json
j=json.load(open('$TMP/a.json'))
assert j['collective']=='alltoall' and j['verified']
got={}
for st in j['steps']:
    for x in st['transfers']:
        if x['dst']==x['target']:
            got[(x['origin'],x['target'])]=got.get((x['origin'],x['target']),0)+x['length']
assert len(got)==56 and all(abs(v-1)<1e-6 for v in got.values()), got
"; then ok; else bad "alltoall JSON export"; fi

# Generalized Kautz is not a Cayley graph of its ports, but its
# automorphisms (x -> -x - 1 among them) let the master keep one source per
# orbit: proven optimal, fewer sources solved than nodes.
expect_json 'j["mcf"]["method"]=="mirrored column generation" and j["mcf"]["optimal"] and j["mcf"]["theta_gap"]<1e-8 and j["mcf"]["group_order"]>=2 and j["mcf"]["sources_solved"]<64 and abs(j["mcf"]["theta"]-0.021708)<5e-7 and j["verified"]' \
	$S --topology genkautz:64,4 --lowering paths --json
# Stopped by --time-limit: a feasible flow, lowered and verified, with the
# gap to the LP bound, not claimed optimal.
expect_json 'not j["mcf"]["optimal"] and j["mcf"]["stop"]=="time limit" and j["mcf"]["theta_gap"]>0 and j["mcf"]["theta"]<=1/j["mcf"]["lower_bound"] and j["verified"]' \
	$S --topology genkautz:100,4 --lowering paths --time-limit 1ns --json
expect_stdout_has "NOT proven optimal (time limit)" $S --topology genkautz:100,4 --lowering paths --time-limit 1ns

# The default lowering's time-stepped schedule, proven optimal but over
# --max-memory, gives way to paths, saying so; asked for by name, refused.
# (The limits between the two lowerings count what ofc holds beyond its
# start, which the sanitizers' shadow and quarantine grow past 16 MiB by
# themselves: not under make check.)
if [ -z "$SAN" ]; then
	expect_json 'j["lowering"]=="paths" and j["verified"] and not j["mcf"]["time_stepped"]' \
		$OFC schedule --size 1MiB --collective alltoall --topology torus:8x8 --algo mcf --max-memory 16MiB --json
	grep -q "^ofc schedule: the time-stepped schedule is over the memory limit: lowered to paths instead (--lowering steps says what it needs)$" "$TMP/err" &&
		ok || bad "default lowering over the memory limit" "$(head -c 400 "$TMP/err")"
fi
expect_exit 1 $OFC schedule --size 1MiB --collective alltoall --topology torus:8x8 --algo mcf --lowering steps --max-memory 16MiB
# The MCF on Clp: the same theta as lp_solve's, optimal, said in
# the JSON; the mirrored master of genkautz:64,4 and the one-source torus.
expect_json 'j["mcf"]["lp_solver"]=="clp" and j["mcf"]["optimal"] and abs(j["mcf"]["theta"]-0.021708)<5e-7 and j["verified"]' \
	$OFC schedule --topology genkautz:64,4 --collective alltoall --size 1MiB --lowering paths --lp-solver clp --json
expect_json 'j["mcf"]["lp_solver"]=="lpsolve" and abs(j["mcf"]["theta"]-0.021708)<5e-7' \
	$OFC schedule --topology genkautz:64,4 --collective alltoall --size 1MiB --lowering paths --lp-solver lpsolve --json
expect_json 'j["mcf"]["lp_solver"]=="clp" and abs(j["mcf"]["theta"]-0.125)<1e-9 and j["verified"]' \
	$OFC schedule --topology torus:4x4 --collective alltoall --size 1MiB --lp-solver clp --json
# In --algo all, the row over the limit says so and the others are priced;
# the summary (and -o) is the first row that applies. The limit sits
# between the steps lowering (about 31 MiB over what ofc holds at start)
# and paths (about 6 MiB over): 16 MiB, as above. What ofc's libraries
# hold when it is loaded is not counted, so the limit decides the same on
# every machine.
[ -n "$SAN" ] ||
	expect_json 'j["algorithm"]=="mcf" and j["lowering"]=="paths" and j["verified"] and "memory limit of 16 MiB" in j["comparison"][0]["error"] and all(c["verified"] for c in j["comparison"][1:] if "error" not in c)' \
		$OFC schedule --size 1MiB --collective alltoall --topology torus:8x8 --algo all --max-memory 16MiB --json
# A cut-through schedule (paths, single) where NICs forward is priced as
# one step, so it is bounded as one: never below its lower bound (the
# diameter's steps of the store-and-forward bound put genkautz:64,4 paths
# at alpha 100 us at 0.66). Where hosts forward it pays an alpha a circuit
# of its longest route and takes the store-and-forward bound.
for low in paths single; do
	expect_json 'j["lower_bound_steps"]==1 and j["tau_l"]==1 and j["ratio"]>=1 and abs(j["lower_bound_us"]-(100+j["lower_bound_tau_b"]*1048576*8/100e9*1e6))<1e-6' \
		$OFC schedule --size 1MiB --alpha 100us --bandwidth 100Gbps --collective alltoall --topology genkautz:64,4 --lowering $low --forwarding nic --json
	expect_json 'j["lower_bound_steps"]==3 and j["tau_l"]==j["max_hops"]>=3 and j["ratio"]>=1' \
		$OFC schedule --size 1MiB --alpha 100us --bandwidth 100Gbps --collective alltoall --topology genkautz:64,4 --lowering $low --json
done
expect_json 'j["lower_bound_steps"]==3 and j["tau_l"]==j["num_steps"] and j["ratio"]>=1' \
	$OFC schedule --size 1MiB --alpha 100us --bandwidth 100Gbps --collective alltoall --topology genkautz:64,4 --lowering steps --json

# A demand matrix. Uniform (any value): the plain all-to-all's
# figures and schedule, byte for byte but the seconds. Skewed on torus:4x4:
# only 0 -> 5 (weight 3) and 5 -> 0 (weight 1); normalised to a mean of 1
# over the 240 pairs, 0 -> 5 is 180 shards and 5 -> 0 60. Node 0 sends 180
# over its 4 links, so theta <= 4/180 (the bound), and the MCF meets it:
# two 2-hop paths and two 4-hop ones, 45 shards on each of 0's links, no
# other link busier (5 -> 0 likewise, 15 a link). The baseline direct takes
# one shortest path: 180 on one link, theta 1/180.
python3 -c "
for s in range(16): print(' '.join('0' if s == t else '7' for t in range(16)))" >"$TMP/uni.txt"
$S --topology torus:4x4 --json >"$TMP/u0.json" && $S --topology torus:4x4 --json --demand-matrix "$TMP/uni.txt" >"$TMP/u1.json"
if python3 -c "
import json
a, b = json.load(open('$TMP/u0.json')), json.load(open('$TMP/u1.json'))
def strip(j):
    if isinstance(j, dict): return {k: strip(v) for k, v in j.items() if 'seconds' not in k and not k.endswith('_s')}
    if isinstance(j, list): return [strip(v) for v in j]
    return j
assert strip(a) == strip(b), (strip(a), strip(b))
assert a['demand'] == 'uniform'
"; then ok; else bad "a uniform demand matrix is the plain all-to-all"; fi
$S --topology torus:4x4 -o "$TMP/s0.json" && $S --topology torus:4x4 --demand-matrix "$TMP/uni.txt" -o "$TMP/s1.json"
if python3 -c "
import json
a, b = json.load(open('$TMP/s0.json')), json.load(open('$TMP/s1.json'))
assert a['steps'] == b['steps'] and a['time_us'] == b['time_us']
"; then ok; else bad "a uniform demand matrix gives the same schedule"; fi
python3 -c "
for s in range(16): print(' '.join('3' if (s, t) == (0, 5) else '1' if (s, t) == (5, 0) else '0' for t in range(16)))" >"$TMP/two.txt"
expect_json 'j["demand"]=="matrix" and j["verified"] and abs(j["theta"]-1/45)<1e-9 and abs(j["mcf"]["theta"]-1/45)<1e-9 and j["mcf"]["optimal"] and abs(j["theta_bound"]-4/180)<1e-9 and j["max_paths_per_pair"]==4 and abs(j["max_link_load"]-45)<1e-9' \
	$S --topology torus:4x4 --demand-matrix "$TMP/two.txt" --lowering paths --json
expect_json 'j["verified"] and abs(j["theta"]-1/180)<1e-9' \
	$S --topology torus:4x4 --demand-matrix "$TMP/two.txt" --algo direct --json
# Every algorithm weighs what the matrix asks, verified.
expect_json 'all(c["verified"] for c in j["comparison"]) and j["comparison"][1]["theta"]>=j["comparison"][3]["theta"]-1e-9' \
	$S --topology genkautz:16,4 --demand-matrix "$TMP/two.txt" --algo all --json
# Bad matrices, at FILE:LINE:COL; the wrong size; the wrong collective.
printf '0 1 2\n1 0 x\n1 1 0\n' >"$TMP/bad1.txt"
expect_error 2 "$TMP/bad1.txt:2:5: 'x' is not a number" $S --topology torus:4x4 --demand-matrix "$TMP/bad1.txt"
printf '0 1 2\n# a comment\n1 0\n' >"$TMP/bad2.txt"
expect_error 2 "$TMP/bad2.txt:3:4: 2 numbers on this row, 3 on the first" $S --topology torus:4x4 --demand-matrix "$TMP/bad2.txt"
printf '0 1\n-1 0\n' >"$TMP/bad3.txt"
expect_error 2 "$TMP/bad3.txt:2:1: -1: entries are finite and not negative" $S --topology torus:4x4 --demand-matrix "$TMP/bad3.txt"
printf '0 1\n1 0\n' >"$TMP/two2.txt"
expect_error 2 "ofc: the demand matrix is 2 x 2; torus:4x4 has 16 nodes" $S --topology torus:4x4 --demand-matrix "$TMP/two2.txt"
printf '5 0\n0 5\n' >"$TMP/none.txt"
expect_error 2 "ofc: $TMP/none.txt: the demand matrix asks for nothing (every pair 0)" $S --topology torus:4x4 --demand-matrix "$TMP/none.txt"
expect_error 2 "ofc schedule: --demand-matrix goes with --collective alltoall" $OFC schedule --size 1MiB --topology torus:4x4 --collective allgather --demand-matrix "$TMP/two.txt"

# Bad input.
expect_error 2 "ofc schedule: bad --time-limit 'soon': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" $S --topology torus:4x4 --time-limit soon
expect_error 2 "ofc schedule: bad --lowering 'fast': steps, paths or single" $S --topology torus:4x4 --lowering fast
expect_error 2 "ofc schedule: --lowering goes with --collective alltoall --algo mcf" $OFC schedule --size 1MiB --topology torus:4x4 --collective allgather --lowering paths
expect_error 2 "ofc schedule: mcf: 1100 nodes: all-to-all schedules are built for up to 1024 nodes" $S --topology genkautz:1100,4
# On a family with a translation group, the refusal says how to get it.
expect_error 2 "ofc schedule: mcf: 4096 nodes: all-to-all schedules are built for up to 1024 nodes; --reduced builds it by symmetry (the time-stepped MCF then runs to --time-limit unless it proves its optimum), and the paths and single lowerings are reduced by themselves" \
	$S --topology torus:64x64 --lowering steps
# A Cayley graph that large is reduced, by the default lowering too, whose
# time-stepped optimum comes from the fluid flow averaged over the
# automorphisms fixing node 0 (it meets the fluid bound, so no time-stepped
# column generation, no --steps-try); above 256 nodes too (torus:32x32:
# 1.6 G transfers explicit), theta the fluid optimum 4 / (N x 16).
expect_json 'j["nodes"]==1600 and j["reduced"]["group"]=="Z_40^2" and j["lowering"]=="steps" and j["mcf"]["time_stepped"] and j["mcf"]["optimal"] and j["verified"]' \
	$S --topology torus:40x40 --steps-try 1ms --json
expect_json 'j["nodes"]==1024 and j["reduced"]["group"]=="Z_32^2" and j["lowering"]=="steps" and j["mcf"]["time_stepped"] and j["mcf"]["optimal"] and abs(j["theta"]-4/(1024*16))<1e-12 and j["num_steps"]==32 and j["verified"]' \
	$S --topology torus:32x32 --json
grep -q "^ofc schedule: 1024 nodes: the default lowering is symmetry-reduced above 256 (node 0's routes x Z_32^2; --reduced asks for it); mcf: time-stepped from the fluid flow" "$TMP/err" &&
	ok || bad "torus:32x32 reduced, time-stepped from the fluid flow" "$(head -c 400 "$TMP/err")"
# Where the fluid flow's steps do not meet its bound (unequal sides), the
# time-stepped column generation as before, or paths past --steps-try.
expect_json 'j["nodes"]==512 and j["reduced"]["group"]=="Z_16 x Z_32" and j["lowering"]=="paths" and j["verified"] and "mcf" in j' \
	$S --topology torus:16x32 --steps-try 1ms --json

# A request over --max-memory is refused before the symmetric solution is
# mirrored to every node, with the estimate; exit 1, not an abort.
expect_exit 1 $OFC schedule --topology torus:8x8 --collective alltoall --algo mcf --lowering steps --size 1MiB --max-memory 1MiB
grep -q "^ofc schedule: mcf: all-to-all mcf (steps lowering) on 64 nodes needs about [0-9.]* MiB (.* hops in all), over the memory limit of 1 MiB (ofc --max-memory, ofcd --max-request-memory); --lowering paths" "$TMP/err" &&
	ok || bad "--max-memory refusal" "$(head -c 400 "$TMP/err")"
# The default tries paths before it refuses.
expect_exit 1 $OFC schedule --topology torus:8x8 --collective alltoall --algo mcf --size 1MiB --max-memory 1MiB
grep -q "^ofc schedule: mcf: all-to-all mcf (paths lowering) on 64 nodes needs about [0-9.]* MiB (.* hops in all), over the memory limit of 1 MiB" "$TMP/err" &&
	ok || bad "--max-memory refusal, default lowering" "$(head -c 400 "$TMP/err")"
finish
