#!/bin/sh
# ofc plan FILE --workload W: a job's phases priced on candidate
# topologies through the schedule pipeline, the ways to run an iteration
# and the choice; a one-phase workload is what `ofc schedule` gives; the
# arithmetic of every way checked independently; workload errors at
# FILE:LINE:COL; --plot; a WDM ring.
SUITE=workload
. "$(dirname "$0")/lib.sh"

ST="$TMP/state"
mkdir -p "$ST"
# 16 hosts of 4 ports on one OCS, torus:4x4; tp 4 (rows), dp 4 (columns),
# ep = dp.
cat >"$TMP/w16.yaml" <<'YAML'
version: 1
name: w16
hosts: {count: 16, prefix: h, ports: 4, port_rate: 100Gbps}
switches:
  - {name: ocs0, type: ocs, ports: 64, reconfig_time: 10ms}
wiring: {pattern: sequential, switches: [ocs0]}
topology: torus:4x4
cost_model: {alpha: 10us, link_bandwidth: 100Gbps}
workload:
  name: small
  iterations: 10
  parallelism: {tp: 4, dp: 4, ep: 4}
  phases:
    - {name: ag, collective: allgather, group: tp, size: 16MiB}
    - {name: a2a, collective: alltoall, group: ep, size: 16MiB, demand: skew4.txt}
    - {name: ar, collective: allreduce, group: dp, size: 256MiB}
    - {name: pp, collective: sendrecv, group: dp, size: 8MiB}
    - {name: tm, traffic: tm16.txt}
YAML
printf '0 4 2 1\n1 0 4 2\n2 1 0 4\n4 2 1 0\n' >"$TMP/skew4.txt"
python3 -c "
n = 16
for s in range(n): print(' '.join('0' if s == t else str(1048576 * (1 + (s * 7 + t) % 5)) for t in range(n)))" >"$TMP/tm16.txt"
P="$OFC plan --state-dir $ST"

# check_ways: each way's iteration is its phases (count x one run on its
# topology, as priced) plus the switching exposed before each; the job is
# the first switching plus iterations x that; the choice is no slower than
# any other way; static has one topology, per-phase each phase's fastest.
cat >"$TMP/ways.py" <<'PY'
def by_kind(j):
    return {w["kind"]: w for w in j["ways"]}

def check(j):
    n = j["iterations"]
    ph = j["phases"]
    best = None
    ways = by_kind(j)
    for name, w in ways.items():
        if not w["have"]:
            continue
        it = 0
        for i, p in enumerate(w["phases"]):
            c = ph[i]["on"][p["candidate"]]
            assert p["topology"] == j["candidates"][p["candidate"]]["name"], (name, p)
            assert c["ok"] and c["verified"], (name, p, c)
            assert abs(p["time_us"] - ph[i]["count"] * c["time_us"]) < 1e-6 * p["time_us"], (name, p)
            assert p["switch_us"] <= p["switch_full_us"] + 1e-9, p
            it += p["time_us"] + p["switch_us"]
        assert abs(it - w["iteration_us"]) < 1e-6 * it, (name, it, w)
        assert abs(w["job_us"] - (w["first_switch_us"] + n * w["iteration_us"])) < 1e-6 * w["job_us"]
    c = ways["chosen"]
    for name, w in ways.items():
        if w["have"]:
            assert c["job_us"] <= w["job_us"] * (1 + 1e-9), (name, w["job_us"], c["job_us"])
    s = ways["static"]
    assert len({p["candidate"] for p in s["phases"]}) == 1 and not any(p["switch_us"] for p in s["phases"])
    pp = ways["per-phase"]
    for i, p in enumerate(pp["phases"]):
        fastest = min(c["time_us"] for c in ph[i]["on"] if c["ok"])
        assert abs(ph[i]["on"][p["candidate"]]["time_us"] - fastest) < 1e-9 * fastest, (i, p)
    return True
PY
PYTHONPATH="$TMP"
export PYTHONPATH
expect_json '__import__("ways").check(j) and j["workload"]=="small" and j["hosts"]==16 and len(j["phases"])==5' \
	$P "$TMP/w16.yaml" --workload config --json
