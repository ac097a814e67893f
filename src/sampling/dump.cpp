// Sampler::dump: one stack of every thread of a live process, like eu-stack. libdwfl attaches
// with ptrace, unwinds each thread (CFI, falling back to frame pointers), and detaches when the
// Dwfl ends; signals that would end us mid-way are held off until then, so the process is always
// let go again.
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/interrupts.hpp"
#include "core/text.hpp"
#include "mainboard/error.hpp"
#include "mainboard/json.hpp"
#include "mainboard/sampler.hpp"
#include "sampling/python_frames.hpp"
#include "symbols/code_map.hpp"
#include "symbols/libdw.hpp"
#include "symbols/symbolizer.hpp"

namespace mainboard {

namespace {

/// What /proc/PID/task/TID/stat says the thread is doing, in words.
std::string thread_state(std::int64_t pid, std::int64_t tid) {
  char state = symbols::thread_state(pid, tid);
  if (!state) return "";
  switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "disk sleep";
    case 'T': return "stopped";
    case 't': return "tracing stop";
    case 'Z': return "zombie";
    case 'I': return "idle";
    case 'X': return "dead";
    default: return std::string(1, state);
  }
}

/// What a sleeping thread waits for, from the system call it sits in (/proc/…/syscall): "lock",
/// "sleep", "I/O", "child" or "signal"; empty when it is in none of those (or not in one).
std::string wait_reason(std::int64_t pid, std::int64_t tid) {
  auto text = symbols::read_proc_file("/proc/" + std::to_string(pid) + "/task/" +
                                      std::to_string(tid) + "/syscall");
  // "NR arg1 arg2 … sp pc", the arguments in hex.
  auto words = core::split_ws(text);
  auto nr = words.empty() ? std::nullopt : core::parse_u64(words[0]);
  if (!nr) return "";
  auto arg = [&](std::size_t i) -> std::uint64_t {
    if (i >= words.size() || words[i].substr(0, 2) != "0x") return 1;
    return core::parse_u64_base(words[i].substr(2), 16).value_or(1);
  };
  switch (static_cast<long>(*nr)) {
    case SYS_futex: return "lock";
    case SYS_pselect6:
#ifdef SYS_select
    case SYS_select:
#endif
      return arg(1) == 0 ? "sleep" : "I/O";  // no descriptors: how 3.9/3.10 sleep
    case SYS_ppoll:
#ifdef SYS_poll
    case SYS_poll:
#endif
      return arg(2) == 0 ? "sleep" : "I/O";
    case SYS_nanosleep:
    case SYS_clock_nanosleep: return "sleep";
    case SYS_read:
    case SYS_readv:
    case SYS_pread64:
    case SYS_write:
    case SYS_epoll_pwait:
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_accept4:
    case SYS_connect:
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
    case SYS_accept:
#endif
      return "I/O";
    case SYS_wait4:
    case SYS_waitid: return "child";
    case SYS_rt_sigtimedwait:
    case SYS_rt_sigsuspend:
#ifdef SYS_pause
    case SYS_pause:
#endif
      return "signal";
    default: return "";
  }
}

/// The thread's state, and for a sleeping one what it waits for when its system call says.
std::string thread_activity(std::int64_t pid, std::int64_t tid) {
  auto state = thread_state(pid, tid);
  if (state == "sleeping" || state == "disk sleep")
    if (auto why = wait_reason(pid, tid); !why.empty()) return "waiting (" + why + ")";
  return state;
}

std::string thread_name(std::int64_t pid, std::int64_t tid) {
  return std::string(core::trim(symbols::read_proc_file("/proc/" + std::to_string(pid) + "/task/" +
                                                        std::to_string(tid) + "/comm")));
}

/// A signal (Ctrl-C, SIGTERM, SIGHUP) arrived since the dump began.
bool interrupted() {
  return detail::g_interrupts.count.load(std::memory_order_relaxed) > 0;
}

[[noreturn]] void throw_interrupted(std::int64_t pid) {
  int sig = detail::g_interrupts.signal.load();
  throw Interrupted(fmt::format("interrupted by SIG{} before the stacks of process {} were read "
                                "(it was let go)",
                                sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", pid),
                    sig);
}

/// Reads every Python thread's stack (or only which threads there are), again while the list of
/// threads does not hold together (the process runs on while we read); false after `tries` or
/// on a signal. A thread whose stack changed under the read is read again, then (unless
/// `nonblocking`) with that thread stopped; one still torn is said in `unavailable` and shown
/// without frames.
bool read_python(sampling::PythonReader& py, std::vector<sampling::PyThreadStack>& threads,
                 int tries, bool with_frames = true, bool nonblocking = false,
                 std::vector<std::string>* unavailable = nullptr) {
  if (!with_frames) {
    for (int i = 0; i < tries && !interrupted(); ++i)
      if (py.read(threads, false)) return true;
    return false;
  }
  if (interrupted()) return false;
  // As the sampler reads, more patiently: twenty more reads of a torn stack before its thread is
  // stopped for one.
  sampling::StackReads reads({tries, 20, !nonblocking, 0});
  if (!reads.read(py, threads)) return false;
  const auto& refused = reads.refused();
  for (const auto& t : threads)
    if (t.torn && unavailable)
      unavailable->push_back(
          "python: the stack of thread " + std::to_string(t.tid) + " changed under every read" +
          (nonblocking ? ""
                       : " (and the thread could not be stopped" +
                             (refused.empty() ? std::string() : ": " + refused) + ")") +
          ": not shown");
  return true;
}

/// The arguments and locals of each frame of a Python thread's stack (as `pt.frames`).
std::vector<std::vector<LocalVariable>> locals_of(sampling::PythonReader& py,
                                                  const sampling::PyThreadStack& pt) {
  std::vector<std::vector<LocalVariable>> out(pt.frames.size());
  std::vector<sampling::PyLocal> vars;
  for (std::size_t i = 0; i < pt.frames.size() && i < pt.frame_addresses.size(); ++i) {
    if (!pt.frame_addresses[i] || !py.locals(pt.frame_addresses[i], vars)) continue;
    for (auto& v : vars)
      out[i].push_back({core::valid_utf8(v.name), core::valid_utf8(v.repr), v.argument, v.address});
  }
  return out;
}

/// The main thread first (the one whose id is the process's), then by thread id.
void order_threads(StackDump& dump) {
  std::sort(dump.threads.begin(), dump.threads.end(),
            [&](const ThreadStack& a, const ThreadStack& b) {
              bool am = a.tid == dump.pid, bm = b.tid == dump.pid;
              return am != bm ? am : a.tid < b.tid;
            });
}

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

/// Python thread names over the kernel's, and the asyncio tasks: read with the process as it is
/// (stopped for --native, running otherwise: a read that does not hold together is left out).
void python_extras(sampling::PythonReader& py, const std::vector<sampling::PyThreadStack>& threads,
                   const DumpOptions& options, StackDump& dump) {
  auto names = py.thread_names();
  for (auto& t : dump.threads)
    for (const auto& pt : threads)
      if (pt.tid == t.tid)
        if (auto n = names.find(pt.thread_id); n != names.end()) t.name = n->second;
  if (!options.async_aware) return;
  std::vector<sampling::PyTask> tasks;
  std::string why;
  if (!py.tasks(threads, tasks, why)) {
    dump.unavailable.push_back(why);
    return;
  }
  for (const auto& pt : tasks) {
    AsyncTask t;
    t.name = pt.name;
    t.tid = pt.tid;
    for (const auto& f : pt.frames)
      t.frames.push_back(py.frame(f));
    t.waiting_for = pt.waiting_for;
    t.awaited_by = pt.awaited_by;
    dump.tasks.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < tasks.size(); ++i)
    for (auto waiter : tasks[i].awaited_by)
      if (dump.tasks[waiter].waiting_for.empty())
        dump.tasks[waiter].waiting_for = "task " + dump.tasks[i].name;
}

}  // namespace

// The dump's JSON by hand (the field-list helpers are the model layer's, below the samplers').
void to_json(nlohmann::json& j, const LocalVariable& v) {
  j = {{"name", v.name}, {"repr", v.repr}, {"argument", v.argument}, {"address", v.address}};
}
void from_json(const nlohmann::json& j, LocalVariable& v) {
  if (!j.is_object()) throw Error("LocalVariable: expected an object");
  v.name = j.value("name", std::string());
  v.repr = j.value("repr", std::string());
  v.argument = j.value("argument", false);
  v.address = j.value("address", std::uint64_t{0});
}

void to_json(nlohmann::json& j, const ThreadStack& t) {
  j = {{"tid", t.tid},
       {"name", t.name},
       {"state", t.state},
       {"python", t.python},
       {"holds_gil", t.holds_gil},
       {"frames", t.frames},
       {"addresses", t.addresses},
       {"locals", t.locals}};
}
void from_json(const nlohmann::json& j, ThreadStack& t) {
  if (!j.is_object()) throw Error("ThreadStack: expected an object");
  t.tid = j.value("tid", std::int64_t{0});
  t.name = j.value("name", std::string());
  t.state = j.value("state", std::string());
  t.python = j.value("python", false);
  t.holds_gil = j.value("holds_gil", false);
  t.frames = j.value("frames", std::vector<StackFrame>{});
  t.addresses = j.value("addresses", std::vector<std::uint64_t>{});
  if (!t.addresses.empty() && t.addresses.size() != t.frames.size())
    throw Error("ThreadStack: " + std::to_string(t.addresses.size()) + " addresses for " +
                std::to_string(t.frames.size()) + " frames");
  t.locals = j.value("locals", std::vector<std::vector<LocalVariable>>{});
  if (!t.locals.empty() && t.locals.size() != t.frames.size())
    throw Error("ThreadStack: locals of " + std::to_string(t.locals.size()) + " frames for " +
                std::to_string(t.frames.size()) + " frames");
}
void to_json(nlohmann::json& j, const AsyncTask& t) {
  j = {{"name", t.name},
       {"tid", t.tid},
       {"waiting_for", t.waiting_for},
       {"awaited_by", t.awaited_by},
       {"frames", t.frames}};
}
void from_json(const nlohmann::json& j, AsyncTask& t) {
  if (!j.is_object()) throw Error("AsyncTask: expected an object");
  t.name = j.value("name", std::string());
  t.tid = j.value("tid", std::int64_t{0});
  t.waiting_for = j.value("waiting_for", std::string());
  t.awaited_by = j.value("awaited_by", std::vector<std::uint32_t>{});
  t.frames = j.value("frames", std::vector<StackFrame>{});
}

void to_json(nlohmann::json& j, const StackDump& d) {
  j = {{"pid", d.pid},
       {"python", d.python.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.python)},
       {"threads", d.threads},
       {"tasks", d.tasks},
       {"unavailable", d.unavailable}};
}
void from_json(const nlohmann::json& j, StackDump& d) {
  if (!j.is_object()) throw Error("StackDump: expected an object");
  d.pid = j.value("pid", std::int64_t{0});
  d.python = j.contains("python") && j["python"].is_string() ? j["python"].get<std::string>() : "";
  d.threads = j.value("threads", std::vector<ThreadStack>{});
  d.tasks = j.value("tasks", std::vector<AsyncTask>{});
  d.unavailable = j.value("unavailable", std::vector<std::string>{});
}

