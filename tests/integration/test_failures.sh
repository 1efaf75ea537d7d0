#!/bin/sh
# Failed links and edge lists: on torus:8x8 with 1, 2 and 8 failed
# links every engine's schedule passes the verifier and, read back transfer
# by transfer, never crosses a failed link; the all-to-all MCF is optimal
# (its LP bound meets its flow); each outcome is priced against the healthy
# torus; edge-list files give the values worked out by hand; failed hosts
# (bare nodes, failed_hosts) leave the collective to the survivors, checked
# transfer by transfer; bad input is refused with a clear message and exit 2.
SUITE=failures
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --size 1MiB --alpha 10us --bandwidth 100Gbps --threads 1"

# Torus node x + 8y: +x, -x, +y, -y neighbours (wrapping). The eight links
# are spread over the torus and include wrap-around ones (7-0, 56-0).
F1='0-1'
F2='0-1,27-35'
F8='0-1,27-35,7-0,56-0,12-13,42-50,63-62,20-28'

# check_schedule FILE LINKS: the schedule file is verified and no transfer
# uses a failed link in either direction (each transfer is one hop u -> v).
check_schedule() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
failed = set()
for w in sys.argv[2].split(','):
    u, v = (int(x) for x in w.split('-'))
    failed |= {(u, v), (v, u)}
n = 0
for st in j['steps']:
    for t in st['transfers']:
        n += 1
        if (t['src'], t['dst']) in failed:
            sys.exit('transfer %s crosses a failed link' % t)
if not j['verified'] or n != j['num_transfers'] or n == 0:
    sys.exit('verified %s, %d transfers read of %d' % (j['verified'], n, j['num_transfers']))
if not j.get('healthy_time_us', 0) > 0:
    sys.exit('no healthy_time_us')
EOF
}

run_check() {
	links=$1
	shift
	if $S --topology torus:8x8 --fail "$links" "$@" -o "$TMP/s.json" >"$TMP/out" 2>"$TMP/err" &&
		check_schedule "$TMP/s.json" "$links" 2>"$TMP/why"; then ok; else
		bad "--fail $links $*" "$(head -c 300 "$TMP/err")" "$(head -c 300 "$TMP/why")"
	fi
}

for links in "$F1" "$F2" "$F8"; do
	run_check "$links" --collective allgather --algo bfb
	run_check "$links" --collective allgather --algo bfb-lp
	run_check "$links" --collective reduce-scatter --algo bfb
	run_check "$links" --collective allreduce --algo bfb
	run_check "$links" --collective allgather --algo recursive
	run_check "$links" --collective alltoall --algo mcf --lowering paths
	run_check "$links" --collective alltoall --algo mcf --lowering single
	run_check "$links" --collective alltoall --algo direct
	run_check "$links" --collective alltoall --algo sp-balanced
	# The MCF on the degraded graph is optimal: the certified LP bound
	# meets the flow (and the fabric lost capacity: theta below healthy).
	# It started from the healthy solution (solved first for the price):
	# some of its trees kept, its lengths' bound at least the optimum.
	expect_json "j['mcf']['optimal'] and j['mcf']['stop']=='optimal' and abs(j['mcf']['lower_bound']-j['mcf']['objective'])<=1e-9*j['mcf']['objective'] and j['mcf']['theta']<1/64 and j['healthy']['topology']=='torus:8x8' and j['healthy']['excess']>0 and j['mcf']['warm_started'] and j['mcf']['warm_columns']>0 and j['mcf']['warm_bound_theta']>=j['mcf']['theta']*(1-1e-9) and j['mcf']['healthy_seconds']>0" \
		$S --topology torus:8x8 --fail "$links" --collective alltoall --lowering paths --json
	# BFB: steps are the degraded diameter; priced against the healthy
	# torus (63/64 in 8 steps: 80 us + 63/64 M/B).
	expect_json "j['verified'] and j['topology']=='torus:8x8 without $links' and abs(j['healthy']['time_us']-(80+63/64*2**20*8/100e3))<1e-6" \
		$S --topology torus:8x8 --fail "$links" --collective allgather --json
done

