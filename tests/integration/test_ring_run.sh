#!/bin/sh
# ofc ring run: a verified ring schedule driven step by step through the
# MRR driver into build/mrr-emu. The emulator's log must show exactly the
# planned MRR settings, step after step, and never light that collides or
# circles; a refused retune at any point stops the run and leaves the ring
# at its static configuration.
SUITE=ring-run
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
CFG=configs/ring16-optree.yaml
EMU="--nodes 16 --wavelengths 2 --interfaces 4 --mrrs 64 --ring ring0 --delay-us 25 --refuse-conflicts"

# The emulator's "state" lines after each tune, without the request number.
states() { sed -n 's/^[0-9]* state *//p' "$1"; }

# allgather and allreduce, with and without overlap: planned settings
# applied in order, no conflict, static at the end (ring16 has none).
for coll in allgather allreduce reduce-scatter; do
	for ov in "" --overlap; do
		rm -f "$TMP/e.log"
		start_emu mrr-emu e $EMU --log "$TMP/e.log"
		$OFC ring run $CFG --collective $coll $ov --device "ring0=127.0.0.1:$e_port" \
			--state-dir "$ST" --json --show-configs >"$TMP/run.json" 2>"$TMP/err"
		rc=$?
		stop_emu "$e_pid"
		states "$TMP/e.log" >"$TMP/states"
		if [ $rc -eq 0 ] && ! grep -q CONFLICT "$TMP/e.log" &&
			python3 - "$TMP/run.json" "$TMP/states" "$ov" <<'PY'; then ok; else bad "ring run $coll $ov" "$(head -c 300 "$TMP/err")"; fi
import json, sys
j = json.load(open(sys.argv[1]))
seen = [" ".join(sorted(l.split())) for l in open(sys.argv[2]).read().splitlines()]
plan = [" ".join(sorted(c["channels"])) for c in j["configs"]]
assert j["ok"] and j["restored"] and j["steps"] == len(plan), j
assert seen[-1] == "", "not static at the end"
if not sys.argv[3]:
    # Each retune lands exactly on the next planned configuration.
    want = [p for i, p in enumerate(plan) if i == 0 or p != plan[i - 1]]
    assert seen[:-1] == want, (len(seen), len(want))
else:
    # With overlap a step's configuration holds, plus what is pre-tuned
    # for the next one; every planned configuration is reached in order.
    k = 0
    for p in plan:
        ps = set(p.split())
        while k < len(seen) and not ps <= set(seen[k].split()):
            k += 1
        assert k < len(seen), "a planned configuration never held"
assert sum(s["steps"] for s in j["stages"]) == j["steps"]
assert j["realised_us"] > 0 and j["predicted_us"] > 0
PY
	done
done
expect_stdout_has "ring ring0 is back at its static configuration" sh -c \
	"$BUILD/mrr-emu --listen 127.0.0.1:0 --port-file $TMP/p2 $EMU & p=\$!; while [ ! -s $TMP/p2 ]; do sleep 0.01; done; \
	 $OFC ring run $CFG --collective allgather --device ring0=127.0.0.1:\$(cat $TMP/p2) --state-dir $ST; rc=\$?; kill \$p; exit \$rc"

# The number of requests of a good run: hello, get-state, the retunes,
# then get-state, the retune back and the read-back.
rm -f "$TMP/e.log"
start_emu mrr-emu e $EMU --log "$TMP/e.log"
$OFC ring run $CFG --collective allgather --device "ring0=127.0.0.1:$e_port" --state-dir "$ST" >/dev/null 2>&1
stop_emu "$e_pid"
tunes=$(grep -c '^[0-9]* tune' "$TMP/e.log")
last=$(($(grep '^[0-9]* tune' "$TMP/e.log" | tail -1 | cut -d' ' -f1) - 2)) # before the restore
[ "$tunes" -ge 5 ] && ok || bad "expected retunes in the log, got $tunes"

# A refusal at every retune in turn: the run stops, says where, and the
# ring ends static.
n_ok=0
n=0
for k in $(seq 3 "$last"); do
	n=$((n + 1))
	rm -f "$TMP/f.log"
	start_emu mrr-emu f $EMU --log "$TMP/f.log" --fail-at "$k"
	$OFC ring run $CFG --collective allgather --device "ring0=127.0.0.1:$f_port" \
		--state-dir "$ST" --json >"$TMP/out" 2>"$TMP/err"
	rc=$?
	stop_emu "$f_pid"
	end=$(states "$TMP/f.log" | tail -1)
	if [ $rc -eq 1 ] && [ -z "$end" ] && ! grep -q CONFLICT "$TMP/f.log" &&
		grep -q "stage [0-9]*, step [0-9]*: .*injected fault; the run stopped and the ring is back at its static configuration" "$TMP/err" &&
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert not j["ok"] and j["restored"]' "$TMP/out"; then
		n_ok=$((n_ok + 1))
	else
		bad "ring run fail-at $k: exit $rc" "$(head -c 300 "$TMP/err")"
	fi
done
[ $n_ok -eq $n ] && [ $n -ge 5 ] && ok

# A ring with static lightpaths (ring8) comes back to them, also after a
# fault; the agent dropping the connection is survived (retried).
CFG8=tests/configs/ring8-mrr.yaml
EMU8="--nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4 --refuse-conflicts"
start_emu mrr-emu s $EMU8
$OFC apply $CFG8 --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" >/dev/null 2>&1
BEFORE=$($OFC status $CFG8 --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["channels"])')
expect_json 'j["ok"] and j["restored"] and j["collective"]=="allreduce"' \
	$OFC ring run $CFG8 --collective allreduce --algo ring --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" --json
