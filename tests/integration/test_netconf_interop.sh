#!/bin/sh
# The netconf driver against NETCONF implementations ofc did not write
# (docs/netconf.md "Interop"): yuma123's netconfd (Debian
# netconfd) loaded with ofc's YANG module, behind a private OpenSSH sshd on
# a loopback port this test picks, with its own host key and config (the
# netconf subsystem is yuma's netconf-subsystem), with ofc and with ofcd
# (its notification session); and python3-ncclient, an independent client,
# against build/netconf-emu (its notifications too). sshd wants its privilege
# separation directory /run/sshd, which the test makes on a tmpfs of a
# mount namespace of its own (unshare), so it needs root; without root,
# netconfd, sshd or unshare the suite says so and skips.
SUITE=netconf-interop
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

skip() {
	echo "netconf-interop: skipped: $1"
	finish
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip "needs root (sshd's privilege separation directory)"
for b in /usr/sbin/netconfd /usr/sbin/netconf-subsystem /usr/sbin/sshd unshare ssh-keygen; do
	command -v "$b" >/dev/null 2>&1 || skip "$b is not installed"
done
unshare -m --propagation private true 2>/dev/null || skip "cannot make a mount namespace"

ST="$TMP/state"
mkdir -p "$ST"
free_port() { scripts/free-ports 1; }
P=$(free_port)
ssh-keygen -q -t ed25519 -N '' -f "$TMP/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/ofc.key"
cp "$TMP/ofc.key.pub" "$TMP/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$P" "$(cut -d' ' -f1,2 "$TMP/host_key.pub")" >"$TMP/known_hosts"
printf 'user: %s\nprivate_key: ofc.key\n' "$(id -un)" >"$TMP/ofc.cred"
cat >"$TMP/sshd_config" <<EOF
Port $P
ListenAddress 127.0.0.1
HostKey $TMP/host_key
PidFile $TMP/sshd.pid
AuthorizedKeysFile $TMP/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
Subsystem netconf /usr/sbin/netconf-subsystem --ncxserver-sockname=$P@$TMP/ncx.sock
EOF
/usr/sbin/sshd -t -f "$TMP/sshd_config" 2>"$TMP/sshd.test" ||
	grep -q "privilege separation directory" "$TMP/sshd.test" || skip "sshd refuses the config: $(cat "$TMP/sshd.test")"
unshare -m --propagation private sh -c "mount -t tmpfs -o size=1m,mode=755 ofc-sshd /run &&
	mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -D -e -f '$TMP/sshd_config'" 2>"$TMP/sshd.log" &
SSHD=$!
# netconfd REVISION: yuma123's agent with ofc's module (the revision's
# file), its own home, log (debug: it names each RPC) and socket, serving
# the sshd's port; run in $TMP, where it writes its backup-cfg.xml
NETCONFD=
SRC=$PWD
netconfd() {
	[ -n "$NETCONFD" ] && kill "$NETCONFD" 2>/dev/null && wait "$NETCONFD" 2>/dev/null
	rm -f "$TMP/ncx.sock"
	(cd "$TMP" && HOME="$TMP" exec /usr/sbin/netconfd \
		--modpath="$SRC/drivers/yang:/usr/share/yuma/modules" \
		--module="$SRC/drivers/yang/optical-switch@$1.yang" --no-startup \
		--superuser="$(id -un)" --access-control=off --port="$P" \
		--ncxserver-sockname="$TMP/ncx.sock" --log="$TMP/netconfd.log" --log-level=debug) \
		>"$TMP/netconfd.out" 2>&1 &
	NETCONFD=$!
	deadline 10
	until [ -S "$TMP/ncx.sock" ] || past $_end; do sleep 0.05; done
}
trap 'kill $NETCONFD $SSHD 2>/dev/null; stop_all_emus; rm_tmp' EXIT
netconfd 2017-08-04
deadline 10
until grep -q "Server listening" "$TMP/sshd.log" || past $_end; do sleep 0.05; done
[ -S "$TMP/ncx.sock" ] && grep -q "Server listening" "$TMP/sshd.log" && ok ||
	bad "netconfd or sshd did not start" "$(tail -3 "$TMP/netconfd.out" "$TMP/sshd.log")"

# nc_config OUT TOPOLOGY: configs/torus64-netconf.yaml logging in with the
# key to the sshd
nc_config() {
	sed -e "s|^topology: .*|topology: $2|" -e "s|timeout: .*|timeout: 10s|" \
		-e "s|credentials: .*|credentials: ofc.cred|" -e "s|known_hosts: .*|known_hosts: known_hosts|" \
		configs/torus64-netconf.yaml >"$1"
}
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
nc_config "$TORUS" torus:8x8
nc_config "$CIRC" circulant:64:3,8
D="ocs0=127.0.0.1:$P"
at() { # CONFIG: the switch holds the config's target and the record agrees
	$OFC status "$1" --device "$D" --state-dir "$ST" --json |
		python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["in_sync"] and j["at_target"] and j.get("transaction") is None else 1)'
}

