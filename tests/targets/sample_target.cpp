// A program with known behaviour for the sampling tests.
//   sample_target hot S      two threads, each ~70 % of S in hot_a (through the inlined
//                            inner_step) and ~30 % in hot_b; exits 3
//   sample_target spans S    the same inside spans ("work/a", "work/b"), no Profiler of its own
//   sample_target crash      spins 0.3 s, then dies of SIGSEGV
//   sample_target forever    spins until killed
//   sample_target fork S     a child process runs hot_c for S while the parent runs hot_a
//   sample_target syscalls S  reads /dev/zero in 1 MiB blocks for S from zero_reader (almost all
//                            of it kernel time: clearing the buffer)
//   sample_target work N     a fixed amount of work (N million steps) on one thread; prints the
//                            seconds it took (for the overhead benchmark)
//   sample_target threads N  N threads asleep in parked(), then "ready" on stdout; sleeps until
//                            killed
//   sample_target garbage S  S seconds of CPU time in garbage_fp (at most 10 S of the clock, 30 s
//                            at least: a loaded machine gives it less CPU a second, and the
//                            test counts samples of its CPU time), a loop that keeps a data
//                            address in rbp
//                            (as code without frame pointers may): walks along frame pointers
//                            read on through a "chain" of 0x5, 0x1 … or of an address that
//                            follows no call (x86-64; elsewhere an ordinary loop)
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "mainboard/span.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// This process's CPU time, all threads, in seconds.
double cpu_now() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

volatile double g_sink;

__attribute__((always_inline)) inline double inner_step(double x) {
  for (int i = 0; i < 2000; ++i)
    x = x * 1.0000001 + 1e-9;
  return x;
}

}  // namespace

extern "C" __attribute__((noinline)) void hot_a(double until) {
  double x = 1;
  while (now() < until)
    x = inner_step(x);
  g_sink = x;
}

extern "C" __attribute__((noinline)) void hot_b(double until) {
  double x = 1;
  while (now() < until)
    for (int i = 0; i < 2000; ++i)
      x = x * 0.9999999 + 1e-9;
  g_sink = x;
}

extern "C" __attribute__((noinline)) double fixed_work(long steps) {
  double x = 1;
  for (long i = 0; i < steps; ++i)
    x = x * 1.0000001 + 1e-9;
  return x;
}

extern "C" __attribute__((noinline)) void zero_reader(double until) {
  static char buffer[1 << 20];
  int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  while (now() < until)
    if (::read(fd, buffer, sizeof buffer) < 0) break;
  ::close(fd);
}

extern "C" __attribute__((noinline)) void hot_c(double until) {
  double x = 1;
  while (now() < until)
    for (int i = 0; i < 2000; ++i)
      x = x * 1.0000002 - 1e-9;
  g_sink = x;
}

#if defined(__x86_64__)
namespace {
// Two fake chains of (next frame, return address) pairs: one of small integers, one whose first
// "return address" is the start of hot_b (code, but after no call).
std::uintptr_t g_chain_numbers[6], g_chain_code[6];
}  // namespace

extern "C" __attribute__((noinline)) void garbage_fp(long spins, int which) {
  std::uintptr_t* chain = which ? g_chain_code : g_chain_numbers;
  chain[0] = reinterpret_cast<std::uintptr_t>(&chain[2]);
  chain[1] = which ? reinterpret_cast<std::uintptr_t>(&hot_b) : 0x5;
  chain[2] = reinterpret_cast<std::uintptr_t>(&chain[4]);
  chain[3] = 0x1;
  chain[4] = 0;
  chain[5] = 0xd;
  // rbp holds the chain while the loop spins (saved in r11, put back after).
  __asm__ volatile(
      "mov %%rbp, %%r11\n\t"
      "mov %1, %%rbp\n\t"
      "1: dec %0\n\t"
      "jnz 1b\n\t"
      "mov %%r11, %%rbp\n\t"
      : "+r"(spins)
      : "r"(chain)
      : "r11", "cc", "memory");
}
#else
extern "C" __attribute__((noinline)) void garbage_fp(long spins, int) {
  volatile long n = spins;
  while (n > 0)
    n = n - 1;
}
#endif

namespace {

void worker(double seconds, bool spans) {
  double t = now();
  if (spans) {
    MAINBOARD_SPAN("work");
    {
      MAINBOARD_SPAN("a");
      hot_a(t + 0.7 * seconds);
    }
    MAINBOARD_SPAN("b");
    hot_b(t + seconds);
  } else {
    hot_a(t + 0.7 * seconds);
    hot_b(t + seconds);
  }
}

/// Where the threads of `threads N` sleep: a frame of this program's own under the sleep.
[[gnu::noinline]] void parked() {
  for (;;)
    ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
  if (mode == "hot" || mode == "spans") {
    bool spans = mode == "spans";
    std::thread a(worker, seconds, spans), b(worker, seconds, spans);
    a.join();
    b.join();
    std::puts("sample_target done");
    return 3;
  }
  if (mode == "garbage") {
    double cpu_until = cpu_now() + seconds, until = now() + std::max(10 * seconds, 30.0);
    for (int which = 0; cpu_now() < cpu_until && now() < until; which ^= 1)
      garbage_fp(20'000'000, which);
    return 0;
  }
  if (mode == "syscalls") {
    zero_reader(now() + seconds);
    return 0;
  }
  if (mode == "work") {
    double start = now();
    g_sink = fixed_work(static_cast<long>(seconds * 1e6));
    std::printf("elapsed %.6f\n", now() - start);
    return 0;
  }
  if (mode == "crash") {
    // Half a second of the target's own CPU time in hot_a, however loaded the machine: a wall
    // deadline let a sanitizer's start-up outweigh hot_a when the run got little CPU.
    for (double cpu_until = cpu_now() + 0.5, until = now() + 30;
         cpu_now() < cpu_until && now() < until;)
      hot_a(now() + 0.01);
    std::signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would turn the crash into an abort
    std::raise(SIGSEGV);
    return 0;
  }
  if (mode == "forever") {
    for (;;)
      hot_a(now() + 1.0);
  }
  if (mode == "threads") {
    auto n = static_cast<int>(seconds);
    for (int i = 0; i < n; ++i)
      std::thread(parked).detach();
    std::puts("ready");
    std::fflush(stdout);
    parked();
  }
  if (mode == "fork") {
    pid_t child = ::fork();
    if (child == 0) {
      hot_c(now() + seconds);
      std::_Exit(0);
    }
    hot_a(now() + seconds);
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return 2;
}
