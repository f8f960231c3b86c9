#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. The autograder zip is
# this repository; it lands in /autograder/source. Builds cb-grade (and python3 for students'
# Python solutions).
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3; }
scripts/install-deps
cmake --preset release
cmake --build --preset release --target cb-grade
