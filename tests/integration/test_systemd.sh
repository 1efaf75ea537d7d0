#!/bin/sh
# The Debian package under its real service manager. `make deb`'s .deb goes
# into three clean Debian 12 roots (debootstrap minbase, scripts/clean-root.sh,
# with systemd), each booted with systemd as PID 1 by systemd-nspawn in a
# network namespace of its own; a fourth namespace is the machine that
# keeps the CAs, and the switch (ocs-emu). The namespaces are joined by
# veths on 198.18.0.0/15 (198.18.0.N for the docs' 10.0.0.N) through a
# bridge in a namespace of its own: nothing is added to this machine's
# network. docs/production.md's blocks run as written, in its order (the
# install with apt, offline, from a cache the test filled first; etcd
# restarted under its configuration; each machine's tar of its own keys),
# then: ofcd and ofc-gateway active under their units on every machine, a
# reconfigure through a gateway, a Slurm prolog through the gateways
# (contrib/slurm's wrapper as SlurmUser runs it), the leader's ofcd killed
# with kill -9 and systemd restarting it while another leads, the epilog,
# `systemctl reload` of ofcd and of the gateways (a new CRL refuses the
# revoked client), and every row of docs/security.md's "Secrets on disk"
# as each service (the uid and groups systemd gave its running process),
# SlurmUser, an admin and nobody.
#
# Skipped only where no container can boot here: not root, no user
# namespaces (a chroot: below), or systemd in the first container does not
# come up (its console's last lines said); and under the sanitizers (make
# check): the .deb is debian/rules' own build, never instrumented, so the
# suite would test make test's binaries again after a whole second build.
#
# SYSTEMD_TEST_OLD_FILTER=1  ofcd under the SystemCallFilter= its unit had
#                    before it allowed chown (a drop-in on each machine):
#                    the test must fail, ofcd never starting. Not in the
#                    default run.
# SYSTEMD_TEST_CACHE=DIR  the booted roots' base (minbase and systemd,
#                    made once, while make deb builds the package) and
#                    the .debs they install, kept between runs (default
#                    /var/cache/ofc-fresh-check, whose debootstrap cache
#                    scripts/fresh-check shares).
# SYSTEMD_TEST_DEB=FILE  this .deb, not make deb's.
#
# On a machine whose PID 1 is not systemd (cgroup v1 mounts, no system
# bus), nspawn needs --keep-unit (else it asks the system bus for a scope
# and stops: "Failed to open system bus") and --register=no (no
# machined); --console=read-only as no terminal is attached.
SUITE=systemd
. "$(dirname "$0")/lib.sh"

T0=$(date +%s)
phase() { echo "systemd: $1: at $(($(date +%s) - T0)) s"; }
skip() {
	echo "systemd: skipped: $*"
	finish
	exit
}
[ -z "${SAN:-}" ] || [ -n "${SYSTEMD_TEST_DEB:-}" ] ||
	skip "the sanitizers' build ($SAN) is not what the .deb holds: debian/rules builds its own, uninstrumented (make test runs this suite on it)"
[ "$(id -u)" -eq 0 ] || skip "needs root (mounts, network namespaces, systemd-nspawn)"
# The kernel refuses user namespaces to a process whose root is not its
# mount namespace's (a chroot), and so to the containers nspawn starts
# there; ofc-gateway's unit has PrivateUsers=yes. A clean root entered
# with pivot_root in a mount namespace of its own is not a chroot.
unshare --user true 2>"$TMP/userns" ||
	skip "no user namespace here ($(cat "$TMP/userns")): in a chroot the kernel refuses them, and so would systemd to ofc-gateway's PrivateUsers=yes; enter the root with pivot_root in a mount namespace of its own (unshare -m) instead of chroot"
for t in systemd-nspawn debootstrap nsenter setpriv ip flock openssl etcdctl curl; do
	command -v $t >/dev/null || bad "$t is missing: scripts/install-deps.sh test installs it"
