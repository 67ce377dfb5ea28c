"""What docs/plot.py draws from: loading and validating the benchmark JSON (docs/data/*.json), the test records
(docs/data/tests/) and the B200 model (docs/data/b200_model.json), and the small helpers every other module of the
package reads runs with (shapes, roles, the run's kind).
"""
import json
import re
import pathlib

import plotting
import stages
from plotting import series_key, stage_key

ROOT = plotting.ROOT
DATA = ROOT / "docs" / "data"
PLOTS = ROOT / "docs" / "plots"
TESTS = "tests"              # docs/data/tests/<stage>.json: a stage's test results (docs/test_results.py)
MODEL = "b200_model.json"    # docs/data/b200_model.json: the B200 MODEL (docs/b200_model.py)
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
REQUIRED_CONTEXT = ["stage", "gpu", "sm_count", "sm_clock_max_mhz", "clocks_now", "driver_cuda_version",
                    "runtime_cuda_version", "commit", "tcgen05", "date"]
REQUIRED_COUNTERS = ["TFLOP/s", "GB/s", "M", "N", "K", "L"]
ROLES = ("stage", "variant", "predecessor", "peer")
ROLE_STYLE = dict.fromkeys(ROLES)  # the labels a benchmark row may carry (styles: docs/plotting.py)
# The rows that are the stage itself: its own, and other configurations of its kernel.
OWN_ROLES = ("stage", "variant")
# A label may follow its role with this word: tcgen05 ran in the emulator, the time is not performance.
EMULATED = "EMULATED"
EMULATED_TEXT = "EMULATED (not performance)"
# Benchmarks that are not GEMMs (stage 03's quantizer and the copy it is measured against; stage 09's
# streaming-read kernel, the ceiling of a GEMV: it reads the bytes a GEMV must move and does nothing else).
BANDWIDTH_ROLES = ("quantizer", "copy", "stream")
# The shapes the summary table of docs/README.md quotes: a large square, and the M = 128 decode-like shape.
SUMMARY_SHAPES = ((4096, 4096, 4096, 1), (128, 7168, 16384, 1))
# A GEMV's (stage 09): the three problems of the GPU MODE NVFP4 GEMV competition (M x 1 x K x L).
GEMV_SUMMARY_SHAPES = ((7168, 1, 16384, 1), (4096, 1, 7168, 8), (7168, 1, 2048, 4))
class DataError(Exception):
    pass


def parse_label(label):
    """A benchmark's label as (role, emulated): "stage" -> ("stage", False), "variant EMULATED" ->
    ("variant", True); None for anything else."""
    words = str(label or "").split()
    if words and words[0] in ROLES and words[1:] in ([], [EMULATED]):
        return words[0], len(words) == 2
    return None


def load(path):
    with open(path) as f:
        doc = json.load(f)
    ctx = doc.get("context", {})
    missing = [k for k in REQUIRED_CONTEXT if k not in ctx]
    if missing:
        raise DataError(f"{path}: context lacks {missing}")
    # Rows labelled "host" time the CPU side of a launcher call (stage 10's host time per call): no plot draws them.
    timed = [b for b in doc.get("benchmarks", []) if b.get("label") != "host"]
    rows = [b for b in timed if b.get("run_type", "iteration") == "iteration"]
    medians = [b for b in timed if b.get("aggregate_name") == "median"]
    rows = medians or rows
    if not rows:
        raise DataError(f"{path}: no benchmark results")
    extras = []
    for b in rows:
        if "error_occurred" in b and b["error_occurred"]:
            raise DataError(f"{path}: {b['name']} failed: {b.get('error_message')}")
        if b.get("label") in BANDWIDTH_ROLES:
            if "GB/s" not in b:
                raise DataError(f"{path}: {b['name']} lacks GB/s")
            shape = (shape_text((int(b["M"]), int(b["N"]), int(b["K"]), int(b.get("L", 1)))) if "M" in b
                     else b.get("run_name", b["name"]).split("/")[1])
            extras.append(dict(name=b.get("run_name", b["name"]).split("/")[0], role=b["label"],
                               shape=shape, gbps=float(b["GB/s"]),
                               ms=float(b["real_time"]) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]))
            continue
        lacking = [c for c in REQUIRED_COUNTERS if c not in b]
        if lacking:
            raise DataError(f"{path}: {b['name']} lacks counters {lacking}")
        if parse_label(b.get("label")) is None:
            raise DataError(f"{path}: {b['name']} has no role label ({', '.join(ROLE_STYLE)}, optionally followed "
                            f"by ' {EMULATED}'): {b.get('label')!r}")
    results = []
    for b in rows:
        if b.get("label") in BANDWIDTH_ROLES:
            continue
        impl = b.get("run_name", b["name"]).split("/")[0]
        role, emulated = parse_label(b["label"])
        dims = (int(b["M"]), int(b["N"]), int(b["K"]), int(b["L"]))
        # A shape the kind names beyond its sizes (stage 11's "512x512x512_bf16": another output type) keeps
        # that tag, so that it is not taken for the plain shape of the same sizes.
        name = b.get("run_name", b["name"]).split("/")[1] if "/" in b.get("run_name", b["name"]) else ""
        tag = name[len(shape_text(dims)):].lstrip("_") if name.startswith(shape_text(dims) + "_") else ""
        results.append(dict(impl=impl, role=role, emulated=emulated, tag=tag,
                            M=dims[0], N=dims[1], K=dims[2], L=dims[3],
                            tflops=float(b["TFLOP/s"]), gbps=float(b["GB/s"]),
                            ms=float(b["real_time"]) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]))
    return dict(path=pathlib.Path(path), stage=ctx["stage"], ctx=ctx, results=results, extras=extras,
                emulated=str(ctx["tcgen05"]).startswith("EMULATED"), kind=stages.kind_of_run(ctx))


