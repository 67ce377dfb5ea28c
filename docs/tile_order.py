#!/usr/bin/env python3
"""Draw the order in which stage 06's persistent static scheduler hands out output tiles.

    python3 docs/tile_order.py          write docs/plots/tile_order_06.svg
    python3 docs/tile_order.py --check  check the Python transcription of unit_at() against the table that
                                        ./build/stage06 prints (when that program is built) and against the
                                        copy of it kept below, check hand-worked invariants of the order,
                                        and render into a temporary folder; changes nothing. Exit code 1 on
                                        a failure, 77 (ctest's "skipped") when matplotlib is missing and
                                        everything else passed.

The picture uses the small grid of the stage program's walkthrough: 10 x 6 tiles of 256 x 128 (2560 x 768
outputs, one batch, no K split). Left, each tile's unit number, coloured by the wave it runs in with 16
pairs. Right, which of the 16 pairs runs it (pair p runs units p, p + 16, p + 32, ...).
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import plotting  # noqa: E402  (docs/plotting.py: the pinned matplotlib, deterministic SVG)

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNEL = ROOT / "06_persistent_ws" / "kernel.cuh"
PROGRAM = ROOT / "build" / "stage06"
SVG_OUT = ROOT / "docs" / "plots" / "tile_order_06.svg"

# The constants unit_at() reads, spelled as in 06_persistent_ws/kernel.cuh so that the transcription below
# reads like the C++; --check compares them with the header.
kBM = 256      # rows of C per tile of a pair (one tile-row)
kBN = 128      # columns of C per tile (one tile-column)
kGroupM = 8    # tile-rows per rasterisation group

# The grid of the stage program's walkthrough (06_persistent_ws/main.cu) and the pairs of the picture. 16 pairs
# rather than a B200's 74: with 74 the 60 tiles would all run in one wave and the picture would show nothing.
TILES_M, TILES_N = 10, 6
PAIRS = 16
B200_PAIRS = 74
CAPTION = ("Stage 06's static schedule, transcribed from unit_at() in 06_persistent_ws/kernel.cuh; "
           f"a B200 runs {B200_PAIRS} pairs at once.")

# What ./build/stage06 printed for this grid, kept so that --check has something to compare with where the
# program is not built. --check also compares it with the program's output when it can.
EMBEDDED_TABLE = """\
-- The order of tiles (unit numbers on a 10 x 6 grid of tiles, groups of 8 tile-rows)
            n0   n1   n2   n3   n4   n5  
  tile m0     0    8   16   24   32   40 
  tile m1     1    9   17   25   33   41 
  tile m2     2   10   18   26   34   42 
  tile m3     3   11   19   27   35   43 
  tile m4     4   12   20   28   36   44 
  tile m5     5   13   21   29   37   45 
  tile m6     6   14   22   30   38   46 
  tile m7     7   15   23   31   39   47    <- end of the first group of 8 rows
  tile m8    48   50   52   54   56   58 
  tile m9    49   51   53   55   57   59 
