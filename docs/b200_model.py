#!/usr/bin/env python3
"""A B200 MODEL of stages 05-07: predicted lower bounds on time per shape, from NVIDIA's published peak
figures and each stage's tiling. Nothing here is measured; no GPU is involved (docs/b200_model.md).

    python3 docs/b200_model.py          write docs/data/b200_model.json, docs/plots/b200_model.svg and the
                                        tables between <!-- model:begin --> / <!-- model:end --> in
                                        docs/b200_model.md; print the tables
    python3 docs/b200_model.py --check  consistency checks (every bound >= SOL, 0 < e(s) <= 1, hand-worked
                                        values, tails), render the plot into a temporary folder, and check
                                        that the committed JSON and tables are current; changes nothing.
                                        Exit code 1 on a failure, 77 (ctest's "skipped") when matplotlib is
                                        missing and everything else passed.

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
TILE_K = 256                      # values of k per k-tile (one 128-byte swizzle row): stage 06's split unit
STAGE05_BN = 256                  # stage 05's launcher: BN = 256 (launch_bn<256>)
STAGE06_BN = 128                  # stage 06: BN = 128, two accumulator buffers in TMEM
STAGE06_MAX_SPLITS = 16           # stage 06 splits K into at most this many parts ...
STAGE06_SPLIT_BELOW_PAIRS = True  # ... and only when there are fewer tiles than pairs
ACC_BYTES = 4                     # FP32 partial sums of split-K
# Split-K partials through DRAM: a reduction needs at least s - 1 of them (written, then read by the last
# split). 06_persistent_ws/kernel.cuh as first written has every split write its partial and the last read
# all s: set this to True to count those bytes instead of the floor.
STAGE06_ALL_SPLITS_WRITE = False
SF_VEC, SF_ROW_BLOCK, SF_COL_BLOCK = 16, 128, 4  # one E4M3 scale per 16 k; blocked layout pads rows/blocks

SHAPES = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048),
          (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)]
STAGES = ("05", "06")  # stage 07 has the bounds of stage 06 (see STAGE07_NOTE)
STAGE_NAMES = {"05": "05_tcgen05_2cta", "06": "06_persistent_ws, 07_epilogue_tma"}
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


def stage05(m, n, k, bw=HBM_BYTES_PER_S):
    """Non-persistent: one PAIR_M x BN tile per pair, PAIRS pairs at a time (waves); the epilogue follows the
    MMAs of each wave and is not overlapped."""
    bn = STAGE05_BN
    rows, cols = extents(m, PAIR_M), extents(n, bn)
    tiles = len(rows) * len(cols)
    waves = ceil_div(tiles, PAIRS)
    # The tensor core of a pair computes a whole PAIR_M x BN tile (rows past M are zeros it still multiplies),
    # on two SMs, over K padded to the MMA's K.
    tile_time = 2 * PAIR_M * bn * round_up(k, MMA_K) / (SMS_PER_PAIR * PER_SM_FLOPS)
    t_tensor = waves * tile_time
    no_reuse = sum(tile_bytes(r, c, k) for r in rows for c in cols)
    # Epilogue: per wave, the largest tile's C at the pair's share of the bandwidth (tiles in launch order:
    # pair p computes tile row p / tiles_n, column p % tiles_n).
    order = [(r, c) for r in rows for c in cols]
    pair_bw = SMS_PER_PAIR * bw / SMS
    t_epilogue = sum(max(2 * r * c for r, c in order[w * PAIRS:(w + 1) * PAIRS]) / pair_bw for w in range(waves))
    t_dram = min_bytes(m, n, k) / bw
    bound = max(t_tensor, t_dram) + t_epilogue
    return dict(tiles=tiles, splits=1, units=tiles, waves=waves, efficiency=tiles / (waves * PAIRS),
                t_tensor=t_tensor, t_dram=t_dram, t_dram_no_reuse=no_reuse / bw, t_epilogue=t_epilogue,
                bytes=min_bytes(m, n, k), bytes_no_reuse=no_reuse, reduction_bytes=0, bound=bound)


def split_efficiency(tiles, s):
    """e(s): the fraction of PAIRS x rounds unit slots that tiles x s units fill."""
    units = tiles * s
    return units / (ceil_div(units, PAIRS) * PAIRS)


def choose_splits(tiles, k_tiles):
    """Stage 06's split-K rule: with fewer tiles than pairs, the s in 1..min(k_tiles, MAX) with the largest e(s),
    the smallest such s on ties; else 1."""
    if STAGE06_SPLIT_BELOW_PAIRS and tiles >= PAIRS:
        return 1
    best = 1
    for s in range(1, min(k_tiles, STAGE06_MAX_SPLITS) + 1):
        if split_efficiency(tiles, s) > split_efficiency(tiles, best):
            best = s
    return best


def stage06(m, n, k, bw=HBM_BYTES_PER_S, splits=None):
    """Persistent, warp-specialised, BN = STAGE06_BN: PAIRS pairs take units (a tile, or one of its s parts of
    K) in rounds; the epilogue runs behind the next unit's MMAs. `splits` overrides the split rule."""
    bn = STAGE06_BN
    rows, cols = extents(m, PAIR_M), extents(n, bn)
    tiles = len(rows) * len(cols)
    k_tiles = ceil_div(k, TILE_K)
    s = splits or choose_splits(tiles, k_tiles)
    units = tiles * s
    waves = ceil_div(units, PAIRS)
    largest_split = ceil_div(k_tiles, s)  # k-tiles shared out as evenly as possible
    unit_time = 2 * PAIR_M * bn * largest_split * TILE_K / (SMS_PER_PAIR * PER_SM_FLOPS)
    t_tensor = waves * unit_time
    # Split-K: s - 1 parts write FP32 partials of the valid rows and columns, the last part reads them.
    partials = (s if STAGE06_ALL_SPLITS_WRITE else s - 1) if s > 1 else 0
    reduction = partials * 2 * ACC_BYTES * sum(r * c for r in rows for c in cols)
    no_reuse = sum(tile_bytes(r, c, k) for r in rows for c in cols) + reduction
    t_dram = (min_bytes(m, n, k) + reduction) / bw
    return dict(tiles=tiles, splits=s, units=units, waves=waves, efficiency=split_efficiency(tiles, s),
                t_tensor=t_tensor, t_dram=t_dram, t_dram_no_reuse=no_reuse / bw, t_epilogue=0.0,
                bytes=min_bytes(m, n, k) + reduction, bytes_no_reuse=no_reuse, reduction_bytes=reduction,
                bound=max(t_tensor, t_dram))


