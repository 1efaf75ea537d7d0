# Helpers for the CLI integration tests. Source this; call `finish` last.
# Each check prints one line; failures print what was expected and what came.

BUILD=${BUILD:-build}
OFC=${OFC:-$BUILD/ofc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-it.XXXXXX")
# rm_tmp: the suite's directory removed at exit, unless ITEST_KEEP is set
# (the replicas', daemons' and emulators' logs kept for a failure's reading)
rm_tmp() { [ -n "${ITEST_KEEP:-}" ] && echo "kept $TMP" >&2 || rm -rf "$TMP"; }
trap rm_tmp EXIT
# python3 looked up once, and Debian's by default: the suites call python3
# over a thousand times in all. /usr/bin/python3 is the one
# scripts/install-deps.sh gives the client's protobuf runtime and ncclient;
# a python3 earlier on PATH may take twice its CPU to start (pyenv's here
# imports certifi from a .pth file, 0.07 s a start: a fifth of the suites'
# CPU), and behind a version manager's shim (pyenv) every call finds the
# interpreter anew, most of a second on a loaded machine. ITEST_PYTHON=python3
# runs the one on PATH instead. The wrapper runs the interpreter by its own
# path (so a virtualenv stays one).
_py=${ITEST_PYTHON:-/usr/bin/python3}
[ -x "$_py" ] || _py=python3
if py=$("$_py" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
	mkdir "$TMP/bin" && printf '#!/bin/sh\nexec "%s" "$@"\n' "$py" >"$TMP/bin/python3" &&
		chmod 755 "$TMP/bin/python3" && PATH="$TMP/bin:$PATH"
fi
pass=0
fail=0

# deadline S [NAME]: sets NAME (default _end) to S seconds from now; past T:
# whether now is past T. A poll passes its deadline's value to past on every
# turn (`until ... || past $_end`), so a function that polls, and may run
# inside another poll (cluster_env.sh's, emu.sh's and slurm_env.sh's do),
# names a variable of its own: setting the caller's _end would move the
# caller's deadline (to the inner one's, seconds away, or long past).
# Now is the kernel's uptime, read without starting a process: a wait's
# loop turns every few milliseconds, and a date each turn (a fork of the
# shell and an exec) was a seventh of test_netconf's CPU.
deadline() {
	read -r _up _ </proc/uptime
	case ${2:-_end} in
	[!A-Za-z_]* | *[!A-Za-z0-9_]*) echo "deadline: '$2' is not a variable's name" >&2 && return 2 ;;
	esac
	eval "${2:-_end}=\$((\${_up%.*} + \$1))"
}
past() {
	read -r _up _ </proc/uptime
	[ "${_up%.*}" -gt "$1" ]
}

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	printf 'FAIL: %s\n' "$1"
	shift
	for l in "$@"; do printf '      %s\n' "$l"; done
}

# expect_exit CODE CMD...: the command exits with CODE.
expect_exit() {
	want=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else
		bad "$* exited $got, want $want" "stderr: $(head -c 400 "$TMP/err")"
	fi
}

# expect_error CODE 'LINE' CMD...: exits with CODE and the first stderr line is LINE.
expect_error() {
	want=$1
	line=$2
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	first=$(head -n 1 "$TMP/err")
	if [ "$got" -eq "$want" ] && [ "$first" = "$line" ]; then ok; else
		bad "$*" "want exit $want: $line" "got  exit $got: $first"
	fi
}

# expect_stdout_has 'TEXT' CMD...: exits 0 and stdout contains TEXT.
expect_stdout_has() {
	text=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq 0 ] && grep -qF -- "$text" "$TMP/out"; then ok; else
		bad "$* should print '$text'" "exit $got; stdout: $(head -c 3000 "$TMP/out")" \
			"stderr: $(head -c 300 "$TMP/err")"
	fi
}

# expect_json 'PYTHON-EXPR' CMD...: exits 0, the expression over the JSON
# on stdout (bound to j) is true, and no schedule in it is priced below its
# own lower bound or given a ratio to another (bound_check.py: every JSON
# answer the suites read here passes through it).
_itdir=$(cd "$(dirname "$0")" && pwd)
expect_json() {
	expr=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq 0 ] && python3 -c "import json,sys; sys.path.insert(0, sys.argv[2]); import bound_check; j=json.load(open(sys.argv[1])); v=bound_check.violations(j); [print('bound_check: ' + m, file=sys.stderr) for m in v]; sys.exit(0 if ($expr) and not v else 1)" "$TMP/out" "$_itdir" 2>"$TMP/why"; then ok; else
		bad "$*: $expr" "exit $got; stdout: $(head -c 3000 "$TMP/out")" "stderr: $(head -c 300 "$TMP/err")" "$(head -c 600 "$TMP/why")"
	fi
}

# on_pty ANSWER CMD...: CMD with a terminal on stdin, ANSWER typed into it;
# its output (stdout and stderr) on stdout, its exit status returned.
on_pty() {
	python3 - "$@" <<'PY'
import os, subprocess, sys
m, s = os.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=s, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
os.close(s)
os.write(m, sys.argv[1].encode() + b"\n")
out, _ = p.communicate(timeout=60)
sys.stdout.write(out.decode())
sys.exit(p.returncode)
PY
}

# thread_kinds PID: PID's threads by name with their counts, sorted
# ("ofcd x1, ofcd-mutation x1"); at_rest PID WANT SECS: until they are
# WANT, at most SECS seconds (a thread started for work ends after it:
# docs/ARCHITECTURE.md, "ofcd's threads").
thread_kinds() {
	for _t in /proc/"$1"/task/*/comm; do cat "$_t"; done 2>/dev/null | sort | uniq -c |
		awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}'
}
# thread_detail PID: a line a thread, for a failure's message: its id,
# name, state, CPU ticks and where the kernel has it wait (an unnamed
# thread takes its creator's name: this says which one it is)
thread_detail() {
	for _t in /proc/"$1"/task/*; do
		printf '%s %s %s %s\n' "${_t##*/}" "$(cat "$_t/comm" 2>/dev/null)" \
			"$(awk '{sub(/.*\) /, ""); print "state " $1 ", cpu " $12 + $13}' "$_t/stat" 2>/dev/null)" \
			"wchan $(cat "$_t/wchan" 2>/dev/null)"
	done
}
# Under ThreadSanitizer (scripts/check-tsan) its runtime adds a thread of
# its own before main, asleep in nanosleep between its flushes of shadow
# memory, with the program's name: counted as one more of those.
at_rest() {
	_want=$2
	case ${SAN:-} in *sanitize=thread*)
		_want=$(python3 -c 'import sys
m, w = sys.argv[1], sys.argv[2]
print(", ".join("%s x%d" % (m, int(i.split(" x")[1]) + 1) if i.split(" x")[0] == m else i
                for i in w.split(", ")))' "$(cat /proc/"$1"/comm 2>/dev/null)" "$2")
		;;
	esac
	deadline "$3" _rest_end
	until [ "$(thread_kinds "$1")" = "$_want" ] || past $_rest_end; do sleep 0.2; done
	[ "$(thread_kinds "$1")" = "$_want" ]
}

finish() {
	printf '%s: %d passed, %d failed\n' "$SUITE" "$pass" "$fail"
	[ "$fail" -eq 0 ]
}
