#!/usr/bin/env python3
"""A B200 MODEL of stage 05 (both steps: 05a one CTA, 05 the pair), stages 06/07 and stage 08: predicted lower
bounds on time per shape, from NVIDIA's published peak figures and each stage's tiling. Nothing here is
measured; no GPU is involved (docs/b200_model.md).

    python3 docs/b200_model.py          write docs/data/b200_model.json, docs/data/b200_model_gemv.json,
                                        docs/plots/b200_model.svg and the tables between <!-- model:begin -->
                                        / <!-- model:end --> (and the GEMV markers) in docs/b200_model.md;
                                        print the tables. The plot is drawn only with the matplotlib pinned in
                                        docs/requirements.txt (docs/plotting.py).
    python3 docs/b200_model.py --check  consistency checks (every bound >= SOL, busy fractions in (0, 1], the
                                        split count equals the kernel's rule, hand-worked values, tails),
                                        check that the committed JSON and tables are current, and that the
                                        committed plot is what the script draws; changes nothing.
                                        Exit code 1 on a failure, 77 (ctest's "skipped") when everything else
                                        passed but the plot could not be compared (matplotlib missing, or not
                                        the pinned version).

Importable: `model(M, N, K)` returns one shape's numbers for every stage.
"""
import argparse
import json
import math
import pathlib
import random
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import plotting  # noqa: E402  (docs/plotting.py: the pinned matplotlib, deterministic SVG, the stage colours)
import stages as stage_facts  # noqa: E402  (tools/stages.py, on the path through docs/plotting.py)

ROOT = pathlib.Path(__file__).resolve().parent.parent
JSON_OUT = ROOT / "docs" / "data" / "b200_model.json"
SVG_OUT = ROOT / "docs" / "plots" / "b200_model.svg"
MD_OUT = ROOT / "docs" / "b200_model.md"
BEGIN, END = "<!-- model:begin -->", "<!-- model:end -->"

# --- Published B200 figures: PEAK figures from NVIDIA's specifications, not measurements -------------------
# Dense NVFP4 tensor-core rate of one B200: NVIDIA's HGX B200 specification lists "FP4 Tensor Core 18 PFLOPS"
# per GPU with sparsity (144 PFLOPS for the 8 GPUs of an HGX B200; the same table gives 72 PFLOPS without
# sparsity), i.e. 9 PFLOP/s dense. https://www.nvidia.com/en-us/data-center/hgx/
NVFP4_DENSE_FLOPS = 9e15
# SMs of a B200, as CUDA reports them (cudaDeviceProp::multiProcessorCount). NVIDIA's HGX and DGX pages do not
# list SMs; 148 is the count of third-party databases and of common/device_info.h.
SMS = 148
# HBM3e bandwidth of one B200: 8 TB/s (DGX B200: 64 TB/s for its 8 GPUs, https://www.nvidia.com/en-us/data-center/dgx-b200/;
# the HGX page's earlier HGX B200 figure). The HGX page's current table lists 7.7 TB/s per HGX B200 GPU (62 TB/s
# per 8). A lower bound takes the larger of two published figures, so it holds for either;
# HBM_BYTES_PER_S_ALT is the other, for the sensitivity line of the tables.
HBM_BYTES_PER_S = 8e12
HBM_BYTES_PER_S_ALT = 7.7e12
PER_SM_FLOPS = NVFP4_DENSE_FLOPS / SMS  # an even share of the published rate per SM (an assumption)

FIGURES = {
    "nvfp4_dense_flops": dict(value=NVFP4_DENSE_FLOPS, what="dense NVFP4 tensor-core peak of one B200, FLOP/s",
                              source="NVIDIA HGX B200 specification (https://www.nvidia.com/en-us/data-center/hgx/): "
                                     "FP4 Tensor Core 18 PFLOPS per GPU with sparsity; 144 | 72 PFLOPS per 8 GPUs "
                                     "with | without sparsity"),
    "sms": dict(value=SMS, what="SMs of one B200",
                source="CUDA's multiProcessorCount on a B200, as third-party databases list it; not on NVIDIA's "
                       "HGX/DGX pages"),
    "hbm_bytes_per_s": dict(value=HBM_BYTES_PER_S, what="HBM3e bandwidth of one B200, bytes/s",
                            source="NVIDIA DGX B200 specification (64 TB/s per 8 GPUs); the HGX page's current "
                                   "HGX B200 column lists 7.7 TB/s per GPU (62 TB/s per 8): the larger is used"),
    "per_sm_flops": dict(value=PER_SM_FLOPS, what="nvfp4_dense_flops / sms: an even share per SM (assumed)",
                         source="derived"),
}

# --- Stage parameters: change them where the kernels change --------------------------------------------------
SMS_PER_PAIR = 2                  # cta_group::2: a CTA pair on two SMs issues one MMA
PAIRS = SMS // SMS_PER_PAIR       # 74 pairs resident at once, one CTA per SM
PAIR_M = 256                      # rows of C per pair: M of the instruction (128 per SM)
MMA_K = 64                        # values of k per kind::mxf4nvf4 MMA: stage 05's K is padded to it
TILE_K = 256                      # values of k per k-tile (one 128-byte swizzle row): stage 08's split unit
STAGE05_BN = 256                  # stage 05's launcher: BN = 256 (launch_bn<256>)
STAGE05A_BM, STAGE05A_BN = 128, 128  # stage 05's first step (kernel_1cta.cuh): one CTA, a 128 x 128 tile per SM
STAGE06_BN = 128                  # stages 06-08: BN = 128, two accumulator buffers in TMEM
STAGE08_MAX_SPLITS = 16           # stage 08 splits K into at most this many parts (kMaxSplits) ...
STAGE08_MIN_KTILES_PER_SPLIT = 2  # ... each at least this many k-tiles long (kMinKTilesPerSplit) ...
STAGE08_SPLIT_BELOW_PAIRS = True  # ... and only when there are fewer tiles than pairs
STAGE08_SPLIT_TIE = 0.01          # a larger s must lower the kernel's bound by more than this fraction (kTie)
ACC_BYTES = 4                     # FP32 partial sums of split-K
# Split-K partials: of the s splits of a tile, the s - 1 that do not arrive last each write an FP32 partial of
# their rows; the last keeps its own in registers and reads the s - 1 others (08_split_k/kernel.cuh).
# The bound counts those bytes at DRAM bandwidth (as the kernel's split choice does), and the tables also
# give the bound if they stayed in L2.
SF_VEC, SF_ROW_BLOCK, SF_COL_BLOCK = 16, 128, 4  # one E4M3 scale per 16 k; blocked layout pads rows/blocks

