#!/bin/sh
# The testbed's model against measurements: 8 hosts of 4 ports as network
# namespaces, wired in turn as torus:2x4, circulant:8:1,3, ring:8 and
# hypercube:3 (the config's circuits: no switch driver), every circuit
# shaped to RATE by tbf; testbed check calibrates alpha and judges its
# reference run, then every allreduce algorithm runs at each of SIZES.
# Prints one line per run: topology, algorithm, size, measured,
# predicted (alpha + bytes), ratio, and the model's verdict.
# HOSTS=N runs N hosts instead (TOPOLOGIES for them); CONFIG=FILE a
# shipped config's hosts (count, ports) and topology, at RATE.
# Needs root; skipped otherwise. Results: bench/results/testbed.md.
#   RATE=30Mbps SIZES="4MiB 16MiB 64MiB" sh bench/testbed_model.sh
#   CONFIG=configs/testbed12-patch.yaml SIZES=16MiB sh bench/testbed_model.sh
#   CONFIG=configs/testbed16-ocs.yaml RATE=8Mbps sh bench/testbed_model.sh
#     (16 hosts: at 8 Mb/s tbf, not 2 shared cores, sets the pace)
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
RATE=${RATE:-30Mbps}
SIZES=${SIZES:-4MiB 16MiB 64MiB}
HOSTS=${HOSTS:-8}
PORTS=4
TOPOLOGIES=${TOPOLOGIES:-torus:2x4 circulant:8:1,3 ring:8 hypercube:3}
if [ -n "$CONFIG" ]; then
	# (its hosts as a list or a count; every host's ports alike)
	set -- $(python3 -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
h, t = c["hosts"], c["topology"]
n, p = (len(h), h[0]["ports"]) if isinstance(h, list) else (h["count"], h["ports"])
print(n, p, t["spec"] if isinstance(t, dict) else t)' "$CONFIG") || exit 1
	HOSTS=$1 PORTS=$2 TOPOLOGIES=$3
	echo "$CONFIG: $HOSTS hosts of $PORTS ports, $TOPOLOGIES, circuits at $RATE"
fi
if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "testbed model bench: SKIP (needs root and network namespaces)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
NAME="tbm$$"
cleanup() {
	$OFC testbed down "$TMP/t.yaml" --state-dir "$TMP/st" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for topo in $TOPOLOGIES; do
	cat >"$TMP/t.yaml" <<EOF
version: 1
name: $NAME
hosts: {count: $HOSTS, prefix: h, ports: $PORTS, port_rate: $RATE}
switches:
  - {name: ocs0, type: ocs, ports: $((HOSTS * PORTS)), reconfig_time: 10ms}
wiring: {pattern: sequential, switches: [ocs0]}
topology: $topo
EOF
	$OFC testbed up "$TMP/t.yaml" --state-dir "$TMP/st" --rate-scale 1 >/dev/null || exit 1
	$OFC testbed check "$TMP/t.yaml" --state-dir "$TMP/st" --json >"$TMP/check.json" || status=1
	python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["calibration"]; print("%s: check: circuit %.2f Mb/s, alpha %.0f us; %s %d MiB %.3f s / %.3f s = %.3f: %s" % (sys.argv[2], c["rate_bps"]/1e6, c["alpha_s"]*1e6, c["algorithm"], c["size"]>>20, c["measured_s"], c["predicted_s"], c["ratio"], c["model"]))' "$TMP/check.json" "$topo"
	for size in $SIZES; do
		$OFC testbed run "$TMP/t.yaml" --state-dir "$TMP/st" --collective allreduce \
			--algo all --size "$size" --json >"$TMP/run.json" || status=1
		python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["runs"]:
    if not r["ran"]:
        print("| %s | %s | %s | failed: %s |" % (sys.argv[2], r["algorithm"], sys.argv[3], r["error"]))
        continue
    print("| %s | %s | %s | %d | %.3f | %.3f (%.4f + %.3f) | %.3f | %s |" % (sys.argv[2], r["algorithm"], sys.argv[3], r["circuits_used"], r["measured_s"], r["predicted_s"], r["predicted_alpha_s"], r["predicted_bytes_s"], r["ratio"], "data ok" if r["data_ok"] else "DATA WRONG"))
' "$TMP/run.json" "$topo" "$size"
	done
	$OFC testbed down "$TMP/t.yaml" --state-dir "$TMP/st" >/dev/null
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
