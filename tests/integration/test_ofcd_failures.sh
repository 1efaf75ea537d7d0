#!/bin/sh
# ofcd reacting to failures, driven through `ofc --socket`: `fail`
# re-plans the running schedule on the surviving graph and watchers see it;
# GetSchedule then returns the schedule `ofc schedule` computes (and
# verifies) for the same config with the link in its failed_links, and no
# transfer crosses the failed link; the failed set survives a restart of the
# daemon; `restore` brings the healthy schedule back; a failed host leaves
# the collective to the others (and cut off, no schedule). A sim switch:
# nothing leaves the machine.
SUITE=ofcd-failures
. "$(dirname "$0")/lib.sh"

OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP"
SOCK="$TMP/ofcd.sock"
ST="$TMP/state"
mkdir -p "$ST"
cat >"$TMP/fab.yaml" <<'EOF'
name: simfab
hosts: {count: 64, prefix: h, ports: 4}
switches:
  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:8x8
collectives:
  - {op: allgather, size: 1MiB}
EOF
sed 's|^topology: .*|topology: {spec: torus:8x8, failed_links: [[h0, h1]]}|' "$TMP/fab.yaml" >"$TMP/less.yaml"

start_ofcd() {
	$OFCD --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$ST" 2>>"$TMP/d.log" &
	ofcd_pid=$!
	_w=0
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 1000 ]; do
		sleep 0.01
		_w=$((_w + 1))
	done
}
stop_ofcd() {
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
}
# same_as FILE_JSON FILE_JSON LINK: two schedules (GetSchedule's, ofc
# schedule's) agree step by step, both verified, none crosses LINK.
same_as() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a = a.get('schedule', a)
u, v = (int(x) for x in sys.argv[3].split('-')) if sys.argv[3] else (-1, -1)
def xs(s):
    return [sorted((t['src'], t['dst'], t.get('origin', 0), t.get('offset', 0), t.get('length', 0))
                   for t in st['transfers']) for st in s['steps']]
xa, xb = xs(a), xs(b)
if not (a['verified'] and b['verified']):
    sys.exit('not verified')
if xa != xb or a['time_us'] != b['time_us']:
    sys.exit('GetSchedule differs from ofc schedule: %d/%d steps, %s/%s us' %
             (len(xa), len(xb), a['time_us'], b['time_us']))
for st in xa:
    for t in st:
        if {t[0], t[1]} == {u, v}:
            sys.exit('transfer %s crosses the failed link' % (t,))
EOF
}

# An empty switch with nothing recorded is as recorded, here and through
# ofcd (once its start check has read it), not "DIFFERS from the record".
expect_stdout_has "  ocs0 (sim): 0 entries; nothing recorded for it yet, and it holds nothing; not at the config's target" \
	$OFC status "$TMP/fab.yaml" --state-dir "$ST"
expect_json 'j["in_sync"] and j["devices"][0]["in_sync"]' $OFC status "$TMP/fab.yaml" --state-dir "$ST" --json
start_ofcd
deadline 20
until $OFC --socket "$SOCK" status --json 2>/dev/null | grep -q '"in_sync"' || past $_end; do sleep 0.05; done
$OFC --socket "$SOCK" status >"$TMP/out" 2>&1
grep -q "^  ocs0 (switch sim): 0 entries recorded, not at target, reachable, in sync$" "$TMP/out" && ok ||
	bad "ofcd: an empty switch with nothing recorded is in sync" "$(cat "$TMP/out")"
grep -q "start check: 1 device: 1 reachable, 0 as recorded, 0 not, 1 with nothing recorded yet" "$TMP/d.log" && ok ||
	bad "the start check counts the switch as having nothing recorded" "$(grep 'start check' "$TMP/d.log")"
$OFC --socket "$SOCK" watch --json >"$TMP/watch" 2>/dev/null & # ends with the daemon
watch_pid=$!
sleep 0.2

# Bad items change nothing.
expect_error 2 "ofc: 'h0-h9': topology 'torus:8x8' has no such link" $OFC --socket "$SOCK" fail h0-h9
expect_error 2 "ofc --socket PATH fail: missing LINK, PORT or HOST" $OFC --socket "$SOCK" fail

