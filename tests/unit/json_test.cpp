#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "model/json_fields.hpp"
#include "test_util.hpp"

namespace mainboard {
// A model as a new probe writes it: its field list and the opt-in beside it, no JSON line.
struct BesideModel {
  std::uint32_t answer = 0;
  std::optional<std::string> why;
  bool operator==(const BesideModel&) const = default;
};
constexpr bool json_fields_beside(const BesideModel*) {
  return true;
}
template <class V>
void fields(V& v, BesideModel& m) {
  v("answer", m.answer);
  v("why", m.why);
}
}  // namespace mainboard

TEST(Json, AModelListingItsFieldsBesideItselfConvertsWithNoLineOfItsOwn) {
  mainboard::BesideModel m{42, "because"};
  nlohmann::json j = m;
  EXPECT_EQ(j, nlohmann::json::parse(R"({"answer": 42, "why": "because"})"));
  EXPECT_EQ(j.get<mainboard::BesideModel>(), m);
  j["answer"] = -1;
  try {
    (void)j.get<mainboard::BesideModel>();
    FAIL() << "no error";
  } catch (const mainboard::Error& e) {
    EXPECT_STREQ(e.what(), "BesideModel.answer: expected a non-negative integer");
  }
}

using namespace mainboard;
using nlohmann::json;

namespace {

/// A snapshot with every field set to something other than its default, so a field that is
/// written but not read (or read under another name) breaks the round trip.
MachineSnapshot full_snapshot() {
  MachineSnapshot s;
  s.timestamp_ns = 123456789;
  s.unix_time_ns = 1700000000000000000;
  s.hostname = "node1";
  s.cpu.info =
      CpuInfo{"Xeon",
              "Intel",
              "x86_64",
              "Sapphire Rapids",
              6,
              143,
              8,
              2,
              96,
              192,
              4,
              std::vector<std::uint64_t>{192ull << 30, 192ull << 30, 192ull << 30, 192ull << 30},
              {{1, "data", 49152, 96}, {3, "unified", 110100480, 2}},
              {"avx512f", "amx_tile"},
              TopologySource::hwloc};
  s.cpu.clocks = {{"cpu0-191", 2100.5, 800.0, 3800.0, "cpufreq"}};
  s.cpu.load_1m = 1.5;
  s.cpu.load_5m = 2.25;
  s.cpu.load_15m = 0.125;
  s.memory = Memory{1 << 30, 1 << 29, 1 << 29, "system", true, MemorySource::proc_meminfo};
  s.memory_hardware.cards = std::vector<DimmCard>{
      {"DIMM_A1", "BANK 0", 16ull << 30, "DDR5", "DIMM", 4800, 4400, "Samsung", "M321", 2},
      {"DIMM_B1", "", std::nullopt, "", "", std::nullopt, std::nullopt, "", "", std::nullopt}};
  s.memory_hardware.swap_total_bytes = 8;
  s.memory_hardware.swap_used_bytes = 3;
  GpuSnapshot g;
  g.info = GpuInfo{3,
                   "nvidia",
                   "NVIDIA H100 80GB HBM3",
                   "NVIDIA",
                   "GPU-abc",
                   "00000000:19:00.0",
                   "Hopper",
                   "sm_90",
                   "9.0",
                   132,
                   std::nullopt,
                   3352.3,
                   2619,
                   5120,
                   "550.54",
                   85899345920ull,
                   false,
                   true,
                   {{"MIG-1", 1, 0, 10ull << 30}},
                   ""};
  g.telemetry.name = "step";
  g.telemetry.unit_name = g.info.label;
  g.telemetry.kind = UnitKind::gpu;
  g.telemetry.vendor = "NVIDIA";
  g.telemetry.timestamp_ns = 5;
  g.telemetry.utilization = Utilization{97.0, 40.0};
  g.telemetry.energy = Energy{650.5, 700.0, 123456.75};
  g.telemetry.thermal = Thermal{71.0, 87.0, 92.0, {"SwPowerCap"}};
  g.pcie = PcieReading{1000.0, 2000.0, 5, 16, 5, 16};
  g.fan_speed_pct = 30.0;
  g.processes = {{4242, "python", 1ull << 33}};
  s.gpus = {g};
  NpuSnapshot n;
  n.info = NpuInfo{0, "accel", "Intel NPU", "Intel", "Meteor Lake", "intel_vpu", "0000:00:0b.0"};
  n.telemetry.kind = UnitKind::npu;
  s.npus = {n};
  s.environment = Environment{"ada",
                              "ada",
                              {"ada", "video"},
                              Scheduler{"slurm", "/usr/bin/sbatch"},
                              {{"slurm", "/usr/bin/sbatch"}},
                              Job{"slurm", "4242", "train", "7"}};
  s.board = Board{"Supermicro", "X13", "1.0", "AMI", "2.1", "03/15/2024"};
  s.toolchain = Toolchain{{{"gcc", ToolCategory::c, "/usr/bin/gcc", "12.2.0", true}}};
  s.compilers = CompilerConfig{"/usr/bin/gcc", "/usr/bin/g++", "/usr/local/cuda/bin/nvcc", "90"};
  s.cgroup_memory =
      CgroupMemory{2, "/job", 8ull << 30, 1ull << 30, 0, "/sys/fs/cgroup/job/memory.max"};
  s.disk.devices = {{"nvme0n1", "Samsung", 1ull << 40, false, true, false}};
  s.disk.filesystems = {{"cwd", "/home/ada", "/home", "nfs4", "srv:/home", 100, 50}};
  s.scratch = Scratch{true,  "/local",
                      "xfs", StorageTier::local_ssd,
                      99,    {{"/local", "$TMPDIR", "xfs", StorageTier::local_ssd, 99, true, ""}}};
  s.diagnostics = {{"cpu", ProbeStatus::ok, "", 1000},
                   {"board", ProbeStatus::unsupported, "no DMI", 5}};
  return s;
}

}  // namespace

