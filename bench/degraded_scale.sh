#!/bin/sh
# What a failure costs a torus's BFB allreduce at each size, through the
# CLI: `ofc schedule --topology torus:AxB --collective allreduce --size
# 64MiB [--fail F]`, healthy and with one port (an arc), one link, one host,
# 1% of the links (picked with a fixed seed, no two at one node), end to
# end (the CLI also prices the same request on the healthy torus). Where
# the failures leave the healthy structure, the schedule is the healthy
# reduced program and a patch (the default above 1,024 nodes, as the
# baselines are reduced there); else the explicit degraded BFB as before.
# Prints, per row: wall s, peak MiB, the schedule's time and its ratio to
# the healthy one, verified, and the structure kept (the patch's region).
# Usage: sh bench/degraded_scale.sh [HOSTS...]   (default 1024 4096 8192)
# 16384 and 65536 take minutes and GBs here; run them alone.
# MAXMEM=SIZE: the memory limit (--max-memory, ofcd's --max-request-memory);
# below what BFB's patch needs, an allreduce is Swing's around the failed
# links instead (kept: "swing instead of bfb").
MAXMEM=${MAXMEM:-}
#
# OFCD=1 sh bench/degraded_scale.sh [HOSTS...] measures the same through a
# running ofcd instead: a fabric of HOSTS hosts (4 ports each, per-port onto
# 4 sim switches, the torus above, an allreduce of 64 MiB) applied, ofcd
# started on it, then per row `ofc --socket S fail ITEM...` (1 port h5:0,
# 1 link h5-h6, 1 host h5, 1% of the ports at random with a fixed seed)
# and `restore --all`: each answer's wall time, ofcd's user and system CPU
# seconds and page faults over it (/proc/PID/stat: less swayed by a loaded
# machine than the wall), ofcd's peak RSS over it
# (the kernel's high-water mark, reset before each row through
# /proc/PID/clear_refs), its RSS once answered (after `restore --all`: what
# it keeps between requests), the schedule's time and its ratio to the
# healthy one, verified, and how it is kept, from the answer. Sim switches: the
# devices take no part in a failure's answer (nothing is rewired), only the
# re-plan does.
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
SIZES=${*:-1024 4096 8192}
. "$(dirname "$0")/failures_lib.sh"
# ROWS="port link host percent" (the default: all) picks the failures run
# (1% of the ports takes minutes at 16,384 hosts).
ROWS=${ROWS:-port link host percent}
wanted() {
	case " $ROWS " in *" $1 "*) return 0 ;; *) return 1 ;; esac
}
spec_of() {
	case $1 in
	1024) echo torus:32x32 ;; 4096) echo torus:64x64 ;; 8192) echo torus:128x64 ;;
	16384) echo torus:128x128 ;; 32768) echo torus:256x128 ;; 65536) echo torus:256x256 ;;
	*) echo "no torus for $1 hosts" >&2; exit 2 ;;
	esac
}
# 1% of the links of an A x B torus, none two at one node: "u-v,..."
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
row() {
	hosts=$1 what=$2 spec=$3
	shift 3
	out=$(mktemp)
	/usr/bin/time -f '%e %M' -o "$out.t" "$OFC" schedule --topology "$spec" --collective allreduce \
		--size 64MiB --threads 2 ${MAXMEM:+--max-memory "$MAXMEM"} "$@" >"$out" 2>"$out.e"
	read -r wall kib <<EOF
$(tail -n 1 "$out.t")
EOF
	case $kib in '' | *[!0-9]*) kib=0 ;; esac
	t=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$out")
	vs=$(sed -n 's/^  time *[0-9.]* us (\([^ ]*\) vs .*healthy.*/\1/p' "$out")
	ver=$(sed -n 's/^  verified *\(yes\|NO\).*/\1/p' "$out")
	kept=$(sed -n "s/^  instead of   \([a-z-]*\), refused: .*/swing instead of \1/p; s/^  reduced .*and a patch (\([0-9]*\) transfers) where the failures reach: \([0-9]*\) nodes solved whole.*, the changed blocks of \([0-9]*\) more.*/patch: \1 transfers, \2 nodes whole, \3 by block/p; s/^  reduced *node 0.s program.*/reduced/p" "$out")
	[ -n "$t" ] || t="refused: $(head -c 120 "$out.e" | tr '\n' ' ')"
	echo "| $hosts | $what | $wall | $((kib / 1024)) | $t | ${vs:--} | ${ver:--} | ${kept:-explicit} |"
	rm -f "$out" "$out.t" "$out.e"
}
# The arcs the ports above take down on an A x B torus: port p of host u
# (per-port wiring, generator p of +x -x +y -y) transmits on u's arc along
# it and receives on the arc along it into u: "u>v,..." for the CLI row
# that fails what ofcd's "1% of ports" row fails (three nodes lose a link
# for each, against two for each of the CLI's "1% of links").
ports_arcs() {
	python3 - "$1" <<'EOF'
import sys
a, b = (int(x) for x in sys.argv[1].split(':')[1].split('x'))
n, x, used, arcs = a * b, 0x9e3779b97f4a7c15, set(), []  # arcs: each once
while len(used) < 4 * n // 100:
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
    u, p = x % n, (x >> 32) % 4
    if u not in used:
        used.add(u)
        i, k = u % a, u // a
        d = [(1, 0), (-1, 0), (0, 1), (0, -1)][p]
        v = (i + d[0]) % a + ((k + d[1]) % b) * a
        w = (i - d[0]) % a + ((k - d[1]) % b) * a
        arcs += [a for a in ('%d>%d' % (u, v), '%d>%d' % (w, u)) if a not in arcs]
print(','.join(arcs))
EOF
}
# ofcd's page faults so far, its user and system CPU in clock ticks
# (/proc/PID/stat's 10th, 14th and 15th fields, counted after the command
# name's parenthesis).
ofcd_cpu() {
	sed 's/.*) //' /proc/"$ofcd_pid"/stat | cut -d' ' -f8,12,13
}
# One ofcd row: `ofc --socket S ARGS...` timed, what it answered.
ofcd_row() {
	hosts=$1 what=$2
	shift 2
	echo 5 >/proc/"$ofcd_pid"/clear_refs
	cpu0=$(ofcd_cpu)
	/usr/bin/time -f '%e' -o "$TMP/t" "$OFC" --socket "$TMP/s.sock" "$@" --timeout 600 >"$TMP/out" 2>&1
	cpu=$(ofcd_cpu)
	cpu=$(awk -v a="$cpu0" -v b="$cpu" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.2f / %.2f | %d", (y[2] - x[2]) / hz, (y[3] - x[3]) / hz, y[1] - x[1] }')
	wall=$(tail -n 1 "$TMP/t")
	kib=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/"$ofcd_pid"/status)
	rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/"$ofcd_pid"/status)
	t=$(sed -n 's/.*: [0-9]* steps, \([0-9.]*\) us.*/\1/p' "$TMP/out" | head -n 1)
	vs=$(sed -n 's/.* us (\([^ ]*\) vs healthy).*/\1/p' "$TMP/out" | head -n 1)
	ver=NO
	grep -q ' us[^,]*, verified' "$TMP/out" && ver=yes
	kept=$(sed -n 's/.*, verified, Swing around the failed links (the healthy [^,]*, \([0-9]*\) transfers re-routed[^)]*) instead of \([a-z-]*\), refused.*/swing instead of \2: \1 re-routed/p; s/.*, kept as structure (the healthy program x [^)]* and a patch of \([0-9]*\) transfers for the \([0-9]*\) nodes.*/patch: \1 transfers, \2 nodes/p; s/.*, symmetry-reduced (node 0.s program.*/reduced/p; s/.* (explicit: \(.*\)), re-planned.*/explicit: \1/p' "$TMP/out" | head -n 1)
	[ -n "$t" ] || t="no schedule: $(sed 's/.* in effect ([^)]*); //' "$TMP/out" | head -c 200 | tr '\n' ' ')"
	echo "| $hosts | $what | $wall | $cpu | $((kib / 1024)) | $((rss / 1024)) | $t | ${vs:--} | $ver | ${kept:-explicit} |"
}
run_ofcd() {
	h=$1 spec=$(spec_of "$1")
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/degraded-ofcd.XXXXXX")
	{
		printf 'name: t%s\nhosts: {count: %s, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' "$h" "$h"
		for i in 0 1 2 3; do
			printf '  - {name: ocs%s, type: ocs, ports: %s, driver: {type: sim}}\n' "$i" "$h"
		done
		printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n'
		printf 'topology: %s\ncollectives:\n  - {op: allreduce, size: 64MiB}\n' "$spec"
	} >"$TMP/fab.yaml"
	mkdir -p "$TMP/st"
	"$OFC" apply "$TMP/fab.yaml" --state-dir "$TMP/st" >/dev/null || exit 1
	"$BUILD/ofcd" --foreground --config "$TMP/fab.yaml" --socket "$TMP/s.sock" \
		${MAXMEM:+--max-request-memory "$MAXMEM"} \
		--state-dir "$TMP/st" --credentials-dir "$TMP" 2>"$TMP/d.log" &
	ofcd_pid=$!
	until "$OFC" --socket "$TMP/s.sock" status >/dev/null 2>&1; do sleep 0.1; done
	# the state's healthy schedule first (computed off the start's path)
	until "$OFC" --socket "$TMP/s.sock" status | grep -q '^  schedule'; do sleep 0.1; done
	if wanted port; then
		ofcd_row "$h" "1 port (h5:0)" fail h5:0
		ofcd_row "$h" "restore" restore --all
	fi
	if wanted link; then
		ofcd_row "$h" "1 link (h5-h6)" fail h5-h6
		ofcd_row "$h" "restore" restore --all
	fi
	if wanted host; then
		ofcd_row "$h" "1 host (h5)" fail h5
		ofcd_row "$h" "restore" restore --all
	fi
	if wanted percent; then
		# shellcheck disable=SC2046 # one word per port
		ofcd_row "$h" "1% of ports" fail $(ports_percent "$h")
		ofcd_row "$h" "restore" restore --all
	fi
	kill "$ofcd_pid"
	wait "$ofcd_pid"
	rm -rf "$TMP"
}
if [ -n "${OFCD:-}" ]; then
	echo "ofcd, $OFC --socket S fail ITEM (allreduce 64 MiB on tori, 4 sim switches; load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
	echo
	echo "| hosts | failure | answer s | ofcd CPU s user / sys | page faults | ofcd peak MiB | RSS after MiB | time us | vs healthy | verified | kept |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
	for h in $SIZES; do
		run_ofcd "$h"
	done
	echo
	echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi
echo "ofc schedule --collective allreduce --size 64MiB on tori (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| hosts | failure | wall s | peak MiB | time us | vs healthy | verified | kept |"
echo "|---:|---|---:|---:|---:|---:|---|---|"
for h in $SIZES; do
	spec=$(spec_of "$h")
	row "$h" healthy "$spec"
	! wanted port || row "$h" "1 port (5>6)" "$spec" --fail '5>6'
	! wanted link || row "$h" "1 link (5-6)" "$spec" --fail 5-6
	! wanted host || row "$h" "1 host (5)" "$spec" --fail 5
	! wanted percent || row "$h" "1% of links" "$spec" --fail "$(one_percent "$spec")"
	! wanted percent || row "$h" "ofcd's 1% of ports" "$spec" --fail "$(ports_arcs "$spec")"
	if [ "$h" -le 1024 ]; then # explicit by default here: the patch asked for
		! wanted link || row "$h" "1 link, --reduced" "$spec" --fail 5-6 --reduced
		! wanted host || row "$h" "1 host, --reduced" "$spec" --fail 5 --reduced
		! wanted percent ||
			row "$h" "1% of links, --reduced" "$spec" --fail "$(one_percent "$spec")" --reduced
	fi
done
