#!/bin/sh
# Where the MCF master's Clp time goes on the main thread: perf samples
# (flat, no call graphs) of one `ofc ARGS`, each sample of the main
# thread put in a part by its symbol and library: the steepest-edge
# pricing split over threads (rwa/lp_clp_split.cc), Clp's products of a
# pivot row with the matrix (column-wise over a dense row, row-wise or
# over a subset where it is sparse), the factorisation (CoinFactorization,
# its dense tail in BLAS and LAPACK), the rest of Clp, ofc and the kernel.
# Then the main thread's biggest Clp symbols. Says whether a product is
# big enough to be worth splitting like the pricing: a part's seconds are
# at most what 2 threads could halve.
#
#   bench/clp_profile.sh [ARGS...]   default: the gk MCF on 2 threads
#   OFC=build/ofc FREQ=999 TOP=20 bench/clp_profile.sh schedule \
#       --topology genkautz:1024,4 --collective alltoall --lowering paths \
#       --size 1MiB --threads 16
#
# Needs perf (perf_event_paranoid <= 2 for a user's own process) and
# python3. Seconds are samples / FREQ of this run (the load is printed).
set -u
cd "$(dirname "$0")/.." || exit 1
OFC=${OFC:-build/ofc}
FREQ=${FREQ:-999}
TOP=${TOP:-15}
[ $# -gt 0 ] || set -- schedule --topology genkautz:1024,4 --collective alltoall \
	--lowering paths --size 1MiB --threads 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-cprof.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "load before: $(uptime | sed 's/.*load average: //')"
echo "\$ ofc $*"
perf record -q -F "$FREQ" -o "$tmp/perf.data" "$OFC" "$@" >"$tmp/out" 2>"$tmp/err" || {
	echo "clp_profile.sh: perf record failed: $(head -c 300 "$tmp/err")" >&2
	exit 1
}
echo "load after: $(uptime | sed 's/.*load average: //')"
perf script -i "$tmp/perf.data" -F pid,tid,ip,sym,dso -G 2>/dev/null >"$tmp/script"
python3 - "$tmp/script" "$FREQ" "$TOP" <<'PY'
import collections, re, sys

freq, top = float(sys.argv[2]), int(sys.argv[3])
# the library is the last parenthesised name (a symbol may hold some)
line = re.compile(r"^\s*(\d+)/(\d+)\s+[0-9a-f]+\s+(.*)\s+\(([^()]*)\)\s*$")
column = ("gutsOfTransposeTimesScaled", "gutsOfTransposeTimesUnscaled",
          "transposeTimesByColumn")
row = ("transposeTimesByRow", "gutsOfTransposeTimesByRow", "subsetTransposeTimes",
       "transposeTimesSubset", "subsetTimes2")


def part(sym, dso):
    if ("SplitMatrix" in sym or "Workers::" in sym or "price_column" in sym
            or sym.startswith("ClpPackedMatrix::transposeTimes2")):
        return "pricing: steepest edge (transposeTimes2, split or Clp's)"
    if sym.startswith("ClpPackedMatrix::"):
        if any(s in sym for s in column):
            return "products: column-wise (dense pivot row)"
        if any(s in sym for s in row):
            return "products: row-wise and subsets (sparse pivot row)"
    if "blas" in dso or "lapack" in dso:
        return "factorisation: dense tail (BLAS, LAPACK)"
    if sym.startswith("CoinFactorization"):
        return "factorisation: CoinFactorization"
    if "libClp" in dso or "libCoinUtils" in dso:
        return "the rest of Clp and CoinUtils"
    if dso.endswith("/ofc") or "libofc" in dso:
        return "ofc"
    if "kernel" in dso:
        return "kernel (page faults, scheduling)"
    return "libc and the rest"


main, other, clp = collections.Counter(), collections.Counter(), collections.Counter()
for text in open(sys.argv[1], errors="replace"):
    m = line.match(text)
    if not m:
        continue
    pid, tid, sym, dso = m.group(1), m.group(2), m.group(3), m.group(4)
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    p = part(sym, dso)
    if pid == tid:
        main[p] += 1
        if "libClp" in dso or "libCoinUtils" in dso or "blas" in dso or "lapack" in dso:
            clp[sym[:70]] += 1
    else:
        other[p] += 1
n = sum(main.values()) or 1
print("\n| part | main thread s | main % | other threads s |")
print("|---|---:|---:|---:|")
for p, c in sorted(main.items(), key=lambda x: -x[1]):
    print("| %s | %.2f | %.1f | %.2f |" % (p, c / freq, 100.0 * c / n, other[p] / freq))
print("| all | %.2f | 100 | %.2f |" % (n / freq, sum(other.values()) / freq))
print("\nthe main thread's biggest Clp, CoinUtils, BLAS and LAPACK symbols:")
print("| symbol | s | main % |")
print("|---|---:|---:|")
for s, c in clp.most_common(top):
    print("| `%s` | %.3f | %.1f |" % (s, c / freq, 100.0 * c / n))
PY