# ---- netconfd: plan, apply, a reconfiguration, try, confirm --------------------------------
expect_json 'j["devices"][0]["reachable"] and j["devices"][0]["entries"]==0' \
	$OFC status "$CIRC" --device "$D" --state-dir "$ST" --json
expect_stdout_has "committed transaction 1: 256 operations on 1 device" $OFC apply "$CIRC" --device "$D" --state-dir "$ST"
expect_json 'j["operations"]==0' $OFC plan "$CIRC" --device "$D" --state-dir "$ST" --json
at "$CIRC" && ok || bad "netconfd: not at the circulant after the apply"
# the edit went to netconfd's candidate and its commit into running
grep -q "on target 'candidate'" "$TMP/netconfd.log" && grep -q "on target 'running'" "$TMP/netconfd.log" &&
	grep -q "data: /opsw:cross-connects" "$TMP/netconfd.log" &&
	ok || bad "netconfd's log shows no edit of the cross-connects" "$(grep -A2 edit-transaction "$TMP/netconfd.log" | head -6)"
# circulant -> torus: removals and merges of the same ingresses in one edit
expect_stdout_has "committed transaction 2: 256 operations on 1 device" $OFC apply "$TORUS" --device "$D" --state-dir "$ST"
at "$TORUS" && ok || bad "netconfd: not at the torus"
# a trial without confirm: netconfd's confirmed commit, undone by ofc
expect_error 1 "ofc: not confirmed within 1 s: reverted; the fabric is where it was" \
	$OFC try "$CIRC" --timeout 1 --device "$D" --state-dir "$ST"
at "$TORUS" && ok || bad "netconfd: the trial was not undone"
rm -f "$TMP/try.out"
$OFC try "$CIRC" --timeout 60s --device "$D" --state-dir "$ST" >"$TMP/try.out" 2>&1 &
try_pid=$!
deadline 20
until grep -q "ofc confirm" "$TMP/try.out" 2>/dev/null || past $_end; do sleep 0.05; done
expect_stdout_has "committed" $OFC confirm --state-dir "$ST"
wait $try_pid
[ $? -eq 0 ] && at "$CIRC" && ok || bad "netconfd: the confirmed trial" "$(cat "$TMP/try.out")"
# ofc killed during a trial: the next command repairs from ofc's journal,
# whatever the agent did with the confirmed commit of a session that died
# (netconfd 2.13 tries to revert it before it lets go of that session's
# locks, and fails: docs/netconf.md "Interop")
rm -f "$TMP/try.out"
$OFC try "$TORUS" --timeout 60s --device "$D" --state-dir "$ST" >"$TMP/try.out" 2>&1 &
try_pid=$!
deadline 20
until grep -q "ofc confirm" "$TMP/try.out" 2>/dev/null || past $_end; do sleep 0.05; done
kill -9 $try_pid
wait $try_pid 2>/dev/null
expect_exit 0 $OFC plan "$CIRC" --device "$D" --state-dir "$ST"
at "$CIRC" && ok || bad "netconfd: a killed trial was not repaired to the old state"

