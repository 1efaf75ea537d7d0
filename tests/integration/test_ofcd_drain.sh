#!/bin/sh
# Planned work on a switch (docs/ofcd.md, "A switch's maintenance
# window"): torus:8x8 on four ocs-emu switches, port j of every host on
# switch j. `ofc drain ocs1` publishes the schedule without ocs1's host
# ports while ocs1 still holds its circuits (read from the emulator's own
# state file during the grace), then removes them; the ports are drained
# (the state says by whom), kept across a restart of ofcd; `ofc undrain`
# puts the very circuits back and the healthy schedule with them. Bad
# input (no such switch, a port twice, undraining what is not drained, a
# drain that cuts hosts off) is refused with nothing changed.
SUITE=ofcd-drain
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

four_ocs_fabric "$TMP/fab.yaml" drainfab
ST="$TMP/st"
mkdir -p "$ST"
expect_exit 0 $OFC apply "$TMP/fab.yaml" --state-dir "$ST"
SOCK="$TMP/ofcd.sock"
start_ofcd() {
	$BUILD/ofcd --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$ST" \
		--credentials-dir "$TMP" --log-file "$TMP/ofcd.log" --log-level info \
		2>>"$TMP/ofcd.stderr" &
	ofcd_pid=$!
}
start_ofcd
# until_state SECS EXPR: until ofcd's state (j) satisfies EXPR
until_state() {
	deadline "$1"
	until $OFC --socket "$SOCK" status --json --timeout 5 >"$TMP/st.json" 2>/dev/null &&
		python3 -c "import json,sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" \
			"$TMP/st.json" 2>/dev/null || past $_end; do sleep 0.1; done
	python3 -c "import json,sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$TMP/st.json"
}
# sched: "TOPOLOGY STEPS TIME VERIFIED" of the state's schedule
sched() {
	python3 -c 'import json,sys
s = json.load(open(sys.argv[1])).get("schedule") or {}
print(s.get("topology"), s.get("num_steps"), "%.6g" % s.get("time_us", 0), s.get("verified"))' "$TMP/st.json"
}
# xcs N: the cross-connects emulator eN holds, sorted
xcs() { sort "$TMP/e$1.state" 2>/dev/null; }
# refused CODE TEXT CMD...: exits CODE and stderr or stdout says TEXT
refused() {
	want=$1 text=$2
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq "$want" ] && cat "$TMP/out" "$TMP/err" | grep -qF -- "$text"; then ok; else
		bad "$* should exit $want saying '$text'" "exit $got: $(head -c 600 "$TMP/err") $(head -c 300 "$TMP/out")"
	fi
}
until_state 30 'j.get("schedule", {}).get("verified") and all(d.get("reachable") for d in j["devices"])' &&
	ok || bad "no healthy schedule" "$(head -c 600 "$TMP/st.json")"
HEALTHY=$(sched)
for i in 0 1 2 3; do xcs $i >"$TMP/before$i"; done
[ "$(wc -l <"$TMP/before1")" -eq 64 ] && ok || bad "ocs1 holds 64 circuits" "$(wc -l <"$TMP/before1")"
$OFC --socket "$SOCK" watch --json >"$TMP/watch" 2>/dev/null & # ends with the daemon
watch_pid=$!

# ---- bad input: each refused, nothing changed -------------------------------------------
refused 2 "fabric 'drainfab' has no switch 'ocs9'" $OFC --socket "$SOCK" drain ocs9
refused 2 "port ocs1:5 is named twice" $OFC --socket "$SOCK" drain ocs1:5 ocs1:5
refused 2 "port ocs1:5 is named twice" $OFC --socket "$SOCK" drain ocs1 ocs1:5
refused 2 "'ocs1:99': port 99 of ocs1 is not cabled to a host" $OFC --socket "$SOCK" drain ocs1:99
refused 2 "'ocs1' is not drained (nothing is)" $OFC --socket "$SOCK" undrain ocs1
refused 2 "would cut 56 hosts off from the rest of the fabric: " \
	$OFC --socket "$SOCK" drain ocs1 ocs2 ocs3 --grace 0s
refused 2 "missing SWITCH or SWITCH:PORT" $OFC --socket "$SOCK" drain
refused 2 "bad --grace '700': at most 600 s" $OFC --socket "$SOCK" drain ocs1 --grace 700
$OFC --socket "$SOCK" status --json >"$TMP/st.json"
python3 -c 'import json,sys; j = json.load(open(sys.argv[1])); sys.exit(0 if not j.get("drained") and not j.get("failed") else 1)' \
	"$TMP/st.json" && ok || bad "a refused drain changed the state" "$(head -c 600 "$TMP/st.json")"
[ "$(sched)" = "$HEALTHY" ] && ok || bad "a refused drain changed the schedule" "$(sched)"
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" || bad "a refused drain changed ocs$i"; done

# ---- drain ocs1: the schedule first, then the circuits ------------------------------------
$OFC --socket "$SOCK" drain ocs1 --grace 3s >"$TMP/drain.out" 2>&1 &
drain_pid=$!
WANT1=$(python3 -c 'print(sorted("h%d:1" % h for h in range(64)))')
until_state 20 "sorted(j.get('failed', [])) == $WANT1 and j.get('schedule', {}).get('verified')" &&
	ok || bad "the drain's schedule not published" "$(head -c 600 "$TMP/st.json")"
DRAINED=$(sched)
# published while the circuits are still there (the grace is 3 s)
xcs 1 | cmp -s - "$TMP/before1" && ok || bad "ocs1's circuits went before the schedule was published" \
	"$(wc -l <"$TMP/e1.state")"
