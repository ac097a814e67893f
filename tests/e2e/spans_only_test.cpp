// The span library as an instrumented program meets it: a program that links only
// mainboard::spans needs the C and C++ runtime and nothing else, starts no process, opens no
// hardware or vendor library, and saves a profile that `mainboard profile report` reads (naming
// auto-instrumented functions there, not in the program).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "mainboard/runner.hpp"

using namespace mainboard;

namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mainboard-spans-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

CommandResult run(std::vector<std::string> argv,
                  std::map<std::string, std::optional<std::string>> env = {}) {
  Command c;
  c.argv = std::move(argv);
  c.timeout = std::chrono::seconds(60);
  c.environment = std::move(env);
  c.environment.emplace("MAINBOARD_PROFILE", std::nullopt);
  return LocalRunner("/usr/bin:/bin").run(c);
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The DT_NEEDED entries of an ELF file.
std::vector<std::string> needed(const std::string& file) {
  auto r = run({"readelf", "-d", file});
  EXPECT_TRUE(r.ok()) << r.err;
  std::vector<std::string> out;
  std::regex re(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), re), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

/// The C and C++ runtime (and, in a sanitizer build, the sanitizers' runtimes).
bool runtime(const std::string& lib) {
  for (const char* prefix : {"libstdc++.so", "libm.so", "libgcc_s.so", "libc.so", "ld-linux"})
    if (lib.rfind(prefix, 0) == 0) return true;
#if defined(__SANITIZE_ADDRESS__)
  if (lib.rfind("libasan.so", 0) == 0 || lib.rfind("libubsan.so", 0) == 0) return true;
#endif
  return false;
}

}  // namespace

TEST(SpansOnly, NeedsOnlyTheCAndCxxRuntime) {
  auto lib = needed(MAINBOARD_SPANS_LIBRARY);
  ASSERT_FALSE(lib.empty());
  for (const auto& l : lib)
    EXPECT_TRUE(runtime(l)) << "libmainboard_spans needs " << l;
  for (const auto& l : needed(MAINBOARD_SPANS_ONLY))
    EXPECT_TRUE(runtime(l) || l.rfind("libmainboard_spans.so", 0) == 0)
        << "a spans-only program needs " << l;
  // fmt and spdlog are compiled into the full library; hwloc is loaded when the topology is
  // first read, elfutils when a frame is first named, not when the library is.
  std::set<std::string> full;
  for (const auto& l : needed(MAINBOARD_FULL_LIBRARY))
    full.insert(l.substr(0, l.find(".so")));
  EXPECT_TRUE(full.count("libmainboard_spans")) << "libmainboard does not need its spans";
  for (const char* other :
       {"libhwloc", "libudev", "libfmt", "libspdlog", "libdw", "libelf", "libmicrohttpd"})
    EXPECT_FALSE(full.count(other)) << "libmainboard links " << other;
}

// `mainboard --version` starts on the C library and libgcc_s alone, `snapshot` and `check` without
// elfutils, compression, HTTP, TLS or C++ shared libraries: a topology reading loads hwloc, the
// profiler elfutils, `serve` libmicrohttpd, when they start.
TEST(Startup, TheCommandLinksNoProfilingOrHttpLibrary) {
  std::set<std::string> linked;
  for (const auto& l : needed(MAINBOARD_CLI))
    linked.insert(l.substr(0, l.find(".so")));
  for (const char* lazy :
       {"libhwloc", "libudev", "libmicrohttpd", "libgnutls", "libfmt", "libspdlog"})
    EXPECT_FALSE(linked.count(lazy)) << "mainboard links " << lazy;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // The sanitizer builds link elfutils and the shared C++ runtime (src/CMakeLists.txt).
  for (const char* lazy : {"libdw", "libelf", "libz", "liblzma"})
    EXPECT_FALSE(linked.count(lazy)) << "mainboard links " << lazy;
  EXPECT_FALSE(linked.count("libstdc++")) << "the C++ runtime is linked into the command";
#if defined(__x86_64__)
  // Its three functions of libm come from the static archive (src/cli/CMakeLists.txt).
  EXPECT_FALSE(linked.count("libm")) << "mainboard loads libm";
#endif
#endif
}

