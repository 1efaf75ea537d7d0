#!/bin/sh
# ofc-gateway, the network API, against a real ofcd and ocs-emu:
# certificates the test makes with the openssl CLI (a CA with a CRL; admin,
# reader, two tenants, a stranger the policy does not name, an expired, a
# revoked, one of another CA, a server's, none; CRLs stale, of another CA,
# forged, or none, at start, on SIGHUP and gone stale while serving), curl
# against every route, tenants kept
# to their partitions (replies, state, events), bad requests, and ofcd's
# gateway socket refusing principals from anyone but the gateway's uid.
SUITE=gateway
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP"
GW=${GW:-$BUILD/ofc-gateway}
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
chmod 755 "$TMP"
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3

# ---- certificates: the openssl CLI (pki.sh), as docs/control.md shows ------
C="$TMP/pki"
pki_ca "$C"
for n in admin reader tenant-a tenant-b tenant-c stranger revoked host-h3; do pki_cert $n client; done
pki_cert server server
# A server's certificate (serverAuth only) the policy names as an admin:
# refused as a client all the same.
pki_cert srvauth server
pki_cert expired client -startdate 20200101000000Z -enddate 20200201000000Z
openssl ca -batch -config "$C/ca.cnf" -revoke "$C/revoked.pem" >/dev/null 2>&1
openssl ca -batch -config "$C/ca.cnf" -gencrl -out "$C/crl.pem" >/dev/null 2>&1
# Another CA's "admin".
pki_newkey -x509 -days 30 -keyout "$C/other.key" -out "$C/other.pem" -subj /CN=other-ca \
	-addext basicConstraints=critical,CA:TRUE
pki_newkey -keyout "$C/intruder.key" -out "$C/intruder.csr" -subj /CN=admin
openssl x509 -req -in "$C/intruder.csr" -CA "$C/other.pem" -CAkey "$C/other.key" \
	-CAcreateserial -out "$C/intruder.pem" -days 30 >/dev/null 2>&1
# CRLs that would switch revocation off: stale (nextUpdate passed), another
# CA's, one signed with another key under the CA's name, none at all.
openssl ca -batch -config "$C/ca.cnf" -gencrl -crl_lastupdate 20250101000000Z \
	-crl_nextupdate 20250201000000Z -out "$C/stale-crl.pem" >/dev/null 2>&1
sed -e "s|= $C/ca.pem|= $C/other.pem|" -e "s|= $C/ca.key|= $C/other.key|" "$C/ca.cnf" >"$C/other.cnf"
openssl ca -batch -config "$C/other.cnf" -gencrl -out "$C/foreign-crl.pem" >/dev/null 2>&1
pki_newkey -x509 -days 30 -keyout "$C/forger.key" -out "$C/forger.pem" -subj /CN=ofc-test-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
sed -e "s|= $C/ca.pem|= $C/forger.pem|" -e "s|= $C/ca.key|= $C/forger.key|" "$C/ca.cnf" >"$C/forger.cnf"
openssl ca -batch -config "$C/forger.cnf" -gencrl -out "$C/forged-crl.pem" >/dev/null 2>&1
printf 'not a CRL\n' >"$C/garbage-crl.pem"
cat "$C/crl.pem" "$C/stale-crl.pem" >"$C/two-crl.pem"
[ -s "$C/crl.pem" ] && [ -s "$C/expired.pem" ] && [ -s "$C/intruder.pem" ] &&
	[ -s "$C/stale-crl.pem" ] && [ -s "$C/foreign-crl.pem" ] && [ -s "$C/forged-crl.pem" ] && ok ||
	bad "the openssl CLI made the certificates"

cat >"$TMP/policy" <<'EOF'
# identity    role       partitions
cn:admin      admin
cn:reader     read-only
cn:tenant-a   tenant     jobA,slurm-job-*
cn:tenant-b   tenant     jobB
cn:tenant-c   tenant     slurm-job-*
cn:revoked    admin
cn:expired    admin
cn:srvauth    admin
cn:host-h3    host       h3
EOF

# ---- the policy file's errors --------------------------------------------------
printf 'cn:x admin\ncn:y tenant\n' >"$TMP/bad.policy"
GWOPTS="--listen 127.0.0.1:0 --cert $C/server.pem --key $C/server.key --ca $C/ca.pem"
expect_error 2 "ofc-gateway: $TMP/bad.policy:2: a tenant needs its partitions (PARTITION,...)" \
	$GW $GWOPTS --policy "$TMP/bad.policy" --ofcd-socket "$TMP/gw.sock"
printf 'x admin\n' >"$TMP/bad.policy"
expect_error 2 "ofc-gateway: $TMP/bad.policy:1: identity 'x' is not cn:NAME, dns:NAME, uri:NAME or email:NAME" \
	$GW $GWOPTS --policy "$TMP/bad.policy" --ofcd-socket "$TMP/gw.sock"
expect_error 2 "ofc-gateway: missing --ofcd-socket PATH" $GW $GWOPTS --policy "$TMP/policy"
printf 'cn:x host h1,h2\n' >"$TMP/bad.policy"
expect_error 2 "ofc-gateway: $TMP/bad.policy:1: a host's agent names the one fabric host it speaks for (IDENTITY host HOST)" \
	$GW $GWOPTS --policy "$TMP/bad.policy" --ofcd-socket "$TMP/gw.sock"

# ---- CRLs that would switch revocation off: refused at start, naming the file ----
# (GnuTLS skips a CRL it cannot verify and adds nothing: each of these
# once started a gateway that took revoked certificates; timeout ends one.)
crl_refused() { # FILE WHY
	expect_error 2 "ofc-gateway: $1: $2" timeout 20 $GW $GWOPTS --crl "$1" --policy "$TMP/policy" \
		--ofcd-socket "$TMP/gw.sock"
}
crl_refused "$C/stale-crl.pem" "stale: its nextUpdate, 2025-02-01T00:00:00Z, has passed (issue a fresh one: openssl ca -gencrl)"
crl_refused "$C/foreign-crl.pem" "not signed by the configured CA (its issuer is CN=other-ca): a CRL another CA signed revokes nothing here"
crl_refused "$C/forged-crl.pem" "its signature does not verify with the key of the configured CA CN=ofc-test-ca"
crl_refused "$C/garbage-crl.pem" "no CRL in it (PEM, -----BEGIN X509 CRL-----)"
crl_refused "$C/admin.pem" "no CRL in it (PEM, -----BEGIN X509 CRL-----)"
crl_refused "$C/two-crl.pem" "its CRL 2 of 2: stale: its nextUpdate, 2025-02-01T00:00:00Z, has passed (issue a fresh one: openssl ca -gencrl)"

# ---- a fabric of two partitions, ofcd with a gateway socket, the gateway ----------
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
a=$(seq -s ', h' 0 31)
b=$(seq -s ', h' 32 63)
sed -e '/^topology: /d' -e 's|credentials: .*|credentials: ocs0.cred|' \
	-e "s|^collectives:|partitions:\n  - name: jobA\n    hosts: [h$a]\n    topology: torus:4x8\n  - name: jobB\n    hosts: [h$b]\n    topology: circulant:32:1,4\n\ncollectives:|" \
	configs/torus64-ocs.yaml >"$TMP/part.yaml"
: >"$TMP/emu.state"
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
SOCK="$TMP/ofcd.sock"
expect_error 2 "ofcd: --gateway-socket and --gateway-uid go together" \
	$OFCD --config "$TMP/part.yaml" --socket "$SOCK" --gateway-socket "$TMP/gw.sock"
expect_error 2 "ofcd: --gateway-group goes with --gateway-socket and --gateway-uid" \
	$OFCD --config "$TMP/part.yaml" --socket "$SOCK" --gateway-group 0
expect_error 2 "ofcd: --gateway-group 'no-such-group-here': no such group (make install's sysusers.d creates 'ofc-gwsock')" \
	$OFCD --config "$TMP/part.yaml" --socket "$SOCK" --gateway-socket "$TMP/gw.sock" --gateway-uid 0 --gateway-group no-such-group-here
$OFCD --foreground --config "$TMP/part.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--device "ocs0=127.0.0.1:$e_port" --probe-interval 0 --gateway-socket "$TMP/gw.sock" \
	--gateway-uid "$(id -u)" 2>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.02; done
$GW $GWOPTS --crl "$C/crl.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" \
	--port-file "$TMP/gw.port" --read-timeout 2s --idle-timeout 4s 2>"$TMP/gw.log" &
GWPID=$!
DAEMONS="$DAEMONS $GWPID"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
read -r P <"$TMP/gw.port"
URL="https://127.0.0.1:$P"

# req NAME CODE ARGS...: curl as NAME's certificate; the HTTP status is CODE;
# the body is in $TMP/out.
req() {
	who=$1
	want=$2
	shift 2
	got=$(curl -sS -o "$TMP/out" -w '%{http_code}' --cacert "$C/ca.pem" \
		--cert "$C/$who.pem" --key "$C/$who.key" "$@" 2>"$TMP/err")
	if [ "$got" = "$want" ]; then ok; else
		bad "$who: curl $* answered $got, want $want" "$(head -c 400 "$TMP/out") $(head -c 200 "$TMP/err")"
	fi
}
# body_is EXPR: the JSON answer (j) satisfies EXPR.
body_is() {
	if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$TMP/out"; then ok; else
		bad "answer: $1" "$(head -c 600 "$TMP/out")"
	fi
}