case $DRAINED in "$HEALTHY") bad "the drain did not change the schedule" "$DRAINED" ;; *" True") ok ;;
*) bad "the drain's schedule" "$DRAINED" ;; esac
wait "$drain_pid" && ok || bad "ofc drain ocs1 failed" "$(cat "$TMP/drain.out")"
grep -q "ocs1 drained (64 switch ports; no running job of libofc-mpi on these ports to say it took the new schedule: 3000 ms of grace; circuits removed: transaction [0-9]*, 64 operations, verified on the devices)" \
	"$TMP/drain.out" && ok || bad "drain's answer" "$(cat "$TMP/drain.out")"
[ ! -s "$TMP/e1.state" ] && ok || bad "ocs1 still holds circuits after the drain" "$(head -3 "$TMP/e1.state")"
for i in 0 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "the drain changed ocs$i"; done
expect_stdout_has "  drained    ocs1 ports " $OFC --socket "$SOCK" status
grep -q "^  drained    ocs1 ports .* (64), since .*, by uid:$(id -u): out of service, no circuits$" \
	"$TMP/out" && ok || bad "status's drained line" "$(grep drained "$TMP/out")"
expect_json 'len(j["drained"]) == 64 and j["at_target"] and all(d["switch_name"] == "ocs1" and d["host_port"].endswith(":1") and d["since_unix_ms"] > 0 for d in j["drained"])' \
	$OFC --socket "$SOCK" status --json
refused 2 "'ocs1:5': ocs1:5 drained already (by uid:$(id -u))" $OFC --socket "$SOCK" drain ocs1:5
refused 2 "'ocs1': every port of it cabled to a host is drained already" $OFC --socket "$SOCK" drain ocs1
[ "$(sched)" = "$DRAINED" ] && ok || bad "the schedule changed after the circuits went" "$(sched) / $DRAINED"
# the config applied again: the drained ports stay dark
expect_exit 0 $OFC --socket "$SOCK" apply "$TMP/fab.yaml"
[ ! -s "$TMP/e1.state" ] && ok || bad "an apply put ocs1's drained circuits back" "$(wc -l <"$TMP/e1.state")"
until_state 10 "len(j.get('drained', [])) == 64 and j.get('at_target')" && ok ||
	bad "after an apply, drained and at target" "$(head -c 600 "$TMP/st.json")"

# ---- a restart keeps the ports drained ----------------------------------------------------
kill "$ofcd_pid"
wait "$ofcd_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
start_ofcd
until_state 30 "len(j.get('drained', [])) == 64 and sorted(j.get('failed', [])) == $WANT1 and j.get('schedule', {}).get('verified')" &&
	ok || bad "drained ports not kept across a restart" "$(head -c 600 "$TMP/st.json")"
[ "$(sched)" = "$DRAINED" ] && ok || bad "the drained schedule after a restart" "$(sched) / $DRAINED"
[ ! -s "$TMP/e1.state" ] && ok || bad "a restart put ocs1's circuits back" "$(head -3 "$TMP/e1.state")"
$OFC --socket "$SOCK" watch --json >"$TMP/watch2" 2>/dev/null &
watch_pid=$!

# ---- undrain: the circuits back as before, then the healthy schedule ----------------------
refused 2 "'ocs2' is not drained" $OFC --socket "$SOCK" undrain ocs2
expect_stdout_has "ocs1 undrained (64 switch ports; circuits back: transaction" \
	$OFC --socket "$SOCK" undrain ocs1
xcs 1 | cmp -s - "$TMP/before1" && ok || bad "ocs1's circuits after undrain differ from before the drain" \
	"$(xcs 1 | diff - "$TMP/before1" | head -5)"
until_state 10 'not j.get("drained") and not j.get("failed") and j.get("at_target")' && ok ||
	bad "undrained, yet drained or failed in the state" "$(head -c 600 "$TMP/st.json")"
[ "$(sched)" = "$HEALTHY" ] && ok || bad "the healthy schedule after undrain" "$(sched) / $HEALTHY"
refused 2 "'ocs1:5' is not drained (nothing is)" $OFC --socket "$SOCK" undrain ocs1:5

# ---- one port, and the events -----------------------------------------------------------
expect_stdout_has "ocs3:5 drained (1 switch port; no running job of libofc-mpi on these ports to say it took the new schedule: 0 ms of grace; circuits removed" $OFC --socket "$SOCK" drain ocs3:5 --grace 0s
[ "$(wc -l <"$TMP/e3.state")" -eq 62 ] && ok || bad "one port drained: its two circuits go" "$(wc -l <"$TMP/e3.state")"
expect_exit 0 $OFC --socket "$SOCK" undrain ocs3
xcs 3 | cmp -s - "$TMP/before3" && ok || bad "ocs3 after undrain"
# --force drains what cuts hosts off (the switches are going anyway): the
# answer names them, the state says no schedule survives; undrain restores
expect_stdout_has "forced: cut off h8, h9, " $OFC --socket "$SOCK" drain ocs1 ocs2 ocs3 --force --grace 0s
for i in 1 2 3; do [ ! -s "$TMP/e$i.state" ] && ok || bad "--force left ocs$i's circuits"; done
expect_json 'len(j["drained"]) == 192 and j.get("schedule_error")' $OFC --socket "$SOCK" status --json
expect_exit 0 $OFC --socket "$SOCK" undrain ocs1 ocs2 ocs3
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ocs$i after the forced drain's undrain"; done
until_state 10 'not j.get("drained") and not j.get("failed") and not j.get("schedule_error")' && ok ||
	bad "the forced drain's undrain left the state drained" "$(head -c 600 "$TMP/st.json")"
[ "$(sched)" = "$HEALTHY" ] && ok || bad "the healthy schedule after the forced drain's undrain" "$(sched) / $HEALTHY"
# a held partition's circuits stay through a drain (it aims the free ports
# alone), and the answer says so
expect_stdout_has "committed transaction" $OFC --socket "$SOCK" reconfigure --partition t-a \
	--topology ring:4 --hosts 'h[0-3]'
