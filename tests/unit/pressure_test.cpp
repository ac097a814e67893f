// Pressure stall information (/proc/pressure): the parser on what kernels print and on what they
// do not, the fixture hosts through the Machine, the readiness rule and the metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/fs.hpp"
#include "fixture_machine.hpp"
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

/// The CPU's pressure file holding `text`, read through the probe's own reader.
std::optional<ResourcePressure> cpu_pressure(const std::string& text) {
  TempDir root;
  root.write("proc/pressure/cpu", text);
  host::Sources sources;
  sources.fs = std::make_shared<core::Fs>(root.path());
  host::Note note;
  auto p = host::read_pressure(sources, MachineSnapshot{}, note);
  return p ? p->cpu : std::nullopt;
}

}  // namespace

TEST(Pressure, ParsesSomeAndFullLines) {
  auto p = cpu_pressure(
      "some avg10=0.66 avg60=2.25 avg300=0.89 total=127451135\n"
      "full avg10=0.22 avg60=1.65 avg300=0.61 total=72831214\n");
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->some.avg10, 0.66);
  EXPECT_DOUBLE_EQ(p->some.avg60, 2.25);
  EXPECT_DOUBLE_EQ(p->some.avg300, 0.89);
  EXPECT_EQ(p->some.total_us, 127451135u);
  ASSERT_TRUE(p->full);
  EXPECT_DOUBLE_EQ(p->full->avg10, 0.22);
  EXPECT_EQ(p->full->total_us, 72831214u);
  // A kernel before 5.13 prints no "full" line for the CPU; a later one may add fields.
  auto cpu = cpu_pressure("some avg10=1.00 avg60=0.00 avg300=0.00 total=5 extra=7\n");
  ASSERT_TRUE(cpu);
  EXPECT_FALSE(cpu->full);
  EXPECT_EQ(cpu->some.total_us, 5u);
}

TEST(Pressure, MalformedInputDegrades) {
  for (std::string text : {std::string(""), std::string("some"), std::string("some avg10=1"),
                           std::string("some avg10=x avg60=0 avg300=0 total=1"),
                           std::string("some avg10=101 avg60=0 avg300=0 total=1"),
                           std::string("some avg10=-1 avg60=0 avg300=0 total=1"),
                           std::string("some avg10=1 avg60=0 avg300=0 total=-1"),
                           std::string("some avg10=nan avg60=0 avg300=0 total=1"),
                           std::string("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
                           std::string("\x01\x02garbage\xff"), std::string(1 << 20, 's')})
    EXPECT_FALSE(cpu_pressure(text)) << text.substr(0, 60);
  // A torn "full" line leaves the "some" reading standing.
  auto p = cpu_pressure("some avg10=1 avg60=2 avg300=3 total=4\nfull avg10=1 avg6");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->full);
}

