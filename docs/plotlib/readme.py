"""The generated sections of the READMEs: result tables, the GPU sentences, docs/README.md's "What each layer adds",
the Nsight Compute tables and README.md's stage table, each between its markers.
"""
import json
import re

import stages
from plotting import series_key, stage_key
from .data import (BEGIN, DATA, EMULATED, EMULATED_TEXT, END, GEMV_SUMMARY_SHAPES, OWN_ROLES, ROOT, SUMMARY_SHAPES, find,
    gemv_ceiling, gemv_keys, measure, is_square, model_same_as, modelled_variants, shape_key, shape_text,
    stamp)

def gemv_table(run, variants=True):
    """A GEMV run's results: per shape the ceiling, then each row's time, GB/s, fraction of the ceiling and
    time against the stage's. Without `variants`, only the stage, its base and the peer."""
    ceiling = gemv_ceiling(run)
    lines = [f"**{run['stage']}** (GEMV: GB/s = the bytes a GEMV must move / time): {stamp(run['ctx'])}", "",
             "| shape (M x N x K x L) | implementation | role | time us | GB/s | of stream read | time / stage's |",
             "|---|---|---|---|---|---|---|"]
    for key in gemv_keys(run):
        rows = [r for r in run["results"] if shape_key(r) == key and (variants or r["role"] != "variant")]
        st = next((r for r in rows if r["role"] == "stage" and not r["emulated"]), None)
        c = ceiling.get(shape_text(key))
        if c:
            lines.append(f"| {shape_text(key)} | streaming read (best of the run) | ceiling | {1e3 * c['ms']:.2f} | "
                         f"{c['gbps']:.0f} | 1 | - |")
        for r in rows:
            if r["emulated"]:
                lines.append(f"| {shape_text(key)} | {r['impl']} | {r['role']} | {1e3 * r['ms']:.2f} | "
                             f"{EMULATED_TEXT} | - | - |")
                continue
            frac = f"{r['gbps'] / c['gbps']:.3f}" if c else "-"
            vs = f"{r['ms'] / st['ms']:.2f}" if st and r is not st else "-"
            lines.append(f"| {shape_text(key)} | {r['impl']} | {r['role']} | {1e3 * r['ms']:.2f} | {r['gbps']:.0f} | "
                         f"{frac} | {vs} |")
    return "\n".join(lines) + "\n"


def table_rows(run):
    """One row per stage or variant result and shape; an EMULATED one shows its time and no performance."""
    by = {}
    for r in run["results"]:
        by.setdefault(shape_key(r), []).append(r)
    rows = []
    for key in sorted(by, key=lambda k: (not is_square(k), k)):
        group = by[key]
        pred = next((r for r in group if r["role"] == "predecessor"), None)
        peer = next((r for r in group if r["role"] == "peer"), None)
        for s in [r for role in OWN_ROLES for r in group if r["role"] == role]:
            name = run["stage"] if s["role"] == "stage" else s["impl"]
            if s["emulated"]:
                rows.append(f"| {name} | {shape_text(key)} | {s['ms']:.3f} | {EMULATED_TEXT} | - | - | - |")
                continue

            def ratio(other):
                if other and other["emulated"]:
                    return f"- ({EMULATED})"
                return f"{s['tflops'] / other['tflops']:.3g}x" if other and other["tflops"] > 0 else "-"
            if peer and not peer["emulated"]:
                peer_text = f"{ratio(peer)} ({peer['impl']}: {peer['tflops']:.2f} TFLOP/s)"
            else:
                peer_text = f"- ({peer['impl']}: {EMULATED_TEXT})" if peer else "-"
            rows.append(f"| {name} | {shape_text(key)} | {s['ms']:.3f} | {s['tflops']:.2f} | {s['gbps']:.0f} | "
                        f"{ratio(pred)} | {peer_text} |")
    return rows


