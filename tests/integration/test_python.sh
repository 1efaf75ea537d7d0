#!/bin/sh
# The Python client (python/ofc_client, built into $BUILD/python) against a
# real ofcd and ocs-emu; ofcd under a service manager's eyes: sd_notify
# READY/STATUS/STOPPING and socket activation.
SUITE=python
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

OFCD=${OFCD:-$BUILD/ofcd}
# Debian's python3 has python3-protobuf; a python3 earlier on PATH may not.
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
export PYTHONPATH="$BUILD/python"
# doc_example NAME FROM TO ...: the example of docs/python.md that follows
# `<!-- test_python: NAME -->`, run as written there with each FROM (an
# address, a certificate) replaced by this test's TO
doc_example() {
	$PY - "$@" <<'PY'
import re, sys
name, subs = sys.argv[1], sys.argv[2:]
text = open("docs/python.md").read()
m = re.search(r"<!-- test_python: %s -->\n```python\n(.*?)\n```\n" % re.escape(name), text, re.S)
if not m:
    sys.exit(f"docs/python.md has no example {name!r}")
code = m.group(1)
for a, b in zip(subs[::2], subs[1::2]):
    if a not in code:
        sys.exit(f"the example {name!r} no longer says {a!r}")
    code = code.replace(a, b)
exec(compile(code, f"docs/python.md ({name})", "exec"), {"__name__": "__main__"})
PY
}
trap 'kill -9 $ofcd_pid 2>/dev/null; stop_cluster; rm_tmp' EXIT

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
# a watch resumed after an event gets the kept ones after it, numbered on
kept = list(Client(sys.argv[1]).watch(idle_timeout=0.5, after_seq=0))
assert [e.seq for e in kept] == list(range(1, len(kept) + 1)) and len(kept) >= 5, kept
assert "KIND_REQUEST_DONE" in [control_pb2.Event.Kind.Name(e.kind) for e in kept], kept
# (what the log kept then, and maybe more: the state's schedule, re-planned
# after the commit, may add its event between two watches on a slow build)
again = list(Client(sys.argv[1]).watch(idle_timeout=0.5, after_seq=kept[1].seq, log=kept[1].log))
seqs = [e.seq for e in again]
assert seqs[:len(kept) - 2] == [e.seq for e in kept[2:]] and seqs == list(range(3, 3 + len(seqs))), again
other = list(Client(sys.argv[1]).watch(idle_timeout=0.5, after_seq=kept[1].seq, log=kept[1].log + 1))
assert [e.seq for e in other][:len(kept)] == [e.seq for e in kept] and len(other) >= len(again) + 2, other
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
# A host's agent's report: its port down is the failure h2:1 (as ofc fail
# makes it); a neighbour naming no host is refused by name.
r = c.report_links("h2", [{"port": 0, "up": True}, {"port": 1, "up": False, "ifname": "eth1"}])
assert r.transaction.kind == "report-failure" and "h2:1" in r.message, r
assert list(c.get_state().failed) == ["h2:1"]
try:
    c.report_links("h2", [{"port": 0, "up": True, "neighbour_host": "nas", "neighbour_port": 0}])
    raise SystemExit("a neighbour naming no host was accepted")
except OfcError as e:
    assert e.status == "STATUS_INVALID" and "'nas' names no host" in str(e), str(e)
c.report_failure(clear=True, restore=True)
# A switch port drained: the schedule without the host port cabled to it,
# the state says so; the whole switch would cut every host off: refused.
r = c.drain(["ocs0:1"], grace_s=0)
assert r.transaction.kind == "drain" and r.transaction.state == "drained", r
d = list(c.get_state().drained)
assert len(d) == 1 and d[0].switch_name == "ocs0" and d[0].port == 1 and d[0].host_port, d
sc = c.get_schedule("allreduce", summary_only=True)
assert sc.verified and sc.topology == "torus:8x8 without %s" % d[0].host_port, sc
try:
    c.drain(["ocs0"])
    raise SystemExit("a drain that cuts every host off was accepted")
except OfcError as e:
    assert e.status == "STATUS_INVALID" and "would cut" in str(e), str(e)
