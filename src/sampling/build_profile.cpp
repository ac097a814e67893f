#include "sampling/build_profile.hpp"

#include "core/text.hpp"

#include <fmt/format.h>

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
  // Each process's JIT symbols, from the perf map its runtime wrote (read once).
  std::map<std::int32_t, std::vector<JitSymbol>> jit_symbols;
  auto jit_of = [&](std::int32_t pid) -> const std::vector<JitSymbol>& {
    auto [it, fresh] = jit_symbols.try_emplace(pid);
    if (fresh) {
      std::ifstream map(perf_map_dir + "/perf-" + std::to_string(pid) + ".map");
      if (map) {
        std::stringstream text;
        text << map.rdbuf();
        it->second = parse_perf_map(text.str());
      }
    }
    return it->second;
  };
  std::map<std::int32_t, std::unique_ptr<Symbolizer>> symbolizers;
  auto symbolizer = [&](std::int32_t pid) -> Symbolizer& {
    auto& s = symbolizers[pid];
    if (!s) {
      s = std::make_unique<Symbolizer>();
      s->set_mappings(out.mappings[pid]);
      s->set_jit_symbols(jit_of(pid));
    }
    return *s;
  };
  std::map<std::int32_t, std::uint32_t> thread_index;
  std::map<FrameKey, std::uint32_t> frame_index;
  std::map<std::vector<std::uint32_t>, std::uint32_t> stack_index;
  std::deque<StackFrame> frame_store;  // stable addresses for the keys
  std::vector<std::uint32_t> stack;
  std::vector<StackFrame> sample_frames;
  const std::int64_t period_ns = 1'000'000'000LL / std::max<std::uint32_t>(hz, 1);

  auto thread_of = [&](std::int32_t pid, std::int32_t tid) {
    auto [t, fresh] = thread_index.emplace(tid, static_cast<std::uint32_t>(p.threads.size()));
    if (fresh) {
      ThreadInfo info;
      info.index = t->second;
      info.tid = tid;
      auto name = out.thread_names.find(tid);
      info.name = name != out.thread_names.end() ? name->second : "";
      if (python)  // a Python thread's own name (threading) over the kernel's
        if (auto py_name = python->thread_names.find(tid); py_name != python->thread_names.end())
          info.name = py_name->second;
      if (pid != target) info.name += " (pid " + std::to_string(pid) + ")";
      info.name = core::valid_utf8(info.name);  // a thread may name itself with any bytes
      p.threads.push_back(info);
    }
    return t->second;
  };
  // A perf sample's frames, innermost first.
  // Each sample's walk, cut where it left the process's code (now that every mapping is known),
  // the longer of its two; the reasons counted.
  std::vector<symbols::WalkStop> stops(out.samples.size(), symbols::WalkStop::none);
  std::map<symbols::WalkStop, std::uint64_t> stopped;
  std::uint64_t walked = 0;
  {
    std::map<std::int32_t, std::unique_ptr<symbols::CodeMap>> code;
    std::vector<std::uint64_t> ips;
    for (std::size_t i = 0; i < out.samples.size(); ++i) {
      auto& s = out.samples[i];
      if (!children && s.pid != target) continue;
      auto& c = code[s.pid];
      if (!c) c = std::make_unique<symbols::CodeMap>(s.pid, out.mappings[s.pid], jit_of(s.pid));
      stops[i] = choose_walk(s, *c, ips);
      s.ips.swap(ips);
      std::vector<std::uint64_t>().swap(s.unwound);
      std::vector<bool>().swap(s.activations);
      ++walked;
      if (stops[i] != symbols::WalkStop::none) ++stopped[stops[i]];
    }
  }
  auto native_of = [&](std::size_t index, std::vector<StackFrame>& frames) {
    const auto& s = out.samples[index];
    frames.clear();
    auto& sym = symbolizer(s.pid);
    static const std::vector<StackFrame> kernel{{"[kernel]", "[kernel]", "", 0, false}};
    for (std::size_t i = 0; i < s.ips.size(); ++i) {
      // Below a "[kernel]" leaf, the first user address is where the thread entered the kernel
      // (after its system call): a return address like those of the callers.
      const auto& f = s.ips[i] == kKernelAddress ? kernel : sym.symbolize(s.ips[i], i > 0);
      frames.insert(frames.end(), f.begin(), f.end());
    }
    if (stops[index] != symbols::WalkStop::none)
      frames.push_back({symbols::kWalkStoppedFrame, symbols::kWalkStoppedModule, "", 0, false});
  };
  auto add = [&](std::int64_t t_ns, std::uint32_t thread, const std::vector<StackFrame>& frames) {
    stack.clear();
    for (const auto& f : frames) {
      auto it = frame_index.find(FrameKey{&f});
      if (it == frame_index.end()) {
        frame_store.push_back(f);
        it =
            frame_index
                .emplace(FrameKey{&frame_store.back()}, static_cast<std::uint32_t>(p.frames.size()))
                .first;
        p.frames.push_back(f);
        // Names read from another process (a torn read, a Latin-1 file name) may be any bytes;
        // the profile is JSON, which carries text only.
        auto& kept = p.frames.back();
        for (std::string* text : {&kept.function, &kept.module, &kept.file})
          if (!core::is_valid_utf8(*text)) *text = core::valid_utf8(*text);
      }
      stack.push_back(it->second);
    }
    auto [st, new_stack] = stack_index.emplace(stack, static_cast<std::uint32_t>(p.stacks.size()));
    if (new_stack) p.stacks.push_back(stack);
    p.samples.push_back({t_ns, thread, st->second});
  };
  auto module_of = [&](std::int32_t pid) -> const std::string* {
    if (!python) return nullptr;
    auto m = python->interpreter_module.find(pid);
    return m == python->interpreter_module.end() ? nullptr : &m->second;
  };
  // Wall-clock: each Python thread's reads are its samples (running or waiting); its on-CPU
  // samples only lend their native frames to the read they fall next to.
  bool wall = python && python->wall;
  std::map<std::int32_t, std::vector<std::pair<std::int64_t, std::size_t>>> on_cpu;

  for (std::size_t i = 0; i < out.samples.size(); ++i) {
    const auto& s = out.samples[i];
    if (!children && s.pid != target) continue;
    if (wall && python->threads.count(s.tid) && module_of(s.pid)) {
      on_cpu[s.tid].emplace_back(s.t_ns, i);
      continue;
    }
    if (python && python->gil) continue;  // only the GIL's holder, at the reads, is sampled
    auto thread = thread_of(s.pid, s.tid);
    native_of(i, sample_frames);
    if (const auto* module = module_of(s.pid))
      // The thread's Python stack read nearest in time: within two sampling periods, or 20 ms
      // when that is longer (a busy machine delays the reads more than a fast rate allows).
      if (const auto* py =
              python->at(s.tid, s.t_ns, std::max<std::int64_t>(2 * period_ns, 20'000'000)))
        sample_frames = splice_python(sample_frames, py->frames, py->entries, *module);
    add(s.t_ns, thread, sample_frames);
  }
  if (wall) {
    for (const auto& [tid, reads] : python->threads) {
      auto pid = python->thread_process.at(tid);
      if (!children && pid != target) continue;
      const auto* module = module_of(pid);
      if (!module) continue;
      auto thread = thread_of(pid, tid);
      auto& cpu = on_cpu[tid];
      for (const auto& [t_ns, index] : reads) {
        const auto& py = python->stacks[index];
        // An on-CPU sample within half a period: the thread ran then, with these native frames.
        auto near = std::lower_bound(cpu.begin(), cpu.end(),
                                     std::pair{t_ns - period_ns / 2, std::size_t{0}});
        if (near != cpu.end() && near->first <= t_ns + period_ns / 2) {
          native_of(near->second, sample_frames);
          add(t_ns, thread, splice_python(sample_frames, py.frames, py.entries, *module));
        } else {
          add(t_ns, thread, py.frames);
        }
      }
    }
    std::stable_sort(p.samples.begin(), p.samples.end(),
                     [](const StackSample& a, const StackSample& b) { return a.t_ns < b.t_ns; });
  }
  if (python && python->gil)
    p.unavailable.push_back(
        "gil: only the thread holding the GIL at each tick was sampled (other threads, and "
        "ticks when no thread held it, have no samples)");
  else if (wall)
    for (const auto& t : p.threads)
      if (!python->threads.count(static_cast<std::int32_t>(t.tid))) {
        p.unavailable.push_back(
            "wall: threads without Python frames are sampled while on a CPU only");
        break;
      }
  if (!stopped.empty()) {
    std::uint64_t all = 0;
    std::string why;
    for (const auto& [reason, n] : stopped) {
      all += n;
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, symbols::to_string(reason));
    }
    p.unavailable.push_back(fmt::format(
        "native stacks: {} of {} samples were cut where the walk left the program's code ({}): "
        "what the stack held beyond is no frame; they end in {}",
        all, walked, why, symbols::kWalkStoppedFrame));
  }
  if (python) {
    p.unavailable.insert(p.unavailable.end(), python->notes.begin(), python->notes.end());
    if (python->dropped)
      p.unavailable.push_back(
          "python: " + std::to_string(python->dropped) + " of " + std::to_string(python->reads) +
          " reads of the threads did not hold together (a thread starting or ending under the "
          "read) and were not used");
    if (python->counts.stacks_dropped)
      p.unavailable.push_back(
          "python: " + std::to_string(python->counts.stacks_dropped) + " of " +
          std::to_string(python->counts.stack_reads) +
          " thread stacks changed under every read (and the thread was not stopped for one) and "
          "were left out");
    if (python->counts.stacks_stopped)
      p.unavailable.push_back(fmt::format(
          "python: {} of {} thread stacks changed faster than they could be read, and were read "
          "with their thread stopped ({:.0f} us each on average; --nonblocking never stops it)",
          python->counts.stacks_stopped, python->counts.stack_reads,
          static_cast<double>(python->counts.stopped_ns) / 1e3 /
              static_cast<double>(std::max<std::uint64_t>(python->counts.stacks_stopped, 1))));
  }
  if (!p.samples.empty()) {
    p.start_ns = p.samples.front().t_ns;
    p.end_ns = p.samples.back().t_ns;
  }
  return p;
}

}  // namespace mainboard::sampling
