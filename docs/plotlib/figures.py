"""The figures: a stage's plot, a stage beside your own run (--results), the overview of every measured stage, and the
bank maps; each returned as deterministic SVG bytes (docs/plotting.py).
"""
import textwrap

import plotting
from plotting import series_style
from .data import OWN_ROLES, PLOTS, short_commit, TESTS, measure, is_square, performance, shape_key, sources, stamp
from .panels import PANELS_PER_ROW, log_limits, panels_of

def figure_legend(fig, axes, ncol=3):
    """One legend for the figure, under its panels, never over data: a series has one style everywhere."""
    handles, labels = [], []
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    if handles:
        try:
            fig.legend(handles, labels, loc="outside lower center", ncol=min(ncol, len(labels)), frameon=False)
        except ValueError:  # matplotlib < 3.7 (--results accepts any version): below the panels, inside
            fig.legend(handles, labels, loc="lower center", ncol=min(ncol, len(labels)), frameon=False)


def wrap(text, width=115):
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def run_title(run, modelled=True):
    """`modelled`: the figure has the B200 model's panels (a stage the model of docs/b200_model.py covers)."""
    title = f"{run['stage']}: {run['ctx'].get('stage_idea', '')}"
    if run["emulated"]:
        title += (f"\nOn the {run['ctx']['gpu']} tcgen05 ran EMULATED, so its times are not performance and are not "
                  "drawn. Drawn instead: " + ("the B200 MODEL of the stage, and its test results" if modelled else
                                             "its test results (its B200 model is in the stage's README)"))
        if not run.get("tests"):
            title += (f" (none recorded in {run['path'].parent.name}/{TESTS}/{run['stage']}.json: the stage's README "
                      "says what was run and checked)")
    else:
        title += f"\nmeasured on {stamp(run['ctx'])}"
    return wrap(title)


