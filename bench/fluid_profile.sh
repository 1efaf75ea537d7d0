#!/bin/sh
# Where a fluid request's time goes: perf samples (call graphs by DWARF)
# of one `ofc schedule ARGS`, each sample put in the first part of the
# engine its stack passes through: the verifier, Theorem 4's schedule, the
# symmetry search, the DW master, the pricing's cut LP (its solves, the
# rows added, the bound's re-solve at the true costs), the pricing's max
# flows and cuts, the honest trees, the trees split from the LP's usage
# (tree_columns: flows and decomposition), the routing. Prints a table of
# shares; the absolute times are the run's (the load is printed).
#
#   bench/fluid_profile.sh [ARGS...]   default: the 256-GPU model W allgather
#   OFC=build/ofc FREQ=999 bench/fluid_profile.sh examples/modelw/all-links-8.yaml \
#       --collective allgather --threads 1
#
# Needs perf (perf_event_paranoid <= 2 for a user's own process) and
# python3. One thread unless ARGS say otherwise: the shares are of the
# CPU time of all threads.
set -u
cd "$(dirname "$0")/.." || exit 1
OFC=${OFC:-build/ofc}
FREQ=${FREQ:-499}
[ $# -gt 0 ] || set -- examples/modelw/all-links-32.yaml --collective allgather --threads 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-fprof.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "load before: $(uptime | sed 's/.*load average: //')"
echo "\$ ofc schedule $*"
perf record -q -F "$FREQ" --call-graph dwarf,16384 -o "$tmp/perf.data" \
	"$OFC" schedule "$@" >"$tmp/out" 2>"$tmp/err" || {
	echo "fluid_profile.sh: perf record failed: $(head -c 300 "$tmp/err")" >&2
	exit 1
}
grep -E 'R\*|objective|solved in' "$tmp/out"
perf script -i "$tmp/perf.data" -F comm,tid,time,ip,sym --inline 2>/dev/null >"$tmp/script"
python3 - "$tmp/script" <<'PY'
import collections, sys

# (part, frames any of which puts a sample there), first match wins
parts = [
    ("verification (fluid_pipe_verify, sched_verify)",
     ["fluid_pipe_verify", "verify_run", "sched_verify"]),
    ("Theorem 4's schedule (period, expansion)",
     ["fluid_steps", "fluid_pipeline", "fluid_pipe_expand", "fluid_pipe_head",
      "fluid_schedule"]),
    ("symmetry search", ["fluid_group_find", "schedule_group", "fluid_find_group"]),
    ("DW master LP", ["solve_master"]),
    ("routing (dw_routing, merge, measure)",
     ["dw_routing", "fluid_routing_merge", "routing_measure"]),
    ("trees from the cut LP's usage (tree_columns)", ["tree_columns"]),
    ("layers-summed bound (hopfree)", ["hopfree_bound"]),
    ("full LP", ["full_solve"]),
]
in_rounds = [
    ("pricing: cut LP solves", ["clp_solve", "lp_solve", "solve_clp"]),
    ("pricing: cut LP rows (pool, added, rebuilt)",
     ["pool_readd", "pool_mark", "pool_rebuild", "pool_add", "lp_add_row", "lp_fresh"]),
    ("pricing: max flows and cuts", ["find_cuts", "cut_dest", "maxflow_run",
                                     "maxflow_source_side", "maxflow_sink_side"]),
]
cnt = collections.Counter()
total = 0
frames = []

def place(fr):
    s = set(fr)
    for name, fs in parts:
        if s.intersection(fs):
            return name
    if "cut_rounds" in s:
        for name, fs in in_rounds:
            if s.intersection(fs):
                return name
        return "pricing: cut rounds, the rest"
    if "pricer_tree" in s:
        if s.intersection(["clp_solve", "lp_solve"]):
            return "pricing: the bound's re-solve at the true costs"
        return "pricing: costs and set-up"
    if "pricer_honest" in s:
        return "pricing: honest trees"
    if "pricer_init" in s:
        return "pricing: models built"
    if "dw_solve" in s:
        return "DW, the rest"
    if "fluid_solve" in s:
        return "fluid_solve, the rest"
    if "schedule_fluid" in s:
        return "the request, the rest (network, group check)"
    return "outside the request (start-up, exit)"

def flush():
    global total
    if frames:
        cnt[place(frames)] += 1
        total += 1

for line in open(sys.argv[1]):
    if line.strip() and not line[0].isspace():
        flush()
        frames = []
        continue
    p = line.strip().split(None, 1)
    if len(p) == 2:
        frames.append(p[1].replace(" (inlined)", ""))
flush()
print("| part | share of samples |")
print("|---|---|")
for name, n in cnt.most_common():
    print("| %s | %.1f%% |" % (name, 100.0 * n / max(total, 1)))
print("(%d samples)" % total)
PY
echo "load after: $(uptime | sed 's/.*load average: //')"
