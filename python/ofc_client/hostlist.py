"""Slurm's hostlist expressions ("n[0-3,7],gpu[01-02]x[1-2],login"), as
`ofc` reads them (controller/slurm/hostlist.c: Slurm 22.05's syntax), so
that Client.reconfigure(hosts="h[0-15]") names the hosts `ofc reconfigure
--hosts` would."""

import re

__all__ = ["expand_hostlist"]

_MAX_HOSTS = 65536
_NAME_MAX = 64
_NUMBER = re.compile(r"\d{1,9}")


def _term(prefix, t, out):
    """Expand the term t after prefix (what earlier brackets made)."""
    open_ = t.find("[")
    if open_ < 0:
        if "]" in t:
            raise ValueError("hostlist: ']' without '['")
        _push(out, prefix + t)
        return
    close = t.find("]", open_)
    if close < 0:
        raise ValueError("hostlist: '[' without ']'")
    head, tail = t[:open_], t[close + 1:]
    if tail and "[" not in tail:
        raise ValueError(f"hostlist: text after the last ']' (Slurm refuses '{t[:64]}')")
    if "]" in head:
        raise ValueError("hostlist: ']' without '['")
    inside = t[open_ + 1:close]
    if not inside:
        raise ValueError("hostlist: empty '[]'")
    for part in inside.split(","):
        lo_s, _, hi_s = part.partition("-")
        for s in (lo_s, hi_s) if "-" in part else (lo_s,):
            if not _NUMBER.fullmatch(s):
                raise ValueError(f"hostlist: expected a number of 1 to 9 digits in '[{inside}]'")
        lo = int(lo_s)
        hi = int(hi_s) if "-" in part else lo
        if hi < lo:
            raise ValueError(f"hostlist: range {lo}-{hi} runs backwards")
        if hi - lo >= _MAX_HOSTS:
            raise ValueError(f"hostlist: more than {_MAX_HOSTS} hosts")
        # Zero padding as Slurm prints it: as wide as lo is written.
        for v in range(lo, hi + 1):
            _term(prefix + head + str(v).zfill(len(lo_s)), tail, out)


def _push(out, name):
    if not 1 <= len(name) <= _NAME_MAX:
        raise ValueError(f"hostlist: a host name of {len(name)} characters (1 to {_NAME_MAX})")
    if len(out) >= _MAX_HOSTS:
        raise ValueError(f"hostlist: more than {_MAX_HOSTS} hosts")
    out.append(name)


def expand_hostlist(expr):
    """The host names of a hostlist expression, in order: "h[0-2],x" ->
    ["h0", "h1", "h2", "x"]. Raises ValueError for a malformed one."""
    if not expr:
        raise ValueError("hostlist: empty")
    bad = re.search(r"[^A-Za-z0-9\[\],._-]", expr)
    if bad:
        raise ValueError(f"hostlist: unexpected character {bad.group()!r}")
    out, depth, start = [], 0, 0
    for i, ch in enumerate(expr + ","):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError("hostlist: nested '['")
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            if i > start:  # an empty term is skipped, as Slurm does
                _term("", expr[start:i], out)
            start = i + 1
    if depth:
        raise ValueError("hostlist: '[' without ']'")
    if not out:
        raise ValueError(f"hostlist: no host in '{expr[:64]}'")
    return out
