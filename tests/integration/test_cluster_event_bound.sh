#!/bin/sh
# An event bounded through replicas on etcd (docs/control.md, "Events"):
# port 3 of every host of a 256-host torus reported failed by names long
# enough that the list is over 16 KiB. The events arrive on a follower
# numbered on from the earlier ones, their failed list cut to the first
# names and saying how many more; the store's log still holds the earlier
# events; after the leader is killed, the new leader's events are numbered
# on from the last, none given twice.
SUITE=cluster_event_bound
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_event_bound: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
export PYTHONPATH="$BUILD/python"
# (host names of 63 characters, the longest a name may be)
PREFIX=a-host-whose-name-is-as-long-as-names-go-so-its-ports-fill-e
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
sed -e "s|^  count: 64|  count: 256|" -e "s|^  prefix: h|  prefix: $PREFIX|" \
	-e "s|^    ports: 256|    ports: 1024|" -e "s|^topology: .*|topology: torus:16x16|" \
	-e "s|credentials: .*|credentials: ocs0.cred|" configs/torus64-ocs.yaml >"$TMP/a.yaml"
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 1024 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --state "$TMP/e.state"
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
for r in r1 r2 r3; do
	replica_dir $r "$TMP/a.yaml" "$e_port"
	replica_start $r --probe-interval 0
done
wait_leader 30 r1 r2 r3 && ok || bad "no leader" "$(cluster_why r1 r2 r3)"
L=$LEADER
set -- $(others "$L")
F1=$1 F2=$2

# shellcheck disable=SC2154
$PY - "$TMP" "$L" "$F1" "$F2" "$(eval echo \$${L}_pid)" "$PREFIX" >"$TMP/bound.out" 2>&1 <<'PY' && ok ||
import os, signal, sys, time
from ofc_client import Client, control_pb2

tmp, leader, fol, other, pid, prefix = sys.argv[1:7]
sock = lambda n: f"{tmp}/{n}.sock"
K = control_pb2.Event
items = [f"{prefix}{h}:3" for h in range(256)]
assert sum(len(i) + 2 for i in items) > 16 << 10

c = Client(sock(leader), timeout=60)
c.reconfigure(topology="torus:16x16")
c.report_failure(["h0-h1".replace("h", prefix)])
c.report_failure(["h0-h1".replace("h", prefix)], restore=True)
c.report_failure(items)
# every event the store's log holds, from the follower's
def log_of(where):
    return list(Client(sock(where), timeout=10).watch(idle_timeout=3, after_seq=0, log=0))
end = time.monotonic() + 20
while True:
    evs = log_of(fol)
    if any(e.kind == K.KIND_SCHEDULE_REPLANNED and e.failed_left_out for e in evs) or time.monotonic() > end:
        break
seqs = [e.seq for e in evs]
print(len(evs), "events on", fol, "seq", seqs[:1], "..", seqs[-1:])
assert seqs == list(range(1, len(seqs) + 1)), f"not numbered in turn from 1: {seqs}"
assert any(e.kind == K.KIND_FAILURE_RESTORED for e in evs), "the earlier events are gone from the log"
cut = [e for e in evs if e.failed_left_out]
assert {e.kind for e in cut} >= {K.KIND_FAILURE_REPORTED, K.KIND_SCHEDULE_REPLANNED}, [K.Kind.Name(e.kind) for e in cut]
for e in cut:
    n = len(e.failed)
    assert 100 < n < 256 and n + e.failed_left_out == 256, (n, e.failed_left_out)
    assert f"failed lists {n} of 256 failures (GetState's failed has them all)" in e.message, e.message
    e.ClearField("delta")
    assert e.ByteSize() <= 16 << 10, e.ByteSize()
rep = [e for e in cut if e.kind == K.KIND_FAILURE_REPORTED][0]
assert list(rep.failed) == items[:len(rep.failed)], "not the first names"
assert len(Client(sock(fol), timeout=10).get_state().failed) == 256
last, log = seqs[-1], evs[-1].log

# The leader killed: the new one numbers on from the last, none twice.
os.kill(int(pid), signal.SIGKILL)
new, end = None, time.monotonic() + 40
while not new and time.monotonic() < end:
    for r in (fol, other):
        try:
            cl = Client(sock(r), timeout=3).get_state().cluster
        except Exception:
            continue
        if cl.role == "leader" and cl.took_over_unix_ms:
            new = r
    time.sleep(0.2)
assert new, "no new leader in 40 s"
Client(sock(new), timeout=60).report_failure(clear=True, restore=True)
end = time.monotonic() + 20
while True:
    evs = log_of(new)
    if any(e.kind == K.KIND_FAILURE_RESTORED and e.seq > last for e in evs) or time.monotonic() > end:
        break
seqs = [e.seq for e in evs]
print(len(evs), "events on", new, "after the failover, last", seqs[-1:])
assert all(e.log == log for e in evs), "another log"
assert seqs == list(range(1, len(seqs) + 1)) and seqs[-1] > last, f"numbers given twice or skipped: {seqs}"
PY
	bad "an event over 16 KiB through replicas" "$(cat "$TMP/bound.out"; cluster_why r1 r2 r3)"
finish
