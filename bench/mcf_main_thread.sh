#!/bin/sh
# Where the MCF's main thread spends its time, by phase: the master LP's
# serial part (Clp on the main thread alone), the master's pricing split
# over threads (rwa/lp_clp_split.cc, the main thread's share), ofc's loops
# on parallel_for (the main thread's share, by the function that started
# the loop) and ofc's serial code outside both (by its nearest frames).
# What N threads cannot shorten is the first and the last: the bound on
# the speedup the main thread allows is (all) / (serial + the rest / N).
# perf samples with DWARF call graphs (the split pricing is C++ lambdas
# through std::function: frame pointers do not see it).
#
#   bench/mcf_main_thread.sh            the gk MCF on 2 threads
#   THREADS=1 bench/mcf_main_thread.sh  on 1
#   OFC=build/ofc FREQ=499 TOP=15 bench/mcf_main_thread.sh schedule ARGS...
#
# Needs perf (perf_event_paranoid <= 2 for a user's own process) and
# python3. Seconds are samples / FREQ of this run (the load is printed);
# perf's unwinding costs the run about a third more wall time.
set -u
cd "$(dirname "$0")/.." || exit 1
OFC=${OFC:-build/ofc}
FREQ=${FREQ:-499}
TOP=${TOP:-12}
THREADS=${THREADS:-2}
[ $# -gt 0 ] || set -- schedule --topology genkautz:1024,4 --collective alltoall \
	--lowering paths --size 1MiB --threads "$THREADS"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-mprof.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "load before: $(uptime | sed 's/.*load average: //')"
echo "\$ ofc $*"
perf record -q -F "$FREQ" --call-graph dwarf,16384 -o "$tmp/perf.data" "$OFC" "$@" \
	>"$tmp/out" 2>"$tmp/err" || {
	echo "mcf_main_thread.sh: perf record failed: $(head -c 300 "$tmp/err")" >&2
	exit 1
}
echo "load after: $(uptime | sed 's/.*load average: //')"
perf script -i "$tmp/perf.data" -F tid,ip,sym,dso 2>/dev/null >"$tmp/script"
python3 - "$tmp/script" "$FREQ" "$TOP" <<'PY'
import collections, sys

freq, top = float(sys.argv[2]), int(sys.argv[3])
samples, cur = [], None
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        if cur:
            samples.append(cur)
        cur = None
    elif not line.startswith("\t"):
        cur = (int(line.split()[0]), [])
    elif cur is not None:
        rest = line.strip().split(None, 1)
        if len(rest) == 2:
            i = rest[1].rfind(" (")
            cur[1].append((rest[1][:i], rest[1][i + 2:-1].split("/")[-1]))
if cur:
    samples.append(cur)
if not samples:
    sys.exit("mcf_main_thread.sh: no samples")
main = samples[0][0]  # the first sample is the process's own thread
part = collections.Counter()
loops = collections.Counter()
serial = collections.Counter()
others = 0
for tid, st in samples:
    if tid != main:
        others += 1
        continue
    names = [s for s, _ in st]
    # the steepest-edge pricing: split over threads (or Clp's on one)
    split = any("transposeTimes2" in n for n in names)
    if "master_solve" in names:
        part["master LP, pricing (split: main's share)" if split
             else "master LP, serial (Clp, CoinUtils, BLAS)"] += 1
    elif "parallel_for" in names:  # (on 1 thread it runs the loop itself)
        j = names.index("parallel_for")
        caller = names[j + 1] if j + 1 < len(names) else "?"
        part["ofc on parallel_for (main's share)"] += 1
        loops[caller] += 1
    else:
        part["ofc and the rest, serial"] += 1
        own = [s for s, d in st if d in ("ofc", "inlined")]
        serial[" < ".join(own[:3]) or st[0][0]] += 1
total = sum(part.values())
print()
print("| main thread | s | % |")
print("|---|---:|---:|")
for k in ("master LP, serial (Clp, CoinUtils, BLAS)", "master LP, pricing (split: main's share)",
          "ofc on parallel_for (main's share)", "ofc and the rest, serial"):
    print(f"| {k} | {part[k] / freq:.2f} | {100 * part[k] / total:.1f} |")
print(f"| all | {total / freq:.2f} | 100 |")
print(f"| (other threads, all) | {others / freq:.2f} | |")
# what N threads cannot shorten: the master's serial part and ofc's own
ser = part["master LP, serial (Clp, CoinUtils, BLAS)"] + part["ofc and the rest, serial"]
print(f"serial {ser / freq:.2f} s of the main thread's {total / freq:.2f} s: all / serial"
      f" {total / max(ser, 1):.2f}x (on 1 thread, the most any number of threads can give)")
print()
print("parallel_for loops, the main thread's share, by the function that started them:")
for k, v in loops.most_common(top):
    print(f"  {v / freq:6.2f} s  {k}")
print("serial outside the master, by nearest frames:")
for k, v in serial.most_common(top):
    print(f"  {v / freq:6.2f} s  {k[:110]}")
PY
