#include "queue_store.h"

#include "cb/decimal_time.h"
#include "cb/grade/queue.h"
#include "cb/hmac_sha256.h"
#include "queue_library.h"

namespace cb::grade::queue {

nlohmann::json grading_stamp(const BatchOptions& options) {
  nlohmann::json stamp = class_stamp(options);
  if (!options.course_key.empty())
    stamp["course_key_hmac"] = hex(hmac_sha256(options.course_key, "cb-grade queue: the course key")).substr(0, 16);
  return stamp;
}

QueueStore::QueueStore(RedisAddress address, std::string name, Patience patience)
    : link_(std::move(address), std::chrono::seconds{10}),
      patience_(std::move(patience)),
      name_(std::move(name)),
      prefix_("{cbq:" + name_ + "}") {}

Result<RedisReply> QueueStore::send(const std::vector<std::string>& argv) {
  const auto say = [this](const std::string& line) {
    if (patience_.say) patience_.say(line);
  };
  std::chrono::milliseconds away{0};
  for (;;) {
    auto reply = link_.command(argv);
    if (reply || !patience_.wait) {
      if (reply && away.count() > 0) say("redis: answering again");
      return reply;
    }
    if (away.count() == 0) say(reply.error().message + "; waiting for it");
    if (patience_.wait(patience_.step)) return reply;
    const auto before = away;
    away += patience_.step;
    if (patience_.remind.count() > 0 && away / patience_.remind > before / patience_.remind)
      say("redis: still away after " + format_seconds(away) + " s of asking");
  }
}

Result<RedisReply> QueueStore::command(const std::vector<std::string>& argv) {
  auto reply = send(argv);
  if (!reply) return reply.error();
  if (reply->kind == RedisReply::Kind::Error) return Error{"redis: " + argv.front() + ": " + reply->text};
  return reply;
}

Result<void> QueueStore::load_library() {
  auto loaded = command({"FUNCTION", "LOAD", "REPLACE", std::string(queue_library_text())});
  if (!loaded) return loaded.error();
  loaded_ = true;
  return {};
}

Result<RedisReply> QueueStore::call(const std::string& function, const std::vector<std::string>& args) {
  if (!loaded_)
    if (auto l = load_library(); !l) return l.error();
  std::vector<std::string> argv{"FCALL", "cb_queue_v1_" + function, "1", prefix_};
  argv.insert(argv.end(), args.begin(), args.end());
  for (int attempt = 0;; ++attempt) {
    auto reply = send(argv);
    if (!reply) return reply.error();
    if (reply->kind != RedisReply::Kind::Error) return reply;
    // A Redis restarted without its functions (no AOF, or another server): loaded again, once.
    if (attempt == 0 && reply->text.find("Function not found") != std::string::npos) {
      if (auto l = load_library(); !l) return l.error();
      continue;
    }
    return Error{"redis: cb_queue_v1_" + function + ": " + reply->text};
  }
}

Result<std::optional<std::string>> QueueStore::hget(const std::string& key, const std::string& field) {
  auto r = command({"HGET", prefix_ + ":" + key, field});
  if (!r) return r.error();
  if (r->kind != RedisReply::Kind::String) return std::optional<std::string>{};
  return std::optional<std::string>{r->text};
}

Result<nlohmann::json> QueueStore::stamp() {
  auto kept = hget("meta", "stamp");
  if (!kept) return kept.error();
  if (!*kept)
    return Error{"queue " + name_ + " has had nothing pushed to it on this Redis (is the name right? push first)"};
  return nlohmann::json::parse(**kept, nullptr, false);
}

Result<void> QueueStore::put_blob(const std::string& sha, const std::string& bytes) {
  auto r = command({"SET", prefix_ + ":blob:" + sha, bytes, "NX"});
  if (!r) return r.error();
  return {};
}

Result<std::string> QueueStore::blob(const std::string& sha) {
  auto r = command({"GET", prefix_ + ":blob:" + sha});
  if (!r) return r.error();
  if (r->kind != RedisReply::Kind::String) return Error{"redis holds no blob " + sha};
  return r->text;
}

Result<std::optional<Taken>> QueueStore::take(const std::string& worker, long long reclaim_ms) {
  auto r = call("take", {worker, std::to_string(reclaim_ms), std::to_string(kMaxDeliveries)});
  if (!r) return r.error();
  if (r->kind != RedisReply::Kind::Array || r->elements.size() < 4) return std::optional<Taken>{};
  Taken t;
  t.job = r->elements[0].text;
  t.lane = r->elements[1].text;
  t.delivery = std::atoi(r->elements[3].text.c_str());
  return std::optional<Taken>{std::move(t)};
}

}  // namespace cb::grade::queue
