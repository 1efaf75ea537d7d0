"""How ofc_client reaches one ofcd: its Unix socket (_Conn), or ofc-gateway
over HTTPS (_HttpsConn: POST /v1/call carries the Request and answers
ofcd's frames). Each raises Unreachable when the address took no request or
gave no answer, so that the Client asks the next replica; any other error
(a certificate the gateway's CA did not sign, a refused client certificate)
is the caller's to fix and ends the call."""

import http.client
import json
import socket
import ssl
import struct
import time
import urllib.parse

from .pb import control_pb2

#: Seconds to connect to one address (through a gateway, the TLS handshake
#: too): a replica that takes no connection by then is passed over for the
#: next, rather than spending the whole call on it.
CONNECT_TIMEOUT = 3.0


class Unreachable(ConnectionError):
    """This address took no request or gave no answer: refused, closed, no
    connection within CONNECT_TIMEOUT, or a gateway whose ofcd does not
    answer. A ConnectionError, as the single-socket client raised. again:
    whether asking it again in the same call may help (a gateway that
    closes a TLS connection without a word refused the certificate, most
    likely, and would again)."""

    def __init__(self, address, why, again=True):
        self.address = address
        self.why = why
        self.again = again
        super().__init__(f"{address}: {why}")


def is_url(address):
    return address.startswith(("https://", "http://"))


def _left(deadline):
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _within(t):
    return f"within {t:g} s" if t is not None else "before the call's deadline"


def _connect_timeout(timeout, deadline):
    ts = [t for t in (timeout, CONNECT_TIMEOUT, _left(deadline)) if t is not None]
    return max(0.001, min(ts))


class _Conn:
    """One connection to ofcd's socket: frames out and in, each within the
    timeout, and within the call's deadline (time.monotonic()) if any."""

    def __init__(self, path, timeout, max_frame, deadline=None):
        self.path = path
        self.timeout = timeout
        self.max_frame = max_frame
        self.deadline = deadline
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(_connect_timeout(timeout, deadline))
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            if isinstance(e, socket.timeout):
                raise Unreachable(path, "took no connection within "
                                  f"{_connect_timeout(timeout, deadline):g} s") from e
            raise Unreachable(path, f"cannot connect ({e.strerror or e})") from e

    def close(self):
        self.sock.close()

    def peer_uid(self):
        """The uid of the process behind the socket (SO_PEERCRED), or None."""
        try:
            cred = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                        struct.calcsize("3i"))
        except OSError:
            return None
        return struct.unpack("3i", cred)[1]

    def _recv_exact(self, n, deadline, t):
        buf = bytearray()
        while len(buf) < n:
            left = _left(deadline)
            if left is not None and left <= 0:
                raise TimeoutError(f"ofcd at {self.path} did not answer {_within(t)}")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout as e:
                raise TimeoutError(f"ofcd at {self.path} did not answer {_within(t)}") from e
            except OSError as e:
                raise Unreachable(self.path, f"broke the connection ({e.strerror or e})") from e
            if not chunk:
                raise Unreachable(self.path, "closed the connection before it answered")
            buf += chunk
        return bytes(buf)

    def send(self, request):
        data = request.SerializeToString()
        t = _left(self.deadline) if self.deadline else self.timeout
        if t is not None and t <= 0:
            # (a timeout of 0 would make the socket non-blocking: a full
            # buffer would then read as a broken connection, not a timeout)
            raise TimeoutError(f"ofcd at {self.path}: not asked: the call's deadline "
                               "passed before the request")
        self.sock.settimeout(t)
        try:
            self.sock.sendall(struct.pack(">I", len(data)) + data)
        except socket.timeout as e:
            raise TimeoutError(f"ofcd at {self.path} did not take the request") from e
        except OSError as e:
            raise Unreachable(self.path, f"did not take the request ({e.strerror or e})") from e

    def recv(self, timeout="default"):
        t = self.timeout if timeout == "default" else timeout
        deadline = None if t is None else time.monotonic() + t
        if self.deadline is not None and (deadline is None or self.deadline < deadline):
            deadline = self.deadline
        (n,) = struct.unpack(">I", self._recv_exact(4, deadline, t))
        if n > self.max_frame:
            raise ConnectionError(f"ofcd sent a frame of {n} bytes (limit {self.max_frame})")
        resp = control_pb2.Response()
        resp.ParseFromString(self._recv_exact(n, deadline, t))
        return resp


def tls_context(cert, key, cacert, names):
    """The client's TLS context for ofc-gateway: TLS 1.2 at least, the
    gateway's certificate checked against cacert (else the system's CAs),
    this client's certificate. names: how errors name the options (the
    library's keyword arguments, or the command line's options). Raises
    ValueError, before any connection, for what is missing or unreadable."""
    if not cert:
        raise ValueError(f"a gateway asks for a client certificate: give {names['cert']} "
                         f"(and {names['key']} unless the key is in the same file)")
    for opt, path in (("cert", cert), ("key", key), ("cacert", cacert)):
        if path:
            try:
                with open(path, "rb"):
                    pass
            except OSError as e:
                raise ValueError(f"{names[opt]} {path}: {e.strerror}") from e
    try:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cacert)
    except ssl.SSLError as e:
        raise ValueError(f"{names['cacert']} {cacert}: no CA certificate in it "
                         f"({e.reason or e})") from e
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(cert, key)
    except ssl.SSLError as e:
        raise ValueError(f"{names['cert']} {cert}" + (f" with {names['key']} {key}" if key else "")
                         + f": not a certificate and its key ({e.reason or e})") from e
    return ctx


