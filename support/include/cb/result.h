#pragma once
// Errors as values (exceptions stay at the program's edge). An Error is one line, already
// naming the field or position it is about, so a program can print it as it is.

#include <string>
#include <utility>
#include <variant>

namespace cb {

struct Error {
  std::string message;
};

// E: what a failure carries. Error, a line to print, unless a caller must decide by more than
// its text (whose fault it is, whether to try again): then a type that holds that as a value.
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  [[nodiscard]] const E& error() const& { return std::get<1>(v_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, E> v_;
};

// Result<void>: success carries nothing.
template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  [[nodiscard]] const E& error() const& { return error_; }

 private:
  E error_;
  bool ok_ = true;
};

}  // namespace cb

// Propagates an error to the caller: `CB_TRY(x, parse())` names the result `x` (a Result, used
// as `*x`); CB_TRY_VOID for a Result<void>.
#define CB_TRY(var, expr) \
  auto var = (expr);      \
  if (!var) return var.error();
#define CB_TRY_VOID(expr)                  \
  if (auto cb_try_r = (expr); !cb_try_r) { \
    return cb_try_r.error();               \
  }
