# Clean Debian 12 roots, sourced by scripts/fresh-check (a build and a
# package in chroots) and tests/integration/test_systemd.sh (the package
# booted under systemd): the mirror apt uses here, debootstrap's minbase
# with bookworm's updates and security as a new machine has them, and a
# root's /proc and /dev. Needs root; sets nothing when sourced.

# cr_mirror SUITE-REGEX: the URI of the first source with that suite, from
# deb822 .sources or one-line sources.list (bookworm's URI, not
# -security's, which is taken apart).
cr_mirror() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v want="$1" '
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i ~ want) { print uri; exit } }
			/^$/ { uri = "" }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v want="$1" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($(i + 1) ~ want) print $i; break } }' "$f"
	done
}

# cr_trust ROOT: the machine's network, as its resolver: where its
# connections out pass a proxy that signs with a CA of its own (a
# sandbox's egress), the root trusts what the machine trusts, or npm's
# registry is refused there (SELF_SIGNED_CERT_IN_CHAIN). The bundle goes
# beside the root's own and node reads it (NODE_EXTRA_CA_CERTS, cr_in);
# apt's mirror is plain HTTP.
cr_trust() {
	_ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
	[ -f "$_ca" ] || return 0
	mkdir -p "$1/etc/ssl" && cp "$_ca" "$1/etc/ssl/clean-root-host-ca.crt"
}

# cr_base DIR DEBOOTSTRAP-CACHE: debootstrap --variant=minbase bookworm in
# DIR from the mirror apt uses here, bookworm-updates and -security in its
# sources, this machine's resolv.conf, no .deb left in its apt cache, and
# a policy-rc.d that keeps the packages' services from starting while it
# is a chroot (one booted removes it). Exit 2 when there is no mirror.
cr_base() {
	_m=$(cr_mirror '^bookworm$' | head -1)
	_s=$(cr_mirror '^bookworm-security$' | head -1)
	[ -n "$_m" ] || {
		echo "clean-root: no Debian bookworm source in /etc/apt/sources.list*" >&2
		return 2
	}
	[ -n "$_s" ] || _s=http://deb.debian.org/debian-security
	debootstrap --variant=minbase --cache-dir="$2" bookworm "$1" "$_m" &&
		printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
			"$_m" "$_m" "$_s" >"$1/etc/apt/sources.list" &&
		cp /etc/resolv.conf "$1/etc/resolv.conf" &&
		cr_trust "$1" &&
		printf '#!/bin/sh\n# A chroot: no service starts in it.\nexit 101\n' >"$1/usr/sbin/policy-rc.d" &&
		chmod 755 "$1/usr/sbin/policy-rc.d" &&
		rm -f "$1/var/cache/apt/archives/"*.deb
}

# cr_mount ROOT APT-CACHE: ROOT's /proc, a tmpfs /dev with the nodes a
# build and apt use and a devpts of its own (newinstance), so that nothing
# under the root is the host's /dev; a /run of its own (the suites'
# network namespaces, sockets and PID files) and the machine's /sys, a
# slave of it so that nothing unmounted in the root leaves the machine's
# (the testbed reads its interfaces there, systemd-nspawn its cgroups);
# APT-CACHE bound over its /var/cache/apt/archives. The caller unmounts
# (findmnt under ROOT).
cr_mount() {
	mount -t proc proc "$1/proc" &&
		mount -t tmpfs -o mode=0755,nosuid,nodev run "$1/run" &&
		mount --rbind /sys "$1/sys" && mount --make-rslave "$1/sys" &&
		mount -t tmpfs -o mode=0755,nosuid dev "$1/dev" &&
		mknod -m 666 "$1/dev/null" c 1 3 && mknod -m 666 "$1/dev/zero" c 1 5 &&
		mknod -m 666 "$1/dev/full" c 1 7 && mknod -m 666 "$1/dev/random" c 1 8 &&
		mknod -m 666 "$1/dev/urandom" c 1 9 && mknod -m 666 "$1/dev/tty" c 5 0 &&
		mkdir -m 1777 "$1/dev/shm" && mkdir "$1/dev/pts" &&
		mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$1/dev/pts" &&
		ln -s pts/ptmx "$1/dev/ptmx" &&
		ln -s /proc/self/fd "$1/dev/fd" && ln -s /proc/self/fd/0 "$1/dev/stdin" &&
		ln -s /proc/self/fd/1 "$1/dev/stdout" && ln -s /proc/self/fd/2 "$1/dev/stderr" &&
		mount --bind "$2" "$1/var/cache/apt/archives"
}

# cr_in ROOT CMD: CMD by sh in the root, as root, with a clean environment.
# The root is made / by pivot_root in a mount namespace of its own, not by
# chroot: the kernel refuses user namespaces to a chrooted process (and so
# systemd to ofc-gateway's PrivateUsers=), and a folder's / cannot have its
# propagation changed (unshare --propagation, ip netns exec: EINVAL). The
# root is bound over itself there with what is mounted in it. Where
# CR_MNTNS names a file, the namespace is added to it, so that a cleanup
# can end what still runs in it.
cr_in() {
	_r=$1
	shift
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive TERM=dumb \
		NODE_EXTRA_CA_CERTS=/etc/ssl/clean-root-host-ca.crt \
		unshare --mount --propagation private sh -c '
			[ -z "$3" ] || readlink /proc/self/ns/mnt >>"$3"
			mount --rbind "$1" "$1" && cd "$1" && mkdir -p .clean-root-host &&
				pivot_root . .clean-root-host && cd / && umount -l /.clean-root-host &&
				rmdir /.clean-root-host || exit 125
			exec sh -c "$2"' cr-in "$_r" "$*" "${CR_MNTNS:-}"
}
