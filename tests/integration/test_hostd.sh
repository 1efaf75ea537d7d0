#!/bin/sh
# ofc-hostd, a host's agent, on the 4 hosts of a testbed ofcd brings up
# (network namespaces, a veth per committed circuit: o<p> at its source,
# i<q> at its end), lldpd in each: every agent reports its ports to ofcd
# through its socket. The faults are made with `ofc testbed link` and
# `ofc testbed miswire`, behind ofc's back. A link taken down in a host's namespace
# becomes the failure HOST:PORT in ofcd's state (as `ofc fail` makes it),
# restored once it has stayed up for the hold-down; lldpd stopped on a
# host is said by its agent. Bad options are refused by name.
SUITE=hostd
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

HOSTD=$BUILD/ofc-hostd
expect_error 2 "ofc-hostd: --host NAME: the fabric host this machine is" $HOSTD --testbed-ports 2
expect_error 2 "ofc-hostd: no ports: --port P=IFNAME... or --testbed-ports N" $HOSTD --host h0
expect_error 2 "ofc-hostd: --port 'eth0': expected P=IFNAME" $HOSTD --host h0 --port eth0
expect_error 2 "ofc-hostd: --interval '0': expected a duration from 50ms to 1h" \
	$HOSTD --host h0 --testbed-ports 2 --interval 0
# A target's option is named in its own messages, after the command line is read.
expect_error 2 "ofc-hostd: --server 'http://x': expected https://HOST:PORT" \
	$HOSTD --host h0 --testbed-ports 2 --server http://x
expect_error 2 "ofc-hostd: --port '0=b': that port is named twice" $HOSTD --host h0 --port 0=a --port 0=b

if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null || ! command -v lldpd >/dev/null; then
	echo "hostd: SKIP the hosts: needs root, network namespaces and lldpd (scripts/install-deps.sh test)"
	finish
	exit $?
fi

FAB="hd$$"
NS="ofc-$FAB"
SOCK="$TMP/ofcd.sock"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	# the hosts' agents stopped by their owner's down, then the namespaces
	[ -f "$TMP/fab.yaml" ] && $OFC testbed down "$TMP/fab.yaml" --state-dir "$TMP/st" >/dev/null 2>&1
	for h in 0 1 2 3; do ip netns del "$NS-h$h" 2>/dev/null; done
	stop_all_emus
	rm_tmp
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# lldpd's clients (lldpcli, as its own user) reach its socket through $TMP
chmod 711 "$TMP"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
cat >"$TMP/fab.yaml" <<EOF
version: 1
name: $FAB
hosts: {count: 4, prefix: h, ports: 2}
switches:
  - name: ocs0
    type: ocs
    ports: 8
    driver: {type: tl1, address: 127.0.0.1:3082, credentials: ocs0.cred, timeout: 2s, retries: 1}
wiring: {pattern: sequential, switches: [ocs0]}
topology: biring:4
EOF
start_emu ocs-emu e --ports 8 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
expect_exit 0 $OFC apply "$TMP/fab.yaml" --device "$DEV" --state-dir "$TMP/st"
$BUILD/ofcd --foreground --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$TMP/st" \
	--device "$DEV" --credentials-dir "$TMP" --probe-interval 0 --link-hold-down 1s \
	--flap-half-life 2s --flap-max-suppress 4s \
	2>>"$TMP/ofcd.log" &
PIDS="$PIDS $!"
deadline 30
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do sleep 0.05; done

# --verify-wiring with no host's agent reporting: nothing to verify the
# commit against, refused (nothing changed) rather than passed.
expect_error 1 "ofc: verify_wiring: nothing to verify the wiring against: no host's agent (ofc-hostd, with lldpd) has reported to this ofcd; nothing changed" \
	$OFC --socket "$SOCK" reconfigure --topology hypercube:2 --verify-wiring
for bad_v in --verify-wiring=0 --verify-wiring=11m --verify-wiring=soon; do
	$OFC --socket "$SOCK" reconfigure --topology hypercube:2 "$bad_v" 2>"$TMP/err"
	[ $? -eq 2 ] && grep -q -- "--verify-wiring" "$TMP/err" && ok || bad "$bad_v refused (exit 2)" "$(cat "$TMP/err")"
done
expect_error 2 "ofc --socket PATH apply: --verify-wiring checks a commit: not with --dry-run" \
	$OFC --socket "$SOCK" apply "$TMP/fab.yaml" --dry-run --verify-wiring=5s