// What the loader and the command open, as strace sees it: `--version` no library but the C
// library's family, a first `snapshot` hwloc as well (its topology; the next ones find it in the
// cache until something it depends on changes), neither of them elfutils.
TEST(Startup, TheVersionOpensOnlyTheCLibraryAndTheSnapshotLoadsHwloc) {
  TempDir dir;
  auto cache = dir.path / "cache";
  auto libraries = [&](std::vector<std::string> args) {
    auto log = dir.path / "strace.log";
    // -z: the opens that succeeded, each on one line (none split by another thread's call).
    std::vector<std::string> argv{
        "strace", "-f", "-z", "-qq", "-o", log.string(), "-e", "trace=open,openat", MAINBOARD_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, {{"ASAN_OPTIONS", "detect_leaks=0"}, {"XDG_CACHE_HOME", cache.string()}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> opened;
    std::regex re(R"re(open(?:at)?\(.*"[^"]*/(lib[^"/]+\.so[^"/]*)")re");
    std::istringstream lines(read(log));
    std::smatch m;
    for (std::string line; std::getline(lines, line);)
      if (std::regex_search(line, m, re))
        opened.insert(m[1].str().substr(0, m[1].str().find(".so")));
    return opened;
  };
  auto version = libraries({"--version"});
  ASSERT_TRUE(version.count("libc")) << "strace saw no library opened";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizer builds link elfutils (and what it needs) at start: src/CMakeLists.txt.
  for (const char* linked : {"libdw", "libelf", "libz", "liblzma", "libbz2", "libzstd", "libtsan"})
    version.erase(linked);
#endif
  for (const auto& lib : version)
    EXPECT_TRUE(runtime(lib + ".so")) << "--version opened " << lib;
  auto snapshot = libraries({"snapshot", "--json", "--no-toolchain"});
  EXPECT_TRUE(snapshot.count("libhwloc"));
  EXPECT_FALSE(libraries({"snapshot", "--json", "--no-toolchain"}).count("libhwloc"));
  EXPECT_TRUE(libraries({"--no-cache", "snapshot", "--json"}).count("libhwloc"));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_FALSE(snapshot.count("libdw"));  // the sanitizer builds link it (src/CMakeLists.txt)
#endif
  EXPECT_FALSE(snapshot.count("libmicrohttpd"));
}

// A snapshot whose versions and topology all come from the tool cache starts no thread (they
// cost more than they saved there); a first one, with programs to start, does.
TEST(Startup, AWarmSnapshotStartsNoThread) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the thread sanitizer runs a thread of its own";
#else
  TempDir dir;
  auto threads_started = [&] {
    auto log = dir.path / "strace.log";
    auto r =
        run({"strace", "-f", "-qq", "-o", log.string(), "-e", "trace=clone,clone3", MAINBOARD_CLI,
             "snapshot", "--json"},
            {{"ASAN_OPTIONS", "detect_leaks=0"}, {"XDG_CACHE_HOME", (dir.path / "c").string()}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(read(log));
    int clones = 0;
    for (std::string line; std::getline(lines, line);)
      clones += line.find("clone") != std::string::npos && line.find("= -1") == std::string::npos &&
                line.find("CLONE_THREAD") != std::string::npos;
    return clones;
  };
  EXPECT_GT(threads_started(), 0) << "the first snapshot ran its probes on one thread";
  // dmidecode, never cached, keeps a thread where this user can read an SMBIOS table.
  int dmidecode = 0;
  for (const char* table : {"/sys/firmware/dmi/tables/DMI", "/dev/mem"})
    if (::access(table, R_OK) == 0) dmidecode = 1;
  EXPECT_EQ(threads_started(), dmidecode);
#endif
}

TEST(SpansOnly, StartsNoProcessAndOpensNoHardwareOrVendorLibrary) {
  TempDir dir;
  auto log = dir.path / "strace.log";
  auto out = dir.path / "run.json";
  // LeakSanitizer stops the world with a helper process of its own: not the program's doing.
  auto r = run({"strace", "-f", "-qq", "-o", log.string(), "-e",
                "trace=execve,execveat,fork,vfork,clone,clone3,open,openat", MAINBOARD_SPANS_ONLY,
                out.string()},
               {{"ASAN_OPTIONS", "detect_leaks=0"}});
  ASSERT_TRUE(r.started) << r.error;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = read(log);
  ASSERT_FALSE(text.empty());
  std::size_t execs = 0, threads = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("execve(") != std::string::npos || line.find("execveat(") != std::string::npos)
      ++execs;
    if (line.find("fork(") != std::string::npos) ADD_FAILURE() << "a process: " << line;
    if (line.find("clone") != std::string::npos && line.find("= ") != std::string::npos) {
      if (line.find("CLONE_THREAD") == std::string::npos)
        ADD_FAILURE() << "a process: " << line;
      else
        ++threads;
    }
    for (const char* lib : {"hwloc", "nvidia-ml", "libcuda", "cupti", "libdw", "libelf", "libfmt",
                            "spdlog", "dmidecode", "/sys/devices", "/proc/cpuinfo"})
      EXPECT_EQ(line.find(lib), std::string::npos) << "opened: " << line;
  }
  EXPECT_EQ(execs, 1u) << text;    // the program itself
  EXPECT_EQ(threads, 1u) << text;  // its own worker, none of the session's
  // The profile is complete, and says what it did not collect and why.
  auto j = nlohmann::json::parse(read(out));
  EXPECT_TRUE(j["machine"].is_null());
  std::set<std::string> paths(j["paths"].begin(), j["paths"].end());
  EXPECT_EQ(paths, (std::set<std::string>{"step", "step/work", "worker", "worker/work",
                                          "named at run time"}));
  ASSERT_EQ(j["unavailable"].size(), 1u) << j["unavailable"];
  EXPECT_EQ(j["unavailable"][0],
            "device: not sampled: this program links only mainboard::spans (link "
            "mainboard::mainboard)");
}

TEST(SpansOnly, TheCommandReadsItsProfile) {
  TempDir dir;
  auto out = dir.path / "run.json";
  ASSERT_EQ(run({MAINBOARD_SPANS_ONLY, out.string()}).exit_code, 0);
  auto r = run({MAINBOARD_CLI, "profile", "report", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step/work"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  step  "), std::string::npos) << r.out;
  auto j = run({MAINBOARD_CLI, "profile", "report", "--json", out.string()});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto report = nlohmann::json::parse(j.out);
  bool found = false;
  for (const auto& s : report["stats"])
    if (s["path"] == "step/work") {
      found = true;
      EXPECT_EQ(s["calls"], 100);
    }
  EXPECT_TRUE(found) << j.out;
}

TEST(SpansOnly, AutoInstrumentedFunctionsAreNamedWhereTheProfileIsRead) {
  TempDir dir;
  auto out = dir.path / "run.json";
  auto r = run({MAINBOARD_INSTRUMENTED, out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The program recorded addresses and the maps of their module, nothing more.
  auto j = nlohmann::json::parse(read(out));
  std::string paths = j["paths"].dump();
  EXPECT_NE(paths.find("@0x"), std::string::npos) << paths;
  ASSERT_FALSE(j["function_maps"].empty());
  bool executable = false;
  for (const auto& line : j["function_maps"])
    if (line.get<std::string>().find("instrumented") != std::string::npos) executable = true;
  EXPECT_TRUE(executable) << j["function_maps"];
  // The reader names them.
  auto report = run({MAINBOARD_CLI, "profile", "report", out.string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(
      report.out.find("(anonymous namespace)::outer_loop()/(anonymous namespace)::leaf_step(int)"),
      std::string::npos)
      << report.out;
  EXPECT_EQ(report.out.find("@0x"), std::string::npos) << report.out;
}

TEST(SpansOnly, LinkedWithTheFullLibraryTheSameSessionGetsItsCollectors) {
  TempDir dir;
  auto out = dir.path / "run.json";
  auto r = run({MAINBOARD_SPANS_ONLY_FULL, out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool full = false;
  for (const auto& l : needed(MAINBOARD_SPANS_ONLY_FULL))
    if (l.rfind("libmainboard.so", 0) == 0) full = true;
  EXPECT_TRUE(full) << "dropped by --as-needed";
  auto j = nlohmann::json::parse(read(out));
  // The device feature ran (this machine may have no GPU: then it says so in its own words).
  for (const auto& u : j["unavailable"])
    EXPECT_EQ(u.get<std::string>().find("links only mainboard::spans"), std::string::npos) << u;
  EXPECT_FALSE(j["machine"].is_null());  // device evidence asked for: the machine is described
}
