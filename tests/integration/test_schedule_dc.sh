#!/bin/sh
# ofc schedule on direct-connect topologies: exact tau_B values, Table 4,
# expansions, reduce collectives, chunks, baselines, exports, fabric-aware
# ports, bad input.
SUITE=schedule-dc
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --size 1MiB --alpha 10us --bandwidth 100Gbps"

# Exact tau_B (allgather), steps = diameter, verified.
while read -r spec frac steps; do
	expect_json "j['tau_b_fraction']=='$frac' and j['num_steps']==$steps and j['verified'] and abs(j['tau_b_measured']-j['tau_b'])<1e-6" \
		$S --topology "$spec" --collective allgather --json
done <<'EOF'
genkautz:1024,4 341/256 5
torus:4x6 23/24 5
torus:5x7 34/35 5
torus:32x32 1023/1024 32
hypercube:10 1023/1024 10
bipartite:2 3/4 2
line(bipartite:2) 1 3
line^2(bipartite:2) 9/8 4
circulant:16:3,4 15/16 3
line(circulant:16:3,4) 1 4
product(biring:3,biring:3,complete:2) 17/18 3
product(biring:3,biring:3,biring:3,complete:2) 53/54 4
torus:3x3x2 17/18 3
torus:3x3x3x2 53/54 4
product(biring:3,biring:3,circulant:2:1) 1 3
EOF

# Table 4 (N = 1024, d = 4, alpha = 10 us, M/B = 2^20 B at 100 Gb/s, allreduce).
expect_json 'round(j["time_us"],1)==323.5 and round(j["lower_bound_us"],1)==267.6 and j["tau_b_fraction"]=="341/128" and j["num_steps"]==10 and j["verified"]' \
	$S --topology genkautz:1024,4 --collective allreduce --json
expect_json 'round(j["time_us"],1)==291.0 and j["tau_b_fraction"]=="261/128" and j["num_steps"]==12 and j["verified"] and j["expansion"]["predicted"]["tau_b_fraction"]=="261/128" and j["expansion"]["predicted"]["num_steps"]==12 and j["expansion"]["measured"]["verified"] and abs(j["expansion"]["measured"]["tau_b"]-2.0390625)<1e-6' \
	$S --topology 'line^3(circulant:16:3,4)' --collective allreduce --json

# Expansion constructions: predicted == measured, for every collective.
for spec in 'degree(biring:5,2)' 'power(circulant:5:1,2,2)' 'line(genkautz:10,3)'; do
	for c in allgather reduce-scatter allreduce; do
		expect_json 'j["verified"] and j["predicted"]["exact"] and j["predicted"]["num_steps"]==j["num_steps"] and abs(j["predicted"]["tau_b"]-j["tau_b_measured"])<1e-6' \
			$S --topology "$spec" --collective $c --algo expansion --json
	done
done
# BFB on a degree expansion beats the construction by a step (Table 5, N = 10).
expect_json 'j["num_steps"]==2 and j["tau_b_fraction"]=="9/10" and j["expansion"]["predicted"]["num_steps"]==3' \
	$S --topology 'degree(biring:5,2)' --collective allgather --json
# Products: Thm 13 predicts BW-optimal BFB.
expect_json 'j["predicted"]["tau_b_fraction"]=="31/32" and j["tau_b_fraction"]=="31/32" and j["num_steps"]==10' \
	$S --topology 'product(ring:4,ring:8)' --collective allgather --json

# Reduce-scatter by reversal on generalized Kautz; lp_solve agrees.
expect_json 'j["verified"] and j["tau_b_fraction"]=="341/256"' $S --topology genkautz:1024,4 --collective reduce-scatter --json
exact=$($S --topology genkautz:40,3 --collective allreduce --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["tau_b_fraction"])')
expect_json "j['verified'] and j['algorithm']=='bfb-lp' and j['lps_solved']>0 and j['tau_b_fraction']=='$exact' and '$exact'!='None'" \
	$S --topology genkautz:40,3 --collective allreduce --algo bfb-lp --json

# Integer chunks within Thm 20.
expect_json 'j["chunks"]==3 and j["verified"] and j["tau_b_fractional"]<=j["tau_b"]<=j["thm20_tau_b_bound"]' \
	$S --topology hypercube:6 --collective allreduce --chunks 3 --json

