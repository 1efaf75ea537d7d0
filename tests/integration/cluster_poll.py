#!/usr/bin/env python3
"""The polls of cluster_env.sh (wait_leader, until_state) in one process.

Each turn asks a replica's state as cluster_json does (`ofc --socket
TMP/NAME.sock status --json --timeout 5` into TMP/NAME.json) and reads it
here: a poll that started a Python for every replica at every turn spent
most of its CPU starting interpreters (a tenth of a second each). `ofc
status` exits 1 while a device is lost, its JSON whole: such a state (a
device's reachable false) is an answer, so a suite with a switch lost
polls here too; any other failure, or JSON cut short, is none.

  cluster_poll.py leader SECS OFC TMP NAME...
      until one of NAME... says it leads and took over: its name on stdout
      (exit 0), or 1 once SECS pass; 0.1 s between turns
  cluster_poll.py state SECS OFC TMP NAME EXPR [ARG]
      until the Python EXPR holds of NAME's state (j; ARG as a): 0, or 1
      once SECS pass; 0.05 s between turns

SECS counts as lib.sh's `deadline S` / `past T` do: whole seconds of the
kernel's uptime, past once the whole second is beyond now's plus SECS.
"""
import json
import subprocess
import sys
import time


def uptime():
    with open("/proc/uptime") as f:
        return int(float(f.read().split()[0]))


def device_lost(j):
    """Whether the state says a device does not answer: `ofc status` exits 1
    for it (status_devices_exit), its JSON whole."""
    devices = j.get("devices") or []
    return isinstance(devices, list) and any(
        isinstance(d, dict) and d.get("reachable") is False for d in devices)


def state(ofc, tmp, name):
    """cluster_json NAME: the state in TMP/NAME.json, or None where ofc gave
    none. Exit 1 with a whole JSON state that says a device is lost is an
    answer (a replica serving a fabric with a switch lost answers so every
    time); any other failure, or JSON cut short, is none."""
    path = "%s/%s.json" % (tmp, name)
    with open(path, "w") as out:
        rc = subprocess.call(ofc + ["--socket", "%s/%s.sock" % (tmp, name), "status", "--json",
                                    "--timeout", "5"], stdout=out, stderr=subprocess.DEVNULL)
    if rc not in (0, 1):
        return None
    try:
        with open(path) as f:
            j = json.load(f)
    except ValueError:
        return None
    if not isinstance(j, dict) or (rc == 1 and not device_lost(j)):
        return None
    return j


def main():
    mode, secs, ofc, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
    end = uptime() + secs
    if mode == "leader":
        names = sys.argv[5:]
        while uptime() <= end:
            for n in names:
                j = state(ofc, tmp, n)
                if j is None:
                    continue
                # (as cluster_view prints them, and the shell compared)
                try:
                    c = j.get("cluster", {})
                    role, took = c.get("role", "-"), str(c.get("took_over_unix_ms", 0))
                except AttributeError:
                    continue
                if role == "leader" and took != "0":
                    print(n)
                    return 0
            time.sleep(0.1)
        return 1
    if mode == "state":
        name, expr = sys.argv[5], sys.argv[6]
        a = sys.argv[7] if len(sys.argv) > 7 else ""
        code = compile(expr, "<until_state>", "eval")
        while True:
            j = state(ofc, tmp, name)
            if j is not None:
                try:
                    if eval(code, {"json": json, "sys": sys, "j": j, "a": a}):
                        return 0
                except Exception:
                    pass
            if uptime() > end:
                return 1
            time.sleep(0.05)
    print("cluster_poll.py: unknown mode " + mode, file=sys.stderr)
    return 2


sys.exit(main())