def plot_stage(plt, run, model, audit=None):
    """A stage's figure as SVG bytes: panels two to a row (an odd last one spans the row; a GEMV's, one to a row:
    they have ten shapes each), one legend below."""
    panels = panels_of(run, model)
    per_row = PANELS_PER_ROW[measure(run)]
    rows = (len(panels) + per_row - 1) // per_row
    fig = plt.figure(figsize=(11, 0.9 + 3.9 * rows), layout="constrained")
    grid = fig.add_gridspec(rows, 2)
    axes = []
    for i, (kind, draw) in enumerate(panels):
        last_alone = per_row == 1 or (i == len(panels) - 1 and len(panels) % 2 == 1)
        ax = fig.add_subplot(grid[i // per_row, :] if last_alone else grid[i // 2, i % 2])
        draw(ax)
        axes.append(ax)
    figure_legend(fig, axes)
    fig.suptitle(run_title(run, any(name == "model" for name, _ in panels)), fontsize=10.5)
    data = plotting.svg_bytes(fig, plotting.source_line(sources(run, model)))
    if audit is not None:
        audit.append(drawn(fig, f"{run['stage']}.svg"))
    plt.close(fig)
    return data


def plot_beside(plt, docs_run, your_run, model, audit=None):
    """--results: the committed run (left, or above for a GEMV) and yours (right, or below), one row (pair of
    rows) per kind of panel, each on one y scale; the two GPUs never share a panel."""
    cols = [(f"docs/data: {docs_run['ctx']['gpu']}", docs_run) if docs_run else None,
            (f"yours: {your_run['ctx']['gpu']}", your_run)]
    kinds = []
    per_col = []
    for col in cols:
        p = dict(panels_of(col[1], model)) if col else {}
        per_col.append(p)
        kinds += [k for k in p if k not in kinds]
    # A GEMV's panels have ten shapes each: too many for half a row, so the two runs go one above the other.
    stacked = PANELS_PER_ROW[measure(your_run)] == 1 or bool(docs_run and PANELS_PER_ROW[measure(docs_run)] == 1)
    rows = 2 * len(kinds) if stacked else len(kinds)
    fig = plt.figure(figsize=(11, 1.0 + 3.6 * rows), layout="constrained")
    grid = fig.add_gridspec(rows, 1 if stacked else 2)
    axes = []
    for row, kind in enumerate(kinds):
        row_axes = []
        for c, (col, p) in enumerate(zip(cols, per_col)):
            ax = fig.add_subplot(grid[2 * row + c, 0] if stacked else grid[row, c])
            if col is None or kind not in p:
                ax.axis("off")
                ax.text(0.5, 0.5, "no committed run of this stage" if col is None else "nothing of this kind",
                        ha="center", va="center", transform=ax.transAxes)
                continue
            p[kind](ax)
            ax.set_title(f"{col[0]}\n{ax.get_title()}", fontsize=9.5)
            row_axes.append(ax)
        if len(row_axes) == 2 and kind not in ("tests", "gemv_variants"):
            lo = min(a.get_ylim()[0] for a in row_axes)
            hi = max(a.get_ylim()[1] for a in row_axes)
            for a in row_axes:
                a.set_ylim(lo, hi)
        axes += row_axes
    figure_legend(fig, axes)
    fig.suptitle(wrap(f"{your_run['stage']}: your run beside the committed one\nyours: {stamp(your_run['ctx'])}"
                      + (f"\ncommitted: {stamp(docs_run['ctx'])}" if docs_run else "")), fontsize=10)
    data = plotting.svg_bytes(fig)
    if audit is not None:
        audit.append(drawn(fig, f"{your_run['stage']}.svg"))
    plt.close(fig)
    return data


def overview_groups(runs):
    """Measured GEMM runs grouped by where they ran: {(source, gpu): [runs]}. Emulated runs are left out, and
    GEMV runs (GB/s at N = 1, no square problems: their own plot)."""
    groups = {}
    for run in runs:
        if not run["emulated"] and measure(run) != "gemv":
            groups.setdefault((run.get("source", "docs/data"), run["ctx"]["gpu"]), []).append(run)
    return groups


def plot_overview(plt, runs, audit=None):
    """Every measured stage on square problems, one panel per GPU (never two GPUs in one panel)."""
    groups = overview_groups(runs)
    n = max(1, len(groups))
    fig, axes = plt.subplots(n, 1, figsize=(11, 0.8 + 4.6 * n), layout="constrained", squeeze=False)
    axes = [a[0] for a in axes]
    used = []
    for ax, ((source, gpu), group) in zip(axes, sorted(groups.items())):
        peers = {}
        for run in group:
            results = [r for r in performance(run["results"]) if is_square(shape_key(r))]
            for role in OWN_ROLES:
                for impl in dict.fromkeys(r["impl"] for r in results if r["role"] == role):
                    pts = sorted((r["M"], r["tflops"]) for r in results if r["impl"] == impl and r["role"] == role)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], label=run["stage"] if role == "stage" else impl,
                            **series_style(impl, role))
            for r in results:
                if r["role"] == "peer":
                    peers.setdefault(r["impl"], {})[r["M"]] = r["tflops"]  # the latest stage's run of it
            used.append(run)
        for name, pts in peers.items():
            ax.plot(sorted(pts), [pts[x] for x in sorted(pts)], label=name, **series_style(name, "peer"))
        xs = sorted({x for line in ax.get_lines() for x in line.get_xdata()})
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(int(x)) for x in xs])
        ax.minorticks_off()
        ax.set_yscale("log")
        log_limits(ax, [y for line in ax.get_lines() for y in line.get_ydata()])
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TFLOP/s (log scale)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        ax.set_title(f"Every measured stage on square problems, {gpu}" + ("" if source == "docs/data" else f" ({source})"))
    if not groups:
        axes[0].axis("off")
        axes[0].text(0.5, 0.5, "no measured runs", ha="center", va="center")
    emulated = [r["stage"] for r in runs if r["emulated"]]
    note = ""
    if emulated:
        gpus = sorted({r["ctx"]["gpu"] for r in runs if r["emulated"]})
        note = (f"Not drawn: {', '.join(emulated)} (tcgen05 emulated on {', '.join(gpus)}, so no performance; "
                "their B200 model is in b200_model.svg or the stage's README)")
    gemvs = [r["stage"] for r in runs if measure(r) == "gemv" and not r["emulated"]]
    if gemvs:
        note += ("; " if note else "Not drawn: ") + f"{', '.join(gemvs)} (a GEMV, N = 1: GB/s in its own plot)"
    envs = {}
    for r in used:
        c = r["ctx"]
        envs.setdefault(f"{c['gpu']}, CUDA {c['runtime_cuda_version']}, driver {c['driver_cuda_version']}", set()).update(
            {c["date"][:10], short_commit(c["commit"])})
    stamps = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(envs.items()))
    fig.suptitle(wrap("Every measured stage" + (f"\n{note}" if note else "") + f"\n{stamps}", 130), fontsize=9.5)
    data = plotting.svg_bytes(fig, plotting.source_line([r["path"] for r in used]) if used else "")
    if audit is not None:
        audit.append(drawn(fig, "overview.svg"))
    plt.close(fig)
    return data


