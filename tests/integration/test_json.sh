#!/bin/sh
# One JSON shape per command, answered here or by ofcd (see
# docs/json.md): status, schedule, plan and apply run locally and through
# an ofcd on the same state, and their JSON is compared key by key. What
# may differ is what docs/json.md lists: status's in_sync and each device's
# reachable, in_sync and error (a local run reads every device; ofcd says
# them once it has read), the daemon's own fields; a schedule's engine
# working, which ofcd does not send; a transaction's ticket and peer; a
# plan's timings.
SUITE=json
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
mkdir -p "$ST"
# The shipped torus config (docs/json.md shows its commands), and the same
# fabric as a circulant, its credentials the shipped file's.
TORUS=configs/torus64-ocs.yaml
CIRC="$TMP/circ.yaml"
CREDS="$(pwd)/configs/credentials"
sed -e "s|^topology: .*|topology: circulant:64:3,8|" -e "s|credentials: .*|credentials: $CREDS/ocs0.cred|" \
	"$TORUS" >"$CIRC"

start_ofcd() { # CONFIG DEVICE [OPTION...]
	_cfg=$1 _dev=$2
	shift 2
	$BUILD/ofcd --foreground --credentials-dir "$CREDS" --config "$_cfg" --socket "$SOCK" \
		--state-dir "$ST" --device "$_dev" --probe-interval 0 "$@" 2>>"$TMP/ofcd.log" &
	ofcd_pid=$!
	DAEMONS="$DAEMONS $ofcd_pid"
	# Until it answers: any word but that nothing listens is an answer. At
	# --max-frame 8KiB its state does not fit a frame and status fails
	# however long it is given: waiting for exit 0 waited out the whole
	# deadline.
	deadline 10
	until $OFC --socket "$SOCK" status >/dev/null 2>"$TMP/up.err" ||
		{ [ -s "$TMP/up.err" ] && ! grep -q "cannot connect to ofcd" "$TMP/up.err"; } || past $_end; do
		sleep 0.01
	done
}
stop_ofcd() {
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
}

# same KIND LOCAL.json REMOTE.json: the rules of docs/json.md for KIND.
cat >"$TMP/same.py" <<'PY'
import json, re, sys

kind, lf, rf = sys.argv[1:4]
bad = []

def load(f):
    # one writer, one key once: a field the metrics and the detail both
    # say would print twice
    def once(pairs):
        keys = [k for k, _ in pairs]
        bad.extend("%s: %s twice" % (f, k) for k in sorted(set(keys)) if keys.count(k) > 1)
        return dict(pairs)
    return json.load(open(f), object_pairs_hook=once)

l, r = load(lf), load(rf)

def near(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)
    return a == b

def agree(a, b, where):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in set(a) | set(b):
            if k not in a or k not in b:
                bad.append("%s%s: only %s" % (where, k, "ofcd's" if k in b else "the local"))
            else:
                agree(a[k], b[k], where + k + ".")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            agree(x, y, "%s%d." % (where, i))
    elif not near(a, b):
        bad.append("%s: %r here, %r from ofcd" % (where.rstrip("."), a, b))

if kind == "status":
    local_only = {"in_sync"}
    # (event_seq, event_log: where in ofcd's event log the state stands;
    # wiring: what the hosts' agents reported to it)
    daemon_only = {"daemon_pid", "schedule", "schedule_error", "schedule_computing_since_unix_ms",
                   "event_seq", "event_log", "wiring"}
    dev_local_only = {"reachable", "in_sync", "error"}
    # what ofcd counted talking to a device (docs/json.md): nothing here counts
    dev_daemon_only = {"last_contact_unix_ms", "commands", "errors"}
    for k in set(l) - set(r) - local_only:
        bad.append("%s: the local run's alone" % k)
    for k in set(r) - set(l) - daemon_only:
        bad.append("%s: ofcd's alone" % k)
    common = {k: l[k] for k in l if k in r and k != "devices"}
    agree(common, {k: r[k] for k in common}, "")
    if len(l["devices"]) != len(r["devices"]):
        bad.append("devices: %d here, %d from ofcd" % (len(l["devices"]), len(r["devices"])))
    for i, (a, b) in enumerate(zip(l["devices"], r["devices"])):
        a = {k: v for k, v in a.items() if k not in dev_local_only}
        b = {k: v for k, v in b.items() if k not in dev_local_only | dev_daemon_only}
        agree(a, b, "devices.%d." % i)
