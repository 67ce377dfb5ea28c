#!/usr/bin/env python3
"""A B200 MODEL of stage 11 (the MXFP8 GEMM: kind::mxf8f6f4, E4M3 one byte per value, one UE8M0 scale per 32 values
of K; FP32 or BF16 C): predicted lower bounds on time per shape, from NVIDIA's published peak figures and each
step's tiling, beside the measured ladder of the MXFP8 worklog the stage follows. Nothing here is measured by this
project; no GPU is involved.

    python3 docs/b200_model_mxfp8.py          write docs/data/b200_model_mxfp8.json; the whole model between
                                              <!-- mxfp8-model-page:begin --> / <!-- mxfp8-model-page:end --> in
                                              docs/b200_model_mxfp8.md; a short block (the model beside the
                                              measured ladder, a link to the page) between
                                              <!-- mxfp8-model:begin --> / <!-- mxfp8-model:end --> in
                                              11_mxfp8/README.md; print the page's block.
    python3 docs/b200_model_mxfp8.py --check  consistency checks (every bound >= SOL, the method reproduces
                                              docs/b200_model.py's stage 06/07 bounds with NVFP4's parameters, the
                                              model's steps 1, 2 and 3 are 11_mxfp8/kernel_format.cuh's,
                                              kernel_n256.cuh's and kernel.cuh's tiling (tile, BK, MMAs per k-tile,
                                              slots, TMEM columns, slot bytes), every step fits Tensor Memory
                                              and shared memory, the tile orders cover every tile once,
                                              no measured figure beats its bound, hand-worked values), and that the
                                              committed JSON, the page's block and the README's block are current;
                                              changes nothing. Exit code 1 on a failure.

The steps, each a lower bound with the method docs/b200_model.py uses for stages 06/07 (persistent pairs, the
tiles in rounds of 74, the epilogue behind the next tile's MMAs, min bytes at 8 TB/s):

  step 1 (kernel_format.cuh), built, 11_mxfp8/kernel_format.cuh (namespace stage11_format): stage 07's persistent
      2-CTA kernel, a 256 x 128 tile per CTA pair, k-tiles of 128 values (128 bytes), 4 MMAs of K = 32 per k-tile,
      8 ring slots of 25 KB, 2 TMEM accumulators of 128 columns (256 columns), TMA-store epilogue, unit u on pair
      u mod 74, tile-rows rasterised in groups of 8.
  step 2 (kernel_n256.cuh), built, 11_mxfp8/kernel_n256.cuh (namespace stage11_n256): step 1 with MMA_N = 256, a
      256 x 256 tile per pair, two 256-column accumulators overlapping by 128 TMEM columns (384 columns) so that the
      scale columns still fit, 6 ring slots of 34 KB (33.5 KB brought by TMA), BK 128, the TMA-store epilogue
      reading each unit in two halves of 128 columns, the shared half first.
  step 3 (kernel.cuh), built, 11_mxfp8/kernel.cuh (namespace stage11): step 2 with k-tiles of 256 values: two
      128-byte swizzle rows ("k-atoms") of A and of B a k-tile, each its own TMA box, two scale atoms of SFA and
      of each SFB row block, 8 MMAs per k-tile; 3 ring slots of 67 KB (no padding; the ring holds the same 768
      values of k as step 2's), 24 scale columns a slot beside the 384 accumulator columns; the same tile order.

The step numbers are those of 11_mxfp8/README.md's step table. The Hilbert tile order the seed added (its steps 6
and up) is not built: the model's L2 estimate (the page's tile-order table) gives the groups of 8 tile-rows of
steps 1-3 7% more DRAM bytes than Hilbert at 16384^3 and, at 8192^3, where the two differ more, a DRAM time under a
third of the MMA time; no bound depends on the order.

The published figures come from docs/b200_model.py (imported, not restated). The dense MXFP8 rate is ASSUMED to be
half the dense NVFP4 rate (see MXFP8_DENSE_FLOPS).
"""
import argparse
import functools
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import b200_model as base  # noqa: E402  (docs/b200_model.py: the published figures and their conventions)

ROOT = pathlib.Path(__file__).resolve().parent.parent
JSON_OUT = ROOT / "docs" / "data" / "b200_model_mxfp8.json"
README = ROOT / "11_mxfp8" / "README.md"
PAGE = ROOT / "docs" / "b200_model_mxfp8.md"
KERNEL_FORMAT = ROOT / "11_mxfp8" / "kernel_format.cuh"  # step 1
KERNEL_N256 = ROOT / "11_mxfp8" / "kernel_n256.cuh"      # step 2
KERNEL = ROOT / "11_mxfp8" / "kernel.cuh"                # step 3
BEGIN, END = "<!-- mxfp8-model:begin -->", "<!-- mxfp8-model:end -->"                  # in README: the short block
PAGE_BEGIN, PAGE_END = "<!-- mxfp8-model-page:begin -->", "<!-- mxfp8-model-page:end -->"  # in PAGE: the whole model
TITLE = "B200 MODEL of stage 11 (predicted lower bounds from published peak figures; not measured)"

SMS, PAIRS = base.SMS, base.PAIRS
HBM_BYTES_PER_S, HBM_BYTES_PER_S_ALT = base.HBM_BYTES_PER_S, base.HBM_BYTES_PER_S_ALT
ceil_div, round_up, extents = base.ceil_div, base.round_up, base.extents

# --- The tensor-core rate: an ASSUMPTION derived from the published NVFP4 figure -----------------------------------
# At the same instruction shape (M = 256 per pair, N up to 256) kind::mxf4nvf4 multiplies K = 64 values per
# instruction and kind::mxf8f6f4 K = 32 (PTX ISA, tcgen05.mma shapes). Assumed: an instruction of either kind takes
# the same time, so the MXFP8 rate is NVFP4's x 32 / 64 = 4.5 PFLOP/s dense. NVIDIA publishes no separate dense MXFP8
# figure on the pages docs/b200_model.py cites; common/device_info.h makes the same assumption per clock (8192 MACs
# at FP8, x 2 for FP4).
NVFP4_MMA_K = base.MMA_K          # 64 values of k per kind::mxf4nvf4 MMA
MXFP8_MMA_K = 32                  # 32 values of k per kind::mxf8f6f4 MMA
MXFP8_DENSE_FLOPS = base.NVFP4_DENSE_FLOPS * MXFP8_MMA_K / NVFP4_MMA_K
PER_SM_FLOPS = MXFP8_DENSE_FLOPS / SMS

FIGURES = {key: base.FIGURES[key] for key in ("nvfp4_dense_flops", "sms", "hbm_bytes_per_s")}
FIGURES["mxfp8_dense_flops"] = dict(
    value=MXFP8_DENSE_FLOPS, what="dense MXFP8 tensor-core rate of one B200, FLOP/s: ASSUMED",
    source="derived (assumption): nvfp4_dense_flops x 32 / 64: kind::mxf8f6f4 does K = 32 per instruction where "
           "kind::mxf4nvf4 does K = 64, at the same instruction shape and, assumed, the same time per instruction")
FIGURES["per_sm_flops"] = dict(value=PER_SM_FLOPS, what="mxfp8_dense_flops / sms: an even share per SM (assumed)",
                               source="derived")

# --- Stage 11's parameters, spelled as in 11_mxfp8/kernel_format.cuh, kernel_n256.cuh and kernel.cuh (--check
# compares them) ---------------------------------------------------------------------------------------------------
# Shared by the three files:
kCtaGroup = 2     # a CTA pair issues one MMA
kBM = 256         # rows of C per pair: M of the MMA
kMmaK = MXFP8_MMA_K
kAccBuffers = 2   # accumulators in TMEM
kGroupM = 8       # tile-rows per rasterisation group of unit_at
kSmemPerBlock = 232448
kStaticSmemMargin = 2048
kEpilogueWarps, kStagingBuffers, kStagingBytes = 4, 2, 32 * 64
kTmemColumns = 512
MODEL_CONSTANTS = dict(kCtaGroup=kCtaGroup, kBM=kBM, kMmaK=kMmaK, kAccBuffers=kAccBuffers,
                       kGroupM=kGroupM, kSmemPerBlock=kSmemPerBlock, kStaticSmemMargin=kStaticSmemMargin,
                       kEpilogueWarps=kEpilogueWarps, kStagingBuffers=kStagingBuffers, kStagingBytes=kStagingBytes,
                       kTmemColumns=kTmemColumns)
