#!/bin/sh
# The Calient TL1 dialect (docs/tl1.md): ofc plan/apply/try/
# confirm/status against build/ocs-emu --dialect calient, refusals at
# sampled commands of an apply (every kind of command, both halves of a
# change), lost connections and stalls between ENT-CRS and ACT-CRS, kill -9
# between the two commands of a change, idle entries left on the switch,
# port maps that disagree, config errors. After each: the switch, as the
# light sees it, is at the old or the new state, and the record agrees.
SUITE=calient
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm # the emulator saves its state after every change
	export TMPDIR
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

ST="$TMP/state"
mkdir -p "$ST"
CRED=configs/credentials/ocs0.cred
cp "$CRED" "$TMP/ocs0.cred"
# calient_config OUT TOPOLOGY TIMEOUT RETRIES
calient_config() {
	sed -e "s|^topology: .*|topology: $2|" -e "s|timeout: .*|timeout: $3|" \
		-e "s|retries: .*|retries: $4|" -e "s|credentials: .*|credentials: ocs0.cred|" \
		configs/torus64-calient.yaml >"$1"
}
TORUS="$TMP/torus.yaml"
CIRC="$TMP/circ.yaml"
calient_config "$TORUS" torus:8x8 2s 2
calient_config "$CIRC" circulant:64:3,8 2s 2
emu() { # NAME STATEFILE ARGS...: a Calient emulator on STATEFILE
	_n=$1
	_s=$2
	shift 2
	start_emu ocs-emu "$_n" --dialect calient --ports 256 --credentials "$CRED" --state "$_s" "$@"
}
xconn() { # CONFIG PORT: the cross-connects as ofc reads them
	$OFC status "$1" --device "ocs0=127.0.0.1:$2" --state-dir "$ST" --json |
		python3 -c 'import json,sys; print([[c["in_port"], c["out_port"]] for c in json.load(sys.stdin)["devices"][0]["circuits"]])'
}
# lit FILE: the emulator's state file without its idle entries (what
# carries light), sorted
lit() { grep -v ' idle$' "$1" | sort; }

# ---- the basics ------------------------------------------------------------------
: >"$TMP/pre.state"
emu e "$TMP/pre.state" --log "$TMP/e.log"
expect_json 'j["operations"]==256 and j["device_plan"]["devices"][0]["add"]==256 and j["device_plan"]["devices"][0]["driver"]=="tl1"' \
	$OFC plan "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
expect_stdout_has "committed transaction 1: 256 operations on 1 device" \
	$OFC apply "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST"
# every connect is an ENT-CRS in group OFC and an ACT-CRS of the same pair,
# ports named shelf.slot.port under the map (32 ports a slot)
[ "$(grep -c ' ENT-CRS::' "$TMP/e.log")" -eq 256 ] && [ "$(grep -c ' ACT-CRS::' "$TMP/e.log")" -eq 256 ] &&
	ok || bad "apply of 256: $(grep -c ENT-CRS "$TMP/e.log") ENT-CRS, $(grep -c ACT-CRS "$TMP/e.log") ACT-CRS"
python3 - "$TMP/e.log" <<'PY' && ok || bad "ENT-CRS/ACT-CRS pairs"
import re, sys
lines = [l.split(" ", 1)[1].strip() for l in open(sys.argv[1])]
ents = [l for l in lines if l.startswith("ENT-CRS")]
acts = [l for l in lines if l.startswith("ACT-CRS")]
def port(a):
    sh, sl, p = map(int, a.split("."))
    assert sh == 1
    return (sl - 1) * 32 + p
for e, a in zip(ents, acts):
    m = re.fullmatch(r"ENT-CRS::(\d+\.\d+\.\d+),(\d+\.\d+\.\d+):\d+::OFC,1WAY", e)
    assert m, e
    assert re.fullmatch(r"ACT-CRS::%s,%s:\d+" % (re.escape(m[1]), re.escape(m[2])), a), a
    assert 1 <= port(m[1]) <= 256 and 1 <= port(m[2]) <= 256
# each ENT-CRS is followed by the ACT-CRS of its pair
for i, l in enumerate(lines):
    if l.startswith("ENT-CRS"):
        assert lines[i + 1].startswith("ACT-CRS::" + l.split("::")[1].split(":")[0]), (l, lines[i + 1])