TEST(Json, EveryFieldRoundTrips) {
  auto s = full_snapshot();
  json j = s;
  auto back = j.get<MachineSnapshot>();
  EXPECT_EQ(back, s);
  // And through text, as a saved file would travel.
  EXPECT_EQ(json::parse(j.dump()).get<MachineSnapshot>(), s);
  EXPECT_EQ(j["schema_version"], kSnapshotSchemaVersion);
  EXPECT_EQ(j["scratch"]["tier"], "local-ssd");
  EXPECT_TRUE(j["gpus"][0]["info"]["sm_count"].is_number_unsigned());
  // Closed sets of sources are enums in C++ and the same strings in JSON as before.
  EXPECT_EQ(j["memory"]["source"], "/proc/meminfo");
  EXPECT_EQ(j["cpu"]["info"]["topology_source"], "hwloc");
  EXPECT_EQ(j["cpu"]["info"]["cache_source"], "");
  auto odd = j;
  odd["memory"]["source"] = "psutil";
  try {
    (void)odd.get<MachineSnapshot>();
    FAIL() << "an unknown source was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MemorySource: unknown value 'psutil'"), std::string::npos)
        << e.what();
  }
}

TEST(Json, TextThatIsNotUtf8IsWrittenWithReplacementCharactersNotRefused) {
  auto s = full_snapshot();
  s.hostname =
      "node\xff"
      "01";                                          // a host name set with Latin-1 bytes
  s.board = Board{"Acme\xe9", "X1", "1.0", "", ""};  // a DMI string as firmware wrote it
  HostTuning tuning;
  tuning.governors["perf\xc3"] = {0, 1};  // a key cut inside a character
  s.tuning = tuning;
  json j = s;
  std::string text;
  ASSERT_NO_THROW(text = j.dump());  // strict: what nlohmann refuses to write, it would throw
  EXPECT_EQ(j["hostname"],
            "node\xef\xbf\xbd"
            "01");
  EXPECT_EQ(j["board"]["vendor"], "Acme\xef\xbf\xbd");
  EXPECT_TRUE(j["tuning"]["governors"].contains("perf\xef\xbf\xbd"));
  auto back = json::parse(text).get<MachineSnapshot>();
  EXPECT_EQ(back.hostname,
            "node\xef\xbf\xbd"
            "01");
  // valid text, accents and all, is left as it is
  s.hostname = "n\xc5\x93ud-01";
  EXPECT_EQ(json(s)["hostname"], "n\xc5\x93ud-01");
}