std::string StackDump::text() const {
  if (!python.empty()) {
    // As py-spy dump writes it: a block per thread, `function (file:line)` innermost first.
    std::string out = fmt::format("Process {}: {}\n", pid, python);
    for (const auto& t : threads) {
      std::string status = t.state.empty() ? "unknown" : t.state;
      if (t.holds_gil) status += ", holds the GIL";
      out += fmt::format("\nThread {} ({}){}{}\n", t.tid, status,
                         t.name.empty() ? "" : ": \"" + t.name + "\"",
                         t.python ? "" : " (no Python frames)");
      for (std::size_t i = 0; i < t.frames.size(); ++i) {
        const auto& f = t.frames[i];
        if (f.module == "[python]" && f.file.empty())  // "[N outer Python frames not read]"
          out += fmt::format("    {}\n", f.function);
        else if (f.module == "[python]")
          out += fmt::format("    {} ({}:{})\n", f.function, f.file, f.line);
        else
          out += fmt::format("    {} [{}]{}\n", f.function, f.module,
                             f.file.empty() ? "" : fmt::format(" ({}:{})", f.file, f.line));
        // As py-spy dump --locals: the arguments, then the locals, a line each.
        if (i < t.locals.size())
          for (bool arguments : {true, false}) {
            bool said = false;
            for (const auto& v : t.locals[i]) {
              if (v.argument != arguments) continue;
              if (!said) out += arguments ? "        Arguments:\n" : "        Locals:\n";
              said = true;
              out += fmt::format("            {}: {}\n", v.name, v.repr);
            }
          }
      }
    }
    for (const auto& t : tasks) {
      std::string state = t.tid                   ? fmt::format("running on thread {}", t.tid)
                          : t.waiting_for.empty() ? std::string("ready")
                                                  : "waiting for " + t.waiting_for;
      out += fmt::format("\nTask \"{}\" ({})\n", t.name, state);
      if (!t.awaited_by.empty()) {
        std::string by;
        for (auto i : t.awaited_by)
          by += (by.empty() ? "\"" : ", \"") + tasks[i].name + "\"";
        out += "  awaited by " + by + "\n";
      }
      for (const auto& f : t.frames)
        out += fmt::format("    {} ({}:{})\n", f.function, f.file, f.line);
    }
    for (const auto& u : unavailable)
      out += "\nnot read: " + u + "\n";
    return out;
  }
  std::string out = fmt::format("PID {}\n", pid);
  for (const auto& t : threads) {
    out += fmt::format("TID {}{}:\n", t.tid, t.name.empty() ? "" : " (" + t.name + ")");
    for (std::size_t i = 0; i < t.frames.size(); ++i) {
      const auto& f = t.frames[i];
      // As eu-stack: the address, then the function (an address no symbol covers only once).
      auto address = i < t.addresses.size() ? t.addresses[i] : 0;
      out += fmt::format("#{:<2} ", i);
      if (address) out += fmt::format("0x{:016x} ", address);
      if (!address || f.function.rfind("0x", 0) != 0) out += f.function;
      if (f.inlined) out += " (inlined)";
      if (!f.module.empty()) out += " - " + f.module;
      if (!f.file.empty()) out += fmt::format("\n    {}:{}", f.file, f.line);
      out += "\n";
    }
  }
  for (const auto& u : unavailable)
    out += "not read: " + u + "\n";
  return out;
}

