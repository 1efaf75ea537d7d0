"""ofc_client: talk to ofcd, the ofc controller daemon, from Python.

ofcd answers the control API of proto/control.proto (package ofc.v1) on a
Unix socket. Every frame, either way, is a 4-byte big-endian length and one
protobuf message: a Request in, a Response out (a Watch gets one Response
acknowledging it, then one per event). The generated message classes are in
ofc_client.pb (control_pb2, fabric_pb2, schedule_pb2, topology_pb2, ...),
built from proto/ by `make`; nothing here is generated.

    from ofc_client import Client, OfcError

    with Client("/run/ofc/ofcd.sock", timeout=30) as ofc:
        state = ofc.get_state()                     # ofc_client.pb.control_pb2.State
        print(state.fabric_name, state.topology.spec, state.at_target)
        done = ofc.reconfigure(topology="torus:8x8")  # one transaction, committed
        print(done.message)                         # "committed transaction 4: ..."
        sched = ofc.get_schedule("allreduce", summary_only=True)
        print(sched.algorithm, sched.num_steps, sched.time_us)
        for event in ofc.watch(idle_timeout=5):     # ends after 5 s without events
            print(event.kind, event.message)

A request the daemon refuses or that fails raises OfcError (its .status is
the ofc.v1.Status name, .response the whole Response, .config_error the
FILE:LINE:COL of a bad config). A daemon that does not answer within the
timeout raises TimeoutError; a broken connection ConnectionError.

Mutations (apply_config, reconfigure, cancel) need the main socket and
root or the daemon's --admin-group; the read-only socket answers reads.

Each call opens its own connection, like `ofc --socket`: a Client is cheap,
holds no connection between calls and may be shared by threads.

From another machine (issue 36), the same calls go through ofc-gateway
over HTTPS with a client certificate (the standard library's ssl and
http.client; POST /v1/call carries the Request and answers ofcd's frames):

    ofc = Client(server="https://ofc.lab:8443", cert="me.pem", key="me.key",
                 cacert="ca.pem")
"""

import http.client
import itertools
import json
import os
import ssl
import urllib.parse
import socket
import struct
import sys
import time

try:
    from .pb import control_pb2
except ImportError as _e:
    # The generated classes need Google's protobuf runtime. Debian ships it
    # for its own python3 only; a python3 of pyenv, conda or a plain venv
    # does not see it and failed with "No module named 'google'".
    if not ((_e.name or "").startswith("google") or "google.protobuf" in str(_e)):
        raise
    raise ImportError(
        f"ofc_client needs the protobuf runtime (google.protobuf), which {sys.executable} "
        f"cannot import ({_e}): it is Debian's package python3-protobuf "
        "(apt-get install python3-protobuf; scripts/install-deps.sh installs it), "
        "for Debian's /usr/bin/python3. Run the client with /usr/bin/python3, or from "
        "a virtualenv made with --system-site-packages", name=_e.name) from _e

__all__ = ["Client", "OfcError", "control_pb2", "MAX_FRAME"]

#: The daemon's default frame limit (--max-frame); answers above it are refused.
MAX_FRAME = 16 << 20

_ids = itertools.count(1)


class OfcError(Exception):
    """The daemon answered with a status other than STATUS_OK."""

    def __init__(self, response):
        self.response = response
        self.status = control_pb2.Status.Name(response.status)
        self.config_error = (response.config_error
                             if response.WhichOneof("body") == "config_error" else None)
        msg = response.message or self.status
        if self.config_error is not None and self.config_error.HasField("line"):
            ce = self.config_error
            msg = f"{ce.file}:{ce.line}:{ce.column}: {ce.message}"
        super().__init__(msg)


