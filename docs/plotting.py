"""What every plotting script of docs/ shares: the pinned matplotlib, deterministic SVG output, writing a file
only when it changed, and the fixed style of each series.

The plots in docs/plots are byte-for-byte reproducible with the matplotlib pinned in docs/requirements.txt:
ids come from a fixed salt, no date is written, text is drawn as paths from the DejaVu Sans that ships inside
matplotlib (no system font is looked up). Another matplotlib version lays out the same data with different
bytes, so the committed plots are redrawn, and compared by --check, only under the pinned one.
"""
import hashlib
import io
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import stages  # noqa: E402  (tools/stages.py: the stage facts, from CMakeLists.txt and each step's kStage)
REQUIREMENTS = ROOT / "docs" / "requirements.txt"
INSTALL_HINT = ("python3 -m venv .venv && .venv/bin/pip install -r docs/requirements.txt, then run the script with "
                ".venv/bin/python")


def pinned_version():
    m = re.search(r"^matplotlib==([\w.]+)\s*$", REQUIREMENTS.read_text(), re.M)
    if not m:
        raise RuntimeError(f"{REQUIREMENTS.relative_to(ROOT)} does not pin matplotlib (matplotlib==X.Y.Z)")
    return m.group(1)


def pyplot():
    """(pyplot or None, why not pinned or None). pyplot is None when matplotlib is missing; the reason is None
    when the installed version is the pinned one (then the output matches the committed plots byte for byte)."""
    want = pinned_version()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None, f"matplotlib is not installed (docs/requirements.txt pins {want}: {INSTALL_HINT})"
    plt.rcParams.update({
        "svg.hashsalt": "nvfp4-gemm",   # stable ids: a regenerated plot diffs cleanly
        "svg.fonttype": "path",         # text as paths: every browser and librsvg render the same glyphs
        "font.family": "DejaVu Sans",   # the font inside matplotlib, never a system font
        "font.size": 10,
        "axes.titlesize": 10.5,
        "legend.fontsize": 9,
        "hatch.linewidth": 0.5,
    })
    if matplotlib.__version__ != want:
        return plt, (f"matplotlib {matplotlib.__version__} is installed; the committed plots are drawn with "
                     f"{want} (docs/requirements.txt): {INSTALL_HINT}")
    return plt, None


def svg_bytes(fig, description=""):
    """The figure as SVG bytes, without a date; `description` goes into the SVG's metadata (what it was drawn
    from), where --check reads it back."""
    buf = io.BytesIO()
    meta = {"Date": None}
    if description:
        meta["Description"] = description
    fig.savefig(buf, format="svg", metadata=meta)
    return buf.getvalue()


def write_if_changed(path, data):
    """Writes bytes or text only when they differ from the file's; True when the file changed."""
    path = pathlib.Path(path)
    new = data.encode() if isinstance(data, str) else data
    if path.exists() and path.read_bytes() == new:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(new)
    return True


def digest(paths):
    """A short fingerprint of the bytes of the files a plot is drawn from."""
    h = hashlib.sha256()
    for p in sorted(pathlib.Path(p) for p in paths):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def source_line(paths):
    """The SVG description naming the data of a plot and its fingerprint ("data sha256:<16 hex>")."""
    rel = []
    for p in sorted(pathlib.Path(p) for p in paths):
        try:
            rel.append(str(p.resolve().relative_to(ROOT)))
        except ValueError:
            rel.append(p.name)
    return f"drawn from {', '.join(rel)}; data sha256:{digest(paths)}"


def recorded_digest(svg_path):
    """The fingerprint a committed SVG was drawn from, or None."""
    try:
        m = re.search(r"data sha256:([0-9a-f]{16})", pathlib.Path(svg_path).read_text(errors="replace"))
    except OSError:
        return None
    return m.group(1) if m else None


# --- One style per series, in every plot -------------------------------------------------------------------------
# A stage is drawn in its own colour and marker wherever it appears: as the stage in its own plot, as the
# predecessor in the next stage's plot, in the overview, and in the B200 model. The colour and marker come from
# tools/stages.py (the step's position in teaching order, in a fixed palette), so a new stage needs nothing here;
# a series of no stage of CMakeLists.txt is drawn in grey. Its role shows in the line: solid for the stage,
# dashed for a predecessor, dash-dotted for a variant (another configuration of its kernel).
ROLE_LINE = {"stage": dict(ls="-", lw=2.2), "variant": dict(ls="-.", lw=1.6, mfc="white"),
             "predecessor": dict(ls="--", lw=1.6), "peer": dict(ls=":", lw=1.8)}
# Library peers: black and greys, each its own marker, never a stage's colour.
PEER_STYLE = {
    "cuBLAS SGEMM (FP32, TF32 off)": dict(color="black", marker="^"),
    "dequantize to BF16 + cuBLAS BF16 GEMM": dict(color="#444444", marker="v", mfc="white"),
    "cuBLASLt NVFP4": dict(color="black", marker="*"),
    "cuBLAS FP16 GEMV on dequantized weights": dict(color="black", marker="v"),  # stage 09's peer
}
UNKNOWN_PEER = dict(color="#777777", marker="x")
SOL_STYLE = dict(color="black", marker="_", ms=16, mew=2.2, ls="none")
# Where a plot shows a B200 MODEL rather than a measurement: hollow markers, and the word MODEL in the label.
MODEL_MARK = dict(mfc="white", mew=1.8)
MODEL_COLOR = "darkred"  # titles of MODEL panels
EMULATED_COLOR = "darkred"


def stage_key(name):
    """'05a_tcgen05_step' -> '05a'; None for a name that is not a stage's."""
    return stages.number_key(name)


def series_key(name):
    """The key of a series (and of the B200 model): its stage's number, but "05a" for stage 05's first step,
    which is benchmarked as the variant "05_tcgen05_1cta" of stage 05 (tools/stages.py: Step.key)."""
    return stages.key(name)


def stage_style(name):
    """(dict(color, marker), whether the name is a stage's) of a series (tools/stages.py: style)."""
    return stages.style(name)


def series_style(impl, role):
    """The line style of a benchmark row: its stage's colour and marker and its role's line, or its peer's."""
    if role == "peer":
        style = dict(PEER_STYLE.get(impl, UNKNOWN_PEER))
    else:
        style, _ = stage_style(impl)
    style.update(ROLE_LINE[role])
    if role == "variant":
        style["marker"] = "D"
    return style
