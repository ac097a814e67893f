#pragma once

// Python frames of another process, read from outside with process_vm_readv, as py-spy and
// austin do: find CPython's `_PyRuntime`, walk interpreters → thread states → frames, and name
// each frame from its code object (qualified name, file, line from the line table). No
// cooperation from the target; one table of per-version layouts (python_layouts.inc).

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mainboard/profile.hpp"

namespace mainboard::sampling {

struct PythonLayout;

/// One Python frame, innermost first in a stack.
struct PyFrame {
  std::uint32_t code = 0;  ///< index into PythonReader::codes()
  std::uint32_t line = 0;  ///< the line running now (0: unknown)
  /// The outermost frame of one run of the evaluation loop (`_PyEval_EvalFrameDefault`): frames
  /// from the innermost up to this one belong to the innermost evaluation frame of the native
  /// stack, and so on.
  bool entry = false;
  bool operator==(const PyFrame&) const = default;
};

/// What a code object says about itself.
struct PyCode {
  std::string qualname, file;
  std::uint32_t first_line = 0;
};

/// One thread's Python stack.
struct PyThreadStack {
  std::int32_t tid = 0;            ///< the kernel's thread id (0: not known)
  std::uint64_t thread_state = 0;  ///< the PyThreadState address
  std::uint64_t thread_id = 0;     ///< threading.get_ident(): the pthread_t
  bool holds_gil = false;
  std::vector<PyFrame> frames;
  std::vector<std::uint64_t> frame_addresses;  ///< where each of `frames` lives
  /// Frames beyond the deepest kept (a stack deeper than the reader keeps): the last of `frames`
  /// then says "[N outer Python frames not read]".
  std::uint64_t frames_cut = 0;
  /// The stack changed while it was read (a frame returned, or was called anew, under the
  /// walk): `frames` is empty, and the thread is to be read again (PythonReader::read_thread).
  bool torn = false;
};

/// One local variable of a Python frame, as read from the process's memory.
struct PyLocal {
  std::string name;
  std::string repr;  ///< a short repr of its value (python_objects.cpp), never by running code
  bool argument = false;
  std::uint64_t address = 0;  ///< the object's
};

/// One asyncio task (3.11 on): its coroutine chain, innermost first.
struct PyTask {
  std::uint64_t address = 0;
  std::string name;
  /// The thread running it now (0: suspended). Its frames are then that thread's, from the
  /// innermost up to the task's coroutine.
  std::int32_t tid = 0;
  std::vector<PyFrame> frames;
  std::uint64_t waiter = 0;               ///< the future or task it waits for (0: none)
  std::vector<std::uint32_t> awaited_by;  ///< tasks (indices) that wait for this one
  /// What it waits for when that is not another task: "a future", "gather", "".
  std::string waiting_for;
};

class PythonReader {
 public:
  /// The Python interpreter inside process `pid`, or nullptr with `why` set: not a Python
  /// process (why empty), a version whose layout this build does not know, memory that cannot
  /// be read (permissions).
  static std::unique_ptr<PythonReader> open(std::int32_t pid, std::string* why);
  ~PythonReader();

  /// Every thread's Python stack now. False when the list of threads could not be read (a thread
  /// started or ended under the read); a thread whose own stack changed under the read is kept
  /// with PyThreadStack::torn set and no frames.
  bool read(std::vector<PyThreadStack>& threads, bool with_frames = true);
  /// One thread's stack, from its PyThreadState (PyThreadStack::thread_state of an earlier
  /// read): to read a torn stack again, or what a reader that stops one thread at a time reads
  /// while that thread holds still. False when the thread state cannot be read (it ended).
  bool read_thread(std::uint64_t thread_state, PyThreadStack& thread);

  /// Whether each frame is read twice and checked (the default): without, a stack that changed
  /// under the read is kept as read, torn or not. For measuring what the checks cost.
  void set_checked(bool checked) { checked_ = checked; }

  std::int32_t pid() const { return pid_; }
  /// "3.11" and, where the process says (3.11 on), the micro version: "3.11.2".
  const std::string& version() const { return version_; }
  /// The module (file name) holding the interpreter: its native frames are the interpreter's.
  const std::string& interpreter_module() const { return module_; }
  const std::vector<PyCode>& codes() const { return codes_; }
  /// A Python frame as a profile frame: "qualname", module "[python]", file and line.
  StackFrame frame(const PyFrame& f) const;

