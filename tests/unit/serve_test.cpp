// The exposition `mainboard serve` answers scrapes with: the format's rules, and the values a
// Prometheus user queries, read through the real providers from fixture hosts and the fake
// NVIDIA libraries.
#include <gtest/gtest.h>

#include <set>

#include <cmath>
#include <limits>
#include <string>

#include <filesystem>
#include <fstream>

#include "core/fs.hpp"
#include "fake_gpus.hpp"
#include "host/pid_namespace.hpp"
#include "mainboard/machine.hpp"
#include "serve/exposition.hpp"
#include "serve/metrics.hpp"
#include "test_util.hpp"

using namespace mainboard;
using namespace mainboard::serve;

namespace {

/// The line of `text` that starts with `prefix`, or "" when none does.
std::string line(const std::string& text, const std::string& prefix) {
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, prefix.size(), prefix) == 0) return text.substr(at, end - at);
    at = end + 1;
  }
  return "";
}

std::string exposition(const Machine& m, Format format = Format::prometheus) {
  Exposition e;
  expose(read(m), e);
  return e.text(format);
}

}  // namespace

TEST(Exposition, ValuesAsPrometheusParsesThem) {
  EXPECT_EQ(format_value(85520809984.0), "85520809984");
  EXPECT_EQ(format_value(0.97), "0.97");
  EXPECT_EQ(format_value(-3.0), "-3");
  EXPECT_EQ(format_value(1e300), "1e+300");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Exposition, FamiliesInBothFormats) {
  Exposition e;
  e.gauge("x_temperature_celsius", "A temperature.\nTwo lines.").add({{"gpu", "0"}}, 34);
  e.counter("x_energy_joules_total", "Energy.").add({{"gpu", "0"}}, 12.5);
  e.gauge("x_empty", "no samples: left out");
  e.gauge("x_temperature_celsius", "ignored: declared already").add({{"gpu", "1"}}, 36);
  EXPECT_EQ(e.text(Format::prometheus),
            "# HELP x_temperature_celsius A temperature.\\nTwo lines.\n"
            "# TYPE x_temperature_celsius gauge\n"
            "x_temperature_celsius{gpu=\"0\"} 34\n"
            "x_temperature_celsius{gpu=\"1\"} 36\n"
            "# HELP x_energy_joules_total Energy.\n"
            "# TYPE x_energy_joules_total counter\n"
            "x_energy_joules_total{gpu=\"0\"} 12.5\n");
  // OpenMetrics: the counter's family has no _total, its samples do; the text ends in # EOF.
  auto om = e.text(Format::openmetrics);
  EXPECT_NE(om.find("# TYPE x_energy_joules counter\n# HELP x_energy_joules Energy.\n"
                    "x_energy_joules_total{gpu=\"0\"} 12.5\n"),
            std::string::npos)
      << om;
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_THROW(e.counter("x_events", "a counter must end in _total"), std::logic_error);
  EXPECT_THROW(e.gauge("x_energy_joules_total", "one name, two types"), std::logic_error);
}