r = c.undrain(["ocs0"])
assert r.transaction.kind == "undrain" and not c.get_state().drained, r
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
	grep -q "^fabric torus64-ocs generation [0-9]* topology torus:8x8 at target" "$TMP/ex.out" && ok ||
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
# docs/python.md's example, then the torus again for what follows.
doc_example "one ofcd" /run/ofc/ofcd.sock "$SOCK" >"$TMP/doc.out" 2>&1 &&
	grep -q "^committed transaction" "$TMP/doc.out" && grep -q "verified\|steps," "$TMP/doc.out" && ok ||
	bad "docs/python.md: the example" "$(cat "$TMP/doc.out")"
expect_stdout_has "committed transaction" $PY -m ofc_client --socket "$SOCK" reconfigure torus:8x8
kill -TERM $ofcd_pid
wait $ofcd_pid
rc=$?
[ $rc -eq 0 ] && ok || bad "ofcd did not exit 0" "exit $rc; $(tail -c 1500 "$TMP/ofcd.log")"
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

# ---- without a daemon: hostlists, addresses, options ---------------------------
$PY - <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "hostlists, addresses and options" "$(cat "$TMP/py.out")"
import os
from ofc_client import Client, expand_hostlist
assert expand_hostlist("h[0-2,7],x[08-10]y[1-2],login,,") == \
    ["h0", "h1", "h2", "h7", "x08y1", "x08y2", "x09y1", "x09y2", "x10y1", "x10y2", "login"]
for bad, why in (("h[1-0]", "range 1-0 runs backwards"), ("h[0-1", "'[' without ']'"),
                 ("h[0-1]a", "text after the last ']'"), ("h[[1]]", "nested '['"),
                 ("h 1", "unexpected character ' '"), ("", "empty")):
    try:
        expand_hostlist(bad)
        raise SystemExit(f"{bad!r} expanded")
    except ValueError as e:
        assert why in str(e), (bad, str(e))
os.environ.pop("OFC_SERVER", None)
os.environ["OFC_SOCKET"] = "/a.sock, /b.sock,/a.sock"
assert Client().addresses == ("/a.sock", "/b.sock")
assert Client(["/c.sock", "/d.sock"]).addresses == ("/c.sock", "/d.sock")
assert Client("/x,y.sock").addresses == ("/x,y.sock",)  # a path is not split
os.environ["OFC_SERVER"] = "https://a:1, https://b:2/"  # (before OFC_SOCKET)
try:
    Client()
    raise SystemExit("a gateway without a certificate")
except ValueError as e:
    assert str(e).startswith("a gateway asks for a client certificate"), str(e)
os.environ.pop("OFC_SERVER")
for kw, why in ((dict(server="https://h:1"), "a gateway asks for a client certificate: give cert="),
                (dict(server="https://h:1", cert="/none.pem"), "cert= /none.pem: No such file"),
                (dict(path=["/s", "http://h:1"]), "http://h:1: ofc-gateway speaks HTTPS only")):
    try:
        Client(**kw)
        raise SystemExit(f"{kw} accepted")
    except ValueError as e:
        assert str(e).startswith(why), str(e)
try:
    Client(["/n1.sock", "/n2.sock"], timeout=0.3).get_state()
    raise SystemExit("no daemon, no error")
except ConnectionError as e:
    assert str(e).startswith("no ofcd answered within 0.3 s: /n1.sock: cannot connect "
                             "(No such file or directory); /n2.sock: cannot connect"), str(e)
PY
# Every option docs/python.md's synopses show is one that command's --help has.
$PY - <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "docs/python.md's synopses" "$(cat "$TMP/py.out")"
import re, subprocess, sys
lines = [l.strip() for l in open("docs/python.md") if l.strip().startswith("python3 -m ofc_client ")]
assert len(lines) >= 6, lines
helps = {}
for l in lines:
    words = re.sub(r"\[[^]]*\]\.*|\.\.\.", " ", l).split()[3:]
    cmd = next(w for w in words if re.fullmatch(r"[a-z]+", w))
    for argv in ([], [cmd]):
        if tuple(argv) not in helps:
            helps[tuple(argv)] = subprocess.run([sys.executable, "-m", "ofc_client", *argv, "--help"],
                                               capture_output=True, text=True, check=True).stdout
    for o in re.findall(r"--[a-z][a-z-]*", l):
        assert re.search(re.escape(o) + r"\b", helps[()] + helps[(cmd,)]), (o, l)
