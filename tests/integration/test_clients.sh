#!/bin/sh
# Clients of a replicated ofcd that find the leader themselves: three etcd
# members, three replicas of a 16-host fabric on one emulated OCS, an
# ofc-gateway before each. Every client is given every replica (a comma
# list, a repeated option, OFC_SOCKET, the Slurm hooks' OFC_SERVER) with a
# follower first; after kill -9 of the leader the next job starts with
# nothing edited; the same through the gateways. Also: a tenant's
# reconfigure --hosts and release from the CLI, the TLS errors, `ofc
# cluster status` (healthy, then a replica killed) and `ofc metrics`.
SUITE=clients
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"

if ! command -v etcd >/dev/null; then
	echo "clients: no etcd (scripts/install-deps.sh installs etcd-server): skipped"
	exit 0
fi
TMP=$(cd "$TMP" && pwd -P)

# ---- the fabric: 16 hosts of 4 ports on one 64-port OCS, three replicas ----------
sed -e 's/^name: .*/name: clients16/' -e 's/count: 64/count: 16/' -e 's/ports: 256/ports: 64/' \
	-e 's/^topology: .*/topology: torus:4x4/' -e '/op: alltoall/,+1d' \
	configs/torus64-ocs.yaml >"$TMP/fab.yaml"
for r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 64 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--credentials "$TMP/r3.cred" --state "$TMP/e.state" --delay-ms 25 --hold-file "$TMP/hold"
etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"

# A CA, the gateways' certificate, an admin's and a tenant's; another CA the
# client may wrongly trust.
C="$TMP/pki"
mkdir -p "$C"
newkey() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" 2>/dev/null; }
for ca in ca other; do
	newkey -x509 -days 2 -keyout "$C/$ca.key" -out "$C/$ca.pem" -subj "/CN=ofc-clients-$ca" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
done
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >"$C/server.ext"
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >"$C/client.ext"
for n in server admin tenant-a; do
	ext=client
	[ $n = server ] && ext=server
	newkey -keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$n"
	openssl x509 -req -in "$C/$n.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -extfile "$C/$ext.ext" -out "$C/$n.pem" >/dev/null 2>&1
done
printf 'cn:admin admin\ncn:tenant-a tenant t-a,slurm-job-*\n' >"$TMP/policy"
for r in r1 r2 r3; do
	$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" \
		--ca "$C/ca.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/$r.gw" \
		--port-file "$TMP/$r.gwport" 2>"$TMP/$r.gwlog" &
	HELPER_PIDS="$HELPER_PIDS $!"
done
for r in r1 r2 r3; do
	deadline 10
	while [ ! -s "$TMP/$r.gwport" ] && ! past $_end; do sleep 0.02; done
	eval "GW_$r=https://127.0.0.1:$(cat "$TMP/$r.gwport")"
done
[ -s "$C/tenant-a.pem" ] && [ -s "$TMP/r3.gwport" ] && ok || bad "the gateways" "$(cat "$TMP/r1.gwlog")"
rstart() {
	eval "_u=\$GW_$1"
	replica_start "$1" --probe-interval 0 --gateway-socket "$TMP/$1.gw" --gateway-uid "$(id -u)" \
		--advertise "$_u"
}
for r in r1 r2 r3; do replica_dir $r "$TMP/fab.yaml" "$e_port"; done

# ---- a replica whose etcd never answered: stale, and not "-1.0 s ago" -------------
replica_dir x1 "$TMP/fab.yaml" "$e_port"
REPLICA_ETCD=etcds://127.0.0.1:1 replica_start x1 --probe-interval 0
# (until its first try at etcd has failed)
deadline 10
until $OFC --socket "$TMP/x1.sock" status 2>/dev/null | grep -q "STALE      etcd: " ||
	past $_end; do sleep 0.1; done
expect_stdout_has "(etcd has not answered yet): what is shown may be behind" $OFC --socket "$TMP/x1.sock" status
expect_exit 1 $OFC --socket "$TMP/x1.sock" cluster status
grep -q "^  $TMP/x1.sock (x1) is stale: " "$TMP/out" && grep -q "^  no replica leads" "$TMP/out" &&
	grep -q "^ofc cluster: etcd member 127.0.0.1:1 (https://127.0.0.1:1) does not answer" "$TMP/err" &&
	ok || bad "cluster status of a stale replica" "$(cat "$TMP/out" "$TMP/err")"
