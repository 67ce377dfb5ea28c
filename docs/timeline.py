#!/usr/bin/env python3
"""Turn a role timeline of a warp-specialised kernel into a Chrome/Perfetto trace and a Gantt chart (SVG).

    python3 docs/timeline.py TRACE.json --chrome OUT.trace.json --svg OUT.svg [--pairs N]
    python3 docs/timeline.py --check

TRACE.json is what common/timeline.h's Recorder::write_json writes during one run:
    {"meta": {"stage": ..., "gpu": ..., "tcgen05": ..., "shape": ..., ...},
     "columns": ["block", "role", "step", "unit", "start_ns", "end_ns"],
     "events": [[block, role, step, unit, start_ns, end_ns], ...]}
block is blockIdx.x (CTA pair block // 2; the even CTA of a pair issues its MMAs), role 0 producer, 1 MMA,
2 epilogue, step one of STEP_NAMES (common/timeline.h), unit the work unit of the schedule.

--chrome writes a trace-event JSON file that opens in https://ui.perfetto.dev or chrome://tracing: one
process per CTA pair, one thread (track) per CTA and role ("CTA 0 (even) producer"), one complete event
per step (times in microseconds), and the trace's meta both under "metadata" and as an instant event at 0.
--svg draws the first --pairs pairs (default 2) as a Gantt chart: one row per (pair, CTA, role), bars
coloured by step. When meta "tcgen05" starts with EMULATED the title says that the run shows the order and
overlap of the roles, not their speed.

--check runs a self-test on a synthetic trace (several units per pair, split-K units, an emulated and a
native meta) and renders into a temporary folder; it changes nothing. Exit code 1 on a failure, 77
(ctest's "skipped") when matplotlib is missing and everything else passed.
"""
import argparse
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import plotting  # noqa: E402  (docs/plotting.py: the pinned matplotlib, deterministic SVG)

ROOT = plotting.ROOT
# The committed chart and the data it is drawn from (--check compares them under the pinned matplotlib).
COMMITTED = [(ROOT / "docs" / "data" / "timeline_06_emulated.json", ROOT / "docs" / "plots" / "timeline_06_emulated.svg")]

COLUMNS = ["block", "role", "step", "unit", "start_ns", "end_ns"]
ROLE_NAMES = {0: "producer", 1: "mma", 2: "epilogue"}  # common/timeline.h: enum Role, role_name()
# common/timeline.h: enum Step and step_name(), with the role that records each step.
STEP_NAMES = {0: "load unit", 1: "wait acc empty", 2: "issue unit", 3: "wait acc full", 4: "drain TMEM",
              5: "store C"}
STEP_ROLE = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 2}
# Work in strong colours, waits in light greys (hatched), so the eye follows what each role does.
STEP_STYLE = {0: dict(color="#1f77b4"), 1: dict(color="#d9d9d9", hatch="////"), 2: dict(color="#ff7f0e"),
              3: dict(color="#bdbdbd", hatch="\\\\\\\\"), 4: dict(color="#2ca02c"), 5: dict(color="#9467bd")}
EMULATED_SUBTITLE = "EMULATED run: shows the order and overlap of the roles, not their speed"
CTA_GROUP = 2  # CTAs per pair (cta_group::2)
MIN_BAR = 0.002  # bars shorter than this fraction of the time axis are drawn this wide, so that they show


class TraceError(Exception):
    pass


# --- Reading ---------------------------------------------------------------------------------------------------

def parse(doc):
    """(meta, events) of a Recorder JSON document; events as dicts, sorted by (block, role, start)."""
    if not isinstance(doc, dict) or "events" not in doc:
        raise TraceError("not a timeline: no 'events' (expected the JSON of common/timeline.h's Recorder)")
    meta = {str(k): str(v) for k, v in (doc.get("meta") or {}).items()}
    columns = doc.get("columns", COLUMNS)
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        raise TraceError(f"columns {missing} missing (have {columns})")
    index = {c: columns.index(c) for c in COLUMNS}
    events = []
    for i, row in enumerate(doc["events"]):
        if len(row) != len(columns):
            raise TraceError(f"event {i}: {len(row)} values for {len(columns)} columns")
        e = {c: int(row[index[c]]) for c in COLUMNS}
        if e["role"] not in ROLE_NAMES:
            raise TraceError(f"event {i}: unknown role {e['role']}")
        if e["step"] not in STEP_NAMES:
            raise TraceError(f"event {i}: unknown step {e['step']}")
        if e["end_ns"] < e["start_ns"]:
            raise TraceError(f"event {i}: ends before it starts")
        events.append(e)
    events.sort(key=lambda e: (e["block"], e["role"], e["start_ns"], e["end_ns"]))
    return meta, events


