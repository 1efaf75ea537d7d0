#!/usr/bin/env python3
"""Write examples/workloads/'s matrices: run it again rather than
editing them by hand.

moe-skew8.txt   a mixture-of-experts layer's all-to-all in a group of 8: row
                s, column t is how much rank s sends the experts on rank t,
                relative: Zipf(1.1) popularity over the experts, each rank's
                mix within +-10% (seeded, so the file is always the same).
skew16.txt      the same over 16 hosts (one group of 16), for the docs.
moe-ep64.txt    64 hosts as 8 expert-parallel groups of 8 (the hosts with the
                same rank mod 8, as tp 8 x ep 8 numbers them): each group's
                moe-skew8, 0 between groups; bench/workload.sh's skewed
                all-to-all.
"""
import os
import random
import sys


def skew(k, seed):
    rnd = random.Random(seed)
    pop = [1.0 / (j + 1) ** 1.1 for j in range(k)]
    return [[0.0 if s == t else round(pop[t] * rnd.uniform(0.9, 1.1), 3) for t in range(k)]
            for s in range(k)]


def write(path, head, m):
    with open(path, "w") as f:
        for line in head:
            f.write("# " + line + "\n")
        for row in m:
            f.write(" ".join("0" if v == 0 else "%.3f" % v for v in row) + "\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "examples", "workloads")
    write(os.path.join(out, "moe-skew8.txt"),
          ["A mixture-of-experts layer's all-to-all in a group of 8: row s, column t",
           "is how much rank s sends the experts on rank t, relative (Zipf 1.1 over",
           "the experts, each rank +-10%; written by scripts/gen-workloads.py)."],
          skew(8, 41))
    write(os.path.join(out, "skew16.txt"),
          ["A skewed all-to-all over 16 hosts (Zipf 1.1 over the targets, each",
           "source +-10%; written by scripts/gen-workloads.py)."], skew(16, 16))
    g = skew(8, 41)
    m = [[0.0] * 64 for _ in range(64)]
    for s in range(64):
        for t in range(64):
            if s != t and s % 8 == t % 8:
                m[s][t] = g[s // 8][t // 8]
    write(os.path.join(out, "moe-ep64.txt"),
          ["64 hosts as 8 expert-parallel groups of 8 (hosts of equal rank mod 8):",
           "each group's moe-skew8.txt, nothing between groups (written by",
           "scripts/gen-workloads.py)."], m)


if __name__ == "__main__":
    main()
