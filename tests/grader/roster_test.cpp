// A roster as LMSs and spreadsheets export it: the columns found by name in any case, at commas,
// semicolons or tabs, quoted cells, other columns left alone; the id field never switched for
// another without a word; and each bad line named.
#include <doctest/doctest.h>

#include "cb/grade/batch.h"

namespace cb::grade {
namespace {

using Roster = std::map<std::string, std::string>;

Roster parsed(std::string_view csv, const std::string& id_field = "email") {
  auto r = parse_roster(csv, "roster.csv", id_field);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

std::string refused(std::string_view csv, const std::string& id_field = "email") {
  auto r = parse_roster(csv, "roster.csv", id_field);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

TEST_CASE("roster: an LMS's header in any case, with columns the grader does not use") {
  const Roster want{{"ada", "Ada@Uni.edu"}, {"bob", "bob@uni.edu"}};
  CHECK(parsed("Folder,SID,Email\nada,s1,Ada@Uni.edu\nbob,s2,bob@uni.edu\n") == want);
  CHECK(parsed("Name;FOLDER;Email;Section\nAda L;ada;Ada@Uni.edu;A\nBob;bob;bob@uni.edu;B\n") == want);
  CHECK(parsed("folder\tsid\temail\r\nada\ts1\tAda@Uni.edu\r\nbob\ts2\tbob@uni.edu\r\n") == want);
  CHECK(parsed("\xEF\xBB\xBF\"Folder\",\"Email\"\n\"ada\",\"Ada@Uni.edu\"\n\"bob\",\"bob@uni.edu\"\n") == want);
  CHECK(parsed("folder,sid,email\nada,s1,Ada@Uni.edu\nbob,s2,bob@uni.edu\n", "sid") ==
        Roster{{"ada", "s1"}, {"bob", "s2"}});
}

TEST_CASE("roster: a quoted cell holds the separator and quotes") {
  CHECK(parsed("name,folder,email\n\"Lovelace, Ada \"\"AL\"\"\",ada,ada@uni.edu\n") == Roster{{"ada", "ada@uni.edu"}});
}

TEST_CASE("roster: the id field is read from its own column, or from one named student, never from another") {
  CHECK(refused("folder,sid\nada,s1\n") ==
        "roster.csv: line 1: no column email (the id field: --id-field or the rubric's id_field); the columns are "
        "folder, sid. Say --id-field with the column that names each student");
  CHECK(parsed("folder,student\nada,ada@uni.edu\n") == Roster{{"ada", "ada@uni.edu"}});
  CHECK(parsed("ada,ada@uni.edu\nbob,bob@uni.edu\n") == Roster{{"ada", "ada@uni.edu"}, {"bob", "bob@uni.edu"}});
}

TEST_CASE("roster: a bad line is named with what was expected") {
  CHECK(refused("ada,ada@uni.edu,extra\n") ==
        "roster.csv: line 1: expected 2 cells, the folder and the email, or a first line naming the columns (folder "
        "and email)");
  CHECK(refused("folder,sid,email\nada,s1,ada@uni.edu\n\nbob,s2\n") ==
        "roster.csv: line 4: expected a cell in column 3, as the header names; found 2");
  CHECK(refused("folder,email\nada,\n") == "roster.csv: line 2: expected the folder and the email, both named");
  CHECK(refused("folder,email\nada,a@u\nada,b@u\n") == "roster.csv: line 3: folder ada is named twice");
}

TEST_CASE("roster: an export's hand-in time, from the column that names it, in UTC") {
  auto r = read_roster(
      "Folder\tEmail\tSection\tSubmitted\nann\tann@uni.edu\tA\t2026-11-03 14:22:05 UTC\n"
      "bob\tbob@uni.edu\tA\t\ncy\tcy@uni.edu\tB\t2026-11-03T14:22:05.5+00:00\n",
      "r.csv");
  REQUIRE(r);
  CHECK(r->students.size() == 3);
  CHECK(r->handed_in_ns ==
        std::map<std::string, std::int64_t>{{"ann", 1'793'715'725'000'000'000}, {"cy", 1'793'715'725'500'000'000}});
  // An offset other than UTC's is refused rather than guessed at.
  auto offset = read_roster("folder,email,timestamp\nann,ann@uni.edu,2026-11-03T14:22:05+01:00\n", "r.csv");
  REQUIRE(!offset);
  CHECK(offset.error().message ==
        "r.csv: line 2: timestamp: '2026-11-03T14:22:05+01:00' is not a time in UTC like 2026-11-03T14:22:05Z (or "
        "2026-11-03 14:22:05)");
  // Without such a column, no times.
  auto none = read_roster("folder,email\nann,ann@uni.edu\n", "r.csv");
  REQUIRE(none);
  CHECK(none->handed_in_ns.empty());
}

TEST_CASE("roster: its students who handed in nothing, one row a student, by the id rule") {
  const Roster roster{{"ada", "Ada@Uni.edu"},
                      {"ada-2", "ada@uni.edu"},  // ada's second folder: she handed in as ada
                      {"bob", "bob@uni.edu"},
                      {"cy-1", "cy@uni.edu"},
                      {"cy-2", "cy@uni.edu"}};
  CHECK(roster_without_folder(roster, {"ada", "zed"}) == Roster{{"bob", "bob@uni.edu"}, {"cy-1", "cy@uni.edu"}});
  CHECK(roster_without_folder(roster, {"ada-2", "bob", "cy-2"}).empty());
  CHECK(roster_without_folder({}, {"ada"}).empty());
}

}  // namespace
}  // namespace cb::grade
