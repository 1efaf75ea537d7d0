#!/usr/bin/env python3
"""Check that ofcd links none of the schedule and topology engines.

Planning runs in planner processes (build/ofc-planner, docs/ofcd.md "The
planner process"), out of the process that holds the lease, the devices'
sessions and the store's token: ofcd links no engine. A use that has to
stay a while is listed below (ROOTS, empty now) with why, so none slips
in unseen.

An engine is an object of ENGINES (the folders docs/ARCHITECTURE.md calls
engines, the finder's use case, the renumbering search) but the LOOKUPS
among them (names, defaults, limits, a network type: data, no engine). From the symbol
tables (nm on $BUILD/obj/**.o), the objects ofcd links are those its main
reaches through the symbols each object uses, as the linker takes members
of libofc.a; a root is a symbol of an engine that a linked object outside
the engines uses. The check fails when:

  - a root is not in ROOTS (a new use of an engine in ofcd: ask a planner
    process instead, planner_ask.c);
  - a root in ROOTS is no longer one (the list is kept true: remove it);
  - build/ofcd holds an engine's symbol (nm) while no root is left.

Usage: scripts/check-engines.py [--build DIR] [--forget FILE] [--list]
  --forget FILE  check as if FILE's roots were not in ROOTS (test_layers.sh
                 shows the check fails on a use not listed)
  --list         print the roots and the engine symbols build/ofcd holds
Exit status: 0 as listed, 1 not, 2 usage or no build.
"""
import argparse
import os
import subprocess
import sys

from objtables import nm_prefix, per_object

ENGINES = (
    "bfb/", "alltoall/", "baselines/", "optree/", "fluid/", "rwa/", "controller/schedule/",
    "controller/pick/", "controller/jobplan/", "topo/relabel_search.o",
)
# Lookups and types that sit in an engine's folder but are not engines:
# names, defaults and limits, data and arithmetic alone, which ofcd reads to
# check and describe a request, and the network type a server fabric is
# checked on when it is loaded (as topo/'s graphs are for the rest). Each is
# checked like any file of ofcd's: one that used an engine's symbol would
# be a root, not listed, and fail.
LOOKUPS = (
    "alltoall/lowerings.o",  # the MCF's lowerings by name
    "rwa/lp_solver.o",  # the LP solvers by name, and whether Clp's plugin loads
    "controller/schedule/engines.o",  # the engines' table: names, fabrics, defaults
    "controller/schedule/lookup.o",  # a request's algorithm, memory limit, optimality
    "fluid/net.o",  # the network type: vertices, arcs, capacity sets; no solver
    "controller/pick/model.o",  # a pick's cost model and degree: a fabric's numbers
)
MAIN = "controller/ofcd/ofcd_main.o"

# A use that links an engine into ofcd: (file, why) -> the engine's
# symbols it uses. Each would be a planner job still to be made.
ROOTS = {
}

def tables(objs):
    """{obj: (defined, used)} of each object's global symbols, from nm -A -P
    run on many objects at once."""
    out = {o: (set(), set()) for o in objs}
    for obj, lines in per_object(["nm", "-A", "-P"], objs, nm_prefix).items():
        for rest in lines:
            parts = rest.split()
            if len(parts) < 2:
                continue
            if parts[1] == "U":
                out[obj][1].add(parts[0])
            elif parts[1] in "TDBRGSVW":
                out[obj][0].add(parts[0])
    return out


def objects(build):
    top = os.path.join(build, "obj")
    found = []
    for d, _, names in os.walk(top):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), top)
            # a program's main is its own; tests, benches and the MPI
            # side are built apart
            if n.endswith(".o") and (rel == MAIN or not (
                    n.endswith("_main.o") or rel.startswith(("tests/", "bench/", "exec/mpi/")))):
                found.append(rel)
    return sorted(found)


def linked(syms):
    """The objects ofcd's main reaches, and the symbols of each one that
    another linked object uses (who: symbol -> its users)."""
    owner = {}
    for o, (defs, _) in syms.items():
        for s in defs:
            owner.setdefault(s, o)
    have, todo, users = {MAIN}, [MAIN], {}
    while todo:
        o = todo.pop()
        for s in syms[o][1]:
            d = owner.get(s)
            if d is None or d == o:
                continue
            users.setdefault((o, d), set()).add(s)
            if d not in have:
                have.add(d)
                todo.append(d)
    return have, users


def engine(rel):
    return rel.startswith(ENGINES) and rel not in LOOKUPS


def binary_engine_symbols(build, syms):
    """Engine symbols build/ofcd holds (nm on the program itself): its global
    ones, as a file's static function may share a name with an engine's."""
    out = subprocess.run(["nm", "-P", "--defined-only", os.path.join(build, "ofcd")],
                         capture_output=True, text=True, check=True).stdout
    mine = {s for o, (defs, _) in syms.items() if engine(o) for s in defs}
    return sorted({p[0] for p in (l.split() for l in out.splitlines()) if len(p) > 1 and p[1] in "TDBRGSVW" and p[0] in mine})


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("Usage: ")[1].split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--forget", default=None)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.build, "ofcd")) or not os.path.exists(
            os.path.join(a.build, "obj", MAIN)):
        print(f"check-engines: {a.build}/ofcd is missing: build first (make)", file=sys.stderr)
        return 2
    top = os.path.join(a.build, "obj")
    rels = objects(a.build)
    full = tables([os.path.join(top, r) for r in rels])
    syms = {r: full[os.path.join(top, r)] for r in rels}
    have, users = linked(syms)
    found = {}
    for (o, d), ss in users.items():
        if not engine(o) and engine(d):
            found.setdefault(o[:-2] + ".c", set()).update(ss)
    allowed = {}
    for (f, why), ss in ROOTS.items():
        if f != a.forget:
            allowed.setdefault(f, set()).update(ss)
    bad = 0
    for f in sorted(found):
        new = found[f] - allowed.get(f, set())
        if new:
            bad += 1
            print(f"check-engines: {f} links an engine into ofcd, not listed: "
                  f"{', '.join(sorted(new))} (ask a planner process: planner_ask.c)")
    for f in sorted(allowed):
        gone = allowed[f] - found.get(f, set())
        if gone:
            bad += 1
            print(f"check-engines: {f} no longer links {', '.join(sorted(gone))} into ofcd: "
                  f"remove it from ROOTS (scripts/check-engines.py)")
    held = binary_engine_symbols(a.build, syms)
    if held and not found:
        bad += 1
        print(f"check-engines: build/ofcd holds {len(held)} engine symbol(s) though no file "
              f"uses one: {', '.join(held[:8])}")
    nobj = sum(1 for o in have if engine(o))
    if a.list:
        for (f, why), ss in sorted(ROOTS.items()):
            print(f"{f}: {why}: {', '.join(sorted(ss & found.get(f, set())))}")
    if bad:
        print(f"check-engines: {bad} problem(s)")
        return 1
    if not found:
        print("check-engines: ofcd links no engine (no object, no symbol in build/ofcd)")
        return 0
    print(f"check-engines: ofcd links {nobj} engine object(s), {len(held)} engine symbol(s), "
          f"through {sum(len(s) for s in found.values())} use(s) in {len(found)} file(s), "
          f"each listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
