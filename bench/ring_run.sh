#!/bin/sh
# ofc ring run against build/mrr-emu on loopback: the realised
# timeline of OpTree schedules driven step by step through the MRR agent,
# with and without --overlap, against Eq. 3. Tuning is measured (loopback
# round trip plus the emulator's 25 us per retune), transmission is the
# cost model's. Rings: the paper's worked example (ring16, W = 2) and a
# 64-node ring with 8 wavelengths written here.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
TMP=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT
sed -e 's/^name: .*/name: ring64-bench/' -e 's/count: 16/count: 64/' -e 's/wavelengths: 2/wavelengths: 8/' \
	configs/ring16-optree.yaml >"$TMP/ring64.yaml"
for spec in "configs/ring16-optree.yaml 16 2" "$TMP/ring64.yaml 64 8"; do
	set -- $spec
	for coll in allgather allreduce; do
		for ov in "" --overlap; do
			rm -f "$TMP/port"
			"$BUILD/mrr-emu" --listen 127.0.0.1:0 --port-file "$TMP/port" --nodes "$2" \
				--wavelengths "$3" --interfaces 4 --mrrs 64 --ring ring0 --refuse-conflicts &
			pid=$!
			while [ ! -s "$TMP/port" ]; do sleep 0.01; done
			echo "== N=$2 W=$3 $coll ${ov:-(no overlap)}"
			"$BUILD/ofc" ring run "$1" --collective "$coll" $ov \
				--device "ring0=127.0.0.1:$(cat "$TMP/port")" --state-dir "$TMP/st" |
				sed -n '1p;/realised/p'
			kill $pid
			wait $pid 2>/dev/null
		done
	done
done
