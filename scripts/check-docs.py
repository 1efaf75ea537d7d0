#!/usr/bin/env python3
"""Every command the docs show is run by a test.

Reads README.md and docs/*.md, takes the command lines out of their code
blocks (indented or fenced) and checks each one; `make test` runs it. A
line is a command when it starts with build/ofc, build/ofcd, build/ocs-emu,
build/mrr-emu, build/ofc-gateway, build/netconf-emu, build/ofc-hostd, the same without
build/, make, sh or python3 (after a `$ ` prompt, if any); a trailing `\\`
continues it, and so does a deeper indented line starting with `[`, `-` or
`|` (a long synopsis). Text after two spaces or ` # ` is the line's
description. The rules:

1. A synopsis (a placeholder such as FILE, SPEC, N or HOST:PORT, brackets,
   `a|b` alternatives, `...`) cannot be run: its command must exist and
   every option it shows must be in that command's --help.
2. A block preceded by `<!-- check-docs: run -->` is a script: run as one
   `sh -e` script, as written, and it must succeed. `run root` blocks need
   root and network namespaces; they run in a mount namespace of their own
   with a private /run/netns, so namespaces named after a shipped config
   never meet another run's (skipped, and said, without root).
3. Any other concrete command of the read-only, quick kind (validate, show,
   topo, schedule, optree, rwa, finder without --socket; --help, --version;
   ofcd --check) is run here, and must exit 0; when the docs show its
   output (`$ cmd` followed by lines), stdout must begin with those lines,
   up to a line `...`.
4. `make test` is this check's own caller; `make run` is run here.
5. Any other concrete command (devices, daemons, the testbed) must be run
   by a script block of rule 2 or by a test (tests/integration/*.sh,
   scripts/demo.sh): the same command once normalised, that is the binary
   without its directory ($OFC, $BUILD/ofc, build/ofc and ofc alike), files
   by their base name, and the options that only say where things are
   (--socket, --state-dir, --device, --credentials-dir, --port-file,
   --pid-file, --log-file, -o, --json) left out with their values, as are a
   test's bare $VARIABLE arguments.

6. A table preceded by `<!-- check-docs: options BINARY -->` lists that
   binary's options, one a row (the first cell's backquoted `--OPTION`):
   it must list every option `BINARY --help` prints (but --help and
   --version) and none that it does not, so the docs' table and the man
   page (made from --help) never disagree.
7. A reference `bench/results/PAGE.md, "SECTION"` (in the docs, and in
   the sources, scripts and tests) names a page that exists and the start
   of one of its headings (case aside); `bench/results/PAGE.md, section N`
   a heading numbered N; a bare `bench/results/PAGE.md` names a page that
   exists. In README.md and docs/, every figure with a unit (1.2 s, 49 MiB,
   2.85x, 7%) in the clause of such a reference (to a full stop or a
   semicolon) is found under the
   section it names (the whole page for a bare one), as written or as a
   more precise figure that rounds to it. bench/RESULTS.md is the pages'
   index: a section named after it is reported, and so is a page it does
   not link, and the index and its pages past 2,000 lines together.

A command no rule covers, a synopsis option the command lacks, a command
that fails, output that differs, an options table that is not the
binary's or a results section that is not there is reported as FILE:LINE: why, and the check exits 1. --list prints every command with the rule that took it.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

BINARIES = ("ofc", "ofcd", "ocs-emu", "mrr-emu", "ofc-gateway", "netconf-emu", "ofc-hostd")
COMMAND_RE = re.compile(
    r"^(?:build/(?:ofc|ofcd|ocs-emu|mrr-emu|ofc-gateway|netconf-emu|ofc-hostd)|ofc|ofcd|ocs-emu"
    r"|mrr-emu|ofc-gateway|netconf-emu|ofc-hostd|make|sh|python3)(?:\s|$)")
SAFE_OFC = {"validate", "show", "topo", "schedule", "optree", "rwa", "finder"}
WHERE_OPTS = {"--socket", "--state-dir", "--device", "--credentials-dir", "--port-file",
              "--pid-file", "--log-file", "-o"}
WHERE_FLAGS = {"--json"}
MARKER_RE = re.compile(r"^\s*<!--\s*check-docs:\s*run\b([^>]*)-->\s*$")
OPTIONS_RE = re.compile(r"^\s*<!--\s*check-docs:\s*options\s+([a-z-]+)\s*-->\s*$")
HELP_OPT_RE = re.compile(r"(?<![A-Za-z0-9-])--[a-z][a-z0-9-]*")
UPPER_RE = re.compile(r"^[A-Z][A-Z0-9_]*(?:[:=,.x][A-Z][A-Z0-9_]*)*(?:\.\.\.?)?$")
SAFE_TIMEOUT = 180
BLOCK_TIMEOUT = 180


class Block:
    def __init__(self, path, line, marker):
        self.path, self.line, self.marker = path, line, marker
        self.lines = []  # (line number, text without the block's indent)


class Command:
    def __init__(self, path, line, text, shown, block):
        self.path, self.line, self.text, self.block = path, line, text, block
        self.shown = shown  # output lines the docs show after `$ cmd`, or None
        self.rule = None
        self.problems = []

    def where(self):
        return "%s:%d" % (self.path, self.line)


def read_blocks(path):
    """The code blocks of a Markdown file, with the marker before each."""
    blocks, marker, fence, cur = [], None, None, None
    prev_blank = True
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, raw in enumerate(lines, 1):
        if fence is not None:
            if raw.strip().startswith(fence):
                blocks.append(cur)
                fence, cur = None, None
            else:
                cur.lines.append((n, raw))
            continue
        m = MARKER_RE.match(raw)
        if m:
            if cur is not None:
                blocks.append(cur)
                cur = None
            marker = m.group(1).split()
            prev_blank = True
            continue
        st = raw.strip()
        if st.startswith("```") or st.startswith("~~~"):
            fence = st[:3]
            cur = Block(path, n + 1, marker)
            marker = None
            continue
        if raw.startswith("    ") and (cur is not None or prev_blank):
            if cur is None:
                cur = Block(path, n, marker)
                marker = None
            cur.lines.append((n, raw[4:]))
            continue
        if not st and cur is not None:
            cur.lines.append((n, ""))
            continue
        if cur is not None:
            blocks.append(cur)
            cur = None
        if st:
            marker = marker if st.startswith("<!--") else None
        prev_blank = not st
    if cur is not None:
        blocks.append(cur)
    for b in blocks:
        while b.lines and not b.lines[-1][1].strip():
            b.lines.pop()
    return blocks


def strip_description(text):
    """The command without the description the docs put after it."""
    m = re.search(r"\s#\s", text)
    if m:
        text = text[:m.start()]
    m = re.search(r"\S(\s{2,})\S", text)
    if m:
        text = text[:m.start(1)]
    return text.strip()


def block_commands(b):
    """The commands of a block, continuation lines joined."""
    out, i, lines = [], 0, b.lines
    while i < len(lines):
        n, text = lines[i]
        body = text.strip()
        prompt = body.startswith("$ ")
        if prompt:
            body = body[2:].strip()
        if not COMMAND_RE.match(body) or (body.startswith("ofc") and re.match(r"^ofc\s*=", body)):
            i += 1
            continue
        indent = len(text) - len(text.lstrip())
        joined = body
        while joined.endswith("\\") and i + 1 < len(lines):
            i += 1
            joined = joined[:-1].rstrip() + " " + lines[i][1].strip()
        while i + 1 < len(lines):
            nxt = lines[i + 1][1]
            ind = len(nxt) - len(nxt.lstrip())
            if nxt.strip() and ind > indent and nxt.strip()[0] in "[-|":
                i += 1
                joined += " " + nxt.strip()
            else:
                break
        shown = None
        if prompt:
            shown = []
            while i + 1 < len(lines) and not lines[i + 1][1].strip().startswith("$ "):
                i += 1
                shown.append(lines[i][1].rstrip())
            while shown and not shown[-1].strip():
                shown.pop()
        out.append(Command(b.path, n, strip_description(joined), shown, b))
        i += 1
    return out


def flat(text):
    """Command substitutions, $(...), as one plain word."""
    return re.sub(r"\$\([^()]*\)", "subst", text)


def tokens(text):
    text = flat(text)
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


def raw_tokens(text):
    """Tokens with their quotes kept, to tell a quoted argument from a pattern."""
    text = flat(text)
    try:
        lex = shlex.shlex(text, posix=False, punctuation_chars=False)
        lex.whitespace_split = True
        return list(lex)
    except ValueError:
        return text.split()


def is_synopsis(text):
    for t in raw_tokens(text):
        if t[:1] in "'\"":
            continue
        if t == "|":
            continue
        if any(c in t for c in "[]()") or "|" in t or t.endswith(".."):
            return True
        value = t.split("=", 1)[1] if t.startswith("-") and "=" in t else t
        if UPPER_RE.match(value) and not value.isdigit():
            return True
    return False


def binary_of(tok):
    base = tok.rsplit("/", 1)[-1]
    base = base.replace("${OFCD:-$BUILD/ofcd}", "ofcd")
    for b in BINARIES:
        if base in (b, "$" + b.upper().replace("-", "_")):
            return b
    if base in ("$OFC", "${OFC}"):
        return "ofc"
    if base in ("$OFCD", "${OFCD}"):
        return "ofcd"
    return None


def normalise(text, from_test=False):
    """The command as rule 5 compares it, or None when it is none of ours."""
    toks = tokens(text)
    while toks and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", toks[0]):
        toks = toks[1:]  # VAR=value before the command
    if toks and toks[0] == "env":
        toks = toks[1:]
        while toks and "=" in toks[0]:
            toks = toks[1:]
    if not toks:
        return None
    b = binary_of(toks[0])
    if b is None:
        return None
    out, i = [b], 1
    while i < len(toks):
        t = toks[i]
        if t in ("|", "||", "&&", ";", "&", ">", "2>", "<", ">>") or t.startswith((">", "2>")):
            break
        opt = t.split("=", 1)[0]
        if opt in WHERE_OPTS:
            i += 1 if "=" in t else 2
            continue
        if t in WHERE_FLAGS:
            i += 1
            continue
        if from_test and re.match(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$", t):
            i += 1
            continue
        if "/" in t and not t.startswith("-"):
            t = t.rstrip("/").rsplit("/", 1)[-1]
        out.append(t)
        i += 1
    return tuple(out)


def test_commands(root):
    """Normalised commands of the integration suites and the demo."""
    found = set()
    # test_docs.sh holds this check's own test page: its lines are not runs.
    paths = sorted(p for p in glob.glob(os.path.join(root, "tests/integration/*.sh"))
                   if not p.endswith("/test_docs.sh"))
    paths.append(os.path.join(root, "scripts/demo.sh"))
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text = f.read().replace("\\\n", " ")
        for line in text.split("\n"):
            toks = tokens(line)
            for k, t in enumerate(toks):
                if binary_of(t):
                    n = normalise(shlex.join(toks[k:]), from_test=True)
                    if n:
                        found.add(n)
    return found


def help_argv(cmd_toks):
    """argv asking for the --help of the command a synopsis shows."""
    b = binary_of(cmd_toks[0])
    argv, i, words = [b], 1, 0
    while i < len(cmd_toks):
        t = cmd_toks[i]
        if t == "--socket" and b == "ofc":
            argv += ["--socket", "/nonexistent/ofcd.sock"]
            i += 2
            continue
        if words < 2 and re.match(r"^[a-z][a-z-]*(\|[a-z-]+)*$", t):
            argv.append(t.split("|")[0])
            words += 1
            i += 1
            continue
        break
    return argv + ["--help"]


def options_of(text):
    opts = []
    for t in raw_tokens(text):
        if t[:1] in "'\"":
            continue
        for alt in re.split(r"[|\[\]()]", t):
            alt = alt.strip(",")
            if re.match(r"^--[a-z][a-z0-9-]*", alt) or alt == "-o":
                opts.append(alt.split("=", 1)[0].rstrip("."))
    return opts


class Checker:
    def __init__(self, root, build, jobs):
        self.root, self.build, self.jobs = root, build, jobs
        self.scratch = tempfile.mkdtemp(prefix="ofc-docs.")
        self.help_cache = {}
        for d in ("configs", "proto", "examples", "tests", "docs", "contrib", "python", "scripts"):
            os.symlink(os.path.join(root, d), os.path.join(self.scratch, d))
        os.symlink(os.path.abspath(os.path.join(root, build)), os.path.join(self.scratch, "build"))
        os.mkdir(os.path.join(self.scratch, "bin"))
        for b in BINARIES:
            os.symlink(os.path.abspath(os.path.join(root, build, b)),
                       os.path.join(self.scratch, "bin", b))
        self.env = dict(os.environ)
        self.env.pop("OFC_SOCKET", None)
        self.env["PATH"] = os.path.join(self.scratch, "bin") + ":" + self.env.get("PATH", "")
        self.env["OFC_STATE_DIR"] = os.path.join(self.scratch, "state")

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def help_text(self, argv):
        key = tuple(argv)
        if key not in self.help_cache:
            exe = [os.path.join(self.root, self.build, argv[0])] + argv[1:]
            p = subprocess.run(exe, capture_output=True, text=True, timeout=30, env=self.env)
            self.help_cache[key] = (p.returncode, p.stdout + p.stderr)
        return self.help_cache[key]

    def check_options(self, c):
        toks = tokens(c.text.split(" | ")[0])
        if not toks or not binary_of(toks[0]):
            return
        argv = help_argv(toks)
        rc, text = self.help_text(argv)
        if rc != 0:
            c.problems.append("'%s' exits %d: the command the docs show does not exist"
                              % (" ".join(argv), rc))
            return
        for o in options_of(c.text.split(" | ")[0]):
            if not re.search(re.escape(o) + r"(?![a-z0-9-])", text):
                c.problems.append("%s: '%s' is not an option of '%s'"
                                  % (c.text, o, " ".join(argv[:-1])))

    def run_safe(self, c):
        try:
            p = subprocess.run(["sh", "-c", c.text], cwd=self.scratch, env=self.env,
                               capture_output=True, text=True, timeout=SAFE_TIMEOUT)
        except subprocess.TimeoutExpired:
            c.problems.append("'%s' took more than %d s" % (c.text, SAFE_TIMEOUT))
            return
        if p.returncode != 0:
            c.problems.append("'%s' exited %d: %s" % (c.text, p.returncode,
                                                      (p.stderr or p.stdout).strip()[:300]))
            return
        if c.shown:
            got = p.stdout.split("\n")
            for k, want in enumerate(c.shown):
                if want.strip() == "...":
                    break
                have = got[k].rstrip() if k < len(got) else "(no line)"
                if have != want:
                    c.problems.append("'%s' prints, at line %d of its output:\n      %s\n"
                                      "    the docs show:\n      %s" % (c.text, k + 1, have, want))
                    break

    def run_block(self, b):
        """Rule 2: the block as one script. Returns a problem or None."""
        script = "\n".join(t for _, t in b.lines) + "\n"
        path = os.path.join(self.scratch, "block-%d.sh" % b.line)
        with open(path, "w") as f:
            f.write(script)
        argv = ["sh", "-e", path]
        if "root" in b.marker:
            # As the testbed suites decide: root, and namespaces this
            # machine (or container) lets us make. A PID namespace of its
            # own too: what the block started detached (the testbed's
            # agents, in sessions of their own) ends with it when the block
            # fails before its `testbed down`.
            if os.geteuid() != 0 or shutil.which("unshare") is None or subprocess.run(
                    ["unshare", "--net", "--pid", "--fork", "--mount-proc", "true"],
                    capture_output=True).returncode:
                return "skip"
            argv = ["unshare", "--pid", "--fork", "--mount-proc", "--propagation", "private",
                    "sh", "-c",
                    "mkdir -p /run/netns /run/lldpd && mount -t tmpfs ofc-docs /run/netns && "
                    "mount -t tmpfs ofc-docs /run/lldpd && "
                    "exec sh -e \"$0\"", path]
        # Output to a file, not a pipe: what the block leaves running in
        # the background would hold a pipe open, and the wait with it.
        log = path + ".out"
        with open(log, "w") as out_f:
            p = subprocess.Popen(argv, cwd=self.scratch, env=self.env, stdout=out_f,
                                 stderr=subprocess.STDOUT, start_new_session=True)
            try:
                rc = p.wait(timeout=BLOCK_TIMEOUT)
            except subprocess.TimeoutExpired:
                rc = "timeout (%d s)" % BLOCK_TIMEOUT
            finally:
                # What the block started in the background and left: its
                # own process group, the session started for it.
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                if p.poll() is None:
                    p.kill()
                    p.wait()
        with open(log, errors="replace") as f:
            out = f.read()
        if rc != 0:
            tail = "\n      ".join(out.strip().split("\n")[-12:])
            return "the block exited %s; its last lines:\n      %s" % (rc, tail)
        return None

    def run_make(self, c, target):
        p = subprocess.run(["make", "--no-print-directory", "BUILD=" + self.build, target],
                           cwd=self.root, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            c.problems.append("'make %s' exited %d: %s"
                              % (target, p.returncode, (p.stderr or p.stdout).strip()[-300:]))


def option_tables(path):
    """Rule 6: (line, binary, {option: line}) for each marked table."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    for n, raw in enumerate(lines, 1):
        m = OPTIONS_RE.match(raw)
        if not m:
            continue
        opts, k = {}, n
        while k < len(lines) and not lines[k].strip().startswith("|"):
            k += 1  # blank lines between the marker and the table
        while k < len(lines) and lines[k].strip().startswith("|"):
            first = lines[k].strip().strip("|").split("|")[0]
            for o in re.findall(r"`(--[a-z][a-z0-9-]*)", first):
                opts.setdefault(o, k + 1)
            k += 1
        out.append((n, m.group(1), opts))
    return out