  /// The arguments and local variables of the frame at `frame` (PyThreadStack::frame_addresses),
  /// arguments first, each with a short repr of its value: None, bools, ints of any size, floats,
  /// str and bytes (cut, with their length), and tuples, lists and dicts of those (to a bounded
  /// depth and length); anything else as "TYPE at 0x…". Variables not bound yet are left out.
  /// False when the frame or its code cannot be read.
  bool locals(std::uint64_t frame, std::vector<PyLocal>& out);
  /// The short repr of the object at `object` (as locals() gives them).
  std::string repr(std::uint64_t object, int depth = 0);

  /// The names of the threads `threading` knows (threading._active), by thread id (pthread_t,
  /// PyThreadStack::thread_id). Empty when `threading` is not imported or cannot be read.
  std::map<std::uint64_t, std::string> thread_names();
  /// Every asyncio task of the process (asyncio.tasks' sets of tasks), each with its chain of
  /// awaited coroutines and the tasks waiting for it; `threads` (from read()) gives the frames
  /// of the tasks running now. False with `why` set when this version's tasks cannot be read.
  bool tasks(const std::vector<PyThreadStack>& threads, std::vector<PyTask>& out, std::string& why);

 private:
  PythonReader() = default;
  bool read_memory(std::uint64_t address, void* into, std::size_t size) const;
  template <typename T>
  bool read_value(std::uint64_t address, T& value) const {
    return read_memory(address, &value, sizeof value);
  }
  bool read_string(std::uint64_t address, std::string& out) const;
  bool read_bytes_object(std::uint64_t address, std::string& out) const;
  /// The code object at `address` whose first bytes are `header`, named once and kept by
  /// address (validated on each use by its type, name and file pointers); false when it is not
  /// a code object.
  bool code_at(std::uint64_t address, const unsigned char* header, std::uint32_t& index,
               const std::string*& linetable);
  std::uint32_t line_of(std::uint32_t code, const std::string& linetable,
                        std::int64_t instruction) const;
  std::int32_t tid_of_pthread(std::uint64_t pthread) const;
  /// The id this process's /proc gives the thread that the target's own PID namespace calls
  /// `tid`: the same number unless the target runs in a PID namespace of its own (a container,
  /// `unshare --pid`), where NSpid maps one to the other; 0 when no thread of it has that id.
  std::int32_t host_tid(std::int32_t tid);
  bool other_pid_namespace_ = false;
  std::unordered_map<std::int32_t, std::int32_t> host_tids_;  // the target's tid → /proc's
  bool host_tids_fresh_ = false;                              // read during this read()
  std::size_t state_size() const;
  /// The thread at `ts`, whose PyThreadState's first bytes are `tstate`: its ids and, when
  /// `with_frames`, its frames.
  bool read_state(std::uint64_t ts, const unsigned char* tstate, bool with_frames,
                  PyThreadStack& t);
  /// The code index of the frame that stands for `count` frames not read.
  std::uint32_t cut_code(std::uint64_t count, bool more);
  /// Marks `t` torn (its frames cleared); true, as the read of the thread list still holds.
  static bool torn(PyThreadStack& t);
  static std::size_t page_size();
  /// Where a frame's fields end (head) and where its locals begin (locals, which may be before
  /// the head ends: 3.11 on keeps them right after the frame's fields).
  struct FrameShape {
    std::size_t head = 0, locals = 0;
  };
  FrameShape frame_shape() const;
  /// The bytes of a frame each read takes (frame_bytes_).
  std::size_t frame_size() const;
  /// The iovecs (one or two) that read frame `frame` into `into` (frame_bytes_ bytes).
  std::size_t frame_iov(std::uint64_t frame, unsigned char* into, struct iovec* local,
                        struct iovec* remote) const;
  /// Whether two reads of a frame (`a`, then `b`) saw the same call of it, the innermost frame
  /// (`innermost`, which runs on) in the same place of the stack.
  bool same_frame(const unsigned char* a, const unsigned char* b, bool innermost) const;

