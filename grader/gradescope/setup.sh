#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. The autograder zip
# (grader/gradescope/make-autograder-zip) is this repository with this script and run_autograder
# at its top; it lands in /autograder/source. Installs only what cb-grade builds against (no
# test or benchmark libraries), builds it, and python3 for students' Python programs.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends cmake g++ ninja-build pkg-config \
  libcpp-httplib-dev nlohmann-json3-dev libcli11-dev python3 >/dev/null
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DCB_BUILD_TESTS=OFF -DCB_BUILD_BENCH=OFF
cmake --build build/release --target cb-grade
