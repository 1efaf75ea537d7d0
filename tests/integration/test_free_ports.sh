#!/bin/sh
# `reconfigure --free-ports`: while partitions are held for their owners, the
# fabric's topology aimed on the ports no held partition has, through every
# door: ofcd's socket (the CLI), ofc-gateway's /v1/reconfigure (the CLI's
# --server and curl's JSON) and the Python client. One ofcd, build/ocs-emu
# with 64 ports, 16 hosts of 4 ports (host i port j on switch port
# 1 + 4i + j). Checked against the emulator's own saved state: a held
# partition's cross-connects are byte for byte what they were, the free
# ports hold the new topology's (the fabric at target, judged outside the
# held ports), a released partition's kept circuits are aimed again; the
# plain reconfigure stays refused and says the way out.
SUITE=free_ports
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

TMP=$(cd "$TMP" && pwd -P)
SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
export PYTHONPATH="$BUILD/python"

cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
sed -e 's/^name: .*/name: free16/' -e 's/count: 64/count: 16/' -e 's/ports: 256/ports: 64/' \
	-e 's/^topology: .*/topology: torus:4x4/' -e 's|credentials: .*|credentials: ocs0.cred|' \
	-e '/op: alltoall/,+1d' configs/torus64-ocs.yaml >"$TMP/fab.yaml"
: >"$TMP/emu.state"
start_emu ocs-emu e --ports 64 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"

C="$TMP/pki"
pki_ca "$C"
pki_cert admin client
pki_cert server server
printf 'cn:admin admin\n' >"$TMP/policy"

$BUILD/ofcd --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--gateway-socket "$TMP/gw.sock" --gateway-uid "$(id -u)" 2>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" \
	--ca "$C/ca.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" \
	--port-file "$TMP/gw.port" 2>"$TMP/gw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
read -r P <"$TMP/gw.port"
URL="https://127.0.0.1:$P"
ADMIN="--server $URL --cert $C/admin.pem --key $C/admin.key --cacert $C/ca.pem"

# held PORTS_FROM PORTS_TO: the emulator's cross-connects touching those
# switch ports (either end), sorted; others: those touching none of them.
held() { awk -v a="$1" -v b="$2" '($1>=a && $1<=b) || ($2>=a && $2<=b)' "$TMP/emu.state" | sort; }
others() { awk -v a="$1" -v b="$2" '!(($1>=a && $1<=b) || ($2>=a && $2<=b))' "$TMP/emu.state" | sort; }

expect_stdout_has "committed transaction 1: 64 operations" $OFC --socket "$SOCK" reconfigure --topology torus:4x4
# t1 holds h0..h3 (switch ports 1..16); t2 held h4..h7 and is let go: its
# circuits stay, so the fabric is not at its target any more.
expect_exit 0 $OFC --socket "$SOCK" reconfigure --partition t1 --topology ring:4 --hosts 'h[0-3]'
expect_exit 0 $OFC --socket "$SOCK" reconfigure --partition t2 --topology ring:4 --hosts 'h[4-7]'
expect_stdout_has "released partition 't2'" $OFC --socket "$SOCK" release t2
expect_json 'not j["at_target"] and "with --free-ports only the ports no held partition has" in j["at_target_detail"] and [h["name"] for h in j["held"]] == ["t1"]' \
	$OFC --socket "$SOCK" status --json
held 1 16 >"$TMP/t1.before"
[ "$(wc -l <"$TMP/t1.before")" -eq 4 ] && ok || bad "t1's ring:4 is 4 cross-connects" "$(cat "$TMP/t1.before")"
cp "$TMP/emu.state" "$TMP/emu.before"

# ---- the plain reconfigure is refused and names the way out ----------------------
expect_exit 1 $OFC --socket "$SOCK" reconfigure --topology circulant:16:1,3
grep -q "of partition 't1', held for its owner; refused (it is released with ReleasePartition); reconfigure --free-ports aims only the ports no held partition has" "$TMP/err" &&
	cmp -s "$TMP/emu.state" "$TMP/emu.before" && ok || bad "the plain reconfigure over a hold" "$(cat "$TMP/err")"
# --free-ports aims the fabric, not a partition
expect_error 2 "ofc --socket PATH reconfigure: --free-ports aims the fabric's topology or workload: not with --partition or --hosts" \
	$OFC --socket "$SOCK" reconfigure --free-ports --partition t3 --topology ring:4 --hosts 'h[8-11]'
# ... and ofcd says the same to a client that sends both
$PY - "$SOCK" >"$TMP/py.out" 2>&1 <<'PY' && ok || bad "ofcd refuses free_ports with hosts" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client, OfcError, control_pb2
ofc = Client(sys.argv[1])
req = control_pb2.Request()
req.reconfigure.partition = "t3"
req.reconfigure.topology = "ring:4"
req.reconfigure.hosts.extend(["h8", "h9", "h10", "h11"])
req.reconfigure.free_ports = True
try:
    ofc.call(req)
    sys.exit("ofcd took free_ports with hosts")
