#!/bin/sh
# ofc-hostd, a host's agent, on 4 hosts made here as network namespaces
# with a veth per committed circuit (o<p> at its source, i<q> at its end,
# as the testbed names them), lldpd in each: every agent reports its ports
# to ofcd through its socket. A link taken down in a host's namespace
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

NS="hd$$"
SOCK="$TMP/ofcd.sock"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
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
name: hostd
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

# The hosts: a namespace each, a veth per committed circuit.
$OFC --socket "$SOCK" status --json >"$TMP/state.json"
for h in 0 1 2 3; do ip netns add "$NS-h$h" && ip -n "$NS-h$h" link set lo up; done
python3 - "$TMP/state.json" >"$TMP/veths" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for d in j["devices"]:
    for c in d.get("circuits", []):
        print(c["src_host"], c["src_port"], c["dst_host"], c["dst_port"])
PY
while read -r sh sp dh dp; do
	ip link add "o$sp" netns "$NS-$sh" type veth peer name "i$dp" netns "$NS-$dh" &&
		ip -n "$NS-$sh" link set "o$sp" up && ip -n "$NS-$dh" link set "i$dp" up
done <"$TMP/veths"
[ "$(wc -l <"$TMP/veths")" -eq 8 ] && ok || bad "8 circuits of biring:4" "$(cat "$TMP/veths")"

start_host() { # N: lldpd and the agent in host hN's namespace
	ip netns exec "$NS-h$1" lldpd -d -u "$TMP/lldp-h$1.sock" -I 'o*,i*' \
		>"$TMP/lldpd-h$1.log" 2>&1 &
	eval "lldpd_h$1=$!"
	PIDS="$PIDS $!"
	$HOSTD --host "h$1" --testbed-ports 2 --netns "$NS-h$1" --lldp-socket "$TMP/lldp-h$1.sock" \
		--socket "$SOCK" --interval 0.5 >"$TMP/hostd-h$1.log" 2>&1 &
	PIDS="$PIDS $!"
}
for h in 0 1 2 3; do start_host $h; done

# wait_for 'PYTHON-EXPR' WHAT: ofc status --json satisfies it within 20 s.
wait_for() {
	deadline 20 _w
	until $OFC --socket "$SOCK" status --json >"$TMP/st.json" 2>/dev/null &&
		python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$TMP/st.json"; do
		past $_w && { bad "$2" "$(head -c 600 "$TMP/st.json")" "$(tail -n 3 "$TMP"/hostd-h*.log)"; return 1; }
		sleep 0.2
	done
	ok
}
wait_for 'not j.get("failed")' "no failure while every link is up"
deadline 20 _w
until grep -q "host h0: 2 of 2 ports up.*lldpd answers" "$TMP/hostd-h0.log" || past $_w; do sleep 0.2; done
grep -q "host h0: 2 of 2 ports up, 0 held failed (0 suppressed); lldpd answers" "$TMP/hostd-h0.log" &&
	ok || bad "h0's agent says what ofcd took" "$(cat "$TMP/hostd-h0.log")"

# h2's port 1 down in its namespace: the failure h2:1; up: restored after
# the hold-down (1 s), as ofc fail and ofc restore would.
ip -n "$NS-h2" link set i1 down
wait_for '"h2:1" in j.get("failed", [])' "h2:1 failed once its link went down"
ip -n "$NS-h2" link set i1 up
wait_for '"h2:1" not in j.get("failed", [])' "h2:1 restored after the hold-down"
grep -q "host h2's link h2:1 down" "$TMP/ofcd.log" &&
	ok || bad "ofcd's log names the host's link" "$(grep -i h2:1 "$TMP/ofcd.log" | head -5)"

# h1's port 0 flapping (5 bounces, 0.4 s apart): failed once, held failed
# while suppressed though it is up past the hold-down, then restored once
# the penalty has decayed (a 2 s half-life, at most 4 s suppressed here):
# two re-plans in all, not ten.
replans() { $OFC --socket "$SOCK" metrics | sed -n 's/^ofc_replans_total //p'; }
r0=$(replans)
for i in 1 2 3 4 5; do
	ip -n "$NS-h1" link set i0 down && sleep 0.2 && ip -n "$NS-h1" link set i0 up && sleep 0.2
done
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
# Two fibres swapped behind ofc's back (h0:0's and h2:0's circuits' far
# ends exchanged): the switch still holds what ofc asked for, the hosts
# hear the difference, and ofcd names it.
set -- $(grep '^h0 0 ' "$TMP/veths") && a_dst=$3 a_port=$4
set -- $(grep '^h2 0 ' "$TMP/veths") && b_dst=$3 b_port=$4
ip -n "$NS-h0" link del o0 && ip -n "$NS-h2" link del o0
ip link add o0 netns "$NS-h0" type veth peer name "i$b_port" netns "$NS-$b_dst" &&
	ip link add o0 netns "$NS-h2" type veth peer name "i$a_port" netns "$NS-$a_dst" &&
	ip -n "$NS-h0" link set o0 up && ip -n "$NS-h2" link set o0 up &&
	ip -n "$NS-$b_dst" link set "i$b_port" up && ip -n "$NS-$a_dst" link set "i$a_port" up
wait_metric 'ofc_wiring_links{verdict="miswired"} 2' "the swapped pair found miswired"
grep -qF "wiring: h0:0 reaches $b_dst:$b_port where the record's circuits give $a_dst:$a_port (and $b_dst:$b_port should hear h2:0)" "$TMP/ofcd.log" &&
	ok || bad "ofcd names the swapped fibre" "$(grep wiring "$TMP/ofcd.log")"

# lldpd stopped on h3: its agent says so, and keeps reporting its links.
kill "$lldpd_h3"
deadline 20 _w
until grep -q "lldpd does not answer" "$TMP/hostd-h3.log" || past $_w; do sleep 0.2; done
wait_metric 'ofc_wiring_links{verdict="not-seen"} 2' "h3's circuits in: not seen, once its lldpd is gone"
grep -q "ofc-hostd: h3: lldpd does not answer at $TMP/lldp-h3.sock (.*): no LLDP neighbours, wiring not seen" "$TMP/hostd-h3.log" &&
	ok || bad "h3's agent says lldpd is gone" "$(cat "$TMP/hostd-h3.log")"

finish
