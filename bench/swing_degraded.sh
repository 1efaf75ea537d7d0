#!/bin/sh
# What a failure costs Swing's allreduce on a torus, through the CLI:
# `ofc schedule --topology torus:AxB --algo swing --collective allreduce
# --size 64MiB [--fail F]`, healthy, one link, 1% of the links (the same
# fixed-seed pick as bench/degraded_scale.sh: no two at one node) and 1%
# of the ports (its ports_arcs: one way of a link, 4% of the nodes). The
# schedule is the healthy reduced program and the detours of the transfers
# whose routes cross a failed arc (baselines/swing_reroute.c), verified;
# the CLI also prices the healthy torus and the degraded bound. Prints, per
# row: wall s, CPU s (user + sys: the wall is several times it on a
# loaded machine), peak MiB, the schedule's time, its ratio to healthy
# Swing and to the degraded fabric's bound, verified, the detours, and the
# planning and checking seconds.
# Usage: sh bench/swing_degraded.sh [SPEC...]   (default torus:64x64 torus:256x256)
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
SPECS=${*:-torus:64x64 torus:256x256}

# 1% of the links of an A x B torus, none two at one node: "u-v,..."
# (bench/degraded_scale.sh's pick)
one_percent() {
	python3 - "$1" <<'EOF'
import sys
a, b = (int(x) for x in sys.argv[1].split(':')[1].split('x'))
n, x, used, out = a * b, 0x9e3779b97f4a7c15, set(), []
for _ in range(2 * n // 100):
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
    u = x % n; j = (x >> 32) % 4
    i, k = u % a, u // a
    v = [((i + 1) % a) + k * a, ((i - 1) % a) + k * a, i + ((k + 1) % b) * a, i + ((k - 1) % b) * a][j]
    if u in used or v in used:
        continue
    used |= {u, v}
    out.append('%d-%d' % (u, v))
print(','.join(out))
EOF
}
# 1% of the ports, "u>v,...": bench/degraded_scale.sh's ports_arcs
eval "$(sed -n '/^ports_arcs()/,/^}/p' "$(dirname "$0")/degraded_scale.sh")"
row() {
	spec=$1 what=$2
	shift 2
	out=$(mktemp)
	/usr/bin/time -f '%e %M %U %S' -o "$out.t" "$OFC" schedule --topology "$spec" --algo swing \
		--collective allreduce --size 64MiB --threads 2 --json "$@" >"$out" 2>"$out.e"
	read -r wall kib usr sys <<EOF
$(tail -n 1 "$out.t")
EOF
	case $kib in '' | *[!0-9]*) kib=0 ;; esac
	cpu=$(python3 -c "import sys; print('%.2f' % sum(float(x) for x in sys.argv[1:]))" "${usr:-0}" "${sys:-0}")
	cells=$(python3 - "$out" <<'EOF' 2>/dev/null
import json, sys
j = json.load(open(sys.argv[1]))
h = j.get('healthy', {}).get('time_us')
vs = '%+.1f%%' % (100 * (j['time_us'] / h - 1)) if h else '-'
b = j.get('lower_bound_us') if 'healthy' in j else None
vb = '%+.1f%%' % (100 * (j['time_us'] / b - 1)) if b else '-'
print('%.1f | %s | %s | %s | %s | %.2f | %.2f' % (j['time_us'], vs, vb, 'yes' if j['verified'] else 'NO',
      int(j.get('rerouted_transfers', 0)), j['generate_s'], j['verify_s']))
EOF
)
	[ -n "$cells" ] || cells="refused: $(head -c 120 "$out.e" | tr '\n' ' ') | - | - | - | - | - | -"
	echo "| $spec | $what | $wall | $cpu | $((kib / 1024)) | $cells |"
	rm -f "$out" "$out.t" "$out.e"
}

echo "ofc schedule --algo swing --collective allreduce --size 64MiB (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
echo "| torus | failure | wall s | cpu s | peak MiB | time us | vs healthy | vs bound | verified | detours | plan s | check s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in $SPECS; do
	row "$spec" "healthy"
	row "$spec" "1 link (5-6)" --fail 5-6
	row "$spec" "1% of links" --fail "$(one_percent "$spec")"
	row "$spec" "1% of ports" --fail "$(ports_arcs "$spec")"
done
