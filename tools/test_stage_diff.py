#!/usr/bin/env python3
"""Tests of tools/stage_diff.py on a small project written into a temporary folder: the main line
with a stage taught in steps, a stage that branches off it (BASE), a stage whose folder does not
exist yet, and kernel files whose comments, blank lines, whitespace and stage numbers must not count."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stage_diff  # noqa: E402

CMAKE = """
add_gemm_stage(00_a)
add_gemm_stage(01_b STEPS kernel_small kernel)  # two steps
# add_gemm_stage(99_commented_out)
add_gemm_stage(02_c)
add_gemm_stage(03_missing)
add_gemm_stage(09_branch BASE 00_a)
"""

A = """// Stage 00: a header that is left out.
// It may say anything: int not_code = 1;
#pragma once

namespace stage00 {
int f(int x) { return x + 1; }  // a comment
}  // namespace stage00
"""
B_SMALL = """// Stage 01, step 1: another header, of another length.
#pragma once

namespace stage01_small {
int f(int x) { return x + 1; }

/* a block
   comment */
int g(int x)   {   return 2 * x; }
}  // namespace stage01_small
"""
B = """// Stage 01, step 2.
#pragma once

namespace stage01 {
int f(int x) { return x + 1; }
int g(int x) { return 2 * x; }
int h(int x) { return 3 * x; }
}  // namespace stage01
"""
C = """#pragma once
namespace stage02 {
int h(int x) { return 3 * x; }
}  // namespace stage02
"""
BRANCH = """#pragma once
namespace stage09 {
int f(int x) { return x + 1; }
int v(int x) { return x; }
}  // namespace stage09
"""


class StageDiffTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        files = {"CMakeLists.txt": CMAKE, "00_a/kernel.cuh": A, "01_b/kernel_small.cuh": B_SMALL,
                 "01_b/kernel.cuh": B, "02_c/kernel.cuh": C, "09_branch/kernel.cuh": BRANCH}
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(self.root, path)) or self.root, exist_ok=True)
            with open(os.path.join(self.root, path), "w") as f:
                f.write(text)

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = stage_diff.main(list(args) + ["--root", self.root])
        return rc, out.getvalue()

    def test_list_is_the_main_line_in_order_with_steps_and_without_missing_or_branching_stages(self):
        rc, out = self.run_tool("--list")
        self.assertEqual(rc, 0)
        self.assertEqual(out.split(), ["00_a/kernel.cuh", "01_b/kernel_small.cuh", "01_b/kernel.cuh", "02_c/kernel.cuh"])

    def test_table_counts_code_lines_against_each_steps_base(self):
        rc, out = self.run_tool("--table")
        self.assertEqual(rc, 0)
        rows = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:-1]] for r in out.splitlines()[2:]}
        self.assertEqual(rows["00_a/kernel.cuh"][0], "(first step)")
        # Headers, comments, blank lines, whitespace and the stage numbers (stage00 vs stage01_small)
        # do not count: only g() was added.
        self.assertEqual(rows["01_b/kernel_small.cuh"], ["00_a/kernel.cuh", "1", "1", "0"])
        self.assertEqual(rows["01_b/kernel.cuh"], ["01_b/kernel_small.cuh", "1", "1", "0"])
        self.assertEqual(rows["02_c/kernel.cuh"], ["01_b/kernel.cuh", "2", "0", "2"])
        # A branching stage is compared with its BASE's last step, not with the line above it.
        self.assertEqual(rows["09_branch/kernel.cuh"], ["00_a/kernel.cuh", "1", "1", "0"])
        self.assertNotIn("03_missing/kernel.cuh", rows)

    def test_diff_of_two_steps_shows_the_idea_and_its_size(self):
        rc, out = self.run_tool("01_b/kernel_small.cuh", "01")  # "01": the stage's last step
        self.assertEqual(rc, 0)
        self.assertIn("+int h(int x) { return 3 * x; }", out)
        self.assertNotIn("header", out)                      # the header is left out
        self.assertNotIn("namespace stage01", out)           # stage numbers normalised
        self.assertTrue(out.rstrip().splitlines()[-1].startswith("# 1 code lines (1 added, 0 removed)"))

    def test_table_document_check_detects_a_stale_file(self):
        doc = os.path.join(self.root, "table.md")
        self.assertEqual(self.run_tool("--table", "--write", doc)[0], 0)
        self.assertEqual(self.run_tool("--table", "--check", doc)[0], 0)
        with open(os.path.join(self.root, "02_c/kernel.cuh"), "a") as f:
            f.write("int more(int x) { return x; }\n")
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(self.run_tool("--table", "--check", doc)[0], 1)

    def test_unknown_step_is_a_clear_error(self):
        with contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit) as e:
                self.run_tool("00", "nonexistent")
        self.assertIn("nonexistent", str(e.exception.code))


if __name__ == "__main__":
    unittest.main()
