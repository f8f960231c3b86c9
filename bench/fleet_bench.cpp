// What a call costs with the fleet on, beside the engine alone in the same run: a CLOSED call
// plus its recorded success, with the shared breaker's reporter talking to a real Redis that
// is healthy, 50 ms slow (a proxy holds each answer back 50 ms), stopped (SIGSTOP) or killed.
// And, for scale, two models of the designs that go to Redis on every call, against the same
// Redis: gobreaker v2's (a lock taken and the shared state read and written around each call)
// and Stoplight's (a script run before and one after each call). They are small models of
// those protocols, not those libraries.
// Run: bench/run-fleet-bench (Release). Numbers go in docs/PERFORMANCE.md and docs/FLEET.md.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"
#include "cb/fleet/shared_breaker.h"
#include "cb/redis_link.h"

namespace {

using namespace std::chrono_literals;

// A redis-server of the bench's own on a unix socket in a temporary directory.
class Redis {
 public:
  Redis() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cb-fleet-bench-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    start();
  }
  ~Redis() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void start() {
    int out[2];
    if (::pipe(out) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      ::execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", socket().c_str(), "--save", "",
               "--appendonly", "no", "--logfile", "", "--dir", dir_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string log;
    char buf[4096];
    while (log.find("eady to accept connections") == std::string::npos) {
      const ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) std::abort();
      log.append(buf, static_cast<std::size_t>(n));
    }
    // The log goes on to a pipe nobody reads: keep it drained so Redis never blocks on it.
    drain_ = std::thread([fd = out[0]] {
      char b[4096];
      while (::read(fd, b, sizeof b) > 0) {
      }
      ::close(fd);
    });
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    if (drain_.joinable()) drain_.join();
  }
  void pause() const { ::kill(pid_, SIGSTOP); }
  void resume() const { ::kill(pid_, SIGCONT); }
  [[nodiscard]] std::string socket() const { return dir_ + "/redis.sock"; }
  [[nodiscard]] std::string dir() const { return dir_; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  std::thread drain_;
};

int unix_listen(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) std::abort();
  return fd;
}

int unix_connect(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A Redis 50 ms slow: every answer is held back that long (requests pass at once).
class SlowProxy {
 public:
  SlowProxy(std::string upstream, std::string path) : upstream_(std::move(upstream)), path_(std::move(path)) {
    listen_ = unix_listen(path_);
    thread_ = std::thread([this] { run(); });
  }
  ~SlowProxy() {
    stop_ = true;
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
  }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void run() {
    while (!stop_) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int client = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int server = unix_connect(upstream_);
      if (server < 0) {
        ::close(client);
        continue;
      }
      serve(client, server);
      ::close(client);
      ::close(server);
    }
  }
  // One connection at a time: the reporter has one.
  void serve(int client, int server) {
    char buf[65536];
    while (!stop_) {
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(p, 2, 100) < 0) return;
      if ((p[0].revents & (POLLIN | POLLHUP)) != 0) {
        const ssize_t n = ::read(client, buf, sizeof buf);
        if (n <= 0 || ::write(server, buf, static_cast<std::size_t>(n)) != n) return;
      }
      if ((p[1].revents & (POLLIN | POLLHUP)) != 0) {
        const ssize_t n = ::read(server, buf, sizeof buf);
        if (n <= 0) return;
        std::this_thread::sleep_for(50ms);
        if (::write(client, buf, static_cast<std::size_t>(n)) != n) return;
      }
    }
  }
  std::string upstream_;
  std::string path_;
  int listen_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The lab profile (50% of at least 5 of the last 10 calls), as the engine's own benchmark: the
// fleet judges its own time window and takes only minimum_calls and the rate from here, and a
// member whose Redis is away runs exactly these rules locally.
cb::BreakerOptions rules() { return cb::profiles::lab(30s); }

struct Shared {
  cb::SteadyClock clock;
  std::unique_ptr<Redis> redis;
  std::unique_ptr<SlowProxy> slow;
  std::unique_ptr<cb::CircuitBreaker> engine;
  std::unique_ptr<cb::fleet::SharedBreaker> fleet;
};
Shared g;

const char* condition_name(std::int64_t c) {
  switch (c) {
    case 0: return "redis healthy";
    case 1: return "redis 50 ms slow";
    case 2: return "redis stopped (SIGSTOP)";
    default: return "redis killed";
  }
}

