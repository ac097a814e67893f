// What a spans-only program pays for the span library, as one program built twice: against
// mainboard::spans (spans_footprint) and against mainboard::mainboard (spans_footprint_full).
//   spans_footprint session N     N sessions of 2000 spans from start to saved file: the median
//   spans_footprint threads N     memory mapped for N threads that each store one span
// scripts/spans-footprint.sh runs both builds side by side and adds their dependencies.
#include <mainboard/profiler.hpp>
#include <mainboard/span.hpp>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

long resident_kib() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

int sessions(int n) {
  auto file = std::filesystem::temp_directory_path() / ("mainboard-footprint-" + std::to_string(::getpid()) + ".json");
  std::vector<double> us;
  for (int r = 0; r < n; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    {
      mainboard::Profiler p;  // the defaults, as a program would write it
      for (int i = 0; i < 1000; ++i) {
        MAINBOARD_SPAN("step");
        MAINBOARD_SPAN("inner");
      }
      p.result().save(file);
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::filesystem::remove(file);
  std::sort(us.begin(), us.end());
  std::printf("session_to_file_us %.0f\n", us[us.size() / 2]);
  return 0;
}

int threads(int n) {
  mainboard::Profiler p({.features = mainboard::Feature::spans});
  std::barrier started(n + 1), stored(n + 1), done(n + 1);
  std::vector<std::thread> pool;
  for (int i = 0; i < n; ++i)
    pool.emplace_back([&] {
      started.arrive_and_wait();
      { MAINBOARD_SPAN("one"); }
      stored.arrive_and_wait();
      done.arrive_and_wait();
    });
  started.arrive_and_wait();  // every thread exists (its stack is mapped) before we measure
  long before = resident_kib();
  stored.arrive_and_wait();
  long after = resident_kib();
  done.arrive_and_wait();
  for (auto& t : pool)
    t.join();
  const auto r = p.result();
  std::printf("threads %d spans %zu resident_kib %ld\n", n, r.spans.size(), after - before);
  return r.spans.size() == static_cast<std::size_t>(n) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "session";
  int n = argc > 2 ? std::atoi(argv[2]) : (mode == "threads" ? 256 : 15);
  if (n <= 0) return 2;
  return mode == "threads" ? threads(n) : sessions(n);
}
