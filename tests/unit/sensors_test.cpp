// Temperatures (hwmon, thermal zones), static huge pages and EDAC memory errors: the readers on
// what kernels write and on what they should not, the fixture hosts, the readiness rules, the
// summary lines and the metrics.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.hpp"
#include "host/note.hpp"
#include "host/readers.hpp"
#include "mainboard/check.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "serve/exposition.hpp"
#include "serve/metrics.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

host::Sources sensors_sources(const std::filesystem::path& root) {
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(root);
  return sources;
}

Reading<Temperatures> temperatures_of(const std::filesystem::path& root, host::Note& note) {
  return host::read_temperatures(sensors_sources(root), MachineSnapshot{}, note);
}

Reading<HugePages> huge_pages_of(const std::filesystem::path& root, host::Note& note) {
  return host::read_huge_pages(sensors_sources(root), MachineSnapshot{}, note);
}

Reading<MemoryErrors> memory_errors_of(const std::filesystem::path& root, host::Note& note) {
  return host::read_memory_errors(sensors_sources(root), MachineSnapshot{}, note);
}

const TemperatureSensor* sensor(const Temperatures& t, const std::string& device,
                                const std::string& name) {
  for (const auto& s : t.sensors)
    if (s.device == device && s.sensor == name) return &s;
  return nullptr;
}

