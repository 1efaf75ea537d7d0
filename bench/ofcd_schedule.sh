#!/bin/sh
# One ofcd's memory and apply time against the fabric's size: N hosts of 4
# ports on 4 sim switches of N ports (per-port wiring), the config's
# topology a torus, its workload an allreduce of 64 MiB (BFB: 2.1 M / 33.6 M
# / 134 M transfers explicit at 1,024 / 4,096 / 8,192 hosts). Per size:
# ofcd starts; a first reconfigure to the config's torus fills the switches
# (not measured); then one reconfigure to another torus of the same hosts
# (every circuit moves), timed from the command to its answer, with the
# transaction's own seconds from the answer (the rest of the answer's time
# is the daemon's own work before it answers); then when the state showed
# the workload's schedule on the new topology: at the answer when the
# first status after it shows it (a build that computes it before it
# answers), else the time of ofcd's log line saying it landed ("the
# state's schedule: ..."; polling the state itself costs seconds a read at
# these sizes); whether it is verified, or why not; then ofcd's peak RSS
# (VmHWM) over all of it.
#
#   sh bench/ofcd_schedule.sh [SIZES]   (default "1024 4096"; 8192 and up: 64x128 ...)
#
# BUILD=DIR picks another build's ofc and ofcd. One size at a time, under
# nice; each run's ofcd is stopped before the next. ASK=1: then, per size,
# `ofc --socket S schedule --collective allreduce --summary` with and
# without --reduced, timed, each with its first line (after the table).
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
OFCD=$BUILD/ofcd
SIZES=${1:-"1024 4096"}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench-sched.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

# N X Y -> the config on stdout
config() {
	printf 'version: 1\nname: t%s\nhosts: {count: %s, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' "$1" "$1"
	for i in 0 1 2 3; do
		printf '  - {name: ocs%s, type: ocs, ports: %s, reconfig_time: 1ms, driver: {type: sim}}\n' "$i" "$1"
	done
	printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n'
	printf 'topology: torus:%sx%s\ncollectives:\n  - op: allreduce\n    size: 64MiB\n' "$2" "$3"
	printf 'cost_model: {alpha: 10us, link_bandwidth: 100Gbps}\n'
}

echo "ofcd on N hosts x 4 ports, 4 sim switches, torus, allreduce 64 MiB ($(git rev-parse --short HEAD 2>/dev/null); load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| hosts | topology | apply answer s | txn s | answer - txn s | schedule in state after s | verified | peak RSS MB |"
echo "|---:|---|---:|---:|---:|---:|---|---:|"
for n in $SIZES; do
	case $n in
	256) x=16 y=16 ;;
	1024) x=32 y=32 ;;
	4096) x=64 y=64 ;;
	8192) x=64 y=128 ;;
	16384) x=128 y=128 ;;
	32768) x=128 y=256 ;;
	65536) x=256 y=256 ;;
	*) echo "ofcd_schedule: no torus for $n hosts" >&2 && exit 2 ;;
	esac
	d=$TMP/$n
	mkdir -p "$d/st"
	config "$n" "$x" "$y" >"$d/fab.yaml"
	TZ=UTC nice "$OFCD" --config "$d/fab.yaml" --socket "$d/s" --state-dir "$d/st" --foreground \
		2>"$d/log" &
	PID=$!
	end=$(($(date +%s) + 120))
	until $OFC --socket "$d/s" status >/dev/null 2>&1 || [ "$(date +%s)" -gt $end ]; do sleep 0.2; done
	$OFC --socket "$d/s" reconfigure --topology "torus:${x}x$y" >/dev/null 2>&1 || {
		echo "ofcd_schedule: the first reconfigure failed at $n hosts" >&2
		tail -3 "$d/log" >&2
		exit 1
	}
	sleep 1
	to="torus:$((x * 2))x$((y / 2))"
	t0=$(date +%s.%N)
	$OFC --socket "$d/s" reconfigure --topology "$to" --json >"$d/r.json" 2>"$d/r.err" || {
		echo "ofcd_schedule: the reconfigure to $to failed: $(cat "$d/r.err")" >&2
		exit 1
	}
	t1=$(date +%s.%N)
	# the schedule on the new topology in the state (or why none), at most 10 min
	t2=$t1
	$OFC --socket "$d/s" status --json >"$d/st.json" 2>/dev/null
	if ! grep -q "\"topology\": \"$to\"" "$d/st.json" || ! grep -q '"schedule": {' "$d/st.json"; then
		end=$(($(date +%s) + 600))
		until grep -q "the state's schedule: .* on $to: \|the state's schedule: no schedule" "$d/log" ||
			[ "$(date +%s)" -gt $end ]; do sleep 0.05; done
		t2=$(grep "the state's schedule: .* on $to: \|the state's schedule: no schedule" "$d/log" | head -n 1 |
			python3 -c "import sys, datetime; l = sys.stdin.read(); print(datetime.datetime.strptime(l[:23], '%Y-%m-%d %H:%M:%S.%f').replace(tzinfo=datetime.timezone.utc).timestamp() if l else 0)")
		$OFC --socket "$d/s" status --json >"$d/st.json" 2>/dev/null
	fi
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$PID/status)
	python3 - "$n" "$to" "$d/r.json" "$d/st.json" "$t0" "$t1" "$t2" "$hwm" <<'EOF'
import json, sys
n, to, rj, sj, t0, t1, t2, hwm = sys.argv[1:]
r = json.load(open(rj))
s = json.load(open(sj))
sc = s.get("schedule") or {}
if sc.get("topology") == to:
    v = "yes" if sc.get("verified") else "NO: " + sc.get("verify_error", "(no reason given)")
    if sc.get("reduced"):
        v += " (reduced, " + sc["reduced"].get("name", "?") + ")"
else:
    v = "none: " + s.get("schedule_error", "(no reason given)")
txn = r.get("seconds", r.get("transaction", {}).get("seconds", "-"))
txn = "%.2f" % txn if isinstance(txn, (int, float)) else txn
ans = float(t1) - float(t0)
rest = "%.2f" % (ans - float(txn)) if txn != "-" else "-"
print("| %s | %s | %.2f | %s | %s | %.2f | %s | %.0f |" % (n, to, ans, txn, rest,
      float(t2) - float(t0), v, int(hwm) / 1024))
EOF
	if [ -n "$ASK" ]; then
		for r in --reduced ""; do
			a0=$(date +%s.%N)
			# shellcheck disable=SC2086
			$OFC --socket "$d/s" schedule --collective allreduce --summary $r >"$d/ask" 2>&1
			rc=$?
			a1=$(date +%s.%N)
			echo "$n $r: exit $rc in $(echo "$a1 - $a0" | bc) s: $(head -n 1 "$d/ask")" >>"$TMP/asks"
		done
	fi
	kill $PID
	wait $PID 2>/dev/null
	PID=""
	rm -rf "$d"
done
[ -s "$TMP/asks" ] && { echo; sed 's/^/    /' "$TMP/asks"; }