done
[ "$fail" -eq 0 ] || {
	finish
	exit
}
. scripts/clean-root.sh
SRC=$(pwd)
DOC="$SRC/docs/production.md"
W="$TMP/w"
mkdir -p "$W"
NS="ofcsd$$"
OLD_FILTER=${SYSTEMD_TEST_OLD_FILTER:-}

# ---- Cleaning up: containers, the emulator, mounts, namespaces ----------------------
NSPAWNS="" OTHER=""
mounts_under() { findmnt -rn -o TARGET | grep "^$1/" | sort -r; }
umount_under() {
	for m in $(mounts_under "$1"); do umount "$m" 2>/dev/null || umount -l "$m"; done
	[ -z "$(mounts_under "$1")" ]
}
cleanup() {
	# A machine is thrown away, not halted: SIGKILL to its PID 1 ends every
	# process of its PID namespace at once, and nspawn then exits (a halt
	# waited 8 s on etcd, each member stopping while the others went too).
	# nspawn's SIGTERM ends one whose PID 1 has not started; killing nspawn
	# alone would leave a container running, its init adopted by ours.
	for p in $NSPAWNS; do
		for c in $(pgrep -P "$p"); do kill -KILL "$c"; done
		kill -TERM "$p" 2>/dev/null
	done
	deadline 30 _stop
	for p in $NSPAWNS; do
		while kill -0 "$p" 2>/dev/null && ! past $_stop; do sleep 0.2; done
		if kill -0 "$p" 2>/dev/null; then
			for c in $(pgrep -P "$p"); do kill -KILL "$c"; done
			kill -KILL "$p"
		fi
	done
	for p in $OTHER; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in sw ca m1 m2 m3; do ip netns del "$NS-$n" 2>/dev/null; done
	if umount_under "$W" && { ! mountpoint -q "$W" || umount "$W"; }; then rm_tmp; else echo "systemd: still mounted under $W, left: $(mounts_under "$W")" >&2; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM PIPE
# The machines' upper layers (what the install writes: some 470 MB each)
# in memory, unless ITEST_KEEP keeps them for a look afterwards: on the
# disk, removing them took 10 s to a minute at the end, the suites beside
# this one writing too.
[ -n "${ITEST_KEEP:-}" ] || mount -t tmpfs -o mode=0700 ofc-systemd "$W" || bad "a tmpfs on $W"

# block NAME: docs/production.md's block after "<!-- production: NAME -->",
# as written, but the addresses (10.0.0.N: 198.18.0.N).
block() {
	sed -n "/^<!-- production: $1 -->/,/^[^ <]/p" "$DOC" | sed -n 's/^    //p' | sed 's/10\.0\.0\./198.18.0./g'
}
for b in install pki bundle machine etcd etcd-start ofcd rbac start slurmctld revoke crl; do
	[ -n "$(block $b)" ] && ok || bad "$DOC has no block '$b'"
done

# ---- The package, and the roots' base (cached) --------------------------------------
# The base (debootstrap and apt in a root of its own: no lock of this
# machine's dpkg taken) is made while make deb builds the package. Neither
# needs the other and each is about one core's work in series, so side by
# side they take about the longer one's time, not the sum (alone on 2
# cores 31 s and 37 s: the suite went from 126 s to 86 s).
CACHE=${SYSTEMD_TEST_CACHE:-/var/cache/ofc-fresh-check}
ROOT="$CACHE/systemd-root"
APT="$CACHE/systemd-apt"
BASE_PKGS="systemd systemd-sysv dbus"
mkdir -p "$CACHE/debootstrap" "$APT/partial" || bad "cannot make $CACHE"
exec 9>"$CACHE/systemd-root.lock"
flock 9 # one run at a time makes the base and fills the cache
make_base() {
	rm -rf "$ROOT.new" &&
		cr_base "$ROOT.new" "$CACHE/debootstrap" && cr_mount "$ROOT.new" "$APT" &&
		cr_in "$ROOT.new" "apt-get update -qq && apt-get install -y -qq --no-install-recommends $BASE_PKGS" &&
		umount_under "$ROOT.new" &&
		rm -f "$ROOT.new/usr/sbin/policy-rc.d" "$ROOT.new/var/cache/apt/archives/"*.deb &&
		rm -rf "$ROOT" && mv "$ROOT.new" "$ROOT" && echo "$BASE_PKGS" >"$ROOT.ok"
}
base=""
if [ "$(cat "$ROOT.ok" 2>/dev/null)" != "$BASE_PKGS" ]; then
	(make_base >"$TMP/base.log" 2>&1 || umount_under "$ROOT.new") &
	base=$!
fi
DEB=${SYSTEMD_TEST_DEB:-}
if [ -z "$DEB" ]; then
	DEB="$BUILD/ofc_$(cat VERSION)_$(dpkg --print-architecture).deb"
	# remade when older than what it holds (debian/'s own sources: make
	# deb writes the rest of debian/ after the .deb)
	if [ ! -f "$DEB" ] || [ -n "$(find contrib debian/control debian/rules debian/changelog debian/postrm \
		debian/ofc.sysusers "$BUILD/ofc" "$BUILD/ofcd" "$BUILD/ofc-gateway" -newer "$DEB" -print 2>/dev/null |
		head -1)" ]; then
		make --no-print-directory BUILD="$BUILD" deb >"$TMP/deb.log" 2>&1 9>&- ||
			bad "make deb" "$(tail -5 "$TMP/deb.log")"
	fi
fi
[ -f "$DEB" ] || {
	bad "no package $DEB"
	finish
	exit
}
phase "the package"
if [ -n "$base" ]; then
	wait $base
	[ "$(cat "$ROOT.ok" 2>/dev/null)" = "$BASE_PKGS" ] && ok || {
		bad "the base root (debootstrap, $BASE_PKGS)" "$(tail -5 "$TMP/base.log")"
		finish
		exit
	}
	phase "the roots' base"
fi
# The base's indexes, fetched again when a day old or when a download
# fails (a package updated since).
refresh() {
	cr_mount "$ROOT" "$APT" && cr_in "$ROOT" "apt-get update -qq && apt-get autoclean -qq"
	_rc=$?
	umount_under "$ROOT" && return $_rc
}
# A layer over the base: every .deb the docs' install needs in apt's cache
# (the machines install offline).
prep() {
	if [ -n "$(find "$ROOT/var/lib/apt/lists" -maxdepth 0 -mmin +1440)" ]; then refresh || return 1; fi
	mkdir -p "$W/prep/up" "$W/prep/work" "$W/prep/root" &&
		mount -t overlay overlay -o "lowerdir=$ROOT,upperdir=$W/prep/up,workdir=$W/prep/work" "$W/prep/root" &&
		cr_mount "$W/prep/root" "$APT" && cp "$DEB" "$W/prep/root/root/" || return 1
	get="cd /root && apt-get install -y -qq --download-only ./ofc_*.deb etcd-server"
	if ! cr_in "$W/prep/root" "$get"; then
		umount_under "$W/prep" && refresh && cr_mount "$W/prep/root" "$APT" && cr_in "$W/prep/root" "$get" || return 1
	fi
	rm -f "$W/prep/root/root/"ofc_*.deb && umount_under "$W/prep" &&
		mkdir -p "$W/prep/up/var/cache/apt/archives" &&
		{ cp -l "$APT/"*.deb "$W/prep/up/var/cache/apt/archives/" 2>/dev/null ||
			cp "$APT/"*.deb "$W/prep/up/var/cache/apt/archives/"; }
}
prep >"$TMP/prep.log" 2>&1 && ok || {
	bad "the roots' apt layer (apt-get update, --download-only)" "$(tail -5 "$TMP/prep.log")"
	finish
	exit
}
flock -s 9 # shared while the machines run over the base: no other run changes it
phase "the roots' apt layer"

# ---- The network: a bridge, each machine a veth on it ------------------------------
net() {
	ip netns add "$NS-sw" && ip -n "$NS-sw" link add br0 type bridge && ip -n "$NS-sw" link set br0 up || return 1
	for n in 1 2 3 9; do
		m=m$n
		[ $n = 9 ] && m=ca
		ip netns add "$NS-$m" &&
			ip -n "$NS-sw" link add "p$n" type veth peer name eth0 netns "$NS-$m" &&
			ip -n "$NS-sw" link set "p$n" master br0 up &&
			ip -n "$NS-$m" addr add "198.18.0.$n/24" dev eth0 &&
			ip -n "$NS-$m" link set eth0 up && ip -n "$NS-$m" link set lo up || return 1
	done
}
net >"$TMP/net.log" 2>&1 && ok || bad "the namespaces and veths" "$(cat "$TMP/net.log")"
in_ca() { ip netns exec "$NS-ca" "$@"; }

# ---- The machines: booted -----------------------------------------------------------
boot() { # N
	r="$W/m$1"
	mkdir -p "$r/up" "$r/work" "$r/root" &&
		mount -t overlay overlay -o "lowerdir=$W/prep/up:$ROOT,upperdir=$r/up,workdir=$r/work" "$r/root" &&
		echo "ofc-m$1" >"$r/root/etc/hostname" && cp "$DEB" "$r/root/root/" || return 1
	# /etc/hosts as Debian's installer writes it (debootstrap writes none,
	# and etcd's defaults look up localhost)
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tofc-m%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$1" >"$r/root/etc/hosts"
	(exec systemd-nspawn --boot --quiet -D "$r/root" -M "$NS-m$1" --register=no --keep-unit \
		--console=read-only --network-namespace-path="/run/netns/$NS-m$1" >"$r/console.log" 2>&1 9>&-) &
	echo $! >"$r/nspawn"
	NSPAWNS="$NSPAWNS $!"
}
for n in 1 2 3; do boot $n || bad "machine $n: its root"; done
# in_m N CMD...: CMD in machine N as root, in all its namespaces, and its
# root and working directory (-r -w: in a chroot, setns alone leaves the
# chroot's root, whose /proc is this machine's)
in_m() {
	_n=$1
	shift
	nsenter -t "$(cat "$W/m$_n/leader")" -a -r -w env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}
booted() { # N: its systemd up (running, or degraded: a unit failed)
	deadline 30 _b
	# (nspawn's child is the container's systemd once it has exec'd it)
	until pgrep -x -P "$(cat "$W/m$1/nspawn")" systemd >"$W/m$1/leader" || past $_b; do sleep 0.2; done
	[ -s "$W/m$1/leader" ] || return 1
	# (systemctl fails until PID 1 listens on /run/systemd/private)
	deadline 120 _b
	until past $_b; do
		st=$(timeout 120 nsenter -t "$(cat "$W/m$1/leader")" -a -r -w systemctl is-system-running --wait 2>&1)
		echo "$st" >"$W/m$1/state"
		case $st in
		running | degraded) return 0 ;;
		offline | *"Failed to connect to bus"*) sleep 0.3 ;; # not yet listening
		*) return 1 ;;
		esac
	done
	return 1
}
if ! booted 1; then
	skip "this machine cannot boot a container with systemd-nspawn: $(cat "$W/m1/state" 2>/dev/null); its console: $(tail -5 "$W/m1/console.log" | tr '\n' ' ')"
