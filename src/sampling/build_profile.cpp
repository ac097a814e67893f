#include "sampling/build_profile.hpp"

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>

namespace mainboard::sampling {

namespace {

struct FrameKey {
  const StackFrame* f;
  bool operator<(const FrameKey& o) const {
    return std::tie(f->function, f->module, f->file, f->line, f->inlined) <
           std::tie(o.f->function, o.f->module, o.f->file, o.f->line, o.f->inlined);
  }
};

}  // namespace

Profile to_profile(SamplerOutput out, std::uint32_t hz, std::int32_t target, bool children,
                   const std::string& perf_map_dir, const PythonSamples* python) {
  Profile p;
  p.pid = target;
  p.sample_hz = hz;
  p.lost_samples = out.lost;
  p.unavailable = out.notes;
  std::map<std::int32_t, std::unique_ptr<Symbolizer>> symbolizers;
  auto symbolizer = [&](std::int32_t pid) -> Symbolizer& {
    auto& s = symbolizers[pid];
    if (!s) {
      s = std::make_unique<Symbolizer>();
      s->set_mappings(out.mappings[pid]);
      std::ifstream map(perf_map_dir + "/perf-" + std::to_string(pid) + ".map");
      if (map) {
        std::stringstream text;
        text << map.rdbuf();
        s->set_jit_symbols(parse_perf_map(text.str()));
      }
    }
    return *s;
  };
  std::map<std::int32_t, std::uint32_t> thread_index;
  std::map<FrameKey, std::uint32_t> frame_index;
  std::map<std::vector<std::uint32_t>, std::uint32_t> stack_index;
  std::deque<StackFrame> frame_store;  // stable addresses for the keys
  std::vector<std::uint32_t> stack;
  std::vector<StackFrame> sample_frames;
  const std::int64_t window_ns = 2 * 1'000'000'000LL / std::max<std::uint32_t>(hz, 1);
  for (const auto& s : out.samples) {
    if (!children && s.pid != target) continue;
    auto [t, fresh] = thread_index.emplace(s.tid, static_cast<std::uint32_t>(p.threads.size()));
    if (fresh) {
      ThreadInfo info;
      info.index = t->second;
      info.tid = s.tid;
      auto name = out.thread_names.find(s.tid);
      info.name = name != out.thread_names.end() ? name->second : "";
      if (s.pid != target) info.name += " (pid " + std::to_string(s.pid) + ")";
      p.threads.push_back(info);
    }
    stack.clear();
    sample_frames.clear();
    auto& sym = symbolizer(s.pid);
    static const std::vector<StackFrame> kernel{{"[kernel]", "[kernel]", "", 0, false}};
    for (std::size_t i = 0; i < s.ips.size(); ++i) {
      // Below a "[kernel]" leaf, the first user address is where the thread entered the kernel
      // (after its system call): a return address like those of the callers.
      const auto& frames = s.ips[i] == kKernelAddress ? kernel : sym.symbolize(s.ips[i], i > 0);
      sample_frames.insert(sample_frames.end(), frames.begin(), frames.end());
    }
    if (python) {
      // The thread's Python stack read nearest in time (within two sampling periods).
      auto module = python->interpreter_module.find(s.pid);
      if (module != python->interpreter_module.end())
        if (const auto* py = python->at(s.tid, s.t_ns, window_ns))
          sample_frames = splice_python(sample_frames, py->frames, py->entries, module->second);
    }
    for (const auto& f : sample_frames) {
      auto it = frame_index.find(FrameKey{&f});
      if (it == frame_index.end()) {
        frame_store.push_back(f);
        it = frame_index
                 .emplace(FrameKey{&frame_store.back()}, static_cast<std::uint32_t>(p.frames.size()))
                 .first;
        p.frames.push_back(f);
      }
      stack.push_back(it->second);
    }
    auto [st, new_stack] = stack_index.emplace(stack, static_cast<std::uint32_t>(p.stacks.size()));
    if (new_stack) p.stacks.push_back(stack);
    p.samples.push_back({s.t_ns, t->second, st->second});
  }
  if (python) {
    p.unavailable.insert(p.unavailable.end(), python->notes.begin(), python->notes.end());
    if (python->dropped)
      p.unavailable.push_back(
          "python: " + std::to_string(python->dropped) + " of " + std::to_string(python->reads) +
          " stack reads changed while they were read and were not used");
  }
  if (!p.samples.empty()) {
    p.start_ns = p.samples.front().t_ns;
    p.end_ns = p.samples.back().t_ns;
  }
  return p;
}

}  // namespace mainboard::sampling
