#!/bin/sh
# The re-plan's speed target: after one failed link on genkautz:1024,4, a
# verified BFB allgather (target: 1 s) and the all-to-all MCF (target: 10 s)
# on the degraded graph. One failed link is one circuit, the arc 0 -> 1023
# (generalized Kautz is directed: 1023 -> 0 is another circuit). Each row is
# `ofc schedule ... --json` end to end; "generate s" and "verify s" are the
# degraded graph's own (the CLI's wall time also prices the same request on
# the healthy graph, so with --fail it holds two runs). With failures the
# healthy graph is solved first and its all-to-all MCF solution warm-starts
# the degraded one: "mcf s" is the degraded MCF given that solution, the
# healthy solve is listed beside it.
# Usage: sh bench/failures.sh [alltoall [ARGS]]   (alltoall: the MCF rows
# only, with ARGS added to the degraded one, e.g. --time-limit 10)
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
SPEC=genkautz:1024,4
FAIL='0>1023'
echo "ofc schedule on $SPEC, healthy and less the arc $FAIL (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| command | wall s | peak MiB | generate s | verify s | result |"
echo "|---|---|---|---|---|---|"
row() {
	out=$(mktemp)
	/usr/bin/time -f '%e %M' -o "$out.t" "$OFC" schedule --topology "$SPEC" "$@" --size 1MiB \
		--json >"$out" || echo "FAILED: $*"
	read -r wall kib <"$out.t"
	res=$(python3 - "$out" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
r = '%s, %d steps, tau_B %s' % ('verified' if j['verified'] else 'NOT VERIFIED', j['num_steps'],
                                  j.get('tau_b_fraction') or '%.4f' % j['tau_b'])
m = j.get('mcf')
if m:
    r += ', theta %.6g (%s, %d sources, %s, mcf %.1f s)' % (
        m['theta'], m['method'], m['sources_solved'],
        'optimal' if m['optimal'] else 'gap %.2f%%' % (100 * m['theta_gap']), m['seconds'])
    if m.get('warm_started'):
        r += '; warm-started from the healthy solution (healthy mcf %.1f s; column generation alone %.1f s), %d of its trees kept, its lengths bound theta <= %.6g' % (
            m['healthy_seconds'], m['solve_seconds'], m['warm_columns'], m['warm_bound_theta'])
h = j.get('healthy')
if h and h['excess'] is not None:
    r += ', %+.1f%% vs healthy' % (100 * h['excess'])
print(r)
EOF
)
	gen=$(python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['generate_s'])" "$out")
	ver=$(python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['verify_s'])" "$out")
	echo "| ofc schedule --topology $SPEC $* --size 1MiB --json | $wall | $((kib / 1024)) | $gen | $ver | $res |"
	rm -f "$out" "$out.t"
}
if [ "${1:-}" != alltoall ]; then
	row --collective allgather
	row --fail "$FAIL" --collective allgather
fi
row --collective alltoall --lowering paths
[ "${1:-}" = alltoall ] && shift
row --fail "$FAIL" --collective alltoall --lowering paths "$@"
