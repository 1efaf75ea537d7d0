#!/bin/sh
# What a failure costs a torus's BFB allreduce at each size, through the
# CLI: `ofc schedule --topology torus:AxB --collective allreduce --size
# 64MiB [--fail F]`, healthy and with one port (an arc), one link, one host,
# 1% of the links (picked with a fixed seed, no two at one node), end to
# end (the CLI also prices the same request on the healthy torus). Where
# the failures leave the healthy structure, the schedule is the healthy
# reduced program and a patch (the default above 4,096 nodes, where the
# explicit verifier stops); else the explicit degraded BFB as before.
# Prints, per row: wall s, peak MiB, the schedule's time and its ratio to
# the healthy one, verified, and the structure kept (the patch's region).
# Usage: sh bench/degraded_scale.sh [HOSTS...]   (default 1024 4096 8192)
# 16384 and 65536 take minutes and GBs here; run them alone.
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
SIZES=${*:-1024 4096 8192}
echo "ofc schedule --collective allreduce --size 64MiB on tori (load: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| hosts | failure | wall s | peak MiB | time us | vs healthy | verified | kept |"
echo "|---:|---|---:|---:|---:|---:|---|---|"
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
		--size 64MiB --threads 2 "$@" >"$out" 2>"$out.e"
	read -r wall kib <<EOF
$(tail -n 1 "$out.t")
EOF
	case $kib in '' | *[!0-9]*) kib=0 ;; esac
	t=$(sed -n 's/^  time *\([0-9.]*\) us.*/\1/p' "$out")
	vs=$(sed -n 's/^  time *[0-9.]* us (\([^ ]*\) vs healthy.*/\1/p' "$out")
	ver=$(sed -n 's/^  verified *\(yes\|NO\).*/\1/p' "$out")
	kept=$(sed -n "s/^  reduced .*and a patch (\([0-9]*\) transfers) where the failures reach: \([0-9]*\) nodes' programs whole, the changed blocks of \([0-9]*\) more.*/patch: \1 transfers, \2 nodes whole, \3 by block/p; s/^  reduced *node 0.s program.*/reduced/p" "$out")
	[ -n "$t" ] || t="refused: $(head -c 120 "$out.e" | tr '\n' ' ')"
	echo "| $hosts | $what | $wall | $((kib / 1024)) | $t | ${vs:--} | ${ver:--} | ${kept:-explicit} |"
	rm -f "$out" "$out.t" "$out.e"
}
for h in $SIZES; do
	spec=$(spec_of "$h")
	row "$h" healthy "$spec"
	row "$h" "1 port (5>6)" "$spec" --fail '5>6'
	row "$h" "1 link (5-6)" "$spec" --fail 5-6
	row "$h" "1 host (5)" "$spec" --fail 5
	row "$h" "1% of links" "$spec" --fail "$(one_percent "$spec")"
	if [ "$h" -le 4096 ]; then # explicit by default here: the patch asked for
		row "$h" "1 link, --reduced" "$spec" --fail 5-6 --reduced
		row "$h" "1% of links, --reduced" "$spec" --fail "$(one_percent "$spec")" --reduced
	fi
done
