// RAPL energy counters (/sys/class/powercap/intel-rapl:*) and the energy of a metered region:
// the reader over fixture trees (well formed, malformed, refused), and the Meter's sums over
// counters a test rewrites between samples, wrap-around included, and over the fake NVML's
// total energy counter; a profiling session's energy.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.hpp"
#include "fake_gpus.hpp"
#include "host/note.hpp"
#include "host/readers.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/meter.hpp"
#include "mainboard/profile.hpp"
#include "mainboard/profiler.hpp"
#include "mainboard/span.hpp"
#include "serve/exposition.hpp"
#include "serve/metrics.hpp"
#include "test_util.hpp"
#include "view/summary.hpp"

using namespace mainboard;

namespace {

constexpr std::uint64_t kRange = 262143328850;  // a Xeon package's max_energy_range_uj

/// A zone under sys/class/powercap: its name, energy_uj and (where given) its range.
void rapl_zone(const TempDir& root, const std::string& zone, const std::string& name,
               const std::string& energy_uj, const std::string& range = std::to_string(kRange)) {
  std::string dir = "sys/class/powercap/" + zone + "/";
  root.write(dir + "name", name + "\n");
  root.write(dir + "energy_uj", energy_uj);
  if (!range.empty()) root.write(dir + "max_energy_range_uj", range + "\n");
}

void set_energy(const TempDir& root, const std::string& zone, const std::string& energy_uj) {
  root.write("sys/class/powercap/" + zone + "/energy_uj", energy_uj + "\n");
}

struct RaplRead {
  Reading<EnergyCounters> counters;
  host::Note note;
};

RaplRead read_rapl(const TempDir& root) {
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(root.path());
  RaplRead r;
  r.counters = host::read_energy_counters(sources, MachineSnapshot{}, r.note);
  return r;
}

/// A machine over `root` with no GPU drivers to find.
Machine::Options rapl_host(const TempDir& root) {
  Machine::Options o;
  o.sysroot = root.path();
  o.environment = std::map<std::string, std::string>{
      {"MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
      {"MAINBOARD_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"}};
  return o;
}

const DomainEnergy* domain(const RegionEnergy& e, const std::string& name) {
  for (const auto& d : e.domains)
    if (d.domain == name) return &d;
  return nullptr;
}

}  // namespace

TEST(Rapl, ReadsPackagesAndSubzonesInOrder) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1234567\n");
  rapl_zone(root, "intel-rapl:0:0", "dram", "89012\n", "65712999613");
  rapl_zone(root, "intel-rapl:0:1", "core", "5000\n");
  rapl_zone(root, "intel-rapl:1", "package-1-die-0", "7654321\n");
  rapl_zone(root, "intel-rapl:1:0", "dram", "3\n");
  rapl_zone(root, "intel-rapl:10", "psys", "42\n", "");
  // The control type and the MMIO copy of package 0 are not counters to add.
  root.write("sys/class/powercap/intel-rapl/enabled", "1\n");
  rapl_zone(root, "intel-rapl-mmio:0", "package-0", "1234999\n");
  auto r = read_rapl(root);
  ASSERT_TRUE(r.counters) << r.counters.reason();
  const auto& c = r.counters->counters;
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].zone, "intel-rapl:0");
  EXPECT_EQ(c[0].domain, "package");
  EXPECT_EQ(c[0].package, 0u);
  EXPECT_EQ(c[0].energy_uj, 1234567u);
  EXPECT_EQ(c[0].max_energy_range_uj, kRange);
  EXPECT_EQ(c[1].zone, "intel-rapl:0:0");
  EXPECT_EQ(c[1].domain, "dram");
  EXPECT_EQ(c[1].package, 0u);  // a subzone's package is its parent's
  EXPECT_EQ(c[1].max_energy_range_uj, 65712999613u);
  EXPECT_EQ(c[2].domain, "core");
  EXPECT_EQ(c[3].zone, "intel-rapl:1");
  EXPECT_EQ(c[3].package, 1u);  // package-1-die-0: a multi-die part
  EXPECT_EQ(c[4].zone, "intel-rapl:1:0");
  EXPECT_EQ(c[4].package, 1u);
  EXPECT_EQ(c[5].zone, "intel-rapl:10");  // after 1, not between 1 and 1:0
  EXPECT_EQ(c[5].domain, "psys");
  EXPECT_FALSE(c[5].package);
  EXPECT_FALSE(c[5].max_energy_range_uj);
  EXPECT_EQ(r.note.status, ProbeStatus::ok);
  EXPECT_EQ(r.note.reason, "");
}

