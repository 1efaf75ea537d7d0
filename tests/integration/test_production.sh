#!/bin/sh
# docs/production.md, run as an operator pastes it, on three "machines":
# each a mount namespace with its own /etc and /var/lib (overlays of this
# machine's, ofc's users taken out), its own /run, and ofc installed under
# /usr/local by make install. The machines share loopback: 127.0.1.N
# stands for the docs' 10.0.0.N. In each, the docs' blocks run as written
# (the users and directories from the shipped sysusers.d and tmpfiles.d,
# every file with its owner and mode), then etcd, ofcd and ofc-gateway
# start as their units start them (tests/integration/unit_run.py: user,
# groups, umask, environment files). Checked: the gateways serve, one
# replica leads and another takes over when it dies, a Slurm job's
# prolog and epilog go through the gateways with the slurmctld
# certificate, and every row of docs/security.md's "Secrets on disk"
# holds on every machine; on a copy of the snippets with one mode and one
# membership broken, the same check fails. Needs root (mount namespaces).
SUITE=production
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
	echo "production: skipped: needs root and mount namespaces"
	finish
fi
for t in etcd openssl curl nsenter setpriv systemd-sysusers systemd-tmpfiles; do
	command -v $t >/dev/null || bad "$t is missing: scripts/install-deps.sh test installs it"
done
UNIT_RUN="$(pwd)/tests/integration/unit_run.py"
DOC="$(pwd)/docs/production.md"
SRC=$(pwd)

# block NAME: docs/production.md's block after "<!-- production: NAME -->",
# as written, but the addresses (10.0.0.N: 127.0.1.N). One more address
# in the members' peer certificates: etcd checks a peer's certificate
# against the address it connects from, which is the machine's own on a
# network and 127.0.0.1 for every "machine" on loopback.
block() {
	sed -n "/^<!-- production: $1 -->/,/^[^ <]/p" "$DOC" | sed -n 's/^    //p' |
		sed 's/10\.0\.0\./127.0.1./g' |
		sed '/sign e\$i-peer/s/IP:127.0.1.\$i\\n/IP:127.0.1.$i,IP:127.0.0.1\\n/'
}
for b in pki bundle machine etcd rbac ofcd slurmctld; do
	[ -n "$(block $b)" ] && ok || bad "$DOC has no block '$b'"
done

# ofc as make install puts it (PREFIX=/usr/local), bound over each
# machine's /usr/local.
INST="$TMP/inst"
make --no-print-directory BUILD="$BUILD" DESTDIR="$INST" CC="${CC:-cc}" SAN="${SAN:-}" install \
	>"$TMP/install.log" 2>&1 || bad "make install" "$(tail -5 "$TMP/install.log")"

PIDS=""
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	stop_all_emus
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM PIPE

# machine N [SYSUSERS TMPFILES]: a machine's namespace, held by a sleeping
# process (its pid in $TMP/mN/holder); the snippets replace the installed
# ones when given (the broken copies).
machine() {
	m="$TMP/m$1"
	mkdir -p "$m/etc" "$m/etc.work" "$m/lib" "$m/lib.work" "$m/run" "$m/local"
	cp -a "$INST/usr/local/." "$m/local/"
	[ -n "${2:-}" ] && cp "$2" "$m/local/lib/sysusers.d/ofc.conf" && cp "$3" "$m/local/lib/tmpfiles.d/ofc.conf"
	unshare -m --propagation private sh -c "
		mount -t overlay overlay -o lowerdir=/etc,upperdir=$m/etc,workdir=$m/etc.work /etc &&
		mount -t overlay overlay -o lowerdir=/var/lib,upperdir=$m/lib,workdir=$m/lib.work /var/lib &&
		mount --bind $m/run /run && mount --bind $m/local /usr/local &&
		for f in passwd group shadow gshadow; do
			[ -f /etc/\$f ] && sed -i '/^\\(ofc\\|ofcd\\|ofc-gateway\\|ofc-gwsock\\):/d' /etc/\$f
		done
		rm -rf /var/lib/ofc /etc/ofc /etc/etcd
		cp $INST/etc/default/ofcd $INST/etc/default/ofc-gateway /etc/default/ &&
		touch $m/ready && exec sleep 3600" >"$m/holder.log" 2>&1 &
	echo $! >"$m/holder"
	PIDS="$PIDS $!"
	deadline 20
	until [ -e "$m/ready" ] || past $_end; do sleep 0.05; done
	[ -e "$m/ready" ] || bad "machine $1 did not start" "$(cat "$m/holder.log")"
}
in_m() { # N CMD...: CMD in machine N
	_n=$1
	shift
	nsenter -t "$(cat "$TMP/m$_n/holder")" -m "$@"
}
# start N UNIT NAME: the unit's service in machine N, as its unit starts
# it; its output in $TMP/NAME.log, its pid in $TMP/NAME.pid
start() {
	(exec nsenter -t "$(cat "$TMP/m$1/holder")" -m python3 "$UNIT_RUN" "$2" --pre) >"$TMP/$3.log" 2>&1 &
	PIDS="$PIDS $!"
	echo $! >"$TMP/$3.pid"
}

