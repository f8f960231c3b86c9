#!/bin/sh
# Runs the lab against $CB_SERVER, writing into $CB_DIR. Grade it with:
#   cb-grade --run "sh run.sh" --dir out
exec node "$(dirname "$0")/lab.js"
