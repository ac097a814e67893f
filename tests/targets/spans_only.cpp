// The span library's contract, as a program that only writes spans uses it: two headers, one
// library (mainboard::spans), a default session, a saved profile.
//   spans_only PROFILE.json
#include <mainboard/profiler.hpp>
#include <mainboard/span.hpp>

#include <thread>

namespace {

int work(int n) {
  MAINBOARD_SPAN("work");
  int sum = 0;
  for (int i = 0; i < n; ++i)
    sum += i % 7;
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  mainboard::Profiler p;
  int sum = 0;
  for (int i = 0; i < 100; ++i) {
    MAINBOARD_SPAN("step");
    sum += work(1000);
  }
  std::thread([&] {
    MAINBOARD_SPAN("worker");
    sum += work(10);
  }).join();
  auto token = p.enter("named at run time");
  p.exit(token);
  p.result().save(argv[1]);
  return sum > 0 ? 0 : 1;
}
