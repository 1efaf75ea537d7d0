#!/bin/sh
# Two jobs on one 256-port OCS (build/ocs-emu): `ofc plan|apply|try
# --partition` changes one partition's cross-connects and never another's,
# checked against the emulator's own saved state after every step; a fault
# in one partition's transaction rolls back that partition alone.
SUITE=partitions
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
mkdir -p "$ST"
CFG="$TMP/part.yaml"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"

# configs/torus64-ocs.yaml without its own topology, with two partitions of
# 32 hosts: jobA on h0..h31 (topology $1), jobB on h32..h63 (topology $2).
make_config() { # OUT TOPO_A TOPO_B
	a=$(seq -s ', h' 0 31)
	b=$(seq -s ', h' 32 63)
	sed -e '/^topology: /d' -e 's|credentials: .*|credentials: ocs0.cred|' \
		-e "s|^collectives:|partitions:\n  - name: jobA\n    hosts: [h$a]\n    topology: $2\n  - name: jobB\n    hosts: [h$b]\n    topology: $3\n\ncollectives:|" \
		configs/torus64-ocs.yaml >"$1"
}
make_config "$CFG" torus:4x8 circulant:32:1,4
make_config "$TMP/part2.yaml" circulant:32:1,3 circulant:32:1,4

# The emulator's own state: "in out" lines, saved after every change.
# xcs_of A|B: the cross-connects on jobA's switch ports (1..128) or jobB's
# (129..256), sorted.
xcs_of() {
	if [ "$1" = A ]; then
		awk '$1 <= 128 || $2 <= 128' "$TMP/emu.state" | sort
	else
		awk '$1 > 128 || $2 > 128' "$TMP/emu.state" | sort
	fi
}
count_of() { xcs_of "$1" | grep -c .; }
# same_as NAME WHAT: jobX's cross-connects equal the saved snapshot NAME.
same_as() {
	xcs_of "$1" >"$TMP/now.$1"
	if cmp -s "$TMP/now.$1" "$TMP/$2"; then ok; else
		bad "job$1's cross-connects changed ($2)" "$(diff "$TMP/$2" "$TMP/now.$1" | head -5)"
	fi
}

expect_exit 0 $OFC validate "$CFG"
: >"$TMP/emu.state"
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
D="--device ocs0=127.0.0.1:$e_port --state-dir $ST"

# ---- the whole fabric's target is the union of its partitions ----------------
expect_json 'j["operations"]==256 and "partition" not in j["device_plan"]' $OFC plan "$CFG" $D --json
expect_json 'j["device_plan"]["partition"]=="jobA" and j["operations"]==128 and all(1<=o["in"]<=128 and 1<=o["out"]<=128 for o in j["device_plan"]["devices"][0]["ops"])' \
	$OFC plan "$CFG" $D --partition jobA --json

# ---- jobA, then jobB: each touches its own ports --------------------------------
expect_stdout_has "committed transaction 1: 128 operations" $OFC apply "$CFG" $D --partition jobA
[ "$(count_of A)" -eq 128 ] && [ "$(count_of B)" -eq 0 ] && ok ||
	bad "after jobA's apply: $(count_of A) cross-connects on jobA's ports (want 128), $(count_of B) on jobB's (want 0)"
xcs_of A >"$TMP/A.1"
# `ofc status --dot`: the circuits the switch holds, a
# partition per colour, each drawn as its topology is (jobA's torus:4x8 a
# grid), the target's it lacks dotted: jobA's 64 links drawn, jobB's 64
# (circulant:32:1,4) dotted, and no line between the two.
expect_exit 0 $OFC status "$CFG" $D --dot
grep -q 'label="torus64-ocs: 64 hosts, 2 partitions\\n128 circuits as the devices hold them; 128 of the target.s missing (dotted)"' "$TMP/out" &&
	ok || bad "status --dot's title" "$(grep label= "$TMP/out" | head -1)"
python3 tests/integration/dot_check.py "$TMP/out" >"$TMP/dot.json" &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
a = lambda h: int(h[1:]) < 32
ok = (len(j["other"]) == 64 and all(a(u) and a(v) for u, v in j["other"])
      and len(j["dotted"]) == 64 and all(not a(u) and not a(v) for u, v in j["dotted"])
      and not j["red"] and len(set(j["fill"][h] for h in j["fill"] if a(h))) == 1
      and len(set(j["fill"].values())) == 2 and j["pos"]["h5"] == [1.2, -1.2])
