// A program compiled with -finstrument-functions: its own functions become spans through
// Profiler::auto_instrument, those of the shared library it calls (not named) do not.
//   instrumented PROFILE.json
#include <chrono>
#include <thread>

#include "mainboard/profiler.hpp"

extern "C" int dep_work(int);  // instrumented_dep.cpp, another module

namespace {

__attribute__((noinline)) int leaf_step(int i) {
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return dep_work(i) + 1;
}

__attribute__((noinline)) int outer_loop() {
  int sum = 0;
  for (int i = 0; i < 3; ++i)
    sum += leaf_step(i);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  mainboard::Profiler p(mainboard::Collection{.features = mainboard::Feature::spans});
  p.auto_instrument({"instrumented"});
  int sum = outer_loop();
  p.auto_instrument({});
  outer_loop();  // after turning it off: not recorded
  p.stop();
  p.result().save(argv[1]);
  return sum > 0 ? 0 : 1;
}
