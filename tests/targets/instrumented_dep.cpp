// A shared library compiled with -finstrument-functions whose module is not named: its
// functions must not become spans.
extern "C" __attribute__((noinline)) int dep_helper(int x) {
  return x * 2;
}
extern "C" int dep_work(int x) {
  return dep_helper(x) + 1;
}
