#!/usr/bin/env python3
"""A B200 MODEL of stage 12 steps 1 and 2 (the SVDQuant GEMM: y = (alpha acc + lora_act lora_up^T) wcscale[n] +
bias[n], acc stage 07's NVFP4 product, the rank-R product as kind::f16 MMAs into a Tensor Memory accumulator of its
own). Step 1, 12_svdquant/kernel.cuh: the low-rank k-tiles after each tile's NVFP4 k-tiles, through the same ring.
Step 2, 12_svdquant/kernel_interleaved.cuh: the low-rank k-tiles spread through the K loop from two buffers of their
own, so the MMA warp waits for the low-rank accumulator at the start of each unit. Predicted lower bounds on time per
shape and the overhead over stage 07's bound at the same shape, against the 4R/K floor. Nothing here is measured by
this project; no GPU is involved.

    python3 docs/b200_model_svdquant.py          write docs/data/b200_model_svdquant.json; the model between
                                                 <!-- svdquant-model-page:begin --> / <!-- svdquant-model-page:end -->
                                                 in docs/b200_model_svdquant.md; a short block between
                                                 <!-- svdquant-model:begin --> / <!-- svdquant-model:end --> in
                                                 12_svdquant/README.md (appending a section "## The B200 model"
                                                 with the markers where the README lacks them); print the page's
                                                 block.
    python3 docs/b200_model_svdquant.py --check  consistency checks (every bound >= SOL, the method with R = 0 is
                                                 docs/b200_model.py's stage 06/07 bound, the tiling constants are
                                                 12_svdquant/kernel.cuh's and kernel_interleaved.cuh's, step 2's
                                                 bound >= step 1's, no measured figure beats its bound,
                                                 transcriptions, hand-worked values) and that the committed JSON,
                                                 the page's block and the README's block are current; changes
                                                 nothing. Exit code 1 on a failure.

The method is docs/b200_model.py's for stages 06/07 (persistent pairs, the tiles in rounds of 74 pairs, the
epilogue behind the next tile's MMAs, the min bytes at 8 TB/s), with a tile's low-rank MMAs added to its MMA time
and the low-rank operands, wcscale and bias added to the min bytes. Step 2's bound adds, for every unit a pair
runs after its first, the part of the previous unit's epilogue that its first NVFP4 k-tile's MMAs do not cover (see
step2()). The published figures come from docs/b200_model.py (imported, not restated); the dense kind::f16 rate is
ASSUMED a quarter of the dense NVFP4 rate (see F16_DENSE_FLOPS).
"""
import argparse
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import b200_model as base  # noqa: E402  (docs/b200_model.py: the published figures, stage 07's bound)

ROOT = pathlib.Path(__file__).resolve().parent.parent
JSON_OUT = ROOT / "docs" / "data" / "b200_model_svdquant.json"
README = ROOT / "12_svdquant" / "README.md"
PAGE = ROOT / "docs" / "b200_model_svdquant.md"
KERNEL = ROOT / "12_svdquant" / "kernel.cuh"
KERNEL2 = ROOT / "12_svdquant" / "kernel_interleaved.cuh"   # step 2
KERNEL07 = ROOT / "07_epilogue_tma" / "kernel.cuh"
BEGIN, END = "<!-- svdquant-model:begin -->", "<!-- svdquant-model:end -->"                      # README: short
PAGE_BEGIN, PAGE_END = "<!-- svdquant-model-page:begin -->", "<!-- svdquant-model-page:end -->"  # PAGE: the model
README_SECTION = ("## The B200 model\n\n"
                  "No B200 ran this stage: [docs/b200_model_svdquant.py](../docs/b200_model_svdquant.py) predicts\n"
                  "lower bounds on the time of steps 1 and 2 from published peak figures and the tiling, and the\n"
                  "overhead of the low-rank term over stage 07's bound at the same shape. It rewrites the block\n"
                  "below and [docs/b200_model_svdquant.md](../docs/b200_model_svdquant.md), and its `--check`\n"
                  "(the `b200_model_svdquant` ctest) fails if either is stale.\n\n")
TITLE = "B200 MODEL of stage 12 steps 1 and 2 (predicted lower bounds from published peak figures; not measured)"

SMS, PAIRS = base.SMS, base.PAIRS
HBM_BYTES_PER_S, HBM_BYTES_PER_S_ALT = base.HBM_BYTES_PER_S, base.HBM_BYTES_PER_S_ALT
ceil_div, round_up, extents, us = base.ceil_div, base.round_up, base.extents, base.us

# --- The kind::f16 rate: an ASSUMPTION derived from the published NVFP4 figure --------------------------------------
# docs/b200_model.py cites no dense FP16/BF16 figure. Assumed: a kind::f16 MMA runs at a quarter of the dense NVFP4
# rate (the stage's premise, "a 16-bit MMA runs at a quarter of the FP4 rate"), 2.25 PFLOP/s.
F16_RATE_DIVISOR = 4
F16_DENSE_FLOPS = base.NVFP4_DENSE_FLOPS / F16_RATE_DIVISOR
PER_SM_F16_FLOPS = F16_DENSE_FLOPS / SMS

FIGURES = {key: base.FIGURES[key] for key in ("nvfp4_dense_flops", "sms", "hbm_bytes_per_s", "per_sm_flops")}
FIGURES["f16_dense_flops"] = dict(
    value=F16_DENSE_FLOPS, what="dense kind::f16 (FP16/BF16 operands, FP32 accumulation) tensor-core rate of one "
                                "B200, FLOP/s: ASSUMED",
    source="derived (assumption): nvfp4_dense_flops / 4, a 16-bit MMA at a quarter of the FP4 rate; docs/b200_model.py "
           "cites no FP16/BF16 figure")

# --- 12_svdquant/kernel.cuh's tiling, spelled as there (--check reads the file) -------------------------------------
kCtaGroup = 2        # a CTA pair issues one MMA
kBM = 256            # rows of C per tile (pair): M of both MMA kinds
kBN = 128            # columns of C per tile: N of both MMA kinds
kTileK = 256         # values of k per NVFP4 k-tile (one 128-byte swizzle row)
kMmaK = 64           # values of k per kind::mxf4nvf4 MMA
kLrTileR = 64        # values of the rank per low-rank k-tile (one 128-byte swizzle row of 16-bit values)
kLrMmaK = 16         # values of the rank per kind::f16 MMA
kAccBuffers = 2      # NVFP4 accumulators in TMEM
kAccColumns = 256    # kAccBuffers * kBN
kLrColumns = 128     # one low-rank accumulator for every unit
kSmemPerBlock = 232448
kStaticSmemMargin = 2048
kEpilogueWarps, kStagingBuffers, kStagingBytes = 4, 2, 2048
kTmemColumns = 512
kSfColumnsPerSlot = 32   # 16 SFA + 16 SFB columns per slot
kSlots = 4               # step 1's ring, and step 2's
kLrBuffers = 2           # step 2 (kernel_interleaved.cuh): low-rank buffers of its own, kLrTmaBytes each per CTA
kLrTmaBytes = 24576      # a low-rank k-tile per CTA: 16 KB of lora_act + 8 KB of lora_up
SLOT_KB = 28             # sizeof(Slot), the comment's "28 KB"
STAGE07_SLOTS = 7        # 07_epilogue_tma/kernel.cuh's kSlots
KERNEL_CONSTANTS = dict(kCtaGroup=kCtaGroup, kBM=kBM, kBN=kBN, kTileK=kTileK, kMmaK=kMmaK, kLrTileR=kLrTileR,
                        kLrMmaK=kLrMmaK, kAccBuffers=kAccBuffers, kAccColumns=kAccColumns, kLrColumns=kLrColumns,
                        kSmemPerBlock=kSmemPerBlock, kStaticSmemMargin=kStaticSmemMargin,
                        kEpilogueWarps=kEpilogueWarps, kStagingBuffers=kStagingBuffers, kStagingBytes=kStagingBytes,
                        kTmemColumns=kTmemColumns, kSfColumnsPerSlot=kSfColumnsPerSlot, kLrTmaBytes=kLrTmaBytes)

# --- The shapes: (layer, M, N, K, R, target applies) -----------------------------------------------------------------
FLUX_SOURCE = ("FLUX.1 at a 1024^2 image, M = 4352 = 4096 image + 256 text tokens for the single-stream blocks: "
               "FLUX.1's hidden size 3072 and MLP size 12288 (its linear layers as a profile of aten.addmm lists them)")
WORKLOG_SOURCE = ("ultism/svdquant-kernels GEMM_SHAPES (baseline/kernels/gemm_w4a4/harness.py at 7885f31): the "
                  "shapes of the SVDQuant worklog")
SHAPES = [
    ("FLUX single-block linear1", 4352, 21504, 3072, 32, True),
    ("FLUX single-block linear1", 4352, 21504, 3072, 128, False),
    ("FLUX single-block linear2", 4352, 3072, 15360, 32, False),
    ("FLUX double-block MLP up", 4096, 12288, 3072, 32, False),
    ("FLUX double-block MLP down", 4096, 3072, 12288, 32, False),
    ("FLUX double-block QKV", 4096, 9216, 3072, 32, False),
    ("FLUX double-block attn proj", 4096, 3072, 3072, 32, False),
    ("worklog", 256, 3072, 3840, 128, True),
    ("worklog (its production shape)", 4352, 3072, 3840, 128, True),
    ("worklog", 4352, 15360, 3840, 128, True),
    ("worklog", 4352, 3840, 15360, 128, False),
    ("worklog", 4352, 3072, 10240, 32, False),
    ("worklog", 4352, 3072, 10240, 256, False),
]
# The target: the overhead over stage 07 at most 1.25 x 4R/K on the FLUX linear1 shape at R = 32 and on the
# worklog's K = 3840 shapes at R = 128 ("<= 5 % at R=32 on the FLUX linear1 shape, <= 17 % at R=128, K=3840").
TARGET = 1.25

