#!/bin/sh
# Model W's server fabrics up to 8 servers as MSCCL programs for
# msccl-executor-nccl: `ofc schedule examples/modelw/F.yaml --collective C
# --format msccl -o X.xml` for every fabric and collective, each program
# replayed by tests/integration/msccl_replay.py (the runtime's parser
# rules and limits, then the collective's postcondition). Prints, per row:
# the engine's K and the K exported (lowered where the engine's is over the
# runtime's limits), Theorem 4's time for 1 GB a GPU at each (the price of
# fitting), the program's most XML nodes a rank, the program's loads on the
# fabric against the schedule's (s/GB of block: relays' copies sent once
# per GPU, or once a server and forwarded inside it), the export's and
# the replay's seconds, and the replay's verdict.
# Usage: sh bench/msccl_fabrics.sh [SERVERS...]   (default 1 2 3 4 8)
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
REPLAY="python3 $(dirname "$0")/../tests/integration/msccl_replay.py"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
now() { python3 -c 'import time; print(time.monotonic())'; }

echo "ofc schedule --format msccl on model W (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
echo "| fabric | collective | K engine | K exported | time at engine's K s | at exported K s | XML nodes a rank | program / schedule on the fabric | export s | replay s | replay |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in ${*:-1 2 3 4 8}; do
	for kind in all-links no-nvlink only-nvlink; do
		for c in allgather reduce-scatter allreduce; do
			f=$kind-$n
			t0=$(now)
			if ! "$OFC" schedule "examples/modelw/$f.yaml" --collective $c --format msccl \
				-o "$TMP/x.xml" >"$TMP/out" 2>"$TMP/err"; then
				echo "| $f | $c | refused: $(head -n 1 "$TMP/err" | cut -c 1-160) | | | | | | | | |"
				continue
			fi
			t1=$(now)
			verdict=$($REPLAY --orders 1 "$TMP/x.xml" 2>&1 | tail -n 1 | sed 's/.*replayed: //')
			t2=$(now)
			python3 - "$f" "$c" "$t0" "$t1" "$t2" "$verdict" "$TMP/out" "$TMP/err" <<'PY'
import re, sys
f, c, t0, t1, t2, verdict, out, err = sys.argv[1:]
o, e = open(out).read(), open(err).read()
k = re.findall(r'K = (\d+) chunks', o)[0]
low = re.search(r"K = (\d+) chunks, the most within .*\(the engine's (\d+) are over them\): ([0-9.e-]+) s against ([0-9.e-]+) s", e)
pred = re.search(r'predicted +([0-9.e-]+) s', o).group(1)
fwd = re.search(r"K = (\d+) chunks, the most at which forwarding inside a server fits .* than at K = (\d+) without: .*\(Theorem 4's time ([0-9.e-]+) s against ([0-9.e-]+) s\)", e)
low = low or fwd
eng, t_eng, t_k = (low.group(2), low.group(4), low.group(3)) if low else (k, pred, pred)
nodes = re.search(r'(\d+) XML nodes a rank at most', e).group(1)
price = re.search(r"take ([0-9.e-]+) s/GB of block, the schedule's ([0-9.e-]+) \(x([0-9.]+)\)", e)
pr = '%s / %s (x%s)' % price.groups() if price else 'not priced'
print('| %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s |' % (
    f, c, eng, k, t_eng, t_k, nodes, pr, float(t1) - float(t0), float(t2) - float(t1), verdict))
PY
		done
	done
done
