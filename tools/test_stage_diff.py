#!/usr/bin/env python3
"""Tests of tools/stage_diff.py and tools/stages.py.

On a small project written into a temporary folder: the main line with a stage taught in steps, a stage
that branches off it (BASE), a stage whose folder does not exist yet, and kernel files whose comments,
blank lines, whitespace and stage numbers must not count.

--propagate on two real fixes of the project's history, from the files under tools/testdata/propagate/
(so that the test needs no history: CI's clone, or a tarball, has none of it):

- 58074bf put a cluster barrier before the pair's collective alloc into stage 05's kernel.cuh; df5681a then
  copied it by hand into 06, 07 and 08. Carried forward from 05 by --propagate, the fix merges cleanly into
  the three files as they were just before df5681a, and the result is what df5681a committed, byte for
  byte, but for the comment: the hand copy shortened 05's two comment lines to one, which the merge cannot
  know. The test puts 05's comment back into the committed files and compares bytes, and compares the
  code lines (stage_diff's count: no comments) with the committed files unchanged.
- 12de87f gave stage 05's producer a tail wait; c36091c copied it into 06, 07 and 08 by hand, rewritten,
  because 06 had changed that very loop (the producer walks units). Carried forward by --propagate it must
  be reported as a conflict in each of them, never merged silently.

Standard library and git only.
"""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stage_diff  # noqa: E402
import stages  # noqa: E402

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "propagate")
LATER = ("06_persistent_ws", "07_epilogue_tma", "08_split_k")
# The comment of 58074bf (stage 05), and the one line df5681a wrote in its place in 06, 07 and 08.
FIX_COMMENT = ("  // A cta_group::2 alloc is collective across the pair: the peer must be known to run (PTX ISA\n"
               "  // 9.7.16.7.1), which a cluster barrier both CTAs passed proves.\n"
               "  ptx::cluster_sync();\n")
HAND_COMMENT = "  ptx::cluster_sync();  // the collective cta_group::2 alloc needs the peer known to run (PTX ISA 9.7.16.7.1)\n"
HISTORY_CMAKE = """
add_gemm_stage(05_tcgen05_2cta MIN_SM 90 STEPS kernel_1cta kernel)
add_gemm_stage(06_persistent_ws MIN_SM 90)
add_gemm_stage(07_epilogue_tma MIN_SM 90)
add_gemm_stage(08_split_k MIN_SM 90)
"""

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

    def test_list_is_the_main_line_in_order_with_steps_then_the_branches_marked(self):
        rc, out = self.run_tool("--list")
        self.assertEqual(rc, 0)
        self.assertEqual([line.split()[0] for line in out.splitlines()],
                         ["00_a/kernel.cuh", "01_b/kernel_small.cuh", "01_b/kernel.cuh", "02_c/kernel.cuh",
                          "09_branch/kernel.cuh"])
        self.assertTrue(out.splitlines()[-1].endswith("(branch from 00_a)"))
        self.assertNotIn("branch", "".join(out.splitlines()[:-1]))

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


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as f:
            f.write(text)


def fixture(name):
    with open(os.path.join(TESTDATA, name), encoding="utf-8", newline="") as f:
        return f.read()


def git(root, *args):
    subprocess.run(["git", "-C", root, "-c", "user.name=test", "-c", "user.email=test@example.com", *args],
                   check=True, capture_output=True)


def committed_tree(root, files):
    """A git repository in `root` whose HEAD holds `files`."""
    write(root, files)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "before the fix")


class GitTree:
    """A temporary project tree under git (the --propagate tests): the tool run on it, files read back."""

    def make_tree(self):
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = stage_diff.main(list(args) + ["--root", self.root])
        return rc, out.getvalue()

    def read(self, path):
        with open(os.path.join(self.root, path), encoding="utf-8", newline="") as f:
            return f.read()