# One failed link: re-planned, announced, served.
expect_stdout_has "h0-h1 failed; 1 failure in effect (h0-h1); bfb allgather on torus:8x8 without h0-h1: " \
	$OFC --socket "$SOCK" fail h0-h1
$OFC --socket "$SOCK" schedule --collective allgather --format json -o "$TMP/got.json" >/dev/null 2>"$TMP/err"
$OFC schedule "$TMP/less.yaml" --collective allgather --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" 0-1; then ok; else bad "degraded GetSchedule" "$(cat "$TMP/err")"; fi
# Asked for its structure: the healthy program and a patch, streamed as its
# expansion, the transfers `ofc schedule --reduced` streams for the config
# with the link in its failed_links (that program is node 0's healthy one:
# the check has teeth, the healthy schedule crosses 0-1).
$OFC --socket "$SOCK" schedule --collective allgather --reduced --format json -o "$TMP/got.json" >/dev/null 2>"$TMP/err"
$OFC schedule "$TMP/less.yaml" --collective allgather --reduced --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" 0-1 && grep -q "BFB kept as structure" "$TMP/err"; then ok; else bad "degraded GetSchedule --reduced: the patched expansion" "$(cat "$TMP/err")"; fi
expect_json 'j["failed"] == ["h0-h1"]' $OFC --socket "$SOCK" status --json

# The set survives a restart.
stop_ofcd
start_ofcd
expect_json 'j["topology"] == "torus:8x8 without h0-h1"' \
	$OFC --socket "$SOCK" schedule --collective allgather --summary --json

# Restore: the healthy schedule again.
expect_stdout_has "h0-h1 restored; no failure in effect; bfb allgather on torus:8x8: " \
	$OFC --socket "$SOCK" restore h0-h1
$OFC --socket "$SOCK" schedule --collective allgather --format json -o "$TMP/got.json" >/dev/null 2>"$TMP/err"
$OFC schedule "$TMP/fab.yaml" --collective allgather --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" ""; then ok; else bad "healthy GetSchedule after restore" "$(cat "$TMP/err")"; fi
expect_json '"failed" not in j or j["failed"] == []' $OFC --socket "$SOCK" status --json
if [ ! -e "$ST/simfab.failed" ]; then ok; else bad "simfab.failed left after the last restore"; fi

# The watcher (it ended with the first daemon) saw the re-planned schedule.
wait "$watch_pid" 2>/dev/null
if python3 - "$TMP/watch" <<'EOF'; then ok; else bad "watch: $(cat "$TMP/watch")"; fi
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = [e for e in ev if e['kind'] == 'KIND_SCHEDULE_REPLANNED']
sys.exit(0 if r and r[0]['failed'] == ['h0-h1'] and r[0]['schedule']['verified']
         and r[0]['schedule']['topology'] == 'torus:8x8 without h0-h1' else 1)
EOF
# A whole host fails: the collective runs among the other 63
# hosts; GetSchedule is what `ofc schedule` gives for the config with the
# host in topology.failed_hosts, lists it in failed_nodes, and no transfer
# names it. Three more hosts around h28 (h20, h29, h36; its fourth
# neighbour is h27) leave h28 cut off: accepted, but no schedule survives
# (exit 1, said why). Restored, healthy again.
sed 's|^topology: .*|topology: {spec: torus:8x8, failed_hosts: [h27]}|' "$TMP/fab.yaml" >"$TMP/less27.yaml"
expect_stdout_has "h27 failed; 1 failure in effect (h27); bfb allgather on torus:8x8 without h27: " \
	$OFC --socket "$SOCK" fail h27
$OFC --socket "$SOCK" schedule --collective allgather --format json -o "$TMP/got.json" >/dev/null 2>"$TMP/err"
$OFC schedule "$TMP/less27.yaml" --collective allgather --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" "" && python3 - "$TMP/got.json" <<'EOF'; then ok; else bad "GetSchedule without h27" "$(cat "$TMP/err")"; fi
import json, sys
j = json.load(open(sys.argv[1]))
j = j.get('schedule', j)
assert j['failed_nodes'] == [27] and j['nodes'] == 64, (j.get('failed_nodes'), j['nodes'])
for st in j['steps']:
    for t in st['transfers']:
        assert 27 not in (t['src'], t['dst'], t.get('origin', 0)), t
