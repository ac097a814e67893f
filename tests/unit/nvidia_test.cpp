// The NVIDIA provider's real code against fake NVML and CUDA driver libraries (tests/fakes/),
// answering from the scenarios in tests/fixtures/gpus/.
#include <gtest/gtest.h>
#include <unistd.h>

#include "fake_gpus.hpp"
#include "mainboard/busy.hpp"
#include "mainboard/error.hpp"
#include "mainboard/nvidia.hpp"

using namespace mainboard;

namespace {
constexpr std::uint64_t kMiB = 1 << 20;

const NvidiaGpu& nvidia(const std::shared_ptr<Gpu>& gpu) {
  auto* n = dynamic_cast<const NvidiaGpu*>(gpu.get());
  if (!n) throw std::runtime_error("not an NVIDIA GPU");
  return *n;
}

std::vector<std::string> labels(const Machine& m) {
  std::vector<std::string> out;
  for (const auto& g : m.gpus())
    out.push_back(g->label());
  return out;
}
}  // namespace

TEST(Nvidia, EightH100sWithAProcessOnGpu3) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  const auto& gpus = m.gpus();
  ASSERT_EQ(gpus.size(), 8u);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const auto& info = gpus[i]->info();
    EXPECT_EQ(info.index, i);
    EXPECT_EQ(info.label, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(info.vendor, "NVIDIA");
    EXPECT_EQ(info.provider, "nvidia");
    EXPECT_EQ(info.compute_capability, "9.0");
    EXPECT_EQ(info.architecture, "Hopper");
    EXPECT_EQ(info.arch_key, "sm_90");
    EXPECT_EQ(info.sm_count, 132u);
    EXPECT_NEAR(*info.peak_bandwidth_gbs, 3352.3, 0.1);
    EXPECT_EQ(info.driver_version, "550.54.15");
    EXPECT_EQ(info.memory_total_bytes, 81559 * kMiB);
    EXPECT_FALSE(info.coherent);
    EXPECT_EQ(info.mig_enabled, false);
  }
  EXPECT_EQ(gpus[0]->uuid(), "GPU-6b2f3c1e-0000-4a0b-9c3d-000000001000");
  EXPECT_EQ(gpus[3]->info().pci_bus_id, "00000000:5D:00.0");

  const auto& g3 = *gpus[3];
  auto mem = g3.memory();
  EXPECT_TRUE(mem.ok());
  EXPECT_EQ(mem->source, mainboard::MemorySource::nvml_v2);
  EXPECT_EQ(mem->scope, "vram");
  EXPECT_EQ(mem->used_bytes, 40 * 1024 * kMiB);  // v2: without the driver's reservation
  EXPECT_EQ(mem->free_bytes, (81559 - 529 - 40 * 1024) * kMiB);
  EXPECT_FALSE(mem->unified);
  auto util = g3.utilization();
  EXPECT_TRUE(util.ok());
  EXPECT_EQ(util->compute_pct, 97);
  EXPECT_EQ(util->memory_pct, 41);
  EXPECT_EQ(g3.gpu_util_pct(), 97);
  auto energy = g3.energy();
  EXPECT_DOUBLE_EQ(*energy->power_w, 655.0);
  EXPECT_DOUBLE_EQ(*energy->power_limit_w, 700.0);
  EXPECT_DOUBLE_EQ(*energy->energy_j, 9876543.213);
  auto thermal = g3.thermal();
  EXPECT_EQ(thermal->temperature_c, 34);
  EXPECT_EQ(thermal->slowdown_c, 92);
  EXPECT_EQ(thermal->shutdown_c, 94);
  EXPECT_EQ(thermal->throttle_reasons, (std::vector<std::string>{"SwPowerCap"}));
  EXPECT_EQ(g3.temperature_c(), 34);
  auto pcie = g3.pcie();
  EXPECT_TRUE(pcie.ok());
  EXPECT_EQ(pcie->tx_kbps, 512);
  EXPECT_EQ(pcie->rx_kbps, 1024);
  EXPECT_EQ(pcie->link_gen, 5);
  EXPECT_EQ(pcie->link_width, 16);
  EXPECT_FALSE(g3.fan_speed_pct());  // passively cooled
  auto procs = g3.processes();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 4242u);
  EXPECT_EQ(procs[0].name, "python3");  // /proc/4242/comm of the sysroot
  EXPECT_EQ(procs[0].used_memory_bytes, 40 * 1024 * kMiB);
  EXPECT_TRUE(gpus[0]->processes().empty());
  auto clocks = g3.clock_readings();
  ASSERT_EQ(clocks.size(), 4u);
  EXPECT_EQ(clocks[1].domain, "sm");
  EXPECT_EQ(clocks[1].current_mhz, 1980);
  EXPECT_EQ(clocks[2].max_mhz, 2619);

  auto s = m.snapshot();
  ASSERT_EQ(s.gpus.size(), 8u);
  EXPECT_EQ(s.unit_count(), 9u);
  EXPECT_EQ(s.kinds(), (std::vector<UnitKind>{UnitKind::cpu, UnitKind::gpu}));
  EXPECT_EQ(s.gpus[3].processes[0].name, "python3");
  EXPECT_EQ(s.gpus[3].telemetry.kind, UnitKind::gpu);
  EXPECT_EQ(s.cuda.driver_version, "550.54.15");
  EXPECT_EQ(s.cuda.cuda_driver_version, "12.4");
  EXPECT_TRUE(s.cuda.nvml.found);
  EXPECT_EQ(s.cuda.nvml.version, "12.550.54.15");
  EXPECT_TRUE(s.cuda.cuda_driver.found);
  EXPECT_EQ(m.cuda_architecture(), "90");
  EXPECT_EQ(m.compilers().cuda_architectures, "90");
  EXPECT_EQ(s.diagnostic("gpu:nvidia")->status, ProbeStatus::ok);
  EXPECT_EQ(m.units().size(), 9u);
}

