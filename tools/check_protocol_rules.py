#!/usr/bin/env python3
"""Checks the protocol rules table (common/protocol/rules.h) against the sources it describes.

The table reaches this script as JSON from the host program built from tools/protocol_rules.cpp
(`--program PATH`, or `--rules-json FILE`): the header stays the one source of truth, and nothing here
parses C++ declarations of it. Three checks, each a CPU test:

  ids         every rule id the checker's and the emulator's sources report is in the table, as found by
              the one whose sources report it, and every entry of the table is reported somewhere by
              the one its entry names
  twins       every twin the table names is a broken case of the file it names, every broken case of
              the twin files is named by exactly one entry, each case's expected message names that
              entry's rule, and no other test file holds broken cases that expect a protocol message
  exceptions  every rule has a twin, or says why it has none (and not both)

What is parsed, exactly (comments removed first, string literals decoded, adjacent literals joined):

  checker ids      `<name>.rule = <expression>;` in common/protocol/ (every folder below it) *.cuh, *.cu,
                   *.h: every string literal of the expression is an id (`peer ? "a" : "b"` sets two), an
                   expression with none is an error; and every literal that starts
                   "protocol checker: <id>: " (the deadlock and unsupported messages, printed as text)
  emulator ids     in common/emu/*: every string literal that is an id beginning "emu-" (the first member
                   of a Hazard, the rule the emulator reports)
  broken cases     in a test file, each `INSTANTIATE_TEST_SUITE_P(Broken, <suite>, ::testing::ValuesIn(<array>)`
                   names an array `<type> <array>[] = { {...}, {...}, };` whose every element is a brace
                   group that opens with the case name (a literal of letters, digits and '_') and closes
                   with its expected message (a regular expression, as literals); anything else between
                   the braces is an error, so a renamed, added or reshaped case cannot pass unread.

Standard library only. tools/test_check_protocol_rules.py runs it on small synthetic trees.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
CASE = re.compile(r"[A-Za-z0-9_]+\Z")
MIN_REASON = 20  # characters: a reason, not a placeholder


class ParseError(Exception):
    pass


# ---- Reading C++ ----------------------------------------------------------------------------------------

def tokens(text):
    """The code of `text` as (kind, value, offset) with comments dropped: 'str' (decoded literal), 'char',
    'word', or 'punct' (one character). Raw strings do not occur in these files and are refused."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ParseError("unterminated comment")
            i = j + 2
        elif c == '"' or c == "'":
            j, value = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\n":
                    raise ParseError(f"newline inside a literal at offset {i}")
                if text[j] == "\\":
                    esc = text[j + 1]
                    value.append({"n": "\n", "t": "\t", "0": "\0"}.get(esc, esc))
                    j += 2
                else:
                    value.append(text[j])
                    j += 1
            if j >= n:
                raise ParseError(f"unterminated literal at offset {i}")
            out.append(("str" if c == '"' else "char", "".join(value), i))
            i = j + 1
        elif c.isalnum() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_" or (text[j] == "'" and c.isdigit())):  # 1'000
                j += 1
            if text[j:j + 1] == '"' and text[i:j] in ("R", "u8R", "LR", "uR", "UR"):
                raise ParseError(f"raw string literal at offset {i}: not read")
            out.append(("word", text[i:j], i))
            i = j
        elif c.isspace():
            i += 1
        else:
            out.append(("punct", c, i))
            i += 1
    return join_literals(out)


def join_literals(toks):
    """Adjacent string literals are one literal, as in C++."""
    out = []
    for t in toks:
        if t[0] == "str" and out and out[-1][0] == "str":
            out[-1] = ("str", out[-1][1] + t[1], out[-1][2])
        else:
            out.append(t)
    return out


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# ---- The checker's ids and the emulator's hazards ---------------------------------------------------------