class PropagateTest(GitTree, unittest.TestCase):
    def setUp(self):
        self.make_tree()

    def history(self, fix_before, fix_after, later):
        files = {"CMakeLists.txt": HISTORY_CMAKE, "05_tcgen05_2cta/kernel.cuh": fixture(fix_before)}
        files.update({f"{s}/kernel.cuh": fixture(f"{s}.kernel.{later}.txt") for s in LATER})
        committed_tree(self.root, files)
        write(self.root, {"05_tcgen05_2cta/kernel.cuh": fixture(fix_after)})  # the fix, in the working tree

    def test_the_pair_alloc_barrier_of_58074bf_lands_as_df5681a_committed_it(self):
        self.history("05_tcgen05_2cta.kernel.at_12de87f.txt", "05_tcgen05_2cta.kernel.at_58074bf.txt",
                     "before_df5681a")
        rc, out = self.run_tool("--propagate", "05_tcgen05_2cta/kernel.cuh")
        self.assertEqual(rc, 0, out)
        for s in LATER:
            self.assertRegex(out, rf"{s}/kernel.cuh +merged cleanly")
            got, landed = self.read(f"{s}/kernel.cuh"), fixture(f"{s}.kernel.at_df5681a.txt")
            self.assertEqual(landed.count(HAND_COMMENT), 1)
            self.assertEqual(got, landed.replace(HAND_COMMENT, FIX_COMMENT), s)  # byte for byte, 05's comment
            self.assertEqual(stage_diff.code_lines(got.splitlines()), stage_diff.code_lines(landed.splitlines()), s)
        self.assertIn("| 06_persistent_ws/kernel.cuh | 05_tcgen05_2cta/kernel.cuh |", out)  # the table follows

    def test_the_tail_wait_of_12de87f_conflicts_where_the_later_stages_rewrote_the_loop(self):
        self.history("05_tcgen05_2cta.kernel.before_12de87f.txt", "05_tcgen05_2cta.kernel.at_12de87f.txt",
                     "at_df5681a")
        before = {s: self.read(f"{s}/kernel.cuh") for s in LATER}
        rc, out = self.run_tool("--propagate", "05", "--dry-run")
        self.assertEqual(rc, 1, out)
        for s in LATER:
            self.assertRegex(out, rf"{s}/kernel.cuh +conflict \(\d+ hunks?\)")
            self.assertEqual(self.read(f"{s}/kernel.cuh"), before[s], "--dry-run wrote a file")
        rc, out = self.run_tool("--propagate", "05_tcgen05_2cta/kernel.cuh")
        self.assertEqual(rc, 1, out)
        for s in LATER:
            text = self.read(f"{s}/kernel.cuh")
            self.assertIn("<<<<<<< " + f"{s}/kernel.cuh", text)
            self.assertIn(">>>>>>> 05_tcgen05_2cta/kernel.cuh", text)


class PropagateSmallTest(GitTree, unittest.TestCase):
    """--propagate on a small project: namespaces, branches, steps that already have the change, --from."""
    CMAKE = """
add_gemm_stage(00_a)
add_gemm_stage(01_b)
add_gemm_stage(02_c)
add_gemm_stage(03_other BASE 00_a)
add_gemm_stage(04_after_branch)
"""

    def kernel(self, ns, extra=""):
        return (f"// header of {ns}\n#pragma once\nnamespace {ns} {{\n{extra}int f(int x) {{\n  return x + 1;\n}}\n\n"
                f"int g() {{ return {ns}::f(1); }}\n}}  // namespace {ns}\n")

    def setUp(self):
        self.make_tree()
        committed_tree(self.root, {"CMakeLists.txt": self.CMAKE, "00_a/kernel.cuh": self.kernel("stage00"),
                                   "01_b/kernel.cuh": self.kernel("stage01", "int h() { return 2; }\n"),
                                   "02_c/kernel.cuh": self.kernel("stage02"),
                                   "03_other/kernel.cuh": self.kernel("stage03"),
                                   "04_after_branch/kernel.cuh": self.kernel("stage04")})

    def test_a_fix_lands_in_every_later_step_and_branch_in_that_steps_namespace(self):
        fixed = self.read("00_a/kernel.cuh").replace("int g() { return stage00::f(1); }",
                                                     "int g() { return stage00::f(2); }")
        write(self.root, {"00_a/kernel.cuh": fixed})
        write(self.root, {"02_c/kernel.cuh": self.read("02_c/kernel.cuh").replace("f(1)", "f(2)")})  # fixed already
        rc, out = self.run_tool("--propagate", "00")
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"01_b/kernel.cuh +merged cleanly")
        self.assertRegex(out, r"02_c/kernel.cuh +already has the change")
        self.assertRegex(out, r"03_other/kernel.cuh +merged cleanly")      # the branch that builds on 00
        self.assertRegex(out, r"04_after_branch/kernel.cuh +merged cleanly")  # on that branch, after it
        self.assertIn("int g() { return stage01::f(2); }", self.read("01_b/kernel.cuh"))
        self.assertIn("int h() { return 2; }", self.read("01_b/kernel.cuh"))
        self.assertIn("int g() { return stage03::f(2); }", self.read("03_other/kernel.cuh"))

    def test_only_the_steps_that_build_on_the_file_are_touched(self):
        write(self.root, {"01_b/kernel.cuh": self.read("01_b/kernel.cuh").replace("x + 1", "x + 3")})
        rc, out = self.run_tool("--propagate", "01_b/kernel.cuh")
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"02_c/kernel.cuh +merged cleanly")
        self.assertNotIn("03_other", out.split("\n\n")[0])
        self.assertIn("x + 1", self.read("03_other/kernel.cuh"))
        self.assertIn("x + 3", self.read("02_c/kernel.cuh"))

    def test_from_names_the_revision_and_no_change_is_said(self):
        rc, out = self.run_tool("--propagate", "00", "--from", "HEAD")
        self.assertEqual(rc, 2)
        self.assertIn("unchanged", out)