const Finding* finding(const Readiness& r, const std::string& id) {
  for (const auto& f : r.findings)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(Temperatures, TheServersSensors) {
  host::Note note;
  auto t = temperatures_of(fixture_host("numa-2socket"), note);
  ASSERT_TRUE(t) << t.reason();
  EXPECT_EQ(note.status, ProbeStatus::ok);
  EXPECT_EQ(note.reason, "");
  // 9 per coretemp (package and 8 cores), 2 NVMe, 2 DIMMs, 2 thermal zones.
  ASSERT_EQ(t->sensors.size(), 24u);
  const auto& first = t->sensors[0];
  EXPECT_EQ(first.source, "hwmon");
  EXPECT_EQ(first.chip, "coretemp");
  EXPECT_EQ(first.sensor, "temp1");
  EXPECT_EQ(first.label, "Package id 0");
  EXPECT_EQ(first.kind, "cpu_package");
  EXPECT_EQ(first.device, "coretemp.0");
  EXPECT_DOUBLE_EQ(first.celsius, 62.0);
  EXPECT_EQ(first.high_celsius, 90.0);
  EXPECT_EQ(first.critical_celsius, 100.0);
  const auto* core3 = sensor(*t, "coretemp.1", "temp5");
  ASSERT_NE(core3, nullptr);
  EXPECT_EQ(core3->label, "Core 3");
  EXPECT_EQ(core3->kind, "cpu_core");
  EXPECT_DOUBLE_EQ(core3->celsius, 100.0);
  const auto* composite = sensor(*t, "nvme0", "temp1");
  ASSERT_NE(composite, nullptr);
  EXPECT_EQ(composite->kind, "nvme");
  EXPECT_EQ(composite->label, "Composite");
  EXPECT_DOUBLE_EQ(composite->celsius, 72.85);
  EXPECT_EQ(composite->high_celsius, 70.85);
  EXPECT_EQ(composite->critical_celsius, 74.85);
  // 65261.85 °C is the NVMe's "no limit": none, not a limit.
  const auto* nvme2 = sensor(*t, "nvme0", "temp2");
  ASSERT_NE(nvme2, nullptr);
  EXPECT_FALSE(nvme2->high_celsius);
  EXPECT_FALSE(nvme2->critical_celsius);
  // A jc42 leaves the limits it does not program at 0: none.
  const auto* dimm0 = sensor(*t, "0-0018", "temp1");
  ASSERT_NE(dimm0, nullptr);
  EXPECT_EQ(dimm0->kind, "dimm");
  EXPECT_DOUBLE_EQ(dimm0->celsius, 38.25);
  EXPECT_FALSE(dimm0->high_celsius);
  EXPECT_FALSE(dimm0->critical_celsius);
  EXPECT_EQ(sensor(*t, "0-0019", "temp1")->critical_celsius, 85.0);
  // The thermal zones: ACPI's keeps its critical trip; passive trips are no limit.
  const auto& acpi = t->sensors[22];
  EXPECT_EQ(acpi.source, "thermal");
  EXPECT_EQ(acpi.chip, "acpitz");
  EXPECT_EQ(acpi.sensor, "thermal_zone0");
  EXPECT_EQ(acpi.kind, "other");
  EXPECT_DOUBLE_EQ(acpi.celsius, 27.8);
  EXPECT_EQ(acpi.critical_celsius, 119.0);
  const auto& pkg = t->sensors[23];
  EXPECT_EQ(pkg.chip, "x86_pkg_temp");
  EXPECT_EQ(pkg.kind, "cpu_package");
  EXPECT_FALSE(pkg.critical_celsius);
  EXPECT_FALSE(pkg.high_celsius);
}

// Every value no sensor reads is left out and named; the one good sensor stays.
TEST(Temperatures, MalformedValuesAreLeftOutAndNamed) {
  TempDir root;
  const std::string d = "sys/class/hwmon/hwmon0/";
  root.write(d + "name", "k10temp\n");
  root.write(d + "temp1_input", "garbage\n");
  root.write(d + "temp2_input", "");  // a driver answering ENODATA reads as nothing
  root.write(d + "temp3_input", "-273000\n");
  root.write(d + "temp4_input", "99999999999999999999999\n");
  root.write(d + "temp5_input", "250000\n");
  root.write(d + "temp6_input", "nan\n");
  root.write(d + "temp7_input", "41500");
  root.write(d + "temp7_label", "Tctl\n");
  root.write(d + "temp7_max", "0\n");
  root.write(d + "temp7_crit", "inf\n");
  root.write(d + "temp9_input", std::string(100000, '4'));
  ASSERT_EQ(::mkfifo((root.path() / d / "temp8_input").c_str(), 0600), 0);
  root.write("sys/class/thermal/thermal_zone0/type", "acpitz\n");
  root.write("sys/class/thermal/thermal_zone0/temp", "-273200\n");
  root.write("sys/class/thermal/thermal_zone1/type", "x86_pkg_temp\n");  // no temp file
  root.write("sys/class/thermal/cooling_device0/type", "Processor\n");
  host::Note note;
  auto t = temperatures_of(root.path(), note);
  ASSERT_TRUE(t) << t.reason();
  ASSERT_EQ(t->sensors.size(), 1u);
  EXPECT_EQ(t->sensors[0].sensor, "temp7");
  EXPECT_EQ(t->sensors[0].kind, "cpu");
  EXPECT_DOUBLE_EQ(t->sensors[0].celsius, 41.5);
  EXPECT_FALSE(t->sensors[0].high_celsius);
  EXPECT_FALSE(t->sensors[0].critical_celsius);
  EXPECT_EQ(t->sensors[0].device, "");  // bound to nothing the kernel names
  EXPECT_EQ(note.status, ProbeStatus::ok);
  EXPECT_EQ(note.reason,
            "unreadable or impossible temperature left out: k10temp temp1, k10temp temp2, "
            "k10temp temp3, k10temp temp4, k10temp temp5, k10temp temp6, k10temp temp8, "
            "k10temp temp9, acpitz thermal_zone0, x86_pkg_temp thermal_zone1");
}

// Drivers of old kernels keep their files under hwmonN/device/.
TEST(Temperatures, OldLayoutUnderDevice) {
  TempDir root;
  root.write("sys/devices/platform/it87.656/name", "it8728\n");
  root.write("sys/devices/platform/it87.656/temp2_input", "47000\n");
  root.write("sys/devices/platform/it87.656/temp2_max", "127000\n");
  root.mkdir("sys/class/hwmon/hwmon1");
  std::filesystem::create_directory_symlink("../../../devices/platform/it87.656",
                                            root.path() / "sys/class/hwmon/hwmon1/device");
  host::Note note;
  auto t = temperatures_of(root.path(), note);
  ASSERT_TRUE(t) << t.reason();
  ASSERT_EQ(t->sensors.size(), 1u);
  EXPECT_EQ(t->sensors[0].chip, "it8728");
  EXPECT_EQ(t->sensors[0].device, "it87.656");
  EXPECT_EQ(t->sensors[0].kind, "other");
  EXPECT_DOUBLE_EQ(t->sensors[0].celsius, 47.0);
  EXPECT_EQ(t->sensors[0].high_celsius, 127.0);
}

TEST(Temperatures, NoSensorIsUnavailableWithWhy) {
  TempDir empty;
  host::Note note;
  auto none = temperatures_of(empty.path(), note);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.unavailable()->status, ProbeStatus::unsupported);
  EXPECT_EQ(none.reason(),
            "no temperature sensor: neither hwmon nor a thermal zone (a virtual machine, or no "
            "sensor driver loaded)");
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
  // The broken host has sensors, none of them readable: unavailable, naming them.
  auto broken = Machine::Options{};
  broken.sysroot = fixture_host("broken");
  auto snap = Machine(broken).snapshot({.toolchain = false});
  ASSERT_FALSE(snap.temperatures);
  EXPECT_EQ(snap.temperatures.unavailable()->status, ProbeStatus::unsupported);
  EXPECT_EQ(snap.temperatures.reason(),
            "unreadable or impossible temperature left out: coretemp temp1, coretemp temp2, "
            "coretemp temp3, coretemp temp4, acpitz thermal_zone0");
  ASSERT_NE(snap.diagnostic("temperatures"), nullptr);
  EXPECT_EQ(snap.diagnostic("temperatures")->status, ProbeStatus::unsupported);
}

