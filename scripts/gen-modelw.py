#!/usr/bin/env python3
"""Write model W (notes fluid-mcf-mirrored-dw.md Sec. 6.3) as ofc server-fabric
configs: examples/modelw/<scenario>-<N>.yaml for N servers of 8 GPUs on 8 rails.

Per server: 8 GPUs; an NVSwitch (300 GB/s per GPU and direction) unless
no-nvlink; unless only-nvlink, 4 PCIe switches with 2 GPUs each (32 GB/s), a
32 GB/s uplink to the host memory (store and copy) and 2 NICs (25 GB/s);
only-nvlink hangs NIC l off GPU l (25 GB/s). NIC l of every server on rail
switch l (25 GB/s). Cost 1 per unit on GPU-incident links and NIC<->rail
links, 0 elsewhere. The vertex order matches fluid_build_modelw().

Usage: scripts/gen-modelw.py [OUTDIR]   (default examples/modelw)
"""
import argparse
import os

SCENARIOS = ("all-links", "no-nvlink", "only-nvlink")
SIZES = (1, 2, 3, 4, 8, 16, 32)


def template(s):
    v = [f"      - {{name: gpu{i}, kind: gpu}}" for i in range(8)]
    links = []
    if s != "no-nvlink":
        v.append("      - {name: nvswitch, kind: switch}")
    if s != "only-nvlink":
        v += [f"      - {{name: pcie{p}, kind: switch}}" for p in range(4)]
        v.append("      - {name: mem, kind: memory}")
    v += [f"      - {{name: nic{i}, kind: nic}}" for i in range(8)]
    for i in range(8):
        if s != "no-nvlink":
            links.append(f"      - {{from: gpu{i}, to: nvswitch, bandwidth: 300GB/s, cost: 1}}")
        if s != "only-nvlink":
            links.append(f"      - {{from: gpu{i}, to: pcie{i // 2}, bandwidth: 32GB/s, cost: 1}}")
        else:
            links.append(f"      - {{from: gpu{i}, to: nic{i}, bandwidth: 25GB/s, cost: 1}}")
    if s != "only-nvlink":
        links += [f"      - {{from: pcie{p}, to: mem, bandwidth: 32GB/s, cost: 0}}" for p in range(4)]
        links += [f"      - {{from: pcie{i // 2}, to: nic{i}, bandwidth: 25GB/s, cost: 0}}"
                  for i in range(8)]
    return ["  - name: dgx-a100", "    vertices:"] + v + ["    links:"] + links


def config(s, n):
    out = [f"# Model W, {s}, {n} server(s) of 8 GPUs: written by scripts/gen-modelw.py",
           "version: 1", f"name: modelw-{s}-{n}", "servers:"] + template(s)
    out.append("hosts:")
    out += [f"  - {{name: s{i}, server: dgx-a100}}" for i in range(n)]
    out.append("fabric_vertices:")
    out += [f"  - {{name: rail{l}, kind: switch}}" for l in range(8)]
    out.append("fabric_links:")
    out += [f"  - {{from: s{i}/nic{l}, to: rail{l}, bandwidth: 25GB/s, cost: 1}}"
            for i in range(n) for l in range(8)]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("outdir", nargs="?", default="examples/modelw",
                    help="the folder the configs are written to (default: examples/modelw)")
    outdir = ap.parse_args().outdir
    os.makedirs(outdir, exist_ok=True)
    for s in SCENARIOS:
        for n in SIZES:
            with open(os.path.join(outdir, f"{s}-{n}.yaml"), "w") as f:
                f.write(config(s, n))


if __name__ == "__main__":
    main()
