#!/bin/sh
# ocs-emu's --save-ms: the state save put off after a change (as a large
# switch's bench needs: a save writes every cross-connect) and still what
# the switch holds whenever it answers anything but a change, once a session
# has closed, and once a SIGTERM has ended it; the file then loads back.
# MS is ten minutes here, so only those moments save.
SUITE=emu_save
. tests/integration/lib.sh
. tests/integration/emu.sh

CRED=configs/credentials/ocs0.cred
expect_error 2 "ocs-emu: --save-ms must be 0..600000, got 'soon'" \
	"$BUILD/ocs-emu" --listen 127.0.0.1:0 --ports 8 --save-ms soon

: >"$TMP/e.state"
start_emu ocs-emu e --ports 8 --credentials "$CRED" --state "$TMP/e.state" --save-ms 600000
# One session: two changes (not saved yet), a read-back (saved), a third
# change and the session closed (saved); a second session deletes one and
# the emulator gets SIGTERM with that session open (saved before it ends).
python3 - "$e_port" "$e_pid" "$TMP/e.state" >"$TMP/py.out" 2>&1 <<'PY'
import os, signal, socket, sys, time

port, pid, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
class Session:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        cmd(self, "ACT-USER::admin:1::ofc-demo")
def session():
    return Session()
def cmd(s, text):
    s.s.sendall(text.encode() + b";")
    while b"\r\n;" not in s.buf:
        chunk = s.s.recv(65536)
        if not chunk:
            sys.exit("BAD the emulator closed the session at " + text)
        s.buf += chunk
    reply, s.buf = s.buf.split(b"\r\n;", 1)
    if b"COMPLD" not in reply:
        sys.exit("BAD %s: %r" % (text, reply))
def state():
    return open(path).read()
def eventually(want, what):
    end = time.monotonic() + 10
    while state() != want and time.monotonic() < end:
        time.sleep(0.01)
    print(("OK " if state() == want else "BAD ") + what + ": %r" % state())

s = session()
cmd(s, "ENT-PATCH::1,9:2:")
cmd(s, "ENT-PATCH::2,10:3:")
print(("OK " if state() == "" else "BAD ") + "two changes put off: %r" % state())
cmd(s, "RTRV-PATCH:::4:")
print(("OK " if state() == "1 1\n2 2\n" else "BAD ") + "saved before a read-back: %r" % state())
cmd(s, "ENT-PATCH::3,11:5:")
s.s.close()
eventually("1 1\n2 2\n3 3\n", "saved once the session closed")
s = session()
cmd(s, "DLT-PATCH::1:6:")
os.kill(pid, signal.SIGTERM)
eventually("2 2\n3 3\n", "saved on SIGTERM")
PY
if ! grep -q BAD "$TMP/py.out" && [ "$(grep -c '^OK' "$TMP/py.out")" -eq 4 ]; then ok; else
	bad "--save-ms" "$(cat "$TMP/py.out")"
fi
# (a watchdog: should the signal not end it, it is killed, 137)
(sleep 10 && kill -9 "$e_pid" 2>/dev/null) &
dog=$!
wait "$e_pid"
rc=$?
kill "$dog" 2>/dev/null
wait "$dog" 2>/dev/null
[ $rc -eq 143 ] && ok || bad "ended by SIGTERM as without --save-ms: exit $rc"
stop_emu "$e_pid"

# The file loads back: the switch holds what it held at the signal.
start_emu ocs-emu f --ports 8 --credentials "$CRED" --state "$TMP/e.state" --save-ms 600000
python3 - "$f_port" >"$TMP/rtrv" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"ACT-USER::admin:1::ofc-demo;RTRV-PATCH:::2:;")
data = b""
while data.count(b"\r\n;") < 2:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data.decode("ascii", "replace"))
PY
if grep -q '"2,10"' "$TMP/rtrv" && grep -q '"3,11"' "$TMP/rtrv" && ! grep -q '"1,' "$TMP/rtrv"; then ok; else
	bad "the state loaded back" "$(cat "$TMP/rtrv")"
fi
stop_emu "$f_pid"

finish