TEST(Rapl, NoPowercapIsUnavailableWithWhy) {
  TempDir root;
  root.mkdir("sys/class/powercap/intel-rapl");  // the control type alone: no zone
  auto r = read_rapl(root);
  ASSERT_FALSE(r.counters);
  EXPECT_NE(r.counters.reason().find("no RAPL energy counters"), std::string::npos)
      << r.counters.reason();
  EXPECT_EQ(r.note.status, ProbeStatus::unsupported);
  TempDir empty;
  EXPECT_FALSE(read_rapl(empty).counters);
}

TEST(Rapl, MalformedCountersAreLeftOutWithWhy) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1000\n");
  rapl_zone(root, "intel-rapl:0:0", "dram", "garbage\n");
  rapl_zone(root, "intel-rapl:0:1", "core", "");
  rapl_zone(root, "intel-rapl:0:2", "uncore", "99999999999999999999999999\n");  // past 2^64
  rapl_zone(root, "intel-rapl:1", "package-1", "300000000000\n");               // past its range
  rapl_zone(root, "intel-rapl:2", "package-2", "-5\n");
  rapl_zone(root, "intel-rapl:3", "package-3", "nan\n");
  rapl_zone(root, "intel-rapl:4", "package-4", "7\n", "zero");     // kept, range unknown
  rapl_zone(root, "intel-rapl:5", "gpu", "7\n");                   // a domain we do not know
  root.write("sys/class/powercap/intel-rapl:6/energy_uj", "7\n");  // no name
  root.write("sys/class/powercap/intel-rapl:7/name", "package-7\n");
  root.mkdir("sys/class/powercap/intel-rapl:7/energy_uj");  // a directory where a file belongs
  rapl_zone(root, "intel-rapl:8", "package-8", std::string(200, '1'));  // far too long
  std::filesystem::create_directories(root.path() / "sys/class/powercap/intel-rapl:9");
  root.write("sys/class/powercap/intel-rapl:9/name", "package-9\n");
  ASSERT_EQ(::mkfifo((root.path() / "sys/class/powercap/intel-rapl:9/energy_uj").c_str(), 0600), 0);
  auto r = read_rapl(root);
  ASSERT_TRUE(r.counters) << r.counters.reason();
  const auto& c = r.counters->counters;
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].zone, "intel-rapl:0");
  EXPECT_EQ(c[0].energy_uj, 1000u);
  EXPECT_EQ(c[1].zone, "intel-rapl:4");
  EXPECT_EQ(c[1].energy_uj, 7u);
  EXPECT_FALSE(c[1].max_energy_range_uj);
  for (const char* why :
       {"intel-rapl:0:0: energy_uj is not a count of microjoules: 'garbage'",
        "intel-rapl:0:1: energy_uj is not a count of microjoules: ''",
        "intel-rapl:0:2: energy_uj is not a count of microjoules: '999999999999999999999999…'",
        "intel-rapl:1: energy_uj 300000000000 exceeds max_energy_range_uj 262143328850",
        "intel-rapl:2: energy_uj is not a count of microjoules: '-5'",
        "intel-rapl:3: energy_uj is not a count of microjoules: 'nan'",
        "intel-rapl:4: max_energy_range_uj is not a count of microjoules: 'zero'",
        "intel-rapl:5: unknown domain 'gpu'", "intel-rapl:6: no name",
        "intel-rapl:7: energy_uj could not be read", "intel-rapl:8: energy_uj could not be read",
        "intel-rapl:9: energy_uj"})
    EXPECT_NE(r.note.reason.find(why), std::string::npos) << why << "\n" << r.note.reason;
}

TEST(Rapl, NoCounterReadableFails) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "junk\n");
  auto r = read_rapl(root);
  ASSERT_FALSE(r.counters);
  EXPECT_EQ(r.counters.unavailable()->status, ProbeStatus::failed);
  EXPECT_EQ(r.counters.reason(),
            "no RAPL energy counter could be read: intel-rapl:0: energy_uj is not a count of "
            "microjoules: 'junk'");
}

