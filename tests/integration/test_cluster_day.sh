#!/bin/sh
# The operator's day on the replicated deployment as one system: the lab of
# README.md (scripts/lab: three etcd members, three ofcd replicas, three
# ofc-gateways with client certificates, an emulated OCS of 64 hosts taking
# 10 ms a change), Slurm's hooks given every replica and nothing edited all
# day:
# - `ofc slurm prolog`/`epilog` with OFC_SOCKET listing every replica, a
#   follower first: jobs start through it;
# - the leader is killed with kill -9 during a job's transaction: that
#   prolog ends started on the new leader (or requeued with the reason,
#   never half-done), the next job starts with the same environment, the
#   first job's hold outlives the replica that granted it (an overlapping
#   job is refused on the new leader, its circuits untouched), and its
#   epilog releases it;
# - `status` on every replica before and after: the fabric's topology
#   (torus:8x8, never a job's), the same holds and the same at_target;
#   `ofc cluster status` healthy, then naming the dead replica;
# - transaction ids unique over the day in every replica's log;
# - the same day through ofc-gateway: OFC_SERVER listing every gateway, a
#   dead one first, a job started and released across a second kill -9;
# - the epoch every live replica shows one higher after each failover.
SUITE=cluster-day
. "$(dirname "$0")/lib.sh"
for t in etcd openssl; do
	command -v $t >/dev/null 2>&1 || {
		echo "cluster-day: SKIP: $t is not installed"
		echo "$SUITE: 0 passed, 0 failed, 1 skipped"
		exit 0
	}
done
D="$TMP/lab"
trap 'scripts/lab down "$D" >/dev/null 2>&1; [ -n "$KEEP" ] || rm -rf "$TMP"' EXIT
LAB_SWITCH_DELAY_MS=10 BUILD=$BUILD scripts/lab up "$D" >"$TMP/up.out" 2>&1 && ok ||
	{ bad "scripts/lab up" "$(tail -5 "$TMP/up.out")"; finish; exit 1; }
CERTS="--cert $D/pki/admin.pem --key $D/pki/admin.key --cacert $D/pki/ca.pem"
printf '#!/bin/sh\necho "$@" >>%s/scontrol.log\n' "$TMP" >"$TMP/scontrol"
chmod 755 "$TMP/scontrol"

role() { # NAME: leader, follower, ... or "down"
	$OFC --socket "$D/$1.sock" status --json --timeout 3 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("cluster", {}).get("role", "-"))' 2>/dev/null ||
		echo down
}
# leader SECS: LEADER is the replica that leads and took over, within SECS
leader() {
	deadline $1
	LEADER=""
	while ! past $_end; do
		for _r in r1 r2 r3; do
			$OFC --socket "$D/$_r.sock" status --json --timeout 2 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin).get("cluster", {})
sys.exit(0 if c.get("role") == "leader" and c.get("took_over_unix_ms") else 1)' 2>/dev/null &&
				LEADER=$_r && return 0
		done
		sleep 0.1
	done
	return 1
}
# the environment a Slurm hook gets, and ofc-slurm.env's addresses
prolog() { # JOB NODELIST COMMENT
	env -i PATH="$PATH" SLURM_JOB_ID="$1" SLURM_JOB_NODELIST="$2" SLURM_JOB_COMMENT="$3" \
		OFC_SLURM_SCONTROL="$TMP/scontrol" $HOOK_ENV $OFC slurm prolog --timeout 40
}
epilog() { env -i PATH="$PATH" SLURM_JOB_ID="$1" $HOOK_ENV $OFC slurm epilog; }

# every_replica 'PYTHON-EXPR over j (each live replica's State)' WHAT: true
# on every live replica, once they show the same generation (within 10 s)
every_replica() {
	deadline 10
	while :; do
		_why=""
		for _r in r1 r2 r3; do
			[ -S "$D/$_r.sock" ] && kill -0 "$(cat "$D/$_r.pid")" 2>/dev/null || continue
			$OFC --socket "$D/$_r.sock" status --json --timeout 3 >"$TMP/$_r.json" 2>/dev/null || {
				_why="$_why $_r: no answer;"
				continue
			}
			python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
				"$TMP/$_r.json" || _why="$_why $_r: $(head -c 600 "$TMP/$_r.json");"
		done
		[ -z "$_why" ] && return 0
		! past $_end || break
		sleep 0.2
	done
	bad "every replica: $2" "$_why"
	return 1
}
held_is() { # the held partitions' names on every replica, in order
	every_replica "sorted(h['name'] for h in j.get('held', [])) == sorted('$*'.split()) \
and j['topology']['spec'] == 'torus:8x8'" "holds [$*] and the fabric's topology torus:8x8" && ok
}

