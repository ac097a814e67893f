// AMD GPUs and accel-class NPUs over fixture sysroots written from real sysfs dumps
// (tests/fixtures/hosts/generate.py: amd-mi300x, radeon-npu, amdxdna, gaudi2).
#include <gtest/gtest.h>

#include "fixture_machine.hpp"
#include "mainboard/machine.hpp"
#include "providers/accel/accel_npu.hpp"
#include "providers/amd/amd_gpu.hpp"
#include "providers/sysfs/pci.hpp"
#include "test_util.hpp"

using namespace mainboard;

TEST(AmdDpm, TableShapes) {
  // A level is marked current.
  auto t = amd::parse_dpm_table("0: 96Mhz \n1: 456Mhz \n2: 772Mhz \n3: 1249Mhz *\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->levels_mhz, (std::vector<double>{96, 456, 772, 1249}));
  EXPECT_EQ(t->current_mhz, 1249);
  // SMU 13: the clock between min and max is printed as the middle line.
  t = amd::parse_dpm_table("0: 500Mhz\n1: 31Mhz *\n2: 2219Mhz\n");
  EXPECT_EQ(t->current_mhz, 31);
  EXPECT_EQ(t->levels_mhz.front(), 500);
  EXPECT_EQ(t->levels_mhz.back(), 2219);
  // Deep sleep: an S line that is not a level.
  t = amd::parse_dpm_table("S: 133Mhz *\n0: 500Mhz\n1: 2100Mhz\n");
  EXPECT_EQ(t->current_mhz, 133);
  EXPECT_EQ(t->levels_mhz, (std::vector<double>{500, 2100}));
  EXPECT_FALSE(amd::parse_dpm_table(""));
  EXPECT_FALSE(amd::parse_dpm_table("garbage\n::\n0: fastMhz *\n1: -5Mhz\n"));
}

TEST(AmdGfx, TargetsFromKfdVersions) {
  EXPECT_EQ(amd::gfx_target(90402), "gfx942");
  EXPECT_EQ(amd::gfx_target(90010), "gfx90a");
  EXPECT_EQ(amd::gfx_target(110000), "gfx1100");
  EXPECT_EQ(amd::gfx_target(100300), "gfx1030");
  EXPECT_EQ(amd::gfx_target(120001), "gfx1201");
  EXPECT_EQ(amd::gfx_target(0), "");
  EXPECT_EQ(amd::gfx_target(91717), "");  // minor 17 has no hex digit
  EXPECT_EQ(amd::architecture_for("gfx942"), "CDNA 3");
  EXPECT_EQ(amd::architecture_for("gfx1100"), "RDNA 3");
  EXPECT_EQ(amd::marketing_name(0x744c, 0xc8), "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(amd::marketing_name(0x744c, 0xcc), "AMD Radeon RX 7900 XT");
  EXPECT_EQ(amd::gfx_for_device(0x74a1), "gfx942");
}

TEST(Sysfs, PcieGenerations) {
  EXPECT_EQ(providers::sysfs::pcie_generation("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(providers::sysfs::pcie_generation("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(providers::sysfs::pcie_generation("2.5 GT/s PCIe"), 1);
  EXPECT_FALSE(providers::sysfs::pcie_generation("Unknown"));
  EXPECT_FALSE(providers::sysfs::pcie_generation(""));
}

TEST(AmdGpu, InstinctMi300x) {
  Machine m(fixture_options("amd-mi300x"));
  const auto& gpus = m.gpus();
  ASSERT_EQ(gpus.size(), 2u);
  const auto& g = *gpus[0];
  const auto& info = g.info();
  EXPECT_EQ(info.label, "AMD Instinct MI300X OAM");
  EXPECT_EQ(info.provider, "amd");
  EXPECT_EQ(info.vendor, "AMD");
  EXPECT_EQ(info.pci_bus_id, "0000:c6:00.0");
  EXPECT_EQ(info.arch_key, "gfx942");  // from the KFD node at location 0xc600
  EXPECT_EQ(info.architecture, "CDNA 3");
  EXPECT_EQ(info.uuid, "8d1457e2c20f59d0");
  EXPECT_EQ(info.memory_total_bytes, 206141652992u);
  EXPECT_EQ(gpus[1]->info().index, 1u);
  EXPECT_EQ(gpus[1]->info().pci_bus_id, "0000:d6:00.0");

  auto mem = g.memory();
  EXPECT_TRUE(mem.ok());
  EXPECT_EQ(mem->scope, "vram");
  EXPECT_EQ(mem->used_bytes, 4ull << 30);
  auto regions = g.memory_regions();
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].scope, "gtt");
  EXPECT_EQ(regions[0].total_bytes, 541165879296u);
  auto clocks = g.clock_readings();
  ASSERT_EQ(clocks.size(), 3u);
  EXPECT_EQ(clocks[0].domain, "graphics");
  EXPECT_EQ(clocks[0].current_mhz, 133);  // deep sleep
  EXPECT_EQ(clocks[0].min_mhz, 500);
  EXPECT_EQ(clocks[0].max_mhz, 2100);
  EXPECT_EQ(clocks[1].domain, "memory");
  EXPECT_EQ(clocks[1].current_mhz, 900);
  EXPECT_EQ(clocks[1].max_mhz, 1300);
  auto thermal = g.thermal();
  EXPECT_EQ(thermal->temperature_c, 35);  // junction: MI300 has no edge sensor
  EXPECT_EQ(thermal->slowdown_c, 100);
  EXPECT_EQ(thermal->shutdown_c, 110);
  auto energy = g.energy();
  EXPECT_EQ(energy->power_w, 133);  // power1_input
  EXPECT_EQ(energy->power_limit_w, 750);
  EXPECT_EQ(g.utilization()->compute_pct, 0);
  EXPECT_FALSE(g.fan_speed_pct());
  auto pcie = g.pcie();
  EXPECT_EQ(pcie->link_gen, 5);
  EXPECT_EQ(pcie->link_width, 16);
  EXPECT_TRUE(g.processes().empty());
}

TEST(AmdGpu, RadeonAndAnIntelNpu) {
  Machine m(fixture_options("radeon-npu"));
  ASSERT_EQ(m.gpus().size(), 1u);  // card1-DP-1 is a connector
  const auto& g = *m.gpus()[0];
  EXPECT_EQ(g.label(), "AMD Radeon RX 7900 XTX");  // device 0x744c, revision 0xc8
  EXPECT_EQ(g.arch_key(), "gfx1100");
  EXPECT_EQ(g.memory()->used_bytes, 1536ull << 20);
  EXPECT_EQ(g.utilization()->compute_pct, 3);
  EXPECT_EQ(g.utilization()->memory_pct, 5);
  auto clocks = g.clock_readings();
  EXPECT_EQ(clocks[0].current_mhz, 31);
  EXPECT_EQ(clocks[0].max_mhz, 2219);
  EXPECT_EQ(clocks[1].current_mhz, 1249);
  EXPECT_EQ(g.thermal()->temperature_c, 53);  // edge
  EXPECT_EQ(g.energy()->power_w, 68);         // power1_average
  EXPECT_EQ(g.energy()->power_limit_w, 290);
  EXPECT_EQ(g.fan_speed_pct(), 0);
  EXPECT_EQ(g.pcie()->link_gen, 4);

  ASSERT_EQ(m.npus().size(), 1u);
  const auto& npu = *m.npus()[0];
  EXPECT_EQ(npu.label(), "Intel NPU (Arrow Lake)");
  EXPECT_EQ(npu.architecture(), "NPU 37xx");
  EXPECT_EQ(npu.info().driver, "intel_vpu");
  EXPECT_EQ(npu.info().pci_bus_id, "0000:00:0b.0");
  auto clocks_npu = npu.clock_readings();
  ASSERT_EQ(clocks_npu.size(), 1u);
  EXPECT_EQ(clocks_npu[0].current_mhz, 0);  // power-gated is a real reading
  EXPECT_EQ(clocks_npu[0].max_mhz, 1900);
  auto mem = npu.memory();
  EXPECT_TRUE(mem->unified);
  EXPECT_EQ(mem->used_bytes, 68714496u);
  EXPECT_EQ(mem->total_bytes, 67108864ull * 1024);
  auto first = npu.utilization();
  EXPECT_FALSE(first.ok());  // a cumulative counter needs a second reading
  auto second = npu.utilization();
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(second->compute_pct, 0);  // the fixture's counter does not move

  auto s = m.snapshot();
  EXPECT_EQ(s.kinds(), (std::vector<UnitKind>{UnitKind::cpu, UnitKind::gpu, UnitKind::npu}));
  EXPECT_EQ(s.unit_count(), 3u);
  EXPECT_EQ(s.gpus[0].memory_regions.at(0).scope, "gtt");
}

TEST(AccelNpu, AmdXdnaAndGaudi) {
  Machine xdna(fixture_options("amdxdna"));
  ASSERT_EQ(xdna.npus().size(), 1u);
  const auto& n = *xdna.npus()[0];
  EXPECT_EQ(n.label(), "AMD Ryzen AI NPU (RyzenAI-npu5)");
  EXPECT_EQ(n.architecture(), "XDNA 2");
  EXPECT_EQ(n.vendor(), "AMD");
  EXPECT_TRUE(n.clock_readings().empty());
  EXPECT_FALSE(n.utilization().ok());

  Machine hls(fixture_options("gaudi2"));
  ASSERT_EQ(hls.npus().size(), 2u);
  const auto& g = *hls.npus()[1];
  EXPECT_EQ(g.label(), "Intel Gaudi 2 (GAUDI2)");
  EXPECT_EQ(g.architecture(), "Gaudi 2");
  EXPECT_EQ(g.info().pci_bus_id, "0000:1a:00.0");
  EXPECT_EQ(g.clock_readings().at(0).current_mhz, 1600);
  EXPECT_EQ(g.clock_readings().at(0).max_mhz, 1800);
  EXPECT_EQ(g.energy()->power_limit_w, 600);
  EXPECT_FALSE(g.memory().ok());
  EXPECT_TRUE(hls.gpus().empty());
}

TEST(AccelNpu, Identities) {
  EXPECT_EQ(accel::identify("intel_vpu", 0x8086, 0x643e, "").label, "Intel NPU (Lunar Lake)");
  EXPECT_EQ(accel::identify("habanalabs", 0x1da3, 0x1060, "").label, "Intel Gaudi 3");
  EXPECT_EQ(accel::identify("qaic", 0x17cb, 0xa100, "").label, "Qualcomm Cloud AI 100");
  EXPECT_EQ(accel::identify("rocket", 0, 0, "").label, "rocket accelerator");
}

TEST(AccelNpu, BrokenSysfsDegrades) {
  TempDir root;
  root.write("sys/devices/pci0000:00/0000:00:0b.0/npu_busy_time_us", "lots\n");
  root.write("sys/devices/pci0000:00/0000:00:0b.0/npu_max_frequency_mhz", "-1\n");
  std::filesystem::create_directories(root.path() / "sys/class/accel/accel0");
  std::filesystem::create_symlink("../../../devices/pci0000:00/0000:00:0b.0",
                                  root.path() / "sys/class/accel/accel0/device");
  std::filesystem::create_directories(root.path() / "sys/class/accel/accel1");  // no device link
  Machine::Options o;
  o.sysroot = root.path();
  Machine m(o);
  ASSERT_EQ(m.npus().size(), 2u);
  EXPECT_EQ(m.npus()[0]->label(), "accelerator");  // no driver link: unknown, not a crash
  EXPECT_TRUE(m.npus()[0]->clock_readings().empty());
  EXPECT_FALSE(m.npus()[0]->utilization().ok());
}