TEST(Rapl, CountersOnlyRootMayReadSayWhy) {
  // Since Linux 5.10 energy_uj is mode 0400, root's. Root reads anything, so as root the
  // reader runs in a child that has become nobody.
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1000\n");
  rapl_zone(root, "intel-rapl:0:0", "dram", "2000\n");
  for (const char* zone : {"intel-rapl:0", "intel-rapl:0:0"})
    ASSERT_EQ(::chmod((root.path() / "sys/class/powercap" / zone / "energy_uj").c_str(), 0400), 0);
  std::filesystem::permissions(
      root.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                       std::filesystem::perms::others_exec | std::filesystem::perms::group_read |
                       std::filesystem::perms::others_read);
  if (::geteuid() != 0) {
    // The files are ours: take our own read permission away, as root's files are for us.
    for (const char* zone : {"intel-rapl:0", "intel-rapl:0:0"})
      ASSERT_EQ(::chmod((root.path() / "sys/class/powercap" / zone / "energy_uj").c_str(), 0), 0);
    auto r = read_rapl(root);
    ASSERT_FALSE(r.counters);
    EXPECT_EQ(r.counters.reason(),
              "only root may read RAPL energy counters (since Linux 5.10, CVE-2020-8694)");
    return;
  }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    auto r = read_rapl(root);
    std::string out = r.counters ? "ok" : r.counters.reason() + "|" + r.note.reason;
    ssize_t n = ::write(pipe_fds[1], out.data(), out.size());
    ::_exit(n == static_cast<ssize_t>(out.size()) ? 0 : 4);
  }
  ::close(pipe_fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;)
    got.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(got,
            "only root may read RAPL energy counters (since Linux 5.10, CVE-2020-8694)|only root "
            "may read RAPL energy counters (since Linux 5.10, CVE-2020-8694)");
}

TEST(Rapl, SnapshotJsonCarriesTheCounters) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1234567\n");
  Machine m(rapl_host(root));
  auto s = m.reading("energy_counters");
  nlohmann::json j = s.energy_counters;
  EXPECT_EQ(j["counters"][0]["zone"], "intel-rapl:0");
  EXPECT_EQ(j["counters"][0]["energy_uj"], 1234567);
  EXPECT_EQ(j["counters"][0]["max_energy_range_uj"], kRange);
  EXPECT_EQ(j.get<Reading<EnergyCounters>>(), s.energy_counters);
}

TEST(Rapl, MetricsAreNodeExportersJoules) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1234567\n");
  rapl_zone(root, "intel-rapl:0:0", "dram", "2500000\n");
  rapl_zone(root, "intel-rapl:1", "package-1", "7000000\n");
  rapl_zone(root, "intel-rapl:1:0", "dram", "500000\n");
  Machine m(rapl_host(root));
  serve::Exposition out;
  serve::expose(serve::read(m), out);
  auto text = out.text(serve::Format::prometheus);
  for (const char* sample :
       {"# TYPE mainboard_rapl_package_joules_total counter",
        "mainboard_rapl_package_joules_total{index=\"0\",path=\"/sys/class/powercap/"
        "intel-rapl:0\"} 1.234567",
        "mainboard_rapl_package_joules_total{index=\"1\",path=\"/sys/class/powercap/"
        "intel-rapl:1\"} 7",
        "mainboard_rapl_dram_joules_total{index=\"0\",path=\"/sys/class/powercap/"
        "intel-rapl:0:0\"} 2.5",
        "mainboard_rapl_dram_joules_total{index=\"1\",path=\"/sys/class/powercap/"
        "intel-rapl:1:0\"} 0.5"})
    EXPECT_NE(text.find(sample), std::string::npos) << sample << "\n" << text;
  EXPECT_EQ(text.find("reading=\"rapl\""), std::string::npos);

  TempDir none;
  Machine vm(rapl_host(none));
  serve::Exposition nout;
  serve::expose(serve::read(vm), nout);
  auto ntext = nout.text(serve::Format::prometheus);
  EXPECT_EQ(ntext.find("mainboard_rapl_package"), std::string::npos);
  EXPECT_NE(ntext.find("reading=\"rapl\",reason=\"no RAPL energy counters"), std::string::npos)
      << ntext;
}

