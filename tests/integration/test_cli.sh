#!/bin/sh
# Sharp edges of `ofc` that operators hit: option errors that name
# the real reason, bare seconds, -o - keeping stdout one document, DOT
# pictures graphviz accepts.
SUITE=cli
. "$(dirname "$0")/lib.sh"

S="$OFC schedule --topology torus:4x4 --collective allreduce"
# --size 0 is a usage error, not a crash.
expect_error 2 "ofc schedule: bad --size '0': must be more than 0" $S --size 0
expect_error 2 "ofc finder: bad --size '0': must be more than 0" $OFC finder --nodes 16 --degree 4 --size 0
# Each error names the parser's reason.
expect_error 2 "ofc schedule: bad --bandwidth '100Gbs': expected a rate such as 40Gbps, 100Gb/s or 12.5GB/s" $S --size 1MiB --bandwidth 100Gbs
# A bare prefix is bits per second, as port speeds are named: 100G is 100Gbps.
expect_json 'j["bandwidth_bps"]==100e9' $S --size 1MiB --bandwidth 100G --json
expect_error 2 "ofc schedule: bad --bandwidth '0Gbps': must be more than 0" $S --size 1MiB --bandwidth 0Gbps
expect_error 2 "ofc finder: bad --nodes '16x': expected a whole number" $OFC finder --nodes 16x --degree 4
expect_error 2 "ofc schedule: option '--collective' needs a value" $OFC schedule --topology torus:4x4 --collective
expect_error 2 "ofc schedule: option '-o' needs a value" $S --size 1MiB -o
expect_error 2 "ofc schedule: unknown option '--colective'" $S --colective allreduce
# A command's options before `testbed ACTION` are the action's (they were
# taken for the command word, and ofc said testbed does not talk to ofcd);
# options between testbed and its action: said so.
expect_error 2 "ofc --socket PATH testbed mpirun: bad --timeout 'x': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" \
	$OFC --timeout x --socket "$TMP/none.sock" testbed mpirun -- /bin/true
expect_error 2 "ofc --socket PATH testbed up: bad --rate-scale '2': expected a number above 0 and at most 1" \
	$OFC --rate-scale 2 testbed up --socket "$TMP/none.sock"
expect_error 2 "ofc: testbed --timeout: the action (up, run, check, down or mpirun) comes right after 'testbed', its options after it: testbed ACTION [OPTIONS]" \
	$OFC --socket "$TMP/none.sock" testbed --timeout 1 mpirun -- /bin/true
expect_error 2 "ofc: unknown testbed action 'bogus' (ofcd runs up, run, check, down and mpirun)" \
	$OFC --socket "$TMP/none.sock" testbed bogus
# The remote commands' options are rows too: a bad value names the option.
expect_error 2 "ofc --socket PATH drain: bad --grace '601s': at most 600 s" \
	$OFC --socket "$TMP/none.sock" drain ocs0 --grace 601s
expect_error 2 "ofc --socket PATH testbed run: bad --size '0': must be more than 0" \
	$OFC --socket "$TMP/none.sock" testbed run --size 0
