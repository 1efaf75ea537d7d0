"""No schedule printed below its own lower bound.

Every JSON answer the suites read through lib.sh's expect_json passes
through violations(): wherever an object gives a schedule's `time_us` and
its `lower_bound_us`, the time is at or above the bound; its `ratio`, where
it gives one, is that time over that bound, and a degraded fabric's
`excess` is the same ratio less 1 (the text's "vs its lower bound" and
"ratio" lines come from those figures); text_violations() holds the
same over the text. Run as a script over files (JSON, else text) it prints
the violations and exits 1 when there are any.
"""
import json
import re
import sys

EPS = 1e-9


def _num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x


def _check(o, where, out):
    t, lb = o.get("time_us"), o.get("lower_bound_us")
    if not (_num(t) and _num(lb) and t > 0 and lb > 0):
        return
    name = o.get("algorithm") or o.get("algo") or where
    if t < lb * (1 - EPS):
        out.append("%s: time %.9g us below its lower bound %.9g us" % (name, t, lb))
    r = o.get("ratio")
    if _num(r) and abs(r - t / lb) > 1e-6 * max(1.0, abs(r)):
        out.append("%s: ratio %.9g, not time over bound %.9g" % (name, r, t / lb))
    d = o.get("degraded_bound")
    # the degraded fabric's own bound, printed as the lower bound where
    # the answer's is it or above it (where NICs forward a routed
    # schedule's circuits its steps do not bound it, and the answer's
    # bound is below it, said so)
    if isinstance(d, dict) and _num(d.get("time_us")) and lb >= d["time_us"] * (1 - EPS) \
            and t < d["time_us"] * (1 - EPS):
        out.append("%s: time %.9g us below the degraded fabric's bound %.9g us" %
                   (name, t, d["time_us"]))
    if isinstance(d, dict) and _num(d.get("excess")):
        if abs(d["excess"] - (t / lb - 1)) > 1e-6:
            out.append("%s: degraded excess %.9g, not time over bound less 1 %.9g" %
                       (name, d["excess"], t / lb - 1))


def violations(j, where="answer"):
    """The objects in j (any JSON value) that print a schedule below its
    bound or a ratio to another bound, as messages."""
    out = []
    stack = [(j, where)]
    while stack:
        o, w = stack.pop()
        if isinstance(o, dict):
            _check(o, w, out)
            stack.extend((v, "%s.%s" % (w, k)) for k, v in o.items())
        elif isinstance(o, list):
            stack.extend((v, "%s[%d]" % (w, i)) for i, v in enumerate(o))
    return out


_NUM = r"([0-9.]+(?:e[+-]?[0-9]+)?)"


def text_violations(text, where="text"):
    """The same over `ofc schedule`'s text: a schedule's "time" at or above
    its "lower bound", its "vs its lower bound" that bound, its "ratio"
    time over it; a comparison's rows each at or above its own bound
    (ratio 1 or more). Printed to 6 significant digits, so compared to
    1e-5."""
    out = []
    t = re.search(r"^  time +" + _NUM + " us", text, re.M)
    lb = re.search(r"^  lower bound +" + _NUM + " us", text, re.M)
    vs = re.search(r"vs its lower bound, " + _NUM + " us", text)
    r = re.search(r"^  ratio +" + _NUM + r"\s*$", text, re.M)
    if t and lb:
        t, lb = float(t.group(1)), float(lb.group(1))
        if t < lb * (1 - 1e-5):
            out.append("%s: time %g us below its lower bound %g us" % (where, t, lb))
        if vs and abs(float(vs.group(1)) - lb) > 1e-5 * lb:
            out.append("%s: 'vs its lower bound' %s us, the lower bound %g us" %
                       (where, vs.group(1), lb))
        if r and abs(float(r.group(1)) - t / lb) > 2e-4 * t / lb:
            out.append("%s: ratio %s, time over bound %.4f" % (where, r.group(1), t / lb))
    for m in re.finditer(r"^  (\S+) +\d+ +\S+ +" + _NUM + r" +(s&f|rtd|c-t) +" + _NUM,
                         text, re.M):
        if float(m.group(4)) < 1 - 1e-4:
            out.append("%s: row %s ratio %s, below its bound" % (where, m.group(1), m.group(4)))
    return out


if __name__ == "__main__":
    bad = []
    for path in sys.argv[1:]:
        with open(path) as f:
            data = f.read()
        try:
            bad += violations(json.loads(data), path)
        except ValueError:
            bad += text_violations(data, path)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)
