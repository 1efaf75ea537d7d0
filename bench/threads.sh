#!/bin/bash
# The heavy requests on 1, 2 and every core: wall time, CPU time (user +
# system), their ratio (the cores kept busy), the speedup over 1 thread,
# the main thread's CPU time and the speedup it bounds (main_cpu below:
# what N free cores would give, which a loaded machine's wall time does not
# say), peak memory, and whether the answer is the one of 1 thread (the
# summary less its timings).
# Runs from a build tree and examples/ alone:
#
#   bench/threads.sh                 every request, on 1, 2 and $(nproc) threads
#   THREADS="1 4 16" bench/threads.sh gk hc
#   BUILD=build TIMEOUT=120 bench/threads.sh
#   LIBS=build/libs bench/threads.sh  on a machine without ofc's libraries:
#                                    bench/bundle_libs.sh build/libs (here)
#                                    copies them; carry build/ with them
#   BEFORE=/tmp/old/ofc bench/threads.sh paths gk hc
#                                    another build's ofc (its libofc-clp.so
#                                    beside it) run before this one at each
#                                    thread count, in the same run: a build
#                                    column, each build's speedup over its
#                                    own 1 thread, and same_as_1 against
#                                    the first build's answer
#
# Requests (NAME: the command after `ofc schedule`):
#   fluid    examples/modelw/all-links-32.yaml --collective allgather
#   torus    --topology torus:32x32 --collective alltoall --size 1MiB
#   paths    the same, --lowering paths (the lowering alone, no steps try)
#   gk       --topology genkautz:1024,4 --collective alltoall --lowering paths --size 1MiB
#   hc       --topology hypercube:12 --collective allreduce --size 64MiB
#   small    --topology genkautz:256,4 --collective alltoall --lowering paths --size 1MiB
#            (a smoke test of the script: not run unless named)
# Each run is cut at TIMEOUT seconds (default 120). The load (uptime) is
# printed before and after: compare ratios from one run, not times across
# runs.
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=${OFC:-$BUILD/ofc}
if [ -n "${LIBS:-}" ]; then
	# ofc and Clp's plugin on the libraries bundle_libs.sh copied, through
	# the bundle's own loader (the machine's libc may be older)
	OFC="$LIBS/ld-linux-x86-64.so.2 --library-path $LIBS $OFC"
	OFC_CLP_PLUGIN=$(cd "$BUILD" && pwd)/libofc-clp.so
	export OFC_CLP_PLUGIN
fi
BEFORE=${BEFORE:-}
if [ -n "$BEFORE" ]; then
	[ -x "$BEFORE" ] || {
		echo "threads.sh: BEFORE=$BEFORE is not an executable" >&2
		exit 2
	}
	BEFORE_CLP=$(cd "$(dirname "$BEFORE")" && pwd)/libofc-clp.so
	[ -n "${LIBS:-}" ] && BEFORE="$LIBS/ld-linux-x86-64.so.2 --library-path $LIBS $BEFORE"
fi
TIMEOUT=${TIMEOUT:-120}
ncpu=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
THREADS=${THREADS:-1 2 $ncpu}
# (unique, in order: on a 2-core machine "1 2 2" is "1 2")
THREADS=$(printf '%s\n' $THREADS | awk '!seen[$0]++' | tr '\n' ' ')