# ---- certificates refused in the handshake, each named in the log ---------------
refused() { # NAME LOG-TEXT [curl options]
	n=$1
	text=$2
	shift 2
	if curl -sS -o /dev/null --cacert "$C/ca.pem" "$@" "$URL/v1/state" 2>"$TMP/err"; then
		bad "$n: curl succeeded"
	else ok; fi
	deadline 5
	until grep -qF "$text" "$TMP/gw.log" || past $_end; do sleep 0.05; done
	grep -qF "$text" "$TMP/gw.log" && ok || bad "$n: the log should say '$text'" "$(tail -3 "$TMP/gw.log")"
}
refused expired "certificate CN=expired: expired" --cert "$C/expired.pem" --key "$C/expired.key"
refused revoked "certificate CN=revoked: revoked (on the CA's CRL)" --cert "$C/revoked.pem" --key "$C/revoked.key"
refused other-ca "certificate CN=admin: not signed by the configured CA" --cert "$C/intruder.pem" --key "$C/intruder.key"
refused server-as-client "certificate CN=srvauth: not for client authentication" --cert "$C/srvauth.pem" --key "$C/srvauth.key"
refused none "no verified client certificate (none sent, or the handshake failed)"
req stranger 403 "$URL/v1/state"
body_is 'j["status"]=="STATUS_DENIED" and j["message"]=="permission denied: the certificate (cn:stranger) is not in the gateway'"'"'s policy"'
grep -qF "certificate cn:stranger is in no line of the policy" "$TMP/gw.log" && ok || bad "the stranger is logged"
# TLS 1.2 and 1.3 only.
if curl -sS -o /dev/null --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" \
	--tls-max 1.1 "$URL/v1/state" 2>/dev/null; then bad "TLS 1.1 was accepted"; else ok; fi

# ---- every route -----------------------------------------------------------------
req admin 200 "$URL/v1/state"
body_is 'j["status"]=="STATUS_OK" and j["state"]["fabric_name"]=="torus64-ocs" and j["state"]["devices"][0]["address"].startswith("127.0.0.1:")'
# The same state again: its JSON is the gateway's from before (counted in
# /metrics below), with no id; once the state changes, the new one.
req admin 200 "$URL/v1/state"
body_is 'j["state"]["devices"][0]["circuits"]==[] and "id" not in j'
req reader 200 "$URL/v1/state?with_fabric=true"
body_is 'j["state"]["fabric"]["name"]=="torus64-ocs"'
body_is 'all(j["state"]["fabric"].get(k) for k in ("wiring", "circuits"))' # (for fabric_brief)
cp "$TMP/out" "$TMP/full.json"
# The page's read: the fabric's hosts and switches as in the full one, none
# of its wiring, circuits and logical topology (15 MB of 20 at 65,536 hosts).
req reader 200 "$URL/v1/state?with_fabric=true&fabric_brief=true"
python3 - "$TMP/full.json" "$TMP/out" <<'EOF2' && ok || bad "fabric_brief: not the fabric less its wiring, circuits and logical" "$(head -c 400 "$TMP/out")"
import json, sys
full, brief = (json.load(open(p))["state"]["fabric"] for p in sys.argv[1:])
for k in ("wiring", "circuits", "logical"):
    assert brief.get(k) in (None, []), k
    full.pop(k, None)
    brief.pop(k, None)
assert brief == full and len(brief["hosts"]) == 64 and brief["switches"], brief.keys()
EOF2
# Asked with gzip, the same JSON gzipped; its ETag read again answers 304
# with no body; another ETag, the state.
cp "$TMP/full.json" "$TMP/plain.json"
req reader 200 -D "$TMP/hdr" -H 'Accept-Encoding: gzip' "$URL/v1/state?with_fabric=true"
grep -qi '^content-encoding: gzip' "$TMP/hdr" && ok || bad "no gzip" "$(cat "$TMP/hdr")"
gunzip -c <"$TMP/out" | cmp -s - "$TMP/plain.json" && ok ||
	bad "the gzipped state is not the plain one" "$(gunzip -c <"$TMP/out" | head -c 300)"
[ "$(wc -c <"$TMP/out")" -lt "$(wc -c <"$TMP/plain.json")" ] && ok || bad "gzip made it no smaller"
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *//p' "$TMP/hdr" | tr -d '\r')
[ -n "$etag" ] && ok || bad "no ETag on the state" "$(cat "$TMP/hdr")"
rm -f "$TMP/out" # (curl writes no file for an empty body)
req reader 304 -H "If-None-Match: $etag" "$URL/v1/state?with_fabric=true"
[ ! -s "$TMP/out" ] && ok || bad "a 304 with a body" "$(head -c 200 "$TMP/out" | od -c | head -3)"
req reader 304 -H "If-None-Match: \"x\", W/$etag" "$URL/v1/state?with_fabric=true"
req reader 200 -H 'If-None-Match: "0123456789abcdef-10"' "$URL/v1/state?with_fabric=true"
cmp -s "$TMP/out" "$TMP/plain.json" && ok || bad "another ETag: not the state"
req tenant-a 200 "$URL/v1/schedule?collective=allreduce&partition=jobA&size=1MiB&summary_only=true"
body_is 'j["schedule"]["topology"]=="torus:4x8" and j["schedule"]["size_bytes"]==1048576 and j["schedule"]["steps"]==[]'
req tenant-a 403 "$URL/v1/schedule?collective=allreduce&partition=jobB"
body_is 'j["status"]=="STATUS_DENIED" and j["message"]=="permission denied: partition jobB belongs to another tenant"'
req tenant-a 403 "$URL/v1/schedule?collective=allreduce&topology=torus:8x8"
req reader 200 "$URL/v1/schedule?collective=allgather&topology=torus:8x8&size=1MiB&summary_only=true"
body_is 'j["schedule"]["nodes"]==64'
# The JSON of a streamed schedule is the Response as one document, its steps
# the protobuf answer's.
req admin 200 "$URL/v1/schedule?collective=allreduce&topology=torus:8x8&size=1MiB"
mv "$TMP/out" "$TMP/t88.json"
req admin 200 "$URL/v1/schedule?collective=allreduce&topology=torus:8x8&size=1MiB&format=pb"
$PY -c '
import json, sys; sys.path.insert(0, sys.argv[3])
from ofc_client.pb import schedule_pb2
s = schedule_pb2.Schedule.FromString(open(sys.argv[1], "rb").read())
j = json.load(open(sys.argv[2]))
assert j["status"] == "STATUS_OK" and j["schedule"]["num_steps"] == len(s.steps) > 1
assert [[(x["src"], x["dst"], x.get("origin", 0)) for x in st["transfers"]] for st in j["schedule"]["steps"]] == \
       [[(x.src, x.dst, x.origin) for x in st.transfers] for st in s.steps]' "$TMP/out" "$TMP/t88.json" "$BUILD/python" &&
	ok || bad "the streamed JSON and protobuf schedules agree"
req admin 200 "$URL/v1/schedule?collective=allgather&topology=ring:8&size=1KiB&format=pb"
$PY -c '
import sys; sys.path.insert(0, sys.argv[2])
from ofc_client.pb import schedule_pb2
s = schedule_pb2.Schedule(); s.ParseFromString(open(sys.argv[1], "rb").read())
sys.exit(0 if s.nodes == 8 and len(s.steps) == s.num_steps > 0 else 1)' "$TMP/out" "$BUILD/python" &&
	ok || bad "format=pb answers an ofc.v1.Schedule"

# Tenant b watches; tenant a watches; a reconfigures its partition: only a
# hears of it (the watches stay open: ended once a heard its commit, or
# after 30 s).
curl -sS -N --max-time 30 --cacert "$C/ca.pem" --cert "$C/tenant-b.pem" --key "$C/tenant-b.key" \
	"$URL/v1/watch" >"$TMP/watch.b" 2>/dev/null &
wb=$!
curl -sS -N --max-time 30 --cacert "$C/ca.pem" --cert "$C/tenant-a.pem" --key "$C/tenant-a.key" \
	"$URL/v1/watch" >"$TMP/watch.a" 2>/dev/null &
wa=$!
# (and a's watch asked with gzip: the same lines, each readable as it comes)
curl -sS -N --max-time 30 --cacert "$C/ca.pem" --cert "$C/tenant-a.pem" --key "$C/tenant-a.key" \
	-H 'Accept-Encoding: gzip' -D "$TMP/watch.hdr" "$URL/v1/watch" >"$TMP/watch.gz" 2>/dev/null &