expect_error 2 "ofc rwa: bad --nodes '70000': must be 2..65535 (node ids in a schedule are 16 bits)" $OFC rwa --nodes 70000 --wavelengths 2 --pattern all-to-all
# Options read from each command's table (util/opts.c): a bad value of
# each kind is refused, exit 2, naming the option and the value: a whole
# number (a word, past its range), a size, a rate, a duration, a choice, a
# collective, a format two flags disagree on, a missing value.
expect_error 2 "ofc topo: bad --threads 'many': expected a whole number" $OFC topo ring:4 --threads many
expect_error 2 "ofc topo: bad --threads '65': must be 0..64" $OFC topo ring:4 --threads 65
expect_error 2 "ofc optree: bad --block-size '0': must be more than 0" $OFC optree --nodes 16 --wavelengths 2 --block-size 0
expect_error 2 "ofc finder: bad --bandwidth 'fast': expected a rate such as 40Gbps, 100Gb/s or 12.5GB/s" $OFC finder --nodes 16 --degree 4 --bandwidth fast
expect_error 2 "ofc metrics: bad --timeout 'soon': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" $OFC metrics --timeout soon
expect_error 2 "ofc rwa: bad --engine 'cplex': heuristic, ilp or lp" $OFC rwa --nodes 8 --wavelengths 2 --pattern all-to-all --engine cplex
expect_error 2 "ofc schedule: bad --collective 'gossip': expected allgather, reduce-scatter, allreduce or alltoall (fluid: also broadcast and reduce)" $S --collective gossip
expect_error 2 "ofc show: --json and --format ask for different formats: give one" $OFC show configs/torus64-ocs.yaml --json --format dot
expect_error 2 "ofc ring: option '--size' needs a value" $OFC ring run configs/ring16-optree.yaml --collective allgather --size
# A staged apply is ofcd's (it publishes each stage's schedule first):
# without --socket it is refused as such, not as an unknown option.
expect_error 2 "ofc apply: --max-loss: a staged apply runs through ofcd, which publishes each stage's schedule before its circuits go: give --socket PATH (or --server URL); without them, apply moves every circuit in one transaction" \
	$OFC apply configs/torus64-ocs.yaml --max-loss 25% --state-dir "$TMP/none"
expect_error 2 "ofc apply: --grace: a staged apply runs through ofcd, which publishes each stage's schedule before its circuits go: give --socket PATH (or --server URL); without them, apply moves every circuit in one transaction" \
	$OFC apply configs/torus64-ocs.yaml --grace 1s --state-dir "$TMP/none"
[ ! -e "$TMP/none" ] && ok || bad "a refused staged apply made its state directory"
# The holds offline plan --max-loss stages around: a held file that is
# not ofcd's is named, an error in the directory given, a note (the plan
# made without the holds) in the default one
mkdir -p "$TMP/sd" && echo garbage >"$TMP/sd/torus64-ocs.held"
expect_error 1 "ofc: $TMP/sd/torus64-ocs.held: not ofcd's held partitions (8 bytes): the file is damaged" \
	$OFC plan configs/torus64-ocs.yaml --topology circulant:64:1,8 --max-loss 25% --state-dir "$TMP/sd"
expect_stdout_has "  held partitions are not known: $TMP/sd/torus64-ocs.held: not ofcd's held partitions (8 bytes): the file is damaged (ofcd's plan goes around them: ofc --socket PATH reconfigure --topology circulant:64:1,8 --max-loss 25% --dry-run)" \
	env OFC_STATE_DIR="$TMP/sd" $OFC plan configs/torus64-ocs.yaml --topology circulant:64:1,8 --max-loss 25%
# --help is written from the same rows: each option the table holds is there.
$OFC topo --help >"$TMP/topo.help" && grep -q "^  --threads N  " "$TMP/topo.help" && grep -q "^  -o OUT  " "$TMP/topo.help" &&
	grep -qxF "usage: ofc topo SPEC [--json | --dot] [--ports] [--format text|json|dot|pb]" "$TMP/topo.help" &&
	grep -qxF "                [-o OUT] [--threads N]" "$TMP/topo.help" && ok ||
	bad "ofc topo --help: not its table's rows" "$(cat "$TMP/topo.help")"
# A bare number is seconds.
expect_json 'j["num_steps"]>0' $OFC schedule --topology torus:4x4 --collective alltoall --size 1MiB --time-limit 30 --json
expect_json 'j["optimal"]' $OFC rwa --nodes 6 --wavelengths 8 --pattern all-to-all --engine ilp --time-limit 60 --json

