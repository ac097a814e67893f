// Parsing of system_profiler's JSON (captured shapes in tests/fixtures/apple/) and the Apple
// units over a recorded Mac (tests/fixtures/hosts/apple-m3-max).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/text.hpp"
#include "host/darwin.hpp"
#include "mainboard/machine.hpp"
#include "providers/apple/system_profiler.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(MAINBOARD_FIXTURES) + "/apple/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(SystemProfiler, M1) {
  auto displays = apple::parse_displays(fixture("m1.displays.json"));
  ASSERT_EQ(displays.size(), 1u);
  EXPECT_EQ(displays[0].model, "Apple M1");
  EXPECT_EQ(displays[0].vendor, "Apple");
  EXPECT_TRUE(displays[0].apple_silicon());
  EXPECT_EQ(displays[0].cores, 7u);  // a string in the output
  EXPECT_EQ(core::metal_label(displays[0].metal), "Metal 3");
  auto hw = apple::parse_hardware(fixture("m1.hardware.json"));
  ASSERT_TRUE(hw);
  EXPECT_EQ(hw->chip, "Apple M1");
  EXPECT_EQ(hw->machine_model, "MacBookAir10,1");
  EXPECT_EQ(hw->memory_bytes, 16ull << 30);
  EXPECT_EQ(hw->cores, 8u);
  EXPECT_EQ(hw->performance_cores, 4u);
  EXPECT_EQ(hw->efficiency_cores, 4u);
  EXPECT_EQ(hw->uuid, "00000000-0000-0000-0000-0000000000A1");
}

TEST(SystemProfiler, M2MaxOnMacos26) {
  auto displays = apple::parse_displays(fixture("m2-max.displays.json"));
  ASSERT_EQ(displays.size(), 1u);
  EXPECT_EQ(displays[0].model, "Apple M2 Max");
  EXPECT_EQ(displays[0].cores, 30u);
  EXPECT_EQ(core::metal_label(displays[0].metal), "Metal 4");
  auto hw = apple::parse_hardware(fixture("m2-max.hardware.json"));
  ASSERT_TRUE(hw);
  EXPECT_EQ(apple::soc_family(hw->chip), "Apple M2");
}

TEST(SystemProfiler, M3ProWithTheFourFieldCoreCount) {
  auto displays = apple::parse_displays(fixture("m3-pro.displays.json"));
  ASSERT_EQ(displays.size(), 1u);  // the displays attached to it are not GPUs
  EXPECT_EQ(displays[0].model, "Apple M3 Pro");
  auto hw = apple::parse_hardware(fixture("m3-pro.hardware.json"));
  ASSERT_TRUE(hw);
  EXPECT_EQ(hw->cores, 12u);  // "proc 12:6:6:0"
  EXPECT_EQ(hw->performance_cores, 6u);
  EXPECT_EQ(hw->memory_bytes, 36ull << 30);
}

TEST(SystemProfiler, IntelMacWithADiscreteAmdGpu) {
  auto displays = apple::parse_displays(fixture("intel-mbp16-2019-5500m.displays.json"));
  ASSERT_EQ(displays.size(), 2u);
  EXPECT_EQ(displays[0].model, "Intel UHD Graphics 630");
  EXPECT_EQ(displays[0].vendor, "Intel");
  EXPECT_EQ(displays[0].vram_shared_bytes, 1536ull << 20);
  EXPECT_FALSE(displays[0].apple_silicon());
  EXPECT_EQ(displays[1].model, "AMD Radeon Pro 5500M");
  EXPECT_EQ(displays[1].vendor, "AMD");
  EXPECT_EQ(displays[1].vram_bytes, 8ull << 30);
  EXPECT_EQ(displays[1].bus, "spdisplays_pcie_device");
  EXPECT_EQ(core::metal_label(displays[1].metal), "Metal GPUFamily macOS 2");
  auto hw = apple::parse_hardware(fixture("intel-mbp16-2019-5500m.hardware.json"));
  ASSERT_TRUE(hw);
  EXPECT_EQ(hw->chip, "");
  EXPECT_EQ(hw->cpu_type, "6-Core Intel Core i7");
  EXPECT_EQ(hw->cores, 6u);  // an integer on Intel Macs
  EXPECT_FALSE(hw->performance_cores);
}

TEST(SystemProfiler, MetalLabels) {
  EXPECT_EQ(core::metal_label("spdisplays_mtlgpufamilyapple7"), "Metal GPUFamily Apple 7");
  EXPECT_EQ(core::metal_label("spdisplays_metalfeaturesetfamily13"), "Metal macOS GPUFamily1 v3");
  EXPECT_EQ(core::metal_label("spdisplays_supported"), "Metal (supported)");
  EXPECT_EQ(core::metal_label(""), "");
  EXPECT_EQ(core::metal_label("spdisplays_something_new"), "spdisplays_something_new");
  EXPECT_EQ(apple::soc_family("Apple M4 Max (Virtual)"), "Apple M4");
  EXPECT_EQ(apple::soc_family("Intel"), "Intel");
}