wz=$!
# (what a gzipped stream cut anywhere says so far)
gz_lines() {
	python3 -c 'import sys, zlib; d = zlib.decompressobj(16 + 15); sys.stdout.buffer.write(d.decompress(open(sys.argv[1], "rb").read()))' "$1"
}
sleep 0.5
req reader 403 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobA"}'
body_is 'j["message"]=="permission denied: cn:reader has the read-only role; this request needs the admin role"'
req tenant-a 403 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobB"}'
body_is 'j["message"]=="permission denied: partition jobB belongs to another tenant"'
req tenant-a 403 -X POST "$URL/v1/reconfigure" -d '{"topology":"torus:8x8"}'
req tenant-a 403 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobA2","hosts":["h40","h41"],"topology":"ring:2"}'
body_is 'j["message"]=="permission denied: partition jobA2 belongs to another tenant"'
req tenant-a 200 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobA"}'
body_is 'j["transaction"]["state"]=="committed" and j["transaction"]["operations"]==128'
# The emulator holds jobA's 128 cross-connects and none on jobB's ports.
[ "$(awk '$1 <= 128 && $2 <= 128' "$TMP/emu.state" | grep -c .)" -eq 128 ] &&
	[ "$(awk '$1 > 128 || $2 > 128' "$TMP/emu.state" | grep -c .)" -eq 0 ] && ok ||
	bad "jobA's reconfigure touched jobA's ports alone" "$(wc -l <"$TMP/emu.state") cross-connects"
# (a's commit event, then a moment for any that b would wrongly get)
deadline 20
until grep -q '"kind":"KIND_TRANSACTION_COMMITTED"' "$TMP/watch.a" || past "$_end"; do sleep 0.1; done
until gz_lines "$TMP/watch.gz" | grep -q '"kind":"KIND_TRANSACTION_COMMITTED"' || past "$_end"; do sleep 0.1; done
sleep 0.5
kill $wa $wb $wz 2>/dev/null
wait $wa $wb $wz
grep -qi '^content-encoding: gzip' "$TMP/watch.hdr" && ok || bad "the watch asked with gzip: not gzipped" "$(cat "$TMP/watch.hdr")"
[ -n "$(grep -v '^$' "$TMP/watch.a")" ] && [ "$(gz_lines "$TMP/watch.gz" | grep -v '^$')" = "$(grep -v '^$' "$TMP/watch.a")" ] && ok ||
	bad "the gzipped watch's lines are not the plain watch's" "$(gz_lines "$TMP/watch.gz" | head -c 300)"
grep -q '"kind":"KIND_TRANSACTION_COMMITTED"' "$TMP/watch.a" && ok || bad "tenant a hears its commit" "$(head -c 300 "$TMP/watch.a")"
grep -q '"message":"watching the events of fabric torus64-ocs"' "$TMP/watch.b" &&
	! grep -q KIND_ "$TMP/watch.b" && ok || bad "tenant b hears nothing of jobA" "$(head -c 600 "$TMP/watch.b")"

req admin 200 "$URL/v1/state"
body_is 'len(j["state"]["devices"][0]["circuits"])==128'
# A tenant's state: its circuits alone, no addresses, topology or paths.
req tenant-a 200 "$URL/v1/state"
body_is 'len(j["state"]["devices"][0]["circuits"])==128 and all(int(c["src_host"][1:]) < 32 and int(c["dst_host"][1:]) < 32 for c in j["state"]["devices"][0]["circuits"]) and "address" not in j["state"]["devices"][0] and "topology" not in j["state"] and "config_file" not in j["state"] and "state_dir" not in j["state"] and j["state"]["partition"]=="jobA"'
req tenant-b 200 "$URL/v1/state?with_fabric=true&with_edges=true"
body_is 'j["state"]["devices"][0]["circuits"]==[] and "fabric" not in j["state"] and "partition" not in j["state"]'
grep -q 'jobA\|h1[0-9]' "$TMP/out" && bad "tenant b's state names jobA or its hosts" || ok

# A job's libofc-mpi report through the gateway: a tenant's of its own
# partition kept and in its state (not tenant b's); of another tenant's
# partition, of hosts not its partition's, or from the read-only role,
# refused.
req tenant-a 200 -X POST "$URL/v1/mpi-report" -d '{"partition":"jobA","ranks":2,"hosts":["h0","h1"],"collectives":[{"name":"MPI_Allreduce","calls":4,"ofc_calls":2,"fallbacks":[{"reason":"communicator","calls":2}],"bytes":64}]}'
body_is 'j["message"]=="report of 2 ranks kept for partition jobA: 4 calls, 2 by ofc" + chr(39) + "s schedule"'
req tenant-a 403 -X POST "$URL/v1/mpi-report" -d '{"partition":"jobB","ranks":1,"hosts":["h40"]}'
body_is 'j["message"]=="permission denied: partition jobB belongs to another tenant"'
req tenant-a 400 -X POST "$URL/v1/mpi-report" -d '{"partition":"jobA","ranks":1,"hosts":["h40"]}'
body_is '"host " + chr(39) + "h40" + chr(39) + " is not one of partition jobA" in j["message"]'
req reader 403 -X POST "$URL/v1/mpi-report" -d '{"partition":"jobA","ranks":1,"hosts":["h0"]}'
req tenant-a 200 "$URL/v1/state"
body_is '[(r["partition"], r["reporter"], r["collectives"][0]["ofc_calls"]) for r in j["state"]["mpi_reports"]]==[("jobA", "cn:tenant-a", 2)]'
req tenant-b 200 "$URL/v1/state"
body_is 'j["state"]["mpi_reports"]==[]'

req tenant-a 403 -X POST "$URL/v1/apply" -d '{"yaml":"x"}'
body_is 'j["message"]=="permission denied: cn:tenant-a is a tenant; this request needs the admin role"'
req admin 200 -X POST "$URL/v1/apply" --data-binary @- <<EOF
$(python3 -c 'import json,sys; print(json.dumps({"yaml": open(sys.argv[1]).read(), "filename": sys.argv[1], "dry_run": True}))' "$TMP/part.yaml")
EOF
body_is 'j["transaction"]["state"]=="planned"'
# in stages through the gateway: the same budget check as the socket's
req admin 400 -X POST "$URL/v1/apply" -d '{"yaml":"x","max_loss_percent":100}'
body_is 'j["message"].startswith("max_loss_percent must be above 0 and below 100, not 100")'
req admin 400 -X POST "$URL/v1/apply" -d '{"yaml":"x","grace_ms":5}'
body_is 'j["message"]=="grace_ms goes with max_loss_percent"'
req tenant-b 404 -X POST "$URL/v1/cancel" -d '{"ticket":1}'
body_is 'j["message"]=="no request of yours with ticket 1 is waiting"'
req tenant-b 403 -X POST "$URL/v1/cancel" -d '{"request_id":1}'
req tenant-a 403 -X POST "$URL/v1/report-failure" -d '{"items":["h0:0"]}'
# A host's agent (the host role): its own host's links, and nothing else:
# not another host's, not a read of the state, not a failure or a change
# of the fabric (docs/security.md)
req host-h3 200 -X POST "$URL/v1/report-links" -d '{"host":"h3","ports":[{"port":0,"up":true}],"lldp_running":true}'
body_is 'j["status"]=="STATUS_OK" and j["message"].startswith("host h3: 1 of 4 ports up, 0 held failed")'
req host-h3 403 -X POST "$URL/v1/report-links" -d '{"host":"h9","ports":[{"port":0,"up":false}]}'
body_is 'j["message"]=="permission denied: cn:host-h3 speaks for host h3, not h9"'
req host-h3 403 "$URL/v1/state"
body_is 'j["message"]=="permission denied: cn:host-h3 is host h3'"'"'s agent; it may only report h3'"'"'s links"'
req host-h3 403 "$URL/v1/watch"
req host-h3 403 -X POST "$URL/v1/report-failure" -d '{"items":["h9:0"]}'
req host-h3 403 -X POST "$URL/v1/reconfigure" -d '{"topology":"torus:8x8"}'
req host-h3 403 -X POST "$URL/v1/drain" -d '{"items":["ocs0:1"]}'
req host-h3 400 -X POST "$URL/v1/report-links" -d '{"host":"h3","ports":[{"port":9,"up":false}]}'
body_is 'j["message"]=="host h3 has ports 0..3; the report names port 9, which the fabric does not have"'
req admin 400 -X POST "$URL/v1/report-failure" -d '{"items":[]}'
body_is 'j["status"]=="STATUS_INVALID" and j["message"].startswith("report_failure needs items")'
# Drain: the admin's alone; bad input refused through the gateway as on the socket
req tenant-a 403 -X POST "$URL/v1/drain" -d '{"items":["ocs0:1"]}'
req reader 403 -X POST "$URL/v1/drain" -d '{"items":["ocs0:1"]}'
req admin 400 -X POST "$URL/v1/drain" -d '{"items":[]}'
body_is 'j["status"]=="STATUS_INVALID" and j["message"].startswith("drain needs items")'
req admin 400 -X POST "$URL/v1/drain" -d '{"items":["ocs9"],"grace_ms":0}'
body_is 'j["status"]=="STATUS_INVALID" and j["message"].endswith(" has no switch " + chr(39) + "ocs9" + chr(39))'
req tenant-a 403 -X POST "$URL/v1/release-partition" -d '{"partition":"jobB"}'
body_is 'j["message"].startswith("permission denied: partition jobB belongs to another tenant")'
# a name that is nobody's hold is said to be none, not another tenant's
req tenant-a 403 -X POST "$URL/v1/release-partition" -d '{"partition":"zz-none"}'
body_is 'j["message"]=="permission denied: no partition zz-none exists (nothing to release), and cn:tenant-a may name only its own partitions"'
req tenant-a 404 -X POST "$URL/v1/release-partition" -d '{"partition":"jobA"}'
# (name, the older spelling, is taken; two names are refused)
req tenant-a 404 -X POST "$URL/v1/release-partition" -d '{"name":"jobA"}'
req admin 400 -X POST "$URL/v1/release-partition" -d '{"partition":"jobA","name":"jobB"}'
body_is 'j["message"].startswith("release_partition names two partitions")'