# a mutation there is refused, saying etcd never answered (no "0.0 s ago")
expect_exit 1 $OFC --socket "$TMP/x1.sock" reconfigure --topology ring:64 --timeout 2
grep -q "cannot confirm with etcd who leads (.*; etcd has not answered yet)" "$TMP/err" && ok ||
	bad "a mutation on a replica whose etcd never answered" "$(cat "$TMP/err")"
replica_stop x1 KILL
for r in r1 r2 r3; do rstart $r; done
gw() { eval "printf '%s' \"\$GW_$1\""; }

wait_leader 20 r1 r2 r3 && ok || bad "no leader within 20 s" "$(tail -3 "$TMP/r1.log")"
L=$LEADER
set -- $(others "$L")
F1=$1
F2=$2
# every replica, a follower first
ALL="$TMP/$F1.sock,$TMP/$F2.sock,$TMP/$L.sock"
SERVERS="$(gw "$F1"),$(gw "$F2"),$(gw "$L")"
ADMIN="--cert $C/admin.pem --key $C/admin.key --cacert $C/ca.pem"
TENANT="--cert $C/tenant-a.pem --key $C/tenant-a.key --cacert $C/ca.pem"

# ---- the CLI: a list, a repeated option, OFC_SOCKET --------------------------------
expect_exit 0 $OFC --socket "$ALL" reconfigure --topology torus:4x4
grep -q "does not lead; asking the leader, $L, at $TMP/$L.sock" "$TMP/err" && ok ||
	bad "the list's follower sent us to the leader" "$(cat "$TMP/err")"
expect_exit 0 $OFC --socket "$TMP/$F2.sock" --socket "$TMP/$L.sock" reconfigure --topology ring:16
expect_exit 0 env OFC_SOCKET="$ALL" $OFC reconfigure --topology torus:4x4
# nothing answers: every address named, and the option given
expect_exit 1 $OFC --socket "$TMP/none1.sock,$TMP/none2.sock" reconfigure --topology ring:16
grep -q "(--socket): $TMP/none1.sock: cannot connect to ofcd at $TMP/none1.sock: No such file or directory.*; $TMP/none2.sock: cannot connect" "$TMP/err" &&
	ok || bad "the error names every address" "$(cat "$TMP/err")"
expect_exit 1 $OFC --server https://127.0.0.1:1,https://127.0.0.1:2 $ADMIN status
grep -q "(--server): https://127.0.0.1:1: .*; https://127.0.0.1:2: " "$TMP/err" && ok ||
	bad "--server's error names --server and both URLs" "$(cat "$TMP/err")"
expect_error 2 "ofc: --socket '$TMP/a.sock,': an empty address in the list" \
	$OFC --socket "$TMP/a.sock," status

# ---- a follower shows the leader's last contact with the device --------------------
# (a follower talks to no device: the leader's registration carries its
# contacts, rewritten every half lease)
$OFC --socket "$TMP/$L.sock" status --json >"$TMP/lead.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; sys.exit(0 if d.get("last_contact_unix_ms", 0) > 0 and "last_contact_by" not in d else 1)' "$TMP/lead.json" &&
	ok || bad "the leader's own contact, unlabelled" "$(cat "$TMP/lead.json")"
deadline 15
until $OFC --socket "$TMP/$F1.sock" status --json >"$TMP/f1.json" 2>/dev/null &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; sys.exit(0 if d.get("last_contact_by") == sys.argv[2] and d.get("last_contact_unix_ms", 0) > 0 else 1)' "$TMP/f1.json" "$L" ||
	past $_end; do sleep 0.2; done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; l=json.load(open(sys.argv[3]))["devices"][0]; sys.exit(0 if d.get("last_contact_by") == sys.argv[2] and 0 < d["last_contact_unix_ms"] <= l["last_contact_unix_ms"] and not d.get("commands") else 1)' "$TMP/f1.json" "$L" "$TMP/lead.json" &&
	ok || bad "a follower's device: the leader's last contact, named" "$(cat "$TMP/f1.json")"
