#!/bin/sh
# scripts/lab up DIR / down DIR (README.md, "A replicated fabric on one
# machine"): the whole replicated deployment on loopback as a newcomer
# starts it. Up: one replica leads; `status` answers through every
# replica's socket and every gateway, with the commands the script prints;
# the gateways' /metrics pass promtool, with HELP and TYPE for every family
# (the ofc_cluster_* gauges among them), and docs/ofcd.md's scrape job
# scrapes them; the tenants' policy holds. Down:
# every process it started is gone, and nothing else was touched.
SUITE=lab
. "$(dirname "$0")/lib.sh"

PY=python3
python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
LAB="scripts/lab"
export BUILD
# What the test itself starts: a decoy the lab must not stop.
sleep 600 &
DECOY=$!
cleanup() {
	# only if the test failed half-way: the lab's own processes, by its list
	[ -s "$L/pids" ] && BUILD=$BUILD $LAB down "$L" >/dev/null 2>&1
	kill "$DECOY" 2>/dev/null
	[ -n "${PROM:-}" ] && kill "$PROM" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

expect_error 2 "usage: lab up DIR | down DIR | restart DIR rN | stop DIR rN" $LAB
mkdir -p "$TMP/none"
expect_error 1 "lab: $TMP/none is not up (no $TMP/none/pids)" $LAB down "$TMP/none"
mkdir -p "$TMP/full" && : >"$TMP/full/x"
expect_error 1 "lab: $TMP/full is not empty (and no lab was stopped there): give a new directory (it holds x)" $LAB up "$TMP/full"

# README.md's block, as it is, from a directory of its own that holds what
# a clone has (scripts/, configs/, contrib/, build/): its lines up, status and down.
sed -n '/^<!-- lab: tests\/integration\/test_lab.sh/,/^[^ <]/p' README.md | sed -n 's/^    //p' >"$TMP/readme.sh"
[ "$(wc -l <"$TMP/readme.sh")" -eq 3 ] && grep -q '^scripts/lab up lab$' "$TMP/readme.sh" &&
	grep -q '^scripts/lab down lab$' "$TMP/readme.sh" && ok || bad "README.md's lab block: up, status, down" "$(cat "$TMP/readme.sh")"
W="$TMP/w"
mkdir -p "$W"
ln -s "$(pwd)/scripts" "$(pwd)/configs" "$(pwd)/contrib" "$W/"
ln -s "$(cd "$BUILD" && pwd)" "$W/build"
L="$W/lab"
readme() { # N: README's line N, run from $W
	(cd "$W" && BUILD=build sh -ec "$(sed -n "${1}p" "$TMP/readme.sh")")
}
readme 1 >"$TMP/up.out" 2>"$TMP/up.err" && ok ||
	bad "scripts/lab up" "$(cat "$TMP/up.err")" "$(tail -5 "$L"/r1.log "$L"/etcd/e1.log 2>/dev/null)"
readme 2 >"$TMP/out" 2>&1 && grep -q "^  replica    r2, " "$TMP/out" && ok || bad "README's status through r2's socket" "$(head -5 "$TMP/out")"
[ "$(wc -l <"$L/pids")" -eq 10 ] && ok || bad "10 processes recorded (3 etcd, 1 switch, 3 gateways, 3 replicas)" "$(cat "$L/pids")"
grep -q "^  etcd       etcds://127.0.0.1:[0-9]*,127.0.0.1:[0-9]*,127.0.0.1:[0-9]* (three members; TLS, and only a certificate of $L/pki/etcd/ca.pem" "$TMP/up.out" && ok ||
	bad "the output says etcd is authenticated" "$(head -3 "$TMP/up.out")"
# etcd itself refuses a client without its CA's certificate: the gateway
# users' admin certificate opens nothing there
set -- $(sed -n 's/^  etcd       etcds:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$TMP/up.out")
EP=$1
curl -s -m 3 --cacert "$L/pki/etcd/ca.pem" -X POST "https://127.0.0.1:$EP/v3/kv/range" -d '{"key":"eA=="}' >"$TMP/etcd.anon" 2>&1
curl -s -m 3 --cacert "$L/pki/etcd/ca.pem" --cert "$L/pki/admin.pem" --key "$L/pki/admin.key" \
	-X POST "https://127.0.0.1:$EP/v3/kv/range" -d '{"key":"eA=="}' >"$TMP/etcd.admin" 2>&1
curl -s -m 3 --cacert "$L/pki/etcd/ca.pem" --cert "$L/pki/etcd/ofcd.pem" --key "$L/pki/etcd/ofcd.key" \
	-X POST "https://127.0.0.1:$EP/v3/kv/range" -d '{"key":"eA=="}' >"$TMP/etcd.ofcd" 2>&1
! grep -q revision "$TMP/etcd.anon" && ! grep -q revision "$TMP/etcd.admin" && grep -q revision "$TMP/etcd.ofcd" &&
	ok || bad "etcd answers only the replicas' certificate" "$(cat "$TMP/etcd.anon" "$TMP/etcd.admin" "$TMP/etcd.ofcd")"
# The peer port, as a local user finds it (etcd's command line): TLS with
# a peer certificate of the peers' own CA. A user without one reaches
# neither raft, the leases nor the keys, through it or the client port;
# the replicas' certificate is no peer's either. (Before, the peers spoke
# plain http: any local user wrote keys, kept a stopped leader's lease
# alive and crashed members with one raft message.)
for p in $(awk '$1 ~ /^etcd/ {print $2}' "$L/pids"); do
	tr '\0' '\n' <"/proc/$p/cmdline" | sed -n '/^--listen-peer-urls$/{n;p}'
done >"$TMP/peers"
[ "$(grep -c '^https://127.0.0.1:[0-9]*$' "$TMP/peers")" = 3 ] && ok || bad "etcd's peers on https" "$(cat "$TMP/peers")"
cat >"$TMP/reach.py" <<'EOF2'
import http.client, json, socket, ssl, sys
peers, client, cert = sys.argv[1].split(), sys.argv[2], sys.argv[3:]
reached = []
def ask(host, port, tls, method, path, body=b""):
    try:
        if tls:
            ctx = ssl.create_default_context()
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            if cert:
                ctx.load_cert_chain(*cert)
            c = http.client.HTTPSConnection(host, port, timeout=3, context=ctx)
        else:
            c = http.client.HTTPConnection(host, port, timeout=3)
        c.request(method, path, body)
        r = c.getresponse()
        data = r.read()
        # (Go's answer to plain http on a TLS port is no etcd handler's)
        if b"HTTP request to an HTTPS server" not in data:
            reached.append("%s %s%s:%s%s: %d %r" % (method, "https://" if tls else "http://", host, port, path, r.status, data[:80]))
    except (OSError, ssl.SSLError, http.client.HTTPException):
        pass
for u in peers:
    host, port = u.split("//")[1].split(":")
    for tls in (False, True):
        ask(host, int(port), tls, "GET", "/members")
        ask(host, int(port), tls, "POST", "/leases", b"\x08\x01")
        ask(host, int(port), tls, "POST", "/raft", b"\x00" * 16)
        ask(host, int(port), tls, "GET", "/raft/probing")
ask("127.0.0.1", int(client), True, "POST", "/v3/kv/put", json.dumps({"key": "L2F0ay9jYW5hcnk=", "value": "eA=="}).encode())
ask("127.0.0.1", int(client), True, "POST", "/v3/lease/keepalive", b'{"ID":1}')
print("\n".join(reached))
sys.exit(1 if reached else 0)
EOF2
if [ "$(id -u)" = 0 ]; then
	setpriv --reuid 4242 --regid 4242 --clear-groups /usr/bin/python3 - "$(cat "$TMP/peers")" "$EP" <"$TMP/reach.py" >"$TMP/reach.out" 2>&1 &&
		ok || bad "a local user (uid 4242) reached etcd" "$(cat "$TMP/reach.out")"
	# the gateways run as another user, their files its own
	for p in $(awk '$1 ~ /^gateway/ {print $2}' "$L/pids"); do
		u=$(awk '/^Uid:/ {print $2}' "/proc/$p/status")
		{ [ "$u" = "$(id -u ofc-gateway 2>/dev/null)" ] || ! getent passwd "$u" >/dev/null; } && [ "$u" != 0 ] &&
			[ "$(stat -c %u "$L/gw/files/server.key")" = "$u" ] &&
			ok || bad "a gateway (pid $p) runs as uid $u, not the gateways' own user"
	done
fi
python3 - "$(cat "$TMP/peers")" "$EP" "$L/pki/etcd/ofcd.pem" "$L/pki/etcd/ofcd.key" <"$TMP/reach.py" >"$TMP/reach.out" 2>&1
grep -q "v3/kv/put" "$TMP/reach.out" && ! grep -q "/members\|/leases\|/raft" "$TMP/reach.out" &&
	ok || bad "the replicas' certificate is a client's, not a peer's" "$(cat "$TMP/reach.out")"
expect_error 1 "lab: $L is up already (etcd-e1, pid $(awk 'NR==1 {print $2}' "$L/pids")): lab down $L first" $LAB up "$L"

# Every replica's socket: one leader, the others follow it.
roles=""
for r in r1 r2 r3; do
	$OFC --socket "$L/$r.sock" status --json >"$TMP/$r.json" 2>"$TMP/err" && ok || bad "status through $r's socket" "$(cat "$TMP/err")"
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["cluster"]["role"])' "$TMP/$r.json" >"$TMP/$r.role" 2>/dev/null
	roles="$roles $(cat "$TMP/$r.role")"
done
[ "$(echo $roles | tr ' ' '\n' | sort | tr '\n' ' ')" = "follower follower leader " ] && ok || bad "one leader, two followers" "$roles"
# the switch is up on every replica: the followers take the leader's word
for r in r1 r2 r3; do
	deadline 20
	until $OFC --socket "$L/$r.sock" metrics 2>/dev/null | grep -q '^ofc_device_up{device="ocs0"} 1$' || past $_end; do sleep 0.2; done
	$OFC --socket "$L/$r.sock" metrics 2>/dev/null | grep -q '^ofc_device_up{device="ocs0"} 1$' && ok ||
		bad "ofc_device_up on $r ($(cat "$TMP/$r.role"))" "$($OFC --socket "$L/$r.sock" metrics 2>&1 | grep device_up)"
done

# The commands the script printed, as printed: ofc through a socket and a
# gateway (status), curl for the state and the metrics.
grep -E "^  [^ ]*/ofc .* status$|^  curl .*/v1/state$" "$TMP/up.out" >"$TMP/cmds"
n=0
while read -r c; do
	n=$((n + 1))
	sh -c "$c" >"$TMP/c.out" 2>&1 && grep -q "torus64-ocs" "$TMP/c.out" && ok || bad "the printed command: $c" "$(head -5 "$TMP/c.out")"
done <"$TMP/cmds"
[ $n -eq 4 ] && ok || bad "4 status commands printed (2 sockets, 2 gateways, curl)" "$(cat "$TMP/cmds")"

# Every gateway, with the reader's certificate: its replica's state.
P="$L/pki"
for r in r1 r2 r3; do
	U=https://127.0.0.1:$(cat "$L/$r.gwport")
	$OFC --server "$U" --cert "$P/reader.pem" --key "$P/reader.key" --cacert "$P/ca.pem" status >"$TMP/out" 2>&1 &&
		grep -q "^  replica    $r, " "$TMP/out" && ok || bad "status through $r's gateway" "$(head -5 "$TMP/out")"
	curl -sS --cacert "$P/ca.pem" --cert "$P/reader.pem" --key "$P/reader.key" "$U/metrics" >"$TMP/$r.metrics" 2>&1
	promtool check metrics <"$TMP/$r.metrics" >"$TMP/prom.out" 2>&1 && ok ||
		bad "promtool check metrics, $r" "$(head -5 "$TMP/prom.out")"
	# every family has its HELP and its TYPE before its samples
	$PY - "$TMP/$r.metrics" <<'EOF' && ok || bad "HELP and TYPE of every family ($r)" "$(cat "$TMP/$r.metrics.why")"
import re, sys
help_, type_, why, fams = set(), {}, [], set()
for line in open(sys.argv[1]):
    m = re.match(r"# (HELP|TYPE) (\S+) (.*)", line)
    if m:
        (help_.add(m[2]) if m[1] == "HELP" else type_.__setitem__(m[2], m[3].strip()))
        continue
    if not line.strip() or line.startswith("#"):
        continue
    name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)[0]
    fam = re.sub(r"_(bucket|sum|count)$", "", name) if re.sub(r"_(bucket|sum|count)$", "", name) in type_ else name
    fams.add(fam)
    if fam not in help_ or fam not in type_:
        why.append(name + " before its HELP and TYPE")