# ... the Python client's the same (and its bounds checked before sending)
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
PYTHONPATH="$BUILD/python" $PY - "$SOCK" <<'PYEOF' && ok || bad "the Python client's verify_wiring_ms"
import sys, ofc_client
c = ofc_client.Client(sys.argv[1])
try:
    c.reconfigure(topology="hypercube:2", verify_wiring_ms=5000)
    sys.exit("verify_wiring_ms without agents taken")
except ofc_client.OfcError as e:
    assert e.status == "STATUS_FAILED" and "nothing to verify the wiring against" in str(e), e
for bad in (0, 600001):
    try:
        c.reconfigure(topology="hypercube:2", verify_wiring_ms=bad)
        sys.exit("verify_wiring_ms=%d taken" % bad)
    except ValueError as e:
        assert "verify_wiring_ms must be 1 to 600000" in str(e), e
PYEOF

# veths: the committed circuits, "SRC_HOST SRC_PORT DST_HOST DST_PORT" a
# line, into $TMP/veths (each a veth pair of the testbed)
veths() {
	$OFC --socket "$SOCK" status --json >"$TMP/state.json"
	python3 - "$TMP/state.json" >"$TMP/veths" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for d in j["devices"]:
    for c in d.get("circuits", []):
        print(c["src_host"], c["src_port"], c["dst_host"], c["dst_port"])
PY
}
# The hosts: the testbed, a namespace each, a veth per committed circuit,
# and lldpd and ofc-hostd started in each namespace by testbed up, the
# agents reporting to this ofcd.
AG="$TMP/st/$FAB.agents"
expect_stdout_has "the hosts' agents: ofc-hostd and lldpd in each of the 4 namespaces (8 started, 0 already running; logs in $AG)" \
	$OFC --socket "$SOCK" testbed up
veths
[ "$(wc -l <"$TMP/veths")" -eq 8 ] && ok || bad "8 circuits of biring:4" "$(cat "$TMP/veths")"
# A swap that would loop a port back to its own host (h0:0 with the port
# of h0:0's neighbour whose circuit comes back to h0) is refused: a loop
# is not a fibre crossed between hosts.
x=$(awk '$1 == "h0" && $2 == 0 {print $3}' "$TMP/veths")
set -- $(awk -v x="$x" '$1 == x && $3 == "h0" {print $2, $4; exit}' "$TMP/veths")
expect_error 2 "ofc: h0:0 and $x:$1 swapped, h0:0 would reach h0:$2, a port of its own host: a loop, not a fibre crossed between hosts" \
	$OFC testbed miswire "$TMP/fab.yaml" h0:0 "$x:$1" --state-dir "$TMP/st"
[ ! -e "$TMP/st/$FAB.miswired" ] && ok || bad "a refused swap is not recorded" "$(cat "$TMP/st/$FAB.miswired")"
# Each recorded process is running in its host's namespace.
inns() { ip netns pids "$NS-h$1" | sort -n | tr '\n' ' '; }
for h in 0 1 2 3; do
	for k in hostd lldpd; do
		read -r pid _ <"$AG/h$h.$k.pid" && inns $h | grep -qw "$pid" ||
			{ bad "h$h's $k recorded and running in $NS-h$h" "$(cat "$AG/h$h.$k.pid")" "$(inns $h)"; continue 2; }
	done
	ok
done
# A second up starts nothing twice: the same agents in each namespace (the
# agents only: the lldpcli an agent runs each turn comes and goes).
agents() {
	for h in 0 1 2 3; do
		for p in $(inns $h); do
			case $(cat /proc/$p/comm 2>/dev/null) in ofc-hostd | lldpd) printf '%s ' "$p" ;; esac
		done
	done
}
before="$(agents)"
expect_stdout_has "(0 started, 8 already running;" $OFC --socket "$SOCK" testbed up
[ "$(agents)" = "$before" ] && [ -n "$before" ] &&
	ok || bad "a second up: the same agents" "$before" "$(agents)"

