// The queue for real: a redis-server of the test's own (on a unix socket, with its append-only
// log), cb-grade queue workers as separate processes grading real kits in real boxes, and the
// failures a queue is for: a worker killed, a worker stopped past its heartbeats, Redis killed
// and started again, a submission whose box cannot be made. Whatever happens, each submission
// has one row, the one --batch would give it.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "cb/redis_link.h"
#include "cb/grade/queue.h"
#include "dated.h"
#include "queue_store.h"
#include "process.h"
#include "python_kit.h"
#include "redis_server.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrade = CB_GRADE_BIN;

// The gradebook by submission, without what differs from run to run (the time a program took,
// and so the evidence's SHA-256).
std::map<std::string, json> book(const std::string& path) {
  std::map<std::string, json> rows;
  for (json r : json::parse(std::ifstream(path))) {
    if (r.contains("program")) r["program"].erase("seconds");
    r.erase("evidence_sha256");
    rows[r["submission"].get<std::string>()] = r;
  }
  return rows;
}

// The lines a worker printed until `until` is in one (the worker's own account, a line a job);
// empty if it never came within the bound.
std::string read_until(Process& p, const std::string& until, std::chrono::seconds bound = std::chrono::seconds{120}) {
  std::string all;
  const auto give_up = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < give_up) {
    auto line = p.read_line(std::chrono::duration_cast<std::chrono::milliseconds>(bound));
    if (!line) return {};
    all += *line + "\n";
    if (line->find(until) != std::string::npos) return *line;
  }
  return {};
}

struct QueueRun {
  TempDir dir;
  RedisServer redis{dir.path(), true};
  std::string root = dir / "cls";

  // --batch's grading flags, the same for every command that grades (a queue refuses others).
  std::vector<std::string> grading = {"--run", "sh run.sh", "--timeout", "30s"};

  [[nodiscard]] std::vector<std::string> queue(const std::string& action, std::vector<std::string> more = {}) const {
    std::vector<std::string> a{kGrade, "queue", "--queue", "cls", action, "--redis", redis.address()};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
  [[nodiscard]] std::vector<std::string> graded(std::vector<std::string> a) const {
    a.insert(a.end(), grading.begin(), grading.end());
    return a;
  }
  [[nodiscard]] std::unique_ptr<Process> worker(const std::string& name, std::vector<std::string> more = {},
                                                const std::string& jobs = "2",
                                                const std::vector<std::string>& env = {}) const {
    std::vector<std::string> a = graded(queue("work", {"-j", jobs, "--heartbeat", "200ms", "--poll", "100ms",
                                                       "--until-done", "--worker", name, "--work-dir", dir / name}));
    a.insert(a.end(), more.begin(), more.end());
    return std::make_unique<Process>(a, env);
  }
  [[nodiscard]] json status() const {
    const Ran s = run(queue("status", {"--format", "json"}));
    REQUIRE_MESSAGE(s.exit_code == 0, s.err);
    return json::parse(s.out);
  }
};

// Each kind of student ten times: right, and each classic mistake of the Python kit, and a
// program that crashes (a grade, never retried).
void make_class(const std::string& root, std::size_t each) {
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> kinds = {
      {"right", {"", ""}},
      {"gt", {"sum(self.window) * 100 >= ", "sum(self.window) * 100 > "}},
      {"4xx", {"return \"ignored\"  # the caller's", "return \"failure\"  # the caller's"}},
      {"one-trial", {"len(self.trials) == self.permitted_in_half_open", "len(self.trials) == 1"}},
      {"no-minimum", {"len(self.window) >= self.minimum_calls and ", ""}},
      {"crash", {"", ""}}};
  for (const auto& [kind, edit] : kinds) {
    const std::string first = root + "/" + kind + "-00";
    python_kit(first, edit.first, edit.second);
    if (kind == "crash") std::ofstream(first + "/run.sh") << "echo boom >&2\nexit 3\n";
    for (std::size_t i = 1; i < each; ++i)
      fs::copy(first, root + "/" + kind + "-" + (i < 10 ? "0" : "") + std::to_string(i), fs::copy_options::recursive);
  }
}

TEST_CASE(
    "queue: 60 submissions, 3 workers, one killed, one stopped past its heartbeats, Redis killed: "
    "each graded once, as --batch and shards grade them") {
  if (skip_unless(::geteuid() == 0, "the workers give each program a box of its own uid: needs root")) return;
  QueueRun q;
  make_class(q.root, 10);

  // Pushed twice: the second push finds every job there already.
  const Ran first = run(q.graded(q.queue("push", {q.root})));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("60 queued (bulk)") != std::string::npos);
  CHECK(first.err.find("right-01: the same bytes as right-00") != std::string::npos);
  const Ran again = run(q.graded(q.queue("push", {q.root})));
  CHECK(again.err.find("0 queued (bulk), 60 pushed before with the same bytes") != std::string::npos);