# Each built step's own, as its file has them: kBN, kOverlapColumns (absent in kernel_format.cuh: 0), kTileK (values
# of k per k-tile: 128, one 128-byte swizzle row at a byte a value, in steps 1 and 2; 256, two of them, in step 3),
# and what its kStepsPerTile (MMAs per k-tile), kSlots, kAccColumns and sizeof(Slot) come to (their comments and
# static_asserts); --check reads them from the file (a constant named here overrides MODEL_CONSTANTS) and recomputes
# the MMAs, the slots, the slot and the TMEM columns with resources().
KERNEL_FILES = {
    "1": dict(path=KERNEL_FORMAT, namespace="stage11_format", kBN=128, kOverlapColumns=0, kTileK=128, kStepsPerTile=4,
              kSlots=8, kAccColumns=256, slot_bytes=25 * 1024, slot_tma_bytes=25 * 1024),
    "2": dict(path=KERNEL_N256, namespace="stage11_n256", kBN=256, kOverlapColumns=128, kTileK=128, kStepsPerTile=4,
              kSlots=6, kAccColumns=384, slot_bytes=34816, slot_tma_bytes=34304),
    "3": dict(path=KERNEL, namespace="stage11", kBN=256, kOverlapColumns=128, kTileK=256, kStepsPerTile=8,
              kSlots=3, kAccColumns=384, slot_bytes=68608, slot_tma_bytes=68608),
}
FILE_CONSTANTS = ("kBN", "kOverlapColumns", "kTileK")  # the per-file constants kernel_facts() reads as numbers
MX_SF_VEC, SF_ROW_BLOCK, SF_COL_BLOCK = 32, base.SF_ROW_BLOCK, base.SF_COL_BLOCK  # one UE8M0 per 32 k; 128 x 4 atoms

# --- The steps ---------------------------------------------------------------------------------------------------
# bn: the pair's tile columns (MMA_N); bk: values of k per k-tile; overlap: TMEM columns the two accumulators share;
# order: the tile order ("group": unit_at's groups of kGroupM tile-rows; "hilbert": a Hilbert curve where the tile
# grid is a square power of two and M, N >= HILBERT_MIN, else "group"; no step is built with it, the L2 estimate
# compares it).
# label: the step as the stage README's step table numbers it; file: where it is built.
STEPS = {
    "1": dict(bn=KERNEL_FILES["1"]["kBN"], bk=KERNEL_FILES["1"]["kTileK"], overlap=KERNEL_FILES["1"]["kOverlapColumns"],
              order="group", built=True, file="11_mxfp8/kernel_format.cuh", label="step 1 (kernel_format.cuh)",
              name="step 1 (kernel_format.cuh): 256 x 128 per pair, BK 128"),
    "2": dict(bn=KERNEL_FILES["2"]["kBN"], bk=KERNEL_FILES["2"]["kTileK"], overlap=KERNEL_FILES["2"]["kOverlapColumns"],
              order="group", built=True, file="11_mxfp8/kernel_n256.cuh", label="step 2 (kernel_n256.cuh)",
              name="step 2 (kernel_n256.cuh): MMA_N 256, 256 x 256 per pair, two accumulators overlapping by 128 "
                   "TMEM columns, BK 128"),
    "3": dict(bn=KERNEL_FILES["3"]["kBN"], bk=KERNEL_FILES["3"]["kTileK"], overlap=KERNEL_FILES["3"]["kOverlapColumns"],
              order="group", built=True, file="11_mxfp8/kernel.cuh", label="step 3 (kernel.cuh)",
              name="step 3 (kernel.cuh): step 2 with k-tiles of 256 values (8 MMAs per slot, 3 slots of 67 KB)"),
}
HILBERT_MIN = 8192  # the seed applied its Hilbert order at M = N = K >= 8192 only (its steps 8 and 10)

# --- The shapes: M = N = K with FP32 C (the seed's), one BF16-output shape (FlashInfer's) ------------------------
SHAPES = [(2048, 2048, 2048, 4), (4096, 4096, 4096, 4), (8192, 8192, 8192, 4), (16384, 16384, 16384, 4),
          (8192, 8192, 4096, 2)]  # (M, N, K, bytes per element of C)
SQUARES = [s[:3] for s in SHAPES if s[3] == 4]

# --- Measured elsewhere: the seed's ladder and FlashInfer (B200; not measured by this project) --------------------
SEED_SOURCE = ("seed worklog 003: D. Vega-Myhre, 'MXFP8 GEMM: Up to 99% of cuBLAS performance using CUDA + PTX' "
               "(code: danielvegamyhre/gemm, blackwell/mxfp8); B200 at 1000 W, CUDA 13.0, PyTorch 2.11.0+cu130, "
               "K-major A and B, FP32 C")
# TFLOP/s at M = N = K = 2048, 4096, 8192, 16384, as the worklog prints them; the model step each is bounded by.
SEED_LADDER = [
    ("0", "initial: 2-CTA, MMA 128 x 128 per CTA (256 x 128 per pair), BK 128, 2 accumulators, st.global epilogue",
     "1", (478.49, 877.78, 1171.53, 1235.61)),
    ("1", "MMA_N 256, two 256-column accumulators overlapping by 128", "2", (797.73, 1443.69, 1900.74, 1933.43)),
    ("2", "8-float vector stores", "2", (798.92, 1543.29, 1955.59, 1990.72)),
    ("3", "BK 256", "3", (837.55, 1789.57, 2126.22, 2104.80)),
    ("4", "TMA multicast of SFB to both CTAs", "3", (802.50, 1789.57, 2134.28, 2143.80)),
    ("5", "static register indexing (no local memory)", "3", (883.01, 2199.16, 2370.29, 2181.83)),
    ("6", "Hilbert-curve tile order", "3", (881.56, 2159.36, 2502.71, 2412.20)),
    ("7", "st.global.L1::no_allocate", "3", (885.93, 2201.42, 2537.46, 2432.80)),
    ("8", "Hilbert only at >= 8192", "3", (979.69, 2206.51, 2526.08, 2447.84)),
    ("9", "TMEM -> registers -> swizzled SMEM -> pipelined TMA store", "3", (884.47, 2202.55, 2550.27, 2478.36)),
    ("10", "final: the epilogue chosen by shape (TMA store only at >= 8192)", "3", (986.90, 2200.29, 2599.07, 2487.72)),
    ("11", "64-column accumulator overlap instead of 128", "3", (981.48, 2202.55, 2550.27, 2425.23)),
]
SEED_TABLE_STEPS = ("0", "1", "3", "5", "6", "10")  # the rows the ladder table shows (the JSON has all)
CUBLAS = (996.05, 2538.40, 2691.93, 2571.48)  # torch._scaled_mm, the worklog's baseline column
SEED_FINAL_OVER_CUBLAS = (0.99, 0.87, 0.97, 0.97)  # the worklog's printed speedups (a transcription check)
FLASHINFER = dict(shape=(8192, 8192, 4096), c_bytes=2, tflops=3200.870, median_ms=0.172,
                  source="flashinfer-ai/flashinfer PR #2464 (mm_mxfp8, CUTLASS backend, autotuned, BF16 out, B200): "
                         "'median time 0.172 ms ... achieved tflops 3200.870'")
# The loaded DRAM latency measured on an H100 (docs/data/dram_latency_probe_h100.txt): what a ring of slots must
# cover. A B200's is not known here; the figure only puts the ring depth in proportion.
LOADED_DRAM_LATENCY_H100 = 932e-9
# L2 capacity of a B200 as the worklog states it ("L2 size (126MB)"); only the tile-order estimate uses it.
L2_BYTES = 126e6


# --- Bytes ---------------------------------------------------------------------------------------------------------
def sf_bytes(rows, k):
    """One operand's UE8M0 scales in the blocked layout: rows padded to 128, 32-value blocks padded to 4."""
    return round_up(rows, SF_ROW_BLOCK) * round_up(ceil_div(k, MX_SF_VEC), SF_COL_BLOCK)


def min_bytes(m, n, k, c_bytes):
    """What must cross DRAM at least: A and B one byte a value, both scale arrays, C (FP32 or BF16), once each."""
    return m * k + n * k + sf_bytes(m, k) + sf_bytes(n, k) + c_bytes * m * n


def panel_a(rows, k):
    return rows * k + sf_bytes(rows, k)


def tile_bytes(rows, cols, k, c_bytes):
    """One tile's loads and store when nothing is shared through L2 (rows past M cost nothing: TMA zero-fills)."""
    return panel_a(rows, k) + panel_a(cols, k) + c_bytes * rows * cols