$OFC --socket "$TMP/$F1.sock" cluster status >"$TMP/out" 2>&1
# (reachable by the leader's word once an event's delta carried the
# device; until then its last contact, named)
grep -Eq "^  devices    1: (1 reachable|0 reachable, 1 answered the leader \($L\) within [0-9.]* s)$" "$TMP/out" && ok ||
	bad "cluster status from a follower: the device answered the leader" "$(cat "$TMP/out")"

# ---- a tenant's partition from the CLI: reconfigure --hosts, release ---------------
expect_stdout_has "committed transaction" $OFC --socket "$ALL" reconfigure --partition t-a \
	--topology ring:4 --hosts 'h[4-7]'
# asked again (a client's retry after a failover): the same hold, done
expect_exit 0 $OFC --socket "$ALL" reconfigure --partition t-a --topology ring:4 --hosts h4,h5,h6,h7
expect_json "[h['name'] for h in j['held']] == ['t-a'] and sorted(j['held'][0]['hosts']) == ['h4','h5','h6','h7']" \
	$OFC --socket "$TMP/$L.sock" status --json
expect_stdout_has "held       t-a: ring:4 on 4 hosts" $OFC --socket "$TMP/$L.sock" status
expect_stdout_has "released partition 't-a'" $OFC --socket "$ALL" release t-a
expect_exit 1 $OFC --socket "$ALL" release t-a
expect_error 2 "ofc --socket PATH reconfigure: --hosts makes a partition: give --partition NAME and --topology SPEC too" \
	$OFC --socket "$ALL" reconfigure --hosts 'h[0-3]'
expect_error 2 "ofc --server URL reconfigure: --hosts makes a partition: give --partition NAME and --topology SPEC too" \
	$OFC --server "$SERVERS" $TENANT reconfigure --hosts 'h[0-3]' --topology ring:4
# the tenant, through the gateways, follower first
expect_stdout_has "committed transaction" $OFC --server "$SERVERS" $TENANT reconfigure \
	--partition t-a --topology ring:4 --hosts 'h[8-11]'
grep -q "does not lead; asking the leader, $L, at $(gw "$L")" "$TMP/err" && ok ||
	bad "ofc --server's follower named the leader's URL" "$(cat "$TMP/err")"
expect_exit 0 $OFC --server "$SERVERS" $TENANT status
grep -q "(config ?)\|(null)" "$TMP/out" && bad "a tenant's status shows what it may not see" "$(cat "$TMP/out")" || ok
# what the tenant has, and nothing it cannot see said as missing
grep -q "^  tenant     cn:tenant-a: its partitions alone" "$TMP/out" &&
	grep -q "^  held       t-a: ring:4 on 4 hosts, at target" "$TMP/out" &&
	grep -q "^  ocs0 (switch): 4 circuits between its hosts" "$TMP/out" &&
	! grep -q "none recorded\|NOT at target\|switch -" "$TMP/out" && ok ||
	bad "a tenant's status says what it has" "$(cat "$TMP/out")"
# a tenant's cluster status is its own smaller view, said as such
expect_stdout_has "fabric clients16, as tenant cn:tenant-a sees it: its partitions alone" \
	$OFC --server "$SERVERS" $TENANT cluster status
grep -q "not replicated\|not contacted\|devices " "$TMP/out" && bad "a tenant's cluster status claims what it cannot see" "$(cat "$TMP/out")" || ok
grep -q "^  held       t-a: ring:4 on 4 hosts$" "$TMP/out" && ok || bad "a tenant's cluster status: its hold" "$(cat "$TMP/out")"
expect_stdout_has "released partition 't-a'" $OFC --server "$SERVERS" $TENANT release t-a
# a follower answers the read, and names the leader where this client goes
expect_stdout_has "; leader $L, epoch" $OFC --server "$SERVERS" $ADMIN status
grep -q "; leader $L, epoch [0-9]*, at $(gw "$L")\$" "$TMP/out" && ok ||
	bad "status through a follower's gateway names the leader's URL" "$(cat "$TMP/out")"