# Baselines and --algo all.
expect_json 'j["tau_b_fraction"]=="15/4" and j["num_steps"]==15 and j["verified"]' $S --topology torus:4x4 --collective allgather --algo ring --json
expect_json 'j["tau_b_fraction"]=="15/4" and j["num_steps"]==30 and j["verified"]' $S --topology torus:4x4 --collective allreduce --algo bidir-ring --json
expect_json 'j["tau_b_fraction"]=="15/4" and j["num_steps"]==4 and j["verified"]' $S --topology hypercube:4 --collective reduce-scatter --algo recursive --json
expect_json 'j["tau_b_fraction"]=="15/8" and j["num_steps"]==12 and j["verified"]' $S --topology torus:4x4 --collective allreduce --algo torus-rings --json
# Every engine that applies is ranked, Swing too on a torus, each row
# under the one cost model as it assumes its relays work
# (store-and-forward; Swing's peers routed within a step) against that
# model's bound, and the least time verified is marked best, once. Where
# NICs forward, a routed step is one alpha and swing/B at 1 MiB beats
# BFB; where hosts forward (the default) every circuit of a step's
# longest route is an alpha (20 over Swing's 12 steps on torus:8x8: 80 us
# more) and BFB is best.
expect_json '[c["algorithm"] for c in j["comparison"]]==["bfb","expansion","ring","bidir-ring","recursive","torus-rings","swing"] and all(c["verified"] for c in j["comparison"] if "error" not in c) and "error" in j["comparison"][1] and [c["algorithm"] for c in j["comparison"] if c.get("best")]==["swing"] and j["comparison"][6]["time_us"]==min(c["time_us"] for c in j["comparison"] if "time_us" in c) and j["comparison"][6]["time_us"]<j["comparison"][0]["time_us"] and [c.get("model") for c in j["comparison"]]==["store-and-forward",None,"store-and-forward","store-and-forward",None,"store-and-forward","routed"] and all(abs(c["ratio"]*c["lower_bound_us"]-c["time_us"])<1e-6*c["time_us"] for c in j["comparison"] if "error" not in c)' \
	$S --topology torus:8x8 --collective allreduce --algo all --forwarding nic --json
expect_stdout_has '  swing             12          69/32      300.879   rtd   1.3363  yes  best  xi 1.07812' \
	$S --topology torus:8x8 --collective allreduce --algo all --forwarding nic
expect_json '[c["algorithm"] for c in j["comparison"] if c.get("best")]==["bfb"] and abs(j["comparison"][6]["time_us"]-380.879)<1e-3' \
	$S --topology torus:8x8 --collective allreduce --algo all --json
expect_stdout_has '  swing             12          69/32      380.879   rtd   1.6917  yes  xi 1.07812' \
	$S --topology torus:8x8 --collective allreduce --algo all
expect_stdout_has 'swing        n/a: swing needs a torus:AxB... topology' \
	$S --topology hypercube:4 --collective allreduce --algo all
expect_stdout_has 'recursive    n/a: recursive doubling/halving needs a power-of-two node count (24 nodes)' \
	$S --topology torus:4x6 --collective allgather --algo all
# A baseline that does not apply says so, whatever its size would be:
# torus-rings on a hypercube is not "over the memory limit".
expect_stdout_has 'torus-rings  n/a: torus-rings needs a torus:AxB... topology' \
	$S --topology hypercube:8 --collective allreduce --algo all --max-memory 20MiB

# Exports: the shared schedule shape, pb with the exact fraction, text.
expect_exit 0 $S --topology torus:4x4 --collective allgather -o "$TMP/s.json"
if python3 -c "
import json,sys
j=json.load(open('$TMP/s.json'))
assert j['tau_b_fraction']=='15/16' and j['verified'] and len(j['steps'])==4
for st in j['steps']:
    for x in st['transfers']:
        assert {'src','dst','origin','offset','length','port'} <= set(x), x
" ; then ok; else bad "schedule JSON export"; fi
expect_exit 0 $S --topology genkautz:20,3 --collective allreduce --format pb -o "$TMP/s.pb"
if protoc --decode=ofc.v1.Schedule proto/schedule.proto <"$TMP/s.pb" >"$TMP/s.txt" &&
	grep -q '^tau_b_fraction: "' "$TMP/s.txt" && grep -q 'op: TRANSFER_OP_REDUCE' "$TMP/s.txt" &&
	[ "$(grep -c '^steps {' "$TMP/s.txt")" -eq 6 ]; then ok; else bad "schedule pb does not decode"; fi
expect_exit 0 $S --topology torus:3x3 --collective allgather --format text -o "$TMP/s.out"
grep -q '^step 1: ' "$TMP/s.out" && ok || bad "text export"

# Fabric-aware: generalized Kautz through patch panels, one per port. For
# genkautz:30,3 the port permutations put 60 arcs on another port than their
# position in the topology, so this checks the mapping: the transfer ports
# are NIC ports (port j of src reaches dst in the permutations), and the
# links name the panel and its ports.
cat >"$TMP/gk.yaml" <<'EOF'
version: 1
name: gk20
hosts: {count: 30, prefix: n, ports: 3, port_rate: 25Gbps}
switches:
  - {name: p0, type: patch-panel, ports: 30}
  - {name: p1, type: patch-panel, ports: 30}
  - {name: p2, type: patch-panel, ports: 30}
wiring: {pattern: per-port, switches: [p0, p1, p2]}
topology: genkautz:30,3
collectives:
  - {op: allreduce, size: 1MiB}
EOF
expect_json 'j["verified"] and j["fabric"]["circuits"]==90 and j["bandwidth_bps"]==75e9' $OFC schedule "$TMP/gk.yaml" --collective allreduce --json
expect_exit 0 $OFC schedule "$TMP/gk.yaml" --collective allgather -o "$TMP/gk.json"
$OFC topo genkautz:30,3 --ports --json >"$TMP/gkp.json"
if python3 -c "
import json
j=json.load(open('$TMP/gk.json')); p=json.load(open('$TMP/gkp.json'))['ports']
links={(l['src'],l['port']):l for l in j['links']}
for st in j['steps']:
    for x in st['transfers']:
        assert p[x['port']][x['src']]==x['dst'], x
        l=links[(x['src'],x['port'])]
        assert l['dst']==x['dst'] and l['switch']=='p%d'%x['port'] and l['in_port']==1+x['src'] and l['out_port']==1+x['dst'], l
