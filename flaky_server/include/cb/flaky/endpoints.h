#pragma once
// The flaky server's address and paths, written once: the server routes by them, and every
// program that calls it or reads its record (the lab, the scenes, the grader) names them from
// here. scenarios/lab.json names the same paths as data; a test holds the C++ sources to this file.

#include <string>
#include <string_view>

namespace cb::flaky {

// Where the lab expects it when nobody says otherwise.
inline constexpr std::string_view kDefaultHost = "127.0.0.1";
inline constexpr int kDefaultPort = 8110;
// The two above as "127.0.0.1:8110" and as "http://127.0.0.1:8110".
[[nodiscard]] inline std::string default_address() {
  return std::string(kDefaultHost) + ":" + std::to_string(kDefaultPort);
}
[[nodiscard]] inline std::string default_url() { return "http://" + default_address(); }

namespace path {
inline constexpr std::string_view kFast = "/fast";            // 200 at once
inline constexpr std::string_view kAlways500 = "/always500";  // 500 at once
inline constexpr std::string_view kBad = "/bad";              // 400: the caller's mistake
inline constexpr std::string_view kCount = "/count";          // {"count": N}: lab requests so far
inline constexpr std::string_view kSlow = "/slow";            // 200 after ?ms= (or the default)
inline constexpr std::string_view kHang = "/hang";            // never answers
inline constexpr std::string_view kToggle = "/toggle";        // healthy and failing by turns
inline constexpr std::string_view kReset = "/reset";          // the connection reset
inline constexpr std::string_view kGarbage = "/garbage";      // bytes that are not HTTP
inline constexpr std::string_view kStatus = "/status/";       // /status/NNN answers NNN
// The grader's and the lab's, never a program's under test: the record, a reset, a health check.
inline constexpr std::string_view kAdmin = "/admin/";
inline constexpr std::string_view kAdminRecord = "/admin/record";
inline constexpr std::string_view kAdminReset = "/admin/reset";
inline constexpr std::string_view kAdminHealth = "/admin/health";
}  // namespace path

}  // namespace cb::flaky
