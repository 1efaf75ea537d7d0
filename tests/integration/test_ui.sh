#!/bin/sh
# The operator's page (ofc-gateway --ui-dir, docs/ofcd.md "The operator's
# page"): its route checked with curl (the files, their types and headers,
# the principal it is shown to, names that would leave its directory:
# "..", encoded or not, absolute, a symbolic link, a file too large), then
# the page itself driven in Debian's chromium by Playwright
# (tests/ui/ui_test.mjs) as admin, tenant and read-only, against a real
# ofcd and ocs-emu: what each sees, a failure reported and marked within
# 2 s, a partition's circuits coloured once it is set up, no console
# errors; the wiring a host's agent reports (ReportLinks with h1's
# certificate) shown to admin and reader, never to the tenant. Screenshots
# go to $BUILD/ui-shots/.
SUITE=ui
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/pki.sh"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "ui: skipped: needs chromium, node and npm (scripts/install-deps.sh test)"
	exit 0
fi
# playwright-core as tests/ui/package-lock.json pins it (from npm's cache
# when it holds it).
if [ ! -d tests/ui/node_modules/playwright-core ] &&
	! npm ci --prefix tests/ui --prefer-offline --no-audit --no-fund >"$TMP/npm.log" 2>&1; then
	echo "ui: skipped: npm ci in tests/ui failed: $(tail -1 "$TMP/npm.log")"
	exit 0
fi

OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP"
GW=${GW:-$BUILD/ofc-gateway}
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
chmod 755 "$TMP"

# ---- certificates (pki.sh, as test_gateway.sh makes them) and the policy -----
C="$TMP/pki"
pki_ca "$C"
for n in admin reader tenant-a stranger host-h1; do pki_cert $n client; done
pki_cert server server
[ -s "$C/server.pem" ] && [ -s "$C/stranger.pem" ] && ok || bad "the openssl CLI made the certificates"
# a CRL whose nextUpdate is 12 h away: the page warns of it (ui_test.mjs)
CRL_NEXT=$(($(date +%s) + 12 * 3600))
openssl ca -batch -config "$C/ca.cnf" -gencrl -crlhours 12 -out "$C/crl.pem" >/dev/null 2>&1 &&
	[ -s "$C/crl.pem" ] && ok || bad "openssl ca -gencrl -crlhours 12"
# What docs/ofcd.md has an operator import into a browser: a PKCS#12 of the
# certificate, its key and the CA, made with openssl; imported into an NSS
# database (Chromium's store on Linux) with NSS's tools when they are here;
# the driver below loads the page with it as the tenant.
(
	cd "$C" &&
		openssl pkcs12 -export -in tenant-a.pem -inkey tenant-a.key -certfile ca.pem -name "ofc tenant-a" -passout pass:PASSWORD -out tenant-a.p12
) && [ -s "$C/tenant-a.p12" ] && ok || bad "openssl pkcs12 -export"
if command -v pk12util >/dev/null && command -v certutil >/dev/null; then
	HOME=$TMP/home
	mkdir -p "$HOME/.pki/nssdb"
	certutil -N -d "sql:$HOME/.pki/nssdb" --empty-password
	(
		cd "$C" && pk12util -i tenant-a.p12 -d "sql:$HOME/.pki/nssdb" -W PASSWORD >/dev/null &&
			certutil -A -d "sql:$HOME/.pki/nssdb" -n ofc-ca -t C,, -i ca.pem
	) && certutil -L -d "sql:$HOME/.pki/nssdb" | grep -q "ofc tenant-a" &&
		certutil -L -d "sql:$HOME/.pki/nssdb" | grep -q "ofc-test-ca  *C,," && ok ||
		bad "the PKCS#12 and the CA imported into an NSS database" "$(certutil -L -d "sql:$HOME/.pki/nssdb" 2>&1)"
fi
cat >"$TMP/policy" <<'POL'
cn:admin      admin
cn:reader     read-only
cn:tenant-a   tenant     jobA,slurm-job-*
cn:host-h1    host       h1
POL

# ---- the page's directory: the repository's, and what must never be served ----
UI="$TMP/ui"
cp -r contrib/ui "$UI"
echo secret >"$TMP/secret.txt"
ln -s "$TMP/secret.txt" "$UI/link.txt"
ln -s ../policy "$UI/policy.txt"
head -c 5000000 /dev/zero >"$UI/huge.js"
printf 'hidden\n' >"$UI/.hidden.txt"
GWOPTS="--listen 127.0.0.1:0 --cert $C/server.pem --key $C/server.key --ca $C/ca.pem --crl $C/crl.pem --policy $TMP/policy"
expect_error 2 "ofc-gateway: --ui-dir $TMP/none: No such file or directory" \
	$GW $GWOPTS --ofcd-socket "$TMP/gw.sock" --ui-dir "$TMP/none"
