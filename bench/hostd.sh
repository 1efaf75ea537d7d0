#!/bin/sh
# The hosts' agents (ofc-hostd, docs/hosts.md) on the netns testbed, at
# each size of HOSTS (hosts of 2 ports, biring:N, one OCS emulator):
# ofcd runs with its default damping, `ofc --socket S testbed up` starts
# lldpd and an agent in every namespace, then
#   - confirm: seconds from up's answer to every circuit confirmed by LLDP;
#   - miswire: from `ofc testbed miswire` (two fibres swapped) to ofcd
#     counting the pair miswired;
#   - down: from `ofc testbed link H:P down` to the failure in the state,
#     re-planned (the re-plan counter moved);
#   - flap: a port bounced at 1 Hz for FLAP seconds: the re-plans it caused,
#     and whether the state ever showed it up while it was down;
#   - cost: each agent's CPU (percent of a core, over COST seconds of
#     steady reporting, with the lldpcli it runs: its children's time) and
#     resident memory, the mean and the largest.
# Needs root, network namespaces and lldpd; skipped otherwise. Results:
# bench/results/hostd.md.
#   HOSTS="16 64" FLAP=60 COST=20 sh bench/hostd.sh
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
HOSTS=${HOSTS:-16 64}
FLAP=${FLAP:-60}
COST=${COST:-20}
if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null || ! command -v lldpd >/dev/null; then
	echo "hostd bench: SKIP (needs root, network namespaces and lldpd)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ofc-bench.XXXXXX")
chmod 711 "$TMP"
EMU="" OFCD="" CFG=""
stop_size() {
	[ -n "$CFG" ] && $OFC --socket "$TMP/ofcd.sock" testbed down >/dev/null 2>&1
	[ -n "$CFG" ] && $OFC testbed down "$CFG" --state-dir "$TMP/st" >/dev/null 2>&1
	for p in $OFCD $EMU; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	EMU="" OFCD="" CFG=""
}
trap 'stop_size; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP

now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{printf "%.2f", $1 - $2}'; }
metric() { $OFC --socket "$TMP/ofcd.sock" metrics 2>/dev/null | sed -n "s/^$1 //p"; }
# until_ok SECS CMD...: until CMD succeeds (polled every 0.1 s); 1 past SECS
until_ok() {
	_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.1
	done
}
has_metric() { [ "$(metric "$1")" = "$2" ]; }
failed_has() {
	$OFC --socket "$TMP/ofcd.sock" status --json 2>/dev/null |
		python3 -c "import json,sys; sys.exit(0 if sys.argv[1] in json.load(sys.stdin).get('failed', []) else 1)" "$1"
}

echo "| hosts | circuits | confirm s | miswire found s | down failed s | flap ${FLAP} s: re-plans | flap: shown up while down | agent CPU % of a core (mean / max) | agent RSS MB (mean / max) |"
echo "|---|---|---|---|---|---|---|---|---|"
for N in $HOSTS; do
	rm -rf "$TMP/st"
	CFG="$TMP/hd$N.yaml"
	P=$((2 * N))
	cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
	rm -f "$TMP/port"
	$BUILD/ocs-emu --listen 127.0.0.1:0 --port-file "$TMP/port" --ports "$P" \
		--credentials configs/credentials/ocs0.cred >"$TMP/emu.log" 2>&1 &
	EMU=$!
	until_ok 20 test -s "$TMP/port" || { echo "hostd bench: the emulator did not start"; exit 1; }
	cat >"$CFG" <<EOF
version: 1
name: hd$N
hosts: {count: $N, prefix: h, ports: 2}
switches:
  - name: ocs0
    type: ocs
    ports: $P
    driver: {type: tl1, address: 127.0.0.1:$(cat "$TMP/port"), credentials: ocs0.cred, timeout: 5s, retries: 1}
