#pragma once
// A check of the lab, written once where its body is, as check50 keeps a check's body, title and
// dependency together: its id, when it runs, its title (a template the lab's numbers fill:
// {window}, {state_file}, ...), its body, and what it needs, the checks it stands on named as
// references the compiler checks. Each step's file (step1_server.cpp ... step8_log.cpp) defines
// its checks beside their bodies and lists them, in the order they run, in its table;
// catalogue.cpp lists the steps. Adding a check is one definition and one table entry in its
// step's file.

#include <array>
#include <span>
#include <string>
#include <string_view>

#include "cb/grade/report.h"

namespace cb::grade {

struct Inputs;  // what the lab's bodies judge (the spec, the record's reading, the files)
struct Prerequisites;

// The one verdict a check's body gives.
class CheckVerdict {
 public:
  void pass(nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  // A pass that must say what it stood on (the benefit of a doubt the record cannot settle).
  void pass_noting(std::string note, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  void fail(std::string message, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  void skip(std::string reason);
  // Skipped because what it judges is absent (no record): its dependants are skipped for the same
  // reason, in the same words, rather than for standing on a check that did not pass.
  void skip_absent(std::string reason);
  // pass or fail on `ok`; `message` is only kept on failure.
  void expect(bool ok, const std::string& message, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);

 private:
  friend StepReport check_step(int, bool, const Inputs&, const Prerequisites&, double);
  void set(Status status, std::string message, nlohmann::json expected, nlohmann::json actual);
  bool reported_ = false;
  bool twice_ = false;
  bool absent_ = false;
  Status status_ = Status::Skip;
  std::string message_;
  nlohmann::json expected_, actual_;
};

// A check's body: it judges, and says so in `v`. `just_after` is true under --step N.
using CheckBody = void (*)(CheckVerdict& v, const Inputs& in, bool just_after);

// When a check applies: to a finished run, right after its step (--step N, a student checking as
// they go), or to both.
enum class When { Finished, JustAfter, Always };

// One of the lab's files, by its role (the spec names it: state.json, ...).
enum class FileRole { None, State, Ignore, Fastfail, Transitions };
[[nodiscard]] std::string_view role_name(FileRole role) noexcept;  // "state", "ignore", ...

struct CheckDef;
// What a check needs before its body may run, asked in its order: the first unmet one is why it
// is skipped.
struct Need {
  enum class Kind { None, Check, Server, Record, Numbers, File };
  Kind kind = Kind::None;
  const CheckDef* check = nullptr;  // Check: one listed before it in its step
  FileRole file = FileRole::None;   // File: parsed, whatever step judges its contract
};
inline constexpr Need kServer{Need::Kind::Server};    // a server's record, whatever it holds
inline constexpr Need kRecord{Need::Kind::Record};    // a record of the program's one run
inline constexpr Need kNumbers{Need::Kind::Numbers};  // a run on the numbers it is graded on
[[nodiscard]] constexpr Need after(const CheckDef& check) { return {Need::Kind::Check, &check}; }
[[nodiscard]] constexpr Need file(FileRole role) { return {Need::Kind::File, nullptr, role}; }

struct CheckDef {
  std::string_view id;  // "s3.trip": its step, and its name
  When when = When::Always;
  std::string_view title;
  CheckBody body = nullptr;  // null: a file's contract (`contract`), judged by contract_check()
  std::array<Need, 4> needs{};
  FileRole contract = FileRole::None;
  bool on_server = false;  // judged on the server itself, with or without a record (s1.server)
};

// Step `step`'s checks, in the order they run (empty past the lab's steps).
[[nodiscard]] std::span<const CheckDef* const> checks_of_step(int step);
// The check of that id, or null.
[[nodiscard]] const CheckDef* find_check(std::string_view id);
// Whether a check stands on the server's record, itself or through a check it needs.
[[nodiscard]] bool needs_server(const CheckDef& check);

// Each step's table, in its file.
[[nodiscard]] std::span<const CheckDef* const> step1_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step2_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step3_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step4_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step5_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step6_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step7_checks() noexcept;
[[nodiscard]] std::span<const CheckDef* const> step8_checks() noexcept;

// A check added to a step for as long as this lives, after the step's own (a test of the
// catalogue's machinery: it runs, its dependants skip, it is listed). Not for the lab's checks.
class ExtraCheck {
 public:
  ExtraCheck(int step, const CheckDef& check);
  ~ExtraCheck();
  ExtraCheck(const ExtraCheck&) = delete;
  ExtraCheck& operator=(const ExtraCheck&) = delete;

 private:
  int step_;
  const CheckDef* check_;
};

}  // namespace cb::grade