leader 30 && ok || bad "a leader after scripts/lab up" "$(cat "$TMP/up.out")"
# the first address a follower: jobs start through it
FIRST=r1
[ "$LEADER" = r1 ] && FIRST=r2
SOCKS="$D/$FIRST.sock"
for r in r1 r2 r3; do [ $r = $FIRST ] || SOCKS="$SOCKS,$D/$r.sock"; done
HOOK_ENV="OFC_SOCKET=$SOCKS"

# ---- morning: the fabric at its topology, two jobs through a follower --------------
expect_stdout_has "committed transaction" env OFC_SOCKET="$SOCKS" $OFC reconfigure --topology torus:8x8
expect_exit 0 env OFC_SOCKET="$SOCKS" $OFC cluster status
expect_json 'j["healthy"] and len(j["replicas"]) == 3' env OFC_SOCKET="$SOCKS" $OFC cluster status --json
expect_stdout_has "partition slurm-job-1: torus:4x4 on 16 hosts committed" prolog 1 'h[0-15]' 'ofc:topology=torus:4x4'
expect_stdout_has "partition slurm-job-2: ring:8 on 8 hosts committed" prolog 2 'h[16-23]' 'ofc:topology=ring:8'
held_is slurm-job-1 slurm-job-2
every_replica "all(h.get('at_target') for h in j['held'])" "each job's partition at its target" && ok
cp "$D/ocs-emu.state" "$TMP/switch.morning"

