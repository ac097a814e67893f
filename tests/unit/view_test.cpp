#include <gtest/gtest.h>

#include <cstdlib>

#include "mainboard/snapshot.hpp"
#include "view/format.hpp"
#include "view/summary.hpp"

using namespace mainboard;
using namespace mainboard::view;

TEST(Format, Bytes) {
  EXPECT_EQ(bytes(0), "0 B");
  EXPECT_EQ(bytes(1023), "1023 B");
  EXPECT_EQ(bytes(1536), "1.50 KiB");
  EXPECT_EQ(bytes(80ull << 30), "80.0 GiB");
  EXPECT_EQ(bytes(512ull << 30), "512 GiB");
  EXPECT_EQ(bytes(~0ull), "16.0 EiB");
}

TEST(Format, CapacityPairSharesAUnit) {
  EXPECT_EQ(capacity_pair(12ull << 30, 80ull << 30), "12.0 / 80.0 GiB");
  EXPECT_EQ(capacity_pair(0, 80ull << 30), "0.00 / 80.0 GiB");
  EXPECT_EQ(capacity_pair(327ull << 20, 23ull << 30), "327 MiB / 23.0 GiB");
  // 5 MiB of 80 GiB would print as 0.00 GiB: it keeps its own unit.
  EXPECT_EQ(capacity_pair(5ull << 20, 80ull << 30), "5.00 MiB / 80.0 GiB");
}

TEST(Format, ColourDecision) {
  ::unsetenv("NO_COLOR");
  EXPECT_TRUE(want_color("always", -1));
  EXPECT_FALSE(want_color("never", 1));
  EXPECT_FALSE(want_color("auto", -1));  // not a terminal
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_TRUE(want_color("always", 1));  // an explicit flag wins over the variable
  EXPECT_FALSE(want_color("auto", 1));   // the variable over a terminal
  ::unsetenv("NO_COLOR");
  Style plain{false};
  EXPECT_EQ(plain.label("x"), "x");
  Style colored{true};
  EXPECT_NE(colored.label("x"), "x");
  EXPECT_NE(colored.label("x").find("\x1b["), std::string::npos);
}

TEST(Summary, AScratchInRamSaysItCountsAgainstMemoryAndTheCap) {
  mainboard::MachineSnapshot s;
  s.scratch.found = true;
  s.scratch.path = "/dev/shm";
  s.scratch.fs_type = "tmpfs";
  s.scratch.tier = mainboard::StorageTier::memory;
  s.cgroup_memory = CgroupMemory{.limit_bytes = 8ull << 30};
  Style plain{false};
  auto text = render_summary(s, plain);
  EXPECT_NE(text.find("in RAM: files written here count against memory and the cgroup cap of "
                      "8.00 GiB"),
            std::string::npos)
      << text;
  s.scratch.tier = mainboard::StorageTier::local_ssd;
  EXPECT_EQ(render_summary(s, plain).find("in RAM"), std::string::npos);
}

// A GH200's HBM, onlined by the driver as a node without CPUs, is in the kernel's total on some
// systems and not on others: neither is remarked on; memory that neither sum explains is.
TEST(Summary, NumaMemoryThatDoesNotAddUpIsSaidAndAGpuNodeEitherWayIsNot) {
  mainboard::MachineSnapshot s;
  s.memory = mainboard::Memory{};
  s.cpu.info.numa_nodes = 2;
  s.cpu.info.numa_memory_bytes = std::vector<std::uint64_t>{480ull << 30, 96ull << 30};
  s.cpu.info.memory_only_numa_nodes = {1};
  Style plain{false};
  for (auto total : {576ull << 30, 480ull << 30}) {
    s.memory->total_bytes = total;
    EXPECT_EQ(render_summary(s, plain).find("NUMA nodes seen"), std::string::npos) << total;
  }
  s.memory->total_bytes = 1000ull << 30;
  EXPECT_NE(render_summary(s, plain).find("the NUMA nodes seen hold 480 GiB of the 1000 GiB"),
            std::string::npos)
      << render_summary(s, plain);
  s.memory = mainboard::Reading<mainboard::Memory>::none(
      "not read");  // no total to compare with: nothing said
  EXPECT_EQ(render_summary(s, plain).find("NUMA nodes seen"), std::string::npos);
}
