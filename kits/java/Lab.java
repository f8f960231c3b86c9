// The lab's eight steps, already written: you write the breaker's rules in Breaker.java.
//
// Calls the flaky server at $CB_SERVER (default: the one lab-settings.json names) and writes the
// lab's four files into $CB_DIR (default ./cb), each in the form docs/CONTRACTS.md gives. The
// server's paths and the files' names come from lab-settings.json too. Java's standard library
// only (java.net.http): nothing to download.

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

public final class Lab {
  private final Map<String, Object> lab;
  private final String server;
  private final Path out;
  private final HttpClient http;
  private final Duration timeout;  // a breaker is blind to a server that never answers without one

  private Lab(Map<String, Object> lab) {
    this.lab = lab;
    String env = System.getenv("CB_SERVER");
    this.server = (env != null && !env.isEmpty() ? env : Json.string(lab, "server")).replaceAll("/+$", "");
    String dir = System.getenv("CB_DIR");
    this.out = Path.of(dir != null && !dir.isEmpty() ? dir : "cb");
    this.timeout = Duration.ofMillis(Json.integer(lab, "call_timeout_ms"));
    // HTTP/1.1 as the server speaks it: HTTP/2 would first ask to upgrade every connection.
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
  }

  // The lab's numbers, from lab-settings.json in the kit's folder (cb-lab init writes it: the
  // handout's numbers, or your own if your course gives each student a variant).
  private static Map<String, Object> loadSettings(Path file) {
    try {
      return Json.object(Json.parse(Files.readString(file)), "the file");
    } catch (IOException | IllegalArgumentException e) {
      System.err.println("Lab.java: " + file + ": " + e.getMessage() + " (cb-lab init writes it)");
      System.exit(1);
      return null;
    }
  }

  private String path(String key) {
    return Json.string(lab, key);
  }

  private int count(String key) {
    return Json.integer(lab, key);
  }

  // One GET: its body, or null when no answer came (refused, reset, timed out).
  private HttpResponse<String> get(String urlPath) {
    try {
      HttpRequest request = HttpRequest.newBuilder(URI.create(server + urlPath)).timeout(timeout).GET().build();
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException | IllegalArgumentException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  // The server's own count of the lab's requests (GET count_path). Without it there is nothing
  // to measure step 4 by: the lab stops, saying why.
  private Integer serverCount() {
    HttpResponse<String> r = get(path("count_path"));
    try {
      if (r != null && r.statusCode() == 200)
        return (int) Json.number(Json.object(Json.parse(r.body()), "/count"), "count");
    } catch (IllegalArgumentException e) {
      // said below
    }
    System.err.println("Lab.java: the server at " + server + " did not answer " + path("count_path")
        + ": start it (flaky-server), or set CB_SERVER to where it runs");
    System.exit(1);
    return null;
  }

  // Whole or not at all: a temporary file renamed over the old one.
  private void write(String name, String text) throws IOException {
    Path file = out.resolve(name);
    Path tmp = out.resolve(name + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private void writeState(String fileKey, Breaker b) throws IOException {
    write(path(fileKey), "{\"state\":" + Json.quote(b.state) + ",\"failures\":" + b.failures() + ",\"window_size\":"
        + b.settings.windowSize() + ",\"permitted_in_half_open\":" + b.settings.permittedInHalfOpen() + "}\n");
  }

  // One call through the breaker: "refused" (it never reached the server), or the status.
  private String call(Breaker b, String urlPath) {
    long permit = b.allow();
    if (permit == Breaker.REFUSED) return "refused";
    HttpResponse<String> r = get(urlPath);
    b.record(Breaker.classify(r == null ? null : r.statusCode()), permit);
    return r == null ? "no answer" : Integer.toString(r.statusCode());
  }

  private void step(int n, String title, Breaker b, String urlPath, int times) {
    List<String> results = new ArrayList<>();
    for (int i = 0; i < times; i++) results.add(call(b, urlPath));
    System.out.println("step " + n + ": " + title + ": " + String.join(" ", results) + " -> " + b.state);
  }

  private Breaker.Settings settings() {
    return new Breaker.Settings(count("window_size"), count("minimum_calls"), count("failure_rate_percent"),
        Json.number(lab, "wait_in_open_ms"), count("permitted_in_half_open"));
  }

  private void run(int last) throws IOException, InterruptedException {
    Files.createDirectories(out);
    String fast = path("fast_path");
    String fail = path("fail_path");
    Breaker b = new Breaker(settings());
    System.out.println("step 1: the server at " + server + ": " + path("count_path") + " -> " + serverCount() + " ("
        + path("numbers") + ")");
    if (last == 1) return;
    step(2, count("fast") + " x " + fast, b, fast, count("fast"));
    writeState("state_file", b);
    if (last == 2) return;
    step(3, count("burst") + " x " + fail, b, fail, count("burst"));
    writeState("state_file", b);
    if (last == 3) return;

    Integer before = serverCount();
    int blocked = 0;
    double slowestMs = 0;
    for (int i = 0; i < count("blocked"); i++) {
      long t0 = System.nanoTime();
      if (call(b, fail).equals("refused")) blocked++;
      slowestMs = Math.max(slowestMs, (System.nanoTime() - t0) / 1e6);
    }
    Integer after = serverCount();
    String line = "before=" + before + " after=" + after + " blocked=" + blocked + " max_ms="
        + String.format("%.3f", slowestMs);
    write(path("fastfail_file"), line + "\n");
    System.out.println("step 4: " + count("blocked") + " x " + fail + ": " + line);
    if (last == 4) return;

    Thread.sleep((long) Math.ceil(b.settings.waitInOpenMs()) + 50);
    step(5, "waited " + (long) b.settings.waitInOpenMs() + " ms, 1 x " + fast, b, fast, 1);
    writeState("state_file", b);
    if (last == 5) return;
    int trials = 0;
    while (!b.state.equals("CLOSED") && trials < count("trials_max")) {
      call(b, fast);
      trials++;
    }
    System.out.println("step 6: " + trials + " x " + fast + " -> " + b.state);
    writeState("state_file", b);
    if (last == 6) return;

    Breaker fresh = new Breaker(settings());
    step(7, "a new breaker, " + count("bad") + " x " + path("bad_path"), fresh, path("bad_path"), count("bad"));
    writeState("ignore_file", fresh);
    if (last == 7) return;
    StringBuilder log = new StringBuilder();
    for (String t : b.transitions) log.append(t).append('\n');
    write(path("transitions_file"), log.toString());
    System.out.println("step 8: " + path("transitions_file") + ": " + b.transitions.size() + " line(s)");
  }

  // --until N: stop after step N, leaving the files as they are then (check them with
  // cb-grade --step N). Without it, all eight steps.
  private static int until(String[] args) {
    if (args.length == 0) return 8;
    if (args.length == 2 && args[0].equals("--until") && args[1].matches("[1-8]")) return Integer.parseInt(args[1]);
    System.err.println("Lab.java: usage: Lab [--until N], N a step from 1 to 8");
    System.exit(2);
    return 0;
  }

  public static void main(String[] args) throws Exception {
    int last = until(args);
    // run.sh names the kit's folder: lab-settings.json is there, wherever the lab is run from.
    Path kit = Path.of(System.getProperty("kit.dir", "."));
    Lab lab = new Lab(loadSettings(kit.resolve("lab-settings.json")));
    try {
      lab.run(last);
    } catch (IllegalArgumentException e) {
      System.err.println("Lab.java: lab-settings.json: " + e.getMessage());
      System.exit(1);
    }
  }
}