expect_stdout_has "; held partition t-a keeps its circuits on these ports (a drain moves the free ports alone): release it for the switch to hold nothing" \
	$OFC --socket "$SOCK" drain ocs0 --grace 0s
[ -s "$TMP/e0.state" ] && ok || bad "the held partition's circuits on ocs0 went with the drain"
expect_exit 0 $OFC --socket "$SOCK" undrain ocs0
# admission without moves: t-b on the same four switches takes its own
# ports (renumbered for fewest moves); t-a's circuits stay as they are, and
# one that would need t-a's hosts is refused, naming the holder
for i in 0 1 2 3; do awk '$1 >= 1 && $1 <= 4' "$TMP/e$i.state" | sort >"$TMP/ta$i"; done
[ -s "$TMP/ta0" ] || bad "t-a holds no circuit on ocs0"
expect_stdout_has "committed transaction" $OFC --socket "$SOCK" reconfigure --partition t-b \
	--topology ring:4 --hosts 'h[4-7]' --relabel
for i in 0 1 2 3; do awk '$1 >= 1 && $1 <= 4' "$TMP/e$i.state" | sort | cmp -s - "$TMP/ta$i" && ok ||
	bad "admitting t-b moved t-a's circuits on ocs$i"; done
refused 1 "partition 't-c': host h3 is held by partition 't-a'" $OFC --socket "$SOCK" reconfigure --partition t-c \
	--topology ring:4 --hosts 'h[3-6]'
expect_exit 0 $OFC --socket "$SOCK" release t-b
# a staged change goes around a held partition: its stages move the free
# ports alone, and t-a's circuits (on ports 1-4, hosts h0-h3) are the same
# before each stage (the one before it committed, its schedule out) and
# after the last
for i in 0 1 2 3; do
	awk '$1 <= 4 || $2 <= 4' "$TMP/e$i.state" | sort >"$TMP/ta$i"
	awk '$1 > 4 && $2 > 4' "$TMP/e$i.state" | sort >"$TMP/free$i"
done
expect_stdout_has "; on the free ports alone: held partition t-a keeps its circuits as they are" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 40% --dry-run
nst=$(sed -n 's/^.*would reconfigure in \([0-9]*\) stages\{0,1\} to .*$/\1/p' "$TMP/out")
cp "$TMP/out" "$TMP/held.dry"
# offline, ofc plan --max-loss reads the holds in the state directory and
# goes around them: the same stages as ofcd's dry run above; without a
# state directory it says the holds are not known, and where to ask
# (ofcd's dry run first puts back the circuits t-b left on the switches,
# in a stage of its own: ofc plan reads no device and cannot know them)
# stages_of FILE: "CIRCUITS PORTS LOSS" of each stage of ofc's or ofcd's
# words but a leftovers' stage
stages_of() {
	python3 -c 'import re, sys
t = open(sys.argv[1]).read()
for m in re.findall(r"stage \d+: (\d+) circuits?, (\d+) host ports? out of use, loss ([0-9.]+)%(?!, the leftovers: )", t):
    print(*m)' "$1"
}
stages_of "$TMP/held.dry" >"$TMP/held.stages"
nplan=$(wc -l <"$TMP/held.stages")
expect_stdout_has "held partitions ($ST/drainfab.held): t-a (4 hosts); the stages go around them, their circuits as they are" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 40% --state-dir "$ST"
stages_of "$TMP/out" | cmp -s - "$TMP/held.stages" && [ "$nplan" -ge 2 ] && [ "$nplan" -ge $((${nst:-0} - 1)) ] &&
	ok || bad "ofc plan's stages around t-a differ from ofcd's dry run's" "$(cat "$TMP/held.dry" "$TMP/out")"
expect_stdout_has "held partitions are not known offline (no state directory $TMP/none): a stage may take a held partition's ports out of use; ofcd's plan goes around them: ofc --socket PATH reconfigure --topology circulant:64:1,8 --max-loss 40% --dry-run" \
	env OFC_STATE_DIR="$TMP/none" $OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 40%
# (the holds make the plan: without them its stages move t-a's ports too)
stages_of "$TMP/out" | cmp -s - "$TMP/held.stages" &&
	bad "the plan without the holds is the plan around t-a" "$(cat "$TMP/out")" || ok
refused 2 "state directory '$TMP/none' does not exist" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 40% --state-dir "$TMP/none"
# ofc try --max-loss: the same stages, from the committed topology to the
# file's, nothing applied
sed 's/^topology: torus:8x8$/topology: circulant:64:1,8/' "$TMP/fab.yaml" >"$TMP/fab2.yaml"
expect_stdout_has "$nplan stages to circulant:64:1,8 from torus:8x8 within a loss of 40%" \
	$OFC try "$TMP/fab2.yaml" --max-loss 40% --state-dir "$ST"
stages_of "$TMP/out" | cmp -s - "$TMP/held.stages" && grep -qF "t-a (4 hosts); the stages go around them" "$TMP/out" &&
	grep -qF "nothing applied: the stages run through ofcd" "$TMP/out" && ok ||
	bad "ofc try --max-loss's stages differ from ofcd's dry run's" "$(cat "$TMP/held.dry" "$TMP/out")"
expect_json 'j["from_topology"] == "torus:8x8" and j["target"] == "circulant:64:1,8" and j["held"] == ["t-a"] and j["from_is_record"] and len(j["stages"]) == '"$nplan" \
	$OFC try "$TMP/fab2.yaml" --max-loss 40 --state-dir "$ST" --json