# ---- GetPlan and MoveToPhase: their routes from the request table --------------------
# (this config has no workload section: ofcd answers NOT_FOUND, past the
# authoriser, which lets the read-only role plan and only an admin move)
req reader 404 "$URL/v1/plan"
body_is 'j["status"]=="STATUS_NOT_FOUND" and j["message"].endswith("has no workload section to plan")'
req tenant-a 403 "$URL/v1/plan"
body_is 'j["message"]=="permission denied: cn:tenant-a is a tenant; this request needs the admin role"'
req admin 404 -X POST "$URL/v1/move-to-phase" -d '{"phase":1,"dry_run":true}'
body_is 'j["status"]=="STATUS_NOT_FOUND" and "no workload section" in j["message"]'
req reader 403 -X POST "$URL/v1/move-to-phase" -d '{"name":"decode"}'
req tenant-a 403 -X POST "$URL/v1/move-to-phase" -d '{"phase":0}'
req admin 405 "$URL/v1/move-to-phase"
req admin 405 -X POST "$URL/v1/plan"
req admin 400 -X POST "$URL/v1/move-to-phase" -d '{"phse":1}'
body_is 'j["message"].startswith("bad request: phse: unknown field of MoveToPhase")'

# ---- TestbedRun, TestbedCheck, TestbedDown, TestbedUp: routes from the table, an admin's only -----------
# (no testbed is up here: ofcd answers FAILED saying so, past the authoriser)
req admin 409 -X POST "$URL/v1/testbed/check" -d '{}'
body_is 'j["status"]=="STATUS_FAILED" and j["message"].endswith("is not up (ofc testbed up)")'
req admin 409 -X POST "$URL/v1/testbed/run" -d '{"algorithm":"ring","size":"65536"}'
body_is 'j["status"]=="STATUS_FAILED" and j["message"].endswith("is not up (ofc testbed up)")'
req reader 403 -X POST "$URL/v1/testbed/run" -d '{}'
req tenant-a 403 -X POST "$URL/v1/testbed/check" -d '{}'
req admin 400 -X POST "$URL/v1/testbed/run" -d '{"collective":"gossip"}'
# A schedule's bytes come as base64 (protobuf's JSON mapping), beside a
# what-if topology and MPI's row: ofcd gets them (a schedule with an
# algorithm is its refusal; without, the run gets as far as the testbed);
# what is not base64 is the gateway's 400, naming the field.
SB64=$(printf 'schedule bytes \377\373' | base64 | tr -d '\n')
req admin 400 -X POST "$URL/v1/testbed/run" -d "{\"schedule\":\"$SB64\",\"algorithm\":\"bfb\"}"
body_is 'j["status"]=="STATUS_INVALID" and j["message"]=="a schedule and an algorithm exclude each other"'
req admin 409 -X POST "$URL/v1/testbed/run" -d "{\"schedule\":\"$SB64\",\"topology\":\"ring:8\",\"mpi\":true}"
body_is 'j["status"]=="STATUS_FAILED" and j["message"].endswith("is not up (ofc testbed up)")'
req admin 400 -X POST "$URL/v1/testbed/run" -d '{"schedule":"not base64!","topology":"ring:8"}'
body_is 'j["message"].startswith("bad request: schedule: not base64")'
req reader 403 -X POST "$URL/v1/testbed/down" -d '{}'
req tenant-a 403 -X POST "$URL/v1/testbed/down" -d '{}'
req reader 403 -X POST "$URL/v1/testbed/up" -d '{}'
req tenant-a 403 -X POST "$URL/v1/testbed/up" -d '{}'
req admin 400 -X POST "$URL/v1/testbed/up" -d '{"rate_scale":2}'
body_is 'j["status"]=="STATUS_INVALID" and j["message"]=="rate_scale must be a number in (0, 1], got 2"'

# ---- /metrics: Prometheus's text, checked by promtool, scraped by prometheus -------
req tenant-a 403 "$URL/metrics"
req reader 200 "$URL/metrics"
grep -q '^ofc_transactions_total{outcome="committed"} 1$' "$TMP/out" &&
	grep -q '^ofc_device_up{device="ocs0"} 1$' "$TMP/out" &&
	grep -q '^ofc_transaction_duration_seconds_count 1$' "$TMP/out" &&
	grep -q '^ofc_gateway_tls_refused_total [1-9]' "$TMP/out" &&
	grep -q '^ofc_gateway_state_json_reused_total [1-9]' "$TMP/out" &&
	grep -q '^ofc_requests_received_total{request="get-state"} [1-9]' "$TMP/out" &&
	grep -q '^ofc_requests_received_total{request="move-to-phase"} 3$' "$TMP/out" && ok ||
	bad "/metrics counts the commit, the device, the refusals, the JSON reused and the requests by kind" "$(head -c 600 "$TMP/out")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/out" >"$TMP/promtool.out" 2>&1 && ok ||
		bad "promtool check metrics" "$(head -5 "$TMP/promtool.out")"
fi
if command -v prometheus >/dev/null; then
	PP=$(scripts/free-ports 1)
	printf '%s\n' "global:" "  scrape_interval: 1s" "scrape_configs:" "  - job_name: ofc" \
		"    scheme: https" "    tls_config:" "      ca_file: $C/ca.pem" \
		"      cert_file: $C/reader.pem" "      key_file: $C/reader.key" \
		"    static_configs:" "      - targets: ['127.0.0.1:$P']" >"$TMP/prom.yml"
	prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom" \
		--web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
	DAEMONS="$DAEMONS $!"
	Q="http://127.0.0.1:$PP/api/v1/query?query=ofc_transactions_total"
	W='"outcome":"committed"},"value":\[[0-9.]*,"1"\]'
	deadline 30
	until curl -s "$Q" 2>/dev/null | grep -q "$W" || past $_end; do sleep 0.5; done
	curl -s "$Q" >"$TMP/out" 2>&1
	grep -q "$W" "$TMP/out" && ok ||
		bad "prometheus scraped the gateway" "$(head -c 300 "$TMP/out")" "$(tail -3 "$TMP/prom.log")"
fi

# Per device: commands, errors, last contact. The commit above counted; an
# emulator (on the same port) that refuses every command after the login
# makes a reconfigure an error that is still a contact; none at all, an
# error with no contact.
dev_metric() { # NAME: NAME{device="ocs0"} from /metrics
	curl -sS --cacert "$C/ca.pem" --cert "$C/reader.pem" --key "$C/reader.key" "$URL/metrics" |
		awk -v n="$1{device=\"ocs0\"}" '$1 == n {print $2}'
}
dev_metrics() { # the three, as "COMMANDS ERRORS LAST-CONTACT"
	echo "$(dev_metric ofc_device_commands_total) $(dev_metric ofc_device_errors_total)" \
		"$(dev_metric ofc_device_last_contact_timestamp_seconds)"
}
m1=$(dev_metrics)
echo "$m1" | awk -v now="$(date +%s)" '{ exit !($1 >= 129 && $2 == 0 && $3 > now - 600 && $3 <= now + 1) }' &&
	ok || bad "ocs0's commands, errors and last contact after the commit" "$m1"
stop_emu "$e_pid"
start_emu ocs-emu e --listen "127.0.0.1:$e_port" --ports 256 --credentials configs/credentials/ocs0.cred \
	--state "$TMP/emu.state" --fail-at 2 --fail-count 1000000
req admin 409 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobB"}'
m2=$(dev_metrics)
echo "$m1 $m2" | awk '{ exit !($4 > $1 && $5 > $2 && $6 > $3) }' && ok ||
	bad "a refused command: commands and errors up, a contact" "$m1 -> $m2"
stop_emu "$e_pid"
req admin 409 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobB"}'
m3=$(dev_metrics)
echo "$m2 $m3" | awk '{ exit !($5 > $2 && $6 == $3) }' && ok ||
	bad "no device: errors up, no contact" "$m2 -> $m3"
start_emu ocs-emu e --listen "127.0.0.1:$e_port" --ports 256 --credentials configs/credentials/ocs0.cred \
	--state "$TMP/emu.state"

# ---- bad requests: each a clear error --------------------------------------------
req admin 404 "$URL/v1/nothing"
body_is 'j["message"]=="GET /v1/nothing: no such route (docs/control.md, \"The network API\")"'
req admin 405 "$URL/v1/reconfigure"
req admin 400 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobA","topolgy":"x"}'
body_is 'j["message"].startswith("bad request: topolgy: unknown field of Reconfigure (it has topology, workload")'
req admin 400 -X POST "$URL/v1/reconfigure" -d '{"partition":5}'
body_is 'j["message"]=="bad request: partition: expected a string, not int"'
req admin 400 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobA"'
body_is 'j["message"].startswith("bad request: not JSON: ")'
req admin 400 -X POST "$URL/v1/reconfigure" -d '{"topology":"ring:4","workload":{}}'
body_is 'j["message"]=="bad request: workload: topology and workload are one of: give one"'
req admin 400 "$URL/v1/schedule?collective=allreduce&summary_only=maybe"
body_is 'j["message"]=="bad request: summary_only: expected true or false, not string"'
head -c 2000000 /dev/zero | tr '\0' ' ' >"$TMP/big"
req admin 413 -X POST "$URL/v1/reconfigure" --data-binary @"$TMP/big"