cl = {"ofc_cluster_leader", "ofc_cluster_epoch", "ofc_cluster_lease_left_seconds",
      "ofc_cluster_stale", "ofc_cluster_etcd_members_up"}
if not cl <= fams: why.append("missing " + " ".join(sorted(cl - fams)))
if any(type_.get(f) != "gauge" for f in cl): why.append("ofc_cluster_* not gauges")
open(sys.argv[1] + ".why", "w").write("; ".join(why))
sys.exit(1 if why else 0)
EOF
done
leaders=$(cat "$TMP"/r?.metrics | awk '$1 == "ofc_cluster_leader" {s += $2} END {print s}')
[ "$leaders" = 1 ] && ok || bad "ofc_cluster_leader is 1 on exactly one replica" "$leaders"
# docs/ofcd.md's scrape job scrapes the three gateways: its block with the
# lab's gateways as targets (a 1 s interval before it, so the test need not
# wait a minute), its files the reader's certificate and the lab's CA.
if command -v prometheus >/dev/null; then
	mkdir -p "$TMP/prom/ofc"
	cp "$P/ca.pem" "$TMP/prom/ofc/ca.pem"
	cp "$P/reader.pem" "$TMP/prom/ofc/prometheus.pem"
	cp "$P/reader.key" "$TMP/prom/ofc/prometheus.key"
	targets=$(for r in r1 r2 r3; do printf "'127.0.0.1:%s', " "$(cat "$L/$r.gwport")"; done)
	{
		printf 'global:\n  scrape_interval: 1s\n'
		sed -n '/^<!-- prometheus.yml:/,/^```$/p' docs/ofcd.md | sed '1,2d;$d' |
			sed "s|- targets: \[.*\]|- targets: [${targets%, }]|"
	} >"$TMP/prom/prometheus.yml"
	PP=$(scripts/free-ports 1)
	prometheus --config.file="$TMP/prom/prometheus.yml" --storage.tsdb.path="$TMP/prom/data" \
		--web.listen-address="127.0.0.1:$PP" >"$TMP/prom/log" 2>&1 &
	PROM=$!
	Q="http://127.0.0.1:$PP/api/v1/query?query=count(ofc_cluster_leader)"
	deadline 40
	until curl -s "$Q" 2>/dev/null | grep -q '"value":\[[0-9.]*,"3"\]' || past $_end; do sleep 0.5; done
	curl -s "http://127.0.0.1:$PP/api/v1/query?query=sum(ofc_cluster_leader)" >"$TMP/prom/sum" 2>&1
	grep -q '"value":\[[0-9.]*,"1"\]' "$TMP/prom/sum" && ok ||
		bad "prometheus, with docs/ofcd.md's job, scraped 3 replicas and 1 leader" "$(cat "$TMP/prom/sum")" "$(tail -3 "$TMP/prom/log")"
	kill "$PROM" 2>/dev/null
	wait "$PROM" 2>/dev/null