# --- The method of docs/b200_model.py's stage 06/07, with its parameters as arguments ------------------------------
def persistent(m, n, k, bm, bn, mma_k, per_sm_flops, nbytes, tile_nbytes, bw=HBM_BYTES_PER_S):
    """A persistent pair kernel: tiles of bm x bn taken by PAIRS pairs in rounds; a pair's tensor core computes a
    whole tile (rows past M included) over K padded to the MMA's K at two SMs' share of the rate; the epilogue runs
    behind the next tile's MMAs; DRAM moves at least nbytes. bound = max(T_tensor, T_dram). With NVFP4's parameters
    this is docs/b200_model.py's stage06() (--check compares them)."""
    rows, cols = extents(m, bm), extents(n, bn)
    tiles = len(rows) * len(cols)
    waves = ceil_div(tiles, PAIRS)
    unit_time = 2 * bm * bn * round_up(k, mma_k) / (kCtaGroup * per_sm_flops)
    t_tensor = waves * unit_time
    no_reuse = sum(tile_nbytes(r, c, k) for r in rows for c in cols)
    return dict(tiles=tiles, tiles_m=len(rows), tiles_n=len(cols), units=tiles, waves=waves,
                pairs_launched=min(PAIRS, tiles), pairs_busy=tiles / (waves * PAIRS), unit_time=unit_time,
                executed_flops=tiles * 2 * bm * bn * round_up(k, mma_k), t_tensor=t_tensor, t_dram=nbytes / bw,
                t_dram_no_reuse=no_reuse / bw, bytes=nbytes, bytes_no_reuse=no_reuse,
                bound=max(t_tensor, nbytes / bw))


# --- Tile orders ---------------------------------------------------------------------------------------------------
def order_group(tiles_m, tiles_n, t):
    """unit_at() of 11_mxfp8/kernel_format.cuh, kernel_n256.cuh and kernel.cuh (one batch), line by line: tile t ->
    (tile-row, tile-column)."""
    first_m = t // (kGroupM * tiles_n) * kGroupM
    rows_in_group = min(tiles_m - first_m, kGroupM)
    in_group = t % (kGroupM * tiles_n)
    return first_m + in_group % rows_in_group, in_group // rows_in_group


def order_row_major(tiles_m, tiles_n, t):
    """The plain order of the seed's steps 0-5: the output's tiles row by row."""
    return t // tiles_n, t % tiles_n


def hilbert_d2xy(side, d):
    """The d-th cell of a Hilbert curve over a side x side grid (side a power of two): the textbook conversion,
    rotating the quadrant at each level. Consecutive cells share an edge."""
    x = y = 0
    s, t = 1, d
    while s < side:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        x, y = x + s * rx, y + s * ry
        t //= 4
        s *= 2
    return x, y


def hilbert_applies(m, n, tiles_m, tiles_n):
    return tiles_m == tiles_n and tiles_m & (tiles_m - 1) == 0 and m >= HILBERT_MIN and n >= HILBERT_MIN


def order_hilbert(tiles_m, tiles_n, t):
    x, y = hilbert_d2xy(tiles_m, t)
    return y, x


ORDERS = {"row_major": order_row_major, "group": order_group, "hilbert": order_hilbert}


@functools.lru_cache(maxsize=None)
def l2_lru_bytes(m, n, k, c_bytes, bm, bn, order, capacity=None):
    """An ESTIMATE of the DRAM bytes under one tile order, in no bound: the units in the order's sequence (round by
    round, as the 74 pairs take them), each reading its A row-panel and B column-panel (K values a row, with their
    scales) through an L2 of `capacity` bytes kept in least-recently-used order at panel granularity, and writing
    its C tile, which occupies L2 and is never read again. DRAM bytes = the panels' misses + all of C. It ignores
    that the pairs drift apart, that L2 lines, not panels, are evicted, and that a B200's L2 is two halves."""
    from collections import OrderedDict
    capacity = L2_BYTES if capacity is None else capacity
    rows, cols = extents(m, bm), extents(n, bn)
    tm, tn = len(rows), len(cols)
    cache, held, misses = OrderedDict(), 0, 0
    for t in range(tm * tn):
        i, j = ORDERS[order](tm, tn, t)
        for key, size, reused in ((("A", i), panel_a(rows[i], k), True), (("B", j), panel_a(cols[j], k), True),
                                  (("C", t), c_bytes * rows[i] * cols[j], False)):
            if reused and key in cache:
                cache.move_to_end(key)
                continue
            if reused:
                misses += size
            cache[key] = size
            held += size
            while held > capacity:
                held -= cache.popitem(last=False)[1]
    return misses + c_bytes * m * n


