"""Clients speaking the page's protocol to one ofcd (bench/page_load.sh):
each reads the state, watches from where it stands, applies every event's
delta (ofc_client.state_copy) and reads the whole state again only when
the copy cannot follow. Until SIGTERM; then prints one JSON line: per
client the bytes received (frames: 4 bytes of length and the Response),
the whole reads among them, the events, and the seconds.

    python3 bench/page_client.py SOCKET N
"""
import json
import signal
import sys
import threading
import time

from ofc_client import Client
from ofc_client.state_copy import StateCopy

stop = threading.Event()


def page(sock, out):
    c = Client(sock, timeout=600)
    t0 = time.monotonic()
    got = {"bytes": 0, "reads": 0, "read_bytes": 0, "events": 0}

    def read():
        st = c.get_state()
        n = st.ByteSize() + 64  # (the Response around it, about)
        got["reads"] += 1
        got["read_bytes"] += n
        got["bytes"] += n
        return StateCopy(st)

    copy = read()
    while not stop.is_set():
        try:
            for ev in c.watch(idle_timeout=0.5, after_seq=copy.seq, log=copy.log):
                got["bytes"] += ev.ByteSize() + 16
                got["events"] += 1
                if not copy.apply(ev):
                    why = ev.delta.why if ev.delta.read_again else "a gap or another log"
                    got.setdefault("why", {})
                    got["why"][why[:40]] = got["why"].get(why[:40], 0) + 1
                    copy = read()
                if stop.is_set():
                    break
        except (ConnectionError, TimeoutError, OSError):
            time.sleep(0.2)
    got["secs"] = time.monotonic() - t0
    out.append(got)


def main():
    sock, n = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    out = []
    ts = [threading.Thread(target=page, args=(sock, out)) for _ in range(n)]
    for t in ts:
        t.start()
    while not stop.is_set():
        stop.wait(0.2)
    for t in ts:
        t.join(5)
    print(json.dumps(out), flush=True)


main()
