#!/bin/sh
# `ofc apply` on SWITCHES switches driven side by side (16 unless set): HOSTS
# hosts (64 unless set) of SWITCHES ports, port j of every host on ocs-emu
# switch j (HOSTS ports, --delay-ms D a change, the config's reconfig_time
# the same). Each round reconfigures circulant:HOSTS:1..S/2 <->
# circulant:HOSTS:S/2+1..S: every switch removes and adds its HOSTS
# cross-connects (2 x HOSTS changes). Against each round's apply (the
# command's wall time, and the transaction's own seconds): the summed
# switch time (every change of every switch one after another: what a
# drive one device at a time cannot beat) and the slowest switch's own time
# (its changes x D: what a drive side by side cannot beat); the CPU seconds
# of ofc and of the emulators during it. The last row is the median of
# each column.
# sh bench/parallel_apply.sh [ROUNDS [DELAY_MS]]  (OFC=PATH: another build's
# ofc; BUILD=DIR: another build's ofc and ocs-emu)
# HOSTS=1024 SAVE_MS=1000 sh bench/parallel_apply.sh 4 1   # 16 x 2,048 changes at 1 ms
BUILD=${BUILD:-build}
OFC=${OFC:-$BUILD/ofc}
ROUNDS=${1:-4}
D=${2:-5}
N=${SWITCHES:-16}
# SAVE_MS: the emulators save their state at most SAVE_MS ms after a change
# (ocs-emu --save-ms, as bench/control_scale.sh's; 0, the default: after
# every change, a write of the whole switch each)
SAVE_MS=${SAVE_MS:-0}
HOSTS=${HOSTS:-64}
# The emulators' state files on a tmpfs where there is one, so 16 of them
# do not queue on one disk's writes.
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
EMUS=""
trap 'kill $EMUS 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
# config OUT OFFSETS
config() {
	{
		printf 'version: 1\nname: par%s\nhosts: {count: %s, prefix: h, ports: %s}\nswitches:\n' "$N" "$HOSTS" "$N"
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
config "$TMP/a.yaml" "$(seq -s, 1 $((N / 2)))"
config "$TMP/b.yaml" "$(seq -s, $((N / 2 + 1)) $N)"

DEVS=""
i=0
while [ $i -lt $N ]; do
	: >"$TMP/s$i.state"
	$BUILD/ocs-emu --listen 127.0.0.1:0 --port-file "$TMP/s$i.port" --ports $HOSTS \
		--credentials "$TMP/ocs0.cred" --state "$TMP/s$i.state" --delay-ms "$D" --save-ms "$SAVE_MS" 2>/dev/null &
	EMUS="$EMUS $!"
	end=$(($(date +%s) + 10))
	while [ ! -s "$TMP/s$i.port" ] && [ "$(date +%s)" -le $end ]; do sleep 0.01; done
	DEVS="$DEVS --device ocs$i=127.0.0.1:$(cat "$TMP/s$i.port")"
	i=$((i + 1))
done
# emus_cpu: the emulators' CPU time so far, in clock ticks (1/100 s)
emus_cpu() {
	# shellcheck disable=SC2086
	for p in $EMUS; do cut -d')' -f2 "/proc/$p/stat" | cut -d' ' -f13,14; done |
		awk '{s += $1 + $2} END {print s + 0}'
}
mkdir "$TMP/st"
# the first apply fills the switches (HOSTS changes each): not measured
$OFC apply "$TMP/a.yaml" $DEVS --state-dir "$TMP/st" >/dev/null || exit 1

echo "ofc apply, $N ocs-emu switches x $HOSTS ports, $D ms a change, $ROUNDS rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| round | operations | summed switch s | slowest switch s | plan's switching s | apply wall s | txn s | ofc CPU s | switches' CPU s | wall / slowest |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
r=1
to=b
while [ "$r" -le "$ROUNDS" ]; do
	$OFC plan "$TMP/$to.yaml" $DEVS --state-dir "$TMP/st" --json >"$TMP/plan.json" || exit 1
	e0=$(emus_cpu)
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$TMP/cpu" $OFC apply "$TMP/$to.yaml" $DEVS --state-dir "$TMP/st" \
		--json >"$TMP/r.json" || exit 1
	t1=$(date +%s.%N)
	e1=$(emus_cpu)
	python3 - "$r" "$TMP/plan.json" "$TMP/r.json" "$t0" "$t1" "$D" "$TMP/cpu" "$e0" "$e1" <<'EOF' | tee -a "$TMP/rows"
import json, sys
r, plan, res, t0, t1, d, cpu, e0, e1 = sys.argv[1:]
cpu = sum(float(x) for x in open(cpu).read().split()[-2:])
emu = (int(e1) - int(e0)) / 100
p = json.load(open(plan))
t = json.load(open(res))
d = float(d) / 1000
ops = [x["remove"] + x["add"] for x in p["device_plan"]["devices"]]
wall = float(t1) - float(t0)
print(f"| {r} | {sum(ops)} | {sum(ops) * d:.3f} | {max(ops) * d:.3f} | {p['switching_seconds']:.3f} | "
      f"{wall:.3f} | {t['seconds']:.3f} | {cpu:.2f} | {emu:.2f} | {wall / (max(ops) * d):.2f} |")
EOF
	[ $to = b ] && to=a || to=b
	r=$((r + 1))
done
python3 - "$TMP/rows" <<'EOF'
import statistics, sys
rows = [l.strip().strip("|").split("|") for l in open(sys.argv[1])]
cols = list(zip(*rows))
med = [statistics.median(float(x) for x in c) for c in cols[1:]]
print("| median | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |" % tuple([med[0]] + med[1:]))
EOF