# The candidates: the config's, the finder's, unions of the groups' own
# topologies and topologies built for the traffic; a phase in groups is
# priced on each group's own links or with the groups together, whichever
# is faster, every schedule verified.
expect_json '{c["origin"] for c in j["candidates"]}=={"config","finder","groups","traffic"} and j["candidates"][0]["name"]=="torus:4x4" and any("own links" in c.get("how","") for p in j["phases"] for c in p["on"]) and any("together" in c.get("how","") for p in j["phases"] for c in p["on"])' \
	$P "$TMP/w16.yaml" --workload config --json
# On torus:4x4 the tp groups are its rows: each a bidirectional ring of 4,
# BFB in each (its own links): 16 MiB all-gather, 4 x 4 MiB blocks over 2
# links of 100 Gb/s, 2 steps: 2 x 10 us + (3/4 x 16 MiB)/(2 x 12.5 GB/s).
expect_json 'abs(j["phases"][0]["on"][0]["time_us"] - (20 + 0.75*16*1048576*8/200e9*1e6)) < 1e-6 and "own links" in j["phases"][0]["on"][0]["how"]' \
	$P "$TMP/w16.yaml" --workload config --json
expect_stdout_has "chose " $P "$TMP/w16.yaml" --workload config
# The traffic-built topologies' assignments stop at --time-limit (as each
# MCF does): past it a candidate is left out, and the plan says which.
expect_json '"for tm" + "\x27s traffic: not built, its assignments passed 1 us (240 pairs trade)" in j["notes"] and not any(c["origin"]=="traffic" for c in j["candidates"])' \
	$P "$TMP/w16.yaml" --workload config --json --time-limit 1us
# --switch-overhead T,C: every switching pays T + C a changed circuit on
# top of the switches' own time, never hidden (per-phase's topologies are
# each phase's fastest, the same with it or without).
$P "$TMP/w16.yaml" --workload config --json >"$TMP/bare.json" 2>/dev/null
expect_json '(lambda b, W: j["switch_overhead"]=={"transaction_s": 0.005, "change_s": 0.001} and __import__("ways").check(j) and [p["candidate"] for p in W(j)["per-phase"]["phases"]]==[p["candidate"] for p in W(b)["per-phase"]["phases"]] and all(abs(p["switch_full_us"] - q["switch_full_us"] - (5000 + 1000*p["moves"] if p["moves"] else 0)) < 1e-6 and abs(p["switch_us"] - q["switch_us"] - (5000 + 1000*p["moves"] if p["moves"] else 0)) < 1e-6 for p, q in zip(W(j)["per-phase"]["phases"], W(b)["per-phase"]["phases"])) and any(p["moves"] for p in W(j)["per-phase"]["phases"]))(json.load(open(sys.argv[1][:-3] + "bare.json")), __import__("ways").by_kind)' \
	$P "$TMP/w16.yaml" --workload config --json --switch-overhead 5ms,1ms
expect_error 2 "ofc plan: bad --switch-overhead '5ms,x': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" \
	$P "$TMP/w16.yaml" --workload config --switch-overhead 5ms,x
# The cost model's switch_overhead gives the same figures from the config;
# --switch-overhead overrides it (0,0: the switches' time alone again).
sed 's/^cost_model: {alpha: 10us, link_bandwidth: 100Gbps}$/cost_model: {alpha: 10us, link_bandwidth: 100Gbps, switch_overhead: {transaction: 5ms, circuit: 1ms}}/' \
	"$TMP/w16.yaml" >"$TMP/w16o.yaml"
$P "$TMP/w16.yaml" --workload config --json --switch-overhead 5ms,1ms >"$TMP/flag.json" 2>/dev/null
same_ways='all(w["have"] == v["have"] and (not w["have"] or w["iteration_us"] == v["iteration_us"]) for w, v in zip(j["ways"], f["ways"]))'
expect_json "j['switch_overhead'] == {'transaction_s': 0.005, 'change_s': 0.001} and (lambda f: $same_ways)(json.load(open(sys.argv[1][:-3] + 'flag.json')))" \
	$P "$TMP/w16o.yaml" --workload config --json
