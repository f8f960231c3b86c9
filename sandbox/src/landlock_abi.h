#pragma once
// Landlock's kernel interface, written out here: the system's <linux/landlock.h> may be older
// than the kernel the grader runs on (Debian 12's knows ABI 3; the network rules are ABI 4, the
// signal scope ABI 6). These are the kernel's stable numbers.

#include <cstdint>

namespace cb::sandbox::landlock_abi {

inline constexpr long kCreateRuleset = 444;
inline constexpr long kAddRule = 445;
inline constexpr long kRestrictSelf = 446;
inline constexpr unsigned kCreateRulesetVersion = 1U << 0;

inline constexpr int kRulePathBeneath = 1;
inline constexpr int kRuleNetPort = 2;

struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
};

struct __attribute__((packed)) PathBeneath {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

struct NetPort {
  std::uint64_t allowed_access;
  std::uint64_t port;
};

// File system rights, and the ABI that brought them.
inline constexpr std::uint64_t kExecute = 1ULL << 0;
inline constexpr std::uint64_t kWriteFile = 1ULL << 1;
inline constexpr std::uint64_t kReadFile = 1ULL << 2;
inline constexpr std::uint64_t kReadDir = 1ULL << 3;
inline constexpr std::uint64_t kRemoveDir = 1ULL << 4;
inline constexpr std::uint64_t kRemoveFile = 1ULL << 5;
inline constexpr std::uint64_t kMakeChar = 1ULL << 6;
inline constexpr std::uint64_t kMakeDir = 1ULL << 7;
inline constexpr std::uint64_t kMakeReg = 1ULL << 8;
inline constexpr std::uint64_t kMakeSock = 1ULL << 9;
inline constexpr std::uint64_t kMakeFifo = 1ULL << 10;
inline constexpr std::uint64_t kMakeBlock = 1ULL << 11;
inline constexpr std::uint64_t kMakeSym = 1ULL << 12;
inline constexpr std::uint64_t kRefer = 1ULL << 13;     // ABI 2
inline constexpr std::uint64_t kTruncate = 1ULL << 14;  // ABI 3
inline constexpr std::uint64_t kIoctlDev = 1ULL << 15;  // ABI 5

inline constexpr std::uint64_t kBindTcp = 1ULL << 0;     // ABI 4
inline constexpr std::uint64_t kConnectTcp = 1ULL << 1;  // ABI 4

inline constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
inline constexpr std::uint64_t kScopeSignal = 1ULL << 1;        // ABI 6

// Every file system right the given ABI knows.
constexpr std::uint64_t fs_rights(int abi) {
  std::uint64_t all = (1ULL << 13) - 1;
  if (abi >= 2) all |= kRefer;
  if (abi >= 3) all |= kTruncate;
  if (abi >= 5) all |= kIoctlDev;
  return all;
}

}  // namespace cb::sandbox::landlock_abi
