#!/usr/bin/env python3
"""Turn the benchmark JSON in docs/data/ into the plots in docs/plots/ and the result tables.

    python3 docs/plot.py                      redraw docs/plots/<stage>.svg, overview.svg and the bank maps, and
                                              rewrite the generated sections of docs/README.md, README.md and each
                                              stage's README.md (the tables between <!-- results:begin --> and
                                              <!-- results:end -->, and the like); a file is written only when
                                              it changes, and the script says which changed
    python3 docs/plot.py --check              change nothing; exit 1 when a plot or a generated section is stale
                                              (its data changed, or it is not what this script draws), when
                                              data is malformed, or when a self-test on synthetic data fails;
                                              also runs the --check of docs/b200_model.py, timeline.py,
                                              tile_order.py and pipeline_diagram.py. Exit 77 (ctest's
                                              "skipped") when everything that could be checked passed but the
                                              plots could not be compared: matplotlib missing, or not the
                                              version pinned in docs/requirements.txt.
    python3 docs/plot.py --results DIR [--out OUT]
                                              your own GPU: draw the benchmark JSON in DIR (written there by the
                                              run_bench_stageNN targets with -DGEMM_RESULTS_DIR=DIR) beside the
                                              committed docs/data, one column each, into OUT (default DIR/plots),
                                              with the result tables in OUT/results.md. docs/ is not touched, and
                                              any matplotlib version will do.

Plots are byte-for-byte reproducible only with the matplotlib pinned in docs/requirements.txt; the script
refuses to redraw docs/plots with another (docs/plotting.py). Every SVG records which data it was drawn from
and a fingerprint of it, so --check notices changed data with any matplotlib, or none.

Each docs/data/<stage>.json is one run of bench_stageNN (Google Benchmark JSON): the stage, its predecessor and a
library peer, timed in the same process, and possibly variants of the stage (other configurations of its
kernel, e.g. stage 05's first step, "05_tcgen05_1cta"). The label of each benchmark is its role ("stage", "variant",
"predecessor", "peer"), followed by " EMULATED" where the row ran its tcgen05 instructions through the software
emulator (a Hopper GPU): such a row's time measures the emulator, so it never enters a plot and never gets a
ratio; the tables list it with its time and the words "EMULATED (not performance)". A run whose context
"tcgen05" starts with EMULATED is drawn from what it can show instead: the B200 MODEL of the stage against its
predecessor (docs/data/b200_model.json, docs/b200_model.py) and the stage's test results on that GPU
(docs/data/tests/<stage>.json, docs/test_results.py).

The plots are data-driven: every docs/data/*.json with benchmarks is a stage; a stage folder without one is
reported. Which panels a run gets follows its kind (its JSON context "kind": "fp32_gemm" and "nvfp4_gemm" are
drawn in TFLOP/s, "nvfp4_gemv" in GB/s against the streaming read; tools/stages.py says how a missing kind is
inferred). The stages' order, bases, steps, one-line ideas and styles come from tools/stages.py (CMakeLists.txt and
each step's kStage), so a new stage needs no edit here. The work is done by the package docs/plotlib/, one module
per job (its __init__.py lists them).
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from plotlib.cli import main  # noqa: E402  (docs/plotlib/)

if __name__ == "__main__":
    sys.exit(main(__doc__))