fi

# The policy: a tenant's partition through a follower's gateway (307 to the
# leader's, followed), another tenant's name refused, the reader refused a
# mutation; the Python client through a gateway.
for r in r1 r2 r3; do
	[ "$(cat "$TMP/$r.role")" = follower ] && F=$r && break
done
FU=https://127.0.0.1:$(cat "$L/$F.gwport")
tcurl() { # WHO ARGS...: the HTTP status
	_w=$1
	shift
	curl -sS -L -o "$TMP/body" -w '%{http_code}' --cacert "$P/ca.pem" --cert "$P/$_w.pem" --key "$P/$_w.key" "$@"
}
got=$(tcurl tenant-a -X POST "$FU/v1/reconfigure" -d '{"partition":"a-job1","topology":"ring:4","hosts":["h0","h1","h2","h3"]}')
[ "$got" = 200 ] && grep -q '"state":"committed"' "$TMP/body" && ok || bad "tenant-a makes a-job1 through $F's gateway" "$got $(cat "$TMP/body")"
got=$(tcurl tenant-b -X POST "$FU/v1/reconfigure" -d '{"partition":"a-job2","topology":"ring:4","hosts":["h8","h9","h10","h11"]}')
[ "$got" = 403 ] && ok || bad "tenant-b may not make a-job2" "$got $(cat "$TMP/body")"
got=$(tcurl reader -X POST "$FU/v1/reconfigure" -d '{"topology":"ring:64"}')
[ "$got" = 403 ] && ok || bad "the reader may not reconfigure" "$got $(cat "$TMP/body")"
PYTHONPATH="$BUILD/python" $PY - "$FU" "$P" <<'EOF' >"$TMP/py.out" 2>&1 && ok || bad "the Python client through a gateway" "$(tail -3 "$TMP/py.out")"
import sys
from ofc_client import Client
url, p = sys.argv[1], sys.argv[2]
s = Client(server=url, cert=p + "/admin.pem", key=p + "/admin.key", cacert=p + "/ca.pem").get_state()
assert s.cluster.role in ("leader", "follower") and s.fabric_name == "torus64-ocs", s.cluster
EOF

