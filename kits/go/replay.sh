#!/bin/sh
# Your breaker on the conformance protocol (replay.go), built with the lab by build.sh when the
# sources changed. Check it against the lab's rules with:
#   cb-grade --conformance "sh replay.sh"
set -e
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/build.sh"
exec "$here/kit" replay