# wait_for 'PYTHON-EXPR' WHAT: ofc status --json satisfies it within 20 s.
wait_for() {
	deadline 20 _w
	until $OFC --socket "$SOCK" status --json >"$TMP/st.json" 2>/dev/null &&
		python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$TMP/st.json"; do
		past $_w && { bad "$2" "$(head -c 600 "$TMP/st.json")" "$(tail -n 3 "$AG"/h*.hostd.log)"; return 1; }
		sleep 0.2
	done
	ok
}
wait_for 'not j.get("failed")' "no failure while every link is up"
deadline 20 _w
until grep -q "host h0: 2 of 2 ports up.*lldpd answers" "$AG/h0.hostd.log" || past $_w; do sleep 0.2; done
grep -q "host h0: 2 of 2 ports up, 0 held failed (0 suppressed); lldpd answers" "$AG/h0.hostd.log" &&
	ok || bad "h0's agent says what ofcd took" "$(cat "$AG/h0.hostd.log")"

# h2's port 1 down in its namespace: the failure h2:1; up: restored after
# the hold-down (1 s), as ofc fail and ofc restore would.
expect_stdout_has "testbed: h2:1 down (behind ofc's back)" $OFC testbed link "$TMP/fab.yaml" h2:1 down
wait_for '"h2:1" in j.get("failed", [])' "h2:1 failed once its link went down"
expect_exit 0 $OFC testbed link "$TMP/fab.yaml" h2:1 up
wait_for '"h2:1" not in j.get("failed", [])' "h2:1 restored after the hold-down"
grep -q "host h2's link h2:1 down" "$TMP/ofcd.log" &&
	ok || bad "ofcd's log names the host's link" "$(grep -i h2:1 "$TMP/ofcd.log" | head -5)"

# h1's port 0 flapping (5 bounces, 0.4 s apart): failed once, held failed
# while suppressed though it is up past the hold-down, then restored once
# the penalty has decayed (a 2 s half-life, at most 4 s suppressed here):
# two re-plans in all, not ten.
replans() { $OFC --socket "$SOCK" metrics | sed -n 's/^ofc_replans_total //p'; }
r0=$(replans)
expect_stdout_has "testbed: h1:0 flapped" $OFC testbed link "$TMP/fab.yaml" h1:0 flap --count 5 --period 0.4
wait_for '"h1:0" in j.get("failed", [])' "a flapping h1:0 failed"
sleep 1.5 # past the hold-down: still failed, suppressed
$OFC --socket "$SOCK" metrics >"$TMP/m"
grep -qx "ofc_host_links_suppressed 1" "$TMP/m" && grep -qx "ofc_replans_total $((r0 + 1))" "$TMP/m" &&
	ok || bad "h1:0 suppressed after 5 flaps, re-planned once" "$(grep -E 'ofc_host|replans_total' "$TMP/m")" "before: $r0"
wait_for '"h1:0" not in j.get("failed", [])' "h1:0 restored once its penalty decayed"
[ "$(replans)" -eq $((r0 + 2)) ] && ok || bad "the flapping port: two re-plans" "$r0 -> $(replans)"

# The wiring: every circuit's end hears its source over LLDP.
wait_metric() { # 'TEXT' WHAT: ofc metrics prints the line TEXT within 20 s
	deadline 20 _w
	until $OFC --socket "$SOCK" metrics 2>/dev/null | grep -qxF "$1"; do
		past $_w && { bad "$2" "$($OFC --socket "$SOCK" metrics | grep wiring)"; return 1; }
		sleep 0.2
	done
	ok
}
wait_metric 'ofc_wiring_links{verdict="confirmed"} 8' "the 8 circuits confirmed by LLDP"
# ... and in the state: status's line, every link of `ofc wiring` (exit 0)
$OFC --socket "$SOCK" status >"$TMP/status.txt"
grep -q "^  wiring     8 confirmed, 0 miswired, 0 dark, 0 not seen; 4 hosts reporting, the oldest report [0-9.]* s old$" "$TMP/status.txt" &&
	ok || bad "status says the wiring's verdict and age" "$(cat "$TMP/status.txt")"
expect_exit 0 $OFC --socket "$SOCK" wiring
$OFC --socket "$SOCK" wiring >"$TMP/wiring.txt"
[ "$(grep -c '^  h[0-3]:[01] -> h[0-3]:[01]  confirmed (reported [0-9.]* s ago)$' "$TMP/wiring.txt")" -eq 8 ] &&
	ok || bad "ofc wiring lists the 8 links confirmed" "$(cat "$TMP/wiring.txt")"