  // Objects (python_objects.cpp): 0 stands for "none" or "could not be read".
  struct TypeInfo {
    std::uint64_t flags = 0, base = 0, cached_keys = 0;
    std::int64_t basicsize = 0, dictoffset = 0;
    std::string name;  ///< tp_name: "_asyncio.Task", "coroutine", "int"
  };
  const TypeInfo* type_info(std::uint64_t type);
  std::uint64_t type_of(std::uint64_t object) const;
  bool is_instance(std::uint64_t object, const std::string& type_name);
  std::uint64_t u64_at(std::uint64_t address) const;
  /// Every entry slot of a dictionary keys object as (key, value), deleted ones included.
  bool keys_slots(std::uint64_t keys,
                  std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) const;
  /// The (key, value) pairs of a dictionary keys object, in insertion order; with `values`
  /// (a split table's value array) the values come from there.
  bool keys_entries(std::uint64_t keys, std::uint64_t values,
                    std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) const;
  /// The index of string key `name` among a keys object's entries, or -1.
  long keys_find(std::uint64_t keys, std::string_view name) const;
  bool dict_items(std::uint64_t dict, std::vector<std::pair<std::uint64_t, std::uint64_t>>& out);
  std::uint64_t dict_get(std::uint64_t dict, std::string_view key);
  std::uint64_t attribute(std::uint64_t object, std::string_view name);
  bool set_items(std::uint64_t set, std::vector<std::uint64_t>& out) const;
  bool list_items(std::uint64_t list, std::vector<std::uint64_t>& out) const;
  bool read_int(std::uint64_t object, std::uint64_t& value, bool& negative) const;
  /// An int of any size in decimal (cut past 100 digits, with its count); empty if unreadable.
  std::string int_text(std::uint64_t object) const;
  /// A tuple's items (or empty when `object` is not a readable tuple).
  bool tuple_items(std::uint64_t tuple, std::vector<std::uint64_t>& out) const;
  std::uint64_t module_dict(std::string_view name);
  bool frame_of(std::uint64_t frame, PyFrame& out);
  std::unordered_map<std::uint64_t, TypeInfo> types_;

  std::int32_t pid_ = 0;
  const PythonLayout* layout_ = nullptr;
  std::string version_, module_;
  std::uint64_t runtime_ = 0, code_type_ = 0;
  struct CodeEntry {
    std::uint64_t name = 0, file = 0;  // what the object pointed at when it was read
    std::uint32_t index = 0;
    std::string linetable;
  };
  std::unordered_map<std::uint64_t, CodeEntry> code_cache_;
  std::vector<PyCode> codes_;
  std::unordered_map<std::string, std::uint32_t> code_index_;  // "qualname\0file\0line"
  struct PendingFrame {
    std::uint64_t address = 0;
    std::uint64_t code = 0;
    std::int64_t instruction = -1;
    bool entry = false;
  };
  std::vector<PendingFrame> pending_;              // scratch of read(), kept to save allocations
  std::unordered_set<std::uint64_t> seen_states_;  // thread states met in one read
  bool checked_ = true;
  std::size_t frame_bytes_ = 0;             // a frame as read: its head and its first locals
  std::vector<unsigned char> frame_reads_;  // each frame of a walk, as first read
  std::vector<unsigned char> code_blocks_;
  std::vector<struct iovec> iov_local_, iov_remote_;
};

/// Whether a native frame is the interpreter's evaluation loop (each one runs Python frames).
bool is_python_eval(const StackFrame& f);

/// A mixed stack, innermost first: the native frames with each evaluation-loop frame replaced
/// by the Python frames it runs, and the interpreter's own glue (frames of `interpreter_module`)
/// and addresses of no module left out; native frames of other modules (C extensions, the C
/// library) stay where they are. When the native stack shows no evaluation frame (a chain cut
/// short), the Python frames go under its innermost frames that are neither; when it reaches
/// its thread's start (`__libc_start_main`, `start_thread`) through no frame of the interpreter,
/// the thread runs no Python and the Python frames (read beside the sample) are not used. `origin`,
/// when given, gets for each frame of the result its index in `native` (kPythonFrame for a Python
/// frame).
inline constexpr std::size_t kPythonFrame = static_cast<std::size_t>(-1);
std::vector<StackFrame> splice_python(const std::vector<StackFrame>& native,
                                      const std::vector<StackFrame>& python,
                                      const std::vector<bool>& entries,
                                      const std::string& interpreter_module,
                                      std::vector<std::size_t>* origin = nullptr);

/// How the stacks of threads read: in all, those that changed under the first read (torn), those
/// then read with their thread stopped, and those left out (torn every time, not stopped).
struct StackReadCounts {
  std::uint64_t stack_reads = 0, stacks_torn = 0, stacks_stopped = 0, stacks_dropped = 0;
  std::int64_t stopped_ns = 0;  ///< how long threads were held stopped for those reads, in all
};

/// How StackReads insists: reads of the list of threads, reads again of a torn stack, whether a
/// stack torn each time is read once more with its thread stopped (ptrace), and for how many
/// reads after that the thread is read stopped at once.
struct SettlePolicy {
  int list_tries = 3, stack_tries = 2;
  bool stop_torn = true;
  /// A stack that changes faster than it can be read keeps doing so (a tight loop of calls);
  /// and no check made from outside can tell every such change (a loop that makes the very same
  /// frames at the very same addresses again and again looks the same at every read): its
  /// thread is read stopped for this many reads, then tried without stopping again.
  int stopped_reads = 100;
};

/// Every thread's stack of a process, read as the sampler reads them: the list of threads until
/// it holds, each thread's stack without stopping it, a torn one again, then (SettlePolicy) with
/// its thread stopped; what happened counted.
class StackReads {
 public:
  explicit StackReads(const SettlePolicy& policy) : policy_(policy) {}
  /// False when the list of threads never held together; a stack left torn has
  /// PyThreadStack::torn set.
  bool read(PythonReader& reader, std::vector<PyThreadStack>& threads);
  const StackReadCounts& counts() const { return counts_; }
  /// Why a thread could not be stopped, once one could not (stopping is then given up).
  const std::string& refused() const { return refused_; }

