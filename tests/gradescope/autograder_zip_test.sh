#!/usr/bin/env bash
# grader/gradescope/make-autograder-zip: the zip has setup.sh and run_autograder at its top level,
# executable, and the run_autograder inside it, unpacked into a fake /autograder, grades a right
# submission 8/8 and a wrong one (a real library that closes after one trial) 7/8.
# (setup.sh itself builds cb-grade on the image; here the already-built one stands in for it.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
grade=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$project/grader/gradescope/make-autograder-zip" "$tmp/autograder.zip" >/dev/null
mkdir -p "$tmp/autograder/source"
/usr/bin/python3 - "$tmp/autograder.zip" "$tmp/autograder/source" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        os.chmod(path, (info.external_attr >> 16) & 0o777)
PY
src=$tmp/autograder/source
for top in setup.sh run_autograder; do
  [ -x "$src/$top" ] || { echo "$top is not an executable file at the zip's top level" >&2; exit 1; }
done
[ -f "$src/CMakeLists.txt" ] || { echo "the zip does not hold the repository" >&2; exit 1; }

check_json() {  # check_json FILE PYTHON-EXPRESSION-ON-d
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$1"
}
grade_submission() {  # grade_submission NAME FILE: FILE as breaker.py, graded from the zip
  rm -rf "$tmp/autograder/submission" "$tmp/autograder/results"
  mkdir -p "$tmp/autograder/submission"
  cp "$2" "$tmp/autograder/submission/breaker.py"
  AUTOGRADER_ROOT=$tmp/autograder CB_GRADE=$grade "$src/run_autograder"
  cp "$tmp/autograder/results/results.json" "$tmp/$1.json"
}
grade_submission right "$project/tests/fixtures/students/good_breaker.py"
check_json "$tmp/right.json" "d['score'] == 8 and all(t['status'] == 'passed' for t in d['tests'])"
# run_autograder runs breaker.py with python3 from PATH; Debian's has python3-circuitbreaker.
PATH=/usr/bin:$PATH grade_submission wrong "$project/tests/fixtures/students/library_breaker.py"
check_json "$tmp/wrong.json" "d['score'] == 7 and [t['number'] for t in d['tests'] if t['status'] == 'failed'] == ['6'] and 's6.closed_after_trials' in str(d['tests'][5]['tags'])"
echo "autograder zip: layout and 2 submissions graded"
