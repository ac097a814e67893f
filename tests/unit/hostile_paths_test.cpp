// Paths from elsewhere: a recorded host whose links lead out of it, a shared directory where
// another user planted links. Nothing outside the sysroot is read; nothing is written through a
// link under a directory mainboard writes into.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <regex>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/beneath.hpp"
#include "core/fs.hpp"
#include "mainboard/error.hpp"
#include "mainboard/gather.hpp"
#include "test_util.hpp"

using namespace mainboard;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// A file outside every tree, standing for /etc/shadow or /etc/passwd.
struct Victim {
  TempDir dir;
  fs::path path = dir.write("victim", "SECRET victim contents\n");
};

bool is_link(const fs::path& p) {
  std::error_code ec;
  return fs::is_symlink(p, ec);
}

/// Runs `body` in a child process as user and group `uid` (root only): what an ordinary user's
/// mainboard would do. The child's exit status: 0 when `body` returned true.
int as_user(uid_t uid, const std::function<bool()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0 ||
        ::setresuid(uid, uid, uid) != 0)
      ::_exit(3);
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
      ::_exit(4);
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

constexpr uid_t kNobody = 65534, kSomeoneElse = 65533;

}  // namespace

// --- reading a recorded host -------------------------------------------------------------------

TEST(Sysroot, LinksThatLeadOutOfTheRootAreResolvedInsideIt) {
  Victim victim;
  TempDir root;
  root.write("proc/meminfo", "MemTotal: 1 kB\n");
  root.write("etc/secret", "the recording's own file\n");
  root.mkdir("proc/sub");
  // Absolute: leads to the host's file by name; inside the root it names the root's own.
  fs::create_symlink(victim.path, root.path() / "proc/cpuinfo");
  fs::create_symlink("/etc/secret", root.path() / "proc/abs-inside");
  // Relative, climbing past the root: stops at the root, as "/.." is "/".
  std::string climb;
  for (auto part = root.path().begin(); part != root.path().end(); ++part)
    climb += "../";
  fs::create_symlink(climb + victim.path.relative_path().string(), root.path() / "proc/sub/up");
  fs::create_symlink("../meminfo", root.path() / "proc/sub/rel");
  fs::create_symlink(victim.dir.path(), root.path() / "outdir");
  fs::create_symlink("loop2", root.path() / "loop1");
  fs::create_symlink("loop1", root.path() / "loop2");

  core::Fs fsys(root.path());
  EXPECT_FALSE(fsys.read("/proc/cpuinfo")) << "read the host's file through an absolute link";
  EXPECT_EQ(fsys.read("/proc/abs-inside"), "the recording's own file\n");
  EXPECT_FALSE(fsys.read("/proc/sub/up"));
  EXPECT_EQ(fsys.read("/proc/sub/rel"), "MemTotal: 1 kB\n");
  EXPECT_EQ(fsys.read("/proc/sub/../meminfo"), "MemTotal: 1 kB\n");
  EXPECT_EQ(fsys.read("/../../proc/meminfo"), "MemTotal: 1 kB\n");
  EXPECT_TRUE(fsys.list("/outdir").empty()) << "listed a directory outside the root";
  EXPECT_FALSE(fsys.exists("/outdir/victim"));
  EXPECT_FALSE(fsys.exists("/proc/cpuinfo"));
  EXPECT_TRUE(fsys.exists("/proc/sub/rel"));
  EXPECT_TRUE(fsys.is_dir("/proc/sub"));
  EXPECT_FALSE(fsys.read("/loop1")) << "a loop of links";
  // The link as stored is still what readlink gives (gather records it as it is).
  EXPECT_EQ(fsys.readlink("/proc/cpuinfo"), victim.path.string());
  EXPECT_EQ(fsys.link_name("/proc/sub/rel"), "meminfo");
}

TEST(Sysroot, GatheringARecordedHostCopiesNothingFromOutsideIt) {
  Victim victim;
  TempDir dir;
  auto recorded = dir.path() / "recorded";
  gather_host(recorded, {.hostname = "rec"});
  // The recorded host is tampered with: its meminfo and cpuinfo now lead to the victim.
  for (const char* name : {"proc/meminfo", "proc/cpuinfo"}) {
    fs::remove(recorded / name);
    fs::create_symlink(victim.path, recorded / name);
  }
  auto again = dir.path() / "again";
  gather_host(again, {.sysroot = recorded});
  for (const auto& e : fs::recursive_directory_iterator(again)) {
    if (!e.is_regular_file()) continue;
    EXPECT_EQ(slurp(e.path()).find("SECRET"), std::string::npos)
        << e.path() << " holds the victim's contents";
  }
}