 private:
  /// Reads `t` with its thread stopped; false when it could not be stopped.
  bool read_stopped(PythonReader& reader, PyThreadStack& t);
  SettlePolicy policy_;
  StackReadCounts counts_;
  std::string refused_;
  std::map<std::pair<std::int32_t, std::uint64_t>, int> hot_;  // (pid, thread state) → reads
};

/// What a PythonPoller read: every thread's Python stacks over time.
struct PythonSamples {
  struct Stack {
    std::vector<StackFrame> frames;  ///< innermost first
    std::vector<bool> entries;       ///< PyFrame::entry of each
  };
  std::vector<Stack> stacks;  ///< interned
  /// Per thread id: (time on CLOCK_MONOTONIC, index into stacks), by time.
  std::map<std::int32_t, std::vector<std::pair<std::int64_t, std::uint32_t>>> threads;
  std::map<std::int32_t, std::int32_t> thread_process;     ///< tid → pid
  std::map<std::int32_t, std::string> interpreter_module;  ///< per process
  std::map<std::int32_t, std::string> thread_names;        ///< tid → threading's name
  /// Wall-clock sampling: the reads are the samples of Python threads (see to_profile).
  bool wall = false;
  /// Of each read, only the thread holding the GIL (py-spy's --gil); other threads' samples are
  /// not kept at all (see to_profile).
  bool gil = false;
  std::uint64_t reads = 0;    ///< reads of a process's stacks
  std::uint64_t dropped = 0;  ///< reads whose list of threads did not hold together: not used
  std::int64_t read_ns = 0;   ///< time spent reading, in all
  StackReadCounts counts;     ///< how the threads' stacks read
  std::vector<std::string> notes;
  /// The Python stack of thread `tid` nearest to `t_ns`, within `window_ns`; nullptr if none.
  const Stack* at(std::int32_t tid, std::int64_t t_ns, std::int64_t window_ns) const;
};

/// How a PythonPoller reads.
struct PythonPollerOptions {
  std::uint32_t hz = 99;
  bool wall = false;  ///< the reads are the samples of Python threads (see to_profile)
  /// Stop every thread of the process for each read (ptrace: seize, interrupt, read, detach, as
  /// py-spy does by default): reads cannot tear, at the cost of stopping the program. The reads
  /// then happen on the thread that calls poll() (the one that waits for the target, which a
  /// tracer in the same process must be), not on a thread of the poller's own.
  bool pause = false;
  /// Without `pause`: a thread whose stack changed under three reads in a row is read once more
  /// with that thread alone stopped (ptrace), so that a stack that changes faster than it can be
  /// read (a tight recursion) is still sampled; false leaves such stacks out (counted). The
  /// target's own waits must not reap ptrace stops meanwhile (waitid with WNOWAIT).
  bool stop_torn = true;
  /// Keep of each read only the thread that holds the GIL (implies the reads are the samples).
  bool gil = false;
};

/// Reads the Python stacks of a set of processes `hz` times a second, on a thread of its own
/// without stopping them (a read that does not validate is tried again twice, then dropped and
/// counted), or, with `pause`, from poll() with the process stopped. Processes that are not
/// Python yet (a shell that will exec python, a child still starting) are looked at again until
/// they are, or are gone.
class PythonPoller {
 public:
  explicit PythonPoller(const PythonPollerOptions& options);
  ~PythonPoller();
  PythonPoller(const PythonPoller&) = delete;
  PythonPoller& operator=(const PythonPoller&) = delete;
  /// Adds processes to read (ones already watched are ignored).
  void watch(const std::vector<std::int32_t>& pids);
  /// With `pause`: reads if a read is due; returns when the next one is (CLOCK_MONOTONIC ns).
  std::int64_t poll();
  /// With `pause`: the wait status of `pid` when stopping it found it ended (and so reaped it).
  std::optional<int> reaped(std::int32_t pid);
  /// Stops reading and hands over what was read.
  PythonSamples finish();
  /// What was read since the last take() (or the start), reading going on: the threads' reads
  /// handed over, the interned stacks and the names copied.
  PythonSamples take();

