// GPU health and depth through the fake NVML: XIDs from a host's kernel log, NVLink link by link,
// GPM unit activity, a unified-memory GPU whose NVML has no memory figure, and what `check`
// makes of them.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_gpus.hpp"
#include "mainboard/check.hpp"
#include "mainboard/json.hpp"
#include "mainboard/nvidia.hpp"
#include "providers/nvidia/xid.hpp"

using namespace mainboard;
using mainboard::nvidia::parse_xid_line;

namespace {

const Finding* finding(const Readiness& r, const std::string& id, const std::string& subject) {
  for (const auto& f : r.findings)
    if (f.id == id && f.subject == subject) return &f;
  return nullptr;
}

}  // namespace

TEST(Xid, TheDriversLinesInBothLogForms) {
  // /dev/kmsg: "priority,sequence,microseconds,flags;text".
  auto k = parse_xid_line(
      "4,1490,86400123456,-;NVRM: Xid (PCI:0000:5d:00): 31, pid=4242, name=python3, Ch 00000018, "
      "intr 00000000. MMU Fault: ENGINE GRAPHICS");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->address.domain, 0u);
  EXPECT_EQ(k->address.bus, 0x5du);
  EXPECT_EQ(k->address.device, 0u);
  EXPECT_EQ(k->error.code, 31u);
  EXPECT_EQ(k->error.meaning, "GPU memory page fault (an illegal address in a kernel)");
  EXPECT_EQ(k->error.pid, 4242u);
  EXPECT_EQ(k->error.process, "python3");
  EXPECT_DOUBLE_EQ(*k->error.uptime_s, 86400.123456);
  // dmesg's "[seconds]" form, an older driver's words (no pid), a domain other than 0.
  auto d =
      parse_xid_line("[172800.600000] NVRM: Xid (PCI:0009:01:00): 79, GPU has fallen off the bus.");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->address.domain, 9u);
  EXPECT_EQ(d->address.bus, 1u);
  EXPECT_EQ(d->error.code, 79u);
  EXPECT_EQ(d->error.meaning, "GPU has fallen off the bus");
  EXPECT_FALSE(d->error.pid);
  EXPECT_NEAR(*d->error.uptime_s, 172800.6, 1e-9);
  // A code outside the catalog keeps its number; pid='<unknown>' is no pid.
  auto u = parse_xid_line("NVRM: Xid (PCI:0000:01:00): 9999, pid='<unknown>', name=<unknown>, x");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->error.code, 9999u);
  EXPECT_EQ(u->error.meaning, "");
  EXPECT_FALSE(u->error.pid);
  EXPECT_EQ(u->error.process, "");
}

TEST(Xid, MalformedLinesAreNotXids) {
  for (const char* line :
       {"", "NVRM: Xid", "NVRM: Xid (PCI:", "NVRM: Xid (PCI:0000:5d:00",
        "NVRM: Xid (PCI:0000:5d:00)",
        "NVRM: Xid (PCI:0000:5d:00): ", "NVRM: Xid (PCI:zz:yy:xx): 79, lost",
        "NVRM: Xid (PCI:0000:5d:00): seventy-nine", "python3[4242]: segfault (Xid handler)",
        "6,1,0,-;Linux version 6.1.0", "\xff\xfe\x00garbage;;;[[[", "4,1,x,-;NVRM: Xid (PCI:"})
    EXPECT_FALSE(parse_xid_line(line)) << line;
  std::string huge(1 << 20, 'x');
  EXPECT_FALSE(parse_xid_line(huge));
  // A name too long to be a process's is left out, not kept.
  auto r = parse_xid_line("NVRM: Xid (PCI:0000:01:00): 13, pid=1, name=" + std::string(500, 'n'));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error.process, "");
}