TEST(HugePages, SystemAndNodePools) {
  host::Note note;
  auto h = huge_pages_of(fixture_host("numa-2socket"), note);
  ASSERT_TRUE(h) << h.reason();
  EXPECT_EQ(note.reason, "");
  ASSERT_EQ(h->pools.size(), 6u);
  const auto& two = h->pools[0];
  EXPECT_EQ(two.page_bytes, 2u << 20);
  EXPECT_FALSE(two.numa_node);
  EXPECT_EQ(two.total, 1024u);
  EXPECT_EQ(two.free, 512u);
  EXPECT_EQ(two.reserved, 12u);
  EXPECT_EQ(two.surplus, 0u);
  const auto& gig = h->pools[1];
  EXPECT_EQ(gig.page_bytes, 1u << 30);
  EXPECT_EQ(gig.total, 8u);
  EXPECT_EQ(gig.free, 8u);
  // Per node: 2 MiB then 1 GiB, node 0 then node 1; a node keeps no reserved count.
  EXPECT_EQ(h->pools[2].numa_node, 0);
  EXPECT_EQ(h->pools[2].page_bytes, 2u << 20);
  EXPECT_EQ(h->pools[2].free, 200u);
  EXPECT_FALSE(h->pools[2].reserved);
  EXPECT_EQ(h->pools[3].numa_node, 0);
  EXPECT_EQ(h->pools[3].total, 4u);
  EXPECT_EQ(h->pools[4].numa_node, 1);
  EXPECT_EQ(h->pools[4].free, 312u);
  EXPECT_EQ(h->pools[5].page_bytes, 1u << 30);
}

TEST(HugePages, MalformedCountsAreLeftOut) {
  TempDir root;
  const std::string s = "sys/kernel/mm/hugepages/";
  root.write(s + "hugepages-2048kB/nr_hugepages", "16\n");
  root.write(s + "hugepages-2048kB/free_hugepages", "16\n");
  root.write(s + "hugepages-2048kB/resv_hugepages", "x\n");  // an optional count: none
  root.write(s + "hugepages-1048576kB/nr_hugepages", "18446744073709551615\n");  // > 2^64 bytes
  root.write(s + "hugepages-1048576kB/free_hugepages", "0\n");
  root.write(s + "hugepages-64kB/nr_hugepages", "");
  root.write(s + "hugepages-64kB/free_hugepages", "0\n");
  root.write(s + "hugepages-99999999999999999999kB/nr_hugepages", "1\n");  // no such size
  root.write(s + "hugepages-0kB/nr_hugepages", "1\n");
  root.write("sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "-3\n");
  root.write("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "0\n");
  root.write("sys/devices/system/node/nodeX/hugepages/hugepages-2048kB/nr_hugepages", "1\n");
  host::Note note;
  auto h = huge_pages_of(root.path(), note);
  ASSERT_TRUE(h) << h.reason();
  ASSERT_EQ(h->pools.size(), 1u);
  EXPECT_EQ(h->pools[0].total, 16u);
  EXPECT_FALSE(h->pools[0].reserved);
  EXPECT_FALSE(h->pools[0].surplus);  // no file
  EXPECT_EQ(note.reason,
            "unreadable huge page pools left out: hugepages-1048576kB, hugepages-64kB, "
            "node0 hugepages-2048kB");
  // The broken host: every pool torn.
  host::Note broken_note;
  auto broken = huge_pages_of(fixture_host("broken"), broken_note);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.unavailable()->status, ProbeStatus::unsupported);
  EXPECT_EQ(broken.reason(),
            "no readable huge page pool: hugepages-1048576kB, hugepages-2048kB, hugepages-64kB");
  // A kernel without hugetlbfs.
  TempDir empty;
  host::Note none_note;
  auto none = huge_pages_of(empty.path(), none_note);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.unavailable()->status, ProbeStatus::unsupported);
  EXPECT_EQ(none.reason(),
            "no huge page pools in /sys/kernel/mm/hugepages (a kernel without hugetlbfs)");
}