EOF
# Asked for its structure: the healthy program less h27's block and a
# patch (its neighbours whole), streamed as the expansion `ofc schedule
# --reduced` streams for the config with the host failed, on the whole
# graph's node numbers, h27 listed as failed and named by no transfer.
$OFC --socket "$SOCK" schedule --collective allgather --reduced --format json -o "$TMP/got.json" >/dev/null 2>"$TMP/err"
$OFC schedule "$TMP/less27.yaml" --collective allgather --reduced --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" "" && grep -q "BFB kept as structure" "$TMP/err" &&
	python3 - "$TMP/got.json" <<'EOF'; then ok; else bad "GetSchedule --reduced without h27: the patched expansion" "$(cat "$TMP/err")"; fi
import json, sys
j = json.load(open(sys.argv[1]))
j = j.get('schedule', j)
assert j['failed_nodes'] == [27] and j['nodes'] == 64, (j.get('failed_nodes'), j['nodes'])
for st in j['steps']:
    for t in st['transfers']:
        assert 27 not in (t['src'], t['dst'], t.get('origin', 0)), t
EOF
expect_json 'j["failed"] == ["h27"]' \
	$OFC --socket "$SOCK" status --json
expect_exit 1 $OFC --socket "$SOCK" fail h20 h29 h36
if grep -q "no schedule survives the failures (4 in effect): .*no longer strongly connected: some surviving hosts could never reach others" "$TMP/err" "$TMP/out"; then ok; else
	bad "cut-off host" "$(cat "$TMP/out" "$TMP/err")"
fi
expect_stdout_has "every reported failure cleared; no failure in effect; bfb allgather on torus:8x8: " \
	$OFC --socket "$SOCK" restore --all
expect_json 'j["topology"] == "torus:8x8" and not j.get("failed_nodes")' \
	$OFC --socket "$SOCK" schedule --collective allgather --summary --json
# Every port failed (a switch lost): status counts them and shows the first
# few, not 256 on one line; --json has them all; a few are listed as they are.
all=$(for h in $(seq 0 63); do printf 'h%s:0 h%s:1 h%s:2 h%s:3 ' $h $h $h $h; done)
$OFC --socket "$SOCK" fail $all >/dev/null 2>&1
expect_stdout_has "  failed     256 ports: h0:0 h0:1 h0:2 h0:3 h1:0 h1:1 ... and 250 more (schedules run without them)" \
	$OFC --socket "$SOCK" status
expect_json 'len(j["failed"]) == 256' $OFC --socket "$SOCK" status --json
$OFC --socket "$SOCK" restore --all >/dev/null 2>&1
$OFC --socket "$SOCK" fail h0-h1 h3:2 h9 >/dev/null 2>&1
expect_stdout_has "  failed     h0-h1 h3:2 h9 (schedules run without them)" $OFC --socket "$SOCK" status
$OFC --socket "$SOCK" fail h0-h8 h2:0 h2:1 h2:2 h2:3 h4:1 >/dev/null 2>&1
expect_stdout_has "  failed     9 (2 links, 6 ports, 1 host): " $OFC --socket "$SOCK" status
expect_stdout_has "every reported failure cleared; no failure in effect; bfb allgather on torus:8x8: " \
	$OFC --socket "$SOCK" restore --all
# Re-wiring around a lost port: hosts with a fifth, spare port
# on the same switch (torus:4x4 uses four). Sequential wiring puts host h's
# port p on switch port 1 + 5h + p: h5:0 is 26, its spare h5:4 is 30, h6:0
# 31, h4:0 21. Failing h5:0 moves its two circuits (26 -> 31 out, 21 -> 26
# in) onto the spare (30 -> 31, 21 -> 30) in one transaction of 4
# operations, re-plans on the whole graph (nothing lost any more) and keeps
# the move across a restart; a second lost port of h5 has no spare left and
# is a plain failure.
stop_ofcd
SOCK="$TMP/rw.sock"
ST="$TMP/rw-state"
mkdir -p "$ST"
cat >"$TMP/rw.yaml" <<'EOF'
name: rwfab
hosts: {count: 16, prefix: h, ports: 5}
switches:
  - {name: ocs0, type: ocs, ports: 80, driver: {type: sim}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:4x4
collectives:
  - {op: allgather, size: 1MiB}
EOF
$OFC apply "$TMP/rw.yaml" --state-dir "$ST" >/dev/null 2>&1 || bad "apply rw.yaml"
CFG="$TMP/rw.yaml"
$OFCD --foreground --config "$CFG" --socket "$SOCK" --state-dir "$ST" 2>>"$TMP/d.log" &
ofcd_pid=$!
_w=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 1000 ]; do
	sleep 0.01
	_w=$((_w + 1))