TEST(SystemProfiler, MalformedOutputDegrades) {
  for (const char* text : {"", "not json", "{\"SPDisplaysDataType\": 5}", "[1, 2]",
                           "{\"SPDisplaysDataType\": [\"x\", {\"sppci_cores\": 7}]}",
                           "{\"SPHardwareDataType\": [{\"number_processors\": \"proc x:y\"}]}",
                           "{\"SPDisplaysDataType\": [{\"sppci_model\": \"Apple M1\""}) {
    EXPECT_NO_THROW(apple::parse_displays(text));
    EXPECT_NO_THROW(apple::parse_hardware(text));
  }
  EXPECT_TRUE(
      apple::parse_displays("{\"SPDisplaysDataType\": [{\"sppci_model\": \"Apple M1\"").empty());
  auto odd = apple::parse_hardware(
      "{\"SPHardwareDataType\": [{\"number_processors\": \"proc x:y\", "
      "\"physical_memory\": \"lots\"}]}");
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->cores);
  EXPECT_FALSE(odd->memory_bytes);
  std::string huge = "{\"SPDisplaysDataType\": [";
  for (int i = 0; i < 5000; ++i)
    huge += std::string(i ? "," : "") + "{\"sppci_model\": \"GPU\"}";
  huge += "]}";
  EXPECT_EQ(apple::parse_displays(huge).size(), 5000u);
}

TEST(Darwin, SysctlAndVmStat) {
  auto m = host::darwin::parse_sysctl(
      "hw.memsize: 68719476736\nmachdep.cpu.brand_string: Apple M3 Max\n"
      "garbage line\nhw.ncpu = 16\n");
  EXPECT_EQ(m["hw.memsize"], "68719476736");
  EXPECT_EQ(m["machdep.cpu.brand_string"], "Apple M3 Max");
  EXPECT_EQ(m["hw.ncpu"], "16");
  auto vm = host::darwin::parse_vm_stat(
      "Mach Virtual Memory Statistics: (page size of 16384 bytes)\nPages free:   100.\n"
      "Pages active:   200.\n\"Translation faults\":  5.\n");
  ASSERT_TRUE(vm);
  EXPECT_EQ(vm->page_size, 16384u);
  EXPECT_EQ(vm->pages["Pages active"], 200u);
  EXPECT_FALSE(host::darwin::parse_vm_stat("nothing useful"));
}

TEST(AppleHost, RecordedM3MaxMacbook) {
  Machine::Options o;
  o.sysroot = fixture_host("apple-m3-max");
  Machine m(o);
  auto s = m.snapshot();
  EXPECT_EQ(s.hostname, "adas-mbp.local");
  EXPECT_EQ(s.cpu.info.label, "Apple M3 Max");
  EXPECT_EQ(s.cpu.info.vendor, "Apple");
  EXPECT_EQ(s.cpu.info.architecture, "arm64");
  EXPECT_EQ(s.cpu.info.cores, 16u);
  EXPECT_EQ(s.cpu.info.topology_source, mainboard::TopologySource::sysctl);
  EXPECT_EQ(s.cpu.info.cache_bytes(1, "data"), 65536u);
  EXPECT_TRUE(s.memory.ok());
  EXPECT_EQ(s.memory->total_bytes, 64ull << 30);
  EXPECT_EQ(s.memory->used_bytes, (985602ull + 358331 + 123456) * 16384);
  EXPECT_EQ(s.environment.user, "ada");
  EXPECT_EQ(s.environment.group, "staff");

  ASSERT_EQ(s.gpus.size(), 1u);
  const auto& gpu = s.gpus[0];
  EXPECT_EQ(gpu.info.label, "Apple M3 Max");
  EXPECT_EQ(gpu.info.provider, "apple");
  EXPECT_EQ(gpu.info.architecture, "Apple M3");
  EXPECT_EQ(gpu.info.core_count, 40u);
  EXPECT_EQ(gpu.info.metal_support, "Metal 3");
  EXPECT_EQ(gpu.info.uuid, "00000000-0000-0000-0000-0000000000E5");
  EXPECT_TRUE(gpu.info.coherent);
  EXPECT_TRUE(gpu.telemetry.memory->unified);
  EXPECT_EQ(gpu.telemetry.memory->scope, "unified");
  EXPECT_EQ(gpu.telemetry.memory->total_bytes, 64ull << 30);
  EXPECT_FALSE(gpu.telemetry.utilization.ok());
  EXPECT_NE(gpu.telemetry.utilization.reason().find("powermetrics"), std::string::npos);
  EXPECT_TRUE(gpu.telemetry.clocks.empty());

  ASSERT_EQ(s.npus.size(), 1u);
  EXPECT_EQ(s.npus[0].info.label, "Apple M3 Max Neural Engine");
  EXPECT_EQ(s.npus[0].info.architecture, "Apple M3");
  EXPECT_TRUE(s.npus[0].telemetry.memory->unified);
  EXPECT_EQ(s.kinds(), (std::vector<UnitKind>{UnitKind::cpu, UnitKind::gpu, UnitKind::npu}));
  EXPECT_EQ(s.unit_count(), 3u);
  EXPECT_EQ(s.diagnostic("gpu:apple")->status, ProbeStatus::ok);
  EXPECT_EQ(s.diagnostic("npu:apple")->status, ProbeStatus::ok);
}

TEST(AppleHost, LinuxHostsHaveNoAppleUnits) {
  Machine::Options o;
  o.sysroot = fixture_host("cgroup2-capped");
  Machine m(o);
  auto s = m.snapshot();
  EXPECT_TRUE(s.npus.empty());
  EXPECT_EQ(s.diagnostic("gpu:apple")->status, ProbeStatus::unsupported);
  EXPECT_NE(s.diagnostic("gpu:apple")->reason.find("system_profiler not found"), std::string::npos);
}