# ---- another manager's lock, held by ncclient over the same sshd ------------------------------
# ncclient locks running and waits; ofc's apply is refused before it
# changes anything, naming netconfd's session; then ncclient lets go.
cat >"$TMP/locker.py" <<'PY'
import sys, time
from ncclient import manager
host_key = open(sys.argv[3]).read().split()[1]
with manager.connect(host="127.0.0.1", port=int(sys.argv[1]), username=sys.argv[2],
                     key_filename=sys.argv[4], hostkey_verify=True, hostkey_b64=host_key,
                     allow_agent=False, look_for_keys=False, timeout=30) as m:
    with m.locked("running"):
        print("session", m.session_id, flush=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                open(sys.argv[5]).close()
            except FileNotFoundError:
                break
            time.sleep(0.05)
PY
touch "$TMP/hold"
/usr/bin/python3 "$TMP/locker.py" "$P" "$(id -un)" "$TMP/host_key.pub" "$TMP/ofc.key" "$TMP/hold" >"$TMP/locker.out" 2>&1 &
locker=$!
deadline 20
until grep -q "^session" "$TMP/locker.out" 2>/dev/null || past $_end; do sleep 0.05; done
SID=$(awk '/^session/ {print $2}' "$TMP/locker.out")
# (ofc waits for another's lock until its timeout: 6 s here, short for
# the wait, long enough for ssh's and netconfd's hello on a loaded machine)
sed 's|timeout: 10s|timeout: 6s|' "$TORUS" >"$TMP/torus2.yaml"
expect_exit 1 $OFC apply "$TMP/torus2.yaml" --device "$D" --state-dir "$ST"
head -n 1 "$TMP/err" | grep -q "^ofc: ocs0: lock: the running datastore is locked by session $SID (another manager)" &&
	ok || bad "netconfd's lock held by ncclient (session '$SID')" "$(head -c 300 "$TMP/err")" "$(cat "$TMP/locker.out")"
at "$CIRC" && [ ! -e "$ST/torus64-netconf.journal" ] && ok || bad "a refused lock changed something"
rm -f "$TMP/hold"
wait $locker
expect_stdout_has "committed transaction" $OFC apply "$TORUS" --device "$D" --state-dir "$ST"

# ---- ofcd subscribes to netconfd's notifications -----------------------------------------------
# netconfd offers :notification and only the NETCONF stream: ofcd's second
# session asks for the Polatis stream, is refused, subscribes to NETCONF,
# and the subscription's first news is a probe; netconfd's own
# notifications (sessions starting and ending, config changes) are of
# modules ofc does not load, and change nothing.
${OFCD:-$BUILD/ofcd} --foreground --config "$TORUS" --socket "$TMP/ofcd.sock" --state-dir "$ST" \
	--credentials-dir "$TMP" --device "$D" --probe-interval 1h --log-level info 2>"$TMP/ofcd.log" &
OFCD_PID=$!
# (its start check and the second session's ssh and hello took 11 s and
# more at load 17: a bound, not a wait)
deadline 60
until grep -q "device news from ocs0" "$TMP/ofcd.log" || past $_end; do sleep 0.1; done
grep -q "device news from ocs0 (a notification, or a new subscription): probing" "$TMP/ofcd.log" &&
	[ "$(grep -c "agt_rpc: <create-subscription> for" "$TMP/netconfd.log")" -eq 2 ] &&
	grep -q "Started live subscription on stream 'NETCONF'" "$TMP/netconfd.log" && ok ||
	bad "ofcd did not subscribe to netconfd" "$(tail -5 "$TMP/ofcd.log")" \
		"$(grep -i "subscri" "$TMP/netconfd.log" | tail -5)"
expect_json 'j["devices"][0]["reachable"] and not j.get("failed")' $OFC --socket "$TMP/ofcd.sock" status --json
kill -TERM $OFCD_PID
wait $OFCD_PID

# ---- the older revision: netconfd with optical-switch@2015-06-10 speaks pairs -----------------
# (a new netconfd starts empty: the first apply creates the container, the
# second edits pair by pair, which its log names)
netconfd 2015-06-10
expect_stdout_has "committed transaction" $OFC apply "$CIRC" --device "$D" --state-dir "$ST"
expect_stdout_has "committed transaction" $OFC apply "$TORUS" --device "$D" --state-dir "$ST"
at "$TORUS" && grep -q "opsw:pairs\[opsw:ingress=" "$TMP/netconfd.log" && ok ||
	bad "netconfd 2015-06-10: the pairs were not edited" "$(grep -c 'opsw:pairs' "$TMP/netconfd.log")"

# ---- ncclient, an independent client, against build/netconf-emu ---------------------------------
# Over SSH with the demo password and the demo host key: the hello names
# the model, a filtered <get> and a <get-config> answer, an edit of the
# candidate committed reaches the emulator's running (its state file), a
# refused pair comes back as an rpc-error with its error-path, and a
# subscription to the Polatis stream gets port-power-alarm for a port in
# use that fails, and port-power-clear when it is back.
: >"$TMP/emu.state"
: >"$TMP/emu.health"
start_emu netconf-emu e --ports 8 --host-key configs/credentials/netconf-emu-host.key \
	--credentials configs/credentials/ocs0.cred --state "$TMP/emu.state" --health "$TMP/emu.health"
/usr/bin/python3 - "$e_port" "$TMP/emu.state" "$TMP/emu.health" <<'PY' >"$TMP/ncc.out" 2>&1 && ok || bad "ncclient against netconf-emu" "$(tail -5 "$TMP/ncc.out")"
import sys
from ncclient import manager
from ncclient.operations import RPCError
NS = "http://www.polatis.com/yang/optical-switch"
key = [l.split()[2] for l in open("configs/credentials/known_hosts") if l.startswith("[127.0.0.1]")][0]
with manager.connect(host="127.0.0.1", port=int(sys.argv[1]), username="admin", password="ofc-demo",
                     hostkey_verify=True, hostkey_b64=key, allow_agent=False, look_for_keys=False,
                     timeout=10) as m:
    assert any(c.startswith(NS + "?module=optical-switch&revision=2017-08-04") for c in m.server_capabilities), "no model"
    assert ":candidate" in m.server_capabilities and ":confirmed-commit" in m.server_capabilities
    m.lock("candidate")
    m.edit_config(target="candidate", config=f"""<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><cross-connects xmlns="{NS}">
        <pair><ingress>1</ingress><egress>10</egress></pair>
        <pair><ingress>2</ingress><egress>12</egress></pair></cross-connects></config>""")
    m.commit()
    m.unlock("candidate")
    got = m.get(filter=("subtree", f'<cross-connects xmlns="{NS}"/>')).data_xml
    assert "<egress>10</egress>" in got and "<egress>12</egress>" in got, got
    cfg = m.get_config(source="running").data_xml
    assert "<ingress>2</ingress>" in cfg, cfg
    lines = sorted(open(sys.argv[2]).read().split("\n"))
    assert lines == ["", "1 2", "2 4"], lines
    try:
        m.edit_config(target="running", config=f"""<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><cross-connects xmlns="{NS}">
            <pair><ingress>5</ingress><egress>12</egress></pair></cross-connects></config>""")
        raise SystemExit("an egress in use twice was taken")
    except RPCError as e:
        assert e.tag == "in-use" and "ingress='5'" in (e.path or ""), (e.tag, e.path)
    PLTS = "http://www.polatis.com/yang/polatis-switch"
    assert ":notification" in m.server_capabilities
    assert any(c.startswith(PLTS + "?module=polatis-switch&") for c in m.server_capabilities)
    m.create_subscription(stream_name="Polatis")
    for health, name in (("2 status FAILED\n", "port-power-alarm"), ("", "port-power-clear")):
        open(sys.argv[3], "w").write(health)
        n = m.take_notification(timeout=10)
        assert n is not None, "no " + name
        x = n.notification_xml
        assert f'<{name} xmlns="{PLTS}"><port-id>2</port-id>' in x, x
print("ncclient: ok")
PY
stop_emu "$e_pid"

finish
