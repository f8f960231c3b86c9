// Your breaker from Breaker.java, driven call by call, for cb-grade --conformance:
//
//   cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and classify that Lab.java uses. The first
// line of input is the settings, then one line per call, each answered with one line; another
// settings line starts the next trace, on a new breaker (the protocol is in docs/CONTRACTS.md). A
// call is made whole ({t_ms, result}), or begins ({t_ms, begin: n}) and ends later ({t_ms, end: n,
// result}) with other calls between, as a real client's calls overlap: its permit from allow()
// goes back to record() when it ends. Time is the trace's own: the clock the breaker reads is each
// line's t_ms, so a trace of minutes replays in a moment.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

public final class Replay {
  private static double now = 0;
  // "traces": "many": the grader may send the next trace's settings after the last call, so one
  // start of the JVM answers every trace; "in_flight": calls may overlap.
  private static final String SAYS = ",\"traces\":\"many\",\"in_flight\":true}\n";

  private static Breaker.Outcome outcome(Map<String, Object> msg) {
    // A status, or "timeout" (no answer).
    Object result = msg.get("result");
    return Breaker.classify(result instanceof Double d ? Integer.valueOf(d.intValue()) : null);
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Breaker b = null;
    Map<Double, Long> inFlight = new HashMap<>();  // a call's number -> its permit
    for (String line; (line = in.readLine()) != null; ) {
      Map<String, Object> msg = Json.object(Json.parse(line), "a line");
      if (msg.containsKey("window")) {
        // A trace begins: a new breaker, nothing of the last one kept.
        now = 0;
        b = new Breaker(new Breaker.Settings(Json.integer(msg, "window"), Json.integer(msg, "minimum_calls"),
            Json.integer(msg, "failure_rate_percent"), Json.number(msg, "wait_in_open_ms"),
            Json.integer(msg, "permitted_in_half_open")), () -> now);
        inFlight.clear();
        continue;
      }
      if (b == null) throw new IllegalArgumentException("a call before any settings line: " + line);
      now = Json.number(msg, "t_ms");
      if (msg.containsKey("end")) {
        // A call let through earlier comes back (the end of one the breaker refused counts nothing).
        Long permit = inFlight.remove(Json.number(msg, "end"));
        if (permit != null) b.record(outcome(msg), permit);
        out.print("{\"state\":" + Json.quote(b.state) + SAYS);
        out.flush();
        continue;
      }
      long permit = b.allow();
      boolean permitted = permit != Breaker.REFUSED;
      if (permitted && msg.containsKey("begin")) {
        inFlight.put(Json.number(msg, "begin"), permit);
      } else if (permitted) {
        b.record(outcome(msg), permit);  // the call completes at t_ms
      }
      out.print("{\"decision\":\"" + (permitted ? "permitted" : "rejected") + "\",\"state\":" + Json.quote(b.state)
          + SAYS);
      out.flush();
    }
  }
}
