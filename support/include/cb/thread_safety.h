#pragma once
// Which lock guards what, said to the compiler: Clang's thread-safety analysis
// (-Wthread-safety) checks every access against these annotations, and CI builds the engine
// with it as an error (scripts/thread-safety). Other compilers read the macros as nothing.
//
// std::mutex carries no annotations in libstdc++, so the engine locks a cb::Mutex, the same
// mutex with its capability stated, through cb::MutexLock.

#include <mutex>

#if defined(__clang__)
#define CB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CB_THREAD_ANNOTATION(x)
#endif

#define CB_CAPABILITY(name) CB_THREAD_ANNOTATION(capability(name))
#define CB_SCOPED_CAPABILITY CB_THREAD_ANNOTATION(scoped_lockable)
#define CB_GUARDED_BY(mu) CB_THREAD_ANNOTATION(guarded_by(mu))
#define CB_PT_GUARDED_BY(mu) CB_THREAD_ANNOTATION(pt_guarded_by(mu))
#define CB_REQUIRES(...) CB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define CB_EXCLUDES(...) CB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define CB_ACQUIRE(...) CB_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define CB_RELEASE(...) CB_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define CB_RETURN_CAPABILITY(mu) CB_THREAD_ANNOTATION(lock_returned(mu))
// Only where the analysis cannot follow and the reason is written beside it.
#define CB_NO_THREAD_SAFETY_ANALYSIS CB_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace cb {

class CB_CAPABILITY("mutex") Mutex {
 public:
  void lock() CB_ACQUIRE() { mu_.lock(); }
  void unlock() CB_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` from construction to destruction, or until unlock(); lock() takes it again (a
// std::condition_variable_any waits on one).
class CB_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) CB_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() CB_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  void unlock() CB_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void lock() CB_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

}  // namespace cb