done
expect_stdout_has "h5:0 failed; h5:0 moved to spare port h5:4 on ocs0 (transaction " \
	$OFC --socket "$SOCK" fail h5:0
if grep -q ", 4 operations); 1 failure in effect (h5:0); bfb allgather on torus:4x4: 4 steps" "$TMP/out"; then ok; else
	bad "re-wired: $(cat "$TMP/out")"
fi
# circuits: the spare's, not the lost port's; the switch at its target
circuits_ok() {
	$OFC --socket "$SOCK" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["devices"][0]
c = {(x["in_port"], x["out_port"]) for x in d["circuits"]}
sys.exit(0 if {(30, 31), (21, 30)} <= c and not c & {(26, 31), (21, 26)} and len(c) == 64
         and d["at_target"] else 1)'
}
if circuits_ok; then ok; else bad "circuits after the move"; fi
expect_json 'j["moved"] == ["h5:0>h5:4"]' $OFC --socket "$SOCK" status --json
expect_stdout_has "  moved      h5:0>h5:4 (circuits re-wired onto spare ports; kept after a restore: ApplyConfig or a reload puts them back)" \
	$OFC --socket "$SOCK" status
if grep -qx "h5 0 4" "$ST/rwfab.rewired"; then ok; else bad "rwfab.rewired: $(cat "$ST/rwfab.rewired")"; fi
$OFC --socket "$SOCK" schedule --collective allgather --format json -o "$TMP/got.json" >/dev/null 2>"$TMP/err"
$OFC schedule "$TMP/rw.yaml" --collective allgather --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" ""; then ok; else bad "re-wired GetSchedule" "$(cat "$TMP/err")"; fi
expect_stdout_has "h5:1 failed; no spare port of h5 on ocs0 to move h5:1 to; 2 failures in effect (h5:0, h5:1); bfb allgather on torus:4x4 without h5:1: " \
	$OFC --socket "$SOCK" fail h5:1
# A restart keeps the move: the switch is still at the target.
stop_ofcd
$OFCD --foreground --config "$CFG" --socket "$SOCK" --state-dir "$ST" 2>>"$TMP/d.log" &
ofcd_pid=$!
_w=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 1000 ]; do
	sleep 0.01
	_w=$((_w + 1))
done
if circuits_ok; then ok; else bad "circuits after a restart"; fi
expect_json 'j["topology"] == "torus:4x4 without h5:1"' \
	$OFC --socket "$SOCK" schedule --collective allgather --summary --json
# Restored, the moved port stays dark: its circuits stay on the spare
# (docs/ofcd.md, "Failures").
expect_stdout_has "every reported failure cleared; no failure in effect; bfb allgather on torus:4x4: " \
	$OFC --socket "$SOCK" restore --all
expect_json 'j["moved"] == ["h5:0>h5:4"] and not j.get("failed")' \
	$OFC --socket "$SOCK" status --json
if circuits_ok; then ok; else bad "circuits after the restore"; fi
stop_ofcd