fi
phase "machine 1 booted"
for n in 1 2 3; do
	[ $n = 1 ] || booted $n && ok || bad "machine $n did not boot" "$(cat "$W/m$n/state" 2>/dev/null)" "$(tail -5 "$W/m$n/console.log")"
	[ "$(in_m $n cat /proc/1/comm)" = systemd ] && ok || bad "machine $n: PID 1 is not systemd"
done

# run_block N NAME: the docs' block NAME on machine N, in root's home
run_block() {
	in_m "$1" sh -e -c "cd /root && $(block "$2" | sed "s/^N=1\$/N=$1/")" >"$W/m$1.$2.log" 2>&1 && ok ||
		bad "machine $1: the $2 block" "$(tail -5 "$W/m$1.$2.log")"
}

# ---- 0. The install, on the three at once --------------------------------------------
inst=""
for n in 1 2 3; do
	(in_m $n sh -e -c "cd /root && $(block install)" >"$W/m$n.install.log" 2>&1
	echo $? >"$W/m$n.install.rc") &
	inst="$inst $!"
done
for p in $inst; do wait $p; done
for n in 1 2 3; do
	[ "$(cat "$W/m$n.install.rc")" = 0 ] && ok || bad "machine $n: the install block" "$(tail -5 "$W/m$n.install.log")"
	in_m $n dpkg-query -W -f '${db:Status-Abbrev}' ofc etcd-server 2>/dev/null | grep -q '^ii *ii' && ok ||
		bad "machine $n: ofc and etcd-server not installed" "$(tail -5 "$W/m$n.install.log")"
