#pragma once
// What a caller gets back when it asks a dependency through a breaker (cb::call, call.h): the
// dependency's real answer, or one of three honest fallbacks: a degraded answer, a cached value,
// or a fast, clear error. Never a silent empty value that looks like an answer: each is a type of
// its own, nothing converts to T, and the caller must say what it does with each (std::visit, or
// the accessors below, which hand out a T only for a real answer).

#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "cb/breaker/time.h"

namespace cb {

template <class T>
struct Answered {
  T value;
};

// A lesser answer, and it says so: "order accepted, payment pending".
template <class T>
struct Degraded {
  T value;
  std::string why;
};

// An earlier real answer, with when it was fresh: "the exchange rate as of 10:02".
template <class T>
struct Cached {
  T value;
  TimePoint as_of;
};

// No answer, at once, and why: better than the same error thirty seconds later.
struct FastError {
  std::string why;
};

template <class T>
using Reply = std::variant<Answered<T>, Degraded<T>, Cached<T>, FastError>;

// The real answer, or nothing: a fallback never comes out of here.
template <class T>
[[nodiscard]] const T* real_answer(const Reply<T>& r) noexcept {
  const auto* a = std::get_if<Answered<T>>(&r);
  return a == nullptr ? nullptr : &a->value;
}

template <class T>
[[nodiscard]] bool is_fallback(const Reply<T>& r) noexcept {
  return !std::holds_alternative<Answered<T>>(r);
}

// "answer", "degraded", "cached", "error"
template <class T>
[[nodiscard]] const char* kind_of(const Reply<T>& r) noexcept {
  switch (r.index()) {
    case 0: return "answer";
    case 1: return "degraded";
    case 2: return "cached";
    default: return "error";
  }
}

// The point of the types, checked where they are defined.
static_assert(!std::is_convertible_v<Reply<int>, int>, "a reply must not pass for a value");
static_assert(!std::is_convertible_v<Degraded<int>, Answered<int>>, "a fallback must not pass for an answer");

}  // namespace cb
