#pragma once
// Force-included (-include) into the test files whose cases are fast and touch no other process:
// every case after it is in doctest's suite "unit", which doctest_discover_tests turns into the
// CTest label `unit` (`ctest --preset dev -L unit`: the loop to work in, under a minute).
#include <doctest/doctest.h>

TEST_SUITE_BEGIN("unit");