def model(m, n, k, bw=HBM_BYTES_PER_S):
    """One shape: its FLOPs, min bytes, SOL, and every stage's numbers (stage 07's are stage 06's)."""
    f = flops(m, n, k)
    light = sol(m, n, k, bw)
    stages = {"05": stage05(m, n, k, bw), "06": stage06(m, n, k, bw)}
    for st in stages.values():
        st["sms_busy"] = f / (SMS * PER_SM_FLOPS * st["t_tensor"])
        st["bound_over_sol"] = st["bound"] / light["t"]
        st["tflops"] = f / st["bound"] / 1e12
    stages["07"] = dict(stages["06"], same_as="06")
    return dict(M=m, N=n, K=k, L=1, flops=f, min_bytes=min_bytes(m, n, k), sol=dict(light, tflops=f / light["t"] / 1e12),
                stages=stages)


def best_split(m, n, k, bw=HBM_BYTES_PER_S):
    """The s in 1..min(k_tiles, MAX) with the smallest stage-06 bound: what the split rule could choose."""
    k_tiles = ceil_div(k, TILE_K)
    return min(range(1, min(k_tiles, STAGE06_MAX_SPLITS) + 1), key=lambda s: (stage06(m, n, k, bw, s)["bound"], s))


def us(t):
    v = t * 1e6
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def shape_text(r):
    return f"{r['M']}x{r['N']}x{r['K']}"