TEST(Json, LiveSnapshotRoundTrips) {
  Machine machine;
  auto s = machine.snapshot({.toolchain = false});
  json j = s;
  EXPECT_EQ(j.get<MachineSnapshot>(), s);
}

TEST(Json, ASnapshotFromAnEarlierBuildLoadsWithTheFieldsItLacksAtTheirDefaults) {
  // Written before the CPU's memory-only NUMA nodes and SVE length were read.
  auto full = full_snapshot();
  json j = full;
  j["cpu"]["info"].erase("memory_only_numa_nodes");
  j["cpu"]["info"].erase("sve_vector_bits");
  j.erase("hostname");
  auto s = j.get<MachineSnapshot>();
  EXPECT_EQ(s.hostname, "");
  EXPECT_TRUE(s.cpu.info.memory_only_numa_nodes.empty());
  EXPECT_EQ(s.cpu.info.threads, full.cpu.info.threads);
  EXPECT_EQ(s.cpu.info.caches, full.cpu.info.caches);
  // Not a snapshot at all is still refused.
  j.erase("schema_version");
  EXPECT_THROW((void)j.get<MachineSnapshot>(), Error);
}

TEST(Json, ASchema1SnapshotReadsItsUnsupportedReadingsAsUnavailable) {
  // Schema 1 said "supported": false beside a reading's fields (and, for the DIMMs,
  // "cards_supported": false beside the cards); schema 2 puts why in the reading's place.
  auto full = full_snapshot();
  json j = full;
  j["schema_version"] = 1;
  j["cgroup_memory"] = {{"supported", false},
                        {"version", 0},
                        {"path", ""},
                        {"limit_bytes", nullptr},
                        {"reason", "no cgroup memory controller"}};
  j["gpus"][0]["telemetry"]["utilization"] = {
      {"supported", false}, {"compute_pct", nullptr}, {"reason", "Not Supported"}};
  j["gpus"][0]["pcie"] = {{"supported", true}, {"tx_kbps", 5.0}, {"reason", ""}};
  // Schema 1 wrote no DMI as a board of empty strings, and why in the probe's diagnostic
  // (full_snapshot's: "no DMI").
  j["board"] = json(Board{});
  j["memory"]["supported"] = true;  // a host's memory that was read, as schema 1 wrote it
  j["memory"]["reason"] = "";
  j["gpus"][0]["telemetry"]["memory"] = {{"total_bytes", 0},      {"used_bytes", nullptr},
                                         {"free_bytes", nullptr}, {"scope", "vram"},
                                         {"unified", false},      {"source", ""},
                                         {"supported", false},    {"reason", "GPU is lost"}};
  j["memory_hardware"] = {{"cards", json::array()},
                          {"cards_supported", false},
                          {"cards_reason", "dmidecode not found"},
                          {"swap_total_bytes", 0},
                          {"swap_used_bytes", 0}};
  auto s = j.get<MachineSnapshot>();
  EXPECT_EQ(s.cgroup_memory.reason(), "no cgroup memory controller");
  EXPECT_EQ(s.gpus[0].telemetry.utilization.reason(), "Not Supported");
  ASSERT_TRUE(s.gpus[0].pcie);  // "supported": true is the reading itself
  EXPECT_EQ(s.gpus[0].pcie->tx_kbps, 5.0);
  ASSERT_TRUE(s.memory);
  EXPECT_EQ(s.memory->total_bytes, full.memory->total_bytes);
  EXPECT_EQ(s.board.reason(), "no DMI");
  EXPECT_EQ(s.gpus[0].telemetry.memory.reason(), "GPU is lost");
  EXPECT_FALSE(s.memory_hardware.cards);
  EXPECT_EQ(s.memory_hardware.cards.reason(), "dmidecode not found");
  // Written again, it is schema 2: why stands in each reading's place.
  json again = s;
  EXPECT_EQ(again["schema_version"], 2);
  EXPECT_EQ(again["memory_hardware"]["cards"]["unavailable"]["reason"], "dmidecode not found");
  EXPECT_FALSE(again["memory_hardware"].contains("cards_supported"));
  EXPECT_FALSE(again["memory"].contains("supported"));
  EXPECT_EQ(again["gpus"][0]["telemetry"]["memory"],
            json({{"unavailable", {{"status", "unsupported"}, {"reason", "GPU is lost"}}}}));
  EXPECT_EQ(again.get<MachineSnapshot>(), s);
}

