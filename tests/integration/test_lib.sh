#!/bin/sh
# lib.sh's polls: `deadline S NAME` sets a variable of the poll's own, so a
# function that polls inside another poll leaves the outer deadline where
# it was; `deadline S` alone still sets _end, as every suite's polls read
# it; `past` says whether now is past a deadline; a name that is not a
# variable's is refused. cluster_poll.py (until_state, wait_leader) on a
# stand-in for `ofc status --json`: its exit 1 with a whole state that says
# a device is lost is an answer, any other exit 1, a JSON cut short or
# another exit none. run.sh's order (--plan): every suite once, the
# netns testbed's suites by themselves but for the lanes of light ones.
SUITE=lib
. "$(dirname "$0")/lib.sh"

now() {
	read -r _n _ </proc/uptime
	echo "${_n%.*}"
}
# inner: a poll of its own (1 s), as cluster_env.sh's replica_start polls
inner() {
	deadline 1 _inner_end
	until past $_inner_end; do sleep 0.05; done
}

deadline 100
outer=$_end
t0=$(now)
turns=0
until [ $turns -eq 2 ] || past $_end; do
	inner
	turns=$((turns + 1))
done
[ "$_end" = "$outer" ] && ok || bad "the inner poll moved the outer deadline" "outer $outer, now $_end"
[ $turns -eq 2 ] && ok || bad "the outer poll ended after $turns inner polls, want 2"
# each inner poll waited for its own deadline: past it, so 2 s at least
[ $(($(now) - t0)) -ge 2 ] && ok || bad "the inner polls ended before their deadlines" "$t0 -> $(now)"

deadline 3 mine
[ "$mine" -eq $(($(now) + 3)) ] || [ "$mine" -eq $(($(now) + 2)) ] && ok ||
	bad "deadline 3 mine: $mine, now $(now)"
past "$mine" && bad "past a deadline 3 s away" || ok
deadline -2 gone
past "$gone" && ok || bad "not past a deadline 2 s ago" "$gone, now $(now)"

expect_error 2 "deadline: 'a b' is not a variable's name" deadline 1 "a b"
expect_error 2 "deadline: '1x' is not a variable's name" deadline 1 1x

# ---- cluster_poll.py's answers ---------------------------------------------
# the stand-in prints $TMP/st.json and exits $FAKE_RC, as `ofc --socket S
# status --json` prints the state and exits 1 while a device is lost
printf '#!/bin/sh\ncat "%s/st.json"\nexit "${FAKE_RC:-0}"\n' "$TMP" >"$TMP/ofc-standin"
chmod 755 "$TMP/ofc-standin"
POLL="python3 $(dirname "$0")/cluster_poll.py"
LOST='{"cluster": {"role": "leader", "took_over_unix_ms": "5"}, "failed": ["h0:0"],
 "devices": [{"name": "ocs0", "reachable": false}, {"name": "ocs1", "reachable": true}]}'
WHOLE='{"cluster": {"role": "leader", "took_over_unix_ms": "5"}, "failed": ["h0:0"],
 "devices": [{"name": "ocs0", "reachable": true}]}'
printf '%s\n' "$LOST" >"$TMP/st.json"
FAKE_RC=1 expect_exit 0 $POLL state 5 "$TMP/ofc-standin" "$TMP" r1 'j["failed"] == ["h0:0"]'
FAKE_RC=1 expect_stdout_has r2 $POLL leader 5 "$TMP/ofc-standin" "$TMP" r2
FAKE_RC=0 expect_exit 0 $POLL state 5 "$TMP/ofc-standin" "$TMP" r1 'j["failed"] == ["h0:0"]'
# exit 1 with no device lost is a failure, not an answer (a second's poll)
printf '%s\n' "$WHOLE" >"$TMP/st.json"
FAKE_RC=1 expect_exit 1 $POLL state 0 "$TMP/ofc-standin" "$TMP" r1 'j["failed"] == ["h0:0"]'
FAKE_RC=1 expect_exit 1 $POLL leader 0 "$TMP/ofc-standin" "$TMP" r2
# a lost device's state cut short, or another exit than 0 and 1: none
printf '%s' "$LOST" | head -c 60 >"$TMP/st.json"
FAKE_RC=1 expect_exit 1 $POLL state 0 "$TMP/ofc-standin" "$TMP" r1 'True'
printf '%s\n' "$LOST" >"$TMP/st.json"
FAKE_RC=2 expect_exit 1 $POLL state 0 "$TMP/ofc-standin" "$TMP" r1 'True'

# run.sh's order (--plan): every suite once; the netns testbed's suites
# that say "run alone" first, beside the lanes of light suites only; with
# no alone suite named, no lanes: their suites join the pool.
tests/integration/run.sh --plan >"$TMP/plan"
ls tests/integration/test_*.sh >"$TMP/all"
cut -d' ' -f2 "$TMP/plan" | sort >"$TMP/planned"
cmp -s "$TMP/all" "$TMP/planned" && ok || bad "run.sh --plan: not every suite once" "$(diff "$TMP/all" "$TMP/planned")"
for t in tests/integration/test_*.sh; do
	if head -20 "$t" | grep -q "run alone"; then
		grep -qx "alone $t" "$TMP/plan" || bad "$t says run alone: not planned alone"
	fi
done
grep -q "^alone " "$TMP/plan" && grep -q "^lane " "$TMP/plan" && ok || bad "run.sh --plan: no alone or no lane" "$(head -c 600 "$TMP/plan")"
[ "$(tests/integration/run.sh --plan tests/integration/test_lib.sh tests/integration/test_slurm.sh)" = "pool tests/integration/test_lib.sh
pool tests/integration/test_slurm.sh" ] && ok || bad "run.sh --plan without an alone suite: the lane's suites in the pool"
finish
