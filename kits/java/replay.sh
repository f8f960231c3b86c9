#!/bin/sh
# Your breaker on the conformance protocol (Replay.java), built with the lab by build.sh when the
# sources changed. Check it against the lab's rules with:
#   cb-grade --conformance "sh replay.sh"
set -e
here=$(dirname "$0")
classes=$(sh "$here/build.sh")
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xmx128m -cp "$classes" Replay