TEST(Exposition, TheScraperChoosesTheFormat) {
  EXPECT_EQ(negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                      "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Format::openmetrics);  // what Prometheus 2.42 sends
  EXPECT_EQ(negotiate("text/plain"), Format::prometheus);
  EXPECT_EQ(negotiate(""), Format::prometheus);
  EXPECT_EQ(std::string(content_type(Format::prometheus)),
            "text/plain; version=0.0.4; charset=utf-8");
}

// Eight fake H100s on a recorded host: the figures a dashboard shows, in base units.
TEST(Serve, EightGpusInBaseUnits) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto text = exposition(m);
  const std::string gpu3 =
      "{gpu=\"3\",uuid=\"GPU-6b2f3c1e-0003-4a0b-9c3d-000000001003\",name=\"NVIDIA H100 80GB "
      "HBM3\",pci_bus_id=\"00000000:5D:00.0\",vendor=\"NVIDIA\"";
  EXPECT_EQ(line(text, "mainboard_gpu_utilization_ratio" + gpu3),
            "mainboard_gpu_utilization_ratio" + gpu3 + "} 0.97");
  EXPECT_EQ(line(text, "mainboard_gpu_memory_used_bytes" + gpu3),
            "mainboard_gpu_memory_used_bytes" + gpu3 + "} 42949672960");
  EXPECT_EQ(line(text, "mainboard_gpu_power_watts" + gpu3),
            "mainboard_gpu_power_watts" + gpu3 + "} 655");
  EXPECT_EQ(line(text, "mainboard_gpu_clock_hertz" + gpu3 + ",clock=\"sm\""),
            "mainboard_gpu_clock_hertz" + gpu3 + ",clock=\"sm\"} 1980000000");
  EXPECT_EQ(line(text, "mainboard_gpu_throttle_reason" + gpu3),
            "mainboard_gpu_throttle_reason" + gpu3 + ",reason=\"SwPowerCap\"} 1");
  // The other process on GPU 3, named from the host's /proc.
  EXPECT_EQ(line(text, "mainboard_gpu_process_memory_bytes" + gpu3),
            "mainboard_gpu_process_memory_bytes" + gpu3 +
                ",pid=\"4242\",process=\"python3\",host_pid=\"\",container_pid=\"\"} 42949672960");
  // Health: GPU 5's pending remap and uncorrectable errors, GPU 7 without persistence.
  EXPECT_NE(text.find("mainboard_gpu_row_remap_pending{gpu=\"5\""), std::string::npos);
  EXPECT_TRUE(line(text, "mainboard_gpu_row_remap_pending{gpu=\"5\"").ends_with("} 1"));
  EXPECT_TRUE(line(text, "mainboard_gpu_persistence_mode{gpu=\"7\"").ends_with("} 0"));
  EXPECT_NE(line(text, "mainboard_gpu_ecc_errors_total{gpu=\"5\"").find("type=\"corrected\""),
            std::string::npos);
  // XIDs from the host's kernel log, NVLink link by link, GPM as ratios.
  EXPECT_EQ(line(text, "mainboard_gpu_xid_errors_total" + gpu3),
            "mainboard_gpu_xid_errors_total" + gpu3 + "} 2");
  EXPECT_EQ(line(text, "mainboard_gpu_last_xid_code{gpu=\"4\""),
            "mainboard_gpu_last_xid_code{gpu=\"4\",uuid=\"GPU-6b2f3c1e-0004-4a0b-9c3d-"
            "000000001004\",name=\"NVIDIA H100 80GB HBM3\",pci_bus_id=\"00000000:9A:00.0\","
            "vendor=\"NVIDIA\",meaning=\"GPU has fallen off the bus\"} 79");
  EXPECT_EQ(line(text, "mainboard_gpu_nvlink_up" + gpu3 + ",link=\"17\""),
            "mainboard_gpu_nvlink_up" + gpu3 + ",link=\"17\"} 0");
  EXPECT_EQ(line(text, "mainboard_gpu_nvlink_errors_total" + gpu3 + ",link=\"2\",kind=\"replay\""),
            "mainboard_gpu_nvlink_errors_total" + gpu3 + ",link=\"2\",kind=\"replay\"} 12");
  EXPECT_EQ(line(text, "mainboard_gpu_nvlink_data_bytes_total" + gpu3 +
                           ",link=\"0\",direction=\"transmit\""),
            "mainboard_gpu_nvlink_data_bytes_total" + gpu3 +
                ",link=\"0\",direction=\"transmit\"} 4096000");  // 4000 KiB
  EXPECT_EQ(line(text, "mainboard_gpu_sm_active_ratio" + gpu3),
            "mainboard_gpu_sm_active_ratio" + gpu3 + "} 0.925");
  EXPECT_EQ(line(text, "mainboard_gpu_tensor_active_ratio" + gpu3),
            "mainboard_gpu_tensor_active_ratio" + gpu3 + "} 0.615");
  // Every family once, each with HELP and TYPE; the host's figures from the fixture.
  EXPECT_EQ(line(text, "# TYPE mainboard_gpu_energy_joules_total"),
            "# TYPE mainboard_gpu_energy_joules_total counter");
  EXPECT_EQ(line(text, "mainboard_memory_total_bytes "),
            "mainboard_memory_total_bytes " + std::to_string(m.memory()->total_bytes));
  std::size_t types = 0, helps = 0;
  for (std::size_t at = text.find("# TYPE "); at != std::string::npos;
       at = text.find("# TYPE ", at + 1))
    ++types;
  for (std::size_t at = text.find("# HELP "); at != std::string::npos;
       at = text.find("# HELP ", at + 1))
    ++helps;
  EXPECT_EQ(types, helps);
  EXPECT_GT(types, 30u);
  // The fake driver gives everything: what is unavailable is the fixture host's, which has no
  // /proc/pressure, no cgroup files, no /proc/loadavg, no InfiniBand, no /sys/class/net and no
  // RAPL — each said, none left out.
  std::set<std::string> unavailable;
  const std::string prefix = "\nmainboard_reading_unavailable{unit=\"host\",reading=\"";
  for (std::size_t at = text.find("\nmainboard_reading_unavailable{"); at != std::string::npos;
       at = text.find("\nmainboard_reading_unavailable{", at + 1)) {
    ASSERT_EQ(text.compare(at, prefix.size(), prefix), 0) << text.substr(at, 200);
    auto from = at + prefix.size();
    unavailable.insert(text.substr(from, text.find('"', from) - from));
  }
  EXPECT_EQ(unavailable,
            (std::set<std::string>{"cgroup_memory", "infiniband", "load", "network", "pressure",
                                   // nor sensors, huge pages or EDAC
                                   "temperatures", "huge_pages", "memory_errors", "rapl"}));
}

