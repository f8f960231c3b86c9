// The kit's one program, already written: `kit lab [--until N]` runs the lab's steps (lab.go),
// `kit replay` answers the conformance protocol (replay.go). One binary, built once by build.sh.

package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "lab" {
		os.Exit(runLab(os.Args[2:]))
	}
	if len(os.Args) == 2 && os.Args[1] == "replay" {
		os.Exit(runReplay())
	}
	fmt.Fprintln(os.Stderr, "kit: usage: kit lab [--until N] | kit replay")
	os.Exit(2)
}
