#!/bin/sh
# The Python client (python/ofc_client, built into $BUILD/python) against a
# real ofcd and ocs-emu; ofcd under a service manager's eyes: sd_notify
# READY/STATUS/STOPPING and socket activation.
SUITE=python
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

OFCD=${OFCD:-$BUILD/ofcd}
# Debian's python3 has python3-protobuf; a python3 earlier on PATH may not.
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
export PYTHONPATH="$BUILD/python"
trap 'kill -9 $ofcd_pid 2>/dev/null; stop_all_emus; rm -rf "$TMP"' EXIT

ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
TORUS="$TMP/torus.yaml"
make_torus_config "$TORUS" torus:8x8 2s 2
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred

# ofcd with NOTIFY_SOCKET: a datagram socket this test reads.
$PY - "$TMP/notify.sock" "$TMP/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "a") as log:
    while True:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            break
        log.write(m.replace("\n", " ") + "\n")
        log.flush()
        if "STOPPING=1" in m:
            break
PY
notify_pid=$!
i=0
while [ ! -S "$TMP/notify.sock" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
NOTIFY_SOCKET="$TMP/notify.sock" "$OFCD" --foreground --credentials-dir "$TMP" --config "$TORUS" --socket "$SOCK" \
	--state-dir "$ST" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 2>"$TMP/ofcd.log" &
ofcd_pid=$!
i=0
until grep -q "READY=1" "$TMP/notify.log" 2>/dev/null || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "READY=1" "$TMP/notify.log" && ok || bad "no READY=1" "$(cat "$TMP/notify.log" "$TMP/ofcd.log")"
grep -q "STATUS=serving fabric torus64-ocs" "$TMP/notify.log" && ok || bad "no STATUS line" "$(cat "$TMP/notify.log")"

# The client: state, a reconfigure, a schedule, errors, events.
$PY - "$SOCK" >"$TMP/py.out" 2>&1 <<'PY' && ok || bad "python client" "$(cat "$TMP/py.out")"
import sys, threading
from ofc_client import Client, OfcError, control_pb2
from ofc_client.pb import schedule_pb2

c = Client(sys.argv[1], timeout=30)
st = c.get_state()
assert st.fabric_name == "torus64-ocs" and st.config_generation == 0, st
assert st.devices[0].name == "ocs0" and st.devices[0].kind == "switch"
events = []
def watch():
    for e in Client(sys.argv[1]).watch(idle_timeout=10, count=3):
        events.append(control_pb2.Event.Kind.Name(e.kind))
t = threading.Thread(target=watch)
t.start()
import time; time.sleep(0.3)
r = c.reconfigure(topology="torus:8x8")
assert r.message.startswith("committed transaction 1: 256 operations"), r.message
t.join()
assert events[:2] == ["KIND_REQUEST_QUEUED", "KIND_TRANSACTION_STARTED"], events
st = c.get_state()
assert st.config_generation == 1 and st.topology.spec == "torus:8x8" and st.at_target
sc = c.get_schedule("allreduce", summary_only=True)
assert isinstance(sc, schedule_pb2.Schedule) and sc.verified and sc.num_steps > 0, sc
try:
    c.reconfigure(topology="torus:4x4")
    raise SystemExit("a topology of the wrong size was accepted")
except OfcError as e:
    assert e.status == "STATUS_INVALID" and "16 nodes" in str(e), (e.status, str(e))
try:
    c.apply_config("name: torus64-ocs\nhosts: {count: 64, prefix: h, ports: 4}\nswitchs: []\n",
                   filename="/tmp/typo.yaml")
    raise SystemExit("a bad config was accepted")
except OfcError as e:
    assert e.config_error is not None and str(e).startswith("/tmp/typo.yaml:3:1: "), str(e)
try:
    Client(sys.argv[1] + ".none", timeout=2).get_state()
    raise SystemExit("no daemon, no error")
except ConnectionError:
    pass
# watch with an idle timeout ends quietly.
assert list(Client(sys.argv[1]).watch(idle_timeout=0.2)) == []
# A failed link: re-planned without it, GetSchedule follows; restored.
healthy = c.get_schedule("allreduce", summary_only=True)
r = c.report_failure(["h0-h1"])
assert "1 failure in effect (h0-h1)" in r.message and r.transaction.kind == "report-failure", r
sc = c.get_schedule("allreduce", summary_only=True)
assert sc.verified and sc.topology == "torus:8x8 without h0-h1" and sc.time_us > healthy.time_us, sc
assert list(c.get_state().failed) == ["h0-h1"]
try:
    c.report_failure(["h0-h9"])
    raise SystemExit("a link the torus does not have was accepted")
except OfcError as e:
    assert e.status == "STATUS_INVALID" and "no such link" in str(e), str(e)
r = c.report_failure(clear=True, restore=True)
sc = c.get_schedule("allreduce", summary_only=True)
assert sc.topology == "torus:8x8" and sc.time_us == healthy.time_us, sc
print("ok")
PY
# A python3 that cannot see Debian's python3-protobuf (-S: no site-packages,
# as a pyenv or conda python3 has none of Debian's) is told which package,
# not "No module named 'google'" alone.
PYTHONPATH="$BUILD/python" /usr/bin/python3 -S -c 'import ofc_client' >/dev/null 2>"$TMP/imp.err"
[ $? -eq 1 ] && tail -1 "$TMP/imp.err" | grep -q "^ImportError: ofc_client needs the protobuf runtime (google.protobuf), which /usr/bin/python3 cannot import (No module named 'google'): it is Debian's package python3-protobuf" &&
	ok || bad "the client without protobuf" "$(tail -1 "$TMP/imp.err")"
# The runnable example in the package.
$PY -m ofc_client --socket "$SOCK" status >"$TMP/ex.out" 2>&1 &&
	grep -q "^fabric torus64-ocs generation 1 topology torus:8x8 at target" "$TMP/ex.out" && ok ||
	bad "python3 -m ofc_client status" "$(cat "$TMP/ex.out")"
$PY -m ofc_client --socket "$SOCK" reconfigure torus:4x4 >"$TMP/ex.out" 2>&1
[ $? -eq 2 ] && grep -q "STATUS_INVALID" "$TMP/ex.out" && ok || bad "example: error exit" "$(cat "$TMP/ex.out")"

# A config sent without a filename: its relative credentials resolve from the
# running config's directory (docs/control.md), not from ofcd's cwd, and
# still do when ofcd parses it again (a reconfigure, a failure).
$PY - "$SOCK" "$TORUS" >"$TMP/py.out" 2>&1 <<'PY' && ok || bad "apply_config without a filename" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client
c = Client(sys.argv[1], timeout=30)
yaml = open(sys.argv[2]).read()
assert c.apply_config(yaml, dry_run=True).transaction.state == "planned"
assert c.apply_config(yaml).message.startswith("committed transaction"), "apply"
assert c.reconfigure(topology="torus:8x8").message.startswith("committed transaction")
assert "1 failure in effect" in c.report_failure(["h0-h1"]).message
c.report_failure(clear=True, restore=True)
PY
kill -TERM $ofcd_pid
wait $ofcd_pid
[ $? -eq 0 ] && ok || bad "ofcd did not exit 0"
wait $notify_pid
grep -q "STOPPING=1" "$TMP/notify.log" && ok || bad "no STOPPING=1" "$(cat "$TMP/notify.log")"

# Socket activation: systemd-socket-activate binds, ofcd serves that fd.
if command -v systemd-socket-activate >/dev/null 2>&1; then
	ASOCK="$TMP/act.sock"
	systemd-socket-activate -l "$ASOCK" "$OFCD" --foreground --credentials-dir "$TMP" --config "$TORUS" \
		--state-dir "$ST" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 2>"$TMP/act.log" &
	ofcd_pid=$!
	i=0
	while [ ! -S "$ASOCK" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	expect_json 'j["topology"]["spec"]=="torus:8x8"' $OFC status --socket "$ASOCK" --json
	kill -TERM $ofcd_pid
	wait $ofcd_pid
	[ $? -eq 0 ] && [ -S "$ASOCK" ] && ok || bad "activated ofcd: exit or socket removed" "$(tail -3 "$TMP/act.log")"
fi
finish
