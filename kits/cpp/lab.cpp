// The lab's eight steps, already written: you write the breaker's rules in breaker.hpp.
//
// Calls the flaky server at $CB_SERVER (default: the one lab-settings.json names) and writes the lab's four
// files into $CB_DIR (default ./cb), each in the form docs/CONTRACTS.md gives. The C++ standard
// library and POSIX sockets only; run.sh builds it with the system compiler.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

#include "harness.hpp"

namespace {

std::string g_host;  // the server, from $CB_SERVER or lab-settings.json
std::string g_port;
std::string g_out = "cb";
int g_timeout_ms = 0;  // a breaker is blind to a server that never answers without a timeout (the lab's)

// The lab's numbers, from lab-settings.json beside the program (cb-lab init writes it: the
// handout's numbers, or your own if your course gives each student a variant). One key a line.
struct Lab {
  Settings settings;
  int fast = 0, burst = 0, blocked = 0, trials_max = 0, bad = 0;
  std::string numbers;
  std::string server;
  // The server's paths, and the files the lab writes, as lab-settings.json names them.
  std::string count_path, fast_path, fail_path, bad_path;
  std::string state_file, fastfail_file, ignore_file, transitions_file;
};

// "key": "text" on its line, or "".
std::string text_of(const std::string& text, const char* key) {
  const std::string quoted = std::string("\"") + key + "\": \"";
  const auto at = text.find(quoted);
  if (at == std::string::npos) return "";
  const auto from = at + quoted.size();
  return text.substr(from, text.find('"', from) - from);
}

bool number_of(const std::string& text, const char* key, double& out) {
  const std::string quoted = std::string("\"") + key + "\":";
  const auto at = text.find(quoted);
  if (at == std::string::npos) return false;
  const char* start = text.c_str() + at + quoted.size();
  char* end = nullptr;
  out = std::strtod(start, &end);
  return end != start;
}

Lab load_lab(const std::string& program) {
  const auto slash = program.rfind('/');
  const std::string path = (slash == std::string::npos ? "." : program.substr(0, slash)) + "/lab-settings.json";
  std::ifstream f(path);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Lab lab;
  double v[11] = {};
  const char* keys[] = {"window_size",
                        "minimum_calls",
                        "failure_rate_percent",
                        "wait_in_open_ms",
                        "permitted_in_half_open",
                        "call_timeout_ms",
                        "fast",
                        "burst",
                        "blocked",
                        "trials_max",
                        "bad"};
  for (int i = 0; i < 11; ++i) {
    if (!number_of(text, keys[i], v[i])) {
      std::cerr << "lab: " << path << ": no \"" << keys[i] << "\" (cb-lab init writes it)" << std::endl;
      std::exit(2);
    }
  }
  lab.settings = {static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]), v[3], static_cast<int>(v[4])};
  g_timeout_ms = static_cast<int>(v[5]);
  lab.fast = static_cast<int>(v[6]);
  lab.burst = static_cast<int>(v[7]);
  lab.blocked = static_cast<int>(v[8]);
  lab.trials_max = static_cast<int>(v[9]);
  lab.bad = static_cast<int>(v[10]);
  lab.numbers = text_of(text, "numbers");
  std::string* texts[] = {&lab.server,     &lab.count_path,    &lab.fast_path,   &lab.fail_path,       &lab.bad_path,
                          &lab.state_file, &lab.fastfail_file, &lab.ignore_file, &lab.transitions_file};
  const char* text_keys[] = {"server",     "count_path",    "fast_path",   "fail_path",       "bad_path",
                             "state_file", "fastfail_file", "ignore_file", "transitions_file"};
  for (int i = 0; i < 9; ++i) {
    *texts[i] = text_of(text, text_keys[i]);
    if (texts[i]->empty()) {
      std::cerr << "lab: " << path << ": no \"" << text_keys[i] << "\" (cb-lab init writes it)" << std::endl;
      std::exit(2);
    }
  }
  return lab;
}

struct Answer {
  std::optional<int> status;  // empty when no answer came
  std::string body;
};

// One GET over a fresh connection, the whole exchange bounded by g_timeout_ms.
Answer get(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(g_timeout_ms);
  const auto left_ms = [&] {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<long long>(0, left.count()));
  };
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(g_host.c_str(), g_port.c_str(), &hints, &found) != 0 || found == nullptr) return {};
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  Answer answer;
  if (fd >= 0) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof error;
    const int rc = connect(fd, found->ai_addr, found->ai_addrlen);
    const bool connected = rc == 0 || (errno == EINPROGRESS && poll(&p, 1, left_ms()) == 1 &&
                                       getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0);
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + g_host + "\r\nConnection: close\r\n\r\n";
    if (connected && send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      std::string raw;
      char buf[4096];
      for (;;) {
        pollfd r{fd, POLLIN, 0};
        if (poll(&r, 1, left_ms()) != 1) break;  // timed out
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          if (n == 0) {  // the whole answer: "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
            int status = 0;
            if (std::sscanf(raw.c_str(), "HTTP/1.%*d %d", &status) == 1) answer.status = status;
            const auto body = raw.find("\r\n\r\n");
            if (body != std::string::npos) answer.body = raw.substr(body + 4);
          }
          break;
        }
        raw.append(buf, static_cast<std::size_t>(n));
      }
    }
    close(fd);
  }
  freeaddrinfo(found);
  return answer;
}