done
# What step 2 has to undo: Debian's postinst started etcd on its defaults
# (a member on 127.0.0.1:2379).
etcd_default() {
	[ "$(in_m 1 systemctl is-active etcd)" = active ] &&
		in_m 1 python3 -c 'import socket; socket.create_connection(("127.0.0.1", 2379), 2)' 2>/dev/null
}
deadline 30
until etcd_default || past $_end; do sleep 0.3; done
etcd_default && ok || bad "etcd-server's postinst did not start etcd on its defaults (docs/production.md, step 0 says it does)" \
	"$(in_m 1 journalctl -u etcd -n 5 --no-pager -o cat 2>&1)"
phase "the package and etcd-server installed"

# ---- 1. The certificates, and each machine's tar ------------------------------------
mkdir -p "$W/ca"
(cd "$W/ca" && sh -e -c "$(block pki)") >"$W/pki.log" 2>&1 && ok || bad "the pki block" "$(tail -5 "$W/pki.log")"
P="$W/ca/pki"
# (ip execs ocs-emu: $! is the emulator's pid; the lock stays here)
ip netns exec "$NS-ca" "$BUILD/ocs-emu" --listen 198.18.0.9:0 --port-file "$W/ocs0.port" --ports 256 \
	--credentials configs/credentials/ocs0.cred 2>"$W/ocs0.err" 9>&- &
