"""The attack table's TLS category (docs/security.md, "TLS, as a scanner
sees it"): a network client that offers ofc-gateway only what the bar
refuses (TLS 1.0 and 1.1, CBC, NULL, 3DES and anonymous suites, the static
RSA key exchange, SHA-1 signatures, ffdhe2048, CCM_8, no client
certificate), and an etcd member that speaks only TLS 1.0 or 1.1 to ofcd.
The client is openssl s_client under an OpenSSL configuration that allows
all of it (security level 0, TLS 1.0 up), with the client certificate the
gateway asks for, so that a refusal is the server's; a client that asks
for what the bar allows must get through first, or the category fails.

    python3 bench/attack_tls.py [--build build]    this category alone

attack.py runs it with the others (tls_downgrades)."""
import os
import subprocess
import sys
import time

LAX = """openssl_conf = init
[init]
ssl_conf = ssl
[ssl]
system_default = sys
[sys]
MinProtocol = TLSv1
CipherString = DEFAULT:@SECLEVEL=0
"""

# (what, s_client options): each must fail its handshake
GATEWAY_CASES = [
    ("TLS 1.0", ["-tls1"]),
    ("TLS 1.1", ["-tls1_1"]),
    ("TLS 1.2 CBC HMAC-SHA1", ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA:@SECLEVEL=0"]),
    ("TLS 1.2 CBC HMAC-SHA256", ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256:@SECLEVEL=0"]),
    ("TLS 1.2 static RSA, GCM", ["-tls1_2", "-cipher", "AES128-GCM-SHA256:@SECLEVEL=0"]),
    ("TLS 1.2 static RSA, CBC", ["-tls1_2", "-cipher", "AES256-SHA:@SECLEVEL=0"]),
    ("TLS 1.2 NULL cipher", ["-tls1_2", "-cipher", "ECDHE-RSA-NULL-SHA:NULL-SHA256:@SECLEVEL=0"]),
    ("TLS 1.2 anonymous", ["-tls1_2", "-cipher", "AECDH-AES128-SHA:ADH-AES128-SHA:@SECLEVEL=0"]),
    ("TLS 1.2 SHA-1 signatures only", ["-tls1_2", "-sigalgs", "RSA+SHA1:ECDSA+SHA1",
                                       "-cipher", "DEFAULT:@SECLEVEL=0"]),
    ("TLS 1.3 ffdhe2048 only", ["-tls1_3", "-groups", "ffdhe2048"]),
    ("TLS 1.3 CCM_8 only", ["-tls1_3", "-ciphersuites", "TLS_AES_128_CCM_8_SHA256"]),
]


REQUEST = b"GET /v1/state HTTP/1.0\r\nConnection: close\r\n\r\n"
# what s_client says when the fault is its own: the input was not sent
CLIENT_SIDE = ("no cipher match", "No protocols available", "no ciphers available",
               "unknown option", "Call to SSL_CONF_cmd")


def run(cmd, env=None, timeout=30, stdin=b""):
    try:
        r = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "hung (%d s)" % timeout
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace")


def make_pki(d):
    """A CA; the gateway's RSA certificate, made for key encipherment too
    (what lets a server offer the static RSA key exchange); a client's."""
    def ossl(*a):
        subprocess.run(["openssl"] + list(a), check=True, capture_output=True)
    ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-days", "2", "-keyout", d + "/ca.key", "-out", d + "/ca.pem", "-subj", "/CN=attack-ca",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    exts = {"server": "keyUsage=critical,digitalSignature,keyEncipherment\n"
                      "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
            "client": "keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"}
    for who, ext in exts.items():
        with open("%s/%s.ext" % (d, who), "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\n" + ext)
        key = ["-newkey", "rsa:2048"] if who == "server" else \
            ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        ossl("req", "-new", *key, "-nodes", "-keyout", "%s/%s.key" % (d, who),
             "-out", "%s/%s.csr" % (d, who), "-subj", "/CN=" + who)
        ossl("x509", "-req", "-in", "%s/%s.csr" % (d, who), "-CA", d + "/ca.pem",
             "-CAkey", d + "/ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", "%s/%s.ext" % (d, who), "-out", "%s/%s.pem" % (d, who))
        os.chmod("%s/%s.key" % (d, who), 0o600)


def wait_file(path, proc, secs=10):
    end = time.monotonic() + secs
    while time.monotonic() < end and proc.poll() is None:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.05)
    return False


def s_server_port(out_path, proc, secs=10):
    end = time.monotonic() + secs
    while time.monotonic() < end and proc.poll() is None:
        for line in open(out_path, errors="replace"):
            if line.startswith("ACCEPT") and ":" in line:
                return line.strip().rsplit(":", 1)[1]
        time.sleep(0.05)
    return None