class _Conn:
    """One connection: frames out and in, each within the deadline."""

    def __init__(self, path, timeout, max_frame):
        self.timeout = timeout
        self.max_frame = max_frame
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(timeout)
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            if isinstance(e, socket.timeout):
                raise TimeoutError(f"ofcd at {path} did not accept within {timeout} s") from e
            raise ConnectionError(f"cannot connect to ofcd at {path}: {e.strerror or e}") from e
        self.path = path

    def close(self):
        self.sock.close()

    def _recv_exact(self, n, deadline):
        buf = bytearray()
        while len(buf) < n:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"ofcd at {self.path} did not answer within {self.timeout} s")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout as e:
                raise TimeoutError(
                    f"ofcd at {self.path} did not answer within {self.timeout} s") from e
            if not chunk:
                raise ConnectionError(f"ofcd at {self.path} closed the connection")
            buf += chunk
        return bytes(buf)

    def send(self, request):
        data = request.SerializeToString()
        self.sock.settimeout(self.timeout)
        try:
            self.sock.sendall(struct.pack(">I", len(data)) + data)
        except socket.timeout as e:
            raise TimeoutError(f"ofcd at {self.path} did not take the request") from e

    def recv(self, timeout="default"):
        t = self.timeout if timeout == "default" else timeout
        deadline = None if t is None else time.monotonic() + t
        (n,) = struct.unpack(">I", self._recv_exact(4, deadline))
        if n > self.max_frame:
            raise ConnectionError(f"ofcd sent a frame of {n} bytes (limit {self.max_frame})")
        resp = control_pb2.Response()
        resp.ParseFromString(self._recv_exact(n, deadline))
        return resp


class _HttpsConn:
    """One request through ofc-gateway: POST /v1/call with the Request,
    the answer's body is ofcd's frames (empty ones keep a quiet Watch's
    connection alive and are skipped). The gateway's own refusals (its
    policy, a bad request) come as one Response in JSON."""

    def __init__(self, url, ctx, timeout, max_frame):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "https" or not u.hostname:
            raise ValueError(f"server {url!r}: expected https://HOST:PORT")
        self.path = url
        self.timeout = timeout
        self.max_frame = max_frame
        self.http = http.client.HTTPSConnection(u.hostname, u.port or 443, context=ctx,
                                                timeout=timeout)
        self.resp = None
        self.refusal = None

    def close(self):
        self.http.close()

    def send(self, request):
        data = request.SerializeToString()
        try:
            self.http.request("POST", "/v1/call", body=data,
                              headers={"Content-Type": "application/x-protobuf",
                                       "Accept": "application/x-ofc-frames"})
            self.resp = self.http.getresponse()
        except (ssl.SSLError, OSError) as e:
            if isinstance(e, (socket.timeout, TimeoutError)):
                raise TimeoutError(f"{self.path} did not answer within {self.timeout} s") from e
            raise ConnectionError(f"{self.path}: {e} (a refused client certificate ends "
                                  "the handshake; the gateway's log says why)") from e
        if self.resp.getheader("Content-Type", "") != "application/x-ofc-frames":
            body = self.resp.read(1 << 16)
            r = control_pb2.Response(id=request.id, status=control_pb2.STATUS_UNAVAILABLE,
                                     message=f"{self.path} answered HTTP {self.resp.status}")
            try:
                j = json.loads(body)
                r.status = control_pb2.Status.Value(j.get("status", "STATUS_UNAVAILABLE"))
                r.message = f"{self.path}: {j.get('message', '')}"
            except (ValueError, AttributeError):
                pass
            self.refusal = r

    def _read(self, n, timeout):
        if self.http.sock is not None:
            self.http.sock.settimeout(timeout)
        try:
            b = self.resp.read(n)
        except (socket.timeout, TimeoutError) as e:
            raise TimeoutError(f"{self.path} sent nothing within {timeout} s") from e
        if len(b) < n:
            raise ConnectionError(f"{self.path} closed the answer")
        return b

    def recv(self, timeout="default"):
        if self.refusal is not None:
            r, self.refusal = self.refusal, None
            return r
        t = self.timeout if timeout == "default" else timeout
        while True:
            (n,) = struct.unpack(">I", self._read(4, t))
            if n == 0:
                continue
            if n > self.max_frame:
                raise ConnectionError(f"{self.path} sent a frame of {n} bytes "
                                      f"(limit {self.max_frame})")
            resp = control_pb2.Response()
            resp.ParseFromString(self._read(n, t))
            return resp


