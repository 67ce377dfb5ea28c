#!/usr/bin/env python3
"""Tests of tools/check_protocol_rules.py on small synthetic projects.

Each test writes a checker source, an emulator source (both report in the checker's format), a twin test file (and sometimes a second test
file) into a temporary folder, with a rules table as JSON, then changes one thing the way a real edit
would (a renamed case, a new rule id, a twin moved to the wrong rule, a case commented out, a reason
dropped) and asserts that the check concerned fails, naming it. The real project is checked by the
protocol_rules_* tests; this file shows that each check can fail, and on what.

Standard library only.
"""
import contextlib
import copy
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_protocol_rules  # noqa: E402

CHECKER = r'''
// A comment with v.rule = "commented-out-rule"; must not count.
void on_wait() {
  Violation v;
  v.rule = "barrier-uninitialised";
  v.what = "a wait on a barrier never initialised";
  v.rule = peer ? "dealloc-while-peer-issues"
                : "dealloc-pending";
  const char* s = "a string with v.rule = \"not-a-rule\" inside";
}
void deadlock() { m.s("protocol checker: deadlock: every live thread waits\n"); }
void header() { m.s("protocol checker: ").s(v.rule); }
'''

EMULATOR = r'''
static __device__ void fail_hazard(const Hazard& h, const OpRecord& op) { report_found(h); }
void ld() {
  fail_hazard({"emu-ld-pending-write", "tcgen05.ld of a column with a pending write: reading the accumulator "
               "before the commit", "PTX ISA 9.7.16.12.1", "wait"}, op);
  fail_rule({"emu-ld-outside-quadrant", "a warp may only access the 32 lanes of its quadrant", "9.7.16.8.1", "x"},
            "(lane field, warp)", field, warp);
  fail(kName, "columns that were not allocated (emu-like text is no id)", column);
}
'''

TWINS = r'''
struct BrokenCase { const char* name; Bug bug; const char* message; };
const BrokenCase kBroken[] = {
    {"uninitialised_wait", Bug::kA,
     "protocol checker: barrier-uninitialised: .*warp 1 \\(consumer\\)"},
    // {"commented_out_case", Bug::kB, "protocol checker: deadlock: "},
    {"wrong_parity", Bug::kB, "protocol checker: deadlock: .*'full' \\[0\\]"},
    {"early_dealloc", Bug::kC, "protocol checker: dealloc-pending: .*"},
    {"peer_dealloc", Bug::kD, "protocol checker: dealloc-while-peer-issues: "},
    {"plain_wait", Bug::kE, "protocol checker: emu-ld-pending-write: tcgen05[.]ld of a column with a pending write"},
    {"lanes_128_plus", Bug::kF, "protocol checker: emu-ld-outside-quadrant: .*a warp may only access the 32 lanes"},
};
INSTANTIATE_TEST_SUITE_P(Broken, Suite, ::testing::ValuesIn(kBroken),
                         [](const ::testing::TestParamInfo<BrokenCase>& i) { return std::string(i.param.name); });
INSTANTIATE_TEST_SUITE_P(Broken, DeathSuite, ::testing::ValuesIn(kBroken), name_of);
'''

OTHER = r'''
const OtherCase kOther[] = {
    {"misaligned_load", 1, "sm_100a precondition: the address must be 32-byte aligned"},
};
INSTANTIATE_TEST_SUITE_P(Broken, Other, ::testing::ValuesIn(kOther), name_of);
'''

