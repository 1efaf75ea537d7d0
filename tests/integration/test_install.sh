#!/bin/sh
# make install into a DESTDIR: the tree, pkg-config building a program
# against libofc, man pages that render and list every option their binary
# prints, --version from VERSION, the unit's systemd-analyze score.
SUITE=install
. "$(dirname "$0")/lib.sh"

D="$TMP/root"
P=/usr/local
make --no-print-directory BUILD="$BUILD" DESTDIR="$D" PREFIX="$P" CC="${CC:-cc}" SAN="${SAN:-}" install >"$TMP/install.log" 2>&1 &&
	ok || bad "make install" "$(tail -5 "$TMP/install.log")"
for f in bin/ofc bin/ocs-emu bin/mrr-emu bin/netconf-emu sbin/ofcd sbin/ofc-planner lib/libofc.a lib/pkgconfig/ofc.pc \
	share/man/man1/ofc.1 share/man/man1/ocs-emu.1 share/man/man1/mrr-emu.1 \
	share/man/man1/netconf-emu.1 share/man/man8/ofcd.8 \
	share/bash-completion/completions/ofc lib/systemd/system/ofcd.service \
	sbin/ofc-gateway share/man/man8/ofc-gateway.8 lib/systemd/system/ofc-gateway.service \
	sbin/ofc-hostd share/man/man8/ofc-hostd.8 lib/systemd/system/ofc-hostd.service \
	lib/sysusers.d/ofc.conf lib/tmpfiles.d/ofc.conf include/ofc/util/util.h \
	include/ofc/controller/config/config.h include/ofc/proto/fabric.pb-c.h share/doc/ofc/ofcd.md; do
	[ -f "$D$P/$f" ] && ok || bad "not installed: $P/$f"
done
[ -f "$D/etc/default/ofcd" ] && [ -f "$D/etc/default/ofc-gateway" ] && ok || bad "not installed: /etc/default/ofcd, /etc/default/ofc-gateway"
# The protos and the example configs under share/ofc: an
# installed ofc reads its examples where the man page says they are, and
# a client generates its messages from the installed protos (which import
# each other as proto/NAME.proto: -I share/ofc).
for f in proto/control.proto proto/schedule.proto configs/torus64-ocs.yaml \
	configs/credentials/ocs0.cred examples/README.md examples/modelw/all-links-1.yaml \
	configs/torus64-netconf.yaml configs/credentials/known_hosts yang/optical-switch@2017-08-04.yang \
	ui/index.html ui/ui.js ui/fabric.js ui/ui.css; do
	[ -f "$D$P/share/ofc/$f" ] && ok || bad "not installed: $P/share/ofc/$f"
done
expect_exit 0 "$D$P/bin/ofc" validate "$D$P/share/ofc/configs/torus64-ocs.yaml"
# the installed ofc finds the netconf plugin in ../lib/ofc: the device is
# tried (nothing listens on port 1), not the plugin refused
mkdir -p "$TMP/nc"
"$D$P/bin/ofc" status "$D$P/share/ofc/configs/torus64-netconf.yaml" --device ocs0=127.0.0.1:1 \
	--state-dir "$TMP/nc" >"$TMP/nc.out" 2>&1
grep -q 'cannot connect to 127.0.0.1:1' "$TMP/nc.out" && ok || bad "installed ofc and its netconf plugin" "$(cat "$TMP/nc.out")"
protoc -I"$D$P/share/ofc" --python_out="$TMP" "$D$P/share/ofc/proto/control.proto" &&
	ok || bad "protoc on the installed protos"
# Every path a man page's SEE ALSO names is installed (under DESTDIR),
# for PREFIX=/usr/local here and PREFIX=/usr below.
see_also() { # PAGE: the absolute paths in its SEE ALSO section
	sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$1" | sed 's/\\-/-/g' | grep -oE '(^| )/[a-z][^ ,;()]*' | sed 's/^ //; s/\.$//'
}
for m in man1/ofc.1 man1/ocs-emu.1 man1/mrr-emu.1 man1/netconf-emu.1 man8/ofcd.8 man8/ofc-gateway.8; do
	paths=$(see_also "$D$P/share/man/$m")
	missing=""
	for p in $paths; do [ -e "$D$p" ] || missing="$missing $p"; done
	[ -n "$paths" ] && [ -z "$missing" ] && ok || bad "$m SEE ALSO names what is not installed:$missing" "$paths"