# --- Measured elsewhere: the SVDQuant worklog (seed 004), on a B200; numbers as it prints them ----------------------
WORKLOG = ("seed worklog 004: 'Implementing SVDQuant W4A4 on Blackwell' (code: ultism/svdquant-kernels); B200; "
           "MFU is its fraction of 10 PFLOPS dense NVFP4 (this model uses 9)")
# Its kernel v2_fa4 (+C1, +LU fix), 2-CTA persistent, low-rank MMAs interleaved into the K loop:
# (M, N, K, R) -> (FP16 TFLOP/s, FP16 MFU %, BF16 MFU %) (its section 9.2 tables).
WORKLOG_SVDQUANT = {(4352, 3072, 3840, 128): (1685, 16.9, 17.3), (4352, 15360, 3840, 128): (2648, 26.5, 26.7),
                    (4352, 3840, 15360, 128): (2735, 27.3, 27.3), (4352, 3072, 10240, 32): (2645, 26.4, 26.2)}
# CUTLASS dense_blockscaled_gemm_persistent.py, NVFP4 only (no low-rank term, no affine): (M, N, K) ->
# TFLOP/s (MFU %) for 1-CTA 128 x 256, 2-CTA 256 x 128 (stage 07's tile), 2-CTA 256 x 256 (its section 4.2 table).
CUTLASS_TILES = ("1-CTA 128 x 256", "2-CTA 256 x 128", "2-CTA 256 x 256")
WORKLOG_CUTLASS = {(4352, 3072, 3840): ((3847, 38.5), (4202, 42.0), (4545, 45.4)),
                   (4352, 15360, 3840): ((4167, 41.7), (5181, 51.8), (5836, 58.4)),
                   (4352, 3840, 15360): ((4096, 41.0), (5903, 59.0), (6339, 63.4)),
                   (4352, 3072, 10240): ((4174, 41.7), (5375, 53.8), (6074, 60.7))}
# ncu durations at its production shape (M, N, K, R) = (4352, 3072, 3840, 128), at ncu's clocks: v2 with the
# low-rank term off, and on (its C1 stage) (its section 6.5 table).
WORKLOG_NCU_US = dict(shape=(4352, 3072, 3840, 128), off=42.0, on=69.6)
# The same table's other rows, same runs: the tensor pipe's busy fraction (ncu's hmma subpipe, %) and the cycles a
# warp waits on L1TEX (long_scoreboard) per issued instruction; it reads the drop as its LA/LU shared-memory reads
# serializing against the K loop's A/B reads (DRAM at most 6 % busy).
WORKLOG_NCU_PIPE = dict(hmma_pct_off=60.5, hmma_pct_on=34.9, long_scoreboard_off=10.6, long_scoreboard_on=21.8)
WORKLOG_PEAK = 10e15
# The loaded DRAM latency measured on an H100 (docs/data/dram_latency_probe_h100.txt): puts the ring depth in
# proportion only; a B200's is not known here.
LOADED_DRAM_LATENCY_H100 = 932e-9


# --- Bytes -----------------------------------------------------------------------------------------------------------
def extra_bytes(m, n, r):
    """What step 1 reads beyond stage 07: lora_act (M x R) and lora_up (N x R) at 2 bytes, wcscale and bias (FP32)."""
    return 2 * m * r + 2 * n * r + 4 * n + 4 * n


def min_bytes(m, n, k, r):
    """Stage 07's min bytes (A, B, both scale arrays, C at 2 bytes) plus the low-rank operands, wcscale and bias."""
    return base.min_bytes(m, n, k) + extra_bytes(m, n, r)


def tile_bytes(rows, cols, k, r):
    """One tile's loads and store when nothing is shared through L2: stage 07's, its rows of lora_act, its columns
    of lora_up, wcscale and bias (ranks past R and rows past M: zeros from TMA, no DRAM bytes)."""
    return base.tile_bytes(rows, cols, k) + 2 * rows * r + 2 * cols * r + 8 * cols


# --- The method -----------------------------------------------------------------------------------------------------
def persistent(m, n, k, r, nbytes, tile_nbytes, bw=HBM_BYTES_PER_S):
    """docs/b200_model.py's stage 06/07 method with a low-rank term: PAIRS pairs take the kBM x kBN tiles in rounds;
    a tile's MMAs are its NVFP4 ones (the whole tile over K padded to kMmaK, at two SMs' share of the NVFP4 rate) then
    its R / kLrMmaK kind::f16 ones (the whole tile over R padded to kLrMmaK, at two SMs' share of the kind::f16 rate);
    the epilogue runs behind the next tile's MMAs; DRAM moves at least nbytes. bound = max(T_tensor, T_dram).
    With r = 0 and stage 07's bytes this is docs/b200_model.py's stage06() (--check compares them)."""
    rows, cols = extents(m, kBM), extents(n, kBN)
    tiles = len(rows) * len(cols)
    waves = ceil_div(tiles, PAIRS)
    t_nvfp4 = 2 * kBM * kBN * round_up(k, kMmaK) / (kCtaGroup * base.PER_SM_FLOPS)
    t_lowrank = 2 * kBM * kBN * round_up(r, kLrMmaK) / (kCtaGroup * PER_SM_F16_FLOPS)
    t_tensor = waves * (t_nvfp4 + t_lowrank)
    no_reuse = sum(tile_nbytes(a, b, k) for a in rows for b in cols)
    return dict(tiles=tiles, waves=waves, pairs_busy=tiles / (waves * PAIRS), unit_time_nvfp4=t_nvfp4,
                unit_time_lowrank=t_lowrank, t_tensor_nvfp4=waves * t_nvfp4, t_tensor_lowrank=waves * t_lowrank,
                t_tensor=t_tensor, t_dram=nbytes / bw, t_dram_no_reuse=no_reuse / bw, bytes=nbytes,
                bytes_no_reuse=no_reuse,
                executed_flops=tiles * 2 * kBM * kBN * (round_up(k, kMmaK) + round_up(r, kLrMmaK)),
                bound=max(t_tensor, nbytes / bw))