TEST(Nvidia, GraceHopperIsCoherentAndItsMemoryUnified) {
  FakeGpus fake("gh200");
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  const auto& gpu = nvidia(m.gpus()[0]);
  EXPECT_TRUE(gpu.coherent());
  EXPECT_TRUE(gpu.memory()->unified);
  EXPECT_EQ(gpu.info().pci_bus_id, "00000009:01:00.0");
  EXPECT_NEAR(*gpu.peak_bandwidth_gbs(), 4022.8, 0.1);  // 6144-bit HBM3
}

TEST(Nvidia, Rtx4090WithAFanAndGddr6x) {
  FakeGpus fake("rtx4090");
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  const auto& gpu = *m.gpus()[0];
  EXPECT_EQ(gpu.info().architecture, "Ada");
  EXPECT_EQ(gpu.arch_key(), "sm_89");
  EXPECT_NEAR(*gpu.peak_bandwidth_gbs(), 1008.1, 0.1);
  EXPECT_EQ(gpu.fan_speed_pct(), 36);
  EXPECT_EQ(gpu.processes().at(0).name, "llama-server");
  EXPECT_FALSE(gpu.info().coherent);
  // Memory in use rises between readings (the scenario's sequence), and the last one sticks.
  std::uint64_t previous = 0;
  for (int i = 0; i < 4; ++i) {
    auto used = *gpu.memory()->used_bytes;
    EXPECT_GE(used, previous);
    previous = used;
  }
  EXPECT_EQ(previous, 12288 * kMiB);
}