# ---- ofc --server and the Python client over TLS ----------------------------------
SRV="--server $URL --cacert $C/ca.pem"
# (the emulator is gone since the metrics' check: ocs0 UNREACHABLE, exit 1
# as the local `ofc status FILE` exits)
$OFC $SRV --cert "$C/reader.pem" --key "$C/reader.key" status >"$TMP/out" 2>"$TMP/err"
[ $? -eq 1 ] && grep -qF "fabric torus64-ocs (config $TMP/part.yaml), generation 1" "$TMP/out" &&
	grep -q "ocs0 (switch tl1 at .*UNREACHABLE" "$TMP/out" && ok ||
	bad "ofc --server status with the switch unreachable: exit 1" "$(cat "$TMP/out" "$TMP/err")"
expect_error 1 "ofc: permission denied: partition jobA belongs to another tenant" \
	$OFC $SRV --cert "$C/tenant-b.pem" --key "$C/tenant-b.key" reconfigure --partition jobA
expect_json 'j["state"]=="committed" and j["operations"]==0 and j["principal"]=="cn:tenant-a"' \
	$OFC $SRV --cert "$C/tenant-a.pem" --key "$C/tenant-a.key" reconfigure --partition jobA --json
$OFC $SRV --cert "$C/intruder.pem" --key "$C/intruder.key" status >"$TMP/out" 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "a refused client certificate ends the TLS handshake; the gateway's log says why" "$TMP/err" &&
	ok || bad "ofc --server with another CA's certificate" "$(cat "$TMP/err")"
expect_error 2 "ofc: --cert, --key and --cacert go with --server URL" $OFC --cert x status
# Slurm's prolog and epilog from another machine: contrib/slurm's wrappers
# with OFC_SERVER; tenant a may make slurm-job-* partitions of its own hosts.
mkdir "$TMP/slurm"
cp contrib/slurm/ofc-prolog contrib/slurm/ofc-epilog "$TMP/slurm/"
printf '#!/bin/sh\necho "$@" >>%s/scontrol.log\n' "$TMP" >"$TMP/slurm/scontrol"
chmod 755 "$TMP/slurm/scontrol"
printf '%s\n' "OFC=$(cd "$(dirname "$OFC")" && pwd -P)/$(basename "$OFC")" "OFC_SERVER=$URL" \
	"OFC_CERT=$C/tenant-a.pem" "OFC_KEY=$C/tenant-a.key" "OFC_CACERT=$C/ca.pem" \
	"OFC_SLURM_SCONTROL=$TMP/slurm/scontrol" "SLURM_CONF=$TMP/none" >"$TMP/slurm/ofc-slurm.env"
job() { # ID NODELIST PROLOG-OR-EPILOG
	env -i SLURM_JOB_ID="$1" SLURM_JOB_NODELIST="$2" SLURM_JOB_COMMENT=ofc:topology=ring:4 \
		"$TMP/slurm/ofc-$3"
}
expect_stdout_has "ofc: job 77: partition slurm-job-77: ring:4 on 4 hosts committed" job 77 'h[0-3]' prolog
# held for the certificate's identity, in the state directory: it outlives ofcd
expect_json '[(h["name"], h["owner"]) for h in j["held"]] == [("slurm-job-77", "cn:tenant-a")]' \
	$OFC --socket "$SOCK" status --json
grep -q "cn:tenant-a" "$TMP/st/"*.held && ok || bad "the hold's owner is not in the store" "$(ls "$TMP/st")"
# who changed the fabric: the tenant's identity, not the gateway's uid, in the
# record, the state, ofc status and the outcome's log line
grep -q "cn:tenant-a" "$TMP/st/"*.state && ok || bad "the record does not name the tenant"
expect_json 'j["committed_principal"] == "cn:tenant-a"' $OFC --socket "$SOCK" status --json
expect_stdout_has ", asked for by cn:tenant-a" $OFC --socket "$SOCK" status
expect_stdout_has ", asked for by cn:tenant-a" $OFC status "$TMP/part.yaml" --state-dir "$TMP/st" --device "ocs0=127.0.0.1:$e_port"
grep -q "ticket [0-9]*: reconfigure .*slurm-job-77.* from cn:tenant-a through the gateway (uid $(id -u) pid [0-9]*): ok: committed" "$TMP/ofcd.log" &&
	ok || bad "the outcome's log line names the tenant" "$(grep "slurm-job-77" "$TMP/ofcd.log" | tail -3)"
# A pattern says which names a tenant may take, not whose holds it may end:
# tenant c's slurm-job-* matches, but the hold is tenant a's.
req tenant-c 403 -X POST "$URL/v1/release-partition" -d '{"name":"slurm-job-77"}'
body_is 'j["status"]=="STATUS_DENIED" and j["message"]=="permission denied: partition slurm-job-77 belongs to another tenant (held for the principal that made it)"'
expect_json '[h["name"] for h in j["held"]] == ["slurm-job-77"]' $OFC --socket "$SOCK" status --json
expect_error 1 "ofc slurm prolog: job 78: permission denied: partition jobB belongs to another tenant (held: the request cannot be met)" \
	job 78 'h[40-43]' prolog
grep -q "^update JobId=78 AdminComment=ofc: permission denied: partition jobB belongs to another tenant" "$TMP/scontrol.log" &&
	ok || bad "the refusal is on the job" "$(cat "$TMP/scontrol.log")"
expect_stdout_has "ofc: job 77: released partition 'slurm-job-77'" job 77 'h[0-3]' epilog
grep -q "partition released: partition slurm-job-77 released: let go by cn:tenant-a" "$TMP/ofcd.log" &&
	ok || bad "the release's log line names the tenant" "$(grep -i partition "$TMP/ofcd.log" | tail -3)"
# an admin may end a tenant's hold
expect_stdout_has "ofc: job 79: partition slurm-job-79: ring:4 on 4 hosts committed" job 79 'h[4-7]' prolog
req admin 200 -X POST "$URL/v1/release-partition" -d '{"name":"slurm-job-79"}'
grep -q "partition released: partition slurm-job-79 released: let go by cn:admin" "$TMP/ofcd.log" &&
	ok || bad "the admin's release" "$(grep -i slurm-job-79 "$TMP/ofcd.log" | tail -3)"
expect_stdout_has "ofc: job 78 held no partition" \
	env SLURM_JOB_ID=78 $OFC $SRV --cert "$C/admin.pem" --key "$C/admin.key" slurm epilog
PYTHONPATH="$BUILD/python" $PY - "$URL" "$C" <<'PY' >"$TMP/out" 2>&1 && ok || bad "the Python client over TLS" "$(cat "$TMP/out")"
import sys
from ofc_client import Client, OfcError
url, c = sys.argv[1], sys.argv[2]
def client(n):
    return Client(server=url, cert=f"{c}/{n}.pem", key=f"{c}/{n}.key", cacert=f"{c}/ca.pem")
assert client("reader").get_state().fabric_name == "torus64-ocs"
s = client("tenant-a").get_schedule("allgather", partition="jobA", size_bytes=1 << 20, stream=True)
assert s.nodes == 32 and len(s.steps) == s.num_steps > 0, s.num_steps
try:
    client("tenant-b").reconfigure(partition="jobA")
    sys.exit("tenant b reconfigured jobA")
except OfcError as e:
    assert e.status == "STATUS_DENIED" and str(e) == "permission denied: partition jobA belongs to another tenant", e
try:
    client("stranger").get_state()
    sys.exit("a stranger was answered")
except OfcError as e:
    assert e.status == "STATUS_DENIED" and "is not in the gateway's policy" in str(e), e
try:
    client("intruder").get_state()
    sys.exit("another CA's certificate was answered")
except ConnectionError as e:
    assert "the gateway's log says why" in str(e), e
assert list(client("tenant-b").watch(idle_timeout=0.5)) == []
PY

# ---- schedules of any size: genkautz1024-patch's BFB allreduce (2,095,104
# transfers, 65 MiB as protobuf, 4 times the frame limit) streamed, locally
# and through the gateway, decodes to what `ofc schedule --format pb` writes.
$OFC schedule configs/genkautz1024-patch.yaml --collective allreduce --format pb -o "$TMP/ref.pb" >/dev/null
$OFCD --foreground --config configs/genkautz1024-patch.yaml --credentials-dir configs/credentials \
	--socket "$TMP/gk.sock" --state-dir "$TMP/gkst" --probe-interval 0 \
	--gateway-socket "$TMP/gkgw.sock" --gateway-uid "$(id -u)" 2>"$TMP/gk.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$TMP/gk.sock" status >/dev/null 2>&1 || past $_end; do sleep 0.02; done
$GW $GWOPTS --policy "$TMP/policy" --ofcd-socket "$TMP/gkgw.sock" --port-file "$TMP/gk.port" 2>"$TMP/gkgw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gk.port" ] && ! past $_end; do sleep 0.02; done
read -r GP <"$TMP/gk.port"
expect_error 1 "ofc: the bfb schedule (2095104 transfers in 10 steps) does not fit in a frame of 16 MiB: ask for the figures alone (summary_only; ofc --socket PATH schedule --summary), ask with stream (ofc --socket PATH schedule -o FILE streams), or run ofcd with a larger --max-frame" \
	$OFC --socket "$TMP/gk.sock" schedule --collective allreduce --json