def epilogue_hold(m, n, bw=HBM_BYTES_PER_S):
    """A lower bound on how long one CTA's epilogue holds the low-rank accumulator for one unit, from the acc_full
    commit to its lr_empty arrival: its C bytes at its share of the HBM bandwidth, bw / SMS. A CTA stores at most
    kBM / kCtaGroup rows x kBN columns at 2 bytes (32 KB); the smallest tile's count is used, so tiles cut by M or N
    cannot make it too long. Assumed: a CTA's stores are accepted no faster than its share of the bandwidth (the
    epilogue arrives on lr_empty once its TMA stores are issued, not finished, and L2 could take a burst faster).
    Ignored, as they have no published rate: the Tensor Memory loads (128 accumulator + 128 low-rank
    columns per thread row), the wcscale and bias loads, the shuffles, the affine and the instructions' issue time,
    which only make the epilogue longer. Returns (bytes, seconds)."""
    rows = min(kBM // kCtaGroup, min(extents(m, kBM)))
    nbytes = 2 * rows * min(extents(n, kBN))
    return nbytes, nbytes / (bw / SMS)


def step1(m, n, k, r, bw=HBM_BYTES_PER_S):
    s = persistent(m, n, k, r, min_bytes(m, n, k, r), lambda a, b, kk: tile_bytes(a, b, kk, r), bw)
    # The epilogue releases the low-rank accumulator (lr_empty) only after its whole loop, and the next unit's
    # low-rank MMAs wait for it after that unit's NVFP4 k-tiles: the epilogue has one unit's NVFP4 MMA time. Its C
    # at the pair's share of the bandwidth must fit in it (ratio <= 1, checked; the exposed wait is then 0) for the
    # bound to hold as modelled.
    _, hold = epilogue_hold(m, n, bw)
    s.update(k_tiles=ceil_div(k, kTileK), lr_k_tiles=ceil_div(r, kLrTileR), lr_mmas=ceil_div(r, kLrMmaK),
             epilogue_c_over_nvfp4_mma=(2 * kBM * kBN / (kCtaGroup * bw / SMS)) / s["unit_time_nvfp4"],
             lr_empty_exposed_per_unit=max(0.0, hold - s["unit_time_nvfp4"]))
    return s


def lr_begin(kt, k_tiles, lr_tiles):
    """kernel_interleaved.cuh's lr_begin: the first low-rank k-tile that follows NVFP4 k-tile kt."""
    return (kt * lr_tiles + k_tiles - 1) // k_tiles


def step2(m, n, k, r, s1, bw=HBM_BYTES_PER_S):
    """Step 2 (kernel_interleaved.cuh): step 1's MMAs and bytes; low-rank k-tile 0 follows NVFP4 k-tile 0
    (lr_begin(0) = 0), so before a unit's second NVFP4 k-tile the MMA warp waits on lr_empty for the previous unit's
    epilogue, which starts when that unit's MMAs are done. The MMA warp issues in order: after the previous unit's
    MMAs the tensor pipe has only the first NVFP4 k-tile's MMAs queued (T_first_ktile: 256 x 128 x 256 values at two
    SMs' share of the NVFP4 rate), so it idles at least max(0, T_epilogue_hold - T_first_ktile), once per unit a pair
    runs after its first. The busiest pair runs ceil(tiles / 74) units (persistent()'s rounds), so
    T_tensor = step 1's T_tensor + (rounds - 1) x that; bound = max(T_tensor, T_dram), T_dram step 1's."""
    t_first = 2 * kBM * kBN * min(kTileK, round_up(k, kMmaK)) / (kCtaGroup * base.PER_SM_FLOPS)
    hold_bytes, hold = epilogue_hold(m, n, bw)
    exposed = max(0.0, hold - t_first)
    waits = s1["waves"] - 1
    t_tensor = s1["t_tensor"] + waits * exposed
    return dict(units_per_pair=s1["waves"], lr_empty_waits=waits, t_first_ktile=t_first,
                epilogue_hold_bytes=hold_bytes, t_epilogue_hold=hold, exposed_per_unit=exposed,
                t_exposed=waits * exposed, t_tensor=t_tensor, t_dram=s1["t_dram"], bound=max(t_tensor, s1["t_dram"]))


def sol(m, n, k, r, bw=HBM_BYTES_PER_S):
    """Both products at their published (NVFP4) and assumed (kind::f16) peak rates, or the min bytes."""
    t_tensor = 2 * m * n * k / base.NVFP4_DENSE_FLOPS + 2 * m * n * r / F16_DENSE_FLOPS
    t_dram = min_bytes(m, n, k, r) / bw
    return dict(t_tensor=t_tensor, t_dram=t_dram, t=max(t_tensor, t_dram))


def model(layer, m, n, k, r, target, bw=HBM_BYTES_PER_S):
    s1 = step1(m, n, k, r, bw)
    s2 = step2(m, n, k, r, s1, bw)
    s07 = base.model(m, n, k, bw)["stages"]["07"]
    s07 = {f: s07[f] for f in ("tiles", "waves", "pairs_busy", "t_tensor", "t_dram", "bound")}
    light = sol(m, n, k, r, bw)
    flops = 2 * m * n * (k + r)  # the kind's count (common/kinds/svdquant_gemm.h): both products
    overhead, floor = s1["bound"] / s07["bound"] - 1, 4 * r / k
    s1.update(tflops=flops / s1["bound"] / 1e12, tflops_nvfp4_count=2 * m * n * k / s1["bound"] / 1e12,
              bound_over_sol=s1["bound"] / light["t"])
    overhead2 = s2["bound"] / s07["bound"] - 1
    s2.update(tflops=flops / s2["bound"] / 1e12, tflops_nvfp4_count=2 * m * n * k / s2["bound"] / 1e12,
              bound_over_sol=s2["bound"] / light["t"], overhead=overhead2, overhead_over_floor=overhead2 / floor,
              target_holds=(overhead2 <= TARGET * floor) if target else None)
    # overhead, overhead_over_floor and target_holds at this level are step 1's (the stage's target).
    return dict(layer=layer, M=m, N=n, K=k, R=r, L=1, flops=flops, flops_nvfp4=2 * m * n * k,
                min_bytes=min_bytes(m, n, k, r), extra_bytes=extra_bytes(m, n, r),
                sol=dict(light, tflops=flops / light["t"] / 1e12), step1=s1, step2=s2, stage07=s07,
                overhead=overhead, floor_4r_over_k=floor, overhead_over_floor=overhead / floor,
                target_applies=target, target_holds=(overhead <= TARGET * floor) if target else None)


def resources(lr_columns, lr_buffers=0):
    """The ring and Tensor Memory of stage 07 (lr_columns = 0), step 1 (lr_columns = kLrColumns) or step 2 (also
    lr_buffers = kLrBuffers), with 12_svdquant/kernel.cuh's and kernel_interleaved.cuh's formulas: a 28 KB slot per
    k-tile; slots = min(those shared memory holds beside the barriers, alignment, margin, staging and step 2's
    low-rank buffers of kLrTmaBytes each, those whose 32 scale columns fit beside the accumulators in 512 TMEM
    columns)."""
    slot = SLOT_KB * 1024
    fixed = 1024 + 1024 + kStaticSmemMargin + kEpilogueWarps * kStagingBuffers * kStagingBytes
    by_smem = (kSmemPerBlock - fixed - lr_buffers * kLrTmaBytes) // slot
    by_tmem = (kTmemColumns - kAccColumns - lr_columns) // kSfColumnsPerSlot
    slots = min(by_smem, by_tmem)
    t_ktile = 2 * kBM * kBN * kTileK / (kCtaGroup * base.PER_SM_FLOPS)
    return dict(slot_bytes=slot, lr_buffer_bytes=lr_buffers * kLrTmaBytes, slots_by_smem=by_smem,
                slots_by_tmem=by_tmem, slots=slots,
                tmem_columns=kAccColumns + lr_columns + slots * kSfColumnsPerSlot, t_mma_per_ktile=t_ktile,
                ring_mma_time=slots * t_ktile)


def lowrank_ktile_fill(r):
    """The last low-rank k-tile's MMA time as a fraction of an NVFP4 k-tile's (a full one: 4 kind::f16 MMAs of 16
    ranks at a quarter rate = 4 NVFP4 MMAs of 64 values)."""
    last = r - (ceil_div(r, kLrTileR) - 1) * kLrTileR
    return round_up(last, kLrMmaK) / kLrTileR


def measured(results):
    """The worklog's figures, each beside what bounds it: its SVDQuant kernel (another design and tiling) by SOL
    only, with either FLOP count; CUTLASS 2-CTA 256 x 128 (stage 07's tile, persistent) by stage 07's bound; its
    other tiles by SOL."""
    by = {(x["M"], x["N"], x["K"], x["R"]): x for x in results}
    rows = []
    for (m, n, k, r), (tf, mfu16, mfubf) in WORKLOG_SVDQUANT.items():
        x = by[(m, n, k, r)]
        rows.append(dict(who="worklog v2_fa4 (FP16 low-rank operands)", M=m, N=n, K=k, R=r, tflops=tf,
                         mfu_pct=mfu16, mfu_bf16_pct=mfubf, bound_name="SOL",
                         bound_tflops=x["flops"] / x["sol"]["t"] / 1e12,
                         model_step1_tflops_nvfp4_count=x["step1"]["tflops_nvfp4_count"],
                         model_step1_us=x["step1"]["bound"] * 1e6,
                         model_step2_tflops_nvfp4_count=x["step2"]["tflops_nvfp4_count"],
                         model_step2_us=x["step2"]["bound"] * 1e6))
    for (m, n, k), cells in WORKLOG_CUTLASS.items():
        r07 = base.model(m, n, k)
        for tile, (tf, mfu) in zip(CUTLASS_TILES, cells):
            same = tile == "2-CTA 256 x 128"
            bound = r07["stages"]["07"]["tflops"] if same else r07["sol"]["tflops"]
            rows.append(dict(who=f"worklog: CUTLASS NVFP4 {tile} (no low-rank term)", M=m, N=n, K=k, R=0, tflops=tf,
                             mfu_pct=mfu, mfu_bf16_pct=None, bound_name="stage 07 bound" if same else "SOL",
                             bound_tflops=bound, model_step1_tflops_nvfp4_count=None, model_step1_us=None,
                             model_step2_tflops_nvfp4_count=None, model_step2_us=None))
    return rows


# --- Output ----------------------------------------------------------------------------------------------------------
def shape_text(x):
    return f"{x['M']}x{x['N']}x{x['K']}"


def pct(v, digits=1):
    return f"{100 * v:.{digits}f}%"


def yes_no(ok):
    return "**yes**" if ok else "**no**"


def target_rows(results):
    return [x for x in results if x["target_applies"]]


def target_table(rows):
    """Both steps' overhead over stage 07 at the given shapes; the verdicts only where the target applies."""
    lines = ["| layer | M x N x K | R | 4R/K | step 1: overhead over stage 07 | step 1: overhead / (4R/K) | "
             f"step 1 <= {TARGET:g} x 4R/K | step 2: overhead over stage 07 | step 2: overhead / (4R/K) | "
             f"step 2 <= {TARGET:g} x 4R/K |", "|---|---|---|---|---|---|---|---|---|---|"]
    for x in rows:
        s2 = x["step2"]
        v1 = yes_no(x["target_holds"]) if x["target_applies"] else "-"
        v2 = yes_no(s2["target_holds"]) if x["target_applies"] else "-"
        lines.append(f"| {x['layer']} | {shape_text(x)} | {x['R']} | {pct(x['floor_4r_over_k'], 2)} | "
                     f"{pct(x['overhead'], 2)} | {x['overhead_over_floor']:.3f} | {v1} | {pct(s2['overhead'], 2)} | "
                     f"{s2['overhead_over_floor']:.3f} | {v2} |")
    return lines


def span(values, digits=3):
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return lo if lo == hi else f"{lo} to {hi}"


def step2_verdict(results):
    """How many target shapes step 2 meets the target at, and which."""
    rows = target_rows(results)
    met = [x for x in rows if x["step2"]["target_holds"]]
    which = "; ".join(f"{shape_text(x)}, R = {x['R']}" for x in met)
    if len(met) == len(rows):
        return "meets it in the model at every target shape"
    if not met:
        return "misses it in the model at every target shape"
    return (f"misses it in the model: it meets it at only {len(met)} of the {len(rows)} target shapes ({which}, "
            f"where every pair runs {'one unit' if all(x['step2']['units_per_pair'] == 1 for x in met) else 'few units'})")


def step2_example(results):
    """The numbers of the wait, the same at every shape here (whole tiles)."""
    x = results[0]["step2"]
    return x["t_first_ktile"], x["t_epilogue_hold"], x["exposed_per_unit"], x["epilogue_hold_bytes"]


def why_step2(results):
    """Why step 2 is slower in the model: 3-5 plain sentences."""
    t_first, hold, exposed, hold_bytes = step2_example(results)
    return (f"Step 2 multiplies a unit's first low-rank k-tile right after its first NVFP4 k-tile, so the MMA warp "
            "waits on `lr_empty` (the previous unit's epilogue has read the low-rank columns, which it does after "
            "issuing its last store of that unit's tile) at the start of each unit, where step 1 waits at its end, behind "
            "the unit's whole NVFP4 K loop. The MMA warp issues in order, so during that wait the tensor pipe has "
            f"only the first k-tile's MMAs ({1e9 * t_first:.0f} ns) to run and then idles for the rest of the "
            f"previous epilogue (at least {1e9 * hold:.0f} ns: a CTA's {hold_bytes // 1024} KB of C at its share "
            f"of {HBM_BYTES_PER_S / 1e12:g} TB/s), {1e9 * exposed:.0f} ns per unit a pair runs after its first. "
            f"There is one low-rank accumulator because Tensor Memory is full: {kAccBuffers} x {kBN} NVFP4 "
            f"accumulator columns + {kLrColumns} low-rank + {kSlots} slots x {kSfColumnsPerSlot} scale columns = "
            f"{kAccColumns + kLrColumns + kSlots * kSfColumnsPerSlot}. A second low-rank accumulator would cost "
            f"{kLrColumns} more columns, the scale columns of all {kSlots} slots, leaving the ring none.")


def worklog_ncu_text(results):
    m, n, k, r = WORKLOG_NCU_US["shape"]
    prod = next(x for x in results if (x["M"], x["N"], x["K"], x["R"]) == (m, n, k, r))
    w = WORKLOG_NCU_PIPE
    return (f"Its ncu durations at {m}x{n}x{k}, R = {r}, at ncu's clocks: {WORKLOG_NCU_US['off']} us with the "
            f"low-rank term off, {WORKLOG_NCU_US['on']} us with it on: "
            f"+{pct(WORKLOG_NCU_US['on'] / WORKLOG_NCU_US['off'] - 1, 0)}, against the model's "
            f"{pct(prod['overhead'], 1)} (4R/K) for step 1's design and {pct(prod['step2']['overhead'], 1)} for "
            f"step 2's at that shape. In the same runs its tensor pipe was busy {w['hmma_pct_off']} % of the time "
            f"without the term and {w['hmma_pct_on']} % with it, and a warp's L1TEX waits rose from "
            f"{w['long_scoreboard_off']} to {w['long_scoreboard_on']} cycles per issued instruction; it attributes "
            "the loss to the shared-memory reads of its low-rank buffers (LA, LU) serializing against the K loop's "
            "reads of A and B. That is another mechanism than the model's `lr_empty` wait, which its kernel does "
            "not have (it adds the low-rank product into its NVFP4 accumulator); these figures were measured by the "
            "worklog on its B200, not by this project, and no bound of the model uses them.")


def readme_block(results):
    holds = all(x["target_holds"] for x in target_rows(results))
    ratios = [x["overhead_over_floor"] for x in results]
    ratios2 = [x["step2"]["overhead_over_floor"] for x in results]
    lines = [f"**{TITLE}**; the dense kind::f16 rate **assumed** a quarter of the NVFP4 rate "
             f"({F16_DENSE_FLOPS / 1e15:g} PFLOP/s).", "",
             f"The target: step 1's low-rank term costs at most {TARGET:g} x 4R/K over stage 07's bound at the same "
             "shape, on the FLUX linear1 shape at R = 32 and on the worklog's K = 3840 shapes at R = 128. The "
             "model's overhead of both steps at every shape modelled (the verdicts at the target shapes):", ""]
    lines += target_table(results)
    lines += ["", f"**Step 1**: the target {'holds' if holds else 'does not hold'} in the model, at every target "
                  "shape. That says little: to stage 07's bound the model adds the low-rank MMAs at a quarter of the "
                  "NVFP4 rate, whose time is exactly 4R/K of the NVFP4 MMAs', and the low-rank, wcscale and bias "
                  f"bytes, which set no bound here; so the overhead is 4R/K (overhead / (4R/K) = {span(ratios)} at "
                  f"all {len(results)} shapes modelled). What could make step 1 miss the target lies outside the "
                  f"bound: the ring of {kSlots} slots where stage 07 has {STAGE07_SLOTS}, the extra pipeline steps "
                  "per tile, and the epilogue's extra Tensor Memory load and wcscale/bias loads, which must finish "
                  "within the next tile's NVFP4 MMAs.", "",
              f"**Step 2** (`kernel_interleaved.cuh`), held to the same target, {step2_verdict(results)}; overhead / "
              f"(4R/K) is {span(ratios2, 2)} over the {len(results)} shapes. " + why_step2(results) + " The model's "
              "epilogue time counts only C's bytes at the CTA's share of the HBM bandwidth (an assumed rate: the epilogue "
              "need only issue its stores, and L2 could take them faster); it ignores the Tensor Memory loads and the "
              "instructions' time, which could only lengthen the wait. The worklog's interleaved kernel lost its time to something else, "
              "the shared-memory reads of its low-rank buffers (measured by the worklog, not by this project; "
              "see the full model).", "",
              "The full model (every shape, the bytes, the wait, what the bound leaves out, the worklog's measured "
              "figures): [docs/b200_model_svdquant.md](../docs/b200_model_svdquant.md).", ""]
    return "\n".join(lines) + "\n"


def page_block(results, meas):
    r07, r1, r2 = resources(0), resources(kLrColumns), resources(kLrColumns, kLrBuffers)
    t_first, hold, exposed, hold_bytes = step2_example(results)
    lines = [f"**{TITLE}.** Published peaks from [docs/b200_model.py](b200_model.py): "
             f"{base.NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4, {HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e, {SMS} "
             f"SMs = {PAIRS} pairs. The dense `kind::f16` rate (FP16 or BF16 operands, FP32 accumulation) is "
             f"**assumed** a quarter of the NVFP4 rate, {F16_DENSE_FLOPS / 1e15:g} PFLOP/s "
             f"({PER_SM_F16_FLOPS / 1e12:.1f} TFLOP/s per SM): docs/b200_model.py cites no FP16/BF16 figure; "
             "Times in microseconds; C in "
             "FP16 or BF16 (2 bytes); L = 1.", "",
             "## Lower bounds and the overhead per shape", "",
             f"Shapes: {FLUX_SOURCE}; {WORKLOG_SOURCE}. The overhead is a step's bound over stage 07's bound at the "
             "same shape (from [b200_model.py](b200_model.py)), less 1; the floor 4R/K is the low-rank MMAs' share: "
             "2MNR FLOPs at a quarter of the rate over 2MNK at the full rate. Step 2's bound is step 1's plus the "
             "waits on `lr_empty` (its own section below). Predicted TFLOP/s count both products, 2MN(K + R) (the "
             "kind's count).", "",
             "| layer | M x N x K | R | tiles | rounds | pairs busy | T_tensor: NVFP4 + low-rank | T_dram (min bytes) | "
             "T_dram (no L2 reuse) | **step 1 bound** | **step 2 bound** | stage 07 bound | 4R/K | step 1 overhead | "
             "step 1 overhead / (4R/K) | step 2 overhead | step 2 overhead / (4R/K) | step 1 bound / SOL | "
             "predicted TFLOP/s: step 1, step 2 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in results:
        s, s2 = x["step1"], x["step2"]
        lines.append(f"| {x['layer']} | {shape_text(x)} | {x['R']} | {s['tiles']} | {s['waves']} | "
                     f"{pct(s['pairs_busy'])} | {us(s['t_tensor_nvfp4'])} + {us(s['t_tensor_lowrank'])} | "
                     f"{us(s['t_dram'])} | {us(s['t_dram_no_reuse'])} | **{us(s['bound'])}** | **{us(s2['bound'])}** | "
                     f"{us(x['stage07']['bound'])} | {pct(x['floor_4r_over_k'], 2)} | {pct(x['overhead'], 2)} | "
                     f"{x['overhead_over_floor']:.3f} | {pct(s2['overhead'], 2)} | {s2['overhead_over_floor']:.3f} | "
                     f"{s['bound_over_sol']:.2f} | {s['tflops']:.0f}, {s2['tflops']:.0f} |")
    alt_lines = []
    for step in ("step1", "step2"):
        worst = max((model(x["layer"], x["M"], x["N"], x["K"], x["R"], False, HBM_BYTES_PER_S_ALT)[step]["bound"]
                     / x[step]["bound"], shape_text(x), x["R"]) for x in results)
        alt_lines.append(f"rise by at most {100 * (worst[0] - 1):.2f}% ({worst[1]}, R = {worst[2]})"
                         if worst[0] > 1 + 1e-12 else "do not change")
    dram = [x for x in results if x["step1"]["t_dram"] >= x["step1"]["t_tensor"]
            or x["stage07"]["t_dram"] >= x["stage07"]["t_tensor"]]
    lines += ["", f"With {HBM_BYTES_PER_S_ALT / 1e12:g} TB/s instead of {HBM_BYTES_PER_S / 1e12:g} TB/s step 1's "
                  f"bounds {alt_lines[0]}: " + ("at every shape here the MMAs, not DRAM, set step 1's and stage 07's "
                                               "bounds" if not dram else f"DRAM sets a bound at {len(dram)} of the "
                                               "shapes")
              + f"; step 2's {alt_lines[1]}, as its epilogue time is C's bytes at the CTA's share of the bandwidth.",
              "",
              f"## The target: at most {TARGET:g} x 4R/K", "",
              "On the FLUX linear1 shape at R = 32 and on the worklog's K = 3840 shapes at R = 128 (the stage's "
              "target, set for step 1):", ""]
    lines += target_table(target_rows(results))
    ratios = [x["overhead_over_floor"] for x in results]
    ratios2 = [x["step2"]["overhead_over_floor"] for x in results]
    lines += ["", f"**Step 1.** The target {'holds' if all(x['target_holds'] for x in target_rows(results)) else 'fails'} in "
                  "the model, and could not fail in it: the bound adds to stage 07's only the low-rank MMAs, at a "
                  "quarter of the NVFP4 rate, and bytes. A tile's low-rank MMAs take R / 16 instructions of 256 x 128 "
                  "x 16 at a quarter rate, 4R/K of its NVFP4 MMAs' time when K is a multiple of 64 and R of 16 (the "
                  "kind requires R a multiple of 16), and the tiles and rounds are stage 07's; so wherever the MMAs "
                  "bound both kernels the overhead is exactly 4R/K. "
                  + (f"Overhead / (4R/K) is {min(ratios):.3f} at all {len(results)} shapes. "
                     if f"{min(ratios):.3f}" == f"{max(ratios):.3f}" else
                     f"Over the {len(results)} shapes, overhead / (4R/K) lies between {min(ratios):.3f} and "
                     f"{max(ratios):.3f}. ")
                  + "Whether step 1 meets the target is decided by what the bound leaves out.", "",
              f"**Step 2.** Held to the same target, step 2 {step2_verdict(results)}. Over the {len(results)} "
              f"shapes its overhead / (4R/K) lies between {span(ratios2, 2).replace(' to ', ' and ')}: the waits on "
              "`lr_empty` (below) add a fixed time per unit, which is a larger share of a unit where K is small, and "
              "a larger multiple of 4R/K where R is small. The parts of the epilogue the model leaves out (below) could only "
              "lengthen each wait.", "",
              "## Step 2: the wait on `lr_empty` at the start of each unit", "",
              why_step2(results), "",
              f"- **The wait, modelled.** T_first_ktile = one NVFP4 k-tile of the pair's tile, 256 x 128 x {kTileK} "
              f"values at two SMs' share of the NVFP4 rate = {1e9 * t_first:.0f} ns. T_epilogue_hold = one CTA's C "
              f"for one unit, {kBM // kCtaGroup} x {kBN} values x 2 bytes = {hold_bytes // 1024} KB, at its share of "
              f"the bandwidth ({HBM_BYTES_PER_S / 1e12:g} TB/s / {SMS}) = {1e9 * hold:.0f} ns. Exposed per unit: "
              f"max(0, T_epilogue_hold - T_first_ktile) = {1e9 * exposed:.0f} ns, paid once per unit a pair runs "
              "except its first; the busiest pair runs ceil(tiles / 74) units (the rounds). Step 2's T_tensor = step "
              "1's + (rounds - 1) x the exposed time; its bytes are step 1's.",
              "- **A lower bound, stated.** T_epilogue_hold counts only C's bytes, and rests on an assumption: the "
              "epilogue arrives on `lr_empty` once its stores are issued, not finished, so the model takes it that "
              "a CTA's stores are accepted no faster than its share of the HBM bandwidth (L2 could take a burst "
              "faster). It ignores the Tensor "
              f"Memory loads ({kBN} accumulator + {kLrColumns} low-rank columns per thread row), the wcscale and "
              "bias loads, the shuffles, the affine and the instructions' time, which have no published rate and "
              "could only lengthen the wait.",
              "- **Step 1 has the same wait, hidden.** Its MMA warp waits on `lr_empty` after the unit's NVFP4 "
              f"k-tiles, so it is exposed only by max(0, T_epilogue_hold - one unit's NVFP4 MMA time): 0 at every "
              f"shape here (T_epilogue_hold is at most "
              f"{pct(max(x['step1']['epilogue_c_over_nvfp4_mma'] for x in results), 0)} of it; `--check` requires "
              "it). Where every pair runs one unit (256x3072x3840) step 2 never waits and its bound is step 1's.",
              f"- **Tensor Memory and shared memory.** Step 2 keeps step 1's Tensor Memory map and {r2['slots']} "
              f"slots: its two low-rank buffers ({kLrBuffers} x {kLrTmaBytes // 1024} KB per CTA) leave shared "
              f"memory room for {r2['slots_by_smem']} slots, but Tensor Memory holds the scale columns of "
              f"{r2['slots_by_tmem']}.", "",
              "| layer | M x N x K | R | units per pair (rounds) | waits on lr_empty | exposed per wait | "
              "T_tensor: step 1 + waits | **step 2 bound** | step 1 overhead | step 1 overhead / (4R/K) | "
              "step 2 overhead | step 2 overhead / (4R/K) | predicted TFLOP/s, step 2 |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in results:
        s, s2 = x["step1"], x["step2"]
        lines.append(f"| {x['layer']} | {shape_text(x)} | {x['R']} | {s2['units_per_pair']} | {s2['lr_empty_waits']} "
                     f"| {1e9 * s2['exposed_per_unit']:.0f} ns | {us(s['t_tensor'])} + {us(s2['t_exposed'])} | "
                     f"**{us(s2['bound'])}** | {pct(x['overhead'], 2)} | {x['overhead_over_floor']:.3f} | "
                     f"{pct(s2['overhead'], 2)} | {s2['overhead_over_floor']:.3f} | {s2['tflops']:.0f} |")
    lines += ["", "## What the bound leaves out", "",
              "Counts from the tiling; no rate of these resources is published, so none enters a bound.", "",
              "| | ring slots (by shared memory, by TMEM) | ring depth in MMA time (pair, at the NVFP4 peak) | "
              "TMEM columns: accumulators + scales |", "|---|---|---|---|",
              f"| stage 07 | {r07['slots']} ({r07['slots_by_smem']}, {r07['slots_by_tmem']}) | "
              f"{1e9 * r07['ring_mma_time']:.0f} ns | {kAccColumns} + {r07['slots'] * kSfColumnsPerSlot} = "
              f"{r07['tmem_columns']} |",
              f"| stage 12 step 1 | {r1['slots']} ({r1['slots_by_smem']}, {r1['slots_by_tmem']}) | "
              f"{1e9 * r1['ring_mma_time']:.0f} ns | {kAccColumns} + {kLrColumns} (low-rank) + "
              f"{r1['slots'] * kSfColumnsPerSlot} = {r1['tmem_columns']} |",
              f"| stage 12 step 2 | {r2['slots']} ({r2['slots_by_smem']}, {r2['slots_by_tmem']}) | "
              f"{1e9 * r2['ring_mma_time']:.0f} ns | {kAccColumns} + {kLrColumns} (low-rank) + "
              f"{r2['slots'] * kSfColumnsPerSlot} = {r2['tmem_columns']} |", "",
              "| layer | M x N x K | R | k-tiles per tile: NVFP4 + low-rank | MMAs per tile: NVFP4 + kind::f16 | "
              "last low-rank k-tile's MMA time / an NVFP4 k-tile's | C at the pair's bandwidth share / one tile's "
              "NVFP4 MMA time |", "|---|---|---|---|---|---|---|"]
    for x in results:
        s = x["step1"]
        lines.append(f"| {x['layer']} | {shape_text(x)} | {x['R']} | {s['k_tiles']} + {s['lr_k_tiles']} | "
                     f"{ceil_div(x['K'], kMmaK)} + {s['lr_mmas']} | {lowrank_ktile_fill(x['R']):.2f} | "
                     f"{pct(s['epilogue_c_over_nvfp4_mma'], 0)} |")
    lines += ["",
              f"- **The ring.** Tensor Memory holds two NVFP4 accumulators, the low-rank one and the scale columns of "
              f"{r1['slots']} slots, where stage 07's held those of {r07['slots']} (shared memory would hold "
              f"{r1['slots_by_smem']}). The loads in flight cover {1e9 * r1['ring_mma_time']:.0f} ns of MMA time "
              f"instead of {1e9 * r07['ring_mma_time']:.0f} ns; a load must land within it or the MMAs wait. For "
              f"proportion only: an H100's loaded DRAM latency was {1e9 * LOADED_DRAM_LATENCY_H100:.0f} ns "
              "([data/dram_latency_probe_h100.txt](data/dram_latency_probe_h100.txt)); a B200's is not known here, "
              "and most loads are served by L2. The bound assumes the ring always keeps the MMAs fed.",
              f"- **The extra pipeline steps.** Each tile adds ceil(R / {kLrTileR}) low-rank k-tiles to its K / "
              f"{kTileK} NVFP4 ones: a wait on the full barrier, a commit to the empty barrier and a ring slot each, "
              f"{kLrTmaBytes // 1024} KB per CTA (lora_act's 128 rows and lora_up's 64) against an NVFP4 k-tile's "
              f"{SLOT_KB} KB. A full low-rank k-tile (64 ranks) is as long in MMA time as an NVFP4 k-tile; at R = 32 "
              "it is half as long for 6/7 of the bytes, so it asks the ring for bytes faster than the NVFP4 k-tiles "
              "do. Before a tile's first low-rank MMA the MMA warp also waits on `lr_empty` (below). The bound counts "
              "none of these. In step 2 the low-rank k-tiles go through their own two buffers (`lr_full`, `lr_free`) "
              "instead of the ring, with the same waits and commits, also not counted.",
              "- **The epilogue.** Per 32-column chunk it loads the chunk's low-rank columns from Tensor Memory (a "
              "second `tcgen05.ld` beside stage 07's), loads 32 values of wcscale and of bias and hands them to "
              "every lane with shuffles, and computes the affine map in FP32. One low-rank accumulator serves every "
              "tile, released on `lr_empty` only when the epilogue's loop is done (its Tensor Memory loads, the "
              "wcscale and bias loads, the arithmetic, the stores issued), and the MMA warp waits for it after the "
              "next tile's NVFP4 k-tiles: so a tile's epilogue must end within the next tile's NVFP4 MMA time or "
              "the tensor core idles. In stage 07 the MMAs waited only for an accumulator's Tensor Memory load, "
              "and the epilogue had only to keep pace, a tile per tile. The table's last column gives only the C stores' share of that time at the pair's share "
              f"of the bandwidth (at most {pct(max(x['step1']['epilogue_c_over_nvfp4_mma'] for x in results), 0)} "
              "here); the Tensor Memory loads, the wcscale and bias loads, the shuffles and the arithmetic have no "
              "published rate and are not counted. In step 2 the same epilogue must end within the next tile's "
              "first NVFP4 k-tile, which C's bytes alone already exceed (the section above).",
              "- As for stage 07: the last round's epilogue, pipeline fill, latencies, the clock under the power "
              "limit and the launch are not counted.", "",
              "## Measured elsewhere", "",
              f"Measured on a B200 by the SVDQuant worklog ({WORKLOG}), not by this project; numbers as it prints "
              "them. Its SVDQuant kernel interleaves the low-rank MMAs into the K loop from separate buffers, as "
              "step 2 does, but adds them into its NVFP4 accumulator (another design than either step's) and does "
              "not state whether its TFLOP/s count the low-rank FLOPs; it is held to SOL only. CUTLASS computes the "
              "NVFP4 product alone; its 2-CTA 256 x 128 kernel has stage 07's tile and is held to stage 07's bound, "
              "its other tiles to SOL.", "",
              "| who | M x N x K | R | measured TFLOP/s | MFU (of 10 PF) | held to | that bound in TFLOP/s | "
              "model, step 1: bound (us), TFLOP/s as 2MNK | model, step 2: bound (us), TFLOP/s as 2MNK |",
              "|---|---|---|---|---|---|---|---|---|"]
    for x in meas:
        mfu = f"{x['mfu_pct']:.1f}%" + (f" (BF16: {x['mfu_bf16_pct']:.1f}%)" if x["mfu_bf16_pct"] is not None else "")
        mods = [f"{us(x[f'model_{st}_us'] * 1e-6)}, {x[f'model_{st}_tflops_nvfp4_count']:.0f}"
                if x[f"model_{st}_us"] is not None else "-" for st in ("step1", "step2")]
        lines.append(f"| {x['who']} | {x['M']}x{x['N']}x{x['K']} | {x['R'] or '-'} | {x['tflops']:g} | {mfu} | "
                     f"{x['bound_name']} | {x['bound_tflops']:.0f} | {mods[0]} | {mods[1]} |")
    lines += ["", worklog_ncu_text(results), "",
              "## How the model counts", "",
              "- **Tensor.** A pair computes a whole 256 x 128 tile: its NVFP4 MMAs over K padded to 64 at two SMs' "
              "share of the published NVFP4 rate, then its kind::f16 MMAs over R padded to 16 at two SMs' share of "
              "the assumed kind::f16 rate; the tiles go to the 74 pairs in rounds (unit u on pair u mod 74), so "
              "T_tensor = ceil(tiles / 74) x one tile's time. With R = 0 this is stage 07's T_tensor (`--check`). "
              "Step 2 adds (rounds - 1) x max(0, T_epilogue_hold - T_first_ktile), the waits on `lr_empty`.",
              "- **DRAM.** The min bytes are stage 07's (A and B packed E2M1, both scale arrays in the blocked "
              "layout, C at 2 bytes) plus lora_act (M x R x 2 B), lora_up (N x R x 2 B), wcscale and bias (N x 4 B "
              "each), each once, at 8 TB/s; 'no L2 reuse' (every tile loads its own rows and columns) is reported, "
              "not used. Both steps read the same bytes.",
              "- **Bound.** max(T_tensor, T_dram); in step 1 the epilogue hidden behind the next tile's MMAs; SOL = "
              f"max(2MNK / {base.NVFP4_DENSE_FLOPS / 1e15:g} PF + 2MNR / {F16_DENSE_FLOPS / 1e15:g} PF, min bytes / "
              "8 TB/s).",
              "- `--check` also compares the model's tiling constants (tile, k-tile, low-rank k-tile, MMA K of both "
              "kinds, accumulators, slots, TMEM columns, the low-rank k-tile's bytes) with `12_svdquant/kernel.cuh` "
              "and `12_svdquant/kernel_interleaved.cuh` (there also its two low-rank buffers of one CTA's share, "
              "its 4 slots, `lr_begin`, and where it waits on and arrives at `lr_empty`), requires step 2's bound "
              "to be at least step 1's, and fails if any measured figure beats its bound."]
    return "\n".join(lines) + "\n"


def document(results, meas):
    return dict(model=TITLE,
                note="No GPU data of this project: lower bounds from published peak figures (the kind::f16 rate "
                     "assumed a quarter of the NVFP4 rate) and the tiling of stage 12's steps 1 and 2, beside figures "
                     "measured by others on a B200 (their source below). Per shape, the top-level overhead, "
                     "overhead_over_floor and target_holds are step 1's; step2 holds step 2's (its bound: step 1's "
                     "T_tensor plus lr_empty_waits x exposed_per_unit, exposed_per_unit = max(0, t_epilogue_hold - "
                     "t_first_ktile), t_epilogue_hold a lower bound from C's bytes only). Times in seconds, bytes in "
                     "bytes, rates in TFLOP/s.",
                figures=FIGURES,
                parameters=dict(pairs=PAIRS, kernel_constants=KERNEL_CONSTANTS, kSlots=kSlots, slot_kb=SLOT_KB,
                                stage07_slots=STAGE07_SLOTS, step2_lr_buffers=kLrBuffers, target=TARGET,
                                flux_source=FLUX_SOURCE, worklog_shapes_source=WORKLOG_SOURCE),
                resources=dict(stage07=resources(0), step1=resources(kLrColumns),
                               step2=resources(kLrColumns, kLrBuffers)),
                shapes=results,
                measured=dict(source=WORKLOG, rows=meas, ncu_us=dict(WORKLOG_NCU_US, shape=list(WORKLOG_NCU_US["shape"])),
                              ncu_pipe=WORKLOG_NCU_PIPE, loaded_dram_latency_h100=LOADED_DRAM_LATENCY_H100))


def rewrite(text, body, begin, end):
    """text with body between its markers begin / end, or None where it lacks them."""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{begin}\n{body}{end}", text)


# --- Checks ----------------------------------------------------------------------------------------------------------
GEMM_CONSTANTS = {"gemm::kSfVector": 16, "gemm::kSfTileRows": 128, "gemm::kSfTileBytes": 512,
                  "gemm::kSwizzleRowBytes": 128}


def file_constants(path):
    """The file's `inline constexpr int|uint32_t NAME = EXPR;` constants whose expressions are integer arithmetic
    of numbers and earlier constants (others: None), and each declaration's trailing `// <number>` comment."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    values, comments = {}, {}
    for m in re.finditer(r"inline constexpr (?:int|uint32_t|uint16_t) ([^;]+);(?:[ \t]*//[ \t]*(\d+)\b)?", text):
        decls = re.split(r",\s*(?=k\w*\s*=)", m.group(1))
        for d in decls:
            name, _, expr = (p.strip() for p in d.partition("="))
            expr = " ".join(re.sub(r"//[^\n]*", "", expr).split())  # one line, no line comments
            for g, v in GEMM_CONSTANTS.items():
                expr = expr.replace(g, str(v))
            expr = re.sub(r"\b(?:int|uint32_t)\(", "(", expr)
            expr = re.sub(r"\b(k\w+)\b", lambda t: str(values[t.group(1)]) if values.get(t.group(1)) is not None
                          else t.group(0), expr)
            values[name] = eval(expr.replace("/", "//")) if re.fullmatch(r"[\d\s+\-*/()]+", expr) else None
        if m.group(2):
            comments[re.split(r"\s*=", decls[-1])[0].strip()] = int(m.group(2))
    return values, comments, text


def checks(results, meas):
    bad = []

    def expect(ok, what):
        if not ok:
            bad.append(what)

    eps = 1e-9
    expect(F16_DENSE_FLOPS == base.NVFP4_DENSE_FLOPS / 4, "the kind::f16 rate is not a quarter of the NVFP4 rate")
    expect((kBM, kBN, kMmaK, kTileK) == (base.PAIR_M, base.STAGE06_BN, base.MMA_K, base.TILE_K),
           "step 1's tile, MMA K or k-tile is not docs/b200_model.py's stage 07's")
    # The method with R = 0 and stage 07's bytes is docs/b200_model.py's stage 06/07.
    for shape in base.SHAPES + [(300, 5000, 4096), (257, 129, 96), (4096, 4096, 1000)] + [x[1:4] for x in SHAPES]:
        mine = persistent(*shape, 0, base.min_bytes(*shape), base.tile_bytes)
        theirs = base.model(*shape)["stages"]["07"]
        for f in ("tiles", "waves", "pairs_busy", "t_tensor", "t_dram", "t_dram_no_reuse", "executed_flops", "bound"):
            expect(abs(mine[f] - theirs[f]) <= eps * abs(theirs[f]),
                   f"{shape}: with R = 0 the method's {f} {mine[f]} != docs/b200_model.py's stage 07 {theirs[f]}")
    for x in results:
        w = f"{shape_text(x)} R = {x['R']}"
        s, light = x["step1"], x["sol"]
        expect(x["R"] % kLrMmaK == 0 and x["R"] > 0, f"{w}: R is not a positive multiple of 16 (the kind's rule)")
        expect(s["bound"] >= light["t"] * (1 - eps), f"{w}: bound below SOL")
        expect(s["t_tensor"] >= light["t_tensor"] * (1 - eps), f"{w}: T_tensor below the tensor SOL")
        expect(s["t_dram"] >= light["t_dram"] * (1 - eps), f"{w}: T_dram below the DRAM SOL")
        expect(s["bytes_no_reuse"] >= x["min_bytes"], f"{w}: no-reuse bytes below min bytes")
        expect(s["bound"] >= x["stage07"]["bound"] * (1 - eps), f"{w}: step 1's bound below stage 07's")
        expect(0 < s["pairs_busy"] <= 1, f"{w}: pairs busy outside (0, 1]")
        expect((s["tiles"], s["waves"]) == (x["stage07"]["tiles"], x["stage07"]["waves"]),
               f"{w}: tiles or rounds differ from stage 07's")
        expect(s["epilogue_c_over_nvfp4_mma"] <= 1, f"{w}: a tile's C takes longer than the next tile's NVFP4 MMAs "
               "at the pair's share of the bandwidth: the epilogue is not hidden, and the model lacks the term")
        expect(abs(s["t_tensor_lowrank"] / s["t_tensor_nvfp4"] - 4 * round_up(x["R"], 16) / round_up(x["K"], 64))
               <= eps, f"{w}: the low-rank MMA time is not 4R/K of the NVFP4 MMA time")
        expect(x["overhead"] <= x["floor_4r_over_k"] * (1 + eps) or x["K"] % kMmaK,
               f"{w}: the overhead exceeds 4R/K although the bound adds only the low-rank MMAs and bytes")
        expect(s["bound"] <= model(x["layer"], x["M"], x["N"], x["K"], x["R"], False, HBM_BYTES_PER_S_ALT)["step1"]
               ["bound"] * (1 + eps), f"{w}: a lower bandwidth lowered the bound")
        expect(abs(s["tflops"] * 1e12 * s["bound"] - x["flops"]) <= 1e-6 * x["flops"], f"{w}: TFLOP/s != FLOPs / bound")
        # Step 2: step 1's bound plus the waits on lr_empty, one per unit a pair runs after its first.
        s2 = x["step2"]
        expect(s["lr_empty_exposed_per_unit"] == 0, f"{w}: step 1's wait on lr_empty is exposed, and its bound "
               "lacks the term")
        expect(s2["bound"] >= s["bound"] * (1 - eps), f"{w}: step 2's bound below step 1's")
        expect(s2["lr_empty_waits"] == s["waves"] - 1 == s2["units_per_pair"] - 1, f"{w}: step 2's waits are not "
               "the rounds less one")
        expect(abs(s2["t_tensor"] - s["t_tensor"] - s2["lr_empty_waits"] * s2["exposed_per_unit"]) <= eps * s2["t_tensor"]
               and s2["exposed_per_unit"] == max(0.0, s2["t_epilogue_hold"] - s2["t_first_ktile"]),
               f"{w}: step 2's T_tensor is not step 1's plus the exposed epilogue")
        expect(s["waves"] > 1 or abs(s2["bound"] - s["bound"]) <= eps * s["bound"],
               f"{w}: one round, yet step 2's bound differs from step 1's")
        expect(abs(s2["overhead"] - (s2["bound"] / x["stage07"]["bound"] - 1)) <= eps, f"{w}: step 2's overhead")
        expect(s2["bound"] <= model(x["layer"], x["M"], x["N"], x["K"], x["R"], False, HBM_BYTES_PER_S_ALT)["step2"]
               ["bound"] * (1 + eps), f"{w}: a lower bandwidth lowered step 2's bound")
        expect(abs(s2["tflops"] * 1e12 * s2["bound"] - x["flops"]) <= 1e-6 * x["flops"],
               f"{w}: step 2's TFLOP/s != FLOPs / bound")
    # The kernel's tiling.
    if not KERNEL.exists():
        bad.append(f"{KERNEL.relative_to(ROOT)} is missing: nothing to compare the tiling with")
    else:
        values, comments, text = file_constants(KERNEL)
        for name, want in KERNEL_CONSTANTS.items():
            expect(values.get(name) == want, f"{name}: the model has {want}, kernel.cuh {values.get(name)}")
        expect(comments.get("kSlots") == kSlots == resources(kLrColumns)["slots"],
               f"kSlots: kernel.cuh's comment {comments.get('kSlots')}, the model {kSlots}, recomputed "
               f"{resources(kLrColumns)['slots']}")
        expect(values.get("kSlotsByTmem") == resources(kLrColumns)["slots_by_tmem"], "slots by TMEM differ")
        expect(values.get("kFixedBytes") == 1024 + 1024 + kStaticSmemMargin + kEpilogueWarps * kStagingBuffers
               * kStagingBytes, "kFixedBytes is not the model's (barriers, alignment, margin, staging)")
        expect(re.search(rf"One slot of the ring: everything one k-tile needs\. {SLOT_KB} KB", text) is not None,
               f"kernel.cuh's slot is not {SLOT_KB} KB")
        expect(values.get("kLrTmaBytes") == kLrTmaBytes and kLrTmaBytes == (kBM // kCtaGroup) * 128 + (kBN // kCtaGroup)
               * 128, "a low-rank k-tile is not 128 rows of lora_act and 64 of lora_up, 128 bytes each")
        expect("(sched.R - lt * kLrTileR) / kLrMmaK" in text, "kernel.cuh does not issue R / 16 kind::f16 MMAs per tile")
        expect(re.search(r"for \(int kt = 0; kt < k_tiles; \+\+kt, \+\+it\) produce\(.*\n\s*for \(int lt = 0; "
                         r"lt < sched\.lr_tiles; \+\+lt, \+\+it\) produce_low_rank", text) is not None,
               "kernel.cuh does not load the low-rank k-tiles after the NVFP4 ones through the same ring")
    # Step 2's kernel: the same tiling, two low-rank buffers of one CTA's share, the ring of 4 slots, lr_begin, and
    # the wait on lr_empty inside the K loop, after the NVFP4 k-tile that low-rank k-tile 0 follows.
    if not KERNEL2.exists():
        bad.append(f"{KERNEL2.relative_to(ROOT)} is missing: nothing to compare step 2 with")
    else:
        values2, comments2, text2 = file_constants(KERNEL2)
        r2 = resources(kLrColumns, kLrBuffers)
        for name, want in KERNEL_CONSTANTS.items():
            expect(values2.get(name) == want, f"{name}: the model has {want}, kernel_interleaved.cuh "
                   f"{values2.get(name)}")
        expect(values2.get("kLrBuffers") == kLrBuffers == 2,
               f"kLrBuffers: the model has {kLrBuffers}, kernel_interleaved.cuh {values2.get('kLrBuffers')}")
        expect(comments2.get("kSlots") == kSlots == r2["slots"] == 4,
               f"step 2's kSlots: kernel_interleaved.cuh's comment {comments2.get('kSlots')}, the model {kSlots}, "
               f"recomputed {r2['slots']}; the model keeps step 1's 4")
        expect(values2.get("kSlotsByTmem") == r2["slots_by_tmem"] and r2["slots_by_smem"] == 5,
               "step 2: slots by TMEM differ, or shared memory no longer holds 5 slots beside the low-rank buffers")
        expect(values2.get("kFixedBytes") == 1024 + 1024 + kStaticSmemMargin + kEpilogueWarps * kStagingBuffers
               * kStagingBytes, "kernel_interleaved.cuh's kFixedBytes is not the model's")
        expect(re.search(rf"One slot of the ring: everything one k-tile needs\. {SLOT_KB} KB", text2) is not None,
               f"kernel_interleaved.cuh's slot is not {SLOT_KB} KB")
        # sizeof(LowRankBuffers) = kLrTmaBytes: rows of lora_act and lora_up (kBM / 2 + kBN / 2) x 128 bytes, held to
        # kLrTmaBytes by the type's static_assert; both arrays multiples of 1024 bytes, so no padding.
        expect("using LowRankBuffers = LowRankBuffersOf<kBM / kCtaGroup, kBN / kCtaGroup>;" in text2
               and "static_assert((kActRows + kUpRows) * kPackedRowBytes == kLrTmaBytes," in text2
               and ((kBM + kBN) // kCtaGroup) * 128 == kLrTmaBytes and (kBN // kCtaGroup) * 128 % 1024 == 0,
               "a low-rank buffer of kernel_interleaved.cuh is not one CTA's share, kLrTmaBytes")
        expect(re.search(r"kSlotsBySmem =\s*\(kSmemPerBlock - kFixedBytes - kLrBuffers \* int\(sizeof\(LowRankBuffers\)\)\)"
                         r" / int\(sizeof\(Slot\)\);", text2) is not None,
               "kernel_interleaved.cuh's slots by shared memory are not the model's formula")
        expect("{ return (kt * lr_tiles + k_tiles - 1) / k_tiles; }" in text2, "kernel_interleaved.cuh's lr_begin "
               "is not the model's")
        mma = text2.find("ptx::tcgen05_mma_nvfp4_warp<kCtaGroup>")
        wait = text2.find("if (lt == 0 && nth > 0) ptx::mbarrier_wait(&s.lr_empty, (nth - 1) & 1")
        done = text2.find("tcgen05_commit_multicast_warp<kCtaGroup>(&s.acc_full[acc]")
        loop = text2.find("for (int lt = lr_begin(kt, k_tiles, sched.lr_tiles); lt < lr_begin(kt + 1, k_tiles, "
                          "sched.lr_tiles); ++lt, ++lit) {")
        expect(0 <= mma < loop < wait < done, "kernel_interleaved.cuh does not wait on lr_empty before low-rank "
               "k-tile 0, inside the K loop after the NVFP4 k-tile's MMAs")
        store = text2.rfind("tma_store_sub_tile<Out>(s.staging")
        arrive = text2.find("ptx::mbarrier_arrive_cluster(&s.lr_empty, 0)")
        expect(0 <= store < arrive, "kernel_interleaved.cuh's epilogue does not release lr_empty after its stores")
    if not KERNEL07.exists():
        bad.append(f"{KERNEL07.relative_to(ROOT)} is missing")
    else:
        _, comments07, _ = file_constants(KERNEL07)
        expect(comments07.get("kSlots") == STAGE07_SLOTS == resources(0)["slots"],
               f"stage 07's kSlots: its comment {comments07.get('kSlots')}, the model {STAGE07_SLOTS}, recomputed "
               f"{resources(0)['slots']}")
    # The measured figures: none beats its bound; the transcription (TFLOP/s / 10 PF = MFU, to print precision).
    for x in meas:
        w = f"{x['who']} at {x['M']}x{x['N']}x{x['K']}"
        expect(x["tflops"] <= x["bound_tflops"], f"{w}: {x['tflops']} TFLOP/s beats its bound ({x['bound_name']}, "
               f"{x['bound_tflops']:.0f}): the model is wrong")
        expect(abs(x["tflops"] * 1e12 / WORKLOG_PEAK * 100 - x["mfu_pct"]) <= 0.051, f"{w}: TFLOP/s and MFU disagree")
    # Worked by hand: FLUX linear1, R = 32: 17 x 168 = 2856 tiles in 39 rounds; the NVFP4 MMAs of a tile take
    # 2 x 256 x 128 x 3072 / (2 x 9e15 / 148) s, the low-rank ones 2 x 256 x 128 x 32 / (2 x 2.25e15 / 148) s.
    x = next(x for x in results if (x["M"], x["N"], x["K"], x["R"]) == (4352, 21504, 3072, 32))
    expect(x["step1"]["tiles"] == 2856 and x["step1"]["waves"] == 39, "FLUX linear1: 2856 tiles, 39 rounds")
    t = 39 * (2 * 256 * 128 * 3072 / (2 * 9e15 / 148) + 2 * 256 * 128 * 32 / (2 * 2.25e15 / 148))
    expect(abs(x["step1"]["t_tensor"] - t) < 1e-15, "FLUX linear1 R = 32: T_tensor")
    expect(abs(x["floor_4r_over_k"] - 1 / 24) < 1e-15, "FLUX linear1 R = 32: 4R/K = 1/24")
    expect(x["min_bytes"] == base.min_bytes(4352, 21504, 3072) + 2 * 4352 * 32 + 2 * 21504 * 32 + 8 * 21504,
           "FLUX linear1 R = 32: min bytes")
    expect(lowrank_ktile_fill(32) == 0.5 and lowrank_ktile_fill(128) == 1 and lowrank_ktile_fill(80) == 0.25,
           "low-rank k-tile fill")
    # Step 2 at FLUX linear1, R = 32: 38 waits of 32768 B / (8e12 / 148 B/s) less 2 x 256 x 128 x 256 /
    # (2 x 9e15 / 148) s.
    hold, first = 32768 / (8e12 / 148), 2 * 256 * 128 * 256 / (2 * 9e15 / 148)
    expect(x["step2"]["lr_empty_waits"] == 38 and abs(x["step2"]["bound"] - (t + 38 * (hold - first))) < 1e-15,
           "FLUX linear1 R = 32: step 2's bound")
    expect(all(lr_begin(0, kt, lt) == 0 and lr_begin(1, kt, lt) >= 1 and lr_begin(kt, kt, lt) == lt
               and all(lr_begin(i, kt, lt) <= lr_begin(i + 1, kt, lt) for i in range(kt))
               for kt in range(1, 65) for lt in range(1, 17)),
           "lr_begin: low-rank k-tile 0 does not follow NVFP4 k-tile 0, or the spread misses a low-rank k-tile")
    expect(resources(kLrColumns, kLrBuffers)["slots"] == 4 and resources(kLrColumns, kLrBuffers)["tmem_columns"]
           == 512, "step 2: 4 slots, TMEM 256 + 128 + 128")
    expect((resources(0)["slots"], resources(kLrColumns)["slots"]) == (7, 4)
           and resources(kLrColumns)["tmem_columns"] == 256 + 128 + 4 * 32, "slots 7 -> 4; TMEM 256 + 128 + 128")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="consistency checks; change nothing")
    args = ap.parse_args()
    results = [model(*s) for s in SHAPES]
    meas = measured(results)
    targets = [(README, BEGIN, END, readme_block(results)), (PAGE, PAGE_BEGIN, PAGE_END, page_block(results, meas))]
    doc = json.dumps(document(results, meas), indent=1) + "\n"

    if args.check:
        failures = checks(results, meas)
        if not JSON_OUT.exists() or not base.same_document(json.loads(JSON_OUT.read_text()), json.loads(doc)):
            failures.append(f"{JSON_OUT.relative_to(ROOT)} is not current: run python3 docs/b200_model_svdquant.py")
        for path, begin, end, body in targets:
            text = path.read_text() if path.exists() else ""
            if rewrite(text, body, begin, end) != text:
                failures.append(f"the block between {begin} / {end} in {path.relative_to(ROOT)} is missing or not "
                                "current: run python3 docs/b200_model_svdquant.py")
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        print(f"checked {len(results)} shapes: every bound >= SOL and >= stage 07's, the method with R = 0 is "
              "docs/b200_model.py's stage 07 bound, step 2's bound >= step 1's, the tiling is 12_svdquant/kernel.cuh's "
              "and kernel_interleaved.cuh's (and stage 07's slots "
              f"07_epilogue_tma/kernel.cuh's), {len(meas)} measured figures within their bounds, hand-worked values; "
              f"committed JSON, {README.relative_to(ROOT)} and {PAGE.relative_to(ROOT)} are current")
        return 0

    print(targets[1][3], end="")
    JSON_OUT.write_text(doc)
    print("wrote", JSON_OUT.relative_to(ROOT))
    status = 0
    for path, begin, end, body in targets:
        text = path.read_text() if path.exists() else None
        if text is not None and path == README and begin not in text:
            text = text.rstrip("\n") + "\n\n" + README_SECTION + f"{begin}\n{end}\n"
        new = rewrite(text, body, begin, end) if text is not None else None
        if new is None:
            print(f"{path.relative_to(ROOT)} lacks {begin} / {end}: not written")
            status = 1
        elif new != (path.read_text() if path.exists() else None):
            path.write_text(new)
            print("updated", path.relative_to(ROOT))
        else:
            print("unchanged", path.relative_to(ROOT))
    return status


if __name__ == "__main__":
    sys.exit(main())
