// What an output path may be (-o, --folded, --perfetto, …): a device or a FIFO is written as it
// is and never replaced, "-" is standard output, a block device or a socket is refused, a link
// another user owns is not followed. Devices are clones made with mknod in a temporary
// directory: a regression replaces the clone, never the host's /dev/null.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <set>

#include "e2e/cli_util.hpp"
#include "mainboard/profile.hpp"

using namespace mainboard;
namespace fs = std::filesystem;

namespace {

/// A temporary directory, removed with its contents.
class OutDir {
 public:
  OutDir() {
    std::string tmpl = (fs::temp_directory_path() / "mainboard-out-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~OutDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::set<std::string> entries_of(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.insert(e.path().filename().string());
  return out;
}

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const std::string kSnapshotArgs[] = {"--sysroot", host("numa-2socket"), "snapshot", "--json"};

CommandResult snapshot_to(const std::string& output) {
  std::vector<std::string> args(std::begin(kSnapshotArgs), std::end(kSnapshotArgs));
  args.insert(args.end(), {"-o", output});
  return cli(args);
}

}  // namespace

TEST(OutputPath, ACharacterDeviceIsWrittenAsItIsNeverReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (mknod)";
  OutDir dir;
  auto null = dir.path() / "null", full = dir.path() / "full";
  ASSERT_EQ(::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);
  ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)), 0);
  auto before = entries_of(dir.path());

  auto r = snapshot_to(null.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(is_char_device(null)) << "the device was replaced";

  r = snapshot_to(full.string());  // ENOSPC, as writing /dev/full always is
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write " + full.string() + ": write: No space left on device"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(is_char_device(full));

  r = cli({"profile", "run", "-o", null.string(), "--folded", null.string(), "--speedscope",
           null.string(), "--perfetto", null.string(), "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device(null));
  r = cli({"meter", "-o", null.string(), "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device(null));
  EXPECT_EQ(entries_of(dir.path()), before) << "a temporary file or a .old was left beside";
}

TEST(OutputPath, AFifoStreamsTheDocument) {
  OutDir dir;
  auto fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return read_whole(fifo); });
  auto r = snapshot_to(fifo.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(reader.get(), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["cpu"]["info"]["numa_nodes"], 2);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries_of(dir.path()), std::set<std::string>{"pipe"});
}

TEST(OutputPath, DashAndTheDescriptorNamesAreStandardOutput) {
  OutDir dir;
  for (const char* out : {"-", "/dev/fd/1", "/proc/self/fd/1"}) {
    // Run in `dir`: "-" must not become a file named "-" there.
    CommandResult r = [&] {
      Command c;
      c.argv = {"/usr/bin/env", "-C", dir.path().string(), MAINBOARD_CLI};
      c.argv.insert(c.argv.end(), std::begin(kSnapshotArgs), std::end(kSnapshotArgs));
      c.argv.insert(c.argv.end(), {"-o", out});
      c.timeout = std::chrono::seconds(60);
      return LocalRunner("/usr/bin:/bin").run(c);
    }();
    ASSERT_EQ(r.exit_code, 0) << out << ": " << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_object()) << out << " gave: " << r.out.substr(0, 200);
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
  auto r = cli({"profile", "run", "-o", "-", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(Profile::parse(r.out)) << r.out.substr(0, 200);
}

TEST(OutputPath, ABlockDeviceOrASocketIsRefusedBeforeAnythingRuns) {
  OutDir dir;
  std::vector<std::pair<fs::path, std::string>> refused;
  if (::geteuid() == 0) {
    auto blk = dir.path() / "disk";
    ASSERT_EQ(::mknod(blk.c_str(), S_IFBLK | 0600, ::makedev(7, 200)), 0);
    refused.emplace_back(blk, "is a block device");
  }
  auto sock = dir.path() / "sock";
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  refused.emplace_back(sock, "is a socket");
  auto marker = dir.path() / "ran";
  for (const auto& [path, why] : refused) {
    auto r = snapshot_to(path.string());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("-o " + path.string() + ": " + why), std::string::npos) << r.err;
    r = cli({"profile", "run", "--folded", path.string(), "--", "touch", marker.string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(fs::exists(marker)) << "the command ran although its output was refused";
  }
  ::close(s);
}

TEST(OutputPath, ALinkIsFollowedOnlyWhenItsOwnerIsTheUserOrRoot) {
  OutDir dir;
  auto real = dir.path() / "real.json", mine = dir.path() / "mine.json";
  fs::create_symlink(real.filename(), mine);
  auto r = snapshot_to(mine.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(mine)) << "one's own link was replaced";
  EXPECT_TRUE(nlohmann::json::parse(read_whole(real), nullptr, false).is_object());

  if (::geteuid() != 0) return;
  auto victim = dir.path() / "victim", planted = dir.path() / "out.json";
  std::ofstream(victim) << "root:x:0:0\n";
  fs::create_symlink(victim, planted);
  ASSERT_EQ(::lchown(planted.c_str(), 65534, 65534), 0);
  r = snapshot_to(planted.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a link owned by another user (uid 65534)"), std::string::npos) << r.err;
  EXPECT_EQ(read_whole(victim), "root:x:0:0\n");
  EXPECT_TRUE(fs::is_symlink(planted));
}

TEST(OutputPath, AnUnwritableDirectoryIsAUsageError) {
  OutDir dir;
  auto locked = dir.path() / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  std::vector<std::string> args(std::begin(kSnapshotArgs), std::end(kSnapshotArgs));
  args.insert(args.end(), {"-o", (locked / "snap.json").string()});
  Command c;
  if (::geteuid() == 0) {  // root writes anywhere: an ordinary user is refused
    fs::permissions(dir.path(), fs::perms::all);
    c.argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  c.argv.push_back(MAINBOARD_CLI);
  c.timeout = std::chrono::seconds(60);
  Command version = c;
  version.argv.push_back("--version");
  if (LocalRunner("/usr/bin:/bin").run(version).exit_code != 0)
    GTEST_SKIP() << "the build tree is not reachable for user nobody";
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  auto r = LocalRunner("/usr/bin:/bin").run(c);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot write in " + locked.string() + " (Permission denied)"),
            std::string::npos)
      << r.err;
}