refused 2 "bad --max-loss 'lots': not a percentage" $OFC try "$TMP/fab2.yaml" --max-loss lots --state-dir "$ST"
refused 2 "bad --max-loss '100%': out of range" $OFC try "$TMP/fab2.yaml" --max-loss 100% --state-dir "$ST"
refused 2 "--max-loss shows the stages of a change of the whole fabric's topology, reading no device and applying nothing: not with" \
	$OFC try "$TMP/fab2.yaml" --max-loss 40 --timeout 5s --state-dir "$ST"
refused 2 "no commit of the whole fabric's topology in $TMP/none to stage from" \
	$OFC try "$TMP/fab2.yaml" --max-loss 40 --state-dir "$TMP/none"
for i in 0 1 2 3; do awk '$1 <= 4 || $2 <= 4' "$TMP/e$i.state" | sort | cmp -s - "$TMP/ta$i" && ok ||
	bad "t-a's circuits on ocs$i moved with ofc try --max-loss"; done
[ "${nst:-0}" -ge 2 ] && ok || bad "the held staged change's plan has under 2 stages" "$(cat "$TMP/out")"
mark=$(wc -c <"$TMP/ofcd.log")
$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 40% --grace 1s >"$TMP/held.out" 2>&1 &
staged_pid=$!
k=1
while [ "$k" -le "${nst:-0}" ]; do
	deadline 30
	until tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "circulant:64:1,8: stage $k of $nst, .*its schedule published" ||
		past $_end; do sleep 0.1; done
	for i in 0 1 2 3; do awk '$1 <= 4 || $2 <= 4' "$TMP/e$i.state" | sort | cmp -s - "$TMP/ta$i" && ok ||
		bad "t-a's circuits on ocs$i moved before stage $k of $nst"; done
	# the stage's schedule leaves free host ports out, none of t-a's
	until_state 10 'j.get("failed") and not [x for x in j["failed"] if x.split(":")[0] in ("h0", "h1", "h2", "h3")]' &&
		ok || bad "stage $k's schedule takes a held host's port out" "$(head -c 600 "$TMP/st.json")"
	k=$((k + 1))
done
wait "$staged_pid" && ok || bad "the staged change under t-a failed" "$(cat "$TMP/held.out")"
grep -q "reconfigured to circulant:64:1,8 in stages, $nst run here in .*held partition t-a keeps its circuits" "$TMP/held.out" &&
	ok || bad "the held staged change's answer" "$(cat "$TMP/held.out")"
for i in 0 1 2 3; do awk '$1 <= 4 || $2 <= 4' "$TMP/e$i.state" | sort | cmp -s - "$TMP/ta$i" && ok ||
	bad "t-a's circuits on ocs$i moved with the staged change"; done
awk '$1 > 4 && $2 > 4' "$TMP/e0.state" | sort | cmp -s - "$TMP/free0" &&
	bad "the staged change under t-a moved no free circuit on ocs0" || ok
until_state 10 'j.get("at_target") and not j.get("failed")' && ok ||
	bad "the free ports not at circulant:64:1,8 after the held staged change" "$(head -c 600 "$TMP/st.json")"
[ ! -e "$ST/drainfab.staged" ] && ok || bad "the record stays after the held staged change"
# a staged apply ends with one transaction of the whole config: refused
# while t-a is held, nothing moved
sed 's/^topology: torus:8x8$/topology: circulant:64:1,8/' "$TMP/fab.yaml" >"$TMP/fab2.yaml"
refused 2 "1 partition is held: a staged apply ends with the config applied in one transaction" \
	$OFC --socket "$SOCK" apply "$TMP/fab2.yaml" --max-loss 40%
for i in 0 1 2 3; do awk '$1 <= 4 || $2 <= 4' "$TMP/e$i.state" | sort | cmp -s - "$TMP/ta$i" && ok ||
	bad "t-a's circuits on ocs$i moved with a refused staged apply"; done
expect_exit 0 $OFC --socket "$SOCK" release t-a
# released, t-a's circuits stay on its ports (h0-h3's): leftovers the
# record's topology has not. A staged change puts them back first, in a
# stage of their own, counted and priced; the answer's circuits and
# operations at each stage are what the switches did, and each stage
# changes only host ports its published schedule left out (so that
# schedule used only circuits the switches held), each planned stage
# within the budget
snap() { for i in 0 1 2 3; do sed "s/^/$i /" "$TMP/e$i.state"; done | sort >"$TMP/lo.$1"; }
snap 0
expect_stdout_has "; stage 1: " $OFC --socket "$SOCK" reconfigure --topology torus:8x8 --max-loss 60% --dry-run
cp "$TMP/out" "$TMP/lo.dry"
# (its JSON: the operations planned, the leftovers' stage's among them)
ops=$(sed -n 's/^.*; \([0-9]*\) device operations\{0,1\} in all.*$/\1/p' "$TMP/lo.dry")
expect_json "j['state'] == 'planned' and j['operations'] == ${ops:-0} > 0" \
	$OFC --socket "$SOCK" reconfigure --topology torus:8x8 --max-loss 60% --dry-run --json
nst=$(sed -n 's/^.*would reconfigure in \([0-9]*\) stages\{0,1\} to .*$/\1/p' "$TMP/lo.dry")
mark=$(wc -c <"$TMP/ofcd.log")
$OFC --socket "$SOCK" reconfigure --topology torus:8x8 --max-loss 60% --grace 3s >"$TMP/lo.out" 2>&1 &
staged_pid=$!
# (each stage's switches and state read within its 3 s of grace: a
# snapshot and one status)
k=1
while [ "$k" -le "${nst:-0}" ]; do
	deadline 40
	until tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "torus:8x8: stage $k of $nst, .*its schedule published" ||
		past $_end; do sleep 0.1; done
	[ "$k" -gt 1 ] && snap $((k - 1))
	$OFC --socket "$SOCK" status --json --timeout 5 >"$TMP/lo.st$k" 2>/dev/null || bad "no state at stage $k"
	k=$((k + 1))
