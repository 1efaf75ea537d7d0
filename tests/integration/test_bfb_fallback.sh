#!/bin/sh
# BFB refused for size on a torus with failed ports (its explicit schedule
# and its healthy structure plus a patch both over the memory limit): an
# allreduce is answered by Swing's healthy program with detours around the
# failed arcs, verified, priced against the degraded bound and against BFB
# on the healthy torus, and the answer says so with BFB's refusal, through
# the CLI (--max-memory) and ofcd (--max-request-memory: `fail`'s re-plan,
# the state's schedule, GetSchedule). Where Swing cannot answer either (a
# failed host), or is not tried (allgather), the refusal stays BFB's, with
# both its reasons (and Swing's). 3% of torus:64x64's ports: BFB's patch
# needs about 306 MiB (its own estimate, whatever the process holds), Swing
# a few MiB over what the process holds, so 288 MiB leaves room for a
# sanitizer build's ofcd (about 180 MiB held there).
SUITE=bfb-fallback
. "$(dirname "$0")/lib.sh"

# 3% of the ports of N hosts (4 each, none two of one host), as `fail`
# names them ("hU:P ...", PORTS=hosts) or as the arcs they take down on an
# A x B torus (per-port wiring, port p along +x -x +y -y: "u>v,...").
ports() {
	python3 - "$@" <<'EOF'
import sys
a, b = (int(x) for x in sys.argv[1].split(':')[1].split('x'))
n, x, used, arcs, names = a * b, 0x9e3779b97f4a7c15, set(), [], []
while len(used) < 4 * n * 3 // 100:
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
    u, p = x % n, (x >> 32) % 4
    if u in used:
        continue
    used.add(u)
    names.append('h%d:%d' % (u, p))
    i, k = u % a, u // a
    d = [(1, 0), (-1, 0), (0, 1), (0, -1)][p]
    v = (i + d[0]) % a + ((k + d[1]) % b) * a
    w = (i - d[0]) % a + ((k - d[1]) % b) * a
    arcs += [c for c in ('%d>%d' % (u, v), '%d>%d' % (w, u)) if c not in arcs]
print(' '.join(names) if sys.argv[2:] == ['names'] else ','.join(arcs))
EOF
}
F=$(ports torus:64x64)
S="$OFC schedule --topology torus:64x64 --size 64MiB --threads 2 --max-memory 288MiB"

# The CLI: Swing answers, verified, with fallback_from and BFB's refusal
# (its explicit estimate and why its structure was not kept); priced
# against the degraded bound (its bandwidth term: routed peers cross
# several hops a step, so the diameter does not bound their steps) and BFB
# on the healthy torus.
expect_json "j['algorithm'] == 'swing' and j['verified'] and j['fallback_from'] == 'bfb' and \
j['fallback_why'].startswith('BFB allreduce on 4096 nodes needs about ') and \
'; not kept as structure: ' in j['fallback_why'] and 'over the memory limit of 288 MiB' in j['fallback_why'] and \
j['rerouted_transfers'] > 0 and j['healthy']['algorithm'] == 'bfb' and \
0 < j['healthy']['time_us'] < j['time_us'] and \
j['degraded_bound']['healthy_lower_bound_us'] < j['lower_bound_us'] <= j['degraded_bound']['time_us'] < j['time_us']" \
	$S --collective allreduce --fail "$F" --json
grep -q "^ofc schedule: bfb refused (BFB allreduce on 4096 nodes needs about .*; not kept as structure: .*): Swing around the failed links instead, bandwidth-optimal (the cost model's choice); Swing kept as structure: the healthy program x (2Z_64)^2, [0-9]* transfers re-routed around [0-9]* failed arcs$" "$TMP/err" &&
	ok || bad "the CLI's note says BFB was refused and Swing answers" "$(cat "$TMP/err")"
cli_us=$(python3 -c "import json,sys; print('%g' % json.load(open(sys.argv[1]))['time_us'])" "$TMP/out")
expect_stdout_has "  instead of   bfb, refused: BFB allreduce on 4096 nodes needs about " \
	$S --collective allreduce --fail "$F"
grep -q "^  time         [0-9.]* us (+[0-9.]*% vs bfb on the healthy torus:64x64, [0-9.]* us)$" "$TMP/out" &&
	ok || bad "the CLI's time line is against BFB on the healthy torus" "$(head -8 "$TMP/out")"