TEST(Pressure, FixtureHostsThroughTheMachine) {
  auto capped = Machine(fixture_options("cgroup2-capped")).pressure();
  ASSERT_TRUE(capped);
  ASSERT_TRUE(capped->memory);
  EXPECT_DOUBLE_EQ(capped->memory->some.avg10, 24.5);
  EXPECT_DOUBLE_EQ(capped->memory->full->avg60, 2.05);
  EXPECT_EQ(capped->memory->full->total_us, 12345678u);
  EXPECT_DOUBLE_EQ(capped->cpu->some.avg300, 3.9);
  auto numa = Machine(fixture_options("numa-2socket")).pressure();
  ASSERT_TRUE(numa);
  EXPECT_FALSE(numa->cpu->full);  // a kernel before 5.13
  EXPECT_EQ(numa->io->some.total_us, 0u);
  auto broken = Machine(fixture_options("broken")).pressure();
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.unavailable()->status, ProbeStatus::unsupported);
  EXPECT_EQ(broken.reason(), "/proc/pressure holds no readable cpu, memory or io file");
  Machine vm(fixture_options("vm-cgroup1-nodmi"));
  auto none = vm.pressure();
  EXPECT_FALSE(none);
  EXPECT_THROW((void)none->cpu, Error);  // no reading to look into
  EXPECT_NE(none.reason().find("no /proc/pressure"), std::string::npos);
  // The snapshot carries it, and its diagnostic says why there is none.
  auto snap = vm.snapshot({.toolchain = false});
  const auto* d = snap.diagnostic("pressure");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->status, ProbeStatus::unsupported);
  // In JSON an unavailable reading is why, in its place; a schema-1 document said
  // "supported": false beside the fields, and still reads as unavailable.
  nlohmann::json vj = snap;
  EXPECT_EQ(
      vj["pressure"],
      (nlohmann::json{{"unavailable", {{"status", "unsupported"}, {"reason", none.reason()}}}}));
  EXPECT_EQ(vj.get<MachineSnapshot>().pressure, none);
  vj["schema_version"] = 1;
  vj["pressure"] = {{"supported", false}, {"cpu", nullptr}, {"reason", "psi=0"}};
  EXPECT_EQ(vj.get<MachineSnapshot>().pressure.reason(), "psi=0");
  vj["schema_version"] = 3;
  EXPECT_THROW((void)vj.get<MachineSnapshot>(), Error);
  vj["schema_version"] = 2;
  vj["pressure"] = {{"unavailable", {{"status", "ok"}, {"reason", ""}}}};
  EXPECT_THROW((void)vj.get<MachineSnapshot>(), Error);  // "unavailable" yet ok: a lie
  // JSON both ways.
  nlohmann::json j = Machine(fixture_options("cgroup2-capped")).snapshot({.toolchain = false});
  EXPECT_EQ(j["pressure"]["memory"]["full"]["avg10"], 3.1);
  EXPECT_TRUE(j["pressure"]["cpu"]["full"].is_object());
  EXPECT_FALSE(j["pressure"].contains("supported"));
  EXPECT_EQ(j.at("pressure").get<Pressure>(), *capped);
  // StallShare has no conversion of its own: it goes through its field list in its header, and
  // a bad value is named by model and field.
  j["pressure"]["memory"]["some"]["avg60"] = "high";
  try {
    (void)j.get<MachineSnapshot>();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("StallShare.avg60: expected a number"), std::string::npos)
        << e.what();
  }
}

TEST(Pressure, MemoryPressureIsAReadinessWarningAndFullStallsABlocker) {
  auto r = check_readiness(
      Machine(fixture_options("cgroup2-capped")).snapshot({.toolchain = false}), false);
  const Finding* memory = nullptr;
  for (const auto& f : r.findings)
    if (f.id == "memory.pressure") memory = &f;
  ASSERT_NE(memory, nullptr) << r.text();
  EXPECT_EQ(memory->severity, Severity::warning);
  EXPECT_EQ(memory->reading, "memory pressure: some 24.5 %, full 3.1 % of the last 10 s");
  for (const auto& f : r.findings)
    EXPECT_NE(f.id, "io.pressure") << f.reading;
  auto s = Machine(fixture_options("cgroup2-capped")).snapshot({.toolchain = false});
  s.pressure->io->full->avg10 = 12.5;
  auto stalled = check_readiness(s, false);
  EXPECT_FALSE(stalled.ready());
  bool io_blocker = false;
  for (const auto& f : stalled.findings)
    io_blocker |= f.id == "io.pressure" && f.severity == Severity::blocker;
  EXPECT_TRUE(io_blocker) << stalled.text();
}

TEST(Pressure, MetricsAreSecondsCounters) {
  Machine m(fixture_options("cgroup2-capped"));
  serve::Exposition out;
  serve::expose(serve::read(m), out);
  auto text = out.text(serve::Format::prometheus);
  EXPECT_NE(text.find("# TYPE mainboard_pressure_waiting_seconds_total counter"), std::string::npos)
      << text;
  EXPECT_NE(text.find("mainboard_pressure_waiting_seconds_total{resource=\"memory\"} 98.765432"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mainboard_pressure_stalled_seconds_total{resource=\"io\"} 1.234567"),
            std::string::npos);
  Machine vm(fixture_options("vm-cgroup1-nodmi"));
  serve::Exposition none;
  serve::expose(serve::read(vm), none);
  auto ntext = none.text(serve::Format::prometheus);
  EXPECT_EQ(ntext.find("mainboard_pressure_waiting"), std::string::npos);
  EXPECT_NE(ntext.find("reading=\"pressure\""), std::string::npos) << ntext;
}
