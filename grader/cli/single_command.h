#pragma once
// cb-grade for one submission: its files in --dir, on the evidence of --run (a fresh server in its
// box), --record (a saved record), --server or the default address (a live server), with
// --conformance beside or alone; gathered, judged and written as -o and --reports say.

#include "cb/sandbox/sandbox.h"
#include "cli_flags.h"
#include "cli_options.h"

namespace cb::grade {

int run_one(const OneArgs& o, Asked asked, sandbox::Sandbox& sandbox);

}  // namespace cb::grade