# Two fibres swapped behind ofc's back (h0:0's and h2:0's circuits' far
# ends exchanged): the switch still holds what ofc asked for, the hosts
# hear the difference, and ofcd names it.
set -- $(grep '^h0 0 ' "$TMP/veths") && a_dst=$3 a_port=$4
set -- $(grep '^h2 0 ' "$TMP/veths") && b_dst=$3 b_port=$4
expect_stdout_has "testbed: h0:0 now reaches $b_dst:$b_port and h2:0 reaches $a_dst:$a_port (behind ofc's back)" \
	$OFC testbed miswire "$TMP/fab.yaml" h0:0 h2:0 --state-dir "$TMP/st"
expect_error 2 "ofc testbed: 'h9:0': fabric $FAB has no host h9" $OFC testbed link "$TMP/fab.yaml" h9:0 down
expect_error 2 "ofc testbed: 'h1:2': host h1 has ports 0..1" $OFC testbed miswire "$TMP/fab.yaml" h0:1 h1:2
expect_error 2 "ofc testbed: link: 'sideways': expected down, up or flap" $OFC testbed link "$TMP/fab.yaml" h1:0 sideways
expect_error 2 "ofc: h0:1 twice: miswire swaps two ports" $OFC testbed miswire "$TMP/fab.yaml" h0:1 h0:1
wait_metric 'ofc_wiring_links{verdict="miswired"} 2' "the swapped pair found miswired"
SAID="h0:0 reaches $b_dst:$b_port where the record's circuits give $a_dst:$a_port (and $b_dst:$b_port should hear h2:0)"
grep -qF "wiring: $SAID" "$TMP/ofcd.log" &&
	ok || bad "ofcd names the swapped fibre" "$(grep wiring "$TMP/ofcd.log")"
# the same words in status, and the two links miswired in `ofc wiring`
# (exit 1: a check) and its JSON, each with what its end hears
$OFC --socket "$SOCK" status >"$TMP/status.txt"
grep -q "^  wiring     6 confirmed, 2 miswired, 0 dark, 0 not seen; 4 hosts reporting" "$TMP/status.txt" &&
	grep -qxF "             $SAID" "$TMP/status.txt" &&
	ok || bad "status names the swapped fibre" "$(cat "$TMP/status.txt")"
expect_exit 1 $OFC --socket "$SOCK" wiring
$OFC --socket "$SOCK" wiring >"$TMP/wiring.txt"
sed 's/ (reported [0-9.]* s ago)$//' "$TMP/wiring.txt" | grep -qxF "  h2:0 -> $b_dst:$b_port  miswired: $SAID" &&
	ok || bad "ofc wiring names the swapped link" "$(cat "$TMP/wiring.txt")"
$OFC --socket "$SOCK" wiring --json >"$TMP/wiring.json"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if sorted((k['src'], k['dst'], k['heard']) for k in j['links'] if k['verdict'] == 'miswired') == sorted([('h0:0', '$a_dst:$a_port', 'h2:0'), ('h2:0', '$b_dst:$b_port', 'h0:0')]) and j['confirmed'] == 6 and all(k['age_seconds'] >= 0 for k in j['links']) else 1)" "$TMP/wiring.json" &&
	ok || bad "ofc wiring --json: the two links miswired, with what each end hears" "$(head -c 1500 "$TMP/wiring.json")"
expect_json "j['wiring']['miswired'] == 2 and j['wiring']['hosts_reporting'] == 4" \
	$OFC --socket "$SOCK" status --json
PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
PYTHONPATH="$BUILD/python" $PY -c "import ofc_client, sys; w = ofc_client.Client(sys.argv[1]).get_state(with_wiring=True).wiring; sys.exit(0 if w.miswired == 2 and sorted(k.src for k in w.links if k.verdict == 'miswired') == ['h0:0', 'h2:0'] else 1)" "$SOCK" &&
	ok || bad "the Python client reads the wiring"

