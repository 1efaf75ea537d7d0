#!/bin/sh
# MSCCL XML export (ofc schedule --format msccl): programs for BFB allgather
# and allreduce on torus:4x4 and genkautz:16,2 (and the other collectives)
# are replayed by an independent reader (msccl_replay.py) in several
# interleavings and must compute their collective, within the limits of
# the runtime they are for (msccl-executor-nccl's by default, the legacy
# MSCCL's by --msccl-runtime legacy); broken programs (a send removed, a
# reduction turned into a copy, the dependencies stripped) must be caught
# by the same reader.
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
# The default all-to-all on 64 nodes, written for msccl-executor-nccl (its
# parser reads fewer than 4,096 XML nodes a rank, 64 steps a thread block):
# lowered to paths, as fast in the cost model, a send per path, within
# every limit the replay checks as the runtime's parser does. The
# time-stepped lowering is over the node limit (torus:8x8 8,033 nodes a
# rank, hypercube:6 5,569) and refused, the limit and the excess named,
# nothing written; for the legacy runtime (256 steps a thread block) it
# is spread over channels and refused the same (its parser has the same
# MAX_NODES).
for t in torus:8x8 hypercube:6; do
	expect_exit 0 $OFC schedule --topology $t --collective alltoall --size 64KiB \
		--format msccl -o "$TMP/a2a64.xml"
	grep -q "^ofc schedule: MSCCL program: the all-to-all lowered to paths" "$TMP/err" &&
		grep -q "XML nodes a rank at most (msccl-executor-nccl's limits)" "$TMP/err" && ok ||
		bad "$t: the all-to-all lowered to paths for the runtime" "$(cat "$TMP/err")"
	expect_stdout_has "alltoall on 64 gpus" $REPLAY --orders 1 "$TMP/a2a64.xml"
	for rt in executor legacy; do
		rm -f "$TMP/steps.xml"
		expect_exit 2 $OFC schedule --topology $t --collective alltoall --size 64KiB \
			--lowering steps --msccl-runtime $rt --format msccl -o "$TMP/steps.xml"
		grep -q "^ofc[a-z ]*: rank [0-9]*'s program is [0-9]* XML nodes (.*), [0-9]* over the 4095 .*parser reads for a rank (MAX_NODES 4096): --lowering paths" "$TMP/err" &&
			[ ! -e "$TMP/steps.xml" ] && ok ||
			bad "$t --lowering steps ($rt): refused, the node limit named" "$(cat "$TMP/err")"
	done
done
# The replay holds a program to its runtime's limits: the legacy MSCCL's
# 256 steps a thread block take a program the executor's 64 refuse.
expect_exit 0 $OFC schedule --topology torus:4x4 --collective alltoall --size 1MiB --lowering steps \
	--msccl-runtime legacy --format msccl -o "$TMP/legacy.xml"
expect_stdout_has "alltoall on 16 gpus" $REPLAY --runtime legacy "$TMP/legacy.xml"
python3 -c "
import re, sys
x = open(sys.argv[1]).read()
sys.exit(0 if any(len(re.findall('<step ', t)) > 64 for t in x.split('</tb>')) else 1)" "$TMP/legacy.xml" &&
	ok || bad "the legacy program has no thread block past the executor's 64 steps"
expect_exit 1 $REPLAY "$TMP/legacy.xml"
grep -q "over 64 steps" "$TMP/out" && ok || bad "the replay names the executor's 64 steps" "$(cat "$TMP/out")"
expect_exit 0 $OFC schedule --topology torus:4x4 --collective alltoall --size 1MiB --lowering steps \
	--format msccl -o "$TMP/exec.xml"
expect_stdout_has "alltoall on 16 gpus" $REPLAY "$TMP/exec.xml"
expect_error 2 "ofc schedule: bad --msccl-runtime 'nccl': executor or legacy" $OFC schedule --topology torus:4x4 \
	--collective allgather --size 1MiB --msccl-runtime nccl --format msccl -o "$TMP/x"
