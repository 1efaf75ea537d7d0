#!/bin/sh
# Do two ofc builds produce the same BFB schedules? BFB is deterministic
# (exact values, one fixed max flow per problem), so a change that only
# makes it faster must leave every transfer where it was. For each case
# this hashes the whole schedule (--format json) and the summary (--json
# without its timings) from both binaries and prints whether they agree.
#
#   bench/bfb_same.sh OLD_OFC NEW_OFC     exit 1 if any case differs
set -u
OLD=${1:?usage: bfb_same.sh OLD_OFC NEW_OFC}
NEW=${2:?usage: bfb_same.sh OLD_OFC NEW_OFC}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

hash_run() { # BIN OUT-PREFIX ARGS...: prints "schedule-hash summary-hash"
	bin=$1 pre=$2
	shift 2
	if ! "$bin" schedule "$@" --size 1MiB --format json -o "$pre.json" >/dev/null 2>"$pre.err"; then
		echo "failed: $(head -c 200 "$pre.err")"
		return
	fi
	"$bin" schedule "$@" --size 1MiB --json 2>/dev/null |
		grep -v -e '"generate_s"' -e '"verify_s"' -e '"export_s"' >"$pre.sum"
	echo "$(sha256sum <"$pre.json" | cut -c1-16) $(sha256sum <"$pre.sum" | cut -c1-16)"
}

while read -r line; do
	case $line in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2086
	a=$(hash_run "$OLD" "$tmp/old" $line)
	# shellcheck disable=SC2086
	b=$(hash_run "$NEW" "$tmp/new" $line)
	if [ "$a" = "$b" ]; then
		echo "same     $a  $line"
	else
		echo "DIFFERS  old $a new $b  $line"
		rc=1
	fi
done <<'EOF'
--topology hypercube:6 --collective allgather --algo bfb
--topology hypercube:7 --collective allgather --algo bfb
--topology hypercube:8 --collective allgather --algo bfb
--topology hypercube:8 --collective allreduce --algo bfb
--topology hypercube:7 --collective reduce-scatter --algo bfb
--topology hypercube:6 --collective allreduce --algo bfb --chunks 4
--topology hypercube:5 --collective allgather --algo bfb-lp
--topology torus:8x8 --collective allgather --algo bfb
--topology torus:8x8 --collective allreduce --algo bfb
--topology torus:8x8 --collective allgather --algo bfb --chunks 3
--topology torus:6x6 --collective allgather --algo bfb-lp
--topology torus:8x8 --collective allgather --algo bfb --fail 0-1,9-10
--topology torus:4x4x4 --collective allreduce --algo bfb
--topology genkautz:64,4 --collective allgather --algo bfb
--topology genkautz:64,4 --collective allreduce --algo bfb
--topology genkautz:100,3 --collective allreduce --algo bfb
--topology genkautz:64,4 --collective allgather --algo bfb --fail 0-63
--topology hypercube:8 --collective allreduce --algo bfb --fail 0-1,6-7
--topology circulant:64:1,5 --collective allgather --algo bfb
--topology circulant:128:1,2,3,4,5,6,7 --collective allgather --algo bfb
--topology circulant:128:1,2,3,4,5,6,7 --collective allreduce --algo bfb --fail 0-1
--topology line^2(circulant:8:1,3) --collective allreduce --algo bfb
# Hosts that can drive all their links (injection >= d links of B/d; B is
# 100 Gb/s here): BFB under host limits must leave the schedule as it was.
--topology hypercube:8 --collective allreduce --algo bfb --injection 100Gbps
--topology torus:8x8 --collective allgather --algo bfb --injection 100Gbps --forwarding nic
--topology genkautz:64,4 --collective allreduce --algo bfb --injection 200Gbps
--topology torus:8x8 --collective allgather --algo bfb --fail 0-1,9-10 --injection 100Gbps
EOF
exit $rc
