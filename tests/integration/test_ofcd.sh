#!/bin/sh
# ofcd against build/ocs-emu and build/mrr-emu, driven by `ofc --socket`:
# options and bad configs; reads, reconfigures, applies and schedules;
# reads answered during a transaction; cancel; events; permissions for an
# unprivileged uid; SIGHUP (good and bad config); topology: auto picked
# by a planner process (and refused when it dies); SIGTERM finishing the
# running transaction; kill -9 during a Reconfigure, then a restart; a
# journal left by a killed `ofc apply` recovered at start; daemonizing.
SUITE=ofcd
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

# The credentials files the configs name are copied into $TMP.
OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP"
DAEMONS=""
trap 'for p in $DAEMONS; do kill -9 "$p" 2>/dev/null; done; stop_all_emus; rm_tmp' EXIT
# An unprivileged client must reach the sockets.
chmod 755 "$TMP"

ST="$TMP/state"
SOCK="$TMP/ofcd.sock"
RO="$TMP/ro.sock"
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
make_torus_config "$TORUS" torus:8x8 2s 2
make_torus_config "$CIRC" circulant:64:3,8 2s 2

# start_ofcd LOG ARGS...: ofcd in the foreground; waits until it answers.
start_ofcd() {
	log=$1
	shift
	$OFCD --foreground "$@" 2>>"$TMP/$log" &
	ofcd_pid=$!
	DAEMONS="$DAEMONS $ofcd_pid"
	# Until it answers: a status printed, or any word but that nothing
	# listens (status exits 1 while a device does not answer, as some of
	# these daemons' do: waiting for exit 0 waited out the whole 1,000
	# turns).
	_w=0
	until $OFC --socket "$SOCK" status >"$TMP/up.out" 2>"$TMP/up.err" || [ -s "$TMP/up.out" ] ||
		{ [ -s "$TMP/up.err" ] && ! grep -q "cannot connect to ofcd" "$TMP/up.err"; } || [ $_w -ge 1000 ]; do
		sleep 0.01
		_w=$((_w + 1))
	done
}
stop_ofcd() { # exit status of the daemon after SIGTERM
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
}
# state_json EXPR: the daemon's state (status --json), checked by EXPR over s.
state_is() {
	expect_json "(lambda s: $1)(j)" $OFC --socket "$SOCK" status --json
}
# wait_state EXPR: poll until the state satisfies EXPR (at most 60 s by the clock: a bound for loaded machines, not a timing check).
wait_state() { # a turn is a status call and a python3, so by the clock
	deadline 60
	while ! past $_end; do
		if $OFC --socket "$SOCK" status --json 2>/dev/null |
			python3 -c "import json,sys; j=json.load(sys.stdin); sys.exit(0 if ($1) else 1)" 2>/dev/null; then
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# ---- options and configs ------------------------------------------------------------
expect_error 2 "ofcd: missing --config FILE" $OFCD --socket "$SOCK"
expect_error 2 "ofcd: missing --socket PATH" $OFCD --config "$TORUS"
expect_error 2 "ofcd: --device 'ocs0': expected NAME=HOST:PORT" $OFCD --config "$TORUS" --socket "$SOCK" --device ocs0
expect_error 2 "ofcd: --max-frame 'huge': expected a size from 64 bytes to 1GiB" $OFCD --config "$TORUS" --socket "$SOCK" --max-frame huge
expect_error 2 "ofcd: --admin-group 'no-such-group-here': no such group (create it, as make install's sysusers.d does for 'ofc'; or leave the option out: then only root may change the fabric)" \
	$OFCD --config "$TORUS" --socket "$SOCK" --admin-group no-such-group-here
expect_error 2 "ofcd: unknown option '--bogus'" $OFCD --bogus
expect_exit 0 $OFCD --help
printf 'name: x\nhosts: {count: 4, prefix: h}\nwavelenghts: 3\n' >"$TMP/bad.yaml"
expect_error 2 "$TMP/bad.yaml:3:1: unknown key 'wavelenghts' in the config (expected version, name, description, hosts, rings, switches, wiring, topology, collectives, partitions, cost_model, lp_solver, testbed, servers, fabric_vertices, fabric_links, capacity_sets, workload)" \
	$OFCD --config "$TMP/bad.yaml" --socket "$SOCK" --foreground --state-dir "$ST"
[ ! -e "$SOCK" ] && ok || bad "a bad config left a socket"
expect_stdout_has "fabric torus64-ocs, 64 hosts, 1 switches, 0 rings, topology torus:8x8: ok" $OFCD --check --config "$TORUS"
expect_error 2 "ofcd: --device 'ocs9': $TMP/torus.yaml has no switch or ring of that name" \
	$OFCD --config "$TORUS" --socket "$SOCK" --foreground --state-dir "$ST" --device ocs9=127.0.0.1:5
expect_error 1 "ofc: cannot connect to ofcd at $TMP/none.sock: No such file or directory (is ofcd running?)" \
	$OFC --socket "$TMP/none.sock" status
expect_error 2 "ofc: 'topo' does not talk to ofcd (status, wiring, apply, reconfigure, release, schedule, plan, watch, cancel, fail, restore, testbed up|run|check|down|mpirun, cluster and metrics do)" \
	$OFC --socket "$SOCK" topo ring:4
# Neither --socket nor OFC_SOCKET: the daemon's own commands ask the socket
# its unit listens on (the Python client's default too) and say so. (Exit 0
# or 1: a daemon may run there on this machine.)
for c in "watch --timeout 1" "reconfigure --topology ring:4 --dry-run"; do
	# shellcheck disable=SC2086
	OFC_SOCKET= $OFC $c >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -ne 2 ] && [ "$(head -n 1 "$TMP/err")" = "ofc ${c%% *}: asking ofcd at /run/ofc/ofcd.sock (the default; --socket PATH or OFC_SOCKET=PATH for another)" ] &&
		ok || bad "ofc $c without a socket: exit $rc" "$(head -c 300 "$TMP/err")"
done
# --help needs no daemon.
expect_stdout_has "usage: ofc --socket PATH reconfigure (--topology SPEC" $OFC reconfigure --help
expect_stdout_has "usage: ofc --socket PATH watch" $OFC watch -h
expect_error 2 "ofc: --socket needs the path of ofcd's socket" $OFC status --socket

# ---- serving: state, reconfigure, apply, schedule --------------------------------------
start_emu ocs-emu e --ports 256 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
start_ofcd d1.log --config "$TORUS" --socket "$SOCK" --ro-socket "$RO" --socket-mode 0666 \
	--state-dir "$ST" --device "$DEV" --probe-interval 0 --log-level info --max-request-memory 8GiB
