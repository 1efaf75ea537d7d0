#!/bin/sh
# ofcd on an etcd that asks for client certificates (docs/ofcd.md,
# "Replicas"): whoever can write the store rewires the fabric, so ofcd
# refuses a plain etcd:// unless told --cluster-insecure, refuses etcds://
# without its CA, certificate and key or with a key others can read, and a
# replica holding another CA's certificate never reaches etcd; the right
# certificate leads, and a plain etcd with --cluster-insecure works.
SUITE=cluster_tls
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "cluster_tls: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --state "$TMP/e.state"
etcd_start 1 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log" "$TMP/etcd/openssl.log")"
for r in r1 r2 r3; do replica_dir $r "$TMP/a.yaml" "$e_port"; done
P=$ETCD_PKI
# ofcd as r2, in the foreground, with ARGS (its start's verdict)
r2() {
	timeout 30 $BUILD/ofcd --config "$TMP/r2/fab.yaml" --socket "$TMP/r2.sock" \
		--state-dir "$TMP/r2/state" --credentials-dir "$TMP/r2" --cluster-name r2 \
		--foreground --log-file "$TMP/r2.log" "$@"
}

# ---- refused at the start, each in one line ------------------------------------------
PLAIN="etcd://127.0.0.1:$ETCD_C1"
expect_error 2 "ofcd: --cluster $PLAIN: etcd without TLS and client certificates lets anyone who reaches it rewire the fabric; use etcds:// with --cluster-cacert, --cluster-cert and --cluster-key, or say --cluster-insecure" \
	r2 --cluster "$PLAIN"
expect_error 2 "ofcd: --cluster $ETCD: TLS to etcd needs --cluster-cacert, --cluster-cert and --cluster-key" \
	r2 --cluster "$ETCD" --cluster-cert "$P/client.pem" --cluster-key "$P/client.key"
expect_error 2 "ofcd: --cluster-cacert, --cluster-cert and --cluster-key go with --cluster etcds://..." \
	r2 --cluster "$PLAIN" --cluster-insecure $ETCD_TLS
cp "$P/client.key" "$TMP/open.key"
chmod 644 "$TMP/open.key"
expect_error 2 "ofcd: --cluster-key $TMP/open.key: a private key must be owned by root or this user and not readable by others (chmod 600)" \
	r2 --cluster "$ETCD" --cluster-cacert "$P/ca.pem" --cluster-cert "$P/client.pem" --cluster-key "$TMP/open.key"
expect_error 2 "ofcd: --cluster-cacert $TMP/none.pem: No such file or directory" \
	r2 --cluster "$ETCD" --cluster-cacert "$TMP/none.pem" --cluster-cert "$P/client.pem" --cluster-key "$P/client.key"
# (no message says what a key holds)
! grep -q "PRIVATE KEY" "$TMP/err" "$TMP/r2.log" 2>/dev/null && ok || bad "a key's contents in a message"

# ---- the right certificate leads ---------------------------------------------------------
replica_start r1 --probe-interval 0
wait_leader 20 r1 && ok || bad "r1 with the client certificate does not lead" "$(tail -3 "$TMP/r1.log")"

# ---- another CA's certificate: etcd refuses it, and ofcd fails closed -----------------
# (TLS 1.3: etcd's refusal comes after the handshake, as an alert or a
# reset. Seen as TLS's, ofcd does not start; seen as a reset, it serves
# stale, registered nowhere, leading never.)
timeout 8 $BUILD/ofcd --config "$TMP/r2/fab.yaml" --socket "$TMP/r2.sock" \
	--state-dir "$TMP/r2/state" --credentials-dir "$TMP/r2" --cluster-name r2 \
	--foreground --log-file "$TMP/r2.log" --cluster "$ETCD" --cluster-cacert "$P/ca.pem" \
	--cluster-cert "$P/intruder.pem" --cluster-key "$P/intruder.key" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ]; then
	grep -q "^ofcd: --cluster $ETCD: etcd: TLS with no member succeeded (127.0.0.1:$ETCD_C1: .*SSL.*): check --cluster-cacert, --cluster-cert and --cluster-key$" "$TMP/err" &&
		ok || bad "another CA's client certificate: the error" "$(cat "$TMP/err")"
else
	[ $rc -eq 124 ] && grep -q "etcd does not answer yet (etcd: no member answered .*127.0.0.1:$ETCD_C1: " "$TMP/r2.log" &&
		! grep -q "leads\|took over" "$TMP/r2.log" &&
		ok || bad "another CA's client certificate: exit $rc" "$(cat "$TMP/err")" "$(tail -3 "$TMP/r2.log")"
fi
grep -q "rejected connection from .*certificate signed by unknown authority" "$TMP/etcd/e1.log" &&
	ok || bad "etcd did not say it refused the certificate" "$(tail -3 "$TMP/etcd/e1.log")"
# ... and a CA that did not sign etcd's certificate: ofcd does not speak to it
r2 --cluster "$ETCD" --cluster-cacert "$P/other.pem" --cluster-cert "$P/client.pem" \
	--cluster-key "$P/client.key" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "^ofcd: --cluster $ETCD: etcd: TLS with no member succeeded (127.0.0.1:$ETCD_C1: .*certificate.*): check --cluster-cacert" "$TMP/err" &&
	ok || bad "a CA that does not vouch for etcd: exit $rc" "$(cat "$TMP/err")"
expect_json "[r['name'] for r in j['cluster']['replicas']] == ['r1']" $OFC --socket "$TMP/r1.sock" status --json

# ---- a plain etcd, said in so many words ---------------------------------------------------
set -- $(scripts/free-ports 2)
etcd --name p1 --data-dir "$TMP/etcd/p1" --listen-client-urls "http://127.0.0.1:$1" \
	--advertise-client-urls "http://127.0.0.1:$1" --listen-peer-urls "http://127.0.0.1:$2" \
	--initial-advertise-peer-urls "http://127.0.0.1:$2" --initial-cluster "p1=http://127.0.0.1:$2" \
	>"$TMP/etcd/p1.log" 2>&1 &
HELPER_PIDS="$HELPER_PIDS $!"
deadline 20
until curl -s -m 1 -X POST "http://127.0.0.1:$1/v3/kv/range" -d '{"key":"eA=="}' | grep -q revision ||
	past $_end; do sleep 0.1; done
REPLICA_ETCD="etcd://127.0.0.1:$1" replica_start r3 --probe-interval 0 --cluster-insecure
wait_leader 20 r3 && ok || bad "r3 on a plain etcd with --cluster-insecure" "$(tail -3 "$TMP/r3.log" "$TMP/r3.stderr")"

finish