def check_option_tables(ck, files):
    problems = []
    for path in files:
        for line, binary, opts in option_tables(path):
            if binary not in BINARIES:
                problems.append("%s:%d: options table of '%s', which is not one of %s"
                                % (path, line, binary, ", ".join(BINARIES)))
                continue
            rc, text = ck.help_text([binary, "--help"])
            want = set(HELP_OPT_RE.findall(text)) - {"--help", "--version"}
            if rc != 0 or not want:
                problems.append("%s:%d: '%s --help' exits %d and lists no option"
                                % (path, line, binary, rc))
                continue
            missing = sorted(want - set(opts))
            if missing:
                problems.append("%s:%d: the options table lacks %s ('%s --help' lists %s)"
                                % (path, line, ", ".join(missing), binary,
                                   "it" if len(missing) == 1 else "them"))
            for o in sorted(set(opts) - want):
                problems.append("%s:%d: the options table lists %s, which '%s --help' does "
                                "not" % (path, opts[o], o, binary))
    return problems


def classify(c):
    toks = tokens(c.text)
    if c.block.marker is not None:
        return "run-block"
    if toks[0] == "make":
        target = toks[1] if len(toks) > 1 else ""
        return "make-self" if target == "test" else "make-run" if target == "run" else "cover"
    if is_synopsis(c.text):
        return "synopsis"
    b = binary_of(toks[0])
    rest = toks[1:]
    if b and ("--help" in rest or "-h" in rest or "--version" in rest):
        return "safe"
    if b == "ofcd" and "--check" in rest:
        return "safe"
    if b == "ofc" and rest and rest[0] in SAFE_OFC and "--socket" not in rest:
        return "safe"
    return "cover"


