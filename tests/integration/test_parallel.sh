#!/bin/sh
# A transaction drives its switches side by side: four ocs-emu switches
# all hold a change at once (the emulators wait on a hold file; one after
# another, only the first would get one); one switch refusing a change
# half-way leaves every switch where it started, read back from the
# emulators' own state files; the plan's switching time is the slowest
# switch's (the events' order is test_ctl_parallel's: the CLI prints them
# on a terminal only). No timing is asserted: the waits have deadlines only.
SUITE=parallel
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

N=4
ST="$TMP/state"
mkdir -p "$ST"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"

# make_config OUT TOPOLOGY: 16 hosts of 4 ports, port j of each on switch
# ocsj (16 ports); ocs3 takes 30 ms a change, the others 10 ms.
make_config() {
	{
		printf 'version: 1\nname: par4\nhosts: {count: 16, prefix: h, ports: 4}\nswitches:\n'
		for i in 0 1 2 3; do
			t=10ms
			[ $i -eq 3 ] && t=30ms
			printf '  - name: ocs%s\n    type: ocs\n    ports: 16\n    reconfig_time: %s\n' $i $t
			printf '    driver: {type: tl1, address: 127.0.0.1:1, credentials: ocs0.cred, timeout: 30s, retries: 0}\n'
		done
		printf 'wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n'
		printf 'topology: %s\n' "$2"
	} >"$1"
}
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
make_config "$TORUS" torus:4x4
make_config "$CIRC" circulant:16:3,5

# start_switch I ARGS...: ocs-emu for switch I on its state file and log
start_switch() {
	i=$1
	shift
	start_emu ocs-emu "s$i" --ports 16 --credentials "$TMP/ocs0.cred" \
		--state "$TMP/s$i.state" --log "$TMP/s$i.log" "$@"
}
DEVS=""
devices() {
	DEVS=""
	for i in 0 1 2 3; do
		eval "p=\$s${i}_port"
		DEVS="$DEVS --device ocs$i=127.0.0.1:$p"
	done
}
for i in 0 1 2 3; do
	: >"$TMP/s$i.state"
	start_switch $i --hold-file "$TMP/hold"
done
devices

# ---- the switching time: the slowest switch's change, not the sum ----------------
# An OCS reconfigures once however many cross-connects change (16 here), as
# `ofc plan --workload` prices it (fswitch_change_seconds): ocs3's 30 ms.
expect_json 'j["operations"]==64 and all(d["add"]==16 for d in j["device_plan"]["devices"]) and abs(j["switching_seconds"]-0.030)<1e-9 and sorted(d["estimated_seconds"] for d in j["device_plan"]["devices"])==[0.01,0.01,0.01,0.03] and abs(j["switching_seconds"]-max(d["estimated_seconds"] for d in j["device_plan"]["devices"]))<1e-12' \
	$OFC plan "$TORUS" $DEVS --state-dir "$ST" --json
expect_stdout_has "fabric par4: 64 operations on 4 devices (switching time about 30 ms, the devices driven side by side)" \
	$OFC plan "$TORUS" $DEVS --state-dir "$ST"

# ---- side by side: every switch holds a change at once --------------------------
# While the hold file exists each emulator keeps the first change it gets;
# the drive is side by side when every log shows one before any is let go.
touch "$TMP/hold"
$OFC apply "$TORUS" $DEVS --state-dir "$ST" >"$TMP/apply.out" 2>&1 &
APPLY=$!
end=$(($(date +%s) + 20))
held=0
while [ "$(date +%s)" -le $end ]; do
	held=0
	for i in 0 1 2 3; do
		grep -q "ENT-PATCH" "$TMP/s$i.log" && held=$((held + 1))
	done
	[ $held -eq $N ] && break
	sleep 0.05
done
rm -f "$TMP/hold"
wait $APPLY
rc=$?
if [ $held -eq $N ]; then ok; else
	bad "only $held of $N switches had a change in flight at once (driven one after another?)"
fi
if [ $rc -eq 0 ] && grep -q "committed transaction 1: 64 operations on 4 devices" "$TMP/apply.out"; then ok; else
	bad "the held apply exited $rc" "$(head -c 600 "$TMP/apply.out")"
fi
# ---- one switch refusing a change half-way: all four back where they were --------
for i in 0 1 2 3; do cp "$TMP/s$i.state" "$TMP/s$i.before"; done
expect_json 'j["operations"]>0 and all(d["remove"]>0 and d["add"]>0 for d in j["device_plan"]["devices"])' \
	$OFC plan "$CIRC" $DEVS --state-dir "$ST" --json
# ocs2 again, refusing its 6th command: login, read, then the 4th change
stop_emu "$s2_pid"
: >"$TMP/s2.log"
start_switch 2 --fail-at 6 --fail-mode deny
for i in 0 1 3; do : >"$TMP/s$i.log"; done
devices
expect_exit 1 $OFC apply "$CIRC" $DEVS --state-dir "$ST"
if grep -q "ocs2" "$TMP/err" && grep -qi "rolled back" "$TMP/err"; then ok; else
	bad "the failed apply should name ocs2 and say it rolled back" "$(head -c 600 "$TMP/err")"