T = "common/test/twins.cu"
RULES = {
    "twin_files": [T],
    "rules": [
        {"id": "barrier-uninitialised", "judge": "checker", "ptx": "9.7.13.15.9",
         "no_twin_because": "", "twins": [{"file": T, "name": "uninitialised_wait"}]},
        {"id": "deadlock", "judge": "checker", "ptx": "9.7.13.15.16", "no_twin_because": "",
         "twins": [{"file": T, "name": "wrong_parity"}]},
        {"id": "dealloc-pending", "judge": "checker", "ptx": "9.7.16.7.1", "no_twin_because": "",
         "twins": [{"file": T, "name": "early_dealloc"}]},
        {"id": "dealloc-while-peer-issues", "judge": "checker", "ptx": "9.7.16.7.1",
         "no_twin_because": "", "twins": [{"file": T, "name": "peer_dealloc"}]},
        {"id": "emu-ld-pending-write", "judge": "emulator", "ptx": "9.7.16.12.1", "no_twin_because": "", "twins": [{"file": T, "name": "plain_wait"}]},
        {"id": "emu-ld-outside-quadrant", "judge": "emulator", "ptx": "9.7.16.8.1",
         "no_twin_because": "", "twins": [{"file": T, "name": "lanes_128_plus"}]},
    ],
}


