#!/bin/sh
# Builds the lab with the system's C++ compiler (when the sources changed) and runs it against
# $CB_SERVER, writing into $CB_DIR. Grade it with:
#   cb-grade --run "sh run.sh" --dir out
# or, step by step as you build it (the files as they are right after step N):
#   cb-grade --run "sh run.sh --until N" --step N --dir out
set -e
here=$(dirname "$0")
if [ ! -x "$here/lab" ] || [ "$here/lab.cpp" -nt "$here/lab" ] || [ "$here/breaker.hpp" -nt "$here/lab" ]; then
  ${CXX:-c++} -std=c++17 -O2 -Wall -Wextra -o "$here/lab" "$here/lab.cpp"
fi
exec "$here/lab" "$@"
