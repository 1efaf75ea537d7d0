#!/usr/bin/env python3
"""Replay an MSCCL XML program and check that it computes its collective.

Written from the format as the MSCCL executor reads it (NCCL/RCCL's
msccl_parser and msccl-tools' ir_to_xml), independently of ofc's writer:

  <algo nchunksperloop ngpus coll proto nchannels inplace outofplace minBytes maxBytes>
    <gpu id i_chunks o_chunks s_chunks>
      <tb id send recv chan>            one send peer and/or one receive peer
        <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>

A thread block runs its steps in order; a step waits for step `deps` of
thread block `depid` on the same GPU. The k-th send of GPU a to GPU b on
channel c is the k-th receive of b from a on c. Types: s (send src), r
(receive into dst), rrc (receive, add src, store in dst), cpy (src to dst),
nop. Data is symbolic: an element is a multiset of (rank, input chunk)
contributions, so a reduction that misses or doubles an input, or a copy
of the wrong chunk, shows in the final buffers.

The limits are the runtime's parser's. msccl-executor-nccl (the default;
msccl_parser.cc, msccl_struct.h, makefiles/common.mk's default build): at
most 64 steps a thread block (MSCCL_MAX_NUM_STEPS, nops too), 1,024 thread
blocks a GPU (32 a channel x MAXCHANNELS), and fewer than 4,096 XML nodes
read for a rank (MAX_NODES, checked before each node: the <algo>, every
<gpu>, the rank's own <tb> and <step> elements). The legacy MSCCL
(--runtime legacy; msccl.h, graph/xml.cc): 256 steps, 216 thread blocks,
the same 4,096 nodes. Both: cnt < 72, thread blocks numbered 0.. without
gaps, channels 0..nchannels-1 with nchannels at most 32 (MAXCHANNELS), at
most 32 send and 32 receive thread blocks a channel, depid at most 127 (an
int8_t), offsets at most 32767 (int16_t), and after nops that carry
dependencies the operation that ends them carries one too.

Usage: msccl_replay.py [--runtime executor|legacy] [--orders N] FILE.xml
(exit 0 and one summary line when correct; --orders: the first N of the
five interleavings, for programs of hundreds of thousands of steps)
"""
import sys
import xml.etree.ElementTree as ET
from collections import Counter, deque

RUNTIMES = {"executor": dict(steps=64, tbs=1024, nodes=4096),
            "legacy": dict(steps=256, tbs=216, nodes=4096)}
MAX_STEPS, MAX_TBS, MAX_NODES = 64, 1024, 4096
MAX_COUNT, MAX_CHANNELS, MAX_TB_PER_CHANNEL, MAX_DEPID, MAX_OFFSET = 72, 32, 32, 127, 32767


def fail(msg):
    print("msccl_replay: " + msg)
    sys.exit(1)