// Most machines have no huge pages: /proc/meminfo's Hugetlb (every pool of every size) says so
// at 0 kB, and then the pools' own files are not read. Where it says more, or nothing, they are.
TEST(HugePages, EmptyPoolsAsMeminfoSaysAreNotReadFileByFile) {
  auto pools_with = [](const std::string& meminfo, host::Note& note) {
    TempDir root;
    if (!meminfo.empty()) root.write("proc/meminfo", meminfo);
    const std::string s = "sys/kernel/mm/hugepages/";
    // Counts the shortcut must not read: they would be left out as unreadable.
    root.write(s + "hugepages-2048kB/nr_hugepages", "x\n");
    root.write(s + "hugepages-2048kB/free_hugepages", "x\n");
    root.write(s + "hugepages-1048576kB/nr_hugepages", "x\n");
    root.write(s + "hugepages-1048576kB/free_hugepages", "x\n");
    root.write("sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "x\n");
    return huge_pages_of(root.path(), note);
  };
  host::Note note;
  auto empty = pools_with("MemTotal: 16384 kB\nHugePages_Total: 0\nHugetlb:  0 kB\n", note);
  ASSERT_TRUE(empty) << empty.reason();
  EXPECT_EQ(note.reason, "");
  ASSERT_EQ(empty->pools.size(), 3u);
  EXPECT_EQ(empty->pools[0].page_bytes, 2u << 20);
  EXPECT_EQ(empty->pools[1].page_bytes, 1u << 30);
  EXPECT_EQ(empty->pools[2].numa_node, 0);
  for (const auto& p : empty->pools) {
    EXPECT_EQ(p.total, 0u);
    EXPECT_EQ(p.free, 0u);
    EXPECT_EQ(p.surplus, 0u);
    EXPECT_EQ(p.reserved.has_value(), !p.numa_node);
  }
  // Pages somewhere, a garbled line, no line (before Linux 4.16), no meminfo: each file is read.
  for (std::string meminfo : {std::string("Hugetlb: 2097152 kB\n"), std::string("Hugetlb: x kB\n"),
                              std::string("HugePages_Total: 0\n"), std::string()}) {
    host::Note read_note;
    auto read = pools_with(meminfo, read_note);
    EXPECT_FALSE(read) << meminfo;
    EXPECT_EQ(read.reason(), "no readable huge page pool: hugepages-1048576kB, hugepages-2048kB")
        << meminfo;
  }
}

TEST(MemoryErrors, TwoControllers) {
  host::Note note;
  auto e = memory_errors_of(fixture_host("numa-2socket"), note);
  ASSERT_TRUE(e) << e.reason();
  ASSERT_EQ(e->controllers.size(), 2u);
  const auto& mc0 = e->controllers[0];
  EXPECT_EQ(mc0.name, "mc0");
  EXPECT_EQ(mc0.type, "Intel_10nm Socket#0 IMC#0");
  EXPECT_EQ(mc0.size_bytes, 256ull << 30);
  EXPECT_EQ(mc0.corrected, 12u);
  EXPECT_EQ(mc0.uncorrected, 0u);
  const auto& mc1 = e->controllers[1];
  EXPECT_EQ(mc1.name, "mc1");
  EXPECT_EQ(mc1.corrected, 3u);
  EXPECT_EQ(mc1.uncorrected, 2u);
  EXPECT_EQ(mc1.uncorrected_unattributed, 1u);
  EXPECT_EQ(mc1.corrected_unattributed, 0u);
}

TEST(MemoryErrors, MalformedCountsAndNoDriver) {
  TempDir root;
  auto mc = [&](const std::string& name, const std::string& ce, const std::string& size) {
    const std::string d = "sys/devices/system/edac/mc/" + name + "/";
    root.write(d + "ce_count", ce);
    root.write(d + "ue_count", "0\n");
    root.write(d + "ce_noinfo_count", "0\n");
    root.write(d + "ue_noinfo_count", "0\n");
    root.write(d + "size_mb", size);
  };
  mc("mc0", "7\n", "garbage\n");                   // size unknown, counts fine
  mc("mc1", "99999999999999999999\n", "1024\n");   // a count no integer holds
  mc("mc2", "-1\n", "1024\n");                     // a negative count
  mc("mc10", "1\n", "99999999999999999999999\n");  // size unknown, numbered after mc2
  root.write("sys/devices/system/edac/mc/power/control", "auto\n");
  host::Note note;
  auto e = memory_errors_of(root.path(), note);
  ASSERT_TRUE(e) << e.reason();
  ASSERT_EQ(e->controllers.size(), 2u);
  EXPECT_EQ(e->controllers[0].name, "mc0");
  EXPECT_EQ(e->controllers[0].corrected, 7u);
  EXPECT_FALSE(e->controllers[0].size_bytes);
  EXPECT_EQ(e->controllers[1].name, "mc10");
  EXPECT_FALSE(e->controllers[1].size_bytes);
  EXPECT_EQ(note.reason, "memory controllers with unreadable error counts left out: mc1, mc2");
  host::Note broken_note;
  auto broken = memory_errors_of(fixture_host("broken"), broken_note);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.unavailable()->status, ProbeStatus::unsupported);
  EXPECT_EQ(broken.reason(), "no readable error counts in EDAC memory controllers mc0, mc1");
  TempDir empty;
  host::Note none_note;
  auto none = memory_errors_of(empty.path(), none_note);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.reason(), "no EDAC memory controller driver loaded");
  EXPECT_EQ(none_note.status, ProbeStatus::unsupported);
}

