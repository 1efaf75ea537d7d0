#!/bin/sh
# The time from sbatch to the job's start, with ofc's
# PrologSlurmctld (the job's hosts rewired to its topology first) and
# without it, on ocs-emu with a 25 ms per-change delay and with none, for
# 16 and 64 hosts. Slurm on loopback as tests/integration/test_slurm.sh
# runs it (tests/integration/slurm_env.sh): one slurmd -N per host. Each
# job takes every host and alternates between two topologies, so every
# prolog moves circuits (how many: the ops column, as ofcd reports them);
# a job's start is the first line of its script (date +%s.%N), the submit
# the moment before sbatch. Prints one line per job and the median of each
# setting. Needs root, slurm-wlm and munge.
# sh bench/slurm_start.sh [HOSTS] [ROUNDS]   (no HOSTS: 16, then 64)
if [ -z "$1" ]; then
	sh "$0" 16 "${2:-5}" && sh "$0" 64 "${2:-5}"
	exit
fi
N=$1
ROUNDS=${2:-5}
SUITE=slurm_start
. tests/integration/lib.sh
. tests/integration/emu.sh
. tests/integration/slurm_env.sh
TMP=$(cd "$TMP" && pwd -P)
chmod 755 "$TMP"
OFCABS=$(cd "$(dirname "$OFC")" && pwd -P)/$(basename "$OFC")
SOCK="$TMP/ofcd.sock"
DAEMONS=""
trap 'slurm_stop; for p in $DAEMONS; do kill "$p" 2>/dev/null; done; stop_all_emus; rm -rf "$TMP"' EXIT

case $N in
16) SIDE=4 A=torus:4x4 B=circulant:16:1,3 ;;
64) SIDE=8 A=torus:8x8 B=circulant:64:1,8 ;;
*) echo "slurm_start: HOSTS is 16 or 64" >&2 && exit 2 ;;
esac
mkdir -p "$TMP/st" "$TMP/cred" "$TMP/jobs"
chmod 700 "$TMP/cred"
cp configs/credentials/ocs0.cred "$TMP/cred/ocs0.cred"
chmod 600 "$TMP/cred/ocs0.cred"
sed -e "s/count: 64/count: $N/" -e "s/ports: 256/ports: $((4 * N))/" -e "s/^topology: .*/topology: torus:${SIDE}x$SIDE/" \
	-e "s|credentials: .*|credentials: cred/ocs0.cred|" -e '/op: alltoall/,+1d' \
	configs/torus64-ocs.yaml >"$TMP/fab.yaml"
: >"$TMP/emu.state"
start_emu ocs-emu e --ports $((4 * N)) --credentials configs/credentials/ocs0.cred --state "$TMP/emu.state"
PORT=$e_port
build/ofcd --config "$TMP/fab.yaml" --socket "$SOCK" --state-dir "$TMP/st" --credentials-dir "$TMP/cred" \
	--device "ocs0=127.0.0.1:$PORT" --foreground 2>>"$TMP/ofcd.log" &
DAEMONS="$!"
_end=$(($(date +%s) + 10))
until $OFC --socket "$SOCK" status >/dev/null 2>&1 || [ "$(date +%s)" -gt $_end ]; do sleep 0.05; done
$OFC --socket "$SOCK" reconfigure --topology "torus:${SIDE}x$SIDE" >/dev/null || exit 1
slurm_configure "$N"
slurm_start "$N" || { echo "slurm_start: Slurm did not come up" >&2; exit 1; }

echo "hosts $N, $ROUNDS jobs a setting; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-7s %-6s %-18s %8s %5s %9s\n' hosts delay prolog topology start_s ops prolog_s
k=0
for delay in 0 25; do
	stop_emu "$e_pid"
	start_emu ocs-emu e --listen 127.0.0.1:$PORT --ports $((4 * N)) --credentials configs/credentials/ocs0.cred \
		--state "$TMP/emu.state" --delay-ms $delay
	for prolog in off on; do
		if [ $prolog = on ]; then
			sed -i -e 's|^#PrologSlurmctld|PrologSlurmctld|' -e 's|^#EpilogSlurmctld|EpilogSlurmctld|' "$SLURM_CONF"
		else
			sed -i -e 's|^PrologSlurmctld|#PrologSlurmctld|' -e 's|^EpilogSlurmctld|#EpilogSlurmctld|' "$SLURM_CONF"
		fi
		scontrol reconfigure
		sleep 1
		: >"$TMP/times"
		for r in $(seq 1 "$ROUNDS"); do
			k=$((k + 1))
			[ $((k % 2)) -eq 1 ] && spec=$A || spec=$B
			# every node idle again (a job's end leaves them COMPLETING a while)
			_end=$(($(date +%s) + 30))
			until [ "$(sinfo -h -t idle -o '%D')" = "$N" ] || [ "$(date +%s)" -gt $_end ]; do sleep 0.05; done
			t0=$(date +%s.%N)
			id=$(submit -N "$N" -o /dev/null --comment "ofc:topology=$spec" \
				--wrap "date +%s.%N >$TMP/jobs/start.\$SLURM_JOB_ID")
			wait_job "$id" COMPLETED FAILED CANCELLED || { echo "job $id did not end" >&2; exit 1; }
			t1=$(cat "$TMP/jobs/start.$id" 2>/dev/null) || { echo "job $id did not run" >&2; exit 1; }
			ops=- ps=-
			if [ $prolog = on ]; then
				ops=$(sed -n "s/^ofc: job $id: .* committed: \([0-9]*\) operations.*/\1/p" "$TMP/ofc-slurm.log")
				ps=$(sed -n "s/^ofc: job $id: .* committed: .* in \([0-9.]*\) s$/\1/p" "$TMP/ofc-slurm.log")
			fi
			s=$(python3 -c "print('%.3f' % ($t1 - $t0))")
			echo "$s" >>"$TMP/times"
			printf '%-6s %-7s %-6s %-18s %8s %5s %9s\n' "$N" "${delay}ms" $prolog "$spec" "$s" "$ops" "$ps"
			# the epilog lets go before the next job asks (by the clock)
			_end=$(($(date +%s) + 20))
			while [ $prolog = on ] && ! grep -q "job $id: released" "$TMP/ofc-slurm.log" &&
				[ "$(date +%s)" -le $_end ]; do sleep 0.1; done
		done
		printf '%-6s %-7s %-6s %-18s %8s\n' "$N" "${delay}ms" $prolog median \
			"$(sort -n "$TMP/times" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