expect_json "j['switch_overhead'] == {'transaction_s': 0, 'change_s': 0} and (lambda f: $same_ways)(json.load(open(sys.argv[1][:-3] + 'bare.json')))" \
	$P "$TMP/w16o.yaml" --workload config --json --switch-overhead 0,0
expect_json 'j["cost_model"]["switch_transaction_s"] == 0.005 and j["cost_model"]["switch_circuit_s"] == 0.001' \
	$OFC show "$TMP/w16o.yaml" --json
sed 's/circuit: 1ms}/circuit: 90000s}/' "$TMP/w16o.yaml" >"$TMP/w16x.yaml"
expect_error 2 "$TMP/w16x.yaml:8:97: 'circuit' is out of range: '90000s' (allowed 0 s to 86400 s)" $OFC validate "$TMP/w16x.yaml"

# A one-phase workload over every host is exactly what ofc schedule gives.
for c in "allreduce 1GiB" "alltoall 64MiB" "allgather 4MiB"; do
	set -- $c
	printf 'name: one\nphases:\n  - {name: x, collective: %s, size: %s}\n' "$1" "$2" >"$TMP/one.yaml"
	US=$($OFC schedule "$TMP/w16.yaml" --collective "$1" --size "$2" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["verified"]; print(j["time_us"])')
	expect_json "j['phases'][0]['on'][0]['time_us']==$US and j['candidates'][0]['origin']=='config'" \
		$P "$TMP/w16.yaml" --workload "$TMP/one.yaml" --json
done

# --plot: an SVG, and the sweep's points in the JSON (each way's job over
# its iterations): the chosen way never slower than the others at any
# switching time or size.
expect_json 'all(pt["iteration_us"]["chosen"] <= min(v for k, v in pt["iteration_us"].items() if k != "chosen" and v is not None)*(1+1e-9) and pt["best"] in pt["iteration_us"] for s in j["sweep"].values() for pt in s)' \
	$P "$TMP/w16.yaml" --workload config --plot "$TMP/w16.svg" --json
python3 -c "import xml.dom.minidom as m, sys; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == 'svg' and len(d.getElementsByTagName('polyline')) >= 3" "$TMP/w16.svg" &&
	ok || bad "--plot should write an SVG with the ways' lines"

# A patch panel at 30 s a move: switching never pays within 10 iterations;
# the static topology is chosen.
sed 's/type: ocs, ports: 64, reconfig_time: 10ms/type: patch-panel, ports: 64, move_time: 30s/' "$TMP/w16.yaml" >"$TMP/w16p.yaml"
expect_json 'j["chosen"]=="static" and __import__("ways").check(j)' $P "$TMP/w16p.yaml" --workload config --json

# A WDM ring: its collectives retune per stage, one candidate, the ways one.
printf 'name: dp\niterations: 3\nphases:\n  - {name: grads, collective: allreduce, size: 4MiB}\n' >"$TMP/dp.yaml"
US=$($OFC schedule configs/ring16-optree.yaml --collective allreduce --size 4MiB --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_us"])')
expect_json "(lambda w: len(j['candidates'])==1 and abs(w['chosen']['iteration_us']-$US)<1e-6*$US and w['static']['iteration_us']==w['per-phase']['iteration_us'])(__import__('ways').by_kind(j))" \
	$P configs/ring16-optree.yaml --workload "$TMP/dp.yaml" --json
printf 'name: g\nparallelism: {tp: 4, dp: 4}\nphases:\n  - {name: ag, collective: allgather, group: tp, size: 1MiB}\n' >"$TMP/ringg.yaml"
expect_error 2 "ofc: ring16-optree is a WDM ring: phase ag does not fit it (a ring runs collectives over every host, uniform all-to-alls among them)" \
	$P configs/ring16-optree.yaml --workload "$TMP/ringg.yaml"

# docs/workload.md's example as it shows it (the OCS's device is not
# reached: the circuits in place are not weighed, and said so).
expect_exit 0 $OFC plan configs/torus64-ocs.yaml --workload examples/workloads/moe-layer.yaml --state-dir "$ST" --device ocs0=127.0.0.1:9
grep -q "^workload moe-layer on torus64-ocs: 64 hosts of 4 ports, 3 phases, 1000 iterations; ocs0 (OCS, 10 ms a reconfiguration)$" "$TMP/out" &&
	grep -q "^static     31.94 ms an iteration (the first: 10 ms of switching before it)$" "$TMP/out" &&
	grep -q "^  moe-a2a      x4   tp ring:8 + ep hypercube:3                 9.819 ms  \[mcf in each ep group, own links\]$" "$TMP/out" &&
	grep -q "^chose the static topology: 31.94 ms an iteration, 31.95 s the job (attn-ag, moe-a2a, grads on tp ring:8 + ep hypercube:3); per-phase 39.18 ms an iteration, 39.19 s the job (1.23x)$" "$TMP/out" &&
	grep -q "the circuits in place are not weighed" "$TMP/err" && ok ||
	bad "docs/workload.md's plan example" "$(cat "$TMP/out" "$TMP/err")"

# A job's plan is pricing: on a fresh machine (no state directory) it
# plans, and it contacts no device unless --in-place asks it to (the OCS's
# address is a listener here that counts who connects).
cat >"$TMP/listen.py" <<'PY'
import socket, subprocess, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
s.settimeout(0.2)
port = s.getsockname()[1]
p = subprocess.Popen(sys.argv[2:] + ["--device", "ocs0=127.0.0.1:%d" % port],
                     stdout=open(sys.argv[1] + ".out", "w"), stderr=open(sys.argv[1] + ".err", "w"))
n = 0
while True:
    done = p.poll() is not None
    try:
        c, _ = s.accept()
        c.close()  # a device that hangs up: the read fails at once
        n += 1
        continue
    except socket.timeout:
        if done:
            break
rc = p.wait(timeout=300)
print(rc, n)
PY
sed 's/{name: ocs0, type: ocs, ports: 64, reconfig_time: 10ms}/{name: ocs0, type: ocs, ports: 64, reconfig_time: 10ms, driver: {type: tl1, address: "127.0.0.1:1", credentials: ocs0.cred}}/' \
	"$TMP/w16.yaml" >"$TMP/w16l.yaml"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
r=$(python3 "$TMP/listen.py" "$TMP/fresh" $OFC plan "$TMP/w16l.yaml" --workload config --state-dir "$TMP/no/such/dir")
[ "$r" = "0 0" ] && grep -q "^chose " "$TMP/fresh.out" &&
	grep -qx "ofc plan: note: no device was read (--in-place reads them); the circuits in place are not weighed" "$TMP/fresh.err" &&
	[ ! -e "$TMP/no" ] && ok ||
	bad "plan --workload on a fresh machine: exit 0, no device contacted, no directory made" "$r" "$(cat "$TMP/fresh.err")"
# --in-place reads the devices (the listener is connected to) and needs the
# state directory, as a plan of the config does.
r=$(python3 "$TMP/listen.py" "$TMP/inplace" $OFC plan "$TMP/w16l.yaml" --workload config --in-place --state-dir "$ST")
case $r in "0 "[1-9]*) ok ;; *) bad "plan --workload --in-place should read the device" "$r" "$(cat "$TMP/inplace.err")" ;; esac
! grep -q "no device was read" "$TMP/inplace.err" && grep -q "the circuits in place are not weighed" "$TMP/inplace.err" && ok ||
	bad "plan --in-place: the device's failure, not 'no device was read'" "$(cat "$TMP/inplace.err")"
