#!/bin/sh
# What open pages cost under the Slurm churn (bench/churn_prolog.sh): 0, 1
# and 10 clients speaking the page's protocol (bench/page_client.py: one
# whole read, then each event's delta applied; a whole read again only when
# the copy cannot follow) on ofcd's socket during the churn's rounds. For
# each count: the bytes a client received a second (protobuf frames; the
# gateway's JSON is larger, its gzip smaller), its whole reads, and ofcd's
# CPU over the rounds (utime + stime from /proc, a share of one core).
#
#   sh bench/page_load.sh [HOSTS [ROUNDS [CONC]]]       # 8192 2 32
#   PAGES="0 1 10" (the counts)
cd "$(dirname "$0")/.." || exit 1
HOSTS=${1:-8192}
ROUNDS=${2:-2}
CONC=${3:-32}
BUILD=${BUILD:-build}
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "page_load: $HOSTS hosts, $ROUNDS rounds of $CONC jobs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in ${PAGES:-0 1 10}; do
	# ofcd's CPU ticks from the start of the rounds to their end, and the
	# clients' figures
	DURING="
		cpu() { awk '{print \$14 + \$15}' /proc/\$OFCD_PID/stat; }
		c0=\$(cpu); t0=\$(date +%s.%N)
		if [ $n -gt 0 ]; then PYTHONPATH=$BUILD/python $PY bench/page_client.py \"\$LEAD\" $n >$out/pages.$n & p=\$!; fi
		trap 'c1=\$(cpu); t1=\$(date +%s.%N); [ -n \"\${p:-}\" ] && kill -TERM \$p && wait \$p;
		      echo \"\$c0 \$c1 \$t0 \$t1 \$(getconf CLK_TCK)\" >$out/cpu.$n; exit 0' TERM
		while :; do sleep 0.2; done"
	BUILD=$BUILD DURING=$DURING sh bench/churn_prolog.sh "$HOSTS" "$ROUNDS" "$CONC" >"$out/churn.$n" 2>&1
	grep -E "^jobs a minute|prologs, " "$out/churn.$n" | sed "s/^/  $n pages: churn: /"
	$PY - "$n" "$out" <<'PY'
import json, os, sys
n, out = int(sys.argv[1]), sys.argv[2]
try:
    c0, c1, t0, t1, hz = open(f"{out}/cpu.{n}").read().split()
except (OSError, ValueError):
    sys.exit(f"  {n} pages: no figures (the churn did not run: see churn.{n})")
cpu = (float(c1) - float(c0)) / float(hz) / (float(t1) - float(t0))
line = f"  {n} pages: ofcd {100 * cpu:.1f}% of a core over {float(t1) - float(t0):.1f} s of rounds ({(float(c1) - float(c0)) / float(hz):.2f} CPU s)"
if n and os.path.exists(f"{out}/pages.{n}"):
    ps = json.loads(open(f"{out}/pages.{n}").read() or "[]")
    # (after its first whole read: what an open page costs, not its start)
    first = [p["read_bytes"] / p["reads"] for p in ps]
    rates = sorted((p["bytes"] - f) / p["secs"] for p, f in zip(ps, first))
    line += "; a page %.1f KB/s after its start (max %.1f), %d whole reads (%.0f KB each), %d events" % (
        rates[len(rates) // 2] / 1024, rates[-1] / 1024, sum(p["reads"] for p in ps),
        max(first) / 1024, max(p["events"] for p in ps))
    why = {}
    for p in ps:
        for k, v in p.get("why", {}).items():
            why[k] = why.get(k, 0) + v
    if why:
        line += "; read again for: " + ", ".join(f"{k} ({v})" for k, v in why.items())
print(line)
PY
done
echo "page_load: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
