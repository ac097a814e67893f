#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "mainboard/machine.hpp"
#include "test_util.hpp"

/// Points the NVIDIA provider at the fake driver libraries and a scenario. The fake libcuda,
/// like the real one, reads CUDA_VISIBLE_DEVICES from the process environment, so those are set
/// for the process as well as passed in the machine's environment (which the NVML-only path
/// reads). Restores everything at the end of the test.
enum class FakeNvml { full, minimal, missing };

struct FakeGpuSetup {
  FakeNvml nvml = FakeNvml::full;
  bool cuda = true;
  std::optional<std::string> visible;  // CUDA_VISIBLE_DEVICES
  std::optional<std::string> order;    // CUDA_DEVICE_ORDER
  std::optional<std::string> caller;   // "UUID=BYTES": this process on that GPU
  bool no_processes = false;           // a driver that does not list processes
};

struct FakeGpus {
  using Nvml = FakeNvml;
  using Setup = FakeGpuSetup;

  explicit FakeGpus(const std::string& scenario, Setup setup = {}) {
    std::string path = std::string(MAINBOARD_FIXTURES) + "/gpus/" + scenario + ".json";
    ::setenv("MAINBOARD_FAKE_GPU_SCENARIO", path.c_str(), 1);
    env["MAINBOARD_NVML_LIBRARY"] = setup.nvml == Nvml::full ? MAINBOARD_FAKE_NVML
                                    : setup.nvml == Nvml::minimal
                                        ? MAINBOARD_FAKE_NVML_MINIMAL
                                        : "/nonexistent/libnvidia-ml.so.1";
    env["MAINBOARD_CUDA_LIBRARY"] = setup.cuda ? MAINBOARD_FAKE_CUDA : "/nonexistent/libcuda.so.1";
    set("CUDA_VISIBLE_DEVICES", setup.visible);
    set("CUDA_DEVICE_ORDER", setup.order);
    set("MAINBOARD_FAKE_GPU_CALLER", setup.caller);
    set("MAINBOARD_FAKE_GPU_NO_PROCESSES",
        setup.no_processes ? std::optional<std::string>("1") : std::nullopt);
  }
  ~FakeGpus() {
    ::unsetenv("MAINBOARD_FAKE_GPU_SCENARIO");
    ::unsetenv("MAINBOARD_FAKE_GPU_CALLER");
    ::unsetenv("MAINBOARD_FAKE_GPU_NO_PROCESSES");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    ::unsetenv("CUDA_DEVICE_ORDER");
  }
  FakeGpus(const FakeGpus&) = delete;
  FakeGpus& operator=(const FakeGpus&) = delete;

  /// Options for a machine over the gpu-procs fixture host (process names) with these drivers.
  mainboard::Machine::Options options() const {
    mainboard::Machine::Options o;
    o.sysroot = fixture_host("gpu-procs");
    o.environment = env;
    return o;
  }

  std::map<std::string, std::string> env;

 private:
  void set(const char* name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name, value->c_str(), 1);
      env[name] = *value;
    } else {
      ::unsetenv(name);
    }
  }
};
