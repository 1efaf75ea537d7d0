#!/bin/sh
# Run every integration suite (tests/integration/test_*.sh), or the ones
# named (run.sh tests/integration/test_X.sh ...): the binaries, the daemon,
# the emulators and the testbed driven as users drive them; fail if any
# fails. Each suite's wall time goes to stderr, so the budget of make test
# (about 10 minutes on 2 cores) can be watched suite by suite.
#
# Most suites spend their time waiting on daemons, etcd and emulators (in
# a fresh clone's make test on 2 cores they used 660 s of CPU in 1,480 s
# of wall: under half a core each), so ITEST_JOBS of them run side by side
# (three times the machine's cores by default: at four on 2 cores the pool
# used 1.2 cores over its 500 s in a fresh clone's make test, its suites'
# wall, not their CPU, the length; at six make test took 547 s, not 629),
# each in its own temporary directory
# on ports it picks itself; a suite's output is held until it ends and
# printed whole.
# The longest start first, so that none is left to run on its own at the
# end. A suite that says "run alone" in its first lines (the netns
# testbed: it measures rates the cores must carry) runs by itself, first,
# one after another, beside the unit tests and ITEST_LANES lanes (the
# machine's cores by default) of the suites that mostly wait on daemons,
# etcd and emulators (light, below); the lanes go on beside the pool once
# the alone suites are done. In a fresh clone's make test the alone suites
# used 47 s of CPU in 113 s of wall and the unit tests one core for their
# first 30 s only: with one lane of five light suites beside them, more
# than a core stood idle for most of those two minutes while the pool
# waited. Two lanes of suites that use a sixth of a core or less each add
# a third of a core beside the alone suites, not crowding the shaped
# circuits, and take 443 s of waiting out of the pool.
# run.sh --plan [SUITE...]: the order only, a line a suite ("alone",
# "lane" or "pool", then the suite), nothing run.
self=$(cd "$(dirname "$0")" && pwd)/run.sh
cd "$(dirname "$0")/../.." || exit 1
plan=
[ "$1" = --plan ] && plan=1 && shift

# run.sh --one OUT SUITE: one suite, its output and time printed together
if [ "$1" = --one ]; then
	name=$(basename "$3" .sh)
	start=$(date +%s)
	sh "$3" >"$2/$name.log" 2>&1
	rc=$?
	# The CPU the suite and the processes it waited for used (user +
	# system, the second line of times), beside its wall time: the budget
	# is two cores' worth. times in this shell: a subshell has no children.
	times >"$2/$name.times"
	cpu=$(awk 'NR == 2 { n = split($1 " " $2, t, "[ ms]+"); c = 0; for (i = 1; i + 1 <= n; i += 2) c += t[i] * 60 + t[i + 1]; printf "%.0f", c }' "$2/$name.times")
	echo "time: $name $(($(date +%s) - start)) s, cpu $cpu s" >>"$2/$name.log"
	flock "$2/.lock" cat "$2/$name.log" >&2
	[ $rc -eq 0 ] || : >"$2/$name.failed"
	exit 0
fi

# Under the sanitizers (make check) a suite's processes take two to three
# times the CPU, so the pool and the lanes are a third and a half as wide:
# at make test's widths the load reached 10-20 on 2 cores and every whole
# make check failed a suite or two on waits that hold at make test's load.
ncpu=$(nproc 2>/dev/null || echo 1)
if [ -n "${SAN:-}" ]; then
	jobs=${ITEST_JOBS:-$ncpu}
	lanes=${ITEST_LANES:-$(((ncpu + 1) / 2))}
else
	jobs=${ITEST_JOBS:-$((3 * ncpu))}
	lanes=${ITEST_LANES:-$ncpu}
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/ofc-run.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
trap 'exit 1' INT TERM
alone= shared= lane=
[ $# -gt 0 ] || set -- tests/integration/test_*.sh
for t in "$@"; do
	if head -20 "$t" | grep -q "run alone"; then
		alone="$alone $t"
	else
		shared="$shared $t"
	fi
done
# The lanes' suites, longest first: each a fifth of a core or less in a
# fresh clone's make test (CPU over wall in s: 17/91, 7/43, 6/34, 5/33,
# 4/29, 5/27, 4/26, 3/26, 2/22, 4/22, 2/20, 2/16, 3/15, 2/14, 2/13, 2/12,
# 3/10), 443 s of wall in all. With no alone suite they join the rest.
# (test_slurm_failover is light too, but its epilog is held back a fixed
# 6 s for the next job's prolog to meet: it stays in the pool, where it
# has passed.)
light="test_cluster test_failover_client test_cluster_epoch test_cluster_dedup
	test_python test_clients test_ofcd_drain test_cluster_day test_slurm
	test_cluster_drain test_hostd test_cluster_event_bound test_cluster_holds
	test_netconf_interop test_cluster_tls test_state_delta test_lib"
if [ -n "$alone" ]; then
	for l in $light; do
		for t in $shared; do
			[ "$(basename "$t" .sh)" = "$l" ] && lane="$lane $t"
		done
	done
fi
# The suites that take longest, longest first (their wall time in a
# fresh clone's make test on 2 cores, beside fresh-check); the others after
# them in order.
long="test_bounds test_systemd test_cluster test_testbed_ofcd test_gateway
	test_netconf test_msccl test_ofcd test_lab test_docs test_ui_day test_failover_client test_threads
	test_production test_cluster_dedup test_python test_cluster_day
	test_adopt_ofcd test_clients test_netconf_interop test_deps"
first= rest=
for l in $long; do
	for t in $shared; do
		case " $lane " in *" $t "*) continue ;; esac
		[ "$(basename "$t" .sh)" = "$l" ] && first="$first $t"
	done
done
for t in $shared; do
	case " $first $lane " in *" $t "*) ;; *) rest="$rest $t" ;; esac
done
if [ -n "$plan" ]; then
	for t in $alone; do echo "alone $t"; done
	for t in $lane; do echo "lane $t"; done
	for t in $first $rest; do echo "pool $t"; done
	exit 0
fi
[ -z "$lane" ] || printf '%s\n' $lane | xargs -P "$lanes" -I{} sh "$self" --one "$out" {} &
lanepid=$!
for t in $alone; do sh "$self" --one "$out" "$t"; done
printf '%s\n' $first $rest | xargs -P "$jobs" -I{} sh "$self" --one "$out" {}
wait $lanepid
failed=$(cd "$out" && ls -- *.failed 2>/dev/null | sed 's/\.failed$//')
[ -z "$failed" ] && exit 0
echo "integration: failed:" $failed >&2
exit 1