def table(runs):
    head = ["| stage | shape | time ms | TFLOP/s | GB/s | vs predecessor | vs peer (peer: its TFLOP/s) |",
            "|---|---|---|---|---|---|---|"]
    lines = []
    for run in runs:
        if measure(run) == "gemv":
            lines.append("\n" + gemv_table(run, variants=len(runs) == 1))
            continue
        note = " (tcgen05 EMULATED: not performance)" if run["emulated"] else ""
        lines.append(f"\n**{run['stage']}**{note}: {stamp(run['ctx'])}\n")
        lines += head + table_rows(run)
    return "\n".join(lines).strip() + "\n"


def between_markers(text, body, begin=BEGIN, end=END):
    """`text` with `body` between the markers, or None when the markers are missing."""
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{begin}\n{body}{end}", text)


BW_BEGIN, BW_END = "<!-- bandwidth:begin -->", "<!-- bandwidth:end -->"


def bandwidth_table(run):
    """The non-GEMM benchmarks of a run, each against the device copy of the same shape."""
    extras = run.get("extras", [])
    copy = {e["shape"]: e["gbps"] for e in extras if e["role"] == "copy"}
    lines = [f"{stamp(run['ctx'])}", "", "| operation | shape | time ms | GB/s | of device copy |", "|---|---|---|---|---|"]
    for e in extras:
        frac = f"{100 * e['gbps'] / copy[e['shape']]:.1f}%" if e["shape"] in copy else "-"
        lines.append(f"| {e['name']} | {e['shape']} | {e['ms']:.3f} | {e['gbps']:.0f} | {frac} |")
    return "\n".join(lines) + "\n"