expect_error 2 "ofc plan: state directory '$TMP/no/such/dir' does not exist (ofc apply creates it)" \
	$OFC plan "$TMP/w16l.yaml" --workload config --in-place --state-dir "$TMP/no/such/dir"
expect_error 2 "ofc plan: --in-place goes with --workload" $P "$TMP/w16.yaml" --in-place

# Errors at FILE:LINE:COL.
bad_workload() { # LINE-WANTED SED-EXPRESSION
	sed "$2" "$TMP/w16.yaml" >"$TMP/bad.yaml"
	expect_error 2 "$1" $OFC validate "$TMP/bad.yaml"
}
bad_workload "$TMP/bad.yaml:12:35: ep 3 does not divide dp 4: expert groups are cut from the data-parallel ones" 's/ep: 4}/ep: 3}/'
bad_workload "$TMP/bad.yaml:12:16: tp x dp x pp = 4 x 2 x 1 = 8, and w16 has 16 hosts" 's/dp: 4/dp: 2/'
bad_workload "$TMP/bad.yaml:16:48: phase ar: no kind of groups named 'xp' (tp, dp, ep, all)" 's/group: dp, size: 256MiB/group: xp, size: 256MiB/'
bad_workload "$TMP/bad.yaml:15:74: phase a2a: a demand matrix is for alltoall (skewed volumes)" 's/alltoall, group: ep/allgather, group: ep/'
bad_workload "$TMP/bad.yaml:18:39: phase tm: a traffic matrix says who sends what to whom; no collective, group, size, demand or reverse with it" 's/{name: tm, traffic/{name: tm, size: 1MiB, traffic/'
bad_workload "$TMP/bad.yaml:14:30: 'collective' must be one of allgather, reduce-scatter, allreduce, alltoall, sendrecv; got 'gather'" 's/collective: allgather/collective: gather/'
bad_workload "$TMP/bad.yaml:16:14: two phases named 'ag'" 's/name: ar,/name: ag,/'
bad_workload "$TMP/bad.yaml:14:30: phase ag: allgather needs a size" 's/group: tp, size: 16MiB//'
printf '0 1 2\n1 0 3\n' >"$TMP/skew3.txt"
bad_workload "$TMP/skew3.txt:3:1: 2 rows of 3: the matrix is N x N, N being the numbers on its first row" 's/skew4.txt/skew3.txt/'
printf '0 1 2\n1 0 3\n2 2 0\n' >"$TMP/skew3.txt"
bad_workload "$TMP/bad.yaml:15:73: skew3.txt is 3 x 3; phase a2a needs 4 x 4 (its groups' members)" 's/skew4.txt/skew3.txt/'
bad_workload "$TMP/bad.yaml:15:73: phase a2a: $TMP/nothere.txt: cannot open: No such file or directory" 's/skew4.txt/nothere.txt/'
# Groups written out: hosts by name, disjoint, one size.
cat >"$TMP/g.yaml" <<'YAML'
name: g
groups:
  - name: pairs
    members: [[h0, h1], [h2, h3], [h4, h1]]