// Parts at their critical limit and uncorrected memory errors are blockers, naming the
// sensors and the controllers; a high limit and corrected errors are warnings.
TEST(SensorsCheck, CriticalTemperaturesAndUncorrectedErrorsAreBlockers) {
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  auto r = check_readiness(Machine(o).snapshot({.toolchain = false}), false);
  const auto* critical = finding(r, "temperature.critical");
  ASSERT_NE(critical, nullptr) << r.text();
  EXPECT_EQ(critical->severity, Severity::blocker);
  EXPECT_EQ(critical->reading,
            "coretemp Package id 1 (coretemp.1) 100.0 °C, critical 100.0 °C; coretemp Core 3 "
            "(coretemp.1) 100.0 °C, critical 100.0 °C");
  const auto* high = finding(r, "temperature.high");
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->severity, Severity::warning);
  EXPECT_EQ(high->reading, "nvme Composite (nvme0) 72.8 °C, high 70.8 °C");
  const auto* ue = finding(r, "memory.errors.uncorrected");
  ASSERT_NE(ue, nullptr);
  EXPECT_EQ(ue->severity, Severity::blocker);
  EXPECT_EQ(ue->reading, "2 uncorrected memory errors (mc1: 2)");
  const auto* ce = finding(r, "memory.errors.corrected");
  ASSERT_NE(ce, nullptr);
  EXPECT_EQ(ce->severity, Severity::warning);
  EXPECT_EQ(ce->reading, "15 corrected memory errors (mc0: 12, mc1: 3)");
  // Cooler, and with clean memory: nothing to say. Without a reading: nothing either.
  auto s = Machine(o).snapshot({.toolchain = false});
  for (auto& t : s.temperatures->sensors)
    t.celsius = 40;
  for (auto& c : s.memory_errors->controllers)
    c.corrected = c.uncorrected = 0;
  auto calm = check_readiness(s, false);
  for (const char* id : {"temperature.critical", "temperature.high", "memory.errors.uncorrected",
                         "memory.errors.corrected"})
    EXPECT_EQ(finding(calm, id), nullptr) << id << "\n" << calm.text();
  s.temperatures = Reading<Temperatures>::none("no sensor");
  s.memory_errors = Reading<MemoryErrors>::none("no EDAC");
  EXPECT_EQ(finding(check_readiness(s, false), "temperature.critical"), nullptr);
}

