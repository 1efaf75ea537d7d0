#!/bin/sh
# An operator's day on scripts/lab with the page open on every gateway
# (tests/ui/ui_day.mjs, in Debian's chromium by Playwright): a failure, a
# refusal and two leader kills shown on every page still served; `ofc
# watch` given every socket streams across both kills, numbered with none
# twice; `cluster status` from one address names the killed replica (exit
# 1); `lab up` after `down` keeps the last run's logs. Skipped without
# chromium, node, npm or etcd. Screenshots go to $BUILD/ui-shots/.
SUITE=ui-day
. "$(dirname "$0")/lib.sh"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null || ! command -v npm >/dev/null ||
	! command -v etcd >/dev/null; then
	echo "ui-day: skipped: needs chromium, node, npm and etcd (scripts/install-deps.sh test)"
	exit 0
fi
if [ ! -d tests/ui/node_modules/playwright-core ] &&
	! npm ci --prefix tests/ui --prefer-offline --no-audit --no-fund >"$TMP/npm.log" 2>&1; then
	echo "ui-day: skipped: npm ci in tests/ui failed: $(tail -1 "$TMP/npm.log")"
	exit 0
fi
export BUILD
L="$TMP/lab"
cleanup() {
	[ -s "$L/pids" ] && scripts/lab down "$L" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

scripts/lab up "$L" >"$TMP/up.out" 2>&1 && ok || bad "lab up" "$(tail -5 "$TMP/up.out")"
S="$L/r1.sock,$L/r2.sock,$L/r3.sock"
$OFC --socket "$S" reconfigure --topology torus:8x8 >/dev/null 2>&1 && ok || bad "a first commit"
# (the leader's socket first, so the first kill takes the watch's replica)
LD=$($OFC --socket "$S" status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["leader"]["name"])')
WS="$L/$LD.sock"
for r in r1 r2 r3; do [ "$r" = "$LD" ] || WS="$WS,$L/$r.sock"; done
$OFC --socket "$WS" watch --json >"$TMP/watch.out" 2>"$TMP/watch.err" &
W=$!
sleep 0.3

UI_LAB=$L UI_OFC=$OFC UI_LABCMD=scripts/lab UI_SHOTS="$BUILD/ui-shots" CHROMIUM=$CHROMIUM \
	timeout 300 node tests/ui/ui_day.mjs >"$TMP/driver.out" 2>&1
grep '^FAIL\|^      \|^ui-driver: [^0-9]' "$TMP/driver.out"
dp=$(sed -n 's/^ui-driver: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$TMP/driver.out")
df=$(sed -n 's/^ui-driver: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$TMP/driver.out")
if [ -n "$dp" ]; then
	pass=$((pass + dp))
	fail=$((fail + df))
else
	bad "the browser's driver ran" "$(tail -5 "$TMP/driver.out")"
fi

# the watch given every socket went on across both kills
kill -0 $W 2>/dev/null && ok || bad "the watch ended" "$(cat "$TMP/watch.err")"
kill $W 2>/dev/null
wait $W 2>/dev/null
python3 - "$TMP/watch.out" <<'PY' && ok || bad "the watch across two kills" "$(cat "$TMP/watch.err"; tail -c 1500 "$TMP/watch.out")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
seqs = [e["seq"] for e in evs if "seq" in e]
assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
kinds = [e["kind"] for e in evs]
assert kinds.count("KIND_FAILURE_RESTORED") >= 2 and "KIND_REQUEST_REFUSED" in kinds, kinds
PY
grep -q "^ofc watch: lost .*; watching .* from event [0-9]*$" "$TMP/watch.err" && ! grep -q missed "$TMP/watch.err" &&
	ok || bad "the watch's words across the kills" "$(cat "$TMP/watch.err")"

# the last killed replica, from one survivor's address
dead=""
while read -r name pid st; do
	case $name in ofcd-*) ;; *) continue ;; esac
	[ "$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '$1 != "Z" {print $20}')" = "$st" ] || dead=${name#ofcd-}
done <"$L/pids"
for r in r1 r2 r3; do [ "$r" != "$dead" ] && live=$r; done
deadline 15
until { ! $OFC --socket "$L/$live.sock" cluster status >"$TMP/cs.out" 2>&1; } && grep -q "replica $dead is missing" "$TMP/cs.out" ||
	past $_end; do sleep 0.2; done
[ -n "$dead" ] && grep -q "replica $dead is missing" "$TMP/cs.out" && ok ||
	bad "cluster status from $live names the killed $dead" "$(cat "$TMP/cs.out")"

# down, then up again: the last run's logs kept
scripts/lab down "$L" >/dev/null 2>&1 && ok || bad "lab down"
cp "$L/$live.log" "$TMP/live.log"
scripts/lab up "$L" >"$TMP/up2.out" 2>&1 && grep -q "is kept in $L/run-1$" "$TMP/up2.out" &&
	cmp -s "$TMP/live.log" "$L/run-1/$live.log" && ok || bad "lab up after down keeps the last run" "$(head -3 "$TMP/up2.out")"
scripts/lab down "$L" >/dev/null 2>&1 && ok || bad "lab down, the second"
finish