# The swap is cabling, recorded, not a moment. --clear crosses the
# recorded fibres back and forgets them; then a swap made before a commit
# that re-makes the pair's circuits (hypercube:2 moves h1:0's and h3:0's
# circuits) is crossed in the circuits that commit makes, as
# fibres crossed behind the switch stay crossed. Each verdict read from
# reports newer than the step (every link's age under the time since it
# began; ofc wiring exits 1 on a miswiring: a check).
fresh_wiring() { # PYTHON-EXPR WHAT: on reports newer than $T0, within 20 s
	deadline 20 _w
	until e=$(python3 -c "import time; print(time.time() - $T0)") &&
		{ $OFC --socket "$SOCK" wiring --json >"$TMP/w.json" 2>/dev/null || [ $? -eq 1 ]; } &&
		python3 -c "import json,sys; j=json.load(open(sys.argv[1])); L=j['links']; sys.exit(0 if all(k.get('age_seconds', 1e9) < $e for k in L) and ($1) else 1)" "$TMP/w.json"; do
		past $_w && { bad "$2" "since the step: $e s" "$(tr -d " \n" <"$TMP/w.json" | head -c 2500)"; return 1; }
		sleep 0.2
	done
	ok
}
now() { python3 -c 'import time; print(time.time())'; }
expect_error 2 "ofc testbed: miswire --clear: expected FILE alone" \
	$OFC testbed miswire "$TMP/fab.yaml" h0:0 --clear --state-dir "$TMP/st"
T0=$(now)
expect_stdout_has "testbed: 1 miswired pair crossed back (the record cleared)" \
	$OFC testbed miswire "$TMP/fab.yaml" --clear --state-dir "$TMP/st"
[ ! -e "$TMP/st/$FAB.miswired" ] && ok || bad "--clear removes the record" "$(cat "$TMP/st/$FAB.miswired")"
fresh_wiring "len(L) == 8 and j['confirmed'] == 8" "--clear: every circuit confirmed again"
expect_stdout_has "testbed: h1:0 now reaches h0:0 and h3:0 reaches h2:0" \
	$OFC testbed miswire "$TMP/fab.yaml" h1:0 h3:0 --state-dir "$TMP/st"
