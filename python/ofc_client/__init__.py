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
FILE:LINE:COL of a bad config). No answer within the timeout raises
TimeoutError; no address that answers, ConnectionError.

Mutations (apply_config, reconfigure, release_partition, cancel, ...) need
the main socket and root or the daemon's --admin-group; the read-only
socket answers reads.

Each call opens its own connection, like `ofc --socket`: a Client is cheap,
holds no connection between calls and may be shared by threads.

Replicas (ofcd --cluster): give every replica's socket, or every gateway's
URL; a call goes to the replica that answers it (a mutation to the leader,
which a follower names), and during a failover it asks again, the next
address after a short backoff, until one answers or the call's timeout
passes. A replica that cannot confirm with etcd who leads answers
STATUS_NOT_LEADER naming no leader, and the call goes on to the next one.
A mutation carries a request_key (a fresh UUID, or the Request's own) that
every resend keeps, so the leader runs it at most once however often it
is sent, and answers a resend with the recorded outcome:

    ofc = Client(["/run/ofc/r1.sock", "/run/ofc/r2.sock", "/run/ofc/r3.sock"])

From another machine, the same calls go through ofc-gateway over HTTPS with
a client certificate (the standard library's ssl and http.client; POST
/v1/call carries the Request and answers ofcd's frames):

    ofc = Client(server=["https://ofc1.lab:8443", "https://ofc2.lab:8443"],
                 cert="me.pem", key="me.key", cacert="ca.pem")
"""

import itertools
import logging
import os
import sys
import time
import uuid

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

from ._transport import CONNECT_TIMEOUT, Unreachable, _Conn, _HttpsConn, is_url, tls_context
from .hostlist import expand_hostlist

__all__ = ["Client", "OfcError", "control_pb2", "expand_hostlist", "MAX_FRAME",
           "CONNECT_TIMEOUT"]

#: The daemon's default frame limit (--max-frame); answers above it are refused.
MAX_FRAME = 16 << 20

#: The longest pause between two rounds over the addresses (the first is
#: Client's backoff, doubled each round up to this).
MAX_BACKOFF = 0.5

# A mutation whose answer was lost and then given by another replica says
# so here (a warning, on stderr unless the program configures logging).
_log = logging.getLogger("ofc_client")

_ids = itertools.count(1)

# The requests only the leader of replicas runs: a follower answers them
# STATUS_NOT_LEADER and names the leader. Any replica answers the others.
_MUTATIONS = frozenset(("apply_config", "reconfigure", "cancel", "report_failure",
                        "release_partition", "move_to_phase", "adopt",
                        "testbed_run", "testbed_check", "testbed_down", "testbed_up",
                        "testbed_mpirun", "drain", "report_links"))
# ... and a job's report, which only the leader keeps (any number of sends
# of one report keep it once: it replaces its partition's last)
_LEADER_ONLY = _MUTATIONS | {"report_mpi"}

# How errors name the Client's options; `python3 -m ofc_client` passes its
# command line's, so that its errors name what its user typed.
# socket and server, when named, come before each address in an error.
_NAMES = {"socket": None, "server": None, "cert": "cert=", "key": "key=", "cacert": "cacert="}


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


def _listed(value, split):
    """Addresses from an argument or a variable: None, one string (split at
    commas when split), or a list of them."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        value = [os.fspath(value)]
    out = []
    for v in value:
        v = os.fspath(v)
        out += [p.strip() for p in v.split(",")] if split else [v]
    return [a for a in out if a]


def _leader_text(resp):
    """What a NOT_LEADER answer says of the leader, for the error."""
    lead = resp.leader if resp.HasField("leader") else None
    if lead is None or not lead.name:
        return "follows; no replica leads now (an election is under way)"
    where = lead.url or lead.socket
    return f"follows; the leader is {lead.name}" + (f" at {where}" if where else "")


def _said_lost(lost, answered, key):
    """A mutation's answer lost (its replica gone) and then given: one
    warning says where it came from, since it is not where it was sent (as
    `ofc --socket` says on stderr)."""
    if lost == answered:
        _log.warning("ofc_client: %s closed the connection before answering; sent again with "
                     "request_key %s, it answered what the request came to", lost, key)
    else:
        _log.warning("ofc_client: the leader changed: %s closed the connection before "
                     "answering; the answer is from the leader now, %s, asked with the same "
                     "request_key %s (it runs a request once: this is what it came to)",
                     lost, answered, key)


def _stages(msg, max_loss_percent, grace_ms):
    """A staged change's loss budget and grace on msg (ApplyConfig,
    Reconfigure, MoveToPhase), checked as ofcd checks them."""
    if max_loss_percent is not None:
        if not 0 < max_loss_percent < 100:
            raise ValueError("max_loss_percent must be above 0 and below 100, not %r"
                             % (max_loss_percent,))
        msg.max_loss_percent = max_loss_percent
        if grace_ms is not None:
            msg.grace_ms = grace_ms
    elif grace_ms is not None:
        raise ValueError("grace_ms goes with max_loss_percent")


def _verify_wiring(msg, verify_wiring_ms, dry_run, max_loss_percent):
    """verify_wiring_ms on msg (ApplyConfig, Reconfigure), checked as ofcd
    checks it: 1 ms to 10 minutes, not with a dry run or stages."""
    if verify_wiring_ms is None:
        return
    if not 1 <= verify_wiring_ms <= 600000:
        raise ValueError("verify_wiring_ms must be 1 to 600000 (10 minutes), not %r"
                         % (verify_wiring_ms,))
    if dry_run or max_loss_percent is not None:
        raise ValueError("verify_wiring_ms checks a commit: not with %s"
                         % ("dry_run" if dry_run else "max_loss_percent"))
    msg.verify_wiring_ms = verify_wiring_ms


class Client:
    """A client of ofcd: of its socket, of several replicas' sockets, or of
    ofc-gateways (https:// URLs, with the client certificate cert and key
    and the CA cacert, read by the standard library's ssl).

    path: a socket path or a gateway URL, or a list of them; server: a
    gateway URL, a comma-separated list of URLs, or a list (both may be
    given: the addresses are path's, then server's). With neither, the
    comma-separated lists $OFC_SERVER, else $OFC_SOCKET, else
    /run/ofc/ofcd.sock. cert, key, cacert: default $OFC_CERT, $OFC_KEY,
    $OFC_CACERT. timeout: seconds for each call, all its tries and their
    answers (None: wait for ever); backoff: the first pause, in seconds,
    before asking every address again; max_frame: the largest answer
    accepted."""

    def __init__(self, path=None, timeout=30.0, max_frame=MAX_FRAME, server=None,
                 cert=None, key=None, cacert=None, backoff=0.05, _names=None):
        self.names = dict(_NAMES, **(_names or {}))
        addrs = _listed(path, split=False) + _listed(server, split=True)
        if not addrs:
            addrs = (_listed(os.environ.get("OFC_SERVER"), split=True)
                     or _listed(os.environ.get("OFC_SOCKET"), split=True)
                     or ["/run/ofc/ofcd.sock"])
        seen = set()
        self.addresses = tuple(a.rstrip("/") if is_url(a) else a
                               for a in addrs if not (a in seen or seen.add(a)))
        for a in self.addresses:
            if a.startswith("http://"):
                raise ValueError(f"{self._label(a)}: ofc-gateway speaks HTTPS only "
                                 "(https://HOST:PORT)")
        urls = [a for a in self.addresses if is_url(a)]
        # (what the single-address client had: the socket, the URL)
        self.path = next((a for a in self.addresses if not is_url(a)), None)
        self.server = urls[0] if urls else None
        self.timeout = timeout
        self.max_frame = max_frame
        self.backoff = backoff
        self.ctx = None
        if urls:
            self.ctx = tls_context(cert or os.environ.get("OFC_CERT"),
                                   key or os.environ.get("OFC_KEY"),
                                   cacert or os.environ.get("OFC_CACERT"), self.names)
        self._leader = None  # the address that last led: asked first
        self._via = (None, None)  # the given socket that named it, and its peer's uid

    def _connect(self, address, deadline):
        if is_url(address):
            return _HttpsConn(address, self.ctx, self.timeout, self.max_frame, deadline,
                              self.names)
        return _Conn(address, self.timeout, self.max_frame, deadline)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    # ---- finding the replica that answers --------------------------------

    def _ask(self, request, finish):
        """(connection, answer) of the first address that answers request
        as it should be: a follower's NOT_LEADER sends it to the leader it
        names; an address that takes no request or breaks off its answer
        (Unreachable), or a replica that is shutting down, is passed over for
        the next; after every address, a pause (backoff, doubled up to
        MAX_BACKOFF) and again, until the call's deadline. finish(conn,
        first) reads the rest of the answer (a stream's pieces); a break
        there is passed over too. The caller closes the connection."""
        mutation = request.WhichOneof("body") in _LEADER_ONLY
        start = time.monotonic()
        deadline = None if self.timeout is None else start + self.timeout
        tried = {}  # address -> why it did not answer, in the order first asked
        not_leader = None  # the last NOT_LEADER answer
        delay = self.backoff
        todo, asked, hint = self._order(), set(), None
        gone = set()  # addresses not to ask again in this call (Unreachable.again)
        named = {}  # a leader's address -> the replica that named it
        lost = None  # where a mutation went and its answer never came
        while True:
            if hint is not None:
                address, hint = hint, None
            elif todo:
                address = todo.pop(0)
                if address in asked:
                    continue
            else:
                todo = [a for a in self._order() if a not in gone]
                if not todo:
                    raise self._exhausted(tried, not_leader, early=True)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise self._exhausted(tried, not_leader)
                time.sleep(delay if left is None else min(delay, left))
                delay = min(2 * delay, MAX_BACKOFF)
                asked = set()
                continue
            if deadline is not None and tried and time.monotonic() >= deadline:
                raise self._exhausted(tried, not_leader)
            asked.add(address)
            conn = None
            sent = False
            try:
                conn = self._connect(address, deadline)
                if not is_url(address):
                    self._trust(conn, address, named.get(address))
                conn.send(request)
                sent = True
                resp = finish(conn, conn.recv())
            except Unreachable as e:
                if conn is not None:
                    conn.close()
                if mutation and sent and lost is None:
                    lost = address
                tried[address] = e.why
                if not e.again:
                    gone.add(address)
                if self._leader == address:
                    self._leader = None
                continue
            except TimeoutError as e:
                if conn is not None:
                    conn.close()
                raise TimeoutError(self._story(str(e), tried)) from e
            except BaseException:
                if conn is not None:
                    conn.close()
                raise
            if resp.status == control_pb2.STATUS_NOT_LEADER:
                conn.close()
                tried[address] = _leader_text(resp)
                not_leader = resp
                lead = resp.leader
                to = (lead.url.rstrip("/") if is_url(address) else lead.socket) \
                    if resp.HasField("leader") else ""
                if to and (not is_url(address) or to.startswith("https://")):
                    self._leader = to
                    named[to] = address
                    if to not in asked and to not in gone:
                        hint = to
                continue
            # A replica that is handing over (SIGTERM) takes nothing more:
            # the next one may lead by now.
            if resp.status == control_pb2.STATUS_BUSY and "shutting down" in resp.message:
                conn.close()
                tried[address] = resp.message
                continue
            if mutation:
                self._leader = address
                if lost is not None:
                    _said_lost(lost, address, request.request_key)
            return conn, resp

    def _trust(self, conn, address, named_by):
        """A socket the caller did not give comes from what a replica says,
        which comes from the store: whoever can write the store names any
        path. Such a socket is asked only when the process behind it is root
        or runs as the ofcd the caller's own address reached (SO_PEERCRED,
        before anything is sent); else ConnectionError names it."""
        uid = conn.peer_uid()
        if address in self.addresses:
            self._via = (address, uid)
            return
        via, via_uid = self._via
        if uid == 0 or (uid is not None and uid == via_uid):
            return
        self._leader = None
        raise ConnectionError(
            f"{named_by or via} named {address} as the leader's socket, but the process behind it "
            f"runs as uid {uid}, neither root nor uid {via_uid} (the ofcd at {via}): not "
            "following it, nothing was sent (whoever can write the cluster's store can "
            "name any socket: check the leader key)")

    def _order(self):
        """The addresses to ask in a round: the last leader first."""
        lead = self._leader
        return ([lead] if lead else []) + [a for a in self.addresses if a != lead]

    def _label(self, address):
        """An address as errors name it: with its option, if the caller
        named them (the command line's --socket, --server)."""
        opt = self.names["server" if is_url(address) else "socket"]
        return f"{opt} {address}" if opt else address

    def _every(self, tried):
        return "; ".join(f"{self._label(a)}: {w}" for a, w in tried.items())

    def _story(self, what, tried):
        return what + "; before it: " + self._every(tried) if tried else what

    def _exhausted(self, tried, not_leader, early=False):
        """The error when the deadline passed without an answer (early: no
        address is worth asking again): every address asked and why it did
        not answer."""
        every = self._every(tried)
        t = "" if early else f" within {self.timeout:g} s"
        if not_leader is not None:
            r = control_pb2.Response()
            r.CopyFrom(not_leader)
            r.message = f"no replica led{t}: {every}"
            return OfcError(r)
        return ConnectionError(f"no ofcd answered{t}: {every}")

    # ---- the protocol ---------------------------------------------------

    def call(self, request, check=True):
        """Send one ofc.v1.Request, return its ofc.v1.Response (raises
        OfcError on a status other than OK when check is true). A mutation
        goes to the leader of replicas (see _ask)."""
        if not request.HasField("id"):
            request.id = next(_ids)
        # One key for the logical request, kept across every resend (the
        # next replica after a failover, a broken answer): the leader runs
        # it at most once and answers a resend with the recorded outcome.
        if request.WhichOneof("body") in _MUTATIONS and not request.request_key:
            request.request_key = uuid.uuid4().hex
        conn, resp = self._ask(request, self._rest)
        conn.close()
        if check and resp.status != control_pb2.STATUS_OK:
            raise OfcError(resp)
        return resp

    @staticmethod
    def _rest(conn, resp):
        """A stream (GetSchedule.stream): the pieces, merged; a frame with
        continues_step adds to the previous frame's step."""
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
        return resp

    # ---- reads ----------------------------------------------------------

    def get_state(self, with_fabric=False, with_edges=False, fabric_brief=False,
                  with_wiring=False):
        """The last committed state: devices, topology, schedule, the
        transaction running and the queue (ofc.v1.State). fabric_brief:
        the fabric without its wiring, circuits and logical topology.
        with_wiring: .wiring, each circuit as the hosts' agents hear it
        (docs/hosts.md)."""
        req = control_pb2.Request()
        req.get_state.with_fabric = with_fabric
        req.get_state.with_edges = with_edges
        req.get_state.fabric_brief = fabric_brief
        req.get_state.with_wiring = with_wiring
        return self.call(req).state

    def get_schedule(self, collective, algorithm=None, size_bytes=None, topology=None,
                     summary_only=False, chunks=None, partition=None, lowering=None,
                     stream=False, reduced=False):
        """A verified, priced schedule (ofc.v1.Schedule) on the committed
        topology, on `topology` (a what-if spec), or on the config's
        `partition` (its topology, sized by its collectives). `lowering`:
        the all-to-all MCF's, "steps" (the default), "paths" (the
        workload's: ofcd answers it from the MCF solution it keeps, and is
        BUSY while it computes it) or "single". `reduced`: symmetry-reduced
        (node 0's program and Schedule.reduced, the group that translates it
        to every node), refused with the reason where the topology has no
        such form."""
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
            gs.stream = True  # any size: ofcd sends it step by step
        if reduced:
            gs.reduced = True
        return self.call(req).schedule

    def watch(self, idle_timeout=None, count=None, after_seq=None, log=None):
        """Yield ofc.v1.Event as they happen. Ends after `count` events, or
        when none came for `idle_timeout` seconds (None: never). after_seq
        and log (an Event's seq and log) resume a watch: the events kept
        after that one come first."""
        req = control_pb2.Request(id=next(_ids))
        req.watch.SetInParent()
        if after_seq is not None:
            req.watch.after_seq = after_seq
        if log is not None:
            req.watch.log = log
        conn, ack = self._ask(req, lambda conn, first: first)
        conn.deadline = None  # (the timeout was the acknowledgement's)
        try:
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

    def apply_config(self, yaml_text, filename=None, dry_run=False, max_loss_percent=None,
                     grace_ms=None, verify_wiring_ms=None):
        """Validate the YAML and drive the devices to its target as one
        transaction. Relative paths in it (credentials) resolve from the
        directory of filename (made absolute here), else from the running
        config's. max_loss_percent, grace_ms: its topology in stages first,
        as reconfigure's, then the config (which may change no other
        circuit). verify_wiring_ms: as reconfigure's (the config before
        restored when the hosts' LLDP does not confirm the commit). Returns
        the Response (message, transaction info)."""
        req = control_pb2.Request()
        req.apply_config.yaml = yaml_text
        if filename:
            req.apply_config.filename = os.path.abspath(filename)
        if dry_run:
            req.apply_config.dry_run = True
        _stages(req.apply_config, max_loss_percent, grace_ms)
        _verify_wiring(req.apply_config, verify_wiring_ms, dry_run, max_loss_percent)
        return self.call(req)

    def reconfigure(self, topology=None, collective=None, size_bytes=None, nodes=None,
                    dry_run=False, partition=None, hosts=None, relabel=False,
                    free_ports=False, max_loss_percent=None, grace_ms=None,
                    verify_wiring_ms=None):
        """Rewire to a topology spec, to the finder's pick for a workload
        (collective and size_bytes), or one partition of the config to its
        own topology (partition alone). With hosts (a list of host names, or
        a hostlist expression such as "h[0-15]"), a partition made at run
        time: those hosts, named partition, aimed at topology, held for that
        name until release_partition (relabel: the topology renumbered over
        the hosts for the fewest moves). free_ports: a topology or workload
        on the ports no held partition has alone, the held partitions'
        circuits left as they are. max_loss_percent: a topology in stages,
        each one transaction, at most that share (above 0, below 100) of the
        fabric's bandwidth lost at any moment; grace_ms: each stage's wait
        between its schedule and its circuits. verify_wiring_ms: after the
        commit, wait up to that long for the hosts' agents' LLDP to confirm
        every circuit it changed, else roll it back (the answer, FAILED,
        names each circuit not confirmed). Returns the Response."""
        req = control_pb2.Request()
        rq = req.reconfigure
        if topology and collective:
            raise ValueError("give a topology or a workload, not both")
        if free_ports and (hosts is not None or relabel or partition):
            raise ValueError("free_ports aims the fabric's topology or workload: not with "
                             "partition= or hosts=")
        if hosts is not None or relabel:
            if isinstance(hosts, str):
                hosts = expand_hostlist(hosts)
            if not hosts or not partition or not topology or collective:
                raise ValueError("a partition made of hosts needs hosts=, partition= and "
                                 "topology= (no workload)")
            rq.partition = partition
            rq.topology = topology
            rq.hosts.extend(hosts)
            if relabel:
                rq.relabel = True
        elif partition and (topology or collective):
            raise ValueError("a partition of the config goes to its own topology: no "
                             "topology or workload (a partition made of hosts= takes one)")
        elif partition:
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
        if free_ports:
            rq.free_ports = True
        if max_loss_percent is not None and (
                not topology or collective or partition or hosts is not None or free_ports):
            raise ValueError("max_loss_percent stages a change of the whole fabric's "
                             "topology: give topology= alone")
        _stages(rq, max_loss_percent, grace_ms)
        if verify_wiring_ms is not None and (partition or hosts is not None or free_ports):
            raise ValueError("verify_wiring_ms checks a commit of the whole fabric: not with "
                             "partition=, hosts= or free_ports")
        _verify_wiring(rq, verify_wiring_ms, dry_run, max_loss_percent)
        return self.call(req)

    def release_partition(self, name):
        """Let go of a partition made at run time (reconfigure with hosts):
        its hosts return to the pool; the circuits stay as they are. Queued
        with the mutations, so it lets go after those asked before it.
        Returns the Response."""
        if not name:
            raise ValueError("release_partition needs the partition's name")
        req = control_pb2.Request()
        # (name too, its older spelling: an ofcd of before partition reads it)
        req.release_partition.partition = name
        req.release_partition.name = name
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

    def drain(self, items, grace_s=None, force=False, check=True):
        """Take switches ("SWITCH": every port cabled to a host) or switch
        ports ("SWITCH:PORT") out of service for planned work: ofcd
        publishes the schedule without them first, waits grace_s (None: its
        default, 3 s) for running jobs to take it, then removes their
        circuits. A drain that would cut hosts off is refused (INVALID,
        raised when check) unless force. Returns the Response."""
        req = control_pb2.Request()
        req.drain.items.extend(items)
        if grace_s is not None:
            req.drain.grace_ms = int(round(grace_s * 1000))
        if force:
            req.drain.force = True
        return self.call(req, check=check)

    def undrain(self, items, check=True):
        """Put drained switches or switch ports back: their circuits first,
        verified on the devices, then the schedule that uses them."""
        req = control_pb2.Request()
        req.drain.items.extend(items)
        req.drain.undrain = True
        return self.call(req, check=check)

    def report_links(self, host, ports, lldp_running=True, lldp_error=None, check=True):
        """A host's agent's report (what ofc-hostd sends, docs/hosts.md):
        ports is a list of dicts {"port": N, "up": bool, "ifname": str,
        "neighbour_host": str, "neighbour_port": N} (the LLDP neighbour
        optional). A port down becomes the failure "HOST:PORT"; one up again
        is restored after ofcd's hold-down, at a later report. Returns the
        Response (a transaction when ports were failed or restored)."""
        req = control_pb2.Request()
        rl = req.report_links
        rl.host = host
        for p in ports:
            m = rl.ports.add()
            m.port = p["port"]
            m.up = bool(p["up"])
            for key in ("ifname", "neighbour_host", "neighbour_port"):
                if p.get(key) is not None:
                    setattr(m, key, p[key])
        rl.lldp_running = bool(lldp_running)
        if lldp_error:
            rl.lldp_error = lldp_error
        return self.call(req, check=check)

    def get_plan(self):
        """The running config's workload planned (`ofc plan FILE
        --workload config`): a Plan, every way phase by phase, the choice
        and why."""
        req = control_pb2.Request()
        req.get_plan.SetInParent()
        return self.call(req).plan

    def move_to_phase(self, phase=None, name=None, dry_run=False, max_loss_percent=None,
                      grace_ms=None):
        """Take the fabric to the topology the plan's chosen way gives a
        phase (its index, or its name); answered when the circuits are
        committed. max_loss_percent, grace_ms: in stages, as reconfigure's.
        Returns the Response."""
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
        _stages(m, max_loss_percent, grace_ms)
        return self.call(req)

    def cancel(self, ticket):
        """Cancel a queued mutation by its ticket (a running one never is)."""
        req = control_pb2.Request()
        req.cancel.ticket = ticket
        return self.call(req)

    def report_mpi(self, report, check=True):
        """Send a job's libofc-mpi report (a control_pb2.ReportMpi, as the
        library sends it at MPI_Finalize; docs/mpi.md): the leader keeps it
        as its partition's latest (State.mpi_reports, the ofc_mpi_*
        metrics). A report ofcd refuses (malformed, too large, another
        partition's hosts) raises OfcError saying why. Returns the
        Response."""
        req = control_pb2.Request()
        req.report_mpi.CopyFrom(report)
        return self.call(req, check=check)

    # ---- the testbed ----------------------------------------------------

    def testbed_run(self, algorithm=None, collective=None, size_bytes=None, alpha=None,
                    run_timeout=None, schedule=None, mpi=False, topology=None,
                    check=True):
        """Run a collective on the testbed's hosts for the topology the
        daemon committed (`ofc --socket PATH testbed run`): each
        algorithm ("all": every one that applies) priced by the testbed's
        model, run and judged. Returns the TestbedRunAnswer: runs with
        measured_s, predicted_s, ratio, data_ok, model_holds and model
        (which term is off). schedule: the bytes of a schedule to run
        instead (what `ofc schedule --format pb` writes), sent in
        the request; mpi: MPICH's own collective run too, unpriced;
        topology: a what-if, the fabric reconfigured to it for the runs
        and to the committed topology again after. A run
        that failed or moved wrong data raises OfcError (its response
        holds the answer) unless check is false."""
        req = control_pb2.Request()
        t = req.testbed_run
        t.SetInParent()
        if algorithm is not None:
            t.algorithm = algorithm
        if collective is not None:
            t.collective = collective
        if size_bytes is not None:
            t.size = size_bytes
        if alpha is not None:
            t.alpha = alpha
        if run_timeout is not None:
            t.timeout = run_timeout
        if schedule is not None:
            t.schedule = bytes(schedule)
        if mpi:
            t.mpi = True
        if topology is not None:
            t.topology = topology
        return self.call(req, check=check).testbed_run

    def testbed_mpirun(self, argv, mpi="mpich", preload=True, size_bytes=None,
                       run_timeout=None, check=True):
        """An unmodified MPI program (argv: PROGRAM, a whole path or a name
        on the hosts' PATH, then its arguments) as one rank per host of the
        testbed, over the circuits of the topology ofcd committed, with
        libofc-mpi running ofc's schedules (preload=False: the MPI's own
        collectives on the same links); mpi: "mpich" or "openmpi". Returns
        the TestbedMpirunAnswer (.exit_code, .report: the library's JSON
        report, .output, .circuit_bytes, ...). A program that fails or is
        stopped raises OfcError (its .response holds the answer) unless
        check is false."""
        req = control_pb2.Request()
        q = req.testbed_mpirun
        q.argv.extend(argv)
        q.mpi = mpi
        if not preload:
            q.no_preload = True
        if size_bytes is not None:
            q.size_bytes = size_bytes
        if run_timeout is not None:
            q.timeout = run_timeout
        return self.call(req, check=check).testbed_mpirun

    def testbed_check(self, check=True):
        """Check the testbed's hosts (`ofc --socket PATH testbed check`):
        every ordered pair's reach, what each circuit carries with all
        loaded at once, and the model calibrated on the committed topology
        (alpha, and a reference run judged). Returns the
        TestbedCheckAnswer; a pair that does not reach or a reference run
        with wrong data raises OfcError unless check is false."""
        req = control_pb2.Request()
        req.testbed_check.SetInParent()
        return self.call(req, check=check).testbed_check

    def testbed_down(self):
        """Remove the testbed's namespaces through the daemon that drives
        them (`ofc --socket PATH testbed down`). Returns the
        TestbedDownAnswer (fabric, removed)."""
        req = control_pb2.Request()
        req.testbed_down.SetInParent()
        return self.call(req).testbed_down

    def testbed_up(self, rate_scale=None):
        """Bring the testbed up through the daemon that drives its hosts
        (`ofc --socket PATH testbed up`): a namespace per host, a veth
        pair per circuit the switches hold, shaped to rate_scale times
        the config's link rate (None: the config's testbed.rate_scale,
        else what this machine carries). Returns the TestbedUpAnswer
        (fabric, hosts, circuits, rate_bps, carried_bps, rate_scale,
        notes)."""
        req = control_pb2.Request()
        req.testbed_up.SetInParent()
        if rate_scale is not None:
            req.testbed_up.rate_scale = rate_scale
        return self.call(req).testbed_up