sys.exit(0 if ok else 1)' "$TMP/dot.json" && ok || bad "status --dot after jobA's apply" "$(head -c 400 "$TMP/dot.json")"
# A switch that does not answer: its circuits as recorded, said, exit 1.
expect_exit 1 $OFC status "$CFG" --device ocs0=127.0.0.1:1 --state-dir "$ST" --dot
grep -q '128 circuits as read, or recorded where a device did not answer' "$TMP/out" &&
	grep -q 'label="ocs0\\nOCS, 256 ports\\n128 circuits\\nUNREACHABLE"' "$TMP/out" &&
	ok || bad "status --dot without the switch" "$(grep label= "$TMP/out" | head -2)"
expect_error 2 "ofc status: --dot needs the fabric's FILE" $OFC status --dot $D
expect_stdout_has "committed transaction 2: 128 operations" $OFC apply "$CFG" $D --partition jobB
same_as A A.1
[ "$(count_of B)" -eq 128 ] && ok || bad "jobB holds $(count_of B) cross-connects, want 128"
xcs_of B >"$TMP/B.1"
# The fabric has no topology of its own (its partitions' only): status names
# the partition the last commit changed, never its topology as the fabric's.
expect_json 'j["partition"]=="jobB" and "topology" not in j and j["at_target"]' \
	$OFC status "$CFG" $D --json
expect_json 'j["operations"]==0' $OFC plan "$CFG" $D --json

