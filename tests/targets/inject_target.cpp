// A stand-in for a CUDA program under `profile run`: it does what the CUDA driver does with
// CUDA_INJECTION64_PATH (load the library, call InitializeInjection), then "runs" two kernels
// through the fake CUPTI's hooks and exits normally.
//   inject_target LIBINJECT.so LIBFAKECUPTI.so
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  void* inject = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!inject) {
    std::fprintf(stderr, "%s\n", ::dlerror());
    return 3;
  }
  auto* init = reinterpret_cast<int (*)()>(::dlsym(inject, "InitializeInjection"));
  if (!init || init() != 1) return 4;
  void* cupti = ::dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!cupti) return 5;
  auto* now = reinterpret_cast<std::uint64_t (*)()>(::dlsym(cupti, "fake_cupti_now"));
  using Kernel = void(const char*, std::uint64_t, std::uint64_t, std::uint32_t, std::uint32_t,
                      std::uint16_t, std::int32_t, std::uint32_t);
  auto* kernel = reinterpret_cast<Kernel*>(::dlsym(cupti, "fake_cupti_kernel"));
  if (!now || !kernel) return 6;
  for (int i = 0; i < 2; ++i) {
    auto start = now();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kernel("_Z7stencilPKfPfi", start, now(), 528, 128, 64, 4096, 13);
  }
  std::puts("target done");
  return 0;  // the injection library writes its profile at exit
}
