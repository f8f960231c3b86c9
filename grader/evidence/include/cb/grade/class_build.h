#pragma once
// What a class shares: the harness of a compiled starter kit, built once for the whole class and
// copied into each box, so a student's build compiles their breaker and little else. Today that is
// the C++ kit's lab.cpp and replay.cpp, which reach the breaker through harness.hpp alone.
//
// It is built from the kit as the grader carries it (cb/kit_files.h), in a box of its own, never
// from a submission; each box gets a copy of its own in `.cb-class/<kit>/` before any of its
// programs runs. The kit's build uses it only where its key (the harness's sources, the compiler,
// its flags) is the folder's own, so a student who changed the harness builds their own. Nothing a
// box does reaches another box: what one program writes there is gone with its box.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cb/sandbox/sandbox.h"
#include "cb/thread_safety.h"

namespace cb::grade {

class ClassBuild {
 public:
  // Gives the box's copy the class's harness when the folder holds a kit's (its harness.hpp),
  // building it first, once. Nothing is given without a copy (--sandbox none), or where the folder
  // has a `.cb-class` of its own. A build that failed is not tried again (failure() says why),
  // and the boxes build their own.
  void give(sandbox::Sandbox& sandbox, const sandbox::Box& box) CB_EXCLUDES(mu_);

  [[nodiscard]] int builds() const CB_EXCLUDES(mu_);  // how often a harness was built (once, or 0)
  [[nodiscard]] std::string failure() const CB_EXCLUDES(mu_);

 private:
  void build(sandbox::Sandbox& sandbox) CB_REQUIRES(mu_);

  mutable Mutex mu_;
  bool tried_ CB_GUARDED_BY(mu_) = false;
  int builds_ CB_GUARDED_BY(mu_) = 0;
  std::string failure_ CB_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, std::string>> files_ CB_GUARDED_BY(mu_);  // name, bytes
};

}  // namespace cb::grade
