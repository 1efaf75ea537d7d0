#!/bin/sh
# ofcd's GetSchedule of a model W fluid schedule, with two builds in one
# run: per build and per way of asking, a fresh ofcd (--max-frame 1GiB;
# --max-request-time 600s, so that a loaded machine does not cut the LP
# short and change the schedule) answers one `ofc --socket S schedule --collective allgather -o FILE`,
# whole (one frame: --json asks without a stream) or streamed (frames of a
# step or less); the row gives ofcd's peak RSS (VmHWM) over its start and
# that one request, the client's wall time and peak RSS, and the written
# file's bytes and sha256 (whole: the client packs the message it got;
# streamed: the header, then a Schedule per step, as `ofc schedule -o`
# writes).
#
#   sh bench/ofcd_fluid.sh BEFORE AFTER [SERVERS...]
#
# BEFORE and AFTER are folders holding an ofc and an ofcd (with
# libofc-clp.so beside them, as a build folder has); SERVERS are model W's
# server counts (8 GPUs each), 16 by default (128 GPUs, 8.7 M transfers).
# At 32 servers (256 GPUs) the whole frame is over the client's 256 MiB.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BEFORE AFTER [SERVERS...]" >&2; exit 2; }
before=$1 after=$2
shift 2
servers=${*:-16}
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
echo "load before: $(uptime)"
echo "| GPUs | GetSchedule | build | ofcd peak RSS | client wall | client peak RSS | file bytes | sha256 |"
echo "|---:|---|---|---:|---:|---:|---:|---|"
for n in $servers; do
	for way in whole streamed; do
		for b in before after; do
			dir=$before
			[ $b = after ] && dir=$after
			rm -rf "$tmp/st" "$tmp/s" "$tmp/out.pb"
			mkdir -p "$tmp/st"
			nice "$dir/ofcd" --foreground --config examples/modelw/all-links-$n.yaml \
			    --socket "$tmp/s" --state-dir "$tmp/st" --probe-interval 0 \
			    --max-frame 1GiB --max-request-time 600s 2>"$tmp/log" &
			pid=$!
			i=0
			until "$dir/ofc" --socket "$tmp/s" status >/dev/null 2>&1 || [ $i -ge 600 ]; do
				sleep 0.1
				i=$((i + 1))
			done
			json=""
			[ $way = whole ] && json=--json
			# shellcheck disable=SC2086
			/usr/bin/time -f "%e %M" -o "$tmp/time" "$dir/ofc" --socket "$tmp/s" schedule $json \
			    --collective allgather --timeout 600 -o "$tmp/out.pb" \
			    >/dev/null 2>"$tmp/err" || echo "($b $way: $(tail -1 "$tmp/err"))" >&2
			hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$pid/status)
			kill $pid
			wait $pid 2>/dev/null
			pid=""
			# the last line: a failed command has its exit status first
			read -r secs kb <<EOT
$(tail -n 1 "$tmp/time")
EOT
			set -- $(python3 -c 'import hashlib, sys
h, n = hashlib.sha256(), 0
with open(sys.argv[1], "rb") as f:
    for c in iter(lambda: f.read(1 << 20), b""):
        h.update(c)
        n += len(c)
print(n, h.hexdigest()[:16])' "$tmp/out.pb" 2>/dev/null || echo "- -")
			echo "| $((n * 8)) | $way | $b | $hwm MB | $secs s | $((kb / 1024)) MB | $1 | $2 |"
		done
	done
done
echo "load after: $(uptime)"
