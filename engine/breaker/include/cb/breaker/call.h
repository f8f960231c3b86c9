#pragma once
// cb::call: one call through a breaker, start to finish. It asks the breaker, runs the callable,
// times it on the breaker's clock, classifies what came back, records it, and hands the caller a
// Reply<T> (reply.h): the dependency's answer, or what the fallback made of why there is none.
//
//   cb::Reply<Quote> q = cb::call(*breaker,
//       [&] { return pricing.quote(item); },                                  // the dependency
//       [](const Quote& q) { return q.ok ? cb::Verdict::Success : cb::Verdict::Failure; },
//       cb::fallbacks{
//           [&](const cb::Refused&) -> cb::Reply<Quote> { return cb::Cached<Quote>{last, last_at}; },
//           [](const cb::Threw&) -> cb::Reply<Quote> { return cb::FastError{"pricing threw"}; }});
//
// The fallback is called with one of three causes, and says by its overloads which it takes:
// - Refused: the breaker said no and nothing was called. Every fallback must take this one.
// - Failed<T>: the callable answered and classify said Failure. Taken only if the fallback
//   accepts it; otherwise the caller gets that answer as Answered (it is still what the
//   dependency said: a 503 response is data), and the breaker has counted the failure either way.
// - Threw: the callable threw. Recorded as a failure; taken only if the fallback accepts it,
//   otherwise the exception goes on to the caller as it was.
// If classify itself throws, the permit is given back (release()) and its exception goes on.
// Nothing is retried here: a retry belongs outside the breaker, where each try is its own call.

#include <exception>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "cb/breaker/breaker.h"
#include "cb/breaker/reply.h"

namespace cb {

struct Refused {
  Decision decision;  // which refusal: OPEN, a full HALF_OPEN, forced open
};

template <class T>
struct Failed {
  T value;           // what the dependency answered
  Duration elapsed;  // how long it took
};

struct Threw {
  std::exception_ptr error;  // rethrow it to look inside
  Duration elapsed;
};

// Several lambdas as one fallback: cb::fallbacks{[](const cb::Refused&) {...}, [](const cb::Threw&) {...}}.
template <class... Fs>
struct fallbacks : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
fallbacks(Fs...) -> fallbacks<Fs...>;

template <class Fn, class Classify, class Fallback>
[[nodiscard]] auto call(CircuitBreaker& breaker, Fn&& fn, Classify&& classify, Fallback&& fallback)
    -> Reply<std::remove_cvref_t<std::invoke_result_t<Fn&>>> {
  using T = std::remove_cvref_t<std::invoke_result_t<Fn&>>;
  using R = Reply<T>;
  static_assert(!std::is_void_v<T>,
                "cb::call needs a callable that returns its answer (a Reply<void> has nothing to hold)");
  static_assert(std::is_invocable_r_v<Verdict, Classify&, const T&>, "classify must be callable as Verdict(const T&)");
  static_assert(std::is_invocable_r_v<R, Fallback&, const Refused&>,
                "the fallback must take a refusal: Reply<T>(const cb::Refused&)");

  const Admission admission = breaker.try_acquire();
  if (!admission) return std::invoke(fallback, Refused{admission.decision});

  // Until an outcome is recorded, anything that throws gives the permit back: a half-open slot
  // must not stay taken by a call that will never report.
  struct Permit {
    CircuitBreaker& breaker;
    Ticket ticket;
    bool settled = false;
    ~Permit() {
      if (!settled) breaker.release(ticket);
    }
  } permit{breaker, admission.ticket};

  const Clock& clock = breaker.clock();
  const TimePoint start = clock.now();
  std::optional<T> value;
  try {
    value.emplace(std::invoke(fn));
  } catch (...) {
    const Duration elapsed = clock.now() - start;
    permit.settled = true;
    (void)breaker.record(admission.ticket, {Verdict::Failure, elapsed});
    if constexpr (std::is_invocable_r_v<R, Fallback&, const Threw&>) {
      return std::invoke(fallback, Threw{std::current_exception(), elapsed});
    } else {
      throw;
    }
  }
  const Duration elapsed = clock.now() - start;
  const Verdict verdict = std::invoke(classify, std::as_const(*value));
  permit.settled = true;
  (void)breaker.record(admission.ticket, {verdict, elapsed});
  if constexpr (std::is_invocable_r_v<R, Fallback&, Failed<T>&&>) {
    if (verdict == Verdict::Failure) return std::invoke(fallback, Failed<T>{std::move(*value), elapsed});
  }
  return Answered<T>{std::move(*value)};
}

}  // namespace cb
