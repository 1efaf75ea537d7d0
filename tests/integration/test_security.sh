#!/bin/sh
# Files and inputs ofc must not trust: a FIFO in a file's place
# never blocks a command or the daemon.
SUITE=security
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

OFCD=${OFCD:-$BUILD/ofcd}
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
chmod 755 "$TMP"
ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
TORUS="$TMP/torus.yaml"
make_torus_config "$TORUS" torus:8x8 2s 1

# start_ofcd LOG ARGS...: ofcd in the foreground; waits until it answers.
start_ofcd() {
	log=$1
	shift
	"$OFCD" --foreground --credentials-dir "$TMP" "$@" 2>>"$TMP/$log" &
	ofcd_pid=$!
	DAEMONS="$DAEMONS $ofcd_pid"
	_w=0
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 1000 ]; do
		sleep 0.01
		_w=$((_w + 1))
	done
}
stop_ofcd() {
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
}
# bounded CMD...: the command, killed after 60 s: a hang fails the check
# that follows instead of the whole suite.
bounded() { timeout -s KILL 60 "$@"; }

# ---- FIFOs and devices in a file's place -------------------------------------------------
mkfifo "$TMP/fifo.yaml"
expect_error 2 "ofc: $TMP/fifo.yaml: is not a regular file" bounded $OFC show "$TMP/fifo.yaml"
expect_error 2 "ofcd: $TMP/fifo.yaml: is not a regular file" bounded \
	$OFCD --foreground --config "$TMP/fifo.yaml" --socket "$SOCK" --state-dir "$ST"
expect_error 2 "ofc: /dev/zero: is not a regular file" bounded $OFC show /dev/zero

start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
cp "$TORUS" "$TMP/live.yaml"
start_ofcd d1.log --config "$TMP/live.yaml" --socket "$SOCK" --state-dir "$ST" --device "$DEV" \
	--probe-interval 0
# SIGHUP while --config is a FIFO: the reload is rejected at once, and the
# mutation worker is free for the next request.
rm "$TMP/live.yaml"
mkfifo "$TMP/live.yaml"
kill -HUP "$ofcd_pid"
i=0
until grep -q "config rejected" "$TMP/d1.log" || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "config rejected: $TMP/live.yaml: is not a regular file" "$TMP/d1.log" && ok ||
	bad "a FIFO config was not rejected" "$(tail -3 "$TMP/d1.log")"
expect_stdout_has "committed transaction 1" bounded $OFC --socket "$SOCK" reconfigure --topology torus:8x8
expect_exit 0 stop_ofcd
# A FIFO where the journal or the lock should be: refused, not waited on.
mkfifo "$ST/torus64-ocs.journal"
expect_exit 1 bounded $OFC plan "$TORUS" --device "$DEV" --state-dir "$ST"
grep -q "torus64-ocs.journal: is not a regular file" "$TMP/err" && ok || bad "FIFO journal" "$(cat "$TMP/err")"
rm "$ST/torus64-ocs.journal"
rm -f "$ST/torus64-ocs.lock"
mkfifo "$ST/torus64-ocs.lock"
expect_exit 1 bounded $OFC apply "$TORUS" --device "$DEV" --state-dir "$ST"
grep -q "the lock is not a regular file" "$TMP/err" && ok || bad "FIFO lock" "$(cat "$TMP/err")"
expect_exit 0 bounded $OFC status "$TORUS" --device "$DEV" --state-dir "$ST"
rm "$ST/torus64-ocs.lock"

# ---- ocs-emu's --state: numbers are taken whole, the bad line quoted intact ------------------
printf '4294967298 1\n' >"$TMP/emu.state"
expect_error 2 "ocs-emu: $TMP/emu.state: bad line '4294967298 1'" \
	bounded $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 8 --state "$TMP/emu.state"
printf '1 2\n1 3\n' >"$TMP/emu.state"
expect_error 2 "ocs-emu: $TMP/emu.state: bad line '1 3'" \
	bounded $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 8 --state "$TMP/emu.state"
printf '1 +2\n' >"$TMP/emu.state"
expect_error 2 "ocs-emu: $TMP/emu.state: bad line '1 +2'" \
	bounded $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 8 --state "$TMP/emu.state"

