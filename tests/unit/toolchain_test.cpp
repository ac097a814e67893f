#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>

#include <fstream>

#include "core/pyenv.hpp"
#include "mainboard/cuda.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/toolchain.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {
CommandResult printed(const std::string& out) {
  CommandResult r;
  r.exit_code = 0;
  r.out = out;
  return r;
}

int count_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}
}  // namespace

TEST(ToolProbe, VersionsFromEachToolsOwnWords) {
  ReplayRunner runner(
      {{"nvcc", "/cuda/bin/nvcc"}, {"hipcc", "/opt/rocm/bin/hipcc"}, {"cmake", "/usr/bin/cmake"}},
      {{{"/cuda/bin/nvcc", "--version"},
        printed("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, "
                "V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n")},
       {{"/opt/rocm/bin/hipcc", "--version"},
        printed("HIP version: 6.1.40091-a8dbc0c19\nAMD clang version 17.0.0\n")},
       {{"/usr/bin/cmake", "--version"}, printed("cmake version 3.28.3\n")}});
  auto tc = Toolchain::probe(runner);
  ASSERT_EQ(tc.tools.size(), 3u);
  EXPECT_EQ(tc.find("nvcc")->version, "13.0.88");
  EXPECT_EQ(tc.find("hipcc")->version, "6.1.40091");
  EXPECT_EQ(tc.find("cmake")->version, "3.28.3");
  EXPECT_EQ(tc.find("gcc"), nullptr);
  auto groups = tc.by_category();
  EXPECT_EQ(groups[ToolCategory::cuda].size(), 1u);
  EXPECT_EQ(groups[ToolCategory::build][0].path, "/usr/bin/cmake");
}

TEST(ToolProbe, CandidateBinariesInOrderAndUnparseableVersions) {
  ToolProbe probe{"ninja", ToolCategory::build, {"ninja", "ninja-build"}};
  ReplayRunner runner({{"ninja-build", "/usr/bin/ninja-build"}},
                      {{{"/usr/bin/ninja-build", "--version"}, printed("no digits here\n")}});
  auto tool = probe.detect(runner);
  EXPECT_TRUE(tool.available);
  EXPECT_EQ(tool.path, "/usr/bin/ninja-build");
  EXPECT_FALSE(tool.version);

  ToolProbe bad{"bad", ToolCategory::build, {"ninja-build"}, {"--version"}, "(unclosed"};
  EXPECT_FALSE(bad.detect(runner).version);  // a broken pattern is logged, not thrown
  ToolProbe absent{"x", ToolCategory::c, {"nothere"}};
  EXPECT_FALSE(absent.detect(runner).available);
}

TEST(ToolCache, SecondProbeSpawnsNothingUntilTheBinaryChanges) {
  TempDir dir;
  auto counter = dir.path() / "runs";
  auto tool = dir.write("bin/mytool",
                        "#!/bin/sh\necho run >> '" + counter.string() + "'\necho 'mytool 1.2.3'\n");
  ::chmod(tool.c_str(), 0755);
  LocalRunner runner((dir.path() / "bin").string());
  std::vector<ToolProbe> probes = {{"mytool", ToolCategory::build, {"mytool"}}};
  auto cache_file = dir.path() / "cache" / "tools.cache";

  {
    ToolCache cache(cache_file);
    auto tc = Toolchain::probe(runner, probes, &cache);
    EXPECT_EQ(tc.tools.at(0).version, "1.2.3");
    EXPECT_EQ(cache.misses(), 1u);
  }
  EXPECT_EQ(count_lines(counter), 1);
  {
    ToolCache cache(cache_file);
    auto tc = Toolchain::probe(runner, probes, &cache);
    EXPECT_EQ(tc.tools.at(0).version, "1.2.3");
    EXPECT_EQ(cache.hits(), 1u);
  }
  EXPECT_EQ(count_lines(counter), 1);  // served from the cache

  // A new build of the tool (different size) is probed again.
  dir.write("bin/mytool",
            "#!/bin/sh\necho run >> '" + counter.string() + "'\necho 'mytool 2.0.0 (rebuilt)'\n");
  {
    ToolCache cache(cache_file);
    EXPECT_EQ(Toolchain::probe(runner, probes, &cache).tools.at(0).version, "2.0.0");
  }
  EXPECT_EQ(count_lines(counter), 2);
  // The first build's entry is gone from the file: one version line for the tool, the new one.
  std::ifstream in(cache_file);
  int entries = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("v\t" + tool.string() + "|", 0) == 0) {
      ++entries;
      EXPECT_NE(line.find("\t2.0.0"), std::string::npos) << line;
    }
  EXPECT_EQ(entries, 1);
}

