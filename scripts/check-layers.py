#!/usr/bin/env python3
"""Check that ofc's files and folders form a stack: no circles.

Two kinds of arrows, both read from what the compiler saw, not from names:

  calls     file A -> file B when A's object refers to a symbol B's object
            defines (nm on $BUILD/obj/**.o, so macros and inline helpers
            that vanish at compile time draw no arrow);
  includes  file A -> header H for every #include "H" in A.

A folder is the directory a file sits in (controller/cli, drivers/emu, ...),
and an arrow between files is an arrow between their folders. The check
fails when:

  - two or more source files call each other in a circle;
  - two or more folders depend on each other in a circle (calls or includes);
  - a file includes a private header (internal.h, or any header not named
    after its folder or types.h) of another folder;
  - an object holds writable static data (a mutable global: .data, .bss,
    thread-local) that GLOBALS below does not list with its reason. The
    map (docs/ARCHITECTURE.md, "Contracts") says there are none but these;
  - ofcd's thread line is crossed: a file of controller/ofcd/ includes,
    directly or through another header, both the mutation worker's header
    (worker.h) and the loop thread's (conn.h or loop.h), unless THREAD_BOTH
    lists it with its reason; or a half of struct ofcd (struct ofcd_loop,
    struct ofcd_worker) is defined outside its side's header, where any
    file could reach it.

Usage: scripts/check-layers.py [--build DIR] [--root DIR] [--order]
  --order   print the folders from the bottom of the stack up, with what
            each depends on (for docs/ARCHITECTURE.md).
  --root    the tree to check (default: the one this script is in; the
            test of the checker gives it a small tree of its own).
Exit status: 0 no circle, 1 a circle, a private include, a mutable global or
ofcd's thread line crossed, 2 usage.
"""
import argparse
import os
import re
import sys

from objtables import nm_prefix, objdump_header, per_object

MODULES = [
    "util", "topo", "sched", "rwa", "bfb", "alltoall", "baselines", "optree", "fluid", "drivers",
    "exec", "controller",
]
# Built outside libofc with their own compiler, as the Makefile says.
OUTSIDE = ("exec/mpi/",)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# The mutable globals there are, each with why it is one: (file, name) ->
# reason. A function's static is named by its own name: objdump shows gcc's
# as NAME.N and clang's (make check) as FUNCTION.NAME.
GLOBALS = {
    ("topo/symmetry.c", "nauty_lock"): "nauty keeps global state: one call at a time",
    ("topo/symmetry.c", "nauty_active"): "the call nauty is running, under nauty_lock",
    ("controller/reconfig/ctl_lock.c", "locks_held"): "flock is per process and its descriptors are copied into forked children: whether a ctl of this process holds a lock",
    ("util/mem.c", "oom_hook"): "set once by a main before any thread starts",
    ("util/mem.c", "mem_base"): "set once by a constructor when the program is loaded, before main",
    ("rwa/lp_solver.c", "refused_said"): "a refused LP plugin is said once a process",
    ("rwa/lp.c", "lpsolve_mu"): "lp_solve's first model, made once a process before any other (its BLAS set-up races)",
    ("rwa/lp.c", "lpsolve_ready"): "lp_solve's first model was made, under lpsolve_mu",
    ("controller/reconfig/etcd.c", "cu"): "libcurl's calls, dlopen'd once a process",
    ("drivers/device.c", "netconf_loaded"): "the netconf plugin's driver, dlopen'd once a process",
    ("drivers/device.c", "netconf_why"): "why the netconf plugin did not load, once a process",
    ("drivers/device.c", "once"): "the netconf plugin, dlopen'd once a process",
    ("controller/reconfig/etcd.c", "curl_once"): "libcurl's calls, dlopen'd once a process",
    ("controller/cli/https.c", "exiting"): "ofc is leaving: its transfers stop at once",
    ("controller/cli/https.c", "threads_mu"): "the transfers' threads, joined at exit",
    ("controller/cli/https.c", "threads"): "the transfers' threads, joined at exit",
    ("controller/cli/https.c", "nthreads"): "the transfers' threads, joined at exit",
    ("controller/cli/https.c", "registered"): "the exit handler, registered once",
    ("controller/cli/main.c", "cli_command"): "the command's name for messages, set once",
    ("controller/cli/main.c", "name"): "the command's name for messages, set once",
    ("drivers/emu/emu.c", "got_signal"): "an emulator's signal flag",
    ("drivers/netconf_session.c", "once"): "libnetconf2's process-wide log quieted once",
    ("drivers/netconf_session.c", "last_log"): "libnetconf2's last log line, per thread",
    ("controller/ofcd/snapshot.c", "serials"): "each snapshot's serial, one atomic count a process",
}
# ofcd's thread line: the headers of each side, and which struct holds each
# side's half of the daemon's state (complete in that header alone).
OFCD = "controller/ofcd/"
WORKER_SIDE = {OFCD + "worker.h"}
LOOP_SIDE = {OFCD + "conn.h", OFCD + "loop.h"}
THREAD_STATE = {"ofcd_loop": OFCD + "conn.h", "ofcd_worker": OFCD + "worker.h"}
# Files of controller/ofcd/ allowed both sides' headers, each with why. None:
# a file that needs both is two files, or its halves talk through a job or
# a note (docs/ARCHITECTURE.md, "controller/ofcd/, by the thread that runs
# it").
THREAD_BOTH = {}
STRUCT_DEF = re.compile(r"^\s*struct\s+(\w+)\s*\{", re.M)
# Sections of writable static data, and the C++ runtime's own entries
# (lp_clp*.cc: iostream's init, exception typeinfo references), and the
# table clang's AddressSanitizer adds to every object with globals (make
# check's build-san: __unnamed_N, one 64-byte entry a global, that it
# registers at start-up; no name of the source's).
WRITABLE = re.compile(r"^\.(data|bss|tdata|tbss)")
RUNTIME = re.compile(r"^(_ZStL8__ioinit|DW\.ref\.|__unnamed_\d+$)")


