#!/bin/sh
# ofc validate / ofc show: the example configs, and every class of bad input
# rejected with FILE:LINE:COL: message and exit status 2.
SUITE=config
. "$(dirname "$0")/lib.sh"

# ---- the example configs -------------------------------------------------------
for f in configs/*.yaml; do
	expect_stdout_has "$f: ok: fabric" $OFC validate "$f"
done
expect_stdout_has "configs/torus64-ocs.yaml: ok: fabric torus64-ocs, 64 hosts, 1 switch, 0 rings, topology torus:8x8 (256 circuits)" $OFC validate configs/torus64-ocs.yaml
expect_stdout_has "topology genkautz:1024,4 (4096 circuits)" $OFC validate configs/genkautz1024-patch.yaml
expect_stdout_has "topology circulant:12:2,3 (48 circuits)" $OFC validate configs/testbed12-patch.yaml
expect_stdout_has "configs/testbed16-ocs.yaml: ok: fabric testbed16-ocs, 16 hosts, 1 switch, 0 rings, topology torus:4x4 (64 circuits)" $OFC validate configs/testbed16-ocs.yaml
# The cost model against the ports' rates: a warning at the cost model, exit 0.
expect_error 0 "configs/genkautz1024-patch.yaml:36:3: warning: cost_model link_bandwidth 25 Gb/s, but the ports run at 100 Gb/s: schedules are priced at 25 Gb/s a link (without link_bandwidth, at 100 Gb/s)" \
	$OFC validate configs/genkautz1024-patch.yaml
expect_exit 0 $OFC validate configs/testbed12-patch.yaml
[ ! -s "$TMP/err" ] && ok || bad "validate warns on a config whose rates agree" "$(cat "$TMP/err")"
# --json: the outcome and the warnings, or the error with its position.
expect_json 'j["valid"] and j["fabric"]=="genkautz1024-patch" and j["hosts"]==1024 and j["circuits"]==4096 and j["topology"]=="genkautz:1024,4" and [(w["line"], w["column"]) for w in j["warnings"]]==[(36, 3)]' \
	$OFC validate --json configs/genkautz1024-patch.yaml
expect_json 'j["valid"] and j["warnings"]==[] and j["rings"]==1' $OFC validate --json configs/ring16-optree.yaml
printf 'name: x\nhosts: {count: 2, prefix: h, portz: 1}\n' >"$TMP/portz.yaml"
$OFC validate --json "$TMP/portz.yaml" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); e=j["error"]; sys.exit(0 if not j["valid"] and (e["line"], e["column"])==(2, 30) and e["message"].startswith("unknown key '"'"'portz'"'"'") else 1)' "$TMP/out" &&
	grep -q "^$TMP/portz.yaml:2:30: unknown key 'portz'" "$TMP/err" && ok || bad "validate --json on a bad config" "$(cat "$TMP/out" "$TMP/err")"
expect_stdout_has "WDM ring ring0: 16 nodes, 2 wavelengths x 40 Gb/s per fibre" $OFC show configs/ring16-optree.yaml
expect_stdout_has "WDM ring terarack: 1024 nodes, 64 wavelengths x 40 Gb/s per fibre" $OFC show configs/ring1024.yaml
expect_stdout_has "diameter 8; the Moore bound for 64 nodes of degree 4 is 3" $OFC show configs/torus64-ocs.yaml
expect_stdout_has "4 self-loops (ports looped back)" $OFC show configs/genkautz1024-patch.yaml

# JSON: the ofc.v1.Fabric message as JSON.
expect_json 'j["name"]=="torus64-ocs" and len(j["hosts"])==64 and len(j["wiring"])==256 and len(j["circuits"])==256 and j["logical"]["diameter"]==8 and len(j["logical"]["ports"])==4 and j["switches"][0]["kind"]=="SWITCH_KIND_OCS" and j["cost_model"]["alpha_s"]==1e-05' $OFC show configs/torus64-ocs.yaml --json
# Every circuit joins host ports on one switch, ingress to egress, each port once.
expect_json 'len({(c["switch_name"],c["in_port"]) for c in j["circuits"]})==4096 and len({(c["switch_name"],c["out_port"]) for c in j["circuits"]})==4096 and all(c["src_port"]==c["dst_port"] for c in j["circuits"])' $OFC show configs/genkautz1024-patch.yaml --json
expect_json 'j["rings"][0]["nodes"][:3]==["n0","n1","n2"] and j["rings"][0]["wavelengths"]==2 and j["rings"][0]["mrr_tuning_delay_s"]==2.5e-05 and j["collectives"][0]["op"]=="COLLECTIVE_OP_ALLGATHER" and j["collectives"][0]["size_bytes"]==4194304' $OFC show configs/ring16-optree.yaml --json
# Credentials are named, never inlined.
expect_json 'j["switches"][0]["driver"]["credentials"]=="credentials/ocs0.cred" and "ofc-demo" not in json.dumps(j)' $OFC show configs/torus64-ocs.yaml --json

# Protobuf: decodes with protoc and holds the same circuits.
expect_exit 0 $OFC show configs/torus64-ocs.yaml --format pb -o "$TMP/f.pb"
if protoc --decode=ofc.v1.Fabric proto/fabric.proto <"$TMP/f.pb" >"$TMP/f.txt" &&
	[ "$(grep -c '^circuits {' "$TMP/f.txt")" -eq 256 ] && [ "$(grep -c '^hosts {' "$TMP/f.txt")" -eq 64 ] &&
	grep -q '^name: "torus64-ocs"$' "$TMP/f.txt"; then ok; else bad "fabric pb does not decode to the same data"; fi
# Atomic output: a failed write leaves no file and no temporary behind.
expect_exit 1 $OFC show configs/torus64-ocs.yaml --format pb -o "$TMP/no/such/dir/f.pb"
# Without -o: stdout when it is not a terminal (test_topo.sh checks the terminal case).
expect_exit 0 $OFC show configs/torus64-ocs.yaml --format pb
if ls "$TMP"/f.pb.tmp.* >/dev/null 2>&1; then bad "temporary file left behind"; else ok; fi

# ---- bad input ----------------------------------------------------------------
# check NAME 'LINE:COL: message' < yaml: the YAML is written to NAME.yaml,
# validated, and must fail with exit 2 and exactly "$TMP/NAME.yaml:LINE:COL: message".
check() {
	cat >"$TMP/$1.yaml"
	expect_error 2 "$TMP/$1.yaml:$2" $OFC validate "$TMP/$1.yaml"
}
# Five lines of hosts most cases start from.
HOSTS='name: t
hosts:
  count: 16
  prefix: h
  ports: 4'

# Unknown keys, with a hint.
check unknown "9:5: unknown key 'wavelenghts' in rings (did you mean 'wavelengths'?)" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: all
    wavelenghts: 2
    rate_per_wavelength: 40Gbps
YAML
check unknown_top "6:1: unknown key 'color' in the config (expected version, name, description, hosts, rings, switches, wiring, topology, collectives, partitions, cost_model, lp_solver, testbed, servers, fabric_vertices, fabric_links, capacity_sets, workload)" <<YAML
$HOSTS
color: blue
YAML
# Wrong types.
check type_list "9:18: 'wavelengths' must be a single value, not a list" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: all
    wavelengths: [1, 2]
    rate_per_wavelength: 40Gbps
YAML
check type_int "4:10: 'ports' must be an integer in 1..64, got 'many'" <<YAML
name: t
hosts:
  count: 16
  ports: many
YAML
check type_hosts "2:8: 'hosts' must be a list of hosts or a mapping with 'count' and 'prefix', not a scalar" <<YAML
name: t
hosts: plenty
YAML
check type_map "7:5: 'rings' must be a mapping of keys, not a scalar" <<YAML
$HOSTS
rings:
  - ring0
YAML
check no_value "6:1: 'topology' has no value" <<YAML
$HOSTS
topology:
YAML
# NIC-limited hosts: injection is a rate, forwarding host or nic.
check bad_injection "6:14: 'injection': bad rate 'fast': expected a rate such as 40Gbps, 100Gb/s or 12.5GB/s" <<YAML
$HOSTS
  injection: fast
YAML
check zero_injection "6:14: 'injection' must be greater than zero" <<YAML
$HOSTS
  injection: 0Gbps
YAML
check bad_forwarding "7:15: 'forwarding' must be one of host, nic; got 'gpu'" <<YAML
$HOSTS
  injection: 200Gbps
  forwarding: gpu
YAML
check bad_host_forwarding "4:37: 'forwarding' must be one of host, nic; got 'switch'" <<YAML
name: t
hosts:
  - {name: a, ports: 1, injection: 100Gbps}
  - {name: b, ports: 1, forwarding: switch}
YAML
# Missing required keys.
check missing "7:5: missing required key 'wavelengths' in rings" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: all
    rate_per_wavelength: 40Gbps
YAML
check missing_name "1:1: missing required key 'name' in the config" <<YAML
hosts:
  - name: a
YAML
# Out of range and negative numbers.
check range "9:18: 'wavelengths' must be in 1..4096, got 0" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: all
    wavelengths: 0
    rate_per_wavelength: 40Gbps
YAML
check negative "4:10: 'ports' must not be negative, got '-4'" <<YAML
name: t
hosts:
  count: 4
  ports: -4
YAML
check negative_size "8:11: 'size': bad size '-64MiB': must not be negative" <<YAML
$HOSTS
collectives:
  - op: allgather
    size: -64MiB
YAML
check zero_rate "5:14: 'port_rate' must be greater than zero" <<YAML
name: t
hosts:
  count: 4
  ports: 1
  port_rate: 0Gbps
YAML
check big_switch "9:12: 'ports' must be in 1..100000, got 99999999" <<YAML
$HOSTS
switches:
  - name: ocs0
    type: ocs
    ports: 99999999
YAML
# Bad units.
check unit_rate "10:26: 'rate_per_wavelength': bad rate '40Gbs': expected a rate such as 40Gbps, 100Gb/s or 12.5GB/s" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: all
    wavelengths: 2
    rate_per_wavelength: 40Gbs
YAML
check unit_size "8:11: 'size': bad size '64Mb': expected a size such as 4096, 64KiB, 4MB or 1GiB" <<YAML
$HOSTS
collectives:
  - op: allgather
    size: 64Mb
YAML
check unit_duration "11:23: 'mrr_tuning_delay': bad duration '25 parsecs': expected a duration such as 30 (seconds), 25us, 10ms or 1.5s" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: all
    wavelengths: 2
    rate_per_wavelength: 40Gbps
    mrr_tuning_delay: 25 parsecs
YAML
check bad_choice "8:11: 'type' must be one of ocs, patch-panel; got 'router'" <<YAML
$HOSTS
switches:
  - name: s
    type: router
    ports: 8
YAML
# Duplicate names and keys.
check dup_host "5:5: duplicate host name 'a' (first at line 3)" <<YAML
name: t
hosts:
  - name: a
  - name: b
  - name: a
YAML
check dup_key "2:1: duplicate key 'name' (first at line 1, column 1)" <<YAML
name: t
name: u
hosts:
  - name: a
YAML
check dup_device "8:5: duplicate device name 'x' (first at line 7)" <<YAML
$HOSTS
switches:
  - {name: x, type: ocs, ports: 64}
  - {name: x, type: patch-panel, ports: 64}
YAML
check bad_name "3:11: invalid name 'a b': use 1-63 letters, digits, '-', '_' or '.', starting with a letter or digit" <<YAML
name: t
hosts:
  - name: a b
YAML
# References to things that do not exist.
check ref_host "8:21: ring 'r0': no host named 'hx'" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: [h0, h1, hx]
    wavelengths: 2
    rate_per_wavelength: 40Gbps
YAML
check ref_switch "10:14: wiring: no switch named 'ocs9'" <<YAML
$HOSTS
switches:
  - {name: ocs0, type: ocs, ports: 64}
wiring:
  pattern: sequential
  switches: [ocs9]
YAML
check ref_wiring_host "10:5: wiring: no host named 'h99'" <<YAML
$HOSTS
switches:
  - {name: ocs0, type: ocs, ports: 64}
wiring:
  - {host: h0, port: 0, switch: ocs0, switch_port: 1}
  - {host: h99, port: 0, switch: ocs0, switch_port: 2}
YAML
check ring_twice "8:21: ring 'r0': host 'h1' appears twice" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: [h0, h1, h1]
    wavelengths: 2
    rate_per_wavelength: 40Gbps
YAML
# Topologies the wiring cannot realise.
check degree "5:11: topology 'torus:4x4' needs 4 ports per host but host 'host0' has 2" <<YAML
name: t
hosts:
  count: 16
  ports: 2
topology: torus:4x4
YAML
check more_ports "8:3: more host ports than switch ports: 64 hosts have 256 ports, the listed switches have 200 from port 1 on" <<YAML
name: t
hosts:
  count: 64
  ports: 4
switches:
  - {name: ocs0, type: ocs, ports: 200}
wiring:
  pattern: sequential
  switches: [ocs0]
topology: torus:8x8
YAML
check per_port "11:14: more host ports than switch ports: switch 'p0' has 8 ports but 16 hosts need one each from port 1" <<YAML
$HOSTS
switches:
  - {name: p0, type: patch-panel, ports: 8}
  - {name: p1, type: patch-panel, ports: 8}
wiring:
  pattern: per-port
  switches: [p0, p1, p0, p1]
YAML
check ring_short "8:12: ring 'r0' has 1 node; a ring needs at least 2" <<YAML
$HOSTS
rings:
  - name: r0
    nodes: [h3]
    wavelengths: 2
    rate_per_wavelength: 40Gbps
YAML
check node_count "6:11: topology 'torus:8x8' has 64 nodes but the fabric has 16 hosts" <<YAML
$HOSTS
topology: torus:8x8
YAML
check split_switches "14:11: topology 'torus:4x4' needs a circuit from h0:0 (on 'a') to h1:0 (on 'b'): they are on different switches" <<YAML
name: t
hosts:
  count: 16
  prefix: h
  ports: 4
switches:
  - {name: a, type: ocs, ports: 32}
  - {name: b, type: ocs, ports: 32}
wiring:
  - {host: h0, port: 0, switch: a, switch_port: 1}
  - {host: h1, port: 0, switch: b, switch_port: 1}
  - {host: h0, port: 1, switch: a, switch_port: 2}
  - {host: h3, port: 1, switch: a, switch_port: 3}
topology: torus:4x4
YAML
check unwired "8:11: topology 'ring:16' needs circuits but no host is wired to a switch (add 'wiring')" <<YAML
$HOSTS
switches:
  - {name: a, type: ocs, ports: 64}
topology: ring:16
YAML
check disconnected "6:11: topology 'circulant:16:2' is not strongly connected: some hosts could never reach others" <<YAML
$HOSTS
topology: circulant:16:2
YAML
check spec "6:19: topology 'torus:4xq': expected dimensions like 8x8" <<YAML
$HOSTS
topology: torus:4xq
YAML
check spec_quoted "6:20: topology 'torus:4xq': expected dimensions like 8x8" <<YAML
$HOSTS
topology: "torus:4xq"
YAML
check port_taken "10:5: switch port ocs0:1 is already wired to h0:0 (line 9)" <<YAML
$HOSTS
switches:
  - {name: ocs0, type: ocs, ports: 64}
wiring:
  - {host: h0, port: 0, switch: ocs0, switch_port: 1}
  - {host: h1, port: 0, switch: ocs0, switch_port: 1}
YAML
check no_such_port "9:5: host 'h0' has ports 0..3; there is no port 4" <<YAML
$HOSTS
switches:
  - {name: ocs0, type: ocs, ports: 64}
wiring:
  - {host: h0, port: 4, switch: ocs0, switch_port: 1}
YAML
# Devices, drivers and secrets.
check password "13:17: passwords never go in the config: put them in a credentials file and name it with 'credentials: PATH'" <<YAML
$HOSTS
switches:
  - name: ocs0
    type: ocs
    ports: 64
    driver:
      type: tl1
      address: 10.0.0.1:3082
      password: hunter2
YAML
check credentials "13:20: credentials file 'nope.cred': No such file or directory" <<YAML
$HOSTS
switches:
  - name: ocs0
    type: ocs
    ports: 64
    driver:
      type: tl1
      address: 10.0.0.1:3082
      credentials: nope.cred
YAML
check no_credentials "11:7: driver 'tl1' of optical circuit switch 'ocs0' needs 'credentials: FILE' to log in" <<YAML
$HOSTS
switches:
  - name: ocs0
    type: ocs
    ports: 64
    driver:
      type: tl1
      address: 10.0.0.1:3082
YAML
check address "12:16: bad address '10.0.0.1': expected HOST:PORT with a port in 1..65535" <<YAML
$HOSTS
switches:
  - name: ocs0
    type: ocs
    ports: 64
    driver:
      type: sim
      address: 10.0.0.1
YAML
check wrong_driver "11:7: driver 'mrr' cannot drive patch panel 'p' (use patch-panel or netconf or sim)" <<YAML
$HOSTS
switches:
  - name: p
    type: patch-panel
    ports: 64
    driver:
      type: mrr
      address: 10.0.0.1:1
YAML
check ocs_move "10:16: 'move_time' is for patch panels; an OCS takes 'reconfig_time'" <<YAML
$HOSTS
switches:
  - name: ocs0
    type: ocs
    ports: 64
    move_time: 3s
YAML

# ---- malformed files ----------------------------------------------------------
printf 'name: t\nhosts:\n\t- name: a\n' | check tab "3:1: tab character: YAML indentation must use spaces"
printf 'name: "t\nhosts:\n  - name: a\n' | check quote "4:1: YAML syntax error: found unexpected end of stream while scanning a quoted scalar (line 1, column 7)"
printf 'name: t\nhosts:\n  - {name: a, ports: 4\n' | check truncated "4:1: YAML syntax error: did not find expected ',' or '}' while parsing a flow mapping (line 3, column 5)"
printf '' | check empty "1:1: empty configuration: expected a mapping with name, hosts, ..."
printf '# nothing here\n' | check comment_only "1:1: empty configuration: expected a mapping with name, hosts, ..."
printf '\211PNG\r\n\032\n\000\000\000\rIHDR\000\000' | check binary "1:1: not a text file: invalid leading UTF-8 octet (byte 0x89 at offset 0)"
printf 'name: t\nhosts:\n  - name: a\000b\n' | check nul "3:12: not a text file: control characters are not allowed (byte 0x00 at offset 26)"
printf -- '- a\n- b\n' | check not_mapping "1:1: a config must be a mapping with name, hosts, ...; this is a list"
printf 'name: t\nhosts:\n  - name: a\n---\nname: u\n' | check two_docs "4:1: more than one YAML document; a config is one"
python3 -c "print('name: t\nhosts: ' + '['*100 + ']'*100)" | check deep "2:71: nested too deeply (limit 64 levels)"
python3 -c "
s = 'name: t\nhosts:\n  - name: a\ndescription: &a0 [x, x]\n'
for i in range(1, 40): s += 'x%d: &a%d [*a%d, *a%d]\n' % (i, i, i-1, i-1)
print(s)" | check laughs "22:22: document too large: more than 2000000 nodes once YAML aliases are expanded"
printf 'name: t\nhosts: &h [*h]\n' | check self_alias "2:12: alias '*h' refers to a node that contains it"
printf 'name: t\nhosts: *nope\n' | check no_anchor "2:8: alias '*nope' has no anchor"
python3 -c "print('name: t\n# ' + 'x' * 9000000)" | check large "1:1: file too large (limit 8388608 bytes)"
# A large but legal file: 100,000 hosts listed one by one.
python3 -c "print('name: big\nhosts:\n' + ''.join('  - {name: h%d, ports: 1}\n' % i for i in range(100000)))" >"$TMP/big.yaml"
expect_stdout_has "ok: fabric big, 100000 hosts" $OFC validate "$TMP/big.yaml"
# Aliases used sensibly are fine.
printf 'name: &n t\ndescription: *n\nhosts:\n  - &h {name: a, ports: 2}\n  - {name: b, ports: 2}\ntopology: ring:2\n' >"$TMP/alias.yaml"
expect_stdout_has "ok: fabric t, 2 hosts" $OFC validate "$TMP/alias.yaml"
# Random bytes never crash the loader: exit 2 every time.
i=0
while [ $i -lt 30 ]; do
	head -c $((i * 37 + 1)) /dev/urandom >"$TMP/rand.yaml"
	$OFC validate "$TMP/rand.yaml" >/dev/null 2>&1
	rc=$?
	if [ $rc -eq 2 ]; then ok; else bad "random input $i exited $rc"; fi
	i=$((i + 1))
done

# Server fabrics are checked when loaded, not first when scheduled:
# the model W examples validate, a link to a vertex the template lacks does
# not, at its place, and ofc schedule refuses the same config the same way.
for f in examples/modelw/*.yaml; do
	expect_stdout_has "$f: ok: fabric" $OFC validate "$f"
done
sed 's/{from: pcie3, to: nic7,/{from: pcie3, to: nic8,/' examples/modelw/all-links-2.yaml >"$TMP/srv.yaml"
expect_error 2 "$TMP/srv.yaml:57:27: unknown vertex 'nic8'" $OFC validate "$TMP/srv.yaml"
expect_error 2 "$TMP/srv.yaml:57:27: unknown vertex 'nic8'" $OFC schedule "$TMP/srv.yaml" --collective allgather

# ---- usage --------------------------------------------------------------------
expect_error 2 "ofc validate: missing FILE" $OFC validate
expect_error 2 "ofc validate: too many arguments" $OFC validate a.yaml b.yaml
expect_error 2 "ofc validate: unknown option '--strict'" $OFC validate --strict configs/torus64-ocs.yaml
expect_error 2 "ofc: $TMP/none.yaml: cannot open: No such file or directory" $OFC validate "$TMP/none.yaml"
expect_error 2 "ofc: $TMP: is a directory" $OFC validate "$TMP"
expect_error 2 "ofc show: unknown format 'yaml' (text, json, dot or pb)" $OFC show configs/torus64-ocs.yaml --format yaml

finish
