#!/bin/sh
# Failed links and edge lists (issue 14): on torus:8x8 with 1, 2 and 8 failed
# links every engine's schedule passes the verifier and, read back transfer
# by transfer, never crosses a failed link; the all-to-all MCF is optimal
# (its LP bound meets its flow); each outcome is priced against the healthy
# torus; edge-list files give the values worked out by hand; bad input is
# refused with a clear message and exit 2.
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
sed 's/failed_ports: \[0\]/failed: true/' "$TMP/p16.yaml" >"$TMP/bad5.yaml"
expect_error 2 "$TMP/bad5.yaml:9:34: host 'h5' is failed: schedules cannot leave a host out yet; take it out of 'hosts' and the topology, or fail its ports" \
	$S "$TMP/bad5.yaml" --collective allgather
sed 's/failed_ports: \[0\]/failed_ports: [0, 1, 2, 3]/' "$TMP/p16.yaml" >"$TMP/bad6.yaml"
expect_error 2 "$TMP/bad6.yaml:9:41: with these failures topology 'torus:4x4' is no longer strongly connected: some hosts could never reach others" \
	$S "$TMP/bad6.yaml" --collective allgather

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
expect_error 2 "ofc: --fail '0-9': failed link 0-9: torus:8x8 has no such link (or it is named twice)" \
	$S --topology torus:8x8 --fail 0-9 --collective allgather
expect_error 2 "ofc: --fail '0-1,0-1': failed link 0-1: torus:8x8 has no such link (or it is named twice)" \
	$S --topology torus:8x8 --fail 0-1,0-1 --collective allgather
expect_error 2 "ofc: --fail '0-1,a': 'a' is not a link: write U-V (both directions) or U>V (one arc)" \
	$S --topology torus:8x8 --fail 0-1,a --collective allgather
expect_error 2 "ofc: --fail '0-64': failed link 0-64: torus:8x8 has nodes 0..63" \
	$S --topology torus:8x8 --fail 0-64 --collective allgather
printf '0-1\n1-2 2+3\n' >"$TMP/bad.edges"
expect_error 2 "$TMP/bad.edges:2:5: '2+3' is not a link: write U-V (both directions) or U>V (one arc)" \
	$S --topology "edges:$TMP/bad.edges" --collective allgather
# Cutting a node off: not strongly connected, said so.
expect_exit 2 $S --topology "edges:$TMP/star.edges" --fail 0-1 --collective allgather
if grep -q "not strongly connected" "$TMP/err"; then ok; else bad "cut-off node: $(cat "$TMP/err")"; fi
# The torus algorithms need the family; a degraded torus is not one.
for a in swing recursive-doubling bucket; do
	expect_error 2 "ofc schedule: $a: $a routes over every link of a whole torus and torus:8x8 without 0-1 has failed links (bfb, mcf and the recursive baseline schedule degraded graphs)" \
		$S --topology torus:8x8 --fail "$F1" --collective allreduce --algo $a
done

finish
