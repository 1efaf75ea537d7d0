#!/bin/sh
# ofc-gateway's answers to a state too big for its cache (over 256 KiB of
# protobuf: controller/gateway/share.c): 4,096 hosts on four ocs-emus, the
# state about 560 KB. Readers at once all get the same state, written as
# JSON once for them; a state that changed is written anew, never the old
# one served; a principal of another role gets its own; If-None-Match
# answers 304; gzip is the same JSON. Fair shares of the turns: with a
# read-only certificate's reads holding the turn past the wait, a third of
# its reads is refused at once (its own limit, a metric counts it), and an
# admin's read and a tenant's small one are answered, not refused.
SUITE=gateway_share
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

GW=${GW:-$BUILD/ofc-gateway}
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
HOSTS=4096

C="$TMP/pki"
pki_ca "$C"
for n in admin reader tenant; do pki_cert $n client; done
pki_cert server server
printf 'cn:admin admin\ncn:reader read-only\ncn:tenant tenant jobT\n' >"$TMP/policy"

mkdir -p "$TMP/cred"
chmod 700 "$TMP/cred"
cp configs/credentials/ocs0.cred "$TMP/cred/ocs.cred"
chmod 600 "$TMP/cred/ocs.cred"
for s in 0 1 2 3; do start_emu ocs-emu e$s --ports $HOSTS --credentials configs/credentials/ocs0.cred; done
{
	printf 'version: 1\nname: share\nhosts:\n  count: %s\n  prefix: h\n  ports: 4\n  port_rate: 100Gbps\nswitches:\n' $HOSTS
	for s in 0 1 2 3; do
		eval "p=\$e${s}_port"
		printf '  - name: ocs%s\n    type: ocs\n    ports: %s\n    driver:\n      type: tl1\n      address: 127.0.0.1:%s\n      credentials: cred/ocs.cred\n' $s $HOSTS "$p"
	done
	printf 'wiring:\n  pattern: per-port\n  switches: [ocs0, ocs1, ocs2, ocs3]\ntopology: torus:64x64\n'
} >"$TMP/fab.yaml"
SOCK="$TMP/ofcd.sock"
$BUILD/ofcd --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP/cred" --probe-interval 0 --gateway-socket "$TMP/gw.sock" \
	--gateway-uid "$(id -u)" 2>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 20
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
$GW --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" --ca "$C/ca.pem" \
	--policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" --port-file "$TMP/gw.port" 2>"$TMP/gw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
read -r P <"$TMP/gw.port"
URL="https://127.0.0.1:$P"
$OFC --socket "$SOCK" reconfigure --topology torus:64x64 --timeout 120 >"$TMP/first" 2>&1 && ok ||
	bad "the first reconfigure" "$(tail -3 "$TMP/first")"

# get WHO OUT ARGS...: the state as WHO into OUT; prints the HTTP status
get() {
	who=$1
	out=$2
	shift 2
	curl -sS -o "$out" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/$who.pem" \
		--key "$C/$who.key" "$@" "$URL/v1/state" 2>>"$TMP/curl.err"
}
# metric NAME: the gateway's counter
metric() {
	curl -sS --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" "$URL/metrics" |
		awk -v n="$1" '$1 == n {print $2}'
}
# state_is FILE GENERATION: a whole state's JSON of that generation
state_is() {
	python3 - "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["state"]
assert j["status"] == "STATUS_OK" and int(s["config_generation"]) == int(sys.argv[2]), (j["status"], s.get("config_generation"))
assert len(s["devices"]) == 4 and all(len(d["circuits"]) == 4096 for d in s["devices"]), [len(d["circuits"]) for d in s["devices"]]
PY
}

[ "$(get admin "$TMP/s1.json")" = 200 ] && ok || bad "the first read" "$(tail -2 "$TMP/curl.err")"
gen=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"]["config_generation"])' "$TMP/s1.json")
state_is "$TMP/s1.json" "$gen" && ok || bad "the first read is not the whole state"
[ "$(metric ofc_gateway_state_json_shared_written_total)" = 1 ] && ok ||
	bad "a big state is written through share.c" "$(metric ofc_gateway_state_json_shared_written_total)"
