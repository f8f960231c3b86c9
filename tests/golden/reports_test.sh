#!/usr/bin/env bash
# The grader's reports, byte for byte, against the ones in tests/golden/expected/: every fixture
# of tests/fixtures/submissions in every format, two --step views, and a class kept by
# `--batch --run --conformance --reports` (kept-class/, with its conformance answers) graded
# again with --regrade. Only what changes from run to run is rewritten before comparing: the
# grader's version, the time a grade took, and the folders of this run.
#
# It holds the reports still while the grader's insides are rebuilt. A change that means to
# change a report rewrites the expected files and shows the difference in its commit:
#   CB_UPDATE_GOLDEN=1 tests/golden/reports_test.sh CB-GRADE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$(cd "$here/../fixtures/submissions" && pwd)
grade=$(realpath "$1")
expected=$here/expected
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The version this grader writes into its reports, read from one of them.
version=$("$grade" --dir "$fixtures/good" --record "$fixtures/good/record.json" --format json |
  sed -n 's/^  "grader_version": "\(.*\)",$/\1/p')
[ -n "$version" ] || { echo "reports_test: no grader_version in a JSON report" >&2; exit 1; }

normalise() {  # standard input -> standard output, with what varies between runs named instead
  sed -e "s|$tmp|<tmp>|g" -e "s|$fixtures|<fixtures>|g" -e "s|$version|<version>|g" \
    -e 's/"\(seconds\|shrink_seconds\|execution_time\)": [0-9.e+-]*/"\1": <seconds>/g' \
    -e 's/ time="[0-9.]*"/ time="<seconds>"/g' \
    -e "s/gradebook's digest: [0-9a-f]\{64\}/gradebook's digest: <sha256 of rows naming the version>/g"
}

failed=0
compare() {  # compare NAME: $tmp/got/NAME against expected/NAME
  if [ "${CB_UPDATE_GOLDEN:-}" = 1 ]; then
    mkdir -p "$(dirname "$expected/$1")"
    cp "$tmp/got/$1" "$expected/$1"
  elif [ ! -f "$expected/$1" ]; then
    echo "reports_test: $1: no expected report (CB_UPDATE_GOLDEN=1 writes it)" >&2
    failed=1
  elif ! cmp -s "$tmp/got/$1" "$expected/$1"; then
    echo "reports_test: $1 differs from tests/golden/expected/$1:" >&2
    # The HTML page is one line: its tags on lines of their own make the difference readable.
    diff <(sed 's/></>\n</g' "$expected/$1") <(sed 's/></>\n</g' "$tmp/got/$1") | head -40 >&2 || true
    failed=1
  fi
}

# run NAME ARGS...: a report on standard output (the exit code is the verdict's, kept in it too)
run() {
  local name=$1 rc=0
  shift
  mkdir -p "$(dirname "$tmp/got/$name")"
  "$grade" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  { cat "$tmp/out"; echo "--- exit $rc"; cat "$tmp/err"; } | normalise >"$tmp/got/$name"
  compare "$name"
}

for sub in "$fixtures"/*/; do
  sub=${sub%/}
  name=$(basename "$sub")
  for format in text json junit gradescope html classroom; do
    run "fixtures/$name.$format" --dir "$sub" --record "$sub/record.json" --format "$format"
  done
done
for step in 3 6; do
  for format in text json; do
    run "steps/good-step$step.$format" --dir "$fixtures/good" --record "$fixtures/good/record.json" \
      --step "$step" --format "$format"
  done
done

# The kept class, regraded: the gradebook (both forms), what each folder's reports now say.
for format in csv json; do
  rm -rf "$tmp/class"
  cp -r "$here/kept-class" "$tmp/class"
  # eve wrote none of the lab's files: her empty files/ is what git does not keep, so it is gone
  # here as in any clone (a regrade reads no folder as no files).
  rmdir "$tmp/class/eve/files" 2>/dev/null || true
  run "regrade/gradebook.$format" --regrade "$tmp/class" -o "$tmp/book.$format"
  normalise <"$tmp/book.$format" >"$tmp/got/regrade/book.$format"
  compare "regrade/book.$format"
done
for student in "$tmp"/class/*/; do
  name=$(basename "$student")
  for report in report.txt report.json report.html; do
    normalise <"$student/$report" >"$tmp/got/regrade/$name.$report"
    compare "regrade/$name.$report"
  done
done
exit $failed