# OFC_SERVER (before OFC_SOCKET) with OFC_CERT, OFC_KEY and OFC_CACERT, as the
# Python client reads them
expect_stdout_has "; leader $L, epoch" env OFC_SOCKET="$TMP/none.sock" OFC_SERVER="$(gw "$F1"), $(gw "$L")/" \
	OFC_CERT="$C/admin.pem" OFC_KEY="$C/admin.key" OFC_CACERT="$C/ca.pem" $OFC status
expect_exit 0 env OFC_SERVER="$SERVERS" OFC_CERT="$C/admin.pem" OFC_KEY="$C/admin.key" \
	OFC_CACERT="$C/ca.pem" $OFC cluster status

# ---- through a follower's gateway, ofcd's words name the leader's URL ------------
curl -s --cacert "$C/ca.pem" --cert "$C/admin.pem" --key "$C/admin.key" \
	-X POST -d '{"topology":"torus:4x4"}' "$(gw "$F1")/v1/reconfigure" >"$TMP/nl.json"
python3 - "$TMP/nl.json" "$(gw "$L")" "$TMP/$L.sock" <<'EOF' && ok || bad "the gateway's not-leader message" "$(cat "$TMP/nl.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "STATUS_NOT_LEADER", j
assert sys.argv[2] in j["message"] and sys.argv[3] not in j["message"], j["message"]
EOF

# ---- TLS: what to do ----------------------------------------------------------------
expect_exit 1 $OFC --server "$(gw "$L")" --cert "$C/admin.pem" --key "$C/admin.key" --cacert "$C/other.pem" status
grep -q "the gateway's certificate is not signed by a CA you gave (--cacert)" "$TMP/err" && ok ||
	bad "another CA: the TLS error says what to do" "$(cat "$TMP/err")"
expect_exit 2 $OFC --server "$(gw "$L")" --cacert "$C/ca.pem" status
grep -q "^ofc: --server needs --cert FILE and --key FILE" "$TMP/err" && ok ||
	bad "--server without --cert: a usage error" "$(cat "$TMP/err")"

# ---- cluster status and metrics ------------------------------------------------------
expect_stdout_has "healthy" $OFC --socket "$ALL" cluster status
grep -q "^  replica    $L: leader, epoch [0-9]*, lease .* at $TMP/$L.sock (pid [0-9]* on " "$TMP/out" &&
	grep -q "^  etcd       e1 (https://127.0.0.1:$ETCD_C1): up" "$TMP/out" && ok ||
	bad "cluster status: the store's replicas and etcd's members" "$(cat "$TMP/out")"
expect_json "j['healthy'] and not j['problems'] and len(j['addresses']) == 3 and sorted(r['name'] for r in j['replicas']) == ['r1', 'r2', 'r3'] and all(a['answered'] for a in j['addresses']) and j['leader']['name'] == '$L' and len(j['etcd']) == 3 and j['queue_depth'] == 0" \
	$OFC --socket "$ALL" cluster status --json
expect_exit 0 $OFC --server "$SERVERS" $ADMIN cluster status
expect_stdout_has "# TYPE ofc_cluster_leader gauge" $OFC --socket "$ALL" metrics
expect_stdout_has "ofc_cluster_leader 1" $OFC --socket "$TMP/$L.sock" metrics

# ---- Slurm's hooks: every replica, a follower first ---------------------------------
printf '#!/bin/sh\necho "$@" >>%s/scontrol.log\n' "$TMP" >"$TMP/fake-scontrol"
chmod 755 "$TMP/fake-scontrol"
prolog() { # JOB NODELIST COMMENT [ofc options]
	_j=$1 _n=$2 _c=$3
	shift 3
	env -i SLURM_JOB_ID="$_j" SLURM_JOB_NODELIST="$_n" SLURM_JOB_COMMENT="$_c" PATH="$PATH" \
		OFC_SLURM_SCONTROL="$TMP/fake-scontrol" OFC_SOCKET="$ALL" $OFC "$@" slurm prolog --timeout 30
}
epilog() { env -i SLURM_JOB_ID="$1" OFC_SOCKET="$ALL" $OFC slurm epilog --timeout 30; }
# the env file naming one follower: it names the leader, asked in turn
env -i SLURM_JOB_ID=10 SLURM_JOB_NODELIST='h[12-15]' SLURM_JOB_COMMENT='ofc:topology=ring:4' \
	OFC_SLURM_SCONTROL="$TMP/fake-scontrol" OFC_SOCKET="$TMP/$F1.sock" $OFC slurm prolog --timeout 30 \
	>"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && grep -q "ofc: job 10: partition slurm-job-10: ring:4 on 4 hosts committed" "$TMP/out" &&
	grep -q "ofc: $TMP/$F1.sock does not lead; asking the leader, $L" "$TMP/err" && ok ||
	bad "the prolog given a follower alone" "$(cat "$TMP/out" "$TMP/err")"
