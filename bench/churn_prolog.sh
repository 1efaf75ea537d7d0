#!/bin/sh
# Slurm churn through one ofcd at HOSTS hosts (bench/results/slurm.md, "Slurm
# churn through ofcd"): HOSTS hosts of 4 ports wired per port to four
# ocs-emus of HOSTS ports (port j of every host on switch j), the fabric
# first at the squarest torus, then ROUNDS rounds of CONC jobs whose
# prologs start together, then their epilogs together. Every hook is `ofc
# slurm prolog`/`epilog` as PrologSlurmctld runs it (a stand-in scontrol);
# renumbering on (the default) unless NORELABEL=1.
#
# The jobs of a round: CONC tori of 8, 16, 32 and 64 hosts, a quarter of
# each (sizes halved until they fit HOSTS), placed on the hosts in an order
# shuffled anew each round (SEED), so each job lands on hosts that held
# other jobs' circuits and the renumbering has work to do.
#
# Prints each prolog's wall time (p50 / p99 / max over every round), jobs a
# minute (every prolog and epilog of every round over their wall time),
# the load, and from ofcd's log where a prolog's time went: queued to
# answered, and the mutation worker's own lines (ticket N: took ...).
#
#   sh bench/churn_prolog.sh [HOSTS [ROUNDS [CONC]]]        # 1024 3 32
#   NORELABEL=1 sh bench/churn_prolog.sh ...                  the jobs ask ofc:relabel=no
#   REPLICAS=3 sh bench/churn_prolog.sh ...                   three replicas on etcd
#   KEEP=DIR                                                  ofcd's log (and stderr) copied there
#   LOGLEVEL=debug                                            ofcd's --log-level (info): debug adds
#                                                             each plan ahead's budget and time
#   DURING=CMD   CMD run (sh -c) before the rounds with LEAD (the leader's
#                socket) and OFCD_PID (one ofcd's) in its environment, and
#                sent SIGTERM after them, waited for (bench/page_load.sh)
SUITE=churn-prolog
# under bash: its clock ($EPOCHREALTIME) starts no process, where date's
# two a prolog were 64 processes a round beside the 32 prologs they timed
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
cd "$(dirname "$0")/.." || exit 1
. tests/integration/lib.sh
. tests/integration/emu.sh
# where a prolog's and an epilog's time went, from ofcd's logs: each
# prolog's queued line to its answer, the transaction alone, and the
# worker's own stages (ticket N: ...: took: ...); also
#   sh bench/churn_prolog.sh --logs LOG...     on logs KEEP kept
breakdown() {
	cat "$@" | python3 -c '
import re, sys, datetime
t = lambda l: datetime.datetime.strptime(l[:23], "%Y-%m-%d %H:%M:%S.%f").timestamp()
q, own, txn, took, turn, batch = {}, [], [], {}, {}, {"prolog": [], "epilog": []}
for l in sys.stdin:
    m = re.search(r"planned in its turn: (.*)", l)
    if m: turn[m.group(1)] = turn.get(m.group(1), 0) + 1
    m = re.search(r"queued ticket \d+: reconfigure partition slurm-job-(\d+)", l)
    if m: q[m.group(1)] = t(l)
    m = re.search(r"ticket \d+: reconfigure partition slurm-job-(\d+).*: ok: committed .* in ([0-9.]+) s", l)
    if m and m.group(1) in q: own.append(t(l) - q[m.group(1)]); txn.append(float(m.group(2)))
    # the took line of a lone job, or of a batch (batch of K ...: each stage
    # once for its K jobs: the share of a job is a K-th, counted K times)
    m = re.search(r"ticket \d+: (?:batch of (\d+) )?(reconfigure|release-partition)( partition slurm-job-\d+.*| \(tickets [0-9.]+\)): took: (.*)", l)
    if m:
        k_jobs = int(m.group(1) or 1)
        side = "prolog" if m.group(2) == "reconfigure" else "epilog"
        batch[side].append(k_jobs)
        for k, v in re.findall(r"([a-z ]+) ([0-9.]+) s", m.group(4)):
            took.setdefault(side + " " + k.strip(), []).extend([float(v) / k_jobs] * k_jobs)
p = lambda v, f: sorted(v)[min(len(v) - 1, int(f * len(v)))] if v else 0
print("in ofcd: queued to answered p50 %.0f ms, p99 %.0f ms; the transaction alone p50 %.0f ms, p99 %.0f ms"
      % (1000 * p(own, 0.5), 1000 * p(own, 0.99), 1000 * p(txn, 0.5), 1000 * p(txn, 0.99)))
for side in ("prolog", "epilog"):
    b = batch[side]
    if b:
        print("  %ss: %d jobs in %d turns of the worker (%d together, the largest %d)"
              % (side, sum(b), len(b), sum(x for x in b if x > 1), max(b)))
print("  the worker alone, a job (a batch shared by its jobs):")
for k, v in took.items():
    print("  %-24s mean %6.1f ms  p50 %6.1f  p99 %6.1f  (%d)" % (k, 1000 * sum(v) / len(v), 1000 * p(v, 0.5), 1000 * p(v, 0.99), len(v)))
pt, et = took.get("prolog total", []), took.get("epilog total", [])
if pt and et:
    per = sum(pt) / len(pt) + sum(et) / len(et)
    print("  a job (prolog and epilog) takes the worker %.1f ms: at most %.0f jobs a minute by the worker alone"
          % (1000 * per, 60 / per))
for k, v in turn.items():
    print("  planned in its turn (not ahead): %d: %s" % (v, k))'
}
if [ "${1:-}" = --logs ]; then
	shift
	breakdown "$@"
	exit