TEST(ToolCache, CorruptFileIsRebuilt) {
  TempDir dir;
  for (const std::string& text :
       {std::string("mainboard tool cache 4\nv\tk"),
        std::string("{\"version\": 2, \"entries\": [garb"),
        std::string("mainboard tool cache 4\n\0\0\t\tv\n\n\nd\t\t\t\t\t\t\n", 39),
        std::string(1 << 20, '\t'), std::string()}) {
    auto file = dir.write("tools.cache", text);
    ToolCache cache(file);
    EXPECT_FALSE(cache.lookup("k")) << text.substr(0, 40);
    EXPECT_FALSE(cache.warm());
    cache.store("k", std::string("1.0"));
    cache.save();
    ToolCache again(file);
    EXPECT_EQ(again.lookup("k"), std::optional<std::string>("1.0"));
    EXPECT_TRUE(again.warm());
  }
}

TEST(ToolCache, AKeyOrVersionThatCannotBeOneFieldIsNotKept) {
  TempDir dir;
  auto file = dir.path() / "tools.cache";
  {
    ToolCache cache(file);
    cache.store("/opt/odd\tdir/cc|1|2", std::string("1.0"));
    cache.store("/usr/bin/cc|1|2", std::string("12.2\nv\tinjected\t9.9"));
    cache.store("/usr/bin/gcc|1|2", std::string("12.2.0"));
    cache.store("/usr/bin/icx|1|2", std::nullopt);
    cache.save();
  }
  ToolCache again(file);
  EXPECT_FALSE(again.lookup("/opt/odd\tdir/cc|1|2"));
  EXPECT_FALSE(again.lookup("/usr/bin/cc|1|2"));
  EXPECT_FALSE(again.lookup("injected"));
  EXPECT_EQ(again.lookup("/usr/bin/gcc|1|2"), std::optional<std::string>("12.2.0"));
  auto none = again.lookup("/usr/bin/icx|1|2");  // known to print no version
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

namespace {
/// Sets a directory's mtime `seconds_ago`, keeping it exactly (nanoseconds included).
timespec set_mtime(const std::filesystem::path& dir, timespec when) {
  timespec times[2] = {when, when};
  EXPECT_EQ(::utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
  return when;
}
timespec seconds_ago(int seconds) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  now.tv_sec -= seconds;
  return now;
}
}  // namespace

TEST(ToolCache, AbsentNamesAreNotLookedForAgainUntilTheirDirectoryChanges) {
  TempDir dir;
  dir.mkdir("one");
  dir.mkdir("two");
  auto one = dir.path() / "one", two = dir.path() / "two";
  std::string path = one.string() + ":" + two.string();
  auto file = dir.path() / "tools.cache";
  auto old_two = set_mtime(two, seconds_ago(100));
  set_mtime(one, seconds_ago(100));
  {
    ToolCache cache(file);
    EXPECT_FALSE(cache.find_on_path("mytool", path));
    cache.save();
  }
  // mytool appears in `two` while its mtime stays what it was (which only this test can do):
  // the cache does not look for it there, which shows it no longer stats absent names.
  auto tool = dir.write("two/mytool", "#!/bin/sh\n");
  ::chmod(tool.c_str(), 0755);
  set_mtime(two, old_two);
  EXPECT_FALSE(ToolCache(file).find_on_path("mytool", path));
  // Any change of the directory (here its mtime) and it is read again.
  set_mtime(two, seconds_ago(50));
  {
    ToolCache cache(file);
    EXPECT_EQ(cache.find_on_path("mytool", path), tool.string());
    cache.save();
  }
  // A name a directory holds is checked each time, as a shell does: no longer executable, the
  // next directory's is found.
  auto first = dir.write("one/mytool", "#!/bin/sh\n");
  ::chmod(first.c_str(), 0755);
  set_mtime(one, seconds_ago(40));
  EXPECT_EQ(ToolCache(file).find_on_path("mytool", path), first.string());
  {
    ToolCache cache(file);
    EXPECT_EQ(cache.find_on_path("mytool", path), first.string());
    cache.save();
  }
  ::chmod(first.c_str(), 0644);
  EXPECT_EQ(ToolCache(file).find_on_path("mytool", path), tool.string());
}

TEST(ToolCache, ADirectoryChangedJustBeforeItWasReadIsReadAgain) {
  TempDir dir;
  dir.mkdir("bin");
  auto bin = dir.path() / "bin";
  auto file = dir.path() / "tools.cache";
  auto now = set_mtime(bin, seconds_ago(0));  // changed in the tick it is read
  {
    ToolCache cache(file);
    EXPECT_FALSE(cache.find_on_path("mytool", bin.string()));
    cache.save();
  }
  // Another change in the same tick would leave the same mtime: not trusted, so it is seen.
  auto tool = dir.write("bin/mytool", "#!/bin/sh\n");
  ::chmod(tool.c_str(), 0755);
  set_mtime(bin, now);
  EXPECT_EQ(ToolCache(file).find_on_path("mytool", bin.string()), tool.string());
}

TEST(ToolCache, AnIndexThatIsNotWhatItShouldBeIsLeftOut) {
  TempDir dir;
  auto tool = dir.write("bin/mytool", "#!/bin/sh\n");
  ::chmod(tool.c_str(), 0755);
  auto bin = (dir.path() / "bin").string();
  struct stat st {};
  ASSERT_EQ(::stat(bin.c_str(), &st), 0);
  auto mtime = std::to_string(std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec);
  // Each line would say "mytool is not in bin" but is not all a directory's line must be.
  for (const std::string& line : std::vector<std::string>{
           "d\t" + bin + "\tx\t9000000000000000000\t\tmytool",
           "d\t" + bin + "\t" + mtime + "\t9000000000000000000\t\tmytool\textra",
           "d\t" + bin + "\t" + mtime + "\t9000000000000000000\tmytool",
           "d\t" + bin + "\t" + mtime + "x\t9000000000000000000\t\tmytool",
           "d\t" + bin + "\t1\t9000000000000000000\t\tmytool",  // mtime 1 is not bin's
           "D\t" + bin + "\t" + mtime + "\t9000000000000000000\t\tmytool"}) {
    auto file = dir.write("tools.cache", "mainboard tool cache 4\n" + line + "\n");
    ToolCache cache(file);
    EXPECT_EQ(cache.find_on_path("mytool", bin), tool.string()) << line;
    cache.save();
    EXPECT_EQ(ToolCache(file).find_on_path("mytool", bin), tool.string()) << line;
  }
}

TEST(ToolCache, ReadsItsOwnLayoutAndIgnoresTheFormerOne) {
  TempDir dir;
  auto tool = dir.write("bin/mytool", "#!/bin/sh\n");
  ::chmod(tool.c_str(), 0755);
  auto bin = (dir.path() / "bin").string();
  struct stat st {};
  ASSERT_EQ(::stat(bin.c_str(), &st), 0);
  auto mtime = std::to_string(std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec);
  // Both say "mytool is not in bin" for bin as it is now: the current layout is believed (the
  // name is not looked for), the former one (version 2, JSON) is not read.
  auto current = dir.write("current.cache",
                           "mainboard tool cache 4\nv\t/usr/bin/gcc|1|2\t12.2.0\nd\t" + bin + "\t" +
                               mtime + "\t9000000000000000000\tgcc\tother/mytool/cc\n");
  EXPECT_FALSE(ToolCache(current).find_on_path("mytool", bin));
  EXPECT_TRUE(ToolCache(current).warm());
  auto former = dir.write("former.json", R"({"version":2,"entries":{"/usr/bin/gcc|1|2":"12.2.0"},)"
                                         R"("path_index":{")" +
                                             bin + R"(":{"mtime_ns":)" + mtime +
                                             R"(,"read_ns":9000000000000000000,"held":"gcc",)"
                                             R"("absent":"other/mytool/cc"}}})");
  EXPECT_EQ(ToolCache(former).find_on_path("mytool", bin), tool.string());
  EXPECT_FALSE(ToolCache(former).warm());
  // Version 3 (tools keyed by their real path) is not read either.
  auto three =
      dir.write("three.cache", "mainboard tool cache 3\nv\t/usr/bin/gcc|1|2\t12.2.0\nd\t" + bin +
                                   "\t" + mtime + "\t9000000000000000000\tgcc\tother/mytool/cc\n");
  EXPECT_EQ(ToolCache(three).find_on_path("mytool", bin), tool.string());
  EXPECT_FALSE(ToolCache(three).warm());
}