# ofcd's threads at rest, without --cluster: the loop (named ofcd) and the
# mutation worker, one each; the others start when work comes and end
# after it (docs/ARCHITECTURE.md, "ofcd's threads"; with --cluster,
# test_cluster_epoch.sh counts five).
at_rest "$ofcd_pid" "ofcd x1, ofcd-mutation x1" 30 && ok ||
	bad "ofcd's threads at rest are not the two" "$(thread_kinds "$ofcd_pid")" "$(thread_detail "$ofcd_pid")"
state_is 's["fabric_name"]=="torus64-ocs" and s["config_generation"]==0 and "topology" not in s and s["target_topology"]=="torus:8x8" and not s["at_target"] and s["devices"][0]["name"]=="ocs0" and s["devices"][0]["kind"]=="switch"'
# --socket anywhere on the line, or OFC_SOCKET, for the commands ofcd answers.
expect_json 'j["fabric_name"]=="torus64-ocs"' $OFC status --json --socket "$SOCK"
expect_json 'j["fabric_name"]=="torus64-ocs"' $OFC status --socket="$SOCK" --json
expect_json 'j["fabric_name"]=="torus64-ocs"' env OFC_SOCKET="$SOCK" $OFC status --json
# ... and OFC_SOCKET leaves the local-only commands local.
expect_stdout_has "topology ring:4" env OFC_SOCKET="$SOCK" $OFC topo ring:4
# watch --timeout: no event for that long is a normal end, not a dead daemon.
expect_exit 0 $OFC watch --socket "$SOCK" --timeout 0.3
expect_stdout_has "committed transaction 1: 256 operations on 1 device" $OFC --socket "$SOCK" reconfigure --topology torus:8x8
state_is 's["config_generation"]==1 and s["topology"]["spec"]=="torus:8x8" and s["topology"]["diameter"]==8 and s["at_target"] and len(s["devices"][0]["circuits"])==256'
# The state's schedule is computed after the commit, by the state's own
# thread (schedule_computing_since_unix_ms while it runs): it comes.
wait_state '"schedule" in j and j["schedule"]["verified"] and j["schedule"]["collective"]=="allreduce"' && ok ||
	bad "the committed torus:8x8's schedule never came to the state"
# What the daemon recorded is what the switch holds.
expect_json 'j["in_sync"] and j["at_target"] and j["config_generation"]==1' \
	$OFC status "$TORUS" --device "$DEV" --state-dir "$ST" --json
# While ofcd runs, nobody else changes the fabric; the refusal names the
# daemon and the way through it.
expect_error 1 "ofc: fabric 'torus64-ocs' is held by ofcd (pid $ofcd_pid), which changes its devices: use \`ofc --socket $SOCK apply\` (or reconfigure)" \
	$OFC apply "$CIRC" --device "$DEV" --state-dir "$ST"
expect_error 2 "ofc: topology 'torus:8x' at column 9: expected dimensions like 8x8" \
	$OFC --socket "$SOCK" reconfigure --topology torus:8x
expect_error 2 "ofc: topology 'torus:4x4' has 16 nodes but the fabric has 64 hosts" \
	$OFC --socket "$SOCK" reconfigure --topology torus:4x4
expect_stdout_has "256 operations on 1 device would take fabric 'torus64-ocs' to circulant:64:3,8 (switching time about " \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:3,8 --dry-run
# ... and the plan, line for line what `ofc plan` prints for that config.
tail -n +2 "$TMP/out" >"$TMP/rplan"
$OFC plan "$CIRC" --device "$DEV" --state-dir "$ST" >"$TMP/lplan" 2>"$TMP/err"
cmp -s "$TMP/rplan" "$TMP/lplan" && [ "$(grep -c '^  [-+] [0-9]* -> [0-9]*  (h[0-9]*:[0-9] -> h[0-9]*:[0-9])$' "$TMP/rplan")" -eq 256 ] &&
	ok || bad "reconfigure --dry-run's plan is not ofc plan's" "$(diff "$TMP/rplan" "$TMP/lplan" | head -5)" "$(head -3 "$TMP/rplan")"
expect_json 'j["switching_seconds"]>0 and j["plan"].count("\n  ")==256' \
	$OFC --socket "$SOCK" reconfigure --topology circulant:64:3,8 --dry-run --json
state_is 's["config_generation"]==1 and s["topology"]["spec"]=="torus:8x8"'
# A workload: the finder picks the topology, what `ofc finder` picks for
# the config's 4 ports at 100 Gb/s and 10 us a step; the answer carries its
# schedule.
PICK=$($OFC finder --nodes 64 --degree 4 --collective allgather --size 1MiB --alpha 10us --bandwidth 400Gbps --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["pick"]["spec"])')
expect_json 'j["state"]=="committed" and j["schedule"]["verified"] and j["schedule"]["topology"]==j["target"] and j["target"]=="'"$PICK"'"' \
	$OFC --socket "$SOCK" reconfigure --collective allgather --size 1MiB --nodes 64 --json
expect_error 2 "ofc: workload of 32 nodes: fabric 'torus64-ocs' has 64 hosts, and a topology spans all of them" \
	$OFC --socket "$SOCK" reconfigure --collective allgather --size 1MiB --nodes 32
# apply: errors come back with their position; a good config is applied.
printf 'name: torus64-ocs\nhosts: {count: 64, prefix: h, ports: 4}\nswitchs: []\n' >"$TMP/typo.yaml"
expect_error 2 "$TMP/typo.yaml:3:1: unknown key 'switchs' in the config (did you mean 'switches'?)" \
	$OFC --socket "$SOCK" apply "$TMP/typo.yaml"
expect_stdout_has "committed transaction 3" $OFC --socket "$SOCK" apply "$CIRC"
state_is 's["config_generation"]==3 and s["topology"]["spec"]=="circulant:64:3,8" and s["config_file"]=="'"$CIRC"'"'
# The schedule is the message `ofc schedule FILE` exports, byte for byte once decoded.
expect_stdout_has "verified     yes" $OFC --socket "$SOCK" schedule --collective allreduce --size 1MiB -o "$TMP/remote.pb"
expect_exit 0 $OFC schedule "$CIRC" --collective allreduce --size 1MiB -o "$TMP/local.pb"
protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/remote.pb" >"$TMP/remote.txt" &&
	protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/local.pb" >"$TMP/local.txt" &&
	cmp -s "$TMP/remote.txt" "$TMP/local.txt" && grep -q "verified: true" "$TMP/remote.txt" &&
	[ "$(grep -c 'transfers {' "$TMP/remote.txt")" -gt 1000 ] && ok ||
	bad "GetSchedule differs from ofc schedule" "$(diff "$TMP/remote.txt" "$TMP/local.txt" | head -5)"
