#!/usr/bin/env bash
# grader/github-classroom/classroom.yml, its own steps run as GitHub would run them: the workflow
# is read with a YAML parser, its "Build cb-grade" and "Grade" scripts run with bash -e under
# CI=true, on a clean copy of this tree (its tracked files only), in a student's repository
# made from a starter kit. The build succeeds (a Release build with GCC, CI set), a branch as
# CB_LAB_REF is refused, a cached build is reused, and the result the run shows is checked: a
# right kit full marks under the course's rubric (an Actions variable; a rubric the student puts
# in the repository is never read), a classic mistake its score (and a failed job), and a grader
# that cannot grade still a 0 out of the points. GitHub Classroom and its reporter are gone: no
# step posts to them, and every action is on a Node 24 major. apt-get and sudo are stand-ins:
# apt-get checks that every package the step names is installed, sudo runs as root.
# With ccache installed and a CACHE-DIR given, the build's compiles are cached there between runs
# (CMake takes its compiler launcher from the environment): the first run compiles everything,
# later ones only what changed, with the same flags and the same binary.
#   classroom_workflow_test.sh CB-LAB [CACHE-DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
cb_lab=$(realpath "$1")
cache_dir=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "classroom workflow test: skipped (the workflow grades as root)"; exit 77; }

# The steps, from the workflow itself.
/usr/bin/python3 - "$project/grader/github-classroom/classroom.yml" "$tmp" <<'PY'
import sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
job = wf["jobs"]["grade"]
steps = {s.get("name", s.get("id", "")): s for s in job["steps"]}
uses = [s["uses"] for s in job["steps"] if "uses" in s]
assert not any("classroom-resources" in u for u in uses), uses  # sunset with GitHub Classroom
node24 = {"actions/checkout": 5, "actions/cache": 5, "actions/upload-artifact": 6}
for u in uses:
    name, version = u.split("@")
    assert int(version.lstrip("v")) >= node24[name], f"{u}: not a Node 24 major"
assert steps["Grade"]["env"]["CB_LAB_RUBRIC"] == "${{ vars.CB_LAB_RUBRIC }}", steps["Grade"].get("env")
assert ".github/cb-lab" not in steps["Grade"]["run"]
assert set(wf["permissions"]) == {"contents"}, wf["permissions"]
assert wf["env"]["CB_LAB_REF"] != "main"
for name, file in (("Build cb-grade", "build.sh"), ("Kit runtimes", "runtimes.sh"), ("Grade", "grade.sh")):
    open(f"{sys.argv[2]}/{file}", "w").write(steps[name]["run"])
PY

# Stand-ins for what a runner has and this machine must not do.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
cat >"$tmp/bin/apt-get" <<'SH'
#!/bin/sh
[ "$1" = update ] && exit 0
for p in "$@"; do
  case $p in -*|install) continue ;; esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || { echo "apt-get: $p is not installed" >&2; exit 1; }
  echo "apt-get: $p"
done
SH
chmod +x "$tmp/bin/sudo" "$tmp/bin/apt-get"
step() {  # step REPO SCRIPT [VAR=VALUE...]: one of the workflow's scripts, as GitHub runs it
  local repo=$1 script=$2
  shift 2
  # Each repository's runner has a home of its own (where the cache puts the grader).
  mkdir -p "$repo.home"
  (cd "$repo" && env -u CB_WARNINGS_AS_ERRORS CI=true GITHUB_ACTIONS=true PATH="$tmp/bin:$PATH" HOME="$repo.home" \
    GITHUB_OUTPUT="$repo/github_output" GITHUB_STEP_SUMMARY="$repo/summary.md" RUNNER_TEMP="$repo.home" \
    CB_LAB_RUBRIC="${rubric:-}" "$@" bash --noprofile --norc -e -o pipefail "$tmp/$script")
}
result() {  # result REPO: the grade's result, as the run keeps it
  cat "$1/cb-lab-report/result.json"
}