phases:
  - {name: x, collective: allreduce, group: pairs, size: 1MiB}
YAML
expect_error 2 "$TMP/g.yaml:4:40: host h1 is in two groups of 'pairs' (or twice in one)" \
	$P "$TMP/w16.yaml" --workload "$TMP/g.yaml"
sed 's/\[h4, h1\]/[h4, h5, h6]/' "$TMP/g.yaml" >"$TMP/g2.yaml"
expect_error 2 "$TMP/g2.yaml:4:36: group 3 of 'pairs' has 3 hosts, its first 2: the groups of a kind are of one size" \
	$P "$TMP/w16.yaml" --workload "$TMP/g2.yaml"
sed 's/\[h4, h1\]/[h4, h99]/' "$TMP/g.yaml" >"$TMP/g3.yaml"
expect_error 2 "$TMP/g3.yaml:4:40: no host named 'h99' in $TMP/w16.yaml" \
	$P "$TMP/w16.yaml" --workload "$TMP/g3.yaml"
sed 's/\[h4, h1\]/[h4, h5]/' "$TMP/g.yaml" >"$TMP/g4.yaml"
expect_json 'j["phases"][0]["groups"]==3 and j["phases"][0]["group_size"]==2 and __import__("ways").check(j)' \
	$P "$TMP/w16.yaml" --workload "$TMP/g4.yaml" --json
printf 'name: e\nphases:\n  - {name: x, colective: allreduce}\n' >"$TMP/e.yaml"
expect_error 2 "$TMP/e.yaml:3:15: unknown key 'colective' in phases (did you mean 'collective'?)" \
	$P "$TMP/w16.yaml" --workload "$TMP/e.yaml"
