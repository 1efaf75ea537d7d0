#!/bin/sh
# The network API's figures (bench/results/gateway.md, "The network API"):
# GetState with 64 concurrent persistent clients over mutual TLS through
# ofc-gateway and over ofcd's Unix socket, alternated in one run, on
# configs/torus64-ocs.yaml applied to an ocs-emu (a State of 128 circuits,
# 30 KiB as JSON), with the CPU each process spent a request; the same
# clients against a server that answers the same bytes at once (HTTPS and
# plain HTTP: the floor of the transport, no ofcd behind it); TLS
# handshakes per second (a new connection per request); genkautz1024-patch's
# BFB allreduce streamed through the gateway (seconds, peak RSS of ofcd, of
# the gateway and of the client) against `ofc schedule -o` to a file.
# Everything on loopback, ports picked by the daemons, data in a temp dir.
# PART=state or PART=stream runs one half; ROUNDS (default 3) the GetState
# rounds. OLD_BUILD=DIR (a build directory of another commit holding ofcd
# and ofc-gateway) adds that pair, on an emulator of its own, to every
# round: before and after in one run.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
LOAD=${LOAD:-$BUILD/bench/gateway_load}
T=$(mktemp -d "${TMPDIR:-/tmp}/ofc-gwbench.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
CLIENTS=${CLIENTS:-64}
REQUESTS=${REQUESTS:-300}
ROUNDS=${ROUNDS:-3}
PART=${PART:-all}

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
start() { # NAME CONFIG EXTRA...: ofcd and a gateway in front of it (from $B)
	n=$1
	cfg=$2
	shift 2
	"$B/ofcd" --foreground --config "$cfg" --socket "$T/$n.sock" --state-dir "$T/$n.st" \
		--credentials-dir configs/credentials --probe-interval 0 --max-clients-per-uid 256 \
		--gateway-socket "$T/$n.gw" --gateway-uid "$(id -u)" --pid-file "$T/$n.pid" "$@" \
		2>"$T/$n.log" &
	PIDS="$PIDS $!"
	wait_file "$T/$n.pid"
	"$B/ofc-gateway" --listen 127.0.0.1:0 --port-file "$T/$n.port" --cert "$T/server.pem" \
		--key "$T/server.key" --ca "$T/ca.pem" --policy "$T/policy" --ofcd-socket "$T/$n.gw" \
		--upstream 128 --max-connections 4096 2>"$T/$n.gwlog" &
	PIDS="$PIDS $!"
	eval "${n}_gwpid=$!"
	wait_file "$T/$n.port"
}
TLS="--cert $T/admin.pem --key $T/admin.key --cacert $T/ca.pem"
B=$BUILD

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
ticks() { awk '{print $14 + $15}' /proc/"$1"/stat; }
TCK=$(getconf CLK_TCK)
# run PID... -- LOAD ARGS: the load, then the CPU each PID spent a request
run() {
	pids=""
	while [ "$1" != -- ]; do
		pids="$pids $1=$(ticks "$1")"
		shift
	done
	shift
	"$LOAD" "$@"
	for pt in $pids; do
		p=${pt%%=*}
		awk -v d=$(($(ticks "$p") - ${pt#*=})) -v n=$((CLIENTS * REQUESTS)) -v t="$TCK" \
			-v who="$(tr '\0' ' ' </proc/"$p"/cmdline | cut -d' ' -f1 | sed 's|.*/||')" \
			'BEGIN { printf "    %s: CPU %.0f us a request\n", who, d / t / n * 1e6 }'
	done
}
emu_fabric() { # NAME: ofcd (from $B) and its gateway on torus64-ocs applied to an ocs-emu
	"$BUILD/ocs-emu" --listen 127.0.0.1:0 --port-file "$T/$1.emu" --ports 256 \
		--credentials configs/credentials/ocs0.cred 2>"$T/$1.emulog" &
	PIDS="$PIDS $!"
	wait_file "$T/$1.emu"
	start "$1" configs/torus64-ocs.yaml --device "ocs0=127.0.0.1:$(cat "$T/$1.emu")"
	"$BUILD/ofc" --socket "$T/$1.sock" apply configs/torus64-ocs.yaml >/dev/null ||
		echo "ofc apply failed: the State is not the one measured in bench/results/gateway.md"
}
if [ "$PART" != stream ]; then
	emu_fabric t
	URL="https://127.0.0.1:$(cat "$T/t.port")"
	OFCD_PID=$(cat "$T/t.pid")
	if [ -n "$OLD_BUILD" ]; then
		B=$OLD_BUILD
		emu_fabric o
		B=$BUILD
		OURL="https://127.0.0.1:$(cat "$T/o.port")"
		OLD_PID=$(cat "$T/o.pid")
		echo "before: $OLD_BUILD/ofc-gateway and its ofcd"
	fi
	curl -sS --fail $TLS -o "$T/state.json" "$URL/v1/state"
	echo "GetState: $(wc -c <"$T/state.json") bytes of JSON"
	# The same bytes, answered at once: over HTTPS as the gateway serves
	# (libmicrohttpd's modes, GnuTLS, a client certificate), and plain HTTP.
	"$LOAD" --serve "$T/state.json" --port-file "$T/fx.port" --server-cert "$T/server.pem" \
		--server-key "$T/server.key" --cacert "$T/ca.pem" &
	FX_PID=$!
	"$LOAD" --serve "$T/state.json" --port-file "$T/fp.port" &
	FP_PID=$!
	PIDS="$PIDS $FX_PID $FP_PID"
	wait_file "$T/fx.port"
	wait_file "$T/fp.port"
	FX="https://127.0.0.1:$(cat "$T/fx.port")"
	FP="http://127.0.0.1:$(cat "$T/fp.port")"
	N="--clients $CLIENTS --requests $REQUESTS"
	# warm every path, then each in turn, ROUNDS times, in the same run
	"$LOAD" --socket "$T/t.sock" --clients 4 --requests 50 >/dev/null
	"$LOAD" --url "$URL" $TLS --clients 4 --requests 50 >/dev/null
	for round in $(seq "$ROUNDS"); do
		echo "round $round, load $(cut -d' ' -f1 /proc/loadavg)"
		run "$OFCD_PID" -- --socket "$T/t.sock" $N --raw
		run "$OFCD_PID" "$t_gwpid" -- --url "$URL" $TLS $N
		[ -n "$OLD_BUILD" ] && echo "  before:" && run "$OLD_PID" "$o_gwpid" -- --url "$OURL" $TLS $N
		run "$OFCD_PID" -- --socket "$T/t.sock" $N
		run "$OFCD_PID" "$t_gwpid" -- --url "$URL" $TLS $N --call
		[ -n "$OLD_BUILD" ] && echo "  before:" && run "$OLD_PID" "$o_gwpid" -- --url "$OURL" $TLS $N --call
		run "$OFCD_PID" "$t_gwpid" -- --url "$URL" $TLS $N --parse
		run "$FX_PID" -- --url "$FX" $TLS $N
		run "$FP_PID" -- --url "$FP" $N
	done
	echo "the gateway's JSON reused: $(curl -sS $TLS "$URL/metrics" | awk '/^ofc_gateway_state_json_reused_total/ {print $2}') times"
	"$LOAD" --url "$URL" $TLS --clients 8 --requests 100 --fresh
fi
[ "$PART" = state ] && exit 0

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