  auto w1 = q.worker("w1");
  auto w2 = q.worker("w2");
  auto w3 = q.worker("w3");
  // kill -9 of a worker holding a job: the job is taken back from it after three heartbeats.
  REQUIRE(!read_until(*w1, "): taken").empty());
  w1->signal(SIGKILL);
  // A worker stopped with a job: another takes the job and grades it; the stopped one, continued,
  // finishes it too, and that late completion is kept as an attempt, never as the grade.
  const std::string taken = read_until(*w2, "): taken");
  REQUIRE(!taken.empty());
  const std::string folder_on = taken.substr(taken.find(' ') + 1);  // after the line's UTC time
  const std::string held = folder_on.substr(0, folder_on.find(' '));
  w2->signal(SIGSTOP);
  REQUIRE(!read_until(*w3, held + ": done").empty());
  w2->signal(SIGCONT);
  REQUIRE(!read_until(*w2, held + ": finished after another worker had taken it: kept as an attempt").empty());

  // Redis killed mid-run and started again on its log; an entry it lost (here: one taken away by
  // hand) is given back by push --resume.
  q.redis.stop();
  q.redis.start();
  {
    RedisLink admin(*parse_redis_address(q.redis.address()), std::chrono::seconds{5});
    auto queued = admin.command({"XRANGE", "{cbq:cls}:bulk", "-", "+"});
    REQUIRE(queued);
    REQUIRE(!queued->elements.empty());
    const std::string entry = queued->elements.back().elements[0].text;
    REQUIRE(admin.command({"XDEL", "{cbq:cls}:bulk", entry}));
  }
  const Ran resumed = run(q.graded(q.queue("push", {q.root, "--resume"})));
  INFO(resumed.err);
  CHECK(resumed.err.find("1 whose entry Redis had lost queued again") != std::string::npos);

  const Ran collected = run(q.queue("collect", {"--wait", "--reports", q.dir / "queued", "-o", q.dir / "queued.json"}),
                            "", {}, std::chrono::seconds{600});
  INFO(collected.err);
  CHECK(collected.exit_code == 1);  // the mistakes fail
  CHECK(w2->wait(std::chrono::seconds{120}) == 0);
  CHECK(w3->wait(std::chrono::seconds{120}) == 0);
  const json s = q.status();
  CHECK(s["done"] == 60);
  CHECK(s["dead"] == 0);
  CHECK(s["attempts"].get<int>() >= 1);
  const auto queued = book(q.dir / "queued.json");
  REQUIRE(queued.size() == 60);
  for (const auto& row : queued) CHECK_MESSAGE(row.second["status"] == "graded", row.first);
  CHECK(queued.at("right-00")["score"] == queued.at("right-00")["max_score"]);
  CHECK(queued.at("crash-00")["score"] == 0);

  // The same class by --batch -j 4, and by four shards merged (graded side by side): the same
  // gradebook.
  std::vector<std::vector<std::string>> gradings{
      q.graded({kGrade, "--batch", q.root, "-j", "4", "--reports", q.dir / "batch", "-o", q.dir / "batch.json"})};
  for (int i = 0; i < 4; ++i)
    gradings.push_back(
        q.graded({kGrade, "--batch", q.root, "--shard", std::to_string(i) + "/4", "-j", "1", "--reports",
                  q.dir / ("s" + std::to_string(i)), "-o", q.dir / ("s" + std::to_string(i) + ".json")}));
  for (const Ran& r : run_all(gradings, gradings.size(), std::chrono::seconds{600})) CHECK(r.exit_code == 1);
  CHECK(book(q.dir / "batch.json") == queued);
  const Ran merged = run({kGrade, "merge", q.dir / "s0", q.dir / "s1", q.dir / "s2", q.dir / "s3", "--reports",
                          q.dir / "merged", "-o", q.dir / "merged.json"});
  CHECK(merged.exit_code == 1);
  CHECK(book(q.dir / "merged.json") == queued);

  // Anyone can check each of the three against its evidence; an edited piece of it is named.
  for (const char* reports : {"queued", "batch", "merged"})
    CHECK(run({kGrade, "verify", q.dir / reports}).exit_code == 0);
  std::ofstream(q.dir / "queued/gt-03/files/transitions.log", std::ios::app) << "CLOSED -> OPEN\n";
  const Ran edited = run({kGrade, "verify", q.dir / "queued"});
  CHECK(edited.exit_code == 1);
  CHECK(edited.out.find("gt-03: does not follow from its evidence") != std::string::npos);
}

