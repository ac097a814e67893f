// RAPL energy counters (/sys/class/powercap/intel-rapl:*): the reader over fixture trees (well
// formed, malformed, refused), their metrics and their summary line.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.hpp"
#include "host/note.hpp"
#include "host/readers.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
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
