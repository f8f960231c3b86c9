#pragma once
// The class at a glance: REPORTS/index.html, one self-contained page over a batch's rows (the
// score distribution, each step's and check's pass rate, the failing checks and conformance
// rules ranked by how many students they hit, what could not be graded and why, runs on another
// student's numbers, and every student in a sortable table linking to their own report). Written
// by --batch --reports, and again by --resume and --regrade.

#include <string>
#include <vector>

#include "cb/grade/batch.h"

namespace cb::grade {

struct ClassPage {
  std::string title;  // what the class is called: the batch's folder
  std::vector<BatchRow> rows;
};

[[nodiscard]] std::string class_page_html(const ClassPage& page);

// Writes DIR/index.html atomically.
[[nodiscard]] Result<void> write_class_page(const std::string& dir, const ClassPage& page);

}  // namespace cb::grade