# Server fabrics (16 GPUs behind NVSwitch, PCIe, host memory and NICs):
# each part that reaches a GPU is a send from the GPU it left, the
# reductions turned round, checked by the verifier on the GPUs alone and
# replayed here. Where a relay copied (host memory sending one part to
# several GPUs, all links) the part crosses the rails once and is
# forwarded inside the server.
for f in all-links-2 only-nvlink-2; do
	for c in allgather reduce-scatter allreduce; do
		# (all-links-2's allreduce: with the larger ones below)
		[ $f$c = all-links-2allreduce ] && continue
		expect_exit 0 $OFC schedule examples/modelw/$f.yaml --collective $c \
			--format msccl -o "$TMP/fab-$c.xml" --json
		cp "$TMP/out" "$TMP/fab-$c.json"
		grep -q "^ofc schedule: MSCCL program on 16 GPUs (verified on them): " "$TMP/err" &&
			grep -q "^ofc schedule: approximated: the hops through switches, memory and NICs are the runtime's" "$TMP/err" &&
			ok || bad "$f $c: the export's lines" "$(cat "$TMP/err")"
		cp "$TMP/err" "$TMP/fab-$c.err"
		expect_stdout_has "$(echo $c | tr -d -) on 16 gpus" $REPLAY --orders 2 "$TMP/fab-$c.xml"
	done
	# the program's own price (its chain of sends, its busiest arc)
	# beside the planned time and the optimum, each gap said
	grep -Eq "^ofc schedule: the program's own price: [0-9.e-]+ s \(its critical path [0-9]+ sends, [0-9.e-]+ s; its busiest arc s[01]/[a-z0-9]+ -> s[01]/[a-z0-9]+, [0-9.e-]+ GB, [0-9.e-]+ s\); planned [0-9.e-]+ s: [-+][0-9.]+%; optimum [0-9.e-]+ s: [-+][0-9.]+%$" \
		"$TMP/fab-allgather.err" && ok || bad "$f: the program's own price" "$(cat "$TMP/fab-allgather.err")"
	# its chunk count the one of 1-71 its price is lowest at: within 2%
	# of the optimum on NVLink alone (5.6% over at the 64 it had), and
	# within 10% of the planned time with all links
	gaps=$(sed -n "s/.*planned [0-9.e-]* s: \([-+0-9.]*\)%; optimum [0-9.e-]* s: \([-+0-9.]*\)%$/\1 \2/p" \
		"$TMP/fab-allgather.err")
	# (all links: host memory's copies of a part from the other server
	# cross the rails once and are forwarded inside the server, so the
	# program is within 2% of the optimum too: +3.3% when the GPUs sent
	# each copy over the rails again)
	python3 -c "import sys; p, o = map(float, sys.argv[1:]); sys.exit(not (o < 2 and p < 10))" \
		$gaps && ok || bad "$f allgather: the program's price too far from the optimum" "$gaps"
	# the program's loads priced on the fabric step by step are the
	# schedule's: nothing crosses the rails twice (1.76x with all links
	# when it did)
	ratio=$(sed -n 's/.*schedule.s [0-9.e-]* (x\([0-9.]*\))$/\1/p' "$TMP/fab-allgather.err")
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) <= 1.01)" "$ratio" && ok ||
		bad "$f: the program's loads over the schedule's" "$ratio"
	# the summary's detail says the program and its price, as stderr does
	python3 - "$TMP/fab-allgather.json" "$TMP/fab-allgather.err" <<'PY' && ok || bad "$f: the summary's msccl" "$(cat "$TMP/fab-allgather.json")"