# ---- 1. The certificates, on the machine that keeps the CAs ------------------------
mkdir -p "$TMP/ca"
(cd "$TMP/ca" && sh -e -c "$(block pki)") >"$TMP/pki.log" 2>&1 && ok || bad "the pki block" "$(tail -5 "$TMP/pki.log")"
P="$TMP/ca/pki"
for f in etcd-ca etcd-peer-ca gateway-ca e1 e1-peer gw3 ofcd admin dashboard slurmctld prometheus; do
	[ -s "$P/$f.pem" ] && [ -s "$P/$f.key" ] || bad "pki: $f.pem or $f.key missing"
done
[ "$(stat -c %a "$P/gateway-ca.key")" = 600 ] && ok || bad "pki: the CA's key is not 0600"

# What each machine gets: its tar (the bundle block), in a folder of its own.
start_emu ocs-emu ocs0 --ports 256 --credentials configs/credentials/ocs0.cred
[ -n "$ocs0_port" ] && ok || bad "ocs-emu did not start" "$(cat "$TMP/ocs0.stderr")"
sed "s/127.0.0.1:3082/127.0.0.1:$ocs0_port/" configs/torus64-ocs.yaml >"$TMP/ca/fabric.yaml"
cp configs/credentials/ocs0.cred "$TMP/ca/ocs0.cred"
(cd "$TMP/ca" && sh -e -c "$(block bundle)") >"$TMP/bundle.log" 2>&1 && ok || bad "the bundle block" "$(tail -5 "$TMP/bundle.log")"
for n in 1 2 3 4; do
	mkdir -p "$TMP/files$n"
	cp "$TMP/ca/machine$((n == 4 ? 1 : n)).tar" "$TMP/files$n/"
done
cp "$TMP/ca/slurmctld.tar" "$TMP/files1/"
chmod -R go+rX "$TMP" # the machines' root reads them; the services never do

# ---- 2. Each machine, as the docs write it -----------------------------------------
for n in 1 2 3; do
	machine $n
	for b in machine etcd ofcd; do
		in_m $n sh -e -c "cd $TMP/files$n && $(block $b | sed "s/^N=1\$/N=$n/")" >"$TMP/m$n.$b.log" 2>&1 && ok ||
			bad "machine $n: the $b block" "$(tail -5 "$TMP/m$n.$b.log")"
	done
	[ -z "$(ls "$TMP/files$n" | grep -v slurmctld.tar)" ] && ok || bad "machine $n: the machine block left $(ls "$TMP/files$n")"
done
# Machine 1 is the slurmctld host too: SlurmUser (slurmctld's package
# adds it) and its files, the wrappers from make install's share/ofc.
in_m 1 sh -c 'getent passwd slurm >/dev/null || useradd --system --user-group --no-create-home slurm; mkdir -p /etc/slurm' </dev/null
in_m 1 sh -e -c "cd $TMP/files1 && $(block slurmctld | sed 's|/usr/share/ofc/|/usr/local/share/ofc/|g')" >"$TMP/slurmctld.log" 2>&1 && ok ||
	bad "machine 1: the slurmctld block" "$(tail -5 "$TMP/slurmctld.log")"
