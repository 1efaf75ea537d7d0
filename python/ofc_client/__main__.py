"""python3 -m ofc_client [--socket PATH] [--timeout S] status|watch|schedule C|reconfigure SPEC

A small runnable example of the client (docs/python.md): it prints what
`ofc --socket PATH status` shows, follows events, asks for a schedule's
figures or rewires the fabric.
"""
import argparse
import sys

from . import Client, OfcError, control_pb2


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m ofc_client")
    p.add_argument("--socket", help="ofcd's socket (default $OFC_SOCKET, else /run/ofc/ofcd.sock)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("status")
    w = sub.add_parser("watch")
    w.add_argument("--idle", type=float, default=None, help="stop after this long without events")
    w.add_argument("--count", type=int, default=None)
    s = sub.add_parser("schedule")
    s.add_argument("collective")
    s.add_argument("--algo")
    r = sub.add_parser("reconfigure")
    r.add_argument("topology")
    r.add_argument("--dry-run", action="store_true")
    a = p.parse_args(argv)

    ofc = Client(a.socket, timeout=a.timeout)
    try:
        if a.cmd == "status":
            st = ofc.get_state()
            print(f"fabric {st.fabric_name} generation {st.config_generation}"
                  f" topology {st.topology.spec or '-'}"
                  f" {'at target' if st.at_target else 'NOT at target'}")
            for d in st.devices:
                print(f"  {d.name} ({d.kind} {d.driver}): {d.entries} entries")
        elif a.cmd == "watch":
            for ev in ofc.watch(idle_timeout=a.idle, count=a.count):
                kind = control_pb2.Event.Kind.Name(ev.kind)[5:]
                print(ev.time_unix_ms, kind, ev.device, ev.message, flush=True)
        elif a.cmd == "schedule":
            sc = ofc.get_schedule(a.collective, algorithm=a.algo, summary_only=True)
            print(f"{sc.algorithm} {sc.collective} on {sc.topology}: {sc.num_steps} steps,"
                  f" {sc.time_us:.6g} us, verified {sc.verified}")
        elif a.cmd == "reconfigure":
            print(ofc.reconfigure(topology=a.topology, dry_run=a.dry_run).message)
    except OfcError as e:
        print(f"ofc_client: {e} ({e.status})", file=sys.stderr)
        return 2 if e.status == "STATUS_INVALID" else 1
    except (ConnectionError, TimeoutError) as e:
        print(f"ofc_client: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