// --- writing a tree ----------------------------------------------------------------------------

TEST(TreeWriter, AFileLinkIsReplacedNeverWrittenThrough) {
  Victim victim;
  TempDir dir;
  dir.mkdir("proc");
  fs::create_symlink(victim.path, dir.path() / "proc/meminfo");
  core::TreeWriter out(dir.path());
  out.write("/proc/meminfo", "MemTotal: 2 kB\n");
  EXPECT_EQ(slurp(victim.path), "SECRET victim contents\n");
  EXPECT_FALSE(is_link(dir.path() / "proc/meminfo"));
  EXPECT_EQ(slurp(dir.path() / "proc/meminfo"), "MemTotal: 2 kB\n");
  // touch() leaves what is there (a link included) and creates nothing through it.
  fs::create_symlink(victim.dir.path() / "created", dir.path() / "proc/stat");
  EXPECT_FALSE(out.touch("/proc/stat"));
  EXPECT_FALSE(fs::exists(victim.dir.path() / "created"));
}

TEST(TreeWriter, ADirectoryLinkIsRefusedWithItsName) {
  TempDir elsewhere, dir;
  fs::create_symlink(elsewhere.path(), dir.path() / "sys");
  core::TreeWriter out(dir.path());
  try {
    out.write("/sys/class/x", "1\n");
    ADD_FAILURE() << "wrote through a directory link";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/sys is a link"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(elsewhere.path()));
  EXPECT_THROW(out.write("../escape", "x"), Error);
  EXPECT_FALSE(fs::exists(dir.path().parent_path() / "escape"));
}

TEST(TreeWriter, GatherForceIntoAPlantedTreeLeavesTheVictimsAlone) {
  Victim victim;
  TempDir elsewhere, dir;
  dir.mkdir("proc");
  fs::create_symlink(victim.path, dir.path() / "proc/meminfo");
  gather_host(dir.path(), {.hostname = "x", .force = true});
  EXPECT_EQ(slurp(victim.path), "SECRET victim contents\n");
  EXPECT_NE(slurp(dir.path() / "proc/meminfo").find("MemTotal"), std::string::npos);

  fs::remove_all(dir.path() / "etc");
  fs::create_symlink(elsewhere.path(), dir.path() / "etc");
  EXPECT_THROW(gather_host(dir.path(), {.hostname = "x", .force = true}), Error);
  EXPECT_TRUE(fs::is_empty(elsewhere.path())) << "gather wrote outside its directory";
}

TEST(TreeWriter, ADirectoryReachedThroughAnotherUsersLinkIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to own a link as another user)";
  TempDir elsewhere, shared;
  auto link = shared.path() / "node1";
  fs::create_symlink(elsewhere.path(), link);
  ASSERT_EQ(::lchown(link.c_str(), kSomeoneElse, kSomeoneElse), 0);
  try {
    gather_host(link, {.hostname = "x"});
    ADD_FAILURE() << "gathered through another user's link";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a link owned by another user (uid 65533)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(core::TreeWriter{link / "deeper"}, Error);
  EXPECT_TRUE(fs::is_empty(elsewhere.path()));
  // The same link owned by the one who writes (here root) is followed: one's own links are fine.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  EXPECT_NO_THROW(core::TreeWriter{link});
  EXPECT_EQ(core::foreign_link_in(link / "a/b"), std::nullopt);
}

TEST(TreeWriter, AsAnOrdinaryUserPlantedLinksAreNeitherFollowedNorWrittenThrough) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to become an ordinary user)";
  TempDir top;
  fs::permissions(top.path(), fs::perms::all);  // world-writable, as a shared gather directory
  auto victim = top.path() / "victim";
  std::ofstream(victim) << "mine\n";
  ASSERT_EQ(::chown(victim.c_str(), kNobody, kNobody), 0);
  auto shared = top.path() / "shared";
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all);
  // Another user plants NODE/etc/passwd → the victim and a node directory leading elsewhere.
  fs::create_directories(shared / "n1/etc");
  fs::create_symlink(victim, shared / "n1/etc/passwd");
  fs::create_symlink(top.path(), shared / "n2");
  for (auto p : {shared / "n1", shared / "n1/etc", shared / "n1/etc/passwd", shared / "n2"})
    ASSERT_EQ(::lchown(p.c_str(), kSomeoneElse, kSomeoneElse), 0);
  fs::permissions(shared / "n1", fs::perms::all);
  fs::permissions(shared / "n1/etc", fs::perms::all);

  EXPECT_EQ(as_user(kNobody,
                    [&] {
                      core::TreeWriter out(shared / "n1");
                      out.write("/etc/passwd", "recorded\n");
                      return slurp(victim) == "mine\n" && !is_link(shared / "n1/etc/passwd");
                    }),
            0);
  EXPECT_EQ(slurp(victim), "mine\n");
  EXPECT_EQ(as_user(kNobody,
                    [&] {
                      try {
                        core::TreeWriter out(shared / "n2");
                        return false;
                      } catch (const Error&) {
                        return true;
                      }
                    }),
            0);
  EXPECT_FALSE(fs::exists(top.path() / "proc"));
}

