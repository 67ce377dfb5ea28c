#!/usr/bin/env python3
"""Summarise one run of a stage's tests (GoogleTest's JSON) into docs/data/tests/<stage>.json, the record
that docs/plot.py draws as the stage's correctness results.

    ./build/test_stage05 --gtest_output=json:t05.json
    python3 docs/test_results.py t05.json --stage 05_tcgen05_2cta [--out DIR] [--gpu NAME] [--driver V]
                                 [--cuda V] [--commit HASH] [--tcgen05 native|EMULATED]

Without --gpu / --driver the script asks nvidia-smi; without --commit, git (the environment variable
GEMM_COMMIT first, as the benchmarks do). --tcgen05 defaults to EMULATED unless the GPU's name says B200/B100/
GB200. The record keeps, per test suite, how many tests passed, failed and were skipped, and the names of
those that failed; nothing else of the run (its times are the emulator's where tcgen05 is emulated).

Where only a run's closing line survives ("[  PASSED  ] 129 tests."), the record can be made from the test list
of the same source instead, and only when every test passed and the counts agree:

    ./build/test_stage07 --gtest_list_tests > list.txt
    python3 docs/test_results.py --list list.txt --passed-line "[  PASSED  ] 129 tests." --stage 07_epilogue_tma ...

From ctest's log of a run (one ctest test per GoogleTest test), where the GoogleTest JSON was not kept:

    ctest --test-dir build -L stage10 -j 16 > ctest.log
    python3 docs/test_results.py --ctest ctest.log --stage 10_group_gemm ...

    python3 docs/test_results.py --check   self-test on a synthetic GoogleTest document; changes nothing
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "data" / "tests"


class ResultsError(Exception):
    pass


def suite_group(name):
    """'Shapes/GpuNvfp4Tcgen05' -> 'GpuNvfp4Tcgen05': instantiation prefixes say nothing about what ran."""
    return name.split("/")[-1]


def summarise(doc):
    """{suite: {passed, failed, skipped, failed_tests}} of a GoogleTest JSON document."""
    if not isinstance(doc, dict) or "testsuites" not in doc:
        raise ResultsError("not GoogleTest JSON output (no 'testsuites'; run the test with --gtest_output=json:FILE)")
    suites = {}
    for suite in doc["testsuites"]:
        entry = suites.setdefault(suite_group(suite["name"]), dict(passed=0, failed=0, skipped=0, failed_tests=[]))
        for test in suite.get("testsuite", []):
            if test.get("status") == "NOTRUN":  # filtered out or disabled
                continue
            if test.get("failures"):
                entry["failed"] += 1
                entry["failed_tests"].append(f"{suite['name']}.{test['name']}")
            elif test.get("result") in ("SKIPPED", "SUPPRESSED"):
                entry["skipped"] += 1
            else:
                entry["passed"] += 1
    return {k: suites[k] for k in sorted(suites)}


def from_list(list_text, passed_line):
    """A GoogleTest document in which every listed test passed, from `--gtest_list_tests` output and the run's
    closing line; ResultsError unless that line says PASSED for exactly as many tests as the list holds."""
    suites, suite = [], None
    for line in list_text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = dict(name=line.strip().rstrip("."), testsuite=[])
            suites.append(suite)
        elif suite is not None:
            suite["testsuite"].append(dict(name=line.split("#")[0].strip(), status="RUN", result="COMPLETED"))
    listed = sum(len(s["testsuite"]) for s in suites)
    m = re.fullmatch(r"\[\s*PASSED\s*\]\s*(\d+) tests?\.", passed_line.strip())
    if not m:
        raise ResultsError(f"not GoogleTest's closing line of a run where every test passed: {passed_line!r}")
    if int(m.group(1)) != listed:
        raise ResultsError(f"the run passed {m.group(1)} tests, the list has {listed}: not the same tests")
    return {"testsuites": suites, "source": f"test list + the run's closing line {passed_line.strip()!r}"}


CTEST_LINE = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\*\*\*)?(Passed|Failed|Skipped|Not Run|Timeout)\b")


def from_ctest(log_text):
    """A GoogleTest document from ctest's log of a run (`ctest --test-dir build -L stage10`), one ctest test
    per GoogleTest test as gtest_discover_tests registers them. Tests that are not GoogleTest tests (no
    "Suite.test" name, such as the programs' bad-argument scripts) are left out."""
    suites = {}
    for line in log_text.splitlines():
        m = CTEST_LINE.match(line)
        if not m or "." not in m.group(1):
            continue
        suite, _, test = m.group(1).partition(".")
        entry = dict(name=test, status="RUN", result="COMPLETED")
        if m.group(3) == "Skipped":
            entry["result"] = "SKIPPED"
        elif m.group(3) != "Passed":
            entry["failures"] = [{"failure": m.group(3)}]
        suites.setdefault(suite, []).append(entry)
    if not suites:
        raise ResultsError("no ctest result lines of GoogleTest tests ('N/M Test #i: Suite.test ... Passed')")
    return {"testsuites": [dict(name=k, testsuite=v) for k, v in suites.items()], "source": "ctest log of the run"}


def ask(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def record(doc, stage, gpu=None, driver=None, cuda=None, commit=None, tcgen05=None):
    smi = ask(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).splitlines()
    smi = [s.strip() for s in smi[0].split(",")] if smi else []
    gpu = gpu or (smi[0] if smi else "unknown GPU")
    driver = driver or (smi[1] if len(smi) > 1 else "unknown")
    cuda = cuda or (re.findall(r"release ([\d.]+)", ask(["nvcc", "--version"])) or ["unknown"])[0]
    commit = commit or os.environ.get("GEMM_COMMIT") or ask(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"]) \
        or "unknown"
    if tcgen05 is None:
        tcgen05 = "native" if re.search(r"\bG?B[12]\d\d\b", gpu) else "EMULATED"
    suites = summarise(doc)
    totals = {k: sum(s[k] for s in suites.values()) for k in ("passed", "failed", "skipped")}
    gpu_totals = {k: sum(s[k] for n, s in suites.items() if "Gpu" in n) for k in ("passed", "failed", "skipped")}
    return dict(stage=stage, gpu=gpu, driver=driver, cuda=cuda, commit=commit, tcgen05=tcgen05,
                source=doc.get("source", "GoogleTest JSON of the run"),
                date=str(doc.get("timestamp", ""))[:10] or datetime.date.today().isoformat(),
                totals=totals, gpu_totals=gpu_totals, suites=suites)


def self_test():
    doc = {"timestamp": "2000-01-01T00:00:00Z", "testsuites": [
        {"name": "Shapes/GpuThing", "testsuite": [
            {"name": "a", "status": "RUN", "result": "COMPLETED"},
            {"name": "b", "status": "RUN", "result": "COMPLETED", "failures": [{"failure": "x"}]},
            {"name": "c", "status": "RUN", "result": "SKIPPED"}]},
        {"name": "Other/GpuThing", "testsuite": [{"name": "d", "status": "RUN", "result": "COMPLETED"}]},
        {"name": "CpuThing", "testsuite": [{"name": "e", "status": "RUN", "result": "COMPLETED"},
                                           {"name": "f", "status": "NOTRUN", "result": "SUPPRESSED"}]}]}
    r = record(doc, "99_x", gpu="NVIDIA H100", driver="1", cuda="1", commit="abc")
    bad = []
    if r["suites"]["GpuThing"] != dict(passed=2, failed=1, skipped=1, failed_tests=["Shapes/GpuThing.b"]):
        bad.append(f"GpuThing counted as {r['suites']['GpuThing']}")
    if r["gpu_totals"] != dict(passed=2, failed=1, skipped=1) or r["totals"]["passed"] != 3:
        bad.append(f"totals {r['totals']} / {r['gpu_totals']}")
    if r["tcgen05"] != "EMULATED" or record(doc, "x", gpu="NVIDIA B200", driver="1", cuda="1", commit="a")["tcgen05"] != "native":
        bad.append("tcgen05 not inferred from the GPU's name")
    listed = "Suite.\n  a\n  b\nGpuSuite.\n  c  # GetParam() = 1\n"
    if record(from_list(listed, "[  PASSED  ] 3 tests."), "x", gpu="g", driver="1", cuda="1",
              commit="a")["totals"] != dict(passed=3, failed=0, skipped=0):
        bad.append("from_list() miscounted")
    for line in ("[  PASSED  ] 2 tests.", "[  FAILED  ] 3 tests."):
        try:
            from_list(listed, line)
            bad.append(f"from_list() accepted {line!r}")
        except ResultsError:
            pass
    log = ("1/4 Test #7: Shapes/GpuThing.a/exact_M1 ......   Passed    1.2 sec\n"
           "2/4 Test #8: GpuThing.b ..................***Failed    3.0 sec\n"
           "3/4 Test #9: CpuThing.c ....................***Skipped   0.1 sec\n"
           "4/4 Test #10: stage99_bad_arguments .........   Passed    9.0 sec\n")
    if summarise(from_ctest(log)) != {"CpuThing": dict(passed=0, failed=0, skipped=1, failed_tests=[]),
                                      "GpuThing": dict(passed=1, failed=1, skipped=0, failed_tests=["GpuThing.b"])}:
        bad.append(f"from_ctest() miscounted: {summarise(from_ctest(log))}")
    try:
        summarise({"benchmarks": []})
        bad.append("a non-GoogleTest document was accepted")
    except ResultsError:
        pass
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gtest_json", nargs="?", help="the file of --gtest_output=json:FILE")
    ap.add_argument("--stage", help="the stage folder, e.g. 05_tcgen05_2cta")
    ap.add_argument("--out", default=str(OUT), help="folder of the record (default docs/data/tests)")
    for opt in ("gpu", "driver", "cuda", "commit"):
        ap.add_argument(f"--{opt}")
    ap.add_argument("--tcgen05", choices=["native", "EMULATED"])
    ap.add_argument("--list", metavar="LIST", help="instead of the JSON: the --gtest_list_tests output of the same source")
    ap.add_argument("--passed-line", help="with --list: the run's closing line, '[  PASSED  ] N tests.'")
    ap.add_argument("--ctest", metavar="LOG", help="instead of the JSON: ctest's log of the run (its per-test lines)")
    ap.add_argument("--check", action="store_true", help="self-test; changes nothing")
    args = ap.parse_args()
    if args.check:
        bad = self_test()
        for b in bad:
            print(f"FAILED: {b}")
        print("checked the summary of a synthetic GoogleTest document" if not bad else "")
        return 1 if bad else 0
    if not (args.gtest_json or args.list or args.ctest) or not args.stage or (args.list and not args.passed_line):
        ap.error("give the GoogleTest JSON file (or --list and --passed-line, or --ctest) and --stage")
    if not re.fullmatch(r"\d\d[a-z]?_\w+", args.stage):
        ap.error(f"--stage {args.stage!r}: expected a stage folder name such as 05_tcgen05_2cta")
    try:
        if args.list:
            doc = from_list(pathlib.Path(args.list).read_text(), args.passed_line)
        elif args.ctest:
            doc = from_ctest(pathlib.Path(args.ctest).read_text())
        else:
            doc = json.loads(pathlib.Path(args.gtest_json).read_text())
        rec = record(doc, args.stage, args.gpu, args.driver, args.cuda, args.commit, args.tcgen05)
    except (OSError, ValueError, ResultsError) as err:
        print(f"{args.gtest_json or args.list or args.ctest}: {err}", file=sys.stderr)
        return 1
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{args.stage}.json"
    path.write_text(json.dumps(rec, indent=1) + "\n")
    t = rec["totals"]
    print(f"wrote {path}: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped on {rec['gpu']} "
          f"(tcgen05 {rec['tcgen05']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
