#!/bin/sh
# Planned work through three replicas on etcd (bench/results/drain.md):
# HOSTS hosts (default 8,192) of 4 NIC ports, port j of every host on
# ocs-emu switch j (4 switches of HOSTS ports: a circuit joins port j of
# two hosts, so it lies on one switch), the squarest torus, an allreduce of
# 64 MiB; three replicas (--cluster-ttl 2s) on a 3-member etcd with TLS.
# Through the leader, one after another:
#
#   drain ocs1 --grace 0s   answer s (the client's wall); planned and
#                           published s (from the request to the leader's
#                           log line "the schedule without them published");
#                           the followers s until both show the ports
#                           drained and a verified schedule
#   undrain ocs1            the same, "published" being the re-plan after the
#                           circuits are back
#   reconfigure --topology OTHER --max-loss 25%   the plan (--dry-run: its
#                           wall), then the change (--grace 0s): wall, the
#                           stages, circuits moved against the fewest
#                           possible, each stage's loss (the cost model's)
#                           and seconds (from the leader's log: its schedule
#                           out, then committed and re-planned; a stage's
#                           commit publishes the next stage's schedule with
#                           it, so the next one's "schedule out" is 0)
#
#   sh bench/drain.sh [HOSTS]
#
# The machine's load is printed with the table.
SUITE=drain-bench
cd "$(dirname "$0")/.." || exit 1
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}" && export TMPDIR
. tests/integration/lib.sh
. tests/integration/emu.sh
. tests/integration/cluster_env.sh
H=${1:-8192}
MAXLOSS=${MAXLOSS:-25}
trap 'kill $EMUS $REPLICA_PIDS $ETCD_PIDS 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

A=$(python3 -c "import math; n = $H; a = 2 ** (int(math.log2(n)) // 2); print('torus:%dx%d' % (a, n // a))")
B=$(python3 -c "import math; n = $H; a = 2 ** (int(math.log2(n)) // 2); print('torus:%dx%d' % (n // a, a))")
D="$TMP/h$H"
mkdir -p "$D"
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$D/$r.cred"; done
for i in 0 1 2 3; do
	start_emu ocs-emu "e$i" --ports "$H" --credentials "$D/r1.cred" --credentials "$D/r2.cred" \
		--credentials "$D/r3.cred" --state "$D/e$i.state" --save-ms 1000
done
{
	printf 'version: 1\nname: drain%s\nhosts: {count: %s, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' "$H" "$H"
	for i in 0 1 2 3; do
		printf '  - {name: ocs%s, type: ocs, ports: %s, reconfig_time: 1ms,\n' $i "$H"
		printf '     driver: {type: tl1, address: "127.0.0.1:%s", credentials: ocs0.cred, timeout: 10s, retries: 1}}\n' \
			"$(cat "$TMP/e$i.port")"
	done
	printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\ntopology: %s\n' "$A"
	printf 'collectives:\n  - {op: allreduce, size: 64MiB}\n'
} >"$D/a.yaml"
etcd_start 3 || { echo "etcd did not start"; exit 1; }
for r in r1 r2 r3; do
	mkdir -p "$TMP/$r/state"
	chmod 700 "$TMP/$r"
	cp "$D/$r.cred" "$TMP/$r/ocs0.cred"
	chmod 600 "$TMP/$r/ocs0.cred"
	cp "$D/a.yaml" "$TMP/$r/fab.yaml"
	replica_start $r --probe-interval 0
done
wait_leader 300 r1 r2 r3 || { echo "no leader in 300 s"; exit 1; }
L=$LEADER
FOLLOWERS=$(others "$L")
"$OFC" --socket "$TMP/$L.sock" reconfigure --topology "$A" --timeout 600 >"$TMP/out" 2>&1 ||
	{ echo "reconfigure failed: $(head -c 300 "$TMP/out")"; exit 1; }
for r in r1 r2 r3; do
	until_state $r 600 'j.get("schedule", {}).get("verified")' || { echo "$r: no healthy schedule"; exit 1; }
done

