#!/bin/sh
# The scale table: every engine of `ofc schedule` / `ofc optree` at
# N = 256, 1,024, 4,096, 16,384 and 65,536 nodes (square tori torus:16x16 ..
# torus:256x256, hypercube:8 .. hypercube:16, genkautz:N,4, where the engine
# applies), with the same commands on a previous build beside them.
#
#   bench/scale_table.sh [OFC [OLD_OFC]]
#
# Engines (ENGINES selects, space separated; default all):
#   bfb-allgather bfb-allreduce   --algo bfb            torus hypercube genkautz
#   swing-bandwidth swing-latency --algo swing --variant V (allreduce)   torus
#   ring bidir-ring               --algo ring|bidir-ring (allreduce)
#                                                       torus hypercube genkautz
#   torus-rings                   (allreduce)           torus
#   rd-bandwidth rd-latency       --algo recursive-doubling --variant V
#                                 (allreduce)           torus hypercube
#   recursive                     (allreduce)           hypercube
#   recursive-allgather           --algo recursive --collective allgather
#                                 (relayed on tori)     torus hypercube
#   mcf-paths mcf-default         --collective alltoall --algo mcf
#                                 [--lowering paths]    torus hypercube genkautz
#   optree                        ofc optree --nodes N --wavelengths 64
# Every `ofc schedule` runs with --size 1MiB --threads 1 (one thread: on a
# shared machine a second one only adds noise), and --reduced is never
# given: what ofc builds by itself (explicit, or symmetry-reduced where the
# explicit schedule cannot be held) is what the row shows.
#
# Per row and binary: the exit status (ok; refused: exit 1, a memory
# estimate over the limit or the process's own out-of-memory message; n/a:
# exit 2, the engine does not apply; timeout; crash: killed by a signal),
# whether the schedule was explicit or symmetry-reduced (the JSON summary's
# "reduced"; all-to-all rows add the lowering taken), transfers (the whole
# schedule's) and, when reduced, the program's; the summary's generate_s and
# verify_s (OpTree's explicit summary has neither); export seconds (the
# wall time of the same command with --format pb -o FILE less that of the
# --json run; only where the --json run succeeded within EXPORT_MAX_S
# seconds, "not-run" past it, since the pb run repeats the whole command);
# and of the --json run, under /usr/bin/time, the peak RSS (%M), wall (%e)
# and user CPU (%U) seconds. Every command runs under `timeout TIMEOUT`.
# The old binary also runs under `ulimit -v OLD_MEMCAP_KB` so that it
# cannot take a shared machine's memory (past the cap it stops as on a
# smaller machine: its out-of-memory message, exit 1, or an abort), and its
# pb export is not timed unless OLD_EXPORT=1 (it repeats the whole run).
# Once a size fails for an engine, family and binary (a timeout, a crash, or
# any other failure that took more than SKIP_AFTER_S seconds), the larger
# sizes are skipped; a quick refusal or n/a does not stop the series (it
# costs nothing, and a larger size may be symmetry-reduced where a smaller
# one was refused).
#
# Then per series (engine, family, explicit or reduced) the growth exponent,
# the least-squares slope of log value on log N, of transfers, generation
# and verification seconds, new and old; and every refusal, n/a, timeout and
# crash with the line the command printed on stderr to say why.
#
# Environment: SIZES (default "256 1024 4096 16384 65536"), ENGINES (default
# all), REPS (1: each figure is the least of REPS runs), TIMEOUT (120 s),
# OLD_MEMCAP_KB (8388608: 8 GiB), EXPORT (1; 0 skips the pb runs),
# OLD_EXPORT (0), EXPORT_MAX_S (20), SKIP_AFTER_S (10), RAW (a file to which every row's raw
# figures are appended, tab separated).
set -u
NEW=${1:-build/ofc}
OLD=${2:-}
SIZES=${SIZES:-"256 1024 4096 16384 65536"}
ENGINES=${ENGINES:-"bfb-allgather bfb-allreduce swing-bandwidth swing-latency ring bidir-ring torus-rings rd-bandwidth rd-latency recursive recursive-allgather mcf-paths mcf-default optree"}
REPS=${REPS:-1}
TIMEOUT=${TIMEOUT:-120}
OLD_MEMCAP_KB=${OLD_MEMCAP_KB:-8388608}
EXPORT=${EXPORT:-1}
OLD_EXPORT=${OLD_EXPORT:-0}
EXPORT_MAX_S=${EXPORT_MAX_S:-20}
SKIP_AFTER_S=${SKIP_AFTER_S:-10}
RAW=${RAW:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ofc-scale-table.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

families() { # ENGINE
	case $1 in
	bfb-*|ring|bidir-ring|mcf-*) echo "torus hypercube genkautz" ;;
	swing-*|torus-rings) echo torus ;;
	rd-*) echo "torus hypercube" ;;
	recursive) echo hypercube ;;
	recursive-allgather) echo "torus hypercube" ;;
	optree) echo ring ;;
	esac
}