# Asked by name, the same: BFB is what was asked and refused.
expect_json "j['algorithm'] == 'swing' and j['fallback_from'] == 'bfb' and '%g' % j['time_us'] == '$cli_us'" \
	$S --collective allreduce --algo bfb --fail "$F" --json

# Where Swing cannot answer: a failed host (every Swing exchange includes
# it); BFB's two reasons, then Swing's.
expect_exit 1 $S --collective allreduce --fail "$F,7"
grep -q "^ofc schedule: bfb: BFB allreduce on 4095 nodes needs about .* over the memory limit of 288 MiB (ofc --max-memory, ofcd --max-request-memory); not kept as structure: .*; nor Swing around the failed links: a failed host takes part in every Swing exchange" "$TMP/err" &&
	ok || bad "a failed host: BFB's refusal and Swing's" "$(cat "$TMP/err")"
# Swing's detours are an allreduce's: an allgather keeps BFB's refusal.
expect_exit 1 $S --collective allgather --fail "$F" --max-memory 48MiB
grep -q "^ofc schedule: bfb: BFB allgather on 4096 nodes needs about .*; not kept as structure: [^;]*$" "$TMP/err" &&
	ok || bad "an allgather: BFB's refusal, both reasons, no Swing" "$(cat "$TMP/err")"

# ofcd: 4096 hosts of 4 ports on 4 sim switches, an allreduce workload.
# `fail` answers with Swing and BFB's refusal; the state and GetSchedule
# hold the same schedule; a failed host among them: no schedule, with the
# CLI's reasons.
{
	printf 'name: fb\nhosts: {count: 4096, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n'
	for i in 0 1 2 3; do
		printf '  - {name: ocs%s, type: ocs, ports: 4096, driver: {type: sim}}\n' "$i"
	done
	printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n'
	printf 'topology: torus:64x64\ncollectives:\n  - {op: allreduce, size: 64MiB}\n'
} >"$TMP/fab.yaml"
SOCK="$TMP/ofcd.sock"
ST="$TMP/state"
mkdir -p "$ST"
$OFC apply "$TMP/fab.yaml" --state-dir "$ST" >/dev/null 2>&1 || bad "apply fab.yaml"
$BUILD/ofcd --credentials-dir "$TMP" --foreground --config "$TMP/fab.yaml" --socket "$SOCK" \
	--state-dir "$ST" --max-request-memory 288MiB 2>>"$TMP/d.log" &
ofcd_pid=$!
deadline 60
until $OFC --socket "$SOCK" status 2>/dev/null | grep -q '^  schedule' || past $_end; do sleep 0.05; done
NAMES=$(ports torus:64x64 names)
# shellcheck disable=SC2086 # one word per port
expect_stdout_has "swing allreduce on torus:64x64 without the failures in effect: 24 steps, " \
	$OFC --socket "$SOCK" fail $NAMES --timeout 120
grep -q ", verified, Swing around the failed links (the healthy program x (2Z_64)^2, [0-9]* transfers re-routed around [0-9]* failed arcs) instead of bfb, refused: BFB allreduce on 4096 nodes needs about .*; not kept as structure: .*, re-planned in " "$TMP/out" &&
	ok || bad "ofcd's answer to fail: Swing instead of BFB, and why" "$(head -c 1500 "$TMP/out")"
expect_json 'j["schedule"]["algorithm"] == "swing" and j["schedule"]["verified"] and j["schedule"]["detail"]["direct"]["fallback_from"] == "bfb"' \
	$OFC --socket "$SOCK" status --json
expect_json "j['algorithm'] == 'swing' and j['verified'] and j['fallback_from'] == 'bfb' and 'not kept as structure' in j['fallback_why']" \
	$OFC --socket "$SOCK" schedule --collective allreduce --summary --json
expect_stdout_has "no failure in effect; " $OFC --socket "$SOCK" restore --all --timeout 60
# shellcheck disable=SC2086
expect_stdout_has "; no schedule: BFB allreduce on 4095 nodes needs about " \
	$OFC --socket "$SOCK" fail $NAMES h7 --timeout 120
grep -q "; not kept as structure: .*; nor Swing around the failed links: a failed host takes part in every Swing exchange" "$TMP/out" &&
	ok || bad "ofcd: a failed host leaves no schedule, with BFB's and Swing's reasons" "$(head -c 1500 "$TMP/out")"
kill -TERM "$ofcd_pid"
wait "$ofcd_pid"

finish