fi
HOSTS=${1:-1024}
ROUNDS=${2:-3}
CONC=${3:-32}
SEED=${SEED:-1}
REPLICAS=${REPLICAS:-1}

spec() { python3 -c "
import math
n = $1; a = 2 ** (int(math.log2(n)) // 2)
print('ring:%d' % n if n < 8 else 'torus:%dx%d' % (a, n // a))"; }
TOPO=$(spec "$HOSTS")

mkdir -p "$TMP/cred" "$TMP/state"
chmod 700 "$TMP/cred"
cp configs/credentials/ocs0.cred "$TMP/cred/ocs.cred"
chmod 600 "$TMP/cred/ocs.cred"
for s in 0 1 2 3; do
	start_emu ocs-emu e$s --ports "$HOSTS" --credentials configs/credentials/ocs0.cred
done
{
	printf 'version: 1\nname: churn%s\nhosts:\n  count: %s\n  prefix: h\n  ports: 4\n  port_rate: 100Gbps\nswitches:\n' "$HOSTS" "$HOSTS"
	for s in 0 1 2 3; do
		eval "p=\$e${s}_port"
		printf '  - name: ocs%s\n    type: ocs\n    ports: %s\n    reconfig_time: 10ms\n    driver:\n      type: tl1\n      address: 127.0.0.1:%s\n      credentials: cred/ocs.cred\n      timeout: 20s\n      retries: 2\n' "$s" "$HOSTS" "$p"
	done
	printf 'wiring:\n  pattern: per-port\n  switches: [ocs0, ocs1, ocs2, ocs3]\ntopology: %s\ncollectives:\n  - op: allreduce\n    size: 64MiB\ncost_model:\n  alpha: 10us\n  link_bandwidth: 100Gbps\n' "$TOPO"
} >"$TMP/fab.yaml"

if [ "$REPLICAS" = 1 ]; then
	SOCKS="$TMP/ofcd.sock"
	LOGS="$TMP/ofcd.log"
	$BUILD/ofcd --config "$TMP/fab.yaml" --socket "$SOCKS" --state-dir "$TMP/state" \
		--credentials-dir "$TMP/cred" --probe-interval 0 --foreground \
		--log-file "$TMP/ofcd.log" --log-level ${LOGLEVEL:-info} 2>>"$TMP/ofcd.stderr" &
	DAEMON=$!
	trap 'kill $DAEMON 2>/dev/null; stop_all_emus; rm -rf "$TMP"' EXIT
	LEAD=$SOCKS
	_end=$(($(date +%s) + 60))
	until $OFC --socket "$SOCKS" status >/dev/null 2>&1 || [ "$(date +%s)" -gt $_end ]; do sleep 0.1; done
else
	# three replicas on a 3-member etcd (tests/integration/cluster_env.sh:
	# its exit trap stops them, etcd and the emulators), each its own copy
	# of the config and credentials
	. tests/integration/cluster_env.sh
	etcd_start 3 || { echo "etcd did not start"; exit 1; }
	for r in r1 r2 r3; do
		mkdir -p "$TMP/$r/state"
		chmod 700 "$TMP/$r"
		cp configs/credentials/ocs0.cred "$TMP/$r/ocs.cred"
		chmod 600 "$TMP/$r/ocs.cred"
		sed 's|credentials: cred/ocs.cred|credentials: ocs.cred|' "$TMP/fab.yaml" >"$TMP/$r/fab.yaml"
		replica_start $r --probe-interval 0
	done
	SOCKS="$TMP/r1.sock,$TMP/r2.sock,$TMP/r3.sock"
	LOGS="$TMP/r1.log $TMP/r2.log $TMP/r3.log"
	wait_leader 60 r1 r2 r3 || { echo "no leader:"; tail -n 3 "$TMP/r1.log" "$TMP/r1.stderr"; exit 1; }
	LEAD="$TMP/$LEADER.sock"
fi
$OFC --socket "$LEAD" reconfigure --topology "$TOPO" --timeout 300 >"$TMP/first" 2>&1 ||
	{ echo "the fabric's first reconfigure failed: $(cat "$TMP/first")"; exit 1; }
printf '#!/bin/sh\nexit 0\n' >"$TMP/scontrol"
chmod 755 "$TMP/scontrol"

# the rounds' jobs, one line each: ROUND JOB NODELIST TOPOLOGY
python3 - "$HOSTS" "$ROUNDS" "$CONC" "$SEED" >"$TMP/jobs" <<'EOF'
import math, random, sys
hosts, rounds, conc, seed = map(int, sys.argv[1:])
sizes = [[8, 16, 32, 64][i * 4 // conc] for i in range(conc)]
while sum(sizes) > hosts:
    sizes = [max(4, s // 2) for s in sizes]
def spec(n):
    a = 2 ** (int(math.log2(n)) // 2)
    return 'ring:%d' % n if n < 8 else 'torus:%dx%d' % (a, n // a)
rng = random.Random(seed)
for r in range(1, rounds + 1):
    order = sizes[:]
    rng.shuffle(order)
    first = rng.randrange(hosts - sum(order) + 1)
    for k, n in enumerate(order):
        print(r, r * 1000 + k, 'h[%d-%d]' % (first, first + n - 1), spec(n))
        first += n
EOF
now_ms() { _ms=$((${EPOCHREALTIME//[!0-9]/} / 1000)); } # into _ms
prolog() { # JOB NODELIST TOPOLOGY: wall ms to t.JOB, exit status to rc.JOB
	now_ms
	_t0=$_ms
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_NODELIST="$2" \
		SLURM_JOB_COMMENT="ofc:topology=$3${NORELABEL:+ ofc:relabel=no}" \
		OFC_SLURM_SCONTROL="$TMP/scontrol" OFC_SOCKET="$SOCKS" $OFC slurm prolog --timeout 600 \
		>"$TMP/out.$1" 2>&1
	echo $? >"$TMP/rc.$1"
	now_ms
	echo $((_ms - _t0)) >"$TMP/t.$1"
}
epilog() { env -i PATH="$PATH" SLURM_JOB_ID="$1" OFC_SOCKET="$SOCKS" $OFC slurm epilog --timeout 600 >/dev/null 2>&1; }

echo "$HOSTS hosts ($TOPO) on 4 ocs-emus of $HOSTS ports, $REPLICAS ofcd; $ROUNDS rounds of $CONC prologs together${NORELABEL:+ (ofc:relabel=no)}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${DURING:-}" ]; then
	LEAD=$LEAD OFCD_PID=${DAEMON:-} sh -c "$DURING" &
	during=$!
fi
: >"$TMP/lat"
: >"$TMP/walls"
bad=0
r=1
while [ $r -le "$ROUNDS" ]; do
	now_ms
	t0=$_ms
	pids=""
	while read -r rr job nodes topo; do
		[ "$rr" = $r ] || continue
		prolog "$job" "$nodes" "$topo" &
		pids="$pids $!"
	done <"$TMP/jobs"
	wait $pids
	now_ms
	t1=$_ms
	pids=""
	n=0
	while read -r rr job nodes topo; do
		[ "$rr" = $r ] || continue
		n=$((n + 1))
		read -r rc <"$TMP/rc.$job"
		if [ "$rc" = 0 ]; then read -r t <"$TMP/t.$job" && echo "$t" >>"$TMP/lat"; else
			bad=$((bad + 1))
			echo "job $job failed: $(tail -1 "$TMP/out.$job")"
		fi
		epilog "$job" &
		pids="$pids $!"
	done <"$TMP/jobs"
	wait $pids
	now_ms
	t2=$_ms
	echo "$n $((t1 - t0)) $((t2 - t0))" >>"$TMP/walls"
	echo "round $r: $n prologs in $((t1 - t0)) ms, their epilogs $((t2 - t1)) ms; load $(cut -d' ' -f1-3 /proc/loadavg)"
	r=$((r + 1))
done
if [ -n "${DURING:-}" ]; then
	kill -TERM $during 2>/dev/null
	wait $during
fi
python3 - "$TMP/lat" "$TMP/walls" "$bad" <<'EOF'
import sys
t = sorted(int(l) for l in open(sys.argv[1]) if l.strip())
w = [list(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
jobs = sum(x[0] for x in w)
p = lambda q: t[min(len(t) - 1, int(q * len(t)))]
if t:
    print("%d prologs, %s failed: p50 %d ms, p99 %d ms, max %d ms" % (len(t), sys.argv[3], p(0.5), p(0.99), t[-1]))
    print("jobs a minute: %.0f (prologs and epilogs), %.0f (prologs alone)"
          % (jobs * 60000.0 / sum(x[2] for x in w), jobs * 60000.0 / sum(x[1] for x in w)))
EOF
breakdown $LOGS
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp $LOGS "$KEEP/" && cp "$TMP"/*.stderr "$KEEP/" 2>/dev/null
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
