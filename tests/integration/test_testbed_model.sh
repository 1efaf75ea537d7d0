#!/bin/sh
# The testbed's model held by measurements: 8 hosts of 4 ports through an
# emulated OCS, circuits shaped to 20 Mb/s (32 of them at once is 640 Mb/s,
# what 2 shared cores carry with room), wired in turn as torus:2x4 (3
# circuits a host), circulant:8:1,3 (4), ring:8 (1, one way) and hypercube:3 (3).
# On each, testbed check calibrates alpha and judges its reference run;
# then every allreduce algorithm at 4 MiB runs, every element checked,
# within 15% of what the model predicts for the circuits it uses, or,
# for routed transfers (Swing's), the run names the term it missed by (the
# engines' own figure, a host's 4 ports at the link rate, was 1.40-1.75x
# off on torus:2x4). A run that misses runs once more, alone: at a load
# of 16 on 2 cores another user's burst took one run in ten of the
# all-circuit BFB to 1.15-1.2x, the next run 1.0x; a wrong model misses
# both (the 4/3 of unused ports would). (run alone: its circuits carry
# traffic this machine's cores must keep up with)
# After a reconfiguration from 24 circuits to 32, run measures what the
# 32 carry instead of reporting the 24's figure; run follows the topology
# committed, and --topology SPEC tries another for the run and applies
# the one before again after.
SUITE=testbed_model
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/emu.sh"

if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	echo "testbed_model: SKIP: needs root and network namespaces (running as uid $(id -u))"
	echo "$SUITE: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

ST="$TMP/state"
NAME="tm$$"
cp configs/credentials/ocs0.cred "$TMP/ocs0.cred"
for t in torus:2x4 circulant:8:1,3 ring:8 hypercube:3; do
	cat >"$TMP/${t%%:*}.yaml" <<EOF
version: 1
name: $NAME
hosts:
  count: 8
  prefix: h
  ports: 4
  port_rate: 20Mbps
switches:
  - name: ocs0
    type: ocs
    ports: 32
    reconfig_time: 10ms
    driver:
      type: tl1
      address: 127.0.0.1:3082
      credentials: ocs0.cred
      timeout: 2s
      retries: 1
wiring:
  pattern: sequential
  switches: [ocs0]