done
[ -z "$(find "$D" -name internal.h -o -name loop.h)" ] && ok || bad "private headers installed"
find "$D" -path '*dist-packages/ofc_client/pb/control_pb2.py' | grep -q . && ok || bad "python package not installed"
[ "$(stat -c %a "$D$P/sbin/ofcd")" = 755 ] && [ "$(stat -c %a "$D$P/lib/libofc.a")" = 644 ] && ok || bad "modes"
grep -q "^ExecStart=$P/sbin/ofcd --foreground" "$D$P/lib/systemd/system/ofcd.service" && ok || bad "unit paths"
grep -q "^ExecStart=$P/sbin/ofc-gateway --listen.* --ui-dir $P/share/ofc/ui " "$D$P/lib/systemd/system/ofc-gateway.service" && ok || bad "the gateway unit's paths"
# The snippets as shipped: what their users, groups and modes give each
# service is test_production.sh's to check, on machines made from them.
cmp -s contrib/ofc.sysusers "$D$P/lib/sysusers.d/ofc.conf" && cmp -s contrib/ofc.tmpfiles "$D$P/lib/tmpfiles.d/ofc.conf" &&
	ok || bad "sysusers.d and tmpfiles.d: not the snippets contrib/ ships"
# PREFIX=/usr moves the unit's paths with it.
make --no-print-directory BUILD="$BUILD" DESTDIR="$TMP/usr" PREFIX=/usr CC="${CC:-cc}" SAN="${SAN:-}" install >/dev/null 2>&1
grep -q "^ExecStart=/usr/sbin/ofcd " "$TMP/usr/usr/lib/systemd/system/ofcd.service" && ok || bad "PREFIX=/usr unit"
see_also "$TMP/usr/usr/share/man/man8/ofcd.8" | grep -qx /usr/share/doc/ofc/ofcd.md &&
	! grep -q /usr/local "$TMP/usr/usr/share/man/man8/ofcd.8" && ok || bad "PREFIX=/usr man page paths"

# The Slurm wrappers (docs/slurm.md) under share/ofc/slurm, naming the ofc
# this install put in BINDIR: the wrappers' own default and the env file's
# (a PREFIX=/usr/local install has no /usr/bin/ofc).
for f in ofc-prolog ofc-epilog; do
	[ -x "$D$P/share/ofc/slurm/$f" ] && grep -qx "OFC=$P/bin/ofc" "$D$P/share/ofc/slurm/$f" && ok ||
		bad "$P/share/ofc/slurm/$f: not installed, or not naming $P/bin/ofc" "$(grep '^OFC=' "$D$P/share/ofc/slurm/$f" 2>&1)"
done
[ -f "$D$P/share/ofc/slurm/ofc-slurm.env" ] && grep -qx "OFC=$P/bin/ofc" "$D$P/share/ofc/slurm/ofc-slurm.env" &&
	! grep -rq /usr/bin/ofc "$D$P/share/ofc/slurm" && ok ||
	bad "ofc-slurm.env should name $P/bin/ofc" "$(grep -r 'bin/ofc' "$D$P/share/ofc/slurm" 2>&1)"
grep -qx "OFC=/usr/bin/ofc" "$TMP/usr/usr/share/ofc/slurm/ofc-slurm.env" && ok || bad "PREFIX=/usr: ofc-slurm.env names /usr/bin/ofc"
# Installed into a prefix of its own (no DESTDIR), the epilog runs that
# prefix's ofc: its usage error (no SLURM_JOB_ID) lands in the log the env
# file names.
make --no-print-directory BUILD="$BUILD" PREFIX="$TMP/pfx" SYSCONFDIR="$TMP/pfx/etc" CC="${CC:-cc}" SAN="${SAN:-}" \
	install >"$TMP/pfx.log" 2>&1 || bad "make install PREFIX=$TMP/pfx" "$(tail -3 "$TMP/pfx.log")"