expect_stdout_has "released partition 'slurm-job-10'" epilog 10
expect_stdout_has "ofc: job 11: partition slurm-job-11: ring:4 on 4 hosts committed" prolog 11 'h[0-3]' 'ofc:topology=ring:4'
# the same prolog again (its leader died after the commit): the hold stands
expect_stdout_has "ofc: job 11: partition slurm-job-11: ring:4 on 4 hosts" prolog 11 'h[0-3]' 'ofc:topology=ring:4'
expect_stdout_has "released partition 'slurm-job-11'" epilog 11
expect_stdout_has "ofc: job 11 held no partition (nothing to release: done)" epilog 11
# through the gateways: the wrappers pass OFC_SERVER's list as --server
expect_stdout_has "ofc: job 12: partition slurm-job-12: ring:4 on 4 hosts committed" \
	prolog 12 'h[4-7]' 'ofc:topology=ring:4' --server "$SERVERS" $TENANT
expect_stdout_has "released partition 'slurm-job-12'" env -i SLURM_JOB_ID=12 \
	$OFC --server "$SERVERS" $TENANT slurm epilog --timeout 30

# ---- kill -9 of the leader: the next job starts with nothing edited ---------------
replica_stop "$L" KILL
expect_exit 1 $OFC --socket "$ALL" cluster status
grep -q "$TMP/$L.sock: DOES NOT ANSWER" "$TMP/out" && ok || bad "cluster status names the dead replica" "$(cat "$TMP/out")"
$OFC --socket "$ALL" cluster status --json >"$TMP/cs.json" 2>/dev/null
[ $? -eq 1 ] && python3 -c "import json,sys; j=json.load(open(sys.argv[1]))
sys.exit(0 if not j['healthy'] and [a['address'] for a in j['addresses'] if not a['answered']] == [sys.argv[2]] else 1)" \
	"$TMP/cs.json" "$TMP/$L.sock" && ok || bad "cluster status --json with a replica killed" "$(cat "$TMP/cs.json")"
# one survivor's address is enough: the store's registry knows the
# replicas that should run, so the dead one is named once its lease ended
set -- $(others "$L")
deadline 15
until { ! $OFC --socket "$TMP/$1.sock" cluster status >"$TMP/one.out" 2>"$TMP/one.err"; } &&
	grep -q "replica $L is missing" "$TMP/one.out" || past $_end; do sleep 0.2; done
$OFC --socket "$TMP/$1.sock" cluster status >"$TMP/one.out" 2>"$TMP/one.err"
[ $? -eq 1 ] && grep -q "^  replica    $L: MISSING (registered before, no lease now)$" "$TMP/one.out" &&
	grep -q "^ofc cluster: replica $L is missing: it registered before and holds no lease now" "$TMP/one.err" &&
	ok || bad "cluster status from one address names the dead replica" "$(cat "$TMP/one.out" "$TMP/one.err")"
expect_stdout_has "ofc: job 13: partition slurm-job-13: ring:4 on 4 hosts committed" prolog 13 'h[8-11]' 'ofc:topology=ring:4'
expect_stdout_has "released partition 'slurm-job-13'" epilog 13
# and through the gateways, the dead replica's among them
expect_stdout_has "ofc: job 14: partition slurm-job-14: ring:4 on 4 hosts committed" \
	prolog 14 'h[12-15]' 'ofc:topology=ring:4' --server "$SERVERS" $TENANT
expect_exit 0 $OFC --socket "$ALL" status
expect_stdout_has "released partition 'slurm-job-14'" epilog 14

