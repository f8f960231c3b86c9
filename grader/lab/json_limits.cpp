#include "cb/grade/json_limits.h"

#include <set>
#include <vector>

namespace cb::grade {
namespace {

// Counts nesting and nothing else; stops at the first level too deep.
class DepthProbe final : public nlohmann::json_sax<nlohmann::json> {
 public:
  DepthProbe(int max, std::string_view text) : max_(max), text_(text) {}
  bool too_deep = false;
  std::string syntax_error;
  std::string duplicate;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return enter();
  }
  // A key twice in one object: nlohmann keeps the last, a student's file may mean the first, so
  // neither is believed.
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) {  // the parser calls key() only inside an object
      duplicate = k;
      return false;
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    return leave();
  }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    syntax_error = ex.what();
    if (const auto at = syntax_error.find(" at line "); at != std::string::npos)
      syntax_error = syntax_error.substr(at + 4);
    // The library's own words are not a message for a student: "[json.exception...] number
    // overflow parsing '1e400'" says the number is out of range, so say that.
    if (const auto over = syntax_error.find("number overflow parsing "); over != std::string::npos)
      syntax_error = "the number " + syntax_error.substr(over + 24, 42) + " is too large for any field of a lab file";
    else if (syntax_error.rfind("[json.exception", 0) == 0 && syntax_error.find("] ") != std::string::npos)
      syntax_error = syntax_error.substr(syntax_error.find("] ") + 2);
    if (const std::string hint = python_hint(position); !hint.empty())
      syntax_error = syntax_error.substr(0, syntax_error.find(": ")) + ": " + hint;
    return false;
  }

 private:
  bool enter() {
    if (++depth_ > max_) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }
  // The commonest broken lab file is a Python dict written with str() or print(): the parser's
  // "invalid literal; last read: '{''" does not say so.
  std::string python_hint(std::size_t position) const {
    const std::size_t at = position == 0 ? 0 : position - 1;
    if (at < text_.size() && text_[at] == '\'')
      return "a single quote where JSON has a double quote: this looks like a Python dict written with str() or "
             "print(); write the file with json.dump";
    for (const char* word : {"True", "False", "None"})
      if (at < text_.size() && text_.substr(at).rfind(word, 0) == 0)
        return std::string("Python's ") + word + " where JSON has true, false or null: write the file with json.dump";
    return {};
  }

  int max_;
  std::string_view text_;
  int depth_ = 0;
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

Result<void> check_bounded_json(std::string_view text, int max_depth) {
  DepthProbe probe(max_depth, text);
  if (!nlohmann::json::sax_parse(text, &probe, nlohmann::json::input_format_t::json, true)) {
    if (probe.too_deep) return Error{"nested deeper than " + std::to_string(max_depth) + " levels; not a lab file"};
    if (!probe.duplicate.empty())
      return Error{"the key \"" + probe.duplicate.substr(0, 40) + "\" appears twice in one object; each key once"};
    return Error{probe.syntax_error.empty() ? std::string("not valid JSON") : probe.syntax_error};
  }
  return {};
}

Result<nlohmann::json> parse_bounded_json(std::string_view text, int max_depth) {
  if (auto checked = check_bounded_json(text, max_depth); !checked) return checked.error();
  // The probe has seen it all: this parse cannot fail, and cannot nest deeply.
  return nlohmann::json::parse(text, nullptr, false);
}

std::string clipped_dump(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace cb::grade