# epochs: the epoch each live replica shows, "r1:E r2:E ..."; epoch_is E:
# every live replica shows E (up to 10 s: a follower hears the new
# leader's key from its watch)
epochs() {
	for _r in r1 r2 r3; do
		_e=$($OFC --socket "$D/$_r.sock" status --json --timeout 2 2>/dev/null | python3 -c '
import json, sys
print((json.load(sys.stdin).get("cluster", {}).get("leader") or {}).get("epoch", 0))' 2>/dev/null) &&
			printf '%s:%s ' "$_r" "$_e"
	done
}
epoch_is() {
	deadline 10
	until ! epochs | tr ' ' '\n' | grep -v "^$" | grep -qv ":$1\$" || past $_end; do sleep 0.2; done
	! epochs | tr ' ' '\n' | grep -v "^$" | grep -qv ":$1\$"
}

# ---- noon: the leader dies during job 3's transaction ------------------------------
leader 10 || bad "a leader before the kill"
VICTIM=$LEADER
E0=$(epochs | tr ' ' '\n' | sed -n "s/^$LEADER://p")
prolog 3 'h[32-63]' 'ofc:topology=circulant:32:1,5' >"$TMP/j3.out" 2>"$TMP/j3.err" &
j3=$!
# the kill lands once job 3's transaction has started (its journal written,
# the switch changing: 10 ms a change)
started() { grep -c "transaction started (transaction [0-9]*): by replica $VICTIM (epoch" "$D/$VICTIM.log"; }
before=$(started)
deadline 20
until grep -q "slurm-job-3" "$D/$VICTIM.log" && [ "$(started)" -gt "$before" ] ||
	past $_end; do sleep 0.01; done
kill -9 "$(cat "$D/$VICTIM.pid")"
wait $j3
rc=$?
if [ $rc -eq 0 ]; then
	grep -q "partition slurm-job-3: circulant:32:1,5 on 32 hosts committed" "$TMP/j3.out" && ok ||
		bad "job 3 across the kill: started, but says" "$(cat "$TMP/j3.out" "$TMP/j3.err")"
else
	# requeued: with the reason, on the job and in the hook's error
	grep -q "(requeued)" "$TMP/j3.err" && grep -q "JobId=3 AdminComment=ofc: " "$TMP/scontrol.log" && ok ||
		bad "job 3 across the kill: exit $rc without a reason" "$(cat "$TMP/j3.err")"
fi
leader 20 && [ "$LEADER" != "$VICTIM" ] && ok || bad "a new leader after kill -9 of $VICTIM"
epoch_is $((E0 + 1)) && ok || bad "the epoch after the first failover is not $((E0 + 1))" "$(epochs)"
grep -q "recovered an unfinished transaction" "$D/$LEADER.log" && ok ||
	bad "the new leader $LEADER repaired job 3's transaction (the kill landed in it)" "$(tail -5 "$D/$LEADER.log")"
# nothing edited: the hooks' environment is the morning's
expect_stdout_has "partition slurm-job-4: ring:4 on 4 hosts committed" prolog 4 'h[24-27]' 'ofc:topology=ring:4'
if [ $rc -eq 0 ]; then held_is slurm-job-1 slurm-job-2 slurm-job-3 slurm-job-4; else
	held_is slurm-job-1 slurm-job-2 slurm-job-4
fi
# job 1's hold outlived its replica: a job over its hosts is refused, and
# its circuits are the morning's
expect_exit 1 prolog 5 'h[8-11]' 'ofc:topology=ring:4'
grep -q "host h8 is held by partition 'slurm-job-1'" "$TMP/err" && ok ||
	bad "job 5 over job 1's hosts: refused for the hold" "$(cat "$TMP/err")"
python3 - "$TMP/switch.morning" "$D/ocs-emu.state" <<'EOF' && ok || bad "job 1's circuits changed after the failover"
import sys
# host i port j is switch port 1 + 4i + j: job 1 is h0..h15, ports 1..64
mine = lambda f: sorted(l.split()[:2] for l in open(f) if l.strip() and int(l.split()[0]) <= 64)
sys.exit(0 if mine(sys.argv[1]) == mine(sys.argv[2]) else 1)
EOF
expect_exit 1 env OFC_SOCKET="$SOCKS" $OFC cluster status
grep -q "$VICTIM" "$TMP/out" && ok || bad "cluster status names the dead replica $VICTIM" "$(cat "$TMP/out")"

# ---- evening: the epilogs, on whichever replica leads --------------------------------
for j in 1 2 4; do expect_stdout_has "released partition 'slurm-job-$j'" epilog $j; done
[ $rc -eq 0 ] && expect_stdout_has "released partition 'slurm-job-3'" epilog 3
held_is ""
every_replica "j['topology']['spec'] == 'torus:8x8' and j.get('schedule', {}).get('topology') == 'torus:8x8'" \
	"the fabric's topology and schedule" && ok
every_replica "j['at_target'] == json.load(open(sys.argv[1].rsplit('/', 1)[0] + '/$LEADER.json'))['at_target']" \
	"the leader's at_target" && ok

# ---- the same day through the gateways: a dead one first ---------------------------
DEAD=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SERVERS="https://127.0.0.1:$DEAD"
for r in r1 r2 r3; do SERVERS="$SERVERS,https://127.0.0.1:$(cat "$D/$r.gwport")"; done
HOOK_ENV="OFC_SERVER=$SERVERS OFC_CERT=$D/pki/admin.pem OFC_KEY=$D/pki/admin.key OFC_CACERT=$D/pki/ca.pem"
expect_stdout_has "partition slurm-job-6: torus:2x4 on 8 hosts committed" prolog 6 'h[0-7]' 'ofc:topology=torus:2x4'
leader 10 || bad "a leader before the second kill"
kill -9 "$(cat "$D/$LEADER.pid")"
VICTIM2=$LEADER
expect_stdout_has "partition slurm-job-7: ring:8 on 8 hosts committed" prolog 7 'h[8-15]' 'ofc:topology=ring:8'
leader 20 && [ "$LEADER" != "$VICTIM2" ] && ok || bad "a new leader after the second kill"
epoch_is $((E0 + 2)) && ok || bad "the epoch after the second failover is not $((E0 + 2))" "$(epochs)"
held_is slurm-job-6 slurm-job-7
expect_stdout_has "released partition 'slurm-job-6'" epilog 6
expect_stdout_has "released partition 'slurm-job-7'" epilog 7
held_is ""

# ---- transaction ids: each committed once, by one replica, over the day -----------
python3 - "$D" <<'EOF' >"$TMP/ids" && ok || bad "transaction ids unique over the day" "$(cat "$TMP/ids")"
import re, sys
own, started = {}, {}  # id -> [replica, ...]: what each replica logged as its own
for r in ("r1", "r2", "r3"):
    for l in open("%s/%s.log" % (sys.argv[1], r), errors="replace"):
        m = re.search(r"transaction committed \(transaction (\d+)\): by replica (\S+) \(epoch", l)
        if m and m.group(2) == r:
            own.setdefault(int(m.group(1)), []).append(r)
    for l in open("%s/%s.log" % (sys.argv[1], r), errors="replace"):
        m = re.search(r"transaction started \(transaction (\d+)\): by replica (\S+) \(epoch", l)
        if m and m.group(2) == r:
            started.setdefault(int(m.group(1)), []).append(r)
# an id started or committed twice, by one replica or two, was used twice
twice = {i: rs for d in (own, started) for i, rs in d.items() if len(rs) > 1}
undone = sorted(set(started) - set(own))
print("committed %s; started and not committed %s; used twice: %s" % (sorted(own), undone, twice))
# the morning's reconfigure, jobs 1-4, 6 and 7; job 3's first try undone
sys.exit(0 if len(own) >= 7 and undone and not twice else 1)
EOF
finish