OTHER="$OTHER $!"
deadline 10
until [ -s "$W/ocs0.port" ] || past $_end; do sleep 0.1; done
[ -s "$W/ocs0.port" ] && ok || bad "ocs-emu did not start" "$(cat "$W/ocs0.err")"
sed "s/127.0.0.1:3082/198.18.0.9:$(cat "$W/ocs0.port")/" configs/torus64-ocs.yaml >"$W/ca/fabric.yaml"
cp configs/credentials/ocs0.cred "$W/ca/ocs0.cred"
(cd "$W/ca" && sh -e -c "$(block bundle)") >"$W/bundle.log" 2>&1 && ok || bad "the bundle block" "$(tail -5 "$W/bundle.log")"
# Exactly its own keys: the secrets in machine N's tar.
for n in 1 2 3; do
	got=$(tar -tf "$W/ca/machine$n.tar" | grep -E '\.key$|password' | sort | tr '\n' ' ')
	want=$(printf '%s\n' pki/e$n-peer.key pki/e$n.key pki/etcd-ofcd.password pki/gw$n.key pki/ofcd.key | sort | tr '\n' ' ')
	[ "$got" = "$want" ] && ok || bad "machine$n.tar holds other secrets than its own" "got:  $got" "want: $want"
done
got=$(tar -tf "$W/ca/slurmctld.tar" | grep -E '\.key$|password' | tr '\n' ' ')
[ "$got" = "pki/slurmctld.key " ] && ok || bad "slurmctld.tar: $got"

# ---- 2. Each machine, as the docs write it ------------------------------------------
for n in 1 2 3; do
	cp "$W/ca/machine$n.tar" "$W/m$n/root/root/"
	for b in machine etcd etcd-start ofcd; do run_block $n $b; done
	# the tar and what came out of it, gone: no key left in root's home
	[ -z "$(in_m $n find /root -name '*.key' -o -name '*.tar' -o -name password)" ] && ok ||
		bad "machine $n: keys left in /root" "$(in_m $n find /root)"