TEST(SensorsServe, NodeExporterNamesInCelsiusAndPages) {
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  Machine m(o);
  serve::Exposition out;
  serve::expose(serve::read(m), out);
  auto text = out.text(serve::Format::prometheus);
  for (const char* want :
       {"\nmainboard_hwmon_temp_celsius{chip=\"coretemp\",device=\"coretemp.1\",sensor=\"temp5\"} "
        "100\n",
        "\nmainboard_hwmon_temp_crit_celsius{chip=\"coretemp\",device=\"coretemp.1\",sensor="
        "\"temp5\"} 100\n",
        "\nmainboard_hwmon_temp_max_celsius{chip=\"nvme\",device=\"nvme0\",sensor=\"temp1\"} "
        "70.85\n",
        "\nmainboard_hwmon_sensor_label{chip=\"coretemp\",device=\"coretemp.0\",sensor="
        "\"temp1\",label=\"Package id 0\"} 1\n",
        "\nmainboard_thermal_zone_temp{zone=\"0\",type=\"acpitz\"} 27.8\n",
        "\nmainboard_memory_hugepages_pages{size_bytes=\"2097152\"} 1024\n",
        "\nmainboard_memory_hugepages_reserved_pages{size_bytes=\"2097152\"} 12\n",
        "\nmainboard_memory_numa_hugepages_free_pages{node=\"1\",size_bytes=\"2097152\"} 312\n",
        "\nmainboard_memory_numa_hugepages_pages{node=\"0\",size_bytes=\"1073741824\"} 4\n",
        "\nmainboard_edac_uncorrectable_errors_total{controller=\"1\"} 2\n",
        "\nmainboard_edac_correctable_errors_total{controller=\"0\"} 12\n",
        "\n# TYPE mainboard_edac_correctable_errors_total counter\n"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  // No limit, no series: the jc42's 0 limits and the NVMe's second sensor.
  EXPECT_EQ(text.find("mainboard_hwmon_temp_max_celsius{chip=\"jc42\""), std::string::npos);
  EXPECT_EQ(text.find("mainboard_hwmon_temp_crit_celsius{chip=\"nvme\",device=\"nvme0\",sensor="
                      "\"temp2\"}"),
            std::string::npos);
  // The broken host: each reading unavailable with why, no series.
  Machine::Options b;
  b.sysroot = fixture_host("broken");
  serve::Exposition none;
  serve::expose(serve::read(Machine(b)), none);
  auto ntext = none.text(serve::Format::prometheus);
  EXPECT_EQ(ntext.find("mainboard_hwmon_temp_celsius"), std::string::npos);
  EXPECT_EQ(ntext.find("mainboard_memory_hugepages_pages"), std::string::npos);
  EXPECT_EQ(ntext.find("mainboard_edac_"), std::string::npos);
  for (const char* want :
       {"reading=\"temperatures\",reason=\"unreadable or impossible temperature left out: ",
        "reading=\"huge_pages\",reason=\"no readable huge page pool: ",
        "reading=\"memory_errors\",reason=\"no readable error counts in EDAC memory "})
    EXPECT_NE(ntext.find(want), std::string::npos) << want << "\n" << ntext;
}

TEST(SensorsJson, RoundTripsThroughTheSnapshot) {
  Machine::Options o;
  o.sysroot = fixture_host("numa-2socket");
  auto s = Machine(o).snapshot({.toolchain = false});
  nlohmann::json j = s;
  EXPECT_EQ(j["temperatures"]["sensors"][0]["label"], "Package id 0");
  EXPECT_EQ(j["temperatures"]["sensors"][20]["high_celsius"], nullptr);  // a jc42's 0
  EXPECT_EQ(j["huge_pages"]["pools"][0]["reserved"], 12);
  EXPECT_EQ(j["huge_pages"]["pools"][0]["numa_node"], nullptr);
  EXPECT_EQ(j["memory_errors"]["controllers"][1]["uncorrected"], 2);
  auto back = j.get<MachineSnapshot>();
  EXPECT_EQ(back.temperatures, s.temperatures);
  EXPECT_EQ(back.huge_pages, s.huge_pages);
  EXPECT_EQ(back.memory_errors, s.memory_errors);
}