def cc_sources(root):
    """The C++ files (rwa/lp_clp*.cc): their objects are in libofc too."""
    return [f for f in (os.path.relpath(os.path.join(d, n), root)
                        for m in MODULES for d, _, ns in os.walk(os.path.join(root, m)) for n in ns)
            if f.endswith(".cc")]


def sources(root):
    out = []
    for m in MODULES:
        for d, _, files in os.walk(os.path.join(root, m)):
            for f in files:
                rel = os.path.relpath(os.path.join(d, f), root)
                if f.endswith((".c", ".h")) and not rel.startswith(OUTSIDE):
                    out.append(rel)
    return sorted(out)


def mutable_globals(build, files):
    """(file, name) of every writable static datum in the objects of files,
    from their symbol tables (objdump -t), less the C++ runtime's."""
    objs = {}
    for src in files:
        if not src.endswith((".c", ".cc")):
            continue
        obj = os.path.join(build, "obj", re.sub(r"\.cc?$", ".o", src))
        if os.path.exists(obj):
            objs[obj] = src
    tables = per_object(["objdump", "-t"], list(objs), objdump_header)
    out = []
    for obj, src in objs.items():
        for line in tables.get(obj, ()):
            parts = line.split()
            if "O" not in parts[1:4] or len(parts) < 5:
                continue
            section = next((p for p in parts if p.startswith(".")), "")
            if not WRITABLE.match(section) or section.startswith(".data.rel.ro"):
                continue
            name = parts[-1]
            if not RUNTIME.match(name):
                out.append((src, re.sub(r"\.\d+$", "", name).rsplit(".", 1)[-1]))
    return sorted(set(out))


def folder(path):
    return os.path.dirname(path)


def public_header(path):
    """A folder's public header is named after it: topo/topo.h,
    controller/cli/cli.h; beside it a types.h may hold the types other
    folders take by value without the API (sched/types.h: the collective
    the fabric model names)."""
    d = folder(path)
    return os.path.basename(path) in (os.path.basename(d) + ".h", "types.h")


def symbol_arrows(root, build, files):
    objs = {}
    for src in files:
        if not src.endswith(".c"):
            continue
        obj = os.path.join(build, "obj", src[:-2] + ".o")
        if not os.path.exists(obj):
            sys.exit(f"check-layers: {obj} is missing: build first (make)")
        objs[obj] = src
    tables = per_object(["nm", "-A", "-P"], list(objs), nm_prefix)
    defined, used = {}, {}
    for obj, src in objs.items():
        for line in tables.get(obj, ()):
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                used.setdefault(src, set()).add(name)
            elif kind in "TDBRGSVW" and kind.isupper():
                defined.setdefault(name, src)
    arrows = {}
    for src, names in used.items():
        for n in names:
            dst = defined.get(n)
            if dst and dst != src:
                arrows.setdefault(src, {}).setdefault(dst, set()).add(n)
    return arrows