topology: $t
EOF
done
start_emu ocs-emu e --ports 32 --credentials configs/credentials/ocs0.cred
DEV="ocs0=127.0.0.1:$e_port"
cleanup() {
	$OFC testbed down "$TMP/torus.yaml" --state-dir "$ST" >/dev/null 2>&1
	[ -f "$TMP/unshaped.yaml" ] && $OFC testbed down "$TMP/unshaped.yaml" --state-dir "$ST" >/dev/null 2>&1
	stop_all_emus
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Not root: said so, not as "Permission denied" on /run/netns (a config
# nobody may read: $TMP is root's alone).
if command -v setpriv >/dev/null; then
	for c in up check down "run --collective allreduce"; do
		expect_error 1 "ofc: the testbed needs root (network namespaces)" \
			setpriv --reuid=65534 --regid=65534 --clear-groups $OFC testbed $c \
			configs/testbed12-patch.yaml --state-dir "$ST"
	done
fi
expect_exit 0 $OFC apply "$TMP/torus.yaml" --device "$DEV" --state-dir "$ST"
expect_stdout_has "testbed $NAME up: 8 hosts as namespaces ofc-$NAME-*, 24 circuits" \
	$OFC testbed up "$TMP/torus.yaml" --rate-scale 1 --device "$DEV" --state-dir "$ST"
# (as a warning when they carried under 80% of the shaping: a loaded
# machine, as under make check's sanitizer builds)
grep -Eq "^  (warning: )?all 24 circuits at once carried " "$TMP/out" && ok ||
	bad "up: what 24 carried" "$(cat "$TMP/out")"

# To 32 circuits: the figure up measured on 24 is not theirs; run measures
# again and says 32 (it said 24).
expect_exit 0 $OFC apply "$TMP/circulant.yaml" --device "$DEV" --state-dir "$ST"
expect_json 'j["circuits"]==32 and j["carried_circuits"]==32 and j["runs"][0]["data_ok"]' \
	$OFC testbed run "$TMP/circulant.yaml" --state-dir "$ST" --collective allreduce --size 64KiB --json
expect_stdout_has "all 32 circuits at once carried " \
	$OFC testbed run "$TMP/circulant.yaml" --state-dir "$ST" --collective allreduce --size 64KiB

# held.py OUT [MIN]: every run of OUT right and consistent; prints
# "algorithm ratio" for each, and the algorithms that missed the model on
# stderr (exit 3 when some did).
cat >"$TMP/held.py" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["runs"]
assert len(rows) >= int(sys.argv[2]) if len(sys.argv) > 2 else 1, rows
for r in rows:
    assert r["ran"] and r["data_ok"], r
    assert r["model_holds"] == (abs(r["ratio"] - 1) <= 0.15), r
    # the prediction is its terms, and only circuits that exist carry bytes
    assert abs(r["predicted_alpha_s"] + r["predicted_bytes_s"] - r["predicted_s"]) < 1e-9, r
    assert 0 < r["circuits_used"] <= j["circuits"], r
print(" ".join("%s %.3f" % (r["algorithm"], r["ratio"]) for r in rows))
# Transfers without a port (Swing's, routed through other hosts) share
# circuits among TCP flows of different paths less evenly than the model
# says (1.07-1.23x in bench/results/testbed.md): where such a run misses, the
# run must name the term and by how much, as the issue's bar allows.
def named(r):
    return r["routed_transfers"] > 0 and r["model"].startswith(
        "measured %.3gx the model's time: the bytes' term is off by " % r["ratio"])
missed = [r["algorithm"] for r in rows if not r["model_holds"] and not named(r)]
for r in rows:
    if not r["model_holds"] and named(r):
        print("(%s: %s)" % (r["algorithm"], r["model"]))
if missed:
    sys.stderr.write(" ".join(missed) + "\n")
    for r in rows:
        if not r["model_holds"]:
            print("%s: %s" % (r["algorithm"], r["model"]))
    sys.exit(3)
PY
# held ALGO...: each algorithm run again alone holds the model.
held() {
	for a in "$@"; do
		# up to three tries alone: a burst of a loaded machine's other
		# work lasts longer than one run (make test at load 24 met two)
		for _try in 1 2 3; do
			$OFC testbed run "$TMP/$t.yaml" --state-dir "$ST" --collective allreduce --algo "$a" \
				--size 4MiB --json >"$TMP/again" 2>"$TMP/err"
			python3 "$TMP/held.py" "$TMP/again" >>"$TMP/held" 2>/dev/null && continue 2
		done
		return 1
	done
}
for t in torus circulant ring hypercube; do
	expect_exit 0 $OFC apply "$TMP/$t.yaml" --device "$DEV" --state-dir "$ST"
	# check calibrates alpha, records it and judges a reference run by it
	# (once more when it missed, as the runs below).
	cal='j["reachable"]==56 and (lambda c: c["data_ok"] and c["alpha_s"]>0 and c["alpha_runs"]==5 and c["model_holds"]==(abs(c["ratio"]-1)<=0.15))(j["calibration"])'
	expect_json "$cal" $OFC testbed check "$TMP/$t.yaml" --state-dir "$ST" --json
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["calibration"]["model_holds"] else 1)' "$TMP/out" ||
		expect_json "$cal"' and j["calibration"]["model_holds"]' \
			$OFC testbed check "$TMP/$t.yaml" --state-dir "$ST" --json
	expect_json 'j["alpha_from"]=="calibrated by testbed check" and j["model_rate_bps"]==j["carried_bps"]' \
		$OFC testbed run "$TMP/$t.yaml" --state-dir "$ST" --collective allreduce --size 64KiB --json
	$OFC testbed run "$TMP/$t.yaml" --state-dir "$ST" --collective allreduce --algo all \
		--size 4MiB --json >"$TMP/out" 2>"$TMP/err"
	: >"$TMP/held"
	r=$(python3 "$TMP/held.py" "$TMP/out" 2 2>"$TMP/missed")
	rc=$?
	if [ $rc -eq 0 ] || { [ $rc -eq 3 ] && held $(cat "$TMP/missed"); }; then
		ok
		echo "testbed_model: $t allreduce 4 MiB, measured/predicted: $r$([ -s "$TMP/held" ] && echo "; again: $(tr "\n" " " <"$TMP/held")") (load $(cut -d' ' -f1 /proc/loadavg))"
	else
		bad "$t: every algorithm within 15% of the model" "$r" "$(cat "$TMP/missed" "$TMP/held")" "$(head -c 400 "$TMP/err")"
	fi
done

# run follows what is committed: after a transaction to circulant, a run
# of torus.yaml schedules for the record's circulant (it planned for the
# file's torus and was refused: its ports reached other hosts).
expect_exit 0 $OFC apply "$TMP/circulant.yaml" --device "$DEV" --state-dir "$ST"
expect_json 'j["topology"]=="circulant:8:1,3" and j["topology_from"]=="committed, as the record says" and j["circuits"]==32 and j["runs"][0]["data_ok"]' \
	$OFC testbed run "$TMP/torus.yaml" --state-dir "$ST" --collective allreduce --size 256KiB --json
# --topology: a what-if without a file: ring:8's 8 circuits applied for
# the run, the 32 of circulant applied again after.
expect_json 'j["topology"]=="ring:8" and j["circuits"]==8 and j["topology_from"].startswith("--topology") and [r["algorithm"] for r in j["runs"]]==["ring"] and j["runs"][0]["data_ok"] and j["runs"][0]["circuits_used"]==8' \
	$OFC testbed run "$TMP/circulant.yaml" --state-dir "$ST" --collective allreduce --algo ring \
	--size 1MiB --topology ring:8 --device "$DEV" --json
expect_json 'j["topology"]=="circulant:8:1,3" and j["topology_from"]=="the config'"'"'s" and j["circuits"]==32 and j["runs"][0]["data_ok"]' \
	$OFC testbed run "$TMP/circulant.yaml" --state-dir "$ST" --collective allreduce --size 256KiB --json
expect_error 2 "ofc: torus:3x3 has 9 nodes, the fabric 8 hosts" \
	$OFC testbed run "$TMP/circulant.yaml" --state-dir "$ST" --collective allreduce --topology torus:3x3
expect_error 2 "ofc testbed: run: --workload runs a job's phases: not with --collective, --schedule, --algo, --mpi or --topology" \
	$OFC testbed run "$TMP/circulant.yaml" --state-dir "$ST" --workload config --topology ring:8

expect_stdout_has "testbed $NAME down: 8 namespaces removed" \
	$OFC testbed down "$TMP/torus.yaml" --state-dir "$ST"

# Unshaped circuits (no link rate anywhere): nothing to price a run at, so
# it runs unpriced (no prediction, no ratio, no verdict; the model says so),
# every element checked.
sed -e "s/^name: .*/name: tu$$/" -e "/port_rate/d" "$TMP/torus.yaml" >"$TMP/unshaped.yaml"
expect_exit 0 $OFC apply "$TMP/unshaped.yaml" --device "$DEV" --state-dir "$ST"
expect_exit 0 $OFC testbed up "$TMP/unshaped.yaml" --device "$DEV" --state-dir "$ST"
expect_json '(lambda r: r["data_ok"] and "predicted_s" not in r and "ratio" not in r and "model_holds" not in r and r["model"]=="unpriced: the circuits are unshaped")(j["runs"][0]) and j["link_rate_bps"]==0' \
	$OFC testbed run "$TMP/unshaped.yaml" --state-dir "$ST" --collective allreduce --size 256KiB --json
expect_exit 0 $OFC testbed down "$TMP/unshaped.yaml" --state-dir "$ST"

finish