done
etcd_ok() {
	in_ca curl -s --max-time 2 --cacert "$P/etcd-ca.pem" --cert "$P/ofcd.pem" --key "$P/ofcd.key" \
		"https://198.18.0.$1:2379/health" | grep -q '"health":"true"'
}
deadline 90
until etcd_ok 1 && etcd_ok 2 && etcd_ok 3 || past $_end; do sleep 0.5; done
etcd_ok 1 && etcd_ok 2 && etcd_ok 3 && ok ||
	bad "etcd did not come up as the docs set it" "$(in_m 1 journalctl -u etcd -n 5 --no-pager 2>&1)"

# ---- 3. etcd's users, from the machine that keeps the CAs; then ofcd and the gateway -
(cd "$W/ca" && in_ca sh -e -c "$(block rbac)") >"$W/rbac.log" 2>&1 && ok || bad "the rbac block" "$(tail -5 "$W/rbac.log")"
if [ -n "$OLD_FILTER" ]; then
	for n in 1 2 3; do
		in_m $n sh -c 'mkdir -p /etc/systemd/system/ofcd.service.d && cat >/etc/systemd/system/ofcd.service.d/old-filter.conf <<EOF
[Service]
SystemCallFilter=
SystemCallFilter=@system-service
SystemCallFilter=~@privileged @resources @mount @obsolete @cpu-emulation @debug @raw-io @reboot @swap @module
EOF
systemctl daemon-reload'
	done
	echo "systemd: SYSTEMD_TEST_OLD_FILTER: ofcd under the SystemCallFilter= it had before chown was allowed"
fi
started=yes
for n in 1 2 3; do
	in_m $n timeout 120 sh -e -c "cd /root && $(block start)" >"$W/m$n.start.log" 2>&1
	[ "$(in_m $n systemctl is-active ofcd ofc-gateway | tr '\n' ' ')" = "active active " ] && ok || {
		bad "machine $n: ofcd and ofc-gateway are not active under their units" "$(tail -3 "$W/m$n.start.log")" \
			"$(in_m $n journalctl -u ofcd -n 4 --no-pager -o cat 2>&1)"
		started=no
	}
done
[ $started = yes ] || {
	finish
	exit
}
phase "docs/production.md's steps 0 to 3"

SERVERS="https://198.18.0.1:8443,https://198.18.0.2:8443,https://198.18.0.3:8443"
ADMIN="--cert $P/admin.pem --key $P/admin.key --cacert $P/gateway-ca.pem"
leader() {
	in_ca "$OFC" --server "$SERVERS" $ADMIN cluster status --json --timeout 5 2>/dev/null |
		python3 -c 'import json,sys; print((json.load(sys.stdin).get("leader") or {}).get("name",""))' 2>/dev/null
}
deadline 60
L=""
until [ -n "$L" ] || past $_end; do L=$(leader); [ -n "$L" ] || sleep 0.5; done
[ -n "$L" ] && ok || bad "no replica leads through the gateways" "$(in_m 1 journalctl -u ofcd -n 5 --no-pager -o cat)"
code() { # N CLIENT: the HTTP status of GET /v1/state on gateway N as CLIENT (000: refused)
	in_ca curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$P/gateway-ca.pem" --cert "$P/$2.pem" \
		--key "$P/$2.key" "https://198.18.0.$1:8443/v1/state" 2>/dev/null
}
for n in 1 2 3; do
	deadline 30
	until [ "$(code $n dashboard)" = 200 ] || past $_end; do sleep 0.5; done
	[ "$(code $n dashboard)" = 200 ] && ok || bad "gateway $n: GET /v1/state as dashboard: $(code $n dashboard)" \
		"$(in_m $n journalctl -u ofc-gateway -n 4 --no-pager -o cat 2>&1)"
done
# The units' documentation links name files the package installed.
for u in ofcd ofc-gateway; do
	for d in $(in_m 1 systemctl show -P Documentation $u); do
		case $d in file:*) in_m 1 test -f "${d#file:}" && ok || bad "$u: Documentation=$d: no such file" ;; esac
	done
done

# ---- A reconfigure through a gateway, then a Slurm job's prolog ---------------------
expect_json 'j["state"]=="committed" and j["operations"]>0' in_ca "$OFC" --server "$SERVERS" $ADMIN \
	reconfigure --topology torus:4x16 --json --timeout 120