TEST(Xid, TheLogIsReadOnceThenOnlyWhatWasAdded) {
  auto root =
      std::filesystem::temp_directory_path() / ("mainboard-xid-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "dev");
  {
    std::ofstream out(root / "dev/kmsg");
    out << "4,1,1000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=7, name=a, Graphics Exception\n"
        << "4,2,2000000,-;NVRM: Xid (PCI:0000:18:";  // cut mid-line, as a block read can be
  }
  nvidia::XidLog log(std::make_shared<core::Fs>(root));
  auto first = log.for_gpu("00000000:18:00.0");
  EXPECT_EQ(first.count, 1u);
  EXPECT_EQ(first.last->code, 13u);
  {
    std::ofstream out(root / "dev/kmsg", std::ios::app);
    out << "00): 48, DBE (double bit error)\n"
        << "4,3,3000000,-;NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.\n";
  }
  auto second = log.for_gpu("00000000:18:00.0");
  EXPECT_EQ(second.count, 2u) << "the first line is not counted again";
  EXPECT_EQ(second.last->code, 48u);
  EXPECT_EQ(log.for_gpu("00000000:2A:00.0").count, 1u);
  EXPECT_EQ(log.for_gpu("00000000:99:00.0").count, 0u);
  EXPECT_FALSE(log.for_gpu("00000000:99:00.0").last);
  std::filesystem::remove_all(root);
}

TEST(Xid, AHostWithoutAReadableLogSaysWhy) {
  nvidia::XidLog log(std::make_shared<core::Fs>(fixture_host("grace-hopper")));
  auto x = log.for_gpu("00000009:01:00.0");
  EXPECT_FALSE(x.count);
  EXPECT_NE(x.reason.find("the kernel log (/dev/kmsg) is not readable"), std::string::npos)
      << x.reason;
}

TEST(GpuHealth, XidsOfEachGpuFromTheHostsKernelLog) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto g3 = m.gpus()[3]->health();  // 5D: a page fault, then its process's cleanup
  EXPECT_EQ(g3.xid_errors, 2u);
  ASSERT_TRUE(g3.last_xid);
  EXPECT_EQ(g3.last_xid->code, 45u);
  EXPECT_EQ(g3.last_xid->pid, 4242u);
  EXPECT_EQ(g3.last_xid->process, "python3");
  EXPECT_DOUBLE_EQ(*g3.last_xid->uptime_s, 86400.123789);
  auto g4 = m.gpus()[4]->health();  // 9A: fell off the bus
  EXPECT_EQ(g4.xid_errors, 1u);
  EXPECT_EQ(g4.last_xid->code, 79u);
  auto g0 = m.gpus()[0]->health();
  EXPECT_EQ(g0.xid_errors, 0u);
  EXPECT_FALSE(g0.last_xid);
  EXPECT_TRUE(g0.unavailable.empty()) << g0.unavailable.begin()->first;
  EXPECT_EQ(g0.xid_source, XidSource::kernel_log);
  EXPECT_STREQ(g0.xid_period(), "since boot");
  EXPECT_FALSE(g0.xid_since_unix_s);
}

