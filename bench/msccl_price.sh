#!/bin/sh
# Model W's NVSwitch server fabrics (only-nvlink-N, all-links-N) as MSCCL
# programs, each priced from its own sends (`ofc schedule
# examples/modelw/F.yaml --collective C --format msccl -o X.xml`, stderr's
# "the program's own price"), for 1 GB a GPU at alpha 10 us, beside:
# - the fluid optimum R* (ofc's, no latency) and the planned schedule
#   (Theorem 4 at the exported K, its alphas and pipeline fill);
# - ForestColl's optimum from first principles: the most of its cut
#   bounds, a GPU receiving n - 1 GB over its own links (NVLink, and PCIe
#   with all links) and a server receiving 8 (N - 1) GB over its NICs'
#   rail links; an allreduce is a reduce-scatter and an allgather of a
#   shard, 2/n of that. The bandwidths are read from the fabric's file.
# Usage: sh bench/msccl_price.sh [SERVERS...]   (default 2 3 4 8)
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "ofc schedule --format msccl, priced (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
echo "| fabric | collective | K | ForestColl's optimum s | R* s | planned s | program s (critical path, busiest arc) | program vs planned | program vs optimum |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in ${*:-2 3 4 8}; do
	for kind in only-nvlink all-links; do
		for c in allgather reduce-scatter allreduce; do
			f=$kind-$n
			if ! "$OFC" schedule "examples/modelw/$f.yaml" --collective $c --format msccl \
				-o "$TMP/x.xml" >"$TMP/out" 2>"$TMP/err"; then
				echo "| $f | $c | refused: $(head -n 1 "$TMP/err" | cut -c 1-160) | | | | | | |"
				continue
			fi
			python3 - "$f" "$c" "$n" "examples/modelw/$f.yaml" "$TMP/out" "$TMP/err" <<'PY'
import re, sys
f, c, N, yaml, out, err = sys.argv[1:]
N = int(N)
o, e, y = open(out).read(), open(err).read(), open(yaml).read()
def gbs(pat):
    return sum(float(b) for b in re.findall(pat + r", bandwidth: ([0-9.]+)GB/s", y))
# a GPU's own links (each both ways), a server's NIC-to-rail links
gpu = gbs(r"\{from: gpu0, to: \w+") + gbs(r"\{from: \w+, to: gpu0")
rails = gbs(r"\{from: s0/nic\d+, to: rail\d+")
g = 8 * N
ag = max((g - 1) / gpu, 8 * (N - 1) / rails)
fc = 2 * ag / g if c == 'allreduce' else ag
k = re.findall(r'K = (\d+) chunks', o)[0]
pr = re.search(r"the program's own price: ([0-9.e-]+) s \(its critical path (\d+) sends, ([0-9.e-]+) s; its busiest arc (\S+) -> (\S+), ([0-9.e-]+) GB, ([0-9.e-]+) s\); planned ([0-9.e-]+) s: ([-+0-9.]+)%; optimum ([0-9.e-]+) s", e)
price, sends, crit, a, b, gb, busy, planned, gap, opt = pr.groups()
print('| %s | %s | %s | %.6g | %s | %s | %s (%s sends %s; %s -> %s %s GB) | %s%% | %+.2f%% |' % (
    f, c, k, fc, opt, planned, price, sends, crit, a, b, gb, gap,
    100 * (float(price) / fc - 1)))
PY
		done
	done
done
