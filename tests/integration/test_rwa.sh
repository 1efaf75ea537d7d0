#!/bin/sh
# ofc rwa: engines, bounds and optimality, demand files and their errors.
SUITE=rwa
. "$(dirname "$0")/lib.sh"

# All-to-all on 8 nodes: N^2/8 = 8 wavelengths, the LP bound, so optimal.
expect_json 'j["engine"]=="ilp" and j["wavelengths_used"]==8 and j["lower_bound"]==8 and j["optimal"] is True and j["verified"] and len(j["lightpaths"])==56' $OFC rwa --nodes 8 --wavelengths 64 --pattern all-to-all --engine ilp --json
# On 7 nodes the tilings need 8 and the bound says 6: the ILP finds 6.
expect_json 'j["wavelengths_used"]==6 and j["optimal"] is True and j["ilp_solves"]>=1 and j["verified"]' $OFC rwa --nodes 7 --wavelengths 64 --pattern all-to-all --engine ilp --json
expect_json 'j["wavelengths_used"]==8 and j["lower_bound"]==6 and j["optimal"] is False' $OFC rwa --nodes 7 --wavelengths 64 --pattern all-to-all --json
# The LP engine: the relaxation as the bound, never above the heuristic.
expect_json 'abs(j["relaxation"]-6)<1e-6 and j["lower_bound"]==6 and j["wavelengths_used"]>=6' $OFC rwa --nodes 7 --wavelengths 64 --pattern all-to-all --engine lp --json
# the relaxation on Clp: the same bound
expect_json 'abs(j["relaxation"]-6)<1e-6 and j["lower_bound"]==6 and j["wavelengths_used"]>=6' $OFC rwa --nodes 7 --wavelengths 64 --pattern all-to-all --engine lp --lp-solver clp --json
expect_error 2 "ofc rwa: bad --lp-solver 'cplex': lpsolve or clp" $OFC rwa --nodes 7 --wavelengths 64 --pattern all-to-all --engine lp --lp-solver cplex
# Every lightpath is listed with route and wavelength, and within the ring.
expect_json 'all(l["direction"] in ("cw","ccw") and l["fibre"]<2 and l["wavelength"]<j["wavelengths_used"] for l in j["lightpaths"]) and len(j["lightpaths"])==12*11' $OFC rwa --nodes 12 --wavelengths 16 --fibres 2 --pattern all-to-all --json

# Three arcs pairwise overlapping round a 3-ring: load 2 but 3 wavelengths.
printf '# an odd cycle\n0 2 1 cw\n1 0 1 cw\n2 1 cw   # count defaults to 1\n' >"$TMP/odd.txt"
expect_json 'j["wavelengths_used"]==3 and j["lower_bound"]==3 and abs(j["relaxation"]-2)<1e-6 and j["optimal"] and j["fits"]' $OFC rwa --nodes 3 --wavelengths 4 --demands "$TMP/odd.txt" --engine ilp --json
expect_json 'j["lightpaths_served"]==2 and j["served_upper_bound"]==2 and j["gap"]==0 and j["gap_unit"]=="lightpaths" and j["optimal"] is True' $OFC rwa --nodes 3 --wavelengths 2 --demands "$TMP/odd.txt" --engine ilp --objective max-served --json
expect_stdout_has 'wavelengths used  3 (lower bound 3, gap 0): optimal' $OFC rwa --nodes 3 --wavelengths 4 --demands "$TMP/odd.txt" --engine ilp
expect_stdout_has '  1      0      cw   0' $OFC rwa --nodes 3 --wavelengths 4 --demands "$TMP/odd.txt" --lightpaths
# Not enough wavelengths: reported, not hidden, and exit 1 (a script must
# not take the answer for a plan it can light).
expect_error 1 "ofc rwa: does not fit: 3 wavelengths per fibre needed, the ring has 2" \
	$OFC rwa --nodes 3 --wavelengths 2 --demands "$TMP/odd.txt" --engine ilp --json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["fits"] is False and j["wavelengths_used"]==3 else 1)' "$TMP/out" &&
	ok || bad "rwa that does not fit: JSON still printed" "$(head -c 300 "$TMP/out")"