# A topology that splits the hosts is a workload's when every group of one
# of its kinds is connected within it (a phase's groups on their own links).
sed 's/^topology: torus:4x4/topology: "product(complete:4,empty:4)"/' "$TMP/w16.yaml" >"$TMP/split.yaml"
expect_exit 0 $OFC validate "$TMP/split.yaml"
sed 's/^topology: torus:4x4/topology: "product(complete:2,empty:8)"/' "$TMP/w16.yaml" >"$TMP/split2.yaml"
expect_error 2 "$TMP/split2.yaml:7:11: topology 'product(complete:2,empty:8)' is not strongly connected: some hosts could never reach others, and no kind of the workload's groups has every group connected in it" \
	$OFC validate "$TMP/split2.yaml"
sed '/^workload:/,$d' "$TMP/split.yaml" >"$TMP/split3.yaml"
expect_error 2 "$TMP/split3.yaml:7:11: topology 'product(complete:4,empty:4)' is not strongly connected: some hosts could never reach others" \
	$OFC validate "$TMP/split3.yaml"
# ofcd: GetPlan plans the running config's workload as ofc plan
# does; MoveToPhase takes the fabric to the chosen way's topology of a phase,
# answered once committed (the emulated OCS then holds its circuits). The
# OCS switches in 1 us here, so the choice is a topology per phase: ag's
# groups on links of their own (product(complete:4,empty:4), which splits
# the hosts), the all-to-all's built for the traffic (a ports: spec), ar's
# a union of the groups' families. After a kill -9 ofcd serves the
# recorded topology again, links and all; a record whose topology does not
# parse stops it, the file untouched.
. "$(dirname "$0")/emu.sh"
OFCD=${OFCD:-$BUILD/ofcd}
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
# A switching costs 1 us more (the cost model's switch_overhead), which
# GetPlan prices as ofc plan does.
sed -e 's/{name: ocs0, type: ocs, ports: 64, reconfig_time: 10ms}/{name: ocs0, type: ocs, ports: 64, reconfig_time: 1us, driver: {type: tl1, address: "127.0.0.1:1", credentials: ocs0.cred}}/' \
	-e 's/^cost_model: {alpha: 10us, link_bandwidth: 100Gbps}$/cost_model: {alpha: 10us, link_bandwidth: 100Gbps, switch_overhead: {transaction: 1us}}/' \
	"$TMP/w16.yaml" >"$TMP/w16d.yaml"
start_emu ocs-emu e --ports 64 --credentials configs/credentials/ocs0.cred
ofcd_up() {
	rm -f "$TMP/ofcd.sock"
	"$OFCD" --foreground --credentials-dir "$TMP" --config "$TMP/w16d.yaml" --socket "$TMP/ofcd.sock" \
		--state-dir "$TMP/dstate" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 2>>"$TMP/ofcd.log" &
	ofcd_pid=$!
	deadline 20
	while [ ! -S "$TMP/ofcd.sock" ] && kill -0 $ofcd_pid 2>/dev/null && ! past $_end; do
		sleep 0.01
	done
}
ofcd_kill9() {
	kill -9 "$ofcd_pid" 2>/dev/null
	wait "$ofcd_pid" 2>/dev/null
}
ofcd_up
$P "$TMP/w16d.yaml" --workload config --json >"$TMP/plan.json" 2>/dev/null
# wl.py MODE SOCKET ...: plan (GetPlan as the CLI's), move PHASE KIND
# SAVED (MoveToPhase; the state saved), same SAVED (the state as saved).
cat >"$TMP/wl.py" <<'PY'
import json, sys
from ofc_client import Client, OfcError
mode, sock = sys.argv[1], sys.argv[2]
c = Client(sock, timeout=120)

def state():
    s = c.get_state(with_fabric=True, with_edges=True)
    return {"topology": s.topology.spec, "target": s.target_topology, "at_target": s.at_target,
            "generation": s.config_generation,
            "devices": [sorted([x.in_port, x.out_port] for x in d.circuits) for d in s.devices],
            "circuits": sorted([x.in_port, x.out_port] for x in s.fabric.circuits),
            "links": [[e.src, e.dst] for e in s.fabric.logical.edge_list],
            "ports": [list(l.to) for l in s.fabric.logical.ports]}

