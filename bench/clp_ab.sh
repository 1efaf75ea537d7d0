#!/bin/bash
# The LP underneath, before and after: two builds of ofc (each dir holds
# ofc and libofc-clp.so) on the requests whose time is Clp's, each on 1
# and 2 threads (or $THREADS), alternated round by round so both see the
# same load. Prints wall and CPU seconds (user + system) per run and
# whether the answer (the summary less its timings) is the one of the
# first build on 1 thread.
#
#   BEFORE=/tmp/ofc-before bench/clp_ab.sh              every request, 3 rounds
#   BEFORE=DIR AFTER=build ROUNDS=5 THREADS="1 16" bench/clp_ab.sh gk
#
# A build of another commit, for BEFORE: git worktree add /tmp/wt COMMIT &&
# make -C /tmp/wt -j && mkdir /tmp/ofc-before && cp /tmp/wt/build/ofc
# /tmp/wt/build/libofc-clp.so /tmp/ofc-before/ (ofc loads the plugin
# beside it).
#
# LIBS=DIR: ofc run through the loader and libraries bench/bundle_libs.sh
# copied into DIR (a machine without ofc's libraries; the plugin then
# named by OFC_CLP_PLUGIN, beside each build's ofc).
#
# Requests (NAME: the command after `ofc`):
#   fluid  schedule examples/modelw/all-links-32.yaml --collective allgather
#          (the pricing's cut LPs: 217 Clp solves of 2,000 columns)
#   gk     schedule --topology genkautz:1024,4 --collective alltoall --lowering paths --size 1MiB
#          (the MCF master: 39 primal solves, up to 3,757 columns, 437,000 elements)
#   rwa    rwa --nodes 64 --wavelengths 1024 --pattern all-to-all --engine lp --lp-solver clp
#          (one LP relaxation; no threads of its own)
cd "$(dirname "$0")/.." || exit 1
BEFORE=${BEFORE:?set BEFORE to a dir with the older ofc and libofc-clp.so}
AFTER=${AFTER:-build}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1 2}
TIMEOUT=${TIMEOUT:-300}

request() {
	case $1 in
	fluid) echo "schedule examples/modelw/all-links-32.yaml --collective allgather" ;;
	gk) echo "schedule --topology genkautz:1024,4 --collective alltoall --lowering paths --size 1MiB" ;;
	rwa) echo "rwa --nodes 64 --wavelengths 1024 --pattern all-to-all --engine lp --lp-solver clp" ;;
	*) return 1 ;;
	esac
}
[ $# -gt 0 ] || set -- fluid gk rwa
for r in "$@"; do
	request "$r" >/dev/null || {
		echo "clp_ab.sh: unknown request '$r' (fluid gk rwa)" >&2
		exit 2
	}
done
for b in "$BEFORE" "$AFTER"; do
	[ -x "$b/ofc" ] && [ -f "$b/libofc-clp.so" ] || {
		echo "clp_ab.sh: $b has no ofc and libofc-clp.so" >&2
		exit 2
	}
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-clp-ab.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
masked() {
	sed -E -e 's/"(generate_s|verify_s|[a-z_]*seconds|seconds_[a-z_]*)": *[0-9.e+-]+/"\1": <T>/g' \
		-e 's/(in|took|after|elapsed|wall|solved in|optimal,|iterations,|models,|\() +[0-9]+(\.[0-9]+)?(e-?[0-9]+)? ?(ns|us|ms|s|min)\b/\1 <T>/g' \
		-e 's/[0-9]+(\.[0-9]+)? ?s to price/<T> to price/g' "$1"
}

echo "machine: $(nproc) CPUs; before: $BEFORE; after: $AFTER; threads: $THREADS; $ROUNDS rounds"
echo "load before: $(uptime | sed 's/.*load average/load average/')"
printf '%-6s %6s %7s %5s %8s %8s  %s\n' request build threads round wall_s cpu_s same
for r in "$@"; do
	args=$(request "$r")
	ref=
	for round in $(seq 1 "$ROUNDS"); do
		for t in $THREADS; do
			[ "$r" = rwa ] && [ "$t" != "${THREADS%% *}" ] && continue
			for which in before after; do
				[ $which = before ] && dir=$BEFORE || dir=$AFTER
				out=$tmp/$r.$which.$t.$round
				TIMEFORMAT='%R %U %S'
				# (the rwa request takes no --threads)
				th="--threads $t"
				[ "$r" = rwa ] && th=
				if [ -n "${LIBS:-}" ]; then
					run="$LIBS/ld-linux-x86-64.so.2 --library-path $LIBS $dir/ofc"
					plugin=$(cd "$dir" && pwd)/libofc-clp.so
				else
					run=$dir/ofc
					plugin=
				fi
				{ time OFC_SOCKET= OFC_CLP_PLUGIN=$plugin timeout "$TIMEOUT" $run $args $th \
					>"$out.out" 2>"$out.err"; } 2>"$out.time"
				read -r wall user sys <"$out.time"
				cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
				masked "$out.out" >"$out.m"
				if [ -z "$ref" ]; then
					ref=$out.m
					same="(the reference)"
				elif ! grep -q . "$out.m"; then
					same="failed: $(head -c 60 "$out.err")"
				elif cmp -s "$ref" "$out.m"; then
					same=yes
				else
					same="NO: $(diff "$ref" "$out.m" | grep '^>' | head -n 1 | head -c 60)"
				fi
				tt=${th:+$t}
				printf '%-6s %6s %7s %5s %8s %8s  %s\n' "$r" "$which" "${tt:--}" "$round" \
					"$wall" "$cpu" "$same"
			done
		done
	done
done
echo "load after: $(uptime | sed 's/.*load average/load average/')"
