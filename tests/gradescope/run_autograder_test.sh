#!/usr/bin/env bash
# grader/gradescope/run_autograder in a fake /autograder: a right solution scores 8 of 8; an
# empty submission and a missing grader still leave a results.json that says why; a submission
# that rewrites the script while it runs gets its own grade.
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

# A right solution.
mkdir -p "$tmp/ok/submission"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/ok/submission/breaker.py"
AUTOGRADER_ROOT=$tmp/ok CB_GRADE=$grade "$run_autograder"
check_json "$tmp/ok/results/results.json" "d['score'] == 8 and len(d['tests']) == 8 and all(t['status'] == 'passed' for t in d['tests'])"

# Nothing to run.
mkdir -p "$tmp/empty/submission"
AUTOGRADER_ROOT=$tmp/empty CB_GRADE=$grade "$run_autograder"
check_json "$tmp/empty/results/results.json" "d['score'] == 0 and 'neither run.sh nor breaker.py' in d['output']"

# The grader is not there.
mkdir -p "$tmp/nograder/submission"
AUTOGRADER_ROOT=$tmp/nograder CB_GRADE=$tmp/nope "$run_autograder"
check_json "$tmp/nograder/results/results.json" "d['score'] == 0 and 'not there' in d['output']"

# A program that crashes at once: graded, all failed, its output shown.
mkdir -p "$tmp/crash/submission"
printf 'echo "Traceback: boom" >&2\nexit 3\n' >"$tmp/crash/submission/run.sh"
AUTOGRADER_ROOT=$tmp/crash CB_GRADE=$grade "$run_autograder"
check_json "$tmp/crash/results/results.json" "d['score'] == 0 and 'Traceback: boom' in d['output'] and 'exited with 3' in d['output']"
# A starter kit's submission with a replay.sh: one more test, the conformance part, weighed by
# the rubric beside run_autograder.
mkdir -p "$tmp/kit/submission" "$tmp/kit/source"
cp "$project/tests/fixtures/students/good_breaker.py" "$tmp/kit/submission/breaker.py"
printf '#!/bin/sh\nexec /usr/bin/python3 "$(dirname "$0")/bent.py"\n' >"$tmp/kit/submission/replay.sh"
cat >"$tmp/kit/submission/bent.py" <<'PY'
import json, sys
sys.stdin.readline()
for line in sys.stdin:  # never opens: wrong at the first trip
    print(json.dumps({"decision": "permitted", "state": "CLOSED"}), flush=True)
PY
echo '{"points": {"conformance": 4}}' >"$tmp/kit/source/rubric.json"
AUTOGRADER_ROOT=$tmp/kit CB_GRADE=$grade "$run_autograder"
check_json "$tmp/kit/results/results.json" "d['score'] == 8 and d['max_score'] == 12 and len(d['tests']) == 9 and d['tests'][8]['tags'] == ['trip_at_threshold'] and 'to repeat the run' in d['tests'][8]['output']"
# A submission that rewrites run_autograder while it runs (where bash has read to, from /proc):
# its grade is its own (0: it does no lab work), and the script is as it was. The copy that runs
# is in the fake /autograder, so nothing can touch the checkout's.
mkdir -p "$tmp/rewrite/submission"
cp "$run_autograder" "$tmp/rewrite/run_autograder"
cp "$project/tests/fixtures/attacks/autograder_rewrite.sh" "$tmp/rewrite/submission/run.sh"
AUTOGRADER_ROOT=$tmp/rewrite CB_GRADE=$grade bash "$tmp/rewrite/run_autograder"
check_json "$tmp/rewrite/results/results.json" "d['score'] == 0 and len(d['tests']) == 8 and 'ATTACK {\"rewritten\": 0}' in d['output']"
cmp "$run_autograder" "$tmp/rewrite/run_autograder"
echo "run_autograder: 6 cases passed"