PY
# Replicas played by this test (each answers every request alike): a follower
# names a leader, another an election, one closes at once, one is shutting
# down, one leads. The client goes on to the next, follows the hint, and at
# the deadline names every address and why.
$PY - "$TMP" <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "the client among replicas played by the test" "$(cat "$TMP/py.out")"
import socket, struct, sys, threading, time
from ofc_client import Client, OfcError
from ofc_client.pb import control_pb2 as pb
t = sys.argv[1]
asked = {}
def replica(name, answer):
    path = f"{t}/fake-{name}.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(64)
    def serve():
        while True:
            c, _ = s.accept()
            asked[name] = asked.get(name, 0) + 1
            n = struct.unpack(">I", c.recv(4))[0]
            data = b""
            while len(data) < n:
                data += c.recv(n - len(data))
            req = pb.Request.FromString(data)
            r = answer(req)
            if r is not None:
                r.id = req.id
                b = r.SerializeToString()
                c.sendall(struct.pack(">I", len(b)) + b)
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return path
def follower(lead, where):
    r = pb.Response(status=pb.STATUS_NOT_LEADER, message="this replica follows")
    if lead:
        r.leader.name, r.leader.socket = lead, where
    return lambda req: r
dead = f"{t}/fake-dead.sock"
L = replica("leader", lambda req: pb.Response(status=pb.STATUS_OK, message="done"))
F = replica("follower", follower("rL", L))
FD = replica("follower-of-dead", follower("rD", dead))
E = replica("election", follower(None, None))
X = replica("closer", lambda req: None)
B = replica("stopping", lambda req: pb.Response(status=pb.STATUS_BUSY, message="ofcd is shutting down"))
req = lambda: pb.Request(reconfigure=pb.Reconfigure(topology="ring:4"))
c = Client([X, B, F])
assert c.call(req()).message == "done" and c._leader == L
assert c.call(req()).message == "done" and asked["follower"] == 1  # the leader, asked first now
try:
    Client([FD, E], timeout=1.5).call(req())
    raise SystemExit("no leader, no error")
except OfcError as e:
    assert e.status == "STATUS_NOT_LEADER", e.status
    assert str(e) == (f"no replica led within 1.5 s: {FD}: follows; the leader is rD at {dead}; "
                      f"{dead}: cannot connect (No such file or directory); {E}: follows; no "
                      "replica leads now (an election is under way)"), str(e)
assert asked["election"] >= 2, asked  # asked again after a backoff
try:
    Client([X, B], timeout=1).get_state()
    raise SystemExit("no answer, no error")
except ConnectionError as e:
    assert str(e) == (f"no ofcd answered within 1 s: {X}: closed the connection before it "
                      f"answered; {B}: ofcd is shutting down"), str(e)
# one that takes the request and says nothing: the timeout is the call's
S = replica("silent", lambda req: time.sleep(3))
try:
    Client([X, S], timeout=1).get_state()
    raise SystemExit("no answer, no error")
except TimeoutError as e:
    assert str(e) == (f"ofcd at {S} did not answer within 1 s; before it: {X}: closed the "
                      "connection before it answered"), str(e)
# two followers naming each other: no loop, the deadline ends it
F2 = f"{t}/fake-f2.sock"
F1 = replica("f1", follower("r2", F2))
replica("f2", follower("r1", F1))
try:
    Client([F1], timeout=1).call(req())
    raise SystemExit("a loop of followers answered")
except OfcError as e:
    assert e.status == "STATUS_NOT_LEADER" and asked["f1"] >= 2 and asked["f2"] >= 2, (str(e), asked)
PY
expect_error 2 "python3 -m ofc_client: --cert, --key and --cacert go with --server URL" \
	env -u OFC_SERVER $PY -m ofc_client --socket "$SOCK" --cert x.pem status