// --- outputs: what -o names is opened first, then written as what it is ----------------------

namespace {

/// A FIFO's reader, open while it lives: what was written to it, drained as it comes.
class FifoReader {
 public:
  explicit FifoReader(const fs::path& fifo)
      : fd_(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
    thread_ = std::thread([this] {
      char buf[4096];
      while (!stop_) {
        ssize_t n = ::read(fd_.get(), buf, sizeof buf);
        if (n > 0) {
          // Counted once appended: text() waits on the count, then reads the text.
          std::lock_guard<std::mutex> lock(mutex_);
          text_.append(buf, static_cast<std::size_t>(n));
          got_ += static_cast<std::size_t>(n);
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
    });
  }
  ~FifoReader() {
    stop_ = true;
    thread_.join();
  }
  bool open() const { return bool(fd_); }
  std::string text(std::size_t at_least = 0) {
    // Bounded: what has come within two seconds.
    for (int i = 0; i < 200 && got_ < at_least; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 private:
  core::UniqueFd fd_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> got_{0};
  std::mutex mutex_;
  std::string text_;
  std::thread thread_;
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

// The check-then-open race: the output is another user's FIFO when it is looked at and their
// link to a root-owned file when it is opened. Before, a write now and then went through the
// link into the victim (in 4 runs of 6 of this test).
TEST(AtomicFile, AFifoSwappedForALinkIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to own a FIFO and a link as another user)";
  Victim victim;
  TempDir dir;
  auto out = dir.path() / "out", link = dir.path() / "link";
  const auto& fifo = out;
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  fs::create_symlink(victim.path, link);
  ASSERT_EQ(::lchown(fifo.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::lchown(link.c_str(), kNobody, kNobody), 0);
  FifoReader reader(fifo);
  ASSERT_TRUE(reader.open());
  // The FIFO and the link change places, again and again (one system call a swap).
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    while (!stop)
      ::renameat2(AT_FDCWD, out.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
  });
  core::WriteOptions quick;
  quick.reader_wait = std::chrono::milliseconds(50);
  int written = 0, refused = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int i = 0; i < 3000 && std::chrono::steady_clock::now() < until; ++i) {
    try {
      core::write_file_atomic(out, "written by root\n", quick);
      ++written;
    } catch (const Error&) {
      ++refused;
    }
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(slurp(victim.path), "SECRET victim contents\n")
      << written << " written, " << refused << " refused";
  EXPECT_GT(written + refused, 0);
}

// The kernel's protected_fifos rule, whatever the sysctl says: a FIFO (or device node) another
// user made in a sticky directory everyone can write, such as /tmp, is not opened. Before, root
// wrote the whole output to whoever had planted it (or hung when no one read).
TEST(AtomicFile, AFifoAnotherUserPlantedInAStickyDirectoryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to own a FIFO as another user)";
  TempDir dir;
  fs::permissions(dir.path(), fs::perms::all | fs::perms::sticky_bit);
  auto planted = dir.path() / "mainboard-profile.json";
  ASSERT_EQ(::mkfifo(planted.c_str(), 0666), 0);
  ASSERT_EQ(::chown(planted.c_str(), kNobody, kNobody), 0);
  FifoReader thief(planted);
  ASSERT_TRUE(thief.open());
  auto started = std::chrono::steady_clock::now();
  try {
    core::write_file_atomic(planted, "the profile\n");
    ADD_FAILURE() << "wrote into another user's FIFO in a sticky directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO owned by another user (uid 65534)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_NE(core::why_unwritable(planted).find("protected_fifos"), std::string::npos);
  EXPECT_EQ(thief.text(), "");
  // The writer's own FIFO there, and another user's in a directory that is not shared, are fine.
  auto own = dir.path() / "own.fifo";
  ASSERT_EQ(::mkfifo(own.c_str(), 0600), 0);
  FifoReader mine(own);
  core::write_file_atomic(own, "mine\n");
  EXPECT_EQ(mine.text(5), "mine\n");
  TempDir mine_only;
  auto theirs = mine_only.path() / "theirs.fifo";
  ASSERT_EQ(::mkfifo(theirs.c_str(), 0666), 0);
  ASSERT_EQ(::chown(theirs.c_str(), kNobody, kNobody), 0);
  FifoReader reader(theirs);
  core::write_file_atomic(theirs, "asked for\n");
  EXPECT_EQ(reader.text(10), "asked for\n");
}

// A FIFO is written as it is (never replaced), to its reader; one nobody opens to read is an
// error after a bounded wait instead of a command that never ends.
TEST(AtomicFile, AFifoStreamsToItsReaderAndOneWithoutAReaderIsAnErrorAfterAWait) {
  TempDir dir;
  auto fifo = dir.path() / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  {
    FifoReader reader(fifo);
    ASSERT_TRUE(reader.open());
    core::write_file_atomic(fifo, "streamed\n");
    EXPECT_EQ(reader.text(9), "streamed\n");
  }
  core::WriteOptions o;
  o.reader_wait = std::chrono::milliseconds(300);
  auto started = std::chrono::steady_clock::now();
  try {
    core::write_file_atomic(fifo, "nobody reads this\n", o);
    ADD_FAILURE() << "a FIFO without a reader was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no one opened the FIFO to read it in 300 ms"),
              std::string::npos)
        << e.what();
  }
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, std::chrono::milliseconds(250));
  EXPECT_LT(took, std::chrono::seconds(10));
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
}

// A regular file is replaced, never written into: another name of it (a hard link) keeps what
// it had, and the new file has the mode the old one had (a private file stays private).
TEST(AtomicFile, AReplacedFileKeepsItsModeAndNothingIsWrittenIntoIt) {
  TempDir dir;
  auto file = dir.write("out.json", "before\n");
  auto other = dir.path() / "other-name";
  fs::create_hard_link(file, other);
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  core::write_file_atomic(file, "after\n");
  EXPECT_EQ(slurp(file), "after\n");
  EXPECT_EQ(slurp(other), "before\n");
  EXPECT_EQ(mode_of(file), 0640u);
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  core::write_file_atomic(file, "again\n");
  EXPECT_EQ(mode_of(file), 0600u);
}

// Where an output goes when it cannot be written: a new file of its own, made with O_EXCL in
// $TMPDIR under a name no one can guess (before: NAME.PID.json, where another user could plant
// a FIFO or a link), readable by its owner alone, and still so once written.
TEST(AtomicFile, TheFallbackFileIsPrivateAndUnpredictable) {
  TempDir dir;
  const char* was = std::getenv("TMPDIR");
  std::string saved = was ? was : "";
  ::setenv("TMPDIR", dir.path().c_str(), 1);
  // What the old name would have been, planted.
  auto guessed = dir.path() / ("mainboard-profile." + std::to_string(::getpid()) + ".json");
  ASSERT_EQ(::mkfifo(guessed.c_str(), 0666), 0);
  mode_t mask = ::umask(022);
  auto a = core::make_fallback_file("somewhere/mainboard-profile.json");
  auto b = core::make_fallback_file("somewhere/mainboard-profile.json");
  auto device = core::make_fallback_file("/dev/full");
  if (was)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_NE(a, b);
  EXPECT_NE(a, guessed);
  EXPECT_EQ(a.parent_path(), dir.path());
  static const std::regex name(R"(mainboard-profile\.[A-Za-z0-9]{6}\.json)");
  EXPECT_TRUE(std::regex_match(a.filename().string(), name)) << a;
  EXPECT_TRUE(std::regex_match(device.filename().string(),
                               std::regex(R"(mainboard-output\.[A-Za-z0-9]{6})")))
      << device;
  struct stat st {};
  ASSERT_EQ(::lstat(a.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_size, 0);
  core::write_file_atomic(a, "the profile\n");
  ::umask(mask);
  EXPECT_EQ(slurp(a), "the profile\n");
  EXPECT_EQ(mode_of(a), 0600u);
}