fi
# ocs2 took changes before the refusal: it failed mid-way
if [ "$(awk '$1 < 6 && $2 ~ /-PATCH/' "$TMP/s2.log" | wc -l)" -ge 1 ]; then ok; else
	bad "ocs2 failed before any change" "$(head -c 600 "$TMP/s2.log")"
fi
for i in 0 1 2 3; do
	# every switch was driven (ocs0, 1 and 3 to the end) and is back
	if grep -q "ENT-PATCH" "$TMP/s$i.log" && cmp -s "$TMP/s$i.state" "$TMP/s$i.before"; then ok; else
		bad "ocs$i is not where it started (or was never driven)" \
			"before: $(tr '\n' ' ' <"$TMP/s$i.before" | head -c 200)" \
			"after:  $(tr '\n' ' ' <"$TMP/s$i.state" | head -c 200)"
	fi
done
expect_json 'j["in_sync"] and j["at_target"] and j.get("transaction") is None' \
	$OFC status "$TORUS" $DEVS --state-dir "$ST" --json
# --horizon prices a candidate's switching as the plan says it: the
# slowest switch's, not the sum
cp "$CIRC" "$TMP/circh.yaml"
printf 'collectives:\n  - {op: allreduce, size: 1MiB}\ncost_model: {alpha: 10us, link_bandwidth: 100Gbps}\n' >>"$TMP/circh.yaml"
expect_json 'j["switching_seconds"]==max(d["estimated_seconds"] for d in j["device_plan"]["devices"]) and j["switching_seconds"]<sum(d["estimated_seconds"] for d in j["device_plan"]["devices"])' \
	$OFC plan "$TMP/circh.yaml" $DEVS --state-dir "$ST" --relabel --json
S=$(python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["switching_seconds"]))' "$TMP/out")
expect_json "[k['reconfig_seconds'] for k in j['device_plan']['choice']['candidates'] if k['kind']=='requested']==[$S]" \
	$OFC plan "$TMP/circh.yaml" $DEVS --state-dir "$ST" --horizon 1 --alternatives 0 --json

# ---- the same over NETCONF: four SSH sessions (libssh, libnetconf2 and
# libyang on four threads at once) ---------------------------------------------------
cp configs/credentials/known_hosts "$TMP/known_hosts"
for f in torus circ; do
	sed -e 's|type: tl1, address: 127.0.0.1:1, credentials: ocs0.cred|type: netconf, address: 127.0.0.1:1, credentials: ocs0.cred, known_hosts: known_hosts|' \
		-e 's|^name: par4|name: par4n|' "$TMP/$f.yaml" >"$TMP/${f}n.yaml"
done
# start_nc I ARGS...: netconf-emu for switch I on its state file and log
start_nc() {
	i=$1
	shift
	start_emu netconf-emu "s$i" --ports 16 --host-key configs/credentials/netconf-emu-host.key \
		--credentials "$TMP/ocs0.cred" --state "$TMP/n$i.state" --log "$TMP/n$i.log" "$@"
}
for i in 0 1 2 3; do
	stop_emu "$(eval echo "\$s${i}_pid")"
	: >"$TMP/n$i.state"
	start_nc $i --hold-file "$TMP/hold"
done
devices
touch "$TMP/hold"
$OFC apply "$TMP/torusn.yaml" $DEVS --state-dir "$ST" >"$TMP/apply.out" 2>&1 &
APPLY=$!
end=$(($(date +%s) + 20))
held=0
while [ "$(date +%s)" -le $end ]; do
	held=0
	for i in 0 1 2 3; do
		grep -q " commit$" "$TMP/n$i.log" && held=$((held + 1))
	done
	[ $held -eq $N ] && break
	sleep 0.05
done
rm -f "$TMP/hold"
wait $APPLY
rc=$?
if [ $held -eq $N ] && [ $rc -eq 0 ]; then ok; else
	bad "netconf: $held of $N switches had a commit in flight at once; the apply exited $rc" \
		"$(head -c 600 "$TMP/apply.out")"
fi
# ocs1 again, refusing the read-back after its commit (its 8th command:
# get, two locks, get, discard, edit, commit, get): changed, then failed
for i in 0 1 2 3; do cp "$TMP/n$i.state" "$TMP/n$i.before"; done
stop_emu "$s1_pid"
: >"$TMP/n1.log"
start_nc 1 --fail-at 8 --fail-mode deny
for i in 0 2 3; do : >"$TMP/n$i.log"; done
devices
expect_exit 1 $OFC apply "$TMP/circn.yaml" $DEVS --state-dir "$ST"
if grep -q "ocs1" "$TMP/err" && grep -qi "rolled back" "$TMP/err" &&
	[ "$(awk '$1 < 8 && $2 == "commit"' "$TMP/n1.log" | wc -l)" -eq 1 ]; then ok; else
	bad "netconf: ocs1 should have committed, then failed, and all rolled back" \
		"$(head -c 600 "$TMP/err")" "$(head -c 600 "$TMP/n1.log")"
fi
for i in 0 1 2 3; do
	if grep -q " connect " "$TMP/n$i.log" && cmp -s "$TMP/n$i.state" "$TMP/n$i.before"; then ok; else
		bad "netconf: ocs$i is not where it started (or was never driven)"
	fi
done

finish
