// A program with known spans on three threads: writes its profile and its Perfetto trace.
//   span_workload TRACE.json PROFILE.json
#include <chrono>
#include <thread>
#include <vector>

#include "mainboard/profiler.hpp"

namespace {
void busy(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

void train(int steps) {
  for (int i = 0; i < steps; ++i) {
    MAINBOARD_SPAN("step");
    {
      MAINBOARD_SPAN("forward");
      busy(std::chrono::microseconds(300));
    }
    {
      MAINBOARD_SPAN("backward");
      busy(std::chrono::microseconds(500));
      MAINBOARD_SPAN("allreduce");
      busy(std::chrono::microseconds(100));
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  mainboard::Collection c;
  c.features = mainboard::Feature::spans;
  mainboard::Profiler profiler(c);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) threads.emplace_back(train, 5);
  train(5);
  for (auto& t : threads) t.join();
  const auto& profile = profiler.result();
  profile.perfetto(argv[1]);
  profile.save(argv[2]);
  return 0;
}
