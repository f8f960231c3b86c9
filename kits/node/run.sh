#!/bin/sh
# Runs the lab against $CB_SERVER, writing into $CB_DIR. Grade it with:
#   cb-grade --run "sh run.sh" --dir out
# or, step by step as you build it (the files as they are right after step N):
#   cb-grade --run "sh run.sh --until N" --step N --dir out
exec node "$(dirname "$0")/lab.js" "$@"