# --- Per-step resources (no term of the bound): slots, TMEM, shared-memory traffic --------------------------------
def resources(st):
    """The ring and Tensor Memory of a step, with the formulas of 11_mxfp8/kernel_format.cuh, kernel_n256.cuh and
    kernel.cuh: a slot holds one k-tile per CTA (A 128 rows, B bn/2 rows, one byte a value, bk / 128 k-atoms of a
    128-byte swizzle row each; one 512-byte scale atom per 128 rows and k-atom, SFB for all bn rows in each CTA, 4
    TMEM columns an atom); slots = min(those shared memory holds, those whose scale columns fit beside the
    accumulators in 512 TMEM columns)."""
    bn, bk = st["bn"], st["bk"]
    atoms_k = bk // (MX_SF_VEC * SF_COL_BLOCK)          # k-atoms (128 values: one swizzle row, one scale atom)
    a, b = (kBM // kCtaGroup) * bk, (bn // kCtaGroup) * bk
    sfa, sfb = 512 * atoms_k, 512 * atoms_k * (bn // SF_ROW_BLOCK)
    slot = round_up(a + b + sfa + sfb, 1024)            # alignas(1024) tiles: the struct is a multiple of 1024
    fixed = 1024 + 1024 + kStaticSmemMargin + kEpilogueWarps * kStagingBuffers * kStagingBytes
    acc_columns = kAccBuffers * bn - st["overlap"]
    sf_columns = 4 * atoms_k * (1 + bn // SF_ROW_BLOCK)  # 4 TMEM columns per atom
    by_smem, by_tmem = (kSmemPerBlock - fixed) // slot, (kTmemColumns - acc_columns) // sf_columns
    slots = min(by_smem, by_tmem)
    flops_per_ktile_cta = 2 * (kBM // kCtaGroup) * bn * bk
    t_ktile = 2 * kBM * bn * bk / (kCtaGroup * PER_SM_FLOPS)  # the pair's MMA time for one k-tile at peak
    return dict(slot_bytes=slot, slots_by_smem=by_smem, slots_by_tmem=by_tmem, slots=slots,
                smem_used=fixed + slots * slot, acc_columns=acc_columns, sf_columns_per_slot=sf_columns,
                tmem_columns_used=acc_columns + slots * sf_columns, mmas_per_ktile=bk // kMmaK,
                t_mma_per_ktile=t_ktile, ring_mma_time=slots * t_ktile,
                smem_bytes_per_ktile_cta=a + b + sfa + sfb,
                smem_bytes_per_flop=(a + b + sfa + sfb) / flops_per_ktile_cta,
                l2_to_smem_at_peak=(a + b + sfa + sfb) / flops_per_ktile_cta * MXFP8_DENSE_FLOPS)


# --- The model -----------------------------------------------------------------------------------------------------
def flops(m, n, k):
    return 2 * m * n * k


def sol(m, n, k, c_bytes, bw=HBM_BYTES_PER_S):
    t_tensor, t_dram = flops(m, n, k) / MXFP8_DENSE_FLOPS, min_bytes(m, n, k, c_bytes) / bw
    return dict(t_tensor=t_tensor, t_dram=t_dram, t=max(t_tensor, t_dram), tflops=flops(m, n, k) / max(t_tensor, t_dram) / 1e12)


def step_model(m, n, k, c_bytes, key, bw=HBM_BYTES_PER_S):
    st = STEPS[key]
    r = persistent(m, n, k, kBM, st["bn"], kMmaK, PER_SM_FLOPS, min_bytes(m, n, k, c_bytes),
                   lambda rr, cc, kk: tile_bytes(rr, cc, kk, c_bytes), bw)
    order = st["order"]
    if order == "hilbert" and not hilbert_applies(m, n, r["tiles_m"], r["tiles_n"]):
        order = "group"
    # The epilogue hides behind the next unit's MMAs only while a tile's C leaves within one unit's MMA time at
    # the pair's share of the bandwidth: the ratio must stay <= 1 (checked) for max(T_tensor, T_dram) to hold as
    # modelled.
    c_tile = c_bytes * kBM * st["bn"]
    r.update(order=order, c_bytes=c_bytes, bn=st["bn"], bk=st["bk"],
             epilogue_over_mma=(c_tile / (kCtaGroup * bw / SMS)) / r["unit_time"],
             bytes_l2_lru=l2_lru_bytes(m, n, k, c_bytes, kBM, st["bn"], order))
    f = flops(m, n, k)
    light = sol(m, n, k, c_bytes, bw)
    r.update(useful_mma_fraction=f / r["executed_flops"], sms_busy=f / (SMS * PER_SM_FLOPS * r["t_tensor"]),
             bound_over_sol=r["bound"] / light["t"], tflops=f / r["bound"] / 1e12)
    return r


def model(m, n, k, c_bytes, bw=HBM_BYTES_PER_S):
    out = dict(M=m, N=n, K=k, L=1, c="FP32" if c_bytes == 4 else "BF16", c_bytes=c_bytes, flops=flops(m, n, k),
               min_bytes=min_bytes(m, n, k, c_bytes), sol=sol(m, n, k, c_bytes, bw),
               steps={key: step_model(m, n, k, c_bytes, key, bw) for key in STEPS})
    out["bytes_l2_lru_by_order"] = {
        f"{key}_{o}": l2_lru_bytes(m, n, k, c_bytes, kBM, STEPS[key]["bn"], o)
        for key in ("1", "2") for o in ORDERS
        if o != "hilbert" or hilbert_applies(m, n, ceil_div(m, kBM), ceil_div(n, STEPS[key]["bn"]))}
    return out


def measured(results):
    """The seed's ladder and cuBLAS at the squares, FlashInfer at its shape, each beside the bound it must respect:
    the seed's steps their model step's (same tile, BK, pairs, schedule kind), cuBLAS and FlashInfer SOL only (their
    tiling is not this model's)."""
    by_shape = {(r["M"], r["N"], r["K"], r["c_bytes"]): r for r in results}
    rows = []
    for step, what, key, tf in SEED_LADDER:
        for (m, n, k), t in zip(SQUARES, tf):
            r = by_shape[(m, n, k, 4)]
            rows.append(dict(who=f"seed step {step}", what=what, model_step=key, M=m, N=n, K=k, c="FP32",
                             tflops=t, bound_tflops=r["steps"][key]["tflops"], sol_tflops=r["sol"]["tflops"],
                             of_bound=t / r["steps"][key]["tflops"], of_sol=t / r["sol"]["tflops"]))
    for (m, n, k), t in zip(SQUARES, CUBLAS):
        r = by_shape[(m, n, k, 4)]
        rows.append(dict(who="cuBLAS", what="torch._scaled_mm (the worklog's baseline)", model_step=None, M=m, N=n,
                         K=k, c="FP32", tflops=t, bound_tflops=None, sol_tflops=r["sol"]["tflops"], of_bound=None,
                         of_sol=t / r["sol"]["tflops"]))
    m, n, k = FLASHINFER["shape"]
    r = by_shape[(m, n, k, FLASHINFER["c_bytes"])]
    rows.append(dict(who="FlashInfer mm_mxfp8", what="CUTLASS, autotuned", model_step=None, M=m, N=n, K=k, c="BF16",
                     tflops=FLASHINFER["tflops"], bound_tflops=None, sol_tflops=r["sol"]["tflops"], of_bound=None,
                     of_sol=FLASHINFER["tflops"] / r["sol"]["tflops"]))
    return rows


# --- Output --------------------------------------------------------------------------------------------------------
us = base.us


def shape_text(r):
    return f"{r['M']}x{r['N']}x{r['K']} {r['c']}"


def pct(x):
    return f"{100 * x:.0f}%"


def figures_paragraph():
    """The model's label and its figures, for docs/b200_model_mxfp8.md."""
    return (f"**{TITLE}.** Published peaks from [docs/b200_model.py](b200_model.py): "
            f"{base.NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4, {HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e, {SMS} SMs "
            f"= {PAIRS} pairs. The dense MXFP8 rate is **assumed** half the NVFP4 rate, "
            f"{MXFP8_DENSE_FLOPS / 1e15:g} PFLOP/s ({PER_SM_FLOPS / 1e12:.1f} TFLOP/s per SM): `kind::mxf8f6f4` does "
            "K = 32 per instruction where `kind::mxf4nvf4` does K = 64 at the same instruction shape, taken to cost "
            "the same time. Times in microseconds. Steps 1, 2 and 3 are the stage as built (`kernel_format.cuh`, "
            "`kernel_n256.cuh`, `kernel.cuh`: the stage README's step table); the Hilbert tile order of the seed's "
            "later steps is not built.")


def ladder_table(results, meas):
    """The model bound of each step beside the seed's measured steps and cuBLAS (the README's table and the page's)."""
    squares = [r for r in results if r["c_bytes"] == 4]
    by = {(x["who"], x["M"]): x for x in meas}

    def cells(values):
        return " | ".join(values)

    lines = ["| | " + " | ".join(f"{m}^3" for m, _, _ in SQUARES) + " |", "|---|" + "---|" * len(SQUARES),
             f"| SOL: max(2MNK / {MXFP8_DENSE_FLOPS / 1e15:g} PF, min bytes / 8 TB/s) | "
             + cells(f"{r['sol']['tflops']:.0f}" for r in squares) + " |"]
    model_rows = {"1": ("0",), "2": ("1",), "3": tuple(s for s in SEED_TABLE_STEPS if s not in ("0", "1"))}
    for key, seeds in model_rows.items():
        lines.append(f"| **B200 model, {STEPS[key]['name']}** | "
                     + cells(f"**{r['steps'][key]['tflops']:.0f}**" for r in squares) + " |")
        for s in seeds:
            what = next(w for st, w, _, _ in SEED_LADDER if st == s)
            lines.append(f"| seed step {s}, measured: {what} | "
                         + cells(f"{by[(f'seed step {s}', m)]['tflops']:.2f} ({pct(by[(f'seed step {s}', m)]['of_bound'])})"
                                 for m, _, _ in SQUARES) + " |")
    lines.append("| cuBLAS (`torch._scaled_mm`), measured by the worklog | "
                 + cells(f"{by[('cuBLAS', m)]['tflops']:.2f} ({pct(by[('cuBLAS', m)]['of_sol'])} of SOL)"
                         for m, _, _ in SQUARES) + " |")
    return lines


def readme_block(results, meas):
    """What 11_mxfp8/README.md holds between its markers: the label, the ladder table, what it shows, a link."""
    by = {(x["who"], x["M"]): x for x in meas}
    a0 = [by[("seed step 0", m)]["of_bound"] for m, _, _ in SQUARES]
    b1 = [by[(f"seed step {s}", m)]["of_bound"] for s in ("1", "2") for m, _, _ in SQUARES]
    c3 = [by[(f"seed step {s}", m)]["of_bound"] for s in ("3", "4", "5") for m, _, _ in SQUARES]
    r4 = next(r for r in results if (r["M"], r["c_bytes"]) == (4096, 4))["steps"]
    lines = ["**B200 MODEL of stage 11: predicted lower bounds, not measured**; the dense MXFP8 rate **assumed** "
             f"half the NVFP4 rate ({MXFP8_DENSE_FLOPS / 1e15:g} PFLOP/s).", "",
             "**The model beside the measured ladder**, TFLOP/s (measured: the MXFP8 worklog this stage follows, on a "
             "B200 with FP32 C, not by this project; in brackets, the share of the step's bound):", ""]
    lines += ladder_table(results, meas)
    lines += ["", f"Step 1 (`kernel_format.cuh`) and the seed's step 0 share a tile (256 x 128 per pair, BK 128), so "
                  f"a bound: the seed measured {pct(min(a0))[:-1]}-{pct(max(a0))} of it; step 2 (`kernel_n256.cuh`) "
                  f"and the seed's steps 1-2 share one too (256 x 256, BK 128): {pct(min(b1))[:-1]}-{pct(max(b1))}; "
                  "step 3 (`kernel.cuh`) and the seed's steps 3-5 share tile, BK 256 and 128 shared accumulator "
                  "columns (the seed's in the plain row order, with `st.global` stores): "
                  f"{pct(min(c3))[:-1]}-{pct(max(c3))}. "
                  "Steps 2 and 3 gain nothing in the bound (step 2's is "
                  f"{pct(r4['2']['t_tensor'] / r4['1']['t_tensor'] - 1)} higher at 4096^3: fewer, longer tiles fill "
                  "the rounds worse; step 3's equals step 2's: BK is no term of it); what they bought the seed lies "
                  "outside it: fewer shared-memory bytes, MMA instructions and ring round trips per FLOP.", "",
              f"The full model (bounds per shape, what each step changes that the bound does not see, the tile "
              f"order, how it counts): [docs/b200_model_mxfp8.md](../docs/b200_model_mxfp8.md).", ""]
    return "\n".join(lines) + "\n"


def page_block(results, meas):
    """What docs/b200_model_mxfp8.md holds between its markers: the whole model."""
    res = {key: resources(st) for key, st in STEPS.items()}
    lines = [figures_paragraph(), "", "## The steps", ""]
    lines += [f"- **{st['name']}**" for st in STEPS.values()]
    lines += ["", "## Lower bounds per shape", "",
              "| shape, C | step | tile per pair, BK | tiles | waves | pairs busy | T_tensor | T_dram (min bytes) | "
              "T_dram (no L2 reuse) | **lower bound** | SOL | bound / SOL | predicted TFLOP/s |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for key, s in r["steps"].items():
            lines.append(f"| {shape_text(r)} | {STEPS[key]['label']} | "
                         f"{kBM} x {s['bn']}, {s['bk']} | {s['tiles']} | {s['waves']} | {100 * s['pairs_busy']:.1f}% | "
                         f"{us(s['t_tensor'])} | {us(s['t_dram'])} | {us(s['t_dram_no_reuse'])} | **{us(s['bound'])}** | "
                         f"{us(r['sol']['t'])} | {s['bound_over_sol']:.2f} | {s['tflops']:.0f} |")
    worst = max(model(r["M"], r["N"], r["K"], r["c_bytes"], HBM_BYTES_PER_S_ALT)["steps"][key]["bound"]
                / r["steps"][key]["bound"] for r in results for key in STEPS)
    lines += ["", (f"Every bound is set by the tensor term, so {HBM_BYTES_PER_S_ALT / 1e12:g} TB/s instead of "
                   f"{HBM_BYTES_PER_S / 1e12:g} changes none." if worst <= 1 + 1e-12 else
                   f"With {HBM_BYTES_PER_S_ALT / 1e12:g} TB/s instead of {HBM_BYTES_PER_S / 1e12:g} the bounds rise by "
                   f"at most {100 * (worst - 1):.1f}%.")]

    # The ladder beside the model.
    by = {(x["who"], x["M"]): x for x in meas}
    fi = by[("FlashInfer mm_mxfp8", FLASHINFER["shape"][0])]
    bf = next(r for r in results if r["c_bytes"] == 2)
    a0 = [by[("seed step 0", m)] for m, _, _ in SQUARES]
    b1 = [by[("seed step 1", m)] for m, _, _ in SQUARES]
    c3 = [by[("seed step 3", m)] for m, _, _ in SQUARES]
    lines += ["", "## The model beside the measured ladder", "",
              "TFLOP/s = 2MNK / time; measured on a B200 at 1000 W with FP32 C by the MXFP8 worklog stage 11 follows "
              "(seed 003, D. Vega-Myhre, code `danielvegamyhre/gemm` `blackwell/mxfp8`), not by this project. A "
              "measured cell gives, in brackets, its share of the model bound of its step: a bound, so 100% or less, "
              "and the rest is what the model does not count.", ""]
    lines += ladder_table(results, meas)
    def against(xs):
        return ", ".join(f"{x['tflops']:.2f} against {x['bound_tflops']:.0f} ({pct(x['of_bound'])}, "
                         f"{1 / x['of_bound']:.1f}x the bound's time)" for x in xs)
    lines += ["", "Step 1 (`kernel_format.cuh`) and the seed's step 0 have the same tile (256 x 128 per pair, BK 128, "
                  "74 persistent pairs, two accumulators), so the same bound: the seed measured " + against(a0)
              + f" at {', '.join(f'{m}^3' for m, _, _ in SQUARES)}. Step 2 (`kernel_n256.cuh`) and the seed's step 1 "
              "have the same tile too (256 x 256 per pair, BK 128, two 256-column accumulators sharing 128 TMEM "
              "columns): " + against(b1) + ". They differ in what the model leaves out (the seed's steps 0 and 1 "
              "store C with `st.global`, in the plain row order; steps 1 and 2 with TMA stores, in groups of 8 "
              "tile-rows, step 2 reading each unit in two halves of 128 columns, the shared half first).",
              "",
              "Step 3 (`kernel.cuh`) is closest to the seed's step 3, BK 256 on its step 2: the same tile, BK 256 and "
              "128 shared TMEM columns, with the plain row order and `st.global` stores where step 3 keeps the "
              "groups of 8 tile-rows and the TMA stores: " + against(c3) + ". The seed's steps 4 and 5 add the TMA "
              "multicast of SFB to both CTAs (in step 3 each CTA loads its own copy) and static register indexing; "
              "steps 6-10 add the Hilbert order (at every shape in steps 6-7, at 8192^3 and up in steps 8-10; not "
              "built here) and a TMA-store epilogue (step 9; in step 10 at 8192^3 and up only), which step 3 uses at "
              "every shape here; step 11 shares 64 accumulator columns instead of 128. None of these is a term of "
              "the bound, so the seed's steps 3-11 all stand against step 3's, which equals step 2's.",
              "",
              f"BF16 C, {shape_text(bf)}: FlashInfer `mm_mxfp8` (CUTLASS, autotuned; flashinfer-ai/flashinfer PR "
              f"#2464) measured {fi['tflops']:.0f} TFLOP/s ({FLASHINFER['median_ms']} ms), {pct(fi['of_sol'])} of "
              f"SOL ({bf['sol']['tflops']:.0f}); the model's bounds there: "
              + ", ".join(f"step {key} {bf['steps'][key]['tflops']:.0f}" for key in STEPS) + " TFLOP/s."]

    # What each step changes that the bound does not count.
    lines += ["", "## What each step changes that the bound does not see", "",
              "Counts from the tiling, per step; no rate of these resources is published, so none enters a bound.", "",
              "| step | MMAs per k-tile | MMA time per k-tile (pair, at peak) | ring slots (by shared memory, "
              "by TMEM) | ring depth in MMA time | TMEM columns: accumulators + scales | shared-memory bytes per "
              "CTA per k-tile | L2 -> shared memory at the tensor peak (all SMs) |", "|---|---|---|---|---|---|---|---|"]
    for key, x in res.items():
        lines.append(f"| {STEPS[key]['label']} | {x['mmas_per_ktile']} | {1e9 * x['t_mma_per_ktile']:.0f} ns | {x['slots']} "
                     f"({x['slots_by_smem']}, {x['slots_by_tmem']}) | {us(x['ring_mma_time'])} us | "
                     f"{x['acc_columns']} + {x['slots'] * x['sf_columns_per_slot']} = {x['tmem_columns_used']} | "
                     f"{x['smem_bytes_per_ktile_cta'] / 1024:g} KB | {x['l2_to_smem_at_peak'] / 1e12:.1f} TB/s |")
    lines += ["", f"Ring depth: the MMA time the loads in flight cover; a load must land within it or the MMAs wait "
                  f"(an H100's loaded DRAM latency was {1e9 * LOADED_DRAM_LATENCY_H100:.0f} ns, "
                  "[data/dram_latency_probe_h100.txt](data/dram_latency_probe_h100.txt); a B200's is not known here).",
              "", "## What the tile order may buy (an estimate, in no bound)", "",
              f"The DRAM bytes if L2 ({L2_BYTES / 1e6:.0f} MB, the worklog's figure) kept whole panels of A and B in "
              "least-recently-used order while the tiles run in the order's sequence (C passing through it), in MB "
              "and at 8 TB/s, beside the step's T_tensor:", "",
              "| shape, C | tile (steps) | min bytes | row by row (the seed's steps 0-5) | groups of 8 tile-rows (this "
              "stage: steps 1-3) | Hilbert (the seed's steps 6 and up; not built) | T_tensor |",
              "|---|---|---|---|---|---|---|"]
    for r in results:
        for key in ("1", "2"):  # one row per tile: step 3's is step 2's
            same = [k for k, st in STEPS.items() if st["bn"] == STEPS[key]["bn"]]
            d = r["bytes_l2_lru_by_order"]

            def cell(o):
                v = d.get(f"{key}_{o}")
                return "-" if v is None else f"{v / 1e6:.0f} MB, {us(v / HBM_BYTES_PER_S)} us"
            lines.append(f"| {shape_text(r)} | {kBM} x {STEPS[key]['bn']} ({', '.join(same)}) | "
                         f"{r['min_bytes'] / 1e6:.0f} MB | "
                         f"{cell('row_major')} | {cell('group')} | {cell('hilbert')} | {us(r['steps'][key]['t_tensor'])} us |")

    q = {(r["M"], r["c_bytes"]): r for r in results}
    r4, mid, big, bf16 = q[(4096, 4)], q[(8192, 4)], q[(16384, 4)], q[(8192, 2)]

    def mb(r, o):
        return f"{r['bytes_l2_lru_by_order'][f'2_{o}'] / 1e6:.0f} MB"
    lines += ["", "## How the model counts", "",
              "The method of [b200_model.md](b200_model.md)'s stages 06/07:", "",
              "- **Tensor.** A pair computes a whole 256 x BN tile over K padded to 32, at two SMs' share of the "
              "assumed rate; the tiles go to the 74 pairs in rounds (unit u on pair u mod 74), so T_tensor = "
              "ceil(tiles / 74) x one tile's time, and the last round's idle pairs are the 'pairs busy' loss.",
              "- **DRAM.** The bound takes the min bytes (A and B at a byte a value, both UE8M0 scale arrays in the "
              "blocked layout, C at 4 bytes FP32 or 2 BF16, each once: all reuse through L2) at 8 TB/s; 'no L2 "
              "reuse' (every tile loads its own rows of A and columns of B) is reported, not used.",
              "- **Epilogue.** Hidden behind the next tile's MMAs (two accumulators): a tile's C at the pair's share "
              "of the bandwidth takes at most "
              f"{pct(max(s['epilogue_over_mma'] for r in results for s in r['steps'].values()))} of one tile's MMA "
              "time at every shape here. The last round's epilogue, the TMEM reads (for steps 2 and 3 the shared "
              "128 columns must be read before the next tile's first MMA), pipeline fill, latencies, the clock "
              "under the power limit and the launch are not counted.",
              f"- **What the bound says about steps 2 and 3: nothing gained.** MMA_N = 256 (step 2) does the same "
              f"MMAs in half as many, twice as long tiles: at 4096^3 it has {r4['steps']['2']['tiles']} tiles in "
              f"{r4['steps']['2']['waves']} rounds ({100 * r4['steps']['2']['pairs_busy']:.1f}% busy) where step 1 "
              f"has {r4['steps']['1']['tiles']} in {r4['steps']['1']['waves']} "
              f"({100 * r4['steps']['1']['pairs_busy']:.1f}%), so its bound is "
              f"{r4['steps']['2']['t_tensor'] / r4['steps']['1']['t_tensor']:.2f}x higher; the tile order and BK "
              "change neither the MMAs nor the min bytes. Yet the worklog measured +"
              f"{pct(by[('seed step 1', 2048)]['tflops'] / by[('seed step 0', 2048)]['tflops'] - 1)} / "
              f"+{pct(by[('seed step 1', 4096)]['tflops'] / by[('seed step 0', 4096)]['tflops'] - 1)} from MMA_N = "
              "256 at 2048^3 / 4096^3. What it buys lies outside the bound: "
              f"{pct(1 - res['2']['smem_bytes_per_flop'] / res['1']['smem_bytes_per_flop'])} fewer shared-memory "
              f"bytes per FLOP ({res['1']['l2_to_smem_at_peak'] / 1e12:.1f} -> "
              f"{res['2']['l2_to_smem_at_peak'] / 1e12:.1f} TB/s from L2 into shared memory at the tensor peak), and "
              "half as many MMA instructions and ring round trips per FLOP. BK = 256 (step 3) changes neither the "
              "MMAs nor the bytes, so its bound is step 2's at every shape; it halves the round trips again: "
              f"{res['3']['mmas_per_ktile']} MMAs per full barrier, empty barrier and commit instead of "
              f"{res['2']['mmas_per_ktile']}, in {res['3']['slots']} slots of {res['3']['slot_bytes'] / 1024:g} KB "
              f"that hold the same {res['3']['slots'] * STEPS['3']['bk']} values of k as step 2's "
              f"{res['2']['slots']} of {res['2']['slot_bytes'] / 1024:g} KB (a ring depth of "
              f"{us(res['3']['ring_mma_time'])} us of MMA time either way).",
              f"- **The tile order**, in the estimate above (not a bound): at 16384^3 the plain row order would make "
              f"L2 miss so often that DRAM would take {us(big['bytes_l2_lru_by_order']['2_row_major'] / HBM_BYTES_PER_S)} "
              f"us, more than the {us(big['steps']['2']['t_tensor'])} us of step 2's MMAs, where groups of 8 tile-rows take "
              f"{us(big['bytes_l2_lru_by_order']['2_group'] / HBM_BYTES_PER_S)} us and Hilbert "
              f"{us(big['bytes_l2_lru_by_order']['2_hilbert'] / HBM_BYTES_PER_S)} us; at 8192^3 and below no order "
              "comes near the tensor time, so what Hilbert bought the worklog there (+"
              f"{pct(by[('seed step 6', 8192)]['tflops'] / by[('seed step 5', 8192)]['tflops'] - 1)} at 8192^3; its "
              "ncu: L2 hit rate 72% -> 86%) is not DRAM time in this model: the L2 -> SM path and its latency, which "
              "no published figure bounds. The Hilbert order is not built: steps 1-3 keep the groups of 8 tile-rows, "
              f"whose estimate at 16384^3 is {mb(big, 'group')} against Hilbert's {mb(big, 'hilbert')} "
              f"({pct(big['bytes_l2_lru_by_order']['2_group'] / big['bytes_l2_lru_by_order']['2_hilbert'] - 1)} more), "
              f"at 8192^3 {mb(mid, 'group')} against {mb(mid, 'hilbert')} "
              f"({us(mid['bytes_l2_lru_by_order']['2_group'] / HBM_BYTES_PER_S)} us against the "
              f"{us(mid['steps']['3']['t_tensor'])} us of step 3's MMAs), and at the BF16 shape "
              f"{mb(bf16, 'group')} against {mb(bf16, 'hilbert')}; and the worklog's gain was measured from the "
              "plain row order (its step 5 -> 6), not from groups of tile-rows.",
              "- Measured figures bounded by a step are those of the seed steps with that step's tile and BK "
              "(seed steps 0 -> step 1, 1-2 -> step 2, 3-11 -> step 3; of the last, the seed's step 3 is the one "
              "closest to step 3, the others add what step 3 does not have: the SFB multicast, the Hilbert order, "
              "the 64-column overlap); cuBLAS and FlashInfer, whose tiling this model does not "
              "know, only by SOL. `--check` fails if any measured figure exceeds its bound."]
    return "\n".join(lines) + "\n"


def document(results, meas):
    return dict(model=TITLE,
                note="No GPU data of this project: lower bounds from published peak figures (the MXFP8 rate assumed "
                     "half the NVFP4 rate) and each step's tiling, beside figures measured by others on a B200 "
                     "(their sources below). Times in seconds, bytes in bytes, rates in TFLOP/s.",
                figures=FIGURES,
                parameters=dict(pairs=PAIRS, kernel_constants=MODEL_CONSTANTS,
                                kernel_files={key: dict({k: v for k, v in f.items() if k != "path"},
                                                        file=str(f["path"].relative_to(ROOT)))
                                              for key, f in KERNEL_FILES.items()},
                                mxfp8_mma_k=MXFP8_MMA_K, nvfp4_mma_k=NVFP4_MMA_K, sf_vector=MX_SF_VEC,
                                hilbert_min=HILBERT_MIN),
                steps={key: dict(st, resources=resources(st)) for key, st in STEPS.items()},
                shapes=results,
                measured=dict(seed_source=SEED_SOURCE, flashinfer_source=FLASHINFER["source"],
                              loaded_dram_latency_h100=LOADED_DRAM_LATENCY_H100, l2_bytes=L2_BYTES, rows=meas))


def rewrite(text, body, begin=BEGIN, end=END):
    """text with body between its markers begin / end, or None where it lacks them."""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{begin}\n{body}{end}", text)


# --- Checks --------------------------------------------------------------------------------------------------------
def kernel_facts(path):
    """What the model copies, as a built step's file (11_mxfp8/kernel_format.cuh, kernel_n256.cuh or kernel.cuh)
    defines it, or None without the file: the constants (a number or a product of numbers), what kStepsPerTile,
    kSlots and kAccColumns come to (their comments), the slot's size (its comment in KB; sizeof(Slot) where a
    static_assert states it), the bytes its full barrier expects per CTA, the MMA's M and N, the raster and the pair
    of a unit."""
    if not path.exists():
        return None
    text = path.read_text()

    def number(name):
        m = re.search(rf"constexpr (?:int|uint32_t) (?:\w+ = \d+, )*{name} = ([\d *]+)[;,]", text)
        if not m:
            return None
        value = 1
        for factor in m.group(1).split("*"):
            value *= int(factor)
        return value

    def comment(name, then=r"\n"):
        m = re.search(rf"constexpr int {name} = [^;]*;\s*// (\d+){then}", text)
        return int(m.group(1)) if m else None

    got = {name: number(name) for name in list(MODEL_CONSTANTS) + list(FILE_CONSTANTS)}
    # "everything one k-tile needs. 25 KB" (steps 1, 2); "everything one k-tile needs, per k-atom h. 67 KB" (step 3)
    m = re.search(r"One slot of the ring: everything one k-tile needs[^.]*\. (\d+) KB", text)
    slot_bytes = int(m.group(1)) * 1024 if m else None
    m = re.search(r"static_assert\(kSlotTmaBytes == (\d+) && sizeof\(Slot\) == (\d+)", text)
    slot_tma, slot_sizeof = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    m = re.search(r"mbarrier_arrive_expect_tx\(&s\.full\[slot\], kCtaGroup \* (.*?)\);$", text, re.M)
    expects = m.group(1) if m else None
    tma_bytes = {"int(sizeof(Slot))": slot_sizeof or slot_bytes, "kSlotTmaBytes": slot_tma}.get(expects)
    m = re.search(r"mxf8f6f4_instr_descriptor\(a_type, b_type, (\w+), (\w+),", text)
    return dict(constants=got, steps_per_tile=comment("kStepsPerTile", " MMAs per k-tile"), slots=comment("kSlots"),
                acc_columns=comment("kAccColumns"),
                slot_bytes=slot_sizeof or slot_bytes, tma_bytes=tma_bytes, expects=expects,
                mma=(m.group(1), m.group(2)) if m else None,
                namespace=re.search(r"^namespace (\w+) \{", text, re.M).group(1) if "namespace" in text else None,
                overlap_layout=("kAccColumns = kAccBuffers * kBN - kOverlapColumns;" in text
                                and "acc * (kBN - kOverlapColumns)" in text and "kHalfColumns = kBN / 2;" in text),
                raster="t / (kGroupM * s.tiles_n) * kGroupM" in text and "in_group % rows_in_group" in text,
                pairs_mod="u += sched.pairs" in text)


def checks(results, meas):
    bad = []

    def expect(ok, what):
        if not ok:
            bad.append(what)

    eps = 1e-9
    expect(MXFP8_DENSE_FLOPS == base.NVFP4_DENSE_FLOPS / 2, "the MXFP8 rate is not half the NVFP4 rate")
    # The method: with NVFP4's bytes, rate and MMA K, persistent() is docs/b200_model.py's stage 06/07.
    for shape in base.SHAPES + [(300, 5000, 4096), (257, 129, 96), (4096, 4096, 1000)]:
        mine = persistent(*shape, base.PAIR_M, base.STAGE06_BN, base.MMA_K, base.PER_SM_FLOPS, base.min_bytes(*shape),
                          base.tile_bytes)
        theirs = base.stage06(*shape)
        for f in ("tiles", "waves", "pairs_busy", "t_tensor", "t_dram", "t_dram_no_reuse", "executed_flops", "bound"):
            expect(abs(mine[f] - theirs[f]) <= eps * abs(theirs[f]),
                   f"{shape}: the method's {f} {mine[f]} != docs/b200_model.py's stage 06 {theirs[f]}")
    for r in results:
        w0 = shape_text(r)
        light = r["sol"]
        for key, s in r["steps"].items():
            w = f"{w0} step {key}"
            expect(s["bound"] >= light["t"] * (1 - eps), f"{w}: bound below SOL")
            expect(s["t_tensor"] >= light["t_tensor"] * (1 - eps), f"{w}: T_tensor below the tensor SOL")
            expect(s["t_dram"] >= light["t_dram"] * (1 - eps), f"{w}: T_dram below the DRAM SOL")
            expect(r["min_bytes"] <= s["bytes_l2_lru"] <= s["bytes_no_reuse"], f"{w}: L2 estimate outside "
                   "[min bytes, no reuse]")
            expect(0 < s["pairs_busy"] <= 1 and 0 < s["useful_mma_fraction"] <= 1 + eps and 0 < s["sms_busy"] <= 1 + eps,
                   f"{w}: a fraction outside (0, 1]")
            expect(s["waves"] * PAIRS >= s["units"] > (s["waves"] - 1) * PAIRS, f"{w}: rounds do not cover the tiles")
            expect(abs(s["tflops"] * 1e12 * s["bound"] - r["flops"]) <= 1e-6 * r["flops"], f"{w}: TFLOP/s != FLOPs / bound")
            expect(s["epilogue_over_mma"] <= 1, f"{w}: a tile's C takes longer than its MMAs at the pair's share of "
                   "the bandwidth: the epilogue is not hidden, and the model lacks the term")
            expect(s["bound"] <= model(r["M"], r["N"], r["K"], r["c_bytes"], HBM_BYTES_PER_S_ALT)["steps"][key]["bound"]
                   * (1 + eps), f"{w}: a lower bandwidth lowered the bound")
        for o, v in r["bytes_l2_lru_by_order"].items():
            expect(r["min_bytes"] <= v, f"{w0}: L2 estimate of {o} below min bytes")
            # An L2 that holds everything reads every panel once: the min bytes (scales of a tail aside).
            if r["M"] % kBM == 0 and r["N"] % 256 == 0:
                expect(l2_lru_bytes(r["M"], r["N"], r["K"], r["c_bytes"], kBM, STEPS[o[0]]["bn"], o[2:], 1e12)
                       == r["min_bytes"], f"{w0}: an unbounded L2 does not give the min bytes ({o})")
    # Steps 1, 2 and 3 are their files' tiling: tile, BK, MMAs per k-tile, slots, TMEM columns, the slot's bytes.
    res = {key: resources(st) for key, st in STEPS.items()}
    expect([key for key, st in STEPS.items() if st["built"]] == list(KERNEL_FILES), "the built steps are not the files")
    for key, want in KERNEL_FILES.items():
        st, x, name, w = STEPS[key], res[key], want["path"].name, f"{STEPS[key]['label']}"
        expect(st["file"] == str(want["path"].relative_to(ROOT)), f"{w}: the step names another file")
        got = kernel_facts(want["path"])
        if got is None:
            bad.append(f"{want['path'].relative_to(ROOT)} is missing: {w} has nothing to compare with")
            continue
        expect(got["namespace"] == want["namespace"], f"{w}: {name}'s namespace is {got['namespace']}")
        for cname, value in got["constants"].items():
            model_value = want.get(cname, MODEL_CONSTANTS.get(cname))  # the file's own value first
            if cname == "kOverlapColumns" and value is None:
                value = 0  # no overlap: the file has no such constant
            expect(value == model_value, f"{w}: {cname}: the model has {model_value}, {name} {value}")
        expect((st["bn"], st["bk"], st["overlap"]) == (want["kBN"], want["kTileK"], want["kOverlapColumns"])
               and got["constants"]["kTileK"] == want["kTileK"], f"{w}: tile, BK or overlap is not {name}'s")
        expect(got["steps_per_tile"] == want["kStepsPerTile"] == x["mmas_per_ktile"],
               f"{w}: MMAs per k-tile: {name} {got['steps_per_tile']}, the model {want['kStepsPerTile']}, "
               f"recomputed {x['mmas_per_ktile']}")
        expect(got["slots"] == want["kSlots"] == x["slots"],
               f"{w}: slots: {name} {got['slots']}, the model {want['kSlots']}, recomputed {x['slots']}")
        expect(got["acc_columns"] == want["kAccColumns"] == x["acc_columns"],
               f"{w}: accumulator columns: {name} {got['acc_columns']}, the model {want['kAccColumns']}, "
               f"recomputed {x['acc_columns']}")
        expect(got["slot_bytes"] == want["slot_bytes"] == x["slot_bytes"],
               f"{w}: slot bytes: {name} {got['slot_bytes']}, the model {want['slot_bytes']}, recomputed {x['slot_bytes']}")
        expect(got["tma_bytes"] == want["slot_tma_bytes"] == x["smem_bytes_per_ktile_cta"],
               f"{w}: bytes TMA brings per slot: {name}'s full barrier expects {got['expects']} = {got['tma_bytes']}, "
               f"the model {want['slot_tma_bytes']}, recomputed {x['smem_bytes_per_ktile_cta']}")
        expect(got["mma"] == ("kBM", "kBN"), f"{w}: {name}'s MMA is {got['mma']}, the model's kBM x kBN")
        expect(got["raster"], f"{w}: {name}'s unit_at is not the groups-of-kGroupM raster the model transcribes")
        expect(got["pairs_mod"], f"{w}: {name} does not give unit u to pair u mod pairs")
        expect(got["overlap_layout"] == (want["kOverlapColumns"] > 0),
               f"{w}: {name}'s accumulator layout (overlap, halves) is not the model's")
    expect(res["1"]["tmem_columns_used"] == 256 + 8 * 8 and res["2"]["tmem_columns_used"] == 384 + 6 * 12
           and res["3"]["tmem_columns_used"] == 384 + 3 * 24,
           "TMEM columns: step 1 256 + 8 x 8, step 2 384 + 6 x 12, step 3 384 + 3 x 24")
    for key, x in res.items():
        expect(x["slots"] >= 2, f"step {key}: fewer than two slots")
        expect(x["tmem_columns_used"] <= kTmemColumns, f"step {key}: TMEM over 512 columns")
        expect(x["smem_used"] <= kSmemPerBlock, f"step {key}: the ring does not fit in shared memory")
        expect(STEPS[key]["bn"] <= 256 and STEPS[key]["bn"] % 16 == 0, f"step {key}: MMA_N outside cta_group::2's")
    # Steps 2 and 3: two 256-column accumulators do not fit beside the scale columns without the overlap (the worklog's
    # 2 x 256 + 24 = 536 > 512 at BK 256), and do with 128 columns shared.
    expect(2 * 256 + res["3"]["sf_columns_per_slot"] > kTmemColumns and res["3"]["sf_columns_per_slot"] == 24,
           "step 3: the overlap is not needed, or the scale columns are not the worklog's 24")
    expect((res["2"]["slots"], res["3"]["slots"]) == (6, 3) and (res["3"]["slots_by_smem"], res["3"]["slots_by_tmem"])
           == (3, 5), "slots of steps 2, 3 (step 3: 3 by shared memory, 5 by TMEM)")
    expect(res["2"]["slots"] * STEPS["2"]["bk"] == res["3"]["slots"] * STEPS["3"]["bk"] == 768
           and abs(res["2"]["ring_mma_time"] - res["3"]["ring_mma_time"]) < 1e-15,
           "steps 2 and 3: the ring does not hold the same 768 values of k")
    # Tile orders: every tile once; Hilbert neighbours share an edge.
    for tm, tn in ((1, 16), (3, 12), (8, 16), (11, 9), (32, 64)):
        for o in ("row_major", "group"):
            seen = sorted(ORDERS[o](tm, tn, t) for t in range(tm * tn))
            expect(seen == [(i, j) for i in range(tm) for j in range(tn)], f"{o}({tm}, {tn}): not every tile once")
    for side in (1, 2, 8, 32):
        cells = [order_hilbert(side, side, t) for t in range(side * side)]
        expect(sorted(cells) == [(i, j) for i in range(side) for j in range(side)], f"hilbert({side}): not every tile once")
        expect(all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in zip(cells, cells[1:])),
               f"hilbert({side}): consecutive tiles not adjacent")
    # The measured figures: none beats its bound; cuBLAS and FlashInfer not SOL.
    for x in meas:
        w = f"{x['who']} at {x['M']}x{x['N']}x{x['K']}"
        expect(x["tflops"] <= x["sol_tflops"], f"{w}: {x['tflops']} TFLOP/s beats SOL {x['sol_tflops']:.0f}: the model "
               "is wrong")
        if x["bound_tflops"] is not None:
            expect(x["tflops"] <= x["bound_tflops"], f"{w}: {x['tflops']} TFLOP/s beats the bound of step "
                   f"{x['model_step']}, {x['bound_tflops']:.0f}: the model is wrong")
    final = next(tf for s, _, _, tf in SEED_LADDER if s == "10")
    expect(all(abs(f / c - p) < 0.005 for f, c, p in zip(final, CUBLAS, SEED_FINAL_OVER_CUBLAS)),
           "the seed's final / cuBLAS ratios differ from its printed speedups")
    m, n, k = FLASHINFER["shape"]
    expect(abs(2 * m * n * k / (FLASHINFER["median_ms"] * 1e-3) / 1e12 - FLASHINFER["tflops"]) < 0.005 * FLASHINFER["tflops"],
           "FlashInfer's TFLOP/s and median time disagree")
    # Worked by hand.
    r = {(x["M"], x["K"], x["c_bytes"]): x for x in results}
    s = r[(8192, 8192, 4)]["steps"]["1"]
    expect(s["tiles"] == 32 * 64 and s["waves"] == 28, "8192^3 step 1: 2048 tiles, 28 rounds")
    expect(abs(s["t_tensor"] - 28 * 2 * 256 * 128 * 8192 / (2 * 4.5e15 / 148)) < 1e-12, "8192^3 step 1: T_tensor")
    s = r[(8192, 8192, 4)]["steps"]["2"]
    expect(s["tiles"] == 32 * 32 and s["waves"] == 14, "8192^3 step 2: 1024 tiles, 14 rounds")
    expect(abs(r[(8192, 8192, 4)]["sol"]["t"] - 2 * 8192 ** 3 / 4.5e15) < 1e-12, "8192^3: SOL is 2MNK / 4.5 PFLOP/s")
    s = r[(2048, 2048, 4)]["steps"]
    expect(s["1"]["tiles"] == 128 and s["1"]["waves"] == 2 and s["2"]["tiles"] == 64 and s["2"]["waves"] == 1,
           "2048^3: step 1 128 tiles in 2 rounds, step 2 64 in 1")
    expect(abs(s["1"]["t_tensor"] - s["2"]["t_tensor"]) < 1e-15, "2048^3: steps 1 and 2 have the same tensor time")
    expect(r[(2048, 2048, 4)]["min_bytes"] == 2 * 2048 * 2048 + 2 * 2048 * 64 + 4 * 2048 * 2048, "2048^3 min bytes")
    expect(r[(8192, 4096, 2)]["min_bytes"] == 2 * 8192 * 4096 + 2 * 8192 * 128 + 2 * 8192 * 8192, "BF16 shape min bytes")
    expect(sf_bytes(1, 32) == 128 * 4 and sf_bytes(129, 160) == 256 * 8, "sf_bytes padding")
    expect(r[(4096, 4096, 4)]["steps"]["2"]["waves"] == 4 and r[(4096, 4096, 4)]["steps"]["1"]["waves"] == 7,
           "4096^3: step 1 7 rounds, step 2 4")
    expect(all(s["order"] == "group" for x in results for s in x["steps"].values()),
           "every step's order is unit_at's groups of 8 tile-rows (the Hilbert order is not built)")
    expect(all(abs(x["steps"]["3"]["bound"] - x["steps"]["2"]["bound"]) <= eps * x["steps"]["2"]["bound"]
               for x in results), "step 3's bound differs from step 2's: BK is no term of the bound")
    x = res["1"]
    expect(x["smem_bytes_per_ktile_cta"] == 16384 + 8192 + 512 + 512 and abs(x["t_mma_per_ktile"] - 4 * 2 * 256 * 128 * 32
                                                                           / (2 * 4.5e15 / 148)) < 1e-15,
           "step 1: 25 KB per k-tile, 4 MMAs of 256 x 128 x 32")
    x = res["2"]
    expect(x["smem_bytes_per_ktile_cta"] == 16384 + 16384 + 512 + 2 * 512 == 34304 and x["slot_bytes"] == 34816
           and x["acc_columns"] == 384 and x["sf_columns_per_slot"] == 12 and x["mmas_per_ktile"] == 4,
           "step 2: 33.5 KB per k-tile in a 34 KB slot, 384 accumulator columns, 12 scale columns a slot, 4 MMAs")
    x = res["3"]
    expect(x["smem_bytes_per_ktile_cta"] == 2 * (16384 + 16384 + 512 + 2 * 512) == 68608 and x["slot_bytes"] == 68608
           and x["acc_columns"] == 384 and x["sf_columns_per_slot"] == 24 and x["mmas_per_ktile"] == 8,
           "step 3: two k-atoms of 33.5 KB in a 67 KB slot, 384 accumulator columns, 24 scale columns a slot, 8 MMAs")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="consistency checks; change nothing")
    args = ap.parse_args()
    results = [model(*s) for s in SHAPES]
    meas = measured(results)
    # Each file, its markers and what goes between them: the README's short block, the page's whole model.
    targets = [(README, BEGIN, END, readme_block(results, meas)),
               (PAGE, PAGE_BEGIN, PAGE_END, page_block(results, meas))]
    doc = json.dumps(document(results, meas), indent=1) + "\n"

    if args.check:
        failures = checks(results, meas)
        if not JSON_OUT.exists() or not base.same_document(json.loads(JSON_OUT.read_text()), json.loads(doc)):
            failures.append(f"{JSON_OUT.relative_to(ROOT)} is not current: run python3 docs/b200_model_mxfp8.py")
        for path, begin, end, body in targets:
            text = path.read_text() if path.exists() else ""
            if rewrite(text, body, begin, end) != text:
                failures.append(f"the block between {begin} / {end} in {path.relative_to(ROOT)} is missing or not "
                                "current: run python3 docs/b200_model_mxfp8.py")
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        print(f"checked {len(results)} shapes x {len(STEPS)} steps: every bound >= SOL, the method is "
              "docs/b200_model.py's stage 06/07, steps 1, 2 and 3 are kernel_format.cuh's, kernel_n256.cuh's and "
              "kernel.cuh's tiling (tile, BK, MMAs per k-tile, slots, TMEM columns, slot bytes), every step fits TMEM and "
              f"shared memory, the tile orders, {len(meas)} measured figures within their bounds, hand-worked "
              f"values; committed JSON, {README.relative_to(ROOT)} and {PAGE.relative_to(ROOT)} are current")
        return 0

    print(targets[1][3], end="")
    JSON_OUT.write_text(doc)
    print("wrote", JSON_OUT.relative_to(ROOT))
    status = 0
    for path, begin, end, body in targets:
        text = path.read_text() if path.exists() else None
        new = rewrite(text, body, begin, end) if text is not None else None
        if new is None:
            print(f"{path.relative_to(ROOT)} lacks {begin} / {end}: not written")
            status = 1
        elif new != text:
            path.write_text(new)
            print("updated", path.relative_to(ROOT))
        else:
            print("unchanged", path.relative_to(ROOT))
    return status


if __name__ == "__main__":
    sys.exit(main())