now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }
# log_at TEXT: unix ms of the leader's last log line holding TEXT
log_at() {
	grep -F -- "$1" "$TMP/$L.log" | tail -n 1 | python3 -c '
import sys, time
l = sys.stdin.read()
print(int((time.mktime(time.strptime(l[:19], "%Y-%m-%d %H:%M:%S")) + float(l[19:23])) * 1000) if l else 0)'
}
secs() { python3 -c "print('%.2f' % (($2 - $1) / 1000))"; }
# call ARGS...: through the leader, wall into WALL, answer in $TMP/out
call() {
	T0=$(now_ms)
	"$OFC" --socket "$TMP/$L.sock" "$@" --timeout 900 >"$TMP/out" 2>&1
	RC=$?
	T1=$(now_ms)
	WALL=$(secs "$T0" "$T1")
}
followers() {
	[ "$RC" = 0 ] || { echo "-"; return; }
	for f in $FOLLOWERS; do until_state "$f" 600 "$1" || { echo "not in 600 s"; return; }; done
	secs "$T1" "$(now_ms)"
}

echo "$H hosts, 4 ocs-emu switches of $H ports, $A, three replicas (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| step | answer s | planned and published s | followers s | what |"
echo "|---|---:|---:|---:|---|"
call drain ocs1 --grace 0s
PUB=$(secs "$T0" "$(log_at "the schedule without them published")")
FS=$(followers "len(j.get('drained', [])) == $H and j.get('schedule', {}).get('verified')")
echo "| drain ocs1 | $WALL | $PUB | $FS | $(sed -n 's/.*\(circuits removed: [^)]*\)).*/\1/p' "$TMP/out" | head -n 1); rc $RC |"
call undrain ocs1
PUB=$(secs "$T0" "$(log_at "ocs1 undrained (")")
FS=$(followers "not j.get('drained') and not j.get('failed') and j.get('schedule', {}).get('verified')")
echo "| undrain ocs1 | $WALL | $PUB | $FS | $(sed -n 's/.*\(circuits back: [^)]*\)).*/\1/p' "$TMP/out" | head -n 1); rc $RC |"
call reconfigure --topology "$B" --max-loss "$MAXLOSS%" --dry-run
echo "| plan $A to $B at --max-loss $MAXLOSS% | $WALL | - | - | $(sed -n 's/.*would reconfigure in \([0-9]* stages\).*/\1/p' "$TMP/out"); rc $RC |"
call reconfigure --topology "$B" --max-loss "$MAXLOSS%" --grace 0s
FS=$(followers "j.get('target_topology') == '$B' and j.get('at_target') and not j.get('failed') and j.get('schedule', {}).get('verified')")
echo "| staged change to $B | $WALL | - | $FS | rc $RC |"
echo
python3 - "$TMP/out" "$TMP/$L.log" "$B" <<'EOF'
import re, sys, time
out = open(sys.argv[1]).read()
log = open(sys.argv[2]).read().splitlines()
m = re.search(r"(\d+) stages? to \S+ within a loss of ([0-9.]+)%: (\d+) circuits? moved \(the fewest possible (\d+)\), at least (\d+)", out)
if not m:
    print("no staged answer:", out[:200], "...", out[-800:])
    sys.exit()
n, loss, moved, fewest, least = m.groups()
print(f"{n} stages (at least {least} by the ports a host may lose at once), {moved} circuits moved, "
      f"the fewest possible {fewest} ({int(moved) / int(fewest):.3f}x)")
print()
def at(l):
    return time.mktime(time.strptime(l[:19], "%Y-%m-%d %H:%M:%S")) + float(l[19:23])
print("| stage | circuits | host ports out of use | loss % | schedule out s | committed and re-planned s |")
print("|---:|---:|---:|---:|---:|---:|")
b = sys.argv[3]
for s in re.finditer(r"stage (\d+): (\d+) circuits?, (\d+) host ports? out of use, loss ([0-9.]+)%", out):
    i = s.group(1)
    start = [at(l) for l in log if f"{b}: stage {i} of {n}, " in l and "its schedule published" in l]
    done = [at(l) for l in log if f"{b}: stage {i} of {n} committed" in l]
    prev = [at(l) for l in log if f"{b}: stage {int(i) - 1} of {n} committed" in l]
    t0 = prev[-1] if prev else None
    out_s = f"{start[-1] - t0:.2f}" if start and t0 else "-"
    done_s = f"{done[-1] - start[-1]:.2f}" if done and start else "-"
    print(f"| {i} | {s.group(2)} | {s.group(3)} | {s.group(4)} | {out_s} | {done_s} |")
EOF