expect_exit 0 $OFC --socket "$TMP/gk.sock" schedule --collective allreduce -o "$TMP/local.pb"
expect_exit 0 curl -sS --fail --cacert "$C/ca.pem" --cert "$C/reader.pem" --key "$C/reader.key" \
	-o "$TMP/remote.pb" "https://127.0.0.1:$GP/v1/schedule?collective=allreduce&format=pb"
expect_exit 0 $OFC --server "https://127.0.0.1:$GP" --cacert "$C/ca.pem" --cert "$C/reader.pem" \
	--key "$C/reader.key" schedule --collective allreduce -o "$TMP/cli.pb"
PYTHONPATH="$BUILD/python" $PY - "$TMP" <<'PY' >"$TMP/out" 2>&1 && ok || bad "the streamed schedules decode to ofc schedule's" "$(cat "$TMP/out")"
import json, sys
from ofc_client.pb import schedule_pb2
t = sys.argv[1]
ref = schedule_pb2.Schedule.FromString(open(f"{t}/ref.pb", "rb").read())
assert sum(len(s.transfers) for s in ref.steps) == 2095104
for f in ("local.pb", "remote.pb", "cli.pb"):
    s = schedule_pb2.Schedule.FromString(open(f"{t}/{f}", "rb").read())
    assert s == ref, f
PY

# ---- bad input at the transport: each cut off at a documented bound --------------
# (this gateway runs with --read-timeout 2s, and --idle-timeout 4s so that
# libmicrohttpd's idle cut never comes before the read timeout's, which is logged)
PYTHONPATH="$BUILD/python" $PY - "$P" "$C" <<'PY' >"$TMP/out" 2>&1 && ok || bad "malformed HTTP, huge headers, slowloris, an unfinished handshake" "$(cat "$TMP/out")"
import socket, ssl, sys, time
port, c = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=f"{c}/ca.pem")
ctx.load_cert_chain(f"{c}/admin.pem", f"{c}/admin.key")
def tls():
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
def answer(s, limit=10):
    s.settimeout(limit)
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except (ConnectionError, ssl.SSLError):
        pass
    return data
# Malformed HTTP: 400, closed.
s = tls(); s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
a = answer(s); assert a.startswith(b"HTTP/1.1 400"), a[:80]
# Headers over 32 KiB: refused (4xx), closed.
s = tls(); s.sendall(b"GET /v1/state HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
a = answer(s); assert a[:10] in (b"HTTP/1.1 4",) or a.startswith(b"HTTP/1.1 431") or a.startswith(b"HTTP/1.1 413"), a[:80]
# Slowloris: a byte a second is cut at the read timeout (2 s), well before
# the request would end.
s = tls(); t0 = time.time(); closed = False
for ch in b"GET /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"z" * 30:
    try:
        s.sendall(bytes([ch])); s.settimeout(1)
        if s.recv(1) == b"":
            closed = True; break
    except socket.timeout:
        continue
    except (ConnectionError, ssl.SSLError, OSError):
        closed = True; break
assert closed and time.time() - t0 < 20, time.time() - t0
# A TLS handshake never finished: a bare TCP connection is closed.
# (bounds of 20 s: the cut comes at 2 s, and this machine may be loaded)
r = socket.create_connection(("127.0.0.1", port)); r.settimeout(20); t0 = time.time()
# (a TLS alert, 0x15..., may come before the end)
d = b""
try:
    while True:
        k = r.recv(64)
        if not k:
            break
        d += k
        assert len(d) < 64 and d[0] == 0x15, d
except ConnectionError as e:
    pass
assert time.time() - t0 < 20, (d, time.time() - t0)
PY
grep -q "closing the connection of 127.0.0.1:[0-9]*: its first request not complete within 2 s (--read-timeout)" "$TMP/gw.log" &&
	grep -q "closing the connection of 127.0.0.1:[0-9]*: its TLS handshake not complete within 2 s (--read-timeout)" "$TMP/gw.log" &&
	ok || bad "the cuts are logged" "$(grep closing "$TMP/gw.log" | tail -3)"

# Request framing (RFC 9112 section 6.3): two Content-Length headers, one
# beside a Transfer-Encoding, a Transfer-Encoding other than chunked, an
# obs-fold (a line that starts with a space or a tab) anywhere: 400,
# and the connection closed, so what follows (here a good request in the
# same write) is never read as a request. A NUL decoded into the path or
# the query is 400 too, not a name cut short (partition=jobA%00x was jobA).
PYTHONPATH="$BUILD/python" $PY - "$P" "$C" <<'PY' >"$TMP/out" 2>&1 && ok || bad "request framing and NUL bytes" "$(cat "$TMP/out")"
import json, socket, ssl, sys
port, c = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=f"{c}/ca.pem")
ctx.load_cert_chain(f"{c}/admin.pem", f"{c}/admin.key")
good = b"GET /v1/state HTTP/1.1\r\nHost: x\r\n\r\n"
def exchange(raw):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
    s.sendall(raw + good)
    s.settimeout(20)  # (the read timeout, 2 s, would end a connection kept open)
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except (ConnectionError, ssl.SSLError):
        pass
    return data
def post(headers, body=b'{"partition":"jobA"}'):
    return b"POST /v1/reconfigure HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + body
cases = [
    (post(b"Content-Length: 20\r\nContent-Length: 2\r\n"), "2 Content-Length headers: one at most"),
    (post(b"Content-Length: 20\r\nContent-Length: 20\r\n"), "2 Content-Length headers: one at most"),
    (post(b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
          b'14\r\n{"partition":"jobA"}\r\n0\r\n\r\n'), "Content-Length and Transfer-Encoding together"),
    (post(b"Transfer-Encoding: chunked\r\ncontent-length: 4\r\n",
          b'14\r\n{"partition":"jobA"}\r\n0\r\n\r\n'), "Content-Length and Transfer-Encoding together"),
    (post(b"Transfer-Encoding: gzip\r\n"), "Transfer-Encoding 'gzip': only chunked is taken"),
    (post(b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
          b'14\r\n{"partition":"jobA"}\r\n0\r\n\r\n'), "2 Transfer-Encoding headers: one at most"),
    (post(b"Content-Length: 20\r\nX-A: b\r\n Transfer-Encoding: chunked\r\n"),
     "a header line that starts with a space or a tab (obs-fold), or a field name that is not a token"),
    (post(b"Content-Length: 20\r\nX-A: b\r\n\tTransfer-Encoding: chunked\r\n"),
     "a header line that starts with a space or a tab (obs-fold), or a field name that is not a token"),
    (post(b"Content-Length: 20\r\nTransfer-Encoding: gzip\r\n chunked\r\n"),
     "a header line that starts with a space or a tab (obs-fold), or a field name that is not a token"),
    (post(b"Transfer-Encoding: chunked\r\nContent-Length:\r\n 4\r\n",
          b'14\r\n{"partition":"jobA"}\r\n0\r\n\r\n'),
     "a header line that starts with a space or a tab (obs-fold), or a field name that is not a token"),
    (b"POST /v1/reconfigure HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"
     b'14\r\n{"partition":"jobA"}\r\n0\r\n\r\n', "Transfer-Encoding in an HTTP/1.0 request"),
    (b"GET /v1/schedule?collective=allreduce&partition=jobA%00x&summary_only=true HTTP/1.1\r\nHost: x\r\n\r\n",
     "a NUL byte (%00) in the path or the query"),
    (b"GET /v1/state?with_fabric%00x=true HTTP/1.1\r\nHost: x\r\n\r\n", "a NUL byte (%00) in the path or the query"),
    (b"GET /v1/state%00.json HTTP/1.1\r\nHost: x\r\n\r\n", "a NUL byte (%00) in the path or the query"),
]
def refused(a, why):
    try:
        body = json.loads(a.partition(b"\r\n\r\n")[2])
    except ValueError:
        return False
    return a.startswith(b"HTTP/1.1 400 ") and a.count(b"HTTP/1.1 ") == 1 and \
        body == {"status": "STATUS_INVALID", "message": "bad request: " + why}
wrong = []
for raw, why in cases:
    a = exchange(raw)
    if not refused(a, why):
        wrong.append((raw[:70], a[:200]))
assert not wrong, "\n".join(map(repr, wrong))
# A chunked body alone is read as one, and the connection goes on.
a = exchange(b"POST /v1/report-failure HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
             b'c\r\n{"items":[]}\r\n0\r\n\r\n')
assert a.count(b"HTTP/1.1 ") == 2 and b"report_failure needs items" in a and b"HTTP/1.1 200 OK" in a, a[:600]
PY
req tenant-a 400 "$URL/v1/schedule?collective=allreduce&partition=jobA%00x&summary_only=true"
body_is 'j["message"]=="bad request: a NUL byte (%00) in the path or the query"'
# (%2500 is the three characters %00: a name like any other)
req tenant-a 403 "$URL/v1/schedule?collective=allreduce&partition=jobA%2500x&summary_only=true"
body_is 'j["message"]=="permission denied: partition jobA%00x belongs to another tenant"'

