#!/bin/sh
# A job's plan run on the netns testbed: tests/configs/tb16-torus.yaml
# (16 hosts, 4 ports, torus:4x4) as a patch panel of 2 ms a move, an ocs-emu
# with --delay-ms 2 behind it, every circuit shaped to RATE_SCALE x 1 Gb/s,
# and a workload whose three small all-gathers alternate kinds of groups
# while the large one wants the tensor-parallel groups' links. `ofc testbed
# run --workload` measures the switching's overhead first (unless
# OVERHEAD=T,C gives it), weighs the ways with it, runs static, per-phase
# and chosen ITERATIONS times each and prints predicted against measured.
# Needs root; skipped otherwise. Results: bench/results/workload.md.
#   RATE_SCALE=0.02 ITERATIONS=2 sh bench/workload_testbed.sh
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
RATE_SCALE=${RATE_SCALE:-0.02}
ITERATIONS=${ITERATIONS:-2}
if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "workload testbed bench: SKIP (needs root and network namespaces)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
NAME="wlb$$"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
sed -e "s|^name: tb16|name: $NAME|" -e "s|^  ports: 4|  ports: 4\n  port_rate: 1Gbps|" \
	-e "s|type: ocs|type: patch-panel|" -e "s|reconfig_time: 10ms|move_time: 2ms|" \
	-e "s|type: tl1|type: patch-panel|" -e "s|credentials: .*|credentials: ocs0.cred|" \
	tests/configs/tb16-torus.yaml >"$TMP/t.yaml"
cat >>"$TMP/t.yaml" <<'EOT'
workload:
  name: alternating
  iterations: 1000
  parallelism: {tp: 4, dp: 4}
  phases:
    - {name: ag1, collective: allgather, group: tp, size: 64KiB}
    - {name: ag2, collective: allgather, group: dp, size: 64KiB}
    - {name: ag3, collective: allgather, group: tp, size: 64KiB}
    - {name: big, collective: allgather, group: tp, size: 4MiB}
EOT
"$BUILD/ocs-emu" --listen 127.0.0.1:0 --port-file "$TMP/emu.port" --ports 64 \
	--credentials configs/credentials/ocs0.cred --delay-ms 2 2>"$TMP/emu.err" &
EMU=$!
i=0
while [ ! -s "$TMP/emu.port" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
DEV="ocs0=127.0.0.1:$(cat "$TMP/emu.port")"
cleanup() {
	$OFC testbed down "$TMP/t.yaml" --state-dir "$TMP/st" >/dev/null 2>&1
	kill "$EMU" 2>/dev/null
	wait "$EMU" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
$OFC apply "$TMP/t.yaml" --device "$DEV" --state-dir "$TMP/st" >/dev/null || exit 1
$OFC testbed up "$TMP/t.yaml" --device "$DEV" --state-dir "$TMP/st" --rate-scale "$RATE_SCALE" ||
	exit 1
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
set -- --iterations "$ITERATIONS"
[ -n "$OVERHEAD" ] && set -- "$@" --switch-overhead "$OVERHEAD"
$OFC testbed run "$TMP/t.yaml" --state-dir "$TMP/st" --device "$DEV" --workload config "$@"
status=$?
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