# ---- damaged state files stop every change ------------------------------------------------
cp "$ST/torus64-ocs.state" "$TMP/good.state"
printf '\377\377\377\377\017' >"$ST/torus64-ocs.state"
cp "$ST/torus64-ocs.state" "$TMP/bad.state"
for cmd in plan apply try; do
	expect_error 1 "ofc: $ST/torus64-ocs.state: corrupt file: not an ofc.v1.FabricRecord message. Nothing is planned or changed while it is there; move it aside to start a new record: mv '$ST/torus64-ocs.state' '$ST/torus64-ocs.state.corrupt'" \
		bounded $OFC $cmd "$TORUS" --device "$DEV" --state-dir "$ST"
done
cmp -s "$ST/torus64-ocs.state" "$TMP/bad.state" && ok || bad "the damaged state file was overwritten"
mv "$ST/torus64-ocs.state" "$ST/torus64-ocs.state.corrupt"
expect_stdout_has "0 operations" bounded $OFC plan "$TORUS" --device "$DEV" --state-dir "$ST"

# ---- a device that never stops talking ----------------------------------------------------
# A TL1 "switch" that accepts the login, then answers every command with an
# endless stream of COMPLD blocks for the previous ctag, the stale replies
# the driver skips. Each command's deadline is absolute: with timeout 1s and
# retries 1, a read gives up after about 2 s however many bytes arrive.
python3 - "$TMP/stream.port" "$TMP/stream.log" <<'PY' &
import os, socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def block(ctag):
    return ("\r\n\n   STREAM 24-01-01 00:00:00\r\nM  %d COMPLD\r\n;\r\n" % ctag).encode()
def serve(c):
    buf = b""
    try:
        while True:
            d = c.recv(4096)
            if not d:
                return
            buf += d
            while b";" in buf:
                cmd, buf = buf.split(b";", 1)
                f = cmd.strip().decode().split(":")
                ctag = int(f[3])
                if f[0] == "ACT-USER":
                    c.sendall(block(ctag))
                    continue
                with open(sys.argv[2], "a") as log:
                    log.write("stream %s\n" % f[0])
                stale = block(ctag - 1) * 16384
                while True:
                    c.sendall(stale)
    except OSError:
        pass
    finally:
        c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
EMUS="$EMUS $!"
i=0
until [ -s "$TMP/stream.port" ] || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
SPORT=$(cat "$TMP/stream.port")
make_torus_config "$TMP/stream.yaml" torus:8x8 1s 1
t0=$(date +%s.%N)
expect_exit 1 bounded $OFC status "$TMP/stream.yaml" --device "ocs0=127.0.0.1:$SPORT" --state-dir "$TMP/st2"
t1=$(date +%s.%N)
grep -q "ocs0 (tl1): UNREACHABLE: ocs0: RTRV-PATCH (after 2 attempts): timed out" "$TMP/out" && ok ||
	bad "no timeout from a streaming device" "$(cat "$TMP/out" "$TMP/err")"
python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 6 else 1)" "$t0" "$t1" && ok ||
	bad "ofc status held by a streaming device" "$t0 .. $t1"
grep -q "stream RTRV-PATCH" "$TMP/stream.log" && ok || bad "the device never streamed"
# The daemon: its worker reads the device (the probe); SIGTERM is answered
# once the read's deadline passes, not never.
: >"$TMP/stream.log"
mkdir -p "$TMP/st3"
"$OFCD" --foreground --credentials-dir "$TMP" --config "$TMP/stream.yaml" --socket "$TMP/s3.sock" \
	--state-dir "$TMP/st3" --device "ocs0=127.0.0.1:$SPORT" --probe-interval 100ms 2>>"$TMP/d4.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until grep -q "stream RTRV-PATCH" "$TMP/stream.log" || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "stream RTRV-PATCH" "$TMP/stream.log" && ok || bad "ofcd never read the streaming device" "$(tail -3 "$TMP/d4.log")"
t0=$(date +%s.%N)
kill -TERM "$ofcd_pid"
i=0
while kill -0 "$ofcd_pid" 2>/dev/null && [ $i -ge 0 ] && [ $i -lt 1500 ]; do sleep 0.01; i=$((i + 1)); done
t1=$(date +%s.%N)
if kill -0 "$ofcd_pid" 2>/dev/null; then
	bad "ofcd ignores SIGTERM while a device streams" "$(tail -3 "$TMP/d4.log")"
	kill -9 "$ofcd_pid"
else
	python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 6 else 1)" "$t0" "$t1" &&
		ok || bad "ofcd took too long to stop" "$t0 .. $t1"
