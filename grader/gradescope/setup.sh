#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image, from the zip that
# grader/gradescope/make-autograder-zip makes (unpacked into /autograder/source). cb-grade comes
# prebuilt and statically linked in bin/, so nothing of cb-lab is built here: only what the
# starter kits need to run on Gradescope's Ubuntu image: python3 (the Python kit), nodejs (the
# Node kit), a C++ compiler, a JDK (Java 17) and Go (those three kits build themselves on their
# first run), each from Ubuntu's packages and only where it is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
missing=()
command -v python3 >/dev/null || missing+=(python3)
command -v node >/dev/null || missing+=(nodejs)
command -v c++ >/dev/null || missing+=(g++)
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v go >/dev/null || missing+=(golang-go)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# It must run here: a zip built for another machine fails now, not at the first submission.
"${AUTOGRADER_ROOT:-/autograder}/source/bin/cb-grade" --help >/dev/null
