#pragma once
// cb-grade queue push | work | status | collect: a class graded through a queue on Redis
// Streams by workers on any number of machines (queue.h; docs/SCALE.md).

#include <CLI/CLI.hpp>

#include "cb/sandbox/sandbox.h"
#include "cli_flags.h"
#include "cli_options.h"
#include "modes.h"

namespace cb::grade {

// queue push, work, status and collect, each with its own flags (push and work: the grading flags).
void add_queue_commands(CLI::App& app, Command& c);

int run_queue_push(const QueuePushArgs& o, const Asked& asked);
int run_queue_work(const QueueWorkArgs& o, const Asked& asked, sandbox::Sandbox& sandbox);
int run_queue_status(const QueueStatusArgs& o);
int run_queue_collect(const QueueCollectArgs& o, const GradeOptions& grade);

}  // namespace cb::grade