# ---- kill -9 of the leader in the middle of a prolog's transaction ----------------
# The switch holds its first change (--hold-file) while the leader has sent
# it every command (a small partition: all within the TL1 driver's window);
# the leader is killed, the switch let go: it carries out what it was sent,
# so the next leader's repair finds every device at the target and
# finishes the transaction. The prolog asks the next leader again and is
# told it committed: the partition must be held there (the repair once
# recorded the commit without the hold, and the epilog found nothing).
rstart "$L"
wait_leader 20 r1 r2 r3 && ok || bad "no leader after the restart"
L=$LEADER
: >"$TMP/hold"
prolog 15 'h[0-3]' 'ofc:topology=complete:4' >"$TMP/p15.out" 2>"$TMP/p15.err" &
P15=$!
deadline 10
until $OFC --socket "$TMP/$L.sock" status --json 2>/dev/null | python3 -c 'import json,sys
sys.exit(0 if json.load(sys.stdin).get("transaction") else 1)' || past $_end; do
	sleep 0.02
done
sleep 0.3 # (the driver's commands on their way to the held switch)
replica_stop "$L" KILL
rm -f "$TMP/hold"
wait $P15
[ $? -eq 0 ] && grep -q "ofc: job 15: partition slurm-job-15: complete:4 on 4 hosts" "$TMP/p15.out" && ok ||
	bad "the prolog across the leader's kill -9" "$(cat "$TMP/p15.out" "$TMP/p15.err")"
set -- $(others "$L")
wait_leader 20 "$@" && ok || bad "no leader after the kill in the prolog"
expect_json "'slurm-job-15' in [h['name'] for h in j.get('held', [])]" \
	$OFC --socket "$TMP/$LEADER.sock" status --json
expect_stdout_has "released partition 'slurm-job-15'" epilog 15
rstart "$L"

# ---- a prolog queued at a leader that is deposed (SIGSTOP past its lease) ---------
# the leader hands the waiting request to the next through etcd's queue and
# tells the prolog "do not send it again": the prolog waits for the hold
wait_leader 20 r1 r2 r3 && ok || bad "no leader after the second restart"
L=$LEADER
now=$($OFC --socket "$TMP/$L.sock" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["spec"])')
next=torus:4x4
[ "$now" = torus:4x4 ] && next=circulant:16:1,4
$OFC --socket "$TMP/$L.sock" reconfigure --topology "$next" >"$TMP/busy.out" 2>&1 &
BUSY=$!
deadline 10
until $OFC --socket "$TMP/$L.sock" status --json 2>/dev/null | python3 -c 'import json,sys
sys.exit(0 if json.load(sys.stdin).get("transaction") else 1)' || past $_end; do
	sleep 0.02
done
env -i SLURM_JOB_ID=16 SLURM_JOB_NODELIST='h[0-3]' SLURM_JOB_COMMENT='ofc:topology=ring:4' \
	OFC_SLURM_SCONTROL="$TMP/fake-scontrol" OFC_SOCKET="$TMP/$L.sock,$ALL" $OFC slurm prolog \
	--timeout 40 >"$TMP/p16.out" 2>"$TMP/p16.err" &
P16=$!
deadline 10
until $OFC --socket "$TMP/$L.sock" status --json 2>/dev/null | python3 -c 'import json,sys
sys.exit(0 if json.load(sys.stdin).get("queue") else 1)' || past $_end; do
	sleep 0.02
done
replica_stop "$L" STOP
set -- $(others "$L")
wait_leader 20 "$@" && ok || bad "no replica took over from the stopped leader"
# a read: the stopped replica, first in the list, gets its share of the
# deadline and the next one answers
expect_stdout_has "replica    " $OFC --socket "$TMP/$L.sock,$ALL" status --timeout 8
replica_stop "$L" CONT
wait $P16
rc16=$?
wait $BUSY
[ $rc16 -eq 0 ] && grep -q "ofc: job 16: partition slurm-job-16: ring:4 on 4 hosts" "$TMP/p16.out" && ok ||
	bad "the prolog queued at a deposed leader" "exit $rc16" "$(cat "$TMP/p16.out" "$TMP/p16.err")"
expect_stdout_has "released partition 'slurm-job-16'" epilog 16

finish