assert len(j['links'])==sum(1 for q in p for u in range(30) if q[u]!=u) # self-loops are never used
"; then ok; else bad "fabric-aware ports and links"; fi

# Bad input: exit 2 with a usage line or a reason.
expect_error 2 "ofc schedule: unknown --algo 'bfs' for a direct-connect topology (bfb, bfb-lp, expansion, ring, bidir-ring, recursive, torus-rings or all)" $S --topology torus:4x4 --collective allgather --algo bfs
expect_error 2 "ofc schedule: unknown --algo 'bfb' for alltoall (mcf, direct, sp-balanced or all)" $S --topology torus:4x4 --collective alltoall --algo bfb
expect_error 2 "ofc schedule: missing --size (data per node, e.g. 1MiB)" $OFC schedule --topology torus:4x4 --collective allgather
expect_error 2 "ofc schedule: expansion: torus:4x4 is not a line, degree or power expansion (no construction)" $S --topology torus:4x4 --collective allgather --algo expansion
expect_error 2 "ofc schedule: recursive: recursive doubling/halving needs a power-of-two node count (12 nodes)" $S --topology circulant:12:2,3 --collective allgather --algo recursive
expect_error 2 "ofc schedule: torus-rings: torus-rings needs a torus:AxB... topology" $S --topology hypercube:3 --collective allgather --algo torus-rings
expect_error 2 "ofc schedule: bfb: 10000 nodes: BFB schedules are built for up to 8192 nodes" $S --topology genkautz:10000,4 --collective allgather
expect_error 2 "ofc schedule: bad --chunks '0': must be 1..1000000" $S --topology torus:4x4 --collective allgather --chunks 0
expect_exit 2 $S --topology 'line(ring:3' --collective allgather

# Hosts of different port rates: priced at the slowest link, and said.
cat >"$TMP/mixed.yaml" <<'EOT'
version: 1
name: mixed4
hosts:
  - {name: a, ports: 2, port_rate: 100Gbps}
  - {name: b, ports: 2, port_rate: 100Gbps}
  - {name: c, ports: 2, port_rate: 25Gbps}
  - {name: d, ports: 2, port_rate: 100Gbps}
switches:
  - {name: ocs0, type: ocs, ports: 8}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:4
EOT
expect_json 'j["bandwidth_bps"]==2*25e9' $OFC schedule "$TMP/mixed.yaml" --collective allgather --algo bfb --size 1MiB --json
grep -q "^ofc schedule: link rates differ (25 Gb/s to 100 Gb/s): each link is taken at its rate (BFB by LP (13), the MCF as capacities, the link loads)" "$TMP/err" &&
	ok || bad "mixed rates not said" "$(cat "$TMP/err")"

# BFB with each link at its rate (LP (13)), by hand: a broom s - a - b <
# x1, x2, x3 where s runs at 25G and the rest at 100G (weights 1 and 4, in
# 25G links). Step 1: one shard per in-link, s and a hear each other on the
# slow link: 1. Step 2: a and each x hear three shards over one fast link
# (3/4), s hears b's over the slow one (1): 1. Step 3: s hears the three x
# over the slow link: 3. d = 4 (b), tau_B = (4/6)(1 + 1 + 3) = 10/3; every
# link at 25G would give (4/6)(1 + 3 + 3) = 14/3.
# The verifier, taking each link at its rate, measures the same 10/3.
printf '0-1
1-2
2-3 2-4 2-5
' >"$TMP/broom.edges"
cat >"$TMP/broom.yaml" <<EOT
version: 1
name: broom
hosts:
  - {name: s, ports: 4, port_rate: 25Gbps}
  - {name: a, ports: 4, port_rate: 100Gbps}
  - {name: b, ports: 4, port_rate: 100Gbps}
  - {name: x1, ports: 4, port_rate: 100Gbps}
  - {name: x2, ports: 4, port_rate: 100Gbps}
  - {name: x3, ports: 4, port_rate: 100Gbps}
topology: edges:$TMP/broom.edges
EOT
expect_json 'j["tau_b_fraction"]=="10/3" and j["num_steps"]==3 and j["verified"] and j["bandwidth_bps"]==4*25e9 and abs(j["tau_b_measured"]-10/3)<1e-9' \
	$OFC schedule "$TMP/broom.yaml" --collective allgather --algo bfb --size 1MiB --json
expect_json 'j["tau_b_fraction"]=="10/3" and j["verified"]' \
	$OFC schedule "$TMP/broom.yaml" --collective allgather --algo bfb-lp --size 1MiB --json
# The same slow link named by the topology's link_rates, every host at 100G:
# the same LP, the same 10/3.
sed -e 's/port_rate: 25Gbps/port_rate: 100Gbps/' -e "s|^topology: .*|topology:\n  spec: edges:$TMP/broom.edges\n  link_rates: [[a, s, 25Gbps]]|" \
	"$TMP/broom.yaml" >"$TMP/broom-link.yaml"
