// What a class's boxes share (class_build.h): the C++ kit's harness, built once from the kit the
// grader carries, a copy of it in each box that holds the kit, and nothing in any other.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cb/grade/class_build.h"
#include "cb/kit_files.h"
#include "cb/sandbox/sandbox.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

namespace fs = std::filesystem;

// A folder holding the kit of `lang` as it ships.
void write_kit(const std::string& dir, std::string_view lang) {
  fs::create_directories(dir);
  for (const KitFile& f : kit_files())
    if (f.lang == lang) std::ofstream(dir + "/" + std::string(f.name), std::ios::binary) << f.text;
}

// Waits for the child's end (its pidfd turns readable), within two minutes, and reaps it.
bool ended(sandbox::Child& child) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child.pid, 0));
  pollfd p{pidfd, POLLIN, 0};
  (void)::poll(&p, 1, 120'000);
  ::close(pidfd);
  const bool done = sandbox::reap_if_exited(child);
  (void)sandbox::end_child(child);
  return done;
}

std::unique_ptr<sandbox::Box> box_of(sandbox::Sandbox& sandbox, const std::string& dir) {
  auto box = sandbox.box(dir, "");
  REQUIRE_MESSAGE(box, (box ? std::string() : box.error().message));
  return std::move(box).value();
}

TEST_CASE("class build: the C++ harness is built once, and each box holding the kit gets a copy of its own") {
  TempDir root;
  write_kit(root / "ann", "cpp");
  write_kit(root / "bob", "cpp");
  write_kit(root / "cy", "python");
  // dan handed in a .cb-class of his own: it stays his.
  write_kit(root / "dan", "cpp");
  root.write("dan/.cb-class", "dan's\n");
  sandbox::Sandbox sandbox{sandbox::Policy{}};
  grade::ClassBuild shared;
  auto ann = box_of(sandbox, root / "ann");
  auto bob = box_of(sandbox, root / "bob");
  auto cy = box_of(sandbox, root / "cy");
  auto dan = box_of(sandbox, root / "dan");
  shared.give(sandbox, *cy);
  CHECK(shared.builds() == 0);  // no kit of the class's harness: nothing built for it
  shared.give(sandbox, *ann);
  shared.give(sandbox, *bob);
  shared.give(sandbox, *dan);
  INFO(shared.failure());
  CHECK(shared.failure().empty());
  CHECK(shared.builds() == 1);
  for (const auto* box : {ann.get(), bob.get()}) {
    const std::string dir = box->copy_dir() + "/.cb-class/cpp";
    for (const char* name : {"lab.o", "replay.o", "key"}) {
      INFO(dir, "/", name);
      CHECK(fs::is_regular_file(dir + "/" + name));
      CHECK(fs::file_size(dir + "/" + name) > 0);
    }
    struct stat st {};
    REQUIRE(::stat((dir + "/lab.o").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0644);  // the box's uid reads it, whatever the grader's umask
  }
  CHECK(slurp(ann->copy_dir() + "/.cb-class/cpp/lab.o") == slurp(bob->copy_dir() + "/.cb-class/cpp/lab.o"));
  CHECK_FALSE(fs::exists(cy->copy_dir() + "/.cb-class"));
  CHECK(slurp(dan->copy_dir() + "/.cb-class") == "dan's\n");
  // The folders handed in are as they were.
  CHECK_FALSE(fs::exists(root / "ann/.cb-class"));
}

TEST_CASE(
    "class build: the boxes' build uses the class's harness where its key is theirs, and builds its own elsewhere") {
  TempDir root;
  write_kit(root / "ann", "cpp");
  write_kit(root / "bob", "cpp");
  std::ofstream(root / "bob/lab.cpp", std::ios::app) << "// bob's own harness\n";
  sandbox::Sandbox sandbox{sandbox::Policy{}};
  grade::ClassBuild shared;
  for (const char* name : {"ann", "bob"}) {
    auto box = box_of(sandbox, root / name);
    shared.give(sandbox, *box);
    REQUIRE(shared.failure().empty());
    TempDir out;
    const std::string said = out / "said";
    sandbox::Program program;
    program.command = "sh build.sh";
    const int fd = ::open(said.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    program.out_fd = fd;
    program.err_fd = fd;
    auto child = sandbox.start(*box, program);
    ::close(fd);
    REQUIRE(child);
    REQUIRE(ended(*child));
    INFO(name, ": ", slurp(said));
    CHECK(child->exit_code() == 0);
    const bool used = slurp(said).find("as built once for the class") != std::string::npos;
    CHECK(used == (std::string(name) == "ann"));
    CHECK(fs::exists(box->copy_dir() + "/lab"));
    CHECK(fs::exists(box->copy_dir() + "/.harness") == (std::string(name) == "bob"));
  }
}

TEST_CASE("class build: a class whose harness cannot be built says so once, and each box builds its own") {
  TempDir root;
  write_kit(root / "ann", "cpp");
  // No compiler: the class's build fails, and so does ann's own (her grade says why).
  const Ran ran = run({CB_GRADE_BIN, "--batch", root.path(), "--run", "sh run.sh", "--program-env", "CXX=false",
                       "--timeout", "20", "-o", root / "book.csv"});
  INFO(ran.err);
  CHECK(ran.err.find("cb-grade: the C++ kit's harness could not be built once for the class ('sh build.sh' exited "
                     "with 1") != std::string::npos);
  CHECK(ran.err.find("each box built its own") != std::string::npos);
}

}  // namespace
}  // namespace cb::testing