std::vector<StackDump> Sampler::dump_tree(std::int64_t pid, const DumpOptions& options) {
  // The tree as it is now: the process first (its errors are the call's), then each descendant
  // (one that ended meanwhile is said, not an error).
  auto tree = symbols::process_tree(static_cast<std::int32_t>(pid));
  std::vector<StackDump> dumps{dump(pid, options)};
  for (std::size_t i = 1; i < tree.size(); ++i) {
    try {
      dumps.push_back(dump(tree[i], options));
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      dumps.front().unavailable.push_back("process " + std::to_string(tree[i]) + ": " + e.what());
    }
  }
  return dumps;
}

StackDump Sampler::dump(std::int64_t pid, const DumpOptions& options) {
  if (pid <= 0) throw Error("no process " + std::to_string(pid));
  // Ctrl-C, SIGTERM and SIGHUP end a dump within a frame's walk, the target let go first.
  core::InterruptHandlers signals({SIGINT, SIGTERM, SIGHUP});
  std::string maps = symbols::read_proc_file("/proc/" + std::to_string(pid) + "/maps");
  if (maps.empty())
    throw Error("process " + std::to_string(pid) + " does not exist, or its maps cannot be read");

  StackDump dump;
  dump.pid = pid;
  std::unique_ptr<sampling::PythonReader> py;
  if (options.python) {
    std::string why;
    py = sampling::PythonReader::open(static_cast<std::int32_t>(pid), &why);
    if (!why.empty()) {
      if (why.find("cannot read the memory") != std::string::npos) throw Error(why);
      dump.unavailable.push_back(why);
    }
  }
  if (options.async_aware && !py && dump.unavailable.empty())
    dump.unavailable.push_back("async: process " + std::to_string(pid) +
                               " is not CPython: it has no asyncio tasks to read");
  std::vector<sampling::PyThreadStack> python_threads;
  if (py) {
    dump.python = "CPython " + py->version() + " (" + py->interpreter_module() + ")";
    // Read from outside without stopping the process: read again until a read validates.
    if (!options.native &&
        !read_python(*py, python_threads, 100, true, options.nonblocking, &dump.unavailable)) {
      if (interrupted()) throw_interrupted(pid);
      throw Error("the Python threads of process " + std::to_string(pid) +
                  " changed under every one of 100 reads; --native reads each thread while "
                  "it is stopped");
    }
    if (!options.native && python_threads.empty())
      dump.unavailable.push_back(
          "python: the interpreter has no thread yet (it is starting or ending): native stacks");
    if (!options.native && !python_threads.empty()) {
      for (const auto& pt : python_threads) {
        if (pt.tid <= 0)
          dump.unavailable.push_back(
              "python: a thread could not be matched to a thread of the kernel (its id is of "
              "the process's own PID namespace, and no thread's NSpid gives it)");
        ThreadStack t;
        t.tid = pt.tid;
        t.name = thread_name(pid, pt.tid);
        t.state = thread_activity(pid, pt.tid);
        t.python = true;
        t.holds_gil = pt.holds_gil;
        for (const auto& f : pt.frames)
          t.frames.push_back(py->frame(f));
        if (options.locals) t.locals = locals_of(*py, pt);
        dump.threads.push_back(std::move(t));
      }
      python_extras(*py, python_threads, options, dump);
      order_threads(dump);
      if (!options.all_threads && dump.threads.size() > 1) dump.threads.resize(1);
      return dump;
    }
  }
  // Thread states before ptrace stops them.
  std::map<std::int64_t, std::string> states;
  for (auto tid : symbols::thread_ids(static_cast<std::int32_t>(pid)))
    states[tid] = thread_activity(pid, tid);
  // Where each Python thread's state lives, found once: each thread's stack is then read from
  // its own state while that thread is stopped (reading every thread's stack for each stopped
  // thread made a dump quadratic: 65 s for 2000 threads).
  std::map<std::int64_t, std::uint64_t> python_states;
  if (py && read_python(*py, python_threads, 20, /*with_frames=*/false))
    for (const auto& t : python_threads)
      if (t.tid > 0) python_states[t.tid] = t.thread_state;

  // A signal is caught, not acted on, while threads are stopped under ptrace: the walk stops at
  // the next frame, libdwfl lets every thread go (dwfl_end), then the dump says it was
  // interrupted. SIGQUIT, which would dump core with threads stopped, is held off.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGQUIT);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};

  const auto& dw = symbols::libdw();
  if (!dw) throw Error("cannot unwind process " + std::to_string(pid) + ": " + dw.error);
  std::unique_ptr<Dwfl, void (*)(Dwfl*)> dwfl(symbols::begin_dwfl(),
                                              dw.dwfl_end);  // dwfl_end detaches
  if (!dwfl) throw Error("libdwfl could not start");
  if (symbols::libdw().dwfl_linux_proc_report(dwfl.get(), static_cast<pid_t>(pid)) != 0 ||
      symbols::libdw().dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0)
    throw Error("cannot read the modules of process " + std::to_string(pid) + ": " +
                symbols::libdw().dwfl_errmsg(-1));
  if (int e = symbols::libdw().dwfl_linux_proc_attach(dwfl.get(), static_cast<pid_t>(pid), false);
      e != 0)
    throw Error(e > 0 ? explain_ptrace(e, pid)
                      : std::string("cannot attach: ") + symbols::libdw().dwfl_errmsg(-1));

  symbols::Symbolizer symbolizer;
  symbolizer.set_mappings(symbols::parse_maps(maps));
  symbols::CodeMap code(static_cast<std::int32_t>(pid), symbols::parse_maps(maps));
  struct Context {
    symbols::Symbolizer* symbolizer;
    symbols::CodeMap* code;
    StackDump* dump;
    std::int64_t pid;
    sampling::PythonReader* py;
    std::map<std::int64_t, std::string>* states;
    std::map<std::int64_t, std::uint64_t>* python_states;
    bool all_threads;
    bool locals;
  } context{&symbolizer,         &code,         &dump, pid, py.get(), &states, &python_states,
            options.all_threads, options.locals};

  auto on_thread = [](Dwfl_Thread* thread, void* arg) -> int {
    auto* c = static_cast<Context*>(arg);
    if (interrupted()) return DWARF_CB_ABORT;
    ThreadStack t;
    t.tid = symbols::libdw().dwfl_thread_tid(thread);
    if (!c->all_threads && t.tid != c->pid) return DWARF_CB_OK;
    t.name = thread_name(c->pid, t.tid);
    if (auto s = c->states->find(t.tid); s != c->states->end()) t.state = s->second;
    std::uint64_t python_state = 0;
    if (auto s = c->python_states->find(t.tid); s != c->python_states->end())
      python_state = s->second;
    struct FrameContext {
      symbols::Symbolizer* symbolizer;
      symbols::CodeMap* code;
      sampling::PythonReader* py;
      std::uint64_t python_state;
      ThreadStack* thread;
      std::vector<sampling::PyThreadStack> python;
      bool python_read = false;
      int depth = 0;
      bool locals = false;
      std::vector<std::vector<LocalVariable>> python_locals;
    } fc{c->symbolizer, c->code, c->py, python_state, &t, {}, false, 0, c->locals, {}};
    auto frame_cb = [](Dwfl_Frame* frame, void* arg2) -> int {
      auto* f = static_cast<FrameContext*>(arg2);
      if (interrupted()) return DWARF_CB_ABORT;
      if (f->depth == 0 && f->py && f->python_state) {
        // The thread is stopped now: its Python stack holds still.
        f->python.resize(1);
        f->python_read = f->py->read_thread(f->python_state, f->python[0]) && !f->python[0].torn;
        if (f->python_read && f->locals) f->python_locals = locals_of(*f->py, f->python[0]);
      }
      Dwarf_Addr pc = 0;
      bool activation = false;
      if (!symbols::libdw().dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
      // Where the walk leaves the process's code, it has lost the stack: it ends there, and
      // says so.
      if (f->code->stop_at(pc, !activation && f->depth > 0) != symbols::WalkStop::none) {
        f->thread->frames.push_back(
            {symbols::kWalkStoppedFrame, symbols::kWalkStoppedModule, "", 0, false});
        f->thread->addresses.push_back(pc);
        return DWARF_CB_ABORT;
      }
      // The instruction itself: a caller's return address less one, as eu-stack shows it.
      auto where = activation || pc == 0 ? pc : pc - 1;
      for (const auto& fr : f->symbolizer->symbolize(pc, !activation)) {
        f->thread->frames.push_back(fr);
        f->thread->addresses.push_back(where);
      }
      return ++f->depth >= 256 ? DWARF_CB_ABORT : DWARF_CB_OK;
    };
    symbols::libdw().dwfl_thread_getframes(thread, frame_cb,
                                           &fc);  // a partial stack is still worth showing
    if (fc.python_read)
      for (const auto& pt : fc.python)
        if (pt.tid == t.tid) {
          std::vector<StackFrame> frames;
          std::vector<bool> entries;
          for (const auto& f : pt.frames) {
            frames.push_back(c->py->frame(f));
            entries.push_back(f.entry);
          }
          t.python = true;
          t.holds_gil = pt.holds_gil;
          std::vector<std::size_t> origin;
          t.frames = sampling::splice_python(t.frames, frames, entries, c->py->interpreter_module(),
                                             &origin);
          std::vector<std::uint64_t> addresses;
          std::size_t next_python = 0;
          for (auto o : origin) {
            addresses.push_back(o == sampling::kPythonFrame ? 0 : t.addresses[o]);
            if (fc.locals)
              t.locals.push_back(o == sampling::kPythonFrame &&
                                         next_python < fc.python_locals.size()
                                     ? fc.python_locals[next_python++]
                                     : std::vector<LocalVariable>{});
          }
          t.addresses = std::move(addresses);
        }
    c->dump->threads.push_back(std::move(t));
    return DWARF_CB_OK;
  };
  int walked = symbols::libdw().dwfl_getthreads(dwfl.get(), on_thread, &context);
  if (interrupted()) {
    dwfl.reset();  // every thread let go before anything else
    throw_interrupted(pid);
  }
  if (walked != 0 && dump.threads.empty())
    throw Error("cannot unwind process " + std::to_string(pid) + ": " +
                symbols::libdw().dwfl_errmsg(-1));
  // The names and tasks, read with the process running again (a read that does not hold
  // together is left out).
  if (py && read_python(*py, python_threads, 20)) python_extras(*py, python_threads, options, dump);
  order_threads(dump);
  return dump;
}

}  // namespace mainboard
