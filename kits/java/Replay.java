// Your breaker from Breaker.java, driven call by call, for cb-grade --conformance:
//
//   cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and classify that Lab.java uses. The first
// line of input is the settings, then one call per line, each answered with one line before the
// next comes; another settings line starts the next trace, on a new breaker (the protocol is in
// docs/CONTRACTS.md). Time is the trace's own: the clock the breaker reads is each call's t_ms,
// so a trace of minutes replays in a moment.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

public final class Replay {
  private static double now = 0;

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Breaker b = null;
    for (String line; (line = in.readLine()) != null; ) {
      Map<String, Object> msg = Json.object(Json.parse(line), "a line");
      if (msg.containsKey("window")) {
        // A trace begins: a new breaker, nothing of the last one kept.
        now = 0;
        b = new Breaker(new Breaker.Settings(Json.integer(msg, "window"), Json.integer(msg, "minimum_calls"),
            Json.integer(msg, "failure_rate_percent"), Json.number(msg, "wait_in_open_ms"),
            Json.integer(msg, "permitted_in_half_open")), () -> now);
        continue;
      }
      if (b == null) throw new IllegalArgumentException("a call before any settings line: " + line);
      now = Json.number(msg, "t_ms");
      Object result = msg.get("result");
      boolean permitted = b.allow();
      // The call completes at t_ms with its result: a status, or "timeout" (no answer).
      if (permitted) b.record(Breaker.classify(result instanceof Double d ? Integer.valueOf(d.intValue()) : null));
      // "traces": "many": the grader may send the next trace's settings after the last call, so
      // one start of the JVM answers every trace.
      out.print("{\"decision\":\"" + (permitted ? "permitted" : "rejected") + "\",\"state\":" + Json.quote(b.state)
          + ",\"traces\":\"many\"}\n");
      out.flush();
    }
  }
}