TEST_CASE(
    "queue: a box the machine cannot make is retried 3 times then dead-lettered, a folder too big for its box is "
    "the student's, a newer push supersedes, interactive goes first, a worker grading otherwise is refused") {
  if (skip_unless(::geteuid() == 0, "the workers give each program a box of its own uid: needs root")) return;
  QueueRun q;
  python_kit(q.root + "/ann");
  python_kit(q.root + "/bob");
  python_kit(q.root + "/huge");
  std::ofstream(q.root + "/huge/data.bin") << std::string(3 << 20, 'x');  // larger than the boxes below
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  // bob hands in again, with a mistake: his newer push is the one graded.
  python_kit(q.dir / "again/bob", "sum(self.window) * 100 >= ", "sum(self.window) * 100 > ");
  const Ran newer = run(q.graded(q.queue("push", {q.dir / "again"})));
  CHECK(newer.err.find("1 queued (bulk)") != std::string::npos);
  // A live submission goes before the bulk of the class.
  python_kit(q.dir / "live/cy");
  REQUIRE(run(q.graded(q.queue("push", {q.dir / "live", "--lane", "interactive"}))).exit_code == 0);
  const json before = q.status();
  CHECK(before["queued"] == 4);
  CHECK(before["superseded"] == 1);

  // A worker with another timeout would grade otherwise: refused, naming what differs.
  const Ran other = run({kGrade, "queue", "--queue", "cls", "work", "--redis", q.redis.address(), "--run", "sh run.sh",
                         "--timeout", "20s", "--until-done"});
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("graded otherwise than this worker would (timeout_ms)") != std::string::npos);

  auto w = q.worker("w", {"--limit-box-size", "1M"}, "1");
  const auto line = w->read_line(std::chrono::seconds{60});
  REQUIRE(line);
  // Each line stamped with the time in UTC, then the folder it is about.
  CHECK(std::regex_match(*line, std::regex("20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z "
                                           "cy [(]delivery 1[)]: taken")));
  REQUIRE(w->wait(std::chrono::seconds{300}) == 0);
  std::string out = *line + "\n" + w->read_rest_of_stdout();
  INFO(out);
  const auto count = [&out](const std::string& what) {
    std::size_t n = 0;
    for (auto at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
    return n;
  };
  // Each once: huge's folder does not fit in its box, which is its own failure, never handed back.
  CHECK(count("ann: done") == 1);
  CHECK(count("bob: done") == 1);
  CHECK(count("cy: done") == 1);
  CHECK(count("huge (delivery 1): taken") == 1);
  CHECK(count("huge (delivery 2)") == 0);
  CHECK(count("handed back") == 0);

  // dee's box cannot be made by this worker's machine (nowhere to make one): the grader's failure,
  // handed back after each of its 3 deliveries, then dead-lettered.
  python_kit(q.dir / "late/dee");
  REQUIRE(run(q.graded(q.queue("push", {q.dir / "late"}))).exit_code == 0);
  auto broken = q.worker("broken", {}, "1", {"TMPDIR=" + (q.dir / "no-such-place")});
  REQUIRE(broken->wait(std::chrono::seconds{120}) == 0);
  out = broken->read_rest_of_stdout();
  CHECK(count("dee (delivery 3): taken") == 1);
  CHECK(count("dee (delivery 4)") == 0);
  CHECK(count("handed back") == 3);

  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "reports", "-o", q.dir / "book.json"}));
  INFO(collected.err);
  CHECK(collected.exit_code == 1);
  CHECK(collected.err.find("dee: dead-lettered: ") != std::string::npos);
  const auto rows = book(q.dir / "book.json");
  REQUIRE(rows.size() == 5);
  CHECK(rows.at("huge")["status"] == "error");
  CHECK(rows.at("huge")["fault"] == "program");
  CHECK(rows.at("huge")["error"].get<std::string>().find("does not fit in its box") != std::string::npos);
  CHECK(rows.at("dee")["status"] == "error");
  CHECK(rows.at("dee")["error"].get<std::string>().rfind("infrastructure: ", 0) == 0);
  CHECK(rows.at("dee")["error"].get<std::string>().find("(3 deliveries)") != std::string::npos);
  CHECK(rows.at("dee")["max_score"] == 8);  // out of the assignment's points, never 0 of 0
  CHECK(rows.at("ann")["score"] == 8);
  CHECK(rows.at("bob")["score"] == 7);  // his newer push, with the mistake
  CHECK(q.status()["dead"] == 1);

  // Mended (a worker that can make boxes), push --resume gives the dead job 3 more deliveries.
  q.dir.write("dee.txt", "dee\n");
  const Ran revived = run(q.graded(q.queue("push", {q.dir / "late", "--resume", "--manifest", q.dir / "dee.txt"})));
  CHECK(revived.err.find("1 dead-lettered given 3 more deliveries") != std::string::npos);
  auto mended = q.worker("mended", {}, "1");
  REQUIRE(mended->wait(std::chrono::seconds{120}) == 0);
  CHECK(mended->read_rest_of_stdout().find("dee: done") != std::string::npos);
  CHECK(run(q.queue("collect", {"--reports", q.dir / "reports2", "-o", q.dir / "book2.json"})).exit_code == 1);  // huge
  CHECK(book(q.dir / "book2.json").at("dee")["score"] == 8);
}

TEST_CASE("queue: status names what each worker holds and how long ago it was last heard from") {
  if (skip_unless(::geteuid() == 0, "the workers give each program a box of its own uid: needs root")) return;
  QueueRun q;
  python_kit(q.root + "/ann");
  std::ofstream(q.root + "/ann/run.sh") << "exec sleep 600\n";  // held until the time limit
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  auto w = q.worker("w", {}, "1");
  REQUIRE(!read_until(*w, "ann (delivery 1): taken").empty());
  // Stopped, it beats no more: no other worker asks to take its job, so the age only grows.
  w->signal(SIGSTOP);
  json held;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{60};
  while (std::chrono::steady_clock::now() < give_up) {
    held = q.status()["holding"];
    if (held.contains("w") && held["w"]["heartbeat_age_ms"].get<long long>() >= 2000) break;
  }
  REQUIRE(held.contains("w"));
  CHECK(held["w"]["jobs"] == 1);
  CHECK(held["w"]["folders"] == json::array({"ann"}));
  CHECK(held["w"]["heartbeat_age_ms"].get<long long>() >= 2000);
  const Ran text = run(q.queue("status"));
  INFO(text.out);
  CHECK(std::regex_search(text.out, std::regex("\n  w: 1 job\\(s\\) \\(ann\\), last heartbeat [0-9]+ s ago\n")));
  // Let go, it stops as an operator stops it: its job handed back, its box gone.
  w->signal(SIGCONT);
  w->signal(SIGTERM);
  CHECK(w->wait(std::chrono::seconds{60}).has_value());
}

