#include "process.h"

#include <fcntl.h>
#include <poll.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace cb::testing {
namespace {

using Clock = std::chrono::steady_clock;

void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

int remaining_ms(Clock::time_point until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return static_cast<int>(std::max<long>(left, 0));
}

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int in_fd, int out_fd,
            int err_fd, int fd3 = -1) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& e : env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    if (in_fd >= 0) ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (fd3 >= 0) ::dup2(fd3, 3);
    if (fd3 == 3) ::fcntl(3, F_SETFD, 0);  // dup2 onto itself would leave it close-on-exec
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

// Writes all of `text` to `fd` (a child's stdin) and closes it; a child that stopped reading
// ends the write early.
void write_all_and_close(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

int decode(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& env) : Process(argv, env, -1) {}

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& env, int ready_fd) {
  int in[2] = {-1, -1};
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  if (ready_fd >= 0 && ::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_ = spawn(argv, env, in[0], out[1], err[1], ready_fd);
  if (in[0] >= 0) ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
}

Process::~Process() {
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
  if (in_ >= 0) ::close(in_);
  ::close(out_);
  ::close(err_);
}

void Process::send(const std::string& text) {
  // A child that died before reading gets an EPIPE here, not the test a SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  if (in_ >= 0) write_all_and_close(in_, text);
  in_ = -1;
}

std::optional<std::string> Process::read_line(std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  for (;;) {
    if (const auto nl = out_buf_.find('\n'); nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, remaining_ms(until)) <= 0) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    out_buf_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string Process::read_rest_of_stdout() {
  std::string rest = std::move(out_buf_);
  out_buf_.clear();
  return rest + drain(out_);
}

std::string Process::read_all_stderr() { return drain(err_); }

void Process::signal(int sig) const { ::kill(pid_, sig); }

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  if (reaped_) return decode(status_);
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return decode(status_);
    }
    // Polling a child's exit; the bound above is what the test asserts, not this interval.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, &status_, 0);
  reaped_ = true;
  return std::nullopt;
}

Ran run(const std::vector<std::string>& argv, const std::string& stdin_text, const std::vector<std::string>& env,
        std::chrono::milliseconds timeout) {
  int in[2];
  int out[2];
  int err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  for (int fd : {in[1], out[0], err[0]}) set_cloexec(fd);
  const pid_t pid = spawn(argv, env, in[0], out[1], err[1]);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  std::thread feeder([&] { write_all_and_close(in[1], stdin_text); });
  // A program that outlives its bound is killed (with its process group), which ends the
  // reads below.
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    const auto until = Clock::now() + timeout;
    while (!finished.load() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!finished.load()) ::kill(-pid, SIGKILL);
  });
  std::string err_text;
  std::thread err_reader([&] { err_text = drain(err[0]); });
  std::string out_text = drain(out[0]);
  err_reader.join();
  feeder.join();
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  finished.store(true);
  watchdog.join();
  return {decode(status), std::move(out_text), std::move(err_text)};
}

std::vector<Ran> run_all(const std::vector<std::vector<std::string>>& argvs, std::size_t at_once,
                         std::chrono::milliseconds timeout) {
  std::vector<Ran> out(argvs.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < std::min(at_once, argvs.size()); ++w)
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < argvs.size(); i = next++) out[i] = run(argvs[i], {}, {}, timeout);
    });
  for (auto& t : workers) t.join();
  return out;
}

BusyMachine::BusyMachine() {
  for (int i = 0; i < 2; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::execl("/usr/bin/yes", "yes", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid > 0) pids_.push_back(pid);
  }
}

BusyMachine::~BusyMachine() {
  for (pid_t pid : pids_) ::kill(pid, SIGKILL);  // not yet reaped: the pid is still theirs
  for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
}

std::vector<std::pair<pid_t, std::string>> process_command_lines() {
  std::vector<std::pair<pid_t, std::string>> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.empty() || name[0] < '1' || name[0] > '9') continue;
    std::string cmd;
    try {
      std::ifstream f(e.path() / "cmdline");
      cmd.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure&) {
      continue;
    }
    out.emplace_back(static_cast<pid_t>(std::stoi(name)), std::move(cmd));
  }
  return out;
}

namespace {

// The parent of `pid`, from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces and
// parentheses, so the fields are read after its last ')'); none once it has ended.
std::optional<pid_t> parent_of(pid_t pid) {
  std::string stat;
  try {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    stat.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    return std::nullopt;
  }
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  pid_t ppid = 0;
  if (!(rest >> state >> ppid)) return std::nullopt;
  return ppid;
}

}  // namespace

std::vector<std::pair<pid_t, std::string>> process_tree_command_lines(pid_t root) {
  auto all = process_command_lines();
  std::map<pid_t, pid_t> parent;
  for (const auto& entry : all)
    if (const auto p = parent_of(entry.first)) parent[entry.first] = *p;
  const auto in_tree = [&](pid_t pid) {
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
      if (pid == root) return true;
      const auto up = parent.find(pid);
      if (up == parent.end()) return false;
      pid = up->second;
    }
    return false;
  };
  std::erase_if(all, [&](const auto& entry) { return !in_tree(entry.first); });
  return all;
}

}  // namespace cb::testing