# This machine's /var/log is the host's: the hooks' output comes to the test.
in_m 1 sed -i 's|^OFC_SLURM_LOG=.*|OFC_SLURM_LOG=|' /etc/slurm/ofc-slurm.env </dev/null

# ---- 3. etcd, then ofcd and the gateways, as their units run them ------------------
U=/usr/local/lib/systemd/system
for n in 1 2 3; do start $n /lib/systemd/system/etcd.service etcd$n; done
etcd_ok() {
	curl -s --max-time 2 --cacert "$P/etcd-ca.pem" --cert "$P/ofcd.pem" --key "$P/ofcd.key" \
		"https://127.0.1.$1:2379/health" | grep -q '"health":"true"'
}
deadline 60
until etcd_ok 1 && etcd_ok 2 && etcd_ok 3 || past $_end; do sleep 0.2; done
etcd_ok 1 && etcd_ok 2 && etcd_ok 3 && ok || { bad "etcd did not come up as the docs set it" "$(tail -n 5 "$TMP"/etcd*.log)"; finish; }
# etcd's users, from the machine that keeps the CAs: after this, a
# certificate of etcd's CA alone writes nothing.
(cd "$TMP/ca" && sh -e -c "$(block rbac)") >"$TMP/rbac.log" 2>&1 && ok || bad "the rbac block" "$(tail -n 5 "$TMP/rbac.log")"
k=$(printf /atk | base64)
curl -s --max-time 3 --cacert "$P/etcd-ca.pem" --cert "$P/ofcd.pem" --key "$P/ofcd.key" \
	https://127.0.1.1:2379/v3/kv/put -d "{\"key\":\"$k\",\"value\":\"eA==\"}" >"$TMP/anon.out" 2>&1
grep -q '"code":3' "$TMP/anon.out" && ! grep -q revision "$TMP/anon.out" && ok ||
	bad "etcd took a write from a certificate without a user" "$(head -c 300 "$TMP/anon.out")"
# The replicas' user writes under /ofc/ alone.
tok=$(curl -s --max-time 3 --cacert "$P/etcd-ca.pem" --cert "$P/ofcd.pem" --key "$P/ofcd.key" \
	https://127.0.1.1:2379/v3/auth/authenticate -d "{\"name\":\"ofcd\",\"password\":\"$(cat "$P/etcd-ofcd.password")\"}" |
	python3 -c 'import json,sys; print(json.load(sys.stdin).get("token",""))' 2>/dev/null)
curl -s --max-time 3 --cacert "$P/etcd-ca.pem" --cert "$P/ofcd.pem" --key "$P/ofcd.key" -H "Authorization: $tok" \
	https://127.0.1.1:2379/v3/kv/put -d "{\"key\":\"$k\",\"value\":\"eA==\"}" >"$TMP/ofcd-atk.out" 2>&1
[ -n "$tok" ] && grep -q 'permission denied' "$TMP/ofcd-atk.out" && ok ||
	bad "the replicas' user wrote outside /ofc/" "token: ${tok:+yes}" "$(head -c 300 "$TMP/ofcd-atk.out")"
# The peer port takes the peers' CA alone: a client certificate of etcd's CA is refused.
curl -s --max-time 3 --cacert "$P/etcd-peer-ca.pem" --cert "$P/ofcd.pem" --key "$P/ofcd.key" \
	https://127.0.1.1:2380/members >"$TMP/peer.out" 2>&1
! grep -q 'peerURLs\|clientURLs' "$TMP/peer.out" && ok || bad "etcd's peer port answered a client certificate" "$(head -c 300 "$TMP/peer.out")"

for n in 1 2 3; do
	start $n $U/ofcd.service ofcd$n
	start $n $U/ofc-gateway.service gw$n
