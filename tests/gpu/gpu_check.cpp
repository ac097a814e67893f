// The GPU check: runs kernels of known character (kernels.cu, built with nvcc on the GPU
// machine) under mainboard::profile and checks the verdicts a user would rely on. Prints one
// line per check and writes every report as JSON.
//   gpu_check LIBKERNELS.so OUT.json
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mainboard/json.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/profile_report.hpp"

using namespace mainboard;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

template <class Fn>
Fn* sym(void* lib, const char* name) {
  auto* p = reinterpret_cast<Fn*>(::dlsym(lib, name));
  if (!p) {
    std::fprintf(stderr, "gpu_check: %s missing from the kernels library\n", name);
    std::exit(2);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gpu_check LIBKERNELS.so OUT.json\n");
    return 2;
  }
  void* lib = ::dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "gpu_check: %s\n", ::dlerror());
    return 2;
  }
  auto* setup = sym<int(size_t, size_t)>(lib, "kernels_setup");
  auto* sm_count = sym<int()>(lib, "kernels_sm_count");
  auto* copy_bytes = sym<size_t()>(lib, "kernels_copy_bytes_per_launch");
  auto* copy = sym<void()>(lib, "kernels_copy");
  auto* fma = sym<void()>(lib, "kernels_fma");
  auto* bad = sym<void()>(lib, "kernels_bad_launch");
  auto* memcpy_1g = sym<void()>(lib, "kernels_memcpy");
  auto* sync = sym<void()>(lib, "kernels_sync");

  if (setup(std::size_t{256} << 20, std::size_t{1} << 30) != 0)
    return 2;  // 1 GiB per buffer, 1 GiB copy
  const auto& machine = Machine::instance();
  double peak = machine.gpus().empty() ? 0.0 : machine.gpus()[0]->peak_bandwidth_gbs().value_or(0);
  int sms = sm_count();
  std::printf("GPU 0: %s, %d SMs, peak %.0f GB/s\n",
              machine.gpus().empty() ? "?" : machine.gpus()[0]->info().label.c_str(), sms, peak);
  nlohmann::json out;

  ProfileOptions o;
  o.warmup = 2;
  o.iters = 20;
  o.sync = sync;
  o.sample_interval_ms = 10;

  // NVML's utilization is an average over a window of 1/6 s or more: each run lasts long enough
  // for several device samples to see the kernel.
  o.iters = 400;
  Profile copy_profile;
  auto copy_report = profile(copy, o, &copy_profile);
  std::printf("%s", copy_report.report().c_str());
  out["copy"] = copy_report;
  check(copy_report.bound == Bound::memory,
        "copy kernel reads MEMORY-bound (" + copy_report.bound_reason + ")");
  check(copy_report.dominant_kernel.find("copy_kernel(") != std::string::npos,
        "copy kernel name demangled: " + copy_report.dominant_kernel);
  EfficiencyOptions e;
  e.sm_count = static_cast<std::uint32_t>(sms);
  e.peak_bandwidth_gbs = peak;
  e.bytes_moved = copy_bytes();
  auto copy_eff = copy_profile.efficiency(e);
  out["copy_efficiency"] = copy_eff;
  if (!copy_eff.empty() && copy_eff[0].bandwidth_pct) {
    double pct = *copy_eff[0].bandwidth_pct;
    check(pct >= 50 && pct <= 100,
          "copy kernel achieved " + std::to_string(*copy_eff[0].achieved_gbs) +
              " GB/s = " + std::to_string(pct) + " % of peak (want 50-100 %)");
  } else {
    check(false, "copy kernel bandwidth could not be scored (no kernels traced or no peak)");
  }

  o.iters = 60;
  auto fma_report = profile(fma, o);
  std::printf("%s", fma_report.report().c_str());
  out["fma"] = fma_report;
  check(fma_report.bound == Bound::compute,
        "FMA kernel reads COMPUTE-bound (" + fma_report.bound_reason + ")");

  ProfileOptions once = o;
  once.iters = 3;
  Profile memcpy_profile;
  auto memcpy_report = profile(memcpy_1g, once, &memcpy_profile);
  std::printf("%s", memcpy_report.report().c_str());
  out["memcpy"] = memcpy_report;
  check(memcpy_report.memcpy_bytes == 3ull << 30,
        "3 × 1 GiB cudaMemcpy traced: " + std::to_string(memcpy_report.memcpy_bytes) + " bytes");
  check(memcpy_report.bound == Bound::memory, "cudaMemcpy reads MEMORY-bound");
  std::printf("host-to-device copy bandwidth: %.1f GB/s\n", memcpy_report.achieved_bandwidth_gbps);

  Profile bad_profile;
  auto bad_report = profile(bad, once, &bad_profile);
  e.bytes_moved = 0;
  auto bad_eff = bad_profile.efficiency(e);
  out["bad_launch_efficiency"] = bad_eff;
  if (!bad_eff.empty()) {
    const auto& k = bad_eff[0];
    std::printf("bad launch: %llu blocks of %u threads, %.3f waves, last wave %.1f %% full\n",
                static_cast<unsigned long long>(k.shape.blocks()),
                k.shape.grid[0] ? k.shape.block[0] : 0, k.waves,
                k.last_wave_fill_pct);
    check(k.shape.blocks() == static_cast<std::uint64_t>(sms) + 1 && k.last_wave_fill_pct < 5,
          "SMs+1 blocks: the last wave is " + std::to_string(k.last_wave_fill_pct) + " % full");
  } else {
    check(false, "bad launch traced");
  }
  auto trace = copy_profile.trace_report();
  check(!trace.regions.empty() && trace.regions[0].path == "iteration",
        "kernels attributed to the iteration span");
  out["copy_trace"] = trace;
  copy_profile.save(std::string(argv[2]) + ".copy-profile.json");
  copy_profile.perfetto(std::string(argv[2]) + ".copy-trace.json");

  std::ofstream(argv[2]) << out.dump(2) << "\n";
  std::printf("RESULT: %s (%d failed)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