fi
wait "$ofcd_pid" 2>/dev/null

# ---- what local users can make the daemon spend ------------------------------------------
# Out of descriptors (ulimit -n 40, --max-clients 1024): connections past
# the limit wait in the backlog; the daemon rests its listeners and says so
# once, instead of spinning on accept() and logging each time.
start_emu ocs-emu e3 --ports 256 --credentials configs/credentials/ocs0.cred
mkdir -p "$TMP/st4"
(
	ulimit -n 40
	exec "$OFCD" --foreground --credentials-dir "$TMP" --config "$TORUS" --socket "$TMP/s4.sock" \
		--ro-socket "$TMP/ro4.sock" --state-dir "$TMP/st4" --device "ocs0=127.0.0.1:$e3_port" \
		--probe-interval 0
) 2>>"$TMP/d5.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until $OFC --socket "$TMP/s4.sock" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "needs [0-9]* file descriptors, the limit is 40" "$TMP/d5.log" && ok ||
	bad "no word on a descriptor limit short of --max-clients" "$(cat "$TMP/d5.log")"
# 100 clients from 4 users (uids 1000..1003, 25 each) on the read-only
# socket, held 3 s; then closed.
python3 - "$TMP/ro4.sock" <<'PY'
import os, socket, sys, time
socks = []
for uid in range(1000, 1004):
    pid = os.fork()
    if pid == 0:
        os.setgid(uid); os.setuid(uid)
        held = []
        for _ in range(25):
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            held.append(s)
        time.sleep(3)
        os._exit(0)
    socks.append(pid)
for p in socks:
    os.waitpid(p, 0)
PY
i=0
until $OFC --socket "$TMP/ro4.sock" status >/dev/null 2>&1 || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
expect_exit 0 $OFC --socket "$TMP/ro4.sock" status
n=$(grep -c "accept: Too many open files" "$TMP/d5.log")
[ "$n" -eq 1 ] && ok || bad "accept under EMFILE logged $n lines, want 1" "$(grep accept "$TMP/d5.log" | head -3)"
grep -q "accepting connections again" "$TMP/d5.log" && ok || bad "no word on accepting again"
expect_exit 0 stop_ofcd

# Stalled half-frames: 48 clients of one user each send 4 MiB - 1 of a
# 4 MiB frame and stop. Per user ofcd buffers 4 x --max-frame at most (the
# connections past it are answered BUSY and closed): the daemon's resident
# memory grows by some 16 MiB, not 48 x 4 MiB. (Under `make check`
# AddressSanitizer's quarantine would keep every freed 4 MiB buffer
# resident: it is turned off for this daemon, which the count is about.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" "$OFCD" --foreground --credentials-dir "$TMP" --config "$TORUS" --socket "$TMP/s4.sock" \
	--state-dir "$TMP/st4" --device "ocs0=127.0.0.1:$e3_port" --probe-interval 0 --max-frame 4MiB \
	2>>"$TMP/d6.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until $OFC --socket "$TMP/s4.sock" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
rss0=$(rss_kb "$ofcd_pid")
python3 - "$TMP/s4.sock" "$TMP/half.out" "$ofcd_pid" <<'PY'
import socket, struct, sys
held, closed = [], 0
body = b"\x08" * (4 * 1024 * 1024 - 1)
for _ in range(48):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    try:
        s.sendall(struct.pack(">I", 4 * 1024 * 1024) + body)
    except OSError:
        closed += 1
    held.append(s)
rss = [l.split()[1] for l in open("/proc/%s/status" % sys.argv[3]) if l.startswith("VmRSS")][0]
open(sys.argv[2], "w").write("%d %s\n" % (closed, rss))
PY
read -r closed rss1 <"$TMP/half.out"
grow=$(((rss1 - rss0) / 1024))
[ "$grow" -lt 40 ] && ok || bad "48 stalled 4 MiB half-frames grew ofcd by $grow MiB"
[ "$closed" -ge 40 ] && ok || bad "only $closed of 48 over-limit clients were closed"
grep -q "bytes in ofcd's buffers" "$TMP/d6.log" && ok || bad "no word on the buffer limit" "$(tail -3 "$TMP/d6.log")"
echo "security: 48 stalled 4 MiB half-frames: ofcd RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB, $closed closed"
expect_exit 0 stop_ofcd
stop_emu "$e3_pid"

