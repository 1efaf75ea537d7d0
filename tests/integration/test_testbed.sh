#!/bin/sh
# The netns testbed: 16 hosts wired as torus:4x4 through an emulated OCS;
# every ordered pair reaches every other; reconfigure to circulant:16:3,4
# with the testbed up and every pair reaches again; down removes it all.
SUITE=testbed
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "testbed: SKIP: needs root and network namespaces (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

ST="$TMP/state"
mkdir -p "$ST" # plan and status never create it
NAME="tb$$"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
sed -e "s|^name: tb16|name: $NAME|" -e "s|credentials: .*|credentials: ocs0.cred|" \
	tests/configs/tb16-torus.yaml >"$TMP/torus.yaml"
sed -e "s|^name: tb16|name: $NAME|" -e "s|credentials: .*|credentials: ocs0.cred|" \
	tests/configs/tb16-circulant.yaml >"$TMP/circ.yaml"
start_emu ocs-emu e --ports 64 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
cleanup() {
	$OFC testbed down "$TMP/torus.yaml" --state-dir "$ST" >/dev/null 2>&1
	stop_all_emus
	rm -rf "$TMP"
}
trap cleanup EXIT

expect_exit 0 $OFC apply "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST"
expect_error 1 "ofc: the testbed of fabric '$NAME' is not up (run 'ofc testbed up $TMP/torus.yaml')" \
	$OFC testbed check "$TMP/torus.yaml" --state-dir "$ST"
expect_stdout_has "testbed $NAME up: 16 hosts as namespaces ofc-$NAME-*, 64 circuits" \
	$OFC testbed up "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST"
[ "$(ls /run/netns | grep -c "^ofc-$NAME-")" -eq 16 ] && ok || bad "expected 16 namespaces"
expect_json 'j["pairs"]==240 and j["reachable"]==240 and j["unreachable"]==[]' \
	$OFC testbed check "$TMP/torus.yaml" --state-dir "$ST" --json
# h0 reaches h10 (two hops in each dimension) through other hosts.
expect_json 'j["devices"][1]["name"]=="testbed" and j["devices"][1]["circuits"]==64 and j["devices"][1]["routes"]==240 and j["at_target"]' \
	$OFC status "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST" --json

# Reconfigure with the testbed up: the veths and routes move with the switch.
expect_json '[d["name"] for d in j["devices"]]==["ocs0","testbed"] and j["devices"][0]["remove"]==32 and j["devices"][1]["remove"]==32 and j["devices"][1]["add"]==32' \
	$OFC plan "$TMP/circ.yaml" --device "$DEV" --state-dir "$ST" --json
expect_stdout_has "committed transaction 2" $OFC apply "$TMP/circ.yaml" --device "$DEV" --state-dir "$ST"
expect_json 'j["pairs"]==240 and j["reachable"]==240' \
	$OFC testbed check "$TMP/circ.yaml" --state-dir "$ST" --json
expect_json 'j["in_sync"] and j["at_target"]' \
	$OFC status "$TMP/circ.yaml" --device "$DEV" --state-dir "$ST" --json

# And back to the torus.
expect_stdout_has "committed transaction 3" $OFC apply "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST"
expect_json 'j["reachable"]==240' $OFC testbed check "$TMP/torus.yaml" --state-dir "$ST" --json

expect_stdout_has "testbed $NAME down: 16 namespaces removed" \
	$OFC testbed down "$TMP/torus.yaml" --state-dir "$ST"
[ "$(ls /run/netns 2>/dev/null | grep -c "^ofc-$NAME-")" -eq 0 ] && ok || bad "namespaces left behind"
expect_json 'not j["testbed_up"] and len(j["devices"])==1' \
	$OFC status "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST" --json
expect_error 2 "ofc testbed: unknown action 'sideways' (expected up, check, run or down)" $OFC testbed sideways "$TMP/torus.yaml"
expect_error 2 "ofc testbed: missing up, check, run or down" $OFC testbed

finish
