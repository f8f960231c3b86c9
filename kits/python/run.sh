#!/bin/sh
# Runs the lab against $CB_SERVER, writing into $CB_DIR. Grade it with:
#   cb-grade --run "sh run.sh" --dir out
exec python3 "$(dirname "$0")/lab.py"
