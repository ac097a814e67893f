#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

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
  auto cache_file = dir.path() / "cache" / "tools.json";

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
  ToolCache cache(cache_file);
  EXPECT_EQ(Toolchain::probe(runner, probes, &cache).tools.at(0).version, "2.0.0");
  EXPECT_EQ(count_lines(counter), 2);
}

TEST(ToolCache, CorruptFileIsRebuilt) {
  TempDir dir;
  auto file = dir.write("tools.json", "{\"version\": 1, \"entries\": [garbage");
  ToolCache cache(file);
  EXPECT_FALSE(cache.lookup("anything"));
  cache.store("k", std::string("1.0"));
  cache.save();
  ToolCache again(file);
  EXPECT_EQ(again.lookup("k"), std::optional<std::string>("1.0"));
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
  ToolCache cache(dir.path() / "tools.json");
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
