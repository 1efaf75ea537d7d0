#!/bin/sh
# The operator's page before replicated ofcd (docs/ofcd.md, "The
# operator's page"): two replicas on etcd, a gateway before each; the page,
# in Debian's chromium by Playwright (tests/ui/ui_cluster.mjs), opened on
# the follower's gateway names the leader, and after kill -9 of the leader
# names the follower that took over; the follower's device row shows the
# leader's last contact with the switch, named; its wiring is the
# leader's, named with a link to the leader's page (ofc wiring and status
# through the follower name the leader too). Skipped without chromium, node, npm
# or etcd.
SUITE=ui-cluster
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"
. "$(dirname "$0")/cluster_env.sh"
. "$(dirname "$0")/pki.sh"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null || ! command -v npm >/dev/null ||
	! command -v etcd >/dev/null; then
	echo "ui-cluster: skipped: needs chromium, node, npm and etcd (scripts/install-deps.sh test)"
	exit 0
fi
if [ ! -d tests/ui/node_modules/playwright-core ] &&
	! npm ci --prefix tests/ui --prefer-offline --no-audit --no-fund >"$TMP/npm.log" 2>&1; then
	echo "ui-cluster: skipped: npm ci in tests/ui failed: $(tail -1 "$TMP/npm.log")"
	exit 0
fi

make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
for r in r1 r2; do printf 'user: %s\npassword: ofc-demo\n' $r >"$TMP/$r.cred"; done
start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
	--state "$TMP/e.state"
etcd_start 1 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"

# A gateway before each replica, serving the page.
C="$TMP/pki"
pki_ca "$C" ofc-ui-cluster-ca
pki_cert server server
pki_cert admin client
echo "cn:admin admin" >"$TMP/policy"
for r in r1 r2; do
	$BUILD/ofc-gateway --listen 127.0.0.1:0 --cert "$C/server.pem" --key "$C/server.key" \
		--ca "$C/ca.pem" --policy "$TMP/policy" --ofcd-socket "$TMP/$r.gw" --ui-dir contrib/ui \
		--port-file "$TMP/$r.gwport" 2>"$TMP/$r.gwlog" &
	HELPER_PIDS="$HELPER_PIDS $!"
done
for r in r1 r2; do
	deadline 10
	while [ ! -s "$TMP/$r.gwport" ] && ! past $_end; do sleep 0.02; done
	eval "GW_$r=https://127.0.0.1:$(cat "$TMP/$r.gwport")"
done
for r in r1 r2; do
	replica_dir $r "$TMP/a.yaml" "$e_port"
	eval "_u=\$GW_$r"
	replica_start $r --probe-interval 0 --gateway-socket "$TMP/$r.gw" --gateway-uid "$(id -u)" \
		--advertise "$_u"
done
wait_leader 20 r1 r2 && ok || bad "no replica leads" "$(tail -3 "$TMP/r1.log")"
if [ "$LEADER" = r1 ]; then FOLLOWER=r2; else FOLLOWER=r1; fi
eval "_pid=\$${LEADER}_pid"
# the leader talks to the switch (the follower never does)
expect_exit 0 $OFC --socket "$TMP/$LEADER.sock" reconfigure --topology torus:8x8
eval "_url=\$GW_$FOLLOWER"

# the wiring is the leader's (the agents report to it): through the
# follower, ofc wiring names it and exits 1 (no verdict there to check),
# ofc status says the same on its wiring line
$OFC --socket "$TMP/$FOLLOWER.sock" wiring >"$TMP/wiring.out" 2>&1
wrc=$?
[ "$wrc" -eq 1 ] && grep -qF "wiring: the leader's: the hosts' agents report to $LEADER, which has the verdict (this replica follows and hears none); ofc --socket $TMP/$LEADER.sock wiring" "$TMP/wiring.out" &&
	ok || bad "ofc wiring through the follower does not name the leader" "exit $wrc: $(cat "$TMP/wiring.out")"
expect_stdout_has "  wiring     the leader's: the hosts' agents report to $LEADER" $OFC --socket "$TMP/$FOLLOWER.sock" status
eval "_lurl=\$GW_$LEADER"
UI_URL=$_url UI_LEADER_URL=$_lurl UI_PKI=$C UI_LEADER=$LEADER UI_NEW_LEADER=$FOLLOWER UI_KILL_PID=$_pid \
	UI_SHOTS="$BUILD/ui-shots" CHROMIUM=$CHROMIUM timeout 120 node tests/ui/ui_cluster.mjs >"$TMP/driver.out" 2>&1
grep '^FAIL\|^      \|named' "$TMP/driver.out"
dp=$(sed -n 's/^ui-driver: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$TMP/driver.out")
df=$(sed -n 's/^ui-driver: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$TMP/driver.out")
if [ -n "$dp" ]; then
	pass=$((pass + dp))
	fail=$((fail + df))
else
	bad "the browser's driver ran" "$(tail -5 "$TMP/driver.out")"
fi
finish