def load(path):
    with open(path) as f:
        return parse(json.load(f))


def is_emulated(meta):
    return meta.get("tcgen05", "").strip().upper().startswith("EMULATED")


def cta_label(block):
    return f"CTA {block} ({'even' if block % CTA_GROUP == 0 else 'odd'})"


def event_name(e):
    return f"{STEP_NAMES[e['step']]}: unit {e['unit']}"


# --- Chrome / Perfetto trace -------------------------------------------------------------------------------------

def thread_id(block, role):
    """One track per CTA and role; unique inside the pair's process, in display order."""
    return (block % CTA_GROUP) * len(ROLE_NAMES) + role


def chrome_trace(meta, events):
    """The trace-event JSON object (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
    ts and dur in microseconds, one process per CTA pair, one thread per CTA and role."""
    out = []
    tracks = sorted({(e["block"], e["role"]) for e in events})
    for pair in sorted({b // CTA_GROUP for b, _ in tracks}):
        blocks = ", ".join(str(b) for b in range(CTA_GROUP * pair, CTA_GROUP * (pair + 1)))
        out.append(dict(ph="M", name="process_name", pid=pair, tid=0, args=dict(name=f"pair {pair} (CTAs {blocks})")))
        out.append(dict(ph="M", name="process_sort_index", pid=pair, tid=0, args=dict(sort_index=pair)))
    for block, role in tracks:
        pid, tid = block // CTA_GROUP, thread_id(block, role)
        out.append(dict(ph="M", name="thread_name", pid=pid, tid=tid,
                        args=dict(name=f"{cta_label(block)} {ROLE_NAMES[role]}")))
        out.append(dict(ph="M", name="thread_sort_index", pid=pid, tid=tid, args=dict(sort_index=tid)))
    summary = ", ".join(f"{k}={v}" for k, v in meta.items())
    first_pid = min((e["block"] // CTA_GROUP for e in events), default=0)
    out.append(dict(ph="i", s="g", name="meta: " + (summary or "(none)"), pid=first_pid, tid=0, ts=0,
                    args=dict(meta)))
    for e in events:
        out.append(dict(ph="X", name=event_name(e), cat=ROLE_NAMES[e["role"]], pid=e["block"] // CTA_GROUP,
                        tid=thread_id(e["block"], e["role"]), ts=e["start_ns"] / 1000.0,
                        dur=(e["end_ns"] - e["start_ns"]) / 1000.0,
                        args=dict(block=e["block"], role=ROLE_NAMES[e["role"]], step=STEP_NAMES[e["step"]],
                                  unit=e["unit"], start_ns=e["start_ns"], end_ns=e["end_ns"])))
    metadata = dict(meta)
    if is_emulated(meta):
        metadata["note"] = EMULATED_SUBTITLE
    return dict(traceEvents=out, displayTimeUnit="ns", metadata=metadata)


def dump_chrome(trace):
    """The trace as JSON text, one event per line (a regenerated file diffs cleanly)."""
    head = {k: v for k, v in trace.items() if k != "traceEvents"}
    lines = ",\n".join("  " + json.dumps(e, separators=(",", ":")) for e in trace["traceEvents"])
    return ('{"traceEvents": [\n' + lines + "\n ],\n" +
            ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()) + "\n}\n")


# --- Gantt chart -------------------------------------------------------------------------------------------------

def gantt_rows(events, pairs):
    """The rows of the chart: (pair, block, role) of the first `pairs` pairs that have events, in order."""
    chosen = sorted({e["block"] // CTA_GROUP for e in events})[:max(pairs, 0)]
    rows = sorted({(e["block"] // CTA_GROUP, e["block"], e["role"]) for e in events
                   if e["block"] // CTA_GROUP in chosen})
    return rows


def titles(meta, rows, events):
    """(title, subtitle or None, footnote) of the chart."""
    stage = meta.get("stage", "?")
    extra = ", ".join(f"{k} {meta[k]}" for k in ("pairs", "units", "splits") if k in meta)
    title = (f"{stage}: role timeline, {meta.get('gpu', 'unknown GPU')}, shape {meta.get('shape', '?')}"
             + (f" ({extra})" if extra else ""))
    subtitle = EMULATED_SUBTITLE if is_emulated(meta) else None
    shown = sorted({p for p, _, _ in rows})
    total = len({e["block"] // CTA_GROUP for e in events})
    foot = (f"pairs {', '.join(map(str, shown))} of {total}; MMAs are issued by the even CTA of each pair; "
            f"times from %globaltimer, relative to the first event; bars shorter than {100 * MIN_BAR:g}% of the "
            f"axis are drawn that wide; docs/timeline.py")
    dropped = meta.get("dropped_events", "0")
    if dropped not in ("", "0"):
        foot = f"{dropped} events were dropped (buffer full); " + foot
    return title, subtitle, foot


def time_unit(t_end_us):
    """(divisor from microseconds, name) that keeps the axis's numbers below a few thousand."""
    for div, name in ((1.0, "microseconds"), (1e3, "milliseconds"), (1e6, "seconds")):
        if t_end_us / div < 5000:
            return div, name
    return 1e6, "seconds"


def draw(plt, meta, events, path, pairs=2):
    """Writes the Gantt chart to `path` (only when it changed); returns (figure texts, rows) for the self-test."""
    from matplotlib.patches import Patch

    rows = gantt_rows(events, pairs)
    if not rows:
        raise TraceError("no events to draw")
    row_of = {r: i for i, r in enumerate(rows)}
    height = 2.0 + 0.3 * len(rows)
    fig, ax = plt.subplots(figsize=(11, height))
    div, unit = time_unit(max(e["end_ns"] for e in events) / 1000.0)
    scale = 1000.0 * div  # nanoseconds per unit of the axis
    t_end = max(e["end_ns"] for e in events) / scale
    for step in sorted(STEP_NAMES):
        bars = [(e["start_ns"] / scale, (e["end_ns"] - e["start_ns"]) / scale, row_of[(e["block"] // CTA_GROUP,
                 e["block"], e["role"])]) for e in events if e["step"] == step and
                (e["block"] // CTA_GROUP, e["block"], e["role"]) in row_of]
        if not bars:
            continue
        style = STEP_STYLE[step]
        for y in sorted({b[2] for b in bars}):
            ax.broken_barh([(x, max(w, MIN_BAR * t_end)) for x, w, yy in bars if yy == y], (y - 0.38, 0.76),
                           facecolor=style["color"], hatch=style.get("hatch"), edgecolor="white", linewidth=0.6)
    # Unit numbers on the bars of work wide enough to hold them.
    for e in events:
        key = (e["block"] // CTA_GROUP, e["block"], e["role"])
        width = (e["end_ns"] - e["start_ns"]) / scale
        if key in row_of and e["step"] in (0, 2, 4, 5) and width > 0.035 * t_end:
            ax.text((e["start_ns"] / scale) + width / 2, row_of[key], f"u{e['unit']}", ha="center",
                    va="center", fontsize=6.5, color="white")
    ax.set_yticks(range(len(rows)), [f"pair {p}  {cta_label(b)}  {ROLE_NAMES[r]}" for p, b, r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    for i in range(1, len(rows)):  # a line between pairs, a dotted one between the CTAs of a pair
        if rows[i][0] != rows[i - 1][0]:
            ax.axhline(i - 0.5, color="0.3", lw=1.0)
        elif rows[i][1] != rows[i - 1][1]:
            ax.axhline(i - 0.5, color="0.6", lw=0.6, ls=":")
    ax.set_xlim(0, t_end * 1.01)
    ax.set_xlabel(f"time since the first event ({unit})" + (": the emulator's time, so only the order and overlap "
                  "mean anything" if is_emulated(meta) else ""))
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(facecolor=STEP_STYLE[s]["color"], hatch=STEP_STYLE[s].get("hatch"), edgecolor="0.4",
                     label=f"{STEP_NAMES[s]} ({ROLE_NAMES[STEP_ROLE[s]]})") for s in sorted(STEP_NAMES)]
    fig.legend(handles=handles, fontsize=7.5, ncol=6, loc="lower center", bbox_to_anchor=(0.5, 0.2 / height),
               frameon=False, handlelength=2.2)
    title, subtitle, foot = titles(meta, rows, events)
    texts = [title, foot]
    fig.text(0.5, 1 - 0.08 / height, title, ha="center", va="top", fontsize=10)
    if subtitle:
        texts.append(subtitle)
        fig.text(0.5, 1 - 0.38 / height, subtitle, ha="center", va="top", fontsize=10, color="white",
                 fontweight="bold", bbox=dict(boxstyle="round,pad=0.3", facecolor="darkred", edgecolor="none"))
    fig.text(0.5, 0.04 / height, foot, ha="center", va="bottom", fontsize=6.5, color="0.35")
    # Margins in inches: the title (and subtitle) above, the x axis, the legend and the footnote below.
    fig.tight_layout()
    fig.subplots_adjust(top=1 - (0.8 if subtitle else 0.45) / height, bottom=1.05 / height)
    plotting.write_if_changed(path, plotting.svg_bytes(fig))
    plt.close(fig)
    return texts, rows


# --- Self-test ---------------------------------------------------------------------------------------------------

def synthetic(emulated=True, pairs=3, units=11, splits=2):
    """A Recorder document of a plausible persistent schedule: pair p takes units p, p + P, ...; producer,
    MMA and epilogue overlap across units (two accumulators); blocks written in a shuffled order."""
    events = []
    for p in range(pairs):
        t_load = t_mma = t_epi = 100 * p
        acc_free = [0, 0]
        for i, u in enumerate(range(p, units, pairs)):
            load = (t_load, t_load + 900 + 37 * u)
            t_load = load[1]
            wait_empty = (t_mma, max(t_mma, acc_free[i % 2]))
            issue = (wait_empty[1], max(wait_empty[1], load[0] + 150) + 800)
            t_mma = issue[1]
            wait_full = (t_epi, max(t_epi, issue[1]))
            drain = (wait_full[1], wait_full[1] + 120)
            acc_free[i % 2] = drain[1]
            store = (drain[1], drain[1] + (400 if (u % splits) == splits - 1 else 250))
            t_epi = store[1]
            for b in (2 * p, 2 * p + 1):
                events.append([b, 0, 0, u, *load])
                events += [[b, 2, 3, u, *wait_full], [b, 2, 4, u, *drain], [b, 2, 5, u, *store]]
            events += [[2 * p, 1, 1, u, *wait_empty], [2 * p, 1, 2, u, *issue]]
    events.sort(key=lambda e: (e[4] * 7919 + e[0] * 31 + e[2]) % 1009)  # the order atomics would give
    meta = {"stage": "06_persistent_ws", "gpu": "NVIDIA H200" if emulated else "NVIDIA B200",
            "tcgen05": "EMULATED (order and overlap only, not speed)" if emulated else "native",
            "shape": "512x1024x4096", "pairs": str(pairs), "units": str(units), "splits": str(splits),
            "dropped_events": "0"}
    return {"meta": meta, "columns": list(COLUMNS), "events": events}


def self_test(plt, tmp):
    bad = []

    def expect(ok, what):
        if not ok:
            bad.append(what)

    for emulated in (True, False):
        doc = synthetic(emulated)
        path = pathlib.Path(tmp) / f"synthetic_{int(emulated)}.json"
        path.write_text(json.dumps(doc))
        meta, events = load(path)
        expect(len(events) == len(doc["events"]), "events lost while reading")
        trace = json.loads(dump_chrome(chrome_trace(meta, events)))  # through the file text, as a viewer reads it
        xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        expect(len(xs) == len(events), f"{len(xs)} complete events for {len(events)} events")
        names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name"}
        procs = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
        for x in xs:
            a = x["args"]
            expect((x["pid"], x["tid"]) in names, f"no thread name for {x['pid']}/{x['tid']}")
            expect(x["pid"] in procs, f"no process name for {x['pid']}")
            expect(x["pid"] == a["block"] // 2, "process is not the pair")
            want = f"{cta_label(a['block'])} {a['role']}"
            expect(names.get((x["pid"], x["tid"])) == want, f"track {names.get((x['pid'], x['tid']))!r} != {want!r}")
            expect(abs(x["ts"] * 1000 - a["start_ns"]) < 1e-6 and abs(x["dur"] * 1000 - (a["end_ns"] - a["start_ns"])) < 1e-6,
                   "ts/dur are not the event's times in microseconds")
            expect(x["dur"] >= 0 and x["ts"] >= 0, "negative time")
            expect(x["name"] == f"{a['step']}: unit {a['unit']}", f"event name {x['name']!r}")
        expect(names.get((0, 0)) == "CTA 0 (even) producer", "pair 0's first track is not 'CTA 0 (even) producer'")
        expect(names.get((0, 4)) == "CTA 1 (odd) mma" or (0, 4) not in names, "odd CTA MMA track misnamed")
        expect(trace["metadata"].get("tcgen05") == meta["tcgen05"], "meta not in the trace's metadata")
        expect(any(e["ph"] == "i" and e["args"].get("shape") == meta["shape"] for e in trace["traceEvents"]),
               "meta not in an instant event")
        expect(("note" in trace["metadata"]) == emulated, "EMULATED note in the trace metadata is wrong")
        # Each role of a CTA is one loop: its steps must not overlap on its track.
        by_track = {}
        for x in xs:
            by_track.setdefault((x["pid"], x["tid"]), []).append((x["ts"], x["ts"] + x["dur"]))
        for key, spans in by_track.items():
            spans.sort()
            expect(all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:])), f"track {key}: overlapping steps")
        rows = gantt_rows(events, 2)
        expect({p for p, _, _ in rows} == {0, 1}, f"--pairs 2 drew pairs {sorted({p for p, _, _ in rows})}")
        expect(len(rows) == 2 * 5, f"{len(rows)} rows for 2 pairs (expected 5 tracks per pair: no odd-CTA MMA)")
        expect(gantt_rows(events, 99) == sorted({(e['block'] // 2, e['block'], e['role']) for e in events}),
               "--pairs larger than the pairs present")
        if plt is not None:
            svg = pathlib.Path(tmp) / f"synthetic_{int(emulated)}.svg"
            texts, drawn = draw(plt, meta, events, svg, pairs=2)
            expect(svg.exists() and svg.stat().st_size > 1000, "SVG not written")
            expect(svg.read_text().lstrip().startswith("<?xml"), "not an SVG")
            expect(any(meta["gpu"] in t and meta["shape"] in t for t in texts), "title lacks the GPU or the shape")
            expect((EMULATED_SUBTITLE in texts) == emulated, "EMULATED subtitle shown wrongly")
            expect(drawn == rows, "drawn rows differ")
    # Malformed inputs are refused with a message.
    for broken in ({"meta": {}}, {"columns": ["block"], "events": []},
                   {"events": [[0, 7, 0, 0, 0, 1]]}, {"events": [[0, 0, 0, 0, 5, 1]]}):
        try:
            parse(broken)
            bad.append(f"accepted a broken trace {broken}")
        except TraceError:
            pass
    return bad


# --- Main --------------------------------------------------------------------------------------------------------

def check_committed(plt, tmp):
    """The committed charts against what this script draws from their data now."""
    bad = []
    for data, svg in COMMITTED:
        if not svg.exists():
            bad.append(f"{svg.relative_to(ROOT)} is missing")
            continue
        meta, events = load(data)
        out = pathlib.Path(tmp) / svg.name
        draw(plt, meta, events, out, pairs=int(meta.get("pairs", 2)))
        if out.read_bytes() != svg.read_bytes():
            bad.append(f"{svg.relative_to(ROOT)} is not current: python3 docs/timeline.py {data.relative_to(ROOT)} "
                       f"--svg {svg.relative_to(ROOT)}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?", help="a timeline JSON written by common/timeline.h's Recorder")
    ap.add_argument("--chrome", metavar="OUT.trace.json", help="write a Chrome/Perfetto trace-event file")
    ap.add_argument("--svg", metavar="OUT.svg", help="write a Gantt chart of the first --pairs pairs")
    ap.add_argument("--pairs", type=int, default=2, help="CTA pairs in the chart (default 2)")
    ap.add_argument("--check", action="store_true", help="self-test on a synthetic trace; changes nothing")
    args = ap.parse_args()
    plt, why = plotting.pyplot()

    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            failures = self_test(plt, tmp)
            if plt is not None and why is None:
                failures += check_committed(plt, tmp)
        for f in failures:
            print(f"FAILED: {f}")
        if failures:
            return 1
        if plt is None or why:
            print(f"SKIPPED: the committed chart was not compared: {why}")
            return 77
        print("checked a synthetic trace (emulated and native): Chrome trace events, tracks, names, times; "
              "Gantt chart rendered")
        return 0

    if not args.trace or not (args.chrome or args.svg):
        ap.error("give a TRACE.json and at least one of --chrome / --svg (or --check)")
    try:
        meta, events = load(args.trace)
    except (OSError, ValueError, TraceError) as err:
        print(f"{args.trace}: {err}", file=sys.stderr)
        return 1
    if not events:
        print(f"{args.trace}: no events recorded", file=sys.stderr)
        return 1
    if args.chrome:
        with open(args.chrome, "w") as f:
            f.write(dump_chrome(chrome_trace(meta, events)))
        print("wrote", args.chrome, "(open it in https://ui.perfetto.dev or chrome://tracing)")
    if args.svg:
        if plt is None:
            print(why, file=sys.stderr)
            return 1
        if why and pathlib.Path(args.svg).resolve().parent == (ROOT / "docs" / "plots"):
            print(f"not redrawing a committed chart with another matplotlib: {why}", file=sys.stderr)
            return 1
        draw(plt, meta, events, args.svg, pairs=args.pairs)
        print("wrote", args.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