def tables(results):
    """The Markdown written between the markers of docs/b200_model.md."""
    lines = [f"**{TITLE}.** Peak figures: {NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4, "
             f"{HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e, {SMS} SMs ({PER_SM_FLOPS / 1e12:.1f} TFLOP/s per SM); "
             f"{PAIRS} pairs. Times in microseconds.", "",
             "| shape | stage | tiles | splits s | units | waves | SMs busy | T_tensor | T_dram (min bytes) | "
             "T_dram (no L2 reuse) | T_epilogue | lower bound | SOL | bound / SOL | predicted TFLOP/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for key in STAGES:
            st = r["stages"][key]
            lines.append(f"| {shape_text(r)} | {STAGE_NAMES[key]} | {st['tiles']} | {st['splits']} | {st['units']} | "
                         f"{st['waves']} | {100 * st['sms_busy']:.1f}% | {us(st['t_tensor'])} | {us(st['t_dram'])} | "
                         f"{us(st['t_dram_no_reuse'])} | {us(st['t_epilogue']) if st['t_epilogue'] else '-'} | "
                         f"**{us(st['bound'])}** | {us(r['sol']['t'])} | {st['bound_over_sol']:.2f} | "
                         f"{st['tflops']:.0f} |")
    lines += ["", f"SOL in TFLOP/s: " + ", ".join(f"{shape_text(r)} {r['sol']['tflops']:.0f}" for r in results) + ".",
              "", STAGE07_NOTE, "",
              "Where stage 06 splits K: its rule (largest e(s)) against the s with the smallest bound, and the bound "
              "if the FP32 partials stayed in L2 instead of crossing DRAM:",
              "", "| shape | tiles | k-tiles | s by e(s) | e(s) | bound | s by bound | e(s) | bound | "
                  "bound with s by e(s), partials in L2 |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        st = r["stages"]["06"]
        if st["tiles"] >= PAIRS and STAGE06_SPLIT_BELOW_PAIRS:
            continue
        s_best = best_split(r["M"], r["N"], r["K"])
        alt = stage06(r["M"], r["N"], r["K"], splits=s_best)
        lines.append(f"| {shape_text(r)} | {st['tiles']} | {ceil_div(r['K'], TILE_K)} | {st['splits']} | "
                     f"{st['efficiency']:.3f} | {us(st['bound'])} | {s_best} | {alt['efficiency']:.3f} | "
                     f"{us(alt['bound'])} | {us(max(st['t_tensor'], sol(r['M'], r['N'], r['K'])['t_dram']))} |")
    worst = max(((model(r["M"], r["N"], r["K"], HBM_BYTES_PER_S_ALT)["stages"][key]["bound"] / r["stages"][key]["bound"],
                  shape_text(r), key) for r in results for key in STAGES))
    lines += ["", f"With {HBM_BYTES_PER_S_ALT / 1e12:g} TB/s instead of {HBM_BYTES_PER_S / 1e12:g} TB/s, the bounds rise "
                  f"by at most {100 * (worst[0] - 1):.1f}% ({worst[1]}, stage {worst[2]})."]
    return "\n".join(lines) + "\n"


def document(results):
    """docs/data/b200_model.json: deterministic, so a regenerated file diffs cleanly."""
    return dict(model=TITLE, note="No GPU data: lower bounds predicted from published peak figures and each stage's "
                                  "tiling (docs/b200_model.md). Times in seconds.",
                figures=FIGURES,
                parameters=dict(sms_per_pair=SMS_PER_PAIR, pairs=PAIRS, pair_m=PAIR_M, mma_k=MMA_K, tile_k=TILE_K,
                                stage05_bn=STAGE05_BN, stage06_bn=STAGE06_BN, stage06_max_splits=STAGE06_MAX_SPLITS,
                                stage06_split_below_pairs=STAGE06_SPLIT_BELOW_PAIRS, acc_bytes=ACC_BYTES,
                                stage06_all_splits_write=STAGE06_ALL_SPLITS_WRITE),
                stage07=STAGE07_NOTE, shapes=results)


def plot(plt, results, path):
    fig, ax = plt.subplots(figsize=(9, 5.2))
    x = list(range(len(results)))
    series = [(STAGE_NAMES["05"], [r["stages"]["05"]["tflops"] for r in results], dict(marker="o", color="C0")),
              (STAGE_NAMES["06"] + " (same bound)", [r["stages"]["06"]["tflops"] for r in results],
               dict(marker="s", color="C1")),
              ("SOL: max(FLOPs / peak, min bytes / bandwidth)", [r["sol"]["tflops"] for r in results],
               dict(marker="_", color="black", markersize=18, mew=2))]
    for label, ys, style in series:
        ax.plot(x, ys, ls="none", label=label, **style)
    ax.axhline(NVFP4_DENSE_FLOPS / 1e12, color="0.5", ls=":", lw=1,
               label=f"published dense NVFP4 peak, {NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s")
    ax.set_xticks(x, [shape_text(r) for r in results], fontsize=8, rotation=15)
    ax.set_xlabel("M x N x K (L = 1)")
    ax.set_yscale("log")
    ax.set_ylabel("predicted TFLOP/s = 2MNK / predicted lower bound (log)")
    ax.grid(alpha=0.3, which="both", axis="y")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(TITLE, fontsize=10, color="darkred")
    fig.text(0.5, 0.005, f"MODEL, not measured: {NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4 and "
             f"{HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e (NVIDIA's published peaks), {SMS} SMs; docs/b200_model.py",
             ha="center", fontsize=7, color="0.35")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
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
    return extra + [(rng.randint(1, 20000), rng.randint(1, 20000), 32 * rng.randint(1, 600)) for _ in range(200)]


def checks(results):
    """Internal consistency; returns the list of failures."""
    bad = []

    def expect(ok, what):
        if not ok:
            bad.append(what)

    for r in results + [model(*s) for s in check_shapes()]:
        where = shape_text(r)
        light = r["sol"]
        expect(light["t"] > 0, f"{where}: SOL not positive")
        for key in ("05", "06", "07"):
            st = r["stages"][key]
            w = f"{where} stage {key}"
            expect(st["bound"] >= light["t"] * (1 - 1e-12), f"{w}: bound {st['bound']} < SOL {light['t']}")
            expect(st["t_tensor"] >= light["t_tensor"] * (1 - 1e-12), f"{w}: T_tensor below the tensor SOL")
            expect(st["t_dram"] >= light["t_dram"] * (1 - 1e-12), f"{w}: T_dram below the DRAM SOL")
            expect(st["bytes_no_reuse"] >= min_bytes(r["M"], r["N"], r["K"]), f"{w}: no-reuse bytes below min bytes")
            expect(0 < st["efficiency"] <= 1, f"{w}: e(s) = {st['efficiency']} outside (0, 1]")
            expect(0 < st["sms_busy"] <= 1 + 1e-12, f"{w}: SMs busy = {st['sms_busy']} outside (0, 1]")
            expect(st["units"] == st["tiles"] * st["splits"], f"{w}: units != tiles x splits")
            expect(st["waves"] * PAIRS >= st["units"] > (st["waves"] - 1) * PAIRS, f"{w}: waves do not cover the units")
            expect(abs(st["tflops"] * 1e12 * st["bound"] - r["flops"]) <= 1e-6 * r["flops"], f"{w}: TFLOP/s != FLOPs / bound")
        s06 = r["stages"]["06"]
        k_tiles = ceil_div(r["K"], TILE_K)
        expect(1 <= s06["splits"] <= max(1, min(k_tiles, STAGE06_MAX_SPLITS)), f"{where}: s out of range")
        if s06["tiles"] >= PAIRS:
            expect(s06["splits"] == 1, f"{where}: split although tiles >= pairs")
        else:
            es = [split_efficiency(s06["tiles"], s) for s in range(1, min(k_tiles, STAGE06_MAX_SPLITS) + 1)]
            expect(s06["splits"] == 1 + es.index(max(es)), f"{where}: s is not the first s of largest e(s)")
        expect((s06["splits"] == 1) == (s06["reduction_bytes"] == 0), f"{where}: reduction bytes without a split")
        expect(r["stages"]["07"]["bound"] == s06["bound"], f"{where}: stage 07 differs from stage 06")

    # Worked by hand, for the parameters above as first written (skipped once they change).
    if (SMS, PAIR_M, TILE_K, STAGE05_BN, STAGE06_BN, STAGE06_MAX_SPLITS) != (148, 256, 256, 256, 128, 16):
        return bad
    r = model(8192, 8192, 8192)
    expect(r["stages"]["05"]["tiles"] == 1024 and r["stages"]["05"]["waves"] == 14, "8192^3 stage 05: tiles, waves")
    expect(abs(r["sol"]["t"] - 2 * 8192 ** 3 / 9e15) < 1e-12, "8192^3: SOL is not 2MNK / 9 PFLOP/s")
    r = model(128, 7168, 16384)
    expect(r["stages"]["06"]["tiles"] == 56 and r["stages"]["06"]["splits"] == 13, "128x7168x16384 stage 06: tiles, s")
    expect(r["stages"]["06"]["waves"] == 10, "128x7168x16384 stage 06: 728 units in 10 rounds")
    expect(r["min_bytes"] == 128 * 8192 + 7168 * 8192 + 128 * 1024 + 7168 * 1024 + 2 * 128 * 7168,
           "128x7168x16384: min bytes")
    expect(sf_bytes(1, 32) == 128 * 4 and sf_bytes(129, 80) == 256 * 8, "sf_bytes padding")
    expect(split_efficiency(56, 13) == 728 / 740, "e(13) for 56 tiles")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="consistency checks and a render into a temporary folder")
    args = ap.parse_args()
    results = [model(*s) for s in SHAPES]
    body = tables(results)
    doc = json.dumps(document(results), indent=1) + "\n"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.rcParams["svg.hashsalt"] = "nvfp4-gemm"  # stable ids: regenerated plots diff cleanly
    except ImportError:
        plt = None

    if args.check:
        failures = checks(results)
        if not JSON_OUT.exists() or JSON_OUT.read_text() != doc:
            failures.append(f"{JSON_OUT.relative_to(ROOT)} is not current: run python3 docs/b200_model.py")
        md = MD_OUT.read_text() if MD_OUT.exists() else ""
        if rewrite_between_markers(md, body) != md:
            failures.append(f"the tables in {MD_OUT.relative_to(ROOT)} are missing or not current: "
                            "run python3 docs/b200_model.py")
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        if plt is None:
            print("matplotlib is not installed: the plot was not rendered (pip install matplotlib)")
            return 77
        with tempfile.TemporaryDirectory() as tmp:
            plot(plt, results, pathlib.Path(tmp) / SVG_OUT.name)
        print(f"checked {len(SHAPES)} shapes and {len(check_shapes())} more: every bound >= SOL, 0 < e(s) <= 1; "
              "outputs current; plot rendered")
        return 0

    print(body, end="")
    JSON_OUT.write_text(doc)
    print("wrote", JSON_OUT.relative_to(ROOT))
    md = rewrite_between_markers(MD_OUT.read_text(), body) if MD_OUT.exists() else None
    if md is None:
        print(f"{MD_OUT.relative_to(ROOT)} lacks {BEGIN} / {END}: tables not written")
        return 1
    MD_OUT.write_text(md)
    print("updated", MD_OUT.relative_to(ROOT))
    if plt is None:
        print("matplotlib is not installed: the plot was not drawn (pip install matplotlib)")
        return 1
    SVG_OUT.parent.mkdir(parents=True, exist_ok=True)
    print("wrote", plot(plt, results, SVG_OUT).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