# --verify-wiring: the commit that re-makes the pair's circuits is not
# confirmed by the hosts' LLDP (the recorded swap crosses them): rolled
# back, the answer naming the pair and what LLDP heard; the record's
# circuits (and the devices', in sync) as before.
circuits() { $OFC --socket "$SOCK" status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(sorted((d["name"], c["src_host"], c["src_port"], c["dst_host"], c["dst_port"]) for d in j["devices"] for c in d.get("circuits", [])), all(d.get("in_sync", True) for d in j["devices"]))'; }
before="$(circuits)"
$OFC --socket "$SOCK" reconfigure --topology hypercube:2 --verify-wiring=30s --timeout 90 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "not confirmed by the hosts' LLDP (one heard miswired): " "$TMP/err" &&
	grep -qE "h1:0 -> h[0-3]:[01] miswired: h3:0 reaches h[0-3]:[01] where|h3:0 -> h[0-3]:[01] miswired: h1:0 reaches h[0-3]:[01] where" "$TMP/err" &&
	grep -q "; rolled back: transaction [0-9]* restored the config and topology before it" "$TMP/err" &&
	ok || bad "--verify-wiring onto the swapped pair: not confirmed, rolled back" "exit $rc" "$(cat "$TMP/err")"
[ "$(circuits)" = "$before" ] && ok || bad "rolled back: the circuits as before" "$before" "$(circuits)"
grep -q "wiring: .* not confirmed by the hosts' LLDP.*; rolling back" "$TMP/ofcd.log" &&
	ok || bad "ofcd's log says the wiring was not confirmed" "$(grep -i wiring "$TMP/ofcd.log" | tail -3)"
# ... and an ApplyConfig's, by its deadline: 1 s is less than the hosts'
# LLDP time to live (4 s), so nothing its circuits' ends hear yet counts:
# what a port holds from before the commit is not heard anew, or it holds
# nothing (not seen, or dark where lldpd dropped the neighbour when the
# circuit moved); rolled back, the config before running again with its topology.
sed 's/^topology: biring:4$/topology: hypercube:2/' "$TMP/fab.yaml" >"$TMP/fab2.yaml"
$OFC --socket "$SOCK" apply "$TMP/fab2.yaml" --verify-wiring=1s --timeout 90 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -qE "not confirmed by the hosts. LLDP within the deadline: .* (not heard anew|not seen|dark): .*; rolled back: transaction [0-9]* restored the config and topology before it" "$TMP/err" &&
	ok || bad "apply --verify-wiring=1s: not confirmed by its deadline, rolled back" "exit $rc" "$(cat "$TMP/err")"
[ "$(circuits)" = "$before" ] && ok || bad "apply rolled back: the circuits as before" "$before" "$(circuits)"
expect_json "j['target_topology'] == 'biring:4'" $OFC --socket "$SOCK" status --json
T0=$(now)
expect_stdout_has "committed transaction" $OFC --socket "$SOCK" reconfigure --topology hypercube:2 --timeout 60
veths
set -- $(grep '^h1 0 ' "$TMP/veths") && a_dst=$3:$4
set -- $(grep '^h3 0 ' "$TMP/veths") && b_dst=$3:$4
[ "$a_dst" != h2:0 ] && [ "$b_dst" != h0:0 ] && ok || bad "hypercube:2 moves h1:0's and h3:0's circuits" "$(cat "$TMP/veths")"
fresh_wiring "sorted((k['src'], k['heard']) for k in L if k['verdict'] == 'miswired') == [('h1:0', 'h3:0'), ('h3:0', 'h1:0')] and j['miswired'] == 2" \
	"the recorded swap made again by the commit that moved the pair's circuits ($a_dst, $b_dst)"
T0=$(now)
expect_exit 0 $OFC testbed miswire "$TMP/fab.yaml" --clear --state-dir "$TMP/st"
expect_stdout_has "heard at their ends over LLDP in" \
	$OFC --socket "$SOCK" reconfigure --topology circulant:4:1 --verify-wiring=30s --timeout 90
grep -q "; wiring confirmed: the [0-9]* circuits it changed" "$TMP/out" &&
	ok || bad "--verify-wiring with the fault cleared: confirmed" "$(cat "$TMP/out")"
fresh_wiring "len(L) == 8 and j['confirmed'] == 8" "biring:4 again (as circulant:4:1), every circuit confirmed"

# lldpd stopped on h3: its agent says so, and keeps reporting its links.
read -r lldpd_h3 _ <"$AG/h3.lldpd.pid"
kill "$lldpd_h3"
deadline 20 _w
until grep -q "lldpd does not answer" "$AG/h3.hostd.log" || past $_w; do sleep 0.2; done
wait_metric 'ofc_wiring_links{verdict="not-seen"} 2' "h3's circuits in: not seen, once its lldpd is gone"
grep -q "ofc-hostd: h3: lldpd does not answer at /run/lldpd/$NS-h3.socket (.*): no LLDP neighbours, wiring not seen" "$AG/h3.hostd.log" &&
	ok || bad "h3's agent says lldpd is gone" "$(cat "$AG/h3.hostd.log")"
$OFC --socket "$SOCK" wiring >"$TMP/wiring.txt"
[ "$(grep -c -- "-> h3:[01]  not-seen: h3's lldpd does not answer" "$TMP/wiring.txt")" -eq 2 ] &&
	ok || bad "ofc wiring: h3's links not seen, and why" "$(cat "$TMP/wiring.txt")"

# A host's namespace removed by hand: its agent ends on its own, not left
# reporting from a namespace nobody can name.
all="$(for h in 0 1 2 3; do inns $h; done)"
read -r hostd_h1 _ <"$AG/h1.hostd.pid"
ip netns del "$NS-h1"
deadline 20 _w
until ! [ -d "/proc/$hostd_h1" ] || [ "$(sed 's/.*) //' "/proc/$hostd_h1/stat" 2>/dev/null | cut -c1)" = Z ] || past $_w; do sleep 0.2; done
grep -qxF "ofc-hostd: h1: the namespace $NS-h1 is gone: ending" "$AG/h1.hostd.log" &&
	ok || bad "h1's agent ends with its namespace" "$(tail -n 3 "$AG/h1.hostd.log")"

# testbed down stops every process it started, within its deadline, and
# leaves none behind: nothing that ran in a namespace runs on (h1's lldpd
# too, recorded though its namespace's name is gone).
expect_stdout_has "testbed $FAB down: 3 namespaces removed" $OFC --socket "$SOCK" testbed down
left=""
for p in $all; do # (a zombie has ended: its reaper is init, which may be slow)
	st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ] && left="$left $p:$st"
done
[ -z "$left" ] && [ -n "$all" ] && [ ! -e "$AG" ] && [ ! -e "/run/lldpd/$NS-h0.socket" ] &&
	ok || bad "down: no agent left running, their files gone" "ran: $all" "left: $left" "$(ls "$AG" 2>&1)"

finish
