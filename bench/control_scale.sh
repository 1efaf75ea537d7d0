#!/bin/sh
# The control plane's scale table (bench/results/cluster.md, "The control plane at
# scale"): for each fabric size, HOSTS hosts of 4 NIC ports, port j of
# every host on ocs-emu switch j (4 switches of HOSTS ports), at the
# squarest torus and reconfigured to a torus of another shape (every
# cross-connect moves), the switches taking no time a change:
#
#   validate, plan, apply   the CLI on the config (`ofc apply` from the first
#                           torus to the second, with a state directory):
#                           wall seconds and peak RSS
#   ofcd apply              one ofcd on the fabric: `ofc --socket S
#                           reconfigure --topology B`, wall seconds; ofcd's
#                           peak RSS (VmHWM) after it; the bytes of
#                           `status --json`
#   3 replicas apply        three replicas (--cluster-ttl 2s) on a 3-member
#                           etcd with its defaults (--max-request-bytes
#                           1.5 MiB): the same reconfigure through the
#                           leader, wall seconds; a follower must then serve
#                           the new topology
#   failover                then the leader killed with kill -9; from the
#                           kill to the new leader's takeover committed (it
#                           must serve the new topology too)
#   killed mid-apply        (MIDKILL=1) the new leader killed with kill -9 in
#                           the middle of a reconfigure back, once its
#                           journal is in etcd; from the kill to the next
#                           leader's takeover, which undoes that journal, read
#                           back from etcd, before it commits (the fabric at
#                           its target after, no transaction left)
#   etcd holds; wrote       the keys etcd holds after the failover and their
#                           values' bytes, of which the parts of values over
#                           one request (controller/reconfig/store_parts.c);
#                           from etcd's history, the most parts one write of
#                           the record and of the journal took, and the
#                           largest transaction etcd took
#
#   sh bench/control_scale.sh [HOSTS...]          # default: 256 1024 4096
#   FAILOVER=0 sh bench/control_scale.sh 8192     # without the replicas
#   MIDKILL=1 sh bench/control_scale.sh 49152 65536
#
# The emulators save their state at most SAVE_MS ms after a change (ocs-emu
# --save-ms; 1000 unless set, 0: after every change, which costs each
# change a write of the whole switch: 30 s instead of 1.2 s for the CLI's
# apply at 8,192 hosts). KEEP_LOGS=DIR keeps the replicas' logs there.
#
# Each size runs alone (its emulators, ofcd and etcd are stopped before the
# next). The machine's load is printed with each row: the figures are wall
# times on whatever else the machine runs.
SUITE=control-scale
cd "$(dirname "$0")/.." || exit 1
# The emulators' state files and etcd's data on a tmpfs where there is one,
# so the switches and etcd do not queue on a disk's writes.
[ -d /dev/shm ] && [ -w /dev/shm ] && : "${TMPDIR:=/dev/shm}" && export TMPDIR
. tests/integration/lib.sh
. tests/integration/emu.sh
. tests/integration/cluster_env.sh
[ $# -gt 0 ] || set -- 256 1024 4096
FAILOVER=${FAILOVER:-1}
SAVE_MS=${SAVE_MS:-1000}
MIDKILL=${MIDKILL:-0}
trap 'kill $EMUS $REPLICA_PIDS $ETCD_PIDS $OFCD_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

# measure OUT CMD...: runs CMD, writes "wall_s maxrss_mb exit" to OUT
measure() {
	_out=$1
	shift
	/usr/bin/time -f '%e %M' -o "$TMP/time" "$@" >"$TMP/measure.out" 2>"$TMP/measure.err"
	_rc=$?
	# shellcheck disable=SC2046
	set -- $(tail -1 "$TMP/time")
	echo "$1 $(($2 / 1024)) $_rc" >"$_out"
}

# torus HOSTS [SHIFT]: the squarest torus:AxB of HOSTS = 2^k, or with
# SHIFT 1 a torus of another shape (A/2 x 2B)
torus() {
	python3 -c "
import math, sys
n, s = $1, ${2:-0}
a = 2 ** (int(math.log2(n)) // 2)
a //= 2 ** s
print('torus:%dx%d' % (a, n // a))"
}

# config OUT HOSTS CRED PORTFILE...: the fabric, one switch per port file
config() {
	_out=$1 _h=$2 _cred=$3
	shift 3
	_k=$#
	_ports=$((4 * _h / _k))
	{
		printf 'version: 1\nname: scale%s\nhosts: {count: %s, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' "$_h" "$_h"
		_i=0
		for _pf in "$@"; do
			printf '  - {name: ocs%s, type: ocs, ports: %s, reconfig_time: 1ms,\n' $_i $_ports
			printf '     driver: {type: tl1, address: "127.0.0.1:%s", credentials: %s, timeout: 60s}}\n' \
				"$(cat "$_pf")" "$_cred"
			_i=$((_i + 1))
		done
		printf 'wiring: {pattern: per-port, switches: [%s]}\n' \
			"$(seq -s ', ' -f 'ocs%g' 0 $((_k - 1)))"
		printf 'topology: %s\n' "$(torus "$_h")"
		printf 'collectives:\n  - {op: allreduce, size: 64MiB}\n'
	} >"$_out"
}

now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

# topology_of NAME: the topology replica NAME serves (- when it answers not)
topology_of() {
	"$OFC" --socket "$TMP/$1.sock" status --json --timeout 60 >"$TMP/$1.json" 2>/dev/null &&
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topology"]["spec"])' \
			"$TMP/$1.json" 2>/dev/null || echo -
}

# etcd_holds: "KEYS keys / BYTES B (PARTS parts, PBYTES B)": every key etcd
# holds, the bytes of their values, and of those the values' parts
etcd_holds() {
	etcd_ctl get --prefix "" -w json 2>/dev/null | python3 -c '
import base64, json, sys
kvs = json.load(sys.stdin).get("kvs", [])
size = lambda kv: len(base64.b64decode(kv.get("value", "")))
parts = [kv for kv in kvs if b"/part/" in base64.b64decode(kv["key"])]
print("%d keys / %d B (%d parts, %d B)" % (len(kvs), sum(map(size, kvs)), len(parts),
      sum(map(size, parts))))' 2>/dev/null || echo "-"
}

# etcd_wrote: what the store's writes since etcd started were, from its
# history (nothing is compacted): "the record in R parts, the journal in J
# (the most of one write), the largest transaction T B"
etcd_wrote() {
	timeout $((10 + H / 4096)) etcdctl --endpoints "https://127.0.0.1:$ETCD_C1" --cacert "$ETCD_PKI/ca.pem" \
		--cert "$ETCD_PKI/client.pem" --key "$ETCD_PKI/client.key" \
		watch --prefix "/ofc/scale$H/" --rev 1 -w json 2>/dev/null | python3 -c '
import base64, collections, json, sys
gens, txn = collections.defaultdict(set), collections.Counter()
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    for ev in json.loads(line).get("Events") or []:
        kv = ev["kv"]
        if ev.get("type"):
            continue
        key = base64.b64decode(kv["key"]).decode()
        txn[kv["mod_revision"]] += len(key) + len(base64.b64decode(kv.get("value", "")))
        if "/part/" in key:
            base, rest = key.split("/part/", 1)
            gens[(base.rsplit("/", 1)[1], rest.split("/")[0])].add(rest)
most = lambda item: max([len(v) for (b, g), v in gens.items() if b == item] or [0])
print("record %d parts, journal %d, largest txn %d B" % (most("state"), most("journal"),
      max(txn.values() or [0])))' 2>/dev/null || echo "-"
}

# midkill: the leader killed with kill -9 in the middle of a reconfigure
# back to A (once its journal is in etcd); mk: from the kill to the next
# leader's takeover, which undoes the journal it read back from etcd (the
# devices restored) before it commits; then no transaction may be left
# and the fabric must be at its target
midkill() {
	"$OFC" --socket "$TMP/$LEADER.sock" reconfigure --topology "$A" --timeout 1200 \
		>/dev/null 2>&1 &
	_cli=$!
	_end=$(($(date +%s) + 300))
	until [ -n "$(etcd_ctl get "/ofc/scale$H/journal" --keys-only 2>/dev/null)" ] ||
		[ "$(date +%s)" -gt $_end ]; do sleep 0.05; done
	dead=$LEADER
	t0=$(now_ms)
	replica_stop "$dead" 9
	wait "$_cli" 2>/dev/null
	# shellcheck disable=SC2046
	if ! wait_leader 300 $(for o in r1 r2 r3; do [ "$o" = "$dead" ] || echo $o; done); then
		mk="no leader in 300 s"
		return
	fi
	took=$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1])).get("cluster", {}).get("took_over_unix_ms", 0))' "$TMP/$LEADER.json")
	mk=$(python3 -c "print('%.2f' % (($took - $t0) / 1000))")
	_ok='not j.get("transaction") and j["at_target"] and j["topology"]["spec"] == a'
	until_state "$LEADER" 300 "$_ok" "$B"
	python3 -c "import json,sys
j = json.load(open(sys.argv[1])); a = sys.argv[2]
sys.exit(0 if ($_ok) else 1)" "$TMP/$LEADER.json" "$B" ||
		mk="$mk (not repaired: $(head -c 200 "$TMP/$LEADER.json"))"
}

