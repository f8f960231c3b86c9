// A file of the record layer that includes a header of the report layer, above it. It is built
// only by the test "layers: ..." (tests/CMakeLists.txt), with cb::grade_record's include path
// alone, and must not compile: the layers are the build's, not a convention.
#include "cb/grade/report.h"
