#include <gtest/gtest.h>

#include "host/probes.hpp"
#include "mainboard/json.hpp"
#include "test_util.hpp"

using namespace mainboard;

TEST(SystemMemory, UsedIsTotalMinusAvailable) {
  TempDir root;
  root.write("proc/meminfo", "MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:  600 kB\n");
  auto m = host::read_system_memory(core::Fs(root.path()));
  EXPECT_TRUE(m.ok());
  EXPECT_EQ(m->total_bytes, 1024000u);
  EXPECT_EQ(m->used_bytes, 400u * 1024);
  EXPECT_EQ(m->free_bytes, 600u * 1024);
  EXPECT_DOUBLE_EQ(m->percent_used(), 40.0);
  EXPECT_EQ(m->scope, "system");
  EXPECT_EQ(m->source, mainboard::MemorySource::proc_meminfo);
}

TEST(SystemMemory, OldKernelsWithoutMemAvailable) {
  TempDir root;
  root.write("proc/meminfo",
             "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n");
  auto m = host::read_system_memory(core::Fs(root.path()));
  EXPECT_EQ(m->free_bytes, 400u * 1024);
}

TEST(SystemMemory, MalformedIsUnsupportedNotZero) {
  TempDir root;
  for (const char* text : {"", "MemTotal: lots kB\n", "garbage\x01\x02", "MemTotal: 0 kB\n"}) {
    root.write("proc/meminfo", text);
    auto m = host::read_system_memory(core::Fs(root.path()));
    EXPECT_FALSE(m.ok()) << text;
    EXPECT_FALSE(m.reason().empty());
    EXPECT_THROW((void)m->percent_used(), mainboard::Error) << "a missing reading is no zero";
  }
  // Available above total (a racy read) is clamped rather than wrapping around.
  root.write("proc/meminfo", "MemTotal: 100 kB\nMemAvailable: 200 kB\n");
  EXPECT_EQ(host::read_system_memory(core::Fs(root.path()))->used_bytes, 0u);
}

TEST(Swap, TotalAndUsed) {
  TempDir root;
  root.write("proc/meminfo", "SwapTotal: 2048 kB\nSwapFree: 1024 kB\n");
  auto swap = host::read_swap(core::Fs(root.path()));
  ASSERT_TRUE(swap);
  EXPECT_EQ(swap->first, 2048u * 1024);
  EXPECT_EQ(swap->second, 1024u * 1024);
}

namespace {
const char* kDimms =
    "# dmidecode 3.4\nSMBIOS 3.3.0 present.\n\n"
    "Handle 0x0034, DMI type 17, 92 bytes\nMemory Device\n\tSize: 64 GB\n\tForm Factor: DIMM\n"
    "\tLocator: DIMM_P0_A0\n\tBank Locator: BANK 0\n\tType: DDR5\n\tSpeed: 4800 MT/s\n"
    "\tManufacturer: Samsung\n\tSerial Number: 1234ABCD\n\tPart Number: M321R8GA0BB0-CQKZJ   \n"
    "\tRank: 2\n\tConfigured Memory Speed: 4400 MT/s\n\n"
    "Handle 0x0035, DMI type 17, 92 bytes\nMemory Device\n\tSize: No Module Installed\n"
    "\tLocator: DIMM_P0_B0\n\tType: Unknown\n\tSpeed: Unknown\n\tManufacturer: Not Specified\n\n"
    // dmidecode 2.x spells sizes in MB and speeds in MHz.
    "Handle 0x0036, DMI type 17, 40 bytes\nMemory Device\n\tSize: 16384 MB\n\tLocator: DIMM_C1\n"
    "\tType: DDR4\n\tSpeed: 2666 MHz\n\tConfigured Clock Speed: 2400 MHz\n\n"
    "Handle 0x0040, DMI type 19, 31 bytes\nMemory Array Mapped Address\n\tSize: 128 GB\n";
}