# replicas: the same reconfigure through three replicas on a 3-member etcd
# with its defaults (rw: its wall seconds, or why it failed; a follower
# must then serve B), then the leader killed (fo: from the kill to the new
# leader's takeover, which must serve B too); held: what etcd holds then
replicas() {
	"$OFC" apply "$D/a.yaml" --state-dir "$D/st" >/dev/null 2>&1
	[ -n "$ETCD_PIDS" ] || etcd_start 3 || { fo="etcd did not start"; return 1; }
	for r in r1 r2 r3; do
		mkdir -p "$TMP/$r/state"
		chmod 700 "$TMP/$r"
		cp "$D/$r.cred" "$TMP/$r/ocs0.cred"
		chmod 600 "$TMP/$r/ocs0.cred"
		sed "s|credentials: cli.cred|credentials: ocs0.cred|" "$D/a.yaml" >"$TMP/$r/fab.yaml"
		replica_start $r --probe-interval 0
	done
	if wait_leader 300 r1 r2 r3; then
		measure "$D/rapply" "$OFC" --socket "$TMP/$LEADER.sock" reconfigure --topology "$B" \
			--timeout 1200
		read -r rw _ rrc <"$D/rapply"
		[ "$rrc" = 0 ] || rw="failed: $(head -c 300 "$TMP/measure.err")"
		dead=$LEADER
		# a follower serves B once its watch delivered the record
		fol=$(for o in r1 r2 r3; do [ "$o" = "$dead" ] || echo $o; done | head -1)
		_end=$(($(date +%s) + 120))
		until [ "$(topology_of "$fol")" = "$B" ] || [ "$(date +%s)" -gt $_end ]; do sleep 0.2; done
		[ "$(topology_of "$fol")" = "$B" ] || rw="$rw (follower $fol serves $(topology_of "$fol"))"
		held=$(etcd_holds)
		t0=$(now_ms)
		replica_stop "$dead" 9
		# shellcheck disable=SC2046
		if wait_leader 300 $(for o in r1 r2 r3; do [ "$o" = "$dead" ] || echo $o; done); then
			took=$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1])).get("cluster", {}).get("took_over_unix_ms", 0))' \
				"$TMP/$LEADER.json")
			fo=$(python3 -c "print('%.2f' % (($took - $t0) / 1000))")
			_t=$(topology_of "$LEADER")
			[ "$_t" = "$B" ] || fo="$fo (new leader serves $_t)"
			[ "$MIDKILL" = 1 ] && midkill
		else
			fo="no leader in 300 s"
		fi
		wrote=$(etcd_wrote)
	else
		fo="no first leader"
	fi
	# (KEEP_LOGS=DIR: the replicas' logs kept there, as rH.log)
	[ -n "${KEEP_LOGS:-}" ] && for r in r1 r2 r3; do cp "$TMP/$r.log" "$KEEP_LOGS/$r-$H.log"; done
	for r in r1 r2 r3; do replica_stop $r 9; rm -rf "${TMP:?}/$r" "$TMP/$r.sock"; done
	REPLICA_PIDS=""
	etcd_ctl del --prefix "" >/dev/null 2>&1
}