reused0=$(metric ofc_gateway_state_json_reused_total)

# Ten readers at once, half with gzip: the same state for each, written once.
pids=""
for i in 0 1 2 3 4 5 6 7 8 9; do
	if [ $((i % 2)) = 0 ]; then z="-H Accept-Encoding:gzip -D $TMP/h$i"; else z="-D $TMP/h$i"; fi
	(get admin "$TMP/r$i" $z >"$TMP/code$i") &
	pids="$pids $!"
done
wait $pids
for i in 0 1 2 3 4 5 6 7 8 9; do
	[ "$(cat "$TMP/code$i")" = 200 ] || bad "reader $i: HTTP $(cat "$TMP/code$i")" "$(tail -2 "$TMP/curl.err")"
	if [ $((i % 2)) = 0 ]; then
		grep -qi '^content-encoding: gzip' "$TMP/h$i" || bad "reader $i asked for gzip" "$(cat "$TMP/h$i")"
		gunzip -c <"$TMP/r$i" >"$TMP/r$i.json"
	else
		mv "$TMP/r$i" "$TMP/r$i.json"
	fi
	cmp -s "$TMP/r$i.json" "$TMP/s1.json" || bad "reader $i: not the state the first read got"
done
ok
[ "$(metric ofc_gateway_state_json_shared_written_total)" = 1 ] && ok ||
	bad "ten readers of one state: written once" "$(metric ofc_gateway_state_json_shared_written_total)"
[ $(($(metric ofc_gateway_state_json_reused_total) - reused0)) -ge 10 ] && ok ||
	bad "ten readers of one state: each shared it" "$(metric ofc_gateway_state_json_reused_total) after $reused0"

# Its ETag: 304, no body; a stale ETag: the state.
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *//p' "$TMP/h0" | tr -d '\r')
[ -n "$etag" ] && ok || bad "no ETag on a big state" "$(cat "$TMP/h0")"
rm -f "$TMP/nm"
[ "$(get admin "$TMP/nm" -H "If-None-Match: $etag")" = 304 ] && [ ! -s "$TMP/nm" ] && ok ||
	bad "If-None-Match of the big state's ETag: not 304"

# A read-only principal: its own answer (ofcd's differs by role), written
# for it, never the admin's.
[ "$(get reader "$TMP/ro.json")" = 200 ] && state_is "$TMP/ro.json" "$gen" && ok || bad "the reader's read"
[ "$(metric ofc_gateway_state_json_shared_written_total)" = 2 ] && ok ||
	bad "another principal's read was served the admin's" "$(metric ofc_gateway_state_json_shared_written_total)"

# The state changes: the next read is the new one, not the one kept.
$OFC --socket "$SOCK" reconfigure --topology torus:32x128 --timeout 120 >"$TMP/second" 2>&1 && ok ||
	bad "the second reconfigure" "$(tail -3 "$TMP/second")"
[ "$(get admin "$TMP/s2.json")" = 200 ] && state_is "$TMP/s2.json" $((gen + 1)) && ok ||
	bad "after a commit: not the new state" "$(head -c 300 "$TMP/s2.json")"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["state"]["topology"]["spec"] == "torus:32x128"' "$TMP/s2.json" &&
	ok || bad "after a commit: the old topology"
[ "$(get admin "$TMP/nm" -H "If-None-Match: $etag")" = 200 ] && ok || bad "the old ETag answered 304 after a commit"

# A read waits its turn within half the request timeout, then 429 saying
# why: a second gateway (2 s), ofcd stopped while one read holds the turn.
$GW --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" --ca "$C/ca.pem" \
	--policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" --port-file "$TMP/gw2.port" \
	--request-timeout 2s 2>"$TMP/gw2.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw2.port" ] && ! past $_end; do sleep 0.02; done
