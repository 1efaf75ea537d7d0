#!/usr/bin/env python3
"""Run a systemd service's ExecStart as its unit would, without systemd.

    unit_run.py UNIT [--pre] [--exec CMD ARGS...]

UNIT is a unit file (X.service). As root, in the mount namespace of the
"machine" under test: read its EnvironmentFile= lines (a leading `-`: may
be missing) and Environment=, make its RuntimeDirectory= and
StateDirectory= (owned by User:Group, with their modes), take its User=,
Group= (the user's own group when not given), the groups /etc/group lists
the user in and SupplementaryGroups=, as systemd does, and its UMask=;
then exec ExecStart (ExecStartPre first with --pre), with `${VAR}`
replaced inside a word and a word `$VAR` split on whitespace, as systemd
does. --exec runs CMD instead, with the same user, groups and umask: what
the service itself could read.

Only what the project's units use is understood; anything else in
[Service] that would change who the process is (DynamicUser=, an
unknown specifier) is refused, so a test never runs a service as someone
else than its unit says.
"""
import grp
import os
import pwd
import re
import shlex
import sys

REFUSED = ("DynamicUser",)


def parse_unit(path):
    service = {}
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            if section != "Service" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            service.setdefault(key.strip(), []).append(value.strip())
    return service


def specifiers(value, unit):
    name = os.path.basename(unit).rsplit(".", 1)[0]
    out = value.replace("%p", name).replace("%n", os.path.basename(unit))
    out = out.replace("%H", os.uname().nodename).replace("%%", "%")
    if re.search(r"%[A-Za-z]", out):
        sys.exit(f"unit_run: {unit}: a specifier this runner does not know: {value}")
    return out


def env_file(path, env):
    optional = path.startswith("-")
    path = path.lstrip("-")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        if optional:
            return
        raise
    for line in lines:
        line = line.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key.strip()] = value


def expand(command, env):
    words = []
    for word in shlex.split(command):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            words.extend(env.get(m.group(1), "").split())
            continue
        words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda g: env.get(g.group(1), ""), word))
    return words


def credentials(service, unit):
    user = specifiers(service.get("User", ["root"])[-1], unit)
    pw = pwd.getpwnam(user)
    group = service.get("Group", [None])[-1]
    gid = grp.getgrnam(group).gr_gid if group else pw.pw_gid
    groups = set(os.getgrouplist(user, gid))
    for line in service.get("SupplementaryGroups", []):
        for g in line.split():
            groups.add(grp.getgrnam(g).gr_gid)
    return pw.pw_uid, gid, sorted(groups)


def directories(service, uid, gid):
    for key, base, mode_key in (("RuntimeDirectory", "/run", "RuntimeDirectoryMode"),
                                ("StateDirectory", "/var/lib", "StateDirectoryMode")):
        mode = int(service.get(mode_key, ["0755"])[-1], 8)
        for line in service.get(key, []):
            for d in line.split():
                path = os.path.join(base, d)
                os.makedirs(path, exist_ok=True)
                os.chown(path, uid, gid)
                os.chmod(path, mode)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    unit, args = args[0], args[1:]
    pre = "--pre" in args[:1]
    if pre:
        args = args[1:]
    service = parse_unit(unit)
    for key in REFUSED:
        if key in service:
            sys.exit(f"unit_run: {unit}: {key}= is not understood here")
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    for line in service.get("Environment", []):
        for assignment in shlex.split(specifiers(line, unit)):
            key, value = assignment.split("=", 1)
            env[key] = value
    for line in service.get("EnvironmentFile", []):
        env_file(specifiers(line, unit), env)
    uid, gid, groups = credentials(service, unit)
    umask = int(service.get("UMask", ["0022"])[-1], 8)
    if args[:1] == ["--exec"]:
        argv = args[1:]
    else:
        directories(service, uid, gid)
        argv = expand(specifiers(service["ExecStart"][-1], unit).lstrip("-@+!"), env)
        if pre:
            for line in service.get("ExecStartPre", []):
                pre_argv = expand(specifiers(line, unit).lstrip("-@+!"), env)
                if os.fork() == 0:
                    drop(uid, gid, groups, umask)
                    os.execvpe(pre_argv[0], pre_argv, env)
                _, status = os.wait()
                if status != 0:
                    sys.exit(f"unit_run: {unit}: ExecStartPre failed: {' '.join(pre_argv)}")
    drop(uid, gid, groups, umask)
    os.execvpe(argv[0], argv, env)


def drop(uid, gid, groups, umask):
    os.setgroups(groups)
    os.setgid(gid)
    os.setuid(uid)
    os.umask(umask)


if __name__ == "__main__":
    main()