TEST_CASE("queue: Redis away for longer than a job may go unheard, then started again, costs its job no delivery") {
  if (skip_unless(::geteuid() == 0, "the workers give each program a box of its own uid: needs root")) return;
  QueueRun q;
  q.grading = {"--run", "sh run.sh", "--timeout", "5s"};
  python_kit(q.root + "/ann");
  std::ofstream(q.root + "/ann/run.sh") << "exec sleep 600\n";  // held until the time limit
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  auto w = q.worker("w");  // -j 2: its other slot asks for work all through
  REQUIRE(!read_until(*w, "ann (delivery 1): taken").empty());
  // The outage lasts longer than a job may go unheard (600 ms): the job's entry, read back from
  // the log, looks as silent as a dead worker's. Whatever the worker was doing (unpacking, the
  // program's run, its heartbeat) waits for Redis rather than handing the job back.
  q.redis.stop();
  REQUIRE(!read_until(*w, "redis: still away after 0.6 s of asking").empty());
  q.redis.start();
  // Another worker asks first, before the holder's next try: the job is not its to take.
  grade::queue::QueueStore other(*parse_redis_address(q.redis.address()), "cls");
  const auto taken = other.take("other", 600);
  REQUIRE(taken);
  CHECK_FALSE(taken->has_value());
  REQUIRE(w->wait(std::chrono::seconds{120}) == 0);
  const std::string out = w->read_rest_of_stdout();
  INFO(out);
  CHECK(out.find("redis: answering again") != std::string::npos);
  CHECK(out.find("ann (delivery 2)") == std::string::npos);
  CHECK(out.find("ann: done") != std::string::npos);
  const json s = q.status();
  CHECK(s["done"] == 1);
  CHECK(s["attempts"] == 0);
}