done
wait "$staged_pid" && ok || bad "the staged change over the leftovers failed" "$(cat "$TMP/lo.out")"
snap "${nst:-0}"
python3 - "$TMP" "${nst:-0}" <<'EOF' && ok || bad "the leftovers' staged change" "$(cat "$TMP/lo.out")"
import json, re, sys
tmp, nst = sys.argv[1], int(sys.argv[2])
ans, dry = open(tmp + "/lo.out").read(), open(tmp + "/lo.dry").read()
st = r"stage (\d+): (\d+) circuits?, \d+ host ports? out of use, loss ([0-9.]+)%[^;]*?(\d+) operations?"
stages, planned = re.findall(st, ans), re.findall(st, dry)
assert nst >= 2 and len(stages) == nst and stages == planned, (nst, stages, planned)
snaps = [set(open("%s/lo.%d" % (tmp, k)).read().splitlines()) for k in range(nst + 1)]
ops, errs = 0, []
for k, (num, circuits, loss, sops) in enumerate(stages, 1):
    added, removed = snaps[k] - snaps[k - 1], snaps[k - 1] - snaps[k]
    if len(added) != int(circuits) or len(added) + len(removed) != int(sops):
        errs.append("stage %d says %s circuits, %s operations; the switches set %d, removed %d" % (k, circuits, sops, len(added), len(removed)))
    # each host port a stage's circuits change is one its schedule left out
    failed = set(json.load(open("%s/lo.st%d" % (tmp, k))).get("failed", []))
    used = sorted({x for x in added | removed for p in map(int, x.split()[1:]) if "h%d:%s" % (p - 1, x.split()[0]) not in failed})
    if used:
        errs.append("stage %d changed %d circuits on ports its schedule used: %s" % (k, len(used), used[:4]))
    # (the leftovers' stage takes no port in use away: not held to it)
    if float(loss) > 60 and not (k == 1 and ", the leftovers: " in ans):
        errs.append("stage %d's loss %s%%" % (k, loss))
    ops += len(added) + len(removed)
total = int(re.search(r"in stages, \d+ run here in [0-9.]+ s \((\d+) device operations?\)", ans).group(1))
if ops != total:
    errs.append("the answer says %d operations, the switches did %d" % (total, ops))
assert not errs, errs
assert re.search(r"stage 1: [^;]*, the leftovers: 1 cross-connect ", ans), ans
EOF
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ocs$i not at torus:8x8 after the leftovers' staged change"; done
# a plain reconfigure counts the leftovers it removes in its answer
expect_exit 0 $OFC --socket "$SOCK" reconfigure --partition t-a --topology ring:4 --hosts 'h[0-3]'
expect_exit 0 $OFC --socket "$SOCK" release t-a
snap p0
expect_stdout_has "committed transaction" $OFC --socket "$SOCK" reconfigure --topology torus:8x8
snap p1
n=$(sed -n 's/^.*committed transaction [0-9]*[^:]*: \([0-9]*\) operations\{0,1\}.*$/\1/p' "$TMP/out")
[ "$n" = "$(comm -3 "$TMP/lo.p0" "$TMP/lo.p1" | wc -l)" ] && [ "${n:-0}" -gt 0 ] && ok ||
	bad "the plain reconfigure's answer counts $n operations" "$(cat "$TMP/out"; comm -3 "$TMP/lo.p0" "$TMP/lo.p1" | wc -l)"

# ---- a change in stages (docs/ofcd.md, "A change in stages") ------------------------------
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" || bad "ocs$i is not at torus:8x8 before the staged change"; done
refused 2 "bad --max-loss '0': out of range; a percentage above 0 and below 100" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 0
refused 2 "bad --max-loss '100%': out of range; a percentage above 0 and below 100" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 100%
refused 2 "bad --max-loss 'lots': not a percentage" $OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss lots
refused 2 "--max-loss stages a change of the whole fabric's topology: give --topology SPEC alone" \
	$OFC --socket "$SOCK" reconfigure --collective allreduce --size 1MiB --max-loss 25
refused 2 "--grace goes with --max-loss" $OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --grace 1s
refused 2 "no stage fits a loss of 1%: moving one circuit alone" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 1%
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "a refused staged change moved ocs$i"; done
[ ! -e "$ST/drainfab.staged" ] && ok || bad "a refused staged change left a record"
# the plan: its stages, the loss at each and each stage's schedule, nothing moved
expect_stdout_has "would reconfigure in 2 stages to circulant:64:1,8 within a loss of 25%: 16 circuits moved (the fewest possible 16), at least 2 stages by the ports a host may lose at once; stage 1: 8 circuits, 16 host ports out of use, loss 25.00%" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 25% --dry-run
grep -q "; stage 2's schedule: [a-z-]* allreduce, [0-9]* steps, [0-9.]* us, verified" "$TMP/out" && ok ||
	bad "the plan shows no schedule for stage 2" "$(cat "$TMP/out")"
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "a staged dry run moved ocs$i"; done
# ofc plan makes the same plan locally, no ofcd asked, no device read:
# the same stages, losses and schedules (each on the topology before it)
cp "$TMP/out" "$TMP/dry.out"
expect_stdout_has "2 stages to circulant:64:1,8 from torus:8x8 within a loss of 25%: 16 circuits moved (the fewest possible 16), at least 2 stages by the ports a host may lose at once" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 25%
python3 - "$TMP/dry.out" "$TMP/out" <<'EOF' && ok || bad "ofc plan's stages differ from ofcd's dry run's" "$(cat "$TMP/dry.out" "$TMP/out")"
import re, sys
dry, plan = open(sys.argv[1]).read(), open(sys.argv[2]).read()
st = r"stage (\d+): (\d+) circuits?, (\d+) host ports? out of use, loss ([0-9.]+)%"
sc = r"(\S+) (\S+), (\d+) steps, ([0-9.e+]+) us, verified"
a = [x + y for x, y in zip(re.findall(st, dry), re.findall(r"stage \d+'s schedule: " + sc, dry))]
b = re.findall(st + r"[^;\n]*; schedule: " + sc, plan)
sys.exit(0 if len(a) == 2 and a == b else 1)
EOF
expect_json 'j["moved"] == 16 and j["operations"] == 32 and j["from_topology"] == "torus:8x8" and [s["stage"] for s in j["stages"]] == [1, 2] and all(s["verified"] and s["num_steps"] > 0 and 0 < s["loss_percent"] <= 25 and s["operations"] == 2 * s["circuits"] for s in j["stages"])' \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 25 --json
# (docs/ofcd.md's: a shipped config, one OCS, the same torus)
expect_stdout_has "2 stages to circulant:64:1,8 from torus:8x8 within a loss of 25%: 16 circuits moved" \
	$OFC plan configs/torus64-ocs.yaml --topology circulant:64:1,8 --max-loss 25%
