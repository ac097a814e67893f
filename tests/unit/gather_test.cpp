// Gather this machine, then probe the gathered tree: it must describe the same host.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "mainboard/json.hpp"
#include "mainboard/error.hpp"
#include "mainboard/gather.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"

using namespace mainboard;

TEST(Gather, TheGatheredTreeReproducesThisHost) {
  TempDir dir;
  auto tree = dir.path() / "host";
  auto report = gather_host(tree, {.hostname = "replayed"});
  EXPECT_GT(report.files, 20u);

  Machine live;
  Machine::Options o;
  o.sysroot = tree;
  Machine replay(o);
  auto a = live.snapshot();
  auto b = replay.snapshot();

  EXPECT_EQ(b.hostname, "replayed");  // the real hostname is never written
  EXPECT_EQ(b.cpu.info.label, a.cpu.info.label);
  EXPECT_EQ(b.cpu.info.architecture, a.cpu.info.architecture);
  EXPECT_EQ(b.cpu.info.microarchitecture, a.cpu.info.microarchitecture);
  EXPECT_EQ(b.cpu.info.packages, a.cpu.info.packages);
  EXPECT_EQ(b.cpu.info.cores, a.cpu.info.cores);
  EXPECT_EQ(b.cpu.info.threads, a.cpu.info.threads);
  EXPECT_EQ(b.cpu.info.caches, a.cpu.info.caches);
  EXPECT_EQ(b.cpu.info.topology_source, "hwloc");
  EXPECT_EQ(b.memory.total_bytes, a.memory.total_bytes);
  EXPECT_EQ(b.cgroup_memory.supported, a.cgroup_memory.supported);
  EXPECT_EQ(b.cgroup_memory.version, a.cgroup_memory.version);
  EXPECT_EQ(b.cgroup_memory.limit_bytes, a.cgroup_memory.limit_bytes);
  EXPECT_EQ(b.board, a.board);
  EXPECT_EQ(b.environment.user, a.environment.user);
  EXPECT_EQ(b.environment.group, a.environment.group);
  EXPECT_EQ(b.environment.scheduler, a.environment.scheduler);
  ASSERT_TRUE(a.toolchain && b.toolchain);
  EXPECT_EQ(b.toolchain->tools, a.toolchain->tools);
  EXPECT_EQ(b.disk.devices, a.disk.devices);
  EXPECT_EQ(b.scratch.path, a.scratch.path);
  EXPECT_EQ(b.scratch.tier, a.scratch.tier);
  EXPECT_EQ(b.memory_hardware.cards, a.memory_hardware.cards);
  EXPECT_EQ(b.gpus.size(), a.gpus.size());
}

TEST(Gather, ScrubsAndRefusesToOverwrite) {
  TempDir dir;
  dir.write("existing", "x");
  EXPECT_THROW(gather_host(dir.path()), Error);
  auto report = gather_host(dir.path(), {.hostname = "anon", .force = true});
  EXPECT_GT(report.files, 0u);
  std::ifstream in(dir.path() / "proc/sys/kernel/hostname");
  std::string name;
  std::getline(in, name);
  EXPECT_EQ(name, "anon");
  std::ifstream cmds(dir.path() / ".mainboard/commands.json");
  auto j = nlohmann::json::parse(cmds);
  for (const auto& c : j["commands"])
    EXPECT_EQ(c["stdout"].get<std::string>().find("Serial Number: "), std::string::npos)
        << "a serial number was recorded";
}