NOW=$($OFC status $CFG8 --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["channels"])')
[ "$NOW" = "$BEFORE" ] && ok || bad "ring8 not back at its lightpaths" "$NOW"
stop_emu "$s_pid"
# The apply takes requests 1-11 (hello, get-state, 8 tunes, read-back);
# the run's hello is 12, its get-state 13, its first retune 14. A dropped
# connection there is retried (retries: 1, tuning is idempotent); dropped
# twice the agent is lost: the run stops and the ring is back at its
# lightpaths.
start_emu mrr-emu s $EMU8 --fail-at 15 --fail-mode close
$OFC apply $CFG8 --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" >/dev/null 2>&1
expect_json 'j["ok"] and j["restored"]' \
	$OFC ring run $CFG8 --collective allgather --algo ne --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" --json
stop_emu "$s_pid"
start_emu mrr-emu s $EMU8 --fail-at 15 --fail-count 2 --fail-mode close
$OFC apply $CFG8 --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" >/dev/null 2>&1
$OFC ring run $CFG8 --collective allgather --algo ne --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" >/dev/null 2>"$TMP/err"
rc=$?
NOW=$($OFC status $CFG8 --device "ring0=127.0.0.1:$s_port" --state-dir "$ST" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["channels"])')
[ $rc -eq 1 ] && [ "$NOW" = "$BEFORE" ] && grep -q "stage 2, step 2: ring0: connection closed by the peer; the run stopped and the ring is back at its static configuration" "$TMP/err" &&
	ok || bad "lost agent: exit $rc" "$(head -c 300 "$TMP/err")"
stop_emu "$s_pid"

# The emulator watches the light: two lightpaths on one wavelength whose
# light would collide (n1 adds wavelength 0 where n0's passes) are logged as
# a CONFLICT, and refused with --refuse-conflicts (the apply rolls back).
sed -e 's|{from: n4, to: n7, wavelength: 0}|{from: n1, to: n5, wavelength: 0}|' \
	-e '/{from: n1, to: n5, wavelength: 1, interface: 1}/d' $CFG8 >"$TMP/clash.yaml"
rm -f "$TMP/c.log"
start_emu mrr-emu c --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4 --log "$TMP/c.log"
expect_exit 0 $OFC apply "$TMP/clash.yaml" --device "ring0=127.0.0.1:$c_port" --state-dir "$TMP/st2"
grep -q "CONFLICT the light node 0 adds on interface 0 wavelength 0 collides with node 1's" "$TMP/c.log" &&
	ok || bad "no CONFLICT logged" "$(grep -v state "$TMP/c.log" | tail -3)"
stop_emu "$c_pid"
start_emu mrr-emu c --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4 --refuse-conflicts
$OFC apply "$TMP/clash.yaml" --device "ring0=127.0.0.1:$c_port" --state-dir "$TMP/st3" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "lightpaths would collide" "$TMP/err" && grep -q "rolled back" "$TMP/err" &&
	ok || bad "colliding light not refused: exit $rc" "$(head -c 300 "$TMP/err")"
stop_emu "$c_pid"

# ---- a config's algorithm is its own collective's -------------------
# ring16-optree names optree for its allgather: an all-to-all, scheduled or
# run, gets its own default (one stage of direct lightpaths), where it was
# refused as optree; an algorithm named for allgather runs for allgather
# alone; one a ring does not know is refused at its place in the config.
expect_json 'j["algorithm"]=="onestage" and j["collective"]=="alltoall" and j["verified"]' \
	$OFC schedule $CFG --collective alltoall --json
expect_json 'j["algorithm"]=="optree"' $OFC schedule $CFG --collective allgather --json
start_emu mrr-emu e $EMU --log "$TMP/a.log"
expect_json 'j["ok"] and j["restored"] and j["algorithm"]=="onestage" and j["collective"]=="alltoall"' \
	$OFC ring run $CFG --collective alltoall --device "ring0=127.0.0.1:$e_port" --state-dir "$ST" --json
grep -q CONFLICT "$TMP/a.log" && bad "the all-to-all's light collided" || ok
stop_emu "$e_pid"
sed 's/algorithm: optree/algorithm: ne/' $CFG >"$TMP/ne.yaml"
expect_json 'j["algorithm"]=="ne"' $OFC schedule "$TMP/ne.yaml" --collective allgather --json
expect_json 'j["algorithm"]=="optree"' $OFC schedule "$TMP/ne.yaml" --collective allreduce --json
expect_json 'j["algorithm"]=="ring"' $OFC schedule "$TMP/ne.yaml" --collective allgather --algo ring --json
sed 's/algorithm: optree/algorithm: bfb/' $CFG >"$TMP/bfb.yaml"
expect_error 2 "$TMP/bfb.yaml:27:5: algorithm 'bfb' for allgather is not one for a WDM ring (ring, ne, onestage, wrht, optree, all)" \
	$OFC schedule "$TMP/bfb.yaml" --collective allgather

# Bad requests.
expect_error 2 "ofc ring: missing --collective" $OFC ring run $CFG
expect_error 2 "ofc ring: expected 'run'" $OFC ring walk $CFG
expect_error 2 "ofc ring: a run takes one --algo" $OFC ring run $CFG --collective allgather --algo all
expect_exit 0 $OFC ring --help

finish