# -o chooses the format as locally: the extension, else json.
for f in remote.json remote; do
	$OFC --socket "$SOCK" schedule --collective allreduce --size 1MiB --summary -o "$TMP/$f" >/dev/null 2>"$TMP/err" &&
		python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["verified"] else 1)' "$TMP/$f" &&
		ok || bad "remote -o $f is not the schedule as JSON" "$(head -c 200 "$TMP/err")"
done
expect_error 2 "ofc --socket PATH schedule: -o '$TMP/remote.txt' names a text file, which ofc --socket PATH schedule does not write (it writes json or pb)" \
	$OFC --socket "$SOCK" schedule --collective allreduce --size 1MiB -o "$TMP/remote.txt"
# A GetSchedule over --max-request-memory is refused with its estimate; the
# daemon goes on serving. (The time-stepped lowering by name: the default
# would lower to paths instead, which fit.)
expect_exit 1 $OFC --socket "$SOCK" schedule --collective alltoall --algo mcf --lowering steps --topology torus:24x24 --size 1MiB --summary
grep -q "needs about .* GiB (.* hops in all), over the memory limit of 8 GiB (ofc --max-memory, ofcd --max-request-memory)" "$TMP/err" &&
	ok || bad "GetSchedule over the memory limit" "$(head -c 400 "$TMP/err")"
# ... for every engine: recursive doubling on 16,384 nodes.
expect_exit 1 $OFC --socket "$SOCK" schedule --collective allreduce --algo recursive-doubling --topology torus:128x128 --size 1MiB --summary
grep -q "bandwidth-optimal recursive-doubling on 16384 nodes needs about .* GiB (.* transfers), over the memory limit of 8 GiB (ofc --max-memory, ofcd --max-request-memory); about [0-9]* nodes would fit" "$TMP/err" &&
	ok || bad "GetSchedule swing over the memory limit" "$(head -c 400 "$TMP/err")"
# Another topology than the fabric's (what-if), figures only.
expect_json 'j["algorithm"]=="ring" and j["topology"]=="torus:8x8" and "steps" not in j and j["num_steps"]==63 and j["verified"] and "links" not in j' \
	$OFC --socket "$SOCK" schedule --collective allgather --algo ring --topology torus:8x8 --summary --json
# All-to-all by MCF (on the fabric's NIC ports) and Swing (what-if on a
# torus): again the message `ofc schedule` exports.
same_schedule() { # NAME REMOTE-ARGS -- LOCAL-ARGS
	name=$1
	shift
	remote=""
	while [ "$1" != "--" ]; do remote="$remote $1"; shift; done
	shift
	# shellcheck disable=SC2086
	$OFC --socket "$SOCK" schedule $remote -o "$TMP/r.pb" >/dev/null 2>"$TMP/err" &&
		$OFC schedule "$@" --format pb -o "$TMP/l.pb" >/dev/null 2>>"$TMP/err" &&
		protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/r.pb" >"$TMP/r.txt" &&
		protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/l.pb" >"$TMP/l.txt" &&
		cmp -s "$TMP/r.txt" "$TMP/l.txt" && grep -q "verified: true" "$TMP/r.txt" && ok ||
		bad "GetSchedule $name differs from ofc schedule" "$(head -c 300 "$TMP/err")" \
			"$(diff "$TMP/r.txt" "$TMP/l.txt" | head -30)"
}
same_schedule "alltoall mcf" --collective alltoall --size 1MiB -- \
	"$CIRC" --collective alltoall --size 1MiB
same_schedule "alltoall direct" --collective alltoall --algo direct --size 1MiB -- \
	"$CIRC" --collective alltoall --algo direct --size 1MiB
# (the fabric's cost model: alpha 10us, 4 links of 100Gbps)
same_schedule "swing" --collective allreduce --algo swing --size 1MiB --topology torus:8x8 -- \
	--topology torus:8x8 --collective allreduce --algo swing --size 1MiB --alpha 10us \
	--bandwidth 400Gbps
# Every other algorithm through the one pipeline: on the fabric's NIC ports,
# and what-if on topologies where the algorithm applies.
for a in bfb bfb-lp; do
	same_schedule "allreduce $a" --collective allreduce --algo $a --size 1MiB -- \
		"$CIRC" --collective allreduce --algo $a --size 1MiB
done
for a in ring bidir-ring recursive; do
	same_schedule "allgather $a on a torus" --collective allgather --algo $a --size 1MiB \
		--topology torus:8x8 -- --topology torus:8x8 --collective allgather --algo $a \
		--size 1MiB --alpha 10us --bandwidth 400Gbps
done
same_schedule "alltoall sp-balanced" --collective alltoall --algo sp-balanced --size 1MiB -- \
	"$CIRC" --collective alltoall --algo sp-balanced --size 1MiB
same_schedule "allgather expansion" --collective allgather --algo expansion --size 1MiB \
	--topology 'line(circulant:16:3,4)' -- --topology 'line(circulant:16:3,4)' \
	--collective allgather --algo expansion --size 1MiB --alpha 10us --bandwidth 400Gbps
for a in torus-rings recursive-doubling bucket; do
	same_schedule "allreduce $a on a torus" --collective allreduce --algo $a --size 1MiB \
		--topology torus:8x8 -- --topology torus:8x8 --collective allreduce --algo $a \
		--size 1MiB --alpha 10us --bandwidth 400Gbps
done
expect_error 2 "ofc: swing schedules allreduce" \
	$OFC --socket "$SOCK" schedule --collective allgather --algo swing --topology torus:8x8
expect_exit 2 $OFC --socket "$SOCK" schedule --collective allreduce --algo torus-rings
# A comparison table is ofc schedule's alone (the engine table's CLI-only rows).
expect_exit 2 $OFC --socket "$SOCK" schedule --collective allreduce --algo swing-all --topology torus:8x8 --size 1MiB
grep -q "^ofc: swing-all compares algorithms ('ofc schedule .* --algo swing-all'); ask for one of them" "$TMP/err" && ok ||
	bad "GetSchedule took a comparison table" "$(cat "$TMP/err")"
# The read-only socket: reads yes, mutations no (even for root).
expect_stdout_has "fabric torus64-ocs" $OFC --socket "$RO" status
expect_error 1 "ofc: permission denied: reconfigure on the read-only socket, which answers reads only; mutations go to the main socket" \
	$OFC --socket "$RO" reconfigure --topology torus:8x8