expect_json 'j["tau_b_fraction"]=="10/3" and j["num_steps"]==3 and j["verified"] and j["bandwidth_bps"]==4*25e9' \
	$OFC schedule "$TMP/broom-link.yaml" --collective allgather --algo bfb --size 1MiB --json
expect_json 'j["tau_b_fraction"]=="10/3" and j["verified"]' \
	$OFC schedule "$TMP/broom-link.yaml" --collective allgather --algo bfb-lp --size 1MiB --json

# Per-port rates, by hand: torus:4 (ring 0-1-2-3; port 0 sends to u+1,
# port 1 to u-1), host c = 2 with port 1 at 25G, the rest at 100G. Port 1
# joins port 1 at both ends, so the arcs 2 -> 1 (c's port 1 sends) and
# 3 -> 2 (c's port 1 hears) run at 25G (weight 1), the other six at 4.
# Step 1: nodes 1 and 2 each hear one shard over a weight-1 link: 1. Step
# 2: the one source at distance 2 comes over both in-links: node 1 and 2
# 1/(4+1), nodes 0 and 3 1/8: 1/5. tau_B = (2/4)(1 + 1/5) = 3/5 (every link
# at 25G: 3/4). The lower bound takes each node's links at their rates:
# nodes 1 and 2 take in 4 + 1 = 5, against d x slowest = 2: tau_B* (3/4)(2/5).
cat >"$TMP/ring4.yaml" <<'EOT'
version: 1
name: ring4
hosts:
  - {name: a, ports: 2, port_rate: 100Gbps}
  - {name: b, ports: 2, port_rate: 100Gbps}
  - {name: c, ports: 2, port_rates: [100Gbps, 25Gbps]}
  - {name: d, ports: 2, port_rate: 100Gbps}
switches:
  - {name: ocs0, type: ocs, ports: 8}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:4
EOT
expect_json 'j["tau_b_fraction"]=="3/5" and j["num_steps"]==2 and j["verified"] and j["bandwidth_bps"]==2*25e9 and abs(j["lower_bound_us"]-(20+0.3*8*1048576/50e9*1e6))<1e-6' \
	$OFC schedule "$TMP/ring4.yaml" --collective allgather --algo bfb --size 1MiB --json
grep -q "the lower bound takes each node's links at their rates" "$TMP/err" &&
	ok || bad "per-port rates: the bound not said" "$(cat "$TMP/err")"
expect_json 'j["tau_b_fraction"]=="3/5" and j["verified"]' \
	$OFC schedule "$TMP/ring4.yaml" --collective allgather --algo bfb-lp --size 1MiB --json
# All-to-all MCF with each link at its rate, by hand (the same ring4; in
# 25G links the arcs 2 -> 1 and 3 -> 2 have capacity 1, the rest 4). The
# pairs at distance 2 go round the fast side; (2,1) and (3,2) send a share
# x the long way (2-3-0-1, 3-0-1-2), which loads 0 -> 1 and 3 -> 0 with
# 3 theta + 2 x theta: theta (1 - x) = 1 and theta (3 + 2x) = 4 give x =
# 1/6, theta = 6/5. The lengths 2 on the slow arcs and 1 on 0 -> 1 and
# 3 -> 0 prove it (sum c l = 12 over the pairs' distances 10). Every pair
# has two paths, so the paths lowering keeps it: tau_B = (2/4)(5/6) = 5/12.
# The bound: capacity 26 over N L(4, 2) = 16, and each node has 5 in and
# out (5/3): theta <= 1.625, tau_B* = (2/4) / 1.625 = 4/13. One rate:
# theta 1/2 per link (the 25G ring at its rate, the 100G one at its).
expect_json 'abs(j["theta"]-1.2)<1e-9 and abs(j["mcf"]["theta"]-1.2)<1e-9 and j["mcf"]["optimal"] and j["tau_b_fraction"]=="5/12" and j["lower_bound_tau_b_fraction"]=="4/13" and j["theta_bound"]==1.625 and j["verified"]' \
	$OFC schedule "$TMP/ring4.yaml" --collective alltoall --lowering paths --size 1MiB --json
grep -q "mcf: capacities differ within a port: no one-source reduction" "$TMP/err" &&
	ok || bad "mixed-rate mcf: the lost symmetry not said" "$(cat "$TMP/err")"
for r in 25 100; do
	sed "s/port_rates: \[100Gbps, 25Gbps\]/port_rate: ${r}Gbps/; s/port_rate: 100Gbps/port_rate: ${r}Gbps/" "$TMP/ring4.yaml" >"$TMP/ring4-$r.yaml"
	expect_json 'abs(j["theta"]-0.5)<1e-12 and abs(j["mcf"]["theta"]-0.5)<1e-12 and j["mcf"]["method"]=="one-source symmetric" and j["tau_b_fraction"]=="1" and j["verified"]' \
		$OFC schedule "$TMP/ring4-$r.yaml" --collective alltoall --lowering paths --size 1MiB --json
done

