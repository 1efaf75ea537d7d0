#!/bin/sh
# ofc topo: facts of known topologies, port permutations, formats, bad specs.
SUITE=topo
. "$(dirname "$0")/lib.sh"

# Known values.
expect_json 'j["nodes"]==64 and j["degree"]==4 and j["diameter"]==8 and j["edges"]==256 and j["moore_diameter"]==3' $OFC topo torus:8x8 --json
expect_json 'j["nodes"]==1024 and j["degree"]==10 and j["diameter"]==10' $OFC topo hypercube:10 --json
expect_json 'j["nodes"]==1280 and j["degree"]==4 and j["diameter"]==5' $OFC topo kautz:4,4 --json
expect_json 'j["nodes"]==1024 and j["diameter"]==5 and j["moore_diameter"]==5 and j["self_loops"]==4' $OFC topo genkautz:1024,4 --json
expect_json 'j["nodes"]==5 and j["degree"]==1 and j["diameter"]==4 and j["edge_list"]==[[0,1],[1,2],[2,3],[3,4],[4,0]]' $OFC topo ring:5 --json
expect_json 'j["nodes"]==24 and j["degree"]==5 and j["diameter"]==4 and j["parallel_edges"]==0 and j["edges"]==120' $OFC topo torus:2x3x4 --json
expect_json 'j["degree"]==3 and j["parallel_edges"]==6' $OFC topo 'product(ring:3,circulant:2:1)' --json
expect_json 'j["nodes"]==16 and j["degree"]==4 and j["diameter"]==3' $OFC topo circulant:16:3,4 --json
expect_json 'j["nodes"]==8 and j["self_loops"]==2 and j["diameter"]==3' $OFC topo debruijn:2,3 --json
expect_json 'j["nodes"]==9 and j["degree"]==4 and j["diameter"]==2' $OFC topo hamming:2,3 --json
expect_json 'j["nodes"]==6 and j["degree"]==5 and j["diameter"]==1' $OFC topo complete:6 --json
expect_json 'j["nodes"]==8 and j["degree"]==4 and j["diameter"]==2' $OFC topo bipartite:4 --json
expect_json 'j["nodes"]==1024 and j["degree"]==4 and j["diameter"]==6' $OFC topo 'line^3(circulant:16:3,4)' --json
expect_json 'j["nodes"]==32 and j["degree"]==2 and j["diameter"]==10' $OFC topo 'product(ring:4,ring:8)' --json
expect_json 'j["nodes"]==32 and j["degree"]==8' $OFC topo 'degree(circulant:16:3,4,2)' --json
expect_json 'j["spec"]=="torus:8x8"' $OFC topo ' torus:8x8 ' --json

# Ports: d permutations that together are exactly the edge multiset.
check_ports='len(j["ports"])==j["degree"] and all(sorted(p)==list(range(j["nodes"])) for p in j["ports"]) and sorted([u,p[u]] for p in j["ports"] for u in range(j["nodes"]))==sorted(j["edge_list"])'
for spec in torus:8x8 genkautz:1024,4 kautz:3,3 debruijn:2,4 torus:3x3x2 'line(bipartite:2)' circulant:12:2,3 genkautz:27,6; do
	expect_json "$check_ports" $OFC topo "$spec" --ports --json
done
# Self-loops are reported with their ports.
expect_json 'len(j["self_loop_ports"])==4 and all(j["ports"][s["port"]][s["node"]]==s["node"] for s in j["self_loop_ports"])' $OFC topo genkautz:1024,4 --ports --json
expect_json 'j["self_loop_ports"]==[]' $OFC topo torus:4x4 --ports --json

# DOT and protobuf.
expect_stdout_has 'graph "torus:3x3" {' $OFC topo torus:3x3 --dot
expect_stdout_has 'digraph "genkautz:10,2" {' $OFC topo genkautz:10,2 --dot
expect_exit 0 $OFC topo torus:8x8 --format pb -o "$TMP/t.pb"
if protoc --decode=ofc.v1.Topology proto/topology.proto <"$TMP/t.pb" >"$TMP/t.txt" &&
	grep -q '^diameter: 8$' "$TMP/t.txt" && [ "$(grep -c '^edge_list {' "$TMP/t.txt")" -eq 256 ] &&
	[ "$(grep -c '^ports {' "$TMP/t.txt")" -eq 4 ]; then ok; else bad "topology pb does not decode to the same data"; fi
if command -v dot >/dev/null; then
	$OFC topo circulant:12:2,3 --dot | dot -Tsvg >"$TMP/t.svg" && ok || bad "dot rejects our output"