expect_error 2 "python3 -m ofc_client: a gateway asks for a client certificate: give --cert (and --key unless the key is in the same file)" \
	$PY -m ofc_client --server https://127.0.0.1:1 status
expect_error 2 "python3 -m ofc_client: reconfigure --hosts makes a partition: give --partition NAME, --hosts LIST and a TOPOLOGY" \
	$PY -m ofc_client --socket "$SOCK" reconfigure --hosts 'h[0-3]' ring:4
expect_error 1 "ofc_client: no ofcd answered within 0.5 s: --socket $TMP/none1.sock: cannot connect (No such file or directory); --socket $TMP/none2.sock: cannot connect (No such file or directory)" \
	$PY -m ofc_client --timeout 0.5 --socket "$TMP/none1.sock" --socket "$TMP/none2.sock" status

# ---- replicas: the client finds the leader itself (docs/python.md, "Replicas") ---
if ! command -v etcd >/dev/null; then
	echo "python: no etcd (scripts/install-deps.sh installs etcd-server): replicas skipped"
	finish
	exit
fi
# A CA, the gateways' certificate, an admin's, and another CA.
C="$TMP/pki"
mkdir -p "$C"
newkey() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" 2>/dev/null; }
newkey -x509 -days 2 -keyout "$C/ca.key" -out "$C/ca.pem" -subj /CN=ofc-python-test-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
newkey -x509 -days 2 -keyout "$C/other.key" -out "$C/other.pem" -subj /CN=other-ca \
	-addext basicConstraints=critical,CA:TRUE
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >"$C/server.ext"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >"$C/admin.ext"
for n in server admin; do
	newkey -keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$n"
	openssl x509 -req -in "$C/$n.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -extfile "$C/$n.ext" -out "$C/$n.pem" >/dev/null 2>&1
done
echo "cn:admin admin" >"$TMP/policy"
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
# (a switch that takes 5 ms a change: a transaction long enough to kill its leader in)
start_emu ocs-emu e2 --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --delay-ms 5
etcd_start 1 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
for r in r1 r2 r3; do
	$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" \
		--ca "$C/ca.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/$r.gw" \
		--port-file "$TMP/$r.gwport" 2>"$TMP/$r.gwlog" &
	HELPER_PIDS="$HELPER_PIDS $!"
done
for r in r1 r2 r3; do
	deadline 10
	while [ ! -s "$TMP/$r.gwport" ] && ! past $_end; do sleep 0.02; done
	eval "GW_$r=https://127.0.0.1:$(cat "$TMP/$r.gwport")"
	replica_dir $r "$TORUS" "$e2_port"
	eval "_u=\$GW_$r"
	replica_start $r --probe-interval 0 --gateway-socket "$TMP/$r.gw" --gateway-uid "$(id -u)" \
		--advertise "$_u"
done
wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
set -- $(for r in r1 r2 r3; do [ $r = "$L" ] || echo $r; done)
F1=$1 F2=$2
eval "L_pid=\$${L}_pid"
# A port nothing listens on: a gateway that is down.
DEAD=https://127.0.0.1:$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# A mutation through a follower, through a dead socket, through the follower
# alone: each reaches the leader; reads are answered where asked.
$PY - "$TMP" "$L" "$F1" "$F2" <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "the leader found among sockets" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client, OfcError
t, L, F1, F2 = sys.argv[1:]
s = lambda r: f"{t}/{r}.sock"
r = Client([s(F1), s(L)]).reconfigure(topology="torus:8x8")
assert r.transaction.state == "committed" and r.transaction.operations == 256, r
r = Client([f"{t}/dead.sock", s(L)]).reconfigure(topology="circulant:64:3,8")
assert r.transaction.state == "committed", r
c = Client([s(F2)])
r = c.reconfigure(topology="torus:8x8")
assert r.transaction.state == "committed" and c._leader == s(L), (r, c._leader)
st = Client([s(F1), s(L)]).get_state()
assert st.cluster.name == F1 and st.cluster.role == "follower" and st.cluster.leader.name == L, st.cluster
PY

