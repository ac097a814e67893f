// A host program may call setlocale(LC_ALL, "") and run in a locale whose decimal separator is a
// comma. The numbers mainboard reads from /proc and /sys always use a point: they must read the
// same whatever the program's locale (strtod would stop at the point under de_DE).
#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/readings.hpp"
#include "core/text.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/runner.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

/// A snapshot of a fixture host as JSON, without what differs from one reading to the next.
nlohmann::json readings(const std::string& host) {
  Machine::Options o;
  o.sysroot = fixture_host(host);
  return without_times(Machine(o).snapshot({.toolchain = false}));
}

/// Builds de_DE.UTF-8 into `dir` (Debian keeps only the sources) and switches to it.
bool switch_to_german(const TempDir& dir) {
  Command c;
  c.argv = {"localedef", "-i", "de_DE", "-c", "-f", "UTF-8", (dir.path() / "de_DE.UTF-8").string()};
  c.timeout = std::chrono::seconds(60);
  auto r = LocalRunner("/usr/bin:/bin:/usr/sbin:/sbin").run(c);
  if (!r.started || r.exit_code > 1) {  // 1: warnings only
    ADD_FAILURE() << "localedef failed (Debian package locales): " << r.error << r.err;
    return false;
  }
  ::setenv("LOCPATH", dir.path().c_str(), 1);
  if (!std::setlocale(LC_ALL, "de_DE.UTF-8")) {
    ADD_FAILURE() << "setlocale(de_DE.UTF-8) refused";
    return false;
  }
  return std::string(std::localeconv()->decimal_point) == ",";
}

}  // namespace

TEST(Locale, NumbersReadTheSameUnderACommaDecimalLocale) {
  const char* hosts[] = {"numa-2socket", "vm-cgroup1-nodmi", "amd-mi300x", "radeon-npu",
                         "cgroup2-capped"};
  std::map<std::string, nlohmann::json> in_c;
  for (const char* h : hosts)
    in_c[h] = readings(h);
  // The readings the locale broke: CPU clocks, load averages, AMD clocks, PCIe link speed.
  ASSERT_FALSE(in_c["vm-cgroup1-nodmi"]["cpu"]["clocks"].empty());
  ASSERT_FALSE(in_c["vm-cgroup1-nodmi"]["cpu"]["load_1m"].is_null());
  ASSERT_FALSE(in_c["amd-mi300x"]["gpus"][0]["telemetry"]["clocks"].empty());
  ASSERT_FALSE(in_c["amd-mi300x"]["gpus"][0]["pcie"]["link_gen"].is_null());

  TempDir dir;
  ASSERT_TRUE(switch_to_german(dir)) << "de_DE.UTF-8 does not use a decimal comma";
  EXPECT_EQ(core::parse_double("2400.500"), 2400.5);
  EXPECT_EQ(core::parse_double("0.52"), 0.52);
  EXPECT_EQ(core::parse_double("2400,5"), std::nullopt);  // a comma is never ours
  std::map<std::string, nlohmann::json> in_german;
  for (const char* h : hosts)
    in_german[h] = readings(h);
  std::setlocale(LC_ALL, "C");
  ::unsetenv("LOCPATH");
  for (const char* h : hosts)
    EXPECT_EQ(in_german[h], in_c[h]) << h << ": differs under de_DE:\n"
                                     << nlohmann::json::diff(in_c[h], in_german[h]).dump(1);
}
