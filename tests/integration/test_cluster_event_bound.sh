#!/bin/sh
# An event bounded through replicas on etcd (docs/control.md, "Events"):
# 4,096 links of a 4,096-host torus reported failed by names as long as
# names go, 530 KB of them, more than the store's log holds (512 KiB). The
# events arrive on a follower numbered on from the earlier ones, their
# failed list cut to the first names and saying how many more; the store's
# log still holds the earlier events (it was written empty); after the
# leader is killed, the new leader's events are numbered on from the last,
# none given twice. (No collectives: nothing is planned, so the report
# is cheap at this size; its answer says no schedule survives.)
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
# (host names of 63 characters, the longest a name may be; sim switches)
PREFIX=a-host-whose-name-is-as-long-as-names-go-so-its-links-fill-
{
	printf 'version: 1\nname: bound\nhosts: {count: 4096, prefix: %s, ports: 4}\nswitches:\n' $PREFIX
	for i in 0 1 2 3; do printf '  - {name: ocs%s, type: ocs, ports: 4096, driver: {type: sim}}\n' $i; done
	printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\ntopology: torus:64x64\n'
} >"$TMP/a.yaml"
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
for r in r1 r2 r3; do
	replica_dir $r "$TMP/a.yaml" 0
	replica_start $r --probe-interval 0
done
wait_leader 30 r1 r2 r3 && ok || bad "no leader" "$(cluster_why r1 r2 r3)"
L=$LEADER
set -- $(others "$L")
F1=$1 F2=$2

# shellcheck disable=SC2154
# (etcdctl's arguments for the store's log)
ETCD_ARGS="--endpoints https://127.0.0.1:$ETCD_C1 --cacert $ETCD_PKI/ca.pem --cert $ETCD_PKI/client.pem --key $ETCD_PKI/client.key"
$PY - "$TMP" "$L" "$F1" "$F2" "$(eval echo \$${L}_pid)" "$PREFIX" "$ETCD_ARGS" >"$TMP/bound.out" 2>&1 <<'PY' && ok ||
import base64, json, os, signal, subprocess, sys, time
from ofc_client import Client, control_pb2

tmp, leader, fol, other, pid, prefix = sys.argv[1:7]
sock = lambda n: f"{tmp}/{n}.sock"
K = control_pb2.Event
N = 4096
# host u's link to its neighbour along the torus's rows
items = [f"{prefix}{u}-{prefix}{u // 64 * 64 + (u + 1) % 64}" for u in range(N)]
assert sum(len(i) + 2 for i in items) > 512 << 10

c = Client(sock(leader), timeout=60)
c.report_failure([items[5]], check=False)
c.report_failure([items[5]], restore=True, check=False)
c.report_failure(items, check=False)
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
assert {e.kind for e in cut} >= {K.KIND_REQUEST_REFUSED, K.KIND_SCHEDULE_REPLANNED}, [K.Kind.Name(e.kind) for e in cut]
for e in cut:
    n = len(e.failed)
    assert 50 < n < N and n + e.failed_left_out == N, (n, e.failed_left_out)
    assert f"failed lists {n} of {N} failures (GetState's failed has them all)" in e.message, e.message
    e.ClearField("delta")
    assert e.ByteSize() <= 16 << 10, e.ByteSize()
rep = [e for e in cut if e.kind == K.KIND_REQUEST_REFUSED][0]
assert list(rep.failed) == items[:len(rep.failed)], "not the first names"
assert len(Client(sock(fol), timeout=10).get_state().failed) == N
# the store's log: the earlier events, then the cut ones
out = subprocess.run(["etcdctl", *sys.argv[7].split(), "get", "/ofc/bound/events", "-w", "json"],
                     capture_output=True, check=True, timeout=10).stdout
stored = control_pb2.EventLog.FromString(base64.b64decode(json.loads(out)["kvs"][0]["value"]))
kinds = [e.event.kind for e in stored.events]
print(len(kinds), "events in the store's log")
assert K.KIND_FAILURE_RESTORED in kinds, f"the store's log lost the earlier events: {kinds}"
assert [e.event.seq for e in stored.events] == seqs, "the store's log is not what the follower sent"
last, log = seqs[-1], evs[-1].log
# what the leader's own watchers were sent, by number
given = {e.seq: (e.kind, e.time_unix_ms) for e in log_of(leader)}
assert max(given) == last, f"the leader gave {max(given)}, the store holds up to {last}"

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
twice = [e.seq for e in evs if e.seq in given and given[e.seq] != (e.kind, e.time_unix_ms)]
assert not twice, f"numbers given twice: {twice}"
PY
	bad "an event over 512 KiB through replicas" "$(cat "$TMP/bound.out"; cluster_why r1 r2 r3)"
finish
