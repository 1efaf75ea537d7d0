# Slurm on loopback for tests and benchmarks (docs/slurm.md, "Munge
# and Slurm for a test"). Source after lib.sh; needs root. Everything lives
# under $TMP: a munge key made here and munged on its own socket, slurm.conf
# with slurmctld and one slurmd -N per node (each its own port), node00..
# nodeNN mapped to ofc hosts h0..hNN, ofc's PrologSlurmctld and
# EpilogSlurmctld (contrib/slurm/ with an env file naming $OFCABS and $SOCK).
#
#   slurm_configure N   the key, ports, nodes.map, slurm.conf, the wrappers
#   slurm_start N       munged, slurmctld, N slurmd; 0 once all N are idle
#   slurm_stop          cancel every job, stop the daemons (by their pid files)

# How long slurmctld gives a prolog or epilog: under the sanitizers (make
# check) ofc starts and works several times slower, and a failover's
# election with it.
PE_TIMEOUT=30
[ -z "${SAN:-}" ] || PE_TIMEOUT=90
slurm_configure() {
	_n=$1
	mkdir -p "$TMP/munge" "$TMP/spool" "$TMP/slurmstate" "$TMP/log"
	chmod 700 "$TMP/munge"
	dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$TMP/munge/munge.key"
	# free loopback ports: slurmctld's and one per slurmd
	scripts/free-ports $((_n + 1)) >"$TMP/ports" || return 1
	set -- $(cat "$TMP/ports")
	_ctld=$1
	shift
	: >"$TMP/nodes.map"
	: >"$TMP/nodes.conf"
	_i=0
	while [ $_i -lt "$_n" ]; do
		_node=$(printf 'node%02d' $_i)
		echo "$_node h$_i" >>"$TMP/nodes.map"
		echo "NodeName=$_node NodeHostname=$_node NodeAddr=127.0.0.1 Port=$1 CPUs=1 State=UNKNOWN" >>"$TMP/nodes.conf"
		mkdir -p "$TMP/spool/$_node"
		shift
		_i=$((_i + 1))
	done
	cat >"$TMP/slurm.conf" <<EOF
ClusterName=ofcslurm
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$_ctld
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$TMP/munge/sock
StateSaveLocation=$TMP/slurmstate
SlurmdSpoolDir=$TMP/spool/%n
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/spool/%n/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
PrologSlurmctld=$TMP/ofc-prolog
EpilogSlurmctld=$TMP/ofc-epilog
PrologEpilogTimeout=$PE_TIMEOUT
TopologyPlugin=topology/tree
MessageTimeout=10
include $TMP/nodes.conf
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
	# no topology.conf yet: each node its own leaf under one switch
	printf 'SwitchName=all Nodes=%s\n' "$(cut -d' ' -f1 "$TMP/nodes.map" | paste -sd, -)" >"$TMP/topology.conf"
	cp contrib/slurm/ofc-prolog contrib/slurm/ofc-epilog "$TMP/"
	cat >"$TMP/ofc-slurm.env" <<EOF
OFC=$OFCABS
OFC_SOCKET=$SOCK
OFC_SLURM_MAP=$TMP/nodes.map
OFC_SLURM_SCONTROL=$(command -v scontrol)
SLURM_CONF=$TMP/slurm.conf
OFC_SLURM_LOG=$TMP/ofc-slurm.log
EOF
	SLURM_CONF="$TMP/slurm.conf"
	export SLURM_CONF
}

slurm_start() {
	_n=$1
	munged --force --key-file="$TMP/munge/munge.key" --socket="$TMP/munge/sock" \
		--pid-file="$TMP/munge/pid" --log-file="$TMP/munge/log" --seed-file="$TMP/munge/seed" || return 1
	slurmctld -i -f "$SLURM_CONF" || return 1
	_i=0
	while [ $_i -lt "$_n" ]; do
		slurmd -f "$SLURM_CONF" -N "$(printf 'node%02d' $_i)" || return 1
		_i=$((_i + 1))
	done
	# every node idle, by the clock
	deadline 60 _slurm_end
	until [ "$(sinfo -h -t idle -o '%D' 2>/dev/null)" = "$_n" ] || past $_slurm_end; do
		sleep 0.2
	done
	[ "$(sinfo -h -t idle -o '%D' 2>/dev/null)" = "$_n" ]
}

slurm_stop() {
	[ -e "$TMP/slurm.conf" ] && SLURM_CONF="$TMP/slurm.conf" scancel --full --quiet --user=root 2>/dev/null
	_pids=
	for _f in "$TMP"/spool/*/slurmd.pid "$TMP/slurmctld.pid" "$TMP/munge/pid"; do
		[ -s "$_f" ] && _pids="$_pids $(cat "$_f" 2>/dev/null)"
	done
	for _p in $_pids; do kill "$_p" 2>/dev/null; done
	# slurmd and slurmctld stop within a second or two; by the clock
	deadline 10 _slurm_stop_end
	for _p in $_pids; do
		while kill -0 "$_p" 2>/dev/null && ! past $_slurm_stop_end; do sleep 0.1; done
		kill -9 "$_p" 2>/dev/null
	done
}

# job_field ID KEY: a field of scontrol show job; wait_job ID STATE...: until
# the job is in one of them (60 s by the clock); submit ARGS: sbatch, the id
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# job_fields ID KEY...: their values from one scontrol call, blank-separated
job_fields() {
	_id=$1
	shift
	scontrol show job "$_id" 2>/dev/null | tr ' ' '\n' >"$TMP/job.fields"
	_out=
	for _k in "$@"; do _out="$_out $(sed -n "s/^$_k=//p" "$TMP/job.fields" | head -1)"; done
	echo "${_out# }"
}
wait_job() {
	_id=$1
	shift
	deadline 60 _job_end
	while ! past $_job_end; do
		_s=$(job_field "$_id" JobState)
		for _want in "$@"; do [ "$_s" = "$_want" ] && return 0; done
		sleep 0.1
	done
	return 1
}
submit() { sbatch --parsable "$@" | cut -d';' -f1; }