def reported_ids(files, emulator):
    """{id: [where, ...]} of every rule id the sources can report: "protocol checker: <id>: " literals; in
    the checker's sources `.rule = ` assignments, in the emulator's every literal that is an "emu-" id (the
    emulator passes its Hazard's id through a variable, which is not read)."""
    ids = {}
    for path in files:
        text = read(path)
        toks = tokens(text)
        for k, t in enumerate(toks):
            where = f"{path}:{line_of(text, t[2])}"
            if t[0] == "str":
                m = re.match(r"protocol checker: ([a-z0-9-]+): ", t[1])
                if m:
                    ids.setdefault(m.group(1), []).append(where)
                if emulator and t[1].startswith("emu-") and ID.match(t[1]):
                    ids.setdefault(t[1], []).append(where)
            if (not emulator and t[0] == "word" and t[1] == "rule" and k >= 2 and toks[k - 1][1] == "." and toks[k - 2][0] == "word"
                    and k + 1 < len(toks) and toks[k + 1][1] == "=" and toks[k + 2][1] != "="):
                found = 0
                for u in toks[k + 2:]:
                    if u[0] == "punct" and u[1] == ";":
                        break
                    if u[0] == "str":
                        if not ID.match(u[1]):
                            raise ParseError(f"{where}: rule id {u[1]!r} is not of the form word-word")
                        ids.setdefault(u[1], []).append(where)
                        found += 1
                if not found:
                    raise ParseError(f"{where}: a rule set from an expression with no literal: its id cannot be read")
    return ids


def check_ids(rules, protocol_files, emu_files):
    errors = []
    table = {r["id"]: r for r in rules}
    for judge, files in (("checker", protocol_files), ("emulator", emu_files)):
        ids = reported_ids(files, judge == "emulator")
        for rid, where in sorted(ids.items()):
            if rid not in table:
                errors.append(f"rule '{rid}' ({where[0]}) is reported by the {judge} but not in the table")
            elif table[rid]["judge"] != judge:
                errors.append(f"rule '{rid}' ({where[0]}) is reported by the {judge} but its entry says the "
                              f"{table[rid]['judge']}")
        for r in rules:
            if r["judge"] == judge and r["id"] not in ids:
                errors.append(f"rule '{r['id']}' is in the table but the {judge}'s sources never report it")
    return errors


# ---- The broken twins ------------------------------------------------------------------------------------

def broken_cases(path):
    """[(name, message, where)] of the arrays instantiated as Broken in `path`."""
    text = read(path)
    toks = tokens(text)
    arrays = []
    for k, t in enumerate(toks):
        if t[0] == "word" and t[1] == "INSTANTIATE_TEST_SUITE_P":
            seq = [u[1] for u in toks[k + 1:k + 13]]
            if seq[:2] != ["(", "Broken"]:
                continue
            # ( Broken , Suite , :: testing :: ValuesIn ( array )
            shape = ["(", "Broken", ",", None, ",", ":", ":", "testing", ":", ":", "ValuesIn", "("]
            if any(want is not None and got != want for got, want in zip(seq, shape)):
                raise ParseError(f"{path}:{line_of(text, t[2])}: a Broken instantiation not of the form "
                                 "(Broken, Suite, ::testing::ValuesIn(array))")
            name = toks[k + 13]
            if name[0] != "word" or toks[k + 14][1] != ")":
                raise ParseError(f"{path}:{line_of(text, t[2])}: Broken instantiation of something not an array")
            if name[1] not in arrays:
                arrays.append(name[1])
    cases = []
    for array in arrays:
        starts = [k for k, t in enumerate(toks)
                  if t == ("word", array, t[2]) and k >= 1 and toks[k - 1][0] == "word"
                  and [u[1] for u in toks[k + 1:k + 5]] == ["[", "]", "=", "{"]]
        if len(starts) != 1:
            raise ParseError(f"{path}: array {array} is defined {len(starts)} times, not once")
        k = starts[0] + 5
        while True:
            t = toks[k]
            if t[1] == "}":
                if toks[k + 1][1] != ";":
                    raise ParseError(f"{path}:{line_of(text, t[2])}: {array} does not end with '}};'")
                break
            if t[1] != "{":
                raise ParseError(f"{path}:{line_of(text, t[2])}: {array}: expected a case in braces, found {t[1]!r}")
            depth, j = 1, k + 1
            while depth:
                depth += {"{": 1, "}": -1}.get(toks[j][1], 0) if toks[j][0] == "punct" else 0
                j += 1
            body = toks[k + 1:j - 1]
            where = f"{path}:{line_of(text, t[2])}"
            if len(body) < 3 or body[0][0] != "str" or body[1][1] != "," or not CASE.match(body[0][1]):
                raise ParseError(f"{where}: {array}: a case that does not open with its name as a literal")
            if body[-1][0] != "str":
                raise ParseError(f"{where}: {array}: case {body[0][1]} does not close with its expected message")
            cases.append((body[0][1], body[-1][1], where))
            k = j
            if toks[k][1] == ",":
                k += 1
    if not cases:
        raise ParseError(f"{path}: no broken cases found (no INSTANTIATE_TEST_SUITE_P(Broken, ...))")
    return cases


def expects_protocol_message(message):
    return "protocol checker: " in message


