#!/bin/sh
# ofcd's mutation queue is shared fairly (docs/control.md, "Limits"): a
# tenant of the gateway may have --mutation-share mutations queued at once
# (8 by default), past it its next is refused BUSY, the gateway's 429 with
# Retry-After, naming only its own count, and counted
# (ofc_mutations_refused_total); the tenants together hold 48 of the
# queue's 64. A tenant's 48 concurrent reconfigures of
# its own partition once all sat ahead of an admin's mutation; now the
# admin's is answered behind the tenant's share at most. An admin is never
# refused by it, nor the principal named by --mutation-share-exempt (the
# Slurm hooks' certificate) below the tenants' share together.
SUITE=gateway_mutation_share
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
C="$TMP/pki"
pki_ca "$C"
for n in admin tenant-a slurmctld; do pki_cert $n client; done
pki_cert server server
printf 'cn:admin admin\ncn:tenant-a tenant a-*\ncn:slurmctld tenant slurm-job-*\n' >"$TMP/policy"
make_torus_config "$TMP/t.yaml" torus:8x8 2s 1
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 5
SOCK="$TMP/ofcd.sock"
$BUILD/ofcd --foreground --config "$TMP/t.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--credentials-dir "$TMP" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 \
	--gateway-socket "$TMP/gw.sock" --gateway-uid "$(id -u)" --log-file "$TMP/ofcd.log" --log-level info \
	--mutation-share-exempt cn:slurmctld 2>"$TMP/ofcd.err" &
DAEMONS="$DAEMONS $!"
OFCD_PID=$!
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done
expect_exit 0 $OFC --socket "$SOCK" reconfigure --topology torus:8x8 --timeout 120
# (the gateway's connections many enough that a tenant's 48 all reach ofcd)
$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" --ca "$C/ca.pem" \
	--policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" --port-file "$TMP/gw.port" --upstream 256 \
	--request-timeout 120s 2>"$TMP/gw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
URL="https://127.0.0.1:$(cat "$TMP/gw.port")"
as() { # WHO OUT [curl args...] PATH: the code and when it ended
	_w=$1 _o=$2
	shift 2
	curl -sS -o "$_o" -D "$_o.h" -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/$_w.pem" \
		--key "$C/$_w.key" "$@" 2>>"$TMP/curl.err"
	echo " $(date +%s.%N)"
}
# WHO PARTITION K TOPOLOGY FIRST-HOST: a reconfigure, its code and end into WHO.K
mutate() {
	h=$5
	as "$1" "$TMP/$1$3.json" -X POST \
		-d "{\"partition\":\"$2\",\"topology\":\"$4\",\"hosts\":[\"h$h\",\"h$((h + 1))\",\"h$((h + 2))\",\"h$((h + 3))\"]}" \
		"$URL/v1/reconfigure" >"$TMP/$1.$3"
}
# ofcd stopped while the tenant sends 48 reconfigures of its partition a-0
# (two topologies in turn, so each is a change) and then the admin one of
# its own: ofcd reads them all as it resumes
kill -STOP "$OFCD_PID"
T=""
k=0
while [ $k -lt 48 ]; do
	topo=ring:4
	[ $((k % 2)) = 1 ] && topo=torus:2x2
	mutate tenant-a a-0 $k $topo 0 &
	T="$T $!"
	k=$((k + 1))
done
sleep 2
mutate admin x-0 0 ring:4 60 &
A=$!
sleep 1
kill -CONT "$OFCD_PID"
wait $T $A
refused=$(grep -l '^429 ' "$TMP"/tenant-a.* | wc -l)
okd=$(grep -l '^200 ' "$TMP"/tenant-a.* | wc -l)
[ "$refused" -ge 1 ] && [ $((refused + okd)) = 48 ] && ok ||
	bad "a tenant's 48 queued reconfigures: none refused past its share" \
		"$refused refused, $okd answered 200: $(cat "$TMP"/tenant-a.* | cut -d' ' -f1 | sort | uniq -c)"