refused 2 "bad --max-loss '0': out of range; a percentage above 0 and below 100" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 0
refused 2 "bad --max-loss '100%': out of range; a percentage above 0 and below 100" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 100%
refused 2 "--topology and --max-loss go together" $OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8
refused 2 "--topology and --max-loss go together" $OFC plan "$TMP/fab.yaml" --max-loss 25
refused 2 "--max-loss plans the stages of a change of the whole fabric's topology from the config's, reading no device: not with" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 25 --partition p
refused 2 "topology 'circulant:32:1,8' has 32 nodes but the fabric has 64 hosts" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:32:1,8 --max-loss 25
refused 2 "a staged change needs both topologies as port permutations of the same hosts and ports (64 x 4 and 64 x 2)" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1 --max-loss 25
refused 2 "no stage fits a loss of 1%: moving one circuit alone" \
	$OFC plan "$TMP/fab.yaml" --topology circulant:64:1,8 --max-loss 1%
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ofc plan's stages moved ocs$i"; done
# the Python client plans it too, and ofcd refuses a budget out of range
# that a client sends
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
PYTHONPATH="$BUILD/python" $PY - "$SOCK" >"$TMP/py.out" 2>&1 <<'PY' && ok || bad "the Python client's staged plan" "$(cat "$TMP/py.out")"
import sys
from ofc_client import Client, OfcError, control_pb2
ofc = Client(sys.argv[1])
r = ofc.reconfigure(topology="circulant:64:1,8", max_loss_percent=25, dry_run=True)
assert "would reconfigure in 2 stages" in r.message, r.message
req = control_pb2.Request()
req.reconfigure.topology = "circulant:64:1,8"
req.reconfigure.max_loss_percent = 100
try:
    ofc.call(req)
    sys.exit("ofcd took max_loss_percent 100")
except OfcError as e:
    assert e.response.status == control_pb2.STATUS_INVALID, e.response
    assert "max_loss_percent must be above 0 and below 100, not 100" in str(e), e
try:
    ofc.reconfigure(topology="circulant:64:1,8", max_loss_percent=0)
    sys.exit("the client sent max_loss_percent 0")
except ValueError as e:
    assert "above 0 and below 100" in str(e), e
PY
$OFC --socket "$SOCK" watch --json >"$TMP/watch3" 2>/dev/null &
watch_pid=$!
$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 25% --grace 2s >"$TMP/staged.out" 2>&1 &
staged_pid=$!
# stage 1's schedule is published, its 16 host ports left out, while every
# circuit is still the torus's
until_state 20 "len(j.get('failed', [])) == 16 and j.get('schedule', {}).get('verified')" &&
	ok || bad "stage 1's schedule not published" "$(head -c 600 "$TMP/st.json")"
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ocs$i moved before stage 1's schedule was out"; done
python3 -c 'import json,sys; s = json.load(open(sys.argv[1]))["schedule"]; m = s["metrics"]; sys.exit(0 if s["verified"] and s["time_us"] > m["healthy_time_us"] > 0 else 1)' "$TMP/st.json" &&
	ok || bad "stage 1's schedule is not on the torus less its ports" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["schedule"])' "$TMP/st.json" | head -c 600)"
[ -s "$ST/drainfab.staged" ] && ok || bad "no record of the staged change while it runs"
wait "$staged_pid" && ok || bad "the staged reconfigure failed" "$(cat "$TMP/staged.out")"
# stage 1's commit publishes stage 2's schedule at once (it runs on stage
# 1's topology): the intermediate topology's own is never planned
grep -q "schedule re-planned: circulant:64:1,8: stage 1 of 2 committed (transaction [0-9]*, [0-9]* operations, verified on the devices); next, stage 2 of 2, 8 circuits to move, 16 host ports out of use (loss 25.00%, at most 25%); 16 failures in effect" "$TMP/ofcd.log" &&
	ok || bad "stage 1's commit did not publish stage 2's schedule" "$(grep 'stage 1 of 2 committed' "$TMP/ofcd.log" | head -3)"
# each stage's published schedule names the graph it runs on (the
# topology before it less the stage's ports)
grep "schedule re-planned: circulant:64:1,8: stage [12] of 2" "$TMP/ofcd.log" >"$TMP/stage.lines"
[ -s "$TMP/stage.lines" ] && ! grep -q " allreduce on : " "$TMP/stage.lines" &&
	grep -q "; bfb allreduce on torus:8x8 without " "$TMP/stage.lines" && ok ||
	bad "a stage's schedule names no topology" "$(head -c 900 "$TMP/stage.lines")"
grep -q "reconfigured to circulant:64:1,8 in stages, 2 run here in " "$TMP/staged.out" && ok ||
	bad "the staged change's answer" "$(cat "$TMP/staged.out")"