TEST_CASE("queue: a folder graded before its student handed in again still has its row, superseded") {
  QueueRun q;
  q.grading = {};  // from the files alone: no box, so no root needed
  python_kit(q.root + "/ann");
  REQUIRE(date_all(q.root + "/ann", 1'793'664'000));
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  REQUIRE(run(q.graded(q.queue("work", {"--until-done", "--poll", "50ms"}))).exit_code == 0);
  python_kit(q.dir / "later/Ann");  // the same student, an hour later
  REQUIRE(date_all(q.dir / "later/Ann", 1'793'667'600));
  REQUIRE(run(q.graded(q.queue("push", {q.dir / "later"}))).exit_code == 0);
  REQUIRE(run(q.graded(q.queue("work", {"--until-done", "--poll", "50ms"}))).exit_code == 0);
  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "reports", "-o", q.dir / "book.json"}));
  INFO(collected.err);
  const auto rows = book(q.dir / "book.json");
  REQUIRE(rows.size() == 2);
  CHECK(rows.at("Ann")["status"] == "graded");
  CHECK(rows.at("ann")["status"] == "superseded");
  CHECK(rows.at("ann")["error"].get<std::string>().rfind("handed in again: Ann (2026-11-03T01:00:00Z)", 0) == 0);
}

TEST_CASE(
    "queue: a worker killed leaves its --work-dir with students' files, and the next worker on the machine sweeps it") {
  if (skip_unless(::geteuid() == 0, "the workers give each program a box of its own uid: needs root")) return;
  QueueRun q;
  python_kit(q.root + "/ann");
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  auto first = q.worker("first", {}, "1");
  REQUIRE(!read_until(*first, "ann (delivery 1): taken").empty());
  first->signal(SIGKILL);
  REQUIRE(first->wait(std::chrono::seconds{30}).has_value());
  REQUIRE(fs::exists(q.dir / "first"));  // a folder the killed worker could not empty
  // Another worker, with a folder of its own: it sweeps the dead one's, then grades ann.
  auto second = q.worker("second", {}, "1");
  REQUIRE(second->wait(std::chrono::seconds{120}) == 0);
  CHECK(second->read_rest_of_stdout().find("ann: done") != std::string::npos);
  CHECK_FALSE(fs::exists(q.dir / "first"));
  CHECK_FALSE(fs::exists(q.dir / "second"));  // its own, emptied at the end
}

TEST_CASE("queue: a student who hands in twice: the later hand-in is queued whichever sorts first, the earlier named") {
  QueueRun q;
  python_kit(q.root + "/Ann");  // one student with "ann" by the id rule, handed in an hour later
  python_kit(q.root + "/ann");
  REQUIRE(date_all(q.root + "/Ann", 1'793'667'600));
  REQUIRE(date_all(q.root + "/ann", 1'793'664'000));
  const Ran pushed = run(q.graded(q.queue("push", {q.root})));
  INFO(pushed.err);
  CHECK(pushed.exit_code == 0);
  CHECK(pushed.err.find("queue push: not queued: ann: handed in before Ann, which is graded") != std::string::npos);
  CHECK(pushed.err.find("1 queued (bulk), 0 pushed before with the same bytes, 1 superseded") != std::string::npos);
  // Pushed again, nothing changes: the same job is current, the earlier one stays superseded.
  const Ran again = run(q.graded(q.queue("push", {q.root})));
  INFO(again.err);
  CHECK(again.err.find("0 queued (bulk), 1 pushed before with the same bytes, 1 superseded") != std::string::npos);
  const json s = q.status();
  CHECK(s["queued"] == 1);
  CHECK(s["superseded"] == 1);
  // The earlier folder has its row, saying which is graded: as a batch of the same folders says it.
  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "reports", "-o", q.dir / "book.json"}));
  INFO(collected.err);
  const auto rows = book(q.dir / "book.json");
  REQUIRE(rows.size() == 2);
  CHECK(rows.at("Ann")["status"] == "not_graded");
  CHECK(rows.at("ann")["status"] == "superseded");
  const std::string why =
      "handed in again: Ann (2026-11-03T01:00:00Z) is graded instead of this one (2026-11-03T00:00:00Z); the last a "
      "student hands in is graded, by the newest file each folder holds";
  CHECK(rows.at("ann")["error"] == why);
  const Ran batch = run({kGrade, "--batch", q.root, "-o", q.dir / "batch.json"});
  INFO(batch.err);
  CHECK(book(q.dir / "batch.json").at("ann")["error"] == why);
}

TEST_CASE("queue: an LMS export's submitted time decides which hand-in is queued, over the folders' own") {
  QueueRun q;
  python_kit(q.root + "/ann-1");
  python_kit(q.root + "/ann-2");
  REQUIRE(date_all(q.root + "/ann-1", 1'793'667'600));  // by its files, ann-1 is the later
  REQUIRE(date_all(q.root + "/ann-2", 1'793'664'000));
  q.dir.write("roster.csv",
              "Folder,Email,Submitted\nann-1,ann@uni.edu,2026-11-03T00:00:00Z\n"
              "ann-2,ann@uni.edu,2026-11-03T01:00:00Z\n");
  q.dir.write("k", "the course key of the test\n");
  ::chmod((q.dir / "k").c_str(), 0600);
  q.grading = {"--roster", q.dir / "roster.csv", "--course-key", q.dir / "k"};
  const Ran pushed = run(q.graded(q.queue("push", {q.root})));
  INFO(pushed.err);
  // ann-1 sorts first, so it was queued first, then superseded by ann-2 in the same push: said.
  CHECK(pushed.err.find("queue push: no longer queued: ann-1: handed in before ann-2, which is graded") !=
        std::string::npos);
  CHECK(pushed.err.find("1 queued (bulk), 0 pushed before with the same bytes, 1 superseded") != std::string::npos);
  const json s = q.status();
  CHECK(s["queued"] == 1);
  CHECK(s["superseded"] == 1);
}

TEST_CASE(
    "queue: each student graded on their own numbers, as --batch grades them, and a push or a worker with another "
    "course key is refused, and the key never reaches Redis") {
  QueueRun q;
  q.grading = {};  // from the files alone: no program runs, so no box and no root needed
  for (const char* name : {"ann", "bob", "cy"}) python_kit(q.root + "/" + name);
  for (const char* key : {"k1", "k2"}) {
    q.dir.write(key, std::string("the course key of the test: ") + key + "\n");
    ::chmod((q.dir / key).c_str(), 0600);
  }
  const std::vector<std::string> k1{"--course-key", q.dir / "k1"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  // A manifest pushes what it names; a name the root does not hold is said, and the exit is 1.
  q.dir.write("handed-in.txt", "# from the LMS\nann\nbob\nzed\n");
  const Ran listed = run(with(q.queue("push", {q.root, "--manifest", q.dir / "handed-in.txt"}), k1));
  CHECK(listed.exit_code == 1);
  CHECK(listed.err.find("not queued: zed: in the manifest, but ") != std::string::npos);
  CHECK(listed.err.find("2 queued (bulk)") != std::string::npos);
  const Ran all = run(with(q.queue("push", {q.root}), k1));
  REQUIRE(all.exit_code == 0);
  CHECK(all.err.find("1 queued (bulk), 2 pushed before") != std::string::npos);
  const Ran push = run(q.queue("push", {q.root, "--course-key", q.dir / "k2"}));
  CHECK(push.exit_code == 2);
  CHECK(push.err.find("pushed to with another grading (course_key_hmac)") != std::string::npos);
  const Ran other = run(q.queue("work", {"--course-key", q.dir / "k2", "--until-done"}));
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("graded otherwise than this worker would (course_key_hmac)") != std::string::npos);
  // Redis holds a fingerprint of the key, not the key.
  RedisLink admin(*parse_redis_address(q.redis.address()), std::chrono::seconds{5});
  const auto stamp = admin.command({"HGET", "{cbq:cls}:meta", "stamp"});
  REQUIRE(stamp);
  CHECK(stamp->text.find("course_key_hmac") != std::string::npos);
  CHECK(stamp->text.find("the course key of the test") == std::string::npos);

  // A worker killed (kill -9) left its submissions unpacked in the temp folder: the next worker
  // removes the folders of workers that are gone, and only those.
  TempDir tmp;
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  fs::create_directories(tmp / ("cb-grade-queue-" + std::to_string(gone) + "/0/root/ann"));
  fs::create_directories(tmp / ("cb-grade-queue-" + std::to_string(::getpid())));
  REQUIRE(run(with(q.queue("work", {"--until-done", "--poll", "50ms"}), k1), "", {"TMPDIR=" + tmp.path()}).exit_code ==
          0);
  CHECK(!fs::exists(tmp / ("cb-grade-queue-" + std::to_string(gone))));
  CHECK(fs::exists(tmp / ("cb-grade-queue-" + std::to_string(::getpid()))));
  CHECK(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()) == 1);  // its own is gone too
  CHECK(run(q.queue("collect", {"--reports", q.dir / "queued", "-o", q.dir / "queued.json"})).exit_code == 1);
  CHECK(
      run(with({kGrade, "--batch", q.root, "--reports", q.dir / "batch", "-o", q.dir / "batch.json"}, k1)).exit_code ==
      1);
  const auto queued = book(q.dir / "queued.json");
  REQUIRE(queued.size() == 3);
  CHECK(queued == book(q.dir / "batch.json"));
  CHECK(queued.at("bob")["student"] == "bob");
  CHECK(queued.at("ann")["numbers"] != queued.at("bob")["numbers"]);
}

TEST_CASE("queue: a folder that cannot be graded as handed in is the student's, completed once, never dead-lettered") {
  QueueRun q;
  q.grading = {"--batch-files", "cb"};  // from the files alone: no box, no root needed
  python_kit(q.root + "/ann");
  fs::create_directories(q.root + "/ann/cb");
  python_kit(q.root + "/bob");
  fs::create_symlink("../ann/cb", q.root + "/bob/cb");  // refused as a link: the folder's own failure
  // Over the push's limits (16 MiB of files): named by push, and (the finding) given no row by
  // collect. It is the folder's row now, as a batch gives it.
  python_kit(q.root + "/cy");
  std::ofstream(q.root + "/cy/big.bin").close();
  fs::resize_file(fs::path(q.root) / "cy/big.bin", std::uintmax_t{17} << 20);  // sparse: nothing written
  const Ran pushed = run(q.graded(q.queue("push", {q.root})));
  CHECK(pushed.exit_code == 1);
  CHECK(pushed.err.find("not queued: cy: ") != std::string::npos);
  const Ran worked = run(q.graded(q.queue("work", {"--until-done", "--poll", "50ms", "--heartbeat", "200ms"})));
  INFO(worked.out, worked.err);
  REQUIRE(worked.exit_code == 0);
  CHECK(worked.out.find("bob (delivery 1): taken") != std::string::npos);
  CHECK(worked.out.find("bob (delivery 2)") == std::string::npos);  // never handed back
  CHECK(worked.out.find("handed back") == std::string::npos);
  const json status = q.status();
  INFO(status.dump());
  CHECK(status["dead"] == 0);
  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "queued", "-o", q.dir / "queued.json"}));
  INFO(collected.err);
  CHECK(collected.exit_code == 1);  // bob's folder is an error
  const auto queued = book(q.dir / "queued.json");
  REQUIRE(queued.size() == 3);
  CHECK(queued.at("cy")["status"] == "error");
  CHECK(queued.at("cy")["fault"] == "program");
  CHECK(queued.at("cy")["error"].get<std::string>().find("more than 16 MiB of files") != std::string::npos);
  CHECK(queued.at("bob")["status"] == "error");
  CHECK(queued.at("bob")["fault"] == "program");
  CHECK(queued.at("bob")["error"].get<std::string>().find("infrastructure") == std::string::npos);
  CHECK(queued.at("ann")["status"] == "graded");
}

// A worker stopped mid-grading (SIGSTOP: a laptop's lid, a paused VM) with no peer to take its
// jobs: what its programs did then is not evidence. Its rows were the stalled gradings' 5/8; the
// stall is the grader's failure, so the job goes back and is graded again, to full marks.
TEST_CASE("queue: a worker stopped mid-grading with no peer grades its right programs again, to full marks") {
  if (skip_unless(::geteuid() == 0, "the worker gives each program a box of its own uid: needs root")) return;
  QueueRun q;
  python_kit(q.root + "/ann");
  python_kit(q.root + "/bob");
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  auto w = q.worker("w1");
  // Stopped a second into a lab run, for ten: past the cool-down's end and the calls' timeouts.
  bool started = false;
  for (int i = 0; i < 6000 && !started; ++i) {
    for (const auto& [pid, cmd] : process_tree_command_lines(w->pid()))  // its own, not a test's beside it
      if (cmd.find("python3") != std::string::npos && cmd.find("lab.py") != std::string::npos) started = true;
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  REQUIRE(started);
  std::this_thread::sleep_for(std::chrono::seconds{1});
  // Ten seconds in the suite; CB_QUEUE_STOP_SECONDS=60 tries the minute a paused VM takes, past
  // the worker's lease, when one is willing to wait for it.
  const char* stop = std::getenv("CB_QUEUE_STOP_SECONDS");
  w->signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds{stop != nullptr ? std::atoi(stop) : 10});
  w->signal(SIGCONT);
  REQUIRE(w->wait(std::chrono::seconds{240}).value_or(-1) == 0);
  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "queued", "-o", q.dir / "queued.json"}));
  INFO(collected.err);
  REQUIRE(collected.exit_code == 0);
  const auto queued = book(q.dir / "queued.json");
  REQUIRE(queued.size() == 2);
  for (const auto& entry : queued) {
    const json& row = entry.second;
    INFO(row.dump());
    CHECK(row["status"] == "graded");
    CHECK(row["score"] == row["max_score"]);
  }
}