if mode == "plan":
    cli = json.load(open(sys.argv[3]))
    p = c.get_plan()
    ways = {w.kind: w for w in p.ways}
    assert cli["switch_overhead"]["transaction_s"] == 1e-6, cli["switch_overhead"]
    assert p.workload == "small" and p.chosen == cli["chosen"], (p.chosen, cli["chosen"])
    for w in cli["ways"]:
        k = w["kind"]
        assert ways[k].have == w["have"], k
        if w["have"]:
            assert abs(ways[k].iteration_us - w["iteration_us"]) < 1e-6 * w["iteration_us"], (k, ways[k])
            assert [ph.topology for ph in ways[k].phases] == [ph["topology"] for ph in w["phases"]]
            assert [ph.spec for ph in ways[k].phases] == [ph["spec"] for ph in w["phases"]]
            assert [ph.candidate for ph in ways[k].phases] == [ph["candidate"] for ph in w["phases"]]
    assert [t.name for t in p.candidates] == [t["name"] for t in cli["candidates"]]
    c.move_to_phase(phase=0, dry_run=True)
    try:
        c.move_to_phase(name="nothere")
        raise SystemExit("an unknown phase was accepted")
    except OfcError as e:
        assert e.status == "STATUS_INVALID" and "no phase named 'nothere'" in str(e), str(e)
elif mode == "move":
    # a phase of the chosen way; "static": the static way's topology by
    # Reconfigure (a union of two kinds' families)
    name, kind, saved = sys.argv[3:6]
    ways = {w.kind: w for w in c.get_plan().ways}
    if name == "static":
        want = ways["static"].phases[0].spec
        r = c.reconfigure(topology=want)
    else:
        want = [ph.spec for ph in ways["chosen"].phases if ph.name == name][0]
        r = c.move_to_phase(name=name)
    assert want.startswith(kind), (name, want)
    assert r.message.startswith("committed transaction"), r.message
    s = state()
    assert s["topology"] == want and s["target"] == want and s["at_target"], (s, want)
    assert s["devices"][0] and s["devices"][0] == s["circuits"] and s["links"], s
    json.dump(s, open(saved, "w"))
else:
    saved = json.load(open(sys.argv[3]))
    s = json.loads(json.dumps(state()))
    assert s == saved, (s, saved)
print("ok")
PY
PYTHONPATH="$BUILD/python" $PY "$TMP/wl.py" plan "$TMP/ofcd.sock" "$TMP/plan.json" >"$TMP/py.out" 2>&1 && ok ||
	bad "ofcd GetPlan is ofc plan's" "$(tail -5 "$TMP/py.out")" "$(tail -5 "$TMP/ofcd.log")"
for step in "ag product( split" "a2a ports: traffic" "static union( union"; do
	set -- $step
	PYTHONPATH="$BUILD/python" $PY "$TMP/wl.py" move "$TMP/ofcd.sock" "$1" "$2" "$TMP/$3.json" >"$TMP/py.out" 2>&1 && ok ||
		bad "MoveToPhase $1 (Reconfigure to static's) commits its $3 topology" "$(tail -5 "$TMP/py.out")" "$(tail -5 "$TMP/ofcd.log")"
	ofcd_kill9
	ofcd_up
	PYTHONPATH="$BUILD/python" $PY "$TMP/wl.py" same "$TMP/ofcd.sock" "$TMP/$3.json" >"$TMP/py.out" 2>&1 && ok ||
		bad "after kill -9, ofcd serves phase $1's $3 topology again" "$(tail -5 "$TMP/py.out")" "$(tail -8 "$TMP/ofcd.log")"
