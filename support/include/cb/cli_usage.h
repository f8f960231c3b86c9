// A command line the parser refused, said as one line: the program, what was wrong, and the
// nearest flag it knows when a flag was mistyped. CLI11's own answer is two lines without the
// program's name ("The following arguments were not expected: out --dri" / "Run with --help").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

// `program` names the program as a person typed it ("cb-grade"); a subcommand given on the line
// is added ("cb-lab run") and its own flags are the ones suggested. Ends without a newline.
[[nodiscard]] std::string usage_error(const CLI::App& app, const CLI::ParseError& error, std::string_view program,
                                      const std::vector<std::string>& args);

// The known flag nearest to `typed` ("--dri" -> "--dir"), or empty when none is near enough to
// be what was meant.
[[nodiscard]] std::string nearest_flag(const CLI::App& app, std::string_view typed);

}  // namespace cb