TEST(Json, MissingRequiredFieldIsNamedOutsideASnapshot) {
  json j = full_snapshot().cpu.info;
  j.erase("threads");
  try {
    (void)j.get<CpuInfo>();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CpuInfo.threads: missing"), std::string::npos);
  }
}

TEST(Json, WrongTypeDeepInsideNamesThePath) {
  json j = full_snapshot();
  j["cpu"]["info"]["threads"] = "many";
  try {
    (void)j.get<MachineSnapshot>();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("cpu"), std::string::npos) << what;
    EXPECT_NE(what.find("CpuInfo.threads: expected an integer"), std::string::npos) << what;
  }
}

TEST(Json, RangeAndEnumChecks) {
  json j = full_snapshot();
  j["cpu"]["info"]["cores"] = -1;
  EXPECT_THROW((void)j.get<MachineSnapshot>(), Error);
  j = full_snapshot();
  j["cpu"]["info"]["cores"] = 1ull << 40;  // does not fit 32 bits
  EXPECT_THROW((void)j.get<MachineSnapshot>(), Error);
  j = full_snapshot();
  j["scratch"]["tier"] = "warp-drive";
  EXPECT_THROW((void)j.get<MachineSnapshot>(), Error);
}

TEST(Json, UnknownFieldsIgnoredAndOptionalsMayBeAbsent) {
  json j = full_snapshot();
  j["a_field_from_the_future"] = {1, 2, 3};
  j["cpu"]["info"].erase("family");
  auto back = j.get<MachineSnapshot>();
  EXPECT_FALSE(back.cpu.info.family);
  EXPECT_EQ(back.hostname, "node1");
}

TEST(Json, SchemaVersionIsChecked) {
  json j = full_snapshot();
  j["schema_version"] = 999;
  try {
    (void)j.get<MachineSnapshot>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema_version 999"), std::string::npos);
  }
  j.erase("schema_version");
  EXPECT_THROW((void)j.get<MachineSnapshot>(), Error);
  EXPECT_THROW((void)json::array().get<MachineSnapshot>(), Error);
}

TEST(Json, CommandMeasurementRoundTrips) {
  CommandMeasurement m;
  m.argv = {"python3", "train.py"};
  m.exit_code = 137;
  m.signal = 9;
  m.wall_s = 1.5;
  m.peak_gpu_bytes = 123;
  m.peak_gpu_bytes_by_gpu = {{"GPU-1", 100}, {"GPU-2", 23}};
  nlohmann::json j = m;
  EXPECT_EQ(j.get<CommandMeasurement>(), m);
  j["peak_gpu_bytes_by_gpu"] = {{"GPU-1", "lots"}};
  EXPECT_THROW((void)j.get<CommandMeasurement>(), Error);
}

TEST(Json, SnapshotQueries) {
  auto s = full_snapshot();
  EXPECT_EQ(s.unit_count(), 3u);
  EXPECT_EQ(s.kinds(), (std::vector<UnitKind>{UnitKind::cpu, UnitKind::gpu, UnitKind::npu}));
  EXPECT_EQ(s.diagnostic("board")->reason, "no DMI");
  EXPECT_EQ(s.diagnostic("nope"), nullptr);
  MachineSnapshot empty;
  EXPECT_EQ(empty.unit_count(), 1u);
  EXPECT_EQ(empty.kinds(), (std::vector<UnitKind>{UnitKind::cpu}));
}
