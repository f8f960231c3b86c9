// cb::sandbox on its own: sizes and limits as values, a box's copy (what it keeps, what it
// skips, what it refuses), its removal, uids of their own, and a start that fails named by step.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cb/sandbox/sandbox.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::sandbox {
namespace {

namespace fs = std::filesystem;
using cb::testing::slurp;
using cb::testing::TempDir;

TEST_CASE("sandbox limits: sizes read and written in binary units") {
  CHECK(parse_size("2G").value() == (2ULL << 30));
  CHECK(parse_size("64M").value() == (64ULL << 20));
  CHECK(parse_size("512KiB").value() == (512ULL << 10));
  CHECK(parse_size("1000").value() == 1000);
  CHECK(parse_size("1g").value() == (1ULL << 30));
  CHECK(parse_size("0").error().message == "'0' is zero; a limit must allow something");
  CHECK(parse_size("lots").error().message ==
        "'lots' is not a size like 2G, 64M, 512K, a number of bytes, or unlimited");
  CHECK(parse_size("unlimited").value() == kUnlimited);
  CHECK(size_text(kUnlimited) == "unlimited");
  CHECK_FALSE(parse_size("99999999999999999999").ok());
  CHECK_FALSE(parse_size("17179869184G").ok());
  CHECK(size_text(2ULL << 30) == "2 GiB");
  CHECK(size_text(64ULL << 20) == "64 MiB");
  CHECK(size_text(1000) == "1000 bytes");
  // As a flag takes it, and read back the same: cb-grade's defaults are written this way.
  CHECK(size_flag(2ULL << 30) == "2G");
  CHECK(size_flag(256ULL << 20) == "256M");
  CHECK(size_flag(1000) == "1000");
  CHECK(size_flag(kUnlimited) == "unlimited");
  for (const std::uint64_t n :
       std::initializer_list<std::uint64_t>{1, 1000, 1ULL << 10, 3ULL << 20, 5ULL << 30, 7ULL << 40, kUnlimited})
    CHECK(parse_size(size_flag(n)).value() == n);
}

TEST_CASE("sandbox limits: which limit a program ran into, from how it ended") {
  const Limits l;
  const auto signalled = [](int sig) { return sig; };  // waitpid's status for "killed by sig"
  CHECK(limit_hit(l, signalled(SIGXCPU), std::chrono::seconds{30}, "") == LimitHit::Cpu);
  CHECK(limit_hit(l, signalled(SIGKILL), std::chrono::seconds{31}, "") == LimitHit::Cpu);
  CHECK(limit_hit(l, signalled(SIGKILL), std::chrono::seconds{2}, "") == LimitHit::None);  // killed by someone else
  CHECK(limit_hit(l, signalled(SIGXFSZ), {}, "") == LimitHit::FileSize);
  CHECK(limit_hit(l, (128 + SIGXFSZ) << 8, {}, "") == LimitHit::FileSize);  // a shell's "exit 153"
  CHECK(limit_hit(l, 1 << 8, {}, "OSError: [Errno 27] File too large") == LimitHit::FileSize);
  CHECK(limit_hit(l, 1 << 8, {}, "Traceback ...\nMemoryError\n") == LimitHit::Memory);
  CHECK(limit_hit(l, 1 << 8, {}, "sh: 1: Cannot fork\n") == LimitHit::Processes);
  CHECK(limit_hit(l, 1 << 8, {}, "OSError: [Errno 24] Too many open files") == LimitHit::OpenFiles);
  CHECK(limit_hit(l, 0, {}, "all fine") == LimitHit::None);
  CHECK(describe(l, LimitHit::Cpu) == "the CPU-time limit (30 s a process)");
  CHECK(describe(l, LimitHit::Memory) == "the memory limit (2 GiB of data a process)");
  CHECK(describe(l, LimitHit::Memory, true) == "the memory limit (2 GiB for the whole box, as the kernel counts it)");
}

TEST_CASE("sandbox modes: parsed by name") {
  CHECK(parse_mode("auto").value() == Mode::Auto);
  CHECK(parse_mode("strict").value() == Mode::Strict);
  CHECK(parse_mode("fallback").value() == Mode::Fallback);
  CHECK(parse_mode("none").value() == Mode::None);
  CHECK(parse_mode("off").error().message == "'off' is not one of auto, strict, fallback, none");
}

TEST_CASE("box: a private copy of the submission - links kept as links, FIFOs skipped, times kept") {
  TempDir sub;
  sub.write("run.sh", "echo hi\n");
  ::chmod((sub / "run.sh").c_str(), 0755);
  fs::create_directories(sub / "src/deep");
  sub.write("src/deep/a.txt", "a");
  fs::create_symlink("/etc/hostname", sub / "outside");  // never followed while copying
  fs::create_symlink("src/deep/a.txt", sub / "inside");
  REQUIRE(::mkfifo((sub / "pipe").c_str(), 0644) == 0);  // opening it would block the copy
  fs::create_hard_link(sub / "src/deep/a.txt", sub / "second-name");
  const timespec old[2] = {{1'000'000'000, 0}, {1'000'000'000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (sub / "run.sh").c_str(), old, 0) == 0);

  std::string base;
  {
    BoxOptions o;
    o.submission = sub.path();
    o.out_dir = sub / "out";
    auto box = Box::make(o);
    REQUIRE_MESSAGE(box.ok(), (box.ok() ? "" : box.error().message));
    const Box& b = **box;
    base = b.base();
    CHECK(b.submission() == fs::canonical(sub.path()).string());
    CHECK(b.out_inside_submission());
    CHECK(b.out_host() == b.copy_dir() + "/out");
    CHECK(fs::is_directory(b.out_host()));
    CHECK_FALSE(fs::exists(sub / "out"));  // made in the copy only: the submission is never written
    CHECK(slurp(b.copy_dir() + "/run.sh") == "echo hi\n");
    CHECK((fs::status(b.copy_dir() + "/run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
    CHECK(fs::last_write_time(b.copy_dir() + "/run.sh") == fs::last_write_time(sub / "run.sh"));
    CHECK(slurp(b.copy_dir() + "/src/deep/a.txt") == "a");
    CHECK(fs::read_symlink(b.copy_dir() + "/outside") == "/etc/hostname");
    CHECK(fs::read_symlink(b.copy_dir() + "/inside") == "src/deep/a.txt");
    CHECK_FALSE(fs::exists(fs::symlink_status(b.copy_dir() + "/pipe")));
    CHECK(b.skipped() == 1);
    CHECK(fs::hard_link_count(b.copy_dir() + "/second-name") == 1);  // its own file
    // What a program leaves in its box, however it locked it, goes with the box.
    fs::create_directories(b.copy_dir() + "/locked/in");
    std::ofstream(b.copy_dir() + "/locked/in/f") << "x";
    ::chmod((b.copy_dir() + "/locked").c_str(), 0);
  }
  CHECK_FALSE(fs::exists(base));
  CHECK(fs::exists("/etc/hostname"));
  CHECK(slurp(sub / "src/deep/a.txt") == "a");
}

TEST_CASE("box: an output directory outside the submission is a directory of the box's own") {
  TempDir sub;
  TempDir out;
  out.write("notes.txt", "the student's own");
  BoxOptions o;
  o.submission = sub.path();
  o.out_dir = out.path();
  auto box = Box::make(o);
  REQUIRE(box.ok());
  CHECK_FALSE((*box)->out_inside_submission());
  CHECK((*box)->out_host() == (*box)->base() + "/out");
  CHECK(fs::is_empty((*box)->out_host()));  // the folder's other files are not the program's to see
  o.out_dir = out / "not-there";
  CHECK(Box::make(o).error().message == out / "not-there" + ": the output directory: No such file or directory");
}

TEST_CASE("box: a submission too large to copy is refused, saying what to do") {
  TempDir sub;
  {
    std::ofstream f(sub / "huge.bin");
    f.seekp(static_cast<std::streamoff>(kMaxCopyBytes) + 1);  // sparse: nothing is written
    f << 'x';
  }
  BoxOptions o;
  o.submission = sub.path();
  const auto box = Box::make(o);
  REQUIRE_FALSE(box.ok());
  CHECK(box.error().message ==
        "the submission is larger than 256 MiB; name the folder that holds only the submission (--submission DIR)");
  const auto missing = [&] {
    BoxOptions m;
    m.submission = sub / "nope";
    return Box::make(m);
  }();
  CHECK(missing.error().message == sub / "nope" + ": the submission: No such file or directory");
}

// The finding: a counted box of 19,000 sibling folders held a descriptor each while it was counted,
// and a classmate's grading in the same grader found none left (socketpair: Too many open files).
// Counted here under 128 descriptors, every file is still counted: a descriptor a level is held.
TEST_CASE("box: counting a box holds a descriptor a level, not one a folder") {
  TempDir sub;
  BoxOptions o;
  o.submission = sub.path();
  auto box = Box::make(o);
  REQUIRE(box.ok());
  constexpr int kFolders = 1500;
  for (int i = 0; i < kFolders; ++i) {
    const std::string d = (*box)->copy_dir() + "/d" + std::to_string(i);
    REQUIRE(::mkdir(d.c_str(), 0700) == 0);
    std::ofstream(d + "/f") << "x";
  }
  const auto plenty = (*box)->usage();
  REQUIRE(plenty.ok());
  CHECK(plenty->files >= 2 * kFolders);
  rlimit was{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &was) == 0);
  const rlimit few{128, was.rlim_max};
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &few) == 0);
  const auto counted = (*box)->usage();
  ::setrlimit(RLIMIT_NOFILE, &was);
  REQUIRE(counted.ok());
  CHECK(counted->files == plenty->files);
  CHECK(counted->bytes == plenty->bytes);
  CHECK_FALSE(counted->over);
}

TEST_CASE("box: as root, every box has a uid of its own, owning its copy") {
  if (cb::testing::skip_unless(::geteuid() == 0, "uids of their own need root")) return;
  TempDir sub;
  sub.write("f", "x");
  BoxOptions o;
  o.submission = sub.path();
  o.own_uid = true;
  auto a = Box::make(o);
  auto b = Box::make(o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)->uid() >= 60000);
  CHECK((*a)->uid() != (*b)->uid());
  struct stat st {};
  REQUIRE(::stat(((*a)->copy_dir() + "/f").c_str(), &st) == 0);
  CHECK(st.st_uid == (*a)->uid());
  CHECK((st.st_mode & 077) == 0);  // no other uid reads it
  // Only the box's uid may pass through to its copy (its group); nobody else may enter.
  REQUIRE(::stat((*a)->base().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0710);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == (*a)->gid());
  CHECK((*a)->bounded());  // a tmpfs of its size
}