cp "$W/ca/slurmctld.tar" "$W/m1/root/root/"
# Stand-ins for Debian's slurmctld package on machine 1 (its SlurmUser and
# /etc/slurm; not /var/log/slurm: the hooks run without it).
in_m 1 sh -c 'useradd --system --user-group --no-create-home --shell /usr/sbin/nologin slurm && mkdir -p /etc/slurm' ||
	bad "machine 1: the slurm user"
run_block 1 slurmctld
slurm() { # prolog|epilog JOB: the wrapper as slurmctld runs it: as SlurmUser, only SLURM_* set
	in_m 1 setpriv --reuid slurm --regid slurm --init-groups env -i SLURM_JOB_ID="$2" SLURM_JOB_NODELIST='h[0-3]' \
		SLURM_JOB_COMMENT='ofc:topology=ring:4' "/etc/slurm/ofc-$1"
}
expect_stdout_has "ofc: job 7: partition slurm-job-7: ring:4 on 4 hosts committed" slurm prolog 7
grep -q "ofc-prolog: cannot append to /var/log/slurm/ofc-slurm.log" "$TMP/err" && ok ||
	bad "the prolog did not say its log cannot be opened" "$(cat "$TMP/err")"

# ---- The secrets: every row of docs/security.md's table, as everyone ----------------
sed -n '/^<!-- secrets:/,/^$/p' docs/security.md | grep '^| `' |
	sed 's/^| `\([^`]*\)` | \([^|]*\) | \([^|]*\) |$/\1|\2|\3/' >"$W/secrets.table"
