#!/bin/sh
# ofcd's GetSchedule on a server fabric (model W, 8 GPUs), whole and
# streamed: the fluid schedule is packed (whole) or sent (streamed) a step
# at a time from Theorem 4's period, and both clients read it as the
# schedule `ofc schedule -o x.pb` writes for the same request: every step,
# every transfer, the figures and the vertices. tests/unit/
# test_schedule_reply checks the whole answer against the expansion's
# message tree byte for byte.
SUITE=ofcd_fluid
. "$(dirname "$0")/lib.sh"

PY_PB=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY_PB=/usr/bin/python3
W=examples/modelw/all-links-1.yaml
SOCK="$TMP/ofcd.sock"
COLLS="allgather allreduce broadcast"

# start_ofcd LOG ARGS...: in the foreground, until it answers
start_ofcd() {
	log=$1
	shift
	rm -rf "$TMP/st"
	mkdir -p "$TMP/st"
	"$BUILD/ofcd" --foreground --config $W --socket "$SOCK" --state-dir "$TMP/st" \
		--probe-interval 0 "$@" >"$TMP/$log" 2>&1 &
	ofcd_pid=$!
	deadline 10
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past "$_end"; do sleep 0.01; done
}
stop_ofcd() {
	kill "$ofcd_pid"
	wait "$ofcd_pid" 2>/dev/null
}

for c in $COLLS; do
	$OFC schedule $W --collective $c --format pb -o "$TMP/local-$c.pb" >/dev/null 2>&1 ||
		bad "ofc schedule $c -o local-$c.pb"
done

# same C WHOLE FILE...: each file, and the Python client's streamed answer
# (and with WHOLE 1 its whole one), decode to the local schedule of
# collective C (its steps with transfers in them, its 30 vertices, every
# figure).
same() {
	c=$1
	shift
	$PY_PB - "$BUILD/python" "$SOCK" "$c" "$TMP/local-$c.pb" "$@" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import ofc_client
from ofc_client.pb import schedule_pb2 as s
sock, coll, local, whole = sys.argv[2:6]
want = s.Schedule.FromString(open(local, "rb").read())
assert len(want.steps) > 2 and len(want.vertices) == 30, (len(want.steps), len(want.vertices))
assert sum(len(x.transfers) for x in want.steps) > 1000
assert want.num_steps == len(want.steps) and want.verified
got = [(f, s.Schedule.FromString(open(f, "rb").read())) for f in sys.argv[6:]]
c = ofc_client.Client(sock)
if whole == "1":
    got.append(("python, whole", c.get_schedule(coll)))
got.append(("python, streamed", c.get_schedule(coll, stream=True)))
for name, g in got:
    if g != want:
        for t, (a, b) in enumerate(zip(g.steps, want.steps)):
            if a != b:
                sys.exit(f"{name}: step {t + 1} differs from the local schedule's")
        sys.exit(f"{name}: differs from the local schedule ({len(g.steps)} steps, "
                 f"{len(want.steps)} wanted)")
EOF
}

# ---- the default frame (16 MiB): the whole answer fits --------------------------------------
start_ofcd d1.log
for c in $COLLS; do
	# --json asks without a stream: one frame; -o alone streams
	expect_exit 0 $OFC --socket "$SOCK" schedule --collective $c --json -o "$TMP/whole-$c.pb"
	expect_exit 0 $OFC --socket "$SOCK" schedule --collective $c -o "$TMP/str-$c.pb"
	expect_exit 0 $OFC --socket "$SOCK" schedule --collective $c -o "$TMP/str-$c.json"
	$OFC --socket "$SOCK" schedule --collective $c --json -o "$TMP/whole-$c.json" >/dev/null 2>&1
	cmp -s "$TMP/str-$c.json" "$TMP/whole-$c.json" && ok ||
		bad "GetSchedule $c as JSON: the streamed file is not the whole one"
	out=$(same $c 1 "$TMP/whole-$c.pb" "$TMP/str-$c.pb" 2>&1) && ok ||
		bad "GetSchedule $c through ofcd is the local schedule" "$out"
done
stop_ofcd

# ---- frames of 4 KiB: the whole answer is refused, the stream comes in ---------------------
# frames of at most 64 transfers (4 KiB / 64), a step of ~200 in several
start_ofcd d2.log --max-frame 4KiB
expect_exit 1 $OFC --socket "$SOCK" schedule --collective allgather --json -o "$TMP/no.pb"
grep -q "^ofc: the fluid schedule ([0-9]* transfers in [0-9]* steps) does not fit in a frame of 4 KiB: ask for the figures alone (summary_only; ofc --socket PATH schedule --summary), ask with stream (ofc --socket PATH schedule -o FILE streams), or run ofcd with a larger --max-frame" "$TMP/err" &&
	ok || bad "the whole fluid schedule over --max-frame" "$(head -c 400 "$TMP/err")"
for c in $COLLS; do
	expect_exit 0 $OFC --socket "$SOCK" schedule --collective $c -o "$TMP/small-$c.pb"
	out=$(same $c 0 "$TMP/small-$c.pb" 2>&1) && ok ||
		bad "GetSchedule $c in frames of 4 KiB is the local schedule" "$out"
done
# the frames themselves: the head (figures, vertices, no steps), then
# steps of at most 64 transfers a frame, a step split with
# continues_step, then the end, each frame within the limit
$PY_PB - "$BUILD/python" "$SOCK" "$TMP/local-allgather.pb" <<'EOF' && ok || bad "the streamed frames"
import sys
sys.path.insert(0, sys.argv[1])
from ofc_client import _Conn
from ofc_client.pb import control_pb2 as pb, schedule_pb2 as s
want = s.Schedule.FromString(open(sys.argv[3], "rb").read())
c = _Conn(sys.argv[2], 30, 1 << 20)
req = pb.Request(id=7)
req.get_schedule.collective = "allgather"
req.get_schedule.stream = True
c.send(req)
first = c.recv()
assert first.more and first.status == pb.STATUS_OK and first.schedule.num_steps == len(want.steps)
assert not first.schedule.steps and len(first.schedule.vertices) == 30, first.schedule
frames, split, steps = [], 0, []
while True:
    r = c.recv()
    assert r.id == 7 and r.ByteSize() <= 4096, r.ByteSize()
    if not r.more:
        break
    assert len(r.schedule.steps) == 1 and 0 < len(r.schedule.steps[0].transfers) <= 64
    if r.continues_step:
        split += 1
        steps[-1].extend(r.schedule.steps[0].transfers)
    else:
        steps.append(list(r.schedule.steps[0].transfers))
n = sum(len(x.transfers) for x in want.steps)
assert r.status == pb.STATUS_OK and r.message == f"{len(want.steps)} steps, {n} transfers streamed", r
assert split > len(want.steps), split
assert steps == [list(x.transfers) for x in want.steps]
EOF
stop_ofcd
finish