def performance(results):
    """The rows whose time is performance: every row but those that ran tcgen05 EMULATED. Every plot
    draws from this and nothing else; table_rows() gives EMULATED rows their time and no ratio."""
    return [r for r in results if not r["emulated"]]


def emulated_names(results):
    return sorted({f"{r['impl']} ({r['role']})" for r in results if r["emulated"]})


def shape_key(r):
    """(M, N, K, L), and the shape's tag as a fifth element where it has one (shape_text shows it)."""
    return (r["M"], r["N"], r["K"], r["L"]) + ((r["tag"],) if r.get("tag") else ())


def shape_text(key):
    m, n, k, l, *tag = key
    return f"{m}x{n}x{k}" + (f"x{l}" if l > 1 else "") + (f"_{tag[0]}" if tag else "")


def is_square(key):
    return len(key) == 4 and key[0] == key[1] == key[2] and key[3] == 1


def load_model(data_dir=DATA):
    """docs/data/b200_model.json, or None."""
    path = pathlib.Path(data_dir) / MODEL
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    if "shapes" not in doc:
        raise DataError(f"{path}: not a docs/b200_model.py file (no 'shapes')")
    return dict(path=path, doc=doc)


def load_tests(data_dir, stage):
    """docs/data/tests/<stage>.json (docs/test_results.py), or None."""
    path = pathlib.Path(data_dir) / TESTS / f"{stage}.json"
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    for key in ("gpu", "tcgen05", "suites", "totals", "commit", "date"):
        if key not in doc:
            raise DataError(f"{path}: lacks {key!r} (write it with docs/test_results.py)")
    return dict(path=path, doc=doc)


def load_runs(data_dir):
    """Every benchmark run in a folder, in teaching order (tools/stages.py), each with its tests record and the
    files it is drawn from."""
    data_dir = pathlib.Path(data_dir)
    runs = []
    for p in sorted(data_dir.glob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise DataError(f"{p}: not JSON ({e})")
        if isinstance(doc, dict) and "benchmarks" in doc:
            run = load(p)
            run["tests"] = load_tests(data_dir, run["stage"])
            run["other_gpus"] = other_gpu_runs(data_dir, run)
            runs.append(run)
    order = {s.folder: i for i, s in enumerate(stages.read())}  # teaching order (CMakeLists.txt), then the rest
    return sorted(runs, key=lambda r: (order.get(r["stage"], len(order)), r["stage"]))


def rotation_rule(ctx):
    """A run's input-rotation rule without the L2 size it names (the same rule on GPUs with other L2s)."""
    return re.sub(r"\(\d+ MiB\)", "(L2)", str(ctx.get("input_rotation", "")))


def other_gpu_runs(data_dir, run):
    """The same stage measured on other GPUs under the same input-rotation rule: docs/data/timing/<stage>_*.json,
    the newest run per GPU (older rules and the run's own GPU left out, so every series compares like with
    like)."""
    newest = {}
    for p in sorted((pathlib.Path(data_dir) / "timing").glob(f"{run['stage']}_*.json")):
        try:
            ctx = json.loads(p.read_text()).get("context", {})
        except (json.JSONDecodeError, AttributeError):
            continue
        if (ctx.get("stage") != run["stage"] or ctx.get("gpu") == run["ctx"].get("gpu")
                or rotation_rule(ctx) != rotation_rule(run["ctx"])):
            continue
        if ctx.get("date", "") > newest.get(ctx.get("gpu"), ("", None))[0]:
            newest[ctx.get("gpu")] = (ctx.get("date", ""), p)
    return [load(p) for _, p in (newest[g] for g in sorted(newest))]


def missing_data(runs, data_dir=DATA):
    """Stage folders of the repository with no benchmark JSON in data_dir: reported, never a crash."""
    have = {r["stage"] for r in runs}
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and stage_key(p.name) and (p / "bench.cu").exists())
    return [f for f in folders if f not in have]


