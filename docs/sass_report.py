#!/usr/bin/env python3
"""Count what a kernel's SASS issues: the evidence that a code path does what its stage says.

    cuobjdump -sass -arch sm_100a build/stage05 > stage05.sass
    python3 docs/sass_report.py stage05.sass --kernel nvfp4_tcgen05_gemm
    python3 docs/sass_report.py stage05.sass --kernel 'gemm<256>' --json docs/data/sass_stage05.json
    python3 docs/sass_report.py build/stage05 --list      # a binary: runs cuobjdump -sass itself

--hide-small-loops leaves the tiny loops ptxas wraps around single instructions out of the text;
--json - writes the JSON to stdout and the text to stderr.

Reads the text that `cuobjdump -sass` prints (of a cubin, or of a whole fat binary, whose sections
for every architecture follow one another; --arch picks one, sm_100a by default). For each function
whose mangled or demangled name contains --kernel it reports

  * the number of instructions in each family below (tensor-core MMAs, tcgen05.cp, TMEM loads and
    stores, TMA, mbarrier operations, global/shared/local memory, ELECT, WARPSYNC, barriers) and in
    all, each family broken down by full opcode (e.g. UTCCP.T.S.2CTA.4x32dp128bit);
  * its loops: every backward branch (target address <= its own address) closes a loop whose body
    is the address range [target, branch]; per loop the range, its instruction count and the same
    family counts. "One K tile issues 4 MMAs and 12 scale copies" is read off the main loop's line.

The counts are static: instructions in the listing, not instructions executed. A loop the compiler
unrolled holds several iterations' worth of instructions in one body, and a family inside an inner
loop counts once however often that loop runs.

Two refinements over "a backward branch is a loop", both because of how ptxas lays code out:
  * ptxas moves slow paths (the sleeping retry of an mbarrier wait, the divergent fallback of a
    warp-uniform branch) to the end of the function, and they jump back into the code they left.
    Such a jump is backward but closes no loop; counting [its target, it] would cover most of the
    kernel. A backward branch counts as a loop only when its target dominates it in the control-flow
    graph (the textbook definition of a loop's back edge); the others are listed as such.
    Instructions of a loop that lie outside its address range (those slow paths) are counted
    separately, as "out of line", so that the range's counts stay those of the hot path.
  * Every function ends with `BRA` to itself and NOPs up to an alignment boundary: padding that
    never runs. It is counted in the total and reported, but is not a loop.
Where the control flow cannot be followed (an indirect branch, BRX/JMX), every backward branch is
taken for a loop by address alone, and the report says so.

Families are matched on the opcode's mnemonic (the part before the first '.'), in the order of
FAMILIES; an instruction falls into the first family that matches, so the families never overlap.

Standard library only. Demangled names come from cu++filt or c++filt when one is on PATH.
Exit status: 0 on success, 1 when the input holds no matching function or cannot be read.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# (key, label, matcher on the mnemonic). Order matters: the first match wins, which is how e.g.
# UTCQMMA lands in "mma" and not in the catch-all "tcgen05_other", and LDGSTS (cp.async, a copy
# into shared memory) does not count as a global load.
FAMILIES = [
    ("mma", "tensor-core MMA (UTC*MMA)", lambda m: m.startswith("UTC") and "MMA" in m),
    ("utccp", "tcgen05.cp (UTCCP)", lambda m: m.startswith("UTCCP")),
    ("tmem_ldst", "TMEM load/store (LDTM, STTM)", lambda m: m.startswith(("LDTM", "STTM"))),
    ("tcgen05_other", "other tcgen05 (UTCBAR, UTCATOMSWS, ...)", lambda m: m.startswith("UTC")),
    # UTMA* is every TMA opcode (UTMALDG, UTMASTG, UTMAPF, UTMACCTL, UTMACMDFLUSH, UTMAREDG);
    # UBLK* the non-tensor bulk copies (cp.async.bulk).
    ("tma", "TMA / bulk copy (UTMA*, UBLK*)", lambda m: m.startswith(("UTMA", "UBLK"))),
    ("mbarrier", "mbarrier (SYNCS)", lambda m: m.startswith("SYNCS")),
    ("cp_async", "cp.async (LDGSTS, LDGDEPBAR)", lambda m: m.startswith(("LDGSTS", "LDGDEPBAR"))),
    ("global", "global memory (LDG, STG)", lambda m: m.startswith(("LDG", "STG"))),
    ("shared", "shared memory (LDS*, STS*)", lambda m: m.startswith(("LDS", "STS"))),
    ("local", "local memory (LDL, STL)", lambda m: m.startswith(("LDL", "STL"))),
    ("elect", "ELECT", lambda m: m == "ELECT"),
    ("warpsync", "WARPSYNC", lambda m: m == "WARPSYNC"),
    ("bar", "CTA barrier (BAR*)", lambda m: m.startswith("BAR")),
    ("cluster_bar", "cluster barrier (UCGABAR*)", lambda m: m.startswith("UCGABAR")),
]
FAMILY_KEYS = [key for key, _, _ in FAMILIES]
FAMILY_LABELS = {key: label for key, label, _ in FAMILIES}
# Short names for the one-line-per-loop summaries.
FAMILY_SHORT = {"mma": "MMA", "utccp": "UTCCP", "tmem_ldst": "LDTM/STTM", "tcgen05_other": "UTC-other",
                "tma": "TMA", "mbarrier": "SYNCS", "cp_async": "LDGSTS", "global": "LDG/STG",
                "shared": "LDS/STS", "local": "LDL/STL", "elect": "ELECT", "warpsync": "WARPSYNC",
                "bar": "BAR", "cluster_bar": "UCGABAR"}


def family_of(mnemonic):
    for key, _, match in FAMILIES:
        if match(mnemonic):
            return key
    return None


# ---------------------------------------------------------------------------------------------
# Parsing

# An instruction line: `        /*0a30*/               @P0 BRA 0x170 ;   /* 0x0000... */`. The address
# comment has no blanks inside; the encoding comments (`/* 0x... */`, also alone on the next line)
# have, which is how they are told apart.
INSTR_RE = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s*(.*)$")
# Guard predicates: P0..P6, PT, their uniform counterparts UP0..UP6, UPT, each possibly negated.
GUARD_RE = re.compile(r"^@(!?U?P(?:T|\d+))\s+(.*)$")
HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
FUNCTION_RE = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
CODE_FOR_RE = re.compile(r"^\s*code for (\S+)\s*$")


class Instruction:
    __slots__ = ("addr", "guard", "opcode", "mnemonic", "operands", "text", "family")

    def __init__(self, addr, text):
        self.addr = addr
        self.text = text
        self.guard = None
        body = text
        m = GUARD_RE.match(body)
        if m:
            self.guard, body = m.group(1), m.group(2)
        parts = body.split(None, 1)
        self.opcode = parts[0] if parts else ""
        self.mnemonic = self.opcode.split(".", 1)[0]
        rest = parts[1] if len(parts) > 1 else ""
        self.operands = [op.strip() for op in rest.split(",")] if rest.strip() else []
        self.family = family_of(self.mnemonic)

    @property
    def conditional(self):
        # A guard of PT is always true; !PT never, but ptxas does not emit that on branches.
        return self.guard is not None and self.guard != "PT"


def parse_instruction(line):
    """An Instruction from one listing line, or None when the line holds none."""
    m = INSTR_RE.match(line)
    if not m:
        return None
    rest = m.group(2)
    # The instruction ends at ';'; what follows is the encoding comment. Without a ';' (not seen
    # from cuobjdump, but cheap to allow) it ends where a comment starts.
    end = rest.find(";")
    if end < 0:
        end = rest.find("/*")
        if end < 0:
            end = len(rest)
    text = rest[:end].strip()
    if not text:
        return None
    return Instruction(int(m.group(1), 16), text)


class Function:
    def __init__(self, name, arch, header):
        self.name = name
        self.arch = arch
        self.header = list(header)   # the cuobjdump lines that say where this code comes from
        self.headerflags = None
        self.instructions = []
        self.demangled = None


def source_relative(line):
    """A header line with the source file's path cut to its last two components (the stage folder
    and the file): where the build tree was says nothing about the code."""
    key, _, value = line.partition("=")
    if key.strip() != "identifier" or "/" not in value:
        return line
    return "%s= %s" % (key, "/".join(value.strip().split("/")[-2:]))


def parse_listing(text):
    """Every function in a `cuobjdump -sass` listing, in order, each with its section's arch and
    header lines (the `Fatbin elf code:` block's key = value lines, `code for`, `.target`)."""
    functions = []
    block = []        # header lines of the current fatbin entry
    section = []      # block + `code for` + `.target`: what identifies the code that follows
    arch = None
    current = None
    in_header = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("Fatbin ") and line.endswith("code:"):
            block, in_header, current, arch = [line], True, None, None
            continue
        m = CODE_FOR_RE.match(raw)
        if m:
            arch = m.group(1)
            section = block + [line]
            in_header, current = False, None
            continue
        if in_header:
            if "=" in line and not line.startswith("="):
                block.append(source_relative(line))
            continue
        if line.startswith(".target") and current is None:
            section.append(" ".join(line.split()))
            continue
        m = FUNCTION_RE.match(raw)
        if m:
            current = Function(m.group(1), arch, section)
            functions.append(current)
            continue
        if current is None:
            continue
        if line.startswith(".headerflags"):
            current.headerflags = " ".join(line.split())
            continue
        if line.startswith(".........."):
            current = None
            continue
        instr = parse_instruction(raw)
        if instr is not None:
            current.instructions.append(instr)
    return functions


def demangle_all(names):
    """name -> demangled name, through cu++filt or c++filt; {} when neither is installed."""
    names = sorted(set(names))
    for tool in ("cu++filt", "c++filt"):
        exe = shutil.which(tool)
        if not exe or not names:
            continue
        try:
            out = subprocess.run([exe], input="\n".join(names) + "\n", capture_output=True,
                                 text=True, timeout=60, check=True).stdout.splitlines()
        except (OSError, subprocess.SubprocessError):
            continue
        if len(out) == len(names):
            return {n: d for n, d in zip(names, out) if d != n}
    return {}


# ---------------------------------------------------------------------------------------------
# Control flow and loops

BRANCHES = ("BRA", "JMP")
INDIRECT = ("BRX", "JMX")


def branch_target(ins):
    """The target address of a direct branch (its last operand), else None."""
    if ins.mnemonic not in BRANCHES or not ins.operands:
        return None
    found = HEX_RE.findall(ins.operands[-1])
    return int(found[-1], 16) if found else None


def unconditional_branch(ins):
    # `BRA 0x170` has one operand; `BRA.U !UP0, 0x1a0`, `BRA.DIV UR4, 0x3a30`, `@!P0 BRA P1, 0x2be0`
    # take the branch only under the condition their first operand(s) name.
    return not ins.conditional and len(ins.operands) == 1


def padding_start(instrs):
    """Index of the first instruction of the end-of-function padding: a `BRA` to itself followed
    only by NOPs. len(instrs) when there is none."""
    i = len(instrs)
    while i > 0 and instrs[i - 1].mnemonic == "NOP":
        i -= 1
    if i > 0:
        last = instrs[i - 1]
        if branch_target(last) == last.addr and unconditional_branch(last):
            return i - 1
    return len(instrs)


class ControlFlow:
    """Basic blocks, edges and dominators of one function. `complete` is False when an indirect
    branch or a branch into the middle of nowhere makes the graph unknowable."""

    def __init__(self, instrs):
        self.instrs = instrs
        self.index = {ins.addr: i for i, ins in enumerate(instrs)}
        self.complete = True
        n = len(instrs)
        leaders = {0} if n else set()
        roots = [0] if n else []
        succ_of = {}    # instruction index of a block's last instruction -> successor instruction indices
        for i, ins in enumerate(instrs):
            succ = []
            ends = False
            falls = True
            if ins.mnemonic in BRANCHES:
                target = branch_target(ins)
                if target is None or target not in self.index:
                    self.complete = False
                else:
                    succ.append(self.index[target])
                    leaders.add(self.index[target])
                ends = True
                falls = not unconditional_branch(ins)
            elif ins.mnemonic in INDIRECT:
                self.complete = False
                ends, falls = True, False
            elif ins.mnemonic in ("EXIT", "RET", "KILL"):
                ends, falls = True, ins.conditional
            elif ins.mnemonic == "CALL":
                # A call returns to the next instruction; its callee (a subroutine at the end of the
                # function) is made a root of its own so that loops inside it are found too.
                found = HEX_RE.findall(ins.operands[-1]) if ins.operands else []
                if found and int(found[-1], 16) in self.index:
                    callee = self.index[int(found[-1], 16)]
                    leaders.add(callee)
                    roots.append(callee)
            if ends:
                if falls and i + 1 < n:
                    succ.append(i + 1)
                if i + 1 < n:
                    leaders.add(i + 1)
                succ_of[i] = succ
        self.starts = sorted(leaders)
        self.block_of = [0] * n
        self.block_range = []     # (first, last) instruction index per block
        for b, first in enumerate(self.starts):
            last = (self.starts[b + 1] if b + 1 < len(self.starts) else n) - 1
            self.block_range.append((first, last))
            for i in range(first, last + 1):
                self.block_of[i] = b
        nb = len(self.starts)
        self.succ = [[] for _ in range(nb)]
        for b, (first, last) in enumerate(self.block_range):
            targets = succ_of.get(last, [last + 1] if last + 1 < n else [])
            self.succ[b] = sorted({self.block_of[t] for t in targets})
        self.pred = [[] for _ in range(nb)]
        for b in range(nb):
            for s in self.succ[b]:
                self.pred[s].append(b)
        self._dominators(sorted({self.block_of[r] for r in roots}))

    def _dominators(self, roots):
        # Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm", over a virtual root
        # (index -1) whose successors are the entry and the call targets.
        order, seen = [], set()
        for r in roots:
            if r in seen:
                continue
            seen.add(r)
            stack = [(r, iter(self.succ[r]))]
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    order.append(node)
                    stack.pop()
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(self.succ[nxt])))
        rpo = list(reversed(order))
        self.reachable = set(rpo)
        number = {b: i for i, b in enumerate(rpo)}
        number[-1] = -1
        idom = {-1: -1}
        for r in roots:
            idom[r] = -1
        preds = {b: [p for p in self.pred[b] if p in self.reachable] for b in rpo}
        for r in roots:
            preds[r] = preds[r] + [-1]

        def intersect(a, b):
            while a != b:
                while number[a] > number[b]:
                    a = idom[a]
                while number[b] > number[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for b in rpo:
                if b in roots:
                    continue
                done = [p for p in preds[b] if p in idom]
                if not done:
                    continue
                new = done[0]
                for p in done[1:]:
                    new = intersect(p, new)
                if idom.get(b) != new:
                    idom[b] = new
                    changed = True
        self.idom = idom

    def dominates(self, a, b):
        """Whether block a dominates block b (both reachable)."""
        while True:
            if a == b:
                return True
            if b == -1 or b not in self.idom:
                return False
            b = self.idom[b]

    def natural_loop(self, header, latches):
        """Blocks of the natural loop of the back edges latch -> header."""
        body = {header}
        stack = [l for l in latches]
        while stack:
            b = stack.pop()
            if b in body:
                continue
            body.add(b)
            stack.extend(p for p in self.pred[b] if p in self.reachable)
        return body


class Loop:
    def __init__(self, start, end, latches, members, out_of_line, verified):
        self.start = start            # address of the header (the backward branch's target)
        self.end = end                # address of the last backward branch to it
        self.latches = latches        # addresses of the branches that close it
        self.members = members        # indices of every instruction of the loop
        self.out_of_line = out_of_line  # the members outside [start, end]
        self.verified = verified      # "dominance" or "address-only"
        self.id = None
        self.parent = None
        self.children = []
        self.depth = 0
        self.kind = "loop"


def find_loops(instrs):
    """(loops in innermost-first order, backward jumps that close no loop, whether the control flow
    graph was complete)."""
    pad = padding_start(instrs)
    body = instrs[:pad]
    cfg = ControlFlow(body)
    headers = {}        # header index -> [(latch index, verified)]
    not_loops = []
    for i, ins in enumerate(body):
        target = branch_target(ins)
        if target is None or target > ins.addr or target not in cfg.index:
            continue
        t = cfg.index[target]
        if cfg.complete:
            hb, lb = cfg.block_of[t], cfg.block_of[i]
            if lb in cfg.reachable and hb in cfg.reachable:
                if not cfg.dominates(hb, lb):
                    not_loops.append((ins.addr, target))
                    continue
                headers.setdefault(t, []).append((i, "dominance"))
                continue
        headers.setdefault(t, []).append((i, "address-only"))

    loops = []
    for t, closing in sorted(headers.items()):
        last = max(i for i, _ in closing)
        in_range = set(range(t, last + 1))
        members = set(in_range)
        verified = "dominance" if all(v == "dominance" for _, v in closing) else "address-only"
        if verified == "dominance":
            blocks = cfg.natural_loop(cfg.block_of[t], [cfg.block_of[i] for i, _ in closing])
            for b in blocks:
                first, lastb = cfg.block_range[b]
                members.update(range(first, lastb + 1))
        loops.append(Loop(body[t].addr, body[last].addr, [body[i].addr for i, _ in closing],
                          members, sorted(members - in_range), verified))

    # Nesting: a loop is inside another when all its instructions are the other's.
    for a in loops:
        containers = [b for b in loops if b is not a and a.members <= b.members
                      and (len(a.members) < len(b.members) or b.start < a.start)]
        if containers:
            a.parent = min(containers, key=lambda b: (len(b.members), -b.start))
            a.parent.children.append(a)
    for a in loops:
        d, p = 0, a.parent
        while p is not None:
            d, p = d + 1, p.parent
        a.depth = d
        a.children.sort(key=lambda c: c.start)
        a.kind = loop_kind(a, body)

    # Innermost first: children before their parent, siblings by address.
    ordered = []

    def visit(loop):
        for c in loop.children:
            visit(c)
        ordered.append(loop)

    for root in sorted((l for l in loops if l.parent is None), key=lambda l: l.start):
        visit(root)
    for n, loop in enumerate(ordered, 1):
        loop.id = n
    return ordered, not_loops, cfg.complete


def loop_kind(loop, instrs):
    """A name for the two kinds of small loop ptxas makes by itself, so that a reader can skip
    them: the elect-one loop (`@P0 ELECT ...; <op>; ...; @P0 BRA.U.ANY back`) that issues a
    single-thread tcgen05 or TMA instruction once per distinct value in the warp, and the spin of an
    mbarrier wait."""
    lo, hi = instrs_index_range(loop, instrs)
    body = instrs[lo:hi + 1]
    latch_ops = {ins.opcode for ins in body if ins.addr in loop.latches}
    if any(".ANY" in op for op in latch_ops) and any(ins.mnemonic == "ELECT" for ins in body):
        return "elect-one"
    if len(body) <= 8 and any(ins.mnemonic == "SYNCS" and ("TRYWAIT" in ins.opcode or "PHASECHK" in ins.opcode)
                              for ins in body):
        return "mbarrier wait"
    return "loop"


def instrs_index_range(loop, instrs):
    lo = next(i for i, ins in enumerate(instrs) if ins.addr == loop.start)
    hi = next(i for i, ins in enumerate(instrs) if ins.addr == loop.end)
    return lo, hi


# ---------------------------------------------------------------------------------------------
# Counting and reporting

def count(instrs):
    """Per family: count and opcode breakdown."""
    out = {key: {"count": 0, "opcodes": {}} for key in FAMILY_KEYS}
    for ins in instrs:
        if ins.family is None:
            continue
        f = out[ins.family]
        f["count"] += 1
        f["opcodes"][ins.opcode] = f["opcodes"].get(ins.opcode, 0) + 1
    for f in out.values():
        f["opcodes"] = dict(sorted(f["opcodes"].items()))
    return out


def hexaddr(a):
    return "0x%04x" % a


def ranges_of(indices, instrs):
    """Consecutive runs of instruction indices as [first address, last address] pairs."""
    runs = []
    for i in sorted(indices):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [[hexaddr(instrs[a].addr), hexaddr(instrs[b].addr)] for a, b in runs]


def analyse(fn):
    instrs = fn.instructions
    loops, not_loops, complete = find_loops(instrs)
    pad = padding_start(instrs)
    loop_docs = []
    for loop in loops:
        lo, hi = instrs_index_range(loop, instrs)
        body = instrs[lo:hi + 1]
        ool = [instrs[i] for i in loop.out_of_line]
        loop_docs.append({
            "id": loop.id,
            "start": hexaddr(loop.start),
            "end": hexaddr(loop.end),
            "kind": loop.kind,
            "depth": loop.depth,
            "parent": loop.parent.id if loop.parent else None,
            "children": [c.id for c in loop.children],
            "latches": [hexaddr(a) for a in loop.latches],
            "found_by": loop.verified,
            "instructions": len(body),
            "families": {k: v["count"] for k, v in count(body).items()},
            "opcodes": {k: v["opcodes"] for k, v in count(body).items() if v["count"]},
            "out_of_line": {
                "instructions": len(ool),
                "ranges": ranges_of(loop.out_of_line, instrs),
                "families": {k: v["count"] for k, v in count(ool).items()},
            },
        })
    return {
        "name": fn.name,
        "demangled": fn.demangled,
        "arch": fn.arch,
        "header": fn.header,
        "headerflags": fn.headerflags,
        "instructions": len(instrs),
        "padding": len(instrs) - pad,
        "families": count(instrs),
        "control_flow_complete": complete,
        "loops": loop_docs,
        "backward_jumps_not_loops": [{"from": hexaddr(a), "to": hexaddr(t)} for a, t in not_loops],
    }


def short_counts(families):
    parts = ["%s %d" % (FAMILY_SHORT[k], families[k]) for k in FAMILY_KEYS if families[k]]
    return ", ".join(parts) if parts else "-"


# Loops ptxas makes around a single instruction; --hide-small-loops leaves them out of the text (their
# counts stay in the loops around them and in the JSON).
SMALL_KINDS = ("elect-one", "mbarrier wait")


def format_report(doc, source, hide_small=False):
    out = []
    w = out.append
    w("== %s" % doc["name"])
    if doc["demangled"]:
        w("   %s" % doc["demangled"])
    w("   from %s: %s" % (source, "; ".join(doc["header"]) or "(no header)"))
    if doc["headerflags"]:
        w("   %s" % doc["headerflags"])
    w("   instructions: %d (%d of them end-of-function padding: BRA to itself and NOPs)"
      % (doc["instructions"], doc["padding"]))
    w("")
    w("   %-42s %6s  opcodes" % ("family", "count"))
    for key in FAMILY_KEYS:
        f = doc["families"][key]
        ops = ", ".join("%s x%d" % (op, n) for op, n in f["opcodes"].items())
        w("   %-42s %6d  %s" % (FAMILY_LABELS[key], f["count"], ops))
    if doc["families"]["local"]["count"]:
        w("   !! local memory is used: register spills or a local array (ptxas -warn-spills tells which)")
    w("")
    loops = doc["loops"]
    if not doc["control_flow_complete"]:
        w("   (indirect branches: loops found by address alone, not checked against the control flow)")
    w("   loops: %d (innermost first; a loop's counts include those of the loops inside it)" % len(loops))
    shown = [lp for lp in loops if not (hide_small and lp["kind"] in SMALL_KINDS)]
    if len(shown) < len(loops):
        w("   (%d elect-one and mbarrier-wait loops not shown)" % (len(loops) - len(shown)))
    for lp in shown:
        where = "in #%d" % lp["parent"] if lp["parent"] else "outermost"
        w("   %s#%-3d [%s, %s] %5d instr  %-13s %s" % ("  " * lp["depth"], lp["id"], lp["start"],
                                                      lp["end"], lp["instructions"], lp["kind"], where))
        w("   %s       %s" % ("  " * lp["depth"], short_counts(lp["families"])))
        ool = lp["out_of_line"]
        if ool["instructions"]:
            w("   %s       + %d out of line at %s: %s" % (
                "  " * lp["depth"], ool["instructions"],
                " ".join("[%s, %s]" % (a, b) for a, b in ool["ranges"]), short_counts(ool["families"])))
    jumps = doc["backward_jumps_not_loops"]
    if jumps:
        w("   backward jumps that close no loop (returns from out-of-line code): %d" % len(jumps))
        w("      " + " ".join("%s->%s" % (j["from"], j["to"]) for j in jumps))
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Command line

def read_input(path):
    """The listing text: the file itself, or cuobjdump's output when the file is a binary."""
    if path == "-":
        return sys.stdin.read()
    with open(path, "rb") as f:
        data = f.read()
    head = data[:4096]
    if head.startswith(b"\x7fELF") or b"\0" in head:
        exe = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
        if not exe:
            raise RuntimeError("%s is a binary and cuobjdump is not on PATH (or in $CUOBJDUMP); "
                               "run `cuobjdump -sass %s > file.sass` elsewhere and pass file.sass"
                               % (path, path))
        res = subprocess.run([exe, "-sass", path], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError("cuobjdump -sass %s failed: %s" % (path, res.stderr.strip()))
        return res.stdout
    return data.decode("utf-8", errors="replace")


def select(functions, arch, query):
    """The functions of `arch` whose mangled or demangled name contains `query`."""
    return [fn for fn in functions if fn.arch == arch
            and (query in fn.name or (fn.demangled and query in fn.demangled))]


def main(argv=None, demangle=demangle_all):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="text of `cuobjdump -sass` ('-' for stdin), or a binary to run it on")
    ap.add_argument("--kernel", help="substring of the mangled or demangled function name")
    ap.add_argument("--arch", default="sm_100a", help="the `code for` section to read (default sm_100a)")
    ap.add_argument("--list", action="store_true", help="list the functions found and exit")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers as JSON ('-' for stdout)")
    ap.add_argument("--hide-small-loops", action="store_true",
                    help="leave the elect-one and mbarrier-wait loops out of the text report")
    args = ap.parse_args(argv)
    if not args.list and not args.kernel:
        ap.error("--kernel is required (or --list)")

    try:
        text = read_input(args.input)
    except (OSError, RuntimeError) as e:
        print("sass_report: %s" % e, file=sys.stderr)
        return 1
    functions = parse_listing(text)
    names = demangle([fn.name for fn in functions])
    for fn in functions:
        fn.demangled = names.get(fn.name)
    archs = sorted({fn.arch for fn in functions if fn.arch})

    if args.list:
        for fn in functions:
            if args.arch in archs and fn.arch != args.arch:
                continue
            print("%-10s %6d  %s%s" % (fn.arch, len(fn.instructions), fn.name,
                                        "  [%s]" % fn.demangled if fn.demangled else ""))
        return 0

    if args.arch not in archs:
        print("sass_report: no `code for %s` section in %s (found: %s)"
              % (args.arch, args.input, ", ".join(archs) or "no functions"), file=sys.stderr)
        return 1
    chosen = select(functions, args.arch, args.kernel)
    if not chosen:
        print("sass_report: no %s function matches %r; functions there:" % (args.arch, args.kernel),
              file=sys.stderr)
        for fn in functions:
            if fn.arch == args.arch:
                print("  %s" % (fn.demangled or fn.name), file=sys.stderr)
        return 1

    docs = [analyse(fn) for fn in chosen]
    text = "\n\n".join(format_report(d, args.input, args.hide_small_loops) for d in docs)
    # With --json -, the JSON alone goes to stdout, so that it can be piped.
    print(text, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        payload = {
            "tool": "docs/sass_report.py",
            "input": args.input,
            "arch": args.arch,
            "kernel": args.kernel,
            "families": {key: FAMILY_LABELS[key] for key in FAMILY_KEYS},
            "functions": docs,
        }
        text = json.dumps(payload, indent=1) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            with open(args.json, "w") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