# BFB kept as structure (--reduced: the healthy program and a patch where
# the failures reach: the failed links' ends whole, the changed blocks of
# the others): -o streams a schedule that is verified and crosses no failed
# link; its time is within 2% of the explicit degraded BFB's; failures that
# lengthen the schedule (F8 here: a node 9 steps away where the diameter is
# 8) are kept as structure too, on the healthy program padded by a step a
# phase, at the explicit BFB's time.
for links in "$F1" "$F2"; do
	for c in allgather reduce-scatter allreduce; do
		run_check "$links" --collective $c --algo bfb --reduced
	done
done
$S --topology torus:16x16 --fail 0-1,35-51 --collective allreduce >"$TMP/explicit"
$S --topology torus:16x16 --fail 0-1,35-51 --collective allreduce --reduced >"$TMP/patched" 2>"$TMP/err"
# The time within 2% of the explicit degraded BFB's, never below it.
t_exp=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$TMP/explicit")
t_pat=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$TMP/patched")
if grep -q "^  reduced      node 0's healthy program (.*) x Z_16^2 (order 256) and a patch ([0-9]* transfers) where the failures reach: 4 nodes solved whole (.*), the changed blocks of [0-9]* more" "$TMP/patched" &&
	python3 -c "import sys; e, p = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not e <= p <= 1.02 * e)" "$t_exp" "$t_pat" &&
	grep -q "^ofc schedule: BFB kept as structure: the healthy program x Z_16^2" "$TMP/err"; then ok; else
	bad "patched vs explicit time" "$(grep time "$TMP/explicit")" "$(cat "$TMP/patched" "$TMP/err")"
fi
# -o streams the patched schedule's expansion as protobuf too: every
# transfer the JSON lists, on the degraded graph, none over 0-1.
$S --topology torus:16x16 --fail 0-1,35-51 --collective allreduce --reduced --format pb -o "$TMP/p.pb" >/dev/null 2>"$TMP/err"
$S --topology torus:16x16 --fail 0-1,35-51 --collective allreduce --reduced --format json -o "$TMP/p.json" >/dev/null 2>>"$TMP/err"
protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/p.pb" >"$TMP/p.txt" 2>>"$TMP/err"
if python3 - "$TMP/p.txt" "$TMP/p.json" <<'EOF'; then ok; else bad "patched -o as protobuf" "$(cat "$TMP/err")"; fi
import json, re, sys
t = open(sys.argv[1]).read()
j = json.load(open(sys.argv[2]))
pairs = re.findall(r'transfers \{\s*src: (\d+)\s*dst: (\d+)', t)
n = sum(len(s['transfers']) for s in j['steps'])
ok = (len(pairs) == n == j['num_transfers'] and 'topology: "torus:16x16 without 0-1,35-51"' in t
      and 'verified: true' in t and ('0', '1') not in pairs and ('1', '0') not in pairs)
sys.exit(not ok)
EOF
$S --topology torus:8x8 --fail "$F8" --collective allreduce >"$TMP/explicit"
$S --topology torus:8x8 --fail "$F8" --collective allreduce --reduced >"$TMP/out" 2>"$TMP/err"
t_exp=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$TMP/explicit")
t_pat=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$TMP/out")
if grep -q "^ofc schedule: BFB kept as structure: .*, each phase 1 step past the healthy diameter" "$TMP/err" &&
	grep -q "^  steps        18 " "$TMP/out" && grep -q "verified     yes" "$TMP/out" &&
	python3 -c "import sys; e, p = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not e <= p <= 1.02 * e)" "$t_exp" "$t_pat"
then ok; else bad "F8 --reduced" "$t_exp $t_pat" "$(cat "$TMP/err" "$TMP/out")"; fi

