"""A client that keeps a copy of ofcd's state from the watch's deltas
(ofc_client.state_copy), for test_state_delta.sh: started on one replica's
socket, it follows the events in a thread; agree() waits until a fresh read
on another socket stands at the copy's event and compares the two, byte for
byte, in their canonical form (kept(...) serialised deterministically)."""

import difflib
import threading
import time

from ofc_client import Client
from ofc_client.state_copy import StateCopy, kept


def canon(state):
    return kept(state).SerializeToString(deterministic=True)


class Follower(threading.Thread):
    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        self.client = Client(sock, timeout=10)
        self.copy = StateCopy(self.client.get_state())
        self.events = []
        self.rereads = 0
        self.errors = []
        self.last_event = time.monotonic()
        self.stop = False
        self.lock = threading.Lock()

    def run(self):
        while not self.stop:
            try:
                for ev in self.client.watch(idle_timeout=0.5, after_seq=self.copy.seq,
                                            log=self.copy.log):
                    with self.lock:
                        self.events.append(ev)
                        self.last_event = time.monotonic()
                        if not self.copy.apply(ev):
                            self.rereads += 1
                            self.copy = StateCopy(self.client.get_state())
                    if self.stop:
                        return
            except (ConnectionError, TimeoutError, OSError) as e:
                # (a replica gone: the test points the follower elsewhere)
                self.errors.append(str(e))
                time.sleep(0.2)

    def agree(self, reader_sock, secs=30):
        """Until a read on reader_sock stands at the copy's event, no event
        came for a second, and the two are the same bytes; (ok, why)."""
        reader = Client(reader_sock, timeout=10)
        end = time.monotonic() + secs
        why = "never read"
        while time.monotonic() < end:
            st = reader.get_state()
            with self.lock:
                quiet = time.monotonic() - self.last_event > 1.0
                a, b = canon(self.copy.state), canon(st)
                at = (self.copy.log, self.copy.seq)
            if (st.event_log, st.event_seq) != at:
                why = f"the read is at {st.event_log}:{st.event_seq}, the copy at {at[0]}:{at[1]}"
            elif a != b:
                why = diff(kept(self.copy.state), kept(st))
            elif quiet:
                return True, "same"
            time.sleep(0.3)
        return False, why


def diff(a, b):
    """The first top-level field where copy a and read b differ, in words."""
    fa = {f.name: v for f, v in a.ListFields()}
    fb = {f.name: v for f, v in b.ListFields()}
    for name in sorted(set(fa) | set(fb)):
        if fa.get(name) != fb.get(name):
            lines = difflib.unified_diff(str(fa.get(name)).splitlines(),
                                         str(fb.get(name)).splitlines(), "copy", "read", n=2,
                                         lineterm="")
            return f"field {name}: " + "\n".join(list(lines)[:40])
    return "the same fields, different bytes"