def main(path, norders=5):
    root = ET.parse(path).getroot()
    if root.tag != "algo":
        fail("the root element is not <algo>")
    for a in ("nchunksperloop", "nchannels", "ngpus", "proto", "coll", "minBytes", "maxBytes",
              "inplace", "outofplace"):
        if a not in root.attrib:
            fail("<algo> lacks %s" % a)
    n = int(root.get("ngpus"))
    coll = root.get("coll")
    per_loop = int(root.get("nchunksperloop"))
    nchan = int(root.get("nchannels"))
    if not 1 <= nchan <= MAX_CHANNELS:
        fail("nchannels %d: MSCCL takes 1 to %d" % (nchan, MAX_CHANNELS))
    if root.get("proto") not in ("Simple", "LL", "LL128"):
        fail("unknown protocol")
    gpus = {}
    for g in root.findall("gpu"):
        r = int(g.get("id"))
        sizes = {b: int(g.get(b + "_chunks")) for b in "ios"}
        tbs = {}
        pairs = set()
        per_channel = Counter()
        for tb in g.findall("tb"):
            t = int(tb.get("id"))
            send, recv, chan = int(tb.get("send")), int(tb.get("recv")), int(tb.get("chan"))
            if t in tbs or t < 0 or t >= MAX_TBS:
                fail("gpu %d: thread block id %d repeated or out of range" % (r, t))
            if send == r or recv == r or not (-1 <= send < n and -1 <= recv < n):
                fail("gpu %d tb %d: bad peers" % (r, t))
            if not 0 <= chan < nchan:
                fail("gpu %d tb %d: channel %d, not below nchannels %d" % (r, t, chan, nchan))
            for side, peer in (("send", send), ("receive", recv)):
                if peer >= 0:
                    per_channel[(side, chan)] += 1
                    if per_channel[(side, chan)] > MAX_TB_PER_CHANNEL:
                        fail("gpu %d: over %d %s thread blocks on channel %d" %
                             (r, MAX_TB_PER_CHANNEL, side, chan))
            for key in (("s", send, chan), ("r", recv, chan)):
                if key[1] >= 0:
                    if key in pairs:
                        fail("gpu %d: two thread blocks with %s peer %d on channel %d" %
                             (r, key[0], key[1], key[2]))
                    pairs.add(key)
            steps = []
            pending = False  # nops with dependencies not yet ended by an operation
            for i, st in enumerate(tb.findall("step")):
                if int(st.get("s")) != i:
                    fail("gpu %d tb %d: steps out of order" % (r, t))
                if i >= MAX_STEPS:
                    fail("gpu %d tb %d: over %d steps" % (r, t, MAX_STEPS))
                op = dict(type=st.get("type"), sb=st.get("srcbuf"), so=int(st.get("srcoff")),
                          db=st.get("dstbuf"), do=int(st.get("dstoff")), cnt=int(st.get("cnt")),
                          depid=int(st.get("depid")), deps=int(st.get("deps")))
                if op["type"] != "nop" and not (0 < op["cnt"] < MAX_COUNT):
                    fail("gpu %d tb %d step %d: cnt %d" % (r, t, i, op["cnt"]))
                if op["depid"] > MAX_DEPID or max(op["so"], op["do"]) > MAX_OFFSET:
                    fail("gpu %d tb %d step %d: depid or offset past MSCCL's int8/int16" % (r, t, i))
                if op["type"] == "nop":
                    pending |= op["depid"] >= 0
                elif pending and op["depid"] < 0:
                    fail("gpu %d tb %d step %d: nops' dependencies end in one without" % (r, t, i))
                else:
                    pending = False
                if op["type"] in ("s", "cpy", "rrc") and not 0 <= op["so"] <= sizes[op["sb"]] - op["cnt"]:
                    fail("gpu %d tb %d step %d: source outside %s" % (r, t, i, op["sb"]))
                if op["type"] in ("r", "cpy", "rrc") and not 0 <= op["do"] <= sizes[op["db"]] - op["cnt"]:
                    fail("gpu %d tb %d step %d: destination outside %s" % (r, t, i, op["db"]))
                if op["type"] in ("s",) and send < 0 or op["type"] in ("r", "rrc") and recv < 0:
                    fail("gpu %d tb %d step %d: no peer for %s" % (r, t, i, op["type"]))
                if op["type"] not in ("s", "r", "rrc", "cpy", "nop"):
                    fail("gpu %d: unsupported step type %s" % (r, op["type"]))
                steps.append(op)
            tbs[t] = dict(send=send, recv=recv, chan=chan, steps=steps, pc=0)
        gpus[r] = dict(sizes=sizes, tbs=tbs)
        # the nodes the parser holds for rank r: it stops before reading
        # one more once it holds MAX_NODES (closing tags are read too)
        nodes = 1 + len(root.findall("gpu")) + len(tbs) + sum(len(x["steps"]) for x in tbs.values())
        if nodes >= MAX_NODES:
            fail("gpu %d: %d XML nodes, the parser reads fewer than %d" % (r, nodes, MAX_NODES))
    for r, g in gpus.items():
        if sorted(g["tbs"]) != list(range(len(g["tbs"]))):
            fail("gpu %d: thread blocks are not numbered 0.. without gaps" % r)
    if sorted(gpus) != list(range(n)):
        fail("gpus are not 0..%d" % (n - 1))

    # Any interleaving the dependencies allow must give the same result:
    # replay in thread-block order, in reverse, and in shuffled orders one
    # step at a time, so a missing dependency (a race) shows in one of them.
    inputs = {r: [Counter({(r, c): 1}) for c in range(g["sizes"]["i"])] for r, g in gpus.items()}
    for order in ("forward", 1, "reverse", 2, 3)[:norders]:
        ran = replay(gpus, n, coll, per_loop, order, inputs)
    print("msccl_replay: %s on %d gpus, %d steps, %d interleavings replayed: correct" %
          (coll, n, ran, norders))