// What a unit cannot give is said, with the driver's reason, not reported as zero.
TEST(Serve, UnavailableReadingsAreSaidNotZero) {
  {
    FakeGpus fake("h100x8", {.nvml = FakeNvml::missing});  // the CUDA driver alone
    Machine m(fake.options());
    auto text = exposition(m);
    auto energy = line(text, "mainboard_reading_unavailable{unit=\"gpu0\",reading=\"energy\"");
    EXPECT_TRUE(energy.ends_with("} 1")) << text;
    EXPECT_NE(energy.find("reason=\"NVML"), std::string::npos) << energy;
    EXPECT_EQ(line(text, "mainboard_gpu_energy_joules_total"), "");
    EXPECT_EQ(line(text, "mainboard_gpu_power_watts"), "");
    EXPECT_FALSE(line(text, "mainboard_gpu_info{gpu=\"7\"").empty()) << "the GPUs are still listed";
  }
  // An older NVML: the health readings it lacks are named.
  FakeGpus fake("h100x8", {.nvml = FakeNvml::minimal});
  Machine m(fake.options());
  auto text = exposition(m);
  EXPECT_EQ(line(text, "mainboard_reading_unavailable{unit=\"gpu0\",reading=\"persistence\""),
            "mainboard_reading_unavailable{unit=\"gpu0\",reading=\"persistence\",reason=\"not in "
            "this NVML\"} 1");
  EXPECT_EQ(line(text, "mainboard_gpu_persistence_mode"), "");
}

// A host whose readings cannot be taken (a broken sysroot: a locked-down container looks the
// same): each missing reading is a series of mainboard_reading_unavailable with why, never a
// silent gap or a zero.
TEST(Serve, AHostWhoseReadingsCannotBeTakenSaysWhichAndWhy) {
  Machine::Options o;
  o.sysroot = fixture_host("broken");
  Machine m(o);
  auto text = exposition(m);
  for (auto [reading, why] : std::vector<std::pair<std::string, std::string>>{
           {"memory", "no MemTotal in /proc/meminfo"},
           {"swap", "no SwapTotal in /proc/meminfo"},
           {"cgroup_memory", "malformed /sys/fs/cgroup/job/memory.max"},
           {"pressure", "/proc/pressure holds no readable"},
           {"load", "no readable /proc/loadavg"},
           {"temperatures", "unreadable or impossible temperature left out: coretemp temp1"},
           {"huge_pages", "no readable huge page pool"},
           {"memory_errors", "no readable error counts in EDAC memory controllers mc0, mc1"}}) {
    auto l = line(text, "mainboard_reading_unavailable{unit=\"host\",reading=\"" + reading + "\"");
    EXPECT_TRUE(l.ends_with("} 1")) << reading << "\n" << text;
    EXPECT_NE(l.find(why), std::string::npos) << l;
  }
  for (const char* absent :
       {"mainboard_swap_total_bytes", "mainboard_swap_used_bytes", "mainboard_load1",
        "mainboard_cgroup_memory_usage_bytes", "mainboard_memory_total_bytes"})
    EXPECT_EQ(line(text, absent), "") << absent;
}