# ---- an unprivileged uid ----------------------------------------------------------------
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" -eq 0 ]; then
	ASAN_OPTIONS=detect_leaks=0 $NOBODY $OFC --socket "$SOCK" reconfigure --topology torus:8x8 >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 1 ] && grep -q "^ofc: permission denied: reconfigure needs root (you are uid 65534, pid " "$TMP/err" && ok ||
		bad "nobody's mutation not refused" "$(cat "$TMP/err")"
	ASAN_OPTIONS=detect_leaks=0 expect_stdout_has "fabric torus64-ocs" $NOBODY $OFC --socket "$SOCK" status
	ASAN_OPTIONS=detect_leaks=0 expect_stdout_has "verified     yes" $NOBODY $OFC --socket "$RO" schedule --collective allreduce --summary
	grep -q "denied reconfigure to uid 65534 gid 65534 pid [0-9]* on the main socket" "$TMP/d1.log" && ok ||
		bad "the denial is not logged with uid and pid"
	state_is 's["config_generation"]==3'
fi
expect_exit 0 stop_ofcd

# ---- the admin group; reads during a transaction; cancel; events; SIGTERM ----------------
stop_emu "$e_pid"
# The emulator holds every change while $HOLD exists, so a transaction stays
# in flight for exactly as long as the queue-and-cancel and SIGTERM steps
# take, however loaded the machine (a fixed per-change delay raced them).
# The commands' timeout is long enough for the slowest of those steps.
HOLD="$TMP/hold"
start_emu ocs-emu s --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 1 \
	--hold-file "$HOLD"
DEV="ocs0=127.0.0.1:$s_port"
ADMIN=$(getent group users | cut -d: -f3)
make_torus_config "$TMP/torus-held.yaml" torus:8x8 60s 2
start_ofcd d2.log --config "$TMP/torus-held.yaml" --socket "$SOCK" --socket-mode 0660 --admin-group users \
	--state-dir "$ST" --device "$DEV" --probe-interval 0
if [ "$(id -u)" -eq 0 ] && [ -n "$ADMIN" ]; then
	[ "$(stat -c '%a %g' "$SOCK")" = "660 $ADMIN" ] && ok || bad "socket mode/group: $(stat -c '%a %g' "$SOCK")"
	ASAN_OPTIONS=detect_leaks=0 expect_stdout_has "would take fabric 'torus64-ocs' to torus:8x8" \
		setpriv --reuid=65534 --regid=65534 --groups "$ADMIN" $OFC --socket "$SOCK" reconfigure --topology torus:8x8 --dry-run
fi
$OFC --socket "$SOCK" watch --json >"$TMP/events" 2>/dev/null &
watch_pid=$!
# Text events carry local ISO 8601 times with ms; JSON keeps time_unix_ms.
OFC_SOCKET="$SOCK" $OFC watch --count 2 >"$TMP/events.txt" 2>/dev/null &
watch_text_pid=$!
sleep 0.2
touch "$HOLD"
$OFC --socket "$SOCK" reconfigure --topology torus:8x8 >"$TMP/r1.out" 2>&1 &
r1=$!
wait_state '"transaction" in j and j["transaction"]["state"]=="applying"' && ok || bad "no transaction seen in progress"
# Read while it runs: the last committed state (generation 3, the circulant).
state_is 's["transaction"]["state"]=="applying" and s["transaction"]["target"]=="torus:8x8" and s["config_generation"]==3 and s["topology"]["spec"]=="circulant:64:3,8"'
$OFC --socket "$SOCK" reconfigure --topology circulant:64:1,8 >"$TMP/r2.out" 2>&1 &
r2=$!
wait_state 'len(j["queue"])==1' && ok || bad "the second reconfigure is not queued"
TICKETS=$($OFC --socket "$SOCK" status --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["transaction"]["ticket"], s["queue"][0]["ticket"])')
T1=${TICKETS% *}
T2=${TICKETS#* }
expect_error 1 "ofc: ticket $T1 is running: a transaction in progress is never cancelled; it commits or rolls back" \
	$OFC --socket "$SOCK" cancel "$T1"
expect_stdout_has "cancelled ticket $T2" $OFC --socket "$SOCK" cancel "$T2"
wait $r2
[ $? -eq 1 ] && grep -q "^ofc: ticket $T2 (reconfigure circulant:64:1,8) cancelled by uid 0 pid" "$TMP/r2.out" && ok || bad "cancelled client" "$(cat "$TMP/r2.out")"
rm -f "$HOLD"
wait $r1
[ $? -eq 0 ] && grep -q "committed transaction 4: 256 operations" "$TMP/r1.out" && ok || bad "first reconfigure" "$(cat "$TMP/r1.out")"
state_is 's["config_generation"]==4 and s["topology"]["spec"]=="torus:8x8" and "transaction" not in s and s["queue"]==[]'
# SIGTERM while a transaction runs: it finishes (committed), then ofcd exits 0.
touch "$HOLD"
$OFC --socket "$SOCK" reconfigure --topology circulant:64:3,8 >"$TMP/r3.out" 2>&1 &
r3=$!
wait_state '"transaction" in j and j["transaction"]["state"]=="applying"' && ok || bad "no transaction to interrupt"
kill -TERM "$ofcd_pid"
# Let ofcd see the signal while the transaction is still held.
sleep 0.2
rm -f "$HOLD"
wait "$ofcd_pid"
[ $? -eq 0 ] && ok || bad "ofcd did not exit 0 after SIGTERM"
wait $r3
[ $? -eq 0 ] && grep -q "committed transaction 5" "$TMP/r3.out" && ok || bad "SIGTERM cut the transaction short" "$(cat "$TMP/r3.out")"
grep -q "stopping after ticket" "$TMP/d2.log" && ok || bad "no stop notice" "$(tail -3 "$TMP/d2.log")"
[ ! -e "$SOCK" ] && ok || bad "the socket outlived ofcd"
expect_json 'j["in_sync"] and j["at_target"] and j["config_generation"]==5 and "transaction" not in j' \
	$OFC status "$CIRC" --device "$DEV" --state-dir "$ST" --json
wait $watch_pid 2>/dev/null
wait $watch_text_pid
[ $? -eq 0 ] && grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2} REQUEST_QUEUED' "$TMP/events.txt" &&
	ok || bad "watch: ISO 8601 times" "$(cat "$TMP/events.txt")"
python3 - "$TMP/events" <<'PY' && ok || bad "events" "$(head -c 600 "$TMP/events")"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [e["kind"] for e in ev]
want = ["KIND_REQUEST_QUEUED", "KIND_TRANSACTION_STARTED", "KIND_DEVICE_APPLIED", "KIND_TRANSACTION_COMMITTED"]
pos = 0
for k in kinds:
    if pos < len(want) and k == want[pos]:
        pos += 1
assert pos == len(want), kinds
assert "KIND_REQUEST_CANCELLED" in kinds
assert all(e.get("transaction") for e in ev if e["kind"] in ("KIND_TRANSACTION_STARTED", "KIND_TRANSACTION_COMMITTED"))
PY