# ---- credentials and device addresses from a config sent to ofcd -----------------------
# The attacker: a member of the admin group (not root) with a listener of
# their own that records whatever reaches it.
ADMIN=$(getent group users | cut -d: -f3)
AS_ADMIN=""
if [ "$(id -u)" -eq 0 ] && [ -n "$ADMIN" ]; then
	AS_ADMIN="setpriv --reuid=65534 --regid=65534 --groups $ADMIN"
fi
export ASAN_OPTIONS=detect_leaks=0
python3 - "$TMP/listen.port" "$TMP/listen.got" <<'PY' &
import socket, sys, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def serve(c):
    while True:
        b = c.recv(4096)
        if not b:
            return
        with open(sys.argv[2], "ab") as f:
            f.write(b)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
LISTENER=$!
EMUS="$EMUS $LISTENER"
i=0
until [ -s "$TMP/listen.port" ] || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
LPORT=$(cat "$TMP/listen.port")
: >"$TMP/listen.got"
# A root-only file in the credentials format, and one that is not.
mkdir -m 700 "$TMP/root"
printf 'user: r00t\npassword: TOPSECRET-PW\n' >"$TMP/root/secret.cred"
printf 'TOPSECRET-LINE-ONE\nTOPSECRET: TWO\n' >"$TMP/root/shadow"
chmod 600 "$TMP/root/secret.cred" "$TMP/root/shadow"
CREDS="$TMP/creds"
mkdir -m 755 "$CREDS"
cp configs/credentials/ocs0.cred "$CREDS/ocs0.cred"
# The emulator's address is in the operator's config (trusted); no --device
# override, which would take the place of any address a config gives.
sed -e "s|credentials: .*|credentials: $CREDS/ocs0.cred|" -e "s|address: .*|address: 127.0.0.1:$e_port|" \
	"$TORUS" >"$TMP/good.yaml"
chmod 644 "$TMP/good.yaml"
RO="$TMP/ro.sock"
rm -f "$ST/torus64-ocs.state.corrupt"
"$OFCD" --foreground --credentials-dir "$CREDS" --config "$TMP/good.yaml" --socket "$SOCK" \
	--ro-socket "$RO" --admin-group users --state-dir "$ST" \
	--probe-interval 200ms 2>>"$TMP/d2.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
evil() { # NAME CREDENTIALS ADDRESS: a config for the attacker to send
	sed -e "s|credentials: .*|credentials: $2|" -e "s|address: .*|address: $3|" "$TORUS" >"$TMP/$1"
	chmod 644 "$TMP/$1"
}
$OFC --socket "$RO" watch --json >"$TMP/events" 2>/dev/null &
WATCH=$!
sleep 0.3
evil e1.yaml "$TMP/root/secret.cred" "127.0.0.1:$LPORT"
expect_error 2 "$TMP/e1.yaml:22:20: credentials '$TMP/root/secret.cred' of ocs0: outside ofcd's credentials directory $CREDS: a daemon reads credentials only from there (ofcd --credentials-dir)" \
	$AS_ADMIN $OFC --socket "$SOCK" apply "$TMP/e1.yaml" --dry-run
evil e2.yaml ../root/shadow "127.0.0.1:$LPORT"
expect_exit 2 $AS_ADMIN $OFC --socket "$SOCK" apply "$TMP/e2.yaml" --dry-run
grep -q "outside ofcd's credentials directory" "$TMP/err" && ok || bad "relative path out" "$(cat "$TMP/err")"
# Inside the directory, but a device address nobody allowed.
evil e3.yaml "$CREDS/ocs0.cred" "127.0.0.1:$LPORT"
expect_error 2 "$TMP/e3.yaml:21:16: address '127.0.0.1:$LPORT' of ocs0 is not one ofcd may reach for a config sent to it: allow it with --allow-device, or name it in ofcd's --config" \
	$AS_ADMIN $OFC --socket "$SOCK" apply "$TMP/e3.yaml" --dry-run