def unregex(pattern):
    """The pattern's literal text where it has one: a backslash escape and a one-character class [x] are
    that character."""
    return re.sub(r"\[(.)\]", r"\1", re.sub(r"\\(.)", r"\1", pattern))


def check_twins(rules, twin_files, other_test_files, root):
    errors = []
    found = {}  # (file, name) -> (message, where)
    for rel in twin_files:
        for name, message, where in broken_cases(os.path.join(root, rel)):
            if any(n == name for _, n in found):
                errors.append(f"broken case {name} ({where}) exists twice among the twin files")
            found[(rel, name)] = (message, where)
    named = {}
    for r in rules:
        for t in r["twins"]:
            key = (t["file"], t["name"])
            if key in named:
                errors.append(f"twin {t['name']} is named by both '{named[key]}' and '{r['id']}'")
            named[key] = r["id"]
            if key not in found:
                errors.append(f"rule '{r['id']}': its twin {t['name']} is not a broken case of {t['file']}")
                continue
            message, where = found[key]
            text = unregex(message)
            if f"protocol checker: {r['id']}:" not in text:
                errors.append(f"rule '{r['id']}': its twin {t['name']} ({where}) does not expect "
                              f"'protocol checker: {r['id']}:'")
            others = set(re.findall(r"protocol checker: ([a-z0-9-]+):", text)) - {r["id"]}
            if others:
                errors.append(f"rule '{r['id']}': its twin {t['name']} ({where}) expects the message of "
                              f"{', '.join(sorted(others))}")
    for (rel, name), (_, where) in sorted(found.items()):
        if (rel, name) not in named:
            errors.append(f"broken case {name} ({where}) is named by no rule of the table")
    for path in other_test_files:
        if not re.search(r"INSTANTIATE_TEST_SUITE_P\s*\(\s*Broken\s*,", read(path)):
            continue
        for name, message, where in broken_cases(path):
            if expects_protocol_message(message):
                errors.append(f"broken case {name} ({where}) expects a protocol message but its file is not one "
                              "of the twin files (common/protocol/rules.h, kTwinFiles)")
    return errors


def check_exceptions(rules):
    errors = []
    for r in rules:
        reason = r["no_twin_because"].strip()
        if r["twins"] and reason:
            errors.append(f"rule '{r['id']}' has twins and a reason for having none: drop the reason")
        if not r["twins"] and len(reason) < MIN_REASON:
            errors.append(f"rule '{r['id']}' has no broken twin and no reason why"
                          + (f" (only {reason!r})" if reason else ""))
    return errors


# ---- Command line -----------------------------------------------------------------------------------

def load_rules(args):
    if args.rules_json:
        return json.loads(read(args.rules_json))
    out = subprocess.run([args.program, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("check", choices=["ids", "twins", "exceptions", "all"])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--program", help="the protocol_rules program (its --json is the table)")
    src.add_argument("--rules-json", help="the table as JSON, as protocol_rules --json writes it")
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   help="the project's root (default: this script's project)")
    args = p.parse_args(argv)
    table = load_rules(args)
    rules = table["rules"]
    root = args.root
    errors = []
    try:
        if args.check in ("ids", "all"):
            protocol = sorted(f for ext in ("cuh", "cu", "h")
                              for f in glob.glob(os.path.join(root, "common", "protocol", "**", f"*.{ext}"),
                                                 recursive=True))
            emu = sorted(f for ext in ("cuh", "cu", "h") for f in glob.glob(os.path.join(root, "common", "emu", f"*.{ext}")))
            if not protocol or not emu:
                raise ParseError(f"no checker or emulator sources under {root}")
            errors += check_ids(rules, protocol, emu)
        if args.check in ("twins", "all"):
            twin_paths = {os.path.normpath(os.path.join(root, f)) for f in table["twin_files"]}
            others = sorted(f for ext in ("cu", "cpp") for f in glob.glob(os.path.join(root, "common", "test", f"*.{ext}"))
                            if os.path.normpath(f) not in twin_paths)
            errors += check_twins(rules, table["twin_files"], others, root)
        if args.check in ("exceptions", "all"):
            errors += check_exceptions(rules)
    except ParseError as e:
        errors.append(f"cannot read the sources: {e}")
    for e in errors:
        print(f"check_protocol_rules {args.check}: {e}", file=sys.stderr)
    if not errors:
        twins = sum(len(r["twins"]) for r in rules)
        print(f"check_protocol_rules {args.check}: {len(rules)} rules, {twins} twins: consistent")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