class Client:
    """A client of one ofcd socket, or of ofc-gateway at server (an
    https:// URL, with the client certificate cert and key and the CA
    cacert, read by the standard library's ssl). timeout: seconds for each
    request (None: wait for ever); max_frame: the largest answer accepted."""

    def __init__(self, path=None, timeout=30.0, max_frame=MAX_FRAME, server=None,
                 cert=None, key=None, cacert=None):
        self.path = path or os.environ.get("OFC_SOCKET") or "/run/ofc/ofcd.sock"
        self.timeout = timeout
        self.max_frame = max_frame
        self.server = server
        self.ctx = None
        if server:
            self.ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cacert)
            self.ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            if cert:
                self.ctx.load_cert_chain(cert, key)

    def _conn(self):
        if self.server:
            return _HttpsConn(self.server, self.ctx, self.timeout, self.max_frame)
        return _Conn(self.path, self.timeout, self.max_frame)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    # ---- the protocol ---------------------------------------------------

    def call(self, request, check=True):
        """Send one ofc.v1.Request, return its ofc.v1.Response (raises
        OfcError on a status other than OK when check is true)."""
        if not request.HasField("id"):
            request.id = next(_ids)
        resp = self._call_once(self._conn(), request)
        # Issue 37: a replica that does not lead names the leader; asked
        # once more there: at its socket, or through a gateway at the URL
        # of the leader's gateway (the one this client trusts by cacert).
        if resp.status == control_pb2.STATUS_NOT_LEADER and resp.HasField("leader"):
            lead = resp.leader
            if (self.server and lead.url.startswith("https://")
                    and lead.url != self.server):
                resp = self._call_once(
                    _HttpsConn(lead.url, self.ctx, self.timeout, self.max_frame), request)
            elif not self.server and lead.socket and lead.socket != self.path:
                resp = self._call_once(_Conn(lead.socket, self.timeout, self.max_frame),
                                       request)
        if check and resp.status != control_pb2.STATUS_OK:
            raise OfcError(resp)
        return resp

    def _call_once(self, conn, request):
        try:
            conn.send(request)
            resp = conn.recv()
            # A stream (GetSchedule.stream): the pieces, merged; a frame
            # with continues_step adds to the previous frame's step.
            while resp.more:
                part = conn.recv()
                if part.WhichOneof("body") == "schedule" and len(part.schedule.steps) == 1:
                    if part.continues_step:
                        resp.schedule.steps[-1].transfers.extend(part.schedule.steps[0].transfers)
                    else:
                        resp.schedule.steps.append(part.schedule.steps[0])
                elif not part.more:
                    resp.more = False
                    if part.status != control_pb2.STATUS_OK:
                        resp.status, resp.message = part.status, part.message
        finally:
            conn.close()
        return resp

    # ---- reads ----------------------------------------------------------

    def get_state(self, with_fabric=False, with_edges=False):
        """The last committed state: devices, topology, schedule, the
        transaction running and the queue (ofc.v1.State)."""
        req = control_pb2.Request()
        req.get_state.with_fabric = with_fabric
        req.get_state.with_edges = with_edges
        return self.call(req).state

    def get_schedule(self, collective, algorithm=None, size_bytes=None, topology=None,
                     summary_only=False, chunks=None, partition=None, lowering=None,
                     stream=False):
        """A verified, priced schedule (ofc.v1.Schedule) on the committed
        topology, on `topology` (a what-if spec), or on the config's
        `partition` (its topology, sized by its collectives). `lowering`:
        the all-to-all MCF's, "steps" (the default), "paths" (the
        workload's: ofcd answers it from the MCF solution it keeps, and is
        BUSY while it computes it) or "single"."""
        req = control_pb2.Request()
        gs = req.get_schedule
        gs.collective = collective
        if algorithm:
            gs.algorithm = algorithm
        if size_bytes:
            gs.size_bytes = size_bytes
        if topology:
            gs.topology = topology
        if summary_only:
            gs.summary_only = True
        if chunks:
            gs.chunks = chunks
        if partition:
            gs.partition = partition
        if lowering:
            gs.lowering = lowering
        if stream:
            gs.stream = True  # any size: ofcd sends it step by step (issue 36)
        return self.call(req).schedule

    def watch(self, idle_timeout=None, count=None):
        """Yield ofc.v1.Event as they happen. Ends after `count` events, or
        when none came for `idle_timeout` seconds (None: never)."""
        req = control_pb2.Request(id=next(_ids))
        req.watch.SetInParent()
        conn = self._conn()
        try:
            conn.send(req)
            ack = conn.recv()
            if ack.status != control_pb2.STATUS_OK:
                raise OfcError(ack)
            seen = 0
            while count is None or seen < count:
                try:
                    resp = conn.recv(timeout=idle_timeout)
                except TimeoutError:
                    if idle_timeout is None:
                        raise
                    return
                if resp.WhichOneof("body") == "event":
                    seen += 1
                    yield resp.event
        finally:
            conn.close()

    # ---- mutations ------------------------------------------------------

    def apply_config(self, yaml_text, filename=None, dry_run=False):
        """Validate the YAML and drive the devices to its target as one
        transaction. Relative paths in it (credentials) resolve from the
        directory of filename (made absolute here), else from the running
        config's. Returns the Response (message, transaction info)."""
        req = control_pb2.Request()
        req.apply_config.yaml = yaml_text
        if filename:
            req.apply_config.filename = os.path.abspath(filename)
        if dry_run:
            req.apply_config.dry_run = True
        return self.call(req)

    def reconfigure(self, topology=None, collective=None, size_bytes=None, nodes=None,
                    dry_run=False, partition=None):
        """Rewire to a topology spec, to the finder's pick for a workload
        (collective and size_bytes), or one partition of the config to its
        own topology. Returns the Response."""
        req = control_pb2.Request()
        rq = req.reconfigure
        if topology and collective:
            raise ValueError("give a topology or a workload, not both")
        if partition and (topology or collective):
            raise ValueError("a partition goes to its own topology: no topology or workload")
        if partition:
            rq.partition = partition
        elif topology:
            rq.topology = topology
        elif collective and size_bytes:
            rq.workload.collective = collective
            rq.workload.size_bytes = size_bytes
            if nodes:
                rq.workload.nodes = nodes
        else:
            raise ValueError("give topology=SPEC, collective= and size_bytes=, or partition=")
        if dry_run:
            rq.dry_run = True
        return self.call(req)

    def report_failure(self, items=(), restore=False, clear=False, check=True):
        """Tell ofcd that links ("U-V", host names), ports ("HOST:PORT") or
        whole hosts ("HOST") failed, or with restore=True that they work again (clear=True: every
        reported one). ofcd re-plans the schedule on the surviving graph and
        announces it (Event KIND_SCHEDULE_REPLANNED). Returns the Response;
        its status is FAILED when no schedule survives (raised when check)."""
        req = control_pb2.Request()
        rf = req.report_failure
        rf.items.extend(items)
        if restore:
            rf.restore = True
        if clear:
            rf.clear = True
        return self.call(req, check=check)

    def get_plan(self):
        """The running config's workload planned (issue 41; `ofc plan FILE
        --workload config`): a Plan, every way phase by phase, the choice
        and why."""
        req = control_pb2.Request()
        req.get_plan.SetInParent()
        return self.call(req).plan

    def move_to_phase(self, phase=None, name=None, dry_run=False):
        """Take the fabric to the topology the plan's chosen way gives a
        phase (its index, or its name); answered when the circuits are
        committed. Returns the Response."""
        req = control_pb2.Request()
        m = req.move_to_phase
        if (phase is None) == (name is None):
            raise ValueError("give phase=INDEX or name=NAME")
        if name is not None:
            m.name = name
        else:
            m.phase = phase
        if dry_run:
            m.dry_run = True
        return self.call(req)

    def cancel(self, ticket):
        """Cancel a queued mutation by its ticket (a running one never is)."""
        req = control_pb2.Request()
        req.cancel.ticket = ticket
        return self.call(req)