# ---- kill -9 during a Reconfigure, then restart -----------------------------------------
stop_emu "$s_pid"
# 10 ms per cross-connect: a 256-change reconfigure takes about 2.5 s, so a
# kill up to 250 ms after the poll sees it applying lands inside it even when
# the poll itself is slow (at 4 ms, a loaded machine saw the commit first).
start_emu ocs-emu k --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 10 \
	--state "$TMP/k.state"
DEV="ocs0=127.0.0.1:$k_port"
# consistent: nothing unfinished, the record is what the switch holds, and
# that is one of the two topologies.
consistent() {
	for cfg in "$TORUS" "$CIRC"; do
		$OFC status "$cfg" --device "$DEV" --state-dir "$ST" --json |
			python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["in_sync"] and j["at_target"] and "transaction" not in j else 1)' &&
			return 0
	done
	return 1
}
start_ofcd d3.log --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device "$DEV" --probe-interval 0
expect_stdout_has "committed" $OFC --socket "$SOCK" reconfigure --topology torus:8x8
seed=${OFC_CRASH_SEED:-$$}
echo "ofcd: kill -9 seed $seed"
journals=0
i=1
while [ $i -le 6 ]; do
	cur=$($OFC --socket "$SOCK" status --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s.get("topology",{}).get("spec",""))')
	next=torus:8x8
	[ "$cur" = torus:8x8 ] && next=circulant:64:3,8
	$OFC --socket "$SOCK" reconfigure --topology "$next" >/dev/null 2>&1 &
	rc_pid=$!
	# a random moment of the transaction, once it is applying
	ms=$(python3 -c "import random; random.seed($seed * 10 + $i); print(random.randint(0, 250))")
	wait_state '"transaction" in j and j["transaction"]["state"]=="applying"' || bad "run $i: no transaction"
	sleep "$(printf '0.%03d' "$ms")"
	kill -9 "$ofcd_pid"
	wait "$ofcd_pid" 2>/dev/null
	wait "$rc_pid" 2>/dev/null
	[ -e "$ST/torus64-ocs.journal" ] && journals=$((journals + 1))
	# Restart: the journal is resolved, and what the daemon serves is what
	# the switch holds.
	start_ofcd d3.log --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device "$DEV" --probe-interval 0
	[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "run $i: journal left after restart"
	state_is '"transaction" not in s and s["at_target"] and s["topology"]["spec"]==s["target_topology"]'
	consistent && ok || bad "run $i (kill after $ms ms): record and switch disagree"
	i=$((i + 1))
done
echo "ofcd: 6 kills during a reconfigure, $journals left a journal"
[ $journals -ge 3 ] && ok || bad "only $journals kills left a transaction to recover (seed $seed)"
grep -q "recovered an unfinished transaction from the journal" "$TMP/d3.log" && ok || bad "no recovery logged"

# ---- SIGHUP: a good config is applied, a bad one rejected ------------------------------
cp "$TORUS" "$TMP/live.yaml"
expect_exit 0 stop_ofcd
rm -f "$SOCK"
# The same switch, without the kills' 10 ms a cross-connect: nothing here
# needs a transaction to last (two full rewirings took 5 s).
stop_emu "$k_pid"
start_emu ocs-emu h --ports 256 --credentials configs/credentials/ocs0.cred --state "$TMP/k.state"
DEV="ocs0=127.0.0.1:$h_port"
# Its planners through a wrapper that counts the config picks (below) and
# kills them while $TMP/config.kill exists.
cat >"$TMP/config-planner" <<EOF
#!/bin/sh
case " \$* " in *" --for config "*)
	echo "started \$(date +%T.%N)" >>"$TMP/config.starts"
	[ -e "$TMP/config.kill" ] && kill -9 \$\$ ;;
esac
exec "$(cd "$BUILD" && pwd)/ofc-planner" "\$@"
EOF
chmod +x "$TMP/config-planner"
export OFC_PLANNER="$TMP/config-planner"
start_ofcd d4.log --config "$TMP/live.yaml" --socket "$SOCK" --state-dir "$ST" --device "$DEV" --probe-interval 0 \
	--max-frame 64KiB
unset OFC_PLANNER
$OFC --socket "$SOCK" reconfigure --topology torus:8x8 >/dev/null 2>&1
cp "$CIRC" "$TMP/live.yaml"
kill -HUP "$ofcd_pid"
wait_state 'j["topology"]["spec"]=="circulant:64:3,8" and "transaction" not in j' && ok || bad "SIGHUP did not apply the new config"
printf 'name: torus64-ocs\nhosts: {count: 64, prefix: h, ports: 4}\ntopology: torus:8x8\nextra: 1\n' >"$TMP/live.yaml"
GEN=$($OFC --socket "$SOCK" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["config_generation"])')
kill -HUP "$ofcd_pid"
i=0
until grep -q "config rejected" "$TMP/d4.log" || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "config rejected: $TMP/live.yaml:4:1: unknown key 'extra'" "$TMP/d4.log" && ok || bad "bad reload not logged" "$(tail -3 "$TMP/d4.log")"
state_is 's["topology"]["spec"]=="circulant:64:3,8" and s["target_topology"]=="circulant:64:3,8" and s["config_generation"]=='"$GEN"
# A schedule larger than --max-frame: a valid request the daemon's limit
# stopped (exit 1), with the way to ask for less in both clients' words.
PY_PB=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY_PB=/usr/bin/python3
# -o asks for a stream: the same schedule arrives, in frames of
# at most --max-frame / 64 transfers (its steps split with continues_step).
for t in "" "--topology torus:8x8"; do
	# shellcheck disable=SC2086
	expect_exit 1 $OFC --socket "$SOCK" schedule --collective allgather --size 1MiB $t --json
	grep -q "^ofc: the bfb schedule (4[0-9]* transfers in [0-9]* steps) does not fit in a frame of 64 KiB: ask for the figures alone (summary_only; ofc --socket PATH schedule --summary), ask with stream (ofc --socket PATH schedule -o FILE streams), or run ofcd with a larger --max-frame" "$TMP/err" &&
		ok || bad "GetSchedule $t over --max-frame" "$(head -c 400 "$TMP/err")"
	# shellcheck disable=SC2086
	expect_exit 0 $OFC --socket "$SOCK" schedule --collective allgather --size 1MiB $t -o "$TMP/big.pb"
	# shellcheck disable=SC2086
	$OFC schedule ${t:-"$CIRC"} --collective allgather --size 1MiB --format pb -o "$TMP/ref.pb" >/dev/null 2>&1
	$PY_PB -c 'import sys; sys.path.insert(0, sys.argv[3])