# The page on every gateway, at the address `up` printed.
PAGE=$(sed -n 's|^  page       \(https://[^ ]*/ui/\) .*|\1|p' "$TMP/up.out")
[ "$PAGE" = "https://127.0.0.1:$(cat "$L/r1.gwport")/ui/" ] && ok || bad "up prints the page's address" "$(grep -A2 page "$TMP/up.out")"
for r in r1 r2 r3; do
	got=$(curl -sS -o "$TMP/page" -w '%{http_code}' --cacert "$P/ca.pem" --cert "$P/reader.pem" --key "$P/reader.key" \
		"https://127.0.0.1:$(cat "$L/$r.gwport")/ui/" 2>&1)
	[ "$got" = 200 ] && grep -q "ui.js" "$TMP/page" && ok || bad "$r's gateway serves the page" "$got $(head -c 300 "$TMP/page")"
done
openssl pkcs12 -in "$P/admin.p12" -passin pass:ofc-lab -nokeys 2>/dev/null | grep -q "subject=.*CN *= *admin" && ok ||
	bad "admin.p12 for a browser, password ofc-lab"

# One replica stopped, then started again: the cluster names it missing
# while it is down; `down` stops the one restarted too.
expect_error 2 "usage: lab up DIR | down DIR | restart DIR rN | stop DIR rN" $LAB stop "$L"
expect_error 1 "lab: r4: no such replica (r1, r2 or r3)" $LAB stop "$L" r4
expect_stdout_has "stopped r2; lab restart $L r2 starts it again" $LAB stop "$L" r2
expect_error 1 "lab: r2 is not running (nothing stopped)" $LAB stop "$L" r2
deadline 15
until { ! $OFC --socket "$L/r1.sock" cluster status >"$TMP/cs.out" 2>&1; } && grep -q "replica r2 is missing" "$TMP/cs.out" ||
	past $_end; do sleep 0.2; done