TEST(Nvidia, MigInstanceSelectedByUuid) {
  FakeGpus fake("a100-mig", {.visible = "MIG-66666666-7777-8888-9999-aaaaaaaaaaaa"});
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  const auto& gpu = *m.gpus()[0];
  EXPECT_EQ(gpu.label(), "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
  EXPECT_EQ(gpu.uuid(), "MIG-66666666-7777-8888-9999-aaaaaaaaaaaa");
  EXPECT_EQ(gpu.info().sm_count, 42u);  // its slice of the 108
  EXPECT_FALSE(gpu.peak_bandwidth_gbs());
  EXPECT_EQ(gpu.info().mig_enabled, true);
  ASSERT_EQ(gpu.info().mig_devices.size(), 1u);
  EXPECT_EQ(gpu.info().mig_devices[0].gpu_instance_id, 2u);
  auto mem = gpu.memory();
  EXPECT_EQ(mem->total_bytes, 20096 * kMiB);
  EXPECT_EQ(mem->used_bytes, 2048 * kMiB);
  auto util = gpu.utilization();
  EXPECT_FALSE(util.ok());  // NVML has no per-instance utilization
  EXPECT_EQ(util.reason(), "Not Supported");
  EXPECT_EQ(util.unavailable()->status, ProbeStatus::unsupported);  // offered none
  EXPECT_EQ(gpu.processes().at(0).name, "vllm");
}

TEST(Nvidia, MigGpuWithoutSelectionListsItsInstances) {
  FakeGpus fake("a100-mig");
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  const auto& info = m.gpus()[0]->info();
  EXPECT_EQ(info.label, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(info.mig_enabled, true);
  ASSERT_EQ(info.mig_devices.size(), 2u);
  EXPECT_EQ(info.mig_devices[1].uuid, "MIG-66666666-7777-8888-9999-aaaaaaaaaaaa");
  EXPECT_EQ(info.mig_devices[0].memory_total_bytes, 20096 * kMiB);
}

TEST(Nvidia, MigSelectionWithoutTheDriver) {
  FakeGpus fake("a100-mig", {.cuda = false, .visible = "MIG-66666666-7777-8888-9999-aaaaaaaaaaaa"});
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  EXPECT_EQ(m.gpus()[0]->uuid(), "MIG-66666666-7777-8888-9999-aaaaaaaaaaaa");
  EXPECT_EQ(m.gpus()[0]->memory()->used_bytes, 2048 * kMiB);
}

class Ordering : public ::testing::TestWithParam<bool> {};  // with the driver, or NVML alone

TEST_P(Ordering, CudaOrdinalsMatchNvmlThroughThePciBus) {
  bool driver = GetParam();
  {
    // NVML lists the A4000 first (PCI order); CUDA puts the faster 4090 first.
    FakeGpus fake("mixed", {.cuda = driver});
    Machine m(fake.options());
    ASSERT_EQ(labels(m), (std::vector<std::string>{"NVIDIA GeForce RTX 4090", "NVIDIA RTX A4000"}));
    EXPECT_EQ(m.gpus()[0]->fan_speed_pct(), 36);  // the 4090's own telemetry, not NVML index 0's
    EXPECT_EQ(m.gpus()[1]->fan_speed_pct(), 41);
    EXPECT_EQ(m.gpus()[0]->info().pci_bus_id, "00000000:41:00.0");
    EXPECT_EQ(m.gpus()[1]->info().index, 1u);
  }
  {
    FakeGpus fake("mixed", {.cuda = driver, .visible = "1,0"});
    Machine m(fake.options());
    EXPECT_EQ(labels(m), (std::vector<std::string>{"NVIDIA RTX A4000", "NVIDIA GeForce RTX 4090"}));
  }
  {
    FakeGpus fake("mixed", {.cuda = driver, .order = "PCI_BUS_ID"});
    Machine m(fake.options());
    EXPECT_EQ(labels(m), (std::vector<std::string>{"NVIDIA RTX A4000", "NVIDIA GeForce RTX 4090"}));
  }
  {
    FakeGpus fake("mixed", {.cuda = driver, .visible = "0,-1,1"});
    Machine m(fake.options());
    EXPECT_EQ(labels(m), (std::vector<std::string>{"NVIDIA GeForce RTX 4090"}));
  }
  {
    FakeGpus fake("mixed", {.cuda = driver, .visible = "GPU-4444"});
    Machine m(fake.options());
    EXPECT_EQ(labels(m), (std::vector<std::string>{"NVIDIA RTX A4000"}));
  }
  {
    FakeGpus fake("mixed", {.cuda = driver, .visible = ""});
    Machine m(fake.options());
    EXPECT_TRUE(m.gpus().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Nvidia, Ordering, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "driver" : "nvml_only"; });

TEST(Nvidia, LostGpuReadsAsUnsupportedWithoutCrashing) {
  FakeGpus fake("lost");
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  const auto& gpu = *m.gpus()[0];
  EXPECT_EQ(gpu.label(), "NVIDIA H100 80GB HBM3");  // identity was read before it was lost
  auto util = gpu.utilization();
  EXPECT_FALSE(util.ok());
  EXPECT_EQ(util.reason(), "GPU is lost");
  EXPECT_EQ(util.unavailable()->status, ProbeStatus::failed);  // offered, and gone wrong
  EXPECT_FALSE(gpu.thermal().ok());
  EXPECT_FALSE(gpu.energy().ok());
  EXPECT_FALSE(gpu.pcie().ok());
  EXPECT_TRUE(gpu.clock_readings().empty());
  EXPECT_TRUE(gpu.processes().empty());
  auto nvml_mem = nvidia(m.gpus()[0]).nvml_memory();
  EXPECT_FALSE(nvml_mem.ok());
  EXPECT_NE(nvml_mem.reason().find("GPU is lost"), std::string::npos);
  EXPECT_EQ(nvml_mem.unavailable()->status, ProbeStatus::failed);
  auto s = m.snapshot();  // the snapshot still completes
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_FALSE(s.gpus[0].telemetry.utilization.ok());
  EXPECT_FALSE(gpu_busy(m, 0));  // readings it cannot give count as idle
}

TEST(Nvidia, NvmlMissingMemoryFromTheCudaDriver) {
  FakeGpus fake("rtx4090", {.nvml = FakeGpus::Nvml::missing});
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 1u);
  const auto& gpu = *m.gpus()[0];
  EXPECT_EQ(gpu.label(), "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(gpu.uuid(), "GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4");
  EXPECT_EQ(gpu.info().pci_bus_id, "00000000:01:00.0");
  EXPECT_EQ(gpu.info().memory_total_bytes, 24564 * kMiB);
  EXPECT_EQ(gpu.info().sm_count, 128u);
  auto mem = gpu.memory();
  EXPECT_TRUE(mem.ok());
  EXPECT_EQ(mem->source, mainboard::MemorySource::cuda);
  EXPECT_EQ(mem->total_bytes, 24564 * kMiB);
  auto util = gpu.utilization();
  EXPECT_FALSE(util.ok());
  EXPECT_NE(util.reason().find("NVML"), std::string::npos);
  auto s = m.snapshot();
  EXPECT_EQ(s.diagnostic("gpu:nvidia")->status, ProbeStatus::unsupported);
  EXPECT_NE(s.diagnostic("gpu:nvidia")->reason.find("NVML not loaded"), std::string::npos);
  EXPECT_FALSE(s.cuda.nvml.found);
  EXPECT_TRUE(s.cuda.cuda_driver.found);
  EXPECT_EQ(s.cuda.cuda_driver_version, "12.4");
}

TEST(Nvidia, OlderNvmlWithoutTheNewerSymbolsFallsBack) {
  FakeGpus fake("h100x8", {.nvml = FakeGpus::Nvml::minimal});
  Machine m(fake.options());
  ASSERT_EQ(m.gpus().size(), 8u);
  const auto& g3 = *m.gpus()[3];
  auto mem = g3.memory();
  EXPECT_EQ(mem->source, mainboard::MemorySource::nvml);  // v1: no nvmlDeviceGetMemoryInfo_v2
  EXPECT_EQ(mem->used_bytes, (40 * 1024 + 529) * kMiB);   // v1 counts the reservation as used
  auto energy = g3.energy();
  EXPECT_DOUBLE_EQ(*energy->power_w, 655.0);
  EXPECT_FALSE(energy->energy_j);  // no nvmlDeviceGetTotalEnergyConsumption
  auto pcie = g3.pcie();
  EXPECT_FALSE(pcie->tx_kbps);  // no nvmlDeviceGetPcieThroughput
  EXPECT_EQ(pcie->link_gen, 5);
  EXPECT_EQ(g3.thermal()->temperature_c, 34);  // plain nvmlDeviceGetTemperature
  auto procs = g3.processes();                 // the unversioned process query
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].pid, 4242u);
  EXPECT_EQ(procs[0].used_memory_bytes, 40 * 1024 * kMiB);
}

TEST(Nvidia, NeitherLibraryMeansNoGpusAndAFineSnapshot) {
  FakeGpus fake("h100x8", {.nvml = FakeGpus::Nvml::missing, .cuda = false});
  Machine m(fake.options());
  EXPECT_TRUE(m.gpus().empty());
  auto s = m.snapshot();
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_EQ(s.unit_count(), 1u);
  const auto* d = s.diagnostic("gpu:nvidia");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->status, ProbeStatus::unsupported);
  EXPECT_NE(d->reason.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_FALSE(m.cuda_architecture());
  EXPECT_FALSE(gpu_busy(m, 0));  // a CPU-only host reads as idle
}

TEST(Nvidia, RecordedHostsDoNotLoadThisMachinesDriver) {
  Machine::Options o;
  o.sysroot = fixture_host("vm-cgroup1-nodmi");
  Machine m(o);
  EXPECT_TRUE(m.gpus().empty());
  EXPECT_NE(m.cuda_stack().nvml.reason.find("recorded host"), std::string::npos);
}

TEST(Busy, ThresholdsAndInjectedSleep) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  EXPECT_TRUE(gpu_busy(m, 3));   // 97 % utilization
  EXPECT_FALSE(gpu_busy(m, 0));  // idle
  EXPECT_FALSE(gpu_busy(m, 3, {.util_pct = 99.0, .memory_pct = 90.0}));
  EXPECT_TRUE(gpu_busy(m, 3, {.util_pct = 99.0, .memory_pct = 40.0}));  // 40 of 80 GiB in use
  EXPECT_THROW(gpu_busy(m, 8), Error);

  int sleeps = 0;
  double slept = 0;
  auto sleep = [&](double s) {
    ++sleeps;
    slept += s;
  };
  EXPECT_TRUE(wait_for_idle(m, 0, 30, 0.5, {}, sleep));
  EXPECT_EQ(sleeps, 0);  // idle at once
  EXPECT_FALSE(wait_for_idle(m, 3, 2.0, 0.5, {}, sleep));
  EXPECT_EQ(sleeps, 4);
  EXPECT_DOUBLE_EQ(slept, 2.0);
}

