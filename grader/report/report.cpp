#include "cb/grade/report.h"

namespace cb::grade {

const char* to_string(Status s) noexcept {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::Skip: return "skip";
    case Status::Error: return "error";
  }
  return "?";
}

}  // namespace cb::grade
