#!/bin/sh
# Copy the shared libraries a build's ofc and Clp plugin load (ldd's
# answer, the loader and libc included) into DIR, for a machine that has
# not got them: carry BUILD and DIR there and run
# LIBS=DIR bench/threads.sh (about 36 MB on Debian 12).
#
#   bench/bundle_libs.sh build/libs [BUILD]
set -eu
[ $# -ge 1 ] || { echo "usage: bench/bundle_libs.sh DIR [BUILD]" >&2; exit 2; }
dir=$1 build=${2:-build}
mkdir -p "$dir"
for f in "$build/ofc" "$build/libofc-clp.so"; do
	[ -e "$f" ] || { echo "bundle_libs: $f is not built" >&2; exit 2; }
	ldd "$f" | awk '/=> \// { print $3 } /^[ \t]*\/[^ ]*ld-linux/ { print $1 }'
done | sort -u | while read -r lib; do
	cp -L "$lib" "$dir/"
done
ls "$dir" | wc -l | sed "s|\$| libraries in $dir ($(du -sh "$dir" | cut -f1))|"