# A failed host kept as structure too (--reduced): its block dropped, its
# four neighbours solved whole; the time within 2% of the explicit
# survivors' BFB, never below; -o streams transfers on the whole graph's
# node numbers that neither touch node 5 nor carry its block, verified.
$S --topology torus:16x16 --fail 5 --collective allreduce >"$TMP/explicit"
$S --topology torus:16x16 --fail 5 --collective allreduce --reduced --format json -o "$TMP/h.json" >"$TMP/patched" 2>"$TMP/err"
t_exp=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$TMP/explicit")
t_pat=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$TMP/patched")
if grep -q "^  reduced      node 0's healthy program (.*) x Z_16^2 (order 256) and a patch ([0-9]* transfers) where the failures reach: 4 nodes solved whole" "$TMP/patched" &&
	grep -q "^  failed       node 5 of 256: no part in the collective" "$TMP/patched" &&
	grep -q "^ofc schedule: BFB kept as structure" "$TMP/err" &&
	python3 -c "import sys; e, p = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not e <= p <= 1.02 * e)" "$t_exp" "$t_pat" &&
	python3 - "$TMP/h.json" <<'EOF'; then ok; else bad "failed host --reduced" "$t_exp $t_pat" "$(cat "$TMP/err")"; fi
import json, sys
j = json.load(open(sys.argv[1]))
xs = [x for s in j['steps'] for x in s['transfers']]
sys.exit(not (j['verified'] and len(xs) == j['num_transfers'] and j['failed_nodes'] == [5] and
              all(5 not in (x['src'], x['dst'], x['origin']) for x in xs)))
EOF

# The degraded per-node bound beside it: node 6 hears 3 of its 4 links
# without 5>6, so an allgather's tau_B is at least (63/64) 4/3 = 1.3125.
expect_stdout_has 'node bound   tau_B >= 1.3125 (T_B >= 110.1 us): node 6 has 3 of 4 links in, node 5 3 out' \
	$S --topology torus:8x8 --fail '5>6' --collective allgather

# Less a link of a short ring of torus:4x8 (the long ones bind), the
# healthy flow with the link's flow rerouted keeps the healthy optimum,
# proven by the healthy lengths with no master.
expect_json "j['verified'] and j['mcf']['optimal'] and j['mcf']['repaired'] and j['mcf']['columns']==0 and abs(j['mcf']['objective']-32)<=1e-9*32 and abs(j['mcf']['lower_bound']-32)<=1e-9*32" \
	$S --topology torus:4x8 --fail 0-1 --collective alltoall --lowering paths --json

# One failed link, by hand: the failed link's ends lose a quarter of their
# in-bandwidth, so some step is slower than healthy, never faster.
expect_stdout_has 'vs healthy torus:8x8' $S --topology torus:8x8 --fail "$F1" --collective allgather
expect_stdout_has 'failed links: against healthy torus:8x8' \
	$S --topology torus:8x8 --fail "$F1" --collective allgather --algo all

# Edge lists. A bidirectional ring of 4: step 1 two shards on two links
# (U = 1), step 2 the opposite node's shard over both links (U = 1/2):
# tau_B = (2/4)(1 + 1/2) = 3/4. A star 1 - 0 - 2 (irregular): d = 2,
# U = 1 in both steps, tau_B = (2/3) 2 = 4/3.
printf '# ring\n0-1 1-2\n2-3,3-0\n' >"$TMP/ring.edges"
printf 'nodes 3\n0-1\n0-2  # the leaves\n' >"$TMP/star.edges"
expect_json "j['tau_b_fraction']=='3/4' and j['num_steps']==2 and j['verified']" \
	$S --topology "edges:$TMP/ring.edges" --collective allgather --json
expect_json "j['tau_b_fraction']=='4/3' and j['num_steps']==2 and j['verified'] and j['degree']==2" \
	$S --topology "edges:$TMP/star.edges" --collective allgather --json
expect_json "j['tau_b_fraction']=='8/3' and j['num_steps']==4 and j['verified']" \
	$S --topology "edges:$TMP/star.edges" --collective allreduce --json
expect_json "j['verified'] and j['mcf']['optimal']" \
	$S --topology "edges:$TMP/star.edges" --collective alltoall --lowering paths --json
# Failing a link of an edge list.
expect_json "j['tau_b_fraction']=='3/2' and j['num_steps']==3 and j['verified']" \
	$S --topology "edges:$TMP/ring.edges" --fail 3-0 --collective allgather --json