python3 - "$TMP/staged.out" <<'EOF' && ok || bad "a stage's loss over 25%" "$(cat "$TMP/staged.out")"
import re, sys
losses = [float(x) for x in re.findall(r"stage \d+: \d+ circuits?, \d+ host ports? out of use, loss ([0-9.]+)%", open(sys.argv[1]).read())]
sys.exit(0 if len(losses) == 2 and max(losses) <= 25 else 1)
EOF
[ ! -e "$ST/drainfab.staged" ] && ok || bad "the record stays after the last stage"
until_state 10 'not j.get("failed") and j.get("at_target") and j.get("schedule", {}).get("verified")' && ok ||
	bad "after the staged change, not at target" "$(head -c 600 "$TMP/st.json")"
expect_stdout_has "0 operations on 4 devices would take fabric 'drainfab' to circulant:64:1,8" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --dry-run
expect_stdout_has "fabric 'drainfab' is at circulant:64:1,8 already: nothing to stage" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 25%
# and back in one stage under a larger budget: the very circuits of before
expect_stdout_has "reconfigured to torus:8x8 in stages" \
	$OFC --socket "$SOCK" reconfigure --topology torus:8x8 --max-loss 60% --grace 0s
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ocs$i after the staged change back"; done
# a stage that fails is undone alone, the stages before it stay, and the
# same request resumes from there: ocs1 stopped in stage 2's grace
mark=$(wc -c <"$TMP/ofcd.log")
$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 25% --grace 2s >"$TMP/staged2.out" 2>&1 &
staged_pid=$!
deadline 30
until tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "circulant:64:1,8: stage 2 of 2, .*its schedule published" ||
	past $_end; do sleep 0.1; done
stop_emu "$e1_pid"
wait "$staged_pid" && bad "stage 2 went through without ocs1" "$(cat "$TMP/staged2.out")" || ok
grep -q "stage 2 of 2 to circulant:64:1,8 failed: .*; the fabric is at stage 1 (its record says so), its circuits as that stage left them; the same request resumes from there" \
	"$TMP/staged2.out" && ok || bad "the failed stage's answer" "$(cat "$TMP/staged2.out")"
[ -s "$ST/drainfab.staged" ] && ok || bad "the record went with the failed stage"
xcs 0 | cmp -s - "$TMP/before0" && bad "stage 1's circuits on ocs0 were undone with stage 2" || ok
xcs 1 | cmp -s - "$TMP/before1" && ok || bad "ocs1 changed though its stage failed"
"$BUILD/ocs-emu" --listen "127.0.0.1:$e1_port" --ports 64 --credentials "$TMP/ocs0.cred" --state "$TMP/e1.state" \
	2>>"$TMP/e1.stderr" &
e1_pid=$!
EMUS="$EMUS $e1_pid"
sleep 0.5
expect_stdout_has "reconfigured to circulant:64:1,8 in stages (resumed), 1 run here in " \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --max-loss 25% --grace 0s
grep -q "resumed at stage 2 (1 committed before)" "$TMP/out" && ok || bad "the resumed answer" "$(cat "$TMP/out")"
[ ! -e "$ST/drainfab.staged" ] && ok || bad "the record stays after the resumed change"
expect_stdout_has "0 operations on 4 devices would take fabric 'drainfab' to circulant:64:1,8" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 --dry-run
# a single ofcd killed (-9) between stages goes on from its stage when it
# starts again: its record says where, as a new leader's does
mark=$(wc -c <"$TMP/ofcd.log")
$OFC --socket "$SOCK" reconfigure --topology torus:8x8 --max-loss 25% --grace 1s >"$TMP/staged3.out" 2>&1 &
staged_pid=$!
deadline 30
until tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "torus:8x8: stage 2 of 2, .*its schedule published" ||
	past $_end; do sleep 0.1; done
kill -9 "$ofcd_pid"
wait "$ofcd_pid" 2>/dev/null
wait "$staged_pid" && bad "the staged change answered though ofcd was killed" "$(cat "$TMP/staged3.out")" || ok
[ -s "$ST/drainfab.staged" ] && ok || bad "no record of the staged change ofcd was killed in"
at=0
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && at=$((at + 1)); done
[ "$at" -lt 4 ] && ok || bad "every switch back at the torus though only stage 1 ran"
start_ofcd
deadline 60
until [ ! -e "$ST/drainfab.staged" ] || past $_end; do sleep 0.2; done
grep -q "ofcd's last run's staged reconfiguration to torus:8x8 (1 of 2 stages committed): resumed here" \
	"$TMP/ofcd.log" && ok || bad "a restarted ofcd did not resume the staged change" "$(tail -5 "$TMP/ofcd.log")"
[ ! -e "$ST/drainfab.staged" ] && ok || bad "the record stays after the resumed change"
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ocs$i is not at torus:8x8 after the resume"; done
until_state 20 'not j.get("failed") and j.get("at_target") and j.get("schedule", {}).get("verified")' && ok ||
	bad "after the resumed change, not at target" "$(head -c 600 "$TMP/st.json")"
expect_stdout_has "fabric 'drainfab' is at torus:8x8 already: nothing to stage" \
	$OFC --socket "$SOCK" reconfigure --topology torus:8x8 --max-loss 25%
# a config applied in stages: its topology by the same stages, then the
# config itself (moving nothing more); one that changes other circuits too
# (its switches' order in the wiring) is refused, nothing moved
sed 's/switches: \[ocs0, ocs1, ocs2, ocs3\]/switches: [ocs1, ocs0, ocs2, ocs3]/' "$TMP/fab2.yaml" >"$TMP/fab3.yaml"
refused 2 "--grace goes with --max-loss" $OFC --socket "$SOCK" apply "$TMP/fab2.yaml" --grace 1s
refused 2 "changes circuits beyond its topology's (its wiring, switches or partitions): a staged apply changes the topology alone" \
	$OFC --socket "$SOCK" apply "$TMP/fab3.yaml" --max-loss 25%
