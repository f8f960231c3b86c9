#!/usr/bin/env bash
# The engine as another project gets it: `cmake --install` of this build into a fresh prefix,
# then examples/consumer built against that prefix twice, with find_package(cbbreaker) and with
# pkg-config, and run (it checks its own story and exits non-zero if the engine broke it).
#   consumer_test.sh BUILD-DIR CXX
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
build=$1
cxx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in include/cb/breaker/breaker.h include/cb/breaker/call.h include/cb/result.h; do
  [ -f "$tmp/prefix/$f" ] || { echo "cmake --install did not install $f" >&2; exit 1; }
done
[ -z "$(find "$tmp/prefix" -name 'cb-lab' -o -name 'cb-grade' -o -name 'flaky-server')" ] || {
  echo "cmake --install installed the lab's programs; it installs the engine only" >&2; exit 1; }

# 1. CMake: find_package(cbbreaker) -> cb::breaker.
cmake -S "$project/examples/consumer" -B "$tmp/cmake-build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
"$tmp/cmake-build/consumer"

# 2. pkg-config, with the warnings a careful user turns on: the public headers are clean.
pc=$(dirname "$(find "$tmp/prefix" -name cbbreaker.pc)")
# shellcheck disable=SC2046 # pkg-config's output is meant to split into arguments
"$cxx" -std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror -o "$tmp/consumer-pc" \
  "$project/examples/consumer/main.cpp" $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs cbbreaker)
"$tmp/consumer-pc" | tail -1
echo "engine package: installed, and examples/consumer built and ran with find_package and with pkg-config"