expect_error 1 "ofc rwa: does not fit: 8 wavelengths per fibre needed, the ring has 4 (not proven optimal)" \
	$OFC rwa --nodes 8 --wavelengths 4 --pattern all-to-all
grep -q "fits in 4         no: more wavelengths than the ring has" "$TMP/out" && ok || bad "rwa text: fits line" "$(cat "$TMP/out")"

# 11 nodes: the tilings need 16, the ILP finds the bound, 15.
expect_json 'j["wavelengths_used"]==15 and j["lower_bound"]==15 and j["optimal"] is True and j["verified"]' $OFC rwa --nodes 11 --wavelengths 64 --pattern all-to-all --engine ilp --json
# The time limit stops the ILP and says so (21 nodes: bound 55, tilings 57).
expect_json 'j["time_limit_hit"] is True and j["optimal"] is False and j["wavelengths_used"]==57 and j["lower_bound"]==55 and j["verified"]' $OFC rwa --nodes 21 --wavelengths 64 --pattern all-to-all --engine ilp --time-limit 1s --json
expect_stdout_has 'time limit        reached: lp_solve stopped before proving the answer' $OFC rwa --nodes 21 --wavelengths 64 --pattern all-to-all --engine ilp --time-limit 1s

# Bad demand files: FILE:LINE:COL and exit 2.
printf '0 1\n# fine\n0 9\n' >"$TMP/d1.txt"
expect_error 2 "$TMP/d1.txt:3:3: node 9 out of range: the ring has nodes 0..7" $OFC rwa --nodes 8 --wavelengths 2 --demands "$TMP/d1.txt"
printf '0 1 2 up\n' >"$TMP/d2.txt"
expect_error 2 "$TMP/d2.txt:1:7: unknown direction 'up' (cw, ccw or any)" $OFC rwa --nodes 8 --wavelengths 2 --demands "$TMP/d2.txt"
printf '3 3\n' >"$TMP/d3.txt"
expect_error 2 "$TMP/d3.txt:1:3: a demand from node 3 to itself" $OFC rwa --nodes 8 --wavelengths 2 --demands "$TMP/d3.txt"
printf '# nothing\n\n' >"$TMP/d4.txt"
expect_error 2 "ofc: $TMP/d4.txt: no demands in the file" $OFC rwa --nodes 8 --wavelengths 2 --demands "$TMP/d4.txt"
expect_error 2 "ofc: $TMP/none.txt: cannot open: No such file or directory" $OFC rwa --nodes 8 --wavelengths 2 --demands "$TMP/none.txt"

# Usage.
expect_error 2 "ofc rwa: give --pattern all-to-all or --demands FILE (one of them)" $OFC rwa --nodes 8 --wavelengths 2
expect_error 2 "ofc rwa: bad --engine 'cplex': heuristic, ilp or lp" $OFC rwa --nodes 8 --wavelengths 2 --pattern all-to-all --engine cplex
expect_error 2 "ofc rwa: bad --pattern 'ring': all-to-all" $OFC rwa --nodes 8 --wavelengths 2 --pattern ring
expect_error 2 "ofc rwa: bad --time-limit '0': must be more than 0 and at most a day" $OFC rwa --nodes 8 --wavelengths 2 --pattern all-to-all --time-limit 0
expect_error 2 "ofc rwa: all-to-all on 2000 nodes is 3998000 lightpaths (limit 1000000)" $OFC rwa --nodes 2000 --wavelengths 2 --pattern all-to-all
expect_error 2 "ofc: the exact model would have 4128768 columns (limit 2000000): use --engine heuristic or lp" $OFC rwa --nodes 64 --wavelengths 2 --pattern all-to-all --engine ilp
expect_error 2 "ofc rwa: missing --nodes" $OFC rwa --wavelengths 2 --pattern all-to-all
expect_exit 0 $OFC rwa --help

finish