# An all-to-all workload: the snapshot that computes it on the
# applied config's healthy graph keeps its MCF solution; a failure re-plans
# the degraded MCF from it (the healthy graph is not solved again), with the
# theta `ofc schedule` gets for the config with the link failed (which
# solves the healthy graph first itself), the schedule verified on the
# degraded graph; a restore publishes the kept healthy schedule. ApplyConfig
# of another topology drops the kept solution with the config: the next
# failure starts from the new topology's, and its theta is the new
# degraded graph's.
SOCK="$TMP/a2a.sock"
ST="$TMP/a2a-state"
mkdir -p "$ST"
sed -e 's/op: allgather/op: alltoall/' "$TMP/fab.yaml" >"$TMP/a2a.yaml"
sed 's|^topology: .*|topology: {spec: torus:8x8, failed_links: [[h0, h1]]}|' "$TMP/a2a.yaml" >"$TMP/a2a-less.yaml"
sed 's|^topology: .*|topology: torus:4x16|' "$TMP/a2a.yaml" >"$TMP/a2a-416.yaml"
sed 's|^topology: .*|topology: {spec: torus:4x16, failed_links: [[h0, h1]]}|' "$TMP/a2a.yaml" >"$TMP/a2a-416-less.yaml"
$OFC apply "$TMP/a2a.yaml" --state-dir "$ST" >/dev/null 2>&1 || bad "apply a2a.yaml"
$OFCD --foreground --config "$TMP/a2a.yaml" --socket "$SOCK" --state-dir "$ST" 2>>"$TMP/d.log" &
ofcd_pid=$!
_w=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 3000 ]; do
	sleep 0.01
	_w=$((_w + 1))
done
# theta_as ANSWER CONFIG: the re-plan's theta (its message) is the one
# `ofc schedule CONFIG` gets, to 1e-6.
theta_as() {
	$OFC schedule "$2" --collective alltoall --lowering paths --json >"$TMP/a2a.json" 2>"$TMP/err" || return 1
	python3 - "$1" "$TMP/a2a.json" <<'EOF'
import json, re, sys
msg = open(sys.argv[1]).read()
got = float(re.search(r'degraded MCF [0-9.]+ s \(column generation [0-9.]+ s\), theta ([0-9.e-]+)', msg).group(1))
want = json.load(open(sys.argv[2]))['mcf']['theta']
sys.exit(0 if abs(got - want) <= 1e-6 * want else 'theta %.9g, ofc schedule %.9g' % (got, want))
EOF
}
expect_stdout_has "h0-h1 failed; 1 failure in effect (h0-h1); mcf alltoall on torus:8x8 without h0-h1: " \
	$OFC --socket "$SOCK" fail h0-h1
if grep -q ", verified, re-planned in [0-9.]* s; warm-started from the kept healthy MCF solution ([0-9.]* MiB); degraded MCF " "$TMP/out"; then ok; else
	bad "a2a re-plan not from the kept solution: $(cat "$TMP/out")"
fi
if theta_as "$TMP/out" "$TMP/a2a-less.yaml"; then ok; else bad "a2a theta" "$(cat "$TMP/err")"; fi
expect_json 'j["schedule"]["topology"] == "torus:8x8 without h0-h1" and j["schedule"]["verified"] and j["schedule"]["algorithm"] == "mcf"' \
	$OFC --socket "$SOCK" status --json
expect_stdout_has "h0-h1 restored; no failure in effect; mcf alltoall on torus:8x8: 8 steps, " \
	$OFC --socket "$SOCK" restore h0-h1
if grep -q "verified, the kept healthy schedule, re-planned in" "$TMP/out"; then ok; else bad "a2a restore: $(cat "$TMP/out")"; fi
$OFC --socket "$SOCK" apply "$TMP/a2a-416.yaml" >/dev/null 2>"$TMP/err" || bad "apply torus:4x16" "$(cat "$TMP/err")"
expect_stdout_has "h0-h1 failed; 1 failure in effect (h0-h1); mcf alltoall on torus:4x16 without h0-h1: " \
	$OFC --socket "$SOCK" fail h0-h1
if grep -q "warm-started from the kept healthy MCF solution" "$TMP/out"; then ok; else bad "torus:4x16 re-plan: $(cat "$TMP/out")"; fi
if theta_as "$TMP/out" "$TMP/a2a-416-less.yaml"; then ok; else bad "torus:4x16 theta" "$(cat "$TMP/err")"; fi
# Started with the failure in effect, nothing is kept; the restore's healthy
# run is kept, and the next failure starts from it.
stop_ofcd
$OFCD --foreground --config "$TMP/a2a.yaml" --socket "$SOCK" --state-dir "$ST" 2>>"$TMP/d.log" &
ofcd_pid=$!
_w=0
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ $_w -ge 3000 ]; do
	sleep 0.01
	_w=$((_w + 1))
