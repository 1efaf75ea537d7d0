#!/usr/bin/env python3
"""What a picture of ofc's (ofc topo --dot, ofc show --dot, ofc status --dot)
shows, read back from its DOT as JSON for the integration tests: nodes
pinned where, lines that pass through a node they do not end at, lines
that cross, whether the nodes stand on a circle in node order, and the
host pairs of the red (failed), dotted (missing) and other lines by the
circuits their tooltips name.

    dot_check.py FILE.dot  ->  {"nodes": 64, "edges": 128, "through": 0, ...}

Only ofc's own output is read: one statement a line, positions as
pos="X,Y!" in inches.
"""
import json
import math
import re
import sys

NODE = re.compile(r'^\s*"?(\w+)"?\s*\[(.*)\];$')
EDGE = re.compile(r'^\s*"?(\w+)"?\s*(--|->)\s*"?(\w+)"?\s*(\[(.*)\])?;$')
POS = re.compile(r'pos="([-\d.]+),([-\d.]+)!"')
ATTR = re.compile(r'(\w+)="?([^",]*)"?')
TIP = re.compile(r'tooltip="(\S+?):\d+ -> (\S+?):\d+ ')


def point_segment(p, a, b):
    """Distance from p to segment ab, and where along it (0..1)."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    L = dx * dx + dy * dy
    t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / L if L else 0
    t = max(0.0, min(1.0, t))
    q = (a[0] + t * dx, a[1] + t * dy)
    return math.hypot(p[0] - q[0], p[1] - q[1]), t


def cross(a, b, c, d):
    """Segments ab and cd cross at a point inside both."""
    def orient(p, q, r):
        v = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
        return 0 if abs(v) < 1e-9 else (1 if v > 0 else -1)
    if len({a, b, c, d}) < 4:
        return False
    return orient(a, b, c) * orient(a, b, d) < 0 and orient(c, d, a) * orient(c, d, b) < 0


def main():
    pos, attrs, edges = {}, {}, []
    for line in open(sys.argv[1]):
        m = EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(3), m.group(5) or ""))
            continue
        m = NODE.match(line)
        if m and m.group(1) not in ("graph", "node", "edge"):
            p = POS.search(m.group(2))
            if p:
                pos[m.group(1)] = (float(p.group(1)), float(p.group(2)))
                attrs[m.group(1)] = dict(ATTR.findall(m.group(2)))
    # hosts or topology nodes: the obstacles a line must not run through
    hosts = sorted((n for n in pos if re.fullmatch(r"h?\d+", n)),
                   key=lambda n: int(n.lstrip("h")))
    through = 0
    segs = [(pos[u], pos[v]) for u, v, _ in edges if u in pos and v in pos]
    for (u, v, _), (a, b) in zip([e for e in edges if e[0] in pos and e[1] in pos], segs):
        for w in hosts:
            if w in (u, v):
                continue
            d, t = point_segment(pos[w], a, b)
            if 0 < t < 1 and d < 0.15:
                through += 1
    crossings = sum(cross(*segs[i], *segs[j]) for i in range(len(segs))
                    for j in range(i + 1, len(segs)))
    # a circle in node order: equal radius, angle 2 pi i / n clockwise from the top
    circle = False
    if len(hosts) > 2:
        cx = sum(pos[h][0] for h in hosts) / len(hosts)
        cy = sum(pos[h][1] for h in hosts) / len(hosts)
        r = [math.hypot(pos[h][0] - cx, pos[h][1] - cy) for h in hosts]
        ang = [math.atan2(pos[h][0] - cx, pos[h][1] - cy) % (2 * math.pi) for h in hosts]
        n = len(hosts)
        circle = max(r) - min(r) < 0.02 * max(r) and all(
            abs((ang[i] - 2 * math.pi * i / n + math.pi) % (2 * math.pi) - math.pi) < 0.01
            for i in range(n))
    kinds = {"red": set(), "dotted": set(), "other": set()}
    for u, v, a in edges:
        t = TIP.search(a)
        if not t:
            continue
        pair = tuple(sorted((t.group(1), t.group(2))))
        kind = "dotted" if "style=dotted" in a else "red" if "#d62728" in a else "other"
        kinds[kind].add(pair)
    print(json.dumps({
        "nodes": len(hosts), "edges": len(edges), "through": through,
        "crossings": crossings, "circle_order": circle,
        "pos": {h: pos[h] for h in hosts},
        "fill": {h: attrs[h].get("fillcolor") for h in hosts},
        "red_hosts": sorted(h for h in hosts if attrs[h].get("color") == "#d62728"),
        **{k: sorted(list(p) for p in v) for k, v in kinds.items()},
    }))


if __name__ == "__main__":
    main()