from ofc_client.pb import schedule_pb2 as s
a, b = (s.Schedule.FromString(open(f, "rb").read()) for f in sys.argv[1:3])
sys.exit(0 if a.steps == b.steps and sum(len(x.transfers) for x in a.steps) > 4000 else 1)' "$TMP/big.pb" "$TMP/ref.pb" "$BUILD/python" &&
		ok || bad "the streamed GetSchedule $t decodes to the local schedule"
done
expect_stdout_has "verified     yes" $OFC --socket "$SOCK" schedule --collective allgather --size 1MiB --summary
# topology: auto is picked as ofcd loads the config (a reload, ApplyConfig,
# --check) by a planner process, `ofc-planner --for config` (ofcd links no
# finder): the CLI's pick. A planner killed twice refuses the config with
# the reason; ofcd keeps serving the config it has.
sed 's/^topology: .*/topology: auto/' "$TORUS" >"$TMP/auto.yaml"
sed 's/size: 64MiB/size: 4KiB/' "$TMP/auto.yaml" >"$TMP/auto-small.yaml"
spec_of() { $OFC show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["spec"])'; }
big=$(spec_of "$TMP/auto.yaml")
small=$(spec_of "$TMP/auto-small.yaml")
[ -n "$big" ] && [ -n "$small" ] && [ "$big" != "$small" ] && ok || bad "the CLI's picks: '$big' and '$small'"
cp "$TMP/auto.yaml" "$TMP/live.yaml"
kill -HUP "$ofcd_pid"
wait_state 'j["topology"]["spec"]=="'"$big"'" and j["target_topology"]=="'"$big"'" and "transaction" not in j' &&
	[ "$(wc -l <"$TMP/config.starts")" -eq 1 ] && ok ||
	bad "a reload of topology: auto: not $big, picked by one planner" "$(cat "$TMP/config.starts")" "$(tail -3 "$TMP/d4.log")"
GEN=$($OFC --socket "$SOCK" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["config_generation"])')
touch "$TMP/config.kill"
echo "apply $(date +%T.%N)" >>"$TMP/config.starts"
expect_exit 2 $OFC --socket "$SOCK" apply "$TMP/auto-small.yaml"
echo "answered $(date +%T.%N)" >>"$TMP/config.starts"
# (the planners this ApplyConfig started: two, the starts' lines between its own)
grep -q "^$TMP/auto-small.yaml:31:11: topology 'auto': the planner process picking it was killed by SIGKILL (by ofcd past the request's time limit, or from outside) (the one before it was killed by SIGKILL" "$TMP/err" &&
	[ "$(sed -n '/^apply /,/^answered /p' "$TMP/config.starts" | grep -c '^started')" -eq 2 ] && ok ||
	bad "ApplyConfig with its pick's planner killed twice: refused with the reason" "$(cat "$TMP/err")" "$(cat "$TMP/config.starts")"
state_is 's["topology"]["spec"]=="'"$big"'" and s["target_topology"]=="'"$big"'" and s["config_generation"]=='"$GEN"
rm "$TMP/config.kill"
expect_stdout_has "committed transaction" $OFC --socket "$SOCK" apply "$TMP/auto-small.yaml"
state_is 's["topology"]["spec"]=="'"$small"'" and s["config_generation"]=='"$((GEN + 1))"
expect_stdout_has "topology $big: ok" $OFCD --check --config "$TMP/auto.yaml"
expect_error 1 "$TMP/auto.yaml:31:11: topology 'auto': the planner process picking it could not start: the planner program $TMP/none: No such file or directory (the one before it could not start: the planner program $TMP/none: No such file or directory)" \
	env OFC_PLANNER="$TMP/none" $OFCD --check --config "$TMP/auto.yaml"
expect_exit 0 stop_ofcd

# ---- a journal left by a killed `ofc apply` is repaired when ofcd starts -------------------
stop_emu "$h_pid"
start_emu ocs-emu j --ports 256 --credentials configs/credentials/ocs0.cred --delay-ms 2
DEV="ocs0=127.0.0.1:$j_port"
$OFC apply "$TORUS" --device "$DEV" --state-dir "$ST" >/dev/null 2>&1
$OFC apply "$CIRC" --device "$DEV" --state-dir "$ST" >/dev/null 2>&1 &
a_pid=$!
i=0
until [ -e "$ST/torus64-ocs.journal" ] || [ $i -ge 500 ]; do sleep 0.005; i=$((i + 1)); done
sleep 0.1
kill -9 $a_pid
wait $a_pid 2>/dev/null
[ -e "$ST/torus64-ocs.journal" ] && ok || bad "the killed apply left no journal"
start_ofcd d5.log --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device "$DEV" --probe-interval 0 \
	--max-request-time 1ms
grep -q "recovered an unfinished transaction from the journal" "$TMP/d5.log" && ok || bad "start-up recovery" "$(cat "$TMP/d5.log")"
[ ! -e "$ST/torus64-ocs.journal" ] && ok || bad "journal left after start"
state_is '"transaction" not in s and s["at_target"]'
# --max-request-time: a GetSchedule past it fails with the phase it reached.
expect_exit 1 $OFC --socket "$SOCK" schedule --collective allreduce --algo swing --topology torus:16x16 --size 1MiB --summary
grep -q "time limit 1 ms reached in \(generation\|verification\)" "$TMP/err" &&
	ok || bad "GetSchedule past --max-request-time" "$(head -c 400 "$TMP/err")"
# A second daemon: same socket, or same fabric elsewhere, refused.
expect_error 1 "ofcd: fabric 'torus64-ocs' is held by ofcd (pid $ofcd_pid), which changes its devices: use \`ofc --socket $SOCK apply\` (or reconfigure)" \
	$OFCD --foreground --config "$TORUS" --socket "$TMP/other.sock" --state-dir "$ST" --device "$DEV"
expect_exit 0 stop_ofcd

# ---- daemonized, with device probes ------------------------------------------------------------
# Logs go to --log-file (this machine may have no syslog: /dev/log), the
# pid to --pid-file before the parent returns; the device is read once at
# start and the log says what it holds.
$OFCD --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device "$DEV" --probe-interval 200ms \
	--log-file "$TMP/dd.log" --pid-file "$TMP/dd.pid"
[ $? -eq 0 ] && ok || bad "ofcd did not daemonize"
DPID=$(cat "$TMP/dd.pid")
DAEMONS="$DAEMONS $DPID"
expect_json "j['daemon_pid']==$DPID" $OFC --socket "$SOCK" status --json
wait_state 'j["devices"][0].get("reachable") is True and j["devices"][0].get("in_sync") is True' && ok || bad "probe: device not seen"
# what ofcd counted talking to it (its ofc_device_* series): the last
# contact recent, the commands counted, none failed
wait_state 'int(j["devices"][0].get("last_contact_unix_ms", 0)) > (__import__("time").time() - 30) * 1000 and int(j["devices"][0].get("commands", 0)) > 0 and int(j["devices"][0]["errors"]) == 0' &&
	ok || bad "probe: the device's last contact and counts" "$($OFC --socket "$SOCK" status --json | head -c 1500)"
