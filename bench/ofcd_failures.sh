#!/bin/sh
# The re-plan's speed target through the daemon: one failed link (or, with
# ITEM=node7, a whole failed host) on a genkautz:1024,4 fabric reported to a
# running ofcd, and the time until a
# watcher holds the re-planned, verified BFB allgather schedule (the
# KIND_SCHEDULE_REPLANNED event). The fabric has been applied (4 sim
# switches, one per port, as configs/genkautz1024-patch.yaml wires it), so
# the daemon also rebuilds its state snapshot, whose workload schedule is
# computed again on the degraded graph, before the event goes out. Each
# round: fail node0-node1023 (the arc 0 -> 1023), then restore it; times
# from the moment the request is sent to the moment the watcher has read
# the event, on one clock (both ends in this process).
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
OFCD=$BUILD/ofcd
ROUNDS=${ROUNDS:-5}
ITEM=${ITEM:-node0-node1023}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofcd-fail-bench.XXXXXX")
trap 'kill $ofcd_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3

cat >"$TMP/fab.yaml" <<'EOF'
name: gk1024
hosts: {count: 1024, prefix: node, ports: 4, port_rate: 100Gbps}
switches:
  - {name: ocs0, type: ocs, ports: 1024, driver: {type: sim}}
  - {name: ocs1, type: ocs, ports: 1024, driver: {type: sim}}
  - {name: ocs2, type: ocs, ports: 1024, driver: {type: sim}}
  - {name: ocs3, type: ocs, ports: 1024, driver: {type: sim}}
wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}
topology: genkautz:1024,4
collectives:
  - {op: allgather, size: 1MiB}
EOF
COLL=${COLL:-allgather}
if [ "$COLL" = alltoall ]; then
	# COLL=alltoall: the workload is an all-to-all of 1 MiB (the fluid MCF
	# lowered to paths). The daemon answers at once and solves the healthy
	# graph in the background (plan.c), announced by an event, and keeps that
	# MCF solution: each failure re-plans the degraded MCF from it, each
	# restore publishes the kept healthy schedule. The rounds begin once the
	# schedule landed. The event's message says what the MCF started from
	# and how long it took; the client waits up to 600 s.
	sed -i 's/op: allgather, size: 1MiB/op: alltoall, size: 1MiB/' "$TMP/fab.yaml"
fi
if [ -n "${SPARE:-}" ]; then
	# SPARE=1 ITEM=node0:0 ROUNDS=1: every host has a fifth, spare port, all
	# on one switch, so a lost port is re-wired onto the spare (a
	# transaction) and the schedule re-planned on the whole graph. One
	# round: the move stays after the restore, so a second report of the
	# port finds it moved already.
	cat >"$TMP/fab.yaml" <<'EOF'
name: gk1024
hosts: {count: 1024, prefix: node, ports: 5, port_rate: 100Gbps}
switches:
  - {name: ocs0, type: ocs, ports: 5120, driver: {type: sim}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: genkautz:1024,4
collectives:
  - {op: allgather, size: 1MiB}
EOF
fi
mkdir -p "$TMP/st"
"$OFC" apply "$TMP/fab.yaml" --state-dir "$TMP/st" >/dev/null || exit 1
"$OFCD" --foreground --config "$TMP/fab.yaml" --socket "$TMP/s.sock" --state-dir "$TMP/st" \
	--credentials-dir "$TMP" 2>"$TMP/d.log" &
ofcd_pid=$!
t_start=$(date +%s.%N)
until "$OFC" --socket "$TMP/s.sock" status >/dev/null 2>&1; do sleep 0.05; done

echo "ofcd on genkautz:1024,4 (1024 hosts, 4 sim switches, $COLL 1 MiB), $ROUNDS rounds;"
echo "ofcd answered $(echo "$(date +%s.%N) - $t_start" | bc) s after its start"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo
PYTHONPATH="$BUILD/python" $PY - "$TMP/s.sock" "$ROUNDS" "$ITEM" "$COLL" "$t_start" <<'EOF'
import sys, threading, time
from ofc_client import Client, control_pb2

sock, rounds, item, coll = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t_start = float(sys.argv[5])
ofc = Client(sock, timeout=60 if coll == "allgather" else 600)
events = []
ready = threading.Event()

def watcher():
    # The generator sends the Watch when first advanced: the main thread
    # waits a little after this for the acknowledgement to be in.
    ready.set()
    for ev in ofc.watch():
        if ev.kind == control_pb2.Event.KIND_SCHEDULE_REPLANNED:
            events.append((time.monotonic(), ev))
            landed.append(time.time())

landed = []
threading.Thread(target=watcher, daemon=True).start()
ready.wait()
time.sleep(0.3)
# The workload's schedule computed in the background after the start (an
# all-to-all's): the rounds wait for it, so they time the re-plans alone.
st = ofc.get_state()
if st.HasField("schedule_computing_since_unix_ms") or events:
    while not events:
        time.sleep(0.01)
    te, ev = events.pop(0)
    print("the workload's schedule landed %.1f s after ofcd's start: %s" % (
        landed.pop(0) - t_start, ev.message))
    print()
print("| round | request | event after s | answer after s | daemon's re-plan s | schedule |")
print("|---|---|---|---|---|---|")
worst = 0.0
for r in range(rounds):
    for restore in (False, True):
        n = len(events)
        t0 = time.monotonic()
        resp = ofc.report_failure([item], restore=restore)
        t1 = time.monotonic()
        while len(events) == n:
            time.sleep(0.001)
        te, ev = events[n]
        s = ev.schedule
        took = float(ev.message.rsplit("re-planned in ", 1)[1].split(" ")[0])
        assert s.verified and s.collective == coll, ev.message
        assert s.algorithm == ("bfb" if coll == "allgather" else "mcf"), ev.message
        if coll == "alltoall":
            print("    " + ev.message)
        moved = "moved to spare" in ev.message
        assert ("without " + item in s.topology) != (restore or moved)
        worst = max(worst, te - t0)
        print("| %d | %s | %.3f | %.3f | %.3f | %s, %d steps, tau_B %s, %.6g us, verified |" % (
            r + 1, "restore" if restore else "fail " + item + (" (re-wired)" if moved else ""),
            te - t0, t1 - t0, took,
            s.topology, s.num_steps, s.tau_b_fraction or "%.4f" % s.metrics["tau_b"], s.time_us))
print()
print("worst event latency %.3f s (target: %s)" % (worst, "1 s" if coll == "allgather" else
                                                     "the degraded MCF in 10 s"))
EOF
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
