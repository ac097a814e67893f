// `mainboard meter` reports the energy of the command it ran: over a sysroot whose RAPL counters
// the command itself moves, and where there are none.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e/cli_util.hpp"
#include "mainboard/json.hpp"
#include "mainboard/meter.hpp"

using namespace mainboard;

namespace {

/// A sysroot with RAPL package 0 and its DRAM, removed at the end.
struct RaplRoot {
  RaplRoot() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mainboard-rapl-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
    zone("intel-rapl:0", "package-0", "1000000");
    zone("intel-rapl:0:0", "dram", "0");
  }
  ~RaplRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void zone(const std::string& name, const std::string& domain, const std::string& uj) const {
    auto dir = path / "sys/class/powercap" / name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "name") << domain << "\n";
    std::ofstream(dir / "energy_uj") << uj << "\n";
    std::ofstream(dir / "max_energy_range_uj") << "262143328850\n";
  }
  std::string powercap() const { return (path / "sys/class/powercap").string(); }
  std::filesystem::path path;
};

std::map<std::string, std::optional<std::string>> no_gpus() {
  return {{"MAINBOARD_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
          {"MAINBOARD_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"}};
}

}  // namespace

TEST(CliEnergy, MeterJsonHasTheCommandsJoules) {
  RaplRoot root;
  // The command moves the package 1 → 4.5 J and the DRAM 0 → 1.25 J: 3.5 + 1.25 = 4.75 J.
  auto r =
      cli({"--sysroot", root.path.string(), "meter", "--json", "--interval", "10", "--", "sh", "-c",
           "echo 4500000 > \"$0/intel-rapl:0/energy_uj\"; "
           "echo 1250000 > \"$0/intel-rapl:0:0/energy_uj\"",
           root.powercap()},
          no_gpus());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.err.substr(r.err.find('{')));
  const auto& e = j.at("energy");
  EXPECT_DOUBLE_EQ(e.at("total_j").get<double>(), 4.75) << e.dump();
  EXPECT_EQ(e.at("domains")[0].at("domain"), "cpu");
  EXPECT_DOUBLE_EQ(e.at("domains")[0].at("joules").get<double>(), 3.5);
  EXPECT_EQ(e.at("domains")[0].at("source"), "RAPL intel-rapl:0");
  EXPECT_EQ(e.at("domains")[1].at("domain"), "dram");
  EXPECT_DOUBLE_EQ(e.at("domains")[1].at("joules").get<double>(), 1.25);
  auto m = j.get<CommandMeasurement>();
  ASSERT_TRUE(m.energy.mean_w);
  EXPECT_NEAR(*m.energy.mean_w, 4.75 / m.wall_s, 1e-6 * *m.energy.mean_w);
}

TEST(CliEnergy, MeterTextSaysJoulesOrWhyNot) {
  RaplRoot root;
  auto r = cli({"--sysroot", root.path.string(), "meter", "--", "sh", "-c",
                "echo 3000000 > \"$0/intel-rapl:0/energy_uj\"", root.powercap()},
               no_gpus());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("energy       2.0 J (CPU 2.0 J, DRAM 0.0 J) · "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" W mean"), std::string::npos) << r.err;

  auto none = cli({"--sysroot", host("cgroup2-capped"), "meter", "--", "true"}, no_gpus());
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.err.find("energy       unavailable (cpu, dram: no RAPL energy counters"),
            std::string::npos)
      << none.err;
}

TEST(CliEnergy, ProfileRunReportsTheRunsEnergy) {
  RaplRoot root;
  std::string out = (root.path / "profile.json").string();
  auto env = no_gpus();
  env["MAINBOARD_SYSROOT"] = root.path.string();
  auto r = cli({"profile", "run", "-o", out, "--", "sh", "-c",
                "echo 3000000 > \"$0/intel-rapl:0/energy_uj\"; "
                "echo 250000 > \"$0/intel-rapl:0:0/energy_uj\"",
                root.powercap()},
               env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("Energy (host-wide)\n  2.2 J (CPU 2.0 J, DRAM 0.2 J) · "), std::string::npos)
      << r.err;
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_DOUBLE_EQ(j.at("energy").at("total_j").get<double>(), 2.25) << j.at("energy").dump();
}