i=0
until grep -q "start check: 1 device" "$TMP/dd.log" || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "ofcd\[$DPID\] notice: start check: ocs0 reachable, 256 entries, as the record says" "$TMP/dd.log" &&
	grep -q "notice: start check: 1 device: 1 reachable, 1 as recorded, 0 not, 0 with nothing recorded yet" "$TMP/dd.log" &&
	ok || bad "start check not logged" "$(cat "$TMP/dd.log")"
expect_error 1 "ofcd: another ofcd is serving $SOCK already" $OFCD --foreground --config "$TORUS" --socket "$SOCK" --state-dir "$TMP/st2"
# The device goes away: the probe says so, and says when it is back.
stop_emu "$j_pid"
wait_state 'j["devices"][0].get("reachable") is False and "Connection refused" in j["devices"][0].get("error","")' && ok || bad "probe: lost device not seen"
wait_state 'int(j["devices"][0].get("errors", 0)) > 0' && ok || bad "probe: the lost device's errors counted"
kill -TERM "$DPID"
i=0
while kill -0 "$DPID" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
[ ! -e "$SOCK" ] && ok || bad "daemonized ofcd did not stop"
[ ! -e "$TMP/dd.pid" ] && grep -q "notice: stopped: " "$TMP/dd.log" && ok || bad "pid file left, or the stop not logged"

# ---- a new operator's start: each refusal names the path and the option -----------
# Without syslog a detached ofcd would lose every line: it refuses, unless
# told where to log.
if [ ! -e /dev/log ]; then
	expect_error 2 "ofcd: logs would go to syslog, and this machine has none (/dev/log: No such file or directory): pass --log-file FILE, or --foreground to log to stderr" \
		$OFCD --config "$TORUS" --socket "$SOCK" --state-dir "$TMP/st-log"
else
	echo "ofcd: /dev/log exists here: the refusal to detach without a log is not tested"
fi
expect_error 2 "ofcd: --socket $TMP/run/ofcd.sock: no directory $TMP/run (create it, or give --socket a path in a directory that exists)" \
	$OFCD --foreground --config "$TORUS" --socket "$TMP/run/ofcd.sock" --state-dir "$TMP/st-new"
expect_error 2 "ofcd: --ro-socket $TMP/run/ro.sock: no directory $TMP/run (create it, or give --ro-socket a path in a directory that exists)" \
	$OFCD --foreground --config "$TORUS" --socket "$SOCK" --ro-socket "$TMP/run/ro.sock" --state-dir "$TMP/st-new"
expect_error 2 "ofcd: --pid-file $TMP/run/ofcd.pid: no directory $TMP/run (create it, or give --pid-file a path in a directory that exists)" \
	$OFCD --foreground --config "$TORUS" --socket "$SOCK" --state-dir "$TMP/st-new" --pid-file "$TMP/run/ofcd.pid"
expect_error 2 "ofcd: --log-file $TMP/run/ofcd.log: no directory $TMP/run (create it, or give --log-file a path in a directory that exists)" \
	$OFCD --config "$TORUS" --socket "$SOCK" --state-dir "$TMP/st-new" --log-file "$TMP/run/ofcd.log"
# Refused before the lock: no state directory, no lock file left behind.
[ ! -e "$TMP/st-new" ] && ok || bad "a refused start left $(ls -R "$TMP/st-new")"
# The default credentials directory of an install, missing here: named,
# with the option and where the config's file is.
expect_error 2 "$TMP/torus.yaml:22:20: credentials 'ocs0.cred' of ocs0: credentials directory $TMP/creds: No such file or directory (ofcd reads credentials only from --credentials-dir DIR; this one is in $TMP)" \
	$BUILD/ofcd --foreground --config "$TORUS" --socket "$SOCK" --state-dir "$TMP/st-new" --credentials-dir "$TMP/creds"
# A device that is not there at start, and one changed while ofcd was
# down, are in the log at once (not after --probe-interval).
start_ofcd d7.log --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device ocs0=127.0.0.1:1 --probe-interval 1h
i=0
until grep -q "start check: 1 device" "$TMP/d7.log" || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "warning: start check: ocs0 unreachable: ocs0: cannot connect to 127.0.0.1:1: Connection refused (is the device, or its emulator build/ocs-emu, listening there? --device ocs0=HOST:PORT reaches it elsewhere)" "$TMP/d7.log" &&
	grep -q "warning: start check: 1 device: 0 reachable, 0 as recorded, 0 not, 0 with nothing recorded yet" "$TMP/d7.log" &&
	ok || bad "unreachable device at start not logged" "$(cat "$TMP/d7.log")"
expect_exit 0 stop_ofcd
start_emu ocs-emu z --ports 256 --credentials configs/credentials/ocs0.cred
start_ofcd d8.log --config "$TORUS" --socket "$SOCK" --state-dir "$ST" --device "ocs0=127.0.0.1:$z_port"
i=0
until grep -q "start check: 1 device" "$TMP/d8.log" || [ $i -ge 500 ]; do sleep 0.01; i=$((i + 1)); done
grep -q "warning: start check: ocs0 reachable, 0 entries, NOT as the record says" "$TMP/d8.log" &&
	ok || bad "a device changed while ofcd was down: not logged at start" "$(cat "$TMP/d8.log")"
expect_exit 0 stop_ofcd
stop_emu "$z_pid"

# ---- a WDM ring fabric ----------------------------------------------------------------------
start_emu mrr-emu m --nodes 8 --wavelengths 4 --interfaces 2 --mrrs 4
start_ofcd d6.log --config tests/configs/ring8-mrr.yaml --socket "$SOCK" --state-dir "$ST" \
	--device "ring0=127.0.0.1:$m_port" --probe-interval 0
