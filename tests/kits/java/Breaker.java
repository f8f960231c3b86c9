// The reference rules for the Java kit (not shipped in it): kit + this file scores 8/8.

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleSupplier;

final class Breaker {
  enum Outcome { SUCCESS, FAILURE, IGNORED }

  static Outcome classify(Integer status) {
    if (status == null || status >= 500) return Outcome.FAILURE;
    if (status >= 400) return Outcome.IGNORED;  // the caller's mistake, not the server's
    return Outcome.SUCCESS;
  }

  record Settings(int windowSize, int minimumCalls, int failureRatePercent, double waitInOpenMs,
                  int permittedInHalfOpen) {}

  static double monotonicMs() {
    return System.nanoTime() / 1e6;
  }

  final Settings settings;
  final DoubleSupplier clock;
  String state = "CLOSED";
  final ArrayDeque<Boolean> window = new ArrayDeque<>();
  final List<String> transitions = new ArrayList<>();
  double openedAt = 0;
  int admitted = 0;
  final List<Boolean> trials = new ArrayList<>();
  long generation = 0;  // a state's: a permit of another counts nothing
  static final long REFUSED = -1;

  Breaker(Settings settings, DoubleSupplier clock) {
    this.settings = settings;
    this.clock = clock;
  }

  Breaker(Settings settings) {
    this(settings, Breaker::monotonicMs);
  }

  private static int count(Iterable<Boolean> results) {
    int n = 0;
    for (boolean failed : results) n += failed ? 1 : 0;
    return n;
  }

  int failures() {
    return state.equals("HALF_OPEN") ? count(trials) : count(window);
  }

  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  void moveTo(String to) {
    transitions.add(STAMP.format(Instant.now()) + " " + state + "->" + to);
    state = to;
    generation++;
  }

  private void open() {
    moveTo("OPEN");
    openedAt = clock.getAsDouble();
  }

  long allow() {
    if (state.equals("OPEN")) {
      if (clock.getAsDouble() - openedAt < settings.waitInOpenMs()) return REFUSED;
      moveTo("HALF_OPEN");
      admitted = 0;
      trials.clear();
    }
    if (state.equals("HALF_OPEN")) {
      if (admitted >= settings.permittedInHalfOpen()) return REFUSED;
      admitted++;
    }
    return generation;
  }

  void record(Outcome outcome, long permit) {
    if (permit != generation) return;  // let through before the state changed: it tells nothing about this one
    if (outcome == Outcome.IGNORED) {
      if (state.equals("HALF_OPEN")) admitted--;  // the trial told nothing; another may go
      return;
    }
    boolean failed = outcome == Outcome.FAILURE;
    if (state.equals("HALF_OPEN")) {
      trials.add(failed);
      if (trials.size() == settings.permittedInHalfOpen()) {
        if (count(trials) * 100 >= settings.failureRatePercent() * trials.size()) {
          open();
        } else {
          moveTo("CLOSED");
          window.clear();
        }
      }
      return;
    }
    window.addLast(failed);
    if (window.size() > settings.windowSize()) window.removeFirst();
    int calls = window.size();
    if (calls >= settings.minimumCalls() && failures() * 100 >= settings.failureRatePercent() * calls) open();
  }
}
