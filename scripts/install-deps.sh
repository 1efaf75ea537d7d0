#!/bin/sh
# Install the Debian packages ofc builds and tests against, only those missing.
# Called by `make` when a dependency check fails; safe to run by hand.
set -eu

PKGS="libyaml-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
liblpsolve55-dev libnl-3-dev libnl-route-3-dev libnl-genl-3-dev libcmocka-dev
pkg-config graphviz iproute2 iputils-ping python3 libsystemd-dev systemd
python3-protobuf man-db groff-base mpich libmpich-dev bash-completion
slurmctld slurmd slurm-client munge
libyang2-dev libnauty2-dev coinor-libclp-dev g++ libbliss-dev
libjson-c-dev libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev
openssl curl prometheus
libnetconf2-dev libssh-dev libyuma-base netconfd openssh-server openssh-client
python3-ncclient
etcd-server etcd-client sslscan"

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
			*) deb="the package that ships $pc.pc" ;;
			esac
			echo "install-deps: the build needs the library '$pc' (Debian: $deb); run scripts/install-deps.sh as root or install it" >&2
			status=1
		fi
	done
	exit $status
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
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
