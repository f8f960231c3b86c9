// The title `ps` shows for this process. A daemon forked from a command without an exec would
// show the command that started it ("cb-lab step 1") for as long as it runs: one who looks for
// what runs on the machine would take it for a step that never ended.
#pragma once

#include <string_view>

namespace cb {

// Called once by main, before any other use of argv: the bytes of the arguments are the room a
// title has (it is cut to fit, whole words kept).
void remember_arguments(int argc, char** argv) noexcept;

// Sets the title `ps -o args` shows and the name `ps -o comm` and `top` show (its first 15
// bytes). Without remember_arguments, only the name.
void set_process_title(std::string_view title) noexcept;

}  // namespace cb
