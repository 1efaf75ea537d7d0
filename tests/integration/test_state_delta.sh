#!/bin/sh
# A copy of the state kept from the events' deltas (Event.delta,
# ofc_client.state_copy) equals a fresh read byte for byte after a run of
# mutations: on a single ofcd, and on replicas (a follower's watch, the
# leader's, across a failover, where the new leader's first event says read
# again). A leader stopped during a transaction writes its end's events to
# the store's log before it exits.
SUITE=state_delta
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

OFC=${OFC:-$BUILD/ofc}
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
export PYTHONPATH="$BUILD/python:$(dirname "$0")"
trap 'kill -9 $ofcd_pid 2>/dev/null; stop_cluster; rm_tmp' EXIT

# ---- a single ofcd --------------------------------------------------------------------
make_torus_config "$TMP/torus.yaml" torus:8x8 2s 2
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred
$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$TMP/torus.yaml" --socket "$TMP/o.sock" \
	--ro-socket "$TMP/ro.sock" --state-dir "$TMP/st" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 2>"$TMP/ofcd.log" &
ofcd_pid=$!
deadline 10
while [ ! -S "$TMP/o.sock" ] && ! past $_end; do sleep 0.02; done

# (e's pid: the switch lost at the end, while the state's snapshot stands)
# shellcheck disable=SC2154
$PY - "$TMP/o.sock" "$e_pid" >"$TMP/single.out" 2>&1 <<'PY' && ok || bad "single ofcd: the copy from deltas is the read" "$(cat "$TMP/single.out")"
import os, signal, sys
from ofc_client import Client, OfcError, control_pb2
from state_follow import Follower

sock = sys.argv[1]
f = Follower(sock)
assert f.copy.seq == 0 and f.copy.log, (f.copy.seq, f.copy.log)
f.start()
c = Client(sock, timeout=60)
c.reconfigure("ring:8", partition="jA", hosts="h[0-7]")
c.reconfigure("ring:4", partition="jB", hosts="h[8-11]")
c.report_failure(["h16-h17"])
c.release_partition("jA")
c.release_partition("jB")
c.reconfigure(topology="circulant:64:3,8")
c.report_failure(clear=True, restore=True)
# a drain's state (State.drained, published mid-drain too) follows by delta
c.drain(["ocs0:100"], grace_s=0)
ok, why = f.agree(sock)
assert ok, why
assert len(f.copy.state.drained) == 1, f.copy.state.drained
c.undrain(["ocs0"])
c.reconfigure("ring:8", partition="jD", hosts="h[0-7]")
ok, why = f.agree(sock)
assert ok, why
# The switch lost: its reachability changes while its circuits (packed once
# a snapshot) stay; the copy follows both. (Compared with a read-only
# client's read: the copy, as such a client's, has the device's error as
# its reason's word, not the text the admin socket shows.)
os.kill(int(sys.argv[2]), signal.SIGKILL)
try:
    c.reconfigure("ring:4", partition="jE", hosts="h[12-15]")
except OfcError:
    pass
ok, why = f.agree(sock.replace("o.sock", "ro.sock"))
f.stop = True
assert ok, why
kinds = [control_pb2.Event.Kind.Name(e.kind) for e in f.events if e.HasField("delta")]
print(len(f.events), "events,", len(kinds), "with a delta:", kinds)
assert f.rereads == 0, f"the copy was read again {f.rereads} times"
assert len(kinds) >= 6, kinds
# a commit's event carries the circuits it changed, as a patch of its switch
patches = [p for e in f.events if e.kind == control_pb2.Event.KIND_TRANSACTION_COMMITTED
           for p in e.delta.circuits]
assert patches and all(p.device == "ocs0" for p in patches), "no commit carried its circuits"
# (jA's ring of 8 on a switch of 256 ports: its 8 circuits, nothing else)
assert len(patches[0].added) == 8 and not patches[0].removed, patches[0]
assert any(e.delta.set.held for e in f.events), "no event carried a held partition"
assert any(e.delta.set.failed for e in f.events), "no event carried the failures"
assert any("failed" in e.delta.cleared for e in f.events), "the failures' clearing was not said"
# the copy really moved: the last topology, jD held, jA and jB gone
assert f.copy.state.topology.spec.startswith("circulant"), f.copy.state.topology.spec
assert [h.name for h in f.copy.state.held] == ["jD"], f.copy.state.held
lost = [d for e in f.events for d in e.delta.set.devices
        if d.name == "ocs0" and d.HasField("reachable") and not d.reachable]
assert lost, "no event carried the switch lost"
assert [d for d in f.copy.state.devices if d.name == "ocs0"][0].circuits, "the circuits went"
PY
kill $ofcd_pid 2>/dev/null
wait $ofcd_pid 2>/dev/null
stop_all_emus

