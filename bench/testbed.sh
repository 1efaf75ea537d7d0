#!/bin/sh
# Schedules executed on the netns testbed: 16 hosts as torus:4x4, every
# circuit shaped to RATE_SCALE x 1 Gb/s by tbf, each collective run with
# every algorithm that applies at 1 MiB and 64 MiB per host; prints ofc's
# table (measured, predicted, ratio, algorithm bandwidth, data check).
# MPI=1 adds MPICH's own collective on the same hosts and links (--mpi).
# Needs root; skipped otherwise. Results: bench/results/testbed.md.
#   RATE_SCALE=0.05 SIZES="1MiB 64MiB" COLLECTIVES="allreduce alltoall" sh bench/testbed.sh
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
RATE_SCALE=${RATE_SCALE:-0.05}
SIZES=${SIZES:-1MiB 64MiB}
COLLECTIVES=${COLLECTIVES:-allgather allreduce alltoall}
MPIFLAG=""
[ "${MPI:-0}" = 1 ] && MPIFLAG="--mpi"
if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "testbed bench: SKIP (needs root and network namespaces)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
NAME="bench$$"
sed -e "s|^name: tb16|name: $NAME|" -e "s|^  ports: 4|  ports: 4\n  port_rate: 1Gbps|" \
	-e '/driver:/,$d' tests/configs/tb16-torus.yaml >"$TMP/t.yaml"
cat >>"$TMP/t.yaml" <<EOT
wiring:
  pattern: sequential
  switches: [ocs0]
topology: torus:4x4
EOT
cleanup() {
	$OFC testbed down "$TMP/t.yaml" --state-dir "$TMP/st" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
$OFC testbed up "$TMP/t.yaml" --state-dir "$TMP/st" --rate-scale "$RATE_SCALE" || exit 1
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for c in $COLLECTIVES; do
	for s in $SIZES; do
		$OFC testbed run "$TMP/t.yaml" --state-dir "$TMP/st" --collective "$c" --algo all \
			--size "$s" $MPIFLAG || status=1
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