# Failures in a config: a topology's failed_links name host pairs, a host's
# failed_ports its dead NIC ports (both fibres). Port 0 of torus:4x4 is +x:
# h5's port 0 sends to h6 and hears h4, so failing it is --fail 5>6,4>5.
cat >"$TMP/f16.yaml" <<'EOT'
version: 1
name: f16
hosts: {count: 16, prefix: h, ports: 4, port_rate: 100Gbps}
topology:
  spec: torus:4x4
  failed_links:
    - [h0, h1]
EOT
tau() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['tau_b_fraction'])" "$1"; }
$S --topology torus:4x4 --fail 0-1 --collective allgather --json >"$TMP/a.json"
$S --topology torus:4x4 --fail '5>6,4>5' --collective allgather --json >"$TMP/b.json"
A=$(tau "$TMP/a.json")
B=$(tau "$TMP/b.json")
expect_json "j['tau_b_fraction']=='$A' and j['topology']=='torus:4x4 without h0-h1' and j['healthy']['topology']=='torus:4x4' and j['verified']" \
	$S "$TMP/f16.yaml" --collective allgather --json
sed 's/^hosts:.*/hosts:\n  - {name: h0, ports: 4}\n  - {name: h1, ports: 4}\n  - {name: h2, ports: 4}\n  - {name: h3, ports: 4}\n  - {name: h4, ports: 4}\n  - {name: h5, ports: 4, failed_ports: [0]}/; s/^    - \[h0, h1\]//; s/^  failed_links://' \
	"$TMP/f16.yaml" >"$TMP/p16.yaml"
for i in 6 7 8 9 10 11 12 13 14 15; do
	sed -i "/failed_ports/a\\  - {name: h$i, ports: 4}" "$TMP/p16.yaml"
done
expect_json "j['tau_b_fraction']=='$B' and j['topology']=='torus:4x4 without h5:0' and j['verified']" \
	$S "$TMP/p16.yaml" --collective allgather --json
# ... and the MCF runs on it too, optimal.
expect_json "j['verified'] and j['mcf']['optimal'] and j['healthy']['excess']>0" \
	$S "$TMP/p16.yaml" --collective alltoall --lowering paths --json

# Bad failures, each at its line and column.
sed 's/- \[h0, h1\]/- [h0, h9]/' "$TMP/f16.yaml" >"$TMP/bad1.yaml"
expect_error 2 "$TMP/bad1.yaml:7:7: failed link h0-h9: topology 'torus:4x4' has no link between them (or it is named twice)" \
	$S "$TMP/bad1.yaml" --collective allgather
sed 's/- \[h0, h1\]/- [h0, hx]/' "$TMP/f16.yaml" >"$TMP/bad2.yaml"
expect_error 2 "$TMP/bad2.yaml:7:7: failed link: no host 'hx'" $S "$TMP/bad2.yaml" --collective allgather
sed 's/- \[h0, h1\]/- h0/' "$TMP/f16.yaml" >"$TMP/bad3.yaml"
expect_error 2 "$TMP/bad3.yaml:7:7: a failed link is a pair of hosts, [HOST, HOST], not a scalar" \
	$S "$TMP/bad3.yaml" --collective allgather
sed 's/failed_ports: \[0\]/failed_ports: [4]/' "$TMP/p16.yaml" >"$TMP/bad4.yaml"
expect_error 2 "$TMP/bad4.yaml:9:41: host 'h5' has ports 0..3, not 4" $S "$TMP/bad4.yaml" --collective allgather
sed 's/failed_ports: \[0\]/failed_ports: [0, 1, 2, 3]/' "$TMP/p16.yaml" >"$TMP/bad6.yaml"
expect_error 2 "$TMP/bad6.yaml:9:41: with these failures topology 'torus:4x4' is no longer strongly connected: some hosts could never reach others" \
	$S "$TMP/bad6.yaml" --collective allgather

