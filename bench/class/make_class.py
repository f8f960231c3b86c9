#!/usr/bin/env python3
"""Makes a class of submissions from the starter kits, each built to earn a known verdict.

    make_class.py OUT --cb-lab PATH [--size 300 | --one-each] [--kinds right,gt,...] [--langs python,node,cpp,java,go]

OUT/NAME/ is a submission (a kit made by `cb-lab init`, its rules the reference ones of
tests/kits/, with one classic mistake or one misbehaviour), and OUT.expected.json says what each
was built to earn: which steps fail and whether its conformance part passes. bench/class/grade_class
grades OUT and compares every row with it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "tests", "kits")
# The kits, the file each student writes, and the classic mistakes as edits of the reference
# rules: the list the tests run (tests/kits/kits.json).
with open(os.path.join(REFERENCE, "kits.json")) as f:
    KITS = {k["lang"]: k for k in json.load(f)["kits"]}
RULES = {lang: k["rules"] for lang, k in KITS.items()}
# The mistakes a class is made of: the window trips on a rate above the threshold, not at it
# (it opens one failure late), and a 4xx is counted as a failure of the server.
MISTAKES = {kind: {lang: tuple(k["mistakes"][kind]) for lang, k in KITS.items()} for kind in ("gt", "4xx")}

# What each kind is built to earn: the steps that fail (the rest pass), and the conformance part.
# A crash or a hang fails every step it never reached; neither touches replay.sh, so its
# breaker still conforms.
EXPECTED = {
    "right": {"fail": [], "conformance": "pass"},
    "flood": {"fail": [], "conformance": "pass"},
    "gt": {"fail": [3], "conformance": "fail"},
    "4xx": {"fail": [7], "conformance": "fail"},
    "crash": {"fail": "all", "conformance": "pass"},
    "hang": {"fail": "all", "conformance": "pass"},
    # A breaker that sleeps once HALF_OPEN (Python): the lab stops at the time limit after step 4,
    # and its conformance part ends after three traces in a row with no answer.
    "hang_breaker": {"fail": [5, 6, 7, 8], "conformance": "fail"},
    "empty": {"status": "empty"},
}
# Of every 100: 64 right, 12 and 12 with a classic mistake, 6 crash, 4 flood, 2 empty; and in a
# class of any size two that hang: one whose run.sh never ends (the lab's time limit), one whose
# breaker sleeps once HALF_OPEN (the lab's limit, then the conformance part's stop).
MIX = [("right", 64), ("gt", 12), ("4xx", 12), ("crash", 6), ("hang", 0), ("flood", 4), ("empty", 2)]
HANGING = ["hang", "hang_breaker"]
HANG_PYTHON = ('        if self.state == "HALF_OPEN":\n            if self.admitted >= self.permitted_in_half_open:',
               '        if self.state == "HALF_OPEN":\n            __import__("time").sleep(100000)\n'
               '            if self.admitted >= self.permitted_in_half_open:')

RUN_SCRIPTS = {
    "crash": "echo 'Traceback (most recent call last): boom' >&2\nexit 3\n",
    "hang": "exec sleep 100000\n",
}


def kit(cb_lab, lang, kind, path):
    if kind == "empty":
        os.makedirs(path)
        return
    subprocess.run([cb_lab, "init", path, "--lang", lang], check=True, stdout=subprocess.DEVNULL)
    rules = open(os.path.join(REFERENCE, lang, RULES[lang])).read()
    if kind == "hang_breaker":
        old, new = HANG_PYTHON
        if old not in rules:
            sys.exit("make_class: the Python reference rules have no HALF_OPEN branch to make hang")
        rules = rules.replace(old, new, 1)
    if kind in MISTAKES:
        old, new = MISTAKES[kind][lang]
        if old not in rules:
            sys.exit(f"make_class: {lang}'s reference rules have no {old!r} to change")
        rules = rules.replace(old, new, 1)
    open(os.path.join(path, RULES[lang]), "w").write(rules)
    run_sh = os.path.join(path, "run.sh")
    if kind in RUN_SCRIPTS:
        open(run_sh, "w").write(RUN_SCRIPTS[kind])
    elif kind == "flood":
        # 20 MB of output first, then the lab as the kit runs it.
        body = open(run_sh).read()
        open(run_sh, "w").write("head -c 20000000 /dev/zero | tr '\\0' x\n" + body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--cb-lab", required=True)
    p.add_argument("--size", type=int, default=300)
    p.add_argument("--langs", default=",".join(KITS))
    p.add_argument("--kinds", default=",".join(k for k, _ in MIX))  # hang and hang_breaker: two a class
    p.add_argument("--one-each", action="store_true", help="one submission of every kind in every language")
    a = p.parse_args()
    langs = a.langs.split(",")
    kinds = [(k, n) for k, n in MIX if k in a.kinds.split(",")]
    total = sum(n for _, n in kinds)
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    expected = {}
    # The kinds in proportion, spread over the languages in turn, numbered so the names sort.
    plan = []
    for kind, n in kinds:
        plan += [kind] * round(n * a.size / total)
    plan = (plan + ["right"] * a.size)[: a.size]
    pairs = [(kind, langs[i % len(langs)]) for i, kind in enumerate(plan)]
    # Two right ones become the two that hang, spread apart (the breaker in Python, whose rules
    # the bench knows how to bend).
    hanging = [k for k in HANGING if k in a.kinds.split(",") or a.kinds == ",".join(k for k, _ in MIX)]
    rights = [i for i, (kind, _) in enumerate(pairs) if kind == "right"]
    for n, kind in enumerate(hanging):
        if rights:
            i = rights[(n * len(rights)) // len(hanging)]
            pairs[i] = (kind, "python" if kind == "hang_breaker" else pairs[i][1])
    if a.one_each:
        pairs = [(kind, lang) for kind, _ in kinds for lang in langs]
    for i, (kind, lang) in enumerate(pairs):
        name = f"s{i:03d}-{lang}-{kind}"
        kit(a.cb_lab, lang, kind, os.path.join(a.out, name))
        expected[name] = dict(EXPECTED[kind], lang=lang, kind=kind)
    with open(a.out.rstrip("/") + ".expected.json", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
    print(f"{a.out}: {len(pairs)} submissions")


if __name__ == "__main__":
    main()
