// Paths from elsewhere: a recorded host whose links lead out of it, a shared directory where
// another user planted links. Nothing outside the sysroot is read; nothing is written through a
// link under a directory mainboard writes into.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>

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
