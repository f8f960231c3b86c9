#!/usr/bin/env bash
# grader/gradescope/run_autograder in a fake /autograder: a right solution scores 8 of 8; an
# empty submission and a missing grader still leave a results.json that says why.
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
echo "run_autograder: 4 cases passed"
