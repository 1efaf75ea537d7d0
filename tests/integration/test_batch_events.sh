#!/bin/sh
# Events of a batched transaction (controller/ofcd/batch.c): two
# partitions asked while another change runs queue, and commit together in
# one transaction; each one's KIND_PARTITION_HELD carries the ticket of the
# request that asked for it (before: both the batch's first one's, so one
# tenant's event named another's request). Two tenants through the
# gateway, each asking for one of them and watching: each hears its
# transaction's started, applied and committed events with its own ticket
# (before: only the first one's, with its ticket, and the other tenant
# nothing), and no event with another's ticket.
SUITE=batch_events
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'for p in $DAEMONS; do kill "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
make_torus_config "$TMP/t.yaml" torus:8x8 2s 1
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 15
$BUILD/ofcd --foreground --config "$TMP/t.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--gateway-socket "$TMP/gw.sock" --gateway-uid "$(id -u)" \
	--log-file "$TMP/ofcd.log" --log-level info 2>"$TMP/ofcd.err" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_exit 0 $OFC --socket "$SOCK" reconfigure --topology torus:8x8 --timeout 60
C="$TMP/pki"
pki_ca "$C"
for n in tenant-a tenant-b; do pki_cert $n client; done
pki_cert server server
printf 'cn:tenant-a tenant pa\ncn:tenant-b tenant pb\n' >"$TMP/policy"
$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" --ca "$C/ca.pem" \
	--policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" --port-file "$TMP/gw.port" 2>"$TMP/gw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
URL="https://127.0.0.1:$(cat "$TMP/gw.port")"
$OFC --socket "$SOCK" watch --json >"$TMP/events" 2>&1 &
W=$!
DAEMONS="$DAEMONS $W"
for t in a b; do
	curl -sS -N --max-time 60 --cacert "$C/ca.pem" --cert "$C/tenant-$t.pem" --key "$C/tenant-$t.key" \
		"$URL/v1/watch" >"$TMP/watch.$t" 2>/dev/null &
	DAEMONS="$DAEMONS $!"
done
sleep 0.5
# a long change first (every circuit moves, 15 ms each), then two
# partitions on disjoint hosts behind it
n0=$(grep -c "transaction started" "$TMP/ofcd.log")
$OFC --socket "$SOCK" reconfigure --topology circulant:64:3,8 --timeout 60 >"$TMP/long" 2>&1 &
L=$!
deadline 10
until [ "$(grep -c "transaction started" "$TMP/ofcd.log")" -gt "$n0" ] || past $_end; do sleep 0.05; done
# (each tenant its own, through the gateway)
ask() { # TENANT PARTITION HOSTS
	curl -sS -o "$TMP/$2" --cacert "$C/ca.pem" --cert "$C/tenant-$1.pem" --key "$C/tenant-$1.key" \
		-X POST -d "{\"partition\":\"$2\",\"topology\":\"ring:4\",\"hosts\":[$3]}" "$URL/v1/reconfigure"
}
ask a pa '"h0","h1","h2","h3"' &
A=$!
ask b pb '"h8","h9","h10","h11"' &
B=$!
wait $L $A $B
sleep 1
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
python3 - "$TMP/watch.a" "$TMP/watch.b" "$TMP/ofcd.log" <<'PY' && ok || bad "a tenant's transaction events in a batch: not its own ticket, or another's heard"
import json, re, sys
queued = {}
for l in open(sys.argv[3]):
    m = re.search(r"queued ticket (\d+): reconfigure partition (\S+)", l)
    if m:
        queued[m.group(2).strip("':")] = int(m.group(1))
txns = []
for f, p in ((sys.argv[1], "pa"), (sys.argv[2], "pb")):
    kinds = {}
    for l in open(f):
        if not l.startswith("{"):
            continue
        e = json.loads(l).get("event", {})
        if "ticket" in e:
            assert int(e["ticket"]) == queued[p], (p, "heard another's ticket", e)
        if e.get("kind") in ("KIND_TRANSACTION_STARTED", "KIND_DEVICE_APPLIED", "KIND_TRANSACTION_COMMITTED"):
            kinds.setdefault(e["kind"], set()).add(int(e.get("transaction", 0)))
    print(p, "ticket", queued[p], "heard", {k: sorted(v) for k, v in kinds.items()})
    assert len(kinds) == 3, (p, kinds)
    txns.append(kinds["KIND_TRANSACTION_COMMITTED"])
assert txns[0] & txns[1], ("not one transaction", txns)
PY
finish