class StagesTest(unittest.TestCase):
    """tools/stages.py: what every script reads about the stages."""

    def test_kstage_declarations_old_and_new_syntax_and_split_literals(self):
        old = 'inline constexpr gemm::Stage kStage{"00_naive", "FP32, one thread",\n  gemm::Precision::kFp32, &launch};'
        new = ('inline constexpr gemm::StageOf kStage{"09_gemv",  // the id\n'
               '    "NVFP4 GEMV (N = 1): the weights "\n    /* joined */ "streamed once", &launch, gemm::kUsesTcgen05};')
        self.assertEqual(stages.parse_kstage(old), ("00_naive", "FP32, one thread"))
        self.assertEqual(stages.parse_kstage(new), ("09_gemv", "NVFP4 GEMV (N = 1): the weights streamed once"))
        self.assertIsNone(stages.parse_kstage("int x;"))

    def test_order_bases_branches_steps_and_keys(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, {"CMakeLists.txt": CMAKE + "add_gemm_stage(10_after MIN_SM 100)\n"
                                                   "add_gemm_stage(11_new BASE 02_c)\n",
                         "01_b/kernel_small.cuh": 'inline constexpr gemm::StageOf kStage{"01_b_small", "small", &launch};',
                         "01_b/kernel.cuh": "inline void launch(const gemm::Fp32GemmArgs& args, cudaStream_t s);\n"
                                            '#include "common/ptx/tcgen05.cuh"\n'})
            got = stages.read(root)
            self.assertEqual([s.folder for s in got], ["00_a", "01_b", "02_c", "03_missing", "09_branch", "10_after",
                                                        "11_new"])
            by = {s.folder: s for s in got}
            self.assertEqual([s.folder for s in stages.main_line(got)], ["00_a", "01_b", "02_c", "03_missing"])
            self.assertTrue(by["09_branch"].branch)
            self.assertEqual(by["09_branch"].base, "00_a")
            self.assertFalse(by["10_after"].branch)               # continues the branch above it
            self.assertEqual(by["10_after"].branch_root.folder, "09_branch")
            self.assertEqual(by["10_after"].min_sm, 100)
            self.assertTrue(by["11_new"].branch)
            self.assertEqual([st.key for st in by["01_b"].steps], ["01a", "01"])
            self.assertEqual(by["01_b"].steps[0].id, "01_b_small")
            self.assertEqual(by["01_b"].kind, "fp32_gemm")
            self.assertTrue(by["01_b"].uses_tcgen05)
            self.assertEqual(stages.key("01_b_small BN=64", got), "01a")
            styles = [stages.style(st.id or st.stage.folder, got)[0]["color"] for st in stages.steps(got)]
            self.assertEqual(len(set(styles)), len(styles))       # every step its own colour
            self.assertFalse(stages.style("99_unknown", got)[1])

    def test_kind_of_a_run(self):
        self.assertEqual(stages.kind_of_run({"kind": "gemv"}), "nvfp4_gemv")
        self.assertEqual(stages.kind_of_run({"kind": "group_gemm"}), "group_gemm")
        self.assertEqual(stages.measured_like("nvfp4_gemv"), "gemv")
        self.assertEqual(stages.measured_like("mxfp8_gemm"), "gemm")

    def test_the_projects_own_stages(self):
        got = stages.read()
        self.assertTrue(got and all(s.idea for s in got), "a stage without a kStage idea")
        self.assertTrue(all(st.id for s in got for st in s.steps), "a step without a kStage id")


if __name__ == "__main__":
    unittest.main()
