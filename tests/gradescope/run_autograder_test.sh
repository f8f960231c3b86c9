#!/usr/bin/env bash
# grader/gradescope/run_autograder in a fake /autograder, every results.json checked field by
# field against Gradescope's format (check_results.py): a right solution scores 8 of its 9 (no
# replay.sh: the conformance test is there, 0 points, and says why); a submission zipped as one
# folder is found inside it; a rubric decides what students see when and fixes the traces for
# every resubmission; nothing to run, a missing grader, and a grader that stops still leave a
# results.json out of the assignment's points, and a grader's own report is never replaced; a
# submission that rewrites the script while it runs gets its own grade.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
grade=$(realpath "$1")
run_autograder=$project/grader/gradescope/run_autograder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_json() {  # check_json FILE PYTHON-EXPRESSION-ON-d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$1"
}
autograde() {  # autograde CASE [MAX]: run_autograder on $tmp/CASE, its results.json checked
  AUTOGRADER_ROOT=$tmp/$1 CB_GRADE=${CB_GRADE_FOR:-$grade} "$run_autograder"
  python3 "$here/check_results.py" "$tmp/$1/results/results.json" ${2:+"$2"}
}
bent_replay() {  # a replay.sh whose breaker never opens: wrong at the first trip
  printf '#!/bin/sh\nexec /usr/bin/python3 "$(dirname "$0")/bent.py"\n' >"$1/replay.sh"
  cat >"$1/bent.py" <<'PY'
import json, sys
sys.stdin.readline()
for line in sys.stdin:
    print(json.dumps({"decision": "permitted", "state": "CLOSED"}), flush=True)
PY
}

# A right solution without replay.sh: every step, and the conformance test at 0 with the reason.
mkdir -p "$tmp/ok/submission"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/ok/submission/breaker.py"
autograde ok 9
check_json "$tmp/ok/results/results.json" "d['score'] == 8 and len(d['tests']) == 9 and all(t['status'] == 'passed' for t in d['tests'][:8])"
check_json "$tmp/ok/results/results.json" "d['tests'][8]['number'] == 'C' and d['tests'][8]['score'] == 0 and 'cannot open replay.sh' in d['tests'][8]['output']"
check_json "$tmp/ok/results/results.json" "d['output_format'] == 'text' and all(t['output_format'] == 'text' for t in d['tests']) and d['extra_data']['grader_version']"
# The whole grading's wall time (the lab alone takes about 3 s), not the checks' own.
check_json "$tmp/ok/results/results.json" "d['execution_time'] >= 2.5"

# The same under a rubric that caps the steps of a submission no breaker answered for (no
# replay.sh): a script that replays the handout's requests passes the steps with no breaker.
mkdir -p "$tmp/capped/submission" "$tmp/capped/source"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/capped/submission/breaker.py"
echo '{"cap_no_replay": 2}' >"$tmp/capped/source/rubric.json"
autograde capped 9
check_json "$tmp/capped/results/results.json" "d['score'] == 2 and 'earn at most 2 of their 8 points here' in d['output'] and 'cap_no_replay' in d['output']"

# Without a course key every student is graded on the handout's numbers: a lab-settings.json
# handed in with easier ones is the student's to write, never used, and the output says so.
mkdir -p "$tmp/own/submission"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/own/submission/breaker.py"
printf '{"window_size": 4, "minimum_calls": 2, "failure_rate_percent": 90, "wait_in_open_ms": 1000, "permitted_in_half_open": 1}\n' \
  >"$tmp/own/submission/lab-settings.json"
autograde own 9
check_json "$tmp/own/results/results.json" "d['score'] == 8 and 'on the handout' in d['output'] and 'holds other numbers' in d['output']"

# The same, zipped as one folder (and macOS's __MACOSX beside it): found one folder down.
mkdir -p "$tmp/folder/submission/my-lab" "$tmp/folder/submission/__MACOSX"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/folder/submission/my-lab/breaker.py"
autograde folder 9
check_json "$tmp/folder/results/results.json" "d['score'] == 8"

# A rubric: conformance worth 4 and held back until the due date, step 8 hidden, the program's
# output hidden, and one seed for every submission of the assignment.
mkdir -p "$tmp/kit/submission" "$tmp/kit/source"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/kit/submission/breaker.py"
bent_replay "$tmp/kit/submission"
cat >"$tmp/kit/source/rubric.json" <<'JSON'
{"points": {"conformance": 4}, "visibility": {"conformance": "after_due_date", "8": "hidden"},
 "stdout_visibility": "hidden", "seed": 4242, "traces": 30}