done
SERVERS="https://127.0.1.1:8443,https://127.0.1.2:8443,https://127.0.1.3:8443"
ADMIN="--cert $P/admin.pem --key $P/admin.key --cacert $P/gateway-ca.pem"
leader() {
	$OFC --server "$SERVERS" $ADMIN cluster status --json --timeout 5 2>/dev/null |
		python3 -c 'import json,sys; print((json.load(sys.stdin).get("leader") or {}).get("name",""))' 2>/dev/null
}
deadline 60
L=""
until [ -n "$L" ] || past $_end; do L=$(leader); [ -n "$L" ] || sleep 0.3; done
[ -n "$L" ] && ok || bad "no replica leads through the gateways" "$(tail -n 3 "$TMP"/ofcd*.log "$TMP"/gw*.log)"
# One replica leading says nothing of the others' start: a gateway answers
# 502 until its own ofcd has made its socket, so each is given until a
# deadline to answer.
dash_state() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$P/gateway-ca.pem" --cert "$P/dashboard.pem" \
		--key "$P/dashboard.key" "https://127.0.1.$1:8443/v1/state" >"$TMP/code" 2>&1
	[ "$(cat "$TMP/code")" = 200 ]
}
for n in 1 2 3; do
	deadline 30
	until dash_state $n || past $_end; do sleep 0.3; done
	[ "$(cat "$TMP/code")" = 200 ] && ok || bad "gateway $n: GET /v1/state as dashboard: $(cat "$TMP/code")" "$(tail -3 "$TMP/gw$n.log")"
done

# The README's client commands across machines: OFC_SERVER and a certificate.
env OFC_SERVER="$SERVERS" OFC_CACERT="$P/gateway-ca.pem" OFC_CERT="$P/admin.pem" OFC_KEY="$P/admin.key" \
	$OFC status >"$TMP/status.out" 2>&1 && grep -q 'torus64-ocs' "$TMP/status.out" && ok ||
	bad "ofc status through OFC_SERVER" "$(head -5 "$TMP/status.out")"

# A Slurm job through the gateways, as the slurmctld tenant: the wrapper
# the slurmctld block installed, as SlurmUser with only SLURM_* set.
slurm() { # prolog|epilog JOB
	in_m 1 setpriv --reuid slurm --regid slurm --init-groups env -i SLURM_JOB_ID="$2" SLURM_JOB_NODELIST='h[0-3]' \
		SLURM_JOB_COMMENT='ofc:topology=ring:4' "/etc/slurm/ofc-$1"
}
expect_stdout_has "ofc: job 7: partition slurm-job-7: ring:4 on 4 hosts committed" slurm prolog 7

# ---- 4. The secrets: every row of docs/security.md's table, as everyone -----------
# as N WHO CMD...: CMD in machine N as WHO (a service as its unit runs it,
# admin: a member of ofc, nobody: no group of ofc's).
as() {
	_n=$1 _w=$2
	shift 2
	case $_w in
	ofcd) in_m "$_n" python3 "$UNIT_RUN" $U/ofcd.service --exec "$@" ;;
	ofc-gateway) in_m "$_n" python3 "$UNIT_RUN" $U/ofc-gateway.service --exec "$@" ;;
	etcd) in_m "$_n" python3 "$UNIT_RUN" /lib/systemd/system/etcd.service --exec "$@" ;;
	slurm) in_m "$_n" setpriv --reuid slurm --regid slurm --init-groups "$@" ;;
	admin) in_m "$_n" setpriv --reuid ofcadmin --regid ofcadmin --init-groups "$@" ;;
	nobody) in_m "$_n" setpriv --reuid nobody --regid nogroup --clear-groups "$@" ;;
	esac
}
reads() { # N WHO PATH: whether WHO reads (lists, connects to) PATH
	as "$1" "$2" python3 -c '
import os, socket, stat, sys
p = sys.argv[1]
st = os.stat(p)
if stat.S_ISDIR(st.st_mode): os.listdir(p)
elif stat.S_ISSOCK(st.st_mode): socket.socket(socket.AF_UNIX).connect(p)
else: open(p, "rb").read(1)' "$3" </dev/null 2>/dev/null
}
sed -n '/^<!-- secrets:/,/^$/p' docs/security.md | grep '^| `' |
	sed 's/^| `\([^`]*\)` | \([^|]*\) | \([^|]*\) |$/\1|\2|\3/' >"$TMP/secrets.table"
