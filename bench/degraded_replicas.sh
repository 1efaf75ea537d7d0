#!/bin/sh
# A failure through three replicas on etcd (bench/results/failures.md,
# "Failures at every size"): for each fabric size, HOSTS hosts of 4 NIC
# ports, port j of every host on ocs-emu switch j (4 switches of HOSTS
# ports), the squarest torus, an allreduce of 64 MiB as the workload; three
# replicas (--cluster-ttl 2s) on a 3-member etcd with TLS and its defaults.
# Each row, through the leader, `ofc --socket S fail ITEM` (1 port h5:0, 1
# link h5-h6, 1 host h5) then `restore --all`:
#
#   answer s        the leader's answer at the client, wall
#   followers s     from the answer until both followers' states show the
#                   failures and a verified schedule, asked by status --json
#                   (whose own cost grows with the fabric: 60 MB at 65,536
#                   hosts); then, from their logs, when the later follower
#                   took the leader's answer, from the answer (negative:
#                   before the answer reached the client)
#   peak MiB        each replica's peak RSS over the row (VmHWM, reset
#                   before the row through /proc/PID/clear_refs): leader,
#                   follower, follower
#   time us, vs healthy, verified, kept   from the leader's answer
#   followers       how the followers got their state's schedule, from their
#                   logs: "read" (the leader's answer, from the store) or
#                   "computed" (the count of each)
#   CPU s           the CPU seconds (user + system, /proc/PID/stat) spent
#                   while the client waited for its answer: the leader, the
#                   two followers together, the three etcd members together
#
# ROWS="port link host" (the default) picks the single failures run (ROWS=""
# none: with PERCENT=1, the 1% row alone).
# PERCENT=1 adds a row for 1% of the ports at once (bench/failures_lib.sh's,
# the ones bench/degraded_scale.sh fails) and its restore.
# SWITCH=1 adds a row for a switch lost (SWITCH=only: that row alone):
# ocs-emu e0 killed (every host's port 0 with it), the replicas probing
# every PROBE s (default 2); answer s
# is then from the kill until the leader's state shows HOSTS failures and a
# verified schedule (the probe's interval and timeout included), then from
# the leader's log "device lost" (the probe's finding) to its re-plan, and
# followers s from then until both followers show as many (the leader's
# lost ports through the store, STORE_LOST) and a verified schedule.
#
#   sh bench/degraded_replicas.sh [HOSTS...]      # default: 1024 8192
#   sh bench/degraded_replicas.sh 65536           # alone: ~1.5 GB in all
#   SWITCH=1 sh bench/degraded_replicas.sh 8192
#   PERCENT=1 sh bench/degraded_replicas.sh 8192
#   SWITCH=only sh bench/degraded_replicas.sh 65536
#
# The machine's load is printed with each row.
SUITE=degraded-replicas
cd "$(dirname "$0")/.." || exit 1
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}" && export TMPDIR
. tests/integration/lib.sh
. tests/integration/emu.sh
. tests/integration/cluster_env.sh
. bench/failures_lib.sh
[ $# -gt 0 ] || set -- 1024 8192
SWITCH=${SWITCH:-0}
PERCENT=${PERCENT:-0}
PROBE=${PROBE:-2}
ROWS=${ROWS-port link host}
wanted() {
	case " $ROWS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}
trap 'kill $EMUS $REPLICA_PIDS $ETCD_PIDS 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

torus() {
	python3 -c "
import math
n = $1
a = 2 ** (int(math.log2(n)) // 2)
print('torus:%dx%d' % (a, n // a))"
}

# config OUT HOSTS PORTFILE...: the fabric, one switch per port file
config() {
	_out=$1 _h=$2
	shift 2
	{
		printf 'version: 1\nname: deg%s\nhosts: {count: %s, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' "$_h" "$_h"
		_i=0
		for _pf in "$@"; do
			printf '  - {name: ocs%s, type: ocs, ports: %s, reconfig_time: 1ms,\n' $_i "$_h"
			printf '     driver: {type: tl1, address: "127.0.0.1:%s", credentials: ocs0.cred, timeout: 2s, retries: 1}}\n' \
				"$(cat "$_pf")"
			_i=$((_i + 1))
		done
		printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n'
		printf 'topology: %s\n' "$(torus "$_h")"
		printf 'collectives:\n  - {op: allreduce, size: 64MiB}\n'
	} >"$_out"
}

now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }
pid_of() { eval "echo \$${1}_pid"; }
reset_peaks() { for r in r1 r2 r3; do echo 5 >"/proc/$(pid_of $r)/clear_refs"; done; }
peak() { awk '/VmHWM/ {printf "%d", $2 / 1024}' "/proc/$(pid_of "$1")/status"; }
# how the followers' schedules came, from their logs since the marks
how() {
	_r=0 _c=0
	for f in $FOLLOWERS; do
		eval "_m=\$${f}_mark"
		_r=$((_r + $(tail -c +$((_m + 1)) "$TMP/$f.log" | grep -c "read from the store, not computed here")))
		_c=$((_c + $(tail -c +$((_m + 1)) "$TMP/$f.log" | grep -c "the state's schedule: computing it here")))
	done
	echo "read $_r, computed $_c"
}
# cpu PID...: their user + system CPU, in clock ticks
cpu() {
	_t=0
	for _p in "$@"; do
		_t=$((_t + $(awk '{print $14 + $15}' "/proc/$_p/stat" 2>/dev/null || echo 0)))
	done
	echo $_t
}
# cpu_now: "leader followers etcd" ticks
cpu_now() {
	# shellcheck disable=SC2046,SC2086
	echo "$(cpu "$(pid_of "$LEADER")") $(cpu $(for f in $FOLLOWERS; do pid_of "$f"; done)) $(cpu $ETCD_PIDS)"
}
# cpu_since "L F E": the ticks since, in seconds, "L / F / E"
cpu_since() {
	echo "$1 $(cpu_now)" | awk -v hz="$(getconf CLK_TCK)" \
		'{printf "%.2f / %.2f / %.2f", ($4 - $1) / hz, ($5 - $2) / hz, ($6 - $3) / hz}'
}
mark_all() { for r in r1 r2 r3; do eval "${r}_mark=\$(wc -c <\"\$TMP/\$r.log\")"; done; }
# followers_show EXPR: until both followers' states satisfy EXPR (j)
followers_show() {
	for f in $FOLLOWERS; do until_state "$f" 600 "$1" || return 1; done
}

# row WHAT EXPECT -- ofc ARGS...: one failure (or restore) through the leader
row() {
	_what=$1 _expect=$2
	shift 3
	mark_all
	reset_peaks
	c0=$(cpu_now)
	t0=$(now_ms)
	/usr/bin/time -f '%e' -o "$TMP/t" "$OFC" --socket "$TMP/$LEADER.sock" "$@" --timeout 600 \
		>"$TMP/out" 2>&1
	t1=$(now_ms)
	CPU=$(cpu_since "$c0")
	wall=$(tail -n 1 "$TMP/t")
	if followers_show "$_expect and j.get('schedule', {}).get('verified')"; then
		fs=$(python3 -c "print('%.2f' % (($(now_ms) - $t1) / 1000))")
		fs="$fs; $(read_at "$t1")"
	else
		fs="not shown in 600 s"
	fi
	answer_row "$_what" "$wall" "$fs"
}

# read_at MS: the later follower's last "read from the store" line since its
# mark, in seconds from MS (unix ms), or "-" when one has none
read_at() {
	for f in $FOLLOWERS; do
		eval "_m=\$${f}_mark"
		tail -c +$((_m + 1)) "$TMP/$f.log" | grep "read from the store, not computed here" | tail -n 1
		echo "--"
	done | python3 -c '
import sys, time
at, lines = [], sys.stdin.read().split("--\n")[:-1]
for l in lines:
    if not l.strip():
        print("-")
        sys.exit()
    at.append(time.mktime(time.strptime(l[:19], "%Y-%m-%d %H:%M:%S")) + float(l[19:23]))
print("%+.2f" % (max(at) - int(sys.argv[1]) / 1000))' "$1"
}

answer_row() {
	t=$(sed -n 's/.*: [0-9]* steps, \([0-9.]*\) us.*/\1/p' "$TMP/out" | head -n 1)
	vs=$(sed -n 's/.* us (\([^ ]*\) vs healthy).*/\1/p' "$TMP/out" | head -n 1)
	ver=NO
	grep -q ' us[^,]*, verified' "$TMP/out" && ver=yes
	kept=$(sed -n 's/.*, verified, Swing around the failed links (the healthy [^,]*, \([0-9]*\) transfers re-routed[^)]*) instead of \([a-z-]*\), refused.*/swing instead of \2: \1 re-routed/p; s/.*, kept as structure (the healthy program x [^)]* and a patch of \([0-9]*\) transfers for the \([0-9]*\) nodes.*/patch: \1 transfers, \2 nodes/p; s/.*, symmetry-reduced (node 0.s program.*/reduced/p; s/.* (explicit: \(.*\)), re-planned.*/explicit: \1/p' "$TMP/out" | head -n 1)
	[ -n "$t" ] || t="no schedule: $(head -c 200 "$TMP/out" | tr '\n' ' ')"
	echo "| $H | $1 | $2 | $3 | $(peak "$LEADER") / $(peak ${FOLLOWERS% *}) / $(peak ${FOLLOWERS#* }) | $t | ${vs:--} | $ver | ${kept:-explicit} | $(how) | ${CPU:--} | $(cut -d' ' -f1-3 /proc/loadavg) |"
}

# the switch lost: e0 killed; the leader's probe finds it
switch_rows() {
	mark_all
	reset_peaks
	CPU=""
	t0=$(now_ms)
	# shellcheck disable=SC2154
	kill "$e0_pid"
	wait "$e0_pid" 2>/dev/null
	# (status exits 1 while a device is lost: its JSON is read whatever the exit)
	_end=$(($(date +%s) + 120))
	until "$OFC" --socket "$TMP/$LEADER.sock" status --json --timeout 60 >"$TMP/$LEADER.json" 2>/dev/null
		python3 -c 'import json,sys; j = json.load(open(sys.argv[1]))
sys.exit(0 if len(j.get("failed", [])) == int(sys.argv[2]) and (j.get("schedule") or {}).get("verified") else 1)' \
			"$TMP/$LEADER.json" "$H" 2>/dev/null || [ "$(date +%s)" -gt $_end ]; do sleep 0.1; done
	t1=$(now_ms)
	wall=$(python3 -c "print('%.2f' % (($t1 - $t0) / 1000))")
	grep "schedule re-planned: a switch was lost" "$TMP/$LEADER.log" | tail -n 1 >"$TMP/out"
	# the part ofcd answers for: from the probe's "device lost" to the re-plan
	_found=$(grep "warning: device lost" "$TMP/$LEADER.log" | tail -n 1 | cat - "$TMP/out" | python3 -c '
import sys, time
at = [time.mktime(time.strptime(l[:19], "%Y-%m-%d %H:%M:%S")) + float(l[19:23])
      for l in sys.stdin.read().splitlines()]
print("%.2f" % (at[1] - at[0]) if len(at) == 2 else "-")')
	_n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("failed", [])))' "$TMP/$LEADER.json")
	# the followers: the lost ports (STORE_LOST) and the leader's schedule
	fs="not shown in 120 s"
	_ok=1
	for f in $FOLLOWERS; do
		until_state "$f" 120 "len(j.get('failed', [])) == $H and j.get('schedule', {}).get('verified')" || _ok=0
	done
	[ $_ok = 1 ] && fs="$(python3 -c "print('%.2f' % (($(now_ms) - $t1) / 1000))"); $(read_at "$t1")"
	answer_row "switch ocs0 lost ($_n failed at the leader)" "$wall (from the kill; $_found from the loss found)" "$fs"
}

one() {
	H=$1
	D="$TMP/h$H"
	mkdir -p "$D"
	for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$D/$r.cred"; done
	PFS=""
	for i in 0 1 2 3; do
		start_emu ocs-emu "e$i" --ports "$H" --credentials "$D/r1.cred" --credentials "$D/r2.cred" \
			--credentials "$D/r3.cred" --state "$D/e$i.state" --save-ms 1000
		PFS="$PFS $TMP/e$i.port"
	done
	# shellcheck disable=SC2086
	config "$D/a.yaml" "$H" $PFS
	[ -n "$ETCD_PIDS" ] || etcd_start 3 || { echo "| $H | etcd did not start |"; return 1; }
	for r in r1 r2 r3; do
		mkdir -p "$TMP/$r/state"
		chmod 700 "$TMP/$r"
		cp "$D/$r.cred" "$TMP/$r/ocs0.cred"
		chmod 600 "$TMP/$r/ocs0.cred"
		cp "$D/a.yaml" "$TMP/$r/fab.yaml"
		# (LOG_LEVEL=debug: the replicas log at that level)
		replica_start $r --probe-interval "${PROBE}s" ${LOG_LEVEL:+--log-level "$LOG_LEVEL"}
	done
	wait_leader 300 r1 r2 r3 || { echo "| $H | no leader in 300 s |"; return 1; }
	FOLLOWERS=$(others "$LEADER")
	FOLLOWERS=${FOLLOWERS% }
	# the fabric at its torus (a state with no record shows no schedule)
	"$OFC" --socket "$TMP/$LEADER.sock" reconfigure --topology "$(torus "$H")" --timeout 600 \
		>"$TMP/out" 2>&1 || { echo "| $H | reconfigure failed: $(head -c 200 "$TMP/out") |"; return 1; }
	# the healthy state's schedule on every replica first
	for r in r1 r2 r3; do
		until_state $r 600 'j.get("schedule", {}).get("verified")' ||
			{ echo "| $H | $r shows no healthy schedule in 600 s |"; return 1; }
	done
	if [ "$SWITCH" != only ]; then
		if wanted port; then
			row "1 port (h5:0)" 'j.get("failed") == ["h5:0"]' -- fail h5:0
			row "restore" 'not j.get("failed")' -- restore --all
		fi
		if wanted link; then
			row "1 link (h5-h6)" 'j.get("failed") == ["h5-h6"]' -- fail h5-h6
			row "restore" 'not j.get("failed")' -- restore --all
		fi
		if wanted host; then
			row "1 host (h5)" 'j.get("failed") == ["h5"]' -- fail h5
			row "restore" 'not j.get("failed")' -- restore --all
		fi
	fi
	if [ "$PERCENT" != 0 ]; then
		_ports=$(ports_percent "$H")
		_np=$(echo "$_ports" | wc -w)
		# shellcheck disable=SC2086 # one word per port
		row "1% of ports ($_np)" "len(j.get('failed') or []) == $_np" -- fail $_ports
		row "restore" 'not j.get("failed")' -- restore --all
	fi
	[ "$SWITCH" != 0 ] && switch_rows
	# (KEEP_LOGS=DIR: the replicas' logs kept there)
	[ -n "${KEEP_LOGS:-}" ] && for r in r1 r2 r3; do cp "$TMP/$r.log" "$KEEP_LOGS/$r-$H.log"; done
	for r in r1 r2 r3; do replica_stop $r 9; rm -rf "${TMP:?}/$r" "$TMP/$r.sock"; done
	REPLICA_PIDS=""
	# shellcheck disable=SC2086
	kill $EMUS 2>/dev/null
	wait $EMUS 2>/dev/null
	EMUS=""
	etcd_ctl del --prefix "" >/dev/null 2>&1
	rm -rf "$D"
}

echo "| hosts | failure | answer s | followers s (status; log) | peak MiB (leader / followers) | time us | vs healthy | verified | kept | followers' schedule | CPU s (leader / followers / etcd) | load |"
echo "|---:|---|---:|---:|---|---:|---:|---|---|---|---|---|"
for h in "$@"; do one "$h"; done
