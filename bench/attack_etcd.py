"""The attack table's etcd row (bench/attack.py): whoever reaches etcd,
against two ofcd replicas on an etcd that asks for client certificates
(as tests/integration/cluster_env.sh runs it). Without the certificate
(none, another CA's, plain http), a MutationQueue entry of uid 0 and the
leader key's deletion or rebinding must be refused by etcd itself, etcd
unchanged; with the replicas' own certificate, a leader key written over
(bound to the follower's lease, or to the leader's with another value, or
deleted and created again bound to the follower's) must never make two
replicas lead, and a replica must lead again within 20 s.

    etcd_forgeries(att)   appends one row to att.rows (skipped without etcd)
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time

FABRIC = "torus64-ocs"
K = "/ofc/%s/" % FABRIC


def free_ports(n):
    ss = [socket.socket() for _ in range(n)]
    for s in ss:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in ss]
    for s in ss:
        s.close()
    return ports


def pki(d):
    """A CA, etcd's certificate, the replicas' and another CA's client's."""
    os.makedirs(d, 0o700)

    def nk(*a):
        subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes"] + list(a), cwd=d, check=True,
                       capture_output=True)
    for ca in ("ca", "other"):
        nk("-x509", "-days", "2", "-keyout", ca + ".key", "-out", ca + ".pem", "-subj",
           "/CN=ofc-attack-" + ca, "-addext", "basicConstraints=critical,CA:TRUE",
           "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    base = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write(base + "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1\n")
    with open(os.path.join(d, "client.ext"), "w") as f:
        f.write(base + "extendedKeyUsage=clientAuth\n")
    for who, ca, ext in (("server", "ca", "server"), ("client", "ca", "client"),
                         ("intruder", "other", "client")):
        nk("-keyout", who + ".key", "-out", who + ".csr", "-subj", "/CN=" + who)
        subprocess.run(["openssl", "x509", "-req", "-in", who + ".csr", "-CA", ca + ".pem",
                        "-CAkey", ca + ".key", "-CAcreateserial", "-days", "2", "-extfile",
                        ext + ".ext", "-out", who + ".pem"], cwd=d, check=True,
                       capture_output=True)
        os.chmod(os.path.join(d, who + ".key"), 0o600)


class Stage:
    def __init__(self, att):
        self.att, self.procs = att, []
        self.p = att.path("etcd-pki")
        self.c, peer = free_ports(2)
        self.ep = "https://127.0.0.1:%d" % self.c
        pki(self.p)
        self.procs.append(subprocess.Popen(
            ["etcd", "--name", "a1", "--data-dir", att.path("etcd-data"),
             "--listen-client-urls", self.ep, "--advertise-client-urls", self.ep,
             "--client-cert-auth", "--trusted-ca-file", self.f("ca.pem"),
             "--cert-file", self.f("server.pem"), "--key-file", self.f("server.key"),
             "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
             "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer,
             "--initial-cluster", "a1=http://127.0.0.1:%d" % peer],
            stdout=subprocess.DEVNULL, stderr=open(att.path("etcd.log"), "w")))
        self.until(lambda: self.ctl("get", "x").returncode == 0, 20, "etcd did not start")

    def f(self, name):
        return os.path.join(self.p, name)

    def until(self, cond, secs, why):
        end = time.time() + secs
        while time.time() < end:
            if cond():
                return
            time.sleep(0.1)
        raise RuntimeError(why)

    def ctl(self, *a):
        return subprocess.run(["etcdctl", "--endpoints", self.ep, "--cacert", self.f("ca.pem"),
                               "--cert", self.f("client.pem"), "--key", self.f("client.key")]
                              + list(a), capture_output=True, text=True, timeout=10)

    def kv(self, key):
        r = self.ctl("get", key, "-w", "json")
        kvs = json.loads(r.stdout or "{}").get("kvs") or [{}]
        return kvs[0]

    def replica(self, name):
        a = self.att
        self.procs.append(subprocess.Popen(
            [a.ofcd, "--foreground", "--credentials-dir", a.path("creds"),
             "--config", a.path("good.yaml"), "--socket", a.path(name + ".sock"),
             "--state-dir", a.path(name + "-state"), "--probe-interval", "0",
             "--cluster", "etcds://127.0.0.1:%d" % self.c, "--cluster-cacert",
             self.f("ca.pem"), "--cluster-cert", self.f("client.pem"), "--cluster-key",
             self.f("client.key"), "--cluster-name", name, "--cluster-ttl", "2s",
             "--log-file", a.path(name + ".log")], stderr=subprocess.DEVNULL))
        a.logs.append(a.path(name + ".log"))

    def leading(self, name):
        """The epoch NAME says it leads under, else None."""
        r = subprocess.run([self.att.ofc, "--socket", self.att.path(name + ".sock"), "status",
                            "--json", "--timeout", "5"], capture_output=True, text=True)
        try:
            c = json.loads(r.stdout).get("cluster", {})
        except ValueError:
            return None
        return (c.get("leader") or {}).get("epoch", 0) if c.get("role") == "leader" else None

    def two_leaders(self, secs):
        """Each replica's status in turn: one leading before and after the
        other says it leads, under the same epoch, is two at once."""
        seen, end = [], time.time() + secs
        while time.time() < end:
            for n in ("a1", "a2"):
                seen.append((n, self.leading(n)))
        return any(a[1] is not None and b[1] is not None and a[0] == c[0] and a[1] == c[1]
                   for a, b, c in zip(seen, seen[1:], seen[2:]))

    def a_leader(self):
        self.until(lambda: self.leading("a1") is not None or self.leading("a2") is not None, 20,
                   "no replica leads")
        return "a1" if self.leading("a1") is not None else "a2"

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def queue_entry(build, topology):
    sys.path.insert(0, os.path.join(build, "python"))
    from ofc_client.pb import control_pb2 as pb, state_pb2 as st
    req = pb.Request(id=1)
    req.reconfigure.topology = topology
    q = st.MutationQueue(epoch=1)
    q.entries.add(ticket=1, request=req.SerializeToString(), uid=0, gid=0, pid=1,
                  kind="reconfigure", target=topology)
    return q.SerializeToString()


def etcd_forgeries(att):
    name = "whoever reaches etcd: the queue and the leader key without the certificate, " \
           "the leader key written over with it"
    if not (shutil.which("etcd") and shutil.which("etcdctl") and shutil.which("curl")):
        print("attack.py: no etcd, etcdctl or curl: the etcd category is not run")
        return
    st = Stage(att)
    fails, n = [], 0
    try:
        st.replica("a1")
        st.a_leader()
        st.replica("a2")
        st.until(lambda: st.kv(K + "replicas/a2").get("lease"), 10, "a2 did not register")
        b64 = lambda b: base64.b64encode(b).decode()
        put_q = json.dumps({"key": b64((K + "queue").encode()),
                            "value": b64(queue_entry(att.build, "circulant:64:3,8"))})
        del_l = json.dumps({"key": b64((K + "leader").encode())})
        put_l = json.dumps({"key": b64((K + "leader").encode()), "value": b64(b'{"name":"a2"}'),
                            "lease": str(st.kv(K + "replicas/a2")["lease"])})
        ways = [("no certificate", ["--cacert", st.f("ca.pem")], "https"),
                ("another CA's certificate", ["--cacert", st.f("ca.pem"), "--cert",
                                              st.f("intruder.pem"), "--key",
                                              st.f("intruder.key")], "https"),
                ("no TLS", [], "http")]
        for how, opts, scheme in ways:
            for what, path, body in (("queue entry of uid 0", "/v3/kv/put", put_q),
                                     ("leader key deleted", "/v3/kv/deleterange", del_l),
                                     ("leader key bound to a2's lease", "/v3/kv/put", put_l)):
                n += 1
                before = (st.kv(K + "queue"), st.kv(K + "leader"))
                r = subprocess.run(["curl", "-s", "-m", "3"] + opts + [
                    "-X", "POST", "%s://127.0.0.1:%d%s" % (scheme, st.c, path), "-d", body],
                    capture_output=True, text=True)
                if "revision" in r.stdout or (st.kv(K + "queue"), st.kv(K + "leader")) != before:
                    fails.append(("%s, %s" % (how, what), "etcd took it: " + r.stdout[:120]))
        # with the replicas' certificate: the fencing, not etcd, holds
        for what in ("bound to the follower's lease", "bound to the leader's lease, another value",
                     "deleted and created again bound to the follower's lease"):
            n += 1
            lead = st.a_leader()
            other = "a2" if lead == "a1" else "a1"
            lease = st.kv(K + "replicas/" + (lead if "leader's" in what else other))["lease"]
            if what.startswith("deleted"):
                st.ctl("del", K + "leader")
            r = st.ctl("put", K + "leader", '{"name":"%s"}' % other, "--lease=%x" % int(lease))
            if r.returncode != 0:
                fails.append((what, "the put was refused: " + r.stderr[:120]))
            elif st.two_leaders(5):
                fails.append((what, "two replicas lead at once"))
            else:
                try:
                    st.a_leader()
                except RuntimeError:
                    fails.append((what, "no replica leads 20 s after"))
    except (RuntimeError, subprocess.SubprocessError, OSError, KeyError, ValueError,
            ImportError) as e:
        fails.append(("the stage", str(e)))
    finally:
        st.stop()
    n = max(n, len(fails))  # (a stage that did not start fails the row)
    att.rows.append((name, n, n - len(fails), fails))
