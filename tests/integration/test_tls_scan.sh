#!/bin/sh
# What a TLS scanner sees of ofc's TLS servers, and what ofcd's etcd client
# accepts: sslscan (Debian's) against ofc-gateway as test_gateway.sh starts
# it (an ECDSA certificate, and an RSA one) and against etcd as
# cluster_env.sh's etcd_start runs it (docs/ofcd.md, "Replicas"), each with
# the client certificate it asks for; tls_scan_check.py holds the scans to
# the bar docs/security.md states (nothing below TLS 1.2, forward-secret
# AEAD suites only, no SHA-1 signature, nothing under 128 bits) and prints
# what was offered. Without a client certificate neither completes a
# handshake that carries a request. ofcd's client of etcd refuses TLS 1.1
# even where the system's OpenSSL configuration would allow it.
SUITE=tls_scan
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

for t in sslscan etcd openssl; do
	if ! command -v $t >/dev/null; then
		echo "tls_scan: no $t (scripts/install-deps.sh installs sslscan, etcd-server and openssl): skipped"
		exit 0
	fi
done
CHECK="python3 $(dirname "$0")/tls_scan_check.py"

# scan NAME HOST:PORT [CERT KEY]: sslscan's XML in $TMP/NAME.xml (SIGPIPE
# ignored: sslscan dies of it when a server closes on it mid-probe, as
# both do without a client certificate; 15 s a socket, not 3: run.sh runs
# suites side by side, and a probe that timed out would read as a refusal)
scan() {
	_n=$1 _hp=$2
	shift 2
	(
		trap '' PIPE
		exec timeout 300 sslscan --no-colour --show-sigs --timeout=15 --xml="$TMP/$_n.xml" ${1:+--certs="$1" --pk="$2"} "$_hp"
	) >"$TMP/$_n.txt" 2>&1
}
# scan_ok NAME [--bare]: the scan holds to the bar; its summary in
# $TMP/NAME.summary (and in the log, as docs/security.md quotes it)
scan_ok() {
	if $CHECK $2 "$TMP/$1.xml" >"$TMP/$1.summary" 2>"$TMP/$1.bad"; then ok; else
		bad "sslscan of $1: $(head -3 "$TMP/$1.bad" | tr '\n' ';')" "$(head -c 600 "$TMP/$1.txt")"
	fi
	sed "s/^/$1: /" "$TMP/$1.summary"
}
# sha1_sig PORT: what a TLS 1.2 client offering only SHA-1 signatures gets
# (RFC 9155 forbids them): "refused", or the digest the server signed with
sha1_sig() {
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$1" -tls1_2 -sigalgs ECDSA+SHA1:RSA+SHA1 \
		-cipher 'DEFAULT:@SECLEVEL=0' -cert "$P/client.pem" -key "$P/client.key" \
		-CAfile "$P/ca.pem" >"$TMP/s_client.out" 2>&1
	sed -n 's/^Peer signing digest: //p' "$TMP/s_client.out" | grep . || echo refused
}

# ---- certificates: etcd's (cluster_env.sh), and an RSA server's of the same CA -------------
# (the RSA one made for key encipherment too, as many CAs make them: what
# lets a server offer the static RSA key exchange)
etcd_pki || bad "openssl made the certificates" "$(tail -3 "$TMP/etcd/openssl.log")"
P=$ETCD_PKI
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >"$P/rsa.ext"
openssl req -new -newkey rsa:2048 -nodes -keyout "$P/rsa.key" -out "$P/rsa.csr" -subj /CN=rsa \
	>/dev/null 2>&1 &&
	openssl x509 -req -in "$P/rsa.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" -CAcreateserial -days 2 \
		-extfile "$P/rsa.ext" -out "$P/rsa.pem" >/dev/null 2>&1 && chmod 600 "$P/rsa.key" &&
	ok || bad "openssl made the RSA certificate"

# ---- ofc-gateway, as test_gateway.sh starts it (no ofcd: a scan is handshakes) ------------
printf 'cn:client admin\n' >"$TMP/policy"
# gateway NAME CERT: started with CERT and its key, its port in $GW_PORT
gateway() {
	rm -f "$TMP/gw.port"
	$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$P/$2.pem" --key "$P/$2.key" --ca "$P/ca.pem" \
		--policy "$TMP/policy" --ofcd-socket "$TMP/gw.sock" --port-file "$TMP/gw.port" \
		--read-timeout 2s --idle-timeout 4s 2>"$TMP/$1.log" &
	HELPER_PIDS="$HELPER_PIDS $!"
	eval "${1}_pid=$!"
	deadline 10
	while [ ! -s "$TMP/gw.port" ] && ! past $_end; do sleep 0.02; done
	read -r GW_PORT <"$TMP/gw.port"
}
gateway gw server
scan gateway "127.0.0.1:$GW_PORT" "$P/client.pem" "$P/client.key"
scan_ok gateway
scan gateway-bare "127.0.0.1:$GW_PORT"
scan_ok gateway-bare --bare
# TLS 1.3 finishes the client's handshake before the certificate is read:
# the refusal shows as no answer to a request, and in the log
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --cacert "$P/ca.pem" "https://127.0.0.1:$GW_PORT/v1/state")
[ "$code" = 000 ] && grep -q "refused TLS client 127.0.0.1:[0-9]*: no verified client certificate" "$TMP/gw.log" &&
	ok || bad "the gateway answered a client without a certificate: $code" "$(tail -2 "$TMP/gw.log")"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --cacert "$P/ca.pem" --cert "$P/client.pem" \
	--key "$P/client.key" "https://127.0.0.1:$GW_PORT/v1/state")
