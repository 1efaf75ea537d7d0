# What the libofc-mpi suites share (sourced after lib.sh): the builds they
# need and the small fabric they run on.

# mpi_need FILE...: files `make mpi` builds; a missing one fails the suite
# there, naming it.
mpi_need() {
	for f; do
		[ -f "$f" ] && continue
		bad "$f is missing (make mpi builds it)"
		finish
		exit 1
	done
}

# mpi_fabric FILE NAME RATE [TOPOLOGY [CREDENTIALS]]: 4 hosts of 4 ports at
# RATE on one 16-port OCS over TL1, wired sequentially, at TOPOLOGY
# (torus:2x2); CREDENTIALS as the config names them (ocs0.cred).
mpi_fabric() {
	cat >"$1" <<EOF_FABRIC
version: 1
name: $2
hosts: {count: 4, prefix: h, ports: 4, port_rate: $3}
switches:
  - name: ocs0
    type: ocs
    ports: 16
    driver: {type: tl1, address: 127.0.0.1:3082, credentials: ${5:-ocs0.cred}}
wiring: {pattern: sequential, switches: [ocs0]}
topology: ${4:-torus:2x2}
EOF_FABRIC
}
