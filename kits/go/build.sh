#!/bin/sh
# Builds the kit's one program (kit: the lab and the conformance replay) with the go command, when
# the sources differ from the last build's: run.sh and replay.sh both call this, so a grading
# that runs the lab and then the conformance traces builds once. The sources' checksum, not their
# times, says whether a build is current: a copy of the folder (the grader's box) keeps the build
# it was handed only if its sources are the ones it was built from.
set -e
here=$(cd "$(dirname "$0")" && pwd)
key=$(cat "$here"/*.go "$here/go.mod" | cksum)
[ -x "$here/kit" ] && [ "$(cat "$here/.built" 2>/dev/null)" = "$key" ] && exit 0
# Go's build cache in this folder: it is there wherever the kit runs ($HOME may not be), and the
# grader's box keeps it between the lab run and the conformance run. Nothing is fetched: the kit
# needs the standard library only.
export GOCACHE="$here/.gocache" GOPATH="$here/.gopath" GOPROXY=off GO111MODULE=on
# Built aside and renamed: traces may start two at a time, and none may run half a file.
# (mktemp, not $$: under the grader each trace may be process 1 of its own namespace.)
kit=$(mktemp "$here/kit.XXXXXX")
stamp=$(mktemp "$here/.built.XXXXXX")
trap 'rm -f "$kit" "$stamp"' EXIT
(cd "$here" && ${GO:-go} build -o "$kit" .) >&2
mv -f "$kit" "$here/kit"
echo "$key" >"$stamp"
mv -f "$stamp" "$here/.built"
trap - EXIT