# 1,000 bare connections from four addresses (250 each, within an
# address's share: a quarter of --max-connections, 256): at most half of
# --max-connections (512) wait for their TLS handshake, a new one past that
# closes the oldest; a client is answered meanwhile (its connection makes
# room too), and every bare one is closed, the rest at the read timeout.
PYTHONPATH="$BUILD/python" $PY - "$P" "$C" <<'PY' >"$TMP/out" 2>&1 && ok || bad "1,000 bare connections" "$(cat "$TMP/out")"
import resource, socket, subprocess, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
port, c = int(sys.argv[1]), sys.argv[2]
def bare(src):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s
conns = [bare(f"127.0.0.{11 + i % 4}") for i in range(1000)]
def curl(*args):
    return subprocess.run(["curl", "-sS", "--cacert", f"{c}/ca.pem", "--cert", f"{c}/reader.pem",
                           "--key", f"{c}/reader.key", *args], capture_output=True, text=True).stdout
code = curl("-o", "/dev/null", "-w", "%{http_code}", f"https://127.0.0.1:{port}/v1/state")
assert code == "200", f"answered {code!r} beside 1,000 bare connections"
m = dict(l.rsplit(" ", 1) for l in curl(f"https://127.0.0.1:{port}/metrics").splitlines()
         if l.startswith("ofc_gateway_"))
assert int(m['ofc_gateway_connections{state="handshake"}']) <= 512, m
assert int(m["ofc_gateway_handshakes_evicted_total"]) >= 1, m
deadline = time.time() + 15
left = set(range(len(conns)))
while left and time.time() < deadline:
    for i in list(left):
        conns[i].settimeout(0.01)
        try:
            if conns[i].recv(1) == b"":
                left.discard(i)
        except socket.timeout:
            pass
        except OSError:
            left.discard(i)
assert not left, f"{len(left)} of 1000 still open"
PY
grep -q "closing the connection of 127.0.0.1[1-4]:[0-9]* after [0-9.]* s without a TLS handshake: 512 connections wait for theirs (at most half of --max-connections), and the oldest makes room for a new one" "$TMP/gw.log" &&
	ok || bad "an eviction is logged" "$(grep -i handshake "$TMP/gw.log" | tail -3)"
req reader 200 "$URL/v1/state"

# A flood: 1,100 bare connections from 127.0.0.1, each reopened as soon as
# the gateway closes it, while a client with a certificate asks five times
# from 127.0.0.2: each is answered (127.0.0.1 holds its share, 256, the
# rest are closed as accepted), and the log stays bounded: at most 10 lines
# of a kind in 10 s and a line for what was left out (8 kinds), where the
# gateway before wrote a line or more a connection (18,000 in 25 s).
n0=$(grep -c . "$TMP/gw.log")
PYTHONPATH="$BUILD/python" $PY - "$P" "$C" <<'PY' >"$TMP/flood.out" 2>&1 && ok || bad "a flood of bare connections from one address" "$(cat "$TMP/flood.out")"
import resource, selectors, socket, subprocess, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
port, c = int(sys.argv[1]), sys.argv[2]
sel = selectors.DefaultSelector()
opened = 0
def bare():
    global opened
    s = socket.socket()
    s.setblocking(False)
    s.bind(("127.0.0.1", 0))
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_READ)
    opened += 1
for _ in range(1100):
    bare()
t0 = time.time()
codes, asked = [], None
while len(codes) < 5:
    for key, _ in sel.select(0.05):
        try:
            d = key.fileobj.recv(4096)
        except OSError:
            d = b""
        if not d:
            sel.unregister(key.fileobj)
            key.fileobj.close()
            bare()
    if asked is None and time.time() > t0 + 1 + len(codes):
        asked = subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                                  "--max-time", "20", "--interface", "127.0.0.2",
                                  "--cacert", f"{c}/ca.pem", "--cert", f"{c}/reader.pem",
                                  "--key", f"{c}/reader.key", f"https://127.0.0.1:{port}/v1/state"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if asked is not None and asked.poll() is not None:
        codes.append(asked.stdout.read())
        asked = None
print(f"{opened} connections in {time.time() - t0:.1f} s; the client: {codes}")
assert codes == ["200"] * 5, codes
assert opened > 1100, opened
PY
n1=$(grep -c . "$TMP/gw.log")
secs=$(sed -n 's/.* in \([0-9]*\)\.[0-9] s;.*/\1/p' "$TMP/flood.out")
[ $((n1 - n0)) -le $((8 * 11 * (${secs:-0} / 10 + 2))) ] && ok ||
	bad "the flood's log: $((n1 - n0)) lines in ${secs} s" "$(tail -5 "$TMP/gw.log")"
grep -q "refused a connection from 127.0.0.1:[0-9]*: its address holds 256 connections (--max-connections-per-address)" "$TMP/gw.log" &&
	ok || bad "the refusals are logged" "$(tail -3 "$TMP/gw.log")"
req reader 200 "$URL/metrics"
grep -q '^ofc_gateway_connections_refused_total{reason="per-address"} [1-9]' "$TMP/out" &&
	grep -q '^ofc_gateway_log_lines_suppressed_total [1-9]' "$TMP/out" && ok ||
	bad "the refusals and the lines left out are counted" "$(grep ofc_gateway_ "$TMP/out")"

# A Watch reader that never reads: once the socket buffers are full nothing
# moves, and --idle-timeout (4 s) closes it; the daemons go on.
PYTHONPATH="$BUILD/python" $PY - "$P" "$C" "$SOCK" <<'PY' >"$TMP/out" 2>&1 && ok || bad "a Watch reader that never reads" "$(cat "$TMP/out")"
import socket, ssl, sys, time
from ofc_client import Client
port, c, sock = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=f"{c}/ca.pem")
ctx.load_cert_chain(f"{c}/admin.pem", f"{c}/admin.key")
raw = socket.socket()
raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
raw.connect(("127.0.0.1", port))
s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
s.sendall(b"GET /v1/watch HTTP/1.1\r\nHost: x\r\n\r\n")
ofcd = Client(sock)
t0 = time.time()
for _ in range(2000):
    ofcd.reconfigure(partition="jobB", dry_run=True)
time.sleep(max(0, 6 - (time.time() - t0)))
# By now the gateway has closed it: what it sent drains, then EOF.
n, end = 0, time.time() + 15
s.settimeout(2)
try:
    while time.time() < end:
        b = s.recv(1 << 20)
        if not b:
            print(f"closed: {n} bytes were left to read")
            sys.exit(0)
        n += len(b)
except (ssl.SSLError, ConnectionError):
    sys.exit(0)
except socket.timeout:
    pass
sys.exit("the gateway kept a watcher that never read")
PY
req reader 200 "$URL/v1/state"

# Streams have a budget of their own, apart from the connections that
# answer requests: a tenant opening 40 watches from one address holds 4
# (--max-streams-per-principal), the rest 429 with Retry-After; another
# principal from that address holds 4 more (8, --max-streams-per-address),
# a third none; and all the while an admin's request is answered. (Before,
# the watches took all 32 connections to ofcd and every request waited.)
PYTHONPATH="$BUILD/python" $PY - "$P" "$C" <<'PY' >"$TMP/out" 2>&1 && ok || bad "streams have a budget of their own" "$(cat "$TMP/out")"
import json, socket, ssl, sys, time
port, c = int(sys.argv[1]), sys.argv[2]
def ctx(who):
    x = ssl.create_default_context(cafile=f"{c}/ca.pem")
    x.load_cert_chain(f"{c}/{who}.pem", f"{c}/{who}.key")
    return x
def ask(who, path, keep):
    s = ctx(who).wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    s.settimeout(10)
    head = b""
    try:
        while b"\r\n\r\n" not in head:
            b = s.recv(4096)
            if not b:
                break
            head += b
        h, _, rest = head.partition(b"\r\n\r\n")
        n = [int(l.split(b":")[1]) for l in h.split(b"\r\n") if l.lower().startswith(b"content-length:")]
        while n and len(rest) < n[0]:
            rest += s.recv(65536)
        head = h + b"\r\n\r\n" + rest
    except socket.timeout:
        pass
    keep.append(s)
    return head
held, answers = [], {}
for who, n in (("tenant-a", 40), ("reader", 6), ("tenant-b", 2)):
    answers[who] = [ask(who, "/v1/watch", held) for _ in range(n)]
codes = {w: [a.split(b" ", 2)[1].decode() if a.startswith(b"HTTP/1.1 ") else "none" for a in v] for w, v in answers.items()}
want = {"tenant-a": ["200"] * 4 + ["429"] * 36, "reader": ["200"] * 4 + ["429"] * 2, "tenant-b": ["429"] * 2}
assert codes == want, codes
busy = answers["tenant-a"][4]
assert b"\r\nRetry-After: 15\r\n" in busy, busy[:400]
body = json.loads(busy.split(b"\r\n\r\n", 1)[1])
assert body == {"status": "STATUS_BUSY", "message": "4 streams (watches and streamed schedules) of cn:tenant-a are open, the most one principal may hold (--max-streams-per-principal)"}, body
assert b"from address 127.0.0.1 are open, the most one address may hold (--max-streams-per-address)" in answers["tenant-b"][0], answers["tenant-b"][0][:400]
t0 = time.time()
a = ask("admin", "/v1/state", held)
assert a.startswith(b"HTTP/1.1 200 "), a[:200]
m = ask("reader", "/metrics", held)
# (the body follows the head: read on to the last family)
s = held[-1]
while b"ofc_gateway_streams_refused_total{limit=\"address\"}" not in m:
    m += s.recv(65536)