def plot_bank_map(plt, path, doc):
    """One warp's 16-byte shared-memory reads as wavefronts: x = bank, y = wavefront, a box per lane."""
    from matplotlib.patches import Rectangle
    layouts = doc["layouts"]
    fig, axes = plt.subplots(1, len(layouts), figsize=(6 * len(layouts), 5.2), squeeze=False)
    lanes_per_phase = 128 // doc["width_bytes"]
    for ax, (name, layout) in zip(axes[0], layouts.items()):
        y0 = 0
        lanes = layout["lanes"]
        for first in range(0, len(lanes), lanes_per_phase):
            phase = lanes[first:first + lanes_per_phase]
            seen = {}  # bank group -> distinct addresses already placed in this phase
            for a in phase:
                group = (a["byte"] // doc["width_bytes"]) % (128 // doc["width_bytes"])
                addrs = seen.setdefault(group, [])
                if a["byte"] not in addrs:
                    addrs.append(a["byte"])
                level = addrs.index(a["byte"])
                ax.add_patch(Rectangle((group * 4, y0 + level), 4, 1, facecolor=f"C{first // lanes_per_phase}",
                                       edgecolor="white", alpha=0.75))
                ax.text(group * 4 + 2, y0 + level + 0.5, f"L{a['lane']} r{a['row']}", ha="center",
                        va="center", fontsize=5.5)
            y0 += max(len(v) for v in seen.values())
        ax.set_xlim(0, 32)
        ax.set_ylim(y0, 0)
        ax.set_xticks(range(0, 33, 4))
        ax.set_xlabel("bank")
        ax.set_ylabel("wavefront")
        ax.set_title(f"{name}: {layout['wavefronts']} wavefronts (ideal {layout['ideal']})", fontsize=10)
    fig.suptitle(f"{doc['stage']}: {doc['access']}\n(colour = phase of {lanes_per_phase} lanes; "
                 "lanes 16-31 read the rows of lanes 0-15)", fontsize=9)
    fig.tight_layout()
    data = plotting.svg_bytes(fig, plotting.source_line([path]))
    plt.close(fig)
    return data


def drawn(fig, name):
    """What a figure shows: every y value of its lines and bars, and its legend entries."""
    values, labels = [], []
    legends = list(fig.legends)
    for ax in fig.axes:
        for line in ax.get_lines():
            values += [float(v) for v in line.get_ydata()]
        values += [float(p.get_height()) for p in ax.patches if hasattr(p, "get_height")]
        values += [float(p.get_width()) for p in ax.patches if hasattr(p, "get_width")]
        if ax.get_legend():
            legends.append(ax.get_legend())
    for legend in legends:
        labels += [t.get_text() for t in legend.get_texts()]
    return dict(name=name, values=values, labels=labels)


def plot_sources(runs, model, bank_maps):
    """{plot file: the data files it is drawn from}."""
    out = {PLOTS / f"{run['stage']}.svg": sources(run, model) for run in runs}
    if runs:
        out[PLOTS / "overview.svg"] = [r["path"] for group in overview_groups(runs).values() for r in group]
    for path, _ in bank_maps:
        out[PLOTS / path.name.replace(".json", ".svg")] = [path]
    return out


def render_all(plt, runs, model, bank_maps):
    """{plot file: SVG bytes}."""
    out = {PLOTS / f"{run['stage']}.svg": plot_stage(plt, run, model) for run in runs}
    if runs:
        out[PLOTS / "overview.svg"] = plot_overview(plt, runs)
    for path, doc in bank_maps:
        out[PLOTS / path.name.replace(".json", ".svg")] = plot_bank_map(plt, path, doc)
    return out
