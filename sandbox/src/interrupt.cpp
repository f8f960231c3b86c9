#include "cb/sandbox/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "cb/sandbox/box.h"
#include "children.h"

namespace cb::sandbox {
namespace {
std::atomic<bool> g_stopping{false};
std::atomic<std::thread::id> g_stopper{};
std::mutex g_words_mu;
std::function<void()> g_last_words;  // guarded by g_words_mu
}  // namespace

void set_last_words(std::function<void()> words) {
  const std::lock_guard lock(g_words_mu);
  g_last_words = std::move(words);
}

void wait_if_stopping() noexcept {
  if (!g_stopping.load(std::memory_order_acquire) || std::this_thread::get_id() == g_stopper.load()) return;
  for (;;) ::pause();  // the stopping thread ends the process
}

void end_everything() noexcept {
  // The programs first (their namespaces, process groups, and what they left with the grader
  // as their subreaper), then the boxes, whose teardown ends what is left of their uid or group.
  children::end_all();
  live_boxes::tear_down_all();
}

void stop_cleanly_on_signals(const char* program) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, program] {
    int sig = 0;
    while (::sigwait(&set, &sig) != 0) {
    }
    g_stopper.store(std::this_thread::get_id());
    g_stopping.store(true, std::memory_order_release);
    std::fprintf(stderr, "%s: interrupted (%s): ending the graded programs and removing their boxes\n", program,
                 ::strsignal(sig));
    end_everything();
    {
      const std::lock_guard lock(g_words_mu);
      if (g_last_words) g_last_words();
    }
    std::fflush(nullptr);
    ::_exit(128 + sig);
  }).detach();
}

}  // namespace cb::sandbox