. "$(dirname "$0")/scale_lib.sh"

# ENGINE FAMILY N -> the command's arguments after the binary (no output flags)
args() {
	S="schedule --topology $(spec "$2" "$3") --size 1MiB --threads 1"
	case $1 in
	bfb-allgather) echo "$S --collective allgather --algo bfb" ;;
	bfb-allreduce) echo "$S --collective allreduce --algo bfb" ;;
	swing-bandwidth) echo "$S --collective allreduce --algo swing --variant bandwidth" ;;
	swing-latency) echo "$S --collective allreduce --algo swing --variant latency" ;;
	ring|bidir-ring|torus-rings|recursive) echo "$S --collective allreduce --algo $1" ;;
	recursive-allgather) echo "$S --collective allgather --algo recursive" ;;
	rd-bandwidth) echo "$S --collective allreduce --algo recursive-doubling --variant bandwidth" ;;
	rd-latency) echo "$S --collective allreduce --algo recursive-doubling --variant latency" ;;
	mcf-paths) echo "$S --collective alltoall --algo mcf --lowering paths" ;;
	mcf-default) echo "$S --collective alltoall --algo mcf" ;;
	optree) echo "optree --nodes $3 --wavelengths 64" ;;
	esac
}

# BIN CAP_KB OUT ARGS... : one timed run; OUT.t holds "wall user kb", OUT.rc
# the exit status, OUT.out / OUT.err the command's output
timed() {
	b=$1 cap=$2 out=$3
	shift 3
	(
		ulimit -c 0
		[ "$cap" -gt 0 ] && ulimit -v "$cap"
		exec /usr/bin/time -f '%e %U %M' -o "$out.t" timeout "$TIMEOUT" "$b" "$@" \
			>"$out.out" 2>"$out.err"
	)
	echo $? >"$out.rc"
}