# A command's options before the command work as after it (a polling loop
# written `ofc --timeout 1 status` spun on "unknown command" before); where
# the first command name could be an option's value and another follows,
# the order is asked for, not guessed.
expect_json 'j["valid"]' $OFC --json validate configs/torus64-ocs.yaml
expect_stdout_has "bfb allreduce on ring:4" $OFC --size 1MiB --collective allreduce schedule --topology ring:4
expect_error 1 "ofc: cannot connect to ofcd at $TMP/none.sock: No such file or directory (is ofcd running?)" $OFC --timeout 1 --socket "$TMP/none.sock" status
# A remote command's options are read, and a bad one refused, before it
# connects: anywhere before "--" (mpirun read them only up to its first
# operand, and a bad --size after one met the socket error first); those
# after "--" are PROGRAM's.
expect_error 2 "ofc --socket PATH testbed mpirun: bad --size 'abc': expected a size such as 4096, 64KiB, 4MB or 1GiB" \
	$OFC --socket "$TMP/none.sock" testbed mpirun F --size abc
expect_error 1 "ofc: cannot connect to ofcd at $TMP/none.sock: No such file or directory (is ofcd running?)" \
	$OFC --socket "$TMP/none.sock" testbed mpirun --timeout 1 --size 1MiB -- prog --size abc
expect_error 2 "ofc: options before the command: write the command first, its options after it (ofc COMMAND [OPTIONS])" $OFC --algo ring schedule --topology ring:4
expect_error 2 "ofc: options before the command and no command: write the command first, its options after it (ofc COMMAND [OPTIONS])" $OFC --json

# -o - puts the schedule alone on stdout; the summary goes to stderr.
for fmt in json pb text; do
	$S --size 1MiB --format $fmt -o - >"$TMP/sched.$fmt" 2>"$TMP/sum.$fmt"
	[ $? -eq 0 ] && grep -q "^bfb allreduce on torus:4x4" "$TMP/sum.$fmt" && ok || bad "-o - ($fmt): summary not on stderr" "$(head -3 "$TMP/sum.$fmt")"
done
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["collective"]=="allreduce" and j["steps"] else 1)' "$TMP/sched.json" &&
	ok || bad "-o - json: stdout is not one JSON document" "$(head -c 200 "$TMP/sched.json")"
protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/sched.pb" | grep -q 'collective: "allreduce"' &&
	ok || bad "-o - pb: stdout does not decode"
$OFC optree --nodes 16 --wavelengths 2 --json --format json -o - >"$TMP/opt.json" 2>"$TMP/opt.sum"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); k=json.load(open(sys.argv[2])); sys.exit(0 if j["algorithm"]=="optree" and k["algorithm"]=="optree" else 1)' "$TMP/opt.json" "$TMP/opt.sum" &&
	ok || bad "optree --json -o -: two documents, one per stream"
# Without -o -, the summary stays on stdout.
expect_stdout_has "bfb allreduce on torus:4x4" $S --size 1MiB --format json -o "$TMP/s.json"

# -o FILE, one rule for every command that writes a file: --format if given,
# else the file's extension, else the command's default; a mismatch, or a
# name the command cannot write, is an error and nothing is written.
expect_exit 0 $S --size 1MiB -o "$TMP/named.pb"
protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/named.pb" | grep -q 'collective: "allreduce"' &&
	ok || bad "schedule -o x.pb did not write protobuf" "$(head -c 100 "$TMP/named.pb")"
expect_exit 0 $S --size 1MiB -o "$TMP/named.txt"
grep -q "^allreduce schedule 'bfb' on 16 nodes" "$TMP/named.txt" && ok || bad "schedule -o x.txt did not write text" "$(head -c 100 "$TMP/named.txt")"
expect_exit 0 $S --size 1MiB -o "$TMP/named"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/named" && ok || bad "schedule -o without an extension: not JSON (the default)"
expect_error 2 "ofc schedule: --format json, but -o '$TMP/both.pb' names a pb file: rename the file or drop --format" \
	$S --size 1MiB --format json -o "$TMP/both.pb"
expect_error 2 "ofc schedule: -o '$TMP/s.svg' names a svg file, which ofc schedule does not write (it writes text, json, pb or msccl)" \
	$S --size 1MiB -o "$TMP/s.svg"
