#!/bin/sh
# Your breaker on the conformance protocol (replay.js). Check it against the lab's rules with:
#   cb-grade --conformance "sh replay.sh"
exec node "$(dirname "$0")/replay.js"
