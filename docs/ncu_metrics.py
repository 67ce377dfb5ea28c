#!/usr/bin/env python3
"""Measure what limits the stages' kernels with Nsight Compute: shared-memory bank conflicts,
pipe utilisation, memory throughput and warp stall reasons.

    python3 docs/ncu_metrics.py --stages 01_tiled_smem 02_swizzle --out docs/data/bank_conflicts.json
    python3 docs/ncu_metrics.py --stages 03_nvfp4_quant 04_tma_mbarrier --shape 128,7168,16384 \
        --out docs/data/ncu_03_04_m128.json
    python3 docs/ncu_metrics.py --stages 06_persistent_ws 07_epilogue_tma --shape 512,512,512 \
        --out docs/data/ncu_06_07_staging.json

Profiles the first GEMM launch of each stage program (its check run) at the given shape (default
4096^3) and writes, per stage, the metrics named in METRICS: bank conflicts and wavefronts of
shared loads and stores, instruction counts, pipe and memory utilisation, and the warp stall reasons
(cycles per issued instruction spent stalled, by reason). docs/plot.py turns the files into the
tables of the stage READMEs. Needs a GPU and ncu.
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
sys.path.insert(0, str(ROOT / "tools"))
import stages  # noqa: E402  (tools/stages.py: the stages of CMakeLists.txt and their kernel files)

# Stage folder -> (program, kernel name to profile): the stage's program and the first __global__ function of
# its last step's kernel file. The tcgen05 stages on Hopper run emulated tcgen05: their timings and pipe figures
# describe the emulator, but shared-memory stores are the kernel's own (the emulator keeps its state in global
# memory), so 07 - 06 is the epilogue's staging.
KERNELS = {s.folder: (f"stage{s.number}", s.last_step.kernel) for s in stages.read() if s.last_step.kernel}
TCGEN05_STAGES = {s.folder for s in stages.tcgen05_stages()}
METRICS = [
    "gpu__time_duration.sum",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
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
    "dram__bytes_read.sum",
    "lts__t_bytes.sum",
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


def profile(ncu, build, program, kernel, shape):
    m, n, k = shape
    cmd = [ncu, "--csv", "--page", "raw", "--launch-count", "1", "-k", f"regex:{kernel}",
           "--metrics", ",".join(METRICS), str(build / program), "--m", str(m), "--n", str(n), "--k", str(k),
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
    ap.add_argument("--stages", nargs="+", default=["01_tiled_smem", "02_swizzle"], choices=sorted(KERNELS))
    ap.add_argument("--shape", default="4096,4096,4096", help="M,N,K")
    ap.add_argument("--out", default=str(ROOT / "docs" / "data" / "bank_conflicts.json"))
    args = ap.parse_args()
    shape = tuple(int(v) for v in args.shape.split(","))
    ncu = shutil.which("ncu")
    if not ncu:
        print("ncu (Nsight Compute) not found on PATH")
        return 1
    build = pathlib.Path(args.build).resolve()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    doc = {"gpu": gpu, "shape": list(shape), "ncu": subprocess.run([ncu, "--version"], capture_output=True,
                                                                    text=True).stdout.strip().splitlines()[-1],
           "stages": {}}
    # A tcgen05 stage on a GPU before sm_100 runs its tensor-core instructions through the emulator:
    # docs/plot.py then tabulates only what the kernel itself does (its shared-memory stores).
    cap = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip().splitlines()
    if any(s in TCGEN05_STAGES for s in args.stages) and cap and float(cap[0]) < 10:
        doc["tcgen05"] = "EMULATED"
    for stage in args.stages:
        program, kernel = KERNELS[stage]
        cmd, metrics = profile(ncu, build, program, kernel, shape)
        doc["stages"][stage] = {"kernel": kernel, "command": cmd, "metrics": metrics}
        ld = metrics.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", {}).get("value")
        st = metrics.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", {}).get("value")
        print(f"{stage}: shared-load bank conflicts {ld}, shared-store bank conflicts {st}")
    pathlib.Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
