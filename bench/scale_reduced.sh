#!/bin/sh
# Symmetry-reduced BFB: `ofc schedule --algo bfb
# --reduced` on square tori and hypercubes of N = 256 ... 65,536 nodes,
# allgather and allreduce; at N <= 4,096 the explicit schedule beside it
# (the same command without --reduced). Per row: the program's transfers
# and the whole schedule's, generation and verification seconds (the
# summary's generate_s / verify_s), wall seconds and peak RSS of the whole
# command (/usr/bin/time -f '%e %M'), then the explicit run's wall seconds
# and peak. Each figure is the least of REPS runs (default 3); one thread.
# Then Swing allreduce (bandwidth-optimal) on square tori of 256 ... 65,536
# nodes, explicit beside it up to 1,024 (its builder's limit); and the
# all-to-all MCF, paths lowering, reduced on tori and hypercubes of
# 256 ... 4,096 nodes, explicit beside it up to A2A_EXPLICIT_MAX (default
# 256: the explicit torus:32x32 takes minutes and about 10 GB).
#
#   bench/scale_reduced.sh [OFC]
set -u
OFC=${1:-build/ofc}
SIZES=${SIZES:-"256 1024 4096 16384 65536"}
REPS=${REPS:-3}
COLLS=${COLLS:-"allgather allreduce"}
EXPLICIT_MAX=${EXPLICIT_MAX:-4096}
A2A_SIZES=${A2A_SIZES:-"256 1024 4096"}
A2A_EXPLICIT_MAX=${A2A_EXPLICIT_MAX:-256}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/scale_lib.sh"

# SPEC COLL [--reduced] -> "program total gen verify wall peak_mib"
run() {
	: >"$tmp/reps"
	i=0
	case $2 in
	alltoall) algo="mcf --lowering paths" c=alltoall ;;
	swing) algo="swing --variant bandwidth" c=allreduce ;;
	*) algo=bfb c=$2 ;;
	esac
	while [ $i -lt "$REPS" ]; do
		i=$((i + 1))
		/usr/bin/time -f '%e %M' -o "$tmp/t" "$OFC" schedule --topology "$1" --collective "$c" \
			--algo $algo --size 1MiB --threads 1 --json $3 >"$tmp/sum" 2>/dev/null
		python3 - "$tmp/sum" "$tmp/t" >>"$tmp/reps" <<'EOF'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
    w, kb = open(sys.argv[2]).read().split()[-2:]
    if not s["verified"]:
        raise SystemExit
    prog = s["reduced"]["program_transfers"] if "reduced" in s else s["num_transfers"]
    print(prog, s["num_transfers"], s["generate_s"], s["verify_s"], w, int(kb) // 1024)
except Exception:
    pass
EOF
	done
	python3 - "$tmp/reps" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
if not rows:
    print("- - - - - -")
else:
    best = lambda k: min(float(r[k]) for r in rows)
    print(rows[0][0], rows[0][1], "%.4f" % best(2), "%.4f" % best(3), "%.2f" % best(4),
          int(best(5)))
EOF
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uptime | sed 's/.*load/load/')"
echo "| topology | N | collective | program | transfers | generate s | verify s | wall s | peak MiB | explicit wall s | explicit peak MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for fam in torus hypercube; do
	for c in $COLLS; do
		for n in $SIZES; do
			t=$(spec $fam "$n")
			set -- $(run "$t" "$c" --reduced)
			red="| $t | $n | $c | $1 | $2 | $3 | $4 | $5 | $6"
			if [ "$n" -le "$EXPLICIT_MAX" ]; then
				set -- $(run "$t" "$c" "")
				echo "$red | $5 | $6 |"
			else
				echo "$red | - | - |"
			fi
		done
	done
done
for n in $SIZES; do
	t=$(spec torus "$n")
	set -- $(run "$t" swing --reduced)
	red="| $t | $n | allreduce (swing) | $1 | $2 | $3 | $4 | $5 | $6"
	if [ "$n" -le 1024 ]; then
		set -- $(run "$t" swing "")
		echo "$red | $5 | $6 |"
	else
		echo "$red | - | - |"
	fi
done
for fam in torus hypercube; do
	for n in $A2A_SIZES; do
		t=$(spec $fam "$n")
		set -- $(run "$t" alltoall --reduced)
		red="| $t | $n | alltoall (mcf paths) | $1 | $2 | $3 | $4 | $5 | $6"
		if [ "$n" -le "$A2A_EXPLICIT_MAX" ]; then
			set -- $(run "$t" alltoall "")
			echo "$red | $5 | $6 |"
		else
			echo "$red | - | - |"
		fi
	done
done
echo "# end $(date -u '+%H:%M UTC'), $(uptime | sed 's/.*load/load/')"
