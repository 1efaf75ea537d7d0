#!/bin/sh
# A whole state read at scale (bench/results/gateway.md, "A whole state read at
# 65,536 hosts"): HOSTS hosts of 4 ports wired per port to four ocs-emus of
# HOSTS ports (bench/churn_prolog.sh's fabric, without its collective: the
# state's schedule at 65,536 hosts is another matter), brought to the
# squarest torus, then ofcd behind ofc-gateway. Prints the State's size and
# time on ofcd's socket (`ofc status --json`), the gateway's GET /v1/state
# as JSON and gzipped (first read: nothing cached; and again), and each
# process's peak RSS; then the page's read (with_fabric, fabric_brief) and
# ten of them at once, with the CPU ofcd and the gateway spent on them.
#
#   sh bench/state_scale.sh [HOSTS]          # 65536
#   OFCD_ARGS="..."                           more of ofcd's options
cd "$(dirname "$0")/.." || exit 1
HOSTS=${1:-65536}
BUILD=${BUILD:-build}
T=$(mktemp -d "${TMPDIR:-/tmp}/ofc-statescale.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

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
TLS="--cert $T/admin.pem --key $T/admin.key --cacert $T/ca.pem"
wait_file() { _e=$(($(date +%s) + 60)); while [ ! -s "$1" ] && [ "$(date +%s)" -le $_e ]; do sleep 0.05; done; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
ticks() { awk '{print $14 + $15}' /proc/"$1"/stat; }
# CPU seconds ofcd and the gateway spent since cpu0 (load-free, unlike wall)
cpu0() { c0=$(($(ticks $OFCD) + $(ticks $GW))); }
cpu() { awk -v d=$(($(ticks $OFCD) + $(ticks $GW) - c0)) -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", d / t }'; }
hwm() { awk '/VmHWM/ {printf "%.0f MB", $2 / 1024}' /proc/"$1"/status; }

TOPO=$(python3 -c "
import math
n = $HOSTS; a = 2 ** (int(math.log2(n)) // 2)
print('torus:%dx%d' % (a, n // a))")
mkdir -p "$T/cred"
chmod 700 "$T/cred"
cp configs/credentials/ocs0.cred "$T/cred/ocs.cred"
chmod 600 "$T/cred/ocs.cred"
for s in 0 1 2 3; do
	"$BUILD/ocs-emu" --listen 127.0.0.1:0 --port-file "$T/e$s.port" --ports "$HOSTS" \
		--credentials configs/credentials/ocs0.cred 2>"$T/e$s.log" &
	PIDS="$PIDS $!"
done
for s in 0 1 2 3; do wait_file "$T/e$s.port"; done
{
	printf 'version: 1\nname: state%s\nhosts:\n  count: %s\n  prefix: h\n  ports: 4\n  port_rate: 100Gbps\nswitches:\n' "$HOSTS" "$HOSTS"
	for s in 0 1 2 3; do
		printf '  - name: ocs%s\n    type: ocs\n    ports: %s\n    reconfig_time: 10ms\n    driver:\n      type: tl1\n      address: 127.0.0.1:%s\n      credentials: cred/ocs.cred\n      timeout: 60s\n      retries: 2\n' "$s" "$HOSTS" "$(cat "$T/e$s.port")"
	done
	printf 'wiring:\n  pattern: per-port\n  switches: [ocs0, ocs1, ocs2, ocs3]\ntopology: %s\ncost_model:\n  alpha: 10us\n  link_bandwidth: 100Gbps\n' "$TOPO"
} >"$T/fab.yaml"
mkdir -p "$T/state"
"$BUILD/ofcd" --foreground --config "$T/fab.yaml" --socket "$T/ofcd.sock" --state-dir "$T/state" \
	--credentials-dir "$T/cred" --probe-interval 0 --gateway-socket "$T/gw.sock" \
	--gateway-uid "$(id -u)" --pid-file "$T/ofcd.pid" $OFCD_ARGS 2>"$T/ofcd.log" &
OFCD=$!
PIDS="$PIDS $OFCD"
wait_file "$T/ofcd.pid"
"$BUILD/ofc-gateway" --listen 127.0.0.1:0 --port-file "$T/gw.port" --cert "$T/server.pem" \
	--key "$T/server.key" --ca "$T/ca.pem" --policy "$T/policy" --ofcd-socket "$T/gw.sock" \
	2>"$T/gw.log" &
GW=$!
PIDS="$PIDS $GW"
wait_file "$T/gw.port"
URL="https://127.0.0.1:$(cat "$T/gw.port")"
echo "state_scale: $HOSTS hosts ($TOPO) on 4 ocs-emus; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
t=$(now)
"$BUILD/ofc" --socket "$T/ofcd.sock" reconfigure --topology "$TOPO" --timeout 600 >"$T/first" 2>&1 ||
	{ echo "the first reconfigure failed: $(tail -3 "$T/first")"; exit 1; }
echo "  reconfigure to $TOPO: $(since "$t") s; ofcd peak RSS $(hwm $OFCD)"
for i in 1 2; do
	t=$(now)
	"$BUILD/ofc" --socket "$T/ofcd.sock" status --json >"$T/st.json" 2>"$T/st.err" ||
		echo "  ofc status --json failed: $(tail -1 "$T/st.err")"
	echo "  ofc status --json ($i): $(wc -c <"$T/st.json") bytes in $(since "$t") s"
done
for i in 1 2; do
	t=$(now)
	curl -sS $TLS -o "$T/gw.json" -w '%{http_code} %{size_download}' "$URL/v1/state" >"$T/c" 2>&1
	echo "  gateway JSON ($i): $(cat "$T/c") bytes in $(since "$t") s"
	t=$(now)
	curl -sS $TLS -H 'Accept-Encoding: gzip' -o "$T/gw.gz" -w '%{http_code} %{size_download}' "$URL/v1/state" >"$T/c" 2>&1
	echo "  gateway gzip ($i): $(cat "$T/c") bytes in $(since "$t") s"
done
for i in 1 2; do
	t=$(now)
	cpu0
	curl -sS $TLS -H "Accept-Encoding: gzip" -o "$T/gwf.gz" -w '%{http_code} %{size_download}' "$URL/v1/state?with_fabric=true&fabric_brief=true" >"$T/c" 2>&1
	echo "  the page's read (with_fabric, fabric_brief), gzip ($i): $(cat "$T/c") bytes in $(since "$t") s, CPU $(cpu) s (ofcd and gateway)"
	grep -q '^200' "$T/c" || echo "    $(head -c 300 "$T/gwf.gz")"
done
echo "  peak RSS: ofcd $(hwm $OFCD), ofc-gateway $(hwm $GW)"
# ten pages opening at once (each its first read)
t=$(now)
cpu0
cpids=""
for i in 0 1 2 3 4 5 6 7 8 9; do
	curl -sS $TLS -H 'Accept-Encoding: gzip' -o "$T/p$i.gz" -w '%{http_code} %{size_download} %{time_total}\n' \
		"$URL/v1/state?with_fabric=true&fabric_brief=true" >"$T/p$i" 2>&1 &
	cpids="$cpids $!"
done
wait $cpids
echo "  ten pages at once: all in $(since "$t") s, CPU $(cpu) s (ofcd and gateway); each (code bytes s): $(cat "$T"/p? | tr '\n' ' ')"
echo "  peak RSS: ofcd $(hwm $OFCD), ofc-gateway $(hwm $GW)"
echo "state_scale: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