PY
# the emulator's file: ofc's ports, all active
[ "$(wc -l <"$TMP/pre.state")" -eq 256 ] && ! grep -q idle "$TMP/pre.state" && ok || bad "emulator state after apply"
expect_json 'j["operations"]==0 and j["device_plan"]["devices"][0]["unchanged"]==256' \
	$OFC plan "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
expect_json 'j["in_sync"] and j["at_target"] and j.get("transaction") is None' \
	$OFC status "$CIRC" --device "ocs0=127.0.0.1:$e_port" --state-dir "$ST" --json
PRE=$(xconn "$CIRC" "$e_port")
stop_emu "$e_pid"
cp "$TMP/pre.state" "$TMP/circ.state"

# A clean apply circulant -> torus: login, read, 128 x (CANC-CRS, DLT-CRS),
# 128 x (ENT-CRS, ACT-CRS), read-back, logout.
cp "$TMP/circ.state" "$TMP/run.state"
: >"$TMP/clean.log"
emu c "$TMP/run.state" --log "$TMP/clean.log"
expect_exit 0 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$c_port" --state-dir "$ST"
M=$(wc -l <"$TMP/clean.log")
TARGET=$(xconn "$TORUS" "$c_port")
stop_emu "$c_pid"
cp "$TMP/run.state" "$TMP/torus.state"
for v in CANC-CRS DLT-CRS ENT-CRS ACT-CRS; do
	[ "$(grep -c " $v::" "$TMP/clean.log")" -eq 128 ] || bad "clean apply: $(grep -c " $v::" "$TMP/clean.log") $v"
done
[ "$M" -eq 516 ] && ok || bad "clean apply took $M commands"
# the commands where a change is half done: the first DLT-CRS (after its
# CANC-CRS) and the first ACT-CRS (after its ENT-CRS)
K_DLT=$(grep -m1 ' DLT-CRS::' "$TMP/clean.log" | cut -d' ' -f1)
K_ACT=$(grep -m1 ' ACT-CRS::' "$TMP/clean.log" | cut -d' ' -f1)
back_to_circ() {
	cp "$TMP/circ.state" "$TMP/run.state"
	emu b "$TMP/run.state"
	$OFC apply "$CIRC" --device "ocs0=127.0.0.1:$b_port" --state-dir "$ST" >/dev/null 2>&1
	stop_emu "$b_pid"
	cp "$TMP/circ.state" "$TMP/run.state"
}
back_to_circ

