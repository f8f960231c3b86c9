#include "cb/cli_usage.h"

#include <algorithm>
#include <numeric>

namespace cb {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The subcommand given on the line, if any, the deepest ("queue push"): its flags are the ones the
// person was typing. Each word that is not a flag names a subcommand of the one before, or ends it.
const CLI::App* given_subcommand(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* at = &app;
  for (const auto& arg : args) {
    if (arg.empty() || arg[0] == '-') continue;
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : at->get_subcommands({}))
      if (sub->get_name() == arg) next = sub;
    if (next == nullptr) break;
    at = next;
  }
  return at == &app ? nullptr : at;
}

// The subcommand's name as typed after the program's ("queue push").
std::string command_words(const CLI::App& app, const CLI::App* sub) {
  std::string words;
  for (; sub != nullptr && sub != &app; sub = sub->get_parent()) words.insert(0, " " + sub->get_name());
  return words;
}

bool is_known_flag(const CLI::App& app, std::string_view flag) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames())
      if (flag == "--" + name) return true;
    for (const auto& name : opt->get_snames())
      if (flag == "-" + name) return true;
  }
  return false;
}

std::string_view flag_name(std::string_view arg) { return arg.substr(0, arg.find('=')); }

// The program and its subcommands that take `flag`, as typed ("cb-grade", "cb-grade class").
void commands_taking(const CLI::App& app, const CLI::App& at, std::string_view flag, const std::string& name,
                     std::vector<std::string>& out) {
  if (is_known_flag(at, flag)) out.push_back(&at == &app ? name + " itself" : name + command_words(app, &at));
  for (const CLI::App* sub : at.get_subcommands({}))
    if (!sub->get_name().empty()) commands_taking(app, *sub, flag, name, out);
}

// "a, b and c"
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

// "Could not convert: --port = x" said as what the flag takes.
std::string conversion(const CLI::App& app, const std::string& message) {
  constexpr std::string_view kHead = "Could not convert: ";
  const auto eq = message.find(" = ");
  if (message.rfind(kHead, 0) != 0 || eq == std::string::npos) return message;
  const std::string flag = message.substr(kHead.size(), eq - kHead.size());
  const std::string value = message.substr(eq + 3);
  std::string takes = "a value of another kind";
  for (const CLI::Option* opt : app.get_options())
    if (opt->check_name(flag)) {
      const std::string type = opt->get_type_name();
      if (type == "INT" || type == "UINT")
        takes = "a whole number";
      else if (type == "FLOAT")
        takes = "a number";
    }
  return flag + ": '" + value + "' is not " + takes;
}

}  // namespace

std::string nearest_flag(const CLI::App& app, std::string_view typed) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const CLI::Option* opt : app.get_options())
    for (const auto& name : opt->get_lnames()) {
      const std::string flag = "--" + name;
      const std::size_t d = edit_distance(typed, flag);
      if (d < best_distance) {
        best_distance = d;
        best = flag;
      }
    }
  return best;
}

std::string usage_error(const CLI::App& app, const CLI::ParseError& error, std::string_view program,
                        const std::vector<std::string>& args) {
  std::string name(program);
  const CLI::App* flags = &app;
  if (const CLI::App* sub = given_subcommand(app, args)) {
    name += command_words(app, sub);
    flags = sub;
  }
  std::string what = error.what();
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) what = conversion(*flags, what);
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // The first thing typed that no flag of this program is; CLI11 lists them backwards.
    what.clear();
    for (const auto& arg : args) {
      if (arg.size() < 2 || arg[0] != '-' || arg == "--") continue;
      const std::string_view flag = flag_name(arg);
      if (is_known_flag(*flags, flag)) continue;
      // A flag of another command of the program's: say which take it.
      std::vector<std::string> takers;
      commands_taking(app, app, flag, std::string(program), takers);
      if (!takers.empty()) {
        what = std::string(flag) + " is not one of its flags; " + listed(takers) +
               (takers.size() == 1 ? " takes it" : " take it");
        break;
      }
      what = "unknown flag " + std::string(flag);
      if (const std::string near = nearest_flag(*flags, flag); !near.empty()) what += " (did you mean " + near + "?)";
      break;
    }
    if (what.empty()) {
      const std::string list = error.what();
      const auto colon = list.find(": ");
      what = "unexpected argument" + (colon == std::string::npos ? std::string{} : list.substr(colon));
    }
  }
  return name + ": " + what + "; see " + name + " --help";
}

}  // namespace cb
