#!/usr/bin/env python3
"""A B200 MODEL of stage 10 (the NVFP4 group GEMM: many expert GEMMs in one persistent launch) at the four
benchmark cases of GPU MODE's nvfp4_group_gemm problem. Nothing here is measured; no GPU is involved.

    python3 docs/b200_model_group.py          write docs/data/b200_model_group.json and the table between
                                              <!-- group-model:begin --> / <!-- group-model:end --> in
                                              10_group_gemm/README.md (docs/b200_model_group.md where the README
                                              lacks the markers); print the table.
    python3 docs/b200_model_group.py --check  consistency checks (floor <= bound <= even-share bound, bytes
                                              attributed to units add up, the byte count reproduces the published
                                              SOL, the model's tile sizes and tiling are both kernels', the
                                              rasters, hand-worked values), and that the committed JSON and
                                              table are current; changes nothing. Exit code 1 on a failure.

Both built steps and two variants of step 2, each per case, each as a lower bound on GPU time plus, stated
apart, a per-call fixed cost:

  step 1  10_group_gemm/kernel_table.cuh: tokens on the MMA's M side (kBM = 256 rows per CTA pair), weights on
          its N side (kBN = 128 columns), one linear unit index over every group's tiles, unit u on pair u mod P.
  step 2  10_group_gemm/kernel.cuh, as built: the same tile sizes with the roles swapped: kBM = 256 WEIGHT rows
          on MMA_M, kBN = 128 TOKENS on MMA_N for every group (ceil(M_g / 128) token tiles, each a full
          256 x 128 MMA), the raster walking groups of kGroupM weight tiles token tile by token tile.
  variants of step 2, not built: the token tile chosen per group, as few tiles as MMA_N <= 256 allows (needs
          T up to 256: two accumulators plus the ring's scale columns do not fit in TMEM), and an even share
          per group capped at 128 (fits TMEM; needs the MMA's N per group).

The figures come from docs/b200_model.py (imported, not restated): 9 PFLOP/s dense NVFP4, 8 TB/s HBM3e, 148
SMs. The fixed cost is derived from gau-nernst's published B200 times (der.), never measured here.
"""
import argparse
import json
import math
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import b200_model as base  # noqa: E402  (docs/b200_model.py: the published figures and their conventions)

ROOT = pathlib.Path(__file__).resolve().parent.parent
JSON_OUT = ROOT / "docs" / "data" / "b200_model_group.json"
README = ROOT / "10_group_gemm" / "README.md"
PAGE = ROOT / "docs" / "b200_model_group.md"
KERNEL_STEP1 = ROOT / "10_group_gemm" / "kernel_table.cuh"  # step 1
KERNEL_STEP2 = ROOT / "10_group_gemm" / "kernel.cuh"        # step 2
BEGIN, END = "<!-- group-model:begin -->", "<!-- group-model:end -->"
TITLE = "B200 MODEL of stage 10 (predicted from published figures; not measured)"

NVFP4_DENSE_FLOPS = base.NVFP4_DENSE_FLOPS
SMS = base.SMS
HBM_BYTES_PER_S = base.HBM_BYTES_PER_S
HBM_BYTES_PER_S_ALT = base.HBM_BYTES_PER_S_ALT
PER_SM_FLOPS = base.PER_SM_FLOPS
PAIRS = base.PAIRS
sf_bytes, ceil_div, round_up = base.sf_bytes, base.ceil_div, base.round_up

# --- Published figures beyond docs/b200_model.py's -------------------------------------------------------------
GAU = "gau-nernst/gpu-mode-kernels"
GAU_GROUP_README = f"{GAU} nvidia/nvfp4_group_gemm/README.md @aee9cda"
# gau-nernst's "realistic SOL measurements" on the competition's B200: what a streaming read and a dense NVFP4
# GEMM reached there. Measured by a third party, not by this project.
MEASURED_BYTES_PER_S = 5914.80e9
MEASURED_NVFP4_FLOPS = 5797.05e12
# The competition's published speed of light per case, as gau-nernst's table lists it (geomean 5.211).
PUBLISHED_SOL_US = (18.833, 10.667, 2.406, 1.525)
# The best public honest time per case: gau-nernst v6b (geomean 13.11).
BEST_PUBLIC_US = (27.9, 19.4, 8.48, 6.43)
BEST_PUBLIC_GEOMEAN_US = 13.11
PUBLISHED_SOL_GEOMEAN_US = 5.211
# A CUTLASS persistent grouped kernel under `ncu --set full` showed a constant ~19.5 us "startup" (TMEM alloc,
# barrier init, tensor-map creation) whatever the tile count. ncu locks the clocks and replays, so it only bounds
# the fixed cost from above; too loose to use.
NCU_STARTUP_US = 19.5
# gau-nernst v5 -> v5e (first NUM_STAGES loads and last epilogue wave unrolled, among other prologue work):
# Q3 10.3 -> 8.71 us, Q4 8.4 -> 6.54 us. At least that much of v5's per-call cost was removable prologue.
V5_TO_V5E_US = {"Q3": (10.3, 8.71), "Q4": (8.4, 6.54)}

FIGURES = {key: base.FIGURES[key] for key in ("nvfp4_dense_flops", "sms", "hbm_bytes_per_s", "per_sm_flops")}
FIGURES.update({
    "measured_bytes_per_s": dict(value=MEASURED_BYTES_PER_S, what="streaming-read bandwidth gau-nernst measured on "
                                 "the competition's B200 ('realistic SOL'), bytes/s", source=f"{GAU} nvidia/README.md "
                                 "@aee9cda: 'Memory BW: 5914.80 GB/s'"),
    "measured_nvfp4_flops": dict(value=MEASURED_NVFP4_FLOPS, what="dense NVFP4 rate gau-nernst measured there, FLOP/s",
                                 source=f"{GAU} nvidia/README.md @aee9cda: 'nvfp4: 5797.05 TFLOPS'"),
    "published_sol_us": dict(value=list(PUBLISHED_SOL_US), what="GPU MODE's speed of light per case (Q1-Q4), us",
                             source=f"{GAU_GROUP_README}, row SOL (geomean {PUBLISHED_SOL_GEOMEAN_US})"),
    "best_public_us": dict(value=list(BEST_PUBLIC_US), what="best public honest B200 time per case: gau-nernst v6b, us",
                           source=f"{GAU_GROUP_README}, row v6b (geomean {BEST_PUBLIC_GEOMEAN_US})"),
    "ncu_startup_us": dict(value=NCU_STARTUP_US, what="constant 'startup' of a CUTLASS persistent grouped kernel "
                           "under ncu --set full: an upper bound (locked clocks, replay); not used",
                           source="GPU MODE news post on the nvfp4_group_gemm exploit, gpu-mode/kernelboard "
                                  "kernelboard/static/news/2026-03-09-reward-hacking.md @286bc8f"),
    "v5_to_v5e_us": dict(value={k: list(v) for k, v in V5_TO_V5E_US.items()}, what="gau-nernst v5 -> v5e times "
                         "(prologue and last epilogue wave unrolled), us", source=f"{GAU_GROUP_README}, rows v5, v5e"),
})