elif kind == "schedule":
    # every figure ofcd sends, the same here; the local run's other keys
    # are its engine's working, none a field of ofc.v1.Schedule
    fields = set(re.findall(r"^\s*(?:optional|repeated)\s+\S+\s+(\w+)\s*=",
                            open("proto/schedule.proto").read().split("message Schedule {")[1]
                            .split("\n}")[0], re.M))
    for k, v in r.items():
        if k not in l:
            bad.append("%s: ofcd's alone" % k)
        else:
            agree(l[k], v, k + ".")
    for k in set(l) - set(r):
        if k in fields:
            bad.append("%s: a Schedule field ofcd did not send" % k)
elif kind == "plan":
    # one ofc.v1.Plan both ways: every key the same but the pricing's
    # seconds (the whole plan's, each price's, each MCF's), which are timings
    def untimed(x):
        if isinstance(x, dict):
            return {k: untimed(v) for k, v in x.items() if k not in ("seconds", "mcf_seconds")}
        if isinstance(x, list):
            return [untimed(v) for v in x]
        return x
    agree(untimed(l), untimed(r), "")
elif kind in ("transaction", "devplan"):
    # devplan: `ofc plan FILE --json` against ofcd's dry run of the same
    # config, one builder (txn_planned_msg): the same to the last
    # operation, but the kind (plan here, apply-config there)
    daemon_only = {"ticket", "peer_uid", "peer_pid"}
    skip = ("id", "seconds") + (("kind",) if kind == "devplan" else ())
    for k in set(r) - set(l) - daemon_only:
        bad.append("%s: ofcd's alone" % k)
    for k in set(l) - set(r):
        bad.append("%s: the local run's alone" % k)
    agree({k: l[k] for k in l if k not in skip},
          {k: r[k] for k in l if k in r and k not in skip}, "")
    if kind == "devplan" and (l.get("kind"), r.get("kind")) != ("plan", "apply-config"):
        bad.append("kind: %r here, %r from ofcd" % (l.get("kind"), r.get("kind")))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
# same KIND NAME LOCAL-CMD... -- REMOTE-ARGS...
same() {
	kind=$1
	name=$2
	shift 2
	lcmd=""
	while [ "$1" != "--" ]; do lcmd="$lcmd $1"; shift; done
	shift
	# shellcheck disable=SC2086
	$OFC $lcmd >"$TMP/l.json" 2>"$TMP/l.err" &&
		$OFC --socket "$SOCK" "$@" >"$TMP/r.json" 2>"$TMP/r.err" &&
		python3 "$TMP/same.py" "$kind" "$TMP/l.json" "$TMP/r.json" >"$TMP/diff" && ok ||
		bad "$name: the local and ofcd's JSON differ" "$(head -8 "$TMP/diff")" \
			"$(head -c 300 "$TMP/l.err" "$TMP/r.err")"
}

# ---- a switched fabric ---------------------------------------------------------
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
L="--device $DEV --state-dir $ST"
expect_exit 0 $OFC apply "$TORUS" $L
# Transactions: a dry run on the same state, and the same apply each way
# (torus -> circulant, from the same starting state).
$OFC apply "$CIRC" $L --dry-run --json >"$TMP/ldry.json"
$OFC apply "$CIRC" $L --json >"$TMP/lapply.json"
expect_json 'j["state"]=="committed" and j["id"]==3 and j["fabric"]=="torus64-ocs" and j["operations"]>0' \
	$OFC apply configs/torus64-ocs.yaml $L --json
# The device-move plan from the same state: `ofc plan FILE --json` is the
# dry run's message (docs/json.md's example: nothing to move).
expect_json 'j["state"]=="planned" and j["kind"]=="plan" and j["dry_run"] and j["operations"]==0 and j["device_plan"]["devices"][0]["unchanged"]==256 and j["device_plan"]["devices"][0]["ops"]==[]' \
	$OFC plan configs/torus64-ocs.yaml $L --json
