#!/usr/bin/env python3
"""docs/TEACHING.md's commands, run exactly as written. Every ```sh block in it is marked with a
<!-- teaching-test: NAME --> line (an unmarked one fails this test, so none can drift from what
is run), and the block under <!-- teaching-test: rubric.json --> is the rubric the others read.
The job arrays' recipes (a Kubernetes Indexed Job, a Slurm array script, an Actions matrix) are
run as their engines would run each task: the command, once per index, with the variables the
engine sets; not the cluster.
They run in order in one directory holding a class (bench/class/make_class.py: a right Python
kit, one with a classic mistake, an empty folder), each line as the instructor would type it,
and what each says it makes is checked.

    teaching_commands_test.py CB-GRADE CB-LAB STATIC-GRADE-DIR STATIC-SERVER-DIR
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.normpath(os.path.join(HERE, "..", ".."))


def blocks(text):
    """[(marker, language, lines)] in the document's order; marker None when unmarked."""
    out, marker, lang, body = [], None, None, None
    for line in text.splitlines():
        if body is not None:
            if line.startswith("```"):
                out.append((marker, lang, body))
                marker, body = None, None
            else:
                body.append(line)
            continue
        m = re.match(r"<!-- teaching-test: (\S+) -->$", line)
        if m:
            marker = m.group(1)
        elif line.startswith("```"):
            lang, body = line[3:].strip(), []
        elif line.strip():
            marker = None  # a marker names the block right under it
    return out


def main():
    grade, lab, static_grade, static_server = (os.path.realpath(a) for a in sys.argv[1:5])
    found = blocks(open(os.path.join(PROJECT, "docs", "TEACHING.md")).read())
    unmarked = [b for b in found if b[1] == "sh" and b[0] is None]
    if unmarked:
        sys.exit(f"TEACHING.md: a command block no test runs: {unmarked[0][2][0]!r} (mark it <!-- teaching-test: NAME -->)")
    work = tempfile.mkdtemp()
    try:
        run_all(found, work, grade, lab, static_grade, static_server)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    arrays = [b[0] for b in found if b[0] in JOB_ARRAYS]
    assert sorted(arrays) == sorted(JOB_ARRAYS), ("TEACHING.md: a job array's recipe is missing", arrays)
    print(f"TEACHING.md: {sum(1 for b in found if b[1] == 'sh' and b[0] not in JOB_ARRAYS)} command blocks and "
          f"{len(arrays)} job arrays ({', '.join(arrays)}) run as written")


