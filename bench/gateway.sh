#!/bin/sh
# The network API's figures (issue 36; bench/RESULTS.md, "The network API"):
# GetState with 64 concurrent persistent clients over mutual TLS through
# ofc-gateway and over ofcd's Unix socket in the same run; TLS handshakes
# per second (a new connection per request); genkautz1024-patch's BFB
# allreduce streamed through the gateway (seconds, peak RSS of ofcd, of the
# gateway and of the client) against `ofc schedule -o` to a file.
# Everything on loopback, ports picked by the daemons, data in a temp dir.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
LOAD=${LOAD:-$BUILD/bench/gateway_load}
T=$(mktemp -d "${TMPDIR:-/tmp}/ofc-gwbench.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
CLIENTS=${CLIENTS:-64}
REQUESTS=${REQUESTS:-300}

key() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" 2>/dev/null; }
key -x509 -days 30 -subj /CN=bench-ca -keyout "$T/ca.key" -out "$T/ca.pem" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
for n in server admin; do
	key -subj "/CN=$n" -keyout "$T/$n.key" -out "$T/$n.csr"
	echo subjectAltName=IP:127.0.0.1 >"$T/san"
	openssl x509 -req -in "$T/$n.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
		-days 30 -extfile "$T/san" -out "$T/$n.pem" 2>/dev/null
done
echo 'cn:admin admin' >"$T/policy"

wait_file() { _e=$(($(date +%s) + 20)); while [ ! -s "$1" ] && [ "$(date +%s)" -le $_e ]; do sleep 0.05; done; }
start() { # NAME CONFIG EXTRA...: ofcd and a gateway in front of it
	n=$1
	cfg=$2
	shift 2
	"$BUILD/ofcd" --foreground --config "$cfg" --socket "$T/$n.sock" --state-dir "$T/$n.st" \
		--credentials-dir configs/credentials --probe-interval 0 --max-clients-per-uid 256 \
		--gateway-socket "$T/$n.gw" --gateway-uid "$(id -u)" --pid-file "$T/$n.pid" "$@" \
		2>"$T/$n.log" &
	PIDS="$PIDS $!"
	wait_file "$T/$n.pid"
	"$BUILD/ofc-gateway" --listen 127.0.0.1:0 --port-file "$T/$n.port" --cert "$T/server.pem" \
		--key "$T/server.key" --ca "$T/ca.pem" --policy "$T/policy" --ofcd-socket "$T/$n.gw" \
		--upstream 128 --max-connections 4096 2>"$T/$n.gwlog" &
	PIDS="$PIDS $!"
	eval "${n}_gwpid=$!"
	wait_file "$T/$n.port"
}
TLS="--cert $T/admin.pem --key $T/admin.key --cacert $T/ca.pem"

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
start t configs/torus64-ocs.yaml
URL="https://127.0.0.1:$(cat "$T/t.port")"
# warm both paths, then each in turn, twice, in the same run
"$LOAD" --socket "$T/t.sock" --clients 4 --requests 50 >/dev/null
"$LOAD" --url "$URL" $TLS --clients 4 --requests 50 >/dev/null
for round in 1 2; do
	"$LOAD" --socket "$T/t.sock" --clients "$CLIENTS" --requests "$REQUESTS"
	"$LOAD" --url "$URL" $TLS --clients "$CLIENTS" --requests "$REQUESTS"
done
"$LOAD" --url "$URL" $TLS --clients 8 --requests 100 --fresh

start g configs/genkautz1024-patch.yaml
GURL="https://127.0.0.1:$(cat "$T/g.port")"
/usr/bin/time -f "ofc schedule -o (local, no daemon): %e s, peak RSS %M KiB" \
	"$BUILD/ofc" schedule configs/genkautz1024-patch.yaml --collective allreduce -o "$T/ref.pb" >/dev/null
/usr/bin/time -f "curl, the stream through the gateway (protobuf): %e s, client peak RSS %M KiB" \
	curl -sS --fail $TLS -o "$T/remote.pb" "$GURL/v1/schedule?collective=allreduce&format=pb"
/usr/bin/time -f "ofc --server ... schedule -o: %e s, client peak RSS %M KiB" \
	"$BUILD/ofc" --server "$GURL" $TLS schedule --collective allreduce -o "$T/cli.pb" >/dev/null
/usr/bin/time -f "ofc --socket ... schedule -o (the stream over the Unix socket): %e s, client peak RSS %M KiB" \
	"$BUILD/ofc" --socket "$T/g.sock" schedule --collective allreduce -o "$T/local.pb" >/dev/null
/usr/bin/time -f "curl, the stream as JSON: %e s, client peak RSS %M KiB" \
	curl -sS --fail $TLS -o "$T/remote.json" "$GURL/v1/schedule?collective=allreduce"
echo "sizes: $(stat -c %s "$T/ref.pb") (ofc schedule), $(stat -c %s "$T/remote.pb") (gateway pb), $(stat -c %s "$T/remote.json") (gateway JSON) bytes"
echo "peak RSS: ofcd $(awk '/VmHWM/ {print $2}' /proc/"$(cat "$T/g.pid")"/status) KiB, ofc-gateway $(awk '/VmHWM/ {print $2}' /proc/"$g_gwpid"/status) KiB"
# The gateway alone on one request each (a fresh one per encoding): what
# holding one step costs it.
for enc in pb json; do
	"$BUILD/ofc-gateway" --listen 127.0.0.1:0 --port-file "$T/a$enc.port" --cert "$T/server.pem" \
		--key "$T/server.key" --ca "$T/ca.pem" --policy "$T/policy" --ofcd-socket "$T/g.gw" 2>/dev/null &
	gp=$!
	PIDS="$PIDS $gp"
	wait_file "$T/a$enc.port"
	q=""
	[ $enc = pb ] && q="&format=pb"
	curl -sS --fail $TLS -o /dev/null "https://127.0.0.1:$(cat "$T/a$enc.port")/v1/schedule?collective=allreduce$q"
	echo "a fresh gateway streaming it once as $enc: peak RSS $(awk '/VmHWM/ {print $2}' /proc/$gp/status) KiB"
	kill $gp
done
