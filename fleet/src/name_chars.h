#pragma once
// Internal: the characters a fleet's breaker name and an instance name may hold. A name goes
// inside the keys' hash tag ({cb:NAME}): a brace would end the tag, and a space splits nothing
// in RESP but would in every tool a person reads the keys with.

namespace cb::fleet {

[[nodiscard]] constexpr bool name_char(char ch) noexcept {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
         ch == '.' || ch == ':';
}

}  // namespace cb::fleet