TEST(Serve, NpusAndAHostWithoutGpus) {
  Machine::Options o;
  o.sysroot = fixture_host("gaudi2");
  Machine m(o);
  auto text = exposition(m);
  EXPECT_NE(text.find("mainboard_npu_info{npu=\"0\""), std::string::npos) << text;
  EXPECT_EQ(text.find("mainboard_gpu_info"), std::string::npos);
  Machine::Options capped;
  capped.sysroot = fixture_host("cgroup2-capped");
  Machine c(capped);
  auto ctext = exposition(c, Format::openmetrics);
  auto limit = line(ctext, "mainboard_cgroup_memory_limit_bytes");
  ASSERT_FALSE(limit.empty()) << ctext;
  EXPECT_TRUE(limit.ends_with(" " + std::to_string(*c.cgroup_memory()->limit_bytes))) << limit;
  EXPECT_TRUE(ctext.ends_with("# EOF\n"));
}

// The driver's PIDs are the host's; each GPU process is given the PID the caller knows.
namespace {

struct ProcTree {
  std::filesystem::path root;
  ProcTree() {
    root = std::filesystem::path(::testing::TempDir()) /
           ("mainboard-pidns-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
  }
  ~ProcTree() { std::filesystem::remove_all(root); }
  void process(const std::string& pid, const std::string& nspid, const std::string& ns,
               const std::string& comm = "") {
    auto dir = root / "proc" / pid;
    std::filesystem::create_directories(dir / "ns");
    std::ofstream(dir / "status") << "Name:\t" << comm << "\nNSpid:\t" << nspid << "\n";
    if (!comm.empty()) std::ofstream(dir / "comm") << comm << "\n";
    std::filesystem::create_symlink("pid:[" + ns + "]", dir / "ns" / "pid");
  }
};

}  // namespace

TEST(PidNamespace, NspidParsing) {
  using core::parse_nspid;
  EXPECT_EQ(parse_nspid("Name:\tx\nNSpid:\t30713\t3\nNSpgid:\t1\n"),
            (std::vector<std::uint32_t>{30713, 3}));
  EXPECT_TRUE(parse_nspid("Name:\tx\n").empty());
  EXPECT_TRUE(parse_nspid("NSpid:\t12 garbage\n").empty());
  EXPECT_TRUE(parse_nspid("NSpid:\t99999999999\n").empty());
  EXPECT_TRUE(parse_nspid("").empty());
}

TEST(PidNamespace, OnTheHostAContainersProcessKeepsItsContainerPid) {
  ProcTree t;
  t.process("self", "500", "4026531836");
  t.process("4242", "4242 17", "4026532177", "python3");
  t.process("4300", "4300", "4026531836", "train");
  core::Fs fs(t.root);
  host::PidNamespaceView view(fs);
  auto a = view.resolve(4242);
  EXPECT_EQ(a.pid, 4242u);
  EXPECT_EQ(a.container_pid, 17u);
  EXPECT_FALSE(a.host_pid);
  EXPECT_EQ(a.name, "python3");
  auto b = view.resolve(4300);
  EXPECT_FALSE(b.container_pid);
  EXPECT_TRUE(b.visible);
}

TEST(PidNamespace, InANamespaceUnderTheHostsProcEachPidIsTheNamespaces) {
  ProcTree t;
  t.process("self", "30713 3", "4026532177");
  t.process("30720", "30720 9", "4026532177", "python3");  // beside us in our namespace
  t.process("4242", "4242 17", "4026532999", "other");     // another container
  t.process("1200", "1200", "4026531836", "sshd");         // the host
  core::Fs fs(t.root);
  host::PidNamespaceView view(fs);
  auto ours = view.resolve(30720);
  EXPECT_EQ(ours.pid, 9u);
  EXPECT_EQ(ours.host_pid, 30720u);
  EXPECT_EQ(ours.name, "python3");
  for (std::uint32_t other : {4242u, 1200u}) {
    auto r = view.resolve(other);
    EXPECT_FALSE(r.visible) << other;
    EXPECT_EQ(r.pid, other);
    EXPECT_TRUE(r.name.empty()) << "never named after a process it is not";
  }
}

TEST(PidNamespace, AContainerWithItsOwnProcNamesNothingFromIt) {
  // /proc shows the container's PIDs, the driver the host's: PID 17 here is not host PID 17.
  ProcTree t;
  t.process("self", "1", "4026532177");
  t.process("17", "17", "4026532177", "bash");
  core::Fs fs(t.root);
  host::PidNamespaceView view(fs);
  auto r = view.resolve(17);
  EXPECT_FALSE(r.visible);
  EXPECT_TRUE(r.name.empty());
}
