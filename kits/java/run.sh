#!/bin/sh
# Builds the kit with javac (build.sh: when the sources changed) and runs the lab against
# $CB_SERVER, writing into $CB_DIR. Grade it with:
#   cb-grade --run "sh run.sh" --dir out
# or, step by step as you build it (the files as they are right after step N):
#   cb-grade --run "sh run.sh --until N" --step N --dir out
set -e
here=$(dirname "$0")
classes=$(sh "$here/build.sh")
# A program that runs a few seconds: the serial collector, the quick compiler only, a small heap,
# and no performance-data file in /tmp (the grader's box may give it none).
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xmx128m \
  -Dkit.dir="$here" -cp "$classes" Lab "$@"