// Arg: 0 healthy, 1 slow, 2 stopped, 3 killed. The fleet is set up, then the fault made, so
// the reporter meets the fault in the middle of the measurement as it would in production.
void BM_Fleet_Closed(benchmark::State& state) {
  const std::int64_t condition = state.range(0);
  if (state.thread_index() == 0) {
    g.redis = std::make_unique<Redis>();
    std::string address = "unix://" + g.redis->socket();
    if (condition == 1) {
      g.slow = std::make_unique<SlowProxy>(g.redis->socket(), g.redis->dir() + "/slow.sock");
      address = "unix://" + g.slow->path();
    }
    cb::fleet::FleetOptions f;
    f.address = address;
    f.name = "bench";
    f.report_every = 75ms;
    f.redis_timeout = 100ms;
    g.fleet = cb::fleet::SharedBreaker::create(rules(), f, g.clock).value();
    if (condition == 2) g.redis->pause();
    if (condition == 3) g.redis->stop();
  }
  for (auto _ : state) {
    const cb::Admission a = g.fleet->try_acquire();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(g.fleet->record(a.ticket, {cb::Verdict::Success, 1ms}));
  }
  if (state.thread_index() == 0) {
    const cb::fleet::FleetStatus s = g.fleet->status();
    state.counters["syncs"] = static_cast<double>(s.syncs);
    state.counters["sync_failures"] = static_cast<double>(s.sync_failures);
    state.SetLabel(condition_name(condition));
    g.fleet.reset();
    g.slow.reset();
    g.redis.reset();
  }
}
BENCHMARK(BM_Fleet_Closed)->DenseRange(0, 3)->Threads(1)->Threads(2)->UseRealTime();

// The engine alone with the same rules, in the same run: the figure to compare with.
void BM_Engine_Closed(benchmark::State& state) {
  if (state.thread_index() == 0) g.engine = cb::CircuitBreaker::create(rules(), g.clock).value();
  for (auto _ : state) {
    const cb::Admission a = g.engine->try_acquire();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(g.engine->record(a.ticket, {cb::Verdict::Success, 1ms}));
  }
}
BENCHMARK(BM_Engine_Closed)->Threads(1)->Threads(2)->UseRealTime();

// gobreaker v2's protocol, modelled: take a lock (SET NX PX), read the shared state, make the
// call, write the state back, let go of the lock. Four round trips a call, one caller at a time
// fleet-wide while the lock is held.
void BM_Model_LockPerCall(benchmark::State& state) {
  Redis redis;
  cb::RedisLink link(*cb::parse_redis_address("unix://" + redis.socket()), 1s);
  for (auto _ : state) {
    auto lock = link.command({"SET", "{model}:lock", "me", "NX", "PX", "1000"});
    auto read = link.command({"GET", "{model}:state"});
    auto write = link.command({"SET", "{model}:state", "closed:1:0"});
    auto unlock = link.command({"DEL", "{model}:lock"});
    benchmark::DoNotOptimize(lock);
    benchmark::DoNotOptimize(read);
    benchmark::DoNotOptimize(write);
    benchmark::DoNotOptimize(unlock);
  }
  state.SetLabel("4 round trips a call");
}
BENCHMARK(BM_Model_LockPerCall)->UseRealTime();

// Stoplight's protocol, modelled: one script before the call (read the state) and one after
// (record the outcome in a window), both EVALSHA.
void BM_Model_ScriptsPerCall(benchmark::State& state) {
  Redis redis;
  cb::RedisLink link(*cb::parse_redis_address("unix://" + redis.socket()), 1s);
  const auto get = link.command({"SCRIPT", "LOAD", "return redis.call('HGET', KEYS[1], 'state')"});
  const auto put = link.command(
      {"SCRIPT", "LOAD", "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1]); return redis.call('ZCARD', KEYS[1])"});
  long long n = 0;
  for (auto _ : state) {
    auto before = link.command({"EVALSHA", get->text, "1", "{model}:state"});
    auto after = link.command({"EVALSHA", put->text, "1", "{model}:window", std::to_string(++n % 1000)});
    benchmark::DoNotOptimize(before);
    benchmark::DoNotOptimize(after);
  }
  state.SetLabel("2 round trips a call");
}
BENCHMARK(BM_Model_ScriptsPerCall)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