# A symbolic link in the directory to the secret.
ln -s "$TMP/root/secret.cred" "$CREDS/link.cred"
evil e4.yaml "$CREDS/link.cred" "127.0.0.1:$e_port"
expect_exit 1 $AS_ADMIN $OFC --socket "$SOCK" apply "$TMP/e4.yaml" --dry-run
grep -q "is a symbolic link (not followed here)" "$TMP/err" && ok || bad "symlink followed" "$(cat "$TMP/err")"
sleep 0.3
[ ! -s "$TMP/listen.got" ] && ok || bad "ofcd sent something to the attacker's address" "$(head -c 200 "$TMP/listen.got")"
if grep -q TOPSECRET "$TMP/err" "$TMP/out" "$TMP/d2.log" "$TMP/events"; then bad "a secret was echoed"; else ok; fi
# The operator's own config still works.
expect_stdout_has "committed transaction" $OFC --socket "$SOCK" apply "$TMP/good.yaml"
# The device goes away: the read-only watcher and GetState on the read-only
# socket see the reason's word only; root on the main socket sees the text.
stop_emu "$e_pid"
i=0
until grep -q KIND_DEVICE_LOST "$TMP/events" || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
python3 - "$TMP/events" <<'PY' && ok || bad "events carry device text" "$(grep DEVICE_LOST "$TMP/events")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lost = [e for e in ev if e["kind"] == "KIND_DEVICE_LOST"]
words = {"timeout", "closed", "lost", "auth", "identity", "refused", "garbage", "too-big",
         "mismatch", "credentials", "error"}
assert lost and all(e["message"] in words for e in lost), lost
assert lost[-1]["message"] == "lost", lost
PY
$OFC --socket "$RO" status --fabric --json >"$TMP/ro.json" 2>/dev/null
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); d=s["devices"][0]; sys.exit(0 if d.get("error")=="lost" and "credentials" not in s["fabric"]["switches"][0]["driver"] else 1)' "$TMP/ro.json" && ok ||
	bad "read-only GetState shows device text or credentials paths" "$(head -c 600 "$TMP/ro.json")"
if grep -q "Connection refused\|ocs0.cred" "$TMP/ro.json"; then bad "read-only GetState leaks"; else ok; fi
$OFC --socket "$SOCK" status --fabric --json >"$TMP/rw.json" 2>/dev/null
grep -q "Connection refused" "$TMP/rw.json" && grep -q "ocs0.cred" "$TMP/rw.json" && ok ||
	bad "root does not see the device's error" "$(head -c 400 "$TMP/rw.json")"
kill "$WATCH" 2>/dev/null
expect_exit 0 stop_ofcd
# --allow-device: a CIDR admits its addresses on its port only.
expect_error 2 "ofcd: --allow-device '10.0.0.0/33:5': expected an address/prefix such as 10.0.0.0/8:3082" \
	$OFCD --config "$TMP/good.yaml" --socket "$SOCK" --allow-device 10.0.0.0/33:5
start_emu ocs-emu e2 --ports 256 --credentials configs/credentials/ocs0.cred
"$OFCD" --foreground --credentials-dir "$CREDS" --config "$TMP/good.yaml" --socket "$SOCK" \
	--state-dir "$ST" --probe-interval 0 --allow-device "127.0.0.0/8:$e2_port" 2>>"$TMP/d3.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
evil e5.yaml "$CREDS/ocs0.cred" "127.0.0.1:$e2_port"
expect_stdout_has "would take fabric 'torus64-ocs'" $OFC --socket "$SOCK" apply "$TMP/e5.yaml" --dry-run
expect_exit 2 $OFC --socket "$SOCK" apply "$TMP/e3.yaml" --dry-run
[ ! -s "$TMP/listen.got" ] && ok || bad "ofcd sent something to the attacker's address"
expect_exit 0 stop_ofcd
# The operator's --config is held to the credentials directory too.
expect_error 2 "$TORUS:22:20: credentials 'ocs0.cred' of ocs0: outside ofcd's credentials directory $CREDS: a daemon reads credentials only from there (ofcd --credentials-dir)" \
	$OFCD --foreground --credentials-dir "$CREDS" --config "$TORUS" --socket "$SOCK" --state-dir "$ST"

# ---- paths in requests ----------------------------------------------------------
# An edge list named in a request (any local user on the read-only socket; an
# admin-group member's config or Reconfigure) is read only beneath the
# operator's --topology-dir: never a file of root's, never ofcd's stdin, and
# no error shows a byte of what a file holds.
TOPO="$TMP/topo"
mkdir -m 755 "$TOPO"
printf '0-1 1-2 2-3 3-0\n' >"$TOPO/ring4.edges"
printf '0-1\nTOPSECRET-WORD\n' >"$TOPO/bad.edges"
ln -s "$TMP/root/shadow" "$TOPO/link.edges"
mkfifo "$TOPO/fifo.edges"
AS_ANY=""
[ "$(id -u)" -eq 0 ] && AS_ANY="setpriv --reuid=65534 --regid=65534 --clear-groups"
sed -e "s|^topology: .*|topology: edges:$TMP/root/shadow|" "$TMP/good.yaml" >"$TMP/e6.yaml"
chmod 644 "$TMP/e6.yaml"
RS="$OFC --socket $RO schedule --collective allreduce --summary --topology"
"$OFCD" --foreground --credentials-dir "$CREDS" --config "$TMP/good.yaml" --socket "$SOCK" \
	--ro-socket "$RO" --admin-group users --state-dir "$TMP/st7" --device "ocs0=127.0.0.1:1" \
	--probe-interval 0 2>>"$TMP/d7.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
