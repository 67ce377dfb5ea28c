"""docs/plot.py's package: one module per job.

    data     load and validate docs/data (benchmark runs, test records, the B200 model); a run's kind
    panels   the panels of a stage's plot, chosen by the run's kind
    figures  a stage's plot, your run beside the committed one, the overview, the bank maps
    readme   the generated sections of the READMEs (result tables, GPU sentences, README.md's stage table)
    checks   --check: the self-test on synthetic data and the staleness checks
    cli      the command line

The stage facts (order, bases, steps, ideas, styles) come from tools/stages.py, the kind of problem of a run from
its JSON context ("kind"); nothing here names a stage, so a new stage, or a new kind measured like a GEMM or a
GEMV, needs no edit here.
"""
import pathlib
import sys

_DOCS = pathlib.Path(__file__).resolve().parent.parent
for _p in (_DOCS, _DOCS.parent / "tools"):  # docs/plotting.py, tools/stages.py
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