grep -q "replica r2 is missing" "$TMP/cs.out" && ok || bad "cluster status from r1 names the stopped r2" "$(cat "$TMP/cs.out")"
# (from the build `up` used, whatever BUILD says now: here one whose ofcd
# cannot start)
mkdir -p "$TMP/wrong"
printf '#!/bin/sh\necho "the wrong build" >&2\nexit 3\n' >"$TMP/wrong/ofcd"
chmod 755 "$TMP/wrong/ofcd"
BUILD="$TMP/wrong" $LAB restart "$L" r2 >"$TMP/re.out" 2>&1 && grep -q "^started r2 (pid [0-9]*), log $L/r2.log$" "$TMP/re.out" &&
	grep -q "^lab: r2 from the build $L was started with, $W/build (not $TMP/wrong)$" "$TMP/re.out" && ok ||
	bad "lab restart r2 with another BUILD" "$(cat "$TMP/re.out")"
[ "$(grep -c '^ofcd-r2 ' "$L/pids")" -eq 2 ] && ok || bad "the restarted r2 recorded" "$(cat "$L/pids")"
$OFC --socket "$L/r2.sock" status >"$TMP/out" 2>&1 && ok || bad "r2 answers after its restart" "$(cat "$TMP/out")"
# a replica that cannot start: the reason ofcd gave, and its exit status
cp "$L/lab.env" "$TMP/lab.env"
sed -i "s|^LAB_BUILD=.*|LAB_BUILD=$TMP/wrong|" "$L/lab.env"
expect_exit 1 $LAB restart "$L" r2
grep -q "^lab: ofcd r2 did not start (exit status 3; $TMP/wrong/ofcd):$" "$TMP/err" && grep -qx "  the wrong build" "$TMP/err" &&
	ok || bad "a failed restart's reason" "$(cat "$TMP/err")"