# All of c's ports at 25G is c's port_rate: the same schedule either way.
sed 's/port_rates: \[100Gbps, 25Gbps\]/port_rates: [25Gbps, 25Gbps]/' "$TMP/ring4.yaml" >"$TMP/ring4b.yaml"
sed 's/port_rates: \[100Gbps, 25Gbps\]/port_rate: 25Gbps/' "$TMP/ring4.yaml" >"$TMP/ring4c.yaml"
$OFC schedule "$TMP/ring4c.yaml" --collective allgather --algo bfb --size 1MiB --json >"$TMP/r4c.json" 2>/dev/null
expect_json "j['tau_b_fraction']==json.load(open('$TMP/r4c.json'))['tau_b_fraction'] and j['time_us']==json.load(open('$TMP/r4c.json'))['time_us']" \
	$OFC schedule "$TMP/ring4b.yaml" --collective allgather --algo bfb --size 1MiB --json
# Bad rates, at their line and column.
sed 's/port_rates: \[100Gbps, 25Gbps\]/port_rates: [100Gbps]/' "$TMP/ring4.yaml" >"$TMP/bad-pr.yaml"
expect_error 2 "$TMP/bad-pr.yaml:6:37: host 'c' has 2 ports but port_rates lists 1 rate" \
	$OFC schedule "$TMP/bad-pr.yaml" --collective allgather
sed 's/link_rates: \[\[a, s, 25Gbps\]\]/link_rates: [[x1, s, 25Gbps]]/' "$TMP/broom-link.yaml" >"$TMP/bad-lr.yaml"
expect_error 2 "$TMP/bad-lr.yaml:12:16: link rate x1-s: topology 'edges:$TMP/broom.edges' has no link between them" \
	$OFC schedule "$TMP/bad-lr.yaml" --collective allgather
sed 's/link_rates: \[\[a, s, 25Gbps\]\]/link_rates: [[a, s]]/' "$TMP/broom-link.yaml" >"$TMP/bad-lr2.yaml"
expect_error 2 "$TMP/bad-lr2.yaml:12:16: a link's rate is [HOST, HOST, RATE], e.g. [h0, h1, 25Gbps]: this list has 2 items" \
	$OFC schedule "$TMP/bad-lr2.yaml" --collective allgather
# One rate everywhere: nothing to weigh, BFB is the plain 14/3.
sed 's/25Gbps/100Gbps/' "$TMP/broom.yaml" >"$TMP/broom1.yaml"
expect_json 'j["tau_b_fraction"]=="14/3" and j["verified"]' \
	$OFC schedule "$TMP/broom1.yaml" --collective allgather --algo bfb --size 1MiB --json

# NIC-limited hosts in BFB. A ring of four, host a injecting one
# link's worth (its neighbours b, d; c opposite). Allgather, by hand: step
# 1 a sends its shard on both links, 2 / 1 = 2. Step 2 b needs d's shard
# and d b's, from a or c: a sends x + y <= T, c's links carry 1 - x and
# 1 - y <= T, so T >= 2/3 (LP (3) alone splits evenly: a sends 1). tau_B =
# (2/4)(2 + 2/3) = 4/3. NIC forwarding: step 2 relays skip a, U* = 1/2:
# (2/4)(2 + 1/2) = 5/4. Reduce-scatter: every host sends fixed partial sums,
# one shard in step 1 and two in step 2: a at 1 and 2, (2/4)(1 + 2) = 3/2.
# Allreduce: 3/2 + 4/3 = 17/6. Each schedule verified.
cat >"$TMP/inj.yaml" <<'YAML'
name: inj
hosts:
  - {name: a, ports: 2, port_rate: 25Gbps, injection: 25Gbps}
  - {name: b, ports: 2, port_rate: 25Gbps}
  - {name: c, ports: 2, port_rate: 25Gbps}
  - {name: d, ports: 2, port_rate: 25Gbps}
