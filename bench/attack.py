#!/usr/bin/env python3
"""The attack table: hostile inputs, as a local user, a member of
the admin group, a config author, a disk and a schedule file would send them,
each checked for being rejected correctly: the exit status or error reply
expected, a message that says why, no byte of a secret anywhere (replies,
errors, the daemon's log), no hang (each input has 30 s), and the daemon
still answering afterwards. Prints one markdown row per category and every
input that was not rejected correctly; exits 1 if any.

    python3 bench/attack.py [--build build]

Needs root (it runs inputs as nobody and as an admin-group member through
setpriv, as test_security.sh does). docs/security.md holds the table."""
import argparse
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

import attack_etcd
import attack_gateway
from attack_tls import tls_downgrades

SECRET = "TOPSECRET"


class Attack:
    def __init__(self, build):
        self.build = build
        self.ofc = os.path.join(build, "ofc")
        self.ofcd = os.path.join(build, "ofcd")
        self.tmp = tempfile.mkdtemp(prefix="ofc-attack.")
        os.chmod(self.tmp, 0o755)
        self.rows = []  # (category, tried, ok, failures)
        self.fakes = []  # fake replicas (leader_sockets)
        self.daemon = None
        self.logs = []

    # ---- the stage ------------------------------------------------------------------
    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def setup(self):
        os.mkdir(self.path("root"), 0o700)
        for name, text in (("shadow", SECRET + "-LINE 0-1\n"),
                           ("secret.cred", "user: r00t\npassword: " + SECRET + "-PW\n")):
            with open(self.path("root", name), "w") as f:
                f.write(text)
            os.chmod(self.path("root", name), 0o600)
        os.mkdir(self.path("creds"), 0o755)
        shutil.copy("configs/credentials/ocs0.cred", self.path("creds", "ocs0.cred"))
        os.chmod(self.path("creds", "ocs0.cred"), 0o600)
        with open("configs/torus64-ocs.yaml") as f:
            cfg = f.read()
        self.config_text = cfg.replace("credentials: credentials/ocs0.cred",
                                       "credentials: " + self.path("creds", "ocs0.cred"))
        self.write("good.yaml", self.config_text)
        os.mkdir(self.path("topo"), 0o755)
        self.write("topo/ring4.edges", "0-1 1-2 2-3 3-0\n")
        self.write("topo/bad.edges", "0-1\n" + SECRET + "-WORD\n")
        os.symlink(self.path("root", "shadow"), self.path("topo", "link.edges"))
        os.symlink("/proc/self/environ", self.path("topo", "env.edges"))
        os.mkfifo(self.path("topo", "fifo.edges"))
        os.mkdir(self.path("topo", "dir.edges"))
        gid = subprocess.run(["getent", "group", "users"], capture_output=True,
                             text=True).stdout.split(":")
        self.admin_gid = gid[2] if len(gid) > 2 else "100"
        self.any_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        self.admin = ["setpriv", "--reuid=65534", "--regid=65534", "--groups", self.admin_gid]

    def write(self, name, text, mode=0o644):
        with open(self.path(name), "w") as f:
            f.write(text)
        os.chmod(self.path(name), mode)
        return self.path(name)

    def start_ofcd(self, *extra):
        self.stop_ofcd()
        log = self.path("ofcd-%d.log" % len(self.logs))
        self.logs.append(log)
        self.sock, self.ro = self.path("ofcd.sock"), self.path("ro.sock")
        args = [self.ofcd, "--foreground", "--credentials-dir", self.path("creds"),
                "--config", self.path("good.yaml"), "--socket", self.sock,
                "--ro-socket", self.ro, "--admin-group", "users",
                "--state-dir", self.path("state"),
                "--probe-interval", "0"] + list(extra)
        self.daemon = subprocess.Popen(args, stderr=open(log, "w"))
        for _ in range(1000):
            if self.alive():
                return True
            if self.daemon.poll() is not None:
                break
            time.sleep(0.01)
        # (An older ofcd without the options: the category is not run.)
        print("attack.py: ofcd did not start: " + open(log).read().strip()[:300])
        self.daemon = None
        return False

    def stop_ofcd(self):
        if self.daemon:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(10)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
            self.daemon = None

    def alive(self):
        r = subprocess.run([self.ofc, "--socket", self.sock, "status"], capture_output=True)
        return r.returncode == 0

    # ---- one input ------------------------------------------------------------------
    def check(self, cmd, code, fragment):
        """None when cmd was rejected correctly, else why not."""
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            return "hung (30 s)"
        out = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
        if SECRET in out:
            return "a secret in the output"
        if r.returncode != code:
            return "exit %d, want %d: %s" % (r.returncode, code, out.strip()[:200])
        if fragment not in out:
            return "no '%s' in: %s" % (fragment, out.strip()[:200])
        if "\x1b" in out:
            return "a raw escape byte in the output"
        return None

    def category(self, name, cases, daemon=False):
        fails = []
        for case in cases:
            why = self.check(*case)
            if why is None and daemon and not self.alive():
                why = "the daemon stopped answering"
            if why:
                fails.append((" ".join(case[0][-3:]), why))
        ok = len(cases) - len(fails)
        if daemon:  # (the log is not an input: it fails the run, not a row's count)
            for log in self.logs:
                if SECRET in open(log, errors="replace").read():
                    fails.append((log, "a secret in the daemon's log"))
        self.rows.append((name, len(cases), ok, fails))

    # ---- the categories -------------------------------------------------------------
    def readonly_specs(self, topo_dir):
        rs = self.any_user + [self.ofc, "--socket", self.ro, "schedule", "--collective",
                              "allreduce", "--summary", "--topology"]
        shadow = self.path("root", "shadow")
        if not topo_dir:
            specs = ["edges:" + shadow, "edges:-", "edges:/etc/shadow", "edges:/proc/self/environ",
                     "edges:/proc/self/maps", "edges:/dev/zero", "edges:/dev/stdin",
                     "edges:" + self.path("topo", "ring4.edges"),
                     "product(ring:3,edges:" + shadow + ")", "line(edges:" + shadow + ")",
                     "reverse(edges:/etc/shadow)", "degree(edges:-,2)",
                     "power(edges:/proc/self/environ,2)", "edges:../../../../etc/shadow",
                     "edges:" + "a" * 900]
            return [(rs + [s], 2, "not read here") for s in specs]
        cases = []
        for s in ["../root/shadow", "link.edges", "env.edges", self.path("topo", "..", "root",
                                                                          "shadow"),
                  "dir.edges/../../root/shadow"]:
            cases.append((rs + ["edges:" + s], 2, "this name leaves it"))
        for s in [shadow, "/proc/self/environ", "/etc/shadow", self.path("topo") + "x/a"]:
            cases.append((rs + ["edges:" + s], 2, "read only from"))
        cases.append((rs + ["edges:fifo.edges"], 2, "is not a regular file"))
        cases.append((rs + ["edges:dir.edges"], 2, "is not a regular file"))
        cases.append((rs + ["edges:-"], 2, "No such file"))
        cases.append((rs + ["edges:bad.edges"], 2, "this word is not a link"))
        return cases

    def admin_configs(self):
        base = self.config_text
        shadow = self.path("root", "shadow")
        configs = [
            ("topology: torus:8x8", "topology: edges:" + shadow, "not read here"),
            ("topology: torus:8x8", "topology: edges:../root/shadow", "not read here"),
            ("topology: torus:8x8", "topology: edges:/proc/self/environ", "not read here"),
            ("credentials: " + self.path("creds", "ocs0.cred"),
             "credentials: " + self.path("root", "secret.cred"), "outside ofcd's credentials"),
            ("credentials: " + self.path("creds", "ocs0.cred"), "credentials: ../root/shadow",
             "outside ofcd's credentials"),
            ("address: 127.0.0.1:3082", "address: 127.0.0.1:9", "is not one ofcd may reach"),
        ]
        cases = []
        for i, (old, new, frag) in enumerate(configs):
            if old not in base:
                raise SystemExit("attack.py: the example config changed: no '%s'" % old)
            f = self.write("evil%d.yaml" % i, base.replace(old, new, 1))
            cases.append((self.admin + [self.ofc, "--socket", self.sock, "apply", f,
                                        "--dry-run"], 2, frag))
        for spec in ["edges:" + shadow, "edges:-", "product(ring:2,edges:/etc/shadow)"]:
            cases.append((self.admin + [self.ofc, "--socket", self.sock, "reconfigure",
                                        "--topology", spec, "--dry-run"], 2, "not read here"))
        return cases

    def state_files(self):
        """ofcd's start and ofc plan with damaged or misplaced state files: each
        stops with the file's name and the mv that sets it aside, deletes
        nothing, and leaves the file as it was."""
        cases = []
        st = self.path("st-disk")
        rewired = os.path.join(st, "torus64-ocs.rewired")
        failed = os.path.join(st, "torus64-ocs.failed")
        start = [self.ofcd, "--foreground", "--credentials-dir", self.path("creds"),
                 "--config", self.path("good.yaml"), "--socket", self.path("disk.sock"),
                 "--state-dir", st, "--probe-interval", "0", "--check-state"]
        del start[-1]  # (ofcd has no such option: it starts, then is stopped)
        # (Lines of the right form that no longer fit the config, a host
        # or port it lost while ofcd was down, are kept and logged "not in
        # effect": ofcd starts. Lines ofcd never writes stop it.)
        lines = {rewired: ["h0 -1 4294967295", "zz 0 2", "h0 1 1", "h0 0 2\nh0 0 3",
                           "h0 0", "h0 0 2 7", "h0 999 2", "h0 0 99999999999999999999",
                           "h\x1b[2J 0 2", "h0\x00 0 2"],
                 failed: ["h0 h1", "h\x1b[2J", "h0\x00", "x" * 5000]}
        for path, bad in lines.items():
            for text in bad:
                cases.append((start, 1, "mv ", path, text + "\n"))
        for path in (rewired, failed):
            cases.append((start, 1, "mv ", path, "FIFO"))
            cases.append((start, 1, "mv ", path, "DIR"))
        for text in ["h0:99", "zz", "h64", "0-0", "h0:0:0", "0-1-2"]:
            cases.append((start, None, "is not in effect", failed, text + "\n"))
        record = os.path.join(st, "torus64-ocs.state")
        journal = os.path.join(st, "torus64-ocs.journal")
        plan = [self.ofc, "plan", self.path("good.yaml"), "--state-dir", st]
        for path, text in ((record, "garbage " + SECRET), (record, "\x08\x01"),
                           (journal, "garbage " + SECRET), (journal, "\x08\x01"),
                           (record, "FIFO"), (journal, "FIFO"), (record, "DIR")):
            cases.append((plan, 1, "mv", path, text))
        return cases

    SERVER = ["name: s", "servers:", "  - name: box", "    vertices:",
              "      - {name: gpu0, kind: gpu}", "      - {name: hub, kind: switch}",
              "      - {name: nic, kind: nic}", "    links:",
              "      - {from: gpu0, to: hub, bandwidth: 100GB/s}",
              "      - {from: hub, to: nic, bandwidth: 25GB/s}", "hosts:",
              "  - {name: s0, server: box}", "  - {name: s1, server: box}", "fabric_links:",
              "  - {from: s0/nic, to: s1/nic, bandwidth: 25GB/s}"]

    def configs(self):
        """A config author's worst: YAML that expands, nests, repeats or holds
        bytes a terminal acts on; server fabrics that name what is not there;
        failures named twice. Each is refused by ofc validate with its
        FILE:LINE:COL (exit 2)."""
        def server(line, text):
            lines = list(self.SERVER)
            lines[line - 1] = text
            return "\n".join(lines) + "\n"
        laughs = ['l0: &l0 ["lol"]'] + ["l%d: &l%d [%s]" % (i, i, ",".join(["*l%d" % (i - 1)] * 10))
                                         for i in range(1, 12)]
        texts = [
            "name: x\nversion: 1\nhosts: &h [*h]\n",
            "name: " + "[" * 100000 + "\n",
            "name: a\nname: b\n",
            "name: a\x00b\n",
            'name: "a\x1b[2Jb"\nversion: 1\n',
            "\n".join(laughs) + "\n",
            "name: x\n" + "k%d: v\n" * 0 + "x" * (2 << 20) + "\n",
            self.config_text.replace("topology: torus:8x8", "topology: torus:99999999x99999999"),
            self.config_text.replace("topology: torus:8x8", "topology: edges:/proc/self/environ"),
            server(9, "      - {from: gpu0, to: hbu, bandwidth: 100GB/s}"),
            server(13, "  - {name: s1, server: bx}"),
            server(9, "      - {from: hub, to: hub, bandwidth: 100GB/s}"),
            server(7, "      - {name: hub, kind: nic}"),
            server(15, "  - {from: s0/nic, to: s2/nic, bandwidth: 25GB/s}"),
            server(13, "  - {name: s1, server: box}\n" + "".join(
                "  - {name: x%d, server: box}\n" % i for i in range(23400))),
            "name: t\nhosts:\n  - {name: a, ports: 2, failed_ports: [0, 0]}\n"
            "  - {name: b, ports: 2}\n  - {name: c, ports: 2}\ntopology: biring:3\n",
            "name: r\nhosts: {count: 4, prefix: h, ports: 2, port_rates: [1Gbps, 0Gbps]}\n",
        ]
        cases = []
        for i, t in enumerate(texts):
            f = self.write("author%d.yaml" % i, t)
            cases.append(([self.ofc, "validate", f], 2, f + ":"))
        return cases

    def place(self, path, text):
        st = os.path.dirname(path)
        shutil.rmtree(st, ignore_errors=True)
        os.makedirs(st)
        if text == "FIFO":
            os.mkfifo(path)
        elif text == "DIR":
            os.mkdir(path)
        else:
            with open(path, "wb") as f:
                f.write(text.encode("utf-8", "surrogateescape"))

    def disk_category(self, name, cases):
        fails = []
        for cmd, code, frag, path, text in cases:
            self.place(path, text)
            before = sorted(os.listdir(os.path.dirname(path)))
            if cmd[0] == self.ofcd:
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                try:
                    out, err = p.communicate(timeout=5)
                    r = (p.returncode, (out + err).decode("utf-8", "replace"))
                except subprocess.TimeoutExpired:
                    p.send_signal(signal.SIGTERM)
                    out, err = p.communicate()
                    r = (None, (out + err).decode("utf-8", "replace"))
            else:
                try:
                    q = subprocess.run(cmd, capture_output=True, timeout=30)
                    r = (q.returncode, (q.stdout + q.stderr).decode("utf-8", "replace"))
                except subprocess.TimeoutExpired:
                    r = (None, "hung (30 s)")
            after = sorted(os.listdir(os.path.dirname(path)))
            why = None
            if r[0] != code:
                why = "exit %s, want %s: %s" % (r[0], code, r[1].strip()[:200])
            elif frag not in r[1] or (code is not None and path not in r[1]):
                why = "the refusal does not name the file and the mv: " + r[1].strip()[:200]
            elif "\x1b" in r[1]:
                why = "a raw escape byte in the output"
            elif [f for f in before if f not in after]:
                why = "a file was deleted"
            if why:
                fails.append(("%s <- %r" % (os.path.basename(path), text), why))
        self.rows.append((name, len(cases), len(cases) - len(fails), fails))

    def nul_names(self):
        """ReportFailure and topology strings with a NUL byte or control
        characters, through the Python client (argv cannot carry a NUL)."""
        sys.path.insert(0, os.path.join(self.build, "python"))
        import ofc_client
        fails, items = [], [["h0\0x"], ["h0:0\0"], ["0-1\0,2-3"], ["h\x1b[2J"], ["h0\n"],
                            ["h0\x7f"]]
        for it in items:
            try:
                with ofc_client.Client(self.sock) as c:
                    r = c.report_failure(items=it, check=False)
                    st = c.get_state()
                if r.status == 0 or list(st.failed):
                    fails.append((repr(it), "accepted: %s" % list(st.failed)))
            except Exception as e:  # a refusal raises in some client versions
                if "INVALID" not in str(e) and "refused" not in str(e):
                    fails.append((repr(it), "client error: %s" % e))
        for spec in ["torus:8x8\0/etc/shadow", "edges:\0/etc/shadow"]:
            with ofc_client.Client(self.ro) as c:
                try:
                    r = c.get_schedule("allreduce", topology=spec, summary_only=True)
                    fails.append((repr(spec), "answered"))
                except Exception:
                    pass
        if not self.alive():
            fails.append(("after", "the daemon stopped answering"))
        n = len(items) + 2
        self.rows.append(("root on the main socket, any user on the read-only one: names with "
                          "NUL and control bytes (ReportFailure, topology)", n, n - len(fails),
                          fails))

    # A fake replica of ofcd: answers every request NOT_LEADER naming `lead`,
    # or ("" ) OK itself; logs how many bytes each connection sent.
    FAKE = r"""
import os, socket, struct, sys, threading
sys.path.insert(0, sys.argv[4])
from ofc_client.pb import control_pb2
path, log, lead = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o777)
srv.listen(16)
def serve(c):
    data = b""
    try:
        c.settimeout(10)
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            b = c.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    with open(log, "a") as f:
        f.write("%d\n" % len(data))
    if len(data) >= 4:
        req = control_pb2.Request()
        req.ParseFromString(data[4:])
        r = control_pb2.Response(id=req.id, status=control_pb2.STATUS_OK, message="committed")
        if lead:
            r.status = control_pb2.STATUS_NOT_LEADER
            r.leader.name, r.leader.socket = "r9", lead
        out = r.SerializeToString()
        c.sendall(struct.pack(">I", len(out)) + out)
    c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

    def fake(self, user, sock, log, lead):
        """A fake replica at sock as user (a setpriv prefix), until the run ends."""
        open(log, "w").close()
        os.chmod(log, 0o666)
        p = subprocess.Popen(user + [sys.executable, "-c", self.FAKE, sock, log, lead,
                                     os.path.abspath(os.path.join(self.build, "python"))])
        self.fakes.append(p)
        for _ in range(500):
            if os.path.exists(sock):
                return
            time.sleep(0.01)

    def leader_sockets(self):
        """A follower's NOT_LEADER names the leader's socket as the store holds
        it: whoever writes the store names a socket of its own. Sockets served
        by nobody and by daemon (uid 1), named directly and after a hop through
        a root replica, asked by ofc and the Python client: each refused with
        both sockets named, and not one byte sent to them."""
        os.mkdir(self.path("evil"))
        os.chmod(self.path("evil"), 0o1777)  # (as /tmp: anyone makes a socket there)
        bad = []
        for name, uid in (("nobody", "65534"), ("daemon", "1")):
            sock = self.path("evil", name + ".sock")
            self.fake(["setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups"], sock,
                      self.path("evil", name + ".log"), "")
            self.fake([], self.path(name + "-follower.sock"), self.path(name + "-f.log"), sock)
            bad.append((name, sock))
        # a root replica that names the nobody follower... which names the nobody socket
        self.fake([], self.path("hop.sock"), self.path("hop.log"), self.path("evil", "nobody.sock"))
        self.fake([], self.path("hop2.sock"), self.path("hop2.log"), self.path("hop.sock"))
        cases, frag = [], "not following it, nothing was sent"
        for name, sock in bad:
            f = self.path(name + "-follower.sock")
            for args in (["apply", self.path("good.yaml"), "--dry-run"],
                         ["reconfigure", "--topology", "ring:64"], ["status"],
                         ["cancel", "1"]):
                cases.append(([self.ofc, "--socket", f] + args, 1, frag))
        cases.append(([self.ofc, "--socket", self.path("hop2.sock"), "reconfigure",
                       "--topology", "ring:64"], 1, frag))
        for name, sock in bad:
            code = ("import sys; sys.path.insert(0, %r); import ofc_client\n"
                    "from ofc_client.pb import control_pb2 as pb\n"
                    "c = ofc_client.Client(%r, timeout=10)\n"
                    "try:\n c.call(pb.Request(reconfigure=pb.Reconfigure(topology='ring:64')))\n"
                    "except ConnectionError as e:\n print(e); sys.exit(1)\n"
                    % (os.path.join(self.build, "python"), self.path(name + "-follower.sock")))
            cases.append(([sys.executable, "-c", code], 1, frag))
        self.category("whoever writes the store: a leader's socket it names, served by "
                      "another user (ofc, the Python client)", cases)
        sent = [n for n, _ in bad
                if [ln for ln in open(self.path("evil", n + ".log")) if ln.strip() != "0"]]
        if sent:
            self.rows[-1][3].extend(("%s's socket" % n, "it received a request") for n in sent)

    def record_ports(self):
        """A record whose cross-connects do not fit the config's 256-port
        switch, or name port 0: ofc plan stops with the file, the device and
        the port, and the mv that sets the record aside."""
        sys.path.insert(0, os.path.join(self.build, "python"))
        from ofc_client.pb import state_pb2
        cases = []
        st = self.path("st-ports")
        record = os.path.join(st, "torus64-ocs.state")
        plan = [self.ofc, "plan", self.path("good.yaml"), "--state-dir", st]
        for xc in ([9999, 5], [5, 9999], [0, 5], [5, 0], [257, 1], [1, 257],
                   [4294967295, 1], [256, 1, 300, 2]):
            m = state_pb2.FabricRecord(fabric="torus64-ocs", generation=1, version=2,
                                       config="good.yaml", topology="torus:8x8")
            m.devices.add(name="ocs0", driver="tl1", xconn=xc)
            text = m.SerializeToString().decode("utf-8", "surrogateescape")
            cases.append((plan, 1, "device 'ocs0': cross-connect", record, text))
        self.disk_category("whoever writes the store or the disk: a record's ports outside "
                           "the config's switch, port 0", cases)

    # ---- the gateway's trust ----------------------------------------------------------
    def pki(self):
        """A CA as docs/control.md makes it (openssl ca), its certificates and
        CRLs good and bad, under tmp/pki. Returns the directory."""
        c = self.path("pki")
        os.makedirs(os.path.join(c, "newcerts"))
        open(os.path.join(c, "index.txt"), "w").close()
        for f in ("serial", "crlnumber"):
            with open(os.path.join(c, f), "w") as fh:
                fh.write("01\n")
        base = ("[ca]\ndefault_ca = ofc\n[ofc]\ndatabase = {c}/index.txt\nserial = {c}/serial\n"
                "crlnumber = {c}/crlnumber\nnew_certs_dir = {c}/newcerts\n"
                "certificate = {c}/{ca}.pem\nprivate_key = {c}/{ca}.key\ndefault_md = sha256\n"
                "default_days = 30\ndefault_crl_days = 30\npolicy = any\nunique_subject = no\n"
                "[any]\ncommonName = supplied\n"
                "[client]\nbasicConstraints = critical,CA:FALSE\n"
                "keyUsage = critical,digitalSignature\nextendedKeyUsage = clientAuth\n"
                "[server]\nbasicConstraints = critical,CA:FALSE\n"
                "keyUsage = critical,digitalSignature\nextendedKeyUsage = serverAuth\n"
                "subjectAltName = IP:127.0.0.1\n")

        def run(*args):
            subprocess.run(["openssl"] + list(args), cwd=c, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def newkey(*args):
            run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", *args)

        for ca, cn in (("ca", "attack-ca"), ("other", "other-ca"), ("forger", "attack-ca")):
            with open(os.path.join(c, ca + ".cnf"), "w") as fh:
                fh.write(base.format(c=c, ca=ca))
            newkey("-x509", "-days", "30", "-keyout", ca + ".key", "-out", ca + ".pem",
                   "-subj", "/CN=" + cn, "-addext", "basicConstraints=critical,CA:TRUE",
                   "-addext", "keyUsage=critical,keyCertSign,cRLSign")

        def cert(name, ext, ca="ca", *extra):
            newkey("-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name)
            run("ca", "-batch", "-config", ca + ".cnf", "-extensions", ext, "-in",
                name + ".csr", "-out", name + ".pem", "-notext", *extra)

        for n in ("admin", "revoked"):
            cert(n, "client")
        cert("server", "server")
        cert("srvauth", "server")
        cert("expired", "client", "ca", "-startdate", "20200101000000Z", "-enddate",
             "20200201000000Z")
        cert("intruder", "client", "other")
        run("ca", "-batch", "-config", "ca.cnf", "-revoke", "revoked.pem")
        run("ca", "-batch", "-config", "ca.cnf", "-gencrl", "-out", "crl.pem")
        run("ca", "-batch", "-config", "ca.cnf", "-gencrl", "-crl_lastupdate",
            "20250101000000Z", "-crl_nextupdate", "20250201000000Z", "-out", "stale.crl")
        run("ca", "-batch", "-config", "ca.cnf", "-gencrl", "-crl_lastupdate",
            "20990101000000Z", "-crl_nextupdate", "20990201000000Z", "-out", "future.crl")
        run("ca", "-batch", "-config", "other.cnf", "-gencrl", "-out", "foreign.crl")
        run("ca", "-batch", "-config", "forger.cnf", "-gencrl", "-out", "forged.crl")
        good = open(os.path.join(c, "crl.pem")).read()
        for name, text in (("garbage.crl", "not a CRL " + SECRET + "\n"), ("empty.crl", ""),
                           ("truncated.crl", good[:len(good) // 2]),
                           ("two.crl", good + open(os.path.join(c, "stale.crl")).read())):
            with open(os.path.join(c, name), "w") as fh:
                fh.write(text)
        os.symlink(self.path("root", "shadow"), os.path.join(c, "shadow.crl"))
        os.mkfifo(os.path.join(c, "fifo.crl"))
        with open(self.path("gw.policy"), "w") as fh:
            fh.write("cn:admin admin\ncn:revoked admin\ncn:expired admin\ncn:srvauth admin\n")
        return c

    def gateway_trust(self):
        """A remote client's certificate and an operator's CRL file against
        ofc-gateway: CRLs that would switch revocation off (stale, another
        CA's, forged under the CA's name, none, bytes that are no CRL, a
        secret file through a symlink) refused at the start (exit 2, naming
        the file) and on SIGHUP (the old trust kept: the revoked admin still
        refused); certificates refused in the handshake with the reason in
        the log (a server's, revoked, expired, another CA's), and every one
        once the CRL in effect goes stale."""
        gw = os.path.join(self.build, "ofc-gateway")
        c = self.pki()
        opts = [gw, "--listen", "127.0.0.1:0", "--cert", os.path.join(c, "server.pem"),
                "--key", os.path.join(c, "server.key"), "--ca", os.path.join(c, "ca.pem"),
                "--policy", self.path("gw.policy"), "--ofcd-socket", self.path("gw.sock")]
        cases = []
        for f, frag in (("stale.crl", "stale: its nextUpdate"),
                        ("foreign.crl", "not signed by the configured CA"),
                        ("forged.crl", "its signature does not verify"),
                        ("future.crl", "issued in the future"),
                        ("two.crl", "its CRL 2 of 2: stale"),
                        ("garbage.crl", "no CRL in it"), ("empty.crl", "no CRL in it"),
                        ("truncated.crl", "a CRL that does not parse"),
                        ("admin.pem", "no CRL in it"), ("shadow.crl", "no CRL in it"),
                        ("fifo.crl", "is not a regular file"), ("newcerts", "is a directory")):
            path = os.path.join(c, f)
            cases.append((["timeout", "10"] + opts + ["--crl", path], 2, path + ": " + frag))
        self.category("a machine on the network and the gateway's operator: CRLs at "
                      "ofc-gateway's start", cases)
        crl = self.path("crl.pem")
        shutil.copy(os.path.join(c, "crl.pem"), crl)
        log = self.path("gw.log")
        port = self.path("gw.port")
        if os.path.exists(port):  # (attack_gateway's gateway left its port there)
            os.unlink(port)
        p = subprocess.Popen(opts + ["--crl", crl, "--port-file", port],
                             stderr=open(log, "w"))
        fails, n = [], 0
        try:
            for _ in range(500):
                if os.path.exists(port) and os.path.getsize(port):
                    break
                time.sleep(0.02)
            url = "https://127.0.0.1:%s/v1/state" % open(port).read().strip()

            def refused(who, frag):
                """None when who's certificate is refused and the log says frag."""
                before = open(log, errors="replace").read().count(frag)
                args = ["curl", "-sS", "-o", "/dev/null", "--max-time", "10", "--cacert",
                        os.path.join(c, "ca.pem"), url]
                if who:
                    args += ["--cert", os.path.join(c, who + ".pem"), "--key",
                             os.path.join(c, who + ".key")]
                if subprocess.run(args, capture_output=True).returncode == 0:
                    return "served"
                for _ in range(100):
                    if open(log, errors="replace").read().count(frag) > before:
                        return None
                    time.sleep(0.05)
                return "the log does not say '%s'" % frag

            for who, frag in (("srvauth", "CN=srvauth: not for client authentication"),
                              ("revoked", "CN=revoked: revoked"), ("expired", "CN=expired: expired"),
                              ("intruder", "CN=intruder: not signed by the configured CA"),
                              (None, "no verified client certificate")):
                n += 1
                why = refused(who, frag)
                if why:
                    fails.append(("handshake as %s" % who, why))
            for f, frag in (("stale.crl", "stale"), ("foreign.crl", "not signed"),
                            ("forged.crl", "signature"), ("garbage.crl", "no CRL in it")):
                n += 1
                shutil.copy(os.path.join(c, f), crl)
                want = "reload refused, the old CA, CRL and policy stay: %s: " % crl
                before = open(log, errors="replace").read().count(want)
                p.send_signal(signal.SIGHUP)
                for _ in range(100):
                    if open(log, errors="replace").read().count(want) > before:
                        break
                    time.sleep(0.05)
                else:
                    fails.append(("SIGHUP with " + f, "no refusal logged"))
                    continue
                why = refused("revoked", "CN=revoked: revoked")
                if why:
                    fails.append(("SIGHUP with " + f + ", then the revoked admin", why))
            # A CRL that goes stale while the gateway runs: 3 s from now.
            n += 1
            subprocess.run(["openssl", "ca", "-batch", "-config", "ca.cnf", "-gencrl",
                            "-crlsec", "3", "-out", crl], cwd=c, check=True,
                           capture_output=True)
            p.send_signal(signal.SIGHUP)
            time.sleep(4.5)
            why = refused("admin", "is stale (its nextUpdate")
            if why:
                fails.append(("a CRL gone stale, then the admin", why))
        finally:
            p.terminate()
            p.wait(10)
        text = open(log, errors="replace").read()
        if SECRET in text:
            fails.append((log, "a secret in the gateway's log"))
        self.rows.append(("a machine on the network and the gateway's operator: client "
                          "certificates in the handshake, CRLs on SIGHUP and gone stale",
                          n, n - len([f for f in fails if f[0] != log]), fails))

    def run(self):
        self.setup()
        self.start_ofcd()
        self.category("read-only socket, any local user: topologies naming files "
                      "(no --topology-dir)", self.readonly_specs(False), daemon=True)
        self.category("admin group: ApplyConfig and Reconfigure naming files, "
                      "credentials, addresses", self.admin_configs(), daemon=True)
        self.nul_names()
        if self.start_ofcd("--topology-dir", self.path("topo")):
            self.category("read-only socket, any local user: names under --topology-dir",
                          self.readonly_specs(True), daemon=True)
        attack_gateway.run(self)
        self.stop_ofcd()
        self.category("config author: ofc validate on hostile YAML, server fabrics and "
                      "failures", self.configs())
        self.disk_category("the disk: damaged state files (.rewired, .failed, record, "
                           "journal; FIFOs, directories)", self.state_files())
        self.record_ports()
        self.leader_sockets()
        self.rows.append(tls_downgrades(self.build, self.tmp, self.path("good.yaml"),
                                        self.path("creds")))
        self.gateway_trust()
        attack_etcd.etcd_forgeries(self)  # (bench/attack_etcd.py: etcd and two replicas)

    def report(self):
        print("| who, what | inputs | rejected correctly |")
        print("|---|---:|---:|")
        tried = good = bad = 0
        for name, n, ok, fails in self.rows:
            print("| %s | %d | %d |" % (name, n, ok))
            tried += n
            good += ok
            bad += len(fails)
        print("| **all** | **%d** | **%d** |" % (tried, good))
        for name, _, _, fails in self.rows:
            for what, why in fails:
                print("NOT REJECTED CORRECTLY (%s): %s: %s" % (name, what, why))
        return bad == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("attack.py: needs root (inputs run as other users)")
        return 0
    att = Attack(a.build)
    try:
        att.run()
        ok = att.report()
    finally:
        att.stop_ofcd()
        for p in att.fakes:
            p.kill()
        shutil.rmtree(att.tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