# --format pb without -o: stdout when it is not a terminal, the summary on
# stderr (schedule and optree), a usage error when it is; another format
# alone says it needs -o.
$S --size 1MiB --format pb >"$TMP/stdout.pb" 2>"$TMP/stdout.err" &&
	protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/stdout.pb" | grep -q 'collective: "allreduce"' &&
	grep -q "^  verified     yes" "$TMP/stdout.err" && ok ||
	bad "schedule --format pb | did not write protobuf to stdout" "$(head -c 200 "$TMP/stdout.err")"
$OFC optree --nodes 16 --wavelengths 2 --format pb 2>/dev/null |
	protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto | grep -q 'algorithm: "optree"' &&
	ok || bad "optree --format pb | did not write protobuf to stdout"
for cmd in "$S --size 1MiB" "$OFC optree --nodes 16 --wavelengths 2"; do
	name=$(echo "$cmd" | awk '{print $2}')
	out=$(python3 -c '
import os, subprocess, sys
m, s = os.openpty()
p = subprocess.run(sys.argv[1:], stdout=s, stderr=subprocess.PIPE)
os.close(s)
print(p.returncode, p.stderr.decode().splitlines()[0])' $cmd --format pb)
	[ "$out" = "2 ofc $name: --format pb writes binary: give -o OUT, or redirect stdout" ] && ok ||
		bad "$name --format pb to a terminal should be refused" "$out"
done
expect_error 2 "ofc schedule: --format json needs -o OUT (-o - for stdout)" $S --size 1MiB --format json
# Options that would be silently wrong are refused: a chunk of less than a
# byte, two formats for ofc show, a --plot name ofc plan cannot write.
expect_error 2 "ofc schedule: --chunks 1000000 cuts a shard of 1024 bytes (--size over 16 nodes) below a byte a chunk: at most 1024" \
	$OFC schedule --topology torus:4x4 --collective allgather --size 16KiB --chunks 1000000
expect_stdout_has "chunks       1024 per shard" \
	$OFC schedule --topology torus:4x4 --collective allgather --size 16KiB --chunks 1024
expect_error 2 "ofc show: --dot and --json ask for different formats: give one" \
	$OFC show configs/torus64-ocs.yaml --dot --json
expect_exit 0 $OFC show configs/torus64-ocs.yaml --json --format json
expect_error 2 "ofc plan: --plot '$TMP/x.png' names a png file, which ofc plan does not write (it writes svg): name it .svg (rsvg-convert or a browser turn SVG into PNG)" \
	$OFC plan configs/torus64-ocs.yaml --workload examples/workloads/dp-allreduce.yaml --plot "$TMP/x.png"
[ ! -e "$TMP/x.png" ] && ok || bad "a refused --plot still wrote $TMP/x.png"
$OFC optree --nodes 16 --wavelengths 2 -o "$TMP/ring.pb" >/dev/null &&
	protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/ring.pb" | grep -q 'algorithm: "optree"' &&
	ok || bad "optree -o x.pb did not write protobuf"
expect_exit 0 $OFC topo torus:4x4 -o "$TMP/t.dot"
grep -q "^graph" "$TMP/t.dot" && ok || bad "topo -o x.dot did not write DOT" "$(head -c 100 "$TMP/t.dot")"
expect_exit 0 $OFC topo torus:4x4 -o "$TMP/t.json"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["nodes"]==16 else 1)' "$TMP/t.json" && ok || bad "topo -o x.json did not write JSON"
expect_error 2 "ofc topo: --json, but -o '$TMP/t2.pb' names a pb file: rename the file or drop --json" \
	$OFC topo torus:4x4 --json -o "$TMP/t2.pb"
expect_exit 0 $OFC show configs/torus64-ocs.yaml -o "$TMP/f.pb"
protoc --decode=ofc.v1.Fabric -I. proto/fabric.proto <"$TMP/f.pb" | grep -q 'name: "torus64-ocs"' &&
	ok || bad "show -o x.pb did not write an ofc.v1.Fabric"