JSON
autograde kit 12
check_json "$tmp/kit/results/results.json" "d['score'] == 8 and d['max_score'] == 12 and d['tests'][8]['tags'] == ['trip_at_threshold'] and 'to repeat the run' in d['tests'][8]['output']"
check_json "$tmp/kit/results/results.json" "d['tests'][8]['visibility'] == 'after_due_date' and d['tests'][7]['visibility'] == 'hidden' and d['tests'][0]['visibility'] == 'visible' and d['stdout_visibility'] == 'hidden'"
check_json "$tmp/kit/results/results.json" "d['extra_data']['conformance_seed'] == 4242 and '--seed 4242' in d['tests'][8]['output']"
# The output, which students always see, gives away nothing held back: not the total (8/12 less
# the visible 7/7 would say the hidden parts scored 1 of 5), only the tests shown now.
check_json "$tmp/kit/results/results.json" "'8/12' not in d['output'] and 'Score on the tests shown now 7/7' in d['output']"
# A resubmission meets the same traces: the same counterexample, word for word.
cp "$tmp/kit/results/results.json" "$tmp/kit-first.json"
autograde kit 12
python3 -c "import json,sys; a,b=(json.load(open(f))['tests'][8]['output'] for f in sys.argv[1:]); assert a == b, (a, b)" \
  "$tmp/kit-first.json" "$tmp/kit/results/results.json"

# Nothing to run: out of the assignment's points (the zip's max_score), one test that says why.
mkdir -p "$tmp/empty/submission" "$tmp/empty/source"
echo 12 >"$tmp/empty/source/max_score"
autograde empty 12
check_json "$tmp/empty/results/results.json" "d['score'] == 0 and d['max_score'] == 12 and 'neither run.sh nor breaker.py' in d['output']"

# The grader is not there.
mkdir -p "$tmp/nograder/submission"
CB_GRADE_FOR=$tmp/nope autograde nograder 9
check_json "$tmp/nograder/results/results.json" "d['score'] == 0 and 'not there' in d['output']"

# A grader that stops (exit 2) after writing its report: the report stands. And one that stops
# before writing anything: the script's own, with what the grader said.
mkdir -p "$tmp/stopped/submission"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/stopped/submission/breaker.py"
printf '#!/bin/sh\n"%s" "$@"\nexit 2\n' "$grade" >"$tmp/stops-after"
printf '#!/bin/sh\necho "cb-grade: the server could not start" >&2\nexit 2\n' >"$tmp/stops-before"
chmod +x "$tmp/stops-after" "$tmp/stops-before"
CB_GRADE_FOR=$tmp/stops-after autograde stopped 9
check_json "$tmp/stopped/results/results.json" "d['score'] == 8 and len(d['tests']) == 9"
CB_GRADE_FOR=$tmp/stops-before autograde stopped 9
check_json "$tmp/stopped/results/results.json" "d['score'] == 0 and 'exit 2' in d['output'] and 'could not start' in d['output']"

# A program that crashes at once: graded, all failed, its output shown.
mkdir -p "$tmp/crash/submission"
printf 'echo "Traceback: boom" >&2\nexit 3\n' >"$tmp/crash/submission/run.sh"
autograde crash 9
check_json "$tmp/crash/results/results.json" "d['score'] == 0 and 'Traceback: boom' in d['output'] and 'exited with 3' in d['output']"

# A submission that rewrites run_autograder while it runs (where bash has read to, from /proc):
# its grade is its own (0: it does no lab work), and the script is as it was. The copy that runs
# is in the fake /autograder, so nothing can touch the checkout's.
mkdir -p "$tmp/rewrite/submission"
cp "$run_autograder" "$tmp/rewrite/run_autograder"
cp "$project/tests/fixtures/attacks/autograder_rewrite.sh" "$tmp/rewrite/submission/run.sh"
AUTOGRADER_ROOT=$tmp/rewrite CB_GRADE=$grade bash "$tmp/rewrite/run_autograder"
python3 "$here/check_results.py" "$tmp/rewrite/results/results.json" 9
check_json "$tmp/rewrite/results/results.json" "d['score'] == 0 and len(d['tests']) == 9 and 'ATTACK {\"rewritten\": 0}' in d['output']"
cmp "$run_autograder" "$tmp/rewrite/run_autograder"
# run.sh is run by sh, as the kits, TEACHING's batch and the Classroom workflow run it: a script
# graded one way locally is graded the same way here.
mkdir -p "$tmp/shell/submission"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/shell/submission/breaker.py"
printf 'echo "run by: [${BASH_VERSION:-sh}]"\nexec python3 breaker.py\n' >"$tmp/shell/submission/run.sh"
autograde shell 9
check_json "$tmp/shell/results/results.json" "d['score'] == 8 and 'run by: [sh]' in d['output']"

# A grading that outlives the autograder's deadline (a lab run allowed more than the deadline,
# a program that never ends): stopped at it, with a results.json that says so, out of the
# assignment's points, long before Gradescope's timeout would leave the student nothing.
mkdir -p "$tmp/late/submission"
printf 'exec sleep 600\n' >"$tmp/late/submission/run.sh"
started=$(date +%s)
CB_TIMEOUT=600s CB_DEADLINE=3s autograde late 9
[ $(($(date +%s) - started)) -lt 30 ] || { echo "run_autograder: the deadline did not stop the grading" >&2; exit 1; }
check_json "$tmp/late/results/results.json" "d['score'] == 0 and d['max_score'] == 9 and 'did not finish within 3s' in d['output']"

echo "run_autograder: 13 cases passed"
