"""python3 -m ofc_client [--socket PATH]... [--server URL[,URL]]... [--cert C --key K --cacert A]
                        [--timeout S] status|watch|schedule C|reconfigure [SPEC]|release NAME

A small runnable example of the client (docs/python.md): it prints what
`ofc --socket PATH status` shows, follows events, asks for a schedule's
figures, rewires the fabric or a partition, and lets go of a partition.
Given every replica's socket or every gateway's URL, it asks the one that
leads, and asks again at the next during a failover.
"""
import argparse
import os
import sys

from . import Client, OfcError, control_pb2

# What the client's errors call its options, as they are typed here.
_NAMES = {"socket": "--socket", "server": "--server", "cert": "--cert", "key": "--key",
          "cacert": "--cacert"}


def _usage(msg):
    """A usage error: one line that names the options given, exit 2."""
    print(f"python3 -m ofc_client: {msg}", file=sys.stderr)
    sys.exit(2)


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m ofc_client")
    p.add_argument("--socket", action="append", default=[], metavar="PATH",
                   help="ofcd's socket; again for each replica (default $OFC_SOCKET, a "
                        "comma-separated list, else /run/ofc/ofcd.sock)")
    p.add_argument("--server", action="append", default=[], metavar="URL",
                   help="ofc-gateway's https://HOST:PORT; again, or a comma-separated list, "
                        "for each replica's gateway (default $OFC_SERVER)")
    p.add_argument("--cert", help="the client certificate for --server (default $OFC_CERT)")
    p.add_argument("--key", help="its key (default $OFC_KEY)")
    p.add_argument("--cacert", help="the CA of the gateways' certificates (default $OFC_CACERT)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds per request, every replica's tries included")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("status")
    w = sub.add_parser("watch")
    w.add_argument("--idle", type=float, default=None, help="stop after this long without events")
    w.add_argument("--count", type=int, default=None)
    s = sub.add_parser("schedule")
    s.add_argument("collective")
    s.add_argument("--algo")
    s.add_argument("--partition")
    r = sub.add_parser("reconfigure")
    r.add_argument("topology", nargs="?", help="a topology spec")
    r.add_argument("--partition", help="the config's partition (alone), or the name of a "
                                       "partition made of --hosts")
    r.add_argument("--hosts", help="a partition made at run time of these hosts "
                                   "(a hostlist: h[0-15],x1)")
    r.add_argument("--relabel", action="store_true",
                   help="renumber the topology over --hosts for the fewest moves")
    r.add_argument("--free-ports", action="store_true",
                   help="the TOPOLOGY on the ports no held partition has: the held "
                        "partitions' circuits stay as they are")
    r.add_argument("--dry-run", action="store_true")
    rel = sub.add_parser("release")
    rel.add_argument("partition", help="a partition made at run time (reconfigure --hosts)")
    return p


def _client(a):
    if (a.cert or a.key or a.cacert) and not (a.server or os.environ.get("OFC_SERVER")):
        _usage("--cert, --key and --cacert go with --server URL")
    try:
        return Client(a.socket or None, timeout=a.timeout, server=a.server or None,
                      cert=a.cert, key=a.key, cacert=a.cacert, _names=_NAMES)
    except ValueError as e:
        _usage(str(e))


def _reconfigure(ofc, a):
    if a.free_ports and (a.hosts is not None or a.partition):
        _usage("reconfigure --free-ports aims the fabric's TOPOLOGY: not with --partition "
               "or --hosts")
    if a.hosts is not None or a.relabel:
        if not (a.hosts and a.partition and a.topology):
            _usage("reconfigure --hosts makes a partition: give --partition NAME, --hosts "
                   "LIST and a TOPOLOGY")
    elif a.partition and a.topology:
        _usage("reconfigure --partition P goes to the config's topology for P: no TOPOLOGY "
               "(a partition made of --hosts takes one)")
    elif not (a.partition or a.topology):
        _usage("reconfigure needs a TOPOLOGY, or --partition")
    try:
        r = ofc.reconfigure(topology=a.topology, partition=a.partition, hosts=a.hosts,
                            relabel=a.relabel, dry_run=a.dry_run, free_ports=a.free_ports)
    except ValueError as e:  # (a malformed hostlist)
        _usage(f"--hosts {a.hosts}: {e}")
    print(r.message)


def main(argv=None):
    a = _parser().parse_args(argv)
    ofc = _client(a)
    try:
        if a.cmd == "status":
            st = ofc.get_state()
            print(f"fabric {st.fabric_name} generation {st.config_generation}"
                  f" topology {st.topology.spec or '-'}"
                  f" {'at target' if st.at_target else 'NOT at target'}")
            if st.HasField("cluster"):
                lead = st.cluster.leader.name if st.cluster.HasField("leader") else "none now"
                print(f"replica {st.cluster.name} ({st.cluster.role}), leader {lead}")
            for d in st.devices:
                print(f"  {d.name} ({d.kind} {d.driver}): {d.entries} entries")
            for h in st.held:
                print(f"  partition {h.name}: {h.topology} on {len(h.hosts)} hosts")
        elif a.cmd == "watch":
            for ev in ofc.watch(idle_timeout=a.idle, count=a.count):
                kind = control_pb2.Event.Kind.Name(ev.kind)[5:]
                print(ev.time_unix_ms, kind, ev.device, ev.message, flush=True)
        elif a.cmd == "schedule":
            sc = ofc.get_schedule(a.collective, algorithm=a.algo, summary_only=True,
                                  partition=a.partition)
            print(f"{sc.algorithm} {sc.collective} on {sc.topology}: {sc.num_steps} steps,"
                  f" {sc.time_us:.6g} us, verified {sc.verified}")
        elif a.cmd == "reconfigure":
            _reconfigure(ofc, a)
        elif a.cmd == "release":
            print(ofc.release_partition(a.partition).message)
    except OfcError as e:
        print(f"ofc_client: {e} ({e.status})", file=sys.stderr)
        return 2 if e.status == "STATUS_INVALID" else 1
    except (ConnectionError, TimeoutError) as e:
        print(f"ofc_client: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
