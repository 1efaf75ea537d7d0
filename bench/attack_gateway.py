#!/usr/bin/env python3
"""The attack table's category for ofc-gateway from the network
(docs/security.md): requests whose framing two HTTP parsers
could read differently (two Content-Length headers, one beside a
Transfer-Encoding, a coding other than chunked), NUL bytes encoded into a
path, a query key or value, and floods of bare TCP connections that never
start TLS, from one address and from eight, each reopened as the gateway
closes it.

Rejected correctly: a framing input gets 400 with the reason and the
connection closed (a good request sent in the same write is never
answered); a flood leaves a client with a certificate (from another
address) answered 5 times out of 5 and the gateway's log within 10 lines a
kind in 10 s plus one line for what it left out.

bench/attack.py runs it as one row; alone (root, for ofcd's gateway uid):

    python3 bench/attack_gateway.py [--build build]
"""
import json
import os
import resource
import selectors
import signal
import socket
import ssl
import subprocess
import sys
import time

NAME = ("a machine on the network: ofc-gateway's request framing, NUL bytes in names, "
        "floods of bare connections")
GOOD = b"GET /v1/state HTTP/1.1\r\nHost: x\r\n\r\n"
BODY = b'{"partition":"jobA"}'
CHUNKED = b'14\r\n{"partition":"jobA"}\r\n0\r\n\r\n'


def post(headers, body=BODY):
    return b"POST /v1/reconfigure HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + body


FOLD = "a header line that starts with a space or a tab (obs-fold), or a field name that is not a token"
FRAMING = [
    (post(b"Content-Length: 20\r\nContent-Length: 2\r\n"), "2 Content-Length headers: one at most"),
    (post(b"Content-Length: 2\r\nContent-Length: 20\r\n"), "2 Content-Length headers: one at most"),
    (post(b"Content-Length: 20\r\nContent-Length: 20\r\n"), "2 Content-Length headers: one at most"),
    (post(b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", CHUNKED),
     "Content-Length and Transfer-Encoding together"),
    (post(b"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n", CHUNKED),
     "Content-Length and Transfer-Encoding together"),
    (post(b"Transfer-Encoding: gzip\r\n"), "Transfer-Encoding 'gzip': only chunked is taken"),
    (post(b"Transfer-Encoding: gzip, chunked\r\n", CHUNKED),
     "Transfer-Encoding 'gzip, chunked': only chunked is taken"),
    (post(b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n", CHUNKED),
     "2 Transfer-Encoding headers: one at most"),
    (b"POST /v1/reconfigure HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED,
     "Transfer-Encoding in an HTTP/1.0 request"),
    (post(b"Content-Length: 20\r\nX-A: b\r\n Transfer-Encoding: chunked\r\n"), FOLD),
    (post(b"Content-Length: 20\r\nX-A: b\r\n\tTransfer-Encoding: chunked\r\n"), FOLD),
    (post(b"Content-Length: 20\r\nTransfer-Encoding: gzip\r\n chunked\r\n"), FOLD),
    (post(b"Transfer-Encoding: chunked\r\nContent-Length:\r\n 4\r\n", CHUNKED), FOLD),
    (b"GET /v1/schedule?collective=allreduce&partition=jobA%00x&summary_only=true HTTP/1.1\r\n"
     b"Host: x\r\n\r\n", "a NUL byte (%00) in the path or the query"),
    (b"GET /v1/state?with_fabric%00=true HTTP/1.1\r\nHost: x\r\n\r\n",
     "a NUL byte (%00) in the path or the query"),
    (b"GET /v1/state%00.json HTTP/1.1\r\nHost: x\r\n\r\n",
     "a NUL byte (%00) in the path or the query"),
    (post(b"Content-Length: 20\r\n").replace(b"/v1/reconfigure", b"/v1/reconfigure?x=%00"),
     "a NUL byte (%00) in the path or the query"),
]


class Gateway:
    """ofcd with a gateway socket and ofc-gateway in front, on a PKI the
    openssl CLI makes."""

    def __init__(self, att):
        self.att = att
        self.gw = os.path.join(att.build, "ofc-gateway")
        self.pki = att.path("pki")
        self.proc = None

    def openssl(self, *args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True)

    def cert(self, name, usage, ca=False):
        k, p = os.path.join(self.pki, name + ".key"), os.path.join(self.pki, name + ".pem")
        ext = os.path.join(self.pki, name + ".ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                    "extendedKeyUsage=%s\n" % usage)
            if usage == "serverAuth":
                f.write("subjectAltName=IP:127.0.0.1\n")
        self.openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                     "-nodes", "-keyout", k, "-out", p + ".csr", "-subj", "/CN=" + name)
        self.openssl("x509", "-req", "-in", p + ".csr", "-CA", self.ca, "-CAkey", self.ca_key,
                     "-CAcreateserial", "-out", p, "-days", "2", "-extfile", ext)
        return p, k

    def start(self):
        os.makedirs(self.pki, exist_ok=True)
        self.ca, self.ca_key = (os.path.join(self.pki, "ca.pem"), os.path.join(self.pki, "ca.key"))
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                     "-nodes", "-keyout", self.ca_key, "-out", self.ca, "-subj", "/CN=attack-ca",
                     "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        server = self.cert("server", "serverAuth")
        self.client = self.cert("admin", "clientAuth")
        policy = self.att.write("gw.policy", "cn:admin admin\n")
        gw_sock = self.att.path("gw.sock")
        if not self.att.start_ofcd("--gateway-socket", gw_sock, "--gateway-uid", "0"):
            return False
        self.log = self.att.path("gateway.log")
        self.att.logs.append(self.log)
        port_file = self.att.path("gw.port")
        self.proc = subprocess.Popen(
            [self.gw, "--listen", "127.0.0.1:0", "--cert", server[0], "--key", server[1],
             "--ca", self.ca, "--policy", policy, "--ofcd-socket", gw_sock, "--port-file",
             port_file, "--read-timeout", "2s"], stderr=open(self.log, "w"))
        for _ in range(1000):
            if os.path.exists(port_file) and open(port_file).read().strip():
                self.port = int(open(port_file).read())
                self.ctx = ssl.create_default_context(cafile=self.ca)
                self.ctx.load_cert_chain(*self.client)
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        print("attack_gateway.py: ofc-gateway did not start: " + open(self.log).read()[:300])
        return False

    def stop(self):
        if self.proc:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    def exchange(self, raw):
        """What the gateway answers to raw, then a good request, in one
        write, until it closes (the read timeout, 2 s, closes one kept)."""
        s = self.ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.port)),
                                 server_hostname="127.0.0.1")
        s.sendall(raw + GOOD)
        s.settimeout(30)
        data = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
        except (ConnectionError, ssl.SSLError, socket.timeout):
            pass
        s.close()
        return data

    def curl(self, src):
        return subprocess.Popen(
            ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
             "--interface", src, "--cacert", self.ca, "--cert", self.client[0],
             "--key", self.client[1], "https://127.0.0.1:%d/v1/state" % self.port],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def flood(self, sources, n=1100, asks=5):
        """n bare connections from sources (round robin), each reopened as
        the gateway closes it, while a client from 127.0.0.2 asks `asks`
        times: (its answers, the log's new lines, seconds)."""
        sel = selectors.DefaultSelector()
        lines0 = sum(1 for _ in open(self.log, errors="replace"))

        def bare(i):
            s = socket.socket()
            s.setblocking(False)
            s.bind((sources[i % len(sources)], 0))
            try:
                s.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                return
            sel.register(s, selectors.EVENT_READ, i)
        for i in range(n):
            bare(i)
        t0, codes, asked = time.time(), [], None
        while len(codes) < asks and time.time() < t0 + 120:
            for key, _ in sel.select(0.05):
                try:
                    d = key.fileobj.recv(4096)
                except OSError:
                    d = b""
                if not d:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    bare(key.data)
            if asked is None and time.time() > t0 + 1 + len(codes):
                asked = self.curl("127.0.0.2")
            if asked is not None and asked.poll() is not None:
                codes.append(asked.stdout.read().strip())
                asked = None
        secs = time.time() - t0
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        lines = sum(1 for _ in open(self.log, errors="replace")) - lines0
        return codes, lines, secs


