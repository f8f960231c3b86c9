#!/usr/bin/env bash
# grader/gradescope/make-autograder-zip: the zip has setup.sh and run_autograder at its top level,
# and cb-grade and flaky-server statically linked (no shared library, so an image needs none of
# the project's packages). Unpacked into a fake /autograder and run with an empty environment,
# its own cb-grade grades a right submission 8/8 and a wrong one (a real library that closes
# after one trial) 7/8; a starter kit 10/10 with its conformance part; and, from a zip with a
# course key, a kit made for one student 10/10 when submission_metadata.json names them, and
# step 1 failed (another's numbers) when it names someone else.
#   autograder_zip_test.sh DIR-WITH-cb-grade-static DIR-WITH-flaky-server-static CB-LAB
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cp "$1/cb-grade-static" "$2/flaky-server-static" "$tmp/bin/"

echo '{"points": {"conformance": 2}, "seed": 11, "traces": 60, "visibility": {"conformance": "after_due_date"}}' >"$tmp/rubric.json"
# --bin takes the build tree as CMake leaves it (the two programs in two folders)...
"$project/grader/gradescope/make-autograder-zip" "$tmp/autograder.zip" --bin "$(dirname "$1")" --rubric "$tmp/rubric.json" >/dev/null
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
[ "$(cat "$src/max_score")" = 10 ] || { echo "the zip's max_score is not the rubric's 10" >&2; exit 1; }
for f in setup.sh run_autograder bin/cb-grade bin/flaky-server; do
  [ -x "$src/$f" ] || { echo "$f is not an executable file in the zip" >&2; exit 1; }
done
for f in bin/cb-grade bin/flaky-server; do
  if ldd "$src/$f" >/dev/null 2>&1; then
    echo "$f is dynamically linked:" >&2; ldd "$src/$f" >&2; exit 1
  fi
  env -i "$src/$f" --help >/dev/null || { echo "$f does not run in an empty environment" >&2; exit 1; }
done
"$src/bin/cb-grade" --version | grep -q '^cb-grade [0-9]' || { echo "cb-grade --version says no version" >&2; exit 1; }
"$src/bin/flaky-server" --version | grep -q '^flaky-server [0-9]' || { echo "flaky-server --version says no version" >&2; exit 1; }
"$project/grader/gradescope/make-autograder-zip" --version | grep -q '^make-autograder-zip [0-9]' ||
  { echo "make-autograder-zip --version says no version" >&2; exit 1; }

# setup.sh on an image that lacks every kit's runtime asks for each by its package: a stand-in
# apt-get keeps the names and refuses any that is not a package installed here.
mkdir -p "$tmp/stand-in" "$tmp/bare"
cat >"$tmp/stand-in/apt-get" <<SH
#!/bin/sh
[ "\$1" = update ] && exit 0
for p in "\$@"; do
  case \$p in -*|install) continue ;; esac
  dpkg-query -W -f='\${Status}' "\$p" 2>/dev/null | grep -q 'install ok installed' || { echo "apt-get: \$p is not installed" >&2; exit 1; }
  echo "\$p" >>"$tmp/apt-asked"
done
SH
chmod +x "$tmp/stand-in/apt-get"
for t in dpkg-query grep; do ln -s "$(command -v $t)" "$tmp/bare/$t"; done
env -i PATH="$tmp/stand-in:$tmp/bare" AUTOGRADER_ROOT="$tmp/autograder" /bin/bash "$src/setup.sh"
[ "$(sort "$tmp/apt-asked" | tr '\n' ' ')" = "g++ golang-go nodejs openjdk-17-jdk-headless python3 " ] ||
  { echo "setup.sh asked for: $(cat "$tmp/apt-asked")" >&2; exit 1; }

unpack() {  # unpack ZIP: a fresh fake /autograder with ZIP in its source/, modes kept
  rm -rf "$tmp/autograder"
  mkdir -p "$tmp/autograder/source"
  (cd "$tmp/autograder/source" && /usr/bin/python3 -c "
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        os.chmod(z.extract(info, '.'), (info.external_attr >> 16) & 0o777)" "$1")
}
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
  /usr/bin/python3 "$here/check_results.py" "$tmp/$1.json" 10
}
grade_submission right "$project/tests/fixtures/students/good_breaker.py"
check_json "$tmp/right.json" "d['score'] == 8 and all(t['status'] == 'passed' for t in d['tests'][:8]) and d['tests'][8]['visibility'] == 'after_due_date'"
grade_submission wrong "$project/tests/fixtures/students/library_breaker.py"
check_json "$tmp/wrong.json" "d['score'] == 7 and [t['number'] for t in d['tests'][:8] if t['status'] == 'failed'] == ['6'] and 's6.closed_after_trials' in str(d['tests'][5]['tags'])"
# A starter kit with right rules: its replay.sh is driven by the zip's static cb-grade too, and
# the rubric in the zip gives that part 2 points.
rm -rf "$tmp/autograder/submission" "$tmp/autograder/results"
"$3" init "$tmp/autograder/submission" --lang python >/dev/null
cp "$project/tests/kits/python/breaker.py" "$tmp/autograder/submission/"
env -i PATH=/usr/bin:/bin HOME="$tmp" AUTOGRADER_ROOT="$tmp/autograder" "$src/run_autograder"
check_json "$tmp/autograder/results/results.json" "d['score'] == 10 and d['max_score'] == 10 and d['tests'][8]['number'] == 'C'"

