# Helpers for tests that run device emulators. Source after lib.sh.
# Emulators listen on 127.0.0.1 port 0 and write the port they got.

EMUS=""
# start_ocs NAME ARGS...: start build/ocs-emu; sets NAME_port and NAME_pid.
start_emu() {
	kind=$1
	name=$2
	shift 2
	rm -f "$TMP/$name.port"
	"$BUILD/$kind" --listen 127.0.0.1:0 --port-file "$TMP/$name.port" "$@" 2>>"$TMP/$name.stderr" &
	pid=$!
	EMUS="$EMUS $pid"
	# 5 s by the clock, not by turns of the loop (a turn is the sleep and
	# the test, longer than 2 ms on a loaded machine); each turn's sleep
	# twice the last, up to 20 ms: an emulator takes tens of milliseconds
	# to listen, and each sleep is a process
	deadline 5 _emu_end
	_nap=0.002
	while [ ! -s "$TMP/$name.port" ] && ! past $_emu_end; do
		sleep $_nap
		case $_nap in 0.002) _nap=0.004 ;; 0.004) _nap=0.008 ;; *) _nap=0.02 ;; esac
	done
	eval "${name}_pid=$pid"
	# read, not $(cat): test_apply starts an emulator 290 times
	_port=
	[ -s "$TMP/$name.port" ] && read -r _port <"$TMP/$name.port"
	eval "${name}_port=$_port"
}
# Once waited for, a pid is free for any other process on the machine (pids
# wrap at 32768 under load): it leaves EMUS, so the exit's stop_all_emus
# never signals a stranger.
stop_emu() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	_left=""
	for _p in $EMUS; do [ "$_p" = "$1" ] || _left="$_left $_p"; done
	EMUS=$_left
}
stop_all_emus() {
	for p in $EMUS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap 'stop_all_emus; rm_tmp' EXIT

# A copy of configs/torus64-ocs.yaml in $TMP with the topology, timeout and
# retries changed: make_torus_config OUT TOPOLOGY TIMEOUT RETRIES
make_torus_config() {
	cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
	sed -e "s|^topology: .*|topology: $2|" -e "s|timeout: .*|timeout: $3|" \
		-e "s|retries: .*|retries: $4|" -e "s|credentials: .*|credentials: ocs0.cred|" \
		configs/torus64-ocs.yaml >"$1"
}

# four_ocs_fabric FILE NAME [HOSTS TOPOLOGY]: 64 hosts (or HOSTS) of 4
# ports at 100 Gb/s, port j of every host on ocsj (four emulated OCS of as
# many ports as hosts, e0..e3, their states in $TMP/eJ.state), torus:8x8
# (or TOPOLOGY) with a 64 MiB allreduce: the fabric a lost or drained
# switch takes a quarter of.
four_ocs_fabric() {
	_n=${3:-64}
	cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
	for i in 0 1 2 3; do
		start_emu ocs-emu "e$i" --ports "$_n" --credentials "$TMP/ocs0.cred" --state "$TMP/e$i.state"
	done
	{
		printf 'version: 1\nname: %s\nhosts: {count: %s, prefix: h, ports: 4, port_rate: 100Gbps}\nswitches:\n' "$2" "$_n"
		for i in 0 1 2 3; do
			eval "p=\$e${i}_port"
			printf '  - {name: ocs%s, type: ocs, ports: %s, driver: {type: tl1, address: "127.0.0.1:%s", credentials: ocs0.cred, timeout: 1s, retries: 1}}\n' "$i" "$_n" "$p"
		done
		printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\ntopology: %s\n' "${4:-torus:8x8}"
		printf 'collectives:\n  - {op: allreduce, size: 64MiB}\n'
	} >"$1"
}