expect_error 2 "ofc optree: --plot '$TMP/p.png' names a png file, which ofc optree does not write (it writes svg): name it .svg (rsvg-convert or a browser turn SVG into PNG)" \
	$OFC optree --sweep nodes=16 wavelengths=2 --plot "$TMP/p.png"
for f in both.pb s.svg t2.pb p.png; do
	[ ! -e "$TMP/$f" ] && ok || bad "a refused -o still wrote $f"
done

# DOT: every node pinned (neato), links straight; tori as
# their grid with the wrap-around links as stubs at the border named after
# the node they reach, so no line runs through a node or crosses another;
# every other family on a circle in node order. `ofc show` draws a fabric's
# hosts the same way, a line per pair of hosts its circuits join.
DC="python3 tests/integration/dot_check.py"
expect_stdout_has '  5 [pos="1.20,-1.20!"];' $OFC topo torus:4x4 --dot
expect_stdout_has '  0 -- 1;' $OFC topo torus:4x4 --dot
grep -q '^  w0 \[.*label="3", pos="-0.55,0.00!"\];$' "$TMP/out" && grep -q '^  0 -- w0 \[style=dashed\];$' "$TMP/out" &&
	ok || bad "torus:4x4's wrap-around 0 - 3 as a stub left of 0" "$(grep w0 "$TMP/out")"
expect_stdout_has '  1 [pos="1.20,0.00!"];' $OFC topo torus:3x3x2 --dot
for t in torus:8x8 torus:4x4x2; do
	$OFC topo "$t" --dot >"$TMP/t.dot" && $DC "$TMP/t.dot" >"$TMP/t.json" &&
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["through"]==0 and j["crossings"]==0 else 1)' "$TMP/t.json" &&
		ok || bad "ofc topo $t --dot: lines through nodes or crossing" "$(head -c 200 "$TMP/t.json")"
done
for t in circulant:12:2,3 kautz:2,3 genkautz:10,2; do
	$OFC topo "$t" --dot >"$TMP/t.dot" && $DC "$TMP/t.dot" >"$TMP/t.json" &&
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["circle_order"] and j["through"]==0 else 1)' "$TMP/t.json" &&
		ok || bad "ofc topo $t --dot: not a circle in node order" "$(head -c 300 "$TMP/t.json")"
done
# 1024 nodes: the links of every 16th node (256 of 4096), said in the label.
expect_stdout_has 'the links of every 16th node drawn (of 4096 links)' $OFC topo genkautz:1024,4 --dot
[ "$(grep -c -- ' -> ' "$TMP/out")" = 256 ] && ok || bad "genkautz:1024,4: $(grep -c -- ' -> ' "$TMP/out") links drawn"
# ofc show: torus64-ocs's 256 circuits as the 128 links of the 8 x 8 grid
# (64 of them wrap-around stubs), nothing through a node, nothing crossing.
$OFC show configs/torus64-ocs.yaml --dot >"$TMP/f.dot" && $DC "$TMP/f.dot" >"$TMP/f.json" &&
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["nodes"]==64 and len(j["other"])==128 and j["through"]==0 and j["crossings"]==0 and j["pos"]["h9"]==[1.2,-1.2] else 1)' "$TMP/f.json" &&
	ok || bad "ofc show torus64-ocs --dot" "$(head -c 300 "$TMP/f.json")"
expect_stdout_has '"h0" -> "h1" [color="#1f77b4", dir=none, tooltip="h0:0 -> h1:0 via ocs0 in 1 -> out 5 (2 circuits)"];' $OFC show configs/torus64-ocs.yaml --dot
# circulant C(12, {2,3}) on its circle in host order; genkautz1024-patch's
# 1024 hosts as points, the circuits of every 16th drawn.
$OFC show configs/testbed12-patch.yaml --dot >"$TMP/f.dot" && $DC "$TMP/f.dot" >"$TMP/f.json" &&
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["circle_order"] and len(j["other"])==24 and j["through"]==0 else 1)' "$TMP/f.json" &&
	ok || bad "ofc show testbed12-patch --dot" "$(head -c 300 "$TMP/f.json")"