expect_error 2 "ofc-gateway: --ui-dir $C: no index.html in it (the page's files: share/ofc/ui where ofc is installed, contrib/ui in its source tree)" \
	$GW $GWOPTS --ofcd-socket "$TMP/gw.sock" --ui-dir "$C"

# ---- a fabric with a partition (jobA) and hosts free for more, ofcd, the gateway ---------------------------------
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
a=$(seq -s ', h' 0 31)
sed -e 's|credentials: .*|credentials: ocs0.cred|' \
	-e "s|^collectives:|partitions:\n  - name: jobA\n    hosts: [h$a]\n    topology: torus:4x8\n\ncollectives:|" \
	configs/torus64-ocs.yaml >"$TMP/part.yaml"
: >"$TMP/emu.state"
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
SOCK="$TMP/ofcd.sock"
$OFCD --foreground --config "$TMP/part.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--device "ocs0=127.0.0.1:$e_port" --probe-interval 0 --link-hold-down 1s --gateway-socket "$TMP/gw.sock" \
	--gateway-uid "$(id -u)" 2>"$TMP/ofcd.log" &
DAEMONS="$DAEMONS $!"
deadline 10
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.02; done
$GW $GWOPTS --ofcd-socket "$TMP/gw.sock" --ui-dir "$UI" --port-file "$TMP/gw.port" \
	--idle-timeout 20s 2>"$TMP/gw.log" &
DAEMONS="$DAEMONS $!"
deadline 10
while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
read -r P <"$TMP/gw.port"
URL="https://127.0.0.1:$P"

# req NAME CODE ARGS...: curl as NAME; the HTTP status is CODE; body in $TMP/out,
# headers in $TMP/hdr.
req() {
	who=$1
	want=$2
	shift 2
	got=$(curl -sS -o "$TMP/out" -D "$TMP/hdr" -w '%{http_code}' --cacert "$C/ca.pem" \
		--cert "$C/$who.pem" --key "$C/$who.key" "$@" 2>"$TMP/err")
	if [ "$got" = "$want" ]; then ok; else
		bad "$who: curl $* answered $got, want $want" "$(head -c 300 "$TMP/out") $(head -c 200 "$TMP/err")"
	fi
}
hdr_has() { grep -qi "^$1" "$TMP/hdr" && ok || bad "header $1" "$(cat "$TMP/hdr")"; }
body_is() {
	if python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$TMP/out"; then ok; else
		bad "answer: $1" "$(head -c 600 "$TMP/out")"
	fi
}

# ---- the route, with curl --------------------------------------------------------
req admin 200 "$URL/ui/"
hdr_has 'Content-Type: text/html; charset=utf-8'
hdr_has "Content-Security-Policy: default-src 'none'; script-src 'self'"
hdr_has 'X-Content-Type-Options: nosniff'
grep -q '<script src="ui.js"' "$TMP/out" && ok || bad "/ui/ is index.html"
req reader 308 "$URL/ui"
hdr_has 'Location: /ui/'
req tenant-a 200 "$URL/ui/ui.js"
hdr_has 'Content-Type: text/javascript; charset=utf-8'
req reader 200 "$URL/ui/ui.css"
hdr_has 'Content-Type: text/css; charset=utf-8'
req admin 200 "$URL/ui/favicon.svg"
hdr_has 'Content-Type: image/svg+xml'
req admin 200 -I "$URL/ui/fabric.js"
# Who the page is shown to: the policy's words, nothing more; and when the
# gateway's CRL reaches its nextUpdate (unix s), for the page's alarm.
req tenant-a 200 "$URL/ui/whoami"
body_is 'j == {"identity": "cn:tenant-a", "role": "tenant", "partitions": ["jobA", "slurm-job-*"], "crl_next_update": j.get("crl_next_update")} and abs(j["crl_next_update"] - '$CRL_NEXT') < 120'
req reader 200 "$URL/ui/whoami"
body_is 'j == {"identity": "cn:reader", "role": "read-only", "partitions": [], "crl_next_update": j.get("crl_next_update")} and abs(j["crl_next_update"] - '$CRL_NEXT') < 120'
# The same certificates as the API: a stranger the policy does not name gets
# no page.
req stranger 403 "$URL/ui/"
body_is 'j["status"]=="STATUS_DENIED"'
req stranger 403 "$URL/ui/whoami"
if curl -sS -o /dev/null --cacert "$C/ca.pem" "$URL/ui/" 2>/dev/null; then
	bad "the page without a client certificate"
