#!/usr/bin/env python3
"""Write a man page (roff, man macros) for one of ofc's binaries from what
the binary itself prints for --help, so the page cannot drift from the
options: `make` regenerates it whenever the binary changes.

    scripts/man.py BUILD/ofc ofc 1 VERSION docs/man/ofc.extra DOCDIR OFCDATADIR \
        > BUILD/man/ofc.1

For ofc the page holds every command's --help (local commands, then the
ones ofcd answers); for the others their one --help. docs/man/NAME.extra
holds the hand-written sections (DESCRIPTION, FILES, ENVIRONMENT, SEE
ALSO), already in roff; @DOCDIR@ and @OFCDATADIR@ in them become the paths
`make install` puts the documents and the shared data (protos, example
configs) in, so SEE ALSO names files that are there once installed.
"""
import re
import subprocess
import sys

OPT = re.compile(r"^  +(-[-\w]+(?:[ =,][^ ].*?)?)(?:  +|$)(.*)$")


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"man.py: {' '.join(argv)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    if s.startswith((".", "'")):
        s = "\\&" + s
    return s


def body(text):
    """--help text as roff: usage lines as a synopsis, option lines as
    tagged paragraphs (continuation lines joined), the rest as text."""
    out, para = [], []

    def flush():
        if para:
            out.append(".PP")
            out.extend(esc(l) for l in para)
            para.clear()

    lines = text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("usage:"):
            flush()
            out.append(".nf")
            out.append(esc(line))
            # Wrapped usage lines are indented under the command, past
            # "usage: " (they may start with an option themselves).
            while i + 1 < len(lines) and lines[i + 1].startswith(" " * 7):
                i += 1
                out.append(esc(lines[i]))
            out.append(".fi")
        elif OPT.match(line) and line.lstrip().startswith("-"):
            flush()
            m = OPT.match(line)
            tag, desc = m.group(1).strip(), m.group(2).strip()
            col = line.find(desc) if desc else len(line)
            out.append(".TP")
            out.append("\\fB" + esc(tag) + "\\fR")
            words = [desc] if desc else []
            while i + 1 < len(lines) and lines[i + 1].startswith(" " * max(col, 6)) and lines[i + 1].strip():
                i += 1
                words.append(lines[i].strip())
            out.append(esc(" ".join(words)) if words else "")
        elif not line.strip():
            flush()
        elif line.startswith("  "):
            # An indented table (commands, specs): kept as laid out.
            flush()
            out.append(".nf")
            out.append(esc(line))
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and not (
                    OPT.match(lines[i + 1]) and lines[i + 1].lstrip().startswith("-")):
                i += 1
                out.append(esc(lines[i]))
            out.append(".fi")
        else:
            para.append(line.strip())
        i += 1
    flush()
    return out


def commands(ofc):
    """The command names `ofc --help` lists."""
    names, on = [], False
    for line in run([ofc, "--help"]).split("\n"):
        if line.startswith("commands:"):
            on = True
        elif on and line.startswith("  "):
            names.append(line.split()[0])
        elif on and line.strip():
            break
    return names


def main():
    binary, name, section, version, extra, docdir, datadir = sys.argv[1:8]
    out = [
        f'.TH {name.upper()} {section} "" "ofc {version}" "ofc manual"',
        ".SH NAME",
        f"{esc(name)} \\- " + {
            "ofc": "optical fabric controller: configs, topologies, schedules, devices",
            "ofcd": "the ofc controller daemon and its control API",
            "ocs-emu": "an emulated optical circuit switch speaking TL1",
            "mrr-emu": "an emulated MRR-based WDM ring agent",
            "ofc-gateway": "the network API: ofcd's control API as JSON over HTTPS with client certificates",
            "netconf-emu": "an emulated optical circuit switch speaking NETCONF",
            "ofc-hostd": "a host's agent: its fabric links and LLDP neighbours to ofcd",
        }[name],
        ".SH SYNOPSIS",
    ]
    out += body(run([binary, "--help"]))
    text = open(extra).read().rstrip("\n")
    text = text.replace("@DOCDIR@", esc(docdir)).replace("@OFCDATADIR@", esc(datadir))
    out += text.split("\n")
    if name == "ofc":
        out.append(".SH COMMANDS")
        for c in commands(binary):
            out.append(".SS " + esc(c))
            out += body(run([binary, c, "--help"]))
        out.append(".SH COMMANDS THROUGH OFCD")
        out.append(".PP")
        out.append("With \\fB\\-\\-socket\\fR \\fIPATH\\fR (anywhere on the line) or "
                   "\\fBOFC_SOCKET\\fR, these commands ask a running \\fBofcd\\fR(8).")
        for c in ("status", "apply", "reconfigure", "release", "schedule", "watch", "cancel"):
            out.append(".SS " + esc(c) + " (ofcd)")
            out += body(run([binary, "--socket", "/nonexistent", c, "--help"]))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
