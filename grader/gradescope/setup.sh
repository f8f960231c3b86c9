#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image, from the zip that
# grader/gradescope/make-autograder-zip makes (unpacked into /autograder/source). cb-grade comes
# prebuilt and statically linked in bin/, so nothing is built here: only the interpreters the
# students' programs need. python3 is there on Gradescope's images; add nodejs here if your
# students may write in Node.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! command -v python3 >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends python3 >/dev/null
fi
# It must run here: a zip built for another machine fails now, not at the first submission.
/autograder/source/bin/cb-grade --help >/dev/null