class _HttpsConn:
    """One request through ofc-gateway: POST /v1/call with the Request;
    the answer's body is ofcd's frames (empty ones keep a quiet Watch's
    connection alive and are skipped). The gateway's own refusals (its
    policy, a bad request) come as one Response in JSON; its 502/503/504
    (its ofcd does not answer) make the address unreachable."""

    def __init__(self, url, ctx, timeout, max_frame, deadline=None, names=None):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "https" or not u.hostname:
            raise ValueError(f"server {url!r}: expected https://HOST:PORT")
        self.path = url
        self.timeout = timeout
        self.max_frame = max_frame
        self.deadline = deadline
        self.names = names or {"cacert": "cacert=", "cert": "cert="}
        self.resp = None
        self.refusal = None
        ct = _connect_timeout(timeout, deadline)
        self.http = http.client.HTTPSConnection(u.hostname, u.port or 443, context=ctx,
                                                timeout=ct)
        try:
            self.http.connect()  # TCP and the TLS handshake, within ct
        except BaseException as e:
            self.http.close()
            self._raise(e, f"took no connection within {ct:g} s", "connect")

    def close(self):
        self.http.close()

    # A gateway that refuses the client's certificate ends the connection
    # without a word: under TLS 1.3 the client has finished its handshake by
    # then and sees the connection closed at its first read, as it would if
    # the gateway died; the refusal is far the likelier.
    _CLOSED = (http.client.RemoteDisconnected, ssl.SSLEOFError, ssl.SSLZeroReturnError,
               ConnectionResetError, BrokenPipeError)

    def _raise(self, e, timed_out, phase):
        """An exception of the connection as what the Client does with it.
        phase: connect (TCP and the handshake), request (until the answer's
        header), answer (its body)."""
        if isinstance(e, ssl.SSLCertVerificationError):
            why = e.verify_message or str(e)
            if e.verify_code in (62, 64):  # X509_V_ERR_HOSTNAME_MISMATCH, _IP_ADDRESS_
                raise ConnectionError(f"{self.path}: the gateway's certificate does not name "
                                      f"this host ({why})") from e
            raise ConnectionError(f"{self.path}: the gateway's certificate is not signed by a "
                                  f"CA you gave ({self.names['cacert']}): {why}") from e
        if isinstance(e, self._CLOSED) and phase == "answer":
            raise Unreachable(self.path, "broke off its answer") from e
        if isinstance(e, self._CLOSED) and (phase == "request" or isinstance(e, ssl.SSLError)):
            raise Unreachable(self.path, "closed the connection without an answer (a refused "
                              "client certificate ends the TLS handshake; the gateway's log "
                              "says why)", again=False) from e
        if isinstance(e, ssl.SSLError):
            raise ConnectionError(f"{self.path}: {e.reason or e} (a refused client certificate "
                                  "ends the TLS handshake; the gateway's log says why)") from e
        if isinstance(e, (socket.timeout, TimeoutError)):
            if timed_out is None:
                raise TimeoutError(f"{self.path} did not answer {_within(self.timeout)}") from e
            raise Unreachable(self.path, timed_out) from e
        if isinstance(e, http.client.HTTPException):
            raise Unreachable(self.path, f"broke off its answer ({type(e).__name__})") from e
        if isinstance(e, OSError):
            raise Unreachable(self.path, f"cannot connect ({e.strerror or e})") from e
        raise e

    def send(self, request):
        data = request.SerializeToString()
        if self.http.sock is not None:
            t = _left(self.deadline) if self.deadline else self.timeout
            if t is not None and t <= 0:
                # (a timeout of 0 would make the TLS socket non-blocking: its
                # read then raises SSLWantReadError, not a timeout)
                raise TimeoutError(f"{self.path}: not asked: the call's deadline passed "
                                   "before the request")
            self.http.sock.settimeout(t)
        try:
            self.http.request("POST", "/v1/call", body=data,
                              headers={"Content-Type": "application/x-protobuf",
                                       "Accept": "application/x-ofc-frames"})
            self.resp = self.http.getresponse()
        except BaseException as e:
            self._raise(e, None, "request")
        if self.resp.getheader("Content-Type", "") == "application/x-ofc-frames":
            return
        try:
            body = self.resp.read(1 << 16)
        except BaseException as e:
            self._raise(e, None, "answer")
        message = ""
        r = control_pb2.Response(id=request.id, status=control_pb2.STATUS_UNAVAILABLE)
        try:
            j = json.loads(body)
            r.status = control_pb2.Status.Value(j.get("status", "STATUS_UNAVAILABLE"))
            message = j.get("message", "")
        except (ValueError, AttributeError):
            pass
        if self.resp.status in (502, 503, 504):
            raise Unreachable(self.path, f"HTTP {self.resp.status}"
                              + (f": {message}" if message else ""))
        r.message = (f"{self.path}: {message}" if message
                     else f"{self.path} answered HTTP {self.resp.status}")
        self.refusal = r

    def _read(self, n, timeout):
        if timeout is not None and timeout <= 0:
            # (not settimeout(0): a non-blocking TLS read raises SSLWantReadError)
            raise TimeoutError(f"{self.path} did not answer before the call's deadline")
        if self.http.sock is not None:
            self.http.sock.settimeout(timeout)
        try:
            b = self.resp.read(n)
        except BaseException as e:
            if isinstance(e, (socket.timeout, TimeoutError)):
                raise TimeoutError(f"{self.path} sent nothing {_within(timeout)}") from e
            self._raise(e, None, "answer")
        if len(b) < n:
            raise Unreachable(self.path, "closed the answer before its end")
        return b

    def recv(self, timeout="default"):
        if self.refusal is not None:
            r, self.refusal = self.refusal, None
            return r
        t = self.timeout if timeout == "default" else timeout
        if self.deadline is not None:
            left = _left(self.deadline)
            t = left if t is None else min(t, left)
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