 private:
  void loop();
  void read_all();
  PythonPollerOptions options_;
  std::int64_t period_ns_;
  std::int64_t next_due_ = 0;
  std::mutex mutex_;
  std::vector<std::int32_t> pending_;  // watched, not known to be Python yet
  std::map<std::int32_t, std::int64_t> next_look_;
  std::map<std::int32_t, std::int64_t> look_every_;  // ns between looks: 10 ms, doubling to 250
  std::map<std::int32_t, std::unique_ptr<PythonReader>> readers_;
  std::map<std::int32_t, std::uint64_t> failures_;  // reads in a row that did not validate
  // When a process's thread names may be read again, and the wait after that (doubling).
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> next_names_;
  std::map<std::int32_t, int> reaped_;
  bool pause_refused_ = false;
  bool stop_refused_noted_ = false;
  std::set<std::int32_t> unmatched_noted_;  // processes a thread of which had no kernel id
  std::unique_ptr<StackReads> stack_reads_;
  bool uninterruptible_noted_ = false;
  std::map<std::string, std::uint32_t> stack_index_;
  PythonSamples out_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// Every thread of a process stopped with ptrace while this lives (PTRACE_SEIZE and
/// PTRACE_INTERRUPT), then let go (PTRACE_DETACH, handing back a signal that arrived meanwhile).
class ProcessPause {
 public:
  /// Stops every thread of `pid`, or only thread `only_tid` when it is not 0.
  explicit ProcessPause(std::int32_t pid, std::int32_t only_tid = 0);
  ~ProcessPause();
  ProcessPause(const ProcessPause&) = delete;
  ProcessPause& operator=(const ProcessPause&) = delete;
  /// Whether the threads could be stopped (ptrace allowed, the process still there).
  bool stopped() const { return !threads_.empty(); }
  /// errno of the first refusal, when none could be stopped.
  int error() const { return error_; }
  /// The process's own wait status when its main thread was found ended (it is reaped now).
  std::optional<int> ended() const { return ended_; }
  /// Not stopped because a thread was in uninterruptible sleep (it would stop only when that
  /// ends).
  bool uninterruptible() const { return uninterruptible_; }

 private:
  std::int32_t pid_;
  bool uninterruptible_ = false;
  std::vector<std::pair<std::int32_t, int>> threads_;  // tid, signal to hand back
  std::optional<int> ended_;
  int error_ = 0;
};

}  // namespace mainboard::sampling