# Failed hosts: a bare node in --fail, or a config's
# topology.failed_hosts (or a host's failed: true), takes the host out: it
# neither sends nor receives nor forwards, and the collective runs among the
# others on what is left. check_nodes FILE NODES LINKS COLL: the schedule
# file lists NODES as failed_nodes and is verified; no transfer names a
# failed node (as sender, receiver, origin or target) or crosses a failed
# link; read back, every survivor ends with every other survivor's block
# (allgather), every survivor pair's block arrives (alltoall), or every
# surviving shard is reduced by a transfer into its owner (reduce-scatter);
# and the outcome is priced against the healthy graph.
check_nodes() {
	python3 - "$@" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
dead = {int(x) for x in sys.argv[2].split(',')}
failed = set()
for w in filter(None, sys.argv[3].split(',')):
    u, v = (int(x) for x in w.split('-'))
    failed |= {(u, v), (v, u)}
coll = sys.argv[4]
if j.get('failed_nodes') != sorted(dead):
    sys.exit('failed_nodes %s, not %s' % (j.get('failed_nodes'), sorted(dead)))
n = j['nodes']
alive = [u for u in range(n) if u not in dead]
got = {}
count = 0
for st in j['steps']:
    for t in st['transfers']:
        count += 1
        ends = {t['src'], t['dst'], t.get('origin', 0)} | ({t['target']} if 'target' in t else set())
        if ends & dead:
            sys.exit('transfer %s names a failed node' % t)
        if (t['src'], t['dst']) in failed:
            sys.exit('transfer %s crosses a failed link' % t)
        key = (t['dst'], t['origin'], t.get('target', -1))
        got[key] = got.get(key, 0) + t.get('length', 1)
if not j['verified'] or count != j['num_transfers'] or count == 0:
    sys.exit('verified %s, %d transfers read of %d' % (j['verified'], count, j['num_transfers']))
for u in alive:
    for b in alive:
        if u == b:
            continue
        if coll == 'allgather' and got.get((u, b, -1), 0) < 1 - 1e-9:
            sys.exit('node %d lacks block %d' % (u, b))
        if coll == 'alltoall' and got.get((b, u, b), 0) < 1 - 1e-9:
            sys.exit('block %d->%d never arrived' % (u, b))
    if coll == 'reduce-scatter' and not any(k[0] == u and k[1] == u for k in got):
        sys.exit('shard %d never reduced into its owner' % u)
if not j.get('healthy_time_us', 0) > 0:
    sys.exit('no healthy_time_us')
EOF
}

node_check() {
	nodes=$1 links=$2 coll=$3
	shift 3
	fails=$nodes${links:+,$links}
	if $S --topology torus:8x8 --fail "$fails" --collective "$coll" "$@" -o "$TMP/s.json" >"$TMP/out" 2>"$TMP/err" &&
		check_nodes "$TMP/s.json" "$nodes" "$links" "$coll" 2>"$TMP/why"; then ok; else
		bad "--fail $fails $coll $*" "$(head -c 300 "$TMP/err")" "$(head -c 300 "$TMP/why")"
	fi
}

