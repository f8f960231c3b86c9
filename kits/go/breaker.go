// Your circuit breaker. lab.go runs the lab's steps through it; the rules are yours.
//
// Everything you write is in the three places marked YOUR PART. The numbers are the lab's.

package main

import (
	"time"
)

// Outcome is how a call counts.
type Outcome int

const (
	Success Outcome = iota
	Failure
	Ignored
)

// NoAnswer is the status of a call that got none (refused, reset, timed out).
const NoAnswer = 0

// Classify says how an answer counts.
// YOUR PART (step 7): as shipped, everything but 200 is a failure. Which answers are the
// server's fault, and which are the caller's?
func Classify(status int) Outcome {
	if status == 200 {
		return Success
	}
	return Failure
}

// Settings are given by lab.go (lab-settings.json) or replay.go (each trace's own): read them
// from b.Settings, never write the numbers. (gobreaker's Settings call the wait Timeout, the
// trials MaxRequests, and leave the rest to ReadyToTrip.)
type Settings struct {
	WindowSize          int     // the last WindowSize calls are judged...
	MinimumCalls        int     // ...once there are at least MinimumCalls of them...
	FailureRatePercent  int     // ...and it opens when failures x 100 >= FailureRatePercent x calls
	WaitInOpenMs        float64 // OPEN refuses every call for this long, then HALF_OPEN
	PermittedInHalfOpen int     // HALF_OPEN's trial calls, judged together
}

var started = time.Now()

// MonotonicMs is milliseconds on a monotonic clock.
func MonotonicMs() float64 { return float64(time.Since(started).Nanoseconds()) / 1e6 }

// Breaker is the circuit breaker.
type Breaker struct {
	Settings    Settings
	Clock       func() float64 // milliseconds, monotonic (replay.go gives the trace's own times)
	State       string
	Window      []bool   // the recent results, true for a failure
	Transitions []string // transitions.log's lines, written by MoveTo
	// Add what else your rules need to remember (when it opened, the trials so far, ...).
}

// NewBreaker is a CLOSED breaker with these settings, on this clock.
func NewBreaker(s Settings, clock func() float64) *Breaker {
	return &Breaker{Settings: s, Clock: clock, State: "CLOSED"}
}

// Failures is what state.json reports: the failures in the window.
func (b *Breaker) Failures() int {
	n := 0
	for _, failed := range b.Window {
		if failed {
			n++
		}
	}
	return n
}

// MoveTo makes every change of state, so transitions.log has it, stamped to the microsecond:
// the grader places each stamp among the server's requests, which it stamps to the microsecond.
func (b *Breaker) MoveTo(to string) {
	stamp := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	b.Transitions = append(b.Transitions, stamp+" "+b.State+"->"+to)
	b.State = to
}

// Permit is what Allow gives a call it lets through; the caller gives it back to Record with the
// call's outcome. Calls may overlap (cb-grade --conformance begins several before the first
// ends), so a permit is how Record tells a result that comes back after the state has changed
// (it must count nothing) from one of the state it was let through in.
type Permit uint64

// Allow says whether this call may go to the server, and its permit; false refuses it at once
// (it must not reach the server).
// YOUR PART (steps 4-6): as shipped, every call goes through.
func (b *Breaker) Allow() (Permit, bool) {
	return 0, true
}

// Record takes the outcome of a call Allow let through, with the permit Allow gave it.
// YOUR PART (steps 3, 6, 7): as shipped, the result is remembered and nothing else happens.
func (b *Breaker) Record(outcome Outcome, permit Permit) {
	b.Window = append(b.Window, outcome == Failure)
	if len(b.Window) > b.Settings.WindowSize {
		b.Window = b.Window[1:]
	}
}
