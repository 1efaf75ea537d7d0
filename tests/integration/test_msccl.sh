#!/bin/sh
# MSCCL XML export (ofc schedule --format msccl): programs for BFB allgather
# and allreduce on torus:4x4 and genkautz:16,2 (and the other collectives)
# are replayed by an independent reader (msccl_replay.py) in several
# interleavings and must compute their collective; broken programs (a send
# removed, a reduction turned into a copy, the dependencies stripped) must
# be caught by the same reader.
SUITE=msccl
. "$(dirname "$0")/lib.sh"
REPLAY="python3 tests/integration/msccl_replay.py"

replays() {
	expect_stdout_has "$1 on 16 gpus" $REPLAY "$2"
}
for t in torus:4x4 genkautz:16,2; do
	for c in allgather allreduce; do
		expect_exit 0 $OFC schedule --topology "$t" --collective $c --algo bfb --size 1MiB \
			--format msccl -o "$TMP/$c-$t.xml"
		replays $c "$TMP/$c-$t.xml"
	done
done
expect_exit 0 $OFC schedule --topology torus:4x4 --collective reduce-scatter --size 1MiB \
	--format msccl -o "$TMP/rs.xml"
replays reducescatter "$TMP/rs.xml"
expect_exit 0 $OFC schedule --topology genkautz:16,2 --collective alltoall --size 1MiB \
	--format msccl -o "$TMP/a2a.xml"
replays alltoall "$TMP/a2a.xml"
# The default all-to-all (MCF lowered to time steps) on 64 nodes carries
# hundreds of operations a link: the writer spreads each link over
# channels (torus:8x8 4, hypercube:6 2) and, its bounds rounded anyway,
# takes fewer chunks a block so the relays' scratch offsets fit MSCCL's
# int16_t; the replay checks every limit of msccl-executor-nccl's parser
# (two interleavings: half a million steps).
for t in torus:8x8 hypercube:6; do
	expect_exit 0 $OFC schedule --topology $t --collective alltoall --size 64KiB \
		--format msccl -o "$TMP/a2a64.xml"
	grep -q "MSCCL program: [0-9]* chunks per block (bounds rounded), [2-9] channels" "$TMP/err" && ok ||
		bad "$t: the all-to-all spread over channels" "$(cat "$TMP/err")"
	expect_stdout_has "alltoall on 64 gpus" $REPLAY --orders 2 "$TMP/a2a64.xml"
done
# Server fabrics (16 GPUs behind NVSwitch, PCIe, host memory and NICs):
# each part that reaches a GPU is a send from the GPU it left, the
# reductions turned round, checked by the verifier on the GPUs alone and
# replayed here. Where a relay copied (host memory sending one part to
# several GPUs, all links) the program sends it once per GPU and its
# loads priced on the fabric are higher; on NVLink alone they are the
# schedule's.
for f in all-links-2 only-nvlink-2; do
	for c in allgather reduce-scatter allreduce; do
		expect_exit 0 $OFC schedule examples/modelw/$f.yaml --collective $c \
			--format msccl -o "$TMP/fab-$c.xml"
		grep -q "^ofc schedule: MSCCL program on 16 GPUs (verified on them): " "$TMP/err" &&
			grep -q "^ofc schedule: approximated: the hops through switches, memory and NICs are the runtime's" "$TMP/err" &&
			ok || bad "$f $c: the export's lines" "$(cat "$TMP/err")"
		cp "$TMP/err" "$TMP/fab-$c.err"
		expect_stdout_has "$(echo $c | tr -d -) on 16 gpus" $REPLAY --orders 2 "$TMP/fab-$c.xml"
	done
	ratio=$(sed -n 's/.*schedule.s [0-9.e-]* (x\([0-9.]*\))$/\1/p' "$TMP/fab-allgather.err")
	if [ $f = all-links-2 ]; then
		python3 -c "import sys; sys.exit(not float(sys.argv[1]) > 1.2)" "$ratio" && ok ||
			bad "all-links-2: memory's copies sent once per GPU should price higher" "$ratio"
	else
		[ "$ratio" = 1.000 ] && ok || bad "only-nvlink-2: nothing copied, the same price" "$ratio"
	fi
done
# On a fabric: transfers on NIC ports, chunked BFB (exact at 2 chunks).
expect_exit 0 $OFC schedule tests/configs/tb16-torus.yaml --collective allreduce --chunks 2 \
	--size 1MiB --format msccl -o "$TMP/fab.xml"
grep -q 'nchunksperloop="32" ngpus="16" coll="allreduce"' "$TMP/fab.xml" && ok || bad "2 chunks per block on 16 ranks" "$(sed -n 2p "$TMP/fab.xml")"
replays allreduce "$TMP/fab.xml"

# The reader is not fooled.
ag="$TMP/allgather-torus:4x4.xml"
line=$(grep -n 'type="s"' "$ag" | sed -n 5p | cut -d: -f1)
sed "${line}d" "$ag" >"$TMP/bad1.xml"
expect_exit 1 $REPLAY "$TMP/bad1.xml"
ar="$TMP/allreduce-torus:4x4.xml"
awk '/type="rrc"/ && !d {sub(/type="rrc"/, "type=\"r\""); d = 1} {print}' "$ar" >"$TMP/bad2.xml"
expect_exit 1 $REPLAY "$TMP/bad2.xml"
sed 's/depid="[0-9]*" deps="[0-9]*"/depid="-1" deps="-1"/' "$ar" >"$TMP/bad3.xml"
expect_exit 1 $REPLAY "$TMP/bad3.xml"

# A WDM ring's schedule is refused before any work, and nothing is written.
expect_error 2 "ofc schedule: --format msccl is for direct-connect schedules; a WDM ring's schedule is written as json, text or pb" \
	$OFC schedule configs/ring16-optree.yaml --collective allgather --format msccl -o "$TMP/ring.xml"
[ ! -e "$TMP/ring.xml" ] && ok || bad "a refused ring schedule still wrote $TMP/ring.xml" "$(head -c 200 "$TMP/ring.xml")"
expect_error 2 "ofc schedule: unknown format 'xml' (text, json, pb or msccl)" $OFC schedule --topology torus:4x4 \
	--collective allgather --size 1MiB --format xml -o "$TMP/x"
finish