expect_stdout_has "committed transaction 1: 8 operations" $OFC --socket "$SOCK" apply tests/configs/ring8-mrr.yaml
state_is 's["devices"][0]["kind"]=="ring" and len(s["devices"][0]["lightpaths"])==4 and s["devices"][0]["entries"]==8 and s["at_target"]'
# OpTree on the ring: the same ofc.v1.Schedule as `ofc schedule FILE`.
expect_stdout_has "verified     yes" $OFC --socket "$SOCK" schedule --collective allgather -o "$TMP/ring-remote.pb"
expect_exit 0 $OFC schedule tests/configs/ring8-mrr.yaml --collective allgather --format pb -o "$TMP/ring-local.pb"
protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/ring-remote.pb" >"$TMP/ring-remote.txt" &&
	protoc --decode=ofc.v1.Schedule -I. proto/schedule.proto <"$TMP/ring-local.pb" >"$TMP/ring-local.txt" &&
	cmp -s "$TMP/ring-remote.txt" "$TMP/ring-local.txt" && grep -q 'algorithm: "optree"' "$TMP/ring-remote.txt" &&
	grep -q "wavelength:" "$TMP/ring-remote.txt" && ok ||
	bad "GetSchedule on the ring differs from ofc schedule" "$(diff "$TMP/ring-remote.txt" "$TMP/ring-local.txt" | head -5)"
for a in ring ne onestage; do
	same_schedule "ring allgather $a" --collective allgather --algo $a -- \
		tests/configs/ring8-mrr.yaml --collective allgather --algo $a
done
expect_json 'j["algorithm"]=="ne" and j["verified"]' \
	$OFC --socket "$SOCK" schedule --collective allgather --algo ne --summary --json
# Every collective on the ring, the daemon's the same as the CLI's.
same_schedule "ring allreduce optree" --collective allreduce --algo optree -- \
	tests/configs/ring8-mrr.yaml --collective allreduce --algo optree
# An all-to-all without --algo: the ring's own default, one stage of direct
# lightpaths (the all-gather's optree was tried, and refused).
same_schedule "ring alltoall default" --collective alltoall -- \
	tests/configs/ring8-mrr.yaml --collective alltoall
expect_error 2 "ofc: fabric 'ring8' has no circuit switch to rewire: change its lightpaths with ApplyConfig" \
	$OFC --socket "$SOCK" reconfigure --topology ring:8
expect_exit 0 stop_ofcd
# The state's schedule on a WDM ring (OpTree, the config's allgather) is
# computed in a planner process as the snapshot is built (ofcd links no
# OpTree for it): the figures `ofc schedule FILE` gives. A planner that
# dies costs one more, a second the schedule, the log naming how both
# ended; ofcd goes on.
{ cat tests/configs/ring8-mrr.yaml; printf 'collectives:\n  - op: allgather\n    size: 4MiB\n'; } >"$TMP/ring8-ag.yaml"
want=$($OFC schedule "$TMP/ring8-ag.yaml" --collective allgather --json | python3 -c 'import json, sys; print(repr(json.load(sys.stdin)["time_us"]))')
start_ofcd d6b.log --config "$TMP/ring8-ag.yaml" --socket "$SOCK" --state-dir "$ST" \
	--device "ring0=127.0.0.1:$m_port" --probe-interval 0
state_is 's["schedule"]["algorithm"]=="optree" and s["schedule"]["verified"] and s["schedule"]["time_us"]=='"${want:-None}"
expect_exit 0 stop_ofcd
cat >"$TMP/dying-planner" <<EOF
#!/bin/sh
case " \$* " in *" --for summary "*)
	echo "started after \$(grep -c 'no OpTree schedule' "$TMP/d6c.log") refusals" >>"$TMP/dying.starts"
	kill -9 \$\$ ;;
esac
exec "$(cd "$BUILD" && pwd)/ofc-planner" "\$@"
EOF
chmod +x "$TMP/dying-planner"
export OFC_PLANNER="$TMP/dying-planner"
start_ofcd d6c.log --config "$TMP/ring8-ag.yaml" --socket "$SOCK" --state-dir "$ST" \
	--device "ring0=127.0.0.1:$m_port" --probe-interval 0
unset OFC_PLANNER
deadline 60
until grep -q "no OpTree schedule" "$TMP/d6c.log" || past $_end; do sleep 0.02; done
# (Counted as each planner starts, with the refusals logged by then: two
# at least before the refusal. More may start: under the sanitizers the
# state's schedule was asked for a second time before the first
# ask's refusal was logged; each ask has its one retry, as its line says.)
grep -q "no OpTree schedule: the planner process computing it was killed by SIGKILL (by ofcd past the request's time limit, or from outside) (the one before it was killed by SIGKILL" "$TMP/d6c.log" &&
	[ "$(grep -c '^started after 0 refusals$' "$TMP/dying.starts")" -ge 2 ] && ok ||
	bad "a ring's planner killed twice: one retry, then the refusal naming the signal" "$(grep -i optree "$TMP/d6c.log"; cat "$TMP/dying.starts")"
state_is '"schedule" not in s and len(s["devices"]) == 1'
expect_exit 0 stop_ofcd

# ---- a config's algorithm for its all-to-all is the workload's ---------------------
# (not the MCF lowered to paths, which the workload's plan asked for whatever
# the config named, and which a direct all-to-all refuses)
sed -e 's/size: 16MiB/size: 1MiB\n    algorithm: direct/' "$TORUS" | sed '/op: allreduce/,+1d' >"$TMP/a2a.yaml"
rm -rf "$ST"
start_emu ocs-emu a --ports 256 --credentials configs/credentials/ocs0.cred
# its own log (d7.log already holds an earlier daemon's "schedule re-planned")
start_ofcd d9.log --config "$TMP/a2a.yaml" --socket "$SOCK" --state-dir "$ST" \
	--device "ocs0=127.0.0.1:$a_port" --probe-interval 0
deadline 60
until grep -q "schedule re-planned\|no schedule" "$TMP/d9.log" || past $_end; do sleep 0.02; done
grep -q "schedule re-planned: .*direct alltoall on torus:8x8: .*, verified" "$TMP/d9.log" && ok ||
	bad "the workload's all-to-all should be the config's direct" "$(grep -i schedule "$TMP/d9.log" | tail -3)"
same_schedule "alltoall by the config's algorithm" --collective alltoall -- "$TMP/a2a.yaml" --collective alltoall
expect_exit 0 stop_ofcd
stop_emu "$a_pid"

# ---- the systemd unit and its sample options name options ofcd has ------------------
$OFCD --help >"$TMP/help"
opts=$(sed -n 's/^Exec[A-Za-z]*=[^ ]*ofcd //p' contrib/ofcd.service | grep -o -- '--[a-z-]*')
sample=$(. ./contrib/ofcd.conf && echo "$OFCD_OPTS")
n=0
for o in $opts $(echo "$sample" | grep -o -- '--[a-z-]*'); do
	grep -q -- "^  $o " "$TMP/help" || bad "contrib: ofcd has no option $o"
	n=$((n + 1))
done
[ $n -ge 10 ] && ok || bad "contrib: only $n options found"
# The sample values parse (all but the group, which this machine may lack).
expect_stdout_has ": ok" $OFCD --check --config "$TORUS" $(echo "$sample" | sed 's/--admin-group [^ ]*//')

finish