# BIN CAP_KB EXPORT ENGINE FAMILY N -> one line of fields:
# status kind transfers program gen verify export peak wall user
# (status: ok, refused, n/a, timeout, crash, exit-K or bad-json; "-" where
# a field does not apply). The stderr line of a failure goes to $tmp/why.
measure() {
	b=$1 cap=$2 xp=$3
	a=$(args "$4" "$5" "$6")
	: >"$tmp/reps"
	i=0
	while [ $i -lt "$REPS" ]; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		timed "$b" "$cap" "$tmp/j" $a --json
		ex=-
		[ "$xp" = 1 ] && ex=skip
		if [ "$(cat "$tmp/j.rc")" = 0 ] && [ "$xp" = 1 ] &&
			python3 -c "import sys; sys.exit(float(open(sys.argv[1]).read().split()[-3]) > $EXPORT_MAX_S)" "$tmp/j.t"; then
			# shellcheck disable=SC2086
			timed "$b" "$cap" "$tmp/p" $a --format pb -o "$tmp/out.pb"
			ex=$(cat "$tmp/p.rc")
			rm -f "$tmp/out.pb"
		fi
		python3 - "$tmp/j" "$ex" "$tmp/p" "$TIMEOUT" >>"$tmp/reps" <<'EOF'
import json, re, sys
j, exrc, p, limit = sys.argv[1:5]
def times(f):
    try:
        w, u, kb = open(f + ".t").read().split()[-3:]
        return float(w), float(u), int(kb) // 1024
    except Exception:
        return None
rc = int(open(j + ".rc").read())
err = [l.strip() for l in open(j + ".err", errors="replace")
       if l.strip() and not l.startswith("usage")]
t = times(j)
wall, user, peak = t if t else (None, None, None)
def status(rc, err):
    if rc == 0: return "ok"
    if rc == 124: return "timeout"
    if rc == 1: return "refused"
    if rc == 2: return "n/a"
    if rc > 128 or rc < 0: return "crash"
    return "exit-%d" % rc
st = status(rc, err)
kind = tr = prog = gen = ver = exp = "-"
if rc == 0:
    try:
        s = json.loads(open(j + ".out").read())
        if isinstance(s, list):
            s = s[0]
        red = s.get("reduced")
        kind = "reduced" if red else "explicit"
        if s.get("lowering"):
            kind += ":" + s["lowering"]
        tr = str(s["num_transfers"])
        g, v = s.get("generate_s"), s.get("verify_s")
        if red:
            prog = str(red.get("program_transfers", "-"))
            g = red.get("generate_s", g) if g is None else g
            v = red.get("verify_s", v) if v is None else v
        gen = "%.4f" % g if g is not None else "-"
        ver = "%.4f" % v if v is not None else "-"
        if not s.get("verified", False):
            st = "unverified"
    except Exception:
        st = "bad-json"
    if exrc == "0":
        tp = times(p)
        if tp and wall is not None:
            exp = "%.2f" % max(0.0, tp[0] - wall)
    elif exrc == "skip":
        exp = "not-run"
    elif exrc != "-":
        perr = [l.strip() for l in open(p + ".err", errors="replace") if l.strip()]
        pst = status(int(exrc), perr)
        exp = "export-" + pst
        why = perr[-1] if perr else ""
        print("#why export %s: %s" % (pst, why))
else:
    why = next((l for l in err if re.search(r"needs about|built for|time limit|needs a|"
                                            r"refus|not|out of memory|only|up to", l)),
               err[0] if err else "")
    if rc == 124:
        why = "stopped by timeout %s s" % limit
    elif rc > 128 and not why:
        why = "killed by signal %d" % (rc - 128)
    print("#why %s: %s" % (st, why))
f = lambda x: "-" if x is None else x
print(st, kind, tr, prog, gen, ver, exp, f(peak), "%.2f" % wall if wall is not None else "-",
      "%.2f" % user if user is not None else "-")
EOF
	done
	grep '^#why' "$tmp/reps" | head -n 2 | sed 's/^#why //' >"$tmp/why"
	python3 - "$tmp/reps" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#why")]
if not rows:
    print("exit-? - - - - - - - - -")
    raise SystemExit
def least(k):
    v = [float(r[k]) for r in rows if r[k] != "-" and r[k][0].isdigit()]
    if not v:
        return rows[0][k]
    m = min(v)
    return {4: "%.4f", 5: "%.4f", 6: "%.2f", 7: "%d", 8: "%.2f", 9: "%.2f"}[k] % m
r = rows[0]
print(r[0], r[1], r[2], r[3], *(least(k) for k in range(4, 10)))
EOF
}

echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uptime | sed 's/.*load/load/')"
echo "# new: $NEW${OLD:+, old: $OLD (ulimit -v $OLD_MEMCAP_KB)}; timeout $TIMEOUT s; REPS=$REPS; SIZES=$SIZES"
echo
if [ -n "$OLD" ] && [ "$OLD_EXPORT" = 1 ]; then
	echo "| engine | topology | N | status | kind | transfers | program | generate s | verify s | export s (pb) | peak MiB | wall s | user s | old status | old generate s | old verify s | old export s | old peak MiB | old wall s | old user s |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
elif [ -n "$OLD" ]; then
	echo "| engine | topology | N | status | kind | transfers | program | generate s | verify s | export s (pb) | peak MiB | wall s | user s | old status | old generate s | old verify s | old peak MiB | old wall s | old user s |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
else
	echo "| engine | topology | N | status | kind | transfers | program | generate s | verify s | export s (pb) | peak MiB | wall s | user s |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
