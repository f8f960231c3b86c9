#!/bin/sh
# Builds the kit with Go (build.sh: when the sources changed) and runs the lab against
# $CB_SERVER, writing into $CB_DIR. Grade it with:
#   cb-grade --run "sh run.sh" --dir out
# or, step by step as you build it (the files as they are right after step N):
#   cb-grade --run "sh run.sh --until N" --step N --dir out
set -e
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/build.sh"
CB_KIT="$here" exec "$here/kit" lab "$@"
