// Recorded hosts of other architectures, and a NUMA server recorded without hwloc's view, read
// through Machine::Options::sysroot: every value below is what that host's files say (see
// tests/fixtures/hosts/generate.py, CPU_ARCH_HOSTS).
#include <gtest/gtest.h>

#include "fixture_machine.hpp"
#include "mainboard/check.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

struct Expected {
  const char* host;
  const char* architecture;
  const char* label;
  const char* vendor;
  std::uint32_t packages, cores, threads;
};

}  // namespace

TEST(CpuHosts, NumaNodesFromSysfsWithoutTheTopologyXml) {
  auto s = fixture_snapshot("numa-3node-sysfs");
  const auto& cpu = s.cpu.info;
  EXPECT_EQ(cpu.topology_source, TopologySource::sysfs);
  EXPECT_EQ(cpu.architecture, "x86_64");
  EXPECT_EQ(cpu.packages, 2u);
  EXPECT_EQ(cpu.cores, 16u);
  EXPECT_EQ(cpu.threads, 32u);
  EXPECT_EQ(cpu.numa_nodes, 3u);
  ASSERT_TRUE(cpu.numa_memory_bytes);
  EXPECT_EQ(
      *cpu.numa_memory_bytes,
      (std::vector<std::uint64_t>{263856000ull * 1024, 264192000ull * 1024, 134217728ull * 1024}));
  EXPECT_EQ(cpu.memory_only_numa_nodes, std::vector<std::uint32_t>{2});
  EXPECT_EQ(cpu.cache_source, CacheSource::kernel);
  EXPECT_EQ(cpu.cache_bytes(1, "data"), 48u * 1024);
  EXPECT_EQ(cpu.cache_bytes(1, "instruction"), 32u * 1024);
  EXPECT_EQ(cpu.cache_bytes(2, "unified"), 2048u * 1024);
  EXPECT_EQ(cpu.cache_bytes(3, "unified"), 61440u * 1024);
  ASSERT_EQ(cpu.caches.size(), 4u);
  EXPECT_EQ(cpu.caches[0].instances, 16u);  // one L1d a core
  EXPECT_EQ(cpu.caches[3].instances, 2u);   // one L3 a socket
  // The topology was read: the diagnostic is not "unsupported".
  const auto* d = s.diagnostic("cpu");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, ProbeStatus::ok) << d->reason;
}

TEST(CpuHosts, OtherArchitecturesFromTheirCpuinfoLayout) {
  const Expected kHosts[] = {
      {"arm32-armv7", "armv7l", "ARMv7 Processor rev 3 (v7l)", "ARM", 1, 4, 4},
      {"arm32-armv6-old", "armv6l", "ARMv6-compatible processor rev 5 (v6l)", "ARM", 1, 1, 1},
      {"mips64-octeon", "mips64", "Cavium Octeon+ V0.1", "", 1, 2, 2},
      {"s390x-z15", "s390x", "IBM z15 (8561)", "IBM", 1, 4, 4},
      {"loongarch-3a5000", "loongarch64", "Loongson-3A5000", "Loongson", 1, 4, 4},
      {"riscv64-u74", "riscv64", "sifive,u74-mc", "", 1, 4, 4},
      {"riscv64-virt", "riscv64", "RISC-V rv64imafdch", "", 1, 2, 2},
      {"power9-powernv", "ppc64le", "POWER9", "IBM", 1, 4, 16},
  };
  for (const auto& e : kHosts) {
    SCOPED_TRACE(e.host);
    auto s = fixture_snapshot(e.host);
    const auto& cpu = s.cpu.info;
    EXPECT_EQ(cpu.architecture, e.architecture);
    EXPECT_EQ(cpu.label, e.label);
    EXPECT_EQ(cpu.vendor, e.vendor);
    EXPECT_EQ(cpu.packages, e.packages);
    EXPECT_EQ(cpu.cores, e.cores);
    EXPECT_EQ(cpu.threads, e.threads);
    EXPECT_EQ(cpu.numa_nodes, 1u);
  }
}

TEST(CpuHosts, ArmIdentityAndTopologySources) {
  auto v7 = fixture_snapshot("arm32-armv7").cpu.info;
  EXPECT_EQ(v7.microarchitecture, "Cortex-A72");
  EXPECT_EQ(v7.topology_source, TopologySource::proc_cpuinfo);
  auto power = fixture_snapshot("power9-powernv").cpu.info;
  EXPECT_EQ(power.topology_source, TopologySource::sysfs);  // SMT4 cores from core_id
}

TEST(CpuHosts, CpufreqPerCpuLayoutAndUselessRelatedCpus) {
  // cpu0/cpufreq without policy0 (a 3.6 kernel).
  auto old = fixture_snapshot("arm32-armv6-old");
  ASSERT_EQ(old.cpu.clocks.size(), 1u);
  EXPECT_EQ(old.cpu.clocks[0].domain, "cpu0");
  EXPECT_DOUBLE_EQ(*old.cpu.clocks[0].current_mhz, 700);
  EXPECT_EQ(old.cpu.clocks[0].source, "cpufreq");
  // Four policies whose related_cpus all say 0: each policy's own CPU.
  auto loongson = fixture_snapshot("loongarch-3a5000");
  ASSERT_EQ(loongson.cpu.clocks.size(), 1u);
  EXPECT_EQ(loongson.cpu.clocks[0].domain, "cpu0-3");
  EXPECT_DOUBLE_EQ(*loongson.cpu.clocks[0].max_mhz, 2500);
  EXPECT_DOUBLE_EQ(*loongson.cpu.clocks[0].min_mhz, 312.5);
}

TEST(CpuHosts, AMalformedLoadAverageSaysWhyItIsMissing) {
  Machine::Options o;
  o.sysroot = fixture_host("broken");  // its /proc/loadavg is "abc def"
  Machine m(o);
  auto s = m.snapshot({.toolchain = false});
  EXPECT_FALSE(s.cpu.load_1m);
  const auto* d = s.diagnostic("cpu_clocks");
  ASSERT_TRUE(d);
  EXPECT_NE(d->reason.find("/proc/loadavg was read but holds fewer than three load averages"),
            std::string::npos)
      << d->reason;
  auto r = check_readiness(s);
  const Finding* load = nullptr;
  for (const auto& f : r.findings)
    if (f.id == "cpu.load.unknown") load = &f;
  ASSERT_TRUE(load);
  EXPECT_EQ(load->reading,
            "load average unknown: /proc/loadavg was read but holds fewer than three load "
            "averages");
}