$OFC plan "$CIRC" $L --json >"$TMP/lplan.json"
start_ofcd "$TORUS" "$DEV"
$OFC --socket "$SOCK" apply "$CIRC" --dry-run --json >"$TMP/rdry.json"
python3 "$TMP/same.py" transaction "$TMP/ldry.json" "$TMP/rdry.json" >"$TMP/diff" && ok ||
	bad "apply --dry-run: the local and ofcd's JSON differ" "$(head -8 "$TMP/diff")"
python3 "$TMP/same.py" devplan "$TMP/lplan.json" "$TMP/rdry.json" >"$TMP/diff" && ok ||
	bad "plan FILE: the local and ofcd's dry run's JSON differ" "$(head -8 "$TMP/diff")"
expect_json 'j["state"]=="planned" and j["operations"]>0 and j["plan"].startswith("fabric torus64-ocs: %d operations" % j["operations"])' \
	cat "$TMP/rdry.json"
expect_json '(d := j["device_plan"]["devices"]) and [x["name"] for x in d]==["ocs0"] and d[0]["kind"]=="switch" and d[0]["driver"]=="tl1" and len(d[0]["ops"])==j["operations"]==d[0]["remove"]+d[0]["add"] and d[0]["ops"][0]["op"]=="disconnect" and d[0]["ops"][-1]["op"]=="connect" and "ops_left_out" not in j["device_plan"]' \
	cat "$TMP/rdry.json"
$OFC --socket "$SOCK" apply "$CIRC" --json >"$TMP/rapply.json"
python3 "$TMP/same.py" transaction "$TMP/lapply.json" "$TMP/rapply.json" >"$TMP/diff" && ok ||
	bad "apply: the local and ofcd's JSON differ" "$(head -8 "$TMP/diff")"
expect_json 'j["state"]=="committed" and j["operations"]>0 and j["fabric"]=="torus64-ocs" and j["kind"]=="apply-config"' \
	cat "$TMP/rapply.json"

# Status: the record ofcd's applies left, read here and asked of ofcd.
expect_exit 0 $OFC --socket "$SOCK" apply "$TORUS"
same status "status" status configs/torus64-ocs.yaml $L --json -- status --json
expect_json 'j["at_target"] and j["config_generation"]==5 and j["topology"]["spec"]=="torus:8x8" and len(j["devices"][0]["circuits"])==256 and j["devices"][0]["circuits"][0]["src_host"]=="h0"' \
	cat "$TMP/r.json"
expect_json 'j["in_sync"] and j["devices"][0]["reachable"] and j["recorded_config"].endswith("torus64-ocs.yaml")' \
	$OFC status configs/torus64-ocs.yaml $L --json
# Schedules: the summary, direct-connect engines and the all-to-all MCF.
for args in "--collective allreduce" "--collective reduce-scatter --size 1MiB" \
	"--collective allgather --algo recursive" "--collective alltoall --size 1MiB" \
	"--collective alltoall --size 1MiB --algo direct"; do
	# shellcheck disable=SC2086
	same schedule "schedule $args" schedule "$TORUS" $args --json -- schedule $args --json
done
expect_json 'j["algorithm"]=="bfb" and j["num_transfers"]>0 and j["degree"]==4 and j["tau_l"]==j["num_steps"]' \
	$OFC --socket "$SOCK" schedule --collective allreduce --summary --json
# A server fabric's summary: the message's figures and its detail's, each
# key once (same.py's check, the file against itself).
$OFC schedule examples/modelw/all-links-1.yaml --collective allgather --hops 4 --json >"$TMP/fl.json" &&
	python3 "$TMP/same.py" plan "$TMP/fl.json" "$TMP/fl.json" >"$TMP/diff" && ok ||
	bad "a fluid summary says a key twice" "$(head -3 "$TMP/diff")"
expect_json 'j["algorithm"]=="fluid" and j["method"]=="mirrored" and j["lp_solver"]["master"] and j["hops"]==4 and j["steps"]==j["num_steps"] and j["verified"] and j["size_bytes"]>0 and "phases" not in j' \
	cat "$TMP/fl.json"