wiring: {pattern: sequential, switches: [ocs0]}
topology: biring:$N
EOF
	$OFC apply "$CFG" --state-dir "$TMP/st" >/dev/null || exit 1
	$BUILD/ofcd --foreground --config "$CFG" --socket "$TMP/ofcd.sock" --state-dir "$TMP/st" \
		--credentials-dir "$TMP" --probe-interval 0 2>"$TMP/ofcd$N.log" &
	OFCD=$!
	until_ok 30 $OFC --socket "$TMP/ofcd.sock" status >/dev/null 2>&1 || exit 1
	$OFC --socket "$TMP/ofcd.sock" testbed up --rate-scale 0.01 >"$TMP/up.log" 2>&1 ||
		{ cat "$TMP/up.log"; exit 1; }
	t=$(now)
	until_ok 120 has_metric 'ofc_wiring_links{verdict="confirmed"}' "$P" && confirm=$(since "$t") || confirm="-"
	# steady reporting: each agent's CPU and memory
	ticks() { for f in "$TMP/st/hd$N.agents"/*.hostd.pid; do read -r p _ <"$f"; sed 's/.*) //' "/proc/$p/stat" | awk -v p="$p" '{print p, $12 + $13 + $14 + $15}'; done | sort; }
	ticks >"$TMP/t0"
	sleep "$COST"
	ticks >"$TMP/t1"
	hz=$(getconf CLK_TCK)
	cpu=$(join "$TMP/t0" "$TMP/t1" | awk -v hz="$hz" -v s="$COST" '{c = 100 * ($3 - $2) / hz / s; t += c; if (c > m) m = c} END {printf "%.2f / %.2f", t / NR, m}')
	rss=$(for f in "$TMP/st/hd$N.agents"/*.hostd.pid; do read -r p _ <"$f"; awk '/^VmRSS:/ {print $2}' "/proc/$p/status"; done |
		awk '{t += $1; if ($1 > m) m = $1} END {printf "%.1f / %.1f", t / NR / 1024, m / 1024}')
	# two fibres swapped: h0:0's and h2:0's circuits' far ends
	t=$(now)
	$OFC testbed miswire "$CFG" h0:0 h2:0 --state-dir "$TMP/st" >/dev/null
	until_ok 60 has_metric 'ofc_wiring_links{verdict="miswired"}' 2 && mis=$(since "$t") || mis="-"
	# a host link down: the failure, re-planned
	r0=$(metric ofc_replans_total)
	t=$(now)
	$OFC testbed link "$CFG" h1:1 down >/dev/null
	until_ok 60 failed_has h1:1 && until_ok 60 sh -c "[ \"\$($OFC --socket $TMP/ofcd.sock metrics | sed -n 's/^ofc_replans_total //p')\" -gt $r0 ]" &&
		down=$(since "$t") || down="-"
	$OFC testbed link "$CFG" h1:1 up >/dev/null
	until_ok 60 sh -c "! $OFC --socket $TMP/ofcd.sock status --json | grep -q '\"h1:1\"'"
	# h3:0 flapping at 1 Hz: re-plans counted; the state sampled while it is down
	r0=$(metric ofc_replans_total)
	$OFC testbed link "$CFG" h3:0 flap --count "$FLAP" --period 1 >/dev/null &
	FL=$!
	hidden=0
	while kill -0 "$FL" 2>/dev/null; do
		# down half of each period: a sample in its middle
		if ip netns exec "ofc-hd$N-h3" ip -o link show i0 2>/dev/null | grep -q "state DOWN" &&
			sleep 0.3 && ip netns exec "ofc-hd$N-h3" ip -o link show i0 | grep -q "state DOWN" &&
			! failed_has h3:0; then
			ip netns exec "ofc-hd$N-h3" ip -o link show i0 | grep -q "state DOWN" && hidden=$((hidden + 1))
		fi
		sleep 0.2
	done
	wait "$FL"
	flaps=$(($(metric ofc_replans_total) - r0))
	echo "| $N | $P | $confirm | $mis | $down | $flaps | $hidden samples | $cpu | $rss |"
	stop_size
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
