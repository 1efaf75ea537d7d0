# etcd and ofcd replicas on loopback for tests and benchmarks (see
# docs/ofcd.md, "Replicas"). Source after lib.sh and emu.sh. Everything lives
# under $TMP: each etcd member's data in $TMP/etcd/NAME, each replica's
# config, credentials, state directory, socket and log in $TMP/NAME.
#
#   etcd_start N            N members e1..eN on free loopback ports, clients
#                           over TLS with client certificates (etcd's
#                           --client-cert-auth; peers plain http on loopback);
#                           ETCD is --cluster's etcds://HOST:PORT,..., ETCD_TLS
#                           ofcd's --cluster-cacert/-cert/-key, ETCD_PKI their
#                           directory (0 once they answer)
#   etcd_curl PORT PATH BODY  POST to a member's v3 JSON API as the client
#   etcd_ctl ARGS...        etcdctl on e1 as the client
#   etcd_kill I, etcd_restart I
#                           (ETCD_ARGS: more of etcd's options, as
#                           --max-request-bytes N)
#   replica_dir NAME CONFIG a replica's directory: CONFIG with its own
#                           credentials (user NAME) and the emulator's address
#   replica_start NAME ARGS... ofcd --cluster "$ETCD" (or what REPLICA_ETCD
#                           says at its first start) as NAME, in the
#                           foreground, with ETCD_TLS for etcds:// (a plain
#                           etcd:// needs ARGS' --cluster-insecure); NAME_pid
#   replica_stop NAME [SIG] (SIGTERM by default; KILL for kill -9)
#   cluster_json NAME       `ofc --socket $TMP/NAME.sock status --json` into
#                           $TMP/NAME.json (0 when it answered)
#   three_replicas DELAY_MS  torus:8x8 on an ocs-emu, etcd, r1..r3 started
#   wait_leader SECS [NAME...]  until one of them says it leads and took
#                           over; LEADER its name (0), else 1