# one SIZE: prints one row of the table
one() {
	H=$1
	D="$TMP/h$H"
	mkdir -p "$D"
	K=4
	PORTS=$H
	for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$D/$r.cred"; done
	PFS=""
	i=0
	while [ $i -lt $K ]; do
		start_emu ocs-emu "e${H}x$i" --ports $PORTS --credentials "$D/r1.cred" \
			--credentials "$D/r2.cred" --credentials "$D/r3.cred" --state "$D/e$i.state" \
			--save-ms "$SAVE_MS"
		PFS="$PFS $TMP/e${H}x$i.port"
		i=$((i + 1))
	done
	cp "$D/r1.cred" "$D/cli.cred"
	# shellcheck disable=SC2086
	config "$D/a.yaml" "$H" cli.cred $PFS
	A=$(torus "$H")
	B=$(torus "$H" 1)
	sed "s|^topology: .*|topology: $B|" "$D/a.yaml" >"$D/b.yaml"
	mkdir -p "$D/st"
	measure "$D/validate" "$OFC" validate "$D/a.yaml"
	"$OFC" apply "$D/a.yaml" --state-dir "$D/st" >/dev/null 2>"$D/apply-a.err" ||
		{ echo "| $H | apply to $A failed: $(head -c 200 "$D/apply-a.err") |"; return 1; }
	measure "$D/plan" "$OFC" plan "$D/b.yaml" --state-dir "$D/st"
	measure "$D/apply" "$OFC" apply "$D/b.yaml" --state-dir "$D/st"
	# back to A for ofcd, which starts from what the switches hold
	"$OFC" apply "$D/a.yaml" --state-dir "$D/st" >/dev/null 2>&1

	mkdir -p "$D/od"
	cp "$D/a.yaml" "$D/od/fab.yaml"
	cp "$D/cli.cred" "$D/od/cli.cred"
	chmod 700 "$D/od"
	chmod 600 "$D/od/cli.cred"
	"$BUILD/ofcd" --config "$D/od/fab.yaml" --socket "$D/od.sock" --state-dir "$D/st" \
		--credentials-dir "$D/od" --foreground --log-file "$D/od.log" 2>"$D/od.stderr" &
	OFCD_PID=$!
	_end=$(($(date +%s) + 120))
	while [ ! -S "$D/od.sock" ] && [ "$(date +%s)" -le $_end ]; do sleep 0.05; done
	measure "$D/oapply" "$OFC" --socket "$D/od.sock" reconfigure --topology "$B" --timeout 600
	oapply_err=$(head -c 200 "$TMP/measure.err")
	rss=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$OFCD_PID/status")
	sbytes=$("$OFC" --socket "$D/od.sock" status --json --timeout 60 | wc -c)
	kill "$OFCD_PID"
	wait "$OFCD_PID" 2>/dev/null
	OFCD_PID=""

	fo="-" rw="-" held="-" mk="-" wrote="-"
	[ "$FAILOVER" = 1 ] && replicas
	# shellcheck disable=SC2086
	kill $EMUS 2>/dev/null
	wait $EMUS 2>/dev/null
	EMUS=""
	read -r vw vr _ <"$D/validate"
	read -r pw pr _ <"$D/plan"
	read -r aw ar arc <"$D/apply"
	read -r ow _ orc <"$D/oapply"
	[ "$arc" = 0 ] || aw="failed ($arc)"
	[ "$orc" = 0 ] || ow="failed: $oapply_err"
	printf '| %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
		"$H" "$K x $PORTS" "$A -> $B" "$vw" "$vr" "$pw" "$pr" "$aw" "$ar" "$ow" "$rss" "$sbytes" \
		"$rw" "$fo" "$mk" "$held; $wrote" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
	rm -rf "$D"
}

echo "| hosts | switches | topology | validate s / MB | plan s / MB | apply s / MB | ofcd apply s | ofcd peak MB | status bytes | 3 replicas apply s | failover s | killed mid-apply: takeover s | etcd holds; wrote | load |"
echo "|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---|"
for h in "$@"; do one "$h"; done
