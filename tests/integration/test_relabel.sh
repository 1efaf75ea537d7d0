#!/bin/sh
# ofc plan/apply --relabel against build/ocs-emu: a topology wanted up to
# the numbering of its nodes keeps the circuits already in place.
SUITE=relabel
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
mkdir -p "$ST"
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
make_torus_config "$TORUS" torus:8x8 2s 2
make_torus_config "$CIRC" circulant:64:7,8 2s 2

# The same fabric with its hosts listed in a shuffled order and cabled to
# the same switch ports by name: the torus over them is a relabelled copy
# of the torus over h0..h63.
SHUF="$TMP/shuffled.yaml"
python3 - "$TORUS" "$SHUF" <<'PY'
import random, sys
text = open(sys.argv[1]).read()
order = list(range(64))
random.Random(7).shuffle(order)
hosts = "hosts:\n" + "".join("  - {name: h%d, ports: 4, port_rate: 100Gbps}\n" % i for i in order)
wiring = "wiring:\n" + "".join("  - {host: h%d, port: %d, switch: ocs0, switch_port: %d}\n"
                               % (i, j, 1 + 4 * i + j) for i in range(64) for j in range(4))
head, rest = text.split("hosts:", 1)
rest = rest.split("switches:", 1)[1]
switches, after = rest.split("wiring:", 1)
after = after.split("topology:", 1)[1]
open(sys.argv[2], "w").write(head + hosts + "\nswitches:" + switches + wiring + "\ntopology:" + after)
PY

start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --log "$TMP/e.log"
DEV="ocs0=127.0.0.1:$e_port"
expect_exit 0 $OFC apply "$TORUS" --device "$DEV" --state-dir "$ST"

# The shuffled numbering moves nearly every circuit; relabelled, none.
expect_json 'j["operations"] > 400' $OFC plan "$SHUF" --device "$DEV" --state-dir "$ST" --json
expect_json 'j["operations"] == 0 and j["device_plan"]["relabel"]["complete"] and j["device_plan"]["relabel"]["kept"] == 256 and j["device_plan"]["relabel"]["kept_identity"] < 64' \
	$OFC plan "$SHUF" --relabel --device "$DEV" --state-dir "$ST" --json
expect_stdout_has "committed transaction 2: 0 operations" \
	$OFC apply "$SHUF" --relabel --device "$DEV" --state-dir "$ST"
if grep -q "DLT-PATCH\|ENT-PATCH" "$TMP/e.log" && [ "$(grep -c ENT-PATCH "$TMP/e.log")" -ne 256 ]; then
	bad "the relabelled apply changed cross-connects"
else ok; fi

# Torus -> circulant: relabelling moves fewer circuits than the config's
# numbering, and the plan says so.
IDENT=$($OFC plan "$CIRC" --device "$DEV" --state-dir "$ST" --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"])')
expect_json "j['operations'] < $IDENT and j['device_plan']['relabel']['kept'] > j['device_plan']['relabel']['kept_identity'] and j['operations'] == 2 * j['device_plan']['devices'][0]['add']" \
	$OFC plan "$CIRC" --relabel --relabel-budget 1 --device "$DEV" --state-dir "$ST" --json
expect_stdout_has "" $OFC plan "$CIRC" --relabel --relabel-budget 0.5 --device "$DEV" --state-dir "$ST"
if grep -q "^relabelled: [0-9]* operations instead of $IDENT;" "$TMP/err"; then ok; else
	bad "plan --relabel should say what it saved" "$(cat "$TMP/err")"; fi
# --max-moves: a plan of more operations is refused and nothing moves; the
# relabelled plan fits a limit the config's numbering does not.
ENTS=$(grep -c ENT-PATCH "$TMP/e.log")
expect_exit 1 $OFC apply "$CIRC" --max-moves 8 --device "$DEV" --state-dir "$ST"
grep -q "^ofc: reaching circulant:64:.* takes $IDENT operations (switching time about .*), more than --max-moves 8; nothing was changed (--relabel may keep more circuits in place)" "$TMP/err" &&
	[ "$(grep -c ENT-PATCH "$TMP/e.log")" -eq "$ENTS" ] && ok || bad "--max-moves refusal" "$(cat "$TMP/err")"
expect_exit 1 $OFC plan "$CIRC" --max-moves 8 --json --device "$DEV" --state-dir "$ST"
expect_error 2 "ofc apply: bad --max-moves 'x': expected a count" $OFC apply "$CIRC" --max-moves x --device "$DEV" --state-dir "$ST"
expect_exit 0 $OFC apply "$CIRC" --relabel --relabel-budget 0.5 --max-moves $((IDENT - 1)) --device "$DEV" --state-dir "$ST"
expect_json 'j["operations"] == 0' $OFC plan "$CIRC" --relabel --device "$DEV" --state-dir "$ST" --json
# The record remembers the renumbering: a plain plan keeps it (and says so)
# instead of planning back to the config's numbering; --no-relabel does not.
expect_json 'j["operations"] == 0' $OFC plan "$CIRC" --device "$DEV" --state-dir "$ST" --json
grep -q "^ofc plan: the last commit (generation [0-9]*) renumbered circulant:64:7,8 to keep circuits; keeping that numbering (--no-relabel for the config's)" "$TMP/err" &&
	ok || bad "plan after a relabelled commit" "$(cat "$TMP/err")"
expect_json 'j["operations"] > 0' $OFC plan "$CIRC" --no-relabel --device "$DEV" --state-dir "$ST" --json

# Bad budgets are usage errors.
expect_exit 2 $OFC plan "$CIRC" --relabel-budget 0 --device "$DEV" --state-dir "$ST"
expect_exit 2 $OFC plan "$CIRC" --relabel-budget 2h --device "$DEV" --state-dir "$ST"
stop_emu "$e_pid"
finish