# A CA, the members' certificate (IP:127.0.0.1: loopback only) and the
# clients' (replicas, tests' etcdctl and curl), made once per test; another
# CA's client certificate (intruder) for tests of what etcd refuses.
etcd_pki() {
	ETCD_PKI="$TMP/etcd/pki"
	ETCD_TLS="--cluster-cacert $ETCD_PKI/ca.pem --cluster-cert $ETCD_PKI/client.pem --cluster-key $ETCD_PKI/client.key"
	[ -s "$ETCD_PKI/intruder.pem" ] && return 0
	mkdir -p "$ETCD_PKI"
	chmod 700 "$ETCD_PKI"
	(
		cd "$ETCD_PKI" || exit 1
		nk() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@"; }
		for ca in ca other; do
			nk -x509 -days 2 -keyout $ca.key -out $ca.pem -subj "/CN=ofc-test-etcd-$ca" \
				-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign || exit 1
		done
		printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1\n' >server.ext
		printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n' >client.ext
		for n in server:ca:server client:ca:client intruder:other:client; do
			who=${n%%:*} ext=${n##*:} ca=${n#*:}
			ca=${ca%%:*}
			nk -keyout $who.key -out $who.csr -subj "/CN=$who" &&
				openssl x509 -req -in $who.csr -CA $ca.pem -CAkey $ca.key -CAcreateserial \
					-days 2 -extfile $ext.ext -out $who.pem || exit 1
		done
		chmod 600 ./*.key
	) >"$TMP/etcd/openssl.log" 2>&1
}

etcd_curl() {
	curl -s -m 1 --cacert "$ETCD_PKI/ca.pem" --cert "$ETCD_PKI/client.pem" --key "$ETCD_PKI/client.key" \
		-X POST "https://127.0.0.1:$1$2" -d "$3"
}

etcd_ctl() {
	etcdctl --endpoints "https://127.0.0.1:$ETCD_C1" --cacert "$ETCD_PKI/ca.pem" \
		--cert "$ETCD_PKI/client.pem" --key "$ETCD_PKI/client.key" "$@"
}

ETCD_PIDS=""
etcd_start() {
	_n=$1
	mkdir -p "$TMP/etcd"
	etcd_pki || return 1
	scripts/free-ports $((2 * _n)) >"$TMP/etcd/ports" || return 1
	set -- $(cat "$TMP/etcd/ports")
	_i=1
	_init=""
	_eps=""
	while [ $_i -le "$_n" ]; do
		eval "ETCD_C$_i=$1 ETCD_P$_i=$2"
		_init="$_init${_init:+,}e$_i=http://127.0.0.1:$2"
		_eps="$_eps${_eps:+,}127.0.0.1:$1"
		shift 2
		_i=$((_i + 1))
	done
	ETCD="etcds://$_eps"
	ETCD_INIT=$_init
	ETCD_N=$_n
	_i=1
	while [ $_i -le "$_n" ]; do
		etcd_restart $_i
		_i=$((_i + 1))
	done
	# until every member answers (20 s by the clock: three members elect a
	# raft leader in about a second)
	deadline 20 _etcd_end
	_i=1
	while [ $_i -le "$_n" ] && ! past $_etcd_end; do
		eval "_c=\$ETCD_C$_i"
		if etcd_curl "$_c" /v3/kv/range '{"key":"eA=="}' |
			grep -q '"revision"'; then
			_i=$((_i + 1))
		else
			sleep 0.1
		fi
	done
	[ $_i -gt "$_n" ]
}

# The TLS 1.2 suites etcd offers, as docs/ofcd.md sets them: forward-secret
# AEAD only (Go's default adds CBC with HMAC-SHA1); TLS 1.3's are Go's own,
# all AEAD. etcd 3.4 speaks nothing below TLS 1.2 (its --tls-min-version
# came in 3.5). test_tls_scan.sh scans it.
ETCD_CIPHERS=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305

# (Again with the same data: a member restarted rejoins as itself.)
etcd_restart() {
	eval "_c=\$ETCD_C$1 _p=\$ETCD_P$1"
	etcd --name "e$1" --data-dir "$TMP/etcd/e$1" \
		--listen-client-urls "https://127.0.0.1:$_c" --advertise-client-urls "https://127.0.0.1:$_c" \
		--client-cert-auth --trusted-ca-file "$ETCD_PKI/ca.pem" \
		--cert-file "$ETCD_PKI/server.pem" --key-file "$ETCD_PKI/server.key" --cipher-suites "$ETCD_CIPHERS" \
		--listen-peer-urls "http://127.0.0.1:$_p" --initial-advertise-peer-urls "http://127.0.0.1:$_p" \
		--initial-cluster "$ETCD_INIT" --initial-cluster-token "ofc-test-$$" \
		--initial-cluster-state new $ETCD_ARGS >>"$TMP/etcd/e$1.log" 2>&1 &
	eval "ETCD_PID$1=$!"
	ETCD_PIDS="$ETCD_PIDS $!"
}

etcd_kill() {
	eval "_pid=\$ETCD_PID$1"
	kill -9 "$_pid" 2>/dev/null
	wait "$_pid" 2>/dev/null
}

# replica_dir NAME CONFIG EMU_PORT
replica_dir() {
	mkdir -p "$TMP/$1/state"
	chmod 700 "$TMP/$1"
	printf 'user: %s\npassword: ofc-demo\n' "$1" >"$TMP/$1/ocs0.cred"
	chmod 600 "$TMP/$1/ocs0.cred"
	sed -e "s|credentials: .*|credentials: ocs0.cred|" \
		-e "s|address: .*|address: 127.0.0.1:$3|" "$2" >"$TMP/$1/fab.yaml"
}

REPLICA_PIDS=""
replica_start() {
	_name=$1
	shift
	rm -f "$TMP/$_name.sock"
	# (the endpoints it was first given, again at a restart)
	eval "_eps=\${${_name}_etcd:-\${REPLICA_ETCD:-\$ETCD}}"
	eval "${_name}_etcd=\$_eps"
	_tls=""
	case $_eps in etcds://*) _tls=$ETCD_TLS ;; esac
	# shellcheck disable=SC2086 # (ETCD_TLS: options and paths without spaces)
	$BUILD/ofcd $_tls --config "$TMP/$_name/fab.yaml" --socket "$TMP/$_name.sock" \
		--state-dir "$TMP/$_name/state" --credentials-dir "$TMP/$_name" \
		--cluster "$_eps" --cluster-name "$_name" --cluster-ttl 2s \
		--foreground --log-file "$TMP/$_name.log" --log-level info "$@" 2>>"$TMP/$_name.stderr" &
	eval "${_name}_pid=$!"
	REPLICA_PIDS="$REPLICA_PIDS $!"
	deadline 10 _replica_end
	while [ ! -S "$TMP/$_name.sock" ] && ! past $_replica_end; do sleep 0.02; done
}

replica_stop() {
	eval "_pid=\$${1}_pid"
	kill -"${2:-TERM}" "$_pid" 2>/dev/null
	case ${2:-TERM} in STOP | CONT) ;; *) wait "$_pid" 2>/dev/null ;; esac
}

cluster_json() {
	$OFC --socket "$TMP/$1.sock" status --json --timeout 5 >"$TMP/$1.json" 2>/dev/null
}

# not_raft_leader NAME: the number (1-based) of an etcd member that is not
# etcd's own (raft) leader, as replica NAME shows them: losing that one
# costs etcd no election of its own
not_raft_leader() {
	cluster_json "$1" && python3 -c 'import json,sys
m = json.load(open(sys.argv[1]))["cluster"]["members"]
print(next(i + 1 for i, x in enumerate(m) if not x["leader"]))' "$TMP/$1.json"
}

# cluster_why NAME...: for a failure's message, each replica's view (role,
# leader, took over, stale) and the last lines of its log: what CI keeps of
# a run is its output, not $TMP
cluster_why() {
	for _w in "$@"; do
		echo "$_w: $(cluster_view "$_w" 2>/dev/null)"
		tail -n 6 "$TMP/$_w.log" 2>/dev/null | sed 's/^/  /'
	done
}

# others NAME: the replicas r1 r2 r3 but NAME
others() { for _o in r1 r2 r3; do [ "$_o" = "$1" ] || printf '%s ' "$_o"; done; }

# gen NAME: the config generation NAME serves
gen() { cluster_json "$1" && python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("config_generation", 0))' "$TMP/$1.json"; }

# until_state NAME SECS 'EXPR' [ARG]: poll NAME's state (cluster_json) until
# the Python EXPR holds of it (j; ARG as a) or SECS pass; one Python for
# the whole poll (cluster_poll.py), not one a turn
until_state() {
	python3 tests/integration/cluster_poll.py state "$2" "$OFC" "$TMP" "$1" "$3" "${4:-}"
}

# The replica's role and leader: "ROLE LEADER TOOK_OVER_MS STALE"
cluster_view() {
	cluster_json "$1" && python3 -c 'import json,sys
c = json.load(open(sys.argv[1])).get("cluster", {})
print(c.get("role", "-"), (c.get("leader") or {}).get("name", "-"),
      c.get("took_over_unix_ms", 0), c.get("stale", False))' "$TMP/$1.json"
}

# wait_leader SECS NAME...: until one of them says it leads and took over
# (cluster_view's role and took-over time): LEADER its name (0), else 1;
# one Python for the whole poll (cluster_poll.py), not one a replica a turn
wait_leader() {
	_secs=$1
	shift
	# (under the sanitizers an election and its takeover take several
	# times longer: make check's bound, not make test's)
	[ -z "${SAN:-}" ] || _secs=$((_secs * 3))
	LEADER=$(python3 tests/integration/cluster_poll.py leader "$_secs" "$OFC" "$TMP" "$@")
}

# three_replicas DELAY_MS: what most suites start with: torus:8x8 on a
# 256-port ocs-emu taking DELAY_MS a change, each replica logged in as its
# own user (r1..r3), a 3-member etcd, r1..r3 started (--probe-interval 0);
# $TMP/a.yaml the config, A and B two topologies of it, PY a python3 with
# the protobuf runtime
three_replicas() {
	PY=python3
	python3 -c 'import google.protobuf' 2>/dev/null || PY=/usr/bin/python3
	make_torus_config "$TMP/a.yaml" torus:8x8 2s 2
	A=torus:8x8
	B=circulant:64:3,8
	for _r in r1 r2 r3; do printf 'user: %s\npassword: ofc-demo\n' $_r >"$TMP/$_r.cred"; done
	start_emu ocs-emu e --ports 256 --credentials "$TMP/r1.cred" --credentials "$TMP/r2.cred" \
		--credentials "$TMP/r3.cred" --delay-ms "$1" --state "$TMP/e.state"
	etcd_start 3 && ok || bad "etcd did not start" "$(tail -3 "$TMP/etcd/e1.log")"
	for _r in r1 r2 r3; do
		replica_dir $_r "$TMP/a.yaml" "$e_port"
		replica_start $_r --probe-interval 0
	done
}

# Other helpers (proxies) the test started: killed with the rest.
HELPER_PIDS=""
stop_cluster() {
	for p in $REPLICA_PIDS; do kill -9 "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; done
	for p in $ETCD_PIDS $HELPER_PIDS; do kill -9 "$p" 2>/dev/null; done
	stop_all_emus
}
trap 'stop_cluster; rm_tmp' EXIT
