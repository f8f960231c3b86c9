// Your circuit breaker. Lab.java runs the lab's steps through it; the rules are yours.
//
// Everything you write is in the three places marked YOUR PART. The numbers are the lab's.

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

final class Breaker {
  enum Outcome { SUCCESS, FAILURE, IGNORED }

  // How an answer counts. status is null when no answer came (refused, reset, timed out).
  // YOUR PART (step 7): as shipped, everything but 200 is a failure. Which answers are the
  // server's fault, and which are the caller's?
  static Outcome classify(Integer status) {
    return status != null && status == 200 ? Outcome.SUCCESS : Outcome.FAILURE;
  }

  // The settings, given by Lab.java (lab-settings.json) or Replay.java (each trace's own): read
  // them from `settings`, never write the numbers. (resilience4j calls them slidingWindowSize,
  // minimumNumberOfCalls, failureRateThreshold, waitDurationInOpenState and
  // permittedNumberOfCallsInHalfOpenState.)
  record Settings(
      int windowSize,          // the last windowSize calls are judged...
      int minimumCalls,        // ...once there are at least minimumCalls of them...
      int failureRatePercent,  // ...and it opens when failures x 100 >= failureRatePercent x calls
      double waitInOpenMs,     // OPEN refuses every call for this long, then HALF_OPEN
      int permittedInHalfOpen  // HALF_OPEN's trial calls, judged together
  ) {}

  static double monotonicMs() {
    return System.nanoTime() / 1e6;
  }

  final Settings settings;
  final DoubleSupplier clock;  // milliseconds, monotonic (Replay.java gives the trace's own times)
  String state = "CLOSED";
  final ArrayDeque<Boolean> window = new ArrayDeque<>();  // the recent results, true for a failure
  final List<String> transitions = new ArrayList<>();     // transitions.log's lines, written by moveTo
  // Add what else your rules need to remember (when it opened, the trials so far, ...).

  Breaker(Settings settings, DoubleSupplier clock) {
    this.settings = settings;
    this.clock = clock;
  }

  Breaker(Settings settings) {
    this(settings, Breaker::monotonicMs);
  }

  // The failures state.json reports: those in the window.
  int failures() {
    int n = 0;
    for (boolean failed : window) n += failed ? 1 : 0;
    return n;
  }

  // To the microsecond: the grader places each stamp among the server's requests, which it
  // stamps to the microsecond.
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  // Every change of state goes through here, so transitions.log has it, stamped.
  void moveTo(String to) {
    transitions.add(STAMP.format(Instant.now()) + " " + state + "->" + to);
    state = to;
  }

  // What allow() answers to refuse a call.
  static final long REFUSED = -1;

  // May this call go to the server? REFUSED refuses it at once (it must not reach the server).
  // Any other number lets it through and is the call's permit: the caller gives it back to
  // record() with the call's outcome. Calls may overlap (cb-grade --conformance begins several
  // before the first ends), so a permit is how record() tells a result that comes back after the
  // state has changed (it must count nothing) from one of the state it was let through in.
  // YOUR PART (steps 4-6): as shipped, every call goes through.
  long allow() {
    return 0;
  }

  // The outcome of a call allow() let through, with the permit allow() gave it.
  // YOUR PART (steps 3, 6, 7): as shipped, the result is remembered and nothing else happens.
  void record(Outcome outcome, long permit) {
    window.addLast(outcome == Outcome.FAILURE);
    if (window.size() > settings.windowSize()) window.removeFirst();
  }
}
