#!/bin/sh
# How far today's degraded schedules sit above the degraded fabric's own
# lower bound (sched/bound_degraded.c): per topology, links failed at
# random (RATES of them, SEEDS seeds each: U-V links on symmetric graphs,
# U>V arcs on directed ones) and one switch's ports (a 32-port OCS carrying
# port 0 of hosts 0 .. 31, both ways), an allreduce of 64 MiB by the
# default engine (BFB): its time, the best bound ofc proves, their ratio,
# what binds (node or cut) and whether the cut is proven the fluid
# optimum, BFB as built beside (where ofc gave it re-balanced across
# steps: its time over the same bound; "given": BFB as built is the one
# given), the healthy bound and
# the time against the healthy topology.
#
#   bench/degraded_quality.sh [OFC]     (SPECS, RATES, SEEDS to change the lists)
#
# The issue's list adds an 8,192-node torus (SPECS=torus:64x128): left out
# by default; there BFB is the healthy structure and a patch (10-20 s and
# 0.7 GB a run here; not re-balanced), and with 5% failed the explicit BFB,
# verified in chunks of shards (over 4 GB a run: its schedule alone).
set -u
OFC=${1:-build/ofc}
SPECS=${SPECS:-"torus:16x16 torus:32x32 hypercube:10 genkautz:1024,4"}
RATES=${RATES:-"0.001 0.01 0.05"}
SEEDS=${SEEDS:-"1 2 3"}
COLL=${COLL:-allreduce}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| topology | failed | seed | links | time us | bound us | ratio | binds | proven | BFB as built | healthy bound us | vs healthy | s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in $SPECS; do
	"$OFC" topo "$spec" --json --ports --threads 2 >"$tmp/topo.json" || exit 1
	for what in $RATES switch; do
		for seed in $SEEDS; do
			[ "$what" = switch ] && [ "$seed" != "${SEEDS%% *}" ] && continue
			fail=$(python3 - "$tmp/topo.json" "$what" "$seed" <<'PY'
import json, random, sys
j = json.load(open(sys.argv[1]))
what, seed = sys.argv[2], int(sys.argv[3])
if what == 'switch':
    p0 = j['ports'][0]
    arcs = set()
    for u in range(min(32, j['nodes'])):
        arcs.add((u, p0[u]))
        arcs.add((p0.index(u), u))
    print(','.join('%d>%d' % a for a in sorted(arcs) if a[0] != a[1]))
    sys.exit()
if j['symmetric']:
    links = sorted({(min(u, v), max(u, v)) for u, v in j['edge_list'] if u != v})
    sep = '-'
else:
    links = sorted({(u, v) for u, v in j['edge_list'] if u != v})
    sep = '>'
k = max(1, round(float(what) * len(links)))
print(','.join('%d%s%d' % (u, sep, v) for u, v in random.Random(seed).sample(links, k)))
PY
)
			t0=$(date +%s.%N)
			"$OFC" schedule --topology "$spec" --collective "$COLL" --size 64MiB --threads 2 \
				--fail "$fail" --json >"$tmp/out" 2>"$tmp/err"
			rc=$?
			t1=$(date +%s.%N)
			python3 - "$spec" "$what" "$seed" "$fail" "$rc" "$t0" "$t1" "$tmp/out" "$tmp/err" <<'PY'
import json, sys
spec, what, seed, fail, rc, t0, t1, out, err = sys.argv[1:]
n = fail.count(',') + 1
label = 'switch' if what == 'switch' else '%g%%' % (100 * float(what))
secs = float(t1) - float(t0)
if rc != '0':
    why = open(err).read().strip().splitlines()
    print('| %s | %s | %s | %d | refused: %s |  |  |  |  |  |  |  | %.1f |' % (
        spec, label, seed, n, (why[-1] if why else 'exit ' + rc)[:80], secs))
    sys.exit()
j = json.load(open(out))
b = j.get('degraded_bound')
if not b:
    print('| %s | %s | %s | %d | %.6g | (none) |  |  |  |  |  |  | %.1f |' % (spec, label, seed, n, j['time_us'], secs))
    sys.exit()
phases = [b[p] for p in ('allgather', 'reduce_scatter') if p in b]
proven = all(p['optimal'] for p in phases)
rb = j.get('rebalanced', {})
bfb = ('%.4f' % (rb['bfb_time_us'] / b['time_us'])) if rb.get('kept') else 'given'
print('| %s | %s | %s | %d | %.6g | %.6g | %.4f | %s | %s | %s | %.6g | %+.1f%% | %.1f |' % (
    spec, label, seed, n, j['time_us'], b['time_us'], j['time_us'] / b['time_us'], b['binds'],
    'yes' if proven else 'no', bfb, b['healthy_lower_bound_us'],
    100 * j['healthy']['excess'] if 'excess' in j.get('healthy', {}) else float('nan'), secs))
PY
		done
	done
done