class CheckProtocolRules(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.files = {"common/protocol/checker.cuh": CHECKER, "common/emu/emu.cuh": EMULATOR, T: TWINS,
                      "common/test/other.cu": OTHER}
        self.rules = copy.deepcopy(RULES)

    def tearDown(self):
        self.tmp.cleanup()

    def run_check(self, check):
        for rel, text in self.files.items():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        table = os.path.join(self.root, "rules.json")
        with open(table, "w", encoding="utf-8") as f:
            json.dump(self.rules, f)
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = check_protocol_rules.main([check, "--rules-json", table, "--root", self.root])
        return rc, err.getvalue()

    def assert_fails(self, check, *phrases):
        rc, err = self.run_check(check)
        self.assertEqual(rc, 1, f"{check} passed; expected it to fail with {phrases}")
        for p in phrases:
            self.assertIn(p, err)

    def rule(self, rid):
        return next(r for r in self.rules["rules"] if r["id"] == rid)

    def edit(self, rel, old, new):
        self.assertIn(old, self.files[rel])
        self.files[rel] = self.files[rel].replace(old, new)

    # ---- the consistent project passes every check --------------------------------------------------

    def test_consistent_project_passes(self):
        for check in ("ids", "twins", "exceptions", "all"):
            self.assertEqual(self.run_check(check), (0, ""), check)

    # ---- ids ------------------------------------------------------------------------------------------

    def test_new_rule_in_the_checker_missing_from_the_table(self):
        self.edit("common/protocol/checker.cuh", 'v.what = "a wait', 'o.rule = "waiter-behind";\n  v.what = "a wait')
        self.assert_fails("ids", "'waiter-behind'", "not in the table")

    def test_rules_in_the_checker_folders_below_are_read(self):
        self.files["common/protocol/hooks/extra.cuh"] = 'void on_x() { Violation v; v.rule = "hook-rule"; }\n'
        self.assert_fails("ids", "'hook-rule' (", "hooks/extra.cuh", "not in the table")

    def test_table_entry_the_checker_never_reports(self):
        self.edit("common/protocol/checker.cuh", '"protocol checker: deadlock: ', '"protocol checker: stuck: ')
        self.assert_fails("ids", "'deadlock' is in the table but the checker's sources never report it",
                          "'stuck'")

    def test_both_ids_of_a_conditional_are_read(self):
        self.edit("common/protocol/checker.cuh", ': "dealloc-pending"', ': "dealloc-busy"')
        self.assert_fails("ids", "'dealloc-busy'", "'dealloc-pending' is in the table")

    def test_a_rule_set_from_a_variable_cannot_be_read(self):
        self.edit("common/protocol/checker.cuh", 'v.rule = "barrier-uninitialised";', "v.rule = name;")
        self.assert_fails("ids", "no literal")

    def test_emulator_hazard_not_in_the_table(self):
        self.edit("common/emu/emu.cuh", "fail(kName,", 'fail_hazard({"emu-dealloc-busy", "dealloc", "x", "y"}, op);\n'
                  "  fail(kName,")
        self.assert_fails("ids", "'emu-dealloc-busy'", "reported by the emulator but not in the table")

    def test_emulator_entry_no_longer_reported(self):
        self.edit("common/emu/emu.cuh", '{"emu-ld-outside-quadrant",', '{"emu-ld-outside-its-quadrant",')
        self.assert_fails("ids", "'emu-ld-outside-quadrant' is in the table but the emulator's sources never report it",
                          "'emu-ld-outside-its-quadrant'")

    def test_rule_reported_by_the_other_judge(self):
        self.rule("emu-ld-pending-write")["judge"] = "checker"
        self.assert_fails("ids", "'emu-ld-pending-write'", "reported by the emulator but its entry says the checker")

    # ---- twins ----------------------------------------------------------------------------------------

    def test_renamed_case(self):
        self.edit(T, '"wrong_parity"', '"producer_at_the_wrong_parity"')
        self.assert_fails("twins", "its twin wrong_parity is not a broken case",
                          "producer_at_the_wrong_parity", "named by no rule")

    def test_new_case_no_rule_names(self):
        self.edit(T, "};\nINSTANTIATE", '    {"extra_case", Bug::kG, "protocol checker: deadlock: x"},\n};\nINSTANTIATE')
        self.assert_fails("twins", "broken case extra_case", "named by no rule")

    def test_commented_out_case_is_not_a_case(self):
        self.rule("deadlock")["twins"].append({"file": T, "name": "commented_out_case"})
        self.assert_fails("twins", "its twin commented_out_case is not a broken case")

    def test_twin_under_the_wrong_rule(self):
        self.rule("dealloc-pending")["twins"] = [{"file": T, "name": "peer_dealloc"}]
        self.rule("dealloc-while-peer-issues")["twins"] = [{"file": T, "name": "early_dealloc"}]
        self.assert_fails("twins", "'dealloc-pending': its twin peer_dealloc", "does not expect "
                          "'protocol checker: dealloc-pending:'")

    def test_twin_expecting_the_wrong_emulator_message(self):
        self.edit(T, "protocol checker: emu-ld-pending-write: tcgen05[.]ld", "tcgen05 emulator: HAZARD: tcgen05[.]ld")
        self.assert_fails("twins", "'emu-ld-pending-write': its twin plain_wait", "does not expect")

    def test_twin_named_by_two_rules(self):
        self.rule("deadlock")["twins"].append({"file": T, "name": "uninitialised_wait"})
        self.assert_fails("twins", "named by both 'barrier-uninitialised' and 'deadlock'")

    def test_reshaped_case_is_refused(self):
        self.edit(T, '{"wrong_parity", Bug::kB,', "{Bug::kB,")
        self.assert_fails("twins", "does not open with its name")

    def test_case_whose_message_is_not_last_is_refused(self):
        self.edit(T, '"protocol checker: dealloc-pending: .*"},', '"protocol checker: dealloc-pending: .*", 2},')
        self.assert_fails("twins", "early_dealloc does not close with its expected message")

    def test_protocol_twin_outside_the_twin_files(self):
        self.edit("common/test/other.cu", '"sm_100a precondition:', '"protocol checker: deadlock: ')
        self.assert_fails("twins", "misaligned_load", "not one of the twin files")

    # ---- exceptions -----------------------------------------------------------------------------------

    def test_rule_without_twin_or_reason(self):
        self.rule("deadlock")["twins"] = []
        self.assert_fails("exceptions", "'deadlock' has no broken twin and no reason why")

    def test_placeholder_reason_is_not_a_reason(self):
        self.rule("deadlock")["twins"] = []
        self.rule("deadlock")["no_twin_because"] = "todo"
        self.assert_fails("exceptions", "only 'todo'")

    def test_explained_exception_passes(self):
        self.rule("deadlock")["twins"] = []
        self.rule("deadlock")["no_twin_because"] = "a limit of the checker, which no kernel reaches on purpose"
        self.assertEqual(self.run_check("exceptions"), (0, ""))

    def test_twin_and_reason_together(self):
        self.rule("deadlock")["no_twin_because"] = "a limit of the checker, which no kernel reaches on purpose"
        self.assert_fails("exceptions", "'deadlock' has twins and a reason")


if __name__ == "__main__":
    unittest.main()