def run_all(found, work, grade, lab, static_grade, static_server):
    subprocess.run([sys.executable, os.path.join(PROJECT, "bench", "class", "make_class.py"), os.path.join(work, "subs"),
                    "--cb-lab", lab, "--one-each", "--kinds", "right,gt,empty", "--langs", "python"],
                   check=True, stdout=subprocess.DEVNULL)
    expected = json.load(open(os.path.join(work, "subs.expected.json")))
    os.remove(os.path.join(work, "subs.expected.json"))
    right = next(n for n, e in expected.items() if e["kind"] == "right")
    bin_dir = os.path.join(work, ".bin")
    os.makedirs(bin_dir)
    for prog, d in (("cb-grade", os.path.dirname(grade)), ("cb-lab", os.path.dirname(lab))):
        os.symlink(os.path.join(d, prog), os.path.join(bin_dir, prog))
    static = os.path.join(work, ".static")
    os.makedirs(static)
    os.symlink(os.path.join(static_grade, "cb-grade-static"), os.path.join(static, "cb-grade-static"))
    os.symlink(os.path.join(static_server, "flaky-server-static"), os.path.join(static, "flaky-server-static"))
    os.symlink(os.path.join(PROJECT, "grader"), os.path.join(work, "grader"))
    env = dict(os.environ, PATH=bin_dir + ":/usr/bin:/bin:" + os.environ.get("PATH", ""), CB_STATIC_BIN=static)
    # The rubric first: the commands that read it come before it in the text.
    rubric = [lines for marker, _, lines in found if marker == "rubric.json"]
    assert len(rubric) == 1, "TEACHING.md: expected one block marked rubric.json"
    json.loads("\n".join(rubric[0]))
    open(os.path.join(work, "rubric.json"), "w").write("\n".join(rubric[0]) + "\n")
    for marker, lang, lines in found:
        if marker in JOB_ARRAYS:
            JOB_ARRAYS[marker]("\n".join(lines) + "\n", work, env, expected)
            continue
        if lang != "sh":
            continue
        cwd = work
        if marker == "one":  # in a student's kit, as its README says
            cwd = os.path.join(work, "subs", right)
            shutil.copy(os.path.join(work, "rubric.json"), cwd)
        for line in lines:
            if not line.strip():
                continue
            r = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
            allowed = (0, 1) if line.startswith("cb-grade") else (0,)
            if r.returncode not in allowed:
                sys.exit(f"TEACHING.md [{marker}]: {line}\n  exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            check(marker, line, r, work, cwd, expected)


def run_task(command, cwd, env, where):
    """One task of a job array, as its engine runs it: sh -c COMMAND with the task's environment."""
    r = subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"TEACHING.md [{where}]: {command}\n  exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def check_merged(book_path, expected, where):
    book = rows(book_path)
    assert set(book) == set(expected), (where, book.keys())
    for name, want in expected.items():
        got = book[name]
        assert got["status"] == ("empty" if want["kind"] == "empty" else "graded"), (where, got)
        if want["kind"] != "empty":
            assert got["conformance"] == want["conformance"], (where, got)


def kubernetes(text, work, env, expected):
    """The Indexed Job's container command, once per completion index, as its pods run it."""
    job = yaml.safe_load(text)
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed", "kubernetes: not an Indexed Job"
    n = job["spec"]["completions"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["sh", "-c"], container["command"]
    command = container["command"][2]
    assert f"--shard env/{n}" in command, ("kubernetes: --shard env/N must be the Job's completions", command)
    for i in range(n):
        run_task(command, work, dict(env, JOB_COMPLETION_INDEX=str(i), HOSTNAME=f"grade-{i}-x7k2p"), "kubernetes")
        assert os.path.isfile(os.path.join(work, "shards", f"{i}-grade-{i}-x7k2p", "shard.json")), "kubernetes"


def slurm(text, work, env, expected):
    """sbatch's script, once per array task, with the variables Slurm sets."""
    first, last = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", text, re.M).groups())
    script = os.path.join(work, "grade.sh")
    open(script, "w").write(text)
    for task in range(first, last + 1):
        run_task("sh grade.sh", work, dict(env, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN=str(first),
                                            SLURM_ARRAY_TASK_COUNT=str(last - first + 1)), "slurm")
    # One index run again alone (`sbatch --array=1 grade.sh`), as Slurm sets it: the same shard,
    # taken up from what it kept.
    teaching = open(os.path.join(PROJECT, "docs", "TEACHING.md")).read()
    again = int(re.search(r"`sbatch --array=(\d+) grade\.sh`", teaching).group(1))
    r = run_task("sh grade.sh", work, dict(env, SLURM_ARRAY_TASK_ID=str(again), SLURM_ARRAY_TASK_MIN=str(again),
                                           SLURM_ARRAY_TASK_MAX=str(again), SLURM_ARRAY_TASK_COUNT="1"), "slurm")
    shard = json.load(open(os.path.join(work, "shards", str(again), "shard.json")))
    assert (shard["index"], shard["count"]) == (again, last - first + 1), ("slurm: a re-run is its own shard", shard)
    assert "judged from what an earlier run kept" in r.stderr, ("slurm: a re-run takes up what was kept", r.stderr)
    os.remove(script)


def actions(text, work, env, expected):
    """The matrix's grading step once per shard, in a checkout of its own; the merge job's step on
    what the artifacts bring back (the matrix jobs' shards/)."""
    wf = yaml.safe_load(text)
    checkout = os.path.join(work, "actions-checkout")
    os.makedirs(checkout)
    os.symlink(os.path.join(work, "subs"), os.path.join(checkout, "subs"))
    shutil.copy(os.path.join(work, "rubric.json"), checkout)
    grade = wf["jobs"]["grade"]
    step = next(s["run"] for s in grade["steps"] if "run" in s)
    for shard in grade["strategy"]["matrix"]["shard"]:
        run_task(step.replace("${{ matrix.shard }}", str(shard)), checkout, env, "actions")
    assert wf["jobs"]["merge"]["needs"] == "grade", "actions: merge must wait for every shard"
    merge = next(s["run"] for s in wf["jobs"]["merge"]["steps"] if "run" in s)
    run_task(merge, checkout, env, "actions")
    check_merged(os.path.join(checkout, "merged-actions.csv"), expected, "actions")
    shutil.rmtree(checkout)


JOB_ARRAYS = {"kubernetes": kubernetes, "slurm": slurm, "actions": actions}


def rows(path):
    with open(path, newline="") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


def check(marker, line, r, work, cwd, expected):
    where = f"TEACHING.md [{marker}]: {line}"
    if marker == "class":
        book = rows(os.path.join(work, "gradebook.csv"))
        assert set(book) == set(expected), (where, book.keys())
        for name, want in expected.items():
            got = book[name]
            if want["kind"] == "empty":
                assert got["status"] == "empty", (where, got)
                continue
            assert got["status"] == "graded", (where, got)
            assert got["conformance"] == want["conformance"], (where, got)
            for f in ("report.html", "report.txt", "report.json", "record.json", "conformance.json", "grading.json"):
                assert os.path.isfile(os.path.join(work, "reports", name, f)), (where, name, f)
        assert len({row["conformance_seed"] for row in book.values() if row["status"] == "graded"}) == 1, where
        assert os.path.isfile(os.path.join(work, "reports", "index.html")), (where, "the class page")
    elif marker == "resume":
        # Everything was kept whole by the same batch: nothing runs again.
        assert re.search(r"3 submissions in \d+:\d\d: 2 graded \(\d passed, 2 of them judged from what an earlier run kept\), 1 empty",
                         r.stderr), (where, r.stderr)
    elif marker == "regrade":
        assert re.search(r"regraded 3 submissions: \d+ verdicts changed, \d+ only rescaled", r.stderr), (where, r.stderr)
        book = rows(os.path.join(work, "gradebook.csv"))
        right = next(n for n, e in expected.items() if e["kind"] == "right")
        # The rubric's points: 14 for the steps, 5 for conformance.
        assert book[right]["score"] == "19" and book[right]["max_score"] == "19", (where, book[right])
        assert "changes" in book[right], where
    elif marker == "gathered":
        # Kubernetes' and Slurm's shards together: every submission graded twice, each kept once.
        check_merged(os.path.join(work, "merged-all.csv"), expected, where)
        assert "(a shard run twice)" in r.stderr, (where, r.stderr)
    elif marker == "verify":
        assert re.search(r"verified 3 submissions \(2 graded\): every grade follows from its evidence", r.stderr), \
            (where, r.stderr)
    elif marker == "shards" and line.startswith("cb-grade merge"):
        # The shards joined: every submission once, each with the verdict it was built to earn.
        book = rows(os.path.join(work, "merged.csv"))
        assert set(book) == set(expected), (where, book.keys())
        shards = [rows(os.path.join(work, f"shard-{i}.csv")) for i in (0, 1)]
        assert sorted(list(shards[0]) + list(shards[1])) == sorted(expected), (where, "each in one shard")
        for name, want in expected.items():
            got = book[name]
            assert got["status"] == ("empty" if want["kind"] == "empty" else "graded"), (where, got)
            if want["kind"] != "empty":
                assert got["conformance"] == want["conformance"], (where, got)
        assert os.path.isfile(os.path.join(work, "merged", "index.html")), (where, "the class page")
    elif marker == "variants" and line.startswith("cb-grade"):
        book = rows(os.path.join(work, "gradebook.csv"))
        assert all(row["student"] == name for name, row in book.items()), (where, book)
    elif marker == "variants" and line.startswith("cb-lab init"):
        assert os.path.isfile(os.path.join(work, "kits", "ada", "lab-settings.json")), where
    elif marker == "roster" and line.startswith("cb-lab"):
        for f in ("lab-settings.json", "HANDOUT.md"):
            assert os.path.isfile(os.path.join(work, "handed-out", "ada", f)), (where, f)
    elif marker == "one":
        report = r.stdout
        assert "Conformance" in report and "seed 20261201" in report, (where, report[-1500:])
        assert os.path.isfile(os.path.join(cwd, "out", "state.json")), where
    elif marker == "zip":
        with zipfile.ZipFile(os.path.join(work, "autograder.zip")) as z:
            names = set(z.namelist())
            assert {"setup.sh", "run_autograder", "bin/cb-grade", "rubric.json", "max_score"} <= names, (where, names)
            assert z.read("max_score").decode().strip() == "19", where


if __name__ == "__main__":
    main()
