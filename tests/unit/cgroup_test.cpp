#include <gtest/gtest.h>

#include "host/probes.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {
const char* kV2Mount = "27 22 0:24 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
}

TEST(Cgroup, V2TightestAncestorWins) {
  TempDir root;
  root.write("proc/self/cgroup", "0::/a/b/c\n");
  root.write("proc/self/mountinfo", kV2Mount);
  root.write("sys/fs/cgroup/a/memory.max", "4294967296\n");
  root.write("sys/fs/cgroup/a/b/memory.max", "8589934592\n");
  root.write("sys/fs/cgroup/a/b/c/memory.max", "max\n");
  root.write("sys/fs/cgroup/a/b/c/memory.current", "1000\n");
  auto cg = host::probe_cgroup_memory(core::Fs(root.path()));
  ASSERT_TRUE(cg);
  EXPECT_EQ(cg->version, 2);
  EXPECT_EQ(cg->path, "/a/b/c");
  EXPECT_EQ(cg->limit_bytes, 4294967296u);
  EXPECT_EQ(cg->limit_source, "/sys/fs/cgroup/a/memory.max");
  EXPECT_EQ(cg->usage_bytes, 1000u);
}

TEST(Cgroup, V2MaxEverywhereMeansNoCap) {
  TempDir root;
  root.write("proc/self/cgroup", "0::/user.slice\n");
  root.write("proc/self/mountinfo", kV2Mount);
  root.write("sys/fs/cgroup/user.slice/memory.max", "max\n");
  auto cg = host::probe_cgroup_memory(core::Fs(root.path()));
  ASSERT_TRUE(cg);
  EXPECT_FALSE(cg->capped());
}

TEST(Cgroup, V1SentinelMeansNoCapAndRealLimitsCount) {
  TempDir root;
  root.write("proc/self/cgroup", "4:memory:/docker/abc\n0::/\n");
  root.write("proc/self/mountinfo",
             "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
             "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  root.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  root.write("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "2147483648\n");
  root.write("sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", "52428800\n");
  auto cg = host::probe_cgroup_memory(core::Fs(root.path()));
  EXPECT_EQ(cg->version, 1);  // the hybrid host enforces the v1 limit
  EXPECT_EQ(cg->limit_bytes, 2147483648u);
  EXPECT_EQ(cg->usage_bytes, 52428800u);
}

TEST(Cgroup, ContainerSeesOnlyItsOwnSubtree) {
  // The mount's root is the container's cgroup: /proc/self/cgroup names the full path.
  TempDir root;
  root.write("proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  root.write("proc/self/mountinfo",
             "27 22 0:24 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
  root.write("sys/fs/cgroup/memory.max", "1073741824\n");
  auto cg = host::probe_cgroup_memory(core::Fs(root.path()));
  EXPECT_EQ(cg->limit_bytes, 1073741824u);
}

TEST(Cgroup, MalformedInputIsUnavailable) {
  TempDir root;
  root.write("proc/self/cgroup", "0::/x\n");
  root.write("proc/self/mountinfo", kV2Mount);
  root.write("sys/fs/cgroup/x/memory.max", "99999999999999999999999\n");
  auto cg = host::probe_cgroup_memory(core::Fs(root.path()));
  ASSERT_FALSE(cg);
  EXPECT_EQ(cg.unavailable()->status, ProbeStatus::unsupported);  // malformed input degrades
  EXPECT_NE(cg.reason().find("malformed"), std::string::npos);

  TempDir empty;
  EXPECT_FALSE(host::probe_cgroup_memory(core::Fs(empty.path())));
  empty.write("proc/self/cgroup", "garbage\n");
  empty.write("proc/self/mountinfo", "nonsense - nonsense\n");
  auto none = host::probe_cgroup_memory(core::Fs(empty.path()));
  EXPECT_FALSE(none);
  EXPECT_FALSE(none.reason().empty());
}