[ "$code" != 000 ] && ok || bad "the gateway did not answer its client's certificate" "$(tail -2 "$TMP/gw.log")"
[ "$(sha1_sig "$GW_PORT")" = refused ] && ok || bad "the gateway signed with SHA-1" "$(tail -5 "$TMP/s_client.out")"
kill "$gw_pid"
# an RSA certificate: ECDHE-RSA only, never the static RSA key exchange
gateway gwrsa rsa
scan gateway-rsa "127.0.0.1:$GW_PORT" "$P/client.pem" "$P/client.key"
scan_ok gateway-rsa
kill "$gwrsa_pid"

# ---- etcd, as docs/ofcd.md runs it: client certificates of its own CA ---------------------
etcd_start 1 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
scan etcd "127.0.0.1:$ETCD_C1" "$P/client.pem" "$P/client.key"
scan_ok etcd
scan etcd-bare "127.0.0.1:$ETCD_C1"
scan_ok etcd-bare --bare
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --cacert "$P/ca.pem" -X POST \
	"https://127.0.0.1:$ETCD_C1/v3/kv/range" -d '{"key":"eA=="}')
[ "$code" = 000 ] && ok || bad "etcd answered a client without a certificate: $code"
# Go's TLS 1.2 (etcd 3.4 is built with Go 1.19) still signs with SHA-1 for
# a client that offers only that, and etcd has no setting for it: said, not
# failed (docs/security.md, "What is not defended yet"). ofcd offers SHA-1
# only where OpenSSL's configuration is lowered to security level 0, and
# speaks TLS 1.3 to etcd, whose downgrade sentinel a TLS 1.2 answer would
# have to carry.
echo "etcd: TLS 1.2 with only SHA-1 signatures offered: $(sha1_sig "$ETCD_C1")"
curl -sv -m 5 --cacert "$P/ca.pem" --cert "$P/client.pem" --key "$P/client.key" -X POST \
	"https://127.0.0.1:$ETCD_C1/v3/kv/range" -d '{"key":"eA=="}' 2>&1 | grep -q "SSL connection using TLSv1.3" &&
	ok || bad "curl (ofcd's libcurl and OpenSSL) did not speak TLS 1.3 to etcd"

# ---- ofcd's client of etcd: nothing below TLS 1.2, whatever OpenSSL's configuration ------
# A member that speaks only TLS 1.1 (etcd's certificate, so only the
# version is wrong), and an OpenSSL configuration that lets TLS 1.0 and
# 1.1 through (a system's, lowered for some old peer): curl, on the same
# libcurl and OpenSSL, shows it would be spoken; ofcd refuses it.
cat >"$TMP/openssl.cnf" <<'EOF'
openssl_conf = init
[init]
ssl_conf = ssl
[ssl]
system_default = sys
[sys]
MinProtocol = TLSv1
CipherString = DEFAULT:@SECLEVEL=0
EOF
# (no timeout wrapper: the clean-up's kill -9 would reach it and leave
# s_server listening)
openssl s_server -accept 127.0.0.1:0 -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' \
	-cert "$P/server.pem" -key "$P/server.key" -www >"$TMP/s_server.out" 2>&1 &
HELPER_PIDS="$HELPER_PIDS $!"
deadline 10
until grep -q '^ACCEPT' "$TMP/s_server.out" || past $_end; do sleep 0.05; done
OLD=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$TMP/s_server.out")
code=$(OPENSSL_CONF="$TMP/openssl.cnf" curl -s -m 5 -o /dev/null -w '%{http_code}' \
	--cacert "$P/ca.pem" "https://127.0.0.1:$OLD/")
[ "$code" = 200 ] && ok || bad "curl did not speak TLS 1.1 to s_server: $code" "$(tail -3 "$TMP/s_server.out")"
make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
replica_dir r1 "$TMP/a.yaml" 1
OPENSSL_CONF="$TMP/openssl.cnf" timeout 30 $BUILD/ofcd --config "$TMP/r1/fab.yaml" \
	--socket "$TMP/r1.sock" --state-dir "$TMP/r1/state" --credentials-dir "$TMP/r1" \
	--cluster-name r1 --foreground --log-file "$TMP/r1.log" --cluster "etcds://127.0.0.1:$OLD" \
	$ETCD_TLS >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "^ofcd: --cluster etcds://127.0.0.1:$OLD: etcd: TLS with no member succeeded (127.0.0.1:$OLD: .*protocol version.*): check --cluster-cacert" "$TMP/err" &&
	ok || bad "ofcd spoke to a TLS 1.1 member: exit $rc" "$(cat "$TMP/err")" "$(tail -3 "$TMP/r1.log")"

finish
