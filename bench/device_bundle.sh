#!/bin/sh
# Bundle ofc, ofcd and ocs-emu with the shared libraries they load (but
# libc's own, which the other machine's newer glibc serves), wrappers that
# run each with them, etcd, and a /usr/bin/time stand-in, into DIR: what a
# bare machine (the device host: 16 idle cores, none of ofc's packages)
# needs to run the degraded benches, pinned to two cores so that its
# figures read as this 2-core machine's at load under 1:
#
#   sh bench/device_bundle.sh build/dev           (here; about 50 MB)
#   # there, from the checkout, build/dev carried:
#   D=$PWD/build/dev; export PATH=$D/bin:$PATH
#   BUILD=$D/wb OFC=$D/wb/ofc taskset -c 2,3 sh bench/degraded_replicas.sh 8192 65536
#   sed "s|/usr/bin/time|$D/ptime|" bench/degraded_scale.sh >/tmp/ds.sh
#   BUILD=$D/wb taskset -c 2,3 sh /tmp/ds.sh 8192 65536
set -eu
[ $# -ge 1 ] || { echo "usage: bench/device_bundle.sh DIR [BUILD]" >&2; exit 2; }
dir=$1 build=${2:-build}
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/libs" "$dir/wb"
for b in ofc ofcd ocs-emu; do
	[ -x "$build/$b" ] || { echo "device_bundle: $build/$b is not built" >&2; exit 2; }
	strip -o "$dir/bin/$b" "$build/$b"
	ldd "$build/$b" | awk '/=> \// { print $3 }' |
		grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux)[.-]' |
		while read -r lib; do cp -L "$lib" "$dir/libs/"; done
	printf '#!/bin/sh\nd=$(cd "$(dirname "$0")/.." && pwd)\nLD_LIBRARY_PATH=$d/libs exec "$d/bin/%s" "$@"\n' \
		"$b" >"$dir/wb/$b"
	chmod 755 "$dir/wb/$b"
done
cp "$(command -v etcd)" "$dir/bin/etcd"
cat >"$dir/ptime" <<'PY'
#!/usr/bin/env python3
# /usr/bin/time -f FMT -o OUT CMD...: %e the wall seconds, %M the children's peak KiB
import resource, subprocess, sys, time
a, fmt, out = sys.argv[1:], "%e %M", None
while a and a[0] in ("-f", "-o"):
    fmt, out = (a[1], out) if a[0] == "-f" else (fmt, a[1])
    a = a[2:]
t0 = time.monotonic()
rc = subprocess.call(a)
s = fmt.replace("%e", "%.2f" % (time.monotonic() - t0)).replace(
    "%M", str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
open(out, "w").write(s + "\n") if out else sys.stderr.write(s + "\n")
sys.exit(rc)
PY
chmod 755 "$dir/ptime"
du -sh "$dir" | sed 's|^|device_bundle: |'
