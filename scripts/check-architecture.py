#!/usr/bin/env python3
"""Hold docs/ARCHITECTURE.md's derivable claims to the code.

The map is prose, but some of what it says can be read back from the tree,
and a list that nobody checks goes stale the first time a caller is added.
This checks:

  paths     every file or folder the map names exists: a path from the
            root, a path's tail (cli/common.c is controller/cli/common.c),
            a bare file name somewhere in the tree, or a glob (engine_*.c)
            that matches one;
  symbols   `name` (FILE...) and `name`, FILE: FILE defines name (a
            function, a table, a macro, a struct or an enum);
  callers   each use case (the "Use cases" section: **Title**: `fn`
            (FILE...) ... "Called by" ...): the files the map names after
            "Called by" are exactly the source files outside tests and
            benchmarks that call fn;
  includes  "FILE.h includes only A, B and C": the header's own #includes
            are those;
  threads   every thread ofcd's code starts (pthread_create in
            controller/ofcd/, controller/reconfig/, drivers/ and
            util/parallel.c) is named by the function it runs, `fn`, in the
            map's threads paragraph (the one that begins "ofcd's threads"),
            with the file that starts it.

Usage: scripts/check-architecture.py [--root DIR] [--map FILE]
Exit status: 0 the map holds, 1 a claim does not (each printed as
MAP:LINE: why), 2 usage.
"""
import argparse
import fnmatch
import os
import re
import sys

SKIP_DIRS = {".git", "build", "shared", "node_modules"}
SOURCE_EXT = (".c", ".h", ".cc", ".py", ".sh", ".proto", ".js", ".css")
# Folders whose code is not a door of the product: a call from them does not
# make a caller of a use case.
NOT_DOORS = ("tests/", "bench/")
THREAD_SCOPE = ("controller/ofcd/", "controller/reconfig/", "drivers/", "util/parallel.c")
PATH_RE = re.compile(r"(?<![\w./-])((?:[\w.*-]+/)*[\w*-]+\.(?:c|h|cc|py|sh|proto|js|css|yaml)"
                     r"|(?:[a-z][\w-]*/)+)(?![\w/-])")
SYMBOL_FILE_RE = re.compile(r"`([A-Za-z_]\w*)(?:\(\)|\[\])?`\s*(?:\(|,)\s*"
                            r"((?:[\w-]+/)*[\w-]+\.[ch])\b")
INCLUDES_RE = re.compile(r"`?((?:[\w-]+/)*[\w-]+\.h)`? includes only ((?:`?[\w/.-]+\.h`?"
                         r"(?:,\s*|\s+and\s+)?)+)")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PTHREAD_RE = re.compile(r"pthread_create\s*\([^,]*,[^,]*,\s*(\w+)")


def tree_files(root):
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build-"))
        for n in names:
            out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


class Tree:
    def __init__(self, root):
        self.root = root
        self.files = tree_files(root)
        self.dirs = {os.path.dirname(f) + "/" for f in self.files}
        for d in list(self.dirs):
            while "/" in d.rstrip("/"):
                d = d.rstrip("/").rsplit("/", 1)[0] + "/"
                self.dirs.add(d)
        self.text_cache = {}

    def text(self, path, code=False):
        key = (path, code)
        if key not in self.text_cache:
            try:
                t = open(os.path.join(self.root, path), encoding="utf-8", errors="replace").read()
            except OSError:
                t = ""
            self.text_cache[key] = strip_c_comments(t) if code else t
        return self.text_cache[key]

    def resolve(self, name):
        """The files a name in the map may mean (empty: none)."""
        if name.endswith("/"):
            if name in self.dirs:
                return [name]
            return [d for d in self.dirs if d.endswith("/" + name)]
        if "*" in name:
            pat = name if "/" in name else "*/" + name
            return [f for f in self.files if fnmatch.fnmatch(f, pat) or fnmatch.fnmatch(f, name)]
        if name in self.files:
            return [name]
        return [f for f in self.files if f.endswith("/" + name)]