else ok; fi
# Nothing outside the directory, however the name is spelled; no link, no
# dot file, no type not the page's, no file over the limit; GET and HEAD only.
for path in "/ui/../policy" "/ui/%2e%2e/policy" "/ui/..%2fpolicy" "/ui/%2e%2e%2f%2e%2e%2fetc%2fpasswd" \
	"/ui/..%5c..%5cpolicy" "/ui//etc/passwd" "/ui/%2fetc%2fpasswd" "/ui/link.txt" "/ui/policy.txt" \
	"/ui/.hidden.txt" "/ui/sub/ui.js" "/ui/index.html/" "/ui/ui.js%20" "/ui/ui.jsx" "/ui/%2e" "/ui/."; do
	req admin 404 --path-as-is "$URL$path"
	grep -q 'secret\|cn:admin\|root:\|hidden' "$TMP/out" && bad "$path served what it must not" "$(head -c 200 "$TMP/out")" || ok
done
req admin 400 --path-as-is "$URL/ui/ui.js%00.css"
req admin 413 "$URL/ui/huge.js"
req admin 405 -X POST "$URL/ui/" -d x
req admin 405 -X DELETE "$URL/ui/ui.js"
# A request another site's page started (the operator's browser carries the
# certificate): refused, the API's routes too; a link to the page opens.
req admin 403 -X POST -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Mode: no-cors' \
	"$URL/v1/report-failure" -d '{"items":["h1:0"]}'
body_is 'j["message"]=="permission denied: a request another site'"'"'s page started (Sec-Fetch-Site or Origin)"'
# A browser that sends no Sec-Fetch-Site (Safari before 16.4) still sends
# Origin with a POST: another site's is refused, the gateway's own served.
req admin 403 -X POST -H 'Origin: https://evil.example' -H 'Content-Type: text/plain' \
	"$URL/v1/report-failure" -d '{"items":["h1:0"]}'
body_is 'j["message"]=="permission denied: a request another site'"'"'s page started (Sec-Fetch-Site or Origin)"'
for o in null "http://${URL#https://}" "https://${URL#https://}.evil.example" "https://127.0.0.2:${URL##*:}"; do
	req admin 403 -H "Origin: $o" "$URL/v1/state"
done
req admin 200 -H "Origin: $URL" "$URL/v1/state"
req admin 403 -H 'Sec-Fetch-Site: same-site' -H 'Sec-Fetch-Mode: cors' "$URL/v1/state"
req admin 200 -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Mode: navigate' "$URL/ui/"
req admin 403 -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Mode: no-cors' "$URL/ui/ui.js"
req admin 200 -H 'Sec-Fetch-Site: same-origin' "$URL/v1/state"
body_is '"h1:0" not in j["state"].get("failed", [])'

# ---- the page in chromium ------------------------------------------------------------
# jobA set up first: its circuits are drawn when the pages open.
req admin 200 -X POST "$URL/v1/reconfigure" -d '{"partition":"jobA"}'
SHOTS="$BUILD/ui-shots"
rm -rf "$SHOTS"
UI_URL=$URL UI_PKI=$C UI_OFC=$OFC UI_SOCK=$SOCK UI_SHOTS=$SHOTS CHROMIUM=$CHROMIUM \
	timeout 120 node tests/ui/ui_test.mjs >"$TMP/driver.out" 2>&1
grep '^FAIL\|^      \|marked\|churn' "$TMP/driver.out"
dp=$(sed -n 's/^ui-driver: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$TMP/driver.out")
df=$(sed -n 's/^ui-driver: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$TMP/driver.out")
if [ -n "$dp" ]; then
	pass=$((pass + dp))
	fail=$((fail + df))
else
	bad "the browser's driver ran" "$(tail -5 "$TMP/driver.out")"
fi
[ -s "$SHOTS/admin.png" ] && [ -s "$SHOTS/tenant.png" ] && [ -s "$SHOTS/read-only.png" ] && ok ||
	bad "screenshots in $SHOTS"
grep -q "gateway.*abort\|AddressSanitizer" "$TMP/gw.log" && bad "the gateway's log" "$(tail -3 "$TMP/gw.log")" || ok
finish
