#!/bin/sh
# make run: the main job of ofc on an example fabric, end to end.
#   1. validate the config and show the fabric, its topology and circuits;
#   2. plan the collective schedules it asks for, verify and price them (and
#      OpTree against its baselines on the paper's 16-node WDM ring, and an
#      all-to-all by max concurrent flow on the same fabric);
#   3. reconfigure the switch: an OCS emulator (build/ocs-emu) stands in
#      for the Polatis switch on a loopback port; plan, apply, status.
# Nothing outside a temporary directory and the loopback port is touched.
set -eu
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
CONFIG=${1:-configs/torus64-ocs.yaml}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-demo.XXXXXX")
EMU=""
cleanup() {
	if [ -n "$EMU" ]; then
		kill "$EMU" 2>/dev/null || true
		wait "$EMU" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "ofc validate $CONFIG"
$OFC validate "$CONFIG"

step "ofc show $CONFIG"
$OFC show "$CONFIG"

step "ofc schedule $CONFIG --collective allreduce --size 64MiB --algo all"
$OFC schedule "$CONFIG" --collective allreduce --size 64MiB --algo all

step "ofc schedule $CONFIG --collective alltoall --size 1MiB --algo all"
$OFC schedule "$CONFIG" --collective alltoall --size 1MiB --algo all

step "ofc schedule configs/ring16-optree.yaml --collective allgather --algo all  (a WDM ring)"
$OFC schedule configs/ring16-optree.yaml --collective allgather --algo all

step "an emulated 256-port OCS on loopback (build/ocs-emu)"
"$BUILD/ocs-emu" --listen 127.0.0.1:0 --port-file "$TMP/port" --ports 256 \
	--credentials configs/credentials/ocs0.cred --state "$TMP/ocs.state" 2>"$TMP/emu.log" &
EMU=$!
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 500 ]; do
	sleep 0.01
	i=$((i + 1))
done
PORT=$(cat "$TMP/port")
echo "ocs-emu listening on 127.0.0.1:$PORT"
DEV="--device ocs0=127.0.0.1:$PORT --state-dir $TMP/state"
mkdir -p "$TMP/state" # ofc plan reads it and never creates it

step "ofc plan $CONFIG $DEV"
$OFC plan "$CONFIG" $DEV | head -12
step "ofc apply $CONFIG $DEV"
$OFC apply "$CONFIG" $DEV
step "ofc status $CONFIG $DEV"
$OFC status "$CONFIG" $DEV
