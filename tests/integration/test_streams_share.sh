#!/bin/sh
# ofcd's streamed schedules are shared fairly (docs/security.md): public
# callers (the read-only socket's uids) hold two of the four streams
# together and one each, so two local users reading slowly leave root's
# streamed schedule its own (before, two public callers held all four, and
# root's got BUSY). A refused stream says which share is full, names no
# other caller, and ofc_streams_refused_total counts it. An all-to-all MCF
# whose steps no frame holds is refused before it is lowered.
SUITE=streams_share
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "streams_share: not root (setpriv runs the public callers as other uids): skipped"
	exit 0
fi
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; rm_tmp' EXIT
chmod 755 "$TMP"
make_torus_config "$TMP/t.yaml" torus:8x8 2s 1
chmod 644 "$TMP/t.yaml"
SOCK="$TMP/ofcd.sock"
RO="$TMP/ro.sock"
# Under the sanitizers (make check) a stream's computation outlasts the
# read-only socket's 10 s, and the whole test the 30 s an unread reply may
# wait: either ends a slow reader's stream and frees its share early.
SLOW=""
[ -z "${SAN:-}" ] || SLOW="--max-request-time 600s --ro-max-request-time 600s --client-timeout 600s"
$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$TMP/t.yaml" --socket "$SOCK" \
	--ro-socket "$RO" --state-dir "$TMP/st" --device "ocs0=127.0.0.1:1" --probe-interval 0 \
	$SLOW 2>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 20
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
[ -S "$RO" ] && ok || bad "ofcd did not start" "$(tail -3 "$TMP/ofcd.log")"

# hold.py SOCKET OUT FIRST PYTHONPATH [RELEASE]: ask for a big schedule as
# a stream, write the first answer's status and message to OUT (waiting
# FIRST s at most), then, given RELEASE, read nothing until that file exists
# (a slow reader: the stream stays open; 600 s at most)
cat >"$TMP/hold.py" <<'PY'
import os, socket, struct, sys, time
sys.path.insert(0, sys.argv[4])
from ofc_client.pb import control_pb2
path, out, first = sys.argv[1], sys.argv[2], float(sys.argv[3])
release = sys.argv[5] if len(sys.argv) > 5 else None
s = socket.socket(socket.AF_UNIX)
s.settimeout(first)
s.connect(path)
req = control_pb2.Request(id=1)
gs = req.get_schedule
gs.topology, gs.collective, gs.algorithm, gs.stream = "torus:32x32", "alltoall", "direct", True
b = req.SerializeToString()
s.sendall(struct.pack(">I", len(b)) + b)
def recvn(n):
    d = b""
    while len(d) < n:
        c = s.recv(n - len(d))
        if not c:
            raise EOFError("closed")
        d += c
    return d
n = struct.unpack(">I", recvn(4))[0]
r = control_pb2.Response()
r.ParseFromString(recvn(n))
with open(out, "w") as f:
    f.write("%s %s\n" % (control_pb2.Status.Name(r.status), r.message))
end = time.monotonic() + 600
while release and not os.path.exists(release) and time.monotonic() < end:
    time.sleep(0.05)
PY
mkdir -m 1777 "$TMP/o"
# Each stream's first frame is a 1,024-node all-to-all computed: seconds,
# several times that under the sanitizers (make check) and load. The slow
# readers hold their streams until the test is done with them (the file
# release), not for a time the first frames might outlast.
FIRST=120
[ -z "${SAN:-}" ] || FIRST=300
hold() { # UID OUT SOCKET
	setpriv --reuid "$1" --regid "$1" --clear-groups $PY "$TMP/hold.py" "$3" "$2" $FIRST \
		"$BUILD/python" "$TMP/o/release" &
	DAEMONS="$DAEMONS $!"
}
# until_written FILE...: each has its first answer (up to FIRST s)
until_written() {
	deadline $FIRST
	for f in "$@"; do until [ -s "$f" ] || past $_end; do sleep 0.05; done; done
}
# two public callers (uids 65534 and 1), two streams each asked
hold 65534 "$TMP/o/a1" "$RO"
until_written "$TMP/o/a1"
hold 65534 "$TMP/o/a2" "$RO"
hold 1 "$TMP/o/b1" "$RO"
until_written "$TMP/o/a2" "$TMP/o/b1"
hold 1 "$TMP/o/b2" "$RO"
until_written "$TMP/o/b2"
grep -q "^STATUS_OK" "$TMP/o/a1" && grep -q "^STATUS_OK" "$TMP/o/b1" && ok ||
	bad "each public caller's first stream" "$(cat "$TMP/o/a1" "$TMP/o/b1")"
grep -qx "STATUS_BUSY it has a schedule being streamed already, the most one caller may have; try again shortly" "$TMP/o/a2" &&
	grep -q "^STATUS_BUSY it has a schedule being streamed already" "$TMP/o/b2" && ok ||
	bad "a public caller's second stream: not BUSY for its own share" "$(cat "$TMP/o/a2" "$TMP/o/b2")"
# a third public caller: the public share is full
hold 2 "$TMP/o/c1" "$RO"
until_written "$TMP/o/c1"
grep -q "^STATUS_BUSY the streams public callers may hold are all taken (the others are kept for root and the admins)" "$TMP/o/c1" &&
	! grep -q "uid:" "$TMP/o/c1" && ok ||
	bad "a third public caller's stream" "$(cat "$TMP/o/c1")" "$(tail -5 "$TMP/ofcd.log")"
# root's streamed schedules: its own share
$PY "$TMP/hold.py" "$SOCK" "$TMP/r1" $FIRST "$BUILD/python" && grep -q "^STATUS_OK" "$TMP/r1" && ok ||
	bad "root's streamed schedule behind two public callers' slow streams" "$(cat "$TMP/r1" 2>&1)"
touch "$TMP/o/release"
$OFC --socket "$SOCK" metrics >"$TMP/m"
grep -qx 'ofc_streams_refused_total{share="caller"} 2' "$TMP/m" &&
	grep -qx 'ofc_streams_refused_total{share="public"} 1' "$TMP/m" && ok ||
	bad "the refusals are not counted" "$(grep streams_refused "$TMP/m")"
# A schedule no frame holds is refused from the MCF's routes, before they
# are lowered and verified (before: the steps of torus:16x16, 2.5e7
# transfers, computed for 13-20 s, then refused for the frame)
expect_error 1 "ofc: mcf on 256 nodes has about 2.49e+07 transfers, more than one reply holds (699050: ofcd's --max-frame): ask for a summary, or for the schedule as a stream" \
	$OFC --socket "$RO" schedule --topology torus:16x16 --collective alltoall --size 1MiB --json
finish