TEST(Dmidecode, ParsesCardsAndSkipsOtherStructures) {
  auto cards = host::parse_dmidecode_memory(kDimms);
  ASSERT_EQ(cards.size(), 3u);
  EXPECT_EQ(cards[0].size_bytes, 64ull << 30);
  EXPECT_EQ(cards[0].locator, "DIMM_P0_A0");
  EXPECT_EQ(cards[0].type, "DDR5");
  EXPECT_EQ(cards[0].speed_mts, 4800u);
  EXPECT_EQ(cards[0].configured_speed_mts, 4400u);
  EXPECT_EQ(cards[0].part_number, "M321R8GA0BB0-CQKZJ");
  EXPECT_EQ(cards[0].rank, 2u);
  EXPECT_FALSE(cards[1].populated());
  EXPECT_EQ(cards[1].type, "");          // "Unknown" is not a type
  EXPECT_EQ(cards[1].manufacturer, "");  // nor is "Not Specified" a maker
  EXPECT_EQ(cards[2].size_bytes, 16384ull << 20);
  EXPECT_EQ(cards[2].configured_speed_mts, 2400u);

  MemoryHardware hw;
  hw.cards = cards;
  EXPECT_EQ(hw.slots_total(), 3u);
  EXPECT_EQ(hw.slots_used(), 2u);
  EXPECT_EQ(hw.speed_mhz(), 4800u);
}

TEST(Dmidecode, SerialNumbersAreNeverKept) {
  auto cards = host::parse_dmidecode_memory(kDimms);
  nlohmann::json j = cards;
  EXPECT_EQ(j.dump().find("1234ABCD"), std::string::npos);
}

TEST(Dmidecode, MalformedInputDegrades) {
  EXPECT_TRUE(host::parse_dmidecode_memory("").empty());
  EXPECT_TRUE(host::parse_dmidecode_memory("\x01\x02garbage\n:::\n").empty());
  // Truncated in the middle of a record: what was read is kept.
  auto cut = host::parse_dmidecode_memory("Handle 0x1, DMI type 17, 92 bytes\n\tSize: 8 GB\n\tSpe");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].size_bytes, 8ull << 30);
  EXPECT_FALSE(cut[0].speed_mts);
  auto nonsense = host::parse_dmidecode_memory(
      "Handle 0x1, DMI type 17, 92 bytes\n\tSize: 99999999999999999999 GB\n\tSpeed: 0 "
      "MT/s\n\tRank: 900\n");
  ASSERT_EQ(nonsense.size(), 1u);
  EXPECT_FALSE(nonsense[0].size_bytes);
  EXPECT_FALSE(nonsense[0].speed_mts);
  EXPECT_FALSE(nonsense[0].rank);
  std::string huge;
  for (int i = 0; i < 20000; ++i)
    huge += "Handle 0x1, DMI type 17, 92 bytes\n\tSize: 1 GB\n";
  EXPECT_EQ(host::parse_dmidecode_memory(huge).size(), 20000u);
}

namespace {
/// A machine whose dmidecode answers `-t 17` with `result`.
ReplayRunner dmidecode_answering(const CommandResult& result) {
  return ReplayRunner({{"dmidecode", "/usr/sbin/dmidecode"}},
                      {{{"/usr/sbin/dmidecode", "-t", "17"}, result}});
}
}  // namespace

TEST(Dmidecode, MissingOrRefusedIsUnsupportedNotAnError) {
  TempDir root;
  root.write("sys/firmware/dmi/tables/DMI", "");
  core::Fs fs(root.path());
  host::Note missing;
  EXPECT_TRUE(host::probe_dimms(fs, ReplayRunner({}, {}), missing).empty());
  EXPECT_EQ(missing.status, ProbeStatus::unsupported);
  EXPECT_NE(missing.reason.find("not found"), std::string::npos);

  CommandResult refused;
  refused.exit_code = 1;
  refused.err = "/sys/firmware/dmi/tables/smbios_entry_point: Permission denied\n";
  auto runner = dmidecode_answering(refused);
  host::Note note;
  EXPECT_TRUE(host::probe_dimms(fs, runner, note).empty());
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
  EXPECT_NE(note.reason.find("Permission denied"), std::string::npos);
}

// No SMBIOS table (a container, most virtual machines): dmidecode is not started at all.
TEST(Dmidecode, NoTableMeansNoDmidecode) {
  TempDir root;
  core::Fs fs(root.path());
  CommandResult listed;
  listed.exit_code = 0;
  listed.out = "Handle 0x0040, DMI type 17, 92 bytes\nMemory Device\n\tSize: 16 GB\n";
  auto runner = dmidecode_answering(listed);
  host::Note note;
  EXPECT_TRUE(host::probe_dimms(fs, runner, note).empty());
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
  EXPECT_NE(note.reason.find("no SMBIOS table"), std::string::npos) << note.reason;
  root.write("dev/mem", "");  // an old kernel's way in
  host::Note old;
  EXPECT_EQ(host::probe_dimms(fs, runner, old).size(), 1u);
}