RESULTS_REF_RE = re.compile(
    r'bench/(results/[A-Za-z0-9_.-]+\.md|RESULTS\.md)'
    r'(?:(?:,[ \t]*|[ \t]+)(?:\n[ \t]*(?:\*|#+|//)?[ \t]*)?"([^"\n]+(?:\n[^"\n]*){0,2})")?')
COMMENT_BREAK_RE = re.compile(r"\n[ \t]*(?:\*|#+|//)?[ \t]*")
RESULTS_SOURCES = ("*.c", "*.h", "*.cc", "*.sh", "*.py", "Makefile", "*.md")


def results_ref_files(root):
    """The files whose references to bench's results are checked besides the
    docs: the sources, scripts, tests and the results pages themselves."""
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("build", "shared")
                   and not x.startswith("build-")]
        for n in names:
            if any(glob.fnmatch.fnmatch(n, pat) for pat in RESULTS_SOURCES):
                out.append(os.path.relpath(os.path.join(d, n), root))
    # This file's own docstring shows the forms with placeholders.
    return sorted(f for f in out if f != os.path.join("scripts", "check-docs.py"))


# bench's results, the index and its pages together: each page holds its
# benchmark's current table, machine and command, and git the rounds
# before, so a page that grows is gathering rounds.
RESULTS_MAX_LINES = 2000


