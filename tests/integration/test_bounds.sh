#!/bin/sh
# No schedule printed below its own lower bound: every engine's time at or
# above the bound it prints, its ratio and "vs its lower bound" against
# that one bound (bound_check.py, over the JSON and the text), on random
# degraded tori and hypercubes (seeded), the shipped configs and server
# fabrics. Where hosts forward (the default), a routed transfer across k
# circuits pays k alphas (each host on the way sends it again), so Swing's
# detours are priced for their hops and the degraded fabric's bound, hop
# by hop, holds for it; where NICs forward, its bound is its own.
SUITE=bounds
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --alpha 10us --bandwidth 100Gbps --threads 1"
CHECK="$(dirname "$0")/bound_check.py"

# bounded CMD...: the command's JSON (with --json) and its text both hold
# the bound.
bounded() {
	if "$@" --json >"$TMP/b.json" 2>"$TMP/err" && "$@" >"$TMP/b.txt" 2>>"$TMP/err" &&
		python3 "$CHECK" "$TMP/b.json" "$TMP/b.txt" >"$TMP/why"; then ok; else
		bad "$*" "$(head -c 300 "$TMP/err")" "$(head -c 600 "$TMP/why")"
	fi
}

# The issue's case, small: Swing on a torus with one link down, the text's
# ratio and "vs" against one bound, the degraded fabric's, which it is
# above; the step line says the circuits the routes cross.
$S --size 64MiB --topology torus:16x16 --collective allreduce --algo swing --fail 5-6 --json \
	>"$TMP/sw.json" 2>"$TMP/err"
expect_json "j['lower_bound_us']==j['degraded_bound']['time_us'] and j['time_us']>j['lower_bound_us'] and abs(j['degraded_bound']['excess']-(j['ratio']-1))<1e-9 and j['tau_l']==j['hops'] and j['hops']>j['num_steps']" \
	cat "$TMP/sw.json"
expect_stdout_has "circuits: an alpha a circuit, where hosts forward" \
	$S --size 64MiB --topology torus:16x16 --collective allreduce --algo swing --fail 5-6
expect_stdout_has "vs its lower bound" \
	$S --size 64MiB --topology torus:16x16 --collective allreduce --algo swing --fail 5-6
# Healthy Swing pays its routes' circuits too: an alpha each where hosts
# forward, one a step where NICs do (the Swing paper's model).
a=$($S --size 1MiB --topology torus:8x8 --algo swing --collective allreduce --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["time_us"] - 10 * j["hops"])')
expect_json "abs(j['time_us']-10*j['num_steps']-$a)<1e-6 and j['hops']>j['num_steps']" \
	$S --size 1MiB --topology torus:8x8 --algo swing --collective allreduce --forwarding nic --json
# Where NICs forward, routed Swing's bound is the degraded tau_B* with the
# healthy steps, said, and it is above that one.
expect_stdout_has "NICs forward its routes (an alpha a step), so the healthy bound's" \
	$S --size 64MiB --topology torus:8x8 --collective allreduce --algo swing --fail 5-6 --forwarding nic
bounded $S --size 64MiB --topology torus:8x8 --collective allreduce --algo swing --fail 5-6 --forwarding nic
# A cut-through all-to-all where hosts forward: an alpha a circuit of its
# longest route, bounded by the store-and-forward bound.
expect_json "all(r['lower_bound_us']==j['lower_bound_us'] for r in j['comparison'] if 'error' not in r) and any(r['algorithm']=='mcf/paths' for r in j['comparison'])" \
	$S --size 1MiB --topology torus:8x8 --collective alltoall --algo all --json

# Random failures (seeded) on tori and a hypercube: every engine, every
# collective, JSON and text.
failures() { # SPEC FRACTION SEED: links of SPEC, a fraction of them at random
	$OFC topo "$1" --json --threads 1 >"$TMP/topo.json" || return 1
	python3 - "$TMP/topo.json" "$2" "$3" <<'PY'
import json, random, sys
j = json.load(open(sys.argv[1]))
links = sorted({(min(u, v), max(u, v)) for u, v in j['edge_list'] if u != v})
k = max(1, round(float(sys.argv[2]) * len(links)))
print(','.join('%d-%d' % l for l in random.Random(int(sys.argv[3])).sample(links, k)))
PY
}
for case in "torus:8x8 0.03 1" "torus:8x8 0.06 2" "torus:8x4 0.05 3" "torus:16x16 0.01 4" \
	"torus:4x4x4 0.04 5" "hypercube:6 0.04 6" "torus:4x4 0.1 7" "torus:3x3x3 0.04 5"; do
	set -- $case
	lost=$(failures "$1" "$2" "$3") || { bad "$1: no failure list"; continue; }
	for c in allgather reduce-scatter allreduce alltoall; do
		# (the all-to-all's MCF rows on the small tori alone: from 32 nodes
		# with failures its LPs and the fluid bound run to their time
		# limits, 50 s of CPU on torus:4x4x4, where 3x3x3 has all its rows
		# and the optimal fluid bound in 0.4 s; 256 nodes: allreduce alone)
		[ $c = alltoall ] && [ $1 != torus:4x4 ] && [ $1 != torus:3x3x3 ] && continue
		[ $1 = torus:16x16 ] && [ $c != allreduce ] && continue
		bounded $S --size 1MiB --topology "$1" --fail "$lost" --collective $c --algo all
	done
	bounded $S --size 64MiB --topology "$1" --fail "$lost" --collective allreduce
	case $1 in torus:*x*x* | torus:8x4 | torus:4x4) ;; torus:*)
		bounded $S --size 64MiB --topology "$1" --fail "$lost" --collective allreduce --algo swing
		bounded $S --size 1MiB --topology "$1" --fail "$lost" --collective allreduce --algo swing-all
		;;
	esac
done

# The shipped configs and server fabrics (fluid), as they come.
for f in configs/ring16-optree.yaml configs/testbed12-patch.yaml configs/testbed16-ocs.yaml \
	configs/torus64-ocs.yaml; do
	for c in allgather allreduce alltoall; do
		bounded $OFC schedule --size 1MiB --threads 1 "$f" --collective $c --algo all
	done
done
for f in examples/modelw/all-links-2.yaml examples/modelw/only-nvlink-2.yaml \
	examples/modelw/no-nvlink-4.yaml; do
	for c in allgather reduce-scatter; do
		bounded $OFC schedule "$f" --collective $c
	done
done

finish
