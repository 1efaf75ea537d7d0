#!/bin/sh
# lib.sh's polls: `deadline S NAME` sets a variable of the poll's own, so a
# function that polls inside another poll leaves the outer deadline where
# it was; `deadline S` alone still sets _end, as every suite's polls read
# it; `past` says whether now is past a deadline; a name that is not a
# variable's is refused.
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

finish
