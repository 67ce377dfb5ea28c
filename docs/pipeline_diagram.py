#!/usr/bin/env python3
"""The diagram of the finished kernel (stage 07): one CTA pair, its warps, shared memory, Tensor Memory and
mbarriers, and what flows between them. Drawn by hand as SVG, standard library only.

    python3 docs/pipeline_diagram.py          write docs/plots/pipeline_07.svg
    python3 docs/pipeline_diagram.py --check  regenerate in memory; exit code 1 if docs/plots/pipeline_07.svg
                                              is missing or differs, 0 if it is current; changes nothing.

The numbers come from the table of constants below, each a copy of a constant of 07_epilogue_tma/kernel.cuh;
change them together. The layout is fixed coordinates: a diagram is read for where things sit, so every
position is chosen here, not computed by a layout engine. The output is byte-identical across runs.
"""
import argparse
import pathlib
import sys
from xml.sax.saxutils import escape

ROOT = pathlib.Path(__file__).resolve().parent.parent
SVG_OUT = ROOT / "docs" / "plots" / "pipeline_07.svg"
KERNEL = "07_epilogue_tma/kernel.cuh"

# --- The kernel's numbers (07_epilogue_tma/kernel.cuh), per CTA -------------------------------------------------
CTA_GROUP = 2            # kCtaGroup: a pair of CTAs issues one MMA (cta_group::2)
THREADS = 192            # kThreads = 32 * (kFirstEpilogueWarp + kEpilogueWarps)
EPILOGUE_WARPS = 4       # kEpilogueWarps (warps 2..5; kFirstEpilogueWarp = 2)
PAIR_M = 256             # kBM: rows of C per pair's tile = M of the MMA instruction
CTA_M = 128              # kCtaM: rows per CTA = Tensor Memory lanes
BN = 128                 # kBN: columns of C per tile = N of the MMA = columns of one accumulator
TILE_K = 256             # kTileK: values of k per slot (one 128-byte swizzle row)
MMA_K = 64               # kMmaK: values of k per MMA instruction
STAGES = 7               # kSlots = min(kSlotsBySmem, kSlotsByTmem)
A_BYTES = 16384          # kPackedTileBytes = kCtaM x kPackedRowBytes
B_BYTES = 8192           # kBBytes = kBRowsPerCta (64) x kPackedRowBytes
SFA_BYTES = 2048         # kSfBlockBytes: 4 scale atoms of 512 bytes (Slot::sfa)
SFB_BYTES = 2048         # kSfBlockBytes x kSfbAtoms: 4 scale atoms (all 128 rows of B's tile; Slot::sfb)
STAGING_BUFFERS = 2      # kStagingBuffers: per epilogue warp
STAGING_BYTES = 2048     # kStagingBytes: 32 rows x 32 FP16 columns
SUB_TILE_COLS = 32       # kSubTileCols: columns per tcgen05.ld and per TMA store box
TMEM_COLUMNS = 512       # kTmemColumns: all of the SM's Tensor Memory
ACC_BUFFERS = 2          # kAccBuffers: accumulators in Tensor Memory
SF_COLUMNS_PER_STAGE = 32  # kSfColumnsPerSlot = kSfaColumnsPerSlot (16) + kSfbColumnsPerSlot (16)
SMEM_PER_BLOCK = 232448  # kSmemPerBlock
SMEM_RESERVE = 4096      # kFixedBytes less the staging: barriers, alignment slack, kStaticSmemMargin