expect_error 2 "ofc: topology 'edges:$TMP/root/shadow' at column 7: edge-list files are not read here (no ofcd --topology-dir was given)" \
	bounded $AS_ANY $RS "edges:$TMP/root/shadow"
expect_error 2 "ofc: topology 'edges:-' at column 7: edge-list files are not read here (no ofcd --topology-dir was given)" \
	bounded $AS_ANY $RS "edges:-"
expect_exit 2 bounded $AS_ANY $RS "product(ring:3,edges:/proc/self/environ)"
grep -q "not read here" "$TMP/err" && ok || bad "edges: inside product()" "$(cat "$TMP/err")"
expect_error 2 "$TMP/e6.yaml:31:11: topology 'edges:$TMP/root/shadow': edge-list files are not read here (no ofcd --topology-dir was given)" \
	bounded $AS_ADMIN $OFC --socket "$SOCK" apply "$TMP/e6.yaml" --dry-run
expect_error 2 "ofc: topology 'edges:$TMP/root/shadow' at column 7: edge-list files are not read here (no ofcd --topology-dir was given)" \
	bounded $AS_ADMIN $OFC --socket "$SOCK" reconfigure --topology "edges:$TMP/root/shadow" --dry-run
expect_exit 0 stop_ofcd
# With a --topology-dir, and a tight budget on the read-only socket.
"$OFCD" --foreground --credentials-dir "$CREDS" --config "$TMP/good.yaml" --socket "$SOCK" \
	--ro-socket "$RO" --admin-group users --state-dir "$TMP/st7" --device "ocs0=127.0.0.1:1" \
	--probe-interval 0 --topology-dir "$TOPO" --ro-max-request-time 1ms 2>>"$TMP/d7.log" &
ofcd_pid=$!
DAEMONS="$DAEMONS $ofcd_pid"
i=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
for name in ../root/shadow link.edges "$TOPO/../root/shadow"; do
	expect_error 2 "ofc: topology 'edges:$name' at column 7: edge-list files are read only from $TOPO (ofcd --topology-dir), and this name leaves it" \
		bounded $AS_ANY $RS "edges:$name"
done
expect_error 2 "ofc: topology 'edges:/proc/self/environ' at column 7: edge-list files are read only from $TOPO (ofcd --topology-dir)" \
	bounded $AS_ANY $RS "edges:/proc/self/environ"
expect_error 2 "ofc: topology 'edges:fifo.edges' at column 7: $TOPO/fifo.edges is not a regular file" \
	bounded $AS_ANY $RS "edges:fifo.edges"
expect_error 2 "ofc: topology 'edges:bad.edges': $TOPO/bad.edges:2:1: this word is not a link: write U-V (both directions) or U>V (one arc)" \
	bounded $AS_ANY $RS "edges:bad.edges"
expect_stdout_has "on edges:$TOPO/ring4.edges: 4 nodes" bounded $OFC --socket "$SOCK" schedule \
	--collective allreduce --summary --topology edges:ring4.edges
# The read-only socket's budget (1 ms here) ends what the main socket's
# (60 s by default) lets finish.
expect_exit 1 bounded $AS_ANY $OFC --socket "$RO" schedule --collective allreduce --summary --topology torus:16x16
grep -q "time limit 1 ms reached in" "$TMP/err" && ok || bad "the read-only budget" "$(cat "$TMP/err")"
expect_stdout_has "on torus:16x16: 256 nodes" bounded $OFC --socket "$SOCK" schedule \
	--collective allreduce --summary --topology torus:16x16
