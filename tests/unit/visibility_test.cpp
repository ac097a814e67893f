#include <gtest/gtest.h>

#include "mainboard/nvidia.hpp"
#include "providers/nvidia/arch.hpp"
#include "providers/nvidia/visibility.hpp"

using namespace mainboard::nvidia;

namespace {
std::vector<Candidate> mixed() {
  // NVML order (PCI): an Ampere card at bus 1, an Ada card at bus 0x41.
  Candidate a4000{"GPU-4444", 8, 6, 0, 0x01, 0, {}};
  Candidate rtx4090{"GPU-9a8b", 8, 9, 0, 0x41, 0, {}};
  return {a4000, rtx4090};
}
std::vector<std::size_t> devices(const std::vector<Selected>& s) {
  std::vector<std::size_t> out;
  for (const auto& x : s)
    out.push_back(x.device);
  return out;
}
auto parse(const char* v) {
  return parse_visible_devices(std::string(v));
}
}  // namespace

TEST(Visibility, ParsingStopsAtTheFirstInvalidEntry) {
  EXPECT_FALSE(parse_visible_devices(std::nullopt));
  EXPECT_TRUE(parse("")->empty());
  auto e = *parse("0,2,-1,1");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].ordinal, 2u);
  EXPECT_TRUE(parse("garbage,0")->empty());
  auto u = *parse(" GPU-8932f937 , MIG-abcd ");
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].kind, VisibleEntry::Kind::gpu_uuid);
  EXPECT_EQ(u[0].uuid, "GPU-8932f937");
  EXPECT_EQ(u[1].kind, VisibleEntry::Kind::mig_uuid);
}

TEST(Visibility, FastestFirstByDefaultPciOnRequest) {
  auto all = select_visible(mixed(), std::nullopt, DeviceOrder::fastest_first);
  EXPECT_EQ(devices(all), (std::vector<std::size_t>{1, 0}));  // the Ada card is ordinal 0
  auto pci = select_visible(mixed(), std::nullopt, parse_device_order("PCI_BUS_ID"));
  EXPECT_EQ(devices(pci), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(parse_device_order(std::nullopt), DeviceOrder::fastest_first);
  EXPECT_EQ(parse_device_order(std::string("FASTEST_FIRST")), DeviceOrder::fastest_first);
}

TEST(Visibility, OrdinalsUuidsAndInvalidEntries) {
  auto order = DeviceOrder::fastest_first;
  EXPECT_EQ(devices(select_visible(mixed(), parse("1,0"), order)),
            (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(devices(select_visible(mixed(), parse("0,7,1"), order)), (std::vector<std::size_t>{1}));
  EXPECT_EQ(devices(select_visible(mixed(), parse("0,0"), order)), (std::vector<std::size_t>{1}));
  EXPECT_EQ(devices(select_visible(mixed(), parse("GPU-4444"), order)),
            (std::vector<std::size_t>{0}));
  EXPECT_TRUE(select_visible(mixed(), parse("GPU-"), order).empty());      // not an entry at all
  EXPECT_TRUE(select_visible(mixed(), parse("GPU-ffff"), order).empty());  // no such device
  EXPECT_TRUE(select_visible(mixed(), parse(""), order).empty());
}

TEST(Visibility, AmbiguousUuidPrefixEndsTheList) {
  std::vector<Candidate> two = {{"GPU-abc1", 9, 0, 0, 1, 0, {}}, {"GPU-abc2", 9, 0, 0, 2, 0, {}}};
  EXPECT_TRUE(select_visible(two, parse("GPU-abc"), DeviceOrder::pci_bus_id).empty());
  EXPECT_EQ(select_visible(two, parse("GPU-abc2"), DeviceOrder::pci_bus_id).size(), 1u);
}

TEST(Visibility, OneMigInstancePerProcess) {
  std::vector<Candidate> a100 = {{"GPU-a1", 8, 0, 0, 7, 0, {"MIG-one", "MIG-two"}}};
  auto s = select_visible(a100, parse("MIG-two,MIG-one"), DeviceOrder::fastest_first);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].mig, 1u);
}

TEST(PciBusId, NvmlAndCudaSpellingsAreTheSameDevice) {
  auto nvml = parse_pci_bus_id("00000000:19:00.0");
  auto cuda = parse_pci_bus_id("0000:19:00.0");
  ASSERT_TRUE(nvml && cuda);
  EXPECT_EQ(*nvml, *cuda);
  EXPECT_EQ(nvml->bus, 0x19u);
  EXPECT_EQ(format_pci_bus_id(*cuda), "00000000:19:00.0");
  EXPECT_EQ(parse_pci_bus_id("00000009:01:00.0")->domain, 9u);
  EXPECT_FALSE(parse_pci_bus_id("garbage"));
  EXPECT_FALSE(parse_pci_bus_id("0000:1ff:00.0"));
  EXPECT_FALSE(parse_pci_bus_id(":::"));
}

TEST(Architecture, NamesAndKeys) {
  EXPECT_EQ(architecture_name(9, 0), "Hopper");
  EXPECT_EQ(architecture_name(8, 9), "Ada");
  EXPECT_EQ(architecture_name(8, 6), "Ampere");
  EXPECT_EQ(architecture_name(7, 5), "Turing");
  EXPECT_EQ(architecture_name(7, 0), "Volta");
  EXPECT_EQ(architecture_name(10, 0), "Blackwell");
  EXPECT_EQ(architecture_name(12, 1), "Blackwell");
  EXPECT_EQ(architecture_name(3, 7), "Kepler");
  EXPECT_EQ(arch_key(9, 0), "sm_90");
  EXPECT_EQ(arch_key(12, 0), "sm_120");
}

TEST(Architecture, PeakBandwidthMatchesDatasheets) {
  // H100 SXM5 (HBM3): 2619 MHz × 5120 bit; NVIDIA's datasheet says 3.35 TB/s.
  EXPECT_NEAR(*peak_bandwidth_gbs(2619000, 5120), 3352.3, 0.1);
  // RTX 4090 (GDDR6X): 10501 MHz × 384 bit; datasheet 1008 GB/s.
  EXPECT_NEAR(*peak_bandwidth_gbs(10501000, 384), 1008.1, 0.1);
  // A100 40 GB (HBM2): 1215 MHz × 5120 bit; datasheet 1555 GB/s.
  EXPECT_NEAR(*peak_bandwidth_gbs(1215000, 5120), 1555.2, 0.1);
  // V100 SXM2 (HBM2), the CUDA guide's cross-check: 877 MHz × 4096 bit ≈ 898 GB/s.
  EXPECT_NEAR(*peak_bandwidth_gbs(877000, 4096), 898.0, 0.1);
  EXPECT_FALSE(peak_bandwidth_gbs(std::nullopt, 384));
  EXPECT_FALSE(peak_bandwidth_gbs(0, 384));
}

TEST(ClockEvents, DecodedByName) {
  EXPECT_EQ(mainboard::decode_clock_event_reasons(0x4 | 0x40),
            (std::vector<std::string>{"SwPowerCap", "HwThermalSlowdown"}));
  EXPECT_TRUE(mainboard::decode_clock_event_reasons(0).empty());
}