STAGE_BYTES = A_BYTES + B_BYTES + SFA_BYTES + SFB_BYTES                  # sizeof(Slot)
ACC_COLUMNS = ACC_BUFFERS * BN                                           # kAccColumns
TMEM_USED = ACC_COLUMNS + STAGES * SF_COLUMNS_PER_STAGE                  # kTmemColumnsUsed
STAGING_TOTAL = EPILOGUE_WARPS * STAGING_BUFFERS * STAGING_BYTES
# The kernel's own stage-count rule, so that a change of one number above that breaks it fails loudly here.
assert STAGES == min((SMEM_PER_BLOCK - SMEM_RESERVE - STAGING_TOTAL) // STAGE_BYTES,
                     (TMEM_COLUMNS - ACC_COLUMNS) // SF_COLUMNS_PER_STAGE), "STAGES is not the kernel's rule"
assert TMEM_USED <= TMEM_COLUMNS and CTA_M * CTA_GROUP == PAIR_M and THREADS == 32 * (2 + EPILOGUE_WARPS)


def kb(n_bytes):
    return f"{n_bytes // 1024} KB"


# --- Colours: one per role. A data arrow has the colour of what moves the data, a signal that of its sender. --
PRODUCER, PRODUCER_BG = "#1f6fb4", "#e4eef8"
MMA, MMA_BG = "#d9690b", "#fdeedd"
EPILOGUE, EPILOGUE_BG = "#2b8a3e", "#e3f3e6"
TMA, TMA_BG = "#7648a8", "#f1ebf8"
# Memory: shades of the TMA colour, the scales darker than the operands, so that SFA/SFB match in SMEM and TMEM.
FILL_A, FILL_B, FILL_SFA, FILL_SFB = "#ddd0ee", "#ebe3f5", "#a586cf", "#c3aee2"
FILL_ACC, FILL_STAGING, FILL_GLOBAL = "#f6f2fb", "#e6dcf3", "#f2f2f4"
INK, INK_SOFT, INK_FAINT, EDGE = "#1d1d1f", "#4a4a52", "#808089", "#9a9aa3"
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"  # widest first: text laid out for it fits the others


# --- A minimal SVG writer -----------------------------------------------------------------------------------------

def num(v):
    """Coordinates as short, stable text (no float noise, no '-0')."""
    v = round(float(v), 2) + 0.0
    return f"{v:g}"


class Svg:
    def __init__(self, width, height):
        self.width, self.height, self.items = width, height, []

    def add(self, s):
        self.items.append(s)

    def rect(self, x, y, w, h, fill="none", stroke="none", sw=1.0, rx=0, dash=None):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" rx="{num(rx)}" '
                 f'fill="{fill}" stroke="{stroke}" stroke-width="{num(sw)}"{extra}/>')

    def line(self, points, stroke, sw=1.0, dash=None, cap="butt"):
        d = " ".join(("M" if i == 0 else "L") + f"{num(x)} {num(y)}" for i, (x, y) in enumerate(points))
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{num(sw)}" '
                 f'stroke-linecap="{cap}" stroke-linejoin="round"{extra}/>')

    def polygon(self, points, fill):
        p = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.add(f'<polygon points="{p}" fill="{fill}"/>')

    def circle(self, x, y, r, fill):
        self.add(f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" fill="{fill}"/>')

    def text(self, x, y, s, size=10, fill=INK, anchor="start", weight="normal"):
        """One line. `s` is a string or a list of (string, weight, fill) runs; a run may add a fourth item, a
        string of attributes (a superscript: 'dy="-4" font-size="8"', and the next run 'dy="4"')."""
        runs = [(s, weight, fill)] if isinstance(s, str) else s
        body = "".join(f'<tspan font-weight="{r[1]}" fill="{r[2]}"{" " + r[3] if len(r) > 3 else ""}>'
                       f'{escape(r[0])}</tspan>' for r in runs)
        # xml:space="preserve": a space at the edge of a run (after bold text) is kept by librsvg as by browsers,
        # which would otherwise collapse it differently.
        self.add(f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" text-anchor="{anchor}" '
                 f'xml:space="preserve">{body}</text>')

    def render(self):
        head = (f'<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}" font-family="{FONT}">\n'
                f'<title>Stage 07: the finished kernel (one CTA pair of a persistent grid)</title>\n'
                f'<rect width="{self.width}" height="{self.height}" fill="#ffffff"/>\n')
        return head + "\n".join(self.items) + "\n</svg>\n"


# Three kinds of connection, told apart by the stroke: data moves (solid, thick), an mbarrier signal (dashed:
# an arrive, a commit or TMA transaction bytes on a barrier, and the wait it releases), and "issues" (dotted:
# the warp that starts an asynchronous copy or MMA, which then runs without it).
DATA, SIGNAL, ISSUES = "data", "signal", "issues"
STYLE = {DATA: dict(sw=2.6, dash=None, head=9), SIGNAL: dict(sw=1.5, dash="5 3", head=7),
         ISSUES: dict(sw=1.4, dash="1.2 3", head=0)}


def connect(svg, points, colour, kind, head=True):
    """A polyline of axis-parallel segments ending in an arrowhead (drawn as a triangle, which every renderer
    draws alike, unlike SVG markers)."""
    st = STYLE[kind]
    pts = list(points)
    size = st["head"] if head else 0
    if size:
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        dx, dy = (x1 > x0) - (x1 < x0), (y1 > y0) - (y1 < y0)
        # The line stops inside the head, so a dash never pokes through its tip.
        pts[-1] = (x1 - dx * size * 0.6, y1 - dy * size * 0.6)
        w = size * 0.5
        svg.polygon([(x1, y1), (x1 - dx * size - dy * w, y1 - dy * size + dx * w),
                     (x1 - dx * size + dy * w, y1 - dy * size - dx * w)], colour)
    svg.line(pts, colour, st["sw"], st["dash"], cap="round" if kind == ISSUES else "butt")
    if kind == ISSUES:  # the dotted line starts at a dot on the thing issued
        svg.circle(*points[-1], 2.6, colour)


def role_box(svg, x0, x1, y0, y1, colour, bg, title, subtitle, lines):
    svg.rect(x0, y0, x1 - x0, y1 - y0, fill=bg, stroke=colour, sw=1.6, rx=7)
    cx = (x0 + x1) / 2
    svg.text(cx, y0 + 16, title, size=12, fill=colour, anchor="middle", weight="bold")
    y = y0 + 30
    if subtitle:
        svg.text(cx, y, subtitle, size=9.5, fill=INK_SOFT, anchor="middle")
        y += 14
    for s in lines:
        svg.text(cx, y, s, size=9.5, fill=INK, anchor="middle")
        y += 12.5


def barrier_pill(svg, x0, x1, yc, name, note, h=32):
    svg.rect(x0, yc - h / 2, x1 - x0, h, fill="#ffffff", stroke=INK_SOFT, sw=1.3, rx=h / 2)
    svg.text((x0 + x1) / 2, yc - 2, name, size=10.5, fill=INK, anchor="middle", weight="bold")
    svg.text((x0 + x1) / 2, yc + 10, note, size=9, fill=INK_SOFT, anchor="middle")


# --- Layout (pixels; the SVG is drawn for a width of 1100) ----------------------------------------------------------
W, H = 1100, 872
GIN = (12, 100)                 # global memory, inputs (left)
TRUNK_IN = 108                  # the load bus from the inputs to both CTAs
CTA_X = (118, 972)
GOUT = (1004, 1088)             # global memory, output (right)
TRUNK_OUT = 994                 # the store bus from both CTAs to C
PX_PER_KB = 10                  # shared memory is drawn to scale
RING_X = 200
RING_X1 = RING_X + STAGE_BYTES // 1024 * PX_PER_KB
TMEM_X, TMEM_W = 556, 288       # Tensor Memory is drawn to scale: 512 columns in TMEM_W pixels
STAGING_X = 898                 # the staging buffers, to the same scale as the ring
STAGING_CELL = STAGING_BYTES // 1024 * PX_PER_KB
# The roles, left to right in the order data passes them; the barriers between the roles that use them.
PROD_X, PILL1_X, MMA_X, PILL2_X, EPI_X = (128, 238), (260, 410), (434, 580), (600, 740), (762, 962)
ODD_PILL1_X, ODD_W1_X, ODD_PILL2_X = (260, 358), (374, 520), (600, 702)
# Even CTA: memory above, warps below. Odd CTA: warps above, memory below. The two sets of warps face each
# other, so the signals between the CTAs are short.
EVEN_Y = (68, 404)
MEM_TOP = 150                   # top of the ring, TMEM and staging
RING_PITCH, RING_ROW = 16, 14
TMEM_H = 64
ROLE_Y = (290, 394)
PILL_TOP_Y, PILL_BOTTOM_Y = 314, 368
ODD_Y = (482, 690)
ODD_ROLE_Y = (492, 540)
ODD_PILL_Y = 516
ODD_MEM_TOP = 572
ODD_RING_PITCH, ODD_RING_ROW = 10, 8
ODD_TMEM_H = 40
# Where the connections run (x of a vertical stretch, y of a horizontal one), clear of boxes and text.
PROD_ISSUE_X = 160              # producer -> its TMA load
CP_BEND_X, CP_Y = 506, 124      # tcgen05.cp: from the ring, over the accumulators, into the scale columns
MMA_ISSUE_X = 518               # MMA warp -> tcgen05.mma
ODD_MMA_ISSUE_X = 540           # MMA warp -> the odd CTA's cp + mma
EPI_IN_X = 800                  # tcgen05.ld: TMEM -> the epilogue's registers
LD_Y, ODD_LD_Y = 272, 556
EPI_ISSUE_X = 954               # epilogue lane 0 -> TMA store
GAP_HIGH_Y, GAP_LOW_Y = 436, 458  # the two horizontal lanes between the CTAs


def tmem_x(column):
    return TMEM_X + column * TMEM_W / TMEM_COLUMNS


def ring_row_mid(top, pitch, row_h, i):
    return top + i * pitch + row_h / 2


# --- The parts ------------------------------------------------------------------------------------------------------

def draw_ring(svg, top, pitch, row_h, labels):
    """The stages, one row each, A | B | SFA | SFB to scale (10 px per KB)."""
    parts = [(A_BYTES, FILL_A), (B_BYTES, FILL_B), (SFA_BYTES, FILL_SFA), (SFB_BYTES, FILL_SFB)]
    for i in range(STAGES):
        y, x = top + i * pitch, RING_X
        for n_bytes, fill in parts:
            w = n_bytes / 1024 * PX_PER_KB
            svg.rect(x, y, w, row_h, fill=fill, stroke="#ffffff", sw=0.8)
            x += w
        svg.rect(RING_X, y, RING_X1 - RING_X, row_h, stroke=TMA, sw=0.9)
        if labels:
            svg.text(RING_X + 5, y + row_h - 3.5, f"stage {i}", size=9, fill=INK_SOFT)


def draw_tmem(svg, top, h, labels):
    """128 lanes x 512 columns to scale: the accumulators, then each stage's scale columns, then the rest."""
    for b in range(ACC_BUFFERS):
        x0, x1 = tmem_x(b * BN), tmem_x((b + 1) * BN)
        svg.rect(x0, top, x1 - x0, h, fill=FILL_ACC, stroke=TMA, sw=0.9)
        cx = (x0 + x1) / 2
        if labels:
            svg.text(cx, top + 22, f"acc {b}", size=11, fill=INK, anchor="middle", weight="bold")
            svg.text(cx, top + 36, f"cols {b * BN}–{(b + 1) * BN - 1}", size=8.5, fill=INK_SOFT, anchor="middle")
            svg.text(cx, top + 50, "FP32", size=9, fill=INK_SOFT, anchor="middle")
        else:
            svg.text(cx, top + h / 2 + 4, f"acc {b}", size=10, fill=INK, anchor="middle", weight="bold")
    half = SF_COLUMNS_PER_STAGE // 2
    for s in range(STAGES):
        c0 = ACC_COLUMNS + s * SF_COLUMNS_PER_STAGE
        svg.rect(tmem_x(c0), top, tmem_x(c0 + half) - tmem_x(c0), h, fill=FILL_SFA)
        svg.rect(tmem_x(c0 + half), top, tmem_x(c0 + 2 * half) - tmem_x(c0 + half), h, fill=FILL_SFB)
        svg.rect(tmem_x(c0), top, tmem_x(c0 + 2 * half) - tmem_x(c0), h, stroke="#ffffff", sw=0.8)
        svg.text(tmem_x(c0 + half), top + h / 2 + 3.5, str(s), size=9, fill=INK, anchor="middle")
    svg.rect(tmem_x(TMEM_USED), top, tmem_x(TMEM_COLUMNS) - tmem_x(TMEM_USED), h, fill="#ffffff")
    # The four 32-lane quadrants, one per epilogue warp (a warp may only touch its own).
    for q in range(1, 4):
        y = top + q * h / 4
        for b in range(ACC_BUFFERS):
            x0, x1 = tmem_x(b * BN), tmem_x((b + 1) * BN)
            svg.line([(x0, y), (x0 + 5, y)], TMA, 0.9)
            svg.line([(x1 - 5, y), (x1, y)], TMA, 0.9)
    svg.rect(TMEM_X, top, TMEM_W, h, stroke=TMA, sw=1.2)


def draw_staging(svg, top, pitch, row_h, labels):
    """Two 2 KB buffers per epilogue warp, to the ring's scale."""
    for w in range(EPILOGUE_WARPS):
        y = top + w * pitch
        for b in range(STAGING_BUFFERS):
            svg.rect(STAGING_X + b * STAGING_CELL, y, STAGING_CELL, row_h, fill=FILL_STAGING, stroke=TMA, sw=0.9)
        if labels:
            svg.text(STAGING_X - 4, y + row_h - 3.5, f"w{w + 2}", size=9, fill=INK_SOFT, anchor="end")


def draw_global(svg):
    """Global memory: the inputs on the left, C (and the split-K workspace) on the right."""
    inputs = [("A", "M × K, E2M1"), ("B", "N × K, E2M1"), ("SFA", "E4M3, 1 per 16"), ("SFB", "E4M3, 1 per 16")]
    box_h, gap = 34, 8
    top = 336
    svg.text((GIN[0] + GIN[1]) / 2, top - 10, "global memory", size=10.5, fill=INK, anchor="middle",
             weight="bold")
    for i, (name, what) in enumerate(inputs):
        y = top + i * (box_h + gap)
        svg.rect(GIN[0], y, GIN[1] - GIN[0], box_h, fill=FILL_GLOBAL, stroke=EDGE, sw=1.1, rx=4)
        svg.text((GIN[0] + GIN[1]) / 2, y + 14, name, size=11, fill=INK, anchor="middle", weight="bold")
        svg.text((GIN[0] + GIN[1]) / 2, y + 27, what, size=8.5, fill=INK_SOFT, anchor="middle")
        svg.line([(GIN[1], y + box_h / 2), (TRUNK_IN, y + box_h / 2)], TMA, STYLE[DATA]["sw"])

    cx = (GOUT[0] + GOUT[1]) / 2
    svg.text(cx, top - 10, "global memory", size=10.5, fill=INK, anchor="middle", weight="bold")
    c_top = top
    svg.rect(GOUT[0], c_top, GOUT[1] - GOUT[0], 46, fill=FILL_GLOBAL, stroke=EDGE, sw=1.1, rx=4)
    svg.text(cx, c_top + 17, "C", size=12, fill=INK, anchor="middle", weight="bold")
    svg.text(cx, c_top + 31, "M × N, FP16", size=8.5, fill=INK_SOFT, anchor="middle")
    connect(svg, [(TRUNK_OUT, c_top + 23), (GOUT[0], c_top + 23)], TMA, DATA)
    w_top = c_top + 62
    svg.rect(GOUT[0], w_top, GOUT[1] - GOUT[0], 62, fill="#ffffff", stroke=EDGE, sw=1.1, rx=4, dash="4 3")
    for i, s in enumerate(["workspace", "split-K only:", "FP32 partials", "of the tile"]):
        svg.text(cx, w_top + 14 + i * 12, s, size=8.5 if i else 9.5, fill=INK_SOFT if i else INK,
                 anchor="middle", weight="normal" if i else "bold")


def draw_even_cta(svg):
    x0, x1 = CTA_X
    y0, y1 = EVEN_Y
    svg.rect(x0, y0, x1 - x0, y1 - y0, fill="#ffffff", stroke="#55555e", sw=1.6, rx=10)
    svg.text(x0 + 12, y0 + 21, [("CTA rank 0", "bold", INK), ("  even, the leader · one SM · "
                                f"{THREADS} threads = {THREADS // 32} warps · allocates all {TMEM_COLUMNS} "
                                "TMEM columns", "normal", INK_SOFT)], size=12)

    # Memory: shared memory (the ring, the staging buffers) and Tensor Memory.
    svg.text(RING_X, 112, f"Shared memory: {STAGES} stages × {kb(STAGE_BYTES)} (to scale)",
             size=11, weight="bold", fill=TMA)
    heads = [("A", f"{CTA_M} rows · {kb(A_BYTES)}", A_BYTES), ("B", f"{BN // CTA_GROUP} rows · {kb(B_BYTES)}",
             B_BYTES), ("SF", f"{SFA_BYTES // 1024}+{SFB_BYTES // 1024} KB", SFA_BYTES + SFB_BYTES)]
    x = RING_X
    for name, what, n_bytes in heads:
        w = n_bytes / 1024 * PX_PER_KB
        svg.text(x + w / 2, 130, name, size=9.5, anchor="middle", weight="bold")
        if what:
            svg.text(x + w / 2, 142, what, size=9, fill=INK_SOFT, anchor="middle")
        x += w
    draw_ring(svg, MEM_TOP, RING_PITCH, RING_ROW, labels=True)
    ring_bottom = MEM_TOP + (STAGES - 1) * RING_PITCH + RING_ROW
    svg.text(RING_X, ring_bottom + 13,
             f"rows of {TILE_K} k values ({TILE_K // 2} B), 128-byte swizzle · SF: SFA | SFB", size=9, fill=INK_SOFT)

    svg.text(TMEM_X, 112, f"Tensor Memory: {CTA_M} lanes × {TMEM_COLUMNS} columns", size=11, weight="bold",
             fill=TMA)
    draw_tmem(svg, MEM_TOP, TMEM_H, labels=True)
    tmem_bottom = MEM_TOP + TMEM_H
    svg.text(TMEM_X + TMEM_W, tmem_bottom + 13,
             f"{ACC_COLUMNS}–{TMEM_USED - 1}: scales, {SF_COLUMNS_PER_STAGE} per stage (SFA + SFB)",
             size=9, fill=INK_SOFT, anchor="end")
    svg.text(TMEM_X + TMEM_W, tmem_bottom + 25, f"{TMEM_USED}–{TMEM_COLUMNS - 1}: unused", size=9,
             fill=INK_SOFT, anchor="end")

    stg_cx = STAGING_X + STAGING_CELL
    svg.text(stg_cx - 8, 112, "staging", size=11, weight="bold", fill=TMA, anchor="middle")
    svg.text(stg_cx - 8, 128, f"{STAGING_BUFFERS} × {kb(STAGING_BYTES)} per warp:", size=8.5, fill=INK_SOFT,
             anchor="middle")
    svg.text(stg_cx - 8, 140, f"32 × {SUB_TILE_COLS} FP16, SW64", size=8.5, fill=INK_SOFT, anchor="middle")
    draw_staging(svg, MEM_TOP, RING_PITCH, RING_ROW, labels=True)

    # The warps.
    ry0, ry1 = ROLE_Y
    role_box(svg, *PROD_X, ry0, ry1, PRODUCER, PRODUCER_BG, "producer", "warp 0 · lane 0",
             ["per stage: TMA", "loads of A, B,", "SFA, SFB into", "this CTA"])
    role_box(svg, *MMA_X, ry0, ry1, MMA, MMA_BG, "MMA", "warp 1 · one elected lane",
             ["issues for both CTAs:", f"per stage: {TILE_K // MMA_K} × (cp, cp, mma)",
              f"M {PAIR_M} · N {BN} · K {MMA_K} each", "mxf4nvf4, block16 scales", "multicast commits"])
    role_box(svg, *EPI_X, ry0, ry1, EPILOGUE, EPILOGUE_BG, "epilogue",
             f"warps 2–5 ({32 * EPILOGUE_WARPS} threads)",
             ["warp w: TMEM lanes 32·(w % 4) … +31",
              f"{BN // SUB_TILE_COLS} × tcgen05.ld.32x32b.x{SUB_TILE_COLS}, wait::ld",
              "× alpha → FP16 → st.shared (16 B)", "lane 0: TMA store, wait_group.read 1",
              "warp 2 also: tcgen05.alloc / dealloc"])

    # The barriers: top row, the MMA warp's commits that free or fill a buffer; bottom row, the arrivals the
    # MMA warp waits for.
    barrier_pill(svg, *PILL1_X, PILL_TOP_Y, f"empty[s] × {STAGES}", "1 arrival: MMA commit")
    barrier_pill(svg, *PILL1_X, PILL_BOTTOM_Y, f"full[s] × {STAGES}",
                 f"1 arrival + {CTA_GROUP} × {kb(STAGE_BYTES)} of TMA")
    barrier_pill(svg, *PILL2_X, PILL_TOP_Y, f"acc_full[b] × {ACC_BUFFERS}", "1 arrival: MMA commit")
    barrier_pill(svg, *PILL2_X, PILL_BOTTOM_Y, f"acc_empty[b] × {ACC_BUFFERS}",
                 f"{CTA_GROUP * EPILOGUE_WARPS} arrivals: 4 warps × 2 CTAs")

    # Signals inside the CTA.
    connect(svg, [(MMA_X[0], PILL_TOP_Y), (PILL1_X[1], PILL_TOP_Y)], MMA, SIGNAL)
    connect(svg, [(PILL1_X[0], PILL_TOP_Y), (PROD_X[1], PILL_TOP_Y)], MMA, SIGNAL)
    connect(svg, [(PROD_X[1], PILL_BOTTOM_Y), (PILL1_X[0], PILL_BOTTOM_Y)], PRODUCER, SIGNAL)
    connect(svg, [(PILL1_X[1], PILL_BOTTOM_Y), (MMA_X[0], PILL_BOTTOM_Y)], PRODUCER, SIGNAL)
    connect(svg, [(MMA_X[1], PILL_TOP_Y), (PILL2_X[0], PILL_TOP_Y)], MMA, SIGNAL)
    connect(svg, [(PILL2_X[1], PILL_TOP_Y), (EPI_X[0], PILL_TOP_Y)], MMA, SIGNAL)
    connect(svg, [(EPI_X[0], PILL_BOTTOM_Y), (PILL2_X[1], PILL_BOTTOM_Y)], EPILOGUE, SIGNAL)
    connect(svg, [(PILL2_X[0], PILL_BOTTOM_Y), (MMA_X[1], PILL_BOTTOM_Y)], EPILOGUE, SIGNAL)

    # Data, and who issues it.
    load_y = ring_row_mid(MEM_TOP, RING_PITCH, RING_ROW, 3)
    connect(svg, [(TRUNK_IN, load_y), (RING_X, load_y)], TMA, DATA)
    svg.text((CTA_X[0] + RING_X) / 2 + 4, load_y - 7, "TMA load", size=9.5, fill=TMA, anchor="middle",
             weight="bold")
    connect(svg, [(PROD_ISSUE_X, ry0), (PROD_ISSUE_X, load_y + 3)], PRODUCER, ISSUES, head=False)

    cp_y = ring_row_mid(MEM_TOP, RING_PITCH, RING_ROW, 0)
    sf_x = tmem_x(ACC_COLUMNS + STAGES * SF_COLUMNS_PER_STAGE / 2)
    connect(svg, [(RING_X1, cp_y), (CP_BEND_X, cp_y), (CP_BEND_X, CP_Y), (sf_x, CP_Y), (sf_x, MEM_TOP)], MMA, DATA)
    svg.text(TMEM_X + 4, 140, "tcgen05.cp: stage s's SFA, SFB", size=9, fill=MMA, weight="bold")
    mma_y = MEM_TOP + TMEM_H / 2 + 4
    connect(svg, [(RING_X1, mma_y), (TMEM_X, mma_y)], MMA, DATA)
    svg.text((RING_X1 + TMEM_X) / 2 + 1, mma_y - 7, "tcgen05.mma", size=9.5, fill=MMA, anchor="middle",
             weight="bold")
    connect(svg, [(MMA_ISSUE_X, ry0), (MMA_ISSUE_X, mma_y + 3)], MMA, ISSUES, head=False)

    ld_x = tmem_x(BN)
    connect(svg, [(ld_x, tmem_bottom), (ld_x, LD_Y), (EPI_IN_X, LD_Y), (EPI_IN_X, ry0)], EPILOGUE, DATA)
    svg.text(ld_x + 8, LD_Y - 5, "tcgen05.ld (acc b)", size=9.5, fill=EPILOGUE, weight="bold")
    stg_mid_x = STAGING_X + STAGING_CELL
    stg_bottom = MEM_TOP + (EPILOGUE_WARPS - 1) * RING_PITCH + RING_ROW
    connect(svg, [(stg_mid_x, ry0), (stg_mid_x, stg_bottom)], EPILOGUE, DATA)
    svg.text(stg_mid_x - 6, 251, "st.shared,", size=9.5, fill=EPILOGUE, anchor="end", weight="bold")
    svg.text(stg_mid_x - 6, 262, "fence.proxy.async", size=9.5, fill=EPILOGUE, anchor="end", weight="bold")
    store_y = (MEM_TOP + stg_bottom) / 2
    stg_right = STAGING_X + STAGING_BUFFERS * STAGING_CELL
    connect(svg, [(stg_right, store_y), (TRUNK_OUT, store_y)], TMA, DATA, head=False)
    svg.text((stg_right + CTA_X[1]) / 2, store_y - 16, "TMA", size=9.5, fill=TMA, anchor="middle", weight="bold")
    svg.text((stg_right + CTA_X[1]) / 2, store_y - 5, "store", size=9.5, fill=TMA, anchor="middle", weight="bold")
    connect(svg, [(EPI_ISSUE_X, ry0), (EPI_ISSUE_X, store_y + 3)], EPILOGUE, ISSUES, head=False)


def draw_odd_cta(svg):
    x0, x1 = CTA_X
    y0, y1 = ODD_Y
    svg.rect(x0, y0, x1 - x0, y1 - y0, fill="#ffffff", stroke="#55555e", sw=1.6, rx=10)
    svg.text(x0 + 12, y1 - 12, [("CTA rank 1", "bold", INK), ("  odd · one SM · the same ring, staging and "
                                "TMEM layout, its own loads and epilogue; its full[ ] and acc_empty[ ] are "
                                "unused", "normal", INK_SOFT)], size=12)

    ry0, ry1 = ODD_ROLE_Y
    role_box(svg, *PROD_X, ry0, ry1, PRODUCER, PRODUCER_BG, "producer", "warp 0 · its own loads", [])
    role_box(svg, *ODD_W1_X, ry0, ry1, "#8a8a93", "#f4f4f6", "warp 1: idle", "rank 0's MMA warp issues",
             [])
    svg.text((ODD_W1_X[0] + ODD_W1_X[1]) / 2, ry0 + 42, "this CTA's cp and mma", size=9.5, fill=INK_SOFT,
             anchor="middle")
    role_box(svg, *EPI_X, ry0, ry1, EPILOGUE, EPILOGUE_BG, "epilogue",
             f"warps 2–5 · rows {CTA_M}–{PAIR_M - 1} of the tile", [])
    barrier_pill(svg, *ODD_PILL1_X, ODD_PILL_Y, f"empty[s] × {STAGES}", "1 arrival")
    barrier_pill(svg, *ODD_PILL2_X, ODD_PILL_Y, f"acc_full[b] × {ACC_BUFFERS}", "1 arrival")
    connect(svg, [(ODD_PILL1_X[0], ODD_PILL_Y), (PROD_X[1], ODD_PILL_Y)], MMA, SIGNAL)
    connect(svg, [(ODD_PILL2_X[1], ODD_PILL_Y), (EPI_X[0], ODD_PILL_Y)], MMA, SIGNAL)

    top = ODD_MEM_TOP
    draw_ring(svg, top, ODD_RING_PITCH, ODD_RING_ROW, labels=False)
    draw_tmem(svg, top, ODD_TMEM_H, labels=False)
    draw_staging(svg, top, ODD_RING_PITCH, ODD_RING_ROW, labels=False)

    load_y = ring_row_mid(top, ODD_RING_PITCH, ODD_RING_ROW, 3)
    connect(svg, [(TRUNK_IN, load_y), (RING_X, load_y)], TMA, DATA)
    svg.text((CTA_X[0] + RING_X) / 2 + 4, load_y + 16, "TMA load", size=9.5, fill=TMA, anchor="middle",
             weight="bold")
    connect(svg, [(PROD_ISSUE_X, ry1), (PROD_ISSUE_X, load_y - 3)], PRODUCER, ISSUES, head=False)
    mma_y = top + ODD_TMEM_H / 2
    connect(svg, [(RING_X1, mma_y), (TMEM_X, mma_y)], MMA, DATA)
    svg.text((RING_X1 + TMEM_X) / 2 - 8, mma_y + 16, "cp + mma", size=9.5, fill=MMA, anchor="middle",
             weight="bold")
    ld_x = tmem_x(BN)
    connect(svg, [(ld_x, top), (ld_x, ODD_LD_Y), (EPI_IN_X, ODD_LD_Y), (EPI_IN_X, ry1)], EPILOGUE, DATA)
    stg_mid_x = STAGING_X + STAGING_CELL
    connect(svg, [(stg_mid_x, ry1), (stg_mid_x, top)], EPILOGUE, DATA)
    stg_bottom = top + (EPILOGUE_WARPS - 1) * ODD_RING_PITCH + ODD_RING_ROW
    store_y = (top + stg_bottom) / 2
    stg_right = STAGING_X + STAGING_BUFFERS * STAGING_CELL
    connect(svg, [(stg_right, store_y), (TRUNK_OUT, store_y)], TMA, DATA, head=False)
    svg.text((stg_right + CTA_X[1]) / 2, store_y + 16, "TMA", size=9.5, fill=TMA, anchor="middle", weight="bold")
    svg.text((stg_right + CTA_X[1]) / 2, store_y + 27, "store", size=9.5, fill=TMA, anchor="middle",
             weight="bold")
    connect(svg, [(EPI_ISSUE_X, ry1), (EPI_ISSUE_X, store_y - 3)], EPILOGUE, ISSUES, head=False)
    return load_y, store_y, mma_y


def draw_between(svg, odd_load_y, odd_store_y, odd_mma_y):
    """What crosses between the CTAs: the odd CTA's load bytes and epilogue arrivals go to the even CTA's
    barriers; the MMA warp's commits go to both CTAs; its MMAs read and write the odd CTA's memory."""
    even_store_y = (MEM_TOP + MEM_TOP + (EPILOGUE_WARPS - 1) * RING_PITCH + RING_ROW) / 2
    even_load_y = ring_row_mid(MEM_TOP, RING_PITCH, RING_ROW, 3)
    svg.line([(TRUNK_IN, even_load_y), (TRUNK_IN, odd_load_y)], TMA, STYLE[DATA]["sw"])
    svg.line([(TRUNK_OUT, even_store_y), (TRUNK_OUT, odd_store_y)], TMA, STYLE[DATA]["sw"])

    pill_bottom = PILL_BOTTOM_Y + 16
    odd_pill_top = ODD_PILL_Y - 16
    mma_bottom, odd_top = ROLE_Y[1], ODD_ROLE_Y[0]
    connect(svg, [(200, odd_top), (200, GAP_HIGH_Y), (300, GAP_HIGH_Y), (300, pill_bottom)], PRODUCER, SIGNAL)
    svg.text(306, 420, "its loads' bytes", size=9, fill=PRODUCER)
    svg.text(306, 431, "(complete_tx)", size=9, fill=PRODUCER)
    connect(svg, [(450, mma_bottom), (450, GAP_LOW_Y), (330, GAP_LOW_Y), (330, odd_pill_top)], MMA, SIGNAL)
    svg.text(336, 472, "multicast commit", size=9, fill=MMA)
    connect(svg, [(566, mma_bottom), (566, GAP_LOW_Y), (640, GAP_LOW_Y), (640, odd_pill_top)], MMA, SIGNAL)
    svg.text(634, 472, "multicast commit", size=9, fill=MMA, anchor="end")
    connect(svg, [(830, odd_top), (830, GAP_HIGH_Y), (700, GAP_HIGH_Y), (700, pill_bottom)], EPILOGUE, SIGNAL)
    svg.text(706, 420, "its 4 warps arrive", size=9, fill=EPILOGUE)
    svg.text(706, 431, "(remote, at rank 0)", size=9, fill=EPILOGUE)
    connect(svg, [(ODD_MMA_ISSUE_X, mma_bottom), (ODD_MMA_ISSUE_X, odd_mma_y - 3)], MMA, ISSUES, head=False)
    svg.text(846, 452, "cluster of 2 CTAs:", size=9, fill=INK_SOFT)
    svg.text(846, 463, "barriers reached via", size=9, fill=INK_SOFT)
    svg.text(846, 474, "shared::cluster", size=9, fill=INK_SOFT)


def draw_legend(svg, top):
    samples = [(12, DATA, TMA, "data, in the colour of what moves it (TMA, tensor core, epilogue threads)"),
               (492, SIGNAL, INK_SOFT, "mbarrier signal → the warp that waits, in the sender's colour"),
               (890, ISSUES, INK_SOFT, "issues async work")]
    for x, kind, colour, label in samples:
        connect(svg, [(x, top), (x + 34, top)], colour, kind, head=kind != ISSUES)
        svg.text(x + 42, top + 3.5, label, size=10, fill=INK)
    chips = [(12, PRODUCER, PRODUCER_BG, "producer (warp 0)"), (190, MMA, MMA_BG, "MMA (warp 1), tensor core"),
             (410, EPILOGUE, EPILOGUE_BG, "epilogue (warps 2–5)"), (600, TMA, TMA_BG, "TMA, memory")]
    for x, colour, bg, label in chips:
        svg.rect(x, top + 15, 16, 12, fill=bg, stroke=colour, sw=1.5, rx=2)
        svg.text(x + 22, top + 25, label, size=10, fill=INK)
    svg.rect(760, top + 14, 30, 14, fill="#ffffff", stroke=INK_SOFT, sw=1.3, rx=7)
    svg.text(798, top + 25, "mbarrier: how many, arrivals per phase", size=10, fill=INK)


def draw_notes(svg, top):
    notes = [
        [("Persistent. ", "bold", INK),
         ("The grid holds as many pairs as are resident, P (fewer if there are fewer units); pair p runs units "
          f"p, p + P, p + 2P, …, each a {PAIR_M} × {BN} tile of C", "normal", INK_SOFT)],
        [("", "normal", INK),
         (f"(or a K range of one). With {ACC_BUFFERS} accumulators the MMAs of the next unit run while the "
          "epilogue drains this one, which frees acc_empty[b] once its 4 loads are in registers.", "normal",
          INK_SOFT)],
        [("cta_group::2. ", "bold", INK),
         (f"One MMA instruction (M = {PAIR_M}) multiplies each CTA's {CTA_M} rows of A by the tile's {BN} rows "
          f"of B, {BN // CTA_GROUP} from each CTA, into that CTA's own accumulator.", "normal", INK_SOFT)],
        [("Split-K. ", "bold", INK),
         ("When there are fewer tiles than pairs, a unit is a K range of a tile: every split but the last to "
          "arrive writes an FP32 partial to the workspace; the last adds them in split order.", "normal", INK_SOFT)],
        [("Direct stores. ", "bold", INK),
         ("When N % 8 ≠ 0 or C is not 16-byte aligned, the epilogue stores C from registers (stage 06's "
          "epilogue): no staging, no TMA store.", "normal", INK_SOFT)],
    ]
    for i, runs in enumerate(notes):
        svg.text(12, top + i * 15, runs, size=10)


def build():
    svg = Svg(W, H)
    svg.text(12, 30, "Stage 07: the finished kernel (one CTA pair of a persistent grid)", size=20, weight="bold")
    svg.text(12, 52, [(f"A pair of CTAs on two SMs computes {PAIR_M} × {BN} tiles of C = alpha · A B", "normal",
                       INK_SOFT), ("T", "normal", INK_SOFT, 'dy="-5" font-size="8.5"'),
                      (f" from NVFP4 A, B and their scales; each CTA holds {CTA_M} of the rows.", "normal", INK_SOFT,
                       'dy="5"')], size=12)
    draw_global(svg)
    draw_even_cta(svg)
    odd = draw_odd_cta(svg)
    draw_between(svg, *odd)
    draw_legend(svg, 716)
    draw_notes(svg, 770)
    svg.text(W - 12, H - 12, f"Drawn from {KERNEL}; numbers per CTA.", size=10, fill=INK_FAINT, anchor="end")
    return svg.render()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the SVG is missing or not current")
    args = ap.parse_args()
    svg = build()
    rel = SVG_OUT.relative_to(ROOT)
    if args.check:
        if not SVG_OUT.exists():
            print(f"FAILED: {rel} is missing: run python3 docs/pipeline_diagram.py")
            return 1
        if SVG_OUT.read_bytes() != svg.encode("utf-8"):
            print(f"FAILED: {rel} is not current: run python3 docs/pipeline_diagram.py")
            return 1
        print(f"{rel} is current")
        return 0
    SVG_OUT.write_bytes(svg.encode("utf-8"))
    print("wrote", rel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