SHAPES = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048),
          (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)]
STAGES = ("05a", "05", "06", "08")  # stage 07 has the bounds of stage 06 (see STAGE07_NOTE)
SAME_BOUND = {"07": "06"}
# The keys are the steps' keys of tools/stages.py: 05a is stage 05's first step (one CTA, cta_group::1),
# benchmarked as the variant "05_tcgen05_1cta". Their names are the steps' kStage ids.


def step_name(key):
    st = next((st for s in stage_facts.read() for st in s.steps if st.key == key), None)
    return st.id if st and st.id else key


STAGE_NAMES = {k: ", ".join([step_name(k)] + [step_name(o) for o, same in SAME_BOUND.items() if same == k])
               for k in STAGES}
STAGE07_NOTE = ("Stage 07 has the bounds of stage 06: its TMA-store epilogue changes how C leaves the SM, not the "
                "bytes that cross DRAM nor the MMAs; both hide the epilogue behind the next tile's MMAs.")
TITLE = "B200 MODEL (predicted lower bounds from published peak figures; not measured)"


def ceil_div(a, b):
    return -(-a // b)


def round_up(a, b):
    return ceil_div(a, b) * b


def sf_bytes(rows, k):
    """Bytes of one operand's scales in the blocked layout: rows padded to 128, 16-value blocks to 4."""
    return round_up(rows, SF_ROW_BLOCK) * round_up(ceil_div(k, SF_VEC), SF_COL_BLOCK)


def flops(m, n, k):
    return 2 * m * n * k


def min_bytes(m, n, k):
    """The bytes that must cross DRAM at least: A, B packed E2M1, both scale arrays, C in FP16, once each."""
    return m * k // 2 + n * k // 2 + sf_bytes(m, k) + sf_bytes(n, k) + 2 * m * n


def extents(size, tile):
    """The valid rows (or columns) of each tile along one dimension."""
    return [min(tile, size - i * tile) for i in range(ceil_div(size, tile))]


def tile_bytes(rows, cols, k):
    """What one output tile loads and stores when nothing is shared with another pair through L2: its rows of
    A and SFA, its columns of B and SFB, its C. Rows past M are zero-filled by TMA and cost no DRAM bytes."""
    return rows * k // 2 + sf_bytes(rows, k) + cols * k // 2 + sf_bytes(cols, k) + 2 * rows * cols


def sol(m, n, k, bw=HBM_BYTES_PER_S):
    """Speed of light: the published tensor rate on the useful FLOPs, or the bandwidth on the min bytes."""
    t_tensor, t_dram = flops(m, n, k) / NVFP4_DENSE_FLOPS, min_bytes(m, n, k) / bw
    return dict(t_tensor=t_tensor, t_dram=t_dram, t=max(t_tensor, t_dram))


def stage05(m, n, k, bw=HBM_BYTES_PER_S, bm=PAIR_M, bn=STAGE05_BN, sms_per_tile=SMS_PER_PAIR):
    """Non-persistent: one bm x bn tile per pair (or, sms_per_tile = 1, per CTA: stage 05's first step), as many
    at a time as the SMs hold (waves); the epilogue follows the MMAs of each wave and is not overlapped."""
    concurrent = SMS // sms_per_tile
    rows, cols = extents(m, bm), extents(n, bn)
    tiles = len(rows) * len(cols)
    waves = ceil_div(tiles, concurrent)
    # The tensor cores of a pair (or of one SM) compute a whole bm x bn tile (rows past M are zeros they still
    # multiply), on sms_per_tile SMs, over K padded to the MMA's K.
    tile_time = 2 * bm * bn * round_up(k, MMA_K) / (sms_per_tile * PER_SM_FLOPS)
    t_tensor = waves * tile_time
    no_reuse = sum(tile_bytes(r, c, k) for r in rows for c in cols)
    # Epilogue: per wave, the largest tile's C at its SMs' share of the bandwidth (tiles in launch order:
    # pair or CTA p computes tile row p / tiles_n, column p % tiles_n).
    order = [(r, c) for r in rows for c in cols]
    tile_bw = sms_per_tile * bw / SMS
    t_epilogue = sum(max(2 * r * c for r, c in order[w * concurrent:(w + 1) * concurrent]) / tile_bw
                     for w in range(waves))
    t_dram = min_bytes(m, n, k) / bw
    bound = max(t_tensor, t_dram) + t_epilogue
    executed = tiles * 2 * bm * bn * round_up(k, MMA_K)
    # "pairs" count the tile's owners: CTA pairs, or single CTAs for the first step (concurrent = SMS).
    return dict(tiles=tiles, splits=1, units=tiles, waves=waves, concurrent=concurrent,
                pairs_launched=min(concurrent, tiles), pairs_busy=tiles / (waves * concurrent), executed_flops=executed,
                t_tensor=t_tensor, t_dram=t_dram, t_dram_no_reuse=no_reuse / bw, t_epilogue=t_epilogue,
                bytes=min_bytes(m, n, k), bytes_no_reuse=no_reuse, reduction_bytes=0, bound=bound,
                bound_partials_in_l2=bound)


def split_efficiency(tiles, s):
    """e(s) = pairs busy: the fraction of PAIRS x rounds unit slots that tiles x s units fill."""
    units = tiles * s
    return units / (ceil_div(units, PAIRS) * PAIRS)


def split_limit(k_tiles):
    """The largest s stage 08 considers: every K range keeps STAGE08_MIN_KTILES_PER_SPLIT k-tiles, s <= MAX."""
    return min(STAGE08_MAX_SPLITS, max(1, k_tiles // STAGE08_MIN_KTILES_PER_SPLIT))


def split_bound(s, tiles, k_tiles, mbytes, rows, cols):
    """The bound stage 08 minimises to choose s (bound_seconds in common/split_k.h), always with
    the published figures: waves x the longest unit's tensor time, against the min bytes plus (s - 1) FP32
    partials written and read for every tile, counted as rows x cols = min(M, 256) x min(N, 128) (a full tile's
    valid outputs) at DRAM bandwidth."""
    waves = ceil_div(tiles * s, PAIRS)
    tensor = waves * 2 * PAIR_M * STAGE06_BN * TILE_K * ceil_div(k_tiles, s) / (SMS_PER_PAIR * PER_SM_FLOPS)
    dram = (mbytes + (s - 1) * 2 * ACC_BYTES * rows * cols * tiles) / HBM_BYTES_PER_S
    return max(tensor, dram)


def choose_splits(m, n, k):
    """Stage 08's split-K rule (choose in common/split_k.h): with tiles >= PAIRS, 1; else the s in
    1..split_limit(k_tiles) with the smallest split_bound, walking s upwards and taking s only if it beats the
    best so far by more than STAGE08_SPLIT_TIE (ties go to the smaller s)."""
    tiles = ceil_div(m, PAIR_M) * ceil_div(n, STAGE06_BN)
    k_tiles = ceil_div(k, TILE_K)
    if STAGE08_SPLIT_BELOW_PAIRS and tiles >= PAIRS:
        return 1
    args = (tiles, k_tiles, min_bytes(m, n, k), min(m, PAIR_M), min(n, STAGE06_BN))
    best, best_t = 1, split_bound(1, *args)
    for s in range(2, split_limit(k_tiles) + 1):
        t = split_bound(s, *args)
        if t < (1 - STAGE08_SPLIT_TIE) * best_t:
            best, best_t = s, t
    return best


def longest_unit_k(k, s):
    """Values of k the longest of the s K ranges multiplies: split j takes k-tiles j*T/s .. (j+1)*T/s - 1
    (unit_at in the kernel; ceil(T/s) k-tiles at most), and the last k-tile stops at K padded to the MMA's K."""
    k_tiles = ceil_div(k, TILE_K)
    return max(min(((j + 1) * k_tiles // s) * TILE_K, round_up(k, MMA_K)) - (j * k_tiles // s) * TILE_K
               for j in range(s))


def reduction_bytes(rows, cols, s):
    """The bytes the kernel's split-K reduction moves (reduce_split_k in 08_split_k/kernel.cuh): s - 1 splits
    each write their partial, valid rows x all BN columns (neither cut at N), and the last split reads the s - 1
    partials the same way."""
    if s <= 1:
        return 0
    return (s - 1) * ACC_BYTES * sum(r * 2 * STAGE06_BN for r in rows for c in cols)


def stage06(m, n, k, bw=HBM_BYTES_PER_S, splits=1):
    """Persistent, warp-specialised, BN = STAGE06_BN: PAIRS pairs take units (a tile; from stage 08, one of its
    s parts of K) in rounds; the epilogue runs behind the next unit's MMAs. Stages 06 and 07 never split K."""
    bn = STAGE06_BN
    rows, cols = extents(m, PAIR_M), extents(n, bn)
    tiles = len(rows) * len(cols)
    s = splits
    units = tiles * s
    waves = ceil_div(units, PAIRS)
    unit_time = 2 * PAIR_M * bn * longest_unit_k(k, s) / (SMS_PER_PAIR * PER_SM_FLOPS)
    t_tensor = waves * unit_time
    reduction = reduction_bytes(rows, cols, s)
    no_reuse = sum(tile_bytes(r, c, k) for r in rows for c in cols) + reduction
    t_dram = (min_bytes(m, n, k) + reduction) / bw
    # Every unit's MMAs cover the whole 256 x BN tile; the last k-tile stops at K padded to the MMA's K.
    executed = tiles * 2 * PAIR_M * bn * round_up(k, MMA_K)
    return dict(tiles=tiles, splits=s, units=units, waves=waves, pairs_launched=min(PAIRS, units),
                pairs_busy=split_efficiency(tiles, s), executed_flops=executed,
                t_tensor=t_tensor, t_dram=t_dram, t_dram_no_reuse=no_reuse / bw, t_epilogue=0.0,
                bytes=min_bytes(m, n, k) + reduction, bytes_no_reuse=no_reuse, reduction_bytes=reduction,
                bound=max(t_tensor, t_dram), bound_partials_in_l2=max(t_tensor, min_bytes(m, n, k) / bw))


def stage08(m, n, k, bw=HBM_BYTES_PER_S, splits=None):
    """Stage 06's schedule with split-K: `splits` overrides the kernel's rule (choose_splits)."""
    return stage06(m, n, k, bw, splits=splits or choose_splits(m, n, k))


def model(m, n, k, bw=HBM_BYTES_PER_S):
    """One shape: its FLOPs, min bytes, SOL, and every stage's numbers (stage 07's are stage 06's)."""
    f = flops(m, n, k)
    light = sol(m, n, k, bw)
    stages = {"05a": stage05(m, n, k, bw, bm=STAGE05A_BM, bn=STAGE05A_BN, sms_per_tile=1),
              "05": stage05(m, n, k, bw), "06": stage06(m, n, k, bw), "08": stage08(m, n, k, bw)}
    for st in stages.values():
        st["useful_mma_fraction"] = f / st["executed_flops"]
        st["sms_busy"] = f / (SMS * PER_SM_FLOPS * st["t_tensor"])
        st["bound_over_sol"] = st["bound"] / light["t"]
        st["tflops"] = f / st["bound"] / 1e12
    for key, same in SAME_BOUND.items():
        stages[key] = dict(stages[same], same_as=same)
    return dict(M=m, N=n, K=k, L=1, flops=f, min_bytes=min_bytes(m, n, k), sol=dict(light, tflops=f / light["t"] / 1e12),
                stages=stages)


def fullest_split(m, n, k):
    """The s in 1..split_limit with the most pairs busy (the smallest such s): what filling the pairs would take."""
    tiles = ceil_div(m, PAIR_M) * ceil_div(n, STAGE06_BN)
    return max(range(1, split_limit(ceil_div(k, TILE_K)) + 1), key=lambda s: (split_efficiency(tiles, s), -s))


def l2_split(m, n, k):
    """The s the kernel's rule would choose if partials cost no DRAM bytes (the same walk and tie rule)."""
    k_tiles = ceil_div(k, TILE_K)
    if stage08(m, n, k)["tiles"] >= PAIRS and STAGE08_SPLIT_BELOW_PAIRS:
        return 1
    best, best_t = 1, stage08(m, n, k, splits=1)["bound_partials_in_l2"]
    for s in range(2, split_limit(k_tiles) + 1):
        t = stage08(m, n, k, splits=s)["bound_partials_in_l2"]
        if t < (1 - STAGE08_SPLIT_TIE) * best_t:
            best, best_t = s, t
    return best


def us(t):
    v = t * 1e6
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def shape_text(r):
    return f"{r['M']}x{r['N']}x{r['K']}"


def yes_no(ok):
    return "**yes**" if ok else "**no**"


PAIRS_BUSY_TARGET = 0.90   # "pairs busy >= 90%"
SOL_TARGET = 1.5           # "bound within 1.5x of SOL" ...
SOL_TARGET_M = 128         # ... at M = 128


def tables(results):
    """The Markdown written between the markers of docs/b200_model.md."""
    lines = [f"**{TITLE}.** Peak figures: {NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4, "
             f"{HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e, {SMS} SMs ({PER_SM_FLOPS / 1e12:.1f} TFLOP/s per SM); "
             f"{PAIRS} pairs. Times in microseconds. The lower bound counts split-K partials at DRAM bandwidth; "
             "the column after it counts them as staying in L2.", "",
             "| shape | stage | tiles | splits s | units | waves | pairs busy | useful MMA fraction | SMs busy (useful) | "
             "T_tensor | T_dram (min bytes + partials) | T_dram (no L2 reuse) | T_epilogue | lower bound | "
             "bound, partials in L2 | SOL | bound / SOL | predicted TFLOP/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for key in STAGES:
            st = r["stages"][key]
            l2 = us(st["bound_partials_in_l2"]) if key == "08" else "-"
            lines.append(f"| {shape_text(r)} | {STAGE_NAMES[key]} | {st['tiles']} | {st['splits']} | {st['units']} | "
                         f"{st['waves']} | {100 * st['pairs_busy']:.1f}% | {100 * st['useful_mma_fraction']:.0f}% | "
                         f"{100 * st['sms_busy']:.1f}% | {us(st['t_tensor'])} | {us(st['t_dram'])} | "
                         f"{us(st['t_dram_no_reuse'])} | {us(st['t_epilogue']) if st['t_epilogue'] else '-'} | "
                         f"**{us(st['bound'])}** | {l2} | {us(r['sol']['t'])} | {st['bound_over_sol']:.2f} | "
                         f"{st['tflops']:.0f} |")
    lines += ["", f"SOL in TFLOP/s: " + ", ".join(f"{shape_text(r)} {r['sol']['tflops']:.0f}" for r in results) + ".",
              "", STAGE07_NOTE, "",
              "Stage 08's split choice where there are fewer tiles than pairs: the kernel's s (the smallest bound with "
              "partials at DRAM bandwidth), the s that fills the pairs best, and the s the same rule would take if "
              "the partials stayed in L2; each with its bound (partials at DRAM | in L2):",
              "", "| shape | tiles | k-tiles | s tried | kernel's s | pairs busy | bound: DRAM \\| L2 | "
                  "fullest s | pairs busy | bound: DRAM \\| L2 | s if partials in L2 | bound: L2 |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        st = r["stages"]["08"]
        if st["tiles"] >= PAIRS and STAGE08_SPLIT_BELOW_PAIRS:
            continue
        m, n, k = r["M"], r["N"], r["K"]
        k_tiles = ceil_div(k, TILE_K)
        full = stage08(m, n, k, splits=fullest_split(m, n, k))
        l2 = stage08(m, n, k, splits=l2_split(m, n, k))
        lines.append(f"| {shape_text(r)} | {st['tiles']} | {k_tiles} | 1..{split_limit(k_tiles)} | {st['splits']} | "
                     f"{100 * st['pairs_busy']:.1f}% | {us(st['bound'])} \\| {us(st['bound_partials_in_l2'])} | "
                     f"{full['splits']} | {100 * full['pairs_busy']:.1f}% | {us(full['bound'])} \\| "
                     f"{us(full['bound_partials_in_l2'])} | {l2['splits']} | {us(l2['bound_partials_in_l2'])} |")
    lines += ["", f"Stage 08 (stage 06's schedule with split-K) against two targets: pairs busy >= {100 * PAIRS_BUSY_TARGET:.0f}%, and a bound within "
                  f"{SOL_TARGET:g}x of SOL at M = {SOL_TARGET_M} (the reasons are under \"Reading the tables\"):", "",
              f"| shape | bound set by | SOL set by | pairs busy | >= {100 * PAIRS_BUSY_TARGET:.0f}% | bound / SOL | "
              f"<= {SOL_TARGET:g}x at M = {SOL_TARGET_M} |", "|---|---|---|---|---|---|---|"]
    for r in results:
        st = r["stages"]["08"]
        sol_ok = (yes_no(st["bound_over_sol"] <= SOL_TARGET) if r["M"] == SOL_TARGET_M
                  else f"not a target (M = {r['M']})")
        lines.append(f"| {shape_text(r)} | {'tensor' if st['t_tensor'] >= st['t_dram'] else 'DRAM'} | "
                     f"{'tensor' if r['sol']['t_tensor'] >= r['sol']['t_dram'] else 'DRAM'} | "
                     f"{100 * st['pairs_busy']:.1f}% | {yes_no(st['pairs_busy'] >= PAIRS_BUSY_TARGET)} | "
                     f"{st['bound_over_sol']:.2f} | {sol_ok} |")
    worst = max(((model(r["M"], r["N"], r["K"], HBM_BYTES_PER_S_ALT)["stages"][key]["bound"] / r["stages"][key]["bound"],
                  shape_text(r), key) for r in results for key in STAGES))
    lines += ["", f"With {HBM_BYTES_PER_S_ALT / 1e12:g} TB/s instead of {HBM_BYTES_PER_S / 1e12:g} TB/s, the bounds rise "
                  f"by at most {100 * (worst[0] - 1):.1f}% ({worst[1]}, stage {worst[2]}); the split choice stays the "
                  "kernel's, which always uses the published 8 TB/s."]
    return "\n".join(lines) + "\n"


def document(results):
    """docs/data/b200_model.json: deterministic, so a regenerated file diffs cleanly."""
    return dict(model=TITLE, note="No GPU data: lower bounds predicted from published peak figures and each stage's "
                                  "tiling (docs/b200_model.md). Times in seconds.",
                figures=FIGURES,
                parameters=dict(sms_per_pair=SMS_PER_PAIR, pairs=PAIRS, pair_m=PAIR_M, mma_k=MMA_K, tile_k=TILE_K,
                                stage05_bn=STAGE05_BN, stage05a_bm=STAGE05A_BM,
                                stage05a_bn=STAGE05A_BN, stage06_bn=STAGE06_BN, stage08_max_splits=STAGE08_MAX_SPLITS,
                                stage08_min_ktiles_per_split=STAGE08_MIN_KTILES_PER_SPLIT,
                                stage08_split_below_pairs=STAGE08_SPLIT_BELOW_PAIRS, stage08_split_tie=STAGE08_SPLIT_TIE,
                                acc_bytes=ACC_BYTES),
                stage07=STAGE07_NOTE, shapes=results)


def plot(plt, results, path):
    """The predicted TFLOP/s of every modelled step per shape, in each stage's colour (docs/plotting.py)."""
    fig, ax = plt.subplots(figsize=(10, 6.2), layout="constrained")
    x = list(range(len(results)))
    style = {key: dict(plotting.stage_style(key)[0], ms=7) for key in STAGES}
    series = [(STAGE_NAMES["05a"] + " (stage 05, step 1: one CTA, 128x128)", "05a", "bound", style["05a"], -0.24),
              (STAGE_NAMES["05"] + " (stage 05, step 2: the pair, 256x256)", "05", "bound", style["05"], -0.12),
              (STAGE_NAMES["06"] + " (same bound)", "06", "bound", style["06"], 0.0),
              (STAGE_NAMES["08"] + " (split-K)", "08", "bound", style["08"], 0.12),
              (STAGE_NAMES["08"] + " with its s, if the split-K partials stayed in L2", "08", "bound_partials_in_l2",
               dict(style["08"], mfc="none", ms=11), 0.12)]  # hollow: the filled 08 shows inside where equal
    for label, key, which, st, dx in series:
        ax.plot([xi + dx for xi in x], [r["flops"] / r["stages"][key][which] / 1e12 for r in results], ls="none",
                label=label, **st)
    ax.plot([xi + 0.24 for xi in x], [r["sol"]["tflops"] for r in results], ls="none", marker="_", color="black",
            ms=16, mew=2.2, label="SOL: max(FLOPs / peak, min bytes / bandwidth)")
    ax.axhline(NVFP4_DENSE_FLOPS / 1e12, color="0.5", ls=":", lw=1,
               label=f"published dense NVFP4 peak, {NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s")
    ax.set_xticks(x, [shape_text(r) for r in results], fontsize=8.5, rotation=15)
    ax.set_xlim(-0.5, len(results) - 0.5)
    ax.set_xlabel("M x N x K (L = 1)")
    ax.set_yscale("log")
    ax.set_ylabel("predicted TFLOP/s = 2MNK / predicted lower bound (log)")
    ax.grid(alpha=0.3, which="both", axis="y")
    fig.legend(loc="outside lower center", ncol=2, fontsize=8.5, frameon=False)
    fig.suptitle(TITLE, fontsize=10.5, color="darkred")
    ax.set_title(f"MODEL, not measured: {NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4 and "
                 f"{HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e (NVIDIA's published peaks), {SMS} SMs; docs/b200_model.py",
                 fontsize=8, color="0.35")
    data = plotting.svg_bytes(fig, "drawn from docs/b200_model.py (no data: a model)")
    plt.close(fig)
    plotting.write_if_changed(path, data)
    return path


def rewrite_between_markers(text, body):
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{BEGIN}\n{body}{END}", text)


def check_shapes():
    """Tails and odd sizes besides SHAPES, for --check: fixed ones and a seeded random sample."""
    rng = random.Random(2024)
    extra = [(1, 1, 32), (257, 129, 96), (255, 7000, 4128), (300, 5000, 4096), (256 * 74, 128, 256), (130, 128, 512)]
    return (extra + [(rng.randint(1, 20000), rng.randint(1, 20000), 32 * rng.randint(1, 600)) for _ in range(200)]
            # fewer tiles than pairs: where stage 08 splits K
            + [(rng.randint(1, 600), rng.randint(1, 6000), 32 * rng.randint(1, 1200)) for _ in range(200)])


def kernel_choose_splits(M, N, K, pairs=PAIRS):
    """A line-by-line transcription of make_schedule() in 08_split_k/kernel.cuh and choose() / bound_seconds()
    in common/split_k.h (L = 1), kept apart from the model's own code so that --check compares the two."""
    kPairM, kBN, kTileK, kCtaGroup, kMaxSplits, kMinKTilesPerSplit = 256, 128, 256, 2, 16, 2
    kModelSmFlops, kModelDramBytesPerSecond = 9e15 / 148, 8e12
    tiles = ((M + kPairM - 1) // kPairM) * ((N + kBN - 1) // kBN)
    k_tiles = (K + kTileK - 1) // kTileK
    rows, cols = min(M, kPairM), min(N, kBN)
    sf = lambda r: ((r + 127) // 128 * 128) * (((K + 15) // 16 + 3) // 4 * 4)  # sf_batch_bytes
    mbytes = M * (K // 2) + N * (K // 2) + sf(M) + sf(N) + 2.0 * M * N     # gemm::min_bytes

    def bound(s):
        units = tiles * s
        waves = (units + pairs - 1) // pairs
        longest = (k_tiles + s - 1) // s
        tensor = waves * (2.0 * kPairM * kBN * kTileK * longest) / (kCtaGroup * kModelSmFlops)
        dram = (mbytes + (s - 1) * 2.0 * 4.0 * rows * cols * tiles) / kModelDramBytesPerSecond
        return tensor if tensor > dram else dram

    if tiles >= pairs:
        return 1
    limit = min(kMaxSplits, max(1, k_tiles // kMinKTilesPerSplit))
    best, best_t = 1, bound(1)
    for s in range(2, limit + 1):
        t = bound(s)
        if t < 0.99 * best_t:
            best, best_t = s, t
    return best


# What 08_split_k/kernel.cuh chooses at the benchmark shapes, (M, N, K) -> s, given 74 pairs.
KERNEL_SPLITS = {(128, 7168, 16384): 1, (128, 4096, 7168): 2, (128, 7168, 2048): 1}


def checks(results):
    """Internal consistency; returns the list of failures."""
    bad = []

    def expect(ok, what):
        if not ok:
            bad.append(what)

    eps = 1e-12
    for r in results + [model(*s) for s in check_shapes()]:
        where = shape_text(r)
        light = r["sol"]
        expect(light["t"] > 0, f"{where}: SOL not positive")
        for key in ("05a", "05", "06", "07", "08"):
            st = r["stages"][key]
            w = f"{where} stage {key}"
            expect(st["bound"] >= light["t"] * (1 - eps), f"{w}: bound {st['bound']} < SOL {light['t']}")
            expect(light["t"] * (1 - eps) <= st["bound_partials_in_l2"] <= st["bound"] * (1 + eps),
                   f"{w}: bound with partials in L2 outside [SOL, bound]")
            expect(st["t_tensor"] >= light["t_tensor"] * (1 - eps), f"{w}: T_tensor below the tensor SOL")
            expect(st["t_dram"] >= light["t_dram"] * (1 - eps), f"{w}: T_dram below the DRAM SOL")
            expect(st["bytes_no_reuse"] >= min_bytes(r["M"], r["N"], r["K"]), f"{w}: no-reuse bytes below min bytes")
            expect(0 < st["pairs_busy"] <= 1, f"{w}: pairs busy = {st['pairs_busy']} outside (0, 1]")
            expect(0 < st["useful_mma_fraction"] <= 1 + eps, f"{w}: useful MMA fraction outside (0, 1]")
            expect(0 < st["sms_busy"] <= 1 + eps, f"{w}: SMs busy = {st['sms_busy']} outside (0, 1]")
            # SMs busy = pairs busy x useful MMA fraction x (executed work / work the rounds' time allows) <= both.
            expect(st["sms_busy"] <= st["pairs_busy"] * st["useful_mma_fraction"] * (1 + 1e-9),
                   f"{w}: SMs busy above pairs busy x useful MMA fraction")
            expect(st["units"] == st["tiles"] * st["splits"], f"{w}: units != tiles x splits")
            slots = st.get("concurrent", PAIRS)
            expect(st["waves"] * slots >= st["units"] > (st["waves"] - 1) * slots, f"{w}: waves do not cover the units")
            expect(abs(st["tflops"] * 1e12 * st["bound"] - r["flops"]) <= 1e-6 * r["flops"], f"{w}: TFLOP/s != FLOPs / bound")
        for key in ("05a", "05"):
            s05 = r["stages"][key]
            expect(abs(s05["sms_busy"] - s05["pairs_busy"] * s05["useful_mma_fraction"]) <= 1e-9,
                   f"{where} stage {key}: SMs busy != pairs busy x useful MMA fraction")
        # A 128-row CTA tile wastes no MMA rows at M = 128 (a 256-row pair tile wastes half).
        if r["M"] == STAGE05A_BM and r["N"] % STAGE05A_BN == 0 and r["K"] % MMA_K == 0:
            expect(r["stages"]["05a"]["useful_mma_fraction"] == 1.0, f"{where} stage 05a: useful MMA fraction is not 1")
        expect(r["stages"]["06"]["splits"] == 1, f"{where}: stage 06 splits K")
        s06 = r["stages"]["08"]
        m, n, k = r["M"], r["N"], r["K"]
        k_tiles = ceil_div(k, TILE_K)
        expect(1 <= s06["splits"] <= split_limit(k_tiles), f"{where}: s out of range")
        expect(s06["splits"] == kernel_choose_splits(m, n, k),
               f"{where}: model's s = {s06['splits']}, the kernel's rule gives {kernel_choose_splits(m, n, k)}")
        if s06["tiles"] >= PAIRS:
            expect(s06["splits"] == 1, f"{where}: split although tiles >= pairs")
        # The kernel's choice minimises its own estimate up to the 1% tie rule.
        args = (s06["tiles"], k_tiles, min_bytes(m, n, k), min(m, PAIR_M), min(n, STAGE06_BN))
        if s06["tiles"] < PAIRS:
            best = min(split_bound(s, *args) for s in range(1, split_limit(k_tiles) + 1))
            expect(split_bound(s06["splits"], *args) <= best / (1 - STAGE08_SPLIT_TIE) * (1 + eps),
                   f"{where}: chosen s more than the tie margin above the smallest estimate")
        # For full tiles the kernel's estimate of the partials is the bytes the model counts.
        if m % PAIR_M == 0 or m <= PAIR_M:
            if n % STAGE06_BN == 0:
                est = (s06["splits"] - 1) * 2 * ACC_BYTES * min(m, PAIR_M) * min(n, STAGE06_BN) * s06["tiles"]
                expect(est == s06["reduction_bytes"], f"{where}: partial bytes {s06['reduction_bytes']} != estimate {est}")
        expect((s06["splits"] == 1) == (s06["reduction_bytes"] == 0), f"{where}: reduction bytes without a split")
        expect(abs(s06["bound_partials_in_l2"] - max(s06["t_tensor"], light["t_dram"])) <= eps,
               f"{where}: bound with partials in L2 is not max(T_tensor, min bytes / bandwidth)")
        expect(r["stages"]["07"]["bound"] == r["stages"]["06"]["bound"], f"{where}: stage 07 differs from stage 06")
        expect(s06["bound"] <= r["stages"]["06"]["bound"] * (1 + eps), f"{where}: split-K raises the bound")

    # The benchmark shapes: what the kernel gives.
    for (m, n, k), s in KERNEL_SPLITS.items():
        got = model(m, n, k)["stages"]["08"]
        expect(got["splits"] == s, f"{m}x{n}x{k}: model's s = {got['splits']}, the kernel gives {s}")
        expect(kernel_choose_splits(m, n, k) == s, f"{m}x{n}x{k}: transcribed kernel rule gives "
                                                   f"{kernel_choose_splits(m, n, k)}, the kernel gives {s}")
        expect(got["useful_mma_fraction"] == 0.5, f"{m}x{n}x{k}: useful MMA fraction at M = 128 is not 1/2")
    expect(model(128, 7168, 2048)["stages"]["06"]["pairs_launched"] == 56, "128x7168x2048: 56 units, 56 pairs launched")

    # Worked by hand, for the parameters above as first written (skipped once they change).
    if (SMS, PAIR_M, TILE_K, STAGE05_BN, STAGE06_BN, STAGE08_MAX_SPLITS) != (148, 256, 256, 256, 128, 16):
        return bad
    r = model(8192, 8192, 8192)
    expect(r["stages"]["05"]["tiles"] == 1024 and r["stages"]["05"]["waves"] == 14, "8192^3 stage 05: tiles, waves")
    expect(r["stages"]["05a"]["tiles"] == 4096 and r["stages"]["05a"]["waves"] == 28, "8192^3 stage 05a: tiles, waves")
    expect(abs(r["stages"]["05a"]["t_tensor"] - 28 * 2 * 128 * 128 * 8192 / (9e15 / 148)) < 1e-12,
           "8192^3 stage 05a: T_tensor")
    expect(abs(r["sol"]["t"] - 2 * 8192 ** 3 / 9e15) < 1e-12, "8192^3: SOL is not 2MNK / 9 PFLOP/s")
    r = model(128, 4096, 7168)
    st = r["stages"]["08"]
    expect(st["tiles"] == 32 and st["splits"] == 2 and st["units"] == 64 and st["waves"] == 1, "128x4096x7168: 64 units")
    expect(st["reduction_bytes"] == 32 * 128 * 128 * 4 * 2, "128x4096x7168: one partial written and read per tile")
    expect(abs(st["t_tensor"] - 2 * 256 * 128 * 256 * 14 / (2 * 9e15 / 148)) < 1e-15, "128x4096x7168: T_tensor")
    expect(abs(st["pairs_busy"] - 64 / 74) < 1e-15, "128x4096x7168: pairs busy 64/74")
    r = model(128, 7168, 16384)
    expect(r["min_bytes"] == 128 * 8192 + 7168 * 8192 + 128 * 1024 + 7168 * 1024 + 2 * 128 * 7168,
           "128x7168x16384: min bytes")
    expect(sf_bytes(1, 32) == 128 * 4 and sf_bytes(129, 80) == 256 * 8, "sf_bytes padding")
    expect(split_efficiency(56, 13) == 728 / 740, "e(13) for 56 tiles")
    expect(split_limit(28) == 14 and split_limit(1) == 1 and split_limit(64) == 16, "split limits")
    expect(longest_unit_k(16384, 1) == 16384 and longest_unit_k(32, 1) == 64 and longest_unit_k(7168, 3) == 10 * 256
           and longest_unit_k(1000, 2) == 512 and longest_unit_k(800, 2) == 512 and longest_unit_k(544, 3) == 256,
           "longest K range")
    # A tail: 300 x 200, both tile dimensions partial; writes and reads cover all 128 columns of valid rows.
    rows, cols = extents(300, PAIR_M), extents(200, STAGE06_BN)
    expect(reduction_bytes(rows, cols, 3) == 2 * 4 * (256 + 44) * 2 * (2 * 128), "reduction bytes of a tail")
    return bad


def same_document(a, b, rel=1e-9):
    """True when two JSON values are equal, floats to a relative tolerance."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_document(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_document(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)), 1e-300)
        except (TypeError, ValueError):
            return False
    return a == b


# --- Stage 09 (GEMV, N = 1): a MODEL from a Hopper measurement ---------------------------------------------
# Time = the bytes a GEMV must move / (B200 HBM bandwidth x f_stream x f_stage), where f_stream is the fraction
# of its DRAM peak that the streaming-read kernel reached on the Hopper GPU of docs/data/09_gemv.json and
# f_stage the fraction of that stream the stage reached, at the same shape, in the same run. Both are ASSUMED
# to carry over to a B200 (the B200 runs another code path: 32-byte loads and cvt.rn.f16x2.e2m1x2).
GEMV_DATA = ROOT / "docs" / "data" / "09_gemv.json"
GEMV_JSON_OUT = ROOT / "docs" / "data" / "b200_model_gemv.json"
GEMV_BEGIN, GEMV_END = "<!-- gemv-model:begin -->", "<!-- gemv-model:end -->"
# The GPU MODE NVFP4 GEMV problem (M, K, L): its speed of light (max of FFMA and DRAM time on a B200 at
# 1.5 GHz, as the competition published it) and the best public time, in microseconds.
GEMV_PUBLIC = {(7168, 16384, 1): (8.622, 18.4), (4096, 7168, 8): (17.275, 28.0), (7168, 2048, 4): (4.317, 12.6)}


def gemv_bytes(m, k, l):
    """gemv_min_bytes of common/gemm_api.h: A, its M*K/16 scales, the vector and its K/16 scales, C."""
    return l * (m * (k // 2) + m * (k // 16) + k // 2 + k // 16 + 2 * m)


def gemv_measured():
    """Per (M, K, L): (f_stream, f_stage) from the Hopper run, or None without data."""
    if not GEMV_DATA.exists():
        return None
    doc = json.loads(GEMV_DATA.read_text())
    peak = float(doc["context"]["dram_peak_gbps"])
    best, stage = {}, {}
    for b in doc["benchmarks"]:
        key = (int(b["M"]), int(b["K"]), int(b["L"]))
        if b.get("label") == "stream":
            best[key] = max(best.get(key, 0.0), float(b["GB/s"]))
        elif b.get("label") == "stage":
            stage[key] = float(b["GB/s"])
    return {k: (best[k] / peak, stage[k] / best[k]) for k in GEMV_PUBLIC if k in best and k in stage}, doc["context"]


def gemv_model():
    got = gemv_measured()
    if got is None:
        return None
    fractions, ctx = got
    rows = []
    for (m, k, l), (sol_pub, best_pub) in GEMV_PUBLIC.items():
        f_stream, f_stage = fractions[(m, k, l)]
        nbytes = gemv_bytes(m, k, l)
        rows.append(dict(M=m, K=k, L=l, bytes=nbytes, sol_us=nbytes / HBM_BYTES_PER_S * 1e6,
                         f_stream=f_stream, f_stage=f_stage,
                         model_us=nbytes / (HBM_BYTES_PER_S * f_stream * f_stage) * 1e6,
                         public_sol_us=sol_pub, best_public_us=best_pub))
    return dict(title="B200 MODEL of stage 09 (GEMV): Hopper-measured fractions applied to the B200's published "
                      "bandwidth; not measured", measured_on=ctx["gpu"], measured_commit=ctx["commit"],
                hbm_bytes_per_s=HBM_BYTES_PER_S, rows=rows)


def gemv_table(model_doc):
    lines = [f"MODEL, not a measurement: fractions measured on an {model_doc['measured_on']} "
             f"(docs/data/09_gemv.json, commit {model_doc['measured_commit']}), applied to the B200's "
             f"{model_doc['hbm_bytes_per_s'] / 1e12:.0f} TB/s.", "",
             "| M x K x L | bytes (MB) | SOL at 8 TB/s (us) | published SOL (us) | stream / peak (Hopper) | "
             "stage / stream (Hopper) | **model (us)** | best public (us) |", "|---|---|---|---|---|---|---|---|"]
    for r in model_doc["rows"]:
        lines.append(f"| {r['M']} x {r['K']} x {r['L']} | {r['bytes'] / 1e6:.1f} | {r['sol_us']:.2f} | "
                     f"{r['public_sol_us']:.3f} | {r['f_stream']:.3f} | {r['f_stage']:.3f} | **{r['model_us']:.1f}** | "
                     f"{r['best_public_us']:.1f} |")
    return "\n".join(lines) + "\n"


def gemv_outputs():
    """(json text, table) of the GEMV model, or None without stage 09 data."""
    m = gemv_model()
    return None if m is None else (json.dumps(m, indent=1) + "\n", gemv_table(m))


def rewrite_gemv(text, body):
    pattern = re.compile(re.escape(GEMV_BEGIN) + ".*?" + re.escape(GEMV_END), re.S)
    return pattern.sub(lambda _: f"{GEMV_BEGIN}\n{body}{GEMV_END}", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="consistency checks and a render into a temporary folder")
    args = ap.parse_args()
    results = [model(*s) for s in SHAPES]
    body = tables(results)
    doc = json.dumps(document(results), indent=1) + "\n"
    plt, why = plotting.pyplot()

    if args.check:
        failures = checks(results)
        # Compared as numbers, not as text: another Python or platform may print a float's last digit
        # differently, and that is not a stale file.
        if not JSON_OUT.exists() or not same_document(json.loads(JSON_OUT.read_text()), json.loads(doc)):
            failures.append(f"{JSON_OUT.relative_to(ROOT)} is not current: run python3 docs/b200_model.py")
        md = MD_OUT.read_text() if MD_OUT.exists() else ""
        if rewrite_between_markers(md, body) != md:
            failures.append(f"the tables in {MD_OUT.relative_to(ROOT)} are missing or not current: "
                            "run python3 docs/b200_model.py")
        gemv = gemv_outputs()
        if gemv is not None:
            gdoc = json.loads(gemv[0])
            for r in gdoc["rows"]:
                if not (r["model_us"] >= r["sol_us"] and 0 < r["f_stream"] <= 1.05 and 0 < r["f_stage"] <= 1.05):
                    failures.append(f"GEMV model row {r['M']}x{r['K']}x{r['L']}: below SOL or a fraction out of range")
            if not GEMV_JSON_OUT.exists() or not same_document(json.loads(GEMV_JSON_OUT.read_text()), gdoc):
                failures.append(f"{GEMV_JSON_OUT.relative_to(ROOT)} is not current: run python3 docs/b200_model.py")
            if GEMV_BEGIN not in md or rewrite_gemv(md, gemv[1]) != md:
                failures.append(f"the GEMV table in {MD_OUT.relative_to(ROOT)} is missing or not current")
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        summary = (f"checked {len(SHAPES)} shapes and {len(check_shapes())} more: every bound >= SOL, the split "
                   "count is the kernel's rule's, busy fractions in (0, 1]; outputs current")
        if plt is None or why:
            print(f"{summary}; SKIPPED: the plot was not compared: {why}")
            return 77
        with tempfile.TemporaryDirectory() as tmp:
            drawn = plot(plt, results, pathlib.Path(tmp) / SVG_OUT.name).read_bytes()
        if not SVG_OUT.exists() or SVG_OUT.read_bytes() != drawn:
            print(f"FAILED: {SVG_OUT.relative_to(ROOT)} is not what docs/b200_model.py draws now: run "
                  f"python3 docs/b200_model.py")
            return 1
        print(f"{summary}; the plot is what the script draws")
        return 0

    print(body, end="")
    JSON_OUT.write_text(doc)
    print("wrote", JSON_OUT.relative_to(ROOT))
    md = rewrite_between_markers(MD_OUT.read_text(), body) if MD_OUT.exists() else None
    if md is None:
        print(f"{MD_OUT.relative_to(ROOT)} lacks {BEGIN} / {END}: tables not written")
        return 1
    gemv = gemv_outputs()
    if gemv is not None:
        GEMV_JSON_OUT.write_text(gemv[0])
        print(gemv[1], end="")
        print("wrote", GEMV_JSON_OUT.relative_to(ROOT))
        if GEMV_BEGIN in md:
            md = rewrite_gemv(md, gemv[1])
        else:
            print(f"{MD_OUT.relative_to(ROOT)} lacks {GEMV_BEGIN} / {GEMV_END}: GEMV table not written")
    MD_OUT.write_text(md)
    print("updated", MD_OUT.relative_to(ROOT))
    if plt is None or why:
        print(f"the plot was not drawn: {why}")
        return 1
    SVG_OUT.parent.mkdir(parents=True, exist_ok=True)
    print("wrote", plot(plt, results, SVG_OUT).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