TEST(ToolCache, AKeyNamesTheFileAPathResolvesTo) {
  TempDir dir;
  // Two builds of one size and mtime; the tool's path a symlink to the first, then the second.
  auto a = dir.write("opt/a/mytool", "#!/bin/sh\necho 1.0\n");
  auto b = dir.write("opt/b/mytool", "#!/bin/sh\necho 2.0\n");
  const struct timespec when[2] = {{1700000000, 0}, {1700000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, a.c_str(), when, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, b.c_str(), when, 0), 0);
  std::filesystem::create_directories(dir.path() / "bin");
  auto link = dir.path() / "bin" / "mytool";
  std::filesystem::create_symlink(a, link);
  ToolProbe probe{"mytool", ToolCategory::build, {"mytool"}};
  auto first = ToolCache::key_for(link.string(), probe);
  ASSERT_TRUE(first);
  EXPECT_EQ(ToolCache::key_for(link.string(), probe), first);  // the same file, the same key
  std::filesystem::remove(link);
  std::filesystem::create_symlink(b, link);
  auto second = ToolCache::key_for(link.string(), probe);
  ASSERT_TRUE(second);
  EXPECT_NE(*second, *first);
  // An update in place (another size) is another key; a path that names nothing has none.
  { std::ofstream(b, std::ios::app) << "# patched\n"; }
  EXPECT_NE(ToolCache::key_for(link.string(), probe), second);
  std::filesystem::remove(b);
  EXPECT_FALSE(ToolCache::key_for(link.string(), probe));
}

