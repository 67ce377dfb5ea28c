#!/usr/bin/env python3
"""Measure shared-memory bank conflicts (and what limits each kernel) with Nsight Compute.

    python3 docs/bank_conflicts.py [--build build] [--size 4096]

Profiles the first GEMM launch of each stage program listed below at size^3 and writes
docs/data/bank_conflicts.json: per stage, the ncu metrics named in METRICS (bank conflicts and
wavefronts for shared loads and stores, shared-memory instruction counts, pipe utilisation) and the
warp stall reasons (cycles per issued instruction spent stalled, by reason). Needs a GPU and ncu.
"""
import argparse
import csv
import io
import json
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STAGES = {"01_tiled_smem": ("stage01", "tiled_gemm"), "02_swizzle": ("stage02", "swizzled_gemm")}
METRICS = [
    "gpu__time_duration.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sm__sass_inst_executed_op_shared_ld.sum",
    "sm__sass_inst_executed_op_shared_st.sum",
    "smsp__inst_executed.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
]


def profile(ncu, build, program, kernel, size):
    cmd = [ncu, "--csv", "--page", "raw", "--launch-count", "1", "-k", f"regex:{kernel}",
           "--metrics", ",".join(METRICS), str(build / program), "--m", str(size), "--n", str(size), "--k", str(size),
           "--iters", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    lines = [l for l in out.stdout.splitlines() if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, units, values = rows[0], rows[1], rows[2]
    result = {}
    for name, unit, value in zip(header, units, values):
        if name in METRICS:
            try:
                result[name] = {"value": float(value.replace(",", "")), "unit": unit}
            except ValueError:
                result[name] = {"value": value, "unit": unit}
    return " ".join(cmd[:-9] + [program] + cmd[-8:]), result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--out", default=str(ROOT / "docs" / "data" / "bank_conflicts.json"))
    args = ap.parse_args()
    ncu = shutil.which("ncu")
    if not ncu:
        print("ncu (Nsight Compute) not found on PATH")
        return 1
    build = pathlib.Path(args.build).resolve()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    doc = {"gpu": gpu, "size": args.size, "ncu": subprocess.run([ncu, "--version"], capture_output=True,
                                                                 text=True).stdout.strip().splitlines()[-1],
           "stages": {}}
    for stage, (program, kernel) in STAGES.items():
        cmd, metrics = profile(ncu, build, program, kernel, args.size)
        doc["stages"][stage] = {"kernel": kernel, "command": cmd, "metrics": metrics}
        ld = metrics.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", {}).get("value")
        st = metrics.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", {}).get("value")
        print(f"{stage}: shared-load bank conflicts {ld}, shared-store bank conflicts {st}")
    pathlib.Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
