#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "fake_gpus.hpp"
#include "host/note.hpp"
#include "host/probes.hpp"
#include "mainboard/check.hpp"
#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "test_util.hpp"

using namespace mainboard;

namespace {

Readiness check_host(const std::string& name, bool strict = false) {
  Machine::Options o;
  o.sysroot = fixture_host(name);
  Machine m(o);
  return check_readiness(m.snapshot({.toolchain = false}), strict);
}

const Finding* find(const Readiness& r, const std::string& id,
                    const std::string& subject = "host") {
  for (const auto& f : r.findings)
    if (f.id == id && f.subject == subject) return &f;
  return nullptr;
}

}  // namespace

// The tuning files of a workstation in a Slurm job, read through the sysroot.
TEST(Tuning, ReadFromTheFixtureHost) {
  core::Fs fs(fixture_host("cgroup2-capped"));
  host::Note note;
  auto t = host::probe_tuning(fs, note);
  EXPECT_EQ(note.status, ProbeStatus::ok);
  ASSERT_EQ(t.governors.size(), 2u);
  EXPECT_EQ(t.governors.at("powersave"), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(t.governors.at("performance"), (std::vector<std::uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(t.boost, true);  // intel_pstate/no_turbo = 0
  EXPECT_EQ(t.boost_control, "/sys/devices/system/cpu/intel_pstate/no_turbo");
  EXPECT_EQ(t.smt_active, true);
  EXPECT_EQ(t.aslr, 2);
  EXPECT_EQ(t.transparent_hugepages, "madvise");
  EXPECT_EQ(t.perf_event_paranoid, 2);
}

TEST(Tuning, MalformedAndMissingFilesDegrade) {
  TempDir root;
  root.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "");
  root.write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", std::string(100000, 'x'));
  root.write("sys/devices/system/cpu/cpuX/cpufreq/scaling_governor", "performance\n");
  root.write("sys/devices/system/cpu/smt/active", "garbage\n");
  root.write("sys/kernel/mm/transparent_hugepage/enabled", "always madvise never [\n");
  root.write("proc/sys/kernel/randomize_va_space", "99999999999999999999\n");
  core::Fs fs(root.path());
  host::Note note;
  auto t = host::probe_tuning(fs, note);
  EXPECT_TRUE(t.governors.empty());
  EXPECT_FALSE(t.smt_active);
  EXPECT_EQ(t.transparent_hugepages, "");
  EXPECT_FALSE(t.aslr);
  EXPECT_EQ(note.status, ProbeStatus::unsupported);
  TempDir empty;
  host::Note none;
  host::probe_tuning(core::Fs(empty.path()), none);
  EXPECT_EQ(none.status, ProbeStatus::unsupported);
}

// A workstation node: tuned for throughput, not for benchmarks. Ready, with warnings; not ready
// under --strict.
TEST(Check, WarningsMakeANodeNotReadyOnlyWhenStrict) {
  auto r = check_host("cgroup2-capped");
  EXPECT_TRUE(r.ready()) << r.text();
  EXPECT_EQ(r.count(Severity::blocker), 0u);
  const auto* governor = find(r, "cpu.governor");
  ASSERT_NE(governor, nullptr) << r.text();
  EXPECT_EQ(governor->severity, Severity::warning);
  EXPECT_EQ(governor->reading, "governor powersave on cpu0-3");
  EXPECT_EQ(governor->fix, "cpupower frequency-set --governor performance");
  const auto* swap = find(r, "memory.swap");
  ASSERT_NE(swap, nullptr);
  EXPECT_EQ(swap->reading, "1.00 GiB of swap in use");
  const auto* load = find(r, "cpu.load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->severity, Severity::warning);
  EXPECT_EQ(load->reading, "load 3.50 on 8 logical CPUs");
  ASSERT_NE(find(r, "cpu.boost"), nullptr);
  EXPECT_EQ(find(r, "cpu.boost")->fix, "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo");
  EXPECT_EQ(find(r, "perf.paranoid")->severity, Severity::info);  // 2, user ada
  EXPECT_EQ(find(r, "memory.thp"), nullptr);                      // madvise
  // Most severe first.
  for (std::size_t i = 1; i < r.findings.size(); ++i)
    EXPECT_GE(static_cast<int>(r.findings[i - 1].severity),
              static_cast<int>(r.findings[i].severity));
  auto strict = check_host("cgroup2-capped", true);
  EXPECT_FALSE(strict.ready());
  EXPECT_NE(strict.text().find("NOT READY"), std::string::npos) << strict.text();
}

// A server loaded by other work, with transparent huge pages always on.
TEST(Check, ABusyServerIsNotReady) {
  auto r = check_host("numa-2socket");
  EXPECT_FALSE(r.ready());
  const auto* load = find(r, "cpu.load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->severity, Severity::blocker);
  EXPECT_EQ(load->reading, "load 31.90 on 32 logical CPUs");
  EXPECT_EQ(find(r, "memory.thp")->severity, Severity::warning);
  EXPECT_EQ(find(r, "cpu.governor"), nullptr);   // performance everywhere
  EXPECT_EQ(find(r, "cpu.boost"), nullptr);      // no_turbo = 1
  EXPECT_EQ(find(r, "perf.paranoid"), nullptr);  // root
  EXPECT_EQ(find(r, "kernel.aslr"), nullptr);    // 0
}

// Eight H100s, one of them used by another process: that GPU is a blocker with its pid.
TEST(Check, AGpuInUseByAnotherProcessIsABlocker) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto r = check_readiness(m.snapshot({.toolchain = false}));
  EXPECT_FALSE(r.ready());
  const auto* procs = find(r, "gpu.processes", "GPU 3");
  ASSERT_NE(procs, nullptr) << r.text();
  EXPECT_EQ(procs->severity, Severity::blocker);
  EXPECT_NE(procs->reading.find("pid 4242"), std::string::npos) << procs->reading;
  EXPECT_EQ(procs->fix, "wait for it (mainboard wait-idle --index 3) or use another GPU");
  EXPECT_NE(find(r, "gpu.busy", "GPU 3"), nullptr);
  for (int i : {0, 1, 2, 4, 5, 6, 7})
    EXPECT_EQ(find(r, "gpu.processes", "GPU " + std::to_string(i)), nullptr) << i;
  nlohmann::json j = r;
  EXPECT_EQ(j.get<Readiness>(), r);
  EXPECT_EQ(j["findings"][0]["severity"], "blocker");
}

TEST(Check, ThrottleReasonsBySource) {
  MachineSnapshot s;
  GpuSnapshot g;
  g.info.index = 1;
  g.telemetry.thermal = Thermal{.throttle_reasons = {"GpuIdle", "SwPowerCap"}};
  s.gpus.push_back(g);
  auto r = check_readiness(s);
  ASSERT_NE(find(r, "gpu.throttle", "GPU 1"), nullptr);
  EXPECT_EQ(find(r, "gpu.throttle", "GPU 1")->severity, Severity::warning);
  EXPECT_EQ(find(r, "gpu.throttle", "GPU 1")->reading, "clocks held down by SwPowerCap");
  s.gpus[0].telemetry.thermal->throttle_reasons = {"HwThermalSlowdown", "SwPowerCap"};
  r = check_readiness(s);
  EXPECT_EQ(find(r, "gpu.throttle", "GPU 1")->severity, Severity::blocker);
  s.gpus[0].telemetry.thermal->throttle_reasons = {"GpuIdle"};
  EXPECT_EQ(find(check_readiness(s), "gpu.throttle", "GPU 1"), nullptr);
}

// GPU health from the driver: GPU 5 has a remapping pending after uncorrectable errors, GPU 7
// runs without persistence mode.
TEST(Check, GpuHealthFromTheDriver) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto h5 = m.gpus()[5]->health();
  EXPECT_EQ(h5.persistence_mode, true);
  EXPECT_EQ(h5.ecc_enabled, true);
  EXPECT_EQ(h5.ecc_uncorrected_volatile, 2u);
  EXPECT_EQ(h5.remapped_rows_uncorrectable, 1u);
  EXPECT_EQ(h5.remap_pending, true);
  EXPECT_EQ(h5.remap_failed, false);
  EXPECT_FALSE(h5.retired_pages_pending);  // the remapper's GPUs retire no pages
  auto s = m.snapshot({.toolchain = false});
  auto r = check_readiness(s);
  const auto* pending = find(r, "gpu.remap_pending", "GPU 5");
  ASSERT_NE(pending, nullptr) << r.text();
  EXPECT_EQ(pending->severity, Severity::blocker);
  EXPECT_EQ(pending->fix, "drain the node and reset the GPU (nvidia-smi -r -i 5)");
  EXPECT_EQ(find(r, "gpu.ecc", "GPU 5")->reading,
            "2 uncorrectable ECC errors since the driver loaded");
  EXPECT_EQ(find(r, "gpu.persistence", "GPU 7")->severity, Severity::warning);
  EXPECT_EQ(find(r, "gpu.persistence", "GPU 0"), nullptr);
  EXPECT_EQ(find(r, "gpu.ecc", "GPU 0"), nullptr);
  // The snapshot carries it, and reads back; a snapshot saved before it had none still loads.
  nlohmann::json j = s;
  auto back = j.get<MachineSnapshot>();
  ASSERT_TRUE(back.gpus[5].health);
  EXPECT_EQ(back.gpus[5].health->remap_pending, true);
  j["gpus"][5].erase("health");
  EXPECT_FALSE(j.get<MachineSnapshot>().gpus[5].health);
}

// An older NVML without these entry points: each reading says why it is missing.
TEST(Check, GpuHealthOnAnOlderNvmlSaysWhatIsMissing) {
  FakeGpus fake("h100x8", {.nvml = FakeNvml::minimal});
  Machine m(fake.options());
  auto h = m.gpus()[0]->health();
  EXPECT_FALSE(h.persistence_mode);
  EXPECT_FALSE(h.remap_pending);
  ASSERT_TRUE(h.unavailable.contains("persistence"));
  EXPECT_EQ(h.unavailable.at("persistence").reason, "not in this NVML");
}
