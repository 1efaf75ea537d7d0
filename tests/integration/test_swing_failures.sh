#!/bin/sh
# Swing on a torus with failed links and ports, through the CLI and ofcd:
# the healthy reduced program with its transfers re-routed around the
# failed arcs, verified, priced against healthy Swing and the degraded
# bound; a config's failed links take the same path as --fail; ofcd's
# answer to `fail` on a fabric whose collective is Swing is that schedule
# (the CLI's time for the same config), and a restore drops it. A sim
# switch: nothing leaves the machine.
SUITE=swing-failures
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --size 1MiB --alpha 10us --bandwidth 100Gbps --threads 1"

# The CLI: a link, a port (one arc), several links; the JSON says what moved.
expect_json "j['algorithm'] == 'swing' and j['verified'] and j['topology'] == 'torus:8x8 without 0-1' and j['rerouted_transfers'] > 0 and j['time_us'] > j['healthy_time_us'] > 0 and 'around failed arcs' in j['routing']" \
	$S --topology torus:8x8 --fail 0-1 --collective allreduce --algo swing --json
one=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['time_us'])" "$TMP/out")
# Explicit up to 1,024 nodes as healthy Swing is (the program's expansion),
# reduced when asked: the same detours, the same time.
expect_json "j['verified'] and not j.get('reduced') and j['time_us'] == $one" \
	$S --topology torus:8x8 --fail 0-1 --collective allreduce --algo swing --json
expect_json "j['verified'] and j['reduced'] and j['time_us'] == $one" \
	$S --topology torus:8x8 --fail 0-1 --collective allreduce --algo swing --reduced --json
expect_json "j['verified'] and 0 < j['rerouted_transfers'] and j['healthy_time_us'] < j['time_us'] <= $one" \
	$S --topology torus:8x8 --fail '0>1' --collective allreduce --algo swing --json
expect_json "j['verified'] and j['variant'] == 'latency' and j['rerouted_transfers'] > 0" \
	$S --topology torus:16x16 --fail 0-1,17-33,200-201 --collective allreduce --algo swing --variant latency --json
# Above the explicit size the same (the program is reduced either way).
expect_json "j['verified'] and j['rerouted_transfers'] > 0 and j['reduced']" \
	$OFC schedule --topology torus:64x64 --fail 5-6 --collective allreduce --algo swing --size 64MiB --json

# A config's failed links: the same schedule as --fail.
cat >"$TMP/fab.yaml" <<'EOF'
name: simfab
hosts: {count: 64, prefix: h, ports: 4}
switches:
  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:8x8
collectives:
  - {op: allreduce, size: 1MiB, algorithm: swing}
EOF
sed 's|^topology: .*|topology: {spec: torus:8x8, failed_links: [[h0, h1]]}|' "$TMP/fab.yaml" >"$TMP/less.yaml"
expect_json "j['verified'] and j['rerouted_transfers'] > 0 and j['topology'] == 'torus:8x8 without h0-h1'" \
	$OFC schedule "$TMP/less.yaml" --collective allreduce --algo swing --json
cli_us=$(python3 -c "import json,sys; print('%g' % json.load(open(sys.argv[1]))['time_us'])" "$TMP/out")

# ofcd: `fail` answers with it, status holds it, `restore` drops it.
SOCK="$TMP/ofcd.sock"
ST="$TMP/state"
mkdir -p "$ST"
$OFC apply "$TMP/fab.yaml" --state-dir "$ST" >/dev/null 2>&1 || bad "apply fab.yaml"
$BUILD/ofcd --credentials-dir "$TMP" --foreground --config "$TMP/fab.yaml" --socket "$SOCK" \
	--state-dir "$ST" 2>>"$TMP/d.log" &
ofcd_pid=$!
_w=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 3000 ]; do
	sleep 0.01
	_w=$((_w + 1))
done
# The healthy state's schedule is the config's algorithm too, not only the
# failures' re-plan (and not BFB, the default for a topology asked by spec).
# The state's schedule is computed after ofcd answers, so it is waited for.
deadline 60
until $OFC --socket "$SOCK" status --json >"$TMP/out" 2>&1 &&
	python3 -c 'import json,sys; sys.exit("schedule" not in json.load(open(sys.argv[1])))' "$TMP/out" 2>/dev/null ||
	past $_end; do
	sleep 0.05
done
expect_json 'j["schedule"]["topology"] == "torus:8x8" and j["schedule"]["verified"] and j["schedule"]["algorithm"] == "swing"' \
	$OFC --socket "$SOCK" status --json
expect_stdout_has "h0-h1 failed; 1 failure in effect (h0-h1); swing allreduce on torus:8x8 without h0-h1: 12 steps, $cli_us us" \
	$OFC --socket "$SOCK" fail h0-h1
if grep -q ", verified, " "$TMP/out"; then ok; else bad "ofcd's swing answer not verified" "$(cat "$TMP/out")"; fi
expect_json 'j["schedule"]["topology"] == "torus:8x8 without h0-h1" and j["schedule"]["verified"] and j["schedule"]["algorithm"] == "swing"' \
	$OFC --socket "$SOCK" status --json
expect_stdout_has "h0-h1 restored; no failure in effect; " $OFC --socket "$SOCK" restore h0-h1
expect_json 'j["schedule"]["topology"] == "torus:8x8" and j["schedule"]["verified"] and j["schedule"]["algorithm"] == "swing"' \
	$OFC --socket "$SOCK" status --json
kill -TERM "$ofcd_pid"
wait "$ofcd_pid"

finish
