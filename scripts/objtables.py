"""Many objects read by one tool process at a time: check-layers.py and
check-engines.py both read every object of the build through nm (and
objdump), which one process per object made 600 processes, 15 s of CPU."""
import re
import subprocess

# Objects named on one command line: their paths' bytes at most, far under
# the kernel's limit on a command's arguments (ARG_MAX, 2 MiB and more).
ARGS_BYTES = 64 * 1024


def per_object(cmd, objs, split):
    """The lines cmd prints for each of objs, as {obj: [line, ...]}: one
    process for many objects (batched under ARGS_BYTES), not one each
    (one nm and one objdump per object were 600 processes, 15 s of CPU).
    split(line, known, cur) gives the object a line is about (cur, the one
    before, where the tool names an object once above its lines) and the
    line to keep of it (None: a header, nothing to keep)."""
    out, i = {}, 0
    while i < len(objs):
        batch, size = [], 0
        while i < len(objs) and (not batch or size + len(objs[i]) < ARGS_BYTES):
            batch.append(objs[i])
            size += len(objs[i]) + 1
            i += 1
        text = subprocess.run(cmd + batch, capture_output=True, text=True, check=True).stdout
        known, cur = set(batch), None
        for line in text.splitlines():
            cur, line = split(line, known, cur)
            if cur is not None and line is not None:
                out.setdefault(cur, []).append(line)
    return out


def objdump_header(line, known, cur):
    """objdump -t opens each object's table with 'OBJ:     file format ...'."""
    m = re.match(r"^(.+):\s+file format ", line)
    if m and m.group(1) in known:
        return m.group(1), None
    return cur, line


def nm_prefix(line, known, cur):
    """nm -A starts each line with 'OBJ: '."""
    obj, sep, rest = line.partition(": ")
    if sep and obj in known:
        return obj, rest
    return None, None