// Two file names that are not UTF-8 once reached a worker as one (a listing's names were text),
// and the job was handed back three times and dead-lettered as "infrastructure" while --batch
// graded it. Names travel as bytes: the folder is made again as handed in, and graded once.
TEST_CASE("queue: a folder whose names are not UTF-8 is made again byte for byte and graded once") {
  QueueRun q;
  q.grading = {"--batch-files", "cb"};  // from the files alone: no box, no root needed
  python_kit(q.root + "/ann");
  fs::create_directories(q.root + "/ann/cb");
  python_kit(q.root + "/eve");
  fs::create_directories(q.root + "/eve/cb");
  std::ofstream(q.root + "/eve/\xff") << "one";
  std::ofstream(q.root + "/eve/\xfe") << "two";
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  const Ran worked = run(q.graded(q.queue("work", {"--until-done", "--poll", "50ms", "--heartbeat", "200ms"})));
  INFO(worked.out, worked.err);
  REQUIRE(worked.exit_code == 0);
  CHECK(worked.out.find("eve (delivery 2)") == std::string::npos);
  CHECK(worked.out.find("handed back") == std::string::npos);
  CHECK(q.status()["dead"] == 0);
  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "queued", "-o", q.dir / "queued.json"}));
  INFO(collected.err);
  const auto queued = book(q.dir / "queued.json");
  REQUIRE(queued.size() == 2);
  CHECK(queued.at("eve")["status"] == "graded");
  CHECK(queued.at("ann")["status"] == "graded");
}