def replay(gpus, n, coll, per_loop, order, inputs):
    """One interleaving. A chunk's content is a Counter never changed in
    place (a reduction makes a new one), so sends and copies share it, and
    so do the interleavings: inputs[r][c] is rank r's input chunk c."""
    import random
    pc = {(r, t): 0 for r, g in gpus.items() for t in g["tbs"]}
    # Buffers: lists of Counters (contributions), None where nothing was written.
    Q = {"allgather": per_loop // n, "reducescatter": per_loop // n,
         "alltoall": per_loop // n, "allreduce": per_loop // n}[coll]
    buf = {}
    for r, g in gpus.items():
        b = {k: [None] * g["sizes"][k] for k in "ios"}
        # allgather: rank r's input chunk c is piece c of block r; the
        # other collectives: input chunk c is r's contribution to chunk c.
        # (Never changed in place: every interleaving starts from the same.)
        b["i"] = list(inputs[r])
        buf[r] = b
    queues = {}
    done = {r: {t: -1 for t in g["tbs"]} for r, g in gpus.items()}

    def ready(r, op):
        return op["depid"] < 0 or done[r].get(op["depid"], -2) >= op["deps"]

    progress, total = True, sum(len(tb["steps"]) for g in gpus.values() for tb in g["tbs"].values())
    ran = 0
    blocks = [(r, t) for r, g in gpus.items() for t in g["tbs"]]
    if order == "reverse":
        blocks.reverse()
    rng = random.Random(order) if isinstance(order, int) else None
    while progress:
        progress = False
        if rng:
            rng.shuffle(blocks)
        for r, t in blocks:
            tb = gpus[r]["tbs"][t]
            steps, dn, br, k = tb["steps"], done[r], buf[r], pc[(r, t)]
            while k < len(steps):
                op = steps[k]
                if not ready(r, op):
                    break
                ty, cnt = op["type"], op["cnt"]
                if ty in ("r", "rrc"):
                    q = queues.get((tb["recv"], r, tb["chan"]))
                    if not q:
                        break
                    data = q.popleft()
                    if len(data) != cnt:
                        fail("gpu %d tb %d: received %d chunks, step says %d" % (r, t, len(data), cnt))
                    if None in data:
                        fail("gpu %d received a chunk nobody wrote" % r)
                    dst, do = br[op["db"]], op["do"]
                    if ty == "rrc":
                        src, so = br[op["sb"]], op["so"]
                        for j in range(cnt):
                            cur = src[so + j]
                            if cur is None:
                                fail("gpu %d: reduce into an unwritten chunk" % r)
                            dst[do + j] = cur + data[j]
                    else:
                        dst[do:do + cnt] = data
                elif ty == "s":
                    src = br[op["sb"]][op["so"]:op["so"] + cnt]
                    queues.setdefault((r, tb["send"], tb["chan"]), deque()).append(src)
                elif ty == "cpy":
                    # element by element, as the executor copies: a copy
                    # within one buffer that overlaps reads what it wrote
                    src, dst, so, do = br[op["sb"]], br[op["db"]], op["so"], op["do"]
                    for j in range(cnt):
                        dst[do + j] = src[so + j]
                dn[t] = k
                k += 1
                ran += 1
                progress = True
                if rng:
                    break  # one step, then another block
            pc[(r, t)] = k
    if ran != total:
        fail("deadlock: %d of %d steps ran" % (ran, total))
    if any(q for q in queues.values()):
        fail("sends left unreceived")

    # The collective's result. Compared as dicts: a Counter's sums keep
    # only positive counts, so no zero entry makes two equal Counters
    # differ as dicts, and dict's == is Counter's without its Python loop.
    bad = 0
    for r in range(n):
        o = buf[r]["o"]
        for x in range(len(o)):
            if coll == "allgather":
                want = {(x // Q, x % Q): 1}
            elif coll == "allreduce":
                want = {(v, x): 1 for v in range(n)}
            elif coll == "reducescatter":
                want = {(v, r * Q + x): 1 for v in range(n)}
            else:  # alltoall: chunk c of what rank v sent rank r
                want = {(x // Q, r * Q + x % Q): 1}
            if o[x] is None or not dict.__eq__(o[x], want):
                if bad == 0:
                    print("msccl_replay: gpu %d output chunk %d holds %s, want %s" %
                          (r, x, dict(o[x]) if o[x] else None, dict(want)))
                bad += 1
    if bad:
        fail("%d output chunks wrong (%s order)" % (bad, order))
    return ran


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) > 2 and args[0] == "--runtime" and args[1] in RUNTIMES:
        lim = RUNTIMES[args[1]]
        MAX_STEPS, MAX_TBS, MAX_NODES = lim["steps"], lim["tbs"], lim["nodes"]
        args = args[2:]
    if len(args) == 3 and args[0] == "--orders" and args[1] in ("1", "2", "3", "4", "5"):
        main(args[2], int(args[1]))
    elif len(args) == 1:
        main(args[0])
    else:
        fail("usage: msccl_replay.py [--runtime executor|legacy] [--orders 1-5] FILE.xml")
