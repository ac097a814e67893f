#include <gtest/gtest.h>

#include <stdexcept>

#include "providers/provider.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

class FakeGpu final : public Gpu {
 public:
  FakeGpu() { info_.label = "Fake GPU"; }
  const GpuInfo& info() const override { return info_; }
  Reading<Memory> memory() const override { return Reading<Memory>::none("a fake"); }
  std::vector<ClockReading> clock_readings() const override { return {}; }

 private:
  GpuInfo info_;
};

std::vector<std::shared_ptr<Gpu>> throws(const providers::Context&, host::Note&) {
  throw std::runtime_error("driver exploded");
}
std::vector<std::shared_ptr<Gpu>> none(const providers::Context&, host::Note&) {
  return {};
}
std::vector<std::shared_ptr<Gpu>> one(const providers::Context&, host::Note&) {
  return {std::make_shared<FakeGpu>(), nullptr};
}

}  // namespace

TEST(Providers, OneBrokenProviderDoesNotSinkTheOthers) {
  const providers::GpuProvider table[] = {
      {"broken", "nothing", throws}, {"empty", "/dev/null", none}, {"fake", "memory", one}};
  TempDir root;
  auto fs = std::make_shared<core::Fs>(root.path());
  core::EnvMap env;
  ReplayRunner runner({}, {});
  std::vector<Diagnostic> diagnostics;
  auto gpus = providers::probe_all<Gpu>(table, {fs, env, runner}, "gpu", diagnostics);
  ASSERT_EQ(gpus.size(), 1u);  // the null entry is dropped too
  EXPECT_EQ(gpus[0]->label(), "Fake GPU");
  ASSERT_EQ(diagnostics.size(), 3u);
  EXPECT_EQ(diagnostics[0].probe, "gpu:broken");
  EXPECT_EQ(diagnostics[0].status, ProbeStatus::failed);
  EXPECT_EQ(diagnostics[0].reason, "driver exploded");
  EXPECT_EQ(diagnostics[1].status, ProbeStatus::unsupported);
  EXPECT_NE(diagnostics[1].reason.find("/dev/null"), std::string::npos);
  EXPECT_EQ(diagnostics[2].status, ProbeStatus::ok);
}

TEST(Providers, GpuDefaultsAreUnsupportedNotZero) {
  FakeGpu gpu;
  auto snap = gpu.gpu_snapshot("region");
  EXPECT_EQ(snap.telemetry.name, "region");
  EXPECT_EQ(snap.telemetry.kind, UnitKind::gpu);
  EXPECT_FALSE(snap.telemetry.utilization.ok());
  EXPECT_FALSE(snap.telemetry.utilization.reason().empty());
  EXPECT_FALSE(snap.pcie.ok());
  EXPECT_FALSE(snap.fan_speed_pct);
  EXPECT_FALSE(gpu.temperature_c());
}