request() {
	case $1 in
	fluid) echo "examples/modelw/all-links-32.yaml --collective allgather" ;;
	torus) echo "--topology torus:32x32 --collective alltoall --size 1MiB" ;;
	paths) echo "--topology torus:32x32 --collective alltoall --lowering paths --size 1MiB" ;;
	gk) echo "--topology genkautz:1024,4 --collective alltoall --lowering paths --size 1MiB" ;;
	hc) echo "--topology hypercube:12 --collective allreduce --size 64MiB" ;;
	small) echo "--topology genkautz:256,4 --collective alltoall --lowering paths --size 1MiB" ;;
	*) return 1 ;;
	esac
}
[ $# -gt 0 ] || set -- fluid torus paths gk hc
for r in "$@"; do
	request "$r" >/dev/null || {
		echo "threads.sh: unknown request '$r' (fluid torus paths gk hc small)" >&2
		exit 2
	}
done
first=${OFC%% *}
[ -x "$first" ] || {
	echo "threads.sh: $first is not built (BUILD=$BUILD)" >&2
	exit 2
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-threads.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# The summary less its timings: what must not change with the threads.
masked() {
	# (scripts/corpus.sh's mask, and the fluid engine's seconds_*)
	sed -E -e 's/"(generate_s|verify_s|[a-z_]*seconds|seconds_[a-z_]*)": *[0-9.e+-]+/"\1": <T>/g' \
		-e 's/\([0-9.e+-]+ s to solve\)/(<T> s to solve)/g' \
		-e 's/(in|took|after|elapsed|wall|solved in|optimal,|iterations,|models,|\() +[0-9]+(\.[0-9]+)?(e-?[0-9]+)? ?(ns|us|ms|s|min)\b/\1 <T>/g' \
		-e 's/[0-9]+(\.[0-9]+)? ?s to price/<T> to price/g' "$1"
}
gnutime=
# main_cpu, preloaded into ofc, writes at exit the CPU time of the main
# thread to $OFC_MAIN_CPU. parallel_for runs its caller as worker 0, so on
# N free cores the main thread's CPU time is the run's wall time (the
# serial parts, plus a 1/N share of each parallel one): against the CPU
# time on 1 thread it gives the speedup N free cores would give (free_x).
# Built where a C compiler is at hand; else those columns say "-".
cat >"$tmp/main_cpu.c" <<'EOF_C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((destructor)) static void main_cpu_report(void)
{
	const char *path = getenv("OFC_MAIN_CPU");
	struct timespec t;
	FILE *f;

	if (!path || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0 || !(f = fopen(path, "w")))
		return;
	fprintf(f, "%.3f\n", (double)t.tv_sec + (double)t.tv_nsec * 1e-9);
	fclose(f);
}
EOF_C
shim=
cc -O2 -shared -fPIC -o "$tmp/main_cpu.so" "$tmp/main_cpu.c" 2>/dev/null && shim=$tmp/main_cpu.so
[ -x /usr/bin/time ] && /usr/bin/time -f %M true 2>/dev/null && gnutime=/usr/bin/time

echo "machine: $ncpu CPUs ($(uname -m)); threads: $THREADS; timeout ${TIMEOUT}s"
echo "load before: $(uptime | sed 's/.*load average/load average/')"
# row FIELDS...: one line of the table, the build first when two are run.
row() {
	if [ -n "$BEFORE" ]; then
		printf '%-6s %-6s %7s %9s %9s %8s %8s %8s %8s %8s  %s\n' "$@"
	else
		shift
		printf '%-6s %7s %9s %9s %8s %8s %8s %8s %8s  %s\n' "$@"
	fi
}
row build request threads wall_s cpu_s cpu/wall speedup main_s free_x rss_MB same_as_1
builds=after
[ -n "$BEFORE" ] && builds="before after"
for r in "$@"; do
	args=$(request "$r")
	basem=
	for b in $builds; do
		eval "base_$b="
	done
	for t in $THREADS; do
		for b in $builds; do
			out=$tmp/$r.$t.$b
			ofc=$OFC
			clp=${OFC_CLP_PLUGIN:-}
			if [ "$b" = before ]; then
				ofc=$BEFORE
				clp=$BEFORE_CLP
			fi
			TIMEFORMAT='%R %U %S'
			# (bash's time keyword: wall, user, system; GNU time, where
			# present, for the peak memory)
			{ time OFC_SOCKET= ${gnutime:+$gnutime -f %M -o $out.rss} timeout "$TIMEOUT" \
				env ${clp:+OFC_CLP_PLUGIN=$clp} \
				${shim:+OFC_MAIN_CPU=$out.main LD_PRELOAD=$shim} \
				$ofc schedule $args --threads "$t" >"$out.out" 2>"$out.err"; } 2>"$out.time"
			read -r wall user sys <"$out.time"
			rss=-
			[ -s "$out.rss" ] && rss=$(awk '/^[0-9]+$/ { printf "%.0f", $1 / 1024 }' "$out.rss")
			if ! grep -q . "$out.out"; then
				what=$(grep -q . "$out.err" && head -c 80 "$out.err" | tr '\n' ' ')
				row "$b" "$r" "$t" "$wall" - - - - - "$rss" "failed or past ${TIMEOUT}s: $what"
				continue
			fi
			cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
			ratio=$(awk -v c="$cpu" -v w="$wall" 'BEGIN { printf "%.2f", (w > 0 ? c / w : 0) }')
			masked "$out.out" >"$out.m"
			main=-
			[ -s "$out.main" ] && main=$(cat "$out.main")
			# each build's speedup over its own first thread count
			eval "base=\$base_$b basecpu=\$basecpu_$b"
			if [ -z "$base" ]; then
				eval "base_$b=\$wall basecpu_$b=\$cpu"
				base=$wall
				basecpu=$cpu
			fi
			if [ -z "$basem" ]; then
				basem=$out.m
				same="(the reference)"
			elif cmp -s "$basem" "$out.m"; then
				same=yes
			else
				same="NO: $(diff "$basem" "$out.m" | grep '^>' | head -n 1 | head -c 60)"
			fi
			speed=$(awk -v b="$base" -v w="$wall" 'BEGIN { printf "%.2fx", (w > 0 ? b / w : 0) }')
			free=-
			[ "$main" != - ] &&
				free=$(awk -v c="$basecpu" -v m="$main" 'BEGIN { printf "%.2fx", (m > 0 ? c / m : 0) }')
			row "$b" "$r" "$t" "$wall" "$cpu" "$ratio" "$speed" "$main" "$free" "$rss" "$same"
		done
	done
done
echo "load after: $(uptime | sed 's/.*load average/load average/')"