S="$TMP/pfx/share/ofc/slurm"
sed -i -e "s|^OFC_SLURM_LOG=.*|OFC_SLURM_LOG=$TMP/slurm.log|" -e "s|^OFC_SOCKET=.*|OFC_SOCKET=$TMP/none.sock|" "$S/ofc-slurm.env"
env -i "$S/ofc-epilog" >/dev/null 2>&1
[ $? -ne 0 ] && grep -q "SLURM_JOB_ID" "$TMP/slurm.log" && ok || bad "the installed epilog should run $TMP/pfx/bin/ofc" "$(cat "$TMP/slurm.log" 2>&1)"
# A log whose folder is missing (no /var/log/slurm yet): ofc runs all the
# same, its output to slurmctld's, and the wrapper says why there.
sed -i -e "s|^OFC_SLURM_LOG=.*|OFC_SLURM_LOG=$TMP/no-such-dir/ofc-slurm.log|" "$S/ofc-slurm.env"
env -i "$S/ofc-epilog" >"$TMP/nolog.out" 2>&1
grep -q "SLURM_JOB_ID" "$TMP/nolog.out" && grep -q "ofc-epilog: cannot append to $TMP/no-such-dir/ofc-slurm.log" "$TMP/nolog.out" &&
	ok || bad "the epilog should run ofc when its log cannot be opened" "$(cat "$TMP/nolog.out")"

# One version string for every binary.
V=$(cat VERSION)
for b in bin/ofc bin/ocs-emu bin/mrr-emu bin/netconf-emu sbin/ofcd sbin/ofc-gateway sbin/ofc-hostd; do
	[ "$("$D$P/$b" --version)" = "$(basename $b) $V" ] && ok || bad "$b --version: $("$D$P/$b" --version 2>&1)"
done

# pkg-config against the tree builds and runs a program using libofc.
cat >"$TMP/t.c" <<'C'
#include <stdio.h>
#include "topo/topo.h"
int main(void)
{
	struct graph *g;
	struct ofc_error err = {0};

	if (topo_build("torus:4x4", &g, &err) < 0)
		return 1;
	printf("%u %u\n", g->n, g->m);
	graph_free(g);
	return 0;
}
C
PKG_CONFIG_SYSROOT_DIR="$D" PKG_CONFIG_PATH="$D$P/lib/pkgconfig" pkg-config --cflags --libs ofc >"$TMP/flags" 2>&1 &&
	${CC:-cc} ${SAN:-} -std=c11 "$TMP/t.c" -o "$TMP/t" $(cat "$TMP/flags") && [ "$("$TMP/t")" = "16 64" ] && ok ||
	bad "pkg-config ofc: build and run" "$(cat "$TMP/flags")"

# Man pages render, and every option a binary prints is in its page.
for m in man1/ofc.1 man1/ocs-emu.1 man1/mrr-emu.1 man1/netconf-emu.1 man8/ofcd.8; do
	f="$D$P/share/man/$m"
	MANWIDTH=200 man -l "$f" >"$TMP/man.txt" 2>"$TMP/man.err" && [ -s "$TMP/man.txt" ] &&
		! grep -q "warning" "$TMP/man.err" && ok || bad "man -l $m" "$(head -3 "$TMP/man.err")"
	b=$(basename "$m" | sed 's/\.[18]$//')
	bin="$BUILD/$b"
	{
		"$bin" --help
		if [ "$b" = ofc ]; then
			for c in $("$bin" --help | sed -n '/^commands:/,/^$/p' | awk 'NR>1 && NF {print $1}'); do
				"$bin" "$c" --help
			done
		fi
	} 2>/dev/null | grep -oE -- '--[a-z][a-z-]+' | sort -u >"$TMP/opts"
	missing=""
	for o in $(cat "$TMP/opts"); do grep -qF -- "$o" "$TMP/man.txt" || missing="$missing $o"; done
	[ -z "$missing" ] && [ -s "$TMP/opts" ] && ok || bad "$m lacks:$missing"
done

# The unit's descriptor limit covers the clients /etc/default/ofcd allows,
# a session for each of up to 256 devices and ofcd's own 64.
nofile=$(sed -n 's/^LimitNOFILE=//p' contrib/ofcd.service)
clients=$(sed -n 's/.*--max-clients \([0-9]*\).*/\1/p' contrib/ofcd.conf)
[ -n "$nofile" ] && [ -n "$clients" ] && [ "$nofile" -ge $((clients + 256 + 64)) ] && ok ||
	bad "LimitNOFILE=$nofile for --max-clients $clients"
