// The lab's eight steps, already written: you write the breaker's rules in breaker.go.
//
// Calls the flaky server at $CB_SERVER (default: the one lab-settings.json names) and writes the
// lab's four files into $CB_DIR (default ./cb), each in the form docs/CONTRACTS.md gives. The
// server's paths and the files' names come from lab-settings.json too. Go's standard library
// only: no modules to fetch.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// labSettings is lab-settings.json: the breaker's settings, how many calls each step makes, the
// server's paths and the files' names.
type labSettings struct {
	Numbers             string  `json:"numbers"`
	WindowSize          int     `json:"window_size"`
	MinimumCalls        int     `json:"minimum_calls"`
	FailureRatePercent  int     `json:"failure_rate_percent"`
	WaitInOpenMs        float64 `json:"wait_in_open_ms"`
	PermittedInHalfOpen int     `json:"permitted_in_half_open"`
	CallTimeoutMs       int     `json:"call_timeout_ms"`
	Fast                int     `json:"fast"`
	Burst               int     `json:"burst"`
	Blocked             int     `json:"blocked"`
	TrialsMax           int     `json:"trials_max"`
	Bad                 int     `json:"bad"`
	Server              string  `json:"server"`
	CountPath           string  `json:"count_path"`
	FastPath            string  `json:"fast_path"`
	FailPath            string  `json:"fail_path"`
	BadPath             string  `json:"bad_path"`
	StateFile           string  `json:"state_file"`
	FastfailFile        string  `json:"fastfail_file"`
	IgnoreFile          string  `json:"ignore_file"`
	TransitionsFile     string  `json:"transitions_file"`
}

type lab struct {
	labSettings
	server string
	out    string
	client *http.Client // with the lab's timeout: a breaker is blind to a server that never answers without one
}

// The lab's numbers, from lab-settings.json in the kit's folder (cb-lab init writes it: the
// handout's numbers, or your own if your course gives each student a variant).
func loadLab() (*lab, error) {
	file := filepath.Join(os.Getenv("CB_KIT"), "lab-settings.json")
	text, err := os.ReadFile(file)
	if err == nil {
		var l lab
		if err = json.Unmarshal(text, &l.labSettings); err == nil {
			l.server = strings.TrimRight(l.Server, "/")
			if s := os.Getenv("CB_SERVER"); s != "" {
				l.server = strings.TrimRight(s, "/")
			}
			l.out = os.Getenv("CB_DIR")
			if l.out == "" {
				l.out = "cb"
			}
			l.client = &http.Client{Timeout: time.Duration(l.CallTimeoutMs) * time.Millisecond}
			return &l, nil
		}
	}
	return nil, fmt.Errorf("%s: %v (cb-lab init writes it)", file, err)
}

func (l *lab) settings() Settings {
	return Settings{l.WindowSize, l.MinimumCalls, l.FailureRatePercent, l.WaitInOpenMs, l.PermittedInHalfOpen}
}

// get is one GET: its status and body, or NoAnswer when none came (refused, reset, timed out).
func (l *lab) get(path string) (int, []byte) {
	r, err := l.client.Get(l.server + path)
	if err != nil {
		return NoAnswer, nil
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return NoAnswer, nil
	}
	return r.StatusCode, body
}

// count is the server's own count of the lab's requests (GET count_path). Without it there is
// nothing to measure step 4 by: the lab stops, saying why.
func (l *lab) count() string {
	status, body := l.get(l.CountPath)
	var c struct {
		Count *int `json:"count"`
	}
	if status != 200 || json.Unmarshal(body, &c) != nil || c.Count == nil {
		fmt.Fprintf(os.Stderr, "lab: the server at %s did not answer %s: start it (flaky-server), or set CB_SERVER to where it runs\n", l.server, l.CountPath)
		os.Exit(1)
	}
	return strconv.Itoa(*c.Count)
}