TEST(Nvidia, ProbeOneProviderByName) {
  FakeGpus fake("rtx4090");
  Machine m(fake.options());
  auto gpus = m.probe_gpus("nvidia");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]->label(), "NVIDIA GeForce RTX 4090");
  EXPECT_TRUE(m.probe_gpus("no-such-vendor").empty());
}

// On a host without an NVIDIA kernel driver, the driver's libraries are not looked for (a dlopen
// that fails in thirty directories), and the reason says what is missing.
TEST(Nvidia, WithoutAKernelDriverTheLibrariesAreNotLookedFor) {
  for (const char* path : {"/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg"})
    if (::access(path, F_OK) == 0) GTEST_SKIP() << "this host has an NVIDIA driver: " << path;
  Machine::Options o;
  o.environment = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}};
  o.toolchain_cache = false;
  Machine m(o);
  EXPECT_TRUE(m.gpus().empty());
  SnapshotOptions no_tools;
  no_tools.toolchain = false;
  auto s = m.snapshot(no_tools);
  ASSERT_NE(s.diagnostic("gpu:nvidia"), nullptr);
  EXPECT_NE(s.diagnostic("gpu:nvidia")
                ->reason.find("NVML not loaded: no NVIDIA kernel driver (no "
                              "/dev/nvidiactl, /proc/driver/nvidia or /dev/dxg)"),
            std::string::npos)
      << s.diagnostic("gpu:nvidia")->reason;
  EXPECT_FALSE(s.cuda.nvml.found);
  EXPECT_FALSE(s.cuda.cuda_driver.found);
  ASSERT_NE(s.diagnostic("cuda"), nullptr);
  EXPECT_EQ(s.diagnostic("cuda")->reason, "no NVIDIA driver libraries");
}