[ "$(wc -l <"$W/secrets.table")" -ge 10 ] && ok || bad "docs/security.md: no secrets table" "$(cat "$W/secrets.table")"
cat >"$W/secrets.sh" <<'SH'
# secrets.sh TABLE N SLURMHOST: every row as everyone, in the machine; the
# problems on stdout. A service is who systemd made its running process.
as() { # WHO CMD...
	who=$1
	shift
	case $who in
	ofcd | ofc-gateway | etcd)
		pid=$(systemctl show -P MainPID $who.service)
		set -- $(awk '/^Uid:/ { u = $2 } /^Gid:/ { g = $2 }
			/^Groups:/ { $1 = ""; gr = $0; gsub(/^ +| +$/, "", gr); gsub(/ +/, ",", gr) }
			END { print "--reuid", u, "--regid", g, (gr == "" ? "--clear-groups" : "--groups " gr) }' /proc/$pid/status) "$@"
		setpriv "$@" ;;
	slurm) setpriv --reuid slurm --regid slurm --init-groups "$@" ;;
	admin) setpriv --reuid ofcadmin --regid ofcadmin --init-groups "$@" ;;
	nobody) setpriv --reuid nobody --regid nogroup --clear-groups "$@" ;;
	esac
}
# reads WHO <PATHS: a line for each path, yes or no: whether WHO opens it
# (one python3 for them all: one a path took 6 s of the suite's CPU)
reads() {
	as "$1" python3 -c '
import os, socket, stat, sys
for p in sys.stdin.read().splitlines():
    try:
        st = os.stat(p)
        if stat.S_ISDIR(st.st_mode): os.listdir(p)
        elif stat.S_ISSOCK(st.st_mode): socket.socket(socket.AF_UNIX).connect(p)
        else: open(p, "rb").read(1)
        print("yes")
    except Exception:
        print("no")' 2>/dev/null
}
getent passwd ofcadmin >/dev/null || useradd --no-create-home --user-group --groups ofc ofcadmin
whos="ofcd ofc-gateway etcd admin nobody"
[ "$3" = yes ] && whos="$whos slurm"
rows=$(mktemp)
while IFS='|' read -r f own readers; do
	f=$(echo "$f" | sed "s/eN/e$2/")
	case $f in /etc/slurm/*) [ "$3" = yes ] || continue ;; esac
	if ! test -e "$f"; then
		echo "$f: missing"
		continue
	fi
	got=$(stat -c '%U %G 0%a' "$f")
	[ "$got" = "$(echo $own)" ] || echo "$f: $got, the table says $own"
	echo "$f|$readers" >>"$rows"
done <"$1"
# (a line missing from a reader's answer, it not having run: no)
for who in $whos; do
	cut -d'|' -f1 "$rows" | reads $who | paste -d'|' "$rows" - | while IFS='|' read -r f readers got; do
		case " $(echo "$readers" | tr ',' ' ') " in
		*" $who "*) want=yes ;;
		*) want=no ;;
		esac
		[ "${got:-no}" = $want ] || echo "$f: $who reads it: ${got:-no}, the table says $want"
	done
done
rm -f "$rows"
SH
for n in 1 2 3; do
	cp "$W/secrets.sh" "$W/secrets.table" "$W/m$n/root/root/"
	sh_host=no
	[ $n = 1 ] && sh_host=yes
	in_m $n sh /root/secrets.sh /root/secrets.table $n $sh_host >"$W/secrets$n" 2>&1
	[ ! -s "$W/secrets$n" ] && ok || bad "machine $n: the secrets are not as docs/security.md says" "$(cat "$W/secrets$n")"
done

# ---- The leader's ofcd killed with kill -9: systemd restarts it, another leads -------
n=${L#r}
case $n in 1 | 2 | 3) ;; *) n=1 ;; esac
old=$(in_m $n systemctl show -P MainPID ofcd)
in_m $n kill -9 "$old"
restarted() {
	[ "$(in_m $n systemctl show -P NRestarts ofcd)" -ge 1 ] 2>/dev/null &&
		[ "$(in_m $n systemctl is-active ofcd)" = active ] &&
		new=$(in_m $n systemctl show -P MainPID ofcd) && [ "$new" != "$old" ] && [ "$new" != 0 ]
}
deadline 60
until restarted || past $_end; do sleep 0.3; done
restarted && ok || bad "machine $n: systemd did not restart ofcd after kill -9" \
	"$(in_m $n journalctl -u ofcd -n 5 --no-pager -o cat 2>&1)"
in_m $n journalctl -u ofcd --no-pager -o cat | grep -q 'status=9/KILL' && ok ||
	bad "machine $n: the journal does not show ofcd killed"
deadline 60
L2=""
until [ -n "$L2" ] || past $_end; do L2=$(leader); [ -n "$L2" ] || sleep 0.5; done
[ -n "$L2" ] && ok || bad "no leader after $L's ofcd was killed"
deadline 30
until [ "$(code $n dashboard)" = 200 ] || past $_end; do sleep 0.5; done
[ "$(code $n dashboard)" = 200 ] && ok || bad "gateway $n does not serve after its ofcd's restart"
expect_stdout_has "released partition 'slurm-job-7'" slurm epilog 7
phase "the reconfigure, the prolog, the secrets, kill -9 and the epilog"

# ---- systemctl reload: ofcd's config, and a new CRL at the gateways ------------------
pid=$(in_m 2 systemctl show -P MainPID ofcd)
in_m 2 systemctl reload ofcd && [ "$(in_m 2 systemctl show -P MainPID ofcd)" = "$pid" ] &&
	[ "$(in_m 2 systemctl is-active ofcd)" = active ] && ok || bad "machine 2: systemctl reload ofcd"
(cd "$W/ca" && sh -e -c "$(block revoke)") >"$W/revoke.log" 2>&1 && ok || bad "the revoke block" "$(tail -3 "$W/revoke.log")"
for n in 1 2 3; do
	pid=$(in_m $n systemctl show -P MainPID ofc-gateway)
	cp "$W/ca/pki/gateway-ca.crl" "$W/m$n/root/root/"
	run_block $n crl
	deadline 20
	until [ "$(code $n dashboard)" != 200 ] || past $_end; do sleep 0.3; done
	[ "$(code $n dashboard)" != 200 ] && ok || bad "gateway $n still serves the revoked dashboard after systemctl reload"
	[ "$(code $n admin)" = 200 ] && [ "$(in_m $n systemctl show -P MainPID ofc-gateway)" = "$pid" ] && ok ||
		bad "gateway $n: admin refused, or the gateway restarted, after the reload"
done
phase "the reloads"
finish