expect_exit 0 stop_ofcd
if grep -q TOPSECRET "$TMP/err" "$TMP/out" "$TMP/d7.log"; then bad "a file's bytes were echoed"; else ok; fi
# A directory others may write to could hold anyone's symbolic link: refused.
mkdir -m 775 "$TMP/topo-w"
expect_error 2 "ofcd: --topology-dir $TMP/topo-w: owned by uid $(id -u), mode 0775: it must belong to root (or ofcd's user) and be closed to writes by group and others (chmod go-w $TMP/topo-w)" \
	bounded $OFCD --foreground --credentials-dir "$CREDS" --config "$TMP/good.yaml" --socket "$SOCK" \
	--state-dir "$TMP/st7" --topology-dir "$TMP/topo-w"

# ---- a leader's socket named by the store is followed only to root or ofcd's uid -------
# A follower answers NOT_LEADER with the leader's socket, which comes from
# the store: an attacker who can write it names a socket of its own. The
# fake follower here (as root) names one that nobody listens on; `ofc`
# and the Python client must refuse it before sending a byte (the evil
# server records every byte), and follow the same answer to a leader that
# runs as root.
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
mkdir -m 755 "$TMP/evil" && chown nobody "$TMP/evil"
cat >"$TMP/fake_ofcd.py" <<'PY'
import os, socket, struct, sys, threading
sys.path.insert(0, os.environ["PB"])
from ofc_client.pb import control_pb2
path, log, lead = sys.argv[1], sys.argv[2], sys.argv[3]  # lead: "" answers OK itself
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o777)
srv.listen(8)
srv.settimeout(120)
def serve(c):
    data = b""
    try:
        c.settimeout(10)
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            b = c.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    with open(log, "a") as f:
        f.write(f"{len(data)} bytes\n")
    if len(data) >= 4:
        req = control_pb2.Request()
        req.ParseFromString(data[4:])
        r = control_pb2.Response(id=req.id)
        if lead:
            r.status = control_pb2.STATUS_NOT_LEADER
            r.message = "not the leader"
            r.leader.name = "r9"
            r.leader.socket = lead
        else:
            r.status = control_pb2.STATUS_OK
            r.message = "committed transaction 7 (fake leader)"
        out = r.SerializeToString()
        c.sendall(struct.pack(">I", len(out)) + out)
    c.close()
while True:
    try:
        c, _ = srv.accept()
    except socket.timeout:
        break
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
: >"$TMP/evil.log" && chmod 666 "$TMP/evil.log"
PB="$BUILD/python" setpriv --reuid nobody --regid nogroup --clear-groups \
	$PY "$TMP/fake_ofcd.py" "$TMP/evil/ofcd.sock" "$TMP/evil.log" "" &
DAEMONS="$DAEMONS $!"
PB="$BUILD/python" $PY "$TMP/fake_ofcd.py" "$TMP/follower.sock" "$TMP/follower.log" "$TMP/evil/ofcd.sock" &
DAEMONS="$DAEMONS $!"
PB="$BUILD/python" $PY "$TMP/fake_ofcd.py" "$TMP/root-leader.sock" "$TMP/root-leader.log" "" &
DAEMONS="$DAEMONS $!"
PB="$BUILD/python" $PY "$TMP/fake_ofcd.py" "$TMP/follower2.sock" "$TMP/follower2.log" "$TMP/root-leader.sock" &
DAEMONS="$DAEMONS $!"
i=0
until [ -S "$TMP/evil/ofcd.sock" ] && [ -S "$TMP/follower.sock" ] && [ -S "$TMP/root-leader.sock" ] &&
	[ -S "$TMP/follower2.sock" ] || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
REFUSED="ofc: $TMP/follower.sock named $TMP/evil/ofcd.sock as the leader's socket, but the process behind it runs as uid 65534, neither root nor uid 0 (the ofcd at $TMP/follower.sock): not following it, nothing was sent (whoever can write the cluster's store can name any socket: check the leader key)"
for cmd in "apply --dry-run $TORUS" "reconfigure --topology ring:64"; do
	expect_exit 1 bounded $OFC --socket "$TMP/follower.sock" $cmd
	grep -qxF "$REFUSED" "$TMP/err" && ok || bad "ofc $cmd followed the hostile socket" "$(cat "$TMP/err")"
done
PYTHONPATH="$BUILD/python" bounded $PY - "$TMP/follower.sock" >"$TMP/out" 2>&1 <<'PY' && ok || bad "the Python client followed the hostile socket" "$(cat "$TMP/out")"
import sys
import ofc_client
from ofc_client.pb import control_pb2
c = ofc_client.Client(sys.argv[1], timeout=10)
try:
    c.call(control_pb2.Request(reconfigure=control_pb2.Reconfigure(topology="ring:64")))