TEST_CASE("queue: status of a queue nothing was pushed to (a mistyped name) is an error naming it, exit 2") {
  QueueRun q;
  const Ran unknown = run(q.queue("status"));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err.find("queue status: queue cls has had nothing pushed to it") != std::string::npos);
  CHECK(run(q.queue("status", {"--format", "json"})).exit_code == 2);
  q.grading = {"--batch-files", "cb"};
  python_kit(q.root + "/ann");
  REQUIRE(run(q.graded(q.queue("push", {q.root}))).exit_code == 0);
  CHECK(q.status()["queued"] == 1);
}

// A batch with a roster and an empty folder wrote a gradebook verify refused; collect is held to
// the same: its gradebook of a roster's class (an LMS's semicolons and capitals) verifies, and has
// the batch's cells.
TEST_CASE(
    "queue: a collected gradebook with a roster, a course key, an empty folder and a student with none verifies, as "
    "--batch's does") {
  QueueRun q;
  // bob is on the roster and handed in nothing: his row says so, as the batch's does.
  q.dir.write("roster.csv", "Folder;SID;Email\nann;s1;Ann@Uni.edu\nzed;s2;Zed@Uni.edu\nbob;s3;Bob@Uni.edu\n");
  q.dir.write("course.key", "the course key of the test\n");
  ::chmod((q.dir / "course.key").c_str(), 0600);
  q.grading = {"--course-key", q.dir / "course.key", "--roster", q.dir / "roster.csv", "--id-field", "email"};
  python_kit(q.root + "/ann");
  fs::create_directories(q.root + "/zed");
  const Ran pushed = run(q.graded(q.queue("push", {q.root})));
  INFO(pushed.err);
  REQUIRE(pushed.exit_code == 0);
  CHECK(pushed.err.find("queue push: on the roster, nothing handed in: bob") != std::string::npos);
  CHECK(q.status()["refused"] == 1);  // counted as never queued, not as superseded
  REQUIRE(run(q.graded(q.queue("work", {"--until-done", "--poll", "50ms"}))).exit_code == 0);
  const Ran collected = run(q.queue("collect", {"--reports", q.dir / "queued", "-o", q.dir / "queued.csv"}));
  INFO(collected.err);
  CHECK(collected.exit_code == 1);  // from the files alone a kit has none of the lab's: no one passed
  const Ran v = run({kGrade, "verify", q.dir / "queued", "--gradebook", q.dir / "queued.csv"});
  INFO(v.out, v.err);
  CHECK(v.exit_code == 0);
  std::ifstream in(q.dir / "queued.csv");
  const std::string book{std::istreambuf_iterator<char>(in), {}};
  CHECK(book.find("zed,Zed@Uni.edu,,empty") != std::string::npos);
  CHECK(book.find("ann,Ann@Uni.edu,\"student ann@uni.edu's numbers") != std::string::npos);
  const std::string bob = "\nbob,Bob@Uni.edu,,no_submission,0,";
  CHECK(book.find(bob) != std::string::npos);
  REQUIRE(run(q.graded({kGrade, "--batch", q.root, "-o", q.dir / "batch.csv"})).exit_code == 1);
  std::ifstream batch_in(q.dir / "batch.csv");
  const std::string batch{std::istreambuf_iterator<char>(batch_in), {}};
  const auto line_of = [&bob](const std::string& text) {
    const auto at = text.find(bob);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at + 1) - at);
  };
  CHECK(!line_of(batch).empty());
  CHECK(line_of(book) == line_of(batch));
}