# ---- replicas: the leader's watch, a follower's, across a failover -----------------
three_replicas 0
wait_leader 30 r1 r2 r3 && ok || bad "no leader" "$(tail -5 "$TMP/r1.log")"
FOL=$(others "$LEADER" | cut -d' ' -f1)
$PY - "$TMP" "$LEADER" "$FOL" "r1:$r1_pid r2:$r2_pid r3:$r3_pid" $(others "$LEADER") >"$TMP/cluster.out" 2>&1 <<'PY' && ok || bad "replicas: the copies from deltas are the reads, across a failover" "$(cat "$TMP/cluster.out")"
import os, signal, sys, threading, time
from ofc_client import Client, control_pb2
from state_follow import Follower

tmp, leader, fol, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5:]
pid = {n: int(p) for n, p in (x.split(":") for x in sys.argv[4].split())}
sock = lambda n: f"{tmp}/{n}.sock"
on_leader, on_follower = Follower(sock(leader)), Follower(sock(fol))
on_leader.start()
on_follower.start()
c = Client(sock(leader), timeout=60)
c.reconfigure("ring:8", partition="jA", hosts="h[0-7]")
c.report_failure(["h16-h17"])
c.reconfigure("ring:4", partition="jB", hosts="h[8-11]")
for f, where in ((on_leader, leader), (on_follower, fol)):
    ok, why = f.agree(sock(where))
    assert ok, f"watching {where}, read on {where}: {why}"
    assert f.rereads == 0, f"watching {where}: read again {f.rereads} times"
ok, why = on_follower.agree(sock(leader))
assert ok, f"watching {fol}, read on {leader}: {why}"
print("before the failover:", len(on_follower.events), "events on", fol)

# The leader killed; the copy kept on the follower follows on.
on_leader.stop = True
os.kill(pid[leader], signal.SIGKILL)
new, end = None, time.monotonic() + 40
while not new and time.monotonic() < end:
    for r in rest:
        try:
            cl = Client(sock(r), timeout=3).get_state().cluster
        except Exception:
            continue
        if cl.role == "leader" and cl.took_over_unix_ms:
            new = r
    time.sleep(0.2)
assert new, "no new leader in 40 s"
c = Client(sock(new), timeout=60)
c.release_partition("jA")
c.report_failure(clear=True, restore=True)
c.reconfigure("ring:8", partition="jC", hosts="h[32-39]")
for where in (fol, new):
    ok, why = on_follower.agree(sock(where))
    assert ok, f"after the failover, watching {fol}, read on {where}: {why}"
print("after it:", len(on_follower.events), "events, read again", on_follower.rereads)
assert on_follower.rereads == 1, f"read again {on_follower.rereads} times (once: the new leader's first event)"
assert sorted(h.name for h in on_follower.copy.state.held) == ["jB", "jC"], on_follower.copy.state.held
on_follower.stop = True

# A leader stopped (SIGTERM) while a transaction runs finishes it, and
# the events of its end reach the store's log before it exits: the last
# replica, leading next, has them.
last = [r for r in rest if r != new][0]
res = {}
def reconf():
    try:
        res["r"] = c.reconfigure("ring:4", partition="jE", hosts="h[40-43]")
    except Exception as e:
        res["e"] = e
# From where the log stands (a watch connects on its first read: the
# transaction could start before it; a replica may learn the log's events
# before a watch on it connects): the kept events after it, then the new.
st = Client(sock(new), timeout=30).get_state()
since = dict(after_seq=st.event_seq, log=st.event_log)
w = Client(sock(new), timeout=30).watch(idle_timeout=20, **since)
t = threading.Thread(target=reconf)
t.start()
for ev in w:
    if ev.kind == control_pb2.Event.KIND_TRANSACTION_STARTED:
        txn = ev.transaction
        break
else:
    raise AssertionError(f"no transaction started: {res}")
os.kill(pid[new], signal.SIGTERM)
t.join(30)
assert "r" in res, f"the reconfigure during the stop: {res}"
end = time.monotonic() + 60
got, why = [], None
while time.monotonic() < end:
    try:
        got = list(Client(sock(last), timeout=5).watch(idle_timeout=1, **since))
    except Exception as e:
        got, why = [], e
    if any(e.kind == control_pb2.Event.KIND_TRANSACTION_COMMITTED and e.transaction == txn
           for e in got):
        break
    time.sleep(0.3)
kinds = [(control_pb2.Event.Kind.Name(e.kind), e.transaction) for e in got]
assert ("KIND_TRANSACTION_COMMITTED", txn) in kinds, f"transaction {txn}'s end lost: {kinds} (last refusal: {why!r})"
assert any(e.kind == control_pb2.Event.KIND_REQUEST_DONE and e.partition == "jE" for e in got), kinds
print("the stopped leader's last events kept:", [k for k in kinds if k[1] == txn])
PY
finish