for line in (b"ofc_gateway_streams 8\n", b'ofc_gateway_streams_refused_total{limit="principal"} 38\n',
             b'ofc_gateway_streams_refused_total{limit="address"} 2\n'):
    assert line in m, (line, [l for l in m.split(b"\n") if b"streams" in l])
print("admin answered in %.2f s beside 8 watches and 38 refused" % (time.time() - t0))
for s in held:
    s.close()
PY
grep -q "admin answered" "$TMP/out" && ok || bad "the admin's request beside the watches"

# ---- SIGHUP with a CRL that would switch revocation off: refused, the old trust stays --
# logged_more TEXT N: more than N lines of the gateway's log hold TEXT (5 s at most).
count() { grep -cF -- "$1" "$TMP/gw.log"; }
logged_more() {
	deadline 5
	until [ "$(count "$1")" -gt "$2" ] || past $_end; do sleep 0.05; done
	[ "$(count "$1")" -gt "$2" ] && ok || bad "the log should say once more: $1" "$(tail -3 "$TMP/gw.log")"
}
cp "$C/crl.pem" "$C/crl.good"
for f in "stale-crl|stale: its nextUpdate, 2025-02-01T00:00:00Z, has passed" \
	"foreign-crl|not signed by the configured CA (its issuer is CN=other-ca)" \
	"forged-crl|its signature does not verify" "garbage-crl|no CRL in it"; do
	cp "$C/${f%%|*}.pem" "$C/crl.pem"
	n=$(count "reload refused, the old CA, CRL and policy stay: $C/crl.pem: ${f#*|}")
	kill -HUP "$GWPID"
	logged_more "reload refused, the old CA, CRL and policy stay: $C/crl.pem: ${f#*|}" "$n"
	# The revoked admin is still refused, by the old CRL; the admin served.
	n=$(count "certificate CN=revoked: revoked (on the CA's CRL)")
	if curl -sS -o /dev/null --cacert "$C/ca.pem" --cert "$C/revoked.pem" --key "$C/revoked.key" \
		"$URL/v1/state" 2>/dev/null; then bad "${f%%|*} on SIGHUP: the revoked admin was served"; else ok; fi
	logged_more "certificate CN=revoked: revoked (on the CA's CRL)" "$n"
	req admin 200 "$URL/v1/state"
done
if grep -q "reloaded the CA" "$TMP/gw.log"; then bad "a bad CRL was reloaded" "$(grep "reloaded the CA" "$TMP/gw.log")"; else ok; fi
# The refusals are counted, and the CRL in effect is still the good one.
cp "$C/crl.good" "$C/crl.pem"
next=$(date -d "$(openssl crl -in "$C/crl.pem" -noout -nextupdate | cut -d= -f2)" +%s)
req reader 200 "$URL/metrics"
grep -qx "ofc_gateway_trust_reload_failures_total 4" "$TMP/out" &&
	grep -qx "ofc_gateway_crl_next_update_timestamp_seconds $next" "$TMP/out" && ok ||
	bad "the metrics of the refused reloads and of the CRL's nextUpdate ($next)" "$(grep -e reload -e crl "$TMP/out")"

# ---- a CRL that goes stale while serving: every certificate refused ---------------
# (it no longer says who is revoked), said once a minute, until a fresh one
# is loaded (the next section). Its nextUpdate is 8 s away: the reload must
# come before that (a stale one is refused).
openssl ca -batch -config "$C/ca.cnf" -gencrl -crlsec 8 -out "$C/crl.pem" >/dev/null 2>&1
next=$(date -d "$(openssl crl -in "$C/crl.pem" -noout -nextupdate | cut -d= -f2)" +%s)
kill -HUP "$GWPID"
logged_more "reloaded the CA, the CRL and the policy" 0
_end=$((next + 5))
while [ "$(date +%s)" -le "$next" ] && [ "$(date +%s)" -le $_end ]; do sleep 0.2; done
stale_line="certificate CN=admin: the CRL $C/crl.pem is stale (its nextUpdate, $(date -u -d "@$next" +%Y-%m-%dT%H:%M:%SZ), has passed): every client certificate is refused until a fresh CRL is loaded (SIGHUP)"
refused admin-stale-crl "$stale_line" --cert "$C/admin.pem" --key "$C/admin.key"
refused reader-stale-crl "refused TLS client" --cert "$C/reader.pem" --key "$C/reader.key"
[ "$(count "is stale (its nextUpdate")" = 1 ] && ok || bad "a stale CRL is said once a minute" "$(grep "is stale" "$TMP/gw.log")"

# ---- SIGHUP: the CRL and the policy read again ----------------------------------
openssl ca -batch -config "$C/ca.cnf" -revoke "$C/tenant-b.pem" >/dev/null 2>&1
openssl ca -batch -config "$C/ca.cnf" -gencrl -out "$C/crl.pem" >/dev/null 2>&1
printf 'cn:admin admin\ncn:reader read-only\ncn:tenant-a tenant jobA,jobB\n' >"$TMP/policy"
kill -HUP "$GWPID"
deadline 10
until grep -q "reloaded the CA, the CRL and the policy (3 entries)" "$TMP/gw.log" || past $_end; do sleep 0.05; done
grep -q "reloaded the CA, the CRL and the policy (3 entries)" "$TMP/gw.log" && ok || bad "SIGHUP reload logged" "$(tail -2 "$TMP/gw.log")"
refused revoked-after-reload "certificate CN=tenant-b: revoked (on the CA's CRL)" --cert "$C/tenant-b.pem" --key "$C/tenant-b.key"
req tenant-a 200 "$URL/v1/schedule?collective=allreduce&partition=jobB&summary_only=true"
printf 'cn:x nobody\n' >"$TMP/policy"
kill -HUP "$GWPID"
deadline 10
until grep -q "reload refused, the old CA, CRL and policy stay: $TMP/policy:1: unknown role 'nobody'" "$TMP/gw.log" || past $_end; do sleep 0.05; done
grep -q "reload refused, the old CA, CRL and policy stay: $TMP/policy:1: unknown role 'nobody'" "$TMP/gw.log" && ok || bad "a bad policy is refused on reload" "$(tail -2 "$TMP/gw.log")"
req reader 200 "$URL/v1/state"

# ---- a REST mutation sent again with the same Idempotency-Key -----------------------
# (its request_key): the recorded outcome, whatever it was, not a second
# run; the key is the tenant's own
idem() {
	curl -sS -o "$TMP/$1.json" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/tenant-a.pem" \
		--key "$C/tenant-a.key" -X POST "$URL/v1/reconfigure" -H "Idempotency-Key: $2" \
		-d '{"partition":"jobA"}' 2>"$TMP/err"
}
c1=$(idem idem1 gw-key-1)
c2=$(idem idem2 gw-key-1)
python3 - "$TMP/idem1.json" "$TMP/idem2.json" <<'PY' && [ "$c1" = "$c2" ] && ok || bad "a REST resend with the same Idempotency-Key: $c1 then $c2" "$(cat "$TMP/idem1.json" "$TMP/idem2.json")"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert "recorded outcome" not in a["message"], a
assert b["message"].startswith(a["message"]) and "(the recorded outcome of request_key 'gw-key-1', ticket" in b["message"], b
assert a.get("transaction", {}).get("id") == b.get("transaction", {}).get("id"), (a, b)
PY
[ "$(idem idem3 'gw key')" = 400 ] && grep -q '"request_key: 1 to 128 characters' "$TMP/idem3.json" && ok ||
	bad "a bad Idempotency-Key" "$(cat "$TMP/idem3.json")"

# ---- ofcd's side of the seam ------------------------------------------------------
# A principal on the main socket is refused, and so is the gateway socket
# to any uid but --gateway-uid.
PYTHONPATH="$BUILD/python" $PY - "$SOCK" <<'PY' >"$TMP/out" 2>&1 && ok || bad "a principal on the main socket" "$(cat "$TMP/out")"
import sys
from ofc_client import Client, OfcError, control_pb2
r = control_pb2.Request(get_state=control_pb2.GetState())
r.principal.identity = "cn:admin"
r.principal.role = control_pb2.Principal.ROLE_ADMIN
try:
    Client(sys.argv[1]).call(r)
    sys.exit("accepted")
except OfcError as e:
    assert e.status == "STATUS_DENIED", e.status
    assert str(e) == "permission denied: a principal is taken only from ofc-gateway on the gateway socket", str(e)
PY
if [ "$(id -u)" -eq 0 ]; then
	chmod 666 "$TMP/gw.sock"
	PYTHONPATH="$BUILD/python" setpriv --reuid=65534 --regid=65534 --clear-groups $PY - "$TMP/gw.sock" <<'PY' >"$TMP/out" 2>&1 && ok || bad "the gateway socket refuses another uid" "$(cat "$TMP/out")"
import socket, struct, sys
from ofc_client import control_pb2
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
n = struct.unpack(">I", s.recv(4))[0]
r = control_pb2.Response.FromString(s.recv(n))
assert r.message == "the gateway socket takes uid 0 (--gateway-uid) alone, not uid 65534", r.message
PY
fi

finish