def tls_downgrades(build, tmp, config, creds):
    """The category's row: (name, inputs, rejected correctly, failures).
    config: an ofcd config whose credentials are in creds."""
    name = ("a network client or an etcd member: TLS below the bar (old versions, weak "
            "suites, SHA-1, small groups, no certificate; TLS 1.0/1.1 members)")
    d = os.path.join(tmp, "tls")
    os.makedirs(d, exist_ok=True)
    make_pki(d)
    with open(d + "/lax.cnf", "w") as f:
        f.write(LAX)
    env = dict(os.environ, OPENSSL_CONF=d + "/lax.cnf")
    with open(d + "/policy", "w") as f:
        f.write("cn:client admin\n")
    procs, fails = [], []
    try:
        gw = subprocess.Popen(
            [os.path.join(build, "ofc-gateway"), "--listen", "127.0.0.1:0",
             "--cert", d + "/server.pem", "--key", d + "/server.key", "--ca", d + "/ca.pem",
             "--policy", d + "/policy", "--ofcd-socket", d + "/none.sock",
             "--port-file", d + "/gw.port"], stderr=open(d + "/gw.log", "w"))
        procs.append(gw)
        if not wait_file(d + "/gw.port", gw):
            n = len(GATEWAY_CASES) + 3
            return (name, n, 0, [("ofc-gateway", "did not start: " +
                                  open(d + "/gw.log").read()[:200])])
        port = open(d + "/gw.port").read().strip()
        # (the request sent after the handshake; -ign_eof: its answer read)
        base = ["openssl", "s_client", "-ign_eof", "-connect", "127.0.0.1:" + port,
                "-CAfile", d + "/ca.pem"]
        cert = ["-cert", d + "/client.pem", "-key", d + "/client.key"]
        # the control: what the bar allows gets an answer, under the same configuration
        code, out = run(base + cert + ["-tls1_2"], env, stdin=REQUEST)
        if "HTTP/1." not in out:
            fails.append(("a TLS 1.2 client the bar allows", "no answer: " + out[-200:]))
        cases = [(what, opts + cert) for what, opts in GATEWAY_CASES]
        cases.append(("TLS 1.2 without a client certificate", ["-tls1_2"]))
        for what, opts in cases:
            code, out = run(base + opts, env, stdin=REQUEST)
            if code is None:
                fails.append((what, out))
            elif "CONNECTED(" not in out or any(c in out for c in CLIENT_SIDE):
                fails.append((what, "the client could not send it: " + out.strip()[-200:]))
            elif "HTTP/1." in out:
                fails.append((what, "answered: " +
                              " ".join(l for l in out.split("\n") if "Cipher is" in l)))
        # ofcd's client of etcd against a member that speaks only TLS 1.x
        for ver in ("1", "1_1"):
            what = "ofcd against an etcd member speaking only TLS " + ver.replace("_", ".")
            srv = subprocess.Popen(
                ["openssl", "s_server", "-accept", "127.0.0.1:0", "-tls" + ver,
                 "-cipher", "DEFAULT:@SECLEVEL=0", "-cert", d + "/server.pem",
                 "-key", d + "/server.key", "-www"],
                stdout=open(d + "/s_server.out", "w"), stderr=subprocess.STDOUT, env=env)
            procs.append(srv)
            p = s_server_port(d + "/s_server.out", srv)
            state = os.path.join(d, "state" + ver)
            code, out = run([os.path.join(build, "ofcd"), "--foreground", "--config", config,
                             "--credentials-dir", creds, "--socket", d + "/r.sock",
                             "--state-dir", state, "--cluster-name", "r" + ver,
                             "--cluster", "etcds://127.0.0.1:%s" % p,
                             "--cluster-cacert", d + "/ca.pem", "--cluster-cert", d + "/client.pem",
                             "--cluster-key", d + "/client.key"], env)
            srv.kill()
            srv.wait()
            if code != 2 or "protocol version" not in out:
                fails.append((what, "exit %s: %s" % (code, out.strip()[-200:])))
        n = len(cases) + 2
        return (name, n, n - len(fails), fails)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def main():
    import argparse
    import shutil
    import tempfile
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ofc-attack-tls.")
    try:
        creds = os.path.join(tmp, "creds")
        os.mkdir(creds, 0o700)
        shutil.copy("configs/credentials/ocs0.cred", creds)
        os.chmod(os.path.join(creds, "ocs0.cred"), 0o600)
        with open("configs/torus64-ocs.yaml") as f:
            cfg = f.read().replace("credentials: credentials/ocs0.cred",
                                   "credentials: " + os.path.join(creds, "ocs0.cred"))
        config = os.path.join(tmp, "fab.yaml")
        with open(config, "w") as f:
            f.write(cfg)
        name, n, ok, fails = tls_downgrades(a.build, tmp, config, creds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| %s | %d | %d |" % (name, n, ok))
    for what, why in fails:
        print("NOT REJECTED CORRECTLY: %s: %s" % (what, why))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