TEST(ToolCache, TimeoutsAreNotRemembered) {
  TempDir dir;
  auto tool = dir.write("bin/slowtool", "#!/bin/sh\nsleep 30\n");
  ::chmod(tool.c_str(), 0755);
  LocalRunner runner((dir.path() / "bin").string());
  ToolProbe slow{"slowtool", ToolCategory::build, {"slowtool"}};
  slow.timeout = std::chrono::milliseconds(200);
  std::vector<ToolProbe> probes = {slow};
  auto key = ToolCache::key_for(tool.string(), probes[0]);
  ASSERT_TRUE(key);
  ToolCache cache(dir.path() / "tools.cache");
  auto tc = Toolchain::probe(runner, probes, &cache);
  EXPECT_FALSE(tc.tools.at(0).version);
  EXPECT_FALSE(cache.lookup(*key));
}

TEST(CompilerConfig, CmakeArguments) {
  CompilerConfig cfg;
  cfg.c_compiler = "/usr/bin/gcc";
  cfg.cuda_architectures = "90";
  EXPECT_EQ(cfg.cmake_args(), (std::vector<std::string>{"-DCMAKE_C_COMPILER=/usr/bin/gcc",
                                                        "-DCMAKE_CUDA_ARCHITECTURES=90"}));
}

