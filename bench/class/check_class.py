#!/usr/bin/env python3
"""Compares a class's gradebook (cb-grade --batch ... --format json) with what make_class.py built
each submission to earn. Prints every row that differs and exits 1 if any does.

    check_class.py GRADEBOOK.json CLASS.expected.json [--no-conformance]
"""
import json
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with_conformance = "--no-conformance" not in sys.argv
    book = {row["submission"]: row for row in json.load(open(args[0]))}
    expected = json.load(open(args[1]))
    wrong = []
    for name, want in sorted(expected.items()):
        row = book.get(name)
        if row is None:
            wrong.append(f"{name}: not in the gradebook")
            continue
        if want.get("status") == "empty":
            if row["status"] != "empty":
                wrong.append(f"{name}: {row['status']}, built to be empty")
            continue
        if row["status"] != "graded":
            wrong.append(f"{name}: {row['status']}: {row.get('error', '')}")
            continue
        steps = {int(k): v["status"] for k, v in row["steps"].items()}
        failing = sorted(s for s, st in steps.items() if st != "pass")
        want_fail = sorted(steps) if want["fail"] == "all" else want["fail"]
        if failing != want_fail:
            wrong.append(f"{name}: steps not passed {failing}, built to fail {want_fail}")
        if with_conformance:
            got = row.get("conformance", {}).get("status")
            if got != want["conformance"]:
                wrong.append(f"{name}: conformance {got}, built to {want['conformance']}")
    for line in wrong:
        print(line)
    print(f"{len(expected) - len({w.split(':')[0] for w in wrong})} of {len(expected)} as built")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