expect_stdout_has 'those of every 16th host drawn' $OFC show configs/genkautz1024-patch.yaml --dot
# A WDM ring: its members on a circle in ring order, the fibre between
# them, the ring in the middle drawn open (points' default is filled).
expect_stdout_has '"r0" [shape=doublecircle, style=solid,' $OFC show configs/ring1024.yaml --dot
$DC "$TMP/out" >"$TMP/f.json" && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["circle_order"] else 1)' "$TMP/f.json" &&
	[ "$(grep -c 'penwidth=3' "$TMP/out")" = 1024 ] && ok || bad "ofc show ring1024 --dot"
# Failures in red: a failed link (one a wrap-around), a failed port (both
# fibres: the links it sends and hears on) and a failed host's every link.
python3 -c "
print('version: 1\nname: fail16\nhosts:')
for i in range(16): print('  - {name: h%d, ports: 4%s}' % (i, ', failed_ports: [0]' if i == 5 else ''))
print('switches:\n  - {name: ocs0, type: ocs, ports: 64, reconfig_time: 10ms}')
print('wiring: {pattern: sequential, switches: [ocs0]}')
print('topology:\n  spec: torus:4x4\n  failed_links: [[h0, h1], [h3, h0]]\n  failed_hosts: [h10]')" >"$TMP/fail16.yaml"
$OFC show "$TMP/fail16.yaml" --dot >"$TMP/f.dot" && $DC "$TMP/f.dot" >"$TMP/f.json" &&
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["red"]==sorted([sorted(p) for p in [["h0","h1"],["h0","h3"],["h4","h5"],["h5","h6"],["h10","h6"],["h10","h9"],["h10","h11"],["h10","h14"]]]) and len(j["other"])==24 and j["red_hosts"]==["h10","h5"] else 1)' "$TMP/f.json" &&
	ok || bad "ofc show --dot with failures" "$(head -c 400 "$TMP/f.json")"
# Graphviz draws every picture without a warning.
if command -v dot >/dev/null 2>&1; then
	for c in configs/*.yaml "$TMP/fail16.yaml"; do
		$OFC show "$c" --dot | dot -Tpng -Gdpi=20 >"$TMP/f.png" 2>"$TMP/dot.err" && [ ! -s "$TMP/dot.err" ] &&
			ok || bad "dot rejects ofc show $c --dot" "$(head -3 "$TMP/dot.err")"
	done
	for t in torus:4x4 torus:3x3x2 torus:8x8 circulant:12:2,3 kautz:2,3; do
		$OFC topo "$t" --dot | dot -Tpng -Gdpi=20 >"$TMP/t.png" 2>"$TMP/dot.err" && [ ! -s "$TMP/dot.err" ] &&
			ok || bad "dot rejects ofc topo $t --dot" "$(head -3 "$TMP/dot.err")"
	done
else
	bad "graphviz's dot is missing: scripts/install-deps.sh installs graphviz"
fi
# A request too large for the memory it may use: exit 1 with what it needed
# at least, never SIGABRT. (torus:32x32's explicit paths schedule needs about
# 3 GiB, ten times the limit; torus:12x12's default, once used here, now fits.) (Not under ASan, whose shadow memory needs more
# address space than the limit allows.)
if [ -z "$SAN" ]; then
	(
		ulimit -v 300000
		exec $OFC schedule --topology torus:32x32 --collective alltoall --algo mcf --lowering paths --size 1MiB
	) >/dev/null 2>"$TMP/oom.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "^ofc schedule: not enough memory: this request needs at least [0-9.]* GiB (.*ulimit -v)" "$TMP/oom.err" &&
		ok || bad "out of memory: exit $rc, want 1 and the estimate" "$(head -c 400 "$TMP/oom.err")"
fi
finish