for f in "27|" "27|0-1" "27,36|0-1,62-63"; do
	nodes=${f%|*} links=${f#*|}
	node_check "$nodes" "$links" allgather --algo bfb
	node_check "$nodes" "$links" allgather --algo bfb-lp
	node_check "$nodes" "$links" reduce-scatter --algo bfb
	node_check "$nodes" "$links" allreduce --algo bfb
	node_check "$nodes" "$links" alltoall --algo direct
	node_check "$nodes" "$links" alltoall --algo sp-balanced
done
# The MCF (its public API through the pipeline) among 63 survivors: the
# mirrored master over the automorphisms fixing node 27, optimal; the
# survivors' theta is below the healthy torus's 1/64 (fewer links per node
# near the hole), and the single-path lowering keeps it per pair.
node_check 27 "" alltoall --algo mcf --lowering paths
node_check 27 "" alltoall --algo mcf --lowering single
expect_json "j['mcf']['optimal'] and j['failed_nodes']==[27] and j['nodes']==64 and j['mcf']['theta']<1/64 and j['healthy']['topology']=='torus:8x8'" \
	$S --topology torus:8x8 --fail 27 --collective alltoall --lowering paths --json
# The time-stepped MCF (the default lowering) on a small torus less a node.
if $S --topology torus:4x4 --fail 5,0-1 --collective alltoall -o "$TMP/s.json" >"$TMP/out" 2>"$TMP/err" &&
	check_nodes "$TMP/s.json" 5 0-1 alltoall 2>"$TMP/why"; then ok; else
	bad "mcf steps on torus:4x4 less 5,0-1" "$(head -c 300 "$TMP/err")" "$(head -c 300 "$TMP/why")"
fi
# A ring baseline where a Hamiltonian cycle survives (torus:5x5 less one).
if $S --topology torus:5x5 --fail 7 --collective allgather --algo bidir-ring -o "$TMP/s.json" >"$TMP/out" 2>"$TMP/err" &&
	check_nodes "$TMP/s.json" 7 "" allgather 2>"$TMP/why"; then ok; else
	bad "bidir-ring on torus:5x5 less 7" "$(head -c 300 "$TMP/err")" "$(head -c 300 "$TMP/why")"
fi

# By hand: the bidirectional ring of five less node 0 is the line 1-2-3-4
# (d = 2). Allgather: the ends hear one shard per step over their one link
# for three steps (U = 1 each step): tau_B = (2/4)(1 + 1 + 1) = 3/2. The
# healthy ring: U = 1 twice, (2/5) 2 = 4/5. All-to-all: the middle link
# carries 2 x 2 shards each way, theta = 1/4 per link capacity.
expect_json "j['tau_b_fraction']=='3/2' and j['num_steps']==3 and j['nodes']==5 and j['failed_nodes']==[0] and j['topology']=='circulant:5:1 without 0' and abs(j['healthy']['time_us']-(20+4/5*2**20*8/100e3))<1e-6" \
	$S --topology circulant:5:1 --fail 0 --collective allgather --json
expect_json "abs(j['theta']-0.25)<1e-9 and j['mcf']['optimal'] and j['failed_nodes']==[0]" \
	$S --topology circulant:5:1 --fail 0 --collective alltoall --lowering paths --json
expect_stdout_has 'failed       node 0 of 5: no part in the collective, which the other 4 complete among themselves' \
	$S --topology circulant:5:1 --fail 0 --collective allgather
# The protobuf export lists the failed nodes.
$S --topology circulant:5:1 --fail 0 --collective allgather --format pb -o "$TMP/s.pb" >/dev/null 2>"$TMP/err"
if protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/s.pb" 2>"$TMP/why" | grep -qx 'failed_nodes: 0'; then ok; else
	bad "pb failed_nodes" "$(cat "$TMP/err" "$TMP/why")"
fi

# In a config: topology.failed_hosts (names), or failed: true on the host;
# the same schedule as --fail with the host's node.
cat >"$TMP/h16.yaml" <<'EOT'
version: 1
name: h16
hosts: {count: 16, prefix: h, ports: 4, port_rate: 100Gbps}
topology:
  spec: torus:4x4
  failed_hosts: [h5]
  failed_links:
    - [h0, h1]
EOT
$S --topology torus:4x4 --fail 5,0-1 --collective allreduce --json >"$TMP/a.json"
A=$(tau "$TMP/a.json")
expect_json "j['tau_b_fraction']=='$A' and j['topology']=='torus:4x4 without h0-h1,h5' and j['failed_nodes']==[5] and j['failed_hosts']==['h5'] and j['nodes']==16 and j['verified'] and j['healthy']['excess']>0" \
	$S "$TMP/h16.yaml" --collective allreduce --json
printf 'version: 1\nname: t16\nhosts:\ntopology: torus:4x4\n' >"$TMP/t16.yaml"
for i in $(seq 0 15); do
	if [ "$i" = 5 ]; then
		sed -i "/^hosts:/a\\  - {name: h5, ports: 4, failed: true}" "$TMP/t16.yaml"
	else
		sed -i "/^hosts:/a\\  - {name: h$i, ports: 4}" "$TMP/t16.yaml"
	fi
done
# (each host is put first: h15 is node 0, h5 node 10)
expect_json "j['failed_nodes']==[10] and j['failed_hosts']==['h5'] and j['nodes']==16 and j['verified']" \
	$S "$TMP/t16.yaml" --collective allgather --json
expect_stdout_has 'failed       host h5 of 16: no part in the collective' $S "$TMP/t16.yaml" --collective allgather
expect_stdout_has 'failures: schedules run on torus:4x4 without h5 (failed hosts take no part)' $OFC show "$TMP/t16.yaml"
# The testbed's executor checks every host's data: refused, said why.
expect_error 2 "ofc: $TMP/t16.yaml: 1 host is failed: running a schedule among the surviving hosts on the testbed is not supported (ofc schedule computes it)" \
	$OFC testbed run "$TMP/t16.yaml" --collective allgather --state-dir "$TMP/st"

# Bad failed hosts, each at its line and column.
sed 's/failed_hosts: \[h5\]/failed_hosts: [h5, hx]/' "$TMP/h16.yaml" >"$TMP/bad7.yaml"
expect_error 2 "$TMP/bad7.yaml:6:22: failed host: no host 'hx'" $S "$TMP/bad7.yaml" --collective allgather
sed 's/failed_hosts: \[h5\]/failed_hosts: [h5, h5]/' "$TMP/h16.yaml" >"$TMP/bad8.yaml"
expect_error 2 "$TMP/bad8.yaml:6:22: failed host 'h5' is named twice (line 6)" $S "$TMP/bad8.yaml" --collective allgather
sed 's/failed_hosts: \[h5\]/failed_hosts: h5/' "$TMP/h16.yaml" >"$TMP/bad9.yaml"
expect_error 2 "$TMP/bad9.yaml:6:17: 'failed_hosts' must be a list of host names, not a scalar" \
	$S "$TMP/bad9.yaml" --collective allgather
# h5's four neighbours (h1, h4, h6, h9) failed: h5 survives alone, cut off.
sed 's/failed_hosts: \[h5\]/failed_hosts: [h1, h4, h6, h9]/' "$TMP/h16.yaml" >"$TMP/bad10.yaml"
expect_error 2 "$TMP/bad10.yaml:8:7: with these failures topology 'torus:4x4' is no longer strongly connected: some surviving hosts could never reach others" \
	$S "$TMP/bad10.yaml" --collective allgather
sed 's/ports: 4}/ports: 4, failed: true}/' "$TMP/t16.yaml" >"$TMP/bad5.yaml"
expect_exit 2 $S "$TMP/bad5.yaml" --collective allgather
if grep -q "with 16 of 16 hosts failed there is no collective left to schedule" "$TMP/err"; then ok; else bad "all hosts failed: $(cat "$TMP/err")"; fi

# Bad failed nodes on the command line, and survivors cut apart.
expect_error 2 "ofc: --fail item 2 of 2: failed node 5 is named twice" \
	$S --topology torus:4x4 --fail 5,5 --collective allgather
expect_error 2 "ofc: --fail item 1 of 1: failed node 16: torus:4x4 has nodes 0..15" \
	$S --topology torus:4x4 --fail 16 --collective allgather
expect_error 2 "ofc: ring:6 without 0,3: the 4 surviving nodes are no longer strongly connected (some could never reach others): nothing to schedule" \
	$S --topology ring:6 --fail 0,3 --collective allgather
expect_error 2 "ofc: circulant:3:1 without 0,1: 2 of 3 nodes failed, no collective is left to schedule" \
	$S --topology circulant:3:1 --fail 0,1 --collective allgather

# An edge list named by a config resolves against the config's directory;
# its own errors keep their FILE:LINE:COL after the config's.
mkdir -p "$TMP/cfg"
printf '0-1 1-2 2-0\n' >"$TMP/cfg/tri.edges"
printf '0-1 1-2\n2~0\n' >"$TMP/cfg/bad.edges"
printf 'version: 1\nname: tri\nhosts: {count: 3, prefix: h, ports: 2}\ntopology: edges:tri.edges\n' >"$TMP/cfg/tri.yaml"
sed 's/tri.edges/bad.edges/' "$TMP/cfg/tri.yaml" >"$TMP/cfg/bad.yaml"
expect_json "j['topology']=='edges:$TMP/cfg/tri.edges' and j['tau_b_fraction']=='2/3' and j['num_steps']==1 and j['verified']" \
	$S "$TMP/cfg/tri.yaml" --collective allgather --json
expect_error 2 "$TMP/cfg/bad.yaml:4:11: topology 'edges:bad.edges': $TMP/cfg/bad.edges:2:1: '2~0' is not a link: write U-V (both directions) or U>V (one arc)" \
	$S "$TMP/cfg/bad.yaml" --collective allgather

# Bad input.
expect_error 2 "ofc: --fail item 1 of 1: failed link 0-9: torus:8x8 has no such link (or it is named twice)" \
	$S --topology torus:8x8 --fail 0-9 --collective allgather
expect_error 2 "ofc: --fail item 2 of 2: failed link 0-1: torus:8x8 has no such link (or it is named twice)" \
	$S --topology torus:8x8 --fail 0-1,0-1 --collective allgather
expect_error 2 "ofc: --fail item 2 of 2: 'a' is not a link: write U-V (both directions) or U>V (one arc), or U for a node" \
	$S --topology torus:8x8 --fail 0-1,a --collective allgather
expect_error 2 "ofc: --fail item 1 of 1: failed link 0-64: torus:8x8 has nodes 0..63" \
	$S --topology torus:8x8 --fail 0-64 --collective allgather
# A long list names the bad item by its position, and its reason whole
# (the list itself would push the reason out of the message): 800 links of
# torus:32x32, each node's to its row's next, but the 700th, 0-999, no link.
long=$(awk 'BEGIN { for (u = 0; u < 800; u++) {
	w = u == 699 ? "0-999" : u "-" (int(u / 32) * 32 + (u + 1) % 32)
	printf "%s%s", u ? "," : "", w } }')