# --- The four cases: (G, M per group, N, K); L = 1, FP16 C, N and K shared by the groups of a case -----------
CASES = {
    "Q1": ((80, 176, 128, 72, 64, 248, 96, 160), 4096, 7168),
    "Q2": ((40, 76, 168, 72, 164, 148, 196, 160), 7168, 2048),
    "Q3": ((192, 320), 3072, 4096),
    "Q4": ((128, 384), 4096, 1536),
}

# --- Stage 10's parameters, spelled as in its two kernel files (--check compares them) -----------------------
# Both steps define the same constants with the same values; what differs is which operand fills which side.
kCtaGroup = 2    # a CTA pair issues one MMA
kBM = 256        # the pair's MMA_M: step 1 tokens (rows of C), step 2 weight rows (columns of C)
kBN = 128        # MMA_N: step 1 weight rows, step 2 tokens; two accumulators of kBN columns fit in TMEM
kTileK = 256     # values of k per k-tile
kMmaK = 64       # values of k per kind::mxf4nvf4 MMA
kGroupM = 8      # MMA_M tiles per rasterisation group inside a group (step 1: token tiles, step 2: weight tiles)
kAccBuffers = 2  # accumulators in TMEM: the epilogue of one unit hides behind the next unit's MMAs
RING_SLOTS = 7   # 28 KB per CTA per k-tile (A 16 KB, B 8 KB, SFA 2 KB, SFB 2 KB); not a term of the bound
MODEL_CONSTANTS = dict(kCtaGroup=kCtaGroup, kBM=kBM, kBN=kBN, kTileK=kTileK, kMmaK=kMmaK, kGroupM=kGroupM,
                       kAccBuffers=kAccBuffers)
# What each step tiles by (make_table's tiles_m = tokens, tiles_n = weights), and the MMA_M tiles its raster
# groups by kGroupM: step 1 token tiles (tiles_m), step 2 weight tiles (tiles_n).
MODEL_TILING = {"1": dict(tokens="kBM", weights="kBN", raster_over="tiles_n"),
                "2": dict(tokens="kBN", weights="kBM", raster_over="tiles_m")}

# --- Step 2 (built: 10_group_gemm/kernel.cuh): weights on MMA_M, tokens on MMA_N -----------------------------
STEP2_WEIGHT_TILE = kBM   # weight rows per pair (MMA_M of cta_group::2)
STEP2_TOKEN_TILE = kBN    # tokens per tile, the same for every group: every unit is a full 256 x 128 MMA
# --- Its variants (not built): the token tile T chosen per group ---------------------------------------------
MMA_N_STEP, MMA_N_MAX = 16, 256  # cta_group::2 kind::mxf4nvf4: N = 16..256 in steps of 16 (PTX ISA, Table 39)
# Two accumulators of T columns each and the scale columns of the ring share 512 TMEM columns: T = 256 leaves
# none for scales, T <= 128 leaves the 7 slots stage 10 has. The second variant caps T there.
STEP2_TMEM_CAP = 128
STEP_NAMES = {
    "1": "step 1 (10_group_gemm/kernel_table.cuh): tokens on MMA_M (256 per pair), weights on MMA_N (128)",
    "2": "step 2 as built (10_group_gemm/kernel.cuh): weights on MMA_M (256 per pair), a fixed token tile of 128 "
         "on MMA_N for every group",
    "2_per_group": "variant of step 2: per-group token tile (not built: needs T up to 256, which two accumulators "
                   "plus scale columns do not fit in TMEM): as few token tiles as MMA_N <= 256 allows, each the "
                   "smallest multiple of 16 covering an even share",
    "2_per_group_128": f"variant of step 2: per-group token tile capped at {STEP2_TMEM_CAP} (not built: fits TMEM, "
                       "needs the MMA's N chosen per group): an even share of the group's tokens per 128-token "
                       "tile, rounded up to a multiple of 16",
}


def transcribed_unit_at(tiles_m, tiles_n, t):
    """unit_at() of 10_group_gemm/kernel_table.cuh (step 1) inside one group, line by line: tile t of the group
    -> (token tile, weight tile). Groups of kGroupM token tiles, walked weight tile by weight tile."""
    first_m = t // (kGroupM * tiles_n) * kGroupM
    rows_in_group = min(tiles_m - first_m, kGroupM)
    in_group = t % (kGroupM * tiles_n)
    return first_m + in_group % rows_in_group, in_group // rows_in_group


def transcribed_unit_at_step2(tiles_m, tiles_n, t):
    """unit_at() of 10_group_gemm/kernel.cuh (step 2) inside one group, line by line: tile t of the group ->
    (token tile, weight tile); tiles_m counts token tiles, tiles_n weight tiles. Groups of kGroupM weight tiles,
    walked token tile by token tile: a weight tile's next token tile comes kGroupM units later."""
    first_n = t // (kGroupM * tiles_m) * kGroupM
    rows_in_group = min(tiles_n - first_n, kGroupM)
    in_group = t % (kGroupM * tiles_m)
    return in_group // rows_in_group, first_n + in_group % rows_in_group


def mma_time(m, n, k):
    """Tensor time of one MMA tile of a pair: m x n outputs over K padded to the MMA's K, at two SMs' share."""
    return 2 * m * n * round_up(k, kMmaK) / (kCtaGroup * PER_SM_FLOPS)