# ---- the whole torus over both jobs' circuits, renumbered -----------
# --relabel planned 496 operations where the config's numbering needs 304:
# never more than the config's numbering, and the counts are the plan's.
make_torus_config "$TMP/torus.yaml" torus:8x8 2s 2
PLAIN=$($OFC plan "$TMP/torus.yaml" $D --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"])')
expect_json "j['operations'] <= $PLAIN and j['device_plan']['relabel']['kept_identity'] == (512 - $PLAIN) // 2 and j['operations'] == 512 - 2 * j['device_plan']['relabel']['kept']" \
	$OFC plan "$TMP/torus.yaml" $D --relabel --relabel-budget 0.5 --json

# ---- jobA moves to another topology: only the circuits that differ, jobB still ----
expect_json 'j["operations"]>0 and all(1<=o["in"]<=128 for o in j["device_plan"]["devices"][0]["ops"])' \
	$OFC plan "$TMP/part2.yaml" $D --partition jobA --json
expect_exit 0 $OFC apply "$TMP/part2.yaml" $D --partition jobA
same_as B B.1
xcs_of A >"$TMP/A.2"
if cmp -s "$TMP/A.1" "$TMP/A.2"; then bad "jobA's cross-connects did not change"; else ok; fi
# try, then let it lapse: back to the state before, jobB untouched.
expect_exit 1 $OFC try "$CFG" $D --partition jobA --timeout 0.3
same_as A A.2
same_as B B.1
stop_emu "$e_pid"

# ---- a fault in jobB's transaction rolls back jobB alone -------------------------
# jobB to the torus; the emulator refuses the 20th command: the commit of the
# transaction never happens, and both partitions read back as before.
make_config "$TMP/part3.yaml" circulant:32:1,3 torus:4x8
start_emu ocs-emu f --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state" --fail-at 20
D="--device ocs0=127.0.0.1:$f_port --state-dir $ST"
expect_exit 1 $OFC apply "$TMP/part3.yaml" $D --partition jobB
grep -q "rolled back\|rolling back\|put back" "$TMP/err" "$TMP/out" && ok || bad "the failed apply should say it rolled back" "$(cat "$TMP/out" "$TMP/err" | head -5)"
same_as A A.2
same_as B B.1
expect_json 'j["config_generation"]==3 and j["partition"]=="jobA" and j.get("transaction") is None' \
	$OFC status "$TMP/part3.yaml" $D --json
stop_emu "$f_pid"

# ---- refusals ------------------------------------------------------------------
start_emu ocs-emu g --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
D="--device ocs0=127.0.0.1:$g_port --state-dir $ST"
expect_error 2 "ofc plan: --partition 'jobC': $CFG has the partitions 'jobA', 'jobB'" \
	$OFC plan "$CFG" $D --partition jobC
expect_exit 1 $OFC apply "$CFG" $D --partition jobA --max-moves 3
same_as A A.2

# ---- --relabel within a partition: jobA's nodes onto jobA's hosts -------------
# shuffle_a IN OUT: jobA's hosts listed in a shuffled order, so its topology
# over them is a relabelled copy of the one over h0..h31.
shuffle_a() {
	python3 - "$1" "$2" <<'PY'
import random, sys
text = open(sys.argv[1]).read()
order = ["h%d" % i for i in range(32)]
random.Random(3).shuffle(order)
old = "hosts: [" + ", ".join("h%d" % i for i in range(32)) + "]"
assert old in text
open(sys.argv[2], "w").write(text.replace(old, "hosts: [" + ", ".join(order) + "]"))
PY
}
shuffle_a "$TMP/part2.yaml" "$TMP/part2s.yaml"
# jobA holds circulant:32:1,3 (part2): the shuffled numbering moves nearly
# every circuit, relabelled none.
expect_json 'j["operations"] > 100' $OFC plan "$TMP/part2s.yaml" $D --partition jobA --json
expect_json 'j["operations"] == 0 and j["device_plan"]["partition"] == "jobA" and j["device_plan"]["relabel"]["complete"] and j["device_plan"]["relabel"]["kept"] == 128 and j["device_plan"]["relabel"]["kept_identity"] < 64' \
	$OFC plan "$TMP/part2s.yaml" $D --partition jobA --relabel --json
# To the torus: fewer operations than the members' own numbering, on
# jobA's ports alone, and jobB's cross-connects untouched by the apply.
IDENT=$($OFC plan "$CFG" $D --partition jobA --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"])')
expect_json "j['operations'] < $IDENT and j['device_plan']['relabel']['kept'] > j['device_plan']['relabel']['kept_identity'] and all(1<=o['in']<=128 and 1<=o['out']<=128 for o in j['device_plan']['devices'][0]['ops'])" \
	$OFC plan "$CFG" $D --partition jobA --relabel --relabel-budget 0.5 --json
expect_exit 0 $OFC apply "$CFG" $D --partition jobA --relabel --relabel-budget 0.5 --max-moves $((IDENT - 1))
grep -q "^relabelled: [0-9]* operations instead of $IDENT; " "$TMP/err" && ok ||
	bad "apply --partition --relabel should say what it saved" "$(cat "$TMP/err")"
same_as B B.1
[ "$(count_of A)" -eq 128 ] && ok || bad "jobA holds $(count_of A) cross-connects after its relabelled apply, want 128"
expect_json 'j["operations"] == 0 and j["device_plan"]["relabel"]["complete"]' $OFC plan "$CFG" $D --partition jobA --relabel --json
# What jobA now holds is a torus:4x8 over its 32 hosts: every host has 4
# out- and 4 in-links, all within jobA, and the circuits form a graph with
# the torus's distance profile (an independent check of the renumbering).
python3 - "$TMP/emu.state" <<'PY' && ok || bad "jobA's relabelled circuits are not a torus:4x8"
import sys, collections
xc = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
a = [(i, o) for i, o in xc if i <= 128 or o <= 128]
assert len(a) == 128 and all(i <= 128 and o <= 128 for i, o in a)
host = lambda p: (p - 1) // 4
adj = collections.defaultdict(list)
for i, o in a:
    adj[host(i)].append(host(o))
assert all(len(adj[h]) == 4 for h in range(32))
def profile(s):
    d = {s: 0}; q = [s]
    for u in q:
        for v in adj[u]:
            if v not in d: d[v] = d[u] + 1; q.append(v)
    return sorted(collections.Counter(d.values()).items())
# torus:4x8: 1 at 0, 4 at 1, 7 at 2, 8 at 3, 7 at 4, 4 at 5, 1 at 6
want = [(0, 1), (1, 4), (2, 7), (3, 8), (4, 7), (5, 4), (6, 1)]
assert all(profile(h) == want for h in range(32)), profile(0)
PY
xcs_of A >"$TMP/A.2"

# ---- --horizon within a partition: jobA weighs circulant:32:1,3 (part2)
# against the torus it holds, and the finder's 32-node topologies; the plan
# is a partition plan (jobA's ports only). With no runs to repay them no
# move is worth it; with endless runs the fastest collectives win. The
# arithmetic is checked from the JSON.
H_OK='(p := j["device_plan"]) and (c := p["choice"]["candidates"]) and (k := c[p["choice"]["chosen"]]) and all(abs(x["total_seconds"] - x["reconfig_seconds"] - p["choice"]["horizon"] * x["collective_us"] * 1e-6) <= 1e-6 * max(1, x["total_seconds"]) for x in c) and j["operations"] == k["moves"] and p["partition"] == "jobA" and all(1 <= o["in"] <= 128 and 1 <= o["out"] <= 128 for o in p["devices"][0]["ops"])'
expect_json "$H_OK and k['kind'] == 'keep' and k['topology'] == 'torus:4x8' and j['operations'] == 0 and [x for x in c if x['kind'] == 'requested'][0]['topology'] == 'circulant:32:1,3'" \
	$OFC plan "$TMP/part2.yaml" $D --partition jobA --horizon 0 --relabel-budget 0.3 --json
expect_json "$H_OK and k['collective_us'] == min(x['collective_us'] for x in c) and k['kind'] != 'keep' and len(c) >= 3 and any(x['kind'] == 'alternative' for x in c)" \
	$OFC plan "$TMP/part2.yaml" $D --partition jobA --horizon 1e12 --relabel-budget 0.3 --json
# A limit: only the circuits in place fit.
expect_json "$H_OK and k['kind'] == 'keep' and all(x['fits'] == (x['moves'] <= 1) for x in c)" \
	$OFC plan "$TMP/part2.yaml" $D --partition jobA --horizon 1e12 --max-moves 1 --relabel-budget 0.3 --json
same_as A A.2
same_as B B.1
# A whole-fabric topology whose circuits join the two jobs: a partition on
# its own cannot be planned from there (it would cut jobB's circuits).
sed -e 's/^partitions:/topology: torus:8x8\npartitions:/' "$CFG" >"$TMP/whole.yaml"
expect_exit 0 $OFC apply "$TMP/whole.yaml" $D
xcs_of A >"$TMP/A.3"
xcs_of B >"$TMP/B.3"
expect_error 1 "ofc: switch ocs0: cross-connect 4 -> 228 joins a port of partition 'jobA' to a port outside it; nothing was planned (plan the whole fabric, without --partition, to take it down)" \
	$OFC apply "$CFG" $D --partition jobA
same_as A A.3
same_as B B.3
stop_emu "$g_pid"

# ---- through ofcd: Reconfigure and GetSchedule of a partition ---------------------
# A fresh switch and state; the two jobs' Reconfigures sent at once run one
# at a time, each touching its own ports.
: >"$TMP/emu.state"
rm -rf "$ST" && mkdir -p "$ST"
start_emu ocs-emu h --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
$BUILD/ofcd --foreground --credentials-dir "$TMP" --config "$CFG" --socket "$SOCK" --state-dir "$ST" \
	--device "ocs0=127.0.0.1:$h_port" --probe-interval 0 2>>"$TMP/ofcd.log" &
ofcd_pid=$!
DAEMONS="$ofcd_pid"
_w=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 1000 ]; do
	sleep 0.01
	_w=$((_w + 1))
done
expect_stdout_has "would take fabric" $OFC --socket "$SOCK" reconfigure --partition jobA --dry-run
[ "$(count_of A)" -eq 0 ] && ok || bad "a dry run changed the switch"
$OFC --socket "$SOCK" reconfigure --partition jobA >"$TMP/ra.out" 2>&1 &
ra=$!
$OFC --socket "$SOCK" reconfigure --partition jobB >"$TMP/rb.out" 2>&1 &
rb=$!
wait $ra && wait $rb && ok || bad "concurrent partition reconfigures failed" "$(cat "$TMP/ra.out" "$TMP/rb.out")"
grep -q "committed transaction" "$TMP/ra.out" && grep -q "committed transaction" "$TMP/rb.out" && ok ||
	bad "both reconfigures should commit" "$(cat "$TMP/ra.out" "$TMP/rb.out")"
same_as A A.1
same_as B B.1
expect_json 'j["at_target"]' $OFC --socket "$SOCK" status --json
expect_json 'j["topology"]=="torus:4x8" and j["nodes"]==32 and j["verified"]' \
	$OFC --socket "$SOCK" schedule --partition jobA --collective allreduce --size 1MiB --summary --json
expect_exit 1 $OFC --socket "$SOCK" reconfigure --partition jobC
expect_exit 1 $OFC --socket "$SOCK" schedule --partition jobC --collective allreduce --summary
expect_exit 2 $OFC --socket "$SOCK" reconfigure --partition jobA --topology ring:32
same_as A A.1
kill -TERM "$ofcd_pid"
wait "$ofcd_pid" && ok || bad "ofcd did not exit 0 after SIGTERM"
stop_emu "$h_pid"

finish