namespace {

/// A machine over a host whose kernel log cannot be read (grace-hopper records none), with
/// the fake NVIDIA libraries.
Machine::Options without_kernel_log(const FakeGpus& fake, bool listen) {
  auto o = fake.options();
  o.sysroot = fixture_host("grace-hopper");
  o.listen_for_xids = listen;
  return o;
}

/// Why a GPU has no XID count, or empty.
std::string xid_unsupported(const GpuHealth& h) {
  auto xid = h.unavailable.find("xid");
  return xid == h.unavailable.end() ? "" : xid->second.reason;
}

/// GPU `index`'s health once its XID count reaches `count` (or after 10 s, for the test to fail).
GpuHealth health_when(const Machine& m, std::size_t index, std::uint32_t count) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    auto h = m.gpus()[index]->health();
    if ((h.xid_errors && *h.xid_errors >= count) || std::chrono::steady_clock::now() > deadline)
      return h;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

TEST(GpuHealth, ALongRunningReaderWithoutTheKernelLogCountsNvmlsXidEvents) {
  FakeGpus fake("h100x8");
  double before =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  Machine m(without_kernel_log(fake, true));
  auto g4 = health_when(m, 4, 1);  // 40 ms after listening began: fell off the bus
  EXPECT_EQ(g4.xid_errors, 1u);
  ASSERT_TRUE(g4.last_xid);
  EXPECT_EQ(g4.last_xid->code, 79u);
  EXPECT_EQ(g4.last_xid->meaning, "GPU has fallen off the bus");
  EXPECT_FALSE(g4.last_xid->pid) << "NVML's events name no process";
  EXPECT_TRUE(g4.last_xid->uptime_s);
  EXPECT_EQ(g4.xid_source, XidSource::nvml_events);
  EXPECT_STREQ(g4.xid_period(), "since listening began");
  ASSERT_TRUE(g4.xid_since_unix_s);
  EXPECT_GE(*g4.xid_since_unix_s, before - 1);
  auto g3 = health_when(m, 3, 2);
  EXPECT_EQ(g3.xid_errors, 2u);
  EXPECT_EQ(g3.last_xid->code, 43u);
  EXPECT_EQ(xid_unsupported(g3), "");
  // A GPU with no event yet counts none; one that refused events is not "no XIDs".
  auto g0 = m.gpus()[0]->health();
  EXPECT_EQ(g0.xid_errors, 0u);
  EXPECT_FALSE(g0.last_xid);
  auto g6 = m.gpus()[6]->health();
  EXPECT_FALSE(g6.xid_errors);
  std::string why = xid_unsupported(g6);
  EXPECT_NE(why.find("NVML events: refused for this GPU"), std::string::npos) << why;
  // What check and the view say of the period.
  auto r = check_readiness(m.snapshot());
  auto* lost = finding(r, "gpu.xid", "GPU 4");
  ASSERT_TRUE(lost);
  EXPECT_NE(lost->reading.find("1 XID since listening began, the last 79"), std::string::npos)
      << lost->reading;
}

TEST(GpuHealth, AOneShotReaderWithoutTheKernelLogSaysWhyAndDoesNotListen) {
  FakeGpus fake("h100x8");
  Machine m(without_kernel_log(fake, false));
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // past every scenario event
  auto g4 = m.gpus()[4]->health();
  EXPECT_FALSE(g4.xid_errors);
  EXPECT_EQ(g4.xid_source, XidSource::none);
  std::string why = xid_unsupported(g4);
  EXPECT_NE(why.find("the kernel log (/dev/kmsg) is not readable"), std::string::npos) << why;
  EXPECT_EQ(why.find("NVML events"), std::string::npos) << why;
}

TEST(GpuHealth, AnNvmlWithoutEventsSaysSo) {
  FakeGpus fake("h100x8", {.nvml = FakeNvml::minimal});
  Machine m(without_kernel_log(fake, true));
  auto g4 = m.gpus()[4]->health();
  EXPECT_FALSE(g4.xid_errors);
  std::string why = xid_unsupported(g4);
  EXPECT_NE(why.find("NVML events: this NVML has no events"), std::string::npos) << why;
}

TEST(GpuHealth, NvLinkLinkByLink) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto h = m.gpus()[3]->health();
  ASSERT_EQ(h.links.size(), 18u);
  const auto& l2 = h.links[2];
  EXPECT_EQ(l2.link, 2u);
  EXPECT_TRUE(l2.active);
  EXPECT_EQ(l2.version, 4u);
  EXPECT_EQ(l2.tx_bytes, (4000u + 2) * 1024);  // KiB from the driver, bytes here
  EXPECT_EQ(l2.rx_bytes, (8000u + 2) * 1024);
  EXPECT_EQ(l2.replay_errors, 12u);
  EXPECT_EQ(l2.recovery_errors, 1u);
  EXPECT_EQ(l2.crc_errors, 3u);
  EXPECT_FALSE(h.links[17].active);
  EXPECT_EQ(h.links[0].replay_errors, 0u);
}

TEST(GpuHealth, AGpuWithoutNvLinkOrAnNvmlWithoutItSaysSo) {
  {
    FakeGpus fake("rtx4090");
    Machine m(fake.options());
    auto h = m.gpus()[0]->health();
    EXPECT_TRUE(h.links.empty());
    EXPECT_TRUE(h.unavailable.contains("nvlink"));
  }
  FakeGpus fake("h100x8", {.nvml = FakeNvml::minimal});
  Machine m(fake.options());
  auto h = m.gpus()[0]->health();
  EXPECT_TRUE(h.links.empty());
  ASSERT_TRUE(h.unavailable.contains("nvlink"));
  EXPECT_EQ(h.unavailable.at("nvlink").reason, "not in this NVML");
  // In JSON, each part not read is named with why; a schema-1 list of "part: why" still reads.
  nlohmann::json j = h;
  EXPECT_EQ(j["unavailable"]["nvlink"]["reason"], "not in this NVML");
  EXPECT_EQ(j["unavailable"]["nvlink"]["status"], "unsupported");
  EXPECT_EQ(j.get<GpuHealth>(), h);
  j.erase("unavailable");
  j["unsupported"] = {"nvlink: not in this NVML", "ecc: Not Supported"};
  auto old = j.get<GpuHealth>();
  EXPECT_EQ(old.unavailable.at("ecc").reason, "Not Supported");
  EXPECT_EQ(old.unavailable.at("nvlink").reason, "not in this NVML");
}

