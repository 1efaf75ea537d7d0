#!/bin/sh
# bench/test_time.sh [REV]: make test's time as CI takes it (.ci/run) from a
# fresh clone of this repository at REV (HEAD by default): the build, the
# unit tests and the integration suites. Prints the whole wall time, the
# load before and after, and the suites by their CPU (the `time:` lines of
# tests/integration/run.sh: wall, then user + system of the suite and what
# it waited for), heaviest first, with their sum. The budget is about 10
# minutes on 2 cores (bench/results/tests.md, "make test's time").
#
#   ITEST_JOBS=N   suites side by side (run.sh's default: twice the cores)
#   ITEST_LANES=N  lanes of light suites beside the alone ones (default:
#                  the cores)
#   KEEP=1         keep the clone and its log (else removed)
set -u
rev=${1:-HEAD}
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/ofc-testtime.XXXXXX") || exit 1
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$dir"' EXIT
git clone -q "$here" "$dir/ofc" && git -C "$dir/ofc" checkout -q "$rev" || exit 1
echo "rev $(git -C "$dir/ofc" rev-parse --short HEAD); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
sh "$dir/ofc/.ci/run" >"$dir/log" 2>&1
rc=$?
echo "make test: exit $rc, $(($(date +%s) - start)) s wall; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^time: ' "$dir/log" | sort -t' ' -k6,6 -rn |
	awk '{ printf "%-28s %5s s wall %5s s cpu\n", $2, $3, $6; w += $3; c += $6 }
	END { printf "%-28s %5d s wall %5d s cpu (%d suites)\n", "all", w, c, NR }'
grep '^integration: failed' "$dir/log"
[ "${KEEP:-}" = 1 ] && echo "log: $dir/log"
exit $rc