# ---- refusals: a sample of every kind of command ------------------------------------
# Each run ends with the light back as before (the active entries of the
# file), ofc saying so (exit 1, verified back), no journal left. Refusing
# the logout after the commit is the one k where the apply stands.
KS=$(python3 -c "
m = $M
ks = set(range(1, 9)) | set(range(9, m - 3, 37)) | {$K_DLT, $K_DLT + 1, $K_ACT, $K_ACT + 1, m - 2, m - 1, m}
print(' '.join(str(k) for k in sorted(ks)))")
sweep_bad=0
runs=0
for k in $KS; do
	runs=$((runs + 1))
	cp "$TMP/circ.state" "$TMP/run.state"
	emu s "$TMP/run.state" --fail-at $k
	$OFC apply "$TORUS" --device "ocs0=127.0.0.1:$s_port" --state-dir "$ST" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	stop_emu "$s_pid"
	lit "$TMP/run.state" >"$TMP/lit"
	if [ "$k" -lt "$M" ]; then
		if [ $rc -ne 1 ] || ! lit "$TMP/circ.state" | cmp -s - "$TMP/lit" || [ -e "$ST/torus64-calient.journal" ]; then
			sweep_bad=$((sweep_bad + 1))
			[ $sweep_bad -le 3 ] && bad "fail-at $k: exit $rc, light back: $(lit "$TMP/circ.state" | cmp -s - "$TMP/lit" && echo yes || echo no)" "$(head -c 300 "$TMP/err")"
		fi
		if [ "$k" -gt 2 ] && ! grep -q "every device is verified back" "$TMP/err"; then
			sweep_bad=$((sweep_bad + 1))
			bad "fail-at $k: no rollback report" "$(head -c 300 "$TMP/err")"
		fi
	else
		if [ $rc -ne 0 ] || ! cmp -s "$TMP/run.state" "$TMP/torus.state"; then
			sweep_bad=$((sweep_bad + 1))
			bad "fail-at $k (logout): exit $rc"
		fi
		back_to_circ
	fi
done
[ $sweep_bad -eq 0 ] && ok
echo "calient: refused $runs sampled commands of the $M of an apply"

# The error names the device, the change and the code.
cp "$TMP/circ.state" "$TMP/run.state"
emu f "$TMP/run.state" --fail-at "$K_ACT"
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
head -n 1 "$TMP/err" | grep -Eq "^ofc: ocs0: device refused connect [0-9]+ -> [0-9]+ \(SROF\)$" && ok ||
	bad "refusal not named" "$(head -c 300 "$TMP/err")"
stop_emu "$f_pid"

# ---- half-way: lost connections and stalls inside a change ------------------------------
# One lost connection between ENT-CRS and ACT-CRS (or CANC-CRS and
# DLT-CRS), before or after the switch acted, is survived by a retry.
for k in "$K_DLT" "$K_ACT"; do
	for mode in close close-after garbage; do
		cp "$TMP/circ.state" "$TMP/run.state"
		emu f "$TMP/run.state" --fail-at "$k" --fail-mode $mode
		expect_stdout_has "committed transaction" $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
		stop_emu "$f_pid"
		cmp -s "$TMP/run.state" "$TMP/torus.state" && ok || bad "$mode at $k once: not at target"
		back_to_circ
	done
done
# A stalled ACT-CRS times out (300 ms, no retries): the change is undone,
# the entry it left idle carries no light.
STALL="$TMP/stall.yaml"
calient_config "$STALL" torus:8x8 300ms 0
cp "$TMP/circ.state" "$TMP/run.state"
emu f "$TMP/run.state" --fail-at "$K_ACT" --fail-mode stall
expect_exit 1 $OFC apply "$STALL" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "timed out" "$TMP/err" && grep -q "every device is verified back" "$TMP/err" && ok || bad "stall" "$(head -c 400 "$TMP/err")"
stop_emu "$f_pid"
lit "$TMP/circ.state" | cmp -s - "$(lit "$TMP/run.state" >"$TMP/lit" && echo "$TMP/lit")" && ok || bad "stall: light not restored"
# A wrong cross-connect on read-back is a failed verification: undone.
cp "$TMP/circ.state" "$TMP/run.state"
emu f "$TMP/run.state" --fail-at $((M - 1)) --fail-mode lie
expect_exit 1 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q "read-back does not match" "$TMP/err" && grep -q "every device is verified back" "$TMP/err" && ok || bad "lie" "$(head -c 400 "$TMP/err")"
if [ "$(xconn "$TORUS" "$f_port")" = "$PRE" ]; then ok; else bad "lie: state not restored"; fi
stop_emu "$f_pid"
back_to_circ

# ---- idle entries left by someone else -------------------------------------------------
# Ingress 1 entered towards 200 and never activated (a change that died
# between its two commands): no light, so ofc does not count it (nor the
# cross-connects 1 -> 13 and X -> 200 it displaced); the apply that needs
# ingress 1 deletes it and goes on.
grep -v -e '^1 ' -e ' 200$' "$TMP/circ.state" >"$TMP/run.state"
printf '1 200 idle\n' >>"$TMP/run.state"
emu f "$TMP/run.state" --log "$TMP/f.log"
expect_json 'j["devices"][0]["entries"]==254 and not j["devices"][0]["at_target"]' \
	$OFC status "$CIRC" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST" --json
expect_stdout_has "committed transaction" $OFC apply "$CIRC" --device "ocs0=127.0.0.1:$f_port" --state-dir "$ST"
grep -q ' DLT-CRS::1.1.1,1.7.8:' "$TMP/f.log" && ok || bad "the idle entry was not deleted" "$(grep CRS:: "$TMP/f.log" | head -5)"
stop_emu "$f_pid"
cmp -s "$TMP/run.state" "$TMP/circ.state" && ok || bad "after clearing the idle entry" "$(diff "$TMP/run.state" "$TMP/circ.state" | head -5)"

# ---- try and confirm ---------------------------------------------------------------------
cp "$TMP/circ.state" "$TMP/run.state"
emu t "$TMP/run.state"
expect_error 1 "ofc: not confirmed within 1 s: reverted; the fabric is where it was" \
	$OFC try "$TORUS" --timeout 1 --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST"
if [ "$(xconn "$TORUS" "$t_port")" = "$PRE" ]; then ok; else bad "try without confirm did not revert"; fi
$OFC try "$TORUS" --timeout 30s --device "ocs0=127.0.0.1:$t_port" --state-dir "$ST" >"$TMP/try.out" 2>"$TMP/try.err" &
try_pid=$!
deadline 10
until grep -q "ofc confirm" "$TMP/try.out" 2>/dev/null || past $_end; do sleep 0.02; done
expect_stdout_has "committed" $OFC confirm --state-dir "$ST"
wait $try_pid
[ $? -eq 0 ] && grep -q "confirmed transaction" "$TMP/try.out" && ok || bad "try after confirm" "$(cat "$TMP/try.out" "$TMP/try.err")"
if [ "$(xconn "$TORUS" "$t_port")" = "$TARGET" ]; then ok; else bad "confirmed try is not at the target"; fi
stop_emu "$t_pid"
back_to_circ # the record too

# ---- kill -9 half-way through a change ---------------------------------------------------
# The emulator stalls at command K and the apply is killed there: between
# CANC-CRS and DLT-CRS, between ENT-CRS and ACT-CRS, at the read-back. The
# emulator is restarted on its file; `ofc plan` with the old config
# repairs: the old state before the last change, the new at the read-back.
record_is() { # CONFIG TOPOLOGY PORT
	$OFC status "$1" --device "ocs0=127.0.0.1:$3" --state-dir "$ST" --json >"$TMP/rec.json"
	python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
got = (j["topology"]["spec"], j["at_target"], j["in_sync"], j.get("transaction"))
sys.exit(0 if got == (sys.argv[2], True, True, None) else "record: %r" % (got,))' "$TMP/rec.json" "$2" && ok ||
		bad "kill point $K: not at $2"
}
for K in "$K_DLT" "$K_ACT" $((M - 1)); do
	cp "$TMP/circ.state" "$TMP/run.state"
	rm -f "$TMP/k.log"
	emu k "$TMP/run.state" --fail-at "$K" --fail-mode stall --log "$TMP/k.log"
	$OFC apply "$TORUS" --device "ocs0=127.0.0.1:$k_port" --state-dir "$ST" >/dev/null 2>&1 &
	pid=$!
	deadline 10
	until grep -q "^$K " "$TMP/k.log" 2>/dev/null || past $_end; do sleep 0.01; done
	grep -q "^$K " "$TMP/k.log" && ok || bad "kill point $K: never reached"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	stop_emu "$k_pid"
	[ -e "$ST/torus64-calient.journal" ] && ok || bad "kill point $K: no journal left"
	emu k "$TMP/run.state"
	expect_exit 0 $OFC plan "$CIRC" --device "ocs0=127.0.0.1:$k_port" --state-dir "$ST"
	if [ "$K" -lt $((M - 1)) ]; then
		record_is "$CIRC" circulant:64:3,8 "$k_port"
	else
		record_is "$TORUS" torus:8x8 "$k_port"
	fi
	stop_emu "$k_pid"
	back_to_circ
done
# and at random moments (1 ms a change: an apply takes about 0.5 s)
seed=${OFC_CRASH_SEED:-$$}
echo "calient: kill seed $seed"
cp "$TMP/circ.state" "$TMP/run.state"
emu r "$TMP/run.state" --delay-ms 1
MS=$(python3 -c "import random
random.seed($seed)
print(' '.join(str(random.randint(0, 500)) for _ in range(6)))")
old=$CIRC
new=$TORUS
for ms in $MS; do
	$OFC apply "$new" --device "ocs0=127.0.0.1:$r_port" --state-dir "$ST" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%03d' "$ms")"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	expect_exit 0 $OFC plan "$old" --device "ocs0=127.0.0.1:$r_port" --state-dir "$ST"
	$OFC status "$old" --device "ocs0=127.0.0.1:$r_port" --state-dir "$ST" --json >"$TMP/o.json"
	$OFC status "$new" --device "ocs0=127.0.0.1:$r_port" --state-dir "$ST" --json >"$TMP/n.json"
	at=$(python3 -c 'import json,sys
o, n = (json.load(open(f)) for f in sys.argv[1:])
ok = lambda j: j["in_sync"] and j["at_target"] and j.get("transaction") is None
print("old" if ok(o) else "new" if ok(n) else "neither")' "$TMP/o.json" "$TMP/n.json")
	[ "$at" != neither ] && ok || bad "kill after $ms ms: at neither target"
	if [ "$at" = new ]; then t=$old; old=$new; new=$t; fi
done
stop_emu "$r_pid"

# ---- port maps, dialects, config errors ----------------------------------------------------
# An emulator with 16 ports a slot names port 256 1.16.16, which under the
# config's 32 a slot is no port of 256: the read is refused, naming the
# device and the map.
printf '255 256\n' >"$TMP/map.state"
start_emu ocs-emu m --dialect calient --slot-ports 16 --ports 256 --credentials "$CRED" --state "$TMP/map.state"
expect_exit 1 $OFC status "$CIRC" --device "ocs0=127.0.0.1:$m_port" --state-dir "$ST"
grep -q "ocs0: RTRV-CRS: '\"1.16.15,1.16.16:OFC,1WAY,ACT\"' is not a one-way cross-connect between ports of the port map (256 ports, shelf 1, slots from 1, 32 ports a slot)" "$TMP/out" "$TMP/err" &&
	ok || bad "port map mismatch" "$(cat "$TMP/out" "$TMP/err" | head -5)"
sed 's|slot_ports: 32|slot_ports: 16|' "$CIRC" >"$TMP/map16.yaml"
expect_json 'j["devices"][0]["entries"]==1' $OFC status "$TMP/map16.yaml" --device "ocs0=127.0.0.1:$m_port" --state-dir "$ST" --json
stop_emu "$m_pid"
# A Polatis switch spoken to in Calient: an unknown command, named.
start_emu ocs-emu p --ports 256 --credentials "$CRED"
expect_exit 1 $OFC status "$CIRC" --device "ocs0=127.0.0.1:$p_port" --state-dir "$ST"
grep -q "RTRV-CRS refused (ICNV)" "$TMP/out" "$TMP/err" && ok || bad "dialect mismatch" "$(cat "$TMP/out" "$TMP/err" | head -5)"
stop_emu "$p_pid"
sed 's|dialect: calient|dialect: ciena|' "$CIRC" >"$TMP/bad1.yaml"
expect_error 2 "$TMP/bad1.yaml:22:16: 'dialect' must be one of polatis, calient; got 'ciena'" $OFC validate "$TMP/bad1.yaml"
sed 's|      dialect: calient|      dialect: polatis|' "$CIRC" >"$TMP/bad2.yaml"
expect_error 2 "$TMP/bad2.yaml:24:17: 'port_map' names Calient ports: it needs 'dialect: calient'" $OFC validate "$TMP/bad2.yaml"
sed 's|slot_ports: 32|slot_ports: 0|' "$CIRC" >"$TMP/bad3.yaml"
expect_exit 2 $OFC validate "$TMP/bad3.yaml"
grep -q "slot_ports" "$TMP/err" && ok || bad "slot_ports 0" "$(cat "$TMP/err")"
sed 's|shelf: 1,|shelf: 1, rack: 2,|' "$CIRC" >"$TMP/bad4.yaml"
expect_exit 2 $OFC validate "$TMP/bad4.yaml"
grep -q "unknown key 'rack'" "$TMP/err" && ok || bad "unknown port_map key" "$(cat "$TMP/err")"
expect_stdout_has "driver tl1 (Calient dialect, port k = 1.1+(k-1)/32.(k-1)%32+1) at 127.0.0.1:3083" \
	$OFC show configs/torus64-calient.yaml
expect_error 2 "ocs-emu: --dialect must be polatis or calient, got 'ciena'" $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 4 --dialect ciena
expect_error 2 "ocs-emu: --slot-ports needs --dialect calient" $BUILD/ocs-emu --listen 127.0.0.1:0 --ports 4 --slot-ports 8

# The emulator survives bad Calient input and answers each command.
start_emu ocs-emu g --dialect calient --ports 8 --credentials "$CRED"
python3 - "$g_port" >"$TMP/raw" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"ACT-USER::admin:1::ofc-demo;ENT-CRS::1.1.1,1.1.99:2::OFC,1WAY;"
          b"ENT-CRS::1.1.1,1.1.2:3::OFC,2WAY;ENT-CRS::1.1.1,1.1.2:4::,1WAY;"
          b"ACT-CRS::1.1.1,1.1.2:5;ENT-CRS::1.1.1,1.1.2:6::OFC,1WAY;DLT-CRS::-1.1.1,1.1.2:7;")
data = b""
while data.count(b";") < 7:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode("ascii", "replace"))
PY
for want in "M  2 DENY" "M  3 DENY" "M  4 DENY" "M  5 DENY" "M  6 COMPLD" "M  7 DENY"; do
	grep -q "$want" "$TMP/raw" || bad "ocs-emu calient: no '$want'" "$(cat "$TMP/raw")"
done
grep -q IIAC "$TMP/raw" && grep -q IDNV "$TMP/raw" && grep -q SNVS "$TMP/raw" && ok || bad "ocs-emu calient codes" "$(cat "$TMP/raw")"
kill -0 "$g_pid" 2>/dev/null && ok || bad "ocs-emu died on bad Calient input"
stop_emu "$g_pid"

# ---- partitions and relabelling on a Calient switch ------------------------------------
# Two jobs of 32 hosts: each apply touches only its own switch ports
# (jobA 1..128, jobB 129..256), and a refusal in jobB's rolls back jobB's
# changes and leaves jobA's light alone.
PART="$TMP/part.yaml"
a=$(seq -s ', h' 0 31)
b=$(seq -s ', h' 32 63)
sed -e '/^topology: /d' -e 's|credentials: .*|credentials: ocs0.cred|' \
	-e "s|^collectives:|partitions:\n  - name: jobA\n    hosts: [h$a]\n    topology: torus:4x8\n  - name: jobB\n    hosts: [h$b]\n    topology: circulant:32:1,4\n\ncollectives:|" \
	configs/torus64-calient.yaml >"$PART"
jobA() { grep -v ' idle$' "$TMP/p.state" | awk '$1 <= 128 || $2 <= 128' | sort; }
: >"$TMP/p.state"
emu p "$TMP/p.state"
PD="--device ocs0=127.0.0.1:$p_port --state-dir $TMP/stp"
expect_stdout_has "committed transaction 1: 128 operations" $OFC apply "$PART" $PD --partition jobA
jobA >"$TMP/A.1"
[ "$(grep -c . "$TMP/A.1")" -eq 128 ] && ok || bad "jobA holds $(grep -c . "$TMP/A.1") cross-connects"
stop_emu "$p_pid"
emu p "$TMP/p.state" --fail-at 40
PD="--device ocs0=127.0.0.1:$p_port --state-dir $TMP/stp"
expect_exit 1 $OFC apply "$PART" $PD --partition jobB
grep -q "every device is verified back" "$TMP/err" && ok || bad "jobB's refused apply" "$(head -c 300 "$TMP/err")"
stop_emu "$p_pid"
jobA | cmp -s - "$TMP/A.1" && ok || bad "jobB's failed apply touched jobA"
[ "$(grep -v ' idle$' "$TMP/p.state" | grep -c .)" -eq 128 ] && ok || bad "jobB's refused apply left light"
emu p "$TMP/p.state"
PD="--device ocs0=127.0.0.1:$p_port --state-dir $TMP/stp"
expect_stdout_has "committed transaction" $OFC apply "$PART" $PD --partition jobB
jobA | cmp -s - "$TMP/A.1" && ok || bad "jobB's apply touched jobA"
expect_json 'j["operations"]==0' $OFC plan "$PART" $PD --json
# --relabel: the whole fabric as torus:8x8 over the circuits both jobs
# hold, renumbered: fewer operations than the config's numbering, applied
# and verified like any other transaction.
PLAIN=$($OFC plan "$TORUS" $PD --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["operations"])')
expect_json "j['operations'] < $PLAIN and j['device_plan']['relabel']['kept'] > 0" $OFC plan "$TORUS" $PD --relabel --json
expect_stdout_has "committed transaction" $OFC apply "$TORUS" $PD --relabel
expect_json 'j["operations"]==0' $OFC plan "$TORUS" $PD --relabel --json
stop_emu "$p_pid"

# ---- ofcd: a failure's move on a Calient switch, killed half-way ----------------------------
# Reconfigure to circulant:64:1 (ports 0 and 1; 2 and 3 spare); `fail
# h20:0` moves its circuits onto h20:2 in one transaction of 4 changes,
# after the emulator's restart: 1 ACT-USER, 2 RTRV-CRS, 3..6 CANC-CRS and
# DLT-CRS twice, 7 ENT-CRS, 8 ACT-CRS (the first connect half done), 9 and
# 10 the second, 11 the read-back. ofcd is killed -9 at K and started
# again: at 8 the move is undone (h20:0 failed, not moved), at 11 it is
# finished.
OFCD="${OFCD:-$BUILD/ofcd} --credentials-dir $TMP --probe-interval 0"
SOCK="$TMP/ofcd.sock"
P2=
emu_at() { # ARGS...: the emulator on its state file and (after the first) port
	[ -n "$e2_pid" ] && stop_emu "$e2_pid"
	start_emu ocs-emu e2 --dialect calient --ports 256 --credentials "$CRED" \
		--state "$TMP/e2.state" --log "$TMP/e2.log" --listen "127.0.0.1:${P2:-0}" "$@"
	P2=$e2_port
}
start_ofcd() {
	$OFCD --foreground --config "$TORUS" --socket "$SOCK" --state-dir "$TMP/st2" \
		--device "ocs0=127.0.0.1:$P2" 2>>"$TMP/d.log" &
	ofcd_pid=$!
	deadline 10
	until $OFC --socket "$SOCK" status >/dev/null 2>&1 || past $_end; do
		sleep 0.01
	done
}
for K in 8 11; do
	rm -rf "$TMP/st2"
	: >"$TMP/e2.state"
	emu_at
	expect_exit 0 $OFC apply "$TORUS" --device "ocs0=127.0.0.1:$P2" --state-dir "$TMP/st2"
	start_ofcd
	expect_stdout_has "committed transaction 2" $OFC --socket "$SOCK" reconfigure --topology circulant:64:1
	rm -f "$TMP/e2.log"
	emu_at --fail-at $K --fail-mode stall
	$OFC --socket "$SOCK" fail h20:0 >/dev/null 2>&1 &
	fail_pid=$!
	deadline 10
	until grep -q "^$K " "$TMP/e2.log" 2>/dev/null || past $_end; do sleep 0.01; done
	if [ $K -eq 8 ]; then want_verb=ACT-CRS; else want_verb=RTRV-CRS; fi
	grep -q "^$K $want_verb:" "$TMP/e2.log" && ok || bad "ofcd kill point $K: not at $want_verb" "$(cat "$TMP/e2.log")"
	kill -9 "$ofcd_pid"
	wait "$ofcd_pid" 2>/dev/null
	wait "$fail_pid" 2>/dev/null
	emu_at
	start_ofcd
	if [ $K -eq 8 ]; then
		expect_json 'j["target_topology"] == "circulant:64:1" and not j.get("moved") and j["failed"] == ["h20:0"] and j["devices"][0]["at_target"]' \
			$OFC --socket "$SOCK" status --json
	else
		expect_json 'j["target_topology"] == "circulant:64:1" and j["moved"] == ["h20:0>h20:2"] and j["devices"][0]["at_target"]' \
			$OFC --socket "$SOCK" status --json
	fi
	kill -TERM "$ofcd_pid"
	wait "$ofcd_pid"
done
stop_emu "$e2_pid"

finish