// The queue's rules one call at a time, against a real Redis (no worker, no clock of ours:
// idleness is set with XCLAIM IDLE, as three missed heartbeats would leave it, and Redis's uptime is
// its own).
TEST_CASE(
    "queue functions: a late completion is an attempt, another verdict marks the job nondeterministic, a "
    "heartbeat never takes a job back, and three failures dead-letter a job") {
  TempDir dir;
  RedisServer redis(dir.path());
  grade::queue::QueueStore q(*parse_redis_address(redis.address()), "t");
  const auto push = [&q](const std::string& name) {
    auto r = q.call("push", {name, "job-" + name, name, "content-" + name, "bulk", "{}", "t", "[]"});
    REQUIRE(r);
    return r->elements.at(0).text;
  };
  const auto field = [&q](const std::string& job, const std::string& f) {
    auto v = q.hget("job:" + job, f);
    REQUIRE(v);
    return v->value_or("");
  };
  const auto idle = [&](const std::string& job, const std::string& owner) {
    REQUIRE(q.command(
        {"XCLAIM", q.prefix() + ":bulk", "workers", owner, "0", field(job, "entry"), "IDLE", "1000000", "JUSTID"}));
  };
  CHECK(push("ann") == "new");
  CHECK(push("ann") == "same");

  auto first = q.take("w1", 60'000);
  REQUIRE(first);
  REQUIRE(*first);
  CHECK((*first)->job == "job-ann");
  CHECK((*first)->delivery == 1);
  auto nothing = q.take("w2", 60'000);  // w1's job is not idle yet
  REQUIRE(nothing);
  CHECK(!*nothing);
  idle("job-ann", "w1");  // w1 falls silent
  // This Redis has only just started: had it been restarted, every job held would look as silent
  // as this one, and no living worker has yet had time to beat. None held is taken back yet.
  auto early = q.take("w2", 60'000);
  REQUIRE(early);
  CHECK(!*early);
  // Up two seconds by its own account (its uptime, read back), it takes back one silent past 1 s.
  for (;;) {
    auto info = q.command({"INFO", "server"});
    REQUIRE(info);
    if (info->text.find("uptime_in_seconds:") != std::string::npos &&
        std::stoi(info->text.substr(info->text.find("uptime_in_seconds:") + 18)) >= 2)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});  // between two readings of its uptime
  }
  auto again = q.take("w2", 1'000);
  REQUIRE(again);
  REQUIRE(*again);
  CHECK((*again)->delivery == 2);
  CHECK(field("job-ann", "owner") == "w2");
  // w1's heartbeat, come back, finds the job gone and leaves it where it is.
  auto lost = q.call("beat", {"w1", "job-ann"});
  REQUIRE(lost);
  REQUIRE(lost->elements.size() == 1);
  CHECK(lost->elements[0].text == "job-ann");
  auto pending = q.command({"XPENDING", q.prefix() + ":bulk", "workers", "-", "+", "10"});
  REQUIRE(pending);
  REQUIRE(pending->elements.size() == 1);
  CHECK(pending->elements[0].elements[1].text == "w2");

  auto done = q.call("complete", {"w2", "job-ann", "graded 8/8", "[]"});
  REQUIRE(done);
  CHECK(done->text == "done");
  auto late = q.call("complete", {"w1", "job-ann", "graded 7/8", "[]"});
  REQUIRE(late);
  CHECK(late->text == "attempt");
  CHECK(field("job-ann", "verdict") == "graded 8/8");
  CHECK(field("job-ann", "nondeterministic") == "graded 7/8");
  auto attempts = q.command({"LRANGE", q.prefix() + ":attempts", "0", "-1"});
  REQUIRE(attempts);
  REQUIRE(attempts->elements.size() == 1);
  CHECK(json::parse(attempts->elements[0].text)["same"] == false);

  // The grader's own failure, three times: then the job is dead, with why.
  CHECK(push("bob") == "new");
  for (int delivery = 1; delivery <= 3; ++delivery) {
    auto t = q.take("w1", 60'000);
    REQUIRE(t);
    REQUIRE(*t);
    CHECK((*t)->delivery == delivery);
    auto failed = q.call("fail", {"w1", "job-bob", "no box", "60000"});
    REQUIRE(failed);
    CHECK(failed->text == "released");
  }
  auto none = q.take("w1", 60'000);
  REQUIRE(none);
  CHECK(!*none);
  CHECK(field("job-bob", "state") == "dead");
  CHECK(field("job-bob", "last_error") == "no box (3 deliveries)");
  auto dead = q.command({"XLEN", q.prefix() + ":dead"});
  REQUIRE(dead);
  CHECK(dead->integer == 1);

  // What collect says of them: the first result kept, the other verdict named; the dead row.
  grade::CollectOptions c;
  c.queue = {redis.address(), "t"};
  c.reports = dir / "reports";
  auto got = grade::collect_queue(c);
  REQUIRE(got);
  std::string notes;
  for (const std::string& n : got->notes) notes += n + "\n";
  CHECK(notes.find("ann: graded again with another verdict (nondeterministic): first graded 8/8, then graded 7/8") !=
        std::string::npos);
  CHECK(notes.find("bob: dead-lettered: no box (3 deliveries)") != std::string::npos);
  REQUIRE(got->rows.size() == 2);
  CHECK(got->rows[1].error == "infrastructure: no box (3 deliveries)");
}

}  // namespace
}  // namespace cb::testing
