#!/usr/bin/env python3
"""Checks a results.json field by field against Gradescope's documented format (the autograder
specification: top-level score, execution_time, output, output_format, stdout_visibility,
extra_data, tests; each test's score, max_score, status, name, number, output, output_format,
tags, visibility), and that its points add up: every test's score within its max_score, and the
top-level score and max_score the sums of the tests'.

    check_results.py results.json [MAX_SCORE]
"""
import json
import sys

TOP = {"score", "max_score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
       "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
        "visibility", "extra_data"}
VISIBILITY = {"visible", "hidden", "after_due_date", "after_published"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}


def fail(why):
    sys.exit(f"{sys.argv[1]}: {why}")


def number(v, where):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        fail(f"{where}: expected a number, got {v!r}")


def main():
    d = json.load(open(sys.argv[1]))
    if not isinstance(d, dict):
        fail("not an object")
    if set(d) - TOP:
        fail(f"fields Gradescope does not know: {sorted(set(d) - TOP)}")
    for key in ("score", "max_score", "execution_time"):
        if key in d:
            number(d[key], key)
    for key in ("output",):
        if key in d and not isinstance(d[key], str):
            fail(f"{key}: expected a string")
    for key in ("output_format", "test_output_format", "test_name_format"):
        if key in d and d[key] not in FORMATS:
            fail(f"{key}: {d[key]!r} is not one of {sorted(FORMATS)}")
    for key in ("visibility", "stdout_visibility"):
        if key in d and d[key] not in VISIBILITY:
            fail(f"{key}: {d[key]!r} is not one of {sorted(VISIBILITY)}")
    if "extra_data" in d and not isinstance(d["extra_data"], dict):
        fail("extra_data: expected an object")
    tests = d.get("tests", [])
    if not isinstance(tests, list) or not tests:
        fail("tests: expected at least one test (so the points are out of the assignment's total)")
    for i, t in enumerate(tests):
        where = f"tests[{i}]"
        if set(t) - TEST:
            fail(f"{where}: fields Gradescope does not know: {sorted(set(t) - TEST)}")
        for key in ("score", "max_score"):
            number(t.get(key), f"{where}.{key}")
        if not 0 <= t["score"] <= t["max_score"]:
            fail(f"{where}: score {t['score']} is not within 0..{t['max_score']}")
        if t.get("status") not in ("passed", "failed"):
            fail(f"{where}.status: {t.get('status')!r}")
        if (t["status"] == "passed") != (t["score"] == t["max_score"]):
            fail(f"{where}: status {t['status']} with {t['score']}/{t['max_score']}")
        for key in ("name", "output", "number"):
            if not isinstance(t.get(key), str) or (key != "output" and not t[key]):
                fail(f"{where}.{key}: expected a string")
        if t.get("output_format", "text") not in FORMATS:
            fail(f"{where}.output_format: {t['output_format']!r}")
        if t.get("visibility", "visible") not in VISIBILITY:
            fail(f"{where}.visibility: {t['visibility']!r}")
        if not isinstance(t.get("tags", []), list) or not all(isinstance(x, str) for x in t.get("tags", [])):
            fail(f"{where}.tags: expected strings")
    total = sum(t["max_score"] for t in tests)
    if abs(d.get("score", 0) - sum(t["score"] for t in tests)) > 1e-9:
        fail(f"score {d.get('score')} is not the tests' sum {sum(t['score'] for t in tests)}")
    if "max_score" in d and abs(d["max_score"] - total) > 1e-9:
        fail(f"max_score {d['max_score']} is not the tests' sum {total}")
    if len(sys.argv) > 2 and abs(total - float(sys.argv[2])) > 1e-9:
        fail(f"out of {total}, not the assignment's {sys.argv[2]}")


if __name__ == "__main__":
    main()