topology: torus:4
YAML
for want in allgather:4/3:2 reduce-scatter:3/2:0 allreduce:17/6:2; do
	c=${want%%:*} rest=${want#*:}
	expect_json "j['tau_b_fraction']=='${rest%:*}' and j['verified'] and j['host_resolved_steps']==${rest#*:} and j['host_forwarding']=='host'" \
		$OFC schedule "$TMP/inj.yaml" --collective "$c" --algo bfb --size 1MiB --json
done
expect_json "j['tau_b_fraction']=='5/4' and j['verified'] and j['host_forwarding']=='nic'" \
	$OFC schedule "$TMP/inj.yaml" --collective allgather --algo bfb --size 1MiB --forwarding nic --json
# The schedule itself: in step 2 host a sends 2/3 of a shard (x + y = T),
# c the rest of b's and d's shards (2 - 2/3), within 2 x 2/3 (its links).
$OFC schedule "$TMP/inj.yaml" --collective allgather --algo bfb --size 1MiB -o "$TMP/inj.json" >/dev/null 2>&1
if python3 - "$TMP/inj.json" <<'EOF'; then ok; else bad "host a's step-2 sends"; fi
import json, sys
j = json.load(open(sys.argv[1]))
out = {}
for t in j['steps'][1]['transfers']:
    out[t['src']] = out.get(t['src'], 0) + t['length']
sys.exit(0 if abs(out[0] - 2 / 3) < 1e-6 and abs(out[2] - 4 / 3) < 1e-6 else 1)
EOF
expect_stdout_has 'hosts        injection (host forwarding) sets the time of 2 of 2 steps; 2 allgather steps balanced over links and senders together' \
	$OFC schedule "$TMP/inj.yaml" --collective allgather --algo bfb --size 1MiB
# The lower bound takes the hosts: an allgather's N (N-1) shards all cross
# some host (host forwarding): tau_B >= (N-1)/N d / beta_mean = (3/4) 2 /
# (7/4) = 6/7.
expect_json "j['lower_bound_tau_b_fraction']=='6/7'" \
	$OFC schedule "$TMP/inj.yaml" --collective allgather --algo bfb --size 1MiB --json
# Every host at its links' worth: nothing binds, the plain ring's 3/4.
sed 's/injection: 25Gbps/injection: 50Gbps/' "$TMP/inj.yaml" >"$TMP/inj2.yaml"
expect_json "j['tau_b_fraction']=='3/4' and 'host_limited_steps' not in j" \
	$OFC schedule "$TMP/inj2.yaml" --collective allgather --algo bfb --size 1MiB --json
# What is not modelled is said: bfb-lp and chunks under host limits.
expect_exit 2 $OFC schedule "$TMP/inj.yaml" --collective allgather --algo bfb-lp --size 1MiB
if grep -q "host injection limits are modelled for built BFB schedules of exact fractions" "$TMP/err"; then ok; else bad "bfb-lp under host limits: $(cat "$TMP/err")"; fi

# BFB is estimated before it is built: over --max-memory it is refused with
# the estimate (exit 1, nothing built); under it, built as ever. Allreduce
# on 1024 nodes: two phases of 1024 x 1023 transfers at 24 bytes, the
# distances and the verifier's table, about 70 MiB. (A Cayley family would
# be symmetry-reduced instead: below.)
expect_exit 1 $S --topology genkautz:1024,4 --collective allreduce --algo bfb --max-memory 10MiB
grep -q "^ofc schedule: bfb: BFB allreduce on 1024 nodes needs about [0-9.]* MiB (at least 2.1e+06 transfers), over the memory limit of 10 MiB (ofc --max-memory, ofcd --max-request-memory)" "$TMP/err" &&
	ok || bad "BFB --max-memory refusal" "$(head -c 400 "$TMP/err")"
# (Not under the sanitizers: their shadow and quarantine grow what the run
# holds past the limit. The limit counts what ofc holds beyond what it held
# when loaded, so it decides the same on every machine.)
[ -n "$SAN" ] ||
	expect_json 'j["verified"] and j["num_transfers"]==4412' \
		$S --topology torus:8x8 --collective allgather --algo bfb --max-memory 10MiB --json

# Symmetry-reduced BFB: node 0's program and the translation
# group, checked by symmetry, with the explicit schedule's figures.
for spec in torus:8x8 torus:3x4x5 hypercube:6 circulant:16:3,4 bipartite:4; do
	for c in allgather reduce-scatter allreduce; do
		want=$($S --topology "$spec" --collective $c --json |
			python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["tau_b_fraction"], j["num_steps"], j["verified"])')
		set -- $want
		expect_json "j['verified'] and j['reduced']['verified'] and j['tau_b_fraction']=='$1' and j['num_steps']==$2 and '$3'=='True' and j['reduced']['order']==j['nodes'] and j['num_transfers']==j['nodes']*j['reduced']['program_transfers']" \
			$S --topology "$spec" --collective $c --reduced --json
	done
done
expect_json 'j["reduced"]["group"]=="Z_2^16" and j["reduced"]["radix"]==[2]*16 and j["nodes"]==65536 and j["verified"] and j["bw_optimal"] and j["num_steps"]==32' \
	$S --topology hypercube:16 --collective allreduce --reduced --json
expect_json 'j["reduced"]["group"]=="Z_3 x Z_4 x Z_5"' $S --topology torus:3x4x5 --collective allgather --reduced --json
# Without --reduced, what would not be built explicitly is reduced, and
# the command says so.
expect_json 'j["reduced"]["group"]=="Z_256^2" and j["verified"] and j["tau_b_fraction"]=="65535/65536" and j["num_steps"]==256' \
	$S --topology torus:256x256 --collective allgather --json
grep -q "^ofc schedule: 65536 nodes: explicit BFB schedules stop at 8192: BFB symmetry-reduced instead (node 0's program x Z_256^2; --reduced asks for it)$" "$TMP/err" &&
	ok || bad "automatic reduction note" "$(head -c 400 "$TMP/err")"
expect_json 'j["reduced"]["order"]==1024 and j["verified"]' \
	$S --topology hypercube:10 --collective allreduce --max-memory 10MiB --json
grep -q "^ofc schedule: the explicit schedule needs about [0-9.]* MiB, over the memory limit: BFB symmetry-reduced instead (node 0's program x Z_2^10; --reduced asks for it)$" "$TMP/err" &&
	ok || bad "reduction over --max-memory" "$(head -c 400 "$TMP/err")"
expect_json '"reduced" not in j and j["verified"]' $S --topology torus:8x8 --collective allgather --json
# The export: node 0's program and the group.
expect_exit 0 $S --topology torus:4x4 --collective allgather --reduced --format json -o "$TMP/red.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["reduced"]["group"]=="Z_4^2" and all(x["dst"]==0 for s in j["steps"] for x in s["transfers"]) else 1)' "$TMP/red.json" &&
	ok || bad "reduced JSON export" "$(head -c 300 "$TMP/red.json")"
expect_exit 0 $S --topology torus:4x4 --collective allreduce --reduced --format pb -o "$TMP/red.pb"
expect_error 2 "ofc: MSCCL programs are explicit: write the schedule without --reduced (up to 8192 nodes)" \
	$S --topology torus:4x4 --collective allgather --reduced --format msccl -o "$TMP/red.xml"
# All-to-all: the MCF's symmetric routes are node 0's; lowered by paths or
# steps they are the program, with the explicit schedule's figures.
# Routed, the program says a route's straight stretches one transfer each
# (runs): as many hops as the explicit schedule's transfers, fewer steps
# than its hops.
for low in paths steps; do
	want=$($S --topology torus:6x6 --collective alltoall --algo mcf --lowering $low --json |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_transfers"], j["num_steps"], round(j["theta"], 9), j["verified"], j["num_hops"])')
	set -- $want
	[ "$1" = "$5" ] && ok || bad "explicit $low: one hop per transfer" "$want"
	if [ $low = paths ]; then
		steps="j['num_steps']<$2 and j['max_hops']==$2 and j['num_transfers']<$1"
	else
		steps="j['num_steps']==$2 and j['num_transfers']==$1"
	fi
	expect_json "j['verified'] and j['reduced']['verified'] and j['num_hops']==$1 and $steps and round(j['theta'], 9)==$3 and '$4'=='True'" \
		$S --topology torus:6x6 --collective alltoall --algo mcf --lowering $low --reduced --json
done
expect_json 'j["reduced"]["group"]=="Z_64^2" and j["verified"] and j["mcf"]["optimal"] and j["max_paths_per_pair"]<=4' \
	$S --topology torus:64x64 --collective alltoall --algo mcf --lowering paths --json
grep -q "^ofc schedule: 4096 nodes: explicit all-to-all schedules stop at 1024: symmetry-reduced instead (node 0's routes x Z_64^2; --reduced asks for it)$" "$TMP/err" &&
	ok || bad "automatic all-to-all reduction note" "$(head -c 400 "$TMP/err")"
# The default lowering is the time-stepped one when its MCF proves its
# optimum within --steps-try (5 s; or --time-limit), else the fluid MCF
# lowered to paths, with the reason; --lowering steps waits for it. (The
# time-stepped MCF on genkautz:128,4 takes some 80-700 ms: never 1 ms.)
expect_json 'j["lowering"]=="steps" and j["mcf"]["optimal"] and j["verified"]' \
	$S --topology torus:4x4 --collective alltoall --algo mcf --json
expect_json 'j["lowering"]=="paths" and j["mcf"]["optimal"] and j["verified"] and not j["mcf"]["time_stepped"]' \
	$S --topology genkautz:128,4 --collective alltoall --algo mcf --steps-try 1ms --json
grep -qE "^ofc schedule: the time-stepped MCF did not prove its optimum in [0-9.]+ s \(time limit, gap [0-9.]+%\): lowered to paths instead \(--lowering steps waits\)$" "$TMP/err" &&
	ok || bad "default lowering's fallback note" "$(head -c 400 "$TMP/err")"
expect_json 'j["lowering"]=="steps" and j["mcf"]["optimal"] and j["verified"]' \
	$S --topology genkautz:128,4 --collective alltoall --algo mcf --lowering steps --steps-try 1ms --json
expect_error 2 "ofc schedule: bad --steps-try '0': must be above 0" \
	$S --topology torus:4x4 --collective alltoall --algo mcf --steps-try 0
# 65,536 nodes: the group read off the spec is the MCF's (no N x N table
# of translations, node ids to 65,535). Theta on a hypercube is its
# distance bound: d over the distances from a node, 16 / (8 x 65536).
expect_json 'j["nodes"]==65536 and j["reduced"]["group"]=="Z_2^16" and j["verified"] and j["mcf"]["optimal"] and abs(j["theta"] - 16 / (8 * 65536)) < 1e-12' \
	$S --topology hypercube:16 --collective alltoall --algo mcf --lowering paths --json
expect_exit 2 $S --topology 'line(circulant:8:1,2)' --collective allgather --algo expansion --reduced
grep -q "reduced goes with --algo bfb, bfb-lp, ring, bidir-ring, recursive or torus-rings (allgather, reduce-scatter, allreduce), swing, recursive-doubling or bucket (allreduce) and mcf, direct or sp-balanced (alltoall)" "$TMP/err" &&
	ok || bad "--reduced with expansion" "$(cat "$TMP/err")"
# The all-to-all baselines: direct reduced has the explicit figures (node
# 0's BFS routes translated); sp-balanced by symmetry balances node 0's
# routes by port loads, its own schedule; both reduced by themselves above
# 1,024 nodes.
want=$($S --topology torus:6x6 --collective alltoall --algo direct --json |
	python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_transfers"], j["tau_b_fraction"], repr(j["theta"]))')
set -- $want
expect_json "j['verified'] and j['reduced']['order']==36 and j['num_hops']==$1 and j['num_transfers']<$1 and j['tau_b_fraction']=='$2' and j['theta']==$3" \
	$S --topology torus:6x6 --collective alltoall --algo direct --reduced --json
expect_json 'j["verified"] and j["reduced"]["group"]=="Z_2^12" and j["num_transfers"]==4096*12*2048' \
	$S --topology hypercube:12 --collective alltoall --algo sp-balanced --json
# Single path by symmetry: node 0's pairs on one MCF path each, balanced by
# port loads; on a torus as balanced as the MCF itself.
expect_json 'j["verified"] and j["reduced"]["group"]=="Z_64^2" and j["max_paths_per_pair"]==1 and abs(j["theta"] - j["mcf"]["theta"]) < 1e-12' \
	$S --topology torus:64x64 --collective alltoall --algo mcf --lowering single --json
# Swing: the even translations, 2^D representatives; the figures are the
# explicit schedule's, and torus:64x64 has the paper's 1.184.
want=$($S --topology torus:16x16 --collective allreduce --algo swing --variant bandwidth --json |
	python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_transfers"], repr(j["congestion_deficiency"]), j["tau_b_fraction"])')
set -- $want
expect_json "j['verified'] and j['reduced']['group']=='(2Z_16)^2' and j['reduced']['representatives']==4 and j['reduced']['step']==[2, 2] and j['num_transfers']==$1 and j['congestion_deficiency']==$2 and j['tau_b_fraction']=='$3'" \
	$S --topology torus:16x16 --collective allreduce --algo swing --variant bandwidth --reduced --json
expect_json 'j["verified"] and round(j["congestion_deficiency"], 3)==1.184 and j["reduced"]["order"]==1024' \
	$S --topology torus:64x64 --collective allreduce --algo swing --variant bandwidth --json
grep -q "^ofc schedule: 4096 nodes: explicit Swing schedules stop at 1024: Swing symmetry-reduced instead (4 nodes' programs x (2Z_64)^2; --reduced asks for it)$" "$TMP/err" &&
	ok || bad "automatic Swing reduction note" "$(head -c 400 "$TMP/err")"
# Recursive doubling: XOR on the ids, node 0's sends; the explicit figures.
for v in bandwidth latency; do
	want=$($S --topology torus:8x8 --collective allreduce --algo recursive-doubling --variant $v --json |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_transfers"], repr(j["congestion_deficiency"]), j["tau_b_fraction"])')
	set -- $want
	expect_json "j['verified'] and j['reduced']['group']=='Z_2^6' and j['num_transfers']==$1 and j['congestion_deficiency']==$2 and j['tau_b_fraction']=='$3'" \
		$S --topology torus:8x8 --collective allreduce --algo recursive-doubling --variant $v --reduced --json
done
expect_json 'j["verified"] and j["reduced"]["group"]=="Z_2^12" and j["num_steps"]==12' \
	$S --topology torus:64x64 --collective allreduce --algo recursive-doubling --variant latency --json
grep -q "^ofc schedule: 4096 nodes: above 1024 recursive-doubling is symmetry-reduced (node 0's program x Z_2^12; --reduced asks for it)$" "$TMP/err" &&
	ok || bad "automatic recursive doubling reduction note" "$(head -c 400 "$TMP/err")"
# Baselines: the explicit figures; a ring along the Gray cycle under 2 e_j.
for a in ring bidir-ring torus-rings; do
	want=$($S --topology torus:6x8 --collective allreduce --algo $a --json |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["num_transfers"], j["num_steps"], j["tau_b_fraction"])')
	set -- $want
	expect_json "j['verified'] and j['reduced']['verified'] and j['num_transfers']==$1 and j['num_steps']==$2 and j['tau_b_fraction']=='$3'" \
		$S --topology torus:6x8 --collective allreduce --algo $a --reduced --json
done
expect_json 'j["reduced"]["group"]=="6Z_6 x 2Z_8" and j["reduced"]["step"]==[6, 2] and j["reduced"]["representatives"]==12' \
	$S --topology torus:6x8 --collective allgather --algo bidir-ring --reduced --json
# What cannot be reduced says why.
expect_error 2 "ofc schedule: bfb: --reduced: genkautz:64,4: genkautz graphs have no translation group here (torus, hypercube, circulant, ring, biring, complete, hamming, bipartite)" \
	$S --topology genkautz:64,4 --collective allgather --reduced
# A degraded torus keeps the healthy group: the healthy program and a
# patch (test_failures.sh checks its schedule).
expect_stdout_has "where the failures reach: 2 nodes solved whole" \
	$S --topology torus:4x4 --fail 0-1 --collective allgather --reduced
expect_error 2 "ofc schedule: bidir-ring: --reduced: a ring is kept by the translations along a dimension of even size >= 4 (its reflected Gray code cycle, reduced by 2 e_j); hypercube:6 has none (on a hypercube every translation is its own inverse, so at most two keep a cycle)" \
	$S --topology hypercube:6 --collective allgather --algo bidir-ring --reduced
expect_error 2 "ofc schedule: ring: --reduced: a ring is kept by the translations along a dimension of even size >= 4 (its reflected Gray code cycle, reduced by 2 e_j); torus:3x5 has none" \
	$S --topology torus:3x5 --collective allgather --algo ring --reduced
finish
