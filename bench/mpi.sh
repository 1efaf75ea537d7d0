#!/bin/sh
# libofc-mpi against the MPIs' own collectives (docs/mpi.md). Results:
# bench/results/mpi.md.
#
# 1. The library's own cost on this machine's loopback: 2 ranks, an 8-byte
#    MPI_Allreduce ITERS times (bench/mpi/ofc_mpi_bench.c), the MPI alone,
#    the library with no schedule (every call counted and handed to the
#    MPI) and the library running ofc's ring:2 schedule; ROUNDS rounds in
#    turn, the least and the median per call of each.
# 2. On the netns testbed (root): HOSTS hosts of 4 ports wired as TOPOLOGY,
#    circuits shaped to RATE (no switch driver: the config's circuits), for
#    MPICH and Open MPI, each collective at each of SIZES: one call by `ofc
#    testbed mpirun` with the library and one with --no-preload, the bytes
#    the circuits carried for it (the job's less an 8-byte job's: MPI_Init,
#    the library's names and its report), the bytes ofc's schedule sends,
#    the time of the call (the program's timed one, the slowest rank's) and
#    ofc's prediction for it (its cost model at RATE, alpha 10 us).
#    PIECES="0 default": the library's runs once for each OFC_MPI_PIECE
#    given, in turn (0: messages not cut, as before the library cut them
#    under the MPI's eager limit; default: the library's own choice).
#   sh bench/mpi.sh
#   SIZES="16MiB" COLLS=allreduce sh bench/mpi.sh
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
BENCH=$(pwd)/$BUILD/bench-mpi/ofc-mpi-bench
ITERS=${ITERS:-20000}
ROUNDS=${ROUNDS:-5}
HOSTS=${HOSTS:-16}
TOPOLOGY=${TOPOLOGY:-torus:4x4}
RATE=${RATE:-100Mbps}
SIZES=${SIZES:-1KiB 1MiB 16MiB}
COLLS=${COLLS:-allreduce allgather reduce-scatter alltoall}
MPIS=${MPIS:-mpich openmpi}
PIECES=${PIECES:-default}
for f in "$BENCH" "$BENCH-openmpi" "$BUILD/libofc-mpi.so" "$BUILD/libofc-mpi-openmpi.so"; do
	[ -e "$f" ] || { echo "mpi bench: $f is missing (make mpi)"; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
NAME="mpb$$"
cleanup() {
	$OFC testbed down "$TMP/t.yaml" --state-dir "$TMP/st" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# 1. The overhead at 8 bytes.
$OFC schedule --topology ring:2 --collective allreduce --size 8 --format pb -o "$TMP/ar2.pb" \
	>/dev/null || exit 1
# one MPI LIB SCHED: seconds per call of one run
one() {
	if [ "$1" = mpich ]; then
		mpiexec -n 2 -bind-to core ${2:+-genv LD_PRELOAD $2} ${3:+-genv OFC_SCHEDULE $3} \
			"$BENCH" allreduce 8 "$ITERS"
	else
		LD_PRELOAD=$2 OFC_SCHEDULE=$3 mpiexec.openmpi -n 2 --bind-to core -x LD_PRELOAD \
			-x OFC_SCHEDULE "$BENCH-openmpi" allreduce 8 "$ITERS"
	fi | python3 -c 'import json, sys; print(json.load(sys.stdin)["seconds"])'
}
echo "1. 8-byte MPI_Allreduce on loopback, 2 ranks, $ITERS calls, $ROUNDS rounds: us per call (least, median)"
for mpi in $MPIS; do
	lib=$BUILD/libofc-mpi.so
	[ $mpi = openmpi ] && lib=$BUILD/libofc-mpi-openmpi.so
	: >"$TMP/own" && : >"$TMP/pass" && : >"$TMP/ofc"
	for r in $(seq "$ROUNDS"); do
		one $mpi "" "" >>"$TMP/own"
		one $mpi "$lib" "" >>"$TMP/pass"
		one $mpi "$lib" "$TMP/ar2.pb" >>"$TMP/ofc"
	done
	python3 - "$mpi" "$TMP/own" "$TMP/pass" "$TMP/ofc" <<'EOF'
import statistics, sys
row = [sys.argv[1]]
for f, what in zip(sys.argv[2:], ("the MPI alone", "library, no schedule", "library, ofc's ring:2")):
    v = sorted(float(x) * 1e6 for x in open(f).read().split())
    row.append("%s %.2f, %.2f" % (what, v[0], statistics.median(v)))
print("  " + " | ".join(row))
EOF
done

# 2. The testbed.
if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "2. testbed: SKIP (needs root and network namespaces)"
	exit 0
fi
cat >"$TMP/t.yaml" <<EOF
version: 1
name: $NAME
hosts: {count: $HOSTS, prefix: h, ports: 4, port_rate: $RATE}
switches:
  - {name: ocs0, type: ocs, ports: $((HOSTS * 4)), reconfig_time: 10ms}
wiring: {pattern: sequential, switches: [ocs0]}
topology: $TOPOLOGY
EOF
$OFC testbed up "$TMP/t.yaml" --state-dir "$TMP/st" --rate-scale 1 | tail -1 || exit 1
# run MPI PRELOAD SIZE BYTES: the JSON of one call
run() {
	prog=$BENCH
	[ "$1" = openmpi ] && prog=$BENCH-openmpi
	$OFC testbed mpirun "$TMP/t.yaml" --state-dir "$TMP/st" --json --mpi "$1" $2 \
		--size "$3" --timeout 600 -- "$prog" "$COLL" "$4" 1 2>>"$TMP/err"
}
echo "2. $HOSTS hosts as $TOPOLOGY, circuits at $RATE; one call each"
echo "  mpi      collective     size    circuit_MB(ofc) circuit_MB(own) schedule_MB  s(ofc)   s(own)  predicted_s  piece"
for mpi in $MPIS; do
	for COLL in $COLLS; do
		run $mpi "" 1KiB $((HOSTS * 4)) >"$TMP/base-ofc.json" || exit 1
		run $mpi --no-preload 1KiB $((HOSTS * 4)) >"$TMP/base-own.json" || exit 1
		for size in $SIZES; do
			bytes=$(python3 -c "import sys; s=sys.argv[1]; print(int(s[:-3]) * {'KiB': 1024, 'MiB': 1 << 20}[s[-3:]])" $size)
			run $mpi --no-preload $size $bytes >"$TMP/own.json" || exit 1
			for piece in $PIECES; do
				if [ "$piece" = default ]; then
					run $mpi "" $size $bytes >"$TMP/ofc.json" || exit 1
				else
					OFC_MPI_PIECE=$piece run $mpi "" $size $bytes >"$TMP/ofc.json" ||
						exit 1
				fi
				python3 - "$mpi" "$COLL" "$size" "$TMP" <<'EOF'
import json, sys
mpi, coll, size, d = sys.argv[1:]
j = {k: json.load(open("%s/%s.json" % (d, k))) for k in ("ofc", "own", "base-ofc", "base-own")}
name = {"allreduce": "MPI_Allreduce", "allgather": "MPI_Allgather",
        "reduce-scatter": "MPI_Reduce_scatter_block", "alltoall": "MPI_Alltoall"}[coll]
def call(x):
    c = [c for c in j[x]["collectives"] if c["name"] == name][0]
    return c
o, w = call("ofc"), call("own")
secs = lambda x: json.loads([l for l in j[x]["output"].splitlines() if l.startswith('{"collective"')][-1])["seconds"]
sched = [s for s in j["ofc"]["schedules"] if s["collective"] == coll][0]
ok = o["ofc_calls"] == o["calls"] > 0 and w["ofc_calls"] == 0
# (two calls: the program's untimed one and its one timed; the bytes per call)
per = lambda x, b: (j[x]["circuit_bytes"] - j[b]["circuit_bytes"]) / 2 / 1e6
print("  %-8s %-14s %-6s %15.2f %15.2f %11.2f %8.3f %8.3f %11.3f  %5d%s" % (
    mpi, coll, size, per("ofc", "base-ofc"), per("own", "base-own"), o["sent_bytes"] / 2 / 1e6,
    secs("ofc"), secs("own"), sched["time_us"] / 1e6, j["ofc"].get("piece_bytes", -1),
    "" if ok else "  (calls not as expected)"))
EOF
			done
		done
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