TEST(GpuUnitActivity, GpmOnHopper) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto a = m.gpus()[3]->unit_activity();
  ASSERT_TRUE(a.ok()) << a.reason();
  EXPECT_DOUBLE_EQ(*a->sm_active_pct, 92.5);
  EXPECT_DOUBLE_EQ(*a->sm_occupancy_pct, 48.25);
  EXPECT_DOUBLE_EQ(*a->tensor_active_pct, 61.5);
  EXPECT_DOUBLE_EQ(*a->dram_bandwidth_pct, 70.75);
  EXPECT_GE(*a->window_s, 0.1) << "two samples at least 100 ms apart";
  // At once again: the same window, not a shorter one.
  EXPECT_EQ(m.gpus()[3]->unit_activity(), a);
  // In the snapshot too, for every GPU.
  auto s = m.snapshot();
  EXPECT_TRUE(s.gpus[0].unit_activity.ok());
  EXPECT_DOUBLE_EQ(*s.gpus[0].unit_activity->sm_active_pct, 0.0);
}

TEST(GpuUnitActivity, UnsupportedWithTheReason) {
  {
    FakeGpus fake("rtx4090");  // Ada: no GPM
    Machine m(fake.options());
    auto a = m.gpus()[0]->unit_activity();
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.reason(), "GPM needs a Hopper or later GPU");
  }
  {
    FakeGpus fake("h100x8", {.nvml = FakeNvml::minimal});
    Machine m(fake.options());
    EXPECT_EQ(m.gpus()[0]->unit_activity().reason(),
              "this NVML has no GPM (it came with NVML 11.5)");
  }
  {
    FakeGpus fake("a100-mig", {.visible = "MIG-11111111-2222-3333-4444-555555555555"});
    Machine m(fake.options());
    ASSERT_EQ(m.gpus().size(), 1u);
    EXPECT_EQ(m.gpus()[0]->unit_activity().reason(), "GPM is not read per MIG instance");
  }
}

TEST(Nvidia, AUnifiedMemoryGpuWithoutNvmlMemoryReadsTheCudaDriver) {
  for (const char* scenario : {"gb10", "gb10-zero"}) {
    FakeGpus fake(scenario);
    Machine m(fake.options());
    ASSERT_EQ(m.gpus().size(), 1u) << scenario;
    const auto& gpu = *m.gpus()[0];
    EXPECT_TRUE(gpu.info().coherent);
    EXPECT_EQ(gpu.info().compute_capability, "12.1");
    auto nvml = dynamic_cast<const NvidiaGpu&>(gpu).nvml_memory();
    EXPECT_FALSE(nvml.ok()) << scenario << ": zero is not a reading";
    auto mem = gpu.memory();
    EXPECT_TRUE(mem.ok()) << scenario << ": " << mem.reason();
    EXPECT_EQ(mem->source, mainboard::MemorySource::cuda) << scenario;
    EXPECT_TRUE(mem->unified);
    EXPECT_EQ(mem->total_bytes, 122502ull << 20);
    EXPECT_EQ(mem->used_bytes, 20480ull << 20);
  }
}

TEST(Check, XidsAndNvLinkAreJudgedByWhatTheySay) {
  FakeGpus fake("h100x8");
  Machine m(fake.options());
  auto r = check_readiness(m.snapshot());
  auto* lost = finding(r, "gpu.xid", "GPU 4");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->severity, Severity::blocker);
  EXPECT_NE(lost->reading.find("the last 79: GPU has fallen off the bus"), std::string::npos)
      << lost->reading;
  auto* app = finding(r, "gpu.xid", "GPU 3");
  ASSERT_TRUE(app);
  EXPECT_EQ(app->severity, Severity::info) << "a process's fault, not the GPU's";
  auto* down = finding(r, "gpu.nvlink_down", "GPU 3");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->severity, Severity::warning);
  EXPECT_NE(down->reading.find("17 of 18 links up (down: 17)"), std::string::npos) << down->reading;
  auto* errors = finding(r, "gpu.nvlink_errors", "GPU 3");
  ASSERT_TRUE(errors);
  EXPECT_NE(errors->reading.find("link 2 (1 recovery, 3 CRC errors)"), std::string::npos)
      << errors->reading;
  EXPECT_FALSE(finding(r, "gpu.xid", "GPU 0"));
  EXPECT_FALSE(finding(r, "gpu.nvlink_down", "GPU 0"));
}