def stamp(ctx):
    return (f"{ctx['gpu']} | SM clock max {ctx['sm_clock_max_mhz']} MHz | CUDA runtime {ctx['runtime_cuda_version']}, "
            f"driver {ctx['driver_cuda_version']} | {ctx['date'][:10]} | commit {ctx['commit']}")


def short_commit(commit):
    """A commit label cut to 7 hex digits, keeping what follows them ("+patch", "-dirty"): a run of a
    patched or modified tree must not read as the commit itself."""
    c = str(commit)
    m = re.match(r"[0-9a-f]{7,40}", c)
    return c[:7] + c[m.end():] if m else c


def short_stamp(ctx):
    return f"{ctx['gpu']}, CUDA {ctx['runtime_cuda_version']}, {ctx['date'][:10]}, commit {short_commit(ctx['commit'])}"


def sources(run, model):
    """The files a run's plot is drawn from."""
    paths = [run["path"]] + [o["path"] for o in run.get("other_gpus", [])]
    if run["emulated"]:
        if model:
            paths.append(model["path"])
        if run.get("tests"):
            paths.append(run["tests"]["path"])
    return paths


def series_label(impl, role):
    return f"{impl} ({role})" if role != "peer" else impl


def impls_of(results):
    out = []
    for role in ROLES:
        for r in results:
            if r["role"] == role and (r["impl"], role) not in out:
                out.append((r["impl"], role))
    return out


def model_series(model, stage_name):
    """[(M, N, K, predicted TFLOP/s upper bound)] of a stage (or a variant with a key of its own, such as 05a)
    in the B200 model, or None when it has none."""
    key = series_key(stage_name)
    shapes = model["doc"]["shapes"] if model else []
    for k in (key, (key or "")[:2]):
        if shapes and k in shapes[0]["stages"]:
            return [(s["M"], s["N"], s["K"], s["flops"] / s["stages"][k]["bound"] / 1e12) for s in shapes]
    return None


def model_same_as(model, stage_name):
    key = stage_key(stage_name)
    shapes = model["doc"]["shapes"] if model else []
    st = shapes[0]["stages"].get(key, {}) if shapes else {}
    return st.get("same_as")


def modelled_variants(model, run):
    """The variants of a run that the B200 model has a series of their own for (stage 05's first step)."""
    names = dict.fromkeys(r["impl"] for r in run["results"] if r["role"] == "variant")
    return [n for n in names if series_key(n) != series_key(run["stage"]) and model_series(model, n)
            and series_key(n) in model["doc"]["shapes"][0]["stages"]]


# --- What a run measures: its kind ----------------------------------------------------------------------------
# A run's kind is its JSON context's "kind" ("fp32_gemm", "nvfp4_gemm", "nvfp4_gemv", and kinds to come), or,
# for results written before the key existed, the fallback of tools/stages.py (kind_of_run). A kind is measured
# like a GEMM (TFLOP/s against the predecessor and the peer, the overview, the summary tables) or like a GEMV
# (GB/s against the streaming read of the same run, its ceiling): stages.measured_like(kind).

def measure(run):
    """"gemm" or "gemv": how a run's kind is measured, and so which panels and tables it gets."""
    return stages.measured_like(run.get("kind") or stages.kind_of_run(run["ctx"]))


# --- A GEMV, measured in GB/s against the streaming-read ceiling of the same run -------------------------------


def gemv_ceiling(run):
    """{shape text: the fastest streaming-read row of that shape}: the ceiling of a GEMV run."""
    best = {}
    for e in run.get("extras", []):
        if e["role"] == "stream" and e["gbps"] > best.get(e["shape"], {"gbps": 0.0})["gbps"]:
            best[e["shape"]] = e
    return best


def gemv_keys(run):
    """The shapes of a GEMV run, smallest to largest by the bytes the weights take (M x K x L)."""
    return sorted({shape_key(r) for r in run["results"]}, key=lambda k: (k[0] * k[2] * k[3], k))


def predecessor_of(run):
    return next((r["impl"] for r in run["results"] if r["role"] == "predecessor"), None)


def find(run, impl_role, key):
    return next((r for r in run["results"] if shape_key(r) == key and not r["emulated"]
                 and (r["role"] == impl_role or r["impl"] == impl_role)), None)


def rel(path):
    try:
        return str(pathlib.Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
