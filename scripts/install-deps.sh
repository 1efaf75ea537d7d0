#!/bin/sh
# Install the Debian packages ofc needs, only those missing. Safe to run by
# hand. The packages come in groups, each installed by the make targets that
# use it, so that building and running ofc does not pull in the test suite's
# servers:
#
#   build  what `make`, `make run` and the programs need: the compilers'
#          libraries, protoc, the YANG modules embedded at build time, and
#          what the programs load when they run (libcurl for ofc --server:
#          its headers too, as the CLI takes libcurl's types from
#          curl/curl.h and loads the library itself; the Python client's
#          protobuf, iproute2 for the testbed)
#   mpi    MPICH and Open MPI, for the MPI baseline's rank and libofc-mpi
#          (make mpi, make install); MPICH stays the default mpicc
#   unit   what the unit tests run against: cmocka, etcd and openssl
#          (the store's tests start an etcd with certificates they make):
#          make unit needs no more
#   deb    what `make deb` builds and checks the Debian package with:
#          build-essential (which dpkg-checkbuilddeps asks of every
#          package), debhelper (with dh-python for the client), dpkg-dev,
#          fakeroot, lintian; it includes mpi (the package ships the rank)
#   test   what the tests and benchmarks run against: cmocka, etcd, Slurm,
#          Prometheus's promtool, yuma123's netconfd behind an sshd,
#          ncclient, sslscan, graphviz's dot, man, bash-completion and
#          bliss (make integration, make test, make bench), Debian's chromium and node
#          with playwright-core as tests/ui/package-lock.json pins it (npm
#          ci: the operator page's test), debootstrap (scripts/fresh-check
#          makes its clean Debian roots with it), systemd-container
#          (test_systemd.sh boots those roots with systemd-nspawn), lldpd
#          (test_hostd.sh runs it in each host's namespace beside
#          ofc-hostd), valgrind (test_lp_threads.sh: its race checker sees
#          into lp_solve); it includes unit, mpi and deb
#
# With no group named, every group (what a developer's machine wants).
# Usage: scripts/install-deps.sh [build|mpi|unit|deb|test]...
#        scripts/install-deps.sh --check PKGCONFIG...
#        scripts/install-deps.sh --list GROUP: the group's packages, one a
#          line, installing nothing (scripts/check-deps reads the groups so)
set -eu

BUILD_PKGS="libyaml-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
liblpsolve55-dev libnl-3-dev libnl-route-3-dev libnl-genl-3-dev pkg-config
python3 libsystemd-dev libyang2-dev libnauty2-dev coinor-libclp-dev g++
libjson-c-dev libmicrohttpd-dev libgnutls28-dev libnetconf2-dev libssh-dev
libyuma-base libcurl4-openssl-dev python3-protobuf iproute2 zlib1g-dev"

MPI_PKGS="mpich libmpich-dev openmpi-bin libopenmpi-dev"

UNIT_PKGS="libcmocka-dev etcd-server openssl"

DEB_PKGS="build-essential debhelper dh-python dpkg-dev fakeroot lintian"

TEST_PKGS="libcmocka-dev graphviz iputils-ping systemd man-db groff-base
bash-completion slurmctld slurmd slurm-client munge libbliss-dev
openssl curl prometheus netconfd openssh-server
openssh-client python3-ncclient etcd-server etcd-client sslscan chromium nodejs
debootstrap systemd-container lldpd valgrind"

# --check PKG...: every pkg-config name the Makefile links is there, else
# say which Debian package brings it (run by make after installing, so a
# missing library is named before the compiler trips on its header).
if [ "${1:-}" = "--check" ]; then
	shift
	status=0
	for pc in "$@"; do
		if ! pkg-config --exists "$pc"; then
			case "$pc" in
			yaml-0.1) deb=libyaml-dev ;;
			libprotobuf-c) deb=libprotobuf-c-dev ;;
			libnl-*) deb="libnl-3-dev libnl-route-3-dev libnl-genl-3-dev" ;;
			libsystemd) deb=libsystemd-dev ;;
			libyang) deb=libyang2-dev ;;
			json-c) deb=libjson-c-dev ;;
			libmicrohttpd) deb=libmicrohttpd-dev ;;
			gnutls) deb=libgnutls28-dev ;;
			libcurl) deb=libcurl4-openssl-dev ;;
			nauty) deb=libnauty2-dev ;;
			clp) deb=coinor-libclp-dev ;;
			libbliss-cxx) deb=libbliss-dev ;;
			libnetconf2) deb=libnetconf2-dev ;;
			libssh) deb=libssh-dev ;;
			zlib) deb=zlib1g-dev ;;
			*) deb="the package that ships $pc.pc" ;;
			esac
			echo "install-deps: the build needs the library '$pc' (Debian: $deb); run scripts/install-deps.sh as root or install it" >&2
			status=1
		fi
	done
	exit $status
fi

if [ "${1:-}" = "--list" ]; then
	case "${2:-}" in
	build) echo $BUILD_PKGS ;;
	mpi) echo $MPI_PKGS ;;
	unit) echo $UNIT_PKGS ;;
	deb) echo $MPI_PKGS $DEB_PKGS ;;
	test) echo $UNIT_PKGS $MPI_PKGS $DEB_PKGS $TEST_PKGS ;;
	*)
		echo "install-deps: --list GROUP (build, mpi, unit, deb, test)" >&2
		exit 2
		;;
	esac | tr ' ' '\n'
	exit 0
fi

[ $# -eq 0 ] && set -- build mpi test
PKGS=""
UI=""
for group in "$@"; do
	case "$group" in
	build) PKGS="$PKGS $BUILD_PKGS" ;;
	mpi) PKGS="$PKGS $MPI_PKGS" ;;
	unit) PKGS="$PKGS $UNIT_PKGS" ;;
	deb) PKGS="$PKGS $MPI_PKGS $DEB_PKGS" ;;
	test)
		PKGS="$PKGS $UNIT_PKGS $MPI_PKGS $DEB_PKGS $TEST_PKGS"
		UI=yes
		;;
	*)
		echo "install-deps: no group '$group' (build, mpi, unit, deb, test)" >&2
		exit 2
		;;
	esac
done

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

# The page's test drives chromium with playwright-core from npm, pinned by
# the lock file (npm ci; from npm's cache when it holds it). Debian's
# nodejs has npm in its own package; NodeSource's brings it along.
ui_npm() {
	[ -n "$UI" ] || return 0
	ui="$(dirname "$0")/../tests/ui"
	[ -d "$ui/node_modules/playwright-core" ] && return 0
	command -v npm >/dev/null 2>&1 || $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
	echo "install-deps: npm ci in tests/ui (playwright-core)" >&2
	npm ci --prefix "$ui" --prefer-offline --ignore-scripts --no-audit --no-fund >/dev/null
}

# Open MPI's alternatives outrank MPICH's: installed beside it, it would
# take over mpicc and mpiexec, which ofc's MPI baseline and `make mpi`
# mean as MPICH (Open MPI is named mpicc.openmpi, mpiexec.openmpi).
pin_mpich() {
	[ -x /usr/bin/mpicc.mpich ] || return 0
	$SUDO update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null
	$SUDO update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null
	$SUDO update-alternatives --set mpi-x86_64-linux-gnu /usr/include/x86_64-linux-gnu/mpich >/dev/null
}

SUDO=""
if [ -z "$missing" ]; then
	ui_npm
	exit 0
fi

echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "install-deps: need root (or sudo) to install:$missing" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
pin_mpich
ui_npm
