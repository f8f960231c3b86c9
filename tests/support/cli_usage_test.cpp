// A refused command line is one line: the program (and its subcommand), what was wrong, the
// nearest flag when one was mistyped, and where help is.
#include "cb/cli_usage.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

struct Parsed {
  bool ok = true;
  std::string message;
};

// A program with one subcommand, as cb-lab and cb-grade are made.
Parsed parse(std::vector<std::string> args) {
  CLI::App app{"a test program"};
  std::string dir;
  int port = 0;
  app.add_option("--dir", dir);
  app.add_option("--port", port);
  CLI::App* run = app.add_subcommand("run", "run it");
  double every = 0;
  run->add_option("--every", every);
  run->add_flag("--dry-run");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return {false, cb::usage_error(app, e, "prog", args)};
  }
  return {};
}

TEST_CASE("usage error: a mistyped flag is named with the nearest one the program knows") {
  const Parsed p = parse({"--dri", "x"});
  REQUIRE_FALSE(p.ok);
  CHECK(p.message == "prog: unknown flag --dri (did you mean --dir?); see prog --help");
}

TEST_CASE("usage error: a subcommand's flags are its own, and its name is in the line") {
  const Parsed p = parse({"run", "--dry-rn"});
  REQUIRE_FALSE(p.ok);
  CHECK(p.message == "prog run: unknown flag --dry-rn (did you mean --dry-run?); see prog run --help");
}

TEST_CASE("usage error: a flag nothing is near is named alone, and a value of the wrong kind says what it takes") {
  const Parsed far = parse({"--zzzzzzzz"});
  REQUIRE_FALSE(far.ok);
  CHECK(far.message == "prog: unknown flag --zzzzzzzz; see prog --help");
  const Parsed word = parse({"--port", "x"});
  REQUIRE_FALSE(word.ok);
  CHECK(word.message == "prog: --port: 'x' is not a whole number; see prog --help");
  const Parsed fine = parse({"--port", "80", "run", "--every", "0.5"});
  CHECK(fine.ok);
  CHECK(fine.message.empty());
}

TEST_CASE("nearest flag: within a third of the typed length, else none") {
  CLI::App app;
  app.add_flag("--conformance");
  app.add_flag("--course-key");
  CHECK(cb::nearest_flag(app, "--conformnce") == "--conformance");
  CHECK(cb::nearest_flag(app, "--course-ky") == "--course-key");
  CHECK(cb::nearest_flag(app, "--x").empty());
}

}  // namespace