# A partition made at run time of hosts, and released, through the replicas.
$PY - "$TMP" "$L" "$F1" "$F2" <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "reconfigure(partition=, hosts=), release_partition" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client, OfcError
t, L, F1, F2 = sys.argv[1:]
c = Client([f"{t}/{r}.sock" for r in (F1, F2, L)])
r = c.reconfigure("ring:8", partition="jobA", hosts="h[0-7]")
assert r.message.startswith("committed transaction") and r.transaction.state == "committed", r
held = {h.name: h for h in Client(f"{t}/{L}.sock").get_state().held}
assert list(held) == ["jobA"] and list(held["jobA"].hosts) == [f"h{i}" for i in range(8)] \
    and held["jobA"].topology == "ring:8", held
r = c.reconfigure("ring:4", partition="jobB", hosts=["h8", "h9", "h10", "h11"], relabel=True,
                  dry_run=True)
assert r.transaction.state == "planned", r
try:
    c.reconfigure("ring:4", partition="jobC", hosts="h[4-7]")
    raise SystemExit("an overlap was held")
except OfcError as e:
    assert "jobA" in str(e), str(e)
r = c.release_partition("jobA")
assert "jobA" in r.message, r.message
assert not Client(f"{t}/{L}.sock").get_state().held
PY

# kill -9 of the leader in the middle of a transaction: the same call, with the
# same addresses, completes on the new leader.
$PY - "$TMP" "$L" "$L_pid" <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "a call across the leader's kill -9" "$(cat "$TMP/py.out")"
import os, signal, sys, threading, time
from ofc_client import Client
t, L, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = Client([f"{t}/{r}.sock" for r in ("r1", "r2", "r3")], timeout=40)
out = {}
def run():
    try:
        out["r"] = c.reconfigure(topology="circulant:64:3,8")
    except Exception as e:
        out["e"] = e
th = threading.Thread(target=run)
th.start()
time.sleep(0.4)
os.kill(pid, signal.SIGKILL)
th.join(45)
assert "r" in out, out
assert out["r"].transaction.state == "committed", out["r"]
st = c.get_state()
assert st.cluster.leader.name != L and st.topology.spec == "circulant:64:3,8" and st.at_target, st.cluster
r = c.reconfigure(topology="torus:8x8")  # and the next, with nothing changed
assert r.transaction.state == "committed" and c._leader != f"{t}/{L}.sock", r
print("new leader", st.cluster.leader.name)
PY
wait "$L_pid" 2>/dev/null
wait_leader 20 r1 r2 r3 && [ "$LEADER" != "$L" ] && ok || bad "a new leader" "$LEADER"
OLD=$L
L=$LEADER

# docs/python.md's replicas example, one replica dead
doc_example replicas /run/ofc/r1.sock "$TMP/r1.sock" /run/ofc/r2.sock "$TMP/r2.sock" \
	/run/ofc/r3.sock "$TMP/r3.sock" >"$TMP/doc.out" 2>&1 &&
	grep -q "^committed transaction" "$TMP/doc.out" && grep -q "^job-17 ring:8 8 hosts, owner " "$TMP/doc.out" &&
	grep -q "^released partition 'job-17'" "$TMP/doc.out" && ok ||
	bad "docs/python.md: the replicas example" "$(cat "$TMP/doc.out")"

# Through the gateways: the first URL dead, the next one's ofcd killed above
# (HTTP 502), then the followers' and the leader's.
eval "GWO=\$GW_$OLD GWL=\$GW_$L"
set -- $(for r in r1 r2 r3; do [ $r = "$OLD" ] || [ $r = "$L" ] || echo $r; done)
eval "GWF=\$GW_$1"
$PY - "$C" "$DEAD" "$GWO" "$GWF" "$GWL" <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "the leader found among gateways" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client, OfcError
c, dead, gwo, gwf, gwl = sys.argv[1:]
tls = dict(cert=f"{c}/admin.pem", key=f"{c}/admin.key", cacert=f"{c}/ca.pem")
cl = Client(server=[dead, gwo, gwf], **tls)
r = cl.reconfigure("ring:8", partition="jobG", hosts="h[16-23]")
assert r.transaction.state == "committed" and cl._leader == gwl, (r, cl._leader)
assert [h.name for h in cl.get_state().held] == ["jobG"]
assert "jobG" in cl.release_partition("jobG").message
try:
    Client(server=f"{dead},{gwo}", timeout=3, **tls).get_state()
    raise SystemExit("no gateway, no error")