import json, re, sys
m = json.load(open(sys.argv[1]))["msccl"]
e = open(sys.argv[2]).read()
price, opt, gap = re.search(r"own price: ([0-9.e-]+) s .*optimum ([0-9.e-]+) s: ([-+0-9.]+)%", e).groups()
q = re.search(r"(\d+) chunks per block", e).group(1)
assert m["runtime"] == "executor" and m["chunks_per_block"] == int(q), m
assert abs(m["price_s"] / float(price) - 1) < 1e-5 and abs(m["optimum_s"] / float(opt) - 1) < 1e-5, m
assert abs(100 * m["gap_optimum"] - float(gap)) < 0.01 and m["price_s"] >= m["critical_path_s"], m
assert m["price_s"] == max(m["critical_path_s"], m["busiest_s"]) and " -> " in m["busiest"], m
PY
	# which it chose, said: forwarding where it prices lower (all links),
	# none where nothing crosses twice (NVLink alone)
	if [ $f = all-links-2 ]; then want="but across the network once a server ([0-9]* sends forwarded inside it)"
	else want="from its source (none forwarded inside a server)"; fi
	grep -q "a part a relay copied is sent once per GPU, $want" "$TMP/fab-allgather.err" && ok ||
		bad "$f: the forwarding said" "$(cat "$TMP/fab-allgather.err")"
done
# Model W's server fabrics up to 8 servers: each export fits
# msccl-executor-nccl and replays; where the engine's K is over the
# runtime's limits the export lays the schedule out again at the most
# chunks it takes and says so (docs/msccl.md).
# (all of them: bench/msccl_fabrics.sh, bench/results/msccl.md; 64 GPUs
# need two peer groups of channels: at most 32 send and 32 receive peers
# a channel)
for case in "all-links-2 allreduce" "no-nvlink-2 allreduce" "all-links-4 allgather" \
	"only-nvlink-4 allreduce" "only-nvlink-8 reduce-scatter" "all-links-3 allgather"; do
	set -- $case
	rm -f "$TMP/w.xml"
	expect_exit 0 $OFC schedule examples/modelw/$1.yaml --collective $2 --format msccl -o "$TMP/w.xml"
	[ $1$2 = only-nvlink-4allreduce ] && cp "$TMP/err" "$TMP/on4.err"
	[ $1$2 = all-links-2allreduce ] && cp "$TMP/err" "$TMP/al2.err"
	[ $1$2 = all-links-3allgather ] && cp "$TMP/err" "$TMP/al3.err"
	expect_stdout_has "$(echo $2 | tr -d -) on" $REPLAY --orders 1 "$TMP/w.xml"
done
grep -q "^ofc schedule: K = 24 chunks, the most within msccl-executor-nccl's limits (the engine's 50 are over them): " \
	"$TMP/on4.err" && ok || bad "only-nvlink-4 allreduce: K lowered for the runtime" "$(cat "$TMP/on4.err")"
# all-links-2's allreduce: forwarding inside the servers is over the
# runtime's limits at the engine's K; at the most chunks where it fits its
# own price is lower than the engine's K without (+3.3% over the
# optimum), so that is written, within 2% of the optimum
grep -q "^ofc schedule: K = [0-9]* chunks, the most at which forwarding inside a server fits msccl-executor-nccl's limits, its own price lower than at K = 70 without: " \
	"$TMP/al2.err" && ok || bad "all-links-2 allreduce: forwarding at a lower K" "$(cat "$TMP/al2.err")"
gap=$(sed -n "s/.*optimum [0-9.e-]* s: \([-+0-9.]*\)%$/\1/p" "$TMP/al2.err")
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 2)" "$gap" && ok ||
	bad "all-links-2 allreduce: the program's price over the optimum" "$gap"
# three servers (an odd count: no pairing of servers to lean on)
gap=$(sed -n "s/.*optimum [0-9.e-]* s: \([-+0-9.]*\)%$/\1/p" "$TMP/al3.err")
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 2)" "$gap" && ok ||
	bad "all-links-3 allgather: the program's price over the optimum" "$gap" "$(cat "$TMP/al3.err")"
# A K asked for is not lowered: over the limits, refused with the limit
# named and by how much, nothing written.
rm -f "$TMP/w.xml"
expect_exit 2 $OFC schedule examples/modelw/only-nvlink-4.yaml --collective allreduce --chunks 50 \
	--format msccl -o "$TMP/w.xml"
grep -q "XML nodes (.*), [0-9]* over the 4095 msccl-executor-nccl's parser reads for a rank (MAX_NODES 4096)" "$TMP/err" &&
	[ ! -e "$TMP/w.xml" ] && ok || bad "--chunks 50: refused without the limit" "$(cat "$TMP/err")"
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