def run(att):
    """One row of att's table (an attack.Attack, its stage set up)."""
    g = Gateway(att)
    fails, n = [], len(FRAMING) + 2
    try:
        if not os.path.exists(g.gw) or not g.start():
            # (an older tree without the gateway: the category is not run)
            print("attack_gateway.py: no ofc-gateway to attack in " + att.build)
            return
        for raw, why in FRAMING:
            a = g.exchange(raw)
            try:
                body = json.loads(a.partition(b"\r\n\r\n")[2])
            except ValueError:
                body = None
            if not (a.startswith(b"HTTP/1.1 400 ") and a.count(b"HTTP/1.1 ") == 1 and
                    body == {"status": "STATUS_INVALID", "message": "bad request: " + why}):
                fails.append((repr(raw[:70]), "answered %r" % a[:120]))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, hard), hard))
        for what, sources in (("1,100 bare connections from 127.0.0.1", ["127.0.0.1"]),
                              ("1,100 bare connections from 8 addresses",
                               ["127.0.0.%d" % i for i in range(11, 19)])):
            codes, lines, secs = g.flood(sources)
            # (8 kinds of limited line, 10 each and one for the rest a window)
            bound = 8 * 11 * (int(secs // 10) + 2)
            if codes != ["200"] * 5 or lines > bound:
                fails.append((what, "the client got %s; %d log lines in %.0f s (at most %d)"
                              % (codes, lines, secs, bound)))
        if g.proc.poll() is not None:
            fails.append(("after", "ofc-gateway exited"))
        if not att.alive():
            fails.append(("after", "ofcd stopped answering"))
    finally:
        g.stop()
        att.stop_ofcd()
    att.rows.append((NAME, n, n - len(fails), fails))


def main():
    import argparse
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import attack
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("attack_gateway.py: needs root (ofcd's gateway socket takes root's uid here)")
        return 0
    att = attack.Attack(a.build)
    try:
        att.setup()
        run(att)
        ok = att.report()
    finally:
        att.stop_ofcd()
        import shutil
        shutil.rmtree(att.tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
