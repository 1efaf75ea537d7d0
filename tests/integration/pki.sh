# Test certificates made with the openssl CLI: a CA that signs with
# `openssl ca` (so it can revoke and issue CRLs) and certificates it signs.
# Source after lib.sh.
#
#   pki_ca DIR [CN]   the CA in DIR: ca.pem and ca.key (CN, default
#                     ofc-test-ca), ca.cnf with its database, serial and
#                     CRL number, and the sections client (clientAuth) and
#                     server (serverAuth, for 127.0.0.1 and localhost)
#   pki_cert NAME SECTION [openssl ca options...]
#                     DIR/NAME.pem, NAME.key (and NAME.csr): CN=NAME,
#                     signed by the CA with ca.cnf's SECTION
#   pki_newkey ARGS...  openssl req with a new P-256 key and no passphrase

PKI=
pki_newkey() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" 2>/dev/null; }

pki_ca() {
	PKI=$1
	mkdir -p "$PKI/newcerts"
	: >"$PKI/index.txt"
	echo 01 >"$PKI/serial"
	echo 01 >"$PKI/crlnumber"
	cat >"$PKI/ca.cnf" <<EOF
[ca]
default_ca = ofc
[ofc]
database = $PKI/index.txt
serial = $PKI/serial
crlnumber = $PKI/crlnumber
new_certs_dir = $PKI/newcerts
certificate = $PKI/ca.pem
private_key = $PKI/ca.key
default_md = sha256
default_days = 30
default_crl_days = 30
policy = any
unique_subject = no
[any]
commonName = supplied
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
EOF
	pki_newkey -x509 -days 30 -keyout "$PKI/ca.key" -out "$PKI/ca.pem" -subj "/CN=${2:-ofc-test-ca}" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

pki_cert() {
	_pki_n=$1
	_pki_s=$2
	shift 2
	pki_newkey -keyout "$PKI/$_pki_n.key" -out "$PKI/$_pki_n.csr" -subj "/CN=$_pki_n"
	openssl ca -batch -config "$PKI/ca.cnf" -extensions "$_pki_s" -in "$PKI/$_pki_n.csr" \
		-out "$PKI/$_pki_n.pem" -notext "$@" >/dev/null 2>&1
}
