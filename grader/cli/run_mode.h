#pragma once
// The mode the command line named, run on its own value: its flags read and checked once, a
// sandbox made for the modes that run programs, and its function called (single_command.h,
// class_command.h, queue_command.h). Compiled into each cb-grade (with the queue, or the static
// one without).

#include <CLI/CLI.hpp>

#include "modes.h"

namespace cb::grade {

// `mode`: the subcommand parsed (mode_app()), whose flags were given.
[[nodiscard]] int run_mode(const CLI::App& mode, const Command& c);

}  // namespace cb::grade