fi

# Bad specs: exit 2 with the column.
expect_error 2 "ofc topo: invalid spec 'torsu:8x8' at column 1: unknown topology 'torsu' (did you mean 'torus'?)" $OFC topo torsu:8x8
expect_error 2 "ofc topo: invalid spec 'torus:8xq' at column 9: expected dimensions like 8x8" $OFC topo torus:8xq
expect_error 2 "ofc topo: invalid spec 'ring:1' at column 6: a ring needs at least 2 nodes" $OFC topo ring:1
expect_error 2 "ofc topo: invalid spec 'torus:8x1' at column 9: torus dimension 2 must be at least 2" $OFC topo torus:8x1
expect_error 2 "ofc topo: invalid spec 'hypercube:40' at column 11: hypercube dimension must be 1..22" $OFC topo hypercube:40
expect_error 2 "ofc topo: invalid spec 'complete:100000' at column 10: too many links (9999900000; limit 33554432)" $OFC topo complete:100000
expect_error 2 "ofc topo: invalid spec 'circulant:16:0' at column 11: circulant offset 0 must be in 1..15" $OFC topo circulant:16:0
expect_error 2 "ofc topo: invalid spec 'genkautz:4,4' at column 10: genkautz needs N >= d + 1 nodes" $OFC topo genkautz:4,4
expect_error 2 "ofc topo: invalid spec 'line(ring:4' at column 5: unbalanced '('" $OFC topo 'line(ring:4'
expect_error 2 "ofc topo: invalid spec 'degree(ring:4)' at column 14: degree(SPEC,n) needs a count after a comma" $OFC topo 'degree(ring:4)'
expect_error 2 "ofc topo: invalid spec '' at column 1: empty topology spec" $OFC topo ''
expect_error 2 "ofc topo: invalid spec 'torus' at column 6: expected ':' after 'torus' (torus:AxB[xC...])" $OFC topo torus
expect_error 2 "ofc topo: invalid spec 'ring:99999999999' at column 6: a node count is too large" $OFC topo ring:99999999999
# An edge list's errors: FILE:LINE:COL first, and what a terminal would act
# on escaped, never written raw.
printf '0-1\n1-2 \033[2Jx\n' >"$TMP/esc.edges"
expect_error 2 "$TMP/esc.edges:2:5: '\\x1b[2Jx' is not a link: write U-V (both directions) or U>V (one arc)" \
	$OFC topo "edges:$TMP/esc.edges"
expect_error 2 "$TMP/esc.edges:2:5: '\\x1b[2Jx' is not a link: write U-V (both directions) or U>V (one arc)" \
	$OFC topo "product(ring:2,edges:$TMP/esc.edges)"
expect_error 2 "ofc topo: invalid spec 'edges:$TMP/none.edges' at column 7: $TMP/none.edges: cannot open: No such file or directory" \
	$OFC topo "edges:$TMP/none.edges"

# Usage errors.
expect_error 2 "ofc topo: missing SPEC" $OFC topo
expect_error 2 "ofc topo: unknown option '--jsn'" $OFC topo torus:4x4 --jsn
# --format pb without -o: stdout when it is not a terminal, else a usage error.
$OFC topo torus:4x4 --format pb | protoc --decode=ofc.v1.Topology -I. proto/topology.proto >"$TMP/topo.txt" &&
	grep -q 'spec: "torus:4x4"' "$TMP/topo.txt" && ok || bad "topo --format pb to a pipe"
$OFC show configs/torus64-ocs.yaml --format pb | protoc --decode=ofc.v1.Fabric -I. proto/fabric.proto >"$TMP/fab.txt" &&
	grep -q 'name: "torus64-ocs"' "$TMP/fab.txt" && ok || bad "show --format pb to a pipe"
if command -v script >/dev/null 2>&1; then
	script -qec "$OFC show configs/torus64-ocs.yaml --format pb" /dev/null >"$TMP/tty.out" 2>&1
	[ $? -eq 2 ] && grep -q "ofc show: --format pb writes binary: give -o OUT, or redirect stdout" "$TMP/tty.out" &&
		ok || bad "show --format pb to a terminal" "$(cat "$TMP/tty.out")"
fi
expect_error 2 "ofc topo: unknown format 'xml' (text, json, dot or pb)" $OFC topo torus:4x4 --format xml
expect_error 2 "ofc: unknown command 'topology'" $OFC topology torus:4x4
expect_exit 2 $OFC
expect_exit 0 $OFC --help
expect_exit 0 $OFC topo --help

finish
