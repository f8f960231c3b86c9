// The reference rules for the Go kit (not shipped in it): kit + this file scores 8/8.

package main

import (
	"time"
)

type Outcome int

const (
	Success Outcome = iota
	Failure
	Ignored
)

const NoAnswer = 0

func Classify(status int) Outcome {
	if status == NoAnswer || status >= 500 {
		return Failure
	}
	if status >= 400 {
		return Ignored // the caller's mistake, not the server's
	}
	return Success
}

type Settings struct {
	WindowSize          int
	MinimumCalls        int
	FailureRatePercent  int
	WaitInOpenMs        float64
	PermittedInHalfOpen int
}

var started = time.Now()

func MonotonicMs() float64 { return float64(time.Since(started).Nanoseconds()) / 1e6 }

type Breaker struct {
	Settings    Settings
	Clock       func() float64
	State       string
	Window      []bool
	Transitions []string
	openedAt    float64
	admitted    int
	trials      []bool
	generation  Permit // a state's: a permit of another counts nothing
}

// Permit is what Allow gives a call it lets through, for Record.
type Permit uint64

func NewBreaker(s Settings, clock func() float64) *Breaker {
	return &Breaker{Settings: s, Clock: clock, State: "CLOSED"}
}

func count(results []bool) int {
	n := 0
	for _, failed := range results {
		if failed {
			n++
		}
	}
	return n
}

func (b *Breaker) Failures() int {
	if b.State == "HALF_OPEN" {
		return count(b.trials)
	}
	return count(b.Window)
}

func (b *Breaker) MoveTo(to string) {
	stamp := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	b.Transitions = append(b.Transitions, stamp+" "+b.State+"->"+to)
	b.State = to
	b.generation++
}

func (b *Breaker) open() {
	b.MoveTo("OPEN")
	b.openedAt = b.Clock()
}

func (b *Breaker) Allow() (Permit, bool) {
	if b.State == "OPEN" {
		if b.Clock()-b.openedAt < b.Settings.WaitInOpenMs {
			return 0, false
		}
		b.MoveTo("HALF_OPEN")
		b.admitted = 0
		b.trials = nil
	}
	if b.State == "HALF_OPEN" {
		if b.admitted >= b.Settings.PermittedInHalfOpen {
			return 0, false
		}
		b.admitted++
	}
	return b.generation, true
}

func (b *Breaker) Record(outcome Outcome, permit Permit) {
	if permit != b.generation {
		return // let through before the state changed: it tells nothing about this one
	}
	if outcome == Ignored {
		if b.State == "HALF_OPEN" {
			b.admitted-- // the trial told nothing; another may go
		}
		return
	}
	failed := outcome == Failure
	if b.State == "HALF_OPEN" {
		b.trials = append(b.trials, failed)
		if len(b.trials) == b.Settings.PermittedInHalfOpen {
			if count(b.trials)*100 >= b.Settings.FailureRatePercent*len(b.trials) {
				b.open()
			} else {
				b.MoveTo("CLOSED")
				b.Window = nil
			}
		}
		return
	}
	b.Window = append(b.Window, failed)
	if len(b.Window) > b.Settings.WindowSize {
		b.Window = b.Window[1:]
	}
	calls := len(b.Window)
	if calls >= b.Settings.MinimumCalls && b.Failures()*100 >= b.Settings.FailureRatePercent*calls {
		b.open()
	}
}