TEST(CudaStack, SaysWhenNvccIsNewerThanTheDriverSupports) {
  CudaStack c;
  c.cuda_driver_version = "12.4";
  c.nvcc_version = "13.0.88";
  EXPECT_NE(c.toolkit_newer_than_driver().find("nvcc is CUDA 13.0, newer than the 12.4"),
            std::string::npos);
  c.nvcc_version = "12.4.131";
  EXPECT_EQ(c.toolkit_newer_than_driver(), "");
  c.nvcc_version = "12.2";
  EXPECT_EQ(c.toolkit_newer_than_driver(), "");  // older toolkits run on newer drivers
  c.nvcc_version = "12.10";
  EXPECT_NE(c.toolkit_newer_than_driver(), "");  // 12.10 > 12.4, not a string comparison
  c.cuda_driver_version = "";
  EXPECT_EQ(c.toolkit_newer_than_driver(), "");  // no driver: nothing to compare
  c.cuda_driver_version = "garbage";
  EXPECT_EQ(c.toolkit_newer_than_driver(), "");
}

namespace {

/// A pyenv tree: a shim as pyenv writes it, pyenv itself (which would answer a wrong version,
/// so a test sees when it ran), installed versions and a "system" python3 outside it.
struct PyenvTree {
  TempDir dir;
  std::filesystem::path root = dir.path() / "pyenv";
  std::filesystem::path shim;

  void executable(const std::filesystem::path& rel, const std::string& text) const {
    auto p = dir.write(rel.string(), text);
    ::chmod(p.c_str(), 0755);
  }
  void python(const std::string& where, const std::string& version) const {
    executable(where, "#!/bin/sh\necho 'Python " + version + "'\n");
  }

  PyenvTree() {
    shim = root / "shims" / "python3";
    executable("pyenv/shims/python3",
               "#!/usr/bin/env bash\nset -e\n"
               "[ -n \"$PYENV_DEBUG\" ] && set -x\n\nprogram=\"${0##*/}\"\n\n"
               "export PYENV_ROOT=\"" +
                   root.string() + "\"\nexec \"" + root.string() +
                   "/libexec/pyenv\" exec \"$program\" \"$@\"\n");
    executable("pyenv/libexec/pyenv", "#!/bin/sh\necho 'Python 0.0.0 (pyenv ran)'\n");
    for (const char* v : {"3.9.18", "3.12.0", "3.12.9", "3.12.10", "3.12.11rc1", "3.13.0"})
      python("pyenv/versions/" + std::string(v) + "/bin/python3", v);
    python("usr/bin/python3", "3.11.2");
    dir.write("pyenv/version", "# the global choice\n3.12\n");
    dir.mkdir("work/project/src");
  }

  core::PyenvContext context(std::optional<std::string> pyenv_version = std::nullopt,
                             const std::string& cwd = "work/project/src") const {
    core::PyenvContext c;
    c.env = [pyenv_version](std::string_view key) {
      return key == "PYENV_VERSION" ? pyenv_version : std::nullopt;
    };
    c.directory = (dir.path() / cwd).string();
    c.path = (root / "shims").string() + ":" + (dir.path() / "usr/bin").string();
    return c;
  }
  std::string version_bin(const std::string& v) const {
    return (root / "versions" / v / "bin" / "python3").string();
  }
};

}  // namespace