done
grep -q "serving the recorded topology ports:16:" "$TMP/ofcd.log" && ok || bad "the restart says it serves the record's" "$(tail -3 "$TMP/ofcd.log")"
# MoveToPhase in stages (max_loss_percent, as Reconfigure's): from torus:4x4
# to a2a's topology, each stage within the budget, ending at the phase's
# topology; a budget out of range, or a grace alone, refused
PYTHONPATH="$BUILD/python" $PY - "$TMP/ofcd.sock" >"$TMP/py.out" 2>&1 <<'PY' && ok ||
import re, sys
from ofc_client import Client, OfcError, control_pb2
c = Client(sys.argv[1], timeout=120)
c.reconfigure(topology="torus:4x4")
want = [ph.spec for ph in {w.kind: w for w in c.get_plan().ways}["chosen"].phases if ph.name == "a2a"][0]
r = c.move_to_phase(name="a2a", max_loss_percent=50, dry_run=True)
assert re.search(r"would reconfigure in \d+ stages? to phase a2a's topology, .* within a loss of 50%", r.message), r.message
assert c.get_state().topology.spec.startswith("torus:4x4")
r = c.move_to_phase(name="a2a", max_loss_percent=50, grace_ms=0)
assert r.message.startswith("reconfigured to phase a2a's topology, ") and " in stages, " in r.message, r.message
losses = [float(x) for x in re.findall(r"stage \d+: \d+ circuits?, \d+ host ports? out of use, loss ([0-9.]+)%", r.message)]
assert losses and max(losses) <= 50, r.message
s = c.get_state()
assert s.topology.spec == want and s.at_target, (s.topology.spec, s.at_target)
for m, why in (({"max_loss_percent": 100}, "max_loss_percent must be above 0 and below 100, not 100"),
               ({"grace_ms": 10}, "grace_ms goes with max_loss_percent")):
    req = control_pb2.Request()
    req.move_to_phase.name = "ag"
    for k, v in m.items():
        setattr(req.move_to_phase, k, v)
    try:
        c.call(req)
        sys.exit("ofcd took MoveToPhase %r" % m)
    except OfcError as e:
        assert e.response.status == control_pb2.STATUS_INVALID and why in str(e), str(e)
assert c.get_state().topology.spec == want
print("ok")
PY
	bad "MoveToPhase in stages" "$(tail -8 "$TMP/py.out")" "$(tail -5 "$TMP/ofcd.log")"
ofcd_kill9
# The record's topology damaged (a ports: row with a node twice): ofcd
# stops with the file, the column and the mv, and leaves the file as it was.
PYTHONPATH="$BUILD/python" $PY - "$TMP/dstate/w16.state" <<'PY' && ok || bad "damaging the record"
import sys
from ofc_client.pb import state_pb2
r = state_pb2.FabricRecord()
r.ParseFromString(open(sys.argv[1], "rb").read())
r.topology = "ports:16:ABCDEFGHIJKLMNOP.ABCDEFGHIJKLMNOA"
open(sys.argv[1], "wb").write(r.SerializeToString())
PY
cp "$TMP/dstate/w16.state" "$TMP/damaged.state"
timeout 60 "$OFCD" --foreground --credentials-dir "$TMP" --config "$TMP/w16d.yaml" --socket "$TMP/ofcd2.sock" \
	--state-dir "$TMP/dstate" --device "ocs0=127.0.0.1:$e_port" --probe-interval 0 >"$TMP/out" 2>"$TMP/err"
rc=$?
want="$TMP/dstate/w16.state: corrupt file: its topology ('ports:16:ABCDEFGHIJKLMNOP.ABCDEFGHIJKLMN...', 42 characters) does not parse: at column 42: port 1: node 0 is reached twice (a port's row is a permutation of the nodes). ofcd cannot tell what the devices hold: look at it, then set it aside (ofcd then serves the config's topology): mv '$TMP/dstate/w16.state' '$TMP/dstate/w16.state.corrupt'"
if [ $rc -ne 0 ] && grep -qF "$want" "$TMP/err" && cmp -s "$TMP/dstate/w16.state" "$TMP/damaged.state" && [ ! -S "$TMP/ofcd2.sock" ]; then ok; else
	bad "a damaged recorded topology stops ofcd (exit $rc), the record untouched" "$(cat "$TMP/err")"
fi

# Usage.
expect_error 2 "ofc plan: --plot goes with --workload" $P "$TMP/w16.yaml" --plot "$TMP/x.svg"
expect_error 2 "ofc plan: --workload plans a job: not with --horizon, --relabel, --partition or --max-moves" \
	$P "$TMP/w16.yaml" --workload config --horizon 10
sed '/^workload:/,$d' "$TMP/w16.yaml" >"$TMP/nowl.yaml"
expect_error 2 "ofc plan: $TMP/nowl.yaml has no workload section" $P "$TMP/nowl.yaml" --workload config
finish