# A student's repository: a Python kit with the reference rules, the workflow and a rubric.
student() {  # student DIR [FROM TO]: the kit, with one line of its rules changed
  "$cb_lab" init "$1" --lang python >/dev/null
  cp "$project/tests/kits/python/breaker.py" "$1/breaker.py"
  if [ $# -eq 3 ]; then sed -i "s/$2/$3/" "$1/breaker.py"; fi
  mkdir -p "$1/.github/workflows" "$1/.github/cb-lab"
  cp "$project/grader/github-classroom/classroom.yml" "$1/.github/workflows/"
  # A rubric of the student's own, where the old workflow read it: never read now.
  echo '{"points": {"1": 100}}' >"$1/.github/cb-lab/rubric.json"
}
# The course's rubric, as the organization's Actions variable CB_LAB_RUBRIC holds it.
rubric='{"points": {"conformance": 3}, "seed": 5, "traces": 40}'
student "$tmp/ada"
# The checkout of cb-lab: this tree's tracked files, nothing built.
mkdir "$tmp/ada/.cb-lab"
(cd "$project" && git ls-files -z | xargs -0 cp --parents -t "$tmp/ada/.cb-lab")
ref=$(git -C "$project" rev-parse HEAD)

# A branch is not a version.
if step "$tmp/ada" build.sh CB_LAB_REF=main 2>"$tmp/refused.txt"; then
  echo "a branch as CB_LAB_REF was accepted" >&2; exit 1
fi
grep -q "pin it to a release tag" "$tmp/refused.txt"

# The build, under CI=true, with the compiler of this Debian.
launcher=()
if [ -n "$cache_dir" ] && command -v ccache >/dev/null; then
  # BASEDIR makes the checkout's paths relative, so a new temporary folder still hits the cache.
  launcher=(CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR="$cache_dir" CCACHE_BASEDIR="$tmp/ada/.cb-lab" CCACHE_MAXSIZE=1G)
fi
step "$tmp/ada" build.sh CB_LAB_REF="$ref" "${launcher[@]}" >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log" >&2; exit 1; }
[ -x "$tmp/ada.home/.cb-lab-bin/cb-grade" ]
if ldd "$tmp/ada.home/.cb-lab-bin/cb-grade" >/dev/null 2>&1; then echo "the cached cb-grade is not static" >&2; exit 1; fi
# Nothing of the harness is left in the folder graded.
[ ! -e "$tmp/ada/.cb-lab" ] && [ ! -e "$tmp/ada/.cb-lab-bin" ]

# The kits' runtimes on a runner that has none of them: each asked for by its package (the
# stand-in apt-get refuses a name that is not a package installed here).
mkdir -p "$tmp/bare"
for t in dpkg-query grep; do ln -s "$(command -v $t)" "$tmp/bare/$t"; done
(cd "$tmp/ada" && env -i PATH="$tmp/bin:$tmp/bare" /bin/bash --noprofile --norc -e -o pipefail "$tmp/runtimes.sh") \
  >"$tmp/runtimes.log" 2>&1 || { cat "$tmp/runtimes.log" >&2; exit 1; }
[ "$(sed -n 's/^apt-get: //p' "$tmp/runtimes.log" | sort | tr '\n' ' ')" = "g++ golang-go nodejs openjdk-17-jdk-headless python3 " ] ||
  { echo "the workflow's runtimes step asked for: $(cat "$tmp/runtimes.log")" >&2; exit 1; }

check() {  # check REPO PYTHON-EXPRESSION-ON-r
  result "$1" | /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); assert $2, r"
}
# A right kit: 8 steps and conformance's 3 points, and its reports for the artifact.
step "$tmp/ada" grade.sh >"$tmp/ada.log" 2>&1 || { cat "$tmp/ada.log" >&2; exit 1; }
check "$tmp/ada" "r['version'] == 1 and r['status'] == 'pass' and r['max_score'] == 11 and sum(t['score'] for t in r['tests']) == 11 and len(r['tests']) == 9"
for f in report.html report.txt report.json result.json; do [ -s "$tmp/ada/cb-lab-report/$f" ]; done
grep -q "Score 11/11" "$tmp/ada/summary.md" || { echo "the run's summary does not show the report" >&2; exit 1; }

# The next push of another student: the cached grader, no build (the cache restores
# ~/.cb-lab-bin and skips the checkout and the build), a classic mistake: step 3 and conformance
# lost.
student "$tmp/bob" "sum(self.window) \* 100 >= " "sum(self.window) * 100 > "
mkdir -p "$tmp/bob.home"
cp -r "$tmp/ada.home/.cb-lab-bin" "$tmp/bob.home/"
if step "$tmp/bob" grade.sh >"$tmp/bob.log" 2>&1; then echo "a failing grade passed the job" >&2; exit 1; fi
check "$tmp/bob" "r['status'] == 'fail' and r['max_score'] == 11 and sum(t['score'] for t in r['tests']) == 7 and [t['status'] for t in r['tests']][2] == 'fail'"

# A grader that cannot grade at all (a course rubric it cannot read): still a result, 0.
rubric='{"points": '
if step "$tmp/bob" grade.sh >"$tmp/broken.log" 2>&1; then echo "an ungraded push passed the job" >&2; exit 1; fi
check "$tmp/bob" "r['status'] == 'error' and r['max_score'] > 0 and r['tests'][0]['score'] == 0 and 'rubric' in r['tests'][0]['message']"
echo "classroom workflow: built under CI=true, a branch refused, 3 pushes graded and shown"