TEST(PyenvShim, ChoosesAsPyenvDoesWithoutRunningIt) {
  PyenvTree t;
  // The global version file names a prefix: the newest release it starts (3.12.10, numerically
  // past 3.12.9; a release candidate is not a release).
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context()), t.version_bin("3.12.10"));
  // A .python-version in the directory or a parent wins over the global file.
  t.dir.write("work/project/.python-version", "3.9.18\n");
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context()), t.version_bin("3.9.18"));
  // PYENV_VERSION wins over both; a list is tried in order; "system" is the next python3 on
  // PATH outside pyenv.
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context("3.13.0")), t.version_bin("3.13.0"));
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context("system:3.13.0")),
            (t.dir.path() / "usr/bin/python3").string());
  // A version without the program is passed over, as `pyenv which` does.
  t.dir.mkdir("pyenv/versions/3.10.0/bin");
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context("3.10.0:3.9.18")),
            t.version_bin("3.9.18"));
  // A name it cannot place, even before one it can: pyenv itself must be asked (it refuses a
  // choice naming what is not installed, and knows forms this does not).
  EXPECT_FALSE(core::pyenv_shim_target(t.shim.string(), t.context("2.7")));
  EXPECT_FALSE(core::pyenv_shim_target(t.shim.string(), t.context("3.8.1:system")));
  EXPECT_FALSE(core::pyenv_shim_target(t.shim.string(), t.context("pypy3.10:3.13.0")));
  EXPECT_FALSE(core::pyenv_shim_target(t.shim.string(), t.context("3.13.0/envs/tools")));
  // Not a shim: an interpreter, a missing file, a script that merely mentions pyenv.
  EXPECT_FALSE(core::pyenv_shim_target(t.version_bin("3.13.0"), t.context()));
  EXPECT_FALSE(core::pyenv_shim_target((t.dir.path() / "nothing").string(), t.context()));
  t.executable("bin/python3", "#!/bin/sh\n# see pyenv\nexec python3.11 \"$@\"\n");
  EXPECT_FALSE(core::pyenv_shim_target((t.dir.path() / "bin/python3").string(), t.context()));
  // A version file naming nothing means "system", as for pyenv; one too large to be a version
  // file, or naming nothing installed, leaves pyenv to be asked. Never a crash.
  t.dir.write("work/project/.python-version", "# nothing chosen\n\n");
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context()),
            (t.dir.path() / "usr/bin/python3").string());
  t.dir.write("work/project/.python-version", std::string(200000, '3'));
  EXPECT_FALSE(core::pyenv_shim_target(t.shim.string(), t.context()));
  t.dir.write("work/project/.python-version", "\x01\xff ../.. /etc\n");
  EXPECT_FALSE(core::pyenv_shim_target(t.shim.string(), t.context()));
  // The first word of a line is its version, as pyenv reads the file.
  t.dir.write("work/project/.python-version", "3.13.0 trailing words\n");
  EXPECT_EQ(core::pyenv_shim_target(t.shim.string(), t.context()), t.version_bin("3.13.0"));
}

TEST(PyenvShim, TheToolchainAsksTheChosenInterpreterAndKeysTheCacheOnIt) {
  PyenvTree t;
  ::setenv("PYENV_VERSION", "3.13.0", 1);
  LocalRunner runner((t.root / "shims").string() + ":" + (t.dir.path() / "usr/bin").string());
  std::vector<ToolProbe> probes = {{"python", ToolCategory::python, {"python3"}}};
  ToolCache cache(t.dir.path() / "cache.json");
  auto tc = Toolchain::probe(runner, probes, &cache);
  ASSERT_EQ(tc.tools.size(), 1u);
  EXPECT_EQ(tc.tools[0].path, t.shim.string());  // what PATH finds
  EXPECT_EQ(tc.tools[0].version, "3.13.0");      // what it runs, pyenv not started
  // Another choice through the same (unchanged) shim is not served the first one's version.
  ::setenv("PYENV_VERSION", "3.9.18", 1);
  EXPECT_EQ(Toolchain::probe(runner, probes, &cache).tools.at(0).version, "3.9.18");
  ::unsetenv("PYENV_VERSION");
}
