#!/bin/sh
# End to end: `ofc schedule` on the issue's target topologies (build, verify,
# price, print), wall time and peak RSS of the whole process.
BUILD=${BUILD:-build}
OFC=$BUILD/ofc
echo "ofc schedule end to end (generation + verification + output)"
echo
echo "| command | wall s | peak MiB | generate s | verify s |"
echo "|---|---|---|---|---|"
for args in "torus:32x32 allgather" "hypercube:10 allgather" "torus:50x50 allgather" \
	"torus:50x50 allreduce" "genkautz:1024,4 allreduce" "line^3(circulant:16:3,4) allreduce"; do
	set -- $args
	out=$(mktemp)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %M' -o "$out.t" "$OFC" schedule --topology "$1" --collective "$2" \
			--size 1MiB --json >"$out" || echo "FAILED: $args"
		read -r wall kib <"$out.t"
	else
		wall=?; kib=0
		"$OFC" schedule --topology "$1" --collective "$2" --size 1MiB --json >"$out"
	fi
	gen=$(python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['generate_s'])" "$out")
	ver=$(python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['verify_s'])" "$out")
	echo "| ofc schedule --topology '$1' --collective $2 --size 1MiB --json | $wall | $((kib / 1024)) | $gen | $ver |"
	rm -f "$out" "$out.t"
done