def check_results_index(index="bench/RESULTS.md", pages="bench/results",
                        max_lines=RESULTS_MAX_LINES):
    """The index links every page of bench/results/ (a page it lacks is
    found by no one who starts there), and the index and the pages hold at
    most max_lines lines."""
    try:
        text = open(index, encoding="utf-8").read()
    except OSError:
        return ["%s: missing: it is bench/results/'s index" % index]
    names = sorted(n for n in os.listdir(pages) if n.endswith(".md"))
    out = ["%s: bench/results/%s is not in the index" % (index, n)
           for n in names if "(results/%s)" % n not in text]
    lines = text.count("\n") + sum(
        open(os.path.join(pages, n), encoding="utf-8").read().count("\n") for n in names)
    if lines > max_lines:
        out.append("%s: the index and its pages hold %d lines, over %d: update a page's table "
                   "rather than add a round (git keeps the rounds)" % (index, lines, max_lines))
    return out


SECTION_NUM_RE = re.compile(r",?[ \t]*(?:\n[ \t]*)?section[ \t]+(\d+)\b")
# A figure with its unit, as the docs quote the pages' ("0.3 s", "49 MiB",
# a range "0.8-1.2 s"; "16,384 nodes" is a count, not a figure: no unit).
_NUM = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
FIGURE_RE = re.compile(r"(?<![\w.,:/-])" + _NUM + r"(?:-" + _NUM + r")?(?:[ \t]*|-)"
                       r"(s|ms|us|µs|ns|MiB|MB|GiB|GB|KiB|KB|kB|x|%|Gb/s|MB/s)(?![\w/])")
