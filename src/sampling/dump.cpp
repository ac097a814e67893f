// Sampler::dump: one stack of every thread of a live process, like eu-stack. libdwfl attaches
// with ptrace, unwinds each thread (CFI, falling back to frame pointers), and detaches when the
// Dwfl ends; signals that would end us mid-way are held off until then, so the process is always
// let go again.
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/sampler.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard {

namespace {

std::string explain_ptrace(int error, std::int64_t pid) {
  std::string scope =
      std::string(core::trim(symbols::read_proc_file("/proc/sys/kernel/yama/ptrace_scope")));
  std::string text = "cannot attach to process " + std::to_string(pid) + " with ptrace (" +
                     std::strerror(error) + ")";
  if (error == EPERM || error == EACCES) {
    if (!scope.empty() && scope != "0")
      text += ": kernel.yama.ptrace_scope is " + scope +
              "; allow it with `sysctl kernel.yama.ptrace_scope=0`, or run as root / with "
              "CAP_SYS_PTRACE";
    else
      text +=
          ": the process belongs to another user, or is already traced (by a debugger or a "
          "profiler)";
  }
  return text;
}

}  // namespace

std::string StackDump::text() const {
  std::string out = fmt::format("PID {}\n", pid);
  for (const auto& t : threads) {
    out += fmt::format("TID {}{}:\n", t.tid, t.name.empty() ? "" : " (" + t.name + ")");
    for (std::size_t i = 0; i < t.frames.size(); ++i) {
      const auto& f = t.frames[i];
      out += fmt::format("#{:<2} {}{}", i, f.function, f.inlined ? " (inlined)" : "");
      if (!f.module.empty()) out += " - " + f.module;
      if (!f.file.empty()) out += fmt::format("\n    {}:{}", f.file, f.line);
      out += "\n";
    }
  }
  return out;
}

StackDump Sampler::dump(std::int64_t pid) {
  if (pid <= 0) throw Error("no process " + std::to_string(pid));
  std::string maps = symbols::read_proc_file("/proc/" + std::to_string(pid) + "/maps");
  if (maps.empty())
    throw Error("process " + std::to_string(pid) + " does not exist, or its maps cannot be read");

  // Hold off the signals that would end us while threads are stopped under ptrace.
  sigset_t block, previous;
  sigemptyset(&block);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
    sigaddset(&block, s);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};

  std::unique_ptr<Dwfl, void (*)(Dwfl*)> dwfl(symbols::begin_dwfl(),
                                              dwfl_end);  // dwfl_end detaches
  if (!dwfl) throw Error("libdwfl could not start");
  if (dwfl_linux_proc_report(dwfl.get(), static_cast<pid_t>(pid)) != 0 ||
      dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0)
    throw Error("cannot read the modules of process " + std::to_string(pid) + ": " +
                dwfl_errmsg(-1));
  if (int e = dwfl_linux_proc_attach(dwfl.get(), static_cast<pid_t>(pid), false); e != 0)
    throw Error(e > 0 ? explain_ptrace(e, pid) : std::string("cannot attach: ") + dwfl_errmsg(-1));

  symbols::Symbolizer symbolizer;
  symbolizer.set_mappings(symbols::parse_maps(maps));
  StackDump dump;
  dump.pid = pid;
  struct Context {
    symbols::Symbolizer* symbolizer;
    StackDump* dump;
    std::int64_t pid;
  } context{&symbolizer, &dump, pid};

  auto on_thread = [](Dwfl_Thread* thread, void* arg) -> int {
    auto* c = static_cast<Context*>(arg);
    ThreadStack t;
    t.tid = dwfl_thread_tid(thread);
    t.name = std::string(core::trim(symbols::read_proc_file(
        "/proc/" + std::to_string(c->pid) + "/task/" + std::to_string(t.tid) + "/comm")));
    struct FrameContext {
      symbols::Symbolizer* symbolizer;
      ThreadStack* thread;
      int depth = 0;
    } fc{c->symbolizer, &t};
    auto frame_cb = [](Dwfl_Frame* frame, void* arg2) -> int {
      auto* f = static_cast<FrameContext*>(arg2);
      Dwarf_Addr pc = 0;
      bool activation = false;
      if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
      for (const auto& fr : f->symbolizer->symbolize(pc, !activation))
        f->thread->frames.push_back(fr);
      return ++f->depth >= 256 ? DWARF_CB_ABORT : DWARF_CB_OK;
    };
    dwfl_thread_getframes(thread, frame_cb, &fc);  // a partial stack is still worth showing
    c->dump->threads.push_back(std::move(t));
    return DWARF_CB_OK;
  };
  if (dwfl_getthreads(dwfl.get(), on_thread, &context) != 0 && dump.threads.empty())
    throw Error("cannot unwind process " + std::to_string(pid) + ": " + dwfl_errmsg(-1));
  std::sort(dump.threads.begin(), dump.threads.end(),
            [](const ThreadStack& a, const ThreadStack& b) { return a.tid < b.tid; });
  return dump;
}

}  // namespace mainboard
