#!/bin/sh
# The three example workloads (examples/workloads/) planned on an
# OCS of 10 ms (configs/torus64-ocs.yaml), a patch panel of 30 s a move
# (examples/workloads/torus64-patch.yaml) and, where the workload fits a
# ring, an MRR ring (examples/workloads/ring64-mrr.yaml): each way's time
# per iteration (the job's over its iterations: the switching before the
# first spread over them) and the choice. `sh bench/workload.sh`; the
# skewed all-to-all's figures are build/bench/skew's.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
ST=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench-wl.XXXXXX")
trap 'rm -rf "$ST"' EXIT
echo "| workload | fabric | static ms | per-phase ms | chosen ms | chosen | vs static | vs per-phase | pricing s |"
echo "|---|---|---|---|---|---|---|---|---|"
for w in moe-layer dp-allreduce moe-training; do
	for f in configs/torus64-ocs.yaml examples/workloads/torus64-patch.yaml examples/workloads/ring64-mrr.yaml; do
		dev=
		[ "$f" = configs/torus64-ocs.yaml ] && dev="--device ocs0=127.0.0.1:9" # not read
		out=$("$OFC" plan "$f" --workload "examples/workloads/$w.yaml" --state-dir "$ST" \
			$dev --json 2>"$ST/err")
		if [ $? -ne 0 ]; then
			echo "| $w | $(basename "$f" .yaml) | - | - | - | $(head -n 1 "$ST/err" | cut -c1-160) | | | |"
			continue
		fi
		echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
n = j["iterations"]
def per(k):
    w = {w["kind"]: w for w in j["ways"]}[k]
    return w["job_us"] / n / 1000 if w["have"] else None
s, p, c = per("static"), per("per-phase"), per("chosen")
f = lambda v: "%.2f" % v if v is not None else "-"
print("| %s | %s | %s | %s | %s | %s | %.2fx | %.2fx | %.1f |" % (j["workload"], j["fabric"], f(s), f(p), f(c),
      j["chosen"], s / c if s else float("nan"), p / c if p else float("nan"), j["seconds"]))'
	done
done