TEST_CASE("sandbox: a start runs the program in its box, and a set-up step that fails is named") {
  TempDir sub;
  Sandbox sandbox{Policy{}};
  auto box = sandbox.box(sub.path(), "");
  REQUIRE_MESSAGE(box.ok(), (box.ok() ? "" : box.error().message));
  SUBCASE("its exit status comes back") {
    Program p;
    p.command = "test \"$(pwd)\" = '" + sandbox.visible_cwd(**box) + "' && exit 3";
    auto child = sandbox.start(**box, p);
    REQUIRE_MESSAGE(child.ok(), (child.ok() ? "" : child.error().message));
    while (!reap_if_exited(*child)) std::this_thread::sleep_for(std::chrono::milliseconds{1});
    CHECK(child->exit_code() == 3);
    CHECK(end_child(*child));
  }
  SUBCASE("ending it ends what it started") {
    Program p;
    p.command = "sleep 30 & sleep 30";
    auto child = sandbox.start(**box, p);
    REQUIRE(child.ok());
    CHECK(end_child(*child));
    CHECK(child->pid == -1);
  }
  if (sandbox.containment(**box).kind == Kind::Namespaces) {
    SUBCASE("a server address its network does not have") {
      Program p;
      p.command = "true";
      p.listen = Program::Listen{"10.255.255.1", 8110, [](int fd) -> Result<void> {
                                   ::close(fd);
                                   return {};
                                 }};
      const auto child = sandbox.start(**box, p);
      REQUIRE_FALSE(child.ok());
      CHECK(child.error().message ==
            "cannot start the program in the sandbox: binding the server's address: Cannot assign requested address");
    }
    SUBCASE("the server's socket is served before the program runs") {
      int served = -1;
      Program p;
      p.command = "exec 3<>/dev/null";  // connects to nothing: the socket is checked here
      p.listen = Program::Listen{"127.0.0.1", 8110, [&](int fd) -> Result<void> {
                                   served = fd;
                                   return {};
                                 }};
      auto child = sandbox.start(**box, p);
      REQUIRE(child.ok());
      REQUIRE(served >= 0);
      int listening = 0;
      socklen_t len = sizeof listening;
      CHECK(::getsockopt(served, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0);
      CHECK(listening == 1);
      ::close(served);
      CHECK(end_child(*child));
    }
  }
}

}  // namespace
}  // namespace cb::sandbox