# The unit is hardened: systemd-analyze's exposure below 3.0.
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	score=$(systemd-analyze security --offline=yes contrib/ofcd.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for ofcd.service: \([0-9.]*\).*/\1/p')
	[ -n "$score" ] && awk "BEGIN{exit !($score < 3.0)}" && ok || bad "systemd-analyze security: '$score'"
	# The process that parses the network's bytes, at most 2.0.
	score=$(systemd-analyze security --offline=yes contrib/ofc-gateway.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for ofc-gateway.service: \([0-9.]*\).*/\1/p')
	[ -n "$score" ] && awk "BEGIN{exit !($score <= 2.0)}" && ok || bad "systemd-analyze security of ofc-gateway: '$score'"
fi
bash -n contrib/ofc.bash-completion && ok || bad "bash completion does not parse"
# Completion (Debian's bash-completion, which install-deps installs) offers
# every command `ofc --help` lists and every format each command's usage
# names (fail, restore and msccl were missing).
BC=/usr/share/bash-completion/bash_completion
if [ -f "$BC" ]; then
	cat >"$TMP/comp.bash" <<B
. $BC
. contrib/ofc.bash-completion
comp() { COMP_WORDS=("\$@"); COMP_CWORD=\$((\$# - 1)); COMP_LINE="\$*"; COMP_POINT=\${#COMP_LINE}
	COMPREPLY=(); _ofc; printf '%s\\n' "\${COMPREPLY[@]}" | sort; }
B
	comp() { PATH="$BUILD:$PATH" bash -c '. "$0"; comp "$@"' "$TMP/comp.bash" "$@"; }
	cmds=$("$BUILD/ofc" --help | sed -n '/^commands:/,/^$/p' | awk 'NR>1 && NF {print $1}')
	[ "$(comp ofc '')" = "$(printf '%s\n' $cmds --help --socket --version | sort)" ] && ok ||
		bad "completion of commands" "$(comp ofc '' | tr '\n' ' ')"
	nfmt=0
	for c in $cmds; do
		want=$("$BUILD/ofc" "$c" --help 2>/dev/null | sed -n '/^usage:/,/^$/p' |
			grep -oE -- '--format [a-z|]+' | sed 's/^--format //' | tr '|' '\n' | sort -u)
		[ -n "$want" ] || continue
		nfmt=$((nfmt + 1))
		[ "$(comp ofc "$c" --format '')" = "$want" ] && ok ||
			bad "completion of $c --format" "$(comp ofc "$c" --format '' | tr '\n' ' ') want $(echo $want)"
	done
	[ "$(comp ofc schedule --format m)" = msccl ] && [ "$nfmt" -ge 4 ] && ok ||
		bad "completion of formats" "$nfmt commands with --format"
else
	bad "$BC missing: scripts/install-deps.sh installs bash-completion"
fi
# Each program loads only the libraries it calls (the Makefile links with
# --as-needed): the gateway no YAML, netlink, LP or NETCONF library, the
# emulators what their protocol needs, whatever the compiler's default.
# The C runtime's own (libc, libm, ..., which a sanitizer's runtime adds)
# are left out of the comparison.
needed() {
	readelf -d "$BUILD/$1" | sed -n 's/.*(NEEDED).*\[\(lib[^.]*\).*/\1/p' |
		grep -vxE 'lib(c|m|dl|rt|pthread|gcc_s|stdc\+\+|asan|ubsan)' | sort | tr '\n' ' '
}
[ "$(needed ofc-gateway)" = "libgnutls libjson-c libmicrohttpd libprotobuf-c libz " ] && ok ||
	bad "ofc-gateway links more than it uses" "$(needed ofc-gateway)"
[ "$(needed ocs-emu)" = "" ] && ok || bad "ocs-emu links more than libc" "$(needed ocs-emu)"
[ "$(needed mrr-emu)" = "libprotobuf-c " ] && ok || bad "mrr-emu links more than it uses" "$(needed mrr-emu)"
needed ofc | grep -q libmicrohttpd && bad "ofc links libmicrohttpd" "$(needed ofc)" || ok
# ofc and ofcd load the netconf driver, and NETCONF's libraries with it,
# as a plugin when a config names a netconf device (drivers/internal.h):
# none of them at start-up; each exports what the plugin calls back.
for b in ofc ofcd; do
	needed $b | grep -qE 'lib(netconf2|ssh|gnutls|yang) ' && bad "$b links NETCONF's libraries" "$(needed $b)" || ok
	missing=$(sed -n 's/^ *\([a-z_0-9]*\);$/\1/p' "$BUILD/netconf.dyn" | while read -r s; do
		nm -D --defined-only "$BUILD/$b" | grep -qw "$s" || echo "$s"
	done)
	[ -s "$BUILD/netconf.dyn" ] && [ -z "$missing" ] && ok || bad "$b lacks what the netconf plugin calls" "$missing"
done
finish