def ncu_table(doc):
    """A docs/ncu_metrics.py file as a markdown table."""
    def v(metrics, name):
        return metrics.get(name, {}).get("value", float("nan"))
    shape = "x".join(str(v) for v in doc["shape"]) if "shape" in doc else f"{doc['size']}^3"
    if doc.get("tcgen05", "").startswith("EMULATED"):
        # Timings, pipes and stalls of an emulated run describe the emulator. The shared-memory stores
        # are the kernel's own (the emulator keeps its state in global memory).
        lines = [f"Nsight Compute {doc['ncu'].split()[1] if len(doc['ncu'].split()) > 1 else doc['ncu']} on "
                 f"{doc['gpu']}, {shape}, first launch, tcgen05 EMULATED: shared-memory stores only "
                 "(`python3 docs/ncu_metrics.py`):", "",
                 "| stage | shared stores (warp instructions) | store wavefronts | wavefronts per store | "
                 "store bank conflicts |", "|---|---|---|---|---|"]
        for stage, entry in doc["stages"].items():
            m = entry["metrics"]
            stores = v(m, "sm__sass_inst_executed_op_shared_st.sum")
            waves = v(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
            lines.append(f"| {stage} | {stores:,.0f} | {waves:,.0f} | {waves / stores if stores else float('nan'):.2f} | "
                         f"{v(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'):,.0f} |")
        return "\n".join(lines) + "\n"
    lines = [f"Nsight Compute {doc['ncu'].split()[1] if len(doc['ncu'].split()) > 1 else doc['ncu']} on "
             f"{doc['gpu']}, {shape}, first launch (`python3 docs/ncu_metrics.py`):", "",
             "| stage | registers / thread | shared loads | load wavefronts | load bank conflicts | shared stores | store wavefronts | "
             "store bank conflicts | FMA pipe active | DRAM throughput | warps active | long_scoreboard | "
             "top stall reasons (cycles per issued instruction) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for stage, entry in doc["stages"].items():
        m = entry["metrics"]
        stalls = sorted(((v(m, k), k.split("stalled_")[1].split("_per_issue")[0]) for k in m
                         if "issue_stalled" in k and not k.split("stalled_")[1].startswith("selected")),
                        reverse=True)[:3]
        lines.append(
            f"| {stage} | {v(m, 'launch__registers_per_thread'):.0f} | "
            f"{v(m, 'sm__sass_inst_executed_op_shared_ld.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum'):,.0f} | "
            f"{v(m, 'sm__sass_inst_executed_op_shared_st.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum'):,.0f} | "
            f"{v(m, 'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum'):,.0f} | "
            f"{v(m, 'sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active'):.1f}% | "
            f"{v(m, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):.1f}% | "
            f"{v(m, 'sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}% | "
            f"{v(m, 'smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio'):.2f} | "
            + ", ".join(f"{name} {val:.2f}" for val, name in stalls) + " |")
    return "\n".join(lines) + "\n"


# --- Generated prose: which GPU produced what, and what each layer adds (from the data, never typed in) -------

GPUS_BEGIN, GPUS_END = "<!-- gpus:begin -->", "<!-- gpus:end -->"
LAYERS_BEGIN, LAYERS_END = "<!-- layers:begin -->", "<!-- layers:end -->"


def stage_span(stages):
    """['00_naive', '01_x', '02_y'] -> '00-02'; ['05_a', '07_b'] -> '05, 07'."""
    keys = [stage_key(s) for s in stages]
    nums = [int(k[:2]) for k in keys]
    if len(keys) > 2 and all(k.isdigit() for k in keys) and nums == list(range(nums[0], nums[0] + len(nums))):
        return f"{keys[0]}-{keys[-1]}"
    return ", ".join(keys)


def article(gpu):
    return "an" if re.match(r"(?i)[aeiou]|NVIDIA|H\d|RTX", gpu) and not gpu.lower().startswith("u") else "a"


def gpu_sentences(runs):
    """One sentence per (GPU, emulated or not), in stage order, from the runs' own contexts."""
    groups = []
    for run in runs:
        key = (run["ctx"]["gpu"], run["emulated"])
        if groups and groups[-1][0] == key:
            groups[-1][1].append(run["stage"])
        else:
            groups.append((key, [run["stage"]]))
    out = []
    tcgen05 = {s.folder for s in stages.tcgen05_stages()}
    for (gpu, emulated), names in groups:
        span = stage_span(names)
        word = "Stage" if len(names) == 1 else "Stages"
        if len(names) > 1 and set(names) == tcgen05:
            word, span = "The `tcgen05` stages", f"({span})"
        if emulated:
            out.append(f"{word} {span} ran on {article(gpu)} **{gpu}** with `tcgen05` emulated: those runs are "
                       "correctness results, and their times mean nothing.")
        else:
            out.append(f"{word} {span} {'was' if len(names) == 1 else 'were'} measured on {article(gpu)} **{gpu}**.")
    return " ".join(out)


def gpus_section(runs):
    return (gpu_sentences(runs) if runs else "No benchmark data yet.") + "\n"


def layers_section(runs, model):
    """The two tables of docs/README.md's "What each layer adds": measured stages at SUMMARY_SHAPES, and the
    tcgen05 stages by their test results and the B200 model. What a stage adds is its kStage idea
    (tools/stages.py), or the idea its run recorded where the stage is not in CMakeLists.txt."""
    def idea(name, run=None):
        step = stages.find_step(name)
        return (step.idea if step and step.idea else None) or (run or {}).get("ctx", {}).get("stage_idea") or "-"
    def link(stage):
        return f"[{stage}](../{stage}/README.md)" if (ROOT / stage).is_dir() else stage
    measured = [r for r in runs if not r["emulated"] and measure(r) != "gemv"]
    emulated = [r for r in runs if r["emulated"]]
    gemvs = [r for r in runs if measure(r) == "gemv" and not r["emulated"]]
    lines = []
    gpus = sorted({r["ctx"]["gpu"] for r in measured})
    if measured:
        gpu = " / ".join(gpus)
        heads = [f"{gpu}, {shape_text(k)}" if not is_square(k) else f"{gpu}, {k[0]}^3" for k in SUMMARY_SHAPES]
        lines += [f"Measured: TFLOP/s on the {gpu} at {' and '.join(shape_text(k) for k in SUMMARY_SHAPES)} "
                  "([the tables below](#results)); in brackets, against the stage before.", "",
                  f"| stage | adds | {heads[0]} | {heads[1]} |", "| --- | --- | --- | --- |"]
        for i, run in enumerate(measured):
            cells = []
            for key in SUMMARY_SHAPES:
                s, p = find(run, "stage", key), find(run, "predecessor", key)
                if not s:
                    cells.append("-")
                    continue
                text = f"{s['tflops']:.3g}" + (" TFLOP/s" if i == 0 and key == SUMMARY_SHAPES[0] else "")
                if p and p["tflops"] > 0:
                    text += f" ({s['tflops'] / p['tflops']:.2g}x)"
                cells.append(text)
            lines.append(f"| {link(run['stage'])} | {idea(run['stage'], run)} | {cells[0]} | {cells[1]} |")
    if emulated:
        tested = sorted({r["tests"]["doc"]["gpu"] for r in emulated if r.get("tests")}) or \
            sorted({r["ctx"]["gpu"] for r in emulated})
        heads = [f"B200 MODEL, {k[0]}^3" if is_square(k) else f"B200 MODEL, {shape_text(k)}" for k in SUMMARY_SHAPES]
        lines += ["", "The tensor-core stages: their GPU tests on the " + " / ".join(tested) + " (tcgen05 emulated), "
                  "and the B200 MODEL's lower bound on time at the same shapes, an upper bound on TFLOP/s "
                  "([b200_model.md](b200_model.md)).", "",
                  f"| stage | adds | tests ({' / '.join(tested)}, emulated) | {heads[0]} | {heads[1]} |",
                  "| --- | --- | --- | --- | --- |"]
        for run in emulated:
            t = run["tests"]["doc"]["totals"] if run.get("tests") else None
            tests = f"{t['passed']} of {t['passed'] + t['failed'] + t['skipped']} pass" if t else "not recorded"
            # A stage whose first step the model has apart (05a) gets a row for that step first.
            # Its tests row stays on the stage: the record does not say which step a suite belongs to.
            steps = [(series_key(v), f"{link(run['stage'])}, step 1: `{v}`", idea(v), "not recorded apart")
                     for v in (modelled_variants(model, run) if model else [])]
            steps.append((stage_key(run["stage"]), link(run["stage"]) + (", step 2" if steps else ""),
                          idea(run["stage"], run), tests))
            for key_, name, adds, tests in steps:
                cells = []
                same = model_same_as(model, run["stage"]) if key_ == stage_key(run["stage"]) else None
                for key in SUMMARY_SHAPES:
                    shape = next((s for s in (model["doc"]["shapes"] if model else [])
                                  if (s["M"], s["N"], s["K"], s["L"]) == key), None)
                    st = shape["stages"].get(key_) if shape else None
                    if not st:
                        cells.append("-")
                    elif same:
                        cells.append(f"same bound as {same}")
                    else:
                        cells.append(f">= {st['bound'] * 1e6:.3g} us (<= {shape['flops'] / st['bound'] / 1e12:.0f} TFLOP/s)")
                lines.append(f"| {name} | {adds} | {tests} | {cells[0]} | {cells[1]} |")
    if gemvs:
        lines += ["", "Off the GEMM path: a GEMV (N = 1) moves every byte of the weights once and does 2 FLOPs per "
                  "weight, so DRAM bounds it and its measure is GB/s, against a streaming read of the same bytes in "
                  "the same run ([09's tables](../09_gemv/README.md)):", "",
                  "| stage | adds | " + " | ".join(f"{r['ctx']['gpu']}, {shape_text(k)}" for r in gemvs[:1]
                                                    for k in GEMV_SUMMARY_SHAPES) + " |",
                  "| --- | --- | " + "--- | " * (len(GEMV_SUMMARY_SHAPES) - 1) + "--- |"]
        for run in gemvs:
            ceiling = gemv_ceiling(run)
            cells = []
            for key in GEMV_SUMMARY_SHAPES:
                s, p = find(run, "stage", key), find(run, "predecessor", key)
                c = ceiling.get(shape_text(key))
                if not s or not c:
                    cells.append("-")
                    continue
                cells.append(f"{s['gbps']:.0f} GB/s, {s['gbps'] / c['gbps']:.2f} of the stream"
                             + (f" ({s['gbps'] / p['gbps']:.0f}x {p['impl'][:2]})" if p and p["gbps"] > 0 else ""))
            lines.append(f"| {link(run['stage'])} | {idea(run['stage'], run)} | " + " | ".join(cells) + " |")
            peers = [(p["impl"], p["gbps"] / ceiling[shape_text(k)]["gbps"]) for k in GEMV_SUMMARY_SHAPES
                     for p in [find(run, "peer", k)] if p and shape_text(k) in ceiling]
            if peers:
                lo, hi = min(f for _, f in peers), max(f for _, f in peers)
                lines += ["", f"For scale: {peers[0][0]} reaches {lo:.2f}-{hi:.2f} of the stream at the same shapes "
                              f"on the {run['ctx']['gpu']}."]
    big = SUMMARY_SHAPES[0]
    scale = []
    for run in reversed(measured):
        for r in run["results"]:
            if r["role"] == "peer" and shape_key(r) == big and r["impl"] not in [s[0] for s in scale]:
                scale.append((r["impl"], r["tflops"], run["ctx"]["gpu"]))
    if scale:
        lines += ["", f"For scale, at {big[0]}^3: " + "; ".join(f"{name} ran at {v:.0f} TFLOP/s on the {gpu}"
                                                                 for name, v, gpu in scale) + "."]
        last = measured[-1]
        s, p = find(last, "stage", big), find(last, "peer", big)
        if s and p and p["tflops"] > 0:
            lines[-1] += (f" The last GEMM stage on CUDA cores, {last['stage']}, reaches {100 * s['tflops'] / p['tflops']:.0f}% "
                          f"of {p['impl']}.")
    if model:
        shape = next((s for s in model["doc"]["shapes"] if (s["M"], s["N"], s["K"], s["L"]) == big), None)
        peak = model["doc"]["figures"]["nvfp4_dense_flops"]["value"]
        if shape:
            lines.append(f"The B200's published dense NVFP4 rate is {peak / 1e15:g} PFLOP/s, so its speed of light at "
                         f"{big[0]}^3 is {shape['sol']['t'] * 1e6:.3g} us.")
    return "\n".join(lines).strip() + "\n"


# --- What the script writes -----------------------------------------------------------------------------------

def generated_texts(runs, model):
    """{file: its new text} for every file with a generated section; files without the markers are skipped."""
    texts = {}

    def put(path, body, begin=BEGIN, end=END):
        if not path.exists():
            return
        new = between_markers(texts.get(path, path.read_text()), body, begin, end)
        if new is not None:
            texts[path] = new
    for run in runs:
        readme = ROOT / run["stage"] / "README.md"
        put(readme, table([run]))
        if run["extras"] and measure(run) != "gemv":
            put(readme, bandwidth_table(run), BW_BEGIN, BW_END)
    # Each ncu file fills the <!-- ncu:<file stem> --> section of the READMEs of its stages.
    for ncu_path in sorted(DATA.glob("ncu_*.json")) + sorted(DATA.glob("bank_conflicts.json")):
        doc = json.loads(ncu_path.read_text())
        for stage in doc["stages"]:
            put(ROOT / stage / "README.md", ncu_table(doc), f"<!-- ncu:{ncu_path.stem}:begin -->",
                f"<!-- ncu:{ncu_path.stem}:end -->")
    docs_readme = ROOT / "docs" / "README.md"
    put(docs_readme, table(runs) if runs else "No benchmark data yet.\n")
    put(docs_readme, gpus_section(runs), GPUS_BEGIN, GPUS_END)
    put(docs_readme, layers_section(runs, model), LAYERS_BEGIN, LAYERS_END)
    put(ROOT / "README.md", gpus_section(runs), GPUS_BEGIN, GPUS_END)
    put(ROOT / "README.md", stages.readme_table(), stages.README_BEGIN, stages.README_END)
    return texts
