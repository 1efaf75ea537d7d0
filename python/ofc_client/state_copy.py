"""A copy of ofcd's state kept current from the watch's events (their
StateDelta), read whole only at the start, after a gap in the events'
numbers, on another log, or when an event says read_again
(docs/control.md, "Keeping a copy of the state").

    from ofc_client import Client
    from ofc_client.state_copy import StateCopy

    ofc = Client("/run/ofc/ofcd.sock")
    copy = StateCopy(ofc.get_state())
    for event in ofc.watch(after_seq=copy.seq, log=copy.log):
        if not copy.apply(event):
            copy = StateCopy(ofc.get_state())
        print(copy.state.config_generation, len(copy.state.held))
"""

from .pb import control_pb2

# The State fields a delta carries; the rest (the schedule, which each
# replica computes, the transaction running, the queue, the cluster, the
# daemon's own) each replica answers for itself.
KEPT = (
    "devices", "topology", "config_generation", "fabric_name",
    "target_topology", "at_target", "committed_unix_ms", "failed", "schedule_error", "moved",
    "partition", "recorded_config", "in_sync", "committed_by", "committed_epoch",
    "committed_principal", "drained", "held", "at_target_detail", "failed_by_host",
)
# ... and of each device, what ofcd counts talking to it (every request moves it)
_COUNTERS = ("commands", "errors", "last_contact_unix_ms", "last_contact_by")


def kept(state):
    """The part of a State (ofc.v1.State) that a copy keeps: what a delta
    carries. Two states agree when their kept(...).SerializeToString(
    deterministic=True) are the same bytes."""
    out = control_pb2.State()
    for f, v in state.ListFields():
        if f.name not in KEPT:
            continue
        if f.name == "devices":
            for d in v:
                n = out.devices.add()
                n.CopyFrom(d)
                for c in _COUNTERS:
                    n.ClearField(c)
        elif f.label == f.LABEL_REPEATED:
            getattr(out, f.name).extend(v)
        elif f.message_type is not None:
            getattr(out, f.name).CopyFrom(v)
        else:
            setattr(out, f.name, v)
    return out


def _merge_named(into, given, whole, patched=()):
    """A list of named entries (devices, held): each given replaces the
    entry of its name, or the whole list when whole; a device named in
    patched keeps its circuits (the patch changes them)."""
    if whole:
        del into[:]
        into.extend(given)
        return
    where = {e.name: i for i, e in enumerate(into)}
    for e in given:
        if e.name in where:
            old = into[where[e.name]]
            keep = list(old.circuits) if e.name in patched else None
            old.CopyFrom(e)
            if keep is not None:
                old.circuits.extend(keep)
        else:
            into.add().CopyFrom(e)


def _patch_circuits(devices, patch):
    """A switch's circuits less those removed, plus those added, in
    (in_port, out_port) order."""
    for d in devices:
        if d.name != patch.device:
            continue
        gone = {(c.in_port, c.out_port) for c in patch.removed}
        kept = [c for c in d.circuits if (c.in_port, c.out_port) not in gone]
        kept.extend(patch.added)
        kept.sort(key=lambda c: (c.in_port, c.out_port))
        d.ClearField("circuits")
        d.circuits.extend(kept)
        return


class StateCopy:
    """A State and where in the event log it stands (seq of log)."""

    def __init__(self, state):
        self.state = kept(state)
        self.seq = state.event_seq
        self.log = state.event_log

    def apply(self, event):
        """Apply one event (ofc.v1.Event). False: the copy cannot follow
        (a gap, another log, read_again): read the state again."""
        if not event.HasField("seq"):
            return True  # (a replica's own LEADER_CHANGED: not logged, changes nothing)
        if event.log != self.log or event.seq > self.seq + 1:
            return False
        if event.seq <= self.seq:
            return True  # (a duplicate: its change is in the copy)
        self.seq = event.seq
        if not event.HasField("delta"):
            return True
        dl = event.delta
        if dl.read_again:
            return False
        st = self.state
        patched = {p.device for p in dl.circuits}
        for f, v in dl.set.ListFields():
            if f.name == "devices":
                _merge_named(st.devices, v, dl.devices_whole, patched)
            elif f.name == "held":
                _merge_named(st.held, v, dl.held_whole)
            elif f.label == f.LABEL_REPEATED:
                st.ClearField(f.name)
                getattr(st, f.name).extend(v)
            elif f.message_type is not None:
                getattr(st, f.name).CopyFrom(v)
            else:
                setattr(st, f.name, v)
        # an emptied list is absent from set: the whole flag says so
        if dl.devices_whole and not dl.set.devices:
            st.ClearField("devices")
        if dl.held_whole and not dl.set.held:
            st.ClearField("held")
        for name in dl.cleared:
            st.ClearField(name)
        for p in dl.circuits:
            _patch_circuits(st.devices, p)
        return True