expect_exit 0 stop_ofcd
# A job's plan: the torus with a workload section, planned here and by ofcd
# (GetPlan), one ofc.v1.Plan both ways.
WL="$TMP/wl.yaml"
{
	sed -e "s|credentials: .*|credentials: $CREDS/ocs0.cred|" "$TORUS"
	printf 'workload:\n  name: dp-tp\n  iterations: 100\n  parallelism: {tp: 8, dp: 8}\n  phases:\n'
	printf '    - {name: ag, collective: allgather, group: tp, size: 16MiB}\n'
	printf '    - {name: ar, collective: allreduce, group: dp, size: 256MiB}\n'
} >"$WL"
start_ofcd "$WL" "$DEV"
same plan "plan --workload" plan "$WL" --workload config --json -- plan --json
expect_json 'j["workload"]=="dp-tp" and j["fabric"]=="torus64-ocs" and len(j["phases"])==2 and [w["kind"] for w in j["ways"]]==["static","per-phase","in place","chosen"] and j["candidates"][0]["origin"]=="config" and all(len(p["on"])==len(j["candidates"]) for p in j["phases"])' \
	cat "$TMP/r.json"
# Without --json: the ways and the choice's words, GetPlan's message.
$OFC --socket "$SOCK" plan >"$TMP/plan.txt" 2>&1 &&
	grep -q "^static .* an iteration (the first: .* of switching before it)$" "$TMP/plan.txt" &&
	grep -q "^  ag  *tp " "$TMP/plan.txt" &&
	tail -1 "$TMP/plan.txt" | grep -qF "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["why"])' "$TMP/r.json")" && ok ||
	bad "ofc --socket PATH plan prints the ways and why" "$(head -5 "$TMP/plan.txt")"
expect_exit 0 stop_ofcd
# A dry run whose plan's words do not fit ofcd's frame: the transaction
# without its operations and its plan, each device's counts kept, and the
# answer says why (the one builder's limit).
start_ofcd "$TORUS" "$DEV" --max-frame 8KiB
expect_json 'j["state"]=="planned" and j["operations"]>0 and "plan" not in j and j["switching_seconds"]>0 and j["device_plan"]["ops_left_out"] and [(d["name"], d["ops"]) for d in j["device_plan"]["devices"]]==[("ocs0", [])] and j["device_plan"]["devices"][0]["add"]>0' \
	$OFC --socket "$SOCK" apply "$CIRC" --dry-run --json
$OFC --socket "$SOCK" apply "$CIRC" --dry-run >"$TMP/small.out" 2>&1
grep -q "would take fabric 'torus64-ocs' to .*; the plan's lines do not fit a frame" "$TMP/small.out" && ok ||
	bad "a dry run's plan too big for the frame is left out, and said" "$(head -3 "$TMP/small.out")"
expect_exit 0 stop_ofcd
# docs/json.md's example: one phase, reconfiguring never pays.
expect_json 'j["chosen"]=="static" and j["ways"][2]=={"kind": "in place", "have": False, "why_not": "no circuits in place were read", "phases": []} and abs(j["ways"][0]["job_us"]-j["ways"][0]["first_switch_us"]-1000*j["ways"][0]["iteration_us"])<1e-6*j["ways"][0]["job_us"] and j["phases"][0]["group"]=="all"' \
	$OFC plan configs/torus64-ocs.yaml --workload examples/workloads/dp-allreduce.yaml --json
stop_emu "$e_pid"

# ---- a WDM ring: its MRR channels and OpTree's schedule ------------------------------
RING=tests/configs/ring8-mrr.yaml
rm -rf "$ST" && mkdir -p "$ST"
start_emu mrr-emu m --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4
RDEV="ring0=127.0.0.1:$m_port"
expect_exit 0 $OFC apply "$RING" --device "$RDEV" --state-dir "$ST"
start_ofcd "$RING" "$RDEV"
same status "ring status" status "$RING" --device "$RDEV" --state-dir "$ST" --json -- status --json
expect_json 'j["devices"][0]["kind"]=="ring" and len(j["devices"][0]["channels"])==8 and len(j["devices"][0]["lightpaths"])==4' \
	cat "$TMP/r.json"
for args in "--collective allgather" "--collective allreduce --algo ne" "--collective alltoall"; do
	# shellcheck disable=SC2086
	same schedule "ring schedule $args" schedule "$RING" $args --json -- schedule $args --json
done
expect_exit 0 stop_ofcd
stop_emu "$m_pid"

finish