f=$(grep -l '^429 ' "$TMP"/tenant-a.* | head -1)
j=${f%/*}/tenant-a${f##*.}.json
grep -q 'cn:tenant-a has 8 mutations waiting already, the most one tenant may have queued at once' "$j" &&
	! grep -q 'cn:admin\|cn:slurmctld' "$j" && grep -qi '^retry-after:' "$j.h" && ok ||
	bad "the 429 names the tenant's own count, with Retry-After, and nobody else" "$(cat "$j" "$j.h")"
grep -q '^200 ' "$TMP/admin.0" && ok || bad "the admin's mutation: not answered" "$(cat "$TMP/admin.0" "$TMP/admin0.json")"
# (ordering, not timing: the tenant's answers before the admin's are at
# most its share and the one running; before, all 48 sat ahead of it)
python3 - "$TMP" <<'PY' && ok || bad "the admin's mutation waited behind more than the tenant's share" "$(cat "$TMP"/tenant-a.* "$TMP/admin.0")"
import glob, sys
end = float(open(sys.argv[1] + "/admin.0").read().split()[1])
ahead = [f for f in glob.glob(sys.argv[1] + "/tenant-a.[0-9]*")
         if open(f).read().startswith("200 ") and float(open(f).read().split()[1]) < end]
print("tenant answers before the admin's: %d" % len(ahead))
sys.exit(0 if len(ahead) <= 9 else 1)
PY
m=$(curl -sS --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" "$URL/metrics" |
	awk '$1 == "ofc_mutations_refused_total{share=\"principal\"}" {print $2}')
[ "${m:-0}" = "$refused" ] && ok || bad "the share's refusals are not counted" "metric $m, refused $refused"

# The Slurm hooks' principal, exempt from a tenant's share: of its 56
# prologs at once more than 8 are queued, none refused by its own share,
# those past the tenants' share together (48 of the queue's 64) refused so;
# an admin's mutation behind them is still queued and answered
kill -STOP "$OFCD_PID"
T=""
k=0
while [ $k -lt 56 ]; do
	topo=ring:4
	[ $((k % 2)) = 1 ] && topo=torus:2x2
	mutate slurmctld slurm-job-0 $k $topo 4 &
	T="$T $!"
	k=$((k + 1))
done
sleep 2
mutate admin x-1 1 ring:4 56 &
A=$!
sleep 1
kill -CONT "$OFCD_PID"
wait $T $A
okd=$(grep -l '^200 ' "$TMP"/slurmctld.* | wc -l)
public=$(grep -l "the tenants' share of the queue is full (cn:slurmctld has " "$TMP"/slurmctld[0-9]*.json | wc -l)
own=$(grep -l "the most one tenant may have" "$TMP"/slurmctld[0-9]*.json | wc -l)
[ "$okd" -gt 9 ] && [ "$own" = 0 ] && [ "$public" -ge 1 ] && [ $((okd + public)) = 56 ] && ok ||
	bad "the exempt principal: held to the tenants' share together, not a tenant's" \
		"$okd answered, $own refused by its own share, $public by the tenants': $(cat "$TMP"/slurmctld.* | cut -d' ' -f1 | sort | uniq -c)"
grep -q '^200 ' "$TMP/admin.1" && ok || bad "the admin's mutation behind the tenants' share: not answered" "$(cat "$TMP/admin.1" "$TMP/admin1.json")"
m=$(curl -sS --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" "$URL/metrics" |
	awk '$1 == "ofc_mutations_refused_total{share=\"public\"}" {print $2}')
[ "${m:-0}" = "$public" ] && ok || bad "the tenants' share's refusals are not counted" "metric $m, refused $public"
$BUILD/ofcd --mutation-share 0 --config "$TMP/t.yaml" --socket "$TMP/x.sock" --check >"$TMP/out" 2>&1
grep -q "ofcd: --mutation-share '0': expected 1..64" "$TMP/out" && ok || bad "--mutation-share 0 accepted" "$(cat "$TMP/out")"
finish