TEST(Rapl, SummarySaysWhichCountersOrWhyNot) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1\n");
  rapl_zone(root, "intel-rapl:0:0", "dram", "1\n");
  rapl_zone(root, "intel-rapl:1", "package-1", "1\n");
  rapl_zone(root, "intel-rapl:1:0", "dram", "1\n");
  Machine m(rapl_host(root));
  auto text = view::render_summary(m.snapshot({.toolchain = false}), view::Style{false});
  EXPECT_NE(text.find("RAPL package 0,1 + dram counters readable"), std::string::npos) << text;
  // Zones there but unreadable: why; no RAPL at all (a VM): no line.
  TempDir broken;
  rapl_zone(broken, "intel-rapl:0", "package-0", "junk\n");
  Machine b(rapl_host(broken));
  auto btext = view::render_summary(b.snapshot({.toolchain = false}), view::Style{false});
  EXPECT_NE(btext.find("unavailable: no RAPL energy counter could be read: intel-rapl:0: "
                       "energy_uj is not a count of microjoules: 'junk'"),
            std::string::npos)
      << btext;
  TempDir vm;
  Machine v(rapl_host(vm));
  EXPECT_EQ(view::render_summary(v.snapshot({.toolchain = false}), view::Style{false}).find("RAPL"),
            std::string::npos);
}

TEST(MeterEnergy, SumsRaplAcrossSamplesAndAWrap) {
  TempDir root;
  // Package 0 starts 1,328,850 µJ short of its range's end and wraps before the next sample.
  rapl_zone(root, "intel-rapl:0", "package-0", std::to_string(kRange - 1328850));
  rapl_zone(root, "intel-rapl:0:0", "dram", "5000000");
  rapl_zone(root, "intel-rapl:0:1", "core", "100");  // inside the package: not added
  rapl_zone(root, "intel-rapl:1", "package-1", "1000000");
  Machine m(rapl_host(root));
  Meter meter(m);
  set_energy(root, "intel-rapl:0", "2000000");  // wrapped: 1.32885 J + 2 J
  set_energy(root, "intel-rapl:0:0", "7500000");
  set_energy(root, "intel-rapl:0:1", "900000100");
  set_energy(root, "intel-rapl:1", "1500000");
  meter.sample();
  set_energy(root, "intel-rapl:0", "4000000");  // 2 J more
  set_energy(root, "intel-rapl:1", "garbage");  // unreadable this once: the next covers it
  meter.sample();
  set_energy(root, "intel-rapl:1", "3500000");
  meter.stop();
  auto e = meter.energy();
  ASSERT_EQ(e.domains.size(), 2u) << nlohmann::json(e).dump();
  const auto* cpu = domain(e, "cpu");
  ASSERT_TRUE(cpu);
  // Package 0: 1.32885 + 2 + 2 J; package 1: 3.5 - 1 = 2.5 J.
  EXPECT_NEAR(cpu->joules, 7.82885, 1e-9);
  EXPECT_EQ(cpu->source, "RAPL intel-rapl:0, intel-rapl:1");
  const auto* dram = domain(e, "dram");
  ASSERT_TRUE(dram);
  EXPECT_NEAR(dram->joules, 2.5, 1e-9);
  ASSERT_TRUE(e.total_j);
  EXPECT_NEAR(*e.total_j, 10.32885, 1e-9);
  ASSERT_TRUE(e.mean_w);
  EXPECT_NEAR(*e.mean_w, 10.32885 / meter.elapsed_s(), 1e-6 * *e.mean_w);
  EXPECT_NEAR(cpu->mean_w, 7.82885 / meter.elapsed_s(), 1e-6 * cpu->mean_w);
  EXPECT_TRUE(e.unavailable.empty()) << e.unavailable.front();
  // Frozen at stop().
  set_energy(root, "intel-rapl:0", "9000000");
  meter.sample();
  EXPECT_NEAR(domain(meter.energy(), "cpu")->joules, 7.82885, 1e-9);
}

TEST(MeterEnergy, AWrapWithoutARangeIsNotGuessed) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "5000000", "");
  Machine m(rapl_host(root));
  Meter meter(m);
  set_energy(root, "intel-rapl:0", "1000");
  meter.stop();
  auto e = meter.energy();
  EXPECT_FALSE(domain(e, "cpu"));
  EXPECT_FALSE(e.total_j);
  ASSERT_FALSE(e.unavailable.empty());
  EXPECT_EQ(e.unavailable[0],
            "cpu: intel-rapl:0 went back with no max_energy_range_uj to correct the wrap");
}

