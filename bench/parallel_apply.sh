#!/bin/sh
# `ofc apply` on 16 switches driven side by side: 64 hosts of 16 ports,
# port j of every host on ocs-emu switch j (64 ports, --delay-ms D a
# change, the config's reconfig_time the same). Each round reconfigures
# circulant:64:1..8 <-> circulant:64:9..16: every switch removes and adds
# its 64 cross-connects (128 changes). Against each round's apply (the
# command's wall time, and the transaction's own seconds): the summed
# switch time (every change of every switch one after another: what a
# drive one device at a time cannot beat) and the slowest switch's own time
# (its changes x D: what a drive side by side cannot beat). The last row
# is the median of each column.
# sh bench/parallel_apply.sh [ROUNDS [DELAY_MS]]  (OFC=PATH: another build's ofc)
BUILD=${BUILD:-build}
OFC=${OFC:-$BUILD/ofc}
ROUNDS=${1:-4}
D=${2:-5}
N=16
HOSTS=64
# The emulators save their state after every change: on a tmpfs where
# there is one, so 16 of them do not queue on one disk's writes.
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
EMUS=""
trap 'kill $EMUS 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
# config OUT OFFSETS
config() {
	{
		printf 'version: 1\nname: par%s\nhosts: {count: %s, prefix: h, ports: %s}\nswitches:\n' $N $HOSTS $N
		i=0
		while [ $i -lt $N ]; do
			printf '  - {name: ocs%s, type: ocs, ports: %s, reconfig_time: %sms,\n' $i $HOSTS "$D"
			printf '     driver: {type: tl1, address: 127.0.0.1:1, credentials: ocs0.cred, timeout: 30s}}\n'
			i=$((i + 1))
		done
		printf 'wiring: {pattern: per-port, switches: [%s]}\n' "$(seq -s ', ' -f 'ocs%g' 0 $((N - 1)))"
		printf 'topology: circulant:%s:%s\n' $HOSTS "$2"
	} >"$1"
}
config "$TMP/a.yaml" "$(seq -s, 1 8)"
config "$TMP/b.yaml" "$(seq -s, 9 16)"

DEVS=""
i=0
while [ $i -lt $N ]; do
	: >"$TMP/s$i.state"
	$BUILD/ocs-emu --listen 127.0.0.1:0 --port-file "$TMP/s$i.port" --ports $HOSTS \
		--credentials "$TMP/ocs0.cred" --state "$TMP/s$i.state" --delay-ms "$D" 2>/dev/null &
	EMUS="$EMUS $!"
	end=$(($(date +%s) + 10))
	while [ ! -s "$TMP/s$i.port" ] && [ "$(date +%s)" -le $end ]; do sleep 0.01; done
	DEVS="$DEVS --device ocs$i=127.0.0.1:$(cat "$TMP/s$i.port")"
	i=$((i + 1))
done
mkdir "$TMP/st"
# the first apply fills the switches (64 changes each): not measured
$OFC apply "$TMP/a.yaml" $DEVS --state-dir "$TMP/st" >/dev/null || exit 1

echo "ofc apply, $N ocs-emu switches x $HOSTS ports, $D ms a change, $ROUNDS rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| round | operations | summed switch s | slowest switch s | plan's switching s | apply wall s | txn s | wall / slowest |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
r=1
to=b
while [ "$r" -le "$ROUNDS" ]; do
	$OFC plan "$TMP/$to.yaml" $DEVS --state-dir "$TMP/st" --json >"$TMP/plan.json" || exit 1
	t0=$(date +%s.%N)
	$OFC apply "$TMP/$to.yaml" $DEVS --state-dir "$TMP/st" --json >"$TMP/r.json" || exit 1
	t1=$(date +%s.%N)
	python3 - "$r" "$TMP/plan.json" "$TMP/r.json" "$t0" "$t1" "$D" <<'EOF' | tee -a "$TMP/rows"
import json, sys
r, plan, res, t0, t1, d = sys.argv[1:]
p = json.load(open(plan))
t = json.load(open(res))
d = float(d) / 1000
ops = [x["remove"] + x["add"] for x in p["device_plan"]["devices"]]
wall = float(t1) - float(t0)
print(f"| {r} | {sum(ops)} | {sum(ops) * d:.3f} | {max(ops) * d:.3f} | {p['switching_seconds']:.3f} | "
      f"{wall:.3f} | {t['seconds']:.3f} | {wall / (max(ops) * d):.2f} |")
EOF
	[ $to = b ] && to=a || to=b
	r=$((r + 1))
done
python3 - "$TMP/rows" <<'EOF'
import statistics, sys
rows = [l.strip().strip("|").split("|") for l in open(sys.argv[1])]
cols = list(zip(*rows))
med = [statistics.median(float(x) for x in c) for c in cols[1:]]
print("| median | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |" % tuple([med[0]] + med[1:]))
EOF
