"""The command line of docs/plot.py: redraw, --check, --results DIR [--out OUT].
"""
import argparse
import json
import pathlib

import plotting
from plotting import stage_style
from .data import DATA, DataError, ROOT, TESTS, load_model, load_runs, missing_data, rel
from .figures import plot_beside, plot_overview, render_all
from .readme import generated_texts, gpus_section, table
from .checks import check

def results_mode(plt, why, runs, model, results_dir, out_dir):
    results_dir = pathlib.Path(results_dir).resolve()
    out_dir = pathlib.Path(out_dir).resolve() if out_dir else results_dir / "plots"
    docs = (ROOT / "docs").resolve()
    if out_dir == docs or docs in out_dir.parents:
        print(f"--out {out_dir}: inside docs/, which --results never touches; choose another folder")
        return 2
    if not results_dir.is_dir():
        print(f"--results {results_dir}: no such folder")
        return 2
    try:
        yours = load_runs(results_dir)
    except (DataError, KeyError, ValueError) as e:
        print(f"bad data in {results_dir}: {e}")
        return 1
    if not yours:
        print(f"--results {results_dir}: no benchmark JSON there (cmake -DGEMM_RESULTS_DIR={results_dir} ..., then "
              "cmake --build build --target run_bench_stage00 or bench)")
        return 1
    if plt is None:
        print(why)
        return 1
    if why:
        print(f"note: {why.split(':')[0]}; fine for your own plots")
    for run in yours:
        run["source"] = results_dir.name
    by_stage = {r["stage"]: r for r in runs}
    for run in yours:
        path = out_dir / f"{run['stage']}.svg"
        plotting.write_if_changed(path, plot_beside(plt, by_stage.get(run["stage"]), run, model))
        print("wrote", path)
    path = out_dir / "overview.svg"
    plotting.write_if_changed(path, plot_overview(plt, [by_stage[r["stage"]] for r in yours if r["stage"] in by_stage]
                                                  + yours))
    print("wrote", path)
    path = out_dir / "results.md"
    plotting.write_if_changed(path, f"# Your results ({results_dir})\n\n{gpus_section(yours)}\n{table(yours)}")
    print("wrote", path)
    return 0


def main(usage=None):
    ap = argparse.ArgumentParser(description=usage or __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a plot or a table is stale")
    ap.add_argument("--no-other-checks", action="store_true", help="with --check: skip the other scripts' checks")
    ap.add_argument("--results", metavar="DIR", help="draw the benchmark JSON in DIR beside docs/data")
    ap.add_argument("--out", metavar="OUT", help="with --results: where the plots go (default DIR/plots)")
    args = ap.parse_args()
    if args.out and not args.results:
        ap.error("--out goes with --results")
    plt, why = plotting.pyplot()
    try:
        runs = load_runs(DATA)
        model = load_model()
        for p in sorted(DATA.glob("ncu_*.json")):
            if "stages" not in json.loads(p.read_text()):
                raise DataError(f"{p}: not an ncu_metrics.py file")
        bank_maps = [(p, json.loads(p.read_text())) for p in sorted(DATA.glob("*_bank_map.json"))]
    except (DataError, json.JSONDecodeError, KeyError, ValueError) as e:
        print(f"bad data: {e}")
        return 1
    for folder in missing_data(runs):
        print(f"note: no data for {folder}: docs/data/{folder}.json is missing "
              f"(cmake --build build --target run_bench_stage{folder[:2]}); it has no plot")
    for run in runs:
        if run["emulated"] and not run.get("tests"):
            print(f"note: no test results for {run['stage']} (docs/data/{TESTS}/{run['stage']}.json, docs/test_results.py)")
        if not stage_style(run["stage"])[1]:
            print(f"note: {run['stage']} is no stage of CMakeLists.txt (tools/stages.py): drawn in grey")

    if args.results:
        return results_mode(plt, why, runs, model, args.results, args.out)
    if args.check:
        return check(plt, why, runs, model, bank_maps, others=not args.no_other_checks)

    changed = []
    for path, new in generated_texts(runs, model).items():
        if plotting.write_if_changed(path, new):
            changed.append(path)
    if plt is None or why:
        for path in changed:
            print("updated", rel(path))
        print(f"plots NOT redrawn: {why}")
        return 1
    for path, data in render_all(plt, runs, model, bank_maps).items():
        if plotting.write_if_changed(path, data):
            changed.append(path)
    for path in changed:
        print("updated", rel(path))
    if not changed:
        print("nothing changed: every plot and generated section is current")
    return 0