// The server's own count of the lab's requests (GET count_path). Without it there is nothing to
// measure step 4 by: the lab stops, saying why.
long long count(const Lab& lab) {
  const Answer a = get(lab.count_path);
  const auto key = a.body.find("\"count\"");
  const auto colon = key == std::string::npos ? std::string::npos : a.body.find(':', key);
  if (a.status != 200 || colon == std::string::npos) {
    std::cerr << "lab: the server at " << g_host << ":" << g_port << " did not answer " << lab.count_path
              << ": start it (flaky-server), or set CB_SERVER to where it runs" << std::endl;
    std::exit(1);
  }
  return std::atoll(a.body.c_str() + colon + 1);
}

// Whole or not at all: a temporary file renamed over the old one.
void write(const std::string& name, const std::string& text) {
  const std::string path = g_out + "/" + name;
  {
    std::ofstream f(path + ".tmp", std::ios::binary | std::ios::trunc);
    f << text;
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

void write_state(const std::string& name, const BreakerHandle& b) {
  write(name, "{\"state\": \"" + b.state() + "\", \"failures\": " + std::to_string(b.failures()) +
                  ", \"window_size\": " + std::to_string(b.settings().window_size) +
                  ", \"permitted_in_half_open\": " + std::to_string(b.settings().permitted_in_half_open) + "}\n");
}

// One call through the breaker: "refused" (it never reached the server), or the status.
std::string call(BreakerHandle& b, const std::string& path) {
  const std::optional<Permit> permit = b.allow();
  if (!permit) return "refused";
  const Answer a = get(path);
  b.record(classify_answer(a.status), *permit);
  return a.status ? std::to_string(*a.status) : "no-answer";
}

void step(int n, const std::string& title, BreakerHandle& b, const std::string& path, int times) {
  std::string results;
  for (int i = 0; i < times; ++i) results += " " + call(b, path);
  std::cout << "step " << n << ": " << title << ":" << results << " -> " << b.state() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  // --until N: stop after step N, leaving the files as they are then (check them with
  // cb-grade --step N). Without it, all eight steps.
  int last = 8;
  if (argc == 3 && std::string(argv[1]) == "--until" && std::strlen(argv[2]) == 1 && argv[2][0] >= '1' &&
      argv[2][0] <= '8') {
    last = argv[2][0] - '0';
  } else if (argc != 1) {
    std::cerr << "lab: usage: lab [--until N], N a step from 1 to 8" << std::endl;
    return 2;
  }
  const Lab lab = load_lab(argv[0]);
  const char* named = std::getenv("CB_SERVER");
  std::string s = named != nullptr && *named != '\0' ? named : lab.server;  // http://HOST:PORT
  if (s.rfind("http://", 0) == 0) s = s.substr(7);
  if (!s.empty() && s.back() == '/') s.pop_back();
  const auto colon = s.rfind(':');
  g_host = s.substr(0, colon);
  g_port = colon == std::string::npos ? "80" : s.substr(colon + 1);
  if (const char* dir = std::getenv("CB_DIR"); dir != nullptr && *dir != '\0') g_out = dir;
  mkdir(g_out.c_str(), 0755);

  BreakerHandle b(lab.settings);
  std::cout << "step 1: the server at " << g_host << ":" << g_port << ": " << lab.count_path << " -> " << count(lab)
            << " (" << lab.numbers << ")" << std::endl;
  if (last == 1) return 0;
  step(2, std::to_string(lab.fast) + " x " + lab.fast_path, b, lab.fast_path, lab.fast);
  write_state(lab.state_file, b);
  if (last == 2) return 0;
  step(3, std::to_string(lab.burst) + " x " + lab.fail_path, b, lab.fail_path, lab.burst);
  write_state(lab.state_file, b);
  if (last == 3) return 0;

  const long long before = count(lab);
  int blocked = 0;
  double slowest_ms = 0;
  for (int i = 0; i < lab.blocked; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (call(b, lab.fail_path) == "refused") ++blocked;
    slowest_ms =
        std::max(slowest_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const long long after = count(lab);
  char line[160];
  std::snprintf(line, sizeof line, "before=%lld after=%lld blocked=%d max_ms=%.3f", before, after, blocked, slowest_ms);
  write(lab.fastfail_file, std::string(line) + "\n");
  std::cout << "step 4: " << lab.blocked << " x " << lab.fail_path << ": " << line << std::endl;
  if (last == 4) return 0;

  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(b.settings().wait_in_open_ms + 50));
  step(5, "waited the cool-down, 1 x " + lab.fast_path, b, lab.fast_path, 1);
  write_state(lab.state_file, b);
  if (last == 5) return 0;
  int trials = 0;
  while (b.state() != "CLOSED" && trials < lab.trials_max) {
    call(b, lab.fast_path);
    ++trials;
  }
  std::cout << "step 6: " << trials << " x " << lab.fast_path << " -> " << b.state() << std::endl;
  write_state(lab.state_file, b);
  if (last == 6) return 0;

  BreakerHandle fresh(lab.settings);
  step(7, "a new breaker, " + std::to_string(lab.bad) + " x " + lab.bad_path, fresh, lab.bad_path, lab.bad);
  write_state(lab.ignore_file, fresh);
  if (last == 7) return 0;
  std::string log;
  for (const auto& l : b.transitions()) log += l + "\n";
  write(lab.transitions_file, log);
  std::cout << "step 8: " << lab.transitions_file << ": " << b.transitions().size() << " line(s)" << std::endl;
  return 0;
}
