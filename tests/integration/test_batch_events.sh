#!/bin/sh
# Events of a batched transaction (controller/ofcd/batch.c): two
# partitions asked while another change runs queue, and commit together in
# one transaction; each one's KIND_PARTITION_HELD carries the ticket of the
# request that asked for it (before: both the batch's first one's, so one
# tenant's event named another's request).
SUITE=batch_events
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'for p in $DAEMONS; do kill "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
make_torus_config "$TMP/t.yaml" torus:8x8 2s 1
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 15
$BUILD/ofcd --foreground --config "$TMP/t.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--log-file "$TMP/ofcd.log" --log-level info 2>"$TMP/ofcd.err" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_exit 0 $OFC --socket "$SOCK" reconfigure --topology torus:8x8 --timeout 60
$OFC --socket "$SOCK" watch --json >"$TMP/events" 2>&1 &
W=$!
DAEMONS="$DAEMONS $W"
sleep 0.3
# a long change first (every circuit moves, 15 ms each), then two
# partitions on disjoint hosts behind it
n0=$(grep -c "transaction started" "$TMP/ofcd.log")
$OFC --socket "$SOCK" reconfigure --topology circulant:64:3,8 --timeout 60 >"$TMP/long" 2>&1 &
L=$!
deadline 10
until [ "$(grep -c "transaction started" "$TMP/ofcd.log")" -gt "$n0" ] || past $_end; do sleep 0.05; done
$OFC --socket "$SOCK" reconfigure --partition pa --topology ring:4 --hosts h0,h1,h2,h3 --timeout 60 >"$TMP/pa" 2>&1 &
A=$!
$OFC --socket "$SOCK" reconfigure --partition pb --topology ring:4 --hosts h8,h9,h10,h11 --timeout 60 >"$TMP/pb" 2>&1 &
B=$!
wait $L $A $B
sleep 0.5
kill $W
grep -q "batch of 2 reconfigure" "$TMP/ofcd.log" && ok || bad "the two partitions did not commit together" "$(grep -i "ticket" "$TMP/ofcd.log" | tail -5)"
python3 - "$TMP/events" "$TMP/ofcd.log" <<'PY' && ok || bad "a partition's event carries another request's ticket"
import json, re, sys
queued = {}
for l in open(sys.argv[2]):
    m = re.search(r"queued ticket (\d+): reconfigure partition (\S+)", l)
    if m:
        queued[m.group(2).strip("':")] = int(m.group(1))
held = {}
for l in open(sys.argv[1]):
    if not l.startswith("{"):
        continue
    e = json.loads(l)
    e = e.get("event", e)
    if e.get("kind") == "KIND_PARTITION_HELD":
        held[e.get("partition")] = int(e.get("ticket", 0))
print("queued", queued, "held", held)
assert set(held) >= {"pa", "pb"}, held
for p in ("pa", "pb"):
    assert held[p] == queued[p], (p, held[p], queued[p])
PY
finish