expect_stdout_has "would reconfigure in 2 stages to circulant:64:1,8 (the topology of $TMP/fab2.yaml) within a loss of 25%: 16 circuits moved" \
	$OFC --socket "$SOCK" apply "$TMP/fab2.yaml" --max-loss 25% --dry-run
grep -qF "; then $TMP/fab2.yaml applied, its circuits its topology's" "$TMP/out" && ok || bad "the staged apply's plan" "$(cat "$TMP/out")"
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "a refused or planned staged apply moved ocs$i"; done
expect_stdout_has "reconfigured to circulant:64:1,8 (the topology of $TMP/fab2.yaml) in stages, 2 run here in " \
	$OFC --socket "$SOCK" apply "$TMP/fab2.yaml" --max-loss 25% --grace 0s
grep -q "; then committed transaction [0-9]*: 0 operations" "$TMP/out" && ok || bad "the staged apply's config applied" "$(cat "$TMP/out")"
[ ! -e "$ST/drainfab.staged" ] && ok || bad "the record stays after the staged apply"
until_state 10 'j.get("at_target") and j.get("topology", {}).get("spec") == "circulant:64:1,8" and j.get("target_topology") == "circulant:64:1,8"' && ok ||
	bad "after the staged apply, the config's topology not the target" "$(head -c 600 "$TMP/st.json")"
expect_stdout_has "reconfigured to torus:8x8 (the topology of $TMP/fab.yaml) in stages" $OFC --socket "$SOCK" apply "$TMP/fab.yaml" --max-loss 60% --grace 0s
for i in 0 1 2 3; do xcs $i | cmp -s - "$TMP/before$i" && ok || bad "ocs$i after the staged apply back"; done
# killed (-9) in stage 2's grace, the staged apply resumes at its start:
# the last stage, then the config (its record kept until then)
mark=$(wc -c <"$TMP/ofcd.log")
$OFC --socket "$SOCK" apply "$TMP/fab2.yaml" --max-loss 25% --grace 1s >"$TMP/staged4.out" 2>&1 &
staged_pid=$!
deadline 30
until tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "(the topology of $TMP/fab2.yaml): stage 2 of 2, .*its schedule published" ||
	past $_end; do sleep 0.1; done
kill -9 "$ofcd_pid"
wait "$ofcd_pid" 2>/dev/null
wait "$staged_pid" 2>/dev/null
[ -s "$ST/drainfab.staged" ] && ok || bad "no record of the staged apply ofcd was killed in"
start_ofcd
deadline 60
until [ ! -e "$ST/drainfab.staged" ] || past $_end; do sleep 0.2; done
tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "staged reconfiguration to circulant:64:1,8 (1 of 2 stages committed): resumed here" &&
	ok || bad "a restarted ofcd did not resume the staged apply" "$(tail -5 "$TMP/ofcd.log")"
tail -c +$((mark + 1)) "$TMP/ofcd.log" | grep -q "config applied (transaction [0-9]*): $TMP/fab2.yaml" &&
	ok || bad "the resumed staged apply did not apply its config" "$(tail -5 "$TMP/ofcd.log")"
until_state 20 'j.get("at_target") and j.get("topology", {}).get("spec") == "circulant:64:1,8" and j.get("target_topology") == "circulant:64:1,8"' && ok ||
	bad "after the resumed staged apply, its config's topology not the target" "$(head -c 600 "$TMP/st.json")"
kill "$ofcd_pid"
wait "$ofcd_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
# a damaged drained file stops the start, with its line and the mv
printf 'ocs1 x 1 uid:0\n' >"$ST/drainfab.drained"
expect_exit 1 $BUILD/ofcd --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$ST" \
	--credentials-dir "$TMP" --log-file "$TMP/ofcd.log"
grep -qF "$ST/drainfab.drained:1:1: not SWITCH PORT SINCE_MS BY: not a line of ofcd's drained switch ports (SWITCH PORT SINCE_MS BY) file; the file is damaged: look at it, then \`mv '$ST/drainfab.drained' '$ST/drainfab.drained.bad'\`" \
	"$TMP/err" "$TMP/ofcd.log" && ok || bad "a damaged .drained file" "$(cat "$TMP/err"; tail -2 "$TMP/ofcd.log")"
# each stage's schedule announced before its circuits, the last's topology's after
[ "$(grep -c '"KIND_SCHEDULE_REPLANNED"' "$TMP/watch3")" -ge 3 ] && ok ||
	bad "the staged change's schedules were not announced" "$(grep -o '"kind": *"[A-Z_]*"' "$TMP/watch3" | sort | uniq -c)"
grep -q '"KIND_DRAINED"' "$TMP/watch" && grep -q '"KIND_UNDRAINED"' "$TMP/watch2" && ok ||
	bad "watchers did not hear drained and undrained" "$(grep -o '"kind": *"[A-Z_]*"' "$TMP/watch" "$TMP/watch2" | sort | uniq -c)"
# the drain's order for a watcher: the schedule re-planned before the drain is done
python3 - "$TMP/watch" <<'EOF' && ok || bad "the drain's re-plan was not announced before it ended" "$(grep -o '"kind": *"[A-Z_]*"' "$TMP/watch")"
import json, sys
kinds = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith('{'):
        try:
            kinds.append(json.loads(line).get('kind'))
        except ValueError:
            pass
i = kinds.index('KIND_DRAINED')
sys.exit(0 if 'KIND_SCHEDULE_REPLANNED' in kinds[:i] else 1)
EOF
finish