def include_arrows(root, files):
    arrows, problems = {}, []
    known = set(files)
    for src in files:
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            if inc not in known:
                continue  # generated protobuf headers, system headers
            arrows.setdefault(src, set()).add(inc)
            if folder(inc) != folder(src) and not public_header(inc):
                problems.append(f"{src} includes {inc}, a private header of {folder(inc)}/")
    return arrows, problems


def thread_line(root, files, incs):
    """ofcd's files that reach both threads' headers, and halves of struct
    ofcd defined outside their side's header, as problems."""
    problems = []

    def reach(f, seen):
        for h in incs.get(f, ()):
            if h not in seen:
                seen.add(h)
                reach(h, seen)
        return seen

    for src in files:
        if not src.startswith(OFCD) or src in WORKER_SIDE | LOOP_SIDE:
            continue
        got = reach(src, set())
        worker, loop = sorted(got & WORKER_SIDE), sorted(got & LOOP_SIDE)
        if worker and loop and src not in THREAD_BOTH:
            problems.append(f"{src} includes {worker[0]} and {loop[0]}: the mutation worker's "
                            "state and the loop thread's in one file (split it, or hand a job "
                            "or a note across; THREAD_BOTH lists the exceptions)")
    for src in files:
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
            for name in STRUCT_DEF.findall(fh.read()):
                if name in THREAD_STATE and src != THREAD_STATE[name]:
                    problems.append(f"{src} defines struct {name}, which only "
                                    f"{THREAD_STATE[name]} may: one thread's half of struct ofcd")
    return problems


def circles(nodes, edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        # iterative Tarjan: (node, iterator over successors)
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description="no circles among ofc's files and folders")
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--order", action="store_true")
    ap.add_argument("--root")
    args = ap.parse_args()
    root = os.path.abspath(args.root) if args.root else \
        os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    build = args.build if os.path.isabs(args.build) else os.path.join(root, args.build)

    files = sources(root)
    calls = symbol_arrows(root, build, files)
    incs, problems = include_arrows(root, files)
    problems += thread_line(root, files, incs)

    bad = 0
    for comp in circles(set(files), {k: set(v) for k, v in calls.items()}):
        bad += 1
        print("check-layers: these files call each other in a circle:")
        for a in comp:
            for b in sorted(set(calls.get(a, {})) & set(comp)):
                names = sorted(calls[a][b])
                more = f" and {len(names) - 4} more" if len(names) > 4 else ""
                print(f"  {a} -> {b}: {', '.join(names[:4])}{more}")

    fedges = {}
    why = {}
    for a, bs in calls.items():
        for b in bs:
            if folder(a) != folder(b):
                fedges.setdefault(folder(a), set()).add(folder(b))
                why.setdefault((folder(a), folder(b)), f"{a} calls {b} ({sorted(bs[b])[0]})")
    for a, bs in incs.items():
        for b in bs:
            if folder(a) != folder(b):
                fedges.setdefault(folder(a), set()).add(folder(b))
                why.setdefault((folder(a), folder(b)), f"{a} includes {b}")
    folders = {folder(f) for f in files}
    for comp in circles(folders, fedges):
        bad += 1
        print("check-layers: these folders depend on each other in a circle:")
        for a in comp:
            for b in sorted(fedges.get(a, set()) & set(comp)):
                print(f"  {a}/ -> {b}/: {why[(a, b)]}")
    for p in problems:
        bad += 1
        print(f"check-layers: {p}")
    for src, name in mutable_globals(build, files + cc_sources(root)):
        if (src, name) not in GLOBALS:
            bad += 1
            print(f"check-layers: {src}: '{name}' is a mutable global (writable static data): "
                  "hand it down from the caller, or list it in GLOBALS with its reason")

    if args.order and not bad:
        # bottom first: a folder after everything it depends on
        level = {}

        def depth(f, seen=()):
            if f not in level:
                level[f] = 1 + max((depth(g) for g in fedges.get(f, ())), default=-1)
            return level[f]

        for f in folders:
            depth(f)
        for f in sorted(folders, key=lambda x: (level[x], x)):
            deps = ", ".join(sorted(fedges.get(f, ())))
            print(f"{level[f]:2}  {f}/" + (f"  -> {deps}" if deps else ""))
    if bad:
        print(f"check-layers: {bad} problem(s)")
        return 1
    print(f"check-layers: {len(files)} files in {len(folders)} folders, no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