read -r P2 <"$TMP/gw2.port"
URL2="https://127.0.0.1:$P2"
get2() { curl -sS -o "$1" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" "$URL2/v1/state" 2>>"$TMP/curl.err"; }
[ "$(get2 "$TMP/g2.json")" = 200 ] && ok || bad "the second gateway's read"
OFCD_PID=$(echo $DAEMONS | cut -d' ' -f1)
kill -STOP "$OFCD_PID"
get2 "$TMP/held.json" >"$TMP/held.code" &
holder=$!
sleep 0.5
code=$(get2 "$TMP/late.json")
kill -CONT "$OFCD_PID"
wait $holder
[ "$code" = 429 ] && grep -q 'its turn did not come within 1 s' "$TMP/late.json" && ok ||
	bad "a read past its turn's wait: not 429 with why" "$code $(head -c 300 "$TMP/late.json")"
[ "$(get2 "$TMP/g3.json")" = 200 ] && state_is "$TMP/g3.json" $((gen + 1)) && ok || bad "a read once ofcd answers again"

# ---- fair shares of the turns ---------------------------------------------------
# q2 WHO OUT QUERY: WHO's read of /v1/state?QUERY from the second gateway
q2() { curl -sS -o "$2" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/$1.pem" --key "$C/$1.key" "$URL2/v1/state?$3" 2>>"$TMP/curl.err"; }
# the tenant's state is small; then the reader's distinct reads push every
# kept key out (before, the tenant's read was then taken for a big one)
[ "$(q2 tenant "$TMP/t0.json" "")" = 200 ] && [ "$(wc -c <"$TMP/t0.json")" -lt 100000 ] && ok ||
	bad "the tenant's first read" "$(head -c 300 "$TMP/t0.json")"
for qs in with_fabric=false with_edges=false fabric_brief=false 'with_fabric=false&with_edges=false' with_edges=true; do
	[ "$(q2 reader "$TMP/rd.json" "$qs")" = 200 ] || bad "the reader's read of $qs"
done
kill -STOP "$OFCD_PID"
(q2 reader "$TMP/rh1.json" with_fabric=false >"$TMP/rh1.code") &
h1=$!
sleep 0.3
(q2 reader "$TMP/rh2.json" with_edges=false >"$TMP/rh2.code") &
h2=$!
sleep 0.3
# a third of the reader's: refused at once, by its own limit, naming only it
code=$(q2 reader "$TMP/rh3.json" fabric_brief=false)
[ "$code" = 429 ] && grep -q 'reader has reads of 2 other big states waiting or under way, the most one principal may have' "$TMP/rh3.json" &&
	! grep -q 'bytes' "$TMP/rh3.json" && ok ||
	bad "the reader's third read at once: not 429 for its own share" "$code $(head -c 300 "$TMP/rh3.json")"
# an admin's read and the tenant's, while the reader's holds the turn past
# the wait (1 s): answered once ofcd is back, not refused
(q2 admin "$TMP/ah.json" "" >"$TMP/ah.code") &
ah=$!
(q2 tenant "$TMP/th.json" "" >"$TMP/th.code") &
th=$!
sleep 1.6
kill -CONT "$OFCD_PID"
wait $h1 $h2 $ah $th
[ "$(cat "$TMP/ah.code")" = 200 ] && state_is "$TMP/ah.json" $((gen + 1)) && ok ||
	bad "an admin's read behind the reader's: not answered" "$(cat "$TMP/ah.code") $(head -c 300 "$TMP/ah.json")"
[ "$(cat "$TMP/th.code")" = 200 ] && cmp -s "$TMP/th.json" "$TMP/t0.json" && ok ||
	bad "the tenant's small read behind the reader's: not answered" "$(cat "$TMP/th.code") $(head -c 300 "$TMP/th.json")"
m=$(curl -sS --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" "$URL2/metrics" |
	awk '$1 == "ofc_gateway_state_reads_refused_total{limit=\"principal\"}" {print $2}')
[ "${m:-0}" -ge 1 ] && ok || bad "no refusal counted by principal" "$m"
finish
