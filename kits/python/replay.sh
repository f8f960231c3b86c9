#!/bin/sh
# Your breaker on the conformance protocol (replay.py). Check it against the lab's rules with:
#   cb-grade --conformance "sh replay.sh"
exec python3 "$(dirname "$0")/replay.py"