done
expect_stdout_has "h0-h1 restored; no failure in effect; mcf alltoall on torus:4x16: " \
	$OFC --socket "$SOCK" restore h0-h1
expect_stdout_has "; warm-started from the kept healthy MCF solution (" \
	$OFC --socket "$SOCK" fail h0-h1
stop_ofcd

# The all-to-all's MCF does not hold up the start: on
# genkautz:200,4 (seconds of MCF) ofcd answers status while the workload's
# schedule is still being computed (State.schedule_computing_since_unix_ms,
# no schedule yet), a GetSchedule of the workload (lowering paths) is BUSY
# meanwhile, and a failure reported meanwhile waits for it, then re-plans
# from the kept solution. The schedule lands with a KIND_SCHEDULE_REPLANNED
# event; GetSchedule --lowering paths then answers from what ofcd keeps
# (summary and steps: what `ofc schedule --lowering paths` computes); an
# unknown lowering is refused. A stop while it computes does not wait.
SOCK="$TMP/big.sock"
ST="$TMP/big-state"
mkdir -p "$ST"
cat >"$TMP/big.yaml" <<'EOF'
name: bigfab
hosts: {count: 200, prefix: h, ports: 4}
switches:
  - {name: ocs0, type: ocs, ports: 800, driver: {type: sim}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: genkautz:200,4
collectives:
  - {op: alltoall, size: 1MiB}
EOF
$OFC apply "$TMP/big.yaml" --state-dir "$ST" >/dev/null 2>&1 || bad "apply big.yaml"
start_big() {
	$OFCD --foreground --config "$TMP/big.yaml" --socket "$SOCK" --state-dir "$ST" 2>"$TMP/big.log" &
	ofcd_pid=$!
	_w=0
	until $OFC --socket "$SOCK" status --json >"$TMP/big.status" 2>/dev/null || [ $_w -ge 1000 ]; do
		sleep 0.01
		_w=$((_w + 1))
	done
}
start_big
$OFC --socket "$SOCK" watch --json >"$TMP/big.watch" 2>/dev/null & # ends with the daemon
# The first answer: computing, no schedule.
if python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s.get("schedule_computing_since_unix_ms", 0) > 0 and "schedule" not in s else 1)' "$TMP/big.status"; then ok; else
	bad "status at start: not computing" "$(head -c 400 "$TMP/big.status")"
fi
expect_stdout_has "  schedule   computing, started " $OFC --socket "$SOCK" status
expect_exit 1 $OFC --socket "$SOCK" schedule --collective alltoall --lowering paths --summary
if grep -q "^ofc: the workload's alltoall schedule is being computed (started [0-9]* s ago)" "$TMP/err"; then ok; else
	bad "GetSchedule while computing: $(cat "$TMP/err")"
fi
expect_error 2 "ofc: unknown lowering 'bogus' (steps, paths, single)" \
	$OFC --socket "$SOCK" schedule --collective alltoall --lowering bogus --summary
expect_error 2 "ofc: lowering is the all-to-all MCF's: not for allgather" \
	$OFC --socket "$SOCK" schedule --collective allgather --lowering paths --summary
# A failure reported now waits in the queue for the schedule.
$OFC --socket "$SOCK" fail h0-h199 >"$TMP/big.fail" 2>&1 &
fail_pid=$!
queued() {
	$OFC --socket "$SOCK" status --json 2>/dev/null | python3 -c 'import json, sys
s = json.load(sys.stdin)
q = s.get("queue") or [{}]
sys.exit(0 if q[0].get("kind") == "report-failure" and s.get("schedule_computing_since_unix_ms") else 1)'
}
_w=0
until queued || [ $_w -ge 200 ]; do
	sleep 0.02
	_w=$((_w + 1))
done
if [ $_w -lt 200 ]; then ok; else bad "the failure did not wait for the schedule being computed"; fi
wait "$fail_pid"
if grep -q "^h0-h199 failed; 1 failure in effect (h0-h199); mcf alltoall on genkautz:200,4 without h0-h199: .*; warm-started from the kept healthy MCF solution" "$TMP/big.fail"; then ok; else
	bad "failure during the computation: $(cat "$TMP/big.fail")"