def defines(text, name):
    """Whether C source text defines name (function, table, macro, type)."""
    n = re.escape(name)
    pats = [
        r"^[A-Za-z_][^;{}()\n]*\b" + n + r"\s*\([^;]*$",  # a function's head line
        r"^\s*#\s*define\s+" + n + r"\b",
        r"\b(?:struct|enum|union)\s+" + n + r"\s*\{",
        r"\b" + n + r"\s*\[[^\]]*\]\s*=",
        r"\(\s*\*\s*(?:const\s+)?" + n + r"\s*\[[^\]]*\]\s*\)\s*\(",  # a table of functions
        r"^[A-Za-z_][^;(\n]*\b" + n + r"\s*=",
        r"^\}\s*" + n + r"\s*;",
        r"^\s*" + n + r",?\s*(?:/\*.*)?$",  # an enumerator
        r"^\s*" + n + r"\s*=\s*[^=]",
    ]
    return any(re.search(p, text, re.M) for p in pats)


def calls(code, name):
    return re.search(r"(?<![\w.>])" + re.escape(name) + r"\s*\(", code) is not None


class Map:
    def __init__(self, path):
        self.path = path
        self.lines = open(path, encoding="utf-8").read().split("\n")

    def sections(self):
        """(heading, first line number, text) for each ## section."""
        out, cur, start, buf = [], None, 1, []
        for i, l in enumerate(self.lines, 1):
            if l.startswith("## "):
                if cur is not None:
                    out.append((cur, start, "\n".join(buf)))
                cur, start, buf = l[3:].strip(), i, []
            else:
                buf.append(l)
        if cur is not None:
            out.append((cur, start, "\n".join(buf)))
        return out

    def line_of(self, offset_text, needle, base):
        """The map's line of needle, searched from line base on."""
        for i in range(max(0, base - 1), len(self.lines)):
            if needle in self.lines[i]:
                return i + 1
        return base


def check_paths(m, tree, problems):
    in_fence = False
    for i, l in enumerate(m.lines, 1):
        if l.startswith("```"):
            in_fence = not in_fence
        for mm in PATH_RE.finditer(l):
            name = mm.group(1)
            if name.startswith(("build/", "http", "/", "share/", "etc/", "contrib/slurm's")):
                continue
            if name.startswith("foo") or re.search(r"(^|/)[A-Z][A-Z_]*\.", name):
                continue  # an example's name, or a placeholder (drivers/NAME.c)
            if name.endswith("/") and not re.match(r"^[a-z][\w-]*(?:/[\w-]+)*/$", name):
                continue
            if name.endswith("/") and "/" not in name.rstrip("/") and name.rstrip("/") not in {
                    d.rstrip("/").split("/")[-1] for d in tree.dirs}:
                continue  # a/b-style prose ("and/or") is no folder
            if not tree.resolve(name):
                problems.append("%s:%d: %s names %s, which is not in the tree" % (
                    m.path, i, "the map", name))


def check_symbols(m, tree, problems):
    for i, l in enumerate(m.lines, 1):
        text = l + " " + (m.lines[i] if i < len(m.lines) else "")
        for mm in SYMBOL_FILE_RE.finditer(text):
            if mm.start() >= len(l):
                continue
            sym, name = mm.group(1), mm.group(2)
            files = tree.resolve(name)
            if not files:
                continue  # check_paths says so
            if not any(defines(tree.text(f, code=True), sym) for f in files):
                problems.append("%s:%d: the map puts `%s` in %s, which does not define it"
                                % (m.path, i, sym, name))


def use_cases(m):
    """(line, function, named caller files) of each use case bullet."""
    out = []
    for head, start, text in m.sections():
        if head != "Use cases":
            continue
        lines = text.split("\n")
        bullets, cur = [], None
        for k, l in enumerate(lines):
            if l.startswith("- **"):
                cur = [start + 1 + k, l]
                bullets.append(cur)
            elif cur is not None and l.startswith("  "):
                cur[1] += "\n" + l
            else:
                cur = None
        for line, b in bullets:
            fm = re.match(r"- \*\*[^*]+\*\*:\s*`(\w+)`", b)
            if not fm:
                continue
            flat = " ".join(b.split())
            cm = re.search(r"Called by (.*?)(?:\.(?:\s+[A-Z`]|$)|$)", flat)
            named = PATH_RE.findall(cm.group(1)) if cm else None
            out.append((line, fm.group(1), named))
    return out


