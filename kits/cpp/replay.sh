#!/bin/sh
# Your breaker on the conformance protocol (replay.cpp), built with the lab by build.sh when the
# sources changed. Check it against the lab's rules with:
#   cb-grade --conformance "sh replay.sh"
set -e
here=$(dirname "$0")
sh "$here/build.sh"
exec "$here/replay"
