#include "modes.h"

#include "cli_flags.h"

namespace cb::grade {
namespace {

CLI::App* mode(CLI::App& app, const char* name, const char* what, Command& c, Mode m) {
  CLI::App* sub = app.add_subcommand(name, what);
  sub->parse_complete_callback([&c, m] { c.mode = m; });
  return sub;
}

}  // namespace

void declare_modes(CLI::App& app, Command& c) {
  add_one_submission_flags(app, c.one);
  add_grading_flags(app, c.one, c.sandbox, false);

  CLI::App* cls = mode(app, "class", "Grade every folder of ROOT, a submission each, into one gradebook (CSV or JSON)",
                       c, Mode::Class);
  cls->add_option("root", c.cls.root, "The class: a folder a submission")->required();
  add_grading_flags(*cls, c.cls, c.sandbox, true);
  add_class_flags(*cls, c.cls, true);

  CLI::App* regrade = mode(app, "regrade",
                           "Grade a class again from what `cb-grade class --reports DIR` kept, running nothing (with "
                           "--rubric or --spec: the new ones); rewrites the reports and says what changed",
                           c, Mode::Regrade);
  regrade->add_option("reports", c.regrade.kept, "A --reports folder (of a class, a merge or a regrade)")->required();
  add_spec_flag(*regrade, c.regrade);
  add_judging_flags(*regrade, c.regrade);
  add_gradebook_flags(*regrade, c.regrade);

  CLI::App* merge = mode(app, "merge",
                         "Join the --reports folders of a class graded in shards (class --shard I/N) into --reports "
                         "DIR, with one gradebook (-o); what no shard graded is named, and the exit is 3",
                         c, Mode::Merge);
  merge->add_option("shards", c.merge.shards, "Each shard's --reports folder")->required();
  merge->add_option("--reports", c.merge.reports,
                    "Where the class joined is kept (each submission's reports and the class page)");
  add_judging_flags(*merge, c.merge);
  add_gradebook_flags(*merge, c.merge);

  CLI::App* verify = mode(app, "verify",
                          "Judge every grade a --reports folder keeps again, from its evidence, rewriting nothing, "
                          "and name each that does not follow from it (exit 1)",
                          c, Mode::Verify);
  verify->add_option("reports", c.verify.reports, "A --reports folder (of a class, a merge or a regrade)")->required();
  verify->add_option("--gradebook", c.verify.gradebook,
                     "A gradebook of that class (-o gradebook.csv or .json): each row, and its digest, held to what "
                     "the kept grades give");
  add_judging_flags(*verify, c.verify);
}

void say_the_modes(CLI::App& app) {
  // Set last: a subcommand made after it would inherit it.
  app.footer(
      "cb-grade MODE --help: each mode's own flags. The spellings --batch DIR and --regrade DIR still work: they are "
      "`cb-grade class DIR` and `cb-grade regrade DIR`.");
}

std::vector<std::string> today_spelling(std::vector<std::string> args) {
  for (const char* old : {"--batch", "--regrade"}) {
    const std::string flag = old;
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::string value;
      std::size_t taken = 0;
      if (args[i] == flag && i + 1 < args.size()) {
        value = args[i + 1];
        taken = 2;
      } else if (args[i].rfind(flag + "=", 0) == 0) {
        value = args[i].substr(flag.size() + 1);
        taken = 1;
      }
      if (taken == 0) continue;
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i + taken));
      args.insert(args.begin(), {flag == "--batch" ? "class" : "regrade", value});
      return args;  // one mode a command line
    }
  }
  return args;
}

const CLI::App& mode_app(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) return mode_app(*sub);
  return app;
}

std::string flags_before_the_mode(const CLI::App& app) {
  if (&mode_app(app) == &app) return {};
  std::string out;
  for (const CLI::Option* opt : app.get_options())
    if (opt->count() > 0) out += (out.empty() ? "" : ", ") + opt->get_name(false, true);
  return out;
}

}  // namespace cb::grade