PAGE_NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")  # (commas taken out first)


def page_sections(path):
    """A page's headings, each (its words lowered, the text under it to the
    next heading of its level or above); None: no such page."""
    try:
        lines = open(path, encoding="utf-8").read().split("\n")
    except OSError:
        return None
    heads = [(i, len(l) - len(l.lstrip("#"))) for i, l in enumerate(lines) if l.startswith("#")]
    out = []
    for k, (i, level) in enumerate(heads):
        end = next((j for j, lv in heads[k + 1:] if lv <= level), len(lines))
        out.append((" ".join(lines[i].lstrip("#").split()).lower(), "\n".join(lines[i:end])))
    return out


def figure_found(fig, text):
    """Whether text holds the figure fig ("0.3", "16,384"), as written or as
    a more precise one that rounds to it (0.31 for 0.3)."""
    fig = fig.replace(",", "")
    places = len(fig.split(".")[1]) if "." in fig else 0
    want = float(fig)
    for m in PAGE_NUMBER_RE.finditer(text.replace(",", "")):
        if m.group(0) == fig or abs(round(float(m.group(0)), places) - want) < 10 ** -(places + 3):
            return True
    return False


def citing_sentence(text, start, end):
    """The clause around text[start:end] (to a full stop, a semicolon or a
    blank line either side), without its code spans."""
    s0 = max(text.rfind(stop, 0, start) for stop in (". ", ".\n", "; ", ";\n", "\n\n"))
    e = len(text)
    for stop in (". ", ".\n", "; ", ";\n", "\n\n"):
        k = text.find(stop, end)
        if k != -1:
            e = min(e, k)
    return re.sub(r"`[^`]*`", "", text[s0 + 1:e])