except ConnectionError as e:
    assert "ofcd.sock as the leader's socket, but the process behind it runs as uid 65534" in str(e), e
    assert "nothing was sent" in str(e), e
else:
    sys.exit("no error")
PY
grep -q "bytes" "$TMP/follower.log" && ok || bad "the fake follower was not asked"
if grep -qv "^0 bytes$" "$TMP/evil.log"; then bad "the hostile socket received a request" "$(cat "$TMP/evil.log")"; else ok; fi
# the same answer naming a leader that runs as root is followed
expect_stdout_has "committed transaction 7 (fake leader)" \
	bounded $OFC --socket "$TMP/follower2.sock" reconfigure --topology ring:64
grep -q "^[1-9][0-9]* bytes$" "$TMP/root-leader.log" && ok || bad "ofc did not follow a root leader" "$(cat "$TMP/root-leader.log")"
PYTHONPATH="$BUILD/python" bounded $PY - "$TMP/follower2.sock" >"$TMP/out" 2>&1 <<'PY' && ok || bad "the Python client did not follow a root leader" "$(cat "$TMP/out")"
import sys
import ofc_client
from ofc_client.pb import control_pb2
c = ofc_client.Client(sys.argv[1], timeout=10)
r = c.call(control_pb2.Request(reconfigure=control_pb2.Reconfigure(topology="ring:64")))
assert "fake leader" in r.message, r
PY

# ---- the read-only socket is fair --------------------------------------------------------
# A local user's heavy requests (the all-to-all of torus:32x32, seconds
# each) hold at most two schedules at once, the rest BUSY, and one schedule
# worker: root's small request on the main socket is answered while they
# still compute (before, it waited for all of them, 34-40 s). One whose
# answer cannot fit a frame is refused from its estimate, before it is
# computed (before: computed for seconds, then refused).
if [ "$(id -u)" -eq 0 ]; then
	"$OFCD" --foreground --credentials-dir "$CREDS" --config "$TMP/good.yaml" --socket "$SOCK" \
		--ro-socket "$RO" --admin-group users --state-dir "$TMP/st8" --device "ocs0=127.0.0.1:1" \
		--probe-interval 0 2>>"$TMP/d8.log" &
	ofcd_pid=$!
	DAEMONS="$DAEMONS $ofcd_pid"
	i=0
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
	expect_exit 1 bounded $AS_ANY $OFC --socket "$RO" schedule --topology torus:32x32 --collective alltoall --algo direct
	grep -q "direct on 1024 nodes has about 1.05e+06 transfers, more than one reply holds (699050: ofcd's --max-frame): ask for a summary, or for the schedule as a stream" "$TMP/err" &&
		ok || bad "a reply over the frame is refused from its estimate" "$(cat "$TMP/err")"
	HEAVY=""
	for k in 1 2 3 4 5 6; do
		bounded $AS_ANY $OFC --socket "$RO" schedule --topology torus:32x32 --collective alltoall \
			--algo direct --summary >"$TMP/heavy$k.out" 2>&1 &
		HEAVY="$HEAVY $!"
	done
	# (until two of them compute: ofcd's metrics count the schedules in hand)
	i=0
	until grep -q "has 2 schedules being computed already" "$TMP"/heavy?.out 2>/dev/null || [ $i -ge 1000 ]; do sleep 0.01; i=$((i + 1)); done
	expect_stdout_has "on ring:8" bounded $OFC --socket "$SOCK" schedule --topology ring:8 --collective allreduce --summary
	busy=0
	for p in $HEAVY; do kill -0 "$p" 2>/dev/null && busy=$((busy + 1)); done
	[ "$busy" -ge 1 ] && ok || bad "root's request waited for the local user's heavy ones" "$(cat "$TMP"/heavy?.out)"
	for p in $HEAVY; do wait "$p"; done
	[ "$(grep -l "uid:65534 has 2 schedules being computed already, the most one caller may have at once" "$TMP"/heavy?.out | wc -l)" -ge 3 ] &&
		[ "$(grep -l "^  time " "$TMP"/heavy?.out | wc -l)" -ge 1 ] &&
		ok || bad "a local user's heavy requests: two at once, the rest BUSY" "$(head -3 "$TMP"/heavy?.out)"
	expect_exit 0 stop_ofcd
fi

finish
