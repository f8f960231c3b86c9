#!/usr/bin/env bash
# grader/gradescope/make-autograder-zip: the zip has setup.sh and run_autograder at its top level,
# and cb-grade and flaky-server statically linked (no shared library, so an image needs none of
# the project's packages). Unpacked into a fake /autograder and run with an empty environment,
# its own cb-grade grades a right submission 8/8 and a wrong one (a real library that closes
# after one trial) 7/8.
#   autograder_zip_test.sh DIR-WITH-cb-grade-static DIR-WITH-flaky-server-static
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cp "$1/cb-grade-static" "$2/flaky-server-static" "$tmp/bin/"

echo '{"points": {"conformance": 2}}' >"$tmp/rubric.json"
"$project/grader/gradescope/make-autograder-zip" "$tmp/autograder.zip" --bin "$tmp/bin" --rubric "$tmp/rubric.json" >/dev/null
mkdir -p "$tmp/autograder/source"
/usr/bin/python3 - "$tmp/autograder.zip" "$tmp/autograder/source" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        os.chmod(path, (info.external_attr >> 16) & 0o777)
PY
src=$tmp/autograder/source
[ -f "$src/rubric.json" ] || { echo "the zip has no rubric.json" >&2; exit 1; }
for f in setup.sh run_autograder bin/cb-grade bin/flaky-server; do
  [ -x "$src/$f" ] || { echo "$f is not an executable file in the zip" >&2; exit 1; }
done
for f in bin/cb-grade bin/flaky-server; do
  if ldd "$src/$f" >/dev/null 2>&1; then
    echo "$f is dynamically linked:" >&2; ldd "$src/$f" >&2; exit 1
  fi
  env -i "$src/$f" --help >/dev/null || { echo "$f does not run in an empty environment" >&2; exit 1; }
done

check_json() {  # check_json FILE PYTHON-EXPRESSION-ON-d
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$1"
}
grade_submission() {  # grade_submission NAME FILE: FILE as breaker.py, graded by the zip's own cb-grade
  rm -rf "$tmp/autograder/submission" "$tmp/autograder/results"
  mkdir -p "$tmp/autograder/submission"
  cp "$2" "$tmp/autograder/submission/breaker.py"
  # Debian's python3 first: it has python3-circuitbreaker for the wrong submission.
  env -i PATH=/usr/bin:/bin HOME="$tmp" AUTOGRADER_ROOT="$tmp/autograder" "$src/run_autograder"
  cp "$tmp/autograder/results/results.json" "$tmp/$1.json"
}
grade_submission right "$project/tests/fixtures/students/good_breaker.py"
check_json "$tmp/right.json" "d['score'] == 8 and all(t['status'] == 'passed' for t in d['tests'])"
grade_submission wrong "$project/tests/fixtures/students/library_breaker.py"
check_json "$tmp/wrong.json" "d['score'] == 7 and [t['number'] for t in d['tests'] if t['status'] == 'failed'] == ['6'] and 's6.closed_after_trials' in str(d['tests'][5]['tags'])"
# A starter kit with right rules: its replay.sh is driven by the zip's static cb-grade too, and
# the rubric in the zip gives that part 2 points.
rm -rf "$tmp/autograder/submission" "$tmp/autograder/results"
cp -r "$project/kits/python" "$tmp/autograder/submission"
cp "$project/tests/kits/python/breaker.py" "$tmp/autograder/submission/"
env -i PATH=/usr/bin:/bin HOME="$tmp" AUTOGRADER_ROOT="$tmp/autograder" "$src/run_autograder"
check_json "$tmp/autograder/results/results.json" "d['score'] == 10 and d['max_score'] == 10 and d['tests'][8]['number'] == 'C'"
echo "autograder zip: static programs, layout, rubric, and 3 submissions graded"
