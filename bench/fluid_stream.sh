#!/bin/sh
# Model W's fluid schedules written whole (-o) and the allreduce, with two
# builds in one run: wall time, CPU time (user + system: on a loaded
# machine the steadier figure), peak memory (RSS) and the written file's
# bytes and sha256 (the same file from both builds, or the row says so).
#
#   sh bench/fluid_stream.sh BEFORE AFTER [SERVERS...]
#
# BEFORE and AFTER are folders holding an ofc (with libofc-clp.so beside
# it, as a build folder has); SERVERS are model W's server counts (8 GPUs
# each), 8 16 32 by default. REQUESTS (';' between them) says which
# collectives and formats, by default the allgather's JSON and text and the
# allreduce's answer and JSON. The file goes to stdout and is hashed there:
# the 256-GPU allgather's JSON is about 5 GB.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BEFORE AFTER [SERVERS...]" >&2; exit 2; }
before=$1 after=$2
shift 2
servers=${*:-8 16 32}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
hash='import hashlib, sys
h, n = hashlib.sha256(), 0
for b in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
    h.update(b)
    n += len(b)
print(n, h.hexdigest()[:16])'
echo "load before: $(uptime)"
echo "| GPUs | request | build | wall | CPU | peak RSS | file bytes | sha256 |"
echo "|---:|---|---|---:|---:|---:|---:|---|"
for n in $servers; do
	reqs=${REQUESTS:-allgather --format json;allgather --format text;allreduce;allreduce --format json}
	IFS=';'
	set -f
	# shellcheck disable=SC2086
	set -- $reqs
	unset IFS
	for req in "$@"; do
		for b in before after; do
			dir=$before
			[ $b = after ] && dir=$after
			out=""
			case $req in *format*) out="-o -" ;; esac
			# shellcheck disable=SC2086
			/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$dir/ofc" schedule \
			    examples/modelw/all-links-$n.yaml --collective $req $out \
			    2>"$tmp/err" | python3 -c "$hash" >"$tmp/hash"
			[ -n "$out" ] || echo "- -" >"$tmp/hash"
			read -r secs user sys kb <"$tmp/time"
			read -r bytes sha <"$tmp/hash"
			cpu=$(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')
			echo "| $((n * 8)) | $req${out:+ -o} | $b | $secs s | $cpu s | $((kb / 1024)) MB | $bytes | $sha |"
		done
	done
done
echo "load after: $(uptime)"
rm -rf "$tmp"