"""


# --- The schedule, as the kernel computes it ------------------------------------------------------------------

@dataclass
class Schedule:  # struct Schedule in 06_persistent_ws/kernel.cuh
    M: int = 0
    N: int = 0
    K: int = 0
    L: int = 1
    tiles_m: int = 0
    tiles_n: int = 0
    k_tiles: int = 1
    splits: int = 1
    units: int = 0
    pairs: int = 0


@dataclass
class Unit:  # struct Unit in 06_persistent_ws/kernel.cuh
    m0: int = 0
    n0: int = 0
    batch: int = 0
    tile: int = 0
    split: int = 0
    kt_begin: int = 0
    kt_end: int = 0


def unit_at(s, u):
    """Mirrors unit_at() in 06_persistent_ws/kernel.cuh, line by line. The C++ divides non-negative ints,
    so its / is Python's //; its int64_t products cannot overflow in Python."""
    w = Unit()
    w.tile = u // s.splits
    w.split = u % s.splits
    per_batch = s.tiles_m * s.tiles_n
    w.batch = w.tile // per_batch
    t = w.tile % per_batch
    group = t // (kGroupM * s.tiles_n)
    first_m = group * kGroupM
    rows_in_group = (s.tiles_m - first_m) if (s.tiles_m - first_m) < kGroupM else kGroupM
    in_group = t % (kGroupM * s.tiles_n)
    w.m0 = (first_m + in_group % rows_in_group) * kBM
    w.n0 = (in_group // rows_in_group) * kBN
    w.kt_begin = w.split * s.k_tiles // s.splits
    w.kt_end = (w.split + 1) * s.k_tiles // s.splits
    return w


def walkthrough_schedule(pairs=PAIRS):
    """The schedule main.cu builds for its table (one batch, one k-tile, no split), with `pairs` pairs."""
    units = TILES_M * TILES_N
    return Schedule(M=TILES_M * kBM, N=TILES_N * kBN, K=256, L=1, tiles_m=TILES_M, tiles_n=TILES_N, k_tiles=1,
                    splits=1, units=units, pairs=min(pairs, units))


def order_table(s):
    """table[m][n] = the unit that computes tile (m, n) of batch 0, as main.cu fills its table."""
    table = [[None] * s.tiles_n for _ in range(s.tiles_m)]
    for u in range(s.tiles_m * s.tiles_n * s.splits):
        w = unit_at(s, u)
        if w.batch == 0 and w.split == 0:
            table[w.m0 // kBM][w.n0 // kBN] = u
    return table


def pair_of(s, u):
    """The static schedule: pair p runs units p, p + P, p + 2P, ... (the kernel's loop `u += pairs`)."""
    return u % s.pairs


def wave_of(s, u):
    """Units that would run at the same time if every unit took as long: the k-th unit of every pair. The
    pairs are not synchronised, so this is the picture's idealisation, not a barrier in the kernel."""
    return u // s.pairs


def footprint(s, units):
    """(tile-rows, tile-columns) touched by a set of units: the rows of A and columns of B they load."""
    tiles = [unit_at(s, u) for u in units]
    return sorted({w.m0 // kBM for w in tiles}), sorted({w.n0 // kBN for w in tiles})


def span_text(prefix, values):
    return f"{prefix}{values[0]}-{prefix}{values[-1]}" if len(values) > 1 else f"{prefix}{values[0]}"


# --- The program's table ----------------------------------------------------------------------------------------

HEADING = re.compile(r"^-- The order of tiles \(unit numbers on a (\d+) x (\d+) grid of tiles, groups of (\d+) "
                     r"tile-rows\)")
ROW = re.compile(r"^\s*tile m(\d+)\s+([\d ]+?)\s*(<-.*)?$")


class TableError(Exception):
    pass


def parse_table(text):
    """(tiles_m, tiles_n, group rows, table) from the 'order of tiles' section of the program's output."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if HEADING.match(line)), None)
    if start is None:
        raise TableError("no '-- The order of tiles (...)' section")
    tiles_m, tiles_n, group = map(int, HEADING.match(lines[start]).groups())
    header = lines[start + 1].split() if start + 1 < len(lines) else []
    if header != [f"n{n}" for n in range(tiles_n)]:
        raise TableError(f"column header {header} is not n0..n{tiles_n - 1}")
    table = []
    for line in lines[start + 2:start + 2 + tiles_m]:
        row = ROW.match(line)
        if not row or int(row.group(1)) != len(table):
            raise TableError(f"expected the row of tile m{len(table)}, got {line!r}")
        values = [int(v) for v in row.group(2).split()]
        if len(values) != tiles_n:
            raise TableError(f"row m{len(table)} has {len(values)} values for {tiles_n} columns")
        table.append(values)
    if len(table) != tiles_m:
        raise TableError(f"{len(table)} rows for {tiles_m} tile-rows")
    return tiles_m, tiles_n, group, table


def run_program():
    """The program's output, or None when it is not built. A small problem, so that on a GPU machine the run,
    check and timing that follow the walkthrough take moments (the table does not depend on the shape)."""
    if not PROGRAM.exists():
        return None
    done = subprocess.run([str(PROGRAM), "--m", "256", "--n", "256", "--k", "512", "--iters", "1"],
                          capture_output=True, text=True, timeout=300)
    return done.stdout


# --- Checks --------------------------------------------------------------------------------------------------------

def kernel_constants():
    """kBM, kBN and kGroupM as 06_persistent_ws/kernel.cuh defines them (None where not found)."""
    text = KERNEL.read_text() if KERNEL.exists() else ""
    found = {}
    for name in ("kBM", "kBN", "kGroupM"):
        m = re.search(rf"inline constexpr int {name} = (\d+);", text)
        found[name] = int(m.group(1)) if m else None
    return found


def check_order(s, table):
    """Hand-worked properties of the grouped order on the walkthrough's grid; a list of failures."""
    bad = []
    where = {}
    for m, row in enumerate(table):
        for n, u in enumerate(row):
            where.setdefault(u, []).append((m, n))
    # Every tile appears once: the units 0..59 are a permutation of the 60 tiles.
    if sorted(where) != list(range(s.units)) or any(len(v) != 1 for v in where.values()):
        bad.append("the table is not one unit per tile, units 0..59")
        return bad
    pos = {u: v[0] for u, v in where.items()}
    # Worked by hand: the first group is 8 rows deep (units 0-7 fill column n0, 8-15 column n1, ...); the
    # second has only the 2 rows left, so it walks 2-deep columns: 48, 49 in n0, 50, 51 in n1, ...
    for u, tile in {0: (0, 0), 7: (7, 0), 8: (0, 1), 15: (7, 1), 16: (0, 2), 47: (7, 5), 48: (8, 0), 49: (9, 0),
                    50: (8, 1), 59: (9, 5)}.items():
        if pos[u] != tile:
            bad.append(f"unit {u} is at tile m{pos[u][0]} n{pos[u][1]}, by hand m{tile[0]} n{tile[1]}")
    # Within a group, consecutive units go down a column; at the group's last row the next unit starts the
    # next column at the group's first row; after the group's last tile comes the next group's first.
    for u in range(s.units - 1):
        (m, n), (m2, n2) = pos[u], pos[u + 1]
        g, g2 = m // kGroupM, m2 // kGroupM
        last_row = min((g + 1) * kGroupM, s.tiles_m) - 1
        if g == g2 and n2 == n:
            ok = m2 == m + 1
        elif g == g2:
            ok = n2 == n + 1 and m == last_row and m2 == g * kGroupM
        else:
            ok = g2 == g + 1 and m == last_row and n == s.tiles_n - 1 and (m2, n2) == (g2 * kGroupM, 0)
        if not ok:
            bad.append(f"units {u} -> {u + 1}: tile m{m} n{n} -> m{m2} n{n2} breaks the column-by-column walk")
    # The static schedule: every unit on exactly one pair; with 16 pairs, pairs 0-11 get 4 units, 12-15 get 3.
    runs = {p: [u for u in range(s.units) if pair_of(s, u) == p] for p in range(s.pairs)}
    if sorted(u for us in runs.values() for u in us) != list(range(s.units)):
        bad.append("the static schedule does not run every unit exactly once")
    if s.pairs == 16 and [len(runs[p]) for p in range(16)] != [4] * 12 + [3] * 4:
        bad.append(f"units per pair {[len(runs[p]) for p in range(16)]}, by hand 4 x 12 then 3 x 4")
    if s.pairs == 16 and runs[5] != [5, 21, 37, 53]:
        bad.append(f"pair 5 runs units {runs[5]}, by hand 5, 21, 37, 53")
    # What the right panel says: wave 0 (units 0-15) touches 8 tile-rows of A and 2 tile-columns of B.
    # Each of those tile-rows is in 2 of wave 0's tiles, each tile-column in 8 (the figure's "read by" counts).
    if s.pairs == 16 and footprint(s, range(16)) != (list(range(8)), [0, 1]):
        bad.append(f"wave 0 touches tile-rows, tile-columns {footprint(s, range(16))}, by hand m0-m7, n0-n1")
    elif s.pairs == 16:
        wave0 = [pos[u] for u in range(16)]
        if any(sum(m == r for m, _ in wave0) != 2 for r in range(8)) or \
                any(sum(n == c for _, n in wave0) != 8 for c in range(2)):
            bad.append("wave 0 does not hold 2 tiles of each of m0-m7 and 8 of each of n0-n1")
    return bad


def check_unit_at():
    """unit_at() off the walkthrough's path: split K and a second batch, worked by hand."""
    bad = []
    s = Schedule(tiles_m=10, tiles_n=6, k_tiles=10, splits=3, L=2, units=10 * 6 * 2 * 3)
    # Splits of a tile are consecutive units; 10 k-tiles in 3 ranges: 10 * 1 // 3 = 3, 10 * 2 // 3 = 6.
    got = [(w.tile, w.split, w.kt_begin, w.kt_end) for w in (unit_at(s, u) for u in range(4))]
    if got != [(0, 0, 0, 3), (0, 1, 3, 6), (0, 2, 6, 10), (1, 0, 0, 3)]:
        bad.append(f"split K: units 0-3 give (tile, split, kt_begin, kt_end) {got}")
    for u, want in {180: (1, 0, 0), 359: (1, 9 * kBM, 5 * kBN), 3 * 48: (0, 8 * kBM, 0)}.items():
        w = unit_at(s, u)
        if (w.batch, w.m0, w.n0) != want:
            bad.append(f"unit {u}: (batch, m0, n0) = {(w.batch, w.m0, w.n0)}, by hand {want}")
    # A grid smaller than one group: one group of 3 rows, walked in columns of 3.
    small = Schedule(tiles_m=3, tiles_n=2, splits=1, units=6)
    got = [(unit_at(small, u).m0 // kBM, unit_at(small, u).n0 // kBN) for u in range(6)]
    if got != [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]:
        bad.append(f"3 x 2 grid: tiles {got}")
    return bad


def compare(name, want, got):
    if want == got:
        return []
    diffs = [f"m{m} n{n}: {want[m][n]} vs {got[m][n]}" for m in range(len(want)) for n in range(len(want[m]))
             if m < len(got) and n < len(got[m]) and want[m][n] != got[m][n]]
    return [f"the transcription of unit_at() differs from {name}: " + (", ".join(diffs[:6]) or "shape differs")]


def self_test(plt, tmp):
    """A list of failures, and a line on where the program's table came from."""
    bad = []
    constants = kernel_constants()
    for name, value in (("kBM", kBM), ("kBN", kBN), ("kGroupM", kGroupM)):
        if constants[name] != value:
            bad.append(f"{name} = {value} here, {constants[name]} in {KERNEL.relative_to(ROOT)}: update the script")
    s = walkthrough_schedule()
    mine = order_table(s)
    sources = [("the embedded copy of the table", EMBEDDED_TABLE)]
    try:
        out = run_program()
    except (OSError, subprocess.SubprocessError) as err:
        out = None
        bad.append(f"{PROGRAM.relative_to(ROOT)} did not run: {err}")
    if out is not None:
        sources.append((f"the table {PROGRAM.relative_to(ROOT)} printed", out))
    for name, text in sources:
        try:
            tiles_m, tiles_n, group, table = parse_table(text)
        except TableError as err:
            bad.append(f"{name}: {err}")
            continue
        if (tiles_m, tiles_n, group) != (TILES_M, TILES_N, kGroupM):
            bad.append(f"{name} is a {tiles_m} x {tiles_n} grid in groups of {group}, "
                       f"the script draws {TILES_M} x {TILES_N} in groups of {kGroupM}")
            continue
        bad += compare(name, table, mine)
    bad += check_order(s, mine)
    bad += check_unit_at()
    if plt is not None:
        # Rendered twice: the two files must be the same bytes, or every regeneration would show as a diff.
        first, second = pathlib.Path(tmp) / "a.svg", pathlib.Path(tmp) / "b.svg"
        draw(plt, first)
        draw(plt, second)
        text = first.read_text()
        if not text.lstrip().startswith("<?xml") or len(text) < 10000:
            bad.append("the SVG was not written")
        if first.read_bytes() != second.read_bytes():
            bad.append("two renders differ: the SVG is not stable")
        if "dc:date" in text:
            bad.append("the SVG carries a date")
    source = "./build/stage06's table" if out is not None else "the embedded table (build/stage06 not built)"
    return bad, source


# --- The picture -------------------------------------------------------------------------------------------------

# Light fills, one per wave, so that the black unit numbers stay readable on them.
WAVE_FILL = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb"]


def cell_grid(ax, s, title):
    """Axes set up for a tiles_m x tiles_n grid: tile (m, n) is the unit square centred on (n, m)."""
    ax.set_xlim(-0.5, s.tiles_n - 0.5)
    ax.set_ylim(s.tiles_m - 0.5, -0.5)
    ax.set_xticks(range(s.tiles_n), [f"n{n}" for n in range(s.tiles_n)])
    ax.set_yticks(range(s.tiles_m), [f"m{m}" for m in range(s.tiles_m)])
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.tick_params(length=0, labelsize=9, pad=6)  # clear of the outlines drawn on the grid's edge
    ax.set_xlabel(f"tile-column: {kBN} columns of C (rows of B)", fontsize=8.5, color="0.3")
    ax.set_ylabel(f"tile-row: {kBM} rows of C (rows of A)", fontsize=8.5, color="0.3")
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, fontsize=10, pad=8)


def outline(ax, cells, **style):
    """Draws the boundary of a set of (m, n) cells: every cell edge whose neighbour is not in the set."""
    cells = set(cells)
    for m, n in cells:
        for dm, dn, xs, ys in ((-1, 0, (n - .5, n + .5), (m - .5, m - .5)), (1, 0, (n - .5, n + .5), (m + .5, m + .5)),
                               (0, -1, (n - .5, n - .5), (m - .5, m + .5)), (0, 1, (n + .5, n + .5), (m - .5, m + .5))):
            if (m + dm, n + dn) not in cells:  # not clipped: the grid's outer edges lie on the axes limits
                ax.plot(xs, ys, solid_capstyle="projecting", clip_on=False, **style)


def luminance(rgb):
    r, g, b = rgb[:3]
    return 0.299 * r + 0.587 * g + 0.114 * b


def draw(plt, path):
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch, Rectangle

    s = walkthrough_schedule()
    table = order_table(s)
    cells = [(m, n, table[m][n]) for m in range(s.tiles_m) for n in range(s.tiles_n)]
    waves = wave_of(s, s.units - 1) + 1
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.6, 6.4))

    # Left: unit numbers, coloured by wave.
    cell_grid(left, s, f"Unit order on a {s.tiles_m} x {s.tiles_n} grid of tiles\n"
                       f"(groups of {kGroupM} tile-rows, walked column by column)")
    for m, n, u in cells:
        left.add_patch(Rectangle((n - .5, m - .5), 1, 1, facecolor=WAVE_FILL[wave_of(s, u) % len(WAVE_FILL)],
                                 edgecolor="white", linewidth=1.5))
        left.text(n + 0.12, m, str(u), ha="center", va="center", fontsize=10)
    # The walk of the first units: one arrow down each column, left of the numbers so that it does not cover
    # them, and a dashed return along the gap between columns (a straight jump would cross the numbers).
    traced = 20
    where = {u: (m, n) for m, n, u in cells}
    runs = []  # [column, first row, last row] of consecutive units in one column
    for u in range(traced):
        m, n = where[u]
        if runs and runs[-1][0] == n and runs[-1][2] == m - 1:
            runs[-1][2] = m
        else:
            runs.append([n, m, m])
    walk = dict(color="0.2", lw=1.1, alpha=0.8)
    x_of = lambda n: n - 0.3
    for i, (n, first, last) in enumerate(runs):
        left.annotate("", xy=(x_of(n), last + 0.36), xytext=(x_of(n), first - 0.36),
                      arrowprops=dict(arrowstyle="-|>", shrinkA=0, shrinkB=0, mutation_scale=10, **walk))
        if i + 1 < len(runs):
            n2, first2, _ = runs[i + 1]
            gap = n + 0.5
            left.plot([x_of(n), gap, gap, x_of(n2)], [last + 0.36, last + 0.36, first2 - 0.36, first2 - 0.36],
                      ls=(0, (3, 2)), **walk)
    # The group boundaries: a bold line under the last tile-row of each full group.
    for first in range(kGroupM, s.tiles_m, kGroupM):
        left.axhline(first - 0.5, color="black", lw=3)
        left.text(s.tiles_n - 0.45, first - 0.5, f" end of group {first // kGroupM - 1}\n ({kGroupM} tile-rows)",
                  ha="left", va="center", fontsize=8, clip_on=False)
    handles = [Patch(facecolor=WAVE_FILL[k], edgecolor="0.5",
                     label=f"wave {k}: units {k * s.pairs}-{min((k + 1) * s.pairs, s.units) - 1}")
               for k in range(waves)]
    left.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=2, fontsize=8.5,
                frameon=False, title=f"wave = unit // {s.pairs} (with {s.pairs} pairs); "
                                     f"arrows: units 0-{traced - 1}", title_fontsize=8.5)

    # Right: the pair that runs each tile, and the outline of each wave.
    cell_grid(right, s, f"Which of {s.pairs} pairs runs each tile\n"
                        f"(static schedule: unit u on pair u mod {s.pairs})")
    palette = plt.get_cmap("tab20").colors
    for m, n, u in cells:
        colour = palette[pair_of(s, u) % len(palette)]
        right.add_patch(Rectangle((n - .5, m - .5), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
        right.text(n, m, f"p{pair_of(s, u)}", ha="center", va="center", fontsize=9.5,
                   color="white" if luminance(to_rgb(colour)) < 0.55 else "black")
    # Black outlines rather than the wave colours of the left panel: tab20 already uses those hues.
    for k in range(waves):
        outline(right, [(m, n) for m, n, u in cells if wave_of(s, u) == k], color="black", lw=3.2 if k == 0 else 1.6)
    wave0 = range(min(s.pairs, s.units))
    rows, cols = footprint(s, wave0)
    right.text(0.5, -0.04, f"outlined: the tiles of each wave (bold: wave 0, units 0-{len(wave0) - 1}).\n"
                           f"The {len(wave0)} pairs busy together in wave 0 share tile-rows {span_text('m', rows)} "
                           f"of A\nand tile-columns {span_text('n', cols)} of B: each block of A rows is read by "
                           f"{len(wave0) // len(rows)} pairs,\neach block of B rows by {len(wave0) // len(cols)}.",
               transform=right.transAxes, ha="center", va="top", fontsize=8.5, linespacing=1.5)

    fig.text(0.5, 0.012, CAPTION, ha="center", va="bottom", fontsize=8.5, color="0.3")
    fig.subplots_adjust(left=0.07, right=0.98, top=0.86, bottom=0.2, wspace=0.42)
    plotting.write_if_changed(path, plotting.svg_bytes(fig))
    plt.close(fig)
    return path


# --- Main --------------------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="check the transcription and render into a temporary folder")
    args = ap.parse_args()
    plt, why = plotting.pyplot()

    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            failures, source = self_test(plt, tmp)
            if plt is not None and why is None:
                out = draw(plt, pathlib.Path(tmp) / SVG_OUT.name)
                if not SVG_OUT.exists() or out.read_bytes() != SVG_OUT.read_bytes():
                    failures.append(f"{SVG_OUT.relative_to(ROOT)} is missing or not current: python3 docs/tile_order.py")
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        if plt is None or why:
            print(f"SKIPPED: the committed picture was not compared: {why}")
            return 77
        print(f"checked unit_at() against {source} and the embedded copy, the column-by-column walk, split K, "
              "batches and the static schedule; picture rendered (twice, identical)")
        return 0

    if plt is None or why:
        print(f"picture NOT drawn: {why}", file=sys.stderr)
        return 1
    draw(plt, SVG_OUT)
    print("wrote", SVG_OUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