[ "$(wc -l <"$TMP/secrets.table")" -ge 10 ] && ok || bad "docs/security.md: no secrets table" "$(cat "$TMP/secrets.table")"
# secrets N: every row on machine N, as everyone; the problems on stdout
secrets() {
	in_m "$1" sh -c 'getent passwd ofcadmin >/dev/null || { groupadd ofcadmin && useradd -M -g ofcadmin -G ofc ofcadmin; }' </dev/null
	whos="ofcd ofc-gateway etcd admin nobody"
	[ "$1" = 1 ] && whos="$whos slurm" # the slurmctld host
	while IFS='|' read -r f own readers; do
		f=$(echo "$f" | sed "s/eN/e$1/")
		case $f in /etc/slurm/*) [ "$1" = 1 ] || continue ;; esac
		if ! in_m "$1" test -e "$f" </dev/null; then
			echo "$f: missing"
			continue
		fi
		got=$(in_m "$1" stat -c '%U %G 0%a' "$f" </dev/null)
		[ "$got" = "$(echo $own)" ] || echo "$f: $got, the table says $own"
		for who in $whos; do
			case " $(echo "$readers" | tr ',' ' ') " in
			*" $who "*) want=yes ;;
			*) want=no ;;
			esac
			reads "$1" $who "$f" && got=yes || got=no
			[ $got = $want ] || echo "$f: $who reads it: $got, the table says $want"
		done
	done <"$TMP/secrets.table"
}
for n in 1 2 3; do
	secrets $n >"$TMP/secrets$n" 2>&1
	[ ! -s "$TMP/secrets$n" ] && ok || bad "machine $n: the secrets are not as docs/security.md says" "$(cat "$TMP/secrets$n")"
done

# ---- 5. The leader's machine loses its ofcd: another leads --------------------------
n=${L#r}
kill -9 "$(cat "$TMP/ofcd$n.pid")" 2>/dev/null
deadline 60
L2=""
until { [ -n "$L2" ] && [ "$L2" != "$L" ]; } || past $_end; do L2=$(leader); sleep 0.3; done
[ -n "$L2" ] && [ "$L2" != "$L" ] && ok || bad "no failover after $L's ofcd was killed" "$(tail -n 3 "$TMP"/ofcd*.log)"
expect_stdout_has "released partition 'slurm-job-7'" slurm epilog 7

# ---- 6. The same check on snippets with one mode and one membership broken ---------
sed 's|^d /etc/ofc/credentials 0750|d /etc/ofc/credentials 0755|' contrib/ofc.tmpfiles >"$TMP/broken.tmpfiles"
{ cat contrib/ofc.sysusers; echo 'm ofcd ofc-gateway'; } >"$TMP/broken.sysusers"
! cmp -s contrib/ofc.tmpfiles "$TMP/broken.tmpfiles" && ok || bad "the broken copy of the tmpfiles snippet is not broken"
machine 4 "$TMP/broken.sysusers" "$TMP/broken.tmpfiles"
in_m 4 sh -e -c "cd $TMP/files4 && $(block machine)" >"$TMP/m4.log" 2>&1 || bad "machine 4: the machine block" "$(tail -3 "$TMP/m4.log")"
secrets 4 >"$TMP/secrets4" 2>&1
grep -qx "/etc/ofc/credentials: root ofcd 0755, the table says root ofcd 0750" "$TMP/secrets4" &&
	grep -qx "/etc/ofc/credentials: nobody reads it: yes, the table says no" "$TMP/secrets4" &&
	grep -qx "/etc/ofc/gateway/server.key: ofcd reads it: yes, the table says no" "$TMP/secrets4" && ok ||
	bad "the broken mode and membership were not found" "$(cat "$TMP/secrets4")"
finish
