#!/bin/sh
# ofc-gateway's connections to ofcd are shared fairly (docs/control.md,
# "Limits"): a principal but an admin holds a quarter of them at most and
# such principals three quarters together. A tenant's reconfigures queued
# at ofcd behind a long change (each holds its connection until answered)
# once held every connection, and an admin's read waited for one of them
# to be answered; now it is answered first, and the tenant's requests past its share wait for it
# (half the request timeout at most), then 429 naming only its own share, counted.
SUITE=gateway_upstream
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
C="$TMP/pki"
pki_ca "$C"
for n in admin tenant-a; do pki_cert $n client; done
pki_cert server server
printf 'cn:admin admin\ncn:tenant-a tenant a-*\n' >"$TMP/policy"
make_torus_config "$TMP/t.yaml" torus:8x8 2s 1
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 30
SOCK="$TMP/ofcd.sock"
$BUILD/ofcd --foreground --config "$TMP/t.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--gateway-socket "$TMP/gw.sock" --gateway-uid "$(id -u)" --log-file "$TMP/ofcd.log" --log-level info \
	2>"$TMP/ofcd.err" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_exit 0 $OFC --socket "$SOCK" reconfigure --topology torus:8x8 --timeout 120
$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" --ca "$C/ca.pem" \
	--policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" --port-file "$TMP/gw.port" --upstream 8 \
	--request-timeout 6s 2>"$TMP/gw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
URL="https://127.0.0.1:$(cat "$TMP/gw.port")"
as() { # WHO OUT [curl args...] PATH
	_w=$1 _o=$2
	shift 2
	curl -sS -o "$_o" -w '%{http_code} %{time_total}' --cacert "$C/ca.pem" --cert "$C/$_w.pem" --key "$C/$_w.key" "$@" 2>>"$TMP/curl.err"
}
OFCD_PID=$(echo $DAEMONS | cut -d' ' -f1)
# tenant K: the tenant's reconfigure of a-K (its own partition), its code
# and when it ended into t.K; admin: the admin's read, into a.done
tenant() {
	h=$((4 * $1))
	code=$(as tenant-a "$TMP/t$1.json" -X POST -d "{\"partition\":\"a-$1\",\"topology\":\"ring:4\",\"hosts\":[\"h$h\",\"h$((h + 1))\",\"h$((h + 2))\",\"h$((h + 3))\"]}" \
		"$URL/v1/reconfigure")
	echo "$code $(date +%s.%N)" >"$TMP/t.$1"
}
# ofcd stopped past the request timeout (6 s): the tenant's eight requests,
# two of them at ofcd (its share of 8 connections) until their timeout, the
# others waiting for it half that (so refused as long as they come within
# 3 s of the first two), then 429 naming only its own share
kill -STOP "$OFCD_PID"
T=""
for k in 0 1 2 3 4 5 6 7; do
	tenant $k &
	T="$T $!"
done
wait $T
kill -CONT "$OFCD_PID"
busy=$(grep -l "cn:tenant-a has 2 requests at ofcd, its share of the gateway's 8 connections to ofcd" "$TMP"/t?.json | wc -l)
[ "$busy" -ge 1 ] && ! grep -l "cn:admin" "$TMP"/t?.json >/dev/null && ok ||
	bad "the tenant's requests past its share: not 429 with its share" "$(cat "$TMP"/t.?; head -c 300 "$TMP/t7.json")"
m=$(curl -sS --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" "$URL/metrics" |
	awk '$1 == "ofc_gateway_upstream_share_refused_total" {print $2}')
[ "${m:-0}" -ge 1 ] && ok || bad "the share's refusals are not counted" "$m"
sleep 1
# ofcd stopped a moment: the tenant's eight requests again (new
# partitions), then an admin's read; the read goes to ofcd at once and is
# answered as ofcd resumes, before any of the tenant's (each a
# transaction); before, it waited for a connection the tenant's held
kill -STOP "$OFCD_PID"
T=""
for k in 8 9 10 11 12 13 14 15; do
	tenant $k &
	T="$T $!"
done
sleep 0.5
(code=$(as admin "$TMP/a.json" "$URL/v1/state") && echo "$code $(date +%s.%N)" >"$TMP/a.done") &
A=$!
sleep 1
kill -CONT "$OFCD_PID"
wait $T $A
python3 - "$TMP" <<'PY' && ok || bad "an admin's read while a tenant's requests wait at ofcd: not answered before them" "$(cat "$TMP/a.done" "$TMP"/t.*)"
import glob, sys
code, took, end = open(sys.argv[1] + "/a.done").read().split()
ends = [float(open(f).read().split()[2]) for f in glob.glob(sys.argv[1] + "/t.[0-9]*") if int(f.rsplit(".", 1)[1]) >= 8]
print("admin's read ended %.3f s before the tenant's first" % (min(ends) - float(end)))
# (ahead by a part of a transaction at least: 16 moves at 30 ms; what
# the old pool gave was the tenant's first answer, then the read, 1 ms apart)
sys.exit(0 if code == "200" and float(end) < min(ends) - 0.2 else 1)
PY
finish