expect_error 2 "ofc: --fail item 700 of 800: failed link 0-999: torus:32x32 has no such link (or it is named twice)" \
	$S --topology torus:32x32 --fail "$long" --collective allgather
# (spaces and a line break separate items as commas do)
expect_error 2 "ofc: --fail item 3 of 3: 'x' is not a link: write U-V (both directions) or U>V (one arc), or U for a node" \
	$S --topology torus:8x8 --fail "$(printf '0-1 1-2\nx')" --collective allgather
printf '0-1\n1-2 2+3\n' >"$TMP/bad.edges"
expect_error 2 "$TMP/bad.edges:2:5: '2+3' is not a link: write U-V (both directions) or U>V (one arc)" \
	$S --topology "edges:$TMP/bad.edges" --collective allgather
# Cutting a node off: not strongly connected, said so.
expect_exit 2 $S --topology "edges:$TMP/star.edges" --fail 0-1 --collective allgather
if grep -q "not strongly connected" "$TMP/err"; then ok; else bad "cut-off node: $(cat "$TMP/err")"; fi
# The torus baselines need the family; a degraded torus is not one.
for a in recursive-doubling bucket; do
	expect_error 2 "ofc schedule: $a: $a routes over every link of a whole torus and torus:8x8 without 0-1 has failed links (swing, bfb, mcf and the recursive baseline schedule degraded graphs)" \
		$S --topology torus:8x8 --fail "$F1" --collective allreduce --algo $a
done
# Swing keeps its structure: the healthy program, the transfers whose
# routes cross a failed arc re-routed, verified, priced against healthy.
for f in "$F1:2" '0>1:1'; do
	expect_exit 0 $S --topology torus:8x8 --fail "${f%:*}" --collective allreduce --algo swing
	if grep -q "^ofc schedule: Swing kept as structure: the healthy schedule, [1-9][0-9]* transfers re-routed around ${f#*:} failed arcs" "$TMP/err" &&
		grep -q "^  verified     yes" "$TMP/out" &&
		grep -q "% vs healthy torus:8x8, " "$TMP/out"; then ok; else
		bad "swing --fail ${f%:*}" "$(cat "$TMP/err" "$TMP/out")"
	fi
done
expect_exit 0 $S --topology torus:8x8 --fail "$F1" --collective allreduce --algo all
if grep -Eq "^  swing +12 .* yes .*vs healthy" "$TMP/out"; then ok; else bad "--algo all ranks swing" "$(cat "$TMP/out")"; fi
expect_error 2 "ofc schedule: swing: a failed host takes part in every Swing exchange (Swing keeps its structure around failed links and ports, not hosts)" \
	$S --topology torus:8x8 --fail 5 --collective allreduce --algo swing

finish
