#include <cmath>

#include "cb/grade/queue.h"
#include "queue_store.h"

namespace cb::grade {
namespace {

std::string age_text(long long ms) {
  const long long s = ms / 1000;
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + std::to_string((s % 3600) / 60) + " min";
}

}  // namespace

std::string QueueStatus::line() const {
  std::string out = class_name + ": " + std::to_string(done + dead) + "/" + std::to_string(pushed()) + " done, " +
                    std::to_string(running) + " running, " + std::to_string(queued) + " queued";
  if (dead > 0) out += ", " + std::to_string(dead) + " dead";
  out += "; " + std::to_string(done_last_minute) + " in the last minute";
  const std::size_t left = queued + running;
  if (left > 0 && done_last_minute > 0)
    out += ", about " +
           age_text(static_cast<long long>(
               std::ceil(60'000.0 * static_cast<double>(left) / static_cast<double>(done_last_minute)))) +
           " to go";
  return out;
}

std::string QueueStatus::text() const {
  std::string out = line() + "\n";
  if (oldest_waiting_ms >= 0) out += "the oldest job waiting has waited " + age_text(oldest_waiting_ms) + "\n";
  for (const WorkerHold& h : holding) {
    out += "  " + h.worker + ": " + std::to_string(h.jobs) + " job(s) (";
    for (std::size_t i = 0; i < h.folders.size(); ++i) out += (i == 0 ? "" : ", ") + h.folders[i];
    if (h.folders.size() < h.jobs) out += " and " + std::to_string(h.jobs - h.folders.size()) + " more";
    out += "), last heartbeat " + age_text(h.heartbeat_age_ms) + " ago\n";
  }
  if (superseded > 0) out += std::to_string(superseded) + " superseded by the same student's later hand-in\n";
  if (refused > 0) out += std::to_string(refused) + " never queued (refused by push, or on the roster with nothing)\n";
  if (attempts > 0) out += std::to_string(attempts) + " completion(s) after the first, kept as attempts\n";
  return out;
}

Result<QueueStatus> queue_status(const QueueAddress& queue) {
  auto address = parse_redis_address(queue.redis);
  if (!address) return Error{"--redis: " + address.error().message};
  queue::QueueStore store(*address, queue.name);
  if (auto known = store.stamp(); !known) return known.error();
  auto r = store.call("status", {"60000"});
  if (!r) return r.error();
  if (r->elements.size() != 5) return Error{"redis: cb_queue_v1_status: an answer of another shape"};
  QueueStatus s;
  s.class_name = queue.name;
  const auto& counts = r->elements[0].elements;
  for (std::size_t i = 0; i + 1 < counts.size(); i += 2) {
    const auto n = static_cast<std::size_t>(std::max(0LL, std::atoll(counts[i + 1].text.c_str())));
    const std::string& state = counts[i].text;
    if (state == "queued") s.queued = n;
    if (state == "running") s.running = n;
    if (state == "done") s.done = n;
    if (state == "dead") s.dead = n;
    if (state == "superseded") s.superseded = n;
    if (state == "refused") s.refused = n;
  }
  s.oldest_waiting_ms = r->elements[1].integer;
  s.done_last_minute = static_cast<std::size_t>(r->elements[2].integer);
  for (const RedisReply& h : r->elements[3].elements) {
    if (h.elements.size() != 4) continue;
    WorkerHold w{h.elements[0].text, static_cast<std::size_t>(h.elements[1].integer), h.elements[2].integer, {}};
    for (const RedisReply& f : h.elements[3].elements) w.folders.push_back(f.text);
    s.holding.push_back(std::move(w));
  }
  s.attempts = static_cast<std::size_t>(r->elements[4].integer);
  return s;
}

}  // namespace cb::grade
