// Native and Python stacks as one: the interpreter's evaluation frames of a native stack replaced
// by the Python frames they ran, and the Python stack of a thread nearest a sample's time.
#include <algorithm>
#include <cstdlib>

#include "sampling/python_frames.hpp"
#include "symbols/code_map.hpp"

namespace mainboard::sampling {

bool is_python_eval(const StackFrame& f) {
  return f.function == "_PyEval_EvalFrameDefault" || f.function == "_PyEval_EvalFrame";
}

namespace {

/// Where a thread starts: the C library's frames below `main` and a thread's start routine.
bool is_thread_start(const StackFrame& f) {
  return f.function == "__libc_start_call_main" || f.function == "__libc_start_main" ||
         f.function == "start_thread" || f.function == "thread_start";
}

/// The frames a thread's stack ends in, under all it ran: its start, and the program's entry
/// and the system call that made the thread, below those.
bool is_thread_base(const StackFrame& f) {
  return is_thread_start(f) || f.function == "_start" || f.function == "clone" ||
         f.function == "clone3" || f.function == "__clone" || f.function == "__clone3";
}

/// A chain that reaches its thread's start through no frame of the interpreter (nor an address
/// of no module, what a walk gone astray finds): the thread is not in the interpreter, whatever
/// Python stack was read beside the sample.
bool runs_no_python(const std::vector<StackFrame>& native, const std::string& interpreter_module) {
  for (const auto& f : native) {
    if (f.module == interpreter_module || f.module == "[unknown]") return false;
    if (is_thread_start(f)) return true;
  }
  return false;
}

}  // namespace

std::vector<StackFrame> splice_python(const std::vector<StackFrame>& native,
                                      const std::vector<StackFrame>& python,
                                      const std::vector<bool>& entries,
                                      const std::string& interpreter_module,
                                      std::vector<std::size_t>* origin) {
  if (origin) origin->clear();
  if (python.empty()) {
    if (origin)
      for (std::size_t i = 0; i < native.size(); ++i)
        origin->push_back(i);
    return native;
  }
  // Python frames in groups, one per run of the evaluation loop, innermost first.
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  for (std::size_t i = 0, begin = 0; i < python.size(); ++i)
    if (entries[i] || i + 1 == python.size()) {
      groups.emplace_back(begin, i + 1);
      begin = i + 1;
    }
  bool any_eval = std::any_of(native.begin(), native.end(), is_python_eval);
  if (!any_eval && runs_no_python(native, interpreter_module)) {
    // The Python stack was read a moment before or after this sample, while the thread ran
    // Python; now it does not (it left the interpreter: exit handlers, a thread's end).
    if (origin)
      for (std::size_t i = 0; i < native.size(); ++i)
        origin->push_back(i);
    return native;
  }
  std::vector<StackFrame> out;
  std::size_t next = 0;
  auto put = [&](std::size_t g) {
    out.insert(out.end(), python.begin() + static_cast<long>(groups[g].first),
               python.begin() + static_cast<long>(groups[g].second));
    if (origin) origin->resize(out.size(), kPythonFrame);
  };
  for (std::size_t i = 0; i < native.size(); ++i) {
    const auto& f = native[i];
    if (next == groups.size() && !groups.empty()) break;  // below the outermost Python frame
    if (is_thread_base(f) || f.module == symbols::kWalkStoppedModule) {
      // The thread's base (or where the walk was cut) with Python frames still to place: the
      // native stack showed fewer runs of the evaluation loop than the Python stack has (it was
      // read a moment apart, or the walk stopped short). They go here, above the base: the
      // program's entry is never inside a Python stack, and the Python frames say what the cut
      // walk could not.
      break;
    }
    if (any_eval && is_python_eval(f)) {
      // The evaluation frames are one per group; where the native stack shows fewer (a chain
      // cut short), the outer groups go under the last one.
      put(next++);
      continue;
    }
    // The interpreter's glue between evaluation frames, and addresses no module covers (what a
    // frame-pointer walk through an interpreter built without them finds): left out. With no
    // evaluation frame in sight, the walk is cut there and the Python frames take over.
    if (f.module == interpreter_module || f.module == "[unknown]") {
      if (!any_eval) break;
      continue;
    }
    out.push_back(f);
    if (origin) origin->push_back(i);
  }
  while (next < groups.size())
    put(next++);
  return out;
}

const PythonSamples::Stack* PythonSamples::at(std::int32_t tid, std::int64_t t_ns,
                                              std::int64_t window_ns) const {
  auto it = threads.find(tid);
  if (it == threads.end() || it->second.empty()) return nullptr;
  const auto& v = it->second;
  auto after = std::lower_bound(v.begin(), v.end(), std::pair{t_ns, std::uint32_t{0}});
  const std::pair<std::int64_t, std::uint32_t>* best = nullptr;
  if (after != v.end()) best = &*after;
  if (after != v.begin()) {
    auto before = std::prev(after);
    if (!best || t_ns - before->first < best->first - t_ns) best = &*before;
  }
  if (!best || std::llabs(best->first - t_ns) > window_ns) return nullptr;
  return &stacks[best->second];
}

}  // namespace mainboard::sampling