def check_callers(m, tree, problems):
    sources = [f for f in tree.files if f.endswith((".c", ".cc"))
               and not f.startswith(NOT_DOORS)]
    for line, fn, named in use_cases(m):
        if named is None:
            continue  # a use case without a "Called by" list claims no callers
        definers = {f for f in sources if defines(tree.text(f, code=True), fn)}
        actual = {f for f in sources if f not in definers and calls(tree.text(f, code=True), fn)}
        claimed = set()
        for name in named:
            files = [f for f in tree.resolve(name) if f in sources]
            claimed.update(files)
            if files and not any(f in actual for f in files):
                problems.append("%s:%d: the map names %s as a caller of %s; it does not call it"
                                % (m.path, line, name, fn))
        for f in sorted(actual - claimed):
            problems.append("%s:%d: %s calls %s, but the map's \"Called by\" does not name it"
                            % (m.path, line, f, fn))


def check_includes(m, tree, problems):
    for i, l in enumerate(m.lines, 1):
        text = " ".join((l + " " + (m.lines[i] if i < len(m.lines) else "")).split())
        for mm in INCLUDES_RE.finditer(text):
            if mm.start() >= len(" ".join(l.split())) + 1:
                continue
            header = mm.group(1)
            files = [f for f in tree.resolve(header) if f.endswith(".h")]
            if len(files) != 1:
                problems.append("%s:%d: %s is not one header of the tree" % (m.path, i, header))
                continue
            said = set(re.findall(r"[\w/.-]+\.h", mm.group(2)))
            have = set(INCLUDE_RE.findall(tree.text(files[0])))
            short = {h: h for h in have}
            short.update({h.split("/")[-1]: h for h in have})
            missing = sorted(h for h in have if h not in said and h.split("/")[-1] not in said)
            extra = sorted(s for s in said if s not in short)
            if missing or extra:
                problems.append("%s:%d: %s includes %s; the map says only %s" % (
                    m.path, i, files[0], ", ".join(sorted(have)), ", ".join(sorted(said))))


def check_threads(m, tree, problems):
    para, line = None, 0
    for i, l in enumerate(m.lines, 1):
        if l.startswith("ofcd's threads"):
            buf = []
            for k in range(i - 1, len(m.lines)):
                if not m.lines[k].strip():
                    break
                buf.append(m.lines[k])
            para, line = " ".join(" ".join(buf).split()), i
            break
    if para is None:
        problems.append("%s: no paragraph beginning \"ofcd's threads\" lists the threads" % m.path)
        return
    for f in tree.files:
        if not f.endswith(".c") or not f.startswith(THREAD_SCOPE) or "/emu/" in f:
            continue
        for fn in PTHREAD_RE.findall(tree.text(f, code=True)):
            base = f.split("/")[-1]
            if "`%s`" % fn not in para:
                problems.append("%s:%d: %s starts a thread running %s; the threads paragraph "
                                "does not name `%s`" % (m.path, line, f, fn, fn))
            elif base not in para:
                problems.append("%s:%d: the threads paragraph names `%s` but not %s, which "
                                "starts it" % (m.path, line, fn, base))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--map", help="the map to check (default ROOT/docs/ARCHITECTURE.md)")
    a = ap.parse_args()
    path = a.map or os.path.join(a.root, "docs", "ARCHITECTURE.md")
    try:
        m = Map(path)
    except OSError as e:
        print("check-architecture: %s" % e, file=sys.stderr)
        return 2
    tree = Tree(a.root)
    problems = []
    check_paths(m, tree, problems)
    check_symbols(m, tree, problems)
    check_callers(m, tree, problems)
    check_includes(m, tree, problems)
    check_threads(m, tree, problems)
    for p in problems:
        print(p)
    if problems:
        print("check-architecture: %d claims of %s do not hold" % (len(problems), path))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