# Each student on their own numbers: the zip carries the course key; Gradescope says who submitted.
echo "a course key for the zip test, 32b" >"$tmp/course.key"
# ... or a folder with both (and the key, 0644 on the instructor's disk, is 0600 in the zip).
chmod 644 "$tmp/course.key"
"$project/grader/gradescope/make-autograder-zip" "$tmp/keyed.zip" --bin "$tmp/bin" --rubric "$tmp/rubric.json" \
  --course-key "$tmp/course.key" >/dev/null
/usr/bin/python3 -c "import sys, zipfile; m = {i.filename: (i.external_attr >> 16) & 0o777 for i in zipfile.ZipFile(sys.argv[1]).infolist()}; assert m['course.key'] == 0o600, oct(m['course.key'])" "$tmp/keyed.zip"
unpack "$tmp/keyed.zip"
[ -f "$src/course.key" ] || { echo "the keyed zip has no course.key" >&2; exit 1; }
"$3" init "$tmp/autograder/submission" --lang python --student ada@example.edu --course-key "$tmp/course.key" >/dev/null
cp "$project/tests/kits/python/breaker.py" "$tmp/autograder/submission/"
metadata() {  # metadata EMAIL: who Gradescope says submitted (with a course sid too: the email names them)
  printf '{"id": 1, "users": [{"email": "%s", "sid": "s0042", "id": 7, "name": "A Student"}]}\n' "$1" \
    >"$tmp/autograder/submission_metadata.json"
}
metadata Ada@example.edu
env -i PATH=/usr/bin:/bin HOME="$tmp" AUTOGRADER_ROOT="$tmp/autograder" "$src/run_autograder"
check_json "$tmp/autograder/results/results.json" "d['score'] == 10 and \"student ada@example.edu's numbers\" in d['output']"
metadata grace@example.edu
env -i PATH=/usr/bin:/bin HOME="$tmp" AUTOGRADER_ROOT="$tmp/autograder" "$src/run_autograder"
check_json "$tmp/autograder/results/results.json" "d['tests'][0]['status'] == 'failed' and 'numbers of a different variant' in d['tests'][0]['output']"

# A sample of a generated class (bench/class/make_class.py: each kit right, with each classic
# mistake; run_autograder_test.sh has the crashes), each graded by the zip's cb-grade as Gradescope
# would, its results.json checked field by field and its verdict the one it was built to earn.
# Every language once and every kind at least once (a Latin square over the 3 kinds x 5
# languages): that every kit earns the same verdict for the same mistake is kits_test's to show.
unpack "$tmp/autograder.zip"
/usr/bin/python3 "$project/bench/class/make_class.py" "$tmp/class" --cb-lab "$3" --one-each --kinds right,gt,4xx >/dev/null
samples=0
i=-1
for sub in "$tmp/class"/*/; do
  i=$((i + 1))  # --one-each names them kind by kind, 5 languages each
  [ $(((i / 5 + i % 5) % 3)) -eq 0 ] || continue
  name=$(basename "$sub")
  rm -rf "$tmp/autograder/submission" "$tmp/autograder/results"
  cp -r "$sub" "$tmp/autograder/submission"
  env -i PATH=/usr/bin:/bin HOME="$tmp" AUTOGRADER_ROOT="$tmp/autograder" "$src/run_autograder"
  /usr/bin/python3 "$here/check_results.py" "$tmp/autograder/results/results.json" 10
  /usr/bin/python3 - "$tmp/autograder/results/results.json" "$tmp/class.expected.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))[sys.argv[3]]
failing = [int(t["number"]) for t in d["tests"][:8] if t["status"] != "passed"]
want_fail = list(range(1, 9)) if want["fail"] == "all" else want["fail"]
conformance = "pass" if d["tests"][8]["status"] == "passed" else "fail"
assert (failing, conformance) == (want_fail, want["conformance"]), (sys.argv[3], failing, conformance, want)
PY
  samples=$((samples + 1))
done
[ "$samples" -eq 5 ] || { echo "graded $samples class samples, not one per language" >&2; exit 1; }
echo "autograder zip: static programs, layout, rubric, course key, 5 submissions and $samples class samples graded"
