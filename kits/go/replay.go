// Your breaker from breaker.go, driven call by call, for cb-grade --conformance:
//
//	cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and Classify that lab.go uses. The first
// line of input is the settings, then one line per call, each answered with one line; another
// settings line starts the next trace, on a new breaker (the protocol is in docs/CONTRACTS.md). A
// call is made whole ({t_ms, result}), or begins ({t_ms, begin: n}) and ends later ({t_ms, end: n,
// result}) with other calls between, as a real client's calls overlap: its permit from Allow goes
// back to Record when it ends. Time is the trace's own: the clock the breaker reads is each
// line's t_ms, so a trace of minutes replays in a moment.

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// One line of the protocol: a trace's settings (Window is there) or a call.
type message struct {
	Window              *int            `json:"window"`
	MinimumCalls        int             `json:"minimum_calls"`
	FailureRatePercent  int             `json:"failure_rate_percent"`
	WaitInOpenMs        float64         `json:"wait_in_open_ms"`
	PermittedInHalfOpen int             `json:"permitted_in_half_open"`
	TMs                 float64         `json:"t_ms"`
	Result              json.RawMessage `json:"result"` // a status, or "timeout" (no answer)
	Begin               *int64          `json:"begin"`  // a call in flight begins
	End                 *int64          `json:"end"`    // a call in flight ends, with its result
}

// "traces": "many": the grader may send the next trace's settings after the last call, so one
// start of the program answers every trace; "in_flight": calls may overlap.
func answer(out *bufio.Writer, fields map[string]any) {
	fields["traces"] = "many"
	fields["in_flight"] = true
	line, _ := json.Marshal(fields)
	out.Write(append(line, '\n'))
	out.Flush()
}

func runReplay() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	now := 0.0
	var b *Breaker
	inFlight := map[int64]Permit{} // a call's number -> its permit
	for in.Scan() {
		var msg message
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintf(os.Stderr, "replay: %v: %s\n", err, in.Text())
			return 1
		}
		if msg.Window != nil {
			// A trace begins: a new breaker, nothing of the last one kept.
			now = 0
			b = NewBreaker(Settings{*msg.Window, msg.MinimumCalls, msg.FailureRatePercent, msg.WaitInOpenMs,
				msg.PermittedInHalfOpen}, func() float64 { return now })
			inFlight = map[int64]Permit{}
			continue
		}
		if b == nil {
			fmt.Fprintf(os.Stderr, "replay: a call before any settings line: %s\n", in.Text())
			return 1
		}
		now = msg.TMs
		status := NoAnswer
		_ = json.Unmarshal(msg.Result, &status) // "timeout" stays NoAnswer
		if msg.End != nil {
			// A call let through earlier comes back (the end of one the breaker refused counts nothing).
			if permit, ok := inFlight[*msg.End]; ok {
				delete(inFlight, *msg.End)
				b.Record(Classify(status), permit)
			}
			answer(out, map[string]any{"state": b.State})
			continue
		}
		permit, permitted := b.Allow()
		if permitted && msg.Begin != nil {
			inFlight[*msg.Begin] = permit
		} else if permitted {
			b.Record(Classify(status), permit) // the call completes at t_ms
		}
		decision := "rejected"
		if permitted {
			decision = "permitted"
		}
		answer(out, map[string]any{"decision": decision, "state": b.State})
	}
	return 0
}