TEST(MeterEnergy, UnavailableSaysWhy) {
  TempDir root;
  Machine m(rapl_host(root));
  Meter meter(m);
  meter.stop();
  auto e = meter.energy();
  EXPECT_TRUE(e.domains.empty());
  EXPECT_FALSE(e.total_j);
  EXPECT_FALSE(e.mean_w);
  ASSERT_EQ(e.unavailable.size(), 1u);
  EXPECT_EQ(e.unavailable[0].rfind("cpu, dram: no RAPL energy counters", 0), 0u)
      << e.unavailable[0];

  // A package without a dram domain (AMD's RAPL) says so.
  TempDir amd;
  rapl_zone(amd, "intel-rapl:0", "package-0", "1000000");
  Machine on_amd(rapl_host(amd));
  Meter amd_meter(on_amd);
  set_energy(amd, "intel-rapl:0", "4000000");
  amd_meter.stop();
  auto a = amd_meter.energy();
  ASSERT_TRUE(domain(a, "cpu"));
  EXPECT_NEAR(domain(a, "cpu")->joules, 3.0, 1e-9);
  EXPECT_EQ(a.unavailable, std::vector<std::string>{"dram: this CPU's RAPL has no dram domain"});

  // A counter left out says which and why: its energy is not in the sums. (A machine finds its
  // RAPL zones once, as its GPUs: the host with a second package is another machine.)
  rapl_zone(amd, "intel-rapl:1", "package-1", "junk");
  Machine two_packages(rapl_host(amd));
  Meter partial(two_packages);
  partial.stop();
  EXPECT_EQ(partial.energy().unavailable,
            std::vector<std::string>{
                "RAPL: left out intel-rapl:1: energy_uj is not a count of microjoules: 'junk'"});
}

TEST(MeterEnergy, GpuEnergyFromNvmlsTotalCounter) {
  TempDir scenario;
  auto path = scenario.write("energy.json", R"({
    "driver_version": "550.54.15", "nvml_version": "12.550.54.15", "cuda_driver_version": 12040,
    "devices": [
      {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-11111111-2222-3333-4444-555555555555",
       "pci_bus_id": "00000000:18:00.0", "cc": [9, 0], "memory": {"total": 85520809984,
       "reserved": 0, "used": 1073741824}, "power_mw": 300000,
       "energy_mj": [1000000, 1031000]},
      {"name": "Tesla P100-PCIE-16GB", "uuid": "GPU-66666666-7777-8888-9999-000000000000",
       "pci_bus_id": "00000000:3b:00.0", "cc": [6, 0], "memory": {"total": 17071734784,
       "reserved": 0, "used": 0}, "power_mw": 30000}
    ]})");
  FakeGpus fake("rtx4090");
  ::setenv("MAINBOARD_FAKE_GPU_SCENARIO", path.c_str(), 1);
  TempDir root;  // no RAPL
  auto o = rapl_host(root);
  o.environment = fake.env;
  Machine m(o);
  ASSERT_EQ(m.gpus().size(), 2u);
  Meter meter(m);  // reads 1,000,000 mJ, then 1,031,000 mJ at every later reading
  meter.stop();
  auto e = meter.energy();
  const auto* gpu0 = domain(e, "gpu0");
  ASSERT_TRUE(gpu0) << nlohmann::json(e).dump();
  EXPECT_NEAR(gpu0->joules, 31.0, 1e-9);
  EXPECT_EQ(gpu0->source, "GPU-11111111-2222-3333-4444-555555555555");
  ASSERT_TRUE(e.total_j);
  EXPECT_NEAR(*e.total_j, 31.0, 1e-9);
  EXPECT_FALSE(domain(e, "gpu1"));
  ASSERT_EQ(e.unavailable.size(), 2u) << nlohmann::json(e).dump();
  EXPECT_EQ(e.unavailable[0].rfind("cpu, dram: ", 0), 0u);
  EXPECT_EQ(e.unavailable[1], "gpu1: no total energy counter (NVML offers one from Volta on)");
}