def cites_figures(f):
    return f == "README.md" or (f.startswith("docs" + os.sep) and f.endswith(".md"))


def check_results_refs(files, figures=cites_figures):
    """A reference `bench/results/PAGE.md, "SECTION"` names a page that
    exists and the start of one of its headings (case aside; the section may
    run on over a comment's next line); `, section N` a heading numbered N;
    a bare `bench/results/PAGE.md` names a page that exists. Pages are
    rewritten as figures change, and a reference that names none sends the
    reader nowhere; the figures the docs quote beside it are found there. The
    old form, `bench/RESULTS.md, "SECTION"`, names a section that moved to a
    page."""
    pages, problems, cited = {}, [], {}
    for f in files:
        try:
            text = open(f, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        for m in RESULTS_REF_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            page, section = m.group(1), m.group(2)
            if section:
                section = COMMENT_BREAK_RE.sub(" ", section)
            if page == "RESULTS.md":
                if section:
                    problems.append('%s:%d: bench/RESULTS.md is an index; name the page under '
                                    'bench/results/ that holds "%s"' % (f, line, section))
                continue
            path = "bench/" + page
            if path not in pages:
                pages[path] = page_sections(path)
            secs = pages[path]
            if secs is None:
                problems.append("%s:%d: %s does not exist" % (f, line, path))
                continue
            num = None if section else SECTION_NUM_RE.match(text, m.end())
            if num:
                section = num.group(1) + "."
            under = "\n".join(body for _, body in secs)
            if section:
                name = " ".join(section.split()).lower()
                hit = [body for h, body in secs if h.startswith(name)]
                if not hit:
                    problems.append('%s:%d: %s has no section "%s"' % (f, line, path,
                                                                       " ".join(section.split())))
                    continue
                under = hit[0]
            if figures(f):
                sentence = citing_sentence(text, m.start(), m.end())
                cited.setdefault(sentence, (f, line, []))[2].append(
                    (path + (', "%s"' % " ".join(section.split()) if section else ""), under))
    # A figure beside two references is found under either.
    for sentence, (f, line, refs) in cited.items():
        for g in FIGURE_RE.finditer(sentence):
            ends = [x for x in g.group(1, 2) if x]  # (both ends of a range, 0.8-1.2 s)
            if not all(any(figure_found(x, under) for _, under in refs) for x in ends):
                problems.append('%s:%d: %s does not hold the figure "%s" quoted beside it'
                                % (f, line, " or ".join(r for r, _ in refs), g.group(0)))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--list", action="store_true", help="print every command and its rule")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("files", nargs="*", help="Markdown files (default README.md docs/*.md)")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    files = a.files or ["README.md"] + sorted(glob.glob("docs/*.md"))
    blocks = [b for f in files for b in read_blocks(f)]
    cmds = [c for b in blocks for c in block_commands(b)]
    run_blocks = [b for b in blocks if b.marker is not None]
    in_runs = set()
    for b in run_blocks:
        for c in block_commands(b):
            n = normalise(c.text)
            if n:
                in_runs.add(n)
    in_tests = test_commands(root)
    ck = Checker(root, a.build, a.jobs)
    try:
        safe, makes = [], []
        for c in cmds:
            c.rule = classify(c)
            if c.rule in ("synopsis", "safe", "cover", "run-block"):
                ck.check_options(c)
            if c.rule == "safe":
                safe.append(c)
            elif c.rule == "make-run":
                makes.append(c)
            elif c.rule == "cover":
                n = normalise(c.text)
                if n and n in in_runs:
                    c.rule = "by-run-block"
                elif n and n in in_tests:
                    c.rule = "by-test"
                elif tokens(c.text)[0] == "make" and tokens(c.text)[1:2] and \
                        any(("make " + tokens(c.text)[1]) in open(p, encoding="utf-8").read()
                            for p in glob.glob("tests/integration/*.sh")):
                    c.rule = "by-test"
                else:
                    c.problems.append("'%s': no test runs this command (run it in a "
                                      "<!-- check-docs: run --> block, or in a test; "
                                      "scripts/check-docs.py says how they compare)" % c.text)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            list(ex.map(ck.run_safe, safe))
        done = set()
        for c in makes:
            if c.text not in done:
                done.add(c.text)
                ck.run_make(c, tokens(c.text)[1])
        refs = files if a.files else sorted(set(files) | set(results_ref_files(root)))
        table_problems = check_option_tables(ck, files) + check_results_refs(refs)
        if not a.files:
            table_problems += check_results_index()
        block_problem, skipped = {}, []
        for b in run_blocks:
            why = ck.run_block(b)
            if why == "skip":
                skipped.append(b)
            elif why:
                block_problem[b] = why
    finally:
        ck.close()
    failed = 0
    for b, why in block_problem.items():
        print("%s:%d: %s" % (b.path, b.line, why))
        failed += 1
    for c in cmds:
        if a.list:
            print("%-14s %s: %s" % (c.rule, c.where(), c.text))
        for p in c.problems:
            print("%s: %s" % (c.where(), p))
            failed += 1
    for p in table_problems:
        print(p)
        failed += 1
    for b in skipped:
        print("%s:%d: skipped: the block needs root and network and mount namespaces (uid %d)"
              % (b.path, b.line, os.geteuid()))
    counts = {}
    for c in cmds:
        counts[c.rule] = counts.get(c.rule, 0) + 1
    print("docs: %d commands in %d files: %d run here, %d in %d script blocks (%d run, %d "
          "skipped), %d covered by them, %d by tests, %d synopses checked against --help; "
          "%d problems"
          % (len(cmds), len(files), counts.get("safe", 0) + counts.get("make-run", 0),
             counts.get("run-block", 0), len(run_blocks), len(run_blocks) - len(skipped),
             len(skipped), counts.get("by-run-block", 0), counts.get("by-test", 0),
             counts.get("synopsis", 0), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