cp "$TMP/lab.env" "$L/lab.env"
$LAB restart "$L" r2 >"$TMP/re.out" 2>&1 && $OFC --socket "$L/r2.sock" status >/dev/null 2>&1 && ok ||
	bad "lab restart r2 after a failed one" "$(cat "$TMP/re.out")"

# Down: every process it started is gone; the decoy, and a process whose
# pid the list names with another start time (a pid used again), are not
# touched.
sleep 600 &
REUSED=$!
echo "ocs-emu $REUSED 1" >>"$L/pids"
PIDS=$(awk '{print $2 ":" $3}' "$L/pids")
readme 3 >"$TMP/down.out" 2>&1 && ok || bad "scripts/lab down" "$(cat "$TMP/down.out")"
# A pid is the process the lab started only with its start time: pids
# wrap at 32768 here, and with three suites starting processes a gone
# replica's pid was soon another's.
left=""
for ps in $PIDS; do
	p=${ps%:*}
	[ "$p" = "$REUSED" ] && continue
	# (a zombie has exited: it waits for whoever adopted it to reap it)
	st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '$1 != "Z" {print $20}')
	[ -n "$st" ] && [ "$st" = "${ps#*:}" ] && left="$left $p"
done
# (and none that names the lab's directory: a child a process left)
left="$left$($PY -c '
import glob, os, sys
for c in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        if sys.argv[1].encode() in open(c, "rb").read() and c.split("/")[2] != str(os.getpid()):
            print(" " + c.split("/")[2], end="")
    except OSError:
        pass' "$L/")"
[ -z "$left" ] && ok || bad "processes left after down:$left" "$(cat "$TMP/down.out")"
kill -0 "$DECOY" 2>/dev/null && kill -0 "$REUSED" 2>/dev/null && ok || bad "down stopped a process it did not start"
kill "$REUSED" 2>/dev/null
[ ! -e "$L/pids" ] && [ -s "$L/r1.log" ] && ok || bad "down keeps the directory and its logs"
# Up again in the same directory: a fresh lab (etcd's members anew), the
# last run kept aside whole, where `up` says.
cksum "$L/r1.log" >"$TMP/r1.sum"
$LAB up "$L" >"$TMP/up2.out" 2>"$TMP/up2.err" && $OFC --socket "$L/r1.sock" status >/dev/null 2>&1 && ok ||
	bad "scripts/lab up again after down" "$(cat "$TMP/up2.err")"
grep -q "^The last run (logs, etcd's data, certificates, state) is kept in $L/run-1$" "$TMP/up2.out" &&
	[ "$(cksum <"$L/run-1/r1.log")" = "$(cut -d' ' -f1,2 "$TMP/r1.sum")" ] && [ -d "$L/run-1/etcd/e1" ] &&
	[ -s "$L/run-1/pki/ca.pem" ] && ok || bad "the last run kept in run-1" "$(head -3 "$TMP/up2.out"; ls "$L" "$L/run-1")"
# the same CA and certificates (a browser that imported them trusts the
# gateways still), unless LAB_NEW_CA=1 asks for new ones
grep -q "^Its CA and certificates are used again (LAB_NEW_CA=1 makes new ones)$" "$TMP/up2.out" &&
	cmp -s "$L/pki/ca.pem" "$L/run-1/pki/ca.pem" && cmp -s "$L/pki/admin.p12" "$L/run-1/pki/admin.p12" &&
	curl -s -o /dev/null --cacert "$L/run-1/pki/ca.pem" --cert "$L/run-1/pki/admin.pem" --key "$L/run-1/pki/admin.key" \
		"https://127.0.0.1:$(cat "$L/r1.gwport")/v1/state" && ok ||
	bad "up again made a new CA" "$(head -3 "$TMP/up2.out")"
$LAB down "$L" >/dev/null 2>&1 && ok || bad "scripts/lab down, the second"
LAB_NEW_CA=1 $LAB up "$L" >"$TMP/up3.out" 2>"$TMP/up3.err" && ! cmp -s "$L/pki/ca.pem" "$L/run-2/pki/ca.pem" &&
	! grep -q "used again" "$TMP/up3.out" && ok || bad "LAB_NEW_CA=1: not a new CA" "$(cat "$TMP/up3.err"; head -3 "$TMP/up3.out")"
$LAB down "$L" >/dev/null 2>&1 && ok || bad "scripts/lab down, the third"

finish
