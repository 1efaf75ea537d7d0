#!/bin/sh
# The partitions' overhead target: two partitions reconfigured through ofcd cost
# the same per command as one reconfigure of the whole fabric. 64 hosts on
# one 256-port ocs-emu (no move delay): jobA (h0..h31, torus:4x8) and jobB
# (h32..h63, circulant:32:1,4). Per round, from an empty switch: one
# Reconfigure of the whole fabric (their union, 256 cross-connects), then,
# from an empty switch again, Reconfigure {partition jobA} and {partition
# jobB} (128 each). Each figure is the transaction's own seconds as ofcd
# reports it, and the client's wall time around the request (both requests
# for the two jobs); the last row is the median of each column (a shared
# machine's other work lands on single rounds).
# sh bench/partitions.sh [ROUNDS]
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
ROUNDS=${1:-5}
TMP=$(mktemp -d)
trap 'kill $EMU $DAEMON 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
a=$(seq -s ', h' 0 31)
b=$(seq -s ', h' 32 63)
sed -e '/^topology: /d' -e 's|credentials: .*|credentials: ocs0.cred|' \
	-e "s|^collectives:|partitions:\n  - name: jobA\n    hosts: [h$a]\n    topology: torus:4x8\n  - name: jobB\n    hosts: [h$b]\n    topology: circulant:32:1,4\n\ncollectives:|" \
	configs/torus64-ocs.yaml >"$TMP/part.yaml"

start() {
	: >"$TMP/emu.state"
	rm -rf "$TMP/st" && mkdir "$TMP/st"
	rm -f "$TMP/port"
	$BUILD/ocs-emu --listen 127.0.0.1:0 --port-file "$TMP/port" --ports 256 \
		--credentials "$TMP/ocs0.cred" --state "$TMP/emu.state" 2>/dev/null &
	EMU=$!
	while [ ! -s "$TMP/port" ]; do sleep 0.01; done
	$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$TMP/part.yaml" \
		--socket "$TMP/s" --state-dir "$TMP/st" --device "ocs0=127.0.0.1:$(cat "$TMP/port")" \
		--probe-interval 0 2>/dev/null &
	DAEMON=$!
	until $OFC --socket "$TMP/s" status >/dev/null 2>&1; do sleep 0.01; done
}
stop() {
	kill $DAEMON $EMU
	wait $DAEMON $EMU 2>/dev/null
}
# one ARGS...: "operations seconds wall" of one reconfigure.
one() {
	t0=$(date +%s.%N)
	$OFC --socket "$TMP/s" reconfigure "$@" --json >"$TMP/r.json" || echo "FAILED: $*" >&2
	t1=$(date +%s.%N)
	python3 - "$TMP/r.json" "$t0" "$t1" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))['transaction']
print(t['operations'], t['seconds'], float(sys.argv[3]) - float(sys.argv[2]))
EOF
}

echo "ofcd Reconfigure on a 256-port ocs-emu, $ROUNDS rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| round | whole: ops | txn s | ms/op | wall ms | jobA+jobB: ops | txn s | ms/op | wall ms | ratio ms/op | ratio wall |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
r=1
while [ $r -le "$ROUNDS" ]; do
	start
	# The whole fabric: the config's own target (the union of the jobs).
	t0=$(date +%s.%N)
	$OFC --socket "$TMP/s" apply "$TMP/part.yaml" --json >"$TMP/r.json" 2>/dev/null || echo "FAILED: apply" >&2
	t1=$(date +%s.%N)
	set -- $(python3 -c "import json; t=json.load(open('$TMP/r.json'))['transaction']; print(t['operations'], t['seconds'], $t1 - $t0)")
	wops=$1 ws=$2 wwall=$3
	stop
	start
	set -- $(one --partition jobA)
	aops=$1 as=$2 awall=$3
	set -- $(one --partition jobB)
	bops=$1 bs=$2 bwall=$3
	stop
	python3 - "$r" "$wops" "$ws" "$wwall" "$aops" "$as" "$awall" "$bops" "$bs" "$bwall" <<'EOF' | tee -a "$TMP/rows"
import sys
r = sys.argv[1]
wops, ws, ww, aops, a, aw, bops, b, bw = [float(x) for x in sys.argv[2:]]
w = 1000 * ws / wops
p = 1000 * (a + b) / (aops + bops)
print('| %s | %d | %.3f | %.3f | %.1f | %d | %.3f | %.3f | %.1f | %.2f | %.2f |' %
      (r, wops, ws, w, 1000 * ww, aops + bops, a + b, p, 1000 * (aw + bw), p / w, (aw + bw) / ww))
EOF
	r=$((r + 1))
done
python3 - "$TMP/rows" <<'EOF'
import statistics, sys
rows = [[float(x) for x in l.strip().strip('|').split('|')[1:]] for l in open(sys.argv[1])]
m = [statistics.median(c) for c in zip(*rows)]
print('| median | %d | %.3f | %.3f | %.1f | %d | %.3f | %.3f | %.1f | %.2f | %.2f |' % tuple(m))
EOF

# The per-command overhead alone: requests that change nothing (0
# operations) on a fabric already at its target, interleaved so that the
# machine's other work falls on all three alike; median of ROUNDS x 3.
start
$OFC --socket "$TMP/s" apply "$TMP/part.yaml" >/dev/null 2>&1
us() {
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}
: >"$TMP/zero"
i=0
while [ $i -lt $((3 * ROUNDS)) ]; do
	echo "apply $(us $OFC --socket "$TMP/s" apply "$TMP/part.yaml")" >>"$TMP/zero"
	echo "jobA $(us $OFC --socket "$TMP/s" reconfigure --partition jobA)" >>"$TMP/zero"
	echo "jobB $(us $OFC --socket "$TMP/s" reconfigure --partition jobB)" >>"$TMP/zero"
	echo "status $(us $OFC --socket "$TMP/s" status)" >>"$TMP/zero"
	i=$((i + 1))
done
stop
echo
echo "| request with 0 operations | median ms | min ms | max ms |"
echo "|---|---:|---:|---:|"
python3 - "$TMP/zero" <<'EOF'
import collections, statistics, sys
t = collections.defaultdict(list)
for l in open(sys.argv[1]):
    k, v = l.split()
    t[k].append(int(v) / 1000)
for k, name in (("apply", "apply of the whole config"), ("jobA", "reconfigure --partition jobA"),
                ("jobB", "reconfigure --partition jobB"), ("status", "status (a read, for scale)")):
    print("| %s | %.1f | %.1f | %.1f |" % (name, statistics.median(t[k]), min(t[k]), max(t[k])))
EOF