fi
: >"$tmp/series"
: >"$tmp/notes"
SKIP="skipped - - - - - - - - -"
# FIELDS... -> true if the larger sizes of this series should be skipped
fails() {
	case $1 in
	ok) return 1 ;;
	timeout|crash|skipped|exit-*|bad-json|unverified) return 0 ;;
	esac
	[ "$9" = - ] && return 0
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > $SKIP_AFTER_S else 1)" "$9"
}
for e in $ENGINES; do
	for fam in $(families "$e"); do
		newfail= oldfail=
		for n in $SIZES; do
			sp=$(spec "$fam" "$n")
			if [ -n "$newfail" ]; then
				nf=$SKIP
			else
				nf=$(measure "$NEW" 0 "$EXPORT" "$e" "$fam" "$n")
				[ -s "$tmp/why" ] && sed "s|^|$e $sp (new) |" "$tmp/why" >>"$tmp/notes"
			fi
			# shellcheck disable=SC2086
			set -- $nf
			fails "$@" && newfail=1
			line="| $e | $sp | $n | $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 | $9 | ${10} |"
			echo "$e $fam new $n $nf" >>"$tmp/series"
			if [ -n "$OLD" ]; then
				if [ -n "$oldfail" ]; then
					of=$SKIP
				else
					of=$(measure "$OLD" "$OLD_MEMCAP_KB" "$OLD_EXPORT" "$e" "$fam" "$n")
					[ -s "$tmp/why" ] && sed "s|^|$e $sp (old) |" "$tmp/why" >>"$tmp/notes"
				fi
				# shellcheck disable=SC2086
				set -- $of
				fails "$@" && oldfail=1
				if [ "$OLD_EXPORT" = 1 ]; then
					line="$line $1 | $5 | $6 | $7 | $8 | $9 | ${10} |"
				else
					line="$line $1 | $5 | $6 | $8 | $9 | ${10} |"
				fi
				echo "$e $fam old $n $of" >>"$tmp/series"
			fi
			echo "$line"
			[ -n "$RAW" ] && printf '%s\t%s\t%s\t%s\n' "$e" "$sp" "$n" "$nf${OLD:+	$of}" >>"$RAW"
		done
	done
done
echo
echo "Growth exponents: least-squares slope of log value on log N over the sizes"
echo "where the series ran (explicit and reduced rows are separate series; only"
echo "series of two sizes or more):"
echo
python3 - "$tmp/series" <<'EOF'
import math, sys
from collections import OrderedDict
rows = OrderedDict()
for line in open(sys.argv[1]):
    e, fam, who, n, st, kind, tr, prog, gen, ver = line.split()[:10]
    if st != "ok":
        continue
    rows.setdefault((e, fam, kind), {}).setdefault(who, []).append((int(n), tr, gen, ver))
def slope(pts):
    pts = [(math.log(a), math.log(float(b))) for a, b in pts if b != "-" and float(b) > 0]
    if len(pts) < 2:
        return "-"
    mx = sum(p[0] for p in pts) / len(pts); my = sum(p[1] for p in pts) / len(pts)
    return "N^%.2f" % (sum((p[0] - mx) * (p[1] - my) for p in pts) /
                       sum((p[0] - mx) ** 2 for p in pts))
def span(r):
    return "-" if not r else "%d" % r[0][0] if len(r) == 1 else "%d-%d" % (r[0][0], r[-1][0])
old = any("old" in v for v in rows.values())
print("| engine | family | kind | N | transfers | generation | verification |"
      + (" old N | old generation | old verification |" if old else ""))
print("|---|---|---|---|---|---|---|" + ("---|---|---|" if old else ""))
for (e, fam, kind), w in rows.items():
    r, o = w.get("new", []), w.get("old", [])
    if len(r) < 2 and len(o) < 2:
        continue
    cols = [slope([(x[0], x[i]) for x in r]) for i in (1, 2, 3)]
    line = "| %s | %s | %s | %s | %s |" % (e, fam, kind, span(r), " | ".join(cols))
    if old:
        line += " %s | %s | %s |" % (span(o), slope([(x[0], x[2]) for x in o]),
                                     slope([(x[0], x[3]) for x in o]))
    print(line)
EOF
if [ -s "$tmp/notes" ]; then
	echo
	echo "Refusals, n/a, timeouts and crashes (the command's first telling stderr line):"
	echo
	sed 's/^/- /' "$tmp/notes"
fi
echo
echo "# end $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uptime | sed 's/.*load/load/')"