fi
expect_stdout_has "h0-h199 restored; no failure in effect; mcf alltoall on genkautz:200,4: " \
	$OFC --socket "$SOCK" restore h0-h199
if grep -q "verified, the kept healthy schedule, re-planned in" "$TMP/out"; then ok; else bad "restore: $(cat "$TMP/out")"; fi
# The kept schedule: the summary is the state's, the steps `ofc schedule`'s.
state_us=$($OFC --socket "$SOCK" status --json | python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["schedule"]["time_us"]))')
expect_json 'j["time_us"] == '"${state_us:-None}" \
	$OFC --socket "$SOCK" schedule --collective alltoall --lowering paths --summary --json
grep -q "(the workload's schedule as ofcd keeps it, not computed again)$" "$TMP/err" && ok ||
	bad "the kept schedule's summary should say so" "$(cat "$TMP/err")"
$OFC --socket "$SOCK" schedule --collective alltoall --lowering paths --json --format json -o "$TMP/got.json" >"$TMP/got.out" 2>"$TMP/err"
$OFC schedule "$TMP/big.yaml" --collective alltoall --lowering paths --format json -o "$TMP/want.json" >/dev/null 2>>"$TMP/err"
if same_as "$TMP/got.json" "$TMP/want.json" "" && grep -q "not computed again" "$TMP/err"; then ok; else
	bad "GetSchedule --lowering paths from the kept schedule" "$(cat "$TMP/err")"
fi
stop_ofcd
# The watcher saw the computed schedule land, then the failure's re-plan.
if python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = [e for e in ev if e["kind"] == "KIND_SCHEDULE_REPLANNED"]
sys.exit(0 if len(r) >= 2 and "computed in the background" in r[0]["message"]
         and r[0]["schedule"]["verified"] and not r[0].get("failed")
         and r[1]["failed"] == ["h0-h199"] else 1)' "$TMP/big.watch"; then ok; else
	bad "big watch: $(head -c 600 "$TMP/big.watch")"
fi
# A stop while the schedule is being computed does not wait for it.
start_big
kill -TERM "$ofcd_pid"
_w=0
while kill -0 "$ofcd_pid" 2>/dev/null && [ $_w -lt 100 ]; do
	sleep 0.02
	_w=$((_w + 1))
done
if ! kill -0 "$ofcd_pid" 2>/dev/null && grep -q "the workload's schedule, computing for [0-9]* s, is given up" "$TMP/big.log"; then ok; else
	bad "stop while computing" "$(cat "$TMP/big.log")"
fi
wait "$ofcd_pid" 2>/dev/null
# The workload's schedule is computed in a planner process: one killed
# mid-plan costs a second, a second killed costs the schedule, which the
# event says (and why); ofcd goes on.
start_big
$OFC --socket "$SOCK" watch --json >"$TMP/kill.watch" 2>/dev/null & # ends with the daemon
kills=0 last= _w=0
while [ $kills -lt 2 ] && [ $_w -lt 3000 ]; do
	p=$(pgrep -P "$ofcd_pid" -f "ofc-planner .*--for workload" | head -1)
	if [ -n "$p" ] && [ "$p" != "$last" ]; then
		kill -9 "$p"
		last=$p kills=$((kills + 1))
	fi
	sleep 0.02
	_w=$((_w + 1))
done
_w=0
until grep -q "no schedule: the planner process computing it was killed by SIGKILL" "$TMP/kill.watch" || [ $_w -ge 1500 ]; do
	sleep 0.02
	_w=$((_w + 1))
done
if [ $kills -eq 2 ] && grep -q '"kind": *"KIND_SCHEDULE_REPLANNED".*the workload.s schedule, computed in the background; no failure in effect; no schedule: the planner process computing it was killed by SIGKILL (by ofcd past the request.s time limit, or from outside) (the one before it was killed by SIGKILL' "$TMP/kill.watch"; then ok; else
	bad "planners killed mid-plan ($kills)" "$(head -c 800 "$TMP/kill.watch")"
fi
if kill -0 "$ofcd_pid" 2>/dev/null; then ok; else bad "ofcd ended with its planner"; fi
expect_exit 0 $OFC --socket "$SOCK" status
stop_ofcd
finish