except OfcError as e:
    assert e.response.status == control_pb2.STATUS_INVALID, e.response
    assert "free_ports aims the fabric's topology on the ports no held partition has" in str(e), e
try:
    ofc.reconfigure(topology="ring:4", partition="t3", hosts="h[8-11]", free_ports=True)
    sys.exit("the client sent free_ports with hosts")
except ValueError as e:
    assert "free_ports" in str(e), e
PY

# ---- a dry run, through the socket: planned, nothing changed -----------------------
expect_stdout_has "would take fabric 'free16' to circulant:16:1,3" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:16:1,3 --free-ports --dry-run
grep -qF "; on the free ports alone: 4 cross-connects of the held partition 't1' left as they are" "$TMP/out" &&
	cmp -s "$TMP/emu.state" "$TMP/emu.before" && ok || bad "the dry run's answer" "$(cat "$TMP/out")"

# ---- committed through the gateway (the CLI's --server) -----------------------------
expect_stdout_has "; on the free ports alone: 4 cross-connects of the held partition 't1' left as they are" \
	$OFC $ADMIN reconfigure --topology circulant:16:1,3 --free-ports
held 1 16 >"$TMP/t1.after"
cmp -s "$TMP/t1.before" "$TMP/t1.after" && ok || bad "t1's cross-connects changed" "$(diff "$TMP/t1.before" "$TMP/t1.after")"
# the free ports hold circulant:16:1,3's circuits among h4..h15 (the kept
# partition's hosts joined to none), and the released t2's were aimed again
expect_json 'j["at_target"] and j["topology"]["spec"] == "circulant:16:1,3" and j["held"][0]["at_target"] and j["held"][0]["name"] == "t1"' \
	$OFC --socket "$SOCK" status --json
$PY - "$TMP/out" <<'PY' >"$TMP/py.out" 2>&1 && ok || bad "the free ports' circuits" "$(cat "$TMP/py.out")"
import json, sys
st = json.load(open(sys.argv[1]))
circ = [(c["src_host"], c["dst_host"]) for d in st["devices"] for c in d.get("circuits", [])]
held = {"h0", "h1", "h2", "h3"}
free = [(a, b) for a, b in circ if a not in held and b not in held]
want = set()
for i in range(16):
    for k in (1, -1, 3, -3):
        a, b = "h%d" % i, "h%d" % ((i + k) % 16)
        if a not in held and b not in held:
            want.add((a, b))
assert set(free) == want, (sorted(set(free) ^ want))
assert all((a in held) == (b in held) for a, b in circ), "a circuit joins t1 to a free host"
PY

# ---- the gateway's route as JSON, and the Python client ----------------------------
code=$(curl -sS -o "$TMP/out" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/admin.pem" \
	--key "$C/admin.key" -H 'Content-Type: application/json' \
	--data '{"topology": "torus:4x4", "free_ports": true, "dry_run": true}' "$URL/v1/reconfigure" 2>"$TMP/err")
[ "$code" = 200 ] && grep -qF "on the free ports alone: 4 cross-connects of the held partition 't1' left as they are" "$TMP/out" &&
	ok || bad "POST /v1/reconfigure with free_ports" "$code $(cat "$TMP/out" "$TMP/err")"
$PY - "$SOCK" >"$TMP/py.out" 2>&1 <<'PY' && ok || bad "the Python client's free_ports" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client, control_pb2
ofc = Client(sys.argv[1])
r = ofc.reconfigure(topology="torus:4x4", free_ports=True)
assert r.status == control_pb2.STATUS_OK, r.message
assert "4 cross-connects of the held partition 't1' left as they are" in r.message, r.message
st = ofc.get_state()
assert st.at_target and st.topology.spec == "torus:4x4", (st.at_target, st.at_target_detail)
PY
held 1 16 >"$TMP/t1.after"
cmp -s "$TMP/t1.before" "$TMP/t1.after" && ok || bad "t1's cross-connects changed (Python)" "$(diff "$TMP/t1.before" "$TMP/t1.after")"
expect_stdout_has "on the free ports alone" $PY -m ofc_client --socket "$SOCK" reconfigure torus:4x4 --free-ports --dry-run

# ---- no hold: every port is free ---------------------------------------------------
expect_stdout_has "released partition 't1'" $OFC --socket "$SOCK" release t1
expect_stdout_has "; on the free ports: no partition is held, so every port is" \
	$OFC --socket "$SOCK" reconfigure --topology torus:4x4 --free-ports
expect_json 'j["at_target"] and not j.get("held")' $OFC --socket "$SOCK" status --json

finish