// write is whole or not at all: a temporary file renamed over the old one.
func (l *lab) write(name, text string) error {
	file := filepath.Join(l.out, name)
	if err := os.WriteFile(file+".tmp", []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(file+".tmp", file)
}

func (l *lab) writeState(name string, b *Breaker) error {
	state, _ := json.Marshal(struct {
		State               string `json:"state"`
		Failures            int    `json:"failures"`
		WindowSize          int    `json:"window_size"`
		PermittedInHalfOpen int    `json:"permitted_in_half_open"`
	}{b.State, b.Failures(), b.Settings.WindowSize, b.Settings.PermittedInHalfOpen})
	return l.write(name, string(state)+"\n")
}

// call is one call through the breaker: "refused" (it never reached the server), or the status.
func (l *lab) call(b *Breaker, path string) string {
	permit, ok := b.Allow()
	if !ok {
		return "refused"
	}
	status, _ := l.get(path)
	b.Record(Classify(status), permit)
	if status == NoAnswer {
		return "no answer"
	}
	return strconv.Itoa(status)
}

func (l *lab) step(n int, title string, b *Breaker, path string, times int) {
	results := make([]string, 0, times)
	for i := 0; i < times; i++ {
		results = append(results, l.call(b, path))
	}
	fmt.Printf("step %d: %s: %s -> %s\n", n, title, strings.Join(results, " "), b.State)
}

func (l *lab) run(last int) error {
	if err := os.MkdirAll(l.out, 0o755); err != nil {
		return err
	}
	b := NewBreaker(l.settings(), MonotonicMs)
	fmt.Printf("step 1: the server at %s: %s -> %s (%s)\n", l.server, l.CountPath, l.count(), l.Numbers)
	if last == 1 {
		return nil
	}
	l.step(2, fmt.Sprintf("%d x %s", l.Fast, l.FastPath), b, l.FastPath, l.Fast)
	if err := l.writeState(l.StateFile, b); err != nil || last == 2 {
		return err
	}
	l.step(3, fmt.Sprintf("%d x %s", l.Burst, l.FailPath), b, l.FailPath, l.Burst)
	if err := l.writeState(l.StateFile, b); err != nil || last == 3 {
		return err
	}

	before := l.count()
	blocked, slowestMs := 0, 0.0
	for i := 0; i < l.Blocked; i++ {
		t0 := time.Now()
		if l.call(b, l.FailPath) == "refused" {
			blocked++
		}
		slowestMs = math.Max(slowestMs, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	after := l.count()
	line := fmt.Sprintf("before=%s after=%s blocked=%d max_ms=%.3f", before, after, blocked, slowestMs)
	if err := l.write(l.FastfailFile, line+"\n"); err != nil {
		return err
	}
	fmt.Printf("step 4: %d x %s: %s\n", l.Blocked, l.FailPath, line)
	if last == 4 {
		return nil
	}

	time.Sleep(time.Duration((b.Settings.WaitInOpenMs+50)*1000) * time.Microsecond)
	l.step(5, fmt.Sprintf("waited %g ms, 1 x %s", b.Settings.WaitInOpenMs, l.FastPath), b, l.FastPath, 1)
	if err := l.writeState(l.StateFile, b); err != nil || last == 5 {
		return err
	}
	trials := 0
	for b.State != "CLOSED" && trials < l.TrialsMax {
		l.call(b, l.FastPath)
		trials++
	}
	fmt.Printf("step 6: %d x %s -> %s\n", trials, l.FastPath, b.State)
	if err := l.writeState(l.StateFile, b); err != nil || last == 6 {
		return err
	}

	fresh := NewBreaker(l.settings(), MonotonicMs)
	l.step(7, fmt.Sprintf("a new breaker, %d x %s", l.Bad, l.BadPath), fresh, l.BadPath, l.Bad)
	if err := l.writeState(l.IgnoreFile, fresh); err != nil || last == 7 {
		return err
	}
	var log strings.Builder
	for _, t := range b.Transitions {
		log.WriteString(t + "\n")
	}
	if err := l.write(l.TransitionsFile, log.String()); err != nil {
		return err
	}
	fmt.Printf("step 8: %s: %d line(s)\n", l.TransitionsFile, len(b.Transitions))
	return nil
}

// runLab runs steps 1 to 8, or with --until N stops after step N, leaving the files as they are
// then (check them with cb-grade --step N).
func runLab(args []string) int {
	last := 8
	if len(args) != 0 {
		n, err := strconv.Atoi(strings.TrimSpace(args[len(args)-1]))
		if len(args) != 2 || args[0] != "--until" || err != nil || n < 1 || n > 8 {
			fmt.Fprintln(os.Stderr, "lab: usage: kit lab [--until N], N a step from 1 to 8")
			return 2
		}
		last = n
	}
	l, err := loadLab()
	if err == nil {
		err = l.run(last)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "lab: %v\n", err)
		return 1
	}
	return 0
}