except ConnectionError as e:
    assert str(e).startswith(f"no ofcd answered within 3 s: {dead}: cannot connect "
                             f"(Connection refused); {gwo}: HTTP 502: ofcd did not answer"), str(e)
try:
    Client(server=gwf, cert=tls["cert"], key=tls["key"], cacert=f"{c}/other.pem").get_state()
    raise SystemExit("a gateway's certificate of another CA was trusted")
except ConnectionError as e:
    assert str(e).startswith(f"{gwf}: the gateway's certificate is not signed by a CA you gave "
                             "(cacert=)"), str(e)
# a call whose deadline passes after the connection: a timeout, before the
# request and before reading the answer (a TLS socket given a timeout of 0
# is non-blocking and its read raises SSLWantReadError instead)
import time
from ofc_client._transport import _HttpsConn, tls_context
from ofc_client.pb import control_pb2 as pb
ctx = tls_context(tls["cert"], tls["key"], tls["cacert"], {"cert": "cert=", "key": "key=", "cacert": "cacert="})
for late in ("send", "recv"):
    conn = _HttpsConn(gwl, ctx, 10, 1 << 20, deadline=time.monotonic() + 30)
    try:
        if late == "recv":
            conn.send(pb.Request(id=1, get_state=pb.GetState()))
        conn.deadline = time.monotonic()
        time.sleep(0.05)
        conn.send(pb.Request(id=2, get_state=pb.GetState())) if late == "send" else conn.recv()
        raise SystemExit(f"{late} after the deadline: no error")
    except TimeoutError as e:
        assert ("deadline passed before the request" if late == "send" else "did not answer before the call's deadline") in str(e), (late, str(e))
    finally:
        conn.close()
PY
# docs/python.md's gateways example: the first one's ofcd is dead
doc_example gateways https://ofc1.lab:8443 "$GWO" https://ofc2.lab:8443 "$GWF" \
	https://ofc3.lab:8443 "$GWL" /etc/ofc/launcher.pem "$C/admin.pem" \
	/etc/ofc/launcher.key "$C/admin.key" /etc/ofc/ca.pem "$C/ca.pem" >"$TMP/doc.out" 2>&1 &&
	grep -q "^torus64-ocs asked r. led by $L\$" "$TMP/doc.out" && grep -q "^committed transaction" "$TMP/doc.out" &&
	grep -q "^released partition 'job-18'" "$TMP/doc.out" && ok ||
	bad "docs/python.md: the gateways example" "$(cat "$TMP/doc.out")"
# python3 -m ofc_client: --server repeated and as a list; errors name --cacert.
TLS="--cert $C/admin.pem --key $C/admin.key --cacert $C/ca.pem"
expect_stdout_has "committed transaction" $PY -m ofc_client --server "$DEAD,$GWO" --server "$GWF" $TLS \
	reconfigure --partition jobS --hosts 'h[24-27]' ring:4
expect_stdout_has "partition jobS: ring:4 on 4 hosts" $PY -m ofc_client --server "$GWL" $TLS status
expect_stdout_has "leader $L" $PY -m ofc_client --server "$DEAD,$GWO" --server "$GWF" $TLS status
expect_stdout_has "jobS" $PY -m ofc_client --server "$GWF" $TLS release jobS
expect_error 1 "ofc_client: $GWF: the gateway's certificate is not signed by a CA you gave (--cacert): unable to get local issuer certificate" \
	$PY -m ofc_client --server "$GWF" --cert "$C/admin.pem" --key "$C/admin.key" --cacert "$C/other.pem" status
expect_stdout_has "leader $L" env OFC_SERVER="$DEAD,$GWF" OFC_CERT="$C/admin.pem" OFC_KEY="$C/admin.key" \
	OFC_CACERT="$C/ca.pem" $PY -m ofc_client status
expect_stdout_has "fabric torus64-ocs generation" env OFC_SOCKET="$TMP/$OLD.sock,$TMP/$F1.sock,$TMP/$F2.sock" \
	$PY -m ofc_client status
finish