TEST(MeterEnergy, MeasureCommandCountsWhatTheCommandUsed) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "1000000");
  rapl_zone(root, "intel-rapl:0:0", "dram", "0");
  Machine m(rapl_host(root));
  // The command itself moves the counters: 1 → 3.5 J on the package, 0 → 0.5 J on DRAM.
  std::string dir = (root.path() / "sys/class/powercap").string();
  auto r = measure_command(m,
                           {"sh", "-c",
                            "echo 3500000 > \"$0/intel-rapl:0/energy_uj\"; "
                            "echo 500000 > \"$0/intel-rapl:0:0/energy_uj\"",
                            dir},
                           {.interval = std::chrono::milliseconds(10)});
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_TRUE(r.energy.total_j) << nlohmann::json(r.energy).dump();
  EXPECT_NEAR(domain(r.energy, "cpu")->joules, 2.5, 1e-9);
  EXPECT_NEAR(domain(r.energy, "dram")->joules, 0.5, 1e-9);
  EXPECT_NEAR(*r.energy.total_j, 3.0, 1e-9);
  EXPECT_NEAR(*r.energy.mean_w, 3.0 / r.wall_s, 1e-6 * *r.energy.mean_w);
  nlohmann::json j = r;
  EXPECT_EQ(j["energy"]["domains"][0]["domain"], "cpu");
  EXPECT_EQ(j.get<CommandMeasurement>(), r);
}

TEST(ProfileEnergy, ASessionRecordsItsRegionsEnergy) {
  TempDir root;
  rapl_zone(root, "intel-rapl:0", "package-0", "2000000");
  rapl_zone(root, "intel-rapl:0:0", "dram", "1000000");
  Machine m(rapl_host(root));
  Collection c;
  c.features = Feature::spans;
  c.machine = &m;
  Profiler p(c);
  {
    MAINBOARD_SPAN("step");
    set_energy(root, "intel-rapl:0", "8000000");    // 6 J
    set_energy(root, "intel-rapl:0:0", "1500000");  // 0.5 J
  }
  p.stop();
  auto r = p.result();
  ASSERT_TRUE(r.energy);
  ASSERT_TRUE(r.energy->total_j) << nlohmann::json(*r.energy).dump();
  EXPECT_NEAR(domain(*r.energy, "cpu")->joules, 6.0, 1e-9);
  EXPECT_NEAR(domain(*r.energy, "dram")->joules, 0.5, 1e-9);
  EXPECT_NE(r.report().find("Energy (host-wide)\n  6.5 J (CPU 6.0 J, DRAM 0.5 J) · "),
            std::string::npos)
      << r.report();
  // Saved and read back with the profile.
  nlohmann::json j = r;
  EXPECT_EQ(j.get<Profile>().energy, r.energy);

  // A spans-only session on no machine reads no counter: no energy, not a zero.
  Collection bare;
  bare.features = Feature::spans;
  Profiler q(bare);
  q.stop();
  EXPECT_FALSE(q.result().energy);
}

TEST(MeterEnergy, AMeasurementSavedBeforeEnergyStillReads) {
  // `mainboard meter --json` of a version without energy: the file reads, its energy is said not
  // to have been recorded, and everything else is kept.
  auto j = nlohmann::json::parse(R"({"argv": ["sleep", "1"], "exit_code": 0, "wall_s": 1.01,
    "user_s": 0.0, "system_s": 0.0, "peak_pss_bytes": 1024, "peak_rss_bytes": 2048,
    "peak_tree_rss_bytes": 2048, "max_process_rss_bytes": 2048, "peak_processes": 1,
    "major_faults": 0, "minor_faults": 90, "voluntary_switches": 2, "involuntary_switches": 0,
    "fs_inputs": 0, "fs_outputs": 0, "peak_gpu_bytes": null, "peak_gpu_bytes_by_gpu": {},
    "samples": 20, "interval_ms": 50})");
  auto m = j.get<mainboard::CommandMeasurement>();
  EXPECT_EQ(m.peak_pss_bytes, 1024u);
  EXPECT_EQ(m.samples, 20u);
  EXPECT_FALSE(m.energy.total_j);
  ASSERT_EQ(m.energy.unavailable.size(), 1u);
  EXPECT_NE(m.energy.unavailable[0].find("not recorded"), std::string::npos);
}