def group_dram_bytes(m, n, k):
    """What one group must move across DRAM at least: A and SFA (padded to the group's own 128 rows, as both steps
    load them: the padding rows are read, random as they are), B and SFB, C in FP16."""
    return dict(a=m * k // 2, sfa=sf_bytes(m, k) if m else 0, b=n * k // 2, sfb=sf_bytes(n, k), c=2 * m * n)


def step1_units(ms, n, k):
    """Step 1's units (kernel_table.cuh) in the order of its linear index: per unit its group, valid rows and
    columns, the tensor time of the whole 256 x 128 tile, the FLOPs executed and useful, the bytes it moves
    through the SMs' shared memory, and its share of the DRAM bytes.

    DRAM attribution: a unit's B columns (with their scales) are shared by the group's tile-rows, its A rows by the
    group's tile-columns; each unit carries its fraction, so the units' shares add up to the groups' bytes. Rows
    past M_g are zero-filled by TMA: they cost no DRAM bytes but still land in shared memory and are multiplied."""
    units = []
    k_pad = ceil_div(k, kTileK) * kTileK  # TMA moves whole k-tiles (zeros past K)
    for g, m in enumerate(ms):
        if m == 0:
            continue
        tiles_m, tiles_n = ceil_div(m, kBM), ceil_div(n, kBN)
        d = group_dram_bytes(m, n, k)
        for t in range(tiles_m * tiles_n):
            i, j = transcribed_unit_at(tiles_m, tiles_n, t)
            rows, cols = min(kBM, m - i * kBM), min(kBN, n - j * kBN)
            dram = ((d["b"] + d["sfb"]) * cols / n / tiles_m + (d["a"] + d["sfa"]) * rows / m / tiles_n
                    + 2 * rows * cols)
            # Shared memory: both CTAs' A boxes (128 rows each) and B halves, each CTA's SFA atom and the SFB atom
            # of all kBN rows in both CTAs (kernel_table.cuh: "every CTA holds the scales of all kBN rows of B").
            smem = (kBM * k_pad // 2 + kBN * k_pad // 2 + kBM * k_pad // 16 + kCtaGroup * kBN * k_pad // 16
                    + 2 * rows * cols)
            units.append(dict(group=g, rows=rows, cols=cols, t_mma=mma_time(kBM, kBN, k),
                              executed=2 * kBM * kBN * round_up(k, kMmaK), useful=2 * rows * cols * k,
                              dram=dram, smem=smem))
    return units


def token_tile(m, cap=MMA_N_MAX):
    """A variant's token tile of a group: as few tiles as MMA_N <= cap allows, each the smallest multiple of 16
    that covers an even share of the group's tokens (320 -> 2 x 160, not 256 + 64). Returns (tile, tiles)."""
    c = ceil_div(m, cap)
    return round_up(ceil_div(m, c), MMA_N_STEP), c


def built_token_tile(m):
    """Step 2 as built: kBN tokens per tile whatever the group (make_table: tiles_m = ceil(M_g / kBN))."""
    return STEP2_TOKEN_TILE, ceil_div(m, STEP2_TOKEN_TILE)


TOKEN_TILES = {"2": built_token_tile, "2_per_group": token_tile,
               "2_per_group_128": lambda m: token_tile(m, STEP2_TMEM_CAP)}


def step2_units(ms, n, k, tile_of=built_token_tile):
    """Step 2's units (as built, or a variant's with its own token tile): per group, ceil(N / 256) weight tiles x
    its token tiles, in the order of kernel.cuh's unit_at (groups of kGroupM weight tiles, token tile by token
    tile: a weight tile's second token tile reads its weights from L2). Every unit runs one MMA of 256 x T."""
    units = []
    k_pad = ceil_div(k, kTileK) * kTileK
    for g, m in enumerate(ms):
        if m == 0:
            continue
        t_tile, c = tile_of(m)
        tiles_w = ceil_div(n, STEP2_WEIGHT_TILE)
        d = group_dram_bytes(m, n, k)
        for u in range(c * tiles_w):
            t, w = transcribed_unit_at_step2(c, tiles_w, u)
            wrows, tokens = min(STEP2_WEIGHT_TILE, n - w * STEP2_WEIGHT_TILE), min(t_tile, m - t * t_tile)
            dram = ((d["b"] + d["sfb"]) * wrows / n / c + (d["a"] + d["sfa"]) * tokens / m / tiles_w
                    + 2 * wrows * tokens)
            # Each CTA: its 128 weight rows and their scales, half the token rows, the token scales of all T
            # rows in whole 128-row atoms (as SFB in step 1). Token columns past M_g are zero-filled by TMA: no
            # DRAM bytes, but they land in shared memory and are multiplied.
            smem = (STEP2_WEIGHT_TILE * k_pad // 2 + STEP2_WEIGHT_TILE * k_pad // 16 + t_tile * k_pad // 2
                    + kCtaGroup * round_up(t_tile, 128) * k_pad // 16 + 2 * wrows * tokens)
            units.append(dict(group=g, rows=tokens, cols=wrows, token_tile=t_tile,
                              t_mma=mma_time(STEP2_WEIGHT_TILE, t_tile, k),
                              executed=2 * STEP2_WEIGHT_TILE * t_tile * round_up(k, kMmaK),
                              useful=2 * wrows * tokens * k, dram=dram, smem=smem))
    return units


def by_pair(units):
    """The static schedule: unit u on pair u mod P, P = min(74, units) (the launcher launches no idle pair)."""
    p = min(PAIRS, len(units))
    return [units[i::p] for i in range(p)]


def waterfill(demands, bw):
    """Split bandwidth bw evenly among the pairs, giving none more than it can use (its demand): what a fair
    arbiter does. Returns each pair's allocation."""
    alloc, left, n = {}, bw, len(demands)
    for p, d in sorted(demands.items(), key=lambda kv: kv[1]):
        share = left / n
        alloc[p] = min(d, share)
        left -= alloc[p]
        n -= 1
    return alloc


def fair_share(pairs, bw):
    """GPU time of the schedule when HBM is one pool shared evenly by the pairs still running: a pair runs its
    units in order, each at the slower of its tensor time and its DRAM bytes at the pair's current share; a
    pair that needs less than its share (tensor-bound) or has finished leaves the rest to the others.

    Why a pool and not 74 fixed slices: a pair keeps up to RING_SLOTS k-tiles of loads in flight (56 KB per k-tile
    for the pair), so with a loaded DRAM latency near 1 us (932 ns on an H100: docs/data/dram_latency_probe_h100.txt)
    it can draw about 0.4 TB/s, several times an even 1/74 of 8 TB/s (0.108 TB/s). Returns (time, peak bandwidth one pair drew)."""
    pos = [0] * len(pairs)
    left = [1.0 if q else 0.0 for q in pairs]  # fraction of the current unit still to run
    t, peak = 0.0, 0.0
    while True:
        active = [p for p, q in enumerate(pairs) if pos[p] < len(q)]
        if not active:
            return t, peak
        demand = {p: pairs[p][pos[p]]["dram"] / pairs[p][pos[p]]["t_mma"] for p in active}
        alloc = waterfill(demand, bw)
        peak = max(peak, max(alloc.values()))
        rate = {p: min(1 / pairs[p][pos[p]]["t_mma"], alloc[p] / pairs[p][pos[p]]["dram"]) for p in active}
        dt = min(left[p] / rate[p] for p in active)
        t += dt
        for p in active:
            left[p] -= rate[p] * dt
            if left[p] <= 1e-12:
                pos[p] += 1
                left[p] = 1.0


def even_share(pairs, bw):
    """The same schedule with HBM cut into PAIRS fixed slices: per pair, the sum over its units of max(tensor
    time, bytes / (bw / 74)); the GPU time is the slowest pair. An idle pair's slice is lost, so this is above
    fair_share wherever the pairs' loads differ."""
    return max(sum(max(u["t_mma"], u["dram"] / (bw / PAIRS)) for u in q) for q in pairs)


def floor(pairs, bw):
    """What no arbitration can beat for this schedule: the busiest pair's tensor time, or all bytes at bw."""
    return max(max(sum(u["t_mma"] for u in q) for q in pairs), sum(u["dram"] for q in pairs for u in q) / bw)


def case_bytes(ms, n, k):
    return sum(sum(group_dram_bytes(m, n, k).values()) for m in ms if m)


def case_flops(ms, n, k):
    return sum(2 * m * n * k for m in ms)


def realistic_sol(ms, n, k):
    """The 'realistic SOL': the case's bytes at the 5.915 TB/s gau-nernst measured on the competition's B200."""
    return case_bytes(ms, n, k) / MEASURED_BYTES_PER_S


def fixed_cost():
    """The per-call fixed cost (launch, prologue, pipeline fill, the last unit's epilogue), derived (der.) from
    gau-nernst v6b: in every case the kernel moved its bytes no faster than the 5.915 TB/s measured on the same
    B200, so its time minus the realistic SOL is its fixed cost plus whatever else it lost. A cost that is the
    same in every case is therefore at most the smallest of the four gaps. Returns (that bound, the gaps)."""
    gaps = {q: best * 1e-6 - realistic_sol(*CASES[q]) for q, best in zip(CASES, BEST_PUBLIC_US)}
    return min(gaps.values()), gaps


def step(units, bw=HBM_BYTES_PER_S, flops=NVFP4_DENSE_FLOPS):
    """One step of one case: the schedule's numbers and its bounds (seconds)."""
    scale = NVFP4_DENSE_FLOPS / flops  # a lower tensor rate stretches every unit's tensor time alike
    units = [dict(u, t_mma=u["t_mma"] * scale) for u in units]
    pairs = by_pair(units)
    per_pair = [len(q) for q in pairs]
    executed, useful = sum(u["executed"] for u in units), sum(u["useful"] for u in units)
    bound, peak = fair_share(pairs, bw)
    return dict(units=len(units), pairs_launched=len(pairs), waves=max(per_pair),
                pairs_with_most_units=per_pair.count(max(per_pair)),
                executed_flops=executed, useful_flops=useful, mma_utilisation=useful / executed,
                dram_bytes=sum(u["dram"] for u in units), smem_bytes=sum(u["smem"] for u in units),
                t_tensor_busiest_pair=max(sum(u["t_mma"] for u in q) for q in pairs),
                dram_bytes_busiest_pair=max(sum(u["dram"] for u in q) for q in pairs),
                t_dram=sum(u["dram"] for u in units) / bw, floor=floor(pairs, bw), bound=bound,
                bound_even_share=even_share(pairs, bw), peak_pair_bytes_per_s=peak)


def model_case(name):
    ms, n, k = CASES[name]
    fixed, _ = fixed_cost()
    nbytes, f = case_bytes(ms, n, k), case_flops(ms, n, k)
    out = dict(case=name, G=len(ms), M=list(ms), N=n, K=k, bytes=nbytes, flops=f,
               roofline=max(nbytes / HBM_BYTES_PER_S, f / NVFP4_DENSE_FLOPS),
               realistic_sol=realistic_sol(ms, n, k),
               published_sol=PUBLISHED_SOL_US[list(CASES).index(name)] * 1e-6,
               best_public=BEST_PUBLIC_US[list(CASES).index(name)] * 1e-6, steps={})
    variants = {"1": step1_units(ms, n, k)}
    variants.update({key: step2_units(ms, n, k, tile_of) for key, tile_of in TOKEN_TILES.items()})
    for key, units in variants.items():
        st = dict(name=STEP_NAMES[key])
        if key in TOKEN_TILES:  # per group (tokens per tile, token tiles)
            st["token_tiles"] = [list(TOKEN_TILES[key](m)) if m else [0, 0] for m in ms]
        st.update(step(units))
        st["fixed_cost"] = fixed
        st["total"] = st["bound"] + fixed
        st["bound_alt_bw"] = step(units, bw=HBM_BYTES_PER_S_ALT)["bound"]
        st["bound_measured_ceilings"] = step(units, bw=MEASURED_BYTES_PER_S, flops=MEASURED_NVFP4_FLOPS)["bound"]
        st["total_measured_ceilings"] = st["bound_measured_ceilings"] + fixed
        out["steps"][key] = st
    return out


def geomean(xs):
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summary(results):
    g = lambda f: geomean(f(r) for r in results)  # noqa: E731
    out = dict(published_sol=g(lambda r: r["published_sol"]), realistic_sol=g(lambda r: r["realistic_sol"]),
               best_public=g(lambda r: r["best_public"]), roofline=g(lambda r: r["roofline"]))
    for key in results[0]["steps"]:
        for field in ("bound", "total", "total_measured_ceilings"):
            out[f"step{key}_{field}"] = g(lambda r: r["steps"][key][field])
    return out


def us(t, digits=None):
    v = t * 1e6
    if digits is not None:
        return f"{v:.{digits}f}"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def table(results, sums):
    fixed, gaps = fixed_cost()
    variant = "2_per_group"
    lines = [f"**{TITLE}.** Published peaks from [docs/b200_model.py](../docs/b200_model.py): "
             f"{NVFP4_DENSE_FLOPS / 1e15:g} PFLOP/s dense NVFP4 ({PER_SM_FLOPS / 1e12:.1f} TFLOP/s per SM), "
             f"{HBM_BYTES_PER_S / 1e12:g} TB/s HBM3e, {SMS} SMs = {PAIRS} pairs; the script is "
             "[docs/b200_model_group.py](../docs/b200_model_group.py). Step 1 is `kernel_table.cuh` and step 2 "
             "`kernel.cuh`, both as built: the same 256 x 128 tile, tokens on the MMA's M side in step 1 and "
             "on its N side in step 2 (a fixed token tile of 128 for every group). The variant is a step 2 not "
             "built: a per-group token tile (needs T up to 256, which two accumulators plus scale columns do not "
             "fit in TMEM). Each model cell is a lower bound on GPU time + the per-call fixed cost "
             f"({us(fixed)} us, der.: see below) = the model's total. Times in microseconds.", "",
             "| case | B200 model, step 1 (us): bound + fixed = total | B200 model, step 2 (us): bound + fixed = "
             "total | variant, per-group token tile, not built (us): bound + fixed = total | roofline at "
             "published peaks (us) | SOL, published (us) | realistic SOL: bytes at 5.915 TB/s (us) | best "
             "public, gau-nernst v6b (us) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        cells = [f"{us(st['bound'])} + {us(fixed)} = **{us(st['total'])}**"
                 for st in (r["steps"]["1"], r["steps"]["2"], r["steps"][variant])]
        lines.append(f"| {r['case']} (G {r['G']}, N {r['N']}, K {r['K']}) | " + " | ".join(cells) + " | "
                     f"{us(r['roofline'])} | {us(r['published_sol'], 3)} | {us(r['realistic_sol'])} | "
                     f"{us(r['best_public'])} |")
    lines.append("| geomean | " + " | ".join(f"bounds {us(sums[f'step{key}_bound'])}, totals "
                                             f"**{us(sums[f'step{key}_total'])}**" for key in ("1", "2", variant))
                 + f" | {us(sums['roofline'])} | {us(sums['published_sol'], 2)} | {us(sums['realistic_sol'])} | "
                 f"{us(sums['best_public'], 2)} |")
    names = {"1": "1", "2": "2", "2_per_group": "variant: per-group token tile (not built)",
             "2_per_group_128": f"variant: per-group token tile <= {STEP2_TMEM_CAP} (not built)"}
    lines += ["", "The schedule behind each bound (B200 model): units, the most units on one pair (waves) and how "
                  "many pairs have that many, the fraction of the executed MMA work that is useful, the bytes that "
                  "cross DRAM (every row: the same) and those that land in shared memory, the most DRAM bytes one "
                  "pair's units carry, the busiest pair's tensor time, the DRAM time of all bytes at 8 TB/s, and "
                  "the bound.", "",
              "| case | step | units | waves (pairs) | useful MMA | DRAM MB | shared-memory MB | one pair's most "
              "DRAM MB | busiest pair's tensor (us) | all bytes at 8 TB/s (us) | bound (us) |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for key, name in names.items():
            st = r["steps"][key]
            lines.append(f"| {r['case']} | {name} | {st['units']} | {st['waves']} ({st['pairs_with_most_units']}) | "
                         f"{100 * st['mma_utilisation']:.0f}% | {st['dram_bytes'] / 1e6:.1f} | "
                         f"{st['smem_bytes'] / 1e6:.1f} | {st['dram_bytes_busiest_pair'] / 1e6:.2f} | "
                         f"{us(st['t_tensor_busiest_pair'])} | {us(st['t_dram'])} | {us(st['bound'])} |")

    def tiles(key):
        return "; ".join(f"{r['case']} " + ", ".join(f"{m}\u2192{c} x {t}" if c > 1 else f"{m}\u2192{t}"
                                                    for m, (t, c) in zip(r["M"], r["steps"][key]["token_tiles"]))
                         for r in results)

    q = {r["case"]: r for r in results}

    def pct(r, key, field):
        return f"{100 * r['steps'][key][field]:.0f}%"

    def totals(key):
        return ", ".join(f"{r['case']} {us(r['steps'][key]['total'])}" for r in results)

    lines += ["",
              "How the model counts (assumptions):", "",
              "- **Bound.** Each pair runs its units in order (unit u on pair u mod P, P = min(74, units); inside "
              "a group the order of the step's `unit_at`); a unit takes the longer of its tensor time (the whole "
              "tile, rows or columns past the group's tokens included, at two SMs' share of the published rate) "
              "and its DRAM bytes at the pair's share of the bandwidth. HBM is one pool shared evenly by the "
              "pairs still running, a pair taking no more than its tensor core can use. The JSON also gives the "
              "floor no arbitration can beat (the busiest pair's tensor time or all bytes at 8 TB/s) and the bound "
              "with 74 fixed slices of the bandwidth, which an idle pair cannot lend. No pair ever draws more than "
              f"{max(st['peak_pair_bytes_per_s'] for r in results for st in r['steps'].values()) / 1e9:.0f} GB/s, "
              "below what its ring keeps in flight (7 k-tiles of 56 KB over a loaded DRAM latency near 1 us: "
              "about 0.4 TB/s).",
              "- **Bytes.** A, B, both scale arrays padded to 128 rows per group (the padding rows are read) and C "
              "in FP16, once each: a group's token rows are shared by its weight tiles and its weights by its "
              "token tiles through L2 (each unit carries its share). Rows or token columns past a group's tokens "
              "are zero-filled by TMA: no DRAM bytes, but they land in shared memory and are multiplied. This "
              "byte count at 7.7 TB/s reproduces the published SOL within 0.5%.",
              "- **Step 1** (`kernel_table.cuh`): 256 tokens per pair on MMA_M, 128 weight rows on MMA_N; "
              "ceil(M_g / 256) x N / 128 units per group.",
              "- **Step 2 as built** (`kernel.cuh`): 256 weight rows per pair on MMA_M, 128 tokens on MMA_N "
              "whatever the group, so ceil(N / 256) x ceil(M_g / 128) units per group, every one a full "
              "256 x 128 MMA (the instruction descriptor's N is kBN); the raster walks groups of 8 weight tiles "
              f"token tile by token tile. Token tiles: {tiles('2')}.",
              "- **Variant: per-group token tile** (not built: needs T up to 256, which two accumulators plus "
              "scale columns do not fit in TMEM): as few token tiles per group as MMA_N <= 256 allows, each the "
              f"smallest multiple of 16 covering an even share: {tiles('2_per_group')}.",
              f"- **Variant: per-group token tile <= {STEP2_TMEM_CAP}** (not built: fits TMEM with step 2's 7 "
              "slots, but needs the MMA's N and the token tile chosen per group): step 2's token tiles, each cut "
              f"to an even share rounded up to 16: {tiles('2_per_group_128')}. Totals {totals('2_per_group_128')} "
              f"us, geomean {us(sums['step2_per_group_128_total'])} us: the same units as step 2, less tensor "
              "time per unit.",
              "- Both variants use step 2's raster and tile the weights as step 2 does; "
              "only the token tile differs.",
              f"- **Fixed cost (der.)**: gau-nernst v6b's time minus the realistic SOL is "
              + ", ".join(f"{q} {us(v)}" for q, v in gaps.items())
              + f" us. Its kernel moved bytes no faster than the 5.915 TB/s measured on that B200, so a per-call "
              f"cost the same in all four cases is at most the smallest gap, {us(fixed)} us; the model adds that. It "
              "covers launch, prologue (TMEM alloc, barrier init, tensor-map prefetch), pipeline fill and the last "
              "unit's epilogue, as the competition's harness timed them. Not measured here; stage 10 has none of "
              "v6b's prologue unrolling, so its own may be larger.",
              f"- With gau-nernst's measured ceilings (5.915 TB/s, 5.797 PFLOP/s) in place of the published peaks, "
              f"the model's geomeans become {us(sums['step1_total_measured_ceilings'])} us (step 1), "
              f"{us(sums['step2_total_measured_ceilings'])} us (step 2), "
              f"{us(sums['step2_per_group_total_measured_ceilings'])} us (per-group variant) and "
              f"{us(sums['step2_per_group_128_total_measured_ceilings'])} us (<= {STEP2_TMEM_CAP} variant), "
              f"against {us(sums['best_public'])} us public. With 7.7 TB/s the bounds rise by at most "
              f"{100 * max(st['bound_alt_bw'] / st['bound'] - 1 for r in results for st in r['steps'].values()):.1f}%.",
              "- **Step 2 against step 1** (bounds, step 1 \u2192 step 2): "
              + ", ".join(f"{r['case']} {us(r['steps']['1']['bound'])} \u2192 {us(r['steps']['2']['bound'])}"
                          for r in results)
              + f" us. Step 2 runs fewer units (zero token columns in 128-wide tiles instead of zero rows in 256-row "
              f"tiles: useful MMA work {pct(q['Q1'], '1', 'mma_utilisation')} \u2192 "
              f"{pct(q['Q1'], '2', 'mma_utilisation')} at Q1), so fewer waves and less tensor time on the busiest "
              f"pair (Q1 {us(q['Q1']['steps']['1']['t_tensor_busiest_pair'])} \u2192 "
              f"{us(q['Q1']['steps']['2']['t_tensor_busiest_pair'])} us; Q4 goes from "
              f"{q['Q4']['steps']['1']['waves']} waves, tensor-bound, to {q['Q4']['steps']['2']['waves']} and gains "
              "most). But Q1 to Q3 are bound by HBM, and there the bytes per pair matter: a weight slab (256 rows "
              "x K) that one token tile covers is read by one step-2 unit alone, where step 1 splits it over two "
              "128-row units, so the pairs' bytes are more uneven (Q1: the heaviest pair carries "
              f"{q['Q1']['steps']['2']['dram_bytes_busiest_pair'] / 1e6:.2f} MB against "
              f"{q['Q1']['steps']['1']['dram_bytes_busiest_pair'] / 1e6:.2f} MB in step 1); the heaviest pairs "
              "finish last, each paced by its own tensor time, while the finished pairs' bandwidth goes unused. "
              f"At Q3 every pair runs one unit in both steps: {q['Q3']['steps']['2']['units']} pairs instead of "
              f"{q['Q3']['steps']['1']['units']} move the same bytes. The per-group variant has the fewest units, "
              f"which at Q3 ({q['Q3']['steps']['2_per_group']['units']} units, "
              f"{us(q['Q3']['steps']['2_per_group']['bound'])} us) leaves half the pairs idle.",
              "",
              "What the model cannot see: L2 and shared-memory bandwidth (the zero rows of step 1 and the zero "
              "token columns of step 2 still cross shared memory; the per-group variant's MMAs with a small "
              "MMA_N read 4 KB of weights per CTA for every 64 values of k whatever T is, more shared-memory "
              "bytes per FLOP than a 256 x 128 tile); step 2's epilogue, which writes the staging sub-tile a "
              "column per thread, 32 two-byte shared-memory stores per thread and sub-tile where step 1 makes "
              "four 16-byte stores (eight times the store instructions for the same bytes; the model counts "
              "bytes, and the epilogue hides behind the next unit's MMAs only while it is shorter than them), or, "
              "without TMA stores, 64 contiguous bytes per warp instruction to global memory; TMA and MMA "
              "latencies inside a unit; whether L2 really serves the second reader of shared token rows and "
              "weights (step 2's second token tile of a weight tile comes 8 units later); the clock under the "
              "power limit; and how this kernel's fixed cost compares with gau-nernst's."]
    return "\n".join(lines) + "\n"


def document(results, sums):
    fixed, gaps = fixed_cost()
    return dict(model=TITLE,
                note="No GPU data: lower bounds from published peak figures and stage 10's schedules, plus a "
                     "per-call fixed cost derived from public B200 times (der.). Times in seconds, bytes in bytes.",
                figures=FIGURES,
                parameters=dict(pairs=PAIRS, kernel_constants=MODEL_CONSTANTS, ring_slots=RING_SLOTS,
                                tiling=MODEL_TILING,
                                step1_tile=dict(tokens=kBM, weights=kBN),
                                step2_tile=dict(weights=STEP2_WEIGHT_TILE, tokens=STEP2_TOKEN_TILE),
                                variant_mma_n=[MMA_N_STEP, MMA_N_MAX], variant_tmem_cap=STEP2_TMEM_CAP),
                fixed_cost=dict(value=fixed, derivation="der.: min over the four cases of gau-nernst v6b's time "
                                "minus the case's bytes at 5.915 TB/s", gaps=gaps,
                                upper_bound_ncu_startup=NCU_STARTUP_US * 1e-6),
                steps=STEP_NAMES, cases=results, geomeans=sums)


def rewrite(text, body):
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{BEGIN}\n{body}{END}", text)


def target():
    """Where the table goes: the stage's README when it has the markers, else the docs page."""
    if README.exists() and BEGIN in README.read_text():
        return README
    return PAGE


def kernel_constants():
    """What the model copies, as each step's kernel file defines it: {"1": kernel_table.cuh's, "2": kernel.cuh's}
    (a file absent: None). Per file the constants (None where absent), which constant make_table tiles the
    tokens (M_g) and the weights (N_g) by, which tile count unit_at's raster groups by kGroupM (tiles_m: token
    tiles, tiles_n: weight tiles), and the MMA shape of the instruction descriptor."""
    out = {}
    for key, path in (("1", KERNEL_STEP1), ("2", KERNEL_STEP2)):
        if not path.exists():
            out[key] = None
            continue
        text = path.read_text()
        got = {}
        for name in MODEL_CONSTANTS:
            m = re.search(rf"constexpr int {name} = (\d+);", text)
            got[name] = int(m.group(1)) if m else None
        m = re.search(r"tiles_m = \(a\.M \+ (\w+) - 1\) / (\w+), tiles_n = \(a\.N \+ (\w+) - 1\) / (\w+);", text)
        tiling = dict(tokens=m.group(1), weights=m.group(3)) if m and m.group(1) == m.group(2) \
            and m.group(3) == m.group(4) else None
        m = re.search(r"= t / \(kGroupM \* s\.(tiles_[mn])\) \* kGroupM;", text)
        raster = m.group(1) if m else None
        m = re.search(r"nvfp4_instr_descriptor\((\w+), (\w+)\)", text)
        mma = (m.group(1), m.group(2)) if m else None
        out[key] = dict(constants=got, tiling=tiling, raster_over=raster, mma=mma)
    return out


def checks(results, sums):
    bad = []

    def expect(ok, what):
        if not ok:
            bad.append(what)

    eps = 1e-9
    for r in results:
        c = r["case"]
        expect(abs(r["bytes"] / HBM_BYTES_PER_S_ALT - r["published_sol"]) <= 0.005 * r["published_sol"],
               f"{c}: bytes at 7.7 TB/s ({us(r['bytes'] / HBM_BYTES_PER_S_ALT, 3)} us) do not reproduce the "
               f"published SOL ({us(r['published_sol'], 3)} us)")
        for key, st in r["steps"].items():
            w = f"{c} step {key}"
            expect(st["floor"] * (1 - eps) <= st["bound"] <= st["bound_even_share"] * (1 + eps),
                   f"{w}: not floor <= bound <= even-share bound")
            expect(st["bound"] >= r["roofline"] * (1 - eps), f"{w}: bound below the roofline")
            expect(abs(st["dram_bytes"] - r["bytes"]) <= eps * r["bytes"], f"{w}: units' DRAM shares do not add up")
            expect(st["smem_bytes"] >= st["dram_bytes"] * (1 - eps), f"{w}: fewer bytes in shared memory than DRAM")
            expect(abs(st["useful_flops"] - r["flops"]) <= eps * r["flops"], f"{w}: useful FLOPs != 2 sum(M) N K")
            expect(0 < st["mma_utilisation"] <= 1, f"{w}: MMA utilisation outside (0, 1]")
            expect(st["waves"] == ceil_div(st["units"], st["pairs_launched"]), f"{w}: waves != ceil(units / pairs)")
            expect(st["bound_alt_bw"] >= st["bound"] * (1 - eps), f"{w}: a lower bandwidth lowered the bound")
            expect(st["bound_measured_ceilings"] >= st["bound"] * (1 - eps), f"{w}: measured ceilings below the peaks")
            expect(abs(st["total"] - st["bound"] - st["fixed_cost"]) <= eps, f"{w}: total != bound + fixed cost")
        ms, n, k = CASES[c]
        s = r["steps"]
        expect(s["1"]["units"] == sum(ceil_div(m, kBM) * ceil_div(n, kBN) for m in ms if m), f"{c}: step 1 units")
        # Step 2 as built: make_table's count, weights by kBM and tokens by kBN (kernel.cuh).
        expect(s["2"]["units"] == sum(ceil_div(n, kBM) * ceil_div(m, kBN) for m in ms if m),
               f"{c}: step 2 units != ceil(N / kBM) x ceil(M_g / kBN)")
        expect(abs(s["2"]["executed_flops"] - sum(2 * kBM * kBN * round_up(k, kMmaK) * ceil_div(n, kBM)
                                                   * ceil_div(m, kBN) for m in ms)) <= eps * s["2"]["executed_flops"],
               f"{c}: step 2 does not run a full kBM x kBN MMA per unit")
        expect(s["2_per_group"]["units"] == sum(ceil_div(n, STEP2_WEIGHT_TILE) * ceil_div(m, token_tile(m)[0])
                                                for m in ms if m),
               f"{c}: per-group variant's units != ceil(N / 256) x ceil(M_g / token tile)")
        expect(s["2_per_group_128"]["units"] == s["2"]["units"], f"{c}: the <= 128 variant's units != step 2's")
        expect(s["2"]["mma_utilisation"] >= s["1"]["mma_utilisation"], f"{c}: step 2 wastes more MMA work than step 1")
        for key in ("2_per_group", "2_per_group_128"):
            expect(s[key]["mma_utilisation"] >= s["2"]["mma_utilisation"] * (1 - eps),
                   f"{c}: the {key} variant wastes more MMA work than step 2")
        for m in ms:
            for cap in (MMA_N_MAX, STEP2_TMEM_CAP):
                t, tiles = token_tile(m, cap)
                expect(t % MMA_N_STEP == 0 and MMA_N_STEP <= t <= cap and t * tiles >= m and t * (tiles - 1) < m,
                       f"{c}: token tile {t} (cap {cap}) for M = {m}")
    # The even split equals the pool when every pair carries the same units.
    same = [[dict(t_mma=1e-6, dram=3e5, executed=1, useful=1, smem=1)] * 3 for _ in range(PAIRS)]
    expect(abs(fair_share(same, HBM_BYTES_PER_S)[0] - even_share(same, HBM_BYTES_PER_S)) <= 1e-15,
           "uniform load: fair share != even share")
    # The pool never hands out more than the bandwidth: no schedule beats all bytes at bw.
    uneven = [[dict(t_mma=1e-6 * (1 + p % 3), dram=2e5 * (1 + p % 5))] * (1 + p % 4) for p in range(PAIRS)]
    t, _ = fair_share(uneven, HBM_BYTES_PER_S)
    expect(t >= sum(u["dram"] for q in uneven for u in q) / HBM_BYTES_PER_S * (1 - eps), "fair share beats HBM")
    expect(t >= floor(uneven, HBM_BYTES_PER_S) * (1 - eps) and t <= even_share(uneven, HBM_BYTES_PER_S) * (1 + eps),
           "uneven load: not floor <= fair share <= even share")
    # The public figures as published: their geomeans.
    expect(abs(sums["published_sol"] * 1e6 - PUBLISHED_SOL_GEOMEAN_US) < 0.005, "published SOL geomean != 5.211")
    expect(abs(sums["best_public"] * 1e6 - BEST_PUBLIC_GEOMEAN_US) < 0.005, "gau-nernst v6b geomean != 13.11")
    fixed, gaps = fixed_cost()
    expect(fixed > 0 and fixed == min(gaps.values()) and fixed < NCU_STARTUP_US * 1e-6, "fixed cost derivation")
    # The model's tile sizes and tiling are the kernels' (each step's file).
    for key, got in kernel_constants().items():
        path = (KERNEL_STEP1 if key == "1" else KERNEL_STEP2).relative_to(ROOT)
        if got is None:
            bad.append(f"{path} is missing: the model of step {key} has nothing to compare with")
            continue
        for name, value in got["constants"].items():
            want = MODEL_CONSTANTS[name]
            expect(value == want, f"{name}: the model has {want}, {path} {value}")
        expect(got["tiling"] is not None and got["tiling"] == {x: MODEL_TILING[key][x] for x in ("tokens", "weights")},
               f"{path}: make_table tiles tokens / weights by {got['tiling']}, the model's step {key} by "
               f"{MODEL_TILING[key]['tokens']} / {MODEL_TILING[key]['weights']}")
        expect(got["raster_over"] == MODEL_TILING[key]["raster_over"],
               f"{path}: unit_at groups {got['raster_over']} by kGroupM, the model {MODEL_TILING[key]['raster_over']}")
        expect(got["mma"] == ("kBM", "kBN"), f"{path}: the MMA is {got['mma']}, the model's kBM x kBN")
    expect((STEP2_WEIGHT_TILE, STEP2_TOKEN_TILE) == (kBM, kBN), "step 2's tile is not kBM weights x kBN tokens")
    # The ring: stage 10's slot formula (28 KB per CTA and k-tile; 512 TMEM columns less two 128-column
    # accumulators, 32 scale columns per slot).
    expect(min((232448 - (4096 + 4 * 2 * 2048)) // (16384 + 8192 + 2048 + 2048), (512 - 256) // 32) == RING_SLOTS,
           "ring slots")
    # The rasters: every tile of a group exactly once; step 2's next token tile of a weight tile kGroupM later.
    for tiles_m, tiles_n in ((1, 16), (2, 16), (3, 12), (2, 28), (5, 3), (11, 9)):
        for f in (transcribed_unit_at, transcribed_unit_at_step2):
            seen = sorted(f(tiles_m, tiles_n, t) for t in range(tiles_m * tiles_n))
            expect(seen == [(i, j) for i in range(tiles_m) for j in range(tiles_n)],
                   f"{f.__name__}({tiles_m}, {tiles_n}): not every tile once")
    order = [transcribed_unit_at_step2(2, 16, t) for t in range(32)]
    expect(order[:9] == [(0, w) for w in range(8)] + [(1, 0)] and order.index((1, 3)) - order.index((0, 3)) == kGroupM,
           "step 2 raster: 8 weight tiles of token tile 0, then of token tile 1")
    # Worked by hand.
    r = {x["case"]: x for x in results}
    s = r["Q1"]["steps"]["1"]
    expect(s["units"] == 256 and s["waves"] == 4 and s["pairs_with_most_units"] == 34, "Q1 step 1: 256 units, 34 x 4")
    expect(abs(s["t_tensor_busiest_pair"] - 4 * 2 * 256 * 128 * 7168 / (2 * 9e15 / 148)) < 1e-15,
           "Q1 step 1: busiest pair's tensor time")
    expect(abs(s["mma_utilisation"] - 1024 / 2048) < 1e-12, "Q1 step 1: 1024 of 2048 MMA rows useful")
    expect(r["Q3"]["steps"]["1"]["units"] == 72 and r["Q3"]["steps"]["1"]["waves"] == 1, "Q3 step 1: 72 units, 1 wave")
    expect(r["Q4"]["steps"]["1"]["units"] == 96 and r["Q4"]["steps"]["1"]["waves"] == 2, "Q4 step 1: 96 units")
    # Step 2 as built: Q1 11 token tiles (80, 176 -> 2, 128, 72, 64, 248 -> 2, 96, 160 -> 2) x 16 weight tiles.
    s = r["Q1"]["steps"]["2"]
    expect(s["units"] == 176 and s["waves"] == 3 and s["pairs_with_most_units"] == 28, "Q1 step 2: 176 units, 28 x 3")
    expect(abs(s["mma_utilisation"] - 1024 / (11 * 128)) < 1e-12, "Q1 step 2: 1024 of 1408 token columns useful")
    expect(abs(s["t_tensor_busiest_pair"] - 3 * 2 * 256 * 128 * 7168 / (2 * 9e15 / 148)) < 1e-15,
           "Q1 step 2: busiest pair's tensor time")
    expect([r[q]["steps"]["2"]["units"] for q in ("Q2", "Q3", "Q4")] == [28 * 13, 12 * 5, 16 * 4],
           "step 2 units Q2, Q3, Q4")
    expect(r["Q4"]["steps"]["2"]["mma_utilisation"] == 1.0, "Q4 step 2: 128 and 384 tokens fill 128-token tiles")
    expect(r["Q1"]["steps"]["2_per_group"]["units"] == 128 and r["Q3"]["steps"]["2_per_group"]["units"] == 36,
           "per-group variant units Q1, Q3")
    expect(token_tile(320) == (160, 2) and token_tile(72) == (80, 1) and token_tile(248) == (256, 1)
           and token_tile(176, STEP2_TMEM_CAP) == (96, 2) and built_token_tile(176) == (128, 2), "token tiles")
    expect(abs(r["Q3"]["bytes"] - (512 * 2048 + 640 * 256 + 2 * 3072 * 2048 + 2 * 3072 * 256 + 2 * 512 * 3072)) < 1,
           "Q3 bytes by hand")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="consistency checks; change nothing")
    args = ap.parse_args()
    results = [model_case(q) for q in CASES]
    sums = summary(results)
    body = table(results, sums)
    doc = json.dumps(document(results, sums), indent=1) + "\n"
    out = target()

    if args.check:
        failures = checks(results, sums)
        if not JSON_OUT.exists() or not base.same_document(json.loads(JSON_OUT.read_text()), json.loads(doc)):
            failures.append(f"{JSON_OUT.relative_to(ROOT)} is not current: run python3 docs/b200_model_group.py")
        text = out.read_text() if out.exists() else ""
        if rewrite(text, body) != text:
            failures.append(f"the table in {out.relative_to(ROOT)} is missing or not current: "
                            "run python3 docs/b200_model_group.py")
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        print(f"checked {len(results)} cases x {len(results[0]['steps'])} steps (step 1, step 2 as built, two "
              f"variants): floor <= bound <= even-share bound, bytes add up and reproduce the published SOL, both "
              f"kernels' tile sizes and tiling, the rasters, hand-worked values; outputs current")
        return 0

    print(body, end="")
    JSON_OUT.write_text(doc)
    print("wrote", JSON_OUT.relative_to(ROOT))
    text = out.read_text() if out.exists() else None
    new = rewrite(text, body) if text is not None else None
    if new is None:
        print(f"{out.relative_to(ROOT)} lacks {BEGIN} / {END}: table not written")
        return 1
    out.write_text(new)
    print("updated", out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
